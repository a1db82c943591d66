//! Section 3: host liveness and the pending-actions queue.
use super::*;
use crate::session::ActionStatus;
use crate::Status;

#[test]
fn clocks_pause_while_the_host_is_not_alive() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    g.heartbeat = false;
    // Last sign of life: T0. Alive until T0 + 20 s, then the clock pauses with 40 s left.
    g.advance(50_000);
    assert!(!g.s.host.alive);
    assert_eq!(g.snap(&a)["deadline"], Value::Null);
    assert_eq!(g.snap(&a)["yourTurn"], true);
    assert_eq!(
        g.snap(&g.s.players[1].player_id.clone())["waitingFor"],
        "host"
    );
    assert_eq!(g.s.player(&a).unwrap().strikes, 0);
    // The host comes back at T0 + 50 s: 40 s remain.
    g.poll();
    assert!(g.s.host.alive);
    assert_eq!(g.s.deadline_ms(), Some(T0 + 90_000));
    g.heartbeat = true;
    g.last_heartbeat = g.now;
    g.advance(40_000);
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
}

#[test]
fn an_open_poll_keeps_the_host_alive() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    g.heartbeat = false;
    let out = g.ok(Event::HostPoll {
        after: Some(g.acked),
        wait_ms: 25_000,
    });
    assert_eq!(
        out.reply,
        Reply::Entries {
            entries: vec![],
            poll_open: true
        }
    );
    assert!(!out.changed, "a host poll never wakes agents");
    g.advance(25_000);
    assert!(g.s.host.alive, "the poll is open");
    g.ok(Event::HostPollDone {
        after: Some(g.acked),
    });
    g.advance(19_999);
    assert!(g.s.host.alive);
    g.advance(1);
    assert!(!g.s.host.alive, "20 s after the poll finished");
    assert_eq!(g.s.deadline_ms(), None);
}

/// A poll that opens with nothing to answer need not be stored until half the host's
/// liveness window since its last stored sign of life is used; with entries to answer, a
/// host not alive or a game over, it is stored at once.
#[test]
fn a_poll_may_open_unstored_only_while_it_changes_nothing_needed() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    g.heartbeat = false;
    let seen = g.s.host.last_seen_ms;
    g.advance(3_000);
    assert_eq!(
        g.s.host_poll_quiet_until(Some(g.acked), g.now),
        Some(seen + 10_000)
    );
    // Without `after` (v1) a poll answers everything still queued, delivered or not.
    assert_eq!(g.s.host_poll_quiet_until(None, g.now), None);
    // Past half the window: stored when it opens.
    assert_eq!(
        g.s.host_poll_quiet_until(Some(g.acked), seen + 10_000),
        None
    );
    // An acknowledgement of less than was delivered leaves entries to answer.
    assert_eq!(g.s.host_poll_quiet_until(Some(g.acked - 1), g.now), None);
    // An entry queued (the action) is answered at once.
    g.act(&a);
    assert_eq!(g.s.host_poll_quiet_until(Some(g.acked), g.now), None);
    g.poll();
    assert_eq!(
        g.s.host_poll_quiet_until(Some(g.acked), g.now),
        Some(g.now + 10_000)
    );
    // A host that lapsed comes back with a stored poll (its clock resumes).
    g.advance(20_000);
    assert!(!g.s.host.alive);
    assert_eq!(g.s.host_poll_quiet_until(Some(g.acked), g.now), None);
    g.poll();
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    assert_eq!(g.s.host_poll_quiet_until(Some(g.acked), g.now), None);
}

/// The host's cycle with the poll's opening not stored (the action, then the poll answered
/// as one that does not wait) leaves the record exactly as the cycle with it stored (open,
/// the action, the poll done): the opening's acknowledgement and sign of life are taken
/// again when the poll ends, and its count of open polls is back to none.
#[test]
fn a_poll_that_opened_unstored_ends_with_the_record_of_one_that_opened_stored() {
    let (mut g, a, b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    let mut stored = Game::new(config(json!({})));
    stored.s = g.s.clone();
    stored.now = g.now;
    stored.acked = g.acked;
    stored.next_id = g.next_id;
    for (n, pid) in [&a, &b, &a].into_iter().enumerate() {
        let after = Some(g.acked);
        assert!(
            g.s.host_poll_quiet_until(after, g.now).is_some(),
            "cycle {n}"
        );
        let out = stored.ok(Event::HostPoll {
            after,
            wait_ms: 25_000,
        });
        assert!(matches!(
            out.reply,
            Reply::Entries {
                poll_open: true,
                ..
            }
        ));
        g.now += 400;
        stored.now += 400;
        let turn = g.s.turn;
        for x in [&mut g, &mut stored] {
            x.try_act(pid, Some(turn)).unwrap();
        }
        g.now += 5;
        stored.now += 5;
        let unstored = g.ok(Event::HostPoll { after, wait_ms: 0 });
        let done = stored.ok(Event::HostPollDone { after });
        assert_eq!(unstored.reply, done.reply, "cycle {n}");
        let next = if pid == &a { &b } else { &a };
        for x in [&mut g, &mut stored] {
            x.acked = match &unstored.reply {
                Reply::Entries { entries, .. } => entries.last().unwrap().seq,
                r => panic!("{r:?}"),
            };
            x.now += 5;
            x.turn_to(next);
        }
        let rev = g.s.rev;
        g.s.rev = stored.s.rev;
        assert_eq!(g.s, stored.s, "cycle {n}");
        g.s.rev = rev;
        let last = g.s.player(pid).unwrap().last_action.as_ref().unwrap();
        assert_eq!(last.status, ActionStatus::Applied, "cycle {n}");
    }
}

#[test]
fn an_abandoned_poll_stops_counting_when_its_client_left() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 60})));
    g.turn_to(&a);
    g.heartbeat = false;
    g.ok(Event::HostPoll {
        after: Some(g.acked),
        wait_ms: 25_000,
    });
    g.advance(1_000);
    let queued = g.s.host_queue.len();
    g.ok(Event::HostPollAbandoned);
    assert_eq!(g.s.host.open_polls, 0);
    assert_eq!(g.s.host_queue.len(), queued, "nothing taken from the queue");
    g.advance(19_999);
    assert!(g.s.host.alive);
    g.advance(1);
    assert!(
        !g.s.host.alive,
        "20 s after the client left, not after the poll's 25 s"
    );
    assert_eq!(g.s.deadline_ms(), None);
}

#[test]
fn a_poll_whose_process_died_stops_counting_at_its_announced_end() {
    let (mut g, _a, _b) = Game::started(config(json!({})));
    g.heartbeat = false;
    g.ok(Event::HostPoll {
        after: Some(g.acked),
        wait_ms: 25_000,
    });
    g.advance(45_000);
    assert!(!g.s.host.alive);
    assert_eq!(g.s.host.open_polls, 0);
}

#[test]
fn a_host_gone_for_90_s_ends_the_session_without_rematch() {
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": true})));
    g.turn_to(&a);
    g.heartbeat = false;
    g.advance(89_999);
    assert_eq!(g.s.status, Status::Active);
    g.advance(1);
    assert_eq!(g.s.status, Status::Finished);
    assert_eq!(
        g.s.result,
        Some(json!({"winner": null, "reason": "host_disconnected"}))
    );
    assert!(!g.effects().any(|e| *e == Effect::CreateRematch));
    let e = g.err(Event::Rematch);
    assert_eq!(e.code, "host_disconnected");
}

#[test]
fn a_waiting_table_also_ends_when_its_host_is_gone() {
    let mut g = Game::new(config(json!({})));
    g.join("a");
    g.heartbeat = false;
    g.advance(90_000);
    assert_eq!(g.s.status, Status::Finished);
    assert!(g.s.timers.is_empty(), "nothing left to time");
}

#[test]
fn entries_stay_until_acknowledged_and_a_poll_without_after_drains() {
    let (mut g, a, _b) = Game::started(config(json!({})));
    g.turn_to(&a);
    g.act(&a);
    // Not acknowledged: the same entries come back (a lost response is retried safely).
    let entries = g.poll_after(Some(0));
    assert_eq!(g.poll_after(Some(0)), entries);
    let seqs: Vec<u64> = entries.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, vec![1, 2]);
    // Acknowledge 1: only 2 remains.
    assert_eq!(g.poll_after(Some(1)).len(), 1);
    assert_eq!(g.s.host_queue.len(), 1);
    assert!(g.s.host_poll_ready(Some(1)));
    assert!(!g.s.host_poll_ready(Some(2)));
    // A v1 bridge (no after) drains what it gets.
    assert_eq!(g.poll_after(None).len(), 1);
    assert!(g.s.host_queue.is_empty());
    // Seqs keep counting.
    g.ops(json!([{"op": "reject", "playerId": a, "reason": "x"}]));
    g.act(&a);
    let entries = g.poll_after(None);
    assert_eq!(entries[0]["seq"], 3);
}

#[test]
fn the_bridge_responses() {
    let (mut g, a, b) = Game::started(config(json!({})));
    let out = g.turn_to(&a);
    assert!(out.changed);
    let v = wire(&g.s.ops_response());
    assert_eq!(
        v,
        json!({"ok": true, "status": "active", "version": g.s.version, "round": 1, "nextSessionId": null,
               "players": [{"playerId": a, "seat": 0, "asName": "ALICE", "ready": true},
                           {"playerId": b, "seat": 1, "asName": "BOB", "ready": true}]})
    );
    let v = wire(&g.s.pending_actions_response(vec![]));
    assert_eq!(v["actions"], json!([]));
    assert_eq!(v["result"], Value::Null);
    assert_eq!(v["status"], "active");
    let fresh = Game::new(config(json!({})));
    let v = wire(&fresh.s.created_response());
    assert_eq!(v["sessionId"], "ses_beef00000001");
    assert_eq!(v["seriesId"], "ses_beef00000001");
    assert_eq!(v["round"], 1);
    assert_eq!(v["players"], json!([]));
    assert_eq!(v["config"]["sdkVersion"], "2.0.0");
    assert_eq!(v["skillUrl"], "https://api.rcadia.xyz/games/chess/skill.md");
}

#[test]
fn a_reserved_rematch_ends_too_when_its_host_is_gone() {
    let (mut g, a, _b) = Game::started(config(json!({"autoRematch": true})));
    g.ops(json!([{"op": "end", "result": {"winner": a}}]));
    let mut n = g.next_round();
    n.heartbeat = false;
    n.advance(90_000);
    assert_eq!(n.s.status, Status::Finished);
    assert_eq!(n.s.end_reason.as_deref(), Some("host_disconnected"));
    assert_eq!(
        n.s.round, 1,
        "nobody showed up within 60 s: it had become a new series"
    );
}

#[test]
fn early_timers_count_at_their_own_instant_and_time_never_runs_backwards() {
    let (mut g, a, _b) = Game::started(config(json!({"turnTimeout": 10})));
    g.turn_to(&a);
    let d = g.s.timers["clock"].clone();
    // Another API process with a clock 200 ms behind pops the entry.
    g.now = d.at_ms - 200;
    g.ok(Event::TimerFired {
        kind: d.kind,
        generation: d.generation,
    });
    assert_eq!(g.s.player(&a).unwrap().strikes, 1);
    assert_eq!(g.s.now_ms, d.at_ms);
    g.now = d.at_ms - 500;
    g.ok(Event::Tick);
    assert_eq!(g.s.now_ms, d.at_ms);
}
