//! The protocol as clients and hosts we have not seen use it: requests that race each other,
//! a host that answers twice, clocks that run out under an open long-poll, and bodies of the
//! wrong kind. Each test is black-box over HTTP against a real server.

use std::time::Duration;

use serde_json::{json, Value};

use crate::rcadia_common::{
    app_with, cast, entries, max_seq, started, two_player, Client, AGENT, BRIDGE,
};
use crate::rcadia_conformance::get_well_before_its_wait;

/// The rounds of one series `/available?all=1` lists, by their `round`.
async fn listed_rounds(client: &Client, round: u64) -> Vec<Value> {
    let (st, v) = client.get(&format!("{AGENT}/available?all=1")).await;
    assert_eq!(st, 200, "{v}");
    v["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e["round"] == round)
        .collect()
}

/// Eight `POST /rematch` of one finished session at once (a host retrying on a timeout, two
/// tabs of one signed-in host) make one next round: every answer names it, and no second
/// round 2 is left behind for `/available` to list.
#[tokio::test]
async fn concurrent_rematch_requests_make_one_next_round() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[0] } }]),
    )
    .await;
    let calls = (0..8).map(|_| {
        let host = host.clone();
        let url = format!("{BRIDGE}/{id}/rematch");
        tokio::spawn(async move { host.post(&url, json!({})).await })
    });
    let mut next = std::collections::BTreeSet::new();
    for c in calls {
        let (st, v) = c.await.expect("the request ran");
        assert_eq!(st, 200, "{v}");
        assert_eq!(
            (v["round"].as_u64(), v["seriesId"].as_str()),
            (Some(2), Some(id.as_str())),
            "{v}"
        );
        next.insert(v["sessionId"].as_str().expect("sessionId").to_string());
    }
    assert_eq!(next.len(), 1, "one next round: {next:?}");
    let next = next.into_iter().next().unwrap();
    assert_eq!(
        agents[0].state(&id, 0.0).await["nextSessionId"],
        next.as_str()
    );
    let rounds = listed_rounds(&agents[0], 2).await;
    assert_eq!(rounds.len(), 1, "{rounds:?}");
    assert_eq!(rounds[0]["sessionId"], next.as_str());
}

/// A host that sends its `end` several times at once (resends racing the first) with
/// `autoRematch`, and asks for the rematch meanwhile: one next round, which every answer
/// names (a rematch that came before any end is `409 not_finished`).
#[tokio::test]
async fn racing_ends_and_rematches_of_an_auto_rematch_game_make_one_next_round() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    let mut calls = Vec::new();
    for i in 0..6 {
        let host = host.clone();
        let (url, body) = if i % 3 == 2 {
            (format!("{BRIDGE}/{id}/rematch"), json!({}))
        } else {
            (
                format!("{BRIDGE}/{id}/ops"),
                json!({ "ops": [{ "op": "end", "result": { "winner": pids[1] } }] }),
            )
        };
        calls.push(tokio::spawn(async move { host.post(&url, body).await }));
    }
    let mut named = std::collections::BTreeSet::new();
    for c in calls {
        let (st, v) = c.await.expect("the request ran");
        if st == 409 && v["code"] == "not_finished" {
            // A rematch that arrived before any end: refused, and it says why.
            continue;
        }
        assert_eq!(st, 200, "{v}");
        let next = v["nextSessionId"].as_str().or(v["sessionId"].as_str());
        named.insert(next.expect("the next round named").to_string());
    }
    assert_eq!(named.len(), 1, "one next round: {named:?}");
    let next = named.into_iter().next().unwrap();
    assert_eq!(
        agents[1].state(&id, 0.0).await["nextSessionId"],
        next.as_str()
    );
    let rounds = listed_rounds(&agents[0], 2).await;
    assert_eq!(rounds.len(), 1, "{rounds:?}");
}

/// A game that rejects the same move twice (the host resends, or the game's SDK reports it
/// from two places) has rejected one move: the agent's `rejections` lists it once. A late
/// third copy, after the agent moved again, neither lists it again nor touches the new move.
#[tokio::test]
async fn a_rejection_the_host_sends_twice_is_one_rejection() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.give_turn(&id, &pids[0], json!(["a", "b"])).await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let (st, v) = agents[0].act(&id, json!("a"), turn).await;
    assert_eq!(st, 200, "{v}");
    let first = v["actionId"].as_str().unwrap().to_string();
    let p = host.pending(&id, after, 5.0).await;
    let after = max_seq(&p, after);
    let reject =
        json!({ "op": "reject", "playerId": pids[0], "reason": "illegal", "actionId": first });
    // Twice in one batch, then once more in the next.
    host.ops(&id, json!([reject, reject])).await;
    host.ops(&id, json!([reject])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "rejected", "{s}");
    assert_eq!(s["yourTurn"], true, "{s}");
    assert_eq!(s["rejections"].as_array().map(Vec::len), Some(1), "{s}");

    let (st, v) = agents[0].act(&id, json!("b"), turn).await;
    assert_eq!(st, 200, "{v}");
    let second = v["actionId"].as_str().unwrap().to_string();
    host.pending(&id, after, 5.0).await;
    host.ops(&id, json!([reject])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["actionId"], second.as_str(), "{s}");
    assert_eq!(s["lastAction"]["status"], "pending", "{s}");
    assert_eq!(s["rejections"].as_array().map(Vec::len), Some(1), "{s}");
}

/// A clock that runs out while the other player's long-polls are open: `/state?wait` wakes
/// holding the finished game (the forfeit), `/events?wait` wakes for the strike, and
/// `/public?since&wait` for the change, each long before its 25 s.
#[tokio::test]
async fn long_polls_open_when_a_clock_runs_out_wake_with_it() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 1, "maxTurnTimeouts": 1 })),
    )
    .await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    // The host stays alive (its clocks run) by long-polling as hosts do.
    let keeper = {
        let host = host.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let mut after = after;
            loop {
                let p = host.pending(&id, after, 5.0).await;
                after = max_seq(&p, after);
                if p["status"] == "finished" {
                    return p;
                }
            }
        })
    };
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], false, "{s}");
    let version = s["version"].as_u64().unwrap();
    let next_event = agents[1].get(&format!("{AGENT}/{id}/events")).await.1["next"]
        .as_u64()
        .unwrap();
    let poll = |path: String| {
        let a = agents[1].clone();
        tokio::spawn(async move { get_well_before_its_wait(&a, &path).await })
    };
    let state = poll(format!("{AGENT}/{id}/state?wait=25"));
    let events = poll(format!("{AGENT}/{id}/events?since={next_event}&wait=25"));
    let public = poll(format!("{AGENT}/{id}/public?since={version}&wait=25"));

    let (st, s) = state.await.unwrap();
    assert_eq!(st, 200, "{s}");
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["result"]["reason"], "timeout", "{s}");
    assert_eq!(s["result"]["forfeitedBy"], pids[0].as_str(), "{s}");
    assert_eq!(s["result"]["winner"], pids[1].as_str(), "{s}");
    let (st, e) = events.await.unwrap();
    assert_eq!(st, 200, "{e}");
    assert!(
        entries_named(&e)
            .iter()
            .any(|k| k == "timeout" || k == "game_over"),
        "{e}"
    );
    let (st, v) = public.await.unwrap();
    assert_eq!(st, 200, "{v}");
    assert!(v["version"].as_u64().unwrap() > version, "{v}");
    let p = tokio::time::timeout(Duration::from_secs(20), keeper)
        .await
        .expect("the host's poll saw the end")
        .unwrap();
    assert_eq!(p["result"]["reason"], "timeout", "{p}");
}

fn entries_named(page: &Value) -> Vec<String> {
    page["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["type"].as_str().map(str::to_string))
        .collect()
}

/// `POST /action?wait` open when the game ends under it (the opponent leaves): it answers
/// at once with the action's final outcome (never `pending`) and the finished snapshot.
#[tokio::test]
async fn an_action_waiting_for_its_outcome_when_the_game_ends_gets_one() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let waiting = {
        let a = agents[0].clone();
        let path = format!("{AGENT}/{id}/action?wait=25");
        tokio::spawn(async move {
            let r = a
                .http
                .post(format!("{}{path}", a.base))
                .bearer_auth(&a.token)
                .json(&json!({ "action": "x", "turn": turn }))
                .timeout(Duration::from_secs(10))
                .send()
                .await
                .expect("answered before the wait ran out");
            (r.status().as_u16(), r.json::<Value>().await.expect("json"))
        })
    };
    // Delivered to the game, which says nothing; then the opponent leaves.
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p).len(), 1, "{p}");
    let (st, v) = agents[1]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    let (st, v) = waiting.await.unwrap();
    assert_eq!(st, 200, "{v}");
    assert_ne!(v["outcome"], "pending", "{v}");
    assert_eq!(v["snapshot"]["status"], "finished", "{v}");
    assert_eq!(v["snapshot"]["result"]["reason"], "left", "{v}");
}

/// Bodies an unfamiliar client sends: JSON under another content type is read as JSON,
/// unknown fields are ignored, and a body of the wrong shape or not JSON at all is a JSON
/// `400 bad_request` that nothing reached the game from.
#[tokio::test]
async fn odd_bodies_are_read_or_refused_as_json() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let a = &agents[0];
    let send = |ct: &'static str, body: String| {
        a.http
            .post(format!("{}{AGENT}/{id}/action", a.base))
            .bearer_auth(&a.token)
            .header("content-type", ct)
            .body(body)
            .send()
    };
    for (ct, body) in [
        ("application/json", "[\"x\"]".to_string()),
        ("application/x-www-form-urlencoded", "action=x".to_string()),
        ("application/json", "{\"action\": \"x\", ".to_string()),
        (
            "application/json",
            format!("{{\"action\": \"x\", \"turn\": \"{turn}\"}}"),
        ),
    ] {
        let r = send(ct, body.clone()).await.unwrap();
        let st = r.status().as_u16();
        let v: Value = r.json().await.expect("a JSON error");
        assert_eq!(
            (st, v["code"].as_str()),
            (400, Some("bad_request")),
            "{ct} {body}: {v}"
        );
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    }
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "nothing reached the game: {p}");
    let r = send(
        "text/plain",
        json!({ "action": "x", "turn": turn, "comment": "gg", "extra": { "a": 1 } }).to_string(),
    )
    .await
    .unwrap();
    let st = r.status().as_u16();
    let v: Value = r.json().await.unwrap();
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    let got = entries(&p);
    assert_eq!(got.len(), 1, "{p}");
    assert_eq!(
        got[0]["action"], "x",
        "only the action reaches the game: {p}"
    );
}

/// Four agents race for the two seats of a table: two are seated (seats 0 and 1), the
/// others get a 409 that says why (`full`, or `in_progress` once the full table started),
/// and a seated agent's join sent again is its seat again, not a third seat.
#[tokio::test]
async fn more_joiners_than_seats_at_once() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 4).await;
    let id = host.create(two_player(json!({}))).await;
    let joins = agents.iter().map(|a| {
        let a = a.clone();
        let url = format!("{AGENT}/{id}/join");
        tokio::spawn(async move { a.post(&url, json!({})).await })
    });
    let mut seated = Vec::new();
    let mut refused = Vec::new();
    for (i, j) in joins.enumerate() {
        let (st, v) = j.await.unwrap();
        match st {
            200 => seated.push((i, v)),
            409 => refused.push(v),
            _ => panic!("join answered {st}: {v}"),
        }
    }
    let mut seats: Vec<u64> = seated
        .iter()
        .map(|(_, v)| v["seat"].as_u64().unwrap())
        .collect();
    seats.sort_unstable();
    assert_eq!(seats, vec![0, 1], "{seated:?}");
    for v in &refused {
        assert!(
            matches!(v["code"].as_str(), Some("full" | "in_progress")),
            "{v}"
        );
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    }
    let (i, first) = &seated[0];
    let again = agents[*i].join(&id).await;
    assert_eq!(again["playerId"], first["playerId"], "{again}");
    assert_eq!(again["seat"], first["seat"], "{again}");
    let (_, v) = host.get(&format!("{AGENT}/{id}/public")).await;
    assert_eq!(v["players"].as_array().map(Vec::len), Some(2), "{v}");
}

/// A configuration that leaves the clock out (or sends `null`, "not set") gets the platform's
/// defaults: `turnTimeout` 300 s and `maxTurnTimeouts` 2, as the agent's snapshot shows.
#[tokio::test]
async fn an_omitted_clock_is_the_platform_default() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    for config in [
        json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0" }),
        json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0",
                "turnTimeout": null, "maxTurnTimeouts": null }),
    ] {
        let (id, pids, _) = started(&host, &agents, config.clone()).await;
        let before = agents[0].state(&id, 0.0).await;
        host.give_turn(&id, &pids[0], json!(["x"])).await;
        let s = agents[0].state(&id, 0.0).await;
        assert_eq!(s["maxStrikes"], 2, "{config}: {s}");
        assert_eq!(s["strikes"], 0, "{config}: {s}");
        let deadline = iso_ms(s["deadline"].as_str().expect("a deadline"));
        // The server and the test share the machine's clock.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let left = deadline - now;
        assert!(
            (240_000..=310_000).contains(&left),
            "{config}: deadline {left} ms away: {s} (before the turn: {before})"
        );
    }
}

fn iso_ms(s: &str) -> i64 {
    horst_dates::parse_rfc3339_ms(s).unwrap_or_else(|| panic!("not an ISO time: {s}")) as i64
}

/// A host that goes away before its table filled ends the waiting table too (section 3: "its
/// waiting and active sessions"): the seated agent sees `host_disconnected`, `/available`
/// stops listing it, and a latecomer's join is `409 finished`.
#[tokio::test]
async fn a_host_gone_ends_its_waiting_table() {
    let app = app_with(|c| {
        c.sessions.host_alive_seconds = 1;
        c.sessions.host_gone_seconds = 2;
    })
    .await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    let s = agents[0].join(&id).await;
    assert_eq!(s["status"], "waiting", "{s}");
    let ended = crate::harness::eventually(Duration::from_secs(15), async || {
        agents[0].state(&id, 1.0).await["status"] == "finished"
    })
    .await;
    assert!(ended, "the waiting table outlived its host");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["result"]["reason"], "host_disconnected", "{s}");
    assert_eq!(s["result"]["winner"], Value::Null, "{s}");
    assert_eq!(s["nextSessionId"], Value::Null, "{s}");
    let (_, v) = agents[1].get(&format!("{AGENT}/available?all=1")).await;
    assert!(
        !v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["sessionId"] == id.as_str()),
        "{v}"
    );
    let (st, v) = agents[1]
        .post(&format!("{AGENT}/{id}/join"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("finished")), "{v}");
}

/// A session whose record expired (Redis dropped its keys, as it does a day after the game)
/// is an unknown session on every route, answered as JSON `404 not_found`; a long-poll open
/// on it when it goes ends with that answer rather than waiting out its 25 s or failing 500.
#[tokio::test]
async fn a_session_polled_after_it_expired_is_not_found() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let version = agents[1].state(&id, 0.0).await["version"].as_u64().unwrap();
    let poll = {
        let a = agents[1].clone();
        let path = format!("{AGENT}/{id}/state?wait=25");
        tokio::spawn(async move { get_well_before_its_wait(&a, &path).await })
    };
    let public = {
        let a = agents[1].clone();
        let path = format!("{AGENT}/{id}/public?since={version}&wait=25");
        tokio::spawn(async move { get_well_before_its_wait(&a, &path).await })
    };
    // Most likely both polls are open by now; one that opens after the keys are gone is
    // answered the same way at once, so the order does not change what is checked.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut conn = app.store.conn();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("*ses:{id}*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!keys.is_empty(), "the session's keys");
    let _: () = redis::cmd("DEL")
        .arg(&keys)
        .query_async(&mut conn)
        .await
        .unwrap();

    for (what, answer) in [
        ("state", poll.await.unwrap()),
        ("public", public.await.unwrap()),
    ] {
        let (st, v) = answer;
        assert_eq!(
            (st, v["code"].as_str()),
            (404, Some("not_found")),
            "{what}: {v}"
        );
    }
    let turn = 1;
    let calls = [
        agents[0].get(&format!("{AGENT}/{id}/state")).await,
        agents[0].act(&id, json!("x"), turn).await,
        agents[0].get(&format!("{AGENT}/{id}/events")).await,
        agents[0]
            .post(&format!("{AGENT}/{id}/leave"), json!({}))
            .await,
        agents[0].get(&format!("{AGENT}/{id}/public")).await,
        host.get(&format!(
            "{BRIDGE}/{id}/pending-actions?after={after}&wait=1"
        ))
        .await,
        host.post(&format!("{BRIDGE}/{id}/ops"), json!({ "ops": [] }))
            .await,
        host.post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
            .await,
    ];
    for (st, v) in calls {
        assert_eq!((st, v["code"].as_str()), (404, Some("not_found")), "{v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    }
}

/// A v1 game's host, as v1 bridges poll (no `after`): each poll drains what it returns, so
/// no entry comes twice; of the strikes only the final one reaches it (one `timeout` entry,
/// `final: true`), and no `session_end` entry follows the forfeit (section 9).
#[tokio::test]
async fn a_v1_host_polling_without_after_gets_each_entry_once_and_only_the_final_strike() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host
        .create(
            json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "gameType": "chess",
                        "turnTimeout": 0.5, "maxTurnTimeouts": 2 }),
        )
        .await;
    let mut pids = Vec::new();
    for a in &agents {
        pids.push(a.join(&id).await["playerId"].as_str().unwrap().to_string());
    }
    let v1_poll = async || {
        let (st, p) = host
            .get(&format!("{BRIDGE}/{id}/pending-actions?wait=2"))
            .await;
        assert_eq!(st, 200, "{p}");
        p
    };
    let mut seen: Vec<Value> = Vec::new();
    let mut p = v1_poll().await;
    seen.extend(entries(&p));
    assert!(
        seen.iter().any(|e| e["action"]["type"] == "__game_start__"),
        "{seen:?}"
    );
    let (st, v) = host
        .call(
            "PATCH",
            &format!("{BRIDGE}/{id}/legal-actions"),
            Some(json!({ "playerId": pids[0], "actions": ["a"] })),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    let t0 = std::time::Instant::now();
    while p["status"] != "finished" && t0.elapsed() < Duration::from_secs(20) {
        p = v1_poll().await;
        seen.extend(entries(&p));
    }
    // One more poll after the end: nothing left, nothing again.
    let last = v1_poll().await;
    assert!(entries(&last).is_empty(), "{last}");
    assert_eq!(p["result"]["reason"], "timeout", "{p}");
    assert_eq!(p["result"]["forfeitedBy"], pids[0].as_str(), "{p}");
    let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    let unique: std::collections::BTreeSet<u64> = seqs.iter().copied().collect();
    assert_eq!(seqs.len(), unique.len(), "an entry came twice: {seen:?}");
    let timeouts: Vec<&Value> = seen.iter().filter(|e| e["type"] == "timeout").collect();
    assert_eq!(timeouts.len(), 1, "only the final strike: {seen:?}");
    assert_eq!(timeouts[0]["final"], true, "{seen:?}");
    assert_eq!(timeouts[0]["playerId"], pids[0].as_str(), "{seen:?}");
    assert!(
        !seen.iter().any(|e| e["type"] == "system"),
        "no v2 system entries: {seen:?}"
    );
}

/// An agent that reuses an `idempotencyKey` for a new move (a constant key, a key kept from
/// the last turn) is told so: `409 idempotency_key_reused` with its snapshot, nothing reaches
/// the game. It was answered `200` with the old move's id and outcome, so the new move was
/// dropped without a word and the agent, still on turn, sent it again and again. A real
/// retry (same action, same turn) is still the first action.
#[tokio::test]
async fn a_key_reused_for_another_move_is_refused_not_swallowed() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    let act = format!("{AGENT}/{id}/action");
    host.give_turn(&id, &pids[0], json!(["a", "b"])).await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let (st, first) = agents[0]
        .post(
            &act,
            json!({ "action": "a", "turn": turn, "idempotencyKey": "k" }),
        )
        .await;
    assert_eq!(st, 200, "{first}");
    // While it is pending: the same key with another action is no retry.
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": "b", "turn": turn, "idempotencyKey": "k" }),
        )
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("idempotency_key_reused")),
        "{v}"
    );
    assert!(v["snapshot"]["playerId"].is_string(), "{v}");
    let (st, retry) = agents[0]
        .post(
            &act,
            json!({ "action": "a", "turn": turn, "idempotencyKey": "k" }),
        )
        .await;
    assert_eq!(st, 200, "{retry}");
    assert_eq!(retry["actionId"], first["actionId"], "{retry}");
    // Applied; the opponent moves; the agent is on turn again and reuses the key.
    let p = host.pending(&id, after, 5.0).await;
    after = max_seq(&p, after);
    assert_eq!(entries(&p).len(), 1, "{p}");
    host.give_turn(&id, &pids[1], json!(["c"])).await;
    let t1 = agents[1].state(&id, 0.0).await["turn"].as_u64().unwrap();
    assert_eq!(agents[1].act(&id, json!("c"), t1).await.0, 200);
    let p = host.pending(&id, after, 5.0).await;
    after = max_seq(&p, after);
    host.give_turn(&id, &pids[0], json!(["a", "b"])).await;
    let t2 = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": "b", "turn": t2, "idempotencyKey": "k" }),
        )
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("idempotency_key_reused")),
        "{v}"
    );
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("fresh")),
        "says what to do: {v}"
    );
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "nothing reached the game: {p}");
    // The retry of the applied move (its own turn) still answers that move.
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": "a", "turn": turn, "idempotencyKey": "k" }),
        )
        .await;
    assert_eq!(
        (st, v["actionId"].clone()),
        (200, first["actionId"].clone()),
        "{v}"
    );
    // A fresh key is the new move.
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": "b", "turn": t2, "idempotencyKey": "k2" }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
}

/// Requests of one game that race: the player on turn sends its move four times at once (no
/// key: an impatient client), then both players leave an `autoRematch` game at once. One move
/// is accepted and reaches the game, the others are `409 action_pending`; the game ends once
/// (`left`, forfeited by whoever left first) and, a player having left, no next round opens.
#[tokio::test]
async fn racing_moves_and_leaves_of_one_game() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) =
        started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let moves: Vec<_> = (0..4)
        .map(|_| {
            let a = agents[0].clone();
            let id = id.clone();
            tokio::spawn(async move { a.act(&id, json!("x"), turn).await })
        })
        .collect();
    let mut accepted = 0;
    for m in moves {
        let (st, v) = m.await.unwrap();
        match st {
            200 => accepted += 1,
            409 => assert_eq!(v["code"], "action_pending", "{v}"),
            _ => panic!("{st}: {v}"),
        }
    }
    assert_eq!(accepted, 1);
    let p = host.pending(&id, after, 5.0).await;
    assert_eq!(entries(&p).len(), 1, "one move reached the game: {p}");
    let leaves: Vec<_> = agents
        .iter()
        .map(|a| {
            let a = a.clone();
            let url = format!("{AGENT}/{id}/leave");
            tokio::spawn(async move { a.post(&url, json!({})).await })
        })
        .collect();
    for l in leaves {
        let (st, v) = l.await.unwrap();
        assert_eq!(st, 200, "{v}");
    }
    let s = agents[0].get(&format!("{AGENT}/{id}/public")).await.1;
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["result"]["reason"], "left", "{s}");
    let by = s["result"]["forfeitedBy"].as_str().expect("forfeitedBy");
    assert!(pids.iter().any(|p| p == by), "{s}");
    let other = pids.iter().find(|p| *p != by).unwrap();
    assert_eq!(s["result"]["winner"], other.as_str(), "{s}");
    assert_eq!(s["nextSessionId"], Value::Null, "{s}");
    assert!(listed_rounds(&agents[0], 2).await.is_empty());
}
