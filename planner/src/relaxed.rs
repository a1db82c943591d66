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

/// The lifts of the heuristic's graph ([`Relaxed::for_search`]): what the engine allows, not a
/// bound with slack. A jump rises 3.18 tiles and the egg boost 2.06 more (`JUMP_RISE`,
/// `BOOST_RISE`): the feet get onto a ledge 5 rows up, not 6 (walls of 6 stop the bird); a
/// spring throws `strength` tiles and the boost adds 2; a stomp bounces 1.4 tiles and the boost
/// 2.06.
#[derive(Clone, Copy)]
struct Lifts {
    ground: i32,
    spring_extra: i32,
    flyer: i32,
}
const LIFTS_PROOF: Lifts = Lifts {
    ground: LIFT,
    spring_extra: 4,
    flyer: FLYER_LIFT,
};
const LIFTS_HEURISTIC: Lifts = Lifts {
    ground: 5,
    spring_extra: 2,
    flyer: 4,
};
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
    /// `dist` is the air-bounded graph's ([`Relaxed::for_search`]).
    pub air_bounded: bool,
    /// With `air_bounded`: the distances of a falling bird, in the layout of `dist`, and of a
    /// bird in the air that may still rise (the egg boost) where those reach no nest.
    pub falling: Vec<u32>,
    pub boost: Vec<u32>,
}

/// Sideways movement in the air, in thirds of a tile, for [`air_bounded`]: what the bird has at
/// take-off (a tile and a third of slack for its width and the landing), what a row of rise and
/// a row of fall add (the time they take, at the run speed), and what a column costs.
const AIR_START: u8 = 4;
const AIR_UP: u8 = 3;
const AIR_DOWN: u8 = 1;
const AIR_SIDE: u8 = 3;
/// What a jump with the egg boost banks from level ground (5 rows up and down again).
const AIR_JUMP: u8 = AIR_START + 5 * AIR_UP + 5 * AIR_DOWN;
/// At most 12 tiles banked (a fall of about 36 rows).
const AIR_MAX: u8 = 36;
const CREDITS: usize = AIR_MAX as usize + 1;
/// A state's layer: its credit, and whether it has fallen since it left a support (then it does
/// not rise again: a rise, a fall and a rise would bank the time of one jump twice).
const AIR_LAYERS: usize = 2 * CREDITS;
/// What an egg boost laid late in a fall adds (for [`Relaxed::for_search`]'s second try): it
/// turns a fall at 1,792 a tick into a rise at 1,320, about 27 ticks more in the air, 4 tiles
/// at the run speed. The graph's fallen bird does not rise again, so without it a long fall
/// that needs the late boost to drift far enough (`levels/probes/guest-deep-drift-56`: 50
/// tiles in 120 rows) reaches no nest, and the plain graph's distance, the rows left while
/// falling, sees no drift at all.
const AIR_LATE_BOOST: u8 = 12;
// The second try's take-off is a layer of the graph (`air_move` indexes by it).
const _: () = assert!(AIR_START + AIR_LATE_BOOST <= AIR_MAX);

/// One move of the air-bounded graph from a cell in `layer` (ignored on a support, where the
/// bird starts afresh with `take_off`) by (dx, dr): the layer of the cell reached, or `None` if the bird cannot
/// get there (too far sideways, or rising again after a fall).
#[inline]
fn air_move(
    take_off: u8,
    from_support: bool,
    layer: usize,
    to_support: bool,
    dx: i32,
    dr: i32,
) -> Option<usize> {
    let (credit, fell) = if from_support {
        (take_off, false)
    } else {
        ((layer % CREDITS) as u8, layer >= CREDITS)
    };
    if fell && dr < 0 {
        return None;
    }
    let gain = match dr {
        -1 => AIR_UP,
        1 => AIR_DOWN,
        _ => 0,
    };
    let left = (credit + gain).min(AIR_MAX) as i32 - if dx != 0 { AIR_SIDE as i32 } else { 0 };
    if left < 0 {
        None
    } else if to_support {
        Some(take_off as usize)
    } else {
        Some(left as usize + if fell || dr > 0 { CREDITS } else { 0 })
    }
}

/// Distances to a nest (per cell, `UNREACHED` if none) over the relaxed graph with more bounds,
/// for the heuristic only (it may under-approximate; it never proves anything): spike tiles are
/// closed, the rises are the engine's (`LIFTS_HEURISTIC`), and the bird's sideways movement in
/// the air is bounded by its time there. The plain graph lets it drift sideways at any height
/// without limit and rise 7 rows, so across a pit no jump clears it points straight over the
/// pit (the deceptive bridges, the mountains). Here a state is a cell and a credit: the bird
/// leaves a support with `AIR_START`, each row it rises adds `AIR_UP` (jump and boost rise 5.2
/// tiles in about 31 ticks, 4.5 tiles at the run speed of 600 a tick) and each row it falls
/// `AIR_DOWN` (at the fall limit of 1792 a row takes a third of a tile's run), each column
/// costs `AIR_SIDE`, and once it falls it does not rise again before a support. From level
/// ground: 4 + 5 x 3 + 5 x 1 = 24 thirds, 8 columns: a gap of 7 tiles, what the egg boost
/// crosses. Three distances per cell: from the take-off state, from a fallen state with
/// `AIR_JUMP` banked, and from one with `AIR_JUMP` banked that may rise once more. `take_off`
/// is what the bird has when it leaves a support (`AIR_START`; more for the second try).
fn air_bounded(
    map: &Map,
    nests: &[(i32, i32)],
    g: &Graph,
    closed: &[bool],
    take_off: u8,
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let w = map.width();
    let rows = map.height() + PAD;
    let cells = (w * rows) as usize;
    let start_layer = take_off as usize;
    let inside = |x: i32, r: i32| x >= 0 && x < w && r >= 0 && r < rows;
    let mut dist = vec![UNREACHED; cells * AIR_LAYERS];
    let mut q = VecDeque::new();
    for &(nx, ny) in nests {
        let c = ((ny + PAD) * w + nx) as usize;
        let layers = if g.support[c] {
            start_layer..start_layer + 1
        } else {
            0..AIR_LAYERS
        };
        for k in layers {
            if dist[c * AIR_LAYERS + k] == UNREACHED {
                dist[c * AIR_LAYERS + k] = 0;
                q.push_back((c * AIR_LAYERS + k) as u32);
            }
        }
    }
    // Backwards: the states from which one move reaches the state taken from the queue.
    let mut preds: Vec<usize> = Vec::with_capacity(AIR_LAYERS);
    while let Some(s) = q.pop_front() {
        let s = s as usize;
        let (b, lb) = (s / AIR_LAYERS, s % AIR_LAYERS);
        let d = dist[s];
        let (bx, br) = ((b as i32) % w, (b as i32) / w);
        for (dx, dr) in DIRS {
            let (ax, ar) = (bx - dx, br - dr);
            if !inside(ax, ar) || !g.edge(map, ax, ar, dx, dr) {
                continue;
            }
            let a = (ar * w + ax) as usize;
            if closed[a] {
                continue;
            }
            preds.clear();
            if g.support[a] {
                preds.push(start_layer);
            } else if g.support[b] {
                preds.extend(0..AIR_LAYERS);
            } else {
                // min(credit + gain, MAX) - cost = the credit of lb: one credit, or a range at
                // the cap; either flag.
                let gain = match dr {
                    -1 => AIR_UP,
                    1 => AIR_DOWN,
                    _ => 0,
                } as i32;
                let want = (lb % CREDITS) as i32 + if dx != 0 { AIR_SIDE as i32 } else { 0 };
                // (Past the cap no credit gives it: an empty range.)
                let (lo, hi) = match want.cmp(&(AIR_MAX as i32)) {
                    std::cmp::Ordering::Less => (want - gain, want - gain),
                    std::cmp::Ordering::Equal => (AIR_MAX as i32 - gain, AIR_MAX as i32),
                    std::cmp::Ordering::Greater => (0, -1),
                };
                for k in lo.max(0)..=hi {
                    preds.push(k as usize);
                    preds.push(k as usize + CREDITS);
                }
            }
            for &k in &preds {
                if air_move(take_off, g.support[a], k, g.support[b], dx, dr) != Some(lb) {
                    continue;
                }
                let i = a * AIR_LAYERS + k;
                if dist[i] == UNREACHED {
                    dist[i] = d + 1;
                    q.push_back(i as u32);
                }
            }
        }
    }
    // Per cell: the take-off state (a bird on a support, or rising: it banks more as it rises);
    // for a falling bird a fallen state with a jump's worth banked (it may have risen before:
    // counting that keeps a jump over a gap from looking hopeless half-way, and it still bounds
    // the drift); and the same that may rise once more (the egg boost), for a bird that reaches
    // no nest otherwise.
    let at = |c: usize, layer: usize| {
        dist[c * AIR_LAYERS + if g.support[c] { start_layer } else { layer }]
    };
    (
        (0..cells).map(|c| at(c, start_layer)).collect(),
        (0..cells)
            .map(|c| at(c, AIR_JUMP as usize + CREDITS))
            .collect(),
        (0..cells).map(|c| at(c, AIR_JUMP as usize)).collect(),
    )
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
    /// The bird can stand or be carried or bounced here (a support's lift starts here).
    support: Vec<bool>,
}

fn graph(map: &Map, breakable: &[bool], lifts: Lifts) -> Graph {
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
                    lift[idx(x, r)] = lifts.ground;
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
                raise(
                    e.x,
                    r,
                    e.param(SPRING_STRENGTH) as i32 + lifts.spring_extra,
                    &mut lift,
                );
            }
            EntityKind::Platform => {
                let (dx, dy) = (e.param(PLATFORM_DX) as i32, e.param(PLATFORM_DY) as i32);
                let pw = e.param(PLATFORM_WIDTH) as i32;
                for y in r.min(r + dy)..=r.max(r + dy) {
                    for x in e.x.min(e.x + dx)..=(e.x.max(e.x + dx) + pw - 1) {
                        raise(x, y - 1, lifts.ground, &mut lift);
                        raise(x, y, lifts.ground, &mut lift);
                    }
                }
            }
            EntityKind::Flyer => {
                let range = e.param(FLYER_RANGE) as i32;
                let vertical = e.param(FLYER_AXIS) == 1;
                for d in -range..=range {
                    let (x, y) = if vertical { (e.x, r + d) } else { (e.x + d, r) };
                    raise(x, y - 1, lifts.flyer, &mut lift);
                }
            }
            _ => {}
        }
    }
    // The start is a launch of its own: over a pit the first press of jump is the egg boost
    // (levels/probes/guest-air-start-boost: the nest straight above a start in the air, which
    // this graph called unreachable, leaving the search without a guide). The ground's lift
    // is more than the boost's: still an over-approximation.
    let (sx, sy) = map.start();
    raise(sx, sy + PAD, lifts.ground, &mut lift);
    // up_ok: the cell lies within the lift of a support below it in its column or a
    // neighbouring one. In a neighbouring column the cell beside this one may be closed: the
    // bird rose in that column and moved over below it (a spring with a rock at the top of
    // its column, the nest beside the rock: levels/probes/route-spring-beside-wall).
    let mut up_ok = vec![false; n];
    for r in 0..rows {
        for x in 0..w {
            if !open[idx(x, r)] {
                continue;
            }
            'cols: for c in (x - 1).max(0)..=(x + 1).min(w - 1) {
                for k in 0..=14 {
                    let rr = r + k;
                    if rr >= rows {
                        break;
                    }
                    if !open[idx(c, rr)] {
                        if k == 0 && c != x {
                            continue;
                        }
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
    let support = lift.iter().map(|&l| l > 0).collect();
    Graph {
        open,
        up_ok,
        support,
    }
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
    /// The bytes its distances keep on the heap (counted against a search's memory budget).
    pub fn heap_bytes(&self) -> u64 {
        let cells = self.dist.capacity() + self.falling.capacity() + self.boost.capacity();
        (cells * std::mem::size_of::<u32>()) as u64
    }

    pub fn new(map: &Map) -> Relaxed {
        Relaxed::towards(map, map.nests())
    }

    /// [`Relaxed::new`] with the distances to `nests` only (the forward check from the start
    /// still asks for one of them).
    fn towards(map: &Map, nests: &[(i32, i32)]) -> Relaxed {
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
        let g0 = graph(map, &breakable, LIFTS_PROOF);
        let inside = |x: i32, r: i32| x >= 0 && x < w && r >= 0 && r < rows;
        let edge = |ax: i32, ar: i32, dx: i32, dr: i32| g0.edge(map, ax, ar, dx, dr);
        let mut dist = vec![UNREACHED; n];
        let mut q = VecDeque::new();
        for &(nx, ny) in nests {
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
                LIFTS_PROOF,
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
            air_bounded: false,
            falling: Vec::new(),
            boost: Vec::new(),
        }
    }

    /// The distances the search's heuristic uses: those of [`Relaxed::new`] with the bird's
    /// sideways movement in the air bounded (see [`air_bounded`]), where that graph still leads
    /// from the start to a nest; failing that, the same with a late egg boost's drift more at
    /// every take-off (`AIR_LATE_BOOST`); else the plain ones. Only the heuristic reads them: the proof
    /// (`nest_reachable`) stays the plain graph's, an over-approximation.
    pub fn for_search(map: &Map) -> Relaxed {
        // Only to the nests some place of the bird touches (all of them if none: then a proof
        // answers before any search).
        let touchable = crate::envelope::touchable_nests(map);
        let nests = if touchable.is_empty() {
            map.nests()
        } else {
            &touchable[..]
        };
        let mut r = Relaxed::towards(map, nests);
        let (w, rows) = (map.width(), map.height() + PAD);
        let g = graph(map, &breakable_cracked(map), LIFTS_HEURISTIC);
        let mut closed = vec![false; (w * rows) as usize];
        for y in 0..map.height() {
            for x in 0..w {
                if map.tile(x, y) == Some(Block::Spikes) && !map.nests().contains(&(x, y)) {
                    closed[((y + PAD) * w + x) as usize] = true;
                }
            }
        }
        let (sx, sy) = map.start();
        let start = ((sy + PAD).clamp(0, rows - 1) * w + sx.clamp(0, w - 1)) as usize;
        let (mut tight, mut falling, mut boost) = air_bounded(map, nests, &g, &closed, AIR_START);
        if tight[start] == UNREACHED {
            (tight, falling, boost) =
                air_bounded(map, nests, &g, &closed, AIR_START + AIR_LATE_BOOST);
        }
        if tight[start] != UNREACHED {
            r.max_dist = tight
                .iter()
                .chain(&falling)
                .chain(&boost)
                .filter(|&&d| d != UNREACHED)
                .max()
                .copied()
                .unwrap_or(0);
            r.dist = tight;
            r.falling = falling;
            r.boost = boost;
            r.air_bounded = true;
        }
        r
    }

    /// [`Relaxed::at`] for a bird that moves, in the air-bounded graph's distances if there are
    /// any: rising, the take-off distances (it banks more as it rises); falling with the egg
    /// boost left, those of a bird with a jump's worth banked that may rise once more; falling
    /// without it, those of a fallen bird with a jump's worth banked. Where the chosen ones
    /// reach no nest, the ones that may rise once more (a bird boosted high over a pit).
    #[inline]
    pub fn at_moving(&self, x: i32, y: i32, falling: bool, can_boost: bool) -> u32 {
        if self.falling.is_empty() {
            return self.at(x, y);
        }
        let x = x.clamp(0, self.width - 1);
        let r = (y + PAD).clamp(0, self.height + PAD - 1);
        let i = (r * self.width + x) as usize;
        let d = match (falling, can_boost) {
            (false, _) => self.dist[i],
            (true, true) => self.boost[i],
            (true, false) => self.falling[i],
        };
        let d = if d == UNREACHED { self.boost[i] } else { d };
        if d == UNREACHED {
            self.max_dist + 16
        } else {
            d
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
