//! Stalls: times nobody could reach Redis, which no session clock charges to anyone.
//!
//! The delayed set notes every pop's server clock per bucket, and remembers a gap of more
//! than [`horst_store::DELAYED_STALL_AFTER`] between two pops (of any process) as a stall
//! (`horst_store::Stall`, `store/lua/pop_due.lua`): every process's clock firer pops every
//! bucket at least every 250 ms, so during such a gap nobody could store anything, a move
//! included. Each pop answers the stalls remembered; this process keeps the latest answer per
//! bucket ([`Stalls`]), and every apply first hands the session the stalls that ended after
//! its latest instant (`Event::Outage`), before the catch-up that would strike: the machine
//! runs what fell due before the stall and moves every wait still running past it.
//!
//! Why an apply can trust what it knows: a stall is a gap after the last pop before it, and
//! every pop answers every stall that ended before it ran. An apply at `now` whose bucket
//! this process heard a pop of at `noted` with `now - noted <= STALL_AFTER` therefore knows
//! every stall that ended by `now`: one it does not know began after `noted` and lasted more
//! than `STALL_AFTER`, so it has not ended yet. An apply whose bucket was not heard of for
//! longer (the firer's pops failed or hung: the stall itself, or the firer starved) asks
//! first ([`horst_store::DelayedSet::stalls_in`], one script call). While Redis is away that
//! ask fails, so no write is computed then that could strike for time nobody could act in;
//! only a write computed in the first `STALL_AFTER` of a stall, before anyone could tell,
//! still counts that time (the stall is then applied from the write's instant on).

use std::sync::Mutex;

use horst_store::{Stall, StoreError};

use crate::{Rcadia, RcadiaError};

/// A stall that ended this long before the pop that told of it is not logged as news (a
/// process that starts hears of the stalls remembered from the last hour).
const NEWS_MS: u64 = 10_000;

/// The log line of a stall: what it did, and what the operator looks at.
const STALL_NEWS: &str = "no process could reach Redis (nobody popped the session deadlines); session clocks, host windows and reservations leave that time out. Unless Redis was stopped or restarted on purpose, find out why it did not answer: its log (horst up's private one is DATA/redis/redis.log), `horst admin status`, the machine's memory, swap and disk";

/// What this process last heard of each bucket's stalls.
pub(crate) struct Stalls {
    buckets: Vec<Mutex<Heard>>,
}

#[derive(Default, Clone)]
struct Heard {
    /// The server clock of the latest pop of the bucket whose answer this process read.
    noted_ms: u64,
    /// That pop's stalls, oldest first.
    stalls: Vec<Stall>,
}

impl Stalls {
    pub(crate) fn new(buckets: usize) -> Stalls {
        Stalls {
            buckets: (0..buckets.max(1)).map(|_| Mutex::default()).collect(),
        }
    }

    fn heard(&self, bucket: usize) -> std::sync::MutexGuard<'_, Heard> {
        self.buckets[bucket % self.buckets.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A pop of `bucket` at `at` (server clock) answered `stalls`; returns the stalls this
    /// process had not heard of (for the log).
    pub(crate) fn learn(&self, bucket: usize, at: u64, stalls: &[Stall]) -> Vec<Stall> {
        let mut h = self.heard(bucket);
        if at < h.noted_ms {
            // An older answer that arrived late: the newer one knows at least as much.
            return Vec::new();
        }
        let new: Vec<Stall> = stalls
            .iter()
            .filter(|s| !h.stalls.contains(s))
            .copied()
            .collect();
        h.noted_ms = at;
        h.stalls = stalls.to_vec();
        new
    }

    /// The stalls of `bucket` last heard of, however long ago.
    fn heard_so_far(&self, bucket: usize) -> Vec<Stall> {
        self.heard(bucket).stalls.clone()
    }

    /// Every stall of `bucket` that ended by `now`, if this process heard a pop of it recently
    /// enough to know them all (`STALL_AFTER`; see the module doc), else `None`: ask first.
    pub(crate) fn known_at(&self, bucket: usize, now: u64) -> Option<Vec<Stall>> {
        let h = self.heard(bucket);
        let after = horst_store::DELAYED_STALL_AFTER.as_millis() as u64;
        (now.saturating_sub(h.noted_ms) <= after).then(|| h.stalls.clone())
    }
}

impl Rcadia {
    /// A pop of `bucket` at `at` answered `stalls`: remembered for the applies, and a stall
    /// that just ended is logged (once per process; in `horst up`'s worker child only at debug
    /// level, as up logs it: `RcadiaSettings::log_stalls`).
    pub(crate) fn learn_stalls(&self, bucket: usize, at: u64, stalls: &[Stall]) {
        for s in self.inner.stalls.learn(bucket, at, stalls) {
            if s.to_ms.saturating_add(NEWS_MS) < at {
                continue;
            }
            let (from, to) = (
                horst_sessions::iso8601_ms(s.from_ms),
                horst_sessions::iso8601_ms(s.to_ms),
            );
            let seconds = (s.to_ms - s.from_ms) as f64 / 1000.0;
            if self.inner.settings.log_stalls {
                tracing::warn!(
                    bucket,
                    %from,
                    %to,
                    seconds,
                    "{STALL_NEWS}"
                );
            } else {
                tracing::debug!(bucket, %from, %to, seconds, "{STALL_NEWS} (horst up logs it)");
            }
        }
    }

    /// Every stall of session `id`'s bucket that ended by `now` (the apply hands the ones
    /// after the session's latest instant to the machine first): what this process heard,
    /// or, when it has not heard from the bucket for `STALL_AFTER`, asked now. Fails while
    /// Redis cannot be reached, so no write is computed that could charge a stall to anyone;
    /// a Redis that refuses writes (full, failing disk, a replica) cannot note its clock and
    /// is no stall: what was heard before serves.
    pub(crate) async fn stalls_at(&self, id: &str, now: u64) -> Result<Vec<Stall>, RcadiaError> {
        let bucket = self.inner.store.bucket_of(id);
        if let Some(known) = self.inner.stalls.known_at(bucket, now) {
            return Ok(known);
        }
        self.inner.metrics.round_trip();
        match self.inner.delayed.stalls_in(bucket).await {
            Ok(p) => {
                self.learn_stalls(bucket, p.at, &p.stalls);
                Ok(p.stalls)
            }
            Err(StoreError::Command(e)) if horst_store::refuses_writes(&e) => {
                Ok(self.inner.stalls.heard_so_far(bucket))
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stall(from_ms: u64, to_ms: u64) -> Stall {
        Stall { from_ms, to_ms }
    }

    #[test]
    fn a_bucket_is_known_only_while_a_pop_of_it_was_heard_recently() {
        let s = Stalls::new(12);
        assert_eq!(s.known_at(3, 10_000), None, "nothing heard yet");
        assert_eq!(
            s.learn(3, 10_000, &[stall(1_000, 9_000)]),
            vec![stall(1_000, 9_000)]
        );
        assert_eq!(s.known_at(3, 12_000), Some(vec![stall(1_000, 9_000)]));
        assert_eq!(
            s.known_at(3, 12_001),
            None,
            "more than 2 s since the last pop"
        );
        assert_eq!(s.known_at(4, 10_000), None, "another bucket");
        // A late answer of an older pop neither forgets nor replaces anything.
        assert_eq!(s.learn(3, 9_500, &[]), vec![]);
        assert_eq!(s.known_at(3, 10_000), Some(vec![stall(1_000, 9_000)]));
        // A newer pop's stalls are new only where they were not heard before.
        assert_eq!(
            s.learn(3, 20_000, &[stall(1_000, 9_000), stall(12_000, 19_000)]),
            vec![stall(12_000, 19_000)]
        );
    }
}
