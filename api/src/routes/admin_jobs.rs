//! `/api/admin/jobs...` and `/api/admin/queue`: the operator's job view and cancel, over
//! `horst_operator::jobs` (the same calls as `horst admin job ...` and `admin queue`).
//! Same callers as `routes/admin.rs` (an admin token, or the `/admin` page's session). The
//! reads take `extract::Operator`; a cancel takes `extract::Confirmed`, as the other
//! destructive operator actions do: it throws away the job's work (a running job's seconds
//! so far are charged to its account all the same) and cannot be undone, so a page session
//! must have given its credential within 5 minutes.

use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use serde::{Deserialize, Serialize};

use horst_operator::jobs::{self as job_control, AccountToday, JobFilter, JobPage};
use horst_queue::CancelOutcome;

use super::admin::{answer, Answer};
use crate::extract::{Confirmed, Expected, Json, Operator, Path, Query};
use crate::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/admin/jobs", get(list))
        .route("/api/admin/jobs/{id}", get(show))
        .route("/api/admin/jobs/{id}/cancel", post(cancel))
        .route("/api/admin/jobs/cancel", post(cancel_account))
        .route("/api/admin/queue", get(queue))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    state: Option<String>,
    kind: Option<String>,
    account: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Expected for ListQuery {
    const EXPECTED: &'static str =
        "?state=queued|running|succeeded|failed|cancelled&kind=playtest|simulate|submit|recheck&account=NAME&offset=N&limit=1-500";
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Items {
    #[serde(flatten)]
    page: JobPage,
    /// With an account filter: what that account used today.
    #[serde(skip_serializing_if = "Option::is_none")]
    account_today: Option<AccountToday>,
}

async fn list(State(state): State<AppState>, _: Operator, Query(q): Query<ListQuery>) -> Answer {
    let filter = JobFilter {
        state: q.state,
        kind: q.kind,
        account: q.account,
    };
    let limit = crate::extract::page_limit(q.limit, 100, 500)?;
    let account_today = match filter.account.as_deref().filter(|a| !a.is_empty()) {
        Some(account) => Some(job_control::account_today(&state.queue, account).await?),
        None => None,
    };
    answer(Items {
        page: job_control::list_jobs(&state.queue, &filter, q.offset.unwrap_or(0), limit).await?,
        account_today,
    })
}

async fn show(State(state): State<AppState>, _: Operator, Path(id): Path<String>) -> Answer {
    let id = super::admin::record_id(id)?;
    answer(job_control::show_job(&state.queue, &id).await?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelBody {
    reason: String,
}

impl Expected for CancelBody {
    const EXPECTED: &'static str = "{\"reason\": \"why (the job's caller is told)\"}";
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Cancelled {
    job_id: String,
    #[serde(flatten)]
    outcome: CancelOutcome,
}

async fn cancel(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Path(id): Path<String>,
    Json(body): Json<CancelBody>,
) -> Answer {
    let id = super::admin::record_id(id)?;
    let outcome =
        job_control::cancel_job(&state.store, &state.queue, &op, &id, &body.reason).await?;
    answer(Cancelled {
        job_id: id,
        outcome,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelAccountBody {
    account: String,
    reason: String,
}

impl Expected for CancelAccountBody {
    const EXPECTED: &'static str =
        "{\"account\": \"NAME\", \"reason\": \"why (each job's caller is told)\"}";
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AccountCancelled {
    account: String,
    jobs_cancelled: Vec<String>,
}

/// Every job of one account waiting or running now, cancelled (each audited `job_cancel`,
/// the whole `job_cancel_account`).
async fn cancel_account(
    State(state): State<AppState>,
    Confirmed(op): Confirmed,
    Json(body): Json<CancelAccountBody>,
) -> Answer {
    let jobs_cancelled = job_control::cancel_account_jobs(
        &state.store,
        &state.queue,
        &op,
        &body.account,
        &body.reason,
    )
    .await?;
    answer(AccountCancelled {
        account: body.account.trim().to_string(),
        jobs_cancelled,
    })
}

/// The queue at a glance: each lane's depth and oldest wait, the running jobs, the live
/// workers' slots, and today's jobs and seconds.
async fn queue(State(state): State<AppState>, _: Operator) -> Answer {
    answer(job_control::queue_view(&state.queue).await?)
}
