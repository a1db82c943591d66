//! The RCADIA long-polls' query parameters: `wait` (seconds) and the `after`/`since`
//! cursors, read leniently (empty means absent) into `{error, code}` answers.

use std::collections::HashMap;
use std::time::Duration;

use crate::{ApiCode, ApiError};

/// `?wait=<0..25>` seconds (fractions allowed; larger values are capped at 25).
pub fn wait_param(q: &HashMap<String, String>) -> Result<Duration, ApiError> {
    match q.get("wait") {
        None => Ok(Duration::ZERO),
        // As the cursors: an empty value is no value (a form or a template that left it out).
        Some(v) if v.trim().is_empty() => Ok(Duration::ZERO),
        Some(v) => {
            let secs: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| {
                    ApiError::new(
                        ApiCode::BadRequest,
                        format!("wait must be a number of seconds from 0 to 25, not {v:?}"),
                    )
                })?;
            Ok(Duration::from_secs_f64(secs.min(25.0)))
        }
    }
}

/// An optional non-negative integer query parameter (`after`, `since`).
pub fn u64_param(q: &HashMap<String, String>, name: &str) -> Result<Option<u64>, ApiError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            ApiError::new(
                ApiCode::BadRequest,
                format!("{name} must be a non-negative integer, not {v:?}"),
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn empty_means_absent_for_every_parameter() {
        assert_eq!(wait_param(&q(&[("wait", "")])).unwrap(), Duration::ZERO);
        assert_eq!(wait_param(&q(&[("wait", " ")])).unwrap(), Duration::ZERO);
        assert_eq!(u64_param(&q(&[("after", "")]), "after").unwrap(), None);
        assert_eq!(
            wait_param(&q(&[("wait", "99")])).unwrap(),
            Duration::from_secs(25)
        );
        for bad in ["abc", "-1", "NaN", "inf"] {
            assert!(wait_param(&q(&[("wait", bad)])).is_err(), "{bad}");
        }
    }
}
