//! What one job and one session action cost Redis, and how many of them one primary
//! carries (docs/scaling.md). Run with `cargo bench --bench redis_cost`.
//!
//! Against its own redis-server (testkit, AOF on as in production): `BENCH_JOBS` jobs go
//! through the queue exactly as the API and a worker drive it (admit, claim, complete, the
//! waiter's read), and `BENCH_ACTIONS` session actions through the real HTTP API (the
//! agent's `POST /action`, the host's `pending-actions` read that delivers it and the host's
//! `ops` that publishes the next legal actions and so applies it). Around
//! each, `INFO commandstats` and `INFO stats` give the commands, the server's own CPU time
//! (`usec`, load-independent enough to compare) and the bytes in and out; one core of Redis
//! then carries about 1 s / (usec per item). `redis-benchmark` on the same server gives the
//! machine's plain SET/GET and EVALSHA ceilings for comparison.
//!
//! Then the same jobs with real in-process workers of 4 slots each (`BENCH_WORKERS`, a list,
//! default `1,2,8`) and `BENCH_CALLERS` concurrent callers (default 32) each admitting a
//! trivial job and blocking on it, as the queue benchmark does: what a job costs when idle
//! slots wake on admissions and race for the next turn. Each line counts everything the
//! server did meanwhile (the workers' idle polls and the housekeeping included).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use horst_queue::{Admission, Failure, JobInput, JobKind, JobResult, JobSpec};
use horst_testkit::RedisServer;
use serde_json::{json, Value};
use tokio::sync::watch;

#[allow(dead_code)] // each benchmark uses a part
mod common;
use common::*;

/// A job that does nothing: what is measured is the queue.
struct Trivial;

impl horst_worker::JobRunner for Trivial {
    fn run(
        &self,
        _: JobKind,
        _: &JobInput,
        _: Duration,
        _: &std::sync::atomic::AtomicBool,
    ) -> Result<JobResult, Failure> {
        Ok(JobResult::Referee(Default::default()))
    }
}

/// Commands (calls, usec) by name, and bytes in and out, as the server counts them.
#[derive(Debug, Default, Clone)]
struct Counters {
    commands: BTreeMap<String, (u64, u64)>,
    bytes_in: u64,
    bytes_out: u64,
    /// The server process's CPU time (`used_cpu_user` + `used_cpu_sys`), µs: what Redis
    /// really spent, its network reads and writes and event loop included. The commands'
    /// `usec` count a script's nested commands twice (in the script and in themselves) and
    /// leave the network out.
    cpu_us: u64,
}

async fn counters(conn: &mut redis::aio::MultiplexedConnection) -> Counters {
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap_or_default();
    let mut c = Counters::default();
    for l in stats.lines() {
        let Some((name, rest)) = l.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) else {
            continue;
        };
        let field = |f: &str| {
            rest.split(',')
                .find_map(|kv| kv.strip_prefix(f)?.strip_prefix('='))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        c.commands
            .insert(name.to_string(), (field("calls"), field("usec")));
    }
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(conn)
        .await
        .unwrap_or_default();
    c.bytes_in = info_field(&info, "total_net_input_bytes") as u64;
    c.bytes_out = info_field(&info, "total_net_output_bytes") as u64;
    let cpu: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(conn)
        .await
        .unwrap_or_default();
    c.cpu_us =
        ((info_field(&cpu, "used_cpu_user") + info_field(&cpu, "used_cpu_sys")) * 1e6) as u64;
    c
}

/// The number of `key:value` in an `INFO` reply (0 if it is missing).
fn info_field(info: &str, key: &str) -> f64 {
    info.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// Per item: commands by name, total commands, server usec, bytes in and out.
fn report(what: &str, n: u64, before: &Counters, after: &Counters) -> f64 {
    let mut total_calls = 0;
    let mut total_usec = 0;
    let mut by = Vec::new();
    for (name, (calls, usec)) in &after.commands {
        let (c0, u0) = before.commands.get(name).copied().unwrap_or((0, 0));
        // The INFO calls of the measurement itself are not the item's.
        if name == "info" || calls <= &c0 {
            continue;
        }
        total_calls += calls - c0;
        total_usec += usec - u0;
        by.push(format!(
            "{name} {:.2}/{:.1}µs",
            (calls - c0) as f64 / n as f64,
            (usec - u0) as f64 / n as f64
        ));
    }
    let per_usec = total_usec as f64 / n as f64;
    println!(
        "{what}: {:.2} commands ({}), {:.1} µs of Redis CPU (commandstats; the process: {:.1} µs), {:.0} bytes in, {:.0} bytes out per item; one Redis core carries ~{:.0}/s",
        total_calls as f64 / n as f64,
        by.join(", "),
        per_usec,
        after.cpu_us.saturating_sub(before.cpu_us) as f64 / n as f64,
        (after.bytes_in - before.bytes_in) as f64 / n as f64,
        (after.bytes_out - before.bytes_out) as f64 / n as f64,
        1e6 / per_usec.max(0.001)
    );
    per_usec
}

/// `jobs` jobs one after another, as a blocking tool call admits and waits and as a
/// worker's slot claims and completes (which finds nothing else waiting and registers the
/// slot idle); the accounts named by `account`. Returns the Redis CPU a job.
async fn one_after_another(
    queue: &horst_queue::Queue,
    probe: &mut redis::aio::MultiplexedConnection,
    jobs: u64,
    account: impl Fn(u64) -> String,
    what: &str,
) -> f64 {
    let slot = ("bench-worker/0", horst_queue::Pool::General);
    // The slot's wake-up channel, as its worker listens: a job admitted while the slot is
    // registered idle (by its last completion) is handed to it with the wake-up.
    let mut woken = queue.slot_wake(slot.0);
    // Not registered from an earlier part: the first job waits in its lane.
    queue.retire_idle(&[slot.0.to_string()]).await.unwrap();
    let mut registered = false;
    let before = counters(probe).await;
    for n in 0..jobs {
        let spec = JobSpec {
            kind: JobKind::Simulate,
            account: account(n),
            trust: 2,
            idempotency_key: format!("k{n}"),
            input: horst_queue::JobInput::simulate(n.to_string(), Value::Null),
        };
        let Ok(Admission::New(job)) = queue.admit_for_caller(spec).await else {
            panic!("admission refused")
        };
        let handed = if registered {
            tokio::time::timeout(Duration::from_secs(10), woken.changed())
                .await
                .expect("the idle slot's wake-up");
            let message = woken.payload().expect("a wake-up message");
            queue.handed(slot.0, &message).await.unwrap()
        } else {
            None
        };
        let claim = match handed {
            Some(claim) => claim,
            None => queue
                .claim_slot(slot.0, slot.1, false)
                .await
                .unwrap()
                .expect("a job"),
        };
        let (done, _) = queue
            .complete_and_claim(
                &claim.record,
                claim.token,
                Ok(horst_queue::JobResult::Referee(Default::default())),
                slot,
                claim.more_waiting,
            )
            .await
            .unwrap();
        assert_eq!(done, horst_queue::Completion::Idle);
        registered = true;
        queue.wait(&job.id, Duration::from_secs(5)).await.unwrap();
    }
    let after = counters(probe).await;
    report(what, jobs, &before, &after)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `cargo test --all-targets` runs bench binaries too (without `--bench`): stay quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("Redis cost benchmark: run it with `cargo bench --bench redis_cost`");
        return;
    }
    let jobs = env_num("BENCH_JOBS", 500);
    let actions = env_num("BENCH_ACTIONS", 500);
    let redis = RedisServer::start();
    let url = redis.url();
    let mut config = horst_config::Config::default();
    config.redis.url = url.clone();
    config.queue.waiting_global = 100_000;
    config.queue.daily_seconds = 100_000_000;
    config.sessions.lobby_fill_ms = 300;
    let config = Arc::new(config);
    let (_stop, stop_rx) = watch::channel(false);
    let app = horst::App::build(config, &url, stop_rx)
        .await
        .expect("horst against the benchmark's redis");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(app.clone().run(horst::Roles::API, Some(listener)));
    let mut probe = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();

    // Jobs: what the API (admit, the waiter's reads) and a worker (claim, complete) send,
    // one after another: first each job an account's first of the day (which also trims
    // the account's index of jobs), then 32 accounts taking turns, as a day goes on.
    let queue = app.queue().clone();
    let job_usec = one_after_another(
        &queue,
        &mut probe,
        jobs,
        |n| format!("bench{n}"),
        "job (admit, claim, complete, wait), each an account's first of the day",
    )
    .await;
    one_after_another(
        &queue,
        &mut probe,
        jobs,
        |n| format!("again{}", n % 32),
        "job (admit, claim, complete, wait), 32 accounts taking turns",
    )
    .await;

    // The same jobs through real workers (4 slots each), with concurrent blocking callers.
    let callers = env_num("BENCH_CALLERS", 32);
    let counts = std::env::var("BENCH_WORKERS").unwrap_or_else(|_| "1,2,8".into());
    for workers in counts
        .split(',')
        .filter_map(|w| w.trim().parse::<u32>().ok())
    {
        let (stop_workers, stop_rx) = watch::channel(false);
        let mut running = Vec::new();
        for w in 0..workers {
            running.push(tokio::spawn(horst_worker::run(
                queue.clone(),
                Arc::new(Trivial),
                horst_worker::WorkerIdentity::new(100 + w, 4),
                horst_worker::WorkerMetrics::register(&horst_telemetry::Metrics::new()),
                stop_rx.clone(),
            )));
        }
        // Let the workers announce their slots and settle into their idle wait.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let per = (jobs / callers).max(1);
        let before = counters(&mut probe).await;
        let mut tasks = Vec::new();
        for c in 0..callers {
            let queue = queue.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..per {
                    let spec = JobSpec {
                        kind: JobKind::Simulate,
                        account: format!("w{workers}c{c}"),
                        trust: 2,
                        idempotency_key: format!("k{i}"),
                        input: JobInput::simulate(i.to_string(), Value::Null),
                    };
                    let Ok(Admission::New(job)) = queue.admit(spec).await else {
                        panic!("admission refused")
                    };
                    queue.wait(&job.id, Duration::from_secs(30)).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let after = counters(&mut probe).await;
        report(
            &format!("job with {workers} worker(s) x 4 slots, {callers} callers blocking"),
            per * callers,
            &before,
            &after,
        );
        // The workers stop (and withdraw their slots) before the next part is counted.
        let _ = stop_workers.send(true);
        for r in running {
            let _ = tokio::time::timeout(Duration::from_secs(30), r).await;
        }
    }

    // Session actions over HTTP: an agent acts, the host reads the pending action.
    let http = reqwest::Client::new();
    let (host, _) = app
        .auth()
        .create_token(&["host".into()], Some("bench-host"))
        .await
        .unwrap();
    let mut players = Vec::new();
    for i in 0..2 {
        let (t, _) = app
            .auth()
            .create_token(&["play".into()], Some(&format!("bench{i}")))
            .await
            .unwrap();
        players.push(t);
    }
    let call = |token: &str, method: reqwest::Method, path: String, body: Option<Value>| {
        let mut r = http
            .request(method, format!("{base}{path}"))
            .bearer_auth(token);
        if let Some(b) = body {
            r = r.json(&b);
        }
        async move {
            let r = r.send().await.expect("request");
            let st = r.status().as_u16();
            (st, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let bridge = "/api/v1/agent/bridge/sessions";
    let agent = "/api/v1/agent/sessions";
    let (st, created) = call(
        &host,
        reqwest::Method::POST,
        bridge.to_string(),
        Some(
            json!({ "config": { "minPlayers": 2, "maxPlayers": 2, "turnBased": false,
            "sdkVersion": "2.0.0", "turnTimeout": 0 }, "gameId": "bench", "gameTitle": "Bench" }),
        ),
    )
    .await;
    assert_eq!(st, 201, "{created}");
    let id = created["sessionId"].as_str().unwrap().to_string();
    let mut player = String::new();
    for p in &players {
        let (st, v) = call(
            p,
            reqwest::Method::POST,
            format!("{agent}/{id}/join"),
            Some(json!({})),
        )
        .await;
        assert_eq!(st, 200, "{v}");
        if player.is_empty() {
            player = v["playerId"].as_str().unwrap_or_default().to_string();
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, p) = call(
        &host,
        reqwest::Method::GET,
        format!("{bridge}/{id}/pending-actions?after=0&wait=0"),
        None,
    )
    .await;
    let mut after_seq = p["actions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["seq"].as_u64())
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    let before = counters(&mut probe).await;
    let start = Instant::now();
    for _ in 0..actions {
        let (st, v) = call(
            &players[0],
            reqwest::Method::POST,
            format!("{agent}/{id}/action"),
            Some(json!({ "action": "go", "turn": 0 })),
        )
        .await;
        assert_eq!(st, 200, "{v}");
        let (_, p) = call(
            &host,
            reqwest::Method::GET,
            format!("{bridge}/{id}/pending-actions?after={after_seq}&wait=5"),
            None,
        )
        .await;
        after_seq = p["actions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e["seq"].as_u64())
                    .fold(after_seq, u64::max)
            })
            .unwrap_or(after_seq);
        // The host publishes the next legal actions, which applies this one.
        let (st, v) = call(
            &host,
            reqwest::Method::POST,
            format!("{bridge}/{id}/ops"),
            Some(json!({ "ops": [{ "op": "legal_actions", "playerId": player, "actions": ["go"] }] })),
        )
        .await;
        assert_eq!(st, 200, "{v}");
    }
    let elapsed = start.elapsed();
    let after = counters(&mut probe).await;
    let action_usec = report(
        "session action cycle (the agent's POST /action, the host's pending read and ops)",
        actions,
        &before,
        &after,
    );
    // Memory of the played session (its record: a delta and its base; its event log, which
    // holds at most MAX_EVENTS + 64 entries), as Redis counts it.
    for key in [
        format!("ses:{id}"),
        format!("ses:{id}:base"),
        format!("ses:{id}:events"),
    ] {
        let bytes: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(app.store().key(&key))
            .query_async(&mut probe)
            .await
            .unwrap_or(None);
        println!("memory of {key}: {} bytes", bytes.unwrap_or(0));
    }
    // What the process sends while nobody acts (the clock firer's polls, health probes,
    // queue housekeeping), over as long as the cycles took: the line above includes it.
    let idle_before = counters(&mut probe).await;
    tokio::time::sleep(elapsed).await;
    let idle_after = counters(&mut probe).await;
    report(
        "idle background over the same time (included in the cycle line above)",
        actions,
        &idle_before,
        &idle_after,
    );
    println!(
        "({actions} actions one after another took {:.1} s: {:.0} round trips/s through one API process)",
        elapsed.as_secs_f64(),
        actions as f64 / elapsed.as_secs_f64()
    );

    // The machine's own ceilings, on the same server in the same run.
    for args in [
        vec!["-t", "set,get", "-n", "200000", "-c", "50", "-q"],
        vec![
            "-n",
            "100000",
            "-c",
            "50",
            "-q",
            "EVAL",
            "return redis.call('INCR', KEYS[1])",
            "1",
            "bench:counter",
        ],
    ] {
        let out = std::process::Command::new("redis-benchmark")
            .args(["-h", "127.0.0.1", "-p", &redis.port().to_string()])
            .args(&args)
            .output();
        match out {
            Ok(o) => print!(
                "redis-benchmark {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&o.stdout)
                    .replace('\r', "\n")
                    .lines()
                    .filter(|l| l.contains("requests per second"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Err(e) => print!("redis-benchmark not run: {e}"),
        }
        println!();
    }
    println!(
        "so one primary core: ~{:.0} jobs/s alone, ~{:.0} actions/s alone",
        1e6 / job_usec.max(0.001),
        1e6 / action_usec.max(0.001)
    );
}
