//! `POST /api/agent-keys` (contract: "Authentication").

use serde_json::{json, Value};

use crate::harness::{spawn_app_with, spawn_gateway, TestApp};

async fn post(
    app: &TestApp,
    body: &str,
    headers: &[(&str, &str)],
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = app.http.post(app.url("/api/agent-keys"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.body(body.to_string()).send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, r.json().await.unwrap_or(Value::Null), headers)
}

const JSON: (&str, &str) = ("content-type", "application/json");

#[tokio::test]
async fn creates_an_agent_account_and_a_working_key() {
    let app = spawn_gateway().await;
    let (status, body, _) =
        post(&app, r#"{"displayName":"Fuchs","label":"laptop"}"#, &[JSON]).await;
    assert_eq!(status, 201, "{body}");
    let key = body["key"].as_str().unwrap();
    assert!(key.starts_with("gcv_"));
    assert!(key.starts_with(body["prefix"].as_str().unwrap()));
    let user = body["username"].as_str().unwrap();
    assert!(user.starts_with("agent-") && user.len() == 14, "{user}");
    assert_eq!(body["displayName"], "Fuchs");
    assert!(body["id"].is_string());
    assert!(body["createdAt"].as_str().unwrap().ends_with('Z'));
    // Trust 0, and the key works on key tools.
    let acct = horst_identity::accounts::load_account(&app.store, user)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(acct.trust, 0);
    let a = app.call("my_submissions", json!({}), Some(key)).await;
    assert_eq!(a.status, 200, "{}", a.text);
    // Stored only as a hash: the key itself appears nowhere in Redis.
    let mut conn = app.store.conn();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .unwrap();
    for k in keys {
        assert!(!k.contains(key));
        let t: String = redis::cmd("TYPE")
            .arg(&k)
            .query_async(&mut conn)
            .await
            .unwrap();
        if t == "hash" {
            let vals: Vec<String> = redis::cmd("HVALS")
                .arg(&k)
                .query_async(&mut conn)
                .await
                .unwrap();
            assert!(vals.iter().all(|v| v != key));
        }
    }
    // An empty body is fine too.
    let (status, body, _) = post(&app, "", &[JSON]).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["displayName"], Value::Null);
}

#[tokio::test]
async fn display_name_and_label_validation() {
    let app = spawn_app_with(|c| c.gateway.mode = horst_config::GatewayMode::On).await;
    horst_identity::accounts::create_account(&app.store, "hanna", 0)
        .await
        .unwrap();
    // Each creation uses the per-network cap; spread over addresses with a trusted proxy
    // would need config, so check invalid ones (which do not count) and few valid ones.
    for bad in [
        json!({"displayName": ""}),
        json!({"displayName": "\u{200B}\u{202E}"}),
        json!({"displayName": "x".repeat(31)}),
        json!({"displayName": "Admin"}),
        json!({"displayName": "Hanna"}),
        // Look-alikes read as the name they imitate: fullwidth, Cyrillic, mathematical.
        json!({"displayName": "ａｄｍｉｎ"}),
        json!({"displayName": "\u{0430}dmin"}),
        json!({"displayName": "Ｈanna"}),
        json!({"displayName": "\u{041D}\u{0430}nna"}),
        json!({"displayName": "𝐡𝐚𝐧𝐧𝐚"}),
        json!({"displayName": "agent-0123abcd"}),
        json!({"displayName": 5}),
        json!({"label": "l".repeat(41)}),
        json!({"nick": "x"}),
    ] {
        let (status, body, _) = post(&app, &bad.to_string(), &[JSON]).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["code"], "invalid_input");
        assert!(body["error"].is_string());
    }
    // An unknown field is echoed cut, as the MCP endpoint echoes names (it was echoed whole:
    // up to the 16 KiB body, control characters included).
    let long = format!("n\u{202E}{}", "k".repeat(8_000));
    let (status, body, _) = post(&app, &json!({ long: 1 }).to_string(), &[JSON]).await;
    assert_eq!(status, 400, "{body}");
    let m = body["error"].as_str().unwrap();
    assert!(m.len() < 200 && !m.contains('\u{202E}'), "{m}");
    assert!(m.contains("allowed: displayName, label"), "{m}");
    let (status, body, _) = post(
        &app,
        &json!({"displayName": "x".repeat(30), "label": "l".repeat(40)}).to_string(),
        &[JSON],
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body, _) = post(
        &app,
        &json!({"displayName": " Vo\u{200B}gel\u{202E} "}).to_string(),
        &[JSON],
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["displayName"], "Vogel");
}

#[tokio::test]
async fn origin_content_type_and_method() {
    let app = spawn_gateway().await;
    let (status, body, _) = post(&app, "{}", &[JSON, ("origin", "https://gcv.example")]).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("origin")));
    let (status, body, _) = post(&app, "{}", &[("content-type", "text/plain")]).await;
    assert_eq!((status, body["code"].as_str()), (415, Some("content_type")));
    let (status, _, _) = post(&app, "{}", &[]).await;
    assert_eq!(status, 415);
    let r = app
        .http
        .get(app.url("/api/agent-keys"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "POST");
}

#[tokio::test]
async fn three_keys_per_network_per_day() {
    let app = spawn_gateway().await;
    for _ in 0..3 {
        let (status, body, _) = post(&app, "{}", &[JSON]).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, body, headers) = post(&app, "{}", &[JSON]).await;
    assert_eq!(status, 429);
    assert_eq!(body["code"], "network_cap");
    let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait > 86_000 && wait <= 86_400, "{wait}");
}

/// A display name that equals a person's account name is refused (so nobody passes for
/// them), but once the network's keys are used up that refusal must not answer otherwise
/// than the cap does: anyone could then ask, as often as the burst limit lets them and
/// without creating anything, which account names exist (the sign-up's caps are looked at
/// before the name for the same reason).
#[tokio::test]
async fn a_spent_cap_does_not_tell_which_account_names_exist() {
    let app = spawn_gateway().await;
    horst_identity::accounts::create_account(&app.store, "hanna", 0)
        .await
        .unwrap();
    for _ in 0..3 {
        let (status, body, _) = post(&app, "{}", &[JSON]).await;
        assert_eq!(status, 201, "{body}");
    }
    let mut answers = Vec::new();
    for name in ["Hanna", "Ｈanna", "Nobody"] {
        let (status, body, _) =
            post(&app, &json!({ "displayName": name }).to_string(), &[JSON]).await;
        answers.push((status, body["code"].clone()));
    }
    assert_eq!(
        answers,
        vec![(429, json!("network_cap")); 3],
        "an existing name answered otherwise than a free one"
    );
}

#[tokio::test]
async fn fifty_keys_in_total_per_day() {
    // Behind a trusted proxy every request may come from its own network.
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.server.trusted_proxies = vec!["127.0.0.1".into()];
        c.gateway.burst_per_ip_per_minute = 1000;
    })
    .await;
    for i in 0..50 {
        let ip = format!("198.51.{i}.7");
        let (status, body, _) = post(&app, "{}", &[JSON, ("x-forwarded-for", &ip)]).await;
        assert_eq!(status, 201, "{i}: {body}");
    }
    let (status, body, headers) =
        post(&app, "{}", &[JSON, ("x-forwarded-for", "203.0.113.1")]).await;
    assert_eq!(status, 429);
    assert_eq!(body["code"], "daily_cap");
    assert!(headers.contains_key("retry-after"));
}

#[tokio::test]
async fn self_service_off_is_404() {
    let app = spawn_app_with(|c| c.gateway.self_service_keys = false).await;
    let (status, _, _) = post(&app, "{}", &[JSON]).await;
    assert_eq!(status, 404);
    horst_gateway::set_self_service(&app.store, true)
        .await
        .unwrap();
    let (status, _, _) = post(&app, "{}", &[JSON]).await;
    assert_eq!(status, 201);
    horst_gateway::set_self_service(&app.store, false)
        .await
        .unwrap();
    let (status, _, _) = post(&app, "{}", &[JSON]).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn at_most_five_active_keys_per_account() {
    let app = spawn_gateway().await;
    horst_identity::accounts::create_account(&app.store, "ines", 1)
        .await
        .unwrap();
    let mut keys = Vec::new();
    for _ in 0..5 {
        keys.push(
            horst_identity::accounts::create_key(&app.store, "ines", Some("k"))
                .await
                .unwrap(),
        );
    }
    assert!(
        horst_identity::accounts::create_key(&app.store, "ines", None)
            .await
            .is_err()
    );
    horst_identity::accounts::revoke_key(&app.store, &keys[0].prefix)
        .await
        .unwrap();
    assert!(
        horst_identity::accounts::create_key(&app.store, "ines", None)
            .await
            .is_ok()
    );
}

/// `horst admin ...` for the gateway, against the running app's Redis.
fn admin(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let url = app.redis().url();
    let mut all = vec!["admin"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--redis", &url]);
    let mut p = crate::harness::HorstProcess::spawn(&all, &[], dir.path());
    let status = p
        .wait_exit(std::time::Duration::from_secs(60))
        .expect("admin exits");
    (status.success(), p.stdout(), p.stderr())
}

#[tokio::test]
async fn operator_commands() {
    let app = spawn_gateway().await;
    let (ok, out, err) = admin(&app, &["account", "create", "kurt", "--trust", "1"]);
    assert!(ok, "{out}\n{err}");
    let (ok, out, err) = admin(&app, &["key", "create", "kurt", "--label", "ci"]);
    assert!(ok, "{err}");
    let key = out
        .lines()
        .find(|l| l.starts_with("gcv_"))
        .expect("the key on its own line")
        .to_string();
    assert_eq!(out.trim(), key, "only the key on stdout");
    let acct = horst_identity::accounts::load_account(&app.store, "kurt")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(acct.trust, 1);
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&key))
            .await
            .status,
        200
    );
    let (ok, _, err) = admin(&app, &["account", "block", "kurt"]);
    assert!(ok, "{err}");
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&key))
            .await
            .status,
        403
    );
    let (ok, _, _) = admin(&app, &["account", "unblock", "kurt"]);
    assert!(ok);
    let (ok, _, err) = admin(&app, &["key", "revoke", &key[..12]]);
    assert!(ok, "{err}");
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&key))
            .await
            .status,
        401
    );
    let (ok, _, _) = admin(&app, &["key", "create", "nobody"]);
    assert!(!ok);
    let (ok, _, _) = admin(&app, &["gateway", "read-only"]);
    assert!(ok);
    assert_eq!(
        app.call("my_submissions", json!({}), None).await.status,
        403
    );
    let (ok, _, _) = admin(&app, &["gateway", "off"]);
    assert!(ok);
    assert_eq!(app.rpc("ping", json!({}), None).await.status, 404);
    let (ok, _, _) = admin(&app, &["self-service", "off"]);
    assert!(ok);
    let (status, _, _) = post(&app, "{}", &[JSON]).await;
    assert_eq!(status, 404);
}

/// The `Bearer` scheme is case-insensitive (RFC 9110, 11.1), and clients differ in how they
/// write it: `BEARER gcv_...` (and a tab after the scheme) was refused with 401 "unknown,
/// malformed or revoked agent key" while `Bearer` and `bearer` were taken, so an agent with
/// a valid key was told its key was bad. Another scheme or no key stays a 401.
#[tokio::test]
async fn the_bearer_scheme_is_read_in_any_case() {
    let app = spawn_gateway().await;
    let key = app.agent_key("kolkrabe", 0).await;
    let call = |auth: String| {
        let app = &app;
        async move {
            let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"my_submissions","arguments":{}}});
            app.mcp_raw(
                body.to_string(),
                &[
                    ("mcp-protocol-version", "2025-11-25"),
                    ("authorization", auth.as_str()),
                ],
            )
            .await
        }
    };
    for auth in [
        format!("Bearer {key}"),
        format!("bearer {key}"),
        format!("BEARER {key}"),
        format!("BeArEr {key}"),
        format!("Bearer\t{key}"),
    ] {
        let a = call(auth.clone()).await;
        assert_eq!(a.status, 200, "{auth:?}: {}", a.text);
        assert_eq!(a.body["result"]["isError"], false, "{auth:?}: {}", a.text);
    }
    for auth in [format!("Basic {key}"), key.clone(), format!("Bearer{key}")] {
        let a = call(auth.clone()).await;
        assert_eq!(a.status, 401, "{auth:?}: {}", a.text);
    }
}
