//! Who is calling, and what they sent: axum extractors, so a handler states what it needs
//! in its signature and never runs without it (after realworld-axum-sqlx's auth extractor).
//!
//! - [`Operator`]: the operator's REST API: an active admin token (`Authorization: Bearer`,
//!   within the sign-in limits of admin tokens), or else an operator's `/admin` session
//!   ([`PageOperator`]).
//! - [`PageOperator`]: the `/admin` page's session cookie (its own, not `/account`'s): a
//!   person with the operator role, or an admin-token sign-in.
//! - [`Confirmed`]: an [`Operator`] for a destructive action: a page session must have
//!   given its credential recently (else 403 `reauthenticate`); [`MaybeConfirmed`] for a
//!   route where only some bodies are destructive.
//! - [`SignedIn`]: a person's `/account` session cookie.
//! - [`ClientAddr`]: the client's address (behind trusted proxies, what they forwarded).
//! - [`Player`] and [`Host`]: RCADIA callers (an agent token with the scope, or a user's JWT).
//! - [`AgentCaller`]: the agent key of an MCP request (optional: the read tools are anonymous).
//! - [`Json`]: a JSON body whose rejection is the API's own `{error, code}` answer, never
//!   axum's plain text; an empty body reads as `{}`. [`Query`] likewise for query strings.
//!
//! Extractors that only read headers (`FromRequestParts`) run before the body is read.
//!
//! The cookie extractors never look at `Authorization`: an agent key opens neither page.
//! On a state-changing request (anything but GET and HEAD) they first refuse a cross-site
//! request (`Sec-Fetch-Site` other than `same-origin`, or an `Origin` that is not this host)
//! and then one without the session's CSRF token in `X-CSRF-Token`.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, Method};
use horst_identity::auth::Identity;
use serde::de::DeserializeOwned;

use crate::{ApiCode, ApiError, AppState};

/// The bearer token of `Authorization`, trimmed; `None` when absent or empty.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(horst_identity::accounts::bearer_credentials)
}

/// The operator of the admin API, as the audit trail names them: `api:<X-Operator>` or
/// `api` with an admin token, `page:<name>` with an `/admin` session. An admin token that is
/// not active is a 401; with no active admin token at all the bearer API does not exist (404).
pub struct Operator(pub String);

impl FromRequestParts<AppState> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let off = || {
            ApiError::new(
                ApiCode::NotFound,
                "the admin API is off: no admin token is active; set gateway.admin_token (HORST_GATEWAY_ADMIN_TOKEN) or run `horst admin admin-token create`",
            )
        };
        let Some(given) = bearer(&parts.headers) else {
            if admin_cookie(state, &parts.headers).is_none()
                && !horst_identity::admin_tokens::any_active(&state.store).await?
            {
                return Err(off());
            }
            return PageOperator::from_request_parts(parts, state)
                .await
                .map(|p| Operator(p.who))
                .map_err(|e| {
                    if e.code() == ApiCode::Unauthorized.as_str() {
                        ApiError::new(
                            ApiCode::Unauthorized,
                            "send Authorization: Bearer <an admin token>, or sign in on /admin",
                        )
                    } else {
                        e
                    }
                });
        };
        let store = &state.store;
        let address = client_addr(parts, state);
        // Guesses are limited and recorded as on the page's sign-in.
        let Some(token_id) = crate::routes::admin_page::check_bearer(state, address, given).await?
        else {
            if !horst_identity::admin_tokens::any_active(store).await? {
                return Err(off());
            }
            return Err(ApiError::new(
                ApiCode::Unauthorized,
                "send Authorization: Bearer <an active admin token> (gateway.admin_token or one from `horst admin admin-token create`)",
            ));
        };
        let name = parts
            .headers
            .get("x-operator")
            .and_then(|v| v.to_str().ok())
            .map(|n| horst_text::clean_line(n).replace('@', ""))
            .filter(|n| !n.is_empty() && n.chars().count() <= 40);
        // Which token acted, whatever name it gives.
        Ok(Operator(match name {
            Some(n) => format!("api:{n}@{token_id}"),
            None => format!("api@{token_id}"),
        }))
    }
}

/// An operator for a destructive action: like [`Operator`], but an `/admin` session must
/// have given its credential within `REAUTH_WINDOW` (sign-in or
/// `POST /api/admin/session/confirm`); else 403 `reauthenticate`. A bearer token is given
/// with every request, so it always counts as fresh.
pub struct Confirmed(pub String);

impl FromRequestParts<AppState> for Confirmed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        MaybeConfirmed::from_request_parts(parts, state)
            .await?
            .confirmed()
            .map(Confirmed)
    }
}

/// An [`Operator`] and whether its credential was given recently enough for a destructive
/// action ([`Confirmed`]), for a route where only some bodies are destructive: opening
/// sign-up hands an account to anyone who asks, closing it hands out nothing.
pub struct MaybeConfirmed {
    pub who: String,
    fresh: bool,
}

impl MaybeConfirmed {
    /// The operator, if their credential counts as fresh; else 403 `reauthenticate`.
    pub fn confirmed(self) -> Result<String, ApiError> {
        if self.fresh {
            return Ok(self.who);
        }
        Err(ApiError::new(
            ApiCode::Reauthenticate,
            format!(
                "this action needs your password (or admin token) again: the last was given more than {} minutes ago; confirm it with POST /api/admin/session/confirm, then repeat the action",
                horst_identity::web_sessions::REAUTH_WINDOW.as_secs() / 60
            ),
        ))
    }
}

impl FromRequestParts<AppState> for MaybeConfirmed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Without a page session this is the bearer API's question, with its answers (404
        // while it is off, a 401 that names both ways in), as for any other admin route.
        if bearer(&parts.headers).is_some() || admin_cookie(state, &parts.headers).is_none() {
            return Operator::from_request_parts(parts, state)
                .await
                .map(|o| MaybeConfirmed {
                    who: o.0,
                    fresh: true,
                });
        }
        let op = PageOperator::from_request_parts(parts, state).await?;
        Ok(MaybeConfirmed {
            fresh: op.session.recently_authenticated(),
            who: op.who,
        })
    }
}

/// The value of the cookie `wanted`, if the request carries it.
fn cookie<'a>(headers: &'a HeaderMap, wanted: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == wanted)
        .map(|(_, value)| value.trim())
}

/// Whether the browser reached us over TLS: `sessions.public_url` is https, or a proxy says
/// `X-Forwarded-Proto: https`. Believing the header can only make the cookies stricter (a
/// `__Host-` name, `Secure`, only that name read back) and add HSTS, never looser.
pub(crate) fn over_tls(state: &AppState, headers: &HeaderMap) -> bool {
    // A name, not a `&str`: a string is parsed into a header name on every lookup.
    const X_FORWARDED_PROTO: header::HeaderName =
        header::HeaderName::from_static("x-forwarded-proto");
    state.public_url.starts_with("https://")
        || headers
            .get(X_FORWARDED_PROTO)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

/// The value of the `/account` session cookie, if the request carries one: over TLS only
/// `__Host-horst_session` (a plain `horst_session` can be planted by a sibling subdomain or
/// an http:// answer, putting the victim into the planter's account), else `horst_session`.
pub(crate) fn session_cookie<'h>(state: &AppState, headers: &'h HeaderMap) -> Option<&'h str> {
    use horst_identity::web_sessions::{COOKIE, COOKIE_TLS};
    cookie(
        headers,
        if over_tls(state, headers) {
            COOKIE_TLS
        } else {
            COOKIE
        },
    )
}

/// The value of the `/admin` session cookie, if the request carries one: over TLS only
/// `__Host-horst_admin` (as [`session_cookie`]), else `horst_admin`.
pub(crate) fn admin_cookie<'h>(state: &AppState, headers: &'h HeaderMap) -> Option<&'h str> {
    use horst_identity::web_sessions::{ADMIN_COOKIE, ADMIN_COOKIE_TLS};
    cookie(
        headers,
        if over_tls(state, headers) {
            ADMIN_COOKIE_TLS
        } else {
            ADMIN_COOKIE
        },
    )
}

/// Refuses a browser request made by another site: `Sec-Fetch-Site` (sent by every current
/// browser) must be `same-origin`; without it, an `Origin` must name this host. Requests
/// with neither come from programs, not pages, and still need the CSRF token.
pub(crate) fn same_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    let refuse = || {
        ApiError::new(
            ApiCode::CrossSite,
            "this request came from another site; use the page on this server",
        )
    };
    if let Some(site) = headers.get("sec-fetch-site") {
        return if site.as_bytes() == b"same-origin" {
            Ok(())
        } else {
            Err(refuse())
        };
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        let origin = origin.to_str().unwrap_or_default();
        let matches = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"))
            .is_some_and(|o| !host.is_empty() && o.eq_ignore_ascii_case(host));
        if !matches {
            return Err(refuse());
        }
    }
    Ok(())
}

/// The session of the request's cookie, with the cross-site and CSRF checks of a
/// state-changing request already passed.
async fn browser_session(
    parts: &Parts,
    state: &AppState,
    sign_in_at: &str,
) -> Result<horst_identity::web_sessions::WebSession, ApiError> {
    let admin = sign_in_at == "/admin";
    let unsafe_method = !matches!(parts.method, Method::GET | Method::HEAD);
    if unsafe_method {
        same_origin(&parts.headers)?;
    }
    let signed_out = || {
        ApiError::new(
            ApiCode::Unauthorized,
            format!("not signed in, or the session ended; sign in on {sign_in_at}"),
        )
    };
    let id = if admin {
        admin_cookie(state, &parts.headers)
    } else {
        session_cookie(state, &parts.headers)
    }
    .ok_or_else(signed_out)?;
    let session = horst_identity::web_sessions::load(&state.store, id)
        .await?
        // Each page's cookie opens only its own kind of session.
        .filter(|s| s.is_admin() == admin)
        .ok_or_else(signed_out)?;
    if unsafe_method {
        let given = parts
            .headers
            .get("x-csrf-token")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !session.csrf_matches(given) {
            return Err(ApiError::new(
                ApiCode::Csrf,
                "the CSRF token is missing or wrong; reload the page and try again",
            ));
        }
    }
    Ok(session)
}

/// A person signed in on `/account` (not blocked; the session is theirs).
pub struct SignedIn {
    pub person: horst_identity::people::Person,
    pub session: horst_identity::web_sessions::WebSession,
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        use horst_identity::web_sessions::Subject;
        let session = browser_session(parts, state, "/account").await?;
        let Subject::Account(name) = &session.subject else {
            return Err(ApiError::new(
                ApiCode::Unauthorized,
                "an admin-token sign-in is not a game account; sign in on /account",
            ));
        };
        match horst_identity::people::load(&state.store, name).await? {
            Some(person) if !person.blocked => Ok(SignedIn { person, session }),
            Some(_) => {
                horst_identity::web_sessions::end(&state.store, &session).await?;
                Err(ApiError::new(
                    ApiCode::Blocked,
                    "this account is blocked; ask the operator",
                ))
            }
            None => {
                horst_identity::web_sessions::end(&state.store, &session).await?;
                Err(ApiError::new(
                    ApiCode::Unauthorized,
                    "this account no longer exists; sign in again on /account",
                ))
            }
        }
    }
}

/// An operator on the `/admin` page (its own cookie): a person with the operator role, or an
/// admin-token sign-in whose token is still active. `who` is `page:<name>` (the person) or
/// `page:<given name>@<token id>` for the audit trail.
pub struct PageOperator {
    pub who: String,
    pub session: horst_identity::web_sessions::WebSession,
}

impl FromRequestParts<AppState> for PageOperator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        use horst_identity::web_sessions::Subject;
        let session = browser_session(parts, state, "/admin").await?;
        let allowed = match &session.subject {
            Subject::Operator(name) => horst_identity::people::load(&state.store, name)
                .await?
                .filter(|p| p.operator && !p.blocked)
                .map(|p| format!("page:{}", p.name)),
            Subject::AdminToken {
                token_id,
                operator_name,
            } => horst_identity::admin_tokens::is_active(&state.store, token_id)
                .await?
                .then(|| format!("page:{operator_name}@{token_id}")),
            Subject::Account(_) => None,
        };
        match allowed {
            Some(who) => Ok(PageOperator { who, session }),
            None => Err(ApiError::new(
                ApiCode::Forbidden,
                "this session may not use /admin: the account is not an operator (or no longer), or the admin token was retired; sign in on /admin",
            )),
        }
    }
}

/// The client's address: the TCP peer, or what trusted proxies forwarded.
pub struct ClientAddr(pub std::net::IpAddr);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Ok(ClientAddr(client_addr(parts, state)))
    }
}

fn client_addr(parts: &Parts, state: &AppState) -> std::net::IpAddr {
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0);
    crate::routes::mcp::client_ip(state, peer, &parts.headers)
}

/// Which RCADIA scope an endpoint needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Play,
    Host,
    /// Any valid credential (reads that show a caller more of their own games).
    Any,
}

/// The authenticated RCADIA caller, with `scope` checked (users have both).
async fn rcadia_caller(
    state: &AppState,
    headers: &HeaderMap,
    scope: Scope,
) -> Result<std::sync::Arc<Identity>, ApiError> {
    let token = bearer(headers).ok_or_else(|| {
        ApiError::new(
            ApiCode::Unauthorized,
            "send Authorization: Bearer <agent token or session JWT>",
        )
    })?;
    let Some(id) = state.auth.identify(token).await.map_err(ApiError::from)? else {
        return Err(match state.auth.refusal(token).await? {
            horst_identity::auth::Refusal::Blocked => ApiError::new(
                ApiCode::Blocked,
                "this account is blocked by the server's operator: its session JWTs and sign-ins are refused until the operator lifts the block (signing in again will not help); ask the operator",
            ),
            horst_identity::auth::Refusal::Unknown => ApiError::new(
                ApiCode::Unauthorized,
                "unknown or expired credential; create a token with `horst admin token create` or sign in again",
            ),
        });
    };
    let (ok, need, what) = match scope {
        Scope::Play => (id.play, "play", "play sessions"),
        Scope::Host => (id.host, "host", "host sessions"),
        Scope::Any => (true, "", ""),
    };
    if !ok {
        return Err(ApiError::new(
            ApiCode::MissingScope,
            format!("this token may not {what}; use a token with the {need} scope (horst admin token create --scopes {need})"),
        ));
    }
    // No burst limit by default (agents and hosts long-poll all the time); an operator may set
    // one per token, counted in Redis like every burst limit, so it holds across API processes.
    if let Some(per_minute) = id.burst_per_minute {
        let limit = horst_limits::Limit::per_minute("rcadia_token", per_minute);
        ApiError::limited(state.agents.burst.check(&limit, &id.id).await, |s| {
            format!("this token may make {per_minute} requests a minute (the operator's limit); wait {s} s and try again")
        })?;
    }
    Ok(id)
}

/// An RCADIA caller with the `play` scope.
pub struct Player(pub std::sync::Arc<Identity>);

impl FromRequestParts<AppState> for Player {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        rcadia_caller(state, &parts.headers, Scope::Play)
            .await
            .map(Player)
    }
}

/// An optional RCADIA caller (any scope): `None` without an `Authorization` header; a
/// credential that is sent must be valid (401 otherwise, as everywhere).
pub struct Viewer(pub Option<std::sync::Arc<Identity>>);

impl FromRequestParts<AppState> for Viewer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if parts.headers.get(header::AUTHORIZATION).is_none() {
            return Ok(Viewer(None));
        }
        rcadia_caller(state, &parts.headers, Scope::Any)
            .await
            .map(|id| Viewer(Some(id)))
    }
}

/// An RCADIA caller with the `host` scope.
pub struct Host(pub std::sync::Arc<Identity>);

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
        match horst_identity::accounts::authenticate(&state.store, auth).await {
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

/// The body size limit of the routes under `path`, in words (the `DefaultBodyLimit` layers
/// of `routes/`; axum's default elsewhere).
fn body_limit_of(path: &str) -> &'static str {
    if path == "/api/v1/agent/sessions/seek" {
        "4 KiB (docs/agents-play.md)"
    } else if path.starts_with("/api/v1/agent/bridge/") {
        "1 MiB (docs/hosts.md)"
    } else if path.starts_with("/api/v1/agent/") {
        "16 KiB (docs/agents-play.md)"
    } else if path.starts_with("/api/account/") || path == "/api/agent-keys" {
        "16 KiB"
    } else {
        "2 MiB"
    }
}

/// A JSON body of type `T`. An empty body reads as `{}`; anything else that is not JSON of
/// the shape `T` is a 400 that says what was wrong. The size limit is axum's
/// `DefaultBodyLimit` (a larger body is a JSON 413).
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + Expected, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let code = malformed_code(req.uri().path());
        let limit = body_limit_of(req.uri().path());
        // A compressed body is refused, not parsed as if it were the JSON itself (a gzip body
        // was "not valid JSON", which did not say why). The gateway's routes answer 415 as
        // MCP and agent-keys do; RCADIA's vocabulary has `bad_request` for it.
        if let Some(coding) = crate::routes::mcp::compressed(req.headers()) {
            let message = crate::routes::mcp::compressed_message(&coding);
            let code = match code {
                ApiCode::BadRequest => code,
                _ => ApiCode::ContentType,
            };
            return Err(ApiError::new(code, message).accept_identity());
        }
        let too_large = || {
            ApiError::new(
                ApiCode::TooLarge,
                format!("the body is over this endpoint's size limit of {limit}; send less"),
            )
        };
        // A `Content-Length` over the route's limit is refused at once, before the body is
        // read (it was waited for until the body's deadline, then a 400): the limited body
        // allows at most the limit, the announced length is more.
        let announced = hyper::body::Body::size_hint(req.body()).lower();
        let req = axum::RequestExt::with_limited_body(req);
        if hyper::body::Body::size_hint(req.body())
            .upper()
            .is_some_and(|allowed| announced > allowed)
        {
            return Err(too_large());
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| {
                if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    too_large()
                } else {
                    ApiError::new(
                        code,
                        format!("the body could not be read: {}", e.body_text()),
                    )
                }
            })?;
        // A leading byte order mark is read as nothing (RFC 8259 8.1), as on /api/mcp: Windows
        // tools (PowerShell 5's `-InFile`, .NET's `Encoding.UTF8`) send one.
        let bytes = horst_gateway::protocol::without_bom(&bytes);
        let parsed = if bytes.iter().all(u8::is_ascii_whitespace) {
            serde_json::from_str("{}")
        } else {
            serde_json::from_slice(bytes)
        };
        parsed.map(Json).map_err(|e| {
            if let Some(said) = horst_gateway::protocol::unreadable(bytes, &e) {
                return ApiError::new(code, said);
            }
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
        match json_bytes(&self.0) {
            Ok(body) => (
                [(
                    header::CONTENT_TYPE,
                    axum::http::HeaderValue::from_static("application/json"),
                )],
                body,
            )
                .into_response(),
            Err(e) => {
                ApiError::internal(format!("the answer could not be written: {e}")).into_response()
            }
        }
    }
}

/// Answers above this size do not keep their buffer for the thread's next answer.
const SCRATCH_KEEP: usize = 64 * 1024;

thread_local! {
    /// The buffer answers are written into before they are copied out at their size.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `value` as JSON in one allocation of its exact size. axum's `Json` grows a buffer from 128
/// bytes by doubling, so a session's answer of a few KB paid five reallocations and their
/// copies; here it is written into this thread's kept buffer and copied out once.
pub(crate) fn json_bytes<T: serde::Serialize + ?Sized>(
    value: &T,
) -> serde_json::Result<axum::body::Bytes> {
    SCRATCH.with(|scratch| {
        // Never re-entered (serialising calls no handler), but a borrowed buffer must not
        // panic: write into a fresh one then.
        let Ok(mut buf) = scratch.try_borrow_mut() else {
            return serde_json::to_vec(value).map(axum::body::Bytes::from);
        };
        buf.clear();
        let written = serde_json::to_writer(&mut *buf, value);
        let out = written.map(|()| axum::body::Bytes::copy_from_slice(&buf));
        if buf.capacity() > SCRATCH_KEEP {
            *buf = Vec::new();
        }
        out
    })
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

/// The route's path parameters as `T`; one that does not decode (a percent-encoded byte
/// that is not UTF-8, say) is a 400 in the API's own shape, not axum's plain text.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let code = malformed_code(parts.uri.path());
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(p)| Path(p))
            .map_err(|e| {
                ApiError::new(
                    code,
                    format!(
                        "bad path ({}); each part of the path must be UTF-8 text, percent-encoded where needed, as the endpoint documents",
                        e.body_text()
                    ),
                )
            })
    }
}

/// A page's `offset` from a query string: at most 1,000,000,000 (the MCP tools' bound;
/// nothing holds more), else 400 (a larger one overflowed the page arithmetic).
pub(crate) fn page_offset(offset: Option<usize>) -> Result<usize, ApiError> {
    let offset = offset.unwrap_or(0);
    if offset as u64 > horst_gateway::args::MAX_OFFSET as u64 {
        return Err(ApiError::new(
            ApiCode::InvalidInput,
            format!(
                "offset must be at most {}; use nextOffset of the previous page",
                horst_gateway::args::MAX_OFFSET
            ),
        ));
    }
    Ok(offset)
}

/// A listing's page size from a query string, `limit`: `default` when absent, else 1 to `max`,
/// or a 400 that says the range. Out of range it was taken as the nearest bound (0 as 1),
/// which the admin CLI (`--limit`) and the leaderboard refuse.
pub(crate) fn page_limit(
    limit: Option<usize>,
    default: usize,
    max: usize,
) -> Result<usize, ApiError> {
    match limit {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ApiError::new(
            ApiCode::InvalidInput,
            format!(
                "limit {n} is out of range: a page holds 1 to {max} (default {default}); page on with offset (each page's nextOffset names the next)"
            ),
        )),
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
        h.insert(header::AUTHORIZATION, "BEARER abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Bearer\tabc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Bearerabc".parse().unwrap());
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
