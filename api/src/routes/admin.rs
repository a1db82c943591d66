//! `/api/admin/...`: the operator's REST API over `horst_gateway::operator` (the same
//! actions as `horst admin ...`). It needs `Authorization: Bearer <gateway.admin_token>`;
//! with no token configured it does not exist (404). Errors are the REST shape
//! `{ error, code }` with the status of their code (`crate::error::tool_status`); a stale
//! promotion expectation is 409.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use horst_gateway::{checks, operator, ToolError};

use crate::extract::{Expected, Json, Operator, Query};
use crate::{ApiCode, ApiError, AppState};

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

type Answer = Result<Json<Value>, ApiError>;

/// What an action without a value of its own answers.
fn ok(result: Result<(), ToolError>) -> Answer {
    result?;
    Ok(Json(json!({ "ok": true })))
}

fn value(result: Result<Value, ToolError>) -> Answer {
    Ok(Json(result?))
}

fn items(result: Result<Vec<Value>, ToolError>) -> Answer {
    Ok(Json(json!({ "items": result? })))
}

async fn overview(State(state): State<AppState>, _: Operator) -> Answer {
    value(operator::overview(&state.store).await)
}

#[derive(Deserialize)]
struct Limit {
    limit: Option<usize>,
    all: Option<bool>,
}

impl Expected for Limit {
    const EXPECTED: &'static str = "`limit` (a count, at most 10000) and, for messages, `all=true`";
}

impl Limit {
    fn limit(&self) -> usize {
        self.limit.unwrap_or(100).min(10_000)
    }
}

async fn audit(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    items(operator::audit_log(&state.store, q.limit()).await)
}

async fn messages(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    let unread_only = !q.all.unwrap_or(false);
    items(horst_gateway::contact::list_messages(&state.store, unread_only, q.limit()).await)
}

async fn mark_read(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    ok(operator::mark_read(&state.store, &op, &id).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Promote {
    /// The revision the operator believes is promoted now; null for none.
    expect: Option<String>,
}

impl Expected for Promote {
    const EXPECTED: &'static str =
        "{\"expect\": \"<the revision promoted now, or null for none>\"}";
}

async fn promote(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
    Json(body): Json<Promote>,
) -> Answer {
    value(operator::promote(&state.store, &op, &id, body.expect.as_deref()).await)
}

async fn quarantine(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    ok(operator::quarantine(&state.store, &op, &id).await)
}

async fn rollback(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(name): Path<String>,
) -> Answer {
    value(operator::rollback(&state.store, &op, &name).await)
}

async fn block(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(name): Path<String>,
) -> Answer {
    ok(operator::set_blocked(&state.store, &op, &name, true).await)
}

async fn unblock(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(name): Path<String>,
) -> Answer {
    ok(operator::set_blocked(&state.store, &op, &name, false).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Trust {
    trust: u8,
}

impl Expected for Trust {
    const EXPECTED: &'static str = "{\"trust\": 0, 1 or 2}";
}

async fn trust(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(name): Path<String>,
    Json(body): Json<Trust>,
) -> Answer {
    ok(operator::set_trust(&state.store, &op, &name, body.trust).await)
}

async fn threads(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    items(horst_gateway::board::operator_threads(&state.store, q.limit()).await)
}

async fn thread(State(state): State<AppState>, _: Operator, Path(id): Path<String>) -> Answer {
    value(horst_gateway::board::operator_thread(&state.store, &id).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Status {
    status: String,
}

impl Expected for Status {
    const EXPECTED: &'static str = "{\"status\": \"<open, planned, done or declined>\"}";
}

async fn status(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
    Json(body): Json<Status>,
) -> Answer {
    ok(operator::thread_status(&state.store, &op, &id, &body.status).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    body: String,
}

impl Expected for Reply {
    const EXPECTED: &'static str = "{\"body\": \"<the reply text>\"}";
}

async fn reply(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
    Json(body): Json<Reply>,
) -> Answer {
    value(operator::reply(&state.store, &op, &id, &body.body).await)
}

async fn hide(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    ok(operator::hide_post(&state.store, &op, &id, true).await)
}

async fn unhide(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    ok(operator::hide_post(&state.store, &op, &id, false).await)
}

#[derive(Deserialize)]
struct Wait {
    /// `false`: answer with the job id at once (the check is recorded when it finishes).
    wait: Option<bool>,
}

impl Expected for Wait {
    const EXPECTED: &'static str = "at most `wait=false` (answer with the job id at once)";
}

/// Queues a recheck of the revision's stored replay on the current engine; by default waits
/// for it (at most the queue's wait limit) and answers with the recorded check.
async fn recheck(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
    Query(q): Query<Wait>,
) -> Answer {
    let job = checks::start_recheck(&state.store, &state.queue, &op, &id).await?;
    if q.wait == Some(false) {
        return Ok(Json(
            json!({ "revisionId": id, "jobId": job, "state": "queued" }),
        ));
    }
    let limit = std::time::Duration::from_secs(
        state.config.queue.wait_seconds + state.config.queue.simulate_seconds,
    );
    let (rec, check) = checks::wait_recheck(&state.store, &state.queue, &id, &job, limit).await?;
    Ok(Json(json!({
        "revisionId": id, "jobId": job, "state": rec.state.as_str(),
        "failure": rec.failure, "check": check,
    })))
}

async fn list_checks(State(state): State<AppState>, _: Operator, Path(id): Path<String>) -> Answer {
    value(checks::checks(&state.store, &id).await)
}

async fn quotas(State(state): State<AppState>, _: Operator) -> Answer {
    let own = state.queue.configured_quotas();
    value(operator::show_quotas(&state.store, Some(&own)).await)
}

/// Re-reads the configuration file this process started with (and the environment) and
/// stores its quota numbers; every API process applies them within a second.
async fn reload_quotas(State(state): State<AppState>, Operator(op): Operator) -> Answer {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let config = horst_config::Config::load(
        state.config.file.as_deref(),
        &env,
        &horst_config::Flags::default(),
    )
    .map_err(|e| {
        ApiError::new(
            ApiCode::InvalidConfig,
            format!("{e}; fix the file and reload again (the quotas in force are unchanged)"),
        )
    })?;
    let values = horst_queue::Quotas::from_config(&config);
    let result = operator::reload_quotas(&state.store, &op, &values).await;
    // This process applies them at once; the others within a second.
    state.queue.forget_quotas();
    value(result)
}

async fn publish(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    ok(operator::publish_thread(&state.store, &op, &id, true).await)
}

async fn unpublish(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    ok(operator::publish_thread(&state.store, &op, &id, false).await)
}
