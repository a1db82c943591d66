//! Jobs that end without workers, honest answers while Redis is away, maps checked before
//! admission, callers' API processes that die, quotas across restarts, `horst admin`
//! without a store, the eviction re-check and the shutdown answer (issue 21, items 3-8).
//! Real redis-servers and, where the process's life is the point, real `horst` processes.

use std::net::SocketAddr;
use std::time::Duration;

use horst_queue::{JobState, Notifier, Queue, QueueSettings};
use horst_testkit::RedisServer;
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::harness::{
    error_code, eventually, result_text, spawn_gateway, HorstProcess, LEVEL_MAP, LEVEL_REPLAY,
};

/// A level the planner neither solves nor proves unsolvable quickly: it runs to its limit.
/// A level the planner searches until its time limit (no proof decides it).
const HARD: &str = "tests/it/levels/undecided.map";
const LONG: Duration = Duration::from_secs(90);

pub(crate) fn hard_map() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(HARD)).unwrap()
}

/// A `tools/call` over HTTP to the API at `addr`: the status and the parsed tool result
/// (success or failure), or the JSON-RPC body when there is no tool result.
pub(crate) async fn call(
    addr: SocketAddr,
    tool: &str,
    args: Value,
    key: &str,
) -> (u16, Value, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args}});
    let r = reqwest::Client::new()
        .post(format!("http://{addr}/api/mcp"))
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", format!("Bearer {key}"))
        .body(body.to_string())
        .send()
        .await
        .expect("the call was answered");
    let status = r.status().as_u16();
    let retry_after = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(|v| json!(v))
        .unwrap_or(Value::Null);
    let raw: Value = r.json().await.unwrap_or(Value::Null);
    let text = raw["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok());
    (
        status,
        text.unwrap_or(raw),
        json!({ "retryAfter": retry_after }),
    )
}

/// A queue on `url` as a separate observer (an operator's view, not one of the processes).
pub(crate) fn observer(store: &horst_store::Store) -> (Queue, watch::Sender<bool>) {
    let (stop, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(store), rx);
    let config = horst_config::Config::default();
    let queue = Queue::new(
        store.clone(),
        QueueSettings {
            queue: config.queue.clone(),
            quotas: config.quotas.clone(),
        },
        notifier,
    );
    (queue, stop)
}

/// What a test of separately started `horst` processes looks on from: their redis-server,
/// a queue on it as an operator's view ([`observer`]), an agent key of `account` (trust 1)
/// and what that account may still do today, and a directory to start the processes in.
pub(crate) struct Outside {
    pub(crate) redis: RedisServer,
    pub(crate) store: horst_store::Store,
    pub(crate) queue: Queue,
    pub(crate) key: String,
    pub(crate) before: horst_queue::Remaining,
    pub(crate) dir: tempfile::TempDir,
    _stop: watch::Sender<bool>,
}

pub(crate) async fn outside(account: &str) -> Outside {
    let redis = RedisServer::start();
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    let (queue, stop) = observer(&store);
    let key = agent_key(&store, account).await;
    let before = queue.remaining(account, 1).await.unwrap();
    Outside {
        redis,
        store,
        queue,
        key,
        before,
        dir: tempfile::tempdir().unwrap(),
        _stop: stop,
    }
}

pub(crate) async fn agent_key(store: &horst_store::Store, name: &str) -> String {
    horst_identity::accounts::create_account(store, name, 1)
        .await
        .unwrap();
    horst_identity::accounts::create_key(store, name, None)
        .await
        .unwrap()
        .key
}

/// The account's newest job id (its job index), once there is one.
pub(crate) async fn newest_job(store: &horst_store::Store, account: &str) -> Option<String> {
    let ids: Vec<String> = redis::cmd("ZREVRANGE")
        .arg(store.key(&format!("jobs:{account}")))
        .arg(0)
        .arg(0)
        .query_async(&mut store.conn())
        .await
        .ok()?;
    ids.into_iter().next()
}

/// Whether job `id` is in `state` within a generous while (false if it never is).
pub(crate) async fn until_state(queue: &Queue, id: &str, state: JobState) -> bool {
    eventually(LONG, async || {
        queue
            .get(id)
            .await
            .ok()
            .flatten()
            .is_some_and(|r| r.state == state)
    })
    .await
}

/// Asserts that `last`, read again later, is still the job `reaped` as its lease expired:
/// failed, not completed, not re-run, its charge kept once.
pub(crate) fn assert_still_reaped(last: &horst_queue::JobRecord, reaped: &horst_queue::JobRecord) {
    assert_eq!(last.state, JobState::Failed, "{last:?}");
    assert_eq!(last.failure, reaped.failure);
    assert_eq!(last.started_at_ms, reaped.started_at_ms);
    assert_eq!(last.finished_at_ms, reaped.finished_at_ms);
    assert!(last.result.is_none(), "{last:?}");
    assert_eq!(
        last.charged_seconds, reaped.charged_seconds,
        "the charge is kept"
    );
}

/// The id of the account's newest job once `worker` runs it.
pub(crate) async fn running_job(
    store: &horst_store::Store,
    account: &str,
    worker: &HorstProcess,
) -> String {
    let mut job = None;
    let running = eventually(LONG, async || {
        job = newest_job(store, account).await;
        match &job {
            Some(id) => horst_queue::job_record(store, id)
                .await
                .ok()
                .flatten()
                // `running` alone is not enough: a job an admission hands to an idle slot
                // reads running from then on, before the slot takes it up, and a worker
                // stopped or killed in between never ran it. Its first progress report
                // (a playtest's, every 1.5 s) says the slot runs the search.
                .is_some_and(|r| r.state == JobState::Running && r.progress.is_some()),
            None => false,
        }
    })
    .await;
    assert!(
        running,
        "the worker never started the job: {}",
        worker.stderr()
    );
    job.unwrap()
}

pub(crate) fn api_process(
    redis: &RedisServer,
    dir: &std::path::Path,
    env: &[(&str, &str)],
) -> HorstProcess {
    let mut all = vec![("HORST_GATEWAY_MODE", "on")];
    all.extend_from_slice(env);
    HorstProcess::spawn(
        &["api", "--redis", &redis.url(), "--listen", "127.0.0.1:0"],
        &all,
        dir,
    )
}

/// Item 3: the worker dies, no worker is left; the API process reaps the lease and the
/// waiting caller is told `cancelled` (without it the job stayed `running` and the call
/// answered `pending` at its 60 s limit). The charge is kept and the job never runs again.
async fn a_dead_worker_s_job_fails_with_no_worker_left_and_its_caller_is_told() {
    let redis = RedisServer::start();
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    let key = agent_key(&store, "wren").await;
    let dir = tempfile::tempdir().unwrap();
    let lease = [("HORST_QUEUE_LEASE_SECONDS", "2")];
    let mut api = api_process(&redis, dir.path(), &lease);
    let addr = api.wait_listening();
    let mut worker = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &lease, dir.path());

    let caller = tokio::spawn(async move {
        call(
            addr,
            "playtest_map",
            json!({"map": hard_map(), "idempotencyKey": "hard-1"}),
            &key,
        )
        .await
    });
    let job = running_job(&store, "wren", &worker).await;
    let killed = std::time::Instant::now();
    worker.signal(libc::SIGKILL);
    worker.wait_exit(Duration::from_secs(10)).unwrap();

    let (status, answer, _) = caller.await.unwrap();
    eprintln!(
        "figure: caller told `cancelled` {:.1} s after kill -9 of the only worker (lease 2 s)",
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["error"]["code"],
        "cancelled",
        "{answer}\n{}",
        api.stderr()
    );
    assert_eq!(answer["error"]["jobId"], job.as_str());
    let record = horst_queue::job_record(&store, &job)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.state, JobState::Failed);
    assert_eq!(record.charged_seconds, 20, "the charge is kept");
    // Never run again: no worker claims it, it stays failed, nothing is waiting.
    let _second = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &lease, dir.path());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = horst_queue::job_record(&store, &job)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.state, JobState::Failed);
    assert_eq!(again.started_at_ms, record.started_at_ms);
    let waiting: u64 = redis::cmd("ZCARD")
        .arg(store.key("queue:lane:planner"))
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert_eq!(waiting, 0);
}

/// Item 4: Redis stops answering (SIGSTOP) while a caller waits: the caller gets
/// `pending` with its jobId, new calls get `engine_unavailable` with `retryAfterSeconds`
/// (503 with Retry-After, never a 500), a REST read and an RCADIA request 503 with
/// Retry-After. Once Redis is back, the same idempotency key reads the same job, charged
/// once.
async fn while_redis_hangs_a_waiting_caller_gets_pending_and_new_calls_engine_unavailable() {
    let app = spawn_gateway().await;
    let key = app.agent_key("finch", 1).await;
    let before = app.queue.remaining("finch", 1).await.unwrap();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "sim-1"});
    let addr = app.addr;
    let waiting = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(addr, "simulate_replay", args, &key).await }
    });
    // No worker yet: the job waits in the queue.
    let mut job = None;
    assert!(
        eventually(LONG, async || {
            job = newest_job(&app.store, "finch").await;
            job.is_some()
        })
        .await
    );
    let job = job.unwrap();
    // Let the admission's reply reach the caller before Redis stops.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The account's job index expires (and is trimmed by each admission).
    let ttl: i64 = redis::cmd("PTTL")
        .arg(app.store.key("jobs:finch"))
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    assert!(ttl > 0, "jobs:<account> has no expiry ({ttl})");

    let (rcadia_token, _) = app
        .auth
        .create_token(&["play".to_string()], Some("Tern"))
        .await
        .unwrap();
    let pid = app.redis().pid().unwrap() as i32;
    let stopped = std::time::Instant::now();
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let (status, answer, _) = waiting.await.unwrap();
    eprintln!(
        "figure: waiting caller answered pending {:.1} s after SIGSTOP of Redis",
        stopped.elapsed().as_secs_f64()
    );
    let asked = std::time::Instant::now();
    let (new_status, refused, headers) = call(
        addr,
        "simulate_replay",
        json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "sim-2"}),
        &key,
    )
    .await;
    eprintln!(
        "figure: a new call answered 503 engine_unavailable after {:.1} s",
        asked.elapsed().as_secs_f64()
    );
    // A REST read and an RCADIA agent request (a token minted before the outage).
    let rest = app.http.get(app.url("/api/game/levels")).send();
    let rcadia = app
        .http
        .get(app.url("/api/v1/agent/sessions/available"))
        .bearer_auth(&rcadia_token)
        .send();
    let (rest, rcadia) = tokio::join!(rest, rcadia);
    let (rest, rcadia) = (rest.unwrap(), rcadia.unwrap());
    let rest_status = rest.status().as_u16();
    let rest_retry = rest.headers().get("retry-after").cloned();
    let rcadia_status = rcadia.status().as_u16();
    let rcadia_retry = rcadia.headers().get("retry-after").cloned();
    unsafe { libc::kill(pid, libc::SIGCONT) };

    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["pending"], true, "{answer}");
    assert_eq!(answer["jobId"], job.as_str(), "{answer}");
    assert_eq!(new_status, 503, "{refused}");
    assert_eq!(
        refused["error"]["data"]["code"], "engine_unavailable",
        "{refused}"
    );
    assert!(
        refused["error"]["data"]["retryAfterSeconds"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_ne!(headers["retryAfter"], Value::Null, "no Retry-After");
    assert_eq!(rest_status, 503);
    assert!(rest_retry.is_some(), "no Retry-After on the REST answer");
    assert_eq!(rcadia_status, 503);
    assert!(
        rcadia_retry.is_some(),
        "no Retry-After on the RCADIA answer"
    );

    // Redis is back; a worker runs the job; the same key reads it: the same job, once.
    let _worker = app.start_engine_worker();
    let mut last = Value::Null;
    let done = eventually(LONG, async || {
        let (_, a, _) = call(addr, "simulate_replay", args.clone(), &key).await;
        last = a;
        last["pending"] != true && last.get("outcome").is_some()
    })
    .await;
    assert!(done, "never finished: {last}");
    assert_eq!(last["jobId"], job.as_str());
    assert_eq!(last["outcome"], "won");
    let after = app.queue.remaining("finch", 1).await.unwrap();
    assert_eq!(after.simulations, before.simulations - 1, "charged once");
}

/// Item 4 with Redis killed (kill -9) instead of hung: the waiting caller gets `pending`
/// with its jobId, a new call `engine_unavailable`; Redis restarts from its AOF and the same
/// key reads the same job once a worker has run it.
async fn a_killed_redis_mid_wait_is_pending_and_the_job_is_read_after_its_restart() {
    let mut app = spawn_gateway().await;
    let key = app.agent_key("heron", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k-1"});
    let addr = app.addr;
    let waiting = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(addr, "simulate_replay", args, &key).await }
    });
    let mut job = None;
    assert!(
        eventually(LONG, async || {
            job = newest_job(&app.store, "heron").await;
            job.is_some()
        })
        .await
    );
    let job = job.unwrap();
    // `appendfsync everysec`: give the admission a second to reach the AOF.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    app.redis_mut().kill();
    let (status, answer, _) = waiting.await.unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["pending"], true, "{answer}");
    assert_eq!(answer["jobId"], job.as_str(), "{answer}");
    let (new_status, refused, _) = call(
        addr,
        "simulate_replay",
        json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k-2"}),
        &key,
    )
    .await;
    assert_eq!(new_status, 503, "{refused}");
    assert_eq!(refused["error"]["data"]["code"], "engine_unavailable");

    app.redis_mut().start_again();
    let _worker = app.start_engine_worker();
    let mut last = Value::Null;
    let done = eventually(LONG, async || {
        let (_, a, _) = call(addr, "simulate_replay", args.clone(), &key).await;
        last = a;
        last.get("outcome").is_some()
    })
    .await;
    assert!(done, "never finished: {last}");
    assert_eq!(last["jobId"], job.as_str());
}

/// Item 5: an invalid map is refused before admission: `validation_failed` with the
/// validator's errors, no job, nothing charged (playtest, simulate, submit).
#[tokio::test]
async fn an_invalid_map_is_refused_before_admission_and_costs_nothing() {
    let app = spawn_gateway().await;
    let key = app.agent_key("lark", 1).await;
    let before = app.queue.remaining("lark", 1).await.unwrap();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let bad = "this is not a map\n";
    for (tool, args) in [
        ("playtest_map", json!({"map": bad, "idempotencyKey": "p"})),
        (
            "simulate_replay",
            json!({"map": bad, "replay": replay, "idempotencyKey": "s"}),
        ),
        (
            "submit_level",
            json!({"name": "kaputt", "map": bad, "replay": replay, "idempotencyKey": "u"}),
        ),
    ] {
        let a = app.call(tool, args, Some(&key)).await;
        assert_eq!(error_code(&a), "validation_failed", "{tool}: {}", a.text);
        let e = &result_text(&a)["error"];
        let errors = e["errors"].as_array().expect("the validator's errors");
        assert!(!errors.is_empty(), "{tool}: {e}");
        assert!(errors[0]["line"].as_u64().is_some(), "{tool}: {e}");
    }
    assert_eq!(app.queue.remaining("lark", 1).await.unwrap(), before);
    assert_eq!(newest_job(&app.store, "lark").await, None, "a job was made");
    assert_eq!(app.queue.depth().await.unwrap().0, 0);
}

/// Item 6: the API process a caller waits in is killed while the job is queued (no worker
/// runs): another process drops the job and gives back what admission took.
async fn a_queued_job_of_a_killed_api_process_is_dropped_and_released() {
    let Outside {
        redis,
        store,
        queue,
        key,
        before,
        dir,
        ..
    } = outside("robin").await;
    let mut doomed = api_process(&redis, dir.path(), &[]);
    let addr = doomed.wait_listening();
    let mut survivor = api_process(&redis, dir.path(), &[]);
    survivor.wait_listening();

    let caller = tokio::spawn(async move {
        call(
            addr,
            "playtest_map",
            json!({"map": LEVEL_MAP, "idempotencyKey": "orphan"}),
            &key,
        )
        .await
    });
    let mut job = None;
    assert!(
        eventually(LONG, async || {
            job = newest_job(&store, "robin").await;
            job.is_some()
        })
        .await
    );
    let job = job.unwrap();
    let charged = queue.remaining("robin", 1).await.unwrap();
    assert_eq!(charged.playtests, before.playtests - 1);
    let killed = std::time::Instant::now();
    doomed.signal(libc::SIGKILL);
    doomed.wait_exit(Duration::from_secs(10)).unwrap();
    let _ = caller.await;

    let dropped = until_state(&queue, &job, JobState::Cancelled).await;
    assert!(dropped, "the orphan was not dropped: {}", survivor.stderr());
    eprintln!(
        "figure: orphaned queued job dropped and released {:.1} s after kill -9 of its API process (presence 10 s)",
        killed.elapsed().as_secs_f64()
    );
    let record = queue.get(&job).await.unwrap().unwrap();
    assert_eq!(record.failure.as_ref().unwrap().code, "cancelled");
    assert!(record.started_at_ms.is_none(), "it never ran");
    assert_eq!(
        queue.remaining("robin", 1).await.unwrap(),
        before,
        "released"
    );
    assert_eq!(queue.depth().await.unwrap().0, 0);
    assert!(!queue
        .has_idempotency_record("robin", "orphan")
        .await
        .unwrap());
}

fn quota_file(path: &std::path::Path, simulations: u32) {
    std::fs::write(
        path,
        format!(
            "[quotas.trust0]\nsubmissions = 2\nplaytests = 6\nsimulations = {simulations}\nlabor_candidates = 3\n"
        ),
    )
    .unwrap();
}

async fn stored_simulations(store: &horst_store::Store) -> Option<u32> {
    horst_queue::read_quotas(store)
        .await
        .unwrap()
        .map(|q| q.values.quotas.trust0.simulations)
}

async fn admin(args: &[&str], cwd: &std::path::Path) -> (bool, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cwd = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut p = HorstProcess::spawn(&refs, &[("HORST_OPERATOR", "olga")], &cwd);
        let status = p.wait_exit(LONG).expect("admin exits");
        (status.success(), format!("{}\n{}", p.stdout(), p.stderr()))
    })
    .await
    .unwrap()
}

/// Item 7: the file is the first seed; what the operator reloads at run time survives a
/// restart of the API; a reload without a file refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_set_at_run_time_survive_a_restart() {
    let redis = RedisServer::start();
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.toml");
    let later = dir.path().join("later.toml");
    quota_file(&seed, 2);
    quota_file(&later, 5);
    let start = |dir: &std::path::Path| {
        HorstProcess::spawn(
            &[
                "api",
                "--redis",
                &redis.url(),
                "--listen",
                "127.0.0.1:0",
                "--config",
                seed.to_str().unwrap(),
            ],
            &[],
            dir,
        )
    };
    let mut api = start(dir.path());
    api.wait_listening();
    assert!(
        eventually(LONG, async || stored_simulations(&store).await == Some(2)).await,
        "the first start did not seed the quotas"
    );
    let (ok, out) = admin(
        &[
            "admin",
            "quotas",
            "reload",
            "--redis",
            &redis.url(),
            "--config",
            later.to_str().unwrap(),
        ],
        dir.path(),
    )
    .await;
    assert!(ok, "{out}");
    assert_eq!(stored_simulations(&store).await, Some(5));

    api.signal(libc::SIGTERM);
    assert!(api.wait_exit(LONG).unwrap().success());
    let mut again = start(dir.path());
    again.wait_listening();
    // The restarted process has written what it writes at start by the time it serves.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        stored_simulations(&store).await,
        Some(5),
        "a restart undid the reload"
    );

    let (ok, out) = admin(
        &["admin", "quotas", "reload", "--redis", &redis.url()],
        dir.path(),
    )
    .await;
    assert!(!ok, "a reload without a file was accepted: {out}");
    assert!(out.contains("--config"), "{out}");
    assert_eq!(stored_simulations(&store).await, Some(5));
}

/// Item 7: `horst admin` with no running store exits non-zero with the fix and starts none.
#[tokio::test]
async fn admin_without_a_running_store_exits_non_zero_and_starts_none() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out) = admin(&["admin", "status", "--data", "data"], dir.path()).await;
    assert!(!ok, "admin answered without a store: {out}");
    assert!(out.contains("no running horst store"), "{out}");
    assert!(out.contains("--data") && out.contains("--redis"), "{out}");
    assert!(
        !dir.path().join("data/redis").exists(),
        "admin made a store"
    );
}

/// A Redis that cannot be reached: `horst admin` (and a starting `horst api`) says where it
/// looked and how to fix it, as every other start-up error does. It said "cannot connect to
/// Redis at redis://...: Connection refused (os error 111)" and nothing more.
#[tokio::test]
async fn admin_with_an_unreachable_redis_says_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}");
    let (ok, out) = admin(&["admin", "status", "--redis", &url], dir.path()).await;
    assert!(!ok, "admin answered without a Redis: {out}");
    assert!(
        out.contains(&format!("cannot connect to Redis at {url}")),
        "{out}"
    );
    assert!(out.contains("Fix:") && out.contains("redis-cli"), "{out}");
    assert!(
        out.contains("--redis") && out.contains("redis.url"),
        "{out}"
    );
}

/// Item 7: switching Redis to an evicting policy at run time makes `/readyz` 503 within the
/// re-check interval (500 ms in tests), and switching back makes it ready again.
#[tokio::test]
async fn an_evicting_policy_set_at_run_time_makes_readyz_fail() {
    let app = spawn_gateway().await;
    let ready = |want: u16| {
        let (http, url) = (app.http.clone(), app.url("/readyz"));
        async move {
            eventually(LONG, async || {
                http.get(&url)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().as_u16() == want)
            })
            .await
        }
    };
    assert!(ready(200).await);
    let set = |policy: &'static str| {
        let store = app.store.clone();
        async move {
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory-policy")
                .arg(policy)
                .query_async(&mut store.conn())
                .await
                .unwrap();
        }
    };
    set("allkeys-lru").await;
    assert!(ready(503).await, "an evicting Redis went unnoticed");
    let body = app
        .http
        .get(app.url("/readyz"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("maxmemory-policy"), "{body}");
    set("noeviction").await;
    assert!(ready(200).await);
}

/// Item 8: SIGTERM while a caller waits for a queued job: the caller is answered `pending`
/// with its jobId before the process exits, and the job stays queued (it no longer depends
/// on the stopped process), so a worker runs it and the same key reads its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_a_waiting_caller_pending_and_its_job_still_runs() {
    let redis = RedisServer::start();
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    let key = agent_key(&store, "swift").await;
    let dir = tempfile::tempdir().unwrap();
    let mut api = api_process(&redis, dir.path(), &[]);
    let addr = api.wait_listening();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "late"});
    let caller = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(addr, "simulate_replay", args, &key).await }
    });
    let mut job = None;
    assert!(
        eventually(LONG, async || {
            job = newest_job(&store, "swift").await;
            job.is_some()
        })
        .await
    );
    let job = job.unwrap();
    let term = std::time::Instant::now();
    api.signal(libc::SIGTERM);
    let (status, answer, _) = caller.await.unwrap();
    eprintln!(
        "figure: waiting caller answered pending {:.2} s after SIGTERM",
        term.elapsed().as_secs_f64()
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["pending"], true, "{answer}\n{}", api.stderr());
    assert_eq!(answer["jobId"], job.as_str());
    assert!(api.wait_exit(LONG).unwrap().success(), "{}", api.stderr());

    // Its job outlives the process: a worker and a new API process later, the same key
    // reads the result (the orphan sweep left it alone).
    let _worker = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &[], dir.path());
    let mut next = api_process(&redis, dir.path(), &[]);
    let addr = next.wait_listening();
    let mut last = Value::Null;
    let done = eventually(LONG, async || {
        let (_, a, _) = call(addr, "simulate_replay", args.clone(), &key).await;
        last = a;
        last.get("outcome").is_some()
    })
    .await;
    assert!(done, "never finished: {last}");
    assert_eq!(last["jobId"], job.as_str());
    assert_eq!(last["outcome"], "won");
}

/// Redis loses its data (here a `FLUSHALL`) while a caller waits for its job: the caller is
/// told its job's record is gone, with the job's id and a stable code (`cancelled`: the job
/// will not finish), and that calling again is what to do. Before, the wait's read of the
/// missing record was an `internal_error` ("unexpected failure; details are in the server
/// log") without the job's id: a lost store looked like a bug of horst's.
#[tokio::test]
async fn a_caller_whose_job_record_is_gone_is_told_so() {
    let app = spawn_gateway().await;
    let key = app.agent_key("plover", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "gone-1"});
    let addr = app.addr;
    let waiting = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(addr, "simulate_replay", args, &key).await }
    });
    // No worker: the job waits in the queue until Redis loses it.
    let mut job = None;
    assert!(
        eventually(LONG, async || {
            job = newest_job(&app.store, "plover").await;
            job.is_some()
        })
        .await
    );
    let job = job.unwrap();
    let _: () = redis::cmd("FLUSHALL")
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let (status, answer, _) = tokio::time::timeout(LONG, waiting)
        .await
        .expect("the waiting caller was answered")
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["error"]["code"], "cancelled", "{answer}");
    assert_eq!(answer["error"]["jobId"], job.as_str(), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("lost its data") && message.contains("call again"),
        "{answer}"
    );
}

/// The cases above that wait out a fault, with the shard-down drill of the Cluster, the API
/// killed mid-rating and the MCP pings under a hung Redis, side by side, each with its own
/// Redis (or Cluster) and processes: they mostly wait (Redis hung past the call timeouts, a
/// lease or a presence running out, a restart from the AOF), CPU-idle; one after another
/// they held a test thread for about 110 s, the longest 31 s (docs/benchmarks.md, "The test
/// run").
#[test]
fn faults_that_wait_side_by_side() {
    crate::side_by_side!(
        while_redis_hangs_a_waiting_caller_gets_pending_and_new_calls_engine_unavailable,
        a_queued_job_of_a_killed_api_process_is_dropped_and_released,
        a_killed_redis_mid_wait_is_pending_and_the_job_is_read_after_its_restart,
        a_dead_worker_s_job_fails_with_no_worker_left_and_its_caller_is_told,
        crate::cluster::a_shard_down_leaves_the_others_ready_and_their_scripts_running,
        crate::arena::an_api_process_killed_mid_rating_update_leaves_the_game_rated_once,
        crate::mcp_transport::with_redis_hung_store_free_calls_do_not_each_wait_for_it,
    );
}
