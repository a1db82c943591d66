//! The state hash: the whole simulation state in a fixed byte layout (FORMAT.md, `stateHash`).

use super::{Sim, Status};
use sha2::{Digest, Sha256};

impl Sim {
    /// The whole state in a fixed little-endian layout (FORMAT.md, "State hash").
    pub fn state_bytes(&self, out: &mut Vec<u8>) {
        fn b(out: &mut Vec<u8>, v: bool) {
            out.push(v as u8);
        }
        fn i(out: &mut Vec<u8>, v: i32) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        fn u(out: &mut Vec<u8>, v: u32) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(b"GCVS\x01");
        u(out, self.clock as u32);
        out.push(match self.status {
            Status::Running => 0,
            Status::Won => 1,
            Status::Dead => 2,
        });
        out.extend_from_slice(&self.rng.state.to_le_bytes());
        let p = &self.player;
        for v in [p.x, p.y, p.vx, p.vy] {
            i(out, v);
        }
        for v in [p.on_ground, p.jump_held, p.boost_available, p.rising] {
            b(out, v);
        }
        out.extend_from_slice(&[p.coyote, p.shoot_cooldown, p.facing as u8]);
        out.extend_from_slice(&p.riding.to_le_bytes());
        out.push(p.ground as u8);
        out.extend_from_slice(&p.eggs.to_le_bytes());
        for pb in &self.pebbles {
            b(out, pb.active);
            for v in [pb.x, pb.y, pb.vx] {
                i(out, v);
            }
            out.push(pb.life);
        }
        u(out, self.dyn_tiles.len() as u32);
        for t in &self.dyn_tiles {
            out.push(t.state);
            out.extend_from_slice(&t.timer.to_le_bytes());
        }
        u(out, self.walkers.len() as u32);
        for w in &self.walkers {
            let (x, wait) = w.state(self.clock);
            i(out, x);
            out.push(w.dir as u8);
            u(out, wait);
            b(out, w.alive);
        }
        u(out, self.flyers.len() as u32);
        for f in &self.flyers {
            let (pos, wait) = f.state(self.clock);
            i(out, pos);
            out.push(f.dir as u8);
            u(out, wait);
            b(out, f.alive);
        }
        u(out, self.platforms.len() as u32);
        for pl in &self.platforms {
            i(out, pl.p);
            out.push(pl.dir as u8);
            for v in [pl.x, pl.y, pl.dx, pl.dy] {
                i(out, v);
            }
        }
        u(out, self.spawners.len() as u32);
        for s in &self.spawners {
            u(out, s.timer);
            for r in &s.rocks {
                b(out, r.active);
                for v in [r.x, r.y, r.vy] {
                    i(out, v);
                }
            }
        }
        u(out, self.taken.len() as u32);
        for &t in &self.taken {
            b(out, t);
        }
        out.extend_from_slice(&self.collected.to_le_bytes());
        out.extend_from_slice(&self.checkpoint.to_le_bytes());
    }

    /// `stateHash`: lowercase hex SHA-256 of `state_bytes`.
    pub fn state_hash(&self) -> String {
        let mut bytes = Vec::with_capacity(256);
        self.state_bytes(&mut bytes);
        hex::encode(Sha256::digest(&bytes))
    }
}
