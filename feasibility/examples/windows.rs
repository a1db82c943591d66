//! Every input's window of a replay, and what the relaxation pass makes of it (a tool for
//! looking at one level).
//!
//! `cargo run --release -p horst-feasibility --example windows -- MAP REPLAY [-r]`

use horst_engine::{parse_map, parse_replay_json, referee};
use horst_feasibility::{assess_windows, relax, RELAX_BUDGET_TICKS};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let map = parse_map(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let replay = parse_replay_json(&std::fs::read_to_string(&args[2]).unwrap()).unwrap();
    let show = |replay: &horst_engine::Replay| {
        let (report, windows) = assess_windows(&map, replay).expect("the replay wins");
        // The replay as `action x ticks` steps.
        let mut tick = 0u32;
        let mut line = String::new();
        for s in &replay.actions {
            line.push_str(&format!("{}x{} ", s.action, s.ticks));
            tick += s.ticks as u32;
        }
        println!("{line}");
        println!(
            "verdict {:?} inputs {} exact {} ticks {} complete {} work {} windows {windows:?}",
            report.verdict,
            report.inputs,
            report.exact_inputs,
            tick,
            report.complete,
            report.work_ticks
        );
    };
    show(&replay);
    if args.iter().any(|a| a == "-r") {
        let t = std::time::Instant::now();
        let r = relax(&map, &replay, RELAX_BUDGET_TICKS).unwrap();
        println!(
            "relaxed in {:.2} s: tried {} kept {} work {} won {}",
            t.elapsed().as_secs_f64(),
            r.tried,
            r.kept,
            r.work_ticks,
            referee(&map, &r.replay).won
        );
        show(&r.replay);
    }
}
