//! Load benchmark of RCADIA sessions: many concurrent sessions (2 agents + a host each, all
//! long-polling) against one `horst api` process and 2 `horst worker` processes on one
//! redis-server. Reports actions/s, action-to-host delivery latency (p50/p99) and clock
//! accuracy (p99 lateness of a strike seen by the host).
//!
//! ```sh
//! cargo bench --bench sessions                      # 1000 sessions, 20 s
//! BENCH_SESSIONS=200 BENCH_SECONDS=10 BENCH_THINK_MS=500 cargo bench --bench sessions
//! ```

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use horst_testkit::RedisServer;
use serde_json::{json, Value};

const BRIDGE: &str = "/api/v1/agent/bridge/sessions";
const AGENT: &str = "/api/v1/agent/sessions";

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn horst(args: &[&str]) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
    cmd.args(args)
        .env("HORST_LOG_LEVEL", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd.spawn().expect("spawn horst")
}

#[derive(Clone)]
struct C {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl C {
    async fn call(&self, post: bool, path: &str, body: Option<Value>) -> Option<(u16, Value)> {
        let url = format!("{}{}", self.base, path);
        let mut req = if post {
            self.http.post(url)
        } else {
            self.http.get(url)
        };
        req = req
            .bearer_auth(&self.token)
            .timeout(Duration::from_secs(40));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.ok()?;
        let st = r.status().as_u16();
        Some((st, r.json().await.unwrap_or(Value::Null)))
    }
}

/// Unix microseconds of `2026-10-07T19:00:00.000Z` (the contract's deadline format).
fn parse_iso_us(s: &str) -> Option<u64> {
    let n = |a: usize, b: usize| s.get(a..b)?.parse::<i64>().ok();
    let (y, m, d) = (n(0, 4)?, n(5, 7)?, n(8, 10)?);
    let (hh, mm, ss, ms) = (n(11, 13)?, n(14, 16)?, n(17, 19)?, n(20, 23)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs * 1_000_000 + ms * 1000).ok()
}

fn percentile(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
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
    // Agents "think" this long on average before acting (0: a closed loop that saturates the
    // server).
    let think = Duration::from_millis(env_num("BENCH_THINK_MS", 0));
    let redis = RedisServer::start_with(|o| o.appendonly = false);
    let url = redis.url();
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap().to_string();

    let mut api = horst(&[
        "api",
        "--redis",
        &url,
        "--listen",
        "127.0.0.1:0",
        "--data",
        &d,
    ]);
    let stdout = api.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(addr) = line.split("listening on ").nth(1) {
                let _ = tx.send(addr.trim().to_string());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("api listening");
    let _api = Proc(api);
    let _workers: Vec<Proc> = (0..2)
        .map(|_| Proc(horst(&["worker", "--redis", &url, "--data", &d])))
        .collect();

    let store = horst_store::Store::connect(&url, "horst:").await.unwrap();
    let auth = horst_rcadia::auth::Auth::new(store).await.unwrap();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(10_000)
        .build()
        .unwrap();
    let mk = {
        let (http, base) = (http.clone(), base.clone());
        move |token: String| C {
            http: http.clone(),
            base: base.clone(),
            token,
        }
    };
    let host = mk(auth
        .create_token(&["host".into()], Some("bench-host"))
        .await
        .unwrap()
        .0);

    let stop = Arc::new(AtomicBool::new(false));
    let actions = Arc::new(AtomicU64::new(0));
    let delivery = Arc::new(Mutex::new(Vec::<u64>::new()));
    let lateness = Arc::new(Mutex::new(Vec::<u64>::new()));
    let mut tasks = tokio::task::JoinSet::new();

    println!(
        "sessions: {sessions} playing + {clock_sessions} clock sessions, {seconds} s, API {base}"
    );
    // Phase 1: every table is created and seated (64 at a time) before anyone plays.
    let setup = Instant::now();
    let mut tables = Vec::new();
    let total = sessions + clock_sessions;
    let mut next = 0;
    while next < total {
        let mut batch = tokio::task::JoinSet::new();
        for i in next..(next + 64).min(total) {
            let (host, auth, mk) = (host.clone(), auth.clone(), mk.clone());
            batch.spawn(async move {
                let clocked = i >= sessions;
                let config = json!({
                    "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0",
                    "gameType": "bench", "turnTimeout": if clocked { 1 } else { 0 }, "maxTurnTimeouts": 1
                });
                let (_, v) = host
                    .call(true, BRIDGE, Some(json!({ "config": config, "gameId": "bench" })))
                    .await
                    .expect("create");
                let id = v["sessionId"].as_str().expect("sessionId").to_string();
                let mut agents = Vec::new();
                let mut pids = Vec::new();
                for k in 0..2 {
                    let a = mk(auth
                        .create_token(&["play".into()], Some(&format!("a{i}-{k}")))
                        .await
                        .unwrap()
                        .0);
                    let (_, s) = a
                        .call(true, &format!("{AGENT}/{id}/join"), Some(json!({})))
                        .await
                        .expect("join");
                    pids.push(s["playerId"].as_str().unwrap().to_string());
                    agents.push(a);
                }
                (clocked, id, pids, agents)
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
    for (clocked, id, pids, agents) in tables {
        // Host loop.
        let (h, idh, pidsh, stop_h, delivery_h, lateness_h) = (
            host.clone(),
            id.clone(),
            pids.clone(),
            stop.clone(),
            delivery.clone(),
            lateness.clone(),
        );
        tasks.spawn(async move {
            let mut after = 0u64;
            let mut on = 0usize;
            let mut published_at = None;
            let publish = |on: usize| {
                json!({ "ops": [
                    { "op": "state", "state": { "on": on } },
                    { "op": "legal_actions", "playerId": pidsh[on], "actions": [{ "type": "move" }] }
                ]})
            };
            while !stop_h.load(Ordering::Relaxed) {
                let Some((200, p)) = h
                    .call(
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
                for e in p["actions"].as_array().cloned().unwrap_or_default() {
                    after = after.max(e["seq"].as_u64().unwrap_or(0));
                    match (e["type"].as_str(), e["event"].as_str()) {
                        (Some("system"), Some("game_start")) => next = true,
                        (Some("action"), _) => {
                            if let Some(t) = e["action"]["t"].as_u64() {
                                delivery_h.lock().unwrap().push(got.saturating_sub(t));
                            }
                            on = 1 - on;
                            next = true;
                        }
                        (Some("timeout"), _) => {
                            if let Some(t0) = published_at {
                                // The strike is due 1 s after the turn was published.
                                lateness_h
                                    .lock()
                                    .unwrap()
                                    .push(got.saturating_sub(t0 + 1_000_000));
                            }
                        }
                        _ => {}
                    }
                }
                if p["status"] == "finished" {
                    return;
                }
                if next {
                    h.call(true, &format!("{BRIDGE}/{idh}/ops"), Some(publish(on)))
                        .await;
                    if clocked {
                        // The turn's deadline as the server set it.
                        if let Some((200, v)) =
                            h.call(false, &format!("{AGENT}/{idh}/public"), None).await
                        {
                            published_at = v["deadline"]
                                .as_str()
                                .and_then(parse_iso_us)
                                .map(|d| d - 1_000_000);
                        }
                    }
                }
            }
        });
        if clocked {
            continue; // its agents never act: the clock forfeits them
        }
        for a in agents {
            let (idc, stop_a, actions_a) = (id.clone(), stop.clone(), actions.clone());
            tasks.spawn(async move {
                while !stop_a.load(Ordering::Relaxed) {
                    let Some((200, s)) = a
                        .call(false, &format!("{AGENT}/{idc}/state?wait=25"), None)
                        .await
                    else {
                        continue;
                    };
                    if s["status"] == "finished" {
                        return;
                    }
                    if s["yourTurn"] == true {
                        // Uniform in [0, 2 x think): no synchronised bursts of 1000 agents.
                        let jitter =
                            (now_us().wrapping_mul(6_364_136_223_846_793_005) >> 33) % 1000;
                        tokio::time::sleep(think * 2 * jitter as u32 / 1000).await;
                        let turn = s["turn"].as_u64().unwrap_or(0);
                        let body =
                            json!({ "action": { "type": "move", "t": now_us() }, "turn": turn });
                        if let Some((200, _)) = a
                            .call(true, &format!("{AGENT}/{idc}/action"), Some(body))
                            .await
                        {
                            actions_a.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    }
    // Let every host see its game_start before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let t0 = Instant::now();
    let a0 = actions.load(Ordering::Relaxed);
    delivery.lock().unwrap().clear();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let n = actions.load(Ordering::Relaxed) - a0;
    let elapsed = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut d = delivery.lock().unwrap().clone();
    let mut l = lateness.lock().unwrap().clone();
    println!(
        "actions/s: {:.0} ({n} actions in {elapsed:.1} s)",
        n as f64 / elapsed
    );
    println!(
        "action-to-host delivery: p50 {:.1} ms, p99 {:.1} ms ({} samples)",
        percentile(&mut d, 0.5) as f64 / 1000.0,
        percentile(&mut d, 0.99) as f64 / 1000.0,
        d.len()
    );
    println!(
        "clock lateness (strike seen by the host after its deadline): p50 {:.1} ms, p99 {:.1} ms ({} samples)",
        percentile(&mut l, 0.5) as f64 / 1000.0,
        percentile(&mut l, 0.99) as f64 / 1000.0,
        l.len()
    );
    tasks.abort_all();
}
