//! Section 4: simultaneous and not-turn-based games.
use super::*;
use crate::ActionStatus;

fn everyone_moves(g: &mut Game, a: &str, b: &str) {
    g.ops(json!([
        {"op": "legal_actions", "playerId": a, "actions": [{"type": "rock"}, {"type": "paper"}]},
        {"op": "legal_actions", "playerId": b, "actions": [{"type": "rock"}, {"type": "paper"}]},
    ]));
}

#[test]
fn simultaneous_actions_are_held_until_everyone_submitted() {
    let (mut g, a, b) = Game::started(config(json!({"simultaneous": true})));
    everyone_moves(&mut g, &a, &b);
    assert_eq!(g.s.turn, 1);
    assert_eq!(g.s.on_turn, vec![a.clone(), b.clone()]);
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&b)["yourTurn"], true);
    let ia = g.act(&a);
    assert!(g.poll().is_empty(), "held");
    assert_eq!(g.snap(&a)["waitingFor"], "opponent");
    assert_eq!(g.snap(&a)["lastAction"]["status"], "pending");
    let ib = g.act(&b);
    let entries = g.poll();
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e["actionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![ia.as_str(), ib.as_str()],
        "released together, in seat order"
    );
    // The turn advances on the next publish after the release was delivered.
    everyone_moves(&mut g, &a, &b);
    assert_eq!(g.s.turn, 2);
    assert_eq!(g.s.action_outcome(&a, &ia).0, ActionStatus::Applied);
    assert_eq!(g.s.action_outcome(&b, &ib).0, ActionStatus::Applied);
}

#[test]
fn a_rejected_released_action_is_resubmitted_straight_to_the_game() {
    let (mut g, a, b) = Game::started(config(json!({"simultaneous": true})));
    everyone_moves(&mut g, &a, &b);
    let ia = g.act(&a);
    g.act(&b);
    g.poll();
    // Rejecting in a batch that also publishes does not advance the turn.
    g.ops(json!([
        {"op": "reject", "playerId": a, "reason": "no", "actionId": ia},
        {"op": "state", "state": {"waiting": "a"}},
    ]));
    assert_eq!(g.s.turn, 1);
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&b)["yourTurn"], false);
    let ia2 = g.act(&a);
    let entries = g.poll();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["actionId"], ia2.as_str());
    everyone_moves(&mut g, &a, &b);
    assert_eq!(g.s.turn, 2);
    assert_eq!(g.s.action_outcome(&a, &ia2).0, ActionStatus::Applied);
}

#[test]
fn simultaneous_clock_strikes_only_those_who_did_not_submit() {
    let (mut g, a, b) = Game::started(config(json!({"simultaneous": true, "turnTimeout": 10})));
    everyone_moves(&mut g, &a, &b);
    g.act(&a);
    g.advance(10_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    assert_eq!(g.s.player(&b).unwrap().strikes, 1);
    let t: Vec<Value> = g
        .poll()
        .into_iter()
        .filter(|e| e["type"] == "timeout")
        .collect();
    assert_eq!(
        t,
        vec![
            json!({"seq": 2, "type": "timeout", "playerId": b, "strike": 1, "maxStrikes": 2, "final": false})
        ]
    );
    g.advance(10_000);
    assert_eq!(g.s.result.as_ref().unwrap()["forfeitedBy"], b.as_str());
    assert_eq!(g.s.result.as_ref().unwrap()["winner"], a.as_str());
}

#[test]
fn not_turn_based_has_no_turn_checks_and_no_clock() {
    let (mut g, a, b) = Game::started(config(json!({"turnBased": false})));
    assert_eq!(
        g.snap(&a)["yourTurn"],
        true,
        "always, while no legal actions were published"
    );
    g.ops(json!([{"op": "legal_actions", "playerId": a, "actions": [{"type": "jump"}]}]));
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&b)["yourTurn"], false);
    assert_eq!(g.snap(&a)["deadline"], Value::Null);
    // No turn enforcement: b may act, and a stale turn is not checked.
    let ib = g.try_act(&b, Some(0)).unwrap();
    let e = g.try_act(&b, None).unwrap_err();
    assert_eq!(e.code, "action_pending");
    g.poll();
    g.advance(1_000_000);
    assert_eq!(g.s.status, crate::Status::Active, "no clock ever ends it");
    g.ops(json!([{"op": "state", "state": {"t": 1}}]));
    assert_eq!(
        g.s.action_outcome(&b, &ib).0,
        ActionStatus::Unconfirmed,
        "15 s passed first"
    );
    let ib = g.act(&b);
    g.poll();
    g.ops(json!([{"op": "state", "state": {"t": 2}}]));
    assert_eq!(g.s.action_outcome(&b, &ib).0, ActionStatus::Applied);
}

#[test]
fn an_unconfirmed_released_action_can_be_resubmitted() {
    let (mut g, a, b) = Game::started(config(json!({"simultaneous": true})));
    everyone_moves(&mut g, &a, &b);
    let ia = g.act(&a);
    let ib = g.act(&b);
    g.poll();
    g.ops(json!([{"op": "reject", "playerId": b, "reason": "no", "actionId": ib}]));
    g.advance(15_000);
    assert_eq!(g.s.action_outcome(&a, &ia).0, ActionStatus::Unconfirmed);
    assert_eq!(g.snap(&a)["yourTurn"], true);
    let ia2 = g.act(&a);
    let ib2 = g.act(&b);
    let ids: Vec<Value> = g
        .poll()
        .into_iter()
        .map(|e| e["actionId"].clone())
        .collect();
    assert_eq!(
        ids,
        vec![json!(ia2), json!(ib2)],
        "straight to the game, in submission order"
    );
}

#[test]
fn a_held_action_is_dropped_when_the_game_moves_on_without_it() {
    let (mut g, a, b) = Game::started(config(json!({"simultaneous": true})));
    everyone_moves(&mut g, &a, &b);
    let ia = g.act(&a);
    // b drops out of the turn (eliminated): a alone is on turn and is released.
    g.ops(json!([{"op": "legal_actions", "playerId": b, "actions": []}]));
    let e = g.poll();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["actionId"], ia.as_str());
    assert_eq!(g.s.turn, 1);
}

/// A game that is not turn-based checks no turns, but an action sent again for the turn of
/// the same, applied action is its resend (its answer lost): refused, not a second move. The
/// same action for the current turn, or another action, is a new move.
#[test]
fn not_turn_based_refuses_the_resend_of_an_applied_action() {
    let (mut g, a, _b) = Game::started(config(json!({"turnBased": false})));
    g.ops(json!([{"op": "state", "state": {"t": 0}}]));
    let t = g.s.turn;
    let first = g.try_act(&a, Some(t)).unwrap();
    g.poll();
    g.ops(json!([{"op": "state", "state": {"t": 1}}]));
    assert_eq!(g.s.action_outcome(&a, &first).0, ActionStatus::Applied);
    let e = g.err(Game::keyless(
        &a,
        json!({"type": "move", "to": "e4"}),
        Some(t),
        "a_again",
    ));
    assert_eq!((e.status(), e.code.as_str()), (409, "stale_turn"), "{e}");
    assert!(
        e.message.contains(&*first) && e.message.contains("current turn"),
        "{e}"
    );
    assert!(g.poll().is_empty(), "the resend reached the game");
    // The same move for the current turn is a new move, and so is another move with that
    // old turn (no turn checks).
    g.act(&a);
    assert_eq!(g.poll().len(), 1);
    g.ops(json!([{"op": "state", "state": {"t": 2}}]));
    g.ok(Game::keyless(
        &a,
        json!({"type": "jump"}),
        Some(t),
        "a_jump",
    ));
    assert_eq!(g.poll().len(), 1);
}
