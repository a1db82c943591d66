//! `playtest`: the planner's search within the job's time limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use horst_planner::{plan, PlanOutcome, PlanRequest, PlaytestResult, Progress, UnresolvedReason};
use horst_queue::{Failure, JobProgress};

use crate::ProgressSlot;
use serde_json::Value;

/// Runs on the worker's rayon pool (the caller installs it). An `unresolved` search is a
/// successful job (the planner answered); only cancellation from outside is a failure.
pub(crate) fn playtest(
    map: &horst_engine::Map,
    seed: u32,
    limit: Duration,
    memory_budget_bytes: Option<u64>,
    cancel: &AtomicBool,
    progress: &ProgressSlot,
) -> Result<Value, Failure> {
    // Leave a little of the limit for shortening and confirming the replay, so the worker's
    // own deadline (which fails the job) is not what ends a search that found something.
    let budget = limit
        .saturating_sub(Duration::from_millis(500))
        .max(Duration::from_millis(100));
    let report = plan(
        &PlanRequest {
            map,
            seed,
            time_limit: budget,
            cancel,
            memory_budget_bytes: memory_budget_bytes.or(Some(horst_planner::DEFAULT_MEMORY_BUDGET)),
        },
        Some(&|p: &Progress| {
            progress.set(JobProgress {
                elapsed_seconds: (p.elapsed.as_millis() / 100) as f64 / 10.0,
                states_explored: p.expanded,
                best_distance: (p.best_distance != u32::MAX).then_some(p.best_distance),
                stage: p.stage,
            })
        }),
    );
    if matches!(
        report.outcome,
        PlanOutcome::Unresolved {
            reason: UnresolvedReason::Cancelled
        }
    ) && cancel.load(Ordering::SeqCst)
    {
        return Err(Failure::new(
            "cancelled",
            "the playtest was stopped before it finished",
        ));
    }
    tracing::debug!(
        memory_budget_bytes,
        expanded = report.expanded,
        ms = report.elapsed.as_millis() as u64,
        won = report.won(),
        reason = report.reason().map(|r| r.as_str()),
        "playtest searched"
    );
    // The planner's replay, judged for a person: its windows, and a warning when it needs an
    // input on one exact tick. Bounded by the report's work budget (about 0.1 s), which the
    // half second left above covers.
    let feasibility = report
        .replay()
        .and_then(|replay| horst_feasibility::assess(map, replay));
    let assessed = horst_feasibility::Assessed {
        result: PlaytestResult::new(map, seed, &report),
        warnings: horst_feasibility::warnings(feasibility.as_ref()),
        feasibility,
    };
    serde_json::to_value(assessed)
        .map_err(|e| Failure::new("internal_error", format!("cannot encode the result: {e}")))
}
