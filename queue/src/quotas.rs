//! The quota numbers in force, reloadable without a restart.
//!
//! The configuration (`[quotas]`, `queue.daily_seconds`, `queue.trust0_share_percent`) is
//! the first seed: a starting `horst api`/`horst up` stores its values only when none are
//! stored ([`seed_quotas`]), so a restart never undoes what an operator set at run time;
//! `horst admin quotas reload` (or `POST /api/admin/quotas/reload`) writes them from the
//! file as it is now (and refuses without a file). Every process reads the stored values
//! (key `quotas`, JSON), at most once a second, so a reload reaches every API process
//! within a second without a restart. Without a stored value a process uses its own
//! configuration.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use horst_config::{Config, QuotaConfig};
use horst_store::Store;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::{JobKind, QueueError};

/// How long a process trusts the values it read: a reload applies within this time.
const CACHE_FOR: Duration = Duration::from_secs(1);

/// A limit the queue does not enforce (operator rechecks have no daily quota).
pub(crate) const UNLIMITED: u64 = 1 << 50;

/// The reloadable numbers: per-tier daily limits, Labor candidates and storage budgets, and
/// the server's daily execution seconds with the trust-0 share. Names as in the config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quotas {
    pub quotas: QuotaConfig,
    pub daily_seconds: u64,
    pub trust0_share_percent: u32,
}

impl Quotas {
    pub fn from_config(config: &Config) -> Quotas {
        Quotas {
            quotas: config.quotas.clone(),
            daily_seconds: config.queue.daily_seconds,
            trust0_share_percent: config.queue.trust0_share_percent,
        }
    }

    /// The daily count of `kind` jobs a tier may admit.
    pub fn kind_limit(&self, trust: u8, kind: JobKind) -> u64 {
        let tier = self.quotas.tier(trust);
        match kind {
            JobKind::Playtest => tier.playtests as u64,
            JobKind::Simulate => tier.simulations as u64,
            JobKind::Submit => tier.submissions as u64,
            JobKind::Recheck => UNLIMITED,
        }
    }

    /// Saturating: an operator may set `daily_seconds` near `u64::MAX` to mean "no cap".
    pub fn trust0_cap_seconds(&self) -> u64 {
        (self.daily_seconds as u128 * self.trust0_share_percent as u128 / 100).min(u64::MAX as u128)
            as u64
    }
}

/// What is stored: the values and who wrote them when (shown by `quotas show`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredQuotas {
    #[serde(flatten)]
    pub values: Quotas,
    /// Who wrote them: `start` (a process starting) or the operator of a reload.
    pub written_by: String,
    /// When, ms since the Unix epoch (the Redis server's clock).
    pub written_at_ms: u64,
}

/// Writes the values every process will use (within a second).
pub async fn write_quotas(store: &Store, values: &Quotas, who: &str) -> Result<(), QueueError> {
    store_quotas(store, values, who, false).await.map(|_| ())
}

/// Stores the values only if none are stored (a starting API's configuration is the first
/// seed; what is stored wins). `true` when they were stored now.
pub async fn seed_quotas(store: &Store, values: &Quotas, who: &str) -> Result<bool, QueueError> {
    store_quotas(store, values, who, true).await
}

async fn store_quotas(
    store: &Store,
    values: &Quotas,
    who: &str,
    only_if_absent: bool,
) -> Result<bool, QueueError> {
    let mut conn = store.conn();
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut conn).await?;
    let stored = StoredQuotas {
        values: values.clone(),
        written_by: who.to_string(),
        written_at_ms: secs * 1000 + micros / 1000,
    };
    let json = serde_json::to_string(&stored)
        .map_err(|e| QueueError::Store(format!("cannot encode the quotas: {e}")))?;
    let mut set = redis::cmd("SET");
    set.arg(store.key("quotas")).arg(json);
    if only_if_absent {
        set.arg("NX");
    }
    let stored: Option<String> = set.query_async(&mut conn).await?;
    Ok(stored.is_some())
}

/// The stored values, if any. Unreadable JSON (written by a different version) counts as
/// none, so a process falls back to its configuration rather than refusing every job.
pub async fn read_quotas(store: &Store) -> Result<Option<StoredQuotas>, QueueError> {
    let raw: Option<String> = redis::cmd("GET")
        .arg(store.key("quotas"))
        .query_async(&mut store.conn())
        .await?;
    Ok(raw.and_then(|r| match serde_json::from_str(&r) {
        Ok(q) => Some(q),
        Err(e) => {
            tracing::warn!(error = %e, "stored quotas are unreadable; using the configuration's");
            None
        }
    }))
}

/// One process's copy of the values in force.
#[derive(Default)]
pub(crate) struct QuotaCache {
    slot: Mutex<Option<(Instant, Arc<Quotas>)>>,
}

impl QuotaCache {
    pub(crate) fn fresh(&self) -> Option<Arc<Quotas>> {
        let slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref()
            .filter(|(at, _)| at.elapsed() < CACHE_FOR)
            .map(|(_, q)| q.clone())
    }

    pub(crate) fn put(&self, q: Arc<Quotas>) {
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), q));
    }

    pub(crate) fn forget(&self) {
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_the_stored_shape() {
        let mut config = Config::default();
        config.quotas.trust0.simulations = 7;
        config.queue.daily_seconds = 1000;
        config.queue.trust0_share_percent = 30;
        let q = Quotas::from_config(&config);
        assert_eq!(q.kind_limit(0, JobKind::Simulate), 7);
        assert_eq!(q.kind_limit(2, JobKind::Recheck), UNLIMITED);
        assert_eq!(q.trust0_cap_seconds(), 300);
        let stored = StoredQuotas {
            values: q.clone(),
            written_by: "olga".into(),
            written_at_ms: 5,
        };
        let text = serde_json::to_string(&stored).unwrap();
        // The config file's names, so `quotas show` reads like the file.
        assert!(text.contains("\"daily_seconds\":1000"), "{text}");
        assert!(text.contains("\"labor_candidates\""), "{text}");
        let back: StoredQuotas = serde_json::from_str(&text).unwrap();
        assert_eq!(back, stored);
    }

    /// A daily budget set near `u64::MAX` (no cap, as the benchmarks set it) does not
    /// overflow the trust-0 share (it did, in a debug build: a panic on every admission).
    #[test]
    fn a_huge_daily_budget_does_not_overflow_the_trust0_share() {
        let mut config = Config::default();
        config.queue.daily_seconds = u64::MAX / 4;
        config.queue.trust0_share_percent = 30;
        assert_eq!(
            Quotas::from_config(&config).trust0_cap_seconds(),
            ((u64::MAX / 4) as u128 * 30 / 100) as u64
        );
        config.queue.daily_seconds = u64::MAX;
        config.queue.trust0_share_percent = 250;
        assert_eq!(Quotas::from_config(&config).trust0_cap_seconds(), u64::MAX);
    }
}
