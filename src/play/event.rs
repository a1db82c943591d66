//! What `horst play` says: one [`Event`] per thing that happened, printed as a readable line
//! or as one JSON object per line (`--json`).

use horst_sessions::wire::SnapshotPlayer;
use serde::Serialize;
use serde_json::Value;

/// A seat as `round` events show it: without the `ready` flag (it changes as players show up).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatBrief {
    pub player_id: String,
    pub seat: u32,
    pub as_name: Option<String>,
    pub you: bool,
}

impl From<&SnapshotPlayer> for SeatBrief {
    fn from(p: &SnapshotPlayer) -> SeatBrief {
        SeatBrief {
            player_id: p.player_id.clone(),
            seat: p.seat,
            as_name: p.as_name.clone(),
            you: p.you,
        }
    }
}

/// One thing that happened, printed as one line (text or JSON).
///
/// As JSON: `{"event": <kind in snake_case>, ...fields in camelCase}`, `event` first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "event",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// We sat down at a table.
    Joined {
        session_id: String,
        game: Option<String>,
        player_id: String,
        seat: u32,
        round: u32,
        as_name: Option<String>,
        status: String,
        /// Only with `--policy random`.
        #[serde(skip_serializing_if = "Option::is_none")]
        seed: Option<u64>,
    },
    /// A round began (the first snapshot of a session that is `active`).
    Round {
        session_id: String,
        round: u32,
        series_id: String,
        seat: u32,
        players: Vec<SeatBrief>,
    },
    /// We sent a move and the backend accepted it for the game.
    Move {
        session_id: String,
        round: u32,
        turn: u64,
        action: Value,
        action_id: String,
    },
    /// The game's public state shows another player's last move (`state.lastMove` with a
    /// `by` that is not us).
    OpponentMove {
        session_id: String,
        round: u32,
        by: String,
        #[serde(rename = "asName")]
        name: Option<String>,
        #[serde(rename = "move")]
        action: Value,
    },
    /// The game rejected our move; we play again.
    Rejected {
        session_id: String,
        round: u32,
        turn: u64,
        action: Value,
        reason: Option<String>,
    },
    /// The game said nothing about our move for 15 s; we play again.
    Unconfirmed {
        session_id: String,
        round: u32,
        turn: u64,
        action: Value,
    },
    /// `POST /action` answered 409 (`stale_turn`, `not_your_turn`, ...): we re-read.
    Conflict { session_id: String, code: String },
    /// Our clock ran out (a strike).
    Strike {
        session_id: String,
        round: u32,
        strikes: u32,
        max_strikes: Option<u32>,
    },
    /// A round ended.
    Result {
        session_id: String,
        round: u32,
        winner: Option<String>,
        you_won: Option<bool>,
        reason: Option<String>,
        result: Value,
    },
    /// We follow the rematch: same seat, no re-join.
    Rematch {
        from: String,
        session_id: String,
        round: u32,
    },
    /// We left a table (to skip a rematch, or on Ctrl-C).
    Left { session_id: String, why: String },
    /// A call failed (network, 5xx); we try again after a pause.
    Retry {
        error: String,
        attempt: u32,
        in_ms: u64,
    },
    /// The run is over (exit code 0, or 130 when interrupted).
    Done { reason: String, rounds: u32 },
    /// The run failed (the same message goes to stderr; the exit code is non-zero).
    Error { code: String, message: String },
}

impl Event {
    /// The JSON object of `--json` (for tests; the loop prints [`Event::to_json_line`]).
    #[cfg(test)]
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The JSON line, `event` first.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The readable line.
    pub fn to_text(&self) -> String {
        match self {
            Event::Joined {
                session_id,
                game,
                player_id,
                seat,
                round,
                as_name,
                status,
                seed,
            } => {
                let name = as_name
                    .as_deref()
                    .map(|n| format!(", \"{n}\""))
                    .unwrap_or_default();
                let seed = seed.map(|s| format!(" (seed {s})")).unwrap_or_default();
                let waiting = if status == "waiting" {
                    "; waiting for players"
                } else {
                    ""
                };
                let game = game.as_deref().map(|g| format!("{g} ")).unwrap_or_default();
                format!(
                    "joined {game}table {session_id} as seat {seat} (player {player_id}{name}), round {round}{waiting}{seed}"
                )
            }
            Event::Round {
                round,
                players,
                session_id,
                ..
            } => {
                let who: Vec<String> = players
                    .iter()
                    .map(|p| {
                        let mut s = format!("seat {} {}", p.seat, p.player_id);
                        if let Some(n) = &p.as_name {
                            s.push_str(&format!(" \"{n}\""));
                        }
                        if p.you {
                            s.push_str(" (you)");
                        }
                        s
                    })
                    .collect();
                format!("round {round} started at {session_id}: {}", who.join(", "))
            }
            Event::Move {
                round,
                turn,
                action,
                ..
            } => format!("round {round}, turn {turn}: my move {}", show(action)),
            Event::OpponentMove {
                round,
                by,
                name,
                action,
                ..
            } => format!(
                "round {round}: {} played {}",
                who(by, name.as_deref()),
                show(action)
            ),
            Event::Rejected {
                round,
                turn,
                action,
                reason,
                ..
            } => format!(
                "round {round}, turn {turn}: my move {} was rejected ({}); playing again",
                show(action),
                reason.as_deref().unwrap_or("no reason given")
            ),
            Event::Unconfirmed {
                round,
                turn,
                action,
                ..
            } => format!(
                "round {round}, turn {turn}: the game did not confirm my move {}; playing again",
                show(action)
            ),
            Event::Conflict { code, .. } => {
                format!("the backend refused the move ({code}); reading the state again")
            }
            Event::Strike {
                round,
                strikes,
                max_strikes,
                ..
            } => match max_strikes {
                Some(m) => format!("round {round}: my clock ran out, strike {strikes} of {m}"),
                None => format!("round {round}: my clock ran out, strike {strikes}"),
            },
            Event::Result {
                round,
                winner,
                you_won,
                reason,
                ..
            } => {
                let how = reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default();
                match (winner, you_won) {
                    (_, Some(true)) => format!("round {round} over: I won{how}"),
                    (Some(w), _) => format!("round {round} over: {w} won{how}"),
                    (None, _) => format!("round {round} over: no winner{how}"),
                }
            }
            Event::Rematch {
                session_id, round, ..
            } => format!("rematch: round {round} at {session_id} (same seat)"),
            Event::Left { session_id, why } => format!("left {session_id} ({why})"),
            Event::Retry {
                error,
                attempt,
                in_ms,
            } => format!(
                "call failed ({error}); retry {attempt} in {:.1} s",
                *in_ms as f64 / 1000.0
            ),
            Event::Done { reason, rounds } => {
                let what = match reason.as_str() {
                    "series_ended" => "the series ended",
                    "rounds_reached" => "played the rounds asked for",
                    "interrupted" => "interrupted",
                    other => other,
                };
                format!("done: {what} ({rounds} rounds finished)")
            }
            Event::Error { message, .. } => format!("error: {message}"),
        }
    }
}

fn who(player_id: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{player_id} \"{n}\""),
        None => player_id.to_string(),
    }
}

/// A move for people: a string as is, a `{san|uci|move}` object by that field, else JSON.
fn show(action: &Value) -> String {
    if let Some(s) = action.as_str() {
        return s.to_string();
    }
    for k in ["san", "uci", "move"] {
        if let Some(s) = action.get(k).and_then(Value::as_str) {
            return s.to_string();
        }
    }
    action.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_events_have_stable_shapes() {
        let e = Event::Joined {
            session_id: "ses_1".into(),
            game: Some("chess".into()),
            player_id: "p_1".into(),
            seat: 1,
            round: 1,
            as_name: None,
            status: "waiting".into(),
            seed: Some(5),
        };
        assert_eq!(
            e.to_json(),
            json!({ "event": "joined", "sessionId": "ses_1", "game": "chess", "playerId": "p_1",
                    "seat": 1, "round": 1, "asName": null, "status": "waiting", "seed": 5 })
        );
        let e = Event::Done {
            reason: "rounds_reached".into(),
            rounds: 2,
        };
        assert!(
            e.to_json_line().starts_with(r#"{"event":"done","#),
            "{}",
            e.to_json_line()
        );
        let line: Value = serde_json::from_str(&e.to_json_line()).unwrap();
        assert_eq!(line, e.to_json());
        assert_eq!(
            e.to_json(),
            json!({ "event": "done", "reason": "rounds_reached", "rounds": 2 })
        );
        let e = Event::OpponentMove {
            session_id: "ses_1".into(),
            round: 2,
            by: "p_2".into(),
            name: Some("Op".into()),
            action: json!({"san": "e5"}),
        };
        assert_eq!(
            e.to_json(),
            json!({ "event": "opponent_move", "sessionId": "ses_1", "round": 2, "by": "p_2",
                    "asName": "Op", "move": {"san": "e5"} })
        );
        let e = Event::Retry {
            error: "timed out".into(),
            attempt: 1,
            in_ms: 500,
        };
        assert_eq!(
            e.to_json(),
            json!({ "event": "retry", "error": "timed out", "attempt": 1, "inMs": 500 })
        );
    }
}
