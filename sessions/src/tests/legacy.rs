//! Section 9: legacy mode (no `sdkVersion`).
use super::*;
use crate::Status;

fn legacy_config(extra: Value) -> Value {
    let mut c = config(extra);
    c.as_object_mut().unwrap().remove("sdkVersion");
    c
}

#[test]
fn game_start_is_a_v1_system_action() {
    let mut g = Game::new(legacy_config(json!({"autoRematch": true})));
    let a = g.join("a");
    let b = g.join("b");
    let entries = g.poll();
    assert_eq!(
        entries,
        vec![json!({"seq": 1, "type": "action", "playerId": "__system__",
                    "action": {"type": "__game_start__", "players": [a, b]}})]
    );
}

#[test]
fn only_the_final_strike_is_sent_and_no_session_end() {
    let mut g = Game::new(legacy_config(
        json!({"autoRematch": true, "turnTimeout": 10}),
    ));
    let a = g.join("a");
    let b = g.join("b");
    g.poll();
    g.turn_to(&a);
    g.advance(10_000);
    assert_eq!(
        g.s.player(&a).unwrap().strikes,
        1,
        "the backend still counts the warning"
    );
    assert!(g.poll().is_empty(), "but a v1 game does not hear about it");
    g.advance(10_000);
    assert_eq!(g.s.status, Status::Finished);
    assert_eq!(
        g.poll(),
        vec![
            json!({"seq": 2, "type": "timeout", "playerId": a, "strike": 2, "maxStrikes": 2, "final": true})
        ]
    );
    assert_eq!(g.s.result.as_ref().unwrap()["winner"], b.as_str());
    assert!(
        !g.effects().any(|e| *e == Effect::CreateRematch),
        "no rematch"
    );
    assert_eq!(g.err(Event::Rematch).code, "legacy_session");
}

#[test]
fn turns_and_outcomes_behave_as_v2() {
    let mut g = Game::new(legacy_config(json!({})));
    let a = g.join("a");
    let b = g.join("b");
    g.poll();
    g.turn_to(&a);
    assert_eq!(g.try_act(&b, None).unwrap_err().code, "not_your_turn");
    let id = g.act(&a);
    g.poll();
    g.turn_to(&b);
    assert_eq!(g.s.action_outcome(&a, &id).0, crate::ActionStatus::Applied);
}
