//! Sessions stored by earlier versions (a hash `{rev, json}`, the record as JSON) still load
//! and play after an upgrade, and are rewritten in the current form (a string
//! `<rev> <MessagePack>`) by their next write.

use horst_sessions::wire::AgentSnapshot;
use serde_json::json;

use crate::rcadia_common::{app_with, cast, entries, started, two_player};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stored_as_json_by_an_earlier_version_loads_and_plays_on() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e4"] }]),
    )
    .await;

    // Rewrite the record the way earlier versions stored it: a hash, `rev` a plain number,
    // the record as JSON in `json`.
    let mut s = app.rcadia.load(&id).await.unwrap();
    let key = app.store.key(&format!("ses:{id}"));
    let mut conn = app.store.conn();
    let _: () = redis::pipe()
        .cmd("DEL")
        .arg(&key)
        .ignore()
        .cmd("HSET")
        .arg(&key)
        .arg("rev")
        .arg(s.rev())
        .arg("json")
        .arg(s.to_stored_json().unwrap())
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();
    let (st, avail) = agents[1]
        .get("/api/v1/agent/sessions/available?all=1")
        .await;
    assert_eq!(st, 200, "{avail}");
    assert!(
        avail["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["sessionId"] == id.as_str()),
        "listed in /available: {avail}"
    );

    // It reads as before...
    let snap: AgentSnapshot = serde_json::from_value(agents[0].state(&id, 0.0).await).unwrap();
    assert!(snap.your_turn, "{snap:?}");
    assert_eq!(snap.legal_actions, Some(vec![json!("e4")]));

    // ...and plays on: the action reaches the host and the host's answer applies it.
    let (st, v) = agents[0].act(&id, json!("e4"), snap.turn).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 5.0).await;
    let got = entries(&p);
    assert!(
        got.iter().any(|e| e["action"] == "e4"),
        "the action reached the host: {p}"
    );
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["e5"] }]),
    )
    .await;
    let snap: AgentSnapshot = serde_json::from_value(agents[1].state(&id, 0.0).await).unwrap();
    assert!(snap.your_turn, "{snap:?}");

    // The writes stored it in the current form.
    let kind: String = redis::cmd("TYPE")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(kind, "string");
    let value: Vec<u8> = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    let space = value
        .iter()
        .position(|b| *b == b' ')
        .expect("<rev> <record>");
    assert!(value[space + 1] != b'{', "not JSON any more");

    // Its event log (kept apart, unchanged by the upgrade) still numbers on.
    let (st, ev) = agents[0]
        .get(&format!("/api/v1/agent/sessions/{id}/events?since=0"))
        .await;
    assert_eq!(st, 200, "{ev}");
    let idx: Vec<u64> = ev["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["index"].as_u64())
        .collect();
    assert!(!idx.is_empty());
    assert!(idx.windows(2).all(|w| w[1] == w[0] + 1), "{idx:?}");
}
