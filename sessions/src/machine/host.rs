//! The host's pending-actions queue and its liveness.

use crate::session::{HostEntry, Session, Status};
use crate::shared::SharedStr;
use crate::wire::PendingEntry;

/// Delivered entries a host that does not acknowledge them is sent again, at most (besides
/// actions still pending): the oldest beyond count as acknowledged.
pub(crate) const MAX_UNACKNOWLEDGED: usize = 16;

impl Session {
    pub(super) fn queue(&mut self, mut body: PendingEntry) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        body.seq = seq;
        self.host_queue.push(HostEntry {
            seq,
            body,
            delivered: false,
        });
        seq
    }

    /// Acknowledges `after` (or drains, for v1 bridges that send none) and returns the queue,
    /// marking entries delivered the first time they are returned.
    pub(super) fn take_entries(&mut self, after: Option<u64>, now: u64) -> Vec<PendingEntry> {
        if let Some(a) = after {
            // Only what was delivered can have been processed: an `after` past it (a host's
            // bug) dropped an agent's undelivered action, which then stayed pending with no
            // clock and no unconfirmed timer until the game ended.
            self.host_queue.retain(|e| e.seq > a || !e.delivered);
            self.forget_old_deliveries();
        }
        let mut out = Vec::with_capacity(self.host_queue.len());
        let mut newly: Vec<(SharedStr, SharedStr)> = Vec::new();
        for e in &mut self.host_queue {
            let mut body = e.body.clone();
            body.seq = e.seq;
            out.push(body);
            if !e.delivered {
                e.delivered = true;
                if self.release_seq == Some(e.seq) {
                    self.release_delivered = true;
                }
                if let (Some(pid), Some(aid)) = (&e.body.player_id, &e.body.action_id) {
                    newly.push((pid.clone(), aid.clone()));
                }
            }
        }
        for (pid, aid) in newly {
            if let Some(pa) = self.player_mut(&pid).and_then(|p| p.pending.as_mut()) {
                if pa.action_id == aid && pa.delivered_at_ms.is_none() {
                    pa.delivered_at_ms = Some(now);
                }
            }
        }
        if after.is_none() {
            self.host_queue.clear();
        } else {
            self.forget_old_deliveries();
        }
        out
    }

    /// Bounds what a host that does not acknowledge (`after=0` on every poll) is sent again:
    /// the record grew by every entry of the game, and each poll returned all of them. Past
    /// [`MAX_UNACKNOWLEDGED`] delivered entries the oldest count as acknowledged, except an
    /// action still pending (a host that lost it, reconnecting with `after=0`, gets it again;
    /// there are at most one per player). Entries not yet delivered are never dropped.
    fn forget_old_deliveries(&mut self) {
        let keep: Vec<bool> = self
            .host_queue
            .iter()
            .map(|e| {
                !e.delivered
                    || e.body.action_id.as_deref().is_some_and(|aid| {
                        e.body
                            .player_id
                            .as_deref()
                            .and_then(|pid| self.player(pid))
                            .and_then(|p| p.pending.as_ref())
                            .is_some_and(|pa| pa.action_id == aid)
                    })
            })
            .collect();
        let droppable = keep.iter().filter(|k| !**k).count();
        let Some(mut extra) = droppable.checked_sub(MAX_UNACKNOWLEDGED) else {
            return;
        };
        let mut i = 0;
        self.host_queue.retain(|_| {
            let drop = extra > 0 && !keep[i];
            if drop {
                extra -= 1;
            }
            i += 1;
            !drop
        });
    }

    /// True when a `pending-actions` long-poll with this `after` should return now: when
    /// [`Session::take_entries`] would answer with anything. An entry not delivered yet
    /// counts whatever its seq: an `after` past every entry (a host that kept an earlier
    /// session's, each numbering from 1) acknowledges only what was delivered, and the next
    /// entries, numbered below it, still end the wait; they used to be seen only when the
    /// wait ran out.
    pub fn host_poll_ready(&self, after: Option<u64>) -> bool {
        self.status == Status::Finished
            || self
                .host_queue
                .iter()
                .any(|e| !e.delivered || after.is_none_or(|a| e.seq > a))
    }

    /// Whether a `pending-actions` long-poll with this `after` may open without being
    /// stored, and until when: `Some(t)` means the poll changes nothing anybody needs before
    /// it ends, provided it ends (or is stored: `HostPoll` with the wait left) by `t`.
    ///
    /// A poll that opens stores only bookkeeping: the host seen, the entries it acknowledges
    /// dropped, the poll counted open. The apply that ends it, `HostPoll { after, wait_ms: 0 }`
    /// (what a poll that answers at once applies), stores the first two again, and the count
    /// matters only for liveness: a poll counted open keeps the host alive to its end even if
    /// its API process dies. A poll that ends before the host's liveness as stored (its last
    /// sign of life) has used half its window needs no count, so the host's usual cycle (poll,
    /// the action delivered, ops) is one write fewer. `None` (store it at once) when the poll
    /// would change more: the game is over, the host is not alive (its clock resumes), or
    /// there are entries to answer with at once.
    pub fn host_poll_quiet_until(&self, after: Option<u64>, now: u64) -> Option<u64> {
        if self.status == Status::Finished || !self.host.alive {
            return None;
        }
        // What `take_entries` would answer: none once `after` is dropped.
        let nothing = self
            .host_queue
            .iter()
            .all(|e| e.delivered && after.is_some_and(|a| e.seq <= a));
        // `last_seen_ms` only grows, and the host lapses (or is gone) a whole window after it
        // at the earliest, however other polls open and close meanwhile.
        let window = self.timings.host_alive_ms.min(self.timings.host_gone_ms);
        let until = self.host.last_seen_ms.saturating_add(window / 2);
        (nothing && until > now).then_some(until)
    }

    // ---------------------------------------------------------------- host liveness

    pub(super) fn host_seen(&mut self, now: u64) {
        self.host.last_seen_ms = self.host.last_seen_ms.max(now);
        self.host.alive = true;
    }
}
