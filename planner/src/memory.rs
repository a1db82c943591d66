//! The search's memory, in bytes: what its data structures hold, counted from their capacities,
//! so a budget in bytes can end the search before the process grows past it.
//!
//! The search holds four things per stage: its nodes (a `Vec`), the keys of the states it has
//! seen (a hash set), its open list (a binary heap) and snapshots of the simulations it
//! expanded (`Sim` clones). The first three are counted exactly from their capacities (the
//! hash set's from its bucket count, which `capacity` determines). A `Sim` clone is its own
//! size plus its vectors, which `clone` allocates at exactly their lengths; the element sizes
//! below are the engine's, and `tests/memory.rs` checks the sum against the bytes a counting
//! allocator sees a clone ask for, so a change to the engine's layout cannot make the count
//! quietly wrong.
//!
//! Growth is counted before it happens: a `Vec` or a hash table that grows allocates its new
//! buffer while the old one is still alive, so [`Account::peak_if_grown`] adds the largest
//! such buffer the next batch could allocate. What the allocator keeps per allocation beyond
//! the bytes asked for is small against the budget (one allocation per vector, not per state)
//! and the RSS test's margin covers it.

use horst_engine::sim::palette::EntityKind;
use horst_engine::{Block, Map, Sim};
use std::mem::size_of;

/// Bytes of one element of each of a `Sim`'s vectors (see the module documentation; checked
/// by `tests/memory.rs`): dynamic tiles (cracked rock and crumbling ledges), walkers, flyers,
/// platforms, rock-fall spawners (with their four rocks), berries.
pub const DYN_TILE: u64 = 4;
pub const WALKER: u64 = 48;
pub const FLYER: u64 = 48;
pub const PLATFORM: u64 = 24;
pub const SPAWNER: u64 = 68;
pub const BERRY: u64 = 1;

/// The bytes one `Sim` of `map` takes: the struct itself (boxed in the search) and its
/// vectors.
pub fn sim_bytes(map: &Map) -> u64 {
    let dyn_tiles = map
        .tiles()
        .iter()
        .filter(|&&b| b == Block::Cracked || b == Block::Crumbling)
        .count() as u64;
    let count = |k: EntityKind| map.entities().iter().filter(|e| e.kind == k).count() as u64;
    size_of::<Sim>() as u64
        + dyn_tiles * DYN_TILE
        + count(EntityKind::Walker) * WALKER
        + count(EntityKind::Flyer) * FLYER
        + count(EntityKind::Platform) * PLATFORM
        + count(EntityKind::Rockfall) * SPAWNER
        + count(EntityKind::Collectible) * BERRY
}

/// Bytes of a `Vec<T>` buffer of `capacity` elements.
pub fn vec_bytes<T>(capacity: usize) -> u64 {
    (capacity * size_of::<T>()) as u64
}

/// Buckets of a hash table (std's, hashbrown) whose `capacity()` is `capacity`: below 8
/// buckets one is always free, from 8 on an eighth is.
fn buckets(capacity: usize) -> u64 {
    match capacity {
        0 => 0,
        c if c < 7 => c as u64 + 1,
        c => c as u64 / 7 * 8,
    }
}

/// Bytes of a hash table of `T` whose `capacity()` is `capacity`: per bucket the element and
/// one control byte, plus one group (16) of control bytes.
pub fn hash_bytes<T>(capacity: usize) -> u64 {
    match buckets(capacity) {
        0 => 0,
        b => b * (size_of::<T>() as u64 + 1) + 16,
    }
}

/// The bytes a hash table of `T` of `capacity` allocates when it next grows (twice the
/// buckets).
pub fn hash_growth<T>(capacity: usize) -> u64 {
    match buckets(capacity) {
        0 => 4 * (size_of::<T>() as u64 + 1) + 16,
        b => 2 * b * (size_of::<T>() as u64 + 1) + 16,
    }
}

/// A `Vec` that holds `len` of `capacity` and must take `more`: the buffer it then allocates
/// (twice the capacity, or what it needs), 0 if it need not grow.
pub fn vec_growth<T>(len: usize, capacity: usize, more: usize) -> u64 {
    if len + more <= capacity {
        0
    } else {
        vec_bytes::<T>((2 * capacity).max(len + more).max(4))
    }
}

/// What the search holds now, and the most it could hold during the next batch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Account {
    pub now: u64,
    /// Buffers the next batch may allocate while the old ones are still alive.
    pub growth: u64,
}

impl Account {
    pub fn peak_if_grown(&self) -> u64 {
        self.now + self.growth
    }
}
