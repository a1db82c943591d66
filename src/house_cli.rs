//! `horst house`: the house host (protocol section 8). The work is in the `horst-house`
//! crate; this file turns the configuration and flags into its settings and runs it until
//! SIGTERM or Ctrl-C.

use std::process::ExitCode;

use clap::Args;

#[derive(Args, Debug)]
pub struct HouseArgs {
    /// The backend to host on, http://HOST:PORT (default: house.backend, else server.listen).
    #[arg(long, value_name = "URL")]
    backend: Option<String>,
    /// An agent token with the `host` scope (default: house.token / HORST_HOUSE_TOKEN).
    /// Prefer the environment: a flag shows up in the process list.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
}

// Hand-written so the token never reaches a log line or a panic message.
impl std::fmt::Display for HouseArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "backend={:?}", self.backend)
    }
}

pub fn run(config: horst_config::Config, args: HouseArgs) -> ExitCode {
    let h = &config.house;
    let configured = args
        .backend
        .clone()
        .filter(|b| !b.is_empty())
        .or_else(|| Some(h.backend.clone()).filter(|b| !b.is_empty()));
    let backend = match configured.map_or_else(|| config.local_base_url(), Ok) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("horst house: {e}; give --backend URL or set house.backend");
            return ExitCode::from(2);
        }
    };
    let settings = horst_house::HouseSettings {
        backend,
        token: args.token.clone().unwrap_or_else(|| h.token.clone()),
        games: h.games.clone(),
        max_tables: h.max_tables as usize,
        chromium: h.chromium.clone().into(),
        chromium_args: h.chromium_args.clone(),
        game_query: h.game_query.clone(),
    };
    if let Err(e) = settings.validate() {
        eprintln!("horst house: {e}");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("horst house: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(horst_house::run(settings, stop_signal())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("horst house: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    tracing::info!("stopping: ending live tables with host_left");
}
