//! A process's memory that Redis did not answer, for callers that have a fallback (the
//! gateway's remembered mode, the burst limits' in-process count).
//!
//! A hung Redis (SIGSTOP, a stalled primary) answers nothing within the connection's response
//! timeout of seconds: every request that asked it would wait that long before falling back.
//! So once it was found unreachable, callers fall back at once for a hold, and when the hold
//! is over one caller asks again (holding the others for another hold) until Redis answers.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// See the module doc.
#[derive(Debug)]
pub struct UnreachableHold {
    hold: Duration,
    /// Until when callers fall back without asking; `None`: Redis answered last.
    until: Mutex<Option<Instant>>,
}

impl UnreachableHold {
    pub fn new(hold: Duration) -> Self {
        UnreachableHold {
            hold,
            until: Mutex::new(None),
        }
    }

    /// Whether to ask Redis now: yes unless a hold runs; the first caller past a hold asks,
    /// and the others fall back for another hold meanwhile.
    pub fn ask(&self, now: Instant) -> bool {
        let mut until = self.until.lock().unwrap_or_else(|p| p.into_inner());
        match *until {
            Some(t) if now < t => false,
            Some(_) => {
                *until = Some(now + self.hold);
                true
            }
            None => true,
        }
    }

    /// Redis answered: ask it every time again.
    pub fn answered(&self) {
        *self.until.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Redis could not be reached: fall back without asking for a hold from `now`.
    pub fn unreachable(&self, now: Instant) {
        *self.until.lock().unwrap_or_else(|p| p.into_inner()) = Some(now + self.hold);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_after_unreachable_then_one_caller_asks() {
        let h = UnreachableHold::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert!(h.ask(t0));
        h.unreachable(t0);
        assert!(!h.ask(t0 + Duration::from_secs(9)));
        // Past the hold: one asks, the next falls back while it does.
        assert!(h.ask(t0 + Duration::from_secs(10)));
        assert!(!h.ask(t0 + Duration::from_secs(11)));
        assert!(h.ask(t0 + Duration::from_secs(20)));
        h.answered();
        assert!(h.ask(t0 + Duration::from_secs(21)));
        assert!(h.ask(t0 + Duration::from_secs(21)));
    }
}
