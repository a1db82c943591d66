//! Burst limits of sign-in and sign-up, per client address and per account name, for the
//! whole deployment (counted in Redis, so another API process is no way around them).
//!
//! A minimal fixed-window counter (one minute, Redis's clock), written here because the
//! deployment-wide burst limits of `horst-limits` were not on main yet when this was built;
//! [`check`] is the one function to point at them once they are.
//!
//! Layout (under the store prefix): `signin:addr:<address>:<minute>` and
//! `signin:name:<sha256 of the name>:<minute>` counters, expiring after two minutes.

use std::net::IpAddr;

use horst_store::Store;
use sha2::{Digest, Sha256};

use crate::error::ToolError;

/// The numbers in force (`gateway.sign_in_per_ip_per_minute`,
/// `gateway.sign_in_per_name_per_minute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignInLimits {
    pub per_address_per_minute: u32,
    pub per_name_per_minute: u32,
}

impl SignInLimits {
    pub fn from_config(c: &horst_config::GatewayConfig) -> Self {
        SignInLimits {
            per_address_per_minute: c.sign_in_per_ip_per_minute,
            per_name_per_minute: c.sign_in_per_name_per_minute,
        }
    }
}

/// Which limit refused an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Address,
    Name,
}

/// An attempt over a limit; try again after `retry_after_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    pub scope: Scope,
    pub retry_after_seconds: u64,
}

const COUNT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1])
local minute = math.floor(now / 60)
local wait = 60 - (now % 60)
local a = ARGV[1] .. 'signin:addr:' .. ARGV[2] .. ':' .. minute
local n = redis.call('INCR', a)
if n == 1 then redis.call('EXPIRE', a, 120) end
if n > tonumber(ARGV[4]) then return {'address', wait} end
if ARGV[3] ~= '' then
  local k = ARGV[1] .. 'signin:name:' .. ARGV[3] .. ':' .. minute
  local m = redis.call('INCR', k)
  if m == 1 then redis.call('EXPIRE', k, 120) end
  if m > tonumber(ARGV[5]) then return {'name', wait} end
end
return {'ok', 0}"#;

/// Counts one attempt from `address` for `name` (empty: a sign-up, counted per address only).
pub async fn check(
    store: &Store,
    limits: SignInLimits,
    address: IpAddr,
    name: &str,
) -> Result<Result<(), Limited>, ToolError> {
    let name_key = if name.is_empty() {
        String::new()
    } else {
        hex::encode(Sha256::digest(name.as_bytes()))
    };
    let (status, wait): (String, u64) = redis::Script::new(COUNT)
        .arg(store.key(""))
        .arg(address.to_string())
        .arg(name_key)
        .arg(limits.per_address_per_minute)
        .arg(limits.per_name_per_minute)
        .invoke_async(&mut store.conn())
        .await?;
    let scope = match status.as_str() {
        "address" => Scope::Address,
        "name" => Scope::Name,
        _ => return Ok(Ok(())),
    };
    Ok(Err(Limited {
        scope,
        retry_after_seconds: wait.max(1),
    }))
}
