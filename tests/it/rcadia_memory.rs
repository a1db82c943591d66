//! What a live RCADIA session holds in Redis (issue 36, item 3): every key a session, its
//! seats and its tokens create, by `MEMORY USAGE`, after a game played over HTTP the way the
//! sessions benchmark plays it (`benches/sessions.rs`: a host and two agents, the host
//! publishing a state and the legal actions each turn), once seated and started and after
//! 25 action cycles, the benchmark's typical game in its 15 s window. The test fails if the
//! bytes grow back above the budget (docs/scaling.md, "Bytes per live session").

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::rcadia_common::*;

/// Bytes a live session may hold (its own keys and what it adds to the shared sets), seated
/// and started, and after 25 cycles. Measured at 1,608 and 4,552-4,968 (2026-12-03); they
/// were 1,848 and 6,856 before the event log, the replay and the base were stored compact
/// (docs/scaling.md, "Bytes per live session"). The margin is for timing: a replay line's
/// time and an action's submission take 1 or 3 bytes, and where the record was last rebased
/// decides the base, so the replay or the base may tip into the next allocation size class.
const BUDGET_SEATED: u64 = 1_750;
const BUDGET_PLAYED: u64 = 5_200;

/// Every key with its `MEMORY USAGE` (SAMPLES 0: the whole value).
async fn usage_by_key(conn: &mut redis::aio::MultiplexedConnection) -> BTreeMap<String, u64> {
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(conn).await.unwrap();
    let mut out = BTreeMap::new();
    for k in keys {
        let bytes: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&k)
            .arg("SAMPLES")
            .arg(0)
            .query_async(conn)
            .await
            .unwrap();
        out.insert(k, bytes.unwrap_or(0));
    }
    out
}

/// The keys `keep` names that are new or changed since `before`, with their growth, and
/// the total.
fn growth(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    keep: impl Fn(&str) -> bool,
) -> (Vec<String>, u64) {
    let mut lines = Vec::new();
    let mut total = 0;
    for (k, b) in after.iter().filter(|(k, _)| keep(k)) {
        let was = before.get(k).copied().unwrap_or(0);
        if *b != was {
            let d = *b as i64 - was as i64;
            total += d;
            lines.push(format!("  {k}: {d:+} ({b})"));
        }
    }
    (lines, total.max(0) as u64)
}

#[tokio::test]
async fn a_live_session_stays_within_its_memory_budget() {
    if crate::harness::on_cluster() {
        // The budget is one server's (KEYS and MEMORY USAGE on one connection).
        return;
    }
    let app = app_with(|_| {}).await;
    let client = redis::Client::open(app.redis_url.as_str()).unwrap();
    let mut probe = client.get_multiplexed_async_connection().await.unwrap();
    let empty = usage_by_key(&mut probe).await;
    let (host, agents) = cast(&app, 2).await;
    let with_tokens = usage_by_key(&mut probe).await;
    let (token_lines, tokens) = growth(&empty, &with_tokens, |k| k.contains("auth:token:"));

    // A first session, so the shared keys (the open set, the delayed set) exist and what a
    // session adds to them is its members alone.
    let config = json!({
        "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0",
        "gameType": "bench", "turnTimeout": 0, "maxTurnTimeouts": 100_000
    });
    let (first, _, _) = started(&host, &agents, config.clone()).await;
    let _ = host
        .ops(&first, json!([{ "op": "state", "state": { "on": 0 } }]))
        .await;
    let before = usage_by_key(&mut probe).await;

    let (id, pids, mut after) = started(&host, &agents, config).await;
    let publish = |on: usize| {
        json!([
            { "op": "state", "state": { "on": on } },
            { "op": "legal_actions", "playerId": pids[on], "actions": [{ "type": "move" }] }
        ])
    };
    let mut on = 0;
    host.ops(&id, publish(on)).await;
    // The session's own keys and the shared sets it adds members to (nothing else: the
    // process's own keys change now and then).
    let session =
        |k: &str| k.contains(&id) || k.ends_with("delayed") || k.ends_with("sessions:open");
    let seated = usage_by_key(&mut probe).await;
    let (seated_lines, seated_total) = growth(&before, &seated, session);

    for n in 0..25u64 {
        let s = agents[on].state(&id, 5.0).await;
        assert_eq!(s["yourTurn"], true, "{s}");
        let turn = s["turn"].as_u64().unwrap();
        let (st, v) = agents[on]
            .act(
                &id,
                json!({ "type": "move", "t": 1_780_000_000_000_000u64 + n }),
                turn,
            )
            .await;
        assert_eq!(st, 200, "{v}");
        let p = host.pending(&id, after, 5.0).await;
        assert!(!entries(&p).is_empty(), "{p}");
        after = max_seq(&p, after);
        on = 1 - on;
        host.ops(&id, publish(on)).await;
    }
    let played = usage_by_key(&mut probe).await;

    // What is stored compact reads back whole: the event log (`GET /events`) and the replay.
    let (st, events) = agents[0].get(&format!("{AGENT}/{id}/events")).await;
    assert_eq!(st, 200, "{events}");
    let text = events.to_string();
    let actions: Vec<&Value> = events["events"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"))
        .iter()
        .filter(|e| e["type"] == "action")
        .collect();
    assert_eq!(actions.len(), 25, "{text}");
    for e in &actions {
        assert_eq!(e["status"], "applied", "{e}");
        assert!(e["reason"].is_null() && e.get("reason").is_some(), "{e}");
        assert!(
            pids.contains(&e["playerId"].as_str().unwrap().to_string()),
            "{e}"
        );
        let aid = e["actionId"].as_str().unwrap();
        assert!(aid.starts_with("a_") && aid.len() == 18, "{e}");
        assert!(e["at"].as_str().unwrap().starts_with("20"), "{e}");
    }
    // (A live game's replay is not served yet: read it as the server does.)
    let lines: Vec<Value> = app
        .rcadia
        .replay_lines(&id)
        .await
        .unwrap()
        .iter()
        .map(|l| serde_json::to_value(l).unwrap())
        .collect();
    let start = lines[0]["at"].as_u64().unwrap();
    assert_eq!(lines[0]["kind"], "start", "{lines:?}");
    let moves: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "action").collect();
    assert_eq!(moves.len(), 25, "{lines:?}");
    for l in &lines {
        let at = l["at"].as_u64().unwrap();
        assert!(
            at >= start && at < start + 600_000,
            "{l} (the start at {start})"
        );
    }
    for (n, m) in moves.iter().enumerate() {
        assert_eq!(m["action"]["t"], 1_780_000_000_000_000u64 + n as u64, "{m}");
        assert!(m["submittedAt"].as_u64().unwrap() >= start, "{m}");
    }
    // `MEM_DUMP=1`: what the session's keys hold, entry by entry.
    if std::env::var("MEM_DUMP").is_ok() {
        for k in played.keys().filter(|k| k.contains(&id)) {
            let t: String = redis::cmd("TYPE")
                .arg(k)
                .query_async(&mut probe)
                .await
                .unwrap();
            if t == "list" {
                let v: Vec<Vec<u8>> = redis::cmd("LRANGE")
                    .arg(k)
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut probe)
                    .await
                    .unwrap();
                for e in v {
                    println!(
                        "{k} {} {}",
                        e.len(),
                        String::from_utf8_lossy(&e).escape_debug()
                    );
                }
            } else if t == "string" {
                let v: Vec<u8> = redis::cmd("GET")
                    .arg(k)
                    .query_async(&mut probe)
                    .await
                    .unwrap();
                println!(
                    "{k} {} {}",
                    v.len(),
                    String::from_utf8_lossy(&v).escape_debug()
                );
            }
        }
        for k in played.keys().filter(|k| k.ends_with("delayed")) {
            let d: Vec<(String, u64)> = redis::cmd("ZRANGE")
                .arg(k)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query_async(&mut probe)
                .await
                .unwrap();
            println!("{k} {d:?}");
        }
    }
    let (played_lines, played_total) = growth(&before, &played, session);
    println!(
        "tokens (a host's and two agents'): {tokens} bytes\n{}\n\
         a session seated and started: {seated_total} bytes\n{}\n\
         after 25 cycles: {played_total} bytes\n{}",
        token_lines.join("\n"),
        seated_lines.join("\n"),
        played_lines.join("\n"),
    );
    assert!(
        seated_total <= BUDGET_SEATED,
        "a seated session takes {seated_total} bytes (budget {BUDGET_SEATED}):\n{}",
        seated_lines.join("\n")
    );
    assert!(
        played_total <= BUDGET_PLAYED,
        "a session after 25 cycles takes {played_total} bytes (budget {BUDGET_PLAYED}):\n{}",
        played_lines.join("\n")
    );
}
