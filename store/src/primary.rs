//! Finding the primary: one URL, or the primary the sentinels name, followed across
//! failovers.
//!
//! The redis crate's `sentinel` feature resolves the primary only when a client is built; a
//! `ConnectionManager` made from that client reconnects to the same address forever, and so
//! does a pub/sub connection (redis-rs issue #1438). So horst asks the sentinels itself
//! (`SENTINEL get-master-addr-by-name`, then `ROLE` on the answer, as the Sentinel client spec
//! says) and a watcher re-asks every [`WATCH_EVERY`]: when the primary moved it connects to
//! the new one and swaps the connection every `Store` clone hands out. Calls in flight on the
//! old connection fail (an error, not a hang: the response timeout bounds them); the next
//! call goes to the new primary. The pub/sub listener reconnects on the swap too.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};

/// How often the watcher asks the sentinels where the primary is.
pub(crate) const WATCH_EVERY: Duration = Duration::from_millis(250);

/// How long one question to one sentinel (or one ROLE) may take.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);

/// Where horst's Redis is.
#[derive(Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// One server at this URL (no failover).
    Url(String),
    /// The primary the sentinels name.
    Sentinel(SentinelTarget),
    /// A Redis Cluster, found through these seed node URLs.
    Cluster(Vec<String>),
}

/// The sentinels and the names and passwords to use with them.
#[derive(Clone, PartialEq, Eq)]
pub struct SentinelTarget {
    /// `host:port` of each sentinel.
    pub sentinels: Vec<String>,
    /// The master name they monitor.
    pub master: String,
    pub sentinel_password: String,
    /// The primary's password.
    pub password: String,
}

impl RedisTarget {
    /// From the configuration: the sentinels when some are set, else `url` (the configured
    /// one, or the private server's).
    pub fn from_config(redis: &horst_config::RedisConfig, url: &str) -> RedisTarget {
        if !redis.cluster.is_empty() {
            RedisTarget::Cluster(redis.cluster.clone())
        } else if redis.sentinels.is_empty() {
            RedisTarget::Url(url.to_string())
        } else {
            RedisTarget::Sentinel(SentinelTarget {
                sentinels: redis.sentinels.clone(),
                master: redis.sentinel_master.clone(),
                sentinel_password: redis.sentinel_password.clone(),
                password: redis.password.clone(),
            })
        }
    }

    /// For logs and messages: no password.
    pub fn describe(&self) -> String {
        match self {
            RedisTarget::Url(url) => crate::redact_url(url),
            RedisTarget::Sentinel(s) => format!(
                "the primary of {:?} named by the sentinels {}",
                s.master,
                s.sentinels.join(", ")
            ),
            RedisTarget::Cluster(nodes) => format!(
                "the Redis Cluster of {}",
                nodes
                    .iter()
                    .map(|u| crate::redact_url(u))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

fn url_of(addr: &str, password: &str) -> String {
    if password.is_empty() {
        format!("redis://{addr}/")
    } else {
        let pw: String = password
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        format!("redis://:{pw}@{addr}/")
    }
}

/// A connection to the primary, and where it goes.
pub(crate) struct Primary {
    pub conn: crate::cluster::Conn,
    pub client: redis::Client,
    /// `host:port` (sentinel) or the redacted URL.
    pub addr: String,
    /// On a cluster: the seed nodes (the durable writes' connections are made from them).
    pub cluster: Option<Vec<String>>,
}

/// How long a command may go unanswered before its connection is given up: a caller waits
/// at least this long for any answer (the queue's admission bounds the server time its script
/// may still run at by it).
// CI shares two cores with Redis and a browser: be patient before calling it dead.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) fn manager_config() -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_connection_timeout(Some(Duration::from_secs(3)))
        .set_number_of_retries(3)
        .set_max_delay(Duration::from_secs(2))
}

pub(crate) async fn connect_url(url: &str) -> Result<Primary, redis::RedisError> {
    let client = redis::Client::open(url)?;
    let conn = ConnectionManager::new_with_config(client.clone(), manager_config()).await?;
    Ok(Primary {
        conn: crate::cluster::Conn::One(conn),
        client,
        addr: crate::redact_url(url),
        cluster: None,
    })
}

/// A cluster connection through the seed `nodes`; its `client` is the first seed's (the
/// pub/sub listener takes each node in turn, [`crate::PrimaryClient::current`]).
pub(crate) async fn connect_cluster(nodes: &[String]) -> Result<Primary, redis::RedisError> {
    let client = cluster_client(nodes, Duration::ZERO)?;
    let conn = client.get_async_connection().await?;
    let first = nodes.first().map(String::as_str).unwrap_or_default();
    Ok(Primary {
        conn: crate::cluster::Conn::Cluster(conn),
        client: redis::Client::open(first)?,
        addr: format!("cluster ({} seed nodes)", nodes.len()),
        cluster: Some(nodes.to_vec()),
    })
}

/// A cluster client through the seed `nodes`, its response timeout `longer` than the usual.
pub(crate) fn cluster_client(
    nodes: &[String],
    longer: Duration,
) -> Result<redis::cluster::ClusterClient, redis::RedisError> {
    redis::cluster::ClusterClient::builder(nodes.iter().map(String::as_str))
        // The same patience as one server's; a request during a failover is retried while
        // the cluster promotes the replica (cluster-node-timeout plus an election).
        .response_timeout(RESPONSE_TIMEOUT + longer)
        .connection_timeout(Duration::from_secs(3))
        .retries(8)
        .min_retry_wait(100)
        .max_retry_wait(1000)
        .build()
}

pub(crate) async fn connect_addr(addr: &str, password: &str) -> Result<Primary, redis::RedisError> {
    let mut p = connect_url(&url_of(addr, password)).await?;
    p.addr = addr.to_string();
    Ok(p)
}

/// Asks the sentinels, in turn, for the primary, and checks that it says it is one.
pub(crate) struct Sentinels {
    target: SentinelTarget,
    links: Vec<Option<MultiplexedConnection>>,
}

fn io_error(what: &'static str, detail: String) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Io, what, detail))
}

async fn within<T>(
    what: &'static str,
    fut: impl std::future::Future<Output = Result<T, redis::RedisError>>,
) -> Result<T, redis::RedisError> {
    match tokio::time::timeout(ASK_TIMEOUT, fut).await {
        Ok(r) => r,
        Err(_) => Err(io_error(what, format!("no answer within {ASK_TIMEOUT:?}"))),
    }
}

impl Sentinels {
    pub(crate) fn new(target: SentinelTarget) -> Sentinels {
        let links = vec![None; target.sentinels.len()];
        Sentinels { target, links }
    }

    pub(crate) fn password(&self) -> &str {
        &self.target.password
    }

    /// `host:port` of the primary: the first sentinel that answers names it, and it answers
    /// ROLE with `master` (during a failover the old address may still be named a moment).
    pub(crate) async fn primary(&mut self) -> Result<String, redis::RedisError> {
        let mut last = io_error("no sentinel answered", "no sentinels configured".into());
        for i in 0..self.links.len() {
            match self.ask(i).await {
                Ok(addr) => match self.is_master(&addr).await {
                    Ok(true) => return Ok(addr),
                    Ok(false) => {
                        last = io_error(
                            "the named primary is not a master yet",
                            format!("{addr} answers ROLE as a replica"),
                        )
                    }
                    Err(e) => last = e,
                },
                Err(e) => {
                    self.links[i] = None;
                    last = e;
                }
            }
        }
        Err(last)
    }

    async fn ask(&mut self, i: usize) -> Result<String, redis::RedisError> {
        if self.links[i].is_none() {
            let url = url_of(&self.target.sentinels[i], &self.target.sentinel_password);
            let client = redis::Client::open(url)?;
            let conn = within(
                "cannot reach a sentinel",
                client.get_multiplexed_async_connection(),
            )
            .await?;
            self.links[i] = Some(conn);
        }
        let Some(conn) = self.links[i].as_mut() else {
            return Err(io_error("cannot reach a sentinel", String::new()));
        };
        let reply: Option<(String, u16)> = within(
            "a sentinel did not answer",
            redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(&self.target.master)
                .query_async(conn),
        )
        .await?;
        match reply {
            Some((host, port)) => Ok(format!("{host}:{port}")),
            None => Err(io_error(
                "the sentinels do not know the master name",
                format!(
                    "{:?}: set redis.sentinel_master to the name in `sentinel monitor`",
                    self.target.master
                ),
            )),
        }
    }

    async fn is_master(&self, addr: &str) -> Result<bool, redis::RedisError> {
        let client = redis::Client::open(url_of(addr, &self.target.password))?;
        let mut conn = within(
            "cannot reach the named primary",
            client.get_multiplexed_async_connection(),
        )
        .await?;
        let role: Vec<redis::Value> = within(
            "the named primary did not answer ROLE",
            redis::cmd("ROLE").query_async(&mut conn),
        )
        .await?;
        Ok(
            matches!(role.first(), Some(v) if redis::from_redis_value_ref::<String>(v).ok().as_deref() == Some("master")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_escaped_into_the_url_and_never_described() {
        assert_eq!(url_of("h:1", ""), "redis://h:1/");
        assert_eq!(url_of("h:1", "a b@c"), "redis://:a%20b%40c@h:1/");
        let t = RedisTarget::Sentinel(SentinelTarget {
            sentinels: vec!["s1:26379".into(), "s2:26379".into()],
            master: "horst".into(),
            sentinel_password: "sp".into(),
            password: "pp".into(),
        });
        let d = t.describe();
        assert!(
            d.contains("s1:26379, s2:26379") && !d.contains("sp") && !d.contains("pp"),
            "{d}"
        );
        assert_eq!(
            RedisTarget::Url("redis://:pw@h:1/0".into()).describe(),
            "redis://:***@h:1/0"
        );
    }
}
