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
//!
//! The rules are split by what they are about: `seats` (join, ready, leave), `actions`
//! (`/action`, simultaneous release, outcomes), `publish` (the host's ops and the turn),
//! `host` (the pending-actions queue and liveness), `ending` (finish, auto rematch),
//! `timers` (catch-up, clock, strikes, activation, the timer diff) and `observe` (the events
//! log and what moves `version`).

use crate::error::{ProtocolCode, ProtocolError};
use crate::ops::Op;
use crate::session::{Deadline, Session, Status, TimerKind};
use crate::shared::SharedStr;
use crate::wire::PendingEntry;
use serde_json::{json, Value};

mod actions;
mod ending;
mod host;
mod observe;
mod publish;
mod seats;
mod timers;

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
    /// A leave passed on from the finished round before this one ([`Effect::LeaveSession`]):
    /// opts out of this round while it has not started, passes on from a finished one, and
    /// leaves a game under way alone (a late leave of an old round is no forfeit of the
    /// current one).
    OptOut { player_id: String },
    /// Any authenticated player request on this session: readies a reserved rematch seat.
    PlayerSeen { player_id: String },
    /// `POST /ops` (and the v1 single-op endpoints). Counts as a host sign of life.
    /// `batch_id` (the host's, optional): a batch carrying the id of the last applied one is
    /// a resend whose answer was lost, so it is not applied again.
    PublishOps {
        ops: Vec<Op>,
        batch_id: Option<String>,
    },
    /// `POST /action`. `action_id` is a fresh id from the caller. `idempotency_key` (the
    /// agent's, optional) makes a retry safe: while the player's latest action carries the
    /// same key, the event is that action again (its id and turn), not a new one.
    Action {
        player_id: String,
        action: Value,
        turn: Option<u64>,
        action_id: String,
        idempotency_key: Option<String>,
    },
    /// `GET /pending-actions` starts: acknowledges `after`, returns what is queued. With nothing
    /// to return and `wait_ms > 0`, the poll stays open (send `HostPollDone` when it ends).
    HostPoll { after: Option<u64>, wait_ms: u64 },
    /// A long-poll opened by `HostPoll` ends (woken or timed out); returns what is queued now.
    HostPollDone { after: Option<u64> },
    /// A long-poll opened by `HostPoll` whose client went away before it ended (a closed host
    /// tab): it stops counting as open, and nothing is taken from the queue (nobody reads it).
    HostPollAbandoned,
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
    /// Nobody could reach the server from `from_ms` to `to_ms` (Redis stalled, or no process
    /// served): the I/O layer learns it from the delayed set's pollers
    /// (`horst_store::Stall`) and applies it before anything else. Transitions due before
    /// the outage still run, each at its own instant; every wait still running at its start
    /// (the turn clock, the host's liveness and gone windows, unconfirmed actions, the
    /// rematch reservation, the table's start) resumes after it with the time it had left,
    /// so nobody is charged for time in which nobody could act. Only the part after the
    /// session's latest instant counts: an outage applied again (another process, a retry)
    /// moves nothing.
    Outage { from_ms: u64, to_ms: u64 },
    /// The operator ends the table (`/admin`, audited by the caller): the game finishes with
    /// reason `ended_by_operator` and `reason` in the result, and opens no next round by
    /// itself. A finished game is refused (`finished`).
    OperatorEnd { reason: String },
}

/// The end reason of a table the operator ended.
pub const OPERATOR_END: &str = "ended_by_operator";

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
    /// Apply `Event::OptOut { player_id }` to `session_id` (opting out of a rematch that
    /// already exists; ignore a 403 there).
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
        if let Some(out) = self.stale(&event) {
            return Ok(out);
        }
        let before = self.clone();
        match self.apply_after(&before, event, now_ms) {
            Ok(out) => Ok(out),
            Err(e) => {
                *self = before;
                Err(e)
            }
        }
    }

    /// [`Session::apply`] on a copy, leaving `self` as it is: the session after `event`, or
    /// `None` when the event stores nothing (the session after it is then exactly `self`).
    ///
    /// One copy of the record per event, as `apply` (which keeps one to restore on error),
    /// but a caller holding a shared record (the store's cache) needs no copy of its own to
    /// apply to, and keeps the shared one when nothing is stored.
    pub fn apply_to(
        &self,
        event: Event,
        now_ms: u64,
    ) -> Result<(Option<Session>, Outcome), ProtocolError> {
        if let Some(out) = self.stale(&event) {
            return Ok((None, out));
        }
        let mut next = self.clone();
        let out = next.apply_after(self, event, now_ms)?;
        Ok((out.stored.then_some(next), out))
    }

    /// A timer that fired for a generation no longer armed (the turn moved on, or it was
    /// re-armed): nothing happens.
    fn stale(&self, event: &Event) -> Option<Outcome> {
        match event {
            Event::TimerFired { kind, generation } => match self.timers.get(&*kind.key()) {
                Some(d) if d.generation == *generation => None,
                _ => Some(Outcome::default()),
            },
            _ => None,
        }
    }

    /// Applies `event` to `self`, which equals `before` (not stale: [`Session::stale`]). On
    /// error `self` is left half-changed: the caller restores or drops it.
    fn apply_after(
        &mut self,
        before: &Session,
        event: Event,
        now_ms: u64,
    ) -> Result<Outcome, ProtocolError> {
        let mut now = now_ms.max(self.now_ms);
        if let Event::TimerFired { kind, .. } = &event {
            // A timer popped a little early (clocks of API processes differ) still counts as
            // firing at its own instant.
            if let Some(d) = self.timers.get(&*kind.key()) {
                now = now.max(d.at_ms);
            }
        }
        let first_seq = self.next_seq;
        let mut out = Outcome::default();
        self.step(event, now, &mut out)?;
        self.sync_timers(&mut out);
        if self.next_seq > first_seq {
            out.effects.push(Effect::HostEntriesQueued {
                first_seq,
                last_seq: self.next_seq - 1,
            });
        }
        if !self.same_observable(before) {
            self.version += 1;
            out.changed = true;
        }
        let moved_clock = self.now_ms;
        self.now_ms = before.now_ms;
        if self != before {
            self.now_ms = moved_clock;
            self.rev += 1;
            out.stored = true;
        }
        Ok(out)
    }

    fn step(&mut self, event: Event, now: u64, out: &mut Outcome) -> Result<(), ProtocolError> {
        if let Event::Outage { from_ms, to_ms } = event {
            self.skip_outage(from_ms, to_ms.min(now), out);
        }
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
            Event::OptOut { player_id } => {
                if self.status == Status::Active {
                    self.require_player(&player_id)?;
                    return Ok(());
                }
                self.leave(&player_id, now, out)
            }
            Event::PlayerSeen { player_id } => {
                self.require_player(&player_id)?;
                self.mark_ready(&player_id, now);
                Ok(())
            }
            Event::PublishOps { ops, batch_id } => {
                self.host_seen(now);
                if batch_id.is_some() && batch_id.as_deref() == self.last_batch_id.as_deref() {
                    return Ok(());
                }
                self.publish(ops, now, out)?;
                // On an error the session is restored, so only an applied batch is remembered.
                self.last_batch_id = batch_id.map(SharedStr::from);
                Ok(())
            }
            Event::Action {
                player_id,
                action,
                turn,
                action_id,
                idempotency_key,
            } => self.act(
                player_id,
                action,
                turn,
                (action_id, idempotency_key),
                now,
                out,
            ),
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
            Event::HostPollAbandoned => {
                // The host was there until its connection closed; from then on only the
                // liveness window counts, as after a poll that ended.
                self.host.open_polls = self.host.open_polls.saturating_sub(1);
                if self.host.open_polls == 0 {
                    self.host.open_until_ms = 0;
                }
                self.host_seen(now);
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
                        existing: Some(next.to_string()),
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
                        return Err(ProtocolError::new(
                            ProtocolCode::AlreadyLinked,
                            format!("this session's next round is already {existing}"),
                        ))
                    }
                    None => {}
                }
                self.check_rematch_allowed()?;
                self.push_event(now, "rematch", json!({ "nextSessionId": next_session_id }));
                self.next_session_id = Some(next_session_id.into());
                Ok(())
            }
            Event::TimerFired { .. } | Event::Tick | Event::Outage { .. } => Ok(()),
            Event::OperatorEnd { reason } => {
                if self.status == Status::Finished {
                    return Err(ProtocolError::new(
                        ProtocolCode::Finished,
                        "this game is over already; nothing to end",
                    ));
                }
                let result = json!({ "winner": null, "reason": OPERATOR_END, "message": reason });
                self.finish(now, result, OPERATOR_END, true, out);
                Ok(())
            }
        }
    }
}
