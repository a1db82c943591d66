//! The delayed set: entries due at a time (turn clocks, seat reservations, ...). Any horst
//! process may pop due entries; the pop is atomic, so each entry fires exactly once.
//! Rescheduling an entry is scheduling it again (ZADD replaces the time).
//!
//! On a cluster the set is one zset per bucket ([`Store::buckets`]), each in its bucket's slot,
//! so a session's save script can move its deadlines with its record; pops and the next due
//! time read every bucket. On one server there is one bucket, `delayed`.
//!
//! Stalls: every pop notes the server clock beside its bucket (`delayed:stalls`), and a gap
//! of more than [`STALL_AFTER`] since the bucket's last pop, of any process, is remembered as
//! a [`Stall`] for [`STALL_MEMORY`]: pollers pop every bucket at least every few hundred ms,
//! so nobody could pop meanwhile (Redis was stalled or unreachable, or no poller ran), and
//! whatever came due then fired late. Every pop answers the stalls remembered
//! ([`Popped::stalls`]); [`DelayedSet::stalls_in`] asks without taking anything.

use crate::script::{Argv, Decl, Script, Writes};
use crate::{ServerClock, Store, StoreError};

/// The answer of `lua/pop_due.lua`: `[member, due_ms, ...]` earliest first, the next due time
/// left, the leased score, the server clock of the pop, the stalls remembered.
type PopAnswer = (Vec<String>, Option<String>, String, String, String);

/// `lua/pop_due.lua` ([`PopAnswer`]).
pub(crate) static POP_DUE: Script<PopAnswer> = Script::new(Decl {
    file: crate::lua!("lua/pop_due.lua"),
    keys: 2,
    argv: Argv::Exactly(5),
    writes: Writes::PrimaryOnly,
})
// At `maxmemory` too: a lease moves entries it does not add, and the clock note is a few
// bytes replaced; a stall must be noted whatever else Redis refuses.
.allowing_oom();

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

/// A gap of more than this between two pops of a bucket (by any process) is a stall
/// ([`Stall`]). Every process's poller pops every bucket at least every 250 ms (the session
/// clock firer), so a gap this long means nobody could.
pub const STALL_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a stall is remembered after it ended (at most the latest 16 are).
pub const STALL_MEMORY: std::time::Duration = std::time::Duration::from_secs(3600);

/// A time nobody popped a bucket (Redis stalled or unreachable for every poller, or no poller
/// ran): from the last pop before the gap to the first after it, on the server clock (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub from_ms: u64,
    pub to_ms: u64,
}

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
    /// The server clock of the pop (ms).
    pub at: u64,
    /// The bucket's stalls remembered ([`STALL_MEMORY`]), oldest first: every stall that
    /// ended before this pop (and after the memory's start) is among them.
    pub stalls: Vec<Stall>,
}

/// The delayed set (`delayed`, a zset by due time) on a store. Cheap to clone.
#[derive(Clone)]
pub struct DelayedSet {
    store: Store,
    /// The server's clock as the last pop's answer told it: the bound each pop carries on
    /// when it may still take entries (pop_due.lua's ARGV[5]): a pop a partition held past its
    /// caller's give-up takes nothing, where it leased the deadlines due at the heal to a
    /// taker that never heard (fired a lease late) or, without a lease, lost them.
    server_clock: ServerClock,
}

impl DelayedSet {
    pub fn new(store: Store) -> DelayedSet {
        DelayedSet {
            store,
            server_clock: ServerClock::default(),
        }
    }

    /// The clock note of `bucket` (`delayed:stalls`, a hash in the bucket's slot): the last pop's
    /// clock and the stalls remembered.
    pub fn stalls_key_in(&self, bucket: usize) -> String {
        self.store.key_in_bucket(bucket, "delayed:stalls")
    }

    /// Notes the clock of `bucket` as a pop does and answers its stalls, taking nothing (one
    /// script call): for a caller that must know every stall that ended before now and has not
    /// heard from a pop of the bucket for [`STALL_AFTER`].
    pub async fn stalls_in(&self, bucket: usize) -> Result<Popped, StoreError> {
        self.pop(&[bucket], 0, 0).await.remove(0)
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
        let offset = self.store.clock_offset_ms();
        let bound = self.server_clock.bound_ms(offset);
        let pops = buckets.iter().map(|&b| {
            let (key, stalls) = (self.key_in(b), self.stalls_key_in(b));
            async move {
                POP_DUE
                    .call(&self.store)
                    .key(key)
                    .key(stalls)
                    .arg(limit)
                    .arg(lease_ms)
                    .arg(STALL_AFTER.as_millis() as u64)
                    .arg(STALL_MEMORY.as_millis() as u64)
                    .arg(bound)
                    .run()
                    .await
            }
        });
        let ms = |s: &str| s.parse::<f64>().map(|d| d as u64).unwrap_or(0);
        buckets
            .iter()
            .zip(futures_util::future::join_all(pops).await)
            .map(|(&bucket, popped)| {
                let (flat, first, lease, at, stalls) = popped?;
                self.server_clock.note(ms(&at), offset);
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
                    at: ms(&at),
                    stalls: parse_stalls(&stalls),
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

/// The stalls of a pop's answer: `<from>:<to>` pairs separated by spaces (anything else is
/// skipped).
fn parse_stalls(text: &str) -> Vec<Stall> {
    text.split_ascii_whitespace()
        .filter_map(|pair| {
            let (from, to) = pair.split_once(':')?;
            Some(Stall {
                from_ms: from.parse().ok()?,
                to_ms: to.parse().ok()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_parse_from_a_pops_answer() {
        assert_eq!(parse_stalls(""), vec![]);
        assert_eq!(
            parse_stalls("10:2500 3000:9000"),
            vec![
                Stall {
                    from_ms: 10,
                    to_ms: 2500
                },
                Stall {
                    from_ms: 3000,
                    to_ms: 9000
                }
            ]
        );
        assert_eq!(parse_stalls("x:1 5:"), vec![]);
    }
}
