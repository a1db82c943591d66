//! What the bird touches at the end of a tick: falling out, spikes, enemies (or stomping
//! them), rocks; then berries, checkpoints and the nest.

use super::map::{MARK_CHECKPOINT, MARK_COLLECTIBLE, MARK_NEST, MARK_SPIKES};
use super::palette::Block;
use super::physics::*;
use super::{Death, DeathCause, Sim, Status};

#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn overlap(
    ax: i32,
    ay: i32,
    aw: i32,
    ah: i32,
    bx: i32,
    by: i32,
    bw: i32,
    bh: i32,
) -> bool {
    // Non-short-circuit `&`: four compares without branches are cheaper than mispredictions
    // when 16 enemies are tested every tick.
    (ax < bx + bw) & (bx < ax + aw) & (ay < by + bh) & (by < ay + ah)
}

// `Level::enemies_near` serves boxes at most one tile wide.
const _: () = assert!(PLAYER_W <= TILE && PEBBLE_SIZE <= TILE);

impl Sim {
    /// Ends the run: killed by `cause` at tile (`x`, `y`).
    #[cold]
    pub(super) fn die(&mut self, cause: DeathCause, x: i32, y: i32) {
        self.status = Status::Dead;
        self.death = Some(Death { cause, x, y });
    }

    pub(super) fn resolve_contacts(&mut self) {
        let p = self.player;
        let level = &*self.level;
        if p.y >= level.height * TILE {
            let column = (p.x + PLAYER_W / 2) >> TILE_SHIFT;
            return self.die(DeathCause::FellOut, column, level.height);
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
                        return self.die(DeathCause::Spikes, tx, ty);
                    }
                }
            }
        }
        // The bird's feet before this tick's vertical move (standing: where they are): a stomp
        // needs them at most STOMP_TOLERANCE below the enemy's top, whether the bird falls,
        // stands or an enemy rises into it. Touched lower down, from the side or below, kills.
        let prev_bottom = p.y + PLAYER_H - p.vy;
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
                if prev_bottom <= ey + STOMP_TOLERANCE {
                    if e < nw {
                        self.walkers[e].defeat(now);
                    } else {
                        self.flyers[e - nw].defeat(now);
                    }
                    stomped = true;
                } else {
                    let cause = if e < nw {
                        DeathCause::Walker(e as u16)
                    } else {
                        DeathCause::Flyer((e - nw) as u16)
                    };
                    return self.die(
                        cause,
                        (ex + ew / 2) >> TILE_SHIFT,
                        (ey + eh / 2) >> TILE_SHIFT,
                    );
                }
            }
        }
        for (i, s) in self.spawners.iter().enumerate() {
            for rk in s.rocks.iter() {
                if rk.active
                    && overlap(
                        p.x, p.y, PLAYER_W, PLAYER_H, rk.x, rk.y, ROCK_SIZE, ROCK_SIZE,
                    )
                {
                    let (x, y) = (
                        (rk.x + ROCK_SIZE / 2) >> TILE_SHIFT,
                        (rk.y + ROCK_SIZE / 2) >> TILE_SHIFT,
                    );
                    return self.die(DeathCause::Rock(i as u16), x, y);
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
}
