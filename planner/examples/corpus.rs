//! The planner benchmark: runs the planner on every level of the corpus and prints, per tier
//! and in total, the solve rate within the time limit, the median and p90 time to solve, the
//! replay length against the best known replay, and the states expanded per second.
//!
//! cargo run --release -p horst-planner --example corpus -- [--threads 1,2] [--time-limit 20]
//!     [--filter TEXT] [--write-replays] [--seed 1] [--busy N] [--racers 40:1,160:1]
//!     [--no-arrival] [--absolute-ride] [--loose-heuristic] [--expansions N] [--dir DIR]
//!
//! `--dir DIR` runs the maps of DIR instead of the corpus (tier from the file name; a held-out
//! set of `gen_corpus -- DIR --heldout SEED`).
//!
//! `--expansions N` also stops each search after N expansions (answer `time_limit`): a budget
//! that does not depend on the machine's load, for comparing versions on a busy machine.
//! `--racers W:P,...` races searches of heuristic weight W, each expanding a batch every P-th
//! round (the default is `search::RACERS`; `--racers 40:1` is the single search of before issue
//! 27); `--no-arrival` turns off the heuristic's arrival-time term,
//! `--absolute-ride` keys a riding bird by its absolute position (as before issue 27),
//! `--loose-heuristic` drops the heuristic's bound on sideways movement in the air (as before
//! issue 27's second round). They are for comparisons.
//!
//! `--filter A,B` runs the levels whose name contains A or B. `--busy N` keeps N extra threads spinning during the run (the target "with the other core
//! busy" on a 2-core machine is `--threads 2 --busy 1`).
//!
//! Levels: `levels/*.map` (the engine author's, tiers from the table below) and
//! `levels/corpus/*.map` (tier from the file name: `t1-...` to `t4-...`, `u-...` unsolvable).
//! The best known replay of `X.map` is `X.replay.json` beside it. With `--write-replays` a
//! planner replay is written there when none exists or the planner's is shorter (the referee
//! confirms it first).

use horst_engine::{parse_map, parse_replay_json, referee, Map};
use horst_planner::{
    plan_with, PlanOutcome, PlanRequest, RacerSpec, SearchOptions, UnresolvedReason,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Tiers of the engine author's levels (they have no tier in their names).
fn top_level_tier(name: &str) -> &'static str {
    match name.get(..2).and_then(|n| n.parse::<u32>().ok()) {
        Some(1..=4) => "t1",
        Some(5..=9) => "t2",
        Some(10..=12) => "t3",
        _ => "t4",
    }
}

struct Level {
    /// In `levels/corpus/` (the top-level levels and replays belong to the engine author).
    corpus: bool,
    name: String,
    tier: String,
    path: PathBuf,
    map: Map,
    known: Option<u32>,
}

struct Run {
    won: bool,
    reason: Option<UnresolvedReason>,
    secs: f64,
    /// CPU seconds of the whole process during the search (without `--busy`, so the load of
    /// other processes on the machine does not count).
    cpu: f64,
    ticks: u32,
    expanded: u64,
    confirmed: bool,
    replay: Option<String>,
}

fn load(dir: &Path, corpus: bool, filter: &str, out: &mut Vec<Level>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "map"))
        .collect();
    paths.sort();
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if !filter.split(',').any(|f| name.contains(f)) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read map");
        let map = match parse_map(&text) {
            Ok(m) => m,
            Err(r) => {
                eprintln!("skipping invalid {}: {}", path.display(), r.summary());
                continue;
            }
        };
        let tier = if corpus {
            name.split('-').next().unwrap_or("t?").to_string()
        } else {
            top_level_tier(&name).to_string()
        };
        let known = std::fs::read_to_string(path.with_extension("replay.json"))
            .ok()
            .and_then(|t| parse_replay_json(&t).ok())
            .and_then(|r| {
                let rep = referee(&map, &r);
                rep.won.then_some(rep.ticks)
            });
        out.push(Level {
            corpus,
            name,
            tier,
            path,
            map,
            known,
        });
    }
}

/// The process's CPU time (user + system) so far, in seconds, from `/proc/self/stat` (ticks of
/// 10 ms); 0 where there is none. Counts every thread of the process (the `--busy` ones too).
fn cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (f.get(11).unwrap_or(&0) + f.get(12).unwrap_or(&0)) as f64 / 100.0
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = vec![1usize, 2];
    let mut limit = 20.0f64;
    let mut filter = String::new();
    let mut write = false;
    let mut seed = 1u32;
    let mut racers: Vec<RacerSpec> = horst_planner::search::RACERS.to_vec();
    let mut arrival_term = true;
    let mut relative_ride = true;
    let mut air_bound = true;
    let mut expansion_limit = None;
    let mut dir: Option<PathBuf> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--threads" => {
                i += 1;
                threads = args[i].split(',').map(|t| t.parse().unwrap()).collect();
            }
            "--time-limit" => {
                i += 1;
                limit = args[i].parse().unwrap();
            }
            "--filter" => {
                i += 1;
                filter = args[i].clone();
            }
            "--seed" => {
                i += 1;
                seed = args[i].parse().unwrap();
            }
            "--write-replays" => write = true,
            "--no-arrival" => arrival_term = false,
            "--absolute-ride" => relative_ride = false,
            "--loose-heuristic" => air_bound = false,
            "--dir" => {
                i += 1;
                dir = Some(PathBuf::from(&args[i]));
            }
            "--expansions" => {
                i += 1;
                expansion_limit = Some(args[i].parse().unwrap());
            }
            "--racers" => {
                i += 1;
                racers = args[i]
                    .split(',')
                    .map(|p| {
                        let (w, q) = p.split_once(':').expect("--racers W:P,...");
                        RacerSpec {
                            weight: w.parse().unwrap(),
                            period: q.parse().unwrap(),
                        }
                    })
                    .collect();
            }
            "--busy" => {
                // Keep N more threads spinning, standing in for other work on the machine.
                i += 1;
                let n: usize = args[i].parse().unwrap();
                for _ in 0..n {
                    std::thread::spawn(|| {
                        let mut x = 1u64;
                        loop {
                            x = std::hint::black_box(
                                x.wrapping_mul(6364136223846793005).wrapping_add(1),
                            );
                        }
                    });
                }
            }
            other => panic!("unknown argument {other}"),
        }
        i += 1;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut levels = Vec::new();
    if let Some(dir) = &dir {
        load(dir, true, &filter, &mut levels);
    } else {
        load(&root.join("levels"), false, &filter, &mut levels);
        load(&root.join("levels/corpus"), true, &filter, &mut levels);
    }
    println!(
        "{} levels, time limit {limit} s, seed {seed}, threads {threads:?}, racers {racers:?}, arrival term {arrival_term}, air bound {air_bound}, expansions {expansion_limit:?}",
        levels.len()
    );
    let opts = SearchOptions {
        racers: &racers,
        arrival_term,
        relative_ride,
        expansion_limit,
        air_bound,
    };
    let mut all_runs: Vec<Vec<Run>> = Vec::new();
    for &n in &threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        let mut runs = Vec::new();
        println!("\n## {n} thread(s)\n");
        println!(
            "{:<34} {:>4} {:>10} {:>8} {:>7} {:>7} {:>7} {:>9} {:>10} {:>6}",
            "level",
            "tier",
            "outcome",
            "secs",
            "cpu s",
            "ticks",
            "known",
            "expanded",
            "exp/s",
            "by"
        );
        for lv in &levels {
            let cancel = AtomicBool::new(false);
            let req = PlanRequest {
                map: &lv.map,
                seed,
                time_limit: Duration::from_secs_f64(limit),
                cancel: &cancel,
                memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
            };
            let cpu0 = cpu_secs();
            let rep = pool.install(|| plan_with(&req, None, &opts));
            let cpu = cpu_secs() - cpu0;
            let secs = rep.elapsed.as_secs_f64();
            let (won, reason, ticks, confirmed, replay) = match &rep.outcome {
                PlanOutcome::Won { replay, ticks } => {
                    let r = referee(&lv.map, replay);
                    let json = serde_json::to_string(replay).unwrap();
                    (true, None, *ticks, r.won && r.ticks == *ticks, Some(json))
                }
                PlanOutcome::Unresolved { reason } => (false, Some(*reason), 0, true, None),
            };
            println!(
                "{:<34} {:>4} {:>10} {:>8.3} {:>7.2} {:>7} {:>7} {:>9} {:>10.0} {:>6}",
                lv.name,
                lv.tier,
                if won { "won" } else { reason.unwrap().as_str() },
                secs,
                cpu,
                if won { ticks.to_string() } else { "-".into() },
                lv.known.map(|k| k.to_string()).unwrap_or("-".into()),
                rep.expanded,
                rep.expanded as f64 / secs.max(1e-6),
                rep.won_by
                    .map(|w| format!("s{}w{}", w.stage, w.weight))
                    .unwrap_or_default()
            );
            if !confirmed {
                println!("  !! REFEREE REJECTED the replay of {}", lv.name);
            }
            if write && lv.corpus && won && confirmed && lv.known.is_none_or(|k| ticks < k) {
                let p = lv.path.with_extension("replay.json");
                std::fs::write(&p, format!("{}\n", replay.as_ref().unwrap())).unwrap();
                println!("  wrote {}", p.display());
            }
            runs.push(Run {
                won,
                reason,
                secs,
                cpu,
                ticks,
                expanded: rep.expanded,
                confirmed,
                replay,
            });
        }
        summary(&levels, &runs, limit, expansion_limit.is_some());
        all_runs.push(runs);
    }
    if all_runs.len() > 1 {
        let mut same = 0;
        let mut differ = Vec::new();
        for (i, lv) in levels.iter().enumerate() {
            let r0 = &all_runs[0][i];
            let both_won = all_runs.iter().all(|r| r[i].won);
            if !both_won {
                continue;
            }
            if all_runs.iter().all(|r| r[i].replay == r0.replay) {
                same += 1;
            } else {
                differ.push(lv.name.clone());
            }
        }
        println!(
            "\nthread-count independence: {same} levels solved on every thread count with the same replay; differing: {differ:?}"
        );
    }
}

fn summary(levels: &[Level], runs: &[Run], limit: f64, by_expansions: bool) {
    let mut tiers: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, lv) in levels.iter().enumerate() {
        tiers.entry(lv.tier.clone()).or_default().push(i);
        tiers.entry("total".into()).or_default().push(i);
    }
    println!(
        "\n{:<7} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12} {:>10} {:>9} {:>11}",
        "tier",
        "levels",
        "solved",
        "median s",
        "p90 s",
        "cpu med",
        "cpu p90",
        "len/known",
        "exp/s",
        "rejected",
        "expanded"
    );
    for (tier, idx) in &tiers {
        let solvable: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&i| !levels[i].tier.starts_with('u'))
            .collect();
        let unsolvable: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&i| levels[i].tier.starts_with('u'))
            .collect();
        let mut times: Vec<f64> = solvable
            .iter()
            .filter(|&&i| runs[i].won && runs[i].secs <= limit)
            .map(|&i| runs[i].secs)
            .collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        // Time to solve over all solvable levels, an unsolved one counting as infinite: wall
        // seconds, and CPU seconds (what the time would be on an otherwise idle core).
        let sorted = |of: &dyn Fn(&Run) -> f64| {
            let mut v: Vec<f64> = solvable
                .iter()
                .map(|&i| {
                    if runs[i].won {
                        of(&runs[i])
                    } else {
                        f64::INFINITY
                    }
                })
                .collect();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v
        };
        let all_times = sorted(&|r| r.secs);
        let cpu_times = sorted(&|r| r.cpu);
        let ratio: Vec<f64> = solvable
            .iter()
            .filter_map(|&i| {
                let k = levels[i].known?;
                runs[i].won.then(|| runs[i].ticks as f64 / k as f64)
            })
            .collect();
        let mean_ratio = if ratio.is_empty() {
            f64::NAN
        } else {
            ratio.iter().sum::<f64>() / ratio.len() as f64
        };
        let exp: u64 = idx.iter().map(|&i| runs[i].expanded).sum();
        let secs: f64 = idx.iter().map(|&i| runs[i].secs).sum();
        let rejected = idx.iter().filter(|&&i| !runs[i].confirmed).count();
        let false_proofs: Vec<&str> = solvable
            .iter()
            .filter(|&&i| runs[i].reason == Some(UnresolvedReason::Unreachable))
            .map(|&i| levels[i].name.as_str())
            .collect();
        let early: Vec<&str> = solvable
            .iter()
            .filter(|&&i| !by_expansions && !runs[i].won && runs[i].secs < limit * 0.95)
            .map(|&i| levels[i].name.as_str())
            .collect();
        let solved = format!("{}/{}", times.len(), solvable.len());
        println!(
            "{:<7} {:>6} {:>9} {:>9.3} {:>9.3} {:>9.2} {:>9.2} {:>12.3} {:>10.0} {:>9} {:>11}",
            tier,
            idx.len(),
            solved,
            pct(&all_times, 0.5),
            pct(&all_times, 0.9),
            pct(&cpu_times, 0.5),
            pct(&cpu_times, 0.9),
            mean_ratio,
            exp as f64 / secs.max(1e-6),
            rejected,
            exp
        );
        if !false_proofs.is_empty() || !early.is_empty() {
            println!(
                "        FALSE PROOFS {false_proofs:?}; unresolved before the limit {early:?}"
            );
        }
        if !unsolvable.is_empty() {
            let exhausted: Vec<f64> = unsolvable
                .iter()
                .filter(|&&i| runs[i].reason == Some(UnresolvedReason::Unreachable))
                .map(|&i| runs[i].secs)
                .collect();
            let wrong = unsolvable.iter().filter(|&&i| runs[i].won).count();
            let max = exhausted.iter().cloned().fold(0.0, f64::max);
            println!(
                "        unsolvable: {}/{} reported unresolved (proved {}, max {:.3} s), {} won (!)",
                unsolvable.len() - wrong,
                unsolvable.len(),
                exhausted.len(),
                max,
                wrong
            );
        }
    }
}
