//! A parsed, valid map and the static level data the simulation reads.
//!
//! `Map` is what the parser produces; it is immutable and cheap to share. Its canonical text
//! (the input of `mapHash`) lists every parameter with its resolved value, so that writing a
//! default explicitly, relying on it, or setting it with a `default:` line all hash the same.

use super::palette::{
    Block, EntityKind, BLOCKS, CRUMBLE_DELAY, FLYER_AXIS, FLYER_PAUSE, FLYER_RANGE, FLYER_SPEED,
    PLATFORM_DX, PLATFORM_DY, PLATFORM_SPEED, PLATFORM_WIDTH, ROCKFALL_INTERVAL, ROCKFALL_JITTER,
    ROCKFALL_OFFSET, SPRING_STRENGTH, WALKER_DIR, WALKER_PAUSE, WALKER_RANGE, WALKER_SPEED,
};
use super::physics::{spring_speed, FLYER_SIZE, SPEED_UNIT, TILE, TILE_SHIFT, WALKER_W};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// One entity line: kind, tile coordinates, and every parameter of the kind, resolved, in the
/// palette's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entity {
    pub kind: EntityKind,
    pub x: i32,
    pub y: i32,
    pub params: Vec<i64>,
}

impl Entity {
    pub fn param(&self, i: usize) -> i64 {
        self.params.get(i).copied().unwrap_or(0)
    }
}

#[derive(Clone, Debug)]
pub struct Map {
    name: String,
    crumble_delay: i64,
    level: Arc<Level>,
    entities: Vec<Entity>,
}

/// Static per-level data, shared by every `Sim` cloned from the same map.
#[derive(Debug)]
pub struct Level {
    pub width: i32,
    pub height: i32,
    pub tiles: Vec<Block>,
    /// Per tile: index into the dynamic tiles (cracked and crumbling), or `NO_DYN`.
    pub dyn_index: Vec<u16>,
    /// Tile index of each dynamic tile.
    pub dyn_tiles: Vec<u32>,
    pub crumble_delay: u16,
    pub start: (i32, i32),
    pub nests: Vec<(i32, i32)>,
    pub walkers: Vec<WalkerDef>,
    pub flyers: Vec<FlyerDef>,
    pub spawners: Vec<SpawnerDef>,
    pub platforms: Vec<PlatformDef>,
    pub springs: Vec<SpringDef>,
    pub checkpoints: Vec<(i32, i32)>,
    pub collectibles: Vec<(i32, i32)>,
    /// Enemies numbered walkers first, then flyers (file order within each). For each column
    /// `c`, `near[near_range[c].0..near_range[c].1]` lists, ascending, every enemy whose whole
    /// patrol (its sweep in x) meets columns `c` and `c + 1`: so a box at most one tile wide
    /// whose left edge is in column `c` can only touch those enemies.
    pub near_range: Vec<(u32, u32)>,
    pub near: Vec<u32>,
    /// Every enemy, ascending (for boxes whose left edge is outside the grid).
    pub all_enemies: Vec<u32>,
    /// Per tile: which of spikes (`MARK_SPIKES`), a collectible, a checkpoint or a nest are
    /// on it, so the contact tests can skip what the bird's tiles do not hold.
    pub marks: Vec<u8>,
    /// Per tile: the marks of the 2 x 2 tiles with this one at the top-left (those inside
    /// the grid), so a box at most a tile in size is looked up once.
    pub marks2: Vec<u8>,
    /// The marks of things outside the grid (none from the parser): always tested.
    pub offgrid_marks: u8,
    /// Whether any tile is a crumbling ledge.
    pub has_crumbling: bool,
}

pub const MARK_SPIKES: u8 = 1;
pub const MARK_COLLECTIBLE: u8 = 2;
pub const MARK_CHECKPOINT: u8 = 4;
pub const MARK_NEST: u8 = 8;

impl Level {
    /// The enemies (see `near`) that a box at most one tile wide whose left edge is at
    /// sub-unit `x` can touch, ascending: walkers first, then flyers, in file order.
    #[inline]
    pub fn enemies_near(&self, x: i32) -> &[u32] {
        let c = (x >> TILE_SHIFT) as usize;
        match self.near_range.get(c) {
            Some(&(a, b)) => self.near.get(a as usize..b as usize).unwrap_or(&[]),
            None => &self.all_enemies,
        }
    }

    /// The marks (see `marks`) of the tiles a box covers, given its top-left and size in
    /// sub-units, with the marks of things outside the grid.
    #[inline]
    pub fn marks_under(&self, x: i32, y: i32, w: i32, h: i32) -> u8 {
        let (l, t) = (x >> TILE_SHIFT, y >> TILE_SHIFT);
        // Unsigned compares: negative tiles wrap to large ones (width and height are > 0).
        if w <= TILE
            && h <= TILE
            && (l as u32) < self.width as u32
            && (t as u32) < self.height as u32
        {
            // The box covers at most the 2 x 2 tiles from (l, t).
            let m = self.marks2.get((t * self.width + l) as usize).copied();
            return m.unwrap_or(0) | self.offgrid_marks;
        }
        let mut m = self.offgrid_marks;
        let (l, r) = (x >> TILE_SHIFT, (x + w - 1) >> TILE_SHIFT);
        let (t, b) = (
            (y >> TILE_SHIFT).max(0),
            ((y + h - 1) >> TILE_SHIFT).min(self.height - 1),
        );
        let (l, r) = (l.max(0), r.min(self.width - 1));
        for ty in t..=b {
            let row = (ty * self.width) as usize;
            for tx in l..=r {
                m |= self.marks.get(row + tx as usize).copied().unwrap_or(0);
            }
        }
        m
    }

    /// Builds `marks`, `offgrid_marks` and `has_crumbling`.
    fn mark_tiles(&mut self) {
        self.marks = self
            .tiles
            .iter()
            .map(|&b| if b == Block::Spikes { MARK_SPIKES } else { 0 })
            .collect();
        self.has_crumbling = self.tiles.contains(&Block::Crumbling);
        let at = |marks: &[u8], x: i32, y: i32| {
            if x < self.width && y < self.height {
                marks
                    .get((y * self.width + x) as usize)
                    .copied()
                    .unwrap_or(0)
            } else {
                0
            }
        };
        let things = [
            (MARK_COLLECTIBLE, &self.collectibles),
            (MARK_CHECKPOINT, &self.checkpoints),
            (MARK_NEST, &self.nests),
        ];
        for (mark, list) in things {
            for &(x, y) in list.iter() {
                let cell = if x >= 0 && y >= 0 && x < self.width && y < self.height {
                    self.marks.get_mut((y * self.width + x) as usize)
                } else {
                    None
                };
                match cell {
                    Some(m) => *m |= mark,
                    None => self.offgrid_marks |= mark,
                }
            }
        }
        let marks = &self.marks;
        let mut marks2 = Vec::with_capacity(marks.len());
        for y in 0..self.height {
            for x in 0..self.width {
                marks2.push(
                    at(marks, x, y)
                        | at(marks, x + 1, y)
                        | at(marks, x, y + 1)
                        | at(marks, x + 1, y + 1),
                );
            }
        }
        self.marks2 = marks2;
    }

    /// Builds `near_range`, `near` and `all_enemies` from the walkers and flyers.
    fn index_enemies(&mut self) {
        let sweeps: Vec<(i32, i32)> = self
            .walkers
            .iter()
            .map(|w| (w.min_x, w.max_x + WALKER_W))
            .chain(self.flyers.iter().map(|f| {
                if f.vertical {
                    (f.x0, f.x0 + FLYER_SIZE)
                } else {
                    (f.min, f.max + FLYER_SIZE)
                }
            }))
            .collect();
        let width = self.width.max(0);
        let mut cols: Vec<Vec<u32>> = vec![Vec::new(); width as usize];
        for (i, &(a, b)) in sweeps.iter().enumerate() {
            // Columns c whose two-column window [c, c + 2) tiles meets [a, b).
            let lo = ((a >> TILE_SHIFT) - 1).max(0);
            let hi = ((b - 1) >> TILE_SHIFT).min(width - 1);
            for c in lo..=hi {
                if a < (c + 2) * TILE && c * TILE < b {
                    cols[c as usize].push(i as u32);
                }
            }
        }
        self.near_range = Vec::with_capacity(cols.len());
        self.near = Vec::new();
        for c in cols {
            let start = self.near.len() as u32;
            self.near.extend_from_slice(&c);
            self.near_range.push((start, self.near.len() as u32));
        }
        self.all_enemies = (0..sweeps.len() as u32).collect();
    }
}

pub const NO_DYN: u16 = u16::MAX;

#[derive(Clone, Copy, Debug)]
pub struct WalkerDef {
    pub x0: i32,
    pub y: i32,
    pub min_x: i32,
    pub max_x: i32,
    pub speed: i32,
    pub pause: u32,
    pub dir: i8,
}

#[derive(Clone, Copy, Debug)]
pub struct FlyerDef {
    pub x0: i32,
    pub y0: i32,
    pub vertical: bool,
    pub min: i32,
    pub max: i32,
    pub speed: i32,
    pub pause: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct SpawnerDef {
    pub x: i32,
    pub y: i32,
    pub interval: u32,
    pub jitter: u32,
    pub offset: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct PlatformDef {
    pub x0: i32,
    pub y0: i32,
    /// Travel in sub-units.
    pub dx: i32,
    pub dy: i32,
    /// Path length in sub-units (the larger axis); 0 for a platform that stands still.
    pub length: i32,
    pub speed: i32,
    pub width: i32,
}

#[derive(Clone, Copy, Debug)]
pub struct SpringDef {
    pub x: i32,
    pub y: i32,
    pub launch_speed: i32,
}

impl Map {
    /// Builds a map from checked parts. The parser guarantees ranges and bounds; this function
    /// still never panics on bad input (out-of-range values are clamped by the callers' checks).
    pub fn from_parts(
        name: String,
        width: i32,
        height: i32,
        tiles: Vec<Block>,
        crumble_delay: i64,
        entities: Vec<Entity>,
    ) -> Map {
        let mut dyn_index = vec![NO_DYN; tiles.len()];
        let mut dyn_tiles = Vec::new();
        for (i, b) in tiles.iter().enumerate() {
            if matches!(b, Block::Cracked | Block::Crumbling) && dyn_tiles.len() < NO_DYN as usize {
                dyn_index[i] = dyn_tiles.len() as u16;
                dyn_tiles.push(i as u32);
            }
        }
        let mut level = Level {
            width,
            height,
            tiles,
            dyn_index,
            dyn_tiles,
            crumble_delay: crumble_delay.clamp(1, 600) as u16,
            start: (0, 0),
            nests: Vec::new(),
            walkers: Vec::new(),
            flyers: Vec::new(),
            spawners: Vec::new(),
            platforms: Vec::new(),
            springs: Vec::new(),
            checkpoints: Vec::new(),
            collectibles: Vec::new(),
            near_range: Vec::new(),
            near: Vec::new(),
            all_enemies: Vec::new(),
            marks: Vec::new(),
            marks2: Vec::new(),
            offgrid_marks: 0,
            has_crumbling: false,
        };
        for e in &entities {
            let (x, y) = (e.x, e.y);
            match e.kind {
                EntityKind::Start => level.start = (x, y),
                EntityKind::Nest => level.nests.push((x, y)),
                EntityKind::Walker => {
                    let range = e.param(WALKER_RANGE) as i32;
                    let x0 = x * TILE + 256;
                    level.walkers.push(WalkerDef {
                        x0,
                        y: y * TILE + 4 * 256,
                        min_x: x0 - range * TILE,
                        max_x: x0 + range * TILE,
                        speed: e.param(WALKER_SPEED) as i32 * SPEED_UNIT,
                        pause: e.param(WALKER_PAUSE) as u32,
                        dir: if e.param(WALKER_DIR) == 1 { 1 } else { -1 },
                    })
                }
                EntityKind::Flyer => {
                    let range = e.param(FLYER_RANGE) as i32 * TILE;
                    let vertical = e.param(FLYER_AXIS) == 1;
                    let (x0, y0) = (x * TILE + 512, y * TILE + 512);
                    let base = if vertical { y0 } else { x0 };
                    level.flyers.push(FlyerDef {
                        x0,
                        y0,
                        vertical,
                        min: base - range,
                        max: base + range,
                        speed: e.param(FLYER_SPEED) as i32 * SPEED_UNIT,
                        pause: e.param(FLYER_PAUSE) as u32,
                    })
                }
                EntityKind::Rockfall => level.spawners.push(SpawnerDef {
                    x: x * TILE + 512,
                    y: y * TILE + 512,
                    interval: e.param(ROCKFALL_INTERVAL) as u32,
                    jitter: e.param(ROCKFALL_JITTER) as u32,
                    offset: e.param(ROCKFALL_OFFSET) as u32,
                }),
                EntityKind::Platform => {
                    let dx = e.param(PLATFORM_DX) as i32 * TILE;
                    let dy = e.param(PLATFORM_DY) as i32 * TILE;
                    level.platforms.push(PlatformDef {
                        x0: x * TILE,
                        y0: y * TILE,
                        dx,
                        dy,
                        length: dx.abs().max(dy.abs()),
                        speed: e.param(PLATFORM_SPEED) as i32 * SPEED_UNIT,
                        width: e.param(PLATFORM_WIDTH) as i32 * TILE,
                    })
                }
                EntityKind::Spring => level.springs.push(SpringDef {
                    x: x * TILE,
                    y: y * TILE,
                    launch_speed: spring_speed(e.param(SPRING_STRENGTH) as i32),
                }),
                EntityKind::Checkpoint => level.checkpoints.push((x, y)),
                EntityKind::Collectible => level.collectibles.push((x, y)),
            }
        }
        level.index_enemies();
        level.mark_tiles();
        Map {
            name,
            crumble_delay,
            level: Arc::new(level),
            entities,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn width(&self) -> i32 {
        self.level.width
    }
    pub fn height(&self) -> i32 {
        self.level.height
    }
    /// The block at tile (x, y) as written in the map; `None` outside the grid.
    pub fn tile(&self, x: i32, y: i32) -> Option<Block> {
        if x < 0 || y < 0 || x >= self.level.width || y >= self.level.height {
            return None;
        }
        self.level
            .tiles
            .get((y * self.level.width + x) as usize)
            .copied()
    }
    /// All tiles, row-major from the top-left.
    pub fn tiles(&self) -> &[Block] {
        &self.level.tiles
    }
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }
    /// The start tile.
    pub fn start(&self) -> (i32, i32) {
        self.level.start
    }
    /// The nest tiles, in file order.
    pub fn nests(&self) -> &[(i32, i32)] {
        &self.level.nests
    }
    pub fn crumble_delay(&self) -> i64 {
        self.crumble_delay
    }
    pub(crate) fn level(&self) -> &Arc<Level> {
        &self.level
    }

    /// The canonical text that `mapHash` is computed over (see FORMAT.md, "Canonical form").
    pub fn canonical(&self) -> String {
        let l = &self.level;
        let mut s = String::with_capacity(l.tiles.len() + l.height as usize + 256);
        s.push_str("gcv-map 1\n");
        s.push_str("name: ");
        s.push_str(&self.name);
        s.push('\n');
        s.push_str(&format!("size: {} {}\n", l.width, l.height));
        for b in BLOCKS.iter() {
            if b.params.is_empty() {
                continue;
            }
            s.push_str("default: ");
            s.push_str(b.name);
            for p in b.params {
                let v = if p.name == CRUMBLE_DELAY.name && b.block == Block::Crumbling {
                    self.crumble_delay
                } else {
                    p.default
                };
                s.push_str(&format!(" {}={}", p.name, p.format_value(v)));
            }
            s.push('\n');
        }
        s.push_str("grid:\n");
        for row in l.tiles.chunks(l.width.max(1) as usize) {
            for b in row {
                s.push(b.key());
            }
            s.push('\n');
        }
        s.push_str("entities:\n");
        for e in &self.entities {
            let def = e.kind.def();
            s.push_str(&format!("{} {} {}", def.name, e.x, e.y));
            for (p, v) in def.params.iter().zip(e.params.iter()) {
                s.push_str(&format!(" {}={}", p.name, p.format_value(*v)));
            }
            s.push('\n');
        }
        s
    }

    /// `mapHash`: lowercase hex SHA-256 of the canonical text.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.canonical().as_bytes()))
    }
}
