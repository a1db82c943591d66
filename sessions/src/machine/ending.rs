//! Ending a game, and whether it opens the next round.

use super::{Effect, Outcome};
use crate::session::{ActionStatus, Session, Status};
use crate::wire::PendingEntry;
use serde_json::{json, Value};

impl Session {
    /// Ends the game. `by_platform`: the platform (not the game) ended it, so a v2 host gets a
    /// `session_end` entry.
    pub(super) fn finish(
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
    /// disconnected or departing host (`host_left`) or the operator ending it, unless a player left or fewer than
    /// `minPlayers` remain. A table closed before it ever started is not "a game".
    pub fn auto_rematch_due(&self) -> bool {
        self.rules.auto_rematch
            && !self.rules.legacy
            && self.started_at_ms.is_some()
            && !matches!(
                self.end_reason.as_deref(),
                Some("host_disconnected" | "host_left" | super::OPERATOR_END)
            )
            && self.players.iter().all(|p| !p.left)
            && self.players.len() >= self.rules.min_players as usize
    }

    /// `winner` of a forfeit: the other player in a 2-player game, else null.
    pub(super) fn forfeit_winner<S: AsRef<str>>(&self, losers: &[S]) -> Value {
        if self.players.len() == 2 && losers.len() == 1 {
            self.players
                .iter()
                .find(|p| *p.player_id != *losers[0].as_ref())
                .map_or(Value::Null, |p| json!(p.player_id))
        } else {
            Value::Null
        }
    }
}
