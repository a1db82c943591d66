//! The JSON the agent and bridge APIs send, as types: `views.rs` builds them, and every Rust
//! reader (`horst play`, the benches, the integration tests) parses the same types, so a
//! renamed field is a compile error instead of a silent `null`.
//!
//! Field order: every struct lists its fields in the byte order of their JSON names. The wire
//! was first written through `serde_json::Value`, whose objects sort their keys; declaring the
//! fields sorted keeps the bytes identical (`tests/wire.rs` checks that serialising a type
//! directly equals serialising it through `Value`, on many session states).
//!
//! Nulls: an `Option` without `skip_serializing_if` is always sent (`null` when empty), as the
//! protocol shows it; fields that are sometimes absent say so.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::sync::Arc;

use crate::session::{ActionStatus, HostKind, Status};
use crate::shared::SharedStr;

/// A field that is either absent or present with any JSON value, `null` included (a plain
/// `Option<Value>` would read a present `null` as absent and drop it when written back).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Who a snapshot's player is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WaitingFor {
    Players,
    Opponent,
    Host,
}

/// `lastAction` of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LastActionView {
    #[serde(rename = "actionId")]
    pub action_id: String,
    pub at: String,
    pub reason: Value,
    pub status: ActionStatus,
    pub turn: u64,
}

/// One of `rejections` of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RejectionView {
    #[serde(rename = "actionId")]
    pub action_id: Option<String>,
    pub at: String,
    pub reason: Value,
    pub turn: u64,
}

/// A seat as the public view, `/available`-adjacent bridge answers and hosts see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayerEntry {
    #[serde(rename = "asName")]
    pub as_name: Option<String>,
    #[serde(rename = "playerId")]
    pub player_id: String,
    pub ready: bool,
    pub seat: u32,
}

/// A seat in an agent's snapshot: [`PlayerEntry`] plus whether it is the reader's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotPlayer {
    #[serde(rename = "asName")]
    pub as_name: Option<String>,
    #[serde(rename = "playerId")]
    pub player_id: String,
    pub ready: bool,
    pub seat: u32,
    pub you: bool,
}

/// The agent snapshot of protocol section 5 (`GET /state`, `/join`, embedded in `/action`
/// answers and in 409 bodies).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSnapshot {
    /// ISO 8601 with milliseconds; `null` while no clock runs.
    pub deadline: Option<String>,
    #[serde(rename = "lastAction")]
    pub last_action: Option<LastActionView>,
    /// `null` unless `yourTurn`.
    #[serde(rename = "legalActions")]
    pub legal_actions: Option<Arc<Vec<Value>>>,
    #[serde(rename = "maxStrikes")]
    pub max_strikes: u32,
    #[serde(rename = "nextSessionId")]
    pub next_session_id: Option<String>,
    #[serde(rename = "playerId")]
    pub player_id: String,
    pub players: Vec<SnapshotPlayer>,
    #[serde(rename = "previousSessionId")]
    pub previous_session_id: Option<String>,
    pub rejections: Vec<RejectionView>,
    pub result: Option<Value>,
    pub round: u32,
    pub seat: u32,
    #[serde(rename = "seriesId")]
    pub series_id: String,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    #[serde(rename = "skillUrl")]
    pub skill_url: Option<String>,
    /// The player's observation if the game set one, else the public state (shared with
    /// the record, not copied).
    pub state: Arc<Value>,
    pub status: Status,
    pub strikes: u32,
    pub turn: u64,
    pub version: u64,
    #[serde(rename = "waitingFor")]
    pub waiting_for: Option<WaitingFor>,
    #[serde(rename = "yourTurn")]
    pub your_turn: bool,
}

impl AgentSnapshot {
    /// The reader's own seat in `players`.
    pub fn me(&self) -> Option<&SnapshotPlayer> {
        self.players.iter().find(|p| p.you)
    }
}

/// The public spectator view of protocol section 7.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublicView {
    pub deadline: Option<String>,
    #[serde(rename = "gameId")]
    pub game_id: Option<String>,
    #[serde(rename = "gameTitle")]
    pub game_title: Option<String>,
    /// horst's addition to the contract's shape: the table's seat count, so a spectator of a
    /// waiting table sees its open seats without asking `/available` for it.
    #[serde(rename = "maxPlayers")]
    pub max_players: u32,
    #[serde(rename = "nextSessionId")]
    pub next_session_id: Option<String>,
    #[serde(rename = "onTurnSeats")]
    pub on_turn_seats: Vec<u32>,
    pub players: Vec<PlayerEntry>,
    #[serde(rename = "previousSessionId")]
    pub previous_session_id: Option<String>,
    pub result: Option<Value>,
    pub round: u32,
    #[serde(rename = "seriesId")]
    pub series_id: String,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    pub state: Arc<Value>,
    pub status: Status,
    pub turn: u64,
    pub version: u64,
}

/// One entry of `GET /available`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AvailableEntry {
    /// The host's `AGENT_CONFIGURE` data as it sent it.
    pub config: Arc<Value>,
    #[serde(rename = "createdAt")]
    pub created_at: String,
    #[serde(rename = "currentPlayers")]
    pub current_players: u32,
    #[serde(rename = "gameId")]
    pub game_id: Option<String>,
    #[serde(rename = "gameSlug")]
    pub game_slug: Option<String>,
    #[serde(rename = "gameTitle")]
    pub game_title: Option<String>,
    pub host: HostKind,
    pub joinable: bool,
    #[serde(rename = "maxPlayers")]
    pub max_players: u32,
    #[serde(rename = "minPlayers")]
    pub min_players: u32,
    pub reserved: bool,
    pub round: u32,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    #[serde(rename = "skillUrl")]
    pub skill_url: Option<String>,
    pub status: Status,
}

/// `GET /available`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AvailableList {
    pub sessions: Vec<AvailableEntry>,
}

/// `201` body of `POST /bridge/sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreatedResponse {
    pub config: Value,
    pub players: Vec<PlayerEntry>,
    pub round: u32,
    #[serde(rename = "seriesId")]
    pub series_id: String,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    #[serde(rename = "skillUrl")]
    pub skill_url: Option<String>,
}

/// Body of `POST /bridge/sessions/:id/ops`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpsResponse {
    #[serde(rename = "nextSessionId")]
    pub next_session_id: Option<String>,
    pub ok: bool,
    pub players: Vec<PlayerEntry>,
    pub round: u32,
    pub status: Status,
    pub version: u64,
}

/// Body of the v1 single-op endpoints: `{ ok }`, plus `nextSessionId` once there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct V1OkResponse {
    #[serde(
        rename = "nextSessionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_session_id: Option<String>,
    pub ok: bool,
}

/// What a pending-actions entry is (its `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryType {
    /// A player's action (or, for v1 games, the `__game_start__` system action).
    Action,
    /// A platform event (`event`: `game_start` or `session_end`).
    System,
    /// A player's clock ran out (`strike` of `maxStrikes`, `final`).
    Timeout,
}

/// `event` of a `system` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemEvent {
    GameStart,
    SessionEnd,
}

/// One entry of the host's pending-actions queue (protocol section 3). One flat type for the
/// three kinds, since that is the wire's shape; the constructors say which fields each kind
/// has, and absent fields are not sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingEntry {
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub action: Option<Arc<Value>>,
    #[serde(rename = "actionId", default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<SharedStr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<SystemEvent>,
    #[serde(rename = "final", default, skip_serializing_if = "Option::is_none")]
    pub is_final: Option<bool>,
    #[serde(
        rename = "maxStrikes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_strikes: Option<u32>,
    #[serde(rename = "playerId", default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<SharedStr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub players: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Set when the entry is handed out (the stored queue keeps it beside the entry).
    #[serde(default)]
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strike: Option<u32>,
    #[serde(rename = "type")]
    pub kind: EntryType,
}

impl PendingEntry {
    pub(crate) fn empty(kind: EntryType) -> PendingEntry {
        PendingEntry {
            action: None,
            action_id: None,
            event: None,
            is_final: None,
            max_strikes: None,
            player_id: None,
            players: None,
            reason: None,
            result: None,
            round: None,
            seq: 0,
            strike: None,
            kind,
        }
    }

    /// A player's accepted action for the game (shared with the player's pending action).
    pub fn action(player_id: SharedStr, action: Arc<Value>, action_id: SharedStr) -> PendingEntry {
        PendingEntry {
            action: Some(action),
            action_id: Some(action_id),
            player_id: Some(player_id),
            ..PendingEntry::empty(EntryType::Action)
        }
    }

    /// v1 games learn of the start as an action of `__system__` (no `actionId`).
    pub fn legacy_game_start(players: Vec<String>) -> PendingEntry {
        PendingEntry {
            action: Some(Arc::new(
                serde_json::json!({ "type": "__game_start__", "players": players }),
            )),
            player_id: Some("__system__".into()),
            ..PendingEntry::empty(EntryType::Action)
        }
    }

    pub fn game_start(players: Vec<String>, round: u32) -> PendingEntry {
        PendingEntry {
            event: Some(SystemEvent::GameStart),
            players: Some(players),
            round: Some(round),
            ..PendingEntry::empty(EntryType::System)
        }
    }

    /// The platform ended the game (`reason`: `timeout`, `left`, ...).
    pub fn session_end(result: Value, reason: &str) -> PendingEntry {
        PendingEntry {
            event: Some(SystemEvent::SessionEnd),
            reason: Some(reason.to_string()),
            result: Some(result),
            ..PendingEntry::empty(EntryType::System)
        }
    }

    pub fn timeout(player_id: &str, strike: u32, max_strikes: u32, is_final: bool) -> PendingEntry {
        PendingEntry {
            is_final: Some(is_final),
            max_strikes: Some(max_strikes),
            player_id: Some(player_id.into()),
            strike: Some(strike),
            ..PendingEntry::empty(EntryType::Timeout)
        }
    }
}

/// Body of `GET /bridge/sessions/:id/pending-actions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingActionsResponse {
    pub actions: Vec<PendingEntry>,
    #[serde(rename = "nextSessionId")]
    pub next_session_id: Option<String>,
    pub players: Vec<PlayerEntry>,
    pub result: Option<Value>,
    pub round: u32,
    pub status: Status,
}

/// Body of `POST /bridge/sessions/:id/rematch`, rendered from the next session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RematchResponse {
    pub players: Vec<PlayerEntry>,
    pub round: u32,
    #[serde(rename = "seriesId")]
    pub series_id: String,
    #[serde(rename = "sessionId")]
    pub session_id: String,
}

/// `POST /action` answer for an accepted action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionResponse {
    pub accepted: bool,
    #[serde(rename = "actionId")]
    pub action_id: String,
    pub outcome: ActionStatus,
    /// Only when `outcome` is `rejected` (and then sent even when `null`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub reason: Option<Value>,
    /// Only with `?wait`: the snapshot after the wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<AgentSnapshot>,
    pub turn: u64,
}

/// `POST /leave` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaveResponse {
    /// The caller had already left this table (a repeated leave): nothing changed.
    #[serde(
        rename = "alreadyLeft",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub already_left: bool,
    pub ok: bool,
    pub result: Option<Value>,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    pub status: Status,
}

/// `POST /seek` answer (horst's own endpoint): the table the caller now sits at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeekResponse {
    #[serde(rename = "playerId")]
    pub player_id: String,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    pub snapshot: Option<AgentSnapshot>,
}

/// `GET /events?since=<index>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsPage {
    pub events: Vec<Value>,
    /// Where the kept window starts (older events are gone).
    pub first: u64,
    /// Pass as the next `since`.
    pub next: u64,
}
