//! Burst limits over HTTP (the window itself is tested against Redis in `limits/tests`;
//! here the limits are lowered through the configuration so the tests are fast).

use serde_json::json;

use crate::harness::{spawn_app_beside, spawn_app_with};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn per_ip_limit_answers_429_with_retry_after() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_ip_per_minute = 5;
    })
    .await;
    for i in 0..5 {
        assert_eq!(
            app.mcp_raw(INIT, &[]).await.status,
            200,
            "request {}",
            i + 1
        );
    }
    let a = app.mcp_raw(INIT, &[]).await;
    assert_eq!(a.status, 429);
    let wait: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
    // The window has room again when its oldest request is a minute old.
    assert!((1..=60).contains(&wait), "{wait}");
    assert!(a.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("per minute"));
}

#[tokio::test]
async fn per_account_limit_covers_all_keys_of_an_account() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 3;
    })
    .await;
    let k1 = app.agent_key("jana", 0).await;
    let k2 = horst_identity::accounts::create_key(&app.store, "jana", None)
        .await
        .unwrap()
        .key;
    for k in [&k1, &k2, &k1] {
        assert_eq!(app.call("list_labor", json!({}), Some(k)).await.status, 200);
    }
    let a = app.call("list_labor", json!({}), Some(&k2)).await;
    assert_eq!(a.status, 429);
    assert!(a.headers.contains_key("retry-after"));
    // Anonymous requests from the same address are still served.
    assert_eq!(app.call("list_labor", json!({}), None).await.status, 200);
}

#[tokio::test]
async fn forwarded_addresses_count_only_behind_trusted_proxies() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_ip_per_minute = 2;
        c.server.trusted_proxies = vec!["127.0.0.1/32".into()];
    })
    .await;
    // Behind the trusted proxy (the test client at 127.0.0.1), each forwarded client has
    // its own budget.
    for ip in ["198.51.100.1", "198.51.100.2"] {
        for _ in 0..2 {
            assert_eq!(
                app.mcp_raw(INIT, &[("x-forwarded-for", ip)]).await.status,
                200
            );
        }
        assert_eq!(
            app.mcp_raw(INIT, &[("x-forwarded-for", ip)]).await.status,
            429
        );
    }
    // A forged first entry does not help: the proxy appended the real address last.
    let a = app
        .mcp_raw(INIT, &[("x-forwarded-for", "203.0.113.9, 198.51.100.1")])
        .await;
    assert_eq!(a.status, 429);
}

#[tokio::test]
async fn forwarded_addresses_from_an_untrusted_peer_are_ignored() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_ip_per_minute = 2;
    })
    .await;
    for ip in ["198.51.100.1", "198.51.100.2"] {
        assert_eq!(
            app.mcp_raw(INIT, &[("x-forwarded-for", ip)]).await.status,
            200
        );
    }
    let a = app
        .mcp_raw(INIT, &[("x-forwarded-for", "198.51.100.3")])
        .await;
    assert_eq!(a.status, 429, "all three came from 127.0.0.1");
}

/// The contract's limits hold for the deployment: two API processes on one Redis answer an
/// account's calls, alternating, and together serve exactly the account's minute.
#[tokio::test]
async fn limits_hold_across_api_processes() {
    let on = |c: &mut horst_config::Config| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 6;
        c.gateway.burst_per_ip_per_minute = 10;
    };
    let a = spawn_app_with(on).await;
    let b = spawn_app_beside(&a, on).await;
    let key = a.agent_key("wanda", 0).await;
    let mut served = 0;
    for i in 0..13 {
        let app = if i % 2 == 0 { &a } else { &b };
        match app.call("list_labor", json!({}), Some(&key)).await.status {
            200 => served += 1,
            429 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(served, 6);
    // The address's 10 per minute are shared the same way: 13 counted so far.
    let a2 = a.call("list_labor", json!({}), None).await;
    assert_eq!(a2.status, 429, "{}", a2.text);
}
