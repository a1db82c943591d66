//! The clock firer: pops due session deadlines from the delayed set and feeds them to the
//! machine as `TimerFired`. Any number of horst processes may run it: the pop is atomic (each
//! deadline fires once), and a stale generation is a no-op in the machine, so firing is
//! idempotent. The pop leases what it takes and a stored firing acks it, so a deadline whose
//! process died (or could not store the firing) comes due again a lease later for anyone.
//!
//! When it looks: at the earliest deadline in the delayed set (the pop returns it), at the
//! earliest deadline this process schedules meanwhile (each write that schedules one tells
//! the firer, `Inner::wake`, without a round trip), and at least every [`POLL`]. A deadline is
//! therefore fired on time by the process that scheduled it (every process that writes
//! sessions runs a firer), and within [`POLL`] by any other process if that one died. Before,
//! every firer looked every 20 ms, each look a pop and a read of every bucket and a
//! `TIME`: on a cluster 25 calls, 1,250 a second per idle process.
//!
//! What it pops: on a cluster the delayed set is 12 buckets, and a look pops only the ones
//! whose earliest known deadline is due, every one at least every [`POLL`] (`buckets.rs`).
//! A busy firer on a cluster popped all 12 buckets a look, about one look per clock that came
//! due; now about one bucket (`rcadia_cost::clocked_tables_on_12_buckets_...`).

use std::time::Duration;

use horst_sessions::Event;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::buckets::BucketPlan;
use crate::effects::parse_member;
use crate::store::Step;
use crate::{Rcadia, RcadiaError};

/// Deadlines fired per pop.
const BATCH: usize = 256;
/// Longest time between sweeps of every bucket of the delayed set: bounds how late a
/// deadline is fired when the process that scheduled it died (or another process's clock
/// runs a little behind).
const POLL: Duration = Duration::from_millis(250);
/// What ended a wait of the firer.
enum Woke {
    Due,
    Scheduled,
    Stop,
}

impl Rcadia {
    /// Runs until `shutdown` turns true.
    pub async fn run_clock(self, mut shutdown: watch::Receiver<bool>) {
        let mut plan = BucketPlan::new(self.inner.store.buckets(), POLL);
        loop {
            // Deadlines scheduled from here on wake the plan below (the pop and the read
            // after it see every one written before).
            plan.take(&self.inner.wake);
            let look = plan.look(self.now_ms().await.ok());
            let sleep = match self.fire_in(&look).await {
                Ok((n, popped)) => {
                    plan.popped(popped);
                    if n >= BATCH {
                        Duration::ZERO
                    } else {
                        let to = self.time_to(plan.next_known()).await.unwrap_or(POLL);
                        to.min(plan.until_sweep())
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "session clock: cannot fire deadlines; retrying");
                    plan.failed();
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
                        let Some(at_ms) = plan.take(&self.inner.wake) else {
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

    /// How long until `next` (the earliest deadline known), capped at [`POLL`], on the
    /// process's server clock (no round trip).
    async fn time_to(&self, next: Option<u64>) -> Result<Duration, RcadiaError> {
        let Some(next) = next else {
            return Ok(POLL);
        };
        let now = self.now_ms().await?;
        Ok(Duration::from_millis(next.saturating_sub(now)).min(POLL))
    }

    /// Fires every due deadline once (in every bucket, up to a batch from each); returns the
    /// most popped from one bucket (a full batch: more may be due) and when the earliest
    /// deadline left is due.
    pub async fn fire_due(&self) -> Result<(usize, Option<u64>), RcadiaError> {
        let all: Vec<usize> = (0..self.inner.store.buckets()).collect();
        let (n, popped) = self.fire_in(&all).await?;
        Ok((n, popped.into_iter().filter_map(|(_, next)| next).min()))
    }

    /// Fires every due deadline of `buckets` once; returns the most popped from one bucket
    /// (a full batch: look again at once) and, for each bucket popped, when the earliest
    /// deadline left in it is due. No buckets: no round trip.
    ///
    /// The pop leases the deadlines (`horst_store::DELAYED_LEASE`) and each is acked once
    /// its firing was stored (or found moot): a deadline whose firing failed, or whose
    /// process died in between, comes due again a lease later for any process. A bucket
    /// whose pop failed does not stop the others' deadlines from firing now.
    async fn fire_in(
        &self,
        buckets: &[usize],
    ) -> Result<(usize, Vec<(usize, Option<u64>)>), RcadiaError> {
        if buckets.is_empty() {
            return Ok((0, Vec::new()));
        }
        self.inner.metrics.round_trip();
        let mut popped = Vec::with_capacity(buckets.len());
        let mut failed = None;
        for r in self.inner.delayed.pop_due_in(buckets, BATCH).await {
            match r {
                Ok(p) => popped.push(p),
                Err(e) => failed = Some(e),
            }
        }
        // What the pops say of stalls first: the firings below apply them (`stalls.rs`).
        for p in &popped {
            self.learn_stalls(p.bucket, p.at, &p.stalls);
        }
        let most = popped.iter().map(|p| p.due.len()).max().unwrap_or(0);
        let nexts = popped.iter().map(|p| (p.bucket, p.next)).collect();
        let leases: Vec<(usize, u64)> = popped.iter().map(|p| (p.bucket, p.lease)).collect();
        let mut due: Vec<(usize, String, u64)> = popped
            .into_iter()
            .flat_map(|p| p.due.into_iter().map(move |(m, at)| (p.bucket, m, at)))
            .collect();
        due.sort_by_key(|(_, _, at)| *at);
        let mut done: Vec<(usize, String)> = Vec::new();
        let mut tasks = tokio::task::JoinSet::new();
        for (bucket, m, due_ms) in due {
            let Some((id, kind, generation)) = parse_member(&m) else {
                tracing::warn!(member = %m, "delayed entry is not a session deadline; dropped");
                done.push((bucket, m));
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
                let fired = match r {
                    Ok(a) => {
                        me.inner
                            .metrics
                            .clock_fired(&kind, a.now_ms.saturating_sub(due_ms));
                        true
                    }
                    Err(RcadiaError::NotFound) | Err(RcadiaError::Gone) => true,
                    Err(e) => {
                        tracing::warn!(session = %id, error = %e, "deadline not applied; it comes due again a lease later");
                        false
                    }
                };
                fired.then_some((bucket, m))
            });
        }
        while let Some(r) = tasks.join_next().await {
            if let Ok(Some(d)) = r {
                done.push(d);
            }
        }
        // What fired leaves the set (a firing that rescheduled its member keeps the new
        // time). An ack that fails only fires those deadlines once more, harmlessly.
        let acks = leases.iter().filter_map(|&(bucket, lease)| {
            let members: Vec<String> = done
                .iter()
                .filter(|(b, _)| *b == bucket)
                .map(|(_, m)| m.clone())
                .collect();
            (!members.is_empty()).then(|| {
                self.inner.metrics.round_trip();
                let delayed = &self.inner.delayed;
                async move { delayed.ack(bucket, lease, &members).await }
            })
        });
        for r in futures_util::future::join_all(acks).await {
            if let Err(e) = r {
                tracing::warn!(error = %e, "session clock: cannot ack fired deadlines; they fire once more");
            }
        }
        if let Some(e) = failed {
            return Err(e.into());
        }
        Ok((most, nexts))
    }
}
