//! Issue 27 item 1: searches of different weights race in every stage, decided by expansion
//! counts (never the clock), so the answer is the same on every run and every thread count;
//! and the heuristic's arrival-time term keeps the priority of a ride flat.

use horst_engine::{parse_map, parse_replay_json, referee, Map, Sim};
use horst_planner::search::{Ctx, RACERS};
use horst_planner::{plan_with, PlanReport, PlanRequest, RacerSpec, SearchOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn load(name: &str) -> Map {
    let p = root().join(format!("levels/corpus/{name}.map"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    parse_map(&text).unwrap_or_else(|r| panic!("{}: {}", p.display(), r.summary()))
}

fn run(map: &Map, threads: usize, opts: &SearchOptions) -> PlanReport {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let cancel = AtomicBool::new(false);
    let req = PlanRequest {
        map,
        seed: 1,
        // Generous: the expansion counts decide, the clock only guards the suite.
        time_limit: Duration::from_secs(300),
        cancel: &cancel,
        memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
    };
    pool.install(|| plan_with(&req, None, opts))
}

/// Levels won by the first racer and by the second: the same replay, the same expansions and
/// the same winner on one, two and three threads.
#[test]
fn the_race_gives_the_same_answer_on_every_thread_count() {
    let opts = SearchOptions::default();
    let mut winners = Vec::new();
    for name in [
        "t4-lift-shaft-02",
        "t4-ferry-04",
        "t3-jitter-02",
        "t4-jackdaw-shaft-01",
    ] {
        let map = load(name);
        let one = run(&map, 1, &opts);
        assert!(one.won(), "{name}: {:?}", one.outcome);
        let r = referee(&map, one.replay().unwrap());
        assert!(r.won, "{name}: the referee confirms the replay");
        for threads in [2, 3] {
            let other = run(&map, threads, &opts);
            assert_eq!(one.outcome, other.outcome, "{name} on {threads} threads");
            assert_eq!(one.expanded, other.expanded, "{name} on {threads} threads");
            assert_eq!(one.won_by, other.won_by, "{name} on {threads} threads");
        }
        winners.push(one.won_by.unwrap().racer);
    }
    // Both racers win some of them: the race is really decided between them.
    assert!(winners.contains(&0) && winners.contains(&1), "{winners:?}");
}

/// Long rides and waits (a slow ferry, a shaft of lifts): the greedier racer wins them, where
/// the single search of before (weight 40, no race) has not won after many times its count of
/// expansions.
#[test]
fn the_greedier_racer_wins_long_rides() {
    let single = [RACERS[0]];
    for name in ["t4-ferry-04", "t4-lift-shaft-02"] {
        let map = load(name);
        let raced = run(&map, 2, &SearchOptions::default());
        let by = raced
            .won_by
            .unwrap_or_else(|| panic!("{name}: {:?}", raced.outcome));
        assert_eq!(by.weight, RACERS[1].weight, "{name}");
        let alone = run(
            &map,
            2,
            &SearchOptions {
                racers: &single,
                expansion_limit: Some(10 * raced.expanded),
                ..SearchOptions::default()
            },
        );
        assert!(
            !alone.won(),
            "{name}: the single search won within {} expansions",
            alone.expanded
        );
    }
}

/// Racers with the same weight find the same replay as one alone (the race adds no
/// nondeterminism of its own); an empty list of racers means the first one.
#[test]
fn a_race_of_equal_racers_answers_like_one_racer() {
    let map = load("t3-jitter-01");
    let one = [RACERS[0]];
    let two = [
        RACERS[0],
        RacerSpec {
            weight: RACERS[0].weight,
            period: 1,
        },
    ];
    let a = run(
        &map,
        2,
        &SearchOptions {
            racers: &one,
            ..SearchOptions::default()
        },
    );
    let b = run(
        &map,
        2,
        &SearchOptions {
            racers: &two,
            ..SearchOptions::default()
        },
    );
    let c = run(
        &map,
        2,
        &SearchOptions {
            racers: &[],
            ..SearchOptions::default()
        },
    );
    assert!(a.won());
    assert_eq!(a.outcome, b.outcome);
    assert_eq!(b.won_by.unwrap().racer, 0, "ties go to the first racer");
    assert_eq!(a.outcome, c.outcome);
    assert_eq!(a.expanded, c.expanded);
}

/// The arrival-time term: while the bird rides the lift of `t3-lift-01` (its known replay), the
/// priority (tick plus heuristic) stays within two tiles' weight, where the plain distance term
/// would grow by hundreds of ticks; and before it gets on, waiting beside the shaft already
/// counts the ride.
#[test]
fn the_arrival_term_keeps_a_ride_flat() {
    let map = load("t3-lift-01");
    let text = std::fs::read_to_string(root().join("levels/corpus/t3-lift-01.replay.json"))
        .expect("replay");
    let replay = parse_replay_json(&text).unwrap();
    let weight = RACERS[0].weight;
    let mut ctx = Ctx::new(&map);
    let mut sim = Sim::new(&map, replay.seed);
    let mut buf = Vec::new();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let mut waiting_counts = false;
    for s in &replay.actions {
        for _ in 0..s.ticks {
            sim.step(s.action);
            let p = sim.player();
            ctx.arrival_term = true;
            let (d, h) = ctx.heuristic(&sim, weight, &mut buf);
            if p.riding >= 0 {
                with.push(sim.tick() as u64 + h);
                without.push(sim.tick() as u64 + weight * d as u64);
            } else if with.is_empty() && p.on_ground && h < weight * d as u64 {
                waiting_counts = true;
            }
            ctx.arrival_term = false;
            assert_eq!(
                ctx.heuristic(&sim, weight, &mut buf),
                (d, weight * d as u64)
            );
        }
    }
    assert!(with.len() > 200, "rode {} ticks", with.len());
    let spread = |v: &[u64]| v.iter().max().unwrap() - v.iter().min().unwrap();
    assert!(spread(&with) <= 2 * weight, "{with:?}");
    assert!(spread(&without) >= 200, "{}", spread(&without));
    assert!(waiting_counts);
}
