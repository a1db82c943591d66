//! The delayed set: entries due at a time (turn clocks, seat reservations, ...). Any horst
//! process may pop due entries; the pop is atomic, so each entry fires exactly once.
//! Rescheduling an entry is scheduling it again (ZADD replaces the time).

use crate::script::{Argv, Decl, Script, Writes};
use crate::{Store, StoreError};

/// `lua/pop_due.lua`: `[member, due_ms, ...]`, earliest first.
pub(crate) static POP_DUE: Script<Vec<String>> = Script::new(Decl {
    file: crate::lua!("lua/pop_due.lua"),
    keys: 1,
    argv: Argv::Exactly(1),
    writes: Writes::PrimaryOnly,
});

/// The delayed set (`delayed`, a zset by due time) on a store. Cheap to clone.
#[derive(Clone)]
pub struct DelayedSet {
    store: Store,
}

impl DelayedSet {
    pub fn new(store: Store) -> DelayedSet {
        DelayedSet { store }
    }

    /// The set's key, for callers that pipeline ZADD/ZREM with other commands (one round
    /// trip for a batch of deadlines).
    pub fn key(&self) -> String {
        self.store.key("delayed")
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

    /// Removes `member`; true if it was scheduled.
    pub async fn cancel(&self, member: &str) -> Result<bool, StoreError> {
        let mut conn = self.store.conn();
        let n: i64 = redis::cmd("ZREM")
            .arg(self.key())
            .arg(member)
            .query_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    /// Takes up to `limit` due entries: (member, due_ms), earliest first.
    pub async fn pop_due(&self, limit: usize) -> Result<Vec<(String, u64)>, StoreError> {
        let flat = POP_DUE
            .call(&self.store)
            .key(self.key())
            .arg(limit)
            .run()
            .await?;
        Ok(flat
            .chunks(2)
            .filter_map(|c| match c {
                [m, due] => Some((m.clone(), due.parse::<f64>().map(|d| d as u64).unwrap_or(0))),
                _ => None,
            })
            .collect())
    }

    /// When the next entry is due, if any (lets a poller sleep exactly that long).
    pub async fn next_due(&self) -> Result<Option<u64>, StoreError> {
        let mut conn = self.store.conn();
        let first: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(self.key())
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .query_async(&mut conn)
            .await?;
        Ok(first.first().map(|(_, due)| *due as u64))
    }
}
