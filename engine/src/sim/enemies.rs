//! Walkers (marmots) and flyers (jackdaws), simulated lazily: stepped by the full rules only
//! on the ticks where something can happen to them.

use super::map::Level;
use super::palette::Block;
use super::physics::*;
use super::{block_in, Sim};

/// `next` of an enemy that never needs an event: standing still (no range), or defeated.
pub(super) const NEVER: u64 = u64::MAX;

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
pub(super) struct Walker {
    pub(super) x: i32,
    pub(super) dir: i8,
    pub(super) wait: u32,
    pub(super) alive: bool,
    pub(super) at: u64,
    pub(super) next: u64,
    pub(super) y: i32,
    pub(super) min_x: i32,
    pub(super) max_x: i32,
    pub(super) speed: i32,
    pub(super) pause: u32,
}

impl Walker {
    /// `x` and `wait` after clock tick `now` (not before `at`).
    #[inline]
    pub(super) fn state(&self, now: u64) -> (i32, u32) {
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
    pub(super) fn x_at(&self, now: u64) -> i32 {
        self.state(now).0
    }

    /// Fixes the state as of `now` (the anchor) and computes the next event.
    pub(super) fn anchor(&mut self, level: &Level, now: u64, x: i32, wait: u32) {
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
    pub(super) fn defeat(&mut self, now: u64) {
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
pub(super) struct Flyer {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) dir: i8,
    pub(super) wait: u32,
    pub(super) alive: bool,
    pub(super) vertical: bool,
    pub(super) at: u64,
    pub(super) next: u64,
    pub(super) min: i32,
    pub(super) max: i32,
    pub(super) speed: i32,
    pub(super) pause: u32,
}

impl Flyer {
    /// The coordinate along its axis as of `at`.
    #[inline]
    pub(super) fn pos(&self) -> i32 {
        if self.vertical {
            self.y
        } else {
            self.x
        }
    }

    /// The coordinate along its axis and `wait` after clock tick `now` (not before `at`).
    #[inline]
    pub(super) fn state(&self, now: u64) -> (i32, u32) {
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
    pub(super) fn xy_at(&self, now: u64) -> (i32, i32) {
        let (pos, _) = self.state(now);
        if self.vertical {
            (self.x, pos)
        } else {
            (pos, self.y)
        }
    }

    /// Fixes the state as of `now` (the anchor) and computes the next event.
    pub(super) fn anchor(&mut self, now: u64, pos: i32, wait: u32) {
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
    pub(super) fn defeat(&mut self, now: u64) {
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

impl Sim {
    /// Steps, by the full rules, the walkers and then the flyers whose event is due this tick
    /// (see `Walker`), and finds the next event.
    pub(super) fn update_enemies(&mut self) {
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
}
