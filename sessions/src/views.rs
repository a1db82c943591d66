//! Pure read views in the contract's exact shapes, and the long-poll wake-up rules.

use crate::iso::iso8601_ms;
use crate::session::{ActionStatus, Player, Session, Status};
use serde_json::{json, Value};

impl Session {
    /// The agent snapshot of section 5 (`GET /state`, embedded in `/action` answers), or `None`
    /// if `player_id` has no seat.
    pub fn snapshot(&self, player_id: &str) -> Option<Value> {
        let me = self.player(player_id)?;
        let your_turn = self.is_your_turn(player_id);
        let waiting_for = match self.status {
            Status::Waiting => json!("players"),
            Status::Finished => Value::Null,
            Status::Active => match &me.pending {
                // A held simultaneous action waits for the others to submit.
                Some(pa) if pa.held => json!("opponent"),
                Some(_) => json!("host"),
                // The host is not responding: whoever is on turn waits for it too.
                None if !self.host.alive => json!("host"),
                // Between game_start and the game's first publish nobody is on turn.
                None if self.awaiting_first_publish() => json!("host"),
                None if your_turn => Value::Null,
                // Nobody holds legal actions: the game is working out what comes next.
                None if self.legal_actions_seen
                    && self.on_turn.is_empty()
                    && self.rules.turn_based =>
                {
                    json!("host")
                }
                None => json!("opponent"),
            },
        };
        let legal_actions = if your_turn {
            json!(me.legal_actions.clone().unwrap_or_default())
        } else {
            Value::Null
        };
        let last_action = me.last_action.as_ref().map_or(Value::Null, |la| {
            json!({
                "actionId": la.action_id,
                "turn": la.turn,
                "status": la.status.as_str(),
                "reason": la.reason,
                "at": iso8601_ms(la.at_ms),
            })
        });
        let rejections: Vec<Value> = self
            .rejections
            .iter()
            .filter(|r| r.player_id == player_id)
            .map(|r| {
                json!({ "actionId": r.action_id, "reason": r.reason, "turn": r.turn, "at": iso8601_ms(r.at_ms) })
            })
            .collect();
        let players: Vec<Value> = self
            .players
            .iter()
            .map(|p| {
                let mut v = player_entry(p);
                v["you"] = json!(p.player_id == player_id);
                v
            })
            .collect();
        Some(json!({
            "sessionId": self.session_id,
            "playerId": me.player_id,
            "seat": me.seat,
            "status": self.status.as_str(),
            "round": self.round,
            "seriesId": self.series_id,
            "previousSessionId": self.previous_session_id,
            "nextSessionId": self.next_session_id,
            "yourTurn": your_turn,
            "turn": self.turn,
            "deadline": self.deadline_iso(),
            "strikes": me.strikes,
            "maxStrikes": self.rules.max_strikes,
            "waitingFor": waiting_for,
            "state": me.observation.clone().unwrap_or_else(|| self.state.clone()),
            "legalActions": legal_actions,
            "lastAction": last_action,
            "rejections": rejections,
            "players": players,
            "result": self.result,
            "skillUrl": self.game.skill_url,
            "version": self.version,
        }))
    }

    /// The public spectator view of section 7: no legal actions, observations or rejections.
    pub fn public_view(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "gameId": self.game.game_id,
            "gameTitle": self.game.game_title,
            "status": self.status.as_str(),
            "round": self.round,
            "seriesId": self.series_id,
            "turn": self.turn,
            "deadline": self.deadline_iso(),
            "onTurnSeats": self.on_turn_seats(),
            "players": self.player_list(),
            "state": self.state,
            "result": self.result,
            "version": self.version,
            "nextSessionId": self.next_session_id,
            "previousSessionId": self.previous_session_id,
        })
    }

    /// Whether `GET /available` lists this session: joinable tables by default; `all` adds
    /// active and reserved ones. Finished sessions are never listed.
    pub fn listed_in_available(&self, all: bool) -> bool {
        match self.status {
            Status::Finished => false,
            _ if all => true,
            _ => self.is_joinable() && !self.is_reserved(),
        }
    }

    /// `?game=` of `/available`: the game's id, slug or title (case-insensitive).
    pub fn matches_game(&self, query: &str) -> bool {
        [
            &self.game.game_id,
            &self.game.game_slug,
            &self.game.game_title,
        ]
        .into_iter()
        .flatten()
        .any(|v| v.eq_ignore_ascii_case(query.trim()))
    }

    /// A newcomer's join would succeed.
    pub fn is_joinable(&self) -> bool {
        self.status == Status::Waiting && self.players.len() < self.rules.max_players as usize
    }

    /// One `GET /available` entry.
    pub fn available_entry(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "gameId": self.game.game_id,
            "gameTitle": self.game.game_title,
            "gameSlug": self.game.game_slug,
            "skillUrl": self.game.skill_url,
            "status": self.status.as_str(),
            "joinable": self.is_joinable(),
            "reserved": self.is_reserved(),
            "currentPlayers": self.players.iter().filter(|p| !p.left).count(),
            "minPlayers": self.rules.min_players,
            "maxPlayers": self.rules.max_players,
            "round": self.round,
            "host": self.host.kind,
            "createdAt": iso8601_ms(self.created_at_ms),
            "config": self.config,
        })
    }

    /// `201` body of `POST /bridge/sessions`.
    pub fn created_response(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "config": self.config,
            "skillUrl": self.game.skill_url,
            "round": self.round,
            "seriesId": self.series_id,
            "players": self.player_list(),
        })
    }

    /// Body of `POST /bridge/sessions/:id/ops`.
    pub fn ops_response(&self) -> Value {
        json!({
            "ok": true,
            "status": self.status.as_str(),
            "version": self.version,
            "round": self.round,
            "nextSessionId": self.next_session_id,
            "players": self.player_list(),
        })
    }

    /// Body of the v1 single-op endpoints: `{ ok }`, plus `nextSessionId` once there is one
    /// (what `reject-action` and `end` answer).
    pub fn v1_ok_response(&self) -> Value {
        match &self.next_session_id {
            Some(next) => json!({ "ok": true, "nextSessionId": next }),
            None => json!({ "ok": true }),
        }
    }

    /// Body of `GET /bridge/sessions/:id/pending-actions`, given the entries `apply` returned.
    pub fn pending_actions_response(&self, entries: Vec<Value>) -> Value {
        json!({
            "actions": entries,
            "status": self.status.as_str(),
            "round": self.round,
            "nextSessionId": self.next_session_id,
            "players": self.player_list(),
            "result": self.result,
        })
    }

    /// Body of `POST /bridge/sessions/:id/rematch`, rendered from the next session.
    pub fn rematch_response(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "round": self.round,
            "seriesId": self.series_id,
            "players": self.player_list(),
        })
    }

    /// `GET /events?since=<index>`: events with `index >= since`; pass `next` as the next
    /// `since`. Events older than the kept window are gone (`first` says where it starts).
    ///
    /// Other players' rejection reasons are the game's words to them alone (they may say
    /// what the viewer must not know): `viewer` sees them as `null`.
    pub fn events_since(&self, since: u64, viewer: &str) -> Value {
        let skip = since.saturating_sub(self.events_base) as usize;
        let events: Vec<Value> = self
            .events
            .iter()
            .skip(skip)
            .map(|e| {
                let foreign_rejection = e["type"] == "action"
                    && e["status"] == "rejected"
                    && e["playerId"].as_str() != Some(viewer);
                let mut e = e.clone();
                if foreign_rejection {
                    e["reason"] = Value::Null;
                }
                e
            })
            .collect();
        json!({
            "events": events,
            "first": self.events_base,
            "next": self.events_base + self.events.len() as u64,
        })
    }

    /// True when an events long-poll with `since` should return.
    pub fn has_events_since(&self, since: u64) -> bool {
        self.events_base + (self.events.len() as u64) > since
    }

    /// `POST /action` answer for an accepted action. With `?wait`, call it again after wake-ups
    /// until `outcome` is no longer `pending` (or time runs out) and add `snapshot`.
    pub fn action_response(&self, player_id: &str, action_id: &str, turn: u64) -> Value {
        let (outcome, reason) = self.action_outcome(player_id, action_id);
        let mut v = json!({
            "accepted": true,
            "actionId": action_id,
            "turn": turn,
            "outcome": outcome.as_str(),
        });
        if outcome == ActionStatus::Rejected {
            v["reason"] = reason;
        }
        v
    }

    /// Where an accepted action stands. An id this player no longer tracks counts as pending.
    pub fn action_outcome(&self, player_id: &str, action_id: &str) -> (ActionStatus, Value) {
        let Some(p) = self.player(player_id) else {
            return (ActionStatus::Pending, Value::Null);
        };
        match &p.last_action {
            Some(la) if la.action_id == action_id => (la.status, la.reason.clone()),
            _ => (ActionStatus::Pending, Value::Null),
        }
    }

    /// The game just ended and `autoRematch` will open the next round, but the I/O layer has
    /// not linked it yet (`Effect::CreateRematch` runs after the finishing write). A
    /// `state?wait` in this moment holds for the link, so agents' long-polls wake up holding
    /// `nextSessionId` as section 6 says; after [`REMATCH_LINK_GRACE_MS`] it stops waiting
    /// (the rematch failed: the finished state is the answer).
    pub fn awaiting_rematch(&self, now_ms: u64) -> bool {
        self.status == Status::Finished
            && self.next_session_id.is_none()
            && self.auto_rematch_due()
            && self
                .ended_at_ms
                .is_some_and(|t| now_ms < t.saturating_add(REMATCH_LINK_GRACE_MS))
    }

    /// `GET /state?wait` returns at once: it is your turn or the game is over.
    pub fn state_ready_for(&self, player_id: &str) -> bool {
        self.status == Status::Finished || self.is_your_turn(player_id)
    }

    fn deadline_iso(&self) -> Value {
        self.deadline_ms()
            .map_or(Value::Null, |d| json!(iso8601_ms(d)))
    }

    fn player_list(&self) -> Vec<Value> {
        self.players.iter().map(player_entry).collect()
    }
}

fn player_entry(p: &Player) -> Value {
    json!({ "playerId": p.player_id, "seat": p.seat, "asName": p.as_name, "ready": p.ready })
}

/// How long after a game ended a `state?wait` holds for the automatic rematch's link.
pub const REMATCH_LINK_GRACE_MS: u64 = 5_000;

/// Whether a `GET /state?wait` long-poll of `player_id` that started on `before` should return
/// on `after`: it became your turn, your pending action resolved, or the game finished (or its
/// next round appeared).
pub fn should_wake(before: &Session, after: &Session, player_id: &str) -> bool {
    if after.status == Status::Finished && before.status != Status::Finished {
        return true;
    }
    if after.next_session_id != before.next_session_id {
        return true;
    }
    if after.is_your_turn(player_id) && !before.is_your_turn(player_id) {
        return true;
    }
    let pending_id = |s: &Session| {
        s.player(player_id)
            .and_then(|p| p.pending.as_ref())
            .map(|pa| pa.action_id.clone())
    };
    match pending_id(before) {
        Some(id) => pending_id(after).as_deref() != Some(id.as_str()),
        None => false,
    }
}
