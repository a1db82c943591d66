//! Domain failures of a tool call: an `isError` result with the contract's codes.

use serde_json::{json, Map, Value};

/// A tool failure: `{"ok":false,"error":{"code","message",...details}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    /// Extra fields of `error` (`retryAfterSeconds`, `scope`, `outcome`, ...).
    pub details: Map<String, Value>,
}

impl ToolError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("invalid_input", message)
    }
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new("too_large", message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new("not_found", message)
    }
    /// Details stay in the log; the agent gets a stable code.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(detail = %detail, "gateway internal error");
        Self::new(
            "internal_error",
            "unexpected failure; details are in the server log",
        )
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
        ToolError::new(e.code(), e.message())
    }
}

impl From<redis::RedisError> for ToolError {
    fn from(e: redis::RedisError) -> Self {
        ToolError::internal(format!("redis: {e}"))
    }
}
