//! Identities: agent tokens with scopes (`play`, `host`) and users with passwords, who sign in
//! for a JWT (HS256). Tokens are stored only as SHA-256 hashes, passwords as salted
//! PBKDF2-SHA256; the JWT secret is generated once per store and kept in Redis. None of these
//! secrets is ever logged.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use horst_store::Store;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::{random_bytes, random_u32, RcadiaError};

/// PBKDF2 rounds: slow enough to make guessing expensive, fast enough for a sign-in.
const PBKDF2_ROUNDS: u32 = 100_000;
/// A JWT stays valid this long.
const JWT_TTL_SECONDS: u64 = 7 * 24 * 3600;

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
    /// The default `asName`.
    pub name: Option<String>,
}

/// The token and user store. Cheap to clone.
#[derive(Clone)]
pub struct Auth {
    store: Store,
    secret: Vec<u8>,
    /// Known tokens by hash, for [`TOKEN_CACHE_TTL`]: agents long-poll in a loop, and a Redis
    /// read per request only to learn the same identity again is most of a poll's cost.
    /// Tokens cannot be changed or revoked once created, so a cached entry is never stale;
    /// the expiry only bounds what a future revocation would have to wait for. Unknown
    /// tokens are not cached (a token created a moment ago works at once).
    cache: std::sync::Arc<std::sync::Mutex<TokenCache>>,
}

/// How long a token's identity is reused without reading Redis.
const TOKEN_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(30);
/// Cached tokens per process; at this size the cache starts over (no unbounded growth).
const TOKEN_CACHE_MAX: usize = 100_000;

type TokenCache = std::collections::HashMap<String, (std::time::Instant, Identity)>;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{0}")]
    Invalid(String),
    #[error("user {0:?} already exists")]
    UserExists(String),
    #[error(transparent)]
    Store(#[from] RcadiaError),
}

impl From<redis::RedisError> for AuthError {
    fn from(e: redis::RedisError) -> Self {
        AuthError::Store(e.into())
    }
}

fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

impl Auth {
    /// Loads the JWT secret, creating it on first use (SET NX: every process agrees).
    pub async fn new(store: Store) -> Result<Auth, AuthError> {
        let key = store.key("auth:jwt_secret");
        let mut conn = store.conn();
        let fresh = hex::encode(random_bytes(32)?);
        let _: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(&fresh)
            .arg("NX")
            .query_async(&mut conn)
            .await?;
        let secret: String = redis::cmd("GET").arg(&key).query_async(&mut conn).await?;
        Ok(Auth {
            store,
            secret: secret.into_bytes(),
            cache: Default::default(),
        })
    }

    /// Creates a new agent identity with `scopes`; returns (token, agent id). The token is
    /// shown once; only its hash is kept.
    pub async fn create_token(
        &self,
        scopes: &[String],
        name: Option<&str>,
    ) -> Result<(String, String), AuthError> {
        self.create_token_as(scopes, name, false).await
    }

    /// [`Auth::create_token`], marking the identity as the house when `house` (it needs the
    /// `host` scope): every session it creates is listed as `host: "house"`.
    pub async fn create_token_as(
        &self,
        scopes: &[String],
        name: Option<&str>,
        house: bool,
    ) -> Result<(String, String), AuthError> {
        let mut play = false;
        let mut host = false;
        for s in scopes {
            match s.trim() {
                "play" => play = true,
                "host" => host = true,
                other => {
                    return Err(AuthError::Invalid(format!(
                        "unknown scope {other:?}; use play, host or play,host"
                    )))
                }
            }
        }
        if !play && !host {
            return Err(AuthError::Invalid(
                "give at least one scope: --scopes play, host or play,host".into(),
            ));
        }
        if house && !host {
            return Err(AuthError::Invalid(
                "--house marks a host identity: add the host scope (--scopes host --house)".into(),
            ));
        }
        if let Some(n) = name {
            if n.trim().is_empty() || n.chars().count() > 64 {
                return Err(AuthError::Invalid("--name must be 1-64 characters".into()));
            }
        }
        let token = format!("rca_{}", hex::encode(random_bytes(24)?));
        let agent = format!("agt_{:08x}", random_u32());
        let mut conn = self.store.conn();
        let _: () = redis::cmd("HSET")
            .arg(
                self.store
                    .key(&format!("auth:token:{}", sha256_hex(&token))),
            )
            .arg("agent")
            .arg(&agent)
            .arg("play")
            .arg(u8::from(play))
            .arg("host")
            .arg(u8::from(host))
            .arg("name")
            .arg(name.unwrap_or(""))
            .arg("house")
            .arg(u8::from(house))
            .query_async(&mut conn)
            .await?;
        Ok((token, agent))
    }

    /// Creates a user; the password is stored as salted PBKDF2-SHA256.
    pub async fn create_user(&self, username: &str, password: &str) -> Result<(), AuthError> {
        let ok = !username.is_empty()
            && username.len() <= 32
            && username
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !ok {
            return Err(AuthError::Invalid(
                "usernames are 1-32 characters of A-Z, a-z, 0-9, '.', '_' and '-'".into(),
            ));
        }
        if password.len() < 8 {
            return Err(AuthError::Invalid(
                "the password needs at least 8 characters".into(),
            ));
        }
        let salt = random_bytes(16)?;
        let hash =
            pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password.as_bytes(), &salt, PBKDF2_ROUNDS);
        let mut conn = self.store.conn();
        let created: i64 = redis::cmd("HSETNX")
            .arg(self.store.key(&format!("auth:user:{username}")))
            .arg("pbkdf2")
            .arg(format!(
                "{PBKDF2_ROUNDS}${}${}",
                hex::encode(salt),
                hex::encode(hash)
            ))
            .query_async(&mut conn)
            .await?;
        if created == 0 {
            return Err(AuthError::UserExists(username.to_string()));
        }
        Ok(())
    }

    /// Checks a password; `Some(jwt)` on success.
    pub async fn sign_in(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<String>, AuthError> {
        let mut conn = self.store.conn();
        let stored: Option<String> = redis::cmd("HGET")
            .arg(self.store.key(&format!("auth:user:{username}")))
            .arg("pbkdf2")
            .query_async(&mut conn)
            .await?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        let mut parts = stored.splitn(3, '$');
        let (Some(rounds), Some(salt), Some(hash)) = (parts.next(), parts.next(), parts.next())
        else {
            return Ok(None);
        };
        let (Ok(rounds), Ok(salt), Ok(hash)) =
            (rounds.parse::<u32>(), hex::decode(salt), hex::decode(hash))
        else {
            return Ok(None);
        };
        let got = pbkdf2::pbkdf2_hmac_array::<Sha256, 32>(password.as_bytes(), &salt, rounds);
        if !constant_time_eq(&got, &hash) {
            return Ok(None);
        }
        Ok(Some(self.issue_jwt(username)))
    }

    fn issue_jwt(&self, username: &str) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let header = URL_SAFE_NO_PAD.encode(json!({"alg":"HS256","typ":"JWT"}).to_string());
        let payload = URL_SAFE_NO_PAD
            .encode(json!({"sub": username, "iat": now, "exp": now + JWT_TTL_SECONDS}).to_string());
        let signing = format!("{header}.{payload}");
        let sig = URL_SAFE_NO_PAD.encode(self.mac(&signing));
        format!("{signing}.{sig}")
    }

    fn mac(&self, data: &str) -> Vec<u8> {
        // HMAC accepts keys of any length, so this never fails; if it did, an empty MAC
        // matches no signature and every JWT is refused.
        let Ok(mut m) = <Hmac<Sha256> as Mac>::new_from_slice(&self.secret) else {
            return Vec::new();
        };
        m.update(data.as_bytes());
        m.finalize().into_bytes().to_vec()
    }

    fn verify_jwt(&self, token: &str) -> Option<String> {
        let (signing, sig) = token.rsplit_once('.')?;
        let (header, payload) = signing.split_once('.')?;
        let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
        if !constant_time_eq(&self.mac(signing), &sig) {
            return None;
        }
        let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
        if header.get("alg")? != "HS256" {
            return None;
        }
        let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if claims.get("exp")?.as_u64()? <= now {
            return None;
        }
        Some(claims.get("sub")?.as_str()?.to_string())
    }

    /// Resolves a bearer credential (JWT or agent token).
    pub async fn identify(&self, bearer: &str) -> Result<Option<Identity>, AuthError> {
        if bearer.matches('.').count() == 2 {
            return Ok(self.verify_jwt(bearer).map(|user| Identity {
                key: format!("user:{user}"),
                id: user.clone(),
                is_user: true,
                play: true,
                host: true,
                house: false,
                name: Some(user),
            }));
        }
        let hash = sha256_hex(bearer);
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, id)) = cache.get(&hash) {
                if at.elapsed() < TOKEN_CACHE_TTL {
                    return Ok(Some(id.clone()));
                }
            }
        }
        let mut conn = self.store.conn();
        let fields: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(self.store.key(&format!("auth:token:{hash}")))
            .arg("agent")
            .arg("play")
            .arg("host")
            .arg("name")
            .arg("house")
            .query_async(&mut conn)
            .await?;
        let [Some(agent), play, host, name, house] =
            <[Option<String>; 5]>::try_from(fields).unwrap_or([None, None, None, None, None])
        else {
            return Ok(None);
        };
        let id = Identity {
            key: format!("agent:{agent}"),
            id: agent,
            is_user: false,
            play: play.as_deref() == Some("1"),
            host: host.as_deref() == Some("1"),
            house: house.as_deref() == Some("1"),
            name: name.filter(|n| !n.is_empty()),
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= TOKEN_CACHE_MAX {
            cache.clear();
        }
        cache.insert(hash, (std::time::Instant::now(), id.clone()));
        Ok(Some(id))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
