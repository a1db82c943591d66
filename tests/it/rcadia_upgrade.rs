//! Sessions stored by earlier versions still load and play after an upgrade, and are
//! rewritten in the current form (a string `<rev> ~<delta>` against a base in
//! `ses:<id>:base`, `rcadia/src/record.rs`) by their next write: a hash `{rev, json}` (the
//! record as JSON), and a string `<rev> <MessagePack>` (the whole record, no base: written
//! before the deltas). An event log and a replay of earlier forms (untagged MessagePack
//! events with absolute times, JSON lines) read on beside the entries appended in the
//! compact forms (`record::encode_event`, `replay::encode_line`).

use horst_sessions::wire::AgentSnapshot;
use serde_json::json;

use crate::harness::TestApp;
use crate::rcadia_common::{app_with, cast, entries, started, two_player, Client};

/// A started two-player session whose first agent has its turn: the app, its host and
/// agents, the session id, the players' ids and the host's `after`.
async fn a_started_game() -> (TestApp, Client, Vec<Client>, String, Vec<String>, u64) {
    a_started_game_with(|_| {}).await
}

/// [`a_started_game`] on an app whose configuration `adjust` changed.
async fn a_started_game_with(
    adjust: impl FnOnce(&mut horst_config::Config),
) -> (TestApp, Client, Vec<Client>, String, Vec<String>, u64) {
    let app = app_with(adjust).await;
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
    assert_eq!(snap.legal_actions.as_deref(), Some(&vec![json!("e4")]));

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_log_and_a_replay_of_the_version_before_read_on_beside_the_compact_forms() {
    let (app, host, agents, id, pids, after) = a_started_game().await;
    let events_path = format!("/api/v1/agent/sessions/{id}/events?since=0");
    let (st, ev) = agents[0].get(&events_path).await;
    assert_eq!(st, 200, "{ev}");
    let earlier_events = ev["events"].as_array().unwrap().clone();
    assert!(earlier_events.len() >= 3, "{ev}");
    let earlier_lines = app.rcadia.replay_lines(&id).await.unwrap();
    assert!(earlier_lines.len() >= 3, "{earlier_lines:?}");

    // Rewrite both the way the versions before stored them: each event as MessagePack
    // `[index, type, at ms, {field: value}]` with no tag and absolute times (names as text,
    // which they read too), each replay line as its JSON text.
    let events_key = app.store.key(&format!("ses:{id}:events"));
    let replay_key = app.store.key(&format!("ses:{id}:replay"));
    let mut pipe = redis::pipe();
    pipe.cmd("DEL").arg(&events_key).arg(&replay_key).ignore();
    for e in &earlier_events {
        let m = e.as_object().unwrap();
        let at = horst_dates::parse_rfc3339_ms(m["at"].as_str().unwrap()).unwrap();
        let fields: std::collections::BTreeMap<&str, &serde_json::Value> = m
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "index" | "type" | "at"))
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let stored = rmp_serde::to_vec(&(
            m["index"].as_u64().unwrap(),
            m["type"].as_str().unwrap(),
            at,
            fields,
        ))
        .unwrap();
        pipe.cmd("RPUSH").arg(&events_key).arg(stored).ignore();
    }
    for l in &earlier_lines {
        pipe.cmd("RPUSH")
            .arg(&replay_key)
            .arg(serde_json::to_vec(l).unwrap())
            .ignore();
    }
    let mut conn = app.store.conn();
    let _: () = pipe.query_async(&mut conn).await.unwrap();

    // It plays on (the events numbering on), the new entries in the compact forms.
    plays_on(&app, &host, &agents, &id, &pids, after).await;
    let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
        .arg(&events_key)
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(raw.len() > earlier_events.len());
    assert!(raw[earlier_events.len()..].iter().all(|e| e[0] == 0x01));

    // Both read back whole: the earlier entries as they were, the new ones after them.
    let (st, ev) = agents[0].get(&events_path).await;
    assert_eq!(st, 200, "{ev}");
    let events = ev["events"].as_array().unwrap();
    assert_eq!(&events[..earlier_events.len()], &earlier_events[..]);
    let action = events[earlier_events.len()..]
        .iter()
        .find(|e| e["type"] == "action")
        .unwrap_or_else(|| panic!("no action event after the upgrade: {ev}"));
    assert_eq!(action["playerId"], pids[0], "{action}");
    assert_eq!(action["status"], "applied", "{action}");
    assert!(action["reason"].is_null(), "{action}");
    let lines = app.rcadia.replay_lines(&id).await.unwrap();
    assert_eq!(&lines[..earlier_lines.len()], &earlier_lines[..]);
    let new: Vec<_> = lines[earlier_lines.len()..]
        .iter()
        .map(|l| serde_json::to_value(l).unwrap())
        .collect();
    let last_at = serde_json::to_value(earlier_lines.last().unwrap()).unwrap()["at"]
        .as_u64()
        .unwrap();
    assert!(new.iter().any(|l| l["kind"] == "action"), "{new:?}");
    for l in &new {
        let at = l["at"].as_u64().unwrap();
        assert!(
            at >= last_at && at < last_at + 60_000,
            "{l} after {last_at}"
        );
    }
}

/// A rolling upgrade (`sessions.write_previous_forms`): the new release writes what the
/// previous one reads, a stored base as it is (not deflated), events and replay lines without
/// the compact forms' tag, and still plays on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_upgrade_writes_what_the_previous_release_reads() {
    let (app, host, agents, id, pids, after) =
        a_started_game_with(|c| c.sessions.write_previous_forms = true).await;
    plays_on(&app, &host, &agents, &id, &pids, after).await;
    let mut conn = app.store.conn();
    let list = |key: String| {
        let mut conn = app.store.conn();
        async move {
            let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .unwrap();
            raw
        }
    };
    let events = list(app.store.key(&format!("ses:{id}:events"))).await;
    let lines = list(app.store.key(&format!("ses:{id}:replay"))).await;
    assert!(
        events.len() >= 4 && lines.len() >= 4,
        "{events:?} {lines:?}"
    );
    assert!(events.iter().all(|e| e[0] != 0x01), "{events:?}");
    assert!(lines.iter().all(|l| l[0] != 0x01), "{lines:?}");
    let base: Vec<u8> = redis::cmd("GET")
        .arg(app.store.key(&format!("ses:{id}:base")))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_ne!(base[0], b'z', "a base as it is, not deflated");
    // The previous release's record decoder: the base is the record's MessagePack.
    let _: horst_sessions::Session = rmp_serde::from_slice(&base).unwrap();
    // And this release reads all of it back.
    let (st, ev) = agents[0]
        .get(&format!("/api/v1/agent/sessions/{id}/events?since=0"))
        .await;
    assert_eq!(st, 200, "{ev}");
    assert_eq!(ev["events"].as_array().unwrap().len(), events.len(), "{ev}");
}

/// A finished game's replay can be kept shorter than its record (`replay_retention_hours`
/// from 1 h, the record 24 h). Once it is gone, a late write to the session (the rematch
/// link's line) made a new replay of that one line, which never expired: the replay stays
/// gone instead.
#[tokio::test]
async fn a_late_rematch_does_not_bring_back_an_expired_replay() {
    let (app, host, _agents, id, pids, _) = a_started_game().await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[0] } }]),
    )
    .await;
    let replay_key = app.store.key(&format!("ses:{id}:replay"));
    let mut conn = app.store.conn();
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&replay_key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(ttl > 0, "a finished game's replay expires: {ttl}");
    // Its retention ran out (the record's has not).
    let _: () = redis::cmd("DEL")
        .arg(&replay_key)
        .query_async(&mut conn)
        .await
        .unwrap();
    let (st, v) = host
        .post(
            &format!("{}/{id}/rematch", crate::rcadia_common::BRIDGE),
            json!({}),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&replay_key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(ttl, -2, "the replay came back (PTTL {ttl}; -1: for good)");
}
