//! The house's reference player: a deterministic simple player the house seats against a
//! new agent, so that agent's first rated game is its validation game (issue 33; Kaggle
//! plays a validation episode before it ranks an agent).
//!
//! It plays only from the legal actions the game publishes for it: on each of its turns it
//! picks one by HMAC-SHA256 of the session id and the turn under the deployment's secret
//! ([`reference_move`], pure), so the same game is always played the same way on one
//! server and any game that publishes legal actions (chess moves, rps throws) has one. The
//! secret (`reference:secret`, made once) keeps its moves from agents: seeded by what they
//! know alone, an agent could work out each throw and win its validation game every time. Which games it plays is `sessions.reference_games`.
//!
//! Seek seats it: an agent seeking a rated game that has a reference player, with no
//! validation game yet in its rating record, is put at an empty house table first and the
//! reference player joins the other seat (`seek.rs`). The table's id goes into
//! `reference:tables`; every process's driver ([`Rcadia::run_reference`]) looks at those
//! tables, plays the reference player's turns (the machine takes one action per turn, so
//! two processes playing the same turn change nothing: the second is refused), and once the
//! game is over opts it out of the rematch and forgets the table. Its identity is
//! [`REFERENCE_AGENT`] (no token: it never calls the API). It is rated like any agent: its
//! rating moves with its results and is no fixed point of the scale (nothing anchors the
//! ratings); what stays fixed is how it plays, so its games are a yardstick an agent's first
//! result can be read against. The game against it marks the opponent's rating record with
//! its validation game (`rating.rs`).

use std::time::Duration;

use horst_sessions::{Event, ProtocolCode, ProtocolError, Session, Status};
use serde_json::Value;
use tokio::sync::watch;

use crate::keys;
use crate::rating::Rating;
use crate::store::Step;
use crate::{random_u32, Rcadia, RcadiaError};

/// The reference player's agent id (what ratings and leaderboards name).
pub const REFERENCE_AGENT: &str = "agt_reference";
/// Its session identity.
pub const REFERENCE_IDENTITY: &str = "agent:agt_reference";
/// The name it plays under.
pub const REFERENCE_NAME: &str = "House reference";
/// How often the driver looks at the reference player's tables.
const EVERY: Duration = Duration::from_millis(200);

/// Whether `as_name` would pass for the reference player's name ([`REFERENCE_NAME`]): the
/// same letters and digits in any case, whatever the spacing and punctuation.
pub fn is_reference_name(as_name: &str) -> bool {
    // As it reads (`horst_text::fold`): a fullwidth or Cyrillic look-alike is the same name.
    let letters = |t: &str| -> String {
        horst_text::fold(t)
            .chars()
            .filter(|c| c.is_alphanumeric())
            .collect()
    };
    letters(as_name) == letters(REFERENCE_NAME)
}

/// The reference player's name is the house's: anyone else (`identity`) who joins or seeks
/// under it (`as_name`) is refused, so no agent passes for the house's yardstick on a
/// table or a leaderboard.
pub fn check_name(identity: &str, as_name: Option<&str>) -> Result<(), ProtocolError> {
    match as_name {
        Some(n) if identity != REFERENCE_IDENTITY && is_reference_name(n) => {
            Err(ProtocolError::new(
                ProtocolCode::BadRequest,
                format!("asName {REFERENCE_NAME:?} is the house's reference player's ({REFERENCE_AGENT}); choose another name"),
            ))
        }
        _ => Ok(()),
    }
}

/// The reference player's action on `turn` of `session_id`: one of `legal`, picked by
/// HMAC-SHA256 under the deployment's `secret` of both, or `None` when it has none. A keyed
/// hash, not FNV-1a of the secret and both: FNV-1a's low bits follow from a few bits of
/// the secret, so the moves of public replays gave it away.
pub fn reference_move(secret: u64, session_id: &str, turn: u64, legal: &[Value]) -> Option<Value> {
    use hmac::{Hmac, KeyInit, Mac};
    if legal.is_empty() {
        return None;
    }
    // HMAC takes a key of any length, so this never fails.
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&secret.to_le_bytes()).ok()?;
    // The turn has a fixed width, so the session id and the turn cannot run together.
    mac.update(session_id.as_bytes());
    mac.update(&turn.to_le_bytes());
    let digest = mac.finalize().into_bytes();
    let mut seed = [0u8; 8];
    seed.copy_from_slice(&digest[..8]);
    // The bias of a 64-bit value taken modulo a few hundred moves is below 2^-50.
    let pick = u64::from_le_bytes(seed) % legal.len() as u64;
    Some(legal[pick as usize].clone())
}

/// What the reference player does at a session as stored now (pure: the driver's rule).
#[derive(Debug, Clone, PartialEq)]
pub enum Duty {
    /// Nothing now (not its turn, or waiting for an opponent).
    Wait,
    /// Play this event.
    Play(Event),
    /// The table is done with it (over, or it is not seated): forget the table; opt out of
    /// the rematch first when the event is set.
    Done(Option<Event>),
}

/// The reference player's duty at `s`, its moves seeded with the deployment's `secret`.
pub fn duty(s: &Session, secret: u64) -> Duty {
    let Some(me) = s.player_by_identity(REFERENCE_IDENTITY) else {
        return Duty::Done(None);
    };
    let leave = Event::Leave {
        player_id: me.player_id.to_string(),
    };
    match s.status() {
        Status::Finished if me.left => Duty::Done(None),
        Status::Finished => Duty::Done(Some(leave)),
        // Alone at a waiting table (its opponent left): it does not wait there for others.
        Status::Waiting if s.players().len() == 1 => Duty::Done(Some(leave)),
        Status::Waiting => Duty::Wait,
        Status::Active => {
            let legal = me.legal_actions.as_deref().map_or(&[][..], Vec::as_slice);
            match reference_move(secret, s.session_id(), s.turn(), legal) {
                Some(action) if s.is_your_turn(&me.player_id) => Duty::Play(Event::Action {
                    player_id: me.player_id.to_string(),
                    action,
                    turn: Some(s.turn()),
                    action_id: format!("a_ref{:08x}", random_u32()),
                    idempotency_key: None,
                }),
                _ => Duty::Wait,
            }
        }
    }
}

impl Rcadia {
    /// Whether `game` has a reference player (`sessions.reference_games`).
    pub fn has_reference(&self, game: &str) -> bool {
        self.inner
            .settings
            .reference_games
            .iter()
            .any(|g| g == game)
    }

    /// Seats the reference player at `id` (after a seeker took the other seat) and has the
    /// driver play it. A table that filled meanwhile is left as it is.
    pub(crate) async fn seat_reference(&self, id: &str) -> Result<bool, RcadiaError> {
        let store = &self.inner.store;
        let fresh = horst_sessions::format_player_id(random_u32());
        let joined = self
            .apply(id, |_| {
                Ok(Step::main(Event::Join {
                    player_id: fresh.clone(),
                    identity: REFERENCE_IDENTITY.to_string(),
                    as_name: Some(REFERENCE_NAME.to_string()),
                }))
            })
            .await;
        match joined {
            Ok(_) => {
                let mut conn = store.conn();
                let _: () = redis::cmd("SADD")
                    .arg(keys::reference_tables(store))
                    .arg(id)
                    .query_async(&mut conn)
                    .await?;
                Ok(true)
            }
            Err(RcadiaError::Protocol(..)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether `identity` still needs its validation game in `game`: an agent (not the
    /// reference player) whose rating record there names none.
    pub(crate) async fn needs_validation(
        &self,
        game: &str,
        identity: &str,
    ) -> Result<bool, RcadiaError> {
        let Some(agent) = identity.strip_prefix("agent:") else {
            return Ok(false);
        };
        // Without ratings there is no rating record to mark: no validation game.
        if !self.inner.settings.ratings
            || !self.has_reference(game)
            || agent == REFERENCE_AGENT
            || !crate::rating::is_agent_id(agent)
        {
            return Ok(false);
        }
        let store = &self.inner.store;
        let mut conn = store.conn();
        let raw: Option<String> = redis::cmd("GET")
            .arg(keys::rating(store, game, agent))
            .query_async(&mut conn)
            .await?;
        let rating = raw.and_then(|r| serde_json::from_str::<Rating>(&r).ok());
        Ok(rating.is_none_or(|r| r.validation.is_none()))
    }

    /// The driver every process runs: plays the reference player's turns until `shutdown`.
    pub async fn run_reference(self, mut shutdown: watch::Receiver<bool>) {
        loop {
            if let Err(e) = self.drive_reference().await {
                tracing::warn!(error = %e, "reference player: cannot play; retrying");
            }
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// The deployment's secret in the reference player's seed ([`reference_move`]).
    pub fn reference_secret(&self) -> u64 {
        self.inner.reference_secret
    }

    /// One look at every table the reference player sits at.
    pub async fn drive_reference(&self) -> Result<(), RcadiaError> {
        let secret = self.inner.reference_secret;
        let store = &self.inner.store;
        let key = keys::reference_tables(store);
        let mut conn = store.conn();
        let ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(&key)
            .query_async(&mut conn)
            .await?;
        for id in ids {
            let done = match self.load(&id).await {
                Ok(s) => match duty(&s, secret) {
                    Duty::Wait => false,
                    Duty::Play(_) | Duty::Done(Some(_)) => {
                        // Decided again on the record the write starts from.
                        let r = self
                            .apply(&id, |s| {
                                Ok(match duty(s, secret) {
                                    Duty::Play(ev) | Duty::Done(Some(ev)) => Step::main(ev),
                                    _ => Step {
                                        pre: Vec::new(),
                                        main: None,
                                    },
                                })
                            })
                            .await;
                        match r {
                            // Another process played it first, or the turn moved on.
                            Ok(_) | Err(RcadiaError::Protocol(..)) => {}
                            Err(e) => return Err(e),
                        }
                        matches!(duty(&s, secret), Duty::Done(_))
                    }
                    Duty::Done(None) => true,
                },
                Err(RcadiaError::NotFound | RcadiaError::Gone) => true,
                Err(e) => return Err(e),
            };
            if done {
                let _: () = redis::cmd("SREM")
                    .arg(&key)
                    .arg(&id)
                    .query_async(&mut conn)
                    .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Nobody but the reference player plays under its name, in any case or spacing.
    #[test]
    fn the_reference_players_name_is_the_houses() {
        for taken in [
            "House reference",
            "house REFERENCE",
            " House-Reference ",
            "House_reference",
            // Look-alikes: fullwidth, and Cyrillic о, е, с.
            "ＨＯＵＳＥ ｒｅｆｅｒｅｎｃｅ",
            "H\u{043E}us\u{0435} r\u{0435}f\u{0435}r\u{0435}n\u{0441}\u{0435}",
        ] {
            let e = check_name("agent:agt_x", Some(taken)).unwrap_err();
            assert_eq!(e.code, ProtocolCode::BadRequest, "{taken}");
            assert!(e.message.contains("reference player"), "{}", e.message);
        }
        for free in ["House", "Reference", "House referee", "My house reference"] {
            assert!(check_name("agent:agt_x", Some(free)).is_ok(), "{free}");
        }
        assert!(check_name("agent:agt_x", None).is_ok());
        assert!(check_name(REFERENCE_IDENTITY, Some(REFERENCE_NAME)).is_ok());
    }

    #[test]
    fn the_reference_move_is_legal_and_seeded_by_session_and_turn() {
        let legal = [json!("rock"), json!("paper"), json!("scissors")];
        assert_eq!(reference_move(7, "ses_1", 3, &[]), None);
        let m = reference_move(7, "ses_1", 3, &legal).unwrap();
        assert!(legal.contains(&m));
        assert_eq!(
            reference_move(7, "ses_1", 3, &legal),
            Some(m),
            "deterministic"
        );
        // Over many turns it plays every legal action (not one fixed throw).
        let seen: std::collections::HashSet<String> = (0..60)
            .map(|t| reference_move(7, "ses_1", t, &legal).unwrap().to_string())
            .collect();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(
            reference_move(7, "ses_2", 0, &[json!("e2e4")]),
            Some(json!("e2e4"))
        );
        // Another deployment's secret plays another game: what an agent knows (the
        // session id and the turn) does not tell it the moves.
        let game = |secret: u64| -> Vec<String> {
            (0..40)
                .map(|t| {
                    reference_move(secret, "ses_1", t, &legal)
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        assert_ne!(game(7), game(8));
    }

    /// Every bit of the secret counts in every move. A move seeded by FNV-1a of the secret
    /// did not: the low k bits of FNV-1a follow from the low k bits of each byte put in, so
    /// with 2 (or 4) legal moves the choice followed from 8 (or 16) bits of the secret, and
    /// chess positions with an even number of moves in public replays of validation games
    /// gave the secret away bit by bit (then every later move, in chess and rps alike).
    #[test]
    fn the_moves_follow_from_the_whole_secret() {
        let secret: u64 = 0x0123_4567_89ab_cdef;
        for (legal_count, kept_bits) in [
            (2usize, 0x0101_0101_0101_0101u64),
            (4, 0x0303_0303_0303_0303),
        ] {
            let legal: Vec<Value> = (0..legal_count).map(|i| json!(i)).collect();
            // Another secret that shares only the bits FNV-1a's low bits depend on.
            let other = secret ^ !kept_bits;
            let turns = 400u64;
            let same = (0..turns)
                .filter(|&t| {
                    let id = format!("ses_{:012x}", t * 7919);
                    reference_move(secret, &id, t, &legal) == reference_move(other, &id, t, &legal)
                })
                .count() as u64;
            // Unrelated secrets agree on about 1/legal_count of the moves.
            assert!(
                same < turns * 3 / 4,
                "{legal_count} legal moves: {same} of {turns} moves the same under a secret that shares only {kept_bits:#x}"
            );
        }
    }
}
