//! The queue's own cost: trivial jobs end to end (admit, claim, complete, wake the waiting
//! caller) with 1 and 2 in-process workers, and the latency from a job's completion to the
//! waiting caller's wake-up. Starts its own redis-server (AOF on, like production).
//!
//! cargo run --release -p horst-worker --example queue_bench -- [jobs] [callers]
//!     [--workers N] [--redis redis://HOST:PORT]
//!
//! With `--workers N` only that many workers are measured (else 1, then 2); with `--redis`
//! the given (empty) redis-server is used and the wake-up latency is not measured: that is
//! how `ops/bench-queue-vs-bullmq` runs it, interleaved with BullMQ on one server.
//! `--warmup N` runs N jobs first, untimed (as the BullMQ side does: node's JIT settles).
//! With `--redis`, the line also gives the server's own CPU per timed job (INFO cpu).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use horst_config::{QueueConfig, QuotaConfig, TierQuota};
use horst_queue::{
    Admission, Failure, JobInput, JobKind, JobResult, JobSpec, Notifier, Queue, QueueSettings,
};
use horst_worker::{JobRunner, WorkerIdentity, WorkerMetrics};
use serde_json::Value;
use tokio::sync::watch;

// The allocator the `horst` binary runs its API and workers on.
#[global_allocator]
static GLOBAL: horst_allocator::MiMalloc = horst_allocator::MiMalloc;

struct Trivial;

impl JobRunner for Trivial {
    fn run(
        &self,
        _: JobKind,
        _: &JobInput,
        _: Duration,
        _: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        Ok(JobResult::Referee(Default::default()))
    }
}

fn settings() -> QueueSettings {
    let big = TierQuota {
        submissions: u32::MAX,
        playtests: u32::MAX,
        simulations: u32::MAX,
        labor_candidates: 10,
    };
    let quotas = QuotaConfig {
        trust1: big,
        ..QuotaConfig::default()
    };
    let queue = QueueConfig {
        waiting_per_account: 1000,
        waiting_global: 100_000,
        daily_seconds: u64::MAX / 4,
        ..QueueConfig::default()
    };
    QueueSettings { queue, quotas }
}

async fn queue(url: &str, stop: &watch::Receiver<bool>) -> Queue {
    let store = horst_store::Store::connect(url, "bench:").await.unwrap();
    let notifier = Notifier::start(
        store.client().clone(),
        Queue::channels(&store),
        stop.clone(),
    );
    assert!(notifier.ready(Duration::from_secs(10)).await);
    Queue::new(store, settings(), notifier)
}

/// `jobs` trivial jobs by `callers` concurrent callers, each admitting one and blocking on it
/// (idempotency keys `<tag><n>`); the callers' latencies, ms.
async fn run_callers(q: &Queue, jobs: usize, callers: usize, tag: &'static str) -> Vec<f64> {
    let per = jobs / callers;
    let mut tasks = Vec::new();
    for c in 0..callers {
        let q = q.clone();
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::with_capacity(per);
            for i in 0..per {
                let t0 = Instant::now();
                let spec = JobSpec {
                    kind: JobKind::Simulate,
                    account: format!("a{c}"),
                    trust: 1,
                    idempotency_key: format!("{tag}{i}"),
                    input: JobInput::simulate(i.to_string(), Value::Null),
                };
                let Ok(Admission::New(job)) = q.admit(spec).await else {
                    panic!("admission refused")
                };
                q.wait(&job.id, Duration::from_secs(60)).await.unwrap();
                took.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            took
        }));
    }
    let mut took = Vec::new();
    for t in tasks {
        took.extend(t.await.unwrap());
    }
    took
}

/// The server's own CPU so far (main thread, user + system), s.
async fn redis_cpu(q: &Queue) -> f64 {
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(&mut q.store().conn())
        .await
        .unwrap_or_default();
    ["used_cpu_user:", "used_cpu_sys:"]
        .iter()
        .filter_map(|k| info.lines().find_map(|l| l.strip_prefix(k)))
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .sum()
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str| {
        raw.iter()
            .position(|a| a == name)
            .and_then(|i| raw.get(i + 1).cloned())
    };
    let given_redis = option("--redis");
    let only_workers: Option<u32> = option("--workers").and_then(|w| w.parse().ok());
    let warmup: usize = option("--warmup").and_then(|w| w.parse().ok()).unwrap_or(0);
    let args: Vec<usize> = raw
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !raw[*i - 1].starts_with("--"))
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    let jobs = args.first().copied().unwrap_or(4000);
    let callers = args.get(1).copied().unwrap_or(32);
    println!("queue benchmark: {jobs} trivial jobs, {callers} concurrent callers");

    let counts: Vec<u32> = match only_workers {
        Some(n) => vec![n],
        None => vec![1, 2],
    };
    for workers in counts {
        let own = given_redis
            .is_none()
            .then(horst_testkit::RedisServer::start);
        let url = match (&own, &given_redis) {
            (Some(r), _) => r.url(),
            (None, Some(url)) => url.clone(),
            (None, None) => unreachable!("a server is started when none is given"),
        };
        let (tx, rx) = watch::channel(false);
        let q = queue(&url, &rx).await;
        for w in 0..workers {
            tokio::spawn(horst_worker::run(
                q.clone(),
                Arc::new(Trivial),
                WorkerIdentity::new(w, 4),
                WorkerMetrics::register(&horst_telemetry::Metrics::new()),
                rx.clone(),
            ));
        }
        if warmup > 0 {
            run_callers(&q, warmup, callers, "w").await;
        }
        let cpu0 = redis_cpu(&q).await;
        let (calls0, carried0) = q.admission_calls();
        let (ccalls0, ccarried0) = q.completion_calls();
        let (lingered0, out0) = q.completion_lingers();
        let overlaps0 = q.completion_overlaps();
        let start = Instant::now();
        let mut took = run_callers(&q, jobs, callers, "k").await;
        let done = took.len();
        let secs = start.elapsed().as_secs_f64();
        let cpu = (redis_cpu(&q).await - cpu0) * 1e6 / done as f64;
        let (calls, carried) = q.admission_calls();
        let (ccalls, ccarried) = q.completion_calls();
        let (lingered, out) = q.completion_lingers();
        let overlaps = q.completion_overlaps();
        took.sort_by(f64::total_cmp);
        println!(
            "horst {workers} worker(s) x 4 slots: {done} jobs in {secs:.2} s = {:.0} jobs/s end to end, caller p50 {:.1} ms, Redis CPU {cpu:.1} µs a job, {:.2} admissions a call, {:.2} completions a call ({} of {} calls after a linger, {} ran out, {} sent while another was in the air)",
            done as f64 / secs,
            pct(&took, 0.5),
            (carried - carried0) as f64 / (calls - calls0).max(1) as f64,
            (ccarried - ccarried0) as f64 / (ccalls - ccalls0).max(1) as f64,
            lingered - lingered0,
            ccalls - ccalls0,
            out - out0,
            overlaps - overlaps0
        );
        let _ = tx.send(true);
    }
    if given_redis.is_some() {
        return;
    }

    // Wake-up latency: the bench plays the worker, so the instant of completion is known.
    let redis = horst_testkit::RedisServer::start();
    let (_tx, rx) = watch::channel(false);
    let q = queue(&redis.url(), &rx).await;
    let mut from_call = Vec::new();
    let mut from_publish = Vec::new();
    for i in 0..1000 {
        let Ok(Admission::New(job)) = q
            .admit(JobSpec {
                kind: JobKind::Simulate,
                account: "lat".into(),
                trust: 1,
                idempotency_key: format!("l{i}"),
                input: JobInput::default(),
            })
            .await
        else {
            panic!()
        };
        let claim = q.claim("bench").await.unwrap().unwrap();
        let (woke_tx, woke_rx) = tokio::sync::oneshot::channel();
        let waiter = {
            let q = q.clone();
            let id = job.id.clone();
            tokio::spawn(async move {
                q.wait(&id, Duration::from_secs(10)).await.unwrap();
                let _ = woke_tx.send(Instant::now());
            })
        };
        // Let the waiter subscribe and read the state first (it then sleeps on the channel).
        tokio::time::sleep(Duration::from_millis(2)).await;
        let t0 = Instant::now();
        assert!(q
            .complete(
                &job.id,
                claim.token,
                Ok(JobResult::Referee(Default::default()))
            )
            .await
            .unwrap());
        let t1 = Instant::now();
        let woke = woke_rx.await.unwrap();
        waiter.await.unwrap();
        from_call.push(woke.saturating_duration_since(t0).as_secs_f64() * 1e3);
        from_publish.push(woke.saturating_duration_since(t1).as_secs_f64() * 1e3);
    }
    from_call.sort_by(f64::total_cmp);
    from_publish.sort_by(f64::total_cmp);
    println!(
        "  completion -> caller wake-up, from the start of `complete`: p50 {:.3} ms, p99 {:.3} ms",
        pct(&from_call, 0.5),
        pct(&from_call, 0.99)
    );
    println!(
        "  completion -> caller wake-up, after `complete` returned:    p50 {:.3} ms, p99 {:.3} ms",
        pct(&from_publish, 0.5),
        pct(&from_publish, 0.99)
    );
}
