//! Random ids and secrets from the OS: one place for the workspace's random ids (job ids,
//! session ids, key material, board and revision ids).

use std::sync::atomic::{AtomicU64, Ordering};

/// `n` random bytes for a secret (a key, a JWT secret): an OS RNG failure is an error, never
/// weaker bytes.
pub fn secret_bytes(n: usize) -> Result<Vec<u8>, String> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| format!("the OS random source failed: {e}"))?;
    Ok(b)
}

/// `n` random bytes for a secret, as lowercase hex (2 `n` digits).
pub fn secret_hex(n: usize) -> Result<String, String> {
    secret_bytes(n).map(hex::encode)
}

/// `N` random bytes for an id, which must be unique, not secret: if the OS RNG fails, the
/// clock and a process counter stand in (still distinct within a process).
pub fn id_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if getrandom::fill(&mut b).is_err() {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let mixed = t ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32);
        for (i, byte) in b.iter_mut().enumerate() {
            *byte = mixed.rotate_left(8 * i as u32) as u8;
        }
    }
    b
}

/// A 64-bit value no other call in this process returns, cheap enough for every request
/// (no system call): a random key drawn once per process plus a counter, through
/// SplitMix64's finaliser (a bijection, so distinct counters give distinct values). Across
/// processes values collide with the odds of random 64-bit ones. **Not secret**: from one
/// value the next ones can be computed, so it is for log correlation and internal tokens,
/// never for ids a caller could use to reach something.
pub fn process_unique_u64() -> u64 {
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let key = *KEY.get_or_init(|| u64::from_le_bytes(id_bytes::<8>()));
    let mut z = NEXT.fetch_add(1, Ordering::Relaxed).wrapping_add(key);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `N` random bytes for an id, as lowercase hex.
pub fn id_hex<const N: usize>() -> String {
    hex::encode(id_bytes::<N>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_secrets_have_their_length_and_differ() {
        assert_eq!(id_hex::<8>().len(), 16);
        assert_ne!(id_hex::<8>(), id_hex::<8>());
        assert_eq!(secret_hex(16).unwrap().len(), 32);
        assert_ne!(secret_bytes(16).unwrap(), secret_bytes(16).unwrap());
    }

    #[test]
    fn process_unique_values_do_not_repeat_across_threads() {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| (0..5_000).map(|_| process_unique_u64()).collect::<Vec<_>>())
            })
            .collect();
        let mut all = std::collections::HashSet::new();
        for t in threads {
            for v in t.join().unwrap() {
                assert!(all.insert(v), "{v:x} came twice");
            }
        }
        assert_eq!(all.len(), 20_000);
    }
}
