//! A `redis-server` child process: start it, know when it is ready, notice when it dies,
//! stop it cleanly.
//!
//! horst uses this for its private Redis (`horst up` without a Redis URL) and the test
//! harness uses it to give every test its own server on a free port, which tests can stop,
//! kill and restart to check AOF recovery.
//!
//! Two guarantees matter to operators:
//! - no orphan: the child gets SIGTERM when the thread that started it dies
//!   (`PR_SET_PDEATHSIG`), so even a `kill -9` of horst does not leave a redis-server behind;
//! - a clean stop flushes the AOF: [`RedisProcess::stop`] sends SIGTERM (redis then fsyncs
//!   and exits, also when a snapshot of an operator's save points fails:
//!   `shutdown-on-sigterm force`) and only escalates to SIGKILL after a timeout.
//!
//! The child runs with umask 077, so everything it writes (AOF, RDB, log, socket) is its
//! owner's only, in a directory made 0700.
//!
//! The child runs in its own process group so a Ctrl-C in the terminal reaches horst only;
//! horst then drains its requests first and stops Redis last.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod private;
pub use private::{PrivateRedis, PrivateRedisError};

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// 127.0.0.1 on this port.
    Tcp(u16),
    /// A Unix socket (no TCP port at all, so nothing can collide with it).
    Unix(PathBuf),
}

/// How to start the server.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// The program, a name on the PATH or a path.
    pub binary: String,
    /// Its working and data directory (AOF files, log).
    pub dir: PathBuf,
    pub listen: Listen,
    pub appendonly: bool,
    pub maxmemory_policy: String,
    /// Send the child SIGTERM when the starting thread dies.
    pub die_with_parent: bool,
    /// More `--name value` pairs.
    pub extra: Vec<(String, String)>,
    /// A configuration file, given first (`redis-sentinel` needs one it may rewrite).
    pub config_file: Option<PathBuf>,
    /// How long the start waits for a server that does not answer at all. A server that
    /// answers `-LOADING` (replaying a large AOF) is waited for as long as it loads.
    pub answer_limit: Duration,
}

impl RedisOptions {
    /// The production-like defaults: AOF on, `noeviction`.
    pub fn new(dir: impl Into<PathBuf>, listen: Listen) -> Self {
        RedisOptions {
            binary: "redis-server".into(),
            dir: dir.into(),
            listen,
            appendonly: true,
            maxmemory_policy: "noeviction".into(),
            die_with_parent: true,
            extra: Vec::new(),
            config_file: None,
            answer_limit: Duration::from_secs(30),
        }
    }

    /// The URL a client connects with.
    pub fn url(&self) -> String {
        match &self.listen {
            Listen::Tcp(port) => format!("redis://127.0.0.1:{port}"),
            Listen::Unix(path) => format!("redis+unix://{}", path.display()),
        }
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("redis.log")
    }

    pub fn stderr_path(&self) -> PathBuf {
        self.dir.join("redis.stderr.log")
    }

    /// The end of the log and of stderr, for error messages.
    pub fn diagnostics(&self) -> String {
        let mut out = log_tail(&self.log_path());
        let err = log_tail(&self.stderr_path());
        if err != EMPTY_LOG {
            out.push('\n');
            out.push_str(&err);
        }
        out
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{binary} is not installed (not found on the PATH). Install it with `sudo apt-get install redis-server` (Debian, Ubuntu); if it is installed elsewhere, set redis.server_binary (HORST_REDIS_SERVER_BINARY) to its path; or give horst an existing Redis with --redis redis://HOST:PORT")]
    NotInstalled { binary: String },
    #[error("cannot start {binary}: {source}")]
    Spawn {
        binary: String,
        source: std::io::Error,
    },
    #[error("cannot create the Redis directory {dir}: {source}")]
    Dir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("redis-server exited during start-up ({status}). Its log {log} ends with:\n{tail}")]
    Exited {
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error("redis-server did not answer PING within {secs} s. Its log {log} ends with:\n{tail}")]
    NotReady {
        secs: u64,
        log: PathBuf,
        tail: String,
    },
    #[error("this process did not start the private redis-server, so it cannot start it again; the horst process that started it does")]
    NotOwner,
}

/// A running (or exited) redis-server child.
#[derive(Debug)]
pub struct RedisProcess {
    child: Child,
    options: RedisOptions,
    exited: Option<ExitStatus>,
}

impl RedisProcess {
    /// Starts the server and waits until it answers PING (loading a large AOF may take a while).
    pub fn spawn(options: RedisOptions) -> Result<RedisProcess, LaunchError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&options.dir)
            .map_err(|source| LaunchError::Dir {
                dir: options.dir.clone(),
                source,
            })?;
        let mut cmd = Command::new(&options.binary);
        // Arguments rather than a config file: nothing to keep in sync on disk (a sentinel
        // alone needs a file, for the state it learns).
        if let Some(file) = &options.config_file {
            cmd.arg(file);
        }
        cmd.arg("--dir").arg(&options.dir);
        match &options.listen {
            Listen::Tcp(port) => {
                cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
            }
            Listen::Unix(path) => {
                cmd.args(["--port", "0", "--unixsocketperm", "700"]);
                cmd.arg("--unixsocket").arg(path);
            }
        }
        cmd.args([
            "--appendonly",
            if options.appendonly { "yes" } else { "no" },
            "--appendfsync",
            "everysec",
            "--save",
            "",
            // SIGTERM (a stop, or PR_SET_PDEATHSIG when horst dies) always ends the server,
            // even when an operator's save points are set and the last snapshot fails (a
            // failing disk): Redis then refused to exit and held the data directory. Nothing
            // is lost by it: the AOF is flushed and fsynced before the snapshot is tried.
            "--shutdown-on-sigterm",
            "force",
            "--maxmemory-policy",
            &options.maxmemory_policy,
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ]);
        cmd.arg("--logfile").arg(options.log_path());
        for (k, v) in &options.extra {
            cmd.arg(format!("--{k}")).arg(v);
        }
        // Start-up errors (a bad option) go to stderr before the log file is open.
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(options.stderr_path())
            .map_err(|source| LaunchError::Dir {
                dir: options.dir.clone(),
                source,
            })?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .process_group(0);
        let die_with_parent = options.die_with_parent;
        // SAFETY: umask and prctl are async-signal-safe; nothing else runs between fork and
        // exec.
        unsafe {
            cmd.pre_exec(move || {
                // Redis's data (AOF, RDB, log, sockets) is its owner's only: the store holds
                // password hashes, tokens' hashes and every game.
                libc::umask(0o077);
                if die_with_parent && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                LaunchError::NotInstalled {
                    binary: options.binary.clone(),
                }
            } else {
                LaunchError::Spawn {
                    binary: options.binary.clone(),
                    source,
                }
            }
        })?;
        let mut process = RedisProcess {
            child,
            options,
            exited: None,
        };
        process.wait_ready()?;
        Ok(process)
    }

    /// Waits until the server answers PING. Only time without any answer counts against
    /// `answer_limit`: a server replaying a large AOF answers `-LOADING` for as long as that
    /// takes (minutes for gigabytes), and killing it there meant horst could never start.
    fn wait_ready(&mut self) -> Result<(), LaunchError> {
        let limit = self.options.answer_limit;
        let mut start = Instant::now();
        loop {
            if let Some(status) = self.try_wait() {
                return Err(LaunchError::Exited {
                    status: status.to_string(),
                    log: self.options.log_path(),
                    tail: self.options.diagnostics(),
                });
            }
            match probe(&self.options.listen) {
                Probe::Ready if self.answers_as_ours() => return Ok(()),
                // Another server on the port (its free port was ours too, or it took the
                // port while ours was stopped): ours fails to bind and exits, which the
                // next turn reports. Taking it for ours made two tests share one server.
                Probe::Ready => {}
                Probe::Loading => start = Instant::now(),
                Probe::Silent => {}
            }
            if start.elapsed() > limit {
                let _ = self.kill();
                return Err(LaunchError::NotReady {
                    secs: limit.as_secs(),
                    log: self.options.log_path(),
                    tail: self.options.diagnostics(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the server that answers is this child (`INFO server`'s `process_id`). On a
    /// TCP port any server may answer; a Unix socket is in a directory of its own, where a
    /// server that answers is ours or one [`PrivateRedis`] knows of (and `binary` may then
    /// be a wrapper that forks rather than execs, whose pid is not the server's).
    fn answers_as_ours(&self) -> bool {
        match self.options.listen {
            Listen::Tcp(_) => server_pid(&self.options.listen) == Some(self.pid()),
            Listen::Unix(_) => true,
        }
    }

    pub fn url(&self) -> String {
        self.options.url()
    }

    pub fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// `Some(status)` once the process has exited (for whatever reason).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exited = Some(status);
            }
        }
        self.exited
    }

    /// SIGTERM, then SIGKILL after `timeout`. Redis flushes its AOF on SIGTERM.
    pub fn stop(&mut self, timeout: Duration) -> std::io::Result<()> {
        if self.try_wait().is_some() {
            return Ok(());
        }
        signal(self.child.id(), libc::SIGTERM);
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.try_wait().is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill()
    }

    /// SIGKILL: a crash, as far as Redis is concerned.
    pub fn kill(&mut self) -> std::io::Result<()> {
        if self.try_wait().is_some() {
            return Ok(());
        }
        self.child.kill()?;
        let status = self.child.wait()?;
        self.exited = Some(status);
        Ok(())
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        let _ = self.stop(Duration::from_secs(5));
    }
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// A minimal RESP PING, so this crate needs no Redis client. `-LOADING` (AOF replay in
/// progress) is not ready yet.
pub fn ping(listen: &Listen) -> bool {
    probe(listen) == Probe::Ready
}

/// What a server answered a PING.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Ready,
    /// Alive, replaying its AOF or RDB (`-LOADING`): it answers once loaded.
    Loading,
    /// No server, or no answer.
    Silent,
}

/// PINGs the server within half a second.
pub fn probe(listen: &Listen) -> Probe {
    match ask(listen, b"*1\r\n$4\r\nPING\r\n", |got| !got.is_empty()) {
        Some(answer) if answer.starts_with(b"+PONG") => Probe::Ready,
        Some(answer) if answer.starts_with(b"-LOADING") => Probe::Loading,
        _ => Probe::Silent,
    }
}

/// The process id of the server that answers (`INFO server`), `None` if none answers.
fn server_pid(listen: &Listen) -> Option<u32> {
    let request = b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n";
    let answer = ask(listen, request, |got| {
        got.starts_with(b"-") || process_id(got).is_some()
    })?;
    process_id(&answer)
}

/// `process_id` of an `INFO` reply, once its line is complete.
fn process_id(info: &[u8]) -> Option<u32> {
    let text = String::from_utf8_lossy(info);
    let (_, rest) = text.split_once("\r\nprocess_id:")?;
    let (digits, _) = rest.split_once("\r\n")?;
    digits.parse().ok()
}

/// Sends `request` and reads until `complete` says the answer is whole; `None` when no
/// server answers, or it is silent for half a second.
fn ask(listen: &Listen, request: &[u8], complete: impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
    fn exchange(
        mut stream: impl Read + Write,
        request: &[u8],
        complete: impl Fn(&[u8]) -> bool,
    ) -> Option<Vec<u8>> {
        stream.write_all(request).ok()?;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !complete(&got) {
            match stream.read(&mut buf).ok()? {
                0 => return None,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
        Some(got)
    }
    let timeout = Some(Duration::from_millis(500));
    match listen {
        Listen::Tcp(port) => {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], *port));
            let s = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
            let _ = s.set_read_timeout(timeout);
            exchange(s, request, complete)
        }
        Listen::Unix(path) => {
            let s = std::os::unix::net::UnixStream::connect(path).ok()?;
            let _ = s.set_read_timeout(timeout);
            exchange(s, request, complete)
        }
    }
}

const EMPTY_LOG: &str = "(the log is empty)";

/// The last lines of a log, for error messages.
pub fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(8);
    if lines.is_empty() {
        EMPTY_LOG.to_string()
    } else {
        lines[from..].join("\n")
    }
}

/// A TCP port that was free a moment ago (the caller retries if it is taken meanwhile).
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binary_says_how_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = RedisOptions::new(dir.path(), Listen::Tcp(free_port().unwrap()));
        opts.binary = "redis-server-that-does-not-exist".into();
        let err = RedisProcess::spawn(opts).unwrap_err();
        assert!(matches!(err, LaunchError::NotInstalled { .. }));
        assert!(err.to_string().contains("apt-get install redis-server"));
        // The setting that named the missing program, for a path with a typo.
        assert!(err.to_string().contains("redis.server_binary"), "{err}");
    }

    #[test]
    fn starts_answers_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        let opts = RedisOptions::new(dir.path(), Listen::Unix(dir.path().join("r.sock")));
        let mut redis = RedisProcess::spawn(opts.clone()).unwrap();
        assert!(ping(&opts.listen));
        redis.stop(Duration::from_secs(5)).unwrap();
        assert!(redis.try_wait().is_some());
        assert!(!ping(&opts.listen));
    }

    /// One command over a fresh connection, its reply as text.
    fn send(listen: &Listen, args: &[&str]) -> String {
        let Listen::Unix(path) = listen else {
            unreachable!("the tests use sockets")
        };
        let mut stream = std::os::unix::net::UnixStream::connect(path).unwrap();
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        stream.write_all(out.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let n = stream.read(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    /// A server replaying its data for longer than `answer_limit` answers `-LOADING` all
    /// along: it is waited for, not killed (horst could never start on a large AOF).
    #[test]
    fn a_server_loading_for_long_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = RedisOptions::new(dir.path(), Listen::Unix(dir.path().join("r.sock")));
        // Uncompressed, so that reading each key crosses the interval below.
        opts.extra = vec![("rdbcompression".into(), "no".into())];
        let mut redis = RedisProcess::spawn(opts.clone()).unwrap();
        // 100 keys of 1000 bytes in the AOF's base (an RDB), whose loading the option below
        // slows to about 5 s.
        let value = "x".repeat(1000);
        let keys: Vec<String> = (1..=100).map(|i| format!("k{i}")).collect();
        let mut mset = vec!["MSET"];
        for k in &keys {
            mset.push(k);
            mset.push(&value);
        }
        assert!(send(&opts.listen, &mset).starts_with("+OK"));
        assert!(send(&opts.listen, &["BGREWRITEAOF"]).starts_with('+'));
        let start = Instant::now();
        while !send(&opts.listen, &["INFO", "persistence"])
            .contains("aof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0")
            || start.elapsed() < Duration::from_millis(200)
        {
            assert!(start.elapsed() < Duration::from_secs(30), "no rewrite");
            std::thread::sleep(Duration::from_millis(50));
        }
        redis.stop(Duration::from_secs(5)).unwrap();

        opts.answer_limit = Duration::from_secs(2);
        opts.extra = vec![
            ("key-load-delay".into(), "50000".into()),
            (
                "loading-process-events-interval-bytes".into(),
                "1024".into(),
            ),
        ];
        let begun = Instant::now();
        let mut redis = RedisProcess::spawn(opts.clone()).expect("waited for while loading");
        assert!(
            begun.elapsed() > Duration::from_secs(2),
            "the load was not longer than the limit ({:?}): the test shows nothing",
            begun.elapsed()
        );
        assert!(send(&opts.listen, &["GET", "k100"]).contains(&"x".repeat(1000)));
        redis.stop(Duration::from_secs(5)).unwrap();
    }

    /// An operator's save points (`CONFIG SET save`) with a snapshot that cannot be written
    /// (a failing disk; here the snapshot's name is taken by a directory): Redis answers
    /// SIGTERM with a last snapshot and, when that fails, refuses to exit, so the SIGTERM a
    /// `kill -9`'d `horst up` leaves its private Redis (`PR_SET_PDEATHSIG`) left a
    /// redis-server running on the data directory. It must exit, and keep every write: the AOF
    /// is flushed and fsynced before the snapshot is tried.
    #[test]
    fn sigterm_stops_a_server_whose_last_snapshot_fails_and_keeps_its_aof() {
        let dir = tempfile::tempdir().unwrap();
        let opts = RedisOptions::new(dir.path(), Listen::Unix(dir.path().join("r.sock")));
        std::fs::create_dir(dir.path().join("dump.rdb")).unwrap();
        // Started from a thread that then ends: the server gets SIGTERM from the kernel, as
        // when the process that started it dies.
        let spawned = {
            let opts = opts.clone();
            std::thread::spawn(move || {
                let redis = RedisProcess::spawn(opts.clone()).unwrap();
                assert!(send(&opts.listen, &["CONFIG", "SET", "save", "3600 1"]).starts_with("+OK"));
                // Written just before the SIGTERM: within `appendfsync everysec`'s second.
                assert!(send(&opts.listen, &["SET", "k", "kept"]).starts_with("+OK"));
                redis
            })
        };
        let mut redis = spawned.join().unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(status) = redis.try_wait() {
                break status;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = redis.kill();
                panic!(
                    "redis-server still runs 60 s after its SIGTERM. Its log:\n{}",
                    opts.diagnostics()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{status}: {}", opts.diagnostics());
        let log = std::fs::read_to_string(opts.log_path()).unwrap();
        assert!(
            log.contains("Error trying to save the DB"),
            "the snapshot did not fail, the test shows nothing: {log}"
        );

        let mut again = RedisProcess::spawn(opts.clone()).unwrap();
        assert!(send(&opts.listen, &["GET", "k"]).contains("kept"));
        again.stop(Duration::from_secs(5)).unwrap();
    }

    /// A server already on the port (another test's, whose free port was ours too; or one
    /// that took the port while ours was stopped) answers the start's PING at once, before
    /// ours fails to bind it: the start took it for ours, and two tests shared one server
    /// (one's `CONFIG SET maxmemory 1` refused the other's writes; the other's end left it
    /// `Connection refused`). Ours exits and the start says why.
    #[test]
    fn a_server_of_another_on_the_port_is_not_taken_for_ours() {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port().unwrap();
        let theirs = RedisOptions::new(dir.path().join("theirs"), Listen::Tcp(port));
        let mut other = RedisProcess::spawn(theirs).unwrap();
        let ours = RedisOptions::new(dir.path().join("ours"), Listen::Tcp(port));
        let err = RedisProcess::spawn(ours).expect_err("started on a port another server holds");
        assert!(matches!(err, LaunchError::Exited { .. }), "{err}");
        assert!(err.to_string().contains("Address already in use"), "{err}");
        other.stop(Duration::from_secs(5)).unwrap();
    }

    #[test]
    fn bad_option_reports_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = RedisOptions::new(dir.path(), Listen::Tcp(free_port().unwrap()));
        opts.maxmemory_policy = "not-a-policy".into();
        let err = RedisProcess::spawn(opts).unwrap_err();
        assert!(matches!(err, LaunchError::Exited { .. }), "{err}");
    }
}
