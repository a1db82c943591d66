//! Runs the engine benchmark's tick loop only (no timing), for counting instructions:
//!
//! cargo build --profile bench -p horst-engine --example ticks
//! valgrind --tool=callgrind target/release/examples/ticks 300000
//!
//! Replays the benchmark's winning replay of `levels/15-sechzehn-feinde.map` (16 enemies,
//! `benches/sechzehn-feinde.replay.json`: README.md there) from a fresh clone, again and
//! again, until at least N ticks (first argument, default 300,000) have run, then prints
//! the ticks and the final state hash (so a change in behaviour shows).

use horst_engine::{parse_map, parse_replay_json, Sim, Status};
use std::hint::black_box;
use std::path::PathBuf;

fn main() {
    let target: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300_000);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let name = "15-sechzehn-feinde";
    let text = std::fs::read_to_string(dir.join(format!("{name}.map"))).expect("level");
    let map = parse_map(&text).expect("valid level");
    let rp = parse_replay_json(include_str!("../benches/sechzehn-feinde.replay.json"))
        .expect("valid replay");
    let flat: Vec<u8> = rp
        .actions
        .iter()
        .flat_map(|s| std::iter::repeat_n(s.action, s.ticks as usize))
        .collect();
    let fresh = Sim::new(&map, rp.seed);
    let mut ticks: u64 = 0;
    let mut last = fresh.clone();
    while ticks < target {
        let mut sim = fresh.clone();
        for &a in &flat {
            sim.step(black_box(a));
            if sim.status() != Status::Running {
                break;
            }
        }
        ticks += sim.tick() as u64;
        last = black_box(sim);
    }
    println!(
        "ticks: {ticks}, last run: {:?} after {} ticks, stateHash {}",
        last.status(),
        last.tick(),
        last.state_hash()
    );
}
