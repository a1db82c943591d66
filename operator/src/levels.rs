//! Levels and revisions: promotion, rollback, quarantine, rechecks (queued and waited for
//! the one way every entry point uses), the revision list, and the shipped levels' publication.

use std::time::Duration;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use horst_gateway::checks;
use horst_gateway::promotion;
pub use horst_gateway::promotion::{Promotion, Rollback, RollbackExpect};
use horst_gateway::ToolError;
use horst_queue::{Failure, Queue};
use horst_store::Store;

use crate::audit::{audit, Action, Detail};

/// Promotes exactly `revision_id`, if its newest check on the current engine passed and the
/// currently promoted revision of its level is `expected_current` (`None`: no promoted
/// revision yet); a stale expectation is a `conflict` (409).
pub async fn promote(
    store: &Store,
    who: &str,
    revision_id: &str,
    expected_current: Option<&str>,
) -> Result<Promotion, ToolError> {
    let promoted = promotion::promote(store, revision_id, expected_current).await?;
    let detail = Detail::Promoted {
        level: &promoted.level,
        // What the promotion replaced (an expectation of `none` is no revision).
        previous: promoted.previous.as_deref(),
    };
    audit(store, who, Action::Promote, revision_id, detail).await?;
    Ok(promoted)
}

/// Restores the previously promoted revision of `level`, if it is the one `expect` names.
pub async fn rollback(
    store: &Store,
    who: &str,
    level: &str,
    expect: &RollbackExpect,
) -> Result<Rollback, ToolError> {
    let rolled = promotion::rollback(store, level, expect).await?;
    let detail = Detail::RolledBack {
        from: &rolled.from,
        to: &rolled.to,
    };
    audit(store, who, Action::Rollback, level, detail).await?;
    Ok(rolled)
}

/// Hides a revision everywhere (get_level, the Labor, board level threads); its evidence
/// stays for inspection. A promoted revision is rolled back first.
pub async fn quarantine(store: &Store, who: &str, revision_id: &str) -> Result<(), ToolError> {
    let level = promotion::quarantine(store, revision_id).await?;
    let detail = Detail::Level { level: &level };
    audit(store, who, Action::Quarantine, revision_id, detail).await
}

/// Queues a recheck of `revision_id`'s stored map and replay on the current engine and
/// returns its job id (the check is recorded when the job has finished, by whoever sees it
/// first: `horst_gateway::checks`).
pub async fn start_recheck(
    store: &Store,
    queue: &Queue,
    who: &str,
    revision_id: &str,
) -> Result<String, ToolError> {
    let job_id = checks::queue_recheck(store, queue, who, revision_id).await?;
    let detail = Detail::Recheck {
        engine_version: horst_engine::engine_version(),
        job_id: &job_id,
    };
    audit(store, who, Action::Recheck, revision_id, detail).await?;
    Ok(job_id)
}

/// How long a recheck can take before it has an outcome: the job cannot start later than
/// the queue's wait limit, nor run longer than a simulation's.
pub fn recheck_limit(config: &horst_config::Config) -> Duration {
    Duration::from_secs(config.queue.wait_seconds + config.queue.simulate_seconds + 10)
}

/// A recheck waited for: its job's final state and failure, and its recorded check.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecheckDone {
    pub revision_id: String,
    pub job_id: String,
    /// The job's state: final (`succeeded`, `failed`, `cancelled`), or `queued`/`running`
    /// when the wait ran out first.
    pub state: &'static str,
    pub failure: Option<Failure>,
    /// `None`: the job gave no verdict (it timed out in the queue, or is still running).
    pub check: Option<Value>,
}

impl RecheckDone {
    /// Whether the job ended (else the wait ran out; the check is recorded when it ends).
    pub fn finished(&self) -> bool {
        !matches!(self.state, "queued" | "running")
    }
}

/// The one recheck-and-wait (the REST API and the page; the CLI calls its two halves to
/// print the job id first): queues the recheck and [`wait_recheck`]s for it.
pub async fn recheck_and_wait(
    store: &Store,
    queue: &Queue,
    who: &str,
    revision_id: &str,
    limit: Duration,
) -> Result<RecheckDone, ToolError> {
    let job_id = start_recheck(store, queue, who, revision_id).await?;
    wait_recheck(store, queue, revision_id, &job_id, limit).await
}

/// Waits for a recheck's job (race-free, through the queue's notifier; a job still queued
/// when `limit` runs out is dropped), records its check and returns it.
pub async fn wait_recheck(
    store: &Store,
    queue: &Queue,
    revision_id: &str,
    job_id: &str,
    limit: Duration,
) -> Result<RecheckDone, ToolError> {
    let rec = queue.wait(job_id, limit).await?;
    checks::record_finished(store, revision_id).await?;
    let check = checks::recorded(store, revision_id, job_id).await?;
    Ok(RecheckDone {
        revision_id: revision_id.to_string(),
        job_id: job_id.to_string(),
        state: rec.state.as_str(),
        failure: rec.failure,
        check,
    })
}

/// Publishes `levels` (normally `horst_levels::BUILTIN`, see `horst_gateway::builtin`) and
/// audits each publication under `who`.
pub async fn publish_builtin(
    store: &Store,
    who: &str,
    levels: &[horst_levels::Level],
) -> Result<Vec<horst_gateway::builtin::Outcome>, ToolError> {
    let outcomes = horst_gateway::builtin::publish(store, levels).await?;
    for o in outcomes.iter().filter(|o| o.action == "published") {
        let detail = Detail::PublishBuiltin {
            detail: o.detail.as_deref(),
            level: &o.name,
        };
        audit(store, who, Action::PublishBuiltin, &o.revision_id, detail).await?;
    }
    Ok(outcomes)
}

/// [`publish_builtin`] of every shipped level as `start`, with each outcome logged: what a
/// starting API runs.
pub async fn publish_shipped(store: &Store) -> Result<(), ToolError> {
    let outcomes = publish_builtin(store, "start", horst_levels::BUILTIN).await?;
    for o in &outcomes {
        let detail = o.detail.as_deref().unwrap_or("");
        // The field is `level_name`: a field `level` is the log level's key in a JSON log
        // line, and a second `level` key took its place for log shippers.
        match o.action {
            "refused" => {
                tracing::error!(level_name = %o.name, detail, "built-in level not published")
            }
            "kept" => {
                tracing::warn!(level_name = %o.name, promoted = detail, "built-in level not promoted: the operator promoted another revision")
            }
            "published" => {
                tracing::info!(level_name = %o.name, revision = %o.revision_id, detail, "built-in level published")
            }
            _ => {}
        }
    }
    Ok(())
}

/// The states a revision can be in (the filter of [`revisions`]).
pub const REVISION_STATES: [&str; 5] = ["labor", "promoted", "retired", "withdrawn", "quarantined"];

/// Which revisions to list for the operator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RevisionFilter {
    /// The level's name (case-insensitive).
    pub name: Option<String>,
    /// `labor`, `promoted`, `retired`, `withdrawn` or `quarantined`.
    pub state: Option<String>,
}

/// One revision in the operator's list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionRow {
    pub created_at: String,
    /// The newest check on the current engine (`checks::checks`' `currentCheck`).
    pub current_check: Value,
    pub engine_version: Option<String>,
    /// The level's promoted revision, if any.
    pub level_promoted: Option<String>,
    pub name: String,
    pub owner: Option<String>,
    pub parent_revision_id: Option<String>,
    pub revision_id: String,
    pub state: String,
}

/// A page of [`revisions`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionPage {
    pub current_engine: &'static str,
    pub items: Vec<RevisionRow>,
    pub next_offset: Option<usize>,
    pub total: usize,
}

/// Every revision (any state), newest first, with its level's promoted revision and, for the
/// revisions on the page, the newest check on the current engine (`null`: none yet, so a
/// promotion would be `engine_mismatch`).
pub async fn revisions(
    store: &Store,
    filter: &RevisionFilter,
    offset: usize,
    limit: usize,
) -> Result<RevisionPage, ToolError> {
    // A state no revision can have listed nothing, which read as "there are none" (a typo
    // such as `promote` for `promoted` looked like a server without promoted levels).
    if let Some(state) = filter.state.as_deref() {
        if !REVISION_STATES.contains(&state) {
            return Err(ToolError::invalid(format!(
                "unknown state {:?}; use {}",
                horst_gateway::text::clip(state, 64),
                REVISION_STATES.join(", ")
            )));
        }
    }
    let top = store.key("rev:x").matches(':').count();
    let mut rows: Vec<(u64, RevisionRow)> = Vec::new();
    let name_filter = filter.name.as_deref().map(str::to_ascii_lowercase);
    let keys: Vec<String> = store
        .scan_keys("rev:*")
        .await?
        .into_iter()
        .filter(|k| k.matches(':').count() == top)
        .collect();
    for k in keys {
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(&k)
            .arg(&[
                "revisionId",
                "name",
                "owner",
                "createdAtMs",
                "engineVersion",
                "parentRevisionId",
            ])
            .query_async(&mut store.conn())
            .await?;
        let get = |i: usize| v.get(i).cloned().flatten();
        let (Some(id), Some(name)) = (get(0), get(1)) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if name_filter.as_deref().is_some_and(|n| n != lower) {
            continue;
        }
        let state: Option<String> = store
            .conn()
            .get(store.key(&format!("rev:{id}:state")))
            .await?;
        let state = state.unwrap_or_else(|| "labor".into());
        if filter.state.as_deref().is_some_and(|s| s != state) {
            continue;
        }
        let promoted: Option<String> = store
            .conn()
            .get(store.key(&format!("level:{lower}:promoted")))
            .await?;
        let created: u64 = get(3).and_then(|t| t.parse().ok()).unwrap_or(0);
        rows.push((
            created,
            RevisionRow {
                created_at: horst_dates::rfc3339_ms(created),
                current_check: Value::Null,
                engine_version: get(4),
                level_promoted: promoted,
                name,
                owner: get(2),
                parent_revision_id: get(5).filter(|p| !p.is_empty()),
                revision_id: id,
                state,
            },
        ));
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    let total = rows.len();
    let mut items: Vec<RevisionRow> = rows
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(_, v)| v)
        .collect();
    for item in &mut items {
        item.current_check = horst_gateway::checks::checks(store, &item.revision_id)
            .await?
            .get_mut("currentCheck")
            .map(Value::take)
            .unwrap_or(Value::Null);
    }
    let end = offset + items.len();
    Ok(RevisionPage {
        current_engine: horst_engine::engine_version(),
        items,
        next_offset: (end < total).then_some(end),
        total,
    })
}
