//! Rock-fall spawners and their falling rocks.

use super::physics::*;
use super::Sim;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Rock {
    pub(super) active: bool,
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) vy: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Spawner {
    pub(super) timer: u32,
    pub(super) rocks: [Rock; ROCKS_PER_SPAWNER],
}

impl Sim {
    pub(super) fn update_spawners(&mut self) {
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
}
