//! More black-box conformance findings against the RCADIA agent protocol v2, from clients the
//! contract's readers would write: cursors carried over from another session, numbers written
//! as floats, paths joined with one slash too many, and a seated player joining again after
//! the end. Each test is a rule a live server broke (or, for the rejoin, the reading chosen).

use serde_json::{json, Value};

use crate::rcadia_common::{app_with, cast, started, two_player, Client, AGENT};
use crate::rcadia_conformance::get_well_before_its_wait;

/// A started two-player game with seat 0 on turn (it may play `"x"`): the session id, the
/// player ids, and seat 0's snapshot.
async fn seat_0_on_turn(host: &Client, agents: &[Client]) -> (String, Vec<String>, Value) {
    let (id, pids, _) = started(host, agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    (id, pids, s)
}

/// A `since` past the session's `version` (`/state`, `/public`), or past the event log's
/// `next` (`/events`), is no cursor this session ever gave: a client that kept the previous
/// round's (every round counts its versions and events from the start again) or one that
/// made one up. It is answered at once with the session's current `version` / `next`, so
/// the client can wait on that. It was held until the session caught up with the number: the
/// whole `wait` of every poll, so an agent that carried its `since` into the next round sat
/// out 25 s per poll while its clock ran.
#[tokio::test]
async fn a_since_this_session_never_gave_answers_at_once() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = seat_0_on_turn(&host, &agents).await;
    // Seat 1 is not on turn: nothing would end its wait but the cursor.
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["yourTurn"], false, "{s}");
    let version = s["version"].as_u64().expect("version");
    for since in [version + 1, version + 500, u64::MAX] {
        let (st, v) = get_well_before_its_wait(
            &agents[1],
            &format!("{AGENT}/{id}/state?since={since}&wait=25"),
        )
        .await;
        assert_eq!((st, v["version"].as_u64()), (200, Some(version)), "{v}");
        let (st, v) = get_well_before_its_wait(
            &agents[1],
            &format!("{AGENT}/{id}/public?since={since}&wait=25"),
        )
        .await;
        assert_eq!((st, v["version"].as_u64()), (200, Some(version)), "{v}");
    }
    let (_, page) = agents[1].get(&format!("{AGENT}/{id}/events")).await;
    let next = page["next"].as_u64().expect("next");
    let (st, v) = get_well_before_its_wait(
        &agents[1],
        &format!("{AGENT}/{id}/events?since={}&wait=25", next + 100),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (v["events"].as_array().map(Vec::len), v["next"].as_u64()),
        (Some(0), Some(next)),
        "{v}"
    );
}

/// A `turn` echoed as a whole number written as a float (`7.0`: what a JSON library that
/// reads every number as a double writes back, Gson's maps for one) is that turn, and a
/// `since` of `7.0` that version. JSON has one number type; both used to be `400
/// bad_request` ("turn must be the non-negative integer"), so such an agent could never move.
/// A fraction is still refused.
#[tokio::test]
async fn a_turn_written_as_a_whole_float_is_that_turn() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, s) = seat_0_on_turn(&host, &agents).await;
    let turn = s["turn"].as_u64().expect("turn");
    let version = s["version"].as_u64().expect("version");
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/{id}/action"),
            json!({ "action": "x", "turn": turn as f64 + 0.5 }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (400, Some("bad_request")), "{v}");
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/{id}/action"),
            json!({ "action": "x", "turn": turn as f64 }),
        )
        .await;
    assert_eq!((st, v["turn"].as_u64()), (200, Some(turn)), "{v}");
    let (st, v) = agents[1]
        .get(&format!("{AGENT}/{id}/state?since={version}.0"))
        .await;
    assert_eq!(st, 200, "{v}");
}

/// A path with a trailing slash (`.../available/`: a base URL ending in `/` joined with a
/// path starting with one) is `404 not_found` naming the path without it; the message only
/// said "no such endpoint", which a client whose path looked right could not act on.
#[tokio::test]
async fn a_trailing_slash_is_named_in_the_404() {
    let app = app_with(|_| {}).await;
    let (_, agents) = cast(&app, 1).await;
    let (st, v) = agents[0].get(&format!("{AGENT}/available/")).await;
    assert_eq!((st, v["code"].as_str()), (404, Some("not_found")), "{v}");
    let msg = v["error"].as_str().unwrap_or("");
    assert!(
        msg.contains(&format!("{AGENT}/available,")) && msg.contains("trailing slash"),
        "{v}"
    );
    // Without the slash it is the endpoint.
    let (st, _) = agents[0].get(&format!("{AGENT}/available")).await;
    assert_eq!(st, 200);
}

/// The reading of `POST /join` on a finished game (section 5: "Idempotent per identity. 409
/// ... `finished`"): a player seated there gets its seat again, `200` with its snapshot
/// (`status: finished`, the same `playerId` and seat: a retry of a join whose answer was
/// lost, or an agent restarted with the session id, reads the result); anyone else gets
/// `409 finished`. Joining never reopens the game or changes the seat.
#[tokio::test]
async fn a_rejoin_of_a_finished_game_answers_the_seat_and_a_newcomer_409_finished() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 3).await;
    let (id, pids, _) = started(&host, &agents[..2], two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[1] } }]),
    )
    .await;
    let before = agents[0].state(&id, 0.0).await;
    for _ in 0..2 {
        let (st, v) = agents[0]
            .post(&format!("{AGENT}/{id}/join"), json!({ "asName": "Other" }))
            .await;
        assert_eq!(st, 200, "{v}");
        assert_eq!(
            (
                v["playerId"].as_str(),
                v["seat"].as_u64(),
                v["status"].as_str(),
                v["yourTurn"].as_bool()
            ),
            (
                Some(pids[0].as_str()),
                Some(0),
                Some("finished"),
                Some(false)
            ),
            "{v}"
        );
        assert_eq!(v["result"], json!({ "winner": pids[1] }), "{v}");
        assert_eq!(
            v["players"], before["players"],
            "the name is not changed: {v}"
        );
        assert_eq!(v["version"], before["version"], "nothing changed: {v}");
    }
    let (st, v) = agents[2]
        .post(&format!("{AGENT}/{id}/join"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("finished")), "{v}");
}

/// A body that starts with a UTF-8 byte order mark (what PowerShell 5's `-InFile` and .NET's
/// `Encoding.UTF8` send) is read as the JSON after it, as RFC 8259 lets a parser do: it was
/// `400 bad_request` "not valid JSON ... at line 1 column 1", on the agent and bridge API
/// alike, with nothing visible to fix.
#[tokio::test]
async fn a_body_with_a_byte_order_mark_is_read() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    let id = host.create(two_player(json!({}))).await;
    let mut body = b"\xEF\xBB\xBF".to_vec();
    body.extend_from_slice(br#"{"asName":"Bom"}"#);
    let r = agents[0]
        .http
        .post(format!("{}{AGENT}/{id}/join", agents[0].base))
        .bearer_auth(&agents[0].token)
        .header("content-type", "application/json; charset=utf-8")
        .body(body)
        .send()
        .await
        .expect("join");
    let status = r.status().as_u16();
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        (status, v["players"][0]["asName"].as_str()),
        (200, Some("Bom")),
        "{v}"
    );
}
