//! `/admin`: the operator's page (`web/admin/`, English) and its sign-in. The page calls the
//! same `/api/admin/...` routes as the REST clients (`admin.rs`), with its session cookie and
//! CSRF token instead of a bearer token (`extract::Operator` takes either), so every action
//! goes through the same library call and lands in the same audit trail (`page:<name>`).
//!
//! Who may sign in: a person whose account has the operator role (name and password, with
//! the sign-in limits), or anyone with an active admin token (who gives a name for the audit
//! trail, which also records the token's id). An agent key is neither. The session has its
//! own cookie (`__Host-horst_admin` over TLS), apart from `/account`'s, and lives at most
//! 12 hours (1 hour unused); destructive actions need the credential given within the last
//! 5 minutes (`extract::Confirmed`; the page asks for it and calls `/api/admin/session/confirm`).

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::{Deserialize, Serialize};

use horst_identity::people;
use horst_identity::web_sessions::{self, Subject};

use horst_operator::SignInOutcome;

use super::account::{
    check_password, end_previous, record_sign_in, serve_page_file, set_admin_cookie,
    wait_for_sign_in_within,
};
use crate::extract::{admin_cookie, same_origin, ClientAddr, Expected, Json, PageOperator, Path};
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin", get(|| async { Redirect::permanent("/admin/") }))
        .route("/admin/", get(page))
        .route("/admin/{file}", get(file))
        .route("/api/admin/session", get(session).post(sign_in))
        .route("/api/admin/session/end", post(sign_out))
        .route("/api/admin/session/confirm", post(confirm))
}

async fn page(State(state): State<AppState>, req: axum::extract::Request) -> Response {
    serve_page_file(&state, "admin", "index.html", req).await
}

async fn file(
    State(state): State<AppState>,
    Path(name): Path<String>,
    req: axum::extract::Request,
) -> Response {
    serve_page_file(&state, "admin", &name, req).await
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionView {
    signed_in: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    who: Option<String>,
    /// `account` or `admin_token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    csrf: Option<String>,
}

fn via(subject: &Subject) -> &'static str {
    match subject {
        Subject::Account(_) | Subject::Operator(_) => "account",
        Subject::AdminToken { .. } => "admin_token",
    }
}

/// What the sign-in limits and the sign-in trail count admin-token guesses under (no
/// person's name can start with `~`).
const TOKEN_NAME: &str = "~admin-token";

/// Admin-token checks from one client (an address, an IPv6 /64) run one at a time in a
/// process, each from the sign-in limits' look to the record of its failure: guesses sent in
/// parallel each passed a look that none of them had counted yet (255 of 300 sent at once
/// from one address were checked, where 5 in a row are). A check is two Redis round trips
/// and no hashing, so one at a time costs an operator's script nothing it would notice.
///
/// One queue per client, not one for the process: with one, a flood of guesses from one
/// address queued every other client's token behind it, the operator's scripts included,
/// and past [`TOKEN_CHECK_QUEUE`] they were answered 503.
static TOKEN_CHECKS: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<tokio::sync::Semaphore>>>,
> = std::sync::LazyLock::new(Default::default);
/// How long a token check waits for its turn before it is answered 503.
const TOKEN_CHECK_QUEUE: std::time::Duration = std::time::Duration::from_secs(10);

/// The turn of one admin-token check of one client ([`TOKEN_CHECKS`]); its queue is
/// forgotten when nobody holds or waits for a turn in it.
struct TokenTurn {
    client: String,
    queue: std::sync::Arc<tokio::sync::Semaphore>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Drop for TokenTurn {
    fn drop(&mut self) {
        let mut all = TOKEN_CHECKS.lock().unwrap_or_else(|e| e.into_inner());
        self.permit.take();
        // The map's and this one: nobody else holds or waits (a waiter holds a clone).
        if std::sync::Arc::strong_count(&self.queue) == 2 {
            all.remove(&self.client);
        }
    }
}

/// The turn of one admin-token check from `address`; 503 with `Retry-After` when it does not
/// come within [`TOKEN_CHECK_QUEUE`].
async fn token_turn(address: std::net::IpAddr) -> Result<TokenTurn, ApiError> {
    let client = horst_identity::sign_in_limits::client_of(address);
    let queue = TOKEN_CHECKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(client.clone())
        .or_insert_with(|| std::sync::Arc::new(tokio::sync::Semaphore::new(1)))
        .clone();
    let mut turn = TokenTurn {
        client,
        queue,
        permit: None,
    };
    match tokio::time::timeout(TOKEN_CHECK_QUEUE, turn.queue.clone().acquire_owned()).await {
        Ok(Ok(permit)) => {
            turn.permit = Some(permit);
            Ok(turn)
        }
        _ => Err(ApiError::new(
            ApiCode::Unavailable,
            "too many admin tokens are being checked at once from your address; try again in a few seconds",
        )
        .retry_after(2)),
    }
}

/// The sign-in limits of admin tokens: only this client's failures hold it. All admin tokens
/// count under one name ([`TOKEN_NAME`]), so the counter of the name from every unknown client
/// let guessers elsewhere keep the operator out at any address the token never signed in
/// from (a new laptop, a changed address). Spreading guesses gains nothing against a token
/// of 192 random bits (a configured one has at least 32 characters).
fn per_client_only(state: &AppState) -> horst_identity::sign_in_limits::Free {
    horst_identity::sign_in_limits::Free {
        name: u32::MAX,
        ..horst_identity::sign_in_limits::Free::from_config(&state.config.gateway)
    }
}

/// Checks an admin token within the sign-in limits and records the outcome; its id if active.
async fn check_token(
    state: &AppState,
    address: std::net::IpAddr,
    token: &str,
) -> Result<String, ApiError> {
    let _turn = token_turn(address).await?;
    wait_for_sign_in_within(state, per_client_only(state), address, TOKEN_NAME).await?;
    let found = horst_identity::admin_tokens::check(&state.store, token.trim()).await?;
    let (target, outcome) = match &found {
        Some(id) => (id.as_str(), SignInOutcome::Ok),
        None => (TOKEN_NAME, SignInOutcome::Failed),
    };
    if let Some(id) = &found {
        // A right token clears the guesses counted from this address.
        horst_identity::sign_in_limits::record(&state.store, TOKEN_NAME, address, true).await?;
        horst_operator::record_sign_in(&state.store, id, address, "admin_token", outcome).await?;
    } else {
        record_sign_in(state, address, target, "admin_token", outcome).await?;
    }
    found.ok_or_else(|| {
        ApiError::new(
            ApiCode::InvalidCredentials,
            "this is not an active admin token",
        )
    })
}

/// Checks an admin token sent to the admin API as `Authorization: Bearer`, within this
/// client's sign-in limits for admin tokens (the page's, [`TOKEN_NAME`]); a wrong one counts
/// and is recorded (`via` `admin_api`). Its id if active.
pub(crate) async fn check_bearer(
    state: &AppState,
    address: std::net::IpAddr,
    token: &str,
) -> Result<Option<String>, ApiError> {
    // A program's address never becomes known either (a success is not recorded, so it
    // stays one round trip).
    let free = per_client_only(state);
    // A right token waits its turn too: else one among many parallel guesses would be let
    // through by a look that the others' failures had not reached yet.
    let _turn = token_turn(address).await?;
    // Both looks at once (one round trip): a guess that must wait is refused whatever it is.
    let (waited, found) = tokio::join!(
        wait_for_sign_in_within(state, free, address, TOKEN_NAME),
        horst_identity::admin_tokens::check(&state.store, token),
    );
    waited?;
    let found = found?;
    if found.is_none() {
        record_sign_in(
            state,
            address,
            TOKEN_NAME,
            "admin_api",
            SignInOutcome::Failed,
        )
        .await?;
    }
    Ok(found)
}

fn view(op: &PageOperator) -> SessionView {
    SessionView {
        signed_in: true,
        who: Some(op.who.clone()),
        via: Some(via(&op.session.subject)),
        csrf: Some(op.session.csrf.clone()),
    }
}

fn no_store(mut r: Response) -> Response {
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    r
}

/// Who is signed in on `/admin`; signed out (200) when nobody is or the session may not.
async fn session(op: Result<PageOperator, ApiError>) -> Response {
    let v = match op {
        Ok(op) => view(&op),
        Err(_) => SessionView {
            signed_in: false,
            who: None,
            via: None,
            csrf: None,
        },
    };
    no_store(Json(v).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SignInBody {
    name: Option<String>,
    password: Option<String>,
    token: Option<String>,
    /// With a token: the name the audit trail shows.
    operator_name: Option<String>,
}

impl Expected for SignInBody {
    const EXPECTED: &'static str = "{\"name\": \"...\", \"password\": \"...\"} (an operator's account) or {\"token\": \"<admin token>\", \"operatorName\": \"<your name>\"}";
}

async fn sign_in(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    Json(body): Json<SignInBody>,
) -> Result<Response, ApiError> {
    same_origin(&headers)?;
    let (subject, who, generation) = match (body.token, body.name, body.password) {
        (Some(token), None, None) => {
            let operator_name =
                horst_text::clean_line(body.operator_name.as_deref().unwrap_or_default());
            let valid_name = operator_name.chars().count() <= 40
                && operator_name
                    .chars()
                    .all(|c| c.is_alphanumeric() || " ._-".contains(c));
            if operator_name.is_empty() || !valid_name {
                return Err(ApiError::new(
                    ApiCode::InvalidInput,
                    "give your name for the audit trail: 1-40 letters, digits, spaces, '.', '_' or '-'",
                ));
            }
            // Guessing tokens costs attempts like guessing passwords.
            let token_id = check_token(&state, address, &token).await?;
            let who = format!("page:{operator_name}@{token_id}");
            (
                Subject::AdminToken {
                    token_id,
                    operator_name,
                },
                who,
                None,
            )
        }
        (None, Some(name), Some(password)) => {
            let (person, generation) =
                check_password(&state, address, &name, &password, "admin").await?;
            if !person.operator {
                return Err(ApiError::new(
                    ApiCode::Forbidden,
                    "this account is not an operator; an operator gives the role with `horst admin account operator NAME on`",
                ));
            }
            let who = format!("page:{}", person.name);
            (Subject::Operator(person.name), who, Some(generation))
        }
        _ => {
            return Err(ApiError::new(
                ApiCode::InvalidInput,
                format!("send {}", SignInBody::EXPECTED),
            ))
        }
    };
    end_previous(&state, admin_cookie(&state, &headers)).await?;
    // A person's session belongs to the generation their password was checked in.
    let new = match generation {
        Some(generation) => {
            people::open_session(&state.store, &state.auth, subject.clone(), generation).await?
        }
        None => web_sessions::create(&state.store, subject.clone()).await?,
    };
    tracing::info!(who = %who, "operator signed in on /admin");
    let v = SessionView {
        signed_in: true,
        who: Some(who),
        via: Some(via(&subject)),
        csrf: Some(new.csrf),
    };
    let mut r = (StatusCode::OK, Json(v)).into_response();
    set_admin_cookie(&state, &headers, &mut r, Some(&new.id));
    Ok(no_store(r))
}

async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    op: PageOperator,
) -> Result<Response, ApiError> {
    web_sessions::end(&state.store, &op.session).await?;
    let mut r = Json(serde_json::json!({ "signedIn": false })).into_response();
    set_admin_cookie(&state, &headers, &mut r, None);
    Ok(r)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmBody {
    password: Option<String>,
    token: Option<String>,
}

impl Expected for ConfirmBody {
    const EXPECTED: &'static str = "{\"password\": \"...\"} (an operator's account) or {\"token\": \"<the admin token you signed in with>\"}";
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Confirmation {
    confirmed: bool,
    /// How long destructive actions are allowed from now, in seconds.
    valid_seconds: u64,
}

/// Re-authentication for destructive actions: the session's person gives their password
/// again, an admin-token session its token; within the sign-in limits, and recorded in the
/// sign-in trail (`reauthenticated`). The browser gets a new session id (the CSRF token
/// stays) and the old id ends, so a copy of the cookie does not share the confirmation.
async fn confirm(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    op: PageOperator,
    Json(body): Json<ConfirmBody>,
) -> Result<Response, ApiError> {
    let generation = match (&op.session.subject, body.password, body.token) {
        (Subject::Operator(name), Some(password), None) => {
            let (person, generation) =
                check_password(&state, address, name, &password, "admin").await?;
            if person.name != *name {
                return Err(ApiError::new(
                    ApiCode::InvalidCredentials,
                    "wrong name or password",
                ));
            }
            Some(generation)
        }
        (Subject::AdminToken { token_id, .. }, None, Some(token)) => {
            if check_token(&state, address, &token).await? != *token_id {
                return Err(ApiError::new(
                    ApiCode::InvalidCredentials,
                    "this is not the admin token this session signed in with",
                ));
            }
            None
        }
        _ => {
            return Err(ApiError::new(
                ApiCode::InvalidInput,
                format!("send {}", ConfirmBody::EXPECTED),
            ))
        }
    };
    let target = op.who.strip_prefix("page:").unwrap_or(&op.who);
    horst_operator::record_sign_in(
        &state.store,
        target,
        address,
        via(&op.session.subject),
        SignInOutcome::Confirmed,
    )
    .await?;
    // Last: an error after it would leave the browser with the old id, ended.
    let new = super::account::renew_session(&state, &op.session, generation).await?;
    let mut r = Json(Confirmation {
        confirmed: true,
        valid_seconds: web_sessions::REAUTH_WINDOW.as_secs(),
    })
    .into_response();
    set_admin_cookie(&state, &headers, &mut r, Some(&new.id));
    Ok(no_store(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn queued(client: &str) -> bool {
        TOKEN_CHECKS.lock().unwrap().contains_key(client)
    }

    /// A client whose check holds its turn queues only its own next check: with one queue
    /// for the process, a flood of guesses from one address made the operator's token wait
    /// behind it (and answered it 503 past the queue's limit).
    #[tokio::test]
    async fn a_client_checking_tokens_makes_only_itself_wait() {
        let guesser: std::net::IpAddr = "192.0.2.31".parse().unwrap();
        let operator: std::net::IpAddr = "2001:db8:31::1".parse().unwrap();
        let held = token_turn(guesser).await.unwrap();
        // The operator's turn comes at once (its first poll: nothing to wait for).
        let turn = tokio::time::timeout(Duration::from_secs(5), token_turn(operator))
            .await
            .expect("the operator's check waited for another client's")
            .unwrap();
        // The guesser's next check waits for its own first.
        assert!(
            tokio::time::timeout(Duration::from_millis(50), token_turn(guesser))
                .await
                .is_err()
        );
        let clients = [guesser, operator].map(horst_identity::sign_in_limits::client_of);
        assert!(clients.iter().all(|c| queued(c)), "{clients:?}");
        drop(turn);
        drop(held);
        // Nothing is kept for a client once its checks are done.
        assert!(!clients.iter().any(|c| queued(c)), "{clients:?}");
    }
}
