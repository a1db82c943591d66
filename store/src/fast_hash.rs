//! A fast hasher for maps whose keys no client chooses: ids the server minted (session ids),
//! route templates, digests under the process's own key. std's SipHash is there to resist
//! a client who picks keys that collide (HashDoS); these maps' keys give a client no such
//! choice, and SipHash's rounds were a few percent of the API's instructions an action
//! (docs/benchmarks.md, "Sessions, twentieth round"). Maps keyed by anything a client
//! sends (query strings, header names, names) keep std's hasher.
//!
//! Each 8 bytes of a key are folded into the state by one 64x64->128-bit multiply (the high
//! and low halves xored, as foldhash and wyhash do), from a seed drawn once per process.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
const FINISH: u64 = 0xD6E8_FEB8_6659_FD93;

fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Builds [`FastHasher`]s; the seed is the process's, so a `HashMap` of these is `Default`.
#[derive(Clone, Copy, Debug)]
pub struct FastKeys {
    seed: u64,
}

impl Default for FastKeys {
    fn default() -> Self {
        static SEED: OnceLock<u64> = OnceLock::new();
        let seed = *SEED.get_or_init(|| u64::from_le_bytes(crate::random::id_bytes::<8>()) | 1);
        FastKeys { seed }
    }
}

impl BuildHasher for FastKeys {
    type Hasher = FastHasher;

    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.seed)
    }
}

/// The hasher of [`FastKeys`].
#[derive(Clone, Copy, Debug)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.0 = fold(self.0 ^ u64::from_le_bytes(b), MUL);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            // The length goes in too: "a" and "a\0" differ.
            let tail = u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59);
            self.0 = fold(self.0 ^ tail, MUL);
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u16(&mut self, v: u16) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = fold(self.0 ^ v, MUL);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        fold(self.0, FINISH)
    }
}

/// A `HashMap` with [`FastKeys`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, FastKeys>;

/// A `HashSet` with [`FastKeys`].
pub type FastSet<K> = std::collections::HashSet<K, FastKeys>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Session ids differ only in their last 8 hex digits: their hashes must still spread
    /// over every bucket of a table, low bits and high (hashbrown takes the bucket from the
    /// low bits and a tag from the top 7).
    #[test]
    fn ids_that_differ_in_a_few_characters_spread_over_low_and_high_bits() {
        let keys = FastKeys::default();
        let n = 1 << 14;
        let mut low = vec![0u32; 1 << 10];
        let mut high = [0u32; 128];
        for i in 0..n {
            let h = keys.hash_one(format!("ses_beef{:08x}", i * 7919));
            low[(h & 0x3ff) as usize] += 1;
            high[(h >> 57) as usize] += 1;
        }
        // 16 a bucket on average; a hash that ignored the varying digits would pile them up.
        assert!(low.iter().all(|&c| (2..=48).contains(&c)), "{low:?}");
        assert!(high.iter().all(|&c| (64..=224).contains(&c)), "{high:?}");
    }

    #[test]
    fn equal_keys_hash_equal_and_neighbours_differ() {
        let keys = FastKeys::default();
        assert_eq!(
            keys.hash_one("ses_0001"),
            keys.hash_one(String::from("ses_0001"))
        );
        let all = ["", "a", "a\0", "ab", "abcdefgh", "abcdefgh\0", "abcdefghi"];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(keys.hash_one(a.as_bytes()), keys.hash_one(b.as_bytes()));
            }
        }
        let mut m: FastMap<String, u32> = FastMap::default();
        m.insert("x".into(), 1);
        assert_eq!(m.get("x"), Some(&1));
    }
}
