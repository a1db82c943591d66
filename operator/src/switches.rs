//! The run-time switches every API process follows (the gateway, self-service keys,
//! sign-up) and the quota numbers in force.

use serde::Serialize;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Switches {
    /// `on`, `off` or `read_only`.
    pub gateway: &'static str,
    pub self_service: bool,
    pub sign_up: bool,
}

pub fn gateway_mode_name(mode: horst_config::GatewayMode) -> &'static str {
    match mode {
        horst_config::GatewayMode::On => "on",
        horst_config::GatewayMode::ReadOnly => "read_only",
        horst_config::GatewayMode::Off => "off",
    }
}

pub async fn switches(store: &Store, config: &horst_config::Config) -> Result<Switches, ToolError> {
    Ok(Switches {
        gateway: gateway_mode_name(horst_gateway::mode(store, config).await?),
        self_service: horst_gateway::self_service(store, config).await?,
        sign_up: horst_identity::people::sign_up_open(store, config).await?,
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
