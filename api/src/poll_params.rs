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

/// An optional non-negative integer query parameter (`after`, `since`). A whole number
/// written as a float (`42.0`) is that integer: see [`whole_number`].
pub fn u64_param(q: &HashMap<String, String>, name: &str) -> Result<Option<u64>, ApiError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => {
            let v = v.trim();
            let whole = v
                .parse::<u64>()
                .ok()
                .or_else(|| v.parse::<f64>().ok().and_then(whole_f64));
            whole.map(Some).ok_or_else(|| {
                ApiError::new(
                    ApiCode::BadRequest,
                    format!("{name} must be a non-negative integer, not {v:?}"),
                )
            })
        }
    }
}

use horst_sessions::whole_f64;
/// The whole-number reading of the protocol (`7.0` is 7): one rule for the cursors, `turn`
/// and the config (`horst_sessions::whole_number`).
pub use horst_sessions::whole_number;

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

    #[test]
    fn whole_numbers_written_as_floats_are_those_integers() {
        use serde_json::json;
        assert_eq!(whole_number(&json!(7)), Some(7));
        assert_eq!(whole_number(&json!(7.0)), Some(7));
        assert_eq!(whole_number(&json!(0.0)), Some(0));
        for bad in [
            json!(7.5),
            json!(-1),
            json!(-1.0),
            json!(1e300),
            json!("7"),
            json!(null),
        ] {
            assert_eq!(whole_number(&bad), None, "{bad}");
        }
        assert_eq!(
            u64_param(&q(&[("since", "42.0")]), "since").unwrap(),
            Some(42)
        );
        assert_eq!(
            u64_param(&q(&[("since", " 42 ")]), "since").unwrap(),
            Some(42)
        );
        for bad in ["42.5", "-3", "1e300", "NaN", "inf", "0x10"] {
            assert!(u64_param(&q(&[("since", bad)]), "since").is_err(), "{bad}");
        }
    }
}
