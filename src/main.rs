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
    common: CommonArgs,
    #[command(subcommand)]
    command: Command,
}

/// Flags every subcommand takes, so `horst admin ... --data DIR` reaches the same store as
/// the `horst up --data DIR` that is running.
#[derive(Args, Debug, Clone)]
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

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the API and one worker on one machine: the worker is a child process that is
    /// started again if it dies (an out-of-memory planner takes down only the worker).
    /// Starts the private redis-server when no Redis URL is configured, and stops it on exit.
    Up,
    /// Run only the HTTP API. Scale out with several API processes on one Redis.
    Api,
    /// Run only a worker (planner and referee jobs). Scale out with more worker processes.
    Worker,
    /// Operator actions on the store of a running horst (its --data, --redis or --config; a
    /// store that is not running is never started).
    #[command(subcommand)]
    Admin(admin::AdminCommand),
    /// The house host: keep RCADIA's own tables open (protocol section 8), each game page in
    /// a headless Chromium. Needs Debian's `chromium` and an agent token with the host scope.
    House(house_cli::HouseArgs),
    /// Offline level tools on local files: validate, render, simulate (no server needed).
    #[command(subcommand)]
    Map(map_cli::MapCommand),
    /// Play a game as an agent: join an open table, play legal moves, follow rematches,
    /// print what happens (needs a token with the play scope; no Redis).
    Play(play::PlayArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The offline tools and the agent CLI need neither configuration nor Redis.
    let command = match cli.command {
        Command::Map(cmd) => return map_cli::run(cmd),
        Command::Play(args) => return play::run(args, &cli.common),
        other => other,
    };
    let flags = horst_config::Flags {
        listen: cli.common.listen.clone(),
        redis: cli.common.redis.clone(),
        data: cli.common.data.clone(),
    };
    let env = match horst_config::Config::environment() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("horst: {e}");
            return ExitCode::from(2);
        }
    };
    let config = match horst_config::Config::load(cli.common.config.as_deref(), &env, &flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("horst: {e}");
            return ExitCode::from(2);
        }
    };
    // An operator's command prints its answer on stdout and says what went wrong on stderr:
    // the serving roles' info lines ("connected to Redis") are noise there, so it logs from
    // `warn` unless a level other than the default was asked for (HORST_LOG still wins).
    let level = match command {
        Command::Admin(_) if config.log.level == "info" => "warn",
        _ => config.log.level.as_str(),
    };
    horst_telemetry::init_tracing(config.log.format == horst_config::LogFormat::Json, level);
    match command {
        Command::Up => serve::run(
            config,
            serve::Mode::Up {
                config_file: cli.common.config.clone(),
            },
        ),
        Command::Api => serve::run(config, serve::Mode::Api),
        Command::Worker => serve::run(config, serve::Mode::Worker),
        Command::Admin(cmd) => admin::run(config, cmd),
        Command::House(args) => house_cli::run(config, args),
        Command::Map(_) | Command::Play(_) => {
            unreachable!("handled before loading the configuration")
        }
    }
}
