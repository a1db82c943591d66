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
//!
//! One file a part: `platforms`, `enemies` (walkers and flyers, stepped lazily), `rockfall`,
//! `bird` (step 2), `pebbles`, `dynamic_tiles` (cracked rock, crumbling ledges), `contacts`
//! (step 5) and `state` (the state hash); `map` builds the static `Level`, `rng` is the
//! generator. This file holds the `Sim` itself and the order of a tick.

mod bird;
mod contacts;
mod dynamic_tiles;
mod enemies;
pub mod map;
pub mod palette;
mod pebbles;
pub mod physics;
mod platforms;
pub mod rng;
mod rockfall;
mod state;

use dynamic_tiles::{block_in, DynTile};
use enemies::{Flyer, Walker, NEVER};
use map::Level;
use palette::Block;
use pebbles::Pebble;
use physics::*;
use platforms::Platform;
use rng::SplitMix64;
use rockfall::{Rock, Spawner};
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

/// A running game. Cloning copies a few small vectors; `step` never allocates.
#[derive(Clone, Debug)]
pub struct Sim {
    level: Arc<Level>,
    /// Ticks simulated (`tick` is this as a u32); the enemies' anchors and events count on it.
    clock: u64,
    /// The earliest `next` of any enemy: before it, the enemies need no work.
    next_enemy: u64,
    status: Status,
    rng: SplitMix64,
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
    /// What killed the bird (set with `Status::Dead`; not part of the state hash).
    death: Option<Death>,
}

/// What killed the bird.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeathCause {
    /// Spikes at the tile (`x`, `y`).
    Spikes,
    /// The walker with this index (among walkers, file order).
    Walker(u16),
    /// The flyer with this index (among flyers, file order).
    Flyer(u16),
    /// A rock from the rock-fall spawner with this index (among rockfalls, file order).
    Rock(u16),
    /// Fell out of the bottom of the map.
    FellOut,
    /// Pushed by a platform into the solid block at the tile (`x`, `y`).
    Crushed,
}

/// A death: its cause and where it happened, in tiles. For spikes, the spikes' tile; for an
/// enemy or a rock, the tile holding its centre when it touched the bird; for a fall, the
/// column of the middle of the bird and the map's height (the row below the map).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Death {
    pub cause: DeathCause,
    pub x: i32,
    pub y: i32,
}

impl Sim {
    pub fn new(map: &map::Map, seed: u32) -> Sim {
        let level = map.level().clone();
        let mut rng = SplitMix64::new(seed);
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
        let mut sim = Sim {
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
            death: None,
        };
        sim.stand_at_start();
        sim
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
    /// What killed the bird, once the run is lost.
    pub fn death(&self) -> Option<Death> {
        self.death
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
        if self.status != Status::Running {
            // Crushed by a platform: the run ends here.
            return;
        }
        self.update_pebbles(input.shoot);
        self.update_crumbling();
        self.resolve_contacts();
    }
}
