//! The workspace's one SHA-256 as lowercase hex: what a secret (an agent key, a token, a
//! session id) becomes where it is stored, the name of a content-addressed blob, the hash a
//! key carries instead of a subject someone typed, a request's fingerprint. Every request that
//! carries a credential hashes it, so the hex is written from a table, not through an
//! iterator of chars or `format!` per byte (about a tenth of the work).
//!
//! The engine keeps its own (`stateHash`, the map hash): it is built for WebAssembly too,
//! without this crate.

use sha2::{Digest, Sha256};

/// The lowercase hex SHA-256 of `bytes` (64 characters).
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes.as_ref());
    let mut out = String::with_capacity(2 * digest.len());
    for b in digest.iter() {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hex_is_hex_encode_of_the_digest() {
        for s in [
            "",
            "rca_0123",
            "a key with spaces and \u{e9}",
            &"x".repeat(1000),
        ] {
            assert_eq!(sha256_hex(s), hex::encode(Sha256::digest(s.as_bytes())));
        }
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha256_hex(b"abc"), sha256_hex(vec![b'a', b'b', b'c']));
    }
}
