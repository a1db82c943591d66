//! RCADIA as an arena (issue 33), over HTTP against real horst API processes and Redis: a
//! series on a house table of a test game whose results the test controls (one agent always
//! wins) separates the two agents' ratings; a replay holds the games' public story; an API
//! process killed in the middle of a rating update leaves the game rated exactly once; and
//! seekers at once share one table.

use std::time::{Duration, Instant};

use horst_sessions::wire::{AgentSnapshot, CreatedResponse, PendingActionsResponse, SystemEvent};
use serde_json::{json, Value};

use crate::harness::{spawn_app_beside, HorstProcess, TestApp};
use crate::rcadia_common::{
    app_with, entries, max_seq, seed_rating, two_player, Client, AGENT, BRIDGE,
};

const LONG: Duration = Duration::from_secs(60);
const GAME: &str = "duel";

/// The house (a `--house` host token) and named agents on `app`.
async fn house_and_agents(app: &TestApp, names: &[&str]) -> (Client, Vec<Client>) {
    let mk = |token: String| Client {
        base: format!("http://{}", app.addr),
        token,
        http: reqwest::Client::new(),
    };
    let (house, _) = app
        .auth
        .create_token_as(&["host".into()], Some("House"), true)
        .await
        .unwrap();
    let mut agents = Vec::new();
    for n in names {
        let (t, _) = app
            .auth
            .create_token(&["play".into()], Some(n))
            .await
            .unwrap();
        agents.push(mk(t));
    }
    (mk(house), agents)
}

/// A table of the test game, hosted by `host`.
async fn open_duel(host: &Client) -> String {
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": two_player(json!({})), "gameId": GAME, "gameTitle": "Duel" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    serde_json::from_value::<CreatedResponse>(v)
        .unwrap()
        .session_id
}

/// Drains the host queue up to `game_start`; the last seq seen.
async fn until_game_start(host: &Client, id: &str) -> u64 {
    let mut after = 0;
    for _ in 0..20 {
        let p: PendingActionsResponse =
            serde_json::from_value(host.pending(id, after, 5.0).await).unwrap();
        for e in &p.actions {
            after = after.max(e.seq);
            if e.event == Some(SystemEvent::GameStart) {
                return after;
            }
        }
    }
    panic!("no game_start for {id}");
}

/// One game of the test game: `seated` join in order, `mover` (a seat index) plays "win"
/// after thinking `think`, and the house ends it with `winner` (a seat index) winning.
async fn play_duel(
    host: &Client,
    seated: [&Client; 2],
    mover: usize,
    winner: usize,
    think: Duration,
) -> String {
    let id = open_duel(host).await;
    let mut pids = Vec::new();
    for a in seated {
        let snap: AgentSnapshot = serde_json::from_value(a.join(&id).await).unwrap();
        pids.push(snap.player_id);
    }
    let after = until_game_start(host, &id).await;
    host.ops(
        &id,
        json!([{ "op": "state", "state": { "board": "start" } },
               { "op": "legal_actions", "playerId": pids[mover], "actions": ["win"] }]),
    )
    .await;
    let s = seated[mover].state(&id, 5.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    tokio::time::sleep(think).await;
    let (st, v) = seated[mover]
        .act(&id, json!("win"), s["turn"].as_u64().unwrap())
        .await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    assert!(
        entries(&p).iter().any(|e| e["playerId"] == pids[mover]),
        "{p}"
    );
    let _ = max_seq(&p, after);
    host.ops(
        &id,
        json!([{ "op": "state", "state": { "board": "won" } },
               { "op": "end", "result": { "winner": pids[winner] } }]),
    )
    .await;
    id
}

/// Polls `check` on the leaderboard JSON until it holds.
async fn leaderboard_until(c: &Client, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + LONG;
    loop {
        let (st, v) = c.get(&format!("/api/v1/leaderboard/{GAME}")).await;
        assert_eq!(st, 200, "{v}");
        if check(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "never {what}: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every agent a leaderboard answer lists: the ranked ones, then the provisional ones.
fn listed(board: &Value) -> Vec<&Value> {
    ["standings", "provisional"]
        .iter()
        .filter_map(|k| board[*k].as_array())
        .flatten()
        .collect()
}

fn standing<'a>(board: &'a Value, name: &str) -> &'a Value {
    listed(board)
        .into_iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} not on {board}"))
}

/// The replay of `id` as lines (sent with `c`'s credential if it has one).
async fn replay(c: &Client, id: &str) -> (u16, Vec<Value>, String) {
    let mut req = c.http.get(format!("{}{AGENT}/{id}/replay", c.base));
    if !c.token.is_empty() {
        req = req.bearer_auth(&c.token);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = r.text().await.unwrap();
    let lines = if status == 200 {
        body.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    } else {
        Vec::new()
    };
    (status, lines, ctype)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_series_where_one_agent_always_wins_separates_the_ratings() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Winner", "Loser"]).await;
    let (w, l) = (&agents[0], &agents[1]);
    let anon = Client {
        token: String::new(),
        ..w.clone()
    };
    // Still running: no replay yet (409), and an unknown id is 404.
    let running = open_duel(&house).await;
    let (st, _, _) = replay(&anon, &running).await;
    assert_eq!(st, 409);
    let (st, _, _) = replay(&anon, "ses_0000deadbeef").await;
    assert_eq!(st, 404);

    let mut ids = Vec::new();
    for g in 0..6 {
        // Seats alternate; the winner always moves and always wins.
        let (seated, me) = if g % 2 == 0 { ([w, l], 0) } else { ([l, w], 1) };
        ids.push(play_duel(&house, seated, me, me, Duration::from_millis(150)).await);
    }
    let board = leaderboard_until(&anon, "six games rated for both", |v| {
        let all = listed(v);
        all.len() == 2 && all.iter().all(|a| a["games"] == 6)
    })
    .await;
    let (sw, sl) = (standing(&board, "Winner"), standing(&board, "Loser"));
    assert_eq!(board["system"], "glicko2");
    // Six games against each other leave both uncertain (RD above 110): provisional, listed
    // apart, unranked, the better first.
    assert_eq!(board["standings"], json!([]), "{board}");
    assert_eq!(board["provisional"][0]["name"], "Winner", "{board}");
    assert_eq!(
        (sw["rank"].clone(), sl["rank"].clone()),
        (Value::Null, Value::Null)
    );
    assert!(sw["rd"].as_f64().unwrap() > 110.0, "{sw}");
    assert_eq!(
        (sw["wins"].as_u64(), sl["losses"].as_u64()),
        (Some(6), Some(6))
    );
    let (rw, rl) = (
        sw["rating"].as_f64().unwrap(),
        sl["rating"].as_f64().unwrap(),
    );
    assert!(rw > 1700.0 && rl < 1300.0, "the ratings separate: {board}");
    assert!(sw["rd"].as_f64().unwrap() < 350.0, "{sw}");
    // The winner's thinking time per move is measured (it waited 150 ms each time); the
    // loser never moved.
    let median = sw["thinkMedianMs"].as_u64().expect("a median");
    assert!((150..10_000).contains(&median), "{sw}");
    assert!(sl["thinkMedianMs"].is_null(), "{sl}");

    // The agent's page data: six games, newest first, each with its replay.
    let agent = sw["agent"].as_str().unwrap();
    let (st, mine) = anon
        .get(&format!("/api/v1/leaderboard/{GAME}/{agent}"))
        .await;
    assert_eq!(st, 200, "{mine}");
    let history = mine["history"].as_array().unwrap();
    assert_eq!(history.len(), 6, "{mine}");
    assert_eq!(history[0]["sessionId"], ids[5].as_str());
    assert!(history.iter().all(|h| h["score"] == 1.0));
    let (st, games) = anon.get("/api/v1/leaderboard").await;
    assert_eq!((st, games["games"].clone()), (200, json!([GAME])));
    // An id no game or agent can have is a 400 that says the form, not an empty board.
    for path in [
        "/api/v1/leaderboard/%3Cx%3E".to_string(),
        format!("/api/v1/leaderboard/{GAME}/not-an-agent"),
        "/api/v1/leaderboard/a%20b/agt_1".to_string(),
    ] {
        let (st, v) = anon.get(&path).await;
        assert_eq!(
            (st, v["code"].as_str()),
            (400, Some("bad_request")),
            "{path}: {v}"
        );
    }

    // A replay: the public story of the game, in order, JSON Lines.
    let (st, lines, ctype) = replay(&anon, &ids[0]).await;
    assert_eq!(st, 200);
    assert!(ctype.starts_with("application/x-ndjson"), "{ctype}");
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    for k in ["players", "turn", "state", "action", "end"] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    let start = &lines[0];
    assert_eq!(
        (start["gameId"].as_str(), start["host"].as_str()),
        (Some(GAME), Some("house"))
    );
    let action = lines.iter().find(|l| l["kind"] == "action").unwrap();
    assert_eq!(action["action"], "win");
    assert!(
        action["status"].is_null(),
        "applied is the default: {action}"
    );
    assert!(action["thinkMs"].as_u64().unwrap() >= 150, "{action}");
    let end = lines.iter().find(|l| l["kind"] == "end").unwrap();
    assert_eq!(end["result"]["winner"], action["playerId"]);
    let names: Vec<&str> = end["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Winner", "Loser"]);
    let states: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "state")
        .map(|l| &l["state"])
        .collect();
    assert_eq!(
        states,
        [&json!({"board": "start"}), &json!({"board": "won"})]
    );

    // A table hosted by someone other than the house is not rated.
    let (other, _) = crate::rcadia_common::cast(&app, 0).await;
    play_duel(&other, [w, l], 0, 0, Duration::ZERO).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let board = leaderboard_until(&anon, "unchanged", |_| true).await;
    assert_eq!(standing(&board, "Winner")["games"], 6, "{board}");
}

/// (Run beside the other waiting faults: `reliability::faults_that_wait_side_by_side`.)
pub(crate) async fn an_api_process_killed_mid_rating_update_leaves_the_game_rated_once() {
    let redis = horst_testkit::RedisServer::start();
    let url = redis.url();
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap();
    let args = [
        "api",
        "--redis",
        url.as_str(),
        "--listen",
        "127.0.0.1:0",
        "--data",
        d,
    ];
    // Process one pauses 20 s between reading a game's ratings and writing them: it is
    // killed in that pause.
    let mut one = HorstProcess::spawn(
        &args,
        &[("HORST_SESSIONS_RATING_PAUSE_MS", "20000")],
        data.path(),
    );
    let addr1 = one.wait_listening();
    let store = horst_store::Store::connect(&url, "horst:").await.unwrap();
    let auth = horst_identity::auth::Auth::new(store.clone(), &data.path().join("jwt.key"))
        .await
        .unwrap();
    let mk = |token: String| Client {
        base: format!("http://{addr1}"),
        token,
        http: reqwest::Client::new(),
    };
    let house = mk(auth
        .create_token_as(&["host".into()], Some("House"), true)
        .await
        .unwrap()
        .0);
    let a = mk(auth
        .create_token(&["play".into()], Some("Ada"))
        .await
        .unwrap()
        .0);
    let b = mk(auth
        .create_token(&["play".into()], Some("Bo"))
        .await
        .unwrap()
        .0);
    let id = play_duel(&house, [&a, &b], 0, 0, Duration::ZERO).await;

    // Wait until process one has claimed the game (its lease moved the score ahead).
    let pending = store.key("ratings:pending");
    let deadline = Instant::now() + LONG;
    loop {
        let mut conn = store.conn();
        let (score, (secs, micros)): (Option<f64>, (u64, u64)) = redis::pipe()
            .cmd("ZSCORE")
            .arg(&pending)
            .arg(&id)
            .cmd("TIME")
            .query_async(&mut conn)
            .await
            .unwrap();
        let now = (secs * 1000 + micros / 1000) as f64;
        if score.is_some_and(|s| s > now + 1000.0) {
            break;
        }
        assert!(Instant::now() < deadline, "process one never claimed {id}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    one.signal(libc::SIGKILL);
    one.wait_exit(Duration::from_secs(10)).expect("killed");
    let anon = Client {
        token: String::new(),
        ..a.clone()
    };
    let mut conn = store.conn();
    let marker: bool = redis::cmd("EXISTS")
        .arg(store.key(&format!("rated:{id}")))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!marker, "killed before it wrote");

    // Process two rates it once the lease runs out.
    let mut two = HorstProcess::spawn(&args, &[], data.path());
    let addr2 = two.wait_listening();
    let anon = Client {
        base: format!("http://{addr2}"),
        ..anon
    };
    let board = leaderboard_until(&anon, "the game rated by process two", |v| {
        listed(v).len() == 2
    })
    .await;
    // And never again (its rater keeps running meanwhile).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let again = leaderboard_until(&anon, "still rated", |_| true).await;
    assert_eq!(board, again);
    for s in listed(&again) {
        assert_eq!(s["games"], 1, "rated exactly once: {again}");
        let (_, mine) = anon
            .get(&format!(
                "/api/v1/leaderboard/{GAME}/{}",
                s["agent"].as_str().unwrap()
            ))
            .await;
        assert_eq!(mine["history"].as_array().unwrap().len(), 1, "{mine}");
    }
    assert_eq!(standing(&again, "Ada")["wins"], 1);
    let left: u64 = redis::cmd("ZCARD")
        .arg(&pending)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0, "nothing left to rate");
    drop(two);
}

/// Seeks `game` as `c`; the session it was seated at.
async fn seek(c: &Client, body: Value) -> (u16, Value) {
    c.post(&format!("{AGENT}/seek"), body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seekers_at_once_fill_tables_and_never_leave_two_half_empty() {
    // The house hosts the test game: a seek waits for its tables.
    let config = |c: &mut horst_config::Config| {
        c.sessions.lobby_fill_ms = 60_000;
        c.house.games = vec![GAME.into()];
    };
    let app = app_with(config).await;
    let other = spawn_app_beside(&app, config).await;
    let names: Vec<String> = (0..6).map(|i| format!("Seeker{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (house, agents) = house_and_agents(&app, &refs).await;

    // No table yet: two seekers at once wait; the house opens one; both get it.
    let mut waiting = tokio::task::JoinSet::new();
    for (i, a) in agents[..2].iter().enumerate() {
        let a = if i == 0 { a.clone() } else { a.on(&other) };
        waiting.spawn(async move { seek(&a, json!({ "game": GAME, "wait": 20 })).await });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let first = open_duel(&house).await;
    let second = open_duel(&house).await;
    let mut got = Vec::new();
    while let Some(r) = waiting.join_next().await {
        let (st, v) = r.unwrap();
        assert_eq!(st, 200, "{v}");
        got.push(v["sessionId"].as_str().unwrap().to_string());
    }
    assert_eq!(got, [first.clone(), first.clone()], "one table for both");

    // Three more open tables (four in all, one of them `second`), four seekers at once
    // through two processes: two full tables, the others untouched.
    let mut tables = vec![second];
    for _ in 0..2 {
        tables.push(open_duel(&house).await);
    }
    let mut at_once = tokio::task::JoinSet::new();
    for (i, a) in agents[2..].iter().enumerate() {
        let a = if i % 2 == 0 { a.clone() } else { a.on(&other) };
        at_once.spawn(async move { seek(&a, json!({ "game": GAME })).await });
    }
    let mut seated = std::collections::BTreeMap::<String, usize>::new();
    while let Some(r) = at_once.join_next().await {
        let (st, v) = r.unwrap();
        assert_eq!(st, 200, "{v}");
        *seated
            .entry(v["sessionId"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    assert_eq!(seated.len(), 2, "two tables, not more: {seated:?}");
    assert!(seated.values().all(|n| *n == 2), "both full: {seated:?}");
    let anon = Client {
        token: String::new(),
        ..house.clone()
    };
    for t in &tables {
        let (_, v) = anon.get(&format!("{AGENT}/{t}/public")).await;
        let n = v["players"].as_array().unwrap().len();
        assert!(n == 0 || n == 2, "no half-empty table: {t} has {n}");
    }
    // Seeking again while seated answers the same table; a game nobody hosts is refused at
    // once (404 unknown_game, after one look: it looked every 50 ms for the whole wait).
    let (st, v) = seek(&agents[2], json!({ "game": GAME })).await;
    assert_eq!(st, 200, "{v}");
    assert!(seated.contains_key(v["sessionId"].as_str().unwrap()));
    let asked = Instant::now();
    let (st, v) = seek(&agents[0], json!({ "game": "nothing", "wait": 20 })).await;
    assert_eq!((st, v["code"].as_str()), (404, Some("unknown_game")), "{v}");
    assert!(asked.elapsed() < Duration::from_secs(5), "it waited");
    assert!(v["error"].as_str().unwrap().contains("available"), "{v}");
    let (st, v) = seek(&agents[0], json!({ "game": "a b" })).await;
    assert_eq!(st, 400, "{v}");
    // A wait longer than any Duration is the longest wait (it panicked the request).
    let (st, v) = seek(&agents[2], json!({ "game": GAME, "wait": 1e20 })).await;
    assert_eq!(st, 200, "{v}");
}

/// The `rejected` lines of a replay as `viewer` downloads it.
async fn rejections(viewer: &Client, id: &str) -> Vec<Value> {
    let (st, lines, _) = replay(viewer, id).await;
    assert_eq!(st, 200);
    lines
        .into_iter()
        .filter(|l| l["kind"] == "rejected")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_shows_rejection_reasons_only_to_their_owner() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Owner", "Other"]).await;
    let (owner, other) = (&agents[0], &agents[1]);
    let id = open_duel(&house).await;
    let mut pids = Vec::new();
    for a in [owner, other] {
        let snap: AgentSnapshot = serde_json::from_value(a.join(&id).await).unwrap();
        pids.push(snap.player_id);
    }
    let after = until_game_start(&house, &id).await;
    house
        .ops(
            &id,
            json!([{ "op": "state", "state": { "board": "start" } },
                   { "op": "legal_actions", "playerId": pids[0], "actions": ["win"] }]),
        )
        .await;
    let turn = owner.state(&id, 5.0).await["turn"].as_u64().unwrap();
    let (st, v) = owner.act(&id, json!("win"), turn).await;
    assert_eq!(st, 200, "{v}");
    let p = house.pending(&id, after, 5.0).await;
    let after = max_seq(&p, after);
    // The game refuses it, saying why (only the owner may read this).
    house
        .ops(
            &id,
            json!([{ "op": "reject", "playerId": pids[0], "reason": "secret: the rook is pinned" }]),
        )
        .await;
    let (st, v) = owner.act(&id, json!("win"), turn).await;
    assert_eq!(st, 200, "{v}");
    let _ = house.pending(&id, after, 5.0).await;
    house
        .ops(
            &id,
            json!([{ "op": "end", "result": { "winner": pids[0] } }]),
        )
        .await;

    let anon = Client {
        token: String::new(),
        ..owner.clone()
    };
    let public = rejections(&anon, &id).await;
    assert_eq!(public.len(), 1, "{public:?}");
    assert_eq!(public[0]["playerId"], pids[0].as_str());
    assert!(public[0]["reason"].is_null(), "{public:?}");
    let others = rejections(other, &id).await;
    assert!(others[0]["reason"].is_null(), "another player: {others:?}");
    let hosts = rejections(&house, &id).await;
    assert!(hosts[0]["reason"].is_null(), "the host: {hosts:?}");
    let own = rejections(owner, &id).await;
    assert_eq!(own[0]["reason"], "secret: the rook is pinned", "{own:?}");
    // The owner's copy is private: no shared cache may keep it.
    let r = owner
        .http
        .get(format!("{}{AGENT}/{id}/replay", owner.base))
        .bearer_auth(&owner.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    // A credential that is sent must be valid.
    let forged = Client {
        token: "agt_forged.nothing".into(),
        ..owner.clone()
    };
    let (st, _, _) = replay(&forged, &id).await;
    assert_eq!(st, 401);
}

/// Polls `check` on one agent's rating page until it holds.
async fn agent_until(c: &Client, agent: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + LONG;
    loop {
        let (st, v) = c.get(&format!("/api/v1/leaderboard/{GAME}/{agent}")).await;
        assert_eq!(st, 200, "{v}");
        if check(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "never {what}: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_agent_seeks_and_plays_its_validation_game_against_the_reference_player() {
    use horst_rcadia::reference::{reference_move, REFERENCE_AGENT, REFERENCE_IDENTITY};
    let app = app_with(|c| c.sessions.reference_games = vec![GAME.into()]).await;
    let (house, agents) = house_and_agents(&app, &["Newbie"]).await;
    let newbie = &agents[0];
    let anon = Client {
        token: String::new(),
        ..newbie.clone()
    };
    let id = open_duel(&house).await;
    // The game's id in another case is the same game, validation game and all ("Chess" took
    // a lock and ratings of its own, and skipped the validation game).
    let (st, v) = seek(
        newbie,
        json!({ "game": GAME.to_ascii_uppercase(), "wait": 10 }),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["sessionId"], id.as_str());
    // The reference player took the other seat.
    let s = app.rcadia.load(&id).await.unwrap();
    let reference = s
        .player_by_identity(REFERENCE_IDENTITY)
        .expect("the reference player sits at the new agent's table")
        .player_id
        .clone();
    let mine = v["playerId"].as_str().unwrap().to_string();

    // The game offers it three actions; it plays the one its seed picks.
    let after = until_game_start(&house, &id).await;
    let legal = json!(["north", "east", "south"]);
    house
        .ops(
            &id,
            json!([{ "op": "state", "state": { "board": "start" } },
                   { "op": "legal_actions", "playerId": reference, "actions": legal }]),
        )
        .await;
    let turn = app.rcadia.load(&id).await.unwrap().turn();
    let secret = app.rcadia.reference_secret();
    let want = reference_move(secret, &id, turn, legal.as_array().unwrap()).unwrap();
    let deadline = Instant::now() + LONG;
    let mut after = after;
    let played = loop {
        let p = house.pending(&id, after, 5.0).await;
        after = max_seq(&p, after);
        if let Some(e) = entries(&p)
            .into_iter()
            .find(|e| e["playerId"] == reference.as_str())
        {
            break e;
        }
        assert!(
            Instant::now() < deadline,
            "the reference player never moved"
        );
    };
    assert_eq!(played["action"], want, "{played}");
    // It wins; the newbie's rating record names this as its validation game.
    house
        .ops(
            &id,
            json!([{ "op": "state", "state": { "board": "won" } },
                   { "op": "end", "result": { "winner": reference } }]),
        )
        .await;
    let agent_id = app
        .rcadia
        .load(&id)
        .await
        .unwrap()
        .player(&mine)
        .unwrap()
        .identity
        .strip_prefix("agent:")
        .unwrap()
        .to_string();
    let page = agent_until(&anon, &agent_id, "the validation game rated", |v| {
        v["standing"]["games"] == 1
    })
    .await;
    let st = &page["standing"];
    assert_eq!(st["validation"]["sessionId"], id.as_str(), "{page}");
    assert_eq!(st["validation"]["score"], 0.0, "{page}");
    assert_eq!(st["provisional"], true, "one game: provisional");
    let board = leaderboard_until(&anon, "both rated", |v| listed(v).len() == 2).await;
    let r = standing(&board, "House reference");
    assert_eq!(
        (r["agent"].as_str(), r["wins"].as_u64()),
        (Some(REFERENCE_AGENT), Some(1))
    );
    assert!(r["validation"].is_null(), "{r}");
    // It opted out of the rematch and left the table: the driver forgot it.
    let key = app.store.key("reference:tables");
    let deadline = Instant::now() + LONG;
    loop {
        let n: u64 = redis::cmd("SCARD")
            .arg(&key)
            .query_async(&mut app.store.conn())
            .await
            .unwrap();
        if n == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the reference player kept its table"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let s = app.rcadia.load(&id).await.unwrap();
    assert!(s.player(&reference).unwrap().left, "out of the rematch");

    // Validated: its next seek seats it like anyone (no reference player joins).
    let next = open_duel(&house).await;
    let (st, v) = seek(newbie, json!({ "game": GAME, "wait": 10 })).await;
    assert_eq!(st, 200, "{v}");
    let seated = v["sessionId"].as_str().unwrap().to_string();
    let s = app.rcadia.load(&seated).await.unwrap();
    assert!(
        s.player_by_identity(REFERENCE_IDENTITY).is_none(),
        "{seated} (opened {next})"
    );

    // Idle rating periods (one day each) grow its RD on the virtual clock; the rating stays.
    let rd0 = st_f64(&page["standing"], "rd");
    let rating0 = st_f64(&page["standing"], "rating");
    app.store
        .set_clock_offset_ms(30 * 24 * 3600 * 1000 + 60_000);
    let later = agent_until(&anon, &agent_id, "RD grown by idle time", |v| {
        st_f64(&v["standing"], "rd") > rd0
    })
    .await;
    let (rd, rating) = (
        st_f64(&later["standing"], "rd"),
        st_f64(&later["standing"], "rating"),
    );
    // Thirty periods: RD² grows by 30 σ² on the Glicko-2 scale (σ 0.06 after one game).
    let scale = 173.7178_f64;
    let sigma = 0.06_f64;
    let want = (((rd0 / scale).powi(2) + 30.0 * sigma * sigma).sqrt() * scale).min(350.0);
    assert!((rd - want).abs() < 0.5, "rd {rd0} -> {rd}, want {want}");
    assert_eq!(rating, rating0);
}

fn st_f64(v: &Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

/// A rated seek by an agent already seated at a table of the game answers that table, as
/// the docs say, whoever hosts it: an agent-hosted one was passed over, and the agent got a
/// second seat at a house table.
#[tokio::test]
async fn a_seek_by_an_agent_seated_at_an_agent_hosted_table_answers_that_table() {
    let app = app_with(|c| c.sessions.lobby_fill_ms = 60_000).await;
    let (house, agents) = house_and_agents(&app, &["Sitter"]).await;
    let (agent_host, _) = app
        .auth
        .create_token(&["host".into()], Some("Self-hosted"))
        .await
        .unwrap();
    let agent_host = Client {
        token: agent_host,
        ..agents[0].clone()
    };
    let theirs = open_duel(&agent_host).await;
    let _house_table = open_duel(&house).await;
    let (st, v) = agents[0]
        .post(&format!("{AGENT}/{theirs}/join"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    let (st, v) = seek(&agents[0], json!({ "game": GAME, "wait": 0 })).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["sessionId"], theirs.as_str(), "{v}");
}

/// A new agent's one win (1500 to about 1662) does not rank it above an agent settled at
/// 1650 ± 60: provisional agents are listed apart and not ranked. The leaderboard ranked
/// everyone by rating, so one lucky game (or a partner who always loses) put a newcomer at
/// the top.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_win_does_not_rank_a_new_agent_above_a_settled_one() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Fresh", "Other"]).await;
    let anon = Client {
        token: String::new(),
        ..agents[0].clone()
    };
    // A settled agent, as the rater leaves one after forty games.
    let now = app.rcadia.now_ms().await.unwrap();
    let settled = json!({ "rating": 1650.0, "rd": 60.0, "volatility": 0.06, "games": 40,
        "wins": 30, "losses": 10, "draws": 0, "name": "Settled", "updatedAt": now });
    let _: () = redis::pipe()
        .cmd("SET")
        .arg(app.store.key(&format!("rating:{GAME}:agt_settled")))
        .arg(settled.to_string())
        .cmd("ZADD")
        .arg(app.store.key(&format!("leaderboard:{GAME}")))
        .arg(1650.0)
        .arg("agt_settled")
        .cmd("SADD")
        .arg(app.store.key("leaderboard:games"))
        .arg(GAME)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    let board = leaderboard_until(&anon, "the game rated", |v| listed(v).len() == 3).await;
    let fresh = standing(&board, "Fresh");
    assert!(
        fresh["rating"].as_f64().unwrap() > 1650.0,
        "one win from 1500 rates above 1650: {fresh}"
    );
    let ranked: Vec<&str> = board["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(ranked, ["Settled"], "{board}");
    assert_eq!(board["standings"][0]["rank"], 1);
    assert_eq!(board["provisional"][0]["name"], "Fresh", "{board}");
    assert!(fresh["rank"].is_null(), "{fresh}");
    // Its own page says it is not ranked yet.
    let (_, page) = anon
        .get(&format!(
            "/api/v1/leaderboard/{GAME}/{}",
            fresh["agent"].as_str().unwrap()
        ))
        .await;
    assert!(page["standing"]["rank"].is_null(), "{page}");
    assert_eq!(page["standing"]["provisional"], true, "{page}");
}

/// A seek takes a reserved rematch whose seat a player gave up, as a join does: an agent
/// whose opponent opted out (the reference player always does after a validation game)
/// sat alone for the whole reservation while seekers were told there was no table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seek_takes_the_seat_a_player_gave_up_in_a_reserved_rematch() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Stayer", "Quitter", "Seeker"]).await;
    let (st, v) = house
        .post(
            BRIDGE,
            json!({ "config": two_player(json!({ "autoRematch": true })), "gameId": GAME, "gameTitle": "Duel" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    let id = v["sessionId"].as_str().unwrap().to_string();
    let mut pids = Vec::new();
    for a in &agents[..2] {
        pids.push(a.join(&id).await["playerId"].as_str().unwrap().to_string());
    }
    until_game_start(&house, &id).await;
    let end = house
        .ops(
            &id,
            json!([{ "op": "state", "state": { "board": "over" } },
                   { "op": "end", "result": { "winner": pids[0] } }]),
        )
        .await;
    let next = end["nextSessionId"]
        .as_str()
        .expect("a rematch")
        .to_string();
    let (st, v) = agents[1]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    // The stayer shows up at the rematch: nobody is left to hold a seat for, one seat free,
    // an open table (`rcadia_conformance::a_rematch_seat_given_up_is_listed_once_...`).
    agents[0].state(&next, 0.0).await;
    let (_, all) = agents[2]
        .get(&format!("{AGENT}/available?game={GAME}&all=1"))
        .await;
    let entry = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == next.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("the rematch in {all}"));
    assert_eq!(
        (entry["reserved"].clone(), entry["joinable"].clone()),
        (json!(false), json!(true)),
        "{entry}"
    );
    let (st, v) = seek(&agents[2], json!({ "game": GAME, "wait": 0 })).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["sessionId"], next.as_str(), "{v}");
}

/// Agents with the same rating share a rank (1, 2, 2, 4), on the leaderboard and on their
/// own pages. Two agents with equal records (the same results against the same opponents)
/// were ranked apart, by their agent ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_with_the_same_rating_share_a_rank() {
    let app = app_with(|_| {}).await;
    let anon = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };
    // Settled agents, as the rater leaves them; two with the very same rating.
    let now = app.rcadia.now_ms().await.unwrap();
    let mut pipe = redis::pipe();
    for (agent, rating) in [
        ("agt_top", 1800.5),
        ("agt_tiea", 1700.25),
        ("agt_tieb", 1700.25),
        ("agt_low", 1600.0),
    ] {
        seed_rating(&mut pipe, &app, (GAME, agent, agent), rating, now);
    }
    let _: () = pipe.query_async(&mut app.store.conn()).await.unwrap();
    let (st, board) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    assert_eq!(st, 200, "{board}");
    let ranks: Vec<(String, u64)> = board["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["agent"].as_str().unwrap().to_string(),
                s["rank"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ranks.len(), 4, "{board}");
    assert_eq!(ranks[0], ("agt_top".to_string(), 1), "{board}");
    assert_eq!((ranks[1].1, ranks[2].1), (2, 2), "a tie: {board}");
    assert_eq!(ranks[3], ("agt_low".to_string(), 4), "{board}");
    // A limit that cuts between the two: the one listed is still second.
    let (_, two) = anon
        .get(&format!("/api/v1/leaderboard/{GAME}?limit=2"))
        .await;
    assert_eq!(two["standings"][1]["rank"], 2, "{two}");
    // A limit out of range, 0 included, is refused naming the range, not an empty page.
    for bad in ["0", "201"] {
        let (st, v) = anon
            .get(&format!("/api/v1/leaderboard/{GAME}?limit={bad}"))
            .await;
        assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
        assert!(v["error"].as_str().unwrap().contains("1 to 200"), "{v}");
    }
    for (agent, rank) in [
        ("agt_top", 1),
        ("agt_tiea", 2),
        ("agt_tieb", 2),
        ("agt_low", 4),
    ] {
        let (_, page) = anon
            .get(&format!("/api/v1/leaderboard/{GAME}/{agent}"))
            .await;
        assert_eq!(page["standing"]["rank"], rank, "{agent}: {page}");
    }
}

/// Two agents' games against each other are rated up to ten a UTC day; the eleventh is
/// played but not rated, and both histories say so. Two colluding agents (one always
/// losing, a rematch seating them again) could farm one of them to the top.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairs_eleventh_game_of_the_day_is_not_rated() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Farmer", "Feeder"]).await;
    let (w, l) = (&agents[0], &agents[1]);
    let anon = Client {
        token: String::new(),
        ..w.clone()
    };
    let mut ids = Vec::new();
    for _ in 0..11 {
        ids.push(play_duel(&house, [w, l], 0, 0, Duration::ZERO).await);
    }
    let board = leaderboard_until(&anon, "both listed", |v| listed(v).len() == 2).await;
    let agent = standing(&board, "Farmer")["agent"]
        .as_str()
        .unwrap()
        .to_string();
    let page = agent_until(&anon, &agent, "eleven games in the history", |v| {
        v["history"].as_array().is_some_and(|h| h.len() == 11)
    })
    .await;
    assert_eq!(page["standing"]["games"], 10, "{page}");
    assert_eq!(page["standing"]["wins"], 10, "{page}");
    let history = page["history"].as_array().unwrap();
    let unrated: Vec<&Value> = history
        .iter()
        .filter(|h| h["unrated"] == "pair_daily_cap")
        .collect();
    assert_eq!(unrated.len(), 1, "{page}");
    assert_eq!(
        history.iter().filter(|h| !h["unrated"].is_null()).count(),
        1,
        "{page}"
    );
    // The unrated game leaves the rating as it was.
    assert_eq!(
        history[0]["unrated"], "pair_daily_cap",
        "the last one: {page}"
    );
    assert_eq!(history[0]["rating"], history[1]["rating"], "{page}");
    assert_eq!(history[0]["sessionId"], ids[10].as_str(), "{page}");
    let feeder = standing(&board, "Feeder")["agent"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, theirs) = anon
        .get(&format!("/api/v1/leaderboard/{GAME}/{feeder}"))
        .await;
    assert_eq!(theirs["standing"]["games"], 10, "{theirs}");
}

/// The operator switches replays, ratings and seek off (`[arena]`, product decision 13):
/// their routes answer 404 saying so, a finished game leaves no replay key and is not
/// queued for rating. They could not be switched off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_switches_replays_ratings_and_seek_off() {
    let app = app_with(|c| {
        c.arena.replays = false;
        c.arena.ratings = false;
        c.arena.seek = false;
        c.house.games = vec![GAME.into()];
    })
    .await;
    let (house, agents) = house_and_agents(&app, &["Ann", "Ben"]).await;
    let anon = Client {
        token: String::new(),
        ..agents[0].clone()
    };
    for path in [
        "/api/v1/leaderboard".to_string(),
        format!("/api/v1/leaderboard/{GAME}"),
        format!("/api/v1/leaderboard/{GAME}/agt_0123"),
    ] {
        let (st, v) = anon.get(&path).await;
        assert_eq!(
            (st, v["code"].as_str()),
            (404, Some("not_found")),
            "{path}: {v}"
        );
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .contains("arena.ratings = false"),
            "{path}: {v}"
        );
    }
    let page = anon
        .http
        .get(format!("{}/leaderboard/{GAME}", anon.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 404);
    assert!(page.text().await.unwrap().contains("switched ratings off"));
    let (st, v) = seek(&agents[0], json!({ "game": GAME, "wait": 0 })).await;
    assert_eq!(st, 404, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("arena.seek = false"),
        "{v}"
    );

    let id = play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    let (st, _, _) = replay(&anon, &id).await;
    assert_eq!(st, 404);
    let store = &app.store;
    let bucket = store.bucket_of(&id);
    let (replay_key, pending): (u64, u64) = redis::pipe()
        .cmd("EXISTS")
        .arg(store.key_in_bucket(bucket, &format!("ses:{id}:replay")))
        .cmd("ZCARD")
        .arg(store.key_in_bucket(bucket, "ratings:pending"))
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert_eq!(
        (replay_key, pending),
        (0, 0),
        "no replay, nothing queued to rate"
    );
}

/// With replays off and ratings on, a finished game is rated from its session record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_replays_a_game_is_rated_from_its_record() {
    let app = app_with(|c| c.arena.replays = false).await;
    let (house, agents) = house_and_agents(&app, &["Cid", "Dot"]).await;
    let anon = Client {
        token: String::new(),
        ..agents[0].clone()
    };
    play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    let board = leaderboard_until(&anon, "rated", |v| listed(v).len() == 2).await;
    assert_eq!(standing(&board, "Cid")["wins"], 1, "{board}");
}

/// The house reference player's name is the house's: an agent that joins or seeks as
/// "House reference" (in any case or spacing) is refused with a 400 saying so; any agent
/// could take it, and pass for the house's yardstick at a table and on the leaderboard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_but_the_house_plays_as_its_reference_player() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Mimic"]).await;
    let id = open_duel(&house).await;
    for name in ["House reference", "house  REFERENCE"] {
        let (st, v) = agents[0]
            .post(&format!("{AGENT}/{id}/join"), json!({ "asName": name }))
            .await;
        assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
        assert!(
            v["error"].as_str().unwrap().contains("reference player"),
            "{v}"
        );
    }
    let (st, v) = seek(
        &agents[0],
        json!({ "game": GAME, "asName": "House-Reference" }),
    )
    .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
    let s = app.rcadia.load(&id).await.unwrap();
    assert!(s.players().is_empty(), "nobody joined");
    // Any other name is the agent's to choose.
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/{id}/join"),
            json!({ "asName": "House fan" }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
}

/// With replays kept less than a day (`sessions.replay_retention_hours`), a replay that
/// expired while the game's record is still kept is answered as expired: it said the game
/// "finished before this server recorded replays".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_replay_is_answered_as_expired() {
    let app = app_with(|c| c.sessions.replay_retention_hours = 1).await;
    let (house, agents) = house_and_agents(&app, &["Eve", "Fay"]).await;
    let anon = Client {
        token: String::new(),
        ..agents[0].clone()
    };
    let id = play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    let (st, _, _) = replay(&anon, &id).await;
    assert_eq!(st, 200);
    // Two hours later Redis has dropped the replay; the record is kept a day.
    let store = &app.store;
    let _: () = redis::cmd("DEL")
        .arg(store.key_in_bucket(store.bucket_of(&id), &format!("ses:{id}:replay")))
        .query_async(&mut store.conn())
        .await
        .unwrap();
    store.set_clock_offset_ms(2 * 3600 * 1000);
    let (st, v) = anon.get(&format!("{AGENT}/{id}/replay")).await;
    assert_eq!((st, v["code"].as_str()), (404, Some("not_found")), "{v}");
    let message = v["error"].as_str().unwrap();
    assert!(
        message.contains("expired") && message.contains("replay_retention_hours"),
        "{message}"
    );
}

/// Seeds settled ratings as the rater leaves them: (agent, rating, rd, games, days idle).
/// `index`: also in the idle index, as the rater writes it now; without it, as a version
/// before the index left a ranked agent.
async fn seed_ratings(app: &TestApp, agents: &[(&str, f64, f64, u32, u64)], index: bool) {
    let now = app.rcadia.now_ms().await.unwrap();
    let mut pipe = redis::pipe();
    for &(agent, rating, rd, games, idle_days) in agents {
        let r: horst_rcadia::rating::Rating = serde_json::from_value(json!({
            "rating": rating, "rd": rd, "volatility": 0.06, "games": games,
            "wins": games, "losses": 0, "draws": 0, "name": agent,
            "updatedAt": now - idle_days * 24 * 3600 * 1000 }))
        .unwrap();
        let board = if r.provisional() {
            format!("leaderboard:{GAME}:provisional")
        } else {
            format!("leaderboard:{GAME}")
        };
        pipe.cmd("SET")
            .arg(app.store.key(&format!("rating:{GAME}:{agent}")))
            .arg(serde_json::to_string(&r).unwrap())
            .cmd("ZADD")
            .arg(app.store.key(&board))
            .arg(rating)
            .arg(agent);
        if let (true, Some(at)) = (index, r.provisional_by_idleness_at()) {
            pipe.cmd("ZADD")
                .arg(app.store.key(&format!("leaderboard:{GAME}:idle")))
                .arg(at)
                .arg(agent);
        }
    }
    let _: () = pipe
        .cmd("SADD")
        .arg(app.store.key("leaderboard:games"))
        .arg(GAME)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
}

/// Each agent's rank on its own page.
async fn own_ranks(anon: &Client, agents: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    for agent in agents {
        let (st, page) = anon
            .get(&format!("/api/v1/leaderboard/{GAME}/{agent}"))
            .await;
        assert_eq!(st, 200, "{page}");
        out.push(page["standing"]["rank"].clone());
    }
    out
}

/// (agent, rank) of a board's ranked standings.
fn board_ranks(board: &Value) -> Vec<(String, Value)> {
    board["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["agent"].as_str().unwrap().to_string(), s["rank"].clone()))
        .collect()
}

/// An agent idle long enough to turn provisional counts on neither view: the board listed
/// it as provisional but agents' own pages still counted it above them (J was first on the
/// board and second on its page) until its next game. Both an agent ranked before the idle
/// index (100 days idle, read first on an agent's page) and one that turns provisional
/// later on the code's clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_provisional_agent_is_counted_by_neither_rank_view() {
    let app = app_with(|_| {}).await;
    let anon = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };
    // Ranked by a version before the index: the 100-day idle one is provisional already.
    seed_ratings(
        &app,
        &[
            ("agt_idle", 1900.0, 60.0, 40, 100),
            ("agt_j", 1800.0, 60.0, 40, 0),
        ],
        false,
    )
    .await;
    // Read first on the agent's own page, as the review did.
    assert_eq!(own_ranks(&anon, &["agt_j"]).await, [json!(1)]);
    let (_, board) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    assert_eq!(board_ranks(&board), [("agt_j".into(), json!(1))], "{board}");
    assert_eq!(board["provisional"][0]["agent"], "agt_idle", "{board}");
    assert_eq!(own_ranks(&anon, &["agt_idle"]).await, [Value::Null]);

    // One near the limit turns provisional a day or two from now; J (RD 60) in months.
    seed_ratings(&app, &[("agt_fade", 1850.0, 109.0, 40, 0)], true).await;
    let (_, board) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    assert_eq!(
        board_ranks(&board),
        [("agt_fade".into(), json!(1)), ("agt_j".into(), json!(2))],
        "{board}"
    );
    assert_eq!(
        own_ranks(&anon, &["agt_fade", "agt_j"]).await,
        [json!(1), json!(2)]
    );
    app.store.set_clock_offset_ms(10 * 24 * 3600 * 1000);
    // Its own page first this time: J is first there and on the board.
    assert_eq!(
        own_ranks(&anon, &["agt_j", "agt_fade"]).await,
        [json!(1), Value::Null]
    );
    let (_, board) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    assert_eq!(board_ranks(&board), [("agt_j".into(), json!(1))], "{board}");
    let provisional: Vec<&str> = board["provisional"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap())
        .collect();
    assert_eq!(provisional, ["agt_idle", "agt_fade"], "{board}");

    // A full Redis refuses a move (ZADD), but the reads still answer.
    seed_ratings(&app, &[("agt_late", 1700.0, 109.0, 40, 0)], true).await;
    app.store.set_clock_offset_ms(20 * 24 * 3600 * 1000);
    crate::redis_full::fill(&app).await;
    let (st, board) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    let (page_st, page) = anon.get(&format!("/api/v1/leaderboard/{GAME}/agt_j")).await;
    crate::redis_full::config_set(&app, "maxmemory", "0").await;
    assert_eq!(st, 200, "{board}");
    assert_eq!(
        (page_st, page["standing"]["rank"].clone()),
        (200, json!(1)),
        "{page}"
    );
}

/// The leaderboard pages with `offset` and `nextOffset`: every ranked agent is reachable
/// (only the top 200 were, the rest through their own pages), ranks across pages match
/// the agents' own pages and ties, no agent shows twice or not at all, and a bad offset is
/// a 400 that says what to pass. No offset is the top, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_pages_with_offset() {
    let app = app_with(|_| {}).await;
    let anon = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };
    let ranked = [
        ("agt_a", 2000.0),
        ("agt_b", 1900.0),
        ("agt_c", 1900.0),
        ("agt_d", 1900.0),
        ("agt_e", 1800.0),
        ("agt_f", 1700.0),
        ("agt_g", 1600.0),
    ];
    let mut seeds: Vec<(&str, f64, f64, u32, u64)> =
        ranked.iter().map(|&(a, r)| (a, r, 60.0, 40, 0)).collect();
    seeds.extend([
        ("agt_p1", 1650.0, 200.0, 2, 0),
        ("agt_p2", 1550.0, 200.0, 2, 0),
        ("agt_p3", 1450.0, 200.0, 2, 0),
        ("agt_p4", 1350.0, 200.0, 2, 0),
    ]);
    seed_ratings(&app, &seeds, true).await;

    let (st, top) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    assert_eq!(st, 200, "{top}");
    assert_eq!(
        (top["offset"].clone(), top["nextOffset"].clone()),
        (json!(0), Value::Null),
        "{top}"
    );
    assert_eq!(top["standings"].as_array().unwrap().len(), 7, "{top}");

    let mut seen = Vec::new();
    let mut provisional = Vec::new();
    let mut offset = Some(0);
    let mut pages = 0;
    while let Some(at) = offset {
        let (st, page) = anon
            .get(&format!("/api/v1/leaderboard/{GAME}?limit=3&offset={at}"))
            .await;
        assert_eq!(st, 200, "{page}");
        assert_eq!(page["offset"], at, "{page}");
        seen.extend(board_ranks(&page));
        provisional.extend(
            page["provisional"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["agent"].as_str().unwrap().to_string()),
        );
        offset = page["nextOffset"].as_u64();
        pages += 1;
        assert!(pages < 10, "{page}");
    }
    assert_eq!(pages, 3);
    let want: Vec<(String, Value)> = [
        ("agt_a", 1),
        ("agt_d", 2),
        ("agt_c", 2),
        ("agt_b", 2),
        ("agt_e", 5),
        ("agt_f", 6),
        ("agt_g", 7),
    ]
    .iter()
    .map(|&(a, r)| (a.to_string(), json!(r)))
    .collect();
    assert_eq!(seen, want);
    assert_eq!(provisional, ["agt_p1", "agt_p2", "agt_p3", "agt_p4"]);
    // The same ranks on the agents' own pages.
    let agents: Vec<&str> = want.iter().map(|(a, _)| a.as_str()).collect();
    let ranks: Vec<Value> = want.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(own_ranks(&anon, &agents).await, ranks);
    // Past the end: empty, no next page.
    let (st, past) = anon
        .get(&format!("/api/v1/leaderboard/{GAME}?offset=50"))
        .await;
    assert_eq!(st, 200, "{past}");
    assert_eq!(past["standings"], json!([]), "{past}");
    assert_eq!(past["nextOffset"], Value::Null, "{past}");
    for bad in ["-1", "x", "1.5", "1000000001"] {
        let (st, v) = anon
            .get(&format!("/api/v1/leaderboard/{GAME}?offset={bad}"))
            .await;
        assert_eq!(
            (st, v["code"].as_str()),
            (400, Some("bad_request")),
            "{bad}: {v}"
        );
        assert!(
            v["error"].as_str().unwrap().contains("offset"),
            "{bad}: {v}"
        );
    }
}

/// The rater keeps the idle index: after a rated game between two settled agents both are
/// in it at the moment their new ratings turn provisional by idleness, and past it both
/// views list them as provisional.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_puts_both_agents_in_the_idle_index() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Old", "Young"]).await;
    let anon = Client {
        token: String::new(),
        ..agents[0].clone()
    };
    play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    let board = leaderboard_until(&anon, "the first game rated", |v| listed(v).len() == 2).await;
    let ids: Vec<String> = ["Old", "Young"]
        .iter()
        .map(|n| standing(&board, n)["agent"].as_str().unwrap().to_string())
        .collect();
    // Both settled now (ranked, no index entry: only the rater writes one).
    let now = app.rcadia.now_ms().await.unwrap();
    let mut pipe = redis::pipe();
    for (id, rating) in ids.iter().zip([1800.0, 1700.0]) {
        let r = json!({ "rating": rating, "rd": 60.0, "volatility": 0.06, "games": 40,
            "wins": 20, "losses": 20, "draws": 0, "updatedAt": now });
        pipe.cmd("SET")
            .arg(app.store.key(&format!("rating:{GAME}:{id}")))
            .arg(r.to_string())
            .cmd("ZADD")
            .arg(app.store.key(&format!("leaderboard:{GAME}")))
            .arg(rating)
            .arg(id)
            .cmd("ZREM")
            .arg(app.store.key(&format!("leaderboard:{GAME}:provisional")))
            .arg(id);
    }
    let _: () = pipe.query_async(&mut app.store.conn()).await.unwrap();
    play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    agent_until(&anon, &ids[1], "the second game rated", |v| {
        v["standing"]["games"] == 41
    })
    .await;
    let mut conn = app.store.conn();
    for id in &ids {
        let (raw, at): (String, Option<f64>) = redis::pipe()
            .cmd("GET")
            .arg(app.store.key(&format!("rating:{GAME}:{id}")))
            .cmd("ZSCORE")
            .arg(app.store.key(&format!("leaderboard:{GAME}:idle")))
            .arg(id)
            .query_async(&mut conn)
            .await
            .unwrap();
        let r: horst_rcadia::rating::Rating = serde_json::from_str(&raw).unwrap();
        let want = r.provisional_by_idleness_at().expect("settled, ranked");
        assert_eq!(at, Some(want as f64), "{id}: {raw}");
    }
    let ranks = own_ranks(&anon, &[&ids[0], &ids[1]]).await;
    assert_eq!(ranks, [json!(1), json!(2)]);
    // Past both moments (RD 60 turns provisional in about 80 idle days).
    app.store.set_clock_offset_ms(200 * 24 * 3600 * 1000);
    assert_eq!(
        own_ranks(&anon, &[&ids[1], &ids[0]]).await,
        [Value::Null, Value::Null]
    );
    let (_, board) = anon.get(&format!("/api/v1/leaderboard/{GAME}")).await;
    assert_eq!(board["standings"], json!([]), "{board}");
    assert_eq!(board["provisional"].as_array().unwrap().len(), 2, "{board}");
}

/// Both clocks of a simultaneous turn run out at once at a house table (the result names
/// both in `forfeitedByAll`, `winner: null`): neither agent played the game, so it is not
/// rated (not queued, no history entry), and a game the two then play is rated as usual.
/// It was rated as a draw: a game nobody played moved the better agent's rating down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_every_player_forfeited_at_once_is_not_rated() {
    let app = app_with(|_| {}).await;
    let (house, agents) = house_and_agents(&app, &["Sleepy", "Drowsy"]).await;
    let anon = Client {
        token: String::new(),
        ..agents[0].clone()
    };
    let config =
        two_player(json!({ "simultaneous": true, "turnTimeout": 0.5, "maxTurnTimeouts": 1 }));
    let (st, v) = house
        .post(
            BRIDGE,
            json!({ "config": config, "gameId": GAME, "gameTitle": "Duel" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    let id = serde_json::from_value::<CreatedResponse>(v)
        .unwrap()
        .session_id;
    let mut pids = Vec::new();
    for a in &agents {
        let snap: AgentSnapshot = serde_json::from_value(a.join(&id).await).unwrap();
        pids.push(snap.player_id);
    }
    let mut after = until_game_start(&house, &id).await;
    house
        .ops(
            &id,
            json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] },
                   { "op": "legal_actions", "playerId": pids[1], "actions": ["x"] }]),
        )
        .await;
    // Neither acts: both clocks run out, and the platform ends the game.
    let deadline = Instant::now() + LONG;
    let end = loop {
        let p = house.pending(&id, after, 3.0).await;
        after = max_seq(&p, after);
        if let Some(e) = entries(&p)
            .into_iter()
            .find(|e| e["event"] == "session_end")
        {
            break e;
        }
        assert!(Instant::now() < deadline, "the game never ended");
    };
    assert_eq!(end["result"]["winner"], Value::Null, "{end}");
    assert_eq!(
        end["result"]["forfeitedByAll"],
        json!([pids[0], pids[1]]),
        "{end}"
    );
    // The write that ended it queues a rated game (atomically): this one is not queued,
    // and was not rated either (a rater takes a game off the queue only after rating it).
    let store = &app.store;
    let queued: Option<f64> = redis::cmd("ZSCORE")
        .arg(store.key_in_bucket(store.bucket_of(&id), "ratings:pending"))
        .arg(&id)
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert_eq!(queued, None, "queued for rating");

    // A game they then play is rated, and it is the only one in either history.
    let played = play_duel(&house, [&agents[0], &agents[1]], 0, 0, Duration::ZERO).await;
    let board = leaderboard_until(&anon, "both rated", |v| listed(v).len() == 2).await;
    for (name, wins) in [("Sleepy", 1), ("Drowsy", 0)] {
        let s = standing(&board, name);
        assert_eq!(
            (s["games"].as_u64(), s["draws"].as_u64()),
            (Some(1), Some(0)),
            "{board}"
        );
        assert_eq!(s["wins"], wins, "{board}");
        let agent = s["agent"].as_str().unwrap();
        let page = agent_until(&anon, agent, "its game in the history", |v| {
            v["history"].as_array().is_some_and(|h| !h.is_empty())
        })
        .await;
        let ids: Vec<&str> = page["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["sessionId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [played.as_str()], "{page}");
    }
}
