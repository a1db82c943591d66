//! `POST /api/mcp`: the agent gateway's HTTP transport (a stateless subset of MCP Streamable
//! HTTP). This file only does HTTP: the method, the gateway switch, the origin, burst limits,
//! the content type, the body size and the key; the message itself goes to `horst_gateway`.
//!
//! The order of the checks is part of the contract: a wrong method is 405 before anything
//! else, and a switched-off gateway is 404 before it reveals anything about its rules.

use std::net::SocketAddr;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Extension;
use axum::Router;
use horst_config::GatewayMode;
use horst_gateway::protocol::{self, codes};
use horst_gateway::{AuthError, Message, Refusal, Reply};
use horst_limits::BurstError;
use http_body_util::BodyExt;
use hyper::body::Body as _;
use serde_json::Value;

use crate::extract::AgentCaller;
use crate::AppState;

/// Request body limit: 3 MiB of compact JSON.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;
/// A body over the limit whose length was not announced (chunked) is still read (and
/// dropped) up to this size, so the client gets its 413 instead of a reset connection while
/// it is still sending. One whose `Content-Length` is over the limit is refused unread.
const DRAIN_LIMIT_BYTES: usize = 64 * 1024 * 1024;

pub fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/api/mcp", any(mcp))
        // `transport` has read the body already, within MAX_BODY_BYTES; the handler's
        // `Bytes` takes it as it is (axum's default limit of 2 MB would cut it).
        .layer(DefaultBodyLimit::disable())
        .route_layer(middleware::from_fn_with_state(state, transport))
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    rpc_error_for(Value::Null, status, code, message)
}

/// A refusal of a message whose body was read: its error carries the request's `id`.
fn rpc_error_for(id: Value, status: StatusCode, code: i64, message: &str) -> Response {
    json_response(status, protocol::error(id, code, message, None))
}

/// The body the transport read, for refusals that come before the gateway parses it.
#[derive(Clone)]
pub(crate) struct ReadBody(pub Bytes);

/// The request id of the body the transport read (`null` before it was read).
pub(crate) fn request_id(parts: &axum::http::request::Parts) -> Value {
    parts
        .extensions
        .get::<ReadBody>()
        .map_or(Value::Null, |b| protocol::request_id(&b.0))
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

pub(crate) fn method_not_allowed() -> Response {
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        codes::REFUSED,
        "only POST is supported (one JSON-RPC message per request; no SSE stream, no sessions)",
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

/// 429 with `Retry-After` in whole seconds.
pub(crate) fn too_many(retry_after: u64, body: Response) -> Response {
    let mut r = body;
    *r.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// `application/json`, optionally with parameters (`; charset=utf-8`).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// The `Content-Encoding` of a request whose body is compressed (any coding but `identity`),
/// which these routes do not read: it is refused, not parsed as if it were the JSON itself
/// (a gzip body was a -32700 "not valid JSON" that did not say why).
pub(crate) fn compressed(headers: &HeaderMap) -> Option<String> {
    let codings: Vec<&str> = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .map(|v| v.to_str().unwrap_or("?"))
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))
        .collect();
    (!codings.is_empty()).then(|| horst_gateway::text::clip(&codings.join(", "), 64))
}

/// The message of a refused compressed body.
pub(crate) fn compressed_message(coding: &str) -> String {
    format!(
        "Content-Encoding {coding:?} is not supported: send the body uncompressed (no Content-Encoding, or identity)"
    )
}

/// 415 for a compressed body says which coding is read (RFC 9110 15.5.16).
pub(crate) fn accept_identity(mut r: Response) -> Response {
    r.headers_mut().insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    r
}

pub(crate) enum BodyError {
    TooLarge,
    Broken,
}

/// Reads at most `limit` bytes; a larger body is drained (up to a cap) and refused.
/// A body whose `Content-Length` is over `limit` is refused at once, unread.
pub(crate) async fn read_body(body: Body, limit: usize) -> Result<Bytes, BodyError> {
    let mut body = body;
    if body.size_hint().lower() > limit as u64 {
        return Err(BodyError::TooLarge);
    }
    let mut buf: Vec<u8> = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Broken)?;
        if let Ok(data) = frame.into_data() {
            seen += data.len();
            if seen <= limit {
                buf.extend_from_slice(&data);
            } else if seen > DRAIN_LIMIT_BYTES {
                return Err(BodyError::TooLarge);
            }
        }
    }
    if seen > limit {
        return Err(BodyError::TooLarge);
    }
    Ok(Bytes::from(buf))
}

/// The client's address: the TCP peer, or what trusted proxies forwarded.
pub(crate) fn client_ip(
    state: &AppState,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
) -> std::net::IpAddr {
    let peer = peer
        .map(|p| p.ip())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok());
    state.agents.proxies.resolve(peer, forwarded).0
}

/// CORS for the origins the operator allowed (`gateway.allowed_origins`): a browser page
/// there (a local inspector or agent UI) must pass a preflight before its JSON POST, and may
/// read an answer only if it names the origin. Every other origin gets no CORS header, and
/// its POST is refused below.
async fn transport(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .filter(|o| allowed_origin(&state, o))
        .cloned();
    let mut r = match (&origin, request.method()) {
        (Some(_), &Method::OPTIONS) => {
            let mut r = StatusCode::NO_CONTENT.into_response();
            let h = r.headers_mut();
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("POST"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(
                    "authorization, content-type, accept, mcp-protocol-version, mcp-session-id",
                ),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
            r
        }
        _ => checked(State(state), request, next).await,
    };
    if let Some(origin) = origin {
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("retry-after, www-authenticate"),
        );
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    r
}

/// The transport's checks, in the contract's order, before any extractor of the handler
/// runs: method, the gateway switch, origin, the per-address burst limit, content type and
/// body size. It hands the handler the body (already read) and the gateway's mode.
async fn checked(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if parts.method != Method::POST {
        return method_not_allowed();
    }
    // The mode this process read last holds while the store is away (`Gateway::mode`). Not
    // known at all, the request is still read to the end, so its refusal echoes its id.
    let mode = state.agents.gateway.mode().await;
    if matches!(mode, Ok(GatewayMode::Off)) {
        return rpc_error(
            StatusCode::NOT_FOUND,
            codes::REFUSED,
            "the agent gateway is switched off by its operator; try again later",
        );
    }
    let headers = &parts.headers;
    if let Some(origin) = headers.get(header::ORIGIN) {
        if !allowed_origin(&state, origin) {
            return rpc_error(
                StatusCode::FORBIDDEN,
                codes::REFUSED,
                "requests with this Origin are refused; agents send no Origin header",
            );
        }
    }
    let ip = client_ip(&state, peer, headers);
    let per_address = &state.agents.limits.per_address;
    // Before the body is read, so this refusal cannot name the request.
    if let Err(refused) = state
        .agents
        .burst
        .check(per_address, &horst_identity::sign_in_limits::client_of(ip))
        .await
    {
        return burst_refused(&state, refused, "address", per_address.max, Value::Null);
    }
    if let Some(coding) = compressed(headers) {
        return accept_identity(rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::REFUSED,
            &compressed_message(&coding),
        ));
    }
    if !is_json(headers) {
        // A JSON message under another content type is still read (within the limit, after
        // the burst limit), so the refusal names its request.
        let id = match read_body(body, MAX_BODY_BYTES).await {
            Ok(b) => protocol::request_id(&b),
            Err(_) => Value::Null,
        };
        return rpc_error_for(
            id,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::REFUSED,
            "send Content-Type: application/json",
        );
    }
    let bytes = match read_body(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            let mut r = rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                codes::REFUSED,
                "the request body is over 3 MiB; send less: a map is at most 256 KiB and a replay at most 1 MiB (get_map_format lists the limits)",
            );
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
        Err(BodyError::Broken) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                codes::PARSE_ERROR,
                "the request body could not be read: the connection broke or the body came too slowly; send the whole body at once",
            )
        }
    };
    let mode = match mode {
        Ok(m) => m,
        Err(e) => return store_failure(&e, "gateway mode", protocol::request_id(&bytes)),
    };
    parts.extensions.insert(mode);
    parts.extensions.insert(ReadBody(bytes.clone()));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether an `Origin` header names an origin of `gateway.allowed_origins`.
fn allowed_origin(state: &AppState, origin: &HeaderValue) -> bool {
    origin.to_str().is_ok_and(|o| {
        state
            .config
            .gateway
            .allowed_origins
            .iter()
            .any(|a| origin_allowed(a, o))
    })
}

/// Whether `origin` (an `Origin` header) is the allowlist's `entry`: the same origin, or, for
/// an entry without a port (`http://localhost`), that host on any port, since local browser
/// clients (inspectors, agent UIs) pick their ports freely.
fn origin_allowed(entry: &str, origin: &str) -> bool {
    let entry = entry.trim_end_matches('/');
    if entry.eq_ignore_ascii_case(origin) {
        return true;
    }
    let host = entry.split_once("://").map_or("", |(_, h)| h);
    let has_port = host
        .rsplit_once(']')
        .map_or(host, |(_, after)| after)
        .contains(':');
    !has_port
        && origin.len() > entry.len()
        && origin.is_char_boundary(entry.len())
        && origin[..entry.len()].eq_ignore_ascii_case(entry)
        && origin[entry.len()..]
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The message, once the transport let it in: the key (the [`AgentCaller`] extractor), the
/// per-account burst limit, then the gateway.
async fn mcp(
    State(state): State<AppState>,
    Extension(mode): Extension<GatewayMode>,
    headers: HeaderMap,
    AgentCaller(caller): AgentCaller,
    bytes: Bytes,
) -> Response {
    if let Some(account) = &caller {
        let per_account = &state.agents.limits.per_account;
        if let Err(refused) = state.agents.burst.check(per_account, &account.name).await {
            return burst_refused(
                &state,
                refused,
                "account",
                per_account.max,
                protocol::request_id(&bytes),
            );
        }
    }
    let version = headers
        .get("mcp-protocol-version")
        .map(|v| v.to_str().unwrap_or("invalid"));
    let reply = state
        .agents
        .gateway
        .handle(Message {
            body: &bytes,
            protocol_version: version,
            caller: caller.as_ref(),
            read_only: mode == GatewayMode::ReadOnly,
        })
        .await;
    match reply {
        Reply::Json(v) => json_response(StatusCode::OK, v),
        Reply::Accepted => StatusCode::ACCEPTED.into_response(),
        Reply::Refused { refusal, body } => match refusal {
            Refusal::BadRequest => json_response(StatusCode::BAD_REQUEST, body),
            Refusal::Forbidden => json_response(StatusCode::FORBIDDEN, body),
            Refusal::Unavailable {
                retry_after_seconds,
            } => {
                let mut r = json_response(StatusCode::SERVICE_UNAVAILABLE, body);
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_seconds));
                r
            }
            Refusal::Unauthorized => {
                let mut r = json_response(StatusCode::UNAUTHORIZED, body);
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                r
            }
        },
    }
}

/// A burst limit's 429, or the store failure that kept it from counting. The wait is in
/// `Retry-After` and in the error's `data` (`{code: "burst", per, retryAfterSeconds}`): MCP
/// clients raise an HTTP error with the body's text and drop the headers, so an agent often
/// reads only the body (the 503 of an unreachable store carries its wait so too).
fn burst_refused(state: &AppState, e: BurstError, per: &str, max: u32, id: Value) -> Response {
    match e {
        BurstError::Limited(limited) => {
            state.agents.gateway.count_refusal("burst", per);
            let s = limited.retry_after_seconds();
            let body = protocol::error(
                id,
                codes::REFUSED,
                &format!(
                    "burst limit: at most {max} requests per minute per {per}; retry after {s} s"
                ),
                Some(serde_json::json!({ "code": "burst", "per": per, "retryAfterSeconds": s })),
            );
            too_many(s, json_response(StatusCode::TOO_MANY_REQUESTS, body))
        }
        BurstError::Store(e) => store_failure(&e, "burst limit", id),
    }
}

/// The answer to a key that does not authenticate (the [`AgentCaller`] rejection).
pub(crate) fn refuse_key(e: AuthError, id: Value) -> Response {
    match e {
        AuthError::Unauthorized(m) => unauthorized(id, &m),
        AuthError::Blocked(m) => rpc_error_for(id, StatusCode::FORBIDDEN, codes::REFUSED, &m),
        AuthError::Store(e) => internal(id, format!("authenticate: {e}")),
        AuthError::Unreachable(e) => unavailable(id, format!("authenticate: {e}")),
    }
}

/// A Redis failure before the gateway: unavailable when Redis cannot be reached, else
/// internal.
fn store_failure(e: &horst_store::RedisError, what: &str, id: Value) -> Response {
    if horst_store::is_unreachable(e) {
        unavailable(id, format!("{what}: {e}"))
    } else {
        internal(id, format!("{what}: {e}"))
    }
}

/// Redis cannot be reached: 503 with `Retry-After`, and the tools' `engine_unavailable` with
/// `retryAfterSeconds` in the JSON-RPC error's data, so a client retries (with the same
/// idempotencyKey) instead of giving up; never a 500.
fn unavailable(id: Value, detail: String) -> Response {
    tracing::warn!(detail = %detail, "the store is unreachable; answered 503");
    let retry = horst_gateway::UNAVAILABLE_RETRY_SECONDS;
    let body = protocol::error(
        id,
        codes::REFUSED,
        &format!("the server's store is unreachable right now; retry after {retry} s"),
        Some(serde_json::json!({ "code": "engine_unavailable", "retryAfterSeconds": retry })),
    );
    let mut r = json_response(StatusCode::SERVICE_UNAVAILABLE, body);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry));
    r
}

/// A store failure: logged in full, answered as a JSON-RPC internal error without details.
fn internal(id: Value, detail: String) -> Response {
    tracing::error!(detail = %detail, "gateway internal error");
    rpc_error_for(
        id,
        StatusCode::INTERNAL_SERVER_ERROR,
        codes::INTERNAL_ERROR,
        "internal error; details are in the server log",
    )
}

fn unauthorized(id: Value, message: &str) -> Response {
    let mut r = rpc_error_for(id, StatusCode::UNAUTHORIZED, codes::REFUSED, message);
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

#[cfg(test)]
mod tests {
    use super::origin_allowed;

    #[test]
    fn origins_match_exactly_or_any_port_of_a_portless_entry() {
        assert!(origin_allowed("https://gcv.example", "https://gcv.example"));
        assert!(origin_allowed(
            "https://gcv.example/",
            "HTTPS://GCV.example"
        ));
        assert!(!origin_allowed(
            "https://gcv.example",
            "https://gcv.example.evil"
        ));
        assert!(!origin_allowed("https://gcv.example", "http://gcv.example"));
        assert!(origin_allowed("http://localhost", "http://localhost:6274"));
        assert!(origin_allowed("http://127.0.0.1", "http://127.0.0.1:80"));
        assert!(origin_allowed("http://[::1]", "http://[::1]:8080"));
        assert!(!origin_allowed("http://localhost", "http://localhost:"));
        assert!(!origin_allowed("http://localhost", "http://localhost:80x"));
        assert!(!origin_allowed(
            "http://localhost",
            "http://localhost.evil.com"
        ));
        assert!(!origin_allowed(
            "http://localhost:6274",
            "http://localhost:6275"
        ));
        assert!(!origin_allowed("http://[::1]:1", "http://[::1]:2"));
        assert!(!origin_allowed("http://localhost", "null"));
    }
}
