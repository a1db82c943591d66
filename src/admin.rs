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
    /// Agent tokens for the RCADIA agent protocol.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Users who sign in (the browser bridge) with POST /api/v1/auth/session.
    #[command(subcommand)]
    User(UserCommand),
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create a new agent identity and print its token once, on its own line.
    Create {
        /// Comma-separated scopes: play (join and play sessions), host (run sessions).
        #[arg(long, value_delimiter = ',', default_value = "play")]
        scopes: Vec<String>,
        /// The agent's name (its default asName when it joins).
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a user; the password is prompted for, or read from stdin.
    Create {
        username: String,
        /// Read the password from the first line of stdin (for scripts).
        #[arg(long)]
        password_stdin: bool,
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
            AdminCommand::Token(TokenCommand::Create { scopes, name }) => {
                token_create(&store, &scopes, name.as_deref()).await
            }
            AdminCommand::User(UserCommand::Create {
                username,
                password_stdin,
            }) => user_create(&store, &username, password_stdin).await,
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

async fn auth(store: &horst_store::Store) -> Option<horst_rcadia::auth::Auth> {
    match horst_rcadia::auth::Auth::new(store.clone()).await {
        Ok(a) => Some(a),
        Err(e) => {
            eprintln!("horst: {e}");
            None
        }
    }
}

async fn token_create(
    store: &horst_store::Store,
    scopes: &[String],
    name: Option<&str>,
) -> ExitCode {
    let Some(auth) = auth(store).await else {
        return ExitCode::from(1);
    };
    match auth.create_token(scopes, name).await {
        Ok((token, agent)) => {
            eprintln!(
                "horst: created agent {agent} with scopes {}; the token below is shown only once",
                scopes.join(",")
            );
            println!("{token}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("horst: {e}");
            ExitCode::from(1)
        }
    }
}

async fn user_create(store: &horst_store::Store, username: &str, from_stdin: bool) -> ExitCode {
    use std::io::BufRead;
    if !from_stdin {
        // No terminal tricks: the password is typed visibly; scripts use --password-stdin.
        eprint!("password for {username}: ");
    }
    let mut line = String::new();
    if let Err(e) = std::io::stdin().lock().read_line(&mut line) {
        eprintln!("horst: cannot read the password: {e}");
        return ExitCode::from(1);
    }
    let password = line.trim_end_matches(['\r', '\n']);
    let Some(auth) = auth(store).await else {
        return ExitCode::from(1);
    };
    match auth.create_user(username, password).await {
        Ok(()) => {
            eprintln!("horst: created user {username}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("horst: {e}");
            ExitCode::from(1)
        }
    }
}
