//! ARCHITECTURE's invariant "every key has the configured prefix": a deployment that did a
//! little of everything leaves no key in Redis outside `redis.key_prefix`, so two deployments
//! (or a deployment and anything else) can share one Redis.

use serde_json::json;

use crate::harness::*;
use crate::rcadia_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_a_deployment_writes_has_the_configured_prefix() {
    if on_cluster() {
        return; // the shared cluster holds other tests' prefixes
    }
    let prefix = "zq7:";
    let app = app_with(|c| {
        c.redis.key_prefix = prefix.into();
        c.gateway.mode = horst_config::GatewayMode::On;
    })
    .await;
    let _worker = app.start_engine_worker();
    let http = reqwest::Client::new();

    // The gateway: a self-service key, the job tools, the board and a note to the operator.
    let created: serde_json::Value = http
        .post(app.url("/api/agent-keys"))
        .json(&json!({"displayName": "Fuchs"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let key = created["key"].as_str().expect("a key").to_owned();
    let replay: serde_json::Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let map = LEVEL_MAP.replace("name: Erste Schritte", "name: Praefix");
    ok_result(
        &app.call(
            "simulate_replay",
            json!({"map": map, "replay": replay, "idempotencyKey": "s1"}),
            Some(&key),
        )
        .await,
    );
    ok_result(
        &app.call(
            "submit_level",
            json!({"name": "praefix", "map": map, "replay": replay, "idempotencyKey": "u1"}),
            Some(&key),
        )
        .await,
    );
    ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "Mehr Dohlen", "body": "Bitte."}),
            Some(&key),
        )
        .await,
    );
    ok_result(
        &app.call(
            "contact_admin",
            json!({"category": "bug", "subject": "x", "message": "y"}),
            Some(&key),
        )
        .await,
    );

    // RCADIA: a host, two agents seated, the game started; a person's sign-in.
    let (host, agents) = cast(&app, 2).await;
    started(&host, &agents, two_player(json!({"turnTimeout": 30}))).await;
    app.person("bert", "ein-gutes-passwort").await;
    let signed_in = http
        .post(app.url("/api/v1/auth/session"))
        .json(&json!({"username": "bert", "password": "ein-gutes-passwort"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);

    let client = redis::Client::open(app.redis_url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(keys.len() > 20, "the flows above wrote keys: {keys:?}");
    let outside: Vec<&String> = keys.iter().filter(|k| !k.starts_with(prefix)).collect();
    assert!(outside.is_empty(), "keys without {prefix}: {outside:?}");
}
