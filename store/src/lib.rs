//! The connection to Redis, horst's queue and store of record.
//!
//! Owns: connecting (with reconnects), the start-up checks every horst process runs on the
//! server it uses, the health probe behind `/readyz`, the key prefix, the clock
//! ([`Store::now_ms`]), the script registry every Lua script is declared in ([`script`]),
//! and the two shared mechanisms on top of the connection: the process's pub/sub listener
//! ([`Notifier`]) and the delayed set ([`DelayedSet`]). It does not own any other data layout: each crate
//! (queue, gateway, sessions) names its own keys under [`Store::key`].
//!
//! Architecture invariant: no horst key is written without the configured prefix, so one
//! Redis can serve several horst installations and an operator can find every key of one.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::watch;

pub mod cluster;
mod delayed;
pub mod digest;
mod durable;
pub mod fast_hash;
mod health;
mod lua_shake;
mod notifier;
mod primary;
pub mod random;
pub mod script;
mod server_clock;
pub mod trail;
mod unreachable;
pub use cluster::{Conn, Group};
pub use delayed::{
    DelayedSet, Popped, Stall, LEASE as DELAYED_LEASE, STALL_AFTER as DELAYED_STALL_AFTER,
    STALL_MEMORY as DELAYED_STALL_MEMORY,
};
pub use durable::{DurableConn, DURABLE_CONNS};
pub use health::{Health, HealthState, ServerCheck};
pub use notifier::{Heard, Notifier, Subscription};
pub use primary::{RedisTarget, SentinelTarget, RESPONSE_TIMEOUT};
/// The error of every Redis call, for crates that handle it without talking to Redis
/// themselves (the HTTP API: [`is_unreachable`] tells an outage from a bug).
pub use redis::RedisError;
pub use server_clock::ServerClock;
pub use unreachable::UnreachableHold;

/// Redis errors, as horst reports them (without credentials: the URL is never included).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot connect to Redis at {target}: {source}. Fix: start Redis there, or point redis.url (HORST_REDIS_URL, --redis), redis.sentinels or redis.cluster at a server that answers from this machine (check with `redis-cli -u URL ping`); one that accepts connections but never answers (stopped, overloaded) times out")]
    Connect {
        target: String,
        source: redis::RedisError,
    },
    #[error("Redis at {target} uses maxmemory-policy {policy}; horst needs noeviction, because eviction silently deletes jobs, revisions and sessions. Fix: `CONFIG SET maxmemory-policy noeviction` and `maxmemory-policy noeviction` in redis.conf, or set redis.allow_eviction = true (HORST_REDIS_ALLOW_EVICTION=true) to start anyway")]
    Eviction { target: String, policy: String },
    #[error("Redis at {target} is version {version}; horst needs Redis 7.0 or later (its scripts declare flags with `#!lua flags=` and admission uses `SET ... NX GET`). Fix: upgrade the server (Debian 12 and later ship 7.0: `apt-get install redis-server`), or point redis.url at one that is")]
    Version { target: String, version: String },
    #[error("Redis command failed: {0}")]
    Command(#[from] redis::RedisError),
}

/// How many replicas must acknowledge a durable write (`redis.min_replica_acks`) and how
/// long to wait for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Durability {
    pub min_replica_acks: u32,
    pub timeout_ms: u64,
}

/// A shared, reconnecting connection to the primary plus the key prefix. Cheap to clone;
/// every clone follows the same primary (see `primary.rs` for failover).
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
    client: PrimaryClient,
    prefix: String,
    /// Keys named as on a cluster on one server ([`Store::with_cluster_naming`]).
    cluster_naming: bool,
}

struct Shared {
    primary: RwLock<primary::Primary>,
    /// Moves on every change of primary (a failover followed).
    moved: watch::Sender<u64>,
    described: String,
    durability: Durability,
    /// Added to the server's TIME wherever horst reads it ([`Store::now_ms`] and every
    /// registered script's `now_ms()`); 0 but in tests.
    clock_offset_ms: AtomicI64,
    /// On a cluster: a client for each seed node (the pub/sub listener takes them in turn)
    /// and which is next. Empty on one server.
    nodes: Vec<redis::Client>,
    next_node: AtomicUsize,
    /// What this process's latest periodic write learnt ([`Store::note_periodic_write`]).
    writes_refused: std::sync::Mutex<Option<String>>,
    /// One server by its URL (no sentinels, no cluster): nobody follows its primary for
    /// horst, so a server turned replica at run time stays horst's server.
    one_server: bool,
    /// The primary (`host:port`) of that one server while it is a replica
    /// ([`Store::note_replica_of`]).
    replica_of: std::sync::Mutex<Option<String>>,
    /// The connections of durable writes ([`Store::durable`]).
    durable: durable::Pool,
}

/// Makes connections to the current primary (dedicated ones: pub/sub). Cheap to clone.
#[derive(Clone)]
pub struct PrimaryClient {
    shared: Arc<Shared>,
}

impl PrimaryClient {
    /// A client for the primary as it is now. On a cluster, the next seed node in turn: a
    /// `PUBLISH` reaches every node of a cluster, so a listener on any node hears all, and
    /// one that lost its node takes the next.
    pub fn current(&self) -> redis::Client {
        let nodes = &self.shared.nodes;
        if !nodes.is_empty() {
            let i = self.shared.next_node.fetch_add(1, Ordering::Relaxed);
            return nodes[i % nodes.len()].clone();
        }
        self.shared
            .primary
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .client
            .clone()
    }

    /// Changes when the primary moved: a listener on the old one must reconnect.
    pub fn moved(&self) -> watch::Receiver<u64> {
        self.shared.moved.subscribe()
    }
}

/// The primary (`host:port`) named by `INFO replication` of a replica; `None` for a
/// primary.
fn replica_of(info: &str) -> Option<String> {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    (field("role")? == "slave").then(|| {
        format!(
            "{}:{}",
            field("master_host").unwrap_or("?"),
            field("master_port").unwrap_or("?")
        )
    })
}

/// What the start-up check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFacts {
    pub version: String,
    pub maxmemory_policy: Option<String>,
    pub appendonly: Option<bool>,
}

impl Store {
    /// Connects to one Redis at `url` (no failover, no replica acknowledgements).
    pub async fn connect(url: &str, prefix: &str) -> Result<Store, StoreError> {
        Store::connect_to(
            &RedisTarget::Url(url.to_string()),
            prefix,
            Durability::default(),
        )
        .await
    }

    /// Connects as the configuration says: the sentinels' primary when sentinels are set,
    /// else `url`; with its `min_replica_acks`.
    pub async fn open(redis: &horst_config::RedisConfig, url: &str) -> Result<Store, StoreError> {
        Store::connect_to(
            &RedisTarget::from_config(redis, url),
            &redis.key_prefix,
            Durability {
                min_replica_acks: redis.min_replica_acks,
                timeout_ms: redis.replica_ack_timeout_ms,
            },
        )
        .await
    }

    /// Connects, retrying briefly (a private server that just started, a restart, sentinels
    /// in the middle of a failover). With sentinels, a watcher follows the primary for as
    /// long as a clone of the store lives.
    pub async fn connect_to(
        target: &RedisTarget,
        prefix: &str,
        durability: Durability,
    ) -> Result<Store, StoreError> {
        let described = target.describe();
        let connect_err = |source| StoreError::Connect {
            target: described.clone(),
            source,
        };
        let mut nodes = Vec::new();
        let (first, sentinels) = match target {
            RedisTarget::Url(url) => (primary::connect_url(url).await.map_err(connect_err)?, None),
            RedisTarget::Cluster(seeds) => {
                for url in seeds {
                    nodes.push(redis::Client::open(url.as_str()).map_err(connect_err)?);
                }
                let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
                let first = loop {
                    match primary::connect_cluster(seeds).await {
                        Ok(p) => break p,
                        Err(e) if tokio::time::Instant::now() >= deadline => {
                            return Err(connect_err(e))
                        }
                        Err(_) => tokio::time::sleep(primary::WATCH_EVERY).await,
                    }
                };
                (first, None)
            }
            RedisTarget::Sentinel(t) => {
                let mut sentinels = primary::Sentinels::new(t.clone());
                let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
                let first = loop {
                    let attempt = match sentinels.primary().await {
                        Ok(addr) => primary::connect_addr(&addr, sentinels.password()).await,
                        Err(e) => Err(e),
                    };
                    match attempt {
                        Ok(p) => break p,
                        Err(e) if tokio::time::Instant::now() >= deadline => {
                            return Err(connect_err(e))
                        }
                        Err(_) => tokio::time::sleep(primary::WATCH_EVERY).await,
                    }
                };
                (first, Some(sentinels))
            }
        };
        tracing::debug!(redis = %described, primary = %first.addr, "connected to the primary");
        let shared = Arc::new(Shared {
            primary: RwLock::new(first),
            moved: watch::channel(0).0,
            described,
            durability,
            clock_offset_ms: AtomicI64::new(0),
            writes_refused: std::sync::Mutex::new(None),
            one_server: matches!(target, RedisTarget::Url(_)),
            replica_of: std::sync::Mutex::new(None),
            nodes,
            next_node: AtomicUsize::new(0),
            durable: durable::Pool::new(),
        });
        if let Some(sentinels) = sentinels {
            tokio::spawn(follow_primary(Arc::downgrade(&shared), sentinels));
        }
        Ok(Store {
            client: PrimaryClient {
                shared: shared.clone(),
            },
            shared,
            prefix: prefix.to_string(),
            cluster_naming: false,
        })
    }

    /// The shared multiplexed connection to the primary (on a cluster: to every primary,
    /// each command routed by its keys). Never use it for blocking commands or SUBSCRIBE.
    pub fn conn(&self) -> Conn {
        self.shared
            .primary
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .conn
            .clone()
    }

    /// Makes dedicated connections to the primary (pub/sub), following failovers.
    pub fn client(&self) -> &PrimaryClient {
        &self.client
    }

    /// `prefix` + `name`: every key horst uses goes through here. On a cluster the name is in
    /// the records' slot group (`prefix{g}name`, [`Group::Records`]): the gateway's and the
    /// identity keys, which their scripts join, share one slot.
    pub fn key(&self, name: &str) -> String {
        self.key_in(Group::Records, name)
    }

    /// Whether key names carry hash tags: on a Redis Cluster (see [`cluster`]), or on one
    /// server named as on one ([`Store::with_cluster_naming`]).
    pub fn hash_tags(&self) -> bool {
        self.cluster_naming || !self.shared.nodes.is_empty()
    }

    /// This store with its keys named as on a cluster (hash tags, [`cluster::BUCKETS`]
    /// buckets) on one server: for tests of the bucketed paths (what a process costs a
    /// cluster's 12 buckets) on the test's own redis-server. Never mix it with a store on
    /// the same server and prefix that names keys as one server does: they name different
    /// keys.
    pub fn with_cluster_naming(mut self) -> Store {
        self.cluster_naming = true;
        self
    }

    /// `name` in slot group `group`, without the prefix: `{tag}name` on a cluster, `name` on
    /// one server (for `SCAN` patterns, which [`Store::scan_keys`] prefixes).
    pub fn name_in(&self, group: Group, name: &str) -> String {
        if self.hash_tags() {
            format!("{{{}}}{name}", group.tag())
        } else {
            name.to_string()
        }
    }

    /// `prefix` + `name` in slot group `group`: `prefix{tag}name` on a cluster.
    pub fn key_in(&self, group: Group, name: &str) -> String {
        format!("{}{}", self.prefix, self.name_in(group, name))
    }

    /// `prefix` + `name` for a key that no script or transaction joins with another (a burst
    /// limit's log): no tag, so on a cluster such keys spread over every slot.
    pub fn key_alone(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// How many buckets keys spread by id over: [`cluster::BUCKETS`] on a cluster, 1 on one
    /// server.
    pub fn buckets(&self) -> usize {
        if self.hash_tags() {
            cluster::BUCKETS
        } else {
            1
        }
    }

    /// The bucket of `id` (0 on one server).
    pub fn bucket_of(&self, id: &str) -> usize {
        cluster::bucket_of(id, self.buckets())
    }

    /// `prefix` + `name` in bucket `bucket`'s slot: `prefix{s3-..}name` on a cluster,
    /// `prefix name` on one server (one bucket, the names horst always stored).
    pub fn key_in_bucket(&self, bucket: usize, name: &str) -> String {
        // Built by hand, not with `format!`: a session write names several keys.
        let mut key = String::with_capacity(self.prefix.len() + name.len() + 16);
        key.push_str(&self.prefix);
        if self.hash_tags() {
            key.push('{');
            key.push_str(cluster::bucket_tag(bucket));
            key.push('}');
        }
        key.push_str(name);
        key
    }

    /// Every key matching `pattern` (a `SCAN MATCH` pattern of names under the prefix, in
    /// the records' group as [`Store::key`] names them), full names. On a cluster a pattern with a hash
    /// tag is scanned on the primary of its slot, any other on every primary. For operators'
    /// listings and overviews, never a request's hot path.
    pub async fn scan_keys(&self, pattern: &str) -> redis::RedisResult<Vec<String>> {
        self.scan_keys_in(Some(Group::Records), pattern).await
    }

    /// [`Store::scan_keys`] of a pattern in slot group `group` (`None`: keys named with
    /// [`Store::key_alone`]).
    pub async fn scan_keys_in(
        &self,
        group: Option<Group>,
        pattern: &str,
    ) -> redis::RedisResult<Vec<String>> {
        use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo as Node, SlotAddr};
        let pattern = match group {
            Some(group) => self.key_in(group, pattern),
            None => self.key_alone(pattern),
        };
        let Conn::Cluster(mut conn) = self.conn() else {
            return scan_on(&mut self.conn(), &pattern, None).await;
        };
        let tagged = pattern.contains('{') && pattern.contains('}');
        if tagged {
            let route = Node::SpecificNode(Route::new(
                cluster::slot(pattern.as_bytes()),
                SlotAddr::Master,
            ));
            return scan_on(
                &mut Conn::Cluster(conn),
                &pattern,
                Some(RoutingInfo::SingleNode(route)),
            )
            .await;
        }
        let mut keys = Vec::new();
        for (host, port) in cluster::primaries(&mut conn).await? {
            let route = RoutingInfo::SingleNode(Node::ByAddress { host, port });
            keys.extend(scan_on(&mut Conn::Cluster(conn.clone()), &pattern, Some(route)).await?);
        }
        Ok(keys)
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Where Redis is, without credentials, for logs and messages.
    pub fn target(&self) -> &str {
        &self.shared.described
    }

    /// The primary's address now (`host:port` with sentinels), for logs and tests.
    pub fn primary_addr(&self) -> String {
        self.shared
            .primary
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .addr
            .clone()
    }

    pub fn durability(&self) -> Durability {
        self.shared.durability
    }

    /// The connection for a durable write and its [`Store::settle`]: with
    /// `redis.min_replica_acks` ≥ 1 one of a small pool of its own ([`DURABLE_CONNS`]; waits
    /// while all are taken), so its `WAIT` holds up no other command of the process; without,
    /// the shared one ([`Store::conn`]).
    pub async fn durable(&self) -> Result<DurableConn, redis::RedisError> {
        if self.shared.durability.min_replica_acks == 0 {
            return Ok(DurableConn::shared(self.conn()));
        }
        DurableConn::take(&self.shared).await
    }

    /// After a durable write on `conn` (admission, claim, completion, revisions, board,
    /// accounts, sessions): waits until `redis.min_replica_acks` replicas have everything
    /// this connection wrote (`WAIT`), so the write survives a failover. Too few in time is
    /// an error: the write happened on the primary but is not safe, and the caller must not
    /// report it as done. With 0 (the default) it returns at once.
    /// On a cluster `WAIT` goes to every primary (the fewest acknowledgements count); after a
    /// script, [`Store::settle_at`] waits on the primary of its keys only.
    pub async fn settle(&self, conn: &mut DurableConn) -> Result<(), redis::RedisError> {
        let d = self.shared.durability;
        if d.min_replica_acks == 0 {
            return Ok(());
        }
        let acked: u32 = redis::cmd("WAIT")
            .arg(d.min_replica_acks)
            .arg(d.timeout_ms)
            .query_async(conn)
            .await?;
        acked_enough(acked, d)
    }

    /// [`Store::settle`] after a write to `key`: on a cluster `WAIT` goes to the primary of
    /// `key`'s slot (the connection the write went on), so a failover of another shard does
    /// not hold this write up.
    pub async fn settle_at(
        &self,
        conn: &mut DurableConn,
        key: &[u8],
    ) -> Result<(), redis::RedisError> {
        use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
        let d = self.shared.durability;
        if d.min_replica_acks == 0 {
            return Ok(());
        }
        if !conn.is_cluster() {
            return self.settle(conn).await;
        }
        let mut wait = redis::cmd("WAIT");
        wait.arg(d.min_replica_acks).arg(d.timeout_ms);
        let route = Route::new(cluster::slot(key), SlotAddr::Master);
        // Right after a failover the connection's slot map can still name the old primary,
        // now a replica, though the write itself followed the new primary's `MOVED`: the
        // replica refuses `WAIT` ("WAIT cannot be used with replica instances"), and callers
        // were answered 500. The map is being refreshed; ask again, for at most the ack
        // timeout, then answer unavailable (503), never an internal error.
        let started = std::time::Instant::now();
        loop {
            let answer = conn
                .route_command(
                    wait.clone(),
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
                )
                .await;
            let refused = match answer {
                Ok(redis::Value::ServerError(e)) => redis::RedisError::from(e),
                Ok(reply) => return acked_enough(redis::from_redis_value(reply)?, d),
                Err(e) => e,
            };
            if !refused.to_string().contains("replica") {
                return Err(refused);
            }
            if started.elapsed() >= Duration::from_millis(d.timeout_ms.max(200)) {
                return Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "a durable write's shard is failing over",
                    format!("WAIT went to a replica for {} ms: {refused}", d.timeout_ms),
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Makes what this process has *read* durable before it answers from it (a job's
    /// result written by a worker, a record found by an idempotent replay): one small write
    /// and `WAIT`, on a connection of the durable pool ([`Store::durable`]). Replication is
    /// one ordered stream, so a replica that has this write also has every write the primary
    /// made before it.
    pub async fn barrier(&self) -> Result<(), redis::RedisError> {
        let d = self.shared.durability;
        if d.min_replica_acks == 0 {
            return Ok(());
        }
        let mut conn = self.durable().await?;
        // On a cluster, one barrier in each slot group a caller answers from (the queue's
        // and the records'): a pipeline goes to the primary of its key, WAIT with it.
        let groups: &[Group] = if self.hash_tags() {
            &[Group::Queue, Group::Records]
        } else {
            &[Group::Records]
        };
        for &group in groups {
            let (_, acked): (i64, u32) = redis::pipe()
                .cmd("INCR")
                .arg(self.key_in(group, "durability:barrier"))
                .cmd("WAIT")
                .arg(d.min_replica_acks)
                .arg(d.timeout_ms)
                .query_async(&mut conn)
                .await?;
            acked_enough(acked, d)?;
        }
        Ok(())
    }

    /// Reads what matters about the server. Managed services may refuse CONFIG; then the
    /// facts are unknown (None) rather than an error.
    /// On a cluster: of one primary (any).
    pub async fn server_facts(&self) -> Result<ServerFacts, StoreError> {
        let mut conn = OneNode(self.conn());
        let info: String = conn.query(redis::cmd("INFO").arg("server")).await?;
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

    /// `host:port` of the server's primary when the server (one node on a cluster) is a
    /// replica (`INFO replication` `role:slave`), which refuses every write with `READONLY`;
    /// `None` for a primary.
    pub async fn replica_of(&self) -> Result<Option<String>, StoreError> {
        let mut conn = OneNode(self.conn());
        let info: String = conn.query(redis::cmd("INFO").arg("replication")).await?;
        Ok(replica_of(&info))
    }

    /// Why Redis refuses writes now, as far as can be told without writing (`horst admin
    /// status`): a failing disk refuses PING with `MISCONF` (as it refuses every write), and a
    /// server at its `maxmemory` shows it in `INFO memory` (it refuses what may grow memory
    /// with `OOM`). `None` when neither is so. On a cluster: of one primary (any).
    pub async fn write_refusal(&self) -> Result<Option<String>, StoreError> {
        let mut conn = OneNode(self.conn());
        match conn.query::<String>(&redis::cmd("PING")).await {
            Err(e) if refuses_writes(&e) => {
                return Ok(Some(format!(
                    "{} {}",
                    e.code().unwrap_or("refused"),
                    e.detail().unwrap_or_default()
                )))
            }
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
        let info: String = conn.query(redis::cmd("INFO").arg("memory")).await?;
        let field = |name: &str| -> u64 {
            info.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        let (used, max) = (field("used_memory"), field("maxmemory"));
        Ok((max > 0 && used >= max)
            .then(|| format!("OOM used_memory {used} bytes has reached maxmemory {max} bytes")))
    }

    /// The start-up check: refuse an evicting server unless allowed, warn when AOF is off.
    /// `warn` false keeps the warnings (an allowed evicting policy, AOF off, a refused CONFIG
    /// GET) to the log of the processes that serve: an operator command (`horst admin`) that
    /// said them on every run buried its own answer, and `horst admin status` shows them.
    pub async fn check_server(
        &self,
        allow_eviction: bool,
        warn: bool,
    ) -> Result<ServerFacts, StoreError> {
        let facts = self.server_facts().await?;
        if !supported_version(&facts.version) {
            return Err(StoreError::Version {
                target: self.target().to_string(),
                version: facts.version.clone(),
            });
        }
        match facts.maxmemory_policy.as_deref() {
            Some("noeviction") => {}
            Some(policy) if !allow_eviction => {
                return Err(StoreError::Eviction {
                    target: self.target().to_string(),
                    policy: policy.to_string(),
                })
            }
            Some(_) if !warn => {}
            None if !warn => {}
            Some(policy) => tracing::warn!(
                redis = %self.target(), policy,
                "Redis may evict keys (maxmemory-policy is not noeviction); starting anyway because redis.allow_eviction is set"
            ),
            None => tracing::warn!(
                redis = %self.target(),
                "cannot read maxmemory-policy (CONFIG GET refused); make sure it is noeviction"
            ),
        }
        match facts.appendonly {
            Some(true) => {}
            _ if !warn => {}
            Some(false) => tracing::warn!(
                redis = %self.target(),
                "Redis has AOF off (appendonly no): a crash of Redis loses recent jobs, revisions and sessions; set `appendonly yes`"
            ),
            None => {
                tracing::warn!(redis = %self.target(), "cannot read appendonly (CONFIG GET refused)")
            }
        }
        Ok(facts)
    }

    /// The server's clock (`TIME`, ms since the Unix epoch) with the test offset: the one
    /// place Rust reads Redis's clock, the same clock every script's `now_ms()` reads. Every
    /// process agrees on it, whatever its own clock says.
    pub async fn now_ms(&self) -> redis::RedisResult<u64> {
        let time: (u64, u64) = redis::cmd("TIME").query_async(&mut self.conn()).await?;
        Ok(self.ms_from_time(time))
    }

    /// `TIME`'s reply `(seconds, microseconds)` as [`Store::now_ms`] reads it, for a caller
    /// that sends `TIME` in its own pipeline (one round trip with its reads).
    pub fn ms_from_time(&self, (secs, micros): (u64, u64)) -> u64 {
        let ms = (secs * 1000 + micros / 1000) as i64;
        (ms + self.clock_offset_ms()).max(0) as u64
    }

    /// Shifts the clock of [`Store::now_ms`] and of every registered script, for every clone
    /// of this store (tests only: crossing a UTC midnight without waiting for it).
    pub fn set_clock_offset_ms(&self, offset_ms: i64) {
        self.shared
            .clock_offset_ms
            .store(offset_ms, Ordering::SeqCst);
    }

    /// The offset [`Store::set_clock_offset_ms`] set (0 in production).
    pub fn clock_offset_ms(&self) -> i64 {
        self.shared.clock_offset_ms.load(Ordering::SeqCst)
    }

    /// Notes how a write this process makes on its own schedule went (the API process's
    /// presence, a worker's heartbeat): a refusal (out of memory, a failing disk, a replica,
    /// too few replicas) is kept until such a write succeeds again, for `/readyz` and the
    /// metrics. Such a process stays ready (reads work, and every process is alike), but the
    /// operator sees why writes fail. An unreachable server changes nothing here: the PING of
    /// the readiness probe says that.
    pub fn note_periodic_write(&self, result: &Result<(), redis::RedisError>) {
        let refused = match result {
            Ok(()) => None,
            Err(e) if refuses_writes(e) => Some(format!(
                "Redis at {} refuses writes: {} {}",
                self.target(),
                e.code().unwrap_or("refused"),
                e.detail().unwrap_or_default()
            )),
            Err(_) => return,
        };
        let mut kept = self
            .shared
            .writes_refused
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if *kept != refused {
            match &refused {
                Some(reason) => tracing::error!(reason = %reason, "Redis refuses writes"),
                None if kept.is_some() => {
                    tracing::info!(redis = %self.target(), "Redis takes writes again")
                }
                None => {}
            }
            *kept = refused;
        }
    }

    /// `Some(reason)` while this process's periodic writes are refused
    /// ([`Store::note_periodic_write`]), or while its one server is a replica
    /// ([`Store::note_replica_of`]: then the reason names the primary and the fix).
    pub fn writes_refused(&self) -> Option<String> {
        if let Some(primary) = self.replica_primary() {
            return Some(self.replica_reason(&primary));
        }
        self.shared
            .writes_refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// True when horst talks to one server by its URL (no `redis.sentinels`, no
    /// `redis.cluster`): nothing follows the primary for it, so that server turned into a
    /// replica at run time (`REPLICAOF`, a failover without sentinels configured) refuses
    /// every write until an operator acts.
    pub fn is_one_server(&self) -> bool {
        self.shared.one_server
    }

    /// Notes what `INFO replication` of the one server said ([`Store::replica_of`]):
    /// `Some(primary)` while it is a replica. Logged once when it turns into one (with the
    /// fix) and once when it is a primary again; [`Store::writes_refused`] says it meanwhile.
    pub fn note_replica_of(&self, primary: Option<String>) {
        let mut kept = self
            .shared
            .replica_of
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if *kept != primary {
            match &primary {
                Some(p) => {
                    tracing::error!(reason = %self.replica_reason(p), "Redis is a replica now")
                }
                None => {
                    tracing::info!(redis = %self.target(), "Redis is a primary again; it takes writes")
                }
            }
            *kept = primary;
        }
    }

    /// The primary (`host:port`) while the one server is a replica ([`Store::note_replica_of`]).
    pub fn replica_primary(&self) -> Option<String> {
        self.shared
            .replica_of
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn replica_reason(&self, primary: &str) -> String {
        format!(
            "redis at {} is a replica of {primary} now: it refuses every write (READONLY). Fix: point redis.url (HORST_REDIS_URL, --redis) at the primary and restart, or configure redis.sentinels and redis.sentinel_master so horst follows the primary itself",
            self.target()
        )
    }

    /// PING, for readiness.
    pub async fn ping(&self) -> Result<(), StoreError> {
        use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
        let mut conn = self.conn();
        let Conn::Cluster(cluster) = &mut conn else {
            let _: String = redis::cmd("PING").query_async(&mut conn).await?;
            return Ok(());
        };
        // On a cluster a plain PING goes to every primary and fails while any one is down:
        // one shard failing over (or lost) made every API process not ready, and a load
        // balancer then sent nobody anywhere, though the other shards served. Ready is the
        // primaries of the queue's and the records' slots, which nearly every request needs;
        // a session shard that is down fails its own sessions' requests (503), not readiness.
        for group in [Group::Queue, Group::Records] {
            let slot = cluster::slot(self.key_in(group, "").as_bytes());
            let route = Route::new(slot, SlotAddr::Master);
            cluster
                .route_command(
                    redis::cmd("PING"),
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
                )
                .await?;
        }
        Ok(())
    }
}

/// Whether `e` means Redis cannot serve this now, for reasons that pass by themselves or by
/// an operator's hand, as opposed to a bug (a script error, an unexpected reply):
/// - it cannot be reached: connection refused, dropped or timed out, a server loading its
///   data or without a primary, a cluster slot without a node;
/// - it refuses writes: out of memory under `noeviction` (`OOM`), a failing disk
///   (`MISCONF`: the AOF or snapshot cannot be written), a replica (`READONLY`), too few
///   replicas (`NOREPLICAS`, or too few acknowledgements of a durable write).
///
/// Callers answer all of these "unavailable, retry later" (HTTP 503 with `Retry-After`,
/// MCP `engine_unavailable`), never as an internal error.
pub fn is_unreachable(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_refusal()
        || e.is_connection_dropped()
        || matches!(
            e.kind(),
            ErrorKind::Server(
                ServerErrorKind::BusyLoading
                    | ServerErrorKind::MasterDown
                    | ServerErrorKind::TryAgain
                    | ServerErrorKind::ClusterDown
                    | ServerErrorKind::ReadOnly
            ) | ErrorKind::ClusterConnectionNotFound
        )
        || refuses_writes(e)
        || slot_moving(e)
}

/// Whether a cluster was moving the request's slot (a failover, a reshard) for longer than
/// the client's redirects: `MOVED`, `ASK` or `TRYAGAIN` as the final answer, alone or inside
/// a pipeline or transaction; or a primary demoted while a `WAIT` waited on it
/// (`UNBLOCKED ... master -> replica`: a manual failover answered three MCP calls 500). The cluster connection follows up to 8 redirects with no pause
/// between them, so a slot whose primary was just killed, or one in migration, can use them
/// up; callers were answered 500 `internal_error` for it (the drills in
/// docs/reliability.md, "Redis Cluster under faults").
fn slot_moving(e: &redis::RedisError) -> bool {
    const MOVING: [&str; 4] = ["MOVED", "ASK", "TRYAGAIN", "UNBLOCKED"];
    e.code().is_some_and(|c| MOVING.contains(&c))
        || e.clone()
            .into_server_errors()
            .is_some_and(|errors| errors.iter().any(|(_, s)| MOVING.contains(&s.code())))
}

/// The server's codes for "I will not write now"; a script's write refused the same way
/// comes back with the same code in front of its message.
const REFUSING_WRITES: [&str; 4] = ["OOM", "MISCONF", "READONLY", "NOREPLICAS"];

/// Whether Redis refused a write (out of memory, a failing disk, a replica, too few
/// replicas): reads still work, writes will once the cause is gone.
pub fn refuses_writes(e: &redis::RedisError) -> bool {
    let starts = |text: &str| {
        REFUSING_WRITES
            .iter()
            .any(|code| text.trim_start().starts_with(code))
    };
    let refused = |code: Option<&str>, detail: Option<&str>| {
        code.is_some_and(|c| REFUSING_WRITES.contains(&c)) || detail.is_some_and(starts)
    };
    // A transaction (MULTI/EXEC) whose queued write was refused fails as `EXECABORT`, and a
    // pipeline with the first command's error: the refusals are inside (the audit trail's
    // push answered 500 under OOM before this).
    refused(e.code(), e.detail())
        || e.clone().into_server_errors().is_some_and(|errors| {
            errors
                .iter()
                .any(|(_, s)| refused(Some(s.code()), s.details()))
        })
}

fn acked_enough(acked: u32, d: Durability) -> Result<(), redis::RedisError> {
    if acked >= d.min_replica_acks {
        return Ok(());
    }
    Err(redis::RedisError::from((
        redis::ErrorKind::Io,
        "a durable write was not acknowledged by enough replicas in time",
        format!(
            "{acked} of redis.min_replica_acks = {} within {} ms; the write reached the primary but may be lost in a failover",
            d.min_replica_acks, d.timeout_ms
        ),
    )))
}

/// The watcher behind a sentinel store: asks where the primary is, and when it moved,
/// connects to the new one and swaps it in. Ends when the last store clone is gone.
async fn follow_primary(shared: std::sync::Weak<Shared>, mut sentinels: primary::Sentinels) {
    loop {
        tokio::time::sleep(primary::WATCH_EVERY).await;
        if shared.strong_count() == 0 {
            return;
        }
        let addr = match sentinels.primary().await {
            Ok(addr) => addr,
            Err(e) => {
                tracing::debug!(error = %e, "sentinels: no primary named right now");
                continue;
            }
        };
        let Some(s) = shared.upgrade() else { return };
        let current = s
            .primary
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .addr
            .clone();
        if current == addr {
            continue;
        }
        match primary::connect_addr(&addr, sentinels.password()).await {
            Ok(p) => {
                *s.primary.write().unwrap_or_else(|e| e.into_inner()) = p;
                s.moved.send_modify(|n| *n += 1);
                tracing::warn!(from = %current, to = %addr, "Redis primary moved (Sentinel failover); following it");
            }
            Err(e) => {
                tracing::warn!(primary = %addr, error = %e, "cannot connect to the new Redis primary yet")
            }
        }
    }
}

/// A connection that sends each command to one node: a cluster's keyless server commands
/// (`INFO`, `CONFIG GET`) to a primary, not to all (whose replies would be merged).
struct OneNode(Conn);

impl OneNode {
    async fn query<T: redis::FromRedisValue>(&mut self, cmd: &redis::Cmd) -> redis::RedisResult<T> {
        use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
        match &mut self.0 {
            Conn::One(c) => cmd.query_async(c).await,
            Conn::Cluster(c) => {
                let v = c
                    .route_command(
                        cmd.clone(),
                        RoutingInfo::SingleNode(SingleNodeRoutingInfo::RandomPrimary),
                    )
                    .await?;
                Ok(redis::from_redis_value(v)?)
            }
        }
    }
}

/// `SCAN` for `pattern` on one server, or on one cluster node (`route`).
async fn scan_on(
    conn: &mut Conn,
    pattern: &str,
    route: Option<redis::cluster_routing::RoutingInfo>,
) -> redis::RedisResult<Vec<String>> {
    let mut keys = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let mut scan = redis::cmd("SCAN");
        scan.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(500);
        let (next, batch): (u64, Vec<String>) = match (&mut *conn, &route) {
            (Conn::Cluster(c), Some(route)) => {
                redis::from_redis_value(c.route_command(scan, route.clone()).await?)?
            }
            (conn, _) => scan.query_async(conn).await?,
        };
        keys.extend(batch);
        if next == 0 {
            return Ok(keys);
        }
        cursor = next;
    }
}

async fn config_get(conn: &mut OneNode, name: &str) -> Option<String> {
    let pair: Vec<String> = conn
        .query(redis::cmd("CONFIG").arg("GET").arg(name))
        .await
        .ok()?;
    pair.get(1).cloned()
}

/// `redis://user:secret@host:6379/0` -> `redis://user:***@host:6379/0` (the configuration's).
pub use horst_config::redact_url;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_names_its_primary_and_a_primary_nothing() {
        let replica = "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.5\r\nmaster_port:6380\r\nmaster_link_status:up\r\n";
        assert_eq!(replica_of(replica).as_deref(), Some("10.0.0.5:6380"));
        assert_eq!(
            replica_of("# Replication\r\nrole:master\r\nconnected_slaves:1\r\n"),
            None
        );
        assert_eq!(replica_of(""), None);
    }

    #[test]
    fn unreachable_means_the_connection_not_the_command() {
        let refused =
            redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(is_unreachable(&refused));
        let timed_out = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(is_unreachable(&timed_out));
        let acks = acked_enough(
            0,
            Durability {
                min_replica_acks: 1,
                timeout_ms: 10,
            },
        )
        .unwrap_err();
        assert!(is_unreachable(&acks), "too few replica acks: retry later");
        let script = redis::RedisError::from((redis::ErrorKind::Client, "a bug", "bad".into()));
        assert!(!is_unreachable(&script));
        for (code, detail) in [
            ("OOM", "command not allowed when used memory > 'maxmemory'."),
            (
                "MISCONF",
                "Errors writing to the AOF file: No space left on device",
            ),
            ("NOREPLICAS", "Not enough good replicas to write."),
        ] {
            let e = redis::make_extension_error(code.to_string(), Some(detail.to_string()));
            assert!(refuses_writes(&e) && is_unreachable(&e), "{code}: {e}");
        }
        let wrong = redis::make_extension_error("WRONGTYPE".into(), Some("Operation".into()));
        assert!(!is_unreachable(&wrong));
    }

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

/// Whether `INFO server`'s `redis_version` is one horst runs on: 7.0 or later (the scripts'
/// `#!lua flags=` lines and admission's `SET ... NX GET` need it). A version it cannot read
/// (a managed service's own string) is given the benefit of the doubt: the first script then
/// says what is wrong.
fn supported_version(version: &str) -> bool {
    match version.split('.').next().map(str::parse::<u32>) {
        Some(Ok(major)) => major >= 7,
        _ => true,
    }
}

#[cfg(test)]
mod version_tests {
    use super::supported_version;

    #[test]
    fn redis_before_7_is_refused_and_an_unreadable_version_is_not() {
        for old in ["6.2.14", "6.0.0", "5.0.7", "2.8"] {
            assert!(!supported_version(old), "{old}");
        }
        for ok in ["7.0.15", "7.2.4", "7.4.0", "8.0.2", "10.1", "unknown", ""] {
            assert!(supported_version(ok), "{ok}");
        }
    }
}
