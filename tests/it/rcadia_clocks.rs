//! Section 3 (host liveness) and 4 (clocks): strikes and forfeits with short turn timeouts
//! fired by the clock firer, the clock pausing while the host is away, and a host gone.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::eventually;
use crate::rcadia_common::*;

#[tokio::test]
async fn strikes_then_forfeit_on_timeout() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 0.5, "maxTurnTimeouts": 2 })),
    )
    .await;
    let t0 = Instant::now();
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    assert!(s["deadline"].is_string(), "{s}");
    assert_eq!(s["maxStrikes"], 2);

    // The host long-polls; the clock firer queues the strikes.
    let mut timeouts = Vec::new();
    let mut ended = None;
    while t0.elapsed() < Duration::from_secs(20) && ended.is_none() {
        let p = host.pending(&id, after, 3.0).await;
        after = max_seq(&p, after);
        for e in entries(&p) {
            if e["type"] == "timeout" {
                timeouts.push((e.clone(), t0.elapsed()));
            }
            if e["event"] == "session_end" {
                ended = Some(e.clone());
            }
        }
    }
    assert_eq!(timeouts.len(), 2, "{timeouts:?}");
    let (first, at1) = &timeouts[0];
    assert_eq!(first["playerId"], pids[0]);
    assert_eq!(
        (first["strike"].as_u64(), first["final"].as_bool()),
        (Some(1), Some(false))
    );
    assert_eq!(timeouts[1].0["final"], true);
    // Generous margins: CI shares two cores.
    assert!(
        *at1 >= Duration::from_millis(450),
        "first strike at {at1:?}"
    );
    assert!(*at1 < Duration::from_secs(3), "first strike at {at1:?}");
    let end = ended.expect("session_end");
    assert_eq!(end["reason"], "timeout");
    assert_eq!(end["result"]["winner"], pids[1]);
    assert_eq!(end["result"]["forfeitedBy"], pids[0]);
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished");
    assert_eq!(s["result"]["reason"], "timeout");
}

#[tokio::test]
async fn the_clock_pauses_while_the_host_is_away() {
    let app = app_with(|c| c.sessions.host_alive_seconds = 1).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 2, "maxTurnTimeouts": 2 })),
    )
    .await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    // The host goes quiet: after ~1 s it is not alive, and the clock stops.
    let paused = eventually(Duration::from_secs(10), async || {
        let s = agents[1].state(&id, 0.0).await;
        s["deadline"].is_null() && s["waitingFor"] == "host"
    })
    .await;
    assert!(paused, "the clock kept running without a host");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["strikes"], 0, "struck while the host was away: {s}");
    assert_eq!(s["status"], "active");

    // The host is back (a long-poll keeps it alive): the clock resumes and strikes.
    let t = Instant::now();
    let mut struck = false;
    let mut after = after;
    while t.elapsed() < Duration::from_secs(15) && !struck {
        let p = host.pending(&id, after, 2.0).await;
        after = max_seq(&p, after);
        struck = entries(&p).iter().any(|e| e["type"] == "timeout");
    }
    assert!(struck, "no strike after the host came back");
    assert!(
        t.elapsed() >= Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

/// A host waiting on a long-poll longer than its liveness window stays alive: the poll's
/// opening is not stored at first (a poll answered soon needs it stored only when it ends),
/// but a poll still waiting once half the window since the host's last stored sign of life
/// has passed is stored as open, so the clock keeps running while the host waits.
#[tokio::test]
async fn a_host_on_a_long_poll_stays_alive_past_its_liveness_window() {
    let app = app_with(|c| c.sessions.host_alive_seconds = 3).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({ "turnTimeout": 60 }))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let seen = Instant::now();
    let poll = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move { host.pending(&id, after, 8.0).await })
    };
    // Past the 3 s the host's last stored sign of life (the ops) kept it alive.
    tokio::time::sleep_until((seen + Duration::from_secs(5)).into()).await;
    let s = agents[1].state(&id, 0.0).await;
    assert!(
        !s["deadline"].is_null() && s["waitingFor"] != "host",
        "the host lapsed while its poll was open: {s}"
    );
    let p = poll.await.unwrap();
    assert!(entries(&p).is_empty(), "{p}");
    assert_eq!(agents[0].state(&id, 0.0).await["strikes"], 0);
}

#[tokio::test]
async fn a_host_gone_ends_its_sessions() {
    let app = app_with(|c| {
        c.sessions.host_alive_seconds = 1;
        c.sessions.host_gone_seconds = 2;
    })
    .await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    // An agent long-polls; the host never comes back.
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "active");
    let done = eventually(Duration::from_secs(15), async || {
        agents[0].state(&id, 1.0).await["status"] == "finished"
    })
    .await;
    assert!(done, "the session outlived its host");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["result"]["reason"], "host_disconnected", "{s}");
    assert_eq!(s["result"]["winner"], json!(null));
    assert_eq!(
        s["nextSessionId"],
        json!(null),
        "no rematch after host_disconnected"
    );
}

/// A host long-poll whose client went away (a host tab closed mid-poll) stops keeping the host
/// alive when its connection closes: the clock pauses `host_alive_seconds` later. It used to
/// count as open until its `wait` (25 s) ran out, so the agent on turn kept losing clock time
/// to a host that was gone. Nothing is taken from the queue by the abandoned poll.
#[tokio::test]
async fn a_host_poll_whose_client_left_stops_keeping_the_host_alive() {
    let app = app_with(|c| c.sessions.host_alive_seconds = 1).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({ "turnTimeout": 60 }))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let url = format!(
        "{}{BRIDGE}/{id}/pending-actions?after={after}&wait=25",
        host.base
    );
    let gone = host
        .http
        .get(url)
        .bearer_auth(&host.token)
        .timeout(Duration::from_millis(500))
        .send()
        .await;
    assert!(gone.is_err(), "the poll should still have been open");
    // Well before the abandoned poll's 25 s would have run out.
    let paused = eventually(Duration::from_secs(15), async || {
        let s = agents[1].state(&id, 0.0).await;
        s["deadline"].is_null() && s["waitingFor"] == "host"
    })
    .await;
    assert!(
        paused,
        "the clock kept running for a host whose poll was abandoned"
    );
    let s = agents[0].state(&id, 0.0).await;
    let turn = s["turn"].as_u64().expect("turn");
    let (st, v) = agents[0].act(&id, json!("x"), turn).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    assert!(
        entries(&p).iter().any(|e| e["actionId"] == v["actionId"]),
        "the next poll gets the action: {p}"
    );
}
