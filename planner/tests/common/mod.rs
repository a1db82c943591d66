//! What the planner's integration tests share: where the levels are, and which of them have a
//! known winning replay.

use horst_engine::{parse_map, Map};
use horst_planner::{plan, PlanReport, PlanRequest};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The repository's root (the levels live in `levels/`, `levels/corpus/` and
/// `levels/probes/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A level file, parsed; a broken file fails the test with its path.
pub fn load(p: &Path) -> Map {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    parse_map(&text).unwrap_or_else(|r| panic!("{}: {}", p.display(), r.summary()))
}

/// Every map with a winning replay beside it (`NAME.replay.json`), in `levels/`,
/// `levels/corpus/` (generated) and `levels/probes/` (written by hand), in name order: (name,
/// map, the replay's text).
#[allow(dead_code)] // probes.rs reads its own levels
pub fn with_replays() -> Vec<(String, Map, String)> {
    let mut out = Vec::new();
    for dir in ["levels", "levels/corpus", "levels/probes"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "map"))
            .collect();
        paths.sort();
        for p in paths {
            let Ok(replay) = std::fs::read_to_string(p.with_extension("replay.json")) else {
                continue;
            };
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((name, load(&p), replay));
        }
    }
    out
}

/// The planner on `map` as a playtest runs it (seed 1, the default memory budget), within
/// `secs`, on a pool of `threads`.
#[allow(dead_code)] // heuristic.rs does not plan
pub fn plan_for(map: &Map, secs: f64, threads: usize) -> PlanReport {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let cancel = AtomicBool::new(false);
    let req = PlanRequest {
        map,
        seed: 1,
        time_limit: Duration::from_secs_f64(secs),
        cancel: &cancel,
        memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
    };
    pool.install(|| plan(&req, None))
}
