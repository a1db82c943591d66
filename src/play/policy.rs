//! How `horst play` picks a move: the policy and its seeded PRNG.

/// How a move is picked from `legalActions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Policy {
    /// Always the first legal action (deterministic).
    First,
    /// A uniformly random legal action (seeded with `--seed`, so runs repeat).
    Random,
}

/// A small PRNG (the workspace's one SplitMix64, `horst_engine::SplitMix64`): enough for
/// picking moves, reproducible from its seed on every platform.
#[derive(Debug, Clone)]
pub struct Rng(horst_engine::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(horst_engine::SplitMix64::from_state(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift (the bias is below 2^-40 for any
    /// list of moves).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prng_is_reproducible_and_in_range() {
        let a: Vec<u64> = (0..5)
            .scan(Rng::new(42), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(Rng::new(42), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(
            a,
            (0..5)
                .scan(Rng::new(43), |r, _| Some(r.next_u64()))
                .collect::<Vec<_>>()
        );
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = Rng::new(1);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            seen[r.below(3)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }
}
