//! Checks of a revision: the evidence that its stored winning replay wins on an engine.
//!
//! The first check is the submission's own (its acceptance report, in `rev:<id>`, never
//! changed). The operator adds more with a recheck: a `recheck` job re-simulates the stored
//! map and replay on a worker with the engine the worker runs. Evidence is only ever
//! appended, so checks on older engines stay readable.
//!
//! Layout (under the store prefix):
//! - `rev:<id>:checks` list: recheck records (JSON), oldest first, append-only
//! - `rev:<id>:rechecks` hash: job id -> operator, for rechecks not yet recorded
//!
//! A recheck's record is written by whoever first sees its job finished (the operator
//! waiting for it, a later `checks` read, a promotion), exactly once: the script moves the
//! job from the pending hash to the list in one step. So `--no-wait` loses nothing.
//!
//! Promotion counts the newest check on the current `engineVersion`: none is
//! `engine_mismatch`, a failing one is `check_failed`.

use horst_queue::{Admission, FailureCode, JobInput, JobKind, JobRecord, JobSpec, JobState, Queue};
use redis::AsyncCommands;
use serde_json::{json, Value};

use horst_store::Store;

use crate::error::{ErrorCode, ToolError};
use crate::keys;
use crate::scripts::{CheckRecorded, CHECK_RECORD};
use crate::{random_hex, rfc3339};

/// The queue account of operator jobs: no agent account can have this name.
pub const OPERATOR_ACCOUNT: &str = "~operator";

/// Job failures that are a verdict on the evidence (the map or replay no longer parses on
/// this engine); other failures (timeout, cancelled, internal) mean the check did not run.
const VERDICT_FAILURES: &[FailureCode] = &[
    FailureCode::ValidationFailed,
    FailureCode::InvalidInput,
    FailureCode::TooLarge,
];

/// Queues a recheck of `revision_id` for `who` and returns its job id. The check record is
/// written when the job has finished (see the module doc). The operator's action around it
/// (audit, waiting) is `horst_operator::start_recheck`.
pub async fn queue_recheck(
    store: &Store,
    queue: &Queue,
    who: &str,
    revision_id: &str,
) -> Result<String, ToolError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(keys::rev(store, revision_id))
        .arg(&["map", "replay"])
        .query_async(&mut store.conn())
        .await?;
    let (Some(map), Some(replay)) = (v.first().cloned().flatten(), v.get(1).cloned().flatten())
    else {
        return Err(ToolError::not_found(format!(
            "no revision {revision_id} with a stored map and replay; use a revision id as submit_level or list_labor shows it"
        )));
    };
    let replay: Value = serde_json::from_str(&replay).map_err(|e| {
        ToolError::internal(format!(
            "revision {revision_id}: stored replay unreadable: {e}"
        ))
    })?;
    // A fresh key per recheck: each is a deliberate new check, never an idempotent replay.
    let key = format!(
        "recheck-{}-{}",
        revision_id.chars().take(40).collect::<String>(),
        random_hex(4).map_err(ToolError::internal)?
    );
    let admission = queue
        .admit(JobSpec {
            kind: JobKind::Recheck,
            account: OPERATOR_ACCOUNT.into(),
            trust: 2,
            idempotency_key: key,
            input: JobInput::recheck(map, replay, revision_id),
        })
        .await
        .map_err(|e| match e {
            // The queue's own message speaks to agents; the operator's cap is one waiting recheck.
            horst_queue::QueueError::Busy { retry_after_seconds, .. } => ToolError::new(
ErrorCode::Busy,
                "another recheck (or the whole queue) is waiting for a worker; retry when it has started, and check that a worker runs (horst admin status)",
            )
            .with("retryAfterSeconds", retry_after_seconds),
            other => other.into(),
        })?;
    let (Admission::New(rec) | Admission::Replayed(rec)) = admission;
    let _: () = store
        .conn()
        .hset(keys::rev_rechecks(store, revision_id), &rec.id, who)
        .await?;
    Ok(rec.id)
}

/// The recorded check of one recheck job, if there is one.
pub async fn recorded(
    store: &Store,
    revision_id: &str,
    job_id: &str,
) -> Result<Option<Value>, ToolError> {
    let raw: Vec<String> = store
        .conn()
        .lrange(keys::rev_checks(store, revision_id), 0, -1)
        .await?;
    Ok(raw
        .iter()
        .rev()
        .filter_map(|r| serde_json::from_str::<Value>(r).ok())
        .find(|c| c["jobId"] == job_id))
}

/// The check record of a finished recheck job; `None` if it is not finished or gave no
/// verdict.
fn check_of(rec: &JobRecord, revision_id: &str) -> Option<Value> {
    let at = rfc3339(rec.finished_at_ms.unwrap_or(rec.created_at_ms));
    match rec.state {
        JobState::Succeeded => {
            let r = rec.result.as_ref()?.referee()?;
            Some(json!({
                "kind": "recheck",
                "revisionId": revision_id,
                "jobId": rec.id,
                "engineVersion": r.engine_version,
                "policyVersion": r.policy_version,
                "outcome": r.outcome,
                "passed": r.won,
                "stateHash": r.state_hash,
                "mapHash": r.map_hash,
                "ticks": r.ticks,
                "at": at,
            }))
        }
        JobState::Failed => {
            let f = rec.failure.as_ref()?;
            VERDICT_FAILURES.contains(&f.code).then(|| {
                json!({
                    "kind": "recheck",
                    "revisionId": revision_id,
                    "jobId": rec.id,
                    // The worker that refused the evidence runs the current engine.
                    "engineVersion": horst_engine::engine_version(),
                    "policyVersion": horst_engine::POLICY_VERSION,
                    "outcome": f.code,
                    "passed": false,
                    "stateHash": Value::Null,
                    "ticks": Value::Null,
                    "message": f.message,
                    "at": at,
                })
            })
        }
        _ => None,
    }
}

/// Records every finished recheck of `revision_id` that is not recorded yet.
pub async fn record_finished(store: &Store, revision_id: &str) -> Result<(), ToolError> {
    let pending_key = keys::rev_rechecks(store, revision_id);
    let pending: Vec<(String, String)> = store.conn().hgetall(&pending_key).await?;
    for (job_id, who) in pending {
        let rec = horst_queue::job_record(store, &job_id).await?;
        let record = match &rec {
            // Expired unseen (older than the job retention): nothing left to record.
            None => String::new(),
            Some(r) if !r.state.is_final() => continue,
            Some(r) => match check_of(r, revision_id) {
                Some(mut c) => {
                    c["by"] = json!(who);
                    c.to_string()
                }
                None => String::new(),
            },
        };
        // Whoever records it first wins; a second recorder changes nothing.
        let _: CheckRecorded = CHECK_RECORD
            .call(store)
            .key(&pending_key)
            .key(keys::rev_checks(store, revision_id))
            .arg(&job_id)
            .arg(record)
            .run()
            .await?;
    }
    Ok(())
}

/// Every check of a revision, oldest first: the submission's, then the rechecks (finished
/// ones recorded first). Rechecks still running are listed as `pending`.
pub async fn checks(store: &Store, revision_id: &str) -> Result<Value, ToolError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(keys::rev(store, revision_id))
        .arg(&[
            "revisionId",
            "engineVersion",
            "policyVersion",
            "acceptance",
            "ticks",
            "createdAtMs",
            "jobId",
            "mapHash",
        ])
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten();
    if get(0).is_none() {
        return Err(ToolError::not_found(format!("no revision {revision_id}")));
    }
    record_finished(store, revision_id).await?;
    let acceptance: Value = get(3)
        .and_then(|a| serde_json::from_str(&a).ok())
        .unwrap_or(Value::Null);
    // The submission was stored only because its replay won.
    let mut items = vec![json!({
        "kind": "submission",
        "revisionId": revision_id,
        "jobId": get(6),
        "engineVersion": get(1),
        "policyVersion": get(2).filter(|p| !p.is_empty()).or_else(|| acceptance["policyVersion"].as_str().map(str::to_string)),
        "outcome": "won",
        "passed": true,
        "stateHash": acceptance["stateHash"],
        "mapHash": get(7),
        "ticks": get(4).and_then(|t| t.parse::<u64>().ok()),
        "at": rfc3339(get(5).and_then(|t| t.parse().ok()).unwrap_or(0)),
    })];
    let raw: Vec<String> = store
        .conn()
        .lrange(keys::rev_checks(store, revision_id), 0, -1)
        .await?;
    items.extend(
        raw.iter()
            .filter_map(|r| serde_json::from_str::<Value>(r).ok()),
    );
    let pending: Vec<String> = store
        .conn()
        .hkeys(keys::rev_rechecks(store, revision_id))
        .await?;
    let engine = horst_engine::engine_version();
    let current = items
        .iter()
        .rev()
        .find(|c| c["engineVersion"] == engine)
        .cloned();
    Ok(json!({
        "revisionId": revision_id,
        "currentEngine": engine,
        "currentCheck": current,
        "items": items,
        "pending": pending,
    }))
}

/// Refuses promotion unless the newest check on the current engine passed.
pub async fn require_current_pass(store: &Store, revision_id: &str) -> Result<(), ToolError> {
    let all = checks(store, revision_id).await?;
    let engine = horst_engine::engine_version();
    match &all["currentCheck"] {
        Value::Null => {
            let seen: Vec<String> = all["items"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c["engineVersion"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            Err(ToolError::new(
ErrorCode::EngineMismatch,
                format!(
                    "revision {revision_id} has no check on the current engine {engine} (only on {}); re-check it first: horst admin level recheck {revision_id}",
                    if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
                ),
            )
            .with("engineVersion", engine))
        }
        c if c["passed"] == true => Ok(()),
        c => Err(ToolError::new(
ErrorCode::CheckFailed,
            format!(
                "the newest check of revision {revision_id} on engine {engine} did not pass (outcome {}, job {}); its replay no longer wins, so it cannot be promoted; the agent can submit a new revision",
                c["outcome"].as_str().unwrap_or("unknown"),
                c["jobId"].as_str().unwrap_or("-")
            ),
        )
        .with("jobId", c["jobId"].clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_queue::{Failure, JobResult, Outcome, RefereeResult};

    fn job(state: JobState, result: Option<JobResult>, failure: Option<Failure>) -> JobRecord {
        JobRecord {
            id: "job_1".into(),
            kind: JobKind::Recheck,
            account: OPERATOR_ACCOUNT.into(),
            trust: 2,
            state,
            idempotency_key: "k".into(),
            input: JobInput::default(),
            created_at_ms: 1_000,
            started_at_ms: Some(1_100),
            finished_at_ms: Some(1_200),
            result,
            failure,
            publication: None,
            reserved_seconds: 5,
            charged_seconds: 5,
            worker: None,
            request_id: None,
            progress: None,
            handed: false,
        }
    }

    #[test]
    fn verdicts_and_non_verdicts() {
        let won = JobResult::Referee(RefereeResult {
            won: true,
            outcome: Outcome::Won,
            engine_version: "e".into(),
            policy_version: "p".into(),
            state_hash: "h".into(),
            ticks: 9,
            ..RefereeResult::default()
        });
        let c = check_of(&job(JobState::Succeeded, Some(won), None), "r").unwrap();
        assert_eq!(c["passed"], true);
        assert_eq!(c["stateHash"], "h");
        assert_eq!(c["at"], "1970-01-01T00:00:01.200Z");
        let lost = JobResult::Referee(RefereeResult::default());
        let c = check_of(&job(JobState::Succeeded, Some(lost), None), "r").unwrap();
        assert_eq!(c["passed"], false);
        // The evidence no longer parses on this engine: a failing check.
        let bad = Failure::new(FailureCode::ValidationFailed, "the map is invalid");
        let c = check_of(&job(JobState::Failed, None, Some(bad)), "r").unwrap();
        assert_eq!(
            (c["passed"].clone(), c["outcome"].clone()),
            (json!(false), json!("validation_failed"))
        );
        // The job did not run to a verdict: nothing to record.
        let timeout = Failure::new(FailureCode::Timeout, "did not start in time");
        assert!(check_of(&job(JobState::Failed, None, Some(timeout)), "r").is_none());
        assert!(check_of(&job(JobState::Cancelled, None, None), "r").is_none());
        assert!(check_of(&job(JobState::Running, None, None), "r").is_none());
    }
}
