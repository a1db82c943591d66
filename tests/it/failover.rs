//! Redis high availability: a primary, a replica and three sentinels (horst-testkit), horst
//! following the sentinels with `redis.min_replica_acks = 1`, a stream of jobs and of session
//! actions, and a kill -9 of the primary. Nothing acknowledged is lost and nothing runs
//! twice; the figures (failed requests, time until service resumed) are printed for
//! docs/scaling.md and not asserted (the machine is shared).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_queue::{
    Admission, Failure, JobInput, JobKind, JobResult, JobSpec, JobState, RefereeResult,
};
use horst_testkit::{SentinelCluster, SENTINEL_MASTER};
use horst_worker::{JobRunner, WorkerIdentity, WorkerMetrics};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::rcadia_common::{max_seq, started, two_player, Client, AGENT, BRIDGE};

/// Runs every job it is given, counting how often each input ran (also the cluster drill's,
/// `cluster.rs`).
#[derive(Default)]
pub(crate) struct CountingRunner {
    pub(crate) runs: Mutex<HashMap<u64, u32>>,
}

impl CountingRunner {
    /// How many inputs ran more than once.
    pub(crate) fn run_twice(&self) -> usize {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|n| **n > 1)
            .count()
    }
}

impl JobRunner for CountingRunner {
    fn run(
        &self,
        _kind: JobKind,
        input: &JobInput,
        _limit: Duration,
        _cancel: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        let n = input.map.parse::<u64>().unwrap_or(u64::MAX);
        *self
            .runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(n)
            .or_default() += 1;
        std::thread::sleep(Duration::from_millis(20));
        Ok(JobResult::Referee(RefereeResult {
            ticks: n as u32,
            ..RefereeResult::default()
        }))
    }
}

/// What one stream saw.
#[derive(Default, Debug)]
pub(crate) struct Tally {
    /// Acknowledged: (what, when).
    pub(crate) acked: Vec<(String, Instant)>,
    pub(crate) failed: u64,
    /// Failed requests by HTTP status (0: the job stream's errors).
    pub(crate) codes: std::collections::BTreeMap<u16, u64>,
}

impl Tally {
    /// When the first acknowledgement after `at` came, counted from `at`.
    pub(crate) fn resumed_after(&self, at: Instant) -> Option<Duration> {
        self.acked
            .iter()
            .map(|(_, t)| *t)
            .find(|t| *t > at)
            .map(|t| t.duration_since(at))
    }

    /// The longest time between two acknowledgements (or from `from` to the first): how long
    /// the stream paused.
    pub(crate) fn longest_pause(&self, from: Instant) -> Duration {
        let mut last = from;
        let mut longest = Duration::ZERO;
        for (_, t) in &self.acked {
            if *t > last {
                longest = longest.max(*t - last);
                last = *t;
            }
        }
        longest
    }

    /// Acknowledged action cycles the session does not remember: `last` is the session's
    /// `lastAction` id (every cycle's writes are durable, so it is the last acknowledged one,
    /// or a newer one whose cycle was cut short; an older one means lost cycles).
    pub(crate) fn lost_after(&self, last: &str) -> usize {
        match self.acked.iter().position(|(id, _)| id == last) {
            Some(i) => self.acked.len() - 1 - i,
            None => 0,
        }
    }
}

/// Admits a job after another (each account and input its own) and waits for each, until
/// `streaming` turns false; an acknowledged job is one that succeeded.
pub(crate) fn job_stream(
    queue: horst_queue::Queue,
    streaming: Arc<AtomicBool>,
    label: &'static str,
) -> tokio::task::JoinHandle<Tally> {
    tokio::spawn(async move {
        let mut t = Tally::default();
        let mut n = 0u64;
        while streaming.load(Ordering::Relaxed) {
            n += 1;
            let spec = JobSpec {
                kind: JobKind::Simulate,
                account: format!("{label}acct{n}"),
                trust: 2,
                idempotency_key: format!("k{n}"),
                input: JobInput {
                    map: n.to_string(),
                    ..JobInput::default()
                },
            };
            let done = match queue.admit(spec).await {
                Ok(Admission::New(job)) => queue.wait(&job.id, Duration::from_secs(30)).await,
                Ok(Admission::Replayed(job)) => Ok(job),
                Err(e) => Err(e),
            };
            match done {
                Ok(r) if r.state == JobState::Succeeded => t.acked.push((r.id, Instant::now())),
                _ => {
                    t.failed += 1;
                    *t.codes.entry(0).or_default() += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        t
    })
}

/// Acknowledged jobs that are not there, succeeded with the result their run recorded
/// (`ticks` = the input's number), now.
pub(crate) async fn jobs_lost(queue: &horst_queue::Queue, jobs: &Tally) -> usize {
    let mut lost = 0;
    for (id, _) in &jobs.acked {
        match queue.get(id).await.unwrap() {
            Some(r)
                if r.state == JobState::Succeeded
                    && matches!(&r.result, Some(JobResult::Referee(x)) if r.input.map == x.ticks.to_string()) =>
                {}
            _ => lost += 1,
        }
    }
    lost
}

/// Action cycles on a session that is not turn-based (`player` may act again and again)
/// until `streaming` turns false: the agent acts, the host reads it and publishes the next
/// legal actions (which applies it). A cycle is acknowledged when the host's publish is.
pub(crate) fn action_stream(
    agent: Client,
    host: Client,
    session: String,
    player: String,
    mut after: u64,
    streaming: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<Tally> {
    tokio::spawn(async move {
        let mut t = Tally::default();
        let refused = |t: &mut Tally, st: u16, _v: &Value| {
            t.failed += 1;
            *t.codes.entry(st).or_default() += 1;
        };
        let publish =
            || json!({ "ops": [{ "op": "legal_actions", "playerId": player, "actions": ["go"] }] });
        while streaming.load(Ordering::Relaxed) {
            let (st, v) = agent
                .post(
                    &format!("{AGENT}/{session}/action"),
                    json!({ "action": "go", "turn": 0 }),
                )
                .await;
            let Some(id) = v["actionId"]
                .as_str()
                .filter(|_| st == 200)
                .map(str::to_string)
            else {
                refused(&mut t, st, &v);
                tokio::time::sleep(Duration::from_millis(100)).await;
                // The action may still be pending from a cycle cut short: take delivery
                // of it and release it, as a host does.
                let (st, p) = host
                    .get(&format!(
                        "{BRIDGE}/{session}/pending-actions?after={after}&wait=0"
                    ))
                    .await;
                if st == 200 {
                    after = max_seq(&p, after);
                }
                let _ = host
                    .post(&format!("{BRIDGE}/{session}/ops"), publish())
                    .await;
                continue;
            };
            let (st, p) = host
                .get(&format!(
                    "{BRIDGE}/{session}/pending-actions?after={after}&wait=5"
                ))
                .await;
            if st != 200 {
                refused(&mut t, st, &p);
            }
            after = max_seq(&p, after);
            let (st, v) = host
                .post(&format!("{BRIDGE}/{session}/ops"), publish())
                .await;
            if st == 200 {
                t.acked.push((id, Instant::now()));
            } else {
                refused(&mut t, st, &v);
            }
        }
        t
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_primary_loses_nothing_acknowledged_and_runs_nothing_twice() {
    let mut cluster = tokio::task::block_in_place(SentinelCluster::start);
    let mut config = horst_config::Config::default();
    config.redis.sentinels = cluster.sentinel_addrs();
    config.redis.sentinel_master = SENTINEL_MASTER.into();
    config.redis.min_replica_acks = 1;
    config.redis.replica_ack_timeout_ms = 1000;
    config.queue.waiting_global = 10_000;
    config.queue.daily_seconds = 10_000_000;
    config.queue.wait_seconds = 30;
    config.sessions.lobby_fill_ms = 300;
    let config = Arc::new(config);
    let (stop_tx, stop_rx) = watch::channel(false);
    let app = horst::App::build(config.clone(), "", stop_rx.clone())
        .await
        .expect("horst finds the primary through the sentinels");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(app.clone().run(horst::Roles::API, Some(listener)));
    let runner = Arc::new(CountingRunner::default());
    tokio::spawn(horst_worker::run(
        app.queue().clone(),
        runner.clone(),
        WorkerIdentity::new(0, 2),
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        stop_rx.clone(),
    ));

    // A host and one agent at a table of a game that is not turn-based (the agent may act
    // again and again).
    let mk = |token: String| Client {
        base: format!("http://{addr}"),
        token,
        http: reqwest::Client::new(),
    };
    let (host, _) = app
        .auth()
        .create_token(&["host".into()], Some("Host"))
        .await
        .unwrap();
    let mut agents = Vec::new();
    for i in 0..2 {
        let (t, _) = app
            .auth()
            .create_token(&["play".into()], Some(&format!("Agent{i}")))
            .await
            .unwrap();
        agents.push(mk(t));
    }
    let host = mk(host);
    let (session, pids, after) =
        started(&host, &agents, two_player(json!({ "turnBased": false }))).await;
    host.ops(
        &session,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["go"] }]),
    )
    .await;

    let streaming = Arc::new(AtomicBool::new(true));
    let jobs = job_stream(app.queue().clone(), streaming.clone(), "");
    let actions = action_stream(
        agents[0].clone(),
        host.clone(),
        session.clone(),
        pids[0].clone(),
        after,
        streaming.clone(),
    );

    tokio::time::sleep(Duration::from_secs(3)).await;
    let old = cluster.kill_primary();
    let (new, failover_took) =
        tokio::task::block_in_place(|| cluster.wait_for_failover(old, Duration::from_secs(60)));
    let failed_over_at = Instant::now();
    // As an operator would: the crashed server comes back as a replica of the new primary
    // (the sentinels would convert it too, only later), so `min_replica_acks = 1` can be met
    // again.
    tokio::task::block_in_place(|| cluster.server_on(old).start_again_as_replica_of(new));
    // The store follows the primary by asking the sentinels every 250 ms; on two loaded cores
    // connecting to the new one can take a while, so wait for it (bounded) rather than assume,
    // and only then give the streams their time after the failover: a fixed time counted from
    // the failover could end before the store followed, and then nothing had a chance to resume.
    let want = format!("127.0.0.1:{new}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while app.store().primary_addr() != want && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        app.store().primary_addr(),
        want,
        "the store never followed the failover"
    );
    tokio::time::sleep(Duration::from_secs(10)).await;
    streaming.store(false, Ordering::Relaxed);
    let jobs = jobs.await.unwrap();
    let actions = actions.await.unwrap();

    // Acknowledged-then-lost: every acknowledged job is there, succeeded, on the new primary.
    let lost_jobs = jobs_lost(app.queue(), &jobs).await;
    let run_twice = runner.run_twice();
    // Sessions keep answering: same boot tag, no 410.
    let (st, v) = agents[0].get(&format!("{AGENT}/{session}/state")).await;
    assert_eq!(st, 200, "{v}");
    // Every cycle's writes are durable, so the session remembers the last acknowledged action
    // (or a newer one whose cycle was cut short); an older one would mean lost cycles.
    let lost_actions = actions.lost_after(v["lastAction"]["actionId"].as_str().unwrap_or_default());
    let resumed = |t: &Tally| t.resumed_after(failed_over_at);
    eprintln!(
        "failover figures: sentinels failed over {failover_took:?} after the kill; jobs {} acknowledged, {} failed, {lost_jobs} lost, {run_twice} run twice, first after the failover {:?}; action cycles {} acknowledged, {} failed requests {:?}, {lost_actions} lost, first after the failover {:?}",
        jobs.acked.len(),
        jobs.failed,
        resumed(&jobs),
        actions.acked.len(),
        actions.failed,
        actions.codes,
        resumed(&actions),
    );
    assert_eq!(lost_jobs, 0, "acknowledged jobs lost");
    assert_eq!(run_twice, 0, "jobs run twice");
    assert_eq!(lost_actions, 0, "acknowledged actions lost");
    assert!(
        resumed(&jobs).is_some() && resumed(&actions).is_some(),
        "service never resumed after the failover"
    );
    let _ = stop_tx.send(true);
}

/// People's JWTs are signed with a key from a file outside Redis (`sessions.jwt_key_file`):
/// a failover between the key's creation and its first use changes nothing (a process that
/// starts after the failover signs and checks with the same key), and Redis never holds it.
async fn the_jwt_key_survives_a_failover_between_its_creation_and_its_first_use() {
    use std::os::unix::fs::PermissionsExt;

    let mut cluster = tokio::task::block_in_place(SentinelCluster::start);
    let data = tempfile::tempdir().unwrap();
    let mut config = horst_config::Config {
        data_dir: data.path().to_path_buf(),
        ..Default::default()
    };
    config.redis.sentinels = cluster.sentinel_addrs();
    config.redis.sentinel_master = SENTINEL_MASTER.into();
    config.redis.min_replica_acks = 1;
    config.redis.replica_ack_timeout_ms = 1000;
    let config = Arc::new(config);
    let (stop_tx, stop_rx) = watch::channel(false);
    let first = horst::App::build(config.clone(), "", stop_rx.clone())
        .await
        .expect("horst finds the primary through the sentinels");
    // Created: the file is there, the owner's only.
    first.auth().load_signing_key().await.unwrap();
    let key_file = config.jwt_key_file();
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{key_file:?}");
    let key = std::fs::read_to_string(&key_file)
        .unwrap()
        .trim()
        .to_string();

    let old = cluster.kill_primary();
    let (new, _) =
        tokio::task::block_in_place(|| cluster.wait_for_failover(old, Duration::from_secs(60)));
    tokio::task::block_in_place(|| cluster.server_on(old).start_again_as_replica_of(new));

    // First use, after the failover: the first process signs, a process started now checks
    // (and the other way round).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let second = loop {
        // Its start writes (and waits for the replica, which is still syncing a moment).
        match horst::App::build(config.clone(), "", stop_rx.clone()).await {
            Ok(app) => break app,
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("a start during the failover: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("no process starts 30 s after the failover: {e}"),
        }
    };
    let jwt = loop {
        let jwt = async {
            let generation = first.auth().generation("anna").await?;
            first.auth().issue_jwt("anna", generation).await
        };
        match jwt.await {
            Ok(j) => break j,
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("issue_jwt during the failover: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("no JWT 30 s after the failover: {e}"),
        }
    };
    let anna = second.auth().identify(&jwt).await.unwrap();
    assert_eq!(anna.map(|i| i.id.clone()).as_deref(), Some("anna"));
    let generation = second.auth().generation("bert").await.unwrap();
    let jwt = second.auth().issue_jwt("bert", generation).await.unwrap();
    let bert = first.auth().identify(&jwt).await.unwrap();
    assert_eq!(bert.map(|i| i.id.clone()).as_deref(), Some("bert"));
    assert_eq!(
        std::fs::read_to_string(&key_file).unwrap().trim(),
        key,
        "the file was not made again"
    );

    // Redis holds no string with the key (the RDB, the AOF and a replica cannot leak it).
    let store = first.store();
    for name in store.scan_keys("*").await.unwrap() {
        let kind: String = redis::cmd("TYPE")
            .arg(&name)
            .query_async(&mut store.conn())
            .await
            .unwrap();
        if kind == "string" {
            let v: Vec<u8> = redis::cmd("GET")
                .arg(&name)
                .query_async(&mut store.conn())
                .await
                .unwrap();
            assert!(
                !String::from_utf8_lossy(&v).contains(&key),
                "{name} holds the JWT key"
            );
        }
    }
    let _ = stop_tx.send(true);
}

/// With `min_replica_acks = 1` a durable write ends with `WAIT`, which holds the connection
/// it is sent on in Redis until the replica acknowledges or `replica_ack_timeout_ms` passes.
/// With the replica frozen and several durable writes in flight, the store's other commands
/// (the readiness PING, reads; in a process also heartbeats and presence) must still be
/// answered at once: they queued behind every `WAIT` on the one shared connection, seconds
/// each, and timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_writes_waiting_for_a_frozen_replica_hold_up_no_other_command() {
    let cluster = tokio::task::block_in_place(SentinelCluster::start);
    let target = horst_store::RedisTarget::Sentinel(horst_store::SentinelTarget {
        sentinels: cluster.sentinel_addrs(),
        master: SENTINEL_MASTER.into(),
        sentinel_password: String::new(),
        password: String::new(),
    });
    let store = horst_store::Store::connect_to(
        &target,
        "waits:",
        horst_store::Durability {
            min_replica_acks: 1,
            timeout_ms: 1000,
        },
    )
    .await
    .unwrap();
    let replica = cluster.servers[1].pid().expect("the replica runs") as i32;
    unsafe { libc::kill(replica, libc::SIGSTOP) };

    let writing = Arc::new(AtomicBool::new(true));
    let mut writers = Vec::new();
    for i in 0..8 {
        let (store, writing) = (store.clone(), writing.clone());
        writers.push(tokio::spawn(async move {
            let (list, count) = (store.key(&format!("trail{i}")), store.key(&format!("n{i}")));
            while writing.load(Ordering::Relaxed) {
                // Each fails after the ack timeout (the replica is frozen): that is the point.
                let _ = horst_store::trail::push(&store, &list, &count, "line", 10).await;
                let _ = store.barrier().await;
            }
        }));
    }
    // Let the durable writes pile up behind the frozen replica.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut slowest = Duration::ZERO;
    let mut failed = Vec::new();
    for _ in 0..10 {
        let asked = Instant::now();
        if let Err(e) = store.ping().await {
            failed.push(format!("PING: {e}"));
        }
        let read: redis::RedisResult<Option<String>> = redis::cmd("GET")
            .arg(store.key("absent"))
            .query_async(&mut store.conn())
            .await;
        if let Err(e) = read {
            failed.push(format!("GET: {e}"));
        }
        slowest = slowest.max(asked.elapsed());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    writing.store(false, Ordering::Relaxed);
    unsafe { libc::kill(replica, libc::SIGCONT) };
    for w in writers {
        let _ = tokio::time::timeout(Duration::from_secs(30), w).await;
    }
    eprintln!("figure: with the replica frozen and 8 tasks writing durably, the slowest PING + GET took {slowest:?}");
    assert!(failed.is_empty(), "{failed:?}");
    // Generous (a loaded CI machine); held up behind the WAITs it took seconds.
    assert!(
        slowest < Duration::from_millis(1500),
        "a PING and a GET took {slowest:?} while durable writes waited for the replica"
    );
}

/// Holds the job whose input is "1" until `release` is set; runs every other at once.
#[derive(Default)]
struct HoldFirst {
    release: AtomicBool,
    runs: CountingRunner,
}

impl JobRunner for HoldFirst {
    fn run(
        &self,
        kind: JobKind,
        input: &JobInput,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Result<JobResult, Failure> {
        while input.map == "1" && !self.release.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.runs.run(kind, input, limit, cancel)
    }
}

/// A slot's completion claims its next job in the same step. With `min_replica_acks = 1` and
/// the replica not answering (frozen here; after a failover, while the new replica syncs:
/// 10-15 s in the Sentinel drill), Redis runs that step and only its `WAIT` fails, so the
/// slot does not learn of the claim. It retried the finished job's outcome for as long as the
/// replica stayed away, and the claimed job, heartbeated by nobody, was reaped after its
/// lease as a dead worker's: `failed`, charged, never run. Now the slot looks for the claim
/// at once and runs it.
async fn a_job_claimed_by_a_completion_whose_wait_failed_is_run_not_reaped() {
    let cluster = tokio::task::block_in_place(SentinelCluster::start);
    let mut config = horst_config::Config::default();
    config.redis.sentinels = cluster.sentinel_addrs();
    config.redis.sentinel_master = SENTINEL_MASTER.into();
    config.redis.min_replica_acks = 1;
    config.redis.replica_ack_timeout_ms = 1000;
    config.queue.lease_seconds = 2;
    let config = Arc::new(config);
    let (stop_tx, stop_rx) = watch::channel(false);
    let app = horst::App::build(config.clone(), "", stop_rx.clone())
        .await
        .expect("horst finds the primary through the sentinels");
    // An API process: its housekeeping reaps expired leases.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    tokio::spawn(app.clone().run(horst::Roles::API, Some(listener)));
    let runner = Arc::new(HoldFirst::default());
    // One slot for planner work: the second playtest waits for it and is claimed by the
    // first one's completion.
    tokio::spawn(horst_worker::run(
        app.queue().clone(),
        runner.clone(),
        WorkerIdentity::new(0, 1),
        WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        stop_rx.clone(),
    ));
    let admit = |n: u64| {
        let queue = app.queue().clone();
        async move {
            let spec = JobSpec {
                kind: JobKind::Playtest,
                account: format!("heron{n}"),
                trust: 2,
                idempotency_key: format!("k{n}"),
                input: JobInput {
                    map: n.to_string(),
                    ..JobInput::default()
                },
            };
            match queue.admit(spec).await {
                Ok(Admission::New(job)) => job.id,
                other => panic!("admission of job {n}: {other:?}"),
            }
        }
    };
    let first = admit(1).await;
    let queue = app.queue().clone();
    let running = crate::harness::eventually(
        Duration::from_secs(30),
        async || matches!(queue.get(&first).await, Ok(Some(r)) if r.state == JobState::Running),
    )
    .await;
    assert!(running, "the first job never started");
    let second = admit(2).await;

    let replica = cluster.servers[1].pid().expect("the replica runs") as i32;
    unsafe { libc::kill(replica, libc::SIGSTOP) };
    runner.release.store(true, Ordering::SeqCst);
    // Several leases with the replica away.
    tokio::time::sleep(Duration::from_secs(8)).await;
    unsafe { libc::kill(replica, libc::SIGCONT) };

    let ended = crate::harness::eventually(
        Duration::from_secs(60),
        async || matches!(queue.get(&second).await, Ok(Some(r)) if r.state.is_final()),
    )
    .await;
    assert!(ended, "the second job never ended");
    let (a, b) = (
        queue.get(&first).await.unwrap().unwrap(),
        queue.get(&second).await.unwrap().unwrap(),
    );
    let runs = runner.runs.runs.lock().unwrap().clone();
    eprintln!(
        "figure: replica frozen 8 s as the first job finished: first {:?}, second {:?} ({:?}), runs {runs:?}",
        a.state, b.state, b.failure
    );
    assert_eq!(a.state, JobState::Succeeded, "{a:?}");
    assert_eq!(b.state, JobState::Succeeded, "{b:?}");
    assert_eq!(runs.get(&2), Some(&1), "the second job ran once: {runs:?}");
    let _ = stop_tx.send(true);
}

/// Two cases above (a replica frozen under a completion's `WAIT`, a failover between a key's
/// creation and its use) and `redis_full`'s Redis refusing writes (memory full, a failing
/// disk, a primary demoted to a replica) side by side, each with its own servers: they wait
/// on Sentinel, replication and the readiness checks, CPU-idle; one after another they held
/// a test thread for about 28 s, the longest 8 s (docs/benchmarks.md, "The test run"). The
/// other two stream load and time their pauses, so they run alone.
#[test]
fn replicas_and_refused_writes_side_by_side() {
    crate::side_by_side!(
        a_job_claimed_by_a_completion_whose_wait_failed_is_run_not_reaped,
        the_jwt_key_survives_a_failover_between_its_creation_and_its_first_use,
        crate::redis_full::a_failing_disk_keeps_readyz_ready_and_says_writes_are_refused,
        crate::redis_full::a_full_redis_refuses_writes_with_503_keeps_reads_and_recovers_by_itself,
        crate::redis_full::a_primary_demoted_to_a_replica_at_run_time_is_named_in_readyz_with_the_fix,
    );
}
