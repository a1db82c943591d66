//! Prints the bird's position every few ticks of a replay (a development aid).
//! cargo run --release -p horst-planner --example trace -- MAP REPLAY [every]
use horst_engine::{parse_map, parse_replay_json, Sim, Status};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let map = parse_map(&std::fs::read_to_string(&a[1]).unwrap())
        .unwrap_or_else(|r| panic!("{}", r.summary()));
    if a.len() == 3 && a[2] == "--numbers" {
        // The heuristic's distances in tiles, one row per line.
        let r = horst_planner::relaxed::Relaxed::for_search(&map);
        for y in -3..map.height() {
            let row: Vec<String> = (0..map.width())
                .map(|x| match r.at(x, y) {
                    d if d > r.max_dist => " #".to_string(),
                    d => format!("{d:2}"),
                })
                .collect();
            println!("{y:3} {}", row.join(" "));
        }
        return;
    }
    if a.len() == 2 {
        let r = horst_planner::relaxed::Relaxed::for_search(&map);
        for y in -3..map.height() {
            let row: String = (0..map.width())
                .map(|x| {
                    let d = r.at(x, y);
                    if d > r.max_dist {
                        '#'
                    } else {
                        char::from_digit(d % 36, 36).unwrap()
                    }
                })
                .collect();
            println!("{row}");
        }
        println!(
            "reachable {}, air-bounded {}",
            r.nest_reachable, r.air_bounded
        );
        return;
    }
    let rep = parse_replay_json(&std::fs::read_to_string(&a[2]).unwrap()).unwrap();
    let every: u32 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut sim = Sim::new(&map, rep.seed);
    for s in &rep.actions {
        for _ in 0..s.ticks {
            sim.step(s.action);
            let p = sim.player();
            if sim.tick().is_multiple_of(every) || sim.status() != Status::Running {
                println!(
                    "t{} a{} x{:.2} y{:.2} vx{} vy{} g{} ride{} {:?}",
                    sim.tick(),
                    s.action,
                    p.x as f64 / 4096.0,
                    p.y as f64 / 4096.0,
                    p.vx,
                    p.vy,
                    p.on_ground as u8,
                    p.riding,
                    sim.status()
                );
            }
            if sim.status() != Status::Running {
                return;
            }
        }
    }
}
