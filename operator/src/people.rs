//! Accounts, people, agent keys, RCADIA tokens and admin tokens, as the operator changes
//! them (the records are `horst-identity`'s).

use horst_gateway::ToolError;
use horst_identity::auth::Auth;
use horst_store::Store;
use serde::Serialize;

use crate::audit::{audit, Action, Detail};

async fn set_account(
    store: &Store,
    who: &str,
    action: Action,
    name: &str,
    field: &str,
    value: &str,
    detail: Detail<'_>,
) -> Result<(), ToolError> {
    horst_identity::accounts::set_account_field(store, name, field, value)
        .await
        .map_err(ToolError::from)?;
    audit(store, who, action, name, detail).await
}

/// Blocks or unblocks an account: a blocked account's keys get 403 and its board posts vanish.
pub async fn set_blocked(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
    blocked: bool,
) -> Result<(), ToolError> {
    // The built-in levels are this account's revisions: blocked, every shipped level would
    // vanish for players and agents alike (its revisions are hidden with it), which no
    // operator means by blocking an account.
    if blocked && name == horst_gateway::builtin::OWNER {
        return Err(ToolError::invalid(format!(
            "the account {name} owns the built-in levels, and blocking it would hide every one of them from players and agents; to take one level down, quarantine its revision (`horst admin level quarantine REVISION`) instead"
        )));
    }
    let (action, value) = if blocked {
        (Action::Block, "1")
    } else {
        (Action::Unblock, "0")
    };
    let detail = Detail::Blocked { blocked: value };
    set_account(store, who, action, name, "blocked", value, detail).await?;
    if blocked {
        // Their browser sessions and RCADIA JWTs end now, not at their expiry.
        horst_identity::people::end_sessions(store, auth, name).await?;
    }
    Ok(())
}

/// Blocks an account and ends its work: [`set_blocked`], then every job of it waiting or
/// running now is cancelled ([`crate::jobs::cancel_jobs_of`], reason
/// [`crate::jobs::BLOCKED_REASON`]). What the REST admin API, the admin page and
/// `horst admin account block` do. Answers the ids of the jobs cancelled.
pub async fn block_account(
    store: &Store,
    auth: &Auth,
    queue: &horst_queue::Queue,
    who: &str,
    name: &str,
) -> Result<Vec<String>, ToolError> {
    set_blocked(store, auth, who, name, true).await?;
    crate::jobs::cancel_jobs_of(store, queue, who, name, crate::jobs::BLOCKED_REASON).await
}

pub async fn set_trust(store: &Store, who: &str, name: &str, trust: u8) -> Result<(), ToolError> {
    if trust > 2 {
        return Err(ToolError::invalid("trust must be 0, 1 or 2"));
    }
    let value = trust.to_string();
    let detail = Detail::TrustField { trust: &value };
    set_account(store, who, Action::Trust, name, "trust", &value, detail).await
}

/// An account without a password (its keys are made by the operator).
pub async fn create_account(
    store: &Store,
    who: &str,
    name: &str,
    trust: u8,
) -> Result<(), ToolError> {
    horst_identity::accounts::create_account(store, name, trust)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::AccountCreate,
        name,
        Detail::Trust { trust },
    )
    .await
}

/// Gives a person the operator role (they may open `/admin`) or takes it.
pub async fn set_operator_role(
    store: &Store,
    who: &str,
    name: &str,
    operator: bool,
) -> Result<(), ToolError> {
    horst_identity::people::set_operator(store, name, operator).await?;
    audit(
        store,
        who,
        Action::OperatorRole,
        name,
        Detail::OperatorRole { operator },
    )
    .await
}

/// An agent key for `account`, shown once.
pub async fn create_key(
    store: &Store,
    who: &str,
    account: &str,
    label: Option<&str>,
) -> Result<horst_identity::accounts::CreatedKey, ToolError> {
    let created = horst_identity::accounts::create_key(store, account, label)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::KeyCreate,
        &created.prefix,
        Detail::KeyCreate {
            account,
            id: &created.id,
        },
    )
    .await?;
    Ok(created)
}

/// Revokes the key with this prefix; returns its account.
pub async fn revoke_key(store: &Store, who: &str, prefix: &str) -> Result<String, ToolError> {
    let account = horst_identity::accounts::revoke_key(store, prefix)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::KeyRevoke,
        prefix,
        Detail::KeyRevoke { account: &account },
    )
    .await?;
    Ok(account)
}

/// An RCADIA agent token (`house`: the house host's identity); returns (token, agent id).
/// The token is shown once.
pub async fn create_token(
    store: &Store,
    auth: &Auth,
    who: &str,
    scopes: &[String],
    name: Option<&str>,
    house: bool,
) -> Result<(String, String), ToolError> {
    let (token, agent) = auth
        .create_token_as(scopes, name, house)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::TokenCreate,
        &agent,
        Detail::TokenCreate {
            house,
            name,
            scopes,
        },
    )
    .await?;
    Ok((token, agent))
}

/// Sets (`Some`) or removes (`None`) the burst limit of agent `agent`'s RCADIA token, in
/// requests per minute (every process applies it within `horst_identity::auth::EPOCH_CHECK`).
pub async fn set_token_burst(
    store: &Store,
    auth: &Auth,
    who: &str,
    agent: &str,
    per_minute: Option<u32>,
) -> Result<horst_identity::auth::TokenInfo, ToolError> {
    let info = auth
        .set_token_burst(agent, per_minute)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::TokenLimit,
        agent,
        Detail::TokenLimit { per_minute },
    )
    .await?;
    Ok(info)
}

/// Revokes agent `agent`'s RCADIA token (every process refuses it within
/// `horst_identity::auth::EPOCH_CHECK`).
pub async fn revoke_token(
    store: &Store,
    auth: &Auth,
    who: &str,
    agent: &str,
) -> Result<horst_identity::auth::TokenInfo, ToolError> {
    let info = auth.revoke_token(agent).await.map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::TokenRevoke,
        agent,
        Detail::TokenRevoke {
            name: info.name.as_deref(),
            scopes: &info.scopes,
        },
    )
    .await?;
    Ok(info)
}

/// A person's account with a password (RCADIA sign-in and `/account`).
pub async fn create_user(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
    password: &str,
    trust: u8,
) -> Result<(), ToolError> {
    horst_identity::people::create(
        store,
        auth,
        name,
        password,
        trust,
        horst_identity::people::Existing::GivePassword,
    )
    .await?;
    audit(
        store,
        who,
        Action::UserCreate,
        name,
        Detail::Trust { trust },
    )
    .await
}

/// A new password for a person; their sessions and JWTs end.
pub async fn set_user_password(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
    password: &str,
    revoke_keys: bool,
) -> Result<PasswordSet, ToolError> {
    // One step: the password, the end of every session and JWT, and the keys when asked.
    let keys_revoked =
        horst_identity::people::change_password(store, auth, name, password, revoke_keys)
            .await?
            .keys_revoked;
    audit(
        store,
        who,
        Action::UserPasswd,
        name,
        Detail::UserPasswd {
            keys_revoked: &keys_revoked,
        },
    )
    .await?;
    let keys_remaining =
        horst_identity::accounts::list_keys(store, Some(name), false, 0, usize::MAX)
            .await?
            .total;
    Ok(PasswordSet {
        keys_revoked,
        keys_remaining,
    })
}

/// What an operator's password reset did to the person's agent keys: a key is an agent's
/// credential, not a sign-in, so a reset ends every session and JWT but revokes keys only
/// when asked (`--revoke-keys`, `"revokeKeys": true`), as the person's own change on
/// `/account` does.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordSet {
    /// Prefixes of the keys revoked.
    pub keys_revoked: Vec<String>,
    /// Active keys left.
    pub keys_remaining: usize,
}

/// Deletes a person's sign-in (see `people::delete`).
pub async fn delete_user(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
) -> Result<horst_identity::people::Deleted, ToolError> {
    let deleted = horst_identity::people::delete(store, auth, name).await?;
    audit(
        store,
        who,
        Action::UserDelete,
        name,
        Detail::UserDelete {
            keys_revoked: &deleted.keys_revoked,
        },
    )
    .await?;
    Ok(deleted)
}

/// A new admin token, shown once; the old ones stay active until retired.
pub async fn create_admin_token(
    store: &Store,
    who: &str,
    label: Option<&str>,
) -> Result<(String, horst_identity::admin_tokens::AdminTokenInfo), ToolError> {
    let (token, info) = horst_identity::admin_tokens::create(store, who, label).await?;
    audit(
        store,
        who,
        Action::AdminTokenCreate,
        &info.id,
        Detail::AdminTokenCreate { label: &info.label },
    )
    .await?;
    Ok((token, info))
}

/// Stores the configured `gateway.admin_token` as an active admin token (once, by hash; a
/// retired one stays retired), with an audit entry when it is new: a token that appeared
/// from a process's configuration or environment is an admin credential like any other.
pub async fn seed_admin_token(store: &Store, configured: &str) -> Result<bool, ToolError> {
    let id = horst_identity::admin_tokens::config_id(configured);
    let added = horst_identity::admin_tokens::seed(store, configured).await?;
    if added {
        audit(
            store,
            "config",
            Action::AdminTokenCreate,
            &id,
            Detail::AdminTokenCreate {
                label: "gateway.admin_token",
            },
        )
        .await?;
    }
    Ok(added)
}

/// Retires an admin token (never the last active one).
pub async fn retire_admin_token(
    store: &Store,
    who: &str,
    id: &str,
) -> Result<horst_identity::admin_tokens::AdminTokenInfo, ToolError> {
    let info = horst_identity::admin_tokens::retire(store, id).await?;
    audit(store, who, Action::AdminTokenRetire, id, Detail::None).await?;
    Ok(info)
}
