//! `/account`: people's game accounts. The page (`web/account/`, German) and its API under
//! `/api/account/...`: sign-up (when the operator opened it), sign-in and sign-out with a
//! session cookie (and sign-out everywhere: every session and JWT of the person), the
//! password change, and the Agent-Schlüssel card (create a key, shown once; list; revoke;
//! at most 5 active), the account's trust tier and today's remaining quotas.
//!
//! The session cookie is `HttpOnly`, `SameSite=Strict`, `Secure` when served over TLS
//! (`sessions.public_url` is https, or a proxy says `X-Forwarded-Proto: https`). Sign-in
//! always makes a new session id and ends the one the request came with. Every
//! state-changing request is checked for its origin and its session's CSRF token
//! (`extract::SignedIn`); sign-in and sign-up, which have no session yet, for their origin.

use std::path::PathBuf;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::{Deserialize, Serialize};

use horst_identity::auth::CredentialGeneration;
use horst_identity::people::{self, Person, SignIn};
use horst_identity::web_sessions::{self, Subject};

use crate::extract::{
    over_tls, same_origin, session_cookie, ClientAddr, Expected, Json, Path, SignedIn,
};
use crate::{ApiCode, ApiError, AppState};

/// Bodies of these forms are small; anything bigger is not a form of ours.
const FORM_BODY_LIMIT: usize = 16 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/account",
            get(|| async { Redirect::permanent("/account/") }),
        )
        .route("/account/", get(page))
        // The contract's link to the key card.
        .route("/account/maps.html", get(page))
        .route("/account/{file}", get(file))
        .route("/api/account/session", get(session))
        .route("/api/account/sign-up", post(sign_up))
        .route("/api/account/sign-in", post(sign_in))
        .route("/api/account/sign-out", post(sign_out))
        .route(
            "/api/account/sign-out-everywhere",
            post(sign_out_everywhere),
        )
        .route("/api/account/password", post(change_password))
        .route("/api/account/keys", get(list_keys).post(create_key))
        .route("/api/account/keys/{prefix}/revoke", post(revoke_key))
        .route("/api/account/quotas", get(quotas))
        .layer(DefaultBodyLimit::max(FORM_BODY_LIMIT))
}

/// What pages of people and operators are sent with: nothing but our own files may run, no
/// other site may frame them, and they are revalidated on every load.
pub(crate) fn page_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

pub(crate) async fn serve_page_file(
    state: &AppState,
    dir: &str,
    name: &str,
    req: axum::extract::Request,
) -> Response {
    let ok = !name.starts_with('.')
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let rel = ok.then(|| PathBuf::from(dir).join(name));
    page_headers(super::web_files::send(state, rel, false, req).await)
}

async fn page(State(state): State<AppState>, req: axum::extract::Request) -> Response {
    serve_page_file(&state, "account", "index.html", req).await
}

async fn file(
    State(state): State<AppState>,
    Path(name): Path<String>,
    req: axum::extract::Request,
) -> Response {
    serve_page_file(&state, "account", &name, req).await
}

/// Sets a new `/account` session id on `r`, or (`None`) removes the cookie
/// (`__Host-horst_session` over TLS: no other host or path can set or shadow it).
pub(crate) fn set_cookie(
    state: &AppState,
    headers: &HeaderMap,
    r: &mut Response,
    id: Option<&str>,
) {
    cookie(
        state,
        headers,
        r,
        (web_sessions::COOKIE, web_sessions::COOKIE_TLS),
        id,
        web_sessions::ABSOLUTE,
    )
}

/// Sets a new `/admin` session id on `r`, or (`None`) removes the cookie: its own cookie
/// (`__Host-horst_admin` over TLS), living as long as an admin session may.
pub(crate) fn set_admin_cookie(
    state: &AppState,
    headers: &HeaderMap,
    r: &mut Response,
    id: Option<&str>,
) {
    cookie(
        state,
        headers,
        r,
        (web_sessions::ADMIN_COOKIE, web_sessions::ADMIN_COOKIE_TLS),
        id,
        web_sessions::ADMIN_ABSOLUTE,
    )
}

/// The cookie `names` (over plain HTTP, over TLS) name, with `Secure` over TLS. Over TLS the
/// plain name is expired too: one planted there is never read, and should not linger.
fn cookie(
    state: &AppState,
    headers: &HeaderMap,
    r: &mut Response,
    names: (&str, &str),
    id: Option<&str>,
    life: std::time::Duration,
) {
    let tls = over_tls(state, headers);
    let name = if tls { names.1 } else { names.0 };
    let secure = if tls { "; Secure" } else { "" };
    let value = match id {
        Some(id) => format!(
            "{name}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
            life.as_secs()
        ),
        None => format!("{name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    let h = r.headers_mut();
    // Ids are hex, so this always parses.
    if let Ok(v) = HeaderValue::from_str(&value) {
        h.append(header::SET_COOKIE, v);
    }
    if tls {
        let plain = format!("{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0", names.0);
        if let Ok(v) = HeaderValue::from_str(&plain) {
            h.append(header::SET_COOKIE, v);
        }
    }
}

/// Ends the session the request came with, if any: a sign-in never keeps an id the browser
/// already had (session fixation).
pub(crate) async fn end_previous(state: &AppState, cookie: Option<&str>) -> Result<(), ApiError> {
    if let Some(id) = cookie {
        if let Some(old) = web_sessions::load(&state.store, id).await? {
            web_sessions::end(&state.store, &old).await?;
        }
    }
    Ok(())
}

/// Gives a session whose credential was just given again (checked in `generation`; `None`
/// for an admin token's) a new id with the same CSRF token, and ends the old id
/// (`horst_identity::people::renew_session`): a copy of the old cookie does not share the
/// confirmation. 401 when the session ended meanwhile. The caller sets the new cookie.
pub(crate) async fn renew_session(
    state: &AppState,
    old: &web_sessions::WebSession,
    generation: Option<CredentialGeneration>,
) -> Result<web_sessions::NewSession, ApiError> {
    people::renew_session(&state.store, &state.auth, old, generation)
        .await?
        .ok_or_else(|| {
            ApiError::new(
                ApiCode::Unauthorized,
                "your session ended meanwhile (signed out, or the password changed); sign in again",
            )
        })
}

/// Counts a sign-up attempt (each costs a password hash) against the per-address burst
/// limit (`horst-limits`, counted in Redis for every API process).
pub(crate) async fn limit_sign_up(
    state: &AppState,
    address: std::net::IpAddr,
) -> Result<(), ApiError> {
    use horst_limits::{BurstError, Limit};
    let g = &state.config.gateway;
    let per_address = Limit::per_minute("sign_in_address", g.sign_in_per_ip_per_minute);
    match state
        .agents
        .burst
        // An IPv6 client is its /64 (one subscriber's prefix), as for the sign-in limits:
        // counted by the whole address, one subscriber could sign up from 2^64 of them.
        .check(
            &per_address,
            &horst_identity::sign_in_limits::client_of(address),
        )
        .await
    {
        Ok(()) => Ok(()),
        Err(BurstError::Limited(l)) => {
            let s = l.retry_after_seconds();
            Err(ApiError::burst(
                s,
                format!("too many sign-up attempts from your address; wait {s} s and try again"),
            ))
        }
        Err(BurstError::Store(e)) => {
            tracing::warn!(error = %e, "cannot count a sign-up attempt");
            Err(ApiError::new(
                ApiCode::Unavailable,
                "sign-up is unavailable for a moment; try again shortly",
            ))
        }
    }
}

/// Refuses a sign-in that must wait (`horst_identity::sign_in_limits`): 429 with
/// `Retry-After`, saying why.
pub(crate) async fn wait_for_sign_in(
    state: &AppState,
    address: std::net::IpAddr,
    name: &str,
) -> Result<(), ApiError> {
    let free = horst_identity::sign_in_limits::Free::from_config(&state.config.gateway);
    wait_for_sign_in_within(state, free, address, name).await
}

/// [`wait_for_sign_in`] with `free` failures of each counter.
pub(crate) async fn wait_for_sign_in_within(
    state: &AppState,
    free: horst_identity::sign_in_limits::Free,
    address: std::net::IpAddr,
    name: &str,
) -> Result<(), ApiError> {
    use horst_identity::sign_in_limits::{self, Holder};
    let Some(wait) = sign_in_limits::check(&state.store, free, name, address).await? else {
        return Ok(());
    };
    let s = wait.retry_after_seconds();
    let why = match wait.holder {
        Holder::Pair => "too many failed sign-ins for this name from your address",
        Holder::Client => "too many failed sign-ins from your address",
        Holder::Name => {
            "too many failed sign-ins for this name from addresses it never signed in from"
        }
    };
    Err(ApiError::burst(
        s,
        format!("{why}; wait {s} s and try again"),
    ))
}

/// Records a checked credential: the sign-in limits count a failure (never a success) and
/// the sign-in trail gets an entry with the address. `via`: `account`, `admin`,
/// `admin_token` (the page), `admin_api` (a bearer token on the admin API), `rcadia`,
/// `password_change`, `key_create`.
pub(crate) async fn record_sign_in(
    state: &AppState,
    address: std::net::IpAddr,
    name: &str,
    via: &str,
    outcome: horst_operator::SignInOutcome,
) -> Result<(), ApiError> {
    record_sign_in_as(state, address, name, name, via, outcome).await
}

/// [`record_sign_in`] counted under `counted` and shown in the trail and the log as `shown`.
async fn record_sign_in_as(
    state: &AppState,
    address: std::net::IpAddr,
    counted: &str,
    shown: &str,
    via: &str,
    outcome: horst_operator::SignInOutcome,
) -> Result<(), ApiError> {
    use horst_operator::SignInOutcome;
    let failed = outcome == SignInOutcome::Failed;
    horst_identity::sign_in_limits::record(&state.store, counted, address, !failed).await?;
    horst_operator::record_sign_in(&state.store, shown, address, via, outcome).await?;
    if failed {
        tracing::info!(%address, name = shown, via, "sign-in failed");
    } else {
        tracing::info!(%address, name = shown, via, outcome = outcome.as_str(), "sign-in");
    }
    Ok(())
}

/// An account as the page shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AccountView {
    /// What the person signs in with.
    name: String,
    /// What the page greets them by, when they chose one (`None`: the page uses `name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<String>,
    trust: u8,
    operator: bool,
    created_at: String,
}

impl From<&Person> for AccountView {
    fn from(p: &Person) -> Self {
        AccountView {
            name: p.name.clone(),
            display_name: p.display_name.clone(),
            trust: p.trust,
            operator: p.operator,
            created_at: horst_identity::rfc3339(p.created_at_ms),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionView {
    signed_in: bool,
    sign_up_open: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<AccountView>,
    /// What the page sends back in `X-CSRF-Token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    csrf: Option<String>,
    /// After a password change: the agent keys it revoked and those that still work.
    #[serde(skip_serializing_if = "Option::is_none")]
    keys: Option<KeysAfterChange>,
    /// A password change took effect but this device could not be signed in again: sign in
    /// with the new password.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    password_changed: bool,
}

/// What a password change did to the account's agent keys. A key is an agent's credential,
/// not a sign-in: the change ends every session and JWT but revokes keys only when asked
/// (`revokeKeys`), and says which still work, so a person who changes the password because
/// someone else had it (or their session, which can make keys) sees what that someone may
/// still hold.
#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct KeysAfterChange {
    /// Prefixes of the keys the change revoked.
    revoked: Vec<String>,
    /// The keys that still work, newest first; absent when they could not be read after the
    /// change (the page then points to the key list).
    #[serde(skip_serializing_if = "Option::is_none")]
    remaining: Option<Vec<horst_identity::accounts::KeyInfo>>,
}

/// The page's first call: who is signed in (if anyone) and whether sign-up is open. A
/// session that is gone or blocked reads as signed out.
async fn session(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let sign_up_open = people::sign_up_open(&state.store, &state.config).await?;
    let mut view = SessionView {
        signed_in: false,
        sign_up_open,
        account: None,
        csrf: None,
        keys: None,
        password_changed: false,
    };
    if let Some(id) = session_cookie(&state, &headers) {
        if let Some(s) = web_sessions::load(&state.store, id).await? {
            if let Subject::Account(name) = &s.subject {
                if let Some(p) = people::load(&state.store, name).await? {
                    if !p.blocked {
                        view.signed_in = true;
                        view.account = Some(AccountView::from(&p));
                        view.csrf = Some(s.csrf.clone());
                    }
                }
            }
        }
    }
    Ok(no_store(Json(view).into_response()))
}

/// Answers that carry a CSRF token or a key are never cached.
fn no_store(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    name: String,
    password: String,
}

impl Expected for Credentials {
    const EXPECTED: &'static str = "{\"name\": \"...\", \"password\": \"...\"}";
}

/// Starts a session for `person` and answers with its cookie and CSRF token (and, after a
/// password change, what it did to the keys).
async fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
    person: &Person,
    generation: CredentialGeneration,
    status: StatusCode,
    keys: Option<KeysAfterChange>,
) -> Result<Response, ApiError> {
    end_previous(state, session_cookie(state, headers)).await?;
    let subject = Subject::Account(person.name.clone());
    let new = people::open_session(&state.store, &state.auth, subject, generation).await?;
    let view = SessionView {
        signed_in: true,
        sign_up_open: people::sign_up_open(&state.store, &state.config).await?,
        account: Some(AccountView::from(person)),
        csrf: Some(new.csrf),
        keys,
        password_changed: false,
    };
    let mut r = (status, Json(view)).into_response();
    set_cookie(state, headers, &mut r, Some(&new.id));
    Ok(no_store(r))
}

async fn sign_up(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    Json(body): Json<Credentials>,
) -> Result<Response, ApiError> {
    same_origin(&headers)?;
    if !people::sign_up_open(&state.store, &state.config).await? {
        return Err(ApiError::new(
            ApiCode::SignUpClosed,
            "sign-up is closed; the operator creates accounts",
        ));
    }
    limit_sign_up(&state, address).await?;
    let name = people::canonical(&body.name);
    {
        let _hash = password_work().await?;
        people::sign_up(
            &state.store,
            &state.auth,
            &name,
            &body.password,
            address,
            people::SignUpCaps::from_config(&state.config.gateway),
        )
        .await?;
    }
    tracing::info!(account = %name, "a person signed up");
    signed_in_as_stored(&state, &headers, &name, StatusCode::CREATED, None).await
}

/// [`signed_in`] as the person `name` is stored now, in their current credential generation
/// (after a sign-up, or the one a password change moved to).
async fn signed_in_as_stored(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
    status: StatusCode,
    keys: Option<KeysAfterChange>,
) -> Result<Response, ApiError> {
    let person = people::load(&state.store, name)
        .await?
        .ok_or_else(|| ApiError::internal("the account is not readable"))?;
    let generation = state.auth.generation(name).await?;
    signed_in(state, headers, &person, generation, status, keys).await
}

/// Password hashes and checks one API process's requests wait for at once (sign-up and the
/// password change hash within it too), answered 503 past [`PASSWORD_CHECK_QUEUE`]. Argon2's
/// memory (19 MiB a run) is bounded where it runs, in `horst_identity::people`, which also
/// holds for a request whose client left. A check also sits between the sign-in limits'
/// look and the record of its failure: guesses sent in parallel each passed a look that none
/// of them had counted yet (hundreds a wait, one per connection). The look is made once a
/// check may run, so at most this many guesses of one process are ever in that window.
const PASSWORD_CHECKS_AT_ONCE: usize = 4;
static PASSWORD_CHECKS: tokio::sync::Semaphore =
    tokio::sync::Semaphore::const_new(PASSWORD_CHECKS_AT_ONCE);
/// How long a request waits for a free check before it is answered 503.
const PASSWORD_CHECK_QUEUE: std::time::Duration = std::time::Duration::from_secs(10);

/// A turn for Argon2 work (a password hash or check), held while it runs; 503 with
/// `Retry-After` when none frees up within [`PASSWORD_CHECK_QUEUE`].
async fn password_work() -> Result<tokio::sync::SemaphorePermit<'static>, ApiError> {
    match tokio::time::timeout(PASSWORD_CHECK_QUEUE, PASSWORD_CHECKS.acquire()).await {
        Ok(Ok(permit)) => Ok(permit),
        _ => Err(ApiError::new(
            ApiCode::Unavailable,
            "too many passwords are being checked at once; try again in a few seconds",
        )
        .retry_after(2)),
    }
}

/// The name a sign-in with a name no account can have is counted and recorded under.
const INVALID_NAME: &str = "(not a valid name)";
/// What the sign-in trail and the log show for a name no account has.
const UNKNOWN_NAME: &str = "(unknown name)";

/// Checks a person's password within the sign-in limits and records the outcome (for
/// `/account`, `/admin` and the RCADIA sign-in alike; `via` names which).
pub(crate) async fn check_password(
    state: &AppState,
    address: std::net::IpAddr,
    name: &str,
    password: &str,
    via: &str,
) -> Result<(Person, CredentialGeneration), ApiError> {
    use horst_operator::SignInOutcome;
    let canonical = people::canonical(name);
    // Refused before anything is looked up, recorded or logged.
    if canonical.len() > people::SIGN_IN_NAME_MAX_BYTES {
        return Err(ApiError::new(
            ApiCode::InvalidCredentials,
            "wrong name or password",
        ));
    }
    let _check = password_work().await?;
    // What no account can be called is counted under one placeholder (the counters' keys
    // carry only a hash of a name anyway).
    let counted = if horst_identity::accounts::valid_account_name(&canonical) {
        canonical.as_str()
    } else {
        INVALID_NAME
    };
    wait_for_sign_in(state, address, counted).await?;
    let found = people::sign_in(&state.store, &state.auth, name, password).await?;
    if let SignIn::Ok(p, _) = &found {
        limit_sign_ins(state, &p.name).await?;
    }
    // A name no account has is often a password typed into the name field: the trail and
    // the log show it only when the account exists.
    let (outcome, shown) = match &found {
        SignIn::Ok(p, _) => (SignInOutcome::Ok, p.name.as_str()),
        SignIn::Wrong => (SignInOutcome::Failed, canonical.as_str()),
        SignIn::Unknown if counted == INVALID_NAME => (SignInOutcome::Failed, INVALID_NAME),
        SignIn::Unknown => (SignInOutcome::Failed, UNKNOWN_NAME),
        SignIn::Blocked => (SignInOutcome::Blocked, canonical.as_str()),
    };
    record_sign_in_as(state, address, counted, shown, via, outcome).await?;
    match found {
        SignIn::Ok(p, generation) => Ok((p, generation)),
        SignIn::Wrong | SignIn::Unknown => Err(ApiError::new(
            ApiCode::InvalidCredentials,
            "wrong name or password",
        )),
        SignIn::Blocked => Err(ApiError::new(
            ApiCode::Blocked,
            "this account is blocked; ask the operator",
        )),
    }
}

/// Right passwords of one account checked in any hour
/// (`gateway.sign_ins_per_account_per_hour`: every page, the RCADIA sign-in and the password
/// change together). Each success makes state: a browser session (12 hours)
/// or a JWT, whose sign-out is a revocation record for 7 days and moves every process's
/// identity cache on; without a bound, a script with one account and its password grew
/// Redis at the rate the password checks allow. Only successes count, so nobody without
/// the password can spend an account's hour.
/// Counts a right password of `name`; 429 with `Retry-After` past the hour's bound (the
/// sign-in opens nothing and is not recorded).
async fn limit_sign_ins(state: &AppState, name: &str) -> Result<(), ApiError> {
    use horst_limits::Limit;
    let max = state.config.gateway.sign_ins_per_account_per_hour;
    let per_hour = Limit {
        name: "sign_in_account",
        max,
        window: std::time::Duration::from_secs(3600),
    };
    ApiError::limited(state.agents.burst.check(&per_hour, name).await, |s| {
        tracing::warn!(account = %name, "sign-ins of this account limited");
        format!("this account signed in {max} times within an hour; wait {s} s and sign in again (a signed-in page or JWT needs no new sign-in)")
    })
}

async fn sign_in(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    Json(body): Json<Credentials>,
) -> Result<Response, ApiError> {
    same_origin(&headers)?;
    let (person, generation) =
        check_password(&state, address, &body.name, &body.password, "account").await?;
    signed_in(&state, &headers, &person, generation, StatusCode::OK, None).await
}

async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    me: SignedIn,
) -> Result<Response, ApiError> {
    web_sessions::end(&state.store, &me.session).await?;
    let mut r = Json(SignedOut { signed_in: false }).into_response();
    set_cookie(&state, &headers, &mut r, None);
    Ok(r)
}

/// The answer to [`sign_out`]: this browser is signed out.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignedOut {
    signed_in: bool,
}

/// The answer to [`sign_out_everywhere`]: signed out here too, and the agent keys that stay.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignedOutEverywhere {
    signed_in: bool,
    everywhere: bool,
    active_keys: usize,
}

/// Ends every session and JWT of the signed-in person, this one too (a browser left signed
/// in elsewhere, a bridge tab, a JWT on another machine), without changing the password:
/// ASVS 3.3.4. Agent keys stay (the answer says so): they are revoked on the key card, or
/// with a password change that asks for it. Each call moves the person's credential
/// generation and every process's identity cache, as a password change does; it needs a
/// session, and sessions come only from sign-ins, which are bounded per account and hour.
async fn sign_out_everywhere(
    State(state): State<AppState>,
    headers: HeaderMap,
    me: SignedIn,
) -> Result<Response, ApiError> {
    let name = me.person.name.clone();
    people::end_sessions(&state.store, &state.auth, &name).await?;
    let keys = horst_identity::accounts::list_keys(&state.store, Some(&name), false, 0, usize::MAX)
        .await?
        .total;
    tracing::info!(account = %name, "signed out everywhere on /account");
    let mut r = Json(SignedOutEverywhere {
        signed_in: false,
        everywhere: true,
        active_keys: keys,
    })
    .into_response();
    set_cookie(&state, &headers, &mut r, None);
    Ok(r)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Keys {
    items: Vec<horst_identity::accounts::KeyInfo>,
    max_active: usize,
    /// The longest label a new key may have: the page's field takes no more.
    max_label_chars: usize,
}

async fn list_keys(State(state): State<AppState>, me: SignedIn) -> Result<Json<Keys>, ApiError> {
    let page =
        horst_identity::accounts::list_keys(&state.store, Some(&me.person.name), false, 0, 100)
            .await?;
    Ok(Json(Keys {
        items: page.items,
        max_active: horst_identity::accounts::MAX_ACTIVE_KEYS,
        max_label_chars: horst_identity::accounts::MAX_LABEL_CHARS,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewKey {
    label: Option<String>,
    /// The person's password, when the session's was given too long ago (`reauthenticate`).
    password: Option<String>,
}

impl Expected for NewKey {
    const EXPECTED: &'static str = "{\"label\": \"<up to 40 characters, optional>\", \"password\": \"<yours; only when asked with reauthenticate>\"}";
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PasswordChange {
    current: String,
    password: String,
    /// Revoke every agent key of the account too, in the same step.
    #[serde(default)]
    revoke_keys: bool,
}

impl Expected for PasswordChange {
    const EXPECTED: &'static str =
        "{\"current\": \"...\", \"password\": \"...\", \"revokeKeys\": false}";
}

/// A person changes their password on `/account`: the current one is asked for (within the
/// sign-in limits and recorded in the sign-in trail, so a taken-over session cannot guess
/// it), then every session and JWT of theirs ends, and this device gets a new session.
/// Agent keys are revoked too when the body says `"revokeKeys": true`, in the same step as
/// the password and the sessions (`people::change_password`: no other session makes a key
/// meanwhile, and no failure leaves the password changed and the keys working); the
/// answer's `keys` names those revoked and those that still work. Keys are not revoked
/// unasked: agents keep running through a routine change, and a key made by someone else is
/// told apart only by the person.
async fn change_password(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    me: SignedIn,
    Json(body): Json<PasswordChange>,
) -> Result<Response, ApiError> {
    let name = me.person.name.clone();
    people::check_password(&name, &body.password)?;
    check_password(&state, address, &name, &body.current, "password_change").await?;
    // One step: the password, the end of every session and JWT, and the keys when asked. An
    // error here changed nothing; after it, the change stands whatever else fails, and the
    // answer says so.
    let changed = {
        let _hash = password_work().await?;
        people::change_password(
            &state.store,
            &state.auth,
            &name,
            &body.password,
            body.revoke_keys,
        )
        .await?
    };
    let revoked = changed.keys_revoked;
    let remaining =
        horst_identity::accounts::list_keys(&state.store, Some(&name), false, 0, usize::MAX)
            .await
            .map(|page| page.items);
    if let Err(e) = &remaining {
        tracing::warn!(account = %name, error = %e, "cannot list the keys left after a password change");
    }
    let remaining = remaining.ok();
    tracing::info!(
        account = %name,
        keys_revoked = revoked.len(),
        keys_remaining = remaining.as_ref().map(Vec::len),
        "password changed on /account; the other sessions ended"
    );
    let keys = KeysAfterChange { revoked, remaining };
    // This device's new session belongs to the generation the change moved to.
    let again =
        signed_in_as_stored(&state, &headers, &name, StatusCode::OK, Some(keys.clone())).await;
    match again {
        Ok(r) => Ok(r),
        Err(e) => Ok(changed_but_signed_out(&state, &headers, &name, e, keys)),
    }
}

/// The answer to a password change that took effect (every session ended, the keys
/// revoked when asked) when this device could not be signed in again (the store went away
/// meanwhile): 200, signed out, with what the change did, so the page says the password
/// changed and asks for a sign-in with the new one. An error here would say the change
/// failed, and a retry with the old password would then be refused as wrong.
fn changed_but_signed_out(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
    error: ApiError,
    keys: KeysAfterChange,
) -> Response {
    tracing::warn!(account = %name, code = error.code(), "the password changed, but this device could not be signed in again");
    let view = SessionView {
        signed_in: false,
        sign_up_open: false,
        account: None,
        csrf: None,
        keys: Some(keys),
        password_changed: true,
    };
    let mut r = Json(view).into_response();
    set_cookie(state, headers, &mut r, None);
    no_store(r)
}

/// Keys a person may make on `/account` in any 24 hours. A revoked key's record is kept (it
/// is listed with `--revoked`), so without a bound one signed-in person making and revoking
/// keys in a loop grew Redis by about 270 records a second, until a full Redis refused every
/// write of the service. Four times the active keys: room to replace each a few times a day.
const KEYS_PER_DAY: u32 = 20;

/// A person makes an agent key on `/account`. A key outlives the session and a password
/// change, so a session whose password was given more than [`web_sessions::REAUTH_WINDOW`]
/// ago (a browser left signed in, a stolen cookie) must give it again: in the body, checked
/// within the sign-in limits and recorded in the sign-in trail (`key_create`), after which
/// the browser gets a new session id, fresh again (as an `/admin` confirmation does; a copy
/// of the old cookie ends), set on the answer whatever it is.
async fn create_key(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    me: SignedIn,
    Json(body): Json<NewKey>,
) -> Response {
    let mut renewed = None;
    let mut r = make_key(&state, address, &me, body, &mut renewed)
        .await
        .unwrap_or_else(IntoResponse::into_response);
    if let Some(new) = renewed {
        set_cookie(&state, &headers, &mut r, Some(&new.id));
    }
    r
}

/// [`create_key`] but for the cookie: `renewed` gets the new session once the password was
/// given again.
async fn make_key(
    state: &AppState,
    address: std::net::IpAddr,
    me: &SignedIn,
    body: NewKey,
    renewed: &mut Option<web_sessions::NewSession>,
) -> Result<Response, ApiError> {
    use horst_limits::Limit;
    if !me.session.recently_authenticated() {
        let Some(password) = body.password.as_deref() else {
            return Err(ApiError::new(
                ApiCode::Reauthenticate,
                format!(
                    "making an agent key needs your password again: it was last given more than {} minutes ago; send it as \"password\" in this request's body",
                    web_sessions::REAUTH_WINDOW.as_secs() / 60
                ),
            ));
        };
        let (person, generation) =
            check_password(state, address, &me.person.name, password, "key_create").await?;
        if person.name != me.person.name {
            return Err(ApiError::new(
                ApiCode::InvalidCredentials,
                "wrong name or password",
            ));
        }
        *renewed = Some(renew_session(state, &me.session, Some(generation)).await?);
    }
    let per_day = Limit {
        name: "account_key_create",
        max: KEYS_PER_DAY,
        window: std::time::Duration::from_secs(24 * 3600),
    };
    ApiError::limited(
        state.agents.burst.check(&per_day, &me.person.name).await,
        |s| {
            format!("an account may make {KEYS_PER_DAY} agent keys on this page in 24 hours; wait {s} s, or ask the operator for one")
        },
    )?;
    let created =
        horst_identity::accounts::create_key(&state.store, &me.person.name, body.label.as_deref())
            .await?;
    tracing::info!(account = %me.person.name, prefix = %created.prefix, "agent key created on /account");
    Ok(no_store(
        (StatusCode::CREATED, Json(created)).into_response(),
    ))
}

async fn revoke_key(
    State(state): State<AppState>,
    me: SignedIn,
    Path(prefix): Path<String>,
) -> Result<Json<Revoked>, ApiError> {
    horst_identity::accounts::revoke_own_key(&state.store, &me.person.name, &prefix).await?;
    tracing::info!(account = %me.person.name, prefix = %prefix, "agent key revoked on /account");
    Ok(Json(Revoked { revoked: prefix }))
}

/// The answer to [`revoke_key`]: the revoked key's prefix.
#[derive(Serialize)]
struct Revoked {
    revoked: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Quotas {
    trust: u8,
    /// Left today (UTC).
    remaining: horst_queue::Remaining,
    /// Today's limits of this trust tier.
    limits: horst_queue::Remaining,
    labor_candidates: u32,
}

async fn quotas(State(state): State<AppState>, me: SignedIn) -> Result<Json<Quotas>, ApiError> {
    use horst_queue::JobKind;
    let trust = me.person.trust;
    let remaining = state.queue.remaining(&me.person.name, trust).await?;
    let q = state.queue.quotas().await?;
    let limits = horst_queue::Remaining {
        submissions: q.kind_limit(trust, JobKind::Submit),
        playtests: q.kind_limit(trust, JobKind::Playtest),
        simulations: q.kind_limit(trust, JobKind::Simulate),
        seconds: if trust == 0 {
            q.trust0_cap_seconds()
        } else {
            q.daily_seconds
        },
    };
    Ok(Json(Quotas {
        trust,
        remaining,
        limits,
        labor_candidates: q.quotas.tier(trust).labor_candidates,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_body_names_the_label_limit_identity_checks() {
        let limit = format!(
            "up to {} characters",
            horst_identity::accounts::MAX_LABEL_CHARS
        );
        assert!(NewKey::EXPECTED.contains(&limit), "{}", NewKey::EXPECTED);
    }
}
