//! Decision 7: sessions live in Redis, so two API processes serve one game (agents on one,
//! the host on the other), and losing one API process mid-game loses nothing.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::spawn_app_beside;
use crate::rcadia_common::*;

#[tokio::test]
async fn two_api_processes_one_game_and_one_dies() {
    let a = app_with(|_| {}).await;
    let b = spawn_app_beside(&a, fast).await;
    let (host, agents) = cast(&a, 2).await;
    let host = host.on(&b); // the host talks to B, the agents to A
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;

    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["w"] }]),
    )
    .await;
    // A wake-up crosses processes: an agent long-polling on A wakes on the host's publish on B.
    let a0 = agents[0].clone();
    let idc = id.clone();
    let poll = tokio::spawn(async move { (a0.state(&idc, 20.0).await, Instant::now()) });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let (s, woke) = poll.await.unwrap();
    assert_eq!(s["yourTurn"], true, "{s}");
    assert!(woke.duration_since(sent) < Duration::from_secs(1));
    let turn = s["turn"].as_u64().unwrap();
    let (st, v) = agents[0].act(&id, json!("x"), turn).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p)[0]["playerId"], pids[0]);
    after = max_seq(&p, after);

    // Agent 1 long-polls on A when A stops: the poll ends early (shutdown) with a snapshot.
    let a1 = agents[1].clone();
    let idc = id.clone();
    let poll = tokio::spawn(async move {
        let t = Instant::now();
        let r = a1.get(&format!("{AGENT}/{idc}/state?wait=20")).await;
        (r, t.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.stop();
    let ((st, _), took) = poll.await.unwrap();
    assert_eq!(st, 200);
    assert!(
        took < Duration::from_secs(10),
        "the poll outlived shutdown: {took:?}"
    );

    // The agents move to B; nothing was lost.
    let agents: Vec<Client> = agents.iter().map(|c| c.on(&b)).collect();
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["y"] }]),
    )
    .await;
    let s0 = agents[0].state(&id, 0.0).await;
    assert_eq!(s0["lastAction"]["status"], "applied", "{s0}");
    let s1 = agents[1].state(&id, 5.0).await;
    assert_eq!(s1["yourTurn"], true, "{s1}");
    let (st, _) = agents[1]
        .act(&id, json!("y"), s1["turn"].as_u64().unwrap())
        .await;
    assert_eq!(st, 200);
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p)[0]["playerId"], pids[1]);
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[1] } }]),
    )
    .await;
    assert_eq!(agents[0].state(&id, 0.0).await["result"]["winner"], pids[1]);
}

#[tokio::test]
async fn the_surviving_process_fires_the_clocks() {
    let a = app_with(|_| {}).await;
    let b = spawn_app_beside(&a, fast).await;
    let (host, agents) = cast(&a, 2).await;
    let host = host.on(&b);
    let agents: Vec<Client> = agents.iter().map(|c| c.on(&b)).collect();
    let (id, pids, mut after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 0.5, "maxTurnTimeouts": 1 })),
    )
    .await;
    a.stop();
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let t = Instant::now();
    let mut ended = false;
    while !ended && t.elapsed() < Duration::from_secs(15) {
        let p = host.pending(&id, after, 3.0).await;
        after = max_seq(&p, after);
        ended = p["status"] == "finished";
    }
    assert!(ended, "no forfeit with only B's clock firer");
}

#[tokio::test]
async fn concurrent_writers_never_lose_an_update() {
    // Compare-and-set with re-apply: 16 agents join one table at once through two processes.
    let a = app_with(|c| c.sessions.lobby_fill_ms = 60_000).await;
    let b = spawn_app_beside(&a, fast).await;
    let (host, agents) = cast(&a, 16).await;
    let id = host
        .create(
            json!({ "minPlayers": 2, "maxPlayers": 16, "sdkVersion": "2.0.0", "turnTimeout": 0 }),
        )
        .await;
    let mut joins = tokio::task::JoinSet::new();
    for (i, ag) in agents.iter().enumerate() {
        let ag = if i % 2 == 0 { ag.clone() } else { ag.on(&b) };
        let id = id.clone();
        joins.spawn(async move { ag.join(&id).await["seat"].as_u64().unwrap() });
    }
    let mut seats = Vec::new();
    while let Some(s) = joins.join_next().await {
        seats.push(s.unwrap());
    }
    seats.sort_unstable();
    assert_eq!(seats, (0..16).collect::<Vec<u64>>());
    let (_, v) = host.get(&format!("{AGENT}/{id}/public")).await;
    assert_eq!(v["players"].as_array().unwrap().len(), 16);
}

#[tokio::test]
async fn a_killed_horst_api_process_loses_nothing() {
    use crate::harness::HorstProcess;
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
    let mut one = HorstProcess::spawn(&args, &[], data.path());
    let mut two = HorstProcess::spawn(&args, &[], data.path());
    let (addr1, addr2) = (one.wait_listening(), two.wait_listening());
    let store = horst_store::Store::connect(&url, "horst:").await.unwrap();
    let auth = horst_identity::auth::Auth::new(store, &data.path().join("jwt.key"))
        .await
        .unwrap();
    let mk = |addr: std::net::SocketAddr, token: String| Client {
        base: format!("http://{addr}"),
        token,
        http: reqwest::Client::new(),
    };
    let host = mk(
        addr2,
        auth.create_token(&["host".into()], None).await.unwrap().0,
    );
    let mut agents = Vec::new();
    for _ in 0..2 {
        agents.push(mk(
            addr1,
            auth.create_token(&["play".into()], None).await.unwrap().0,
        ));
    }
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    // As an agent does: wait for its turn. The host published through the other process,
    // and this one may answer from its record until the wake-up reaches it (seen under load:
    // the turn read was the one before, and the action a 409).
    let turn = agents[0].state(&id, 5.0).await["turn"].as_u64().unwrap();
    let (st, v) = agents[0].act(&id, json!("x"), turn).await;
    assert_eq!(st, 200, "{v}");
    // SIGKILL: no graceful anything.
    one.signal(libc::SIGKILL);
    one.wait_exit(Duration::from_secs(10)).expect("killed");
    let agents: Vec<Client> = agents
        .into_iter()
        .map(|c| Client {
            base: format!("http://{addr2}"),
            ..c
        })
        .collect();
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p)[0]["playerId"], pids[0], "{p}");
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["y"] }]),
    )
    .await;
    assert_eq!(
        agents[0].state(&id, 0.0).await["lastAction"]["status"],
        "applied"
    );
    assert_eq!(agents[1].state(&id, 0.0).await["yourTurn"], true);
    drop(two);
}
