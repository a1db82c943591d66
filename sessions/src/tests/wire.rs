//! The typed views write the same bytes as the `json!` writer they replaced (kept below as
//! `old`, verbatim but for `self`), on every state of the random sequences in `property.rs`;
//! and every view reads back as itself.
use super::*;
use crate::iso::iso8601_ms;
use crate::session::{Player, Status};
use crate::wire::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Written directly equals written through `Value` (whose objects sort their keys, as the old
/// writer's did), and reads back as itself.
fn same_bytes<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(v: &T) -> String {
    let direct = serde_json::to_string(v).unwrap();
    let through_value = serde_json::to_value(v).unwrap().to_string();
    assert_eq!(direct, through_value, "fields out of order");
    assert_eq!(&serde_json::from_str::<T>(&direct).unwrap(), v);
    direct
}

pub fn check_views(s: &Session) {
    for p in &s.players {
        let new = s.snapshot(&p.player_id).unwrap();
        assert_eq!(
            same_bytes(&new),
            old::snapshot(s, &p.player_id).unwrap().to_string()
        );
        for id in [
            p.last_action.as_ref().map(|l| l.action_id.as_str()),
            p.pending.as_ref().map(|l| l.action_id.as_str()),
        ]
        .into_iter()
        .flatten()
        {
            let mut new = s.action_response(&p.player_id, id, s.turn);
            let mut old = old::action_response(s, &p.player_id, id, s.turn);
            assert_eq!(same_bytes(&new), old.to_string());
            new.snapshot = s.snapshot(&p.player_id);
            old["snapshot"] = old::snapshot(s, &p.player_id).unwrap();
            assert_eq!(same_bytes(&new), old.to_string());
        }
    }
    assert_eq!(
        same_bytes(&s.public_view()),
        old::public_view(s).to_string()
    );
    assert_eq!(
        same_bytes(&s.available_entry()),
        old::available_entry(s).to_string()
    );
    assert_eq!(
        same_bytes(&s.created_response()),
        old::created_response(s).to_string()
    );
    assert_eq!(
        same_bytes(&s.ops_response()),
        old::ops_response(s).to_string()
    );
    assert_eq!(
        same_bytes(&s.v1_ok_response()),
        old::v1_ok_response(s).to_string()
    );
    assert_eq!(
        same_bytes(&s.rematch_response()),
        old::rematch_response(s).to_string()
    );
    let entries: Vec<PendingEntry> = s
        .host_queue
        .iter()
        .map(|e| PendingEntry {
            seq: e.seq,
            ..e.body.clone()
        })
        .collect();
    let old_entries: Vec<Value> = entries.iter().map(old::entry).collect();
    assert_eq!(
        same_bytes(&s.pending_actions_response(entries)),
        old::pending_actions_response(s, old_entries).to_string()
    );
    for since in [0, s.events_base, s.events_base + 1] {
        assert_eq!(
            same_bytes(&s.events_since(since)),
            old::events_since(s, since).to_string()
        );
    }
}

pub fn check_entries(entries: &[PendingEntry]) {
    for e in entries {
        assert_eq!(same_bytes(e), old::entry(e).to_string());
    }
}

#[test]
fn the_entry_constructors_write_the_old_shapes() {
    let check = |e: PendingEntry, old: Value| {
        let e = PendingEntry { seq: 7, ..e };
        let mut old = old;
        old["seq"] = json!(7);
        assert_eq!(same_bytes(&e), old.to_string());
    };
    let (pid, aid) = ("p_0000abcd", "a_1");
    check(
        PendingEntry::action(pid, json!({"uci": "e2e4"}), aid),
        json!({ "type": "action", "playerId": pid, "action": {"uci": "e2e4"}, "actionId": aid }),
    );
    check(
        PendingEntry::action(pid, Value::Null, aid),
        json!({ "type": "action", "playerId": pid, "action": null, "actionId": aid }),
    );
    let ids = vec![pid.to_string(), "p_0000beef".to_string()];
    check(
        PendingEntry::legacy_game_start(ids.clone()),
        json!({ "type": "action", "playerId": "__system__",
                "action": { "type": "__game_start__", "players": ids } }),
    );
    check(
        PendingEntry::game_start(ids.clone(), 3),
        json!({ "type": "system", "event": "game_start", "players": ids, "round": 3 }),
    );
    for result in [Value::Null, json!({"winner": pid})] {
        check(
            PendingEntry::session_end(result.clone(), "timeout"),
            json!({ "type": "system", "event": "session_end", "result": result, "reason": "timeout" }),
        );
    }
    check(
        PendingEntry::timeout(pid, 1, 2, false),
        json!({ "type": "timeout", "playerId": pid, "strike": 1, "maxStrikes": 2, "final": false }),
    );
}

/// The writer before the typed views (sessions/src/views.rs at 61ada9c).
mod old {
    use super::*;

    fn deadline_iso(s: &Session) -> Value {
        s.deadline_ms()
            .map_or(Value::Null, |d| json!(iso8601_ms(d)))
    }

    fn player_list(s: &Session) -> Vec<Value> {
        s.players.iter().map(player_entry).collect()
    }

    fn player_entry(p: &Player) -> Value {
        json!({ "playerId": p.player_id, "seat": p.seat, "asName": p.as_name, "ready": p.ready })
    }

    /// An entry as the old queue held it (`json!` objects) with `seq` inserted on the way out.
    pub fn entry(e: &PendingEntry) -> Value {
        let mut v = match (e.kind, e.event) {
            (EntryType::Action, _) if e.action_id.is_none() => json!({
                "type": "action",
                "playerId": e.player_id,
                "action": e.action,
            }),
            (EntryType::Action, _) => json!({
                "type": "action",
                "playerId": e.player_id,
                "action": e.action,
                "actionId": e.action_id,
            }),
            (EntryType::System, Some(SystemEvent::GameStart)) => {
                json!({ "type": "system", "event": "game_start", "players": e.players, "round": e.round })
            }
            (EntryType::System, _) => {
                json!({ "type": "system", "event": "session_end", "result": e.result, "reason": e.reason })
            }
            (EntryType::Timeout, _) => {
                json!({ "type": "timeout", "playerId": e.player_id, "strike": e.strike, "maxStrikes": e.max_strikes, "final": e.is_final })
            }
        };
        v["seq"] = json!(e.seq);
        v
    }

    pub fn snapshot(s: &Session, player_id: &str) -> Option<Value> {
        let me = s.player(player_id)?;
        let your_turn = s.is_your_turn(player_id);
        let waiting_for = match s.status {
            Status::Waiting => json!("players"),
            Status::Finished => Value::Null,
            Status::Active => match &me.pending {
                Some(pa) if pa.held => json!("opponent"),
                Some(_) => json!("host"),
                None if your_turn => Value::Null,
                None if !s.host.alive => json!("host"),
                None if s.legal_actions_seen && s.on_turn.is_empty() && s.rules.turn_based => {
                    json!("host")
                }
                None => json!("opponent"),
            },
        };
        let legal_actions = if your_turn {
            json!(me.legal_actions.clone().unwrap_or_default())
        } else {
            Value::Null
        };
        let last_action = me.last_action.as_ref().map_or(Value::Null, |la| {
            json!({
                "actionId": la.action_id,
                "turn": la.turn,
                "status": la.status.as_str(),
                "reason": la.reason,
                "at": iso8601_ms(la.at_ms),
            })
        });
        let rejections: Vec<Value> = s
            .rejections
            .iter()
            .filter(|r| r.player_id == player_id)
            .map(|r| {
                json!({ "actionId": r.action_id, "reason": r.reason, "turn": r.turn, "at": iso8601_ms(r.at_ms) })
            })
            .collect();
        let players: Vec<Value> = s
            .players
            .iter()
            .map(|p| {
                let mut v = player_entry(p);
                v["you"] = json!(p.player_id == player_id);
                v
            })
            .collect();
        Some(json!({
            "sessionId": s.session_id,
            "playerId": me.player_id,
            "seat": me.seat,
            "status": s.status.as_str(),
            "round": s.round,
            "seriesId": s.series_id,
            "previousSessionId": s.previous_session_id,
            "nextSessionId": s.next_session_id,
            "yourTurn": your_turn,
            "turn": s.turn,
            "deadline": deadline_iso(s),
            "strikes": me.strikes,
            "maxStrikes": s.rules.max_strikes,
            "waitingFor": waiting_for,
            "state": me.observation.clone().unwrap_or_else(|| s.state.clone()),
            "legalActions": legal_actions,
            "lastAction": last_action,
            "rejections": rejections,
            "players": players,
            "result": s.result,
            "skillUrl": s.game.skill_url,
            "version": s.version,
        }))
    }

    pub fn public_view(s: &Session) -> Value {
        json!({
            "sessionId": s.session_id,
            "gameId": s.game.game_id,
            "gameTitle": s.game.game_title,
            "status": s.status.as_str(),
            "round": s.round,
            "seriesId": s.series_id,
            "turn": s.turn,
            "deadline": deadline_iso(s),
            "onTurnSeats": s.on_turn_seats(),
            "players": player_list(s),
            "state": s.state,
            "result": s.result,
            "version": s.version,
            "nextSessionId": s.next_session_id,
            "previousSessionId": s.previous_session_id,
        })
    }

    pub fn available_entry(s: &Session) -> Value {
        json!({
            "sessionId": s.session_id,
            "gameId": s.game.game_id,
            "gameTitle": s.game.game_title,
            "gameSlug": s.game.game_slug,
            "skillUrl": s.game.skill_url,
            "status": s.status.as_str(),
            "joinable": s.is_joinable(),
            "reserved": s.is_reserved(),
            "currentPlayers": s.players.iter().filter(|p| !p.left).count(),
            "minPlayers": s.rules.min_players,
            "maxPlayers": s.rules.max_players,
            "round": s.round,
            "host": s.host.kind,
            "createdAt": iso8601_ms(s.created_at_ms),
            "config": s.config,
        })
    }

    pub fn created_response(s: &Session) -> Value {
        json!({
            "sessionId": s.session_id,
            "config": s.config,
            "skillUrl": s.game.skill_url,
            "round": s.round,
            "seriesId": s.series_id,
            "players": player_list(s),
        })
    }

    pub fn ops_response(s: &Session) -> Value {
        json!({
            "ok": true,
            "status": s.status.as_str(),
            "version": s.version,
            "round": s.round,
            "nextSessionId": s.next_session_id,
            "players": player_list(s),
        })
    }

    pub fn v1_ok_response(s: &Session) -> Value {
        match &s.next_session_id {
            Some(next) => json!({ "ok": true, "nextSessionId": next }),
            None => json!({ "ok": true }),
        }
    }

    pub fn pending_actions_response(s: &Session, entries: Vec<Value>) -> Value {
        json!({
            "actions": entries,
            "status": s.status.as_str(),
            "round": s.round,
            "nextSessionId": s.next_session_id,
            "players": player_list(s),
            "result": s.result,
        })
    }

    pub fn rematch_response(s: &Session) -> Value {
        json!({
            "sessionId": s.session_id,
            "round": s.round,
            "seriesId": s.series_id,
            "players": player_list(s),
        })
    }

    pub fn events_since(s: &Session, since: u64) -> Value {
        let skip = since.saturating_sub(s.events_base) as usize;
        let events: Vec<&Value> = s.events.iter().skip(skip).collect();
        json!({
            "events": events,
            "first": s.events_base,
            "next": s.events_base + s.events.len() as u64,
        })
    }

    pub fn action_response(s: &Session, player_id: &str, action_id: &str, turn: u64) -> Value {
        let (outcome, reason) = s.action_outcome(player_id, action_id);
        let mut v = json!({
            "accepted": true,
            "actionId": action_id,
            "turn": turn,
            "outcome": outcome.as_str(),
        });
        if outcome == crate::ActionStatus::Rejected {
            v["reason"] = reason;
        }
        v
    }
}
