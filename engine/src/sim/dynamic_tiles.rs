//! Cracked rock and crumbling ledges: the tiles whose block changes during a run.

use super::map::{Level, NO_DYN};
use super::palette::Block;
use super::Sim;

pub(super) const DYN_INTACT: u8 = 0;
pub(super) const DYN_SHAKING: u8 = 1;
pub(super) const DYN_GONE: u8 = 2;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct DynTile {
    pub(super) state: u8,
    pub(super) timer: u16,
}

/// The block at tile (tx, ty) given the dynamic tile states (see `Sim::block_at`).
#[inline]
pub(super) fn block_in(l: &Level, dyn_tiles: &[DynTile], tx: i32, ty: i32) -> Block {
    if tx < 0 || ty < 0 || tx >= l.width || ty >= l.height {
        return Block::Empty;
    }
    let i = (ty * l.width + tx) as usize;
    let Some(&b) = l.tiles.get(i) else {
        return Block::Empty;
    };
    if matches!(b, Block::Cracked | Block::Crumbling) {
        let d = l.dyn_index.get(i).copied().unwrap_or(NO_DYN);
        if d != NO_DYN
            && dyn_tiles
                .get(d as usize)
                .is_some_and(|t| t.state == DYN_GONE)
        {
            return Block::Empty;
        }
    }
    b
}

impl Sim {
    pub(super) fn trigger_crumbling(&mut self, l: i32, r: i32, ty: i32, from_above: bool) {
        let level = &*self.level;
        if !from_above || !level.has_crumbling {
            return;
        }
        for tx in l..r + 1 {
            if tx < 0 || tx >= level.width || ty < 0 || ty >= level.height {
                continue;
            }
            let i = (ty * level.width + tx) as usize;
            if level.tiles[i] != Block::Crumbling {
                continue;
            }
            let d = level.dyn_index[i];
            if d == NO_DYN {
                continue;
            }
            let t = &mut self.dyn_tiles[d as usize];
            if t.state == DYN_INTACT {
                t.state = DYN_SHAKING;
                t.timer = level.crumble_delay;
                self.shaking += 1;
            }
        }
    }

    pub(super) fn update_crumbling(&mut self) {
        if self.shaking == 0 {
            return;
        }
        for t in self.dyn_tiles.iter_mut() {
            if t.state == DYN_SHAKING {
                t.timer = t.timer.saturating_sub(1);
                if t.timer == 0 {
                    t.state = DYN_GONE;
                    self.shaking -= 1;
                }
            }
        }
    }
}
