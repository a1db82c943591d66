//! The operator's control of evaluation jobs: cancel one (audited as `job_cancel`), and the
//! job view (jobs by state, kind and account with their timeline; the lanes' depth and
//! oldest wait). `horst admin job ...`, `/api/admin/jobs` and the `/admin` page all call
//! these.

use horst_queue::{CancelOutcome, JobKind, JobRecord, JobResult, JobState, Lane, Queue};
use horst_store::Store;
use serde::{Deserialize, Serialize};

use horst_gateway::{ErrorCode, ToolError};

use crate::audit::{audit, Action, Detail};

/// The longest reason an operator may give (it is shown to the job's caller).
pub const REASON_MAX_CHARS: usize = 500;

/// Cancels job `id`: a queued one is dropped (nothing charged), a running one stops within
/// 100 ms and stays charged; its waiting caller is told at once, with `reason`. Audited.
/// A job that already finished is a `conflict`; an unknown one `not_found`.
pub async fn cancel_job(
    store: &Store,
    queue: &Queue,
    who: &str,
    id: &str,
    reason: &str,
) -> Result<CancelOutcome, ToolError> {
    let reason = checked_reason(reason)?;
    let outcome = queue.cancel(id, &reason).await?;
    match outcome {
        CancelOutcome::Dropped | CancelOutcome::Stopped => {
            let was = match outcome {
                CancelOutcome::Dropped => "queued",
                _ => "running",
            };
            audit(
                store,
                who,
                Action::JobCancel,
                id,
                Detail::JobCancel {
                    reason: &reason,
                    was,
                },
            )
            .await?;
            tracing::info!(job = %id, was, "job cancelled by an operator");
            Ok(outcome)
        }
        CancelOutcome::Finished(state) => Err(ToolError::new(
            ErrorCode::Conflict,
            format!(
                "job {id} has already finished ({}); there is nothing to cancel",
                state.as_str()
            ),
        )),
        CancelOutcome::Missing => Err(ToolError::not_found(missing_job(id))),
    }
}

/// What a job id with no record is told (`job show`, `job cancel`, their REST twins).
fn missing_job(id: &str) -> String {
    format!("no job {id} (finished jobs are kept for queue.job_retention_hours); check the id: the job list, the logs and the agent's answer name it")
}

/// An operator's reason for a cancel, as its callers are told it: trimmed, not empty, at
/// most [`REASON_MAX_CHARS`], one line of plain text.
fn checked_reason(reason: &str) -> Result<String, ToolError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ToolError::invalid(
            "give a reason (--reason, or `reason` in the body): the job's caller is told it",
        ));
    }
    if reason.chars().count() > REASON_MAX_CHARS {
        return Err(ToolError::invalid(format!(
            "the reason is longer than {REASON_MAX_CHARS} characters; shorten it"
        )));
    }
    Ok(horst_gateway::text::clean_line(reason))
}

/// Cancels every job of `account` waiting or running now, each as [`cancel_job`] does (and
/// audited as `job_cancel`, with `reason`; then the whole as one `job_cancel_account` entry
/// naming the jobs, written when none was found too): an agent flooding the queue is stopped without
/// blocking its account (it may call again; block it to stop it for good). Answers the ids
/// cancelled, none when nothing of it waits or runs. A name that has no jobs and is no
/// account is `not_found`, as in the listing; a job admitted just after the look is not
/// cancelled (call again, or block the account).
pub async fn cancel_account_jobs(
    store: &Store,
    queue: &Queue,
    who: &str,
    account: &str,
    reason: &str,
) -> Result<Vec<String>, ToolError> {
    let reason = checked_reason(reason)?;
    let account = account.trim();
    if account.is_empty() {
        // It was answered "no account : ...", as if a name had been mistyped.
        return Err(ToolError::invalid(
            "give the account whose jobs to cancel (--account NAME, `account` in the body)",
        ));
    }
    known_account(queue, account).await?;
    let cancelled = cancel_jobs_of(store, queue, who, account, &reason).await?;
    // One entry for the decision too: the jobs' own entries do not say they were one action,
    // and a cancel that found nothing left no trace at all.
    audit(
        store,
        who,
        Action::JobCancelAccount,
        account,
        Detail::JobCancelAccount {
            reason: &reason,
            jobs_cancelled: &cancelled,
        },
    )
    .await?;
    Ok(cancelled)
}

/// `not_found` for a name with no jobs that no account has: a mistyped one, or an agent's
/// display name rather than its account's name.
async fn known_account(queue: &Queue, account: &str) -> Result<(), ToolError> {
    if queue.job_ids_of(account, 0, 1).await?.1 == 0
        && account != horst_gateway::checks::OPERATOR_ACCOUNT
        && horst_identity::accounts::load_account(queue.store(), account)
            .await?
            .is_none()
    {
        return Err(ToolError::not_found(format!(
            "no account {account}: names are lowercase, and an agent's is its handle (agent-0123abcd), not its display name; `horst admin account list --q TEXT` (GET /api/admin/accounts?q=TEXT) finds it"
        )));
    }
    Ok(())
}

/// The reason the callers of a blocked account's cancelled jobs are told.
pub const BLOCKED_REASON: &str = "the account was blocked";

/// Cancels every job of `account` waiting or running now (as [`cancel_job`] does, each
/// audited as `job_cancel`): what blocking an account does to its work, so a blocked
/// account's jobs no longer hold places and workers (they ran to their end, and their results
/// went to an account nobody may use). Answers the ids cancelled; a job that ends by itself
/// meanwhile is passed over.
pub async fn cancel_jobs_of(
    store: &Store,
    queue: &Queue,
    who: &str,
    account: &str,
    reason: &str,
) -> Result<Vec<String>, ToolError> {
    let mut jobs = Vec::new();
    for id in queue.active_ids().await? {
        match queue.get(&id).await? {
            Some(r) if r.account == account && !r.state.is_final() => jobs.push(r),
            _ => {}
        }
    }
    // The waiting ones first: a stop frees its slot, which takes the next waiting job at once,
    // and one of these taken so would be stopped running, charged, instead of dropped.
    jobs.sort_by_key(|r| r.state != JobState::Queued);
    let mut cancelled = Vec::new();
    for id in jobs.into_iter().map(|r| r.id) {
        match cancel_job(store, queue, who, &id, reason).await {
            Ok(_) => cancelled.push(id),
            Err(e) if matches!(e.code, ErrorCode::Conflict | ErrorCode::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(cancelled)
}

/// Which jobs the job view lists.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JobFilter {
    /// `queued`, `running`, `succeeded`, `failed` or `cancelled`.
    pub state: Option<String>,
    /// `playtest`, `simulate`, `submit` or `recheck`.
    pub kind: Option<String>,
    /// One account's jobs (its recent ones, any state); without it, with state `failed` or
    /// `cancelled` those of every account (`queue:ended`), else the jobs waiting and running
    /// now.
    pub account: Option<String>,
}

/// One job in the view: its timeline and, while it runs, its progress.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRow {
    pub id: String,
    pub kind: JobKind,
    /// The lane it waits in: `planner` (playtests) or `referee` (the others).
    pub lane: Lane,
    pub account: String,
    /// The account's trust tier when it was admitted.
    pub trust: u8,
    pub state: JobState,
    pub admitted_at_ms: u64,
    pub started_at_ms: Option<u64>,
    pub ended_at_ms: Option<u64>,
    /// Admitted to started (or to now, while queued), ms.
    pub wait_ms: u64,
    /// While queued: the waiting jobs a slot that may run it takes before it ([`place_in_lanes`]:
    /// its lane's in turn order, accounts taking turns, and for a playtest the referee work a
    /// general slot takes first); 0: it is next, and waits for a free slot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ahead: Option<u64>,
    /// While queued: why it waits, in words ([`waiting_for`]): no live worker (or none with a
    /// slot that runs it), the jobs that come before it, or every slot that may run it busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    pub worker: Option<String>,
    /// The id of the HTTP request that admitted it (`X-Request-Id`), as in the logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub reserved_seconds: u64,
    pub charged_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<horst_queue::JobProgress>,
    /// What a finished job found (`won`, `lost`, `unresolved`): `succeeded` says only that
    /// it ran, and a playtest that found no replay succeeded too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<horst_queue::Outcome>,
    /// Why a playtest ended unresolved (`time_limit`, `memory_limit`, `unreachable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The failure code, if it failed or was cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<horst_queue::FailureCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl JobRow {
    pub fn new(r: &JobRecord, now_ms: u64) -> JobRow {
        let waited_until = r.started_at_ms.or(r.finished_at_ms).unwrap_or(now_ms);
        JobRow {
            id: r.id.clone(),
            kind: r.kind,
            lane: Lane::of(r.kind),
            account: r.account.clone(),
            trust: r.trust,
            state: r.state,
            admitted_at_ms: r.created_at_ms,
            started_at_ms: r.started_at_ms,
            ended_at_ms: r.finished_at_ms,
            wait_ms: waited_until.saturating_sub(r.created_at_ms),
            ahead: None,
            waiting_for: None,
            worker: r.worker.clone(),
            request_id: r.request_id.clone(),
            reserved_seconds: r.reserved_seconds,
            charged_seconds: r.charged_seconds,
            progress: r.progress.clone(),
            outcome: r.result.as_ref().map(|x| match x {
                JobResult::Referee(x) => x.outcome,
                JobResult::Playtest(x) => x.outcome,
            }),
            reason: match &r.result {
                Some(JobResult::Playtest(x)) => x.reason.clone(),
                _ => None,
            },
            code: r.failure.as_ref().map(|f| f.code),
            message: r.failure.as_ref().map(|f| f.message.clone()),
        }
    }
}

/// One lane's waiting jobs and how long the longest has waited.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneDepth {
    pub lane: Lane,
    pub waiting: u64,
    pub oldest_wait_ms: Option<u64>,
}

/// The most jobs one listing shows.
pub const LIST_MAX: usize = 500;

/// The most of an account's job records one listing reads to fill its page: with a state or
/// kind filter that few of them match, the page comes back short, with `next_offset` where
/// to go on (an account keeps `queue.job_retention_hours` of jobs: thousands).
pub const SCAN_MAX: usize = 2000;

/// One page of the job view.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobPage {
    pub items: Vec<JobRow>,
    /// Where the next page starts (`offset=`, `--offset`); absent on the last page. With an
    /// account it is a position in that account's jobs, newest first (jobs admitted in the
    /// meantime move the older ones down: a row may show again on the next page, none is
    /// skipped); without one, in the failed or cancelled jobs of every account, newest end
    /// first (with state `failed` or `cancelled`), or in the jobs waiting and running now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// The jobs the filter selects, newest first: at most `limit` (1 to [`LIST_MAX`]) from
/// `offset` on (a `next_offset` of an earlier page).
pub async fn list_jobs(
    queue: &Queue,
    filter: &JobFilter,
    offset: usize,
    limit: usize,
) -> Result<JobPage, ToolError> {
    // The CLI's --limit came here unclamped: 0 listed nothing, and a huge one overflowed
    // the read's size below.
    let limit = limit.clamp(1, LIST_MAX);
    let state = match filter.state.as_deref() {
        None | Some("") => None,
        Some(s) => Some(parse_state(s)?),
    };
    let account = filter.account.as_deref().filter(|a| !a.is_empty());
    // Without an account, failed and cancelled jobs come from the index of such jobs of every
    // account (`queue:ended`); succeeded ones, the bulk, are not indexed (it would cost every
    // job a command) and are listed per account.
    if account.is_none() && state == Some(JobState::Succeeded) {
        return Err(ToolError::invalid(
            "succeeded jobs are listed per account: give the account (account=NAME, --account NAME); without one, state=failed and state=cancelled list those of every account, and no state the jobs queued and running now",
        ));
    }
    let kind = match filter.kind.as_deref() {
        None | Some("") => None,
        Some(k) => Some(JobKind::parse(k).ok_or_else(|| {
            ToolError::invalid(format!(
                "unknown kind {k:?}; use playtest, simulate, submit or recheck"
            ))
        })?),
    };
    let selected =
        |r: &JobRecord| state.is_none_or(|s| r.state == s) && kind.is_none_or(|k| r.kind == k);
    let now = queue.now_ms().await?;
    if account.is_none() && state.is_some_and(|s| s.is_final()) {
        // Every account's failed or cancelled jobs, newest end first, read in chunks as an
        // account's are below (SCAN_MAX records at most a page).
        return scan_pages(queue, Index::Ended, offset, limit, now, &selected).await;
    }
    let Some(account) = account else {
        let mut rows = Vec::new();
        for id in queue.active_ids().await? {
            if let Some(r) = queue.get(&id).await? {
                if selected(&r) {
                    rows.push(JobRow::new(&r, now));
                }
            }
        }
        newest_first(&mut rows);
        let total = rows.len();
        let mut items: Vec<JobRow> = rows.into_iter().skip(offset).take(limit).collect();
        place_in_lanes(queue, &mut items).await?;
        let next = offset.saturating_add(items.len());
        return Ok(JobPage {
            next_offset: (next < total && !items.is_empty()).then_some(next),
            items,
        });
    };
    // A name with no jobs that no account has is a mistyped one, or a display name rather
    // than the account's name: it listed nothing, which read as "this account has no jobs".
    known_account(queue, account).await?;
    // An account's jobs: its index (newest first) is read in chunks from `offset` until the
    // page is full, the index ends, or SCAN_MAX records were read. Before, only the newest
    // 4 x limit were read and there was no offset: an account's older failures were out of
    // reach.
    let mut page = scan_pages(
        queue,
        Index::Account(account),
        offset,
        limit,
        now,
        &selected,
    )
    .await?;
    place_in_lanes(queue, &mut page.items).await?;
    Ok(page)
}

/// The jobs waiting and running now in the order their pages show them: newest admission
/// first, the id breaking ties. Without the id, jobs admitted in one millisecond (a burst,
/// `admit_many`) kept the order they were read in, the running ones by lease expiry, which
/// every heartbeat moves: from one page to the next a job showed twice and another never.
fn newest_first(rows: &mut [JobRow]) {
    rows.sort_by(|a, b| (b.admitted_at_ms, &b.id).cmp(&(a.admitted_at_ms, &a.id)));
}

/// An index of job ids, newest first.
enum Index<'a> {
    /// `jobs:<account>`: the account's jobs by admission.
    Account(&'a str),
    /// `queue:ended`: every account's failed and cancelled jobs by end.
    Ended,
}

/// Ids are read from an index this many at a time.
const CHUNK: usize = 100;

/// One page from an index of job ids: read in chunks from `offset` until `limit` rows are
/// selected, the index ends, or SCAN_MAX records were read. Ids whose record expired are
/// passed over.
async fn scan_pages(
    queue: &Queue,
    index: Index<'_>,
    offset: usize,
    limit: usize,
    now: u64,
    selected: &(dyn Fn(&JobRecord) -> bool + Sync),
) -> Result<JobPage, ToolError> {
    let mut at = offset.min(1 << 40);
    let mut scanned = 0;
    let mut items = Vec::new();
    loop {
        let (ids, total) = match index {
            Index::Account(account) => queue.job_ids_of(account, at, CHUNK).await?,
            Index::Ended => queue.ended_ids(at, CHUNK).await?,
        };
        for id in &ids {
            at += 1;
            scanned += 1;
            if let Some(r) = queue.get(id).await? {
                if selected(&r) {
                    items.push(JobRow::new(&r, now));
                }
            }
            if items.len() == limit || scanned == SCAN_MAX {
                return Ok(JobPage {
                    items,
                    next_offset: (at < total).then_some(at),
                });
            }
        }
        if ids.len() < CHUNK || at >= total {
            return Ok(JobPage {
                items,
                next_offset: None,
            });
        }
    }
}

/// What one account used today (UTC, on the server's clock): its jobs admitted today by
/// kind, and their seconds, charged (started) and still reserved (waiting).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountToday {
    pub account: String,
    pub jobs: std::collections::BTreeMap<String, u64>,
    pub seconds_charged: u64,
    pub seconds_reserved: u64,
}

/// The most recent jobs of one account read for [`account_today`]: above every tier's daily
/// job limits together.
const TODAY_SCAN: usize = 2000;

/// What `account` used today, from its recent jobs (`jobs:<account>`).
pub async fn account_today(queue: &Queue, account: &str) -> Result<AccountToday, ToolError> {
    const DAY_MS: u64 = 86_400_000;
    let now = queue.now_ms().await?;
    let midnight = now - now % DAY_MS;
    let mut today = AccountToday {
        account: account.to_string(),
        ..AccountToday::default()
    };
    for r in queue.list(account, 0, TODAY_SCAN).await?.0 {
        if r.created_at_ms < midnight {
            continue;
        }
        *today.jobs.entry(r.kind.as_str().to_string()).or_default() += 1;
        today.seconds_charged += r.charged_seconds;
        if r.state == JobState::Queued {
            today.seconds_reserved += r.reserved_seconds;
        }
    }
    Ok(today)
}

/// Job `id` as the view shows it.
pub async fn show_job(queue: &Queue, id: &str) -> Result<JobRow, ToolError> {
    let r = queue
        .get(id)
        .await?
        .ok_or_else(|| ToolError::not_found(missing_job(id)))?;
    let mut row = [JobRow::new(&r, queue.now_ms().await?)];
    place_in_lanes(queue, &mut row).await?;
    let [row] = row;
    Ok(row)
}

/// Sets each queued row's `ahead`: how many waiting jobs the slots that may run it take
/// before it. Referee work: the referee jobs before it in its lane's turn order (a referee
/// slot takes only those, and a general slot them too). A playtest: the jobs a general slot,
/// the only kind that runs it, takes first: its lane's before it and the referee work that
/// reaches its lane's head having waited longer (a general slot takes the head of either lane
/// that was admitted first, claim.lua), so a playtest shown "next" while simulations waited
/// longer was not next. Each lane holds at most `queue.waiting_global` jobs: one read of each
/// lane's ids, and of the waiting records only when a playtest's place needs their times.
/// "Why is this job waiting?" has its answer there: jobs ahead of it, or (none ahead) no free
/// slot.
async fn place_in_lanes(queue: &Queue, rows: &mut [JobRow]) -> Result<(), ToolError> {
    let waiting_in = |rows: &[JobRow], lane: Lane| {
        rows.iter()
            .any(|r| r.state == JobState::Queued && r.lane == lane)
    };
    let (planner_rows, referee_rows) = (
        waiting_in(rows, Lane::Planner),
        waiting_in(rows, Lane::Referee),
    );
    if !planner_rows && !referee_rows {
        return Ok(());
    }
    let referee = queue.lane_ids(Lane::Referee).await?;
    let planner = if planner_rows {
        let planner = queue.lane_ids(Lane::Planner).await?;
        general_order(
            &admitted_at(queue, &planner).await?,
            &admitted_at(queue, &referee).await?,
        )
    } else {
        Vec::new()
    };
    let (slots, running) = (queue.live_slots().await?, queue.running_count().await?);
    for row in rows.iter_mut().filter(|r| r.state == JobState::Queued) {
        let order = match row.lane {
            Lane::Planner => &planner,
            Lane::Referee => &referee,
        };
        row.ahead = order.iter().position(|id| *id == row.id).map(|i| i as u64);
        row.waiting_for = row
            .ahead
            .map(|ahead| waiting_for(row.lane, ahead, slots, running));
    }
    Ok(())
}

/// Why a job of `lane` with `ahead` jobs before it waits, in words an operator acts on:
/// "Why is a job waiting?" of docs/operators.md, answered in the job itself, where before the
/// view showed only its place and the operator had to put it together with the queue card.
fn waiting_for(lane: Lane, ahead: u64, slots: horst_queue::LiveSlots, running: u64) -> String {
    let runs_it = match lane {
        Lane::Planner => slots.general,
        Lane::Referee => slots.general + slots.referee,
    };
    if slots.workers == 0 {
        return "no live worker: nothing runs until one starts (horst admin status lists them); an agent's own call gives up after about 8 s".into();
    }
    if runs_it == 0 {
        return match lane {
            Lane::Planner => "no live worker has a general slot, the only kind that runs a playtest: start a worker with worker.slots above 0",
            Lane::Referee => "the live workers have no slots: start a worker with worker.slots or worker.referee_slots above 0",
        }
        .into();
    }
    let busy = format!(
        "{running} job(s) running on {} general and {} referee slot(s) of {} live worker(s)",
        slots.general, slots.referee, slots.workers
    );
    match (ahead, lane) {
        (0, Lane::Planner) => format!("next: it starts when a general slot frees ({busy})"),
        (0, Lane::Referee) => {
            format!("next: it starts when a referee or general slot frees ({busy})")
        }
        (n, _) => {
            format!("{n} waiting job(s) come before it in turn (accounts take turns); {busy}")
        }
    }
}

/// The waiting jobs `ids` with their admission times, in the same order (a record gone
/// meanwhile counts as admitted last: a claim takes it off the lane without running it).
async fn admitted_at(queue: &Queue, ids: &[String]) -> Result<Vec<(String, u64)>, ToolError> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let at = queue.get(id).await?.map_or(u64::MAX, |r| r.created_at_ms);
        out.push((id.clone(), at));
    }
    Ok(out)
}

/// The order a general slot takes the waiting jobs in, from the lanes' turn orders with each
/// job's admission time: of the two heads, the one admitted first, the planner lane's on a tie
/// (claim.lua's `claim_next`).
fn general_order(planner: &[(String, u64)], referee: &[(String, u64)]) -> Vec<String> {
    let (mut p, mut r) = (planner.iter().peekable(), referee.iter().peekable());
    let mut order = Vec::with_capacity(planner.len() + referee.len());
    loop {
        let next = match (p.peek(), r.peek()) {
            (Some(a), Some(b)) if b.1 < a.1 => r.next(),
            (Some(_), _) => p.next(),
            (None, _) => r.next(),
        };
        match next {
            Some((id, _)) => order.push(id.clone()),
            None => return order,
        }
    }
}

/// The queue at a glance (`horst admin queue`, `GET /api/admin/queue`, the job view's card).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    pub lanes: Vec<LaneDepth>,
    pub running: u64,
    /// The live workers and their slots: with none, waiting jobs wait for one to start.
    pub slots: horst_queue::LiveSlots,
    pub today: horst_queue::DayStats,
}

/// Each lane's depth, the running jobs, the live workers' slots and today's figures.
pub async fn queue_view(queue: &Queue) -> Result<QueueView, ToolError> {
    Ok(QueueView {
        lanes: lanes(queue).await?,
        running: queue.running_count().await?,
        slots: queue.live_slots().await?,
        today: queue.today().await?,
    })
}

/// Each lane's depth and oldest wait.
pub async fn lanes(queue: &Queue) -> Result<Vec<LaneDepth>, ToolError> {
    let mut out = Vec::new();
    for lane in Lane::ALL {
        let (waiting, oldest_wait_ms) = queue.lane_depth(lane).await?;
        out.push(LaneDepth {
            lane,
            waiting,
            oldest_wait_ms,
        });
    }
    Ok(out)
}

fn parse_state(s: &str) -> Result<JobState, ToolError> {
    Ok(match s {
        "queued" => JobState::Queued,
        "running" => JobState::Running,
        "succeeded" => JobState::Succeeded,
        "failed" => JobState::Failed,
        "cancelled" => JobState::Cancelled,
        _ => {
            return Err(ToolError::invalid(format!(
                "unknown state {s:?}; use queued, running, succeeded, failed or cancelled"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, admitted_at_ms: u64) -> JobRow {
        JobRow {
            id: id.into(),
            kind: JobKind::Simulate,
            lane: Lane::Referee,
            account: "anna".into(),
            trust: 1,
            state: JobState::Running,
            admitted_at_ms,
            started_at_ms: None,
            ended_at_ms: None,
            wait_ms: 0,
            ahead: None,
            waiting_for: None,
            worker: None,
            request_id: None,
            reserved_seconds: 5,
            charged_seconds: 5,
            progress: None,
            outcome: None,
            reason: None,
            code: None,
            message: None,
        }
    }

    #[test]
    fn a_general_slot_takes_the_head_admitted_first_of_either_lane() {
        let jobs = |v: &[(&str, u64)]| {
            v.iter()
                .map(|(id, at)| (id.to_string(), *at))
                .collect::<Vec<_>>()
        };
        // The planner lane in turn order (carl's turn comes before anna's second, which was
        // admitted before him).
        let planner = jobs(&[("p:anna1", 10), ("p:carl", 40), ("p:anna2", 20)]);
        let referee = jobs(&[("r:bob", 5), ("r:dora", 30), ("r:emil", 50)]);
        assert_eq!(
            general_order(&planner, &referee),
            ["r:bob", "p:anna1", "r:dora", "p:carl", "p:anna2", "r:emil"]
        );
        // A tie goes to the planner lane, as claim.lua's comparison does.
        assert_eq!(
            general_order(&jobs(&[("p", 7)]), &jobs(&[("r", 7)])),
            ["p", "r"]
        );
        assert_eq!(general_order(&[], &referee).len(), 3);
        assert_eq!(general_order(&planner, &[]).len(), 3);
    }

    #[test]
    fn why_a_job_waits_is_said_in_words() {
        let slots = |workers, general, referee| horst_queue::LiveSlots {
            workers,
            general,
            referee,
        };
        let none = waiting_for(Lane::Planner, 0, slots(0, 0, 0), 0);
        assert!(none.starts_with("no live worker:"), "{none}");
        let referee_only = waiting_for(Lane::Planner, 0, slots(1, 0, 1), 1);
        assert!(
            referee_only.contains("no live worker has a general slot"),
            "{referee_only}"
        );
        // Referee work runs on the referee slots too.
        let next = waiting_for(Lane::Referee, 0, slots(1, 0, 1), 1);
        assert!(
            next.starts_with("next: it starts when a referee or general slot frees"),
            "{next}"
        );
        let next = waiting_for(Lane::Planner, 0, slots(2, 2, 2), 2);
        assert_eq!(
            next,
            "next: it starts when a general slot frees (2 job(s) running on 2 general and 2 referee slot(s) of 2 live worker(s))"
        );
        let behind = waiting_for(Lane::Planner, 3, slots(1, 1, 1), 1);
        assert!(
            behind.starts_with("3 waiting job(s) come before it in turn"),
            "{behind}"
        );
    }

    #[test]
    fn jobs_admitted_in_one_millisecond_keep_one_order_whatever_order_they_are_read_in() {
        let ids = |rows: &[JobRow]| rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        let mut read = vec![row("j:b", 7), row("j:c", 9), row("j:a", 7), row("j:d", 7)];
        let mut again = vec![row("j:d", 7), row("j:a", 7), row("j:c", 9), row("j:b", 7)];
        newest_first(&mut read);
        newest_first(&mut again);
        assert_eq!(ids(&read), ["j:c", "j:d", "j:b", "j:a"]);
        assert_eq!(ids(&read), ids(&again));
    }
}
