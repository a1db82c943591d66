//! The planner: searches a winning replay for a level.
//!
//! Weighted best-first search over macro-actions (an action held for several ticks) with a
//! deduplicated, quantised state key, a heuristic from the breadth-first distance over a
//! relaxed tile graph (`relaxed`), and iterative refinement: a coarse stage (large cells, long
//! holds) first, then a finer one. Nodes are expanded in batches on the current rayon pool and
//! merged in a fixed order, so the replay found never depends on the number of threads. A found
//! replay is shortened, run-length encoded and confirmed by the referee (`shorten`), then
//! relaxed for a person (`horst_feasibility::relax`: wider input windows where the fastest
//! route needs exact ticks a person need not hit) and confirmed again.
//!
//! In every stage two searches of different heuristic weights race (`search::RACERS`), batch
//! by batch, and the first win in a fixed order answers: decided by expansion counts, not the
//! clock, so the answer is the same on every run and thread count. The heuristic counts the
//! time until a platform arrives and carries the bird (`search::Ctx::heuristic`).
//!
//! Before any search, two over-approximations of where the bird can go try to prove the level
//! unsolvable: the relaxed tile graph forwards from the start, and the jump envelope
//! (`envelope`: exact vertical physics between launch sites, horizontal speed as a bound). If
//! either reaches no nest, the answer is `unresolved` (reason `unreachable`, with the proof) at
//! once. A search that exhausts a stage's quantised space proves nothing (the key drops
//! information, the holds are a choice), so the next, finer stage goes on, and the last one
//! (every phase and the tick in the key) runs until the time limit, less the part kept for
//! shortening a win ([`shorten::shorten_reserve`], a fifth of the limit at most); the answer is
//! then `unresolved` with reason `time_limit`. Only if the last stage runs out of states before
//! that does the exact check (`exact`) follow every input tick by tick in the time left: the
//! third proof (`exhaustive`, every run dies) or a win, else the clock ends it as before. Architecture invariant
//! (tests/corpus.rs): no level with a known winning replay is answered `unresolved` before
//! that.
//!
//! Nothing that decides the search order or the shortening uses floats, hash-map iteration or
//! the clock; the clock only stops the search at its deadline. So a win comes back as the same
//! replay on every run, thread count and machine; only whether it is found before the deadline
//! depends on the machine's speed.
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
//!     memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
//! };
//! // The progress callback is optional; build it inside `install` (it need not be `Sync`).
//! let report = pool.install(|| horst_planner::plan(&req, None));
//! serde_json::to_value(horst_planner::PlaytestResult::new(map, 1, &report)).unwrap()
//! # }
//! ```
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod calm;
pub mod envelope;
pub mod exact;
pub mod memory;
pub mod relaxed;
pub mod search;
pub mod shorten;
pub mod timebound;

use horst_engine::{Map, Replay};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use search::{plan, plan_with, RacerSpec, SearchOptions};

/// The memory budget of one search when the caller names none elsewhere: 512 MiB, the
/// worker's default `worker.job_memory_mib`.
pub const DEFAULT_MEMORY_BUDGET: u64 = 512 << 20;

/// What to plan: a map, a seed, a time budget, a flag that cancels the search when set, and
/// the bytes the search may hold at most.
pub struct PlanRequest<'a> {
    pub map: &'a Map,
    pub seed: u32,
    pub time_limit: Duration,
    pub cancel: &'a AtomicBool,
    /// The bytes the search's own data may take at most (its nodes, keys, open list and
    /// simulation snapshots, counted from their capacities, see `memory`); reaching it ends
    /// the search as `memory_limit`. `None`: no budget but the state count (offline tools).
    pub memory_budget_bytes: Option<u64>,
}

/// Why no replay was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnresolvedReason {
    /// Before any search: no nest is reachable even in an over-approximation of the bird's
    /// motion, or none within the replay limit ([`Proof`]), so no replay can win. The only
    /// answer that is a proof.
    Unreachable,
    /// The time limit ran out (or the search's state count, which stands in for it). Not a
    /// proof: the level may still be winnable.
    TimeLimit,
    /// The search's memory budget (`PlanRequest::memory_budget_bytes`) ran out. Not a proof:
    /// the level may still be winnable.
    MemoryLimit,
    /// The cancel flag was set.
    Cancelled,
}

impl UnresolvedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            UnresolvedReason::Unreachable => "unreachable",
            UnresolvedReason::TimeLimit => "time_limit",
            UnresolvedReason::MemoryLimit => "memory_limit",
            UnresolvedReason::Cancelled => "cancelled",
        }
    }
}

/// Which over-approximation proved a level unsolvable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Proof {
    /// The relaxed tile graph (`relaxed`): walls, spikes and cracked rock no pebble can reach
    /// cut every path of tiles from the start to a nest, even ignoring timing and momentum.
    RelaxedGraph,
    /// The jump envelope (`envelope`): the bird's exact vertical physics between launch sites
    /// and its running speed as a bound reach no nest (a gap too wide, a ledge too high).
    JumpEnvelope,
    /// The exact check (`exact`): every run from the start, followed tick by tick with each
    /// of the 20 actions, dies before a win (within a bound of distinct states; only on a
    /// level whose runs the seed does not change). Tried only when the search ran out of
    /// states to expand before its time limit.
    Exhaustive,
    /// The replay limit (`timebound`): every row between the start and a nest is passed
    /// through its openings, and the sideways distance from opening to opening at the run
    /// speed takes more ticks than a replay may last (36,000); or the same for the columns
    /// between them, the distance up and down at the fastest the bird rises or falls.
    ReplayLimit,
}

impl Proof {
    pub fn as_str(self) -> &'static str {
        match self {
            Proof::RelaxedGraph => "relaxed_graph",
            Proof::JumpEnvelope => "jump_envelope",
            Proof::Exhaustive => "exhaustive",
            Proof::ReplayLimit => "replay_limit",
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
    /// Nodes expanded (over all stages): the states explored.
    pub expanded: u64,
    pub elapsed: Duration,
    /// The smallest relaxed-graph distance (tiles) to a nest of any state reached; `None` when
    /// the level was proved unreachable (no distance is finite then).
    pub best_distance: Option<u32>,
    /// The proof behind reason `unreachable`.
    pub proof: Option<Proof>,
    /// The most bytes the search held at once (see `memory`).
    pub peak_bytes: u64,
    /// Which stage and which of the racing searches found the win.
    pub won_by: Option<WonBy>,
}

/// Where a win was found: the refinement stage (0 = coarsest) and the racer (index into
/// `search::RACERS`) with the weight of its heuristic. For the operator and the benchmarks
/// (`horst map solve` prints it, the worker logs it), not in `playtest_map`'s answer: which of
/// the planner's searches won is no help to an agent building a level, and changes with the
/// planner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WonBy {
    pub stage: usize,
    pub racer: usize,
    pub weight: u64,
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
    pub fn reason(&self) -> Option<UnresolvedReason> {
        match &self.outcome {
            PlanOutcome::Won { .. } => None,
            PlanOutcome::Unresolved { reason } => Some(*reason),
        }
    }
    /// One line for the agent on what the answer means and what to do next (None when won).
    pub fn hint(&self) -> Option<String> {
        let reason = self.reason()?;
        Some(match (reason, self.proof) {
            (UnresolvedReason::Unreachable, Some(Proof::JumpEnvelope)) => "Proved unwinnable: no sequence of runs, jumps, egg boosts, springs, platforms and stomps can get the bird to a nest (a gap too wide, a nest too high, or a nest entered only through rock or spikes); change the map.".into(),
            (UnresolvedReason::Unreachable, Some(Proof::Exhaustive)) => "Proved unwinnable: every run, with every input on every tick, loses before it can win (the bird dies within its first ticks whatever it does: check the start, what stands on it and what moves into it); change the map.".into(),
            (UnresolvedReason::Unreachable, Some(Proof::ReplayLimit)) => "Proved unwinnable: the nest may be reachable, but the shortest way through the openings of the rows (or of the columns) between the start and the nest takes more than the 36,000 ticks a replay may last, even at a run (or the fastest fall) all the way; shorten the way (more openings, fewer floors or walls) or move the nest.".into(),
            (UnresolvedReason::Unreachable, _) => "Proved unwinnable: even moving more freely than the game allows, the bird cannot get from the start to a nest (a gap too wide, a nest too high, or walls, spikes or cracked rock that no pebble can reach in the way); change the map.".into(),
            (UnresolvedReason::TimeLimit, _) => format!(
                "Not a proof: the search ran out of time after {} states, at best {} tiles from a nest; the level may still be winnable (long waits and exact timing are the hardest to find): prove it with your own replay in simulate_replay, or make that part easier.",
                self.expanded,
                self.best_distance.map_or("?".to_string(), |d| d.to_string())
            ),
            (UnresolvedReason::MemoryLimit, _) => format!(
                "Not a proof: the search ran out of its memory budget after {} states, at best {} tiles from a nest; the level may still be winnable: prove it with your own replay in simulate_replay, or make it smaller or simpler (fewer crumbling ledges, enemies and platforms make every state smaller).",
                self.expanded,
                self.best_distance.map_or("?".to_string(), |d| d.to_string())
            ),
            (UnresolvedReason::Cancelled, _) => "Not a proof: the search was stopped before it finished.".into(),
        })
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
    /// Bytes the search holds now (see `memory`).
    pub bytes: u64,
    /// States waiting to be expanded (the open list).
    pub open: u64,
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
    /// Why it is unresolved: `unreachable` (proved, see `proof`), `time_limit` or
    /// `memory_limit` (neither a proof); absent when won.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<UnresolvedReason>,
    /// With reason `unreachable`: `relaxed_graph`, `jump_envelope`, `replay_limit` or `exhaustive`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
    /// States the search explored (0 when a proof answered before any search).
    pub explored: u64,
    /// The smallest distance (tiles, over the relaxed tile graph) from a nest the bird got to;
    /// 0 when won, absent when unreachable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_distance: Option<u32>,
    /// One line on what the answer means and what to do; absent when won.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
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
            reason: report.reason(),
            proof: report.proof,
            explored: report.expanded,
            best_distance: report.best_distance,
            hint: report.hint(),
        }
    }
}
