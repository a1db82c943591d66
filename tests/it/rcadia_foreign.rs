//! RCADIA driven by clients nobody here wrote: generic HTTP clients' retries, agents that send
//! no `idempotencyKey`, games that are not turn-based. Each test is an answer such a client
//! relies on that the server got wrong.

use serde_json::{json, Value};

use crate::rcadia_common::*;

/// `POST /action` with `headers`, as a generic client's retry layer sends it.
async fn post_with(
    agent: &Client,
    path: &str,
    body: Value,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let mut req = agent
        .http
        .post(format!("{}{path}", agent.base))
        .bearer_auth(&agent.token)
        .json(&body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// A move retried with the `Idempotency-Key` header (the IETF draft's, which generic HTTP
/// clients' retry layers send) and no body key is answered as the first, not applied twice,
/// also in a multi-step turn where a keyless retry is a new move. Before, the header was
/// ignored: the retry reached the game as a second step.
#[tokio::test]
async fn a_move_retried_with_the_idempotency_key_header_is_applied_once() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    host.give_turn(&id, &pids[0], json!(["step"])).await;
    let act = format!("{AGENT}/{id}/action");
    let key = [("Idempotency-Key", "\"0f8a-1\"")];
    let (st, first) = post_with(&agents[0], &act, json!({ "action": "step" }), &key).await;
    assert_eq!(st, 200, "{first}");
    let p = host.pending(&id, after, 0.0).await;
    after = max_seq(&p, after);
    assert_eq!(entries(&p).len(), 1, "{p}");
    // The game takes it and gives the same player a second step.
    host.give_turn(&id, &pids[0], json!(["step"])).await;
    let (st, retry) = post_with(&agents[0], &act, json!({ "action": "step" }), &key).await;
    assert_eq!(st, 200, "{retry}");
    assert_eq!(retry["actionId"], first["actionId"], "{retry}");
    assert_eq!(retry["outcome"], "applied", "{retry}");
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "the retry reached the game: {p}");
    // The same key in the body too is that key; another one is a contradiction.
    let (st, v) = post_with(
        &agents[0],
        &act,
        json!({ "action": "step", "idempotencyKey": "0f8a-1" }),
        &key,
    )
    .await;
    assert_eq!((st, &v["actionId"]), (200, &first["actionId"]), "{v}");
    let (st, v) = post_with(
        &agents[0],
        &act,
        json!({ "action": "step", "idempotencyKey": "other" }),
        &key,
    )
    .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Idempotency-Key"),
        "{v}"
    );
}

/// An agent that sends no key resends its move (the answer was lost) after the game applied
/// it: in a game that is not turn-based (no turn checks) it was a second move; now it is
/// refused as `stale_turn`, naming the applied action, with the snapshot.
#[tokio::test]
async fn a_keyless_resend_in_a_game_without_turns_is_refused_not_applied_twice() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _pids, mut after) =
        started(&host, &agents, two_player(json!({ "turnBased": false }))).await;
    host.ops(&id, json!([{ "op": "state", "state": { "t": 0 } }]))
        .await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    let body = json!({ "action": { "type": "jump" }, "turn": turn });
    let act = format!("{AGENT}/{id}/action");
    let (st, first) = agents[0].post(&act, body.clone()).await;
    assert_eq!(st, 200, "{first}");
    let p = host.pending(&id, after, 0.0).await;
    after = max_seq(&p, after);
    host.ops(&id, json!([{ "op": "state", "state": { "t": 1 } }]))
        .await;
    let (st, v) = agents[0].post(&act, body).await;
    assert_eq!((st, v["code"].as_str()), (409, Some("stale_turn")), "{v}");
    let said = v["error"].as_str().unwrap_or_default();
    assert!(said.contains(first["actionId"].as_str().unwrap()), "{v}");
    assert_eq!(v["snapshot"]["lastAction"]["status"], "applied", "{v}");
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "the resend reached the game: {p}");
}
