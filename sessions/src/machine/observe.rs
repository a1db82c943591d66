//! Bookkeeping of what agents can observe: the events log and the observable comparison
//! behind `version`.

use super::MAX_EVENTS;
use crate::iso::iso8601_ms;
use crate::session::{ArmedTimer, HostEntry, Session};
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
        let mut ours = Unobserved::of(self);
        ours.swap_into(before);
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
        ours.swap_into(before);
        same
    }
}

/// The bookkeeping of a record nobody observes: counters, the clock of the machine, the host
/// queue's delivery state, timers and host liveness.
struct Unobserved {
    version: u64,
    rev: u64,
    now_ms: u64,
    host_queue: Vec<HostEntry>,
    timers: BTreeMap<String, ArmedTimer>,
    timer_generation: u64,
    release_delivered: bool,
    last_seen_ms: u64,
    open_polls: u32,
    open_until_ms: u64,
}

impl Unobserved {
    fn of(s: &Session) -> Unobserved {
        Unobserved {
            version: s.version,
            rev: s.rev,
            now_ms: s.now_ms,
            host_queue: s.host_queue.clone(),
            timers: s.timers.clone(),
            timer_generation: s.timer_generation,
            release_delivered: s.release_delivered,
            last_seen_ms: s.host.last_seen_ms,
            open_polls: s.host.open_polls,
            open_until_ms: s.host.open_until_ms,
        }
    }

    /// Exchanges these values with `s`'s (twice puts everything back).
    fn swap_into(&mut self, s: &mut Session) {
        use std::mem::swap;
        swap(&mut s.version, &mut self.version);
        swap(&mut s.rev, &mut self.rev);
        swap(&mut s.now_ms, &mut self.now_ms);
        swap(&mut s.host_queue, &mut self.host_queue);
        swap(&mut s.timers, &mut self.timers);
        swap(&mut s.timer_generation, &mut self.timer_generation);
        swap(&mut s.release_delivered, &mut self.release_delivered);
        swap(&mut s.host.last_seen_ms, &mut self.last_seen_ms);
        swap(&mut s.host.open_polls, &mut self.open_polls);
        swap(&mut s.host.open_until_ms, &mut self.open_until_ms);
    }
}
