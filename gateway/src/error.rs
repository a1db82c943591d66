//! Domain failures of a tool call: an `isError` result with the contract's codes.

use serde_json::{json, Map, Value};

/// The contract's domain failure codes ("Errors" in the gateway contract), plus the
/// operator-only `check_failed`. Adding one is a compile error wherever codes are mapped
/// to HTTP statuses, which is the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Arguments do not match the schema or the limits.
    InvalidInput,
    /// A map, replay or evaluator result exceeds a size limit.
    TooLarge,
    /// The map is invalid, the replay does not win or cannot be played, or the parent is wrong.
    ValidationFailed,
    /// Queue full or a job of the caller's is already waiting.
    Busy,
    /// A daily limit, the Labor cap or a storage budget is used up.
    Quota,
    /// The evaluation or its queue wait exceeded its deadline.
    Timeout,
    /// The job was cancelled or interrupted.
    Cancelled,
    /// Idempotency key reuse with different input, name taken, wrong state.
    Conflict,
    /// The evaluator runs another engine than the one that was checked.
    EngineMismatch,
    /// No evaluator available; nothing is published unchecked.
    EngineUnavailable,
    /// Revoked key, blocked account, reserved or foreign name, and the like.
    Forbidden,
    /// No such thing, or not readable by the caller.
    NotFound,
    /// Operator only: the newest check of a revision failed, so it cannot be promoted.
    CheckFailed,
    /// Unexpected failure; details stay on the server.
    InternalError,
}

impl ErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::ValidationFailed => "validation_failed",
            ErrorCode::Busy => "busy",
            ErrorCode::Quota => "quota",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Conflict => "conflict",
            ErrorCode::EngineMismatch => "engine_mismatch",
            ErrorCode::EngineUnavailable => "engine_unavailable",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::CheckFailed => "check_failed",
            ErrorCode::InternalError => "internal_error",
        }
    }

    /// The code a stored job failure carries (written by a worker, so not trusted): an
    /// unknown one is an internal error.
    pub fn from_stored(code: &str) -> ErrorCode {
        const ALL: [ErrorCode; 14] = [
            ErrorCode::InvalidInput,
            ErrorCode::TooLarge,
            ErrorCode::ValidationFailed,
            ErrorCode::Busy,
            ErrorCode::Quota,
            ErrorCode::Timeout,
            ErrorCode::Cancelled,
            ErrorCode::Conflict,
            ErrorCode::EngineMismatch,
            ErrorCode::EngineUnavailable,
            ErrorCode::Forbidden,
            ErrorCode::NotFound,
            ErrorCode::CheckFailed,
            ErrorCode::InternalError,
        ];
        ALL.into_iter()
            .find(|c| c.as_str() == code)
            .unwrap_or(ErrorCode::InternalError)
    }
}

/// A job's failure is answered with the contract's code of the same name: one match, so a
/// new failure code is a compile error here rather than an `internal_error` at run time.
impl From<horst_queue::FailureCode> for ErrorCode {
    fn from(code: horst_queue::FailureCode) -> ErrorCode {
        use horst_queue::FailureCode as F;
        match code {
            F::InvalidInput => ErrorCode::InvalidInput,
            F::TooLarge => ErrorCode::TooLarge,
            F::ValidationFailed => ErrorCode::ValidationFailed,
            F::Timeout => ErrorCode::Timeout,
            F::Cancelled => ErrorCode::Cancelled,
            F::InternalError => ErrorCode::InternalError,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl From<ErrorCode> for Value {
    fn from(code: ErrorCode) -> Value {
        Value::from(code.as_str())
    }
}

/// What an `engine_unavailable` answer for an unreachable store suggests as the wait (the
/// store's own reconnect backs off up to 2 s; a failover takes a few seconds).
pub const UNAVAILABLE_RETRY_SECONDS: u64 = 5;

/// What a tool says when Redis cannot be reached ([`ToolError::unavailable`]).
const STORE_UNREACHABLE: &str = "the job store is unreachable right now; retry after retryAfterSeconds with the same idempotencyKey (a job that was admitted is answered from its record)";

/// A tool failure: `{"ok":false,"error":{"code","message",...details}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    /// Extra fields of `error` (`retryAfterSeconds`, `scope`, `outcome`, ...).
    pub details: Map<String, Value>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::TooLarge, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    /// An invalid map (`validation_failed`): `message` says what did not happen and why, and
    /// `errors` lists what is wrong as `validate_map` does, each with its line, column,
    /// message and a hint how to fix it. Every tool that refuses a map says it this way.
    pub fn invalid_map(
        message: impl Into<String>,
        report: &horst_engine::ValidationReport,
    ) -> Self {
        Self::new(ErrorCode::ValidationFailed, message).with(
            "errors",
            serde_json::to_value(&report.errors).unwrap_or(Value::Null),
        )
    }
    /// Details stay in the log; the agent gets a stable code.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(detail = %detail, "gateway internal error");
        Self::new(
            ErrorCode::InternalError,
            "unexpected failure; details are in the server log",
        )
    }
    /// The store (Redis) cannot be reached now: `engine_unavailable` with
    /// `retryAfterSeconds`, never an internal error; the detail goes to the log.
    pub fn unavailable(detail: impl std::fmt::Display) -> Self {
        tracing::warn!(detail = %detail, "the store is unreachable");
        Self::new(ErrorCode::EngineUnavailable, STORE_UNREACHABLE)
            .with("retryAfterSeconds", UNAVAILABLE_RETRY_SECONDS)
    }

    /// Whether this is [`ToolError::unavailable`]: Redis could not be reached (not a missing
    /// evaluator). The REST routes say so in their own words.
    pub fn is_store_unreachable(&self) -> bool {
        self.code == ErrorCode::EngineUnavailable && self.message == STORE_UNREACHABLE
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }

    pub fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.clone().into());
        for (k, v) in &self.details {
            error.insert(k.clone(), v.clone());
        }
        json!({ "ok": false, "error": error })
    }
}

impl From<horst_engine::EngineError> for ToolError {
    fn from(e: horst_engine::EngineError) -> Self {
        let code = match e {
            horst_engine::EngineError::InvalidInput(_) => ErrorCode::InvalidInput,
            horst_engine::EngineError::TooLarge(_) => ErrorCode::TooLarge,
            horst_engine::EngineError::InvalidMap(_) => ErrorCode::ValidationFailed,
        };
        ToolError::new(code, e.message())
    }
}

impl From<redis::RedisError> for ToolError {
    fn from(e: redis::RedisError) -> Self {
        if horst_store::is_unreachable(&e) {
            ToolError::unavailable(format!("redis: {e}"))
        } else {
            ToolError::internal(format!("redis: {e}"))
        }
    }
}

impl From<horst_identity::IdentityError> for ToolError {
    fn from(e: horst_identity::IdentityError) -> Self {
        use horst_identity::IdentityError as E;
        match e {
            E::Invalid(m) => ToolError::invalid(m),
            E::NotFound(m) => ToolError::not_found(m),
            E::Conflict(m) => ToolError::new(ErrorCode::Conflict, m),
            E::Cap {
                message,
                retry_after_seconds,
                ..
            } => ToolError::new(ErrorCode::Quota, message)
                .with("retryAfterSeconds", retry_after_seconds),
            E::Unavailable(m) => ToolError::unavailable(m),
            E::Internal(m) => ToolError::internal(m),
        }
    }
}
