//! The delayed set: entries due at a time (turn clocks, seat reservations, ...). Any horst
//! process may pop due entries; the pop is atomic, so each entry fires exactly once.
//! Rescheduling an entry is scheduling it again (ZADD replaces the time).
//!
//! On a cluster the set is one zset per bucket ([`Store::buckets`]), each in its bucket's slot,
//! so a session's save script can move its deadlines with its record; pops and the next due
//! time read every bucket. On one server there is one bucket, `delayed`.

use crate::script::{Argv, Decl, Script, Writes};
use crate::{Store, StoreError};

/// `lua/pop_due.lua`: (`[member, due_ms, ...]` earliest first, the next due time left).
pub(crate) static POP_DUE: Script<(Vec<String>, Option<String>)> = Script::new(Decl {
    file: crate::lua!("lua/pop_due.lua"),
    keys: 1,
    argv: Argv::Exactly(1),
    writes: Writes::PrimaryOnly,
});

/// What a pop took from one bucket ([`DelayedSet::pop_due_in`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popped {
    pub bucket: usize,
    /// (member, due_ms), earliest first.
    pub due: Vec<(String, u64)>,
    /// When the earliest entry left in the bucket is due (none left: `None`).
    pub next: Option<u64>,
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

    /// Takes up to `limit` due entries of each bucket: (member, due_ms), earliest first.
    pub async fn pop_due(&self, limit: usize) -> Result<Vec<(String, u64)>, StoreError> {
        Ok(self.pop_due_and_next(limit).await?.0)
    }

    /// [`DelayedSet::pop_due`], and when the earliest entry left (in any bucket) is due: one
    /// script call per bucket, all at once.
    pub async fn pop_due_and_next(
        &self,
        limit: usize,
    ) -> Result<(Vec<(String, u64)>, Option<u64>), StoreError> {
        let all: Vec<usize> = (0..self.store.buckets()).collect();
        let mut due = Vec::new();
        let mut next: Option<u64> = None;
        for popped in self.pop_due_in(&all, limit).await? {
            due.extend(popped.due);
            if let Some(at) = popped.next {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
        }
        due.sort_by_key(|(_, at)| *at);
        Ok((due, next))
    }

    /// Takes up to `limit` due entries of each of `buckets` (one script call per bucket, all
    /// at once), and says when the earliest entry left in each is due: a poller that
    /// remembers those pops only the buckets that can have something due.
    pub async fn pop_due_in(
        &self,
        buckets: &[usize],
        limit: usize,
    ) -> Result<Vec<Popped>, StoreError> {
        let pops = buckets.iter().map(|&b| {
            let key = self.key_in(b);
            async move { POP_DUE.call(&self.store).key(key).arg(limit).run().await }
        });
        let ms = |s: &str| s.parse::<f64>().map(|d| d as u64).unwrap_or(0);
        let mut out = Vec::with_capacity(buckets.len());
        for (&bucket, popped) in buckets
            .iter()
            .zip(futures_util::future::join_all(pops).await)
        {
            let (flat, first) = popped?;
            out.push(Popped {
                bucket,
                due: flat
                    .chunks(2)
                    .filter_map(|c| match c {
                        [m, at] => Some((m.clone(), ms(at))),
                        _ => None,
                    })
                    .collect(),
                next: first.as_deref().map(ms),
            });
        }
        Ok(out)
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
