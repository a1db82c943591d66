//! The clock firer: pops due session deadlines from the delayed set and feeds them to the
//! machine as `TimerFired`. Any number of horst processes may run it: the pop is atomic (each
//! deadline fires once), and a stale generation is a no-op in the machine, so firing is
//! idempotent. A deadline lost with a dying process is caught up by the next apply.
//!
//! When it looks: at the earliest deadline in the delayed set (the pop returns it), at the
//! earliest deadline this process schedules meanwhile (each write that schedules one tells
//! the firer, [`ClockWake`], without a round trip), and at least every [`POLL`]. A deadline is
//! therefore fired on time by the process that scheduled it (every process that writes
//! sessions runs a firer), and within [`POLL`] by any other process if that one died. Before,
//! every firer looked every 20 ms, each look a pop and a read of every bucket and a
//! `TIME`: on a cluster 25 calls, 1,250 a second per idle process.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use horst_sessions::Event;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::effects::parse_member;
use crate::store::Step;
use crate::{Rcadia, RcadiaError};

/// Deadlines fired per pop.
const BATCH: usize = 256;
/// Longest sleep between looks at the delayed set: bounds how late a deadline is fired when
/// the process that scheduled it died (or another process's clock runs a little behind).
const POLL: Duration = Duration::from_millis(250);

/// The earliest deadline this process scheduled since its firer last planned, and a wake-up
/// for the firer.
pub(crate) struct ClockWake {
    earliest_ms: AtomicU64,
    notify: Notify,
}

impl Default for ClockWake {
    fn default() -> Self {
        ClockWake {
            earliest_ms: AtomicU64::new(u64::MAX),
            notify: Notify::new(),
        }
    }
}

impl ClockWake {
    /// A deadline at `at_ms` (server clock) was written: the firer looks again by then.
    pub(crate) fn scheduled(&self, at_ms: u64) {
        if self.earliest_ms.fetch_min(at_ms, Ordering::AcqRel) > at_ms {
            self.notify.notify_one();
        }
    }

    /// The earliest deadline scheduled since the last call, if any.
    fn take(&self) -> Option<u64> {
        Some(self.earliest_ms.swap(u64::MAX, Ordering::AcqRel)).filter(|&t| t != u64::MAX)
    }
}

/// What ended a wait of the firer.
enum Woke {
    Due,
    Scheduled,
    Stop,
}

impl Rcadia {
    /// Runs until `shutdown` turns true.
    pub async fn run_clock(self, mut shutdown: watch::Receiver<bool>) {
        loop {
            // Deadlines scheduled from here on wake the plan below (the pop and the read
            // after it see every one written before).
            self.inner.wake.take();
            let sleep = match self.fire_due().await {
                Ok((n, _)) if n >= BATCH => Duration::ZERO,
                Ok((_, next)) => self.time_to(next).await.unwrap_or(POLL),
                Err(e) => {
                    tracing::warn!(error = %e, "session clock: cannot fire deadlines; retrying");
                    Duration::from_millis(500)
                }
            };
            let mut wake_at = Instant::now() + sleep;
            loop {
                // No await inside the branches: the shutdown's borrow must not live across one.
                let woke = tokio::select! {
                    _ = tokio::time::sleep_until(wake_at) => Woke::Due,
                    _ = self.inner.wake.notify.notified() => Woke::Scheduled,
                    _ = shutdown.wait_for(|s| *s) => Woke::Stop,
                };
                match woke {
                    Woke::Due => break,
                    Woke::Stop => return,
                    Woke::Scheduled => {
                        let Some(at_ms) = self.inner.wake.take() else {
                            continue;
                        };
                        let Ok(now) = self.now_ms().await else { break };
                        let due = Instant::now() + Duration::from_millis(at_ms.saturating_sub(now));
                        wake_at = wake_at.min(due);
                    }
                }
            }
        }
    }

    /// How long until `next` (the earliest deadline left in any bucket, read with the pop),
    /// capped at [`POLL`], on the process's server clock (no round trip).
    async fn time_to(&self, next: Option<u64>) -> Result<Duration, RcadiaError> {
        let Some(next) = next else {
            return Ok(POLL);
        };
        let now = self.now_ms().await?;
        Ok(Duration::from_millis(next.saturating_sub(now)).min(POLL))
    }

    /// Fires every due deadline once; returns how many were popped and when the earliest
    /// deadline left is due.
    pub async fn fire_due(&self) -> Result<(usize, Option<u64>), RcadiaError> {
        self.inner.metrics.round_trip();
        let (due, next) = self.inner.delayed.pop_due_and_next(BATCH).await?;
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
        Ok((n, next))
    }
}
