//! `POST /api/agent-keys`: self-service agent accounts. An agent without a human gets an
//! `agent-xxxxxxxx` account (trust 0) and its key in one request, within rolling caps.
//! Errors are the REST shape `{ error, code }`.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use serde_json::Value;

use super::mcp::{client_ip, compressed, compressed_message, is_json, read_body, BodyError};
use crate::{ApiCode, ApiError, AppState};

const MAX_BODY_BYTES: usize = 16 * 1024;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/agent-keys", any(create))
}

fn client(code: ApiCode, message: impl Into<String>) -> Response {
    ApiError::new(code, message).into_response()
}

async fn create(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let (method, headers) = (parts.method, parts.headers);
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if method != Method::POST {
        let mut r = client(ApiCode::Method, "only POST is supported");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    match horst_gateway::self_service(&state.store, &state.config).await {
        Ok(true) => {}
        Ok(false) => {
            return client(
                ApiCode::NotFound,
                "self-service agent keys are switched off",
            )
        }
        Err(e) => return ApiError::from(e).into_response(),
    }
    if headers.contains_key(header::ORIGIN) {
        return client(
            ApiCode::Origin,
            "requests with an Origin header are refused: a web page cannot create agent keys",
        );
    }
    let ip = client_ip(&state, peer, &headers);
    let per_address = &state.agents.limits.per_address;
    let counted = state
        .agents
        .burst
        .check(per_address, &horst_identity::sign_in_limits::client_of(ip))
        .await;
    if let Err(e) = ApiError::limited(counted, |s| format!("too many requests; retry after {s} s"))
    {
        return e.into_response();
    }
    if let Some(coding) = compressed(&headers) {
        return ApiError::new(ApiCode::ContentType, compressed_message(&coding))
            .accept_identity()
            .into_response();
    }
    if !is_json(&headers) {
        return client(ApiCode::ContentType, "send Content-Type: application/json");
    }
    let bytes = match read_body(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => return client(ApiCode::TooLarge, "the body is over 16 KiB"),
        Err(BodyError::Broken) => {
            return client(
                ApiCode::InvalidInput,
                "the body could not be read: the connection broke or the body came too slowly; send the whole body at once",
            )
        }
    };
    // A leading byte order mark is read as nothing, as on /api/mcp.
    let bytes = horst_gateway::protocol::without_bom(&bytes);
    let fields = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::Map::new()
    } else {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(o)) => o,
            other => {
                let e = other.err();
                if let Some(said) = e
                    .as_ref()
                    .and_then(|e| horst_gateway::protocol::unreadable(bytes, e))
                {
                    return client(ApiCode::InvalidInput, said);
                }
                return client(
                    ApiCode::InvalidInput,
                    "the body must be a JSON object such as {\"displayName\":\"Fuchs\"}",
                );
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
                    ApiCode::InvalidInput,
                    format!(
                        "unknown field `{}`; allowed: displayName, label",
                        horst_gateway::text::clip(other, horst_gateway::args::ECHO_MAX_CHARS)
                    ),
                )
            }
        };
        match v {
            Value::String(s) => *slot = Some(s.as_str()),
            Value::Null => {}
            _ => return client(ApiCode::InvalidInput, format!("`{k}` must be a string")),
        }
    }
    match horst_identity::accounts::create_agent(&state.store, ip, display, label).await {
        Ok(created) => (StatusCode::CREATED, Json(created)).into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}
