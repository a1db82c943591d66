//! Adversarial levels for the proofs' soundness (issue 27 item 0), shared by
//! `tests/soundness.rs` (hundreds) and `examples/soundness.rs` (thousands): tall and wide
//! levels built around one mechanic each, and a player that explores them with random but
//! purposeful inputs. Wherever the player's bird goes, a nest may stand: no proof may call it
//! unreachable.
//!
//! Their generator streams are their own (`Rng::new(class, index)`), so adding a class changes
//! no other level.

#![allow(dead_code, clippy::needless_range_loop)]

use horst_engine::physics::{PLAYER_H, PLAYER_W, TILE_SHIFT};
use horst_engine::{Map, Sim, Status};

/// xorshift64*, seeded per class and level.
pub struct Rng(u64);

impl Rng {
    pub fn new(class: u64, index: u64) -> Rng {
        Rng(
            (class.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index.wrapping_mul(0xbf58_476d_1ce4_e5b9))
                | 1,
        )
    }
    pub fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.next((hi - lo + 1) as u64) as i64
    }
}

/// A level being built: a grid and entity lines.
pub struct Level {
    pub w: usize,
    pub h: usize,
    pub grid: Vec<Vec<u8>>,
    pub ents: Vec<String>,
    pub header: Vec<String>,
    pub start: (usize, usize),
}

impl Level {
    pub fn new(w: usize, h: usize) -> Level {
        let mut grid = vec![vec![b'.'; w]; h];
        for x in 0..w {
            grid[h - 1][x] = b'E';
        }
        Level {
            w,
            h,
            grid,
            ents: Vec::new(),
            header: Vec::new(),
            start: (1, h - 2),
        }
    }
    pub fn set(&mut self, x: i64, y: i64, b: u8) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            self.grid[y as usize][x as usize] = b;
        }
    }
    pub fn get(&self, x: i64, y: i64) -> u8 {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            self.grid[y as usize][x as usize]
        } else {
            b'#'
        }
    }
    pub fn free(&self, x: i64, y: i64) -> bool {
        self.get(x, y) == b'.'
    }
    /// The map text with the nest at (nx, ny).
    pub fn text(&self, nest: (i32, i32)) -> String {
        let mut t = format!(
            "gcv-map 1\nname: adversarial\nsize: {} {}\n",
            self.w, self.h
        );
        for l in &self.header {
            t.push_str(l);
            t.push('\n');
        }
        t.push_str("grid:\n");
        for row in &self.grid {
            t.push_str(std::str::from_utf8(row).unwrap());
            t.push('\n');
        }
        t.push_str(&format!(
            "entities:\nstart {} {}\nnest {} {}\n",
            self.start.0, self.start.1, nest.0, nest.1
        ));
        for e in &self.ents {
            t.push_str(e);
            t.push('\n');
        }
        t
    }
}

/// The classes, each around one mechanic.
pub const CLASSES: [&str; 13] = [
    "crumbling-stair-hole",
    "lift-shaft",
    "far-platform",
    "springs",
    "crumbling-delays",
    "chimney",
    "ice",
    "cracked",
    "flyers",
    "mixed-tower",
    "low-corridor",
    "lift-ledges",
    "spike-ceiling",
];

/// Level `index` of class `class` (an index into `CLASSES`). The start is on the floor at the
/// left; the nest's place is chosen later, from where the player got.
pub fn level(class: usize, index: u64) -> Level {
    let mut r = Rng::new(class as u64 + 1, index);
    match CLASSES[class % CLASSES.len()] {
        "crumbling-stair-hole" => stair_hole(&mut r),
        "lift-shaft" => lift_shaft(&mut r),
        "far-platform" => far_platform(&mut r),
        "springs" => springs(&mut r),
        "crumbling-delays" => crumbling(&mut r),
        "chimney" => chimney(&mut r),
        "ice" => ice(&mut r),
        "cracked" => cracked(&mut r),
        "flyers" => flyers(&mut r),
        "low-corridor" => low_corridor(&mut r),
        "lift-ledges" => lift_ledges(&mut r),
        "spike-ceiling" => spike_ceiling(&mut r),
        _ => mixed(&mut r),
    }
}

/// Crumbling stairs (ledges 2 wide, each a little higher) under a ceiling 2-4 rows above
/// the top step with a hole 1-3 wide, up to 4 columns to the side: the class of the false
/// proof of issue 27.
fn stair_hole(r: &mut Rng) -> Level {
    let (w, h) = (r.range(16, 40) as usize, r.range(16, 48) as usize);
    let mut l = Level::new(w, h);
    l.header
        .push(format!("default: crumbling delay={}", r.range(1, 90)));
    let steps = r.range(2, 5);
    let mut x = r.range(3, 6);
    let mut y = h as i64 - 1;
    for _ in 0..steps {
        y -= r.range(1, 3);
        for dx in 0..2 {
            l.set(x + dx, y, b'~');
        }
        x += r.range(2, 4);
    }
    let top = (x - r.range(2, 4), y);
    let gap = r.range(2, 4);
    let ceil = top.1 - gap - 1;
    if ceil >= 2 {
        let hole = r.range(1, 3);
        let hx = top.0 + r.range(-4, 4);
        for cx in 0..w as i64 {
            if !(hx..hx + hole).contains(&cx) {
                l.set(cx, ceil, [b'#', b'G', b'E'][r.next(3) as usize]);
            }
        }
    }
    l
}

/// A corridor 1-3 rows high under a roof of solid blocks across the whole map, its floor
/// broken by holes 1-8 wide into pits 0-3 rows deep over a row that is spikes or rock across
/// the whole map: the roof and the deadly floor of the jump envelope (`envelope::barrier_rows`,
/// `deadly_floor_rows`). Sometimes a spring in the corridor, a lift through the roof, a ferry
/// along the corridor, a marmot, cracked rock in the roof (which a pebble can open) or a
/// ledge over a hole.
fn low_corridor(r: &mut Rng) -> Level {
    let (w, h) = (r.range(16, 60) as usize, r.range(9, 24) as usize);
    let mut l = Level::new(w, h);
    let (wi, hi) = (w as i64, h as i64);
    let roof = r.range(0, hi - 8);
    let height = r.range(1, 3);
    let floor = roof + height + 1;
    let depth = r.range(0, 3);
    let deadly = floor + depth + 1;
    for x in 0..wi {
        l.set(x, roof, [b'#', b'G', b'E', b'I'][r.next(4) as usize]);
        for y in floor..deadly {
            l.set(x, y, b'#');
        }
        l.set(x, deadly, if r.next(3) == 0 { b'#' } else { b'^' });
        for y in deadly + 1..hi - 1 {
            l.set(x, y, b'#');
        }
    }
    for _ in 0..r.range(1, 4) {
        let (hx, hw) = (r.range(4, wi - 3), r.range(1, 8));
        for x in hx..(hx + hw).min(wi - 2) {
            for y in floor..deadly {
                l.set(x, y, b'.');
            }
            if r.next(4) == 0 {
                l.set(x, floor, b'-');
            }
        }
    }
    if r.next(3) == 0 {
        l.set(r.range(2, wi - 2), roof, b'C');
    }
    let at = |r: &mut Rng| r.range(3, wi - 4);
    match r.next(5) {
        0 => {
            let x = at(r);
            if l.get(x, floor) != b'.' {
                l.ents.push(format!(
                    "spring {x} {} strength={}",
                    floor - 1,
                    r.range(2, 12)
                ));
            }
        }
        1 => {
            let x = at(r);
            l.ents.push(format!(
                "platform {x} {} dx=0 dy={} speed={} width={}",
                floor - 1,
                -(floor - 1).min(r.range(2, 8)),
                r.range(1, 16),
                r.range(1, 3)
            ));
        }
        2 => {
            let x = at(r);
            l.ents.push(format!(
                "platform {x} {} dx={} dy=0 speed={} width={}",
                floor - 1,
                r.range(1, (wi - x - 4).clamp(1, 32)),
                r.range(1, 8),
                r.range(1, 3)
            ));
        }
        3 => {
            let x = at(r);
            if l.get(x, floor) != b'.' {
                l.ents.push(format!(
                    "walker {x} {} range={} speed={} pause=0",
                    floor - 1,
                    r.range(0, 6),
                    r.range(1, 6)
                ));
            }
        }
        _ => {}
    }
    l.start = (1, (floor - 1) as usize);
    for x in 0..3 {
        l.set(x, floor, b'G');
    }
    l
}

/// A level of a random size for a climb, and where the climb starts: on the floor, near the
/// left.
fn climb(r: &mut Rng, w: (i64, i64), h: (i64, i64)) -> (Level, i64, i64) {
    let (w, h) = (r.range(w.0, w.1) as usize, r.range(h.0, h.1) as usize);
    let x = r.range(3, 6);
    (Level::new(w, h), x, h as i64 - 2)
}

/// A vertical lift (and sometimes a second one above it) in a shaft, ridden for a long time.
fn lift_shaft(r: &mut Rng) -> Level {
    let (mut l, mut x, mut y) = climb(r, (12, 30), (40, 128));
    let w = l.w;
    for _ in 0..r.range(1, 3) {
        let dy = -r.range(6, 30.min(y - 4));
        if y + dy < 2 {
            break;
        }
        l.ents.push(format!(
            "platform {x} {y} dx=0 dy={dy} speed={} width={}",
            r.range(1, 16),
            r.range(1, 4)
        ));
        y += dy;
        x = (x + r.range(-3, 6)).clamp(1, w as i64 - 6);
        // A ledge beside the top of the ride.
        for dx in 0..3 {
            l.set(x + 4 + dx, y + r.range(-3, 1), b'-');
        }
    }
    l
}

/// A lift from an upper floor down through a row of one-way ledges across the room (one
/// time in four with a gap, or crumbling), at any speed, straight down, at a slant or further
/// sideways than down, starting at the top or the bottom. A lift whose top meets every tile's
/// top on a tick sets its rider down on the ledges (the relaxed check cuts its path there); at
/// other speeds the carry takes the rider through (`levels/probes/guest-lift-down-through-ledges`).
fn lift_ledges(r: &mut Rng) -> Level {
    let (w, h) = (r.range(14, 40) as usize, r.range(14, 40) as usize);
    let mut l = Level::new(w, h);
    let (wi, hi) = (w as i64, h as i64);
    let top = r.range(3, 6);
    for x in 0..4 {
        l.set(x, top, b'G');
    }
    let dy = r.range(3, (hi - top - 2).min(24));
    let dx = match r.next(3) {
        0 => 0,
        1 => r.range(1, dy),
        _ => r.range(1, dy + 6),
    }
    .min(wi - 8);
    let width = r.range(1, 3);
    let speed = r.range(1, 16);
    let (y0, d) = if r.next(2) == 0 {
        (top, dy)
    } else {
        (top + dy, -dy)
    };
    let x0 = if d > 0 { 4 } else { 4 + dx };
    let ddx = if d > 0 { dx } else { -dx };
    l.ents.push(format!(
        "platform {x0} {y0} dx={ddx} dy={d} speed={speed} width={width}"
    ));
    let row = top + r.range(1, dy);
    let b = [b'-', b'-', b'-', b'~'][r.next(4) as usize];
    for x in 0..wi {
        l.set(x, row, b);
    }
    if r.next(4) == 0 {
        l.set(r.range(0, wi - 1), row, b'.');
    }
    l.start = (1, (top - 1) as usize);
    l
}

/// A row of spikes across the room (some of its tiles rock, one time in four a tile open) with
/// ground above it, and below it springs of every strength, ledges up to the row and a lift
/// rising up to it or through it at every speed: the jump envelope caps flights from below
/// at such a row (`envelope::ceiling_rows`), so a bird must never get above a closed one.
fn spike_ceiling(r: &mut Rng) -> Level {
    let (w, h) = (r.range(12, 40) as usize, r.range(14, 40) as usize);
    let mut l = Level::new(w, h);
    let (wi, hi) = (w as i64, h as i64);
    let row = r.range(3, hi - 9);
    for x in 0..wi {
        l.set(x, row, if r.next(4) == 0 { b'#' } else { b'^' });
    }
    if r.next(4) == 0 {
        l.set(r.range(2, wi - 1), row, b'.');
    }
    for x in 0..r.range(2, wi) {
        l.set(x, row - 1 - r.range(0, 1), b'G');
    }
    for _ in 0..r.range(1, 3) {
        let x = r.range(2, wi - 1);
        l.ents
            .push(format!("spring {x} {} strength={}", hi - 2, r.range(2, 12)));
    }
    for _ in 0..r.range(0, 3) {
        let (x, y) = (r.range(0, wi - 3), r.range(row + 2, hi - 3));
        for dx in 0..3 {
            l.set(x + dx, y, [b'G', b'-', b'~'][r.next(3) as usize]);
        }
    }
    let (x, y) = (r.range(2, wi - 2), r.range(row + 2, hi - 2));
    let top = r.range(0, row + 1).min(y - 1).max(y - 32);
    l.ents.push(format!(
        "platform {x} {y} dx=0 dy={} speed={} width=1",
        top - y,
        r.range(1, 16)
    ));
    l
}

/// A gorge with a platform far away that comes over it slowly.
fn far_platform(r: &mut Rng) -> Level {
    let (w, h) = (r.range(40, 120) as usize, r.range(12, 30) as usize);
    let mut l = Level::new(w, h);
    let g0 = r.range(6, 12);
    let g1 = (g0 + r.range(10, 40)).min(w as i64 - 4);
    for x in g0..g1 {
        l.set(x, h as i64 - 1, b'.');
    }
    let y = h as i64 - 1 - r.range(0, 3);
    let dx = -(g1 - g0 - 2).clamp(1, 32);
    l.ents.push(format!(
        "platform {} {y} dx={dx} dy={} speed={} width={}",
        g1 - 3,
        r.range(-4, 0),
        r.range(1, 6),
        r.range(1, 3)
    ));
    l
}

/// Springs of every strength, on the floor and on ledges.
fn springs(r: &mut Rng) -> Level {
    let (mut l, mut x, mut y) = climb(r, (16, 60), (20, 128));
    let w = l.w;
    for _ in 0..r.range(1, 5) {
        let s = r.range(2, 12);
        l.ents.push(format!("spring {x} {y} strength={s}"));
        y -= s + r.range(-2, 1);
        if y < 3 {
            break;
        }
        x = (x + r.range(-3, 5)).clamp(1, w as i64 - 4);
        for dx in -1..2 {
            l.set(x + dx, y + 1, [b'G', b'-', b'~'][r.next(3) as usize]);
        }
    }
    l
}

/// Crumbling ledges of one delay (1-600) in a climb.
fn crumbling(r: &mut Rng) -> Level {
    let (w, h) = (r.range(16, 60) as usize, r.range(16, 80) as usize);
    let mut l = Level::new(w, h);
    l.header.push(format!(
        "default: crumbling delay={}",
        [1, 2, 5, 12, 30, 36, 90, 240, 600][r.next(9) as usize]
    ));
    let mut y = h as i64 - 1;
    let mut x = r.range(2, 5);
    while y > 4 {
        y -= r.range(1, 4);
        let len = r.range(1, 4);
        for dx in 0..len {
            l.set(x + dx, y, b'~');
        }
        x = (x + r.range(-5, 6)).clamp(1, w as i64 - 5);
    }
    l
}

/// Chimneys: shafts 1-3 wide between walls, with ledges or none (climbed by boosting between
/// them, or not at all).
fn chimney(r: &mut Rng) -> Level {
    let (w, h) = (r.range(14, 30) as usize, r.range(20, 100) as usize);
    let mut l = Level::new(w, h);
    let cx = r.range(4, w as i64 - 8);
    let cw = r.range(1, 3);
    let top = r.range(2, h as i64 / 2);
    for y in top..h as i64 - 1 {
        l.set(cx - 1, y, b'#');
        l.set(cx + cw, y, b'#');
        if r.next(4) == 0 {
            l.set(
                cx + r.range(0, cw - 1),
                y,
                [b'-', b'~', b'G'][r.next(3) as usize],
            );
        }
    }
    // The way in: a gap at the foot of one wall.
    l.set(cx - 1, h as i64 - 2, b'.');
    l.set(cx - 1, h as i64 - 3, b'.');
    l
}

/// Ice floors and ice ledges with gaps.
fn ice(r: &mut Rng) -> Level {
    let (w, h) = (r.range(20, 100) as usize, r.range(10, 40) as usize);
    let mut l = Level::new(w, h);
    for x in 0..w as i64 {
        l.set(x, h as i64 - 1, if r.next(5) == 0 { b'.' } else { b'I' });
    }
    l.set(1, h as i64 - 1, b'I');
    for _ in 0..r.range(2, 10) {
        let (x, y) = (r.range(2, w as i64 - 6), r.range(3, h as i64 - 3));
        for dx in 0..r.range(2, 6) {
            l.set(x + dx, y, [b'I', b'S', b'-'][r.next(3) as usize]);
        }
    }
    l
}

/// Walls and lids of cracked rock, to be shot, with pebbles' rows open or not.
fn cracked(r: &mut Rng) -> Level {
    let (w, h) = (r.range(16, 60) as usize, r.range(10, 40) as usize);
    let mut l = Level::new(w, h);
    for _ in 0..r.range(1, 4) {
        let x = r.range(5, w as i64 - 3);
        let top = r.range(1, h as i64 - 3);
        for y in top..h as i64 - 1 {
            l.set(x, y, if r.next(3) == 0 { b'#' } else { b'C' });
        }
    }
    for _ in 0..r.range(0, 4) {
        let (x, y) = (r.range(2, w as i64 - 6), r.range(2, h as i64 - 3));
        for dx in 0..r.range(2, 6) {
            l.set(x + dx, y, b'C');
        }
    }
    l
}

/// Jackdaws and marmots to stomp towards ledges out of a jump's reach.
fn flyers(r: &mut Rng) -> Level {
    let (w, h) = (r.range(16, 60) as usize, r.range(14, 60) as usize);
    let mut l = Level::new(w, h);
    for _ in 0..r.range(1, 8) {
        let vertical = r.next(2) == 0;
        let range = r.range(0, 6);
        let x = r.range(
            3 + if vertical { 0 } else { range },
            w as i64 - 2 - range.max(1),
        );
        let y = r.range(
            2 + if vertical { range } else { 0 },
            h as i64 - 3 - if vertical { range } else { 0 },
        );
        if l.free(x, y) && x >= 3 && y > 0 {
            l.ents.push(format!(
                "flyer {x} {y} axis={} range={range} speed={} pause={}",
                if vertical { "v" } else { "h" },
                r.range(1, 16),
                r.range(0, 120)
            ));
        }
    }
    for _ in 0..r.range(0, 3) {
        let x = r.range(6, w as i64 - 4);
        l.ents.push(format!(
            "walker {x} {} range={} speed={}",
            h - 2,
            r.range(0, 3),
            r.range(1, 8)
        ));
    }
    for _ in 0..r.range(1, 5) {
        let (x, y) = (r.range(2, w as i64 - 6), r.range(2, h as i64 - 6));
        for dx in 0..3 {
            l.set(x + dx, y, b'-');
        }
    }
    l
}

/// A tall tower of everything: zigzag ledges, a spring, a lift, crumbling stairs with a
/// ceiling hole, a chimney and an icy top.
fn mixed(r: &mut Rng) -> Level {
    let (w, h) = (r.range(24, 48) as usize, r.range(40, 128) as usize);
    let mut l = Level::new(w, h);
    l.header
        .push(format!("default: crumbling delay={}", r.range(1, 60)));
    let mut y = h as i64 - 1;
    let mut x = r.range(3, 8);
    let mut n = 0;
    while y > 6 {
        n += 1;
        match r.next(6) {
            0 => {
                l.ents
                    .push(format!("spring {x} {} strength={}", y - 1, r.range(2, 12)));
                y -= r.range(3, 8);
            }
            1 => {
                let dy = -r.range(4, 20.min(y - 3));
                l.ents.push(format!(
                    "platform {x} {} dx={} dy={dy} speed={} width=2",
                    y - 1,
                    r.range(-2, 2),
                    r.range(1, 12)
                ));
                y += dy;
            }
            2 => {
                y -= r.range(1, 3);
                for dx in 0..2 {
                    l.set(x + dx, y, b'~');
                }
                let ceil = y - r.range(3, 4);
                let hx = x + r.range(-3, 3);
                for cx in (x - 6)..(x + 8) {
                    if !(hx..hx + 2).contains(&cx) && cx != l.start.0 as i64 {
                        l.set(cx, ceil, b'#');
                    }
                }
                y = ceil;
            }
            3 => {
                y -= r.range(2, 4);
                for dx in 0..r.range(2, 5) {
                    l.set(x + dx, y, [b'G', b'I', b'-', b'S'][r.next(4) as usize]);
                }
            }
            _ => {
                y -= r.range(1, 3);
                for dx in 0..r.range(1, 4) {
                    l.set(x + dx, y, b'-');
                }
            }
        }
        x = (x + r.range(-6, 6)).clamp(1, w as i64 - 8);
        if n > 60 {
            break;
        }
    }
    l
}

/// Where the player's bird went: every tile its hitbox overlapped while alive, in the map.
pub fn explore(map: &Map, seed: u64, runs: usize, ticks: usize) -> Vec<(i32, i32)> {
    let mut r = Rng::new(0xfeed, seed);
    let (w, h) = (map.width(), map.height());
    let mut seen = vec![false; (w * h) as usize];
    let mut out = Vec::new();
    for run in 0..runs {
        let mut sim = Sim::new(map, run as u32);
        let mut t = 0;
        'run: while t < ticks {
            // Mostly runs and jumps towards one side, releases for the egg boost, waits, shots.
            let dir = [8u8, 0, 4, 16, 12][r.next(if run % 2 == 0 { 3 } else { 5 }) as usize];
            let (a, n) = match r.next(8) {
                0 => (dir, r.range(1, 60)),
                1 => (4, r.range(1, 120)),
                2 => (dir + 2, r.range(1, 10)),
                _ => (dir + 1, r.range(1, 30)),
            };
            // A release before a fresh press, so that boosts happen.
            for (act, k) in [(dir, r.range(1, 3)), (a, n)] {
                for _ in 0..k {
                    sim.step(act);
                    t += 1;
                    if sim.status() != Status::Running {
                        break 'run;
                    }
                    let p = sim.player();
                    for ty in p.y >> TILE_SHIFT..=(p.y + PLAYER_H - 1) >> TILE_SHIFT {
                        for tx in p.x >> TILE_SHIFT..=(p.x + PLAYER_W - 1) >> TILE_SHIFT {
                            if tx >= 0
                                && ty >= 0
                                && tx < w
                                && ty < h
                                && !seen[(ty * w + tx) as usize]
                            {
                                seen[(ty * w + tx) as usize] = true;
                                out.push((tx, ty));
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// The touched tiles that test the proofs most: the highest, the farthest right and the
/// farthest from the start, open in the map (a nest may stand there).
pub fn targets(map: &Map, touched: &[(i32, i32)], n: usize) -> Vec<(i32, i32)> {
    let open: Vec<(i32, i32)> = touched
        .iter()
        .copied()
        .filter(|&(x, y)| map.tile(x, y).is_some_and(|b| !b.is_solid()))
        .collect();
    let (sx, sy) = map.start();
    let mut picks: Vec<(i32, i32)> = Vec::new();
    type Key<'a> = &'a dyn Fn(&(i32, i32)) -> i64;
    let keys: [Key; 3] = [
        &|&(x, y)| (y as i64) * 1000 - x as i64,
        &|&(x, y)| -(x as i64) * 1000 + y as i64,
        &|&(x, y)| -((x - sx).abs() as i64 + (y - sy).abs() as i64),
    ];
    for k in keys {
        let mut v = open.clone();
        v.sort_by_key(|p| (k(p), p.0, p.1));
        for p in v {
            if !picks.contains(&p) {
                picks.push(p);
                break;
            }
        }
    }
    picks.truncate(n);
    picks
}
