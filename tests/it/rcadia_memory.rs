//! What a live RCADIA session holds in Redis (issue 36, item 3): every key a session, its
//! seats and its tokens create, by `MEMORY USAGE`, after a game played over HTTP the way the
//! sessions benchmark plays it (`benches/sessions.rs`: a host and two agents, the host
//! publishing a state and the legal actions each turn), once seated and started and after
//! 25 action cycles, the benchmark's typical game in its 15 s window. The test fails if the
//! bytes grow back above the budget (docs/scaling.md, "What one primary carries").

use std::collections::BTreeMap;

use serde_json::json;

use crate::rcadia_common::*;

/// Bytes a live session may hold (its own keys and its share of the shared sets), seated and
/// started, and after 25 cycles. Measured at 952 and 1,717 (was 1,913 and 3,661 before the
/// record, base, event log and replay shared one hash, and the keys' names got shorter).
const BUDGET_SEATED: u64 = 1_100;
const BUDGET_PLAYED: u64 = 2_000;

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

/// The keys that are new or changed since `before`, with their growth, and the total.
fn growth(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> (Vec<String>, u64) {
    let mut lines = Vec::new();
    let mut total = 0;
    for (k, b) in after {
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
    let app = app_with(|_| {}).await;
    let client = redis::Client::open(app.redis_url.as_str()).unwrap();
    let mut probe = client.get_multiplexed_async_connection().await.unwrap();
    let empty = usage_by_key(&mut probe).await;
    let (host, agents) = cast(&app, 2).await;
    let with_tokens = usage_by_key(&mut probe).await;
    let (token_lines, tokens) = growth(&empty, &with_tokens);

    // A first session, so the shared keys (the open set, the delayed set) exist and what a
    // session adds to them is its members alone.
    let config = json!({
        "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0",
        "gameType": "bench", "turnTimeout": 0, "maxTurnTimeouts": 100_000
    });
    let (first, _, _) = started(&host, &agents, config.clone()).await;
    let _ = host.ops(
        &first,
        json!([{ "op": "state", "state": { "on": 0 } }]),
    ).await;
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
    let seated = usage_by_key(&mut probe).await;
    let (seated_lines, seated_total) = growth(&before, &seated);

    for n in 0..25u64 {
        let s = agents[on].state(&id, 5.0).await;
        assert_eq!(s["yourTurn"], true, "{s}");
        let turn = s["turn"].as_u64().unwrap();
        let (st, v) = agents[on]
            .act(&id, json!({ "type": "move", "t": 1_780_000_000_000_000u64 + n }), turn)
            .await;
        assert_eq!(st, 200, "{v}");
        let p = host.pending(&id, after, 5.0).await;
        assert!(!entries(&p).is_empty(), "{p}");
        after = max_seq(&p, after);
        on = 1 - on;
        host.ops(&id, publish(on)).await;
    }
    let played = usage_by_key(&mut probe).await;
    if std::env::var("MEM_DUMP").is_ok() {
        for k in played.keys().filter(|k| k.contains(&id)) {
            let t: String = redis::cmd("TYPE").arg(k).query_async(&mut probe).await.unwrap();
            if t == "list" {
                let v: Vec<Vec<u8>> = redis::cmd("LRANGE").arg(k).arg(0).arg(-1).query_async(&mut probe).await.unwrap();
                for e in v { println!("{k} {} {}", e.len(), String::from_utf8_lossy(&e).escape_debug()); }
            } else if t == "string" {
                let v: Vec<u8> = redis::cmd("GET").arg(k).query_async(&mut probe).await.unwrap();
                println!("{k} {} {}", v.len(), String::from_utf8_lossy(&v).escape_debug());
                std::fs::write(format!("/tmp/mem36_{}", k.rsplit(':').next().unwrap()), &v).unwrap();
            }
        }
        let d: Vec<(String, u64)> = redis::cmd("ZRANGE").arg("horst:delayed").arg(0).arg(-1).arg("WITHSCORES").query_async(&mut probe).await.unwrap();
        println!("delayed {d:?}");
    }
    let (played_lines, played_total) = growth(&before, &played);
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
        "a seated session takes {seated_total} bytes (budget {BUDGET_SEATED})"
    );
    assert!(
        played_total <= BUDGET_PLAYED,
        "a session after 25 cycles takes {played_total} bytes (budget {BUDGET_PLAYED})"
    );
}
