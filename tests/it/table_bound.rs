//! How many RCADIA tables a person opens (the ninth security pass). A session JWT is the
//! `host` scope for anyone with an account (`POST /api/v1/auth/session`), and each table is a
//! session record in Redis for at least a day; operators' host tokens are bounded by their
//! own per-token limit instead.

use serde_json::{json, Value};

use crate::accounts::{accounts_app, rcadia_jwt, PASSWORD};
use crate::harness::TestApp;
use crate::rcadia_common::BRIDGE;
use crate::security::client_from;

/// The bounds the routes enforce (`api/src/routes/rcadia_bridge.rs`).
const PER_PERSON: usize = 60;
const PER_NETWORK: usize = 180;

/// `POST` to the bridge's `path` with `token` from `ip`: the status and the body's `code`,
/// and whether a `Retry-After` came with it.
async fn post_as(app: &TestApp, ip: &str, token: &str, path: &str) -> (u16, String, bool) {
    let r = client_from(ip)
        .post(app.url(path))
        .bearer_auth(token)
        .json(&json!({
            "config": {"minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0"},
            "gameId": "chess",
        }))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let retry_after = r.headers().contains_key(reqwest::header::RETRY_AFTER);
    let body: Value = r.json().await.unwrap_or(Value::Null);
    let code = body["code"].as_str().unwrap_or("").to_string();
    let id = body["sessionId"].as_str().unwrap_or("").to_string();
    // The session id stands in for the code of a created table.
    (status, if status == 201 { id } else { code }, retry_after)
}

/// Before: one JWT opened tables without end (every `POST /sessions` 201), each a session
/// record kept a day after it ends, listed in `/available` and `/tables/`. Now a person opens
/// at most 60 an hour (a rematch call counts as one), then 429 `burst` with `Retry-After`;
/// another person, and the operator's host tokens, are not held by it.
#[tokio::test]
async fn a_person_opens_a_bounded_number_of_tables_an_hour() {
    let app = accounts_app().await;
    for name in ["olga", "fuchs"] {
        app.person(name, PASSWORD).await;
    }
    let olga = rcadia_jwt(&app, "olga").await;
    let mut first = String::new();
    for i in 0..PER_PERSON {
        let (status, id, _) = post_as(&app, "127.0.0.1", &olga, BRIDGE).await;
        assert_eq!(status, 201, "table {i}: {id}");
        if i == 0 {
            first = id;
        }
    }
    let refused = post_as(&app, "127.0.0.1", &olga, BRIDGE).await;
    assert_eq!(refused, (429, "burst".to_string(), true));
    // A rematch makes a table too: refused before it looks at the session.
    let rematch = post_as(
        &app,
        "127.0.0.1",
        &olga,
        &format!("{BRIDGE}/{first}/rematch"),
    )
    .await;
    assert_eq!(rematch, (429, "burst".to_string(), true));
    // Another person opens hers.
    let fuchs = rcadia_jwt(&app, "fuchs").await;
    assert_eq!(post_as(&app, "127.0.1.1", &fuchs, BRIDGE).await.0, 201);
    // The operator's host token is not a person's: its own limit is the operator's to set.
    let (host, _) = app
        .auth
        .create_token(&["host".to_string()], Some("Host"))
        .await
        .unwrap();
    for i in 0..=PER_PERSON {
        let (status, id, _) = post_as(&app, "127.0.0.1", &host, BRIDGE).await;
        assert_eq!(status, 201, "host token's table {i}: {id}");
    }
}

/// Several accounts of one network (an IPv4 /24, an IPv6 /64) open at most 180 tables an
/// hour together: sign-up makes 3 accounts a network a day, but accounts gather.
#[tokio::test]
async fn one_network_opens_a_bounded_number_of_tables_an_hour() {
    let app = accounts_app().await;
    let names = ["anna", "berta", "clara", "dora"];
    let mut jwts = Vec::new();
    for name in names {
        app.person(name, PASSWORD).await;
        jwts.push(rcadia_jwt(&app, name).await);
    }
    let mut opened = 0;
    for (n, jwt) in jwts.iter().take(3).enumerate() {
        for i in 0..PER_NETWORK / 3 {
            let ip = format!("127.0.0.{}", 1 + n);
            let (status, id, _) = post_as(&app, &ip, jwt, BRIDGE).await;
            assert_eq!(status, 201, "{}'s table {i}: {id}", names[n]);
            opened += 1;
        }
    }
    assert_eq!(opened, PER_NETWORK);
    // The fourth person, from the same /24: the network's hour is spent.
    let refused = post_as(&app, "127.0.0.9", &jwts[3], BRIDGE).await;
    assert_eq!(refused, (429, "burst".to_string(), true));
    // From another network she opens one.
    assert_eq!(post_as(&app, "127.0.1.9", &jwts[3], BRIDGE).await.0, 201);
}
