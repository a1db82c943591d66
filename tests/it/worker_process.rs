//! Real worker processes: a `kill -9` in the middle of a playtest.

use std::time::Duration;

use horst_queue::{Admission, JobKind, JobSpec, JobState, Notifier, Queue, QueueSettings};
use horst_testkit::RedisServer;
use tokio::sync::watch;

use crate::harness::{eventually, HorstProcess};

/// A level the planner neither solves nor proves unsolvable: it searches it until its time
/// limit (see the file's comment).
const HARD: &str = "tests/it/levels/undecided.map";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_s_playtest_fails_once_its_lease_expires_and_is_not_rerun() {
    let redis = RedisServer::start();
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    let (_stop, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(&store), rx);
    let mut config = horst_config::Config::default();
    config.queue.lease_seconds = 2;
    let queue = Queue::new(
        store,
        QueueSettings {
            queue: config.queue.clone(),
            quotas: config.quotas.clone(),
        },
        notifier,
    );
    let dir = tempfile::tempdir().unwrap();
    let env = [("HORST_QUEUE_LEASE_SECONDS", "2")];
    let mut worker = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &env, dir.path());

    let map = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(HARD))
        .unwrap();
    let Admission::New(job) = queue
        .admit(JobSpec {
            kind: JobKind::Playtest,
            account: "a".into(),
            trust: 1,
            idempotency_key: "k".into(),
            input: horst_queue::JobInput::playtest(map, 1),
        })
        .await
        .unwrap()
    else {
        panic!()
    };
    let running = eventually(Duration::from_secs(60), async || {
        queue.get(&job.id).await.unwrap().unwrap().state == JobState::Running
    })
    .await;
    assert!(
        running,
        "the worker never started the job: {}",
        worker.stderr()
    );

    worker.signal(libc::SIGKILL);
    worker.wait_exit(Duration::from_secs(10)).unwrap();

    // A second worker comes up; its reaper fails the job once the lease is over.
    let _second = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &env, dir.path());
    let failed = eventually(Duration::from_secs(60), async || {
        queue.get(&job.id).await.unwrap().unwrap().state == JobState::Failed
    })
    .await;
    assert!(failed, "the job was not reaped");
    let record = queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(record.failure.as_ref().unwrap().code, "cancelled");
    assert_eq!(record.charged_seconds, 20, "the charge is kept");
    assert_eq!(queue.remaining("a", 1).await.unwrap().seconds, 3600 - 20);
    // Not run again: it stays failed, and nothing is waiting.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(again.state, JobState::Failed);
    assert_eq!(again.started_at_ms, record.started_at_ms);
    assert_eq!(queue.depth().await.unwrap().0, 0);
}

#[tokio::test]
async fn a_worker_serves_its_metrics_when_asked() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut worker = HorstProcess::spawn(
        &["worker", "--redis", &redis.url()],
        &[("HORST_WORKER_METRICS_LISTEN", "127.0.0.1:0")],
        dir.path(),
    );
    let line = worker.wait_for_line("metrics on http://", Duration::from_secs(60));
    let url = line.rsplit(' ').next().unwrap().to_string();
    let http = reqwest::Client::new();
    let ok = eventually(Duration::from_secs(30), async || {
        match http.get(&url).send().await {
            Ok(r) => {
                let text = r.text().await.unwrap_or_default();
                text.contains("horst_job_lease_expiries_total")
                    && text.contains("horst_queue_waiting_jobs")
            }
            Err(_) => false,
        }
    })
    .await;
    assert!(ok, "no job metrics at {url}");
    // Only the operational endpoints: no API on a worker.
    let base = url.trim_end_matches("/metrics");
    let r = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    worker.signal(libc::SIGTERM);
    assert!(worker.wait_exit(Duration::from_secs(15)).unwrap().success());
}
