//! The connection to Redis, horst's queue and store of record.
//!
//! Owns: connecting (with reconnects), the start-up checks every horst process runs on the
//! server it uses, the health probe behind `/readyz`, the key prefix, and the two shared
//! mechanisms on top of the connection: the process's pub/sub listener ([`Notifier`]) and
//! the delayed set ([`DelayedSet`]). It does not own any other data layout: each crate
//! (queue, gateway, sessions) names its own keys under [`Store::key`].
//!
//! Architecture invariant: no horst key is written without the configured prefix, so one
//! Redis can serve several horst installations and an operator can find every key of one.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

mod delayed;
mod health;
mod notifier;
pub mod random;
pub use delayed::DelayedSet;
pub use health::{Health, HealthState};
pub use notifier::{Notifier, Subscription};

/// Redis errors, as horst reports them (without credentials: the URL is never included).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot connect to Redis at {target}: {source}")]
    Connect {
        target: String,
        source: redis::RedisError,
    },
    #[error("Redis at {target} uses maxmemory-policy {policy}; horst needs noeviction, because eviction silently deletes jobs, revisions and sessions. Fix: `CONFIG SET maxmemory-policy noeviction` and `maxmemory-policy noeviction` in redis.conf, or set redis.allow_eviction = true (HORST_REDIS_ALLOW_EVICTION=true) to start anyway")]
    Eviction { target: String, policy: String },
    #[error("Redis command failed: {0}")]
    Command(#[from] redis::RedisError),
}

/// A shared, reconnecting connection plus the key prefix. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    conn: ConnectionManager,
    client: redis::Client,
    prefix: String,
    target: String,
}

/// What the start-up check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFacts {
    pub version: String,
    pub maxmemory_policy: Option<String>,
    pub appendonly: Option<bool>,
}

impl Store {
    /// Connects, retrying briefly (a private server that just started, a restart).
    pub async fn connect(url: &str, prefix: &str) -> Result<Store, StoreError> {
        let target = redact_url(url);
        let connect_err = |source| StoreError::Connect {
            target: target.clone(),
            source,
        };
        let client = redis::Client::open(url).map_err(connect_err)?;
        let config = ConnectionManagerConfig::new()
            // CI shares two cores with Redis and a browser: be patient before calling it dead.
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_secs(2));
        let conn = ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(connect_err)?;
        Ok(Store {
            conn,
            client,
            prefix: prefix.to_string(),
            target,
        })
    }

    /// The shared multiplexed connection. Never use it for blocking commands or SUBSCRIBE.
    pub fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// The client, for dedicated connections (pub/sub, blocking pops).
    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    /// `prefix` + `name`: every key horst uses goes through here.
    pub fn key(&self, name: &str) -> String {
        format!("{}{}", self.prefix, name)
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The server's address without credentials, for logs and messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Reads what matters about the server. Managed services may refuse CONFIG; then the
    /// facts are unknown (None) rather than an error.
    pub async fn server_facts(&self) -> Result<ServerFacts, StoreError> {
        let mut conn = self.conn();
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut conn)
            .await?;
        let version = info
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .trim()
            .to_string();
        let policy = config_get(&mut conn, "maxmemory-policy").await;
        let appendonly = config_get(&mut conn, "appendonly")
            .await
            .map(|v| v == "yes");
        Ok(ServerFacts {
            version,
            maxmemory_policy: policy,
            appendonly,
        })
    }

    /// The start-up check: refuse an evicting server unless allowed, warn when AOF is off.
    pub async fn check_server(&self, allow_eviction: bool) -> Result<ServerFacts, StoreError> {
        let facts = self.server_facts().await?;
        match facts.maxmemory_policy.as_deref() {
            Some("noeviction") => {}
            Some(policy) if !allow_eviction => {
                return Err(StoreError::Eviction {
                    target: self.target.clone(),
                    policy: policy.to_string(),
                })
            }
            Some(policy) => tracing::warn!(
                redis = %self.target, policy,
                "Redis may evict keys (maxmemory-policy is not noeviction); starting anyway because redis.allow_eviction is set"
            ),
            None => tracing::warn!(
                redis = %self.target,
                "cannot read maxmemory-policy (CONFIG GET refused); make sure it is noeviction"
            ),
        }
        match facts.appendonly {
            Some(true) => {}
            Some(false) => tracing::warn!(
                redis = %self.target,
                "Redis has AOF off (appendonly no): a crash of Redis loses recent jobs, revisions and sessions; set `appendonly yes`"
            ),
            None => {
                tracing::warn!(redis = %self.target, "cannot read appendonly (CONFIG GET refused)")
            }
        }
        Ok(facts)
    }

    /// PING, for readiness.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let _: String = redis::cmd("PING").query_async(&mut conn).await?;
        Ok(())
    }
}

async fn config_get(conn: &mut ConnectionManager, name: &str) -> Option<String> {
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query_async(conn)
        .await
        .ok()?;
    pair.get(1).cloned()
}

/// `redis://user:secret@host:6379/0` -> `redis://user:***@host:6379/0`. Secrets never reach logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(redact_url("redis://:pw@h:1/0"), "redis://:***@h:1/0");
        assert_eq!(redact_url("rediss://u:p@w@h:1"), "rediss://u:***@h:1");
        assert_eq!(redact_url("redis://h:1"), "redis://h:1");
        assert_eq!(
            redact_url("redis+unix:///tmp/r.sock"),
            "redis+unix:///tmp/r.sock"
        );
    }
}
