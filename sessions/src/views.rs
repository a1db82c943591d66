//! Pure read views in the contract's exact shapes (the types of `wire.rs`), and the long-poll
//! wake-up rules.

use crate::iso::iso8601_ms;
use crate::session::{ActionStatus, Player, Session, Status};
use crate::wire::{
    ActionResponse, AgentSnapshot, AvailableEntry, CreatedResponse, EventsPage, LastActionView,
    OpsResponse, PendingActionsResponse, PendingEntry, PlayerEntry, PublicView, RejectionView,
    RematchResponse, SnapshotPlayer, V1OkResponse, WaitingFor,
};
use serde_json::Value;

impl Session {
    /// The agent snapshot of section 5 (`GET /state`, embedded in `/action` answers), or `None`
    /// if `player_id` has no seat.
    pub fn snapshot(&self, player_id: &str) -> Option<AgentSnapshot> {
        let me = self.player(player_id)?;
        let your_turn = self.is_your_turn(player_id);
        let waiting_for = match self.status {
            Status::Waiting => Some(WaitingFor::Players),
            Status::Finished => None,
            Status::Active => match &me.pending {
                // The host is not responding: everybody waits for it, whatever else they
                // wait for.
                _ if !self.host.alive => Some(WaitingFor::Host),
                // A held simultaneous action waits for the others to submit.
                Some(pa) if pa.held => Some(WaitingFor::Opponent),
                Some(_) => Some(WaitingFor::Host),
                // Between game_start and the game's first publish nobody is on turn.
                None if self.awaiting_first_publish() => Some(WaitingFor::Host),
                None if your_turn => None,
                // Nobody holds legal actions: the game is working out what comes next.
                None if self.legal_actions_seen
                    && self.on_turn.is_empty()
                    && self.rules.turn_based =>
                {
                    Some(WaitingFor::Host)
                }
                None => Some(WaitingFor::Opponent),
            },
        };
        let legal_actions = your_turn.then(|| me.legal_actions.clone().unwrap_or_default());
        let last_action = me.last_action.as_ref().map(|la| LastActionView {
            action_id: la.action_id.to_string(),
            at: iso8601_ms(la.at_ms),
            reason: la.reason.clone(),
            status: la.status,
            turn: la.turn,
        });
        let rejections = self
            .rejections
            .iter()
            .filter(|r| r.player_id == player_id)
            .map(|r| RejectionView {
                action_id: r.action_id.clone(),
                at: iso8601_ms(r.at_ms),
                reason: r.reason.clone(),
                turn: r.turn,
            })
            .collect();
        let players = self
            .players
            .iter()
            .map(|p| SnapshotPlayer {
                as_name: p.as_name.as_deref().map(str::to_string),
                player_id: p.player_id.to_string(),
                ready: p.ready,
                seat: p.seat,
                you: p.player_id == player_id,
            })
            .collect();
        Some(AgentSnapshot {
            deadline: self.deadline_iso(),
            last_action,
            legal_actions,
            max_strikes: self.rules.max_strikes,
            next_session_id: self.next_session_id.as_deref().map(str::to_string),
            player_id: me.player_id.to_string(),
            players,
            previous_session_id: self.previous_session_id.as_deref().map(str::to_string),
            rejections,
            result: self.result.clone(),
            round: self.round,
            seat: me.seat,
            series_id: self.series_id.to_string(),
            session_id: self.session_id.to_string(),
            skill_url: self.game.skill_url.as_deref().map(str::to_string),
            state: me.observation.as_ref().unwrap_or(&self.state).clone(),
            status: self.status,
            strikes: me.strikes,
            turn: self.turn,
            version: self.version,
            waiting_for,
            your_turn,
        })
    }

    /// The public spectator view of section 7: no legal actions, observations or rejections.
    pub fn public_view(&self) -> PublicView {
        PublicView {
            deadline: self.deadline_iso(),
            game_id: self.game.game_id.as_deref().map(str::to_string),
            game_title: self.game.game_title.as_deref().map(str::to_string),
            max_players: self.rules.max_players,
            next_session_id: self.next_session_id.as_deref().map(str::to_string),
            on_turn_seats: self.on_turn_seats(),
            players: self.player_list(),
            previous_session_id: self.previous_session_id.as_deref().map(str::to_string),
            result: self.result.clone(),
            round: self.round,
            series_id: self.series_id.to_string(),
            session_id: self.session_id.to_string(),
            state: self.state.clone(),
            status: self.status,
            turn: self.turn,
            version: self.version,
        }
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

    /// `?game=` of `/available`: the game's id, slug or title (case-insensitive, in any
    /// script: `?game=MÜHLE` finds `Mühle`).
    pub fn matches_game(&self, query: &str) -> bool {
        let query = query.trim().to_lowercase();
        [
            &self.game.game_id,
            &self.game.game_slug,
            &self.game.game_title,
        ]
        .into_iter()
        .flatten()
        .any(|v| v.to_lowercase() == query)
    }

    /// A newcomer's join would succeed.
    pub fn is_joinable(&self) -> bool {
        self.status == Status::Waiting && self.players.len() < self.rules.max_players as usize
    }

    /// One `GET /available` entry.
    pub fn available_entry(&self) -> AvailableEntry {
        AvailableEntry {
            config: self.config.clone(),
            created_at: iso8601_ms(self.created_at_ms),
            current_players: self.players.iter().filter(|p| !p.left).count() as u32,
            game_id: self.game.game_id.as_deref().map(str::to_string),
            game_slug: self.game.game_slug.as_deref().map(str::to_string),
            game_title: self.game.game_title.as_deref().map(str::to_string),
            host: self.host.kind,
            joinable: self.is_joinable(),
            max_players: self.rules.max_players,
            min_players: self.rules.min_players,
            reserved: self.is_reserved(),
            round: self.round,
            session_id: self.session_id.to_string(),
            skill_url: self.game.skill_url.as_deref().map(str::to_string),
            status: self.status,
        }
    }

    /// `201` body of `POST /bridge/sessions`.
    pub fn created_response(&self) -> CreatedResponse {
        CreatedResponse {
            config: Value::clone(&self.config),
            players: self.player_list(),
            round: self.round,
            series_id: self.series_id.to_string(),
            session_id: self.session_id.to_string(),
            skill_url: self.game.skill_url.as_deref().map(str::to_string),
        }
    }

    /// Body of `POST /bridge/sessions/:id/ops`.
    pub fn ops_response(&self) -> OpsResponse {
        OpsResponse {
            next_session_id: self.next_session_id.as_deref().map(str::to_string),
            ok: true,
            players: self.player_list(),
            round: self.round,
            status: self.status,
            version: self.version,
        }
    }

    /// Body of the v1 single-op endpoints: `{ ok }`, plus `nextSessionId` once there is one
    /// (what `reject-action` and `end` answer).
    pub fn v1_ok_response(&self) -> V1OkResponse {
        V1OkResponse {
            next_session_id: self.next_session_id.as_deref().map(str::to_string),
            ok: true,
        }
    }

    /// Body of `GET /bridge/sessions/:id/pending-actions`, given the entries `apply` returned.
    pub fn pending_actions_response(&self, entries: Vec<PendingEntry>) -> PendingActionsResponse {
        PendingActionsResponse {
            actions: entries,
            next_session_id: self.next_session_id.as_deref().map(str::to_string),
            players: self.player_list(),
            result: self.result.clone(),
            round: self.round,
            status: self.status,
        }
    }

    /// Body of `POST /bridge/sessions/:id/rematch`, rendered from the next session.
    pub fn rematch_response(&self) -> RematchResponse {
        RematchResponse {
            players: self.player_list(),
            round: self.round,
            series_id: self.series_id.to_string(),
            session_id: self.session_id.to_string(),
        }
    }

    /// `GET /events?since=<index>`: events with `index >= since`; pass `next` as the next
    /// `since`. Events older than the kept window are gone (`first` says where it starts).
    ///
    /// Other players' rejection reasons are the game's words to them alone (they may say
    /// what the viewer must not know): `viewer` sees them as `null`.
    pub fn events_since(&self, since: u64, viewer: &str) -> EventsPage {
        let skip = since.saturating_sub(self.events_base) as usize;
        let events = self
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
        EventsPage {
            events,
            first: self.events_base,
            next: self.events_base + self.events.len() as u64,
        }
    }

    /// True when an events long-poll with `since` should return: there are events from
    /// `since` on, or `since` is past the log's end (`next`), an index this session never
    /// gave (a client that kept another session's, a rematch's log starts at 0 again): it is
    /// answered at once with `next` to go on from, not held for its whole `wait`.
    pub fn has_events_since(&self, since: u64) -> bool {
        self.events_base + (self.events.len() as u64) != since
    }

    /// `POST /action` answer for an accepted action. With `?wait`, call it again after wake-ups
    /// until `outcome` is no longer `pending` (or time runs out) and add `snapshot`.
    pub fn action_response(&self, player_id: &str, action_id: &str, turn: u64) -> ActionResponse {
        let (outcome, reason) = self.action_outcome(player_id, action_id);
        ActionResponse {
            accepted: true,
            action_id: action_id.to_string(),
            outcome,
            reason: (outcome == ActionStatus::Rejected).then_some(reason),
            snapshot: None,
            turn,
        }
    }

    /// Where an accepted action stands. An id this player no longer tracks counts as pending
    /// (see [`Session::action_superseded`] for the one kind that is not).
    pub fn action_outcome(&self, player_id: &str, action_id: &str) -> (ActionStatus, Value) {
        let Some(p) = self.player(player_id) else {
            return (ActionStatus::Pending, Value::Null);
        };
        match &p.last_action {
            Some(la) if la.action_id == action_id => (la.status, la.reason.clone()),
            _ => (ActionStatus::Pending, Value::Null),
        }
    }

    /// Whether the player's latest action is another one than `action_id`, an action of
    /// theirs accepted earlier: then `action_id` was resolved (a player has one pending action
    /// at a time, so a later one is accepted only after it), and only the record's latest
    /// action is kept, so its outcome is in the event log ([`Session::logged_outcome`]).
    pub fn action_superseded(&self, player_id: &str, action_id: &str) -> bool {
        self.player(player_id)
            .and_then(|p| p.last_action.as_ref())
            .is_some_and(|la| la.action_id != action_id)
    }

    /// The outcome of `player_id`'s action `action_id` as the event log (attached with
    /// [`Session::attach_event_log`]) recorded it, its latest word first; `None` when the log
    /// holds no outcome of it (it was resolved more than the kept events ago).
    pub fn logged_outcome(
        &self,
        player_id: &str,
        action_id: &str,
    ) -> Option<(ActionStatus, Value)> {
        self.events.iter().rev().find_map(|e| {
            let ours =
                e["type"] == "action" && e["playerId"] == player_id && e["actionId"] == action_id;
            if !ours {
                return None;
            }
            let status = serde_json::from_value::<ActionStatus>(e["status"].clone()).ok()?;
            (status != ActionStatus::Pending).then(|| (status, e["reason"].clone()))
        })
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
    /// Whether an agent's `GET /state?since=<v>` answers now: on any change after `v`, or at
    /// once when the game is finished (section 5: `/state?wait` "returns immediately if it is
    /// your turn or the game is finished"; `since` adds a wake-up, it takes none away), except
    /// while its next round is about to be linked, so the agent wakes holding
    /// `nextSessionId`. It waited out its whole `wait` on a finished game unless something
    /// changed. A `since` past the session's `version` is none it ever answered (a client
    /// that kept the previous round's: every session counts its own versions from 1): it is
    /// answered at once, so the client learns the version to wait on, where it was held until
    /// the session caught up with a number from another session, the whole `wait` of every
    /// poll of a round.
    pub fn since_poll_ready(&self, since: u64, now_ms: u64) -> bool {
        self.version != since || (self.status == Status::Finished && !self.awaiting_rematch(now_ms))
    }

    pub fn state_ready_for(&self, player_id: &str) -> bool {
        self.status == Status::Finished || self.is_your_turn(player_id)
    }

    fn deadline_iso(&self) -> Option<String> {
        self.deadline_ms().map(iso8601_ms)
    }

    fn player_list(&self) -> Vec<PlayerEntry> {
        self.players.iter().map(player_entry).collect()
    }
}

fn player_entry(p: &Player) -> PlayerEntry {
    PlayerEntry {
        as_name: p.as_name.as_deref().map(str::to_string),
        player_id: p.player_id.to_string(),
        ready: p.ready,
        seat: p.seat,
    }
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
