//! RCADIA as a client nobody here wrote sees it: answers about an action after the player
//! moved past it, and resends without a key in multi-step turns. Each test is a reading of
//! the contract a foreign client relies on (the first one a rule the server broke).

use std::time::{Duration, Instant};

use horst_rcadia::store::Step;
use horst_sessions::{Event, Op};
use serde_json::{json, Value};

use crate::harness::TestApp;
use crate::rcadia_common::*;

/// Polls the host queue until `player`'s action arrives (it is then delivered); returns the
/// entry and the last seq seen.
async fn delivered(host: &Client, id: &str, player: &str, mut after: u64) -> (Value, u64) {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        let p = host.pending(id, after, 2.0).await;
        after = max_seq(&p, after);
        if let Some(e) = entries(&p)
            .into_iter()
            .find(|e| e["type"] == "action" && e["playerId"] == player)
        {
            return (e, after);
        }
    }
    panic!("no action of {player} reached the host of {id}");
}

/// In one write, as one apply: the host's `ops`, then `player`'s next action (keyless, no
/// turn). A long-poll on the session sees the result only, never the state between them.
async fn ops_then_next_action(app: &TestApp, id: &str, ops: Value, player: &str, action_id: &str) {
    let ops = Op::parse_batch(&json!({ "ops": ops })).expect("ops");
    app.rcadia
        .apply(id, |_| {
            Ok(Step {
                pre: vec![Event::PublishOps {
                    ops: ops.clone(),
                    batch_id: None,
                }],
                main: Some(Event::Action {
                    player_id: player.to_string(),
                    action: json!("step"),
                    turn: None,
                    action_id: action_id.to_string(),
                    idempotency_key: None,
                }),
            })
        })
        .await
        .expect("the ops and the next action");
}

/// `POST /action?wait=N` answers the action's outcome also when the player acted again
/// before the wait read the record (another connection of the agent, a client whose own
/// timeout is shorter than `wait`, a wake-up that brought only the latest write). The
/// record keeps the latest action only, so the wait never saw this one resolved: it held
/// for the whole `wait` and answered `outcome: "pending"` for an action the game had
/// applied (or rejected), which the contract keeps for "N ran out" and an agent reads as
/// "still with the game". Now the answer comes at once, from the event log.
#[tokio::test]
async fn an_action_wait_answers_the_outcome_after_the_player_moved_on() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    let me = &pids[0];
    host.give_turn(&id, me, json!(["step"])).await;

    // Applied: the game gives the same player a second step (a multi-step turn), and the
    // player's next step is accepted in the same write.
    let (agent, path) = (agents[0].clone(), format!("{AGENT}/{id}/action?wait=10"));
    let waiting = tokio::spawn(async move { agent.post(&path, json!({ "action": "step" })).await });
    let (entry, after) = delivered(&host, &id, me, after).await;
    let step = json!([{ "op": "legal_actions", "playerId": me, "actions": ["step"] }]);
    ops_then_next_action(&app, &id, step, me, "a_00000000000000f1").await;
    let t0 = Instant::now();
    let (st, v) = waiting.await.expect("the waiting request");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["actionId"], entry["actionId"], "{v}");
    assert_eq!(v["outcome"], "applied", "{v}");
    assert!(v.get("reason").is_none(), "{v}");
    assert_eq!(
        v["snapshot"]["lastAction"]["actionId"], "a_00000000000000f1",
        "{v}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "answered after {:?}: held for the whole wait",
        t0.elapsed()
    );

    // Rejected: the game rejects the next action with a reason, and the player's next one
    // is accepted in the same write; the answer carries the reason.
    let (_, after) = delivered(&host, &id, me, after).await;
    host.ops(&id, json!([{ "op": "reject", "playerId": me, "reason": "again", "actionId": "a_00000000000000f1" }]))
        .await;
    let (agent, path) = (agents[0].clone(), format!("{AGENT}/{id}/action?wait=10"));
    let waiting = tokio::spawn(async move { agent.post(&path, json!({ "action": "step" })).await });
    let (entry, _) = delivered(&host, &id, me, after).await;
    let reject = json!([{ "op": "reject", "playerId": me, "reason": {"why": "not now"}, "actionId": entry["actionId"] }]);
    ops_then_next_action(&app, &id, reject, me, "a_00000000000000f2").await;
    let (st, v) = waiting.await.expect("the waiting request");
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (&v["actionId"], &v["outcome"], &v["reason"]),
        (
            &entry["actionId"],
            &json!("rejected"),
            &json!({"why": "not now"})
        ),
        "{v}"
    );
}

/// A resend without an `idempotencyKey` in a multi-step turn (the game applied the step and
/// gives the same player another one). With the `turn` it was sent with, it is refused as
/// the contract says (`409 stale_turn`: applying the step moved `turn`), and the refusal
/// names the applied step. Without `turn` nothing the contract lists applies (it is your
/// turn, nothing is pending, no stale turn was sent), and a game may well offer the same
/// step twice (draw, draw): it is a new step and reaches the game. docs/agents-play.md says
/// so and points to `turn` or a key.
#[tokio::test]
async fn a_keyless_resend_in_a_multi_step_turn_is_refused_with_its_turn_and_taken_without() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    let me = &pids[0];
    host.give_turn(&id, me, json!(["draw"])).await;
    let turn = agents[0].state(&id, 0.0).await["turn"]
        .as_u64()
        .expect("turn");
    let (st, first) = agents[0].act(&id, json!("draw"), turn).await;
    assert_eq!(st, 200, "{first}");
    let (_, after) = delivered(&host, &id, me, after).await;
    host.give_turn(&id, me, json!(["draw"])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        (s["yourTurn"].as_bool(), s["turn"].as_u64()),
        (Some(true), Some(turn + 1)),
        "{s}"
    );

    let (st, v) = agents[0].act(&id, json!("draw"), turn).await;
    assert_eq!((st, v["code"].as_str()), (409, Some("stale_turn")), "{v}");
    let said = v["error"].as_str().unwrap_or_default();
    let first_id = first["actionId"].as_str().expect("actionId");
    assert!(
        said.contains(first_id) && said.contains("was applied"),
        "{v}"
    );
    let p = host.pending(&id, after, 0.0).await;
    assert!(
        entries(&p).is_empty(),
        "the refused resend reached the game: {p}"
    );

    let (st, v) = agents[0]
        .post(&format!("{AGENT}/{id}/action"), json!({ "action": "draw" }))
        .await;
    assert_eq!(st, 200, "{v}");
    assert_ne!(v["actionId"], first["actionId"], "{v}");
    assert_eq!(v["turn"].as_u64(), Some(turn + 1), "{v}");
    let (e, _) = delivered(&host, &id, me, after).await;
    assert_eq!(e["actionId"], v["actionId"], "{e}");
}

/// A second `POST /leave` of a game the player already left (forfeited it while it ran, or
/// opted out of the rematch once it was over) is a repeat, answered `alreadyLeft: true` as
/// docs/agents-play.md promises for every repeated leave. The player is still listed there
/// (a finished game keeps its seats for the result), so only a waiting table's repeat was
/// told; these answered as a fresh leave, and a client that retried after a lost answer
/// could not tell that its first leave had gone through.
#[tokio::test]
async fn a_repeated_leave_of_a_game_left_or_opted_out_of_is_already_left() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({}))).await;
    let leave = format!("{AGENT}/{id}/leave");
    let (st, v) = agents[0].post(&leave, json!({})).await;
    assert_eq!((st, v.get("alreadyLeft")), (200, None), "{v}");
    assert_eq!(v["result"]["reason"], "left", "{v}");
    let (st, v) = agents[0].post(&leave, json!({})).await;
    assert_eq!((st, &v["alreadyLeft"]), (200, &json!(true)), "{v}");
    assert!(v["result"]["forfeitedBy"].is_string(), "{v}");
    // The winner opts out of the (manual) rematch of the finished game, twice.
    let (st, v) = agents[1].post(&leave, json!({})).await;
    assert_eq!((st, v.get("alreadyLeft")), (200, None), "{v}");
    let (st, v) = agents[1].post(&leave, json!({})).await;
    assert_eq!((st, &v["alreadyLeft"]), (200, &json!(true)), "{v}");
}

/// The one answer `POST /action?wait` has when the event log no longer holds the outcome of
/// an action the player moved past (more than the session's 500 kept events since, in
/// one write here): `409 outcome_unknown` saying where to go on from, never `pending`.
#[tokio::test]
async fn an_outcome_the_event_log_dropped_is_outcome_unknown() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    let (me, other) = (&pids[0], &pids[1]);
    host.give_turn(&id, me, json!(["step"])).await;
    let (agent, path) = (agents[0].clone(), format!("{AGENT}/{id}/action?wait=10"));
    let waiting = tokio::spawn(async move { agent.post(&path, json!({ "action": "step" })).await });
    delivered(&host, &id, me, after).await;
    // The game moves the turn back and forth 300 times (a turn event each), ending on this
    // player, whose next action is accepted in the same write.
    let publish = |pid: &str| Event::PublishOps {
        ops: Op::parse_batch(
            &json!({ "ops": [{ "op": "legal_actions", "playerId": pid, "actions": ["step"] }] }),
        )
        .expect("ops"),
        batch_id: None,
    };
    let mut pre = Vec::new();
    for _ in 0..300 {
        pre.push(publish(other));
        pre.push(publish(me));
    }
    app.rcadia
        .apply(&id, |_| {
            Ok(Step {
                pre: pre.clone(),
                main: Some(Event::Action {
                    player_id: me.to_string(),
                    action: json!("step"),
                    turn: None,
                    action_id: "a_00000000000000f3".into(),
                    idempotency_key: None,
                }),
            })
        })
        .await
        .expect("600 publishes and the next action");
    let (st, v) = waiting.await.expect("the waiting request");
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("outcome_unknown")),
        "{v}"
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("GET /state"),
        "{v}"
    );
}

/// A started two-player game (`extra` over [`two_player`]'s config) on an app `adjust`ed,
/// its first player given the turn with `actions`: the app, host, agents, session id, player
/// ids and the host's `after`.
async fn first_on_turn(
    adjust: impl FnOnce(&mut horst_config::Config),
    extra: Value,
    actions: Value,
) -> (TestApp, Client, Vec<Client>, String, Vec<String>, u64) {
    let app = app_with(adjust).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(extra)).await;
    host.give_turn(&id, &pids[0], actions).await;
    (app, host, agents, id, pids, after)
}

/// `agent`'s `POST /action` of `action` with `key`, for the turn its snapshot shows: the
/// body sent and the (accepted) answer.
async fn act_keyed(agent: &Client, id: &str, action: Value, key: &str) -> (Value, Value) {
    let s = agent.state(id, 0.0).await;
    let body = json!({ "action": action, "turn": s["turn"], "idempotencyKey": key });
    let (st, v) = agent
        .post(&format!("{AGENT}/{id}/action"), body.clone())
        .await;
    assert_eq!(st, 200, "{v}");
    (body, v)
}

/// Polls `agent`'s snapshot (no wait) until `strikes` reaches `n`, at most 20 s; returns it.
async fn struck(agent: &Client, id: &str, n: u64) -> Value {
    let t0 = Instant::now();
    let mut s = agent.state(id, 0.0).await;
    while s["strikes"].as_u64() < Some(n) && t0.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        s = agent.state(id, 0.0).await;
    }
    assert_eq!(s["strikes"].as_u64(), Some(n), "{s}");
    s
}

/// A move the game was slow to answer (`unconfirmed` after `sessions.unconfirmed_seconds`)
/// and then moved on from (the next player's turn published) was applied, late, as the
/// contract's "applied when the host publishes the next turn" says: `lastAction` says so,
/// and the warning strike its player had before the move is cleared. It stayed
/// `unconfirmed`, and an agent that trusted it took its move for lost; the strike stayed,
/// one timeout from a forfeit.
#[tokio::test]
async fn an_unconfirmed_move_the_game_moves_on_from_is_applied() {
    // A 5 s turn: the move is unconfirmed (1 s after delivery) well before the next
    // deadline, and the game moves on before it (generous margins: CI shares two cores).
    let (_app, host, agents, id, pids, after) = first_on_turn(
        |c| c.sessions.unconfirmed_seconds = 1,
        json!({ "turnTimeout": 5, "maxTurnTimeouts": 6 }),
        json!(["x"]),
    )
    .await;
    let s = struck(&agents[0], &id, 1).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    let (_, v) = act_keyed(&agents[0], &id, json!("x"), "k-1").await;
    // Delivered, then silence: unconfirmed a second later.
    delivered(&host, &id, &pids[0], after).await;
    let s = agents[0].state(&id, 5.0).await;
    assert_eq!(s["lastAction"]["status"], "unconfirmed", "{s}");
    host.give_turn(&id, &pids[1], json!(["y"])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        (&s["lastAction"]["actionId"], &s["lastAction"]["status"]),
        (&v["actionId"], &json!("applied")),
        "{s}"
    );
    assert_eq!(s["strikes"], 0, "{s}");
}

/// The other order: the move is unconfirmed, its player is back on turn and runs out of
/// time, and the game passes the struck player's turn (what games do with `AGENT_TIMEOUT`).
/// The game moved on because of the timeout: the move stays `unconfirmed` and the strike
/// stays, so an unresponsive game's player still reaches the forfeit.
#[tokio::test]
async fn an_unconfirmed_move_of_a_player_struck_since_stays_unconfirmed() {
    let (_app, host, agents, id, pids, after) = first_on_turn(
        |c| c.sessions.unconfirmed_seconds = 1,
        json!({ "turnTimeout": 3, "maxTurnTimeouts": 6 }),
        json!(["x"]),
    )
    .await;
    let (_, v) = act_keyed(&agents[0], &id, json!("x"), "k-1").await;
    let (_, after) = delivered(&host, &id, &pids[0], after).await;
    // Unconfirmed a second on; the 3 s deadline strikes then (or at once, if the machine
    // was slower than the turn).
    let s = struck(&agents[0], &id, 1).await;
    assert_eq!(s["lastAction"]["status"], "unconfirmed", "{s}");
    let p = host.pending(&id, after, 5.0).await;
    assert!(
        entries(&p).iter().any(|e| e["type"] == "timeout"),
        "the game hears of the timeout: {p}"
    );
    // The game passes the struck player's turn.
    host.give_turn(&id, &pids[1], json!(["y"])).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        (&s["lastAction"]["actionId"], &s["lastAction"]["status"]),
        (&v["actionId"], &json!("unconfirmed")),
        "{s}"
    );
    assert!(s["strikes"].as_u64() >= Some(1), "the strike stays: {s}");
}

/// An HTTP retry layer that holds a request back and sends it again after the agent's next
/// move (its first answer was lost, the agent went on from `GET /state`): with the same
/// `idempotencyKey` it is answered as the first time, the same `actionId` and `turn`, with
/// the outcome the game gave it. It was refused `409 stale_turn`, which reads as "that move
/// came too late" for a move the game had taken.
#[tokio::test]
async fn a_keyed_retry_after_the_next_move_is_answered_as_the_first_time() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    let path = format!("{AGENT}/{id}/action");
    let mut firsts = Vec::new();
    for key in ["k-first", "k-second"] {
        host.give_turn(&id, &pids[0], json!(["x", "y"])).await;
        let (body, v) = act_keyed(&agents[0], &id, json!("x"), key).await;
        after = delivered(&host, &id, &pids[0], after).await.1;
        host.give_turn(&id, &pids[1], json!(["z"])).await;
        firsts.push((body, v));
    }
    let queued_before = entries(&host.pending(&id, after, 0.0).await).len();
    let (body, first) = &firsts[0];
    for wait in ["", "?wait=1"] {
        let (st, v) = agents[0].post(&format!("{path}{wait}"), body.clone()).await;
        assert_eq!(st, 200, "{v}");
        assert_eq!(
            (&v["accepted"], &v["actionId"], &v["turn"], &v["outcome"]),
            (
                &json!(true),
                &first["actionId"],
                &first["turn"],
                &json!("applied")
            ),
            "{v}"
        );
    }
    // Another move under that key is told so.
    let mut other = body.clone();
    other["action"] = json!("y");
    let (st, v) = agents[0].post(&path, other).await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("idempotency_key_reused")),
        "{v}"
    );
    assert_eq!(
        entries(&host.pending(&id, after, 0.0).await).len(),
        queued_before,
        "nothing reached the game again"
    );
}

/// Two connections of one agent send the same keyed move at once (a client that races its
/// own retry against a slow first attempt): both are answered with the one action, and the
/// game gets it once; two host polls open at once both see it, and it is delivered once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_keyed_move_sent_twice_at_once_is_one_move() {
    let (_app, host, agents, id, _pids, after) =
        first_on_turn(|_| {}, json!({}), json!(["x"])).await;
    let s = agents[0].state(&id, 0.0).await;
    let body = json!({ "action": "x", "turn": s["turn"], "idempotencyKey": "k-race" });
    let polls: Vec<_> = (0..2)
        .map(|_| {
            let (h, id) = (host.clone(), id.clone());
            tokio::spawn(async move { h.pending(&id, after, 10.0).await })
        })
        .collect();
    let sends: Vec<_> = (0..2)
        .map(|_| {
            let (a, path, body) = (
                agents[0].clone(),
                format!("{AGENT}/{id}/action"),
                body.clone(),
            );
            tokio::spawn(async move { a.post(&path, body).await })
        })
        .collect();
    let mut ids = Vec::new();
    for s in sends {
        let (st, v) = s.await.expect("a send");
        assert_eq!(st, 200, "{v}");
        ids.push(v["actionId"].clone());
    }
    assert_eq!(ids[0], ids[1], "one action for one key");
    for p in polls {
        let p = p.await.expect("a poll");
        let got: Vec<Value> = entries(&p)
            .into_iter()
            .filter(|e| e["type"] == "action")
            .collect();
        assert_eq!(got.len(), 1, "{p}");
        assert_eq!(got[0]["actionId"], ids[0], "{p}");
    }
    let p = host.pending(&id, after, 0.0).await;
    let actions = entries(&p)
        .into_iter()
        .filter(|e| e["type"] == "action")
        .count();
    assert_eq!(actions, 1, "queued once: {p}");
}

/// An agent that leaves a waiting table and joins it again (a client restarted between the
/// two) is seated again, and its repeated leave before that is done already, not an error;
/// the table starts with it when full.
#[tokio::test]
async fn a_leave_and_a_rejoin_of_a_waiting_table_seat_the_agent_again() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host.create(two_player(json!({}))).await;
    let first = agents[0].join(&id).await;
    let leave = format!("{AGENT}/{id}/leave");
    for already in [false, true] {
        let (st, v) = agents[0].post(&leave, json!({})).await;
        assert_eq!(st, 200, "{v}");
        assert_eq!(v["alreadyLeft"].as_bool().unwrap_or(false), already, "{v}");
    }
    let again = agents[0].join(&id).await;
    assert_eq!(again["seat"], 0, "{again}");
    assert_eq!(again["status"], "waiting", "{again}");
    assert!(again["playerId"].is_string(), "{again} after {first}");
    agents[1].join(&id).await;
    let t0 = Instant::now();
    let mut s = agents[0].state(&id, 5.0).await;
    while s["status"] != "active" && t0.elapsed() < Duration::from_secs(20) {
        s = agents[0].state(&id, 5.0).await;
    }
    assert_eq!(s["status"], "active", "{s}");
    let players = s["players"].as_array().expect("players");
    assert_eq!(players.len(), 2, "{s}");
}

/// A host written from the contract by hand misspells a field (`actionID`): the reject is
/// refused naming the field and the spelling it meant, nothing of the batch applies, and the
/// move stays pending. It was taken without the id, as a v1 reject of whatever the player
/// had pending, and the batch's other ops applied with it.
#[tokio::test]
async fn a_misspelled_op_field_is_named_and_nothing_applies() {
    let (_app, host, agents, id, pids, after) =
        first_on_turn(|_| {}, json!({}), json!(["x"])).await;
    let (_, v) = act_keyed(&agents[0], &id, json!("x"), "k-1").await;
    delivered(&host, &id, &pids[0], after).await;
    let ops = json!({ "ops": [
        { "op": "state", "state": { "n": 1 } },
        { "op": "reject", "playerId": pids[0], "reason": "no", "actionID": v["actionId"] },
    ] });
    let (st, e) = host.post(&format!("{BRIDGE}/{id}/ops"), ops).await;
    assert_eq!((st, e["code"].as_str()), (400, Some("bad_request")), "{e}");
    let msg = e["error"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("ops[1]:") && msg.contains("\"actionID\"") && msg.contains("\"actionId\""),
        "{e}"
    );
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "pending", "{s}");
    assert_ne!(s["state"], json!({ "n": 1 }), "{s}");
}

/// A keyed move whose answer was lost, retried after the game ended (the move ended it):
/// the same answer as the first time, `applied`, not `409 finished`, which reads as "your
/// move came too late".
#[tokio::test]
async fn a_keyed_retry_after_the_end_is_answered_as_the_first_time() {
    let (_app, host, agents, id, pids, after) =
        first_on_turn(|_| {}, json!({}), json!(["mate"])).await;
    let (body, first) = act_keyed(&agents[0], &id, json!("mate"), "k-mate").await;
    let path = format!("{AGENT}/{id}/action");
    delivered(&host, &id, &pids[0], after).await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[0] } }]),
    )
    .await;
    let (st, v) = agents[0].post(&path, body).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (&v["actionId"], &v["turn"], &v["outcome"]),
        (&first["actionId"], &first["turn"], &json!("applied")),
        "{v}"
    );
}

/// A `reject` naming an `actionId` the session does not know as the player's (not their
/// pending action, not their latest) is a late answer about no move of this turn: taken
/// (the SDK v2 itself names the previous round's last action when a game rejects before
/// that player's first action of a round, so a refusal would cost a well-behaved host its
/// batch) and it changes nothing. It was listed in `rejections`, "rejections addressed to
/// you during the current turn", beside the pending move the game had not answered.
#[tokio::test]
async fn a_reject_of_an_unknown_action_id_changes_nothing() {
    let (_app, host, agents, id, pids, after) =
        first_on_turn(|_| {}, json!({}), json!(["x"])).await;
    let (_, v) = act_keyed(&agents[0], &id, json!("x"), "k-1").await;
    delivered(&host, &id, &pids[0], after).await;
    let r = host
        .ops(&id, json!([{ "op": "reject", "playerId": pids[0], "reason": "no", "actionId": "a_00000000deadbeef" }]))
        .await;
    assert_eq!(r["status"], "active", "{r}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        (&s["lastAction"]["actionId"], &s["lastAction"]["status"]),
        (&v["actionId"], &json!("pending")),
        "{s}"
    );
    assert_eq!(s["rejections"], json!([]), "{s}");
}

/// An `end` whose `winner` is no player of the session (a colour, a seat index, another
/// table's id) still ends the game with the result as sent: "`result.winner` should be a
/// `playerId` or `null`" (section 2) is asked of games, and refusing the end would leave a
/// game that is over active on the platform, its clocks running. Ratings skip such a game
/// (rating.rs). v1 games the same.
#[tokio::test]
async fn an_end_whose_winner_is_no_player_still_ends_the_game() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    for winner in [json!("p_0badc0de"), json!(0), json!("white")] {
        let (id, _, _) = started(&host, &agents, two_player(json!({}))).await;
        let r = host
            .ops(
                &id,
                json!([
                    { "op": "state", "state": { "n": 1 } },
                    { "op": "end", "result": { "winner": winner } },
                ]),
            )
            .await;
        assert_eq!(r["status"], "finished", "{r}");
        let s = agents[0].state(&id, 0.0).await;
        assert_eq!(s["status"], "finished", "{s}");
        assert_eq!(s["result"]["winner"], winner, "{s}");
        assert_eq!(s["state"], json!({ "n": 1 }), "{s}");
    }
    let mut v1 = two_player(json!({}));
    v1.as_object_mut().expect("config").remove("sdkVersion");
    let (id, _, _) = started(&host, &agents, v1).await;
    let r = host
        .ops(
            &id,
            json!([{ "op": "end", "result": { "winner": "white" } }]),
        )
        .await;
    assert_eq!(r["status"], "finished", "{r}");
}

/// The platform ends a game (a player leaves) while the host's next batch is on its way:
/// that batch's `legal_actions` and `reject` are taken and change nothing, its `state`
/// applies (the final picture), and the answer's `status` says `finished`. The contract
/// lets hosts batch for ~10 ms with one request in flight, so a well-behaved host sends
/// such a batch; refusing it lost its final state (docs/hosts.md).
#[tokio::test]
async fn a_batch_in_flight_at_the_platforms_end_is_taken() {
    let (_app, host, agents, id, pids, after) =
        first_on_turn(|_| {}, json!({}), json!(["x"])).await;
    let (_, v) = act_keyed(&agents[0], &id, json!("x"), "k-1").await;
    delivered(&host, &id, &pids[0], after).await;
    let (st, _) = agents[1]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200);
    let r = host
        .ops(
            &id,
            json!([
                { "op": "reject", "playerId": pids[0], "reason": "no", "actionId": v["actionId"] },
                { "op": "legal_actions", "playerId": pids[1], "actions": ["y"] },
                { "op": "state", "state": { "final": true } },
            ]),
        )
        .await;
    assert_eq!(r["status"], "finished", "{r}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["state"], json!({ "final": true }), "{s}");
    assert_eq!(s["result"]["winner"], pids[0].as_str(), "{s}");
    assert_eq!(s["rejections"], json!([]), "{s}");
    assert_eq!(
        (&s["yourTurn"], &s["legalActions"]),
        (&json!(false), &Value::Null),
        "{s}"
    );
}

/// Two processes of one agent on one token (a restarted client beside its old one): a
/// second `join` is the same seat, both long-polls wake for the turn, and of two moves sent
/// at once one is accepted and the other answered `409 action_pending` with the snapshot;
/// the game gets one move.
#[tokio::test]
async fn two_processes_of_one_agent_share_one_seat_and_one_move() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    let again = agents[0].join(&id).await;
    assert_eq!(again["playerId"], pids[0].as_str(), "{again}");
    let polls: Vec<_> = (0..2)
        .map(|_| {
            let (a, id) = (agents[0].clone(), id.clone());
            tokio::spawn(async move { a.state(&id, 20.0).await })
        })
        .collect();
    host.give_turn(&id, &pids[0], json!(["x"])).await;
    let mut turns = Vec::new();
    for p in polls {
        let s = p.await.expect("a poll");
        assert_eq!(s["yourTurn"], true, "{s}");
        turns.push(s["turn"].as_u64().expect("turn"));
    }
    let sends: Vec<_> = [json!("x"), json!("x")]
        .into_iter()
        .map(|a| {
            let (c, id, turn) = (agents[0].clone(), id.clone(), turns[0]);
            tokio::spawn(async move { c.act(&id, a, turn).await })
        })
        .collect();
    let mut codes = Vec::new();
    for s in sends {
        let (st, v) = s.await.expect("a send");
        codes.push((st, v["code"].as_str().map(str::to_string)));
        if st == 409 {
            assert!(v["snapshot"].is_object(), "{v}");
        }
    }
    codes.sort();
    assert_eq!(
        codes,
        vec![(200, None), (409, Some("action_pending".to_string()))],
        "{codes:?}"
    );
    let p = host.pending(&id, after, 2.0).await;
    let moves = entries(&p).iter().filter(|e| e["type"] == "action").count();
    assert_eq!(moves, 1, "{p}");
}

/// Long-polls that straddle the end of a game and its rematch: an agent's `GET /state?wait`
/// and the host's `pending-actions?wait` open before the other player leaves wake with the
/// end (the host's with `session_end`); with `autoRematch` the agent's long-poll opened
/// before the game's own `end` wakes holding `nextSessionId`, and long-polls on that session
/// make both ready: the host gets `game_start` of round 2 with the same players in order.
#[tokio::test]
async fn long_polls_straddle_the_end_and_the_rematch() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    let (a, i) = (agents[0].clone(), id.clone());
    let agent_poll = tokio::spawn(async move { a.state(&i, 20.0).await });
    let (h, i) = (host.clone(), id.clone());
    let host_poll = tokio::spawn(async move { h.pending(&i, after, 20.0).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    agents[1]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    let s = agent_poll.await.expect("agent poll");
    assert_eq!(s["status"], "finished", "{s}");
    let p = host_poll.await.expect("host poll");
    assert!(
        entries(&p).iter().any(|e| e["event"] == "session_end"),
        "{p}"
    );

    let (id, pids2, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    assert_ne!(pids2, pids);
    let (a, i) = (agents[1].clone(), id.clone());
    let agent_poll = tokio::spawn(async move { a.state(&i, 20.0).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids2[0] } }]),
    )
    .await;
    let s = agent_poll.await.expect("agent poll");
    let next = s["nextSessionId"]
        .as_str()
        .expect("nextSessionId")
        .to_string();
    assert_eq!(s["status"], "finished", "{s}");
    let polls: Vec<_> = agents
        .iter()
        .map(|a| {
            let (a, n) = (a.clone(), next.clone());
            tokio::spawn(async move { a.state(&n, 3.0).await })
        })
        .collect();
    let t0 = Instant::now();
    let mut seen = 0;
    let mut start = Value::Null;
    while start.is_null() && t0.elapsed() < Duration::from_secs(20) {
        let p = host.pending(&next, seen, 5.0).await;
        seen = max_seq(&p, seen);
        if let Some(e) = entries(&p).into_iter().find(|e| e["event"] == "game_start") {
            start = e;
        }
    }
    assert_eq!(
        (&start["round"], &start["players"]),
        (&json!(2), &json!(pids2)),
        "{start}"
    );
    for p in polls {
        p.await.expect("a poll");
    }
}

/// A client that lost every answer and sent every call again, as a stranger's retry layer
/// does: the create (with its `idempotencyKey`), the joins, the host's batch (with its
/// `batchId`, resent after the agent's move reached the game), the keyed move, the end, the
/// rematch and the opt-out each act once, and each resend is answered as the first call.
#[tokio::test]
async fn every_step_sent_twice_acts_once() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let create =
        json!({ "config": two_player(json!({})), "gameId": "chess", "idempotencyKey": "t-1" });
    let (st1, c1) = host.post(BRIDGE, create.clone()).await;
    let (st2, c2) = host.post(BRIDGE, create).await;
    assert_eq!((st1, st2), (201, 201), "{c1} {c2}");
    assert_eq!(c1["sessionId"], c2["sessionId"], "{c2}");
    let id = c1["sessionId"].as_str().expect("sessionId").to_string();
    let mut pids = Vec::new();
    for a in &agents {
        let (x, y) = (a.join(&id).await, a.join(&id).await);
        assert_eq!(x["playerId"], y["playerId"], "{y}");
        pids.push(x["playerId"].as_str().expect("playerId").to_string());
    }
    let mut after = 0;
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        let p = host.pending(&id, after, 2.0).await;
        after = max_seq(&p, after);
        if entries(&p).iter().any(|e| e["event"] == "game_start") {
            break;
        }
    }
    let batch = json!({ "batchId": "b-1", "ops": [{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }] });
    let ops = format!("{BRIDGE}/{id}/ops");
    for _ in 0..2 {
        let (st, v) = host.post(&ops, batch.clone()).await;
        assert_eq!(st, 200, "{v}");
    }
    let (body, first) = act_keyed(&agents[0], &id, json!("x"), "k-1").await;
    let (st, again) = agents[0].post(&format!("{AGENT}/{id}/action"), body).await;
    assert_eq!(
        (st, &again["actionId"]),
        (200, &first["actionId"]),
        "{again}"
    );
    delivered(&host, &id, &pids[0], after).await;
    let (st, v) = host.post(&ops, batch).await;
    assert_eq!(st, 200, "{v}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(
        s["lastAction"]["status"], "pending",
        "the old batch was applied again: {s}"
    );
    let end =
        json!({ "batchId": "b-2", "ops": [{ "op": "end", "result": { "winner": pids[0] } }] });
    for _ in 0..2 {
        let (st, v) = host.post(&ops, end.clone()).await;
        assert_eq!((st, &v["status"]), (200, &json!("finished")), "{v}");
    }
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["lastAction"]["status"], "applied", "{s}");
    let rematch = format!("{BRIDGE}/{id}/rematch");
    let (st1, r1) = host.post(&rematch, json!({})).await;
    let (st2, r2) = host.post(&rematch, json!({})).await;
    assert_eq!((st1, st2), (200, 200), "{r1} {r2}");
    assert_eq!(
        (&r1["sessionId"], &r1["round"]),
        (&r2["sessionId"], &json!(2)),
        "{r2}"
    );
    let leave = format!("{AGENT}/{id}/leave");
    let (_, l1) = agents[1].post(&leave, json!({})).await;
    let (st, l2) = agents[1].post(&leave, json!({})).await;
    assert_eq!(
        (st, l1.get("alreadyLeft"), &l2["alreadyLeft"]),
        (200, None, &json!(true)),
        "{l1} {l2}"
    );
}
