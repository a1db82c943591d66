//! Redis refusing writes (issue 35, item 3): out of memory under `noeviction` (a small
//! `maxmemory`), as an unlucky operator meets it. Every route that needs a write answers
//! 503 with `Retry-After` (the MCP endpoint: `engine_unavailable` with `retryAfterSeconds`),
//! never 500; the anonymous read tools keep working although their burst counter cannot be
//! written (counted in the process meanwhile); reads work; and everything recovers by itself
//! once memory is free again, with the job admitted before the outage run once.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{eventually, ok_result, spawn_gateway, TestApp, LEVEL_MAP, LEVEL_REPLAY};

pub(crate) async fn config_set(app: &TestApp, name: &str, value: &str) {
    config_set_on(&app.store, name, value).await;
}

pub(crate) async fn config_set_on(store: &horst_store::Store, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query_async(&mut store.conn())
        .await
        .unwrap();
}

/// The line of `/metrics` for the gauge `name` (`name value`), empty without one.
async fn metric_line(app: &TestApp, name: &str) -> String {
    let text = app
        .http
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let prefix = format!("{name} ");
    text.lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_default()
        .to_string()
}

/// Below what the server already uses: every write that may grow memory is refused (OOM).
pub(crate) async fn fill(app: &TestApp) {
    config_set(app, "maxmemory", "1").await;
    let refused = redis::cmd("SET")
        .arg(app.store.key("drill:probe"))
        .arg("x")
        .query_async::<()>(&mut app.store.conn())
        .await
        .unwrap_err();
    assert!(horst_store::refuses_writes(&refused), "{refused}");
}

/// (Run beside the failover cases: `failover::replicas_and_refused_writes_side_by_side`.)
pub(crate) async fn a_full_redis_refuses_writes_with_503_keeps_reads_and_recovers_by_itself() {
    let app = spawn_gateway().await;
    let key = app.agent_key("wren", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let sim = |k: &str| json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": k});

    fill(&app).await;

    // The process stays ready (reads work, and every process is alike), and says why
    // writes fail: in /readyz and as a metric, from its own periodic write.
    let readyz = async || -> Value {
        let r = app.http.get(app.url("/readyz")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        r.json().await.unwrap()
    };
    let metric = async || metric_line(&app, "horst_redis_writes_refused").await;
    let mut seen = Value::Null;
    let told = eventually(Duration::from_secs(20), async || {
        seen = readyz().await;
        seen["writes"] == "refused"
    })
    .await;
    assert!(told, "/readyz never said writes are refused: {seen}");
    assert!(
        seen["reason"].as_str().unwrap_or_default().contains("OOM"),
        "{seen}"
    );
    assert_eq!(metric().await, "horst_redis_writes_refused 1");

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
    // is a 503 with Retry-After whose JSON-RPC error carries `engine_unavailable` with
    // `retryAfterSeconds`, also when the refusal comes after the key was read (it was a
    // tool error under HTTP 200).
    let a = app.call("simulate_replay", sim("full-1"), Some(&key)).await;
    assert_eq!(a.status, 503, "{}", a.text);
    assert!(a.headers.get("retry-after").is_some(), "{}", a.text);
    let error = a.body["error"]["data"].clone();
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
        .body(json!({"displayName": "Drill"}).to_string())
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
    let cleared = eventually(Duration::from_secs(20), async || {
        seen = readyz().await;
        seen.get("writes").is_none()
    })
    .await;
    assert!(cleared, "/readyz still says writes are refused: {seen}");
    assert_eq!(metric().await, "horst_redis_writes_refused 0");
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

/// Where the server writes its snapshot (`dir` joined with `dbfilename`).
async fn snapshot_path(store: &horst_store::Store) -> std::path::PathBuf {
    let mut path = std::path::PathBuf::new();
    for name in ["dir", "dbfilename"] {
        let pair: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query_async(&mut store.conn())
            .await
            .unwrap();
        path.push(&pair[1]);
    }
    path
}

/// The snapshot cannot be written (a failing disk): `save` on, and the RDB file's name taken
/// by a directory, so BGSAVE fails and Redis refuses every write with `MISCONF` until a
/// snapshot succeeds again. (`CONFIG SET dir` is a protected config; this needs none.)
pub(crate) async fn break_the_disk(store: &horst_store::Store) {
    std::fs::create_dir_all(snapshot_path(store).await.join("taken")).unwrap();
    config_set_on(store, "save", "3600 1").await;
    let _: Result<String, _> = redis::cmd("BGSAVE").query_async(&mut store.conn()).await;
    let refused = eventually(Duration::from_secs(30), async || {
        redis::cmd("SET")
            .arg(store.key("drill:probe"))
            .arg("x")
            .query_async::<()>(&mut store.conn())
            .await
            .is_err_and(|e| e.to_string().contains("MISCONF"))
    })
    .await;
    assert!(refused, "Redis never refused a write with MISCONF");
}

pub(crate) async fn mend_the_disk(store: &horst_store::Store) {
    std::fs::remove_dir_all(snapshot_path(store).await).unwrap();
    let saved = eventually(Duration::from_secs(30), async || {
        let _: Result<String, _> = redis::cmd("BGSAVE").query_async(&mut store.conn()).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        redis::cmd("SET")
            .arg(store.key("drill:probe"))
            .arg("x")
            .query_async::<()>(&mut store.conn())
            .await
            .is_ok()
    })
    .await;
    assert!(
        saved,
        "Redis kept refusing writes after the disk was mended"
    );
}

/// One request on each kind of route while Redis refuses writes: `(route, status, whether
/// a 503 carried Retry-After)`.
async fn sweep(
    app: &TestApp,
    key: &str,
    rcadia_token: &str,
    admin: &mut crate::accounts::Visitor,
    round: &str,
) -> Vec<(&'static str, u16, bool)> {
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let mut seen = Vec::new();
    let retry = |h: &reqwest::header::HeaderMap| h.get("retry-after").is_some();
    let a = app
        .call("validate_map", json!({"map": LEVEL_MAP}), None)
        .await;
    seen.push(("mcp validate_map (anonymous)", a.status, retry(&a.headers)));
    let a = app
        .call(
            "simulate_replay",
            json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": round}),
            Some(key),
        )
        .await;
    assert!(
        a.status != 503 || a.body["error"]["data"]["code"] == "engine_unavailable",
        "{}",
        a.text
    );
    seen.push((
        "mcp simulate_replay (admission)",
        a.status,
        retry(&a.headers),
    ));
    let a = app.call("my_submissions", json!({}), Some(key)).await;
    seen.push((
        "mcp my_submissions (keyed read)",
        a.status,
        retry(&a.headers),
    ));
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body(json!({"displayName": format!("Drill {round}")}).to_string())
        .send()
        .await
        .unwrap();
    seen.push((
        "POST /api/agent-keys",
        r.status().as_u16(),
        retry(r.headers()),
    ));
    // A person's sign-up: its script's first write was a trim of the caps' windows, which
    // let the whole script (the account too) past a full Redis (201 at OOM).
    let r = crate::accounts::Visitor::new(app)
        .post(
            "/api/account/sign-up",
            json!({ "name": format!("drill{}", round.to_lowercase()), "password": crate::accounts::PASSWORD }),
        )
        .await;
    seen.push(("POST /api/account/sign-up", r.status, r.status == 503));
    let r = app
        .http
        .get(app.url("/api/game/levels"))
        .send()
        .await
        .unwrap();
    seen.push((
        "GET /api/game/levels",
        r.status().as_u16(),
        retry(r.headers()),
    ));
    let r = app
        .http
        .get(app.url("/api/v1/agent/sessions/available"))
        .bearer_auth(rcadia_token)
        .send()
        .await
        .unwrap();
    seen.push((
        "GET /api/v1/agent/sessions/available (rcadia)",
        r.status().as_u16(),
        retry(r.headers()),
    ));
    let r = admin.get("/api/admin/overview").await;
    seen.push(("GET /api/admin/overview", r.status, r.status == 503));
    let r = admin
        .post("/api/admin/switches/gateway", json!({ "mode": "on" }))
        .await;
    seen.push((
        "POST /api/admin/switches/gateway",
        r.status,
        r.status == 503,
    ));
    let mut fresh = crate::accounts::Visitor::new(app);
    let r = fresh
        .post(
            "/api/admin/session",
            json!({ "token": crate::accounts::ADMIN_TOKEN, "operatorName": "drill" }),
        )
        .await;
    seen.push(("POST /api/admin/session", r.status, r.status == 503));
    seen
}

/// Every kind of route while Redis refuses writes, out of memory and with a failing disk
/// (`MISCONF`): never a 500; a 503 carries Retry-After; the writes (admission, the admin
/// switch, an admin sign-in) are 503, on MCP `engine_unavailable` with `retryAfterSeconds`
/// also after the key was read; the anonymous read tool answers. Each recovers by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_503_not_500_when_redis_is_full_or_its_disk_fails() {
    let app = crate::accounts::accounts_app().await;
    let key = app.agent_key("wren", 1).await;
    let (rcadia_token, _) = app
        .auth
        .create_token(&["play".to_string()], Some("Tern"))
        .await
        .unwrap();
    let mut admin = crate::accounts::Visitor::new(&app);
    let r = admin
        .post(
            "/api/admin/session",
            json!({ "token": crate::accounts::ADMIN_TOKEN, "operatorName": "drill" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    for cause in ["OOM", "MISCONF"] {
        if cause == "OOM" {
            fill(&app).await;
        } else {
            break_the_disk(&app.store).await;
        }
        let seen = sweep(&app, &key, &rcadia_token, &mut admin, cause).await;
        eprintln!("figure: while Redis refuses writes ({cause}): {seen:?}");
        for (route, status, retry) in &seen {
            assert_ne!(*status, 500, "{cause}: {route}");
            if *status == 503 {
                assert!(retry, "{cause}: {route} answered 503 without Retry-After");
            }
        }
        let status = |name: &str| seen.iter().find(|s| s.0 == name).unwrap().1;
        assert_eq!(status("mcp validate_map (anonymous)"), 200, "{cause}");
        for write in [
            "mcp simulate_replay (admission)",
            "POST /api/agent-keys",
            "POST /api/account/sign-up",
            "POST /api/admin/switches/gateway",
            "POST /api/admin/session",
        ] {
            assert_eq!(status(write), 503, "{cause}: {write}");
        }
        if cause == "OOM" {
            config_set(&app, "maxmemory", "0").await;
        } else {
            mend_the_disk(&app.store).await;
        }
        let a = app
            .call("validate_map", json!({"map": LEVEL_MAP}), Some(&key))
            .await;
        assert_eq!(a.status, 200, "{cause}: {}", a.text);
        let r = admin
            .post("/api/admin/switches/gateway", json!({ "mode": "on" }))
            .await;
        assert_eq!(r.status, 200, "{cause}: after recovery {}", r.body);
    }
}

/// A failing disk (`MISCONF`: here a snapshot that cannot be written; in the `horst up` drill
/// the AOF on a full tmpfs) refuses writes as a full memory does: `/readyz` stays 200 and
/// says so in `writes`. Redis refuses PING too while its disk fails, and the readiness probe
/// took that for a server that does not answer: 503 "does not answer" on every API process
/// at once, though reads were served.
/// (Run beside the failover cases: `failover::replicas_and_refused_writes_side_by_side`.)
pub(crate) async fn a_failing_disk_keeps_readyz_ready_and_says_writes_are_refused() {
    let app = spawn_gateway().await;
    break_the_disk(&app.store).await;
    let readyz = async || -> (u16, Value) {
        let r = app.http.get(app.url("/readyz")).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    };
    let mut seen = (0, Value::Null);
    let told = eventually(Duration::from_secs(20), async || {
        seen = readyz().await;
        seen.1["writes"] == "refused"
    })
    .await;
    // The probe PINGs every second: ready for 3 s more, not by luck between two probes.
    let mut after = Vec::new();
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        after.push(readyz().await);
    }
    mend_the_disk(&app.store).await;
    eprintln!("figure: /readyz while the disk fails: {seen:?}, then {after:?}");
    assert!(told, "/readyz never said writes are refused: {seen:?}");
    assert_eq!(seen.0, 200, "{seen:?}");
    assert!(
        after
            .iter()
            .all(|(status, v)| *status == 200 && v["writes"] == "refused"),
        "{after:?}"
    );
}

/// A process that starts while Redis refuses writes (a restarted worker or API process, an
/// operator's `horst admin`) comes up as the running ones go on. Before, each exited at
/// once: `horst api` and `horst worker` with "cannot delete the earlier version's keys:
/// ... MISCONF" (its start's layout steps, which change nothing on a store already at this
/// version), and every `horst admin` command, `status` and the job view included, with
/// "cannot open the session store: ... MISCONF" (a SET NX of a value that was there). So a
/// worker killed during a full disk stayed down, and the operator's own tools failed just
/// when they were needed. `horst admin status` now also says that writes are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_started_while_redis_refuses_writes_comes_up_and_the_operator_can_look() {
    // With a configured admin token, which the first start stored.
    let app = crate::harness::spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.admin_token = "an-admin-token-stored-before-the-disk-failed".into();
    })
    .await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    // A job waiting for a worker (the test app runs none).
    let waiting = match app
        .queue
        .admit(horst_queue::JobSpec {
            kind: horst_queue::JobKind::Simulate,
            account: "wren".into(),
            trust: 1,
            idempotency_key: "before-the-disk-failed".into(),
            input: horst_queue::JobInput::simulate(LEVEL_MAP, replay),
        })
        .await
        .unwrap()
    {
        horst_queue::Admission::New(job) => job,
        other => panic!("expected a new job, got {other:?}"),
    };

    break_the_disk(&app.store).await;

    // The operator's commands run, and say what is wrong.
    let (ok, out, err) = crate::accounts::admin_cli(&app, &["status"], "");
    eprintln!("figure: horst admin status while the disk fails: {out}{err}");
    assert!(ok, "horst admin status failed: {out}{err}");
    assert!(out.contains("WRITES REFUSED: MISCONF"), "{out}");
    let (ok, out, err) = crate::accounts::admin_cli(&app, &["status", "--json"], "");
    assert!(ok, "{out}{err}");
    let status: Value = serde_json::from_str(&out).unwrap();
    assert!(
        status["redis"]["writesRefused"]
            .as_str()
            .is_some_and(|r| r.starts_with("MISCONF")),
        "{status}"
    );
    let (ok, out, err) = crate::accounts::admin_cli(&app, &["job", "list"], "");
    assert!(ok, "horst admin job list failed: {out}{err}");
    assert!(out.contains(&waiting.id), "{out}");

    assert!(
        horst_identity::admin_tokens::check(
            &app.store,
            "an-admin-token-stored-before-the-disk-failed"
        )
        .await
        .unwrap()
        .is_some(),
        "the configured admin token was not stored at the first start"
    );
    // A worker process starts (as `horst worker` builds itself), and an API process too.
    let (_stop, stop_rx) = tokio::sync::watch::channel(false);
    let worker = horst::App::build_for(
        app.config.clone(),
        &app.redis_url,
        stop_rx.clone(),
        horst::Roles::WORKER,
    )
    .await
    .expect("a worker starting while Redis refuses writes");
    horst::App::build_for(
        app.config.clone(),
        &app.redis_url,
        stop_rx,
        horst::Roles::API_AND_WORKER,
    )
    .await
    .expect("an API process starting while Redis refuses writes");
    tokio::spawn(worker.run(horst::Roles::WORKER, None));

    mend_the_disk(&app.store).await;
    // The worker that started during the outage runs the job once Redis takes writes.
    let done = app
        .queue
        .wait(&waiting.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.state, horst_queue::JobState::Succeeded, "{done:?}");
    let (ok, out, _) = crate::accounts::admin_cli(&app, &["status"], "");
    assert!(ok && !out.contains("WRITES REFUSED"), "{out}");

    // At `maxmemory` (OOM) too: the session store's SET NX of its boot tag, there already,
    // was refused as well.
    fill(&app).await;
    let (ok, out, err) = crate::accounts::admin_cli(&app, &["status"], "");
    assert!(ok && out.contains("WRITES REFUSED: OOM"), "{out}{err}");
    let (_stop, stop_rx) = tokio::sync::watch::channel(false);
    let started = horst::App::build_for(
        app.config.clone(),
        &app.redis_url,
        stop_rx,
        horst::Roles::API_AND_WORKER,
    )
    .await;
    config_set(&app, "maxmemory", "0").await;
    started.expect("an API process starting while Redis is at maxmemory");
}

/// `redis.url` naming a replica: every process (one that serves, an operator command) stops
/// at start naming the setting, the primary and the fix. Each stopped at its first write with
/// "cannot open the session store: redis: ReadOnly: ...", naming neither the setting nor the
/// fix.
#[tokio::test]
async fn a_redis_url_that_names_a_replica_is_refused_at_start_with_the_fix() {
    let primary = horst_testkit::RedisServer::start();
    let replica = horst_testkit::RedisServer::start_with(|o| {
        o.extra
            .push(("replicaof".into(), format!("127.0.0.1 {}", primary.port())));
    });
    let mut config = horst_config::Config::default();
    config.worker.threads = 1;
    config.redis.url = replica.url();
    let config = std::sync::Arc::new(config);
    for roles in [
        horst::Roles::API,
        horst::Roles::WORKER,
        horst::Roles::OPERATOR,
    ] {
        let (_stop, stop_rx) = tokio::sync::watch::channel(false);
        let e = match horst::App::build_for(config.clone(), &replica.url(), stop_rx, roles).await {
            Ok(_) => panic!("a process started on a replica"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("redis.url")
                && e.contains("replica")
                && e.contains(&format!("127.0.0.1:{}", primary.port()))
                && e.contains("Fix:"),
            "{e}"
        );
    }
    // The primary itself is taken.
    let (_stop, stop_rx) = tokio::sync::watch::channel(false);
    let mut on_primary = (*config).clone();
    on_primary.redis.url = primary.url();
    if let Err(e) = horst::App::build_for(
        std::sync::Arc::new(on_primary),
        &primary.url(),
        stop_rx,
        horst::Roles::OPERATOR,
    )
    .await
    {
        panic!("the primary was refused: {e}");
    }
}

/// A primary turned into a replica while horst runs on it (`REPLICAOF` on the running
/// server: a failover by hand, or by a tool, without `redis.sentinels` configured). Every
/// write then answers 503 (`READONLY`); before, `/readyz` said only Redis's own words (or
/// nothing), no metric named it and the log did not say the fix. Now `/readyz` names the
/// server, its primary and the fix, `horst_redis_replica` is 1, and both clear by themselves
/// when the server is a primary again. Two real redis-servers: the app's and its replica,
/// swapped as an operator would.
/// (Run beside the failover cases: `failover::replicas_and_refused_writes_side_by_side`.)
pub(crate) async fn a_primary_demoted_to_a_replica_at_run_time_is_named_in_readyz_with_the_fix() {
    if crate::harness::on_cluster() {
        return; // a cluster follows its primaries itself
    }
    let a = horst_testkit::RedisServer::start();
    let (a_port, a_url) = (a.port(), a.url());
    let b = horst_testkit::RedisServer::start_with(|o| {
        o.extra
            .push(("replicaof".into(), format!("127.0.0.1 {a_port}")));
    });
    let app = crate::harness::spawn_app_on(a, |_| {}).await;
    let cmd = async |url: &str, args: &[&str]| -> String {
        let client = redis::Client::open(url).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        let v: redis::Value = c.query_async(&mut conn).await.unwrap();
        match v {
            redis::Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
            other => format!("{other:?}"),
        }
    };
    // b has caught up with a (what a failover needs), then the swap.
    let synced = eventually(Duration::from_secs(20), async || {
        cmd(&b.url(), &["INFO", "replication"])
            .await
            .contains("master_link_status:up")
    })
    .await;
    assert!(synced, "the replica never caught up");
    let readyz = async || -> (u16, Value) {
        let r = app.http.get(app.url("/readyz")).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    };
    let metric = async || metric_line(&app, "horst_redis_replica").await;
    assert_eq!(readyz().await.0, 200);
    assert_eq!(metric().await, "horst_redis_replica 0");
    cmd(&b.url(), &["REPLICAOF", "NO", "ONE"]).await;
    cmd(&a_url, &["REPLICAOF", "127.0.0.1", &b.port().to_string()]).await;

    let primary = format!("127.0.0.1:{}", b.port());
    let mut seen = (0, Value::Null);
    let told = eventually(Duration::from_secs(15), async || {
        seen = readyz().await;
        let reason = seen.1["reason"].as_str().unwrap_or_default();
        reason.contains(&format!("is a replica of {primary}"))
            && reason.contains("redis.url")
            && reason.contains("sentinels")
    })
    .await;
    assert!(told, "/readyz never named the demotion: {seen:?}");
    // Reads still work and every process is alike: ready, with writes refused.
    assert_eq!(seen.0, 200, "{seen:?}");
    assert_eq!(seen.1["writes"], "refused", "{seen:?}");
    assert_eq!(metric().await, "horst_redis_replica 1");
    // A write is refused as unavailable, never a 500.
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body(json!({"displayName": "Demoted"}).to_string())
        .send()
        .await
        .unwrap();
    let retry = r.headers().get("retry-after").is_some();
    let (status, body) = (r.status().as_u16(), r.text().await.unwrap_or_default());
    assert!(status == 503 && retry, "{status} {body}");

    // The operator makes it a primary again: cleared without a restart.
    cmd(&a_url, &["REPLICAOF", "NO", "ONE"]).await;
    let cleared = eventually(Duration::from_secs(15), async || {
        seen = readyz().await;
        seen.0 == 200 && seen.1.get("writes").is_none()
    })
    .await;
    assert!(cleared, "/readyz still says the demotion: {seen:?}");
    assert_eq!(metric().await, "horst_redis_replica 0");
}
