//! Keeps the private redis-server of `horst up` (or the first `horst api`/`horst worker`
//! given a data directory) running: a server that exits without being asked to (a crash,
//! an OOM kill, `kill -9`) is started again on the same socket and AOF, as `horst up`'s
//! worker child is. Until it answers, `/readyz` says what happened; every client (the API,
//! the worker child, attached processes) reconnects to the same address by itself.
//!
//! A server that keeps dying (a broken AOF, a full disk) is not restarted for ever:
//! after [`MAX_RESTARTS`] within [`RESTART_WINDOW`] horst turns not ready for good and
//! says why, as it did before restarts existed.
//!
//! Architecture invariant: the restarts run on this module's own thread, which lives as
//! long as the server may. A redis-server horst starts gets SIGTERM when the *thread* that
//! started it ends (its parent-death signal), so starting one from a tokio thread, which
//! the runtime may retire when idle, would stop it at a random moment.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_redis_process::PrivateRedis;
use horst_store::Health;

use crate::terminal;

/// The operator's `horst: ...` line beside the log event that says the same. With JSON logs
/// the event is the line (one JSON event on stderr, with the reason as a field), so the
/// terminal line would be the same event twice.
fn say(line: &str) {
    if !terminal::json() {
        terminal::say(line);
    }
}

/// As [`say`], on stderr.
fn warn(line: &str) {
    if !terminal::json() {
        terminal::warn(line);
    }
}

/// How often the server's exit is looked for.
const POLL: Duration = Duration::from_millis(250);
/// Restarts allowed within [`RESTART_WINDOW`] before horst gives up.
pub const MAX_RESTARTS: usize = 5;
pub const RESTART_WINDOW: Duration = Duration::from_secs(600);
/// The longest wait between two restarts of a server that keeps dying.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Watches the private server this process started, on a thread of its own; the thread
/// ends once the server is stopped on purpose ([`PrivateRedis::stop`]) or given up.
pub fn supervise(private: Arc<Mutex<PrivateRedis>>, health: Health) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("private-redis".into())
        .spawn(move || run(&private, &health))
        .expect("a thread for the private redis-server's supervision")
}

fn run(private: &Mutex<PrivateRedis>, health: &Health) {
    let lock = || private.lock().unwrap_or_else(|e| e.into_inner());
    let mut exits: Vec<Instant> = Vec::new();
    loop {
        std::thread::sleep(POLL);
        let (status, log) = {
            let mut p = lock();
            if p.is_stopped() {
                return;
            }
            (p.try_wait(), p.log_path())
        };
        let Some(status) = status else { continue };
        exits.retain(|t| t.elapsed() < RESTART_WINDOW);
        exits.push(Instant::now());
        if exits.len() > MAX_RESTARTS {
            let reason = format!(
                "the private redis-server exited unexpectedly ({status}), the {}th time within {} minutes; horst stopped starting it again. See {} (a damaged AOF: `redis-check-aof --fix`; a full disk: free space), then restart horst (its AOF is replayed at start)",
                exits.len(),
                RESTART_WINDOW.as_secs() / 60,
                log.display()
            );
            tracing::error!(reason = %reason, "private redis-server died; giving up");
            warn(&format!("horst: {reason}"));
            health.set_fatal(reason);
            lock().give_up();
            return;
        }
        let reason = format!(
            "the private redis-server exited unexpectedly ({status}); horst is starting it again (its AOF is replayed; restart {} of at most {MAX_RESTARTS} within {} minutes). See {}",
            exits.len(),
            RESTART_WINDOW.as_secs() / 60,
            log.display()
        );
        tracing::error!(reason = %reason, "private redis-server died");
        warn(&format!("horst: {reason}"));
        health.set_outage(Some(reason));
        // The first restart at once; a server that keeps dying, 1 s, 2 s, 4 s ... later.
        let backoff = backoff(exits.len());
        let until = Instant::now() + backoff;
        while Instant::now() < until {
            std::thread::sleep(POLL.min(until - Instant::now()));
            if lock().is_stopped() {
                return;
            }
        }
        let mut p = lock();
        if p.is_stopped() {
            return;
        }
        match p.restart() {
            Ok(pid) => {
                tracing::info!(pid, "private redis-server started again");
                say(&format!(
                    "horst: private redis-server started again (pid {pid})"
                ));
                health.set_outage(None);
            }
            // Counted as the next exit on the next look (the old process is still the one
            // on record), so the backoff and the limit apply.
            Err(e) => {
                tracing::error!(error = %e, "cannot start the private redis-server again");
                warn(&format!(
                    "horst: cannot start the private redis-server again: {e}"
                ));
            }
        }
    }
}

/// The wait before the `n`th restart within the window (n from 1).
fn backoff(n: usize) -> Duration {
    if n <= 1 {
        return Duration::ZERO;
    }
    let secs = 1u64 << (n - 2).min(5);
    Duration::from_secs(secs).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_wait_longer_the_more_a_server_dies() {
        let waits: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 16, 30, 30]);
    }
}
