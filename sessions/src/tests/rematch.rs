//! Section 6: rematches and series, and leaving.
use super::*;
use crate::{should_wake, Status};

/// What the I/O layer does on `Effect::CreateRematch`: create the next round and link it.
fn open_rematch(g: &mut Game) -> Game {
    let next = g.next_round();
    g.ok(Event::RematchLinked {
        next_session_id: next.s.session_id.to_string(),
    });
    next
}

#[test]
fn auto_rematch_reserves_the_same_seats_and_starts_when_everyone_is_ready() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.turn_to(&a);
    let before = g.s.clone();
    let out = g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    assert!(out.effects.contains(&Effect::CreateRematch));
    assert!(should_wake(&before, &g.s, &b), "the game finished");
    assert!(
        g.s.awaiting_rematch(g.now),
        "the next round is due but not linked yet"
    );
    assert!(
        !g.s.awaiting_rematch(g.now + crate::REMATCH_LINK_GRACE_MS),
        "not forever"
    );
    let ended = g.now;
    let finished = g.s.clone();
    let mut n = open_rematch(&mut g);
    assert!(should_wake(&finished, &g.s, &b), "nextSessionId appeared");
    assert!(!g.s.awaiting_rematch(g.now), "linked");
    assert_eq!(g.snap(&b)["nextSessionId"], n.s.session_id.as_str());
    // Same players, ids and seat order; round + 1, same series, reserved.
    let ids: Vec<&str> = n.s.players.iter().map(|p| p.player_id.as_str()).collect();
    assert_eq!(ids, vec![a.as_str(), b.as_str()]);
    assert_eq!(n.s.round, 2);
    assert_eq!(n.s.series_id, "ses_beef00000001");
    assert_eq!(n.s.previous_session_id.as_deref(), Some("ses_beef00000001"));
    assert_eq!(n.s.host.identity, "host");
    assert!(n.s.is_reserved());
    assert_eq!(n.snap(&a)["waitingFor"], "players");
    assert_eq!(n.snap(&a)["players"][0]["ready"], false);
    let e = n.err(Event::Join {
        player_id: "p_00000099".into(),
        identity: "carol".into(),
        as_name: None,
    });
    assert_eq!((e.status(), e.code.as_str()), (409, "reserved"));
    // Ready by any player endpoint; activation no earlier than 3 s after the end.
    n.ok(Event::PlayerSeen {
        player_id: a.clone(),
    });
    n.advance(1_000);
    n.ok(Event::PlayerSeen {
        player_id: b.clone(),
    });
    assert_eq!(n.s.status, Status::Waiting);
    n.advance(2_000);
    assert_eq!(n.s.status, Status::Active);
    assert_eq!(n.s.started_at_ms, Some(ended + 3_000));
    assert_eq!(
        n.poll(),
        vec![
            json!({"seq": 1, "type": "system", "event": "game_start", "players": [a, b], "round": 2})
        ]
    );
    // /rematch on the old session is idempotent.
    let out = g.ok(Event::Rematch);
    assert_eq!(
        out.reply,
        Reply::Rematch {
            existing: Some(n.s.session_id.to_string())
        }
    );
    assert_eq!(wire(&n.s.rematch_response())["round"], 2);
}

#[test]
fn ready_after_the_delay_starts_at_once() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.advance(10_000);
    n.join("alice"); // an idempotent join readies too
    n.ok(Event::PlayerSeen { player_id: b });
    assert_eq!(n.s.status, Status::Active);
}

#[test]
fn an_expired_reservation_leaves_an_open_table_with_the_ready_players() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.ok(Event::PlayerSeen {
        player_id: b.clone(),
    });
    n.advance(60_000);
    assert!(!n.s.is_reserved());
    assert_eq!(n.s.players.len(), 1);
    assert_eq!(n.s.players[0].player_id, b);
    assert_eq!(n.s.players[0].seat, 0);
    assert_eq!(n.s.round, 2, "still the same series");
    assert!(n.s.listed_in_available(false));
    let c = n.join("carol");
    assert_eq!(n.s.status, Status::Active);
    assert_eq!(n.s.player(&c).unwrap().seat, 1);
}

#[test]
fn a_table_everyone_leaves_starts_over_as_round_1() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.ok(Event::Leave { player_id: a });
    assert_eq!(n.s.round, 2);
    n.ok(Event::Leave { player_id: b });
    assert_eq!(n.s.round, 1);
    assert_eq!(n.s.series_id, n.s.session_id);
    assert_eq!(n.s.previous_session_id, None);
    assert!(!n.s.is_reserved());
    assert!(n.s.listed_in_available(false));
}

#[test]
fn nobody_showing_up_also_starts_a_new_series() {
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.advance(60_000);
    assert!(n.s.players.is_empty());
    assert_eq!(
        (n.s.round, n.s.series_id.clone()),
        (1, n.s.session_id.clone())
    );
}

/// The house's tables (`autoRematch`, the default clock): two agents that stop answering
/// hold their table only until the clocks strike them out (2 x 300 s) and their reserved
/// rematch expires (60 s); then it is an ordinary open table again, the one the house
/// counts as open (docs/hosts.md, "Run the house host"), never a slot held for good.
#[test]
fn a_table_whose_players_went_silent_is_open_again_after_the_strikes_and_the_reservation() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.turn_to(&a);
    assert!(!g.s.listed_in_available(false), "a game under way");
    g.advance(600_000);
    assert_eq!(g.s.status, Status::Finished);
    assert_eq!(g.s.result.as_ref().unwrap()["reason"], "timeout");
    assert!(
        g.s.auto_rematch_due(),
        "struck out is no leaving: the round goes on"
    );
    let mut n = open_rematch(&mut g);
    assert!(n.s.is_reserved() && !n.s.listed_in_available(false));
    n.advance(59_999);
    assert!(n.s.is_reserved(), "kept for the players a while");
    n.advance(1);
    assert!(n.s.players.is_empty(), "{:?}", n.s.players);
    assert_eq!(n.s.status, Status::Waiting);
    assert!(n.s.listed_in_available(false), "open for the next agents");
    let _ = b;
}

#[test]
fn explicit_rematch_when_auto_rematch_is_off() {
    let (mut g, a, b) = Game::started(config(json!({})));
    assert_eq!(g.err(Event::Rematch).code, "not_finished");
    let out = g.ops(json!([{"op": "end", "result": {"winner": b}}]));
    assert!(!out.effects.contains(&Effect::CreateRematch));
    let out = g.ok(Event::Rematch);
    assert!(out.effects.contains(&Effect::CreateRematch));
    assert_eq!(out.reply, Reply::Rematch { existing: None });
    let n = open_rematch(&mut g);
    assert_eq!(n.s.players.len(), 2);
    let _ = a;
}

#[test]
fn leaving_the_finished_session_opts_out_of_the_rematch() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    let out = g.ok(Event::Leave {
        player_id: b.clone(),
    });
    assert_eq!(
        out.effects,
        vec![Effect::LeaveSession {
            session_id: n.s.session_id.to_string(),
            player_id: b.clone()
        }]
    );
    n.ok(Event::Leave {
        player_id: b.clone(),
    });
    assert_eq!(n.s.players.len(), 1);
    // The freed seat is open to newcomers even while a's seat is reserved.
    let c = n.join("carol");
    n.ok(Event::PlayerSeen { player_id: a });
    n.advance(3_000);
    assert_eq!(n.s.status, Status::Active);
    assert_eq!(n.s.player(&c).unwrap().seat, 1);
}

#[test]
fn leaving_an_active_game_forfeits_it_and_prevents_the_auto_rematch() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.turn_to(&a);
    let out = g.ok(Event::Leave {
        player_id: b.clone(),
    });
    assert!(!out.effects.contains(&Effect::CreateRematch));
    let r = json!({"winner": a, "reason": "left", "forfeitedBy": b});
    assert_eq!(g.s.result, Some(r.clone()));
    assert_eq!(
        g.poll(),
        vec![
            json!({"seq": 2, "type": "system", "event": "session_end", "result": r, "reason": "left"})
        ]
    );
    // An explicit rematch seats those who stayed.
    g.ok(Event::Rematch);
    let n = open_rematch(&mut g);
    assert_eq!(n.s.players.len(), 1);
    assert_eq!(n.s.players[0].player_id, a);
}

#[test]
fn host_left_ends_without_rematch() {
    let (mut g, _a, _b) = Game::started(config(json!({"autoRematch": true})));
    let out = g.ops(json!([{"op": "end", "result": {"winner": null, "reason": "host_left"}, "reason": "host_left"}]));
    assert!(!out.effects.contains(&Effect::CreateRematch));
    assert_eq!(g.s.end_reason.as_deref(), Some("host_left"));
}

#[test]
fn rematch_of_a_timeout_forfeit_is_automatic() {
    let (mut g, a, _b) = Game::started(config(
        json!({"autoRematch": true, "turnTimeout": 1, "maxTurnTimeouts": 1}),
    ));
    g.turn_to(&a);
    g.advance(1_000);
    assert_eq!(g.s.status, Status::Finished);
    assert!(g.effects().any(|e| *e == Effect::CreateRematch));
}

#[test]
fn without_auto_rematch_a_finished_game_is_over_for_the_poll_at_once() {
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": false})));
    g.turn_to(&a);
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    assert_eq!(g.s.status, Status::Finished);
    assert!(!g.s.awaiting_rematch(g.now));
    assert!(g.s.state_ready_for(&a));
}

#[test]
fn an_explicit_rematch_after_host_left_is_refused() {
    // Defect 5: `POST /rematch` after `end` with reason `host_left` created round 2.
    let (mut g, _a, _b) = Game::started(config(json!({})));
    g.ops(json!([{"op": "end", "result": {"winner": null}, "reason": "host_left"}]));
    let e = g.err(Event::Rematch);
    assert_eq!((e.status(), e.code.as_str()), (409, "host_left"));
    assert!(e.message.contains("new session"), "{e}");
    assert!(Session::new_rematch(&g.s, "ses_beef00000002".into(), g.now).is_err());
}

#[test]
fn the_operator_ends_a_table_with_a_reason_and_no_next_round_opens() {
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": true})));
    g.turn_to(&a);
    let out = g.ok(Event::OperatorEnd {
        reason: "abusive names".into(),
    });
    assert_eq!(g.s.status, Status::Finished);
    assert_eq!(g.s.end_reason.as_deref(), Some(crate::OPERATOR_END));
    let result = g.s.result.clone().unwrap();
    assert_eq!(result["reason"], crate::OPERATOR_END);
    assert_eq!(result["message"], "abusive names");
    assert!(
        !out.effects.contains(&Effect::CreateRematch),
        "{:?}",
        out.effects
    );
    // The host hears of it like of any end the platform made.
    let entries = g.poll();
    assert!(
        entries.iter().any(|e| e["event"] == "session_end"),
        "{entries:?}"
    );
    let e = g.err(Event::OperatorEnd {
        reason: "again".into(),
    });
    assert_eq!(e.code, crate::ProtocolCode::Finished);
}

/// A late leave of an old round passes on only while the next round has not started: once
/// it is under way, the leave is no forfeit of it (a player cleaning up round 1 lost round 2,
/// rated, and ended the series).
#[test]
fn a_late_leave_of_an_old_round_is_no_forfeit_of_the_one_under_way() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.ok(Event::PlayerSeen {
        player_id: a.clone(),
    });
    n.ok(Event::PlayerSeen {
        player_id: b.clone(),
    });
    n.advance(3_000);
    assert_eq!(n.s.status, Status::Active);
    let out = g.ok(Event::Leave {
        player_id: a.clone(),
    });
    assert_eq!(
        out.effects,
        vec![Effect::LeaveSession {
            session_id: n.s.session_id.to_string(),
            player_id: a.clone()
        }]
    );
    let before = n.s.clone();
    n.ok(Event::OptOut {
        player_id: a.clone(),
    });
    assert_eq!(n.s.status, Status::Active);
    assert_eq!(n.s, before, "the round under way changed");
    // Before it starts, the same opt-out frees the seat.
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.ok(Event::OptOut { player_id: a });
    assert_eq!(n.s.players.len(), 1);
}

/// A reserved rematch whose every seated player is ready holds no seat for anybody: a player
/// who opted out left a free seat, and the table is an open one (section 7: `/available`
/// lists joinable tables; only seats held for players who have not shown up are reserved).
/// It stayed `reserved` and out of the default `/available` until the reservation ran out
/// (60 s), while a newcomer's join would have taken the seat.
#[test]
fn a_rematch_whose_seated_players_are_all_ready_is_an_open_table() {
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.ok(Event::OptOut {
        player_id: b.clone(),
    });
    assert!(n.s.is_reserved(), "alice has not shown up yet");
    assert!(!n.s.listed_in_available(false));
    n.ok(Event::PlayerSeen {
        player_id: a.clone(),
    });
    assert!(!n.s.is_reserved(), "nobody is left to hold a seat for");
    assert!(n.s.listed_in_available(false));
    let e = wire(&n.s.available_entry());
    assert_eq!(
        (&e["reserved"], &e["joinable"]),
        (&json!(false), &json!(true)),
        "{e}"
    );
    assert_eq!(n.s.status, Status::Waiting);
    // A newcomer takes the seat and the round starts with the same series.
    let c = n.join("carol");
    n.advance(3_000);
    assert_eq!(n.s.status, Status::Active);
    assert_eq!((n.s.round, n.s.player(&c).unwrap().seat), (2, 1));
    // Every seat held and ready (the table only waits for its start delay): nothing is
    // reserved either; a newcomer is told `full`.
    let (mut g, a, b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = open_rematch(&mut g);
    n.ok(Event::PlayerSeen { player_id: a });
    n.ok(Event::PlayerSeen { player_id: b });
    assert_eq!(n.s.status, Status::Waiting);
    assert!(!n.s.is_reserved());
    let e = n.err(Event::Join {
        player_id: "p_00000099".into(),
        identity: "dave".into(),
        as_name: None,
    });
    assert_eq!(e.code.as_str(), "full");
}
