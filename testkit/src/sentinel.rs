//! A primary, a replica and three sentinels on free loopback ports, each with its own
//! directory: what the failover tests run against.

use std::time::{Duration, Instant};

use horst_redis_process::{free_port, Listen, RedisOptions, RedisProcess};

use crate::RedisServer;

/// The master name the sentinels monitor.
pub const MASTER: &str = "horst";

/// Replication and failover settings for test speed: the first sync starts at once, a
/// primary is down after 1 s without an answer.
fn fast_replication(o: &mut RedisOptions) {
    o.extra
        .push(("repl-diskless-sync-delay".into(), "0".into()));
}

/// Two data servers and three sentinels; everything is killed when dropped.
pub struct SentinelCluster {
    /// `servers[0]` starts as the primary, `servers[1]` as its replica.
    pub servers: Vec<RedisServer>,
    sentinels: Vec<(tempfile::TempDir, RedisProcess)>,
}

impl SentinelCluster {
    /// Starts and waits until the replica is in sync and every sentinel knows both.
    pub fn start() -> SentinelCluster {
        let primary = RedisServer::start_with(fast_replication);
        let port = primary.port();
        let replica = RedisServer::start_with(|o| {
            fast_replication(o);
            o.extra
                .push(("replicaof".into(), format!("127.0.0.1 {port}")));
        });
        let mut sentinels = Vec::new();
        for _ in 0..3 {
            sentinels.push(start_sentinel(port));
        }
        let cluster = SentinelCluster {
            servers: vec![primary, replica],
            sentinels,
        };
        cluster.wait_until(
            Duration::from_secs(30),
            "the replica in sync and known to every sentinel",
            |c| {
                c.replica_in_sync(port)
                    && c.sentinel_ports().iter().all(|s| sentinel_sees_replica(*s))
            },
        );
        cluster
    }

    /// `host:port` of each sentinel, for `redis.sentinels`.
    pub fn sentinel_addrs(&self) -> Vec<String> {
        self.sentinel_ports()
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect()
    }

    fn sentinel_ports(&self) -> Vec<u16> {
        self.sentinels
            .iter()
            .map(|(_, p)| match p.options().listen {
                Listen::Tcp(port) => port,
                Listen::Unix(_) => 0,
            })
            .collect()
    }

    /// The port the sentinels name as the primary now, if they agree on one.
    pub fn primary_port(&self) -> Option<u16> {
        let ports: Vec<Option<u16>> = self
            .sentinel_ports()
            .iter()
            .map(|s| sentinel_master_port(*s))
            .collect();
        match ports.first() {
            Some(Some(p)) if ports.iter().all(|q| *q == Some(*p)) => Some(*p),
            _ => None,
        }
    }

    /// The data server on `port`.
    pub fn server_on(&mut self, port: u16) -> &mut RedisServer {
        self.servers
            .iter_mut()
            .find(|s| s.port() == port)
            .expect("a data server on that port")
    }

    /// Kills the current primary with SIGKILL (a crash). Returns its port.
    pub fn kill_primary(&mut self) -> u16 {
        let port = self
            .primary_port()
            .expect("the sentinels agree on a primary");
        self.server_on(port).kill();
        port
    }

    /// Waits until the sentinels name a primary other than `old` and it answers as one.
    /// Returns its port and how long it took.
    pub fn wait_for_failover(&self, old: u16, limit: Duration) -> (u16, Duration) {
        let start = Instant::now();
        loop {
            if let Some(p) = self.primary_port() {
                if p != old && role_of(p).as_deref() == Some("master") {
                    return (p, start.elapsed());
                }
            }
            assert!(start.elapsed() < limit, "no failover within {limit:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn replica_in_sync(&self, primary: u16) -> bool {
        info(primary, "replication").is_some_and(|i| {
            i.lines()
                .any(|l| l.starts_with("slave0:") && l.contains("state=online"))
        })
    }

    fn wait_until(&self, limit: Duration, what: &str, ok: impl Fn(&Self) -> bool) {
        let start = Instant::now();
        while !ok(self) {
            assert!(start.elapsed() < limit, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for SentinelCluster {
    fn drop(&mut self) {
        for (_, p) in &mut self.sentinels {
            let _ = p.kill();
        }
    }
}

fn start_sentinel(primary: u16) -> (tempfile::TempDir, RedisProcess) {
    let dir = tempfile::Builder::new()
        .prefix("horst-sentinel-")
        .tempdir()
        .expect("a temporary directory for a sentinel");
    let conf = dir.path().join("sentinel.conf");
    std::fs::write(
        &conf,
        format!(
            "sentinel monitor {MASTER} 127.0.0.1 {primary} 2\n\
             sentinel down-after-milliseconds {MASTER} 1000\n\
             sentinel failover-timeout {MASTER} 5000\n\
             sentinel parallel-syncs {MASTER} 1\n"
        ),
    )
    .expect("write sentinel.conf");
    // As for a server (`RedisServer::start_with`): only a port taken between our probe and the
    // bind is retried; any other failure is the test's to see at once.
    const TRIES: usize = 5;
    for tried in 1..=TRIES {
        let port = free_port().expect("a free port");
        let mut o = RedisOptions::new(dir.path(), Listen::Tcp(port));
        o.binary = "redis-sentinel".into();
        o.config_file = Some(conf.clone());
        o.appendonly = false;
        match RedisProcess::spawn(o) {
            Ok(p) => return (dir, p),
            Err(e) if tried < TRIES && crate::is_port_clash(&e) => {}
            Err(e) => panic!(
                "cannot start redis-sentinel (try {tried} of {TRIES}, port {port}; install Debian's redis-sentinel): {e}"
            ),
        }
    }
    unreachable!("the last try returns or panics")
}

/// One command over plain RESP (the testkit has no Redis client on purpose): the reply's
/// text, or None if the server does not answer.
pub(crate) fn command(port: u16, args: &[&str]) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(req.as_bytes()).ok()?;
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    // Replies here are small; read until the server pauses.
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if n < buf.len() {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    (!out.is_empty()).then(|| String::from_utf8_lossy(&out).into_owned())
}

fn info(port: u16, section: &str) -> Option<String> {
    command(port, &["INFO", section])
}

/// `master` or `slave` (ROLE's first element).
pub(crate) fn role_of(port: u16) -> Option<String> {
    let reply = command(port, &["ROLE"])?;
    let mut lines = reply.lines();
    lines.next();
    lines.next();
    lines.next().map(str::to_string)
}

fn sentinel_master_port(sentinel: u16) -> Option<u16> {
    let reply = command(sentinel, &["SENTINEL", "get-master-addr-by-name", MASTER])?;
    // *2 $9 127.0.0.1 $4 6390
    reply.lines().nth(4)?.trim().parse().ok()
}

fn sentinel_sees_replica(sentinel: u16) -> bool {
    command(sentinel, &["SENTINEL", "replicas", MASTER])
        .is_some_and(|r| r.contains("slave") && !r.starts_with("*0"))
}
