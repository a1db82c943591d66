//! `POST /api/agent-keys`: self-service agent accounts. An agent without a human gets an
//! `agent-xxxxxxxx` account (trust 0) and its key in one request, within rolling caps.
//! Errors are the REST shape `{ error, code }`.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use horst_gateway::AccountError;
use serde_json::Value;

use super::mcp::{client_ip, is_json, read_body, BodyError};
use crate::{ApiError, AppState};

const MAX_BODY_BYTES: usize = 16 * 1024;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/agent-keys", any(create))
}

fn client(status: StatusCode, code: &'static str, message: impl Into<String>) -> Response {
    ApiError::client(status, code, message).into_response()
}

fn with_retry_after(mut r: Response, seconds: u64) -> Response {
    if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

async fn create(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let (method, headers) = (parts.method, parts.headers);
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if method != Method::POST {
        let mut r = client(
            StatusCode::METHOD_NOT_ALLOWED,
            "method",
            "only POST is supported",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    match horst_gateway::self_service(&state.store, &state.config).await {
        Ok(true) => {}
        Ok(false) => {
            return client(
                StatusCode::NOT_FOUND,
                "not_found",
                "self-service agent keys are switched off",
            )
        }
        Err(e) => return ApiError::internal(format!("self-service switch: {e}")).into_response(),
    }
    if headers.contains_key(header::ORIGIN) {
        return client(
            StatusCode::FORBIDDEN,
            "origin",
            "requests with an Origin header are refused: a web page cannot create agent keys",
        );
    }
    let ip = client_ip(&state, peer, &headers);
    if let Err(limited) = state.agents.burst.check_ip(ip) {
        let s = limited.retry_after_seconds();
        return with_retry_after(
            client(
                StatusCode::TOO_MANY_REQUESTS,
                "burst",
                format!("too many requests; retry after {s} s"),
            ),
            s,
        );
    }
    if !is_json(&headers) {
        return client(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content_type",
            "send Content-Type: application/json",
        );
    }
    let bytes = match read_body(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            return client(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                "the body is over 16 KiB",
            )
        }
        Err(BodyError::Broken) => {
            return client(
                StatusCode::BAD_REQUEST,
                "invalid_input",
                "the body could not be read",
            )
        }
    };
    let fields = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::Map::new()
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(o)) => o,
            _ => {
                return client(
                    StatusCode::BAD_REQUEST,
                    "invalid_input",
                    "the body must be a JSON object such as {\"displayName\":\"Fuchs\"}",
                )
            }
        }
    };
    let mut display = None;
    let mut label = None;
    for (k, v) in &fields {
        let slot = match k.as_str() {
            "displayName" => &mut display,
            "label" => &mut label,
            other => {
                return client(
                    StatusCode::BAD_REQUEST,
                    "invalid_input",
                    format!("unknown field `{other}`; allowed: displayName, label"),
                )
            }
        };
        match v {
            Value::String(s) => *slot = Some(s.as_str()),
            Value::Null => {}
            _ => {
                return client(
                    StatusCode::BAD_REQUEST,
                    "invalid_input",
                    format!("`{k}` must be a string"),
                )
            }
        }
    }
    match horst_gateway::accounts::create_agent(&state.store, ip, display, label).await {
        Ok(created) => (StatusCode::CREATED, Json(created)).into_response(),
        Err(AccountError::Invalid(m)) => client(StatusCode::BAD_REQUEST, "invalid_input", m),
        Err(AccountError::Cap {
            code,
            message,
            retry_after_seconds,
        }) => with_retry_after(
            client(StatusCode::TOO_MANY_REQUESTS, code, message),
            retry_after_seconds,
        ),
        Err(e) => ApiError::internal(format!("create agent: {e}")).into_response(),
    }
}
