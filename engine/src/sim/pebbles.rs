//! Pebbles: fired in the facing direction, they break cracked rock, defeat enemies and
//! shatter rocks.

use super::contacts::overlap;
use super::dynamic_tiles::DYN_GONE;
use super::map::NO_DYN;
use super::palette::Block;
use super::physics::*;
use super::Sim;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Pebble {
    pub(super) active: bool,
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) vx: i32,
    pub(super) life: u8,
}

impl Sim {
    pub(super) fn update_pebbles(&mut self, shoot: bool) {
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
    pub(super) fn pebble_hits(&mut self, x: i32, y: i32) -> bool {
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
}
