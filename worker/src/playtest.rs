//! `playtest`: the planner's search within the job's time limit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use horst_planner::{plan, PlanOutcome, PlanRequest, Progress, UnresolvedReason};
use horst_queue::{Failure, FailureCode, JobProgress, JobResult};

use crate::engine_runner::{opaque, outcome_of};
use crate::ProgressSlot;

/// Runs on the worker's rayon pool (the caller installs it). An `unresolved` search is a
/// successful job (the planner answered); only cancellation from outside is a failure.
pub(crate) fn playtest(
    map: &horst_engine::Map,
    seed: u32,
    limit: Duration,
    memory_budget_bytes: Option<u64>,
    cancel: &AtomicBool,
    progress: &ProgressSlot,
) -> Result<JobResult, Failure> {
    // Leave a little of the limit for shortening and confirming the replay, so the worker's
    // own deadline (which fails the job) is not what ends a search that found something.
    let budget = limit
        .saturating_sub(Duration::from_millis(500))
        .max(Duration::from_millis(100));
    // The most the search held at any report: the progress shows it, so an operator sees which
    // jobs come near the memory budget before one reaches it.
    let peak = AtomicU64::new(0);
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
                peak_memory_mib: Some(
                    (peak.fetch_max(p.bytes, Ordering::Relaxed).max(p.bytes)).div_ceil(1 << 20),
                ),
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
            FailureCode::Cancelled,
            "the playtest was stopped before it finished",
        ));
    }
    tracing::debug!(
        memory_budget_bytes,
        expanded = report.expanded,
        ms = report.elapsed.as_millis() as u64,
        won = report.won(),
        reason = report.reason().map(|r| r.as_str()),
        won_by_stage = report.won_by.map(|w| w.stage),
        won_by_weight = report.won_by.map(|w| w.weight),
        "playtest searched"
    );
    // The planner's replay, judged for a person: its windows, and a warning when it needs an
    // input on one exact tick. Bounded by the report's work budget (about 0.1 s), which the
    // half second left above covers.
    let feasibility = report
        .replay()
        .and_then(|replay| horst_feasibility::assess(map, replay));
    let result = horst_planner::PlaytestResult::new(map, seed, &report);
    let warnings = horst_feasibility::warnings(feasibility.as_ref());
    playtest_result(&horst_feasibility::Assessed {
        result,
        feasibility,
        warnings,
    })
    .map(JobResult::Playtest)
}

/// The planner's answer as the job contract's result.
pub(crate) fn playtest_result(
    assessed: &horst_feasibility::Assessed<horst_planner::PlaytestResult>,
) -> Result<horst_queue::PlaytestResult, Failure> {
    let r = &assessed.result;
    Ok(horst_queue::PlaytestResult {
        outcome: outcome_of(r.outcome),
        won: r.won,
        ticks: r.ticks,
        seed: r.seed,
        map_hash: r.map_hash.clone(),
        replay: r.replay.as_ref().map(opaque).transpose()?,
        engine_version: r.engine_version.to_string(),
        policy_version: r.policy_version.to_string(),
        reason: r.reason.map(|x| x.as_str().to_string()),
        proof: r.proof.map(|p| p.as_str().to_string()),
        explored: r.explored,
        best_distance: r.best_distance,
        hint: r.hint.clone(),
        feasibility: assessed.feasibility.as_ref().map(opaque).transpose()?,
        warnings: assessed
            .warnings
            .iter()
            .map(opaque)
            .collect::<Result<_, _>>()?,
    })
}
