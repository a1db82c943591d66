//! The relaxed reachability check behind the `nest_unreachable` warning.
//!
//! It floods the tile grid from the start within the jump envelope: from every tile the bird
//! can stand on it may rise up to `JUMP_UP_TILES` through a clear column (a spring: its
//! strength plus the boost), move up to `JUMP_ACROSS_TILES` sideways through a clear row at
//! any height on the way, and fall straight down from there. Cracked rock counts as open (it
//! can be shot), spikes as closed, and every tile above a platform's path as ground connected
//! to the rest of that path. It is generous on purpose: a warning should mean "almost surely
//! unreachable"; only the planner and the referee prove a level winnable.

use crate::sim::map::Map;
use crate::sim::palette::{
    Block, EntityKind, PLATFORM_DX, PLATFORM_DY, PLATFORM_WIDTH, SPRING_STRENGTH,
};

/// A full jump (3.18 tiles) plus the egg boost (2.05 tiles), rounded down to whole tiles the
/// bird's feet clear. The tests measure the real envelope and check these stay above it.
pub const JUMP_UP_TILES: i32 = 5;
pub const JUMP_ACROSS_TILES: i32 = 8;

pub struct Reach {
    pub width: i32,
    pub height: i32,
    pub reached: Vec<bool>,
}

impl Reach {
    pub fn at(&self, x: i32, y: i32) -> bool {
        x >= 0
            && y >= 0
            && x < self.width
            && y < self.height
            && self.reached[(y * self.width + x) as usize]
    }
}

pub fn reach(map: &Map) -> Reach {
    let (w, h) = (map.width(), map.height());
    let n = (w * h) as usize;
    let idx = |x: i32, y: i32| (y * w + x) as usize;
    let tile = |x: i32, y: i32| map.tile(x, y).unwrap_or(Block::Empty);
    let open = |x: i32, y: i32| {
        x >= 0 && x < w && y < h && {
            let b = tile(x, y);
            !(b.is_solid() && b != Block::Cracked) && b != Block::Spikes
        }
    };
    // Platform groups: every tile above a platform's path, all connected to each other.
    let mut group: Vec<u16> = vec![u16::MAX; n];
    let mut groups: Vec<Vec<(i32, i32)>> = Vec::new();
    let mut launch: Vec<i32> = vec![0; n];
    for e in map.entities() {
        match e.kind {
            EntityKind::Platform => {
                let (dx, dy) = (e.param(PLATFORM_DX) as i32, e.param(PLATFORM_DY) as i32);
                let pw = e.param(PLATFORM_WIDTH) as i32;
                let mut cells = Vec::new();
                for y in e.y.min(e.y + dy)..=e.y.max(e.y + dy) {
                    for x in e.x.min(e.x + dx)..=(e.x.max(e.x + dx) + pw - 1) {
                        if y >= 1 && open(x, y - 1) && groups.len() < u16::MAX as usize {
                            group[idx(x, y - 1)] = groups.len() as u16;
                            cells.push((x, y - 1));
                        }
                    }
                }
                groups.push(cells);
            }
            EntityKind::Spring => {
                launch[idx(e.x, e.y)] = e.param(SPRING_STRENGTH) as i32 + 2;
            }
            _ => {}
        }
    }
    let stand = |x: i32, y: i32| {
        open(x, y) && y >= 0 && {
            let below = tile(x, y + 1);
            y + 1 < h && (below.is_solid() || below.is_one_way())
        }
    };

    let mut reached = vec![false; n];
    let mut queued = vec![false; n];
    let mut queue: Vec<(i32, i32)> = Vec::new();
    let mut group_done = vec![false; groups.len()];

    // Falls straight down from (x, y), marking every tile passed; queues where it lands.
    let fall = |x: i32,
                y: i32,
                reached: &mut Vec<bool>,
                queued: &mut Vec<bool>,
                queue: &mut Vec<(i32, i32)>| {
        let mut y = y.max(0);
        while open(x, y) {
            let i = idx(x, y);
            reached[i] = true;
            if stand(x, y) || group[i] != u16::MAX || launch[i] > 0 {
                if !queued[i] {
                    queued[i] = true;
                    queue.push((x, y));
                }
                return;
            }
            y += 1;
        }
    };

    let (sx, sy) = map.start();
    fall(sx, sy, &mut reached, &mut queued, &mut queue);
    while let Some((x, y)) = queue.pop() {
        let i = idx(x, y);
        let g = group[i];
        if g != u16::MAX && !group_done[g as usize] {
            group_done[g as usize] = true;
            for &(gx, gy) in &groups[g as usize] {
                let gi = idx(gx, gy);
                reached[gi] = true;
                if !queued[gi] {
                    queued[gi] = true;
                    queue.push((gx, gy));
                }
            }
        }
        let up = if launch[i] > 0 {
            launch[i]
        } else {
            JUMP_UP_TILES
        };
        for rise in 0..=up {
            let row = y - rise;
            // Above the map the bird can still move; treat rows above as open air.
            if row >= 0 && !open(x, row) {
                break;
            }
            let row_c = row.max(0);
            if row >= 0 {
                reached[idx(x, row)] = true;
                fall(x, row, &mut reached, &mut queued, &mut queue);
            }
            for dir in [-1, 1] {
                for d in 1..=JUMP_ACROSS_TILES {
                    let cx = x + dir * d;
                    if !open(cx, row_c) {
                        break;
                    }
                    fall(cx, row_c, &mut reached, &mut queued, &mut queue);
                }
            }
        }
    }
    Reach {
        width: w,
        height: h,
        reached,
    }
}
