//! Sessions stored by earlier versions still load and play after an upgrade, and are
//! rewritten in the current form (a string `<rev> ~<delta>` against a base in
//! `ses:<id>:base`, `rcadia/src/record.rs`) by their next write: a hash `{rev, json}` (the
//! record as JSON), and a string `<rev> <MessagePack>` (the whole record, no base: written
//! before the deltas).

use horst_sessions::wire::AgentSnapshot;
use serde_json::json;

use crate::harness::TestApp;
use crate::rcadia_common::{app_with, cast, entries, started, two_player, Client};

/// A started two-player session whose first agent has its turn: the app, its host and
/// agents, the session id, the players' ids and the host's `after`.
async fn a_started_game() -> (TestApp, Client, Vec<Client>, String, Vec<String>, u64) {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e4"] }]),
    )
    .await;
    (app, host, agents, id, pids, after)
}

/// What an upgraded session must still do: be listed, read as before, take an action, deliver
/// it to the host and apply the host's answer; then the writes have stored it as a string in
/// the current form (returned: the stored value), its event log still numbering on.
async fn plays_on(
    app: &TestApp,
    host: &Client,
    agents: &[Client],
    id: &str,
    pids: &[String],
    after: u64,
) -> Vec<u8> {
    let (st, avail) = agents[1]
        .get("/api/v1/agent/sessions/available?all=1")
        .await;
    assert_eq!(st, 200, "{avail}");
    assert!(
        avail["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["sessionId"] == id),
        "listed in /available: {avail}"
    );

    // It reads as before...
    let snap: AgentSnapshot = serde_json::from_value(agents[0].state(id, 0.0).await).unwrap();
    assert!(snap.your_turn, "{snap:?}");
    assert_eq!(snap.legal_actions, Some(vec![json!("e4")]));

    // ...and plays on: the action reaches the host and the host's answer applies it.
    let (st, v) = agents[0].act(id, json!("e4"), snap.turn).await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(id, after, 5.0).await;
    let got = entries(&p);
    assert!(
        got.iter().any(|e| e["action"] == "e4"),
        "the action reached the host: {p}"
    );
    host.ops(
        id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["e5"] }]),
    )
    .await;
    let snap: AgentSnapshot = serde_json::from_value(agents[1].state(id, 0.0).await).unwrap();
    assert!(snap.your_turn, "{snap:?}");

    // The writes stored it in the current form: `<rev> ~<delta>` with its base beside it,
    // both kept (the game is on).
    let key = app.store.key(&format!("ses:{id}"));
    let base_key = app.store.key(&format!("ses:{id}:base"));
    let mut conn = app.store.conn();
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
    assert_eq!(value[space + 1], b'~', "a delta against the base");
    let base: Option<Vec<u8>> = redis::cmd("GET")
        .arg(&base_key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(base.is_some_and(|b| !b.is_empty()), "the base is stored");
    for k in [&key, &base_key] {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(k)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(ttl, -1, "{k} expires while the game is on");
    }

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
    value
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stored_as_json_by_an_earlier_version_loads_and_plays_on() {
    let (app, host, agents, id, pids, after) = a_started_game().await;

    // Rewrite the record the way earlier versions stored it: a hash, `rev` a plain number,
    // the record as JSON in `json`, no base.
    let mut s = app.rcadia.load(&id).await.unwrap().into_session();
    let key = app.store.key(&format!("ses:{id}"));
    let mut conn = app.store.conn();
    let _: () = redis::pipe()
        .cmd("DEL")
        .arg(&key)
        .arg(app.store.key(&format!("ses:{id}:base")))
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

    let value = plays_on(&app, &host, &agents, &id, &pids, after).await;
    let space = value.iter().position(|b| *b == b' ').unwrap();
    assert!(value[space + 1] != b'{', "not JSON any more");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stored_whole_without_a_base_by_an_earlier_version_loads_and_plays_on() {
    let (app, host, agents, id, pids, after) = a_started_game().await;

    // Rewrite the record the way the version before the deltas stored it: `<rev>
    // <MessagePack>`, the whole record after the rev, and no `ses:<id>:base`. The rev is one
    // this process never wrote, so its cached record is stale and every path (the reads'
    // rev check, the writes' compare-and-set) has to take the stored value.
    let s = app.rcadia.load(&id).await.unwrap().into_session();
    let record = rmp_serde::to_vec(&s).unwrap();
    let mut value = format!("{}.0badcafe ", s.rev()).into_bytes();
    value.extend(&record);
    let key = app.store.key(&format!("ses:{id}"));
    let mut conn = app.store.conn();
    let _: () = redis::pipe()
        .cmd("SET")
        .arg(&key)
        .arg(&value)
        .ignore()
        .cmd("DEL")
        .arg(app.store.key(&format!("ses:{id}:base")))
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();
    // The session layer reads it as the record it was.
    assert_eq!(*app.rcadia.load(&id).await.unwrap(), s);

    let stored = plays_on(&app, &host, &agents, &id, &pids, after).await;
    assert!(!stored.starts_with(format!("{}.0badcafe", s.rev()).as_bytes()));
}
