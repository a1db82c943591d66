//! The typed views keep the wire's bytes: on every state of the random sequences in
//! `property.rs`, each view written directly equals it written through `Value` (sorted keys,
//! which is what the `json!` writer before them sent; commit b8f30fc compared the two writers
//! on the same states before the old one was deleted), and reads back as itself.
use super::*;
use crate::wire::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Arc;

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
        let snap = s.snapshot(&p.player_id).unwrap();
        same_bytes(&snap);
        for id in [
            p.last_action.as_ref().map(|l| l.action_id.as_str()),
            p.pending.as_ref().map(|l| l.action_id.as_str()),
        ]
        .into_iter()
        .flatten()
        {
            let mut answer = s.action_response(&p.player_id, id, s.turn);
            same_bytes(&answer);
            answer.snapshot = Some(snap.clone());
            same_bytes(&answer);
        }
    }
    same_bytes(&s.public_view());
    same_bytes(&s.available_entry());
    same_bytes(&s.created_response());
    same_bytes(&s.ops_response());
    same_bytes(&s.v1_ok_response());
    same_bytes(&s.rematch_response());
    let entries = s
        .host_queue
        .iter()
        .map(|e| PendingEntry {
            seq: e.seq,
            ..e.body.clone()
        })
        .collect();
    same_bytes(&s.pending_actions_response(entries));
    for since in [0, s.events_base, s.events_base + 1] {
        for p in &s.players {
            same_bytes(&s.events_since(since, &p.player_id));
        }
    }
}

pub fn check_entries(entries: &[PendingEntry]) {
    for e in entries {
        same_bytes(e);
    }
}

/// Each kind of entry has the fields the protocol shows, and no others.
#[test]
fn the_entry_constructors_write_the_contract_shapes() {
    let check = |e: PendingEntry, old: Value| {
        let e = PendingEntry { seq: 7, ..e };
        let mut old = old;
        old["seq"] = json!(7);
        assert_eq!(same_bytes(&e), old.to_string());
    };
    let (pid, aid) = ("p_0000abcd", "a_1");
    check(
        PendingEntry::action(pid.into(), Arc::new(json!({"uci": "e2e4"})), aid.into()),
        json!({ "type": "action", "playerId": pid, "action": {"uci": "e2e4"}, "actionId": aid }),
    );
    check(
        PendingEntry::action(pid.into(), Arc::new(Value::Null), aid.into()),
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
