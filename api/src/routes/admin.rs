//! `/api/admin/...`: the operator's REST API over `horst_gateway::operator` (the same
//! actions as `horst admin ...`). It needs `Authorization: Bearer <gateway.admin_token>`;
//! with no token configured it does not exist (404). Errors are the REST shape
//! `{ error, code }`; a stale promotion expectation is 409.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use horst_gateway::{checks, operator, ToolError};

use crate::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/admin/overview", get(overview))
        .route("/api/admin/audit", get(audit))
        .route("/api/admin/messages", get(messages))
        .route("/api/admin/messages/{id}/read", post(mark_read))
        .route("/api/admin/revisions/{id}/promote", post(promote))
        .route("/api/admin/revisions/{id}/quarantine", post(quarantine))
        .route("/api/admin/revisions/{id}/recheck", post(recheck))
        .route("/api/admin/revisions/{id}/checks", get(list_checks))
        .route("/api/admin/quotas", get(quotas))
        .route("/api/admin/quotas/reload", post(reload_quotas))
        .route("/api/admin/threads/{id}/publish", post(publish))
        .route("/api/admin/threads/{id}/unpublish", post(unpublish))
        .route("/api/admin/levels/{name}/rollback", post(rollback))
        .route("/api/admin/accounts/{name}/block", post(block))
        .route("/api/admin/accounts/{name}/unblock", post(unblock))
        .route("/api/admin/accounts/{name}/trust", post(trust))
        .route("/api/admin/threads", get(threads))
        .route("/api/admin/threads/{id}", get(thread))
        .route("/api/admin/threads/{id}/status", post(status))
        .route("/api/admin/threads/{id}/reply", post(reply))
        .route("/api/admin/posts/{id}/hide", post(hide))
        .route("/api/admin/posts/{id}/unhide", post(unhide))
}

/// The operator as the audit trail names them: `api:<X-Operator>` or `api`.
struct Operator(String);

/// Why a request did not get in.
enum Refused {
    /// No token configured: the API does not exist.
    Off,
    Unauthorized,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::Off => ApiError::client(
                StatusCode::NOT_FOUND,
                "not_found",
                "the admin API is off; set gateway.admin_token (HORST_GATEWAY_ADMIN_TOKEN) to use it",
            )
            .into_response(),
            Refused::Unauthorized => {
                let mut r = ApiError::client(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "send Authorization: Bearer <the operator token> (gateway.admin_token)",
                )
                .into_response();
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                r
            }
        }
    }
}

/// Checks the operator token. Its SHA-256 is compared in constant time so the comparison
/// does not leak how much of a guess was right.
fn authorize(state: &AppState, headers: &HeaderMap) -> Result<Operator, Refused> {
    let token = &state.config.gateway.admin_token;
    if token.is_empty() {
        return Err(Refused::Off);
    }
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !horst_gateway::accounts::secret_matches(given.trim(), token) {
        return Err(Refused::Unauthorized);
    }
    let name = headers
        .get("x-operator")
        .and_then(|v| v.to_str().ok())
        .map(horst_gateway::text::clean_line)
        .filter(|n| !n.is_empty() && n.chars().count() <= 40);
    Ok(Operator(match name {
        Some(n) => format!("api:{n}"),
        None => "api".into(),
    }))
}

fn failure(e: ToolError) -> Response {
    let status = match e.code {
        "invalid_input" => StatusCode::BAD_REQUEST,
        "not_found" => StatusCode::NOT_FOUND,
        "conflict" | "engine_mismatch" | "check_failed" => StatusCode::CONFLICT,
        "busy" => StatusCode::SERVICE_UNAVAILABLE,
        "forbidden" => StatusCode::FORBIDDEN,
        "internal_error" => return ApiError::internal("operator action failed").into_response(),
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::client(status, e.code, e.message).into_response()
}

/// A body that is not the expected JSON: the REST error shape, after authorization so that
/// strangers learn nothing about the API.
fn bad_body(e: JsonRejection) -> Response {
    ApiError::client(
        StatusCode::BAD_REQUEST,
        "invalid_input",
        format!("the body must be JSON of the documented shape (see docs/operators.md): {e}"),
    )
    .into_response()
}

fn answer(result: Result<Value, ToolError>) -> Response {
    match result {
        Ok(v) => Json(v).into_response(),
        Err(e) => failure(e),
    }
}

fn done(result: Result<(), ToolError>) -> Response {
    answer(result.map(|_| json!({ "ok": true })))
}

macro_rules! authorized {
    ($state:expr, $headers:expr) => {
        match authorize(&$state, &$headers) {
            Ok(op) => op,
            Err(r) => return r.into_response(),
        }
    };
}

async fn overview(State(state): State<AppState>, headers: HeaderMap) -> Response {
    authorized!(state, headers);
    answer(operator::overview(&state.store).await)
}

#[derive(Deserialize)]
struct Limit {
    limit: Option<usize>,
    all: Option<bool>,
}

async fn audit(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<Limit>,
) -> Response {
    authorized!(state, headers);
    let limit = q.limit.unwrap_or(100).min(10_000);
    answer(
        operator::audit_log(&state.store, limit)
            .await
            .map(|v| json!({ "items": v })),
    )
}

async fn messages(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<Limit>,
) -> Response {
    authorized!(state, headers);
    let limit = q.limit.unwrap_or(100).min(10_000);
    answer(
        horst_gateway::contact::list_messages(&state.store, !q.all.unwrap_or(false), limit)
            .await
            .map(|v| json!({ "items": v })),
    )
}

async fn mark_read(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::mark_read(&state.store, &op.0, &id).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Promote {
    /// The revision the operator believes is promoted now; null for none.
    expect: Option<String>,
}

async fn promote(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<Promote>, JsonRejection>,
) -> Response {
    let op = authorized!(state, headers);
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return bad_body(e),
    };
    answer(operator::promote(&state.store, &op.0, &id, body.expect.as_deref()).await)
}

async fn quarantine(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::quarantine(&state.store, &op.0, &id).await)
}

async fn rollback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    answer(operator::rollback(&state.store, &op.0, &name).await)
}

async fn block(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::set_blocked(&state.store, &op.0, &name, true).await)
}

async fn unblock(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::set_blocked(&state.store, &op.0, &name, false).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Trust {
    trust: u8,
}

async fn trust(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Result<Json<Trust>, JsonRejection>,
) -> Response {
    let op = authorized!(state, headers);
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return bad_body(e),
    };
    done(operator::set_trust(&state.store, &op.0, &name, body.trust).await)
}

async fn threads(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<Limit>,
) -> Response {
    authorized!(state, headers);
    let limit = q.limit.unwrap_or(100).min(10_000);
    answer(
        horst_gateway::board::operator_threads(&state.store, limit)
            .await
            .map(|v| json!({ "items": v })),
    )
}

async fn thread(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    authorized!(state, headers);
    answer(horst_gateway::board::operator_thread(&state.store, &id).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Status {
    status: String,
}

async fn status(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<Status>, JsonRejection>,
) -> Response {
    let op = authorized!(state, headers);
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return bad_body(e),
    };
    done(operator::thread_status(&state.store, &op.0, &id, &body.status).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    body: String,
}

async fn reply(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Json<Reply>, JsonRejection>,
) -> Response {
    let op = authorized!(state, headers);
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return bad_body(e),
    };
    answer(operator::reply(&state.store, &op.0, &id, &body.body).await)
}

async fn hide(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::hide_post(&state.store, &op.0, &id, true).await)
}

async fn unhide(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::hide_post(&state.store, &op.0, &id, false).await)
}

#[derive(Deserialize)]
struct Wait {
    /// `false`: answer with the job id at once (the check is recorded when it finishes).
    wait: Option<bool>,
}

/// Queues a recheck of the revision's stored replay on the current engine; by default waits
/// for it (at most the queue's wait limit) and answers with the recorded check.
async fn recheck(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<Wait>,
) -> Response {
    let op = authorized!(state, headers);
    let job = match checks::start_recheck(&state.store, &state.queue, &op.0, &id).await {
        Ok(j) => j,
        Err(e) => return failure(e),
    };
    if q.wait == Some(false) {
        return Json(json!({ "revisionId": id, "jobId": job, "state": "queued" })).into_response();
    }
    let limit = std::time::Duration::from_secs(
        state.config.queue.wait_seconds + state.config.queue.simulate_seconds,
    );
    answer(
        checks::wait_recheck(&state.store, &state.queue, &id, &job, limit)
            .await
            .map(|(rec, check)| {
                json!({
                    "revisionId": id, "jobId": job, "state": rec.state.as_str(),
                    "failure": rec.failure, "check": check,
                })
            }),
    )
}

async fn list_checks(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    authorized!(state, headers);
    answer(checks::checks(&state.store, &id).await)
}

async fn quotas(State(state): State<AppState>, headers: HeaderMap) -> Response {
    authorized!(state, headers);
    let own = state.queue.configured_quotas();
    answer(operator::show_quotas(&state.store, Some(&own)).await)
}

/// Re-reads the configuration file this process started with (and the environment) and
/// stores its quota numbers; every API process applies them within a second.
async fn reload_quotas(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let op = authorized!(state, headers);
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let config = match horst_config::Config::load(
        state.config.file.as_deref(),
        &env,
        &horst_config::Flags::default(),
    ) {
        Ok(c) => c,
        Err(e) => {
            return ApiError::client(
                StatusCode::BAD_REQUEST,
                "invalid_config",
                format!("{e}; fix the file and reload again (the quotas in force are unchanged)"),
            )
            .into_response()
        }
    };
    let values = horst_queue::Quotas::from_config(&config);
    let result = operator::reload_quotas(&state.store, &op.0, &values).await;
    // This process applies them at once; the others within a second.
    state.queue.forget_quotas();
    answer(result)
}

async fn publish(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::publish_thread(&state.store, &op.0, &id, true).await)
}

async fn unpublish(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let op = authorized!(state, headers);
    done(operator::publish_thread(&state.store, &op.0, &id, false).await)
}
