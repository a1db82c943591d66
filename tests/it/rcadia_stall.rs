//! Turn clocks across a stall of Redis (the testkit's redis-server frozen with SIGSTOP):
//! time in which nobody could reach Redis is charged to nobody. A move an agent could not
//! send while Redis was away (503) is accepted when resent right after, with the time its
//! turn had left; the clocks then run on as before, each deadline striking once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::eventually;
use crate::rcadia_common::*;
use crate::stall::{freeze, thaw};

/// What the host saw: each entry with when it arrived, and when it published b's turn.
#[derive(Default)]
struct HostLog {
    entries: Vec<(Value, Instant)>,
    b_on_turn: Option<Instant>,
}

/// The host as a game page is: it long-polls (a failed poll is retried after 200 ms, as the
/// bridge does while the API answers 503) and, when a's move arrives, applies it and gives
/// b the turn.
fn host_loop(
    host: Client,
    id: String,
    mut after: u64,
    b: String,
    log: Arc<Mutex<HostLog>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let url = format!(
                "{}{BRIDGE}/{id}/pending-actions?after={after}&wait=2",
                host.base
            );
            let answer = host
                .http
                .get(url)
                .bearer_auth(&host.token)
                .timeout(Duration::from_secs(30))
                .send()
                .await;
            let Ok(r) = answer else {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            };
            if r.status() != 200 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            let v: Value = r.json().await.unwrap_or(Value::Null);
            let mut move_came = false;
            for e in entries(&v) {
                after = after.max(e["seq"].as_u64().unwrap_or(0));
                move_came |= e["type"] == "action";
                log.lock().unwrap().entries.push((e, Instant::now()));
            }
            if move_came {
                let ops = json!([{ "op": "legal_actions", "playerId": b, "actions": ["y"] }]);
                loop {
                    let (st, _) = host
                        .post(&format!("{BRIDGE}/{id}/ops"), json!({ "ops": ops }))
                        .await;
                    if st == 200 {
                        log.lock().unwrap().b_on_turn = Some(Instant::now());
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            if v["status"] == "finished" {
                return;
            }
        }
    })
}

/// a has 5 s for its turn and one strike (the first loses). Redis freezes 1 s into the turn
/// for 15 s; a tries to move 5 s into the freeze (after its deadline would have passed) and
/// resends every 250 ms while it gets 503. Once Redis is back its move is accepted, the game
/// gets it, and b is on turn with a whole turn; b does not move and loses on time 5 s after
/// its turn began. Before, the clock ran through the freeze: a was struck out and lost on
/// time the moment Redis came back, and its resent move was refused `finished`.
/// (Run beside the job stalls: `stall::redis_frozen_for_6_to_15_s_under_jobs_and_turns`.)
pub(crate) async fn a_move_refused_while_redis_was_frozen_is_accepted_when_resent_and_nobody_loses_on_time(
) {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 5, "maxTurnTimeouts": 1 })),
    )
    .await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let on_turn = Instant::now();
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    let turn = s["turn"].as_u64().unwrap();
    let log = Arc::new(Mutex::new(HostLog::default()));
    let hosting = host_loop(
        host.clone(),
        id.clone(),
        after,
        pids[1].clone(),
        log.clone(),
    );

    tokio::time::sleep_until((on_turn + Duration::from_secs(1)).into()).await;
    let pid = freeze(&app);
    let frozen = Instant::now();
    tokio::time::sleep_until((frozen + Duration::from_secs(5)).into()).await;
    let mover = {
        let (a, id) = (agents[0].clone(), id.clone());
        tokio::spawn(async move {
            let mut tries: Vec<(u16, Value, Duration)> = Vec::new();
            loop {
                let (st, v) = a.act(&id, json!("x"), turn).await;
                tries.push((st, v, frozen.elapsed()));
                if st != 503 || tries.len() > 200 {
                    return tries;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };
    tokio::time::sleep_until((frozen + Duration::from_secs(15)).into()).await;
    thaw(pid);
    let tries = mover.await.unwrap();
    let told: Vec<String> = tries
        .iter()
        .map(|(st, v, at)| {
            format!(
                "{st} {} at {:.1} s",
                v["code"].as_str().unwrap_or(""),
                at.as_secs_f64()
            )
        })
        .collect();
    eprintln!("figure: 15 s freeze, a's move sent 5 s into it and resent: {told:?}");
    let (status, answer, _) = tries.last().unwrap();
    assert_eq!(
        *status, 200,
        "the resent move after the freeze: {answer} ({told:?})"
    );
    assert_eq!(answer["accepted"], true, "{answer}");
    for (st, v, _) in &tries[..tries.len() - 1] {
        assert_eq!(*st, 503, "refused while Redis was away: {v}");
        assert_eq!(v["code"], "unavailable", "{v}");
    }
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "active", "{s}");
    assert_eq!(s["strikes"], 0, "struck for time nobody could act in: {s}");

    // The game gets a's move and gives b the turn; b does not move and loses on time a whole
    // turn after its turn began, not sooner.
    let done = eventually(Duration::from_secs(40), async || {
        agents[1].state(&id, 1.0).await["status"] == "finished"
    })
    .await;
    let s = agents[1].state(&id, 0.0).await;
    assert!(done, "the game never ended: {s}");
    // The agents may read the end before the host's next poll has delivered the strike that
    // made it: the host is stopped only once it has (or after a generous wait, when the
    // assertion below says what it got).
    eventually(Duration::from_secs(20), async || {
        log.lock()
            .unwrap()
            .entries
            .iter()
            .any(|(e, _)| e["type"] == "timeout")
    })
    .await;
    hosting.abort();
    let log = log.lock().unwrap();
    let b_on_turn = log.b_on_turn.expect("the host gave b the turn");
    let moves: Vec<&Value> = log
        .entries
        .iter()
        .map(|(e, _)| e)
        .filter(|e| e["type"] == "action")
        .collect();
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert_eq!(moves[0]["playerId"], pids[0].as_str());
    let timeouts: Vec<&(Value, Instant)> = log
        .entries
        .iter()
        .filter(|(e, _)| e["type"] == "timeout")
        .collect();
    assert_eq!(timeouts.len(), 1, "one strike, once: {timeouts:?}");
    let (strike, at) = timeouts[0];
    assert_eq!(strike["playerId"], pids[1].as_str(), "{strike}");
    let b_had = at.duration_since(b_on_turn);
    eprintln!(
        "figure: b struck {:.2} s after its turn began (turnTimeout 5 s)",
        b_had.as_secs_f64()
    );
    assert!(
        b_had >= Duration::from_millis(4500),
        "b struck after {b_had:?}"
    );
    assert_eq!(s["result"]["reason"], "timeout", "{s}");
    assert_eq!(s["result"]["winner"], pids[0].as_str(), "{s}");
    assert_eq!(s["result"]["forfeitedBy"], pids[1].as_str(), "{s}");
}
