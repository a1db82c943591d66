//! /healthz, /readyz and /metrics against a real Redis.

use std::time::Duration;

use crate::harness::{eventually, spawn_app};

#[tokio::test]
async fn healthz_answers_ok() {
    let app = spawn_app().await;
    let res = app.http.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "ok");
}

#[tokio::test]
async fn readyz_follows_redis_down_and_up() {
    let mut app = spawn_app().await;
    let ready = eventually(Duration::from_secs(20), async || {
        let r = app.http.get(app.url("/readyz")).send().await.unwrap();
        r.status() == 200
    })
    .await;
    assert!(ready, "never ready with redis up");

    app.redis.as_mut().unwrap().kill();
    let mut reason = String::new();
    let down = eventually(Duration::from_secs(30), async || {
        let r = app.http.get(app.url("/readyz")).send().await.unwrap();
        if r.status() == 503 {
            let body: serde_json::Value = r.json().await.unwrap();
            reason = body["reason"].as_str().unwrap_or_default().to_string();
            true
        } else {
            false
        }
    })
    .await;
    assert!(down, "/readyz stayed 200 with redis killed");
    assert!(reason.contains("Redis"), "reason: {reason}");
    // Liveness does not depend on Redis.
    let r = app.http.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    // A REST read says in its own words that the store is away (it answered the MCP tools'
    // engine_unavailable, "retry with the same idempotencyKey").
    let r = app
        .http
        .get(app.url("/api/board/published"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.headers().contains_key("retry-after"));
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
    assert!(!body["error"].as_str().unwrap().contains("idempotencyKey"));

    app.redis.as_mut().unwrap().start_again();
    let back = eventually(Duration::from_secs(30), async || {
        let r = app.http.get(app.url("/readyz")).send().await.unwrap();
        r.status() == 200
    })
    .await;
    assert!(back, "/readyz did not recover after redis came back");
}

#[tokio::test]
async fn metrics_are_prometheus_text() {
    let app = spawn_app().await;
    for _ in 0..3 {
        app.http.get(app.url("/healthz")).send().await.unwrap();
    }
    app.http.get(app.url("/no-such-page")).send().await.unwrap();
    // A made-up method is counted as `other`, not by its name: clients cannot grow the
    // metrics without bound.
    let frob = reqwest::Method::from_bytes(b"FROBNICATE").unwrap();
    app.http
        .request(frob, app.url("/healthz"))
        .send()
        .await
        .unwrap();
    let res = app.http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let ctype = res.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ctype.starts_with("application/openmetrics-text"), "{ctype}");
    let text = res.text().await.unwrap();
    assert!(
        text.lines().any(|l| l
            == "horst_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 3"),
        "{text}"
    );
    assert!(
        text.contains("method=\"other\",route=\"/healthz\""),
        "{text}"
    );
    assert!(!text.contains("FROBNICATE"), "{text}");
    // Unknown paths are one label value, not one per path.
    assert!(text.contains("route=\"unmatched\""), "{text}");
    assert!(!text.contains("no-such-page"), "{text}");
    assert!(
        text.contains("horst_http_request_duration_seconds_bucket"),
        "{text}"
    );
}
