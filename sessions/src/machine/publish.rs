//! The host's ops: publishing state and legal actions, rejections, and moving the turn.

use super::{Outcome, MAX_REJECTIONS};
use crate::error::ProtocolError;
use crate::ops::Op;
use crate::session::{ActionStatus, Clock, PendingAction, Rejection, Session, Status};
use crate::shared::SharedStr;
use serde_json::{json, Value};

impl Session {
    pub(super) fn publish(
        &mut self,
        ops: Vec<Op>,
        now: u64,
        out: &mut Outcome,
    ) -> Result<(), ProtocolError> {
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
            // A reject naming another player's action was recorded as a rejection of the
            // named player (whose action it never was) and left the real owner's pending.
            if let Op::Reject {
                player_id,
                action_id: Some(aid),
                ..
            } = op
            {
                if let Some(owner) = self.owner_of_action(aid) {
                    if owner != player_id.as_str() {
                        return Err(ProtocolError::bad_request(format!(
                            "ops[{i}]: action {aid} is player {owner}'s, not {player_id}'s; send the reject with \"playerId\": \"{owner}\" (the playerId of the AGENT_ACTION that carried it)"
                        )));
                    }
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
                    self.state = std::sync::Arc::new(state);
                    published = true;
                }
                Op::Observation {
                    player_id,
                    observation,
                } => {
                    if let Some(p) = self.player_mut(&player_id) {
                        p.observation = Some(std::sync::Arc::new(observation));
                    }
                }
                // After the end only the final picture may still change (games often publish
                // their final state right after ending); turn ops are moot.
                _ if self.status == Status::Finished => {}
                Op::LegalActions { player_id, actions } => {
                    self.legal_actions_seen = true;
                    published = true;
                    let sequential = self.rules.is_sequential();
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
                        p.legal_actions = Some(std::sync::Arc::new(actions));
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
        if published {
            self.turn_opened = true;
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
                    .any(|pid| new_on_turn.iter().any(|on| on == pid) && delivered(self, pid))
        };
        self.on_turn = new_on_turn;
        if advance {
            self.advance_turn(now);
        }
        self.maybe_release();
        Ok(())
    }

    /// The player whose action `action_id` is (pending, or their last one), if any.
    fn owner_of_action(&self, action_id: &str) -> Option<&str> {
        self.players
            .iter()
            .find(|p| {
                p.pending
                    .as_ref()
                    .is_some_and(|pa| pa.action_id == action_id)
                    || p.last_action
                        .as_ref()
                        .is_some_and(|la| la.action_id == action_id)
            })
            .map(|p| p.player_id.as_str())
    }

    fn compute_on_turn(&self) -> Vec<SharedStr> {
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
        // A reject naming an action that is neither the player's pending one nor their latest
        // is about no move of this turn (an older move, or another round's: the SDK names the
        // last action it delivered to that player, also one of the previous round). It was
        // listed in `rejections`, the current turn's, beside the move the game had not
        // answered. Taken, as a late answer, and it changes nothing.
        if let Some(id) = action_id.as_deref() {
            let known = p.pending.as_ref().is_some_and(|pa| pa.action_id == id)
                || p.last_action.as_ref().is_some_and(|la| la.action_id == id);
            if !known {
                return;
            }
        }
        // A reject that names no action (a v1 game's) is about the action the game has: the
        // delivered one. One still queued for the host never reached the game ("nothing
        // reaches the game in those cases"); it was rejected unseen and then delivered, and
        // the game got two moves.
        let targets = |pa: &&PendingAction| match action_id.as_deref() {
            Some(id) => id == pa.action_id,
            None => pa.delivered_at_ms.is_some(),
        };
        let hits_pending = p
            .pending
            .as_ref()
            .filter(targets)
            .is_some_and(|pa| !pa.held);
        let rejected_id = action_id.clone().or_else(|| {
            p.pending
                .as_ref()
                .filter(targets)
                .map(|pa| pa.action_id.to_string())
        });
        // A reject of an action already resolved `applied` or `rejected` is a late or repeated
        // answer about a move that has its outcome. Of an applied one it belongs to no turn
        // shown now: recorded, it read as a rejection in a turn the player had not acted in
        // yet (`rejections` are the current turn's), beside `applied`. Of a rejected one it is
        // the same rejection again (a host that resends, a game that reports it twice, late
        // or not): it was listed once per copy, so one bad move counted as several.
        let already_resolved = !hits_pending
            && action_id.as_ref().is_some_and(|id| {
                self.players[idx].last_action.as_ref().is_some_and(|la| {
                    la.action_id == *id
                        && matches!(la.status, ActionStatus::Applied | ActionStatus::Rejected)
                }) || self.rejections.iter().any(|r| {
                    r.player_id == player_id && r.action_id.as_deref() == Some(id.as_str())
                })
            });
        if !already_resolved {
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
        self.apply_unconfirmed_late(t);
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

    /// The game moves on from the turn (before `advance_turn` counts it): a delivered action
    /// called `unconfirmed` (the game was silent for `unconfirmed_ms`) on this turn, whose
    /// player sent nothing since, was taken: the contract's "applied when the host publishes
    /// the next turn", late. It stayed unconfirmed, with the strikes only an applied action
    /// clears. Unless its player was struck after it: a game passes a struck player's turn
    /// (`AGENT_TIMEOUT`), so that move on may be the timeout's, and applying it cleared the
    /// strike just given for a move never taken (then it stays unconfirmed, as before).
    fn apply_unconfirmed_late(&mut self, t: u64) {
        let leaving = self.turn;
        let mut applied = Vec::new();
        for p in &mut self.players {
            let Some(la) = p.last_action.as_ref() else {
                continue;
            };
            let late = p.pending.is_none()
                && la.status == ActionStatus::Unconfirmed
                && la.turn == leaving
                && !p.struck_since(la.at_ms);
            if !late {
                continue;
            }
            p.clear_strikes();
            if let Some(la) = p.last_action.as_mut() {
                la.status = ActionStatus::Applied;
                la.at_ms = t;
                applied.push((p.player_id.clone(), la.action_id.clone()));
            }
        }
        for (pid, aid) in applied {
            self.push_action_event(t, &pid, &aid, leaving, ActionStatus::Applied, Value::Null);
        }
    }

    /// The seats on turn, in seat order.
    pub fn on_turn_seats(&self) -> Vec<u32> {
        self.players
            .iter()
            .filter(|p| self.on_turn.contains(&p.player_id))
            .map(|p| p.seat)
            .collect()
    }
}
