//! Request plumbing shared by the RCADIA routes: who is calling (bearer token or JWT), and
//! lenient parsing of JSON bodies and query numbers into `{error, code}` answers (axum's own
//! rejections are plain text).

use std::collections::HashMap;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use horst_rcadia::auth::Identity;
use serde_json::Value;

use crate::{ApiError, AppState};

/// Which scope an endpoint needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Play,
    Host,
}

/// The authenticated caller, with `scope` checked (users have both).
pub async fn caller(
    state: &AppState,
    headers: &HeaderMap,
    scope: Scope,
) -> Result<Identity, ApiError> {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::client(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "send Authorization: Bearer <agent token or session JWT>",
            )
        })?;
    let id = state
        .auth
        .identify(bearer)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| {
            ApiError::client(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "unknown or expired credential; create a token with `horst admin token create` or sign in again",
            )
        })?;
    let ok = match scope {
        Scope::Play => id.play,
        Scope::Host => id.host,
    };
    if !ok {
        let (need, what) = match scope {
            Scope::Play => ("play", "play sessions"),
            Scope::Host => ("host", "host sessions"),
        };
        return Err(ApiError::client(
            StatusCode::FORBIDDEN,
            "missing_scope",
            format!("this token may not {what}; use a token with the {need} scope (horst admin token create --scopes {need})"),
        ));
    }
    Ok(id)
}

/// Largest request body of the agent API (`/join`, `/action`, `/leave`): an action is what a
/// game listed as legal, a few hundred bytes at most in practice.
pub const MAX_AGENT_BODY_BYTES: usize = 16 * 1024;

/// Largest request body of the bridge API (`/sessions`, `/ops` and the v1 single-op
/// endpoints). Each state, observation and legal-actions list within is limited on its own
/// (`horst_sessions::ops::MAX_STATE_BYTES` and the others).
pub const MAX_HOST_BODY_BYTES: usize = 1024 * 1024;

/// Reads a JSON body of at most `limit` bytes (an empty body is `{}`); a larger one is
/// `413 { error, code: "too_large" }`, like every other RCADIA error.
pub async fn read_json(body: axum::body::Body, limit: usize) -> Result<Value, ApiError> {
    use crate::routes::mcp::{read_body, BodyError};
    match read_body(body, limit).await {
        Ok(bytes) => json_body(&bytes),
        Err(BodyError::TooLarge) => Err(ApiError::client(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!(
                "the request body is over {} KiB; send less (see the size limits in docs/agents-play.md and docs/hosts.md)",
                limit / 1024
            ),
        )),
        Err(BodyError::Broken) => Err(ApiError::client(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the request body could not be read",
        )),
    }
}

/// A JSON body; an empty body is `{}`.
pub fn json_body(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::client(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("the body is not valid JSON: {e}"),
        )
    })
}

/// `?wait=<0..25>` seconds (fractions allowed; larger values are capped at 25).
pub fn wait_param(q: &HashMap<String, String>) -> Result<Duration, ApiError> {
    match q.get("wait") {
        None => Ok(Duration::ZERO),
        Some(v) => {
            let secs: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| {
                    ApiError::client(
                        StatusCode::BAD_REQUEST,
                        "bad_request",
                        format!("wait must be a number of seconds from 0 to 25, not {v:?}"),
                    )
                })?;
            Ok(Duration::from_secs_f64(secs.min(25.0)))
        }
    }
}

/// An optional non-negative integer query parameter (`after`, `since`).
pub fn u64_param(q: &HashMap<String, String>, name: &str) -> Result<Option<u64>, ApiError> {
    match q.get(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            ApiError::client(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!("{name} must be a non-negative integer, not {v:?}"),
            )
        }),
    }
}
