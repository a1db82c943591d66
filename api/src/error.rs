//! The one error type of the REST endpoints: `{ "error": message, "code": stable_code }`.
//!
//! Architecture invariant: an `Internal` error's details go to the log, never into the
//! response; the client gets a stable code and a hint.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug)]
pub enum ApiError {
    /// A client error with a stable code and a message that says how to fix it.
    Client {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// Redis down, a bug: logged in full, answered as 500 `internal_error`.
    Internal(String),
}

impl ApiError {
    pub fn client(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError::Client {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn internal(detail: impl std::fmt::Display) -> Self {
        ApiError::Internal(detail.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Client {
                status,
                code,
                message,
            } => (
                status,
                Json(serde_json::json!({ "error": message, "code": code })),
            )
                .into_response(),
            ApiError::Internal(detail) => {
                tracing::error!(detail = %detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(serde_json::json!({
                        "error": "internal error; details are in the server log",
                        "code": "internal_error"
                    })),
                )
                    .into_response()
            }
        }
    }
}
