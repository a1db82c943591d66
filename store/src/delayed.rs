//! The delayed set: entries due at a time (turn clocks, seat reservations, ...). Any horst
//! process may pop due entries; the pop is atomic, so each entry fires exactly once.
//! Rescheduling an entry is scheduling it again (ZADD replaces the time).
//!
//! On a cluster the set is one zset per bucket ([`Store::buckets`]), each in its bucket's slot,
//! so a session's save script can move its deadlines with its record; pops and the next due
//! time read every bucket. On one server there is one bucket, `delayed`.

use crate::script::{Argv, Decl, Script, Writes};
use crate::{Store, StoreError};

/// `lua/pop_due.lua`: (`[member, due_ms, ...]` earliest first, the next due time left, the
/// leased score).
pub(crate) static POP_DUE: Script<(Vec<String>, Option<String>, String)> = Script::new(Decl {
    file: crate::lua!("lua/pop_due.lua"),
    keys: 1,
    argv: Argv::Exactly(2),
    writes: Writes::PrimaryOnly,
});

/// `lua/ack_due.lua`: the number of leased entries removed.
pub(crate) static ACK_DUE: Script<i64> = Script::new(Decl {
    file: crate::lua!("lua/ack_due.lua"),
    keys: 1,
    argv: Argv::AtLeast(1),
    writes: Writes::PrimaryOnly,
});

/// How long a taker holds the entries it popped ([`DelayedSet::pop_due_in`]) before they come
/// due again for anyone: longer than acting on a batch takes, short enough that a deadline
/// whose taker died is fired soon after.
pub const LEASE: std::time::Duration = std::time::Duration::from_secs(10);

/// What a pop took from one bucket ([`DelayedSet::pop_due_in`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popped {
    pub bucket: usize,
    /// (member, due_ms), earliest first.
    pub due: Vec<(String, u64)>,
    /// When the earliest entry left in the bucket is due (none left: `None`).
    pub next: Option<u64>,
    /// The score the taken entries are leased at: [`DelayedSet::ack`] removes them.
    pub lease: u64,
}

/// The delayed set (`delayed`, a zset by due time) on a store. Cheap to clone.
#[derive(Clone)]
pub struct DelayedSet {
    store: Store,
}

impl DelayedSet {
    pub fn new(store: Store) -> DelayedSet {
        DelayedSet { store }
    }

    /// Bucket 0's key (the one set on one server), for callers without an id to bucket by.
    pub fn key(&self) -> String {
        self.key_in(0)
    }

    /// The set's key in `bucket` ([`Store::bucket_of`]), for callers that pipeline ZADD/ZREM
    /// with other keys of that bucket (one round trip for a batch of deadlines).
    pub fn key_in(&self, bucket: usize) -> String {
        self.store.key_in_bucket(bucket, "delayed")
    }

    /// Schedules (or reschedules) `member` at `due_ms` (server clock, ms since the epoch).
    pub async fn schedule(&self, member: &str, due_ms: u64) -> Result<(), StoreError> {
        let mut conn = self.store.conn();
        let _: i64 = redis::cmd("ZADD")
            .arg(self.key())
            .arg(due_ms)
            .arg(member)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// Removes `member` from bucket 0; true if it was scheduled.
    pub async fn cancel(&self, member: &str) -> Result<bool, StoreError> {
        self.cancel_in(0, member).await
    }

    /// Removes `member` from `bucket`; true if it was scheduled.
    pub async fn cancel_in(&self, bucket: usize, member: &str) -> Result<bool, StoreError> {
        let mut conn = self.store.conn();
        let n: i64 = redis::cmd("ZREM")
            .arg(self.key_in(bucket))
            .arg(member)
            .query_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    /// Takes (removes) up to `limit` due entries of each bucket: (member, due_ms), earliest
    /// first. An entry taken here is gone even if its taker dies before acting on it; a
    /// taker that must not lose one uses [`DelayedSet::pop_due_in`] and acks.
    pub async fn pop_due(&self, limit: usize) -> Result<Vec<(String, u64)>, StoreError> {
        let all: Vec<usize> = (0..self.store.buckets()).collect();
        let mut due = Vec::new();
        for popped in self.pop(&all, limit, 0).await {
            due.extend(popped?.due);
        }
        due.sort_by_key(|(_, at)| *at);
        Ok(due)
    }

    /// Leases up to `limit` due entries of each of `buckets` for [`LEASE`] (one script call
    /// per bucket, all at once), and says when the earliest entry left in each is due: a
    /// poller that remembers those pops only the buckets that can have something due. The
    /// taker [acks](DelayedSet::ack) each entry once it has acted on it; an entry not acked
    /// comes due again when the lease ends. One answer per bucket, in order: a bucket that
    /// failed does not hide what the others handed out (it would come back only a lease
    /// later).
    pub async fn pop_due_in(
        &self,
        buckets: &[usize],
        limit: usize,
    ) -> Vec<Result<Popped, StoreError>> {
        self.pop(buckets, limit, LEASE.as_millis() as u64).await
    }

    async fn pop(
        &self,
        buckets: &[usize],
        limit: usize,
        lease_ms: u64,
    ) -> Vec<Result<Popped, StoreError>> {
        let pops = buckets.iter().map(|&b| {
            let key = self.key_in(b);
            async move {
                POP_DUE
                    .call(&self.store)
                    .key(key)
                    .arg(limit)
                    .arg(lease_ms)
                    .run()
                    .await
            }
        });
        let ms = |s: &str| s.parse::<f64>().map(|d| d as u64).unwrap_or(0);
        buckets
            .iter()
            .zip(futures_util::future::join_all(pops).await)
            .map(|(&bucket, popped)| {
                let (flat, first, lease) = popped?;
                Ok(Popped {
                    bucket,
                    due: flat
                        .chunks(2)
                        .filter_map(|c| match c {
                            [m, at] => Some((m.clone(), ms(at))),
                            _ => None,
                        })
                        .collect(),
                    next: first.as_deref().map(ms),
                    lease: ms(&lease),
                })
            })
            .collect()
    }

    /// Removes `members` of `bucket` that [`DelayedSet::pop_due_in`] leased at `lease` and
    /// that were not scheduled again since; answers how many. No members: no round trip.
    pub async fn ack(
        &self,
        bucket: usize,
        lease: u64,
        members: &[String],
    ) -> Result<u64, StoreError> {
        if members.is_empty() {
            return Ok(0);
        }
        let n = ACK_DUE
            .call(&self.store)
            .key(self.key_in(bucket))
            .arg(lease)
            .arg(members)
            .run()
            .await?;
        Ok(n.max(0) as u64)
    }

    /// When the next entry is due, if any (lets a poller sleep exactly that long).
    pub async fn next_due(&self) -> Result<Option<u64>, StoreError> {
        let firsts = (0..self.store.buckets()).map(|b| {
            let key = self.key_in(b);
            async move {
                redis::cmd("ZRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(0)
                    .arg("WITHSCORES")
                    .query_async::<Vec<(String, f64)>>(&mut self.store.conn())
                    .await
            }
        });
        let mut next: Option<u64> = None;
        for first in futures_util::future::join_all(firsts).await {
            if let Some((_, due)) = first?.first() {
                next = Some(next.map_or(*due as u64, |n| n.min(*due as u64)));
            }
        }
        Ok(next)
    }
}
