//! Protocol errors: an HTTP status, a stable machine code and a human message that says how
//! to fix the request.

use serde_json::{json, Value};

/// An error the contract defines. The HTTP layer answers `status` with `{ error, code }` (and,
/// for the 409s of `POST /action`, adds the caller's snapshot).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ProtocolError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ProtocolError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "bad_request", message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(409, code, message)
    }

    pub fn not_a_player() -> Self {
        Self::new(
            403,
            "not_a_player",
            "you are not a player in this session; join it first",
        )
    }

    pub fn not_the_host() -> Self {
        Self::new(
            403,
            "not_the_host",
            "only the session's host may call this endpoint",
        )
    }

    /// The `{ error, code }` body of section 7.
    pub fn body(&self) -> Value {
        json!({ "error": self.message, "code": self.code })
    }
}
