//! Accounts and agent keys in Redis.
//!
//! Layout (under the store prefix):
//! - `account:<name>` hash: `name`, `kind` (`agent`/`human`), `trust`, `blocked`,
//!   `displayName`, `createdAtMs`
//! - `account:<name>:keys` set: SHA-256 hashes of the account's active keys; a key works only
//!   while it is in this set (so a password change revokes every key at once, in the same
//!   step: `people::change_password`) and its record is not marked revoked
//! - `key:<sha256>` hash: `hash`, `id`, `prefix`, `account`, `label`, `createdAtMs`, `revoked`,
//!   `lastUsedMs` (written at most once a minute per key, so a busy agent costs no extra
//!   write per request)
//! - `keyprefix:<prefix>` string: the hash of the key with that prefix (for revocation)
//! - `agentkeys:net:<network>` and `agentkeys:all` sorted sets: self-service creations of
//!   the last 24 hours (rolling caps)
//!
//! Architecture invariant: a key is shown once and stored only as its SHA-256.

use redis::AsyncCommands;
use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::scripts::{
    AccountCreated, AgentCreated, KeyCreated, ACCOUNT_CREATE, AGENT_CREATE, KEY_CREATE,
};
use crate::{random_hex, redis_now_ms, rfc3339, IdentityError, KeyCap};
use horst_store::Store;

/// At most this many active keys per account.
pub const MAX_ACTIVE_KEYS: usize = 5;
/// The longest label a key may have, in characters (after cleaning). The account page reads
/// it from `GET /api/account/keys` (`maxLabelChars`) for its field's `maxlength`.
pub const MAX_LABEL_CHARS: usize = 40;
pub const KEY_PREFIX: &str = "gcv_";
const KEY_HEX: usize = 48;
pub const SELF_SERVICE_WINDOW_MS: u64 = 24 * 3600 * 1000;
pub const SELF_SERVICE_PER_NETWORK: u32 = 3;
pub const SELF_SERVICE_TOTAL: u32 = 50;

/// The authenticated caller of a key tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub trust: u8,
    pub blocked: bool,
    /// The hash of the key the request came with ([`authenticate`]); `None` for an account
    /// loaded by name. Work that outlives the request (a submission's check) asks
    /// [`still_allowed`] with it before it leaves a trace.
    pub key_hash: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// Unknown, malformed or revoked key: 401.
    #[error("{0}")]
    Unauthorized(String),
    /// The key's account is blocked: 403.
    #[error("{0}")]
    Blocked(String),
    #[error("store: {0}")]
    Store(String),
    /// Redis cannot be reached now (`horst_store::is_unreachable`): retry later.
    #[error("store unreachable: {0}")]
    Unreachable(String),
}

/// A key as shown once to its creator.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CreatedKey {
    pub key: String,
    pub id: String,
    pub prefix: String,
    pub username: String,
    pub display_name: Option<String>,
    pub created_at: String,
}

pub fn hash_key(key: &str) -> String {
    horst_store::digest::sha256_hex(key)
}

/// Compares a presented secret with the expected one (the operator token) through their
/// SHA-256 in constant time: neither the length nor a matching prefix leaks through timing.
pub fn secret_matches(given: &str, expected: &str) -> bool {
    !expected.is_empty()
        && bool::from(
            Sha256::digest(given.as_bytes())
                .as_slice()
                .ct_eq(Sha256::digest(expected.as_bytes()).as_slice()),
        )
}

fn well_formed(key: &str) -> bool {
    key.len() == KEY_PREFIX.len() + KEY_HEX
        && key.starts_with(KEY_PREFIX)
        && key[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Names an operator may give accounts: 2-32 lowercase letters, digits, `_` or `-`.
pub fn valid_account_name(name: &str) -> bool {
    (2..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// The credentials of an `Authorization: Bearer ...` value, trimmed: the scheme is matched
/// without regard to case (RFC 9110, 11.1: `bearer`, `Bearer` and `BEARER` are one scheme)
/// and may be followed by spaces or tabs. `None` for another scheme or no credentials.
pub fn bearer_credentials(header: &str) -> Option<&str> {
    let (scheme, rest) = header.trim_start().split_once([' ', '\t'])?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    Some(rest.trim()).filter(|t| !t.is_empty())
}

/// Resolves an `Authorization` header value to the caller; `Ok(None)` without one.
pub async fn authenticate(
    store: &Store,
    header: Option<&str>,
) -> Result<Option<Account>, AuthError> {
    let Some(header) = header else {
        return Ok(None);
    };
    let unauthorized = || {
        AuthError::Unauthorized(
            "unknown, malformed or revoked agent key; send `Authorization: Bearer gcv_...` with an active key".into(),
        )
    };
    let token = bearer_credentials(header).ok_or_else(unauthorized)?;
    if !well_formed(token) {
        return Err(unauthorized());
    }
    let hash = hash_key(token);
    let mut conn = store.conn();
    let record = store.key(&format!("key:{hash}"));
    let fields: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(&record)
        .arg(&["hash", "account", "revoked", "lastUsedMs"])
        .query_async(&mut conn)
        .await
        .map_err(AuthError::from_redis)?;
    let (Some(stored), Some(account), Some(revoked)) = (
        fields.first().cloned().flatten(),
        fields.get(1).cloned().flatten(),
        fields.get(2).cloned().flatten(),
    ) else {
        return Err(unauthorized());
    };
    let last_used: u64 = fields
        .get(3)
        .cloned()
        .flatten()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // The lookup is by hash already; the constant-time compare keeps a corrupted or
    // colliding record from ever matching by accident and costs nothing.
    if !bool::from(stored.as_bytes().ct_eq(hash.as_bytes())) || revoked != "0" {
        return Err(unauthorized());
    }
    let (acct, active) = load_account_with_key(store, &account, &hash)
        .await
        .map_err(AuthError::from_redis)?;
    let mut acct = acct.filter(|_| active).ok_or_else(unauthorized)?;
    acct.key_hash = Some(hash);
    if acct.blocked {
        return Err(AuthError::Blocked(
            "this account is blocked by the server's operator: its keys are refused until the operator lifts the block; another key of this account will not help".into(),
        ));
    }
    // "Last used" is for people looking at their keys: a minute's precision is plenty, and
    // the process clock is good enough for it.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    if now.saturating_sub(last_used) >= LAST_USED_PRECISION_MS {
        let _: Result<(), _> = conn.hset(&record, "lastUsedMs", now).await;
    }
    Ok(Some(acct))
}

/// How stale a key's `lastUsedMs` may be before a request writes it again.
const LAST_USED_PRECISION_MS: u64 = 60_000;

impl AuthError {
    fn from_redis(e: redis::RedisError) -> AuthError {
        if horst_store::is_unreachable(&e) {
            AuthError::Unreachable(e.to_string())
        } else {
            AuthError::Store(e.to_string())
        }
    }
}

pub async fn load_account(store: &Store, name: &str) -> Result<Option<Account>, redis::RedisError> {
    let fields: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(store.key(&format!("account:{name}")))
        .arg(&["name", "trust", "blocked"])
        .query_async(&mut store.conn())
        .await?;
    Ok(account_of(fields))
}

/// The account `name` and whether the key of `hash` is among its active keys, in one round
/// trip.
async fn load_account_with_key(
    store: &Store,
    name: &str,
    hash: &str,
) -> Result<(Option<Account>, bool), redis::RedisError> {
    let (fields, active): (Vec<Option<String>>, bool) = redis::pipe()
        .cmd("HMGET")
        .arg(store.key(&format!("account:{name}")))
        .arg(&["name", "trust", "blocked"])
        .sismember(store.key(&format!("account:{name}:keys")), hash)
        .query_async(&mut store.conn())
        .await?;
    Ok((account_of(fields), active))
}

fn account_of(fields: Vec<Option<String>>) -> Option<Account> {
    let n = fields.first().cloned().flatten()?;
    Some(Account {
        name: n,
        trust: fields
            .get(1)
            .cloned()
            .flatten()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0),
        blocked: fields.get(2).cloned().flatten().as_deref() == Some("1"),
        key_hash: None,
    })
}

/// Why `caller` may no longer do what its request started, if it may not: its key was
/// revoked (or its account's keys were, by a password change) or its account was blocked
/// since [`authenticate`] let the request in. A caller loaded by name has only its block
/// checked.
pub async fn still_allowed(
    store: &Store,
    caller: &Account,
) -> Result<Option<&'static str>, redis::RedisError> {
    let name = &caller.name;
    let (blocked, active): (Option<String>, bool) = redis::pipe()
        .hget(store.key(&format!("account:{name}")), "blocked")
        .sismember(
            store.key(&format!("account:{name}:keys")),
            caller.key_hash.as_deref().unwrap_or_default(),
        )
        .query_async(&mut store.conn())
        .await?;
    Ok(if blocked.as_deref() == Some("1") {
        Some("the account was blocked by the server's operator")
    } else if caller.key_hash.is_some() && !active {
        Some("the key that sent it was revoked")
    } else {
        None
    })
}

/// `horst admin account create NAME [--trust N]`: a human (operator-made) account.
pub async fn create_account(store: &Store, name: &str, trust: u8) -> Result<(), IdentityError> {
    if !valid_account_name(name) {
        return Err(IdentityError::Invalid(format!(
            "{name:?} is not a valid account name: 2-32 lowercase letters, digits, _ or -"
        )));
    }
    if name.starts_with("agent-") {
        return Err(IdentityError::Invalid(
            "names starting with agent- are for self-service agent accounts".into(),
        ));
    }
    if trust > 2 {
        return Err(IdentityError::Invalid("trust must be 0, 1 or 2".into()));
    }
    // An earlier version's user of that name would take the account (and its keys) over at
    // their first sign-in: the name is theirs, as sign-up and `user create` hold it.
    if crate::auth::legacy_name_in(store, name).await?.is_some() {
        return Err(IdentityError::Conflict(format!(
            "the name {name} belongs to a user of an earlier version, who moves here at their first sign-in; pick another name"
        )));
    }
    let now = redis_now_ms(store).await?;
    let created: AccountCreated = ACCOUNT_CREATE
        .call(store)
        .key(store.key(&format!("account:{name}")))
        .arg(name)
        .arg(trust)
        .arg(now)
        .run()
        .await?;
    if created == AccountCreated::Exists {
        return Err(IdentityError::Conflict(format!("account {name} exists")));
    }
    Ok(())
}

/// Sets an account's trust tier or blocked flag (operator).
pub async fn set_account_field(
    store: &Store,
    name: &str,
    field: &str,
    value: &str,
) -> Result<(), IdentityError> {
    let key = store.key(&format!("account:{name}"));
    let mut conn = store.conn();
    if !conn.exists::<_, bool>(&key).await? {
        return Err(IdentityError::NotFound(format!(
            "no account {name}; GET /api/admin/accounts (or horst admin account list) lists them"
        )));
    }
    let _: () = conn.hset(&key, field, value).await?;
    store.barrier().await?;
    Ok(())
}

fn new_key_material() -> Result<(String, String, String), IdentityError> {
    let key = format!("{KEY_PREFIX}{}", random_hex(KEY_HEX / 2)?);
    let prefix = key[..KEY_PREFIX.len() + 8].to_string();
    let id = format!("key-{}", random_hex(8)?);
    Ok((key, prefix, id))
}

/// `horst admin key create ACCOUNT [--label L]`: a new key for an existing account.
pub async fn create_key(
    store: &Store,
    account: &str,
    label: Option<&str>,
) -> Result<CreatedKey, IdentityError> {
    let label = clean_label(label)?;
    let (key, prefix, id) = new_key_material()?;
    let hash = hash_key(&key);
    let now = redis_now_ms(store).await?;
    let result: KeyCreated = KEY_CREATE
        .call(store)
        .key(store.key(&format!("account:{account}")))
        .key(store.key(&format!("account:{account}:keys")))
        .key(store.key(&format!("key:{hash}")))
        .key(store.key(&format!("keyprefix:{prefix}")))
        .arg(&hash)
        .arg(&id)
        .arg(&prefix)
        .arg(account)
        .arg(&label)
        .arg(now)
        .arg(MAX_ACTIVE_KEYS)
        .run()
        .await?;
    match result {
        KeyCreated::Created => Ok(CreatedKey {
            key,
            id,
            prefix,
            username: account.to_string(),
            display_name: None,
            created_at: rfc3339(now),
        }),
        KeyCreated::TooManyKeys => Err(IdentityError::Conflict(format!(
            "account {account} already has {MAX_ACTIVE_KEYS} active keys; revoke one first"
        ))),
        KeyCreated::NoAccount => Err(IdentityError::NotFound(format!("no account {account}"))),
        KeyCreated::PrefixTaken => Err(IdentityError::Internal(
            "key prefix collision; try again".into(),
        )),
    }
}

/// `horst admin key revoke PREFIX`: revokes the key with this prefix (`gcv_xxxxxxxx`).
pub async fn revoke_key(store: &Store, prefix: &str) -> Result<String, IdentityError> {
    let mut conn = store.conn();
    let hash: Option<String> = conn.get(store.key(&format!("keyprefix:{prefix}"))).await?;
    let Some(hash) = hash else {
        return Err(IdentityError::NotFound(format!(
            "no key with prefix {prefix}"
        )));
    };
    let key = store.key(&format!("key:{hash}"));
    let account: Option<String> = conn.hget(&key, "account").await?;
    let account = account.unwrap_or_default();
    let _: () = redis::pipe()
        .atomic()
        .hset(&key, "revoked", "1")
        .srem(store.key(&format!("account:{account}:keys")), &hash)
        .query_async(&mut conn)
        .await?;
    store.barrier().await?;
    Ok(account)
}

/// Marks the records of keys already taken off their account's set of active keys revoked
/// (`people::change_password`), so that listings name them as such; the prefixes of those
/// found, newest first.
pub(crate) async fn mark_revoked(
    store: &Store,
    hashes: &[String],
) -> Result<Vec<String>, redis::RedisError> {
    if hashes.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = redis::pipe();
    for h in hashes {
        let record = store.key(&format!("key:{h}"));
        pipe.hset(&record, "revoked", "1").ignore();
        pipe.cmd("HMGET")
            .arg(&record)
            .arg(&["prefix", "createdAtMs"]);
    }
    let found: Vec<(Option<String>, Option<u64>)> = pipe.query_async(&mut store.conn()).await?;
    let mut found: Vec<(String, u64)> = found
        .into_iter()
        .filter_map(|(prefix, at)| Some((prefix?, at.unwrap_or(0))))
        .collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(found.into_iter().map(|(p, _)| p).collect())
}

/// A key as listed: everything but the key.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    pub id: String,
    pub prefix: String,
    pub account: String,
    pub label: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub revoked: bool,
    #[serde(skip)]
    created_ms: u64,
    /// The SHA-256 of the key (never shown: it names the record).
    #[serde(skip)]
    pub(crate) hash: String,
}

/// One page of a listing.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    pub items: Vec<T>,
    /// How many match the filter in all.
    pub total: usize,
    /// Pass as `offset` for the next page; `None` on the last.
    pub next_offset: Option<usize>,
}

fn page<T>(all: Vec<T>, offset: usize, limit: usize) -> Page<T> {
    let total = all.len();
    let items: Vec<T> = all.into_iter().skip(offset).take(limit).collect();
    let end = offset.saturating_add(items.len());
    Page {
        next_offset: (end < total).then_some(end),
        total,
        items,
    }
}

async fn key_info(store: &Store, record: &str) -> Result<Option<KeyInfo>, redis::RedisError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(record)
        .arg(&[
            "id",
            "prefix",
            "account",
            "label",
            "createdAtMs",
            "lastUsedMs",
            "revoked",
            "hash",
        ])
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten();
    let (Some(id), Some(prefix), Some(account)) = (get(0), get(1), get(2)) else {
        return Ok(None);
    };
    // A key off its account's set of active keys is refused whatever its record says
    // (`people::change_password` revokes them all at once and marks the records after).
    let active: bool = store
        .conn()
        .sismember(
            store.key(&format!("account:{account}:keys")),
            get(7).unwrap_or_default(),
        )
        .await?;
    let created_ms = get(4).and_then(|t| t.parse().ok()).unwrap_or(0);
    Ok(Some(KeyInfo {
        id,
        prefix,
        account,
        label: get(3).unwrap_or_default(),
        created_at: rfc3339(created_ms),
        last_used_at: get(5).and_then(|t| t.parse().ok()).map(rfc3339),
        revoked: get(6).as_deref() != Some("0") || !active,
        created_ms,
        hash: get(7).unwrap_or_default(),
    }))
}

/// Keys, newest first: of one account or all, active only unless `include_revoked`.
pub async fn list_keys(
    store: &Store,
    account: Option<&str>,
    include_revoked: bool,
    offset: usize,
    limit: usize,
) -> Result<Page<KeyInfo>, redis::RedisError> {
    let records: Vec<String> = match account {
        // The account's set holds exactly its active keys: no scan.
        Some(a) if !include_revoked => {
            let hashes: Vec<String> = store
                .conn()
                .smembers(store.key(&format!("account:{a}:keys")))
                .await?;
            hashes
                .iter()
                .map(|h| store.key(&format!("key:{h}")))
                .collect()
        }
        _ => store.scan_keys("key:*").await?,
    };
    let mut keys = Vec::with_capacity(records.len());
    for r in &records {
        if let Some(k) = key_info(store, r).await? {
            if account.is_none_or(|a| a == k.account) && (include_revoked || !k.revoked) {
                keys.push(k);
            }
        }
    }
    keys.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(a.id.cmp(&b.id)));
    Ok(page(keys, offset, limit))
}

/// Revokes `account`'s key with this prefix; someone else's key is `NotFound` (the same
/// answer as no key, so prefixes of other accounts are not confirmed).
pub async fn revoke_own_key(
    store: &Store,
    account: &str,
    prefix: &str,
) -> Result<(), IdentityError> {
    let hash: Option<String> = store
        .conn()
        .get(store.key(&format!("keyprefix:{prefix}")))
        .await?;
    let owner: Option<String> = match &hash {
        Some(h) => {
            store
                .conn()
                .hget(store.key(&format!("key:{h}")), "account")
                .await?
        }
        None => None,
    };
    if owner.as_deref() != Some(account) {
        return Err(IdentityError::NotFound(format!(
            "no key {prefix} of yours; GET /api/account/keys lists yours"
        )));
    }
    revoke_key(store, prefix).await.map(|_| ())
}

/// An account as the operator lists it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AccountInfo {
    pub name: String,
    /// `agent` (self-service) or `human` (a person's, or made by the operator).
    pub kind: String,
    pub trust: u8,
    pub blocked: bool,
    pub operator: bool,
    /// Whether it has a password (a person who can sign in).
    pub can_sign_in: bool,
    pub deleted: bool,
    pub display_name: Option<String>,
    pub created_at: String,
    pub active_keys: usize,
}

/// Which accounts to list; every field narrows.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountFilter {
    /// A part of the name or display name (case-insensitive).
    pub q: Option<String>,
    /// `agent` or `human`.
    pub kind: Option<String>,
    pub trust: Option<u8>,
    pub blocked: Option<bool>,
    pub operator: Option<bool>,
}

/// Accounts matching `filter`, by name.
pub async fn list_accounts(
    store: &Store,
    filter: &AccountFilter,
    offset: usize,
    limit: usize,
) -> Result<Page<AccountInfo>, redis::RedisError> {
    let top = store.key("account:x").matches(':').count();
    let q = filter.q.as_deref().map(str::to_lowercase);
    let mut out = Vec::new();
    for k in store.scan_keys("account:*").await? {
        if k.matches(':').count() != top {
            continue;
        }
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(&k)
            .arg(&[
                "name",
                "kind",
                "trust",
                "blocked",
                "role",
                "password",
                "deletedAtMs",
                "displayName",
                "createdAtMs",
            ])
            .query_async(&mut store.conn())
            .await?;
        let get = |i: usize| v.get(i).cloned().flatten();
        let Some(name) = get(0) else { continue };
        let display = get(7).filter(|d| !d.is_empty());
        let info = AccountInfo {
            kind: get(1).unwrap_or_else(|| "human".into()),
            trust: get(2).and_then(|t| t.parse().ok()).unwrap_or(0),
            blocked: get(3).as_deref() == Some("1"),
            operator: get(4).as_deref() == Some("operator"),
            can_sign_in: get(5).is_some(),
            deleted: get(6).is_some(),
            display_name: display,
            created_at: rfc3339(get(8).and_then(|t| t.parse().ok()).unwrap_or(0)),
            active_keys: 0,
            name,
        };
        let matches = q.as_deref().is_none_or(|q| {
            info.name.contains(q)
                || info
                    .display_name
                    .as_deref()
                    .is_some_and(|d| d.to_lowercase().contains(q))
        }) && filter.kind.as_deref().is_none_or(|kd| kd == info.kind)
            && filter.trust.is_none_or(|t| t == info.trust)
            && filter.blocked.is_none_or(|b| b == info.blocked)
            && filter.operator.is_none_or(|o| o == info.operator);
        if matches {
            out.push(info);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    let mut p = page(out, offset, limit);
    for a in &mut p.items {
        a.active_keys = store
            .conn()
            .scard(store.key(&format!("account:{}:keys", a.name)))
            .await?;
    }
    Ok(p)
}

/// Validates an optional display name (1-30 characters after cleaning; not reserved; not a
/// username). A refusal for equalling an account's name tells that the account exists: it
/// is counted against `network`'s [`crate::people::TAKEN_NAMES_PER_NETWORK`], as sign-up's
/// "taken" is.
pub async fn clean_display_name(
    store: &Store,
    network: &str,
    raw: Option<&str>,
) -> Result<Option<String>, IdentityError> {
    let Some(raw) = raw else { return Ok(None) };
    let name = horst_text::clean_line(raw);
    let n = name.chars().count();
    if !(1..=30).contains(&n) {
        return Err(IdentityError::Invalid(
            "displayName must be 1-30 characters (control and invisible characters are removed)"
                .into(),
        ));
    }
    if horst_text::reserved(&name) {
        return Err(IdentityError::Invalid(format!(
            "displayName {name:?} is reserved"
        )));
    }
    // As it reads: `Ａlice` or a Cyrillic `аlice` would pass for the person alice.
    let lower = horst_text::fold(&name);
    if valid_account_name(&lower) {
        let exists: bool = store
            .conn()
            .exists(store.key(&format!("account:{lower}")))
            .await?;
        if exists {
            crate::people::count_taken_name(store, network).await?;
            return Err(IdentityError::Invalid(format!(
                "displayName {name:?} equals a username; choose another"
            )));
        }
    }
    Ok(Some(name))
}

fn clean_label(raw: Option<&str>) -> Result<String, IdentityError> {
    let label = raw.map(horst_text::clean_line).unwrap_or_default();
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(IdentityError::Invalid(format!(
            "label must be at most {MAX_LABEL_CHARS} characters"
        )));
    }
    Ok(label)
}

/// The network an address belongs to for the per-network cap: its /24 (IPv4) or /64 (IPv6).
pub fn network_of(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let o = v4.octets();
            format!("{}.{}.{}.0/24", o[0], o[1], o[2])
        }
        std::net::IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

/// Self-service's per-network cap is reached; room in `wait_ms`.
fn network_cap(wait_ms: u64) -> IdentityError {
    IdentityError::Cap {
        cap: KeyCap::Network,
        message: format!(
            "your network already created {SELF_SERVICE_PER_NETWORK} keys in the last 24 hours"
        ),
        retry_after_seconds: wait_ms.div_ceil(1000).max(1),
    }
}

/// Self-service's total cap is reached; room in `wait_ms`.
fn daily_cap(wait_ms: u64) -> IdentityError {
    IdentityError::Cap {
        cap: KeyCap::Daily,
        message: format!("{SELF_SERVICE_TOTAL} keys were created in the last 24 hours"),
        retry_after_seconds: wait_ms.div_ceil(1000).max(1),
    }
}

/// `POST /api/agent-keys`: an agent account (`agent-xxxxxxxx`, trust 0) and its key in one
/// atomic step, within the rolling 24-hour caps.
pub async fn create_agent(
    store: &Store,
    client: std::net::IpAddr,
    display_name: Option<&str>,
    label: Option<&str>,
) -> Result<CreatedKey, IdentityError> {
    let network = network_of(client);
    // The caps are looked at first (read only; the script below is the authority): a display
    // name is refused when it equals an account's name, and once the caps are spent that
    // refusal would be the only answer that differs, telling anyone, without creating
    // anything, which account names exist (sign-up looks at its caps first likewise).
    let unlimited = crate::people::SignUpCaps {
        per_network: u32::MAX,
        total: u32::MAX,
    };
    let (outcome, wait_ms) = crate::people::room(store, &network, unlimited).await?;
    match outcome.as_str() {
        "network_cap" => return Err(network_cap(wait_ms)),
        "daily_cap" => return Err(daily_cap(wait_ms)),
        "taken_cap" => return Err(crate::people::taken_cap(wait_ms)),
        _ => {}
    }
    let display = clean_display_name(store, &network, display_name).await?;
    let label = clean_label(label)?;
    for _ in 0..5 {
        let username = format!("agent-{}", random_hex(4)?);
        let (key, prefix, id) = new_key_material()?;
        let hash = hash_key(&key);
        let member = random_hex(8)?;
        let reply: AgentCreated = AGENT_CREATE
            .call(store)
            .key(store.key(&format!("agentkeys:net:{network}")))
            .key(store.key("agentkeys:all"))
            .key(store.key(&format!("account:{username}")))
            .key(store.key(&format!("account:{username}:keys")))
            .key(store.key(&format!("key:{hash}")))
            .key(store.key(&format!("keyprefix:{prefix}")))
            .arg(SELF_SERVICE_WINDOW_MS)
            .arg(SELF_SERVICE_PER_NETWORK)
            .arg(SELF_SERVICE_TOTAL)
            .arg(&member)
            .arg(&username)
            .arg(display.as_deref().unwrap_or(""))
            .arg(&hash)
            .arg(&id)
            .arg(&prefix)
            .arg(&label)
            .run()
            .await?;
        match reply {
            AgentCreated::Created { now_ms } => {
                return Ok(CreatedKey {
                    key,
                    id,
                    prefix,
                    username,
                    display_name: display,
                    created_at: rfc3339(now_ms),
                })
            }
            AgentCreated::NetworkCap { wait_ms } => return Err(network_cap(wait_ms)),
            AgentCreated::TotalCap { wait_ms } => return Err(daily_cap(wait_ms)),
            AgentCreated::Collision => continue,
        }
    }
    Err(IdentityError::Internal(
        "could not find a free agent name".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_shape() {
        let (key, prefix, id) = new_key_material().unwrap();
        assert!(well_formed(&key), "{key}");
        assert!(key.starts_with(&prefix));
        assert_eq!(prefix.len(), 12);
        assert!(id.starts_with("key-"));
        assert!(!well_formed("gcv_xyz"));
        assert!(!well_formed(&key.to_uppercase()));
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_796_083_199_123), "2026-11-30T23:59:59.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn networks() {
        assert_eq!(network_of("192.0.2.77".parse().unwrap()), "192.0.2.0/24");
        assert_eq!(
            network_of("2001:db8:1:2:3::4".parse().unwrap()),
            "2001:db8:1:2::/64"
        );
    }
}
