//! Seats: joining, readiness, leaving, and renumbering a waiting table.

use super::{Effect, Outcome, Reply, MAX_NAME_CHARS};
use crate::error::{ProtocolCode, ProtocolError};
use crate::iso::iso8601_ms;
use crate::session::{Player, Session, Status};
use crate::shared::SharedStr;
use serde_json::json;

impl Session {
    pub(super) fn join(
        &mut self,
        player_id: String,
        identity: String,
        as_name: Option<String>,
        now: u64,
        out: &mut Outcome,
    ) -> Result<(), ProtocolError> {
        if let Some(p) = self.player_by_identity(&identity) {
            let (player_id, seat) = (p.player_id.clone(), p.seat);
            self.mark_ready(&player_id, now);
            out.reply = Reply::Joined {
                player_id: player_id.into(),
                seat,
                rejoined: true,
            };
            return Ok(());
        }
        match self.status {
            Status::Finished => {
                return Err(ProtocolError::new(
 ProtocolCode::Finished,
                    "this game is over; find an open table with GET /available",
                ))
            }
            Status::Active => {
                return Err(ProtocolError::new(
 ProtocolCode::InProgress,
                    "this game is already running; watch it via /public or find an open table with GET /available",
                ))
            }
            Status::Waiting => {}
        }
        if self.players.len() >= self.rules.max_players as usize {
            if let (Some(until), true) = (
                self.reserved_until_ms,
                self.players.iter().any(|p| !p.ready),
            ) {
                return Err(ProtocolError::new(
 ProtocolCode::Reserved,
                    format!(
                        "the seats are reserved for the previous round's players until {}; try again later or find another table",
                        iso8601_ms(until)
                    ),
                ));
            }
            return Err(ProtocolError::new(
                ProtocolCode::Full,
                "every seat is taken; find another table with GET /available",
            ));
        }
        // Cleaned like board text: no control, invisible or direction-changing characters,
        // so a player's name cannot read backwards on the watch page or in the admin tables.
        let as_name = as_name.as_deref().map(horst_text::clean_line);
        let as_name = match as_name.as_deref() {
            None | Some("") => None,
            Some(n) if n.chars().count() > MAX_NAME_CHARS => {
                return Err(ProtocolError::bad_request(format!(
                    "asName is longer than {MAX_NAME_CHARS} characters; choose a shorter name"
                )))
            }
            Some(n) => Some(n.to_string()),
        };
        if self.player(&player_id).is_some() {
            return Err(ProtocolError::new(
                ProtocolCode::IdCollision,
                "generated playerId already exists in this session; retry",
            ));
        }
        let seat = self.players.len() as u32;
        self.players.push(Player {
            seat,
            ..Player::new(
                player_id.as_str().into(),
                identity.into(),
                as_name.as_deref().map(SharedStr::from),
            )
        });
        self.seating_changed_at_ms = now;
        self.push_event(
            now,
            "player_joined",
            json!({ "playerId": player_id, "seat": seat, "asName": as_name }),
        );
        out.reply = Reply::Joined {
            player_id,
            seat,
            rejoined: false,
        };
        Ok(())
    }

    pub(super) fn mark_ready(&mut self, player_id: &str, now: u64) {
        if self.status != Status::Waiting {
            return;
        }
        if let Some(p) = self.player_mut(player_id) {
            if !p.ready {
                p.ready = true;
                let seat = p.seat;
                self.seating_changed_at_ms = now;
                self.push_event(
                    now,
                    "player_ready",
                    json!({ "playerId": player_id, "seat": seat }),
                );
            }
        }
    }

    pub(super) fn leave(
        &mut self,
        player_id: &str,
        now: u64,
        out: &mut Outcome,
    ) -> Result<(), ProtocolError> {
        self.require_player(player_id)?;
        match self.status {
            Status::Waiting => {
                self.push_event(now, "player_left", json!({ "playerId": player_id }));
                self.remove_players(now, |p| p.player_id == player_id);
            }
            Status::Active => {
                if let Some(p) = self.player_mut(player_id) {
                    p.left = true;
                }
                self.push_event(now, "player_left", json!({ "playerId": player_id }));
                let result = json!({
                    "winner": self.forfeit_winner(&[player_id.to_string()]),
                    "reason": "left",
                    "forfeitedBy": player_id,
                });
                self.finish(now, result, "left", true, out);
            }
            Status::Finished => {
                let Some(p) = self.player_mut(player_id) else {
                    return Ok(());
                };
                if p.left {
                    return Ok(());
                }
                p.left = true;
                self.push_event(now, "player_left", json!({ "playerId": player_id }));
                if let Some(next) = &self.next_session_id {
                    out.effects.push(Effect::LeaveSession {
                        session_id: next.to_string(),
                        player_id: player_id.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Removes seats from a waiting table; the rest keep their order and are renumbered 0..n.
    /// An emptied rematch table starts over as round 1 of a new series.
    pub(super) fn remove_players(&mut self, now: u64, drop: impl Fn(&Player) -> bool) {
        for p in self.players.iter().filter(|p| drop(p)) {
            if !self.departed.contains(&p.identity) {
                self.departed.push(p.identity.clone());
            }
        }
        if self.departed.len() > crate::session::MAX_DEPARTED {
            let extra = self.departed.len() - crate::session::MAX_DEPARTED;
            self.departed.drain(..extra);
        }
        self.players.retain(|p| !drop(p));
        for (seat, p) in self.players.iter_mut().enumerate() {
            p.seat = seat as u32;
        }
        self.seating_changed_at_ms = now;
        if self.players.is_empty() && self.round > 1 {
            self.round = 1;
            self.series_id = self.session_id.clone();
            self.previous_session_id = None;
            self.reserved_until_ms = None;
            self.activate_not_before_ms = None;
            self.push_event(now, "new_series", json!({ "seriesId": self.series_id }));
        }
    }

    pub(super) fn require_player(&self, player_id: &str) -> Result<&Player, ProtocolError> {
        self.player(player_id)
            .ok_or_else(ProtocolError::not_a_player)
    }
}
