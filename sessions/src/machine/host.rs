//! The host's pending-actions queue and its liveness.

use crate::session::{HostEntry, Session, Status};
use crate::wire::PendingEntry;

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
        }
        let mut out = Vec::with_capacity(self.host_queue.len());
        let mut newly: Vec<(String, String)> = Vec::new();
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
        }
        out
    }

    /// True when a `pending-actions` long-poll with this `after` should return now.
    pub fn host_poll_ready(&self, after: Option<u64>) -> bool {
        self.status == Status::Finished
            || self
                .host_queue
                .iter()
                .any(|e| after.is_none_or(|a| e.seq > a))
    }

    // ---------------------------------------------------------------- host liveness

    pub(super) fn host_seen(&mut self, now: u64) {
        self.host.last_seen_ms = self.host.last_seen_ms.max(now);
        self.host.alive = true;
    }
}
