//! RCADIA identities: agent tokens with scopes (`play`, `host`) and HS256 JWTs for people who
//! signed in (their accounts and passwords live in `crate::people`; the sign-in route asks
//! for the JWT).
//! Tokens are stored only as SHA-256 hashes; the JWT signing key is a file outside Redis
//! (`crate::jwt_key`). None of these secrets is ever logged.
//!
//! Layout (under the store prefix):
//! - `auth:token:<sha256>` hash: `agent`, `play`, `host`, `name`, `createdAtMs`
//! - `auth:jwt_secret` string: an earlier version's signing key, moved into the key file at
//!   the first start and deleted
//! - `auth:usergen:<name>` counter: a person's credential generation; a JWT names the
//!   generation it was issued in and is refused once it moved on (password change, block,
//!   deletion)
//! - `auth:epoch` counter: moved by every revocation; processes compare it at most once per
//!   [`EPOCH_CHECK`] and drop their identity cache when it moved
//! - `auth:revoked` pub/sub channel: every move of `auth:epoch` is announced on it, and an API
//!   process that hears it ([`Auth::follow_revocations`]) reads the epoch again at its next
//!   request, so a revocation reaches every process at once; [`EPOCH_CHECK`] stays the bound
//!   when a message is lost (pub/sub is fire-and-forget)
//! - `auth:jwtrevoked:<jti>` string: a JWT its holder signed out (`DELETE
//!   /api/v1/auth/session`), expiring when the JWT would, set once (`lua/jwt_revoke.lua`); a
//!   JWT of an earlier version (no `jti`) is named by its SHA-256
//! - `auth:user:<name>` hash (`pbkdf2`): users of earlier versions, read once by the
//!   migration to PHC hashes and then deleted
//! - `auth:legacy` hash: lowercase name -> the name as an earlier version stored it, for the
//!   records above (built once by the first process that starts; nothing new is added, since
//!   this version makes no such records), so a sign-in and a sign-up find them by any case

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use horst_store::digest::sha256_hex;
use horst_store::fast_hash::FastMap;
use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::{lua, Store};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::IdentityError;

/// A JWT stays valid this long (unless its person's credentials change first).
const JWT_TTL_SECONDS: u64 = 7 * 24 * 3600;

/// How far apart the API processes' clocks may be for a sign-out to hold everywhere. A JWT's
/// `exp` is on its minting process's clock and each process checks it on its own, so a
/// signed-out JWT's mark lives this much longer than the JWT has left on the clock of the
/// process that signs it out, and a JWT already expired on that clock by less is still marked.
/// Before, a process whose clock was fast marked it only until its own clock said the JWT
/// expired (or, near its end, took it for expired and marked nothing), and a process whose
/// clock was right let the signed-out JWT in for the difference. A day: far more than any
/// clock NTP keeps, at the cost of a small key per sign-out living a day longer.
const CLOCK_SKEW_ALLOWANCE_SECONDS: u64 = 24 * 3600;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The opaque identity sessions store (`agent:agt_...` or `user:NAME`).
    pub key: String,
    /// `agt_...` for agents, the username for users (what `sessions.house_identity` names).
    pub id: String,
    pub is_user: bool,
    pub play: bool,
    pub host: bool,
    /// Created with `horst admin token create --house`: the sessions it hosts are RCADIA's
    /// own tables (`host: "house"` in `/available`).
    pub house: bool,
    /// The default `asName`: a token's `--name`, a person's display name (never their
    /// account name, which signs in).
    pub name: Option<String>,
    /// Requests per minute this token may make on the RCADIA routes, when the operator set a
    /// limit (`horst admin token limit`); `None`: no burst limit (agents and hosts long-poll
    /// all the time, so none is the default).
    pub burst_per_minute: Option<u32>,
}

/// A person's credential generation (`auth:usergen:<name>`): it moves on with every
/// password change, block and deletion, and whatever a sign-in opened in an earlier one
/// (a JWT, a browser session) is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialGeneration(u64);

/// The token store and JWT issuer. Cheap to clone.
#[derive(Clone)]
pub struct Auth {
    store: Store,
    /// The JWT signing key, read (or made) from `key_file` at the first JWT this process
    /// signs or checks, or at [`Auth::load_signing_key`] (an API process's start): a
    /// process that never handles a JWT (a worker, `horst admin`) never makes the file.
    secret: Arc<tokio::sync::OnceCell<Vec<u8>>>,
    key_file: Arc<std::path::PathBuf>,
    /// Known credentials by [`CacheKey`]: agents long-poll in a loop, and a Redis read per
    /// request only to learn the same identity again is most of a poll's cost. An entry is used only
    /// while the revocation epoch it was read under is still the newest this process knows,
    /// and the process learns the newest at most [`EPOCH_CHECK`] late: so a revoked token or
    /// a changed person's JWT is refused everywhere within that bound. Unknown credentials are
    /// not cached (a token created a moment ago works at once).
    cache: Arc<Mutex<IdentityCache>>,
    /// This process's key of [`CacheKey`], random at start and never stored or sent.
    cache_key: CacheKeyer,
    /// Seconds added to this process's clock where JWTs read it (tests only: a host whose
    /// clock is off, [`Auth::set_process_clock_offset_s`]).
    clock_offset_s: Arc<std::sync::atomic::AtomicI64>,
}

/// How often a process reads `auth:epoch` (only when a cached identity is used): the bound
/// on how long a revoked credential may still be accepted by a process that cached it.
pub const EPOCH_CHECK: Duration = Duration::from_secs(1);
/// A cached identity is read again after this long even if nothing was revoked.
const CACHE_TTL: Duration = Duration::from_secs(30);
/// Cached identities per process; at this size the cache starts over (no unbounded growth).
const CACHE_MAX: usize = 100_000;

#[derive(Default)]
struct IdentityCache {
    /// The newest revocation epoch seen, and when it was read (`None`: never).
    epoch: u64,
    epoch_read: Option<Instant>,
    /// The fast hasher: a key is a PRF of the bearer under the process's secret key, so a
    /// client cannot pick bearers whose keys collide.
    entries: FastMap<CacheKey, Cached>,
}

/// What the identity cache knows a bearer by: a keyed PRF of it, SipHash-2-4 under two
/// independent 128-bit keys drawn from the OS at the process's start (128 bits out).
///
/// Why not the SHA-256 that Redis stores: that digest was computed on every request only to
/// look the cache up (software SHA-256 of a token is as costly as the rest of the lookup), and
/// every answer from the cache then allocated its hex. Why this is as safe: the cache keeps
/// no raw token, and its keys are worth nothing outside this process (the key is never
/// stored, logged or sent; a copy of Redis holds SHA-256 hashes only, as before). Without
/// the key an attacker cannot make a bearer whose PRF matches a cached one other than by
/// chance, 2^-128 a try against a given entry (SipHash-2-4 is a PRF), so a bearer gets a
/// cached identity only if it is the bearer that identity was read for. Revocation is
/// unchanged: an entry counts only under the newest epoch (`IdentityCache::epoch`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct CacheKey(u64, u64);

#[derive(Clone, Copy)]
struct CacheKeyer([u64; 4]);

impl CacheKeyer {
    fn random() -> Result<CacheKeyer, IdentityError> {
        let b = random_bytes(32)?;
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[8 * i..8 * i + 8]);
            u64::from_le_bytes(w)
        };
        Ok(CacheKeyer([word(0), word(1), word(2), word(3)]))
    }

    fn key(&self, bearer: &str) -> CacheKey {
        let [a, b, c, d] = self.0;
        CacheKey(
            sip24(a, b, bearer.as_bytes()),
            sip24(c, d, bearer.as_bytes()),
        )
    }
}

/// SipHash-2-4 of `data` under the key `(k0, k1)` (std's `SipHasher` is exactly that; it is
/// deprecated only in favour of `DefaultHasher`, whose algorithm is unspecified).
#[allow(deprecated)]
fn sip24(k0: u64, k1: u64, data: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = std::hash::SipHasher::new_with_keys(k0, k1);
    h.write(data);
    h.finish()
}

struct Cached {
    at: Instant,
    epoch: u64,
    /// Shared with every request it answers: a hit allocates nothing.
    identity: Arc<Identity>,
}

impl IdentityCache {
    /// The entry for `key` if it was read under the newest epoch and is young enough.
    fn hit(&self, key: CacheKey) -> Option<Arc<Identity>> {
        self.entries
            .get(&key)
            .filter(|e| e.epoch == self.epoch && e.at.elapsed() < CACHE_TTL)
            .map(|e| e.identity.clone())
    }
}

/// `lua/token_create.lua`.
static TOKEN_CREATE: Script<i64> = Script::new(Decl {
    file: lua!("lua/token_create.lua"),
    keys: 1,
    argv: Argv::Exactly(5),
    writes: Writes::Durable,
});

/// `lua/jwt_revoke.lua`: a signed-out JWT stays out through a failover.
static JWT_REVOKE: Script<i64> = Script::new(Decl {
    file: lua!("lua/jwt_revoke.lua"),
    keys: 3,
    argv: Argv::Exactly(2),
    writes: Writes::Durable,
});

pub(crate) fn scripts() -> [&'static dyn horst_store::script::Registered; 2] {
    [&TOKEN_CREATE, &JWT_REVOKE]
}

/// `n` random bytes from the OS for secrets; an RNG failure is an error (never weak secrets).
fn random_bytes(n: usize) -> Result<Vec<u8>, IdentityError> {
    horst_store::random::secret_bytes(n).map_err(IdentityError::Internal)
}

/// A person's default seat name: the display name they chose (`account:<name>`'s
/// `displayName`), else none. Never the account name.
fn display_seat_name(display: Option<&str>) -> Option<String> {
    display
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
}

/// A stored `burstPerMinute`: a positive number, else no limit.
fn parse_burst(v: Option<&str>) -> Option<u32> {
    v.and_then(|v| v.parse().ok()).filter(|n| *n > 0)
}

/// Why a bearer credential was refused ([`Auth::refusal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A JWT of a person the operator blocked: the block ended it.
    Blocked,
    /// Unknown, expired, signed out, or ended by a password change or deletion.
    Unknown,
}

/// An agent token as the operator sees it (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub agent: String,
    pub name: Option<String>,
    pub scopes: Vec<&'static str>,
    /// The house identity (`--house`).
    pub house: bool,
    /// When it was created, ISO 8601 UTC (`createdAt`, as every other listing says it);
    /// `None` for tokens made before this was recorded.
    pub created_at: Option<String>,
    /// The same in milliseconds since the epoch (the field listings had first).
    pub created_at_ms: Option<u64>,
    /// The operator's burst limit for this token, requests per minute (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_per_minute: Option<u32>,
}

/// What a password record of an earlier version says about a sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyCheck {
    /// No such record.
    NoUser,
    Wrong,
    Right,
}

#[derive(Serialize, Deserialize)]
struct Claims {
    sub: String,
    iat: u64,
    exp: u64,
    /// The person's credential generation at issue (`auth:usergen:<sub>`).
    #[serde(default)]
    gen: Option<u64>,
    /// This JWT's own id, so it can be signed out alone ([`Auth::revoke_jwt`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jti: Option<String>,
}

impl Claims {
    /// What `auth:jwtrevoked:` names this JWT by: its `jti`, or (an earlier version's JWT)
    /// the SHA-256 of the whole token.
    fn revocation_id(&self, token: &str) -> String {
        self.jti.clone().unwrap_or_else(|| sha256_hex(token))
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Auth {
    /// Shifts this process's clock where JWTs read it, by `offset` seconds, for every clone
    /// (tests only: a host whose clock is fast or slow).
    pub fn set_process_clock_offset_s(&self, offset: i64) {
        self.clock_offset_s
            .store(offset, std::sync::atomic::Ordering::SeqCst);
    }

    /// The process's clock as JWTs read it (seconds since the epoch): a JWT's `iat` and `exp`
    /// are on the clock of the process that minted it (a standard JWT's reader may check
    /// them without asking anyone).
    fn now_s(&self) -> u64 {
        let offset = self
            .clock_offset_s
            .load(std::sync::atomic::Ordering::SeqCst);
        unix_now().saturating_add_signed(offset)
    }

    /// Opens the token store; people's JWTs are signed with the key of `jwt_key_file` (made
    /// at the first use, mode 0600; see [`crate::jwt_key`]): the key is outside Redis, so no
    /// failover can swap it and no reader of Redis's data learns it.
    pub async fn new(store: Store, jwt_key_file: &std::path::Path) -> Result<Auth, IdentityError> {
        let auth = Auth {
            store,
            secret: Default::default(),
            key_file: Arc::new(jwt_key_file.to_path_buf()),
            cache: Default::default(),
            cache_key: CacheKeyer::random()?,
            clock_offset_s: Default::default(),
        };
        auth.index_legacy_users().await?;
        Ok(auth)
    }

    /// Indexes earlier versions' user records by lowercase name, once per store.
    async fn index_legacy_users(&self) -> Result<(), IdentityError> {
        let done: Option<String> = redis::cmd("GET")
            .arg(self.store.key("auth:legacy:indexed"))
            .query_async(&mut self.store.conn())
            .await?;
        if done.is_some() {
            return Ok(());
        }
        let prefix = self.store.key("auth:user:");
        for key in self.store.scan_keys("auth:user:*").await? {
            if let Some(name) = key.strip_prefix(&prefix) {
                let _: () = redis::cmd("HSETNX")
                    .arg(self.store.key("auth:legacy"))
                    .arg(name.to_lowercase())
                    .arg(name)
                    .query_async(&mut self.store.conn())
                    .await?;
            }
        }
        let _: () = redis::cmd("SET")
            .arg(self.store.key("auth:legacy:indexed"))
            .arg("1")
            .query_async(&mut self.store.conn())
            .await?;
        Ok(())
    }

    /// The stored name of an earlier version's user whose name is `name` in any case.
    pub async fn legacy_name(&self, name: &str) -> Result<Option<String>, IdentityError> {
        legacy_name_in(&self.store, name).await
    }

    /// Creates a new agent identity with `scopes`; returns (token, agent id). The token is
    /// shown once; only its hash is kept.
    pub async fn create_token(
        &self,
        scopes: &[String],
        name: Option<&str>,
    ) -> Result<(String, String), IdentityError> {
        self.create_token_as(scopes, name, false).await
    }

    /// [`Auth::create_token`], marking the identity as the house when `house` (it needs the
    /// `host` scope): every session it creates is listed as `host: "house"`.
    pub async fn create_token_as(
        &self,
        scopes: &[String],
        name: Option<&str>,
        house: bool,
    ) -> Result<(String, String), IdentityError> {
        let mut play = false;
        let mut host = false;
        for s in scopes {
            match s.trim() {
                "play" => play = true,
                "host" => host = true,
                other => {
                    return Err(IdentityError::Invalid(format!(
                        "unknown scope {other:?}; use play, host or play,host"
                    )))
                }
            }
        }
        if !play && !host {
            return Err(IdentityError::Invalid(
                "give at least one scope: --scopes play, host or play,host".into(),
            ));
        }
        if house && !host {
            return Err(IdentityError::Invalid(
                "--house marks a host identity: add the host scope (--scopes host --house)".into(),
            ));
        }
        // Cleaned like every name people see (the admin page, `asName` by default): no
        // control, invisible or direction-changing characters.
        let name = name.map(horst_text::clean_line);
        if let Some(n) = &name {
            if n.is_empty() || n.chars().count() > 64 {
                return Err(IdentityError::Invalid(
                    "--name must be 1-64 visible characters".into(),
                ));
            }
        }
        let token = format!("rca_{}", hex::encode(random_bytes(24)?));
        // 64 random bits: ids are never checked for a duplicate, and two tokens with one id
        // would be one agent (its seats, its ratings). 32 bits met a duplicate within about
        // 77,000 tokens at even odds; 64 bits do within 5 billion.
        let agent = format!(
            "agt_{:016x}",
            u64::from_le_bytes(horst_store::random::id_bytes::<8>())
        );
        // Durable (declared in the registry): a token shown to its operator survives a
        // failover.
        let _: i64 = TOKEN_CREATE
            .call(&self.store)
            .key(
                self.store
                    .key(&format!("auth:token:{}", sha256_hex(&token))),
            )
            .arg(&agent)
            .arg(u8::from(play))
            .arg(u8::from(host))
            .arg(name.as_deref().unwrap_or(""))
            .arg(u8::from(house))
            .run()
            .await?;
        Ok((token, agent))
    }

    /// Every agent token's record key with its fields, by scanning `auth:token:*` (an
    /// operator's read, not a request path).
    async fn token_records(&self) -> Result<Vec<(String, TokenInfo)>, IdentityError> {
        let keys = self.store.scan_keys("auth:token:*").await?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let fields: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(&key)
                .arg(&[
                    "agent",
                    "play",
                    "host",
                    "name",
                    "createdAtMs",
                    "house",
                    "burstPerMinute",
                ])
                .query_async(&mut self.store.conn())
                .await?;
            let [Some(agent), play, host, name, created, house, burst] =
                <[Option<String>; 7]>::try_from(fields).unwrap_or_default()
            else {
                continue;
            };
            let mut scopes = Vec::new();
            if play.as_deref() == Some("1") {
                scopes.push("play");
            }
            if host.as_deref() == Some("1") {
                scopes.push("host");
            }
            let created_at_ms: Option<u64> = created.and_then(|c| c.parse().ok());
            out.push((
                key,
                TokenInfo {
                    agent,
                    name: name.filter(|n| !n.is_empty()),
                    scopes,
                    house: house.as_deref() == Some("1"),
                    created_at: created_at_ms.map(horst_dates::rfc3339_ms),
                    created_at_ms,
                    burst_per_minute: parse_burst(burst.as_deref()),
                },
            ));
        }
        // Newest first; tokens without a creation time last, by agent id.
        out.sort_by(|a, b| {
            b.1.created_at_ms
                .cmp(&a.1.created_at_ms)
                .then_with(|| a.1.agent.cmp(&b.1.agent))
        });
        Ok(out)
    }

    /// The agent tokens (not the secrets), newest first.
    pub async fn list_tokens(&self) -> Result<Vec<TokenInfo>, IdentityError> {
        Ok(self
            .token_records()
            .await?
            .into_iter()
            .map(|(_, t)| t)
            .collect())
    }

    /// Revokes the token of agent `agent` (`agt_...`): its record is deleted and the
    /// revocation epoch moves, so every process refuses it within [`EPOCH_CHECK`].
    pub async fn revoke_token(&self, agent: &str) -> Result<TokenInfo, IdentityError> {
        let found = self
            .token_records()
            .await?
            .into_iter()
            .find(|(_, t)| t.agent == agent);
        let Some((key, info)) = found else {
            return Err(IdentityError::NotFound(format!(
                "no agent token of {agent:?}; list them with `horst admin token list`"
            )));
        };
        let _: () = redis::pipe()
            .atomic()
            .del(&key)
            .ignore()
            .incr(self.store.key("auth:epoch"), 1)
            .ignore()
            .query_async(&mut self.store.conn())
            .await?;
        self.announce_revocation().await;
        // Durable: a revoked token stays revoked through a failover.
        self.store.barrier().await?;
        Ok(info)
    }

    /// Sets (or with `None` removes) the burst limit of agent `agent`'s token, in requests
    /// per minute on the RCADIA routes. The revocation epoch moves, so every process reads the
    /// new limit within [`EPOCH_CHECK`] instead of keeping the identity it cached.
    pub async fn set_token_burst(
        &self,
        agent: &str,
        per_minute: Option<u32>,
    ) -> Result<TokenInfo, IdentityError> {
        if per_minute == Some(0) {
            return Err(IdentityError::Invalid(
                "--per-minute must be at least 1; remove the limit with --none".into(),
            ));
        }
        let found = self
            .token_records()
            .await?
            .into_iter()
            .find(|(_, t)| t.agent == agent);
        let Some((key, mut info)) = found else {
            return Err(IdentityError::NotFound(format!(
                "no agent token of {agent:?}; list them with `horst admin token list`"
            )));
        };
        let mut pipe = redis::pipe();
        pipe.atomic();
        match per_minute {
            Some(n) => pipe.hset(&key, "burstPerMinute", n).ignore(),
            None => pipe.hdel(&key, "burstPerMinute").ignore(),
        };
        let _: () = pipe
            .incr(self.store.key("auth:epoch"), 1)
            .ignore()
            .query_async(&mut self.store.conn())
            .await?;
        self.announce_revocation().await;
        self.store.barrier().await?;
        info.burst_per_minute = per_minute;
        Ok(info)
    }

    /// Person `username`'s credential generation now. A sign-in reads it before it checks the
    /// password ([`crate::people::sign_in`]) and opens what it opens in that generation.
    pub async fn generation(&self, username: &str) -> Result<CredentialGeneration, IdentityError> {
        let gen: Option<u64> = redis::cmd("GET")
            .arg(self.store.key(&format!("auth:usergen:{username}")))
            .query_async(&mut self.store.conn())
            .await?;
        Ok(CredentialGeneration(gen.unwrap_or(0)))
    }

    /// A JWT for person `username`, who proved who they are in `generation` (the caller
    /// checked the password: [`crate::people::SignIn::Ok`]). It is refused once their
    /// credentials change ([`crate::people::end_sessions`]), a change made while the password
    /// was being checked included.
    pub async fn issue_jwt(
        &self,
        username: &str,
        generation: CredentialGeneration,
    ) -> Result<String, IdentityError> {
        let CredentialGeneration(gen) = generation;
        let now = self.now_s();
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let claims = Claims {
            sub: username.to_string(),
            iat: now,
            exp: now + JWT_TTL_SECONDS,
            gen: Some(gen),
            jti: Some(crate::random_hex(16)?),
        };
        let payload =
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).map_err(IdentityError::internal)?);
        let signing = format!("{header}.{payload}");
        let key = self.signing_key().await?;
        let sig = URL_SAFE_NO_PAD.encode(Self::mac(key, &signing));
        Ok(format!("{signing}.{sig}"))
    }

    /// Ends one JWT at once (its holder signed out), leaving the person's other JWTs and
    /// sessions alone: every process refuses it within [`EPOCH_CHECK`], this one at once.
    /// `false` if `token` is not a JWT of ours that still works: one signed out already, or
    /// one its person's changed credentials ended, moves nothing (`lua/jwt_revoke.lua`).
    /// Each sign-out moves the revocation epoch, which empties every process's identity
    /// cache; a JWT that could be signed out again and again did that with every request.
    pub async fn revoke_jwt(&self, token: &str) -> Result<bool, IdentityError> {
        if token.matches('.').count() != 2 {
            return Ok(false);
        }
        // Signed by us, whether or not it expired on this process's clock: a process whose
        // clock is behind this one's may still take it (`CLOCK_SKEW_ALLOWANCE_SECONDS`).
        let Some(claims) = Self::verify_signed(self.signing_key().await?, token) else {
            return Ok(false);
        };
        // An earlier version's JWT (no generation) works nowhere ([`Auth::identify`]).
        let Some(generation) = claims.gen else {
            return Ok(false);
        };
        let now = self.now_s();
        let Some(left) = (claims.exp + CLOCK_SKEW_ALLOWANCE_SECONDS).checked_sub(now) else {
            return Ok(false);
        };
        let left = left.max(1);
        let revoked = JWT_REVOKE
            .call(&self.store)
            .key(self.store.key(&format!("auth:usergen:{}", claims.sub)))
            .key(
                self.store
                    .key(&format!("auth:jwtrevoked:{}", claims.revocation_id(token))),
            )
            .key(self.store.key("auth:epoch"))
            .arg(generation)
            .arg(left)
            .run()
            .await?;
        if revoked != 1 {
            return Ok(false);
        }
        self.announce_revocation().await;
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        c.entries.remove(&self.cache_key.key(token));
        Ok(true)
    }

    /// Reads (or makes) the JWT signing key now: an API process does this at its start, so
    /// a key file it cannot use stops it there rather than at the first sign-in.
    pub async fn load_signing_key(&self) -> Result<(), IdentityError> {
        self.signing_key().await.map(|_| ())
    }

    async fn signing_key(&self) -> Result<&[u8], IdentityError> {
        let key = self
            .secret
            .get_or_try_init(|| crate::jwt_key::load_or_create(&self.store, &self.key_file))
            .await?;
        Ok(key)
    }

    fn mac(key: &[u8], data: &str) -> Vec<u8> {
        // HMAC accepts keys of any length, so this never fails; if it did, an empty MAC
        // matches no signature and every JWT is refused.
        let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
            return Vec::new();
        };
        m.update(data.as_bytes());
        m.finalize().into_bytes().to_vec()
    }

    /// The claims of a JWT with a good signature that has not expired on this process's
    /// clock.
    fn verify_jwt(&self, key: &[u8], token: &str) -> Option<Claims> {
        Self::verify_signed(key, token).filter(|claims| claims.exp > self.now_s())
    }

    /// The claims of a JWT with a good signature, expired or not.
    fn verify_signed(key: &[u8], token: &str) -> Option<Claims> {
        #[derive(Deserialize)]
        struct Header {
            alg: String,
        }
        let (signing, sig) = token.rsplit_once('.')?;
        let (header, payload) = signing.split_once('.')?;
        let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
        if !constant_time_eq(&Self::mac(key, signing), &sig) {
            return None;
        }
        let header: Header = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
        if header.alg != "HS256" {
            return None;
        }
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
    }

    /// The pub/sub channel a move of the revocation epoch is announced on.
    pub fn revocation_channel(store: &Store) -> String {
        store.key_alone("auth:revoked")
    }

    /// Tells every process that the revocation epoch moved (after the move): the ones that
    /// follow [`Auth::revocation_channel`] read it again at their next request instead of
    /// up to [`EPOCH_CHECK`] later. Best effort: a lost message leaves that bound.
    pub(crate) async fn announce_revocation(&self) {
        let sent: redis::RedisResult<i64> = redis::cmd("PUBLISH")
            .arg(Self::revocation_channel(&self.store))
            .arg("1")
            .query_async(&mut self.store.conn())
            .await;
        if let Err(e) = sent {
            tracing::debug!(error = %e, "cannot announce a revocation; other processes see it within 1 s");
        }
    }

    /// Has this process's identity cache follow the announcements of
    /// [`Auth::revocation_channel`] heard by `notifier` (whose patterns must include it): on
    /// one, and on every gap of the subscription (a message may have been missed), the next
    /// use of the cache reads the revocation epoch again.
    pub fn follow_revocations(&self, notifier: &horst_store::Notifier) {
        let channel = Self::revocation_channel(&self.store);
        let cache = Arc::downgrade(&self.cache);
        notifier.observe(move |heard| {
            let relevant = match heard {
                horst_store::Heard::Message { channel: c, .. } => c == channel,
                horst_store::Heard::Gap => true,
            };
            if let (true, Some(cache)) = (relevant, cache.upgrade()) {
                cache.lock().unwrap_or_else(|e| e.into_inner()).epoch_read = None;
            }
        });
    }

    /// The cached identity for `key`, if it is still good; otherwise `None` and the epoch the
    /// caller's fresh read will be cached under. Reads `auth:epoch` when the last read is
    /// older than [`EPOCH_CHECK`].
    async fn cached(&self, key: CacheKey) -> Result<(Option<Arc<Identity>>, u64), IdentityError> {
        {
            let c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if c.epoch_read.is_some_and(|at| at.elapsed() < EPOCH_CHECK) {
                // The common case, in one lock: the epoch is recent, the entry is looked up.
                return Ok((c.hit(key), c.epoch));
            }
        }
        let epoch: Option<u64> = redis::cmd("GET")
            .arg(self.store.key("auth:epoch"))
            .query_async(&mut self.store.conn())
            .await?;
        let epoch = epoch.unwrap_or(0);
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if epoch != c.epoch {
            c.entries.clear();
            c.epoch = epoch;
        }
        c.epoch_read = Some(Instant::now());
        Ok((c.hit(key), c.epoch))
    }

    fn remember(&self, key: CacheKey, epoch: u64, identity: &Arc<Identity>) {
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if c.entries.len() >= CACHE_MAX {
            c.entries.clear();
        }
        c.entries.insert(
            key,
            Cached {
                at: Instant::now(),
                epoch,
                identity: identity.clone(),
            },
        );
    }

    /// Why [`Auth::identify`] found no identity for `bearer`, for the caller's answer. Asked
    /// only after a refusal: a JWT of ours, correctly signed and unexpired, whose person is
    /// blocked now was ended by the block ([`crate::people::end_sessions`]), and a sign-in would
    /// be refused too, so "sign in again" would send them round in a circle. The signature
    /// proves the holder once signed in as that person, so this tells nobody else anything.
    pub async fn refusal(&self, bearer: &str) -> Result<Refusal, IdentityError> {
        if bearer.matches('.').count() != 2 {
            return Ok(Refusal::Unknown);
        }
        let Some(claims) = self.verify_jwt(self.signing_key().await?, bearer) else {
            return Ok(Refusal::Unknown);
        };
        let person = crate::people::load(&self.store, &claims.sub).await?;
        Ok(match person {
            Some(p) if p.blocked => Refusal::Blocked,
            _ => Refusal::Unknown,
        })
    }

    /// Resolves a bearer credential (JWT or agent token).
    pub async fn identify(&self, bearer: &str) -> Result<Option<Arc<Identity>>, IdentityError> {
        let jwt = bearer.matches('.').count() == 2;
        let claims = if jwt {
            match self.verify_jwt(self.signing_key().await?, bearer) {
                Some(c) => Some(c),
                None => return Ok(None),
            }
        } else {
            None
        };
        let key = self.cache_key.key(bearer);
        let (hit, epoch) = self.cached(key).await?;
        if hit.is_some() {
            return Ok(hit);
        }
        let identity = match claims {
            Some(claims) => {
                // The generation, the revocation and the name the person chose to be shown
                // by, in one round trip.
                let ((gen, revoked), display): ((Option<u64>, Option<String>), Option<String>) =
                    redis::pipe()
                        .cmd("MGET")
                        .arg(self.store.key(&format!("auth:usergen:{}", claims.sub)))
                        .arg(
                            self.store
                                .key(&format!("auth:jwtrevoked:{}", claims.revocation_id(bearer))),
                        )
                        .cmd("HGET")
                        .arg(self.store.key(&format!("account:{}", claims.sub)))
                        .arg("displayName")
                        .query_async(&mut self.store.conn())
                        .await?;
                // Signed out, of an earlier version (no generation), or of credentials that
                // changed.
                if revoked.is_some() || claims.gen != Some(gen.unwrap_or(0)) {
                    return Ok(None);
                }
                Identity {
                    key: format!("user:{}", claims.sub),
                    id: claims.sub,
                    is_user: true,
                    play: true,
                    host: true,
                    house: false,
                    // A seat's default name is the display name the person chose, if any,
                    // never the account name (it signs in, and the person did not choose to
                    // show it): without one the seat is nameless, which every page shows as
                    // "seat N" and every game as the player id.
                    name: display_seat_name(display.as_deref()),
                    burst_per_minute: None,
                }
            }
            None => {
                // Stored as SHA-256 only: hashed here, where Redis is asked anyway.
                let hash = sha256_hex(bearer);
                let fields: Vec<Option<String>> = redis::cmd("HMGET")
                    .arg(self.store.key(&format!("auth:token:{hash}")))
                    .arg(&["agent", "play", "host", "name", "house", "burstPerMinute"])
                    .query_async(&mut self.store.conn())
                    .await?;
                let [Some(agent), play, host, name, house, burst] =
                    <[Option<String>; 6]>::try_from(fields).unwrap_or_default()
                else {
                    return Ok(None);
                };
                Identity {
                    key: format!("agent:{agent}"),
                    id: agent,
                    is_user: false,
                    play: play.as_deref() == Some("1"),
                    host: host.as_deref() == Some("1"),
                    house: house.as_deref() == Some("1"),
                    name: name.filter(|n| !n.is_empty()),
                    burst_per_minute: parse_burst(burst.as_deref()),
                }
            }
        };
        let identity = Arc::new(identity);
        self.remember(key, epoch, &identity);
        Ok(Some(identity))
    }

    /// Checks `password` against the record an earlier version kept for `username` (salted
    /// PBKDF2-SHA256), on a blocking thread. The migration to PHC hashes uses it once per
    /// person, then deletes the record ([`Auth::drop_legacy_user`]).
    pub async fn legacy_check(
        &self,
        username: &str,
        password: &str,
    ) -> Result<LegacyCheck, IdentityError> {
        let Some(username) = self.legacy_name(username).await? else {
            return Ok(LegacyCheck::NoUser);
        };
        let stored: Option<String> = redis::cmd("HGET")
            .arg(self.store.key(&format!("auth:user:{username}")))
            .arg("pbkdf2")
            .query_async(&mut self.store.conn())
            .await?;
        let Some(stored) = stored else {
            return Ok(LegacyCheck::NoUser);
        };
        let password = password.to_string();
        tokio::task::spawn_blocking(move || legacy_verify(&stored, &password))
            .await
            .map_err(|e| IdentityError::internal(format!("the password check failed: {e}")))
    }

    /// Whether `username` (in any case) has a record of an earlier version.
    pub async fn legacy_user_exists(&self, username: &str) -> Result<bool, IdentityError> {
        Ok(self.legacy_name(username).await?.is_some())
    }

    /// Deletes the record of an earlier version's user `username` (in any case).
    pub async fn drop_legacy_user(&self, username: &str) -> Result<(), IdentityError> {
        let Some(stored) = self.legacy_name(username).await? else {
            return Ok(());
        };
        let _: () = redis::pipe()
            .atomic()
            .del(self.store.key(&format!("auth:user:{stored}")))
            .ignore()
            .hdel(self.store.key("auth:legacy"), stored.to_lowercase())
            .ignore()
            .query_async(&mut self.store.conn())
            .await?;
        Ok(())
    }

    /// Writes a record in the format of earlier versions (`rounds$salt$hash`, hex) and indexes
    /// it as the start-up does, for the migration's tests.
    pub async fn write_legacy_user(
        &self,
        username: &str,
        password: &str,
        rounds: u32,
    ) -> Result<(), IdentityError> {
        let salt = random_bytes(16)?;
        let hash = pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password.as_bytes(), &salt, rounds);
        let _: () = redis::cmd("HSET")
            .arg(self.store.key(&format!("auth:user:{username}")))
            .arg("pbkdf2")
            .arg(format!(
                "{rounds}${}${}",
                hex::encode(salt),
                hex::encode(hash)
            ))
            .query_async(&mut self.store.conn())
            .await?;
        let _: () = redis::cmd("HSET")
            .arg(self.store.key("auth:legacy"))
            .arg(username.to_lowercase())
            .arg(username)
            .query_async(&mut self.store.conn())
            .await?;
        Ok(())
    }
}

/// The old format: `rounds$salt$hash` (hex). A record that does not parse matches nothing.
fn legacy_verify(stored: &str, password: &str) -> LegacyCheck {
    let mut parts = stored.splitn(3, '$');
    let (Some(rounds), Some(salt), Some(hash)) = (parts.next(), parts.next(), parts.next()) else {
        return LegacyCheck::Wrong;
    };
    let (Ok(rounds), Ok(salt), Ok(hash)) =
        (rounds.parse::<u32>(), hex::decode(salt), hex::decode(hash))
    else {
        return LegacyCheck::Wrong;
    };
    // Records of earlier versions used 100,000 rounds; a forged record with a huge count
    // must not stall a thread.
    if !(1..=1_000_000).contains(&rounds) {
        return LegacyCheck::Wrong;
    }
    let got = pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password.as_bytes(), &salt, rounds);
    if constant_time_eq(&got, &hash) {
        LegacyCheck::Right
    } else {
        LegacyCheck::Wrong
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The stored spelling of an earlier version's RCADIA user called `name` (in any case), if any.
pub(crate) async fn legacy_name_in(
    store: &Store,
    name: &str,
) -> Result<Option<String>, IdentityError> {
    Ok(redis::cmd("HGET")
        .arg(store.key("auth:legacy"))
        .arg(name.to_lowercase())
        .query_async(&mut store.conn())
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache's PRF is SipHash-2-4 (the security argument at [`CacheKey`] rests on it):
    /// the reference vector of Aumasson and Bernstein's paper (appendix A: key 00..0f,
    /// message 00..0e). std's `DefaultHasher` (SipHash-1-3 today) gives another value.
    #[test]
    fn the_cache_prf_is_siphash_2_4() {
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let msg: Vec<u8> = (0u8..15).collect();
        assert_eq!(sip24(k0, k1, &msg), 0xa129_ca61_49be_45e5);
    }

    /// Each process draws its own key, so the cache's keys of a token differ between
    /// processes and are not the SHA-256 Redis stores (nothing outside the process can
    /// compute them), while one process always keys a token the same way.
    #[test]
    fn cache_keys_are_per_process_and_stable_within_one() {
        let (a, b) = (CacheKeyer::random().unwrap(), CacheKeyer::random().unwrap());
        let token = "rca_0123456789abcdef0123456789abcdef";
        assert_eq!(a.key(token), a.key(token));
        assert_ne!(a.key(token), b.key(token));
        assert_ne!(a.key(token), a.key("rca_0123456789abcdef0123456789abcdee"));
        let sha = sha256_hex(token);
        let k = a.key(token);
        assert!(!sha.contains(&format!("{:016x}", k.0)) && !sha.contains(&format!("{:016x}", k.1)));
    }

    #[test]
    fn legacy_records_verify_and_bad_ones_match_nothing() {
        let salt = [7u8; 16];
        let hash = pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(b"old secret", &salt, 1000);
        let rec = format!("1000${}${}", hex::encode(salt), hex::encode(hash));
        assert_eq!(legacy_verify(&rec, "old secret"), LegacyCheck::Right);
        assert_eq!(legacy_verify(&rec, "old secreT"), LegacyCheck::Wrong);
        for bad in ["", "x$y$z", "1000$zz$00", "0$00$00", "99999999$00$00"] {
            assert_eq!(
                legacy_verify(bad, "old secret"),
                LegacyCheck::Wrong,
                "{bad}"
            );
        }
    }
}
