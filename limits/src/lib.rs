//! Burst limits and the client address they are keyed by.
//!
//! The contract: 120 requests per minute per address and 60 per minute per account, HTTP
//! 429 beyond; agent-key creation and sign-in are limited the same way. The limits hold for
//! the whole deployment, not per API process (product decision 5): each request is counted
//! in Redis by one script (`lua/burst.lua`), a sliding log of accepted requests, so no
//! window of the limit's length ever holds more than its maximum, whichever processes
//! served them.
//!
//! The cheap first filter is a per-process memory of refusals: Redis answered "not before
//! T" (when the oldest logged request leaves the window), and since entries only ever leave
//! the window by expiring, no slot can free before T. So until T this process refuses that
//! subject by itself, exactly as Redis would, and a client hammering a closed window costs
//! no Redis work. (An in-process GCRA such as governor cannot be that filter: it counts
//! requests Redis refused, and would go on refusing after the deployment-wide window has
//! room again.)
//!
//! When Redis cannot count (unreachable, or refusing writes: out of memory, a failing disk),
//! a request is not refused for that: each process counts its own requests in memory with
//! the same sliding window until Redis counts again (logged once when it starts and once
//! when it ends). The limit then holds per process instead of per deployment, which beats
//! turning away the anonymous read tools that need nothing else from Redis. Meanwhile Redis
//! is asked again at most every 10 s, by one request: a hung Redis answers nothing within
//! its response timeout, and every request would otherwise wait that long to be counted.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_store::script::{Argv, Decl, Registered, Script, Writes};
use horst_store::Store;

mod client_ip;
pub mod keys;
pub use client_ip::{canonical, ClientIp, TrustedProxies};

/// One burst limit: at most `max` requests in any `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Part of the Redis key and of log lines (`mcp_address`, `sign_in_name`, ...).
    pub name: &'static str,
    pub max: u32,
    pub window: Duration,
}

impl Limit {
    pub const fn per_minute(name: &'static str, max: u32) -> Limit {
        Limit {
            name,
            max,
            window: Duration::from_secs(60),
        }
    }
}

/// A request refused by a burst limit; `retry_after` feeds the `Retry-After` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    /// The limit's `name`.
    pub limit: &'static str,
    pub retry_after: Duration,
}

impl Limited {
    /// Whole seconds for `Retry-After`, rounded up and at least 1 (0 would invite a retry storm).
    pub fn retry_after_seconds(&self) -> u64 {
        let d = self.retry_after;
        let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
        secs.max(1)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BurstError {
    #[error("burst limit {}: retry after {} s", .0.limit, .0.retry_after_seconds())]
    Limited(Limited),
    /// Redis could not count the request; the caller decides (the API answers 503).
    #[error("cannot count the request: {0}")]
    Store(#[from] redis::RedisError),
}

/// `lua/burst.lua`: `(1, 0)` accepted, `(0, retry_after_ms)` refused. A lost count after a
/// failover lets at most one window's requests through again: not worth a `WAIT` on every
/// request.
static BURST: Script<(u8, u64)> = Script::new(Decl {
    file: horst_store::lua!("lua/burst.lua"),
    keys: 1,
    argv: Argv::Exactly(3),
    writes: Writes::PrimaryOnly,
});

/// The scripts of this crate, for the tidy test.
pub fn scripts() -> Vec<&'static dyn Registered> {
    vec![&BURST]
}

/// Refusals remembered per process: (limit, subject hash) -> not before.
type Refusals = HashMap<(&'static str, String), Instant>;

/// At most this many remembered refusals; beyond it the expired ones are dropped, and if
/// that is not enough the memory starts afresh (it is only a filter: Redis decides).
const MAX_REMEMBERED: usize = 10_000;

/// The deployment-wide burst limits of one process. Cheap to clone.
#[derive(Clone)]
pub struct BurstLimits {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    /// Makes each request's log member unique across processes and within one.
    nonce: u64,
    counter: AtomicU64,
    refused: Mutex<Refusals>,
    /// Counting in this process because Redis cannot (see the module doc).
    local: AtomicBool,
    /// While counting locally: Redis is not asked again for a while (a hung Redis answers
    /// nothing within its response timeout of seconds, and every request would wait that
    /// long before being counted here); then one request asks while the others count here.
    hold: horst_store::UnreachableHold,
    logs: Mutex<LocalLogs>,
}

/// How long Redis is not asked again after it could not count a request (longer than its
/// response timeout), and while one request asks it again.
const LOCAL_HOLD: Duration = Duration::from_secs(10);

/// The in-process sliding logs used while Redis cannot count: (limit, subject hash) ->
/// times of accepted requests.
type LocalLogs = HashMap<(&'static str, String), VecDeque<Instant>>;

impl BurstLimits {
    pub fn new(store: Store) -> Self {
        // Uniqueness, not secrecy.
        let nonce = u64::from_le_bytes(horst_store::random::id_bytes::<8>());
        BurstLimits {
            inner: Arc::new(Inner {
                store,
                nonce,
                counter: AtomicU64::new(0),
                refused: Mutex::new(HashMap::new()),
                local: AtomicBool::new(false),
                hold: horst_store::UnreachableHold::new(LOCAL_HOLD),
                logs: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Counts one request of `subject` (an address, an account name, a sign-in name)
    /// against `limit`. Subjects are stored only as hashes.
    pub async fn check(&self, limit: &Limit, subject: &str) -> Result<(), BurstError> {
        let hash = subject_hash(subject);
        let now = Instant::now();
        if let Some(until) = self.remembered(limit.name, &hash, now) {
            return Err(BurstError::Limited(Limited {
                limit: limit.name,
                retry_after: until - now,
            }));
        }
        let inner = &self.inner;
        if inner.local.load(Ordering::Relaxed) && !inner.hold.ask(now) {
            return self.count_locally(limit, hash, now);
        }
        let member = format!(
            "{:016x}-{}",
            inner.nonce,
            inner.counter.fetch_add(1, Ordering::Relaxed)
        );
        let key = keys::burst(&inner.store, limit.name, &hash);
        let counted = BURST
            .call(&inner.store)
            .key(key)
            .arg(limit.max.max(1))
            .arg((limit.window.as_millis() as u64).max(1))
            .arg(member)
            .run()
            .await;
        let (accepted, retry_ms) = match counted {
            Ok(r) => {
                inner.hold.answered();
                if inner.local.swap(false, Ordering::Relaxed) {
                    tracing::info!("burst limits are counted in Redis again");
                    inner.logs.lock().unwrap_or_else(|p| p.into_inner()).clear();
                }
                r
            }
            Err(e) if horst_store::is_unreachable(&e) => {
                inner.hold.unreachable(Instant::now());
                if !inner.local.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "cannot count burst limits in Redis; counting in this process until it can (the limits hold per process meanwhile)");
                }
                return self.count_locally(limit, hash, now);
            }
            Err(e) => return Err(e.into()),
        };
        if accepted == 1 {
            return Ok(());
        }
        let retry_after = Duration::from_millis(retry_ms.max(1));
        self.remember(limit.name, hash, now + retry_after);
        Err(BurstError::Limited(Limited {
            limit: limit.name,
            retry_after,
        }))
    }

    /// One request against `limit` in this process's own sliding log.
    fn count_locally(&self, limit: &Limit, hash: String, now: Instant) -> Result<(), BurstError> {
        let mut logs = self.inner.logs.lock().unwrap_or_else(|p| p.into_inner());
        if logs.len() >= MAX_REMEMBERED {
            logs.retain(|_, log| log.back().is_some_and(|t| now - *t < limit.window));
            if logs.len() >= MAX_REMEMBERED {
                logs.clear();
            }
        }
        let log = logs.entry((limit.name, hash)).or_default();
        while log.front().is_some_and(|t| now - *t >= limit.window) {
            log.pop_front();
        }
        if log.len() < limit.max.max(1) as usize {
            log.push_back(now);
            return Ok(());
        }
        let oldest = log.front().copied().unwrap_or(now);
        Err(BurstError::Limited(Limited {
            limit: limit.name,
            retry_after: (oldest + limit.window).saturating_duration_since(now),
        }))
    }

    fn remembered(&self, limit: &'static str, hash: &str, now: Instant) -> Option<Instant> {
        let refused = self.inner.refused.lock().unwrap_or_else(|p| p.into_inner());
        refused
            .get(&(limit, hash.to_string()))
            .copied()
            .filter(|until| *until > now)
    }

    fn remember(&self, limit: &'static str, hash: String, until: Instant) {
        let mut refused = self.inner.refused.lock().unwrap_or_else(|p| p.into_inner());
        if refused.len() >= MAX_REMEMBERED {
            let now = Instant::now();
            refused.retain(|_, t| *t > now);
            if refused.len() >= MAX_REMEMBERED {
                refused.clear();
            }
        }
        refused.insert((limit, hash), until);
    }
}

/// Keys never carry the subject itself (an address, a name someone typed).
fn subject_hash(subject: &str) -> String {
    let mut hex = horst_store::digest::sha256_hex(subject);
    hex.truncate(32);
    hex
}

/// The gateway's burst limits, from `gateway.burst_per_ip_per_minute` and
/// `gateway.burst_per_account_per_minute`.
#[derive(Debug, Clone, Copy)]
pub struct GatewayLimits {
    /// Per client address: the MCP endpoint and agent-key creation.
    pub per_address: Limit,
    /// Per account, all its keys together.
    pub per_account: Limit,
}

impl GatewayLimits {
    pub fn from_config(config: &horst_config::GatewayConfig) -> Self {
        GatewayLimits {
            per_address: Limit::per_minute("address", config.burst_per_ip_per_minute),
            per_account: Limit::per_minute("account", config.burst_per_account_per_minute),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        let l = |ms| Limited {
            limit: "address",
            retry_after: Duration::from_millis(ms),
        };
        assert_eq!(l(0).retry_after_seconds(), 1);
        assert_eq!(l(1000).retry_after_seconds(), 1);
        assert_eq!(l(1001).retry_after_seconds(), 2);
        assert_eq!(l(12_000).retry_after_seconds(), 12);
    }

    #[test]
    fn subjects_are_hashed_and_distinct() {
        let a = subject_hash("192.0.2.1");
        assert_eq!(a.len(), 32);
        assert!(!a.contains("192"));
        assert_ne!(a, subject_hash("192.0.2.2"));
        assert_eq!(a, subject_hash("192.0.2.1"));
    }
}
