//! The server's clock as this process last heard it, for the bound a call carries on when its
//! script may still act (the queue's admissions, the delayed set's pops).
//!
//! A partition can hold a call past the moment its caller gives up (the store's
//! [`RESPONSE_TIMEOUT`](crate::RESPONSE_TIMEOUT)) and deliver it when it heals (TCP
//! retransmits what was sent): what the script then takes or queues is for a caller that
//! never hears the answer. A script that is given the latest server time it may act at, and
//! finds the clock past it, takes nothing.
//!
//! The server's time now is estimated from the last answer that told it, carried on this
//! process's monotonic clock: never ahead of the server's (the answer took time to come), so
//! the bound is never later than the give-up, which is at least the response timeout after
//! the send. A bound that is too early (a slow answer behind the estimate, a step of the
//! server's clock) makes one call act on nothing, and the next carries the clock that answer
//! told. The estimate is kept without the store's clock offset (tests move it; 0 in
//! production), and the offset of the moment is added, so moving it costs no call.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Cheap to clone: clones share one estimate.
#[derive(Clone, Default)]
pub struct ServerClock {
    /// The server's clock without the offset (ms), and when the answer that told it came.
    heard: Arc<Mutex<Option<(u64, Instant)>>>,
}

impl ServerClock {
    /// Notes the server's clock from an answer that came just now: `at_ms` as the script read
    /// it, with the clock offset `offset_ms` the call carried.
    pub fn note(&self, at_ms: u64, offset_ms: i64) {
        *self.heard.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((at_ms.saturating_add_signed(-offset_ms), Instant::now()));
    }

    /// The latest server time (ms, with the clock offset `offset_ms` of the call) a call sent
    /// now may act at; 0 (no bound) until an answer told the clock.
    pub fn bound_ms(&self, offset_ms: i64) -> u64 {
        match *self.heard.lock().unwrap_or_else(PoisonError::into_inner) {
            Some((raw_ms, at)) => {
                let bound = raw_ms + (at.elapsed() + crate::RESPONSE_TIMEOUT).as_millis() as u64;
                bound.saturating_add_signed(offset_ms).max(1)
            }
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_heard_clock_plus_the_response_timeout_with_the_offset_of_the_moment() {
        let clock = ServerClock::default();
        assert_eq!(clock.bound_ms(0), 0, "no bound before an answer");
        clock.note(1_000_000, 5_000);
        let timeout = crate::RESPONSE_TIMEOUT.as_millis() as u64;
        let b = clock.bound_ms(5_000);
        assert!(
            (1_000_000 + timeout..1_000_000 + timeout + 1_000).contains(&b),
            "{b}"
        );
        // The offset moved on: the bound moves with it, not a stale one.
        let moved = clock.bound_ms(65_000);
        assert!(moved >= b + 60_000 && moved < b + 61_000, "{b} {moved}");
    }
}
