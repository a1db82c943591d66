//! Callers that wait in an API process, and what happens to their jobs when it dies.
//!
//! A blocking tool call's job is admitted with its API process as the job's `waiter`
//! ([`Queue::admit_for_caller`]). While callers wait in it, the process keeps a presence key
//! (`callers:<process>`, [`CALLER_PRESENCE_TTL`]) alive. A disconnected caller's job is
//! dropped by its drop guard at once; a killed process has no guard left, so every process
//! sweeps the waiting list ([`Queue::drop_orphans`]) and drops a queued job whose waiter's
//! presence is gone: released like a disconnected caller's (reservation and daily count
//! given back, idempotency key forgotten). A job that started runs to its end.

use std::time::Duration;

use redis::AsyncCommands;
use tokio::sync::watch;

use crate::scripts::{self, Applied};
use crate::{
    keys, JobKind, JobState, Lane, Queue, QueueError, CALLER_PRESENCE_EVERY, CALLER_PRESENCE_TTL,
};

impl Queue {
    /// This process's id as a waiter (`callers:<id>`).
    pub fn process_id(&self) -> &str {
        &self.process_id
    }

    /// Keeps this process's presence alive until `shutdown`. The key is left to expire on
    /// shutdown: the callers answered `pending` then had their jobs detached
    /// ([`Queue::detach`]); what is left queued for this process is dropped once it expires.
    pub async fn announce_callers(self, mut shutdown: watch::Receiver<bool>) {
        let key = self.callers_key(&self.process_id);
        loop {
            let sent = std::time::Instant::now();
            let set: redis::RedisResult<()> = self
                .store
                .conn()
                .set_ex(&key, "1", CALLER_PRESENCE_TTL.as_secs())
                .await;
            self.store.note_periodic_write(&set);
            match set {
                Ok(()) => self.presence_written(sent),
                Err(e) => tracing::debug!(error = %e, "cannot refresh the API process's presence"),
            }
            tokio::select! {
                _ = tokio::time::sleep(CALLER_PRESENCE_EVERY) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// Drops the entries of accounts with nothing waiting from `queue:fair`
    /// (fair_sweep.lua), [`FAIR_SWEEP_SLICE`] fields a call, going on where this process's
    /// last call stopped. Any process may call it; it is idempotent. Returns how many
    /// accounts' entries it dropped.
    pub async fn sweep_fair(&self) -> Result<u64, QueueError> {
        use std::sync::atomic::Ordering;
        let cursor = self.fair_cursor.load(Ordering::Relaxed);
        let (next, dropped): (u64, u64) = scripts::FAIR_SWEEP
            .call(&self.store)
            .key(keys::fair(&self.store))
            .key(keys::lane(&self.store, Lane::Planner))
            .key(keys::lane(&self.store, Lane::Referee))
            .arg(cursor)
            .arg(FAIR_SWEEP_SLICE)
            .arg(crate::FAIR_DONE_SUFFIXES.as_str())
            .run()
            .await?;
        self.fair_cursor.store(next, Ordering::Relaxed);
        Ok(dropped)
    }

    /// Drops queued jobs whose caller's API process is gone (its presence expired). Any
    /// process may call it; it is idempotent. Returns the dropped ids.
    pub async fn drop_orphans(&self) -> Result<Vec<String>, QueueError> {
        // Two steps (cancel.lua, cluster note): the waiting jobs' names and waiters, and
        // their waiters' presences, first, then one script per orphan, which re-checks all of
        // it. The reads are a pipeline each, not a round trip a job: this runs every round of
        // every process's housekeeping, and a round longer than `STALL_AFTER` is taken for a
        // stall, over which no lease is reaped (a slow link with a full queue did that).
        let waiting = self
            .waiting_fields(&["account", "day", "idem", "waiter", "state", "kind"])
            .await?;
        let queued: Vec<(String, Lane, Vec<String>)> = waiting
            .into_iter()
            .filter_map(|(id, f)| {
                let f: Vec<String> = f.into_iter().map(Option::unwrap_or_default).collect();
                let lane = JobKind::parse(&f[5]).map(Lane::of)?;
                (!f[3].is_empty() && f[4] == JobState::Queued.as_str()).then_some((id, lane, f))
            })
            .collect();
        let mut waiters: Vec<&str> = queued.iter().map(|(_, _, f)| f[3].as_str()).collect();
        waiters.sort_unstable();
        waiters.dedup();
        let mut gone = std::collections::HashSet::new();
        if !waiters.is_empty() {
            let mut pipe = redis::pipe();
            for waiter in &waiters {
                pipe.exists(self.callers_key(waiter));
            }
            let alive: Vec<bool> = pipe.query_async(&mut self.store.conn()).await?;
            gone.extend(
                waiters
                    .iter()
                    .zip(alive)
                    .filter(|(_, a)| !a)
                    .map(|(w, _)| *w),
            );
        }
        let mut dropped = Vec::new();
        for (id, lane, f) in queued
            .iter()
            .filter(|(_, _, f)| gone.contains(f[3].as_str()))
        {
            let names = crate::JobNames {
                account: f[0].clone(),
                day: f[1].clone(),
                idem: f[2].clone(),
                waiter: f[3].clone(),
                lane: Some(*lane),
            };
            let done = self
                .cancel_named(
                    id,
                    &names,
                    JobState::Cancelled,
                    crate::FailureCode::Cancelled,
                    ORPHAN_MESSAGE,
                    crate::DropAs::Orphan,
                )
                .await?;
            if done {
                dropped.push(id.clone());
            }
        }
        Ok(dropped)
    }

    /// The caller of job `id` was answered `pending` (this process is shutting down): the
    /// job stays queued without depending on this process, so it runs and a retry with the
    /// same idempotency key reads it. `false`: it was no longer queued here.
    pub async fn detach(&self, id: &str) -> Result<bool, QueueError> {
        let reply: Applied = scripts::DETACH
            .call(&self.store)
            .key(self.job_key(id))
            .arg(&*self.process_id)
            .run()
            .await?;
        Ok(reply == Applied::Done)
    }
}

/// What the caller of a dropped orphan reads (its wait's end, `get_submission`). Its API
/// process may have died, or may live cut off from Redis alone (a partition: the others keep
/// seeing Redis, so it is no stall) after answering the caller `pending` with the job's id:
/// either way the job never ran and nothing was charged, and the same idempotency key admits
/// it afresh. The claim's orphan drop (helpers.lua's `ORPHAN_MESSAGE`) says the same.
pub(crate) const ORPHAN_MESSAGE: &str = "the API process the caller waited in stopped, or lost its connection to the job store, before the job started; the job was dropped and nothing was charged; call again (the same idempotencyKey starts afresh)";

/// How often a process sweeps for orphaned jobs and expired leases.
pub const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(1);

/// How many of `queue:fair`'s fields one housekeeping round's sweep looks at: with every API
/// process and worker sweeping once a second, 100,000 accounts' entries go round in well
/// under a minute, at a few hundred µs of Redis a call.
pub const FAIR_SWEEP_SLICE: u64 = 500;

/// A longer gap between housekeeping rounds (of every process together) is a stall: Redis
/// was frozen, or no process could reach it. Leases do not run out over a stall: none is
/// reaped until a whole lease has passed after it (`Queue::reap`). Three rounds, so a round
/// that a busy machine delays is not taken for one.
pub const STALL_AFTER: Duration = Duration::from_secs(3);
