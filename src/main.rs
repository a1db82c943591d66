//! `horst`: one binary for every role. The library crates own the logic; this crate parses
//! the command line, loads the configuration, finds Redis, and wires the pieces together.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]
// The API and the session store are wired in the library (`src/app.rs`); the binary only
// links them.
use horst_api as _;
use horst_rcadia as _;
use tokio_util as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

// mimalloc, called as std calls malloc (allocator/src/lib.rs says why).
#[global_allocator]
static GLOBAL: horst_allocator::MiMalloc = horst_allocator::MiMalloc;

mod admin;
mod house_cli;
mod job_text;
mod map_cli;
mod play;
mod redis_setup;
mod redis_supervisor;
mod serve;
mod terminal;
mod worker_child;

/// horst: a backend for games that software agents build and play.
///
/// It serves the Game con Vogel agent gateway (MCP at /api/mcp) and the RCADIA agent
/// protocol (/api/v1/agent/...). Jobs and game sessions live in Redis; without a Redis URL,
/// horst runs a private redis-server under the data directory.
#[derive(Parser, Debug)]
#[command(name = "horst", version, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    leading: LeadingArgs,
    #[command(subcommand)]
    command: Command,
}

/// The store and server flags of the serving roles (`up`, `api`). Each other subcommand takes
/// only those it uses (`StoreArgs`, `ClientArgs`; `map` none): a flag a command would ignore is
/// refused, so nobody believes `horst play --data DIR` or `horst admin ... --listen ADDR` did
/// something. Global within the subcommand.
#[derive(Args, Debug, Clone, Default)]
struct CommonArgs {
    /// Configuration file (TOML; see ops/horst.toml for every setting).
    #[arg(long, global = true, env = "HORST_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Redis URL (redis://HOST:PORT). Without one, horst uses its private Redis under --data.
    #[arg(long, global = true, value_name = "URL")]
    redis: Option<String>,
    /// Data directory (the private Redis lives in DIR/redis). Default: ./data
    #[arg(long, global = true, value_name = "DIR")]
    data: Option<PathBuf>,
    /// HTTP listen address, IP:PORT (port 0 picks a free port). Default: 127.0.0.1:8080
    #[arg(long, global = true, value_name = "ADDR")]
    listen: Option<String>,
}

/// The flags of the commands that reach a store but serve no HTTP (`admin`, `worker`): `horst
/// admin ... --data DIR` reaches the same store as the `horst up --data DIR` that is running.
/// Global within the subcommand, so `horst admin token create --data DIR` takes them after the
/// nested command too.
#[derive(Args, Debug, Clone, Default)]
struct StoreArgs {
    /// Configuration file (TOML; see ops/horst.toml for every setting).
    #[arg(long, global = true, env = "HORST_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Redis URL (redis://HOST:PORT). Without one, horst uses its private Redis under --data.
    #[arg(long, global = true, value_name = "URL")]
    redis: Option<String>,
    /// Data directory (the private Redis lives in DIR/redis). Default: ./data
    #[arg(long, global = true, value_name = "DIR")]
    data: Option<PathBuf>,
}

impl From<StoreArgs> for CommonArgs {
    fn from(a: StoreArgs) -> Self {
        CommonArgs {
            config: a.config,
            redis: a.redis,
            data: a.data,
            listen: None,
        }
    }
}

/// The flags of the clients of a running horst (`house`, `play`): they reach it over HTTP,
/// never its store, so they take no --redis or --data.
#[derive(Args, Debug, Clone, Default)]
struct ClientArgs {
    /// Configuration file (TOML; see ops/horst.toml for every setting).
    #[arg(long, global = true, env = "HORST_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The listen address of the horst to reach, IP:PORT, when --backend is not given.
    /// Default: server.listen of the configuration, else 127.0.0.1:8080
    #[arg(long, global = true, value_name = "ADDR")]
    listen: Option<String>,
}

impl From<ClientArgs> for CommonArgs {
    fn from(a: ClientArgs) -> Self {
        CommonArgs {
            config: a.config,
            redis: None,
            data: None,
            listen: a.listen,
        }
    }
}

/// The same flags given before the subcommand (`horst --data DIR up`), as earlier versions
/// took them: still accepted, not shown (each subcommand's help lists the ones it takes).
#[derive(Args, Debug, Clone, Default)]
struct LeadingArgs {
    #[arg(long = "config", hide = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long = "redis", hide = true, value_name = "URL")]
    redis: Option<String>,
    #[arg(long = "data", hide = true, value_name = "DIR")]
    data: Option<PathBuf>,
    #[arg(long = "listen", hide = true, value_name = "ADDR")]
    listen: Option<String>,
}

impl LeadingArgs {
    fn given(&self) -> bool {
        self.config.is_some()
            || self.redis.is_some()
            || self.data.is_some()
            || self.listen.is_some()
    }

    /// The subcommand's flags, with those it was not given taken from before it.
    fn under(self, after: CommonArgs) -> CommonArgs {
        CommonArgs {
            config: after.config.or(self.config),
            redis: after.redis.or(self.redis),
            data: after.data.or(self.data),
            listen: after.listen.or(self.listen),
        }
    }
}

/// A serving role's flags.
#[derive(Args, Debug)]
struct ServeArgs {
    #[command(flatten)]
    common: CommonArgs,
}

/// The worker's flags: it serves no HTTP (its metrics address is `worker.metrics_listen`).
#[derive(Args, Debug)]
struct WorkerArgs {
    #[command(flatten)]
    common: StoreArgs,
}

#[derive(Args, Debug)]
struct AdminArgs {
    #[command(flatten)]
    common: StoreArgs,
    #[command(subcommand)]
    command: admin::AdminCommand,
}

#[derive(Args, Debug)]
struct HouseCommand {
    #[command(flatten)]
    common: ClientArgs,
    #[command(flatten)]
    house: house_cli::HouseArgs,
}

#[derive(Args, Debug)]
struct PlayCommand {
    #[command(flatten)]
    common: ClientArgs,
    #[command(flatten)]
    play: play::PlayArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the API and one worker on one machine: the worker is a child process that is
    /// started again if it dies (an out-of-memory planner takes down only the worker).
    /// Starts the private redis-server when no Redis URL is configured, and stops it on exit.
    Up(ServeArgs),
    /// Run only the HTTP API. Scale out with several API processes on one Redis.
    Api(ServeArgs),
    /// Run only a worker (planner and referee jobs). Scale out with more worker processes.
    Worker(WorkerArgs),
    /// Operator actions on the store of a running horst (its --data, --redis or --config; a
    /// store that is not running is never started).
    Admin(AdminArgs),
    /// The house host: keep RCADIA's own tables open (protocol section 8), each game page in
    /// a headless Chromium. Needs Debian's `chromium` and an agent token with the host scope.
    House(HouseCommand),
    /// Offline level tools on local files: validate, render, simulate, solve (no server
    /// needed).
    #[command(subcommand)]
    Map(map_cli::MapCommand),
    /// Play a game as an agent: join an open table, play legal moves, follow rematches,
    /// print what happens (needs a token with the play scope; no Redis).
    Play(PlayCommand),
}

/// What runs once the configuration is loaded.
enum Role {
    Up,
    Api,
    Worker,
    Admin(admin::AdminCommand),
    House(house_cli::HouseArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let leading = cli.leading;
    // The offline tools and the agent CLI need neither configuration nor Redis.
    let (common, role) = match cli.command {
        Command::Map(cmd) => {
            if leading.given() {
                eprintln!(
                    "horst: `horst map` works on local files and takes no --config, --redis, --data or --listen; leave them out"
                );
                return ExitCode::from(2);
            }
            return map_cli::run(cmd);
        }
        Command::Play(p) => return play::run(p.play, &leading.under(p.common.into())),
        Command::Up(a) => (a.common, Role::Up),
        Command::Api(a) => (a.common, Role::Api),
        Command::Worker(a) => (a.common.into(), Role::Worker),
        Command::Admin(a) => (a.common.into(), Role::Admin(a.command)),
        Command::House(h) => (h.common.into(), Role::House(h.house)),
    };
    let common = leading.under(common);
    let flags = horst_config::Flags {
        listen: common.listen.clone(),
        redis: common.redis.clone(),
        data: common.data.clone(),
    };
    let env = match horst_config::Config::environment() {
        Ok(env) => env,
        Err(e) => return config_error(&e, common.config.as_deref()),
    };
    let config = match horst_config::Config::load(common.config.as_deref(), &env, &flags) {
        Ok(c) => c,
        Err(e) => return config_error(&e, common.config.as_deref()),
    };
    // An operator's command prints its answer on stdout and says what went wrong on stderr:
    // the serving roles' info lines ("connected to Redis") are noise there, so it logs from
    // `warn` unless a level other than the default was asked for (HORST_LOG still wins).
    let level = match role {
        Role::Admin(_) if config.log.level == "info" => "warn",
        _ => config.log.level.as_str(),
    };
    horst_telemetry::init_tracing(config.log.format == horst_config::LogFormat::Json, level);
    match role {
        Role::Up => serve::run(
            config,
            serve::Mode::Up {
                config_file: common.config.clone(),
            },
        ),
        Role::Api => serve::run(config, serve::Mode::Api),
        Role::Worker => {
            // `horst up`'s child: its workers' ids carry the tag up gave it, so up ends
            // exactly its jobs when it dies.
            let tag = std::env::var(horst_worker::PROCESS_TAG_ENV);
            if let Ok(tag) = &tag {
                if !horst_worker::set_process_tag(tag) {
                    tracing::warn!(
                        tag = %tag,
                        "{} is not 6 lowercase hex digits; the workers' ids carry a random tag",
                        horst_worker::PROCESS_TAG_ENV
                    );
                }
            }
            serve::run(
                config,
                serve::Mode::Worker {
                    up_child: tag.is_ok(),
                },
            )
        }
        Role::Admin(cmd) => admin::run(config, cmd),
        Role::House(args) => house_cli::run(config, args),
    }
}

/// A configuration that does not load ends the command with exit code 2 and one line on
/// stderr that says what to fix: a JSON log event (level ERROR) when JSON logs were asked for,
/// so the log shipper of a service that fails to start gets it as it gets every other line.
fn config_error(e: &horst_config::ConfigError, file: Option<&std::path::Path>) -> ExitCode {
    let env_format = std::env::var("HORST_LOG_FORMAT").ok();
    if horst_config::json_logs_wanted(file, env_format.as_deref()) {
        terminal::log_as_json();
    }
    terminal::warn(&format!("horst: {e}"));
    ExitCode::from(2)
}
