//! The relaxation pass against the referee: it finds the room a person has where the given
//! replay uses none, keeps a level that needs an exact tick `frame_perfect`, and its report is
//! always the one of the replay it returns.

use horst_engine::{parse_map, parse_replay_json, referee, Map, Replay, Step};
use horst_feasibility::{
    assess, relax, Relaxation, Verdict, RELAX_BUDGET_TICKS, WORK_BUDGET_TICKS,
};

/// A wave of rocks: four neighbouring spawners (columns 5-8, or 10-7 mirrored), each a tick
/// after the one before, every 30 ticks. No column between them is safe to wait in; of the
/// replays that stand and then hold one action, only a running jump started on one exact tick
/// of each 30 gets through (`the_wave_...`). (A jump with the egg boost over the rocks has
/// room, and the planner finds it: planner/tests/planner.rs has a wave under a ceiling.)
fn wave(mirrored: bool) -> Map {
    let mut ents = String::new();
    for k in 0..4 {
        let x = if mirrored { 10 - k } else { 5 + k };
        ents.push_str(&format!("rockfall {x} 1 interval=30 jitter=0 offset={k}\n"));
    }
    let (start, nest) = if mirrored { (14, 1) } else { (1, 14) };
    let row = ".".repeat(16);
    parse_map(&format!(
        "gcv-map 1\nname: Steinwelle\nsize: 16 6\ngrid:\n{row}\n{row}\n{row}\n{row}\n{row}\n{}\nentities:\nstart {start} 4\nnest {nest} 4\n{ents}",
        "G".repeat(16)
    ))
    .expect("valid map")
}

/// Stand `wait` ticks, then hold `action`.
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

/// What every relaxation must give: a replay the referee says wins, the report `assess`
/// gives that replay (never a verdict easier than the replay proves), no worse than the
/// replay given, within its budget, and the same every time.
fn checked(map: &Map, replay: &Replay) -> Relaxation {
    let before = assess(map, replay).expect("the replay wins");
    let r = relax(map, replay, RELAX_BUDGET_TICKS).expect("the replay wins");
    assert!(referee(map, &r.replay).won);
    assert_eq!(assess(map, &r.replay).as_ref(), Some(&r.report));
    assert!(r.report.verdict <= before.verdict, "{r:#?}");
    assert!(r.work_ticks <= RELAX_BUDGET_TICKS + WORK_BUDGET_TICKS);
    assert_eq!(r.changed, r.replay != *replay);
    assert_eq!(relax(map, replay, RELAX_BUDGET_TICKS).as_ref(), Some(&r));
    r
}

#[test]
fn the_wave_lets_a_running_jump_through_on_one_tick_in_thirty_only() {
    for mirrored in [false, true] {
        let map = wave(mirrored);
        let (run, slow) = if mirrored { (1, 13) } else { (9, 17) };
        // Running, walking slowly, with or without a jump: the waits that win.
        for action in [run - 1, run, slow - 1, slow] {
            let wins: Vec<u16> = (1..100)
                .filter(|&w| referee(&map, &wait_then(w, action)).won)
                .collect();
            let isolated = wins.iter().all(|w| !wins.contains(&(w + 1)));
            assert!(isolated, "{mirrored} {action}: {wins:?}");
            assert_eq!(
                wins.is_empty(),
                action != run,
                "{mirrored} {action}: {wins:?}"
            );
        }
    }
}

/// A replay whose exact press has no room nearby stays `frame_perfect`: no change the pass
/// tries (another tick, another speed, no jump, a neighbour moved) wins with a wider window,
/// and the pass does not claim room that the replay it returns does not have.
#[test]
fn an_exact_press_without_room_nearby_stays_frame_perfect() {
    for mirrored in [false, true] {
        let map = wave(mirrored);
        let run = if mirrored { 1 } else { 9 };
        let wait = (1..100)
            .find(|&w| referee(&map, &wait_then(w, run)).won)
            .unwrap();
        let r = checked(&map, &wait_then(wait, run));
        assert_eq!(
            r.report.verdict,
            Verdict::FramePerfect,
            "{mirrored}: {r:#?}"
        );
        assert!(r.report.exact_inputs >= 1);
        assert!(
            r.tried > 0,
            "the pass tried nothing: the test shows nothing"
        );
    }
}

/// Two streams of rocks that a slow walk gets through on one exact tick only, but a run on
/// either of 2 (engine: the `rocks(2)` map of tests/report.rs): the slow walk's report is
/// `frame_perfect`, the level is not, and the pass finds the run.
#[test]
fn a_replay_that_is_exact_where_the_level_has_room_is_relaxed() {
    let map = parse_map("gcv-map 1\nname: Steinschlaggasse\nsize: 14 6\ngrid:\n..............\n..............\n..............\n..............\n..............\nGGGGGGGGGGGGGG\nentities:\nstart 1 4\nnest 12 4\nrockfall 6 1 interval=30 jitter=0 offset=0\nrockfall 8 1 interval=30 jitter=0 offset=2\n").unwrap();
    let replay = wait_then(32, 16);
    assert_eq!(
        assess(&map, &replay).unwrap().verdict,
        Verdict::FramePerfect
    );
    let r = checked(&map, &replay);
    assert!(r.changed && r.kept >= 1, "{r:#?}");
    assert!(r.report.verdict < Verdict::FramePerfect, "{r:#?}");
}

/// The replay `levels/02-felsstufen.replay.json` was until it was relaxed: the planner's
/// fastest, 246 ticks.
const FELSSTUFEN_FASTEST: &str = r#"{"seed": 1, "actions": [{"action": 9, "ticks": 108}, {"action": 8, "ticks": 12}, {"action": 1, "ticks": 6}, {"action": 0, "ticks": 9}, {"action": 8, "ticks": 3}, {"action": 0, "ticks": 3}, {"action": 8, "ticks": 3}, {"action": 17, "ticks": 12}, {"action": 0, "ticks": 3}, {"action": 1, "ticks": 9}, {"action": 0, "ticks": 6}, {"action": 8, "ticks": 3}, {"action": 9, "ticks": 24}, {"action": 8, "ticks": 24}, {"action": 9, "ticks": 24}]}"#;

/// The shipped `felsstufen` map and the planner's fastest replay of it.
fn felsstufen() -> (Map, Replay) {
    let level = horst_levels::BUILTIN
        .iter()
        .find(|l| l.name == "felsstufen")
        .expect("shipped");
    (
        parse_map(level.map).unwrap(),
        parse_replay_json(FELSSTUFEN_FASTEST).unwrap(),
    )
}

/// `felsstufen` with the planner's fastest replay (shipped until it was relaxed): 4 exact
/// inputs, a person climbs the steps easily; the pass finds a replay without any.
#[test]
fn the_shipped_felsstufen_is_not_frame_perfect_once_relaxed() {
    let (map, replay) = felsstufen();
    assert_eq!(assess(&map, &replay).unwrap().exact_inputs, 4);
    let r = checked(&map, &replay);
    assert_eq!(r.report.exact_inputs, 0, "{r:#?}");
    assert!(r.report.verdict < Verdict::FramePerfect, "{r:#?}");
}

/// The pass stops at its budget: with none left after the first report it keeps the replay.
#[test]
fn the_budget_bounds_the_pass() {
    let (map, replay) = felsstufen();
    let r = relax(&map, &replay, 0).unwrap();
    assert!(!r.changed && r.tried == 0);
    assert_eq!(Some(r.report), assess(&map, &replay));
    let small = relax(&map, &replay, 400_000).unwrap();
    assert!(small.work_ticks <= 400_000 + WORK_BUDGET_TICKS);
}

#[test]
fn no_relaxation_of_a_replay_that_does_not_win() {
    assert!(relax(&wave(false), &wait_then(5, 9), RELAX_BUDGET_TICKS).is_none());
}

/// A probe level and its committed replay (`levels/probes/`).
fn probe(name: &str) -> (Map, Replay) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../levels/probes");
    let text = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).unwrap();
    (
        parse_map(&text("map")).unwrap(),
        parse_replay_json(&text("replay.json")).unwrap(),
    )
}

/// Two slow ferries over spikes (`levels/probes/easy-two-slow-ferries`): the planner's replay
/// leaves each ferry on the first tick the jump to the next ledge works, so where the bird
/// stood and when it jumped are exact (`tight`); a person rides on until the ferry is there.
/// The hill-climb moves an input 8 ticks at most and found nothing; the waiting step holds
/// the wait before the narrowest input longer and the ride reads `fair` or better. The same
/// result every time (`checked`), within the budget.
#[test]
fn a_slow_ferry_ride_is_relaxed_by_waiting_longer() {
    let (map, replay) = probe("easy-two-slow-ferries");
    let before = assess(&map, &replay).unwrap();
    assert!(before.verdict >= Verdict::Tight, "{before:#?}");
    let r = checked(&map, &replay);
    assert!(r.report.verdict <= Verdict::Fair, "{r:#?}");
    assert!(
        r.replay.total_ticks() > replay.total_ticks(),
        "waited longer: {r:#?}"
    );
}

/// 510 tiles of a corridor one tile high with 25 holes (`levels/probes/guest-long-low-tunnel`):
/// the planner's replay runs at full speed from start to nest and meets every fourth hole of
/// two tiles where the jump has one tick (`frame_perfect`, 6 exact inputs), though each hole
/// alone has room. The re-centring step presses each jump in the middle of its room, from
/// where the jump before left the bird, and the stopping step stops before the narrowest
/// and takes a run-up: no exact input is left. The same result on every run and in other
/// threads at once (nothing in the pass reads the clock or the thread).
#[test]
fn a_long_low_tunnel_is_not_frame_perfect_once_relaxed() {
    let (map, replay) = probe("guest-long-low-tunnel");
    let before = assess(&map, &replay).unwrap();
    assert_eq!(before.verdict, Verdict::FramePerfect, "{before:#?}");
    assert!(before.exact_inputs >= 6, "{before:#?}");
    let r = checked(&map, &replay);
    assert!(r.report.verdict <= Verdict::Tight, "{r:#?}");
    assert_eq!(r.report.exact_inputs, 0, "{r:#?}");
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (map, replay) = (map.clone(), replay.clone());
            std::thread::spawn(move || relax(&map, &replay, RELAX_BUDGET_TICKS))
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap().as_ref(), Some(&r));
    }
}

/// A fall of 56 rows onto a pillar one tile wide (`levels/probes/guest-sky-dive-24`): the
/// planner's replay runs right and holds the jump and the direction all the way down, and
/// touches the nest at its edge, so its one input is exact (`frame_perfect`). The pass had no
/// change that lets go in the middle of a long stretch, and left it so; a person steers over
/// the pillar, and a correction held in the middle of the fall finds that (`relaxed`).
#[test]
fn a_long_fall_onto_a_small_target_is_relaxed_by_a_correction_in_mid_air() {
    let r = relaxed_frame_perfect_probe("guest-sky-dive-24");
    assert_eq!(r.report.verdict, Verdict::Relaxed, "{r:#?}");
}

/// The pass on a probe whose committed replay reads `frame_perfect` (`checked`).
fn relaxed_frame_perfect_probe(name: &str) -> Relaxation {
    let (map, replay) = probe(name);
    assert_eq!(
        assess(&map, &replay).unwrap().verdict,
        Verdict::FramePerfect
    );
    checked(&map, &replay)
}

/// A hole of four tiles in a corridor one tile high (`levels/probes/guest-tunnel-hole-4`):
/// the longest flight crosses it only when the jump comes on one tick (13,800 sub-units of
/// flight for the 13,312 needed, 600 a tick). Every step of the pass tries its changes (the
/// jump re-centred, a stop and a run-up before it) and none may call it easier: the replay
/// the pass returns is won by the referee and still `frame_perfect`.
#[test]
fn a_jump_with_a_window_of_one_tick_stays_frame_perfect() {
    let r = relaxed_frame_perfect_probe("guest-tunnel-hole-4");
    assert_eq!(r.report.verdict, Verdict::FramePerfect, "{r:#?}");
    assert!(r.report.exact_inputs >= 1);
    assert!(
        r.tried > 0,
        "the pass tried nothing: the test shows nothing"
    );
}

/// A nest on spikes at the bottom of a shaft 22 rows deep (`levels/probes/guest-nest-on-spikes-deep`):
/// the planner's replay jumps at the hole's edge and falls in on the one arc that enters the
/// spike tile shallow enough (`tight`, window 3). A plain walk in dies (7 px deep); a walk in
/// and one tap of jump late in the fall (the egg boost shifts where the fall enters the tile)
/// wins for a stretch of ticks. The pass moved and corrected the inputs it had and never traded
/// the jump for a walk and a boost; its walk-off step does (`relaxed`).
#[test]
fn a_jump_into_a_drop_is_traded_for_a_walk_off_and_a_late_boost() {
    let (map, replay) = probe("guest-nest-on-spikes-deep");
    let before = assess(&map, &replay).unwrap();
    assert_eq!(before.verdict, Verdict::Tight, "{before:#?}");
    let r = checked(&map, &replay);
    assert_eq!(r.report.verdict, Verdict::Relaxed, "{r:#?}");
    assert_eq!(r.report.egg_boosts, 1, "{r:#?}");
}
