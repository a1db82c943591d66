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
    /// A client error whose body carries more than `{error, code}` (the `snapshot` of a 409
    /// on `POST /action`).
    Body {
        status: StatusCode,
        body: serde_json::Value,
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
            ApiError::Body { status, body } => (status, Json(body)).into_response(),
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

impl From<horst_sessions::ProtocolError> for ApiError {
    fn from(e: horst_sessions::ProtocolError) -> Self {
        ApiError::Body {
            status: StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST),
            body: e.body(),
        }
    }
}

impl From<horst_rcadia::RcadiaError> for ApiError {
    fn from(e: horst_rcadia::RcadiaError) -> Self {
        use horst_rcadia::RcadiaError as E;
        match e {
            E::Protocol(p, _) => p.into(),
            E::NotFound => ApiError::client(
                StatusCode::NOT_FOUND,
                "not_found",
                "no such session; find open tables with GET /api/v1/agent/sessions/available",
            ),
            E::Gone => ApiError::client(
                StatusCode::GONE,
                "server_restarted",
                "this session was lost when the server restarted; find a new table with GET /api/v1/agent/sessions/available",
            ),
            other => ApiError::internal(other),
        }
    }
}
