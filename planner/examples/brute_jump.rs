//! Tries every jump tick, jump hold and egg-boost tick of a run right (after a slow walk of
//! 0..S ticks): which win. cargo run -p horst-planner --example brute_jump -- MAP [S] [TMAX]
use horst_engine::{parse_map, Sim, Status};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let map = parse_map(&std::fs::read_to_string(&a[1]).unwrap())
        .unwrap_or_else(|r| panic!("{}", r.summary()));
    let slow_max: u32 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let tmax: u32 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(300);
    let mut wins = 0u64;
    let mut first: Option<String> = None;
    for slow in 0..=slow_max {
        let mut base = Sim::new(&map, 1);
        for _ in 0..slow {
            base.step(16);
        }
        for tj in slow + 1..tmax {
            if base.status() != Status::Running {
                break;
            }
            for h in 1..=20u32 {
                let mut s1 = base.clone();
                for _ in 0..h {
                    s1.step(9);
                }
                for gap in 1..=70u32 {
                    let mut s2 = s1.clone();
                    let mut ok = true;
                    for _ in 0..gap {
                        s2.step(8);
                        if s2.status() != Status::Running {
                            ok = false;
                            break;
                        }
                    }
                    if !ok {
                        break;
                    }
                    for _ in 0..240 {
                        if s2.status() != Status::Running {
                            break;
                        }
                        s2.step(9);
                    }
                    if s2.status() == Status::Won {
                        wins += 1;
                        if first.is_none() {
                            first = Some(format!(
                                "slow {slow} run {} jump {h} run {gap} boost held: won tick {}",
                                tj - slow - 1,
                                s2.tick()
                            ));
                        }
                    }
                }
            }
            base.step(8);
        }
    }
    println!("wins {wins}; first: {first:?}");
}
