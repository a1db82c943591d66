//! Section 4: applied / rejected / unconfirmed, observations.
use super::*;
use crate::ActionStatus;

#[test]
fn applied_when_the_next_turn_is_published() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.poll();
    g.advance(1_000);
    g.turn_to(&b);
    let la = &g.snap(&a)["lastAction"];
    assert_eq!(la["actionId"], id.as_str());
    assert_eq!(la["status"], "applied");
    assert_eq!(la["turn"], 1);
    assert_eq!(la["reason"], Value::Null);
    assert_eq!(la["at"], "2026-10-07T19:00:01.000Z");
}

#[test]
fn rejected_puts_you_back_on_turn_with_the_same_actions_and_clock() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.advance(100_000);
    let id = g.act(&a);
    g.poll();
    assert_eq!(
        g.snap(&a)["deadline"],
        "2026-10-07T19:05:00.000Z",
        "a pending action keeps the deadline"
    );
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "illegal move", "actionId": id}]));
    let s = g.snap(&a);
    assert_eq!(s["yourTurn"], true);
    assert_eq!(s["turn"], 1);
    assert_eq!(s["lastAction"]["status"], "rejected");
    assert_eq!(s["lastAction"]["reason"], "illegal move");
    assert_eq!(s["legalActions"].as_array().unwrap().len(), 2);
    assert_eq!(s["deadline"], "2026-10-07T19:05:00.000Z");
    assert_eq!(s["rejections"][0]["reason"], "illegal move");
    assert_eq!(s["rejections"][0]["actionId"], id.as_str());
    // Rejections stay for the turn (no longer deleted on read) and go when it moves.
    assert_eq!(g.snap(&a)["rejections"].as_array().unwrap().len(), 1);
    let id2 = g.act(&a);
    g.poll();
    g.turn_to(&g.s.players[1].player_id.clone());
    assert_eq!(g.s.action_outcome(&a, &id2).0, ActionStatus::Applied);
    assert_eq!(g.snap(&a)["rejections"], json!([]));
}

#[test]
fn a_rejection_sent_again_is_listed_once_and_leaves_the_next_move_alone() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.poll();
    let reject = json!({"op": "reject", "playerId": a, "reason": "illegal", "actionId": id});
    g.ops(json!([reject, reject]));
    g.ops(json!([reject]));
    let s = g.snap(&a);
    assert_eq!(s["lastAction"]["status"], "rejected");
    assert_eq!(s["rejections"].as_array().unwrap().len(), 1, "{s}");
    // A late copy after the next move: no second rejection, the move still pending.
    let id2 = g.act(&a);
    g.poll();
    g.ops(json!([reject]));
    assert_eq!(g.s.action_outcome(&a, &id2).0, ActionStatus::Pending);
    assert_eq!(g.snap(&a)["rejections"].as_array().unwrap().len(), 1);
}

#[test]
fn a_v1_reject_without_action_id_hits_the_pending_action() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.poll();
    g.ops(json!([{"op": "reject", "playerId": a, "reason": {"code": "bad"}}]));
    assert_eq!(
        g.s.action_outcome(&a, &id),
        (ActionStatus::Rejected, json!({"code": "bad"}))
    );
}

/// A reject without an action id while the player's action is still queued for the host
/// (a late answer to an earlier, unconfirmed one) leaves that action pending: the game has
/// not seen it. It was marked rejected, the player acted again, and the queued action was
/// delivered too.
#[test]
fn a_reject_without_action_id_leaves_an_undelivered_action_pending() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let first = g.act(&a);
    g.poll();
    g.advance(15_000);
    assert_eq!(g.s.action_outcome(&a, &first).0, ActionStatus::Unconfirmed);
    let second = g.act(&a);
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "late"}]));
    assert_eq!(g.s.action_outcome(&a, &second).0, ActionStatus::Pending);
    assert_eq!(g.snap(&a)["yourTurn"], false, "{}", g.snap(&a));
    // Delivered, the same reject is about it.
    g.poll();
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "no"}]));
    assert_eq!(
        g.s.action_outcome(&a, &second),
        (ActionStatus::Rejected, json!("no"))
    );
}

#[test]
fn unconfirmed_15_s_after_delivery() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.advance(30_000);
    assert_eq!(
        g.s.action_outcome(&a, &id).0,
        ActionStatus::Pending,
        "counts from delivery"
    );
    g.poll();
    g.advance(14_999);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Pending);
    g.advance(1);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Unconfirmed);
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&a)["lastAction"]["at"], "2026-10-07T19:00:45.000Z");
    // A late rejection still tells the truth about it.
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "late", "actionId": id}]));
    assert_eq!(
        g.s.action_outcome(&a, &id),
        (ActionStatus::Rejected, json!("late"))
    );
    assert_eq!(g.snap(&a)["yourTurn"], true);
}

#[test]
fn observations_replace_the_public_state_for_that_player_only() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.ops(json!([
        {"op": "state", "state": {"board": "public"}},
        {"op": "observation", "playerId": a, "observation": {"hand": [1, 2]}},
    ]));
    assert_eq!(g.snap(&a)["state"], json!({"hand": [1, 2]}));
    assert_eq!(g.snap(&b)["state"], json!({"board": "public"}));
    assert_eq!(
        wire(&g.s.public_view())["state"],
        json!({"board": "public"})
    );
}

#[test]
fn ops_are_atomic_and_unknown_players_say_who_is_seated() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    let before = g.s.clone();
    let ops = Op::parse_batch(&json!({"ops": [
        {"op": "state", "state": {"n": 1}},
        {"op": "legal_actions", "playerId": "p_99999999", "actions": [1]},
    ]}))
    .unwrap();
    let e = g.err(Event::PublishOps {
        ops,
        batch_id: None,
    });
    assert_eq!(e.status(), 400);
    assert!(
        e.message.contains("ops[1]") && e.message.contains(&a),
        "{e}"
    );
    assert_eq!(g.s, before);
}

#[test]
fn the_end_applies_delivered_actions() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.poll();
    g.ops(
        json!([{"op": "end", "result": {"winner": a}}, {"op": "state", "state": {"final": true}}]),
    );
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Applied);
    let s = g.snap(&b);
    assert_eq!(s["status"], "finished");
    assert_eq!(s["yourTurn"], false);
    assert_eq!(s["legalActions"], Value::Null);
    assert_eq!(s["result"], json!({"winner": a}));
    assert_eq!(
        s["state"],
        json!({"final": true}),
        "state after the end still lands"
    );
    assert_eq!(g.s.end_reason.as_deref(), Some("game_over"));
    assert!(
        g.poll().is_empty(),
        "no session_end for a game-ended session"
    );
}

#[test]
fn rejections_are_capped_per_turn() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    for i in 0..(crate::machine::MAX_REJECTIONS + 10) {
        g.ops(json!([{"op": "reject", "playerId": a, "reason": i}]));
    }
    let r = g.snap(&a)["rejections"].as_array().unwrap().clone();
    assert_eq!(r.len(), crate::machine::MAX_REJECTIONS);
    assert_eq!(
        r.last().unwrap()["reason"],
        crate::machine::MAX_REJECTIONS + 9
    );
}

#[test]
fn v1_single_op_endpoints_behave_like_ops() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    let op = Op::from_v1(
        "legal-actions",
        &json!({"playerId": a, "actions": [{"type": "m"}]}),
    )
    .unwrap();
    g.ok(Event::PublishOps {
        ops: vec![op],
        batch_id: None,
    });
    assert_eq!(g.s.on_turn, vec![a.clone()]);
    assert_eq!(wire(&g.s.v1_ok_response()), json!({"ok": true}));
    let op = Op::from_v1("end", &json!({"result": {"winner": a}})).unwrap();
    g.ok(Event::PublishOps {
        ops: vec![op],
        batch_id: None,
    });
    assert_eq!(g.s.result, Some(json!({"winner": a})));
}

#[test]
fn a_resent_batch_is_applied_once_and_a_refused_one_is_not_remembered() {
    let (mut g, _a, _b) = Game::started(config(json!({})));
    let batch = |n: u64, id: &str| Event::PublishOps {
        ops: Op::parse_batch(&json!({"ops": [{"op": "state", "state": {"n": n}}]})).unwrap(),
        batch_id: Some(id.into()),
    };
    assert!(g.ok(batch(1, "b1")).changed);
    // The same id again (even with other ops) is the resend of an applied batch.
    g.now += 10;
    assert!(!g.ok(batch(2, "b1")).changed);
    assert_eq!(*g.s.state, json!({"n": 1}));
    assert_eq!(
        g.s.host.last_seen_ms, g.now,
        "a resend still counts as liveness"
    );
    assert!(g.ok(batch(2, "b2")).changed);
    assert_eq!(*g.s.state, json!({"n": 2}));
    // A refused batch is not remembered: its corrected resend applies.
    let bad = Event::PublishOps {
        ops: Op::parse_batch(
            &json!({"ops": [{"op": "legal_actions", "playerId": "p_99999999", "actions": [1]}]}),
        )
        .unwrap(),
        batch_id: Some("b3".into()),
    };
    g.err(bad);
    assert!(g.ok(batch(3, "b3")).changed);
    // A batch without an id always applies.
    let plain = Op::parse_batch(&json!({"ops": [{"op": "state", "state": {"n": 4}}]})).unwrap();
    assert!(
        g.ok(Event::PublishOps {
            ops: plain,
            batch_id: None
        })
        .changed
    );
}

/// An action the player moved past (resolved, then another accepted) is no longer the
/// record's latest: `action_outcome` cannot say, `action_superseded` tells it apart from a
/// pending one, and the event log keeps what became of it.
#[test]
fn an_action_the_player_moved_past_is_told_from_a_pending_one() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let first = g.act(&a);
    assert!(!g.s.action_superseded(&a, &first));
    assert_eq!(g.s.logged_outcome(&a, &first), None, "still pending");
    g.poll();
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "no", "actionId": first}]));
    let second = g.act(&a);
    assert!(g.s.action_superseded(&a, &first));
    assert!(!g.s.action_superseded(&a, &second));
    assert_eq!(
        g.s.logged_outcome(&a, &first),
        Some((ActionStatus::Rejected, json!("no")))
    );
    g.poll();
    g.turn_to(&b);
    assert_eq!(
        g.s.logged_outcome(&a, &second),
        Some((ActionStatus::Applied, Value::Null))
    );
    assert_eq!(g.s.logged_outcome(&b, &second), None, "another player's id");
}

/// `turnTimeout` 60 s and `max` strikes: `a` is given the turn, acts after `think_ms` and the
/// game says nothing, so the action is `unconfirmed` 15 s after delivery. Returns the game,
/// the players and the action's id.
fn unanswered(max: u32, think_ms: u64) -> (Game, String, String, String) {
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 60, "maxTurnTimeouts": max})));
    g.turn_to(&a);
    g.advance(think_ms);
    let id = g.act(&a);
    g.poll();
    g.advance(15_000);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Unconfirmed);
    (g, a, b, id)
}

/// An action called `unconfirmed` (the game said nothing for 15 s) that the game then moves
/// on from (it publishes the next player's turn, with no newer action of this player and no
/// strike since) was applied, late: the contract's "applied when the host publishes the next
/// turn". It stayed `unconfirmed` for good, and the strike its player had before acting
/// stayed too, though an applied action is what clears it.
#[test]
fn an_unconfirmed_action_the_game_moves_on_from_is_applied_late() {
    // Struck at 60 s (the warning), then the move.
    let (mut g, a, b, id) = unanswered(3, 60_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    g.turn_to(&b);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Applied);
    assert_eq!(
        g.s.player(&a).unwrap().strikes,
        0,
        "an applied action clears strikes"
    );
    assert_eq!(
        g.s.logged_outcome(&a, &id),
        Some((ActionStatus::Applied, Value::Null))
    );
    // Only the turn it was sent on: moving on again changes nothing.
    let at = g.snap(&a)["lastAction"]["at"].clone();
    g.advance(1_000);
    g.turn_to(&a);
    assert_eq!(g.snap(&a)["lastAction"]["at"], at);
}

/// The other order: the action is unconfirmed, its player (back on turn) runs out of time
/// and is struck, and the game passes the struck player's turn (what a game does with
/// `AGENT_TIMEOUT`). The turn moved on because of the timeout, not because of the move: the
/// action stays `unconfirmed` and the strike stays. Cleared, an unresponsive host's player
/// never reached the forfeit (the reverted first attempt, 0590bd5d).
#[test]
fn an_unconfirmed_action_whose_player_was_struck_since_stays_unconfirmed() {
    let (mut g, a, b, id) = unanswered(3, 10_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    // Back on turn with the deadline of the turn: struck at 60 s.
    g.advance(40_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    g.turn_to(&b);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Unconfirmed);
    assert_eq!(
        g.s.player(&a).unwrap().strikes,
        1,
        "the timeout's strike stays"
    );
    assert_eq!(
        g.s.logged_outcome(&a, &id),
        Some((ActionStatus::Unconfirmed, Value::Null))
    );
    // A strike before the action and another after it: still the timeout's turn.
    let (mut g, a, b, id) = unanswered(4, 60_000);
    g.advance(60_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 2);
    g.turn_to(&b);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Unconfirmed);
    assert_eq!(g.s.player(&a).unwrap().strikes, 2);
}

/// A record the previous release wrote (`sessions.write_previous_forms`, or before the
/// strike's time was kept) does not say when its player was last struck: with strikes
/// standing, the turn's move may have been the timeout's, so the action stays `unconfirmed`
/// (what every release before did); without strikes there is nothing to tell apart.
#[test]
fn without_the_strikes_time_an_unconfirmed_action_of_a_struck_player_stays_unconfirmed() {
    for (think_ms, outcome) in [
        (60_000, ActionStatus::Unconfirmed),
        (10_000, ActionStatus::Applied),
    ] {
        let (mut g, a, b, id) = unanswered(3, think_ms);
        g.s = g.s.as_previous_release_reads().into_owned();
        g.turn_to(&b);
        assert_eq!(
            g.s.action_outcome(&a, &id).0,
            outcome,
            "after {think_ms} ms"
        );
    }
}

/// An unconfirmed action whose player sent a newer one is no longer the one the game moved
/// on from: the newer one is applied, the older stays unconfirmed.
#[test]
fn an_unconfirmed_action_followed_by_a_newer_one_stays_unconfirmed() {
    let (mut g, a, b, first) = unanswered(3, 0);
    let second = g.act(&a);
    g.poll();
    g.turn_to(&b);
    assert_eq!(g.s.action_outcome(&a, &second).0, ActionStatus::Applied);
    assert_eq!(
        g.s.logged_outcome(&a, &first),
        Some((ActionStatus::Unconfirmed, Value::Null))
    );
}
