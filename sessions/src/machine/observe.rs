//! Bookkeeping of what agents can observe: the events log and the observable comparison
//! behind `version`.

use super::MAX_EVENTS;
use crate::iso::iso8601_ms;
use crate::session::{Deadline, HostEntry, Session};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

impl Session {
    pub(super) fn push_event(&mut self, t: u64, kind: &str, fields: Value) {
        let mut m = Map::new();
        m.insert(
            "index".into(),
            json!(self.events_base + self.events.len() as u64),
        );
        m.insert("type".into(), json!(kind));
        m.insert("at".into(), json!(iso8601_ms(t)));
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        self.events.push(Value::Object(m));
        if self.events.len() > MAX_EVENTS {
            let extra = self.events.len() - MAX_EVENTS;
            self.events.drain(..extra);
            self.events_base += extra as u64;
        }
    }

    /// Whether the record equals `before` apart from bookkeeping nobody observes (liveness
    /// refreshes, delivery marks, acknowledged entries, timers): if not, `version` moves.
    ///
    /// Compared in place, not through a JSON rendering of both records (that was most of an
    /// apply's cost): `before`'s bookkeeping fields are set to ours for the comparison and
    /// put back afterwards.
    pub(super) fn same_observable(&self, before: &mut Session) -> bool {
        use std::mem::swap;
        let mut version = self.version;
        let mut rev = self.rev;
        let mut now_ms = self.now_ms;
        let mut host_queue = self.host_queue.clone();
        let mut timers = self.timers.clone();
        let mut timer_generation = self.timer_generation;
        let mut release_delivered = self.release_delivered;
        let mut last_seen = self.host.last_seen_ms;
        let mut open_polls = self.host.open_polls;
        let mut open_until = self.host.open_until_ms;
        let swap_all = |b: &mut Session,
                        version: &mut u64,
                        rev: &mut u64,
                        now_ms: &mut u64,
                        host_queue: &mut Vec<HostEntry>,
                        timers: &mut BTreeMap<String, Deadline>,
                        timer_generation: &mut u64,
                        release_delivered: &mut bool,
                        last_seen: &mut u64,
                        open_polls: &mut u32,
                        open_until: &mut u64| {
            swap(&mut b.version, version);
            swap(&mut b.rev, rev);
            swap(&mut b.now_ms, now_ms);
            swap(&mut b.host_queue, host_queue);
            swap(&mut b.timers, timers);
            swap(&mut b.timer_generation, timer_generation);
            swap(&mut b.release_delivered, release_delivered);
            swap(&mut b.host.last_seen_ms, last_seen);
            swap(&mut b.host.open_polls, open_polls);
            swap(&mut b.host.open_until_ms, open_until);
        };
        swap_all(
            before,
            &mut version,
            &mut rev,
            &mut now_ms,
            &mut host_queue,
            &mut timers,
            &mut timer_generation,
            &mut release_delivered,
            &mut last_seen,
            &mut open_polls,
            &mut open_until,
        );
        // Delivery marks of a pending action (same seat, both pending) do not count either.
        let mut delivered: Vec<(usize, Option<u64>)> = Vec::new();
        for (i, (b, p)) in before.players.iter_mut().zip(&self.players).enumerate() {
            if let (Some(bp), Some(pp)) = (&mut b.pending, &p.pending) {
                delivered.push((i, bp.delivered_at_ms));
                bp.delivered_at_ms = pp.delivered_at_ms;
            }
        }
        let same = *self == *before;
        for (i, d) in delivered {
            if let Some(bp) = &mut before.players[i].pending {
                bp.delivered_at_ms = d;
            }
        }
        swap_all(
            before,
            &mut version,
            &mut rev,
            &mut now_ms,
            &mut host_queue,
            &mut timers,
            &mut timer_generation,
            &mut release_delivered,
            &mut last_seen,
            &mut open_polls,
            &mut open_until,
        );
        same
    }
}
