//! Redis refusing writes (issue 35, item 3): out of memory under `noeviction` (a small
//! `maxmemory`), as an unlucky operator meets it. Every route that needs a write answers
//! 503 with `Retry-After` (the MCP endpoint: `engine_unavailable` with `retryAfterSeconds`),
//! never 500; the anonymous read tools keep working although their burst counter cannot be
//! written (counted in the process meanwhile); reads work; and everything recovers by itself
//! once memory is free again, with the job admitted before the outage run once.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{eventually, ok_result, spawn_gateway, TestApp, LEVEL_MAP, LEVEL_REPLAY};

async fn config_set(app: &TestApp, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
}

/// Below what the server already uses: every write that may grow memory is refused (OOM).
async fn fill(app: &TestApp) {
    config_set(app, "maxmemory", "1").await;
    let refused = redis::cmd("SET")
        .arg(app.store.key("drill:probe"))
        .arg("x")
        .query_async::<()>(&mut app.store.conn())
        .await
        .unwrap_err();
    assert!(horst_store::refuses_writes(&refused), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_redis_refuses_writes_with_503_keeps_reads_and_recovers_by_itself() {
    let app = spawn_gateway().await;
    let key = app.agent_key("wren", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let sim = |k: &str| json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": k});

    fill(&app).await;

    // Anonymous read tools need nothing from Redis but the burst counter.
    for _ in 0..3 {
        let a = app
            .call("validate_map", json!({"map": LEVEL_MAP}), None)
            .await;
        let r = ok_result(&a);
        assert_eq!(r["valid"], true, "{}", a.text);
    }
    // A keyed read: the key is looked up, the level read.
    let a = app
        .call("get_level", json!({"name": "erste-schritte"}), Some(&key))
        .await;
    assert!(a.status == 200 || a.status == 503, "{}", a.text);
    assert_ne!(a.status, 500, "{}", a.text);

    // Admission writes: refused cleanly, with a retry hint, nothing stored. The MCP answer
    // is `engine_unavailable` with `retryAfterSeconds`: as the tool's error (HTTP 200, as
    // every tool error) once the key was read, or as the JSON-RPC error of a 503 before.
    let a = app.call("simulate_replay", sim("full-1"), Some(&key)).await;
    let error = if a.status == 503 {
        assert!(a.headers.get("retry-after").is_some(), "{}", a.text);
        a.body["error"]["data"].clone()
    } else {
        assert_eq!(a.status, 200, "{}", a.text);
        crate::harness::tool_error(&a)
    };
    assert_eq!(error["code"], "engine_unavailable", "{}", a.text);
    assert!(
        error["retryAfterSeconds"].as_u64().unwrap_or(0) > 0,
        "{}",
        a.text
    );
    let admitted: Option<String> = redis::cmd("ZREVRANGE")
        .arg(app.store.key("jobs:wren"))
        .arg(0)
        .arg(0)
        .query_async::<Vec<String>>(&mut app.store.conn())
        .await
        .unwrap()
        .into_iter()
        .next();
    assert_eq!(admitted, None, "a refused admission stored a job");

    // A REST write (self-service key creation) and a REST read.
    let rest = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body(json!({"name": "drill-key"}).to_string())
        .send()
        .await
        .unwrap();
    let status = rest.status().as_u16();
    let retry = rest.headers().get("retry-after").is_some();
    let body = rest.text().await.unwrap_or_default();
    assert_ne!(status, 500, "{body}");
    if status == 503 {
        assert!(retry, "503 without Retry-After: {body}");
    }
    let levels = app
        .http
        .get(app.url("/api/game/levels"))
        .send()
        .await
        .unwrap();
    assert_eq!(levels.status().as_u16(), 200);

    // Memory is freed: it recovers by itself, nothing restarted.
    config_set(&app, "maxmemory", "0").await;
    let _worker = app.start_engine_worker();
    let mut last = Value::Null;
    let done = eventually(Duration::from_secs(90), async || {
        let a = app.call("simulate_replay", sim("full-2"), Some(&key)).await;
        last = a.body.clone();
        a.status == 200 && crate::harness::result_text(&a).get("outcome").is_some()
    })
    .await;
    assert!(done, "never recovered: {last}");
    // The refused call's key starts its job now.
    let a = app.call("simulate_replay", sim("full-1"), Some(&key)).await;
    assert_eq!(a.status, 200, "{}", a.text);
}

/// While Redis refuses writes, work admitted before finishes: a worker claims, runs and
/// completes a job, a dead worker's job is reaped, reads answer; admission stays refused
/// cleanly; and once memory is freed, admission works again by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_complete_and_reap_work_while_redis_is_full() {
    let app = crate::harness::spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.queue.lease_seconds = 2;
    })
    .await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let spec = |account: &str| horst_queue::JobSpec {
        kind: horst_queue::JobKind::Simulate,
        account: account.into(),
        trust: 1,
        idempotency_key: "drill".into(),
        input: horst_queue::JobInput::simulate(LEVEL_MAP, replay.clone()),
    };
    let new = |a: Result<horst_queue::Admission, horst_queue::QueueError>| match a {
        Ok(horst_queue::Admission::New(job)) => job,
        other => panic!("expected a new job, got {other:?}"),
    };
    // A job whose worker dies: claimed by a worker that never heartbeats.
    let orphan = new(app.queue.admit(spec("ghost")).await);
    let claim = app.queue.claim("ghost-worker").await.unwrap().unwrap();
    assert_eq!(claim.record.id, orphan.id);
    // A job waiting for a worker.
    let waiting = new(app.queue.admit(spec("wren")).await);

    fill(&app).await;

    // A worker starts while Redis is full: it claims, runs and completes the waiting job.
    let _worker = app.start_engine_worker();
    let done = app
        .queue
        .wait(&waiting.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.state, horst_queue::JobState::Succeeded, "{done:?}");
    assert!(done.result.and_then(|r| r.referee().map(|r| r.won)) == Some(true));
    // The dead worker's job is reaped (the housekeeping of the API and of the worker).
    let reaped = eventually(Duration::from_secs(30), async || {
        app.queue
            .get(&orphan.id)
            .await
            .ok()
            .flatten()
            .is_some_and(|r| r.state == horst_queue::JobState::Failed)
    })
    .await;
    assert!(
        reaped,
        "the dead worker's job was not reaped while Redis was full"
    );
    let orphan = app.queue.get(&orphan.id).await.unwrap().unwrap();
    assert_eq!(
        orphan.failure.unwrap().code,
        horst_queue::FailureCode::Cancelled
    );
    // Admission is still refused, as unavailable (503), not as an internal error.
    match app.queue.admit(spec("late")).await {
        Err(horst_queue::QueueError::Unavailable(_)) => {}
        other => panic!("admission while full: {other:?}"),
    }
    // Redis was full all along.
    let refused = redis::cmd("SET")
        .arg(app.store.key("drill:probe"))
        .arg("x")
        .query_async::<()>(&mut app.store.conn())
        .await
        .unwrap_err();
    assert!(horst_store::refuses_writes(&refused), "{refused}");

    // Memory is freed: admission works again, nothing restarted.
    config_set(&app, "maxmemory", "0").await;
    let after = new(app.queue.admit(spec("late")).await);
    let after = app
        .queue
        .wait(&after.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(after.state, horst_queue::JobState::Succeeded, "{after:?}");
}
