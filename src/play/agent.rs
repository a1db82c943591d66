//! The agent loop of protocol section 5 as a pure state machine: it reads snapshots and the
//! answers to `POST /action`, decides the next call, and says what happened as [`Event`]s.
//! No I/O, no clock: `mod.rs` makes the calls and prints the events.

use horst_sessions::wire::AgentSnapshot;
use horst_sessions::{ActionStatus, Status};
use serde_json::Value;

use super::event::{Event, SeatBrief};
use super::policy::{Policy, Rng};

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
    /// `POST /leave` on a rematch every other player gave up (as the house's reference
    /// player does after a validation game), then seek a table again, and continue there
    /// with [`Agent::moved_to`] (`--seek` only: without it the agent waits at the rematch).
    Reseek { session_id: String },
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
    strikes: u32,
    /// The accepted action whose outcome we have not reported yet.
    pending: Option<(String, u64, Value)>,
    /// Actions the game rejected on a turn (so a policy tries another one first).
    rejected: Vec<Value>,
    rejected_turn: u64,
    attempts: u32,
    last_opponent_move: Option<Value>,
    /// A rematch we followed (not a table we joined or were seated at by a seek).
    followed: bool,
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
    /// Seek again rather than wait alone at a rematch every other player gave up.
    reseek: bool,
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
            reseek: false,
        }
    }

    /// With `--seek`: a rematch every other player gave up is left for a new seek
    /// ([`Next::Reseek`]). Without it an agent waits there: after a validation game the
    /// reference player gives up its seat, and two agents that each played theirs waited at
    /// two rematches for good, never at one table.
    pub fn seeking(mut self, reseek: bool) -> Agent {
        self.reseek = reseek;
        self
    }

    /// Continues on `session_id`, a table a new seek seated us at (after [`Next::Reseek`]).
    pub fn moved_to(&mut self, session_id: &str) {
        self.cur = Round {
            session_id: session_id.to_string(),
            ..Round::default()
        };
    }

    pub fn session_id(&self) -> &str {
        &self.cur.session_id
    }

    pub fn rounds_done(&self) -> u32 {
        self.rounds_done
    }

    /// Reads one snapshot (from `/join`, `/state`, or a 409's `snapshot`): what happened and
    /// what to do next. An `Err` is a fatal condition with its message.
    pub fn observe(&mut self, s: &AgentSnapshot) -> Result<(Vec<Event>, Next), String> {
        let mut ev = Vec::new();
        self.player_id = Some(s.player_id.clone());
        let sid = self.cur.session_id.clone();
        let round = s.round;

        if s.status != Status::Waiting && !self.cur.started {
            self.cur.started = true;
            if s.status == Status::Active {
                ev.push(Event::Round {
                    session_id: sid.clone(),
                    round,
                    series_id: s.series_id.clone(),
                    seat: s.seat,
                    players: s.players.iter().map(SeatBrief::from).collect(),
                });
            }
        }
        self.pending_outcome(s, round, &mut ev);
        self.opponent_move(s, round, &mut ev);
        if s.strikes > self.cur.strikes {
            ev.push(Event::Strike {
                session_id: sid.clone(),
                round,
                strikes: s.strikes,
                max_strikes: Some(s.max_strikes),
            });
        }
        self.cur.strikes = s.strikes;

        if s.status == Status::Finished {
            if !self.cur.finished {
                self.cur.finished = true;
                self.rounds_done += 1;
                ev.push(self.result_event(s, round));
            }
            let next = s.next_session_id.clone();
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
                    followed: true,
                    ..Round::default()
                };
                return Ok((ev, Next::Follow { session_id: next }));
            }
            if !self.cur.grace_used {
                self.cur.grace_used = true;
                return Ok((
                    ev,
                    Next::Poll {
                        since: Some(s.version),
                        wait: REMATCH_GRACE_SECS,
                    },
                ));
            }
            return Ok((ev, Next::Stop));
        }

        // Alone at a rematch we followed: every other player gave its seat up, and nobody
        // who seeks a table is told to come here before a table where someone waits.
        if self.reseek
            && self.cur.followed
            && s.status == Status::Waiting
            && s.players.iter().all(|p| p.player_id == s.player_id)
        {
            return Ok((ev, Next::Reseek { session_id: sid }));
        }

        if s.your_turn {
            let turn = s.turn;
            let legal = s.legal_actions.as_deref().map_or(&[][..], Vec::as_slice);
            if self.cur.rejected_turn != turn {
                self.cur.rejected_turn = turn;
                self.cur.rejected.clear();
                self.cur.attempts = 0;
            }
            // On turn without legal actions (a game that never publishes any, or an older
            // backend right after game_start): nothing to choose from, so wait for a change
            // rather than spin, and do not count it as a refused move.
            let Some(action) = self.pick(legal) else {
                return Ok((
                    ev,
                    Next::Poll {
                        since: Some(s.version),
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
    fn pending_outcome(&mut self, s: &AgentSnapshot, round: u32, ev: &mut Vec<Event>) {
        let Some((id, turn, action)) = self.cur.pending.clone() else {
            return;
        };
        let Some(la) = s.last_action.as_ref().filter(|la| la.action_id == id) else {
            return;
        };
        let sid = self.cur.session_id.clone();
        match la.status {
            ActionStatus::Pending => return,
            ActionStatus::Rejected => {
                self.cur.rejected.push(action.clone());
                ev.push(Event::Rejected {
                    session_id: sid,
                    round,
                    turn,
                    action,
                    reason: match &la.reason {
                        Value::Null => None,
                        Value::String(r) => Some(r.clone()),
                        other => Some(other.to_string()),
                    },
                });
            }
            ActionStatus::Unconfirmed => ev.push(Event::Unconfirmed {
                session_id: sid,
                round,
                turn,
                action,
            }),
            ActionStatus::Applied => {}
        }
        self.cur.pending = None;
    }

    /// `state.lastMove` (a convention of the house games: `{by: playerId, ...}`) by someone
    /// else, reported once.
    fn opponent_move(&mut self, s: &AgentSnapshot, round: u32, ev: &mut Vec<Event>) {
        let last = &s.state["lastMove"];
        let Some(by) = last["by"].as_str() else {
            return;
        };
        if Some(by) == self.player_id.as_deref()
            || self.cur.last_opponent_move.as_ref() == Some(last)
        {
            return;
        }
        self.cur.last_opponent_move = Some(last.clone());
        let name = s
            .players
            .iter()
            .find(|p| p.player_id == by)
            .and_then(|p| p.as_name.clone());
        ev.push(Event::OpponentMove {
            session_id: self.cur.session_id.clone(),
            round,
            by: by.to_string(),
            name,
            action: last.clone(),
        });
    }

    fn result_event(&self, s: &AgentSnapshot, round: u32) -> Event {
        // `result` is the game's own object; `winner` and `reason` are conventions of it.
        let result = s.result.clone().unwrap_or(Value::Null);
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

/// Sets the `round` of events that the answer to `/action` created without one.
pub fn with_round(mut events: Vec<Event>, round: u32) -> Vec<Event> {
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
    use serde_json::json;

    /// A snapshot as the backend sends it, with `extra` merged in (a `lastAction` gets the
    /// fields it leaves out).
    fn snap(extra: Value) -> AgentSnapshot {
        let mut s = json!({
            "sessionId": "ses_aaaa00000001", "playerId": "p_me", "seat": 0, "status": "active",
            "round": 1, "seriesId": "ses_aaaa00000001", "nextSessionId": null,
            "previousSessionId": null, "deadline": null, "waitingFor": null, "skillUrl": null,
            "yourTurn": false, "turn": 1, "strikes": 0, "maxStrikes": 2, "state": {},
            "legalActions": null, "lastAction": null, "rejections": [], "result": null,
            "version": 3,
            "players": [
                { "playerId": "p_me", "seat": 0, "asName": "Me", "you": true, "ready": true },
                { "playerId": "p_op", "seat": 1, "asName": "Op", "you": false, "ready": true }
            ]
        });
        if let (Some(m), Value::Object(e)) = (s.as_object_mut(), extra) {
            m.extend(e);
        }
        if let Some(la) = s["lastAction"].as_object_mut() {
            for (k, v) in [
                ("at", json!("2026-10-07T19:00:00.000Z")),
                ("turn", json!(1)),
            ] {
                la.entry(k).or_insert(v);
            }
            la.entry("reason").or_insert(Value::Null);
        }
        serde_json::from_value(s).expect("a snapshot in the wire's shape")
    }

    fn agent(policy: Policy, rounds: Option<u32>) -> Agent {
        Agent::new(policy, 7, rounds, "ses_aaaa00000001")
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

    /// With `--seek`, a followed rematch every other player gave up is left for a new seek;
    /// one whose opponent's seat is still reserved is waited at, and so is a table a seek
    /// seated us at (others seeking are sent there), and any table without `--seek`.
    #[test]
    fn a_rematch_every_other_player_gave_up_is_left_for_a_seek() {
        let over = json!({ "status": "finished", "nextSessionId": "ses_aaaa00000002",
                           "result": { "winner": "p_me" } });
        let me =
            json!([{ "playerId": "p_me", "seat": 0, "asName": "Me", "you": true, "ready": true }]);
        let reserved = json!({ "sessionId": "ses_aaaa00000002", "round": 2, "status": "waiting",
                               "turn": 0, "state": null });
        let mut alone = reserved.clone();
        alone["players"] = me.clone();
        for seek in [true, false] {
            let mut a = agent(Policy::First, None).seeking(seek);
            a.observe(&snap(over.clone())).unwrap();
            let (_, next) = a.observe(&snap(reserved.clone())).unwrap();
            assert!(matches!(next, Next::Poll { .. }), "{next:?}");
            let (_, next) = a.observe(&snap(alone.clone())).unwrap();
            if seek {
                assert_eq!(
                    next,
                    Next::Reseek {
                        session_id: "ses_aaaa00000002".into()
                    }
                );
                a.moved_to("ses_aaaa00000009");
                assert_eq!(a.session_id(), "ses_aaaa00000009");
                // Alone at the table the seek found: wait there.
                let mut found = alone.clone();
                found["sessionId"] = json!("ses_aaaa00000009");
                let (_, next) = a.observe(&snap(found)).unwrap();
                assert!(matches!(next, Next::Poll { .. }), "{next:?}");
            } else {
                assert!(matches!(next, Next::Poll { .. }), "{next:?}");
            }
        }
        // A first table a seek seated us at, alone: wait there.
        let mut a = agent(Policy::First, None).seeking(true);
        let mut first = alone.clone();
        first["round"] = json!(1);
        let (_, next) = a.observe(&snap(first)).unwrap();
        assert!(matches!(next, Next::Poll { .. }), "{next:?}");
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
}
