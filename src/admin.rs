//! `horst admin ...`: operator actions. They reach the same store as the running horst (its
//! private Redis under --data, or --redis).

use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use horst_config::{Config, GatewayMode};

use crate::redis_setup;

#[derive(Subcommand, Debug)]
pub enum AdminCommand {
    /// Show the Redis in use (version, eviction policy, AOF) and the live workers.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Switch the agent gateway (POST /api/mcp) for every API process: on, off (404) or
    /// read-only (only the anonymous tools).
    Gateway {
        #[arg(value_enum)]
        mode: GatewaySwitch,
    },
    /// Switch self-service agent keys (POST /api/agent-keys) on or off.
    SelfService {
        #[arg(value_enum)]
        state: OnOff,
    },
    /// Accounts of the agent gateway.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Agent keys.
    #[command(subcommand)]
    Key(KeyCommand),
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

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GatewaySwitch {
    On,
    Off,
    ReadOnly,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Subcommand, Debug)]
pub enum AccountCommand {
    /// Create an account (2-32 lowercase letters, digits, _ or -).
    Create {
        name: String,
        /// Trust tier: 0 (new), 1 or 2.
        #[arg(long, default_value_t = 0)]
        trust: u8,
    },
    /// Set an account's trust tier (0, 1 or 2).
    Trust { name: String, trust: u8 },
    /// Block an account: every request with its keys is refused (403).
    Block { name: String },
    /// Lift a block.
    Unblock { name: String },
}

#[derive(Subcommand, Debug)]
pub enum KeyCommand {
    /// Create a key for ACCOUNT; the key is printed once, on its own line.
    Create {
        account: String,
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke the key with this prefix (`gcv_` and 8 characters, as listed at creation).
    Revoke { prefix: String },
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
            AdminCommand::Gateway { mode } => {
                let mode = match mode {
                    GatewaySwitch::On => GatewayMode::On,
                    GatewaySwitch::Off => GatewayMode::Off,
                    GatewaySwitch::ReadOnly => GatewayMode::ReadOnly,
                };
                report(
                    horst_gateway::set_mode(&store, mode)
                        .await
                        .map(|_| format!("gateway: {mode:?}")),
                )
            }
            AdminCommand::SelfService { state } => {
                let on = matches!(state, OnOff::On);
                report(
                    horst_gateway::set_self_service(&store, on)
                        .await
                        .map(|_| format!("self-service keys: {}", if on { "on" } else { "off" })),
                )
            }
            AdminCommand::Account(cmd) => account(&store, cmd).await,
            AdminCommand::Key(cmd) => key(&store, cmd).await,
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

fn report<E: std::fmt::Display>(result: Result<String, E>) -> ExitCode {
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("horst: {e}");
            ExitCode::from(1)
        }
    }
}

async fn account(store: &horst_store::Store, cmd: AccountCommand) -> ExitCode {
    use horst_gateway::accounts;
    report(match cmd {
        AccountCommand::Create { name, trust } => accounts::create_account(store, &name, trust)
            .await
            .map(|_| format!("account {name} created (trust {trust})")),
        AccountCommand::Trust { name, trust } if trust <= 2 => {
            accounts::set_account_field(store, &name, "trust", &trust.to_string())
                .await
                .map(|_| format!("account {name}: trust {trust}"))
        }
        AccountCommand::Trust { .. } => Err(horst_gateway::AccountError::Invalid(
            "trust must be 0, 1 or 2".into(),
        )),
        AccountCommand::Block { name } => accounts::set_account_field(store, &name, "blocked", "1")
            .await
            .map(|_| format!("account {name} blocked")),
        AccountCommand::Unblock { name } => {
            accounts::set_account_field(store, &name, "blocked", "0")
                .await
                .map(|_| format!("account {name} unblocked"))
        }
    })
}

async fn key(store: &horst_store::Store, cmd: KeyCommand) -> ExitCode {
    use horst_gateway::accounts;
    match cmd {
        KeyCommand::Create { account, label } => {
            match accounts::create_key(store, &account, label.as_deref()).await {
                Ok(created) => {
                    eprintln!(
                        "key {} for {account} (shown once; stored only as a hash):",
                        created.prefix
                    );
                    println!("{}", created.key);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("horst: {e}");
                    ExitCode::from(1)
                }
            }
        }
        KeyCommand::Revoke { prefix } => report(
            accounts::revoke_key(store, &prefix)
                .await
                .map(|account| format!("key {prefix} of {account} revoked")),
        ),
    }
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
