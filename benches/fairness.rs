//! Fairness (docs/benchmarks.md, "Fairness"): ten accounts flood `playtest_map` with a level
//! the planner searches for its whole limit (20 s), while two other accounts send
//! `simulate_replay` one after another, against a real `horst up` (the API, and its worker
//! as a child process: 1 general slot, 1 referee slot) on a real redis-server.
//!
//! It runs twice on fresh Redis servers: with horst's lanes (the defaults), and as one FIFO
//! (`worker.referee_slots = 0`, `queue.referee_places = 0`: every job takes the one slot in
//! the order it waited) for comparison. For each it prints what the simulations' callers
//! waited (p50, p99, max) and were answered, what the playtests' callers were answered
//! (won/unresolved, `busy` with `retryAfterSeconds`, `timeout`), how long admitted playtests
//! waited to start, and whether accounts took turns (playtests that started before one
//! admitted earlier of another account: "overtakes").
//!
//! ```sh
//! cargo bench --bench fairness                      # release build
//! cargo bench --profile dev --bench fairness        # the dev build the tests use
//! FAIRNESS_SECONDS=120 cargo bench --bench fairness # a longer flood (default 90 s)
//! ```

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_testkit::RedisServer;
use serde_json::{json, Value};

#[allow(dead_code)] // each benchmark uses a part
mod common;
use common::*;

const LEVEL_MAP: &str = include_str!("../levels/01-erste-schritte.map");
const LEVEL_REPLAY: &str = include_str!("../levels/01-erste-schritte.replay.json");
/// A level the planner neither solves nor proves unsolvable: each playtest takes its limit.
const HARD: &str = include_str!("../tests/it/levels/undecided.map");
const FLOODERS: usize = 10;
const SIMULATORS: usize = 2;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let seconds = env_num("FAIRNESS_SECONDS", 90);
    let lanes = rt.block_on(scenario("lanes (default)", &[], seconds));
    let fifo = rt.block_on(scenario(
        "one FIFO",
        &[
            ("HORST_WORKER_REFEREE_SLOTS", "0"),
            ("HORST_QUEUE_REFEREE_PLACES", "0"),
        ],
        seconds,
    ));
    println!();
    println!("fairness: {FLOODERS} accounts flooding 20 s playtests, {SIMULATORS} sending simulations, {seconds} s, 1 general slot");
    println!("| measure | {} | {} |", lanes.name, fifo.name);
    println!("|---|---|---|");
    for (label, a, b) in lanes
        .rows()
        .into_iter()
        .zip(fifo.rows())
        .map(|((l, a), (_, b))| (l, a, b))
    {
        println!("| {label} | {a} | {b} |");
    }
}

struct Up {
    child: Child,
}

impl Drop for Up {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_up(redis: &str, data: &std::path::Path, extra: &[(&str, &str)]) -> (Up, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
    cmd.args(["up", "--listen", "127.0.0.1:0", "--redis", redis, "--data"])
        .arg(data)
        .env("HORST_LOG_LEVEL", "warn")
        .env("HORST_GATEWAY_MODE", "on")
        .env("HORST_GATEWAY_BURST_PER_IP_PER_MINUTE", "1000000")
        .env("HORST_GATEWAY_BURST_PER_ACCOUNT_PER_MINUTE", "1000000")
        .env("HORST_QUEUE_DAILY_SECONDS", "80000000")
        .env("HORST_QUOTAS_TRUST2_PLAYTESTS", "100000")
        .env("HORST_QUOTAS_TRUST2_SIMULATIONS", "100000")
        // One planner thread: the second core serves the API, the referee and Redis.
        .env("HORST_WORKER_THREADS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(
            std::fs::File::create(data.join("up.log"))
                .map(Stdio::from)
                .unwrap_or(Stdio::null()),
        );
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn horst up");
    let url = wait_listening(child.stdout.take().unwrap(), "horst up");
    (Up { child }, url)
}

/// One answer of a blocking tool call.
struct Call {
    /// `won`/`unresolved`/`ok` or the error code.
    answer: String,
    retry_after: Option<u64>,
    took: Duration,
}

async fn call(http: &reqwest::Client, url: &str, key: &str, tool: &str, args: Value) -> Call {
    let started = Instant::now();
    let (status, v) = post_mcp(http, url, key, tool_call(tool, args)).await;
    let took = started.elapsed();
    let result = &v["result"];
    let text = tool_text(result);
    if result["isError"] == false {
        return Call {
            answer: text["outcome"].as_str().unwrap_or("ok").to_string(),
            retry_after: None,
            took,
        };
    }
    let e = &text["error"];
    Call {
        answer: match e["code"].as_str() {
            Some(code) => code.to_string(),
            // No answer at all (0), or not a tool answer: the HTTP status.
            None => format!("http_{status}"),
        },
        retry_after: e["retryAfterSeconds"].as_u64(),
        took,
    }
}

#[derive(Default)]
struct Tally {
    /// Answers by kind of caller (`playtest`, `simulate`) and answer.
    answers: BTreeMap<(String, String), u64>,
    sim_ms: Vec<f64>,
    retry_after: Vec<u64>,
}

struct Report {
    name: String,
    tally: Tally,
    /// Admitted playtests: (account, admitted ms, started ms).
    starts: Vec<(String, u64, u64)>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

impl Report {
    fn count(&self, kind: &str, answer: &str) -> u64 {
        self.tally
            .answers
            .get(&(kind.to_string(), answer.to_string()))
            .copied()
            .unwrap_or(0)
    }

    fn answers(&self, kind: &str) -> String {
        let parts: Vec<String> = self
            .tally
            .answers
            .iter()
            .filter(|((k, _), _)| k == kind)
            .map(|((_, a), n)| format!("{a} {n}"))
            .collect();
        parts.join(", ")
    }

    fn rows(&self) -> Vec<(&'static str, String)> {
        let mut sims = self.tally.sim_ms.clone();
        sims.sort_by(f64::total_cmp);
        let mut waits: Vec<f64> = self
            .starts
            .iter()
            .map(|(_, admitted, started)| started.saturating_sub(*admitted) as f64 / 1000.0)
            .collect();
        waits.sort_by(f64::total_cmp);
        // Started before a playtest of another account that was admitted earlier.
        let mut overtakes = 0;
        for (a, admitted_a, started_a) in &self.starts {
            for (b, admitted_b, started_b) in &self.starts {
                if a != b && admitted_b < admitted_a && started_b > started_a {
                    overtakes += 1;
                }
            }
        }
        let mut per_account: BTreeMap<&str, u64> = BTreeMap::new();
        for (a, _, _) in &self.starts {
            *per_account.entry(a.as_str()).or_default() += 1;
        }
        let mut retry = self.tally.retry_after.clone();
        retry.sort_unstable();
        vec![
            (
                "simulations answered",
                format!("{} ({})", sims.len(), self.answers("simulate")),
            ),
            (
                "simulation wait p50 / p99 / max",
                format!(
                    "{:.0} / {:.0} / {:.0} ms",
                    percentile(&sims, 0.5),
                    percentile(&sims, 0.99),
                    sims.last().copied().unwrap_or(f64::NAN)
                ),
            ),
            ("playtest answers", self.answers("playtest")),
            (
                "playtests timed out while waiting",
                self.count("playtest", "timeout").to_string(),
            ),
            (
                "busy retryAfterSeconds min / max",
                match (retry.first(), retry.last()) {
                    (Some(a), Some(b)) => format!("{a} / {b} s"),
                    _ => "-".into(),
                },
            ),
            (
                "admitted playtests: start wait p50 / max",
                format!(
                    "{:.1} / {:.1} s",
                    percentile(&waits, 0.5),
                    waits.last().copied().unwrap_or(f64::NAN)
                ),
            ),
            (
                "accounts whose playtests started (of 10), starts per account",
                format!(
                    "{}, {}-{}",
                    per_account.len(),
                    per_account.values().min().copied().unwrap_or(0),
                    per_account.values().max().copied().unwrap_or(0),
                ),
            ),
            ("overtakes between accounts", overtakes.to_string()),
        ]
    }
}

async fn scenario(name: &str, extra: &[(&str, &str)], seconds: u64) -> Report {
    let redis = RedisServer::start();
    let data = tempfile::tempdir().expect("temp dir");
    let (up, url) = start_up(&redis.url(), data.path(), extra);
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .expect("store");
    let keys = agent_keys(&store, "acct", FLOODERS + SIMULATORS).await;
    // The worker announces its slots within 2 s of its start; admission needs them.
    tokio::time::sleep(Duration::from_secs(3)).await;
    eprintln!("fairness: {name}: flooding for {seconds} s");

    let tally = Arc::new(Mutex::new(Tally::default()));
    let end = Instant::now() + Duration::from_secs(seconds);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for (n, key) in keys.iter().cloned().enumerate() {
        let (http, url, tally) = (http.clone(), url.clone(), tally.clone());
        let replay = replay.clone();
        tasks.spawn(async move {
            let flooder = n < FLOODERS;
            for attempt in 0.. {
                if Instant::now() >= end {
                    return;
                }
                let idem = format!("a{n}-{attempt}");
                let c = if flooder {
                    call(
                        &http,
                        &url,
                        &key,
                        "playtest_map",
                        json!({"map": HARD, "seed": 1, "idempotencyKey": idem}),
                    )
                    .await
                } else {
                    call(
                        &http,
                        &url,
                        &key,
                        "simulate_replay",
                        json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem}),
                    )
                    .await
                };
                let kind = if flooder { "playtest" } else { "simulate" };
                let pause = {
                    let mut t = tally.lock().unwrap();
                    *t.answers
                        .entry((kind.into(), c.answer.clone()))
                        .or_default() += 1;
                    // A simulation's wait, when it was taken (a refusal is counted above).
                    if !flooder && c.answer != "busy" {
                        t.sim_ms.push(c.took.as_secs_f64() * 1000.0);
                    }
                    if let Some(r) = c.retry_after {
                        t.retry_after.push(r);
                    }
                    match (flooder, c.retry_after) {
                        // A flooder retries as soon as it may (as a well-behaved agent does).
                        (true, Some(r)) => Duration::from_secs(r),
                        (true, None) => Duration::from_millis(100),
                        (false, _) => Duration::from_millis(500),
                    }
                };
                tokio::time::sleep(pause.min(end.saturating_duration_since(Instant::now()))).await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}

    // Every playtest that started: who, when admitted, when started.
    let mut conn = store.conn();
    let ids: Vec<String> = redis::cmd("KEYS")
        .arg("horst:job:*")
        .query_async(&mut conn)
        .await
        .unwrap_or_default();
    let mut starts = Vec::new();
    for id in ids {
        // Either form of the record (the packed one's fields too).
        let f = horst_queue::job_fields(&mut conn, &id, &["kind", "account", "created", "started"])
            .await
            .unwrap_or_default();
        let at = |i: usize| f.get(i).cloned().flatten();
        let num = |i: usize| at(i).and_then(|v| v.parse::<u64>().ok());
        if let (Some(k), Some(a), Some(c), Some(s)) = (at(0), at(1), num(2), num(3)) {
            if k == "playtest" {
                starts.push((a, c, s));
            }
        }
    }
    drop(up);
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    Report {
        name: name.to_string(),
        tally,
        starts,
    }
}
