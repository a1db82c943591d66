//! The RCADIA long-polls' query parameters: `wait` (seconds) and the `after`/`since`
//! cursors, read leniently (empty means absent) into `{error, code}` answers.

use std::borrow::Cow;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::Uri;

use crate::{ApiCode, ApiError};

/// A request's query string, its parameters decoded when a handler asks for one by name.
///
/// What `Query<HashMap<String, String>>` read, without building the map: that decoded every
/// parameter into two `String`s and hashed each with SipHash on every long-poll and action
/// (about 8 k instructions an action in the sessions benchmark), where a handler asks for
/// one to three names of a query of one to three parameters. The same reading: the
/// `application/x-www-form-urlencoded` decoding `serde_urlencoded` does (`+` is a space,
/// malformed escapes kept as they are, invalid UTF-8 replaced), and of a name given twice
/// the last value (the map's insert kept the last). Never refused, as the map never was.
pub struct QueryParams(Uri);

impl QueryParams {
    /// The decoded value of the last parameter named `name`, if any.
    pub fn get(&self, name: &str) -> Option<Cow<'_, str>> {
        let query = self.0.query()?;
        // Each `&`-separated piece is one pair, as `form_urlencoded::parse` splits them; a
        // name without `%` or `+` is its own decoding, so only such names, and the value
        // asked for, are decoded (decoding every pair cost more than the rest together).
        // The last piece of the name: the map's insert kept the last value.
        let piece = query
            .split('&')
            .rev()
            .filter(|piece| !piece.is_empty())
            .find(|piece| {
                let raw = piece.split_once('=').map_or(*piece, |(k, _)| k);
                if raw.contains(['%', '+']) {
                    pair(piece).is_some_and(|(k, _)| k == name)
                } else {
                    raw == name
                }
            })?;
        pair(piece).map(|(_, v)| v)
    }
}

/// One piece of a query (no `&` in it) decoded as `form_urlencoded::parse` decodes it.
fn pair(piece: &str) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    form_urlencoded::parse(piece.as_bytes()).next()
}

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        // A clone of the URI shares its bytes (no copy of the query).
        Ok(QueryParams(parts.uri.clone()))
    }
}

/// `?wait=<0..25>` seconds (fractions allowed; larger values are capped at 25).
pub fn wait_param(q: &QueryParams) -> Result<Duration, ApiError> {
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
pub fn u64_param(q: &QueryParams, name: &str) -> Result<Option<u64>, ApiError> {
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

    use std::collections::HashMap;

    /// The parameters of `?<query>` as the handler's extractor reads them.
    fn params(query: &str) -> QueryParams {
        QueryParams(format!("/x?{query}").parse().unwrap())
    }

    fn q(pairs: &[(&str, &str)]) -> QueryParams {
        let mut out = form_urlencoded::Serializer::new(String::new());
        out.extend_pairs(pairs);
        params(&out.finish())
    }

    /// Every name of every query reads as `Query<HashMap<String, String>>` read it (what the
    /// handlers took before): escapes, `+`, malformed escapes, invalid UTF-8, names given
    /// twice (plainly and escaped), names without `=` or a value, values with `=`, empty
    /// queries, and names nobody sent.
    #[test]
    fn a_parameter_reads_as_the_query_map_read_it() {
        use axum::extract::Query;
        let queries = [
            "",
            "wait=5",
            "wait=5&after=3",
            "after=3&wait=5&after=4",
            "wait",
            "wait=",
            "=5",
            "&&wait=1&&",
            "wait=1%2E5",
            "since=+42+",
            "w%61it=2",
            "wait=%zz&since=%4",
            "wait=%FF%FE&after=%C3%A9",
            "a+b=c+d&a%20b=e",
            "since=1;after=2",
            "wait=1#frag",
            "%E2%82%AC=%E2%82%AC&wait=%E2%82",
            "wait=1&w%61it=2",
            "w%61it=2&wait=1&after",
            "wait+=3&wait=4&+wait=5",
            "after=1=2&since==3",
        ];
        let names = [
            "wait", "after", "since", "", "a b", "w%61it", "€", "missing", "a+b",
        ];
        for query in queries {
            let uri: Uri = format!("/x?{query}").parse().unwrap();
            let Query(map) = Query::<HashMap<String, String>>::try_from_uri(&uri).unwrap();
            let ours = QueryParams(uri);
            for name in names {
                assert_eq!(
                    ours.get(name).as_deref(),
                    map.get(name).map(String::as_str),
                    "{name:?} of {query:?}"
                );
            }
            for name in map.keys() {
                assert_eq!(
                    ours.get(name).as_deref(),
                    Some(map[name].as_str()),
                    "{query:?}"
                );
            }
        }
        // No query at all: nothing, as the empty map.
        assert_eq!(QueryParams("/x".parse().unwrap()).get("wait"), None);
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
