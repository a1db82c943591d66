//! Which buckets of a bucketed set a poller pops: the clock firer's delayed set
//! (`clock.rs`) and the rater's pending games (`leaderboard.rs`). On a cluster each set is
//! split into 12 buckets, each in its own hash slot ([`horst_store::Store::buckets`]), and a
//! pop of every bucket is 12 script calls. A poller remembers each bucket's earliest entry
//! (every pop returns it) and the entries this process put in since ([`BucketWake`]), and
//! pops only the buckets whose earliest known entry is due; every bucket at least every
//! `poll` all the same (a sweep), for entries other processes put in (which this one is not
//! told of) or left behind when they died. What it remembers is a lower bound (an entry
//! moved later or taken by another process costs a pop that finds nothing), never a
//! promise: a pop takes only what the server's clock says is due. On one server (one
//! bucket) every look is a sweep.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// No entry known in a bucket.
const NONE: u64 = u64::MAX;

/// The earliest entry this process put into each bucket since its poller last planned,
/// and a wake-up for the poller.
pub(crate) struct BucketWake {
    earliest_ms: Vec<AtomicU64>,
    pub(crate) notify: Notify,
}

impl BucketWake {
    /// For a store of `buckets` buckets ([`horst_store::Store::buckets`]).
    pub(crate) fn new(buckets: usize) -> Self {
        BucketWake {
            earliest_ms: (0..buckets.max(1)).map(|_| AtomicU64::new(NONE)).collect(),
            notify: Notify::new(),
        }
    }

    /// An entry due at `at_ms` (server clock; 0: now) was written into `bucket`: the poller
    /// pops that bucket by then.
    pub(crate) fn note(&self, bucket: usize, at_ms: u64) {
        let slot = &self.earliest_ms[bucket % self.earliest_ms.len()];
        if slot.fetch_min(at_ms, Ordering::AcqRel) > at_ms {
            self.notify.notify_one();
        }
    }
}

/// What a poller knows of each bucket: its earliest entry (a lower bound), and when it
/// last popped every bucket.
pub(crate) struct BucketPlan {
    known: Vec<u64>,
    swept: Option<Instant>,
    poll: Duration,
}

impl BucketPlan {
    /// For `buckets` buckets, swept at least every `poll`.
    pub(crate) fn new(buckets: usize, poll: Duration) -> Self {
        BucketPlan {
            known: vec![NONE; buckets.max(1)],
            swept: None,
            poll,
        }
    }

    /// Merges what `wake` noted since the last call; returns the earliest of it, if any.
    pub(crate) fn take(&mut self, wake: &BucketWake) -> Option<u64> {
        let mut earliest = NONE;
        for (k, slot) in self.known.iter_mut().zip(&wake.earliest_ms) {
            let at = slot.swap(NONE, Ordering::AcqRel);
            *k = (*k).min(at);
            earliest = earliest.min(at);
        }
        Some(earliest).filter(|&t| t != NONE)
    }

    /// The buckets to pop now (`now`: the server clock, if known): every one when a sweep
    /// is due (or the clock is not known), else those whose earliest known entry is due.
    pub(crate) fn look(&mut self, now: Option<u64>) -> Vec<usize> {
        let all = 0..self.known.len();
        let sweep = self.known.len() == 1 || self.swept.is_none_or(|t| t.elapsed() >= self.poll);
        let look: Vec<usize> = match (sweep, now) {
            (false, Some(now)) => all.filter(|&b| self.known[b] <= now + 1).collect(),
            _ => all.collect(),
        };
        if look.len() == self.known.len() {
            self.swept = Some(Instant::now());
        }
        look
    }

    /// What the pops of [`BucketPlan::look`]'s buckets returned: each one's earliest entry
    /// left.
    pub(crate) fn popped(&mut self, nexts: impl IntoIterator<Item = (usize, Option<u64>)>) {
        for (b, next) in nexts {
            if let Some(k) = self.known.get_mut(b) {
                *k = next.unwrap_or(NONE);
            }
        }
    }

    /// A pop failed: the next look is a sweep.
    pub(crate) fn failed(&mut self) {
        self.swept = None;
    }

    /// The earliest entry known in any bucket.
    pub(crate) fn next_known(&self) -> Option<u64> {
        self.known.iter().copied().min().filter(|&t| t != NONE)
    }

    /// How long until the next sweep is due.
    pub(crate) fn until_sweep(&self) -> Duration {
        self.swept
            .map_or(Duration::ZERO, |t| self.poll.saturating_sub(t.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_pops_the_buckets_due_and_every_bucket_every_poll() {
        let poll = Duration::from_millis(250);
        let mut plan = BucketPlan::new(12, poll);
        // Nothing known yet: a sweep.
        assert_eq!(plan.look(Some(1_000)).len(), 12);
        plan.popped((0..12).map(|b| (b, (b == 3).then_some(1_500))));
        assert_eq!(plan.next_known(), Some(1_500));
        // Only what is due: nothing, then bucket 3, then also what this process noted.
        assert!(plan.look(Some(1_000)).is_empty());
        assert_eq!(plan.look(Some(1_500)), vec![3]);
        let wake = BucketWake::new(12);
        wake.note(7, 0);
        assert_eq!(plan.take(&wake), Some(0));
        assert_eq!(plan.take(&wake), None, "taken once");
        assert_eq!(plan.look(Some(1_500)), vec![3, 7]);
        // A sweep once `poll` has passed, and after a failed pop; without a clock, too.
        plan.swept = Instant::now().checked_sub(poll);
        assert_eq!(plan.until_sweep(), Duration::ZERO);
        assert_eq!(plan.look(Some(1_000)).len(), 12);
        assert!(plan.until_sweep() > Duration::ZERO);
        plan.failed();
        assert_eq!(plan.look(Some(1_000)).len(), 12);
        assert_eq!(plan.look(None).len(), 12);
        // One bucket (one server): every look is a sweep.
        let mut one = BucketPlan::new(1, poll);
        one.popped([(0, None)]);
        assert_eq!(one.look(Some(1_000)), vec![0]);
    }
}
