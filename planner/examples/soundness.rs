//! The proofs' soundness benchmark (issue 27 item 0): thousands of adversarial levels
//! (`tests/adversarial`), explored by a player; a nest where its bird got must never be proved
//! unreachable nor warned `nest_unreachable`. Prints per class the levels, the nests checked,
//! the false proofs and warnings (both must be 0), and the time.
//!
//! cargo run --release -p horst-planner --example soundness -- [levels per class] [runs] [ticks]

#[path = "../tests/adversarial/mod.rs"]
mod adversarial;

use adversarial::{explore, level, targets, CLASSES};
use horst_engine::{parse_map, validate_map};
use horst_planner::search::prove;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let levels: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(24);
    let ticks: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(900);
    let mut bad = 0;
    println!("| class | levels (valid) | nests checked | false proofs | false warnings | s |");
    println!("|---|---|---|---|---|---|");
    for (c, name) in CLASSES.iter().enumerate() {
        let t = Instant::now();
        let (mut valid, mut nests, mut proofs, mut warnings) = (0, 0, 0, 0);
        for i in 0..levels {
            let l = level(c, i);
            let Ok(map) = parse_map(&l.text((l.w as i32 - 1, 0))) else {
                continue;
            };
            valid += 1;
            for nest in targets(&map, &explore(&map, i, runs, ticks), 3) {
                let text = l.text(nest);
                let Ok(m) = parse_map(&text) else { continue };
                nests += 1;
                if prove(&m).is_some() {
                    proofs += 1;
                    eprintln!("FALSE PROOF {name} #{i} nest {nest:?}:\n{text}");
                }
                if validate_map(&text)
                    .warnings
                    .iter()
                    .any(|w| w.code == "nest_unreachable")
                {
                    warnings += 1;
                    eprintln!("FALSE WARNING {name} #{i} nest {nest:?}:\n{text}");
                }
            }
        }
        bad += proofs + warnings;
        println!(
            "| {name} | {levels} ({valid}) | {nests} | {proofs} | {warnings} | {:.1} |",
            t.elapsed().as_secs_f64()
        );
    }
    std::process::exit(if bad == 0 { 0 } else { 1 });
}
