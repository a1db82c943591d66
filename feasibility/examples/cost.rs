//! What the feasibility report costs (docs/benchmarks.md, "Feasibility report"): every
//! shipped level and every planner corpus level with a replay, then a replay built to use up
//! the whole work budget (the worst case a playtest can meet); then what the relaxation pass
//! (`relax`, which the planner runs on every win) makes of the same replays. `-v` prints each
//! replay's verdict before and after the pass.
//!
//! `cargo run --release -p horst-feasibility --example cost [-- -v]`

use std::time::{Duration, Instant};

use horst_engine::{parse_map, parse_replay_json, Map, Replay, Step};
use horst_feasibility::{assess, relax, Feasibility, RELAX_BUDGET_TICKS, WORK_BUDGET_TICKS};

/// Best of three, so a burst of other work on the machine does not count.
fn timed(map: &Map, replay: &Replay) -> (Feasibility, Duration) {
    let mut best = Duration::MAX;
    let mut report = None;
    for _ in 0..3 {
        let t = Instant::now();
        report = assess(map, replay);
        best = best.min(t.elapsed());
    }
    (report.expect("the replay wins"), best)
}

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../levels");
    let mut cases: Vec<(String, String, String)> = horst_levels::BUILTIN
        .iter()
        .map(|l| (l.name.to_string(), l.map.to_string(), l.replay.to_string()))
        .collect();
    let mut corpus: Vec<_> = std::fs::read_dir(format!("{root}/corpus"))
        .expect("levels/corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    corpus.sort();
    for p in corpus {
        let replay = p.with_extension("replay.json");
        if let (Ok(m), Ok(r)) = (
            std::fs::read_to_string(&p),
            std::fs::read_to_string(&replay),
        ) {
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            cases.push((name, m, r));
        }
    }
    let mut verdicts = std::collections::BTreeMap::new();
    let (mut total_work, mut max_work, mut total_time) =
        (0u64, (0u64, String::new()), Duration::ZERO);
    let mut max_time = (Duration::ZERO, String::new());
    let mut incomplete = 0;
    for (name, m, r) in &cases {
        let map = parse_map(m).expect("valid map");
        let replay = parse_replay_json(r).expect("valid replay");
        let (f, t) = timed(&map, &replay);
        *verdicts.entry(f.verdict.as_str()).or_insert(0) += 1;
        total_work += f.work_ticks;
        total_time += t;
        if f.work_ticks > max_work.0 {
            max_work = (f.work_ticks, name.clone());
        }
        if t > max_time.0 {
            max_time = (t, name.clone());
        }
        incomplete += usize::from(!f.complete);
    }
    println!(
        "{} replays: verdicts {verdicts:?}, {incomplete} cut by the budget",
        cases.len()
    );
    println!(
        "work: {} referee ticks in all, most {} ({}); time: {:.1} ms in all, mean {:.2} ms, most {:.2} ms ({}); {:.1} M ticks/s",
        total_work,
        max_work.0,
        max_work.1,
        total_time.as_secs_f64() * 1e3,
        total_time.as_secs_f64() * 1e3 / cases.len() as f64,
        max_time.0.as_secs_f64() * 1e3,
        max_time.1,
        total_work as f64 / total_time.as_secs_f64() / 1e6
    );
    // The worst case: the widest flat map, run right in bursts (300 inputs, about 4,500 ticks),
    // so every probe runs to the far end and the budget, not the replay, ends the work.
    let width = 512;
    let map = parse_map(&format!(
        "gcv-map 1\nname: weit\nsize: {width} 3\ngrid:\n{}\n{}\n{}\nentities:\nstart 0 1\nnest {} 1\n",
        ".".repeat(width),
        ".".repeat(width),
        "G".repeat(width),
        width - 1
    ))
    .unwrap();
    let mut actions = Vec::new();
    for _ in 0..150 {
        actions.push(Step {
            action: 8,
            ticks: 20,
        });
        actions.push(Step {
            action: 16,
            ticks: 6,
        });
    }
    actions.push(Step {
        action: 8,
        ticks: 600,
    });
    let replay = Replay { seed: 1, actions };
    let (f, t) = timed(&map, &replay);
    println!(
        "budget-bound replay: {} inputs, {} checked, complete {}, {} work ticks (budget {}), {:.1} ms, {:.1} M ticks/s",
        f.inputs,
        f.inputs_checked,
        f.complete,
        f.work_ticks,
        WORK_BUDGET_TICKS,
        t.as_secs_f64() * 1e3,
        f.work_ticks as f64 / t.as_secs_f64() / 1e6
    );
    // The relaxation pass on the same replays, timed once (it is deterministic).
    let verbose = std::env::args().any(|a| a == "-v");
    let mut verdicts = std::collections::BTreeMap::new();
    let (mut total_work, mut max_work, mut total_time) =
        (0u64, (0u64, String::new()), Duration::ZERO);
    let mut max_time = (Duration::ZERO, String::new());
    let (mut changed, mut exact_before, mut exact_after, mut slower) = (0, 0, 0, 0u64);
    for (name, m, r) in &cases {
        let map = parse_map(m).expect("valid map");
        let replay = parse_replay_json(r).expect("valid replay");
        let before = assess(&map, &replay).expect("the replay wins");
        let t = Instant::now();
        let x = relax(&map, &replay, RELAX_BUDGET_TICKS).expect("the replay wins");
        let t = t.elapsed();
        *verdicts.entry(x.report.verdict.as_str()).or_insert(0) += 1;
        changed += usize::from(x.changed);
        exact_before += before.exact_inputs;
        exact_after += x.report.exact_inputs;
        let win = |r: &Replay| horst_engine::referee(&map, r).ticks as u64;
        slower += win(&x.replay) - win(&replay).min(win(&x.replay));
        total_work += x.work_ticks;
        total_time += t;
        if x.work_ticks > max_work.0 {
            max_work = (x.work_ticks, name.clone());
        }
        if t > max_time.0 {
            max_time = (t, name.clone());
        }
        if verbose {
            println!(
                "{name:24} {:13} -> {:13} exact {:3} -> {:3} tried {:4} kept {:2} work {:8} {:6.1} ms",
                before.verdict.as_str(),
                x.report.verdict.as_str(),
                before.exact_inputs,
                x.report.exact_inputs,
                x.tried,
                x.kept,
                x.work_ticks,
                t.as_secs_f64() * 1e3
            );
        }
    }
    println!(
        "relaxed: verdicts {verdicts:?}; {changed} replays changed; exact inputs {exact_before} -> {exact_after}; the changed replays win {slower} ticks later in all"
    );
    println!(
        "relax work: {} referee ticks in all, most {} ({}); time: {:.1} ms in all, mean {:.2} ms, most {:.2} ms ({})",
        total_work,
        max_work.0,
        max_work.1,
        total_time.as_secs_f64() * 1e3,
        total_time.as_secs_f64() * 1e3 / cases.len() as f64,
        max_time.0.as_secs_f64() * 1e3,
        max_time.1,
    );
}
