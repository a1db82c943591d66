//! The real job runner: the referee for `simulate` and `submit`, the planner for `playtest`.
//!
//! Input shapes are the queue's (`{map, seed?, replay?}`); the gateway has already checked
//! the contract's input limits, but a worker must not trust what it reads from Redis
//! either, so every parse failure is a clean `Failure`, never a panic.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use horst_engine::{engine_version, parse_map, parse_replay, referee_until, POLICY_VERSION};
use horst_queue::{Failure, JobKind};
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

fn map_of(input: &Value) -> Result<horst_engine::Map, Failure> {
    let text = input
        .get("map")
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::new("invalid_input", "the job has no map"))?;
    parse_map(text).map_err(|report| {
        let mut f = Failure::new(
            "validation_failed",
            "the map is invalid; call validate_map for every error with its line, column and a hint",
        );
        f.details = json!({ "errors": report.errors });
        f
    })
}

fn versions(mut report: Value) -> Value {
    if let Value::Object(m) = &mut report {
        m.insert("engineVersion".into(), json!(engine_version()));
        m.insert("policyVersion".into(), json!(POLICY_VERSION));
    }
    report
}

impl JobRunner for EngineRunner {
    fn run(
        &self,
        kind: JobKind,
        input: &Value,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Result<Value, Failure> {
        self.run_with_progress(kind, input, limit, cancel, &ProgressSlot::default())
    }

    fn run_with_progress(
        &self,
        kind: JobKind,
        input: &Value,
        limit: Duration,
        cancel: &AtomicBool,
        progress: &ProgressSlot,
    ) -> Result<Value, Failure> {
        let map = map_of(input)?;
        match kind {
            JobKind::Simulate | JobKind::Submit | JobKind::Recheck => {
                let replay = input
                    .get("replay")
                    .ok_or_else(|| Failure::new("invalid_input", "the job has no replay"))
                    .and_then(|v| {
                        parse_replay(v).map_err(|e| Failure::new(e.code(), e.message()))
                    })?;
                let report = referee_until(&map, &replay, &|| cancel.load(Ordering::Relaxed))
                    .ok_or_else(|| {
                        Failure::new(
                            "cancelled",
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
                serde_json::to_value(&assessed).map(versions).map_err(|e| {
                    Failure::new("internal_error", format!("cannot encode the report: {e}"))
                })
            }
            JobKind::Playtest => {
                let seed = input.get("seed").and_then(Value::as_u64).unwrap_or(1);
                let seed = u32::try_from(seed)
                    .map_err(|_| Failure::new("invalid_input", "seed must be 0-4294967295"))?;
                let memory = self.job_memory_bytes;
                self.pool.install(|| {
                    crate::playtest::playtest(&map, seed, limit, memory, cancel, progress)
                })
            }
        }
    }
}
