//! The Redis server's clock, read once every few seconds and carried forward on the
//! process's monotonic clock in between: an apply needs the time before it runs, and a
//! `TIME` round trip per request was a third of a cached apply's round trips.
//!
//! Processes still agree to within the read's half round trip (well under a millisecond on
//! one network), and the machine never lets a session's time run backwards, so a process a
//! little ahead or behind changes nothing but that millisecond.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use horst_store::Store;

/// How long one reading of `TIME` is carried forward.
const REREAD: Duration = Duration::from_secs(2);

#[derive(Default)]
pub(crate) struct ServerClock {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The server's clock in µs (without the store's test offset) at `at`.
    reading: Option<(u64, Instant)>,
}

impl ServerClock {
    /// The server's clock in ms, with the store's offset ([`Store::now_ms`]'s clock).
    /// `on_read` is called when this call reads `TIME` (a round trip).
    pub async fn now_ms(&self, store: &Store, on_read: impl FnOnce()) -> redis::RedisResult<u64> {
        let fresh = self.lock().reading.filter(|(_, at)| at.elapsed() < REREAD);
        let (server_us, at) = match fresh {
            Some(r) => r,
            None => {
                on_read();
                let sent = Instant::now();
                let (secs, micros): (u64, u64) =
                    redis::cmd("TIME").query_async(&mut store.conn()).await?;
                let back = Instant::now();
                // The server read its clock somewhere in the round trip: take the middle.
                let at = sent + (back - sent) / 2;
                let r = (secs * 1_000_000 + micros, at);
                self.lock().reading = Some(r);
                r
            }
        };
        let raw_ms = (server_us + at.elapsed().as_micros() as u64) / 1000;
        Ok((raw_ms as i64 + store.clock_offset_ms()).max(0) as u64)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The Redis clock read once (an apply's `Applied::now_ms`, a load's time) and carried
/// forward on the monotonic clock: what a long poll compares the session's times with while it
/// waits (the rematch link's grace). A step of the process's wall clock moves nothing; the
/// process's clock is never compared with times stored on the server's.
#[derive(Debug, Clone, Copy)]
pub struct ServerTime {
    read_ms: u64,
    at: tokio::time::Instant,
}

impl ServerTime {
    /// The server's clock was `read_ms` just now.
    pub fn read_now(read_ms: u64) -> ServerTime {
        ServerTime {
            read_ms,
            at: tokio::time::Instant::now(),
        }
    }

    /// The server's clock now, in ms.
    pub fn now_ms(&self) -> u64 {
        self.ms_at(tokio::time::Instant::now())
    }

    /// The server's clock at monotonic instant `t` (not before the reading).
    fn ms_at(&self, t: tokio::time::Instant) -> u64 {
        let since = t.saturating_duration_since(self.at).as_millis() as u64;
        self.read_ms.saturating_add(since)
    }
}

#[cfg(test)]
mod tests {
    use super::ServerTime;
    use std::time::Duration;

    /// Only the monotonic time since the reading moves the server time.
    #[test]
    fn server_time_is_the_reading_plus_the_monotonic_time_since() {
        let t = ServerTime::read_now(1_000);
        assert_eq!(t.ms_at(t.at), 1_000);
        assert_eq!(t.ms_at(t.at + Duration::from_millis(4_999)), 5_999);
        assert_eq!(t.ms_at(t.at + Duration::from_secs(25)), 26_000);
        assert!(t.now_ms() >= 1_000);
    }
}
