//! The best-first search over macro-actions.

use crate::memory;
use crate::relaxed::Relaxed;
use crate::shorten::finish;
use crate::{PlanOutcome, PlanReport, PlanRequest, Progress, Proof, UnresolvedReason};
use horst_engine::physics::SPEED_UNIT;
use horst_engine::physics::TILE;
use horst_engine::physics::{
    PEBBLE_LIFETIME, PEBBLE_SIZE, PEBBLE_SPEED, PLAYER_H, PLAYER_W, TILE_SHIFT,
};
use horst_engine::sim::palette::{
    EntityKind, FLYER_AXIS, FLYER_RANGE, FLYER_SPEED, PLATFORM_DX, PLATFORM_DY, PLATFORM_SPEED,
    PLATFORM_WIDTH, WALKER_SPEED,
};
use horst_engine::{Block, Map, Sim, Status, Step};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Nodes popped and expanded together; the merge of their children runs in this fixed order.
pub const BATCH: usize = 48;
/// The contract's limit on a replay's total ticks.
pub const MAX_TICKS: u32 = 36_000;
/// Distinct states kept at most per stage; reaching it counts as the stage's budget running
/// out. Keys are 64-bit hashes, so two states collide with a chance of about 1e-6 at this size.
/// (Memory is bounded in bytes, `PlanRequest::memory_budget_bytes`.)
pub const MAX_STATES: u64 = 6_000_000;
/// Moving things within this many sub-units of the bird (6 tiles: a running jump and a bit) are
/// part of every state key; farther ones only while it stands still or rides (and in the `full`
/// stages). At 10 tiles the phases of a jackdaw or a lift coming closer multiplied the states of
/// every run towards it (2-3 times the expansions on the wait and stomp levels).
const NEAR: i32 = 6 * TILE;
/// How far shots are tried in the first stage: targets within this many whole columns of the
/// bird's (and enemies and rocks within as many tiles of its middle).
const CALM_RANGE_TILES: i32 = 15;

/// How far beyond the bird's middle a pebble's lead edge gets, in sub-units: it leaves from
/// just beyond the bird's front edge and moves `PEBBLE_SPEED` a tick; on its last tick of
/// `PEBBLE_LIFETIME` it goes out before it is checked against blocks, so it hits nothing there
/// (engine/src/sim/pebbles.rs). 63,232 sub-units to the left, one fewer to the right: 15.4
/// tiles, so a pebble fired from the end of a column reaches into the 16th column beyond it
/// (`levels/probes/guest-shot-from-a-fall-far`; 15 whole tiles from the bird's column before).
const PEBBLE_LEAD: i32 = PLAYER_W / 2 + (PEBBLE_LIFETIME as i32 - 1) * PEBBLE_SPEED + PEBBLE_SIZE;
/// Waits until something arrives (`event_waits`): at most this many per state, and at most this
/// far ahead (30 s).
const EVENT_WAITS: usize = 4;
const EVENT_MAX: u16 = 1800;
/// Ticks before an arrival that a wait also ends (a jump takes about 25 ticks to its apex).
const EVENT_LEADS: [u16; 2] = [16, 32];
/// How far under the bird's feet a lift's top may be for a wait to end there too (a drop onto
/// it), in sub-units: 2 and 4 tiles.
const DROP_ONTO: [i32; 2] = [2 * TILE, 4 * TILE];
/// Weight of the heuristic: ticks per tile of relaxed distance (running takes about 7).
const H_WEIGHT: u64 = 40;
/// The second racer (`RACERS`): a greedy weight (a tile of relaxed distance outweighs 640
/// ticks, so it follows the distance and the arrival-time term almost alone: long waits and
/// slow rides, where the first one widens at every tick), with a batch every other round, so a
/// level the first racer wins costs 1.5 times its expansions, not twice. On the corpus
/// (docs/benchmarks.md) it wins the far platforms, lifts, ferries and jackdaws to stomp with
/// 1/20 to 1/200 of the expansions; 160 behaves the same on most levels but needs 3-8 times
/// more on the jackdaws and the lift shafts.
const RACE_WEIGHT: u64 = 640;
const RACE_PERIOD: u64 = 2;
/// Points of a platform's path the arrival-time term of the heuristic looks at while riding.
const RIDE_SAMPLES: i32 = 32;

/// One refinement stage: how finely states are told apart and which holds are tried.
#[derive(Clone, Copy, Debug)]
pub struct Stage {
    /// Position cells are `1 << pos_shift` sub-units (256 = 1 px).
    pub pos_shift: u32,
    pub vx_shift: u32,
    pub vy_shift: u32,
    /// Ticks a move (without jump) is held.
    pub move_holds: &'static [u16],
    /// Ticks a jump (or egg boost) is held.
    pub jump_holds: &'static [u16],
    /// Longer holds of standing still ("none") and of the slow walks: waiting for something
    /// to come by is a move of its own.
    pub wait_holds: &'static [u16],
    /// Also try the slow walks.
    pub slow: bool,
    /// While the bird stands still or rides, the phase of every moving thing (in ticks along
    /// its cycle) is part of the key, in cells of `1 << phase_shift` ticks, so that waiting
    /// makes new states.
    pub phase_shift: u32,
    /// The phases of far things are in the key in every state, not only while standing still
    /// (the information the earlier stages drop, put back).
    pub full: bool,
    /// The tick itself, in cells of `1 << shift` ticks, is in the key: the last stage's space
    /// is then never exhausted before the tick limit.
    pub tick_shift: Option<u32>,
    /// Expansions after which the stage gives way to the next one (None: the last stage).
    pub cap: Option<u64>,
    /// Shots are tried at every target a pebble reaches ([`PEBBLE_LEAD`]), not only at those
    /// within [`CALM_RANGE_TILES`] whole columns of the bird's. A target at the end of a
    /// pebble's flight is hit only from a few pixels of places, so a route through such a shot
    /// is exact to the tick; the first stage leaves it to the later ones, which find it where
    /// nothing else wins (`levels/probes/guest-shot-from-a-fall-far`).
    pub far_shots: bool,
}

/// The stages, coarse to fine. A stage whose space is exhausted proves nothing (its key drops
/// information and its holds are a choice): the next one goes on, and the last one runs until
/// the time limit (or the state budget).
pub static STAGES: [Stage; 4] = [
    Stage {
        pos_shift: 10,
        vx_shift: 8,
        vy_shift: 9,
        move_holds: &[6, 15],
        jump_holds: &[4, 10, 18],
        wait_holds: &[40, 120],
        slow: false,
        phase_shift: 4,
        full: false,
        tick_shift: None,
        cap: Some(600_000),
        far_shots: false,
    },
    Stage {
        pos_shift: 9,
        vx_shift: 6,
        vy_shift: 7,
        move_holds: &[2, 5, 12],
        jump_holds: &[1, 3, 6, 10, 18],
        wait_holds: &[30, 90, 240],
        slow: true,
        phase_shift: 3,
        full: false,
        tick_shift: None,
        cap: Some(1_500_000),
        far_shots: true,
    },
    Stage {
        pos_shift: 10,
        vx_shift: 8,
        vy_shift: 9,
        move_holds: &[6, 15],
        jump_holds: &[4, 10, 18],
        wait_holds: &[30, 90, 240],
        slow: true,
        phase_shift: 4,
        full: true,
        tick_shift: None,
        cap: Some(1_500_000),
        far_shots: true,
    },
    Stage {
        pos_shift: 9,
        vx_shift: 6,
        vy_shift: 7,
        move_holds: &[2, 5, 12],
        jump_holds: &[1, 3, 6, 10, 18],
        wait_holds: &[30, 90, 240],
        slow: true,
        phase_shift: 3,
        full: true,
        tick_shift: Some(5),
        cap: None,
        far_shots: true,
    },
];

/// An identity hasher for keys that are already well-mixed 64-bit hashes.
#[derive(Default)]
struct KeyHasher(u64);
impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}
type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Key(u64);
impl Key {
    #[inline]
    fn add(&mut self, v: i64) {
        self.0 = mix(self.0 ^ (v as u64)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    }
}

/// Static facts about the level that the search needs.
pub struct Ctx {
    pub relaxed: Relaxed,
    /// Shooting can change something (cracked rock, enemies or rock-fall).
    pub shoot_useful: bool,
    /// Walkers' rows (sub-units), in file order.
    walker_y: Vec<i32>,
    /// Flyers: the fixed coordinate (sub-units) and whether they fly vertically.
    flyer_fixed: Vec<(i32, bool)>,
    /// Speeds (sub-units per tick, at least 1) of walkers, flyers and platforms, in file order:
    /// a position divided by it is a phase in ticks.
    walker_speed: Vec<i32>,
    flyer_speed: Vec<i32>,
    platform_speed: Vec<i32>,
    /// Flyers' patrols along their axis (sub-units, the engine's `min`, `max`).
    flyer_span: Vec<(i32, i32)>,
    /// Platforms: path length (sub-units, the longer axis), start and offset along it (x when
    /// horizontal, y when vertical), and whether the longer axis is vertical.
    platform_path: Vec<(i32, i32, i32, bool)>,
    /// Platforms: start (x, y) and travel (dx, dy) in sub-units, as the engine's `PlatformDef`.
    platform_line: Vec<(i32, i32, i32, i32)>,
    /// The heuristic's arrival-time term is on (`SearchOptions::arrival_term`).
    pub arrival_term: bool,
    /// The state key holds a riding bird's position relative to its platform
    /// (`SearchOptions::relative_ride`).
    pub relative_ride: bool,
    /// Platforms' widths (sub-units).
    platform_width: Vec<i32>,
    /// Rock-fall spawners' columns (sub-units).
    spawner_x: Vec<i32>,
    /// The level has platforms or flyers (so waits until they arrive are tried).
    movers: bool,
    /// The level has crumbling ledges (see `event_waits`).
    crumbling: bool,
}

impl Ctx {
    pub fn new(map: &Map) -> Ctx {
        let shoot_useful = map.tiles().contains(&Block::Cracked)
            || map
                .entities()
                .iter()
                .any(|e| e.kind.is_enemy() || e.kind == EntityKind::Rockfall);
        let mut walker_y = Vec::new();
        let mut flyer_fixed = Vec::new();
        let mut spawner_x = Vec::new();
        let (mut walker_speed, mut flyer_speed, mut platform_speed) = (vec![], vec![], vec![]);
        let (mut flyer_span, mut platform_path) = (vec![], vec![]);
        let (mut platform_line, mut platform_width) = (vec![], vec![]);
        let speed = |v: i64| (v as i32 * SPEED_UNIT).max(1);
        for e in map.entities() {
            match e.kind {
                EntityKind::Walker => {
                    walker_y.push(e.y * TILE);
                    walker_speed.push(speed(e.param(WALKER_SPEED)));
                }
                EntityKind::Flyer => {
                    let vertical = e.param(FLYER_AXIS) == 1;
                    flyer_fixed.push((if vertical { e.x * TILE } else { e.y * TILE }, vertical));
                    flyer_speed.push(speed(e.param(FLYER_SPEED)));
                    let base = if vertical { e.y } else { e.x } * TILE + 512;
                    let range = e.param(FLYER_RANGE) as i32 * TILE;
                    flyer_span.push((base - range, base + range));
                }
                EntityKind::Platform => {
                    platform_speed.push(speed(e.param(PLATFORM_SPEED)));
                    let (dx, dy) = (
                        e.param(PLATFORM_DX) as i32 * TILE,
                        e.param(PLATFORM_DY) as i32 * TILE,
                    );
                    let vertical = dy.abs() > dx.abs();
                    let (from, off) = if vertical {
                        (e.y * TILE, dy)
                    } else {
                        (e.x * TILE, dx)
                    };
                    platform_path.push((dx.abs().max(dy.abs()), from, off, vertical));
                    platform_line.push((e.x * TILE, e.y * TILE, dx, dy));
                    platform_width.push(e.param(PLATFORM_WIDTH) as i32 * TILE);
                }
                EntityKind::Rockfall => spawner_x.push(e.x * TILE),
                _ => {}
            }
        }
        Ctx {
            relaxed: Relaxed::for_search(map),
            shoot_useful,
            walker_y,
            flyer_fixed,
            walker_speed,
            flyer_speed,
            platform_speed,
            movers: !platform_path.is_empty() || !flyer_span.is_empty(),
            crumbling: map.tiles().contains(&Block::Crumbling),
            flyer_span,
            platform_path,
            platform_line,
            arrival_term: true,
            relative_ride: true,
            platform_width,
            spawner_x,
        }
    }

    /// Whether a pebble fired now in direction `dir` could hit something: intact cracked rock
    /// in its row before any other solid block, an enemy near its row, or a rock-fall column,
    /// within the pebble's range (`far`), or within [`CALM_RANGE_TILES`]. Shots at nothing are
    /// not tried.
    pub fn target_ahead(&self, sim: &Sim, dir: i32, far: bool) -> bool {
        let p = sim.player();
        let py = p.y + 4 * 256 + 3 * 256;
        let ty = py >> TILE_SHIFT;
        let x0 = p.x + PLAYER_W / 2;
        let tx0 = x0 >> TILE_SHIFT;
        // The last column the lead edge is checked in.
        let columns = if far {
            ((x0 + dir * PEBBLE_LEAD) >> TILE_SHIFT) * dir - tx0 * dir
        } else {
            CALM_RANGE_TILES
        };
        for d in 1..=columns {
            let tx = tx0 + dir * d;
            if tx < 0 || tx >= sim.width() {
                break;
            }
            let b = sim.block_at(tx, ty);
            if b == Block::Cracked {
                return true;
            }
            if b.is_solid() {
                break;
            }
        }
        // An enemy's or a rock's hitbox that the lead edge reaches: the point measured (6 px
        // into an enemy's tile, a rock-fall column's middle) at most 10 px past the lead edge
        // (a marmot's hitbox ends 15 px into its tile, 9 px past that point, on the left).
        let reach = if far {
            PEBBLE_LEAD + 10 * 256
        } else {
            CALM_RANGE_TILES * TILE
        };
        let ahead = |x: i32| {
            let dx = (x - x0) * dir;
            dx > 0 && dx <= reach
        };
        sim.enemies()
            .any(|(ex, ey)| ahead(ex + 6 * 256) && (ey + 6 * 256 - py).abs() <= 10 * 256)
            || self.spawner_x.iter().any(|&sx| ahead(sx + TILE / 2))
    }

    /// The heuristic in ticks, and the relaxed distance (tiles) it starts from: `weight` ticks
    /// per tile of relaxed distance from the bird's middle to a nest, or less where a platform
    /// can carry the bird closer (the arrival-time term): for the platform it rides, and for
    /// every platform whose path comes to where the bird stands, the ticks until the platform
    /// is there (0 while riding), plus the ticks of the ride on to a point of its path, plus the
    /// weighted distance from where the bird would then be, the least over `RIDE_SAMPLES`
    /// points of a whole cycle. Waiting for a lift and riding it then keep the priority (tick
    /// plus heuristic) the same instead of raising it by every tick, so a long wait or a slow
    /// ride is not drowned by every other thing the bird could do meanwhile (a ride of 30 rows
    /// on a lift of speed 2 is 1,900 ticks: 48 tiles' worth at 40 ticks a tile). It only
    /// orders the search; nothing is proved by it.
    pub fn heuristic(&self, sim: &Sim, weight: u64, buf: &mut Vec<u8>) -> (u32, u64) {
        let d = self.distance(sim);
        let mut h = weight * d as u64;
        let p = sim.player();
        if !self.arrival_term || self.platform_line.is_empty() || (p.riding < 0 && !p.on_ground) {
            return (d, h);
        }
        buf.clear();
        sim.state_bytes(buf);
        let base = platforms_at(buf) + 4;
        let (mx, my) = (p.x + PLAYER_W / 2, p.y + PLAYER_H / 2);
        let feet = p.y + PLAYER_H;
        for (j, &(x0, y0, dx, dy)) in self.platform_line.iter().enumerate() {
            if p.riding >= 0 && j != p.riding as usize {
                continue;
            }
            let len = dx.abs().max(dy.abs()) as i64;
            let width = self.platform_width.get(j).copied().unwrap_or(TILE);
            let speed = self.platform_speed.get(j).copied().unwrap_or(1).max(1) as i64;
            if len == 0 {
                continue;
            }
            let o = base + 21 * j;
            let (prog, dir) = (rd_i32(buf, o) as i64, rd_u8(buf, o + 4) as i8 as i64);
            let dir = if dir < 0 { -1 } else { 1 };
            let at = |q: i64| {
                (
                    x0 as i64 + dx as i64 * q / len,
                    y0 as i64 + dy as i64 * q / len,
                )
            };
            // Where and when the bird gets on: now, riding; else the first time the platform's
            // top is within half a tile of its feet and the platform within a tile beside it.
            let (wait, qb, db) = if p.riding >= 0 {
                (0, prog, dir)
            } else {
                let ys = span(y0, dy, len, feet - TILE / 2, feet + TILE / 2);
                let xs = span(x0, dx, len, p.x - width - TILE, p.x + PLAYER_W + TILE);
                let (Some((ya, yb)), Some((xa, xb))) = (ys, xs) else {
                    continue;
                };
                let (qa, qz) = (ya.max(xa), yb.min(xb));
                if qa > qz {
                    continue;
                }
                match first_reach(prog, dir, len, qa, qz) {
                    Some(x) => x,
                    None => continue,
                }
            };
            if wait as u64 / speed as u64 >= h {
                continue;
            }
            let (bx, by) = at(qb);
            let to_turn = if db > 0 { len - qb } else { qb };
            let cycle = 2 * len;
            for k in 0..=RIDE_SAMPLES as i64 + 1 {
                // The points along a whole cycle, and the turn itself.
                let s = if k > RIDE_SAMPLES as i64 {
                    to_turn
                } else {
                    cycle * k / RIDE_SAMPLES as i64
                };
                let q = bounce(qb + db * s, len);
                let (qx, qy) = at(q);
                let ticks = (wait + s) / speed;
                let tx = ((mx as i64 + qx - bx) >> TILE_SHIFT) as i32;
                let ty = ((my as i64 + qy - by) >> TILE_SHIFT) as i32;
                h = h.min(ticks as u64 + weight * self.relaxed.at(tx, ty) as u64);
            }
        }
        (d, h)
    }

    /// Relaxed distance (tiles) from the bird's middle to a nest (`Relaxed::at_moving`: where it
    /// is in the air, whether it falls and has the egg boost left).
    #[inline]
    pub fn distance(&self, sim: &Sim) -> u32 {
        let p = sim.player();
        let tx = (p.x + PLAYER_W / 2) >> TILE_SHIFT;
        let ty = (p.y + PLAYER_H / 2) >> TILE_SHIFT;
        let falling = !p.on_ground && p.riding < 0 && p.vy > 0;
        self.relaxed.at_moving(tx, ty, falling, p.boost_available)
    }
}

/// The progress values (0..=len) at which `from + delta * q / len` lies in lo..=hi, if any.
fn span(from: i32, delta: i32, len: i64, lo: i32, hi: i32) -> Option<(i64, i64)> {
    let (from, delta, lo, hi) = (from as i64, delta as i64, lo as i64, hi as i64);
    if delta == 0 {
        return (lo..=hi).contains(&from).then_some((0, len));
    }
    // lo <= from + delta * q / len <= hi, solved for q (rounded outwards).
    let (a, b) = ((lo - from) * len, (hi - from) * len);
    let (a, b) = if delta > 0 { (a, b) } else { (-b, -a) };
    let d = delta.abs();
    let qa = a.div_euclid(d);
    let qb = b.div_euclid(d) + 1;
    let (qa, qb) = (qa.max(0), qb.min(len));
    (qa <= qb).then_some((qa, qb))
}

/// From progress `prog` moving in `dir` along a path of `len` (turning at both ends): the
/// distance travelled until it first lies in qa..=qb, the progress there and the direction.
fn first_reach(prog: i64, dir: i64, len: i64, qa: i64, qb: i64) -> Option<(i64, i64, i64)> {
    if (qa..=qb).contains(&prog) {
        Some((0, prog, dir))
    } else if dir > 0 && qa > prog {
        Some((qa - prog, qa, dir))
    } else if dir > 0 {
        Some((2 * len - prog - qb, qb, -1))
    } else if qb < prog {
        Some((prog - qb, qb, dir))
    } else {
        Some((prog + qa, qa, 1))
    }
}

/// Progress after an unfolded distance `u` along a path of `len` that turns at both ends.
fn bounce(u: i64, len: i64) -> i64 {
    let m = u.rem_euclid(2 * len);
    if m > len {
        2 * len - m
    } else {
        m
    }
}

/// Where the platforms' count stands in the state layout (FORMAT.md): after the pebbles, the
/// dynamic tiles, the walkers and the flyers.
fn platforms_at(b: &[u8]) -> usize {
    let mut o = 46 + 4 * 14;
    o += 4 + 3 * rd_i32(b, o).max(0) as usize;
    o += 4 + 10 * rd_i32(b, o).max(0) as usize;
    o + 4 + 10 * rd_i32(b, o).max(0) as usize
}

fn rd_i32(b: &[u8], o: usize) -> i32 {
    b.get(o..o + 4)
        .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .unwrap_or(0)
}
fn rd_u8(b: &[u8], o: usize) -> u8 {
    b.get(o).copied().unwrap_or(0)
}

/// The quantised state key: the bird (position and speed in cells of the stage), its flags,
/// and the world (dynamic tiles, enemies, platforms, rocks) read from the state layout of
/// FORMAT.md. The RNG is left out, and the tick too except in the last stage.
///
/// Moving things farther than `NEAR` from the bird count only by whether they are alive while
/// the bird moves: their phase rarely matters until the bird gets there, and keeping it would
/// make every tick of every run a new state. While the bird stands still or rides, the phase of
/// every moving thing (walkers, flyers, platforms, rock-fall timers; the crumbling ledges are
/// always in) is in the key, in ticks along its cycle, so waiting for something that is far away
/// makes new states instead of being pruned. The `full` stages keep the far phases in every
/// state.
pub fn state_key(sim: &Sim, st: &Stage, ctx: &Ctx, buf: &mut Vec<u8>) -> u64 {
    state_key_parsed(sim, st, ctx, buf).0
}

/// The state key, and how many bytes of the state layout it read (up to the end of the
/// spawners: the berries and the checkpoint follow). A test checks the count against the
/// layout, so a change of `Sim::state_bytes` cannot silently garble the key.
pub fn state_key_parsed(sim: &Sim, st: &Stage, ctx: &Ctx, buf: &mut Vec<u8>) -> (u64, usize) {
    let p = sim.player();
    let (bx, by) = (p.x, p.y);
    let near = |x: i32, y: i32| (x - bx).abs() <= NEAR && (y - by).abs() <= NEAR;
    // Standing still or riding: the phases of everything count (see above).
    let phases = st.full || p.riding >= 0 || (p.on_ground && p.vx == 0);
    let phase = |pos: i32, speed: i32| ((pos / speed) >> st.phase_shift) as i64;
    let mut k = Key(0x1234_5678);
    if let Some(shift) = st.tick_shift {
        k.add((sim.tick() >> shift) as i64);
    }
    k.add(phases as i64);
    buf.clear();
    sim.state_bytes(buf);
    // While riding, the bird's position relative to its platform: the platform's phase is in
    // the key then, so the absolute position would only add the cell borders a bird standing
    // still on it crosses.
    let (kx, ky) = if ctx.relative_ride && p.riding >= 0 {
        let o = platforms_at(buf) + 4 + 21 * p.riding as usize + 5;
        (p.x - rd_i32(buf, o), p.y - rd_i32(buf, o + 4))
    } else {
        (p.x, p.y)
    };
    k.add((kx >> st.pos_shift) as i64);
    // In the air the height is told apart half as finely (the fall is fast anyway).
    k.add((ky >> (st.pos_shift + !p.on_ground as u32)) as i64);
    k.add((p.vx >> st.vx_shift) as i64);
    k.add((p.vy >> st.vy_shift) as i64);
    let flags = p.on_ground as i64
        | (p.jump_held as i64) << 1
        | (p.boost_available as i64) << 2
        | (p.rising as i64) << 3
        | ((p.coyote > 0) as i64) << 4;
    k.add(flags);
    k.add(p.riding as i64);
    // Facing and the shooting cooldown are left out: the shooting macros name their direction,
    // and keeping them would multiply the states of every level with something to shoot.
    let b = &buf[..];
    // Moving things are told apart at half the bird's resolution.
    let ps = st.pos_shift + 1;
    // Pebbles: 4 x (active u8, x, y, vx i32, life u8) from offset 46. Only whether one is in
    // flight counts (their positions would multiply the states of every shooting level).
    let mut o = 46;
    let mut flying = 0;
    for _ in 0..4 {
        flying |= (rd_u8(b, o) != 0) as i64;
        o += 14;
    }
    k.add(flying);
    // Cracked and crumbling tiles: state u8, timer u16. Only the ones not intact, with their
    // index (the same states are told apart as by every tile in turn): a level has up to
    // 4,096 of them, and a key of every one took a third of the search's time there.
    let n = rd_i32(b, o).max(0) as usize;
    o += 4;
    let tiles = b.get(o..o + 3 * n).unwrap_or_default();
    for (i, t) in tiles.chunks_exact(3).enumerate() {
        let v = t[0] as i64 | ((u16::from_le_bytes([t[1], t[2]]) as i64 >> 3) << 8);
        if v != 0 {
            k.add(((i as i64) << 32) | v);
        }
    }
    o += 3 * n;
    // Walkers and flyers: pos i32, dir i8, wait u32, alive u8.
    for kind in 0..2 {
        let n = rd_i32(b, o) as usize;
        o += 4;
        for j in 0..n {
            let pos = rd_i32(b, o);
            let (ex, ey, speed) = if kind == 0 {
                let y = ctx.walker_y.get(j).copied().unwrap_or(0);
                (pos, y, ctx.walker_speed.get(j).copied().unwrap_or(1))
            } else {
                let speed = ctx.flyer_speed.get(j).copied().unwrap_or(1);
                match ctx.flyer_fixed.get(j) {
                    Some(&(f, true)) => (f, pos, speed),
                    Some(&(f, false)) => (pos, f, speed),
                    None => (0, 0, 1),
                }
            };
            let (dir, wait) = (rd_u8(b, o + 4) as i64, rd_i32(b, o + 5) as i64);
            if rd_u8(b, o + 9) == 0 {
                k.add(-1);
            } else if near(ex, ey) {
                k.add((pos >> ps) as i64);
                k.add(dir | ((wait + 7) >> 3) << 8);
            } else if phases {
                k.add(phase(pos, speed));
                k.add(dir | (wait >> st.phase_shift) << 8);
            } else {
                k.add(-2);
            }
            o += 10;
        }
    }
    // Platforms: progress i32, dir i8, x, y, dx, dy i32. A near one's phase is told apart in
    // cells of four times the enemies' (32 px at the coarse stage) while the bird moves: the
    // bird riding one already carries its position, and a finer phase multiplies the states of
    // every level with platforms. While it stands still or rides, in ticks, like the others (a
    // slow platform stays in one 32 px cell for seconds).
    let n = rd_i32(b, o) as usize;
    o += 4;
    for j in 0..n {
        let (prog, dir) = (rd_i32(b, o), rd_u8(b, o + 4) as i64);
        if phases {
            k.add(phase(prog, ctx.platform_speed.get(j).copied().unwrap_or(1)));
            k.add(dir);
        } else if near(rd_i32(b, o + 5), rd_i32(b, o + 9)) {
            k.add((prog >> (ps + 2)) as i64);
            k.add(dir);
        } else {
            k.add(-2);
        }
        o += 21;
    }
    // Spawners: timer u32, 4 x (active u8, x, y, vy i32).
    let n = rd_i32(b, o) as usize;
    o += 4;
    for j in 0..n {
        let sx = ctx.spawner_x.get(j).copied().unwrap_or(0);
        let near_x = (sx - bx).abs() <= NEAR;
        if near_x {
            k.add((rd_i32(b, o) >> 3) as i64);
        } else if phases {
            k.add((rd_i32(b, o) >> st.phase_shift) as i64);
        }
        o += 4;
        for _ in 0..4 {
            if near_x && rd_u8(b, o) != 0 && near(rd_i32(b, o + 1), rd_i32(b, o + 5)) {
                k.add((rd_i32(b, o + 5) >> ps) as i64);
            } else {
                k.add(-1);
            }
            o += 13;
        }
    }
    (k.0, o)
}

/// Waits that end when something that moves gets somewhere: for every platform and live flyer,
/// the tick it next turns round and the tick it next lines up with the bird (its path passes the
/// bird's column, or row when it moves vertically). The soonest `EVENT_WAITS` of them, at most
/// `EVENT_MAX` ticks ahead, ascending. Platforms never pause; a flyer's current pause counts, its
/// later random ones do not (a wait that ends a little early is still a fine move).
pub fn event_waits(sim: &Sim, ctx: &Ctx, buf: &mut Vec<u8>, out: &mut Vec<u16>) {
    out.clear();
    let p = sim.player();
    let (bx, by) = (p.x + PLAYER_W / 2, p.y + PLAYER_H);
    buf.clear();
    sim.state_bytes(buf);
    let b = &buf[..];
    let mut add = |t: i64| {
        if (1..=EVENT_MAX as i64).contains(&t) {
            out.push(t as u16);
        }
    };
    // A leg from `pos` in direction `dir` at `speed` between `lo` and `hi`, after `wait` ticks:
    // the tick of the turn, and of reaching `target` if it lies ahead (on this leg or the next).
    let mut leg = |pos: i32, dir: i32, speed: i32, lo: i32, hi: i32, wait: i64, target: i32| {
        let speed = speed.max(1) as i64;
        let end = if dir > 0 { hi } else { lo };
        let turn = wait + ((end - pos).abs() as i64 + speed - 1) / speed;
        add(turn);
        if (lo..=hi).contains(&target) {
            if (target - pos) * dir >= 0 {
                add(wait + (target - pos).abs() as i64 / speed);
            } else {
                add(turn + (end - target).abs() as i64 / speed);
            }
        }
    };
    let mut drops: Vec<u16> = Vec::new();
    let mut o = 46 + 4 * 14;
    let n = rd_i32(b, o) as usize;
    o += 4 + 3 * n;
    // Walkers are skipped (they also turn at walls and edges); flyers.
    let n = rd_i32(b, o) as usize;
    o += 4 + 10 * n;
    let n = rd_i32(b, o) as usize;
    o += 4;
    for j in 0..n {
        let (pos, dir, wait, alive) = (
            rd_i32(b, o),
            rd_u8(b, o + 4) as i8 as i32,
            rd_i32(b, o + 5) as i64,
            rd_u8(b, o + 9) != 0,
        );
        o += 10;
        let (Some(&(lo, hi)), Some(&speed), Some(&(_, vertical))) = (
            ctx.flyer_span.get(j),
            ctx.flyer_speed.get(j),
            ctx.flyer_fixed.get(j),
        ) else {
            continue;
        };
        if alive {
            let target = if vertical {
                by - 3 * TILE
            } else {
                bx - 6 * 256
            };
            leg(pos, dir, speed, lo, hi, wait, target);
        }
    }
    let n = rd_i32(b, o) as usize;
    o += 4;
    for j in 0..n {
        let (prog, dir) = (rd_i32(b, o), rd_u8(b, o + 4) as i8 as i32);
        o += 21;
        let (Some(&(len, from, off, vertical)), Some(&speed)) =
            (ctx.platform_path.get(j), ctx.platform_speed.get(j))
        else {
            continue;
        };
        if len == 0 {
            continue;
        }
        // Where along its path (in progress units) the platform lines up with the bird: its
        // top at the bird's feet, or its middle (3 tiles wide at most counts) under the bird.
        let want = if vertical { by } else { bx - TILE };
        let target = if off == 0 {
            -1
        } else {
            ((want - from) as i64 * len as i64 / off as i64) as i32
        };
        leg(prog, dir, speed, 0, len, 0, target);
        // On a map with crumbling ledges, a lift coming up under the bird: also when its top
        // is a short drop under the feet, where a walk off a ledge lands on it (the ledge may
        // be gone before the lift comes up to it: `levels/probes/guest-crumble-wait-lift-2`).
        // Besides the soonest events, not among them, so the waits tried before stay; only
        // there, so other levels search as before.
        if ctx.crumbling && vertical && off != 0 {
            for drop in DROP_ONTO {
                let target = ((by + drop - from) as i64 * len as i64 / off as i64) as i32;
                if (0..=len).contains(&target) && (target - prog) * dir > 0 {
                    let t = (target - prog).abs() as i64 / speed.max(1) as i64;
                    if (1..=EVENT_MAX as i64).contains(&t) {
                        drops.push(t as u16);
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out.truncate(EVENT_WAITS);
    // And a little before each: a jump to meet something (a stomp, a landing on a platform)
    // starts before it arrives.
    for i in 0..out.len() {
        for lead in EVENT_LEADS {
            if out[i] > lead {
                out.push(out[i] - lead);
            }
        }
    }
    out.extend_from_slice(&drops);
    out.sort_unstable();
    out.dedup();
}

/// The macro-actions tried from a state, in a fixed order: moves first (right, left, none,
/// then the slow walks), jumps only where a jump or boost can happen (or a rising jump can be
/// held longer), a short release where the boost needs a fresh press, and shots only where
/// shooting can change something.
pub fn macros(sim: &Sim, st: &Stage, ctx: &Ctx, events: &[u16], out: &mut Vec<(u8, u16)>) {
    out.clear();
    let p = sim.player();
    // move index * 4: right 8, left 0, none 4, slow right 16, slow left 12.
    let moves: &[u8] = if st.slow {
        &[8, 0, 4, 16, 12]
    } else {
        &[8, 0, 4]
    };
    for &m in moves {
        for &t in st.move_holds {
            out.push((m, t));
        }
        // Waiting (and creeping) for longer: after the move's own holds, so that `expand`
        // continues the same simulation.
        if m >= 12 {
            for &t in st.wait_holds {
                out.push((m, t));
            }
        }
        if m == 4 {
            // Standing still: the fixed long holds and the waits until something arrives,
            // merged in ascending order.
            let mut ts: Vec<u16> = st.wait_holds.to_vec();
            ts.extend_from_slice(events);
            ts.retain(|&t| t > *st.move_holds.last().unwrap_or(&0));
            ts.sort_unstable();
            ts.dedup();
            for t in ts {
                out.push((m, t));
            }
        }
    }
    let airborne = !p.on_ground;
    if p.jump_held && airborne && p.boost_available {
        // Release for a tick or two so the next press is fresh (egg boost).
        for &m in &[8u8, 0, 4] {
            out.push((m, 1));
        }
    }
    let can_press = !p.jump_held && (p.on_ground || p.coyote > 0 || p.boost_available);
    let can_hold = p.jump_held && p.rising;
    if can_press || can_hold {
        for &m in moves {
            for &t in st.jump_holds {
                out.push((m + 1, t));
            }
        }
    }
    if ctx.shoot_useful && p.shoot_cooldown == 0 {
        let right = ctx.target_ahead(sim, 1, st.far_shots);
        let left = ctx.target_ahead(sim, -1, st.far_shots);
        let ahead = if p.facing < 0 { left } else { right };
        for (m, useful) in [(8u8, right), (0, left), (4, ahead)] {
            if !useful {
                continue;
            }
            out.push((m + 2, st.move_holds[0]));
            if can_press {
                out.push((m + 3, st.jump_holds[st.jump_holds.len() - 1]));
            }
        }
    }
}

/// A state the search reached: how (its parent and the macro from it) and where its simulation
/// can be found. 12 bytes: the search keeps millions.
struct Node {
    parent: u32,
    /// The slot of this node's own simulation in `Storage::snaps`, or `NO_SNAP`: only expanded
    /// nodes keep one, while some of their children are still to be expanded; every open
    /// node's simulation is its parent's snapshot stepped by `action` for `ticks`.
    snap: u32,
    action: u8,
    ticks: u16,
}

const NO_SNAP: u32 = u32::MAX;

/// A child of an expanded node, without its simulation (which is re-made from the parent's
/// snapshot when the child is expanded: the simulation is deterministic, so it is the same).
struct Child {
    action: u8,
    /// Ticks actually simulated (fewer than held if the bird won).
    ticks: u16,
    /// The tick the child's simulation is at.
    tick: u32,
    status: Status,
    key: u64,
    dist: u32,
    /// The heuristic in ticks (`Ctx::heuristic`).
    h: u64,
}

/// Simulates the macros from `sim`. Children whose state was already seen before this batch
/// are dropped here, on the worker thread (the merge would reject them anyway).
fn expand(sim: &Sim, st: &Stage, ctx: &Ctx, seen: &KeySet, weight: u64) -> Vec<Child> {
    let mut ms = Vec::with_capacity(48);
    let mut buf = Vec::with_capacity(512);
    let mut events = Vec::new();
    if ctx.movers {
        event_waits(sim, ctx, &mut buf, &mut events);
    }
    macros(sim, st, ctx, &events, &mut ms);
    let p = sim.player();
    // In the air: not standing, riding or at rest (as at the start before its first tick).
    let air = !(p.on_ground || p.riding >= 0 || p.vy == 0);
    let short = st.move_holds.last().copied().unwrap_or(0);
    // On the ground, not on a platform, and for "none" standing still (the phases of far
    // things are in the key then, as at the end of a wait).
    let landed_by = |s: &Sim, a: u8| {
        let q = s.player();
        q.on_ground && q.riding < 0 && (a != 4 || q.vx == 0)
    };
    let mut out: Vec<Child> = Vec::with_capacity(ms.len());
    // The last macro simulated and its simulation if it still runs: longer holds of the same
    // action continue from it instead of starting over.
    let mut prev: Option<(u8, u16, Option<Sim>)> = None;
    for (a, t) in ms {
        let (mut s, mut used) = match prev.take() {
            Some((pa, pt, Some(s))) if pa == a && pt < t => (s, pt),
            // The shorter hold already died or won: so does this one.
            Some((pa, pt, None)) if pa == a && pt < t => {
                prev = Some((pa, pt, None));
                continue;
            }
            _ => (sim.clone(), 0),
        };
        // A wait (or slow walk) from the air ends where the bird has landed on the ground
        // (for a wait: and stands still): the waits go on from there, a node of its own, so
        // the longer holds are not tried from here (waits from the air, each simulated to its
        // end, were 97-99 % of the simulated ticks on the corpus's slowest levels). On a
        // platform the wait goes on: the ride is its point.
        let long_from_air = air && t > short;
        if long_from_air && landed_by(&s, a) {
            prev = Some((a, t, None));
            continue;
        }
        let mut landed = false;
        while used < t && s.status() == Status::Running {
            s.step(a);
            used += 1;
            if long_from_air && landed_by(&s, a) {
                landed = true;
                break;
            }
        }
        let status = s.status();
        if status == Status::Running {
            let key = state_key(&s, st, ctx, &mut buf);
            if !seen.contains(&key) {
                let (dist, h) = ctx.heuristic(&s, weight, &mut buf);
                out.push(Child {
                    action: a,
                    ticks: used,
                    tick: s.tick(),
                    status,
                    key,
                    dist,
                    h,
                });
            }
            prev = Some((a, t, (!landed).then_some(s)));
        } else {
            if status == Status::Won {
                out.push(Child {
                    action: a,
                    ticks: used,
                    tick: s.tick(),
                    status,
                    key: 0,
                    dist: 0,
                    h: 0,
                });
            }
            prev = Some((a, t, None));
        }
    }
    out
}

enum StageEnd {
    /// The macros, and the racer (index into the racers) that found them.
    Won(Vec<Step>, usize),
    Exhausted,
    Capped,
    MemoryLimit,
    Deadline,
    Cancelled,
}

struct Shared<'a> {
    req: &'a PlanRequest<'a>,
    ctx: Ctx,
    start: Instant,
    deadline: Instant,
    expanded: u64,
    best_distance: u32,
    progress: Option<&'a dyn Fn(&Progress)>,
    last_progress: Instant,
    /// Bytes of one simulation of this map (`memory::sim_bytes`).
    sim_bytes: u64,
    /// Bytes the search holds whatever it expands: the heuristic's three distances per tile,
    /// made before the first expansion (about 0.8 MB on a 512 x 136 map; what building them
    /// takes, about 21 MB there, is freed before the search starts).
    fixed_bytes: u64,
    /// Bytes the search held at most so far (over all stages).
    peak_bytes: u64,
    /// The searches that race in every stage (`RACERS`).
    racers: &'a [RacerSpec],
    expansion_limit: u64,
}

/// One entry of the open list: the priority (tick plus heuristic) in the top 24 bits, the
/// heuristic in the next 17, the node in the low 23, so the smallest priority pops first, ties
/// go to the state with the smaller heuristic (the one further along: on a long ride or wait,
/// where the priority stays the same, the search follows it instead of widening at every tick),
/// and then to the older node.
type Open = Reverse<u64>;
const ID_BITS: u32 = 23;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
const H_BITS: u32 = 17;

fn open_entry(tick: u32, h: u64, id: u32) -> u64 {
    let f = (tick as u64 + h).min((1 << (64 - ID_BITS - H_BITS)) - 1);
    let h = h.min((1 << H_BITS) - 1);
    (f << (ID_BITS + H_BITS)) | (h << ID_BITS) | id as u64
}

/// The search's memory for one stage.
struct Storage {
    nodes: Vec<Node>,
    /// Simulations of expanded nodes whose children are not all expanded yet (see
    /// `Node::snap`), a slab: a freed slot is reused.
    snaps: Vec<Option<Box<Sim>>>,
    /// Per slot: the children still to be expanded; the slot is freed when it reaches 0.
    refs: Vec<u32>,
    free: Vec<u32>,
    seen: KeySet,
    open: BinaryHeap<Open>,
}

impl Storage {
    /// What the storage holds, and what the next batch could add (`memory`): every buffer
    /// that could grow, new snapshots for the batch, and the simulations the batch works on
    /// (each parent's, re-made, and on each thread the one being stepped and the one kept for
    /// a longer hold).
    fn account(&self, sim_bytes: u64, threads: usize) -> memory::Account {
        let live = (self.snaps.len() - self.free.len()) as u64;
        let now = memory::vec_bytes::<Node>(self.nodes.capacity())
            + memory::vec_bytes::<Option<Box<Sim>>>(self.snaps.capacity())
            + memory::vec_bytes::<u32>(self.refs.capacity())
            + memory::vec_bytes::<u32>(self.free.capacity())
            + memory::hash_bytes::<u64>(self.seen.capacity())
            + memory::vec_bytes::<Open>(self.open.capacity())
            + live * sim_bytes;
        // A batch adds at most BATCH snapshots and BATCH * MAX_CHILDREN states.
        let more = BATCH * MAX_CHILDREN;
        let seen_growth = if self.seen.len() + more > self.seen.capacity() {
            memory::hash_growth::<u64>(self.seen.capacity())
        } else {
            0
        };
        let growth = memory::vec_growth::<Node>(self.nodes.len(), self.nodes.capacity(), more)
            .max(memory::vec_growth::<Open>(
                self.open.len(),
                self.open.capacity(),
                more,
            ))
            .max(seen_growth)
            + memory::vec_growth::<Option<Box<Sim>>>(
                self.snaps.len(),
                self.snaps.capacity(),
                BATCH,
            )
            + memory::vec_growth::<u32>(self.refs.len(), self.refs.capacity(), BATCH)
            + memory::vec_growth::<u32>(self.free.len(), self.free.capacity(), BATCH)
            + (2 * BATCH as u64 + 2 * threads as u64) * sim_bytes;
        memory::Account { now, growth }
    }

    /// The slot of the snapshot node `id`'s simulation is re-made from: its own (the root) or
    /// its parent's.
    fn snap_of(&self, id: u32) -> u32 {
        let n = &self.nodes[id as usize];
        if n.snap != NO_SNAP {
            n.snap
        } else {
            self.nodes[n.parent as usize].snap
        }
    }

    /// The simulation of node `id`: its parent's snapshot stepped by the macro that led here
    /// (the root has its own).
    fn sim_of(&self, id: u32) -> Sim {
        let n = &self.nodes[id as usize];
        let snap = self.snaps[self.snap_of(id) as usize]
            .as_deref()
            .expect("a node's parent keeps its snapshot until the node is expanded");
        let mut s = snap.clone();
        if n.snap == NO_SNAP {
            for _ in 0..n.ticks {
                s.step(n.action);
            }
        }
        s
    }

    /// Node `id` was expanded: the snapshot it was made from has one child less to serve.
    fn release(&mut self, id: u32) {
        let slot = self.snap_of(id);
        let r = &mut self.refs[slot as usize];
        *r = r.saturating_sub(1);
        if *r == 0 {
            self.snaps[slot as usize] = None;
            self.free.push(slot);
        }
    }

    /// Keeps `sim` as node `id`'s snapshot for its `children`.
    fn keep(&mut self, id: u32, sim: Sim, children: u32) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.snaps[slot as usize] = Some(Box::new(sim));
                self.refs[slot as usize] = children;
                slot
            }
            None => {
                self.snaps.push(Some(Box::new(sim)));
                self.refs.push(children);
                (self.snaps.len() - 1) as u32
            }
        };
        self.nodes[id as usize].snap = slot;
    }
}

/// Children of one expansion at most (the macros of `macros`, over-counted): for the memory
/// account's growth.
const MAX_CHILDREN: usize = 64;

/// One of the searches that race in every stage: the weight of its heuristic (ticks per tile
/// of relaxed distance) and its share of the rounds (a batch every `period`-th round).
#[derive(Clone, Copy, Debug)]
pub struct RacerSpec {
    pub weight: u64,
    pub period: u64,
}

/// The searches that race in every stage, in the order their wins are looked at. Each round,
/// every racer whose turn it is expands one batch (together, on the current rayon pool); after
/// the round their results are looked at in this order and the first win answers. A racer's
/// batches depend only on its own earlier ones, never on the clock or the thread count, so
/// the race is decided by expansion counts: the same winner and replay on every run and every
/// number of threads.
pub static RACERS: [RacerSpec; 2] = [
    RacerSpec {
        weight: H_WEIGHT,
        period: 1,
    },
    RacerSpec {
        weight: RACE_WEIGHT,
        period: RACE_PERIOD,
    },
];

/// How one racer's part of a stage ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RacerEnd {
    Exhausted,
    Capped,
    MemoryLimit,
}

struct Racer {
    weight: u64,
    period: u64,
    store: Storage,
    /// Nodes this racer expanded in this stage.
    expanded: u64,
    end: Option<RacerEnd>,
}

/// What one batch of one racer found.
struct BatchOut {
    won: Option<Vec<Step>>,
    exhausted: bool,
    expanded: u64,
    best_distance: u32,
}

fn new_storage() -> Storage {
    Storage {
        nodes: Vec::new(),
        snaps: Vec::new(),
        refs: Vec::new(),
        free: Vec::new(),
        seen: KeySet::with_capacity_and_hasher(1 << 12, Default::default()),
        open: BinaryHeap::new(),
    }
}

/// The macros from the root to node `i`, then `last`.
fn path(nodes: &[Node], mut i: u32, last: Option<(u8, u16)>) -> Vec<Step> {
    let mut steps = Vec::new();
    if let Some((a, t)) = last {
        steps.push(Step {
            action: a,
            ticks: t,
        });
    }
    while nodes[i as usize].parent != u32::MAX {
        let n = &nodes[i as usize];
        steps.push(Step {
            action: n.action,
            ticks: n.ticks,
        });
        i = n.parent;
    }
    steps.reverse();
    steps
}

impl Racer {
    fn new(req: &PlanRequest, ctx: &Ctx, st: &Stage, spec: &RacerSpec) -> (Racer, u32) {
        let mut store = new_storage();
        let root = Sim::new(req.map, req.seed);
        let mut buf = Vec::new();
        store.seen.insert(state_key(&root, st, ctx, &mut buf));
        let (d0, h0) = ctx.heuristic(&root, spec.weight, &mut buf);
        store.nodes.push(Node {
            parent: u32::MAX,
            snap: NO_SNAP,
            action: 0,
            ticks: 0,
        });
        store.keep(0, root, 1);
        // The root is node 0: its entry is its priority alone.
        store.open.push(Reverse(open_entry(0, h0, 0)));
        let racer = Racer {
            weight: spec.weight,
            period: spec.period,
            store,
            expanded: 0,
            end: None,
        };
        (racer, d0)
    }

    /// Pops a batch, expands it on the current pool, and merges the children in a fixed order.
    fn batch(&mut self, st: &Stage, ctx: &Ctx) -> BatchOut {
        let store = &mut self.store;
        let mut out = BatchOut {
            won: None,
            exhausted: false,
            expanded: 0,
            best_distance: u32::MAX,
        };
        let mut batch: Vec<u32> = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            let Some(Reverse(e)) = store.open.pop() else {
                break;
            };
            batch.push((e & ID_MASK) as u32);
        }
        if batch.is_empty() {
            out.exhausted = true;
            return out;
        }
        out.expanded = batch.len() as u64;
        self.expanded += batch.len() as u64;
        let weight = self.weight;
        let storage: &Storage = store;
        let results: Vec<(Sim, Vec<Child>)> = batch
            .par_iter()
            .map(|&id| {
                let s = storage.sim_of(id);
                let children = expand(&s, st, ctx, &storage.seen, weight);
                (s, children)
            })
            .collect();
        for (&pid, (sim, children)) in batch.iter().zip(results) {
            store.release(pid);
            let mut kept = 0;
            for c in children {
                // A win after the replay limit is no win: no replay may hold it, so `finish`
                // could not confirm it, and the search must go on for one within the limit.
                if c.status == Status::Won && c.tick <= MAX_TICKS {
                    out.won = Some(path(&store.nodes, pid, Some((c.action, c.ticks))));
                    return out;
                }
                if c.tick >= MAX_TICKS || !store.seen.insert(c.key) {
                    continue;
                }
                kept += 1;
                out.best_distance = out.best_distance.min(c.dist);
                let id = store.nodes.len() as u32;
                store.nodes.push(Node {
                    parent: pid,
                    snap: NO_SNAP,
                    action: c.action,
                    ticks: c.ticks,
                });
                store.open.push(Reverse(open_entry(c.tick, c.h, id)));
            }
            // Its children are re-made from it; a node without children needs no snapshot.
            if kept > 0 {
                store.keep(pid, sim, kept);
            }
        }
        out
    }
}

/// The threads whose scratch simulations the memory account counts, whatever the pool has.
const ACCOUNTED_THREADS: usize = 16;

/// One stage: the racers of `RACERS`, round by round, until one wins or all are out.
fn run_stage(sh: &mut Shared, stage_no: usize, st: &Stage) -> StageEnd {
    let mut racers: Vec<Racer> = Vec::new();
    for spec in sh.racers {
        let (r, d0) = Racer::new(sh.req, &sh.ctx, st, spec);
        sh.best_distance = sh.best_distance.min(d0);
        racers.push(r);
    }
    // The scratch simulations of the threads, counted for the most threads a pool runs,
    // not this pool's: the memory limit decides which racer gives up, and so the outcome,
    // which must be the same on every machine and thread count.
    let threads = ACCOUNTED_THREADS;
    let mut round = 0u64;
    loop {
        if sh.req.cancel.load(Ordering::Relaxed) {
            return StageEnd::Cancelled;
        }
        let now = Instant::now();
        if now >= sh.deadline || sh.expanded >= sh.expansion_limit {
            return StageEnd::Deadline;
        }
        // The memory of all racers together counts against the budget; over it, the last
        // racer still going gives up its memory (the first one last).
        let mut account = memory::Account {
            now: sh.fixed_bytes,
            growth: 0,
        };
        for r in racers.iter().filter(|r| r.end.is_none()) {
            let a = r.store.account(sh.sim_bytes, threads);
            account.now += a.now;
            account.growth += a.growth;
        }
        sh.peak_bytes = sh.peak_bytes.max(account.now);
        if let Some(cb) = sh.progress {
            if now.duration_since(sh.last_progress) >= Duration::from_millis(100) {
                sh.last_progress = now;
                cb(&Progress {
                    expanded: sh.expanded,
                    best_distance: sh.best_distance,
                    elapsed: now.duration_since(sh.start),
                    stage: stage_no,
                    states: racers.iter().map(|r| r.store.seen.len() as u64).sum(),
                    bytes: account.now,
                    open: racers.iter().map(|r| r.store.open.len() as u64).sum(),
                });
            }
        }
        for r in racers.iter_mut().filter(|r| r.end.is_none()) {
            if st.cap.is_some_and(|cap| r.expanded >= cap)
                || r.store.seen.len() as u64 >= MAX_STATES
                || r.store.nodes.len() + BATCH * MAX_CHILDREN > ID_MASK as usize
            {
                r.end = Some(RacerEnd::Capped);
                r.store = new_storage();
            }
        }
        if sh
            .req
            .memory_budget_bytes
            .is_some_and(|b| account.peak_if_grown() > b)
        {
            if let Some(r) = racers.iter_mut().rev().find(|r| r.end.is_none()) {
                r.end = Some(RacerEnd::MemoryLimit);
                r.store = new_storage();
            }
        }
        if racers.iter().all(|r| r.end.is_some()) {
            // The first racer's end stands for the stage's.
            return match racers[0].end {
                Some(RacerEnd::MemoryLimit) => StageEnd::MemoryLimit,
                Some(RacerEnd::Exhausted) => StageEnd::Exhausted,
                _ => StageEnd::Capped,
            };
        }
        let ctx = &sh.ctx;
        let outs: Vec<Option<BatchOut>> = racers
            .par_iter_mut()
            .map(|r| {
                (r.end.is_none() && round.is_multiple_of(r.period.max(1))).then(|| r.batch(st, ctx))
            })
            .collect();
        round += 1;
        for (i, (r, out)) in racers.iter_mut().zip(outs).enumerate() {
            let Some(out) = out else { continue };
            sh.expanded += out.expanded;
            sh.best_distance = sh.best_distance.min(out.best_distance);
            if let Some(steps) = out.won {
                return StageEnd::Won(steps, i);
            }
            if out.exhausted {
                r.end = Some(RacerEnd::Exhausted);
                r.store = new_storage();
            }
        }
    }
}

/// The proofs that no replay can win, tried before any search: two over-approximations of where
/// the bird can go (if either reaches no nest, nothing can win) and a lower bound on the time
/// any win takes. (The exact check, `exact`, comes only
/// after a search that ran out of states.)
///
/// `relaxed_graph` is the validator's relaxed check (`horst_engine::format::reach`, behind the
/// `nest_unreachable` warning) finding no nest, so the proof and the warning always agree: the
/// planner never proves unwinnable a level the validator lets pass, nor the other way round.
/// (The planner's own tile graph, `relaxed`, let the bird rise only beside a support in its
/// own or a neighbouring column; a jump from a ledge up through a hole in a ceiling a few
/// columns aside is a real move it did not have, so it only gives the heuristic now.)
/// `jump_envelope` is `envelope::prove`; `replay_limit` is `timebound::prove` (the openings
/// of the rows between the start and every nest are too far apart to pass within the replay
/// limit).
pub fn prove(map: &Map) -> Option<Proof> {
    let nests = map.nests();
    let reached = horst_engine::format::reach::nests_reached(map, nests);
    if !nests.is_empty() && reached.iter().all(|&r| !r) {
        Some(Proof::RelaxedGraph)
    } else if crate::envelope::prove(map).unreachable() {
        Some(Proof::JumpEnvelope)
    } else if crate::timebound::prove(map, MAX_TICKS) {
        Some(Proof::ReplayLimit)
    } else {
        None
    }
}

/// How the search runs: the racers and whether the heuristic has its arrival-time term. The
/// default is what `plan` uses; the corpus benchmark and the tests compare others with it.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions<'a> {
    pub racers: &'a [RacerSpec],
    pub arrival_term: bool,
    /// The state key holds a riding bird's position relative to its platform.
    pub relative_ride: bool,
    /// Stop (reason `time_limit`) after this many expansions over all stages and racers: a
    /// limit that, unlike the clock, does not depend on the machine's load (the benchmark's
    /// `--expansions`).
    pub expansion_limit: Option<u64>,
    /// The heuristic bounds the bird's sideways movement in the air (`Relaxed::for_search`);
    /// off, it is the plain relaxed graph's distance (as before).
    pub air_bound: bool,
}

impl Default for SearchOptions<'static> {
    fn default() -> Self {
        SearchOptions {
            racers: &RACERS,
            arrival_term: true,
            relative_ride: true,
            expansion_limit: None,
            air_bound: true,
        }
    }
}

/// Searches a winning replay within the request's time limit, on the current rayon pool.
pub fn plan(req: &PlanRequest, progress: Option<&dyn Fn(&Progress)>) -> PlanReport {
    plan_with(req, progress, &SearchOptions::default())
}

/// `plan` with other options (at least one racer).
pub fn plan_with(
    req: &PlanRequest,
    progress: Option<&dyn Fn(&Progress)>,
    opts: &SearchOptions,
) -> PlanReport {
    let start = Instant::now();
    let deadline = start + req.time_limit;
    // The search stops early enough for a late win to be shortened within its own budget
    // (never cut by the clock: the replay does not depend on when the win was found).
    let search_deadline = deadline - crate::shorten::shorten_reserve(req.time_limit);
    let mut ctx = Ctx::new(req.map);
    ctx.arrival_term = opts.arrival_term;
    ctx.relative_ride = opts.relative_ride;
    if !opts.air_bound {
        ctx.relaxed = Relaxed::new(req.map);
    }
    let racers: &[RacerSpec] = if opts.racers.is_empty() {
        &RACERS[..1]
    } else {
        opts.racers
    };
    let fixed_bytes = ctx.relaxed.heap_bytes();
    let mut sh = Shared {
        req,
        start,
        deadline: search_deadline,
        expanded: 0,
        best_distance: u32::MAX,
        progress,
        last_progress: start,
        ctx,
        sim_bytes: memory::sim_bytes(req.map),
        fixed_bytes,
        peak_bytes: 0,
        racers,
        expansion_limit: opts.expansion_limit.unwrap_or(u64::MAX),
    };
    let report = |sh: &Shared, outcome: PlanOutcome| PlanReport {
        outcome,
        expanded: sh.expanded,
        elapsed: start.elapsed(),
        best_distance: (sh.best_distance != u32::MAX).then_some(sh.best_distance),
        proof: None,
        peak_bytes: sh.peak_bytes,
        won_by: None,
    };
    // Progress from the start: the proofs below can take a while on a large level before the
    // search's first report, and an operator (and `horst up`, which blames the playtest with
    // the most memory when its worker outgrows its limit) would see nothing of the job.
    if let Some(cb) = progress {
        cb(&Progress {
            expanded: 0,
            best_distance: u32::MAX,
            elapsed: start.elapsed(),
            stage: 0,
            states: 0,
            bytes: fixed_bytes,
            open: 0,
        });
    }
    let proof = prove(req.map);
    if proof.is_some() {
        let mut r = report(
            &sh,
            PlanOutcome::Unresolved {
                reason: UnresolvedReason::Unreachable,
            },
        );
        r.proof = proof;
        r.best_distance = None;
        return r;
    }
    let unresolved = |sh: &Shared, reason| report(sh, PlanOutcome::Unresolved { reason });
    // A stage that ran out of memory gives way to the next one, like a capped one (each
    // starts afresh); the answer says so if none finds a win.
    let mut out_of_memory = false;
    let mut last_exhausted = false;
    for (i, st) in STAGES.iter().enumerate() {
        match run_stage(&mut sh, i, st) {
            StageEnd::Won(steps, racer) => {
                return match finish(req, steps) {
                    Some((replay, ticks)) => {
                        sh.best_distance = 0;
                        let mut r = report(&sh, PlanOutcome::Won { replay, ticks });
                        r.won_by = Some(crate::WonBy {
                            stage: i,
                            racer,
                            weight: racers[racer].weight,
                        });
                        r
                    }
                    // Never return a replay the referee does not confirm. (Cannot happen: the
                    // search's own simulation is the referee's, and it takes no win after the
                    // replay limit.)
                    None => unresolved(&sh, UnresolvedReason::TimeLimit),
                };
            }
            // An exhausted or capped stage proves nothing: the next one goes on.
            StageEnd::Exhausted => last_exhausted = i + 1 == STAGES.len(),
            StageEnd::Capped => continue,
            StageEnd::MemoryLimit => out_of_memory = true,
            // The clock ran out in a later stage, but an earlier one gave up for memory: the
            // budget is what cut the search short (a finer stage only goes on where a coarser
            // one could not finish), so that is the reason the caller hears.
            StageEnd::Deadline if out_of_memory => {
                return unresolved(&sh, UnresolvedReason::MemoryLimit)
            }
            StageEnd::Deadline => return unresolved(&sh, UnresolvedReason::TimeLimit),
            StageEnd::Cancelled => return unresolved(&sh, UnresolvedReason::Cancelled),
        }
    }
    // The last stage, with every phase and the tick in the key, ran out of states to expand,
    // of its state count or of memory before the clock did.
    if out_of_memory {
        return unresolved(&sh, UnresolvedReason::MemoryLimit);
    }
    // Out of states before the clock: every run the search's holds make died. That proves
    // nothing (a hold of another length might live), and `time_limit` now would be said
    // early without a proof. The exact check (`exact`) follows every input tick by tick in
    // the time left: a proof when every run dies (the bird dies within a few ticks whatever
    // it does), or a win the holds missed; else the answer is `time_limit` at the clock,
    // whether its memory budget or the clock ended it (see below).
    if last_exhausted {
        // Three quarters of the budget: a margin for what its count leaves out (the allocator's
        // and the hash set's overheads: 562 MB resident for the whole 512 MiB counted on
        // `guest-start-in-crusher`).
        let budget = req
            .memory_budget_bytes
            .map(|b| b.saturating_sub(sh.fixed_bytes) / 4 * 3);
        let (fixed, expanded, deadline) = (sh.fixed_bytes, sh.expanded, sh.deadline);
        let mut last = Instant::now();
        // Reported like the search's progress (a worker watches its job's memory by it).
        let mut every = |states: u64, held: u64| {
            let now = Instant::now();
            if let Some(cb) = sh.progress {
                if now.duration_since(last) >= Duration::from_millis(100) {
                    last = now;
                    cb(&Progress {
                        expanded,
                        best_distance: sh.best_distance,
                        elapsed: now.duration_since(start),
                        stage: STAGES.len() - 1,
                        states,
                        bytes: fixed + held,
                        open: 0,
                    });
                }
            }
            req.cancel.load(Ordering::Relaxed) || now >= deadline
        };
        let mut peak = 0;
        let found = crate::exact::explore(req.map, req.seed, budget, &mut every, &mut peak);
        sh.peak_bytes = sh.peak_bytes.max(sh.fixed_bytes + peak);
        match found {
            crate::exact::Exact::AllDie if crate::exact::seed_free(req.map) => {
                let mut r = unresolved(&sh, UnresolvedReason::Unreachable);
                r.proof = Some(Proof::Exhaustive);
                r.best_distance = None;
                return r;
            }
            crate::exact::Exact::Won(steps) => {
                if let Some((replay, ticks)) = finish(req, steps) {
                    sh.best_distance = 0;
                    return report(&sh, PlanOutcome::Won { replay, ticks });
                }
            }
            // Undecided: every run dies for this seed, but the seed moves marmots, jackdaws or
            // rocks (not a proof for every replay); or the exact check ran out of its states
            // or its memory budget; or the clock or a cancel stopped it. Whichever of memory
            // and the clock ends it first depends on the machine's speed (10 s of 16 on an
            // idle machine for `guest-start-in-crusher`, all 16 on a busy one), so the answer
            // may not: it waits for the clock as any undecided search does and says
            // `time_limit`, on every machine (its memory is freed before).
            _ => {}
        }
        while !req.cancel.load(Ordering::Relaxed) && Instant::now() < sh.deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if req.cancel.load(Ordering::Relaxed) {
            return unresolved(&sh, UnresolvedReason::Cancelled);
        }
    }
    unresolved(&sh, UnresolvedReason::TimeLimit)
}
