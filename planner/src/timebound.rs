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
//!   one run of the row's open tiles (any tile not solid, and cracked rock that a pebble may
//!   open: a crack with solid blocks on both sides in its row never opens, as a pebble flies
//!   along a row from where the bird overlaps it, `relaxed::breakable_cracked`). For each row between the start and the nest, take the first tick `t_k` on which
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
//!
//! The same argument turned on its side bounds a way made long by walls beside the bird
//! (`levels/probes/guest-column-serpentine-128`: walls one tile wide open in turn at the top
//! and the bottom, start and nest in the same row, so no row lies between them): the bird
//! moves less than a tile a tick sideways, so to be entirely right of a column it first
//! overlaps it, with its whole height in one run of the column's open tiles (the open air above
//! the map is a run too, unless a roof solid across the map lies above the start; a run that
//! reaches the map's bottom is taken as open below it); its top edge moves at most
//! `max_rise_or_fall` a tick up or down. The win comes no earlier than either bound, so each
//! nest takes the larger of the two.

use horst_engine::physics::{
    spring_speed, BOOST_SPEED, JUMP_SPEED, MAX_FALL, PLAYER_H, PLAYER_W, RUN_SPEED, SPEED_UNIT,
    STOMP_BOUNCE, TILE,
};
use horst_engine::sim::palette::{EntityKind, PLATFORM_SPEED, SPRING_STRENGTH};
use horst_engine::{Block, Map};

/// An inclusive range of the bird's left edge (sub-units).
type Span = (i64, i64);

/// The most a platform of this map moves in one tick along either axis (sub-units), plus one
/// for the rounding of its path; 0 without platforms.
fn platform_carry(map: &Map) -> i64 {
    map.entities()
        .iter()
        .filter(|e| e.kind == EntityKind::Platform)
        .map(|e| e.param(PLATFORM_SPEED) * SPEED_UNIT as i64 + 1)
        .max()
        .unwrap_or(0)
}

/// The fastest the bird's left edge moves sideways in one tick on this map (sub-units).
pub fn max_step(map: &Map) -> i64 {
    RUN_SPEED as i64 + platform_carry(map)
}

/// The most the bird's top edge moves up or down in one tick on this map (sub-units): the
/// fastest of a fall, a jump, the egg boost, a stomp's bounce and every spring's launch, plus
/// twice a platform's move (the carry at the start of the tick, and a landing on a platform
/// that rose past the feet this tick lifts the bird by up to its move again).
pub fn max_rise_or_fall(map: &Map) -> i64 {
    let spring = map
        .entities()
        .iter()
        .filter(|e| e.kind == EntityKind::Spring)
        .map(|e| spring_speed(e.param(SPRING_STRENGTH) as i32))
        .max()
        .unwrap_or(0);
    let own = [MAX_FALL, JUMP_SPEED, BOOST_SPEED, STOMP_BOUNCE, spring]
        .into_iter()
        .max()
        .unwrap_or(MAX_FALL);
    own as i64 + 2 * platform_carry(map)
}

/// The map's tiles as the bound sees them: which may be open to the bird at some point.
struct Tiles<'a> {
    map: &'a Map,
    /// Per tile (row-major): cracked rock a pebble could ever break (`relaxed::breakable_cracked`).
    breakable: Vec<bool>,
}

impl<'a> Tiles<'a> {
    fn new(map: &'a Map) -> Tiles<'a> {
        Tiles {
            map,
            breakable: crate::relaxed::breakable_cracked(map),
        }
    }

    /// Whether tile (x, y) may be open to the bird at some point: not solid, or cracked rock
    /// that a pebble may break. A crack with solid blocks on both sides in its row (decoration
    /// in a floor or a roof) stays solid: a pebble flies along a row the bird's hitbox overlaps
    /// and stops at the first solid block (`levels/probes/guest-serpentine-11-sealed-cracks`).
    fn open(&self, x: i32, y: i32) -> bool {
        let b = self.map.tile(x, y).unwrap_or(Block::Empty);
        !b.is_solid()
            || (b == Block::Cracked && self.breakable[(y * self.map.width() + x) as usize])
    }
}

/// The runs `a..b` of open tiles among `0..n` (`open` says which), or None when every tile
/// is open (no constraint).
fn open_runs(n: i32, open: impl Fn(i32) -> bool) -> Option<Vec<(i32, i32)>> {
    if (0..n).all(&open) {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if !open(i) {
            i += 1;
            continue;
        }
        let i0 = i;
        while i < n && open(i) {
            i += 1;
        }
        out.push((i0, i));
    }
    Some(out)
}

/// The runs of row `y` the bird's whole width can be in, or None when the row has no solid
/// tile (no constraint).
fn runs(tiles: &Tiles, y: i32) -> Option<Vec<Span>> {
    let t = TILE as i64;
    let runs = open_runs(tiles.map.width(), |x| tiles.open(x, y))?;
    Some(
        runs.into_iter()
            .map(|(a, b)| (a as i64 * t, b as i64 * t - PLAYER_W as i64))
            .collect(),
    )
}

/// Beyond every position a top edge can take: the open air above the map, and below it.
const FAR: i64 = 1 << 40;

/// The runs of column `x` the bird's whole height can be in (ranges of its top edge), or None
/// when the column has no solid tile (no constraint). The open air above the map is one run
/// (with the column's top run, when its top tile is open); a run that reaches the map's bottom
/// is taken as open below (the bird dies there, which only loosens the bound).
fn column_runs(tiles: &Tiles, x: i32, top_min: i64) -> Option<Vec<Span>> {
    let (h, t) = (tiles.map.height(), TILE as i64);
    let runs = open_runs(h, |y| tiles.open(x, y))?;
    let mut out = Vec::new();
    if !tiles.open(x, 0) {
        // Above the map is open air, also over a column solid up to its top
        // (`levels/probes/guest-over-the-map-top`).
        out.push((-FAR, -(PLAYER_H as i64)));
    }
    for (a, b) in runs {
        let lo = if a == 0 { -FAR } else { a as i64 * t };
        let hi = if b == h {
            FAR
        } else {
            b as i64 * t - PLAYER_H as i64
        };
        out.push((lo, hi));
    }
    // Above a roof the bird never gets (`roof_top`).
    Some(
        out.into_iter()
            .map(|(lo, hi)| (lo.max(top_min), hi))
            .filter(|&(lo, hi)| lo <= hi)
            .collect(),
    )
}

/// The highest the bird's top edge can ever be: under the lowest row above the start that is
/// solid across the whole map (cracked rock counts only where no pebble can break it), if any. The map's sides are walls
/// and the bird moves less than a tile a tick, so a bird below such a row stays below it (a
/// platform that would carry it up into the row stops it or crushes it; a jump or a spring only
/// sets its speed). Without it a map under a roof would let the bird go round every wall
/// through the open air above the map.
fn roof_top(tiles: &Tiles) -> i64 {
    let sy = tiles.map.start().1;
    (0..sy)
        .rev()
        .find(|&y| (0..tiles.map.width()).all(|x| !tiles.open(x, y)))
        .map_or(-FAR, |y| (y as i64 + 1) * TILE as i64)
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

/// The rows (or columns) passed on the way from `from` to `to`, in the order they are passed
/// (none when the two are the same or neighbours).
fn between(from: i32, to: i32) -> Vec<i32> {
    if to >= from + 2 {
        (from + 1..=to - 1).collect()
    } else if to + 2 <= from {
        (to + 1..=from - 1).rev().collect()
    } else {
        Vec::new()
    }
}

/// A lower bound on the tick of any win at the nest (nx, ny) from the columns between the
/// start and the nest (the module documentation's argument on its side), in ticks.
fn column_bound(tiles: &Tiles, (nx, ny): (i32, i32)) -> u64 {
    let map = tiles.map;
    let (sx, sy) = map.start();
    // The bird starts on the bottom of its tile.
    let y0 = (sy * TILE + TILE - PLAYER_H) as i64;
    let last = (
        ny as i64 * TILE as i64 - PLAYER_H as i64 + 1,
        ny as i64 * TILE as i64 + TILE as i64 - 1,
    );
    let top_min = roof_top(tiles);
    let cols: Vec<Vec<Span>> = between(sx, nx)
        .into_iter()
        .filter_map(|x| column_runs(tiles, x, top_min))
        .collect();
    if cols.is_empty() {
        return 0;
    }
    let d = least_distance(y0, &cols, last);
    if d == i64::MAX {
        return u64::MAX;
    }
    (d as u64).div_ceil(max_rise_or_fall(map) as u64)
}

/// A lower bound on the tick of any win (the least over the nests), in ticks.
pub fn min_win_ticks(map: &Map) -> u64 {
    let (sx, sy) = map.start();
    let x0 = (sx * TILE + (TILE - PLAYER_W) / 2) as i64;
    let x_max = (map.width() * TILE - PLAYER_W) as i64;
    let speed = max_step(map);
    let tiles = Tiles::new(map);
    map.nests()
        .iter()
        .map(|&(nx, ny)| {
            let by_columns = column_bound(&tiles, (nx, ny));
            let last = (
                (nx as i64 * TILE as i64 - PLAYER_W as i64 + 1).max(0),
                (nx as i64 * TILE as i64 + TILE as i64 - 1).min(x_max),
            );
            // The rows passed, in the order they are passed.
            let rows: Vec<Vec<Span>> = between(sy, ny)
                .into_iter()
                .filter_map(|y| runs(&tiles, y))
                .collect();
            let d = least_distance(x0, &rows, last);
            if d == i64::MAX {
                // No point of some row's runs: the rows themselves cut the nest off.
                return u64::MAX;
            }
            (d as u64).div_ceil(speed as u64).max(by_columns)
        })
        .min()
        .unwrap_or(u64::MAX)
}

/// True when no win can come within `max_ticks` (see the module documentation).
pub fn prove(map: &Map, max_ticks: u32) -> bool {
    min_win_ticks(map) > max_ticks as u64
}
