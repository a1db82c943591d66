//! Time: catching up with due transitions in order, the clock and its strikes, activation,
//! and the diff of armed timers.

use super::{Effect, Outcome};
use crate::session::{ActionStatus, ArmedTimer, Clock, Deadline, Session, Status, TimerKind};
use crate::shared::SharedStr;
use crate::wire::PendingEntry;
use serde_json::{json, Value};
use std::borrow::Cow;

impl Session {
    /// Runs every time-based transition due at or before `now`, in chronological order.
    pub(super) fn catch_up(&mut self, now: u64, out: &mut Outcome) {
        // Each transition removes or moves its own condition; the bound only guards against a
        // bug turning into an endless loop.
        for _ in 0..10_000 {
            let Some((kind, at)) = self
                .due_timers()
                .into_iter()
                .enumerate()
                .min_by_key(|(i, (_, at))| (*at, *i))
                .map(|(_, k)| k)
            else {
                return;
            };
            if at > now {
                return;
            }
            let t = at.max(self.now_ms);
            self.now_ms = t;
            self.run_timer(kind, t, out);
            self.sync_clock(t);
        }
    }

    /// Nobody could act from `from` to `to` ([`super::Event::Outage`]): what fell due before
    /// the outage (or before the session's latest instant, if that is later) runs at its own
    /// instant, then every time anchor still running moves later by the rest of the outage,
    /// so each wait resumes with the time it had left. A finished game has nothing to move.
    pub(super) fn skip_outage(&mut self, from: u64, to: u64, out: &mut Outcome) {
        let start = from.max(self.now_ms);
        if to <= start || self.status == Status::Finished {
            return;
        }
        self.catch_up(start, out);
        if self.status == Status::Finished {
            return;
        }
        let d = to - start;
        // A paused clock charges nobody anyway (its resume adds the whole pause); a stopped
        // one waits for the turn to move.
        if let Some(c) = self
            .clock
            .as_mut()
            .filter(|c| c.paused_since_ms.is_none() && !c.stopped)
        {
            c.started_at_ms = c.started_at_ms.saturating_add(d);
        }
        // The host could not call either: its windows resume where they were.
        self.host.last_seen_ms = self.host.last_seen_ms.saturating_add(d);
        if self.host.open_polls > 0 {
            self.host.open_until_ms = self.host.open_until_ms.saturating_add(d);
        }
        for p in &mut self.players {
            if let Some(at) = p
                .pending
                .as_mut()
                .and_then(|pa| pa.delivered_at_ms.as_mut())
            {
                *at = at.saturating_add(d);
            }
        }
        if self.status == Status::Waiting {
            for at in [
                &mut self.reserved_until_ms,
                &mut self.activate_not_before_ms,
            ]
            .into_iter()
            .flatten()
            {
                *at = at.saturating_add(d);
            }
            self.seating_changed_at_ms = self.seating_changed_at_ms.saturating_add(d);
        }
    }

    /// What is due next, in tie-break order (a host lapse pauses the clock before a strike at
    /// the same instant; activation beats reservation expiry).
    fn due_timers(&self) -> Vec<(TimerKind, u64)> {
        let mut due = Vec::new();
        let live = self.status != Status::Finished;
        let seen = self.host.seen_until_ms();
        if live && self.host.alive {
            due.push((
                TimerKind::HostAlive,
                seen.saturating_add(self.timings.host_alive_ms),
            ));
        }
        for p in &self.players {
            if let Some(at) = p.pending.as_ref().and_then(|pa| pa.delivered_at_ms) {
                due.push((
                    TimerKind::Unconfirmed {
                        player_id: p.player_id.clone(),
                    },
                    at.saturating_add(self.timings.unconfirmed_ms),
                ));
            }
        }
        // The deadline only strikes someone who could be struck: while every on-turn player
        // has an action pending it waits (and falls at once when one of them is back).
        if let (Some(d), true) = (self.deadline_ms(), self.someone_on_the_clock()) {
            due.push((TimerKind::Clock, d));
        }
        if let Some(a) = self.activation_at() {
            due.push((TimerKind::Activation, a));
        }
        if let (Status::Waiting, Some(r)) = (self.status, self.reserved_until_ms) {
            due.push((TimerKind::Reservation, r));
        }
        if live {
            due.push((
                TimerKind::HostGone,
                seen.saturating_add(self.timings.host_gone_ms),
            ));
        }
        due
    }

    fn run_timer(&mut self, kind: TimerKind, t: u64, out: &mut Outcome) {
        match kind {
            TimerKind::HostAlive => {
                // A poll whose process died never reported its end; it stops counting here.
                self.host.last_seen_ms = self.host.seen_until_ms();
                self.host.open_polls = 0;
                self.host.open_until_ms = 0;
                self.host.alive = false;
            }
            TimerKind::HostGone => {
                self.finish(
                    t,
                    json!({ "winner": null, "reason": "host_disconnected" }),
                    "host_disconnected",
                    true,
                    out,
                );
            }
            TimerKind::Unconfirmed { player_id } => {
                if let Some(i) = self.players.iter().position(|p| p.player_id == player_id) {
                    self.resolve(i, ActionStatus::Unconfirmed, Value::Null, t);
                }
            }
            TimerKind::Clock => self.strike(t, out),
            TimerKind::Activation => self.activate(t),
            TimerKind::Reservation => {
                self.reserved_until_ms = None;
                let gone: Vec<SharedStr> = self
                    .players
                    .iter()
                    .filter(|p| !p.ready)
                    .map(|p| p.player_id.clone())
                    .collect();
                self.remove_players(t, |p| !p.ready);
                self.push_event(t, "reservation_expired", json!({ "removed": gone }));
            }
        }
    }

    /// The waiting table starts: `game_start` to the host.
    fn activate(&mut self, t: u64) {
        self.status = Status::Active;
        self.started_at_ms = Some(t);
        // Whatever the game published before game_start, it has not yet said whose move it is.
        self.turn_opened = false;
        self.reserved_until_ms = None;
        let ids: Vec<String> = self
            .players
            .iter()
            .map(|p| p.player_id.to_string())
            .collect();
        if self.rules.legacy {
            self.queue(PendingEntry::legacy_game_start(ids.clone()));
        } else {
            self.queue(PendingEntry::game_start(ids.clone(), self.round));
        }
        if self.clock.is_none() && self.rules.has_clock() && !self.on_turn.is_empty() {
            self.clock = Some(Clock {
                started_at_ms: t,
                strikes_this_turn: 0,
                paused_since_ms: Some(t),
                stopped: false,
            });
        }
        self.push_event(
            t,
            "game_start",
            json!({ "players": ids, "round": self.round }),
        );
    }

    /// When a waiting table starts: every seated player ready, at least `minPlayers`, and the
    /// table full or a reserved rematch (else after the lobby-fill wait), never earlier than
    /// 3 s after the previous round ended.
    pub(crate) fn activation_at(&self) -> Option<u64> {
        if self.status != Status::Waiting
            || self.players.len() < self.rules.min_players as usize
            || self.players.iter().any(|p| !p.ready)
        {
            return None;
        }
        let base = self.activate_not_before_ms.unwrap_or(0);
        if self.players.len() >= self.rules.max_players as usize || self.reserved_until_ms.is_some()
        {
            Some(base)
        } else {
            Some(
                base.max(
                    self.seating_changed_at_ms
                        .saturating_add(self.timings.lobby_fill_ms),
                ),
            )
        }
    }

    /// The deadline passed: every on-turn player without a pending action gets a strike.
    fn strike(&mut self, t: u64, out: &mut Outcome) {
        let deadline = self.deadline_ms();
        let timeout = self.rules.turn_timeout_ms;
        let Some(clock) = self.clock.as_mut() else {
            return;
        };
        clock.strikes_this_turn += 1;
        if deadline.is_some_and(|d| t > d) {
            // The deadline passed while the player's action was pending: the strike falls as
            // they are back on turn, and "one more full turn" counts from now.
            clock.started_at_ms =
                t.saturating_sub(timeout.saturating_mul(u64::from(clock.strikes_this_turn)));
        }
        let max = self.rules.max_strikes;
        let struck: Vec<usize> = (0..self.players.len())
            .filter(|&i| self.players[i].pending.is_none() && self.may_act(&self.players[i]))
            .collect();
        let mut finals: Vec<SharedStr> = Vec::new();
        for i in struck {
            let p = &mut self.players[i];
            p.strikes += 1;
            p.past.struck_at_ms = Some(t);
            let (pid, strike) = (p.player_id.clone(), p.strikes);
            let last = strike >= max;
            if last {
                finals.push(pid.clone());
            }
            // v1 games only hear about the final strike, so their onTimeout (which usually ends
            // the game) agrees with the platform.
            if !self.rules.legacy || last {
                self.queue(PendingEntry::timeout(&pid, strike, max, last));
            }
            self.push_event(
                t,
                "timeout",
                json!({ "playerId": pid, "strike": strike, "maxStrikes": max, "final": last }),
            );
        }
        if finals.is_empty() {
            return;
        }
        if self.rules.forfeit_on_timeout {
            let strikes = self.player(&finals[0]).map_or(0, |p| p.strikes);
            let mut result = json!({
                "winner": self.forfeit_winner(&finals),
                "reason": "timeout",
                "forfeitedBy": finals[0],
                "strikes": strikes,
            });
            // Several clocks ran out at once (simultaneous turns): `forfeitedBy` is one
            // playerId (the lowest seat), so it named only that player, and a reader took the
            // others for innocent. Every one of them is listed, in seat order.
            if finals.len() > 1 {
                result["forfeitedByAll"] = json!(finals);
            }
            self.finish(t, result, "timeout", true, out);
        } else if let Some(c) = self.clock.as_mut() {
            // The game decides what a final timeout means; keep quiet until the turn moves.
            c.stopped = true;
        }
    }

    /// Starts or pauses the clock to match the situation at `t`.
    ///
    /// A pending action does not stop the clock: "the same deadline" after a rejection means
    /// the time the game took to answer counts. Only a host that is not alive (and a session
    /// that is not active) pauses it.
    pub(super) fn sync_clock(&mut self, t: u64) {
        let should_run = self.status == Status::Active
            && self.host.alive
            && self.players.iter().any(|p| !p.left && self.may_act(p));
        let Some(c) = self.clock.as_mut() else {
            return;
        };
        match (c.paused_since_ms, should_run) {
            (Some(p), true) => {
                c.started_at_ms = c.started_at_ms.saturating_add(t.saturating_sub(p));
                c.paused_since_ms = None;
            }
            (None, false) => c.paused_since_ms = Some(t),
            _ => {}
        }
    }

    /// Someone on turn has no action pending (so a deadline could strike them).
    fn someone_on_the_clock(&self) -> bool {
        self.players
            .iter()
            .any(|p| p.pending.is_none() && !p.left && self.may_act(p))
    }

    /// Diffs the armed timers against what is due next.
    ///
    /// Liveness and unconfirmed timers are lazy ([`TimerKind::is_lazy`]): one armed at or
    /// before its due time stays armed when the due time moves later (every host call moves
    /// the host's), and one that is no longer due stays armed too. It then fires early, runs
    /// nothing (catch-up goes by what is due, not by what fired) and is armed again at its
    /// real due time. Every host call or delivered action used to cost a cancel and a
    /// schedule in the delayed set; now that happens once per timer period.
    pub(crate) fn sync_timers(&mut self, out: &mut Outcome) {
        let due = self.due_timers();
        let keys: Vec<Cow<'static, str>> = due.iter().map(|(k, _)| k.key()).collect();
        let live = self.status != Status::Finished;
        let now = self.now_ms;
        let stale: Vec<SharedStr> = self
            .timers
            .iter()
            .filter(|(k, d)| {
                // A lazy timer still ahead stays armed even when nothing is due any more.
                let kept_lazily = live && d.kind.is_lazy() && d.at_ms > now;
                !keys.iter().any(|due| **due == ***k) && !kept_lazily
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            if let Some(t) = self.timers.remove(k.as_str()) {
                out.effects
                    .push(Effect::Cancel(t.deadline(&self.session_id)));
            }
        }
        for ((kind, at), key) in due.into_iter().zip(keys) {
            // A clock deadline belongs to its turn: a new turn re-arms it even at the same
            // instant, so the old turn's entry goes stale.
            let same = |d: &ArmedTimer| {
                if kind.is_lazy() {
                    d.at_ms <= at && d.at_ms > now
                } else {
                    d.at_ms == at && (kind != TimerKind::Clock || d.turn == self.turn)
                }
            };
            if self.timers.get(&*key).is_some_and(same) {
                continue;
            }
            if let Some(old) = self.timers.remove(&*key) {
                out.effects
                    .push(Effect::Cancel(old.deadline(&self.session_id)));
            }
            self.timer_generation += 1;
            let t = ArmedTimer {
                kind,
                at_ms: at,
                generation: self.timer_generation,
                turn: self.turn,
            };
            out.effects
                .push(Effect::Schedule(t.deadline(&self.session_id)));
            self.timers.insert(SharedStr::from(&*key), t);
        }
    }

    /// Something time-based fell due by `now` and no timer has run it yet. Errors roll an apply
    /// back entirely, including such catch-up, so the I/O layer applies `Event::Tick` (and
    /// writes) first when this is true; a `409 finished` then agrees with the stored record.
    pub fn is_due(&self, now_ms: u64) -> bool {
        self.due_timers().iter().any(|(_, at)| *at <= now_ms)
    }

    /// Every armed deadline (to re-fill the delayed set after it was lost).
    pub fn armed_deadlines(&self) -> Vec<Deadline> {
        self.timers
            .values()
            .map(|t| t.deadline(&self.session_id))
            .collect()
    }
}
