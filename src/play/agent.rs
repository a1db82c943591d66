//! The agent loop of protocol section 5 as a pure state machine: it reads snapshots and the
//! answers to `POST /action`, decides the next call, and says what happened as [`Event`]s.
//! No I/O, no clock: `mod.rs` makes the calls and prints the events.

use serde_json::{json, Map, Value};

/// How a move is picked from `legalActions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Policy {
    /// Always the first legal action (deterministic).
    First,
    /// A uniformly random legal action (seeded with `--seed`, so runs repeat).
    Random,
}

/// A small PRNG (SplitMix64): enough for picking moves, reproducible from its seed on every
/// platform, and no dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift (the bias is below 2^-40 for any
    /// list of moves).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// One thing that happened, printed as one line (text or JSON).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// We sat down at a table.
    Joined {
        session_id: String,
        game: Option<String>,
        player_id: String,
        seat: u64,
        round: u64,
        as_name: Option<String>,
        status: String,
        seed: Option<u64>,
    },
    /// A round began (the first snapshot of a session that is `active`).
    Round {
        session_id: String,
        round: u64,
        series_id: String,
        seat: u64,
        players: Vec<Value>,
    },
    /// We sent a move and the backend accepted it for the game.
    Move {
        session_id: String,
        round: u64,
        turn: u64,
        action: Value,
        action_id: String,
    },
    /// The game's public state shows another player's last move (`state.lastMove` with a
    /// `by` that is not us).
    OpponentMove {
        session_id: String,
        round: u64,
        by: String,
        name: Option<String>,
        action: Value,
    },
    /// The game rejected our move; we play again.
    Rejected {
        session_id: String,
        round: u64,
        turn: u64,
        action: Value,
        reason: Option<String>,
    },
    /// The game said nothing about our move for 15 s; we play again.
    Unconfirmed {
        session_id: String,
        round: u64,
        turn: u64,
        action: Value,
    },
    /// `POST /action` answered 409 (`stale_turn`, `not_your_turn`, ...): we re-read.
    Conflict { session_id: String, code: String },
    /// Our clock ran out (a strike).
    Strike {
        session_id: String,
        round: u64,
        strikes: u64,
        max_strikes: Option<u64>,
    },
    /// A round ended.
    Result {
        session_id: String,
        round: u64,
        winner: Option<String>,
        you_won: Option<bool>,
        reason: Option<String>,
        result: Value,
    },
    /// We follow the rematch: same seat, no re-join.
    Rematch {
        from: String,
        session_id: String,
        round: u64,
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
    /// The JSON line: `{"event": <kind>, ...}`, keys in camelCase.
    pub fn to_json(&self) -> Value {
        let (kind, mut v) = match self {
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
                let mut v = json!({ "sessionId": session_id, "game": game, "playerId": player_id,
                        "seat": seat, "round": round, "asName": as_name, "status": status });
                if let Some(s) = seed {
                    v["seed"] = json!(s);
                }
                ("joined", v)
            }
            Event::Round {
                session_id,
                round,
                series_id,
                seat,
                players,
            } => (
                "round",
                json!({ "sessionId": session_id, "round": round, "seriesId": series_id,
                        "seat": seat, "players": players }),
            ),
            Event::Move {
                session_id,
                round,
                turn,
                action,
                action_id,
            } => (
                "move",
                json!({ "sessionId": session_id, "round": round, "turn": turn,
                        "action": action, "actionId": action_id }),
            ),
            Event::OpponentMove {
                session_id,
                round,
                by,
                name,
                action,
            } => (
                "opponent_move",
                json!({ "sessionId": session_id, "round": round, "by": by, "asName": name,
                        "move": action }),
            ),
            Event::Rejected {
                session_id,
                round,
                turn,
                action,
                reason,
            } => (
                "rejected",
                json!({ "sessionId": session_id, "round": round, "turn": turn,
                        "action": action, "reason": reason }),
            ),
            Event::Unconfirmed {
                session_id,
                round,
                turn,
                action,
            } => (
                "unconfirmed",
                json!({ "sessionId": session_id, "round": round, "turn": turn, "action": action }),
            ),
            Event::Conflict { session_id, code } => {
                ("conflict", json!({ "sessionId": session_id, "code": code }))
            }
            Event::Strike {
                session_id,
                round,
                strikes,
                max_strikes,
            } => (
                "strike",
                json!({ "sessionId": session_id, "round": round, "strikes": strikes,
                        "maxStrikes": max_strikes }),
            ),
            Event::Result {
                session_id,
                round,
                winner,
                you_won,
                reason,
                result,
            } => (
                "result",
                json!({ "sessionId": session_id, "round": round, "winner": winner,
                        "youWon": you_won, "reason": reason, "result": result }),
            ),
            Event::Rematch {
                from,
                session_id,
                round,
            } => (
                "rematch",
                json!({ "from": from, "sessionId": session_id, "round": round }),
            ),
            Event::Left { session_id, why } => {
                ("left", json!({ "sessionId": session_id, "why": why }))
            }
            Event::Retry {
                error,
                attempt,
                in_ms,
            } => (
                "retry",
                json!({ "error": error, "attempt": attempt, "inMs": in_ms }),
            ),
            Event::Done { reason, rounds } => {
                ("done", json!({ "reason": reason, "rounds": rounds }))
            }
            Event::Error { code, message } => {
                ("error", json!({ "code": code, "message": message }))
            }
        };
        let mut out = Map::new();
        out.insert("event".into(), json!(kind));
        if let Value::Object(m) = v.take() {
            out.extend(m);
        }
        Value::Object(out)
    }

    /// The JSON line, `event` first (the other keys in serde_json's order).
    pub fn to_json_line(&self) -> String {
        let mut v = self.to_json();
        let kind = v["event"].take();
        if let Value::Object(m) = &mut v {
            m.remove("event");
        }
        let rest = v.to_string();
        let rest = rest.trim_start_matches('{');
        let sep = if rest == "}" { "" } else { "," };
        format!("{{\"event\":{kind}{sep}{rest}")
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
                        let mut s = format!(
                            "seat {} {}",
                            p["seat"],
                            p["playerId"].as_str().unwrap_or("?")
                        );
                        if let Some(n) = p["asName"].as_str() {
                            s.push_str(&format!(" \"{n}\""));
                        }
                        if p["you"] == true {
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

/// What the I/O loop does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// `GET /state?wait=<wait>` (with `since=<version>` when given).
    Poll { since: Option<u64>, wait: u64 },
    /// `POST /action { action, turn }`, then report the answer with [`Agent::action_answer`].
    Act { action: Value, turn: u64 },
    /// Continue on the rematch session (no join).
    Follow { session_id: String },
    /// `POST /leave` on the session (opting out of the rematch), then stop.
    LeaveAndStop { session_id: String },
    /// Stop: the series ended.
    Stop,
}

/// The answer to `POST /action`.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionAnswer {
    /// 200: accepted (`actionId`).
    Accepted { action_id: String },
    /// 409 with its `code`.
    Conflict { code: String },
    /// 400 (for example `reserved_action`): the backend refused this action outright.
    Refused { message: String },
}

/// How long a finished round without `nextSessionId` is watched for a rematch link before
/// the series counts as over (the backend links the next round right after the end).
pub const REMATCH_GRACE_SECS: u64 = 5;

/// The long-poll wait of the loop (the protocol's maximum).
pub const POLL_WAIT_SECS: u64 = 25;

/// Attempts on one turn before giving up on a game that refuses every move.
const MAX_ATTEMPTS_PER_TURN: u32 = 50;

/// What we remember about the current session.
#[derive(Debug, Default)]
struct Round {
    session_id: String,
    started: bool,
    finished: bool,
    grace_used: bool,
    strikes: u64,
    /// The accepted action whose outcome we have not reported yet.
    pending: Option<(String, u64, Value)>,
    /// Actions the game rejected on a turn (so a policy tries another one first).
    rejected: Vec<Value>,
    rejected_turn: u64,
    attempts: u32,
    last_opponent_move: Option<Value>,
}

/// The decision half of `horst play`.
#[derive(Debug)]
pub struct Agent {
    policy: Policy,
    rng: Rng,
    rounds_limit: Option<u32>,
    rounds_done: u32,
    player_id: Option<String>,
    cur: Round,
}

impl Agent {
    pub fn new(policy: Policy, seed: u64, rounds_limit: Option<u32>, session_id: &str) -> Agent {
        Agent {
            policy,
            rng: Rng::new(seed),
            rounds_limit,
            rounds_done: 0,
            player_id: None,
            cur: Round {
                session_id: session_id.to_string(),
                ..Round::default()
            },
        }
    }

    pub fn session_id(&self) -> &str {
        &self.cur.session_id
    }

    pub fn rounds_done(&self) -> u32 {
        self.rounds_done
    }

    /// Reads one snapshot (from `/join`, `/state`, or a 409's `snapshot`): what happened and
    /// what to do next. An `Err` is a fatal condition with its message.
    pub fn observe(&mut self, s: &Value) -> Result<(Vec<Event>, Next), String> {
        let mut ev = Vec::new();
        if let Some(p) = s["playerId"].as_str() {
            self.player_id = Some(p.to_string());
        }
        let sid = self.cur.session_id.clone();
        let round = s["round"].as_u64().unwrap_or(1);
        let status = s["status"].as_str().unwrap_or("");

        if (status == "active" || status == "finished") && !self.cur.started {
            self.cur.started = true;
            if status == "active" {
                ev.push(Event::Round {
                    session_id: sid.clone(),
                    round,
                    series_id: s["seriesId"].as_str().unwrap_or(&sid).to_string(),
                    seat: s["seat"].as_u64().unwrap_or(0),
                    players: players_brief(s),
                });
            }
        }
        self.pending_outcome(s, round, &mut ev);
        self.opponent_move(s, round, &mut ev);
        let strikes = s["strikes"].as_u64().unwrap_or(0);
        if strikes > self.cur.strikes {
            ev.push(Event::Strike {
                session_id: sid.clone(),
                round,
                strikes,
                max_strikes: s["maxStrikes"].as_u64(),
            });
        }
        self.cur.strikes = strikes;

        if status == "finished" {
            if !self.cur.finished {
                self.cur.finished = true;
                self.rounds_done += 1;
                ev.push(self.result_event(s, round));
            }
            let next = s["nextSessionId"].as_str().map(str::to_string);
            if self.rounds_limit.is_some_and(|n| self.rounds_done >= n) {
                // Opt out of a rematch (linked now or a moment later) so nobody waits for us.
                return Ok((ev, Next::LeaveAndStop { session_id: sid }));
            }
            if let Some(next) = next {
                ev.push(Event::Rematch {
                    from: sid,
                    session_id: next.clone(),
                    round: round + 1,
                });
                self.cur = Round {
                    session_id: next.clone(),
                    ..Round::default()
                };
                return Ok((ev, Next::Follow { session_id: next }));
            }
            if !self.cur.grace_used {
                self.cur.grace_used = true;
                return Ok((
                    ev,
                    Next::Poll {
                        since: s["version"].as_u64(),
                        wait: REMATCH_GRACE_SECS,
                    },
                ));
            }
            return Ok((ev, Next::Stop));
        }

        if s["yourTurn"] == true {
            let turn = s["turn"].as_u64().unwrap_or(0);
            let legal: Vec<Value> = s["legalActions"].as_array().cloned().unwrap_or_default();
            if self.cur.rejected_turn != turn {
                self.cur.rejected_turn = turn;
                self.cur.rejected.clear();
                self.cur.attempts = 0;
            }
            // On turn without legal actions (a game that never publishes any, or an older
            // backend right after game_start): nothing to choose from, so wait for a change
            // rather than spin, and do not count it as a refused move.
            let Some(action) = self.pick(&legal) else {
                return Ok((
                    ev,
                    Next::Poll {
                        since: s["version"].as_u64(),
                        wait: POLL_WAIT_SECS,
                    },
                ));
            };
            self.cur.attempts += 1;
            if self.cur.attempts > MAX_ATTEMPTS_PER_TURN {
                return Err(format!(
                    "the game refused {MAX_ATTEMPTS_PER_TURN} moves in a row on turn {turn} of {sid}; giving up"
                ));
            }
            return Ok((ev, Next::Act { action, turn }));
        }
        Ok((
            ev,
            Next::Poll {
                since: None,
                wait: POLL_WAIT_SECS,
            },
        ))
    }

    /// Records the answer to the `POST /action` of `Next::Act { action, turn }`.
    pub fn action_answer(&mut self, action: &Value, turn: u64, a: ActionAnswer) -> Vec<Event> {
        let sid = self.cur.session_id.clone();
        match a {
            ActionAnswer::Accepted { action_id } => {
                self.cur.pending = Some((action_id.clone(), turn, action.clone()));
                vec![Event::Move {
                    session_id: sid,
                    round: 0, // filled by `with_round`
                    turn,
                    action: action.clone(),
                    action_id,
                }]
            }
            ActionAnswer::Conflict { code } => vec![Event::Conflict {
                session_id: sid,
                code,
            }],
            ActionAnswer::Refused { message } => {
                self.cur.rejected.push(action.clone());
                vec![Event::Rejected {
                    session_id: sid,
                    round: 0,
                    turn,
                    action: action.clone(),
                    reason: Some(message),
                }]
            }
        }
    }

    /// The policy's pick; actions the game rejected this turn come last.
    fn pick(&mut self, legal: &[Value]) -> Option<Value> {
        if legal.is_empty() {
            return None;
        }
        let fresh: Vec<&Value> = legal
            .iter()
            .filter(|a| !self.cur.rejected.contains(a))
            .collect();
        let pool: Vec<&Value> = if fresh.is_empty() {
            legal.iter().collect()
        } else {
            fresh
        };
        let i = match self.policy {
            Policy::First => 0,
            Policy::Random => self.rng.below(pool.len()),
        };
        Some(pool[i].clone())
    }

    /// Reports how our accepted action ended (`lastAction` of the snapshot).
    fn pending_outcome(&mut self, s: &Value, round: u64, ev: &mut Vec<Event>) {
        let Some((id, turn, action)) = self.cur.pending.clone() else {
            return;
        };
        let la = &s["lastAction"];
        if la["actionId"].as_str() != Some(id.as_str()) {
            return;
        }
        let sid = self.cur.session_id.clone();
        match la["status"].as_str() {
            Some("pending") => return,
            Some("rejected") => {
                self.cur.rejected.push(action.clone());
                ev.push(Event::Rejected {
                    session_id: sid,
                    round,
                    turn,
                    action,
                    reason: match &la["reason"] {
                        Value::Null => None,
                        Value::String(r) => Some(r.clone()),
                        other => Some(other.to_string()),
                    },
                });
            }
            Some("unconfirmed") => ev.push(Event::Unconfirmed {
                session_id: sid,
                round,
                turn,
                action,
            }),
            _ => {}
        }
        self.cur.pending = None;
    }

    /// `state.lastMove` (a convention of the house games: `{by: playerId, ...}`) by someone
    /// else, reported once.
    fn opponent_move(&mut self, s: &Value, round: u64, ev: &mut Vec<Event>) {
        let last = &s["state"]["lastMove"];
        let Some(by) = last["by"].as_str() else {
            return;
        };
        if Some(by) == self.player_id.as_deref()
            || self.cur.last_opponent_move.as_ref() == Some(last)
        {
            return;
        }
        self.cur.last_opponent_move = Some(last.clone());
        let name = s["players"].as_array().and_then(|ps| {
            ps.iter()
                .find(|p| p["playerId"] == by)
                .and_then(|p| p["asName"].as_str())
                .map(str::to_string)
        });
        ev.push(Event::OpponentMove {
            session_id: self.cur.session_id.clone(),
            round,
            by: by.to_string(),
            name,
            action: last.clone(),
        });
    }

    fn result_event(&self, s: &Value, round: u64) -> Event {
        let result = s["result"].clone();
        let winner = result["winner"].as_str().map(str::to_string);
        // A draw (`winner: null`) is not a win; a result without `winner` says nothing.
        let you_won = match (&winner, result.get("winner")) {
            (Some(w), _) => Some(Some(w.as_str()) == self.player_id.as_deref()),
            (None, Some(Value::Null)) => Some(false),
            _ => None,
        };
        Event::Result {
            session_id: self.cur.session_id.clone(),
            round,
            winner,
            you_won,
            reason: result["reason"].as_str().map(str::to_string),
            result,
        }
    }
}

/// `players` of a snapshot without the `ready` flags (they change as players show up).
fn players_brief(s: &Value) -> Vec<Value> {
    s["players"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    json!({ "playerId": p["playerId"], "seat": p["seat"], "asName": p["asName"],
                            "you": p["you"] == true })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Sets the `round` of events that the answer to `/action` created without one.
pub fn with_round(mut events: Vec<Event>, round: u64) -> Vec<Event> {
    for e in &mut events {
        match e {
            Event::Move { round: r, .. } | Event::Rejected { round: r, .. } if *r == 0 => {
                *r = round
            }
            _ => {}
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(extra: Value) -> Value {
        let mut s = json!({
            "sessionId": "ses_aaaa00000001", "playerId": "p_me", "seat": 0, "status": "active",
            "round": 1, "seriesId": "ses_aaaa00000001", "nextSessionId": null,
            "yourTurn": false, "turn": 1, "strikes": 0, "maxStrikes": 2, "state": {},
            "legalActions": null, "lastAction": null, "result": null, "version": 3,
            "players": [
                { "playerId": "p_me", "seat": 0, "asName": "Me", "you": true, "ready": true },
                { "playerId": "p_op", "seat": 1, "asName": "Op", "you": false, "ready": true }
            ]
        });
        if let (Some(m), Value::Object(e)) = (s.as_object_mut(), extra) {
            m.extend(e);
        }
        s
    }

    fn agent(policy: Policy, rounds: Option<u32>) -> Agent {
        Agent::new(policy, 7, rounds, "ses_aaaa00000001")
    }

    #[test]
    fn the_prng_is_reproducible_and_in_range() {
        let a: Vec<u64> = (0..5)
            .scan(Rng::new(42), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(Rng::new(42), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(
            a,
            (0..5)
                .scan(Rng::new(43), |r, _| Some(r.next_u64()))
                .collect::<Vec<_>>()
        );
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = Rng::new(1);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            seen[r.below(3)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }

    #[test]
    fn it_waits_then_plays_by_policy() {
        let mut a = agent(Policy::First, None);
        let (ev, next) = a.observe(&snap(json!({}))).unwrap();
        assert!(matches!(ev[0], Event::Round { round: 1, .. }), "{ev:?}");
        assert_eq!(
            next,
            Next::Poll {
                since: None,
                wait: POLL_WAIT_SECS
            }
        );
        let (ev, next) = a
            .observe(&snap(
                json!({ "yourTurn": true, "turn": 4, "legalActions": ["a", "b"] }),
            ))
            .unwrap();
        assert!(ev.is_empty(), "the round is announced once: {ev:?}");
        assert_eq!(
            next,
            Next::Act {
                action: json!("a"),
                turn: 4
            }
        );

        let picks = |seed| {
            let mut a = Agent::new(Policy::Random, seed, None, "ses_x");
            (0..20)
                .map(|t| {
                    match a
                        .observe(&snap(json!({ "yourTurn": true, "turn": t,
                                               "legalActions": [1, 2, 3, 4, 5] })))
                        .unwrap()
                        .1
                    {
                        Next::Act { action, .. } => action.as_u64().unwrap(),
                        other => panic!("{other:?}"),
                    }
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(picks(9), picks(9));
        assert_ne!(picks(9), picks(10));
    }

    #[test]
    fn a_rejected_move_is_reported_and_another_one_played() {
        let mut a = agent(Policy::First, None);
        let on_turn = json!({ "yourTurn": true, "turn": 2, "legalActions": ["x", "y"] });
        let (_, next) = a.observe(&snap(on_turn.clone())).unwrap();
        assert_eq!(
            next,
            Next::Act {
                action: json!("x"),
                turn: 2
            }
        );
        let ev = a.action_answer(
            &json!("x"),
            2,
            ActionAnswer::Accepted {
                action_id: "a_1".into(),
            },
        );
        let ev = with_round(ev, 1);
        assert!(
            matches!(
                &ev[0],
                Event::Move {
                    round: 1,
                    turn: 2,
                    ..
                }
            ),
            "{ev:?}"
        );
        // Still pending: nothing to say, wait.
        let (ev, _) = a
            .observe(&snap(
                json!({ "lastAction": { "actionId": "a_1", "status": "pending" } }),
            ))
            .unwrap();
        assert!(ev.is_empty());
        let mut back = on_turn.clone();
        back["lastAction"] = json!({ "actionId": "a_1", "status": "rejected", "reason": "no" });
        let (ev, next) = a.observe(&snap(back.clone())).unwrap();
        assert_eq!(
            ev,
            vec![Event::Rejected {
                session_id: "ses_aaaa00000001".into(),
                round: 1,
                turn: 2,
                action: json!("x"),
                reason: Some("no".into())
            }]
        );
        // The rejected move goes last, so the first policy tries "y".
        assert_eq!(
            next,
            Next::Act {
                action: json!("y"),
                turn: 2
            }
        );
        // Reported once.
        let (ev, _) = a.observe(&snap(back)).unwrap();
        assert!(ev.is_empty(), "{ev:?}");
    }

    #[test]
    fn unconfirmed_conflicts_and_strikes() {
        let mut a = agent(Policy::First, None);
        a.observe(&snap(json!({}))).unwrap();
        a.action_answer(
            &json!(1),
            3,
            ActionAnswer::Accepted {
                action_id: "a_2".into(),
            },
        );
        let (ev, _) = a
            .observe(&snap(json!({ "strikes": 1,
                "lastAction": { "actionId": "a_2", "status": "unconfirmed" } })))
            .unwrap();
        assert!(
            matches!(ev[0], Event::Unconfirmed { turn: 3, .. }),
            "{ev:?}"
        );
        assert!(matches!(ev[1], Event::Strike { strikes: 1, .. }), "{ev:?}");
        let ev = a.action_answer(
            &json!(1),
            3,
            ActionAnswer::Conflict {
                code: "stale_turn".into(),
            },
        );
        assert_eq!(ev[0].to_json()["code"], "stale_turn");
    }

    #[test]
    fn opponent_moves_come_from_state_last_move() {
        let mut a = agent(Policy::First, None);
        let mine = json!({ "state": { "lastMove": { "by": "p_me", "uci": "e2e4" } } });
        let (ev, _) = a.observe(&snap(mine)).unwrap();
        assert_eq!(ev.len(), 1, "only the round: {ev:?}");
        let theirs = json!({ "state": { "lastMove": { "by": "p_op", "san": "e5" } } });
        let (ev, _) = a.observe(&snap(theirs.clone())).unwrap();
        assert_eq!(ev[0].to_text(), "round 1: p_op \"Op\" played e5");
        let (ev, _) = a.observe(&snap(theirs)).unwrap();
        assert!(ev.is_empty());
    }

    #[test]
    fn rematches_are_followed_until_the_rounds_are_played() {
        let mut a = agent(Policy::First, Some(2));
        let over = json!({ "status": "finished", "nextSessionId": "ses_aaaa00000002",
                           "result": { "winner": "p_me", "reason": "ten" } });
        let (ev, next) = a.observe(&snap(over)).unwrap();
        assert!(
            matches!(
                &ev[0],
                Event::Result {
                    you_won: Some(true),
                    ..
                }
            ),
            "{ev:?}"
        );
        assert!(matches!(&ev[1], Event::Rematch { round: 2, .. }), "{ev:?}");
        assert_eq!(
            next,
            Next::Follow {
                session_id: "ses_aaaa00000002".into()
            }
        );
        assert_eq!(a.session_id(), "ses_aaaa00000002");
        let over2 = json!({ "sessionId": "ses_aaaa00000002", "round": 2, "status": "finished",
                            "nextSessionId": "ses_aaaa00000003",
                            "result": { "winner": null } });
        let (ev, next) = a.observe(&snap(over2)).unwrap();
        assert!(
            matches!(
                &ev[0],
                Event::Result {
                    you_won: Some(false),
                    winner: None,
                    ..
                }
            ),
            "{ev:?}"
        );
        assert_eq!(
            next,
            Next::LeaveAndStop {
                session_id: "ses_aaaa00000002".into()
            }
        );
        assert_eq!(a.rounds_done(), 2);
    }

    #[test]
    fn a_series_without_rematch_ends_after_a_grace_poll() {
        let mut a = agent(Policy::First, None);
        let over = json!({ "status": "finished", "result": { "winner": "p_op" }, "version": 9 });
        let (ev, next) = a.observe(&snap(over.clone())).unwrap();
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].to_text(), "round 1 over: p_op won");
        assert_eq!(
            next,
            Next::Poll {
                since: Some(9),
                wait: REMATCH_GRACE_SECS
            }
        );
        let (ev, next) = a.observe(&snap(over)).unwrap();
        assert!(ev.is_empty());
        assert_eq!(next, Next::Stop);
    }

    #[test]
    fn a_game_that_refuses_everything_is_given_up() {
        let mut a = agent(Policy::First, None);
        let on = snap(json!({ "yourTurn": true, "turn": 1, "legalActions": ["x"] }));
        for _ in 0..MAX_ATTEMPTS_PER_TURN {
            a.observe(&on).unwrap();
        }
        assert!(a.observe(&on).is_err());
    }

    #[test]
    fn an_empty_or_missing_legal_actions_list_waits_for_a_change() {
        let mut a = agent(Policy::Random, None);
        for legal in [json!([]), Value::Null] {
            let on =
                snap(json!({ "yourTurn": true, "turn": 0, "legalActions": legal, "version": 9 }));
            // However often it comes back like this, it is not a refused move.
            for _ in 0..(MAX_ATTEMPTS_PER_TURN * 2) {
                let (_, next) = a.observe(&on).unwrap();
                assert_eq!(
                    next,
                    Next::Poll {
                        since: Some(9),
                        wait: POLL_WAIT_SECS
                    }
                );
            }
        }
        let on = snap(json!({ "yourTurn": true, "turn": 1, "legalActions": ["x"] }));
        assert!(matches!(a.observe(&on).unwrap().1, Next::Act { .. }));
    }

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
    }
}
