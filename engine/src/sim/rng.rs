//! The engine's own random number generator: SplitMix64. Small, fast, and fully specified here,
//! so that the same seed gives the same numbers on every platform and in every future Rust or
//! crate version (which `rand`'s `StdRng` does not promise).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rng {
    pub state: u64,
}

impl Rng {
    pub fn new(seed: u32) -> Rng {
        // Mixing the seed with a constant keeps seed 0 from starting at state 0.
        Rng {
            state: (seed as u64) ^ 0x5647_4F47_4C45_5631,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..=max`.
    pub fn upto(&mut self, max: u32) -> u32 {
        if max == 0 {
            return 0;
        }
        let r = self.next_u64() >> 32;
        ((r * (max as u64 + 1)) >> 32) as u32
    }
}
