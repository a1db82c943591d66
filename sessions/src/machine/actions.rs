//! Agents' actions: the `/action` checks, holding and releasing simultaneous actions, and
//! resolving a pending action.

use super::{Outcome, Reply};
use crate::error::{ProtocolCode, ProtocolError};
use crate::session::{
    action_fingerprint, key_fingerprint, ActionStatus, LastAction, PendingAction, Session, Status,
};
use crate::shared::SharedStr;
use crate::wire::PendingEntry;
use serde_json::{json, Value};
use std::sync::Arc;

impl Session {
    pub(super) fn act(
        &mut self,
        player_id: String,
        action: Value,
        turn: Option<u64>,
        (action_id, key): (String, Option<String>),
        now: u64,
        out: &mut Outcome,
    ) -> Result<(), ProtocolError> {
        let p = self.require_player(&player_id)?;
        // A retry of the latest action (its answer was lost): the same action again, whatever
        // happened since. Without the key a retry in a multi-step turn (same player on turn
        // again, no `turn` sent) was a second move the game applied.
        if let Some(k) = key.as_deref() {
            // The pending action's body is kept; of a resolved one its fingerprint. An
            // earlier keyed action (the player moved on since: a retry layer's resend held
            // back) is answered as the first time too; it was taken as a new move, and the
            // game got the same move twice.
            let same = p
                .pending
                .as_ref()
                .filter(|pa| pa.key.as_deref() == Some(k))
                .map(|pa| (pa.action_id.clone(), pa.turn, *pa.action == action))
                .or_else(|| {
                    p.last_action
                        .as_ref()
                        .filter(|la| la.key.as_deref() == Some(k))
                        .map(|la| {
                            let same = la
                                .fingerprint
                                .is_none_or(|f| f == action_fingerprint(&action));
                            (la.action_id.clone(), la.turn, same)
                        })
                })
                .or_else(|| {
                    let hashed = key_fingerprint(k);
                    p.past
                        .earlier_keyed
                        .iter()
                        .flatten()
                        .find(|ka| ka.key == hashed)
                        .map(|ka| {
                            let same = ka.fingerprint == action_fingerprint(&action);
                            (ka.action_id.clone(), ka.turn, same)
                        })
                });
            if let Some((action_id, t, same_action)) = same {
                // Another action, or a `turn` other than that action's, is a new move sent
                // under a reused key: answered as the old move, it was dropped without a word
                // and the agent, still on turn, sent it again and again.
                if !same_action || turn.is_some_and(|sent| sent != t) {
                    return Err(ProtocolError::new(
                        ProtocolCode::IdempotencyKeyReused,
                        format!(
                            "idempotencyKey {k:?} is your action {action_id}'s (turn {t}) and this is another move; send a fresh idempotencyKey with every new action (the same one only to retry that action, with the same action and turn)"
                        ),
                    ));
                }
                out.reply = Reply::ActionAccepted {
                    action_id: action_id.into(),
                    turn: t,
                };
                return Ok(());
            }
        }
        let fingerprint = action_fingerprint(&action);
        // Without a key, a resend (its answer lost) is the same action with the same or no
        // `turn`. A refusal says so, naming the action and its outcome: "the turn is over"
        // alone read as "your move was lost", and the agent moved again.
        let resent = key
            .is_none()
            .then_some(p.last_action.as_ref())
            .flatten()
            .filter(|la| la.fingerprint == Some(fingerprint) && turn.is_none_or(|t| t == la.turn))
            .map(|la| (la.action_id.clone(), la.turn, la.status));
        let resent_note = match &resent {
            Some((id, t, ActionStatus::Applied)) => format!(
                " This request repeats your action {id} of turn {t}, which was applied: it is not applied again."
            ),
            Some((id, t, ActionStatus::Pending)) => format!(
                " This request repeats your action {id} of turn {t}: the game gets it once."
            ),
            _ => String::new(),
        };
        // A finished game answers 409 `finished` to every seat, one that left it included
        // (it is still listed in the result): the contract's answer to a late action.
        if p.left && self.status != Status::Finished {
            return Err(ProtocolError::new(
                ProtocolCode::NotAPlayer,
                "you left this session; find another table with GET /available",
            ));
        }
        if action
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("__"))
        {
            return Err(ProtocolError::new(
 ProtocolCode::ReservedAction,
                "action types starting with \"__\" are reserved for platform messages; rename the type",
            ));
        }
        match self.status {
            Status::Finished => {
                return Err(ProtocolError::new(
                    ProtocolCode::Finished,
                    format!("the game is over; read the result with GET /state.{resent_note}"),
                ))
            }
            Status::Waiting => {
                return Err(ProtocolError::new(
                    ProtocolCode::NotActive,
                    "the game has not started yet; poll GET /state?wait=25 until yourTurn",
                ))
            }
            Status::Active => {}
        }
        if let Some(pa) = &p.pending {
            return Err(ProtocolError::new(
                ProtocolCode::ActionPending,
                format!(
                    "your previous action {} (turn {}) is still pending; wait for its outcome (GET /state?wait=25, lastAction).{resent_note}",
                    pa.action_id, pa.turn
                ),
            ));
        }
        if self.rules.enforces_turns() {
            if let Some(t) = turn {
                if t != self.turn {
                    // A turn ahead of the current one is no turn that "is over": it is one
                    // this session never gave out (a counter of the agent's own, or another
                    // session's turn).
                    let what = if t < self.turn {
                        format!("turn {t} is over")
                    } else {
                        format!("turn {t} has not been reached")
                    };
                    return Err(ProtocolError::new(
                        ProtocolCode::StaleTurn,
                        format!(
                            "{what}, the current turn is {}; send the turn of your last GET /state (read it again).{resent_note}",
                            self.turn
                        ),
                    ));
                }
            }
            if !self.may_act(p) {
                return Err(ProtocolError::new(
                    ProtocolCode::NotYourTurn,
                    format!("it is not your turn; wait with GET /state?wait=25.{resent_note}"),
                ));
            }
        } else if let Some((id, t, ActionStatus::Applied)) = &resent {
            // No turn is enforced here, but the same action for the same turn as an applied
            // one is its resend: taken, the game played the move twice. The turn has moved
            // since (applying moves it), so a new move sends the current one.
            if turn.is_some() {
                return Err(ProtocolError::new(
                    ProtocolCode::StaleTurn,
                    format!(
                        "your action {id} of turn {t}, the same as this one, was applied: this request is taken as its resend and not applied again. To make the same move again, send the current turn {} (GET /state), or a fresh idempotencyKey with every action",
                        self.turn
                    ),
                ));
            }
        }
        let hold = self.rules.is_simultaneous() && !self.released;
        let turn = self.turn;
        // Shared by the pending action, the latest action and the host's entry.
        let pid = p.player_id.clone();
        let shared_id = SharedStr::from(action_id.as_str());
        let action = Arc::new(action);
        let key = key.map(SharedStr::from);
        let last = LastAction {
            action_id: shared_id.clone(),
            turn,
            status: ActionStatus::Pending,
            reason: Value::Null,
            at_ms: now,
            key: key.clone(),
            fingerprint: Some(fingerprint),
        };
        let pending = PendingAction {
            action_id: shared_id.clone(),
            action: action.clone(),
            turn,
            submitted_at_ms: now,
            delivered_at_ms: None,
            held: hold,
            key,
        };
        let Some(p) = self.player_mut(&player_id) else {
            return Err(ProtocolError::not_a_player());
        };
        p.pending = Some(pending);
        if let Some(earlier) = p.last_action.replace(last) {
            p.past.remember_keyed(earlier);
        }
        if hold {
            self.maybe_release();
        } else {
            self.queue_action(pid, action, shared_id);
        }
        out.reply = Reply::ActionAccepted { action_id, turn };
        Ok(())
    }

    fn queue_action(
        &mut self,
        player_id: SharedStr,
        action: Arc<Value>,
        action_id: SharedStr,
    ) -> u64 {
        self.queue(PendingEntry::action(player_id, action, action_id))
    }

    /// Simultaneous turns: once everyone who may act has submitted, release the held actions
    /// together, in seat order.
    pub(super) fn maybe_release(&mut self) {
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
            last = Some(self.queue_action(pid, action, aid));
        }
        self.released = true;
        self.release_seq = last;
        self.release_delivered = last.is_none();
    }

    /// Resolves a player's pending action.
    pub(super) fn resolve(&mut self, idx: usize, status: ActionStatus, reason: Value, t: u64) {
        let p = &mut self.players[idx];
        let Some(pa) = p.pending.take() else {
            return;
        };
        if status == ActionStatus::Applied {
            p.clear_strikes();
        }
        // The latest action is the pending one (set together); a record stored before the
        // fingerprint existed gets it here.
        let fingerprint = p
            .last_action
            .as_ref()
            .filter(|la| la.action_id == pa.action_id)
            .and_then(|la| la.fingerprint)
            .or_else(|| Some(action_fingerprint(&pa.action)));
        p.last_action = Some(LastAction {
            action_id: pa.action_id.clone(),
            turn: pa.turn,
            status,
            reason: reason.clone(),
            at_ms: t,
            key: pa.key.clone(),
            fingerprint,
        });
        let pid = p.player_id.clone();
        self.push_action_event(t, &pid, &pa.action_id, pa.turn, status, reason);
    }

    /// The event log's line for an action's outcome (its resolution, or a late apply).
    pub(super) fn push_action_event(
        &mut self,
        t: u64,
        player_id: &str,
        action_id: &str,
        turn: u64,
        status: ActionStatus,
        reason: Value,
    ) {
        self.push_event(
            t,
            "action",
            json!({ "playerId": player_id, "actionId": action_id, "turn": turn, "status": status.as_str(), "reason": reason }),
        );
    }
}
