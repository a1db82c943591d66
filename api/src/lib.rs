//! horst's HTTP API.
//!
//! Shape (after realworld-axum-sqlx): one [`AppState`], one router per resource in
//! `routes/`, merged in [`router`], callers and bodies as extractors (`extract.rs`: the
//! operator, RCADIA players and hosts, the agent key, JSON bodies and query strings with the
//! API's own rejections), and one error type ([`ApiError`]) whose codes each map to one
//! status and whose `IntoResponse` keeps internals out of responses. Domain logic lives in the library crates; handlers
//! translate HTTP to calls and results back to HTTP, nothing more.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use horst_config::Config;
use horst_identity::auth::Auth;
use horst_queue::Queue;
use horst_rcadia::Rcadia;
use horst_store::{Health, Store};
use horst_telemetry::Metrics;
use tokio::net::TcpListener;
use tokio::sync::watch;

mod error;
mod extract;
mod methods;
mod poll_params;
mod request_log;
mod routes;
pub mod security_headers;
mod server;

pub use error::{tool_status, ApiCode, ApiError};
pub use routes::web_files::check_web_dir;
pub use server::{ConnectionLimits, ConnectionMetrics};

/// What the agent gateway's routes need besides the store: the gateway's handlers, the
/// deployment-wide burst limits, and the proxies whose `X-Forwarded-For` is believed.
#[derive(Clone)]
pub struct AgentGateway {
    pub gateway: horst_gateway::Gateway,
    pub burst: horst_limits::BurstLimits,
    pub limits: horst_limits::GatewayLimits,
    pub proxies: Arc<horst_limits::TrustedProxies>,
}

/// Everything a handler may need, behind one `Arc`: axum clones the state for every handler
/// and every middleware of every request, and the parts themselves hold dozens of `Arc`s
/// (a clone and a drop of them all was about 5 % of the API's CPU in the sessions benchmark).
/// Fields are read through `Deref`.
#[derive(Clone)]
pub struct AppState(Arc<AppParts>);

impl std::ops::Deref for AppState {
    type Target = AppParts;
    fn deref(&self) -> &AppParts {
        &self.0
    }
}

/// What [`AppState`] shares.
pub struct AppParts {
    pub config: Arc<Config>,
    pub store: Store,
    pub queue: Queue,
    pub health: Health,
    pub metrics: Metrics,
    pub agents: AgentGateway,
    /// RCADIA sessions (store, effects, long-polls).
    pub rcadia: Rcadia,
    /// Agent tokens, users and JWTs.
    pub auth: Auth,
    /// The base of absolute URLs given to agents (`skillUrl`), without a trailing `/`:
    /// `sessions.public_url`, else `http://` + the listen address ([`Parts::listen`]).
    pub public_url: Arc<str>,
    pub(crate) http: request_log::HttpMetrics,
    /// The HTTP server's connection metrics (`horst_connections_*`).
    pub connections: ConnectionMetrics,
}

/// What an [`AppState`] is built from, whole: the process's shared parts, the address the
/// API is bound to and the process's shutdown flag.
pub struct Parts {
    pub config: Arc<Config>,
    pub store: Store,
    pub queue: Queue,
    pub health: Health,
    pub metrics: Metrics,
    pub rcadia: Rcadia,
    pub auth: Auth,
    /// The bound address (a configured port 0 becomes the real one): the base of absolute
    /// URLs when `sessions.public_url` is not set.
    pub listen: std::net::SocketAddr,
    /// Turns true when the process begins to stop: blocking tool calls then answer
    /// `pending` with their `jobId`.
    pub stopping: watch::Receiver<bool>,
}

impl AppState {
    /// Builds the state whole (registering the API's metrics, once per process): nothing is
    /// patched in afterwards.
    pub fn new(parts: Parts) -> Self {
        let Parts {
            config,
            store,
            queue,
            health,
            metrics,
            rcadia,
            auth,
            listen,
            stopping,
        } = parts;
        let http = request_log::HttpMetrics::register(&metrics);
        let connections = ConnectionMetrics::register(&metrics);
        register_build_info(&metrics);
        // Whoever serves /metrics shows the session layer's metrics too.
        rcadia.metrics().register(&metrics);
        let agents = AgentGateway {
            gateway: horst_gateway::Gateway::new(
                store.clone(),
                config.clone(),
                queue.clone(),
                &metrics,
            )
            .with_shutdown(stopping),
            burst: horst_limits::BurstLimits::new(store.clone()),
            limits: horst_limits::GatewayLimits::from_config(&config.gateway),
            proxies: Arc::new(horst_limits::TrustedProxies::from_config(
                &config.server.trusted_proxies,
            )),
        };
        let public_url = public_url(&config, &listen.to_string());
        AppState(Arc::new(AppParts {
            public_url,
            config,
            store,
            queue,
            health,
            metrics,
            agents,
            rcadia,
            auth,
            http,
            connections,
        }))
    }
}

/// `horst_build_info{version, engine_version} 1`: which build and which engine (the
/// `engineVersion` evidence is bound to) this process runs.
fn register_build_info(metrics: &Metrics) {
    use horst_telemetry::metrics::family::Family;
    use horst_telemetry::metrics::gauge::Gauge;
    let info = Family::<Vec<(&'static str, String)>, Gauge>::default();
    info.get_or_create(&vec![
        ("version", env!("CARGO_PKG_VERSION").to_string()),
        ("engine_version", horst_engine::engine_version().to_string()),
    ])
    .set(1);
    metrics.register(
        "build_info",
        "1, labelled with the build's version and engineVersion",
        info,
    );
}

fn public_url(config: &Config, listen: &str) -> Arc<str> {
    let configured = config.sessions.public_url.trim_end_matches('/');
    if configured.is_empty() {
        format!("http://{listen}").into()
    } else {
        configured.into()
    }
}

/// The whole API.
pub fn router(state: AppState) -> Served {
    // With `server.metrics_listen` set, /metrics is served only there.
    let ops = if state.config.server.metrics_listen.is_empty() {
        routes::health::router()
    } else {
        routes::health::probes_router()
    };
    let routed = Router::new()
        .merge(ops)
        .merge(routes::mcp::router(state.clone()))
        .merge(routes::agent_keys::router())
        .merge(routes::admin::router())
        .merge(routes::admin_jobs::router())
        .merge(routes::account::router())
        .merge(routes::admin_page::router())
        .merge(routes::public_board::router())
        .merge(routes::guide::router())
        .merge(routes::rcadia_auth::router())
        .merge(routes::rcadia_bridge::router())
        .merge(routes::rcadia_agent::router())
        .merge(routes::arena::router())
        .merge(routes::web_files::router())
        .merge(routes::game::router())
        .fallback(routes::web_files::unknown_path)
        .method_not_allowed_fallback(methods::not_allowed)
        // One layer around every route: the request log, which also adds the security
        // headers (it needs the route the router matched, so it cannot wrap the router).
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            request_log::log_request,
        ))
        .with_state(state);
    // A layer of a router runs after its routing has chosen a handler by method; the HEAD
    // rule must change the method before, so the server runs it before the router.
    Served {
        router: routed,
        head_rule: true,
    }
}

/// Only the operational endpoints (/healthz, /readyz, /metrics): what a worker-only
/// process serves so Prometheus can scrape its job metrics.
pub fn ops_router(state: AppState) -> Served {
    Served::plain(
        Router::new()
            .merge(routes::health::router())
            .with_state(state),
    )
}

/// What a listener serves: a router, and whether the API's HEAD rule
/// (`methods::no_head_on_the_api`) runs before it. The rule must change the method before
/// routing, so as a layer it needed a router of its own around the API's: every request paid
/// that outer router's routing (two misses of an empty route table, its fallback's service
/// copied) and two more boxed futures and a boxed copy of the service for the layer's `Next`.
/// The server's connection runs the rule in the future it already has for every request.
#[derive(Clone)]
pub struct Served {
    router: Router,
    head_rule: bool,
}

impl Served {
    /// `router` as it is, every method as it routes.
    pub fn plain(router: Router) -> Served {
        Served {
            router,
            head_rule: false,
        }
    }

    /// The answer to `request`.
    pub(crate) async fn answer(self, request: axum::extract::Request) -> axum::response::Response {
        if self.head_rule {
            methods::no_head_on_the_api(request, self.router).await
        } else {
            methods::route(self.router, request).await
        }
    }
}

/// Serves until `shutdown` resolves, then stops accepting and gives in-flight requests
/// `grace` to finish. After that it returns without waiting further; the connections still
/// open are dropped when the process's runtime shuts down, which horst does right after.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    let limits = ConnectionLimits::from_config(&state.config.server);
    let connections = state.connections.clone();
    serve_with(
        listener,
        router(state),
        shutdown,
        grace,
        limits,
        connections,
    )
    .await
}

/// [`serve`] for any router (the API, or [`ops_router`]) with the default connection limits
/// and metrics nobody reads.
pub async fn serve_router(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    let metrics = ConnectionMetrics::register(&Metrics::new());
    serve_with(
        listener,
        Served::plain(router),
        shutdown,
        grace,
        ConnectionLimits::default(),
        metrics,
    )
    .await
}

/// [`serve_router`] with the connection limits and timeouts of `server.*`
/// (`server.rs`: our accept loop over hyper).
pub async fn serve_with(
    listener: TcpListener,
    router: Served,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
    limits: ConnectionLimits,
    connections: ConnectionMetrics,
) -> std::io::Result<()> {
    // Two observers of one shutdown: the server's own drain, and our grace timer.
    let (tx, rx) = watch::channel(false);
    let mut drain_rx = rx.clone();
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(true);
    });
    let mut server = tokio::spawn(server::serve_connections(
        listener,
        router,
        async move {
            let _ = drain_rx.wait_for(|stop| *stop).await;
        },
        limits,
        connections,
    ));
    let mut grace_rx = rx;
    tokio::select! {
        result = &mut server => result.map_err(std::io::Error::other),
        _ = async {
            let _ = grace_rx.wait_for(|stop| *stop).await;
            tracing::info!(grace_seconds = grace.as_secs(), "shutting down: no new connections; finishing in-flight requests");
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!(grace_seconds = grace.as_secs(), "grace period over; cutting off requests still in flight");
            server.abort();
            Ok(())
        }
    }
}
