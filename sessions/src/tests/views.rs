//! Sections 5 and 7: snapshot, public view, discovery, events, long-poll wake-ups.
use super::*;
use crate::{should_wake, Status};

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

#[test]
fn the_snapshot_has_exactly_the_contract_fields() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let s = g.snap(&a);
    let mut expected = vec![
        "sessionId",
        "playerId",
        "seat",
        "status",
        "round",
        "seriesId",
        "previousSessionId",
        "nextSessionId",
        "yourTurn",
        "turn",
        "deadline",
        "strikes",
        "maxStrikes",
        "waitingFor",
        "state",
        "legalActions",
        "lastAction",
        "rejections",
        "players",
        "result",
        "skillUrl",
        "version",
    ];
    expected.sort_unstable();
    assert_eq!(keys(&s), expected);
    assert_eq!(
        s["players"][0],
        json!({"playerId": a, "seat": 0, "asName": "ALICE", "you": true, "ready": true})
    );
    assert_eq!(s["players"][1]["you"], false);
    assert_eq!(s["seriesId"], "ses_beef00000001");
    assert_eq!(s["waitingFor"], Value::Null);
    assert_eq!(s["lastAction"], Value::Null);
    assert_eq!(s["version"], g.s.version);
    assert!(g.s.snapshot("p_nobody00").is_none());
    let _ = b;
}

#[test]
fn the_public_view_hides_private_things() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&b);
    g.ops(json!([{"op": "observation", "playerId": a, "observation": {"secret": 1}}, {"op": "state", "state": {"board": 1}}]));
    let v = wire(&g.s.public_view());
    let mut expected = vec![
        "sessionId",
        "gameId",
        "gameTitle",
        "status",
        "round",
        "seriesId",
        "turn",
        "deadline",
        "onTurnSeats",
        "players",
        "state",
        "result",
        "version",
        "nextSessionId",
        "previousSessionId",
        // horst's one addition: the seat count, for a spectator of a waiting table.
        "maxPlayers",
    ];
    expected.sort_unstable();
    assert_eq!(keys(&v), expected);
    assert_eq!(v["maxPlayers"], 2);
    assert_eq!(v["onTurnSeats"], json!([1]));
    assert_eq!(v["state"], json!({"board": 1}));
    assert_eq!(v["deadline"], "2026-10-07T19:05:00.000Z");
    assert!(!v.to_string().contains("secret"));
}

/// A spectator of a waiting table sees how many seats it has (the watch page lists the open
/// ones) from the public view alone; it asked `/available` for that.
#[test]
fn the_public_view_of_a_waiting_table_has_its_seat_count() {
    let g = Game::new(config(json!({"minPlayers": 2, "maxPlayers": 3})));
    let v = wire(&g.s.public_view());
    assert_eq!(v["status"], "waiting");
    assert_eq!(v["maxPlayers"], 3);
}

#[test]
fn available_entries_and_listing() {
    let mut g = Game::new(config(json!({"maxPlayers": 3})));
    let v = wire(&g.s.available_entry());
    let mut expected = vec![
        "sessionId",
        "gameId",
        "gameTitle",
        "gameSlug",
        "skillUrl",
        "status",
        "joinable",
        "reserved",
        "currentPlayers",
        "minPlayers",
        "maxPlayers",
        "round",
        "host",
        "createdAt",
        "config",
    ];
    expected.sort_unstable();
    assert_eq!(keys(&v), expected);
    assert_eq!(v["host"], "house");
    assert_eq!(v["createdAt"], "2026-10-07T19:00:00.000Z");
    assert_eq!(v["joinable"], true);
    assert!(g.s.matches_game("CHESS") && g.s.matches_game("g_chess") && !g.s.matches_game("go"));
    assert!(g.s.listed_in_available(false));
    g.join("a");
    g.join("b");
    g.join("c");
    assert_eq!(g.s.status, Status::Active);
    assert!(!g.s.listed_in_available(false));
    assert!(g.s.listed_in_available(true));
    assert_eq!(wire(&g.s.available_entry())["currentPlayers"], 3);
    g.ops(json!([{"op": "end", "result": {}}]));
    assert!(!g.s.listed_in_available(true));
}

/// The store reads a record, then its event log: a write in between adds events the record
/// does not count. With the log full, the page's indexes were off by those events (`since`
/// skipped them, `next` repeated them); they are the log's own.
#[test]
fn an_event_log_read_after_its_record_keeps_its_own_indexes() {
    let (mut g, a, b) = Game::started(config(json!({})));
    let max = crate::machine::MAX_EVENTS;
    let mut turns = 0;
    while g.s.events_base + (g.s.events.len() as u64) < max as u64 + 20 {
        g.turn_to(if turns % 2 == 0 { &a } else { &b });
        turns += 1;
    }
    // The record as stored: no events, `events_base` the index of the next one.
    let mut record = g.s.clone();
    record.events_base += record.events.len() as u64;
    record.events.clear();
    let next = record.events_base;
    // Three more events are written before the log is read.
    for p in [&a, &b, &a] {
        g.turn_to(p);
    }
    let after = g.s.events_base + g.s.events.len() as u64;
    assert!(after > next, "events were written in between");
    let log = g.s.events.clone();
    record.attach_event_log(log);
    let page = wire(&record.events_since(next - 2, &a));
    assert_eq!(
        page["events"][0]["index"],
        next - 2,
        "{}",
        page["events"][0]
    );
    assert_eq!(page["next"], after);
}

#[test]
fn the_events_log_is_indexed_and_hides_actions() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.act(&a);
    g.poll();
    g.turn_to(&b);
    let v = wire(&g.s.events_since(0, &a));
    let types: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        vec![
            "player_joined",
            "player_joined",
            "game_start",
            "turn",
            "action",
            "turn"
        ]
    );
    assert_eq!(v["next"], 6);
    assert!(
        !v.to_string().contains("e4"),
        "the action itself is not logged"
    );
    assert_eq!(wire(&g.s.events_since(5, &a))["events"][0]["index"], 5);
    assert!(g.s.has_events_since(5));
    assert!(!g.s.has_events_since(6));
    // An index past the log's end was never given: answered at once.
    assert!(g.s.has_events_since(7));
    assert!(g.s.has_events_since(u64::MAX));
}

#[test]
fn long_polls_wake_on_your_turn_resolution_and_the_end_only() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&b);
    let s0 = g.s.clone();
    g.ops(json!([{"op": "state", "state": {"x": 1}}]));
    assert!(!should_wake(&s0, &g.s, &a) && !should_wake(&s0, &g.s, &b));
    let s1 = g.s.clone();
    g.turn_to(&a);
    assert!(should_wake(&s1, &g.s, &a));
    assert!(!should_wake(&s1, &g.s, &b));
    assert!(g.s.state_ready_for(&a) && !g.s.state_ready_for(&b));
    let id = g.act(&a);
    assert_eq!(g.s.turn, 2);
    let s2 = g.s.clone();
    g.poll();
    assert!(!should_wake(&s2, &g.s, &a), "delivery is not a resolution");
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "no", "actionId": id}]));
    assert!(should_wake(&s2, &g.s, &a));
    assert_eq!(
        wire(&g.s.action_response(&a, &id, 2)),
        json!({"accepted": true, "actionId": id, "turn": 2, "outcome": "rejected", "reason": "no"})
    );
    let s3 = g.s.clone();
    g.ops(json!([{"op": "end", "result": {"winner": null}}]));
    assert!(should_wake(&s3, &g.s, &b));
    assert!(g.s.state_ready_for(&b));
}

#[test]
fn sessions_round_trip_through_json() {
    let (mut g, a, _b) = Game::started(config(json!({"simultaneous": true})));
    g.turn_to(&a);
    g.act(&a);
    let text = serde_json::to_string(&g.s).unwrap();
    let back: Session = serde_json::from_str(&text).unwrap();
    assert_eq!(back, g.s);
}

#[test]
fn timers_are_stored_as_short_lists_and_the_earlier_map_still_loads() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    assert!(g.s.timers.len() >= 2, "{:?}", g.s.timers);
    let mut v = serde_json::to_value(&g.s).unwrap();
    let stored = v["timers"].as_array().expect("a list").clone();
    assert_eq!(stored.len(), g.s.timers.len());
    assert!(stored[0].as_array().is_some_and(|t| t.len() == 4));
    // Records written before kept a map of whole deadlines (session id and tagged kind).
    let earlier: serde_json::Map<String, Value> =
        g.s.armed_deadlines()
            .into_iter()
            .map(|d| (d.kind.key().into_owned(), serde_json::to_value(&d).unwrap()))
            .collect();
    v["timers"] = Value::Object(earlier);
    let back: Session = serde_json::from_value(v).unwrap();
    assert_eq!(back, g.s);
    assert_eq!(back.armed_deadlines(), g.s.armed_deadlines());
    assert!(back
        .armed_deadlines()
        .iter()
        .all(|d| d.session_id == g.s.session_id()));
    // An unknown kind in the list is an error, not a silently dropped timer.
    let mut v = serde_json::to_value(&g.s).unwrap();
    v["timers"] = json!([["bogus", 1, 1, 1]]);
    assert!(serde_json::from_value::<Session>(v).is_err());
}

#[test]
fn errors_have_the_contract_body() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let e = g
        .try_act(&g.s.players[1].player_id.clone(), None)
        .unwrap_err();
    assert_eq!(e.body()["code"], "not_your_turn");
    assert!(e.body()["error"]
        .as_str()
        .unwrap()
        .contains("not your turn"));
}

#[test]
fn waiting_for() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    assert_eq!(g.snap(&a)["waitingFor"], Value::Null);
    assert_eq!(g.snap(&b)["waitingFor"], "opponent");
    g.act(&a);
    assert_eq!(g.snap(&a)["waitingFor"], "host");
    g.poll();
    g.ops(json!([{"op": "legal_actions", "playerId": a, "actions": []}]));
    assert_eq!(
        g.snap(&b)["waitingFor"],
        "host",
        "nobody on turn: the game is thinking"
    );
    g.ops(json!([{"op": "end", "result": {}}]));
    assert_eq!(g.snap(&b)["waitingFor"], Value::Null);
}

#[test]
fn the_events_log_hides_other_players_rejection_reasons() {
    // Defect 3: `/events` showed every player why the game rejected someone else's action.
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.poll();
    g.ops(
        json!([{"op": "reject", "playerId": a, "reason": "your queen is pinned", "actionId": id}]),
    );
    let rejected = |v: &Value| -> Value {
        v["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["type"] == "action" && e["status"] == "rejected")
            .cloned()
            .unwrap()
    };
    let mine = wire(&g.s.events_since(0, &a));
    assert_eq!(rejected(&mine)["reason"], "your queen is pinned");
    let theirs = wire(&g.s.events_since(0, &b));
    assert_eq!(rejected(&theirs)["reason"], Value::Null);
    assert!(!theirs.to_string().contains("pinned"), "{theirs}");
}

#[test]
fn while_the_host_is_gone_the_on_turn_player_waits_for_the_host() {
    // Defect 4: the on-turn player saw `waitingFor: null` while the host was not responding.
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.heartbeat = false;
    g.advance(25_000);
    assert!(!g.s.host.alive);
    assert_eq!(g.snap(&a)["waitingFor"], "host");
    assert_eq!(g.snap(&b)["waitingFor"], "host");
    g.poll();
    assert_eq!(g.snap(&a)["waitingFor"], Value::Null);
}
