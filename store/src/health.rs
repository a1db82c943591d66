//! Readiness: is the store reachable, and did the start-up checks pass?
//!
//! A background probe PINGs Redis every second and keeps the latest answer, so `/readyz`
//! answers at once and never piles requests onto a dead server. A *fatal* reason (the
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
    fatal: Option<String>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            inner: Arc::new(RwLock::new(Inner {
                probe: HealthState::NotReady("starting".into()),
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
        match &inner.fatal {
            Some(reason) => HealthState::NotReady(reason.clone()),
            None => inner.probe.clone(),
        }
    }

    pub fn set_probe(&self, state: HealthState) {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        inner.probe = state;
    }

    /// Marks horst not ready for good, with the reason operators see.
    pub fn set_fatal(&self, reason: impl Into<String>) {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        inner.fatal = Some(reason.into());
    }

    /// Probes `store` every `every` until `shutdown` turns true.
    pub async fn run_probe(
        self,
        store: Store,
        every: Duration,
        mut shutdown: watch::Receiver<bool>,
    ) {
        loop {
            let state = match tokio::time::timeout(Duration::from_secs(5), store.ping()).await {
                Ok(Ok(())) => HealthState::Ready,
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
}
