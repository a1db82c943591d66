//! Load benchmark of the agent gateway: anonymous `validate_map` calls per second and
//! latency percentiles against one in-process API (real HTTP, real Redis, keep-alive
//! connections). The burst limits are raised for the run: they would otherwise cap one
//! client address at 120 requests per minute.
//!
//! With `--tool simulate`: `simulate_replay` end to end (admission, a worker's referee run,
//! the waiting caller's wake-up) with two in-process workers, one trust-2 account per client.
//!
//! Run: `cargo bench --bench gateway` (options: `-- --seconds 10 --clients 32 --tool validate`).
//! Results go in docs/benchmarks.md, section "Gateway".

use std::sync::Arc;
use std::time::{Duration, Instant};

use horst_testkit::RedisServer;
use tokio::sync::watch;

#[allow(dead_code)] // each benchmark uses a part
mod common;
use common::*;

const MAP: &str = include_str!("../levels/01-erste-schritte.map");
const REPLAY: &str = include_str!("../levels/01-erste-schritte.replay.json");

fn tool() -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--tool")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "validate".into())
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let seconds = arg("--seconds", 10);
    let clients = arg("--clients", 32) as usize;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run(seconds, clients));
}

async fn run(seconds: u64, clients: usize) {
    let redis = RedisServer::start();
    let mut config = horst_config::Config::default();
    config.redis.url = redis.url();
    config.gateway.mode = horst_config::GatewayMode::On;
    config.gateway.burst_per_ip_per_minute = 1_000_000;
    config.gateway.burst_per_account_per_minute = 1_000_000;
    // The simulate run needs room: no daily limits, a queue for every client.
    config.quotas.trust2.simulations = u32::MAX;
    config.queue.daily_seconds = u64::MAX / 4;
    config.queue.waiting_global = 100_000;
    let simulate = tool() == "simulate";
    config.worker.threads = 1;
    let config = Arc::new(config);
    let (tx, rx) = watch::channel(false);
    let app = horst::App::build(config.clone(), &redis.url(), rx.clone())
        .await
        .expect("build horst");
    let store = app.store().clone();
    let mut keys = Vec::new();
    if simulate {
        for w in 0..2 {
            tokio::spawn(app.worker(w, 2, rx.clone()).expect("pool"));
        }
        keys = agent_keys(&store, "bench", clients).await;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(app.run(horst::Roles::API, Some(listener)));
    let url = format!("http://{addr}/api/mcp");
    let replay: serde_json::Value = serde_json::from_str(REPLAY).expect("replay");
    // Each simulate call needs a fresh idempotency key; `{n}` is replaced per request.
    let body = if simulate {
        tool_call(
            "simulate_replay",
            serde_json::json!({"map": MAP, "replay": replay, "idempotencyKey": "k-{n}"}),
        )
    } else {
        tool_call("validate_map", serde_json::json!({"map": MAP}))
    };

    // Warm-up: one call that must succeed.
    let http = reqwest::Client::new();
    let warm_key = keys.first().cloned().unwrap_or_default();
    let r = with_key(
        http.post(&url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25"),
        &warm_key,
    )
    .body(body.replace("{n}", "warm"))
    .send()
    .await
    .expect("warm-up");
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    assert!(
        text.contains("\\\"valid\\\":true") || text.contains("\\\"outcome\\\":\\\"won\\\""),
        "{text}"
    );

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (http, url, body) = (reqwest::Client::new(), url.clone(), body.clone());
        let key = keys.get(c).cloned().unwrap_or_default();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0u64;
            let mut n = 0u64;
            while Instant::now() < deadline {
                n += 1;
                let t = Instant::now();
                let ok = match with_key(
                    http.post(&url)
                        .header("content-type", "application/json")
                        .header("mcp-protocol-version", "2025-11-25"),
                    &key,
                )
                .body(body.replace("{n}", &n.to_string()))
                .send()
                .await
                {
                    Ok(r) if r.status() == 200 => !r
                        .text()
                        .await
                        .unwrap_or_default()
                        .contains("\"isError\":true"),
                    _ => false,
                };
                if ok {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (lat, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for t in tasks {
        let (l, e) = t.await.unwrap();
        all.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    };
    println!(
        "gateway {}: {} requests in {elapsed:.1} s with {clients} clients: {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, errors {errors} (map {} bytes, {} cores)",
        if simulate { "simulate_replay (2 workers)" } else { "validate_map" },
        all.len(),
        all.len() as f64 / elapsed,
        pct(0.50),
        pct(0.99),
        all.last().map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0),
        MAP.len(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    );
    let _ = tx.send(true);
}
