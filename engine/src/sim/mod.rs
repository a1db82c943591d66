//! The simulation: one fixed tick at a time, integers only, no I/O, no clocks.
//!
//! Every file in this directory is hashed into `engineVersion` by `build.rs`, so anything that
//! can change the outcome of a run (physics, palette semantics, map-to-level building, the RNG,
//! the state hash layout) lives here and nothing else does.
//!
//! Order of one tick (FORMAT.md repeats it for authors):
//! 1. platforms move, then walkers, flyers and rock-fall spawners (in file order);
//! 2. the bird: ride along with its platform, walk, jump / egg boost / jump cut, gravity,
//!    move horizontally then vertically against tiles and platforms, springs;
//! 3. pebbles: fire (if shooting and the cooldown is over), then fly;
//! 4. crumbling ledges count down;
//! 5. hazards (fall out, spikes, enemies, rocks), then collectibles, checkpoints and the nest.

pub mod map;
pub mod palette;
pub mod physics;
pub mod rng;

use map::{Level, MARK_CHECKPOINT, MARK_COLLECTIBLE, MARK_NEST, MARK_SPIKES, NO_DYN};
use palette::Block;
use physics::*;
use rng::Rng;
use sha2::{Digest, Sha256};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Won,
    Dead,
}

/// The bird. Positions are the top-left of its 12 x 14 px hitbox in sub-units (1/256 px).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Player {
    pub x: i32,
    pub y: i32,
    pub vx: i32,
    pub vy: i32,
    pub on_ground: bool,
    /// Jump was held on the previous tick (a fresh press needs it released first).
    pub jump_held: bool,
    pub boost_available: bool,
    /// Rising from a jump, boost or stomp: releasing jump cuts the rise.
    pub rising: bool,
    pub coyote: u8,
    pub shoot_cooldown: u8,
    /// -1 left, 1 right: the direction pebbles fly.
    pub facing: i8,
    /// Index of the platform the bird stands on, or -1.
    pub riding: i16,
    /// The block under the bird's feet while on the ground (platforms count as grass).
    pub ground: Block,
    pub eggs: u16,
}

/// Decoded action index: `moveIndex * 4 + buttons` (see the contract's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// -1, 0 or 1.
    pub dir: i32,
    pub slow: bool,
    pub jump: bool,
    pub shoot: bool,
}

impl Input {
    /// Indices above 19 act as 4 (no input); `parse_replay` rejects them before they get here.
    pub fn from_action(action: u8) -> Input {
        const MOVES: [(i32, bool); 5] =
            [(-1, false), (0, false), (1, false), (-1, true), (1, true)];
        let a = if action > 19 { 4 } else { action };
        let (dir, slow) = MOVES[(a / 4) as usize];
        Input {
            dir,
            slow,
            jump: a % 4 == 1 || a % 4 == 3,
            shoot: a % 4 >= 2,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pebble {
    active: bool,
    x: i32,
    y: i32,
    vx: i32,
    life: u8,
}

const DYN_INTACT: u8 = 0;
const DYN_SHAKING: u8 = 1;
const DYN_GONE: u8 = 2;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct DynTile {
    state: u8,
    timer: u16,
}

/// `next` of an enemy that never needs an event: standing still (no range), or defeated.
const NEVER: u64 = u64::MAX;

/// `ceil(a / s)` for `s > 0`, and at least 1: the number of moves of `s` that cover `a`.
#[inline]
fn moves_to_cover(a: i64, s: i64) -> u64 {
    if a <= s {
        1
    } else {
        ((a + s - 1) / s) as u64
    }
}

// Enemies are simulated lazily. Between two *events* an enemy does nothing a rule can see:
// it counts down its pause, then moves by its speed each tick without reaching an end of its
// range or (walkers) a new tile column. So each enemy keeps its state as of an anchor tick
// (`at`, on the `clock`), derives its state at any later tick from that (`now`), and is
// stepped by the full rules only on the tick of its next event (`next`), where it is
// re-anchored. The results are the same as stepping every enemy on every tick: the rules run
// on every tick where they could do more than count down or move, in the same order
// (walkers, then flyers, in file order), so the random draws at turns come in the same order.
// An event computed too early would only cost time; one too late would change the run, so
// the event ticks are computed conservatively.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A walker's state together with a copy of its static definition, so the hot loops walk
/// one flat array. `x` and `wait` are as of clock tick `at` (see above).
struct Walker {
    x: i32,
    dir: i8,
    wait: u32,
    alive: bool,
    at: u64,
    next: u64,
    y: i32,
    min_x: i32,
    max_x: i32,
    speed: i32,
    pause: u32,
}

impl Walker {
    /// `x` and `wait` after clock tick `now` (not before `at`).
    #[inline]
    fn state(&self, now: u64) -> (i32, u32) {
        if self.next == NEVER {
            return (self.x, self.wait);
        }
        let e = now - self.at;
        if e <= self.wait as u64 {
            (self.x, self.wait - e as u32)
        } else {
            let moved = (e - self.wait as u64) as i64 * (self.dir as i64 * self.speed as i64);
            ((self.x as i64 + moved) as i32, 0)
        }
    }

    /// The current `x`.
    #[inline]
    fn x_at(&self, now: u64) -> i32 {
        self.state(now).0
    }

    /// Fixes the state as of `now` (the anchor) and computes the next event.
    fn anchor(&mut self, level: &Level, now: u64, x: i32, wait: u32) {
        self.x = x;
        self.wait = wait;
        self.at = now;
        if !self.alive || self.min_x == self.max_x {
            self.next = NEVER;
            return;
        }
        // The j-th move (j >= 1) happens on tick `now + wait + j`, from x + (j - 1) * v. The
        // event is the first move that reaches an end of the range or brings the front edge
        // into a new column whose terrain check could turn the walker: columns that let it
        // pass by tiles that never change need no event.
        let row = self.y >> TILE_SHIFT;
        let (x, s) = (x as i64, self.speed as i64);
        let (min_x, max_x) = (self.min_x as i64, self.max_x as i64);
        let j = if s <= 0 || self.dir == 0 {
            1 // not a real walker (the parser never makes one): the full rules every tick
        } else if self.dir > 0 {
            if x + s <= min_x {
                1
            } else {
                let clamp = moves_to_cover(max_x - x, s);
                let front = x + WALKER_W as i64 - 1;
                let mut col = front >> TILE_SHIFT;
                loop {
                    col += 1;
                    // The first move whose front edge is in column `col` or beyond.
                    let j = moves_to_cover((col << TILE_SHIFT) - front, s);
                    if j >= clamp {
                        break clamp;
                    }
                    if walker_passes(level, col, row) != Some(true) {
                        break j;
                    }
                }
            }
        } else if x - s >= max_x {
            1
        } else {
            let clamp = moves_to_cover(x - min_x, s);
            let mut col = x >> TILE_SHIFT;
            loop {
                // The first move whose front edge is left of column `col`.
                let j = moves_to_cover(x - (col << TILE_SHIFT) + 1, s);
                col -= 1;
                if j >= clamp {
                    break clamp;
                }
                if walker_passes(level, col, row) != Some(true) {
                    break j;
                }
            }
        };
        self.next = now + wait as u64 + j;
    }

    /// Defeated on tick `now`: the state freezes as it is.
    fn defeat(&mut self, now: u64) {
        let (x, wait) = self.state(now);
        self.x = x;
        self.wait = wait;
        self.at = now;
        self.alive = false;
        self.next = NEVER;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// A flyer's state with a copy of its definition. `x`, `y` is its top-left as of clock tick
/// `at` (see above); `wait` too.
struct Flyer {
    x: i32,
    y: i32,
    dir: i8,
    wait: u32,
    alive: bool,
    vertical: bool,
    at: u64,
    next: u64,
    min: i32,
    max: i32,
    speed: i32,
    pause: u32,
}

impl Flyer {
    /// The coordinate along its axis as of `at`.
    #[inline]
    fn pos(&self) -> i32 {
        if self.vertical {
            self.y
        } else {
            self.x
        }
    }

    /// The coordinate along its axis and `wait` after clock tick `now` (not before `at`).
    #[inline]
    fn state(&self, now: u64) -> (i32, u32) {
        if self.next == NEVER {
            return (self.pos(), self.wait);
        }
        let e = now - self.at;
        if e <= self.wait as u64 {
            (self.pos(), self.wait - e as u32)
        } else {
            let moved = (e - self.wait as u64) as i64 * (self.dir as i64 * self.speed as i64);
            ((self.pos() as i64 + moved) as i32, 0)
        }
    }

    /// The current top-left.
    #[inline]
    fn xy_at(&self, now: u64) -> (i32, i32) {
        let (pos, _) = self.state(now);
        if self.vertical {
            (self.x, pos)
        } else {
            (pos, self.y)
        }
    }

    /// Fixes the state as of `now` (the anchor) and computes the next event.
    fn anchor(&mut self, now: u64, pos: i32, wait: u32) {
        if self.vertical {
            self.y = pos;
        } else {
            self.x = pos;
        }
        self.wait = wait;
        self.at = now;
        if !self.alive || self.min == self.max {
            self.next = NEVER;
            return;
        }
        // The j-th move happens on tick `now + wait + j`; the event is the first move that
        // reaches an end of the range.
        let (p, s) = (pos as i64, self.speed as i64);
        let (min, max) = (self.min as i64, self.max as i64);
        let j = if s <= 0 || self.dir == 0 {
            1 // not a real flyer (the parser never makes one): the full rules every tick
        } else if self.dir > 0 {
            if p + s <= min {
                1
            } else {
                moves_to_cover(max - p, s)
            }
        } else if p - s >= max {
            1
        } else {
            moves_to_cover(p - min, s)
        };
        self.next = now + wait as u64 + j;
    }

    /// Defeated on tick `now`: the state freezes as it is.
    fn defeat(&mut self, now: u64) {
        let (pos, wait) = self.state(now);
        self.alive = false;
        self.anchor(now, pos, wait);
    }
}

/// Whether a walker in tile row `row` whose front edge enters column `col` walks on (the
/// check in `update_enemies`), when only tiles that never change decide it; `None` when a
/// cracked or crumbling tile takes part (the check must then run on its tick).
fn walker_passes(level: &Level, col: i64, row: i32) -> Option<bool> {
    if col < 0 || col >= level.width as i64 {
        return Some(false);
    }
    let tile = |ty: i32| {
        if ty < 0 || ty >= level.height {
            Some(Block::Empty)
        } else {
            match level
                .tiles
                .get((ty as i64 * level.width as i64 + col) as usize)
            {
                Some(Block::Cracked | Block::Crumbling) | None => None,
                Some(&b) => Some(b),
            }
        }
    };
    let ahead = tile(row)?;
    let below = tile(row + 1)?;
    Some(!ahead.is_solid() && (below.is_solid() || below.is_one_way()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Platform {
    p: i32,
    dir: i8,
    x: i32,
    y: i32,
    dx: i32,
    dy: i32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Rock {
    active: bool,
    x: i32,
    y: i32,
    vy: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Spawner {
    timer: u32,
    rocks: [Rock; ROCKS_PER_SPAWNER],
}

/// A running game. Cloning copies a few small vectors; `step` never allocates.
#[derive(Clone, Debug)]
pub struct Sim {
    level: Arc<Level>,
    /// Ticks simulated (`tick` is this as a u32); the enemies' anchors and events count on it.
    clock: u64,
    /// The earliest `next` of any enemy: before it, the enemies need no work.
    next_enemy: u64,
    status: Status,
    rng: Rng,
    player: Player,
    pebbles: [Pebble; MAX_PEBBLES],
    dyn_tiles: Vec<DynTile>,
    shaking: u32,
    walkers: Vec<Walker>,
    flyers: Vec<Flyer>,
    platforms: Vec<Platform>,
    spawners: Vec<Spawner>,
    taken: Vec<bool>,
    collected: u16,
    checkpoint: i16,
}

#[inline]
#[allow(clippy::too_many_arguments)]
fn overlap(ax: i32, ay: i32, aw: i32, ah: i32, bx: i32, by: i32, bw: i32, bh: i32) -> bool {
    // Non-short-circuit `&`: four compares without branches are cheaper than mispredictions
    // when 16 enemies are tested every tick.
    (ax < bx + bw) & (bx < ax + aw) & (ay < by + bh) & (by < ay + ah)
}

// `Level::enemies_near` serves boxes at most one tile wide.
const _: () = assert!(PLAYER_W <= TILE && PEBBLE_SIZE <= TILE);

/// The block at tile (tx, ty) given the dynamic tile states (see `Sim::block_at`).
#[inline]
fn block_in(l: &Level, dyn_tiles: &[DynTile], tx: i32, ty: i32) -> Block {
    if tx < 0 || ty < 0 || tx >= l.width || ty >= l.height {
        return Block::Empty;
    }
    let i = (ty * l.width + tx) as usize;
    let Some(&b) = l.tiles.get(i) else {
        return Block::Empty;
    };
    if matches!(b, Block::Cracked | Block::Crumbling) {
        let d = l.dyn_index.get(i).copied().unwrap_or(NO_DYN);
        if d != NO_DYN
            && dyn_tiles
                .get(d as usize)
                .is_some_and(|t| t.state == DYN_GONE)
        {
            return Block::Empty;
        }
    }
    b
}

impl Sim {
    pub fn new(map: &map::Map, seed: u32) -> Sim {
        let level = map.level().clone();
        let mut rng = Rng::new(seed);
        let (sx, sy) = level.start;
        let player = Player {
            x: sx * TILE + (TILE - PLAYER_W) / 2,
            y: sy * TILE + TILE - PLAYER_H,
            vx: 0,
            vy: 0,
            on_ground: false,
            jump_held: false,
            boost_available: true,
            rising: false,
            coyote: 0,
            shoot_cooldown: 0,
            facing: 1,
            riding: -1,
            ground: Block::Empty,
            eggs: 0,
        };
        let walkers: Vec<Walker> = level
            .walkers
            .iter()
            .map(|w| {
                let mut s = Walker {
                    x: w.x0,
                    dir: w.dir,
                    wait: 0,
                    alive: true,
                    at: 0,
                    next: NEVER,
                    y: w.y,
                    min_x: w.min_x,
                    max_x: w.max_x,
                    speed: w.speed,
                    pause: w.pause,
                };
                s.anchor(&level, 0, w.x0, 0);
                s
            })
            .collect();
        let flyers: Vec<Flyer> = level
            .flyers
            .iter()
            .map(|f| {
                let mut s = Flyer {
                    x: f.x0,
                    y: f.y0,
                    dir: if f.vertical { -1 } else { 1 },
                    wait: 0,
                    alive: true,
                    vertical: f.vertical,
                    at: 0,
                    next: NEVER,
                    min: f.min,
                    max: f.max,
                    speed: f.speed,
                    pause: f.pause,
                };
                s.anchor(0, if f.vertical { f.y0 } else { f.x0 }, 0);
                s
            })
            .collect();
        let next_enemy = walkers
            .iter()
            .map(|w| w.next)
            .chain(flyers.iter().map(|f| f.next))
            .min()
            .unwrap_or(NEVER);
        let platforms = level
            .platforms
            .iter()
            .map(|p| Platform {
                p: 0,
                dir: 1,
                x: p.x0,
                y: p.y0,
                dx: 0,
                dy: 0,
            })
            .collect();
        // Spawner timers draw from the RNG in file order at creation.
        let spawners = level
            .spawners
            .iter()
            .map(|s| Spawner {
                timer: s.offset + rng.upto(s.jitter),
                rocks: [Rock::default(); ROCKS_PER_SPAWNER],
            })
            .collect();
        Sim {
            dyn_tiles: vec![DynTile::default(); level.dyn_tiles.len()],
            taken: vec![false; level.collectibles.len()],
            level,
            clock: 0,
            next_enemy,
            status: Status::Running,
            rng,
            player,
            pebbles: [Pebble::default(); MAX_PEBBLES],
            shaking: 0,
            walkers,
            flyers,
            platforms,
            spawners,
            collected: 0,
            checkpoint: -1,
        }
    }

    pub fn status(&self) -> Status {
        self.status
    }
    /// Ticks simulated so far.
    pub fn tick(&self) -> u32 {
        self.clock as u32
    }
    pub fn player(&self) -> &Player {
        &self.player
    }
    pub fn width(&self) -> i32 {
        self.level.width
    }
    pub fn height(&self) -> i32 {
        self.level.height
    }
    pub fn collected(&self) -> u16 {
        self.collected
    }
    /// Index (among checkpoints, file order) of the last checkpoint touched, or -1.
    pub fn checkpoint(&self) -> i16 {
        self.checkpoint
    }
    /// Positions (top-left, sub-units) of the enemies still alive: walkers then flyers.
    pub fn enemies(&self) -> impl Iterator<Item = (i32, i32)> + '_ {
        let now = self.clock;
        let w = self
            .walkers
            .iter()
            .filter(|s| s.alive)
            .map(move |s| (s.x_at(now), s.y));
        let f = self
            .flyers
            .iter()
            .filter(|s| s.alive)
            .map(move |s| s.xy_at(now));
        w.chain(f)
    }

    /// The block at tile (tx, ty) now: broken cracked rock and fallen crumbling ledges read as
    /// empty. Outside the grid: empty (the walls at the sides are handled by `solid`).
    #[inline]
    pub fn block_at(&self, tx: i32, ty: i32) -> Block {
        block_in(&self.level, &self.dyn_tiles, tx, ty)
    }

    /// Solid for the bird: solid blocks, and the left and right edges of the map.
    #[inline]
    fn solid(&self, tx: i32, ty: i32) -> bool {
        if tx < 0 || tx >= self.level.width {
            return true;
        }
        self.block_at(tx, ty).is_solid()
    }

    #[inline]
    fn supports(&self, tx: i32, ty: i32) -> bool {
        let b = self.block_at(tx, ty);
        b.is_solid() || b.is_one_way()
    }

    /// Advances one tick. Does nothing once the run is won or lost.
    pub fn step(&mut self, action: u8) {
        if self.status != Status::Running {
            return;
        }
        let input = Input::from_action(action);
        self.clock += 1;
        if !self.platforms.is_empty() {
            self.update_platforms();
        }
        if self.clock >= self.next_enemy {
            self.update_enemies();
        }
        if !self.spawners.is_empty() {
            self.update_spawners();
        }
        self.update_player(input);
        self.update_pebbles(input.shoot);
        self.update_crumbling();
        self.resolve_contacts();
    }

    fn update_platforms(&mut self) {
        let level = &*self.level;
        for (s, d) in self.platforms.iter_mut().zip(level.platforms.iter()) {
            if d.length == 0 {
                s.dx = 0;
                s.dy = 0;
                continue;
            }
            s.p += s.dir as i32 * d.speed;
            if s.p >= d.length {
                s.p = d.length;
                s.dir = -1;
            } else if s.p <= 0 {
                s.p = 0;
                s.dir = 1;
            }
            let nx = d.x0 + (d.dx as i64 * s.p as i64 / d.length as i64) as i32;
            let ny = d.y0 + (d.dy as i64 * s.p as i64 / d.length as i64) as i32;
            s.dx = nx - s.x;
            s.dy = ny - s.y;
            s.x = nx;
            s.y = ny;
        }
    }

    /// Steps, by the full rules, the walkers and then the flyers whose event is due this tick
    /// (see `Walker`), and finds the next event.
    fn update_enemies(&mut self) {
        let now = self.clock;
        let level = &*self.level;
        let dyn_tiles = &self.dyn_tiles[..];
        let rng = &mut self.rng;
        let mut next = NEVER;
        for w in self.walkers.iter_mut() {
            debug_assert!(w.next >= now, "missed a walker event");
            if w.next <= now {
                // Alive and with a range (else `next` is NEVER): the rules of one tick.
                let (x, mut wait) = w.state(now - 1);
                let mut x = x;
                if wait > 0 {
                    wait -= 1;
                } else {
                    let mut nx = x + w.dir as i32 * w.speed;
                    let mut turn = false;
                    if nx <= w.min_x {
                        nx = w.min_x;
                        turn = true;
                    } else if nx >= w.max_x {
                        nx = w.max_x;
                        turn = true;
                    }
                    // The terrain ahead is checked when the front edge enters a new column:
                    // within a column nothing changes for a walker.
                    let front = if w.dir > 0 { nx + WALKER_W - 1 } else { nx };
                    let old_front = if w.dir > 0 { x + WALKER_W - 1 } else { x };
                    let ftx = front >> TILE_SHIFT;
                    if ftx != old_front >> TILE_SHIFT {
                        let row = w.y >> TILE_SHIFT;
                        let ahead = block_in(level, dyn_tiles, ftx, row);
                        let below = block_in(level, dyn_tiles, ftx, row + 1);
                        let wall = ftx < 0 || ftx >= level.width || ahead.is_solid();
                        if wall || !(below.is_solid() || below.is_one_way()) {
                            nx = x;
                            turn = true;
                        }
                    }
                    x = nx;
                    if turn {
                        w.dir = -w.dir;
                        wait = rng.upto(w.pause);
                    }
                }
                w.anchor(level, now, x, wait);
            }
            next = next.min(w.next);
        }
        for f in self.flyers.iter_mut() {
            debug_assert!(f.next >= now, "missed a flyer event");
            if f.next <= now {
                let (pos, mut wait) = f.state(now - 1);
                let mut pos = pos;
                if wait > 0 {
                    wait -= 1;
                } else {
                    pos += f.dir as i32 * f.speed;
                    if pos >= f.max {
                        pos = f.max;
                        f.dir = -1;
                        wait = rng.upto(f.pause);
                    } else if pos <= f.min {
                        pos = f.min;
                        f.dir = 1;
                        wait = rng.upto(f.pause);
                    }
                }
                f.anchor(now, pos, wait);
            }
            next = next.min(f.next);
        }
        self.next_enemy = next;
    }

    fn update_spawners(&mut self) {
        let height = self.level.height * TILE;
        for i in 0..self.spawners.len() {
            let d = self.level.spawners[i];
            // Rocks first, so a rock spawned this tick starts falling next tick.
            for r in 0..ROCKS_PER_SPAWNER {
                let mut rock = self.spawners[i].rocks[r];
                if !rock.active {
                    continue;
                }
                rock.vy = (rock.vy + GRAVITY).min(ROCK_MAX_FALL);
                rock.y += rock.vy;
                let cx = (rock.x + ROCK_SIZE / 2) >> TILE_SHIFT;
                let by = (rock.y + ROCK_SIZE - 1) >> TILE_SHIFT;
                if rock.y >= height || self.supports(cx, by) {
                    rock.active = false;
                }
                self.spawners[i].rocks[r] = rock;
            }
            if self.spawners[i].timer <= 1 {
                let wait = d.interval + self.rng.upto(d.jitter);
                let s = &mut self.spawners[i];
                s.timer = wait;
                if let Some(slot) = s.rocks.iter_mut().find(|r| !r.active) {
                    *slot = Rock {
                        active: true,
                        x: d.x - 512 + 2 * SUB,
                        y: d.y - 512 + 2 * SUB,
                        vy: 0,
                    };
                }
            } else {
                self.spawners[i].timer -= 1;
            }
        }
    }

    fn update_player(&mut self, input: Input) {
        // Ride along with the platform stood on last tick.
        if self.player.riding >= 0 {
            if let Some(pl) = self.platforms.get(self.player.riding as usize).copied() {
                self.move_x(pl.dx);
                self.move_y_carry(pl.dy);
            }
        }
        let p = &mut self.player;
        if p.shoot_cooldown > 0 {
            p.shoot_cooldown -= 1;
        }
        if p.on_ground {
            p.coyote = COYOTE_TICKS;
        } else if p.coyote > 0 {
            p.coyote -= 1;
        }

        // Walking.
        let mut target = input.dir * if input.slow { SLOW_SPEED } else { RUN_SPEED };
        if p.on_ground && p.ground == Block::Snow {
            target /= SNOW_DIVISOR;
        }
        if input.dir != 0 {
            p.facing = input.dir as i8;
        }
        let (acc, dec) = if !p.on_ground {
            (AIR_ACCEL, AIR_DECEL)
        } else if p.ground == Block::Ice {
            (ICE_ACCEL, ICE_DECEL)
        } else {
            (GROUND_ACCEL, GROUND_DECEL)
        };
        if target > p.vx {
            let rate = if p.vx >= 0 { acc } else { dec };
            p.vx = (p.vx + rate).min(target);
        } else if target < p.vx {
            let rate = if p.vx <= 0 { acc } else { dec };
            p.vx = (p.vx - rate).max(target);
        }

        // Jumping: a fresh press jumps from the ground (or just after leaving it), or lays the
        // egg boost in the air once per landing. Holding repeats nothing.
        let fresh = input.jump && !p.jump_held;
        if fresh {
            if p.on_ground || p.coyote > 0 {
                p.vy = -JUMP_SPEED;
                p.rising = true;
                p.coyote = 0;
                p.on_ground = false;
            } else if p.boost_available {
                p.vy = -BOOST_SPEED;
                p.rising = true;
                p.boost_available = false;
                p.eggs = p.eggs.saturating_add(1);
            }
        }
        if !input.jump && p.rising && p.vy < -JUMP_CUT {
            p.vy = -JUMP_CUT;
        }
        p.jump_held = input.jump;
        p.vy = (p.vy + GRAVITY).min(MAX_FALL);
        if p.vy >= 0 {
            p.rising = false;
        }

        let (vx, vy) = (p.vx, p.vy);
        p.on_ground = false;
        p.riding = -1;
        self.move_x(vx);
        self.move_y(vy);

        let p = &mut self.player;
        if p.on_ground {
            p.boost_available = true;
            p.rising = false;
        }

        // Springs launch a bird that is not rising.
        if self.player.vy >= 0 {
            let (px, py) = (self.player.x, self.player.y);
            for s in self.level.springs.iter() {
                if overlap(
                    px,
                    py,
                    PLAYER_W,
                    PLAYER_H,
                    s.x + 2 * SUB,
                    s.y + 8 * SUB,
                    12 * SUB,
                    8 * SUB,
                ) {
                    let p = &mut self.player;
                    p.vy = -s.launch_speed;
                    p.on_ground = false;
                    p.rising = false;
                    p.coyote = 0;
                    p.riding = -1;
                    p.boost_available = true;
                    break;
                }
            }
        }
    }

    #[inline]
    fn move_x(&mut self, dx: i32) {
        if dx == 0 {
            return;
        }
        // The common case inline: the leading edge stays in its column (see below).
        let x = self.player.x;
        let nx = x + dx;
        let (lead_old, lead_new) = if dx > 0 {
            (x + PLAYER_W - 1, nx + PLAYER_W - 1)
        } else {
            (x, nx)
        };
        if lead_old >> TILE_SHIFT == lead_new >> TILE_SHIFT {
            self.player.x = nx;
            return;
        }
        self.move_x_full(dx);
    }

    #[inline(never)]
    fn move_x_full(&mut self, dx: i32) {
        let p = self.player;
        let mut nx = p.x + dx;
        // The bird never overlaps a solid tile, so a leading edge that stays in a column the
        // bird already covers cannot hit anything.
        let (lead_old, lead_new) = if dx > 0 {
            (p.x + PLAYER_W - 1, nx + PLAYER_W - 1)
        } else {
            (p.x, nx)
        };
        if lead_old >> TILE_SHIFT == lead_new >> TILE_SHIFT {
            self.player.x = nx;
            return;
        }
        let top = p.y >> TILE_SHIFT;
        let bot = (p.y + PLAYER_H - 1) >> TILE_SHIFT;
        let blocked;
        if dx > 0 {
            let tx = (nx + PLAYER_W - 1) >> TILE_SHIFT;
            blocked = (top..bot + 1).any(|ty| self.solid(tx, ty));
            if blocked {
                nx = (tx << TILE_SHIFT) - PLAYER_W;
            }
        } else {
            let tx = nx >> TILE_SHIFT;
            blocked = (top..bot + 1).any(|ty| self.solid(tx, ty));
            if blocked {
                nx = (tx + 1) << TILE_SHIFT;
            }
        }
        self.player.x = nx;
        if blocked {
            self.player.vx = 0;
        }
    }

    /// Vertical carry by a platform: blocked by solid tiles, never lands or triggers anything.
    fn move_y_carry(&mut self, dy: i32) {
        if dy == 0 {
            return;
        }
        let p = self.player;
        let l = p.x >> TILE_SHIFT;
        let r = (p.x + PLAYER_W - 1) >> TILE_SHIFT;
        let mut ny = p.y + dy;
        if dy < 0 {
            let ty = ny >> TILE_SHIFT;
            if (l..r + 1).any(|tx| self.solid(tx, ty)) {
                ny = (ty + 1) << TILE_SHIFT;
            }
        } else {
            let ty = (ny + PLAYER_H - 1) >> TILE_SHIFT;
            if (l..r + 1).any(|tx| self.solid(tx, ty)) {
                ny = (ty << TILE_SHIFT) - PLAYER_H;
            }
        }
        self.player.y = ny;
    }

    fn move_y(&mut self, dy: i32) {
        let p = self.player;
        let l = p.x >> TILE_SHIFT;
        let r = (p.x + PLAYER_W - 1) >> TILE_SHIFT;
        let mut ny = p.y + dy;
        if dy < 0 {
            let ty = ny >> TILE_SHIFT;
            if (l..r + 1).any(|tx| self.solid(tx, ty)) {
                ny = (ty + 1) << TILE_SHIFT;
                self.player.vy = 0;
                self.player.rising = false;
            }
            self.player.y = ny;
            return;
        }
        if dy == 0 {
            return;
        }
        let old_bottom = p.y + PLAYER_H;
        let ty = (ny + PLAYER_H - 1) >> TILE_SHIFT;
        let tile_top = ty << TILE_SHIFT;
        let mut land_y: Option<i32> = None;
        let mut ground = Block::Empty;
        let cx = (p.x + PLAYER_W / 2) >> TILE_SHIFT;
        for tx in l..r + 1 {
            let b = self.block_at(tx, ty);
            if b.is_solid() || (b.is_one_way() && old_bottom <= tile_top) {
                land_y = Some(tile_top - PLAYER_H);
                if ground == Block::Empty || tx == cx {
                    ground = b;
                }
            }
        }
        let mut riding = -1i16;
        for (i, pl) in self.platforms.iter().enumerate() {
            let d = &self.level.platforms[i];
            if p.x + PLAYER_W > pl.x
                && p.x < pl.x + d.width
                && old_bottom <= pl.y + pl.dy.abs()
                && ny + PLAYER_H >= pl.y
            {
                let y = pl.y - PLAYER_H;
                if land_y.is_none_or(|ly| y < ly) {
                    land_y = Some(y);
                    riding = i as i16;
                    ground = Block::Grass;
                }
            }
        }
        match land_y {
            Some(y) => {
                self.player.y = y;
                self.player.vy = 0;
                self.player.on_ground = true;
                self.player.riding = riding;
                self.player.ground = ground;
                if riding < 0 && self.level.has_crumbling {
                    self.trigger_crumbling(l, r, ty, old_bottom <= tile_top);
                }
            }
            None => self.player.y = ny,
        }
    }

    fn trigger_crumbling(&mut self, l: i32, r: i32, ty: i32, from_above: bool) {
        let level = &*self.level;
        if !from_above || !level.has_crumbling {
            return;
        }
        for tx in l..r + 1 {
            if tx < 0 || tx >= level.width || ty < 0 || ty >= level.height {
                continue;
            }
            let i = (ty * level.width + tx) as usize;
            if level.tiles[i] != Block::Crumbling {
                continue;
            }
            let d = level.dyn_index[i];
            if d == NO_DYN {
                continue;
            }
            let t = &mut self.dyn_tiles[d as usize];
            if t.state == DYN_INTACT {
                t.state = DYN_SHAKING;
                t.timer = level.crumble_delay;
                self.shaking += 1;
            }
        }
    }

    fn update_crumbling(&mut self) {
        if self.shaking == 0 {
            return;
        }
        for t in self.dyn_tiles.iter_mut() {
            if t.state == DYN_SHAKING {
                t.timer = t.timer.saturating_sub(1);
                if t.timer == 0 {
                    t.state = DYN_GONE;
                    self.shaking -= 1;
                }
            }
        }
    }

    fn update_pebbles(&mut self, shoot: bool) {
        let p = self.player;
        if shoot && p.shoot_cooldown == 0 {
            if let Some(slot) = self.pebbles.iter_mut().find(|b| !b.active) {
                let facing = if p.facing < 0 { -1 } else { 1 };
                *slot = Pebble {
                    active: true,
                    x: if facing > 0 {
                        p.x + PLAYER_W
                    } else {
                        p.x - PEBBLE_SIZE
                    },
                    y: p.y + 4 * SUB,
                    vx: facing * PEBBLE_SPEED,
                    life: PEBBLE_LIFETIME,
                };
                self.player.shoot_cooldown = SHOOT_COOLDOWN;
            }
        }
        // Most ticks have no pebble in flight: skip the loop's set-up then.
        if self.pebbles.iter().all(|b| !b.active) {
            return;
        }
        for i in 0..MAX_PEBBLES {
            let mut b = self.pebbles[i];
            if !b.active {
                continue;
            }
            b.x += b.vx;
            b.life = b.life.saturating_sub(1);
            let lead = if b.vx > 0 { b.x + PEBBLE_SIZE - 1 } else { b.x };
            let tx = lead >> TILE_SHIFT;
            let ty = (b.y + PEBBLE_SIZE / 2) >> TILE_SHIFT;
            if b.life == 0 || tx < 0 || tx >= self.level.width {
                b.active = false;
            } else if self.block_at(tx, ty).is_solid() {
                b.active = false;
                if self.block_at(tx, ty) == Block::Cracked {
                    let idx = (ty * self.level.width + tx) as usize;
                    let d = self.level.dyn_index[idx];
                    if d != NO_DYN {
                        self.dyn_tiles[d as usize].state = DYN_GONE;
                    }
                }
            } else {
                b.active = !self.pebble_hits(b.x, b.y);
            }
            self.pebbles[i] = b;
        }
    }

    /// Defeats the first enemy or rock the pebble touches; true if it hit something.
    fn pebble_hits(&mut self, x: i32, y: i32) -> bool {
        // Only the enemies whose patrol reaches the pebble's columns, in the same order as a
        // scan of all of them (walkers, then flyers).
        let nw = self.walkers.len();
        let now = self.clock;
        for &e in self.level.enemies_near(x) {
            let e = e as usize;
            if e < nw {
                if let Some(w) = self.walkers.get_mut(e) {
                    if w.alive
                        && overlap(
                            x,
                            y,
                            PEBBLE_SIZE,
                            PEBBLE_SIZE,
                            w.x_at(now),
                            w.y,
                            WALKER_W,
                            WALKER_H,
                        )
                    {
                        w.defeat(now);
                        return true;
                    }
                }
            } else if let Some(f) = self.flyers.get_mut(e - nw) {
                if f.alive {
                    let (fx, fy) = f.xy_at(now);
                    if overlap(
                        x,
                        y,
                        PEBBLE_SIZE,
                        PEBBLE_SIZE,
                        fx,
                        fy,
                        FLYER_SIZE,
                        FLYER_SIZE,
                    ) {
                        f.defeat(now);
                        return true;
                    }
                }
            }
        }
        for s in self.spawners.iter_mut() {
            for r in s.rocks.iter_mut() {
                if r.active
                    && overlap(
                        x,
                        y,
                        PEBBLE_SIZE,
                        PEBBLE_SIZE,
                        r.x,
                        r.y,
                        ROCK_SIZE,
                        ROCK_SIZE,
                    )
                {
                    r.active = false;
                    return true;
                }
            }
        }
        false
    }

    fn die(&mut self) {
        self.status = Status::Dead;
    }

    fn resolve_contacts(&mut self) {
        let p = self.player;
        let level = &*self.level;
        if p.y >= level.height * TILE {
            return self.die();
        }
        // What the bird's tiles hold: spikes, collectibles, checkpoints and nests elsewhere
        // cannot touch it, so their tests are skipped.
        let marks = level.marks_under(p.x, p.y, PLAYER_W, PLAYER_H);
        let l = p.x >> TILE_SHIFT;
        let r = (p.x + PLAYER_W - 1) >> TILE_SHIFT;
        let t = p.y >> TILE_SHIFT;
        let b = (p.y + PLAYER_H - 1) >> TILE_SHIFT;
        if marks & MARK_SPIKES != 0 {
            for ty in t..b + 1 {
                for tx in l..r + 1 {
                    if self.block_at(tx, ty) == Block::Spikes
                        && overlap(
                            p.x,
                            p.y,
                            PLAYER_W,
                            PLAYER_H,
                            (tx << TILE_SHIFT) + 2 * SUB,
                            (ty << TILE_SHIFT) + 6 * SUB,
                            12 * SUB,
                            10 * SUB,
                        )
                    {
                        return self.die();
                    }
                }
            }
        }
        // The bird's feet before this tick's fall: a stomp needs them above the enemy's top.
        let prev_bottom = p.y + PLAYER_H - p.vy.max(0);
        let mut stomped = false;
        // Only the enemies whose patrol reaches the bird's columns, in the same order as a
        // scan of all of them (walkers, then flyers).
        let nw = self.walkers.len();
        let now = self.clock;
        for &e in level.enemies_near(p.x) {
            let e = e as usize;
            let (ex, ey, ew, eh, alive) = if e < nw {
                match self.walkers.get(e) {
                    // A walker keeps its row: when that misses the bird, so does the walker
                    // (its x is then not needed).
                    Some(w) if !(p.y < w.y + WALKER_H && w.y < p.y + PLAYER_H) => continue,
                    Some(w) => (w.x_at(now), w.y, WALKER_W, WALKER_H, w.alive),
                    None => continue,
                }
            } else {
                match self.flyers.get(e - nw) {
                    Some(f) => {
                        let (fx, fy) = f.xy_at(now);
                        (fx, fy, FLYER_SIZE, FLYER_SIZE, f.alive)
                    }
                    None => continue,
                }
            };
            if alive && overlap(p.x, p.y, PLAYER_W, PLAYER_H, ex, ey, ew, eh) {
                if p.vy > 0 && prev_bottom <= ey + STOMP_TOLERANCE {
                    if e < nw {
                        self.walkers[e].defeat(now);
                    } else {
                        self.flyers[e - nw].defeat(now);
                    }
                    stomped = true;
                } else {
                    self.status = Status::Dead;
                    return;
                }
            }
        }
        for s in self.spawners.iter() {
            for rk in s.rocks.iter() {
                if rk.active
                    && overlap(
                        p.x, p.y, PLAYER_W, PLAYER_H, rk.x, rk.y, ROCK_SIZE, ROCK_SIZE,
                    )
                {
                    return self.die();
                }
            }
        }
        if stomped {
            let p = &mut self.player;
            p.vy = -STOMP_BOUNCE;
            p.rising = true;
            p.boost_available = true;
            p.on_ground = false;
            p.coyote = 0;
            p.riding = -1;
        }
        let none: &[(i32, i32)] = &[];
        let collectibles = if marks & MARK_COLLECTIBLE != 0 {
            &level.collectibles[..]
        } else {
            none
        };
        for (i, &(cx, cy)) in collectibles.iter().enumerate() {
            if !self.taken[i]
                && overlap(
                    p.x,
                    p.y,
                    PLAYER_W,
                    PLAYER_H,
                    cx * TILE + 2 * SUB,
                    cy * TILE + 2 * SUB,
                    12 * SUB,
                    12 * SUB,
                )
            {
                self.taken[i] = true;
                self.collected = self.collected.saturating_add(1);
            }
        }
        let checkpoints = if marks & MARK_CHECKPOINT != 0 {
            &level.checkpoints[..]
        } else {
            none
        };
        for (i, &(cx, cy)) in checkpoints.iter().enumerate() {
            if overlap(
                p.x,
                p.y,
                PLAYER_W,
                PLAYER_H,
                cx * TILE,
                cy * TILE,
                TILE,
                TILE,
            ) {
                self.checkpoint = i as i16;
            }
        }
        let nests = if marks & MARK_NEST != 0 {
            &level.nests[..]
        } else {
            none
        };
        for &(nx, ny) in nests.iter() {
            if overlap(
                p.x,
                p.y,
                PLAYER_W,
                PLAYER_H,
                nx * TILE,
                ny * TILE,
                TILE,
                TILE,
            ) {
                self.status = Status::Won;
                return;
            }
        }
    }

    /// The whole state in a fixed little-endian layout (FORMAT.md, "State hash").
    pub fn state_bytes(&self, out: &mut Vec<u8>) {
        fn b(out: &mut Vec<u8>, v: bool) {
            out.push(v as u8);
        }
        fn i(out: &mut Vec<u8>, v: i32) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        fn u(out: &mut Vec<u8>, v: u32) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(b"GCVS\x01");
        u(out, self.clock as u32);
        out.push(match self.status {
            Status::Running => 0,
            Status::Won => 1,
            Status::Dead => 2,
        });
        out.extend_from_slice(&self.rng.state.to_le_bytes());
        let p = &self.player;
        for v in [p.x, p.y, p.vx, p.vy] {
            i(out, v);
        }
        for v in [p.on_ground, p.jump_held, p.boost_available, p.rising] {
            b(out, v);
        }
        out.extend_from_slice(&[p.coyote, p.shoot_cooldown, p.facing as u8]);
        out.extend_from_slice(&p.riding.to_le_bytes());
        out.push(p.ground as u8);
        out.extend_from_slice(&p.eggs.to_le_bytes());
        for pb in &self.pebbles {
            b(out, pb.active);
            for v in [pb.x, pb.y, pb.vx] {
                i(out, v);
            }
            out.push(pb.life);
        }
        u(out, self.dyn_tiles.len() as u32);
        for t in &self.dyn_tiles {
            out.push(t.state);
            out.extend_from_slice(&t.timer.to_le_bytes());
        }
        u(out, self.walkers.len() as u32);
        for w in &self.walkers {
            let (x, wait) = w.state(self.clock);
            i(out, x);
            out.push(w.dir as u8);
            u(out, wait);
            b(out, w.alive);
        }
        u(out, self.flyers.len() as u32);
        for f in &self.flyers {
            let (pos, wait) = f.state(self.clock);
            i(out, pos);
            out.push(f.dir as u8);
            u(out, wait);
            b(out, f.alive);
        }
        u(out, self.platforms.len() as u32);
        for pl in &self.platforms {
            i(out, pl.p);
            out.push(pl.dir as u8);
            for v in [pl.x, pl.y, pl.dx, pl.dy] {
                i(out, v);
            }
        }
        u(out, self.spawners.len() as u32);
        for s in &self.spawners {
            u(out, s.timer);
            for r in &s.rocks {
                b(out, r.active);
                for v in [r.x, r.y, r.vy] {
                    i(out, v);
                }
            }
        }
        u(out, self.taken.len() as u32);
        for &t in &self.taken {
            b(out, t);
        }
        out.extend_from_slice(&self.collected.to_le_bytes());
        out.extend_from_slice(&self.checkpoint.to_le_bytes());
    }

    /// `stateHash`: lowercase hex SHA-256 of `state_bytes`.
    pub fn state_hash(&self) -> String {
        let mut bytes = Vec::with_capacity(256);
        self.state_bytes(&mut bytes);
        hex::encode(Sha256::digest(&bytes))
    }
}
