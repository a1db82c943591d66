//! Measures the jump envelope with the real simulation and checks the documented numbers and
//! the relaxed reachability constants against it.

use horst_engine::format::reach::envelopes;
use horst_engine::physics::*;
use horst_engine::{parse_map, Sim};

fn flat(width: usize) -> horst_engine::Map {
    let mut rows = vec![".".repeat(width); 19];
    rows.push("#".repeat(width));
    let text = format!(
        "gcv-map 1\nname: flat\nsize: {width} 20\ngrid:\n{}\nentities:\nstart 2 18\nnest {} 0\n",
        rows.join("\n"),
        width - 1
    );
    parse_map(&text).expect("flat map")
}

/// Returns (highest rise of the feet in sub-units, horizontal distance at landing).
fn jump(runup: u8, actions: &dyn Fn(u32) -> u8) -> (i32, i32) {
    let map = flat(60);
    let mut sim = Sim::new(&map, 1);
    for _ in 0..20 {
        sim.step(runup);
    }
    let (x0, y0) = (sim.player().x, sim.player().y);
    let mut best = 0;
    for t in 0..200 {
        sim.step(actions(t));
        best = best.max(y0 - sim.player().y);
        if t > 2 && sim.player().on_ground {
            break;
        }
    }
    (best, sim.player().x - x0)
}

#[test]
fn slow_walk_is_exactly_two_fifths() {
    assert_eq!(SLOW_SPEED * 5, RUN_SPEED * 2);
    let map = flat(60);
    let mut sim = Sim::new(&map, 1);
    for _ in 0..60 {
        sim.step(16);
    }
    assert_eq!(sim.player().vx, SLOW_SPEED);
    let mut sim = Sim::new(&map, 1);
    for _ in 0..60 {
        sim.step(8);
    }
    assert_eq!(sim.player().vx, RUN_SPEED);
}

#[test]
fn jump_envelope_matches_the_reference() {
    let (full, _) = jump(4, &|_| 5);
    assert_eq!(full, rise_height(JUMP_SPEED));
    assert!(full > 3 * TILE && full < 4 * TILE, "full jump {full}");
    let (short, _) = jump(4, &|t| if t < 2 { 5 } else { 4 });
    assert!(short < 2 * TILE && short > TILE / 2, "short hop {short}");
    // Jump, release at the apex, press again: the egg boost.
    let (boosted, _) = jump(4, &|t| match t {
        0..=15 => 5,
        16 => 4,
        _ => 5,
    });
    assert!(
        boosted > 5 * TILE && boosted < 6 * TILE,
        "boosted {boosted}"
    );
    assert!(boosted < (envelopes().stand.up + 1) * TILE);
    // Running jump: distance covered in the air.
    let (_, across) = jump(8, &|_| 9);
    assert!(across > 4 * TILE && across < 6 * TILE, "across {across}");
    let (_, across_boost) = jump(8, &|t| match t {
        0..=15 => 9,
        16 => 8,
        _ => 9,
    });
    assert!(
        across_boost < envelopes().stand.across(0).unwrap_or(0) * TILE,
        "across with boost {across_boost}"
    );
    println!(
        "full {full} short {short} boosted {boosted} across {across} boost-across {across_boost}"
    );
}

#[test]
#[allow(clippy::assertions_on_constants)] // the point is to pin the constants
fn documented_numbers() {
    assert_eq!(SLOW_SPEED, 240);
    assert_eq!(JUMP_RISE, 13024);
    assert_eq!(BOOST_RISE, 8424);
    assert!(JUMP_RISE >= JUMP_HEIGHT_TILES * TILE && JUMP_RISE < (JUMP_HEIGHT_TILES + 1) * TILE);
    assert!(BOOST_RISE >= BOOST_HEIGHT_TILES * TILE);
    for tiles in 2..=12 {
        let v = spring_speed(tiles);
        assert!(rise_height(v) >= tiles * TILE + 2 * SUB);
        assert!(rise_height(v - 1) < tiles * TILE + 2 * SUB);
        assert!(v < MAX_FALL * 4);
    }
}

#[test]
fn action_indices_follow_the_contract() {
    use horst_engine::Input;
    let i = Input::from_action(9);
    assert_eq!((i.dir, i.slow, i.jump, i.shoot), (1, false, true, false));
    let i = Input::from_action(14);
    assert_eq!((i.dir, i.slow, i.jump, i.shoot), (-1, true, false, true));
    let i = Input::from_action(7);
    assert_eq!((i.dir, i.slow, i.jump, i.shoot), (0, false, true, true));
    assert_eq!(Input::from_action(200), Input::from_action(4));
}

#[test]
fn a_jump_on_the_first_tick_jumps_from_the_ground() {
    let map = flat(20);
    let mut sim = Sim::new(&map, 1);
    sim.step(5); // jump in place on tick 1
    let p = *sim.player();
    assert_eq!(
        p.vy,
        -JUMP_SPEED + GRAVITY,
        "a ground jump, not the egg boost"
    );
    assert!(p.boost_available && p.eggs == 0);
    // The boost is still there for later.
    for _ in 0..3 {
        sim.step(4);
    }
    assert!(!sim.player().on_ground);
    sim.step(5);
    assert_eq!(sim.player().eggs, 1);

    // On a platform's top at the start too.
    let text = "gcv-map 1\nname: p\nsize: 10 8\ngrid:\n..........\n..........\n..........\n..........\n..........\n..........\n..........\n..........\nentities:\nstart 2 3\nplatform 1 4 dx=0 dy=0\nnest 9 0\n";
    let mut sim = Sim::new(&parse_map(text).expect("map"), 1);
    sim.step(5);
    assert_eq!(sim.player().vy, -JUMP_SPEED + GRAVITY);

    // A start over a pit is in the air: the first press is the egg boost.
    let text = "gcv-map 1\nname: pit\nsize: 10 8\ngrid:\n..........\n..........\n..........\n..........\n..........\n..........\n..........\n##########\nentities:\nstart 2 2\nnest 9 0\n";
    let mut sim = Sim::new(&parse_map(text).expect("map"), 1);
    sim.step(5);
    assert_eq!(sim.player().vy, -BOOST_SPEED + GRAVITY);
    assert!(!sim.player().boost_available);
}

/// A 20 x 20 map of open air with `rows` replacing its last rows and `entities` after
/// `start`; the nest sits far away in the top right corner.
fn room(rows: &[&str], start: (i32, i32), entities: &str) -> horst_engine::Map {
    let mut grid = vec![".".repeat(20); 20 - rows.len()];
    grid.extend(rows.iter().map(|r| r.to_string()));
    let text = format!(
        "gcv-map 1\nname: room\nsize: 20 20\ngrid:\n{}\nentities:\nstart {} {}\nnest 19 0\n{entities}",
        grid.join("\n"),
        start.0,
        start.1
    );
    parse_map(&text).expect("room map")
}

/// The numbers FORMAT.md gives for short jumps, measured (ticks of jump held, then released).
#[test]
fn a_tap_rises_0_61_tiles_and_three_ticks_clear_a_step() {
    let rise = |held: u32| jump(4, &|t| if t < held { 5 } else { 4 }).0;
    assert_eq!(rise(1), 2494); // 0.61 tiles
    assert_eq!(rise(2), 3932); // 0.96 tiles: not onto a 1-tile step
    assert_eq!(rise(3), 5274); // 1.29 tiles
    assert!(rise(2) < TILE && rise(3) >= TILE);
}

/// A jump still works on the 3 ticks after the tick the bird walked off an edge
/// (COYOTE_TICKS - 1, since the counter is spent on the tick it leaves).
#[test]
fn the_coyote_time_is_three_ticks() {
    let map = room(&["#####..............."], (2, 18), "");
    let jumps_after = |wait: u32| {
        let mut sim = Sim::new(&map, 1);
        let mut t = 0;
        while sim.player().on_ground || t == 0 {
            sim.step(16); // slow right
            t += 1;
            assert!(t < 200);
        }
        for _ in 0..wait {
            sim.step(16);
        }
        sim.step(17); // slow right, jump
        sim.player().vy == -JUMP_SPEED + GRAVITY
    };
    assert!(jumps_after(0) && jumps_after(1) && jumps_after(2));
    assert!(
        !jumps_after(3),
        "the fourth tick in the air is the egg boost"
    );
}

/// A stomp bounces 1.41 tiles with jump held; otherwise the bounce is cut like a jump, to
/// 0.23 tiles.
#[test]
fn the_stomp_bounce_is_cut_unless_jump_is_held() {
    let map = room(&[], (5, 5), "flyer 5 10 range=0\n");
    let bounce = |action: u8| {
        let mut sim = Sim::new(&map, 1);
        for _ in 0..200 {
            sim.step(action);
            if sim.player().vy == -STOMP_BOUNCE {
                break;
            }
        }
        assert_eq!(sim.player().vy, -STOMP_BOUNCE, "stomped");
        let y0 = sim.player().y;
        let mut top = y0;
        for _ in 0..60 {
            sim.step(action);
            top = top.min(sim.player().y);
        }
        y0 - top
    };
    assert_eq!(bounce(5), rise_height(STOMP_BOUNCE)); // 5764: 1.41 tiles
    assert_eq!(bounce(4), rise_height(JUMP_CUT)); // 960: 0.23 tiles
}

/// The egg boost sets the upward speed: pressed early in a spring launch it slows the bird.
#[test]
fn the_egg_boost_sets_the_upward_speed() {
    let map = room(
        &["....................", "####################"],
        (2, 17),
        "spring 2 18 strength=6\n",
    );
    let apex = |press: bool| {
        let mut sim = Sim::new(&map, 1);
        for _ in 0..100 {
            sim.step(4);
            if sim.player().vy < -BOOST_SPEED {
                break;
            }
        }
        assert!(sim.player().vy < -BOOST_SPEED, "launched");
        let y0 = sim.player().y;
        let mut top = y0;
        sim.step(if press { 5 } else { 4 });
        if press {
            assert_eq!(sim.player().vy, -BOOST_SPEED + GRAVITY);
        }
        // Up to the apex (the bird then falls back onto the spring).
        while sim.player().vy < 0 {
            top = top.min(sim.player().y);
            sim.step(if press { 5 } else { 4 });
        }
        y0 - top.min(sim.player().y)
    };
    // 6.13 tiles above the launch point without the press; with it only the boost's 2.06.
    assert_eq!((apex(false), apex(true)), (25093, BOOST_RISE));
}

#[test]
fn the_reference_gives_the_measured_numbers() {
    use horst_engine::FORMAT_REFERENCE as f;
    for said in [
        "a 1-tick tap rises 0.61 tiles",
        "3 ticks held clear a 1-tile step",
        "on the 3 ticks after the tick the bird walked off an edge",
        "with jump held it lifts the bird 1.41 tiles",
        "to 0.23 tiles",
        "It sets the speed, it does not add to it",
    ] {
        assert!(f.contains(said), "FORMAT.md: {said}");
    }
    assert!(!f.contains("about 1.5 tiles") && !f.contains("up to 4 ticks after"));
}
