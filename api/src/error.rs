//! The one error type of the REST endpoints: `{ "error": message, "code": stable_code }`.
//!
//! Every code maps to exactly one HTTP status in an exhaustive `match`, so a new code is a
//! compile error until it has one. Three vocabularies meet here, one per contract:
//! the API's own ([`ApiCode`]), the gateway's domain codes (`horst_gateway::ErrorCode`, for
//! the operator's REST API and the public reads) and the RCADIA session machine's
//! (`horst_sessions::ProtocolCode`, whose status the protocol fixes).
//!
//! Architecture invariant: an internal error's details go to the log, never into the
//! response; the client gets a stable code and a hint.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use horst_gateway::{ErrorCode, ToolError};
use horst_sessions::ProtocolCode;
use serde::Serialize;

/// The API's own refusals (not a gateway tool's, not the session machine's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiCode {
    /// A malformed RCADIA request (the protocol's word for it).
    BadRequest,
    /// A malformed operator, agent-key or public request (the gateway contract's word).
    InvalidInput,
    /// The configuration file cannot be used (quota reload).
    InvalidConfig,
    /// No credential, or an unknown one.
    Unauthorized,
    /// Wrong username or password.
    InvalidCredentials,
    /// A credential without the scope the endpoint needs.
    MissingScope,
    /// A request with an `Origin` header where web pages may not call.
    Origin,
    /// A state-changing browser request made by another site (CSRF).
    CrossSite,
    /// A state-changing browser request without its session's CSRF token.
    Csrf,
    /// The account is blocked.
    Blocked,
    /// Signed in, but not allowed here (an account without the operator role on /admin).
    Forbidden,
    /// Sign-up is closed; the operator creates accounts.
    SignUpClosed,
    /// A destructive operator action on the `/admin` page needs the credential given again
    /// (`POST /api/admin/session/confirm`).
    Reauthenticate,
    NotFound,
    /// The method is not allowed on this path.
    Method,
    /// An RCADIA session lost with the store (another boot tag).
    ServerRestarted,
    /// The body is over the endpoint's limit.
    TooLarge,
    /// `Content-Type` is not `application/json`.
    ContentType,
    /// A burst limit.
    Burst,
    /// Agent keys: the caller's network created its 3 keys in 24 hours.
    NetworkCap,
    /// Agent keys: 50 keys were created in 24 hours.
    DailyCap,
    /// The service cannot answer now (Redis away, shutting down); retry later.
    Unavailable,
    /// A seek found no open table of the game within its wait; seek again later.
    NoTable,
    /// A seek of a game nobody hosts: no table of it and the house does not keep any.
    UnknownGame,
    /// A seek while another seek of the same identity still waits.
    SeekInProgress,
    /// `POST /action?wait`: the action was resolved before the player's later one and its
    /// outcome is no longer in the session's event log.
    OutcomeUnknown,
    InternalError,
}

impl ApiCode {
    pub const fn status(self) -> StatusCode {
        match self {
            ApiCode::BadRequest | ApiCode::InvalidInput | ApiCode::InvalidConfig => {
                StatusCode::BAD_REQUEST
            }
            ApiCode::Unauthorized | ApiCode::InvalidCredentials => StatusCode::UNAUTHORIZED,
            ApiCode::MissingScope
            | ApiCode::Origin
            | ApiCode::CrossSite
            | ApiCode::Csrf
            | ApiCode::Blocked
            | ApiCode::Forbidden
            | ApiCode::SignUpClosed
            | ApiCode::Reauthenticate => StatusCode::FORBIDDEN,
            ApiCode::NotFound | ApiCode::UnknownGame => StatusCode::NOT_FOUND,
            ApiCode::SeekInProgress | ApiCode::OutcomeUnknown => StatusCode::CONFLICT,
            ApiCode::Method => StatusCode::METHOD_NOT_ALLOWED,
            ApiCode::ServerRestarted => StatusCode::GONE,
            ApiCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiCode::ContentType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiCode::Burst | ApiCode::NetworkCap | ApiCode::DailyCap => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiCode::Unavailable | ApiCode::NoTable => StatusCode::SERVICE_UNAVAILABLE,
            ApiCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            ApiCode::BadRequest => "bad_request",
            ApiCode::InvalidInput => "invalid_input",
            ApiCode::InvalidConfig => "invalid_config",
            ApiCode::Unauthorized => "unauthorized",
            ApiCode::InvalidCredentials => "invalid_credentials",
            ApiCode::MissingScope => "missing_scope",
            ApiCode::Origin => "origin",
            ApiCode::CrossSite => "cross_site",
            ApiCode::Csrf => "csrf",
            ApiCode::Blocked => "blocked",
            ApiCode::Forbidden => "forbidden",
            ApiCode::SignUpClosed => "sign_up_closed",
            ApiCode::Reauthenticate => "reauthenticate",
            ApiCode::NotFound => "not_found",
            ApiCode::Method => "method",
            ApiCode::ServerRestarted => "server_restarted",
            ApiCode::TooLarge => "too_large",
            ApiCode::ContentType => "content_type",
            ApiCode::Burst => "burst",
            ApiCode::NetworkCap => "network_cap",
            ApiCode::DailyCap => "daily_cap",
            ApiCode::Unavailable => "unavailable",
            ApiCode::NoTable => "no_table",
            ApiCode::UnknownGame => "unknown_game",
            ApiCode::SeekInProgress => "seek_in_progress",
            ApiCode::OutcomeUnknown => "outcome_unknown",
            ApiCode::InternalError => "internal_error",
        }
    }
}

/// The HTTP status of a gateway domain code on the REST side (the MCP endpoint answers
/// them as tool results with 200 instead).
pub const fn tool_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidInput | ErrorCode::ValidationFailed => StatusCode::BAD_REQUEST,
        ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Conflict | ErrorCode::EngineMismatch | ErrorCode::CheckFailed => {
            StatusCode::CONFLICT
        }
        ErrorCode::Quota => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::Busy | ErrorCode::EngineUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::Cancelled => StatusCode::CONFLICT,
        ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The HTTP status of an RCADIA protocol code (the protocol fixes it; this is its typed form).
pub const fn protocol_status(code: ProtocolCode) -> StatusCode {
    use ProtocolCode as C;
    match code {
        C::BadRequest | C::ReservedAction => StatusCode::BAD_REQUEST,
        C::NotAPlayer | C::NotTheHost => StatusCode::FORBIDDEN,
        C::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        C::Finished
        | C::InProgress
        | C::Reserved
        | C::Full
        | C::NotActive
        | C::ActionPending
        | C::StaleTurn
        | C::NotYourTurn
        | C::AlreadyLinked
        | C::LegacySession
        | C::NotFinished
        | C::HostDisconnected
        | C::HostLeft
        | C::NoPlayers
        | C::EndedByOperator
        | C::IdempotencyKeyReused => StatusCode::CONFLICT,
        C::IdCollision => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

#[derive(Debug)]
enum Repr {
    Own {
        code: ApiCode,
        message: String,
    },
    /// A gateway failure (operator REST, public reads): its code, message and details.
    Tool(ToolError),
    /// An RCADIA protocol error; `snapshot` is added to the 409s of `POST /action`.
    Protocol {
        error: horst_sessions::ProtocolError,
        snapshot: Option<serde_json::Value>,
    },
    /// Redis down, a bug: logged in full, answered as 500 `internal_error`.
    Internal(String),
}

/// An error answer. Build it with [`ApiError::new`], [`ApiError::internal`], or `?` on a
/// `ToolError`, `ProtocolError` or `RcadiaError`.
#[derive(Debug)]
pub struct ApiError {
    repr: Repr,
    retry_after: Option<u64>,
    www_authenticate: bool,
    accept_identity: bool,
}

impl ApiError {
    /// A refusal with the API's own code and a message that says how to fix the request.
    pub fn new(code: ApiCode, message: impl Into<String>) -> Self {
        ApiError {
            repr: Repr::Own {
                code,
                message: message.into(),
            },
            retry_after: None,
            www_authenticate: code.status().as_u16() == 401,
            accept_identity: false,
        }
    }

    pub fn internal(detail: impl std::fmt::Display) -> Self {
        ApiError {
            repr: Repr::Internal(detail.to_string()),
            retry_after: None,
            www_authenticate: false,
            accept_identity: false,
        }
    }

    /// A burst limit's refusal: 429 `burst` with `Retry-After: seconds` and `message`, which
    /// says what was counted and how long to wait. Every burst refusal of the REST routes is
    /// this one answer (the MCP endpoint answers JSON-RPC instead: `routes::mcp`).
    pub fn burst(seconds: u64, message: impl Into<String>) -> Self {
        ApiError::new(ApiCode::Burst, message).retry_after(seconds)
    }

    /// A burst limit's verdict as an answer: `Ok`, [`ApiError::burst`] with
    /// `message(seconds)`, or the store's failure to count.
    pub fn limited(
        verdict: Result<(), horst_limits::BurstError>,
        message: impl FnOnce(u64) -> String,
    ) -> Result<(), Self> {
        match verdict {
            Ok(()) => Ok(()),
            Err(horst_limits::BurstError::Limited(l)) => {
                let s = l.retry_after_seconds();
                Err(ApiError::burst(s, message(s)))
            }
            Err(horst_limits::BurstError::Store(e)) => Err(ApiError::from(e)),
        }
    }

    /// Redis cannot be reached now: 503 `unavailable` with `Retry-After`, never a 500.
    pub fn unavailable(detail: impl std::fmt::Display) -> Self {
        tracing::warn!(detail = %detail, "the store is unreachable; answered 503");
        let retry = horst_gateway::UNAVAILABLE_RETRY_SECONDS;
        ApiError::new(
            ApiCode::Unavailable,
            format!("the server's store is unreachable right now; retry after {retry} s"),
        )
        .retry_after(retry)
    }

    /// A 409 of `POST /action` with the caller's snapshot, so an agent re-syncs at once.
    pub fn protocol_with_snapshot(
        error: horst_sessions::ProtocolError,
        snapshot: Option<serde_json::Value>,
    ) -> Self {
        ApiError {
            repr: Repr::Protocol { error, snapshot },
            retry_after: None,
            www_authenticate: false,
            accept_identity: false,
        }
    }

    /// Says `Accept-Encoding: identity`: the answer to a compressed body (RFC 9110 15.5.16).
    pub fn accept_identity(mut self) -> Self {
        self.accept_identity = true;
        self
    }

    /// Adds `Retry-After: seconds`.
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// The stable code of this answer.
    pub fn code(&self) -> &'static str {
        match &self.repr {
            Repr::Own { code, .. } => code.as_str(),
            Repr::Tool(e) => e.code.as_str(),
            Repr::Protocol { error, .. } => error.code.as_str(),
            Repr::Internal(_) => ApiCode::InternalError.as_str(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match &self.repr {
            Repr::Own { code, .. } => code.status(),
            Repr::Tool(e) => tool_status(e.code),
            Repr::Protocol { error, .. } => protocol_status(error.code),
            Repr::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// The REST error body. `details` carries a gateway failure's extra fields
/// (`retryAfterSeconds`, ...); `snapshot` an RCADIA 409's snapshot.
#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    code: &'a str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    details: Option<&'a serde_json::Map<String, serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snapshot: Option<&'a serde_json::Value>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let code = self.code();
        let mut response = match &self.repr {
            Repr::Own { message, .. } => body(status, code, message, None, None),
            Repr::Tool(e) if e.code == ErrorCode::InternalError => {
                // The gateway logged its details already.
                body(status, code, &e.message, None, None)
            }
            Repr::Tool(e) => body(status, code, &e.message, Some(&e.details), None),
            Repr::Protocol { error, snapshot } => {
                body(status, code, &error.message, None, snapshot.as_ref())
            }
            Repr::Internal(detail) => {
                tracing::error!(detail = %detail, "internal error");
                body(
                    status,
                    code,
                    "internal error; details are in the server log",
                    None,
                    None,
                )
            }
        };
        if let Some(seconds) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        if self.accept_identity {
            response = crate::routes::mcp::accept_identity(response);
        }
        if self.www_authenticate {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

fn body(
    status: StatusCode,
    code: &str,
    message: &str,
    details: Option<&serde_json::Map<String, serde_json::Value>>,
    snapshot: Option<&serde_json::Value>,
) -> Response {
    let details = details.filter(|d| !d.is_empty());
    (
        status,
        Json(Body {
            error: message,
            code,
            details,
            snapshot,
        }),
    )
        .into_response()
}

impl From<ToolError> for ApiError {
    fn from(e: ToolError) -> Self {
        // Redis away, on a REST route: the REST code and a plain hint (the tool's message
        // speaks of idempotency keys, which these routes do not take).
        if e.is_store_unreachable() {
            let seconds = e
                .details
                .get("retryAfterSeconds")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(2);
            return ApiError::new(
                ApiCode::Unavailable,
                format!("the server's store cannot be reached right now; retry in {seconds} s"),
            )
            .retry_after(seconds);
        }
        let retry_after = e
            .details
            .get("retryAfterSeconds")
            .and_then(serde_json::Value::as_u64);
        ApiError {
            repr: Repr::Tool(e),
            retry_after,
            www_authenticate: false,
            accept_identity: false,
        }
    }
}

impl From<horst_sessions::ProtocolError> for ApiError {
    fn from(error: horst_sessions::ProtocolError) -> Self {
        ApiError::protocol_with_snapshot(error, None)
    }
}

impl From<horst_rcadia::RcadiaError> for ApiError {
    fn from(e: horst_rcadia::RcadiaError) -> Self {
        use horst_rcadia::RcadiaError as E;
        match e {
            E::Protocol(p, _) => p.into(),
            E::NotFound => ApiError::new(
                ApiCode::NotFound,
                "no such session; find open tables with GET /api/v1/agent/sessions/available",
            ),
            E::Gone => ApiError::new(
                ApiCode::ServerRestarted,
                "this session was lost when the server restarted; find a new table with GET /api/v1/agent/sessions/available",
            ),
            E::Redis(e) => e.into(),
            other => ApiError::internal(other),
        }
    }
}

impl From<horst_identity::IdentityError> for ApiError {
    fn from(e: horst_identity::IdentityError) -> Self {
        use horst_identity::IdentityError as E;
        match e {
            E::Invalid(m) => ApiError::new(ApiCode::InvalidInput, m),
            E::NotFound(m) => ApiError::new(ApiCode::NotFound, m),
            E::Conflict(m) => ToolError::new(ErrorCode::Conflict, m).into(),
            E::Cap {
                cap,
                message,
                retry_after_seconds,
            } => {
                let code = match cap {
                    horst_identity::KeyCap::Network => ApiCode::NetworkCap,
                    horst_identity::KeyCap::Daily => ApiCode::DailyCap,
                };
                ApiError::new(code, message).retry_after(retry_after_seconds)
            }
            E::Unavailable(detail) => ApiError::unavailable(detail),
            E::Internal(detail) => ApiError::internal(detail),
        }
    }
}

impl From<horst_queue::QueueError> for ApiError {
    fn from(e: horst_queue::QueueError) -> Self {
        ToolError::from(e).into()
    }
}

impl From<horst_store::RedisError> for ApiError {
    fn from(e: horst_store::RedisError) -> Self {
        if horst_store::is_unreachable(&e) {
            ApiError::unavailable(format!("redis: {e}"))
        } else {
            ApiError::internal(format!("redis: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_details_are_flattened_and_internal_details_are_not() {
        let e = ToolError::new(ErrorCode::Busy, "queue full").with("retryAfterSeconds", 3);
        let r = ApiError::from(e).into_response();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.headers()[header::RETRY_AFTER], "3");
        let r = ApiError::internal("redis: connection refused at 10.0.0.1").into_response();
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    /// Every REST burst refusal is [`ApiError::burst`]; these are its bytes on the wire, as
    /// the six places that built it by hand answered them (a 429, `Retry-After`, JSON with
    /// the message and the code, nothing else).
    #[tokio::test]
    async fn a_burst_refusal_is_these_bytes_on_the_wire() {
        let message = "this token may make 5 requests a minute (the operator's limit); wait 7 s and try again";
        let by_hand = ApiError::new(ApiCode::Burst, message)
            .retry_after(7)
            .into_response();
        let pinned = ApiError::burst(7, message).into_response();
        let limited = ApiError::limited(
            Err(horst_limits::BurstError::Limited(horst_limits::Limited {
                limit: "rcadia_token",
                retry_after: std::time::Duration::from_millis(6_200),
            })),
            |s| format!("this token may make 5 requests a minute (the operator's limit); wait {s} s and try again"),
        )
        .unwrap_err()
        .into_response();
        let wire = |r: Response| async move {
            let status = r.status().as_u16();
            let mut headers: Vec<(String, String)> = r
                .headers()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
                .collect();
            headers.sort();
            let body = http_body_util::BodyExt::collect(r.into_body())
                .await
                .unwrap()
                .to_bytes();
            (status, headers, String::from_utf8(body.to_vec()).unwrap())
        };
        let expected = (
            429,
            vec![
                ("content-type".to_string(), "application/json".to_string()),
                ("retry-after".to_string(), "7".to_string()),
            ],
            format!(r#"{{"error":"{message}","code":"burst"}}"#),
        );
        assert_eq!(wire(by_hand).await, expected);
        assert_eq!(wire(pinned).await, expected);
        assert_eq!(wire(limited).await, expected);
        assert!(ApiError::limited(Ok(()), |_| unreachable!()).is_ok());
    }

    #[test]
    fn unauthorized_answers_carry_the_challenge() {
        let r = ApiError::new(ApiCode::Unauthorized, "send a token").into_response();
        assert_eq!(r.headers()[header::WWW_AUTHENTICATE], "Bearer");
        let r = ApiError::new(ApiCode::MissingScope, "wrong scope").into_response();
        assert!(r.headers().get(header::WWW_AUTHENTICATE).is_none());
    }

    #[test]
    fn protocol_statuses_are_the_protocols() {
        for c in ProtocolCode::ALL {
            assert_eq!(protocol_status(c).as_u16(), c.status(), "{c:?}");
            let r = ApiError::from(horst_sessions::ProtocolError::new(c, "fix it")).into_response();
            assert_eq!(r.status().as_u16(), c.status(), "{c:?}");
        }
    }
}
