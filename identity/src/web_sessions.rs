//! Browser sessions of people (`/account`) and operators (`/admin`), in Redis.
//!
//! The cookie holds a random 256-bit id; Redis holds only its SHA-256, so a copy of the
//! store does not give anyone a session. Each sign-in makes a new id (an id planted before
//! the sign-in is never promoted: no session fixation). Each session has its own CSRF token,
//! which every state-changing request must send back in `X-CSRF-Token`.
//!
//! Layout (under the store prefix):
//! - `websession:<sha256 of the id>` hash: `kind` (`account` or `admin`), `account` (a
//!   person's name), `tokenId` and `operatorName` (an admin-token sign-in), `csrf`,
//!   `createdAtMs`; it expires [`IDLE`] after its last use and is refused [`ABSOLUTE`] (people)
//!   or [`ADMIN_ABSOLUTE`] (admin-token sign-ins) after it was made
//! - `account:<name>:websessions` and `admintoken:<id>:websessions` sets: the session hashes
//!   of a person or an admin token, so blocking, a password change, deletion or retiring the
//!   token ends them all at once

use std::time::Duration;

use horst_store::Store;
use redis::AsyncCommands;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::random_hex;
use crate::IdentityError;

/// The cookie's name.
pub const COOKIE: &str = "horst_session";
/// A session unused this long is gone.
pub const IDLE: Duration = Duration::from_secs(12 * 3600);
/// A person's session is refused this long after sign-in, used or not.
pub const ABSOLUTE: Duration = Duration::from_secs(7 * 24 * 3600);
/// An admin-token sign-in lasts at most this long.
pub const ADMIN_ABSOLUTE: Duration = Duration::from_secs(12 * 3600);

/// Who a session belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A person signed in with their password.
    Account(String),
    /// An operator signed in on `/admin` with an admin token; `operator_name` is what they
    /// said their name is (for the audit trail), `token_id` which token they used.
    AdminToken {
        token_id: String,
        operator_name: String,
    },
}

/// A live session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSession {
    /// The SHA-256 of the id (what Redis knows).
    pub hash: String,
    pub subject: Subject,
    pub csrf: String,
    pub created_at_ms: u64,
}

impl WebSession {
    /// Whether `given` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, given: &str) -> bool {
        !self.csrf.is_empty() && bool::from(self.csrf.as_bytes().ct_eq(given.as_bytes()))
    }
}

/// A new session: the id goes into the cookie, the CSRF token to the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    pub id: String,
    pub csrf: String,
}

fn hash_id(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// A cookie value that could be a session id (64 lowercase hex digits); anything else is
/// never looked up.
fn well_formed(id: &str) -> bool {
    id.len() == 64
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn index_key(subject: &Subject) -> String {
    match subject {
        Subject::Account(name) => format!("account:{name}:websessions"),
        Subject::AdminToken { token_id, .. } => format!("admintoken:{token_id}:websessions"),
    }
}

/// Starts a session for `subject`.
pub async fn create(store: &Store, subject: Subject) -> Result<NewSession, IdentityError> {
    let id = random_hex(32)?;
    let csrf = random_hex(32)?;
    let hash = hash_id(&id);
    let (kind, account, token_id, operator_name) = match &subject {
        Subject::Account(name) => ("account", name.as_str(), "", ""),
        Subject::AdminToken {
            token_id,
            operator_name,
        } => ("admin", "", token_id.as_str(), operator_name.as_str()),
    };
    let _: () = redis::Script::new(
        r#"
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        redis.call('HSET', KEYS[1], 'kind', ARGV[1], 'account', ARGV[2], 'tokenId', ARGV[3],
            'operatorName', ARGV[4], 'csrf', ARGV[5], 'createdAtMs', now)
        redis.call('PEXPIRE', KEYS[1], ARGV[6])
        redis.call('SADD', KEYS[2], ARGV[8])
        redis.call('PEXPIRE', KEYS[2], ARGV[7])"#,
    )
    .key(store.key(&format!("websession:{hash}")))
    .key(store.key(&index_key(&subject)))
    .arg(kind)
    .arg(account)
    .arg(token_id)
    .arg(operator_name)
    .arg(&csrf)
    .arg(IDLE.as_millis() as u64)
    .arg(ABSOLUTE.as_millis() as u64)
    .arg(&hash)
    .invoke_async(&mut store.conn())
    .await?;
    Ok(NewSession { id, csrf })
}

/// The live session with this cookie value, its idle expiry renewed; `None` for anything
/// unknown, expired or past its absolute lifetime.
pub async fn load(store: &Store, id: &str) -> Result<Option<WebSession>, IdentityError> {
    if !well_formed(id) {
        return Ok(None);
    }
    let hash = hash_id(id);
    let key = store.key(&format!("websession:{hash}"));
    let (v, now): (Vec<Option<String>>, (u64, u64)) = redis::pipe()
        .cmd("HMGET")
        .arg(&key)
        .arg(&[
            "kind",
            "account",
            "tokenId",
            "operatorName",
            "csrf",
            "createdAtMs",
        ])
        .cmd("TIME")
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten().unwrap_or_default();
    let created_at_ms: u64 = get(5).parse().unwrap_or(0);
    let subject = match get(0).as_str() {
        "account" => Subject::Account(get(1)),
        "admin" => Subject::AdminToken {
            token_id: get(2),
            operator_name: get(3),
        },
        _ => return Ok(None),
    };
    let now_ms = now.0 * 1000 + now.1 / 1000;
    let absolute = match subject {
        Subject::Account(_) => ABSOLUTE,
        Subject::AdminToken { .. } => ADMIN_ABSOLUTE,
    };
    if now_ms.saturating_sub(created_at_ms) >= absolute.as_millis() as u64 {
        let _: () = store.conn().del(&key).await?;
        return Ok(None);
    }
    let _: () = store.conn().pexpire(&key, IDLE.as_millis() as i64).await?;
    Ok(Some(WebSession {
        hash,
        subject,
        csrf: get(4),
        created_at_ms,
    }))
}

/// Ends one session (sign-out).
pub async fn end(store: &Store, session: &WebSession) -> Result<(), IdentityError> {
    let _: () = redis::pipe()
        .del(store.key(&format!("websession:{}", session.hash)))
        .ignore()
        .srem(store.key(&index_key(&session.subject)), &session.hash)
        .ignore()
        .query_async(&mut store.conn())
        .await?;
    Ok(())
}

/// Ends every session in an index set, in one atomic step.
async fn end_all(store: &Store, index: &str) -> Result<(), IdentityError> {
    let _: () = redis::Script::new(
        r#"
        for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do
            redis.call('DEL', ARGV[1] .. 'websession:' .. h)
        end
        redis.call('DEL', KEYS[1])"#,
    )
    .key(store.key(index))
    .arg(store.key(""))
    .invoke_async(&mut store.conn())
    .await?;
    Ok(())
}

/// Ends every session of person `name`.
pub async fn end_for_account(store: &Store, name: &str) -> Result<(), IdentityError> {
    end_all(store, &format!("account:{name}:websessions")).await
}

/// Ends every session opened with admin token `token_id`.
pub async fn end_for_admin_token(store: &Store, token_id: &str) -> Result<(), IdentityError> {
    end_all(store, &format!("admintoken:{token_id}:websessions")).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_ids_are_looked_up() {
        assert!(well_formed(&"a".repeat(64)));
        assert!(!well_formed(&"A".repeat(64)));
        assert!(!well_formed(&"a".repeat(63)));
        assert!(!well_formed("../../etc"));
        assert_ne!(hash_id("x"), "x");
    }
}
