//! The composition root: the one place where horst's parts are built and wired together.
//!
//! `horst up|api|worker` (`serve.rs`), `horst admin`, the integration tests' `spawn_app` and the
//! benchmarks all build an [`App`] the same way, so what the tests exercise is what runs in
//! production (after zero-to-production's `Application::build`). What differs between them
//! is only *which roles run* ([`Roles`]) and where the HTTP listener is.
//!
//! Architecture invariant: nothing else constructs a `Queue`, a `Notifier`, an `Rcadia`, an
//! `Auth` or an `AppState` outside unit tests of their own crates.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use horst_config::Config;
use horst_identity::auth::Auth;
use horst_queue::Queue;
use horst_rcadia::Rcadia;
use horst_store::{Health, Store};
use horst_telemetry::Metrics;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::Shutdown;

/// Which parts of horst a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roles {
    /// The HTTP API on the listener.
    pub api: bool,
    /// A worker (planner and referee jobs) with `worker.slots` slots.
    pub worker: bool,
    /// `horst up`'s worker child: its log shares up's terminal, so what up logs of Redis
    /// itself (a stall) is left to up.
    pub up_child: bool,
}

impl Roles {
    pub const API_AND_WORKER: Roles = Roles {
        api: true,
        worker: true,
        up_child: false,
    };
    pub const API: Roles = Roles {
        api: true,
        worker: false,
        up_child: false,
    };
    pub const WORKER: Roles = Roles {
        api: false,
        worker: true,
        up_child: false,
    };
    /// [`Roles::WORKER`] in `horst up`'s worker child.
    pub const UP_WORKER: Roles = Roles {
        api: false,
        worker: true,
        up_child: true,
    };
    /// An operator command (`horst admin`): it reads and writes what it is asked to and
    /// nothing else. No layout migrations (a newer binary's `admin status` must not move the
    /// keys the running processes still use) and no admin token seeded from the invoker's
    /// configuration or environment.
    pub const OPERATOR: Roles = Roles {
        api: false,
        worker: false,
        up_child: false,
    };

    fn serves(self) -> bool {
        self.api || self.worker
    }
}

/// Why horst could not be built; the message says what to do.
#[derive(Debug)]
pub struct BuildError(String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

/// Everything a horst process is made of. Cheap to clone: every part is a shared handle.
#[derive(Clone)]
pub struct App {
    config: Arc<Config>,
    store: Store,
    health: Health,
    queue: Queue,
    rcadia: Rcadia,
    auth: Auth,
    metrics: Metrics,
    /// Every task this process runs goes through it ([`App::spawn`]).
    shutdown: Shutdown,
    probe_interval: Duration,
    server_check_interval: Duration,
    /// The job metrics, registered once per process (its worker and its housekeeping).
    worker_metrics: Arc<std::sync::OnceLock<horst_worker::WorkerMetrics>>,
}

impl App {
    /// Connects to the Redis at `redis_url`, checks it (an evicting Redis is refused unless
    /// `redis.allow_eviction`), and builds every part. The notifier's subscription starts
    /// here, in the process's tracker, and stops when the shutdown starts (`signal` turning
    /// true: [`Shutdown::on`], or a [`Shutdown`] of the caller's); the roles' tasks start
    /// with [`App::run`].
    pub async fn build(
        config: Arc<Config>,
        redis_url: &str,
        signal: impl Into<Shutdown>,
    ) -> Result<App, BuildError> {
        Self::build_for(config, redis_url, signal, Roles::API_AND_WORKER).await
    }

    /// [`App::build`] for a process that will run only `roles` ([`App::run`] with them): a
    /// process without the API serves no session long-polls, so its pub/sub listener does
    /// not take the session channels (every stored session write publishes a wake-up, which
    /// Redis would send to every such process and each would receive for nobody).
    pub async fn build_for(
        config: Arc<Config>,
        redis_url: &str,
        signal: impl Into<Shutdown>,
        roles: Roles,
    ) -> Result<App, BuildError> {
        let shutdown: Shutdown = signal.into();
        // With `redis.sentinels` the store finds the primary through them and follows a
        // failover by itself; `redis_url` is then unused.
        let store = Store::open(&config.redis, redis_url)
            .await
            .map_err(|e| BuildError(e.to_string()))?;
        let facts = store
            .check_server(config.redis.allow_eviction, roles.serves())
            .await
            .map_err(|e| BuildError(e.to_string()))?;
        tracing::info!(redis = %store.target(), version = %facts.version, "connected to Redis");
        // One server by its URL that is a replica refuses every write (READONLY) for as long
        // as it stays one: said here with the setting and the fix, where every process (an
        // operator command too) stopped at its first write with Redis's own words. With
        // sentinels or a cluster horst finds the primary itself.
        if config.redis.sentinels.is_empty() && config.redis.cluster.is_empty() {
            let replica_of = store
                .replica_of()
                .await
                .map_err(|e| BuildError(e.to_string()))?;
            if let Some(primary) = replica_of {
                return Err(BuildError(format!(
                    "redis.url names {}, a replica (of {primary}): it refuses every write (READONLY). Fix: set redis.url (HORST_REDIS_URL, --redis) to the primary's URL, or give redis.sentinels and redis.sentinel_master so horst follows the primary itself",
                    store.target()
                )));
            }
        }

        // One pattern subscription per process wakes both job waiters and session long-polls
        // (only an API process serves long-polls).
        let mut channels = Queue::channels(&store);
        if roles.api {
            channels.extend(Rcadia::channels(&store));
            // Revocations announced by any process: this one's identity cache hears them.
            channels.push(Auth::revocation_channel(&store));
        }
        let (notifier, listener) =
            horst_queue::Notifier::new(store.client().clone(), channels, shutdown.flag());
        shutdown.spawn(listener);
        let queue = Queue::new(
            store.clone(),
            horst_queue::QueueSettings {
                queue: config.queue.clone(),
                quotas: config.quotas.clone(),
            },
            notifier,
        );
        if roles.serves() {
            migrate(&queue).await?;
        }
        // A wait that starts before the subscription is up would still be correct (waiters
        // re-read on a timer), only slower; a short wait here keeps first requests prompt.
        if !queue.notifier().ready(Duration::from_secs(5)).await {
            tracing::warn!(
                "the pub/sub subscription is not up yet; waits fall back to polling until it is"
            );
        }
        let rcadia = Rcadia::new(
            store.clone(),
            queue.notifier().clone(),
            horst_rcadia::RcadiaSettings {
                log_stalls: !roles.up_child,
                ..horst_rcadia::RcadiaSettings::from_config(&config)
            },
            shutdown.flag(),
        )
        .await
        .map_err(|e| BuildError(format!("cannot open the session store: {e}")))?;
        let auth = Auth::new(store.clone(), &config.jwt_key_file())
            .await
            .map_err(|e| BuildError(format!("cannot open the identity store: {e}")))?;
        if roles.api {
            auth.follow_revocations(queue.notifier());
        }
        // The configured admin token is the first seed of the rotating set (stored once by
        // hash; a retired one stays retired), by the processes that serve.
        if roles.serves() {
            horst_operator::seed_admin_token(&store, &config.gateway.admin_token)
                .await
                .map_err(|e| BuildError(format!("cannot store the admin token: {}", e.message)))?;
        }
        let server_check_interval = Duration::from_secs(config.redis.server_check_seconds);
        Ok(App {
            config,
            store,
            health: Health::new(),
            queue,
            rcadia,
            auth,
            metrics: Metrics::new(),
            shutdown,
            probe_interval: Duration::from_secs(1),
            server_check_interval,
            worker_metrics: Arc::default(),
        })
    }

    /// How often `/readyz`'s probe pings Redis (1 s; tests probe faster).
    pub fn with_probe_interval(mut self, every: Duration) -> Self {
        self.probe_interval = every;
        self
    }

    /// How often the probe re-reads Redis's eviction policy and AOF setting
    /// (`redis.server_check_seconds`, 5 s; tests check faster): an evicting server makes
    /// `/readyz` 503.
    pub fn with_server_check_interval(mut self, every: Duration) -> Self {
        self.server_check_interval = every;
        self
    }

    fn worker_metrics(&self) -> horst_worker::WorkerMetrics {
        self.worker_metrics
            .get_or_init(|| horst_worker::WorkerMetrics::register(&self.metrics))
            .clone()
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }
    pub fn store(&self) -> &Store {
        &self.store
    }
    pub fn health(&self) -> &Health {
        &self.health
    }
    pub fn queue(&self) -> &Queue {
        &self.queue
    }
    pub fn rcadia(&self) -> &Rcadia {
        &self.rcadia
    }
    pub fn auth(&self) -> &Auth {
        &self.auth
    }
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
    pub fn shutdown(&self) -> &Shutdown {
        &self.shutdown
    }

    /// Runs `task` as one of this process's tasks: [`App::run`] returns only after it ended.
    pub fn spawn<F>(&self, task: F)
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shutdown.spawn(task);
    }

    /// The HTTP API's state; `listen` is the bound address (the base of absolute URLs
    /// when `sessions.public_url` is not set).
    pub fn api_state(&self, listen: SocketAddr) -> horst_api::AppState {
        horst_api::AppState::new(horst_api::Parts {
            config: self.config.clone(),
            store: self.store.clone(),
            queue: self.queue.clone(),
            health: self.health.clone(),
            metrics: self.metrics.clone(),
            rcadia: self.rcadia.clone(),
            auth: self.auth.clone(),
            listen,
            stopping: self.shutdown.flag(),
        })
    }

    /// A worker with `slots` slots on its own planner pool of `worker.threads` threads,
    /// until `shutdown` turns true (it then finishes what it runs). `index` tells several
    /// workers of one process apart in their ids.
    pub fn worker(
        &self,
        index: u32,
        slots: u32,
        shutdown: watch::Receiver<bool>,
    ) -> Result<impl std::future::Future<Output = ()> + Send + 'static, BuildError> {
        let runner = horst_worker::EngineRunner::new(self.config.worker.threads as usize)
            .map_err(|e| BuildError(e.to_string()))?
            .with_job_memory_mib(self.config.worker.job_memory_mib);
        Ok(horst_worker::run(
            self.queue.clone(),
            Arc::new(runner),
            horst_worker::WorkerIdentity::new(index, slots)
                .with_referee_slots(self.config.worker.referee_slots)
                // `horst up` kills its worker child this long after asking it to stop.
                .with_stop_budget(Duration::from_secs(self.config.queue.drain_seconds())),
            self.worker_metrics(),
            shutdown,
        ))
    }

    /// Runs `roles` until the shutdown signal, then drains: in-flight requests get
    /// `server.shutdown_grace_seconds`, a worker finishes its jobs. `http` is the API's
    /// listener (with the API role) or the operational endpoints' (`/healthz`, `/readyz`,
    /// `/metrics`) of a worker-only process; `None` serves nothing.
    pub async fn run(self, roles: Roles, http: Option<TcpListener>) -> Result<(), BuildError> {
        self.run_with(roles, http, None).await
    }

    /// [`App::run`] with `/metrics` (and the probes) also on `ops`, the listener of
    /// `server.metrics_listen`.
    pub async fn run_with(
        self,
        roles: Roles,
        http: Option<TcpListener>,
        ops: Option<TcpListener>,
    ) -> Result<(), BuildError> {
        let shutdown = self.shutdown.flag();
        self.spawn(self.health.clone().run_probe(
            self.store.clone(),
            self.probe_interval,
            horst_store::ServerCheck {
                every: self.server_check_interval,
                allow_eviction: self.config.redis.allow_eviction,
            },
            shutdown.clone(),
        ));
        if roles.api {
            // The configuration file is the first seed of the quota numbers; what is stored
            // wins, so a restart never undoes a run-time reload (`horst admin quotas reload`).
            let values = horst_queue::Quotas::from_config(&self.config);
            match horst_queue::seed_quotas(&self.store, &values, "start").await {
                Ok(true) => tracing::info!("quota settings stored from the configuration"),
                Ok(false) => tracing::info!("quota settings: the stored ones stay in force (horst admin quotas reload applies the file)"),
                Err(e) => tracing::warn!(error = %e, "cannot store the quota settings; each process uses its own"),
            }
            // Callers wait in this process: its presence ties their queued jobs to it.
            self.spawn(self.queue.clone().announce_callers(shutdown.clone()));
            // What this process's own configuration makes of the switches, for `horst admin
            // switches` (a switch never set follows each process's configuration).
            self.spawn(horst_operator::announce(
                self.store.clone(),
                self.queue.process_id().to_string(),
                self.config.clone(),
                shutdown.clone(),
            ));
            if !roles.worker {
                // Workers reap; an API process does too, so a dead worker's job ends (and
                // its caller is told) even when no worker is left.
                self.spawn(horst_worker::housekeeping(
                    self.queue.clone(),
                    self.worker_metrics(),
                    shutdown.clone(),
                ));
            }
        }
        self.spawn(horst_worker::sample_queue_gauges(
            self.queue.clone(),
            self.metrics.clone(),
            shutdown.clone(),
        ));
        // Every process fires session clocks: popping is atomic and firing idempotent, so
        // more firers only mean less latency and no single point of failure.
        self.spawn(self.rcadia.clone().run_clock(shutdown.clone()));
        // Every process rates finished games too: each is claimed with a lease and written
        // once (`horst_rcadia::leaderboard`); none while the operator has ratings off.
        if self.config.arena.ratings {
            self.spawn(
                self.rcadia
                    .clone()
                    .run_rater(shutdown.clone(), self.config.sessions.rating_pause_ms),
            );
        }
        // And plays the house's reference player's turns (`horst_rcadia::reference`): the
        // machine takes one action per turn, so more drivers only mean less latency.
        self.spawn(self.rcadia.clone().run_reference(shutdown.clone()));
        if roles.worker {
            self.spawn(self.worker(0, self.config.worker.slots, shutdown.clone())?);
        }
        if let Some(listener) = http {
            let addr = listener
                .local_addr()
                .map_err(|e| BuildError(format!("cannot read the bound address: {e}")))?;
            // One state for both listeners: its metrics are registered once.
            let state = self.api_state(addr);
            let router = if roles.api {
                horst_api::router(state.clone())
            } else {
                horst_api::ops_router(state.clone())
            };
            let grace = Duration::from_secs(self.config.server.shutdown_grace_seconds);
            let limits = horst_api::ConnectionLimits::from_config(&self.config.server);
            let mut listeners = vec![(listener, router)];
            if let Some(ops) = ops {
                listeners.push((ops, horst_api::ops_router(state.clone())));
            }
            for (listener, router) in listeners {
                let mut stop = shutdown.clone();
                let (limits, connections) = (limits.clone(), state.connections.clone());
                self.spawn(async move {
                    let drained = async move {
                        let _ = stop.wait_for(|s| *s).await;
                    };
                    if let Err(e) =
                        horst_api::serve_with(listener, router, drained, grace, limits, connections)
                            .await
                    {
                        tracing::error!(error = %e, "the HTTP server failed");
                    }
                });
            }
        }
        // Every task above ends once the shutdown starts (the servers after their grace,
        // a worker after its jobs); whatever the caller does next (stopping the private
        // Redis) therefore runs after all of them.
        // Beyond the HTTP grace: a worker finishing its running jobs, whose own limits end
        // them within `drain_seconds` (a 600 s playtest limit was cut off at 120 s).
        let limit = Duration::from_secs(
            self.config.server.shutdown_grace_seconds + self.config.queue.drain_seconds(),
        );
        self.shutdown.drained(limit).await;
        Ok(())
    }
}

/// Moves what an earlier version left in Redis to this version's layout (each step does
/// nothing once done). Only processes that serve run it, when they start.
async fn migrate(queue: &Queue) -> Result<(), BuildError> {
    // Nothing can change while Redis refuses writes (a full disk, `maxmemory`), and the
    // running processes go on meanwhile: a process that starts now (a restarted worker,
    // `horst up` after a crash) comes up as they are, rather than exiting and leaving the
    // deployment short of it until Redis is mended. The steps only move what an earlier
    // version left; the next start does them.
    let step = |what: &str,
                result: Result<(), horst_store::RedisError>|
     -> Result<bool, BuildError> {
        match result {
            Ok(()) => Ok(true),
            Err(e) if horst_store::refuses_writes(&e) => {
                tracing::warn!(error = %e, "Redis refuses writes: the start's adoption of an earlier version's queue keys is left for the next start");
                Ok(false)
            }
            Err(e) => Err(BuildError(format!("cannot {what}: {e}"))),
        }
    };
    // Jobs left waiting by a version before the lanes move into their lanes.
    let _all_done = step("adopt the pre-lanes waiting list", queue.adopt_waiting_list().await.map(drop))?
        // The fair turns and waiting counts of a version before queue:fair move into it.
        && step("adopt the earlier fair turns", queue.adopt_fair_layout().await.map(drop))?
        && step("adopt the earlier daily counts", queue.adopt_daily_counts().await.map(drop))?
        && step("delete the earlier version's keys", queue.drop_old_keys().await)?;
    Ok(())
}
