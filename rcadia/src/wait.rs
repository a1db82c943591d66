//! Long-poll waits: subscribe to the session's channel first, then read, so a change between
//! the read and the wait is never missed. Wake-ups come through the process's one pub/sub
//! listener; a slow re-read covers lost messages, and a due transition nobody fired (a lost
//! deadline) is caught up here too.

use std::time::Duration;

use horst_sessions::{Event, Session};
use tokio::time::Instant;

use crate::store::Step;
use crate::{Rcadia, RcadiaError};

/// Longest wait the contract allows (section 3 and 5).
pub const MAX_WAIT: Duration = Duration::from_secs(25);

/// Re-read this often even without a wake-up (pub/sub is fire-and-forget).
const RECHECK: Duration = Duration::from_secs(2);

impl Rcadia {
    /// Waits until `done(session)` holds, `limit` passes (at most 25 s) or the process shuts
    /// down; returns the latest session either way.
    pub async fn wait_until(
        &self,
        id: &str,
        limit: Duration,
        mut done: impl FnMut(&Session) -> bool,
    ) -> Result<Session, RcadiaError> {
        let _open = self.inner.metrics.long_poll();
        let mut sub = self.inner.queue.notifier().subscribe(&self.channel(id));
        let end = Instant::now() + limit.min(MAX_WAIT);
        let mut shutdown = self.inner.shutdown.clone();
        let mut s = self.load(id).await?;
        loop {
            if done(&s) || Instant::now() >= end || *shutdown.borrow() {
                return Ok(s);
            }
            tokio::select! {
                _ = sub.changed() => {}
                _ = tokio::time::sleep_until(end) => {}
                _ = tokio::time::sleep(RECHECK) => {}
                _ = shutdown.wait_for(|s| *s) => {}
            }
            let (loaded, now) = self.load_at_now(id).await?;
            s = loaded;
            if s.is_due(now) {
                s = self
                    .apply(id, |_| Ok(Step::main(Event::Tick)))
                    .await?
                    .session;
            }
        }
    }
}
