//! The relaxed reachability check over-approximates the engine: every tile the middle of the
//! bird's feet is in during a real run is reached, so `nest_unreachable` never fires on a
//! level a replay (the planner's or anyone's) can win.

use crate::common::*;
use horst_engine::format::reach::{envelopes, reach};
use horst_engine::physics::{PLAYER_H, PLAYER_W, TILE_SHIFT};
use horst_engine::{parse_map, validate_map, Map, Replay, Sim, Status};
use proptest::prelude::*;

/// The tile of the middle of the bird's feet.
fn feet(sim: &Sim) -> (i32, i32) {
    let p = sim.player();
    (
        (p.x + PLAYER_W / 2) >> TILE_SHIFT,
        (p.y + PLAYER_H - 1) >> TILE_SHIFT,
    )
}

/// Plays `actions` (action, ticks) and returns every feet tile inside the map while alive,
/// and the status at the end.
fn trail(map: &Map, seed: u32, actions: &[(u8, u16)]) -> (Vec<(i32, i32)>, Status) {
    let mut sim = Sim::new(map, seed);
    let mut out = vec![feet(&sim)];
    'run: for &(a, n) in actions {
        for _ in 0..n {
            sim.step(a);
            match sim.status() {
                Status::Dead => break 'run,
                _ => out.push(feet(&sim)),
            }
            if sim.status() == Status::Won {
                break 'run;
            }
        }
    }
    out.retain(|&(x, y)| x >= 0 && y >= 0 && x < map.width() && y < map.height());
    (out, sim.status())
}

fn assert_trail_reached(name: &str, map: &Map, trail: &[(i32, i32)]) {
    let r = reach(map);
    for &(x, y) in trail {
        assert!(
            r.at(x, y),
            "{name}: the bird was at ({x}, {y}) but the check does not reach it"
        );
    }
}

fn replay_steps(rp: &Replay) -> Vec<(u8, u16)> {
    rp.actions.iter().map(|s| (s.action, s.ticks)).collect()
}

#[test]
fn envelopes_match_the_physics() {
    let e = envelopes();
    // A jump with the egg boost from the ground: 5.2 tiles; the feet clear 5 rows.
    assert_eq!(e.stand.up, 5);
    // About 7.6 tiles with the boost at the apex, plus slack for the coyote time and tiles.
    let flat = e.stand.across(0).unwrap();
    assert!((8..=12).contains(&flat), "{flat}");
    assert!(e.stand.across(-6).is_none());
    for d in -5..100 {
        assert!(e.stand.across(d) <= e.stand.across(d + 1));
    }
    assert!(
        e.spring[12].up >= 14 && e.stomp.up >= 3,
        "{} {}",
        e.spring[12].up,
        e.stomp.up
    );
    assert!(e.fall.up >= 2);
}

#[test]
fn winning_replays_stay_inside_the_check() {
    let mut runs: Vec<(String, Map, Replay)> = level_names()
        .into_iter()
        .map(|n| (n.clone(), level(&n), replay(&n)))
        .collect();
    let dir = levels_dir().join("corpus");
    for e in std::fs::read_dir(&dir).expect("corpus").flatten() {
        let p = e.path();
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(base) = name.strip_suffix(".replay.json") else {
            continue;
        };
        let map =
            parse_map(&std::fs::read_to_string(dir.join(format!("{base}.map"))).unwrap()).unwrap();
        let rp = horst_engine::parse_replay_json(&std::fs::read_to_string(&p).unwrap()).unwrap();
        runs.push((base.to_string(), map, rp));
    }
    assert!(runs.len() >= 60, "{}", runs.len());
    for (name, map, rp) in &runs {
        let (t, status) = trail(map, rp.seed, &replay_steps(rp));
        assert_eq!(status, Status::Won, "{name}");
        assert_trail_reached(name, map, &t);
        let text = map.canonical();
        let r = validate_map(&text);
        assert!(
            r.warnings.iter().all(|w| w.code != "nest_unreachable"),
            "{name}: {:?}",
            r.warnings
        );
    }
}

/// A random level: terraces with gaps, ledges, spikes, cracked rock, crumbling ledges, and
/// springs, enemies and platforms, from generated numbers.
fn level_from(w: usize, h: usize, cells: &[u8], ents: &[(u8, u8, u8, u8)]) -> String {
    const KEYS: &[u8] = b"...........#G--^C~IS";
    let mut grid: Vec<Vec<u8>> = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| {
                    let c = cells[(y * w + x) % cells.len()];
                    if y == h - 1 && !c.is_multiple_of(5) {
                        b'G'
                    } else {
                        KEYS[c as usize % KEYS.len()]
                    }
                })
                .collect()
        })
        .collect();
    let (sx, sy) = (1usize, h - 2);
    grid[sy][sx] = b'.';
    grid[sy + 1][sx] = b'G';
    let mut lines = vec![format!("start {sx} {sy}"), format!("nest {} 0", w - 1)];
    grid[0][w - 1] = b'.';
    for &(k, x, y, p) in ents {
        let (x, y, p) = (x as usize % w, y as usize % h, p as usize);
        if (x, y) == (sx, sy) || (x, y) == (w - 1, 0) {
            continue;
        }
        let line = match k % 5 {
            0 => format!("spring {x} {y} strength={}", 2 + p % 11),
            1 => format!("walker {x} {y} range={} speed={}", p % 4, 1 + p % 16),
            2 => {
                let fits = if p % 2 == 0 {
                    x.min(w - 1 - x)
                } else {
                    y.min(h - 1 - y)
                };
                format!(
                    "flyer {x} {y} axis={} range={} speed={}",
                    if p % 2 == 0 { "h" } else { "v" },
                    (p / 2 % 5).min(fits),
                    1 + p % 16
                )
            }
            3 => {
                let width = 1 + p % 3;
                if x + width > w {
                    continue;
                }
                let dx = (p / 3 % 6).min(w - x - width) as i64 * if p % 2 == 0 { 1 } else { 0 };
                let dy = -((p / 5 % 5).min(y) as i64);
                format!(
                    "platform {x} {y} dx={dx} dy={dy} width={width} speed={}",
                    1 + p % 16
                )
            }
            _ => format!("collectible {x} {y}"),
        };
        if k % 5 != 3 {
            grid[y][x] = b'.';
        }
        lines.push(line);
    }
    let rows: Vec<String> = grid
        .into_iter()
        .map(|r| String::from_utf8(r).unwrap_or_default())
        .collect();
    format!(
        "gcv-map 1\nname: r\nsize: {w} {h}\ngrid:\n{}\nentities:\n{}\n",
        rows.join("\n"),
        lines.join("\n")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random inputs on random levels: every tile the bird's feet were in is reached, and a
    /// nest put where the bird went is never called unreachable.
    #[test]
    fn random_runs_stay_inside_the_check(
        w in 8usize..40,
        h in 6usize..20,
        cells in proptest::collection::vec(any::<u8>(), 1..400),
        ents in proptest::collection::vec(any::<(u8, u8, u8, u8)>(), 0..10),
        actions in proptest::collection::vec((0u8..20, 1u16..40), 1..60),
        seed in any::<u32>(),
        pick in any::<usize>(),
    ) {
        let text = level_from(w, h, &cells, &ents);
        let Ok(map) = parse_map(&text) else { return Ok(()) };
        let (t, _) = trail(&map, seed, &actions);
        let r = reach(&map);
        for &(x, y) in &t {
            prop_assert!(r.at(x, y), "at ({}, {}) on\n{}\n{:?}", x, y, text, actions);
        }
        // Move the nest onto a tile the bird's hitbox touched (nests do not change the run).
        let (x, y) = t[pick % t.len()];
        let moved = text.replace(&format!("nest {} 0", w - 1), &format!("nest {x} {y}"));
        let v = validate_map(&moved);
        if v.valid {
            prop_assert!(
                v.warnings.iter().all(|w| w.code != "nest_unreachable"),
                "nest at ({}, {}) called unreachable:\n{}\n{:?}", x, y, moved, actions
            );
        }
    }
}

/// The longest jumps there are: full speed off the edge of a high floor (with and without a
/// spring on it), the jump held for every length, the egg boost laid at every time.
#[test]
fn extreme_jumps_stay_inside_the_check() {
    let (w, h) = (90usize, 70usize);
    for spring in [None, Some(4), Some(12)] {
        let mut rows = vec![".".repeat(w); h];
        rows[20] = format!("{}{}", "#".repeat(12), ".".repeat(w - 12));
        rows[h - 1] = "#".repeat(w);
        let mut ents = "start 1 19\nnest 89 68\n".to_string();
        if let Some(s) = spring {
            ents.push_str(&format!("spring 11 19 strength={s}\n"));
        }
        let text = format!(
            "gcv-map 1\nname: far\nsize: {w} {h}\ngrid:\n{}\nentities:\n{ents}",
            rows.join("\n")
        );
        let map = parse_map(&text).expect("map");
        let r = reach(&map);
        for runup in [0u16, 8, 20, 30] {
            for hold in [0u16, 1, 4, 8, 12, 17, 30] {
                for gap in [1u16, 2, 4, 10, 20, 40] {
                    let mut steps = vec![(8u8, 1u16)];
                    if runup > 0 {
                        steps.push((8, runup));
                    }
                    if hold > 0 {
                        steps.push((9, hold));
                    }
                    steps.extend([(8, gap), (9, 120), (8, 200)]);
                    let (t, _) = trail(&map, 1, &steps);
                    for &(x, y) in &t {
                        assert!(r.at(x, y), "spring {spring:?} {steps:?}: ({x}, {y})");
                    }
                }
            }
        }
    }
}

/// A map of `rows` (bottom row solid ground added) with the start at (1, floor - 1).
fn room(rows: &[&str], ents: &str) -> String {
    let w = rows[0].len();
    let mut all: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    all.push("#".repeat(w));
    format!(
        "gcv-map 1\nname: room\nsize: {w} {}\ngrid:\n{}\nentities:\n{ents}",
        all.len(),
        all.join("\n")
    )
}

fn warns(text: &str) -> bool {
    let r = validate_map(text);
    assert!(r.valid, "{:?}", r.errors);
    r.warnings.iter().any(|w| w.code == "nest_unreachable")
}

#[test]
fn the_warning_still_fires_where_no_run_can_go() {
    let air = "........................................";
    let mut rows = vec![air; 12];
    // A pillar 7 tiles high: a jump with the boost rises 5.
    let pillar = "..............................#.........";
    for r in rows.iter_mut().skip(5) {
        *r = pillar;
    }
    let pillar_map = room(&rows, "start 1 11\nnest 30 4\n");
    assert!(warns(&pillar_map));
    // A spring beside it, or a walker to bounce from on the way, makes it reachable.
    assert!(!warns(
        &pillar_map.replace("nest 30 4", "nest 30 4\nspring 28 11 strength=6")
    ));
    // A gap of 20 tiles at the same height: a running jump with the boost covers about 8.
    let gap = room(
        &[
            "........................................",
            "........................................",
            "#########....................###########",
        ],
        "start 1 1\nnest 35 1\n",
    )
    .replace(
        "########################################\n",
        "........................................\n",
    );
    assert!(warns(&gap));
    // A platform that carries the bird across does not warn.
    assert!(!warns(
        &gap.replace("nest 35 1", "nest 35 1\nplatform 10 2 dx=16 width=3")
    ));
    // A nest sealed in rock.
    let sealed = room(
        &[
            "..................###...",
            "..................#.#...",
            "..................###...",
        ],
        "start 1 2\nnest 19 1\n",
    );
    assert!(warns(&sealed));
    // A ledge floor cannot be dropped through: the room below it is out of reach.
    let ledges = room(
        &[
            "........................",
            "------------------------",
            "........................",
        ],
        "start 1 0\nnest 20 2\n",
    );
    assert!(warns(&ledges));
    // A crumbling floor can fall away.
    assert!(!warns(&ledges.replace(
        "------------------------",
        "~~~~~~~~~~~~~~~~~~~~~~~~"
    )));
}

/// A cracked lid over a closed chamber (levels/probes/guest-cracked-lid-spring): a pebble flies
/// along the row of the bird's top edge plus 7 px, and the bird's head is in the lid's row only
/// where that row is open, so no pebble ever reaches the lid. The check counted a bird with its
/// feet in the row under a cracked tile as able to shoot it, and called the nest on the lid
/// reachable (the planner then searched until its time limit). With a notch in the lid's row,
/// closed above, the bird's head gets into that row, and the lid breaks from its end.
#[test]
fn a_cracked_lid_no_pebble_reaches_stays_shut() {
    let lid = room(
        &[
            "....................",
            "....................",
            "....................",
            "####CCCCCCCCCC####..",
            "####..........######",
            "####..........######",
            "####..........######",
            "####..........######",
            "####..........######",
            "####..........######",
            "####..........######",
            "####..........######",
        ],
        "start 6 11\nspring 10 11 strength=8\nnest 10 2\n",
    );
    assert!(warns(&lid));
    let notch = lid
        .replace(
            "....................\n####CCCCCCCCCC####..",
            "............##......\n####CCCCCCCC..####..",
        )
        .replace("spring 10 11", "spring 13 11");
    assert!(!warns(&notch), "{notch}");
}

/// `levels/probes/guest-lift-down-through-ledges`: a lift going down through a row of one-way
/// ledges across the map, the nest under the row. The carry is checked against solid blocks
/// only, but at speed 4 (128 sub-units a tick, 32 to a tile) the lift's top meets the ledges'
/// top on a tick, and the rider's fall that tick lands on the ledge: nothing gets below the
/// row. The check counted every row of the lift's path a launch for whoever reached any of it.
/// At speed 5 (160) the carry takes the feet past the ledges' top inside a tick, the bird rides
/// on through, and the twin is won (the referee, below): no warning there.
#[test]
fn a_lift_that_sets_its_rider_down_on_a_ledge_row_is_cut_there() {
    let map = |speed: u32| {
        room(
            &[
                "............",
                "............",
                "............",
                "............",
                "............",
                "GGGG........",
                "EEEE........",
                "------------",
                "............",
                "............",
                "............",
                "............",
                "............",
                "GGGGGGGGGGGG",
            ],
            &format!("start 1 4\nplatform 4 5 dx=0 dy=7 speed={speed} width=2\nnest 10 12\n"),
        )
    };
    // Onto the lift, ride it for a while, and walk right off it.
    let won = |text: &str| {
        let m = parse_map(text).unwrap();
        (0..=120u16).any(|k| {
            let (_, status) = trail(&m, 1, &[(8, 22), (4, 5 * k + 1), (8, 60)]);
            status == Status::Won
        })
    };
    for speed in [1, 2, 4, 8, 16] {
        assert!(!won(&map(speed)), "speed {speed}");
        assert!(warns(&map(speed)), "speed {speed}");
    }
    for speed in [5, 7] {
        assert!(won(&map(speed)), "speed {speed}");
        assert!(!warns(&map(speed)), "speed {speed}");
    }
    // A gap in the ledge row under the path: the rider goes down through it.
    let gap = map(4).replace("------------\n", "----..------\n");
    assert!(!warns(&gap), "{gap}");
    // The lift sideways as far as down: still aligned; further sideways than down: not cut.
    let diag = map(4)
        .replace("dx=0 dy=7", "dx=5 dy=7")
        .replace("nest 10 12", "nest 11 12");
    assert!(warns(&diag), "{diag}");
    let wide = map(4).replace("dx=0 dy=7", "dx=6 dy=5");
    assert!(!warns(&wide), "{wide}");
}
