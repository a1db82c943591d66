//! `horst up`, `horst api` and `horst worker`: start-up, running, and graceful shutdown.
//!
//! Shutdown order matters (after mini-redis): on SIGTERM or Ctrl-C we stop accepting, let
//! in-flight requests finish within the grace period, let workers finish their jobs, and
//! only then stop the private Redis, which everything above still needs while draining.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use horst_config::Config;
use horst_store::Health;
use tokio::sync::watch;

use crate::redis_setup::{self, RedisHandle};

#[derive(Debug, Clone, Copy)]
pub struct Roles {
    api: bool,
    worker: bool,
}

impl Roles {
    pub const API_AND_WORKER: Roles = Roles {
        api: true,
        worker: true,
    };
    pub const API: Roles = Roles {
        api: true,
        worker: false,
    };
    pub const WORKER: Roles = Roles {
        api: false,
        worker: true,
    };
}

pub fn run(config: Config, roles: Roles) -> ExitCode {
    let data_dir = std::path::absolute(&config.data_dir).unwrap_or(config.data_dir.clone());
    println!("horst: data directory {}", data_dir.display());
    let redis = match redis_setup::resolve(&config, |line| println!("{line}")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("horst: {e}");
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("horst: cannot start the async runtime: {e}");
            redis_setup::stop_private(&redis);
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(run_async(Arc::new(config), roles, &redis));
    // Requests and jobs are drained; background tasks may be mid-PING. Give them a moment,
    // then stop Redis last.
    runtime.shutdown_timeout(Duration::from_secs(2));
    redis_setup::stop_private(&redis);
    println!("horst: stopped");
    code
}

async fn run_async(config: Arc<Config>, roles: Roles, redis: &RedisHandle) -> ExitCode {
    let store = match redis_setup::connect(&config, &redis.url).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("horst: {e}");
            return ExitCode::from(1);
        }
    };
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    tokio::spawn(wait_for_signal(shutdown_tx));

    let health = Health::new();
    tokio::spawn(health.clone().run_probe(
        store.clone(),
        Duration::from_secs(1),
        shutdown_rx.clone(),
    ));
    if let Some(private) = &redis.private {
        tokio::spawn(watch_private_redis(
            private.clone(),
            health.clone(),
            shutdown_rx.clone(),
        ));
    }

    let mut channels = horst_queue::Queue::channels(&store);
    channels.extend(horst_rcadia::Rcadia::channels(&store));
    let notifier =
        horst_queue::Notifier::start(store.client().clone(), channels, shutdown_rx.clone());
    let queue = horst_queue::Queue::new(
        store.clone(),
        horst_queue::QueueSettings {
            queue: config.queue.clone(),
            quotas: config.quotas.clone(),
        },
        notifier,
    );
    if roles.api {
        // The configuration file is the source of the quota numbers: a starting API writes
        // them, as `horst admin quotas reload` does, so a restart applies edits too.
        let values = horst_queue::Quotas::from_config(&config);
        if let Err(e) = horst_queue::write_quotas(&store, &values, "start").await {
            tracing::warn!(error = %e, "cannot store the quota settings; each process uses its own");
        }
    }
    let metrics = horst_telemetry::Metrics::new();
    tokio::spawn(horst_worker::sample_queue_gauges(
        queue.clone(),
        metrics.clone(),
        shutdown_rx.clone(),
    ));

    let rcadia = match horst_rcadia::Rcadia::new(
        store.clone(),
        queue.notifier().clone(),
        horst_rcadia::RcadiaSettings::from_config(&config.sessions),
        shutdown_rx.clone(),
    )
    .await
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("horst: cannot open the session store: {e}");
            return ExitCode::from(1);
        }
    };
    let mut tasks = tokio::task::JoinSet::new();
    // Every process fires session clocks: popping is atomic and firing idempotent, so more
    // firers only mean less latency and no single point of failure.
    tasks.spawn(rcadia.clone().run_clock(shutdown_rx.clone()));
    if roles.worker {
        let runner = match horst_worker::EngineRunner::new(config.worker.threads as usize) {
            Ok(r) => Arc::new(r),
            Err(e) => {
                eprintln!("horst: {e}");
                return ExitCode::from(1);
            }
        };
        let identity = horst_worker::WorkerIdentity::new(0, config.worker.slots);
        tasks.spawn(horst_worker::run(
            queue.clone(),
            runner,
            identity,
            horst_worker::WorkerMetrics::register(&metrics),
            shutdown_rx.clone(),
        ));
    }
    // The API (up, api), or only the operational endpoints of a worker that asks for them.
    let http_addr = if roles.api {
        Some(config.listen_addr())
    } else if !config.worker.metrics_listen.is_empty() {
        config.worker.metrics_listen.parse().ok()
    } else {
        None
    };
    if let Some(addr) = http_addr {
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!(
                    "horst: cannot listen on {addr}: {e}; choose another address ({})",
                    if roles.api {
                        "--listen or server.listen"
                    } else {
                        "worker.metrics_listen"
                    }
                );
                return ExitCode::from(1);
            }
        };
        match listener.local_addr() {
            Ok(addr) if roles.api => println!("horst: listening on http://{addr}"),
            Ok(addr) => println!("horst: metrics on http://{addr}/metrics"),
            Err(e) => tracing::warn!(error = %e, "cannot read the bound address"),
        }
        let auth = match horst_rcadia::auth::Auth::new(store.clone()).await {
            Ok(a) => a,
            Err(e) => {
                eprintln!("horst: cannot open the identity store: {e}");
                return ExitCode::from(1);
            }
        };
        let state = horst_api::AppState::new(
            config.clone(),
            store.clone(),
            queue.clone(),
            health.clone(),
            metrics.clone(),
            rcadia.clone(),
            auth,
        );
        let state = match listener.local_addr() {
            Ok(addr) => state.with_listen_addr(addr),
            Err(_) => state,
        };
        let router = if roles.api {
            horst_api::router(state)
        } else {
            horst_api::ops_router(state)
        };
        let grace = Duration::from_secs(config.server.shutdown_grace_seconds);
        let mut rx = shutdown_rx.clone();
        let shutdown = async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        tasks.spawn(async move {
            if let Err(e) = horst_api::serve_router(listener, router, shutdown, grace).await {
                tracing::error!(error = %e, "the HTTP server failed");
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    ExitCode::SUCCESS
}

/// SIGTERM (systemd, kill) or SIGINT (Ctrl-C) starts the graceful shutdown.
async fn wait_for_signal(tx: watch::Sender<bool>) {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await
            }
        }
    };
    tokio::select! {
        _ = terminate => tracing::info!("SIGTERM received; shutting down"),
        _ = tokio::signal::ctrl_c() => tracing::info!("Ctrl-C received; shutting down"),
    }
    let _ = tx.send(true);
}

/// Notices a crash of the private redis-server: horst turns not ready and says why.
async fn watch_private_redis(
    private: Arc<std::sync::Mutex<horst_redis_process::PrivateRedis>>,
    health: Health,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
        let (status, log) = {
            let mut p = private.lock().unwrap_or_else(|e| e.into_inner());
            (p.try_wait(), p.log_path())
        };
        if let Some(status) = status {
            let reason = format!(
                "the private redis-server exited unexpectedly ({status}); horst cannot serve until it is restarted. See {} and restart horst (its AOF is replayed at start)",
                log.display()
            );
            tracing::error!(reason = %reason, "private redis-server died");
            eprintln!("horst: {reason}");
            health.set_fatal(reason);
            return;
        }
    }
}
