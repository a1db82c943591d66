//! The worker process: the part of horst that runs the planner and the referee.
//!
//! A worker runs `slots` general loops and `referee_slots` loops that only take referee
//! work (so a simulation never waits behind playtests). Each claims one job when it is free (never prefetching, so
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

use horst_queue::{
    Claim, Failure, FailureCode, JobInput, JobKind, JobProgress, JobResult, JobState, Pool, Queue,
};
use horst_store::Store;
use redis::AsyncCommands;
use tokio::sync::watch;
use tracing::Instrument;

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
        input: &JobInput,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Result<JobResult, Failure>;

    /// [`JobRunner::run`] that also reports how far it got into `progress` (the worker
    /// records the latest every 2 s). By default it reports nothing.
    fn run_with_progress(
        &self,
        kind: JobKind,
        input: &JobInput,
        limit: Duration,
        cancel: &AtomicBool,
        progress: &ProgressSlot,
    ) -> Result<JobResult, Failure> {
        let _ = progress;
        self.run(kind, input, limit, cancel)
    }
}

/// The latest progress of a running job, handed from the run's thread to the worker's
/// async side (which records it at most every 2 s).
#[derive(Default)]
pub struct ProgressSlot(std::sync::Mutex<Option<JobProgress>>);

impl ProgressSlot {
    pub fn set(&self, p: JobProgress) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
    }

    fn take(&self) -> Option<JobProgress> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// How often a running job's progress is recorded (the contract: at most 2 s old).
const PROGRESS_EVERY: Duration = Duration::from_millis(1500);

/// Who this worker is, as shown to operators.
#[derive(Debug, Clone)]
pub struct WorkerIdentity {
    pub id: String,
    /// General slots: any job, the one that has waited longest first.
    pub slots: u32,
    /// Slots that only run referee work (`worker.referee_slots`).
    pub referee_slots: u32,
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
            referee_slots: 0,
        }
    }

    /// With `n` slots that only run referee work.
    pub fn with_referee_slots(mut self, n: u32) -> Self {
        self.referee_slots = n;
        self
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
    tracing::info!(worker = %identity.id, slots = identity.slots, referee_slots = identity.referee_slots, "worker started");
    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(announce(queue.clone(), identity.clone(), shutdown.clone()));
    tasks.spawn(housekeeping(
        queue.clone(),
        metrics.clone(),
        shutdown.clone(),
    ));
    let general =
        (0..identity.slots.max(1)).map(|n| (Pool::General, format!("{}/{n}", identity.id)));
    let referee =
        (0..identity.referee_slots).map(|n| (Pool::Referee, format!("{}/r{n}", identity.id)));
    for (pool, slot) in general.chain(referee) {
        tasks.spawn(slot_loop(
            queue.clone(),
            runner.clone(),
            slot,
            pool,
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
    pool: Pool,
    metrics: WorkerMetrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut new_jobs = queue.notifier().subscribe(&queue.store().key("queue:new"));
    loop {
        if *shutdown.borrow() {
            return;
        }
        match queue.claim_for(&slot, pool).await {
            Ok(Some(claim)) => {
                // Every log of the job, the planner's on its blocking thread too, carries the
                // job and the id of the HTTP request that admitted it.
                let r = &claim.record;
                let span = tracing::info_span!(
                    "job",
                    job = %r.id,
                    kind = r.kind.as_str(),
                    request_id = r.request_id.as_deref().unwrap_or(""),
                );
                execute(&queue, &runner, claim, &metrics)
                    .instrument(span)
                    .await
            }
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
    // Subscribed before the run: an operator's cancel ends the job in Redis and publishes on
    // its completion channel; the run then stops within 100 ms (the planner and the referee
    // poll `cancel`).
    let mut done = queue.subscribe_done(&job.id);
    let started = Instant::now();
    let waited_ms = job
        .started_at_ms
        .unwrap_or(job.created_at_ms)
        .saturating_sub(job.created_at_ms);
    metrics.waited(kind, Duration::from_millis(waited_ms));
    tracing::info!(job = %job.id, kind = kind.as_str(), account = %job.account, waited_ms, "job started");

    let progress = Arc::new(ProgressSlot::default());
    let mut work = {
        let span = tracing::Span::current();
        let runner = runner.clone();
        let cancel = cancel.clone();
        let progress = progress.clone();
        let input = job.input.clone();
        tokio::task::spawn_blocking(move || {
            let _in_job = span.enter();
            runner.run_with_progress(kind, &input, limit, &cancel, &progress)
        })
    };
    let mut report = tokio::time::interval(PROGRESS_EVERY);
    report.tick().await;
    let deadline = tokio::time::Instant::now() + limit;
    let mut beat = tokio::time::interval(lease / 3);
    beat.tick().await; // the first tick is immediate; the claim just set the lease
    let mut timed_out = false;
    let mut lease_lost = false;
    let mut stopped = false;
    let outcome = loop {
        tokio::select! {
            joined = &mut work => {
                break match joined {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        tracing::error!(job = %job.id, error = %e, "job panicked");
                        Err(Failure::new(FailureCode::InternalError, "the evaluator failed unexpectedly; details are in the server log"))
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
            _ = report.tick() => {
                if let Some(p) = progress.take() {
                    if let Err(e) = queue.report_progress(&job.id, claim.token, &p).await {
                        tracing::debug!(job = %job.id, error = %e, "cannot record progress");
                    }
                }
            }
            _ = done.changed(), if !stopped => {
                // Only an operator's cancel finishes a job that runs here.
                if let Ok(Some(r)) = queue.get(&job.id).await {
                    if r.state != JobState::Running {
                        stopped = true;
                        cancel.store(true, Ordering::SeqCst);
                    }
                }
            }
        }
    };
    let outcome = if timed_out {
        Err(Failure::new(
            FailureCode::Timeout,
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
        Err(f) => f.code.as_str().to_string(),
    };
    if stopped {
        metrics.observe(kind, "cancelled", elapsed);
        tracing::info!(job = %job.id, kind = kind.as_str(), ms = elapsed.as_millis() as u64, "job stopped: an operator cancelled it");
        return;
    }
    metrics.observe(kind, &label, elapsed);
    if lease_lost {
        tracing::warn!(job = %job.id, "lease lost while running; result discarded");
        return;
    }
    // Redis may be away for a moment (a restart, a stall): the completion is retried until it
    // is answered or the lease is surely over. Retrying is safe because the completion is
    // fenced: once the job was reaped, it is refused. (The chaos run found a job that ran
    // during a 5 s stall of Redis reaped as `cancelled` when its one attempt failed.)
    let give_up = tokio::time::Instant::now() + lease;
    let mut pause = Duration::from_millis(100);
    loop {
        match queue.complete(&job.id, claim.token, outcome.clone()).await {
            Ok(true) => {
                tracing::info!(job = %job.id, kind = kind.as_str(), outcome = %label, ms = elapsed.as_millis() as u64, "job finished");
                return;
            }
            Ok(false) => {
                tracing::warn!(job = %job.id, "completion refused: the lease had expired");
                return;
            }
            Err(e) if tokio::time::Instant::now() + pause < give_up => {
                tracing::warn!(job = %job.id, error = %e, "cannot record the job's outcome yet; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            Err(e) => {
                tracing::error!(job = %job.id, error = %e, "cannot record the job's outcome");
                return;
            }
        }
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

/// Keeps the worker's presence (`workers:<id>`, for operators) and its slots (for
/// admission, [`Queue::announce_slots`]) alive until shutdown, then withdraws both.
async fn announce(queue: Queue, identity: WorkerIdentity, mut shutdown: watch::Receiver<bool>) {
    let store: Store = queue.store().clone();
    let key = horst_queue::keys::worker(&store, &identity.id);
    let general = identity.slots.max(1);
    loop {
        let mut conn = store.conn();
        let announce: redis::RedisResult<()> = conn
            .set_ex(
                &key,
                format!("slots={general} referee_slots={}", identity.referee_slots),
                PRESENCE_TTL_SECONDS,
            )
            .await;
        if let Err(e) = announce {
            tracing::warn!(worker = %identity.id, error = %e, "cannot announce worker presence");
        }
        let live_for = Duration::from_secs(PRESENCE_TTL_SECONDS);
        if let Err(e) = queue
            .announce_slots(&identity.id, general, identity.referee_slots, live_for)
            .await
        {
            tracing::warn!(worker = %identity.id, error = %e, "cannot announce worker slots");
        }
        tokio::select! {
            _ = tokio::time::sleep(PRESENCE_EVERY) => {}
            _ = shutdown.wait_for(|stop| *stop) => break,
        }
    }
    // Admission stops counting on this worker at once; running jobs still finish.
    let _ = queue.retire_slots(&identity.id).await;
    let mut conn = store.conn();
    let _: redis::RedisResult<()> = conn.del(&key).await;
}

/// The ids of the workers alive now (read by the queue crate, which the admin overview uses
/// too; the presence keys are written here).
pub use horst_queue::live_workers;
