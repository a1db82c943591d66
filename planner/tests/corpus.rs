//! The planner's honesty on the corpus. Architecture invariant: no level with a known winning
//! replay is ever answered `unresolved` before the time limit, and none is ever proved
//! unreachable. Bounded so the suite stays fast: a short time limit, and a check of the verdict
//! (a win, or `time_limit` after the limit), not of the solve rate (that is the benchmark's,
//! `examples/corpus.rs`).

use horst_engine::{parse_replay_json, referee, Map};
use horst_planner::{PlanOutcome, UnresolvedReason};
use std::time::Duration;

use crate::common;
use common::{load, plan_for, root};

/// Every map with a winning replay beside it, in `levels/` and `levels/corpus/`.
fn winnable() -> Vec<(String, Map)> {
    common::with_replays()
        .into_iter()
        .map(|(name, map, text)| {
            let replay = parse_replay_json(&text).unwrap();
            assert!(referee(&map, &replay).won, "{name}: the known replay");
            (name, map)
        })
        .collect()
}

#[test]
fn no_winnable_level_is_answered_unresolved_before_the_time_limit() {
    let levels = winnable();
    // The classes are all here: waits for far platforms and lifts from above, rides on
    // slow ferries, jackdaws to stomp, slow lifts, detours, long levels.
    for class in [
        "t3-far-platform-",
        "t3-lift-",
        "t4-ferry-",
        "t3-flyer-beat-",
        "t4-flyer-ledges-",
        "t3-slow-lift-",
        "t4-deceptive-",
        "t4-long-",
        // Issue 27's: towers up to 128 rows, shafts of lifts under a rock-fall with jitter,
        // rock-falls with jitter, jackdaws to stomp in a shaft.
        "t4-tower-",
        "t4-lift-shaft-",
        "t3-jitter-",
        "t4-jackdaw-shaft-",
    ] {
        let n = levels.iter().filter(|(n, _)| n.starts_with(class)).count();
        assert!(n >= 4, "{class}: {n} levels");
    }
    assert!(levels.len() >= 111, "{} winnable levels", levels.len());
    let limit = 0.25;
    for (name, map) in &levels {
        let rep = plan_for(map, limit, 2);
        match rep.outcome {
            PlanOutcome::Won { .. } => {}
            PlanOutcome::Unresolved { reason } => {
                assert_eq!(reason, UnresolvedReason::TimeLimit, "{name}: {rep:?}");
                assert_eq!(rep.proof, None, "{name}");
                // The search leaves the end of the limit for shortening a win (never cut by
                // the clock); it gives up no earlier.
                let limit = Duration::from_secs_f64(limit);
                assert!(
                    rep.elapsed >= limit - horst_planner::shorten::shorten_reserve(limit),
                    "{name}: unresolved after {:?}, before the time limit",
                    rep.elapsed
                );
                assert!(rep.best_distance.is_some(), "{name}");
            }
        }
    }
}

/// Levels of the new classes (a slow lift to wait for, a slow jackdaw beside ledges, a long
/// gauntlet): the same replay and the same count of states on one thread and on two.
#[test]
fn waiting_levels_give_the_same_replay_on_every_thread_count() {
    for name in ["t3-slow-lift-01", "t4-flyer-ledges-02", "t4-long-01"] {
        let map = load(&root().join(format!("levels/corpus/{name}.map")));
        let one = plan_for(&map, 60.0, 1);
        let two = plan_for(&map, 60.0, 2);
        assert!(one.won(), "{name}: {:?}", one.outcome);
        assert_eq!(one.outcome, two.outcome, "{name}");
        assert_eq!(one.expanded, two.expanded, "{name}");
    }
}
