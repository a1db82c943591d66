//! The bird: walking, jumping, the egg boost, gravity, moving against tiles and platforms,
//! springs.

use super::contacts::overlap;
use super::palette::Block;
use super::physics::*;
use super::{DeathCause, Input, Sim};

impl Sim {
    /// The bird starts in the air on the bottom of its tile and lands on the first tick. When
    /// a block or a platform is right under it, it starts within the coyote time, so a jump on
    /// the first tick jumps from the ground (and does not spend the egg boost). Nothing else
    /// of the first tick changes.
    pub(super) fn stand_at_start(&mut self) {
        let p = self.player;
        let bottom = p.y + PLAYER_H;
        let ty = bottom >> TILE_SHIFT;
        let l = p.x >> TILE_SHIFT;
        let r = (p.x + PLAYER_W - 1) >> TILE_SHIFT;
        let on_tile = (l..r + 1).any(|tx| self.supports(tx, ty));
        let on_platform = self.platforms.iter().enumerate().any(|(i, pl)| {
            let width = self.level.platforms.get(i).map_or(0, |d| d.width);
            p.x + PLAYER_W > pl.x && p.x < pl.x + width && pl.y == bottom
        });
        if on_tile || on_platform {
            self.player.coyote = COYOTE_TICKS;
        }
    }

    pub(super) fn update_player(&mut self, input: Input) {
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
    pub(super) fn move_x(&mut self, dx: i32) {
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
    pub(super) fn move_x_full(&mut self, dx: i32) {
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
    pub(super) fn move_y_carry(&mut self, dy: i32) {
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

    pub(super) fn move_y(&mut self, dy: i32) {
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
                if riding >= 0 {
                    // A platform that lifts the bird into a solid block crushes it.
                    let top = y >> TILE_SHIFT;
                    let bottom = (y + PLAYER_H - 1) >> TILE_SHIFT;
                    for ty in top..bottom + 1 {
                        if let Some(tx) = (l..r + 1).find(|&tx| self.solid(tx, ty)) {
                            return self.die(DeathCause::Crushed, tx, ty);
                        }
                    }
                }
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
}
