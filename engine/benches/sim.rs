//! Engine benchmark (no criterion: plain timing, printed figures).
//!
//! cargo bench -p horst-engine --bench sim
//!
//! Figures: ticks simulated per second on one core on the 16-enemy level (the benchmark's own
//! copy of its winning replay, `benches/sechzehn-feinde.replay.json`: README.md there, run over
//! and over), the time to referee a 36,000-tick replay, and the cost of cloning a Sim.

use horst_engine::{parse_map, parse_replay_json, referee, Replay, Sim, Status, Step};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

/// CPU time of this thread in ns (Linux `/proc/thread-self/schedstat`), so the figures stay
/// meaningful on a machine busy with other work; None elsewhere.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let name = "15-sechzehn-feinde";
    let text = std::fs::read_to_string(dir.join(format!("{name}.map"))).expect("level");
    let map = parse_map(&text).expect("valid level");
    let enemies = Sim::new(&map, 1).enemies().count();
    let rp = parse_replay_json(include_str!("sechzehn-feinde.replay.json")).expect("valid replay");
    let flat: Vec<u8> = rp
        .actions
        .iter()
        .flat_map(|s| std::iter::repeat_n(s.action, s.ticks as usize))
        .collect();

    // Ticks per second: replay the winning run again and again from a fresh clone.
    let fresh = Sim::new(&map, rp.seed);
    // BENCH_TICKS makes short runs possible (e.g. under valgrind to count instructions).
    let target_ticks: u64 = std::env::var("BENCH_TICKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30_000_000);
    let mut ticks: u64 = 0;
    let t0 = Instant::now();
    let c0 = cpu_ns();
    while ticks < target_ticks {
        let mut sim = fresh.clone();
        for &a in &flat {
            sim.step(black_box(a));
            if sim.status() != Status::Running {
                break;
            }
        }
        ticks += sim.tick() as u64;
        black_box(&sim);
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu_secs = match (c0, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => secs,
    };
    let tps = ticks as f64 / cpu_secs;

    // The same in short timed runs (one winning run each): the fastest runs are the ones no
    // other process interrupted; the median shows how busy the machine was.
    let chunks: usize = std::env::var("BENCH_CHUNKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut chunk_rates: Vec<f64> = Vec::with_capacity(chunks);
    let mut run_ticks = 0;
    let (mut timed_ticks, mut timed_secs) = (0u64, 0.0f64);
    for _ in 0..chunks {
        let t = Instant::now();
        let mut sim = fresh.clone();
        for &a in &flat {
            sim.step(black_box(a));
            if sim.status() != Status::Running {
                break;
            }
        }
        let dt = t.elapsed().as_secs_f64();
        black_box(&sim);
        run_ticks = sim.tick();
        timed_ticks += sim.tick() as u64;
        timed_secs += dt;
        chunk_rates.push(sim.tick() as f64 / dt);
    }
    chunk_rates.sort_by(|a, b| b.total_cmp(a));
    let p90 = chunk_rates
        .get(chunk_rates.len() / 10)
        .copied()
        .unwrap_or(0.0);
    let median = chunk_rates
        .get(chunk_rates.len() / 2)
        .copied()
        .unwrap_or(0.0);

    // Referee a 36,000-tick replay (standing still at the start: nothing ends it early).
    let long = Replay {
        seed: 7,
        actions: vec![
            Step {
                action: 4,
                ticks: 600
            };
            60
        ],
    };
    let mut best = f64::MAX;
    let mut total = 0.0;
    let runs = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let mut outcome = "";
    let mut last_ticks = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let r = referee(black_box(&map), black_box(&long));
        let dt = t.elapsed().as_secs_f64();
        best = best.min(dt);
        total += dt;
        outcome = r.outcome;
        last_ticks = r.ticks;
    }

    // Clone cost, as the planner pays it for every expanded state.
    let mid = {
        let mut s = fresh.clone();
        for &a in &flat[..200] {
            s.step(a);
        }
        s
    };
    let n = if target_ticks < 1_000_000 {
        1000
    } else {
        2_000_000
    };
    let t = Instant::now();
    for _ in 0..n {
        black_box(black_box(&mid).clone());
    }
    let clone_ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;

    println!("level: {name} ({enemies} enemies)");
    println!("ticks simulated: {ticks} in {secs:.3} s wall, {cpu_secs:.3} s CPU");
    println!(
        "ticks per second per core (CPU time): {:.2} million",
        tps / 1e6
    );
    println!(
        "ticks per second (wall clock): {:.2} million",
        ticks as f64 / secs / 1e6
    );
    println!(
        "ticks per second in {chunks} timed runs of the replay ({} ticks each): 90th percentile {:.2} million, median {:.2} million, overall {:.2} million",
        run_ticks,
        p90 / 1e6,
        median / 1e6,
        timed_ticks as f64 / timed_secs / 1e6
    );
    println!(
        "referee 36,000-tick replay: best {:.3} ms, mean {:.3} ms over {runs} runs ({outcome}, {last_ticks} ticks)",
        best * 1e3,
        total / runs as f64 * 1e3
    );
    println!("Sim::clone: {clone_ns:.0} ns");
}
