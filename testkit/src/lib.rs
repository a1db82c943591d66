//! The test harness every integration test shares.
//!
//! [`RedisServer`] is a real `redis-server` on a free TCP port with its own temporary data
//! directory (AOF on, `noeviction`, like production). Tests can stop it cleanly, kill it
//! like a crash, and restart it on the same port and directory to check AOF recovery. No
//! test ever touches a Redis on port 6379.
//!
//! [`SentinelCluster`] is a primary, a replica and three sentinels (Debian's
//! `redis-sentinel`) on free loopback ports, for the failover tests.
//!
//! [`RedisCluster`] is three primaries with a replica each in cluster mode, one shared by
//! every test of a binary ([`RedisCluster::shared`]), for the cluster tests.
//!
//! [`Cut`] is a TCP proxy the test can cut off: a network partition between the processes
//! that reach Redis through it and Redis, while the others still reach it.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::path::Path;
use std::time::Duration;

use horst_redis_process::{free_port, Listen, RedisOptions, RedisProcess};

mod cluster;
mod cut;
mod sentinel;
pub use cluster::RedisCluster;
pub use cut::Cut;
pub use sentinel::{SentinelCluster, MASTER as SENTINEL_MASTER};

/// A redis-server owned by one test; killed when dropped.
pub struct RedisServer {
    dir: tempfile::TempDir,
    options: RedisOptions,
    process: Option<RedisProcess>,
}

impl RedisServer {
    /// AOF on, noeviction.
    pub fn start() -> RedisServer {
        Self::start_with(|_| {})
    }

    /// Like [`RedisServer::start`], with options changed by `adjust` (for example
    /// `o.maxmemory_policy = "allkeys-lru".into()` or `o.appendonly = false`).
    pub fn start_with(adjust: impl Fn(&mut RedisOptions)) -> RedisServer {
        let dir = tempfile::Builder::new()
            .prefix("horst-redis-")
            .tempdir()
            .expect("a temporary directory for redis");
        // A free port can be taken between our probe and redis binding it (by another test's
        // server, of this process or another, or a client's connection): the start then
        // reports that ours exited (it never takes the other server for ours), and another
        // port is tried. Any other failure is the test's to see at once.
        const TRIES: usize = 5;
        for tried in 1..=TRIES {
            let port = free_port().expect("a free port");
            let mut options = RedisOptions::new(dir.path(), Listen::Tcp(port));
            adjust(&mut options);
            match RedisProcess::spawn(options.clone()) {
                Ok(process) => {
                    return RedisServer {
                        dir,
                        options,
                        process: Some(process),
                    }
                }
                Err(e) if tried < TRIES && is_port_clash(&e) => {}
                Err(e) => panic!(
                    "cannot start redis-server for the test (try {tried} of {TRIES}, port {port}): {e}"
                ),
            }
        }
        unreachable!("the last try returns or panics")
    }

    pub fn url(&self) -> String {
        self.options.url()
    }

    pub fn port(&self) -> u16 {
        match self.options.listen {
            Listen::Tcp(port) => port,
            Listen::Unix(_) => 0,
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(RedisProcess::pid)
    }

    /// A clean shutdown: redis flushes its AOF.
    pub fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.stop(Duration::from_secs(10)).expect("stop redis-server");
        }
    }

    /// SIGKILL: what a crash looks like to Redis (AOF written so far survives, with
    /// `appendfsync everysec` at most about a second may be lost).
    pub fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.kill().expect("kill redis-server");
        }
    }

    /// Starts again on the same port and directory: the AOF is replayed.
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    /// Starts again as a replica of the server on `primary` (a crashed primary brought back
    /// after a failover: it drops what it had that the new primary lacks).
    pub fn start_again_as_replica_of(&mut self, primary: u16) {
        self.options.extra.retain(|(k, _)| k != "replicaof");
        self.options
            .extra
            .push(("replicaof".into(), format!("127.0.0.1 {primary}")));
        self.start_again();
    }

    /// Starts again after [`RedisServer::kill`] or [`RedisServer::stop`].
    pub fn start_again(&mut self) {
        assert!(self.process.is_none(), "redis-server is still running");
        self.process = Some(
            RedisProcess::spawn(self.options.clone()).expect("restart redis-server on its port"),
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut p) = self.process.take() {
            let _ = p.kill();
        }
    }
}

/// Calls by command name from the text of `INFO commandstats` (commands a script runs are
/// counted too): what the cost tests compare before and after the work they measure.
pub fn command_calls(commandstats: &str) -> std::collections::BTreeMap<String, u64> {
    let mut calls = std::collections::BTreeMap::new();
    for l in commandstats.lines() {
        let Some((name, rest)) = l.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) else {
            continue;
        };
        let n = rest
            .split(',')
            .find_map(|kv| kv.strip_prefix("calls="))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        calls.insert(name.to_string(), n);
    }
    calls
}

/// The commands run between two [`command_calls`] readings, per item of the work between
/// them: the total an item, and each command's share (`"hset 6.00"`, by name). The `INFO`
/// the readings ran is left out.
pub fn commands_per_item(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
    items: u64,
) -> (f64, Vec<String>) {
    let items = items.max(1) as f64;
    let mut total = 0;
    let mut by = Vec::new();
    for (name, n) in after {
        let d = n.saturating_sub(before.get(name).copied().unwrap_or(0));
        if name == "info" || d == 0 {
            continue;
        }
        total += d;
        by.push(format!("{name} {:.2}", d as f64 / items));
    }
    (total as f64 / items, by)
}

/// Whether a start failed only because another process bound the port between our probe and
/// the server's bind: the one failure a start retries on another port.
pub(crate) fn is_port_clash(e: &impl std::fmt::Display) -> bool {
    e.to_string().contains("Address already in use")
}
