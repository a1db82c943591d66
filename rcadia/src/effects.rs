//! Carrying out the machine's effects after a write: deadlines in the delayed set, wake-ups,
//! rematch creation, forwarded leaves.
//!
//! Deadlines and the wake-up of a stored write travel inside the save script (`store.rs`), so
//! they are atomic with the write. What runs here afterwards touches other sessions (rematch
//! creation, forwarded leaves), or belongs to an apply that stored nothing. If the process
//! dies in between, nothing is lost for good: the machine catches up with any due transition
//! on the next apply (`is_due` + `Tick`), whatever the delayed set holds.

use std::future::Future;
use std::pin::Pin;

use horst_sessions::{Deadline, Effect, Event, Session, TimerKind};

use crate::store::Step;
use crate::{Rcadia, RcadiaError};

/// Delayed-set members of sessions start with this (the set is shared with other features).
const MEMBER_PREFIX: &str = "ses|";

/// The delayed-set member of a deadline: stable for (session, timer kind, generation), so
/// scheduling twice is one entry and a stale generation is told apart from a fresh one.
pub fn member(d: &Deadline) -> String {
    format!(
        "{MEMBER_PREFIX}{}|{}|{}",
        d.session_id,
        d.kind.key(),
        d.generation
    )
}

/// The inverse of [`member`]: (session id, kind, generation). `None` for other features' or
/// malformed members.
pub fn parse_member(m: &str) -> Option<(String, TimerKind, u64)> {
    let rest = m.strip_prefix(MEMBER_PREFIX)?;
    let mut parts = rest.splitn(3, '|');
    let id = parts.next()?;
    let kind = TimerKind::from_key(parts.next()?)?;
    let generation = parts.next()?.parse().ok()?;
    Some((id.to_string(), kind, generation))
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

impl Rcadia {
    pub(crate) async fn cancel_deadline(&self, d: &Deadline) -> Result<(), RcadiaError> {
        self.inner.metrics.round_trip();
        let bucket = self.inner.store.bucket_of(&d.session_id);
        self.inner.delayed.cancel_in(bucket, &member(d)).await?;
        Ok(())
    }

    /// Carries out `effects` of an apply on `s` (as stored). Returns the id of a rematch it
    /// created.
    ///
    /// Not boxed itself: a boxed future is copied whole into its box, and this one held the
    /// futures of a rematch's creation and of a forwarded leave (each an apply, with its
    /// save), copied on every apply: 5 % of the API's instructions
    /// (docs/benchmarks.md, "Sessions, fourteenth round"). Only those two rare paths, which
    /// apply to sessions again, are boxed ([`Rcadia::run_session_effects`]).
    pub(crate) async fn run_effects(
        &self,
        s: &Session,
        effects: Vec<Effect>,
        changed: bool,
    ) -> Result<Option<String>, RcadiaError> {
        // Deadlines and the wake-up go in one pipelined round trip, in order.
        let bucket = self.inner.store.bucket_of(s.session_id());
        let delayed_key = self.inner.delayed.key_in(bucket);
        let mut pipe = redis::pipe();
        let mut wake = changed;
        let mut rematch = false;
        let mut leaves = Vec::new();
        let mut earliest: Option<u64> = None;
        for e in effects {
            match e {
                Effect::Schedule(d) => {
                    earliest = Some(earliest.map_or(d.at_ms, |t| t.min(d.at_ms)));
                    pipe.cmd("ZADD")
                        .arg(&delayed_key)
                        .arg(d.at_ms)
                        .arg(member(&d))
                        .ignore();
                }
                Effect::Cancel(d) => {
                    pipe.cmd("ZREM").arg(&delayed_key).arg(member(&d)).ignore();
                }
                Effect::HostEntriesQueued { .. } => wake = true,
                Effect::CreateRematch => rematch = true,
                Effect::LeaveSession {
                    session_id,
                    player_id,
                } => leaves.push((session_id, player_id)),
            }
        }
        if wake {
            // No payload: waiters read the state (a stored write publishes its record from
            // the save script instead).
            pipe.cmd("PUBLISH")
                .arg(self.channel(s.session_id()))
                .arg("")
                .ignore();
        }
        if pipe.cmd_iter().next().is_some() {
            let mut conn = self.inner.store.conn();
            self.inner.metrics.round_trip();
            let sent = pipe.query_async::<()>(&mut conn).await;
            if let Some(at) = earliest {
                self.inner.wake.note(bucket, at);
            }
            sent?;
        }
        if !rematch && leaves.is_empty() {
            return Ok(None);
        }
        self.run_session_effects(s, rematch, leaves).await
    }

    /// The effects that apply to sessions again: the rematch's creation and the forwarded
    /// leaves. Boxed: they run `apply`, which runs [`Rcadia::run_effects`].
    fn run_session_effects<'a>(
        &'a self,
        s: &'a Session,
        rematch: bool,
        leaves: Vec<(String, String)>,
    ) -> BoxFuture<'a, Result<Option<String>, RcadiaError>> {
        Box::pin(async move {
            let mut created = None;
            if rematch {
                created = Some(self.create_rematch(s).await?);
            }
            for (session_id, player_id) in leaves {
                // The next round may be gone or the player never seated there: nothing to do.
                let r = self
                    .apply(&session_id, |_| {
                        Ok(Step::main(Event::OptOut {
                            player_id: player_id.clone(),
                        }))
                    })
                    .await;
                if let Err(e) = r {
                    tracing::debug!(session = %session_id, error = %e, "forwarded leave not applied");
                }
            }
            Ok(created)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip() {
        let d = Deadline {
            session_id: "ses_beef0123abcd".into(),
            kind: TimerKind::Unconfirmed {
                player_id: "p_0123abcd".into(),
            },
            at_ms: 5,
            generation: 7,
            turn: 3,
        };
        let m = member(&d);
        assert_eq!(m, "ses|ses_beef0123abcd|unconfirmed:p_0123abcd|7");
        assert_eq!(parse_member(&m), Some((d.session_id.clone(), d.kind, 7)));
        assert_eq!(parse_member("job|x"), None);
        assert_eq!(parse_member("ses|x|clock|notanumber"), None);
    }
}
