//! The engine's own random number generator: SplitMix64. Small, fast, and fully specified here,
//! so that the same seed gives the same numbers on every platform and in every future Rust or
//! crate version (which `rand`'s `StdRng` does not promise). Exported as
//! `horst_engine::SplitMix64` for the rest of the workspace: one copy of the algorithm.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    pub state: u64,
}

impl SplitMix64 {
    /// The simulation's generator for a replay's seed.
    pub fn new(seed: u32) -> SplitMix64 {
        // Mixing the seed with a constant keeps seed 0 from starting at state 0.
        SplitMix64::from_state((seed as u64) ^ 0x5647_4F47_4C45_5631)
    }

    /// A generator whose state is `state`, as in the published algorithm (its first output
    /// for state 0 is `0xE220_A839_7B1D_CDAF`).
    pub const fn from_state(state: u64) -> SplitMix64 {
        SplitMix64 { state }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..=max` (the simulation's draws).
    pub fn upto(&mut self, max: u32) -> u32 {
        if max == 0 {
            return 0;
        }
        let r = self.next_u64() >> 32;
        ((r * (max as u64 + 1)) >> 32) as u32
    }

    /// A number in `0..n` by multiply-shift over all 64 bits (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}
