//! Who is calling, and what they sent: axum extractors, so a handler states what it needs
//! in its signature and never runs without it (after realworld-axum-sqlx's auth extractor).
//!
//! - [`Operator`]: the operator's REST API (`gateway.admin_token`).
//! - [`Player`] and [`Host`]: RCADIA callers (an agent token with the scope, or a user's JWT).
//! - [`AgentCaller`]: the agent key of an MCP request (optional: the read tools are anonymous).
//! - [`Json`]: a JSON body whose rejection is the API's own `{error, code}` answer, never
//!   axum's plain text; an empty body reads as `{}`. [`Query`] likewise for query strings.
//!
//! Extractors that only read headers (`FromRequestParts`) run before the body is read.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use horst_rcadia::auth::Identity;
use serde::de::DeserializeOwned;

use crate::{ApiCode, ApiError, AppState};

/// The bearer token of `Authorization`, trimmed; `None` when absent or empty.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// The operator of the REST admin API, as the audit trail names them: `api:<X-Operator>`
/// or `api`. With no `gateway.admin_token` configured the API does not exist (404).
pub struct Operator(pub String);

impl FromRequestParts<AppState> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = &state.config.gateway.admin_token;
        if token.is_empty() {
            return Err(ApiError::new(
                ApiCode::NotFound,
                "the admin API is off; set gateway.admin_token (HORST_GATEWAY_ADMIN_TOKEN) to use it",
            ));
        }
        // The SHA-256s are compared in constant time, so timing does not leak how much of a
        // guess was right.
        let given = bearer(&parts.headers).unwrap_or_default();
        if !horst_gateway::accounts::secret_matches(given, token) {
            return Err(ApiError::new(
                ApiCode::Unauthorized,
                "send Authorization: Bearer <the operator token> (gateway.admin_token)",
            ));
        }
        let name = parts
            .headers
            .get("x-operator")
            .and_then(|v| v.to_str().ok())
            .map(horst_gateway::text::clean_line)
            .filter(|n| !n.is_empty() && n.chars().count() <= 40);
        Ok(Operator(match name {
            Some(n) => format!("api:{n}"),
            None => "api".into(),
        }))
    }
}

/// Which RCADIA scope an endpoint needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Play,
    Host,
}

/// The authenticated RCADIA caller, with `scope` checked (users have both).
async fn rcadia_caller(
    state: &AppState,
    headers: &HeaderMap,
    scope: Scope,
) -> Result<Identity, ApiError> {
    let token = bearer(headers).ok_or_else(|| {
        ApiError::new(
            ApiCode::Unauthorized,
            "send Authorization: Bearer <agent token or session JWT>",
        )
    })?;
    let id = state
        .auth
        .identify(token)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| {
            ApiError::new(
                ApiCode::Unauthorized,
                "unknown or expired credential; create a token with `horst admin token create` or sign in again",
            )
        })?;
    let (ok, need, what) = match scope {
        Scope::Play => (id.play, "play", "play sessions"),
        Scope::Host => (id.host, "host", "host sessions"),
    };
    if !ok {
        return Err(ApiError::new(
            ApiCode::MissingScope,
            format!("this token may not {what}; use a token with the {need} scope (horst admin token create --scopes {need})"),
        ));
    }
    Ok(id)
}

/// An RCADIA caller with the `play` scope.
pub struct Player(pub Identity);

impl FromRequestParts<AppState> for Player {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        rcadia_caller(state, &parts.headers, Scope::Play)
            .await
            .map(Player)
    }
}

/// An RCADIA caller with the `host` scope.
pub struct Host(pub Identity);

impl FromRequestParts<AppState> for Host {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        rcadia_caller(state, &parts.headers, Scope::Host)
            .await
            .map(Host)
    }
}

/// The agent behind an MCP request's key: `None` without an `Authorization` header (the
/// anonymous read tools), the account otherwise. The rejection is the transport's
/// JSON-RPC error (401 with `WWW-Authenticate`, 403 for a blocked account).
pub struct AgentCaller(pub Option<horst_gateway::Account>);

impl FromRequestParts<AppState> for AgentCaller {
    type Rejection = axum::response::Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let auth = parts
            .headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or("invalid"));
        match horst_gateway::accounts::authenticate(&state.store, auth).await {
            Ok(account) => Ok(AgentCaller(account)),
            Err(e) => Err(crate::routes::mcp::refuse_key(
                e,
                crate::routes::mcp::request_id(parts),
            )),
        }
    }
}

/// Which contract's vocabulary a malformed body is answered in: the RCADIA protocol says
/// `bad_request`, the gateway contract (operator and agent-key REST) `invalid_input`.
fn malformed_code(path: &str) -> ApiCode {
    if path.starts_with("/api/v1/") {
        ApiCode::BadRequest
    } else {
        ApiCode::InvalidInput
    }
}

/// What a body or query string must look like, in words, for the message of a 400 (so the
/// answer says how to fix the request, not only that it is wrong).
pub trait Expected {
    const EXPECTED: &'static str;
}

impl Expected for serde_json::Value {
    const EXPECTED: &'static str = "a JSON object as documented for this endpoint";
}

/// A JSON body of type `T`. An empty body reads as `{}`; anything else that is not JSON of
/// the shape `T` is a 400 that says what was wrong. The size limit is axum's
/// `DefaultBodyLimit` (a larger body is a JSON 413).
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + Expected, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let code = malformed_code(req.uri().path());
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| {
                if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        ApiCode::TooLarge,
                        format!(
                            "the body is over this endpoint's size limit ({}); send less (the RCADIA limits are in docs/agents-play.md and docs/hosts.md: 16 KiB per agent request, 1 MiB per bridge request)",
                            e.body_text()
                        ),
                    )
                } else {
                    ApiError::new(
                        code,
                        format!("the body could not be read: {}", e.body_text()),
                    )
                }
            })?;
        let parsed = if bytes.iter().all(u8::is_ascii_whitespace) {
            serde_json::from_str("{}")
        } else {
            serde_json::from_slice(&bytes)
        };
        parsed.map(Json).map_err(|e| {
            let what = if e.is_syntax() || e.is_eof() {
                "the body is not valid JSON"
            } else {
                "the body does not have the documented shape"
            };
            ApiError::new(code, format!("{what} ({e}); send {}", T::EXPECTED))
        })
    }
}

impl<T: serde::Serialize> axum::response::IntoResponse for Json<T> {
    fn into_response(self) -> axum::response::Response {
        axum::Json(self.0).into_response()
    }
}

/// A query string of type `T`; a bad one is a 400 in the API's own shape.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned + Expected, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let code = malformed_code(parts.uri.path());
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(q)| Query(q))
            .map_err(|e| {
                ApiError::new(
                    code,
                    format!(
                        "bad query string ({}); expected {}",
                        e.body_text(),
                        T::EXPECTED
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_leniently_but_never_empty() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer  abc ".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "bearer abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Bearer   ".parse().unwrap());
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn each_contract_keeps_its_word_for_a_malformed_body() {
        assert_eq!(
            malformed_code("/api/v1/agent/sessions/x/join"),
            ApiCode::BadRequest
        );
        assert_eq!(
            malformed_code("/api/admin/accounts/a/trust"),
            ApiCode::InvalidInput
        );
    }
}
