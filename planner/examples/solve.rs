//! Plans one level and prints the replay: a development aid (the CLI is `horst map solve`).
//!
//! cargo run --release -p horst-planner --example solve -- FILE [seed] [time-limit-s] [threads]

use horst_planner::{plan, PlanRequest, PlaytestResult, Progress};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: solve FILE [seed] [time-limit] [threads]");
    let seed: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let limit: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let threads: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(path).expect("read map");
    let map = horst_engine::parse_map(&text).unwrap_or_else(|r| panic!("{}", r.summary()));
    let cancel = AtomicBool::new(false);
    let req = PlanRequest {
        map: &map,
        seed,
        time_limit: Duration::from_secs_f64(limit),
        cancel: &cancel,
        memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
    };
    let cb = |p: &Progress| {
        eprintln!(
            "stage {} expanded {} states {} open {} best distance {} elapsed {:.1}s bytes {} ({} per state)",
            p.stage,
            p.expanded,
            p.states,
            p.open,
            p.best_distance,
            p.elapsed.as_secs_f64(),
            p.bytes,
            p.bytes / p.states.max(1)
        )
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let rep = pool.install(|| plan(&req, Some(&cb)));
    // The process's peak resident memory, to compare with the search's own count.
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_string)
        })
        .unwrap_or_default();
    eprintln!(
        "expanded {} in {:.3}s, best distance {}, peak {} bytes counted, {}",
        rep.expanded,
        rep.elapsed.as_secs_f64(),
        rep.best_distance
            .map_or("none".to_string(), |d| d.to_string()),
        rep.peak_bytes,
        hwm
    );
    // The human-feasibility verdict of the replay answered (what `playtest_map` adds to it).
    if let Some(f) = rep
        .replay()
        .and_then(|r| horst_feasibility::assess(&map, r))
    {
        eprintln!(
            "feasibility {}, {} exact input(s) (ticks {:?}), tightest window {}, complete {}",
            f.verdict.as_str(),
            f.exact_inputs,
            f.exact_input_ticks,
            f.tightest.as_ref().map_or(0, |w| w.window),
            f.complete
        );
    }
    println!(
        "{}",
        serde_json::to_string(&PlaytestResult::new(&map, seed, &rep)).unwrap()
    );
}
