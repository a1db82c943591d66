//! Section 4 (sequential): turns, turn numbers and every 409 of `POST /action`.
use super::*;
use crate::{should_wake, ActionStatus, Status};

#[test]
fn publishing_for_one_player_clears_the_others_and_moves_the_turn() {
    let (mut g, a, b) = Game::started(config(json!({})));
    assert_eq!(g.s.turn, 0);
    g.turn_to(&a);
    assert_eq!(g.s.turn, 1);
    assert_eq!(g.s.on_turn, vec![a.clone()]);
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&b)["yourTurn"], false);
    assert_eq!(g.snap(&b)["legalActions"], Value::Null);
    assert_eq!(g.snap(&b)["waitingFor"], "opponent");
    g.turn_to(&b);
    assert_eq!(g.s.turn, 2);
    assert!(
        g.s.player(&a).unwrap().legal_actions.is_none(),
        "the platform clears"
    );
    assert_eq!(g.snap(&a)["legalActions"], Value::Null);
    assert_eq!(g.snap(&b)["legalActions"].as_array().unwrap().len(), 2);
}

#[test]
fn republishing_the_same_turn_keeps_the_turn_and_the_clock() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let deadline = g.snap(&a)["deadline"].clone();
    assert_eq!(deadline, "2026-10-07T19:05:00.000Z");
    g.advance(60_000);
    g.turn_to(&a);
    g.ops(json!([{"op": "state", "state": {"fen": "x"}}]));
    assert_eq!(g.s.turn, 1);
    assert_eq!(g.snap(&a)["deadline"], deadline);
}

#[test]
fn multi_step_turns_count_each_delivered_step() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let first = g.act(&a);
    // Not delivered yet: republishing is the same turn and the action stays pending.
    g.turn_to(&a);
    assert_eq!(g.s.turn, 1);
    assert_eq!(g.s.action_outcome(&a, &first).0, ActionStatus::Pending);
    g.poll();
    g.turn_to(&a);
    assert_eq!(g.s.turn, 2, "same player, new legal actions after delivery");
    assert_eq!(g.s.action_outcome(&a, &first).0, ActionStatus::Applied);
    g.act(&a);
    g.poll();
    g.turn_to(&b);
    assert_eq!(g.s.turn, 3);
}

#[test]
fn a_batch_moves_the_turn_at_most_once() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.act(&a);
    g.poll();
    g.ops(json!([
        {"op": "state", "state": {"n": 1}},
        {"op": "legal_actions", "playerId": a, "actions": []},
        {"op": "legal_actions", "playerId": b, "actions": [{"type": "x"}]},
    ]));
    assert_eq!(g.s.turn, 2);
    assert_eq!(g.s.on_turn, vec![b]);
}

#[test]
fn every_409_of_post_action() {
    let mut g = Game::new(config(json!({})));
    let a = g.join("alice");
    let e = g.try_act(&a, None).unwrap_err();
    assert_eq!((e.status(), e.code.as_str()), (409, "not_active"));
    let b = g.join("bob");
    g.turn_to(&a);
    let e = g.try_act(&b, Some(1)).unwrap_err();
    assert_eq!((e.status(), e.code.as_str()), (409, "not_your_turn"));
    let e = g.try_act(&a, Some(0)).unwrap_err();
    assert_eq!((e.status(), e.code.as_str()), (409, "stale_turn"));
    assert!(e.message.contains("current turn is 1"));
    g.try_act(&a, Some(1)).unwrap();
    let e = g.try_act(&a, Some(1)).unwrap_err();
    assert_eq!((e.status(), e.code.as_str()), (409, "action_pending"));
    assert_eq!(g.snap(&a)["yourTurn"], false);
    assert_eq!(g.snap(&a)["waitingFor"], "host");
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let e = g.try_act(&b, None).unwrap_err();
    assert_eq!((e.status(), e.code.as_str()), (409, "finished"));
    // Nothing of the refused actions reached the host.
    let actions: Vec<Value> = g
        .poll()
        .into_iter()
        .filter(|e| e["type"] == "action")
        .collect();
    assert!(
        actions.is_empty(),
        "undelivered action was taken back at the end: {actions:?}"
    );
}

#[test]
fn reserved_action_types_and_strangers() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let e = g.err(Game::keyless(
        &a,
        json!({"type": "__timeout__"}),
        None,
        "a_x",
    ));
    assert_eq!((e.status(), e.code.as_str()), (400, "reserved_action"));
    let e = g.err(Event::Action {
        player_id: "p_deadbeef".into(),
        action: json!({"type": "move"}),
        turn: None,
        action_id: "a_y".into(),
        idempotency_key: None,
    });
    assert_eq!((e.status(), e.code.as_str()), (403, "not_a_player"));
}

/// A player who left (and so forfeited) the game is still listed in its result; a late
/// action of theirs gets the contract's 409 `finished`, as every seat's does.
#[test]
fn a_late_action_of_a_player_who_left_a_finished_game_is_409_finished() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.ok(Event::Leave {
        player_id: a.clone(),
    });
    assert_eq!(g.s.status, Status::Finished);
    let e = g.err(Game::keyless(&a, json!({"type": "move"}), None, "a_z"));
    assert_eq!((e.status(), e.code.as_str()), (409, "finished"));
}

#[test]
fn an_accepted_action_reaches_the_host_once() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    let entries = g.poll();
    assert_eq!(
        entries,
        vec![
            json!({"seq": 2, "type": "action", "playerId": a, "action": {"type": "move", "to": "e4"}, "actionId": id})
        ]
    );
    assert!(g.poll().is_empty());
}

#[test]
fn games_that_never_publish_legal_actions_apply_on_the_next_state() {
    let (mut g, a, b) = Game::started(config(json!({})));
    // The game's first publish after game_start is a state: from then on everyone may act.
    g.ops(json!([{"op": "state", "state": {"n": 0}}]));
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&b)["yourTurn"], true);
    assert_eq!(g.snap(&a)["legalActions"], json!([]));
    assert_eq!(
        g.snap(&a)["deadline"],
        Value::Null,
        "nobody is on turn, no clock"
    );
    let id = g.act(&a);
    g.ops(json!([{"op": "state", "state": {"n": 1}}]));
    assert_eq!(
        g.s.action_outcome(&a, &id).0,
        ActionStatus::Pending,
        "not delivered yet"
    );
    g.poll();
    g.ops(json!([{"op": "state", "state": {"n": 2}}]));
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Applied);
    assert_eq!(g.s.turn, 1);
}

#[test]
fn nobody_is_on_turn_between_game_start_and_the_first_publish() {
    // Defect 1: every player used to be on turn here, with `legalActions: []`, and both
    // players' actions reached the game before it had said whose move it was.
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 10})));
    for pid in [&a, &b] {
        let s = g.snap(pid);
        assert_eq!(s["yourTurn"], false, "{s}");
        assert_eq!(s["waitingFor"], "host", "{s}");
        assert_eq!(s["legalActions"], Value::Null, "{s}");
        assert_eq!(s["deadline"], Value::Null, "nobody on turn, no clock: {s}");
    }
    assert!(!g.s.state_ready_for(&a));
    for pid in [&a, &b] {
        let e = g.try_act(pid, Some(0)).unwrap_err();
        assert_eq!((e.status(), e.code.as_str()), (409, "not_your_turn"));
    }
    // No clock runs for anyone while the game has not spoken.
    g.advance(60_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    assert!(g.poll().iter().all(|e| e["type"] != "action"));
    // The first publish says who is on turn.
    let before = g.s.clone();
    g.turn_to(&a);
    assert!(should_wake(&before, &g.s, &a));
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(g.snap(&b)["waitingFor"], "opponent");
}

#[test]
fn a_publish_before_game_start_does_not_open_the_turn() {
    let mut g = Game::new(config(json!({})));
    let a = g.join("alice");
    g.ops(json!([{"op": "state", "state": {"lobby": true}}]));
    let b = g.join("bob");
    assert_eq!(g.poll()[0]["event"], "game_start");
    assert_eq!(g.snap(&a)["yourTurn"], false);
    assert_eq!(g.snap(&b)["waitingFor"], "host");
    g.ops(json!([{"op": "state", "state": {"n": 0}}]));
    assert_eq!(
        g.snap(&a)["yourTurn"],
        true,
        "never publishes legal actions"
    );
}

/// An `idempotencyKey` answers a retry of the latest action (same action, same or no
/// `turn`) with that action; the same key on another move is `409 idempotency_key_reused`,
/// and the session is left as it was.
#[test]
fn a_key_reused_for_another_move_is_refused() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let act = |action: Value, turn: Option<u64>, id: &str| Event::Action {
        player_id: a.clone(),
        action,
        turn,
        action_id: id.into(),
        idempotency_key: Some("k".into()),
    };
    let t = g.s.turn;
    g.ok(act(json!("x"), Some(t), "a_1"));
    let e = g.err(act(json!("y"), Some(t), "a_2"));
    assert_eq!(
        (e.status(), e.code.as_str()),
        (409, "idempotency_key_reused")
    );
    for turn in [Some(t), None] {
        match g.ok(act(json!("x"), turn, "a_3")).reply {
            Reply::ActionAccepted { action_id, .. } => assert_eq!(&*action_id, "a_1"),
            r => panic!("{r:?}"),
        }
    }
    g.poll();
    g.turn_to(&b);
    g.turn_to(&a);
    let e = g.err(act(json!("x"), Some(g.s.turn), "a_4"));
    assert_eq!(
        (e.status(), e.code.as_str()),
        (409, "idempotency_key_reused")
    );
    let s = g.snap(&a);
    assert_eq!(
        (
            s["lastAction"]["actionId"].as_str(),
            s["yourTurn"].as_bool()
        ),
        (Some("a_1"), Some(true)),
        "{s}"
    );
}

/// A retry with the key of an action the player has moved past (a resend a client's retry
/// layer held back, arriving after the next move) is that action again: the same id and
/// turn as its first answer. It was taken as a new move (here, in a multi-step turn that
/// sends no `turn`, the game got the first step twice), or refused `stale_turn` as if the
/// first request had been a move out of time. The same key with another move is still
/// `idempotency_key_reused`; a key older than the ones kept is a new move, as before.
#[test]
fn a_retry_with_the_key_of_an_earlier_action_is_answered_as_that_action() {
    let (mut g, a, _b) = Game::started(config(json!({"turnBased": false})));
    g.ops(json!([{"op": "state", "state": {}}]));
    let act = |n: u32, turn: Option<u64>, id: &str| Event::Action {
        player_id: a.clone(),
        action: json!({ "step": n }),
        turn,
        action_id: id.into(),
        idempotency_key: Some(format!("k{n}")),
    };
    let accepted = |out: Outcome| match out.reply {
        Reply::ActionAccepted { action_id, turn } => (action_id, turn),
        r => panic!("{r:?}"),
    };
    let mut firsts = Vec::new();
    for n in 1..=4 {
        let first = accepted(g.ok(act(n, None, &format!("a_{n}"))));
        g.poll();
        g.ops(json!([{"op": "state", "state": { "n": n }}]));
        assert_eq!(g.s.action_outcome(&a, &first.0).0, ActionStatus::Applied);
        firsts.push(first);
    }
    let queued = g.s.host_queue.len();
    // Steps 2 and 3 (the latest is 4): their first answers again, nothing queued.
    for n in [3, 2] {
        let first = &firsts[n as usize - 1];
        for turn in [None, Some(first.1)] {
            assert_eq!(&accepted(g.ok(act(n, turn, "a_x"))), first);
        }
        let e = g.err(Event::Action {
            player_id: a.clone(),
            action: json!("another move"),
            turn: None,
            action_id: "a_y".into(),
            idempotency_key: Some(format!("k{n}")),
        });
        assert_eq!(
            (e.status(), e.code.as_str()),
            (409, "idempotency_key_reused")
        );
    }
    assert_eq!(
        g.s.host_queue.len(),
        queued,
        "no move reached the game again"
    );
    // The latest (resolved) action's key with another move: its fingerprint tells. It was
    // answered as the old move, and the new one dropped without a word.
    let e = g.err(Event::Action {
        player_id: a.clone(),
        action: json!("another move"),
        turn: Some(firsts[3].1),
        action_id: "a_z".into(),
        idempotency_key: Some("k4".into()),
    });
    assert_eq!(
        (e.status(), e.code.as_str()),
        (409, "idempotency_key_reused")
    );
    // Step 1 is older than the kept keys: a new move, as any unknown key.
    let (id, _) = accepted(g.ok(act(1, None, "a_new")));
    assert_eq!(&*id, "a_new");
}

/// A resend without a key (its answer lost) of an action the game has: refused as the
/// contract says (`action_pending` while pending, `stale_turn` once applied), and the refusal
/// names that action and its outcome, so the agent does not take its move for lost.
#[test]
fn a_resend_without_a_key_is_told_its_action_went_through() {
    let (mut g, a, b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let t = g.s.turn;
    let first = g.try_act(&a, Some(t)).unwrap();
    let e = g.err(Game::keyless(
        &a,
        json!({"type": "move", "to": "e4"}),
        Some(t),
        "a_again",
    ));
    assert_eq!(e.code, "action_pending");
    assert!(
        e.message.contains(&*first) && e.message.contains("repeats your action"),
        "{e}"
    );
    assert_eq!(g.poll().len(), 1, "the game got it once");
    g.turn_to(&b);
    let e = g.try_act(&a, Some(t)).unwrap_err();
    assert_eq!(e.code, "stale_turn");
    assert!(
        e.message.contains(&format!(
            "repeats your action {first} of turn {t}, which was applied"
        )),
        "{e}"
    );
    // Another move for that turn is no resend: the refusal does not call it one.
    let e = g.err(Game::keyless(
        &a,
        json!({"type": "move", "to": "d4"}),
        Some(t),
        "a_other",
    ));
    assert_eq!(e.code, "stale_turn");
    assert!(!e.message.contains("repeats"), "{e}");
    assert!(g.poll().is_empty(), "nothing more reached the game");
}

/// A latest action stored before its fingerprint existed (MessagePack's positional array one
/// field shorter) reads with none, and a resend of it is then taken as before.
#[test]
fn a_latest_action_stored_without_a_fingerprint_still_reads() {
    use crate::session::LastAction;
    let old = rmp_serde::to_vec(&("a_1", 3u64, "applied", (), 7u64, Option::<&str>::None)).unwrap();
    let la: LastAction = rmp_serde::from_slice(&old).unwrap();
    assert_eq!((la.turn, la.fingerprint), (3, None));
    let back: LastAction = rmp_serde::from_slice(&rmp_serde::to_vec(&la).unwrap()).unwrap();
    assert_eq!(back, la);
}
