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
