//! The planner: searches a winning replay for a level.
//!
//! Weighted best-first search over macro-actions (an action held for several ticks) with a
//! deduplicated, quantised state key, a heuristic from the breadth-first distance over a
//! relaxed tile graph (`relaxed`), and iterative refinement: a coarse stage (large cells, long
//! holds) first, then a finer one. Nodes are expanded in batches on the current rayon pool and
//! merged in a fixed order, so the replay found never depends on the number of threads. A found
//! replay is shortened, run-length encoded and confirmed by the referee (`shorten`).
//!
//! Before any search, two over-approximations of where the bird can go try to prove the level
//! unsolvable: the relaxed tile graph forwards from the start, and the jump envelope
//! (`envelope`: exact vertical physics between launch sites, horizontal speed as a bound). If
//! either reaches no nest, the answer is `unresolved` (reason `unreachable`) at once. When they
//! cannot decide, the search runs; if it exhausts the coarse stage's quantised space, the answer
//! is `unresolved` (reason `exhausted`).
//!
//! Nothing that decides the search order uses floats, hash-map iteration or the clock; the
//! clock only stops the search at the deadline.
//!
//! A worker runs it on its own pool and answers `playtest_map` with [`PlaytestResult`]:
//!
//! ```no_run
//! # fn demo(map: &horst_engine::Map, pool: &rayon::ThreadPool) -> serde_json::Value {
//! use std::sync::atomic::AtomicBool;
//! use std::time::Duration;
//! let cancel = AtomicBool::new(false); // set it to stop the search early
//! let req = horst_planner::PlanRequest {
//!     map,
//!     seed: 1,
//!     time_limit: Duration::from_secs(20),
//!     cancel: &cancel,
//! };
//! // The progress callback is optional; build it inside `install` (it need not be `Sync`).
//! let report = pool.install(|| horst_planner::plan(&req, None));
//! serde_json::to_value(horst_planner::PlaytestResult::new(map, 1, &report)).unwrap()
//! # }
//! ```
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod envelope;
pub mod relaxed;
pub mod search;
pub mod shorten;

use horst_engine::{Map, Replay};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use search::plan;

/// What to plan: a map, a seed, a time budget and a flag that cancels the search when set.
pub struct PlanRequest<'a> {
    pub map: &'a Map,
    pub seed: u32,
    pub time_limit: Duration,
    pub cancel: &'a AtomicBool,
}

/// Why no replay was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum UnresolvedReason {
    /// The whole reachable (quantised) state space was searched without a win.
    Exhausted,
    /// Before any search: no nest is reachable even in an over-approximation of the bird's
    /// motion (the relaxed tile graph or the jump envelope), so no replay can win.
    Unreachable,
    /// The time limit (or the node budget) ran out.
    Deadline,
    /// The cancel flag was set.
    Cancelled,
}

impl UnresolvedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            UnresolvedReason::Exhausted => "exhausted",
            UnresolvedReason::Unreachable => "unreachable",
            UnresolvedReason::Deadline => "deadline",
            UnresolvedReason::Cancelled => "cancelled",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanOutcome {
    /// A replay the referee confirmed as `won`; `ticks` is the tick of the win.
    Won {
        replay: Replay,
        ticks: u32,
    },
    Unresolved {
        reason: UnresolvedReason,
    },
}

#[derive(Clone, Debug)]
pub struct PlanReport {
    pub outcome: PlanOutcome,
    /// Nodes expanded (over all stages).
    pub expanded: u64,
    pub elapsed: Duration,
    /// The smallest relaxed-graph distance (tiles) to a nest of any state reached.
    pub best_distance: u32,
}

impl PlanReport {
    pub fn won(&self) -> bool {
        matches!(self.outcome, PlanOutcome::Won { .. })
    }
    pub fn replay(&self) -> Option<&Replay> {
        match &self.outcome {
            PlanOutcome::Won { replay, .. } => Some(replay),
            PlanOutcome::Unresolved { .. } => None,
        }
    }
}

/// Reported to the progress callback about ten times a second.
#[derive(Clone, Debug)]
pub struct Progress {
    pub expanded: u64,
    pub best_distance: u32,
    pub elapsed: Duration,
    /// The refinement stage (0 = coarsest).
    pub stage: usize,
    /// Distinct states kept so far in this stage.
    pub states: u64,
}

/// The object `playtest_map` returns (the gateway adds `jobId` and `remaining`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaytestResult {
    /// `won` or `unresolved`.
    pub outcome: &'static str,
    pub won: bool,
    /// The tick of the win; 0 when unresolved.
    pub ticks: u32,
    pub seed: u32,
    pub map_hash: String,
    /// The winning replay, or null.
    pub replay: Option<Replay>,
    pub engine_version: &'static str,
    pub policy_version: &'static str,
}

impl PlaytestResult {
    pub fn new(map: &Map, seed: u32, report: &PlanReport) -> PlaytestResult {
        let (outcome, won, ticks, replay) = match &report.outcome {
            PlanOutcome::Won { replay, ticks } => ("won", true, *ticks, Some(replay.clone())),
            PlanOutcome::Unresolved { .. } => ("unresolved", false, 0, None),
        };
        PlaytestResult {
            outcome,
            won,
            ticks,
            seed,
            map_hash: map.hash(),
            replay,
            engine_version: horst_engine::engine_version(),
            policy_version: horst_engine::POLICY_VERSION,
        }
    }
}
