//! Section 4: clocks and strikes.
use super::*;
use crate::{ActionStatus, Status, TimerKind};

fn timeouts(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e["type"] == "timeout")
        .cloned()
        .collect()
}

#[test]
fn warning_strike_then_forfeit() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.advance(299_999);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    g.advance(1);
    let s = g.snap(&a);
    assert_eq!(s["strikes"], 1);
    assert_eq!(s["maxStrikes"], 2);
    assert_eq!(
        s["deadline"], "2026-10-07T19:10:00.000Z",
        "one more full turn"
    );
    assert_eq!(s["yourTurn"], true);
    let e = timeouts(&g.poll());
    assert_eq!(
        e,
        vec![
            json!({"seq": 2, "type": "timeout", "playerId": a, "strike": 1, "maxStrikes": 2, "final": false})
        ]
    );
    g.advance(300_000);
    assert_eq!(g.s.status, Status::Finished);
    let r = json!({"winner": b, "reason": "timeout", "forfeitedBy": a, "strikes": 2});
    assert_eq!(g.s.result, Some(r.clone()));
    let entries = g.poll();
    assert_eq!(
        entries[0],
        json!({"seq": 3, "type": "timeout", "playerId": a, "strike": 2, "maxStrikes": 2, "final": true})
    );
    assert_eq!(
        entries[1],
        json!({"seq": 4, "type": "system", "event": "session_end", "result": r, "reason": "timeout"})
    );
    assert_eq!(g.s.ended_at_ms, Some(T0 + 600_000));
}

#[test]
fn strikes_reset_only_when_an_action_is_applied() {
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 10, "maxTurnTimeouts": 3})));
    g.turn_to(&a);
    g.advance(10_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    // A rejected action does not reset anything.
    let id = g.act(&a);
    g.poll();
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "no", "actionId": id}]));
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    // The turn moving to b without an applied action of a's (a timed-out turn the game skipped)
    // keeps a's strikes too.
    g.turn_to(&b);
    g.turn_to(&a);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    g.advance(10_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 2);
    g.act(&a);
    g.poll();
    g.turn_to(&b);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
}

#[test]
fn forfeit_on_timeout_false_lets_the_game_decide() {
    let (mut g, a, _b) = Game::started(config(
        json!({"turnTimeout": 10, "forfeitOnTimeout": false}),
    ));
    g.turn_to(&a);
    g.advance(20_000);
    assert_eq!(g.s.status, Status::Active);
    let e = timeouts(&g.poll());
    assert_eq!(e.len(), 2);
    assert_eq!(e[1]["final"], true);
    assert_eq!(
        g.snap(&a)["deadline"],
        Value::Null,
        "stopped until the turn moves"
    );
    g.advance(1_000_000);
    assert!(timeouts(&g.poll()).is_empty());
    assert!(g.s.status == Status::Active);
}

#[test]
fn only_the_on_turn_player_is_struck_and_pending_is_off_the_clock() {
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    g.advance(5_000);
    let id = g.act(&a);
    g.advance(8_000); // undelivered, pending: no strike even past the deadline
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    assert_eq!(g.s.player(&b).unwrap().strikes, 0);
    g.poll();
    // Unconfirmed at +15 s: back on turn, past the deadline, so the warning strike falls
    // then and one more full turn starts.
    g.advance(15_000);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Unconfirmed);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    assert_eq!(g.s.deadline_ms(), Some(g.now + 10_000));
    g.advance(9_999);
    assert_eq!(g.s.status, Status::Active);
    g.advance(1);
    assert_eq!(g.s.status, Status::Finished, "the second strike is final");
    assert_eq!(g.s.player(&b).unwrap().strikes, 0);
}

#[test]
fn turn_timeout_zero_means_no_clock() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 0})));
    g.turn_to(&a);
    assert_eq!(g.snap(&a)["deadline"], Value::Null);
    g.advance(10_000_000);
    assert_eq!(g.s.status, Status::Active);
}

#[test]
fn stale_clock_events_are_ignored() {
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    let old = g.s.timers["clock"].clone();
    assert_eq!(old.turn, 1);
    g.turn_to(&b);
    let new = g.s.timers["clock"].clone();
    assert!(new.generation > old.generation);
    assert!(g
        .effects()
        .any(|e| *e == Effect::Cancel(old.deadline(g.s.session_id()))));
    g.now += 10_000; // the old deadline is due now...
    let before = g.s.clone();
    let out = g.ok(Event::TimerFired {
        kind: TimerKind::Clock,
        generation: old.generation,
    });
    assert_eq!(
        out,
        Outcome::default(),
        "...but it belongs to a turn that moved on"
    );
    assert_eq!(g.s, before);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
}

#[test]
fn a_late_timer_strikes_at_the_deadline_not_when_it_fires() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    // The delayed set was slow: the player acts 1 s after the deadline, before the timer ran.
    g.now += 11_000;
    g.ok(Event::HostSeen);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    assert_eq!(g.s.deadline_ms(), Some(T0 + 20_000));
}

#[test]
fn is_due_tells_the_io_layer_to_catch_up_first() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10, "maxTurnTimeouts": 1})));
    g.turn_to(&a);
    g.now += 10_000;
    assert!(g.s.is_due(g.now));
    // Without catching up, the refused action rolls the forfeit back with it.
    let e = g.try_act(&a, None).unwrap_err();
    assert_eq!(e.code, "finished");
    assert_eq!(g.s.status, Status::Active);
    g.ok(Event::Tick);
    assert!(!g.s.is_due(g.now));
    assert_eq!(g.s.status, Status::Finished);
}

#[test]
fn a_rejection_keeps_the_same_deadline() {
    // Defect 2: the clock used to pause while the action was pending, so a rejection moved
    // the deadline by however long the game took to answer.
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    let deadline = g.snap(&a)["deadline"].clone();
    assert_eq!(deadline, "2026-10-07T19:01:00.000Z");
    g.advance(10_000);
    let id = g.act(&a);
    assert_eq!(
        g.snap(&a)["deadline"],
        deadline,
        "pending: the same deadline"
    );
    g.advance(3_000);
    g.poll();
    g.advance(2_500);
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "illegal", "actionId": id}]));
    let s = g.snap(&a);
    assert_eq!(s["lastAction"]["status"], "rejected");
    assert_eq!(s["yourTurn"], true);
    assert_eq!(
        s["deadline"], deadline,
        "back on turn with the same deadline"
    );
    assert_eq!(g.s.deadline_ms(), Some(T0 + 60_000));
    g.advance(44_499);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    g.advance(1);
    assert_eq!(
        g.s.player(&a).unwrap().strikes,
        1,
        "struck at the old deadline"
    );
}

#[test]
fn a_deadline_that_passed_while_pending_strikes_when_the_player_is_back() {
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    g.advance(9_000);
    let id = g.act(&a);
    g.poll();
    g.advance(4_000); // the deadline passes while the game thinks: nobody is struck
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    assert!(timeouts(&g.poll()).is_empty());
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "illegal", "actionId": id}]));
    // Back on turn past the deadline: the warning falls now, and one more full turn follows.
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    assert_eq!(g.s.player(&b).unwrap().strikes, 0);
    assert_eq!(g.s.deadline_ms(), Some(g.now + 10_000));
    assert_eq!(g.s.status, Status::Active);
}
