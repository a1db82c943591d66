//! The worker process: the part of horst that runs the planner and the referee.
//!
//! A worker runs `slots` loops. Each claims one job when it is free (never prefetching, so
//! a job waits in Redis where any worker can take it), runs it on a blocking thread with
//! the time limit enforced here, heartbeats its lease from the async side (never from the
//! CPU-bound thread, which may not yield for seconds), and completes it with its fencing
//! token. On shutdown it stops claiming and finishes what it runs.
//!
//! A worker also announces itself (`workers:<id>`, short expiry) so operators see which
//! workers are alive, and runs the queue's [`housekeeping`] (reaping expired leases,
//! dropping orphaned queued jobs; any process may, it is idempotent).
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use horst_queue::{Claim, Failure, JobKind, Queue};
use horst_store::Store;
use redis::AsyncCommands;
use serde_json::Value;
use tokio::sync::watch;

mod engine_runner;
mod metrics;
mod playtest;

pub use engine_runner::EngineRunner;
pub use metrics::{sample_queue_gauges, WorkerMetrics};

/// How often a worker refreshes its presence entry, and how long the entry lives.
const PRESENCE_EVERY: Duration = Duration::from_secs(2);
const PRESENCE_TTL_SECONDS: u64 = 10;

/// What actually runs a job: the planner for playtests, the referee for the others.
pub trait JobRunner: Send + Sync + 'static {
    /// Runs on a blocking thread. Must return soon after `cancel` turns true.
    fn run(
        &self,
        kind: JobKind,
        input: &Value,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Result<Value, Failure>;
}

/// Who this worker is, as shown to operators.
#[derive(Debug, Clone)]
pub struct WorkerIdentity {
    pub id: String,
    pub slots: u32,
}

impl WorkerIdentity {
    /// `<hostname>-<pid>-<n>`: unique per process, readable in `horst admin status`.
    pub fn new(index: u32, slots: u32) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "host".into());
        WorkerIdentity {
            id: format!("{host}-{}-{index}", std::process::id()),
            slots,
        }
    }
}

/// Runs a worker until `shutdown` turns true, then lets running jobs finish.
pub async fn run(
    queue: Queue,
    runner: Arc<dyn JobRunner>,
    identity: WorkerIdentity,
    metrics: WorkerMetrics,
    shutdown: watch::Receiver<bool>,
) {
    tracing::info!(worker = %identity.id, slots = identity.slots, "worker started");
    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(announce(
        queue.store().clone(),
        identity.clone(),
        shutdown.clone(),
    ));
    tasks.spawn(housekeeping(
        queue.clone(),
        metrics.clone(),
        shutdown.clone(),
    ));
    for slot in 0..identity.slots.max(1) {
        tasks.spawn(slot_loop(
            queue.clone(),
            runner.clone(),
            format!("{}/{slot}", identity.id),
            metrics.clone(),
            shutdown.clone(),
        ));
    }
    while tasks.join_next().await.is_some() {}
    tracing::info!(worker = %identity.id, "worker stopped");
}

async fn slot_loop(
    queue: Queue,
    runner: Arc<dyn JobRunner>,
    slot: String,
    metrics: WorkerMetrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut new_jobs = queue.notifier().subscribe(&queue.store().key("queue:new"));
    loop {
        if *shutdown.borrow() {
            return;
        }
        match queue.claim(&slot).await {
            Ok(Some(claim)) => execute(&queue, &runner, claim, &metrics).await,
            Ok(None) => {
                // Idle: wake on the next admission, or re-check now and then.
                tokio::select! {
                    _ = new_jobs.changed() => {}
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = shutdown.wait_for(|s| *s) => return,
                }
            }
            Err(e) => {
                tracing::warn!(slot = %slot, error = %e, "claim failed; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    _ = shutdown.wait_for(|s| *s) => return,
                }
            }
        }
    }
}

/// Runs one claimed job to its end: time limit, heartbeats, fenced completion.
async fn execute(
    queue: &Queue,
    runner: &Arc<dyn JobRunner>,
    claim: Claim,
    metrics: &WorkerMetrics,
) {
    let job = claim.record;
    let kind = job.kind;
    let limit = Duration::from_secs(queue.settings().reserve_seconds(kind));
    let lease = Duration::from_secs(queue.settings().queue.lease_seconds);
    let cancel = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    tracing::info!(job = %job.id, kind = kind.as_str(), account = %job.account, "job started");

    let mut work = {
        let runner = runner.clone();
        let cancel = cancel.clone();
        let input = job.input.clone();
        tokio::task::spawn_blocking(move || runner.run(kind, &input, limit, &cancel))
    };
    let deadline = tokio::time::Instant::now() + limit;
    let mut beat = tokio::time::interval(lease / 3);
    beat.tick().await; // the first tick is immediate; the claim just set the lease
    let mut timed_out = false;
    let mut lease_lost = false;
    let outcome = loop {
        tokio::select! {
            joined = &mut work => {
                break match joined {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        tracing::error!(job = %job.id, error = %e, "job panicked");
                        Err(Failure::new("internal_error", "the evaluator failed unexpectedly; details are in the server log"))
                    }
                };
            }
            _ = beat.tick() => {
                match queue.heartbeat(&job.id, claim.token).await {
                    Ok(true) => {}
                    Ok(false) => {
                        // Reaped: someone decided we are dead. Stop; our result would be refused.
                        lease_lost = true;
                        cancel.store(true, Ordering::SeqCst);
                    }
                    Err(e) => tracing::warn!(job = %job.id, error = %e, "heartbeat failed"),
                }
            }
            _ = tokio::time::sleep_until(deadline), if !timed_out => {
                timed_out = true;
                cancel.store(true, Ordering::SeqCst);
            }
        }
    };
    let outcome = if timed_out {
        Err(Failure::new(
            "timeout",
            format!(
                "the evaluation did not finish within its {} s limit",
                limit.as_secs()
            ),
        ))
    } else {
        outcome
    };
    let elapsed = started.elapsed();
    let label = match &outcome {
        Ok(_) => "succeeded".to_string(),
        Err(f) => f.code.clone(),
    };
    metrics.observe(kind, &label, elapsed);
    if lease_lost {
        tracing::warn!(job = %job.id, "lease lost while running; result discarded");
        return;
    }
    match queue.complete(&job.id, claim.token, outcome).await {
        Ok(true) => {
            tracing::info!(job = %job.id, kind = kind.as_str(), outcome = %label, ms = elapsed.as_millis() as u64, "job finished")
        }
        Ok(false) => tracing::warn!(job = %job.id, "completion refused: the lease had expired"),
        Err(e) => tracing::error!(job = %job.id, error = %e, "cannot record the job's outcome"),
    }
}

/// The queue's housekeeping, every second until `shutdown`: fails running jobs whose lease
/// expired (their worker died) and drops queued jobs whose caller's API process died. Every
/// worker runs it, and so does every API process (`horst::App::run`), so a dead worker's
/// job ends within its lease and a second even when no worker is left.
pub async fn housekeeping(
    queue: Queue,
    metrics: WorkerMetrics,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        match queue.reap().await {
            Ok(ids) => {
                for id in ids {
                    metrics.lease_expired();
                    tracing::warn!(job = %id, "lease expired; job failed (cancelled), not re-run");
                }
            }
            Err(e) => tracing::debug!(error = %e, "reap failed"),
        }
        match queue.drop_orphans().await {
            Ok(ids) => {
                for id in ids {
                    tracing::warn!(job = %id, "the caller's API process is gone; queued job dropped and released");
                }
            }
            Err(e) => tracing::debug!(error = %e, "orphan sweep failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(horst_queue::HOUSEKEEPING_EVERY) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

async fn announce(store: Store, identity: WorkerIdentity, mut shutdown: watch::Receiver<bool>) {
    let key = store.key(&format!("workers:{}", identity.id));
    loop {
        let mut conn = store.conn();
        let announce: redis::RedisResult<()> = conn
            .set_ex(
                &key,
                format!("slots={}", identity.slots),
                PRESENCE_TTL_SECONDS,
            )
            .await;
        if let Err(e) = announce {
            tracing::warn!(worker = %identity.id, error = %e, "cannot announce worker presence");
        }
        tokio::select! {
            _ = tokio::time::sleep(PRESENCE_EVERY) => {}
            _ = shutdown.wait_for(|stop| *stop) => break,
        }
    }
    let mut conn = store.conn();
    let _: redis::RedisResult<()> = conn.del(&key).await;
}

/// The ids of the workers alive now (read by the queue crate, which the admin overview uses
/// too; the presence keys are written here).
pub use horst_queue::live_workers;
