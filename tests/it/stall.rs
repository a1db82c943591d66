//! A stall of Redis (issue 35, item 4): the testkit's redis-server is frozen (SIGSTOP, then
//! SIGCONT) while jobs run and finish. Work that finished before its deadline is recorded
//! `succeeded`, charged once, run once; a job whose worker lives is not reaped as
//! `cancelled`, however long the freeze. Callers go through the MCP endpoint as agents do;
//! the worker runs in-process with the real referee and planner, each job held at a gate so
//! it finishes exactly inside the freeze. The cases run side by side in one test (the last,
//! with `rcadia_stall`'s), each on servers of its own: they mostly wait.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_queue::{Failure, JobInput, JobKind, JobResult, JobState};
use horst_worker::{EngineRunner, JobRunner, WorkerIdentity, WorkerMetrics};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::harness::{eventually, spawn_gateway, TestApp, LEVEL_MAP, LEVEL_REPLAY};
use crate::mcp_loop::TINY_MAP;
use crate::reliability::call;

/// The real runner, each kind held at a gate: a run starts (and says so), waits until its
/// kind's gate opens, then runs for real.
pub(crate) struct Gated {
    engine: EngineRunner,
    open: Mutex<HashMap<JobKind, bool>>,
    started: Mutex<HashMap<JobKind, Instant>>,
    runs: Mutex<HashMap<JobKind, u32>>,
}

impl Gated {
    pub(crate) fn new() -> Arc<Gated> {
        Arc::new(Gated {
            engine: EngineRunner::new(1).unwrap(),
            open: Mutex::default(),
            started: Mutex::default(),
            runs: Mutex::default(),
        })
    }

    pub(crate) fn open(&self, kind: JobKind) {
        self.open.lock().unwrap().insert(kind, true);
    }

    fn started(&self, kind: JobKind) -> Option<Instant> {
        self.started.lock().unwrap().get(&kind).copied()
    }

    pub(crate) fn runs(&self, kind: JobKind) -> u32 {
        self.runs.lock().unwrap().get(&kind).copied().unwrap_or(0)
    }
}

impl JobRunner for Gated {
    fn run(
        &self,
        kind: JobKind,
        input: &JobInput,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        *self.runs.lock().unwrap().entry(kind).or_default() += 1;
        self.started.lock().unwrap().insert(kind, Instant::now());
        while !self
            .open
            .lock()
            .unwrap()
            .get(&kind)
            .copied()
            .unwrap_or(false)
            && !cancel.load(Ordering::SeqCst)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.engine.run(kind, input, limit, cancel)
    }
}

pub(crate) fn start_worker(app: &TestApp, runner: Arc<Gated>) -> watch::Sender<bool> {
    start_worker_as(app, runner, WorkerIdentity::new(35, 2))
}

fn start_worker_as(
    app: &TestApp,
    runner: Arc<Gated>,
    identity: WorkerIdentity,
) -> watch::Sender<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(horst_worker::run(
        app.queue.clone(),
        runner,
        identity,
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        rx,
    ));
    tx
}

pub(crate) async fn until_started(runner: &Gated, kind: JobKind) -> Instant {
    let mut at = None;
    let started = eventually(Duration::from_secs(90), async || {
        at = runner.started(kind);
        at.is_some()
    })
    .await;
    assert!(started, "the worker never started the {kind:?} job");
    at.unwrap()
}

/// Asks again with the same idempotency key (as a caller told `pending` does) until the
/// job's outcome is answered.
pub(crate) async fn outcome(app: &TestApp, tool: &str, args: &Value, key: &str) -> Value {
    let mut last = Value::Null;
    let done = eventually(Duration::from_secs(90), async || {
        let (status, answer, _) = call(app.addr, tool, args.clone(), key).await;
        last = json!({"status": status, "answer": answer});
        status == 200 && answer["pending"] != true
    })
    .await;
    assert!(done, "never answered: {last}");
    last["answer"].clone()
}

pub(crate) async fn record(app: &TestApp, job: &Value) -> horst_queue::JobRecord {
    let id = job.as_str().expect("a jobId");
    app.queue.get(id).await.unwrap().unwrap()
}

/// A simulation of the test level's winning replay under idempotency key `idem`.
pub(crate) fn simulation(idem: &str) -> Value {
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem})
}

/// A caller waiting in `tool` (its status and answer are joined later).
pub(crate) fn waiting_call(
    app: &TestApp,
    tool: &'static str,
    args: &Value,
    key: &str,
) -> tokio::task::JoinHandle<(u16, Value, Value)> {
    let (addr, args, key) = (app.addr, args.clone(), key.to_string());
    tokio::spawn(async move { call(addr, tool, args, &key).await })
}

/// What a waiting caller was told, for a figure.
pub(crate) fn told(status: u16, first: &Value) -> String {
    if first["pending"] == true {
        format!("HTTP {status} pending")
    } else {
        format!("HTTP {status} {first}")
    }
}

pub(crate) fn freeze(app: &TestApp) -> i32 {
    let pid = app.redis().pid().unwrap() as i32;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    pid
}

pub(crate) fn thaw(pid: i32) {
    unsafe { libc::kill(pid, libc::SIGCONT) };
}

/// A simulation (5 s limit) that finishes `open_at` after it started, inside a freeze of
/// Redis from `freeze_at` lasting `freeze_for`: it must be recorded `succeeded`, run once and
/// charged once. `figure` names the case in the printed figure.
async fn a_simulation_finishing_in_a_freeze(
    figure: &str,
    idem: &str,
    freeze_at: Duration,
    open_at: Duration,
    freeze_for: Duration,
) {
    let app = spawn_gateway().await;
    let key = app.agent_key("stilt", 1).await;
    let before = app.queue.remaining("stilt", 1).await.unwrap();
    let runner = Gated::new();
    let _worker = start_worker(&app, runner.clone());
    let args = simulation(idem);
    let caller = waiting_call(&app, "simulate_replay", &args, &key);
    let started = until_started(&runner, JobKind::Simulate).await;

    tokio::time::sleep_until((started + freeze_at).into()).await;
    let pid = freeze(&app);
    let frozen = Instant::now();
    tokio::time::sleep_until((started + open_at).into()).await;
    runner.open(JobKind::Simulate);
    tokio::time::sleep_until((frozen + freeze_for).into()).await;
    thaw(pid);

    let (status, first, _) = caller.await.unwrap();
    let answer = outcome(&app, "simulate_replay", &args, &key).await;
    eprintln!(
        "figure: {figure}: the waiting caller got {}, asked again: outcome {}",
        told(status, &first),
        answer["outcome"]
    );
    assert_eq!(answer["outcome"], "won", "{answer}");
    let job = record(&app, &answer["jobId"]).await;
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    assert!(job.failure.is_none(), "{job:?}");
    assert_eq!(runner.runs(JobKind::Simulate), 1, "run once");
    let after = app.queue.remaining("stilt", 1).await.unwrap();
    assert_eq!(after.simulations, before.simulations - 1, "charged once");
    assert_eq!(after.seconds, before.seconds - job.charged_seconds);
}

/// (a) A simulation (5 s limit) that finishes 3.5 s after it started, inside a 6 s freeze
/// of Redis that also covers its deadline: recorded `succeeded` and charged once (it was
/// recorded `timeout` when the worker's heartbeat, blocked by the stall, held up noticing the
/// finished work until the deadline had passed too).
async fn a_job_finishing_during_a_6_s_freeze_is_recorded_succeeded_and_charged_once() {
    a_simulation_finishing_in_a_freeze(
        "6 s freeze, simulation finished 3.5 s into its 5 s limit",
        "stall-a",
        Duration::ZERO,
        Duration::from_millis(3500),
        Duration::from_secs(6),
    )
    .await;
}

/// (a') The same under the stall rules' thresholds: a 1.5 s freeze, shorter than a turn
/// clock's stall (2 s, docs/reliability.md) and the queue's (3 s), from 4 s into a 5 s
/// simulation to 5.5 s, the work finishing at 4.5 s: recorded `succeeded`, charged once. A
/// job's limit is judged on the worker's own clock (when the work finished) and its charge is
/// the reservation, so no stall, however short, is charged to it.
async fn a_job_finishing_during_a_short_freeze_over_its_deadline_is_recorded_succeeded() {
    a_simulation_finishing_in_a_freeze(
        "1.5 s freeze over the deadline, simulation finished 4.5 s into its 5 s limit",
        "stall-short",
        Duration::from_millis(4000),
        Duration::from_millis(4500),
        Duration::from_millis(1500),
    )
    .await;
}

/// (b) A 15 s freeze, longer than the lease (10 s): a simulation that finishes 1 s into it
/// and a playtest that is still running when Redis comes back. Neither is reaped as
/// `cancelled` (the 1 s playtest of the original run was): time nobody saw Redis does not
/// count against a lease, the finished one's completion is retried until Redis answers,
/// and the running one heartbeats again and finishes.
async fn jobs_across_a_15_s_freeze_are_not_reaped_while_their_worker_lives() {
    let app = spawn_gateway().await;
    assert!(app.config.queue.lease_seconds < 15);
    // Two accounts: one account's second job would wait behind its first (the cap is one
    // waiting job per account) and be refused `busy`.
    let key = app.agent_key("heron", 1).await;
    let other = app.agent_key("egret", 1).await;
    let before = app.queue.remaining("heron", 1).await.unwrap();
    let other_before = app.queue.remaining("egret", 1).await.unwrap();
    let runner = Gated::new();
    let _worker = start_worker(&app, runner.clone());
    let sim = simulation("stall-b1");
    let play = json!({"map": TINY_MAP, "idempotencyKey": "stall-b2"});
    let callers = [
        waiting_call(&app, "simulate_replay", &sim, &key),
        waiting_call(&app, "playtest_map", &play, &other),
    ];
    let sim_started = until_started(&runner, JobKind::Simulate).await;
    until_started(&runner, JobKind::Playtest).await;

    let pid = freeze(&app);
    let frozen = Instant::now();
    tokio::time::sleep_until((sim_started + Duration::from_secs(1)).into()).await;
    runner.open(JobKind::Simulate);
    tokio::time::sleep_until((frozen + Duration::from_secs(15)).into()).await;
    thaw(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    runner.open(JobKind::Playtest);

    let mut answered = Vec::new();
    for c in callers {
        let (status, first, _) = c.await.unwrap();
        answered.push(told(status, &first));
    }
    let sim_answer = outcome(&app, "simulate_replay", &sim, &key).await;
    let play_answer = outcome(&app, "playtest_map", &play, &other).await;
    eprintln!(
        "figure: 15 s freeze (lease {} s): waiting callers got {answered:?}; asked again: simulation {}, playtest {}",
        app.config.queue.lease_seconds, sim_answer["outcome"], play_answer["outcome"]
    );
    assert_eq!(sim_answer["outcome"], "won", "{sim_answer}");
    assert!(play_answer.get("error").is_none(), "{play_answer}");
    for (answer, kind) in [
        (&sim_answer, JobKind::Simulate),
        (&play_answer, JobKind::Playtest),
    ] {
        let job = record(&app, &answer["jobId"]).await;
        assert_eq!(job.state, JobState::Succeeded, "{job:?}");
        assert!(job.failure.is_none(), "{job:?}");
        assert_eq!(runner.runs(kind), 1, "{kind:?} ran once");
    }
    let after = app.queue.remaining("heron", 1).await.unwrap();
    assert_eq!(after.simulations, before.simulations - 1, "charged once");
    let other_after = app.queue.remaining("egret", 1).await.unwrap();
    assert_eq!(
        other_after.playtests,
        other_before.playtests - 1,
        "charged once"
    );
}

/// (c) A claim Redis ran but whose answer its slot never got (Redis ran it after the
/// call's 5 s timeout, on a connection the client had given up; a chaos run lost one job
/// this way in three of seven runs): the job runs under the slot's claim with nobody running
/// it. The state is made here directly: the waiting simulation is claimed under the name of
/// the worker's first slot before the worker starts. A freeze of 14 s then makes the slot's
/// own calls time out (its idle refresh, then its claim: 5 s each, 3 s to spare); a slot
/// whose claim failed looks for a job running under its claim before it claims again, and
/// runs it: `succeeded`, run and charged once. Before, it sat until its lease ran out and failed `cancelled`, charged.
async fn a_claim_whose_answer_was_lost_is_run_by_its_slot() {
    let app = spawn_gateway().await;
    let key = app.agent_key("avocet", 1).await;
    let before = app.queue.remaining("avocet", 1).await.unwrap();
    let args = simulation("stall-c");
    let caller = waiting_call(&app, "simulate_replay", &args, &key);
    let queued = eventually(Duration::from_secs(30), async || {
        matches!(app.queue.depth().await, Ok((1, _)))
    })
    .await;
    assert!(queued, "the simulation never queued");
    // The claim whose answer was lost, by the first slot of the worker started next (its
    // name: `WorkerIdentity::new(35, ..)`'s id, then `/0`).
    let slot = format!("{}/0", WorkerIdentity::new(35, 2).id);
    let lost = app
        .queue
        .claim_slot(&slot, horst_queue::Pool::General, false)
        .await
        .unwrap()
        .expect("the simulation");

    let runner = Gated::new();
    runner.open(JobKind::Simulate);
    let _worker = start_worker(&app, runner.clone());
    // Let the slots find nothing and register idle, then freeze past two calls' timeouts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = freeze(&app);
    tokio::time::sleep(Duration::from_secs(14)).await;
    thaw(pid);

    let (status, first, _) = caller.await.unwrap();
    let answer = outcome(&app, "simulate_replay", &args, &key).await;
    eprintln!(
        "figure: a claim whose answer was lost (14 s freeze): the waiting caller got {}, asked again: outcome {}",
        told(status, &first),
        answer["outcome"]
    );
    assert_eq!(answer["outcome"], "won", "{answer}");
    let job = record(&app, &answer["jobId"]).await;
    assert_eq!(job.id, lost.record.id);
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    assert_eq!(job.worker.as_deref(), Some(slot.as_str()));
    assert_eq!(runner.runs(JobKind::Simulate), 1, "run once");
    let after = app.queue.remaining("avocet", 1).await.unwrap();
    assert_eq!(after.simulations, before.simulations - 1, "charged once");
}

/// (d) A slot that stops waiting for a finished job's outcome to be recorded (Redis away for
/// longer than its patience, shortened here to 2 s from 120) while its completion's first
/// attempt, which would also have claimed its next job, went unanswered: once Redis is back
/// the slot looks for a claim whose answer was lost. The job it gave up on still runs under
/// the slot's name in Redis until its outcome is recorded, and the look must pass it over: it
/// once took it for the lost claim and ran it a second time. The outcome is recorded by the
/// retries the slot handed to the background: the job ends `succeeded`, charged once (it was
/// dropped, and the job reaped a lease later as if its worker had died).
async fn a_job_whose_outcome_was_given_up_on_is_not_run_again() {
    let app = spawn_gateway().await;
    let key = app.agent_key("curlew", 1).await;
    let before = app.queue.remaining("curlew", 1).await.unwrap();
    let runner = Gated::new();
    let _worker = start_worker_as(
        &app,
        runner.clone(),
        WorkerIdentity::new(36, 1).with_complete_patience(Duration::from_secs(2)),
    );
    let args = simulation("stall-d");
    let _caller = waiting_call(&app, "simulate_replay", &args, &key);
    until_started(&runner, JobKind::Simulate).await;

    // The job finishes inside a 12 s freeze: the completion's first attempt times out (5 s),
    // the slot gives up, and its looks for the lost claim fail until Redis is back.
    let pid = freeze(&app);
    runner.open(JobKind::Simulate);
    tokio::time::sleep(Duration::from_secs(12)).await;
    thaw(pid);

    // The look runs within a second of the thaw; a second run would start right after it.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let running = app.queue.running_count().await.unwrap();
    eprintln!(
        "figure: outcome given up on after 2 s of a 12 s freeze: runs {}, still running in Redis {}",
        runner.runs(JobKind::Simulate),
        running
    );
    assert_eq!(runner.runs(JobKind::Simulate), 1, "run once");
    let answer = outcome(&app, "simulate_replay", &args, &key).await;
    assert_eq!(answer["outcome"], "won", "{answer}");
    let job = record(&app, &answer["jobId"]).await;
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    let after = app.queue.remaining("curlew", 1).await.unwrap();
    assert_eq!(after.simulations, before.simulations - 1, "charged once");
}

/// (e) A submission whose caller's wait ends because Redis is away (a 8 s freeze while the
/// referee runs): the caller is told `pending`, which promises that a retry with the same
/// idempotency key reads the job. The job then wins, and the retry stores the revision. The
/// guard for a client that leaves mid-check stayed armed on that answer and recorded
/// "nothing was published", so the retry was refused `cancelled` and the won check lost.
async fn a_submission_answered_pending_while_redis_was_away_is_stored_by_the_retry() {
    let app = spawn_gateway().await;
    let key = app.agent_key("plover", 1).await;
    let runner = Gated::new();
    let _worker = start_worker(&app, runner.clone());
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"name": "stau", "map": LEVEL_MAP, "replay": replay,
        "idempotencyKey": "stall-e"});
    let caller = waiting_call(&app, "submit_level", &args, &key);
    until_started(&runner, JobKind::Submit).await;

    let pid = freeze(&app);
    runner.open(JobKind::Submit);
    tokio::time::sleep(Duration::from_secs(8)).await;
    thaw(pid);
    let (status, first, _) = caller.await.unwrap();
    assert_eq!(first["pending"], true, "HTTP {status}: {first}");

    // The job ends; a guard left armed would record its "nothing was published" now.
    let job = first["jobId"].as_str().expect("a jobId").to_string();
    let ended = eventually(
        Duration::from_secs(30),
        async || matches!(app.queue.get(&job).await, Ok(Some(r)) if r.state.is_final()),
    )
    .await;
    assert!(ended, "the submission never ended");
    tokio::time::sleep(Duration::from_secs(2)).await;

    // What the contract sends a caller told `pending` to: get_submission, which stores the
    // won revision (it answered succeeded with no revision, for good).
    let read = outcome(&app, "get_submission", &json!({"jobId": job}), &key).await;
    assert_eq!(read["state"], "succeeded", "{read}");
    let revision = read["revisionId"].as_str().expect("a revision").to_string();
    assert_eq!(read["revisionState"], "labor", "{read}");

    let answer = outcome(&app, "submit_level", &args, &key).await;
    eprintln!(
        "figure: a submission answered {} during an 8 s freeze, asked again: {}",
        told(status, &first),
        answer
    );
    assert_eq!(answer["revisionId"], revision.as_str(), "{answer}");
    assert_eq!(answer["replayed"], true, "{answer}");
    assert_eq!(runner.runs(JobKind::Submit), 1, "run once");
}

/// (f) A worker told to stop while its job runs; the job then finishes while Redis is frozen
/// for longer than the worker's stop budget. The worker gives the outcome up (logged at
/// error level) and stops within its budget: it retried the completion for its patience
/// (2 min) while its process manager killed it at the stop timeout, the outcome unrecorded
/// all the same.
async fn a_stopping_worker_stops_within_its_budget_while_redis_is_frozen() {
    let app = spawn_gateway().await;
    let key = app.agent_key("godwit", 1).await;
    let runner = Gated::new();
    let budget = Duration::from_secs(15);
    let (stop, rx) = watch::channel(false);
    let worker = tokio::spawn(horst_worker::run(
        app.queue.clone(),
        runner.clone(),
        WorkerIdentity::new(37, 1).with_stop_budget(budget),
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        rx,
    ));
    let args = simulation("stall-f");
    let _caller = waiting_call(&app, "simulate_replay", &args, &key);
    until_started(&runner, JobKind::Simulate).await;

    stop.send(true).unwrap();
    let stopping = Instant::now();
    // The worker withdraws its presence and slots first; then Redis stops answering and the
    // job finishes.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pid = freeze(&app);
    runner.open(JobKind::Simulate);
    // Generous: the budget, and a margin for a loaded machine (it took about 2 min).
    let ended = tokio::time::timeout(budget + Duration::from_secs(25), worker).await;
    let took = stopping.elapsed();
    tokio::time::sleep_until((stopping + budget + Duration::from_secs(1)).into()).await;
    thaw(pid);
    eprintln!("figure: a stopping worker with a {budget:?} budget, Redis frozen after its job finished: stopped after {took:?}");
    assert!(
        ended.is_ok(),
        "the worker still ran {took:?} after it was told to stop, with a stop budget of {budget:?}"
    );
    assert_eq!(runner.runs(JobKind::Simulate), 1, "run once");
}

/// The seven cases above and the turn clocks' (`rcadia_stall`) side by side, each with a Redis
/// and an API of its own. Each waits out freezes of 6-15 s that the leases, turn clocks and
/// call timeouts size, CPU-idle: one after another they held a test thread for 109 s.
#[test]
fn redis_frozen_for_6_to_15_s_under_jobs_and_turns() {
    crate::side_by_side!(
        a_job_finishing_during_a_6_s_freeze_is_recorded_succeeded_and_charged_once,
        a_job_finishing_during_a_short_freeze_over_its_deadline_is_recorded_succeeded,
        jobs_across_a_15_s_freeze_are_not_reaped_while_their_worker_lives,
        a_claim_whose_answer_was_lost_is_run_by_its_slot,
        a_job_whose_outcome_was_given_up_on_is_not_run_again,
        a_submission_answered_pending_while_redis_was_away_is_stored_by_the_retry,
        a_stopping_worker_stops_within_its_budget_while_redis_is_frozen,
        crate::rcadia_stall::a_move_refused_while_redis_was_frozen_is_accepted_when_resent_and_nobody_loses_on_time,
    );
}
