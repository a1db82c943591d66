//! Protocol tests, organised by the contract's sections, on a virtual clock (no sleeping).

use crate::{
    Effect, Event, GameInfo, HostKind, NewSession, Op, Outcome, ProtocolError, Reply, Session,
    Timings,
};
use serde_json::{json, Value};

mod clocks;
mod host;
mod legacy;
mod modes;
mod outages;
mod outcomes;
mod property;
mod rematch;
mod seats;
mod series;
mod turns;
mod views;
mod wire;

/// A view as the JSON on the wire (these tests check the contract's field names and nulls).
pub fn wire<T: serde::Serialize>(view: &T) -> Value {
    serde_json::to_value(view).unwrap()
}

/// 2026-10-07T19:00:00.000Z
pub const T0: u64 = 1_791_399_600_000;

/// A v2 two-player sequential config, with `extra` merged in.
pub fn config(extra: Value) -> Value {
    let mut c = json!({
        "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "simultaneous": false,
        "gameType": "chess", "sdkVersion": "2.0.0",
    });
    if let (Value::Object(c), Value::Object(e)) = (&mut c, extra) {
        c.extend(e);
    }
    c
}

/// A session plus a virtual clock, a host that acknowledges what it read, and the armed
/// timers' firing simulated the way the I/O layer would.
pub struct Game {
    pub s: Session,
    pub now: u64,
    pub acked: u64,
    /// While true, `advance` has the host call in every 10 s (it stays alive).
    pub heartbeat: bool,
    pub last_heartbeat: u64,
    pub outcomes: Vec<Outcome>,
    next_id: u32,
}

impl Game {
    pub fn new(config: Value) -> Game {
        Game::with_timings(config, Timings::default())
    }

    pub fn with_timings(config: Value, timings: Timings) -> Game {
        let (s, out) = Session::create(
            NewSession {
                session_id: "ses_beef00000001".into(),
                config,
                host_identity: "host".into(),
                host_kind: HostKind::House,
                game: GameInfo {
                    game_id: Some("g_chess".into()),
                    game_title: Some("Chess".into()),
                    game_slug: Some("chess".into()),
                    skill_url: Some("https://api.rcadia.xyz/games/chess/skill.md".into()),
                },
                timings,
            },
            T0,
        )
        .unwrap();
        Game {
            s,
            now: T0,
            acked: 0,
            heartbeat: true,
            last_heartbeat: T0,
            outcomes: vec![out],
            next_id: 0,
        }
    }

    /// A two-player game with both players joined and `game_start` read by the host.
    pub fn started(config: Value) -> (Game, String, String) {
        let mut g = Game::new(config);
        let a = g.join("alice");
        let b = g.join("bob");
        let entries = g.poll();
        assert_eq!(entries[0]["event"], "game_start", "{entries:?}");
        (g, a, b)
    }

    pub fn apply(&mut self, e: Event) -> Result<Outcome, ProtocolError> {
        let before_version = self.s.version;
        let r = self.s.apply(e, self.now);
        if let Ok(out) = &r {
            assert_eq!(out.changed, self.s.version == before_version + 1);
            assert!(out.changed || self.s.version == before_version);
            self.outcomes.push(out.clone());
        }
        r
    }

    pub fn ok(&mut self, e: Event) -> Outcome {
        match self.apply(e.clone()) {
            Ok(o) => o,
            Err(err) => panic!("{e:?} failed: {err}"),
        }
    }

    pub fn err(&mut self, e: Event) -> ProtocolError {
        let before = self.s.clone();
        let err = self.apply(e).unwrap_err();
        assert_eq!(self.s, before, "an error must leave the session untouched");
        err
    }

    pub fn join(&mut self, identity: &str) -> String {
        self.next_id += 1;
        let pid = crate::format_player_id(self.next_id);
        match self
            .ok(Event::Join {
                player_id: pid,
                identity: identity.into(),
                as_name: Some(identity.to_uppercase()),
            })
            .reply
        {
            Reply::Joined { player_id, .. } => player_id,
            r => panic!("{r:?}"),
        }
    }

    pub fn ops(&mut self, ops: Value) -> Outcome {
        let ops = Op::parse_batch(&json!({ "ops": ops })).unwrap();
        self.ok(Event::PublishOps {
            ops,
            batch_id: None,
        })
    }

    /// Makes `pid` the player on turn.
    pub fn turn_to(&mut self, pid: &str) -> Outcome {
        self.ops(json!([{"op": "legal_actions", "playerId": pid, "actions": [{"type": "move", "to": "e4"}, {"type": "move", "to": "d4"}]}]))
    }

    /// `pid`'s `POST /action` of `action` without an `idempotencyKey`.
    pub fn keyless(pid: &str, action: Value, turn: Option<u64>, action_id: &str) -> Event {
        Event::Action {
            player_id: pid.into(),
            action,
            turn,
            action_id: action_id.into(),
            idempotency_key: None,
        }
    }

    pub fn try_act(&mut self, pid: &str, turn: Option<u64>) -> Result<String, ProtocolError> {
        self.next_id += 1;
        let action_id = format!("a_{:04}", self.next_id);
        self.apply(Event::Action {
            player_id: pid.into(),
            action: json!({"type": "move", "to": "e4"}),
            turn,
            action_id: action_id.clone(),
            idempotency_key: None,
        })
        .map(|_| action_id)
    }

    pub fn act(&mut self, pid: &str) -> String {
        let turn = self.s.turn;
        self.try_act(pid, Some(turn)).unwrap()
    }

    /// A host poll with `after` = what it acknowledged; returns the new entries.
    pub fn poll(&mut self) -> Vec<Value> {
        let entries = self.poll_after(Some(self.acked));
        if let Some(last) = entries.last() {
            self.acked = last["seq"].as_u64().unwrap();
        }
        entries
    }

    /// A raw host poll (no acknowledgement bookkeeping); returns the entries.
    pub fn poll_after(&mut self, after: Option<u64>) -> Vec<Value> {
        match self.ok(Event::HostPoll { after, wait_ms: 0 }).reply {
            Reply::Entries { entries, .. } => entries.iter().map(wire).collect(),
            r => panic!("{r:?}"),
        }
    }

    /// The next round of this finished game, created the way the I/O layer does on
    /// `Effect::CreateRematch` (not yet linked: see `rematch::open_rematch`).
    pub fn next_round(&self) -> Game {
        let id = format!("ses_beef{:08x}", self.s.round + 1);
        let (s, out) = Session::new_rematch(&self.s, id, self.now).unwrap();
        Game {
            s,
            now: self.now,
            acked: 0,
            heartbeat: true,
            last_heartbeat: self.now,
            outcomes: vec![out],
            next_id: 100,
        }
    }

    pub fn snap(&self, pid: &str) -> Value {
        wire(&self.s.snapshot(pid).unwrap())
    }

    /// Moves the virtual clock, firing armed timers at their instants like the delayed set
    /// would (and the host heartbeat, if on).
    pub fn advance(&mut self, ms: u64) {
        let target = self.now + ms;
        loop {
            let timer = self
                .s
                .timers
                .values()
                .min_by_key(|d| (d.at_ms, d.generation))
                .cloned();
            let beat = self.heartbeat.then_some(self.last_heartbeat + 10_000);
            let next_timer = timer.as_ref().map(|d| d.at_ms).filter(|&at| at <= target);
            let next_beat = beat.filter(|&at| at <= target);
            match (next_timer, next_beat) {
                (None, None) => break,
                (Some(at), b) if b.is_none_or(|b| at < b) => {
                    let d = timer.unwrap();
                    self.now = self.now.max(at);
                    self.ok(Event::TimerFired {
                        kind: d.kind,
                        generation: d.generation,
                    });
                }
                (_, Some(b)) => {
                    self.now = self.now.max(b);
                    self.last_heartbeat = b;
                    self.ok(Event::HostSeen);
                }
                (Some(_), None) => unreachable!(),
            }
        }
        self.now = target;
    }

    pub fn effects(&self) -> impl Iterator<Item = &Effect> {
        self.outcomes.iter().flat_map(|o| o.effects.iter())
    }
}
