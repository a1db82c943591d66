//! The report against the referee itself: a replay that wins on one exact tick only, replays
//! with slack, the shipped levels, the budget and determinism.

use horst_engine::{parse_map, parse_replay_json, referee, Map, Replay, Step};
use horst_feasibility::{assess, assess_with_budget, Verdict, MAX_SHIFT_TICKS, WORK_BUDGET_TICKS};

/// A corridor under two rock-fall spawners (jitter 0, so the rocks fall on fixed ticks); the
/// second one's `offset` sets how much room there is between their rocks.
fn rocks(offset: u32) -> Map {
    parse_map(&format!(
        "gcv-map 1\nname: Steinschlaggasse\nsize: 14 6\ngrid:\n..............\n..............\n..............\n..............\n..............\nGGGGGGGGGGGGGG\nentities:\nstart 1 4\nnest 12 4\nrockfall 6 1 interval=30 jitter=0 offset=0\nrockfall 8 1 interval=30 jitter=0 offset={offset}\n"
    ))
    .expect("valid map")
}

/// Stand still `wait` ticks, then hold `action` until the nest.
fn wait_then(wait: u16, action: u8) -> Replay {
    Replay {
        seed: 1,
        actions: vec![
            Step {
                action: 4,
                ticks: wait,
            },
            Step { action, ticks: 400 },
        ],
    }
}

/// The waits from `range` with which the replay wins, by the referee alone.
fn winning_waits(map: &Map, action: u8, range: std::ops::Range<u16>) -> Vec<u16> {
    range
        .filter(|&w| referee(map, &wait_then(w, action)).won)
        .collect()
}

#[test]
fn a_replay_that_wins_on_one_exact_tick_only_is_frame_perfect() {
    // Walking slowly (action 16) through the two rock streams: only a start after exactly 32
    // ticks of waiting gets through (and 30 ticks later the next such gap).
    let map = rocks(2);
    assert_eq!(
        winning_waits(&map, 16, 20..50),
        [32],
        "the map is what the test says"
    );
    let r = assess(&map, &wait_then(32, 16)).expect("wins");
    assert_eq!(r.verdict, Verdict::FramePerfect, "{r:#?}");
    assert_eq!(r.inputs, 1);
    assert_eq!(r.exact_inputs, 1);
    assert_eq!(r.exact_input_ticks, [33], "the walk starts on tick 33");
    let w = r.tightest.as_ref().unwrap();
    assert_eq!((w.step, w.tick, w.from_action, w.action), (1, 33, 4, 16));
    assert_eq!((w.early, w.late, w.window), (0, 0, 1));
    assert_eq!(r.longest_wait_ticks, 32);
    assert!(r.complete);
    assert!(r.hint.starts_with("Frame-perfect"), "{}", r.hint);
    let warnings = horst_feasibility::warnings(Some(&r));
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, "frame_perfect");
}

#[test]
fn windows_are_what_the_referee_allows() {
    // Running (action 8) through the same streams: the wins come in windows of 2, 8 and 14
    // ticks as the second spawner's offset grows; the report finds each one's width exactly.
    for (offset, wait, verdict) in [
        (2, 30, Verdict::Tight),
        (4, 16, Verdict::Fair),
        (10, 20, Verdict::Relaxed),
    ] {
        let map = rocks(offset);
        let wins = winning_waits(&map, 8, 1..60);
        assert!(wins.contains(&wait), "{offset}: {wins:?}");
        // The run of consecutive winning waits around `wait`, capped at MAX_SHIFT_TICKS.
        let cap = MAX_SHIFT_TICKS as u16;
        let early = (1..=cap).take_while(|d| wins.contains(&(wait - d))).count() as u32;
        let late = (1..=cap).take_while(|d| wins.contains(&(wait + d))).count() as u32;
        let r = assess(&map, &wait_then(wait, 8)).expect("wins");
        let w = r.tightest.as_ref().unwrap();
        assert_eq!((w.early, w.late), (early, late), "offset {offset}: {r:#?}");
        assert_eq!(r.verdict, verdict, "offset {offset}: {r:#?}");
        assert_eq!(r.exact_inputs, 0);
    }
}

#[test]
fn a_replay_with_slack_everywhere_is_relaxed() {
    let map = parse_map("gcv-map 1\nname: flach\nsize: 30 3\ngrid:\n..............................\n..............................\nGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG\nentities:\nstart 0 1\nnest 29 1\n").unwrap();
    // Wait, walk, jump in place, run: every input may move 8 ticks either way.
    let replay = parse_replay_json(r#"{"seed": 7, "actions": [{"action": 4, "ticks": 20}, {"action": 16, "ticks": 30}, {"action": 5, "ticks": 10}, {"action": 4, "ticks": 40}, {"action": 8, "ticks": 200}]}"#).unwrap();
    let r = assess(&map, &replay).expect("wins");
    assert_eq!(r.verdict, Verdict::Relaxed, "{r:#?}");
    assert_eq!(r.inputs, 4);
    assert_eq!(r.inputs_checked, 4);
    assert_eq!(r.exact_inputs, 0);
    assert!(r.complete);
    let w = r.tightest.as_ref().unwrap();
    assert_eq!(w.window, 2 * MAX_SHIFT_TICKS + 1, "{r:#?}");
    assert_eq!(
        r.longest_wait_ticks,
        40 + 9,
        "the held jump after its press is waiting"
    );
    assert_eq!((r.egg_boosts, r.stomps, r.shots), (0, 0, 0));
    assert!(horst_feasibility::warnings(Some(&r)).is_empty());
}

#[test]
fn no_report_for_a_replay_that_does_not_win() {
    let map = rocks(2);
    assert!(assess(&map, &wait_then(31, 16)).is_none());
}

#[test]
fn the_budget_bounds_the_work_and_the_report_says_so() {
    let map = rocks(10);
    let replay = wait_then(20, 8);
    let full = assess(&map, &replay).unwrap();
    assert!(full.complete);
    assert!(full.work_ticks > 0 && full.work_ticks <= WORK_BUDGET_TICKS);
    let cut = assess_with_budget(&map, &replay, full.work_ticks / 3).unwrap();
    assert!(!cut.complete, "{cut:#?}");
    assert!(cut.work_ticks <= full.work_ticks / 3);
    assert!(cut.hint.contains("work budget"), "{}", cut.hint);
    let none = assess_with_budget(&map, &replay, 0).unwrap();
    assert_eq!((none.inputs_checked, none.work_ticks), (0, 0));
    assert!(none.tightest.is_none());
}

#[test]
fn every_shipped_level_gets_the_same_report_every_time() {
    for level in horst_levels::BUILTIN {
        let map = parse_map(level.map).unwrap();
        let replay = parse_replay_json(level.replay).unwrap();
        let a = assess(&map, &replay).unwrap_or_else(|| panic!("{} wins", level.name));
        let b = assess(&map, &replay).unwrap();
        assert_eq!(a, b, "{}", level.name);
        assert!(a.complete, "{}: {a:#?}", level.name);
        assert!(a.inputs_checked == a.inputs);
        println!(
            "{:24} {:13} inputs {:3} exact {:2} tightest {:2} wait {:3} eggs {} stomps {} shots {} work {}",
            level.name,
            a.verdict.as_str(),
            a.inputs,
            a.exact_inputs,
            a.tightest.as_ref().map_or(0, |w| w.window),
            a.longest_wait_ticks,
            a.egg_boosts,
            a.stomps,
            a.shots,
            a.work_ticks
        );
    }
}

/// A report cut short by its budget may name a window narrower than the input really has
/// (only measured so far): it then says that this is a lower bound and the level may be
/// easier. It said "may come only 1 tick early or 1 late" of an input whose window is 17.
#[test]
fn a_window_measured_only_in_part_is_said_to_be_a_lower_bound() {
    let mut seen = 0;
    for level in horst_levels::BUILTIN {
        let map = parse_map(level.map).unwrap();
        let replay = parse_replay_json(level.replay).unwrap();
        let full = assess(&map, &replay).unwrap();
        let Some(truth) = full.tightest.as_ref().map(|w| w.window) else {
            continue;
        };
        for part in [40, 20, 10, 5, 3] {
            let cut = assess_with_budget(&map, &replay, full.work_ticks / part).unwrap();
            let Some(w) = cut.tightest.as_ref() else {
                continue;
            };
            if w.window < truth {
                seen += 1;
                assert!(
                    cut.hint.contains("lower bound"),
                    "{}: {} of {truth} ticks said as measured: {}",
                    level.name,
                    w.window,
                    cut.hint
                );
            }
        }
    }
    assert!(
        seen > 0,
        "no cut report named a narrower window: the test shows nothing"
    );
}

/// A chimney one tile wide with one-way ledges 3 rows apart: every full jump lands on the next
/// ledge, and the next press may come any time after the landing (a press in the air would be
/// the egg boost instead).
fn chimney() -> Map {
    let mut rows = Vec::new();
    for y in 0..20 {
        rows.push(match y {
            19 => "#",
            4 | 7 | 10 | 13 | 16 => "-",
            _ => ".",
        });
    }
    parse_map(&format!(
        "gcv-map 1\nname: Schlot\nsize: 1 20\ngrid:\n{}\nentities:\nstart 0 18\nnest 0 0\n",
        rows.join("\n")
    ))
    .expect("valid map")
}

/// The same step `n` times.
fn repeat(steps: &[(u8, u16)], n: usize) -> Vec<Step> {
    steps
        .iter()
        .cycle()
        .take(steps.len() * n)
        .map(|&(action, ticks)| Step { action, ticks })
        .collect()
}

/// Each jump of this replay comes on the first tick after the bird lands. Moved one tick
/// later on its own, the press delays the landing after it, and the next press (still on its
/// tick) comes in the air and lays the egg boost instead: the report called every press
/// frame-perfect, of a level a person climbs by pressing whenever the bird has landed. A
/// person who presses late goes on late: a press may come late as long as the replay wins
/// with the presses after it moved along with it.
#[test]
fn a_rhythm_of_presses_each_after_a_landing_is_not_frame_perfect() {
    let map = chimney();
    // Jump held 18 ticks, released 3: the bird lands on the next ledge on the 21st tick.
    let mut actions = repeat(&[(9, 18), (8, 3)], 6);
    actions.push(Step {
        action: 9,
        ticks: 40,
    });
    let replay = Replay { seed: 1, actions };
    assert!(referee(&map, &replay).won, "the replay wins");
    // The map is what the test says: each press one tick later on its own loses.
    let late = |k: usize| {
        let mut r = replay.clone();
        r.actions[2 * k - 1].ticks += 1;
        r.actions[2 * k].ticks -= 1;
        r
    };
    assert!((1..5).all(|k| !referee(&map, &late(k)).won));
    let r = assess(&map, &replay).expect("wins");
    assert_eq!(r.exact_inputs, 0, "{r:#?}");
    assert_ne!(r.verdict, Verdict::FramePerfect, "{r:#?}");
    assert!(r.complete, "{r:#?}");
    assert_eq!(r.inputs_checked, r.inputs);
}

/// Moving the inputs after a late one along with it gives nothing where the late one is timed
/// to the world: a walk through two streams of rocks that starts on one tick only stays
/// frame-perfect with a later input after it.
#[test]
fn an_input_timed_to_the_world_stays_frame_perfect_with_inputs_after_it() {
    let map = rocks(2);
    let replay = Replay {
        seed: 1,
        actions: vec![
            Step {
                action: 4,
                ticks: 32,
            },
            Step {
                action: 16,
                ticks: 150,
            },
            Step {
                action: 8,
                ticks: 200,
            },
        ],
    };
    assert!(referee(&map, &replay).won);
    let r = assess(&map, &replay).expect("wins");
    assert_eq!(r.verdict, Verdict::FramePerfect, "{r:#?}");
    assert_eq!(r.exact_input_ticks.first(), Some(&33), "{r:#?}");
}

/// No run lasts longer than the replay limit (36,000 ticks; the game ends a person's run there
/// too): a replay that wins on the limit's last tick has no slack to start late, because every
/// later start wins only after it. The report gave it 8 ticks each way (`relaxed`).
#[test]
fn no_move_wins_after_the_replay_limit() {
    let map = parse_map("gcv-map 1\nname: flach\nsize: 12 3\ngrid:\n............\n............\nGGGGGGGGGGGG\nentities:\nstart 0 1\nnest 11 1\n").unwrap();
    // Stand `wait` ticks (in steps of at most 600), run right 10 ticks, then run and jump
    // `run` ticks: two inputs, so the probes that move the later input along are tried too.
    let stand_then_run = |wait: u32, run: u16| {
        let mut actions = Vec::new();
        let mut left = wait;
        while left > 0 {
            let t = left.min(600);
            actions.push(Step {
                action: 4,
                ticks: t as u16,
            });
            left -= t;
        }
        actions.push(Step {
            action: 8,
            ticks: 10,
        });
        actions.push(Step {
            action: 9,
            ticks: run,
        });
        Replay { seed: 1, actions }
    };
    // The run takes as long after any wait: wait so that it wins on tick 36,000.
    let walk = referee(&map, &stand_then_run(100, 200)).ticks - 100;
    let replay = stand_then_run(36_000 - walk, walk as u16 - 10);
    let run = referee(&map, &replay);
    assert!(run.won && run.ticks == 36_000, "{run:?}");
    let r = assess(&map, &replay).expect("wins");
    assert_eq!(r.inputs, 2, "{r:#?}");
    let w = r.tightest.as_ref().unwrap();
    assert_eq!(w.late, 0, "{r:#?}");
    assert!(r.verdict >= Verdict::Fair, "{r:#?}");
}
