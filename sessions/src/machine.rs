//! The transition function: `Session::apply(event, now_ms) -> Outcome`.
//!
//! Every apply runs three steps at one instant:
//! 1. catch up: time-based transitions that fell due before `now` run in chronological order,
//!    each at its own instant (host lapse, unconfirmed actions, clock strikes, reservation
//!    expiry, activation, host gone), so a late timer never changes what happened;
//! 2. the event itself;
//! 3. catch up again (the event may have made something due at once, e.g. activation), then
//!    the armed timers are diffed against what is due next, giving `Schedule`/`Cancel` effects.
//!
//! On error the session is restored to exactly what it was.

use crate::error::ProtocolError;
use crate::iso::iso8601_ms;
use crate::ops::Op;
use crate::session::{
    ActionStatus, Clock, Deadline, HostEntry, LastAction, PendingAction, Player, Rejection,
    Session, Status, TimerKind,
};
use crate::wire::PendingEntry;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Agent-visible events kept per session; older ones are dropped (their indices stay valid).
pub const MAX_EVENTS: usize = 500;

/// Longest long-poll the contract allows.
pub const MAX_POLL_MS: u64 = 25_000;

/// Rejections kept per turn (the latest ones): an agent spamming illegal actions cannot grow
/// the record without bound.
pub const MAX_REJECTIONS: usize = 50;

/// Longest `asName`, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// What happened to a session. The I/O layer resolves identities to `playerId`s and checks the
/// host (`Session::authorize_host` / `authorize_player`) before sending these.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `POST /join`. `player_id` is a fresh id from the caller, used only if `identity` has no
    /// seat yet.
    Join {
        player_id: String,
        identity: String,
        as_name: Option<String>,
    },
    /// `POST /leave`.
    Leave { player_id: String },
    /// Any authenticated player request on this session: readies a reserved rematch seat.
    PlayerSeen { player_id: String },
    /// `POST /ops` (and the v1 single-op endpoints). Counts as a host sign of life.
    PublishOps { ops: Vec<Op> },
    /// `POST /action`. `action_id` is a fresh id from the caller.
    Action {
        player_id: String,
        action: Value,
        turn: Option<u64>,
        action_id: String,
    },
    /// `GET /pending-actions` starts: acknowledges `after`, returns what is queued. With nothing
    /// to return and `wait_ms > 0`, the poll stays open (send `HostPollDone` when it ends).
    HostPoll { after: Option<u64>, wait_ms: u64 },
    /// A long-poll opened by `HostPoll` ends (woken or timed out); returns what is queued now.
    HostPollDone { after: Option<u64> },
    /// Any other host call (`/rematch`, ...).
    HostSeen,
    /// `POST /rematch` (or the game's `AGENT_REMATCH`): asks for the next round.
    Rematch,
    /// The I/O layer created the next round; link it (`nextSessionId`).
    RematchLinked { next_session_id: String },
    /// A deadline from the delayed set fell due.
    TimerFired { kind: TimerKind, generation: u64 },
    /// Catch up with time without any other event.
    Tick,
}

/// Side effects the I/O layer carries out after storing the session.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Add this member to the delayed set.
    Schedule(Deadline),
    /// Remove this member from the delayed set (it may already be gone).
    Cancel(Deadline),
    /// Entries `first_seq..=last_seq` were queued for the host (its long-poll should wake; the
    /// version bump publishes too).
    HostEntriesQueued { first_seq: u64, last_seq: u64 },
    /// Create the next round: `Session::new_rematch(&this, new_id, now)`, then apply
    /// `Event::RematchLinked` to this session, both in one write.
    CreateRematch,
    /// Apply `Event::Leave { player_id }` to `session_id` (opting out of a rematch that already
    /// exists; ignore a 403 there).
    LeaveSession {
        session_id: String,
        player_id: String,
    },
}

/// The event-specific answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Reply {
    #[default]
    None,
    Joined {
        player_id: String,
        seat: u32,
        /// The identity already had this seat (idempotent join).
        rejoined: bool,
    },
    ActionAccepted {
        action_id: String,
        turn: u64,
    },
    /// Entries for the pending-actions response (each with `seq`).
    Entries {
        entries: Vec<PendingEntry>,
        /// The poll stays open: hold it, then send `HostPollDone`.
        poll_open: bool,
    },
    /// `Some`: the next round already exists (`/rematch` is idempotent). `None`: see
    /// `Effect::CreateRematch`.
    Rematch {
        existing: Option<String>,
    },
}

/// Result of one `apply`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// `version` was bumped: publish a wake-up for long-polls.
    pub changed: bool,
    /// The record changed (`rev` bumped): write it with compare-and-set on the previous `rev`.
    pub stored: bool,
    pub effects: Vec<Effect>,
    pub reply: Reply,
}

impl Session {
    /// Applies one event at `now_ms` (Unix milliseconds).
    pub fn apply(&mut self, event: Event, now_ms: u64) -> Result<Outcome, ProtocolError> {
        let mut now = now_ms.max(self.now_ms);
        if let Event::TimerFired { kind, generation } = &event {
            match self.timers.get(&kind.key()) {
                // A timer popped a little early (clocks of API processes differ) still counts
                // as firing at its own instant.
                Some(d) if d.generation == *generation => now = now.max(d.at_ms),
                // Stale: the turn moved on, or it was re-armed. Nothing happens.
                _ => return Ok(Outcome::default()),
            }
        }
        let before = self.clone();
        let first_seq = self.next_seq;
        let mut out = Outcome::default();
        if let Err(e) = self.step(event, now, &mut out) {
            *self = before;
            return Err(e);
        }
        self.sync_timers(&mut out);
        if self.next_seq > first_seq {
            out.effects.push(Effect::HostEntriesQueued {
                first_seq,
                last_seq: self.next_seq - 1,
            });
        }
        let mut before = before;
        if !self.same_observable(&mut before) {
            self.version += 1;
            out.changed = true;
        }
        let moved_clock = self.now_ms;
        self.now_ms = before.now_ms;
        if *self != before {
            self.now_ms = moved_clock;
            self.rev += 1;
            out.stored = true;
        }
        Ok(out)
    }

    fn step(&mut self, event: Event, now: u64, out: &mut Outcome) -> Result<(), ProtocolError> {
        self.catch_up(now, out);
        self.now_ms = now;
        self.handle(event, now, out)?;
        self.sync_clock(now);
        self.catch_up(now, out);
        Ok(())
    }

    fn handle(&mut self, event: Event, now: u64, out: &mut Outcome) -> Result<(), ProtocolError> {
        match event {
            Event::Join {
                player_id,
                identity,
                as_name,
            } => self.join(player_id, identity, as_name, now, out),
            Event::Leave { player_id } => self.leave(&player_id, now, out),
            Event::PlayerSeen { player_id } => {
                self.require_player(&player_id)?;
                self.mark_ready(&player_id, now);
                Ok(())
            }
            Event::PublishOps { ops } => {
                self.host_seen(now);
                self.publish(ops, now, out)
            }
            Event::Action {
                player_id,
                action,
                turn,
                action_id,
            } => self.act(player_id, action, turn, action_id, now, out),
            Event::HostPoll { after, wait_ms } => {
                self.host_seen(now);
                let entries = self.take_entries(after, now);
                let poll_open =
                    entries.is_empty() && wait_ms > 0 && self.status != Status::Finished;
                if poll_open {
                    self.host.open_polls += 1;
                    // Long-polls last at most 25 s (section 3).
                    let end = now.saturating_add(wait_ms.min(MAX_POLL_MS));
                    self.host.open_until_ms = self.host.open_until_ms.max(end);
                }
                out.reply = Reply::Entries { entries, poll_open };
                Ok(())
            }
            Event::HostPollDone { after } => {
                self.host.open_polls = self.host.open_polls.saturating_sub(1);
                if self.host.open_polls == 0 {
                    self.host.open_until_ms = 0;
                }
                self.host_seen(now);
                let entries = self.take_entries(after, now);
                out.reply = Reply::Entries {
                    entries,
                    poll_open: false,
                };
                Ok(())
            }
            Event::HostSeen => {
                self.host_seen(now);
                Ok(())
            }
            Event::Rematch => {
                self.host_seen(now);
                if let Some(next) = &self.next_session_id {
                    out.reply = Reply::Rematch {
                        existing: Some(next.clone()),
                    };
                    return Ok(());
                }
                self.check_rematch_allowed()?;
                out.effects.push(Effect::CreateRematch);
                out.reply = Reply::Rematch { existing: None };
                Ok(())
            }
            Event::RematchLinked { next_session_id } => {
                match &self.next_session_id {
                    Some(existing) if *existing == next_session_id => return Ok(()),
                    Some(existing) => {
                        return Err(ProtocolError::conflict(
                            "already_linked",
                            format!("this session's next round is already {existing}"),
                        ))
                    }
                    None => {}
                }
                self.check_rematch_allowed()?;
                self.push_event(now, "rematch", json!({ "nextSessionId": next_session_id }));
                self.next_session_id = Some(next_session_id);
                Ok(())
            }
            Event::TimerFired { .. } | Event::Tick => Ok(()),
        }
    }

    // ---------------------------------------------------------------- seats

    fn join(
        &mut self,
        player_id: String,
        identity: String,
        as_name: Option<String>,
        now: u64,
        out: &mut Outcome,
    ) -> Result<(), ProtocolError> {
        if let Some(p) = self.player_by_identity(&identity) {
            let (player_id, seat) = (p.player_id.clone(), p.seat);
            self.mark_ready(&player_id, now);
            out.reply = Reply::Joined {
                player_id,
                seat,
                rejoined: true,
            };
            return Ok(());
        }
        match self.status {
            Status::Finished => {
                return Err(ProtocolError::conflict(
                    "finished",
                    "this game is over; find an open table with GET /available",
                ))
            }
            Status::Active => {
                return Err(ProtocolError::conflict(
                    "in_progress",
                    "this game is already running; watch it via /public or find an open table with GET /available",
                ))
            }
            Status::Waiting => {}
        }
        if self.players.len() >= self.rules.max_players as usize {
            if let (Some(until), true) = (
                self.reserved_until_ms,
                self.players.iter().any(|p| !p.ready),
            ) {
                return Err(ProtocolError::conflict(
                    "reserved",
                    format!(
                        "the seats are reserved for the previous round's players until {}; try again later or find another table",
                        iso8601_ms(until)
                    ),
                ));
            }
            return Err(ProtocolError::conflict(
                "full",
                "every seat is taken; find another table with GET /available",
            ));
        }
        let as_name = match as_name.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(n) if n.chars().count() > MAX_NAME_CHARS => {
                return Err(ProtocolError::bad_request(format!(
                    "asName is longer than {MAX_NAME_CHARS} characters; choose a shorter name"
                )))
            }
            Some(n) => Some(n.to_string()),
        };
        if self.player(&player_id).is_some() {
            return Err(ProtocolError::new(
                500,
                "id_collision",
                "generated playerId already exists in this session; retry",
            ));
        }
        let seat = self.players.len() as u32;
        self.players.push(Player {
            seat,
            ..Player::new(player_id.clone(), identity, as_name.clone())
        });
        self.seating_changed_at_ms = now;
        self.push_event(
            now,
            "player_joined",
            json!({ "playerId": player_id, "seat": seat, "asName": as_name }),
        );
        out.reply = Reply::Joined {
            player_id,
            seat,
            rejoined: false,
        };
        Ok(())
    }

    fn mark_ready(&mut self, player_id: &str, now: u64) {
        if self.status != Status::Waiting {
            return;
        }
        if let Some(p) = self.player_mut(player_id) {
            if !p.ready {
                p.ready = true;
                let seat = p.seat;
                self.seating_changed_at_ms = now;
                self.push_event(
                    now,
                    "player_ready",
                    json!({ "playerId": player_id, "seat": seat }),
                );
            }
        }
    }

    fn leave(&mut self, player_id: &str, now: u64, out: &mut Outcome) -> Result<(), ProtocolError> {
        self.require_player(player_id)?;
        match self.status {
            Status::Waiting => {
                self.push_event(now, "player_left", json!({ "playerId": player_id }));
                self.remove_players(now, |p| p.player_id == player_id);
            }
            Status::Active => {
                if let Some(p) = self.player_mut(player_id) {
                    p.left = true;
                }
                self.push_event(now, "player_left", json!({ "playerId": player_id }));
                let result = json!({
                    "winner": self.forfeit_winner(&[player_id.to_string()]),
                    "reason": "left",
                    "forfeitedBy": player_id,
                });
                self.finish(now, result, "left", true, out);
            }
            Status::Finished => {
                let Some(p) = self.player_mut(player_id) else {
                    return Ok(());
                };
                if p.left {
                    return Ok(());
                }
                p.left = true;
                self.push_event(now, "player_left", json!({ "playerId": player_id }));
                if let Some(next) = &self.next_session_id {
                    out.effects.push(Effect::LeaveSession {
                        session_id: next.clone(),
                        player_id: player_id.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Removes seats from a waiting table; the rest keep their order and are renumbered 0..n.
    /// An emptied rematch table starts over as round 1 of a new series.
    fn remove_players(&mut self, now: u64, drop: impl Fn(&Player) -> bool) {
        self.players.retain(|p| !drop(p));
        for (seat, p) in self.players.iter_mut().enumerate() {
            p.seat = seat as u32;
        }
        self.seating_changed_at_ms = now;
        if self.players.is_empty() && self.round > 1 {
            self.round = 1;
            self.series_id = self.session_id.clone();
            self.previous_session_id = None;
            self.reserved_until_ms = None;
            self.activate_not_before_ms = None;
            self.push_event(now, "new_series", json!({ "seriesId": self.series_id }));
        }
    }

    fn require_player(&self, player_id: &str) -> Result<&Player, ProtocolError> {
        self.player(player_id)
            .ok_or_else(ProtocolError::not_a_player)
    }

    // ---------------------------------------------------------------- actions

    fn act(
        &mut self,
        player_id: String,
        action: Value,
        turn: Option<u64>,
        action_id: String,
        now: u64,
        out: &mut Outcome,
    ) -> Result<(), ProtocolError> {
        let p = self.require_player(&player_id)?;
        if p.left {
            return Err(ProtocolError::new(
                403,
                "not_a_player",
                "you left this session",
            ));
        }
        if action
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("__"))
        {
            return Err(ProtocolError::new(
                400,
                "reserved_action",
                "action types starting with \"__\" are reserved for platform messages; rename the type",
            ));
        }
        match self.status {
            Status::Finished => {
                return Err(ProtocolError::conflict("finished", "the game is over"))
            }
            Status::Waiting => {
                return Err(ProtocolError::conflict(
                    "not_active",
                    "the game has not started yet; poll GET /state?wait=25 until yourTurn",
                ))
            }
            Status::Active => {}
        }
        if p.pending.is_some() {
            return Err(ProtocolError::conflict(
                "action_pending",
                "your previous action is still pending; wait for its outcome (GET /state?wait=25)",
            ));
        }
        if self.rules.enforces_turns() {
            if let Some(t) = turn {
                if t != self.turn {
                    return Err(ProtocolError::conflict(
                        "stale_turn",
                        format!(
                            "turn {t} is over, the current turn is {}; read the state again",
                            self.turn
                        ),
                    ));
                }
            }
            if !self.may_act(p) {
                return Err(ProtocolError::conflict(
                    "not_your_turn",
                    "it is not your turn; wait with GET /state?wait=25",
                ));
            }
        }
        let hold = self.rules.is_simultaneous() && !self.released;
        let turn = self.turn;
        let pending = PendingAction {
            action_id: action_id.clone(),
            action: action.clone(),
            turn,
            submitted_at_ms: now,
            delivered_at_ms: None,
            held: hold,
        };
        let Some(p) = self.player_mut(&player_id) else {
            return Err(ProtocolError::not_a_player());
        };
        p.pending = Some(pending);
        p.last_action = Some(LastAction {
            action_id: action_id.clone(),
            turn,
            status: ActionStatus::Pending,
            reason: Value::Null,
            at_ms: now,
        });
        if hold {
            self.maybe_release();
        } else {
            self.queue_action(&player_id, &action, &action_id);
        }
        out.reply = Reply::ActionAccepted { action_id, turn };
        Ok(())
    }

    fn queue_action(&mut self, player_id: &str, action: &Value, action_id: &str) -> u64 {
        self.queue(PendingEntry::action(player_id, action.clone(), action_id))
    }

    /// Simultaneous turns: once everyone who may act has submitted, release the held actions
    /// together, in seat order.
    fn maybe_release(&mut self) {
        if !self.rules.is_simultaneous() || self.released || self.status != Status::Active {
            return;
        }
        let actors: Vec<usize> = (0..self.players.len())
            .filter(|&i| self.may_act(&self.players[i]))
            .collect();
        if actors.is_empty() || actors.iter().any(|&i| self.players[i].pending.is_none()) {
            return;
        }
        let mut last = None;
        for i in actors {
            let p = &mut self.players[i];
            let Some(pa) = p.pending.as_mut().filter(|pa| pa.held) else {
                continue;
            };
            pa.held = false;
            let (pid, action, aid) = (p.player_id.clone(), pa.action.clone(), pa.action_id.clone());
            last = Some(self.queue_action(&pid, &action, &aid));
        }
        self.released = true;
        self.release_seq = last;
        self.release_delivered = last.is_none();
    }

    /// Resolves a player's pending action.
    fn resolve(&mut self, idx: usize, status: ActionStatus, reason: Value, t: u64) {
        let p = &mut self.players[idx];
        let Some(pa) = p.pending.take() else {
            return;
        };
        if status == ActionStatus::Applied {
            // The only thing that clears strikes.
            p.strikes = 0;
        }
        p.last_action = Some(LastAction {
            action_id: pa.action_id.clone(),
            turn: pa.turn,
            status,
            reason: reason.clone(),
            at_ms: t,
        });
        let pid = p.player_id.clone();
        self.push_event(
            t,
            "action",
            json!({ "playerId": pid, "actionId": pa.action_id, "turn": pa.turn, "status": status.as_str(), "reason": reason }),
        );
    }

    // ---------------------------------------------------------------- host ops

    fn publish(&mut self, ops: Vec<Op>, now: u64, out: &mut Outcome) -> Result<(), ProtocolError> {
        if ops.len() > crate::ops::MAX_OPS {
            return Err(ProtocolError::bad_request(format!(
                "{} ops in one request; send at most {} per request",
                ops.len(),
                crate::ops::MAX_OPS
            )));
        }
        for (i, op) in ops.iter().enumerate() {
            if let Some(pid) = op.player_id() {
                if self.player(pid).is_none() {
                    let seated: Vec<&str> =
                        self.players.iter().map(|p| p.player_id.as_str()).collect();
                    return Err(ProtocolError::bad_request(format!(
                        "ops[{i}]: playerId {pid} is not a player in this session; players are {seated:?}"
                    )));
                }
            }
        }
        let old_on_turn = self.on_turn.clone();
        let mut fresh: Vec<String> = Vec::new();
        let mut published = false;
        let mut rejected = false;
        for op in ops {
            match op {
                Op::State { state } => {
                    self.state = state;
                    published = true;
                }
                Op::Observation {
                    player_id,
                    observation,
                } => {
                    if let Some(p) = self.player_mut(&player_id) {
                        p.observation = Some(observation);
                    }
                }
                // After the end only the final picture may still change (games often publish
                // their final state right after ending); turn ops are moot.
                _ if self.status == Status::Finished => {}
                Op::LegalActions { player_id, actions } => {
                    self.legal_actions_seen = true;
                    published = true;
                    let sequential = self.rules.enforces_turns() && !self.rules.simultaneous;
                    if sequential && !actions.is_empty() {
                        // The platform does the clearing: exactly one player is on turn.
                        for p in &mut self.players {
                            p.legal_actions = None;
                        }
                    }
                    let Some(p) = self.player_mut(&player_id) else {
                        continue;
                    };
                    if actions.is_empty() {
                        p.legal_actions = None;
                    } else {
                        p.legal_actions = Some(actions);
                        fresh.push(player_id);
                    }
                }
                Op::Reject {
                    player_id,
                    reason,
                    action_id,
                } => {
                    rejected = true;
                    self.reject(&player_id, reason, action_id, now);
                }
                Op::End { result, reason } => {
                    let reason = reason.unwrap_or_else(|| "game_over".to_string());
                    self.finish(now, result, &reason, false, out);
                }
            }
        }
        if self.status == Status::Finished {
            return Ok(());
        }
        let new_on_turn = self.compute_on_turn();
        let delivered = |s: &Session, pid: &str| {
            s.player(pid)
                .and_then(|p| p.pending.as_ref())
                .is_some_and(|pa| pa.delivered_at_ms.is_some())
        };
        let any_delivered = self.players.iter().any(|p| delivered(self, &p.player_id));
        let advance = if !self.rules.enforces_turns() {
            new_on_turn != old_on_turn || (published && any_delivered)
        } else if self.rules.simultaneous {
            (published && self.release_delivered && !rejected)
                || (old_on_turn.is_empty() && !new_on_turn.is_empty())
        } else if !self.legal_actions_seen {
            published && any_delivered
        } else {
            new_on_turn != old_on_turn
                || fresh
                    .iter()
                    .any(|pid| new_on_turn.contains(pid) && delivered(self, pid))
        };
        self.on_turn = new_on_turn;
        if advance {
            self.advance_turn(now);
        }
        self.maybe_release();
        Ok(())
    }

    fn compute_on_turn(&self) -> Vec<String> {
        self.players
            .iter()
            .filter(|p| !p.left && p.legal_actions.as_ref().is_some_and(|a| !a.is_empty()))
            .map(|p| p.player_id.clone())
            .collect()
    }

    fn reject(&mut self, player_id: &str, reason: Value, action_id: Option<String>, now: u64) {
        let Some(idx) = self.players.iter().position(|p| p.player_id == player_id) else {
            return;
        };
        let p = &self.players[idx];
        let hits_pending = p
            .pending
            .as_ref()
            .is_some_and(|pa| !pa.held && action_id.as_deref().is_none_or(|id| id == pa.action_id));
        let rejected_id = action_id
            .clone()
            .or_else(|| p.pending.as_ref().map(|pa| pa.action_id.clone()));
        self.rejections.push(Rejection {
            player_id: player_id.to_string(),
            action_id: rejected_id,
            reason: reason.clone(),
            turn: self.turn,
            at_ms: now,
        });
        if self.rejections.len() > MAX_REJECTIONS {
            let extra = self.rejections.len() - MAX_REJECTIONS;
            self.rejections.drain(..extra);
        }
        if hits_pending {
            self.resolve(idx, ActionStatus::Rejected, reason, now);
        } else if let (Some(id), Some(la)) = (&action_id, self.players[idx].last_action.as_mut()) {
            // A late answer to an action we already called unconfirmed: tell the truth.
            if la.action_id == *id && la.status == ActionStatus::Unconfirmed {
                la.status = ActionStatus::Rejected;
                la.reason = reason;
                la.at_ms = now;
            }
        }
    }

    fn advance_turn(&mut self, t: u64) {
        self.turn += 1;
        for i in 0..self.players.len() {
            let Some(pa) = &self.players[i].pending else {
                continue;
            };
            if pa.delivered_at_ms.is_some() {
                self.resolve(i, ActionStatus::Applied, Value::Null, t);
            } else if pa.held {
                self.resolve(
                    i,
                    ActionStatus::Unconfirmed,
                    json!("the turn moved on before every player had submitted"),
                    t,
                );
            }
            // An action not yet delivered stays pending: the game has not seen it.
        }
        self.rejections.clear();
        self.released = false;
        self.release_seq = None;
        self.release_delivered = false;
        self.clock = (self.rules.has_clock() && !self.on_turn.is_empty()).then_some(Clock {
            started_at_ms: t,
            strikes_this_turn: 0,
            paused_since_ms: Some(t),
            stopped: false,
        });
        let seats = self.on_turn_seats();
        self.push_event(
            t,
            "turn",
            json!({ "turn": self.turn, "onTurnSeats": seats }),
        );
    }

    pub(crate) fn on_turn_seats(&self) -> Vec<u32> {
        self.players
            .iter()
            .filter(|p| self.on_turn.contains(&p.player_id))
            .map(|p| p.seat)
            .collect()
    }

    // ---------------------------------------------------------------- host queue

    fn queue(&mut self, mut body: PendingEntry) -> u64 {
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
    fn take_entries(&mut self, after: Option<u64>, now: u64) -> Vec<PendingEntry> {
        if let Some(a) = after {
            self.host_queue.retain(|e| e.seq > a);
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

    fn host_seen(&mut self, now: u64) {
        self.host.last_seen_ms = self.host.last_seen_ms.max(now);
        self.host.alive = true;
    }

    // ---------------------------------------------------------------- ending

    /// Ends the game. `by_platform`: the platform (not the game) ended it, so a v2 host gets a
    /// `session_end` entry.
    fn finish(
        &mut self,
        t: u64,
        result: Value,
        reason: &str,
        by_platform: bool,
        out: &mut Outcome,
    ) {
        if self.status == Status::Finished {
            return;
        }
        for i in 0..self.players.len() {
            let Some(pa) = &self.players[i].pending else {
                continue;
            };
            if pa.delivered_at_ms.is_some() {
                self.resolve(i, ActionStatus::Applied, Value::Null, t);
            } else {
                let aid = pa.action_id.clone();
                // Never reached the game: take it back out of the host's queue.
                self.host_queue
                    .retain(|e| e.delivered || e.body.action_id.as_deref() != Some(aid.as_str()));
                self.resolve(
                    i,
                    ActionStatus::Unconfirmed,
                    json!("the game ended before the action reached it"),
                    t,
                );
            }
        }
        self.status = Status::Finished;
        self.ended_at_ms = Some(t);
        self.result = Some(result.clone());
        self.end_reason = Some(reason.to_string());
        self.clock = None;
        self.on_turn.clear();
        self.reserved_until_ms = None;
        self.released = false;
        self.release_seq = None;
        self.release_delivered = false;
        if by_platform && !self.rules.legacy {
            self.queue(PendingEntry::session_end(result.clone(), reason));
        }
        self.push_event(
            t,
            "game_over",
            json!({ "result": result, "reason": reason }),
        );
        if self.auto_rematch_due() {
            out.effects.push(Effect::CreateRematch);
        }
    }

    /// `autoRematch` opens the next round when a played game ends for any reason except a
    /// disconnected or departing host (`host_left`), unless a player left or fewer than
    /// `minPlayers` remain. A table closed before it ever started is not "a game".
    pub(crate) fn auto_rematch_due(&self) -> bool {
        self.rules.auto_rematch
            && !self.rules.legacy
            && self.started_at_ms.is_some()
            && !matches!(
                self.end_reason.as_deref(),
                Some("host_disconnected" | "host_left")
            )
            && self.players.iter().all(|p| !p.left)
            && self.players.len() >= self.rules.min_players as usize
    }

    /// `winner` of a forfeit: the other player in a 2-player game, else null.
    fn forfeit_winner(&self, losers: &[String]) -> Value {
        if self.players.len() == 2 && losers.len() == 1 {
            self.players
                .iter()
                .find(|p| p.player_id != losers[0])
                .map_or(Value::Null, |p| json!(p.player_id))
        } else {
            Value::Null
        }
    }

    // ---------------------------------------------------------------- time

    /// Runs every time-based transition due at or before `now`, in chronological order.
    fn catch_up(&mut self, now: u64, out: &mut Outcome) {
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
        if let Some(d) = self.deadline_ms() {
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
                let gone: Vec<String> = self
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
        self.reserved_until_ms = None;
        let ids: Vec<String> = self.players.iter().map(|p| p.player_id.clone()).collect();
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
        let Some(clock) = self.clock.as_mut() else {
            return;
        };
        clock.strikes_this_turn += 1;
        let max = self.rules.max_strikes;
        let struck: Vec<usize> = (0..self.players.len())
            .filter(|&i| self.players[i].pending.is_none() && self.may_act(&self.players[i]))
            .collect();
        let mut finals: Vec<String> = Vec::new();
        for i in struck {
            let p = &mut self.players[i];
            p.strikes += 1;
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
            let result = json!({
                "winner": self.forfeit_winner(&finals),
                "reason": "timeout",
                "forfeitedBy": finals[0],
                "strikes": strikes,
            });
            self.finish(t, result, "timeout", true, out);
        } else if let Some(c) = self.clock.as_mut() {
            // The game decides what a final timeout means; keep quiet until the turn moves.
            c.stopped = true;
        }
    }

    /// Starts or pauses the clock to match the situation at `t`.
    fn sync_clock(&mut self, t: u64) {
        let should_run = self.status == Status::Active
            && self.host.alive
            && self
                .players
                .iter()
                .any(|p| p.pending.is_none() && !p.left && self.may_act(p));
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

    /// Diffs the armed timers against what is due next.
    pub(crate) fn sync_timers(&mut self, out: &mut Outcome) {
        let due = self.due_timers();
        let keys: Vec<String> = due.iter().map(|(k, _)| k.key()).collect();
        let stale: Vec<String> = self
            .timers
            .keys()
            .filter(|k| !keys.contains(k))
            .cloned()
            .collect();
        for k in stale {
            if let Some(d) = self.timers.remove(&k) {
                out.effects.push(Effect::Cancel(d));
            }
        }
        for ((kind, at), key) in due.into_iter().zip(keys) {
            // A clock deadline belongs to its turn: a new turn re-arms it even at the same
            // instant, so the old turn's entry goes stale.
            let same =
                |d: &Deadline| d.at_ms == at && (kind != TimerKind::Clock || d.turn == self.turn);
            if self.timers.get(&key).is_some_and(same) {
                continue;
            }
            if let Some(old) = self.timers.remove(&key) {
                out.effects.push(Effect::Cancel(old));
            }
            self.timer_generation += 1;
            let d = Deadline {
                session_id: self.session_id.clone(),
                kind,
                at_ms: at,
                generation: self.timer_generation,
                turn: self.turn,
            };
            out.effects.push(Effect::Schedule(d.clone()));
            self.timers.insert(key, d);
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
        self.timers.values().cloned().collect()
    }

    // ---------------------------------------------------------------- bookkeeping

    fn push_event(&mut self, t: u64, kind: &str, fields: Value) {
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
    fn same_observable(&self, before: &mut Session) -> bool {
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
