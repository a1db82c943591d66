//! `horst admin ...`: operator actions. They reach the same store as the running horst (its
//! private Redis under --data, or --redis).

use std::process::ExitCode;

use clap::Subcommand;
use horst_config::Config;

use crate::redis_setup;

#[derive(Subcommand, Debug)]
pub enum AdminCommand {
    /// Show the Redis in use (version, eviction policy, AOF) and the live workers.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(config: Config, cmd: AdminCommand) -> ExitCode {
    let redis = match redis_setup::resolve(&config, |line| eprintln!("{line}")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("horst: {e}");
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("horst: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async {
        let store = match horst_store::Store::connect(&redis.url, &config.redis.key_prefix).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("horst: {e}");
                return ExitCode::from(1);
            }
        };
        match cmd {
            AdminCommand::Status { json } => status(&store, json).await,
        }
    });
    redis_setup::stop_private(&redis);
    code
}

async fn status(store: &horst_store::Store, json: bool) -> ExitCode {
    let facts = match store.server_facts().await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("horst: {e}");
            return ExitCode::from(1);
        }
    };
    let workers = horst_worker::live_workers(store).await.unwrap_or_default();
    if json {
        let value = serde_json::json!({
            "redis": {
                "target": store.target(),
                "version": facts.version,
                "maxmemoryPolicy": facts.maxmemory_policy,
                "appendonly": facts.appendonly,
            },
            "workers": workers,
        });
        println!("{value}");
    } else {
        println!("redis:    {} (version {})", store.target(), facts.version);
        println!(
            "          maxmemory-policy {}, AOF {}",
            facts.maxmemory_policy.as_deref().unwrap_or("unknown"),
            match facts.appendonly {
                Some(true) => "on",
                Some(false) => "OFF",
                None => "unknown",
            }
        );
        println!("workers:  {} live", workers.len());
        for w in workers {
            println!("          {w}");
        }
    }
    ExitCode::SUCCESS
}
