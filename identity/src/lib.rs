//! Who is calling, and what they may do: every credential horst knows, in one crate.
//!
//! - [`people`]: people's game accounts with PHC passwords (Argon2id, no common password),
//!   sign-in, sign-up within caps, the operator role, the sign-up switch.
//! - [`sign_in_limits`]: failed sign-ins per name and client, growing waits, no lockout of an
//!   owner by others' failures.
//! - [`web_sessions`]: the browser sessions of `/account` and `/admin` (cookie ids stored as
//!   SHA-256, CSRF tokens, an index per person and per admin token).
//! - [`admin_tokens`]: the operator's rotating tokens for the REST admin API and `/admin`.
//! - [`accounts`]: agent accounts and their MCP keys (self-service within caps, or made by
//!   the operator), the key check of every MCP request.
//! - [`auth`]: RCADIA agent tokens with scopes, people's HS256 JWTs (signed with the key of
//!   [`jwt_key`], a file outside Redis), and the revocation epoch
//!   that lets every process refuse a revoked credential within a second.
//!
//! Above it: the gateway (its key tools' caller is an [`accounts::Account`]), the RCADIA
//! routes (an [`auth::Identity`]), the operator's console (`horst-operator`, which audits
//! the changes made here) and the API's extractors. Below it: the store only.
//!
//! Architecture invariant: secrets (keys, tokens, session ids) are stored only as hashes and
//! passwords only as PHC strings; none is ever logged.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod accounts;
pub mod admin_tokens;
pub mod auth;
mod error;
pub mod jwt_key;
pub mod people;
mod scripts;
pub mod sign_in_limits;
pub mod web_sessions;

pub use error::{IdentityError, KeyCap};

/// Every Lua script of this crate declared in the script registry, for the tidy test.
pub fn scripts() -> Vec<&'static dyn horst_store::script::Registered> {
    let mut all: Vec<&'static dyn horst_store::script::Registered> = Vec::new();
    all.extend(sign_in_limits::scripts());
    all.extend(people::scripts());
    all.extend(web_sessions::scripts());
    all.extend(admin_tokens::scripts());
    all.extend(auth::scripts());
    all.extend(scripts::scripts());
    all
}

/// `bytes` random bytes from the OS as hex (key material and ids; an RNG failure is an error).
pub(crate) fn random_hex(bytes: usize) -> Result<String, IdentityError> {
    horst_store::random::secret_hex(bytes).map_err(IdentityError::Internal)
}

/// The Redis server's clock in milliseconds (one clock for every process).
pub(crate) async fn redis_now_ms(store: &horst_store::Store) -> Result<u64, redis::RedisError> {
    let (s, us): (u64, u64) = redis::cmd("TIME").query_async(&mut store.conn()).await?;
    Ok(s * 1000 + us / 1000)
}

/// Milliseconds since the epoch as RFC 3339 UTC (`2026-11-30T23:59:59.123Z`).
pub use horst_dates::rfc3339_ms as rfc3339;
