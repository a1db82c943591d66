//! Replays: what a session made public, one JSON line per thing that happened, kept after
//! the game ends (`GET /api/v1/agent/sessions/:id/replay`).
//!
//! The lines are the difference between the record a write replaced and the one it stores
//! ([`lines_of_write`], pure): the save script appends them to `ses:<id>:replay` in the
//! same atomic step as the write (no extra round trip on the hot path), so a replay holds
//! exactly what was stored, in order. Reading ([`assemble`]) adds what is derived (each
//! action's thinking time from its turn's start) and takes out what is private (a
//! rejection's reason, shown only to the rejected player, as `/events` does).
//!
//! A state is stored as its change from the previous state line ([`state_patch`], when that
//! is shorter than the state), and reading rebuilds it: a game whose state carries its whole
//! story (chess's move list) grows its replay by the step, not by the state, so a replay's
//! size grows with the game's length, not with its square (about 213 bytes a ply of chess,
//! its three lines: 1,000 plies in about 210 KB, where storing every state in full filled
//! the 1 MiB budget at about 450 plies and dropped the rest).
//!
//! Bounded: an action larger than [`MAX_ACTION_BYTES`] is recorded by its size only (a
//! state larger than [`MAX_STATE_BYTES`] too, which the protocol no longer publishes);
//! past [`MAX_BYTES`] stored bytes ([`fit_budget`]: the count rides in the record's
//! compare-and-set token, `store.rs`) and past [`MAX_LINES`] lines (the save script) only
//! the end of the game is still recorded, after one `truncated` line; a reading rebuilds
//! at most [`MAX_REBUILT_BYTES`] of states (a state past it is served by its size only).
//! Kept `sessions.replay_retention_hours` after the end.

use std::collections::BTreeMap;

use horst_sessions::ops::json_size;
use horst_sessions::{ActionStatus, HostKind, Session, Status};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::record::StoredForms;
use crate::state_patch;

/// Lines a replay keeps at most (the end of the game is always kept past it): a ply of a
/// two-player turn game is three (the action, the turn, the state), so about 3,000 plies.
pub const MAX_LINES: usize = 10_000;
/// Stored bytes a replay keeps at most (its start, seats, end and next round are always
/// kept past it). A replay is kept for days in a Redis that does not evict, read whole by the
/// rater and served whole to anyone: 600 moves of 15 KB made one 5-10 MB.
pub const MAX_BYTES: u64 = 1 << 20;
/// A published state larger than this (as JSON) is recorded by its size only: the protocol's
/// own limit (`horst_sessions::ops::MAX_STATE_BYTES`), so every state a game publishes is
/// kept (stored as its change from the previous one); replays of earlier versions hold
/// states over 16 KiB by their size.
pub const MAX_STATE_BYTES: usize = horst_sessions::ops::MAX_STATE_BYTES;
/// The states a reading of a replay rebuilds at most, as JSON ([`parse_lines`]): a state
/// line past it reads by its size only. What a download serves and a process holds for it
/// is bounded by this, not by the stored bytes (a small patch of a 64 KiB state is a 64 KiB
/// state served): a 1,000-ply game of chess is about 7 MB of states.
pub const MAX_REBUILT_BYTES: usize = 16 << 20;
/// An action larger than this (as JSON) is recorded by its size only.
pub const MAX_ACTION_BYTES: usize = 1024;

/// A seat as a replay shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seat {
    pub seat: u32,
    pub player_id: String,
    /// `asName`, untrusted text.
    pub name: Option<String>,
    /// The agent id (`agt_...`) of an agent's seat (what the leaderboard names); `None` for a
    /// person's.
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub left: bool,
}

/// One line of a replay. `at` is the Redis clock (Unix ms) of the write that recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Line {
    /// The table was created (first line).
    Start {
        at: u64,
        session_id: String,
        series_id: String,
        round: u32,
        game_id: Option<String>,
        game_title: Option<String>,
        host: HostKind,
        config: Value,
        previous_session_id: Option<String>,
    },
    /// The game started with these seats.
    Players { at: u64, players: Vec<Seat> },
    /// The turn moved.
    Turn {
        at: u64,
        turn: u64,
        on_turn_seats: Vec<u32>,
    },
    /// The host published a new public state (`state` null and `omittedBytes` set when it was
    /// too large to keep).
    State {
        at: u64,
        version: u64,
        turn: u64,
        state: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        omitted_bytes: Option<usize>,
    },
    /// An action's outcome: `applied` (left out: the common case), or `unconfirmed` (the
    /// game said nothing in time). The seat is the player's (`players`). `action` null and
    /// `omittedBytes` set when it was too large to keep.
    Action {
        at: u64,
        player_id: String,
        turn: u64,
        action: Value,
        #[serde(default = "applied", skip_serializing_if = "is_applied")]
        status: ActionStatus,
        submitted_at: u64,
        /// From the start of its turn to its submission; filled in by [`assemble`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        think_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        omitted_bytes: Option<usize>,
    },
    /// The game rejected an action; `reason` only for the rejected player.
    Rejected {
        at: u64,
        seat: u32,
        player_id: String,
        turn: u64,
        reason: Value,
    },
    /// A player ran out of time (`strikes`: since their last applied action).
    Strike {
        at: u64,
        seat: u32,
        player_id: String,
        strikes: u32,
    },
    /// The game ended.
    End {
        at: u64,
        result: Option<Value>,
        reason: Option<String>,
        players: Vec<Seat>,
    },
    /// The series' next round.
    Next { at: u64, next_session_id: String },
    /// Lines were dropped here (the replay reached [`MAX_LINES`] or [`MAX_BYTES`]): only the
    /// end of the game follows.
    Truncated { at: u64 },
}

fn applied() -> ActionStatus {
    ActionStatus::Applied
}

fn is_applied(s: &ActionStatus) -> bool {
    *s == ActionStatus::Applied
}

impl Line {
    /// Must be kept past [`MAX_LINES`]: how the game ended and where the series goes.
    pub fn is_essential(&self) -> bool {
        matches!(self, Line::End { .. } | Line::Next { .. })
    }

    /// Kept past [`MAX_BYTES`]: the essential lines, and the lines a game has once that
    /// rating and the watch page need (the table, the seats).
    fn kept_past_budget(&self) -> bool {
        self.is_essential() || matches!(self, Line::Start { .. } | Line::Players { .. })
    }
}

/// The stored lines of one write that fit a replay's byte budget ([`fit_budget`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// In stored form ([`encode_line_as`]), the essential ones last.
    pub lines: Vec<Vec<u8>>,
    /// How many of `lines` are essential (the last ones).
    pub essential: usize,
    /// The replay's bytes after this write ([`BUDGET_SPENT`] once lines were dropped).
    pub used: u64,
}

/// The count of a replay whose lines past [`MAX_BYTES`] were dropped (its `truncated` line
/// written): only lines kept past the budget follow.
pub const BUDGET_SPENT: u64 = MAX_BYTES + 1;

/// Which of a write's `lines` (essential ones last) a replay that holds `used` bytes
/// (counted by earlier writes, at most [`MAX_BYTES`], or [`BUDGET_SPENT`]) stores, in stored
/// form: a line that does not fit is dropped, and the first one dropped is replaced by one
/// `truncated` line at `now`; the start, the seats and the essential lines are always kept.
/// `previous` is the state the write replaced (the session's before it): a state line is
/// stored as its change from it when that is shorter ([`encode_state_patch`]).
pub fn fit_budget(
    lines: &[Line],
    used: u64,
    created_at_ms: u64,
    forms: StoredForms,
    now: u64,
    previous: Option<&Value>,
) -> Fitted {
    let mut used = used.min(BUDGET_SPENT);
    let mut out = Vec::with_capacity(lines.len());
    let mut essential = 0;
    for l in lines {
        let mut stored = encode_line_as(l, created_at_ms, forms);
        if let (Some(base), StoredForms::Current) = (previous, forms) {
            if let Some(patch) = encode_state_patch(l, base, created_at_ms) {
                if patch.len() < stored.len() {
                    stored = patch;
                }
            }
        }
        let size = stored.len() as u64;
        if l.kept_past_budget() {
            if used < BUDGET_SPENT {
                used = (used + size).min(MAX_BYTES);
            }
            essential += usize::from(l.is_essential());
            out.push(stored);
        } else if used < BUDGET_SPENT && used + size <= MAX_BYTES {
            used += size;
            out.push(stored);
        } else if used < BUDGET_SPENT {
            used = BUDGET_SPENT;
            out.push(encode_line_as(
                &Line::Truncated { at: now },
                created_at_ms,
                forms,
            ));
        }
    }
    // The essential lines stay last (the save script keeps them past its line cap): a
    // `truncated` line takes the place of a line before them.
    Fitted {
        lines: out,
        essential,
        used,
    }
}

fn seats(s: &Session) -> Vec<Seat> {
    s.players()
        .iter()
        .map(|p| Seat {
            seat: p.seat,
            player_id: p.player_id.to_string(),
            name: p.as_name.as_deref().map(str::to_string),
            agent: p.identity.strip_prefix("agent:").map(str::to_string),
            left: p.left,
        })
        .collect()
}

/// `l` (a state line kept in full) as its change from `base`, the state of the replay's
/// previous state line, in the current stored form: `[STATE_PATCH, at, version, turn,
/// patch]`, tagged. `None` for any other line, or when `base` is `null` (no state line yet).
/// `base` is not measured again: the protocol refuses a state over [`MAX_STATE_BYTES`]
/// (`Op::parse_batch`), so its line was kept whole; a reader without the base (a damaged
/// line, an earlier version's state kept by its size) reads the patch as `null` with its
/// size ([`parse_lines`]).
pub fn encode_state_patch(l: &Line, base: &Value, created_at_ms: u64) -> Option<Vec<u8>> {
    let Line::State {
        at,
        version,
        turn,
        state,
        omitted_bytes: None,
    } = l
    else {
        return None;
    };
    if base.is_null() {
        return None;
    }
    let patch = state_patch::diff(base, state);
    let mut out = vec![LINE_V2];
    let since = *at as i64 - created_at_ms as i64;
    rmp_serde::encode::write(&mut out, &(STATE_PATCH, since, version, turn, patch)).ok()?;
    Some(out)
}

fn state_line(s: &Session, at: u64) -> Line {
    let bytes = json_size(s.state());
    let (state, omitted_bytes) = if bytes > MAX_STATE_BYTES {
        (Value::Null, Some(bytes))
    } else {
        (s.state().clone(), None)
    };
    Line::State {
        at,
        version: s.version(),
        turn: s.turn(),
        state,
        omitted_bytes,
    }
}

/// What a write of `after` over `before` (`None`: the session is created) adds to the
/// replay, at `now`. Essential lines come last.
pub fn lines_of_write(before: Option<&Session>, after: &Session, now: u64) -> Vec<Line> {
    let mut out = Vec::new();
    let Some(before) = before else {
        out.push(Line::Start {
            at: now,
            session_id: after.session_id().to_string(),
            series_id: after.series_id().to_string(),
            round: after.round(),
            game_id: after.game().game_id.as_deref().map(str::to_string),
            game_title: after.game().game_title.as_deref().map(str::to_string),
            host: after.host().kind,
            config: after.config().clone(),
            previous_session_id: after.previous_session_id().map(str::to_string),
        });
        if !after.state().is_null() {
            out.push(state_line(after, now));
        }
        return out;
    };
    // A write that changed nothing anyone can observe adds nothing (host polls, delivery
    // marks): the common case on the hot path costs one comparison.
    if before.version() == after.version() && before.next_session_id() == after.next_session_id() {
        return out;
    }
    if before.status() == Status::Waiting && after.status() != Status::Waiting {
        out.push(Line::Players {
            at: now,
            players: seats(after),
        });
    }
    for p in after.players() {
        let Some(old) = before.player(&p.player_id) else {
            continue;
        };
        // An action the game answered in this write.
        if let (Some(pa), Some(la)) = (&old.pending, &p.last_action) {
            let resolved = la.action_id == pa.action_id
                && matches!(la.status, ActionStatus::Applied | ActionStatus::Unconfirmed)
                && old
                    .last_action
                    .as_ref()
                    .is_some_and(|o| o.status == ActionStatus::Pending);
            if resolved {
                let bytes = serde_json::to_string(&pa.action).map_or(0, |t| t.len());
                let (action, omitted_bytes) = if bytes > MAX_ACTION_BYTES {
                    (Value::Null, Some(bytes))
                } else {
                    (Value::clone(&pa.action), None)
                };
                out.push(Line::Action {
                    at: now,
                    player_id: p.player_id.to_string(),
                    turn: pa.turn,
                    action,
                    status: la.status,
                    submitted_at: pa.submitted_at_ms,
                    think_ms: None,
                    omitted_bytes,
                });
            }
        }
        if p.strikes > old.strikes {
            out.push(Line::Strike {
                at: now,
                seat: p.seat,
                player_id: p.player_id.to_string(),
                strikes: p.strikes,
            });
        }
    }
    for r in after.rejections() {
        if before.rejections().contains(r) {
            continue;
        }
        let seat = after.player(&r.player_id).map_or(0, |p| p.seat);
        out.push(Line::Rejected {
            at: now,
            seat,
            player_id: r.player_id.clone(),
            turn: r.turn,
            reason: r.reason.clone(),
        });
    }
    if after.turn() != before.turn() {
        out.push(Line::Turn {
            at: now,
            turn: after.turn(),
            on_turn_seats: after.on_turn_seats(),
        });
    }
    if after.state() != before.state() {
        out.push(state_line(after, now));
    }
    if before.status() != Status::Finished && after.status() == Status::Finished {
        out.push(Line::End {
            at: now,
            result: after.result().cloned(),
            reason: after.end_reason().map(str::to_string),
            players: seats(after),
        });
    }
    if let (None, Some(next)) = (before.next_session_id(), after.next_session_id()) {
        out.push(Line::Next {
            at: now,
            next_session_id: next.to_string(),
        });
    }
    out
}

/// A replay as served: `raw` (as stored, oldest first) with each action's thinking time
/// filled in, and rejection reasons only for `viewer` (a player id; `None`: the public).
pub fn assemble(raw: Vec<Line>, viewer: Option<&str>) -> Vec<Line> {
    // When each turn started: its `turn` line, else the game's start.
    let mut turn_start: BTreeMap<u64, u64> = BTreeMap::new();
    let mut game_start: Option<u64> = None;
    for l in &raw {
        match l {
            Line::Players { at, .. } => game_start = game_start.or(Some(*at)),
            Line::Turn { at, turn, .. } => {
                turn_start.entry(*turn).or_insert(*at);
            }
            _ => {}
        }
    }
    raw.into_iter()
        .map(|mut l| {
            match &mut l {
                Line::Action {
                    turn,
                    submitted_at,
                    think_ms,
                    ..
                } => {
                    let start = turn_start
                        .range(..=*turn)
                        .next_back()
                        .map(|(_, at)| *at)
                        .or(game_start);
                    *think_ms = start.map(|s| submitted_at.saturating_sub(s));
                }
                Line::Rejected {
                    player_id, reason, ..
                } if viewer != Some(player_id.as_str()) => *reason = Value::Null,
                _ => {}
            }
            l
        })
        .collect()
}

/// The seat an agent played in a replay (by its agent id), if it played.
pub fn seat_of_agent<'a>(lines: &'a [Line], agent: &str) -> Option<&'a Seat> {
    lines
        .iter()
        .filter_map(|l| match l {
            Line::Players { players, .. } | Line::End { players, .. } => Some(players),
            _ => None,
        })
        .flatten()
        .find(|s| s.agent.as_deref() == Some(agent))
}

/// Each agent's thinking times (ms) in an assembled replay, by agent id.
pub fn think_times(lines: &[Line]) -> BTreeMap<String, Vec<u64>> {
    let agents: BTreeMap<&str, &str> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Players { players, .. } | Line::End { players, .. } => Some(players),
            _ => None,
        })
        .flatten()
        .filter_map(|s| Some((s.player_id.as_str(), s.agent.as_deref()?)))
        .collect();
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for l in lines {
        if let Line::Action {
            player_id,
            think_ms: Some(ms),
            status: ActionStatus::Applied,
            ..
        } = l
        {
            if let Some(agent) = agents.get(player_id.as_str()) {
                out.entry(agent.to_string()).or_default().push(*ms);
            }
        }
    }
    out
}

/// The median and 95th percentile of `ms` (nearest rank), if there are any.
pub fn median_p95(ms: &[u64]) -> Option<(u64, u64)> {
    if ms.is_empty() {
        return None;
    }
    let mut v = ms.to_vec();
    v.sort_unstable();
    let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Some((rank(0.5), rank(0.95)))
}

/// Stored lines back, in any stored form ([`encode_line`]'s, the MessagePack lines with
/// absolute times of earlier versions, or the JSON text of earlier versions and of the save
/// script's `truncated` line); lines that do not parse (a later version's) are skipped.
/// The times of the current form count from the `start` line's (the first line). A state
/// stored as its change from the previous one ([`encode_state_patch`]) is rebuilt, while
/// the states rebuilt stay within [`MAX_REBUILT_BYTES`]; past it, or without the state it
/// changes (a damaged line), a state line reads as `null` with its size in `omittedBytes`.
pub fn parse_lines(raw: &[Vec<u8>]) -> Vec<Line> {
    parse_lines_within(raw, MAX_REBUILT_BYTES)
}

/// [`parse_lines`] with `budget` bytes of states rebuilt at most.
pub fn parse_lines_within(raw: &[Vec<u8>], budget: usize) -> Vec<Line> {
    let mut start_at = None;
    // The state of the last state line, as a reader holds it (`None`: not kept).
    let mut current: Option<Value> = None;
    let mut rebuilt = 0usize;
    raw.iter()
        .filter_map(|l| {
            let (mut line, patch) = decode_stored(l, start_at)?;
            match (&mut line, patch) {
                (Line::Start { at, .. }, _) => start_at = Some(*at),
                (
                    Line::State {
                        state,
                        omitted_bytes,
                        ..
                    },
                    patch,
                ) => {
                    match patch {
                        Some(patch) => {
                            current = current
                                .as_ref()
                                .and_then(|base| state_patch::apply(base, &patch));
                            match &current {
                                Some(c) => *state = c.clone(),
                                // A patch without the state it changes (a damaged line).
                                None => *omitted_bytes = Some(json_size(&patch)),
                            }
                        }
                        None => current = omitted_bytes.is_none().then(|| state.clone()),
                    }
                    if omitted_bytes.is_none() {
                        let bytes = json_size(state);
                        rebuilt = rebuilt.saturating_add(bytes);
                        if rebuilt > budget {
                            *state = Value::Null;
                            *omitted_bytes = Some(bytes);
                        }
                    }
                }
                _ => {}
            }
            Some(line)
        })
        .collect()
}

/// The first byte of a line in the current stored form (earlier forms start with `{`, JSON
/// text, or with a MessagePack array header).
const LINE_V2: u8 = 0x01;

/// A line as `ses:<id>:replay` stores it: MessagePack `[kind, at, fields...]`, the fields by
/// position (no names), a player id `p_<8 hex>` as its number and an action's submission
/// as its distance from `at`: about a third of the line's JSON text (a replay holds up to
/// [`MAX_LINES`] of them for every live session). The lines a game has many of (turns,
/// states, actions, rejections, strikes) are tagged (`0x01`) and count `at` in ms from the
/// session's creation (`created_at_ms`, which is the `start` line's `at`): three bytes in a
/// game's first half minute, five in its first 24 days, where the absolute time took nine.
/// The kind codes are below; append only, stored lines name their kind by them.
pub fn encode_line(l: &Line, created_at_ms: u64) -> Vec<u8> {
    encode_line_as(l, created_at_ms, StoredForms::Current)
}

/// [`encode_line`] in `forms`: the previous form is every line untagged, with absolute times
/// (what the lines a game has once keep in either form).
pub fn encode_line_as(l: &Line, created_at_ms: u64, forms: StoredForms) -> Vec<u8> {
    // The lines a game has once (its start, seats, end, next round, truncation) keep the
    // earlier form, absolute times: a process of the previous version still reads them, so
    // its rater still rates a game that finishes during an upgrade (`rated_of_replay`).
    let (mut out, epoch) = match l {
        _ if forms == StoredForms::Previous => (Vec::new(), 0),
        Line::Start { .. }
        | Line::Players { .. }
        | Line::End { .. }
        | Line::Next { .. }
        | Line::Truncated { .. } => (Vec::new(), 0),
        _ => (vec![LINE_V2], created_at_ms),
    };
    // Cannot fail: every part is a plain value, and writing to a Vec does not fail.
    match rmp_serde::encode::write(&mut out, &Compact(l, epoch)) {
        Ok(()) => out,
        Err(_) => serde_json::to_vec(l).unwrap_or_default(),
    }
}

/// A stored line (any form, see [`parse_lines`]), its time counted from `start_at` (the
/// `start` line's) if it is of the current form; `None` if it is none of them, or of the
/// current form with no `start_at`.
/// A state stored as its change from the previous one ([`encode_state_patch`]) needs that
/// state: it reads only in [`parse_lines`] (here `None`).
pub fn decode_line(raw: &[u8], start_at: Option<u64>) -> Option<Line> {
    match decode_stored(raw, start_at)? {
        (line, None) => Some(line),
        (_, Some(_)) => None,
    }
}

/// A stored line, and the patch of a state stored as its change (the line then a `State`
/// with a `null` state, which the patch of the previous state gives).
fn decode_stored(raw: &[u8], start_at: Option<u64>) -> Option<(Line, Option<Value>)> {
    match raw.first() {
        Some(&b'{') => serde_json::from_slice(raw).ok().map(|l| (l, None)),
        Some(&LINE_V2) => {
            let epoch = start_at?;
            let Decoded(mut line, patch) = rmp_serde::from_slice::<Decoded>(&raw[1..]).ok()?;
            let at = line.at_mut();
            *at = at.wrapping_add(epoch);
            if let Line::Action { submitted_at, .. } = &mut line {
                *submitted_at = submitted_at.wrapping_add(epoch);
            }
            Some((line, patch))
        }
        // Earlier versions' untagged lines; a patch is never one of them.
        _ => match rmp_serde::from_slice::<Decoded>(raw).ok()? {
            Decoded(line, None) => Some((line, None)),
            Decoded(_, Some(_)) => None,
        },
    }
}

impl Line {
    fn at_mut(&mut self) -> &mut u64 {
        match self {
            Line::Start { at, .. }
            | Line::Players { at, .. }
            | Line::Turn { at, .. }
            | Line::State { at, .. }
            | Line::Action { at, .. }
            | Line::Rejected { at, .. }
            | Line::Strike { at, .. }
            | Line::End { at, .. }
            | Line::Next { at, .. }
            | Line::Truncated { at } => at,
        }
    }
}

// The kind codes of the stored form.
const START: u8 = 0;
const PLAYERS: u8 = 1;
const TURN: u8 = 2;
const STATE: u8 = 3;
const ACTION: u8 = 4;
const REJECTED: u8 = 5;
const STRIKE: u8 = 6;
const END: u8 = 7;
const NEXT: u8 = 8;
const TRUNCATED: u8 = 9;
/// A state as its change from the previous state line's (`state_patch`), tagged only.
const STATE_PATCH: u8 = 10;

/// A player id as stored: `p_<8 hex>` as its number, anything else as its text.
enum PlayerRef<'a> {
    Number(u32),
    Text(&'a str),
}

impl<'a> PlayerRef<'a> {
    fn of(id: &'a str) -> PlayerRef<'a> {
        match id.strip_prefix("p_") {
            Some(hex) if horst_sessions::is_player_id(id) => {
                u32::from_str_radix(hex, 16).map_or(PlayerRef::Text(id), PlayerRef::Number)
            }
            _ => PlayerRef::Text(id),
        }
    }
}

impl Serialize for PlayerRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PlayerRef::Number(n) => s.serialize_u32(*n),
            PlayerRef::Text(t) => s.serialize_str(t),
        }
    }
}

/// A stored player id read back as its text.
struct PlayerId(String);

impl<'de> Deserialize<'de> for PlayerId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = PlayerId;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a player id or its number")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<PlayerId, E> {
                let n = u32::try_from(n).map_err(E::custom)?;
                Ok(PlayerId(horst_sessions::format_player_id(n)))
            }
            fn visit_str<E: serde::de::Error>(self, t: &str) -> Result<PlayerId, E> {
                Ok(PlayerId(t.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

fn status_code(s: ActionStatus) -> u8 {
    match s {
        ActionStatus::Pending => 0,
        ActionStatus::Applied => 1,
        ActionStatus::Rejected => 2,
        ActionStatus::Unconfirmed => 3,
    }
}

fn status_of(code: u8) -> Option<ActionStatus> {
    Some(match code {
        0 => ActionStatus::Pending,
        1 => ActionStatus::Applied,
        2 => ActionStatus::Rejected,
        3 => ActionStatus::Unconfirmed,
        _ => return None,
    })
}

type SeatTuple<'a> = (
    u32,
    PlayerRef<'a>,
    &'a Option<String>,
    &'a Option<String>,
    bool,
);

fn seat_tuples(players: &[Seat]) -> Vec<SeatTuple<'_>> {
    players
        .iter()
        .map(|p| {
            (
                p.seat,
                PlayerRef::of(&p.player_id),
                &p.name,
                &p.agent,
                p.left,
            )
        })
        .collect()
}

/// A seat as stored, read back (the fields of [`SeatTuple`]).
type StoredSeat = (u32, PlayerId, Option<String>, Option<String>, bool);

fn seats_of(stored: Vec<StoredSeat>) -> Vec<Seat> {
    stored
        .into_iter()
        .map(|(seat, player, name, agent, left)| Seat {
            seat,
            player_id: player.0,
            name,
            agent,
            left,
        })
        .collect()
}

/// Serializes a line in its stored form, its `at` counted from the second field (0:
/// absolute).
struct Compact<'a>(&'a Line, u64);

impl Serialize for Compact<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let since = |at: &u64| *at as i64 - self.1 as i64;
        match self.0 {
            Line::Start {
                at,
                session_id: id,
                series_id: series,
                round,
                game_id: game,
                game_title: title,
                host,
                config,
                previous_session_id: previous,
            } => (
                START, at, id, series, round, game, title, host, config, previous,
            )
                .serialize(s),
            Line::Players { at, players } => {
                (PLAYERS, since(at), seat_tuples(players)).serialize(s)
            }
            Line::Turn {
                at,
                turn,
                on_turn_seats,
            } => (TURN, since(at), turn, on_turn_seats).serialize(s),
            Line::State {
                at,
                version,
                turn,
                state,
                omitted_bytes,
            } => (STATE, since(at), version, turn, state, omitted_bytes).serialize(s),
            Line::Action {
                at,
                player_id,
                turn,
                action,
                status,
                submitted_at,
                think_ms,
                omitted_bytes,
            } => {
                let fields = (
                    ACTION,
                    since(at),
                    PlayerRef::of(player_id),
                    turn,
                    action,
                    status_code(*status),
                    // Submitted shortly before the write that records it: a small number.
                    *at as i64 - *submitted_at as i64,
                    think_ms,
                );
                // The size of an action too large to keep, after the fields every action
                // line has (only then: a previous version skips such a line, and reads
                // every other as before).
                match omitted_bytes {
                    None => fields.serialize(s),
                    Some(n) => {
                        let (a, b, c, d, e, f, g, h) = fields;
                        (a, b, c, d, e, f, g, h, n).serialize(s)
                    }
                }
            }
            Line::Rejected {
                at,
                seat,
                player_id,
                turn,
                reason,
            } => (
                REJECTED,
                since(at),
                seat,
                PlayerRef::of(player_id),
                turn,
                reason,
            )
                .serialize(s),
            Line::Strike {
                at,
                seat,
                player_id,
                strikes,
            } => (STRIKE, since(at), seat, PlayerRef::of(player_id), strikes).serialize(s),
            Line::End {
                at,
                result,
                reason,
                players,
            } => (END, since(at), result, reason, seat_tuples(players)).serialize(s),
            Line::Next {
                at,
                next_session_id,
            } => (NEXT, since(at), next_session_id).serialize(s),
            Line::Truncated { at } => (TRUNCATED, since(at)).serialize(s),
        }
    }
}

/// A line read back from its stored form, and the patch of a state stored as its change.
struct Decoded(Line, Option<Value>);

impl<'de> Deserialize<'de> for Decoded {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Decoded;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a stored replay line [kind, at, fields...]")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Decoded, A::Error> {
                use serde::de::Error;
                fn next<'de, T: Deserialize<'de>, A: serde::de::SeqAccess<'de>>(
                    a: &mut A,
                ) -> Result<T, A::Error> {
                    a.next_element()?
                        .ok_or_else(|| A::Error::custom("a replay line ends early"))
                }
                let kind: u8 = next(&mut a)?;
                // Absolute (earlier forms, the `start` line), or from the creation (signed:
                // a clock step): `decode_line` adds the start, wrapping.
                let at = next::<i64, _>(&mut a)? as u64;
                if kind == STATE_PATCH {
                    let line = Line::State {
                        at,
                        version: next(&mut a)?,
                        turn: next(&mut a)?,
                        state: Value::Null,
                        omitted_bytes: None,
                    };
                    return Ok(Decoded(line, Some(next(&mut a)?)));
                }
                let line = match kind {
                    START => Line::Start {
                        at,
                        session_id: next(&mut a)?,
                        series_id: next(&mut a)?,
                        round: next(&mut a)?,
                        game_id: next(&mut a)?,
                        game_title: next(&mut a)?,
                        host: next(&mut a)?,
                        config: next(&mut a)?,
                        previous_session_id: next(&mut a)?,
                    },
                    PLAYERS => Line::Players {
                        at,
                        players: seats_of(next(&mut a)?),
                    },
                    TURN => Line::Turn {
                        at,
                        turn: next(&mut a)?,
                        on_turn_seats: next(&mut a)?,
                    },
                    STATE => Line::State {
                        at,
                        version: next(&mut a)?,
                        turn: next(&mut a)?,
                        state: next(&mut a)?,
                        omitted_bytes: next(&mut a)?,
                    },
                    ACTION => {
                        let player: PlayerId = next(&mut a)?;
                        let turn = next(&mut a)?;
                        let action = next(&mut a)?;
                        let status = status_of(next(&mut a)?)
                            .ok_or_else(|| A::Error::custom("unknown action status"))?;
                        let before: i64 = next(&mut a)?;
                        Line::Action {
                            at,
                            player_id: player.0,
                            turn,
                            action,
                            status,
                            submitted_at: (at as i64).wrapping_sub(before) as u64,
                            think_ms: next(&mut a)?,
                            omitted_bytes: a.next_element::<Option<usize>>()?.flatten(),
                        }
                    }
                    REJECTED => Line::Rejected {
                        at,
                        seat: next(&mut a)?,
                        player_id: next::<PlayerId, _>(&mut a)?.0,
                        turn: next(&mut a)?,
                        reason: next(&mut a)?,
                    },
                    STRIKE => Line::Strike {
                        at,
                        seat: next(&mut a)?,
                        player_id: next::<PlayerId, _>(&mut a)?.0,
                        strikes: next(&mut a)?,
                    },
                    END => Line::End {
                        at,
                        result: next(&mut a)?,
                        reason: next(&mut a)?,
                        players: seats_of(next(&mut a)?),
                    },
                    NEXT => Line::Next {
                        at,
                        next_session_id: next(&mut a)?,
                    },
                    TRUNCATED => Line::Truncated { at },
                    _ => return Err(A::Error::custom(format!("unknown replay line kind {kind}"))),
                };
                Ok(Decoded(line, None))
            }
        }
        d.deserialize_seq(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_sessions::{Event, GameInfo, NewSession, Op, Timings};
    use serde_json::json;

    const T0: u64 = 1_791_399_600_000;

    /// Applies `ev` at `at` and returns the lines of that write.
    fn write(s: &mut Session, ev: Event, at: u64) -> Vec<Line> {
        let before = s.clone();
        s.apply(ev, at).unwrap();
        lines_of_write(Some(&before), s, at)
    }

    fn ops(v: Value) -> Event {
        Event::PublishOps {
            ops: Op::parse_batch(&json!({ "ops": v })).unwrap(),
            batch_id: None,
        }
    }

    #[test]
    fn a_game_leaves_its_public_story_and_nothing_private() {
        let (mut s, _) = Session::create(
            NewSession {
                session_id: "ses_beef00000001".into(),
                config: json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true,
                    "sdkVersion": "2.0.0", "turnTimeout": 10}),
                host_identity: "agent:agt_house".into(),
                host_kind: HostKind::House,
                game: GameInfo {
                    game_id: Some("duel".into()),
                    ..GameInfo::default()
                },
                timings: Timings::default(),
            },
            T0,
        )
        .unwrap();
        let mut all = lines_of_write(None, &s, T0);
        assert!(
            matches!(&all[0], Line::Start { game_id: Some(g), host: HostKind::House, .. } if g == "duel")
        );
        for (i, who) in ["agent:agt_a", "user:bo"].iter().enumerate() {
            all.extend(write(
                &mut s,
                Event::Join {
                    player_id: horst_sessions::format_player_id(i as u32 + 1),
                    identity: who.to_string(),
                    as_name: Some(format!("P{i}")),
                },
                T0 + 1,
            ));
        }
        let (a, b) = (
            s.players()[0].player_id.clone(),
            s.players()[1].player_id.clone(),
        );
        let players = all.iter().find_map(|l| match l {
            Line::Players { players, .. } => Some(players.clone()),
            _ => None,
        });
        let players = players.expect("the start names the seats");
        assert_eq!(players[0].agent.as_deref(), Some("agt_a"));
        assert_eq!(players[1].agent, None, "a person's seat names no agent");
        // A host poll changes nothing observable: no lines.
        let poll = Event::HostPoll {
            after: Some(0),
            wait_ms: 0,
        };
        assert!(write(&mut s, poll, T0 + 5).is_empty());
        all.extend(write(
            &mut s,
            ops(json!([{"op": "state", "state": {"n": 0}},
                {"op": "legal_actions", "playerId": a, "actions": ["up"]}])),
            T0 + 100,
        ));
        let turn = s.turn();
        all.extend(write(
            &mut s,
            Event::Action {
                player_id: a.to_string(),
                action: json!("up"),
                turn: Some(turn),
                action_id: "a_1".into(),
                idempotency_key: None,
            },
            T0 + 1_100,
        ));
        s.apply(
            Event::HostPoll {
                after: Some(0),
                wait_ms: 0,
            },
            T0 + 1_150,
        )
        .unwrap();
        all.extend(write(
            &mut s,
            ops(json!([{"op": "reject", "playerId": a, "reason": "secret why"}])),
            T0 + 1_200,
        ));
        all.extend(write(
            &mut s,
            Event::Action {
                player_id: a.to_string(),
                action: json!("up"),
                turn: Some(turn),
                action_id: "a_2".into(),
                idempotency_key: None,
            },
            T0 + 1_300,
        ));
        s.apply(
            Event::HostPoll {
                after: Some(0),
                wait_ms: 0,
            },
            T0 + 1_350,
        )
        .unwrap();
        all.extend(write(
            &mut s,
            ops(json!([{"op": "state", "state": {"n": 1}},
                {"op": "legal_actions", "playerId": b, "actions": ["down"]}])),
            T0 + 1_400,
        ));
        all.extend(write(
            &mut s,
            ops(json!([{"op": "end", "result": {"winner": a}}])),
            T0 + 2_000,
        ));
        let kinds: Vec<&str> = all
            .iter()
            .map(|l| match l {
                Line::Start { .. } => "start",
                Line::Players { .. } => "players",
                Line::Turn { .. } => "turn",
                Line::State { .. } => "state",
                Line::Action { .. } => "action",
                Line::Rejected { .. } => "rejected",
                Line::Strike { .. } => "strike",
                Line::End { .. } => "end",
                Line::Next { .. } => "next",
                Line::Truncated { .. } => "truncated",
            })
            .collect();
        assert_eq!(
            kinds,
            ["start", "players", "turn", "state", "rejected", "action", "turn", "state", "end"],
            "{all:#?}"
        );
        let public = assemble(all.clone(), None);
        let text = serde_json::to_string(&public).unwrap();
        assert!(!text.contains("secret why"), "{text}");
        let own = assemble(all, Some(&a));
        assert!(serde_json::to_string(&own).unwrap().contains("secret why"));
        let think = own.iter().find_map(|l| match l {
            Line::Action { think_ms, .. } => *think_ms,
            _ => None,
        });
        // The turn opened at +100 (its `turn` line), the accepted action came at +1300.
        assert_eq!(think, Some(1_200));
        assert_eq!(think_times(&own)["agt_a"], vec![1_200]);
        assert!(!think_times(&own).contains_key("bo"));
        // Lines survive their stored form, and so do earlier versions' JSON lines.
        let created = s.created_at_ms();
        let stored: Vec<Vec<u8>> = own.iter().map(|l| encode_line(l, created)).collect();
        assert_eq!(parse_lines(&stored), own);
        assert!(matches!(own[0], Line::Start { at, .. } if at == created));
        // Earlier versions' MessagePack lines (absolute times, no tag) read too, and so
        // does a replay that mixes them with the current form.
        let earlier: Vec<Vec<u8>> = own
            .iter()
            .map(|l| rmp_serde::to_vec(&Compact(l, 0)).unwrap())
            .collect();
        assert_eq!(parse_lines(&earlier), own);
        let mut mixed = earlier[..3].to_vec();
        mixed.extend(stored[3..].iter().cloned());
        assert_eq!(parse_lines(&mixed), own);
        let json: Vec<Vec<u8>> = own.iter().map(|l| serde_json::to_vec(l).unwrap()).collect();
        assert_eq!(parse_lines(&json), own);
        assert!(json[0].starts_with(b"{\"kind\":\"start\""));
        // Stored compact: at most half the JSON (the hot lines, action, turn and state, far
        // less).
        let (compact, text): (usize, usize) = (
            stored.iter().map(Vec::len).sum(),
            json.iter().map(Vec::len).sum(),
        );
        assert!(
            compact * 2 <= text,
            "{compact} bytes stored, {text} of JSON"
        );
    }

    /// Every kind of line, with every optional part set and unset, reads back as it was
    /// written, and serves the same JSON.
    #[test]
    fn every_kind_of_line_reads_back_from_its_stored_form() {
        let seat = |n: u32, left: bool| Seat {
            seat: n,
            player_id: horst_sessions::format_player_id(n * 0x1234_5678),
            name: (n == 1).then(|| "Ä \u{1F600}".to_string()),
            agent: (n == 2).then(|| "agt_x".to_string()),
            left,
        };
        let lines = vec![
            Line::Start {
                at: T0,
                session_id: "ses_beef00000001".into(),
                series_id: "ser_1".into(),
                round: 3,
                game_id: Some("duel".into()),
                game_title: None,
                host: HostKind::Player,
                config: json!({"minPlayers": 2, "x": [1.5, -2, null, true, "s"], "big": u64::MAX}),
                previous_session_id: Some("ses_beef00000000".into()),
            },
            Line::Players {
                at: T0 + 1,
                players: vec![seat(1, false), seat(2, true)],
            },
            Line::Turn {
                at: T0 + 2,
                turn: 70_000,
                on_turn_seats: vec![1, 2],
            },
            Line::State {
                at: T0 + 3,
                version: 9,
                turn: 4,
                state: json!({"b": [0.25, 1.0], "a": {}}),
                omitted_bytes: None,
            },
            Line::State {
                at: T0 + 3,
                version: 10,
                turn: 4,
                state: Value::Null,
                omitted_bytes: Some(MAX_STATE_BYTES + 7),
            },
            Line::Action {
                at: T0 + 4,
                player_id: "p_0000000a".into(),
                turn: 4,
                action: json!({"type": "move", "t": 17}),
                status: ActionStatus::Applied,
                submitted_at: T0 + 2,
                think_ms: None,
                omitted_bytes: None,
            },
            Line::Action {
                at: T0 + 4,
                player_id: "p_0000000b".into(),
                turn: 4,
                action: Value::Null,
                status: ActionStatus::Applied,
                submitted_at: T0 + 3,
                think_ms: None,
                omitted_bytes: Some(MAX_ACTION_BYTES + 9),
            },
            Line::Action {
                at: T0 + 4,
                // Not of the usual shape: kept as text. Submitted "after" the write (a clock
                // step between processes): still exact.
                player_id: "someone".into(),
                turn: 5,
                action: json!("up"),
                status: ActionStatus::Unconfirmed,
                submitted_at: T0 + 9,
                think_ms: Some(12),
                omitted_bytes: None,
            },
            Line::Rejected {
                at: T0 + 5,
                seat: 1,
                player_id: "p_ffffffff".into(),
                turn: 5,
                reason: json!({"why": "no"}),
            },
            Line::Strike {
                at: T0 + 6,
                seat: 2,
                player_id: "p_00000002".into(),
                strikes: 3,
            },
            Line::End {
                at: T0 + 7,
                result: Some(json!({"winner": "p_00000001"})),
                reason: Some("forfeit".into()),
                players: vec![seat(1, false)],
            },
            Line::End {
                at: T0 + 7,
                result: None,
                reason: None,
                players: vec![],
            },
            Line::Next {
                at: T0 + 8,
                next_session_id: "ses_beef00000002".into(),
            },
            Line::Truncated { at: T0 + 9 },
        ];
        for l in &lines {
            let stored = encode_line(l, T0);
            let back = decode_line(&stored, Some(T0))
                .unwrap_or_else(|| panic!("{l:?} does not read back"));
            assert_eq!(&back, l);
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(l).unwrap()
            );
        }
        // The save script's own `truncated` line is JSON.
        assert_eq!(
            decode_line(br#"{"kind":"truncated","at":5}"#, None),
            Some(Line::Truncated { at: 5 })
        );
        // A later version's kind, or garbage, is skipped.
        assert_eq!(
            decode_line(&rmp_serde::to_vec(&(200u8, 1u64)).unwrap(), Some(T0)),
            None
        );
        assert_eq!(decode_line(b"\xc1", Some(T0)), None);
        assert_eq!(
            decode_line(&rmp_serde::to_vec(&(4u8, 1u64)).unwrap(), Some(T0)),
            None
        );
        // The lines a game has once keep the earlier form (a previous version reads them).
        for l in &lines {
            let once = matches!(
                l,
                Line::Start { .. }
                    | Line::Players { .. }
                    | Line::End { .. }
                    | Line::Next { .. }
                    | Line::Truncated { .. }
            );
            assert_eq!(encode_line(l, T0)[0] == LINE_V2, !once, "{l:?}");
            // `sessions.write_previous_forms`: every line untagged, with its absolute time
            // (the form the lines a game has once keep in either setting), and it reads back.
            let previous = encode_line_as(l, T0, StoredForms::Previous);
            assert_ne!(previous[0], LINE_V2, "{l:?}");
            assert_eq!(decode_line(&previous, None).as_ref(), Some(l), "{l:?}");
            if once {
                assert_eq!(previous, encode_line(l, T0), "{l:?}");
            }
        }
        // A line of the current form counts from the start: without it, it is skipped.
        let turn = encode_line(&lines[2], T0);
        // Its time is one byte (2 ms after the start), where the absolute time took nine.
        assert_eq!(&turn[..4], &[LINE_V2, 0x94, TURN, 2]);
        assert_eq!(decode_line(&turn, None), None);
    }

    /// Every state the protocol takes is kept (a state over 16 KiB was recorded by its size
    /// only: a game whose state grows lost its states past it).
    #[test]
    fn every_state_the_protocol_takes_is_kept() {
        let (mut s, _) = Session::create(
            NewSession {
                session_id: "ses_beef00000002".into(),
                config: json!({"minPlayers": 1, "sdkVersion": "2.0.0"}),
                host_identity: "h".into(),
                host_kind: HostKind::Agent,
                game: GameInfo::default(),
                timings: Timings::default(),
            },
            T0,
        )
        .unwrap();
        // A JSON string as long as the protocol allows (its quotes count).
        let big = "x".repeat(horst_sessions::ops::MAX_STATE_BYTES - 2);
        let lines = write(&mut s, ops(json!([{"op": "state", "state": big}])), T0 + 1);
        assert!(
            matches!(
                &lines[..],
                [Line::State { state: Value::String(t), omitted_bytes: None, .. }] if *t == big
            ),
            "{:?}",
            lines
                .iter()
                .map(|l| format!("{l:?}").chars().take(80).collect::<String>())
                .collect::<Vec<_>>()
        );
    }

    /// Two players on a turn-based table, started; their player ids.
    fn duel(id: &str) -> (Session, [String; 2], Vec<Line>) {
        let (mut s, _) = Session::create(
            NewSession {
                session_id: id.into(),
                config: json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true,
                    "sdkVersion": "2.0.0", "turnTimeout": 0}),
                host_identity: "agent:agt_house".into(),
                host_kind: HostKind::House,
                game: GameInfo::default(),
                timings: Timings::default(),
            },
            T0,
        )
        .unwrap();
        let mut lines = lines_of_write(None, &s, T0);
        for i in 0..2u32 {
            lines.extend(write(
                &mut s,
                Event::Join {
                    player_id: horst_sessions::format_player_id(i + 1),
                    identity: format!("agent:agt_{i}"),
                    as_name: None,
                },
                T0 + 1,
            ));
        }
        let pids = [
            s.players()[0].player_id.to_string(),
            s.players()[1].player_id.to_string(),
        ];
        lines.extend(write(
            &mut s,
            ops(json!([{"op": "legal_actions", "playerId": pids[0], "actions": ["go"]}])),
            T0 + 2,
        ));
        (s, pids, lines)
    }

    /// The writes of one ply: `mover` plays `action`, the host hears it and publishes `state`
    /// with the other player on turn; the lines of each write, in stored form, fitted to the
    /// budget as the store does (`used` carried along).
    fn ply(
        s: &mut Session,
        pids: &[String; 2],
        mover: usize,
        action: Value,
        state: Value,
        at: u64,
        used: &mut u64,
    ) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let turn = s.turn();
        let events = [
            Event::Action {
                player_id: pids[mover].clone(),
                action,
                turn: Some(turn),
                action_id: format!("a_{at}"),
                idempotency_key: None,
            },
            Event::HostPoll {
                after: Some(0),
                wait_ms: 0,
            },
            ops(json!([{"op": "state", "state": state},
                {"op": "legal_actions", "playerId": pids[1 - mover], "actions": ["go"]}])),
        ];
        for (k, ev) in events.into_iter().enumerate() {
            let before = s.clone();
            s.apply(ev, at + k as u64).unwrap();
            let mut lines = lines_of_write(Some(&before), s, at + k as u64);
            lines.sort_by_key(Line::is_essential);
            let fitted = fit_budget(
                &lines,
                *used,
                s.created_at_ms(),
                StoredForms::Current,
                at,
                Some(before.state()),
            );
            *used = fitted.used;
            out.extend(fitted.lines);
        }
        out
    }

    /// A game of 1,000 plies whose state lists every move so far (as chess's does) keeps
    /// every state, each rebuilt as it was published, in a size that grows with the game's
    /// length: it filled the 1 MiB budget at about 450 plies, each state stored whole.
    #[test]
    fn a_long_game_whose_state_grows_keeps_every_state_in_a_bounded_size() {
        let (mut s, pids, first) = duel("ses_beef00000003");
        let created = s.created_at_ms();
        let mut stored: Vec<Vec<u8>> = first.iter().map(|l| encode_line(l, created)).collect();
        let mut used = stored.iter().map(|l| l.len() as u64).sum::<u64>();
        let mut published = Vec::new();
        let mut moves: Vec<String> = Vec::new();
        for n in 0..1000usize {
            let mv = format!("m{:04}", n * 7919 % 10_000);
            moves.push(mv.clone());
            let state = json!({"game": "growing", "moves": moves, "last": mv,
                "turn": if n % 2 == 0 { "black" } else { "white" }, "ply": n + 1});
            published.push(state.clone());
            let at = T0 + 1_000 + n as u64 * 10;
            stored.extend(ply(&mut s, &pids, n % 2, json!(mv), state, at, &mut used));
        }
        let bytes: usize = stored.iter().map(Vec::len).sum();
        assert!(stored.len() <= MAX_LINES, "{} lines", stored.len());
        assert!(
            bytes <= 1000 * 120,
            "{bytes} bytes stored for 1,000 plies: more than 120 bytes a ply"
        );
        let lines = parse_lines(&stored);
        assert!(!lines.iter().any(|l| matches!(l, Line::Truncated { .. })));
        let states: Vec<&Value> = lines
            .iter()
            .filter_map(|l| match l {
                Line::State {
                    state,
                    omitted_bytes: None,
                    ..
                } => Some(state),
                _ => None,
            })
            .collect();
        assert_eq!(states.len(), 1000);
        for (n, (got, want)) in states.iter().zip(&published).enumerate() {
            assert_eq!(*got, want, "the state after ply {}", n + 1);
        }
        let actions = lines
            .iter()
            .filter(|l| matches!(l, Line::Action { .. }))
            .count();
        assert_eq!(actions, 1000);
        // Served as it was published: every state line in full, as before.
        let served = serde_json::to_string(&assemble(lines.clone(), None)).unwrap();
        assert!(served.contains(&serde_json::to_string(&published[999]).unwrap()));
        // Stored in the previous form (a rolling upgrade), a state is whole: a process of the
        // previous version reads it.
        let last = lines
            .iter()
            .rev()
            .find(|l| matches!(l, Line::State { .. }))
            .unwrap();
        let fitted = fit_budget(
            std::slice::from_ref(last),
            0,
            created,
            StoredForms::Previous,
            T0,
            Some(states[998]),
        );
        assert_eq!(
            fitted.lines,
            vec![encode_line_as(last, created, StoredForms::Previous)]
        );
        // A reading rebuilds at most its budget of states: past it, a state reads by its size.
        let small = parse_lines_within(&stored, 100_000);
        let omitted = small
            .iter()
            .filter(|l| {
                matches!(
                    l,
                    Line::State {
                        state: Value::Null,
                        omitted_bytes: Some(_),
                        ..
                    }
                )
            })
            .count();
        assert!(omitted > 0 && omitted < 1000, "{omitted}");
        let last = small.iter().rev().find_map(|l| match l {
            Line::State { omitted_bytes, .. } => Some(*omitted_bytes),
            _ => None,
        });
        assert!(matches!(last, Some(Some(n)) if n > 5_000), "{last:?}");
    }

    /// A state stored as its change needs the state before it: without it (a line lost or
    /// damaged) it reads by its size, and the next state stored whole reads again.
    #[test]
    fn a_state_patch_without_its_base_reads_by_its_size() {
        let (mut s, pids, first) = duel("ses_beef00000005");
        let created = s.created_at_ms();
        let mut stored: Vec<Vec<u8>> = first.iter().map(|l| encode_line(l, created)).collect();
        let mut used = 0;
        let states = [
            json!({"moves": ["a"], "pad": "x".repeat(200)}),
            json!({"moves": ["a", "b"], "pad": "x".repeat(200)}),
            json!({"moves": ["a", "b", "c"], "pad": "x".repeat(200)}),
            json!({"other": true}),
            json!({"other": false}),
        ];
        let mut state_lines = Vec::new();
        for (n, st) in states.iter().enumerate() {
            let at = T0 + 1_000 + n as u64 * 10;
            for l in ply(&mut s, &pids, n % 2, json!("go"), st.clone(), at, &mut used) {
                let patch = l.len() > 4 && l[0] == LINE_V2 && l[2] == STATE_PATCH;
                if patch
                    || decode_line(&l, Some(created))
                        .is_some_and(|d| matches!(d, Line::State { .. }))
                {
                    state_lines.push((stored.len(), patch));
                }
                stored.push(l);
            }
        }
        // The first state whole (no state before it), the next two as patches.
        let kinds: Vec<bool> = state_lines.iter().map(|(_, p)| *p).collect();
        assert_eq!(&kinds[..3], &[false, true, true], "{kinds:?}");
        let all = parse_lines(&stored);
        let got: Vec<Value> = all
            .iter()
            .filter_map(|l| match l {
                Line::State { state, .. } => Some(state.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(got, states);
        // The first state's line lost: its patches read by their size, until a whole one.
        let mut lost = stored.clone();
        lost.remove(state_lines[0].0);
        let read: Vec<(Value, Option<usize>)> = parse_lines(&lost)
            .into_iter()
            .filter_map(|l| match l {
                Line::State {
                    state,
                    omitted_bytes,
                    ..
                } => Some((state, omitted_bytes)),
                _ => None,
            })
            .collect();
        assert!(
            matches!(read[0], (Value::Null, Some(n)) if n > 0),
            "{read:?}"
        );
        assert!(
            matches!(read[1], (Value::Null, Some(n)) if n > 0),
            "{read:?}"
        );
        // A small state that replaces the whole is stored whole (shorter than its patch).
        assert!(!kinds[3], "{kinds:?}");
        assert_eq!(read[2], (states[3].clone(), None));
        assert_eq!(read[3], (states[4].clone(), None));
        // A patch line alone does not read (it needs its base), and never panics.
        assert_eq!(decode_line(&stored[state_lines[1].0], Some(created)), None);
    }

    /// An action's stored submission counts back from its `at`, wrapping like `decode_line`'s
    /// times: one out of range reads (as garbage), it does not panic with "attempt to
    /// subtract with overflow".
    #[test]
    fn an_action_whose_submission_overflows_still_reads() {
        let stored = rmp_serde::to_vec(&(
            ACTION,
            0i64,
            1u32,
            0u64,
            json!("go"),
            1u8,
            i64::MIN,
            None::<u64>,
        ))
        .unwrap();
        let Some(Line::Action {
            at, submitted_at, ..
        }) = decode_line(&stored, None)
        else {
            panic!("an action line");
        };
        assert_eq!((at, submitted_at), (0, 1 << 63));
    }

    #[test]
    fn median_and_p95_by_nearest_rank() {
        assert_eq!(median_p95(&[]), None);
        assert_eq!(median_p95(&[7]), Some((7, 7)));
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(median_p95(&v), Some((50, 95)));
        assert_eq!(median_p95(&[3, 1, 2]), Some((2, 3)));
    }
}
