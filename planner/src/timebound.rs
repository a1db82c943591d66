//! The replay limit: a lower bound on the tick of any win, from the rows the bird must pass
//! through their openings. Above the replay limit (36,000 ticks) no replay can win, though
//! every nest may be reachable: `levels/probes/guest-serpentine-11` (eleven floors 512 tiles
//! wide, each open at one end) needs 38,000 ticks at a run.
//!
//! The argument, for one nest below the start (above is the mirror image):
//!
//! - The bird's hitbox never overlaps a solid block (its moves stop at them; a platform
//!   carrying it into one stops it or crushes it), and it moves less than a tile a tick, so to
//!   be entirely below a row it must first overlap that row, and then its whole width lies in
//!   one run of the row's open tiles (any tile not solid, and cracked rock, which a pebble may
//!   open). For each row between the start and the nest, take the first tick `t_k` on which
//!   the bird is entirely below it: on the tick before, its left edge was in one of the row's
//!   runs. Rows further down are passed later (`t_k` grows with the row), and at the win the
//!   bird is below every row up to two above the nest's and overlaps the nest's tile. The row
//!   just above the nest's it has either passed too, or it overlaps that row at the win, and
//!   then its left edge is in one of that row's runs on the tick of the win: either way on
//!   some tick no earlier than the rows before and no later than the win.
//! - The bird's left edge moves at most `RUN_SPEED` a tick sideways (its speed only approaches
//!   a wanted speed of at most that) plus a platform's carry (at most its speed, plus one for
//!   the rounding of its path), so the win comes no earlier than the least sum of the sideways
//!   distances start -> a point of a run of the first row -> ... -> a point over the nest,
//!   divided by that speed. The least sum is found exactly (a minimum exists with every point
//!   at the start, an end of the nest's range or an end of some run, so it is computed over
//!   those points, row by row, in two sweeps).
//!
//! Rows with no solid tile constrain nothing and are left out. Walls between the rows, hazards,
//! enemies, gravity and the time to climb are all ignored: the bound only ever comes out lower
//! than the truth.

use horst_engine::physics::{PLAYER_W, RUN_SPEED, SPEED_UNIT, TILE};
use horst_engine::sim::palette::{EntityKind, PLATFORM_SPEED};
use horst_engine::{Block, Map};

/// An inclusive range of the bird's left edge (sub-units).
type Span = (i64, i64);

/// The fastest the bird's left edge moves sideways in one tick on this map (sub-units).
pub fn max_step(map: &Map) -> i64 {
    let carry = map
        .entities()
        .iter()
        .filter(|e| e.kind == EntityKind::Platform)
        .map(|e| e.param(PLATFORM_SPEED) * SPEED_UNIT as i64 + 1)
        .max()
        .unwrap_or(0);
    RUN_SPEED as i64 + carry
}

/// The runs of row `y` the bird's whole width can be in, or None when the row has no solid
/// tile (no constraint).
fn runs(map: &Map, y: i32) -> Option<Vec<Span>> {
    let w = map.width();
    let open = |x: i32| {
        let b = map.tile(x, y).unwrap_or(Block::Empty);
        !b.is_solid() || b == Block::Cracked
    };
    if (0..w).all(open) {
        return None;
    }
    let mut out = Vec::new();
    let mut x = 0;
    while x < w {
        if !open(x) {
            x += 1;
            continue;
        }
        let x0 = x;
        while x < w && open(x) {
            x += 1;
        }
        out.push((
            x0 as i64 * TILE as i64,
            x as i64 * TILE as i64 - PLAYER_W as i64,
        ));
    }
    Some(out)
}

/// The least total sideways distance (sub-units) from `x0` through a point of every row's
/// runs, in order, to a point of `last` (see the module documentation).
fn least_distance(x0: i64, rows: &[Vec<Span>], last: Span) -> i64 {
    // The points a minimum can be chosen among.
    let mut points: Vec<i64> = vec![x0, last.0, last.1];
    for r in rows {
        for &(a, b) in r {
            points.push(a);
            points.push(b);
        }
    }
    points.sort_unstable();
    points.dedup();
    // f: the least distance to each point of the previous row (None: not in it).
    let mut f: Vec<Option<i64>> = points.iter().map(|&p| (p == x0).then_some(0)).collect();
    let inside = |spans: &[Span], p: i64| spans.iter().any(|&(a, b)| a <= p && p <= b);
    let step = |f: &[Option<i64>], spans: &[Span]| -> Vec<Option<i64>> {
        // g(p) = min over q of f(q) + |p - q|, in a sweep from each side.
        let n = points.len();
        let mut g = vec![None::<i64>; n];
        let mut best: Option<i64> = None; // min of f(q) - q over q <= p
        for i in 0..n {
            if let Some(v) = f[i] {
                best = Some(best.map_or(v - points[i], |b| b.min(v - points[i])));
            }
            g[i] = best.map(|b| b + points[i]);
        }
        let mut best: Option<i64> = None; // min of f(q) + q over q >= p
        for i in (0..n).rev() {
            if let Some(v) = f[i] {
                best = Some(best.map_or(v + points[i], |b| b.min(v + points[i])));
            }
            if let Some(b) = best {
                let v = b - points[i];
                g[i] = Some(g[i].map_or(v, |x| x.min(v)));
            }
        }
        for i in 0..n {
            if !inside(spans, points[i]) {
                g[i] = None;
            }
        }
        g
    };
    for r in rows {
        f = step(&f, r);
    }
    step(&f, &[last])
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(i64::MAX)
}

/// A lower bound on the tick of any win (the least over the nests), in ticks.
pub fn min_win_ticks(map: &Map) -> u64 {
    let (sx, sy) = map.start();
    let x0 = (sx * TILE + (TILE - PLAYER_W) / 2) as i64;
    let x_max = (map.width() * TILE - PLAYER_W) as i64;
    let speed = max_step(map);
    map.nests()
        .iter()
        .map(|&(nx, ny)| {
            let last = (
                (nx as i64 * TILE as i64 - PLAYER_W as i64 + 1).max(0),
                (nx as i64 * TILE as i64 + TILE as i64 - 1).min(x_max),
            );
            // The rows passed, in the order they are passed.
            let order: Vec<i32> = if ny >= sy + 2 {
                (sy + 1..=ny - 1).collect()
            } else if ny + 2 <= sy {
                (ny + 1..=sy - 1).rev().collect()
            } else {
                Vec::new()
            };
            let rows: Vec<Vec<Span>> = order.into_iter().filter_map(|y| runs(map, y)).collect();
            let d = least_distance(x0, &rows, last);
            if d == i64::MAX {
                // No point of some row's runs: the rows themselves cut the nest off.
                return u64::MAX;
            }
            (d as u64).div_ceil(speed as u64)
        })
        .min()
        .unwrap_or(u64::MAX)
}

/// True when no win can come within `max_ticks` (see the module documentation).
pub fn prove(map: &Map, max_ticks: u32) -> bool {
    min_win_ticks(map) > max_ticks as u64
}
