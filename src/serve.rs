//! `horst up`, `horst api` and `horst worker`: start-up, running, and graceful shutdown.
//!
//! Shutdown order matters (after mini-redis): on SIGTERM or Ctrl-C we stop accepting, let
//! in-flight requests finish within the grace period, let workers finish their jobs, and
//! only then stop the private Redis, which everything above still needs while draining.
//! Every task of the process runs in the app's [`Shutdown`] tracker and `App::run` returns
//! only when all of them ended, so Redis stops last by construction.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use horst::{App, Roles, Shutdown};
use horst_config::Config;

use crate::redis_setup::{self, RedisHandle};
use crate::redis_supervisor;
use crate::terminal::{say, warn};
use crate::worker_child::{self, WorkerChild};
use horst_operator::seeds;

/// What this process runs.
pub enum Mode {
    /// The API, with the worker as a supervised child process (`worker_child.rs`).
    Up {
        config_file: Option<PathBuf>,
    },
    Api,
    /// `up_child`: started by `horst up` as its worker child (`worker_child.rs`).
    Worker {
        up_child: bool,
    },
}

impl Mode {
    /// The roles of this process itself (`up`'s worker runs in its child).
    fn roles(&self) -> Roles {
        match self {
            Mode::Up { .. } | Mode::Api => Roles::API,
            Mode::Worker { up_child: false } => Roles::WORKER,
            Mode::Worker { up_child: true } => Roles::UP_WORKER,
        }
    }
}

pub fn run(config: Config, mode: Mode) -> ExitCode {
    // `horst up`'s worker child notes its parent before anything that takes time: the one it
    // must not outlive (`stop_when_up_is_gone`).
    // SAFETY: getppid has no preconditions and cannot fail.
    let up_parent = unsafe { libc::getppid() };
    if config.log.format == horst_config::LogFormat::Json {
        crate::terminal::log_as_json();
    }
    raise_descriptor_limit(&config);
    let data_dir = std::path::absolute(&config.data_dir).unwrap_or(config.data_dir.clone());
    say(&format!("horst: data directory {}", data_dir.display()));
    let redis = match redis_setup::resolve(&config, say) {
        Ok(r) => r,
        Err(e) => {
            warn(&format!("horst: {e}"));
            return ExitCode::from(1);
        }
    };
    let runtime = match runtime_builder(config.server.runtime_threads).build() {
        Ok(rt) => rt,
        Err(e) => {
            warn(&format!("horst: cannot start the async runtime: {e}"));
            redis_setup::stop_private(&redis);
            return ExitCode::from(1);
        }
    };
    let threads = runtime.metrics().num_workers();
    say(&format!(
        "horst: {threads} runtime thread{} (server.runtime_threads)",
        if threads == 1 { "" } else { "s" }
    ));
    let roles = mode.roles();
    if matches!(mode, Mode::Up { .. }) {
        if let Some(line) = memory_limit_warning(&config.worker) {
            say(&line);
        }
    }
    let up_parent = matches!(mode, Mode::Worker { up_child: true }).then_some(up_parent);
    let child = match mode {
        Mode::Up { config_file } => match std::env::current_exe() {
            Ok(exe) => Some(WorkerChild {
                exe,
                config_file,
                data_dir: data_dir.clone(),
                redis_url: redis.url.clone(),
                metrics_listen: config.worker.metrics_listen.clone(),
                memory_limit_mib: config.worker.process_memory_mib(),
                drain_limit: Duration::from_secs(config.queue.drain_seconds()),
            }),
            Err(e) => {
                warn(&format!(
                    "horst: cannot find its own binary to start the worker: {e}"
                ));
                redis_setup::stop_private(&redis);
                return ExitCode::from(1);
            }
        },
        Mode::Api | Mode::Worker { .. } => None,
    };
    let code = runtime.block_on(run_async(Arc::new(config), roles, child, &redis, up_parent));
    // Requests and jobs are drained; background tasks may be mid-PING. Give them a moment,
    // then stop Redis last.
    runtime.shutdown_timeout(Duration::from_secs(2));
    redis_setup::stop_private(&redis);
    say("horst: stopped");
    code
}

/// The process's async runtime: `server.runtime_threads` threads, 0 leaving tokio's own
/// choice (`TOKIO_WORKER_THREADS`, else one per core). CPU-heavy request work (map checks,
/// renders, the planner) runs on blocking threads, so one runtime thread is not stalled by it.
fn runtime_builder(threads: u64) -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if threads > 0 {
        builder.worker_threads(threads as usize);
    }
    builder
}

/// `up`'s worker child is killed past `worker.memory_limit_mib`; set below what its planner
/// runs may use by themselves, a large playtest kills the worker (every job running in it
/// fails) where it would have ended `unresolved` with reason `memory_limit`, and nothing said
/// why until the first such kill.
fn memory_limit_warning(worker: &horst_config::WorkerConfig) -> Option<String> {
    let base = horst_config::WorkerConfig::WORKER_BASE_MIB;
    let needed = base + u64::from(worker.slots) * worker.job_memory_mib;
    let limit = worker.memory_limit_mib;
    (limit > 0 && limit < needed).then(|| {
        format!(
            "horst: warning: worker.memory_limit_mib is {limit} MiB, below what the worker's planner runs may use ({base} MiB + {} slot(s) x worker.job_memory_mib {} MiB = {needed} MiB): a large playtest gets the worker killed and its running jobs failed, instead of ending `unresolved` with reason memory_limit; raise worker.memory_limit_mib to {needed} (or 0) or lower worker.job_memory_mib to {} MiB",
            worker.slots,
            worker.job_memory_mib,
            ((limit - base) / u64::from(worker.slots)).max(16)
        )
    })
}

async fn run_async(
    config: Arc<Config>,
    roles: Roles,
    child: Option<WorkerChild>,
    redis: &RedisHandle,
    up_parent: Option<libc::pid_t>,
) -> ExitCode {
    let shutdown = Shutdown::new();
    tokio::spawn(wait_for_signal(shutdown.clone()));
    if let Some(up) = up_parent {
        tokio::spawn(stop_when_up_is_gone(shutdown.clone(), up));
    }
    let app = match App::build_for(config.clone(), &redis.url, shutdown.clone(), roles).await {
        Ok(app) => app,
        Err(e) => {
            warn(&format!("horst: {e}"));
            return ExitCode::from(1);
        }
    };
    if let Some(private) = &redis.private {
        let owner = private.lock().unwrap_or_else(|e| e.into_inner()).is_owner();
        if owner {
            // Ends once `run` stops the server, after everything else.
            redis_supervisor::supervise(private.clone(), app.health().clone());
        }
    }
    if roles.api {
        // The JWT signing key (a file outside Redis): one this process cannot read or make
        // stops it now rather than at the first sign-in.
        if let Err(e) = app.auth().load_signing_key().await {
            warn(&format!("horst: {e}"));
            return ExitCode::from(1);
        }
        // The shipped levels as promoted revisions (idempotent; every API process may do it).
        // The binary's step, not App::run's: test apps publish only where a test wants them.
        let marked = match horst_operator::publish_shipped(app.store()).await {
            Err(e) => {
                tracing::warn!(error = %e.message, "cannot publish the built-in levels; trying again within redis.server_check_seconds");
                false
            }
            Ok(()) => match seeds::mark(app.store()).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot write the seeding marker; the start's seeding is repeated within redis.server_check_seconds");
                    false
                }
            },
        };
        // A Redis that comes back empty gets what this start stored again (seeds.rs).
        app.spawn(seeds::watch(
            app.store().clone(),
            config.clone(),
            Duration::from_secs(config.redis.server_check_seconds),
            marked,
            app.shutdown().flag(),
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
    let mut listener = None;
    if let Some(addr) = http_addr {
        let l = match bind(addr) {
            Ok(l) => l,
            Err(e) => {
                warn(&format!(
                    "horst: cannot listen on {addr}: {e}; choose another address ({})",
                    if roles.api {
                        "--listen or server.listen"
                    } else {
                        "worker.metrics_listen"
                    }
                ));
                return ExitCode::from(1);
            }
        };
        if roles.api {
            for problem in horst_api::check_web_dir(std::path::Path::new(&config.server.web_dir)) {
                say(&format!("horst: warning: {problem}"));
            }
        }
        match l.local_addr() {
            Ok(addr) if roles.api => say(&format!("horst: listening on http://{addr}")),
            Ok(addr) => say(&format!("horst: metrics on http://{addr}/metrics")),
            Err(e) => tracing::warn!(error = %e, "cannot read the bound address"),
        }
        listener = Some(l);
    }
    // `/metrics` on its own address (server.metrics_listen), for an API process.
    let mut ops = None;
    if roles.api && !config.server.metrics_listen.is_empty() {
        let addr = config.server.metrics_listen.as_str();
        let bound = addr
            .parse()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
            .and_then(bind);
        match bound {
            Ok(l) => {
                if let Ok(a) = l.local_addr() {
                    say(&format!("horst: metrics on http://{a}/metrics"));
                }
                ops = Some(l);
            }
            Err(e) => {
                warn(&format!("horst: cannot listen on {addr}: {e}; choose another address (server.metrics_listen)"));
                return ExitCode::from(1);
            }
        }
    }
    if let Some(child) = child {
        app.spawn(worker_child::supervise(
            child,
            app.queue().clone(),
            app.metrics().clone(),
            shutdown.flag(),
        ));
    }
    match app.run_with(roles, listener, ops).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            warn(&format!("horst: {e}"));
            ExitCode::from(1)
        }
    }
}

/// A listener with a long accept queue (the kernel caps it at `net.core.somaxconn`): under a
/// connection flood a short queue drops SYNs, and every client, not only the flood, then
/// waits a second for its retransmit.
fn bind(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(8192)
}

/// Every connection is a descriptor: the soft limit (often 1024) goes up to the hard limit,
/// and horst warns when `server.max_connections` does not fit in what is left. (Go's runtime
/// does the same at start.)
fn raise_descriptor_limit(config: &Config) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim = raised;
        }
    }
    // Room for Redis connections, files and the refusals' short-lived sockets.
    const RESERVE: u64 = 256;
    let cap = config.server.max_connections;
    // rlim_t is u64 on Linux but not on every platform.
    #[allow(clippy::unnecessary_cast)]
    let available = (lim.rlim_cur as u64).saturating_sub(RESERVE);
    if cap > available {
        say(&format!(
            "horst: warning: server.max_connections is {cap} but the descriptor limit is {} (about {available} connections); raise LimitNOFILE (ulimit -n) or lower server.max_connections, or accepts will fail (they are logged and backed off)",
            lim.rlim_cur
        ));
    }
}

/// How often `horst up`'s worker child looks whether up is still its parent.
const UP_CHECK_EVERY: Duration = Duration::from_millis(500);

/// `horst up`'s worker child stops as on SIGTERM (its running jobs finish first, within its
/// stop budget) once `horst up` (`up`, its parent at its start) is gone: it is then the child
/// of another process (init, or a subreaper). Up's parent-death signal (`worker_child.rs`)
/// does not cover every way up ends: it is tied to the thread of up that forked the child,
/// not to up, it is lost when up dies between the fork and the `prctl`, and an exec of a
/// binary with file capabilities (`setcap cap_net_bind_service`) clears it. Each of these
/// left a worker running on with no parent, its log pipes broken and its Redis gone.
async fn stop_when_up_is_gone(shutdown: Shutdown, up: libc::pid_t) {
    let mut every = tokio::time::interval(UP_CHECK_EVERY);
    loop {
        every.tick().await;
        // SAFETY: as above.
        let parent = unsafe { libc::getppid() };
        if parent != up {
            shutdown.trigger();
            tracing::warn!(
                up_pid = up,
                parent,
                "horst up (the parent of this worker) is gone: stopping; running jobs finish first"
            );
            return;
        }
    }
}

/// SIGTERM (systemd, kill), SIGINT (Ctrl-C) or SIGHUP (the terminal closed) starts the
/// graceful shutdown; a second one while it drains stops the process at once (an operator
/// who presses Ctrl-C again does not want to wait out the grace period). The children (the
/// worker, the private Redis) die with it (their parent-death signal).
/// True when `signal` is ignored (inherited from the parent: `nohup`), read before any
/// handler of ours is installed.
fn ignored_at_start(signal: libc::c_int) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

async fn wait_for_signal(shutdown: Shutdown) {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    let listen = |kind: SignalKind, name: &str| {
        signal(kind)
            .map_err(|e| tracing::error!(error = %e, signal = name, "cannot listen for a signal"))
            .ok()
    };
    async fn next(s: &mut Option<Signal>) {
        let received = match s {
            Some(s) => s.recv().await.is_some(),
            None => false,
        };
        if !received {
            std::future::pending::<()>().await;
        }
    }
    let mut term = listen(SignalKind::terminate(), "SIGTERM");
    let mut int = listen(SignalKind::interrupt(), "SIGINT");
    // Under `nohup` (SIGHUP ignored when horst started) a hang-up must stay ignored: a
    // handler of ours would replace the ignore, and closing the terminal stopped horst.
    let mut hup = if ignored_at_start(libc::SIGHUP) {
        None
    } else {
        listen(SignalKind::hangup(), "SIGHUP")
    };
    let mut first = true;
    loop {
        let name = tokio::select! {
            _ = next(&mut term) => "SIGTERM",
            _ = next(&mut int) => "SIGINT",
            _ = next(&mut hup) => "SIGHUP",
        };
        // What the signal asks is done before it is logged: a log line must never be what
        // keeps a signal from acting (a write to a broken stderr once panicked this task).
        if first {
            first = false;
            shutdown.trigger();
            tracing::info!(
                signal = name,
                "shutting down; send it again to stop at once"
            );
        } else {
            warn(&format!(
                "horst: stopped at once ({name} again while shutting down)"
            ));
            std::process::exit(130);
        }
    }
}
