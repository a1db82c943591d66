//! The operator's control of running work, against a real redis-server, the real HTTP API
//! and a real worker with the engine and the planner: cancel a running playtest (REST), its
//! progress while it runs, the caller told at once, the slot free for the next job, the
//! charge kept, the action audited; the job view and the queue view.

use std::sync::Arc;
use std::time::{Duration, Instant};

use horst_queue::{Admission, JobKind, JobSpec, JobState};
use horst_worker::{EngineRunner, WorkerIdentity, WorkerMetrics};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::harness::{spawn_app_with, TestApp};

const ADMIN_TOKEN: &str = "job-control-token-0123456789abcdef";

fn start_worker(app: &TestApp) -> watch::Sender<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(horst_worker::run(
        app.queue.clone(),
        Arc::new(EngineRunner::new(1).unwrap()),
        WorkerIdentity::new(0, 1).with_referee_slots(1),
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        rx,
    ));
    tx
}

async fn admin(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = app
        .http
        .request(method, app.url(path))
        .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
        .header("x-operator", "olga");
    if let Some(b) = body {
        r = r.json(&b);
    }
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn admit(app: &TestApp, kind: JobKind, account: &str, map: String) -> String {
    match app
        .queue
        .admit(JobSpec {
            kind,
            account: account.into(),
            trust: 1,
            idempotency_key: format!("{account}-{}-k", kind.as_str()),
            input: horst_queue::JobInput {
                map,
                ..Default::default()
            },
        })
        .await
        .unwrap()
    {
        Admission::New(job) => job.id,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_stops_a_running_playtest_its_caller_is_told_and_the_slot_is_free() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    let _worker = start_worker(&app);
    // A search that runs until its limit (the planner now wins the corpus' long rides in
    // well under a second).
    let undecided = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/levels/undecided.map"),
    )
    .unwrap();
    let job = admit(&app, JobKind::Playtest, "anna", undecided).await;
    let waiter = {
        let q = app.queue.clone();
        let id = job.clone();
        tokio::spawn(async move { q.wait(&id, Duration::from_secs(90)).await })
    };
    // Its progress shows while it runs (written every 1.5 s).
    let until = Instant::now() + Duration::from_secs(60);
    let progress = loop {
        let rec = app.queue.get(&job).await.unwrap().unwrap();
        // Queued until the worker's slot claims it, then running until stopped.
        assert!(!rec.state.is_final(), "{rec:?}");
        if let Some(p) = rec.progress {
            break p;
        }
        assert!(Instant::now() < until, "no progress recorded");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(progress.states_explored > 0, "{progress:?}");
    // And the memory its search held, which the worker's memory budget is measured against.
    assert!(
        progress.peak_memory_mib.is_some_and(|m| m > 0),
        "{progress:?}"
    );
    let (status, shown) = admin(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/jobs/{job}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["state"], "running");
    // Its lane and the account's trust tier are shown with it.
    assert_eq!(shown["lane"], "planner", "{shown}");
    assert_eq!(shown["trust"], 1, "{shown}");
    assert!(
        shown["progress"]["statesExplored"].as_u64().unwrap() > 0,
        "{shown}"
    );
    assert!(
        shown["progress"]["peakMemoryMib"].as_u64().unwrap() > 0,
        "{shown}"
    );
    let (status, listed) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=running&kind=playtest",
        None,
    )
    .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["items"][0]["id"], job.as_str(), "{listed}");
    // One account's jobs come with what it used today.
    let (status, mine) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?account=anna",
        None,
    )
    .await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["items"][0]["id"], job.as_str(), "{mine}");
    let today = &mine["accountToday"];
    assert_eq!(today["account"], "anna", "{mine}");
    assert_eq!(today["jobs"]["playtest"], 1, "{mine}");
    assert_eq!(
        today["secondsCharged"], 20,
        "started work is charged: {mine}"
    );
    assert_eq!(today["secondsReserved"], 0, "{mine}");

    // A cancel without a reason is refused; with one it stops the job.
    let path = format!("/api/admin/jobs/{job}/cancel");
    let (status, e) = admin(
        &app,
        reqwest::Method::POST,
        &path,
        Some(json!({"reason": " "})),
    )
    .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (400, Some("invalid_input")),
        "{e}"
    );
    // Another playtest waits for the only general slot.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("levels");
    let easy = std::fs::read_to_string(dir.join("01-erste-schritte.map")).unwrap();
    let next = admit(&app, JobKind::Playtest, "bob", easy).await;
    let cancelled_at = Instant::now();
    let (status, r) = admin(
        &app,
        reqwest::Method::POST,
        &path,
        Some(json!({"reason": "stuck map"})),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["outcome"], "stopped", "{r}");

    let done = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the caller is told")
        .unwrap()
        .unwrap();
    let told = cancelled_at.elapsed();
    assert_eq!(done.state, JobState::Cancelled);
    let f = done.failure.unwrap();
    assert_eq!(f.code, horst_queue::FailureCode::Cancelled);
    assert!(f.message.contains("stuck map"), "{}", f.message);
    assert_eq!(done.charged_seconds, 20, "started work stays charged");

    // The slot is free: the waiting playtest (a short level) runs on it and wins.
    let rec = app
        .queue
        .wait(&next, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(rec.state, JobState::Succeeded, "{rec:?}");
    // The view says what it found, not only that it ran: a playtest that found no replay
    // succeeds too.
    let (status, shown) = admin(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/jobs/{next}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["outcome"], "won", "{shown}");
    assert!(shown.get("reason").is_none(), "{shown}");
    // Figures (docs/reliability.md), not assertions: when the caller heard, and how long
    // after the job ended (server clock) the freed slot started the waiting job.
    println!(
        "figure: caller told {} ms after the cancel request; the waiting job started {} ms after the stop",
        told.as_millis(),
        rec.started_at_ms
            .unwrap()
            .saturating_sub(done.finished_at_ms.unwrap())
    );
    // The stopped run did not complete afterwards: the job stays as the operator left it.
    let again = app.queue.get(&job).await.unwrap().unwrap();
    assert_eq!(again.state, JobState::Cancelled);

    // Cancelling a finished job is a conflict; an unknown one is not found.
    let (status, e) = admin(
        &app,
        reqwest::Method::POST,
        &path,
        Some(json!({"reason": "again"})),
    )
    .await;
    assert_eq!((status, e["code"].as_str()), (409, Some("conflict")), "{e}");
    let (status, _) = admin(
        &app,
        reqwest::Method::POST,
        "/api/admin/jobs/job_none/cancel",
        Some(json!({"reason": "x"})),
    )
    .await;
    assert_eq!(status, 404);

    // Audited, and the queue view answers.
    let newest = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    assert_eq!(newest[0].action, "job_cancel");
    assert_eq!(newest[0].target, job);
    // `api:olga`, and since issue 28 also the admin token's id (`api:olga@<id>`).
    assert!(newest[0].who.starts_with("api:olga"), "{}", newest[0].who);
    assert_eq!(newest[0].detail["was"], "running");
    let (status, q) = admin(&app, reqwest::Method::GET, "/api/admin/queue", None).await;
    assert_eq!(status, 200, "{q}");
    assert_eq!(q["lanes"].as_array().unwrap().len(), 2, "{q}");
    assert_eq!(q["today"]["finished"]["playtest"]["cancelled"], 1, "{q}");
}

/// An app with the admin token and anna's simulation queued (no worker runs): its job id.
async fn a_queued_simulation() -> (TestApp, String) {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    let job = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    (app, job)
}

/// An operator sheds work while Redis is full (`maxmemory` under `noeviction`): the cancel
/// takes effect and its audit entry is written with it (the trail is bounded, so it may be
/// written at `maxmemory`). The entry was refused there, the operator was told to retry, and
/// the retry found the job finished: a cancel with no trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_redis_is_full_is_audited() {
    let (app, job) = a_queued_simulation().await;
    crate::redis_full::fill(&app).await;

    let (status, v) = admin(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/jobs/{job}/cancel"),
        Some(json!({ "reason": "shedding load" })),
    )
    .await;
    crate::redis_full::config_set(&app, "maxmemory", "0").await;
    assert_eq!(status, 200, "{v}");
    let record = app.queue.get(&job).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Cancelled);
    let log = horst_operator::audit_log(&app.store, 0, 10).await.unwrap();
    let entry = log
        .iter()
        .find(|e| e.action == "job_cancel")
        .unwrap_or_else(|| panic!("the cancel left no audit entry: {log:?}"));
    assert_eq!(entry.target, job);
}

/// A listing of finished jobs needs an account (only the jobs waiting and running now are
/// read without one): it is refused with the fix, where it answered an empty list that read
/// as "none". A limit out of range is clamped (the CLI's 0 listed nothing; a huge one
/// overflowed).
#[tokio::test]
async fn a_listing_of_finished_jobs_asks_for_the_account_and_limits_are_clamped() {
    let (app, job) = a_queued_simulation().await;
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=succeeded",
        None,
    )
    .await;
    assert_eq!(status, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("account"), "{v}");
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=succeeded&account=anna",
        None,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let filter = horst_operator::jobs::JobFilter {
        state: None,
        kind: None,
        account: Some("anna".into()),
    };
    for limit in [0, usize::MAX] {
        let rows = horst_operator::jobs::list_jobs(&app.queue, &filter, 0, limit)
            .await
            .unwrap()
            .items;
        assert_eq!(rows.len(), 1, "limit {limit}");
        assert_eq!(rows[0].id, job);
    }
}

/// The failed and cancelled jobs of every account are listed without naming one (REST and
/// `horst admin job list --state cancelled`), newest end first, paged: before, the listing
/// was refused with "give the account", so an operator could not see what failed across the
/// gateway without knowing whose it was. Succeeded ones (not indexed) still ask for it
/// (`a_listing_of_finished_jobs_asks_for_the_account_and_limits_are_clamped`). The CLI calls
/// the same `list_jobs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_and_cancelled_jobs_of_every_account_are_listed() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    let mut jobs = Vec::new();
    for account in ["anna", "bert", "carl"] {
        let job = admit(
            &app,
            JobKind::Simulate,
            account,
            crate::harness::LEVEL_MAP.into(),
        )
        .await;
        let (status, v) = admin(
            &app,
            reqwest::Method::POST,
            &format!("/api/admin/jobs/{job}/cancel"),
            Some(json!({ "reason": format!("shed {account}") })),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        jobs.push(job);
        // Ends in distinct milliseconds: the order is by end.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // One still waiting is not among them.
    let waiting = admit(
        &app,
        JobKind::Playtest,
        "dora",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=cancelled&limit=2",
        None,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let ids = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&v), vec![jobs[2].clone(), jobs[1].clone()], "{v}");
    assert_eq!(v["nextOffset"], json!(2), "{v}");
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=cancelled&limit=2&offset=2",
        None,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(ids(&v), vec![jobs[0].clone()], "{v}");
    assert!(v.get("nextOffset").is_none(), "{v}");
    assert_eq!(v["items"][0]["account"], json!("anna"), "{v}");
    // A kind filter applies; none failed.
    let (_, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=cancelled&kind=playtest",
        None,
    )
    .await;
    assert_eq!(ids(&v), Vec::<String>::new(), "{v}");
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?state=failed",
        None,
    )
    .await;
    assert_eq!((status, ids(&v)), (200, Vec::new()), "{v}");
    // Without a state, the jobs waiting now (dora's), as before.
    let (_, v) = admin(&app, reqwest::Method::GET, "/api/admin/jobs", None).await;
    assert_eq!(ids(&v), vec![waiting], "{v}");
}

/// An account with hundreds of jobs: its listing pages through all of them with `offset`
/// and `nextOffset` (REST), and a filter that matches only old jobs finds them. Before, only
/// the account's newest 4 x limit jobs were read, there was no offset (`offset=` was refused
/// as an unknown field), and its older failures were out of reach of the job view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accounts_listing_pages_through_all_its_jobs_and_finds_old_ones() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    // 3 playtests first (the oldest), then 300 simulations; each dropped by the operator
    // before the next (one waiting job per account), so no worker is needed.
    let mut playtests = Vec::new();
    for n in 0..303 {
        let kind = if n < 3 {
            JobKind::Playtest
        } else {
            JobKind::Simulate
        };
        let job = match app
            .queue
            .admit(JobSpec {
                kind,
                account: "anna".into(),
                trust: 2,
                idempotency_key: format!("k{n}"),
                input: horst_queue::JobInput {
                    map: crate::harness::LEVEL_MAP.into(),
                    ..Default::default()
                },
            })
            .await
            .unwrap()
        {
            Admission::New(job) => job.id,
            other => panic!("{other:?}"),
        };
        app.queue.cancel(&job, "test").await.unwrap();
        if n < 3 {
            playtests.push(job);
        }
    }

    // The old playtests, two to a page.
    let mut found = Vec::new();
    let mut offset = 0;
    for _ in 0..10 {
        let (status, v) = admin(
            &app,
            reqwest::Method::GET,
            &format!("/api/admin/jobs?account=anna&kind=playtest&limit=2&offset={offset}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{v}");
        found.extend(
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["id"].as_str().unwrap().to_string()),
        );
        match v["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    // (Jobs admitted in the same millisecond are listed in either order.)
    found.sort();
    let mut expected = playtests.clone();
    expected.sort();
    assert_eq!(found, expected);

    // Unfiltered, 100 a page: every job once, newest first, and the last page says so.
    let mut all = Vec::new();
    let mut offset = 0;
    loop {
        let (status, v) = admin(
            &app,
            reqwest::Method::GET,
            &format!("/api/admin/jobs?account=anna&limit=100&offset={offset}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{v}");
        let items = v["items"].as_array().unwrap();
        all.extend(items.iter().map(|j| j["id"].as_str().unwrap().to_string()));
        match v["nextOffset"].as_u64() {
            Some(next) => offset = next as usize,
            None => break,
        }
        assert!(all.len() <= 303, "the listing does not end");
    }
    assert_eq!(all.len(), 303);
    let distinct: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(distinct.len(), 303);
    assert!(playtests.iter().all(|p| all.contains(p)), "{playtests:?}");
    // Past the end: an empty page, not an error.
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?account=anna&offset=100000",
        None,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["items"], json!([]), "{v}");
    assert!(v.get("nextOffset").is_none(), "{v}");
}

/// Blocking an account ends its work waiting and running now (REST), each cancel audited and
/// its caller told why; another account's job is left alone. Before, a blocked account's
/// jobs kept their places and workers and ran to their end for an account nobody may use.
/// Its waiting job is dropped before its running one is stopped: the other way round, the
/// slot the stop freed took the waiting job at once, and it was stopped running, charged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_an_account_cancels_its_waiting_and_running_jobs() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    horst_operator::create_account(&app.store, "olga", "anna", 1)
        .await
        .unwrap();
    let _worker = start_worker(&app);
    let undecided = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/levels/undecided.map"),
    )
    .unwrap();
    let playtest = |key: &str| JobSpec {
        kind: JobKind::Playtest,
        account: "anna".into(),
        trust: 1,
        idempotency_key: key.into(),
        input: horst_queue::JobInput {
            map: undecided.clone(),
            ..Default::default()
        },
    };
    // anna's first playtest runs on the only general slot, her second waits for it.
    let running = match app.queue.admit(playtest("first")).await.unwrap() {
        Admission::New(job) => job.id,
        other => panic!("{other:?}"),
    };
    let until = Instant::now() + Duration::from_secs(30);
    while app.queue.get(&running).await.unwrap().unwrap().state != JobState::Running {
        assert!(Instant::now() < until, "the first playtest never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let waiting = match app.queue.admit(playtest("second")).await.unwrap() {
        Admission::New(job) => job.id,
        other => panic!("{other:?}"),
    };
    // bob's simulation is his own (it runs on the referee slot).
    let bobs = admit(
        &app,
        JobKind::Simulate,
        "bob",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let waiter = {
        let q = app.queue.clone();
        let id = waiting.clone();
        tokio::spawn(async move { q.wait(&id, Duration::from_secs(30)).await })
    };

    let (status, v) = admin(
        &app,
        reqwest::Method::POST,
        "/api/admin/accounts/anna/block",
        None,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let mut ids: Vec<&str> = v["jobsCancelled"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|j| j.as_str().unwrap())
        .collect();
    ids.sort();
    let mut expected = vec![running.as_str(), waiting.as_str()];
    expected.sort();
    assert_eq!(ids, expected, "{v}");

    let told = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the waiting caller is told at once")
        .unwrap()
        .unwrap();
    assert_eq!(told.state, JobState::Cancelled);
    let f = told.failure.unwrap();
    assert!(
        f.message.contains("the account was blocked"),
        "{}",
        f.message
    );
    assert!(told.started_at_ms.is_none(), "it never started: {f:?}");
    assert_eq!(
        told.charged_seconds, 0,
        "a job that never started costs nothing"
    );
    let stopped = app.queue.get(&running).await.unwrap().unwrap();
    assert_eq!(stopped.state, JobState::Cancelled, "{stopped:?}");
    assert_eq!(stopped.charged_seconds, 20, "started work stays charged");
    let bob = app.queue.get(&bobs).await.unwrap().unwrap();
    assert_ne!(bob.state, JobState::Cancelled, "{bob:?}");
    // The waiting job was dropped first, then the running one stopped (newest first here).
    let log = horst_operator::audit_log(&app.store, 0, 10).await.unwrap();
    let cancels: Vec<(&str, &str)> = log
        .iter()
        .filter(|e| e.action == "job_cancel")
        .map(|e| {
            (
                e.target.as_str(),
                e.detail["was"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        cancels,
        [(running.as_str(), "running"), (waiting.as_str(), "queued")],
        "{log:?}"
    );
}

/// `horst admin job list | head -1` with more lines than the reader takes: the command ends
/// quietly (exit 0). It panicked ("failed printing to stdout: Broken pipe", a backtrace,
/// exit 101) once the reader had closed the pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_listing_into_a_closed_pipe_ends_quietly() {
    let (app, _job) = a_queued_simulation().await;
    let url = app.redis().url();
    let (status, stderr) = tokio::task::spawn_blocking(move || {
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
        for (k, _) in std::env::vars() {
            if k.starts_with("HORST_") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd
            .args(["admin", "job", "list", "--redis", &url])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the command writes.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        (out.status, String::from_utf8_lossy(&out.stderr).to_string())
    })
    .await
    .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status:?}: {stderr}");
}

/// `horst admin job show` and `job list` print times as UTC RFC 3339 with their age and the
/// wait in words, for the operator who reads them; `--json` prints the rows as the REST admin
/// API answers them, the times in Unix milliseconds, for scripts. Before, both printed only
/// the JSON, each time a 13-digit number of milliseconds (and `--json` was refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_says_a_jobs_times_in_utc_and_json_keeps_the_milliseconds() {
    let (app, job) = a_queued_simulation().await;
    let record = app.queue.get(&job).await.unwrap().unwrap();
    let admitted = horst_dates::rfc3339_ms(record.created_at_ms);
    let ms = record.created_at_ms.to_string();
    let app = Arc::new(app);
    let cli = |args: Vec<String>| {
        let app = app.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                crate::accounts::admin_cli_ok(&app, &args, "")
            })
            .await
            .unwrap()
        }
    };
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let (out, _) = cli(args(&["job", "show", &job])).await;
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line: {out}"))
            .to_string()
    };
    assert!(line("job ").ends_with(&job), "{out}");
    assert!(
        line("admitted ").contains(&format!("{admitted} ("))
            && line("admitted ").ends_with(" ago)"),
        "{out}"
    );
    assert!(line("waiting ").ends_with(" so far"), "{out}");
    assert!(line("state ").starts_with("state     queued: "), "{out}");
    assert!(!out.contains(&ms), "a time in ms: {out}");

    let (out, _) = cli(args(&["job", "show", &job, "--json"])).await;
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["id"], job.as_str(), "{v}");
    assert_eq!(v["admittedAtMs"], record.created_at_ms, "{v}");

    let (out, _) = cli(args(&["job", "list"])).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("ID ") && lines[0].contains("ADMITTED (UTC)"),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&job) && lines[1].contains(&admitted) && lines[1].contains("queued"),
        "{out}"
    );
    assert!(!out.contains(&ms), "a time in ms: {out}");

    let (out, _) = cli(args(&["job", "list", "--json"])).await;
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["admittedAtMs"], record.created_at_ms, "{out}");

    // No job: said on stderr, nothing on stdout (a pipe gets no header without rows).
    let (out, err) = cli(args(&["job", "list", "--state", "running"])).await;
    assert_eq!(out, "", "{out}");
    assert!(err.contains("no jobs match"), "{err}");

    // An id with no record says why there may be none, as `job cancel` does (it said only
    // "check the id", though a finished job's record expires).
    let app2 = app.clone();
    let (ok, _, err) = tokio::task::spawn_blocking(move || {
        crate::accounts::admin_cli(&app2, &["job", "show", "job_gone"], "")
    })
    .await
    .unwrap();
    assert!(!ok, "{err}");
    assert!(
        err.contains("not_found: no job job_gone") && err.contains("queue.job_retention_hours"),
        "{err}"
    );
}

/// The admin page's job view, signed in with the admin token: one account's jobs come 100 a
/// page with Next and Previous, and a cancelled job's row says why (the operator's reason)
/// and what it was charged. Before, the page showed an account's newest 100 jobs only, and a
/// failed job's code without its message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_pages_job_view_pages_and_says_why_a_job_ended() {
    let app = job_view_app().await;
    cancelled_jobs(&app, 120, |n| format!("reason {n}")).await;
    let long = Duration::from_secs(60);
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.eval(
        "document.querySelector('form.filters input[name=account]').value = 'anna'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    let rows = "document.querySelectorAll('#view tbody tr').length";
    let view = "document.getElementById('view').textContent";
    tab.wait_for(
        &format!("{rows} === 100 && {view}.includes('reason 119')"),
        "anna's newest 100 jobs",
        long,
    )
    .await;
    // (Jobs admitted in the same millisecond are listed in either order.)
    let first = tab
        .eval(
            "[...document.querySelectorAll('#view tbody tr')].map((r) => r.textContent) \
             .find((t) => t.includes('reason 119:') || t.includes('reason 119;'))",
        )
        .await;
    let first = first.as_str().unwrap_or_default();
    assert!(
        first.contains("cancelled by the operator: reason 119"),
        "{first}"
    );
    assert!(first.contains("0 s"), "its charge: {first}");
    assert!(first.contains("referee lane"), "{first}");
    // At 1280x800 no column stands empty: the Actions column of jobs that have nothing to
    // cancel (13rem, kept in view over the scrolled columns) hid Ended, Worker and Progress.
    tab.viewport(1280, 800).await;
    let empty = tab
        .eval(
            "[...document.querySelectorAll('#view table')].flatMap((t) => [...t.querySelectorAll('thead th')].map((th, i) => \
               [...t.querySelectorAll('tbody tr')].every((tr) => !tr.children[i] || tr.children[i].textContent.trim() === '' && !tr.children[i].children.length) \
                 ? `column ${i + 1} (${th.textContent || 'no heading'})` : null)).filter(Boolean)",
        )
        .await;
    tab.screenshot("admin", "jobs-finished-1280x800").await;
    assert_eq!(
        empty,
        serde_json::json!([]),
        "empty columns in the job view at 1280x800"
    );
    // On a phone: the job list fits the screen and every control is big enough to tap.
    tab.viewport(390, 844).await;
    assert_eq!(
        tab.eval("document.documentElement.scrollWidth <= window.innerWidth")
            .await,
        serde_json::json!(true),
        "the job view scrolls sideways on a 390 px phone"
    );
    assert_eq!(
        crate::phone_pages::small_controls(&tab).await,
        Vec::<String>::new(),
        "the job view's controls on a 390 px phone"
    );
    tab.screenshot("admin", "jobs-390x844").await;
    tab.viewport(1280, 800).await;
    // Next: the 20 older ones; Previous: back to the newest.
    tab.eval("document.querySelector('.pager button:last-child').click()")
        .await;
    tab.wait_for(
        &format!("{rows} === 20 && {view}.includes('reason 0')"),
        "the older 20",
        long,
    )
    .await;
    tab.eval("document.querySelector('.pager button:first-child').click()")
        .await;
    tab.wait_for(
        &format!("{rows} === 100 && {view}.includes('reason 119')"),
        "the newest 100 again",
        long,
    )
    .await;
    tab.assert_no_errors();
}

/// An app with the admin token and the web pages: the job view's tests.
/// `count` simulations of anna's, each dropped by the operator with `reason(n)` before the
/// next is admitted (one waiting job per account), so no worker is needed.
pub(crate) async fn cancelled_jobs(app: &TestApp, count: usize, reason: impl Fn(usize) -> String) {
    for n in 0..count {
        let job = match app
            .queue
            .admit(JobSpec {
                kind: JobKind::Simulate,
                account: "anna".into(),
                trust: 1,
                idempotency_key: format!("k{n}"),
                input: horst_queue::JobInput {
                    map: crate::harness::LEVEL_MAP.into(),
                    ..Default::default()
                },
            })
            .await
            .unwrap()
        {
            Admission::New(job) => job.id,
            other => panic!("{other:?}"),
        };
        app.queue.cancel(&job, &reason(n)).await.unwrap();
    }
}

pub(crate) async fn job_view_app() -> TestApp {
    spawn_app_with(|c| {
        c.gateway.admin_token = ADMIN_TOKEN.into();
        c.server.web_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web").into();
    })
    .await
}

/// An operator signed in on `/admin` with the admin token, on the job view: the browser (kept
/// alive by the caller) and its tab.
pub(crate) async fn signed_in_job_view(
    app: &TestApp,
) -> (
    std::sync::Arc<horst_house::cdp::Browser>,
    crate::browser::Tab,
) {
    let long = Duration::from_secs(60);
    let browser = crate::browser::launch().await;
    let tab = crate::browser::Tab::open(&browser, &app.url("/admin/")).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the sign-in forms",
        long,
    )
    .await;
    tab.eval(&format!(
        "document.getElementById('tok-name').value = 'olga'; \
         document.getElementById('tok-token').value = '{ADMIN_TOKEN}'; \
         document.getElementById('token-form').requestSubmit()"
    ))
    .await;
    tab.wait_for(
        "document.body.dataset.section === 'overview'",
        "the overview",
        long,
    )
    .await;
    tab.eval("location.hash = '#jobs'").await;
    tab.wait_for(
        "!!document.querySelector('form.filters')",
        "the job view",
        long,
    )
    .await;
    (browser, tab)
}

/// On a 1280 px screen the job view's "Cancel job" is in view and takes the click: the
/// table (ids, times, progress) is wider than the screen and scrolls, and the button's column
/// was not the Actions column that stays in view, so it sat past the right edge, under the
/// scroll. The cancel made on the page reaches the job and is audited as the page's; the job
/// is then found by its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_views_cancel_button_is_on_a_1280_px_screen_and_cancels() {
    let app = job_view_app().await;
    // Waiting (no worker runs): it has the button.
    let job = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let long = Duration::from_secs(60);
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1280, 800).await;
    let button = "document.querySelector('#view td button.danger')";
    tab.wait_for(
        &format!("!!{button} && document.getElementById('view').textContent.includes('{job}')"),
        "the waiting job with its Cancel button",
        long,
    )
    .await;
    tab.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        .await;
    let seen = tab
        .eval(&format!(
            "(() => {{ const b = {button}; const r = b.getBoundingClientRect(); \
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
             return {{ left: r.left, right: r.right, screen: innerWidth, hit: hit === b }}; }})()"
        ))
        .await;
    tab.screenshot("admin", "jobs-cancel-1280x800").await;
    assert!(
        seen["right"].as_f64().unwrap() <= seen["screen"].as_f64().unwrap()
            && seen["hit"] == json!(true),
        "the Cancel job button is off a 1280 px screen or covered: {seen}"
    );
    // The click asks, with a reason, and cancels.
    tab.eval(&format!("{button}.click()")).await;
    tab.wait_for(
        "!!document.querySelector('#view .confirm input')",
        "the confirmation with its reason field",
        long,
    )
    .await;
    tab.eval(
        "document.querySelector('#view .confirm input').value = 'cleaning up'; \
         document.querySelector('#view [data-confirm]').click()",
    )
    .await;
    // The page said so (its answer came after the audit entry) and listed the jobs again
    // (its form is then the new one).
    tab.wait_for(
        &format!(
            "document.body.textContent.includes('Job {job} cancelled (dropped)') \
             && !!document.querySelector('form.filters input[name=job]')"
        ),
        "the cancel said and the job view shown again",
        long,
    )
    .await;
    let cancelled = crate::harness::eventually(long, async || {
        app.queue.get(&job).await.unwrap().unwrap().state == JobState::Cancelled
    })
    .await;
    assert!(cancelled, "the page's cancel did not reach the job");
    let newest = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    assert_eq!(
        (newest[0].action.as_str(), newest[0].target.as_str()),
        ("job_cancel", job.as_str())
    );
    assert!(newest[0].who.starts_with("page:olga"), "{}", newest[0].who);
    // A job found by its id alone (a log line or an agent's message names it), finished and
    // of any account: the listing without an account shows only the waiting and running
    // ones, and there was no way to it without knowing its account.
    let by_id = |id: &str| {
        format!(
            "document.querySelector('form.filters input[name=job]').value = '{id}'; \
             document.querySelector('form.filters').requestSubmit()"
        )
    };
    let rows = "document.querySelectorAll('#view tbody tr')";
    tab.eval(&by_id(&job)).await;
    tab.wait_for(
        &format!(
            "{rows}.length === 1 && {rows}[0].textContent.includes('{job}') \
             && {rows}[0].textContent.includes('cleaning up')"
        ),
        "the cancelled job found by its id",
        long,
    )
    .await;
    tab.assert_no_errors();
    // An id nothing has is said, and the filters stay to type another. (The browser logs
    // the 404 as a failed load.)
    tab.eval(&by_id("job_none")).await;
    tab.wait_for(
        "(document.querySelector('#view .error-text')?.textContent || '').includes('no job job_none') \
         && !!document.querySelector('form.filters input[name=job]')",
        "the unknown id said with the filters kept",
        long,
    )
    .await;
    let errors = tab.errors.lock().unwrap().clone();
    assert!(
        errors
            .iter()
            .all(|e| e.contains("/api/admin/jobs/job_none")),
        "{errors:?}"
    );
}

/// An account's listing of a name no account has, and with no jobs, is a 404 that says how
/// names look: it answered an empty page, which the page and the CLI show as "No jobs." for a
/// mistyped name or an agent's display name (its account is its handle). An account without
/// jobs still lists nothing, and so do the operator's rechecks before the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_listing_of_an_account_that_does_not_exist_says_so() {
    let (app, _job) = a_queued_simulation().await;
    for name in ["nobody", "Anna", "a%20b"] {
        let (status, e) = admin(
            &app,
            reqwest::Method::GET,
            &format!("/api/admin/jobs?account={name}"),
            None,
        )
        .await;
        assert_eq!(
            (status, e["code"].as_str()),
            (404, Some("not_found")),
            "{name}: {e}"
        );
        let message = e["error"].as_str().unwrap();
        assert!(
            message.contains("no account") && message.contains("handle"),
            "{message}"
        );
    }
    // anna has a job (her account record is not needed for it to be listed).
    let (status, v) = admin(
        &app,
        reqwest::Method::GET,
        "/api/admin/jobs?account=anna",
        None,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["items"].as_array().unwrap().len(), 1, "{v}");
    // An account that exists and has no jobs: an empty page.
    horst_identity::accounts::create_account(&app.store, "bert", 0)
        .await
        .unwrap();
    for name in ["bert", "~operator"] {
        let (status, v) = admin(
            &app,
            reqwest::Method::GET,
            &format!("/api/admin/jobs?account={name}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{name}: {v}");
        assert_eq!(v["items"], json!([]), "{name}: {v}");
    }
}

/// The job view updates itself while a job it shows waits or runs: a waiting simulation is
/// shown `queued`, a worker starts and runs it, and the view shows it ended without a click
/// (before, it stayed `queued` until the operator pressed Show again). The refresh replaces
/// the list in place (no "Loading…", the filter form is the same element with what was typed
/// in it), and once nothing shown waits or runs it stops reading. At 390 and 1280 px.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_view_follows_a_job_until_it_ends() {
    let app = job_view_app().await;
    let job = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let long = Duration::from_secs(60);
    let (_browser, tab) = signed_in_job_view(&app).await;
    // anna's recent jobs: a finished one stays listed (the jobs waiting and running now
    // would drop it).
    tab.eval(
        "document.querySelector('form.filters input[name=account]').value = 'anna'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    for (w, h) in [(390, 844), (1280, 800)] {
        tab.viewport(w, h).await;
        tab.wait_for(
            &format!(
                "document.getElementById('view').textContent.includes('Recent jobs of anna') \
                 && document.getElementById('view').textContent.includes('{job}')"
            ),
            "the waiting job",
            long,
        )
        .await;
        tab.screenshot("admin", &format!("jobs-live-queued-{w}x{h}"))
            .await;
    }
    // Marks the form, types into it, counts the reads and watches for "Loading…".
    tab.eval(
        "window.__form = document.querySelector('form.filters'); \
         window.__form.querySelector('input[name=job]').value = 'typed'; \
         window.__loading = false; window.__reads = 0; \
         new MutationObserver(() => { if (document.getElementById('view').textContent.includes('Loading')) window.__loading = true; }) \
           .observe(document.getElementById('view'), { childList: true, subtree: true, characterData: true }); \
         const f = window.fetch; window.fetch = (...a) => { if (String(a[0]).includes('/api/admin/jobs')) window.__reads++; return f(...a); }; true",
    )
    .await;
    let _worker = start_worker(&app);
    let ended = crate::harness::eventually(long, async || {
        app.queue.get(&job).await.unwrap().unwrap().state.is_final()
    })
    .await;
    assert!(ended, "the worker did not run the job");
    let state = app.queue.get(&job).await.unwrap().unwrap().state;
    // Without the refresh the view went on showing it queued.
    tab.wait_for(
        &format!(
            "[...document.querySelectorAll('#view tbody tr')].some((r) => r.textContent.includes('{job}') && r.textContent.includes('{}'))",
            state.as_str()
        ),
        "the job shown ended without a click",
        Duration::from_secs(20),
    )
    .await;
    let seen = tab
        .eval(
            "({ same: window.__form === document.querySelector('form.filters'), \
                typed: document.querySelector('form.filters input[name=job]').value, \
                loading: window.__loading, reads: window.__reads })",
        )
        .await;
    assert_eq!(
        seen["same"],
        json!(true),
        "the form was rendered again: {seen}"
    );
    assert_eq!(seen["typed"], json!("typed"), "{seen}");
    assert_eq!(
        seen["loading"],
        json!(false),
        "the refresh flickered: {seen}"
    );
    for (w, h) in [(390, 844), (1280, 800)] {
        tab.viewport(w, h).await;
        tab.screenshot("admin", &format!("jobs-live-ended-{w}x{h}"))
            .await;
    }
    // Nothing shown waits or runs: it stopped reading.
    let reads = tab.eval("window.__reads").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        tab.eval("window.__reads").await,
        reads,
        "it went on polling"
    );
    tab.assert_no_errors();
}

/// Words of the page's table cells that the browser broke across lines, as "text (cell)": a
/// date, an id, a worker's name or a number and its unit ("0.2 s") split in two. A space
/// between a number and its unit counts as part of the word.
const BROKEN_WORDS: &str = "(() => { const out = []; \
  for (const td of document.querySelectorAll('#view tbody td, #view tbody th')) { \
    const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT); let n; \
    while ((n = walk.nextNode())) { const re = /\\S+(?: (?:s|ms|MiB|UTC)(?=\\s|$))?/g; let m; \
      while ((m = re.exec(n.data))) { const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length); \
        const tops = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))); \
        if (tops.size > 1) out.push(`${m[0]} (${td.dataset.label || td.cellIndex})`); } } } \
  return out; })()";

/// The job list's buttons and the lines naming a worker that take more than one line.
const ONE_LINE: &str = "[...document.querySelectorAll('#view tbody button, #view tbody .when')] \
  .filter((e) => e.tagName === 'BUTTON' || e.querySelector('code.worker')) \
  .filter((e) => { const r = document.createRange(); r.selectNodeContents(e); \
    const rs = [...r.getClientRects()].filter((x) => x.width > 0); \
    return rs.some((x) => x.top >= rs[0].bottom - 1); }) \
  .map((e) => e.textContent)";

/// The job list at 1366x768, a laptop's screen, as an operator reads it: one finished job (its
/// worker, its times) and one waiting (its Cancel button). Before, the list had 12 columns
/// in about 1100 px: every date broke into four lines ("2026-12-" / "06" / "03:04:35" /
/// "UTC"), the wait's number and unit parted, the worker's name broke inside, and the
/// Actions column (13rem, kept in view) took a sixth of the width for one button, so the
/// table scrolled sideways. Now it fits and no word, time or id breaks; at 1920x1080 too. The
/// cancel made there is in the audit log in words, its date whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_list_fits_a_1366_px_screen_without_breaking_a_word() {
    let app = job_view_app().await;
    let long = Duration::from_secs(60);
    let finished = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let (worker, stop) = watch::channel(false);
    let running = tokio::spawn(horst_worker::run(
        app.queue.clone(),
        Arc::new(EngineRunner::new(1).unwrap()),
        WorkerIdentity::new(0, 1).with_referee_slots(1),
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        stop,
    ));
    let ended = crate::harness::eventually(long, async || {
        app.queue
            .get(&finished)
            .await
            .unwrap()
            .unwrap()
            .state
            .is_final()
    })
    .await;
    assert!(ended, "the worker did not run the job");
    worker.send(true).unwrap();
    // Waiting: no worker runs any more. The worker is waited for, so that none of its slots
    // is still registered idle (and woken, or handed the job) when the job is admitted.
    tokio::time::timeout(long, running)
        .await
        .expect("the worker stopped")
        .unwrap();
    let waiting = admit(
        &app,
        JobKind::Playtest,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.eval(
        "document.querySelector('form.filters input[name=account]').value = 'anna'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    for (w, h) in [(1366, 768), (1920, 1080)] {
        tab.viewport(w, h).await;
        tab.wait_for(
            &format!(
                "document.querySelectorAll('#view tbody tr').length === 2 \
                 && document.getElementById('view').textContent.includes('{finished}') \
                 && !!document.querySelector('#view td button.danger')"
            ),
            "the finished and the waiting job",
            long,
        )
        .await;
        let shot = format!("jobs-{w}x{h}");
        tab.screenshot("admin", &shot).await;
        let fit = tab
            .eval(
                "(() => { const t = document.querySelector('#view .table-wrap'); \
                 return { scroll: t.scrollWidth, width: t.clientWidth }; })()",
            )
            .await;
        assert!(
            fit["scroll"].as_f64() <= fit["width"].as_f64(),
            "the job list scrolls sideways at {w}x{h}: {fit}"
        );
        assert_eq!(
            tab.eval(BROKEN_WORDS).await,
            json!([]),
            "words broken across lines in the job list at {w}x{h}"
        );
        // A button's label and a worker's line ("on vm-…") are one line each.
        assert_eq!(
            tab.eval(ONE_LINE).await,
            json!([]),
            "broken across lines in the job list at {w}x{h}"
        );
    }
    // The Cancel button still asks in its row, and the question fits beside the list.
    tab.eval("document.querySelector('#view td button.danger').click()")
        .await;
    tab.wait_for(
        "!!document.querySelector('#view .confirm input')",
        "the confirmation",
        long,
    )
    .await;
    tab.viewport(1366, 768).await;
    tab.screenshot("admin", "jobs-cancel-asks-1366x768").await;
    let question = tab
        .eval(
            "(() => { const c = document.querySelector('#view .confirm').getBoundingClientRect(); \
             return { right: c.right, screen: innerWidth }; })()",
        )
        .await;
    assert!(
        question["right"].as_f64() <= question["screen"].as_f64(),
        "the cancel question is off the screen: {question}"
    );
    tab.eval(
        "document.querySelector('#view .confirm input').value = 'cleaning up'; \
         document.querySelector('#view [data-confirm]').click()",
    )
    .await;
    tab.wait_for(
        &format!("document.body.textContent.includes('Job {waiting} cancelled (dropped)')"),
        "the cancel said",
        long,
    )
    .await;
    // The audit log says it for people: the detail's fields one a line, not an object's
    // JSON ({"reason":"cleaning up"}), and its dates break between the day and the time only.
    tab.eval("location.hash = '#audit'").await;
    let row = format!(
        "[...document.querySelectorAll('#view tbody tr')].find((r) => r.textContent.includes('job_cancel') && r.textContent.includes('{waiting}'))"
    );
    tab.wait_for(&format!("!!{row}"), "the cancel in the audit log", long)
        .await;
    for (w, h) in [(1366, 768), (390, 844)] {
        tab.viewport(w, h).await;
        tab.screenshot("admin", &format!("audit-{w}x{h}")).await;
        assert_eq!(
            tab.eval(&format!(
                "[...{row}.querySelectorAll('td.detail > div')].map((d) => d.textContent)"
            ))
            .await,
            json!(["reason: cleaning up", "was: queued"]),
            "the cancel's detail in the audit log at {w}x{h}"
        );
        // (On a phone a long id may break: the row is a card as wide as the screen.)
        if w > 1000 {
            assert_eq!(
                tab.eval(BROKEN_WORDS).await,
                json!([]),
                "words broken across lines in the audit log at {w}x{h}"
            );
        }
    }
    tab.assert_no_errors();
}

/// `admin` with another operator's name (`X-Operator`).
async fn cancel_as(app: &TestApp, who: &str, job: &str, reason: &str) -> (u16, Value) {
    let r = app
        .http
        .post(app.url(&format!("/api/admin/jobs/{job}/cancel")))
        .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
        .header("x-operator", who)
        .json(&json!({ "reason": reason }))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The `job_cancel` entries of the audit trail for `job`.
async fn cancels_audited(app: &TestApp, job: &str) -> Vec<horst_operator::AuditEntry> {
    horst_operator::audit_log(&app.store, 0, 500)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.action == "job_cancel" && e.target == job)
        .collect()
}

/// How many jobs of `kind` the day counts as ended, by final state.
async fn ended_today(app: &TestApp, kind: &str) -> std::collections::BTreeMap<String, u64> {
    app.queue
        .today()
        .await
        .unwrap()
        .finished
        .get(kind)
        .cloned()
        .unwrap_or_default()
}

/// Two operators on two API processes (one Redis) cancel the same job at the same moment,
/// once while it waits and once while it runs: one of them cancels it (200), the other is
/// told it already ended (409); the job ends once (`cancelled`, counted once in the day's
/// figures, its charge unchanged), stays so, and the audit trail names one operator once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_api_processes_cancelling_one_job_at_once_end_it_once_and_audit_it_once() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    let other =
        crate::harness::spawn_app_beside(&app, |c| c.gateway.admin_token = ADMIN_TOKEN.into())
            .await;
    let both = async |job: &str| {
        let (a, b) = tokio::join!(
            cancel_as(&app, "olga", job, "olga's reason"),
            cancel_as(&other, "pavel", job, "pavel's reason"),
        );
        let mut statuses = [a.0, b.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "{a:?} {b:?}");
        let (winner, loser) = if a.0 == 200 { (a, b) } else { (b, a) };
        assert_eq!(loser.1["code"], "conflict", "{loser:?}");
        let audited = cancels_audited(&app, job).await;
        assert_eq!(audited.len(), 1, "{audited:?}");
        let reason = audited[0].detail["reason"].as_str().unwrap().to_string();
        let who = if reason.starts_with("olga") {
            "api:olga"
        } else {
            "api:pavel"
        };
        assert!(audited[0].who.starts_with(who), "{audited:?}");
        assert!(winner.1["outcome"].is_string(), "{winner:?}");
        reason
    };

    // Waiting (no worker runs yet).
    let queued = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let reason = both(&queued).await;
    let r = app.queue.get(&queued).await.unwrap().unwrap();
    assert_eq!(r.state, JobState::Cancelled, "{r:?}");
    assert!(r.failure.unwrap().message.contains(&reason));
    assert_eq!(r.charged_seconds, 0, "it never started: nothing charged");
    assert_eq!(
        ended_today(&app, "simulate").await.get("cancelled"),
        Some(&1)
    );

    // Running: a search that runs until its limit.
    let _worker = start_worker(&app);
    let undecided = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/levels/undecided.map"),
    )
    .unwrap();
    let running = admit(&app, JobKind::Playtest, "bob", undecided).await;
    let started = crate::harness::eventually(Duration::from_secs(60), async || {
        app.queue.get(&running).await.unwrap().unwrap().state == JobState::Running
    })
    .await;
    assert!(started, "the playtest did not start");
    let charged_before = app.queue.today().await.unwrap().seconds_charged;
    both(&running).await;
    let r = app.queue.get(&running).await.unwrap().unwrap();
    assert_eq!(r.state, JobState::Cancelled, "{r:?}");
    assert_eq!(r.charged_seconds, 20, "started work stays charged, once");
    // Its worker heard the stop and stays out: nothing moves after it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let later = app.queue.get(&running).await.unwrap().unwrap();
    assert_eq!(later.state, JobState::Cancelled, "{later:?}");
    assert_eq!(later.finished_at_ms, r.finished_at_ms);
    let day = app.queue.today().await.unwrap();
    assert_eq!(
        day.seconds_charged, charged_before,
        "charged once, at its start"
    );
    assert_eq!(
        ended_today(&app, "playtest").await.get("cancelled"),
        Some(&1)
    );
    assert_eq!(ended_today(&app, "playtest").await.values().sum::<u64>(), 1);
}

/// Cancels sent as playtests finish: each job ends once, in one state that stays, either
/// `cancelled` (the cancel came first: 200, one audit entry) or as its run ended (the run
/// came first: 409 `conflict`, no audit entry). The day counts every job once, and charges
/// each started one once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_a_jobs_end_leaves_one_final_state_and_one_charge() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    let _worker = start_worker(&app);
    const JOBS: usize = 24;
    // A short level the planner wins in a few to a few hundred ms: a simulation without a
    // replay ended before any cancel reached it.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("levels");
    let easy = std::fs::read_to_string(dir.join("01-erste-schritte.map")).unwrap();
    let mut ids = Vec::new();
    let (mut cancelled, mut ended_first) = (0, 0);
    for i in 0..JOBS {
        let id = match app
            .queue
            .admit(JobSpec {
                kind: JobKind::Playtest,
                account: format!("racer{i}"),
                trust: 1,
                idempotency_key: format!("race-{i}"),
                input: horst_queue::JobInput {
                    map: easy.clone(),
                    ..Default::default()
                },
            })
            .await
            .unwrap()
        {
            Admission::New(job) => job.id,
            other => panic!("{other:?}"),
        };
        // From at once (handed to the idle slot) to after its end (the last ones surely
        // after, whatever the load).
        if i >= JOBS - 4 {
            app.queue.wait(&id, Duration::from_secs(30)).await.unwrap();
        } else {
            tokio::time::sleep(Duration::from_millis(i as u64 * 12)).await;
        }
        let (status, v) = cancel_as(&app, "olga", &id, "racing").await;
        let rec = app.queue.wait(&id, Duration::from_secs(30)).await.unwrap();
        assert!(rec.state.is_final(), "{rec:?}");
        let audited = cancels_audited(&app, &id).await;
        match status {
            200 => {
                cancelled += 1;
                assert_eq!(rec.state, JobState::Cancelled, "{v} {rec:?}");
                assert_eq!(audited.len(), 1, "{audited:?}");
            }
            409 => {
                ended_first += 1;
                assert_ne!(rec.state, JobState::Cancelled, "{v} {rec:?}");
                assert!(audited.is_empty(), "{audited:?}");
            }
            other => panic!("{other}: {v}"),
        }
        ids.push(id);
    }
    // The final states stay.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut charged = 0;
    for id in &ids {
        let r = app.queue.get(id).await.unwrap().unwrap();
        let again = app.queue.wait(id, Duration::from_secs(1)).await.unwrap();
        assert_eq!(r.state, again.state, "{r:?}");
        assert_eq!(r.finished_at_ms, again.finished_at_ms, "{r:?}");
        charged += r.charged_seconds;
    }
    let ended: u64 = ended_today(&app, "playtest").await.values().sum();
    assert_eq!(ended, JOBS as u64, "every job counted once as ended");
    assert_eq!(
        app.queue.today().await.unwrap().seconds_charged,
        charged,
        "the day's charge is the jobs' charges, each once"
    );
    println!("figure: {cancelled} cancelled first, {ended_first} ended first");
    assert!(
        cancelled > 0 && ended_first > 0,
        "no race: {cancelled} / {ended_first}"
    );
}

/// A playtest whose search outgrows the worker's memory budget (`worker.job_memory_mib`, 8 MiB
/// here, on the largest valid level)
/// ends `unresolved` with reason `memory_limit` and a hint that says so (never a proof); the
/// worker goes on to the next job, and `horst_job_playtests_unresolved_total{reason=
/// "memory_limit"}` counts it: the job itself `succeeded` (it ran and answered), so before the
/// counter an operator had no figure of how often the budget cut a search short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_playtest_over_its_memory_budget_ends_memory_limit_and_the_worker_goes_on() {
    // A long limit: under load a small level's search ran out of time before its budget.
    let app = spawn_app_with(|c| {
        c.gateway.admin_token = ADMIN_TOKEN.into();
        c.queue.playtest_seconds = 60;
        c.queue.wait_seconds = 120;
    })
    .await;
    let metrics = horst_telemetry::Metrics::new();
    let (_stop, rx) = watch::channel(false);
    tokio::spawn(horst_worker::run(
        app.queue.clone(),
        Arc::new(EngineRunner::new(1).unwrap().with_job_memory_mib(8)),
        WorkerIdentity::new(0, 1).with_referee_slots(1),
        WorkerMetrics::register(&metrics),
        rx,
    ));
    let counted = |reason: &str| {
        let text = metrics.encode();
        let line = format!("horst_job_playtests_unresolved_total{{reason=\"{reason}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(line.as_str()))
            .unwrap_or_else(|| panic!("no {line}in\n{text}"))
            .trim()
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(counted("memory_limit"), 0, "listed at zero from the start");
    // The largest valid level (512x128, thousands of crumbling ledges): every state is
    // large, and 8 MiB hold few of them.
    let huge = crate::up_worker::a_huge_level();
    let job = admit(&app, JobKind::Playtest, "anna", huge).await;
    let rec = app
        .queue
        .wait(&job, Duration::from_secs(120))
        .await
        .unwrap();
    assert_eq!(rec.state, JobState::Succeeded, "{rec:?}");
    let Some(horst_queue::JobResult::Playtest(played)) = &rec.result else {
        panic!("{rec:?}")
    };
    assert_eq!(
        played.outcome,
        horst_queue::Outcome::Unresolved,
        "{played:?}"
    );
    assert_eq!(played.reason.as_deref(), Some("memory_limit"), "{played:?}");
    assert!(played.proof.is_none(), "never a proof: {played:?}");
    let hint = played.hint.as_deref().unwrap_or_default();
    assert!(hint.contains("memory budget"), "{hint}");
    assert_eq!(counted("memory_limit"), 1);
    assert_eq!(counted("time_limit"), 0);
    // The view shows why it ended.
    let (status, shown) = admin(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/jobs/{job}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(
        (shown["outcome"].as_str(), shown["reason"].as_str()),
        (Some("unresolved"), Some("memory_limit")),
        "{shown}"
    );
    // The worker goes on: the next playtest (a short level) runs and wins.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("levels");
    let easy = std::fs::read_to_string(dir.join("01-erste-schritte.map")).unwrap();
    let next = admit(&app, JobKind::Playtest, "bob", easy).await;
    let rec = app
        .queue
        .wait(&next, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(rec.state, JobState::Succeeded, "{rec:?}");
    let Some(horst_queue::JobResult::Playtest(played)) = &rec.result else {
        panic!("{rec:?}")
    };
    assert_eq!(played.outcome, horst_queue::Outcome::Won, "{played:?}");
}

/// `/metrics` follows cancels wherever they happen: `horst_queue_jobs_ended_today` is read
/// from Redis, so an API process that ran nothing shows a job another process cancelled
/// (before, no metric moved for a waiting job's cancel: only the worker that ran a job
/// counted its end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_shows_on_every_processs_metrics() {
    let (app, job) = a_queued_simulation().await;
    let series = "horst_queue_jobs_ended_today{kind=\"simulate\",state=\"cancelled\"} ";
    let scrape = async || -> String {
        app.http
            .get(app.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    // Listed at zero from the gauges' first sample.
    let listed = crate::harness::eventually(Duration::from_secs(10), async || {
        scrape().await.contains(&format!("{series}0\n"))
    })
    .await;
    assert!(listed, "{}", scrape().await);
    let (status, v) = cancel_as(&app, "olga", &job, "shedding load").await;
    assert_eq!(status, 200, "{v}");
    // Sampled every 5 s.
    let moved = crate::harness::eventually(Duration::from_secs(15), async || {
        scrape().await.contains(&format!("{series}1\n"))
    })
    .await;
    assert!(moved, "{}", scrape().await);
}

/// The job view opened on the jobs waiting and running now, when none does ("No jobs."),
/// shows a job admitted afterwards, and the queue card its lane's depth, without a click: an
/// operator watching an idle queue for a flood to begin saw nothing come. The view read the
/// list again only while a job it showed waited or ran, so an empty one was never read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_job_view_shows_a_job_that_arrives_after_it_opened_empty() {
    let app = job_view_app().await;
    let long = Duration::from_secs(60);
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(390, 844).await;
    tab.wait_for(
        "document.getElementById('view').textContent.includes('No jobs.')",
        "the empty list",
        long,
    )
    .await;
    let job = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    // Read again within the view's longest pause (15 s).
    tab.wait_for(
        &format!(
            "[...document.querySelectorAll('#view tbody tr')].some((r) => r.textContent.includes('{job}')) \
             && document.getElementById('job-queue').textContent.includes('1 waiting')"
        ),
        "the job that arrived, without a click",
        Duration::from_secs(25),
    )
    .await;
    tab.screenshot("admin", "jobs-live-arrived-390x844").await;
    tab.assert_no_errors();
}

/// One account's jobs in every state (succeeded, failed, cancelled, running with its
/// progress, queued) on a phone (390x844) and a laptop: the page never scrolls sideways, each
/// state is said, a failed job says why, and only the waiting and the running job offer a
/// Cancel button, inside the screen. Screenshots: target/screenshots/admin/jobs-states-*.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_in_each_state_reads_well_on_a_phone() {
    // The running job (a search that runs until its time limit) must still run when the page
    // is read, and the queued one wait behind it in the worker's one slot: with the default
    // 20 s limit, a loaded machine's browser start and sign-in outlasted it, the queued job
    // ran and the view showed it finished. The test cancels the search at its end.
    let app = spawn_app_with(|c| {
        c.gateway.admin_token = ADMIN_TOKEN.into();
        c.server.web_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web").into();
        c.queue.playtest_seconds = 300;
        // Admission counts a job's whole limit from when the slot frees: the jobs queued
        // behind the running search must fit 300 s + 300 s.
        c.queue.wait_seconds = 660;
    })
    .await;
    let long = Duration::from_secs(60);
    let _worker = start_worker(&app);
    let job = |kind: JobKind, idem: &str, map: String| {
        let queue = app.queue.clone();
        let idem = idem.to_string();
        async move {
            match queue
                .admit(JobSpec {
                    kind,
                    account: "anna".into(),
                    trust: 1,
                    idempotency_key: idem,
                    input: horst_queue::JobInput {
                        map,
                        ..Default::default()
                    },
                })
                .await
                .unwrap()
            {
                Admission::New(job) => job.id,
                other => panic!("{other:?}"),
            }
        }
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("levels");
    let easy = std::fs::read_to_string(dir.join("01-erste-schritte.map")).unwrap();
    let succeeded = job(JobKind::Playtest, "k1", easy).await;
    let s = app.queue.wait(&succeeded, long).await.unwrap();
    assert_eq!(s.state, JobState::Succeeded, "{s:?}");
    // A simulation without a replay.
    let failed = job(JobKind::Simulate, "k2", crate::harness::LEVEL_MAP.into()).await;
    let f = app.queue.wait(&failed, long).await.unwrap();
    assert_eq!(f.state, JobState::Failed, "{f:?}");
    let undecided = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/levels/undecided.map"),
    )
    .unwrap();
    let running = job(JobKind::Playtest, "k3", undecided).await;
    let progressed = crate::harness::eventually(long, async || {
        app.queue
            .get(&running)
            .await
            .unwrap()
            .unwrap()
            .progress
            .is_some()
    })
    .await;
    assert!(progressed, "the playtest did not run");
    let cancelled = job(JobKind::Playtest, "k4", crate::harness::LEVEL_MAP.into()).await;
    let (status, v) = cancel_as(&app, "olga", &cancelled, "making room").await;
    assert_eq!(status, 200, "{v}");
    let queued = job(JobKind::Playtest, "k5", crate::harness::LEVEL_MAP.into()).await;

    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.eval(
        "document.querySelector('form.filters input[name=account]').value = 'anna'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    let all = [&succeeded, &failed, &running, &cancelled, &queued];
    for (w, h) in [(390, 844), (1366, 768)] {
        tab.viewport(w, h).await;
        tab.wait_for(
            &format!(
                "document.querySelectorAll('#view tbody tr').length === 5 \
                 && {}",
                all.iter()
                    .map(|id| format!(
                        "document.getElementById('view').textContent.includes('{id}')"
                    ))
                    .collect::<Vec<_>>()
                    .join(" && ")
            ),
            "the five jobs",
            long,
        )
        .await;
        tab.screenshot("admin", &format!("jobs-states-{w}x{h}"))
            .await;
        let seen = tab
            .eval(
                "(() => { const rows = [...document.querySelectorAll('#view tbody tr')]; \
                   const cell = (r, i) => r.children[i].textContent; \
                   return { page: document.scrollingElement.scrollWidth, screen: innerWidth, \
                     rows: rows.map((r) => ({ id: r.querySelector('code.id').textContent, state: cell(r, 3), \
                       buttons: [...r.querySelectorAll('button.danger')].map((b) => { const x = b.getBoundingClientRect(); \
                         return { left: x.left, right: x.right }; }) })) }; })()",
            )
            .await;
        assert!(
            seen["page"].as_f64() <= seen["screen"].as_f64(),
            "the page scrolls sideways at {w}x{h}: {seen}"
        );
        for row in seen["rows"].as_array().unwrap() {
            let id = row["id"].as_str().unwrap();
            let state = row["state"].as_str().unwrap();
            let buttons = row["buttons"].as_array().unwrap();
            let (want, cancellable) = if id == succeeded {
                ("succeeded", false)
            } else if id == failed {
                ("failed", false)
            } else if id == running {
                ("running", true)
            } else if id == cancelled {
                ("cancelled", false)
            } else {
                ("queued", true)
            };
            assert!(state.starts_with(want), "{id} at {w}x{h}: {row}");
            assert_eq!(buttons.len(), usize::from(cancellable), "{id}: {row}");
            for b in buttons {
                assert!(
                    b["left"].as_f64().unwrap() >= 0.0
                        && b["right"].as_f64() <= seen["screen"].as_f64(),
                    "{id}'s Cancel is off the screen at {w}x{h}: {row}"
                );
            }
            if id == failed {
                assert!(state.contains("invalid"), "a failure says why: {row}");
            }
            if id == cancelled {
                assert!(state.contains("making room"), "the reason is shown: {row}");
            }
        }
    }
    tab.assert_no_errors();
    // The search would run for its 300 s: stopped, so the worker's slot ends with the test.
    let (status, v) = cancel_as(&app, "olga", &running, "the test is over").await;
    assert_eq!(status, 200, "{v}");
}

/// Job `id`'s `ahead` in a job listing `v`.
fn ahead(v: &Value, id: &str) -> Value {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {v}"))["ahead"]
        .clone()
}

/// An agent floods the queue while others wait; the operator sees the turns and why jobs
/// wait in the view (each queued job's place in its lane, the live workers: none here), and
/// cancels every job of that agent at once (`POST /api/admin/jobs/cancel`, each audited as
/// `job_cancel`) without blocking it. Before, there was no such action: one cancel per job
/// id, or a block of the account, and the view told neither the turn order nor that no
/// worker was there to run anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sees_the_turns_and_cancels_every_job_of_one_flooding_agent() {
    let app = spawn_app_with(|c| {
        c.gateway.admin_token = ADMIN_TOKEN.into();
        c.queue.waiting_per_account = 3;
    })
    .await;
    horst_operator::create_account(&app.store, "olga", "anna", 1)
        .await
        .unwrap();
    let map = || crate::harness::LEVEL_MAP.to_string();
    let spec = |account: &str, key: &str| JobSpec {
        kind: JobKind::Playtest,
        account: account.into(),
        trust: 1,
        idempotency_key: key.into(),
        input: horst_queue::JobInput {
            map: map(),
            ..Default::default()
        },
    };
    let new = |a: Admission| match a {
        Admission::New(job) => job.id,
        other => panic!("{other:?}"),
    };
    // No worker: everything waits. anna floods three, carl comes after her first.
    let mut annas = Vec::new();
    for key in ["a1", "a2", "a3"] {
        annas.push(new(app.queue.admit(spec("anna", key)).await.unwrap()));
    }
    let carls = new(app.queue.admit(spec("carl", "c1")).await.unwrap());

    let (status, q) = admin(&app, reqwest::Method::GET, "/api/admin/queue", None).await;
    assert_eq!(status, 200, "{q}");
    assert_eq!(
        q["slots"],
        json!({"workers": 0, "general": 0, "referee": 0}),
        "{q}"
    );
    let (status, v) = admin(&app, reqwest::Method::GET, "/api/admin/jobs", None).await;
    assert_eq!(status, 200, "{v}");
    // Accounts take turns: carl's job is second, ahead of anna's later ones.
    assert_eq!(ahead(&v, &annas[0]), json!(0), "{v}");
    assert_eq!(ahead(&v, &carls), json!(1), "{v}");
    assert_eq!(ahead(&v, &annas[1]), json!(2), "{v}");
    assert_eq!(ahead(&v, &annas[2]), json!(3), "{v}");
    let (_, one) = admin(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/jobs/{carls}"),
        None,
    )
    .await;
    assert_eq!(one["ahead"], json!(1), "{one}");

    // Refusals change nothing: no reason, a name that is no account.
    let cancel_all = |account: &str, reason: &str| {
        admin(
            &app,
            reqwest::Method::POST,
            "/api/admin/jobs/cancel",
            Some(json!({"account": account, "reason": reason})),
        )
    };
    let (status, v) = cancel_all("anna", "  ").await;
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    let (status, v) = cancel_all("  ", "flooding").await;
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    assert!(
        v["error"].as_str().unwrap().contains("give the account"),
        "{v}"
    );
    let (status, v) = cancel_all("Anna Agent", "flooding").await;
    assert_eq!(
        (status, v["code"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );
    assert!(v["error"].as_str().unwrap().contains("handle"), "{v}");
    assert_eq!(app.queue.depth().await.unwrap().0, 4);

    let (status, v) = cancel_all("anna", "flooding the queue").await;
    assert_eq!(status, 200, "{v}");
    let mut ids: Vec<String> = v["jobsCancelled"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|j| j.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let mut expected = annas.clone();
    expected.sort();
    assert_eq!(ids, expected, "{v}");
    for id in &annas {
        let r = app.queue.get(id).await.unwrap().unwrap();
        assert_eq!(r.state, JobState::Cancelled, "{r:?}");
        assert_eq!(r.charged_seconds, 0, "{r:?}");
        assert!(
            r.failure.unwrap().message.contains("flooding the queue"),
            "the caller reads the reason"
        );
    }
    let log = horst_operator::audit_log(&app.store, 0, 10).await.unwrap();
    let mut audited: Vec<&str> = log
        .iter()
        .filter(|e| e.action == "job_cancel" && e.detail["reason"] == "flooding the queue")
        .map(|e| e.target.as_str())
        .collect();
    audited.sort();
    assert_eq!(audited, expected, "{log:?}");
    // And the decision as one entry, naming the account and every job it ended.
    let whole = &log[0];
    assert_eq!(
        (whole.action.as_str(), whole.target.as_str()),
        ("job_cancel_account", "anna"),
        "{log:?}"
    );
    assert_eq!(whole.detail["reason"], "flooding the queue", "{whole:?}");
    let mut named: Vec<String> =
        serde_json::from_value(whole.detail["jobsCancelled"].clone()).unwrap();
    named.sort();
    assert_eq!(named, expected, "{whole:?}");
    // carl's job is untouched and next now; anna is not blocked: she may call again.
    let (_, one) = admin(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/jobs/{carls}"),
        None,
    )
    .await;
    assert_eq!(
        (one["state"].as_str(), one["ahead"].clone()),
        (Some("queued"), json!(0)),
        "{one}"
    );
    new(app.queue.admit(spec("anna", "a4")).await.unwrap());
    // Nothing of hers waits or runs any more but that one; a second cancel of none is fine.
    let (status, v) = cancel_all("anna", "again").await;
    assert_eq!(
        (status, v["jobsCancelled"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{v}"
    );
    let (status, v) = cancel_all("anna", "again").await;
    assert_eq!(
        (status, v["jobsCancelled"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{v}"
    );
    // A cancel that found nothing is audited too: the operator acted, and the trail says so.
    let newest = &horst_operator::audit_log(&app.store, 0, 1).await.unwrap()[0];
    assert_eq!(
        (
            newest.action.as_str(),
            newest.target.as_str(),
            &newest.detail["jobsCancelled"]
        ),
        ("job_cancel_account", "anna", &json!([])),
        "{newest:?}"
    );
}

/// A waiting playtest's `ahead` counts the referee work a general slot takes before it: the
/// only slots that run a playtest take the head of either lane that was admitted first. Before,
/// `ahead` counted its lane alone, and a playtest behind a simulation that had waited longer
/// showed "next" (0) in the view while a general slot would take the simulation first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_playtest_counts_the_older_referee_work_a_general_slot_takes_first() {
    let app = spawn_app_with(|c| c.gateway.admin_token = ADMIN_TOKEN.into()).await;
    let map = || crate::harness::LEVEL_MAP.to_string();
    // No worker: everything waits. bob's simulation, then anna's playtest, then dora's
    // simulation, each admitted a few ms after the one before.
    let mut jobs = Vec::new();
    for (kind, account) in [
        (JobKind::Simulate, "bob"),
        (JobKind::Playtest, "anna"),
        (JobKind::Simulate, "dora"),
    ] {
        jobs.push(admit(&app, kind, account, map()).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let [bobs, annas, doras] = &jobs[..] else {
        unreachable!()
    };
    let (status, v) = admin(&app, reqwest::Method::GET, "/api/admin/jobs", None).await;
    assert_eq!(status, 200, "{v}");
    // bob's simulation waited longer than anna's playtest; dora's did not. The simulations
    // keep their place in their lane (a referee slot takes only that lane).
    assert_eq!(ahead(&v, annas), json!(1), "{v}");
    assert_eq!(ahead(&v, bobs), json!(0), "{v}");
    assert_eq!(ahead(&v, doras), json!(1), "{v}");
    let (_, one) = admin(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/jobs/{annas}"),
        None,
    )
    .await;
    assert_eq!(one["ahead"], json!(1), "{one}");
    // And why it waits, in words: here no worker runs at all.
    assert!(
        one["waitingFor"]
            .as_str()
            .is_some_and(|w| w.starts_with("no live worker:")),
        "{one}"
    );
}

/// On a phone, an account's job view shows each waiting job's place in its lane and a
/// "Cancel all jobs of NAME" button on the screen that asks for a reason, then cancels every
/// job of that account waiting or running now (and nobody else's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_views_cancel_all_of_an_account_works_on_a_phone() {
    let app = spawn_app_with(|c| {
        c.gateway.admin_token = ADMIN_TOKEN.into();
        c.server.web_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web").into();
        c.queue.waiting_per_account = 2;
    })
    .await;
    let mut annas = Vec::new();
    for key in ["p1", "p2"] {
        let spec = JobSpec {
            kind: JobKind::Playtest,
            account: "anna".into(),
            trust: 1,
            idempotency_key: key.into(),
            input: horst_queue::JobInput {
                map: crate::harness::LEVEL_MAP.into(),
                ..Default::default()
            },
        };
        match app.queue.admit(spec).await.unwrap() {
            Admission::New(job) => annas.push(job.id),
            other => panic!("{other:?}"),
        }
    }
    let bobs = admit(
        &app,
        JobKind::Playtest,
        "bob",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let long = Duration::from_secs(60);
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(390, 844).await;
    tab.eval(
        "document.querySelector('form.filters input[name=account]').value = 'anna'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    let button = "[...document.querySelectorAll('#view .bulk button.danger')].find((b) => b.textContent === 'Cancel all jobs of anna')";
    tab.wait_for(
        &format!(
            "!!({button}) && document.getElementById('view').textContent.includes('next in the planner lane') \
             && document.getElementById('view').textContent.includes('2 ahead in turn')"
        ),
        "anna's jobs with their places and the button",
        long,
    )
    .await;
    let seen = tab
        .eval(&format!(
            "(() => {{ const r = ({button}).getBoundingClientRect(); \
             return {{ left: r.left, right: r.right, height: r.height, screen: innerWidth, page: document.scrollingElement.scrollWidth }}; }})()"
        ))
        .await;
    assert!(
        seen["left"].as_f64().unwrap() >= 0.0
            && seen["right"].as_f64() <= seen["screen"].as_f64()
            && seen["page"].as_f64() <= seen["screen"].as_f64(),
        "the button is off a 390 px screen, or the page scrolls sideways: {seen}"
    );
    tab.screenshot("admin", "jobs-cancel-all-390x844").await;
    tab.eval(&format!("({button}).click()")).await;
    tab.wait_for(
        "!!document.querySelector('#view .bulk .confirm input')",
        "the confirmation with its reason field",
        long,
    )
    .await;
    tab.eval(
        "document.querySelector('#view .bulk .confirm input').value = 'flooding'; \
         document.querySelector('#view .bulk [data-confirm]').click()",
    )
    .await;
    tab.wait_for(
        "document.body.textContent.includes('2 job(s) of anna cancelled')",
        "the cancel said",
        long,
    )
    .await;
    for id in &annas {
        let r = app.queue.get(id).await.unwrap().unwrap();
        assert_eq!(r.state, JobState::Cancelled, "{r:?}");
    }
    let bob = app.queue.get(&bobs).await.unwrap().unwrap();
    assert_eq!(bob.state, JobState::Queued, "{bob:?}");
    // Each job's cancel and the whole action's entry, all the page's.
    let newest = horst_operator::audit_log(&app.store, 0, 3).await.unwrap();
    let actions: Vec<&str> = newest.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        actions,
        ["job_cancel_account", "job_cancel", "job_cancel"],
        "{newest:?}"
    );
    assert!(
        newest.iter().all(|e| e.who.starts_with("page:olga")),
        "{newest:?}"
    );
    tab.assert_no_errors();
}
