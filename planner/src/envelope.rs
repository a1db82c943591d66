//! The jump envelope: a second over-approximation of where the bird can go, one that counts
//! the bird's vertical physics exactly and its horizontal speed as a bound, and ignores walls.
//!
//! The relaxed tile graph (`relaxed`) respects walls but lets the bird drift sideways in the
//! air without limit, so it cannot prove a gap too wide to jump or a nest a few pixels too high.
//! This abstraction is the other way round:
//!
//! - **Launch sites** are the places where the bird's vertical motion starts afresh: a run of
//!   ground (any open or cracked cell above a solid, one-way or cracked block), a moving
//!   platform's whole path (one site on each side of a ceiling row it crosses, see
//!   [`ceiling_rows`]: no rider is carried through one alive), a spring, every place along an enemy's path where it could be
//!   stomped, and the start.
//! - From a launch, the **vertical** motion is followed exactly, tick by tick, for every
//!   sequence of jump presses and releases (the egg boost, the jump cut, the coyote time, and a
//!   ceiling bump on every tile boundary where the map has any ceiling at all), with the
//!   engine's own constants. States with the same speed and flags at the same tick are merged
//!   into the hull of their heights, which only adds positions. The result is, per row of the
//!   bird's top edge, the last tick at which the bird can be in that row ([`Table`]), and the
//!   highest point it can reach.
//! - **Roofs and deadly floors**: a row solid across the whole map (cracked rock a pebble can
//!   reach does not count) is a roof no bird below it ever gets above, so every flight from a
//!   launch below it bumps its head there ([`barrier_rows`]); a row of spikes and solid blocks
//!   across the whole map kills a bird more than 6 px into it, so flights from above it end
//!   there ([`deadly_floor_rows`]), and nothing below it is reached from there (the spike
//!   tiles over rock are ground to the envelope); met from below, such a row kills a bird
//!   rising into it before it gets through, so it caps those flights as a roof does
//!   ([`ceiling_rows`]). Other walls and hazards are still ignored.
//! - **Horizontally** the bird never moves more than `RUN_SPEED` sub-units a tick (its speed
//!   only approaches a wanted speed of at most that). A platform's carry adds nothing: the
//!   engine carries only a bird that landed on the platform on the tick before (`riding` is
//!   set by a landing, on the platform's span, and cleared by every move), by the platform's
//!   own step, so after the carry the bird still overlaps the platform where it now is, inside
//!   the site of the platform's path; the flight starts there.
//! - Site B is reachable from site A if, for some tick t, the bird launched anywhere in A can
//!   have its top edge in one of B's rows at tick t and t * RUN_SPEED covers the horizontal
//!   gap. Ground is only arrived at by landing on it: the top edge must be at or above the
//!   standing height on tick t - 1 (not merely somewhere in its row at t), which decides a
//!   flat gap of 10 tiles (short by 90 sub-units, a third of a pixel) that the row alone let
//!   through. A stomp site also needs the bird's feet to get above the enemy's top (plus the stomp
//!   tolerance) at some point of the flight.
//!
//! Everything else that can only hold the bird back (walls, hazards, enemies that kill,
//! crumbling ledges that fall, landing early) is ignored, and everything that can lift or carry it is a
//! launch site, so the set of sites this reaches contains every site the bird can reach: if no
//! nest is reached, no replay can win. The proof is only tried when the level is small enough
//! (see [`MAX_SITES`]); otherwise it says nothing.

use horst_engine::physics::{
    spring_speed, BOOST_SPEED, COYOTE_TICKS, FLYER_SIZE, GRAVITY, JUMP_CUT, JUMP_SPEED, MAX_FALL,
    PLAYER_H, PLAYER_W, RUN_SPEED, SPEED_UNIT, STOMP_BOUNCE, STOMP_TOLERANCE, SUB, TILE, WALKER_W,
};
use horst_engine::sim::palette::{
    EntityKind, FLYER_AXIS, FLYER_RANGE, PLATFORM_DX, PLATFORM_DY, PLATFORM_WIDTH, SPRING_STRENGTH,
    WALKER_RANGE,
};
use horst_engine::{Block, Map};
use std::collections::BTreeMap;

/// Above this many launch sites the proof is not tried (it compares every pair).
pub const MAX_SITES: usize = 2000;
/// Distinct launches at most; beyond it the launches with the same vertical state are merged
/// into one whose start is the hull of theirs (more positions: still an over-approximation).
const MAX_LAUNCHES: usize = 16;
/// Vertical states followed over all launches at most; beyond it the proof gives up (a count,
/// not the clock, so the answer never depends on the machine).
pub const MAX_STATES: u64 = 250_000;

/// The bird's vertical state in the air, without its height.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vert {
    pub vy: i32,
    pub on_ground: bool,
    pub held: bool,
    pub boost: bool,
    pub rising: bool,
    pub coyote: u8,
}

/// One tick of the bird's vertical motion in the air with jump `jump` held, as the engine's
/// `update_player` does it, up to the vertical move (which the caller applies, `y += vy`).
/// On the ground it is the tick the bird walks off or jumps; landing is not modelled (a landing
/// is an arrival at another launch site).
#[inline]
pub fn vstep(mut s: Vert, jump: bool) -> Vert {
    if s.on_ground {
        s.coyote = COYOTE_TICKS;
    } else if s.coyote > 0 {
        s.coyote -= 1;
    }
    if jump && !s.held {
        if s.on_ground || s.coyote > 0 {
            s.vy = -JUMP_SPEED;
            s.rising = true;
            s.coyote = 0;
            s.on_ground = false;
        } else if s.boost {
            s.vy = -BOOST_SPEED;
            s.rising = true;
            s.boost = false;
        }
    }
    if !jump && s.rising && s.vy < -JUMP_CUT {
        s.vy = -JUMP_CUT;
    }
    s.held = jump;
    s.vy = (s.vy + GRAVITY).min(MAX_FALL);
    if s.vy >= 0 {
        s.rising = false;
    }
    s.on_ground = false;
    s
}

/// How a flight starts: the bird's top edge somewhere in `lo..=hi` (sub-units below the top of
/// the launch row), its vertical state, and whether jump may be held or not at the start.
/// `cap`: the bottom of the lowest row above the launch that is solid across the whole map
/// (relative like `lo`), if any: the bird can never get above it (see [`barrier_rows`]), so
/// every flight bumps its head there. `floor`: the lowest its top edge can be alive, above the
/// first row below the launch that is solid or spikes across the whole map (see
/// [`deadly_floor_rows`]); deeper flights end there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Launch {
    pub lo: i32,
    pub hi: i32,
    pub vert: Vert,
    pub held_either: bool,
    pub cap: Option<i32>,
    pub floor: Option<i32>,
}

/// Per row of the map: whether every tile of it is spikes or solid for good (a roof row, see
/// [`barrier_rows`], may mix in spikes). A bird whose hitbox reaches more than 6 px into such a
/// row is dead at the end of that tick: it cannot overlap the solid tiles, and in a run of spike
/// tiles the 12 px bird always overlaps some spike's deadly part (the lower 10 px, 2 px in from
/// each side: between two spike tiles 4 px are safe, beside rock 2). It falls at most 7 px a
/// tick, so it cannot pass the 10 px in one, and hazards are checked on every tick before
/// anything else it touches counts (a spring's launch or a landing on a platform there comes
/// with the same tick's death). So the bird's feet never get lower than 6 px into the row and
/// live (`levels/probes/guest-tunnel-hole-5`: the spikes under a hole in a low corridor).
pub fn deadly_floor_rows(map: &Map) -> Vec<bool> {
    let solid = barrier_tiles(map);
    let w = map.width();
    (0..map.height())
        .map(|y| {
            (0..w).all(|x| solid[(y * w + x) as usize] || map.tile(x, y) == Some(Block::Spikes))
        })
        .collect()
}

/// The nests some place of the bird can touch (see `lowest_touch`), in the map's order: a nest in
/// a cup of rock under a tile of spikes is never touched, whatever else the map holds. The
/// search's heuristic leads only to these (`Relaxed::for_search`): along a meadow of such cups
/// every cup's nest looked 0 tiles away, and the search looked into every cup
/// (`levels/probes/guest-fifteen-trap-nests`).
pub fn touchable_nests(map: &Map) -> Vec<(i32, i32)> {
    let solid = barrier_tiles(map);
    map.nests()
        .iter()
        .copied()
        .filter(|&(nx, ny)| lowest_touch(map, &solid, nx, ny).is_some())
        .collect()
}

/// Per tile (row-major): solid for good (not cracked rock that a pebble can reach).
fn barrier_tiles(map: &Map) -> Vec<bool> {
    let (w, h) = (map.width(), map.height());
    let breakable = crate::relaxed::breakable_cracked(map);
    (0..w * h)
        .map(|i| {
            let b = map.tile(i % w, i / w).unwrap_or(Block::Empty);
            b.is_solid() && !(b == Block::Cracked && breakable[i as usize])
        })
        .collect()
}

/// Per row of the map: whether every tile of it is solid for good (rock, earth, grass, ice,
/// snow, or cracked rock no pebble can reach). Such a row is a roof over everything below it:
/// the map's sides are walls, the bird moves less than a tile a tick, a platform that carries
/// it up against solid blocks stops it or crushes it, and a spring or a jump only sets its
/// speed, so a bird below the row stays below it. A corridor under a closed roof is the common
/// case (`levels/probes/guest-tunnel-hole-5`): without the roof in the envelope, a jump there
/// rose 3.2 tiles instead of the 2 px the corridor leaves.
pub fn barrier_rows(map: &Map) -> Vec<bool> {
    let solid = barrier_tiles(map);
    let w = map.width();
    (0..map.height())
        .map(|y| (0..w).all(|x| solid[(y * w + x) as usize]))
        .collect()
}

/// Per row of the map: whether no bird below it ever gets above it alive: a roof
/// ([`barrier_rows`]), or a row of spikes and solid blocks across the map
/// ([`deadly_floor_rows`]) met from below. Rising into such a row, the bird's top edge passes
/// the 24 px between 8 px above the row's top and the row's bottom, where its 14 px overlap the
/// spikes' deadly band (the lower 10 px); it rises at most [`step_up`] a tick, less than that, so
/// some tick ends with it inside the band, over a spike tile (it cannot overlap the solid ones),
/// and dead: hazards are checked at every tick's end. So such a row caps every flight from below
/// as a roof does (`levels/probes/guest-spike-ceiling-across`: a spring under a ceiling of
/// spikes, searched until the time limit while only solid rows capped a flight).
pub fn ceiling_rows(map: &Map) -> Vec<bool> {
    // Every roof row is also a deadly one (solid for good is allowed there).
    deadly_floor_rows(map)
}

/// The most a bird's hitbox moves in one tick, each way: its own speed (at most `RUN_SPEED`
/// sideways, the fastest spring's launch up, `MAX_FALL` down) plus the fastest platform's step
/// (speed 16, in eighths of a pixel) twice over, for a carry and a lift by a platform rising
/// under it. Generous on purpose: a larger bound only lets more places count as entered.
const STEP_X: i32 = RUN_SPEED + 2 * 16 * SPEED_UNIT;
const STEP_DOWN: i32 = MAX_FALL + 2 * 16 * SPEED_UNIT;
fn step_up() -> i32 {
    spring_speed(12) + 2 * 16 * SPEED_UNIT
}

/// The lowest top edge (sub-units, absolute) of a place where the bird can first touch the nest
/// tile (nx, ny), or None when there is none. A touch ends the run on its tick, and contacts are
/// checked on the places where ticks end: the bird touches the nest from a place whose hitbox
/// overlaps the nest tile, no tile that is solid for good (`solid`, from [`barrier_tiles`]; its
/// moves stop at them and a platform that would carry it into one crushes it) and no spikes'
/// deadly part (hazards are checked before the nest on the same tick), and it got there in one
/// tick from a place that touched no nest and was alive too. So a nest under a tile of spikes
/// in a cup of rock (`levels/probes/guest-spike-lid-nest`) is never touched: every place in the
/// cup is more than a tick's move from every place outside the spikes. The map's side walls
/// are solid; the open air above it and the rows below it are not (below it the bird is dead).
/// A start that overlaps the nest or lies next to it is not judged (None is never answered).
fn lowest_touch(map: &Map, solid: &[bool], nx: i32, ny: i32) -> Option<i32> {
    let (w, h) = (map.width(), map.height());
    let (ny0, nx0) = (ny * TILE, nx * TILE);
    let (sx, sy) = map.start();
    if (sx - nx).abs() <= 1 && (sy - ny).abs() <= 1 {
        return Some(ny0 + TILE - 1);
    }
    let hits = |x: i32, y: i32, bx: i32, by: i32, bw: i32, bh: i32| {
        x < bx + bw && bx < x + PLAYER_W && y < by + bh && by < y + PLAYER_H
    };
    // Alive and clear of solid blocks: the tiles the hitbox covers, the map's sides, the bottom.
    let free = |x: i32, y: i32| {
        if x < 0 || x + PLAYER_W > w * TILE || y >= h * TILE {
            return false;
        }
        let (c0, c1) = (x.div_euclid(TILE), (x + PLAYER_W - 1).div_euclid(TILE));
        let (r0, r1) = (y.div_euclid(TILE), (y + PLAYER_H - 1).div_euclid(TILE));
        for r in r0.max(0)..=r1.min(h - 1) {
            for c in c0..=c1 {
                if solid[(r * w + c) as usize] {
                    return false;
                }
                let spikes = map.tile(c, r) == Some(Block::Spikes);
                if spikes
                    && hits(
                        x,
                        y,
                        c * TILE + 2 * SUB,
                        r * TILE + 6 * SUB,
                        12 * SUB,
                        10 * SUB,
                    )
                {
                    return false;
                }
            }
        }
        true
    };
    let on_nest = |x: i32, y: i32| hits(x, y, nx0, ny0, TILE, TILE);
    // Every test above compares an edge with a whole pixel, strictly or not, so its answer is
    // the same all over a pixel's open interval: the places fall into classes, 2k for the point
    // k * SUB and 2k + 1 for the open interval after it, each judged at one of its points.
    let class = |v: i32| 2 * v.div_euclid(SUB) + i32::from(v.rem_euclid(SUB) != 0);
    let point = |c: i32| c.div_euclid(2) * SUB + c.rem_euclid(2);
    // The places a tick's move can come from, around the nest: clear, alive and off the nest.
    let up = step_up();
    let (gx0, gx1) = (
        class(nx0 - PLAYER_W - STEP_X - SUB),
        class(nx0 + TILE + STEP_X + SUB),
    );
    let (gy0, gy1) = (
        class(ny0 - PLAYER_H - STEP_DOWN - SUB),
        class(ny0 + TILE + up + SUB),
    );
    let (gw, gh) = ((gx1 - gx0 + 1) as usize, (gy1 - gy0 + 1) as usize);
    // Prefix sums, so whether a box of classes holds such a place is four reads.
    let mut sum = vec![0u32; (gw + 1) * (gh + 1)];
    for j in 0..gh {
        for i in 0..gw {
            let (x, y) = (point(gx0 + i as i32), point(gy0 + j as i32));
            let ok = u32::from(!on_nest(x, y) && free(x, y));
            sum[(j + 1) * (gw + 1) + i + 1] =
                ok + sum[j * (gw + 1) + i + 1] + sum[(j + 1) * (gw + 1) + i]
                    - sum[j * (gw + 1) + i];
        }
    }
    let any_in = |x0: i32, x1: i32, y0: i32, y1: i32| {
        let (i0, i1) = ((class(x0) - gx0) as usize, (class(x1) - gx0) as usize + 1);
        let (j0, j1) = ((class(y0) - gy0) as usize, (class(y1) - gy0) as usize + 1);
        sum[j1 * (gw + 1) + i1] + sum[j0 * (gw + 1) + i0]
            > sum[j0 * (gw + 1) + i1] + sum[j1 * (gw + 1) + i0]
    };
    let (ya, yb) = (ny0 - PLAYER_H + 1, ny0 + TILE - 1);
    let xs: Vec<i32> = (class(nx0 - PLAYER_W + 1)..=class(nx0 + TILE - 1)).collect();
    // The lowest class first; within it, the lowest place (the envelope's bound is a top edge
    // no lower than this).
    (class(ya)..=class(yb)).rev().find_map(|cy| {
        let y = point(cy).max(ya);
        xs.iter()
            .any(|&cx| {
                let x = point(cx);
                if !on_nest(x, y) || !free(x, y) {
                    return false;
                }
                // Wherever in its class the bird is, the tick before it was within a step of it:
                // the class's pixel widened by a step each way.
                let (px, py) = (x.div_euclid(SUB) * SUB, y.div_euclid(SUB) * SUB);
                any_in(
                    px - STEP_X,
                    px + SUB + STEP_X,
                    py - STEP_DOWN,
                    py + SUB + up,
                )
            })
            .then(|| {
                if cy.rem_euclid(2) == 0 {
                    point(cy)
                } else {
                    (point(cy) + SUB - 2).min(yb)
                }
            })
    })
}

/// The envelope of one launch.
#[derive(Clone, Debug)]
pub struct Table {
    /// Row (of the bird's top edge, relative to the launch row) of `last[0]`.
    pub first_row: i32,
    /// Per row, the last tick at which the bird's top edge can be in it (-1: never).
    pub last: Vec<i32>,
    /// The highest the top edge gets (sub-units relative to the launch row's top; negative is up).
    pub ymin: i32,
    /// Per tick, the highest the top edge can be then (relative like `ymin`): a landing on
    /// ground needs the top edge at or above the standing height on the tick before.
    pub tops: Vec<i32>,
    /// Vertical states followed (a cost figure).
    pub states: u64,
}

impl Table {
    /// The last tick at which the top edge can be at or above `y` (relative), or -1.
    pub fn last_above(&self, y: i32) -> i32 {
        self.tops
            .iter()
            .rposition(|&t| t <= y)
            .map_or(-1, |t| t as i32)
    }

    /// The last tick at which the top edge can be in a row `r0..=r1` (relative), or -1.
    pub fn last_in(&self, r0: i32, r1: i32) -> i32 {
        let a = (r0 - self.first_row).max(0);
        let b = (r1 - self.first_row).min(self.last.len() as i32 - 1);
        (a..=b).map(|i| self.last[i as usize]).max().unwrap_or(-1)
    }
}

/// Follows every flight from `launch` until the bird is `depth` sub-units below the launch row.
/// `ceilings`: the map has a solid block with open air below it, so the bird may bump its head
/// on any tile boundary (its speed drops to 0 there). Under the launch's `cap` it must: a top
/// edge that would cross it stops there with its speed 0, as the engine's `move_y` does.
/// Gives up (None) after `budget` states.
pub fn table(launch: &Launch, depth: i32, ceilings: bool, budget: u64) -> Option<Table> {
    let depth = launch.floor.map_or(depth, |f| f.min(depth));
    let mut cur: BTreeMap<Vert, (i32, i32)> = BTreeMap::new();
    let add = |m: &mut BTreeMap<Vert, (i32, i32)>, v: Vert, lo: i32, hi: i32| {
        m.entry(v)
            .and_modify(|e| {
                e.0 = e.0.min(lo);
                e.1 = e.1.max(hi);
            })
            .or_insert((lo, hi));
    };
    add(&mut cur, launch.vert, launch.lo, launch.hi);
    if launch.held_either {
        let mut v = launch.vert;
        v.held = !v.held;
        add(&mut cur, v, launch.lo, launch.hi);
    }
    let row = |y: i32| y.div_euclid(TILE);
    let first_row = row(launch.lo) - 24;
    let mut last = vec![-1i32; (row(depth) - first_row + 2).max(1) as usize];
    let mut ymin = launch.lo;
    let mut tops = Vec::new();
    let mut states = 0u64;
    let mut t = 0i32;
    loop {
        if let Some(top) = cur.values().map(|&(lo, _)| lo).min() {
            tops.push(top);
        }
        for (_, &(lo, hi)) in cur.iter() {
            states += 1;
            ymin = ymin.min(lo);
            let (a, b) = (row(lo).max(first_row), row(hi).min(row(depth)));
            for r in a..=b {
                let i = (r - first_row) as usize;
                if i < last.len() {
                    last[i] = last[i].max(t);
                }
            }
        }
        if cur.is_empty() {
            break;
        }
        if states > budget {
            return None;
        }
        t += 1;
        let mut next: BTreeMap<Vert, (i32, i32)> = BTreeMap::new();
        for (&v, &(lo, hi)) in cur.iter() {
            for jump in [false, true] {
                let s = vstep(v, jump);
                let (nlo, nhi) = (lo + s.vy, hi + s.vy);
                match launch.cap {
                    // The part that would cross the roof bumps its head on it; the rest
                    // moves on.
                    Some(cap) if nlo < cap => {
                        let b = Vert {
                            vy: 0,
                            rising: false,
                            on_ground: false,
                            ..s
                        };
                        add(&mut next, b, cap, cap);
                        if nhi >= cap {
                            add(&mut next, s, cap, nhi.min(depth));
                        }
                        continue;
                    }
                    _ => {}
                }
                if nlo <= depth {
                    add(&mut next, s, nlo, nhi.min(depth));
                }
                if ceilings && s.vy < 0 {
                    // A solid block above stops the top edge at the boundary of the row it was
                    // in (the bird never overlaps a solid block, so only a crossing can bump).
                    let mut b = Vert {
                        vy: 0,
                        rising: false,
                        ..s
                    };
                    b.on_ground = false;
                    for k in row(lo)..=row(hi) {
                        let top = k * TILE;
                        if lo.max(top) + s.vy < top {
                            add(&mut next, b, top, top);
                        }
                    }
                }
            }
        }
        cur = next;
    }
    Some(Table {
        first_row,
        last,
        ymin,
        tops,
        states,
    })
}

/// Where a bird starting a flight at a site can be: top-left x in `xa..=xb`, launch row `row`.
#[derive(Clone, Debug)]
struct Site {
    launch: usize,
    row: i32,
    xa: i32,
    xb: i32,
    /// To arrive here the bird's top-left must be in `xa..=xb` x `ya..=yb` (absolute)...
    ya: i32,
    yb: i32,
    /// ... and, for a stomp, its top edge must have been at or above this height before.
    above: Option<i32>,
    /// Ground (a run of solid or one-way blocks, `ya == yb`): the bird arrives only by
    /// landing, so its top edge was at or above `ya` on the tick before (it never overlaps a
    /// solid block, and a one-way block carries only a bird that comes from above).
    ground: bool,
}

/// What the proof found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The proof was tried (the level is small enough).
    pub tried: bool,
    /// A nest is reachable in the envelope (or the proof was not tried): no conclusion.
    pub nest_reachable: bool,
    pub sites: usize,
    pub reached: usize,
    /// Vertical states followed over all launches.
    pub states: u64,
}

impl Proof {
    /// The level is proved unsolvable.
    pub fn unreachable(&self) -> bool {
        self.tried && !self.nest_reachable
    }
}

/// The distinct launches, and the roof and deadly-floor rows that bound their flights.
struct Launches {
    keys: BTreeMap<Launch, usize>,
    list: Vec<Launch>,
    barriers: Vec<bool>,
    floors: Vec<bool>,
}

impl Launches {
    /// A site the bird arrives at anyhow (not only by landing, no enemy to get above): its
    /// hitbox's left edge in `xa..=xb`, its top edge in `ya..=yb`, launched with `vert`.
    fn site(&mut self, (xa, xb): (i32, i32), (ya, yb): (i32, i32), vert: Vert, held: bool) -> Site {
        let (launch, row) = self.key(ya, yb, vert, held);
        Site {
            launch,
            row,
            xa,
            xb,
            ya,
            yb,
            above: None,
            ground: false,
        }
    }

    /// The launch of a flight whose top edge starts in `y0..=y1` (absolute), and its row.
    fn key(&mut self, y0: i32, y1: i32, vert: Vert, held_either: bool) -> (usize, i32) {
        let row = y0.div_euclid(TILE);
        // The lowest roof entirely above the launch's highest top edge (its row < `row`).
        let roof = (0..row.min(self.barriers.len() as i32))
            .rev()
            .find(|&r| self.barriers[r as usize]);
        let l = Launch {
            lo: y0 - row * TILE,
            hi: y1 - row * TILE,
            vert,
            held_either,
            cap: roof.map(|r| (r + 1 - row) * TILE),
            // The first deadly floor whose top is at or below the launch's lowest feet: the
            // top edge may go down to 6 px into it, less the hitbox.
            floor: (0..self.floors.len() as i32)
                .find(|&r| self.floors[r as usize] && r * TILE >= y1 + PLAYER_H)
                .map(|r| r * TILE + 6 * SUB - PLAYER_H - row * TILE),
        };
        let n = self.list.len();
        let id = *self.keys.entry(l).or_insert(n);
        if id == n {
            self.list.push(l);
        }
        (id, row)
    }
}

/// Tries to prove that no nest can be reached (see the module documentation).
pub fn prove(map: &Map) -> Proof {
    let w = map.width();
    let h = map.height();
    let tile = |x: i32, y: i32| map.tile(x, y).unwrap_or(Block::Empty);
    let breakable = crate::relaxed::breakable_cracked(map);
    // Could be open at some point (cracked rock that a pebble can reach can be shot away).
    let open = |x: i32, y: i32| {
        let b = tile(x, y);
        !b.is_solid()
            || (b == Block::Cracked && x >= 0 && y >= 0 && breakable[(y * w + x) as usize])
    };
    let carries = |x: i32, y: i32| {
        let b = map.tile(x, y);
        matches!(b, Some(b) if b.is_solid() || b.is_one_way())
    };
    let ceilings = (0..h - 1).any(|y| (0..w).any(|x| tile(x, y).is_solid() && open(x, y + 1)));

    let ground = Vert {
        vy: 0,
        on_ground: true,
        held: false,
        boost: true,
        rising: false,
        coyote: 0,
    };
    let mut ls = Launches {
        keys: BTreeMap::new(),
        list: Vec::new(),
        barriers: ceiling_rows(map),
        floors: deadly_floor_rows(map),
    };
    let mut sites: Vec<Site> = Vec::new();
    let ceiling: Vec<i32> = (0..h).filter(|&r| ls.barriers[r as usize]).collect();
    let x_max = w * TILE - PLAYER_W;
    let clamp_x = |a: i32, b: i32| (a.max(0), b.min(x_max));
    // The start: the bird stands on the bottom of its tile, not yet on the ground.
    let (sx, sy) = map.start();
    {
        let x = sx * TILE + (TILE - PLAYER_W) / 2;
        let y = sy * TILE + TILE - PLAYER_H;
        let vert = Vert {
            on_ground: false,
            ..ground
        };
        sites.push(ls.site((x, x), (y, y), vert, false));
    }
    // Runs of ground, also on top of the map's first row.
    for y in -1..h - 1 {
        let mut x = 0;
        while x < w {
            if !(open(x, y) && carries(x, y + 1)) {
                x += 1;
                continue;
            }
            let x0 = x;
            while x < w && open(x, y) && carries(x, y + 1) {
                x += 1;
            }
            let (xa, xb) = clamp_x(x0 * TILE - PLAYER_W + 1, x * TILE - 1);
            let yy = (y + 1) * TILE - PLAYER_H;
            let (launch, row) = ls.key(yy, yy, ground, false);
            sites.push(Site {
                launch,
                row,
                xa,
                xb,
                ya: yy,
                yb: yy,
                above: None,
                ground: true,
            });
        }
    }
    let bounce = Vert {
        vy: -STOMP_BOUNCE,
        on_ground: false,
        held: false,
        boost: true,
        rising: true,
        coyote: 0,
    };
    // A stomp: the feet were at most the tolerance below the enemy's top on the previous tick
    // and overlap it now, after a fall of at most MAX_FALL.
    let mut stomp = |sites: &mut Vec<Site>, x0: i32, x1: i32, ew: i32, y0: i32, y1: i32| {
        let (xa, xb) = clamp_x(x0 - PLAYER_W + 1, x1 + ew - 1);
        let (ya, yb) = (
            y0 - PLAYER_H + 1,
            y1 + STOMP_TOLERANCE - PLAYER_H + MAX_FALL,
        );
        let site = ls.site((xa, xb), (ya, yb), bounce, true);
        sites.push(Site {
            above: Some(y1 + STOMP_TOLERANCE - PLAYER_H),
            ..site
        });
    };
    for e in map.entities() {
        match e.kind {
            EntityKind::Walker => {
                let range = e.param(WALKER_RANGE) as i32 * TILE;
                let x0 = e.x * TILE + SUB;
                let y = e.y * TILE + 4 * SUB;
                stomp(&mut sites, x0 - range, x0 + range, WALKER_W, y, y);
            }
            EntityKind::Flyer => {
                let range = e.param(FLYER_RANGE) as i32 * TILE;
                let (x0, y0) = (e.x * TILE + 2 * SUB, e.y * TILE + 2 * SUB);
                if e.param(FLYER_AXIS) == 1 {
                    stomp(&mut sites, x0, x0, FLYER_SIZE, y0 - range, y0 + range);
                } else {
                    stomp(&mut sites, x0 - range, x0 + range, FLYER_SIZE, y0, y0);
                }
            }
            _ => {}
        }
    }
    for e in map.entities() {
        match e.kind {
            EntityKind::Platform => {
                let (dx, dy) = (e.param(PLATFORM_DX) as i32, e.param(PLATFORM_DY) as i32);
                let pw = e.param(PLATFORM_WIDTH) as i32 * TILE;
                let (px0, px1) = (e.x.min(e.x + dx) * TILE, e.x.max(e.x + dx) * TILE);
                let (py0, py1) = (e.y.min(e.y + dy) * TILE, e.y.max(e.y + dy) * TILE);
                let (xa, xb) = clamp_x(px0 - PLAYER_W + 1, px1 + pw - 1);
                // A rider is never carried through a ceiling row: into it, it is crushed or
                // dies in the spikes' deadly band (its feet more than 6 px into the row, its top
                // above the row's bottom). So the path is a launch site on each side of such a
                // row, not one across it (`levels/probes/guest-lift-through-spike-ceiling`).
                let mut parts = vec![(py0 - PLAYER_H, py1 - PLAYER_H)];
                for &r in &ceiling {
                    let (lo, hi) = (r * TILE + 6 * SUB - PLAYER_H, (r + 1) * TILE);
                    parts = parts
                        .into_iter()
                        .flat_map(|(a, b)| {
                            let below = (b >= hi).then_some((a.max(hi), b));
                            [(a <= lo).then_some((a, b.min(lo))), below]
                        })
                        .flatten()
                        .collect();
                }
                for ys in parts {
                    sites.push(ls.site((xa, xb), ys, ground, false));
                }
            }
            EntityKind::Spring => {
                // Touching the spring's box (lower half of its tile, 2 px in) while not rising.
                let v = spring_speed(e.param(SPRING_STRENGTH) as i32);
                let (bx, by) = (e.x * TILE + 2 * SUB, e.y * TILE + 8 * SUB);
                let (xa, xb) = clamp_x(bx - PLAYER_W + 1, bx + 12 * SUB - 1);
                let (ya, yb) = (by - PLAYER_H + 1, by + 8 * SUB - 1);
                let vert = Vert {
                    vy: -v,
                    on_ground: false,
                    held: false,
                    boost: true,
                    rising: false,
                    coyote: 0,
                };
                sites.push(ls.site((xa, xb), (ya, yb), vert, true));
            }
            _ => {}
        }
    }
    let n = sites.len();
    let mut proof = Proof {
        tried: false,
        nest_reachable: true,
        sites: n,
        reached: 0,
        states: 0,
    };
    if n > MAX_SITES {
        return proof;
    }
    // Deep enough to fall out of the map from any launch row (the map's top row is 0).
    let depth = (h + 2) * TILE;
    let mut launches = ls.list;
    if launches.len() > MAX_LAUNCHES {
        let mut hull: BTreeMap<(Vert, bool), usize> = BTreeMap::new();
        let mut merged: Vec<Launch> = Vec::new();
        let mut to: Vec<usize> = Vec::with_capacity(launches.len());
        for l in &launches {
            let m = *hull.entry((l.vert, l.held_either)).or_insert_with(|| {
                merged.push(*l);
                merged.len() - 1
            });
            merged[m].lo = merged[m].lo.min(l.lo);
            merged[m].hi = merged[m].hi.max(l.hi);
            // The merged flight may rise as high as the least covered of them.
            merged[m].cap = merged[m].cap.zip(l.cap).map(|(a, b)| a.min(b));
            merged[m].floor = merged[m].floor.zip(l.floor).map(|(a, b)| a.max(b));
            to.push(m);
        }
        for site in sites.iter_mut() {
            site.launch = to[site.launch];
        }
        launches = merged;
    }
    let mut tables: Vec<Table> = Vec::with_capacity(launches.len());
    for l in &launches {
        let Some(t) = table(l, depth, ceilings, MAX_STATES - proof.states) else {
            proof.states = MAX_STATES;
            return proof;
        };
        proof.states += t.states;
        tables.push(t);
    }
    proof.tried = true;
    // `lands`: the target is ground (see `Site::ground`).
    let reaches =
        |a: &Site, xa: i32, xb: i32, ya: i32, yb: i32, above: Option<i32>, lands: bool| {
            let tb = &tables[a.launch];
            let o = a.row * TILE;
            // Below the launch's deadly floor the bird is dead: no flight ends there (a landing
            // is checked as "at or above the standing height before", which a bird still
            // above the floor always is).
            if launches[a.launch].floor.is_some_and(|f| ya - o > f) {
                return false;
            }
            if let Some(limit) = above {
                if o + tb.ymin > limit {
                    return false;
                }
            }
            let last = if lands {
                // At or above the standing height on some tick, landed by the next one.
                let t = tb.last_above(ya - o);
                if t < 0 {
                    return false;
                }
                t + 1
            } else {
                tb.last_in(ya.div_euclid(TILE) - a.row, yb.div_euclid(TILE) - a.row)
            };
            if last < 0 {
                return false;
            }
            let gap = (xa - a.xb).max(a.xa - xb).max(0);
            gap <= 0 || (gap as i64) <= last as i64 * RUN_SPEED as i64
        };
    // A nest is touched with the top edge no lower than `lowest_touch`: the envelope ignores
    // walls, so without it a flight that rises into the nest's row from inside the rock under
    // it touched the nest (`levels/probes/guest-valley-spring-8`).
    let solid = barrier_tiles(map);
    let nests: Vec<(i32, i32, i32, i32)> = map
        .nests()
        .iter()
        .filter_map(|&(nx, ny)| {
            let yb = lowest_touch(map, &solid, nx, ny)?;
            Some((
                nx * TILE - PLAYER_W + 1,
                nx * TILE + TILE - 1,
                ny * TILE - PLAYER_H + 1,
                yb,
            ))
        })
        .collect();
    let mut reached = vec![false; n];
    let mut queue = vec![0usize];
    reached[0] = true;
    while let Some(i) = queue.pop() {
        let a = &sites[i];
        if nests
            .iter()
            .any(|&(xa, xb, ya, yb)| reaches(a, xa, xb, ya, yb, Some(yb), false))
        {
            proof.reached = reached.iter().filter(|&&r| r).count();
            return proof;
        }
        for j in 0..n {
            if !reached[j] {
                let b = &sites[j];
                if reaches(a, b.xa, b.xb, b.ya, b.yb, b.above, b.ground) {
                    reached[j] = true;
                    queue.push(j);
                }
            }
        }
    }
    proof.reached = reached.iter().filter(|&&r| r).count();
    proof.nest_reachable = false;
    proof
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ceiling_rows`' argument: no tick's rise (the strongest spring, a platform's carry and
    /// its lift) passes the 24 px in which a bird's hitbox overlaps a spike's deadly band.
    #[test]
    fn no_rise_of_one_tick_passes_the_deadly_band_of_spikes() {
        assert!(step_up() < PLAYER_H + 10 * SUB, "{}", step_up());
    }
}
