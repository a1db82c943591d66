//! Session metrics on `/metrics`: they are listed, and they move when sessions are played.

use std::time::Duration;

use serde_json::json;

use crate::harness::{eventually, TestApp};
use crate::rcadia_common::*;

async fn metrics(app: &TestApp) -> String {
    let res = app.http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

/// The value of the sample line that starts with `series` (0 when absent).
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn rcadia_session_metrics_appear_and_move() {
    let app = app_with(|_| {}).await;
    // Plain metrics are listed from the start (labelled families once they have a sample).
    let text = metrics(&app).await;
    assert!(
        text.contains("# HELP horst_session_long_polls_open "),
        "{text}"
    );

    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e4"] }]),
    )
    .await;
    let turn = agents[0].state(&id, 0.0).await["turn"].as_u64().unwrap();
    // Refused (not their turn), then accepted.
    let (st, _) = agents[1].act(&id, json!("e5"), turn).await;
    assert_eq!(st, 409);
    let (st, v) = agents[0].act(&id, json!("e4"), turn).await;
    assert_eq!(st, 200, "{v}");

    let p = host.pending(&id, after, 5.0).await;
    after = max_seq(&p, after);
    assert!(entries(&p).iter().any(|e| e["type"] == "action"), "{p}");
    // While the host's poll is open, the gauge counts it.
    let poll = {
        let host = host.clone();
        let id = id.clone();
        tokio::spawn(async move { host.pending(&id, after, 3.0).await })
    };
    let mut open_seen = false;
    for _ in 0..120 {
        if value(&metrics(&app).await, "horst_session_long_polls_open") >= 1.0 {
            open_seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(open_seen, "an open pending-actions poll is not counted");
    let _ = poll.await;

    // The next turn applies the action; then the game ends.
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["e5"] }]),
    )
    .await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[0] } }]),
    )
    .await;
    let _ = after;

    let text = metrics(&app).await;
    assert!(
        value(&text, "horst_sessions_created_total{kind=\"new\"}") >= 1.0,
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            "horst_session_actions_received_total{result=\"accepted\"}"
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            "horst_session_actions_received_total{result=\"not_your_turn\"}"
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(
            &text,
            "horst_session_action_outcomes_total{outcome=\"applied\"}"
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(&text, "horst_session_action_delivery_seconds_count"),
        1.0,
        "{text}"
    );
    assert_eq!(
        value(&text, "horst_sessions_finished_total{reason=\"game_over\"}"),
        1.0,
        "{text}"
    );

    // A clock: a short turn timeout fires a strike through the delayed set.
    let (id2, pids2, _) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 0.3, "maxTurnTimeouts": 5 })),
    )
    .await;
    host.ops(
        &id2,
        json!([{ "op": "legal_actions", "playerId": pids2[0], "actions": ["x"] }]),
    )
    .await;
    // The host keeps polling (a host that is not alive pauses the clock).
    let fired = eventually(Duration::from_secs(15), async || {
        host.pending(&id2, 0, 0.5).await;
        value(
            &metrics(&app).await,
            "horst_session_clock_firings_total{kind=\"clock\"}",
        ) >= 1.0
    })
    .await;
    assert!(fired, "no clock firing counted:\n{}", metrics(&app).await);
    let text = metrics(&app).await;
    assert!(
        value(&text, "horst_session_clock_lateness_seconds_count") >= 1.0,
        "{text}"
    );
    // Every family is listed now.
    let text = metrics(&app).await;
    for name in [
        "horst_sessions_created",
        "horst_sessions_finished",
        "horst_session_actions_received",
        "horst_session_action_outcomes",
        "horst_session_action_delivery_seconds",
        "horst_session_clock_firings",
        "horst_session_clock_lateness_seconds",
        "horst_session_long_polls_open",
        "horst_session_cas_conflicts",
        "horst_session_cas_gave_up",
    ] {
        assert!(
            text.contains(&format!("# HELP {name} ")),
            "{name} missing:\n{text}"
        );
    }
}

/// A woken long-poll takes the new state from the wake-up message: the host's publish wakes
/// the waiting agent with its turn, and no waiter reads the session back from Redis.
#[tokio::test]
async fn rcadia_wake_ups_carry_the_state() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e4"] }]),
    )
    .await;
    // The waiter's own 2 s re-check cannot have run before t0 + 2 s.
    let t0 = std::time::Instant::now();
    let waiter = {
        let a = agents[1].clone();
        let id = id.clone();
        tokio::spawn(async move { a.state(&id, 20.0).await })
    };
    let open = eventually(Duration::from_secs(10), async || {
        value(&metrics(&app).await, "horst_session_long_polls_open") >= 1.0
    })
    .await;
    assert!(open, "the agent's long-poll never opened");
    let reads_before = value(&metrics(&app).await, "horst_session_long_poll_reads_total");
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["e5"] }]),
    )
    .await;
    let s = waiter.await.unwrap();
    assert_eq!(s["yourTurn"], true, "{s}");
    assert_eq!(s["legalActions"], json!(["e5"]), "{s}");
    let reads_after = value(&metrics(&app).await, "horst_session_long_poll_reads_total");
    // A waiter also re-reads every 2 s on its own; only a quick wake-up proves the point (a
    // slow, shared CI box may take longer, and then the check says nothing).
    if t0.elapsed() < Duration::from_millis(1900) {
        assert_eq!(
            reads_after, reads_before,
            "a woken waiter read the session back"
        );
    }
}
