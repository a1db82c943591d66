//! Burst limits of the agent gateway and the client address they are keyed by.
//!
//! The contract: 120 requests per minute per IP address and 60 per minute per account, HTTP
//! 429 beyond. These are per API process (decision 5 in the design: governor in each process;
//! daily quotas are the ones counted in Redis). GCRA with a burst of the full minute's
//! allowance: a client may spend its minute at once, then gets one request per
//! `60 s / limit` back.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};

pub use governor::clock::FakeRelativeClock;

mod client_ip;
pub use client_ip::{ClientIp, TrustedProxies};

type Keyed<K, C> = RateLimiter<K, HashMapStateStore<K>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// Which burst limit was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Ip,
    Account,
}

/// A request refused by a burst limit; `retry_after` feeds the `Retry-After` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    pub scope: Scope,
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

/// One keyed limiter that forgets idle keys now and then, so memory stays bounded by the
/// clients of the last minute rather than every client ever seen.
struct Forgetful<K: Hash + Eq + Clone, C: Clock> {
    limiter: Keyed<K, C>,
    clock: C,
    checks: AtomicU64,
}

impl<K: Hash + Eq + Clone, C: Clock + Clone> Forgetful<K, C> {
    fn new(per_minute: u32, clock: C) -> Self {
        let n = NonZeroU32::new(per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        Forgetful {
            limiter: RateLimiter::new(
                Quota::per_minute(n),
                HashMapStateStore::new(Default::default()),
                clock.clone(),
            ),
            clock,
            checks: AtomicU64::new(0),
        }
    }

    fn check(&self, key: &K) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % 4096 == 4095 {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// The gateway's two burst limits.
pub struct BurstLimits<C: Clock = DefaultClock> {
    per_ip: Forgetful<IpAddr, C>,
    per_account: Forgetful<String, C>,
}

impl BurstLimits<DefaultClock> {
    pub fn new(per_ip_per_minute: u32, per_account_per_minute: u32) -> Self {
        Self::with_clock(
            per_ip_per_minute,
            per_account_per_minute,
            DefaultClock::default(),
        )
    }

    /// From `gateway.burst_per_ip_per_minute` and `gateway.burst_per_account_per_minute`.
    pub fn from_config(config: &horst_config::GatewayConfig) -> Self {
        Self::new(
            config.burst_per_ip_per_minute,
            config.burst_per_account_per_minute,
        )
    }
}

impl<C: Clock + Clone> BurstLimits<C> {
    /// With an explicit clock (tests use [`FakeRelativeClock`]).
    pub fn with_clock(per_ip_per_minute: u32, per_account_per_minute: u32, clock: C) -> Self {
        BurstLimits {
            per_ip: Forgetful::new(per_ip_per_minute, clock.clone()),
            per_account: Forgetful::new(per_account_per_minute, clock),
        }
    }

    /// Counts one request from `ip`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Limited> {
        self.per_ip.check(&ip).map_err(|retry_after| Limited {
            scope: Scope::Ip,
            retry_after,
        })
    }

    /// Counts one request of `account` (all its keys together).
    pub fn check_account(&self, account: &str) -> Result<(), Limited> {
        self.per_account
            .check(&account.to_string())
            .map_err(|retry_after| Limited {
                scope: Scope::Account,
                retry_after,
            })
    }
}

/// Counts events per key in a rolling window, for small caps such as "3 agent keys per network
/// in 24 hours" that must hold within one process between Redis checks. Not used for the
/// per-minute bursts (those are GCRA above).
#[derive(Default)]
pub struct WindowCounter {
    seen: std::sync::Mutex<HashMap<String, Vec<u64>>>,
}

impl WindowCounter {
    /// Records an event at `now_ms` unless `key` already has `cap` events within `window_ms`;
    /// returns the milliseconds until the oldest one leaves the window when refused.
    pub fn try_add(&self, key: &str, now_ms: u64, window_ms: u64, cap: usize) -> Result<(), u64> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let list = seen.entry(key.to_string()).or_default();
        list.retain(|t| now_ms.saturating_sub(*t) < window_ms);
        if list.len() >= cap {
            let oldest = list.iter().copied().min().unwrap_or(now_ms);
            return Err((oldest + window_ms).saturating_sub(now_ms));
        }
        list.push(now_ms);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_121st_request_in_a_minute_from_one_ip_is_refused() {
        let clock = FakeRelativeClock::default();
        let limits = BurstLimits::with_clock(120, 60, clock.clone());
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for i in 0..120 {
            assert!(limits.check_ip(ip).is_ok(), "request {} refused", i + 1);
        }
        let refused = limits.check_ip(ip).unwrap_err();
        assert_eq!(refused.scope, Scope::Ip);
        // One request comes back every 0.5 s.
        assert_eq!(refused.retry_after, Duration::from_millis(500));
        assert_eq!(refused.retry_after_seconds(), 1);
        // Another address is not affected.
        assert!(limits.check_ip("192.0.2.2".parse().unwrap()).is_ok());
        clock.advance(Duration::from_millis(500));
        assert!(limits.check_ip(ip).is_ok());
        assert!(limits.check_ip(ip).is_err());
        clock.advance(Duration::from_secs(60));
        for _ in 0..120 {
            assert!(limits.check_ip(ip).is_ok());
        }
    }

    #[test]
    fn the_61st_request_of_an_account_is_refused_across_its_keys() {
        let clock = FakeRelativeClock::default();
        let limits = BurstLimits::with_clock(120, 60, clock.clone());
        for _ in 0..60 {
            assert!(limits.check_account("agent-0000abcd").is_ok());
        }
        let refused = limits.check_account("agent-0000abcd").unwrap_err();
        assert_eq!(refused.scope, Scope::Account);
        assert_eq!(refused.retry_after, Duration::from_secs(1));
        assert!(limits.check_account("agent-0000abce").is_ok());
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        let l = |ms| Limited {
            scope: Scope::Ip,
            retry_after: Duration::from_millis(ms),
        };
        assert_eq!(l(0).retry_after_seconds(), 1);
        assert_eq!(l(1000).retry_after_seconds(), 1);
        assert_eq!(l(1001).retry_after_seconds(), 2);
        assert_eq!(l(12_000).retry_after_seconds(), 12);
    }

    #[test]
    fn window_counter_caps_and_forgets() {
        let w = WindowCounter::default();
        for t in 0..3 {
            assert!(w.try_add("net", t, 1000, 3).is_ok());
        }
        assert_eq!(w.try_add("net", 10, 1000, 3), Err(990));
        assert!(w.try_add("other", 10, 1000, 3).is_ok());
        assert!(w.try_add("net", 1000, 1000, 3).is_ok());
    }
}
