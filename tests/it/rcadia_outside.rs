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
