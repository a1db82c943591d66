//! Runs the unsolvability proofs (validation's relaxed check, the `relaxed_graph` proof; the
//! jump envelope; the replay limit's lower bound on the tick of a win) on maps and prints what
//! they found, with the planner's own tile graph (the heuristic's, no longer a proof) beside them:
//! cargo run --release -p horst-planner --example prove -- levels/corpus/*.map
use horst_planner::envelope::prove;
use horst_planner::relaxed::Relaxed;
use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let map = match horst_engine::parse_map(&text) {
            Ok(m) => m,
            Err(r) => {
                println!("{path}: invalid: {}", r.summary());
                continue;
            }
        };
        let t = Instant::now();
        let checked = horst_engine::format::reach::nests_reached(&map, map.nests());
        let relaxed = checked.iter().any(|&r| r);
        let graph = Relaxed::new(&map).nest_reachable;
        let p = prove(&map);
        let tb = Instant::now();
        let ticks = horst_planner::timebound::min_win_ticks(&map);
        let tb = tb.elapsed().as_secs_f64() * 1e3;
        println!(
            "{:<50} relaxed {:<9} envelope {:<11} sites {:>5} reached {:>5} states {:>8} win no sooner than tick {:>6} ({:.2} ms) {:>7.2} ms (tile graph {})",
            path,
            if relaxed { "reach" } else { "UNREACH" },
            if !p.tried { "not tried" } else if p.unreachable() { "UNREACH" } else { "reach" },
            p.sites,
            p.reached,
            p.states,
            ticks,
            tb,
            t.elapsed().as_secs_f64() * 1e3,
            if graph { "reach" } else { "unreach" }
        );
    }
}
