//! Sections 5 (leave), 6 (rematches and series) and 9 (legacy mode).

use std::time::Duration;

use serde_json::json;

use crate::harness::eventually;
use crate::rcadia_common::*;

#[tokio::test]
async fn auto_rematch_keeps_seats_ids_and_series() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, after) =
        started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[0] } }]),
    )
    .await;
    // Agents' snapshots point at the next round.
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished");
    let next = s["nextSessionId"]
        .as_str()
        .expect("nextSessionId")
        .to_string();
    let p = host.pending(&id, after, 0.0).await;
    assert_eq!(p["nextSessionId"], next.as_str());

    // Both show up on the next round (no re-join); it starts after the short delay.
    for a in &agents {
        let s = a.state(&next, 0.0).await;
        assert_eq!(s["round"], 2);
        assert_eq!(s["seriesId"], id.as_str());
        assert_eq!(s["previousSessionId"], id.as_str());
    }
    let s0 = agents[0].state(&next, 0.0).await;
    assert_eq!(s0["playerId"], pids[0]);
    assert_eq!(s0["seat"], 0);
    let s1 = agents[1].state(&next, 0.0).await;
    assert_eq!(s1["playerId"], pids[1]);
    let mut start = None;
    for _ in 0..20 {
        let p = host.pending(&next, 0, 3.0).await;
        if let Some(e) = entries(&p).into_iter().find(|e| e["event"] == "game_start") {
            start = Some(e);
            break;
        }
    }
    let start = start.expect("game_start on the rematch");
    assert_eq!(start["round"], 2);
    assert_eq!(start["players"], json!(pids));

    // A late leave of round 1 (a cleanup step, say) is no forfeit of round 2, under way: it
    // lost round 2, rated, and ended the series.
    let (st, v) = agents[0]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    let s = agents[1].state(&next, 0.0).await;
    assert_eq!(s["status"], "active", "{s}");
}

#[tokio::test]
async fn rematch_is_idempotent() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("not_finished")), "{v}");
    let (st, v) = host
        .post(
            &format!("{BRIDGE}/{id}/end"),
            json!({ "result": { "winner": pids[1] } }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    assert!(v.get("nextSessionId").is_none(), "no autoRematch: {v}");
    let (st, a) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!(st, 200, "{a}");
    assert_eq!(a["round"], 2);
    assert_eq!(a["seriesId"], id.as_str());
    let (_, b) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!(a["sessionId"], b["sessionId"]);
    assert_eq!(
        agents[1].state(&id, 0.0).await["nextSessionId"],
        a["sessionId"]
    );
}

#[tokio::test]
async fn an_expired_reservation_opens_the_table() {
    // Long enough for the refused join and p0's showing up to land inside the reservation on
    // a loaded machine: with 1 s the reservation ran out first (load average 25, 2 cores) and
    // the newcomer was seated.
    let app = app_with(|c| c.sessions.reservation_seconds = 4).await;
    let (host, agents) = cast(&app, 3).await;
    let (_, pids, next) = ended_into_rematch(&host, &agents, json!({ "winner": null })).await;
    // A newcomer is refused while the seats are reserved.
    let (st, v) = agents[2]
        .post(&format!("{AGENT}/{next}/join"), json!({}))
        .await;
    assert_eq!((st, v["code"].as_str()), (409, Some("reserved")), "{v}");
    // Only p0 shows up; after the reservation p1 loses the seat.
    agents[0].state(&next, 0.0).await;
    let open = eventually(Duration::from_secs(30), async || {
        let s = agents[0].state(&next, 0.0).await;
        s["players"].as_array().map(Vec::len) == Some(1)
    })
    .await;
    assert!(open, "the reservation never expired");
    let s = agents[0].state(&next, 0.0).await;
    assert_eq!(s["status"], "waiting");
    assert_eq!(s["players"][0]["playerId"], pids[0]);
    let (_, v) = agents[2]
        .get(&format!("{AGENT}/available?game=chess"))
        .await;
    let listed = v["sessions"].as_array().unwrap();
    assert!(
        listed.iter().any(|e| e["sessionId"] == next.as_str()),
        "{v}"
    );
    // The newcomer takes the free seat and the table starts.
    let s = agents[2].join(&next).await;
    assert_eq!(s["seat"], 1);
    let started = eventually(Duration::from_secs(10), async || {
        agents[2].state(&next, 0.0).await["status"] == "active"
    })
    .await;
    assert!(started);
}

#[tokio::test]
async fn leaving_an_active_game_forfeits_it() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    let (st, v) = agents[0]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished");
    assert_eq!(s["result"]["reason"], "left");
    assert_eq!(s["result"]["winner"], pids[1]);
    // Leaving a waiting table frees the seat.
    let id2 = host.create(two_player(json!({}))).await;
    agents[0].join(&id2).await;
    let (st, _) = agents[0]
        .post(&format!("{AGENT}/{id2}/leave"), json!({}))
        .await;
    assert_eq!(st, 200);
    let (_, v) = host.get(&format!("{AGENT}/{id2}/public")).await;
    assert_eq!(v["players"], json!([]));
}

#[tokio::test]
async fn legacy_games_get_v1_entries_and_no_rematch() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host
        .create(json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "gameType": "chess" }))
        .await;
    let mut pids = Vec::new();
    for a in &agents {
        pids.push(a.join(&id).await["playerId"].clone());
    }
    let p = host.pending(&id, 0, 5.0).await;
    let e = &entries(&p)[0];
    assert_eq!(e["type"], "action", "{p}");
    assert_eq!(e["playerId"], "__system__");
    assert_eq!(e["action"]["type"], "__game_start__");
    assert_eq!(e["action"]["players"], json!(pids));
    // v1 endpoints work; no rematch for v1 games.
    let (st, _) = host
        .call(
            "PATCH",
            &format!("{BRIDGE}/{id}/legal-actions"),
            Some(json!({ "playerId": pids[0], "actions": ["a"] })),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(agents[0].state(&id, 0.0).await["yourTurn"], true);
    let (st, _) = host
        .call(
            "PATCH",
            &format!("{BRIDGE}/{id}/state"),
            Some(json!({ "state": { "v": 1 } })),
        )
        .await;
    assert_eq!(st, 200);
    let (st, _) = host
        .post(
            &format!("{BRIDGE}/{id}/end"),
            json!({ "result": { "winner": null } }),
        )
        .await;
    assert_eq!(st, 200);
    let (st, v) = host
        .post(&format!("{BRIDGE}/{id}/rematch"), json!({}))
        .await;
    assert_eq!(
        (st, v["code"].as_str()),
        (409, Some("legacy_session")),
        "{v}"
    );
}

#[tokio::test]
async fn leaving_a_finished_session_opts_out_of_the_rematch() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, _) = started(&host, &agents, two_player(json!({ "autoRematch": true }))).await;
    host.ops(
        &id,
        json!([{ "op": "end", "result": { "winner": pids[0] } }]),
    )
    .await;
    let next = agents[0].state(&id, 0.0).await["nextSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (st, v) = agents[1]
        .post(&format!("{AGENT}/{id}/leave"), json!({}))
        .await;
    assert_eq!(st, 200, "{v}");
    // The leave is forwarded to the next round: p1's seat is gone there.
    let s = agents[0].state(&next, 0.0).await;
    let seated: Vec<_> = s["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["playerId"].clone())
        .collect();
    assert_eq!(seated, vec![json!(pids[0])], "{s}");
}
