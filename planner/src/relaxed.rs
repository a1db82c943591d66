//! The relaxed tile graph: where could the bird be, ignoring timing, momentum and enemies?
//!
//! Cells are tiles, plus `PAD` rows of open air above the map. The bird may move from a cell
//! to any of its 8 neighbours that is open (not solid; cracked rock counts as open where a
//! pebble could break it, see [`breakable_cracked`]), but it may only move *up* into a cell
//! that lies within the lift of a support below it (ground, a ledge, a spring, a platform's
//! path, a flyer to stomp) in its own or a neighbouring column. The lift is generous (a full jump plus the egg boost plus the bird's
//! height), so the graph over-approximates what the bird can reach:
//!
//! - backwards from the nests it gives the heuristic (breadth-first distance in tiles), which
//!   follows the terrain around cliffs instead of "run to the right";
//! - forwards from the start it proves a level unsolvable at once when no nest is reached (there
//!   a spike tile is closed too: the bird's middle never enters one alive).

use horst_engine::sim::palette::{EntityKind, PLATFORM_DX, PLATFORM_DY, PLATFORM_WIDTH};
use horst_engine::sim::palette::{FLYER_AXIS, FLYER_RANGE, SPRING_STRENGTH};
use horst_engine::{Block, Map};
use std::collections::VecDeque;

/// Rows of open air above the map that the graph includes.
pub const PAD: i32 = 8;
/// How far above a support the bird's middle can get: 3.18 tiles of jump, 2.05 of boost,
/// plus its own height and a tile of slack.
const LIFT: i32 = 7;
/// Stomping a flyer bounces 1.4 tiles and restores the boost.
const FLYER_LIFT: i32 = 5;
pub const UNREACHED: u32 = u32::MAX;

pub struct Relaxed {
    pub width: i32,
    pub height: i32,
    /// Distance in tiles to the nearest nest over the relaxed graph (`UNREACHED` if none),
    /// row-major over `height + PAD` rows; row 0 is `PAD` rows above the map.
    pub dist: Vec<u32>,
    /// A nest is reachable from the start in the relaxed graph.
    pub nest_reachable: bool,
    /// The largest finite distance (used for cells that do not reach a nest).
    pub max_dist: u32,
}

/// Per tile of the map (row-major): cracked rock that a pebble could ever break. A pebble flies
/// along one row and is checked against the tile at its leading edge, column by column (5 px a
/// tick, so no column is skipped), from a column the bird's middle row overlaps, which is open;
/// it stops at the first solid tile. So a cracked tile can only break if a horizontal neighbour
/// is open or is itself cracked rock that can break. Every other cracked tile stays solid.
pub fn breakable_cracked(map: &Map) -> Vec<bool> {
    let (w, h) = (map.width(), map.height());
    let at = |x: i32, y: i32| map.tile(x, y).unwrap_or(Block::Rock);
    let mut can = vec![false; (w * h) as usize];
    loop {
        let mut changed = false;
        for y in 0..h {
            for x in 0..w {
                let i = (y * w + x) as usize;
                if can[i] || at(x, y) != Block::Cracked {
                    continue;
                }
                let via = |nx: i32| {
                    nx >= 0 && nx < w && (!at(nx, y).is_solid() || can[(y * w + nx) as usize])
                };
                if via(x - 1) || via(x + 1) {
                    can[i] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return can;
        }
    }
}

/// The relaxed graph's cells: which are open (cracked rock counts as open where `breakable`
/// says so) and which the bird may move up into (`up_ok`).
struct Graph {
    open: Vec<bool>,
    up_ok: Vec<bool>,
}

fn graph(map: &Map, breakable: &[bool]) -> Graph {
    let w = map.width();
    let h = map.height();
    let rows = h + PAD;
    let n = (w * rows) as usize;
    let idx = |x: i32, r: i32| (r * w + x) as usize;
    let tile = |x: i32, r: i32| -> Block {
        let y = r - PAD;
        if y < 0 {
            Block::Empty
        } else {
            map.tile(x, y).unwrap_or(Block::Empty)
        }
    };
    let mut open = vec![false; n];
    let mut lift = vec![0i32; n];
    for r in 0..rows {
        for x in 0..w {
            let b = tile(x, r);
            open[idx(x, r)] =
                !b.is_solid() || (b == Block::Cracked && breakable[((r - PAD) * w + x) as usize]);
        }
    }
    for r in 0..rows {
        for x in 0..w {
            if !open[idx(x, r)] {
                continue;
            }
            if r + 1 < rows {
                let below = tile(x, r + 1);
                if below.is_solid() || below.is_one_way() {
                    lift[idx(x, r)] = LIFT;
                }
            }
        }
    }
    let raise = |x: i32, r: i32, l: i32, lift: &mut Vec<i32>| {
        if x >= 0 && x < w && r >= 0 && r < rows {
            let i = idx(x, r);
            if open[i] && lift[i] < l {
                lift[i] = l;
            }
        }
    };
    for e in map.entities() {
        let r = e.y + PAD;
        match e.kind {
            EntityKind::Spring => {
                raise(e.x, r, e.param(SPRING_STRENGTH) as i32 + 4, &mut lift);
            }
            EntityKind::Platform => {
                let (dx, dy) = (e.param(PLATFORM_DX) as i32, e.param(PLATFORM_DY) as i32);
                let pw = e.param(PLATFORM_WIDTH) as i32;
                for y in r.min(r + dy)..=r.max(r + dy) {
                    for x in e.x.min(e.x + dx)..=(e.x.max(e.x + dx) + pw - 1) {
                        raise(x, y - 1, LIFT, &mut lift);
                        raise(x, y, LIFT, &mut lift);
                    }
                }
            }
            EntityKind::Flyer => {
                let range = e.param(FLYER_RANGE) as i32;
                let vertical = e.param(FLYER_AXIS) == 1;
                for d in -range..=range {
                    let (x, y) = if vertical { (e.x, r + d) } else { (e.x + d, r) };
                    raise(x, y - 1, FLYER_LIFT, &mut lift);
                }
            }
            _ => {}
        }
    }
    // up_ok: the cell lies within the lift of a support below it in its column or a
    // neighbouring one.
    let mut up_ok = vec![false; n];
    for r in 0..rows {
        for x in 0..w {
            if !open[idx(x, r)] {
                continue;
            }
            'cols: for c in (x - 1).max(0)..=(x + 1).min(w - 1) {
                for k in 0..=14 {
                    let rr = r + k;
                    if rr >= rows || !open[idx(c, rr)] {
                        break;
                    }
                    if lift[idx(c, rr)] > 0 && lift[idx(c, rr)] >= k {
                        up_ok[idx(x, r)] = true;
                        break 'cols;
                    }
                }
            }
        }
    }
    Graph { open, up_ok }
}

/// Pebbles fly 48 ticks at 5 px a tick: 15 tiles.
const PEBBLE_TILES: i32 = 15;

/// Forward from the start over `g`, never into a cell of `spikes`: whether a nest (a cell with
/// distance 0) is reached, and the cells reached.
fn forward(map: &Map, g: &Graph, spikes: &[bool], dist: &[u32]) -> (bool, Vec<bool>) {
    let w = map.width();
    let rows = map.height() + PAD;
    let idx = |x: i32, r: i32| (r * w + x) as usize;
    let inside = |x: i32, r: i32| x >= 0 && x < w && r >= 0 && r < rows;
    let mut seen = vec![false; (w * rows) as usize];
    let mut q = VecDeque::new();
    let (sx, sy) = map.start();
    if inside(sx, sy + PAD) {
        seen[idx(sx, sy + PAD)] = true;
        q.push_back((sx, sy + PAD));
    }
    while let Some((ax, ar)) = q.pop_front() {
        if dist[idx(ax, ar)] == 0 {
            return (true, seen);
        }
        for (dx, dr) in DIRS {
            let (bx, br) = (ax + dx, ar + dr);
            if inside(bx, br)
                && !seen[idx(bx, br)]
                && !spikes[idx(bx, br)]
                && g.edge(map, ax, ar, dx, dr)
            {
                seen[idx(bx, br)] = true;
                q.push_back((bx, br));
            }
        }
    }
    (false, seen)
}

const DIRS: [(i32, i32); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
];

impl Graph {
    /// A move from a to b = a + d: both open, a diagonal not squeezed between two closed
    /// cells, and up only into a cell within the lift of a support.
    fn edge(&self, map: &Map, ax: i32, ar: i32, dx: i32, dr: i32) -> bool {
        let w = map.width();
        let rows = map.height() + PAD;
        let idx = |x: i32, r: i32| (r * w + x) as usize;
        let inside = |x: i32, r: i32| x >= 0 && x < w && r >= 0 && r < rows;
        let (bx, br) = (ax + dx, ar + dr);
        if !inside(ax, ar) || !inside(bx, br) || !self.open[idx(ax, ar)] || !self.open[idx(bx, br)]
        {
            return false;
        }
        if dx != 0 && dr != 0 && !self.open[idx(ax + dx, ar)] && !self.open[idx(ax, ar + dr)] {
            return false;
        }
        dr >= 0 || self.up_ok[idx(bx, br)]
    }
}

impl Relaxed {
    pub fn new(map: &Map) -> Relaxed {
        let w = map.width();
        let h = map.height();
        let rows = h + PAD;
        let n = (w * rows) as usize;
        let idx = |x: i32, r: i32| (r * w + x) as usize;
        // Cell (x, r) is tile (x, r - PAD).
        let tile = |x: i32, r: i32| -> Block {
            let y = r - PAD;
            if y < 0 {
                Block::Empty
            } else {
                map.tile(x, y).unwrap_or(Block::Empty)
            }
        };
        let breakable = breakable_cracked(map);
        let Graph { open, up_ok } = graph(map, &breakable);
        let inside = |x: i32, r: i32| x >= 0 && x < w && r >= 0 && r < rows;
        let g0 = Graph { open, up_ok };
        let edge = |ax: i32, ar: i32, dx: i32, dr: i32| g0.edge(map, ax, ar, dx, dr);
        let mut dist = vec![UNREACHED; n];
        let mut q = VecDeque::new();
        for &(nx, ny) in map.nests() {
            let i = idx(nx, ny + PAD);
            if dist[i] == UNREACHED {
                dist[i] = 0;
                q.push_back((nx, ny + PAD));
            }
        }
        let mut max_dist = 0;
        while let Some((bx, br)) = q.pop_front() {
            let d = dist[idx(bx, br)];
            max_dist = max_dist.max(d);
            for (dx, dr) in DIRS {
                let (ax, ar) = (bx - dx, br - dr);
                if inside(ax, ar) && dist[idx(ax, ar)] == UNREACHED && edge(ax, ar, dx, dr) {
                    dist[idx(ax, ar)] = d + 1;
                    q.push_back((ax, ar));
                }
            }
        }

        // Forward from the start, with one more restriction: the bird's middle never enters a
        // spike tile alive. Its box (12 x 14 px around the middle) then always overlaps the
        // spikes' hitbox (the lower 10 px, 2 px in from each side), and hazards are checked
        // every tick before the nest. (The backward distances above keep spike tiles open: the
        // heuristic does not need the restriction.) A nest on a spike tile stays open: the bird
        // touches it from a neighbouring tile.
        let spikes: Vec<bool> = (0..n)
            .map(|i| dist[i] != 0 && tile(i as i32 % w, i as i32 / w) == Block::Spikes)
            .collect();
        // Cracked rock counts as open forwards only once a pebble can reach it from a tile the
        // bird's middle gets to (pebbles fly along the row of the bird's middle, from its column,
        // through open tiles, and break the first solid one if it is cracked rock). Start with
        // none and add the reachable ones until nothing changes: every step only opens more, and
        // the result still contains every tile a real run reaches.
        let mut by_reach = vec![false; (w * h) as usize];
        let mut nest_reachable;
        let mut g;
        loop {
            g = graph(
                map,
                &by_reach
                    .iter()
                    .zip(&breakable)
                    .map(|(a, b)| *a && *b)
                    .collect::<Vec<_>>(),
            );
            let seen;
            (nest_reachable, seen) = forward(map, &g, &spikes, &dist);
            if nest_reachable {
                break;
            }
            let mut changed = false;
            for y in 0..h {
                let r = y + PAD;
                for x in 0..w {
                    let i = (y * w + x) as usize;
                    if by_reach[i] || !breakable[i] || tile(x, r) != Block::Cracked {
                        continue;
                    }
                    let hit = [-1, 1].iter().any(|&dir| {
                        for d in 1..=PEBBLE_TILES + 1 {
                            let cx = x + dir * d;
                            if cx < 0 || cx >= w {
                                return false;
                            }
                            if seen[idx(cx, r)] {
                                return true;
                            }
                            if !g.open[idx(cx, r)] {
                                return false;
                            }
                        }
                        false
                    });
                    if hit {
                        by_reach[i] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        Relaxed {
            width: w,
            height: h,
            dist,
            nest_reachable,
            max_dist,
        }
    }

    /// Distance in tiles from tile (x, y) (y may be above the map) to a nest; cells that reach
    /// no nest count as a little farther than the farthest one that does.
    #[inline]
    pub fn at(&self, x: i32, y: i32) -> u32 {
        let x = x.clamp(0, self.width - 1);
        let r = (y + PAD).clamp(0, self.height + PAD - 1);
        let d = self.dist[(r * self.width + x) as usize];
        if d == UNREACHED {
            self.max_dist + 16
        } else {
            d
        }
    }
}
