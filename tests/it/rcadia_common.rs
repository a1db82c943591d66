//! Helpers for the RCADIA tests: a host and agents talking HTTP to a real horst API.

use std::time::Duration;

use horst_sessions::wire::{AgentSnapshot, CreatedResponse, PendingActionsResponse, SystemEvent};
use serde_json::{json, Value};

use crate::harness::{spawn_app_with, TestApp};

pub const BRIDGE: &str = "/api/v1/agent/bridge/sessions";
pub const AGENT: &str = "/api/v1/agent/sessions";

/// Short platform timings so tests are fast; a test shortens more as it needs.
pub fn fast(c: &mut horst_config::Config) {
    c.sessions.rematch_delay_ms = 200;
    c.sessions.lobby_fill_ms = 300;
}

pub async fn app_with(adjust: impl FnOnce(&mut horst_config::Config)) -> TestApp {
    spawn_app_with(|c| {
        fast(c);
        adjust(c);
    })
    .await
}

/// A client with a credential, talking to one API process.
#[derive(Clone)]
pub struct Client {
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
}

impl Client {
    pub fn on(&self, app: &TestApp) -> Client {
        Client {
            base: format!("http://{}", app.addr),
            ..self.clone()
        }
    }

    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{}", self.base, path);
        let mut req = match method {
            "GET" => self.http.get(url),
            "PATCH" => self.http.patch(url),
            _ => self.http.post(url),
        };
        if !self.token.is_empty() {
            req = req.bearer_auth(&self.token);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .expect("request");
        let status = r.status().as_u16();
        let v = r.json().await.unwrap_or(Value::Null);
        (status, v)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("POST", path, Some(body)).await
    }

    // ---- host

    pub async fn create(&self, config: Value) -> String {
        let (st, v) = self
            .post(
                BRIDGE,
                json!({ "config": config, "gameId": "chess", "gameTitle": "Chess" }),
            )
            .await;
        assert_eq!(st, 201, "{v}");
        serde_json::from_value::<CreatedResponse>(v)
            .expect("a created session")
            .session_id
    }

    pub async fn ops(&self, id: &str, ops: Value) -> Value {
        let (st, v) = self
            .post(&format!("{BRIDGE}/{id}/ops"), json!({ "ops": ops }))
            .await;
        assert_eq!(st, 200, "{v}");
        v
    }

    /// Publishes `actions` as `player`'s legal actions: that player is on turn.
    pub async fn give_turn(&self, id: &str, player: &str, actions: Value) -> Value {
        self.ops(
            id,
            json!([{ "op": "legal_actions", "playerId": player, "actions": actions }]),
        )
        .await
    }

    /// Polls (as the host) until the `session_end` entry, at most 20 s; returns it and the
    /// `timeout` entries seen before it.
    pub async fn until_session_end(&self, id: &str, mut after: u64) -> (Value, Vec<Value>) {
        let t0 = std::time::Instant::now();
        let mut timeouts = Vec::new();
        while t0.elapsed() < Duration::from_secs(20) {
            let p = self.pending(id, after, 3.0).await;
            after = max_seq(&p, after);
            for e in entries(&p) {
                if e["event"] == "session_end" {
                    return (e, timeouts);
                }
                if e["type"] == "timeout" {
                    timeouts.push(e);
                }
            }
        }
        panic!("no session_end for {id} within 20 s; timeouts: {timeouts:?}");
    }

    pub async fn pending(&self, id: &str, after: u64, wait: f64) -> Value {
        let (st, v) = self
            .get(&format!(
                "{BRIDGE}/{id}/pending-actions?after={after}&wait={wait}"
            ))
            .await;
        assert_eq!(st, 200, "{v}");
        v
    }

    /// Keeps the table's host alive in the background, as a host's bridge does: long-polls
    /// `pending-actions` and acknowledges what it got, until the task is aborted. For tests
    /// that hold a table open longer than `sessions.host_gone_seconds` (a silent host's table
    /// closes then) without playing it; on a loaded machine a page-by-page walk can.
    pub fn keep_polling(&self, id: &str) -> tokio::task::JoinHandle<()> {
        let (host, id) = (self.clone(), id.to_string());
        tokio::spawn(async move {
            let mut after = 0;
            loop {
                let (st, v) = host
                    .get(&format!(
                        "{BRIDGE}/{id}/pending-actions?after={after}&wait=20"
                    ))
                    .await;
                if st == 200 {
                    after = max_seq(&v, after);
                } else {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        })
    }

    // ---- agent

    pub async fn join(&self, id: &str) -> Value {
        let (st, v) = self.post(&format!("{AGENT}/{id}/join"), json!({})).await;
        assert_eq!(st, 200, "{v}");
        v
    }

    pub async fn state(&self, id: &str, wait: f64) -> Value {
        let (st, v) = self.get(&format!("{AGENT}/{id}/state?wait={wait}")).await;
        assert_eq!(st, 200, "{v}");
        v
    }

    pub async fn act(&self, id: &str, action: Value, turn: u64) -> (u16, Value) {
        self.post(
            &format!("{AGENT}/{id}/action"),
            json!({ "action": action, "turn": turn }),
        )
        .await
    }
}

/// A host (host scope) and `n` agents (play scope) on `app`.
pub async fn cast(app: &TestApp, n: usize) -> (Client, Vec<Client>) {
    let mk = |token: String| Client {
        base: format!("http://{}", app.addr),
        token,
        http: reqwest::Client::new(),
    };
    let (host, _) = app
        .auth
        .create_token(&["host".to_string()], Some("Host"))
        .await
        .unwrap();
    let mut agents = Vec::new();
    for i in 0..n {
        let (t, _) = app
            .auth
            .create_token(&["play".to_string()], Some(&format!("Agent{i}")))
            .await
            .unwrap();
        agents.push(mk(t));
    }
    (mk(host), agents)
}

/// The v2 two-player config of most tests.
pub fn two_player(extra: Value) -> Value {
    let mut c = json!({
        "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "simultaneous": false,
        "gameType": "chess", "sdkVersion": "2.0.0", "turnTimeout": 0
    });
    if let (Some(m), Value::Object(e)) = (c.as_object_mut(), extra) {
        m.extend(e);
    }
    c
}

/// Creates a session, seats every agent, and drains the host queue up to `game_start`.
/// Returns (session id, player ids in seat order, last seq seen).
pub async fn started(
    host: &Client,
    agents: &[Client],
    config: Value,
) -> (String, Vec<String>, u64) {
    let id = host.create(config).await;
    let mut pids = Vec::new();
    for a in agents {
        let snap: AgentSnapshot = serde_json::from_value(a.join(&id).await).expect("a snapshot");
        pids.push(snap.player_id);
    }
    let mut after = 0;
    for _ in 0..20 {
        let p: PendingActionsResponse =
            serde_json::from_value(host.pending(&id, after, 5.0).await).expect("entries");
        for e in &p.actions {
            after = after.max(e.seq);
            let legacy_start = e
                .action
                .as_ref()
                .is_some_and(|a| a["type"] == "__game_start__");
            if e.event == Some(SystemEvent::GameStart) || legacy_start {
                return (id, pids, after);
            }
        }
    }
    panic!("no game_start for {id}");
}

/// Entries of one host poll.
pub fn entries(p: &Value) -> Vec<Value> {
    p["actions"].as_array().cloned().unwrap_or_default()
}

pub fn max_seq(p: &Value, after: u64) -> u64 {
    entries(p)
        .iter()
        .filter_map(|e| e["seq"].as_u64())
        .fold(after, u64::max)
}

/// Plays an `autoRematch` two-player game between the first two agents and ends it with
/// `result`; returns (session id, player ids, the next round's session id).
pub async fn ended_into_rematch(
    host: &Client,
    agents: &[Client],
    result: Value,
) -> (String, Vec<String>, String) {
    let (id, pids, _) = started(
        host,
        &agents[..2],
        two_player(json!({ "autoRematch": true })),
    )
    .await;
    host.ops(&id, json!([{ "op": "end", "result": result }]))
        .await;
    let next = agents[0].state(&id, 0.0).await["nextSessionId"]
        .as_str()
        .expect("nextSessionId")
        .to_string();
    (id, pids, next)
}

/// Adds to `pipe` a settled rating of `agent` in `game` (40 games, RD 60, as the rater
/// leaves a regular) named `name`, its place on the game's leaderboard, and the game in
/// the list of rated games.
pub fn seed_rating(
    pipe: &mut redis::Pipeline,
    app: &TestApp,
    (game, agent, name): (&str, &str, &str),
    rating: f64,
    now: u64,
) {
    let r = json!({ "rating": rating, "rd": 60.0, "volatility": 0.06, "games": 40,
        "wins": 20, "losses": 20, "draws": 0, "name": name, "updatedAt": now });
    pipe.cmd("SET")
        .arg(app.store.key(&format!("rating:{game}:{agent}")))
        .arg(r.to_string())
        .cmd("ZADD")
        .arg(app.store.key(&format!("leaderboard:{game}")))
        .arg(rating)
        .arg(agent)
        .cmd("SADD")
        .arg(app.store.key("leaderboard:games"))
        .arg(game);
}
