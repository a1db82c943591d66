//! The RCADIA agent protocol v2 read line by line as an outside checker would: the exact
//! field sets of every answer the contract spells out, its limits at their boundaries, and
//! inputs a foreign client may send (whole floats, unicode names, extra fields).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::rcadia_common::*;

/// The keys of a JSON object, sorted.
fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn is_session_id(s: &str) -> bool {
    s.len() == 16
        && s.starts_with("ses_")
        && s[4..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// Section 3: `POST /sessions` is `201 { sessionId, config, skillUrl, round, seriesId,
/// players: [] }`, the id `ses_` and 12 hex, round 1 its own series; unknown fields of the
/// body and of the config are accepted and the config is echoed whole.
#[tokio::test]
async fn create_answers_the_contract_fields_and_echoes_the_config() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let config = two_player(json!({ "custom": { "board": 8 }, "maxTurnTimeouts": 3 }));
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": config, "gameId": "chess", "gameTitle": "Chess", "extra": 1 }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(
        keys(&v),
        set(&[
            "sessionId",
            "config",
            "skillUrl",
            "round",
            "seriesId",
            "players"
        ]),
        "{v}"
    );
    let id = v["sessionId"].as_str().unwrap_or_default();
    assert!(is_session_id(id), "{v}");
    assert_eq!(v["seriesId"], id, "{v}");
    assert_eq!(v["round"], 1, "{v}");
    assert_eq!(v["players"], json!([]), "{v}");
    assert_eq!(v["config"], config, "{v}");
    assert!(
        v["skillUrl"]
            .as_str()
            .is_some_and(|u| u.starts_with("http")),
        "{v}"
    );
}

/// Section 3: the bodies of `/ops`, `/pending-actions`, `/rematch` and the v1 endpoints, and
/// section 3's `Entry` shapes, key for key.
#[tokio::test]
async fn bridge_answers_and_entries_have_exactly_the_contract_fields() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    for a in &agents {
        a.join(&id).await;
    }
    let mut start = None;
    for _ in 0..20 {
        let (st, p) = host
            .get(&format!("{BRIDGE}/{id}/pending-actions?wait=2"))
            .await;
        assert_eq!(st, 200, "{p}");
        assert_eq!(
            keys(&p),
            set(&[
                "actions",
                "status",
                "round",
                "nextSessionId",
                "players",
                "result"
            ]),
            "{p}"
        );
        start = entries(&p).into_iter().find(|e| e["event"] == "game_start");
        if start.is_some() {
            break;
        }
    }
    let start = start.expect("game_start");
    assert_eq!(
        keys(&start),
        set(&["seq", "type", "event", "players", "round"]),
        "{start}"
    );
    assert_eq!(
        (start["type"].as_str(), start["round"].as_u64()),
        (Some("system"), Some(1))
    );
    let pids: Vec<String> = start["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| p.as_str().expect("a playerId").to_string())
        .collect();
    let after = start["seq"].as_u64().expect("seq");

    let v = host.give_turn(&id, &pids[0], json!(["x"])).await;
    assert_eq!(
        keys(&v),
        set(&[
            "ok",
            "status",
            "version",
            "round",
            "nextSessionId",
            "players"
        ]),
        "{v}"
    );
    assert_eq!(v["ok"], true, "{v}");
    let player = &v["players"][0];
    assert_eq!(
        keys(player),
        set(&["playerId", "seat", "asName", "ready"]),
        "{v}"
    );

    let turn = agents[0].state(&id, 0.0).await["turn"]
        .as_u64()
        .expect("turn");
    let (st, a) = agents[0].act(&id, json!("x"), turn).await;
    assert_eq!(st, 200, "{a}");
    let p = host.pending(&id, after, 0.0).await;
    let e = entries(&p).pop().expect("the action");
    assert_eq!(
        keys(&e),
        set(&["seq", "type", "playerId", "action", "actionId"]),
        "{e}"
    );
    assert_eq!(
        (e["type"].as_str(), &e["action"]),
        (Some("action"), &json!("x"))
    );

    // The v1 single-op endpoints answer `{ ok }`; reject-action and end `{ ok, nextSessionId? }`.
    for (path, body) in [
        ("state", json!({ "state": { "b": 1 } })),
        (
            "observation",
            json!({ "playerId": pids[0], "observation": {} }),
        ),
        (
            "legal-actions",
            json!({ "playerId": pids[1], "actions": ["y"] }),
        ),
    ] {
        let (st, v) = host
            .call("PATCH", &format!("{BRIDGE}/{id}/{path}"), Some(body))
            .await;
        assert_eq!((st, v.clone()), (200, json!({ "ok": true })), "{path}");
    }
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/reject-action"),
            json!({ "playerId": pids[1], "reason": "no" }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    assert!(keys(&v).is_subset(&set(&["ok", "nextSessionId"])), "{v}");
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/end"),
            json!({ "result": { "winner": null } }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    assert!(keys(&v).is_subset(&set(&["ok", "nextSessionId"])), "{v}");
    assert_eq!(v["ok"], true, "{v}");

    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        keys(&v),
        set(&["sessionId", "round", "seriesId", "players"]),
        "{v}"
    );
    assert_eq!(
        (v["round"].as_u64(), v["seriesId"].as_str()),
        (Some(2), Some(id.as_str()))
    );
}

/// Section 3: at most 100 ops a request: 100 are applied, 101 are `400 bad_request` naming
/// the limit, and none of them is applied.
#[tokio::test]
async fn one_hundred_ops_are_accepted_and_one_more_is_refused() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({}))).await;
    let batch = |n: usize| -> Value {
        let ops: Vec<Value> = (0..n)
            .map(|i| json!({ "op": "state", "state": { "i": i } }))
            .collect();
        json!({ "ops": ops })
    };
    let (st, v) = host.post(&format!("{BRIDGE}/{id}/ops"), batch(100)).await;
    assert_eq!(st, 200, "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["state"], json!({ "i": 99 }), "applied in order: {s}");
    let (st, v) = host.post(&format!("{BRIDGE}/{id}/ops"), batch(101)).await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
    assert!(v["error"].as_str().unwrap_or("").contains("100"), "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        s["state"],
        json!({ "i": 99 }),
        "nothing of the 101 applied: {s}"
    );
}

/// Section 5: `POST /action` is `200 { accepted, actionId, turn, outcome: "pending" }`; with
/// `?wait` the answer adds `snapshot` (also while still pending), `rejected` carries `reason`.
/// Every 409 is `{ error, code, snapshot }`, `__` types `400 reserved_action`.
#[tokio::test]
async fn action_answers_and_refusals_have_the_contract_fields() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    agents[0].join(&id).await;
    let act = format!("{AGENT}/{id}/action");
    let refusal = |v: &Value, code: &str| {
        assert_eq!(v["code"], code, "{v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
        assert!(
            v["snapshot"]["playerId"].is_string(),
            "{code} has a snapshot: {v}"
        );
    };
    // Before the game starts.
    let (st, v) = agents[0].post(&act, json!({ "action": "x" })).await;
    assert_eq!(st, 409, "{v}");
    refusal(&v, "not_active");
    agents[1].join(&id).await;
    let mut after = 0;
    for _ in 0..20 {
        let p = host.pending(&id, after, 2.0).await;
        after = max_seq(&p, after);
        if entries(&p).iter().any(|e| e["event"] == "game_start") {
            break;
        }
    }
    let mut pids = Vec::new();
    for a in &agents {
        pids.push(
            a.state(&id, 0.0).await["playerId"]
                .as_str()
                .expect("playerId")
                .to_string(),
        );
    }
    host.give_turn(&id, &pids[0], json!([{ "type": "move" }]))
        .await;
    let turn = agents[0].state(&id, 0.0).await["turn"]
        .as_u64()
        .expect("turn");
    let (st, v) = agents[1]
        .post(&act, json!({ "action": { "type": "move" }, "turn": turn }))
        .await;
    assert_eq!(st, 409, "{v}");
    refusal(&v, "not_your_turn");
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": { "type": "move" }, "turn": turn + 1 }),
        )
        .await;
    assert_eq!(st, 409, "{v}");
    refusal(&v, "stale_turn");
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": { "type": "__game_start__" }, "turn": turn }),
        )
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("reserved_action")),
        "{v}"
    );
    assert!(v["error"].is_string(), "{v}");

    // Accepted: exactly the four fields; extra body fields are ignored.
    let (st, v) = agents[0]
        .post(
            &act,
            json!({ "action": { "type": "move" }, "turn": turn, "note": "hi" }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        keys(&v),
        set(&["accepted", "actionId", "turn", "outcome"]),
        "{v}"
    );
    assert_eq!(
        (v["accepted"].as_bool(), v["outcome"].as_str()),
        (Some(true), Some("pending"))
    );
    assert_eq!(v["turn"], turn, "{v}");
    let aid = v["actionId"].as_str().expect("actionId").to_string();
    let (st, v) = agents[0]
        .post(&act, json!({ "action": { "type": "move" }, "turn": turn }))
        .await;
    assert_eq!(st, 409, "{v}");
    refusal(&v, "action_pending");

    // Rejected, seen through `?wait`: outcome, reason and the snapshot.
    let p = host.pending(&id, after, 0.0).await;
    after = max_seq(&p, after);
    host.ops(
        &id,
        json!([{ "op": "reject", "playerId": pids[0], "reason": "illegal", "actionId": aid }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "rejected", "{s}");
    // Pending after a short wait (the game stays silent): still with the snapshot.
    let (st, v) = agents[0]
        .post(
            &format!("{act}?wait=0.3"),
            json!({ "action": { "type": "move" }, "turn": turn }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["outcome"], "pending", "{v}");
    assert!(v["snapshot"]["playerId"].is_string(), "{v}");
    let aid = v["actionId"].as_str().expect("actionId").to_string();
    let p = host.pending(&id, after, 0.0).await;
    after = max_seq(&p, after);
    host.ops(
        &id,
        json!([{ "op": "reject", "playerId": pids[0], "reason": "again", "actionId": aid }]),
    )
    .await;
    // Rejected while the agent waits on `?wait`: the outcome, its reason and the snapshot.
    let waiting = {
        let (a, url) = (agents[0].clone(), format!("{act}?wait=10"));
        tokio::spawn(async move {
            a.post(&url, json!({ "action": { "type": "move" }, "turn": turn }))
                .await
        })
    };
    let mut aid = None;
    for _ in 0..20 {
        let p = host.pending(&id, after, 2.0).await;
        after = max_seq(&p, after);
        aid = entries(&p)
            .iter()
            .find_map(|e| e["actionId"].as_str().map(str::to_string));
        if aid.is_some() {
            break;
        }
    }
    host.ops(
        &id,
        json!([{ "op": "reject", "playerId": pids[0], "reason": { "why": "again" }, "actionId": aid }]),
    )
    .await;
    let (st, v) = waiting.await.expect("the action's task");
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        keys(&v),
        set(&["accepted", "actionId", "turn", "outcome", "reason", "snapshot"]),
        "{v}"
    );
    assert_eq!(
        (v["outcome"].as_str(), &v["reason"]),
        (Some("rejected"), &json!({ "why": "again" })),
        "{v}"
    );
    assert_eq!(v["snapshot"]["yourTurn"], true, "back on turn: {v}");

    // Finished.
    host.ops(&id, json!([{ "op": "end", "result": { "winner": null } }]))
        .await;
    let (st, v) = agents[0]
        .post(&act, json!({ "action": { "type": "move" } }))
        .await;
    assert_eq!(st, 409, "{v}");
    refusal(&v, "finished");
}

/// Section 5: `?wait=<0..25>` on every long-poll: a value over 25 is served (capped), a
/// negative one or a word is `400 bad_request` saying the range.
#[tokio::test]
async fn wait_outside_its_range_is_capped_or_refused_on_every_long_poll() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(&id, json!([{ "op": "end", "result": { "winner": null } }]))
        .await;
    let urls = [
        format!("{AGENT}/{id}/state"),
        format!("{AGENT}/{id}/events"),
        format!("{AGENT}/{id}/public"),
        format!("{BRIDGE}/{id}/pending-actions"),
    ];
    for url in &urls {
        let client = if url.starts_with(BRIDGE) {
            &host
        } else {
            &agents[0]
        };
        let t0 = Instant::now();
        let (st, v) = client.get(&format!("{url}?wait=1000")).await;
        assert_eq!(st, 200, "{url}: {v}");
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{url}: waited {:?}",
            t0.elapsed()
        );
        for bad in ["-1", "soon"] {
            let (st, v) = client.get(&format!("{url}?wait={bad}")).await;
            assert_eq!(
                (st, v["code"].as_str()),
                (400, Some("bad_request")),
                "{url} {bad}: {v}"
            );
            assert!(v["error"].as_str().unwrap_or("").contains("25"), "{v}");
        }
    }
}

/// Section 7: `/available` entries and the `/public` view, key for key (the view with horst's
/// one addition, `maxPlayers`); `host` is `"agent"` for a host token; `createdAt` is an ISO
/// time.
#[tokio::test]
async fn available_and_public_have_exactly_the_contract_fields() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    agents[0].join(&id).await;
    let (st, v) = agents[1].get(&format!("{AGENT}/available")).await;
    assert_eq!(st, 200, "{v}");
    let e = v["sessions"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["sessionId"] == id.as_str()))
        .cloned()
        .expect("listed");
    assert_eq!(
        keys(&e),
        set(&[
            "sessionId",
            "gameId",
            "gameTitle",
            "gameSlug",
            "skillUrl",
            "status",
            "joinable",
            "reserved",
            "currentPlayers",
            "minPlayers",
            "maxPlayers",
            "round",
            "host",
            "createdAt",
            "config",
        ]),
        "{e}"
    );
    assert_eq!(
        (
            e["host"].as_str(),
            e["currentPlayers"].as_u64(),
            e["joinable"].as_bool(),
            e["reserved"].as_bool(),
            e["status"].as_str()
        ),
        (
            Some("agent"),
            Some(1),
            Some(true),
            Some(false),
            Some("waiting")
        ),
        "{e}"
    );
    let at = e["createdAt"].as_str().unwrap_or_default();
    assert!(
        at.len() == 24 && at.ends_with('Z') && at.as_bytes()[10] == b'T',
        "{e}"
    );
    agents[1].join(&id).await;
    let (st, v) = agents[1].get(&format!("{AGENT}/{id}/public")).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        keys(&v),
        set(&[
            "sessionId",
            "gameId",
            "gameTitle",
            "status",
            "round",
            "seriesId",
            "turn",
            "deadline",
            "onTurnSeats",
            "players",
            "state",
            "result",
            "version",
            "nextSessionId",
            "previousSessionId",
            // horst's one addition to section 7's shape: the seat count, for the spectator
            // page's open seats (additive: a client of the contract ignores it).
            "maxPlayers",
        ]),
        "{v}"
    );
}

/// Section 5: names in any script are seated as given (join and the snapshot's players).
#[tokio::test]
async fn unicode_names_are_seated_as_given() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    for name in ["Müller 🐟", "李雷", "שלום", "Zoë-Ångström"] {
        let id = host.create(two_player(json!({}))).await;
        let (st, v) = agents[0]
            .post(
                &format!("{AGENT}/{id}/join"),
                json!({ "asName": name, "extra": true }),
            )
            .await;
        assert_eq!(st, 200, "{v}");
        assert_eq!(v["players"][0]["asName"], name, "{v}");
        let (_, p) = agents[0].get(&format!("{AGENT}/{id}/public")).await;
        assert_eq!(p["players"][0]["asName"], name, "{p}");
    }
}

/// Section 2/4: a config whose numbers are written as whole floats (`2.0`: a host whose JSON
/// library reads every number as a double) is the same config: the table opens with those
/// numbers, as a `turn` of `7.0` is turn 7.
#[tokio::test]
async fn a_config_with_whole_numbers_written_as_floats_opens_the_table() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let config = two_player(
        json!({ "minPlayers": 2.0, "maxPlayers": 3.0, "maxTurnTimeouts": 2.0, "turnTimeout": 30.0 }),
    );
    let (st, v) = host.post(BRIDGE, json!({ "config": config })).await;
    assert_eq!(st, 201, "{v}");
    let id = v["sessionId"].as_str().expect("sessionId").to_string();
    let (_, list) = host.get(&format!("{AGENT}/available")).await;
    let e = list["sessions"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["sessionId"] == id.as_str()))
        .cloned()
        .expect("listed");
    assert_eq!(
        (e["minPlayers"].as_u64(), e["maxPlayers"].as_u64()),
        (Some(2), Some(3)),
        "{e}"
    );
    // A fraction is still no player count.
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": two_player(json!({ "minPlayers": 1.5 })) }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
}

/// Section 4: the forfeit result of a timeout is `{ winner, reason: "timeout", forfeitedBy,
/// strikes }`, in the snapshot and in the host's `session_end`.
#[tokio::test]
async fn a_timeout_forfeit_result_carries_its_strikes() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 0.3, "maxTurnTimeouts": 1 })),
    )
    .await;
    host.give_turn(&id, &pids[1], json!(["x"])).await;
    let (end, timeouts) = host.until_session_end(&id, after).await;
    assert_eq!(timeouts.len(), 1, "{timeouts:?}");
    assert_eq!(
        keys(&timeouts[0]),
        set(&["seq", "type", "playerId", "strike", "maxStrikes", "final"]),
        "{timeouts:?}"
    );
    assert_eq!(
        (
            timeouts[0]["strike"].as_u64(),
            timeouts[0]["maxStrikes"].as_u64(),
            timeouts[0]["final"].as_bool()
        ),
        (Some(1), Some(1), Some(true))
    );
    assert_eq!(
        keys(&end),
        set(&["seq", "type", "event", "result", "reason"]),
        "{end}"
    );
    let r = &end["result"];
    assert_eq!(
        (
            r["winner"].as_str(),
            r["reason"].as_str(),
            r["forfeitedBy"].as_str(),
            r["strikes"].as_u64()
        ),
        (
            Some(pids[0].as_str()),
            Some("timeout"),
            Some(pids[1].as_str()),
            Some(1)
        ),
        "{end}"
    );
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(&s["result"], r, "{s}");
    assert_eq!(
        (s["yourTurn"].as_bool(), &s["legalActions"]),
        (Some(false), &Value::Null),
        "{s}"
    );
    // An action after the end is `409 finished`, whoever sends it.
    for a in &agents {
        let (st, v) = a
            .post(&format!("{AGENT}/{id}/action"), json!({ "action": "x" }))
            .await;
        assert_eq!((st, v["code"].as_str()), (409, Some("finished")), "{v}");
    }
}

fn is_hex_id(s: &str, prefix: &str, hex: usize) -> bool {
    s.len() == prefix.len() + hex
        && s.starts_with(prefix)
        && s[prefix.len()..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// Section 1 and 5: `playerId` is `p_` and 8 hex, `lastAction.at` an ISO time, `deadline`
/// `null` without a clock (in the snapshot and the public view) and an ISO time with one.
#[tokio::test]
async fn ids_and_times_have_the_contract_forms() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    for p in &pids {
        assert!(is_hex_id(p, "p_", 8), "{p}");
    }
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["deadline"], Value::Null, "no clock: {s}");
    let (_, p) = agents[0].get(&format!("{AGENT}/{id}/public")).await;
    assert_eq!(p["deadline"], Value::Null, "{p}");
    assert_eq!(p["onTurnSeats"], json!([0]), "{p}");
    let (st, v) = agents[0]
        .act(&id, json!("x"), s["turn"].as_u64().unwrap_or(0))
        .await;
    assert_eq!(st, 200, "{v}");
    let s = agents[0].state(&id, 0.0).await;
    let at = s["lastAction"]["at"].as_str().unwrap_or_default();
    assert!(at.len() == 24 && at.ends_with('Z'), "{s}");
    assert_eq!(s["lastAction"]["reason"], Value::Null, "{s}");
    assert_eq!(s["waitingFor"], "host", "pending: {s}");
    let (id, pids, _) = started(&host, &agents, two_player(json!({ "turnTimeout": 60 }))).await;
    host.give_turn(&id, &pids[1], json!(["x"])).await;
    for a in &agents {
        let s = a.state(&id, 0.0).await;
        let d = s["deadline"].as_str().unwrap_or_default();
        assert!(d.len() == 24 && d.ends_with('Z'), "{s}");
    }
    let (_, p) = agents[0].get(&format!("{AGENT}/{id}/public")).await;
    assert!(p["deadline"].is_string(), "{p}");
}

/// Section 7: `410 server_restarted` for an id of another boot tag on every route (agent,
/// spectator and bridge alike), `404 not_found` for one of this tag that never existed.
#[tokio::test]
async fn a_lost_session_is_410_and_an_unknown_one_404_on_every_route() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    let id = host.create(two_player(json!({}))).await;
    let tag = &id[4..8];
    let other = if tag == "0000" { "0001" } else { "0000" };
    for (sid, status, code) in [
        (format!("ses_{other}abcdef01"), 410, "server_restarted"),
        (format!("ses_{tag}abcdef01"), 404, "not_found"),
    ] {
        let agent_calls = [
            ("POST", format!("{AGENT}/{sid}/join")),
            ("GET", format!("{AGENT}/{sid}/state")),
            ("POST", format!("{AGENT}/{sid}/action")),
            ("POST", format!("{AGENT}/{sid}/leave")),
            ("GET", format!("{AGENT}/{sid}/events")),
            ("GET", format!("{AGENT}/{sid}/public")),
        ];
        for (m, url) in agent_calls {
            let body = (m == "POST").then(|| json!({ "action": "x" }));
            let (st, v) = agents[0].call(m, &url, body).await;
            assert_eq!(
                (st, v["code"].as_str()),
                (status, Some(code)),
                "{m} {url}: {v}"
            );
            assert!(v["error"].is_string(), "{v}");
        }
        let host_calls = [
            (
                "POST",
                format!("{BRIDGE}/{sid}/ops"),
                Some(json!({ "ops": [] })),
            ),
            ("GET", format!("{BRIDGE}/{sid}/pending-actions"), None),
            ("POST", format!("{BRIDGE}/{sid}/rematch"), Some(json!({}))),
            (
                "PATCH",
                format!("{BRIDGE}/{sid}/state"),
                Some(json!({ "state": {} })),
            ),
            (
                "POST",
                format!("{BRIDGE}/{sid}/end"),
                Some(json!({ "result": {} })),
            ),
        ];
        for (m, url, body) in host_calls {
            let (st, v) = host.call(m, &url, body).await;
            assert_eq!(
                (st, v["code"].as_str()),
                (status, Some(code)),
                "{m} {url}: {v}"
            );
        }
    }
}

/// Section 4: "winner: <other player in a 2-player game, else null>": a timeout forfeit of a
/// three-player game has no winner, and still names who forfeited.
#[tokio::test]
async fn a_timeout_forfeit_of_three_players_has_no_winner() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 3).await;
    let (id, pids, after) = started(
        &host,
        &agents,
        two_player(
            json!({ "minPlayers": 3, "maxPlayers": 3, "turnTimeout": 0.3, "maxTurnTimeouts": 1 }),
        ),
    )
    .await;
    host.give_turn(&id, &pids[2], json!(["x"])).await;
    let (end, _) = host.until_session_end(&id, after).await;
    let r = &end["result"];
    assert_eq!(
        (
            &r["winner"],
            r["forfeitedBy"].as_str(),
            r["reason"].as_str()
        ),
        (&Value::Null, Some(pids[2].as_str()), Some("timeout")),
        "{end}"
    );
}

/// Section 3 and 6: `POST /end` of an `autoRematch` game answers the next round's id
/// (`{ ok, nextSessionId }`); an `end` with reason `host_left` opens none and a rematch of it
/// is refused; a v1 game (no `sdkVersion`) gets none even with `autoRematch`.
#[tokio::test]
async fn the_end_answers_the_next_round_unless_the_host_left_or_the_game_is_v1() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/end"),
            json!({ "result": { "winner": null } }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    let next = v["nextSessionId"].as_str().unwrap_or_default();
    assert!(is_session_id(next), "{v}");
    let s = agents[1].state(next, 0.0).await;
    assert_eq!(
        (
            s["round"].as_u64(),
            s["seriesId"].as_str(),
            s["previousSessionId"].as_str()
        ),
        (Some(2), Some(id.as_str()), Some(id.as_str())),
        "{s}"
    );

    let (id, _, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    let v = host
        .ops(
            &id,
            json!([{ "op": "end", "result": { "winner": null }, "reason": "host_left" }]),
        )
        .await;
    assert_eq!(
        (v["status"].as_str(), &v["nextSessionId"]),
        (Some("finished"), &Value::Null),
        "{v}"
    );
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("host_left")), "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["nextSessionId"], Value::Null, "{s}");

    let mut legacy = two_player(json!({ "autoRematch": true }));
    legacy.as_object_mut().map(|m| m.remove("sdkVersion"));
    let (id, _, _) = started(&host, &agents, legacy).await;
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/end"),
            json!({ "result": { "winner": null } }),
        )
        .await;
    assert_eq!((st, v.get("nextSessionId")), (200, None), "{v}");
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("legacy_session")),
        "{v}"
    );
}

/// Section 1 and 6: a one-seat game starts on its one join, and the player plays it.
#[tokio::test]
async fn a_one_seat_game_starts_on_its_join() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    let (id, pids, after) = started(
        &host,
        &agents,
        two_player(json!({ "minPlayers": 1, "maxPlayers": 1 })),
    )
    .await;
    host.give_turn(&id, &pids[0], json!(["go"])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        (s["status"].as_str(), s["yourTurn"].as_bool()),
        (Some("active"), Some(true)),
        "{s}"
    );
    let (st, v) = agents[0]
        .act(&id, json!("go"), s["turn"].as_u64().unwrap_or(0))
        .await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 0.0).await;
    assert_eq!(entries(&p).len(), 1, "{p}");
}

/// `/events?since&wait` is a real long-poll (section 5): it holds while nothing new is
/// logged and answers as soon as something is.
#[tokio::test]
async fn events_wait_for_the_next_event_and_answer_it() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let (st, page) = agents[1].get(&format!("{AGENT}/{id}/events")).await;
    assert_eq!(st, 200, "{page}");
    assert_eq!(keys(&page), set(&["events", "first", "next"]), "{page}");
    let next = page["next"].as_u64().expect("next");
    let t0 = Instant::now();
    let poll = {
        let (a, url) = (
            agents[1].clone(),
            format!("{AGENT}/{id}/events?since={next}&wait=20"),
        );
        tokio::spawn(async move { a.get(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let s = agents[0].state(&id, 0.0).await;
    let (st, v) = agents[0]
        .act(&id, json!("x"), s["turn"].as_u64().unwrap_or(0))
        .await;
    assert_eq!(st, 200, "{v}");
    let p = host.pending(&id, after, 0.0).await;
    after = max_seq(&p, after);
    host.give_turn(&id, &pids[1], json!(["y"])).await;
    let (st, v) = poll.await.expect("the poll");
    assert_eq!(st, 200, "{v}");
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "{:?}: {v}",
        t0.elapsed()
    );
    assert!(
        !v["events"].as_array().map(Vec::is_empty).unwrap_or(true),
        "{v}"
    );
    let _ = after;
}

/// Sections 5-7 on a reserved rematch: listed only with `?all=1` (`reserved: true`,
/// `joinable: false`), a newcomer's join is `409 reserved`, a seated player's join answers
/// its same seat and `playerId` (and readies it), and the snapshot says `waiting` for
/// `players` in round 2. `?all=1` lists active tables too; finished ones never.
#[tokio::test]
async fn a_reserved_rematch_is_listed_with_all_and_held_for_its_players() {
    let app = app_with(|c| c.sessions.reservation_seconds = 30).await;
    let (host, agents) = cast(&app, 3).await;
    let (old, pids, next) = ended_into_rematch(&host, &agents, json!({ "winner": null })).await;
    let find = |v: &Value, id: &str| {
        v["sessions"]
            .as_array()
            .and_then(|l| l.iter().find(|e| e["sessionId"] == id))
            .cloned()
    };
    let (_, v) = agents[2].get(&format!("{AGENT}/available")).await;
    assert_eq!(find(&v, &next), None, "{v}");
    let (_, v) = agents[2].get(&format!("{AGENT}/available?all=1")).await;
    let e = find(&v, &next).unwrap_or_else(|| panic!("listed with all=1: {v}"));
    assert_eq!(
        (
            e["reserved"].as_bool(),
            e["joinable"].as_bool(),
            e["round"].as_u64()
        ),
        (Some(true), Some(false), Some(2)),
        "{e}"
    );
    assert_eq!(
        find(&v, &old),
        None,
        "a finished session is never listed: {v}"
    );
    let (st, v) = agents[2]
        .post(&format!("{AGENT}/{next}/join"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("reserved")), "{v}");
    let s = agents[0].join(&next).await;
    assert_eq!(
        (
            s["playerId"].as_str(),
            s["seat"].as_u64(),
            s["round"].as_u64()
        ),
        (Some(pids[0].as_str()), Some(0), Some(2)),
        "{s}"
    );
    assert_eq!(
        (s["status"].as_str(), s["waitingFor"].as_str()),
        (Some("waiting"), Some("players")),
        "{s}"
    );
    assert_eq!(s["players"][0]["ready"], true, "{s}");
    assert_eq!(s["players"][1]["ready"], false, "{s}");
    // The other player's long-poll readies it; the round starts.
    let s = agents[1].state(&next, 5.0).await;
    assert_eq!(s["playerId"], pids[1].as_str(), "{s}");
    let mut status = String::new();
    for _ in 0..20 {
        let p = host.pending(&next, 0, 2.0).await;
        status = p["status"].as_str().unwrap_or_default().to_string();
        if status == "active" {
            break;
        }
    }
    assert_eq!(status, "active");
    let (_, v) = agents[2].get(&format!("{AGENT}/available?all=1")).await;
    let e = find(&v, &next).unwrap_or_else(|| panic!("an active table is listed with all=1: {v}"));
    assert_eq!(
        (e["status"].as_str(), e["joinable"].as_bool()),
        (Some("active"), Some(false)),
        "{e}"
    );
    let (st, v) = agents[2]
        .post(&format!("{AGENT}/{next}/join"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("in_progress")), "{v}");
}

/// Section 4 at the edge of the clock: an action sent as the deadline passes is either
/// accepted (then the player is off the clock: no strike follows while it is pending) or
/// refused `409 finished` because the final strike came first, never both: a game that ended
/// on time never got the move, and a move accepted in time is never forfeited for.
#[tokio::test]
async fn an_action_at_the_deadline_is_either_in_time_or_refused_never_both() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..8u64 {
        let (id, pids, after) = started(
            &host,
            &agents,
            two_player(json!({ "turnTimeout": 0.4, "maxTurnTimeouts": 1 })),
        )
        .await;
        host.give_turn(&id, &pids[0], json!(["x"])).await;
        let s = agents[0].state(&id, 0.0).await;
        let turn = s["turn"].as_u64().unwrap_or(0);
        // Keep the host alive (its clock runs only then) while the deadline comes.
        let poll = {
            let (h, url) = (
                host.clone(),
                format!("{BRIDGE}/{id}/pending-actions?after={after}&wait=3"),
            );
            tokio::spawn(async move { h.get(&url).await })
        };
        tokio::time::sleep(Duration::from_millis(330 + i * 20)).await;
        let (st, v) = agents[0].act(&id, json!("x"), turn).await;
        let _ = poll.await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        let s = agents[1].state(&id, 0.0).await;
        match st {
            200 => {
                accepted += 1;
                assert_eq!(s["status"], "active", "accepted, then forfeited: {v} {s}");
                let p = host.pending(&id, after, 0.0).await;
                assert!(
                    entries(&p).iter().any(|e| e["type"] == "action"),
                    "the accepted move reaches the game: {p}"
                );
            }
            409 => {
                refused += 1;
                assert_eq!(v["code"], "finished", "{v}");
                assert_eq!(s["result"]["forfeitedBy"], pids[0].as_str(), "{s}");
                let p = host.pending(&id, after, 0.0).await;
                assert!(
                    !entries(&p).iter().any(|e| e["type"] == "action"),
                    "a refused move never reaches the game: {p}"
                );
            }
            _ => panic!("{st}: {v}"),
        }
    }
    eprintln!("at the deadline: {accepted} accepted, {refused} refused");
}

/// An action racing the host's `end`: accepted before it (then taken back out of the host's
/// queue, `unconfirmed`: it never reached the game) or `409 finished` after it; the host
/// never gets a move after the game it ended.
#[tokio::test]
async fn an_action_racing_the_end_never_reaches_the_game_after_it() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    for _ in 0..6 {
        let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
        host.give_turn(&id, &pids[0], json!(["x"])).await;
        let turn = agents[0].state(&id, 0.0).await["turn"]
            .as_u64()
            .unwrap_or(0);
        let act = {
            let a = agents[0].clone();
            let id = id.clone();
            tokio::spawn(async move { a.act(&id, json!("x"), turn).await })
        };
        let v = host
            .ops(&id, json!([{ "op": "end", "result": { "winner": null } }]))
            .await;
        assert_eq!(v["status"], "finished", "{v}");
        let (st, a) = act.await.expect("the action's task");
        let p = host.pending(&id, after, 0.0).await;
        assert!(
            !entries(&p).iter().any(|e| e["type"] == "action"),
            "{st} {a}: a move after the end reached the game: {p}"
        );
        let s = agents[0].state(&id, 0.0).await;
        match st {
            200 => assert_eq!(s["lastAction"]["status"], "unconfirmed", "{s}"),
            _ => assert_eq!((st, a["code"].as_str()), (409, Some("finished")), "{a}"),
        }
    }
}

/// Milliseconds since the epoch of an ISO time `YYYY-MM-DDTHH:MM:SS.mmmZ` (same day only
/// matters here: the difference of two deadlines a second apart).
fn iso_ms(s: &str) -> Option<i64> {
    let t = s.get(11..23)?;
    let h: i64 = t.get(0..2)?.parse().ok()?;
    let m: i64 = t.get(3..5)?.parse().ok()?;
    let sec: i64 = t.get(6..8)?.parse().ok()?;
    let ms: i64 = t.get(9..12)?.parse().ok()?;
    let day: i64 = s.get(8..10)?.parse().ok()?;
    Some((((day * 24 + h) * 60 + m) * 60 + sec) * 1000 + ms)
}

/// Section 4: `deadline = turnStartedAt + turnTimeout * (strikesThisTurn + 1)`: after the
/// warning strike the deadline is exactly one `turnTimeout` later, the snapshot counts the
/// strike, and the final strike comes at that deadline.
#[tokio::test]
async fn the_warning_strike_moves_the_deadline_by_exactly_one_turn_timeout() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 1, "maxTurnTimeouts": 2 })),
    )
    .await;
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let s = agents[0].state(&id, 0.0).await;
    let d1 = iso_ms(s["deadline"].as_str().unwrap_or_default()).expect("a deadline");
    assert_eq!(
        (s["strikes"].as_u64(), s["maxStrikes"].as_u64()),
        (Some(0), Some(2)),
        "{s}"
    );
    let t0 = Instant::now();
    let mut strikes = Vec::new();
    while strikes.len() < 2 && t0.elapsed() < Duration::from_secs(20) {
        let p = host.pending(&id, after, 3.0).await;
        after = max_seq(&p, after);
        for e in entries(&p).into_iter().filter(|e| e["type"] == "timeout") {
            if strikes.is_empty() {
                let s = agents[0].state(&id, 0.0).await;
                assert_eq!(
                    (s["strikes"].as_u64(), s["yourTurn"].as_bool()),
                    (Some(1), Some(true)),
                    "{s}"
                );
                let d2 = iso_ms(s["deadline"].as_str().unwrap_or_default()).expect("a deadline");
                assert_eq!(d2 - d1, 1000, "{s}");
            }
            strikes.push(e);
        }
    }
    assert_eq!(
        strikes
            .iter()
            .map(|e| (e["strike"].as_u64(), e["final"].as_bool()))
            .collect::<Vec<_>>(),
        vec![(Some(1), Some(false)), (Some(2), Some(true))],
        "{strikes:?}"
    );
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(
        (s["status"].as_str(), s["result"]["strikes"].as_u64()),
        (Some("finished"), Some(2)),
        "{s}"
    );
}
