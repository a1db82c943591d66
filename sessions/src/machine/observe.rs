//! Bookkeeping of what agents can observe: the events log and the observable comparison
//! behind `version`.

use super::MAX_EVENTS;
use crate::iso::iso8601_ms;
use crate::session::Session;
use serde_json::{json, Map, Value};

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
    /// apply's cost): our bookkeeping fields are set to `before`'s for the comparison and put
    /// back afterwards (`before` may be a shared record, so it is not touched).
    pub(super) fn same_observable(&mut self, before: &Session) -> bool {
        let mut theirs = Unobserved::of(before);
        theirs.swap_into(self);
        // Delivery marks of a pending action (same seat, both pending) do not count either.
        let mut delivered: Vec<(usize, Option<u64>)> = Vec::new();
        for (i, (p, b)) in self.players.iter_mut().zip(&before.players).enumerate() {
            if let (Some(pp), Some(bp)) = (&mut p.pending, &b.pending) {
                delivered.push((i, pp.delivered_at_ms));
                pp.delivered_at_ms = bp.delivered_at_ms;
            }
        }
        let same = eq_but_queue_and_timers(self, before);
        for (i, d) in delivered {
            if let Some(pp) = &mut self.players[i].pending {
                pp.delivered_at_ms = d;
            }
        }
        theirs.swap_into(self);
        same
    }
}

/// `a == b` but for the host queue and the timers (bookkeeping nobody observes), compared
/// without copying either. `a` is taken apart whole, so a new field of [`Session`] does not
/// compile until it is placed here.
fn eq_but_queue_and_timers(a: &Session, b: &Session) -> bool {
    let Session {
        session_id,
        version,
        rev,
        now_ms,
        created_at_ms,
        started_at_ms,
        ended_at_ms,
        config,
        rules,
        timings,
        game,
        host,
        status,
        players,
        turn,
        on_turn,
        legal_actions_seen,
        turn_opened,
        state,
        rejections,
        clock,
        released,
        release_seq,
        release_delivered,
        result,
        end_reason,
        round,
        series_id,
        previous_session_id,
        next_session_id,
        reserved_until_ms,
        activate_not_before_ms,
        seating_changed_at_ms,
        host_queue: _,
        next_seq,
        events,
        events_base,
        timers: _,
        timer_generation,
        departed,
        last_batch_id: _,
    } = a;
    *version == b.version
        && *rev == b.rev
        && *now_ms == b.now_ms
        && *turn == b.turn
        && *status == b.status
        && *next_seq == b.next_seq
        && *events_base == b.events_base
        && *timer_generation == b.timer_generation
        && *released == b.released
        && *release_seq == b.release_seq
        && *release_delivered == b.release_delivered
        && *legal_actions_seen == b.legal_actions_seen
        && *turn_opened == b.turn_opened
        && *round == b.round
        && *created_at_ms == b.created_at_ms
        && *started_at_ms == b.started_at_ms
        && *ended_at_ms == b.ended_at_ms
        && *reserved_until_ms == b.reserved_until_ms
        && *activate_not_before_ms == b.activate_not_before_ms
        && *seating_changed_at_ms == b.seating_changed_at_ms
        && *host == b.host
        && *clock == b.clock
        && *players == b.players
        && *on_turn == b.on_turn
        && *rejections == b.rejections
        && *events == b.events
        && *state == b.state
        && *result == b.result
        && *end_reason == b.end_reason
        && *session_id == b.session_id
        && *series_id == b.series_id
        && *previous_session_id == b.previous_session_id
        && *next_session_id == b.next_session_id
        && *rules == b.rules
        && *timings == b.timings
        && *game == b.game
        && *config == b.config
        && *departed == b.departed
}

/// The bookkeeping of a record nobody observes that is compared by swapping it (the host
/// queue and the timers are left out of the comparison instead): counters, the clock of the
/// machine, the release's delivery and host liveness.
struct Unobserved {
    version: u64,
    rev: u64,
    now_ms: u64,
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
        swap(&mut s.timer_generation, &mut self.timer_generation);
        swap(&mut s.release_delivered, &mut self.release_delivered);
        swap(&mut s.host.last_seen_ms, &mut self.last_seen_ms);
        swap(&mut s.host.open_polls, &mut self.open_polls);
        swap(&mut s.host.open_until_ms, &mut self.open_until_ms);
    }
}
