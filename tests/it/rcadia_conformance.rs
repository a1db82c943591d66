//! Black-box conformance findings against the RCADIA agent protocol v2: each test is a rule an
//! agent or host relies on that a live server once broke.

use serde_json::{json, Value};

use crate::rcadia_common::{
    app_with, cast, ended_into_rematch, entries, started, two_player, AGENT, BRIDGE,
};

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

/// A blank `asName` (`""`, spaces, only invisible characters) is no name given: the seat
/// gets the caller's default name, as when `asName` is left out. It used to give a nameless
/// seat (`asName: null`), so an agent whose name setting was empty showed up without its
/// token's name.
#[tokio::test]
async fn a_blank_as_name_falls_back_to_the_callers_default_name() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    for blank in ["", "   ", "\u{200b}"] {
        let id = host.create(two_player(json!({}))).await;
        let (st, v) = agents[0]
            .post(&format!("{AGENT}/{id}/join"), json!({ "asName": blank }))
            .await;
        assert_eq!(st, 200, "{v}");
        assert_eq!(v["players"][0]["asName"], "Agent0", "{blank:?}: {v}");
    }
    let id = host.create(two_player(json!({}))).await;
    let (st, v) = agents[0]
        .post(&format!("{AGENT}/{id}/join"), json!({ "asName": " Fish " }))
        .await;
    assert_eq!(
        (st, v["players"][0]["asName"].as_str()),
        (200, Some("Fish")),
        "{v}"
    );
}

/// The same for `POST /seek`: a blank `asName` seats the caller under its default name.
#[tokio::test]
async fn a_blank_as_name_on_seek_falls_back_to_the_callers_default_name() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    let id = host.create(two_player(json!({}))).await;
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/seek"),
            json!({ "game": "chess", "rated": false, "asName": "", "wait": 0 }),
        )
        .await;
    assert_eq!(
        (st, v["sessionId"].as_str()),
        (200, Some(id.as_str())),
        "{v}"
    );
    assert_eq!(v["snapshot"]["players"][0]["asName"], "Agent0", "{v}");
}

/// A `turnTimeout` over 365 days is refused with `400 bad_request` naming the limit. It used
/// to be accepted (up to any number: `1e300`, `2^64-1`) and put `deadline` in the year 33715
/// or 584556019 (`"33715-09-01T20:00:53.686Z"`), a time neither JavaScript's `Date` nor
/// Python's `datetime` reads: an agent that parsed its deadline failed on every snapshot.
#[tokio::test]
async fn a_turn_timeout_over_a_year_is_refused_and_deadlines_stay_readable() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    for tt in [json!(1e12), json!(31_536_001u64), json!(u64::MAX)] {
        let (st, v) = host
            .post(
                BRIDGE,
                json!({ "config": two_player(json!({ "turnTimeout": tt })) }),
            )
            .await;
        assert_eq!(
            (st, v["code"].as_str()),
            (400, Some("bad_request")),
            "{tt}: {v}"
        );
        let msg = v["error"].as_str().unwrap_or("");
        assert!(
            msg.contains("turnTimeout") && msg.contains("365 days"),
            "{v}"
        );
    }
    // The longest accepted clock gives a deadline in the usual 24-character form.
    let (id, pids, _) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": 31_536_000 })),
    )
    .await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let s = agents[0].state(&id, 0.0).await;
    let d = s["deadline"].as_str().unwrap_or_default();
    assert!(d.len() == 24 && d.ends_with('Z'), "{s}");
}

/// A `turn` ahead of the session's is `409 stale_turn` saying it has not been reached (and the
/// current turn). The message used to say "turn 6 is over" for a turn that never was.
#[tokio::test]
async fn a_turn_from_the_future_is_not_called_over() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    let turn = agents[0].state(&id, 0.0).await["turn"]
        .as_u64()
        .expect("turn");
    let (st, v) = agents[0].act(&id, json!("x"), turn + 5).await;
    assert_eq!((st, v["code"].as_str()), (409, Some("stale_turn")), "{v}");
    let msg = v["error"].as_str().unwrap_or("");
    assert!(
        msg.contains("has not been reached")
            && !msg.contains("is over")
            && msg.contains(&format!("current turn is {turn}")),
        "{v}"
    );
    if turn > 0 {
        let (_, v) = agents[0].act(&id, json!("x"), turn - 1).await;
        assert!(v["error"].as_str().unwrap_or("").contains("is over"), "{v}");
    }
}

/// `POST /rematch` on a table still waiting for players says so (`409 not_finished`). It used
/// to answer "the game is still running" for a game that had never started.
#[tokio::test]
async fn a_rematch_of_a_waiting_table_says_it_has_not_started() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let id = host.create(two_player(json!({}))).await;
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("not_finished")), "{v}");
    let msg = v["error"].as_str().unwrap_or("");
    assert!(
        msg.contains("has not started") && !msg.contains("still running"),
        "{v}"
    );
}

/// A rematch whose remaining players have all shown up, after one opted out, is an open
/// table: `GET /available` lists it by default (`reserved: false`, `joinable: true`) and a
/// newcomer's join starts round 2. It stayed `reserved` and out of the default listing for
/// the whole reservation (60 s), though nobody was left to hold the seat for.
#[tokio::test]
async fn a_rematch_seat_given_up_is_listed_once_the_others_are_back() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 3).await;
    let (id, _, next) = ended_into_rematch(&host, &agents, json!({ "winner": null })).await;
    let (st, v) = agents[1]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    let listed = |v: &Value| {
        v["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["sessionId"] == next.as_str())
            .cloned()
    };
    // The staying player has not shown up yet: still held for them.
    let (_, v) = agents[2].get(&format!("{AGENT}/available")).await;
    assert_eq!(listed(&v), None, "{v}");
    let s = agents[0].state(&next, 0.0).await;
    assert_eq!(
        (s["round"].as_u64(), s["status"].as_str()),
        (Some(2), Some("waiting")),
        "{s}"
    );
    let (st, v) = agents[2].get(&format!("{AGENT}/available")).await;
    assert_eq!(st, 200, "{v}");
    let e = listed(&v).unwrap_or_else(|| panic!("the open seat is listed: {v}"));
    assert_eq!(
        (&e["reserved"], &e["joinable"]),
        (&json!(false), &json!(true)),
        "{e}"
    );
    let s = agents[2].join(&next).await;
    assert_eq!(
        (s["seat"].as_u64(), s["round"].as_u64()),
        (Some(1), Some(2)),
        "{s}"
    );
    let mut status = String::new();
    for _ in 0..20 {
        let p = host.pending(&next, 0, 2.0).await;
        status = p["status"].as_str().unwrap_or_default().to_string();
        if status == "active" {
            break;
        }
    }
    assert_eq!(status, "active");
}

/// `pending-actions` with an `after` past every entry the session queued (a host that kept
/// an earlier round's: every session, a rematch's too, numbers its entries from 1) still ends
/// its wait for the next entry, though that entry is numbered below `after`, and answers with
/// it: such an `after` acknowledges only what was delivered. The wait used to run out first
/// (the poll returned only "for an entry with seq > after"), so every action reached such a
/// host a whole `wait` late.
#[tokio::test]
async fn a_poll_with_after_past_every_entry_still_wakes_for_the_next_entry() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, last) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": [{ "m": 1 }] }]),
    )
    .await;
    let turn = agents[0].state(&id, 0.0).await["turn"]
        .as_u64()
        .expect("turn");
    let url = format!("{BRIDGE}/{id}/pending-actions?after={}&wait=25", last + 100);
    let poll = {
        let host = host.clone();
        tokio::spawn(async move { get_well_before_its_wait(&host, &url).await })
    };
    // The poll is open (or about to be) when the action comes; either way it must answer
    // with it long before its 25 s.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (st, v) = agents[0].act(&id, json!({ "m": 1 }), turn).await;
    assert_eq!(st, 200, "{v}");
    let (st, v) = poll.await.expect("the poll's task");
    assert_eq!(st, 200, "{v}");
    assert!(
        entries(&v)
            .iter()
            .any(|e| e["playerId"] == pids[0].as_str() && e["action"] == json!({ "m": 1 })),
        "the action, numbered below the poll's after: {v}"
    );
    // A rematch's host that kept the old round's `after` is answered as any other.
    let (_old, _pids, next) = ended_into_rematch(&host, &agents, json!({ "winner": null })).await;
    let (st, v) = host
        .get(&format!(
            "{BRIDGE}/{next}/pending-actions?after=1000&wait=0"
        ))
        .await;
    assert_eq!(st, 200, "{v}");
}

/// A refused `/ops` (400: a malformed op) from the session's host is still a sign of the host's
/// life (section 3: "/ops counts too"): a host whose every batch is refused while it fixes a bug
/// keeps its table; it used to be ended as `host_disconnected` once the gone window passed
/// since its last accepted call. A refused call of someone else is no sign of the host's life.
#[tokio::test]
async fn a_refused_ops_call_still_keeps_the_host_alive() {
    let app = app_with(|c| {
        c.sessions.host_alive_seconds = 1;
        c.sessions.host_gone_seconds = 2;
    })
    .await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({}))).await;
    // Twice the gone window of refused calls, one every 300 ms.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(4);
    while std::time::Instant::now() < until {
        let (st, v) = host
            .post(
                &format!("{BRIDGE}/{id}/ops"),
                json!({ "ops": [{ "op": "no-such-op" }] }),
            )
            .await;
        assert_eq!(st, 400, "{v}");
        // An agent's refused host call records nothing (it is not the host: 403).
        let (st, _) = agents[0]
            .post(&format!("{BRIDGE}/{id}/ops"), json!({ "ops": [] }))
            .await;
        assert_eq!(st, 403);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "active", "the host was taken for gone: {s}");
    // The v1 single-op endpoints, too.
    let (st, v) = host
        .call(
            "PATCH",
            &format!("{BRIDGE}/{id}/legal-actions"),
            Some(json!({ "nonsense": 1 })),
        )
        .await;
    assert_eq!(st, 400, "{v}");
}

/// `GET /state?since=<version>` on a finished game answers at once, as `/state?wait` does
/// (section 5: it "returns immediately if it is your turn or the game is finished"); `since`
/// adds a reason to wake, it takes none away. It waited out the whole `wait` unless the session
/// changed, so an agent looping on `since` sat 25 s on every finished round. The spectator
/// view's `GET /public?since=` likewise (spectator pages loop on it; it waited too).
#[tokio::test]
async fn state_and_public_since_on_a_finished_game_answer_at_once() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, _, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(&id, json!([{ "op": "end", "result": { "winner": null } }]))
        .await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished", "{s}");
    let version = s["version"].as_u64().expect("version");
    let url = format!("{AGENT}/{id}/state?since={version}&wait=25");
    let (st, v) = get_well_before_its_wait(&agents[0], &url).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"], "finished", "{v}");
    assert_eq!(v["version"], version, "{v}");
    let url = format!("{AGENT}/{id}/public?since={version}&wait=25");
    let (st, v) = get_well_before_its_wait(&agents[0], &url).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["status"], "finished", "{v}");
}

/// A GET with `wait=25` that must answer far sooner: a client timeout of 10 s.
pub(crate) async fn get_well_before_its_wait(
    client: &crate::rcadia_common::Client,
    path: &str,
) -> (u16, Value) {
    let r = client
        .http
        .get(format!("{}{path}", client.base))
        .bearer_auth(&client.token)
        .timeout(std::time::Duration::from_secs(10))
        .send()
        .await
        .expect("answered before the wait ran out");
    let status = r.status().as_u16();
    (status, r.json().await.expect("json"))
}
