//! horst's private Redis: one redis-server per data directory, on a Unix socket at
//! `<data>/redis/redis.sock`.
//!
//! Every horst process given the same `--data` and no Redis URL finds the same server: the
//! first one starts it (and stops it when it exits), the others attach. That is what lets
//! `horst admin ... --data DIR` reach the store of a running `horst up --data DIR`. A file
//! lock serialises the check-then-start, so two processes starting at once never both spawn.
//!
//! Architecture invariant: at most one redis-server runs on a data directory's AOF. The
//! process that started it holds `owner.lock` (an exclusive `flock`) for as long as the
//! server runs, so a server that is only slow to answer (paused, forking for an AOF
//! rewrite, at its client limit) is waited for, never taken for a dead one: its socket was
//! deleted and a second server started on the same AOF.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use crate::{ping, probe, LaunchError, Listen, Probe, RedisOptions, RedisProcess};

/// Unix socket paths are limited to 108 bytes by the kernel; keep a margin.
const MAX_SOCKET_PATH: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum PrivateRedisError {
    #[error("cannot use the data directory {dir}: {source}")]
    DataDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("the data directory path is too long for a Unix socket ({len} bytes in {path}, at most {MAX_SOCKET_PATH}); use a shorter --data path")]
    SocketPathTooLong { path: PathBuf, len: usize },
    #[error("the private redis-server in {dir} belongs to a running horst process but has not answered for {} s; look at {}/redis.log, and restart the horst process that started it (`horst up` or the first `horst api`/`horst worker` given this --data)", OWNER_PATIENCE.as_secs(), dir.display())]
    Unresponsive { dir: PathBuf },
    #[error("another horst process has been starting the private redis-server in {dir} for {} s and still holds its lock; if one is stopped (Ctrl-Z, SIGSTOP), resume or end it, then start this one again", START_LOCK_PATIENCE.as_secs(), dir = dir.display())]
    StartLocked { dir: PathBuf },
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

/// How long a process waits for another one that is starting the server (which takes as
/// long as the server's AOF takes to load, and is then released).
const START_LOCK_PATIENCE: Duration = Duration::from_secs(120);

/// How long a process waits for a server another live process started to answer.
const OWNER_PATIENCE: Duration = Duration::from_secs(30);

/// The private Redis of a data directory, started by this process or attached to.
#[derive(Debug)]
pub struct PrivateRedis {
    dir: PathBuf,
    socket: PathBuf,
    process: Option<RedisProcess>,
    /// `owner.lock`, held (flock) while the server this process started runs, and across
    /// its restarts ([`PrivateRedis::restart`]): no other process starts one meanwhile.
    owner: Option<std::fs::File>,
    /// Set by [`PrivateRedis::stop`]: the server's exit from then on is no crash.
    stopped: bool,
}

impl PrivateRedis {
    /// Attaches to the private Redis of `data_dir`, starting it if nobody runs it.
    pub fn attach_or_start(
        data_dir: &Path,
        binary: &str,
    ) -> Result<PrivateRedis, PrivateRedisError> {
        Self::attach_or_start_within(data_dir, binary, START_LOCK_PATIENCE)
    }

    /// [`PrivateRedis::attach_or_start`], waiting at most `patience` for a process that holds
    /// the start lock.
    fn attach_or_start_within(
        data_dir: &Path,
        binary: &str,
        patience: Duration,
    ) -> Result<PrivateRedis, PrivateRedisError> {
        let io = |source| PrivateRedisError::DataDir {
            dir: data_dir.to_path_buf(),
            source,
        };
        let dir = data_dir.join("redis");
        std::fs::create_dir_all(&dir).map_err(io)?;
        let dir = dir.canonicalize().map_err(io)?;
        make_private(&dir).map_err(io)?;
        let socket = dir.join("redis.sock");
        let len = socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(PrivateRedisError::SocketPathTooLong { path: socket, len });
        }

        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(dir.join("start.lock"))
            .map_err(io)?;
        // Never a wait without an end: a process stopped while it held the lock (Ctrl-Z)
        // made every later start on this directory hang, silently.
        let until = std::time::Instant::now() + patience;
        loop {
            // SAFETY: flock on a file descriptor we own; released when `lock` is dropped.
            if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(io(e));
            }
            if std::time::Instant::now() >= until {
                return Err(PrivateRedisError::StartLocked { dir });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let listen = Listen::Unix(socket.clone());
        let owner = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join("owner.lock"))
            .map_err(io)?;
        // SAFETY: flock on a file descriptor we own (opened close-on-exec, so the server
        // does not inherit it); released when `owner` is dropped or this process exits.
        let free = unsafe { libc::flock(owner.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        let (process, owner) = if !free {
            // Another live process started the server: it exists, answering or not.
            // Only silence counts: a server replaying its AOF answers `-LOADING`.
            let mut deadline = std::time::Instant::now() + OWNER_PATIENCE;
            loop {
                match probe(&listen) {
                    Probe::Ready => break,
                    Probe::Loading => deadline = std::time::Instant::now() + OWNER_PATIENCE,
                    Probe::Silent => {}
                }
                if std::time::Instant::now() >= deadline {
                    return Err(PrivateRedisError::Unresponsive { dir });
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            (None, None)
        } else if ping(&listen) {
            // A server nobody holds the lock of (started by an earlier version): attach.
            (None, None)
        } else {
            // A socket file left by a crashed server would make redis-server fail to bind.
            let _ = std::fs::remove_file(&socket);
            let mut options = RedisOptions::new(&dir, listen);
            options.binary = binary.to_string();
            (Some(RedisProcess::spawn(options)?), Some(owner))
        };
        drop(lock);
        Ok(PrivateRedis {
            dir,
            socket,
            process,
            owner,
            stopped: false,
        })
    }

    /// Attaches to the private Redis of `data_dir` if one is running there; `None` if
    /// none answers (nothing is started: `horst admin` must never answer from a new,
    /// empty store).
    pub fn attach(data_dir: &Path) -> Option<PrivateRedis> {
        let dir = data_dir.join("redis").canonicalize().ok()?;
        let socket = dir.join("redis.sock");
        ping(&Listen::Unix(socket.clone())).then_some(PrivateRedis {
            dir,
            socket,
            process: None,
            owner: None,
            stopped: false,
        })
    }

    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket.display())
    }

    /// The directory holding the AOF and the log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("redis.log")
    }

    /// True when this process started the server (and so stops it).
    pub fn is_owner(&self) -> bool {
        self.process.is_some()
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(RedisProcess::pid)
    }

    /// `Some(status)` once a server this process started has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.process.as_mut().and_then(RedisProcess::try_wait)
    }

    /// True once [`PrivateRedis::stop`] was called: the server is meant to be down.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Starts the server this process started again, after it exited (a crash, an OOM
    /// kill), on the same socket and data directory: it replays its AOF, and every client
    /// reconnects to the same address. The owner lock is kept throughout, so no other
    /// process starts a server on the AOF meanwhile.
    ///
    /// The new server is tied to the calling thread (it gets SIGTERM when that thread
    /// ends): call it from a thread that lives as long as the server should.
    pub fn restart(&mut self) -> Result<u32, LaunchError> {
        let Some(process) = self.process.as_mut() else {
            return Err(LaunchError::NotOwner);
        };
        if process.try_wait().is_none() {
            return Ok(process.pid());
        }
        let options = process.options().clone();
        // A socket file left by the crashed server would make the new one fail to bind.
        let _ = std::fs::remove_file(&self.socket);
        let started = RedisProcess::spawn(options)?;
        let pid = started.pid();
        self.process = Some(started);
        Ok(pid)
    }

    /// Gives the data directory up after a server that cannot be kept running: another
    /// process may start one from now on.
    pub fn give_up(&mut self) {
        self.owner = None;
    }

    /// Stops the server if this process started it; attached processes leave it running.
    pub fn stop(&mut self, timeout: Duration) -> std::io::Result<()> {
        self.stopped = true;
        match self.process.as_mut() {
            Some(p) => p.stop(timeout),
            None => Ok(()),
        }
    }
}

/// Makes `dir` 0700 and what an earlier version left in it (AOF files, the log) 0600, its
/// subdirectories 0700: a server started under a umask of 022 wrote them world-readable.
/// Entries of another owner are left alone (changing them would fail anyway).
fn make_private(dir: &Path) -> std::io::Result<()> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let owner = std::fs::metadata(dir)?.uid();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.uid() != owner || meta.file_type().is_symlink() || meta.file_type().is_socket() {
            continue;
        }
        if meta.is_dir() {
            make_private(&entry.path())?;
        } else if meta.permissions().mode() & 0o077 != 0 {
            let mode = meta.permissions().mode() & 0o700;
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_process_attaches_and_does_not_own() {
        let data = tempfile::tempdir().unwrap();
        let mut first = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        assert!(first.is_owner());
        let second = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        assert!(!second.is_owner());
        assert_eq!(first.url(), second.url());
        drop(second);
        // The attached one leaving does not stop the server.
        assert!(ping(&Listen::Unix(first.socket.clone())));
        first.stop(Duration::from_secs(5)).unwrap();
        assert!(!ping(&Listen::Unix(first.socket.clone())));
        // AOF was on.
        assert!(first.dir().join("appendonlydir").exists());
    }

    #[test]
    fn attach_finds_a_running_server_and_never_starts_one() {
        let data = tempfile::tempdir().unwrap();
        assert!(PrivateRedis::attach(data.path()).is_none());
        assert!(
            !data.path().join("redis").exists(),
            "attach created nothing"
        );
        let mut first = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        let attached = PrivateRedis::attach(data.path()).expect("attached");
        assert!(!attached.is_owner());
        assert_eq!(attached.url(), first.url());
        first.stop(Duration::from_secs(5)).unwrap();
        assert!(PrivateRedis::attach(data.path()).is_none());
    }

    /// Every file of the private Redis (AOF, log, lock, socket) and its directories are
    /// the owner's only, also those an earlier version left readable by everyone, whatever
    /// the umask of the process that starts it.
    #[test]
    fn the_private_redis_files_are_the_owners_only() {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join("redis");
        std::fs::create_dir_all(dir.join("appendonlydir")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let old_log = dir.join("redis.log");
        std::fs::write(&old_log, "an earlier version's log\n").unwrap();
        std::fs::set_permissions(&old_log, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut server = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        // Something written: the AOF grows.
        let mut stream = std::os::unix::net::UnixStream::connect(&server.socket).unwrap();
        use std::io::{Read, Write};
        stream
            .write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
            .unwrap();
        let mut ok = [0u8; 5];
        stream.read_exact(&mut ok).unwrap();
        server.stop(Duration::from_secs(5)).unwrap();
        let mut seen = 0;
        let mut check = vec![dir.clone()];
        while let Some(d) = check.pop() {
            let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{d:?}");
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let meta = e.path().symlink_metadata().unwrap();
                if meta.is_dir() {
                    check.push(e.path());
                    continue;
                }
                let mode = meta.permissions().mode() & 0o777;
                assert_eq!(mode & 0o077, 0, "{:?} has mode {mode:o}", e.path());
                seen += 1;
            }
        }
        // The log, the stderr log, the lock, the AOF base, increment and manifest.
        assert!(seen >= 5, "only {seen} files");
    }

    /// A server that is only slow to answer (here: stopped for 2 s) is waited for by the
    /// next process, never taken for a dead one: its socket was deleted and a second
    /// server started on the same AOF.
    #[test]
    fn a_server_slow_to_answer_is_waited_for_not_started_again() {
        let data = tempfile::tempdir().unwrap();
        let mut first = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        let pid = first.pid().unwrap() as i32;
        let inode = std::fs::metadata(&first.socket).unwrap().ino();
        // SAFETY: signals to the redis-server child this test started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let resume = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            unsafe { libc::kill(pid, libc::SIGCONT) };
        });
        let second = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        resume.join().unwrap();
        assert!(!second.is_owner(), "a second server was started");
        assert_eq!(
            std::fs::metadata(&second.socket).unwrap().ino(),
            inode,
            "the socket was replaced"
        );
        assert!(ping(&Listen::Unix(first.socket.clone())));
        first.stop(Duration::from_secs(5)).unwrap();
        // Its server gone, the lock is free: the next process starts one.
        drop(first);
        let mut third = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        assert!(third.is_owner());
        third.stop(Duration::from_secs(5)).unwrap();
    }

    /// A process that holds the start lock and never lets go (stopped with Ctrl-Z while
    /// starting) makes the next one give up with advice, not hang.
    #[test]
    fn a_start_lock_held_for_good_is_given_up_with_advice() {
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(data.path().join("redis")).unwrap();
        let held = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(data.path().join("redis/start.lock"))
            .unwrap();
        // SAFETY: flock on a file descriptor the test owns.
        assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
        let err = PrivateRedis::attach_or_start_within(
            data.path(),
            "redis-server",
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(
            matches!(err, PrivateRedisError::StartLocked { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("resume or end it"), "{err}");
        drop(held);
        let mut started = PrivateRedis::attach_or_start(data.path(), "redis-server").unwrap();
        assert!(started.is_owner());
        started.stop(Duration::from_secs(5)).unwrap();
    }

    #[test]
    fn long_data_dir_is_refused_with_advice() {
        let data = tempfile::tempdir().unwrap();
        let long = data.path().join("x".repeat(120));
        let err = PrivateRedis::attach_or_start(&long, "redis-server").unwrap_err();
        assert!(err.to_string().contains("shorter --data"), "{err}");
    }
}
