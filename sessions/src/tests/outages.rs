//! Outages (`Event::Outage`): time in which nobody could reach the server (a stall of Redis,
//! no process serving) is charged to nobody. Every wait that was running when the server went
//! away resumes afterwards with the time it had left; what fell due before it stands.
use super::*;
use crate::{ActionStatus, Status, TimerKind};

/// The server is away from now for `ms`: no timer fires and nobody calls meanwhile; at its
/// end the I/O layer learns of it and applies it first (the host calls again from then on).
fn away(g: &mut Game, ms: u64) -> Outcome {
    let from = g.now;
    g.now += ms;
    g.last_heartbeat = g.now;
    g.ok(Event::Outage {
        from_ms: from,
        to_ms: g.now,
    })
}

#[test]
fn the_turn_clock_resumes_with_the_time_it_had_left() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10, "maxTurnTimeouts": 1})));
    g.turn_to(&a);
    g.advance(4_000);
    let old = g.s.timers["clock"].clone();
    assert_eq!(old.at_ms, T0 + 10_000);
    // Away for 15 s, longer than the 6 s the turn had left.
    let out = away(&mut g, 15_000);
    assert_eq!(g.s.status, Status::Active);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    assert_eq!(g.s.deadline_ms(), Some(T0 + 25_000), "6 s left, from now");
    assert!(out.changed, "the deadline moved later: agents see it");
    assert!(out
        .effects
        .contains(&Effect::Cancel(old.deadline(g.s.session_id()))));
    assert_eq!(g.s.timers["clock"].at_ms, T0 + 25_000);
    // The old deadline, popped late from the delayed set, changes nothing.
    let late = g.ok(Event::TimerFired {
        kind: TimerKind::Clock,
        generation: old.generation,
    });
    assert!(!late.stored);
    // The move the agent could not send while the server was away is accepted now.
    let id = g.act(&a);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Pending);
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
}

#[test]
fn without_the_outage_the_late_deadline_would_have_ended_the_game() {
    // What the outage prevents: the same late firing, not told of the outage, forfeits.
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 10, "maxTurnTimeouts": 1})));
    g.turn_to(&a);
    g.advance(4_000);
    let old = g.s.timers["clock"].clone();
    g.now += 15_000;
    g.ok(Event::TimerFired {
        kind: TimerKind::Clock,
        generation: old.generation,
    });
    assert_eq!(g.s.status, Status::Finished);
    assert_eq!(g.s.result.as_ref().unwrap()["winner"], json!(b));
}

#[test]
fn a_deadline_that_fell_before_the_outage_still_strikes_at_its_instant() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10, "maxTurnTimeouts": 3})));
    g.turn_to(&a);
    // Its timer was merely late: the deadline at +10 s passed while the server still served;
    // the server went away at +12 s for 18 s.
    g.now = T0 + 12_000;
    away(&mut g, 18_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    let timeouts = g.s.events_since(0, &a).events;
    let strike = timeouts.iter().find(|e| e["type"] == "timeout").unwrap();
    assert_eq!(
        strike["at"], "2026-10-07T19:00:10.000Z",
        "at its own instant"
    );
    // One more full turn from +10 s: 8 s of it were left when the server went away.
    assert_eq!(g.s.deadline_ms(), Some(T0 + 38_000));
}

#[test]
fn an_outage_longer_than_the_host_windows_neither_pauses_nor_ends_the_game() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    g.heartbeat = false;
    // The host last called at T0; the server is away from +5 s to +125 s.
    g.advance(5_000);
    away(&mut g, 120_000);
    assert_eq!(g.s.status, Status::Active);
    assert!(g.s.host.alive);
    assert_eq!(g.s.deadline_ms(), Some(T0 + 180_000));
    // The host's windows resume too: 20 s after its last call, the 5 s before the outage
    // included, it is no longer alive (the clock pauses) ...
    g.advance(14_999);
    assert!(g.s.host.alive);
    g.advance(1);
    assert!(!g.s.host.alive);
    assert_eq!(g.s.deadline_ms(), None);
    // ... and 90 s after it, gone.
    g.advance(69_999);
    assert_eq!(g.s.status, Status::Active);
    g.advance(1);
    assert_eq!(g.s.status, Status::Finished);
    assert_eq!(g.s.end_reason.as_deref(), Some("host_disconnected"));
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
}

#[test]
fn a_paused_clock_keeps_its_time_across_an_outage() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    g.heartbeat = false;
    // The host lapsed at +20 s with 40 s left on the clock; the server is away +30 s to +60 s.
    g.advance(30_000);
    assert_eq!(g.s.deadline_ms(), None);
    away(&mut g, 30_000);
    assert_eq!(g.s.deadline_ms(), None);
    g.poll();
    assert_eq!(g.s.deadline_ms(), Some(T0 + 100_000), "40 s left, from now");
}

#[test]
fn an_unconfirmed_wait_resumes_after_an_outage() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    let id = g.act(&a);
    g.poll();
    // Delivered at T0: unconfirmed at +15 s, but the game could not answer from +5 s to +25 s.
    g.advance(5_000);
    away(&mut g, 20_000);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Pending);
    g.advance(9_999);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Pending);
    g.advance(1);
    assert_eq!(g.s.action_outcome(&a, &id).0, ActionStatus::Unconfirmed);
}

#[test]
fn a_rematch_reservation_resumes_after_an_outage() {
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = g.next_round();
    // Reserved for 60 s; the players could not show up from +30 s to +80 s.
    n.advance(30_000);
    away(&mut n, 50_000);
    assert!(n.s.is_reserved());
    assert_eq!(n.s.players.len(), 2);
    n.advance(29_999);
    assert!(n.s.is_reserved());
    n.advance(1);
    assert!(
        !n.s.is_reserved(),
        "expired 60 s after it began, the outage left out"
    );
}

#[test]
fn an_outage_counts_once_and_only_after_the_sessions_latest_instant() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    g.heartbeat = false;
    // A write computed at +6 s (sent in the first moments of a stall that began at +2 s, and
    // run when Redis came back) already holds the session's time up to +6 s.
    g.now = T0 + 6_000;
    g.ok(Event::HostSeen);
    g.now = T0 + 20_000;
    let outage = Event::Outage {
        from_ms: T0 + 2_000,
        to_ms: T0 + 20_000,
    };
    g.ok(outage.clone());
    assert_eq!(
        g.s.deadline_ms(),
        Some(T0 + 24_000),
        "only the 14 s after +6 s"
    );
    // Again (another process, a retry): nothing moves, nothing is written.
    let again = g.ok(outage.clone());
    assert!(!again.stored && !again.changed);
    assert_eq!(g.s.deadline_ms(), Some(T0 + 24_000));
    // An outage that ends later than the instant it is applied at counts up to that instant
    // only; the rest when it is applied again later.
    g.now = T0 + 21_000;
    g.ok(Event::Outage {
        from_ms: T0 + 20_500,
        to_ms: T0 + 23_000,
    });
    assert_eq!(g.s.deadline_ms(), Some(T0 + 24_500));
    g.now = T0 + 23_000;
    g.ok(Event::Outage {
        from_ms: T0 + 20_500,
        to_ms: T0 + 23_000,
    });
    assert_eq!(g.s.deadline_ms(), Some(T0 + 26_500));
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
}

#[test]
fn a_finished_game_is_not_touched_by_an_outage() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let out = away(&mut g, 30_000);
    assert!(!out.stored);
}
