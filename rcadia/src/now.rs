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
