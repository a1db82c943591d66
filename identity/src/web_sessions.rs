//! Browser sessions of people (`/account`) and operators (`/admin`), in Redis.
//!
//! The cookie holds a random 256-bit id; Redis holds only its SHA-256, so a copy of the
//! store does not give anyone a session. Each sign-in makes a new id (an id planted before
//! the sign-in is never promoted: no session fixation). Each session has its own CSRF token,
//! which every state-changing request must send back in `X-CSRF-Token`.
//!
//! Layout (under the store prefix):
//! - `websession:<sha256 of the id>` hash: `kind` (`account`, `operator` or `admin`),
//!   `account` (a person's name), `tokenId` and `operatorName` (an admin-token sign-in),
//!   `csrf`, `createdAtMs`, `authAtMs` (when the credential was last given: sign-in, or a
//!   confirmation, which gives the browser a new id: [`renew`]); an `/account` session expires [`IDLE`] after its last use and is refused
//!   [`ABSOLUTE`] after it was made, an `/admin` one ([`Subject::Operator`],
//!   [`Subject::AdminToken`]) [`ADMIN_IDLE`] and [`ADMIN_ABSOLUTE`]
//!
//! The two pages have separate cookies ([`COOKIE`], [`ADMIN_COOKIE`]) and separate kinds of
//! session: an `/account` session never opens `/admin`, even for an operator.
//! - `account:<name>:websessions` and `admintoken:<id>:websessions` sets: the session hashes
//!   of a person or an admin token, so blocking, a password change, deletion or retiring the
//!   token ends them all at once. A session works only while its index holds it ([`load`]):
//!   a person's are all ended in the one step that changes their password or ends their JWTs
//!   (`people::end_sessions`). A sign-in that takes a set past [`MAX_SESSIONS`] takes the
//!   sessions that expired unused off it and ends the oldest live ones beyond it: without a
//!   bound, one person signing in in a loop (no cookie sent, so no earlier session ended)
//!   kept a session for every sign-in for 12 hours and their hashes in the set for good,
//!   about 640 bytes of Redis each, until a full Redis refused every write of the service.

use std::time::Duration;

use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::{lua, Store};
use redis::AsyncCommands;
use subtle::ConstantTimeEq;

use crate::random_hex;
use crate::IdentityError;

/// The `/account` cookie's name over plain HTTP...
pub const COOKIE: &str = "horst_session";
/// ...and over TLS (`__Host-`, as [`ADMIN_COOKIE_TLS`]).
pub const COOKIE_TLS: &str = "__Host-horst_session";
/// The `/admin` cookie's name over plain HTTP...
pub const ADMIN_COOKIE: &str = "horst_admin";
/// ...and over TLS: `__Host-` makes the browser refuse it unless it is `Secure`, for `/`
/// and without a `Domain`, so no other host or path can set or shadow it.
pub const ADMIN_COOKIE_TLS: &str = "__Host-horst_admin";
/// An `/admin` session unused this long is gone.
pub const ADMIN_IDLE: Duration = Duration::from_secs(3600);
/// A session unused this long is gone.
pub const IDLE: Duration = Duration::from_secs(12 * 3600);
/// A person's session is refused this long after sign-in, used or not.
pub const ABSOLUTE: Duration = Duration::from_secs(7 * 24 * 3600);
/// An `/admin` session lasts at most this long.
pub const ADMIN_ABSOLUTE: Duration = Duration::from_secs(12 * 3600);
/// Sessions one person (their `/account` and `/admin` sessions together) or one admin token
/// may have at once; a sign-in past it ends the oldest. Room for every browser and device
/// a person uses.
pub const MAX_SESSIONS: usize = 20;
/// A destructive operator action needs the credential given this recently on the page
/// (sign-in or [`confirm`]); else it is refused with `reauthenticate`.
pub const REAUTH_WINDOW: Duration = Duration::from_secs(5 * 60);

/// Who a session belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A person signed in on `/account` with their password.
    Account(String),
    /// A person with the operator role signed in on `/admin` with their password.
    Operator(String),
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
    /// When the credential was last given (sign-in or [`confirm`]).
    pub auth_at_ms: u64,
    /// The server's clock when the session was loaded.
    pub now_ms: u64,
}

impl WebSession {
    /// Whether the credential was given within [`REAUTH_WINDOW`].
    pub fn recently_authenticated(&self) -> bool {
        self.now_ms.saturating_sub(self.auth_at_ms) < REAUTH_WINDOW.as_millis() as u64
    }

    /// Whether this is an `/admin` session.
    pub fn is_admin(&self) -> bool {
        !matches!(self.subject, Subject::Account(_))
    }

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
    horst_store::digest::sha256_hex(id)
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
        Subject::Account(name) | Subject::Operator(name) => format!("account:{name}:websessions"),
        Subject::AdminToken { token_id, .. } => format!("admintoken:{token_id}:websessions"),
    }
}

/// `lua/web_session_create.lua`: durable, so a session the browser was given survives a
/// failover.
static CREATE: Script<i64> = Script::new(Decl {
    file: lua!("lua/web_session_create.lua"),
    keys: 2,
    argv: Argv::Exactly(8),
    writes: Writes::Durable,
});

/// `lua/web_session_confirm.lua`: durable, as the session it changes.
static CONFIRM: Script<i64> = Script::new(Decl {
    file: lua!("lua/web_session_confirm.lua"),
    keys: 1,
    argv: Argv::Exactly(1),
    writes: Writes::Durable,
});

pub(crate) fn scripts() -> [&'static dyn horst_store::script::Registered; 2] {
    [&CREATE, &CONFIRM]
}

/// How long a session of `subject` lives unused, and at most.
fn lifetimes(subject: &Subject) -> (Duration, Duration) {
    match subject {
        Subject::Account(_) => (IDLE, ABSOLUTE),
        Subject::Operator(_) | Subject::AdminToken { .. } => (ADMIN_IDLE, ADMIN_ABSOLUTE),
    }
}

/// Starts a session for `subject`.
pub async fn create(store: &Store, subject: Subject) -> Result<NewSession, IdentityError> {
    create_with_csrf(store, subject, random_hex(32)?).await
}

/// Starts a session for `subject` with the CSRF token `csrf`.
async fn create_with_csrf(
    store: &Store,
    subject: Subject,
    csrf: String,
) -> Result<NewSession, IdentityError> {
    let id = random_hex(32)?;
    let hash = hash_id(&id);
    let (kind, account, token_id, operator_name) = match &subject {
        Subject::Account(name) => ("account", name.as_str(), "", ""),
        Subject::Operator(name) => ("operator", name.as_str(), "", ""),
        Subject::AdminToken {
            token_id,
            operator_name,
        } => ("admin", "", token_id.as_str(), operator_name.as_str()),
    };
    let (idle, absolute) = lifetimes(&subject);
    let held = CREATE
        .call(store)
        .key(store.key(&format!("websession:{hash}")))
        .key(store.key(&index_key(&subject)))
        .arg(kind)
        .arg(account)
        .arg(token_id)
        .arg(operator_name)
        .arg(&csrf)
        .arg(idle.as_millis() as u64)
        .arg(absolute.as_millis() as u64)
        .arg(&hash)
        .run()
        .await?;
    if held > MAX_SESSIONS as i64 {
        trim(store, &subject, &hash).await?;
    }
    Ok(NewSession { id, csrf })
}

/// Takes the sessions that expired unused off `subject`'s index and ends its oldest live
/// ones beyond [`MAX_SESSIONS`], never `newest` (the one just made). Two sign-ins trimming
/// at once may each end one: the bound holds either way.
async fn trim(store: &Store, subject: &Subject, newest: &str) -> Result<(), IdentityError> {
    let index = store.key(&index_key(subject));
    let members: Vec<String> = store.conn().smembers(&index).await?;
    let mut pipe = redis::pipe();
    for h in &members {
        pipe.hget(store.key(&format!("websession:{h}")), "createdAtMs");
    }
    let created: Vec<Option<u64>> = pipe.query_async(&mut store.conn()).await?;
    let (mut live, gone): (Vec<_>, Vec<_>) = members
        .into_iter()
        .zip(created)
        .partition(|(_, at)| at.is_some());
    if !gone.is_empty() {
        let gone: Vec<String> = gone.into_iter().map(|(h, _)| h).collect();
        let _: () = store.conn().srem(&index, gone).await?;
    }
    // Newest first; the one just made stays whatever its clock says.
    live.sort_by_key(|(h, at)| (h != newest, std::cmp::Reverse(*at)));
    for (h, _) in live.iter().skip(MAX_SESSIONS) {
        end_hash(store, subject, h).await?;
    }
    Ok(())
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
            "authAtMs",
        ])
        .cmd("TIME")
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten().unwrap_or_default();
    let created_at_ms: u64 = get(5).parse().unwrap_or(0);
    let subject = match get(0).as_str() {
        "account" => Subject::Account(get(1)),
        "operator" => Subject::Operator(get(1)),
        "admin" => Subject::AdminToken {
            token_id: get(2),
            operator_name: get(3),
        },
        _ => return Ok(None),
    };
    let now_ms = (now.0 * 1000 + now.1 / 1000).saturating_add_signed(store.clock_offset_ms());
    let (idle, absolute) = lifetimes(&subject);
    if now_ms.saturating_sub(created_at_ms) >= absolute.as_millis() as u64 {
        let _: () = store.conn().del(&key).await?;
        return Ok(None);
    }
    // A session works only while its owner's index holds it: ending them all (a password
    // change, sign-out everywhere, a block) empties the index in the same step as the rest
    // of the change (`people::end_sessions`), and the records are deleted after.
    let indexed: bool = store
        .conn()
        .sismember(store.key(&index_key(&subject)), &hash)
        .await?;
    if !indexed {
        let _: () = store.conn().del(&key).await?;
        return Ok(None);
    }
    let _: () = store.conn().pexpire(&key, idle.as_millis() as i64).await?;
    Ok(Some(WebSession {
        hash,
        subject,
        csrf: get(4),
        created_at_ms,
        auth_at_ms: get(6).parse().unwrap_or(created_at_ms),
        now_ms,
    }))
}

/// Records that the session's person or token gave the credential again just now (the
/// caller checked it), for [`REAUTH_WINDOW`]. Durable. `false`: the session ended meanwhile
/// (a sign-out, a password change), and stays ended.
pub async fn confirm(store: &Store, session: &WebSession) -> Result<bool, IdentityError> {
    let now = store.now_ms().await?;
    let done = CONFIRM
        .call(store)
        .key(store.key(&format!("websession:{}", session.hash)))
        .arg(now)
        .run()
        .await?;
    Ok(done == 1)
}

/// Gives the browser whose person or token just gave the credential again (the caller
/// checked it) a new session id, its credential given now, and ends the old id: a copy of
/// the old cookie (taken from a browser left signed in) does not share the confirmation.
/// The CSRF token stays (it is worth nothing without a live id, and the page keeps using
/// it). `None`: the old session had ended meanwhile (a sign-out, a password change), and
/// nothing is made.
pub async fn renew(store: &Store, old: &WebSession) -> Result<Option<NewSession>, IdentityError> {
    let new = create_with_csrf(store, old.subject.clone(), old.csrf.clone()).await?;
    let mut conn = store.durable().await?;
    let (deleted,): (i64,) = redis::pipe()
        .del(store.key(&format!("websession:{}", old.hash)))
        .srem(store.key(&index_key(&old.subject)), &old.hash)
        .ignore()
        .query_async(&mut conn)
        .await?;
    store.settle(&mut conn).await?;
    if deleted == 0 {
        end_new(store, &old.subject, &new).await?;
        return Ok(None);
    }
    Ok(Some(new))
}

/// Ends one session (sign-out).
pub async fn end(store: &Store, session: &WebSession) -> Result<(), IdentityError> {
    end_hash(store, &session.subject, &session.hash).await
}

/// Ends a session just made by [`create`] for `subject`, whose id the caller holds.
pub async fn end_new(
    store: &Store,
    subject: &Subject,
    new: &NewSession,
) -> Result<(), IdentityError> {
    end_hash(store, subject, &hash_id(&new.id)).await
}

async fn end_hash(store: &Store, subject: &Subject, hash: &str) -> Result<(), IdentityError> {
    let mut conn = store.durable().await?;
    let _: () = redis::pipe()
        .del(store.key(&format!("websession:{hash}")))
        .ignore()
        .srem(store.key(&index_key(subject)), hash)
        .ignore()
        .query_async(&mut conn)
        .await?;
    store.settle(&mut conn).await?;
    Ok(())
}

/// Ends every session in an index set: reads the members, deletes them and takes them off
/// the set (a session added in between is ended by the next round), then waits for the
/// replicas, so an ended session stays ended after a failover.
async fn end_all(store: &Store, index: &str) -> Result<(), IdentityError> {
    let index = store.key(index);
    let mut conn = store.durable().await?;
    for _ in 0..16 {
        let members: Vec<String> = conn.smembers(&index).await?;
        if members.is_empty() {
            // No DEL of the (empty) set: Redis removes an empty set itself, and a DEL could
            // drop a session a sign-in added since the read, which a later "end all" would
            // then never find.
            store.settle(&mut conn).await?;
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for h in &members {
            pipe.del(store.key(&format!("websession:{h}"))).ignore();
        }
        pipe.srem(&index, members.as_slice()).ignore();
        let _: () = pipe.query_async(&mut conn).await?;
    }
    Err(IdentityError::internal(
        "sessions kept being created while ending them all",
    ))
}

/// Deletes the records of sessions already taken off their owner's index (which ended them:
/// [`load`] refuses such a session); they would otherwise linger until their idle expiry.
pub(crate) async fn forget(store: &Store, hashes: &[String]) -> Result<(), IdentityError> {
    if hashes.is_empty() {
        return Ok(());
    }
    let mut pipe = redis::pipe();
    for h in hashes {
        pipe.del(store.key(&format!("websession:{h}"))).ignore();
    }
    let _: () = pipe.query_async(&mut store.conn()).await?;
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
