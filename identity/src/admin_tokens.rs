//! Operator tokens for the REST admin API and the `/admin` sign-in, with rotation: any
//! number may be active at once, so a new one is handed out, clients move to it, and the old
//! one is retired. Stored only as SHA-256.
//!
//! The configured `gateway.admin_token` is the first seed: a starting process stores its
//! hash as an active token if that hash was never stored before. A retired configured token
//! therefore stays retired across restarts, and a changed setting adds the new token.
//!
//! Layout (under the store prefix):
//! - `admintoken:<sha256>` hash: `id`, `label`, `createdAtMs`, `createdBy`, `retiredAtMs`
//!   (`0` while active)
//! - `admintokens` hash: id -> sha256, for listing and retiring by id

use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::{lua, Store};
use redis::AsyncCommands;
use serde::Serialize;

use crate::IdentityError;
use crate::{random_hex, rfc3339};

const TOKEN_PREFIX: &str = "hat_";

/// The longest label an admin token may have, in characters (after cleaning). The `/admin`
/// page reads it from `GET /api/admin/admin-tokens` (`maxLabelChars`) for its field's
/// `maxlength` and counter.
pub const MAX_LABEL_CHARS: usize = 40;

fn hash(token: &str) -> String {
    horst_store::digest::sha256_hex(token)
}

/// An admin token as listed (never the token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminTokenInfo {
    pub id: String,
    pub label: String,
    pub created_at: String,
    pub created_by: String,
    pub retired_at: Option<String>,
    pub active: bool,
}

/// `lua/admin_token_add.lua`: a token shown once survives a failover.
static ADD: Script<i64> = Script::new(Decl {
    file: lua!("lua/admin_token_add.lua"),
    keys: 2,
    argv: Argv::Exactly(4),
    writes: Writes::Durable,
});

/// `lua/admin_token_retire.lua`: a retired token stays retired after a failover.
static RETIRE: Script<String> = Script::new(Decl {
    file: lua!("lua/admin_token_retire.lua"),
    keys: 3,
    argv: Argv::Exactly(3),
    writes: Writes::Durable,
});

pub(crate) fn scripts() -> [&'static dyn horst_store::script::Registered; 2] {
    [&ADD, &RETIRE]
}

fn record_key(store: &Store, token_hash: &str) -> String {
    store.key(&format!("admintoken:{token_hash}"))
}

async fn add(
    store: &Store,
    token_hash: &str,
    id: &str,
    label: &str,
    who: &str,
) -> Result<bool, IdentityError> {
    let added = ADD
        .call(store)
        .key(record_key(store, token_hash))
        .key(store.key("admintokens"))
        .arg(id)
        .arg(label)
        .arg(who)
        .arg(token_hash)
        .run()
        .await?;
    Ok(added == 1)
}

/// Stores the configured token as active unless its hash was stored before (active or
/// retired). Returns whether it was added now.
pub async fn seed(store: &Store, configured: &str) -> Result<bool, IdentityError> {
    if configured.is_empty() {
        return Ok(false);
    }
    add(
        store,
        &hash(configured),
        &config_id(configured),
        "gateway.admin_token",
        "config",
    )
    .await
}

/// The id the configured admin token is listed under.
pub fn config_id(configured: &str) -> String {
    format!("config-{}", &hash(configured)[..8])
}

/// The id of the active admin token `given`, or `None`. The lookup is by the SHA-256 of
/// what was presented, so the secret itself is never compared.
pub async fn check(store: &Store, given: &str) -> Result<Option<String>, IdentityError> {
    if given.is_empty() || given.len() > 256 {
        return Ok(None);
    }
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(record_key(store, &hash(given)))
        .arg(&["id", "retiredAtMs"])
        .query_async(&mut store.conn())
        .await?;
    match (v.first().cloned().flatten(), v.get(1).cloned().flatten()) {
        (Some(id), Some(retired)) if retired == "0" => Ok(Some(id)),
        _ => Ok(None),
    }
}

/// Whether the admin token with this id is active.
pub async fn is_active(store: &Store, id: &str) -> Result<bool, IdentityError> {
    Ok(list(store).await?.iter().any(|t| t.id == id && t.active))
}

/// Whether any admin token is active (without one the REST admin API answers 404).
pub async fn any_active(store: &Store) -> Result<bool, IdentityError> {
    Ok(list(store).await?.iter().any(|t| t.active))
}

/// A new active token; the token is shown once.
pub async fn create(
    store: &Store,
    who: &str,
    label: Option<&str>,
) -> Result<(String, AdminTokenInfo), IdentityError> {
    let label = horst_text::clean_line(label.unwrap_or(""));
    let chars = label.chars().count();
    if chars > MAX_LABEL_CHARS {
        return Err(IdentityError::invalid(format!(
            "label must be at most {MAX_LABEL_CHARS} characters (this one has {chars}); shorten it"
        )));
    }
    let token = format!("{TOKEN_PREFIX}{}", random_hex(24)?);
    let id = format!("at-{}", random_hex(4)?);
    if !add(store, &hash(&token), &id, &label, who).await? {
        return Err(IdentityError::internal("admin token collision"));
    }
    let info = list(store)
        .await?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| IdentityError::internal("the new admin token is not listed"))?;
    Ok((token, info))
}

/// Every admin token, active ones first, then newest first.
pub async fn list(store: &Store) -> Result<Vec<AdminTokenInfo>, IdentityError> {
    let ids: Vec<(String, String)> = store.conn().hgetall(store.key("admintokens")).await?;
    let mut out = Vec::with_capacity(ids.len());
    for (id, h) in ids {
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(record_key(store, &h))
            .arg(&["label", "createdAtMs", "createdBy", "retiredAtMs"])
            .query_async(&mut store.conn())
            .await?;
        let get = |i: usize| v.get(i).cloned().flatten().unwrap_or_default();
        let created: u64 = get(1).parse().unwrap_or(0);
        let retired: u64 = get(3).parse().unwrap_or(0);
        out.push((
            created,
            AdminTokenInfo {
                id,
                label: get(0),
                created_at: rfc3339(created),
                created_by: get(2),
                retired_at: (retired > 0).then(|| rfc3339(retired)),
                active: retired == 0,
            },
        ));
    }
    out.sort_by(|a, b| b.1.active.cmp(&a.1.active).then(b.0.cmp(&a.0)));
    Ok(out.into_iter().map(|(_, t)| t).collect())
}

/// Retires a token: it is refused from now on and its `/admin` sessions end. The last
/// active token cannot be retired (`conflict`): create its successor first.
pub async fn retire(store: &Store, id: &str) -> Result<AdminTokenInfo, IdentityError> {
    // The witness is another token seen active; a retirement at the same moment may
    // retire it first, and then the next read picks another (or finds this the last).
    let mut r = String::from("witness");
    for _ in 0..5 {
        let ids: Vec<(String, String)> = store.conn().hgetall(store.key("admintokens")).await?;
        let Some(target) = ids.iter().find(|(i, _)| i == id).map(|(_, h)| h.clone()) else {
            r = "missing".into();
            break;
        };
        let listed = list(store).await?;
        let Some(witness) = listed.iter().find(|t| t.active && t.id != id) else {
            r = if listed.iter().any(|t| t.id == id && !t.active) {
                "retired".into()
            } else {
                "last".into()
            };
            break;
        };
        let witness_hash = ids
            .iter()
            .find(|(i, _)| *i == witness.id)
            .map(|(_, h)| h.as_str())
            .unwrap_or_default();
        r = RETIRE
            .call(store)
            .key(store.key("admintokens"))
            .key(record_key(store, &target))
            .key(record_key(store, witness_hash))
            .arg(id)
            .arg(&target)
            .arg(&witness.id)
            .run()
            .await?;
        if r != "witness" {
            break;
        }
    }
    match r.as_str() {
        "ok" => {}
        "missing" => {
            return Err(IdentityError::not_found(format!(
                "no admin token {id}; list them with `horst admin admin-token list`"
            )))
        }
        "retired" => {
            return Err(IdentityError::conflict(format!("admin token {id} is already retired"),
            ))
        }
        "witness" => {
            return Err(IdentityError::conflict(format!(
                "the admin tokens kept changing while admin token {id} was being retired; list them and try again"
            )))
        }
        _ => {
            return Err(IdentityError::conflict(format!(
                    "admin token {id} is the last active one; create its successor first (`horst admin admin-token create`), move your clients to it, then retire this one"
                ),
            ))
        }
    }
    crate::web_sessions::end_for_admin_token(store, id).await?;
    list(store)
        .await?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| IdentityError::internal("the retired admin token is not listed"))
}
