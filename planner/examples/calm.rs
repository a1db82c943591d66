//! The calm route of one level (`horst_planner::calm`), its report and every input's window:
//! a tool for looking at what the planner's last step makes of a level.
//!
//! cargo run --release -p horst-planner --example calm -- FILE [seed] [budget-ticks]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: calm FILE [seed] [budget-ticks]");
    let seed: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let budget: u64 = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(horst_planner::calm::CALM_TICKS);
    let text = std::fs::read_to_string(path).expect("read map");
    let map = horst_engine::parse_map(&text).unwrap_or_else(|r| panic!("{}", r.summary()));
    let calm = horst_planner::calm::calm_route(
        &map,
        seed,
        budget,
        horst_planner::calm::MAX_BYTES,
        &|| false,
    );
    eprintln!(
        "expanded {} stands, {} referee ticks",
        calm.expanded, calm.work_ticks
    );
    let Some(steps) = calm.steps else {
        eprintln!("no calm route within the budget");
        return;
    };
    let replay = horst_engine::Replay {
        seed,
        actions: steps,
    };
    let line: Vec<String> = replay
        .actions
        .iter()
        .map(|s| format!("{}x{}", s.action, s.ticks))
        .collect();
    eprintln!("{}", line.join(" "));
    match horst_feasibility::assess_windows(&map, &replay) {
        Some((report, windows)) => eprintln!(
            "won; verdict {} ({} inputs, complete {}), windows {:?}",
            report.verdict.as_str(),
            report.inputs,
            report.complete,
            windows
        ),
        None => eprintln!("the route does not win in the referee"),
    }
    println!("{}", serde_json::to_string(&replay).unwrap());
}
