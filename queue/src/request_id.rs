//! The id of the HTTP request a job is admitted in (`X-Request-Id`), kept with the job so
//! one id follows it from the request through admission, claim, run and wake-up in the logs.
//!
//! The API sets it for the whole handling of a request ([`with_request_id`]); admission reads
//! it from there ([`current_request_id`]) rather than from every caller's arguments, since
//! it describes the request, not the job (the same job's input from another request is the
//! same input: it does not enter the idempotency fingerprint).

use std::future::Future;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The longest request id kept; a longer one from a client is replaced by a fresh one.
pub const REQUEST_ID_MAX: usize = 64;

/// Runs `work` as the handling of request `id`.
pub async fn with_request_id<F: Future>(id: String, work: F) -> F::Output {
    REQUEST_ID.scope(id, work).await
}

/// The request id of the request being handled here, if any.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(String::clone).ok()
}

/// Whether a client's `X-Request-Id` may be kept as it is: 1 to 64 letters, digits and
/// `-_.:` (what proxies and tracing systems send), so it is safe in logs and in the view.
pub fn valid_request_id(id: &str) -> bool {
    (1..=REQUEST_ID_MAX).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_id_is_seen_only_inside_its_request() {
        assert_eq!(current_request_id(), None);
        let seen = with_request_id("req-1".into(), async { current_request_id() }).await;
        assert_eq!(seen.as_deref(), Some("req-1"));
        assert_eq!(current_request_id(), None);
    }

    #[test]
    fn client_ids_are_checked() {
        assert!(valid_request_id("3f2a-77:b.c_d"));
        assert!(!valid_request_id(""));
        assert!(!valid_request_id("a b"));
        assert!(!valid_request_id("<script>"));
        assert!(!valid_request_id(&"x".repeat(65)));
        assert!(valid_request_id(&"x".repeat(64)));
    }
}
