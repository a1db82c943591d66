//! The run-time switches every API process follows (the gateway, self-service keys,
//! sign-up) and the quota numbers in force.

use std::time::Duration;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

use horst_gateway::ToolError;
use horst_store::Store;

use crate::audit::{audit, Action, Detail};

/// Re-reads nothing itself: writes `values` (the configuration as the caller loaded it now)
/// as the quota numbers every process uses from its next second on. Returns what is stored.
pub async fn reload_quotas(
    store: &Store,
    who: &str,
    values: &horst_queue::Quotas,
) -> Result<QuotasShown, ToolError> {
    let before = horst_queue::read_quotas(store).await?;
    horst_queue::write_quotas(store, values, who).await?;
    let changed = before.as_ref().map(|b| &b.values) != Some(values);
    audit(
        store,
        who,
        Action::QuotasReload,
        "quotas",
        Detail::QuotasReload { changed, values },
    )
    .await?;
    show_quotas(store, None).await
}

/// The quota numbers in force and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotasShown {
    /// `stored` or `configuration`.
    pub source: &'static str,
    pub values: Option<horst_queue::Quotas>,
    /// RFC 3339; only for stored values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_at: Option<String>,
    /// Only for stored values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_by: Option<String>,
}

/// The quota numbers in force: the stored ones, else (`fallback`, a process's own
/// configuration) what a process without stored values uses.
pub async fn show_quotas(
    store: &Store,
    fallback: Option<&horst_queue::Quotas>,
) -> Result<QuotasShown, ToolError> {
    Ok(match horst_queue::read_quotas(store).await? {
        Some(s) => QuotasShown {
            source: "stored",
            values: Some(s.values),
            written_at: Some(horst_dates::rfc3339_ms(s.written_at_ms)),
            written_by: Some(s.written_by),
        },
        None => QuotasShown {
            source: "configuration",
            values: fallback.cloned(),
            written_at: None,
            written_by: None,
        },
    })
}

/// The run-time switches as they are now.
///
/// A switch the operator set is stored and every API process follows it; one never set is
/// each process's own configuration (`gateway.mode`, `HORST_GATEWAY_MODE`, ...), which may
/// differ between processes. So the answer names what each running API process uses
/// (`processes`, from their announcements) and which switches they disagree on (`mixed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Switches {
    /// `on`, `off` or `read_only`: what every running API process uses (for a `mixed`
    /// switch, or with none running: the stored value, else the caller's configuration).
    pub gateway: &'static str,
    pub self_service: bool,
    pub sign_up: bool,
    /// The switches running API processes disagree on (`gateway`, `selfService`, `signUp`):
    /// nothing stored, and their configurations differ. Setting the switch settles it.
    pub mixed: Vec<&'static str>,
    /// Every running API process and what it uses now.
    pub processes: Vec<ProcessSwitches>,
}

pub fn gateway_mode_name(mode: horst_config::GatewayMode) -> &'static str {
    match mode {
        horst_config::GatewayMode::On => "on",
        horst_config::GatewayMode::ReadOnly => "read_only",
        horst_config::GatewayMode::Off => "off",
    }
}

/// What one running API process uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessSwitches {
    /// `<hostname>-<pid>-...`.
    pub process: String,
    pub started_at: String,
    pub gateway: &'static str,
    pub self_service: bool,
    pub sign_up: bool,
}

/// What an API process announces: its own configuration of the switches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Announcement {
    started_at_ms: u64,
    gateway: horst_config::GatewayMode,
    self_service: bool,
    sign_up: bool,
}

/// An API process announces itself this often; the announcement lasts [`ANNOUNCE_TTL`].
pub const ANNOUNCE_EVERY: Duration = Duration::from_secs(10);
/// A process not heard of for this long is not running (killed, or cut off from Redis).
pub const ANNOUNCE_TTL: Duration = Duration::from_secs(30);

fn announcement_key(store: &Store, process: &str) -> String {
    store.key(&format!("apiprocess:{process}"))
}

/// Announces this API process (`process`, its configuration `config`) until `shutdown`,
/// then withdraws the announcement.
pub async fn announce(
    store: Store,
    process: String,
    config: std::sync::Arc<horst_config::Config>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let key = announcement_key(&store, &process);
    let started_at_ms = store.now_ms().await.unwrap_or(0);
    let text = serde_json::to_string(&Announcement {
        started_at_ms,
        gateway: config.gateway.mode,
        self_service: config.gateway.self_service_keys,
        sign_up: config.gateway.sign_up,
    })
    .unwrap_or_default();
    loop {
        let set: redis::RedisResult<()> = store
            .conn()
            .set_ex(&key, &text, ANNOUNCE_TTL.as_secs())
            .await;
        if let Err(e) = set {
            tracing::debug!(error = %e, "cannot announce the API process's switches");
        }
        tokio::select! {
            _ = tokio::time::sleep(ANNOUNCE_EVERY) => {}
            _ = shutdown.wait_for(|s| *s) => break,
        }
    }
    let _: redis::RedisResult<()> = store.conn().del(&key).await;
}

/// The switches as a process with configuration `config` uses them now.
async fn used(
    store: &Store,
    config: &horst_config::Config,
) -> Result<(&'static str, bool, bool), ToolError> {
    Ok((
        gateway_mode_name(horst_gateway::mode(store, config).await?),
        horst_gateway::self_service(store, config).await?,
        horst_identity::people::sign_up_open(store, config).await?,
    ))
}

/// The switches every running API process uses; `config` is the caller's configuration
/// (what a process without an announcement would use).
pub async fn switches(store: &Store, config: &horst_config::Config) -> Result<Switches, ToolError> {
    let (gateway, self_service, sign_up) = used(store, config).await?;
    let prefix = store.key("apiprocess:");
    let mut processes = Vec::new();
    for key in store.scan_keys("apiprocess:*").await? {
        let text: Option<String> = store.conn().get(&key).await?;
        let Some(a) = text.and_then(|t| serde_json::from_str::<Announcement>(&t).ok()) else {
            continue;
        };
        let mut theirs = config.clone();
        theirs.gateway.mode = a.gateway;
        theirs.gateway.self_service_keys = a.self_service;
        theirs.gateway.sign_up = a.sign_up;
        let (g, ss, su) = used(store, &theirs).await?;
        processes.push(ProcessSwitches {
            process: key.strip_prefix(&prefix).unwrap_or(&key).to_string(),
            started_at: horst_dates::rfc3339_ms(a.started_at_ms),
            gateway: g,
            self_service: ss,
            sign_up: su,
        });
    }
    processes.sort_by(|a, b| a.process.cmp(&b.process));
    /// The value every process agrees on (`None`: they differ, or none runs).
    fn agreed<T: PartialEq + Copy>(
        processes: &[ProcessSwitches],
        f: impl Fn(&ProcessSwitches) -> T,
    ) -> Option<T> {
        let first = f(processes.first()?);
        processes.iter().all(|p| f(p) == first).then_some(first)
    }
    let mut mixed = Vec::new();
    let running = !processes.is_empty();
    let gateway = agreed(&processes, |p| p.gateway).unwrap_or_else(|| {
        if running {
            mixed.push("gateway");
        }
        gateway
    });
    let self_service = agreed(&processes, |p| p.self_service).unwrap_or_else(|| {
        if running {
            mixed.push("selfService");
        }
        self_service
    });
    let sign_up = agreed(&processes, |p| p.sign_up).unwrap_or_else(|| {
        if running {
            mixed.push("signUp");
        }
        sign_up
    });
    Ok(Switches {
        gateway,
        self_service,
        sign_up,
        mixed,
        processes,
    })
}

/// Switches the agent gateway for every API process.
pub async fn set_gateway_mode(
    store: &Store,
    who: &str,
    mode: horst_config::GatewayMode,
) -> Result<(), ToolError> {
    horst_gateway::set_mode(store, mode).await?;
    let name = gateway_mode_name(mode);
    audit(
        store,
        who,
        Action::GatewayMode,
        "gateway",
        Detail::GatewayMode { mode: name },
    )
    .await
}

/// Switches self-service agent keys (`POST /api/agent-keys`).
pub async fn set_self_service(store: &Store, who: &str, on: bool) -> Result<(), ToolError> {
    horst_gateway::set_self_service(store, on).await?;
    audit(
        store,
        who,
        Action::SelfService,
        "self_service",
        Detail::SelfService { on },
    )
    .await
}

/// Opens or closes sign-up on `/account`.
pub async fn set_sign_up(store: &Store, who: &str, open: bool) -> Result<(), ToolError> {
    horst_identity::people::set_sign_up(store, open).await?;
    audit(
        store,
        who,
        Action::SignUp,
        "sign_up",
        Detail::SignUp { open },
    )
    .await
}
