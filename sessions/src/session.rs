//! The stored session record (one JSON value per session) and its constructors.

use crate::config::{Rules, Timings};
use crate::error::{ProtocolCode, ProtocolError};
use crate::machine::Outcome;
use crate::shared::SharedStr;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `waiting` (seats open or reserved) -> `active` -> `finished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Waiting,
    Active,
    Finished,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Active => "active",
            Status::Finished => "finished",
        }
    }
}

/// Who runs the game (shown as `host` in `/available`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostKind {
    House,
    Player,
    Agent,
}

/// The host and its liveness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Host {
    /// Opaque caller identity; only this identity may call the bridge endpoints.
    pub identity: SharedStr,
    pub kind: HostKind,
    /// When a poll last finished, or `/ops` (or another host call) was last made.
    pub last_seen_ms: u64,
    /// Long-polls currently open.
    pub open_polls: u32,
    /// The latest end any open poll announced. A poll whose API process died never reports its
    /// end; past this instant it no longer keeps the host alive.
    pub open_until_ms: u64,
    /// The liveness the clock and `waitingFor` currently see (updated at the exact instant it
    /// lapses, so a pause starts at the right time even if the timer is late).
    pub alive: bool,
}

impl Host {
    /// The last instant the host is known to have been there.
    pub fn seen_until_ms(&self) -> u64 {
        if self.open_polls > 0 {
            self.last_seen_ms.max(self.open_until_ms)
        } else {
            self.last_seen_ms
        }
    }
}

/// The outcome of an agent's action as agents see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionStatus {
    Pending,
    Applied,
    Rejected,
    Unconfirmed,
}

impl ActionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Pending => "pending",
            ActionStatus::Applied => "applied",
            ActionStatus::Rejected => "rejected",
            ActionStatus::Unconfirmed => "unconfirmed",
        }
    }
}

/// `lastAction` of a player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastAction {
    pub action_id: SharedStr,
    pub turn: u64,
    pub status: ActionStatus,
    pub reason: Value,
    /// When the status last changed.
    pub at_ms: u64,
    /// The agent's `idempotencyKey` of this action, if it sent one.
    #[serde(default)]
    pub key: Option<SharedStr>,
    /// [`action_fingerprint`] of the action (its body is not kept once resolved), so a
    /// resend without a key is told it is this action again. Records stored before it
    /// existed (a shorter array) read with none; none is not written (the previous
    /// release's decoder refuses a seventh element: [`Session::as_previous_release_reads`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<u64>,
}

/// A 64-bit FNV-1a hash of the action's JSON. serde_json's maps are sorted, so equal actions
/// hash alike however their keys were ordered; stable across processes and builds, as the
/// record it is stored in is shared by them.
pub fn action_fingerprint(action: &Value) -> u64 {
    struct Fnv(u64);
    impl std::io::Write for Fnv {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = fnv1a_from(self.0, bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Fnv(FNV_OFFSET);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut h, action);
    h.0
}

/// A 64-bit FNV-1a hash of an `idempotencyKey`, as [`action_fingerprint`] hashes an action.
pub fn key_fingerprint(key: &str) -> u64 {
    fnv1a_from(FNV_OFFSET, key.as_bytes())
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a of `bytes`, continuing from the hash `h`.
fn fnv1a_from(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// An accepted action the game has not answered yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingAction {
    pub action_id: SharedStr,
    /// Shared with the host's queue entry of the same action.
    pub action: Arc<Value>,
    pub turn: u64,
    pub submitted_at_ms: u64,
    /// First time the host's poll returned it; the 15 s unconfirmed rule counts from here.
    pub delivered_at_ms: Option<u64>,
    /// Simultaneous turns: held until every on-turn player has submitted.
    pub held: bool,
    /// The agent's `idempotencyKey`, if it sent one (a retry with it is this action again).
    #[serde(default)]
    pub key: Option<SharedStr>,
}

/// A seat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Player {
    pub player_id: SharedStr,
    pub seat: u32,
    pub as_name: Option<SharedStr>,
    /// Opaque caller identity (agent or user); join is idempotent per identity.
    pub identity: SharedStr,
    pub ready: bool,
    /// Timeouts since this player's last applied action.
    pub strikes: u32,
    /// Left (forfeited, or opted out of the rematch). Only kept on finished sessions; a player
    /// who leaves a waiting table is removed.
    pub left: bool,
    /// Shared with the record's copies and the snapshots (a publish replaces them whole).
    pub legal_actions: Option<Arc<Vec<Value>>>,
    pub observation: Option<Arc<Value>>,
    pub pending: Option<PendingAction>,
    pub last_action: Option<LastAction>,
    /// What the record keeps of the player's past beyond the latest action. One trailing
    /// element, left out while empty, because the previous release's decoder refuses a
    /// twelfth: [`Session::as_previous_release_reads`] leaves it out whole. Records stored
    /// before it existed read with an empty one.
    #[serde(default, skip_serializing_if = "PlayerPast::is_empty")]
    pub past: PlayerPast,
}

/// [`Player::past`]. Positional like the rest of the record: a field added later goes last,
/// with `#[serde(default)]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlayerPast {
    /// When the player was last struck (a timeout), if since the last applied action. An
    /// `unconfirmed` action is applied late when the game moves on from its turn, unless
    /// the player was struck after it: then the game may have moved on because of the
    /// timeout (it passes the struck player), and the move was never taken.
    #[serde(default)]
    pub struck_at_ms: Option<u64>,
    /// The player's keyed actions before the latest one, newest first: a retry with one of
    /// their `idempotencyKey`s (a resend a client's retry layer held back until the player
    /// had moved on) is that action again, answered as the first time, not a new move.
    #[serde(default)]
    pub earlier_keyed: [Option<KeyedAction>; EARLIER_KEYED],
}

/// Keyed actions a player's [`PlayerPast`] remembers besides the latest one.
pub const EARLIER_KEYED: usize = 2;

/// An earlier action sent with an `idempotencyKey` ([`PlayerPast::earlier_keyed`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyedAction {
    /// [`key_fingerprint`] of its `idempotencyKey` (the key itself is up to 128 characters).
    pub key: u64,
    pub action_id: SharedStr,
    pub turn: u64,
    /// [`action_fingerprint`] of the action, so the key sent with another move is told so.
    pub fingerprint: u64,
}

impl PlayerPast {
    pub fn is_empty(&self) -> bool {
        *self == PlayerPast::default()
    }

    /// Keeps `earlier` (the latest action, which a new one replaces) if it was sent with a
    /// key, dropping the oldest kept.
    pub(crate) fn remember_keyed(&mut self, earlier: LastAction) {
        let (Some(key), Some(fingerprint)) = (earlier.key.as_deref(), earlier.fingerprint) else {
            return;
        };
        self.earlier_keyed.rotate_right(1);
        self.earlier_keyed[0] = Some(KeyedAction {
            key: key_fingerprint(key),
            action_id: earlier.action_id,
            turn: earlier.turn,
            fingerprint,
        });
    }
}

impl Player {
    /// A ready seat with no history (seat 0; the caller sets it).
    pub(crate) fn new(
        player_id: SharedStr,
        identity: SharedStr,
        as_name: Option<SharedStr>,
    ) -> Player {
        Player {
            player_id,
            seat: 0,
            as_name,
            identity,
            ready: true,
            strikes: 0,
            left: false,
            legal_actions: None,
            observation: None,
            pending: None,
            last_action: None,
            past: PlayerPast::default(),
        }
    }

    /// Whether this player was struck at or after `at_ms`, as far as the record tells: a
    /// record without the strike's time (the previous release's) counts standing strikes as
    /// struck then, the answer every release before this one acted on.
    pub(crate) fn struck_since(&self, at_ms: u64) -> bool {
        self.strikes > 0 && self.past.struck_at_ms.is_none_or(|s| s >= at_ms)
    }

    /// An action of this player's was applied: the only thing that clears strikes (its
    /// resolution, or an `unconfirmed` one applied late when the game moves on).
    pub(crate) fn clear_strikes(&mut self) {
        self.strikes = 0;
        self.past.struck_at_ms = None;
    }
}

/// A rejection addressed to a player during the current turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    pub player_id: String,
    pub action_id: Option<String>,
    pub reason: Value,
    pub turn: u64,
    pub at_ms: u64,
}

/// The turn clock. `started_at_ms` is shifted forward by every pause, so
/// `deadline = started_at_ms + turnTimeout * (strikes_this_turn + 1)` holds while it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Clock {
    pub started_at_ms: u64,
    pub strikes_this_turn: u32,
    /// Set while the clock does not run (host not alive, every on-turn player has an action
    /// pending, session not active).
    pub paused_since_ms: Option<u64>,
    /// A final strike with `forfeitOnTimeout: false` stops the clock until the turn moves.
    pub stopped: bool,
}

/// One entry of the host's pending-actions queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostEntry {
    pub seq: u64,
    /// The entry in the contract's shape (its `seq` is set when it is handed out). Stored as
    /// a map even in a positional encoding (the store's MessagePack): its absent fields are
    /// left out, not written as nulls.
    #[serde(with = "entry_as_map")]
    pub body: crate::wire::PendingEntry,
    pub delivered: bool,
}

/// A pending-actions entry stored as a map of the fields it has, keyed and ordered as its
/// JSON object is (the struct's fields are in that order), so the positional encoding of the
/// rest of the record does not apply to it. Read through a JSON value; written straight to
/// the serializer: every write serializes every queued entry, and building a JSON value of
/// each first cost about 30 allocations a write.
mod entry_as_map {
    use crate::wire::{EntryType, PendingEntry, SystemEvent};
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(e: &PendingEntry, s: S) -> Result<S::Ok, S::Error> {
        // Every field by name (no `..`): a field added to the entry does not compile here until
        // it is written too.
        let PendingEntry {
            action,
            action_id,
            event,
            is_final,
            max_strikes,
            player_id,
            players,
            reason,
            result,
            round,
            seq,
            strike,
            kind,
        } = e;
        let optional = [
            action.is_some(),
            action_id.is_some(),
            event.is_some(),
            is_final.is_some(),
            max_strikes.is_some(),
            player_id.is_some(),
            players.is_some(),
            reason.is_some(),
            result.is_some(),
            round.is_some(),
            strike.is_some(),
        ];
        let len = optional.iter().filter(|present| **present).count() + 2;
        let mut m = s.serialize_map(Some(len))?;
        if let Some(v) = action {
            m.serialize_entry("action", v)?;
        }
        if let Some(v) = action_id {
            m.serialize_entry("actionId", v)?;
        }
        if let Some(v) = event {
            m.serialize_entry("event", event_name(*v))?;
        }
        if let Some(v) = is_final {
            m.serialize_entry("final", v)?;
        }
        if let Some(v) = max_strikes {
            m.serialize_entry("maxStrikes", v)?;
        }
        if let Some(v) = player_id {
            m.serialize_entry("playerId", v)?;
        }
        if let Some(v) = players {
            m.serialize_entry("players", v)?;
        }
        if let Some(v) = reason {
            m.serialize_entry("reason", v)?;
        }
        if let Some(v) = result {
            m.serialize_entry("result", v)?;
        }
        if let Some(v) = round {
            m.serialize_entry("round", v)?;
        }
        m.serialize_entry("seq", seq)?;
        if let Some(v) = strike {
            m.serialize_entry("strike", v)?;
        }
        m.serialize_entry("type", kind_name(*kind))?;
        m.end()
    }

    /// The variant's name as its JSON is (the enums' `rename_all`): written as text in any
    /// format, as the JSON value was.
    fn event_name(e: SystemEvent) -> &'static str {
        match e {
            SystemEvent::GameStart => "game_start",
            SystemEvent::SessionEnd => "session_end",
        }
    }

    fn kind_name(k: EntryType) -> &'static str {
        match k {
            EntryType::Action => "action",
            EntryType::System => "system",
            EntryType::Timeout => "timeout",
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PendingEntry, D::Error> {
        serde_json::from_value(serde_json::Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::session::HostEntry;
        use serde_json::json;
        use std::sync::Arc;

        fn entries() -> Vec<PendingEntry> {
            let mut all = PendingEntry {
                action: Some(Arc::new(
                    json!({ "type": "move", "to": [1, 2], "note": "\u{e9}t\u{e9}" }),
                )),
                action_id: Some("a_0123456789abcdef".into()),
                event: Some(SystemEvent::GameStart),
                is_final: Some(true),
                max_strikes: Some(3),
                player_id: Some("p_0123abcd".into()),
                players: Some(vec!["p_0123abcd".into(), "p_89abcdef".into()]),
                reason: Some("timeout".into()),
                result: Some(json!({ "winner": null })),
                round: Some(70_000),
                seq: 1 << 40,
                strike: Some(2),
                kind: EntryType::Timeout,
            };
            let mut out = vec![all.clone()];
            all.event = Some(SystemEvent::SessionEnd);
            all.action = Some(Arc::new(serde_json::Value::Null));
            all.kind = EntryType::System;
            out.push(all);
            out.push(PendingEntry {
                player_id: Some("p_00000001".into()),
                ..PendingEntry::empty(EntryType::Action)
            });
            out
        }

        /// The bytes are those the entry's JSON value gave, in MessagePack and in JSON, and
        /// they read back as the entry.
        #[test]
        fn an_entry_is_written_as_its_json_object_was() {
            for body in entries() {
                let entry = HostEntry {
                    seq: body.seq,
                    body: body.clone(),
                    delivered: true,
                };
                let value = serde_json::to_value(&body).unwrap();
                let was = rmp_serde::to_vec(&(entry.seq, &value, entry.delivered)).unwrap();
                let now = rmp_serde::to_vec(&entry).unwrap();
                assert_eq!(now, was, "{value}");
                let back: HostEntry = rmp_serde::from_slice(&now).unwrap();
                assert_eq!(back, entry);
                let json = serde_json::to_value(&entry).unwrap();
                assert_eq!(json["body"], value);
                let back: HostEntry = serde_json::from_value(json).unwrap();
                assert_eq!(back, entry);
            }
        }
    }
}

/// Timers the I/O layer keeps in the delayed set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimerKind {
    /// The turn deadline.
    Clock,
    /// `playerId`'s delivered action becomes `unconfirmed`.
    Unconfirmed { player_id: SharedStr },
    /// The host stops counting as alive (clocks pause).
    HostAlive,
    /// The host is gone: the session ends with `host_disconnected`.
    HostGone,
    /// Rematch seats stop being reserved.
    Reservation,
    /// The waiting table starts (`game_start`).
    Activation,
}

impl TimerKind {
    /// A stable string for the delayed-set member, e.g. `unconfirmed:p_0123abcd` (the
    /// record's armed timers are keyed by it too: looked up on every apply, so only the
    /// per-player kind is formatted).
    pub fn key(&self) -> Cow<'static, str> {
        match self {
            TimerKind::Clock => "clock".into(),
            TimerKind::Unconfirmed { player_id } => format!("unconfirmed:{player_id}").into(),
            TimerKind::HostAlive => "host_alive".into(),
            TimerKind::HostGone => "host_gone".into(),
            TimerKind::Reservation => "reservation".into(),
            TimerKind::Activation => "activation".into(),
        }
    }

    /// Armed lazily (`Session::sync_timers`): left in place while its due time moves later
    /// or goes away, so host calls and delivered actions do not touch the delayed set.
    /// The clock is exact (a strike must come from its own turn's entry); activation and
    /// reservation are rare.
    pub fn is_lazy(&self) -> bool {
        matches!(
            self,
            TimerKind::HostAlive | TimerKind::HostGone | TimerKind::Unconfirmed { .. }
        )
    }

    /// The inverse of [`TimerKind::key`] (the I/O layer reads kinds back from the delayed set).
    pub fn from_key(key: &str) -> Option<TimerKind> {
        Some(match key {
            "clock" => TimerKind::Clock,
            "host_alive" => TimerKind::HostAlive,
            "host_gone" => TimerKind::HostGone,
            "reservation" => TimerKind::Reservation,
            "activation" => TimerKind::Activation,
            other => TimerKind::Unconfirmed {
                player_id: other
                    .strip_prefix("unconfirmed:")
                    .filter(|p| crate::ids::is_player_id(p))?
                    .into(),
            },
        })
    }
}

#[cfg(test)]
mod timer_key_tests {
    use super::TimerKind;

    #[test]
    fn timer_keys_round_trip() {
        for k in [
            TimerKind::Clock,
            TimerKind::Unconfirmed {
                player_id: "p_0123abcd".into(),
            },
            TimerKind::HostAlive,
            TimerKind::HostGone,
            TimerKind::Reservation,
            TimerKind::Activation,
        ] {
            assert_eq!(TimerKind::from_key(&k.key()), Some(k));
        }
        assert_eq!(TimerKind::from_key("unconfirmed:nope"), None);
        assert_eq!(TimerKind::from_key("bogus"), None);
    }
}

/// A deadline to keep in the delayed set. When it is due the I/O layer sends
/// `Event::TimerFired { kind, generation }`; a generation that is no longer armed is a no-op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Deadline {
    pub session_id: String,
    pub kind: TimerKind,
    pub at_ms: u64,
    pub generation: u64,
    /// The session's turn when armed (informational; staleness is decided by `generation`).
    pub turn: u64,
}

/// A timer as the record keeps it: a [`Deadline`] without its session (the record's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmedTimer {
    pub kind: TimerKind,
    pub at_ms: u64,
    pub generation: u64,
    /// The session's turn when armed (informational; staleness is decided by `generation`).
    pub turn: u64,
}

impl ArmedTimer {
    /// The deadline of this timer of session `session_id` (for the delayed set).
    pub fn deadline(&self, session_id: &str) -> Deadline {
        Deadline {
            session_id: session_id.to_string(),
            kind: self.kind.clone(),
            at_ms: self.at_ms,
            generation: self.generation,
            turn: self.turn,
        }
    }
}

/// The armed timers of a record, stored as a list of `[kind key, at ms, generation, turn]`:
/// about a third of the map of whole deadlines (session id, tagged kind) that records
/// written before stored, which still load.
mod armed_timers {
    use super::{ArmedTimer, Deadline, SharedStr, TimerKind};
    use serde::de::{Error, MapAccess, SeqAccess, Visitor};
    use serde::ser::SerializeSeq;
    use serde::{Deserializer, Serializer};
    use std::collections::BTreeMap;
    use std::fmt;

    pub fn serialize<S: Serializer>(
        timers: &BTreeMap<SharedStr, ArmedTimer>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(timers.len()))?;
        for (key, t) in timers {
            seq.serialize_element(&(key, t.at_ms, t.generation, t.turn))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<SharedStr, ArmedTimer>, D::Error> {
        d.deserialize_any(Timers)
    }

    struct Timers;

    impl<'de> Visitor<'de> for Timers {
        type Value = BTreeMap<SharedStr, ArmedTimer>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of [kind key, at, generation, turn] or a map of deadlines")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((key, at_ms, generation, turn)) =
                seq.next_element::<(SharedStr, u64, u64, u64)>()?
            {
                let kind = TimerKind::from_key(&key)
                    .ok_or_else(|| A::Error::custom(format!("unknown timer {key:?}")))?;
                out.insert(
                    key,
                    ArmedTimer {
                        kind,
                        at_ms,
                        generation,
                        turn,
                    },
                );
            }
            Ok(out)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((key, d)) = map.next_entry::<SharedStr, Deadline>()? {
                out.insert(
                    key,
                    ArmedTimer {
                        kind: d.kind,
                        at_ms: d.at_ms,
                        generation: d.generation,
                        turn: d.turn,
                    },
                );
            }
            Ok(out)
        }
    }
}

/// Game metadata the I/O layer knows at creation (shown in `/available`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameInfo {
    pub game_id: Option<SharedStr>,
    pub game_title: Option<SharedStr>,
    pub game_slug: Option<SharedStr>,
    pub skill_url: Option<SharedStr>,
}

/// Everything `POST /bridge/sessions` needs.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub session_id: String,
    /// The `AGENT_CONFIGURE` data as the host sent it.
    pub config: Value,
    pub host_identity: String,
    pub host_kind: HostKind,
    pub game: GameInfo,
    pub timings: Timings,
}

/// One RCADIA session: the whole record, stored as one JSON value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub(crate) session_id: SharedStr,
    /// Bumped on every change agents or the host can observe; long-polls wait on it.
    pub(crate) version: u64,
    /// Bumped on every write (including liveness bookkeeping). The store compares-and-sets on
    /// this, so a host poll never wakes agents but two writers still cannot both win.
    pub(crate) rev: u64,
    /// Latest instant the machine has processed; time never runs backwards inside a session.
    pub(crate) now_ms: u64,
    pub(crate) created_at_ms: u64,
    pub(crate) started_at_ms: Option<u64>,
    pub(crate) ended_at_ms: Option<u64>,
    /// Shared, not copied, when the record is copied for a write (it never changes).
    pub(crate) config: Arc<Value>,
    pub(crate) rules: Rules,
    pub(crate) timings: Timings,
    pub(crate) game: GameInfo,
    pub(crate) host: Host,
    pub(crate) status: Status,
    /// Sorted by seat; seats are 0..n.
    pub(crate) players: Vec<Player>,
    pub(crate) turn: u64,
    /// Players on turn, in seat order (only from published legal actions).
    pub(crate) on_turn: Vec<SharedStr>,
    /// The game has published legal actions at least once (else everyone may act and no clock
    /// runs, and for turn-based games the next state publish applies an action).
    pub(crate) legal_actions_seen: bool,
    /// The game has published (a state or legal actions) since `game_start`. Until then
    /// nobody is on turn in a sequential game: it has not said whose move it is. Records
    /// stored before this field existed were past that moment.
    #[serde(default = "opened")]
    pub(crate) turn_opened: bool,
    /// Shared between copies of the record: a publish replaces it whole.
    pub(crate) state: Arc<Value>,
    pub(crate) rejections: Vec<Rejection>,
    pub(crate) clock: Option<Clock>,
    /// Simultaneous turns: the held actions were released to the host.
    pub(crate) released: bool,
    /// Seq of the last released entry; once delivered, the next publish advances the turn.
    pub(crate) release_seq: Option<u64>,
    pub(crate) release_delivered: bool,
    pub(crate) result: Option<Value>,
    /// Why the session ended: the game's own `end` (its `reason` if any, else `game_over`),
    /// or `timeout`, `left`, `host_disconnected`.
    pub(crate) end_reason: Option<String>,
    pub(crate) round: u32,
    pub(crate) series_id: SharedStr,
    pub(crate) previous_session_id: Option<SharedStr>,
    pub(crate) next_session_id: Option<SharedStr>,
    /// Rematch seats are reserved until then.
    pub(crate) reserved_until_ms: Option<u64>,
    /// A rematch activates no earlier than this (3 s after the previous game ended).
    pub(crate) activate_not_before_ms: Option<u64>,
    /// Last join, leave or ready change (starts the lobby-fill wait).
    pub(crate) seating_changed_at_ms: u64,
    pub(crate) host_queue: Vec<HostEntry>,
    pub(crate) next_seq: u64,
    /// Agent-visible events; `events_base` is the index of `events[0]` (old ones are dropped).
    pub(crate) events: Vec<Value>,
    pub(crate) events_base: u64,
    /// Armed timers by `TimerKind::key()`.
    #[serde(with = "armed_timers")]
    pub(crate) timers: BTreeMap<SharedStr, ArmedTimer>,
    pub(crate) timer_generation: u64,
    /// Identities that held a seat here and lost it while the table was waiting (left, opted
    /// out, or their reservation ran out): a repeated `POST /leave` of theirs is answered as
    /// done, not `not_a_player` "join it first". The latest [`MAX_DEPARTED`] are kept; records
    /// stored before the field existed have none.
    #[serde(default)]
    pub(crate) departed: Vec<SharedStr>,
    /// The `batchId` of the last applied `/ops` batch (if it carried one): a resend of it is
    /// answered without applying it again. Last in the record so records stored before it
    /// existed (a shorter array) read with none.
    #[serde(default)]
    pub(crate) last_batch_id: Option<SharedStr>,
}

/// Departed identities a session remembers (`Session::departed`).
pub const MAX_DEPARTED: usize = 64;

impl Session {
    /// This record as the previous release reads it (`sessions.write_previous_forms`, a
    /// rolling upgrade): the players' `lastAction` without its fingerprint and the players
    /// without their [`PlayerPast`], which that release's decoder refuses (one array element
    /// too many). Borrowed when there is neither.
    pub fn as_previous_release_reads(&self) -> Cow<'_, Session> {
        let has_fingerprint = |p: &Player| {
            p.last_action
                .as_ref()
                .is_some_and(|la| la.fingerprint.is_some())
        };
        if !self
            .players
            .iter()
            .any(|p| has_fingerprint(p) || !p.past.is_empty())
        {
            return Cow::Borrowed(self);
        }
        let mut s = self.clone();
        for p in &mut s.players {
            p.past = PlayerPast::default();
            if let Some(la) = p.last_action.as_mut() {
                la.fingerprint = None;
            }
        }
        Cow::Owned(s)
    }

    /// `POST /bridge/sessions`. Returns the new session and the timers to arm.
    pub fn create(new: NewSession, now_ms: u64) -> Result<(Session, Outcome), ProtocolError> {
        let rules = Rules::from_config(&new.config, &new.timings)?;
        let host = Host {
            identity: new.host_identity.into(),
            kind: new.host_kind,
            last_seen_ms: now_ms,
            open_polls: 0,
            open_until_ms: 0,
            alive: true,
        };
        let s = Session::fresh(
            new.session_id,
            Arc::new(new.config),
            rules,
            new.timings,
            new.game,
            host,
            now_ms,
        );
        Ok(s.armed())
    }

    /// The next round of `finished` (section 6): same host, game, config, timings, players and
    /// `playerId`s in the same seat order (minus those who left), `round + 1`, same `seriesId`,
    /// seats reserved. The caller then links the old session with
    /// `Event::RematchLinked { next_session_id }`, ideally in the same write.
    pub fn new_rematch(
        finished: &Session,
        session_id: String,
        now_ms: u64,
    ) -> Result<(Session, Outcome), ProtocolError> {
        finished.check_rematch_allowed()?;
        let host = Host {
            identity: finished.host.identity.clone(),
            kind: finished.host.kind,
            // The host was just seen on the finished session; the new one starts a fresh window.
            last_seen_ms: now_ms,
            open_polls: 0,
            open_until_ms: 0,
            alive: true,
        };
        let mut s = Session::fresh(
            session_id,
            finished.config.clone(),
            finished.rules.clone(),
            finished.timings,
            finished.game.clone(),
            host,
            now_ms,
        );
        s.players = finished
            .players
            .iter()
            .filter(|p| !p.left)
            .enumerate()
            .map(|(seat, p)| Player {
                seat: seat as u32,
                ready: false,
                ..Player::new(p.player_id.clone(), p.identity.clone(), p.as_name.clone())
            })
            .collect();
        s.round = finished.round + 1;
        s.series_id = finished.series_id.clone();
        s.previous_session_id = Some(finished.session_id.clone());
        s.reserved_until_ms = Some(now_ms.saturating_add(finished.timings.reservation_ms));
        s.activate_not_before_ms = Some(
            finished
                .ended_at_ms
                .unwrap_or(now_ms)
                .saturating_add(finished.timings.rematch_delay_ms),
        );
        Ok(s.armed())
    }

    /// A round-1 waiting table with nobody seated.
    fn fresh(
        session_id: String,
        config: Arc<Value>,
        rules: Rules,
        timings: Timings,
        game: GameInfo,
        host: Host,
        now_ms: u64,
    ) -> Session {
        let session_id = SharedStr::from(session_id);
        Session {
            series_id: session_id.clone(),
            session_id: session_id.clone(),
            version: 1,
            rev: 1,
            now_ms,
            created_at_ms: now_ms,
            started_at_ms: None,
            ended_at_ms: None,
            config,
            rules,
            timings,
            game,
            host,
            status: Status::Waiting,
            players: Vec::new(),
            turn: 0,
            on_turn: Vec::new(),
            legal_actions_seen: false,
            turn_opened: false,
            state: Arc::new(Value::Null),
            rejections: Vec::new(),
            clock: None,
            released: false,
            release_seq: None,
            release_delivered: false,
            result: None,
            end_reason: None,
            round: 1,
            previous_session_id: None,
            next_session_id: None,
            reserved_until_ms: None,
            activate_not_before_ms: None,
            seating_changed_at_ms: now_ms,
            host_queue: Vec::new(),
            next_seq: 1,
            events: Vec::new(),
            events_base: 0,
            timers: BTreeMap::new(),
            timer_generation: 0,
            departed: Vec::new(),
            last_batch_id: None,
        }
    }

    /// Arms the first timers of a new session.
    fn armed(mut self) -> (Session, Outcome) {
        let mut out = Outcome::default();
        self.sync_timers(&mut out);
        (self, out)
    }

    /// Errors for a rematch that cannot be created (the I/O layer can also call this before
    /// generating an id).
    pub fn check_rematch_allowed(&self) -> Result<(), ProtocolError> {
        if self.rules.legacy {
            return Err(ProtocolError::new(
                ProtocolCode::LegacySession,
                "v1 games (no sdkVersion in AGENT_CONFIGURE) have no rematches; upgrade to SDK v2",
            ));
        }
        // A table still waiting for players has not even started: "still running" sent its
        // host looking for a game that was never played.
        if self.status == Status::Waiting {
            return Err(ProtocolError::new(
                ProtocolCode::NotFinished,
                "this table has not started yet (it is waiting for players); call rematch after its game has ended",
            ));
        }
        if self.status != Status::Finished {
            return Err(ProtocolError::new(
                ProtocolCode::NotFinished,
                "the game is still running; call rematch after it has ended",
            ));
        }
        if self.end_reason.as_deref() == Some("host_disconnected") {
            return Err(ProtocolError::new(
                ProtocolCode::HostDisconnected,
                "this session ended because its host disconnected; create a new session",
            ));
        }
        if self.end_reason.as_deref() == Some("host_left") {
            return Err(ProtocolError::new(
 ProtocolCode::HostLeft,
                "this session ended with reason host_left (its host went away: no rematch); create a new session",
            ));
        }
        // An operator's end is final: the table must not come back as its next round (a
        // game that asks for one itself got it, though no round opens by itself then).
        if self.end_reason.as_deref() == Some(crate::machine::OPERATOR_END) {
            return Err(ProtocolError::new(
                ProtocolCode::EndedByOperator,
                "an operator ended this session (see result.message); it has no next round. Create a new session if the game goes on",
            ));
        }
        if self.players.iter().all(|p| p.left) {
            return Err(ProtocolError::new(
                ProtocolCode::NoPlayers,
                "every player left; create a new session instead",
            ));
        }
        Ok(())
    }

    // ------------------------------------------------------------ reading the record
    //
    // The fields are private: every change goes through `apply`, which keeps the record's
    // invariants (seats 0..n in join order, one on-turn set per turn, `version` moving with
    // every observable change, armed timers matching what is due). Readers get these.

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Moves on every change agents or the host can observe; long-polls wait on it.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Moves on every write; the store compares-and-sets on it.
    pub fn rev(&self) -> u64 {
        self.rev
    }

    pub fn status(&self) -> Status {
        self.status
    }

    pub fn round(&self) -> u32 {
        self.round
    }

    pub fn series_id(&self) -> &str {
        &self.series_id
    }

    pub fn turn(&self) -> u64 {
        self.turn
    }

    pub fn next_session_id(&self) -> Option<&str> {
        self.next_session_id.as_deref()
    }

    pub fn previous_session_id(&self) -> Option<&str> {
        self.previous_session_id.as_deref()
    }

    pub fn created_at_ms(&self) -> u64 {
        self.created_at_ms
    }

    /// The latest instant the machine has processed (an outage that ended by then is behind
    /// the session: [`crate::Event::Outage`]).
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    pub fn ended_at_ms(&self) -> Option<u64> {
        self.ended_at_ms
    }

    /// The game's `result` once it is over.
    pub fn result(&self) -> Option<&Value> {
        self.result.as_ref()
    }

    /// Whether the game ever started (its seats were taken and the host began it).
    pub fn has_started(&self) -> bool {
        self.started_at_ms.is_some()
    }

    /// Why it ended: the game's own `end` (its `reason`, else `game_over`), or `timeout`,
    /// `left`, `host_disconnected`.
    pub fn end_reason(&self) -> Option<&str> {
        self.end_reason.as_deref()
    }

    /// Seats in seat order.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn game(&self) -> &GameInfo {
        &self.game
    }

    /// The game's public state as it last published it (the replay records it).
    pub fn state(&self) -> &Value {
        &self.state
    }

    /// The `AGENT_CONFIGURE` data as the host sent it.
    pub fn config(&self) -> &Value {
        &self.config
    }

    /// The current turn's rejections (the latest 50; reasons are for their player only).
    pub fn rejections(&self) -> &[Rejection] {
        &self.rejections
    }

    // ------------------------------------------------------------ the event log
    //
    // The store keeps the log apart from the record (a list beside it): the record is stored
    // with no events and `eventsBase` = the index of the next event, so new events are
    // numbered right without reading the log. Invariant: `events_base + events.len()` is the
    // index of the next event.

    /// The events this record holds: after an apply on a loaded record, the ones it added;
    /// after [`Session::attach_event_log`], the kept log.
    pub fn held_events(&self) -> &[Value] {
        &self.events
    }

    /// The record as the store keeps it: JSON without the held events and with `eventsBase`
    /// past them (the events themselves go to the log). The record itself is unchanged.
    pub fn to_stored_json(&mut self) -> serde_json::Result<String> {
        let held = std::mem::take(&mut self.events);
        let base = self.events_base;
        self.events_base = base + held.len() as u64;
        let encoded = serde_json::to_string(&*self);
        self.events_base = base;
        self.events = held;
        encoded
    }

    /// The index the next event will get.
    pub fn events_next(&self) -> u64 {
        self.events_base + self.events.len() as u64
    }

    /// Turns the record into the form the store keeps (no held events, `eventsBase` past
    /// them) and returns the events it held, oldest first, for the log.
    pub fn take_held_events(&mut self) -> Vec<Value> {
        let held = std::mem::take(&mut self.events);
        self.events_base += held.len() as u64;
        held
    }

    /// Puts the stored log (the latest events, oldest first) back into a record loaded
    /// without it, for `GET /events`.
    ///
    /// The log is read after the record, so it may hold events of writes made in between:
    /// where the log starts is what its first event says (every event carries its index),
    /// not the record's count less the log's length, which put every index off by the
    /// events written in between once the log was full (`since` then skipped, and `next`
    /// repeated, that many).
    pub fn attach_event_log(&mut self, log: Vec<Value>) {
        let first = log
            .first()
            .and_then(|e| e.get("index"))
            .and_then(Value::as_u64);
        self.events_base =
            first.unwrap_or_else(|| self.events_base.saturating_sub(log.len() as u64));
        self.events = log;
    }

    pub fn player(&self, player_id: &str) -> Option<&Player> {
        self.players.iter().find(|p| p.player_id == player_id)
    }

    pub(crate) fn player_mut(&mut self, player_id: &str) -> Option<&mut Player> {
        self.players.iter_mut().find(|p| p.player_id == player_id)
    }

    /// The seat an identity holds, for the HTTP layer (identity -> playerId).
    pub fn player_by_identity(&self, identity: &str) -> Option<&Player> {
        self.players.iter().find(|p| p.identity == identity)
    }

    /// 403 unless `identity` is this session's host.
    pub fn authorize_host(&self, identity: &str) -> Result<(), ProtocolError> {
        if self.host.identity == identity {
            Ok(())
        } else {
            Err(ProtocolError::not_the_host())
        }
    }

    /// `identity` held a seat here and lost it before the game started (left, opted out,
    /// or its reservation ran out).
    pub fn has_departed(&self, identity: &str) -> bool {
        self.departed.iter().any(|d| d == identity)
    }

    /// 403 unless `identity` holds a seat; returns its `playerId`.
    pub fn authorize_player(&self, identity: &str) -> Result<&str, ProtocolError> {
        self.player_by_identity(identity)
            .map(|p| p.player_id.as_str())
            .ok_or_else(ProtocolError::not_a_player)
    }

    /// The running turn deadline, if the clock runs.
    pub fn deadline_ms(&self) -> Option<u64> {
        let c = self.clock.as_ref()?;
        if c.paused_since_ms.is_some() || c.stopped {
            return None;
        }
        Some(
            c.started_at_ms.saturating_add(
                self.rules
                    .turn_timeout_ms
                    .saturating_mul(u64::from(c.strikes_this_turn) + 1),
            ),
        )
    }

    /// Whether `player_id` may act now (`yourTurn`).
    pub fn is_your_turn(&self, player_id: &str) -> bool {
        let Some(p) = self.player(player_id) else {
            return false;
        };
        self.status == Status::Active && !p.left && p.pending.is_none() && self.may_act(p)
    }

    /// On turn ignoring a pending action: from published legal actions, or everyone while the
    /// game has never published any.
    pub(crate) fn may_act(&self, p: &Player) -> bool {
        if self.awaiting_first_publish() {
            return false;
        }
        if !self.legal_actions_seen {
            return true;
        }
        if self.rules.enforces_turns() {
            self.on_turn.contains(&p.player_id)
        } else {
            p.legal_actions.as_ref().is_some_and(|a| !a.is_empty())
        }
    }

    /// A sequential game between `game_start` and the game's first publish: nobody is on
    /// turn, everyone waits for the host.
    pub(crate) fn awaiting_first_publish(&self) -> bool {
        self.status == Status::Active && self.rules.is_sequential() && !self.turn_opened
    }

    /// A reserved rematch whose reservation still holds a seat: some seated player of the
    /// previous round has not shown up yet. Once everyone seated is ready nothing is held for
    /// anybody (a seat a player opted out of is open to newcomers, as `join` takes it), so the
    /// table is an open one in `/available`, not hidden there until the reservation ran out.
    pub fn is_reserved(&self) -> bool {
        self.status == Status::Waiting
            && self.reserved_until_ms.is_some()
            && self.players.iter().any(|p| !p.ready)
    }
}

/// `turnOpened` of records stored before the field existed.
fn opened() -> bool {
    true
}
