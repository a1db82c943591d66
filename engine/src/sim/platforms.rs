//! Moving platforms: they go from their tile to (x+dx, y+dy) and back without pausing.

use super::Sim;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Platform {
    pub(super) p: i32,
    pub(super) dir: i8,
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) dx: i32,
    pub(super) dy: i32,
}

impl Sim {
    pub(super) fn update_platforms(&mut self) {
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
}
