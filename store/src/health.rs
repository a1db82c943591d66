//! Readiness: is the store reachable, and did the start-up checks pass?
//!
//! A background probe PINGs Redis every second and keeps the latest answer, so `/readyz`
//! answers at once and never piles requests onto a dead server. Every
//! [`ServerCheck::every`] it also re-reads the server's eviction policy and AOF setting: an
//! operator's `CONFIG SET maxmemory-policy allkeys-lru` at run time would otherwise go
//! unnoticed until keys vanish, so an evicting server makes horst not ready (unless
//! `redis.allow_eviction`), and AOF turned off is logged. A *fatal* reason (the
//! private redis-server died) sticks: a later PING that happens to succeed against some
//! other process must not hide that the server horst started is gone.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::Store;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthState {
    Ready,
    NotReady(String),
}

/// Shared readiness, read by `/readyz` and the metrics.
#[derive(Clone)]
pub struct Health {
    inner: Arc<RwLock<Inner>>,
}

struct Inner {
    probe: HealthState,
    /// A known outage, said in its own words until it is over (the private redis-server
    /// being started again after a crash).
    outage: Option<String>,
    fatal: Option<String>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            inner: Arc::new(RwLock::new(Inner {
                probe: HealthState::NotReady("starting".into()),
                outage: None,
                fatal: None,
            })),
        }
    }
}

impl Health {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn state(&self) -> HealthState {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        match inner.fatal.as_ref().or(inner.outage.as_ref()) {
            Some(reason) => HealthState::NotReady(reason.clone()),
            None => inner.probe.clone(),
        }
    }

    pub fn set_probe(&self, state: HealthState) {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        inner.probe = state;
    }

    /// Marks horst not ready with `reason` until it is called again with `None` (and the
    /// probe then finds the store reachable).
    pub fn set_outage(&self, reason: Option<String>) {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        inner.outage = reason;
    }

    /// Marks horst not ready for good, with the reason operators see.
    pub fn set_fatal(&self, reason: impl Into<String>) {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        inner.fatal = Some(reason.into());
    }

    /// Probes `store` every `every` until `shutdown` turns true, and re-checks the server's
    /// settings as `check` says.
    pub async fn run_probe(
        self,
        store: Store,
        every: Duration,
        check: ServerCheck,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let mut next_check = tokio::time::Instant::now() + check.every;
        let mut unfit: Option<String> = None;
        let mut aof_warned = false;
        loop {
            let checked = tokio::time::Instant::now() >= next_check;
            if checked {
                next_check = tokio::time::Instant::now() + check.every;
                // Unreachable or refused (a managed service without CONFIG): the PING below
                // tells the first, and the second cannot be checked.
                if let Ok(Ok(facts)) =
                    tokio::time::timeout(Duration::from_secs(5), store.server_facts()).await
                {
                    unfit = evicting(&facts, check.allow_eviction).map(|policy| {
                        format!(
                            "Redis at {} now uses maxmemory-policy {policy}; horst needs noeviction, because eviction silently deletes jobs, revisions and sessions. Fix: `CONFIG SET maxmemory-policy noeviction` (and in redis.conf), or set redis.allow_eviction",
                            store.target()
                        )
                    });
                    let aof_off = facts.appendonly == Some(false);
                    if aof_off && !aof_warned {
                        tracing::warn!(redis = %store.target(), "Redis has AOF off now (appendonly no): a crash of Redis loses recent jobs, revisions and sessions; set `appendonly yes`");
                    }
                    aof_warned = aof_off;
                }
            }
            // One server by its URL that turned into a replica at run time (`REPLICAOF`, a
            // failover without sentinels configured) refuses every write: asked at every
            // server check, and on every round while writes are refused (the API process's
            // presence write meets `READONLY` within 2 s), so `/readyz` and the log name it
            // with the fix instead of Redis's bare `READONLY`.
            if store.is_one_server() && (checked || store.writes_refused().is_some()) {
                if let Ok(Ok(primary)) =
                    tokio::time::timeout(Duration::from_secs(5), store.replica_of()).await
                {
                    store.note_replica_of(primary);
                }
            }
            let state = match tokio::time::timeout(Duration::from_secs(5), store.ping()).await {
                // A server whose disk fails (`MISCONF`) refuses PING with its writes, and
                // answers reads: it refuses writes, as at `maxmemory`, which `/readyz` says
                // in `writes` while staying ready (every process is alike). Taken for a server
                // that does not answer, it turned every API process not ready at once.
                Ok(Err(crate::StoreError::Command(e))) if crate::refuses_writes(&e) => match &unfit
                {
                    Some(reason) => HealthState::NotReady(reason.clone()),
                    None => HealthState::Ready,
                },
                Ok(Ok(())) => match &unfit {
                    Some(reason) => HealthState::NotReady(reason.clone()),
                    None => HealthState::Ready,
                },
                Ok(Err(e)) => HealthState::NotReady(format!(
                    "Redis at {} does not answer: {e}",
                    store.target()
                )),
                Err(_) => HealthState::NotReady(format!(
                    "Redis at {} did not answer PING within 5 s",
                    store.target()
                )),
            };
            if state != self.state() {
                match &state {
                    HealthState::Ready => {
                        tracing::info!(redis = %store.target(), "Redis reachable; ready")
                    }
                    HealthState::NotReady(reason) => tracing::error!(reason = %reason, "not ready"),
                }
            }
            self.set_probe(state);
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.changed() => return,
            }
        }
    }
}

/// How often the probe re-reads the server's eviction policy and AOF setting, and whether
/// an evicting server is allowed (`redis.allow_eviction`).
#[derive(Debug, Clone, Copy)]
pub struct ServerCheck {
    pub every: Duration,
    pub allow_eviction: bool,
}

/// The eviction policy that makes the server unfit, if it has one.
fn evicting(facts: &crate::ServerFacts, allow_eviction: bool) -> Option<String> {
    match facts.maxmemory_policy.as_deref() {
        Some("noeviction") | None => None,
        Some(_) if allow_eviction => None,
        Some(policy) => Some(policy.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatal_sticks() {
        let h = Health::new();
        h.set_probe(HealthState::Ready);
        assert_eq!(h.state(), HealthState::Ready);
        h.set_fatal("gone");
        h.set_probe(HealthState::Ready);
        assert_eq!(h.state(), HealthState::NotReady("gone".into()));
    }

    #[test]
    fn an_outage_holds_until_it_is_over_and_a_fatal_reason_outranks_it() {
        let h = Health::new();
        h.set_probe(HealthState::Ready);
        h.set_outage(Some("restarting".into()));
        assert_eq!(h.state(), HealthState::NotReady("restarting".into()));
        h.set_outage(None);
        assert_eq!(h.state(), HealthState::Ready);
        h.set_outage(Some("restarting".into()));
        h.set_fatal("gone");
        assert_eq!(h.state(), HealthState::NotReady("gone".into()));
    }
}
