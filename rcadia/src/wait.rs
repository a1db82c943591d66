//! Long-poll waits: subscribe to the session's channel first, then read, so a change between
//! the read and the wait is never missed. Wake-ups come through the process's one pub/sub
//! listener (one pattern subscription per process, fanned out in memory).
//!
//! A stored write publishes its new `rev` (`store.rs`): a waiter whose process holds that
//! record (the writer's process, in flight or stored, or a waiter that already read it) or a
//! later stored one takes it from the cache and reads nothing from Redis; others read it
//! once, which caches it for every other waiter of the process. A wake-up without a payload (a reconnect, an apply that stored nothing)
//! makes it read. A slow re-read covers lost messages, and catches up a due transition
//! nobody fired (a lost deadline). A wait outlives an unreachable Redis (a restart, a
//! failover): it reads again once the listener is connected again (which wakes every waiter)
//! and answers the error only if Redis is still unreachable when the wait ends.

use std::time::Duration;

use horst_sessions::{Event, Session};
use horst_store::Subscription;
use tokio::time::Instant;

use crate::metrics::WholeRead;
use crate::record::SessionRef;
use crate::store::Step;
use crate::{Rcadia, RcadiaError};

/// Longest wait the contract allows (section 3 and 5).
pub const MAX_WAIT: Duration = Duration::from_secs(25);

/// Read the session from Redis at least this often (pub/sub is fire-and-forget, and only a
/// read sees the server clock for the due-transition catch-up).
const RECHECK: Duration = Duration::from_secs(2);

/// A registration for a session's wake-ups, taken *before* the read a wait starts from.
pub struct SessionSubscription(Subscription);

impl Rcadia {
    /// Subscribes to `id`'s wake-ups. Take it before the apply or read whose result a wait
    /// starts from ([`Rcadia::wait_from`]), so no change in between is missed.
    pub fn subscribe(&self, id: &str) -> SessionSubscription {
        SessionSubscription(self.inner.notifier.subscribe(&self.channel(id)))
    }

    /// Waits until `done(session)` holds, `limit` passes (at most 25 s) or the process shuts
    /// down; returns the latest session either way.
    pub async fn wait_until(
        &self,
        id: &str,
        limit: Duration,
        done: impl FnMut(&Session) -> bool,
    ) -> Result<SessionRef, RcadiaError> {
        let sub = self.subscribe(id);
        let s = self.load(id).await?;
        self.wait_from(sub, id, s, limit, done).await
    }

    /// [`Rcadia::wait_until`] from a session the caller read or wrote after taking `sub`.
    ///
    /// The records a wake-up brings are the process's cached ones, shared, not copied: a
    /// wake-up costs no copy of the record, whether it ends the wait or not.
    pub async fn wait_from(
        &self,
        sub: SessionSubscription,
        id: &str,
        mut s: SessionRef,
        limit: Duration,
        mut done: impl FnMut(&Session) -> bool,
    ) -> Result<SessionRef, RcadiaError> {
        let _open = self.inner.metrics.long_poll();
        let mut sub = sub.0;
        let end = Instant::now() + limit.min(MAX_WAIT);
        let mut shutdown = self.inner.shutdown.clone();
        let mut last_read = Instant::now();
        // The last read failed (Redis unreachable: a restart, a failover): the wait goes on
        // from the session it holds and reads again on the next wake-up (the listener wakes
        // everyone once it is connected again) or re-read; only a wait that ends with Redis
        // still unreachable answers the error.
        let mut failed: Option<RcadiaError> = None;
        loop {
            if done(&s) || Instant::now() >= end || *shutdown.borrow() {
                return match failed {
                    Some(e) => Err(e),
                    None => Ok(s),
                };
            }
            let recheck = last_read + RECHECK;
            let mut woke = false;
            tokio::select! {
                _ = sub.changed() => woke = true,
                _ = tokio::time::sleep_until(end) => {}
                _ = tokio::time::sleep_until(recheck) => {}
                _ = shutdown.wait_for(|s| *s) => {}
            }
            if woke && failed.is_none() && Instant::now() < recheck {
                if let Some(token) = sub.payload().filter(|t| !t.is_empty()) {
                    let fresh = match self.cached_stored_at(id, &token) {
                        Some(c) => Ok(c),
                        None => {
                            self.inner.metrics.wait_read();
                            self.read(id, WholeRead::Wake).await
                        }
                    };
                    match fresh {
                        // The latest message wins; `rev` orders the writes of one session.
                        Ok(fresh) if fresh.session.rev() > s.rev() => s = SessionRef(fresh),
                        Ok(_) => {}
                        Err(e) => failed = Some(unreachable_or_return(e)?),
                    }
                    continue;
                }
            }
            self.inner.metrics.wait_read();
            last_read = Instant::now();
            let got = match failed.take() {
                None => self.reread(id).await,
                // Redis was unreachable: a try that would outlast the wait (the store's
                // response timeout) ends with it.
                Some(e) => match tokio::time::timeout_at(end, self.reread(id)).await {
                    Ok(got) => got,
                    Err(_) => return Err(e),
                },
            };
            match got {
                Ok(now) => s = now,
                Err(e) => failed = Some(unreachable_or_return(e)?),
            }
        }
    }

    /// The stored session, asking Redis even when the listener vouches for the cached
    /// record (this read is what catches what pub/sub lost), caught up with a due
    /// transition.
    async fn reread(&self, id: &str) -> Result<SessionRef, RcadiaError> {
        let loaded = SessionRef(self.current_checked(id, WholeRead::Recheck).await?);
        let now = self.now_ms().await?;
        if loaded.is_due(now) {
            return Ok(self
                .apply(id, |_| Ok(Step::main(Event::Tick)))
                .await?
                .session);
        }
        Ok(loaded)
    }
}

/// A read's error that a wait outlives (Redis unreachable) as `Ok`, any other (the session
/// is gone, a bug) as the `Err` that ends the wait.
fn unreachable_or_return(e: RcadiaError) -> Result<RcadiaError, RcadiaError> {
    match e {
        RcadiaError::Redis(_) => {
            tracing::debug!(error = %e, "long-poll: a read failed; waiting on for Redis");
            Ok(e)
        }
        other => Err(other),
    }
}
