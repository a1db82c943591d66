//! The clock firer: pops due session deadlines from the delayed set and feeds them to the
//! machine as `TimerFired`. Any number of horst processes may run it: the pop is atomic (each
//! deadline fires once), and a stale generation is a no-op in the machine, so firing is
//! idempotent. A deadline lost with a dying process is caught up by the next apply.

use std::time::Duration;

use horst_sessions::Event;
use tokio::sync::watch;

use crate::effects::parse_member;
use crate::store::Step;
use crate::{Rcadia, RcadiaError};

/// Deadlines fired per pop.
const BATCH: usize = 256;
/// Longest sleep between looks at the delayed set: bounds how late a deadline scheduled by
/// another process can fire.
const MAX_SLEEP: Duration = Duration::from_millis(20);

impl Rcadia {
    /// Runs until `shutdown` turns true.
    pub async fn run_clock(self, mut shutdown: watch::Receiver<bool>) {
        loop {
            let sleep = match self.fire_due().await {
                Ok(n) if n >= BATCH => Duration::ZERO,
                Ok(_) => self.time_to_next().await.unwrap_or(MAX_SLEEP),
                Err(e) => {
                    tracing::warn!(error = %e, "session clock: cannot fire deadlines; retrying");
                    Duration::from_millis(500)
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(sleep) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// How long until the earliest deadline (any feature's, in any bucket), capped at
    /// [`MAX_SLEEP`]: the earliest entries and the server clock at once.
    async fn time_to_next(&self) -> Result<Duration, RcadiaError> {
        self.inner.metrics.round_trip();
        let (next, now) = tokio::join!(self.inner.delayed.next_due(), self.inner.store.now_ms());
        let Some(next) = next? else {
            return Ok(MAX_SLEEP);
        };
        Ok(Duration::from_millis(next.saturating_sub(now?)).min(MAX_SLEEP))
    }

    /// Fires every due deadline once; returns how many were popped.
    pub async fn fire_due(&self) -> Result<usize, RcadiaError> {
        self.inner.metrics.round_trip();
        let due = self.inner.delayed.pop_due(BATCH).await?;
        let n = due.len();
        let mut tasks = tokio::task::JoinSet::new();
        for (m, due_ms) in due {
            let Some((id, kind, generation)) = parse_member(&m) else {
                tracing::warn!(member = %m, "delayed entry is not a session deadline; dropped");
                continue;
            };
            let me = self.clone();
            tasks.spawn(async move {
                let r = me
                    .apply(&id, |_| {
                        Ok(Step::main(Event::TimerFired {
                            kind: kind.clone(),
                            generation,
                        }))
                    })
                    .await;
                match r {
                    Ok(a) => me
                        .inner
                        .metrics
                        .clock_fired(&kind, a.now_ms.saturating_sub(due_ms)),
                    Err(RcadiaError::NotFound) | Err(RcadiaError::Gone) => {}
                    Err(e) => tracing::warn!(session = %id, error = %e, "deadline not applied"),
                }
            });
        }
        while tasks.join_next().await.is_some() {}
        Ok(n)
    }
}
