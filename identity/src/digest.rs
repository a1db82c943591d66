//! The one way a secret (an agent key, a token, a session id) becomes what is stored: the
//! lowercase hex of its SHA-256. Every request that carries a credential hashes it, so the hex
//! is written from a table, not through an iterator of chars (about a tenth of the work).

use sha2::{Digest, Sha256};

/// The lowercase hex SHA-256 of `secret` (64 characters).
pub(crate) fn sha256_hex(secret: &str) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(secret.as_bytes());
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
    }
}
