//! Chaos run (docs/reliability.md): real `horst api` and `horst worker` processes and a real
//! redis-server on free loopback ports, under a steady load of `simulate_replay` calls,
//! while it kills a worker (-9), an API process (-9) and Redis (-9, then restarted on its AOF),
//! freezes Redis (SIGSTOP for a few seconds), and runs a slowloris and an idle-connection flood.
//! Then it reads every job record in Redis and prints jobs admitted / succeeded / failed /
//! lost / run twice, what the callers were answered, and how the connection limits held.
//!
//! ```sh
//! cargo bench --bench chaos                       # release build, about 2 minutes
//! cargo bench --profile dev --bench chaos         # the dev build the tests use
//! CHAOS_CLIENTS=16 CHAOS_FLOOD=20000 cargo bench --bench chaos
//! ```
//!
//! How "lost" and "run twice" are counted, from Redis rather than from the callers:
//! - **lost**: a job record still `queued`/`running` after the run settled (lease + reap), or
//!   a job id some caller was told that has no record at the end (a write lost with Redis).
//! - **run twice**: seconds charged beyond the started jobs' charges (every claim adds its
//!   job's seconds to the day's charge, and a job records its start once), counted as
//!   claims, plus idempotency keys with two started jobs.
//!
//! Bounded and loopback only: the flood's sockets come from two child processes (each under
//! its own descriptor limit), the load from 127.0.0.3, the slowloris from 127.0.0.4 and the
//! `/healthz` probe from 127.0.0.2 (Linux routes all of 127/8 to loopback).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use horst_testkit::RedisServer;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

#[allow(dead_code)] // each benchmark uses a part
mod common;
use common::*;

const LEVEL_MAP: &str = include_str!("../levels/01-erste-schritte.map");
const LEVEL_REPLAY: &str = include_str!("../levels/01-erste-schritte.replay.json");

fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
    #[allow(clippy::unnecessary_cast)]
    let current = lim.rlim_cur as u64;
    current
}

fn main() {
    let nofile = raise_nofile();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Ok(target) = std::env::var("CHAOS_FLOOD_CHILD") {
        rt.block_on(flood_child(target.parse().expect("flood target")));
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    rt.block_on(run(nofile));
}

struct Proc {
    child: Child,
    name: String,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn horst(name: &str, args: &[&str], redis: &str, data: &str) -> (Proc, Option<String>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
    cmd.args(args)
        .args(["--redis", redis, "--data", data])
        .env("HORST_LOG_LEVEL", "warn")
        .env("HORST_GATEWAY_MODE", "on")
        .env("HORST_GATEWAY_BURST_PER_IP_PER_MINUTE", "1000000")
        .env("HORST_GATEWAY_BURST_PER_ACCOUNT_PER_MINUTE", "1000000")
        .env("HORST_QUEUE_WAITING_GLOBAL", "10000")
        .env("HORST_QUEUE_DAILY_SECONDS", "80000000")
        .env("HORST_QUOTAS_TRUST2_SIMULATIONS", "100000000")
        .env("HORST_WORKER_THREADS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(format!("{data}/{}.log", name.replace(' ', "-")))
                .map(Stdio::from)
                .unwrap_or(Stdio::null()),
        );
    let mut child = cmd.spawn().expect("spawn horst");
    let mut url = None;
    let rx = listening_urls(child.stdout.take().unwrap());
    if args[0] == "api" {
        url = Some(
            rx.recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{name} did not start; see {data}/*.log")),
        );
    }
    (
        Proc {
            child,
            name: name.to_string(),
        },
        url,
    )
}

fn signal(pid: u32, sig: i32) {
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// What happened to one logical call (one idempotency key).
#[derive(Default)]
struct Tally {
    /// Final answers by kind (`ok`, or the error code).
    finals: BTreeMap<String, u64>,
    /// Answers that made the caller retry, by kind.
    retries: BTreeMap<String, u64>,
    /// Job ids each key was told.
    jobs: HashMap<String, HashSet<String>>,
    /// Keys whose final answer was a success.
    told_ok: HashSet<String>,
    gave_up: u64,
    keys: u64,
}

fn answer_kind(status: u16, body: &Value) -> (String, Option<String>, bool) {
    // (kind, job id, final?)
    if status != 200 {
        return (format!("http_{status}"), None, false);
    }
    let result = &body["result"];
    let text = tool_text(result);
    if result["isError"] == false {
        let id = text["jobId"].as_str().map(str::to_string);
        return ("ok".into(), id, true);
    }
    let e = &text["error"];
    let id = e["jobId"].as_str().map(str::to_string);
    if e["pending"] == true || text["pending"] == true {
        return ("pending".into(), id, false);
    }
    let code = e["code"].as_str().unwrap_or("no_code").to_string();
    let is_final = !matches!(
        code.as_str(),
        "busy" | "engine_unavailable" | "internal_error" | "no_code"
    );
    (code, id, is_final)
}

async fn load_client(
    n: usize,
    key: String,
    apis: Arc<RwLock<Vec<String>>>,
    stop: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
) {
    let http = reqwest::Client::builder()
        .local_address(Some("127.0.0.3".parse().unwrap()))
        .timeout(Duration::from_secs(90))
        .build()
        .unwrap();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let mut api = n;
    for call in 0.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let idem = format!("c{n}-{call}");
        tally.lock().unwrap().keys += 1;
        let body = tool_call(
            "simulate_replay",
            json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem}),
        );
        let started = Instant::now();
        loop {
            // A call started before the stop is followed to its end, for at most 90 s.
            if started.elapsed() > Duration::from_secs(90) {
                tally.lock().unwrap().gave_up += 1;
                break;
            }
            let base = {
                let apis = apis.read().unwrap();
                apis[api % apis.len()].clone()
            };
            let (status, v) = post_mcp(&http, &base, &key, body.clone()).await;
            let (kind, id, is_final) = if status == 0 {
                api += 1;
                ("transport_error".to_string(), None, false)
            } else {
                answer_kind(status, &v)
            };
            {
                let mut t = tally.lock().unwrap();
                if let Some(id) = id {
                    t.jobs.entry(idem.clone()).or_default().insert(id);
                }
                if is_final {
                    if kind == "ok" {
                        t.told_ok.insert(idem.clone());
                    }
                    *t.finals.entry(kind).or_default() += 1;
                    break;
                }
                *t.retries.entry(kind).or_default() += 1;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A child process that opens `CHAOS_FLOOD_COUNT` idle connections to `target` and holds
/// them until `CHAOS_FLOOD_SECONDS` (with `CHAOS_FLOOD_REOPEN=1` it reopens at once every
/// one the server closes: a reconnect storm); prints one summary line.
async fn flood_child(target: SocketAddr) {
    let count = env_num("CHAOS_FLOOD_COUNT", 10_000) as usize;
    let seconds = env_num("CHAOS_FLOOD_SECONDS", 30);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut open: Vec<TcpStream> = Vec::with_capacity(count);
    let (mut opened, mut closed_by_server, mut connect_errors) = (0u64, 0u64, 0u64);
    let mut max_open = 0usize;
    let reopen = env_num("CHAOS_FLOOD_REOPEN", 0) == 1;
    let mut first = true;
    while Instant::now() < end {
        // 64 connects in flight at a time, as a flooding client would.
        while (first || reopen) && open.len() < count && Instant::now() < end {
            let batch = (count - open.len()).min(64);
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..batch {
                set.spawn(TcpStream::connect(target));
            }
            while let Some(r) = set.join_next().await {
                match r {
                    Ok(Ok(s)) => {
                        opened += 1;
                        open.push(s);
                    }
                    _ => connect_errors += 1,
                }
            }
        }
        first = false;
        max_open = max_open.max(open.len());
        tokio::time::sleep(Duration::from_secs(1)).await;
        // A refused connection got a 503 and EOF; a held one times out later.
        let mut buf = [0u8; 512];
        open.retain(|s| match s.try_read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
            _ => {
                closed_by_server += 1;
                false
            }
        });
    }
    println!(
        "flood opened={opened} closed_by_server={closed_by_server} connect_errors={connect_errors} max_open={max_open} open_at_end={}",
        open.len()
    );
}

fn parse_flood(line: &str) -> HashMap<String, u64> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

struct Slowloris {
    refused: u64,
    closed_after: Vec<f64>,
    still_open: u64,
    connect_errors: u64,
}

/// `n` connections from 127.0.0.4 that send half a head and then a header line every 5 s.
async fn slowloris(target: SocketAddr, n: usize, window: Duration) -> Slowloris {
    let mut tasks = Vec::new();
    for _ in 0..n {
        tasks.push(tokio::spawn(async move {
            let socket = TcpSocket::new_v4().ok()?;
            socket.bind("127.0.0.4:0".parse().unwrap()).ok()?;
            let mut s = socket.connect(target).await.ok()?;
            let start = Instant::now();
            let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n").await;
            let mut buf = [0u8; 512];
            let mut i = 0;
            while start.elapsed() < window {
                tokio::select! {
                    r = s.readable() => {
                        if r.is_err() {
                            return Some((false, Some(start.elapsed().as_secs_f64())));
                        }
                        match s.try_read(&mut buf) {
                            Ok(0) => return Some((false, Some(start.elapsed().as_secs_f64()))),
                            Ok(n) if buf[..n].starts_with(b"HTTP/1.1 503") => return Some((true, None)),
                            Ok(_) => {}
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            Err(_) => return Some((false, Some(start.elapsed().as_secs_f64()))),
                        }
                    }
                    _ = tokio::time::sleep(Duration::from_secs(5)) => {
                        i += 1;
                        if s.write_all(format!("x-{i}: y\r\n").as_bytes()).await.is_err() {
                            return Some((false, Some(start.elapsed().as_secs_f64())));
                        }
                    }
                }
            }
            Some((false, None))
        }));
    }
    let mut out = Slowloris {
        refused: 0,
        closed_after: Vec::new(),
        still_open: 0,
        connect_errors: 0,
    };
    for t in tasks {
        match t.await.ok().flatten() {
            None => out.connect_errors += 1,
            Some((true, _)) => out.refused += 1,
            Some((false, Some(after))) => out.closed_after.push(after),
            Some((false, None)) => out.still_open += 1,
        }
    }
    out.closed_after.sort_by(f64::total_cmp);
    out
}

fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

async fn run(nofile: u64) {
    let clients = env_num("CHAOS_CLIENTS", 8) as usize;
    let flood = env_num("CHAOS_FLOOD", 20_000);
    let slow = env_num("CHAOS_SLOWLORIS", 300) as usize;
    println!("chaos: {clients} clients, flood {flood}, slowloris {slow}, RLIMIT_NOFILE {nofile}");
    let t0 = Instant::now();
    let log = move |what: &str| {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        println!(
            "chaos: {:>5.1} s  {what}  (unix ms {unix_ms})",
            t0.elapsed().as_secs_f64()
        )
    };

    let mut redis = RedisServer::start();
    let url = redis.url();
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap().to_string();
    // `CHAOS_KEEP=1`: the processes' logs stay (their directory is printed) to explain a
    // figure.
    let _data = if std::env::var_os("CHAOS_KEEP").is_some() {
        println!("chaos: the processes' logs stay in {d}");
        let _ = data.keep();
        None
    } else {
        Some(data)
    };
    let (mut api_a, url_a) = horst("api A", &["api", "--listen", "127.0.0.1:0"], &url, &d);
    let (api_b, url_b) = horst("api B", &["api", "--listen", "127.0.0.1:0"], &url, &d);
    let mut workers: Vec<Proc> = (0..3)
        .map(|i| horst(&format!("worker {i}"), &["worker"], &url, &d).0)
        .collect();
    // "listening on http://ADDR" gives the base URLs.
    let apis = Arc::new(RwLock::new(vec![url_a.unwrap(), url_b.unwrap()]));
    let b_addr: SocketAddr = apis.read().unwrap()[1]
        .trim_start_matches("http://")
        .parse()
        .unwrap();

    // Accounts and keys, as the operator would make them.
    let config = horst_config::Config::default();
    let store = horst_store::Store::open(&config.redis, &url)
        .await
        .expect("store");
    let keys = agent_keys(&store, "chaos", clients).await;
    // Seconds charged by claims, today and tomorrow (a run across midnight UTC).
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    };
    let first_day = now_ms();
    // The days' charged seconds and finished jobs, as the admin overview reads them.
    let day_figures = |store: horst_store::Store| async move {
        let (mut sum, mut finished) = (0, 0);
        for day in [first_day, first_day + 86_400_000] {
            // A read that fails must not pass for "nothing charged": it would hide a job
            // claimed twice.
            let stats = horst_queue::day_stats(&store, day)
                .await
                .expect("the day's charged seconds");
            sum += stats.seconds_charged;
            finished += stats
                .finished
                .values()
                .flat_map(|m| m.values())
                .sum::<u64>();
        }
        (sum, finished)
    };
    let figures_before = day_figures(store.clone()).await;

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut load = Vec::new();
    for (n, key) in keys.into_iter().enumerate() {
        load.push(tokio::spawn(load_client(
            n,
            key,
            apis.clone(),
            stop.clone(),
            tally.clone(),
        )));
    }
    log("load running");

    tokio::time::sleep(Duration::from_secs(8)).await;
    log(&format!("kill -9 {}", workers[0].name));
    let _ = workers[0].child.kill();
    tokio::time::sleep(Duration::from_secs(4)).await;
    workers[0] = horst("worker 0 (again)", &["worker"], &url, &d).0;
    log("worker 0 restarted");

    tokio::time::sleep(Duration::from_secs(6)).await;
    log(&format!("kill -9 {}", api_a.name));
    let _ = api_a.child.kill();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (again, url_a) = horst(
        "api A (again)",
        &["api", "--listen", "127.0.0.1:0"],
        &url,
        &d,
    );
    api_a = again;
    apis.write().unwrap()[0] = url_a.unwrap();
    log("api A restarted");

    tokio::time::sleep(Duration::from_secs(6)).await;
    log("kill -9 redis-server");
    redis.kill();
    tokio::time::sleep(Duration::from_secs(3)).await;
    redis.start_again();
    log("redis-server restarted (AOF replayed)");

    tokio::time::sleep(Duration::from_secs(8)).await;
    let pid = redis.pid().unwrap();
    log("SIGSTOP redis-server for 5 s");
    signal(pid, libc::SIGSTOP);
    tokio::time::sleep(Duration::from_secs(5)).await;
    signal(pid, libc::SIGCONT);
    log("SIGCONT redis-server");

    // The connection attacks on API B, with the load still running.
    tokio::time::sleep(Duration::from_secs(5)).await;
    log(&format!(
        "slowloris: {slow} connections from 127.0.0.4 for 40 s"
    ));
    let slowloris_task = tokio::spawn(slowloris(b_addr, slow, Duration::from_secs(40)));
    let flood_seconds = 25u64;
    let per_child = flood.div_ceil(2);
    let reopen = env_num("CHAOS_FLOOD_REOPEN", 0) == 1;
    log(&format!(
        "flood: {flood} idle connections from 127.0.0.1 (two processes) for {flood_seconds} s{}",
        if reopen {
            ", each closed one reopened at once"
        } else {
            ""
        }
    ));
    let flood_children: Vec<Child> = (0..2)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .env("CHAOS_FLOOD_CHILD", b_addr.to_string())
                .env("CHAOS_FLOOD_COUNT", per_child.to_string())
                .env("CHAOS_FLOOD_SECONDS", flood_seconds.to_string())
                .env("CHAOS_FLOOD_REOPEN", if reopen { "1" } else { "0" })
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("flood child")
        })
        .collect();
    // /healthz from another address while the flood is on.
    let probe = reqwest::Client::builder()
        .local_address(Some("127.0.0.2".parse().unwrap()))
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut lat = Vec::new();
    let mut probe_failures = 0u64;
    let probe_end = Instant::now() + Duration::from_secs(flood_seconds - 2);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let max_open_seen = AtomicU64::new(0);
    while Instant::now() < probe_end {
        let s = Instant::now();
        match probe.get(format!("http://{b_addr}/healthz")).send().await {
            Ok(r) if r.status() == 200 => lat.push(s.elapsed().as_secs_f64() * 1e3),
            _ => probe_failures += 1,
        }
        if let Ok(r) = probe.get(format!("http://{b_addr}/metrics")).send().await {
            if let Ok(text) = r.text().await {
                let open = text
                    .lines()
                    .find(|l| l.starts_with("horst_connections_open "))
                    .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
                    .unwrap_or(0);
                max_open_seen.fetch_max(open, Ordering::Relaxed);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut flood_lines = Vec::new();
    for mut c in flood_children {
        let mut out = String::new();
        if let Some(mut so) = c.stdout.take() {
            use std::io::Read;
            let _ = so.read_to_string(&mut out);
        }
        let _ = c.wait();
        flood_lines.push(parse_flood(out.trim()));
    }
    log("flood over");
    let slow_result = slowloris_task.await.unwrap();
    log("slowloris over; stopping the load");

    stop.store(true, Ordering::Relaxed);
    for t in load {
        let _ = t.await;
    }
    log("every call answered or given up; settling (lease + reap)");
    // Jobs still running on a worker that died are reaped after the lease (10 s).
    let settle_end = Instant::now() + Duration::from_secs(40);
    let records = loop {
        let records = all_jobs(&store).await;
        let open = records.values().filter(|r| !r.state.is_final()).count();
        if open == 0 || Instant::now() > settle_end {
            break records;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let figures_after = day_figures(store.clone()).await;

    // Figures.
    let t = tally.lock().unwrap();
    let told: HashSet<&String> = t.jobs.values().flatten().collect();
    let missing = told.iter().filter(|id| !records.contains_key(**id)).count();
    let not_final = records.values().filter(|r| !r.state.is_final()).count();
    let mut by_state: BTreeMap<String, u64> = BTreeMap::new();
    let mut failed_codes: BTreeMap<String, u64> = BTreeMap::new();
    for r in records.values() {
        *by_state.entry(r.state.as_str().to_string()).or_default() += 1;
        if let Some(f) = &r.failure {
            *failed_codes.entry(f.code.as_str().to_string()).or_default() += 1;
        }
    }
    // Seconds charged by claims that left no start of their own (a job claimed twice),
    // counted in claims of the shortest job: an upper bound of the claims (a longer job
    // claimed twice counts as more), which should be 0.
    let started_seconds: u64 = records
        .values()
        .filter(|r| r.started_at_ms.is_some())
        .map(|r| r.charged_seconds)
        .sum();
    let charged_seconds = figures_after.0.saturating_sub(figures_before.0);
    // Each job that ended counted once in the day's figures (a completion recorded twice
    // would count twice).
    let counted_finished = figures_after.1.saturating_sub(figures_before.1);
    let final_records = records.values().filter(|r| r.state.is_final()).count();
    let shortest = records
        .values()
        .map(|r| r.reserved_seconds)
        .filter(|s| *s > 0)
        .min()
        .unwrap_or(1);
    let extra_claims = charged_seconds
        .saturating_sub(started_seconds)
        .div_ceil(shortest);
    // A success the caller was told that Redis no longer holds (a completion lost with it).
    let contradicted = t
        .told_ok
        .iter()
        .filter(|k| {
            t.jobs.get(*k).is_none_or(|ids| {
                !ids.iter().any(|id| {
                    records
                        .get(id)
                        .is_some_and(|r| r.state == horst_queue::JobState::Succeeded)
                })
            })
        })
        .count();
    let keys_twice = t
        .jobs
        .values()
        .filter(|ids| {
            ids.iter()
                .filter(|id| records.get(*id).is_some_and(|r| r.started_at_ms.is_some()))
                .count()
                > 1
        })
        .count();
    let admitted = records.len() + missing;
    // The details behind a failed job, a "run twice" or a contradicted success, so each
    // figure can be explained.
    for (key, ids) in &t.jobs {
        let ran: Vec<&horst_queue::JobRecord> = ids
            .iter()
            .filter_map(|id| records.get(id))
            .filter(|r| r.started_at_ms.is_some())
            .collect();
        let contradicted = t.told_ok.contains(key)
            && !ran
                .iter()
                .any(|r| r.state == horst_queue::JobState::Succeeded);
        let failed = ids
            .iter()
            .filter_map(|id| records.get(id))
            .any(|r| r.state != horst_queue::JobState::Succeeded);
        if ran.len() > 1 || contradicted || failed {
            for r in ids.iter().filter_map(|id| records.get(id)) {
                println!(
                    "chaos: key {key} job {} state {} created {} started {:?} finished {:?} worker {:?} failure {:?}",
                    r.id,
                    r.state.as_str(),
                    r.created_at_ms,
                    r.started_at_ms,
                    r.finished_at_ms,
                    r.worker,
                    r.failure.as_ref().map(|f| &f.code)
                );
            }
        }
    }
    println!();
    println!(
        "jobs admitted {admitted}, succeeded {}, failed {} ({}), cancelled {}, lost {} (not final {not_final}, told but missing {missing}), run twice {} at most (charged {charged_seconds} s - started jobs' {started_seconds} s; keys with two started jobs {keys_twice})",
        by_state.get("succeeded").copied().unwrap_or(0),
        by_state.get("failed").copied().unwrap_or(0),
        fmt_map(&failed_codes),
        by_state.get("cancelled").copied().unwrap_or(0),
        not_final + missing,
        extra_claims + keys_twice as u64,
    );
    println!(
        "jobs ended {final_records}, counted among the day's finished {counted_finished} (each once: equal)"
    );
    println!(
        "calls {} (final answers: {}; gave up {}; told ok but not succeeded in Redis {contradicted}); answers that made the caller retry: {}",
        t.keys,
        fmt_map(&t.finals),
        t.gave_up,
        fmt_map(&t.retries)
    );
    let s = &slow_result;
    println!(
        "slowloris {slow} connections: refused at once {}, closed by the server {} (median {:.1} s, max {:.1} s after connect), still open after 40 s {}, could not connect {}",
        s.refused,
        s.closed_after.len(),
        percentile(&s.closed_after, 0.5),
        percentile(&s.closed_after, 1.0),
        s.still_open,
        s.connect_errors
    );
    let sum = |k: &str| {
        flood_lines
            .iter()
            .map(|m| m.get(k).copied().unwrap_or(0))
            .sum::<u64>()
    };
    lat.sort_by(f64::total_cmp);
    println!(
        "flood {flood} idle connections from 127.0.0.1: opened {}, closed by the server {}, connect errors {}; API B held at most {} connections in all; /healthz from 127.0.0.2 during the flood: {} probes, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, failed {probe_failures}",
        sum("opened"),
        sum("closed_by_server"),
        sum("connect_errors"),
        max_open_seen.load(Ordering::Relaxed),
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0),
    );
    drop(api_b);
    drop(api_a);
    drop(workers);
}

fn fmt_map(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn all_jobs(store: &horst_store::Store) -> HashMap<String, horst_queue::JobRecord> {
    let mut conn = store.conn();
    let pattern = store.key("job:*");
    let prefix = store.key("job:");
    let mut ids = Vec::new();
    let mut cursor = 0u64;
    loop {
        let Ok((next, batch)): Result<(u64, Vec<String>), _> = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
        else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        ids.extend(
            batch
                .into_iter()
                .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string)),
        );
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    let mut out = HashMap::new();
    for id in ids {
        if let Ok(Some(r)) = horst_queue::job_record(store, &id).await {
            out.insert(id, r);
        }
    }
    out
}
