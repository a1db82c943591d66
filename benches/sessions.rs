//! Load benchmark of RCADIA sessions: many concurrent sessions (2 agents + a host each, all
//! long-polling) against one `horst api` process and 2 `horst worker` processes on one
//! redis-server. Reports the offered and achieved action rate, action-to-host delivery
//! latency (p50/p99), clock accuracy (lateness of strikes seen by the host), and the
//! load-independent cost of an action: HTTP requests, Redis commands and round trips, CPU
//! time per process, and (with `BENCH_CALLGRIND=1`) the API's instructions.
//!
//! The load is an **open loop per session**: an agent acts a fixed think time (uniform in
//! `[BENCH_THINK_MIN_MS, BENCH_THINK_MAX_MS]`) after its turn was published, measured from
//! the publish, not from when the agent saw its turn. A slow server therefore does not slow
//! the offered rate down (an agent that sees its turn late acts at once and is counted as a
//! late start); a closed loop (think 0) measures queueing, not latency.
//!
//! ```sh
//! cargo bench --bench sessions                      # 1000 sessions, think 0.5-1 s, 20 s
//! BENCH_SESSIONS=200 BENCH_SECONDS=10 cargo bench --bench sessions
//! BENCH_THINK_MIN_MS=0 BENCH_THINK_MAX_MS=0 cargo bench --bench sessions   # closed loop
//! BENCH_SESSIONS=20 BENCH_CLOCK_SESSIONS=0 BENCH_CALLGRIND=1 cargo bench --bench sessions
//! BENCH_CALLGRIND_KEEP=/tmp/cg-api BENCH_CALLGRIND=1 ...   # and keep the profile for callgrind_annotate
//! BENCH_CLUSTER=1 cargo bench --bench sessions      # on a Redis Cluster of 3 primaries
//! BENCH_APIS=2 BENCH_API_THREADS=1 cargo bench --bench sessions   # two API processes, one thread each
//! BENCH_APIS=2 BENCH_SPLIT=1 cargo bench --bench sessions         # ... a session's agents on both
//! ```
//!
//! `BENCH_APIS=N` runs N API processes; a session's host and agents all call its host's process
//! (session affinity, what a load balancer hashing on the session id gives), or with
//! `BENCH_SPLIT=1` one of its agents calls another (what one without affinity gives).
//! `BENCH_API_THREADS=N` sets the API processes' runtime threads (`TOKIO_WORKER_THREADS`, which
//! `server.runtime_threads` = 0, the default, follows; so it also works with builds older than
//! that setting, as when the `horst` binary is swapped between runs).
//!
//! `BENCH_CLUSTER=1` runs the same processes on a Redis Cluster (`horst_testkit::RedisCluster`:
//! three primaries with a replica each, AOF off like the one server) through
//! `HORST_REDIS_CLUSTER`; Redis's figures are then summed over the primaries, and the Redis
//! CPU per action is also printed per primary (how evenly the sessions' buckets spread).

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use horst_sessions::wire::{
    AgentSnapshot, CreatedResponse, EntryType, PendingEntry, PublicView, SystemEvent,
};
use horst_sessions::Status;
use horst_testkit::{RedisCluster, RedisServer};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;
use tokio::io::BufReader;
use tokio::net::TcpStream;

#[allow(dead_code)] // each benchmark uses a part
mod common;
use common::*;

const BRIDGE: &str = "/api/v1/agent/bridge/sessions";
const AGENT: &str = "/api/v1/agent/sessions";

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// A cheap pseudo-random number in `[0, n)` (spreads think times): the workspace's
/// SplitMix64 on a process-wide counter mixed with the clock.
fn rand_below(n: u64) -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let state = STATE.fetch_add(1, Ordering::Relaxed) ^ now_us();
    let x = horst_engine::SplitMix64::from_state(state).next_u64();
    if n == 0 {
        0
    } else {
        x % n
    }
}

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Redis the benchmark runs on: one server, or a cluster (`BENCH_CLUSTER=1`).
enum Backend {
    One(Box<RedisServer>),
    Cluster(RedisCluster),
}

impl Backend {
    /// The primaries: URL and redis-server pid of each.
    fn primaries(&self) -> Vec<(String, Option<u32>)> {
        match self {
            Backend::One(r) => vec![(r.url(), r.pid())],
            Backend::Cluster(c) => {
                let ports = c.primary_ports();
                c.servers
                    .iter()
                    .filter(|s| ports.contains(&s.port()))
                    .map(|s| (s.url(), s.pid()))
                    .collect()
            }
        }
    }

    /// The replicas' pids (none on one server).
    fn replica_pids(&self) -> Vec<u32> {
        match self {
            Backend::One(_) => Vec::new(),
            Backend::Cluster(c) => {
                let ports = c.primary_ports();
                c.servers
                    .iter()
                    .filter(|s| !ports.contains(&s.port()))
                    .filter_map(|s| s.pid())
                    .collect()
            }
        }
    }

    /// How horst processes are pointed at it: arguments and environment.
    fn horst_redis(&self) -> (Vec<String>, Vec<(String, String)>) {
        match self {
            Backend::One(r) => (vec!["--redis".into(), r.url()], Vec::new()),
            Backend::Cluster(c) => (
                Vec::new(),
                vec![("HORST_REDIS_CLUSTER".into(), c.urls().join(","))],
            ),
        }
    }

    /// The configuration of a store on it (one server: the URL passed with it).
    fn config(&self) -> horst_config::RedisConfig {
        let mut config = horst_config::RedisConfig::default();
        if let Backend::Cluster(c) = self {
            config.cluster = c.urls();
        }
        config
    }
}

fn horst(wrapper: &[String], args: &[&str], redis: &(Vec<String>, Vec<(String, String)>)) -> Child {
    let bin = env!("CARGO_BIN_EXE_horst");
    let mut cmd = if wrapper.is_empty() {
        Command::new(bin)
    } else {
        let mut c = Command::new(&wrapper[0]);
        c.args(&wrapper[1..]).arg(bin);
        c
    };
    if let Ok(t) = std::env::var("BENCH_API_THREADS") {
        if args.first() == Some(&"api") {
            cmd.env("TOKIO_WORKER_THREADS", t);
        }
    }
    cmd.args(args)
        .args(&redis.0)
        .envs(redis.1.iter().map(|(k, v)| (k, v)))
        .env("HORST_LOG_LEVEL", "warn")
        // Every simulated agent and host is on 127.0.0.1: thousands of long-polls from one
        // address, far over the per-address connection cap's default (256), which is meant
        // for real clients. The benchmark lifts it (and the global cap) and says so.
        .env("HORST_SERVER_MAX_CONNECTIONS_PER_ADDRESS", "100000")
        .env("HORST_SERVER_MAX_CONNECTIONS", "100000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd.spawn().expect("spawn horst")
}

/// One simulated participant's HTTP client: a single keep-alive HTTP/1.1 connection of its
/// own (a participant makes one call at a time), requests written and answers read by hand.
/// The clients share the two cores with the server, so they are kept cheap: a general client
/// (reqwest: URL parsing, a connection pool, `serde_json::Value` bodies parsed twice) cost
/// about as much CPU per action as the server. A clone has its own connection.
struct C {
    /// `127.0.0.1:<port>`
    addr: String,
    token: String,
    conn: Option<BufReader<TcpStream>>,
}

impl Clone for C {
    fn clone(&self) -> C {
        C {
            addr: self.addr.clone(),
            token: self.token.clone(),
            conn: None,
        }
    }
}

impl C {
    /// The status and body of one request; `None` if it failed (the connection is dropped
    /// and the next call opens another).
    async fn call(&mut self, post: bool, path: &str, body: Option<&str>) -> Option<(u16, Vec<u8>)> {
        let answer = tokio::time::timeout(Duration::from_secs(40), self.exchange(post, path, body));
        match answer.await {
            Ok(Ok(r)) => Some(r),
            _ => {
                self.conn = None;
                None
            }
        }
    }

    async fn exchange(
        &mut self,
        post: bool,
        path: &str,
        body: Option<&str>,
    ) -> std::io::Result<(u16, Vec<u8>)> {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        if self.conn.is_none() {
            let stream = TcpStream::connect(&self.addr).await?;
            stream.set_nodelay(true)?;
            self.conn = Some(BufReader::with_capacity(16 * 1024, stream));
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(bad("no connection"));
        };
        let body = body.unwrap_or("");
        let mut req = format!(
            "{} {path} HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            if post { "POST" } else { "GET" },
            self.addr,
            self.token,
            body.len()
        );
        req.push_str(body);
        conn.get_mut().write_all(req.as_bytes()).await?;
        let mut line = String::new();
        let (mut status, mut length, mut chunked, mut close) = (0u16, None, false, false);
        loop {
            line.clear();
            if conn.read_line(&mut line).await? == 0 {
                return Err(bad("closed before the answer"));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if status == 0 {
                status = l
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad("no status"))?;
                continue;
            }
            let Some((name, value)) = l.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                close = value.eq_ignore_ascii_case("close");
            }
        }
        let mut out = Vec::new();
        if chunked {
            loop {
                line.clear();
                conn.read_line(&mut line).await?;
                let size = line.trim().split(';').next().unwrap_or("");
                let n = usize::from_str_radix(size, 16).map_err(|_| bad("chunk size"))?;
                // The chunk and its CRLF (after the last, empty one: the final CRLF).
                let mut chunk = vec![0; n + 2];
                conn.read_exact(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = length {
            out.resize(n, 0);
            conn.read_exact(&mut out).await?;
        } else {
            conn.read_to_end(&mut out).await?;
            close = true;
        }
        if close {
            self.conn = None;
        }
        Ok((status, out))
    }

    /// [`C::call`] with the body read as `T` (`None`: not of that shape).
    async fn call_as<T: DeserializeOwned>(
        &mut self,
        post: bool,
        path: &str,
        body: Option<&str>,
    ) -> Option<(u16, Option<T>)> {
        let (st, v) = self.call(post, path, body).await?;
        Some((st, serde_json::from_slice(&v).ok()))
    }
}

/// What an agent reads of its `/state` (serde skips the rest of the snapshot).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TurnView {
    status: Status,
    your_turn: bool,
    turn: u64,
}

/// What a host reads of its `pending-actions`.
#[derive(Deserialize)]
struct PendingView {
    actions: Vec<PendingEntry>,
    status: Status,
}

/// Unix microseconds of `2026-10-07T19:00:00.000Z` (the contract's deadline format).
fn parse_iso_us(s: &str) -> Option<u64> {
    horst_dates::parse_rfc3339_ms(s).map(|ms| ms * 1000)
}

fn percentile(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// CPU time (user + system) a process has used so far, in milliseconds.
fn cpu_ms(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // Fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // SAFETY: sysconf only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    (ticks(11) + ticks(12)) * 1000 / hz
}

/// One section of a server's `INFO` (empty if it cannot be read).
async fn redis_info(url: &str, section: &str) -> String {
    let Ok(client) = redis::Client::open(url) else {
        return String::new();
    };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
        return String::new();
    };
    redis::cmd("INFO")
        .arg(section)
        .query_async(&mut conn)
        .await
        .unwrap_or_default()
}

/// Redis commands executed so far on one server, by command (INFO commandstats): calls and
/// the server's own time for them (µs).
async fn redis_commands(url: &str) -> HashMap<String, (u64, u64)> {
    let field = |rest: &str, name: &str| -> Option<u64> {
        rest.split(',')
            .find_map(|f| f.strip_prefix(name))?
            .parse()
            .ok()
    };
    redis_info(url, "commandstats")
        .await
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            Some((
                name.to_string(),
                (field(rest, "calls=")?, field(rest, "usec=")?),
            ))
        })
        .collect()
}

/// Redis's `used_memory` (INFO memory) summed over the primaries, bytes.
async fn redis_memory(urls: &[String]) -> u64 {
    let mut sum = 0;
    for url in urls {
        sum += redis_info(url, "memory")
            .await
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    sum
}

/// Sum of every sample of a metric family on the API's `/metrics`.
/// The sum of a metric's series on the API's `/metrics`. At saturation a scrape can fail (the
/// API is busy with the benchmark's thousands of connections): it is tried again a few times,
/// and `NaN` (printed as such) stands for a figure that could not be read, never a zero that
/// would turn into a negative count per action.
async fn metric_sum(http: &reqwest::Client, base: &str, name: &str) -> f64 {
    for _ in 0..5 {
        let text = match http.get(format!("{base}/metrics")).send().await {
            Ok(r) if r.status().is_success() => r.text().await.ok(),
            _ => None,
        };
        if let Some(text) = text {
            return text
                .lines()
                .filter(|l| {
                    l.starts_with(name)
                        && matches!(l.as_bytes().get(name.len()), Some(b' ') | Some(b'{'))
                })
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    f64::NAN
}

/// Each series of a metric on the API's `/metrics` by its one label's value (`name{l="v"}`);
/// empty when it could not be read.
async fn metric_by_label(
    http: &reqwest::Client,
    base: &str,
    name: &str,
) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(r) = http.get(format!("{base}/metrics")).send().await else {
        return out;
    };
    let Ok(text) = r.text().await else {
        return out;
    };
    for l in text.lines() {
        let Some(rest) = l.strip_prefix(name).and_then(|r| r.strip_prefix('{')) else {
            continue;
        };
        let Some((labels, value)) = rest.split_once("} ") else {
            continue;
        };
        let label = labels.split('"').nth(1).unwrap_or(labels).to_string();
        if let Ok(v) = value.parse::<f64>() {
            *out.entry(label).or_default() += v;
        }
    }
    out
}

/// What the measurement window's start and end read.
struct Probe {
    at: Instant,
    actions: u64,
    cpu: Vec<u64>,
    /// Each primary's commandstats.
    redis: Vec<HashMap<String, (u64, u64)>>,
    http_requests: f64,
    round_trips: f64,
    fresh_reads: f64,
    /// `horst_session_whole_reads_total` by cause.
    whole_reads: std::collections::BTreeMap<String, f64>,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo test --all-targets` runs bench binaries too (without `--bench`): stay quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("sessions benchmark: run it with `cargo bench --bench sessions`");
        return;
    }
    let sessions = env_num("BENCH_SESSIONS", 1000) as usize;
    let seconds = env_num("BENCH_SECONDS", 20);
    let clock_sessions = env_num("BENCH_CLOCK_SESSIONS", 100) as usize;
    let think_min = env_num("BENCH_THINK_MIN_MS", 500);
    let think_max = env_num("BENCH_THINK_MAX_MS", 1000).max(think_min);
    let callgrind = env_num("BENCH_CALLGRIND", 0) == 1;
    let cluster = env_num("BENCH_CLUSTER", 0) == 1;
    let backend = if cluster {
        Backend::Cluster(RedisCluster::start_with(|o| o.appendonly = false))
    } else {
        Backend::One(Box::new(RedisServer::start_with(|o| o.appendonly = false)))
    };
    let primaries = backend.primaries();
    let urls: Vec<String> = primaries.iter().map(|(u, _)| u.clone()).collect();
    let horst_redis = backend.horst_redis();
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap().to_string();
    let cg_dir = tempfile::tempdir().unwrap();
    let wrapper: Vec<String> = if callgrind {
        vec![
            "valgrind".into(),
            "--tool=callgrind".into(),
            format!("--callgrind-out-file={}/cg.out", cg_dir.path().display()),
        ]
    } else {
        Vec::new()
    };

    let mut api = horst(
        &wrapper,
        &["api", "--listen", "127.0.0.1:0", "--data", &d],
        &horst_redis,
    );
    let api_pid = api.id();
    let base = wait_listening(api.stdout.take().unwrap(), "horst api");
    let _api = Proc(api);
    // More API processes (`BENCH_APIS`): each session's participants are spread over them,
    // all on its host's process, or (`BENCH_SPLIT=1`) one agent on another process.
    let mut extra_apis = Vec::new();
    let mut addrs = vec![base.trim_start_matches("http://").to_string()];
    let split = env_num("BENCH_SPLIT", 0) as usize;
    for _ in 1..env_num("BENCH_APIS", 1) {
        let mut a = horst(
            &wrapper,
            &["api", "--listen", "127.0.0.1:0", "--data", &d],
            &horst_redis,
        );
        let b = wait_listening(a.stdout.take().unwrap(), "horst api");
        addrs.push(b.trim_start_matches("http://").to_string());
        extra_apis.push(Proc(a));
    }
    let workers: Vec<Proc> = (0..2)
        .map(|_| Proc(horst(&[], &["worker", "--data", &d], &horst_redis)))
        .collect();
    let mut pids = vec![api_pid];
    pids.extend(workers.iter().map(|w| w.0.id()));
    pids.extend(primaries.iter().filter_map(|(_, pid)| *pid));
    let replicas = backend.replica_pids();
    pids.extend(&replicas);
    pids.extend(extra_apis.iter().map(|a| a.0.id()));

    let store = horst_store::Store::open(&backend.config(), &urls[0])
        .await
        .unwrap();
    let auth = horst_identity::auth::Auth::new(store, &std::path::Path::new(&d).join("jwt.key"))
        .await
        .unwrap();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(10_000)
        .build()
        .unwrap();
    let mk = {
        let addrs = addrs.clone();
        move |token: String, i: usize| C {
            addr: addrs[i % addrs.len()].clone(),
            token,
            conn: None,
        }
    };
    let host = mk(
        auth.create_token(&["host".into()], Some("bench-host"))
            .await
            .unwrap()
            .0,
        0,
    );

    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let actions = Arc::new(AtomicU64::new(0));
    let late_starts = Arc::new(AtomicU64::new(0));
    let delivery = Arc::new(Mutex::new(Vec::<u64>::new()));
    let lateness = Arc::new(Mutex::new(Vec::<u64>::new()));
    let mut tasks = tokio::task::JoinSet::new();

    let mean_think_s = (think_min + think_max) as f64 / 2000.0;
    println!(
        "sessions: {sessions} playing + {clock_sessions} clock sessions, {seconds} s, think {think_min}-{think_max} ms after the turn's publish, API {base}{}, Redis: {}",
        if callgrind { " (under callgrind)" } else { "" },
        if cluster {
            format!("a cluster of {} primaries with a replica each", primaries.len())
        } else {
            "one server".into()
        }
    );
    // Phase 1: every table is created and seated (64 at a time) before anyone plays.
    let setup = Instant::now();
    let memory_before = redis_memory(&urls).await;
    let mut tables = Vec::new();
    let total = sessions + clock_sessions;
    let mut next = 0;
    while next < total {
        let mut batch = tokio::task::JoinSet::new();
        for i in next..(next + 64).min(total) {
            let (mut host, auth, mk) = (host.clone(), auth.clone(), mk.clone());
            host.addr = addrs[i % addrs.len()].clone();
            batch.spawn(async move {
                let clocked = i >= sessions;
                // Clock sessions: a 1 s turn clock whose strikes never run out, so every
                // clock session yields one strike a second for the whole run.
                let config = json!({
                    "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0",
                    "gameType": "bench", "turnTimeout": if clocked { 1 } else { 0 },
                    "maxTurnTimeouts": 100_000
                });
                let (_, v) = host
                    .call_as::<CreatedResponse>(
                        true,
                        BRIDGE,
                        Some(&json!({ "config": config, "gameId": "bench" }).to_string()),
                    )
                    .await
                    .expect("create");
                let id = v.expect("a created session").session_id;
                let mut agents = Vec::new();
                let mut pids = Vec::new();
                for k in 0..2 {
                    let mut a = mk(
                        auth.create_token(&["play".into()], Some(&format!("a{i}-{k}")))
                            .await
                            .unwrap()
                            .0,
                        i + k * split,
                    );
                    let (_, s) = a
                        .call_as::<AgentSnapshot>(true, &format!("{AGENT}/{id}/join"), Some("{}"))
                        .await
                        .expect("join");
                    pids.push(s.expect("a snapshot").player_id);
                    agents.push(a);
                }
                (clocked, id, pids, agents, host)
            });
        }
        while let Some(t) = batch.join_next().await {
            tables.push(t.unwrap());
        }
        next += 64;
    }
    println!(
        "{} tables set up in {:.1} s",
        tables.len(),
        setup.elapsed().as_secs_f64()
    );
    // Phase 2: every host and agent long-polls.
    for (clocked, id, pids, agents, table_host) in tables {
        // When the host last started publishing a turn (client clock, µs): the agents' think
        // time counts from here, so server delays do not lower the offered rate.
        let turn_at = Arc::new(AtomicU64::new(0));
        let (mut h, idh, pidsh, stop_h, delivery_h, lateness_h, measuring_h, turn_at_h) = (
            table_host,
            id.clone(),
            pids.clone(),
            stop.clone(),
            delivery.clone(),
            lateness.clone(),
            measuring.clone(),
            turn_at.clone(),
        );
        tasks.spawn(async move {
            let mut after = 0u64;
            let mut on = 0usize;
            // Clock sessions: when the current turn's clock started (server clock, µs).
            let mut clock_start = None;
            let publish = |on: usize| {
                format!(
                    r#"{{"ops":[{{"op":"state","state":{{"on":{on}}}}},{{"op":"legal_actions","playerId":"{}","actions":[{{"type":"move"}}]}}]}}"#,
                    pidsh[on]
                )
            };
            let (ops_path, public_path) = (
                format!("{BRIDGE}/{idh}/ops"),
                format!("{AGENT}/{idh}/public"),
            );
            while !stop_h.load(Ordering::Relaxed) {
                let Some((200, Some(p))) = h
                    .call_as::<PendingView>(
                        false,
                        &format!("{BRIDGE}/{idh}/pending-actions?after={after}&wait=25"),
                        None,
                    )
                    .await
                else {
                    continue;
                };
                let got = now_us();
                let mut next = false;
                for e in &p.actions {
                    after = after.max(e.seq);
                    match (e.kind, e.event) {
                        (EntryType::System, Some(SystemEvent::GameStart)) => next = true,
                        (EntryType::Action, _) => {
                            if let Some(t) = e.action.as_ref().and_then(|a| a["t"].as_u64()) {
                                if measuring_h.load(Ordering::Relaxed) {
                                    delivery_h.lock().unwrap().push(got.saturating_sub(t));
                                }
                            }
                            on = 1 - on;
                            next = true;
                        }
                        (EntryType::Timeout, _) => {
                            // Strike k is due k turn timeouts (1 s) after the clock started.
                            if let (Some(t0), Some(k)) = (clock_start, e.strike.map(u64::from)) {
                                if measuring_h.load(Ordering::Relaxed) {
                                    let due = t0 + k * 1_000_000;
                                    lateness_h.lock().unwrap().push(got.saturating_sub(due));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                if p.status == Status::Finished {
                    return;
                }
                if next {
                    if clocked {
                        // Spread the clock sessions' deadlines over the second.
                        tokio::time::sleep(Duration::from_millis(rand_below(1000))).await;
                    }
                    turn_at_h.store(now_us(), Ordering::SeqCst);
                    h.call(true, &ops_path, Some(&publish(on))).await;
                    if clocked {
                        // The turn's deadline as the server set it.
                        if let Some((200, Some(v))) = h
                            .call_as::<PublicView>(false, &public_path, None)
                            .await
                        {
                            clock_start = v
                                .deadline
                                .as_deref()
                                .and_then(parse_iso_us)
                                .map(|d| d - 1_000_000);
                        }
                    }
                }
            }
        });
        if clocked {
            continue; // its agents never act: the clock strikes them every second
        }
        for mut a in agents {
            let (idc, stop_a, actions_a, late_a, turn_at_a) = (
                id.clone(),
                stop.clone(),
                actions.clone(),
                late_starts.clone(),
                turn_at.clone(),
            );
            tasks.spawn(async move {
                let (state_path, action_path) = (
                    format!("{AGENT}/{idc}/state?wait=25"),
                    format!("{AGENT}/{idc}/action"),
                );
                while !stop_a.load(Ordering::Relaxed) {
                    let Some((200, Some(s))) =
                        a.call_as::<TurnView>(false, &state_path, None).await
                    else {
                        continue;
                    };
                    if s.status == Status::Finished {
                        return;
                    }
                    if s.your_turn {
                        let think = think_min + rand_below(think_max - think_min + 1);
                        let act_at = turn_at_a.load(Ordering::SeqCst) + think * 1000;
                        let now = now_us();
                        if act_at > now {
                            tokio::time::sleep(Duration::from_micros(act_at - now)).await;
                        } else if think > 0 {
                            late_a.fetch_add(1, Ordering::Relaxed);
                        }
                        let turn = s.turn;
                        let body = format!(
                            r#"{{"action":{{"type":"move","t":{}}},"turn":{turn}}}"#,
                            now_us()
                        );
                        if let Some((200, _)) = a.call(true, &action_path, Some(&body)).await {
                            actions_a.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    }
    let bases: Vec<String> = addrs.iter().map(|a| format!("http://{a}")).collect();
    let probe = |http: reqwest::Client, bases: Vec<String>, urls: Vec<String>, pids: Vec<u32>| {
        let actions = actions.clone();
        async move {
            let mut redis = Vec::new();
            for url in &urls {
                redis.push(redis_commands(url).await);
            }
            let (mut http_requests, mut round_trips, mut fresh_reads) = (0.0, 0.0, 0.0);
            let mut whole_reads = std::collections::BTreeMap::new();
            for base in &bases {
                http_requests += metric_sum(&http, base, "horst_http_requests_total").await;
                round_trips +=
                    metric_sum(&http, base, "horst_session_redis_round_trips_total").await;
                fresh_reads += metric_sum(&http, base, "horst_session_fresh_reads_total").await;
                for (cause, n) in
                    metric_by_label(&http, base, "horst_session_whole_reads_total").await
                {
                    *whole_reads.entry(cause).or_insert(0.0) += n;
                }
            }
            Probe {
                at: Instant::now(),
                actions: actions.load(Ordering::Relaxed),
                cpu: pids.iter().map(|p| cpu_ms(*p)).collect(),
                redis,
                http_requests,
                round_trips,
                fresh_reads,
                whole_reads,
            }
        }
    };
    let cg = |what: &str| {
        if callgrind {
            let _ = Command::new("callgrind_control")
                .arg(what)
                .arg(api_pid.to_string())
                .stdout(Stdio::null())
                .status();
        }
    };
    // Let every host see its game_start and the think times settle before measuring.
    tokio::time::sleep(Duration::from_millis(2000 + think_max)).await;
    let memory_playing = redis_memory(&urls).await;
    let clients0 = cpu_ms(std::process::id());
    let p0 = probe(http.clone(), bases.clone(), urls.clone(), pids.clone()).await;
    // The instructions are counted between the probes' `/metrics` scrapes, not over them: a
    // scrape costs a fixed amount a run (about 15 M instructions), which divided by the
    // run's actions made runs of different rates differ (fourteenth round).
    cg("--zero");
    let cg_actions0 = actions.load(Ordering::Relaxed);
    measuring.store(true, Ordering::Relaxed);
    let late0 = late_starts.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    measuring.store(false, Ordering::Relaxed);
    let cg_actions = actions.load(Ordering::Relaxed) - cg_actions0;
    cg("--dump");
    let p1 = probe(http.clone(), bases.clone(), urls.clone(), pids.clone()).await;
    let clients = cpu_ms(std::process::id()) - clients0;
    let memory_after = redis_memory(&urls).await;
    let late = late_starts.load(Ordering::Relaxed) - late0;
    stop.store(true, Ordering::Relaxed);

    let n = p1.actions - p0.actions;
    let elapsed = (p1.at - p0.at).as_secs_f64();
    let per = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    let mut d = delivery.lock().unwrap().clone();
    let mut l = lateness.lock().unwrap().clone();
    if think_max > 0 {
        println!(
            "offered: ~{:.0} actions/s (one action per session every ~{mean_think_s:.2} s of think time plus the server's turn-around)",
            sessions as f64 / mean_think_s
        );
    }
    println!(
        "actions/s: {:.0} ({n} actions in {elapsed:.1} s); late starts (agent saw its turn after its think time): {:.1}%",
        n as f64 / elapsed,
        per(late as f64) * 100.0
    );
    println!(
        "action-to-host delivery: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} samples)",
        percentile(&mut d, 0.5) as f64 / 1000.0,
        percentile(&mut d, 0.99) as f64 / 1000.0,
        percentile(&mut d, 1.0) as f64 / 1000.0,
        d.len()
    );
    println!(
        "clock lateness (strike seen by the host after its deadline): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} samples)",
        percentile(&mut l, 0.5) as f64 / 1000.0,
        percentile(&mut l, 0.99) as f64 / 1000.0,
        percentile(&mut l, 1.0) as f64 / 1000.0,
        l.len()
    );
    // Per action: everything the window did (clock sessions included) over the actions,
    // summed over the primaries; and each primary's own time for its commands.
    let mut by_command: HashMap<String, u64> = HashMap::new();
    let mut usec_by_primary = Vec::new();
    for (after, before) in p1.redis.iter().zip(&p0.redis) {
        let mut usec = 0;
        for (k, (calls, us)) in after {
            let (calls0, us0) = before.get(k).copied().unwrap_or((0, 0));
            *by_command.entry(k.clone()).or_default() += calls - calls0;
            usec += us - us0;
        }
        usec_by_primary.push(usec);
    }
    let mut cmds: Vec<(String, u64)> = by_command.into_iter().filter(|(_, v)| *v > 0).collect();
    cmds.sort_by_key(|c| std::cmp::Reverse(c.1));
    let total_cmds: u64 = cmds.iter().map(|(_, v)| v).sum();
    println!(
        "per action: {:.1} HTTP requests, {:.1} Redis commands, {:.1} session-layer Redis round trips (API process), {:.1} reads from the vouched-for cache",
        per(p1.http_requests - p0.http_requests),
        per(total_cmds as f64),
        per(p1.round_trips - p0.round_trips),
        per(p1.fresh_reads - p0.fresh_reads),
    );
    let whole: Vec<(String, f64)> = p1
        .whole_reads
        .iter()
        .map(|(cause, n)| {
            (
                cause.clone(),
                n - p0.whole_reads.get(cause).copied().unwrap_or(0.0),
            )
        })
        .collect();
    println!(
        "  whole-record reads per action (API process): {:.3}; by cause: {}",
        per(whole.iter().map(|(_, n)| n).sum()),
        whole
            .iter()
            .filter(|(_, n)| *n > 0.0)
            .map(|(cause, n)| format!("{cause} {:.3}", per(*n)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  Redis commands per action: {}",
        cmds.iter()
            .take(10)
            .map(|(k, v)| format!("{k} {:.2}", per(*v as f64)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let usec_total: u64 = usec_by_primary.iter().sum();
    let busiest = usec_by_primary.iter().copied().max().unwrap_or(0);
    println!(
        "  Redis CPU per action (commandstats, the servers' own time, background polls included): {:.1} µs in all; by primary {}; the busiest primary does {:.0}% of it (with Redis the limit, these primaries carry {:.1}x what the busiest alone would)",
        per(usec_total as f64),
        usec_by_primary
            .iter()
            .map(|u| format!("{:.1}", per(*u as f64)))
            .collect::<Vec<_>>()
            .join(" / "),
        if usec_total == 0 { 0.0 } else { busiest as f64 * 100.0 / usec_total as f64 },
        if busiest == 0 { 0.0 } else { usec_total as f64 / busiest as f64 },
    );
    let mut names = vec!["api".to_string(), "worker 1".into(), "worker 2".into()];
    names.extend((1..=primaries.len()).map(|i| format!("redis primary {i}")));
    names.extend((1..=replicas.len()).map(|i| format!("redis replica {i}")));
    names.extend((2..=extra_apis.len() + 1).map(|i| format!("api {i}")));
    let cpu: Vec<String> = p1
        .cpu
        .iter()
        .zip(&p0.cpu)
        .zip(names)
        .map(|((b, a), name)| format!("{name} {:.3}", per((b - a) as f64)))
        .collect();
    let total_cpu: u64 = p1.cpu.iter().zip(&p0.cpu).map(|(b, a)| b - a).sum();
    println!(
        "  CPU ms per action: {} (total {:.3}; the benchmark's own clients not included)",
        cpu.join(", "),
        per(total_cpu as f64)
    );
    println!(
        "  the benchmark's own clients: {:.3} CPU ms per action",
        per(clients as f64)
    );
    let per_session = |m: u64| m.saturating_sub(memory_before) as f64 / total.max(1) as f64;
    println!(
        "Redis memory per session (record, event log, index entries; tokens and the delayed set included): {:.0} bytes once seated and started, {:.0} bytes at the end",
        per_session(memory_playing),
        per_session(memory_after)
    );
    if callgrind {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut ir = 0u64;
        // `BENCH_CALLGRIND_KEEP=<dir>`: keep the profile for `callgrind_annotate`.
        let keep = std::env::var("BENCH_CALLGRIND_KEEP").unwrap_or_default();
        for entry in std::fs::read_dir(cg_dir.path()).unwrap().flatten() {
            if !keep.is_empty() {
                let _ = std::fs::create_dir_all(&keep);
                let _ = std::fs::copy(
                    entry.path(),
                    std::path::Path::new(&keep).join(entry.file_name()),
                );
            }
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            for line in text.lines() {
                if let Some(v) = line
                    .strip_prefix("totals: ")
                    .or_else(|| line.strip_prefix("summary: "))
                {
                    ir = ir.max(v.trim().parse().unwrap_or(0));
                }
            }
        }
        println!(
            "  API instructions per action (callgrind, whole process, the benchmark's /metrics scrapes left out): {:.0} k ({cg_actions} actions)",
            ir as f64 / cg_actions.max(1) as f64 / 1000.0
        );
    }
    tasks.abort_all();
}
