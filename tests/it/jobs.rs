//! Jobs end to end: admission, real workers with the engine, fenced completion, waiting.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use horst_queue::{
    Admission, Failure, FailureCode, JobInput, JobKind, JobResult, JobSpec, JobState, Outcome,
    RefereeResult,
};
use horst_worker::{EngineRunner, JobRunner, WorkerIdentity, WorkerMetrics};
use serde_json::Value;
use tokio::sync::watch;

use crate::harness::spawn_app;

fn level(name: &str) -> (String, Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("levels");
    let map = std::fs::read_to_string(dir.join(format!("{name}.map"))).unwrap();
    let replay: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.replay.json"))).unwrap(),
    )
    .unwrap();
    (map, replay)
}

fn start_worker(
    queue: &horst_queue::Queue,
    runner: Arc<dyn JobRunner>,
    index: u32,
    slots: u32,
) -> watch::Sender<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(horst_worker::run(
        queue.clone(),
        runner,
        WorkerIdentity::new(index, slots),
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        rx,
    ));
    tx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_referees_a_winning_replay() {
    let app = spawn_app().await;
    let _w = start_worker(&app.queue, Arc::new(EngineRunner::new(1).unwrap()), 0, 1);
    let (map, replay) = level("01-erste-schritte");
    let Admission::New(job) = app
        .queue
        .admit(JobSpec {
            kind: JobKind::Simulate,
            account: "a".into(),
            trust: 1,
            idempotency_key: "k1".into(),
            input: JobInput::simulate(map.clone(), replay.clone()),
        })
        .await
        .unwrap()
    else {
        panic!("expected a new job")
    };
    let done = app
        .queue
        .wait(&job.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    let result = done.result.unwrap();
    let result = result.referee().unwrap();
    assert_eq!(result.outcome, Outcome::Won);
    assert_eq!(result.engine_version, horst_engine::engine_version());
    assert_eq!(result.state_hash.len(), 64);
    assert_eq!(done.charged_seconds, 5);

    // A broken map fails the job with validation_failed and the errors as details.
    let Admission::New(bad) = app
        .queue
        .admit(JobSpec {
            kind: JobKind::Simulate,
            account: "a".into(),
            trust: 1,
            idempotency_key: "k2".into(),
            input: JobInput::simulate("not a map", replay.clone()),
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    let done = app
        .queue
        .wait(&bad.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.state, JobState::Failed);
    let failure = done.failure.unwrap();
    assert_eq!(failure.code, FailureCode::ValidationFailed);
    assert!(failure.details["errors"]
        .as_array()
        .is_some_and(|e| !e.is_empty()));
}

/// Counts how often each job runs, and slows each run a little so claims overlap.
struct CountingRunner {
    runs: Mutex<HashMap<String, u32>>,
}

impl JobRunner for CountingRunner {
    fn run(
        &self,
        _: JobKind,
        input: &JobInput,
        _: Duration,
        _: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        let key = input.map.clone();
        *self.runs.lock().unwrap().entry(key).or_default() += 1;
        std::thread::sleep(Duration::from_millis(5));
        Ok(JobResult::Referee(RefereeResult::default()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_never_run_the_same_job() {
    let app = spawn_app().await;
    let runner = Arc::new(CountingRunner {
        runs: Mutex::default(),
    });
    let _w1 = start_worker(&app.queue, runner.clone(), 1, 2);
    let _w2 = start_worker(&app.queue, runner.clone(), 2, 2);
    let mut ids = Vec::new();
    // 8 accounts at a time (the global cap), 5 rounds.
    for round in 0..5 {
        let mut batch = Vec::new();
        for a in 0..8 {
            let n = round * 8 + a;
            let admission = app
                .queue
                .admit(JobSpec {
                    kind: JobKind::Simulate,
                    account: format!("acct{a}"),
                    trust: 1,
                    idempotency_key: format!("k{n}"),
                    input: JobInput {
                        map: n.to_string(),
                        ..JobInput::default()
                    },
                })
                .await
                .unwrap();
            let Admission::New(job) = admission else {
                panic!()
            };
            batch.push(job.id);
        }
        for id in &batch {
            let done = app.queue.wait(id, Duration::from_secs(60)).await.unwrap();
            assert_eq!(done.state, JobState::Succeeded);
        }
        ids.extend(batch);
    }
    let runs = runner.runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 40);
    assert!(runs.values().all(|n| *n == 1), "a job ran twice: {runs:?}");
    // Both workers took part.
    let mut workers = std::collections::BTreeSet::new();
    for id in &ids {
        let r = app.queue.get(id).await.unwrap().unwrap();
        workers.insert(r.worker.unwrap().split('/').next().unwrap().to_string());
    }
    assert_eq!(workers.len(), 2, "{workers:?}");
}

/// Never returns until cancelled: the worker's own time limit must stop it.
struct StuckRunner;

impl JobRunner for StuckRunner {
    fn run(
        &self,
        _: JobKind,
        _: &JobInput,
        _: Duration,
        cancel: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        while !cancel.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(JobResult::Referee(RefereeResult::default()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_enforces_the_time_limit() {
    let app = spawn_app().await;
    let _w = start_worker(&app.queue, Arc::new(StuckRunner), 0, 1);
    let Admission::New(job) = app
        .queue
        .admit(JobSpec {
            kind: JobKind::Simulate,
            account: "a".into(),
            trust: 1,
            idempotency_key: "k".into(),
            input: JobInput::default(),
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    let done = app
        .queue
        .wait(&job.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.state, JobState::Failed);
    assert_eq!(done.failure.unwrap().code, "timeout");
    let ran = done.finished_at_ms.unwrap() - done.started_at_ms.unwrap();
    assert!(ran >= 5_000, "stopped early: {ran} ms");
    assert_eq!(done.charged_seconds, 5);
}

/// Never looks at `cancel`: runs until the test lets it go (a minute at most).
struct DeafRunner(Arc<AtomicBool>);

impl JobRunner for DeafRunner {
    fn run(
        &self,
        _: JobKind,
        _: &JobInput,
        _: Duration,
        _: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        let until = std::time::Instant::now() + Duration::from_secs(60);
        while !self.0.load(std::sync::atomic::Ordering::SeqCst) && std::time::Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(JobResult::Referee(RefereeResult::default()))
    }
}

/// Work that goes on past its limit without stopping ends `timeout` a grace after the
/// limit, and the slot takes the next job: the lease was renewed as long as the work ran,
/// so the job stayed `running` and the slot was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_that_ignores_its_cancel_still_ends_the_job_in_time() {
    let app = spawn_app().await;
    let release = Arc::new(AtomicBool::new(false));
    let _w = start_worker(&app.queue, Arc::new(DeafRunner(release.clone())), 0, 1);
    let spec = |key: &str| JobSpec {
        kind: JobKind::Simulate,
        account: "a".into(),
        trust: 1,
        idempotency_key: key.into(),
        input: JobInput::default(),
    };
    let Admission::New(job) = app.queue.admit(spec("deaf")).await.unwrap() else {
        panic!()
    };
    // The simulate limit is 5 s in the tests; the grace is 10 s.
    let done = app
        .queue
        .wait(&job.id, Duration::from_secs(40))
        .await
        .unwrap();
    release.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(done.state, JobState::Failed, "{done:?}");
    let failure = done.failure.unwrap();
    assert_eq!(failure.code, "timeout");
    assert!(failure.message.contains("limit"), "{}", failure.message);
    let ran = done.finished_at_ms.unwrap() - done.started_at_ms.unwrap();
    assert!(ran < 40_000, "{ran} ms");
    assert_eq!(done.charged_seconds, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_carry_on_after_redis_restarts_from_its_aof() {
    let mut app = spawn_app().await;
    let _w = start_worker(&app.queue, Arc::new(EngineRunner::new(1).unwrap()), 0, 1);
    let (map, replay) = level("02-felsstufen");
    let admit = |key: &str| JobSpec {
        kind: JobKind::Simulate,
        account: "a".into(),
        trust: 1,
        idempotency_key: key.into(),
        input: JobInput::simulate(map.clone(), replay.clone()),
    };
    let Admission::New(first) = app.queue.admit(admit("before")).await.unwrap() else {
        panic!()
    };
    let first = app
        .queue
        .wait(&first.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(first.state, JobState::Succeeded);

    // Let the AOF's once-a-second fsync pass, then crash and restart Redis.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    app.redis_mut().kill();
    app.redis_mut().start_again();

    // The record survived, and a new job is claimed and run by the same worker.
    let mut job = None;
    for _ in 0..100 {
        if let Ok(Admission::New(j)) = app.queue.admit(admit("after")).await {
            job = Some(j);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let job = job.expect("admission never worked again after the restart");
    let done = app
        .queue
        .wait(&job.id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    assert_eq!(
        done.result.unwrap().referee().unwrap().outcome,
        Outcome::Won
    );
    let kept = app.queue.get(&first.id).await.unwrap().unwrap();
    assert_eq!(kept.result, first.result);
}
