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
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use horst_queue::{
    Claim, Completion, Failure, FailureCode, IdleLook, JobInput, JobKind, JobProgress, JobRecord,
    JobResult, JobState, Pool, Queue,
};
use horst_store::Store;
use redis::AsyncCommands;
use tokio::sync::{watch, Notify};
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

    /// The memory of the progress waiting to be recorded, MiB.
    fn peak_memory_mib(&self) -> Option<u64> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|p| p.peak_memory_mib)
    }
}

/// How often a running job's memory is looked at between reports: a search whose memory
/// grew by a quarter (and 16 MiB) since the last recorded progress is recorded at once.
/// `horst up` blames the playtest with the most memory in its last report when the worker
/// grows past `worker.memory_limit_mib` (`worker_child.rs`); a search that grows hundreds of
/// MiB a second would otherwise be killed with a report a second and a half old, or none.
const MEMORY_LOOK_EVERY: Duration = Duration::from_millis(250);

/// Whether progress with `now` MiB should be recorded before its time, after `recorded`.
fn grew_enough(recorded: Option<u64>, now: Option<u64>) -> bool {
    match (recorded, now) {
        (_, None) => false,
        (None, Some(now)) => now >= 16,
        (Some(was), Some(now)) => now >= was + 16 && now * 4 >= was * 5,
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
    /// How long a slot keeps retrying a completion Redis does not answer
    /// ([`COMPLETE_PATIENCE`] unless set: tests shorten it).
    pub complete_patience: Duration,
    /// How long the worker may take to stop, counted from the shutdown: what its process
    /// is given before it is killed (`queue.drain_seconds`; [`STOP_BUDGET`] unless set).
    pub stop_budget: Duration,
}

impl WorkerIdentity {
    /// `<hostname>-<pid>-<tag>-<n>`: readable in `horst admin status`, and unique per process
    /// start: `tag` is random, made once a process. A container's worker is often pid 1 under
    /// the same hostname after every restart, and a slot of a restarted worker must never
    /// take its dead predecessor's running job for its own (`Queue::recover_claim` finds a
    /// job by its slot's name).
    pub fn new(index: u32, slots: u32) -> Self {
        WorkerIdentity {
            id: format!(
                "{}{}-{index}",
                process_prefix(std::process::id()),
                process_tag()
            ),
            slots,
            referee_slots: 0,
            complete_patience: COMPLETE_PATIENCE,
            stop_budget: STOP_BUDGET,
        }
    }

    /// With `budget` to stop in, from the shutdown (`queue.drain_seconds`).
    pub fn with_stop_budget(mut self, budget: Duration) -> Self {
        self.stop_budget = budget;
        self
    }

    /// With completions retried for `patience` while Redis does not answer.
    pub fn with_complete_patience(mut self, patience: Duration) -> Self {
        self.complete_patience = patience;
        self
    }

    /// With `n` slots that only run referee work.
    pub fn with_referee_slots(mut self, n: u32) -> Self {
        self.referee_slots = n;
        self
    }
}

/// How the ids of worker process `pid` on this host begin (`<host>-<pid>-`, then the tag and
/// index of [`WorkerIdentity::new`]). Not enough to tell one process's jobs: another process
/// may have the same hostname and pid (a container with the host's network, whose processes
/// get the same small pids at every start); [`process_id_prefix`] with its tag is.
pub fn process_prefix(pid: u32) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into());
    format!("{host}-{pid}-")
}

/// How the ids of worker process `pid` with tag `tag` begin (`<host>-<pid>-<tag>-`): `horst
/// up` gives its worker child the tag ([`PROCESS_TAG_ENV`]) and finds that child's running
/// jobs by it when the child dies (their slots are named `<id>/<n>`).
pub fn process_id_prefix(pid: u32, tag: &str) -> String {
    format!("{}{tag}-", process_prefix(pid))
}

/// The variable `horst up` passes its worker child's tag in (not a setting).
pub const PROCESS_TAG_ENV: &str = "HORST_PROCESS_TAG";

static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// A tag as worker ids carry it: 6 lowercase hex digits, random.
pub fn new_process_tag() -> String {
    let b: [u8; 3] = horst_store::random::id_bytes();
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether `tag` is a tag as [`new_process_tag`] makes them.
pub fn valid_process_tag(tag: &str) -> bool {
    tag.len() == 6
        && tag
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// This process's tag in its workers' ids: set once ([`set_process_tag`]: `horst up`'s
/// child takes the one up gave it), else random, made once a process.
pub fn process_tag() -> &'static str {
    TAG.get_or_init(new_process_tag)
}

/// Sets this process's tag before any worker id is made; false (and nothing changes) when
/// `tag` is not one ([`valid_process_tag`]) or a tag is in use already.
pub fn set_process_tag(tag: &str) -> bool {
    valid_process_tag(tag) && TAG.set(tag.to_string()).is_ok()
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
    let stopping = Stopping::new(shutdown.clone(), identity.stop_budget);
    let mut tasks = tokio::task::JoinSet::new();
    {
        // The budget runs from the shutdown, not from whoever looks at it first.
        let (stopping, mut shutdown) = (stopping.clone(), shutdown.clone());
        tasks.spawn(async move {
            if shutdown.wait_for(|s| *s).await.is_ok() {
                stopping.left();
            }
        });
    }
    tasks.spawn(announce(
        queue.clone(),
        identity.clone(),
        stopping.clone(),
        shutdown.clone(),
    ));
    tasks.spawn(housekeeping(
        queue.clone(),
        metrics.clone(),
        shutdown.clone(),
    ));
    // An admission wakes one idle slot of all workers' (admit.lua); a slot that claims with
    // more waiting wakes another one here, and so does an admission of an older version.
    let wake = Arc::new(Notify::new());
    tasks.spawn(wake_on_legacy_admission(
        queue.clone(),
        wake.clone(),
        shutdown.clone(),
    ));
    let general =
        (0..identity.slots.max(1)).map(|n| (Pool::General, format!("{}/{n}", identity.id)));
    let referee =
        (0..identity.referee_slots).map(|n| (Pool::Referee, format!("{}/r{n}", identity.id)));
    let slots: Vec<(Pool, String)> = general.chain(referee).collect();
    let names: Vec<String> = slots.iter().map(|(_, slot)| slot.clone()).collect();
    for (pool, slot) in slots {
        tasks.spawn(slot_loop(
            queue.clone(),
            runner.clone(),
            slot,
            pool,
            wake.clone(),
            metrics.clone(),
            identity.complete_patience,
            stopping.clone(),
            shutdown.clone(),
        ));
    }
    while let Some(joined) = tasks.join_next().await {
        // A task that panicked is gone for good (a slot less until the process restarts);
        // without this line nothing said so.
        if let Err(e) = joined {
            if e.is_panic() {
                tracing::error!(worker = %identity.id, error = %e, "a worker task panicked and stopped; restart the worker to get its slot back");
            }
        }
    }
    match stopping.within(queue.retire_idle(&names)).await {
        Some(Ok(())) => {}
        Some(Err(e)) => {
            tracing::debug!(worker = %identity.id, error = %e, "cannot withdraw the idle slots")
        }
        None => tracing::debug!(worker = %identity.id, "no time left to withdraw the idle slots"),
    }
    tracing::info!(worker = %identity.id, "worker stopped");
}

/// Wakes one idle slot on each admission of a version before issue 35 (`queue:new`, heard by
/// every process) while such a process still admits.
async fn wake_on_legacy_admission(
    queue: Queue,
    wake: Arc<Notify>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut new_jobs = queue.subscribe_new();
    loop {
        tokio::select! {
            _ = new_jobs.changed() => wake.notify_one(),
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn slot_loop(
    queue: Queue,
    runner: Arc<dyn JobRunner>,
    slot: String,
    pool: Pool,
    wake: Arc<Notify>,
    metrics: WorkerMetrics,
    patience: Duration,
    stopping: Stopping,
    mut shutdown: watch::Receiver<bool>,
) {
    // Admission wakes this slot alone on its own channel after taking it off the pool's idle
    // slots; `registered`: it is (or may be) still on them.
    let mut woken = queue.slot_wake(&slot);
    let mut registered = false;
    // The last completion found nothing waiting and registered the slot: no claim to try.
    let mut idle_now = false;
    // The last completion claimed this slot's next job in the same step.
    let mut next: Option<Claim> = None;
    // A claim failed: Redis may have run it after this side stopped waiting for its answer
    // (a stall longer than the call's timeout), so the slot looks for a job running under
    // its claim before it claims again.
    let mut unanswered = false;
    // A job this slot ran whose outcome could not be recorded: it still runs under the
    // slot's name until it is reaped, and is not a lost claim.
    let mut given_up: Option<String> = None;
    // The newest claim token this slot was handed: a lost claim is newer (a token is the
    // claim's time), and every job the slot gave up on is not. `given_up` alone was
    // forgotten after one look, and the next look took that job for a lost claim.
    let mut newest_token: u64 = 0;
    // The jobs this slot was handed with that newest token: a lost claim of the same
    // millisecond (a trivial job's completion claims the next within it) has that token
    // too, and is told from these by its id.
    let mut at_newest: Vec<String> = Vec::new();
    // Woken by an admission with a job's id (no hand-off): the slot may still be (or again
    // be) among the idle slots, so its claim takes it off, without a look for a hand-off
    // (every way out of the idle slots after one finds it).
    let mut plain_wake = false;
    loop {
        // A job the last completion claimed (before the shutdown) is run first, and so is
        // one a failed claim may have taken all the same.
        if next.is_none() && *shutdown.borrow() {
            // A slot still (or maybe) among the idle slots may have been handed a job by an
            // admission just now: it leaves them, and then looks for such a job (none can
            // be handed to it after that) and runs it, as it finishes what it runs.
            if std::mem::take(&mut registered) {
                let _ = stopping
                    .within(queue.retire_idle(std::slice::from_ref(&slot)))
                    .await;
                unanswered = true;
            }
            if !std::mem::take(&mut unanswered) {
                return;
            }
            match stopping
                .within(queue.recover_claim(&slot, &known_ids(&given_up, &at_newest), newest_token))
                .await
            {
                Some(Ok(Some(claim))) => next = Some(claim),
                _ => return,
            }
        }
        let plain = std::mem::take(&mut plain_wake);
        let claimed = if let Some(claim) = next.take() {
            Ok(Some(claim))
        } else if idle_now {
            Ok(None)
        } else if unanswered {
            let found = queue
                .recover_claim(&slot, &known_ids(&given_up, &at_newest), newest_token)
                .await;
            unanswered = found.is_err();
            if !unanswered {
                given_up = None;
            }
            match found {
                Ok(None) => {
                    queue
                        .claim_slot_after(&slot, pool, registered, newest_token)
                        .await
                }
                other => other,
            }
        } else if plain {
            queue.claim_slot(&slot, pool, true).await
        } else {
            queue
                .claim_slot_after(&slot, pool, registered, newest_token)
                .await
        };
        match claimed {
            Ok(Some(claim)) => {
                if claim.token > newest_token {
                    (newest_token, at_newest) = (claim.token, Vec::new());
                }
                if claim.token == newest_token {
                    at_newest.push(claim.record.id.clone());
                }
                // A wake-up that came before this claim took it off the idle slots is old.
                woken.mark_seen();
                if claim.more_waiting {
                    wake.notify_one();
                }
                // Every log of the job, the planner's on its blocking thread too, carries the
                // job and the id of the HTTP request that admitted it.
                let r = &claim.record;
                let span = tracing::info_span!(
                    "job",
                    job = %r.id,
                    kind = r.kind.as_str(),
                    request_id = r.request_id.as_deref().unwrap_or(""),
                );
                let slot_ref = (slot.as_str(), pool);
                let after = execute(
                    &queue, &runner, claim, slot_ref, &at_newest, &metrics, patience, &stopping,
                )
                .instrument(span)
                .await;
                idle_now = matches!(after, After::Idle);
                registered = idle_now;
                match after {
                    After::Next(claim) => next = Some(*claim),
                    // The failed attempt may have registered the slot idle: its claim
                    // leaves the idle slots whether it is there or not.
                    After::Recover(job) => {
                        (unanswered, registered) = (true, true);
                        given_up = job;
                    }
                    // The completion's first attempt may have registered the slot idle before
                    // its answer was lost: the next claim takes it off the idle slots.
                    After::ClaimMaybeIdle => registered = true,
                    After::Claim | After::Idle => {}
                }
            }
            Ok(None) => {
                if !std::mem::take(&mut idle_now) {
                    // Registered first, then one more look: an admission in between either
                    // is seen here or finds this slot registered and hands it the job or
                    // wakes it.
                    match queue.idle_look(&slot, pool, registered, newest_token).await {
                        Ok(IdleLook::Waiting) => {
                            registered = true;
                            continue;
                        }
                        Ok(IdleLook::Handed(claim)) => {
                            (next, registered) = (Some(*claim), false);
                            continue;
                        }
                        Ok(IdleLook::Registered) => registered = true,
                        Err(e) => {
                            // It may have been registered all the same.
                            registered = true;
                            tracing::debug!(slot = %slot, error = %e, "cannot register as idle")
                        }
                    }
                }
                // Idle: handed a job or woken by an admission (which took this slot off), woken
                // by a slot of this process that saw more waiting, or by the clock: then
                // refresh the entry and look (a lost wake-up or hand-off, or a dead worker's
                // entry woken instead).
                loop {
                    let mut heard = false;
                    tokio::select! {
                        _ = woken.changed() => heard = true,
                        _ = wake.notified() => break,
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        // The loop's start withdraws the slot and runs what was handed to it.
                        _ = shutdown.wait_for(|s| *s) => break,
                    }
                    if heard {
                        match slot_woken(&queue, &slot, woken.payload(), newest_token).await {
                            Woken::Handed(claim) => {
                                (next, registered) = (Some(*claim), false);
                                break;
                            }
                            // A hand-off this slot found and ran before its message came.
                            Woken::Old => continue,
                            Woken::Claim => {
                                // Popped; but a refresh may have registered it again since.
                                (registered, plain_wake) = (true, true);
                                break;
                            }
                            Woken::Unknown => {
                                // Taken off the idle slots, maybe with a job handed to it: the
                                // claim looks for that first (claim.lua).
                                registered = true;
                                break;
                            }
                        }
                    }
                    match queue.idle_look(&slot, pool, registered, newest_token).await {
                        Ok(IdleLook::Waiting) => break,
                        Ok(IdleLook::Handed(claim)) => {
                            (next, registered) = (Some(*claim), false);
                            break;
                        }
                        Ok(IdleLook::Registered) => registered = true,
                        Err(e) => {
                            registered = true;
                            tracing::debug!(slot = %slot, error = %e, "cannot register as idle");
                            break;
                        }
                    }
                }
            }
            Err(e) => {
                unanswered = true;
                tracing::warn!(slot = %slot, error = %e, "claim failed; retrying");
                // On a shutdown the loop's start looks for the claim all the same.
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    _ = shutdown.wait_for(|s| *s) => {}
                }
            }
        }
    }
}

/// The jobs a slot knows run under its name (the one it gave up recording, those it was
/// handed with its newest token): a look for a lost claim skips them.
fn known_ids<'a>(given_up: &'a Option<String>, at_newest: &'a [String]) -> Vec<&'a str> {
    given_up
        .iter()
        .chain(at_newest)
        .map(String::as_str)
        .collect()
}

/// What an idle slot's wake-up message told it ([`slot_woken`]).
enum Woken {
    /// An admission handed it this job: run it (no claim of its own).
    Handed(Box<Claim>),
    /// A hand-off it already ran (found at its idle refresh before the message came): it
    /// is still registered.
    Old,
    /// Woken without a job: claim from the lanes.
    Claim,
    /// The message's payload was lost (the notifier reconnected): the slot was taken off
    /// the idle slots, maybe with a job handed to it.
    Unknown,
}

/// Reads an idle slot's wake-up message (admit.lua): a hand-off's claim or a wake-up.
async fn slot_woken(
    queue: &Queue,
    slot: &str,
    payload: Option<Arc<str>>,
    newest_token: u64,
) -> Woken {
    let Some(message) = payload else {
        return Woken::Unknown;
    };
    if horst_queue::handed_token(&message).is_some_and(|token| token <= newest_token) {
        return Woken::Old;
    }
    match queue.handed(slot, &message).await {
        Ok(Some(claim)) => Woken::Handed(Box::new(claim)),
        // A wake-up, a hand-off whose input was gone (the job was failed), or one given
        // back to its lane before this slot took it up (it was taken for dead: a stall).
        Ok(None) => Woken::Claim,
        Err(e) => {
            tracing::warn!(slot, error = %e, "cannot read the job handed to this slot; looking for it");
            Woken::Unknown
        }
    }
}

/// What a slot does after a job ([`execute`]).
enum After {
    /// Look for the next job.
    Claim,
    /// The completion found nothing waiting and registered the slot idle.
    Idle,
    /// Look for the next job; the completion's first attempt, whose answer was lost, may
    /// have registered the slot idle (an admission would then wake it while it runs a job).
    ClaimMaybeIdle,
    /// The completion claimed the slot's next job in the same step.
    Next(Box<Claim>),
    /// Look for the next job, after a look for a claim whose answer was lost (the
    /// completion's first attempt failed, and the look could not be made yet). With the id
    /// of the job just run when its outcome could not be recorded: it still runs under this
    /// slot's name in Redis until it is reaped, and the look must not take it for the lost
    /// claim (that would run it twice).
    Recover(Option<String>),
}

/// Runs one claimed job to its end: time limit, heartbeats, fenced completion, and (when
/// one waits) the claim of the slot's next job with it.
#[allow(clippy::too_many_arguments)]
async fn execute(
    queue: &Queue,
    runner: &Arc<dyn JobRunner>,
    claim: Claim,
    slot: (&str, Pool),
    at_newest: &[String],
    metrics: &WorkerMetrics,
    patience: Duration,
    stopping: &Stopping,
) -> After {
    let job = claim.record;
    let kind = job.kind;
    // The seconds admission reserved and charged for it (and checked it could finish in),
    // from the config of the API process that admitted it: a worker with another config
    // ran a job past what was reserved and past its caller's wait. A record of an earlier
    // version that names none takes this worker's.
    let limit = Duration::from_secs(match job.reserved_seconds {
        0 => queue.settings().reserve_seconds(kind),
        reserved => reserved,
    });
    let lease = Duration::from_secs(queue.settings().queue.lease_seconds);
    let cancel = Arc::new(AtomicBool::new(false));
    // Subscribed before the run: an operator's cancel ends the job in Redis and publishes on
    // its completion channel; the run then stops within 100 ms (the planner and the referee
    // poll `cancel`).
    let done = queue.subscribe_done(&job.id);
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
            let outcome = runner.run_with_progress(kind, &input, limit, &cancel, &progress);
            (outcome, Instant::now())
        })
    };
    let deadline = Instant::now() + limit;
    // Heartbeats, progress and an operator's stop are looked after by a task of their own:
    // a call to a Redis that stalls waits up to its response timeout (5 s), and must never
    // hold up noticing the finished work or the deadline here (a stall once turned playtests
    // that had finished in time into `timeout`s, issue 35).
    let watched = Arc::new(Watched::default());
    let keeper = tokio::spawn(
        keep(
            queue.clone(),
            job.id.clone(),
            claim.token,
            lease,
            done,
            cancel.clone(),
            progress,
            watched.clone(),
        )
        .in_current_span(),
    );
    let mut timed_out = false;
    let (outcome, finished) = loop {
        tokio::select! {
            joined = &mut work => {
                break match joined {
                    Ok(done) => done,
                    Err(e) => {
                        tracing::error!(job = %job.id, error = %e, "job panicked");
                        (Err(Failure::new(FailureCode::InternalError, "the evaluator failed unexpectedly; details are in the server log")), Instant::now())
                    }
                };
            }
            _ = tokio::time::sleep_until(deadline.into()), if !timed_out => {
                timed_out = true;
                cancel.store(true, Ordering::SeqCst);
            }
            // Work that does not stop when told to (a long phase that does not look at
            // `cancel`) must not hold the job, its lease and the slot for ever: the keeper
            // would heartbeat it as long as it ran. It is left to end on its own thread,
            // and the job ends `timeout`.
            _ = tokio::time::sleep_until((deadline + OVERRUN_GRACE).into()), if timed_out => {
                tracing::error!(job = %job.id, kind = kind.as_str(), grace_s = OVERRUN_GRACE.as_secs(), "the evaluation went on past its limit without stopping; the job ends `timeout` and the work is left to finish on its own");
                // Past the deadline: judged `timeout` below, like any work that ends there.
                break (Err(Failure::new(FailureCode::Timeout, "")), deadline + OVERRUN_GRACE);
            }
        }
    };
    keeper.abort();
    let (lease_lost, stopped) = (
        watched.lease_lost.load(Ordering::SeqCst),
        watched.stopped.load(Ordering::SeqCst),
    );
    // The limit is judged by when the work finished, not by when this task noticed it.
    let outcome = if finished >= deadline {
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
    let elapsed = finished.saturating_duration_since(started);
    let label = match &outcome {
        Ok(_) => "succeeded".to_string(),
        Err(f) => f.code.as_str().to_string(),
    };
    if stopped {
        metrics.observe(kind, "cancelled", elapsed);
        tracing::info!(job = %job.id, kind = kind.as_str(), ms = elapsed.as_millis() as u64, "job stopped: an operator cancelled it");
        return After::Claim;
    }
    metrics.observe(kind, &label, elapsed);
    if let Ok(JobResult::Playtest(played)) = &outcome {
        if let Some(reason) = &played.reason {
            metrics.unresolved(reason);
        }
    }
    if lease_lost {
        tracing::warn!(job = %job.id, "lease lost while running; result discarded");
        return After::Claim;
    }
    let go_on = !stopping.started();
    complete(
        queue,
        &job,
        claim.token,
        outcome,
        slot,
        at_newest,
        go_on.then_some(claim.more_waiting),
        &label,
        elapsed,
        patience,
        stopping,
    )
    .await
}

/// How long a slot keeps retrying a completion that Redis does not answer before it hands
/// the retries to a task of their own ([`complete_later`]) and goes on. While nobody can
/// reach Redis no lease is reaped (the housekeeping does not count time it could not see,
/// `queue/lua/expired.lua`), and after an outage a whole lease passes before any is, so a
/// result that finished in time is recorded once Redis is back, however long it was away; a
/// worker cut off from a Redis that others reach has its job reaped a lease later and its
/// retry refused.
const COMPLETE_PATIENCE: Duration = Duration::from_secs(120);

/// A stopping worker's budget unless set ([`WorkerIdentity::with_stop_budget`]): the least
/// `queue.drain_seconds` gives.
pub const STOP_BUDGET: Duration = Duration::from_secs(120);

/// Kept back from the stop budget: for the last log lines and the process's exit before it
/// is killed.
const STOP_MARGIN: Duration = Duration::from_secs(5);

/// When a stopping worker must be done: its stop budget, less [`STOP_MARGIN`], from the
/// shutdown. Once it has begun no Redis call of the worker waits beyond it (a completion
/// retried for its patience, 120 s, outlived the process's stop timeout, and the process
/// was killed with the outcome unrecorded all the same).
#[derive(Clone)]
struct Stopping {
    flag: watch::Receiver<bool>,
    budget: Duration,
    deadline: Arc<OnceLock<tokio::time::Instant>>,
}

impl Stopping {
    fn new(flag: watch::Receiver<bool>, budget: Duration) -> Stopping {
        Stopping {
            flag,
            budget,
            deadline: Arc::new(OnceLock::new()),
        }
    }

    fn started(&self) -> bool {
        *self.flag.borrow()
    }

    /// The time left once the shutdown began (`None` before).
    fn left(&self) -> Option<Duration> {
        if !self.started() {
            return None;
        }
        let deadline = self
            .deadline
            .get_or_init(|| tokio::time::Instant::now() + self.budget.saturating_sub(STOP_MARGIN));
        Some(deadline.saturating_duration_since(tokio::time::Instant::now()))
    }

    /// `call`, cut off when the stop budget runs out (`None`); as it is before the shutdown.
    async fn within<T>(&self, call: impl std::future::Future<Output = T>) -> Option<T> {
        match self.left() {
            None => Some(call.await),
            Some(left) => tokio::time::timeout(left, call).await.ok(),
        }
    }
}

/// The longest a background completion ([`complete_later`]) is retried: past its job's
/// retention nobody can read the outcome any more.
fn complete_later_bound(queue: &Queue) -> Duration {
    Duration::from_secs(queue.settings().queue.job_retention_hours * 3600)
}

/// How long past its deadline (and its cancel) a job's work is waited for before the job
/// ends `timeout` without it.
const OVERRUN_GRACE: Duration = Duration::from_secs(10);

/// Records a finished job's outcome, fenced by its token, retrying while Redis is away; the
/// first attempt claims the slot's next job with it when one waits and the slot goes on
/// (`go_on`: no shutdown, with whether the job's claim saw another waiting; a retry only
/// records, and once the outcome is settled the slot looks for the claim the failed first
/// attempt may have made all the same, [`Queue::recover_claim`]).
#[allow(clippy::too_many_arguments)]
async fn complete(
    queue: &Queue,
    job: &JobRecord,
    token: u64,
    outcome: Result<JobResult, Failure>,
    slot: (&str, Pool),
    at_newest: &[String],
    go_on: Option<bool>,
    label: &str,
    elapsed: Duration,
    patience: Duration,
    stopping: &Stopping,
) -> After {
    let id = &job.id;
    // What the look for a lost claim skips: this job, and the others handed with the slot's
    // newest token (a lost claim of that millisecond is told from them by its id).
    let known: Vec<&str> = std::iter::once(id.as_str())
        .chain(at_newest.iter().map(String::as_str))
        .collect();
    let known = &known;
    // Retrying is safe because the completion is fenced: once the job was reaped (or recorded
    // by an earlier attempt that Redis ran after this side stopped waiting), it is refused.
    let give_up = tokio::time::Instant::now() + patience;
    let mut pause = Duration::from_millis(100);
    let mut tried = 0;
    // The first attempt claims the slot's next job with it; when its answer was lost, Redis
    // may have run it all the same (after a stall longer than the call's timeout): the claim
    // is looked for once the outcome is settled, and run.
    let mut claim_unanswered = false;
    let settled = |after: After, claim_unanswered: bool| async move {
        if !claim_unanswered || !matches!(after, After::Claim | After::Idle) {
            return after;
        }
        match stopping
            .within(queue.recover_claim(slot.0, known, token))
            .await
        {
            Some(Ok(Some(claim))) => After::Next(Box::new(claim)),
            Some(Ok(None)) if matches!(after, After::Claim) => After::ClaimMaybeIdle,
            Some(Ok(None)) => after,
            Some(Err(e)) => {
                // The slot looks again before its next claim.
                tracing::warn!(slot = slot.0, error = %e, "cannot look for a claim whose answer was lost yet");
                After::Recover(Some(id.clone()))
            }
            None => After::Recover(Some(id.clone())),
        }
    };
    // Stopping, the process is killed when its budget runs out: the outcome is logged then,
    // for an operator, and the job is reaped a lease after Redis answers.
    let out_of_time = |tried: u32, claim_unanswered: bool| {
        tracing::error!(job = %id, outcome = %label, attempts = tried, "the worker stops before the job's outcome could be recorded (its stop budget ran out); the job is reaped a lease after Redis answers");
        if claim_unanswered {
            After::Recover(Some(id.clone()))
        } else {
            After::Claim
        }
    };
    // The outcome retried in the background (fenced, so safe) while the slot goes on.
    let record_later = |outcome: Result<JobResult, Failure>| {
        tokio::spawn(
            complete_later(
                queue.clone(),
                job.clone(),
                token,
                outcome,
                label.to_string(),
                stopping.flag.clone(),
            )
            .in_current_span(),
        );
    };
    loop {
        tried += 1;
        let attempt = async {
            if let (1, Some(others_waited)) = (tried, go_on) {
                queue
                    .complete_and_claim(job, token, outcome.clone(), slot, others_waited)
                    .await
            } else {
                queue
                    .complete_slot(job, token, outcome.clone(), Some(slot))
                    .await
                    .map(|done| (done, None))
            }
        };
        let Some(done) = stopping.within(attempt).await else {
            claim_unanswered |= tried == 1 && go_on.is_some();
            return out_of_time(tried, claim_unanswered);
        };
        if tried == 1 && go_on.is_some() {
            claim_unanswered = done.is_err();
            // Redis may have run the first attempt and only its answer failed (with
            // `redis.min_replica_acks`, a `WAIT` the replicas did not answer in time: for as
            // long as a failover's new replica takes to sync). Then the next job is claimed
            // for this slot and its lease runs from now, with nobody heartbeating it while
            // this outcome is retried: it was reaped as a dead worker's (charged, never run).
            // So the claim is looked for at once; when found, it runs now and the outcome is
            // retried in the background (fenced, so safe; recorded already when the claim
            // exists, as both are one step).
            if claim_unanswered {
                if let Some(Ok(Some(claim))) = stopping
                    .within(queue.recover_claim(slot.0, known, token))
                    .await
                {
                    record_later(outcome);
                    return After::Next(Box::new(claim));
                }
            }
        }
        match done {
            Ok((done @ (Completion::Recorded | Completion::Idle), next)) => {
                tracing::info!(job = %id, outcome = %label, ms = elapsed.as_millis() as u64, attempts = tried, "job finished");
                let after = match (done, next) {
                    (_, Some(claim)) => After::Next(Box::new(claim)),
                    (Completion::Idle, None) => After::Idle,
                    _ => After::Claim,
                };
                return settled(after, claim_unanswered).await;
            }
            Ok((Completion::Refused, _)) if tried > 1 => {
                let recorded = match stopping.within(queue.get(id)).await {
                    Some(Ok(Some(r))) => match (r.state, &r.failure) {
                        (JobState::Succeeded, _) => label == "succeeded",
                        (JobState::Failed, Some(f)) => f.code.as_str() == label,
                        _ => false,
                    },
                    _ => false,
                };
                if recorded {
                    tracing::info!(job = %id, outcome = %label, attempts = tried, "job finished (an earlier attempt was recorded when Redis came back)");
                } else {
                    tracing::warn!(job = %id, attempts = tried, "completion refused: the job ended otherwise (its lease expired)");
                }
                return settled(After::Claim, claim_unanswered).await;
            }
            Ok((Completion::Refused, _)) => {
                tracing::warn!(job = %id, "completion refused: the lease had expired");
                return After::Claim;
            }
            Err(e) if stopping.left().is_some_and(|left| left <= pause) => {
                tracing::warn!(job = %id, error = %e, "cannot record the job's outcome");
                return out_of_time(tried, claim_unanswered);
            }
            Err(e) if tokio::time::Instant::now() + pause < give_up || stopping.started() => {
                tracing::warn!(job = %id, error = %e, "cannot record the job's outcome yet; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            Err(e) => {
                tracing::warn!(job = %id, error = %e, patience_s = patience.as_secs(), "cannot record the job's outcome yet; retrying in the background, the slot goes on");
                // Dropping a finished result would leave the job to be reaped as if its
                // worker had died, charged; the fence makes every retry safe.
                record_later(outcome);
                // The job still runs under this slot's name until that records it (or it is
                // reaped): a look for a lost claim passes it over.
                return if claim_unanswered {
                    After::Recover(Some(id.clone()))
                } else {
                    After::Claim
                };
            }
        }
    }
}

/// Retries a finished job's fenced completion, without a slot, until Redis records or
/// refuses it (reaped meanwhile, or recorded by an earlier attempt whose answer was lost),
/// the worker shuts down, or [`complete_later_bound`] passes. Logs once at its end.
async fn complete_later(
    queue: Queue,
    job: JobRecord,
    token: u64,
    outcome: Result<JobResult, Failure>,
    label: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let id = &job.id;
    let give_up = tokio::time::Instant::now() + complete_later_bound(&queue);
    let mut tried = 0u64;
    // Every second at most: after an outage a job is reaped a lease after Redis is back.
    let pause = Duration::from_secs(1);
    loop {
        tried += 1;
        match queue.complete_job(&job, token, outcome.clone()).await {
            Ok(true) => {
                tracing::info!(job = %id, outcome = %label, attempts = tried, "job finished (recorded in the background)");
                return;
            }
            Ok(false) => {
                tracing::warn!(job = %id, attempts = tried, "background completion refused: the job ended otherwise (reaped), or an earlier attempt was recorded");
                return;
            }
            Err(e) if tokio::time::Instant::now() + pause >= give_up => {
                tracing::error!(job = %id, error = %e, attempts = tried, "cannot record the job's outcome; gave up");
                return;
            }
            Err(_) => {}
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = shutdown.wait_for(|s| *s) => {
                tracing::error!(job = %id, outcome = %label, attempts = tried, "the worker stops before the job's outcome could be recorded; the job is reaped a lease after Redis answers");
                return;
            }
        }
    }
}

/// What the keeper of a running job found out.
#[derive(Default)]
struct Watched {
    /// The job was reaped (someone decided this worker is dead): its result would be refused.
    lease_lost: AtomicBool,
    /// An operator cancelled it.
    stopped: AtomicBool,
}

/// Keeps a running job's lease, records its progress and watches for an operator's stop,
/// until it is aborted. Either end sets `cancel` so the run stops.
#[allow(clippy::too_many_arguments)]
async fn keep(
    queue: Queue,
    id: String,
    token: u64,
    lease: Duration,
    mut done: horst_queue::Subscription,
    cancel: Arc<AtomicBool>,
    progress: Arc<ProgressSlot>,
    watched: Arc<Watched>,
) {
    let mut report = tokio::time::interval(PROGRESS_EVERY);
    report.tick().await;
    let mut look = tokio::time::interval(MEMORY_LOOK_EVERY);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    look.tick().await;
    let mut recorded_mib: Option<u64> = None;
    let mut beat = tokio::time::interval(lease / 3);
    // After a call that waited out a stall, beat again a third of a lease later, not in a burst.
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beat.tick().await; // the first tick is immediate; the claim just set the lease

    // `done` was subscribed after the claim: a stop published in between reached nobody, and
    // would be noticed only at the first heartbeat. The record says so now.
    if ended_elsewhere(&queue, &id, &cancel, &watched).await {
        return;
    }
    loop {
        tokio::select! {
            _ = beat.tick() => {
                match queue.heartbeat(&id, token).await {
                    Ok(true) => {}
                    Ok(false) => {
                        // Reaped, or ended by an operator: stop the run either way.
                        watched.lease_lost.store(true, Ordering::SeqCst);
                        cancel.store(true, Ordering::SeqCst);
                        return;
                    }
                    Err(e) => tracing::warn!(job = %id, error = %e, "heartbeat failed"),
                }
            }
            _ = report.tick() => {
                if let Some(p) = progress.take() {
                    recorded_mib = p.peak_memory_mib.or(recorded_mib);
                    if let Err(e) = queue.report_progress(&id, token, &p).await {
                        tracing::debug!(job = %id, error = %e, "cannot record progress");
                    }
                }
            }
            _ = look.tick() => {
                if grew_enough(recorded_mib, progress.peak_memory_mib()) {
                    if let Some(p) = progress.take() {
                        recorded_mib = p.peak_memory_mib.or(recorded_mib);
                        if let Err(e) = queue.report_progress(&id, token, &p).await {
                            tracing::debug!(job = %id, error = %e, "cannot record progress");
                        }
                    }
                }
            }
            _ = done.changed() => {
                if ended_elsewhere(&queue, &id, &cancel, &watched).await {
                    return;
                }
            }
        }
    }
}

/// Whether running job `id` was ended by someone else; if so, `cancel` is set and `watched`
/// says by whom. An operator's stop ends it `cancelled`; the reaper ends it `failed` (it
/// took this worker for dead): the result is refused either way, but only the first is the
/// operator's doing. A record that cannot be read now counts as running.
async fn ended_elsewhere(queue: &Queue, id: &str, cancel: &AtomicBool, watched: &Watched) -> bool {
    let Ok(Some(state)) = queue.state_of(id).await else {
        return false;
    };
    if state == JobState::Running {
        return false;
    }
    let flag = if state == JobState::Cancelled {
        &watched.stopped
    } else {
        &watched.lease_lost
    };
    flag.store(true, Ordering::SeqCst);
    cancel.store(true, Ordering::SeqCst);
    true
}

/// The queue's housekeeping, every second until `shutdown`: fails running jobs whose lease
/// expired (their worker died), drops queued jobs whose caller's API process died, and
/// sweeps a slice of `queue:fair` (the entries of accounts with nothing waiting). Every
/// worker runs it, and so does every API process (`horst::App::run`), so a dead worker's
/// job ends within its lease and a second even when no worker is left.
pub async fn housekeeping(
    queue: Queue,
    metrics: WorkerMetrics,
    mut shutdown: watch::Receiver<bool>,
) {
    // A round every second from the start of the last, not a second after its end: the gap
    // between two rounds' looks at the clock is what tells a stall (`STALL_AFTER`), and a
    // round's own round trips (a slow link to Redis) should not add to it.
    let every = horst_queue::HOUSEKEEPING_EVERY;
    let mut rounds = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
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
        if let Err(e) = queue.sweep_fair().await {
            tracing::debug!(error = %e, "the sweep of queue:fair failed");
        }
        tokio::select! {
            _ = rounds.tick() => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

/// Keeps the worker's presence (`workers:<id>`, for operators) and its slots (for
/// admission, [`Queue::announce_slots`]) alive until shutdown, then withdraws both.
async fn announce(
    queue: Queue,
    identity: WorkerIdentity,
    stopping: Stopping,
    mut shutdown: watch::Receiver<bool>,
) {
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
    // Admission stops counting on this worker at once; running jobs still finish. (Both
    // expire by themselves when they cannot be withdrawn in the stop budget.)
    let _ = stopping.within(queue.retire_slots(&identity.id)).await;
    let mut conn = store.conn();
    let _: Option<redis::RedisResult<()>> = stopping.within(conn.del(&key)).await;
}

/// The ids of the workers alive now (read by the queue crate, which the admin overview uses
/// too; the presence keys are written here).
pub use horst_queue::live_workers;

#[cfg(test)]
mod tests {
    /// Progress is recorded before its time only when the search's memory grew by 16 MiB
    /// and a quarter since the last record: few extra writes, a recent figure for the blame.
    #[test]
    fn memory_growth_is_recorded_early_only_when_it_is_large() {
        assert!(!grew_enough(None, None));
        assert!(!grew_enough(None, Some(15)));
        assert!(grew_enough(None, Some(16)));
        assert!(!grew_enough(Some(100), Some(115)));
        assert!(!grew_enough(Some(100), Some(124)));
        assert!(grew_enough(Some(100), Some(125)));
        assert!(!grew_enough(Some(20), Some(35)));
        assert!(grew_enough(Some(20), Some(36)));
        assert!(!grew_enough(Some(300), None));
    }

    use super::*;

    /// An operator's stop that lands after the claim but before the worker subscribed to the
    /// job's channel publishes to nobody: the keeper reads the record once it is subscribed,
    /// so the run stops at once, as the operator's stop. It was noticed only at the first
    /// heartbeat (a third of a lease, 10 s by default; an hour's lease here), and then taken
    /// for a lost lease.
    #[tokio::test]
    async fn a_stop_before_the_subscription_is_noticed_at_once() {
        use horst_queue::{JobSpec, QueueSettings};
        let redis = horst_testkit::RedisServer::start();
        let store = horst_store::Store::connect(&redis.url(), "t:")
            .await
            .unwrap();
        let (_stop, stopped) = watch::channel(false);
        let notifier =
            horst_store::Notifier::start(store.client().clone(), Queue::channels(&store), stopped);
        assert!(notifier.ready(Duration::from_secs(10)).await);
        let settings = QueueSettings {
            queue: horst_config::QueueConfig::default(),
            quotas: horst_config::QuotaConfig::default(),
        };
        let queue = Queue::new(store, settings, notifier);
        let job = JobSpec {
            kind: JobKind::Simulate,
            account: "acct".into(),
            trust: 1,
            idempotency_key: "k".into(),
            input: JobInput {
                map: "m".into(),
                ..JobInput::default()
            },
        };
        assert!(matches!(
            queue.admit(job).await,
            Ok(horst_queue::Admission::New(_))
        ));
        let claim = queue
            .claim("w-1")
            .await
            .unwrap()
            .expect("the job is claimed");
        let id = claim.record.id.clone();
        queue.cancel(&id, "a test").await.unwrap();

        let done = queue.subscribe_done(&id);
        let cancel = Arc::new(AtomicBool::new(false));
        let watched = Arc::new(Watched::default());
        let kept = keep(
            queue.clone(),
            id,
            claim.token,
            Duration::from_secs(3600),
            done,
            cancel.clone(),
            Arc::new(ProgressSlot::default()),
            watched.clone(),
        );
        tokio::time::timeout(Duration::from_secs(60), kept)
            .await
            .expect("the keeper noticed the stop before its first heartbeat");
        assert!(cancel.load(Ordering::SeqCst), "the run is told to stop");
        assert!(
            watched.stopped.load(Ordering::SeqCst),
            "as the operator's stop"
        );
    }

    #[test]
    fn a_workers_id_names_its_host_and_pid_and_a_tag_of_its_process_start() {
        let a = WorkerIdentity::new(3, 1).id;
        let parts: Vec<&str> = a.rsplitn(4, '-').collect();
        // Read from the end: index, tag, pid, then the hostname (which may hold dashes).
        assert_eq!(parts[0], "3", "{a}");
        assert_eq!(parts[1].len(), 6, "{a}");
        assert!(parts[1].chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_eq!(parts[2], std::process::id().to_string(), "{a}");
        // The tag is made once a process: every worker of this process shares it.
        let b = WorkerIdentity::new(4, 1).id;
        assert_eq!(
            b.rsplit_once('-').map(|x| x.0),
            a.rsplit_once('-').map(|x| x.0)
        );
    }
}
