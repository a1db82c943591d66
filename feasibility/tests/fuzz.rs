//! Fuzz-style tests: `assess` on the shipped levels' winning replays with their timing,
//! actions and steps changed, and on small maps with random replays, at budgets from none
//! to a good part of the default. It never panics, reports exactly the replays the referee
//! says win, and its report is consistent, the same every time, and reads back from its JSON.

use horst_engine::{parse_map, parse_replay, referee, Map, Replay, Step};
use horst_feasibility::{
    assess, assess_with_budget, relax, warnings, Feasibility, Verdict, MAX_SHIFT_TICKS,
    WORK_BUDGET_TICKS,
};
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6675_7a7a),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Budgets in referee ticks: none, a probe's worth or less, and up to a tenth of the default.
fn budget() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![0, 1, 60, 500, 5_000, 40_000, WORK_BUDGET_TICKS / 10])
}

/// One edit of a replay: (kind, step, value).
type Edit = (u8, u16, u16);

/// Applies `edits` to `replay`; the result is whatever the engine's parser makes of it (the
/// only replays `assess` is given), or `None` if it refuses it.
fn edited(replay: &Replay, edits: &[Edit]) -> Option<Replay> {
    let mut r = replay.clone();
    for &(kind, pos, val) in edits {
        let n = r.actions.len();
        let i = if n == 0 { 0 } else { pos as usize % n };
        match (kind % 8, r.actions.get_mut(i)) {
            // Longer or shorter by up to 12 ticks.
            (0, Some(s)) => {
                s.ticks = (s.ticks as i32 + (val % 25) as i32 - 12).clamp(1, 600) as u16
            }
            (1, Some(s)) => s.action = (val % 20) as u8,
            // Split in two: a step boundary that is not an input.
            (2, Some(s)) if s.ticks > 1 => {
                let first = 1 + val % (s.ticks - 1);
                let rest = Step {
                    action: s.action,
                    ticks: s.ticks - first,
                };
                s.ticks = first;
                r.actions.insert(i + 1, rest);
            }
            (3, _) => r.actions.insert(
                i.min(n),
                Step {
                    action: (val % 20) as u8,
                    ticks: 1 + val % 40,
                },
            ),
            (4, Some(_)) => {
                r.actions.remove(i);
            }
            (5, _) => r.actions.truncate(i),
            (6, _) => r.seed = r.seed.wrapping_add(val as u32 % 3),
            _ => {}
        }
    }
    parse_replay(&serde_json::to_value(&r).ok()?).ok()
}

/// The report is there exactly when the referee says the replay wins, and holds together.
fn check(map: &Map, replay: &Replay, budget: u64) -> Option<Feasibility> {
    let report = assess_with_budget(map, replay, budget);
    assert_eq!(report.is_some(), referee(map, replay).won);
    let r = report?;
    assert!(r.work_ticks <= budget, "{r:#?}");
    assert!(r.inputs_checked <= r.inputs && r.exact_inputs <= r.inputs_checked);
    assert_eq!(r.exact_input_ticks.len(), (r.exact_inputs as usize).min(16));
    assert!(r.exact_input_ticks.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(r.max_shift_ticks, MAX_SHIFT_TICKS);
    // Complete: every input was judged (the budget may end a later round, not only the first).
    assert!(!r.complete || r.inputs_checked == r.inputs, "{r:#?}");
    match &r.tightest {
        Some(w) => {
            assert!(w.early <= MAX_SHIFT_TICKS && w.late <= MAX_SHIFT_TICKS);
            assert_eq!(w.window, w.early + 1 + w.late);
            assert_eq!(r.verdict, Verdict::of_window(w.window));
            assert!((w.step as usize) < replay.actions.len() && w.tick >= 2);
            assert_ne!(w.from_action, w.action);
            assert_eq!(replay.actions[w.step as usize].action, w.action);
        }
        None => {
            assert_eq!(r.verdict, Verdict::Relaxed);
            assert!(r.inputs_checked == 0, "{r:#?}");
        }
    }
    assert!(!r.hint.is_empty());
    assert_eq!(
        warnings(Some(&r)).len(),
        usize::from(r.verdict == Verdict::FramePerfect)
    );
    let json = serde_json::to_string(&r).expect("a report serialises");
    let back: Feasibility = serde_json::from_str(&json).expect("a report reads back");
    assert_eq!(back, r);
    // The same every time; and a complete report is what any larger budget gives.
    assert_eq!(assess_with_budget(map, replay, budget).as_ref(), Some(&r));
    if r.complete {
        let more = assess_with_budget(map, replay, budget * 2 + 1).unwrap();
        assert_eq!(more, r);
    }
    Some(r)
}

/// Small maps near a flat corridor: a bird running right mostly wins.
fn small_map() -> impl Strategy<Value = Map> {
    (
        6usize..24,
        3usize..7,
        prop::collection::vec((0usize..24, 0usize..7, 0u8..6), 0..6),
    )
        .prop_filter_map("a valid map", |(w, h, tiles)| {
            let mut grid = vec![vec!['.'; w]; h];
            grid[h - 1] = vec!['G'; w];
            for (x, y, t) in tiles {
                let (x, y) = (x % w, y % h);
                if x > 0 && x + 1 < w {
                    grid[y][x] = ['G', '.', '^', 'E', 'I', 'S'][t as usize];
                }
            }
            let rows: Vec<String> = grid.iter().map(|r| r.iter().collect()).collect();
            let text = format!(
                "gcv-map 1\nname: klein\nsize: {w} {h}\ngrid:\n{}\nentities:\nstart 0 {}\nnest {} {}\n",
                rows.join("\n"),
                h - 2,
                w - 1,
                h - 2
            );
            parse_map(&text).ok()
        })
}

fn random_replay() -> impl Strategy<Value = Replay> {
    (
        any::<u32>(),
        prop::collection::vec((0u8..20, 1u16..90, prop::bool::weighted(0.6)), 0..10),
    )
        .prop_map(|(seed, steps)| Replay {
            seed,
            actions: steps
                .into_iter()
                // Mostly running right (8-11), now and then anything.
                .map(|(a, ticks, right)| Step {
                    action: if right { 8 + a % 4 } else { a },
                    ticks,
                })
                .collect(),
        })
}

proptest! {
    #![proptest_config(config(80))]

    #[test]
    fn edited_winning_replays(
        level_index in 0usize..15,
        edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 0..3),
        budget in budget(),
    ) {
        let level = &horst_levels::BUILTIN[level_index % horst_levels::BUILTIN.len()];
        let map = parse_map(level.map).unwrap();
        let replay = horst_engine::parse_replay_json(level.replay).unwrap();
        if let Some(r) = edited(&replay, &edits) {
            check(&map, &r, budget);
        }
    }
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn small_maps_and_random_replays(map in small_map(), replay in random_replay(), budget in budget()) {
        check(&map, &replay, budget);
    }
}

/// What every relaxation must give: a result exactly when the replay wins, and then a replay
/// the referee says wins, within the contract's limits, whose `assess` report is the one
/// returned and no worse than the given replay's; the same every time.
fn check_relax(map: &Map, replay: &Replay, budget: u64) -> Result<(), TestCaseError> {
    let r = relax(map, replay, budget);
    prop_assert_eq!(r.is_some(), referee(map, replay).won);
    if let Some(r) = r {
        prop_assert!(referee(map, &r.replay).won);
        let json = serde_json::to_value(&r.replay).unwrap();
        prop_assert_eq!(parse_replay(&json).ok(), Some(r.replay.clone()));
        prop_assert_eq!(assess(map, &r.replay), Some(r.report.clone()));
        let before = assess(map, replay).unwrap();
        prop_assert!(r.report.verdict <= before.verdict);
        prop_assert_eq!(r.changed, r.replay != *replay);
        prop_assert!(r.changed || r.report == before);
        prop_assert_eq!(relax(map, replay, budget), Some(r));
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(80))]

    /// The relaxation pass on small maps and random replays, at budgets from none to a part
    /// of the default.
    #[test]
    fn relaxing_random_replays(
        map in small_map(),
        replay in random_replay(),
        budget in prop::sample::select(vec![0u64, 50_000, 400_000, 2_000_000]),
    ) {
        check_relax(&map, &replay, budget)?;
    }
}

proptest! {
    #![proptest_config(config(10))]

    /// And on the shipped levels' replays, edited (most are not relaxed to begin with).
    #[test]
    fn relaxing_edited_winning_replays(
        level_index in 0usize..15,
        edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u16>()), 0..2),
    ) {
        let level = &horst_levels::BUILTIN[level_index % horst_levels::BUILTIN.len()];
        let map = parse_map(level.map).unwrap();
        let replay = horst_engine::parse_replay_json(level.replay).unwrap();
        if let Some(r) = edited(&replay, &edits) {
            check_relax(&map, &r, 300_000)?;
        }
    }
}
