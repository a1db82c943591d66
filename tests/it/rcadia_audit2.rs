//! Findings of an outside audit of the RCADIA agent protocol v2 over HTTP (a foreign agent and
//! a foreign host against a real API): each test is a rule a caller relies on that the server
//! broke.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::rcadia_common::*;

/// A v2 host that never acknowledges (`after=0` on every poll) is sent a bounded queue: at
/// most 16 delivered entries again, plus actions still pending. The queue kept every entry
/// of the game (31 entries, 34 KB after 30 actions), stored with every write and returned by
/// every poll. A host reconnecting with `after=0` still gets an action the game has not
/// answered (the contract: entries stay queued until acknowledged).
#[tokio::test]
async fn a_host_that_never_acknowledges_gets_a_bounded_queue() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    let mut last = Value::Null;
    for i in 0..40u64 {
        let on = &pids[(i % 2) as usize];
        host.ops(
            &id,
            json!([{ "op": "legal_actions", "playerId": on, "actions": [{ "m": i }] }]),
        )
        .await;
        let a = &agents[(i % 2) as usize];
        let s = a.state(&id, 0.0).await;
        let (st, v) = a
            .act(&id, json!({ "m": i }), s["turn"].as_u64().unwrap())
            .await;
        assert_eq!(st, 200, "{v}");
        // The host acknowledges nothing, ever.
        last = host.pending(&id, 0, 0.0).await;
    }
    let all = entries(&last);
    assert!(
        all.len() <= 17,
        "a poll with after=0 returned {} entries: {last}",
        all.len()
    );
    // The newest action (still pending: no publish since) is among them, and is sent again
    // on the next poll with after=0, as the contract's delivery rule says.
    let newest = all.last().expect("entries");
    assert_eq!(newest["action"], json!({ "m": 39 }), "{last}");
    let again = host.pending(&id, 0, 0.0).await;
    assert!(
        entries(&again)
            .iter()
            .any(|e| e["actionId"] == newest["actionId"]),
        "{again}"
    );
    // Acknowledging still works as before.
    let top = max_seq(&again, 0);
    let p = host.pending(&id, top, 0.0).await;
    assert!(entries(&p).is_empty(), "{p}");
}

/// A `reject` op naming another player's action is refused with `400 bad_request` that says
/// whose action it is. It used to be recorded as a rejection of the named player (an action
/// that was never theirs) while the real owner's action stayed pending.
#[tokio::test]
async fn a_reject_of_another_players_action_is_refused() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    let (st, v) = agents[0]
        .act(&id, json!("x"), s["turn"].as_u64().unwrap())
        .await;
    assert_eq!(st, 200, "{v}");
    let aid = v["actionId"].as_str().unwrap().to_string();
    host.pending(&id, after, 0.0).await;
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/ops"),
            json!({ "ops": [{ "op": "reject", "playerId": pids[1], "reason": "no", "actionId": aid }] }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
    let msg = v["error"].as_str().unwrap_or("");
    assert!(msg.contains(&pids[0]) && msg.contains(&aid), "{v}");
    // Nothing changed: the owner's action is still pending, nobody has a rejection.
    let s0 = agents[0].state(&id, 0.0).await;
    assert_eq!(s0["lastAction"]["status"], "pending", "{s0}");
    let s1 = agents[1].state(&id, 0.0).await;
    assert_eq!(s1["rejections"], json!([]), "{s1}");
    // The right player's reject still works.
    host.ops(
        &id,
        json!([{ "op": "reject", "playerId": pids[0], "reason": "no", "actionId": aid }]),
    )
    .await;
    let s0 = agents[0].state(&id, 0.0).await;
    assert_eq!(s0["lastAction"]["status"], "rejected", "{s0}");
}

/// A second `POST /leave` of a waiting table (a retry whose answer was lost) answers 200
/// with `alreadyLeft: true`. It said `403 not_a_player` "join it first" to the player who had
/// just left. Someone who never sat there still gets `not_a_player`.
#[tokio::test]
async fn a_repeated_leave_is_done_already() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    agents[0].join(&id).await;
    let leave = format!("{AGENT}/{id}/leave");
    let (st, v) = agents[0].post(&leave, json!({})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v.get("alreadyLeft"), None, "{v}");
    let (st, v) = agents[0].post(&leave, json!({})).await;
    assert_eq!((st, v["ok"].as_bool()), (200, Some(true)), "{v}");
    assert_eq!(v["alreadyLeft"], true, "{v}");
    assert_eq!(v["status"], "waiting", "{v}");
    let (st, v) = agents[1].post(&leave, json!({})).await;
    assert_eq!((st, v["code"].as_str()), (403, Some("not_a_player")), "{v}");
    // Joining again after leaving works and seats the player.
    let s = agents[0].join(&id).await;
    assert_eq!(s["seat"], 0, "{s}");
}

/// A `gameId` outside ASCII gets a slug of its own letters: `Mühle` is `mühle` (it was
/// `m-hle`), `象棋` is `象棋` (it had none and fell back to `gameType`); `skillUrl` carries it
/// percent-encoded, and `?game=` finds it in any case.
#[tokio::test]
async fn a_non_ascii_game_id_gets_a_right_slug() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    for (game_id, slug, segment) in [
        ("Mühle", "mühle", "m%C3%BChle"),
        ("象棋", "象棋", "%E8%B1%A1%E6%A3%8B"),
        ("Ärger Dich", "ärger-dich", "%C3%A4rger-dich"),
    ] {
        let (st, v) = host
            .post(
                BRIDGE,
                json!({ "config": two_player(json!({ "gameType": "other" })), "gameId": game_id }),
            )
            .await;
        assert_eq!(st, 201, "{v}");
        let id = v["sessionId"].as_str().unwrap().to_string();
        let url = v["skillUrl"].as_str().unwrap_or("");
        assert!(
            url.ends_with(&format!("/games/{segment}/skill.md")),
            "{game_id}: {url}"
        );
        let (_, list) = host.get(&format!("{AGENT}/available?all=1")).await;
        let e = list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["sessionId"] == id.as_str())
            .cloned()
            .expect("listed");
        assert_eq!(e["gameSlug"], slug, "{e}");
        let upper = game_id.to_uppercase();
        let q = format!("{AGENT}/available?game={}", encode(&upper));
        let (_, list) = host.get(&q).await;
        assert!(
            list["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["sessionId"] == id.as_str()),
            "?game={upper}: {list}"
        );
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Both clocks of a simultaneous turn run out at once: the result names every player who
/// forfeited (`forfeitedByAll`, seat order) besides `forfeitedBy` (the lowest seat), and no
/// winner. It named only the first player, so the other read as innocent.
#[tokio::test]
async fn simultaneous_timeouts_name_every_player_who_forfeited() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(
        &host,
        &agents,
        two_player(json!({ "simultaneous": true, "turnTimeout": 0.5, "maxTurnTimeouts": 1 })),
    )
    .await;
    host.ops(
        &id,
        json!([
            { "op": "legal_actions", "playerId": pids[0], "actions": ["x"] },
            { "op": "legal_actions", "playerId": pids[1], "actions": ["x"] }
        ]),
    )
    .await;
    let t0 = Instant::now();
    let mut ended = None;
    while t0.elapsed() < Duration::from_secs(20) && ended.is_none() {
        let p = host.pending(&id, after, 3.0).await;
        after = max_seq(&p, after);
        ended = entries(&p)
            .into_iter()
            .find(|e| e["event"] == "session_end");
    }
    let end = ended.expect("session_end");
    let r = &end["result"];
    assert_eq!(r["reason"], "timeout", "{end}");
    assert_eq!(r["winner"], Value::Null, "{end}");
    assert_eq!(r["forfeitedBy"], pids[0], "{end}");
    assert_eq!(r["forfeitedByAll"], json!([pids[0], pids[1]]), "{end}");
}

/// A retried `POST /action` with the same `idempotencyKey` is the same action, even after a
/// multi-step turn moved on: without `turn`, the retry of a move whose answer was lost was
/// accepted as a second move and applied again. A fresh key is a new action as before.
#[tokio::test]
async fn a_retried_action_with_its_key_is_not_applied_twice() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["step"] }]),
    )
    .await;
    let act = format!("{AGENT}/{id}/action");
    let body = json!({ "action": "step", "idempotencyKey": "k-1" });
    let (st, first) = agents[0].post(&act, body.clone()).await;
    assert_eq!(st, 200, "{first}");
    // The game takes it and gives the same player a second step (multi-step turn).
    let p = host.pending(&id, after, 0.0).await;
    after = max_seq(&p, after);
    assert_eq!(entries(&p).len(), 1, "{p}");
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["step"] }]),
    )
    .await;
    // The answer was lost; the agent sends the same request again.
    let (st, retry) = agents[0].post(&act, body.clone()).await;
    assert_eq!(st, 200, "{retry}");
    assert_eq!(retry["actionId"], first["actionId"], "{retry}");
    assert_eq!(retry["outcome"], "applied", "{retry}");
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "the retry reached the game: {p}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    // A new key is the second step.
    let (st, second) = agents[0]
        .post(&act, json!({ "action": "step", "idempotencyKey": "k-2" }))
        .await;
    assert_eq!(st, 200, "{second}");
    assert_ne!(second["actionId"], first["actionId"]);
    let p = host.pending(&id, after, 0.0).await;
    assert_eq!(entries(&p).len(), 1, "{p}");
    // A key that is no string is refused.
    let (st, v) = agents[0]
        .post(&act, json!({ "action": "step", "idempotencyKey": 7 }))
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
}
