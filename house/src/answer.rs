//! Reading an answer of horst's API as its Rust clients do (the house relay here, and
//! `horst play`, which builds on this crate): the body up to a bound and no further, and the
//! wait a `Retry-After` asks for in either of its forms.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, DATE, RETRY_AFTER};

/// Largest answer read: an answer of the protocol (a snapshot, a page of entries) is bounded
/// by the server far below this. The bridge page reads to the same bound.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// Why a body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Over [`MAX_ANSWER_BYTES`]: by its `Content-Length`, or found so while reading.
    #[error("the answer was larger than {} MiB, far more than any answer of the protocol", MAX_ANSWER_BYTES >> 20)]
    TooLarge,
    /// The connection failed mid-body.
    #[error("{0}")]
    Read(reqwest::Error),
}

/// The body, read in chunks up to [`MAX_ANSWER_BYTES`]: a server (or something posing as
/// one) that sends without end fills no memory; the rest is never read (the connection is
/// dropped with the response).
pub async fn read_bounded(resp: &mut reqwest::Response) -> Result<Vec<u8>, BodyError> {
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Read)? {
        if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(BodyError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The wait the answer's `Retry-After` asks for: delay-seconds, or an HTTP date (RFC 9110
/// allows it; proxies send it) in any of the three forms a recipient must read. A date
/// counts from the answer's own `Date` when it has a readable one (both are the server's
/// clock; ours may be off by minutes), else from `now`. `None` (the client's own backoff)
/// when absent, unreadable, or a date that is not in the future.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let v = text(RETRY_AFTER)?;
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // All digits: only an overflow fails, and such a wait is "very long".
        return Some(Duration::from_secs(v.parse().unwrap_or(u64::MAX)));
    }
    let at = horst_dates::parse_http_date_ms(v)?;
    let from = text(DATE)
        .and_then(horst_dates::parse_http_date_ms)
        .unwrap_or_else(|| unix_ms(now));
    Some(Duration::from_millis(at.checked_sub(from)?)).filter(|d| !d.is_zero())
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(retry_after: &str, date: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, retry_after.parse().unwrap());
        if let Some(d) = date {
            h.insert(DATE, d.parse().unwrap());
        }
        h
    }

    #[test]
    fn retry_after_reads_seconds_and_the_three_date_forms() {
        let date = Some("Sun, 06 Dec 2026 18:00:00 GMT");
        // An hour behind the server: not used while the answer has a Date.
        let now = SystemTime::UNIX_EPOCH
            + Duration::from_millis(
                horst_dates::parse_rfc3339_ms("2026-12-06T17:00:00.000Z").unwrap(),
            );
        let secs = |s| Some(Duration::from_secs(s));
        for (v, d, want) in [
            ("7", date, secs(7)),
            (" 0 ", date, secs(0)),
            ("Sun, 06 Dec 2026 18:00:30 GMT", date, secs(30)),
            ("Sunday, 06-Dec-26 18:00:05 GMT", date, secs(5)),
            ("Sun Dec  6 18:01:00 2026", date, secs(60)),
            // Without a readable Date, our clock.
            ("Sun, 06 Dec 2026 17:00:09 GMT", None, secs(9)),
            ("Sun, 06 Dec 2026 17:00:09 GMT", Some("yesterday"), secs(9)),
            // No header: the past, now, not a date, not delay-seconds.
            ("Sun, 06 Dec 2026 17:59:59 GMT", date, None),
            ("Sun, 06 Dec 2026 18:00:00 GMT", date, None),
            ("soon", date, None),
            ("-1", date, None),
            ("1.5", date, None),
            ("Sun, 32 Dec 2026 18:00:30 GMT", date, None),
            ("2026-12-06T18:00:30Z", date, None),
        ] {
            assert_eq!(retry_after(&headers(v, d), now), want, "{v:?} {d:?}");
        }
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }
}
