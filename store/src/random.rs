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
}
