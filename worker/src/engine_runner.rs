//! The real job runner: the referee for `simulate` and `submit`, the planner for `playtest`.
//!
//! Input and result are the job contract's (`horst_queue::JobInput`, `JobResult`); the
//! result is built field by field from the engine's and the planner's reports, so a renamed
//! field fails to compile here rather than turning a result unreadable. The gateway has already checked
//! the contract's input limits, but a worker must not trust what it reads from Redis
//! either, so every parse failure is a clean `Failure`, never a panic.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use horst_engine::{engine_version, parse_map, parse_replay, referee_until, POLICY_VERSION};
use horst_queue::{Failure, FailureCode, JobInput, JobKind, JobResult, Outcome, RefereeResult};
use serde_json::{json, Value};

use crate::{JobRunner, ProgressSlot};

/// Runs jobs with the engine, the planner on its own rayon pool.
pub struct EngineRunner {
    pool: rayon::ThreadPool,
    /// What one planner run may use (`worker.job_memory_mib`); `None`: the planner's default.
    job_memory_bytes: Option<u64>,
}

impl EngineRunner {
    /// `threads` = 0: one per core.
    pub fn new(threads: usize) -> Result<EngineRunner, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("planner-{i}"))
            .build()
            .map_err(|e| format!("cannot start the planner's thread pool: {e}"))?;
        Ok(EngineRunner {
            pool,
            job_memory_bytes: None,
        })
    }

    /// Bounds each planner run to `mib` MiB (`worker.job_memory_mib`).
    pub fn with_job_memory_mib(mut self, mib: u64) -> EngineRunner {
        self.job_memory_bytes = Some(mib.saturating_mul(1 << 20));
        self
    }
}

fn map_of(input: &JobInput) -> Result<horst_engine::Map, Failure> {
    if input.map.is_empty() {
        return Err(Failure::new(
            FailureCode::InvalidInput,
            "the job has no map",
        ));
    }
    parse_map(&input.map).map_err(|report| {
        let mut f = Failure::new(
            FailureCode::ValidationFailed,
            "the map is invalid; call validate_map for every error with its line, column and a hint",
        );
        f.details = json!({ "errors": report.errors });
        f
    })
}

/// The contract's name of an engine error code (`horst_engine::EngineError::code`).
fn engine_failure(e: &horst_engine::EngineError) -> Failure {
    let code = FailureCode::parse(e.code()).unwrap_or(FailureCode::InvalidInput);
    Failure::new(code, e.message())
}

/// The contract's outcome of a report's `outcome` word.
pub(crate) fn outcome_of(word: &str) -> Outcome {
    match word {
        "won" => Outcome::Won,
        "lost" => Outcome::Lost,
        _ => Outcome::Unresolved,
    }
}

/// JSON of a part the contract passes on without reading.
pub(crate) fn opaque<T: serde::Serialize + ?Sized>(part: &T) -> Result<Value, Failure> {
    serde_json::to_value(part).map_err(|e| {
        Failure::new(
            FailureCode::InternalError,
            format!("cannot encode the report: {e}"),
        )
    })
}

/// The referee's report as the job contract's result.
pub(crate) fn referee_result(
    assessed: &horst_feasibility::Assessed<horst_engine::RefereeReport>,
) -> Result<RefereeResult, Failure> {
    let r = &assessed.result;
    Ok(RefereeResult {
        outcome: outcome_of(r.outcome),
        won: r.won,
        dead: r.dead,
        ticks: r.ticks,
        position: opaque(&r.position)?,
        death_tick: r.death_tick,
        death_cause: r.death_cause.as_ref().map(opaque).transpose()?,
        state_hash: r.state_hash.clone(),
        map_hash: r.map_hash.clone(),
        feasibility: assessed.feasibility.as_ref().map(opaque).transpose()?,
        warnings: assessed
            .warnings
            .iter()
            .map(opaque)
            .collect::<Result<_, _>>()?,
        engine_version: engine_version().to_string(),
        policy_version: POLICY_VERSION.to_string(),
    })
}

impl JobRunner for EngineRunner {
    fn run(
        &self,
        kind: JobKind,
        input: &JobInput,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        self.run_with_progress(kind, input, limit, cancel, &ProgressSlot::default())
    }

    fn run_with_progress(
        &self,
        kind: JobKind,
        input: &JobInput,
        limit: Duration,
        cancel: &AtomicBool,
        progress: &ProgressSlot,
    ) -> Result<JobResult, Failure> {
        let map = map_of(input)?;
        match kind {
            JobKind::Simulate | JobKind::Submit | JobKind::Recheck => {
                let replay = input
                    .replay
                    .as_ref()
                    .ok_or_else(|| Failure::new(FailureCode::InvalidInput, "the job has no replay"))
                    .and_then(|v| parse_replay(v).map_err(|e| engine_failure(&e)))?;
                let report = referee_until(&map, &replay, &|| cancel.load(Ordering::Relaxed))
                    .ok_or_else(|| {
                        Failure::new(
                            FailureCode::Cancelled,
                            "the referee run was stopped before it finished",
                        )
                    })?;
                // A won simulation and a submission's acceptance carry the feasibility report
                // (the submission stores it with the revision); an operator's recheck does not.
                let feasibility = match kind {
                    JobKind::Simulate | JobKind::Submit if report.won => {
                        horst_feasibility::assess(&map, &replay)
                    }
                    _ => None,
                };
                let assessed = horst_feasibility::Assessed {
                    result: report,
                    feasibility,
                    warnings: Vec::new(),
                };
                referee_result(&assessed).map(JobResult::Referee)
            }
            JobKind::Playtest => {
                let seed = u32::try_from(input.seed.unwrap_or(1)).map_err(|_| {
                    Failure::new(FailureCode::InvalidInput, "seed must be 0-4294967295")
                })?;
                let memory = self.job_memory_bytes;
                self.pool.install(|| {
                    crate::playtest::playtest(&map, seed, limit, memory, cancel, progress)
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_queue::PlaytestResult;

    fn level(name: &str) -> (String, Value) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../levels/");
        let map = std::fs::read_to_string(format!("{dir}{name}.map")).unwrap();
        let replay = std::fs::read_to_string(format!("{dir}{name}.replay.json")).unwrap();
        (map, serde_json::from_str(&replay).unwrap())
    }

    /// The contract reads back exactly what the engine's report (with its feasibility
    /// report and the versions) serialises to: no field lost, renamed or added.
    #[test]
    fn the_referees_report_is_the_contracts_result_field_for_field() {
        let (text, replay) = level("01-erste-schritte");
        let map = parse_map(&text).unwrap();
        let mut cases = vec![parse_replay(&replay).unwrap()];
        // The same replay cut short: unresolved, no feasibility report.
        let mut short = cases[0].clone();
        short.actions.truncate(1);
        cases.push(short);
        for replay in cases {
            let report = referee_until(&map, &replay, &|| false).unwrap();
            let feasibility = report
                .won
                .then(|| horst_feasibility::assess(&map, &replay))
                .flatten();
            let assessed = horst_feasibility::Assessed {
                result: report,
                feasibility,
                warnings: Vec::new(),
            };
            let mut expected = serde_json::to_value(&assessed).unwrap();
            expected["engineVersion"] = json!(engine_version());
            expected["policyVersion"] = json!(POLICY_VERSION);
            let contract = referee_result(&assessed).unwrap();
            assert_eq!(serde_json::to_value(&contract).unwrap(), expected);
            let read: RefereeResult = serde_json::from_value(expected).unwrap();
            assert_eq!(read, contract);
        }
    }

    #[test]
    fn the_planners_answer_is_the_contracts_result_field_for_field() {
        let (text, _) = level("01-erste-schritte");
        let map = parse_map(&text).unwrap();
        let cancel = AtomicBool::new(false);
        let runner = EngineRunner::new(1).unwrap();
        let input = JobInput::playtest(text.clone(), 1);
        let result = runner
            .run(JobKind::Playtest, &input, Duration::from_secs(20), &cancel)
            .unwrap();
        let JobResult::Playtest(contract) = &result else {
            panic!("a playtest gave {result:?}")
        };
        // The planner's own report of the same search, serialised as it was before the
        // contract was typed, reads back into the same result.
        let report = horst_planner::plan(
            &horst_planner::PlanRequest {
                map: &map,
                seed: 1,
                time_limit: Duration::from_secs(19),
                cancel: &cancel,
                memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
            },
            None,
        );
        let feasibility = report
            .replay()
            .and_then(|replay| horst_feasibility::assess(&map, replay));
        let assessed = horst_feasibility::Assessed {
            result: horst_planner::PlaytestResult::new(&map, 1, &report),
            warnings: horst_feasibility::warnings(feasibility.as_ref()),
            feasibility,
        };
        let expected = serde_json::to_value(&assessed).unwrap();
        let mine = crate::playtest::playtest_result(&assessed).unwrap();
        assert_eq!(serde_json::to_value(&mine).unwrap(), expected);
        let read: PlaytestResult = serde_json::from_value(expected).unwrap();
        assert_eq!(read, mine);
        assert_eq!(contract.won, mine.won, "the planner is deterministic");
    }
}
