//! Black-box conformance findings against the RCADIA agent protocol v2: each test is a rule an
//! agent or host relies on that a live server once broke.

use serde_json::{json, Value};

use crate::rcadia_common::{app_with, cast, entries, started, two_player, AGENT};

/// `POST /action {"action": null}` is no move: it is refused with `400 bad_request` (like a
/// missing action), nothing reaches the game, and the player stays on turn. It used to be
/// accepted and delivered to the game as `action: null`, leaving the agent `action_pending`.
#[tokio::test]
async fn a_null_action_is_refused_and_never_reaches_the_game() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": [{ "m": 1 }] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    let turn = s["turn"].as_u64().expect("turn");
    for body in [
        json!({ "action": null, "turn": turn }),
        json!({ "action": null }),
    ] {
        let (st, v) = agents[0]
            .post(&format!("{AGENT}/{id}/action"), body.clone())
            .await;
        assert_eq!(
            (st, v["code"].as_str()),
            (400, Some("bad_request")),
            "{body}: {v}"
        );
        assert!(v["error"].as_str().unwrap_or("").contains("null"), "{v}");
    }
    let p = host.pending(&id, after, 0.0).await;
    assert!(entries(&p).is_empty(), "nothing reaches the game: {p}");
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], true, "{s}");
    assert_eq!(s["lastAction"], Value::Null, "{s}");
    // A real action still goes through.
    let (st, v) = agents[0].act(&id, json!({ "m": 1 }), turn).await;
    assert_eq!(st, 200, "{v}");
}
