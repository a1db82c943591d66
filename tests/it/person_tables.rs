//! A person at RCADIA tables (the tenth security pass): the name a person's seat is shown
//! by, and the tables an hour a person opens, `autoRematch` rounds included.

use std::time::Duration;

use serde_json::{json, Value};

use crate::accounts::{rcadia_jwt, PASSWORD};
use crate::harness::{spawn_app_with, TestApp};
use crate::rcadia_common::{cast, entries, max_seq, two_player, Client, AGENT, BRIDGE};

/// A person's tables an hour (`horst_rcadia::tables::PER_PERSON_PER_HOUR`).
const PER_PERSON: u32 = 60;

/// Accounts on (as the accounts tests have them) and the RCADIA tests' short timings.
async fn app() -> TestApp {
    spawn_app_with(|c| {
        crate::rcadia_common::fast(c);
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.sign_in_per_ip_per_minute = 1000;
        c.gateway.sign_in_per_name_per_minute = 1000;
    })
    .await
}

fn client(app: &TestApp, token: String) -> Client {
    Client {
        base: format!("http://{}", app.addr),
        token,
        http: reqwest::Client::new(),
    }
}

/// Before: a person's seat taken without an `asName` was shown by the account name (the
/// JWT's `sub`, the name the person signs in with) on `/public`, `/tables/`, the watch page
/// and the replay. Now it is the display name the person chose, and without one the seat
/// has no name (the pages show "seat N").
#[tokio::test]
async fn a_persons_seat_shows_the_display_name_never_the_account_name() {
    let app = app().await;
    for name in ["olga", "fuchs"] {
        app.person(name, PASSWORD).await;
    }
    let _: () = redis::cmd("HSET")
        .arg(app.store.key("account:fuchs"))
        .arg("displayName")
        .arg("Reineke")
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let (host, _) = cast(&app, 0).await;
    let id = host.create(two_player(json!({}))).await;
    let olga = client(&app, rcadia_jwt(&app, "olga").await);
    let fuchs = client(&app, rcadia_jwt(&app, "fuchs").await);
    // No asName, and a blank one (which is none).
    let (st, v) = olga.post(&format!("{AGENT}/{id}/join"), json!({})).await;
    assert_eq!(st, 200, "{v}");
    let (st, v) = fuchs
        .post(&format!("{AGENT}/{id}/join"), json!({"asName": "  "}))
        .await;
    assert_eq!(st, 200, "{v}");
    let (_, public) = client(&app, String::new())
        .get(&format!("{AGENT}/{id}/public"))
        .await;
    let names: Vec<Value> = public["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| p["asName"].clone())
        .collect();
    assert_eq!(names, vec![Value::Null, json!("Reineke")], "{public}");
    let text = public.to_string();
    assert!(!text.contains("olga") && !text.contains("fuchs"), "{text}");
    // A name given is the name shown, as before.
    let id = host.create(two_player(json!({}))).await;
    let (st, v) = olga
        .post(&format!("{AGENT}/{id}/join"), json!({"asName": "Olga K."}))
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["players"][0]["asName"], "Olga K.", "{v}");
}

/// The host's entries after `after` until `game_start`; the last seq seen.
async fn until_game_start(host: &Client, id: &str, mut after: u64) -> u64 {
    for _ in 0..40 {
        let p = host.pending(id, after, 2.0).await;
        let found = entries(&p).iter().any(|e| e["event"] == "game_start");
        after = max_seq(&p, after);
        if found {
            return after;
        }
    }
    panic!("no game_start on {id}");
}

/// A finished session's `nextSessionId` as its player sees it; `None` when the session is
/// finished and no link came 8 s later (the link's grace is 5 s).
async fn next_round(player: &Client, id: &str) -> Option<String> {
    let mut finished_at: Option<tokio::time::Instant> = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(40);
    while tokio::time::Instant::now() < deadline {
        let s = player.state(id, 1.0).await;
        if let Some(next) = s["nextSessionId"].as_str() {
            return Some(next.to_string());
        }
        if s["status"] == "finished" {
            let t = *finished_at.get_or_insert_with(tokio::time::Instant::now);
            if t.elapsed() > Duration::from_secs(8) {
                return None;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("{id} never finished");
}

/// Before: an `autoRematch` round opened without a request, so no bound counted it: a
/// person seated at their own one-seat table, ending each game with an `/ops` `end`, opened
/// a round a game, past the 60 tables an hour that `POST /sessions` and `/rematch` keep to.
/// Now the rounds count against the person's bound where they open: past it the series
/// ends (no next round), and a create is refused with the same 429 as ever, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_auto_rematch_rounds_count_against_the_tables_an_hour() {
    let app = app().await;
    app.person("olga", PASSWORD).await;
    let olga = client(&app, rcadia_jwt(&app, "olga").await);
    let plain = json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0"});
    for i in 0..PER_PERSON - 2 {
        let (st, v) = olga
            .post(BRIDGE, json!({"config": plain, "gameId": "chess"}))
            .await;
        assert_eq!(st, 201, "table {i}: {v}");
    }
    // The 59th table: one seat, rematched by itself, the host seated at it.
    let solo = json!({"minPlayers": 1, "maxPlayers": 1, "turnBased": true,
        "sdkVersion": "2.0.0", "autoRematch": true, "turnTimeout": 0});
    let id = olga.create(solo).await;
    let (st, joined) = olga.post(&format!("{AGENT}/{id}/join"), json!({})).await;
    assert_eq!(st, 200, "{joined}");
    let pid = joined["playerId"].as_str().unwrap().to_string();
    until_game_start(&olga, &id, 0).await;
    olga.ops(&id, json!([{ "op": "end", "result": {"winner": pid} }]))
        .await;
    // Its second round is the 60th table: within the bound.
    let second = next_round(&olga, &id).await.expect("the 60th table opens");
    olga.state(&second, 0.0).await;
    until_game_start(&olga, &second, 0).await;
    olga.ops(&second, json!([{ "op": "end", "result": {"winner": pid} }]))
        .await;
    // A third round would be the 61st.
    assert_eq!(
        next_round(&olga, &second).await,
        None,
        "a 61st table opened"
    );
    // And a create by hand is refused as before, these bytes exactly.
    let r = reqwest::Client::new()
        .post(app.url(BRIDGE))
        .bearer_auth(&olga.token)
        .json(&json!({"config": plain, "gameId": "chess"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert_eq!(r.headers()["content-type"], "application/json");
    let s: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&s), "{s}");
    assert_eq!(
        r.text().await.unwrap(),
        format!(
            r#"{{"error":"you opened 60 tables within an hour, as many as are allowed; wait {s} s, or play at an open table (GET /api/v1/agent/sessions/available)","code":"burst"}}"#
        )
    );
}
