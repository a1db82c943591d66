//! The one error of identity operations. Each variant is one answer: the API maps them to
//! its codes and statuses, the operator's console to the gateway's `ToolError`.

/// Which rolling 24-hour cap of self-service keys was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCap {
    /// 3 keys per network (`network_cap`).
    Network,
    /// 50 keys in total (`daily_cap`).
    Daily,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// The request is malformed or breaks a rule; the message says which.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    /// A name or token that is taken, a state that does not allow the change.
    #[error("{0}")]
    Conflict(String),
    /// A self-service cap, with the seconds until a slot frees up.
    #[error("{cap:?}: {message}")]
    Cap {
        cap: KeyCap,
        message: String,
        retry_after_seconds: u64,
    },
    /// Redis cannot be reached now (`horst_store::is_unreachable`): retry later.
    #[error("store unreachable: {0}")]
    Unavailable(String),
    /// Anything else: the details are for the log, never for the caller.
    #[error("{0}")]
    Internal(String),
}

impl IdentityError {
    pub fn invalid(message: impl Into<String>) -> Self {
        IdentityError::Invalid(message.into())
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        IdentityError::NotFound(message.into())
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        IdentityError::Conflict(message.into())
    }
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        IdentityError::Internal(detail.to_string())
    }
}

impl From<redis::RedisError> for IdentityError {
    fn from(e: redis::RedisError) -> Self {
        if horst_store::is_unreachable(&e) {
            IdentityError::Unavailable(format!("redis: {e}"))
        } else {
            IdentityError::Internal(format!("redis: {e}"))
        }
    }
}
