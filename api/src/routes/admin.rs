//! `/api/admin/...`: the operator's REST API over `horst_operator` (the same
//! actions as `horst admin ...`). It needs `Authorization: Bearer <an active admin token>`
//! (with no active admin token the bearer API does not exist: 404), or the `/admin` page's
//! session cookie with its CSRF token (`extract::Operator`); destructive actions (quarantine,
//! rollback, block, roles, credentials, the gateway switch, ending a table, cancelling a job in
//! `routes/admin_jobs.rs`) take `extract::Confirmed`, which
//! asks a page session for its credential again after 5 minutes; so does opening sign-up or
//! self-service keys (`extract::MaybeConfirmed`), which hands an account to anyone who asks. Errors are the REST shape
//! `{ error, code }` with the status of their code (`crate::error::tool_status`); a stale
//! promotion expectation is 409.

use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use horst_gateway::{checks, public_levels, ToolError};
use horst_operator as operator;

use crate::extract::{Confirmed, Expected, Json, MaybeConfirmed, Operator, Path, Query};
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/admin/overview", get(overview))
        .route("/api/admin/audit", get(audit))
        .route("/api/admin/sign-ins", get(sign_ins))
        .route("/api/admin/tables/{id}/end", post(end_table))
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
        .route("/api/admin/revisions", get(revisions))
        .route("/api/admin/switches", get(switches))
        .route("/api/admin/switches/gateway", post(set_gateway))
        .route("/api/admin/switches/self-service", post(set_self_service))
        .route("/api/admin/switches/sign-up", post(set_sign_up))
        .route("/api/admin/accounts", get(accounts).post(create_account))
        .route("/api/admin/accounts/{name}/operator", post(operator_role))
        .route("/api/admin/accounts/{name}/keys", post(create_key))
        .route("/api/admin/keys", get(keys))
        .route("/api/admin/keys/{prefix}/revoke", post(revoke_key))
        .route("/api/admin/tokens", get(tokens).post(create_token))
        .route("/api/admin/tokens/{agent}/revoke", post(revoke_token))
        .route("/api/admin/users", post(create_user))
        .route("/api/admin/users/{name}/password", post(user_password))
        .route("/api/admin/users/{name}/delete", post(delete_user))
        .route(
            "/api/admin/admin-tokens",
            get(admin_tokens).post(create_admin_token),
        )
        .route(
            "/api/admin/admin-tokens/{id}/retire",
            post(retire_admin_token),
        )
}

pub(super) type Answer = Result<Json<Value>, ApiError>;

/// An account's or person's name from the path, checked before anything is looked up: a
/// name no account can have (`olga:keys`) is a 404 here, never a read of another record.
fn account_named(name: String) -> Result<String, ApiError> {
    if horst_identity::accounts::valid_account_name(&name) {
        return Ok(name);
    }
    Err(ApiError::new(
        ApiCode::NotFound,
        "no such account: names are 2-32 lowercase letters, digits, _ or -; GET /api/admin/accounts lists them",
    ))
}

/// A level's name from the path (as [`account_named`]).
fn level_named(name: String) -> Result<String, ApiError> {
    if horst_gateway::args::valid_name(&name) {
        return Ok(name);
    }
    Err(ApiError::new(
        ApiCode::NotFound,
        "no such level: names are letters, digits and -; GET /api/admin/revisions lists them",
    ))
}

/// An id from the path (a revision, thread, post, message, table, key prefix, agent or
/// admin token; as [`account_named`]).
pub(super) fn record_id(id: String) -> Result<String, ApiError> {
    if horst_gateway::args::valid_id(&id) {
        return Ok(id);
    }
    Err(ApiError::new(
        ApiCode::NotFound,
        "nothing has this id: ids are 1-64 ASCII letters, digits, dots, underscores or hyphens; the listings of /api/admin give them",
    ))
}

/// What an action without a value of its own answers.
fn ok(result: Result<(), ToolError>) -> Answer {
    result?;
    answer(Done { ok: true })
}

/// A typed answer as JSON. Through a `Value`, whose keys are sorted, so the bytes stay what
/// they were when these answers were written with `json!`.
pub(super) fn answer<T: Serialize>(v: T) -> Answer {
    serde_json::to_value(v)
        .map(Json)
        .map_err(|e| ApiError::internal(format!("answer: {e}")))
}

fn value<T: Serialize>(result: Result<T, ToolError>) -> Answer {
    answer(result?)
}

fn items<T: Serialize>(result: Result<Vec<T>, ToolError>) -> Answer {
    answer(Items { items: result? })
}

// The answers of this API that are not a library type.

/// A page of the inbox, with how many messages are unread in all.
#[derive(Serialize)]
struct Messages {
    items: Vec<serde_json::Value>,
    unread: u64,
}

#[derive(Serialize)]
struct Done {
    ok: bool,
}

#[derive(Serialize)]
struct Items<T> {
    items: Vec<T>,
}

/// A page of a listing.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Page<T> {
    items: Vec<T>,
    total: usize,
    next_offset: Option<usize>,
}

/// A recheck queued without waiting (`state: queued`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecheckQueued {
    revision_id: String,
    job_id: String,
    state: &'static str,
}

#[derive(Serialize)]
struct KeyRevoked {
    revoked: String,
    account: String,
}

#[derive(Serialize)]
struct TokenCreated {
    token: String,
    agent: String,
}

#[derive(Serialize)]
struct TokenRevoked {
    revoked: horst_identity::auth::TokenInfo,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AdminTokenCreated {
    token: String,
    admin_token: horst_identity::admin_tokens::AdminTokenInfo,
}

#[derive(Serialize)]
struct AdminTokenRetired {
    retired: horst_identity::admin_tokens::AdminTokenInfo,
}

async fn overview(State(state): State<AppState>, _: Operator) -> Answer {
    value(operator::overview(&state.store, &state.queue).await)
}

#[derive(Deserialize)]
struct Limit {
    limit: Option<usize>,
    offset: Option<usize>,
    all: Option<bool>,
    /// For the audit trail: the `total` of an earlier page, so `offset` counts from there.
    of: Option<u64>,
}

impl Expected for Limit {
    const EXPECTED: &'static str =
        "`limit` (a count, 1-10000), `offset`, for the audit trail `of` (the `total` of an earlier page) and, for messages, `all=true`";
}

impl Limit {
    fn limit(&self) -> Result<usize, ApiError> {
        crate::extract::page_limit(self.limit, 100, 10_000)
    }
}

async fn audit(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    answer(operator::audit_page(&state.store, clamped(q.offset), q.limit()?, q.of).await?)
}

/// The sign-in trail: every checked password or admin token, with the client's address.
async fn sign_ins(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    let entries = operator::sign_ins(&state.store, clamped(q.offset), q.limit()?).await?;
    items(Ok(entries))
}

async fn messages(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    let unread_only = !q.all.unwrap_or(false);
    let offset = clamped(q.offset);
    let items =
        horst_gateway::contact::list_messages(&state.store, unread_only, offset, q.limit()?)
            .await?;
    let unread = horst_gateway::contact::unread_count(&state.store).await?;
    answer(Messages { items, unread })
}

async fn mark_read(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    let id = record_id(id)?;
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
    let id = record_id(id)?;
    value(operator::promote(&state.store, &op, &id, body.expect.as_deref()).await)
}

async fn quarantine(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(id): Path<String>,
) -> Answer {
    let id = record_id(id)?;
    ok(operator::quarantine(&state.store, &op, &id).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndTableBody {
    reason: String,
}

impl Expected for EndTableBody {
    const EXPECTED: &'static str =
        "{\"reason\": \"why (the players and spectators are shown it)\"}";
}

/// Ends a live RCADIA table (destructive: a page session confirms its credential).
async fn end_table(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(id): Path<String>,
    Json(body): Json<EndTableBody>,
) -> Answer {
    let id = record_id(id)?;
    value(operator::end_table(&state.rcadia, &op, &id, &body.reason).await)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RollbackBody {
    #[serde(default)]
    expect: operator::RollbackExpect,
}

impl Expected for RollbackBody {
    const EXPECTED: &'static str = "{\"expect\": {\"from\": \"<the revision promoted now>\", \"to\": \"<the revision that comes back>\"}} (each optional; an empty body rolls back whatever is there)";
}

async fn rollback(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(name): Path<String>,
    Json(body): Json<RollbackBody>,
) -> Answer {
    let name = level_named(name)?;
    value(operator::rollback(&state.store, &op, &name, &body.expect).await)
}

async fn block(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(name): Path<String>,
) -> Answer {
    let name = account_named(name)?;
    // Its work waiting and running now ends with it (docs/operators.md, "Accounts").
    let jobs_cancelled =
        operator::block_account(&state.store, &state.auth, &state.queue, &op, &name).await?;
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Blocked {
        ok: bool,
        jobs_cancelled: Vec<String>,
    }
    answer(Blocked {
        ok: true,
        jobs_cancelled,
    })
}

async fn unblock(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(name): Path<String>,
) -> Answer {
    let name = account_named(name)?;
    ok(operator::set_blocked(&state.store, &state.auth, &op, &name, false).await)
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
    let name = account_named(name)?;
    ok(operator::set_trust(&state.store, &op, &name, body.trust).await)
}

async fn threads(State(state): State<AppState>, _: Operator, Query(q): Query<Limit>) -> Answer {
    let offset = clamped(q.offset);
    items(horst_gateway::board::operator_threads(&state.store, offset, q.limit()?).await)
}

async fn thread(State(state): State<AppState>, _: Operator, Path(id): Path<String>) -> Answer {
    let id = record_id(id)?;
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
    let id = record_id(id)?;
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
    let id = record_id(id)?;
    value(operator::reply(&state.store, &op, &id, &body.body).await)
}

async fn hide(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    let id = record_id(id)?;
    ok(operator::hide_post(&state.store, &op, &id, true).await)
}

async fn unhide(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    let id = record_id(id)?;
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
    let id = record_id(id)?;
    if q.wait == Some(false) {
        let job = operator::start_recheck(&state.store, &state.queue, &op, &id).await?;
        return answer(RecheckQueued {
            revision_id: id,
            job_id: job,
            state: "queued",
        });
    }
    let limit = operator::recheck_limit(&state.config);
    value(operator::recheck_and_wait(&state.store, &state.queue, &op, &id, limit).await)
}

async fn list_checks(State(state): State<AppState>, _: Operator, Path(id): Path<String>) -> Answer {
    let id = record_id(id)?;
    value(checks::checks(&state.store, &id).await)
}

async fn quotas(State(state): State<AppState>, _: Operator) -> Answer {
    let own = state.queue.configured_quotas();
    value(operator::show_quotas(&state.store, Some(&own)).await)
}

/// Re-reads the configuration file this process started with (and the environment) and
/// stores its quota numbers; every API process applies them within a second.
async fn reload_quotas(State(state): State<AppState>, Operator(op): Operator) -> Answer {
    if state.config.file.is_none() {
        return Err(ApiError::new(
            ApiCode::InvalidConfig,
            "this API process was started without a configuration file, so there is nothing to reload from; start it with --config FILE, or run `horst admin quotas reload --config FILE` (the quotas in force are unchanged)",
        ));
    }
    let env = horst_config::Config::environment().map_err(|e| {
        ApiError::new(
            ApiCode::InvalidConfig,
            format!("{e} (the quotas in force are unchanged)"),
        )
    })?;
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
    let id = record_id(id)?;
    ok(operator::publish_thread(&state.store, &op, &id, true).await)
}

async fn unpublish(
    State(state): State<AppState>,
    Operator(op): Operator,
    Path(id): Path<String>,
) -> Answer {
    let id = record_id(id)?;
    ok(operator::publish_thread(&state.store, &op, &id, false).await)
}

/// Paging of the listings: `offset` and `limit` (1-1000, default 50; out of range a 400).
#[derive(Deserialize)]
struct Paging {
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Paging {
    fn offset(&self) -> usize {
        clamped(self.offset)
    }
    fn limit(&self) -> Result<usize, ApiError> {
        crate::extract::page_limit(self.limit, 50, 1000)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RevisionQuery {
    name: Option<String>,
    state: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Expected for RevisionQuery {
    const EXPECTED: &'static str = "`name` (a level), `state` (labor, promoted, retired, withdrawn or quarantined), `offset`, `limit`";
}

async fn revisions(
    State(state): State<AppState>,
    _: Operator,
    Query(q): Query<RevisionQuery>,
) -> Answer {
    let filter = operator::RevisionFilter {
        name: q.name.filter(|n| !n.is_empty()),
        state: q.state.filter(|s| !s.is_empty()),
    };
    let paging = Paging {
        offset: q.offset,
        limit: q.limit,
    };
    let page = operator::revisions(&state.store, &filter, paging.offset(), paging.limit()?).await?;
    let mut items = Vec::with_capacity(page.items.len());
    for row in page.items {
        let promoted = row.level_promoted.as_deref() == Some(row.revision_id.as_str());
        let extras =
            public_levels::operator_extras(&state.store, &row.revision_id, &row.name, promoted)
                .await?;
        items.push(RevisionRowWithTitle { row, extras });
    }
    answer(RevisionPageWithTitles {
        current_engine: page.current_engine,
        items,
        next_offset: page.next_offset,
        total: page.total,
    })
}

/// A row of the operator's levels table with its map's title and what a rollback brings
/// back (the admin page names both).
#[derive(Serialize)]
struct RevisionRowWithTitle {
    #[serde(flatten)]
    row: operator::RevisionRow,
    #[serde(flatten)]
    extras: public_levels::OperatorExtras,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RevisionPageWithTitles {
    current_engine: &'static str,
    items: Vec<RevisionRowWithTitle>,
    next_offset: Option<usize>,
    total: usize,
}

async fn switches(
    State(state): State<AppState>,
    _: Operator,
) -> Result<Json<operator::Switches>, ApiError> {
    Ok(Json(operator::switches(&state.store, &state.config).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GatewaySwitch {
    mode: String,
}

impl Expected for GatewaySwitch {
    const EXPECTED: &'static str = "{\"mode\": \"on\", \"off\" or \"read_only\"}";
}

async fn set_gateway(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Json(body): Json<GatewaySwitch>,
) -> Answer {
    use horst_config::GatewayMode;
    let mode = match body.mode.as_str() {
        "on" => GatewayMode::On,
        "off" => GatewayMode::Off,
        "read_only" | "read-only" => GatewayMode::ReadOnly,
        other => {
            return Err(ApiError::new(
                ApiCode::InvalidInput,
                format!(
                    "unknown gateway mode {other:?}; send {}",
                    GatewaySwitch::EXPECTED
                ),
            ))
        }
    };
    ok(operator::set_gateway_mode(&state.store, &op, mode).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OnOff {
    on: bool,
}

impl Expected for OnOff {
    const EXPECTED: &'static str = "{\"on\": true or false}";
}

async fn set_self_service(
    State(state): State<AppState>,
    op: MaybeConfirmed,
    Json(body): Json<OnOff>,
) -> Answer {
    // Opening hands a credential to anyone who asks; closing (stopping abuse) stays at hand.
    let op = if body.on { op.confirmed()? } else { op.who };
    ok(operator::set_self_service(&state.store, &op, body.on).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Open {
    open: bool,
}

impl Expected for Open {
    const EXPECTED: &'static str = "{\"open\": true or false}";
}

async fn set_sign_up(
    State(state): State<AppState>,
    op: MaybeConfirmed,
    Json(body): Json<Open>,
) -> Answer {
    // Opening hands a credential to anyone who asks; closing (stopping abuse) stays at hand.
    let op = if body.open { op.confirmed()? } else { op.who };
    ok(operator::set_sign_up(&state.store, &op, body.open).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountQuery {
    q: Option<String>,
    kind: Option<String>,
    trust: Option<u8>,
    blocked: Option<bool>,
    operator: Option<bool>,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Expected for AccountQuery {
    const EXPECTED: &'static str = "`q` (part of a name), `kind` (agent or human), `trust` (0-2), `blocked` and `operator` (true or false), `offset`, `limit`";
}

async fn accounts(
    State(state): State<AppState>,
    _: Operator,
    Query(q): Query<AccountQuery>,
) -> Answer {
    // A kind or trust no account has listed nothing (200, total 0), which read as "no such
    // accounts" after a typo (`kind=agents`, `trust=3`).
    if let Some(kind) = q.kind.as_deref().filter(|k| !k.is_empty()) {
        if !matches!(kind, "agent" | "human") {
            return Err(ApiError::new(
                ApiCode::InvalidInput,
                format!(
                    "unknown kind {:?}; use agent or human",
                    horst_gateway::text::clip(kind, 64)
                ),
            ));
        }
    }
    if let Some(trust) = q.trust.filter(|t| *t > 2) {
        return Err(ApiError::new(
            ApiCode::InvalidInput,
            format!("trust {trust} does not exist; use 0, 1 or 2"),
        ));
    }
    let filter = horst_identity::accounts::AccountFilter {
        q: q.q.filter(|s| !s.trim().is_empty()),
        kind: q.kind.filter(|s| !s.is_empty()),
        trust: q.trust,
        blocked: q.blocked,
        operator: q.operator,
    };
    let paging = Paging {
        offset: q.offset,
        limit: q.limit,
    };
    let page = horst_identity::accounts::list_accounts(
        &state.store,
        &filter,
        paging.offset(),
        paging.limit()?,
    )
    .await?;
    Ok(Json(
        serde_json::to_value(page).map_err(ApiError::internal)?,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewAccount {
    name: String,
    #[serde(default)]
    trust: u8,
}

impl Expected for NewAccount {
    const EXPECTED: &'static str =
        "{\"name\": \"<2-32 lowercase letters, digits, _ or ->\", \"trust\": 0, 1 or 2}";
}

async fn create_account(
    State(state): State<AppState>,
    Operator(op): Operator,
    Json(body): Json<NewAccount>,
) -> Answer {
    ok(operator::create_account(&state.store, &op, &body.name, body.trust).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Role {
    operator: bool,
}

impl Expected for Role {
    const EXPECTED: &'static str = "{\"operator\": true or false}";
}

async fn operator_role(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(name): Path<String>,
    Json(body): Json<Role>,
) -> Answer {
    let name = account_named(name)?;
    ok(operator::set_operator_role(&state.store, &op, &name, body.operator).await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewKey {
    label: Option<String>,
}

impl Expected for NewKey {
    const EXPECTED: &'static str = "{\"label\": \"<up to 40 characters, optional>\"}";
}

async fn create_key(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(name): Path<String>,
    Json(body): Json<NewKey>,
) -> Answer {
    let name = account_named(name)?;
    let created = operator::create_key(&state.store, &op, &name, body.label.as_deref()).await?;
    Ok(Json(
        serde_json::to_value(created).map_err(ApiError::internal)?,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyQuery {
    account: Option<String>,
    revoked: Option<bool>,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Expected for KeyQuery {
    const EXPECTED: &'static str =
        "`account` (a name), `revoked=true` (include revoked keys), `offset`, `limit`";
}

async fn keys(State(state): State<AppState>, _: Operator, Query(q): Query<KeyQuery>) -> Answer {
    let paging = Paging {
        offset: q.offset,
        limit: q.limit,
    };
    let page = horst_identity::accounts::list_keys(
        &state.store,
        q.account.as_deref().filter(|a| !a.is_empty()),
        q.revoked.unwrap_or(false),
        paging.offset(),
        paging.limit()?,
    )
    .await?;
    Ok(Json(
        serde_json::to_value(page).map_err(ApiError::internal)?,
    ))
}

async fn revoke_key(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(prefix): Path<String>,
) -> Answer {
    let prefix = record_id(prefix)?;
    let account = operator::revoke_key(&state.store, &op, &prefix).await?;
    answer(KeyRevoked {
        revoked: prefix,
        account,
    })
}

async fn tokens(State(state): State<AppState>, _: Operator, Query(p): Query<Paging>) -> Answer {
    let all = state.auth.list_tokens().await?;
    let total = all.len();
    let items: Vec<_> = all.into_iter().skip(p.offset()).take(p.limit()?).collect();
    let end = p.offset() + items.len();
    answer(Page {
        items,
        total,
        next_offset: (end < total).then_some(end),
    })
}

impl Expected for Paging {
    const EXPECTED: &'static str = "`offset` and `limit` (1-1000)";
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewToken {
    scopes: Vec<String>,
    name: Option<String>,
    #[serde(default)]
    house: bool,
}

impl Expected for NewToken {
    const EXPECTED: &'static str =
        "{\"scopes\": [\"play\", \"host\"], \"name\": \"<optional>\", \"house\": false}";
}

async fn create_token(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Json(body): Json<NewToken>,
) -> Answer {
    let (token, agent) = operator::create_token(
        &state.store,
        &state.auth,
        &op,
        &body.scopes,
        body.name.as_deref(),
        body.house,
    )
    .await?;
    answer(TokenCreated { token, agent })
}

async fn revoke_token(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(agent): Path<String>,
) -> Answer {
    let agent = record_id(agent)?;
    let info = operator::revoke_token(&state.store, &state.auth, &op, &agent).await?;
    answer(TokenRevoked { revoked: info })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewUser {
    name: String,
    password: String,
    #[serde(default)]
    trust: u8,
}

impl Expected for NewUser {
    const EXPECTED: &'static str =
        "{\"name\": \"...\", \"password\": \"<at least 8 characters>\", \"trust\": 0, 1 or 2}";
}

async fn create_user(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Json(body): Json<NewUser>,
) -> Answer {
    ok(operator::create_user(
        &state.store,
        &state.auth,
        &op,
        &body.name,
        &body.password,
        body.trust,
    )
    .await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewPassword {
    password: String,
    /// Revoke every agent key of the person too.
    #[serde(default)]
    revoke_keys: bool,
}

impl Expected for NewPassword {
    const EXPECTED: &'static str =
        "{\"password\": \"<at least 8 characters>\", \"revokeKeys\": false}";
}

/// A password reset's answer: what it did to the person's agent keys besides.
#[derive(Serialize)]
struct PasswordReset {
    ok: bool,
    #[serde(flatten)]
    set: operator::PasswordSet,
}

async fn user_password(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(name): Path<String>,
    Json(body): Json<NewPassword>,
) -> Answer {
    let name = account_named(name)?;
    let set = operator::set_user_password(
        &state.store,
        &state.auth,
        &op,
        &name,
        &body.password,
        body.revoke_keys,
    )
    .await?;
    answer(PasswordReset { ok: true, set })
}

async fn delete_user(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(name): Path<String>,
) -> Answer {
    let name = account_named(name)?;
    let deleted = operator::delete_user(&state.store, &state.auth, &op, &name).await?;
    Ok(Json(
        serde_json::to_value(deleted).map_err(ApiError::internal)?,
    ))
}

/// The admin tokens, with the label limit a new one's field takes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AdminTokens {
    items: Vec<horst_identity::admin_tokens::AdminTokenInfo>,
    /// The longest label a new admin token may have: the page's field takes no more.
    max_label_chars: usize,
}

async fn admin_tokens(State(state): State<AppState>, _: Operator) -> Answer {
    answer(AdminTokens {
        items: horst_identity::admin_tokens::list(&state.store).await?,
        max_label_chars: horst_identity::admin_tokens::MAX_LABEL_CHARS,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewAdminToken {
    label: Option<String>,
}

impl Expected for NewAdminToken {
    const EXPECTED: &'static str = "{\"label\": \"<up to 40 characters, optional>\"}";
}

async fn create_admin_token(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Json(body): Json<NewAdminToken>,
) -> Answer {
    let (token, info) =
        operator::create_admin_token(&state.store, &op, body.label.as_deref()).await?;
    answer(AdminTokenCreated {
        token,
        admin_token: info,
    })
}

async fn retire_admin_token(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(id): Path<String>,
) -> Answer {
    let id = record_id(id)?;
    let info = operator::retire_admin_token(&state.store, &op, &id).await?;
    answer(AdminTokenRetired { retired: info })
}

/// An operator's page offset, at most 1,000,000,000 (the page arithmetic stays in range;
/// nothing holds more).
fn clamped(offset: Option<usize>) -> usize {
    offset
        .unwrap_or(0)
        .min(horst_gateway::args::MAX_OFFSET as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_bodies_name_the_label_limits_identity_checks() {
        let admin = format!(
            "up to {} characters",
            horst_identity::admin_tokens::MAX_LABEL_CHARS
        );
        assert!(
            NewAdminToken::EXPECTED.contains(&admin),
            "{}",
            NewAdminToken::EXPECTED
        );
        let key = format!(
            "up to {} characters",
            horst_identity::accounts::MAX_LABEL_CHARS
        );
        assert!(NewKey::EXPECTED.contains(&key), "{}", NewKey::EXPECTED);
    }
}
