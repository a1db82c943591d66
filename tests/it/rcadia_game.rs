//! Sections 1, 3, 4, 5 and 7: seats, turns, the 409 codes, outcomes, observations, errors,
//! simultaneous and not-turn-based games, and long-poll timing, over HTTP.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::rcadia_common::*;

#[tokio::test]
async fn a_whole_sequential_game() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 3).await;
    let id = host.create(two_player(json!({}))).await;
    assert!(id.starts_with("ses_") && id.len() == 16, "{id}");

    // Seats in join order; joining again is idempotent; a full table starts at once, so a
    // third agent finds it in progress.
    let s0 = agents[0].join(&id).await;
    assert_eq!(s0["seat"], 0);
    assert_eq!(s0["players"][0]["asName"], "Agent0");
    let again = agents[0].join(&id).await;
    assert_eq!(again["playerId"], s0["playerId"]);
    let s1 = agents[1].join(&id).await;
    assert_eq!(s1["seat"], 1);
    let (st, v) = agents[2]
        .post(&format!("{AGENT}/{id}/join"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("in_progress")), "{v}");
    let (p0, p1) = (
        s0["playerId"].as_str().unwrap(),
        s1["playerId"].as_str().unwrap(),
    );

    // The host gets game_start with the players in seat order.
    let p = host.pending(&id, 0, 5.0).await;
    let start = &entries(&p)[0];
    assert_eq!(start["type"], "system");
    assert_eq!(start["event"], "game_start");
    assert_eq!(start["players"], json!([p0, p1]));
    let mut after = max_seq(&p, 0);

    // The host publishes p0's turn.
    host.ops(
        &id,
        json!([
            { "op": "state", "state": { "board": "start" } },
            { "op": "legal_actions", "playerId": p0, "actions": [{ "type": "move", "to": "e4" }] }
        ]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    assert_eq!(s["status"], "active");
    let turn = s["turn"].as_u64().unwrap();
    assert!(turn >= 1);
    assert_eq!(s["legalActions"], json!([{ "type": "move", "to": "e4" }]));
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], false);
    assert_eq!(s["legalActions"], json!(null));
    assert_eq!(s["waitingFor"], "opponent");

    // The 409s, each with the caller's snapshot; nothing reaches the host.
    let (st, v) = agents[1].act(&id, json!({"type": "move"}), turn).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("not_your_turn")),
        "{v}"
    );
    assert_eq!(v["snapshot"]["playerId"], p1);
    let (st, v) = agents[0].act(&id, json!({"type": "move"}), turn + 5).await;
    assert_eq!((st, v["code"].as_str()), (409, Some("stale_turn")), "{v}");
    let (st, v) = agents[0]
        .act(&id, json!({"type": "__game_start__"}), turn)
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("reserved_action")),
        "{v}"
    );
    let (st, v) = agents[0]
        .act(&id, json!({"type": "move", "to": "e4"}), turn)
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["accepted"], true);
    assert_eq!(v["outcome"], "pending");
    let a0 = v["actionId"].as_str().unwrap().to_string();
    let (st, v) = agents[0].act(&id, json!({"type": "move"}), turn).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("action_pending")),
        "{v}"
    );
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], false);
    assert_eq!(s["waitingFor"], "host");

    // Delivered once, with its actionId; acknowledged by `after`.
    let p = host.pending(&id, after, 5.0).await;
    let e = entries(&p);
    assert_eq!(e.len(), 1, "{p}");
    assert_eq!(e[0]["type"], "action");
    assert_eq!(e[0]["playerId"], p0);
    assert_eq!(e[0]["actionId"], a0.as_str());
    assert_eq!(e[0]["action"], json!({"type": "move", "to": "e4"}));
    after = max_seq(&p, after);

    // Next turn: p0's action is applied, p1 is on turn with a higher `turn`.
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": p1, "actions": [{ "type": "move", "to": "e5" }] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "applied", "{s}");
    assert_eq!(s["lastAction"]["actionId"], a0.as_str());
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true);
    let turn1 = s["turn"].as_u64().unwrap();
    assert!(turn1 > turn);

    // p1's action is rejected: back on turn, same legal actions, the rejection listed.
    let (st, v) = agents[1]
        .act(&id, json!({"type": "move", "to": "e6"}), turn1)
        .await;
    assert_eq!(st, 200, "{v}");
    let a1 = v["actionId"].as_str().unwrap().to_string();
    let p = host.pending(&id, after, 5.0).await;
    after = max_seq(&p, after);
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/reject-action"),
            json!({ "playerId": p1, "reason": "illegal move", "actionId": a1 }),
        )
        .await;
    assert_eq!((st, v["ok"].as_bool()), (200, Some(true)), "{v}");
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    assert_eq!(s["turn"].as_u64(), Some(turn1));
    assert_eq!(s["lastAction"]["status"], "rejected");
    assert_eq!(s["lastAction"]["reason"], "illegal move");
    assert_eq!(s["rejections"][0]["reason"], "illegal move");
    assert_eq!(s["legalActions"], json!([{ "type": "move", "to": "e5" }]));

    // `/action?wait` answers with the outcome once the game publishes the next turn.
    let a1c = agents[1].clone();
    let idc = id.clone();
    let waiting = tokio::spawn(async move {
        a1c.post(
            &format!("{AGENT}/{idc}/action?wait=10"),
            json!({ "action": {"type": "move", "to": "e5"}, "turn": turn1 }),
        )
        .await
    });
    let mut delivered = false;
    for _ in 0..20 {
        let p = host.pending(&id, after, 2.0).await;
        after = max_seq(&p, after);
        if !entries(&p).is_empty() {
            delivered = true;
            break;
        }
    }
    assert!(delivered);
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": p0, "actions": [{ "type": "move" }] }]),
    )
    .await;
    let (st, v) = waiting.await.unwrap();
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["outcome"], "applied", "{v}");
    assert_eq!(v["snapshot"]["playerId"], p1);

    // The game ends; everyone sees the result; actions are refused with `finished`.
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/end"),
            json!({ "result": { "winner": p1 } }),
        )
        .await;
    assert_eq!((st, v["ok"].as_bool()), (200, Some(true)), "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished");
    assert_eq!(s["result"]["winner"], p1);
    assert_eq!(s["yourTurn"], false);
    let (st, v) = agents[0].act(&id, json!({"type": "move"}), 99).await;
    assert_eq!((st, v["code"].as_str()), (409, Some("finished")), "{v}");

    // Events log and the public view (no legal actions or observations).
    let (st, v) = agents[0].get(&format!("{AGENT}/{id}/events?since=0")).await;
    assert_eq!(st, 200);
    let kinds: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert!(
        kinds.contains(&"game_start") && kinds.contains(&"game_over"),
        "{kinds:?}"
    );
    // Indices run from 0 without gaps (the log is stored apart from the record), and `since`
    // skips what was read.
    let events = v["events"].as_array().unwrap();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["index"].as_u64(), Some(i as u64), "{v}");
    }
    assert_eq!(v["next"].as_u64(), Some(events.len() as u64));
    let (_, later) = agents[0]
        .get(&format!("{AGENT}/{id}/events?since={}", events.len() - 1))
        .await;
    assert_eq!(later["events"].as_array().unwrap().len(), 1, "{later}");
    let anon = Client {
        token: String::new(),
        ..host.clone()
    };
    let (st, v) = anon.get(&format!("{AGENT}/{id}/public")).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"], "finished");
    assert!(v.get("legalActions").is_none());
}

#[tokio::test]
async fn errors_404_410_403_401() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    agents[0].join(&id).await;

    // Unknown id with the current boot tag: 404; another epoch's tag: 410.
    let tag = &id[4..8];
    let unknown = format!("ses_{tag}ffffffff");
    let (st, v) = agents[0].get(&format!("{AGENT}/{unknown}/state")).await;
    assert_eq!((st, v["code"].as_str()), (404, Some("not_found")), "{v}");
    let other_tag = if tag == "0000" { "0001" } else { "0000" };
    let lost = format!("ses_{other_tag}12345678");
    let (st, v) = agents[0].get(&format!("{AGENT}/{lost}/state")).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (410, Some("server_restarted")),
        "{v}"
    );
    let (st, _) = agents[0].get(&format!("{AGENT}/not-an-id/state")).await;
    assert_eq!(st, 404);

    // Not a player, not the host, missing scope, no credential.
    let (st, v) = agents[1].get(&format!("{AGENT}/{id}/state")).await;
    assert_eq!((st, v["code"].as_str()), (403, Some("not_a_player")), "{v}");
    let other_host = Client {
        token: app
            .auth
            .create_token(&["host".into()], None)
            .await
            .unwrap()
            .0,
        ..host.clone()
    };
    let (st, v) = other_host
        .post(&format!("{BRIDGE}/{id}/ops"), json!({ "ops": [] }))
        .await;
    assert_eq!((st, v["code"].as_str()), (403, Some("not_the_host")), "{v}");
    let (st, v) = agents[0].post(BRIDGE, json!({ "config": {} })).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (403, Some("missing_scope")),
        "{v}"
    );
    let (st, v) = host.post(&format!("{AGENT}/{id}/join"), json!({})).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (403, Some("missing_scope")),
        "{v}"
    );
    // A body that is not an object seated the caller all the same.
    for body in [json!([1]), json!("x"), json!(42)] {
        let (st, v) = agents[1]
            .post(&format!("{AGENT}/{id}/join"), body.clone())
            .await;
        assert_eq!(
            (st, v["code"].as_str()),
            (400, Some("bad_request")),
            "{body}: {v}"
        );
    }
    let anon = Client {
        token: String::new(),
        ..host.clone()
    };
    let (st, _) = anon.post(BRIDGE, json!({ "config": {} })).await;
    assert_eq!(st, 401);
    // Public endpoints need nothing.
    let (st, v) = anon.get(&format!("{AGENT}/available")).await;
    assert_eq!(st, 200);
    assert_eq!(v["sessions"][0]["sessionId"], id.as_str());
    assert_eq!(v["sessions"][0]["host"], "agent");
    // Bad bodies are JSON errors too.
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/ops"), json!({ "nope": 1 }))
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
}

#[tokio::test]
async fn observations_are_private() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([
            { "op": "state", "state": { "public": true } },
            { "op": "observation", "playerId": pids[0], "observation": { "hand": ["A"] } },
            { "op": "legal_actions", "playerId": pids[0], "actions": [1] }
        ]),
    )
    .await;
    assert_eq!(
        agents[0].state(&id, 0.0).await["state"],
        json!({ "hand": ["A"] })
    );
    assert_eq!(
        agents[1].state(&id, 0.0).await["state"],
        json!({ "public": true })
    );
    let (_, v) = host.get(&format!("{AGENT}/{id}/public")).await;
    assert_eq!(v["state"], json!({ "public": true }));
    assert_eq!(v["onTurnSeats"], json!([0]));
}

#[tokio::test]
async fn simultaneous_actions_are_released_together() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(
        &host,
        &agents,
        two_player(json!({ "simultaneous": true, "gameType": "rps" })),
    )
    .await;
    host.ops(
        &id,
        json!([
            { "op": "legal_actions", "playerId": pids[0], "actions": ["rock", "paper"] },
            { "op": "legal_actions", "playerId": pids[1], "actions": ["rock", "paper"] }
        ]),
    )
    .await;
    let s0 = agents[0].state(&id, 0.0).await;
    let s1 = agents[1].state(&id, 0.0).await;
    assert_eq!(
        (s0["yourTurn"].as_bool(), s1["yourTurn"].as_bool()),
        (Some(true), Some(true))
    );
    let turn = s0["turn"].as_u64().unwrap();
    let (st, _) = agents[0].act(&id, json!("rock"), turn).await;
    assert_eq!(st, 200);
    assert_eq!(agents[0].state(&id, 0.0).await["waitingFor"], "opponent");
    // Held: the host sees nothing yet.
    let p = host.pending(&id, after, 0.3).await;
    assert!(entries(&p).is_empty(), "{p}");
    let (st, _) = agents[1].act(&id, json!("paper"), turn).await;
    assert_eq!(st, 200);
    let p = host.pending(&id, after, 5.0).await;
    let e = entries(&p);
    assert_eq!(e.len(), 2, "{p}");
    after = max_seq(&p, after);
    let _ = after;
    let players: Vec<_> = e.iter().map(|x| x["playerId"].clone()).collect();
    assert!(players.contains(&json!(pids[0])) && players.contains(&json!(pids[1])));
}

#[tokio::test]
async fn not_turn_based_games_let_anyone_holding_actions_act() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) =
        started(&host, &agents, two_player(json!({ "turnBased": false }))).await;
    // Before any legal actions everyone may act.
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["go"] }]),
    )
    .await;
    // Not on turn in a turn-based sense, but turn numbers are not enforced.
    let (st, v) = agents[1].act(&id, json!("go"), 0).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p)[0]["playerId"], pids[1]);
}

#[tokio::test]
async fn unconfirmed_when_the_game_stays_silent() {
    let app = app_with(|c| c.sessions.unconfirmed_seconds = 1).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/{id}/action"),
            json!({ "action": "x", "turn": turn }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p).len(), 1);
    // The game says nothing: after ~1 s the action is unconfirmed and p0 is back on turn.
    let s = agents[0].state(&id, 5.0).await;
    assert_eq!(s["lastAction"]["status"], "unconfirmed", "{s}");
    assert_eq!(s["yourTurn"], true);
}

#[tokio::test]
async fn long_polls_wake_within_milliseconds_and_wait_when_nothing_happens() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["y"] }]),
    )
    .await;

    // Nothing happens: /state?wait=1 returns after about 1 s, not earlier.
    let t = Instant::now();
    let s = agents[0].state(&id, 1.0).await;
    let idle = t.elapsed();
    assert_eq!(s["yourTurn"], false);
    assert!(
        idle >= Duration::from_millis(950),
        "returned after {idle:?}"
    );
    assert!(idle < Duration::from_secs(5), "returned after {idle:?}");

    // The waking event (legal actions for p0) ends the poll at once.
    let a0 = agents[0].clone();
    let idc = id.clone();
    let poll = tokio::spawn(async move {
        let s = a0.state(&idc, 20.0).await;
        (s, Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let published = Instant::now();
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let (s, woke) = poll.await.unwrap();
    let latency = woke.saturating_duration_since(published);
    assert_eq!(s["yourTurn"], true, "{s}");
    eprintln!("state long-poll woke {latency:?} after the publish");
    assert!(latency < Duration::from_secs(1), "woke after {latency:?}");

    // The host's long-poll wakes on an action just as fast.
    let h = host.clone();
    let idc = id.clone();
    let after = 1000; // nothing past this yet: any new entry qualifies below
    let _ = after;
    let hp = tokio::spawn(async move {
        let p = h.pending(&idc, 1, 20.0).await;
        (p, Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let turn = s["turn"].as_u64().unwrap();
    let sent = Instant::now();
    let (st, _) = agents[0].act(&id, json!("x"), turn).await;
    assert_eq!(st, 200);
    let (p, woke) = hp.await.unwrap();
    assert_eq!(entries(&p)[0]["type"], "action", "{p}");
    let latency = woke.saturating_duration_since(sent);
    eprintln!("host long-poll woke {latency:?} after the action");
    assert!(latency < Duration::from_secs(1), "woke after {latency:?}");
}

#[tokio::test]
async fn since_versions_and_not_active() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    agents[0].join(&id).await;
    // Waiting table: actions are refused with `not_active`.
    let (st, v) = agents[0].act(&id, json!("x"), 0).await;
    assert_eq!((st, v["code"].as_str()), (409, Some("not_active")), "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["waitingFor"], "players");
    let version = s["version"].as_u64().unwrap();

    // `/public?since=v&wait` and `/state?since=v&wait` both return on the next change.
    let spectator = Client {
        token: String::new(),
        ..host.clone()
    };
    let idc = id.clone();
    let watch = tokio::spawn(async move {
        spectator
            .get(&format!("{AGENT}/{idc}/public?since={version}&wait=20"))
            .await
    });
    let a0 = agents[0].clone();
    let idc = id.clone();
    let mine = tokio::spawn(async move {
        a0.get(&format!("{AGENT}/{idc}/state?since={version}&wait=20"))
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let t = Instant::now();
    agents[1].join(&id).await;
    let (st, v) = watch.await.unwrap();
    assert_eq!(st, 200);
    assert!(v["version"].as_u64().unwrap() > version, "{v}");
    assert_eq!(v["players"].as_array().unwrap().len(), 2);
    let (st, v) = mine.await.unwrap();
    assert_eq!(st, 200);
    assert!(v["version"].as_u64().unwrap() > version, "{v}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // An old `since` returns at once.
    let (_, v) = host
        .get(&format!("{AGENT}/{id}/public?since=0&wait=20"))
        .await;
    assert!(v["version"].as_u64().unwrap() > version);
}

/// The turn opens with the game's first publish after game_start (nobody is on turn before,
/// and `/action` is refused without reaching the game); a rejection's reason reaches only the
/// rejected player's `/events`; after `host_left` there is no rematch.
#[tokio::test]
async fn the_first_publish_opens_the_turn_and_rejections_stay_private() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    for a in &agents {
        let s = a.state(&id, 0.0).await;
        assert_eq!(s["yourTurn"], false, "{s}");
        assert_eq!(s["waitingFor"], "host", "{s}");
        assert_eq!(s["legalActions"], json!(null), "{s}");
        let (st, v) = a.act(&id, json!("e2e4"), 0).await;
        assert_eq!(
            (st, v["code"].as_str()),
            (409, Some("not_your_turn")),
            "{v}"
        );
        assert_eq!(v["snapshot"]["waitingFor"], "host", "{v}");
    }
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "nothing reached the game: {p}");

    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e2e4"] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        (s["yourTurn"].clone(), s["turn"].clone()),
        (json!(true), json!(1))
    );
    let (st, v) = agents[0].act(&id, json!("e2e5"), 1).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    let action_id = entries(&p)[0]["actionId"].clone();
    host.ops(
        &id,
        json!([{ "op": "reject", "playerId": pids[0], "reason": "your king is in check", "actionId": action_id }]),
    )
    .await;
    let (_, mine) = agents[0].get(&format!("{AGENT}/{id}/events")).await;
    assert!(mine.to_string().contains("your king is in check"), "{mine}");
    let (_, theirs) = agents[1].get(&format!("{AGENT}/{id}/events")).await;
    assert!(!theirs.to_string().contains("check"), "{theirs}");
    assert!(theirs.to_string().contains("rejected"), "{theirs}");

    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": null }, "reason": "host_left" }]),
    )
    .await;
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("host_left")), "{v}");
}

/// Bodies over the limits are `413 { error, code: "too_large" }` JSON, like every other
/// RCADIA error; so is a state over its own limit inside an acceptable body.
#[tokio::test]
async fn bodies_over_the_limits_are_413_json() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e2e4"] }]),
    )
    .await;
    let big = |n: usize| json!("x".repeat(n));
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/{id}/action"),
            json!({ "action": big(20 * 1024), "turn": 1 }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (413, Some("too_large")), "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("size limit of 16 KiB"),
        "{v}"
    );
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "nothing was accepted: {s}");

    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/ops"),
            json!({ "ops": [{ "op": "state", "state": big(2 * 1024 * 1024) }] }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (413, Some("too_large")), "{v}");
    assert!(v["error"].as_str().unwrap().contains("1 MiB"), "{v}");
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/ops"),
            json!({ "ops": [{ "op": "state", "state": big(100 * 1024) }] }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (413, Some("too_large")), "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("ops[0]: the state is "),
        "{v}"
    );
    let (st, v) = host
        .call(
            "PATCH",
            &format!("{BRIDGE}/{id}/observation"),
            Some(json!({ "playerId": pids[1], "observation": big(100 * 1024) })),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (413, Some("too_large")), "{v}");
    // Within the limits all is well.
    host.ops(&id, json!([{ "op": "state", "state": big(60 * 1024) }]))
        .await;
}

/// The operator ends a live table (issue 31): with a reason, over the REST admin API; the
/// players see the game end with it, no next round opens, a second end is a conflict, and
/// the audit trail names the admin token that acted.
#[tokio::test]
async fn the_operator_ends_a_live_table_with_a_reason() {
    const ADMIN: &str = "table-end-admin-token-0123456789abcdef";
    let app = app_with(|c| c.gateway.admin_token = ADMIN.into()).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    let http = reqwest::Client::new();
    let end = |token: &'static str, reason: &'static str| {
        http.post(app.url(&format!("/api/admin/tables/{id}/end")))
            .bearer_auth(token)
            .header("x-operator", "olga")
            .json(&json!({ "reason": reason }))
            .send()
    };
    let r = end("not-the-admin-token", "weg damit").await.unwrap();
    assert_eq!(r.status(), 401);
    let r = end(ADMIN, "   ").await.unwrap();
    assert_eq!(r.status(), 400);
    let r = end(ADMIN, "abusive names").await.unwrap();
    assert_eq!(r.status(), 200);
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(v["sessionId"], id.as_str());

    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["result"]["reason"], "ended_by_operator", "{s}");
    assert_eq!(s["result"]["message"], "abusive names", "{s}");
    // No next round opens by itself (autoRematch is on).
    tokio::time::sleep(Duration::from_millis(600)).await;
    let s = agents[0].state(&id, 0.0).await;
    assert!(s["nextSessionId"].is_null(), "{s}");
    // Nor when the host (a game's `rematch()`, the house page) asks for one.
    let (st, v) = host
        .call("POST", &format!("{BRIDGE}/{id}/rematch"), Some(json!({})))
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("ended_by_operator")),
        "{v}"
    );

    let r = end(ADMIN, "again").await.unwrap();
    assert_eq!(r.status(), 409);
    let audit = horst_operator::audit_log(&app.store, 0, 10).await.unwrap();
    let e = audit
        .iter()
        .find(|e| e.action == "table_end")
        .expect("audited");
    assert_eq!(e.target, id);
    assert!(e.who.starts_with("api:olga@"), "{}", e.who);
    assert_eq!(e.detail["reason"], "abusive names");
}

/// A started two-player game in which the first agent played `action`, queued for the host
/// (not delivered yet): the app, host, agents, session id, players' ids and host's `after`.
async fn a_move_queued(
    action: &str,
) -> (
    crate::harness::TestApp,
    Client,
    Vec<Client>,
    String,
    Vec<String>,
    u64,
) {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": [action] }]),
    )
    .await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let (st, v) = agents[0].act(&id, json!(action), turn).await;
    assert_eq!(st, 200, "{v}");
    (app, host, agents, id, pids, after)
}

/// A method a route does not take is answered in the API's JSON error shape (405 `method`,
/// with `Allow`); it was an empty 405. HEAD is refused under `/api/` before any handler runs:
/// a HEAD of `pending-actions` delivered the queued action and threw the answer away, so the
/// host never saw it.
#[tokio::test]
async fn wrong_methods_are_json_405s_and_a_head_changes_nothing() {
    let (app, host, _agents, id, _pids, after) = a_move_queued("x").await;

    let http = reqwest::Client::new();
    let r = http
        .head(app.url(&format!("{BRIDGE}/{id}/pending-actions?after={after}")))
        .bearer_auth(&host.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    assert_eq!(r.headers()["allow"], "GET");
    let p = host.pending(&id, after, 0.0).await;
    assert!(
        entries(&p).iter().any(|e| e["action"] == "x"),
        "the HEAD took the action: {p}"
    );

    for (method, path) in [
        ("GET", format!("{AGENT}/{id}/action")),
        ("POST", format!("{AGENT}/available")),
        ("DELETE", "/api/admin/accounts".to_string()),
        ("PUT", format!("{BRIDGE}/{id}/ops")),
    ] {
        let r = http
            .request(method.parse().unwrap(), app.url(&path))
            .bearer_auth(&host.token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 405, "{method} {path}");
        assert!(r.headers().contains_key("allow"), "{method} {path}");
        let v: serde_json::Value = r.json().await.unwrap_or_default();
        assert_eq!(v["code"], "method", "{method} {path}: {v}");
        // The message names the guide of the path's readers (the admin API's is the
        // operators' guide; it named the agents' guides for every path).
        let guide = if path.starts_with("/api/admin/") {
            "docs/operators.md"
        } else if path.starts_with(BRIDGE) {
            "docs/hosts.md"
        } else {
            "docs/agents-play.md"
        };
        let message = v["error"].as_str().unwrap_or_default();
        assert!(message.contains(guide), "{method} {path}: {v}");
        assert!(!message.contains("docs/agents.md"), "{method} {path}: {v}");
    }

    // A HEAD is answered what the route answers any method it does not take: its own
    // `Allow` (it was `GET` everywhere, even where GET is not taken either), and 404 on a
    // path that does not exist. The API's `Allow` never lists HEAD, which it refuses.
    for (path, status, allow) in [
        (format!("{AGENT}/{id}/action"), 405, Some("POST")),
        ("/api/mcp".to_string(), 405, Some("POST")),
        ("/api/agent-keys".to_string(), 405, Some("POST")),
        (format!("{AGENT}/{id}/state"), 405, Some("GET")),
        ("/api/no-such-thing".to_string(), 404, None),
    ] {
        let r = http
            .head(app.url(&path))
            .bearer_auth(&host.token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), status, "HEAD {path}");
        assert_eq!(
            r.headers().get("allow").and_then(|v| v.to_str().ok()),
            allow,
            "HEAD {path}"
        );
    }
    let r = http
        .post(app.url(&format!("{AGENT}/{id}/state")))
        .bearer_auth(&host.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    assert_eq!(r.headers()["allow"], "GET");
    // Outside the API too, a wrong method gets the error shape with its code.
    let r = http.post(app.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 405);
    let v: serde_json::Value = r.json().await.unwrap_or_default();
    assert_eq!(v["code"], "method", "POST /healthz: {v}");
}

/// A host's `after` can acknowledge only what it was given: one past the entries delivered
/// (a host's bug) no longer drops an agent's action queued meanwhile, which stayed pending,
/// unseen by the game, with no clock, until the game ended.
#[tokio::test]
async fn an_after_beyond_what_was_delivered_drops_nothing_undelivered() {
    let (_app, host, _agents, id, pids, after) = a_move_queued("e4").await;
    // Acknowledges far past anything it was given...
    let got = host.pending(&id, after + 100, 0.0).await;
    let actions = got["actions"].as_array().unwrap();
    assert!(
        actions.iter().any(|e| e["playerId"] == pids[0].as_str()),
        "the agent's action was dropped unseen: {got}"
    );
}

/// A reject that comes after the turn moved on (the action was resolved `applied` by the
/// next publish) is no rejection of the turn shown now: it was recorded in the new turn's
/// `rejections`, beside `lastAction.status: applied`, before the player had acted in it.
#[tokio::test]
async fn a_late_reject_of_an_applied_action_is_not_a_rejection_of_the_next_turn() {
    let (_app, host, agents, id, pids, after) = a_move_queued("e4").await;
    let p = host.pending(&id, after, 5.0).await;
    let action_id = entries(&p)[0]["actionId"].clone();
    // The game moves on (the action is applied), then says no to it after all.
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["e5"] }]),
    )
    .await;
    host.ops(
        &id,
        json!([{ "op": "reject", "playerId": pids[0], "reason": "late", "actionId": action_id }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "applied", "{s}");
    assert!(
        s["rejections"].as_array().is_none_or(|r| r.is_empty()),
        "a rejection in a turn the player has not acted in: {s}"
    );
}

/// horst's `batchId` on `/ops`: a host whose answer was lost resends the batch whole with
/// the same id, and it is applied once. Without the id the resent `legal_actions` would move
/// the turn again and mark the action that reached the game in between as applied.
#[tokio::test]
async fn a_resent_ops_batch_is_applied_once() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    let path = format!("{BRIDGE}/{id}/ops");
    let batch = json!({
        "batchId": "7f3c9a2e-0b1d-4c5e-8f6a-1234567890ab",
        "ops": [{ "op": "legal_actions", "playerId": pids[0], "actions": ["e4"] }]
    });
    let (st, first) = host.post(&path, batch.clone()).await;
    assert_eq!(st, 200, "{first}");
    // The agent acts and the host receives the action before resending.
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let (st, v) = agents[0].act(&id, json!("e4"), turn).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p).len(), 1, "{p}");
    let after_action = agents[0].state(&id, 0.0).await;

    let (st, again) = host.post(&path, batch.clone()).await;
    assert_eq!(st, 200, "{again}");
    assert_eq!(again["ok"], true);
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        s["version"], after_action["version"],
        "the resend moved the version: {s}"
    );
    assert_eq!(s["turn"], turn, "{s}");
    assert_ne!(s["lastAction"]["status"], "applied", "{s}");
    assert_eq!(again["version"], s["version"], "{again}");

    // A new batch (another id) applies: the game moves on.
    let (st, v) = host
        .post(
            &path,
            json!({ "batchId": "b_2", "ops": [{ "op": "legal_actions", "playerId": pids[1], "actions": ["e5"] }] }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "applied", "{s}");

    // A batchId out of the rule is refused naming it, and nothing is applied.
    for bad in [json!(""), json!("x".repeat(65)), json!("a/b"), json!(12)] {
        let (st, v) = host
            .post(
                &path,
                json!({ "batchId": bad, "ops": [{ "op": "state", "state": 1 }] }),
            )
            .await;
        assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
        let m = v["error"].as_str().unwrap_or_default();
        assert!(m.contains("batchId") && m.contains("[A-Za-z0-9_-]"), "{v}");
    }
    assert_ne!(agents[0].state(&id, 0.0).await["state"], json!(1));
}

/// How many of `ids` `/available` lists.
async fn listed(client: &Client, ids: &[&str]) -> usize {
    let (st, v) = client.get(&format!("{AGENT}/available")).await;
    assert_eq!(st, 200, "{v}");
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| ids.contains(&e["sessionId"].as_str().unwrap_or_default()))
        .count()
}

/// A create whose answer was lost, sent again with its `idempotencyKey` (horst's extension),
/// is answered with the session the first one made: the same status and body, no second
/// table. Without the key the resend made a second session, and the first was listed as an
/// open table until its host counted as gone (90 s).
#[tokio::test]
async fn a_create_resent_with_its_idempotency_key_makes_one_session() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let body = |key: &str| {
        json!({ "config": two_player(json!({})), "gameId": "chess", "gameTitle": "Chess",
                "idempotencyKey": key })
    };
    let (st, first) = host.post(BRIDGE, body("k_1")).await;
    assert_eq!(st, 201, "{first}");
    let (st, again) = host.post(BRIDGE, body("k_1")).await;
    assert_eq!((st, &again), (201, &first));
    let id = first["sessionId"].as_str().unwrap();
    assert_eq!(listed(&host, &[id]).await, 1);

    // Two at once: one session, both answered with it.
    let (a, b) = tokio::join!(
        host.post(BRIDGE, body("k_2")),
        host.post(BRIDGE, body("k_2"))
    );
    assert_eq!((a.0, b.0), (201, 201), "{a:?} {b:?}");
    assert_eq!(a.1, b.1);
    assert_ne!(
        a.1["sessionId"], first["sessionId"],
        "another key, another session"
    );

    // The same key with another body: refused, and the key's session stays the one.
    let mut other = body("k_1");
    other["gameTitle"] = json!("Schach");
    let (st, v) = host.post(BRIDGE, other).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("idempotency_key_reused")),
        "{v}"
    );
    assert!(
        v["error"].as_str().unwrap().contains("idempotencyKey"),
        "{v}"
    );
    assert_eq!(host.post(BRIDGE, body("k_1")).await.1, first);

    // A key is the host's own: another host's same key makes its own session.
    let (other_host, _) = cast(&app, 0).await;
    let (st, v) = other_host.post(BRIDGE, body("k_1")).await;
    assert_eq!(st, 201, "{v}");
    assert_ne!(v["sessionId"], first["sessionId"]);

    // A key out of the rule is refused naming it, and nothing is made.
    for bad in [json!(""), json!("x".repeat(65)), json!("a:b"), json!(7)] {
        let mut b = body("k");
        b["idempotencyKey"] = bad;
        let (st, v) = host.post(BRIDGE, b).await;
        assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
        let m = v["error"].as_str().unwrap_or_default();
        assert!(
            m.contains("idempotencyKey") && m.contains("[A-Za-z0-9_-]"),
            "{v}"
        );
    }
}

/// A create that reserved its key's session id and then died before making the session (the
/// process crashed between the two steps) is repaired by the retry: it makes the session under
/// the reserved id.
#[tokio::test]
async fn a_create_that_reserved_its_key_but_made_nothing_is_made_by_the_retry() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let who = app.auth.identify(&host.token).await.unwrap().unwrap();
    let body = json!({ "config": two_player(json!({})), "gameId": "chess",
                       "gameTitle": "Chess", "idempotencyKey": "crash-1" });
    let reserved = app
        .rcadia
        .reserve_create(&who.key, "crash-1", &body)
        .await
        .unwrap();
    let (st, v) = host.post(BRIDGE, body.clone()).await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["sessionId"], reserved.as_str());
    assert_eq!(listed(&host, &[reserved.as_str()]).await, 1);
}

/// The session id drawn for a key may be another host's session already (ids are random, so
/// this is rare): that session is never answered. The create fails (500, retried by hosts),
/// its reservation is dropped, and the retry with the same key makes a session of its own.
#[tokio::test]
async fn a_key_whose_drawn_id_is_another_hosts_session_never_answers_that_session() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let (other, _) = cast(&app, 0).await;
    let theirs = other.create(two_player(json!({}))).await;
    let who = app.auth.identify(&host.token).await.unwrap().unwrap();
    let body = json!({ "config": two_player(json!({})), "gameId": "chess",
                       "gameTitle": "Chess", "idempotencyKey": "clash" });
    // The reservation as made, pointed at the other host's session.
    let drawn = app
        .rcadia
        .reserve_create(&who.key, "clash", &body)
        .await
        .unwrap();
    let name = app.store.key_alone(&format!("create:{}:clash", who.key));
    let stored: String = redis::cmd("GET")
        .arg(&name)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let clashing = stored.replacen(&drawn, &theirs, 1);
    let _: () = redis::cmd("SET")
        .arg(&name)
        .arg(clashing)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();

    let (st, v) = host.post(BRIDGE, body.clone()).await;
    assert_eq!(st, 500, "{v}");
    let (st, v) = host.post(BRIDGE, body.clone()).await;
    assert_eq!(st, 201, "{v}");
    let mine = v["sessionId"].as_str().unwrap();
    assert_ne!(mine, theirs);
    assert_eq!(host.post(BRIDGE, body).await.1["sessionId"], mine);
}
