//! A Redis Cluster of three primaries with one replica each (Debian's redis-server with
//! `cluster-enabled yes`, each on a free loopback port with its own directory, joined by
//! `redis-cli --cluster create`): what the cluster tests run against.
//!
//! [`RedisCluster::shared`] is one cluster for the whole test binary (six processes are too
//! many to start per test on CI's two cores); tests on it keep apart by key prefix. A test
//! that kills a node starts its own with [`RedisCluster::start`].

use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use horst_redis_process::{free_port, RedisOptions};

use crate::sentinel::{command, role_of};
use crate::RedisServer;

/// Six servers; every one is killed when dropped.
pub struct RedisCluster {
    pub servers: Vec<RedisServer>,
}

fn cluster_node(o: &mut RedisOptions) {
    let bus = free_port().expect("a free port for the cluster bus");
    o.extra.extend([
        ("cluster-enabled".into(), "yes".into()),
        ("cluster-config-file".into(), "nodes.conf".into()),
        ("cluster-port".into(), bus.to_string()),
        // A primary that does not answer for 2 s is failed over to its replica.
        ("cluster-node-timeout".into(), "2000".into()),
        // The other shards keep serving while one is failing over.
        ("cluster-require-full-coverage".into(), "no".into()),
        ("repl-diskless-sync-delay".into(), "0".into()),
    ]);
}

impl RedisCluster {
    /// Starts six nodes, creates the cluster (three primaries, one replica each) and waits
    /// until every node says the cluster is ok and every replica is in sync.
    pub fn start() -> RedisCluster {
        Self::start_with(|_| {})
    }

    /// Like [`RedisCluster::start`], with every node's options changed by `adjust` (for
    /// example `o.appendonly = false` for a benchmark).
    pub fn start_with(adjust: impl Fn(&mut RedisOptions)) -> RedisCluster {
        let servers: Vec<RedisServer> = (0..6)
            .map(|_| {
                RedisServer::start_with(|o| {
                    cluster_node(o);
                    adjust(o);
                })
            })
            .collect();
        let mut args: Vec<String> = vec!["--cluster".into(), "create".into()];
        args.extend(servers.iter().map(|s| format!("127.0.0.1:{}", s.port())));
        args.extend(["--cluster-replicas", "1", "--cluster-yes"].map(String::from));
        let out = Command::new("redis-cli")
            .args(&args)
            .output()
            .expect("run redis-cli --cluster create (Debian's redis-tools)");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster { servers };
        cluster.wait_until_ok(Duration::from_secs(60));
        cluster
    }

    /// The cluster of this test binary, started on first use, never stopped before the
    /// binary exits. Its servers are started from a thread that lives as long as the
    /// process (they die with the thread that started them).
    pub fn shared() -> &'static RedisCluster {
        static SHARED: OnceLock<RedisCluster> = OnceLock::new();
        SHARED.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(RedisCluster::start());
                loop {
                    std::thread::park();
                }
            });
            rx.recv().expect("the shared cluster started")
        })
    }

    /// `redis://127.0.0.1:<port>` of every node, for `redis.cluster`.
    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(RedisServer::url).collect()
    }

    /// The ports of the nodes that are primaries now.
    pub fn primary_ports(&self) -> Vec<u16> {
        self.servers
            .iter()
            .map(RedisServer::port)
            .filter(|p| role_of(*p).as_deref() == Some("master"))
            .collect()
    }

    /// The node on `port`.
    pub fn server_on(&mut self, port: u16) -> &mut RedisServer {
        self.servers
            .iter_mut()
            .find(|s| s.port() == port)
            .expect("a cluster node on that port")
    }

    /// The port of the primary serving `slot` now (each primary's own `CLUSTER NODES`).
    pub fn primary_of_slot(&self, slot: u16) -> Option<u16> {
        self.primary_ports()
            .into_iter()
            .find(|p| command(*p, &["CLUSTER", "NODES"]).is_some_and(|n| owns(&n, slot)))
    }

    /// The port of the replica of the primary on `primary` (its `CLUSTER NODES`).
    pub fn replica_of(&self, primary: u16) -> Option<u16> {
        // A loaded machine's node may answer slowly: ask a few times.
        (0..20).find_map(|_| {
            let found = self.replica_in(primary);
            if found.is_none() {
                std::thread::sleep(Duration::from_millis(250));
            }
            found
        })
    }

    fn replica_in(&self, primary: u16) -> Option<u16> {
        let nodes = command(primary, &["CLUSTER", "NODES"])?;
        let fields = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let port_of = |addr: &str| -> Option<u16> {
            addr.split('@').next()?.rsplit(':').next()?.parse().ok()
        };
        let id = nodes
            .lines()
            .map(fields)
            .find(|f| f.len() > 2 && port_of(&f[1]) == Some(primary))?[0]
            .clone();
        nodes
            .lines()
            .map(fields)
            .find(|f| f.len() > 3 && f[2].contains("slave") && f[3] == id)
            .and_then(|f| port_of(&f[1]))
    }

    /// Runs `args` on the node on `port`; its reply as text (`None`: no answer).
    pub fn command_on(&self, port: u16, args: &[&str]) -> Option<String> {
        command(port, args)
    }

    /// Waits until every live node says `cluster_state:ok` and each primary has its replica
    /// in sync.
    pub fn wait_until_ok(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let live: Vec<u16> = self
                .servers
                .iter()
                .filter(|s| s.pid().is_some())
                .map(RedisServer::port)
                .collect();
            let ok = live.iter().all(|p| {
                command(*p, &["CLUSTER", "INFO"]).is_some_and(|i| i.contains("cluster_state:ok"))
            });
            let primaries = self.primary_ports();
            let synced = primaries.len() == 3
                && primaries.iter().all(|p| {
                    command(*p, &["INFO", "replication"]).is_some_and(|i| {
                        i.lines()
                            .any(|l| l.starts_with("slave0:") && l.contains("state=online"))
                    })
                });
            if ok && synced {
                return;
            }
            if start.elapsed() >= limit {
                let nodes = live
                    .first()
                    .and_then(|p| command(*p, &["CLUSTER", "NODES"]))
                    .unwrap_or_default();
                panic!(
                    "the Redis Cluster was not ok with its replicas in sync within {limit:?} (ok: {ok}, primaries {primaries:?}):\n{nodes}"
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// In `CLUSTER NODES` output, whether the `myself` node serves `slot`.
fn owns(nodes: &str, slot: u16) -> bool {
    nodes
        .lines()
        .filter(|l| l.contains("myself") && l.contains("master"))
        .any(|l| {
            l.split_whitespace().skip(8).any(|range| {
                let (a, b) = range.split_once('-').unwrap_or((range, range));
                matches!((a.parse::<u16>(), b.parse::<u16>()), (Ok(a), Ok(b)) if a <= slot && slot <= b)
            })
        })
}
