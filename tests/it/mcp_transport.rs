//! The MCP endpoint's transport rules (contract: "Endpoint", "Errors").

use serde_json::{json, Value};

use crate::harness::{spawn_app, spawn_app_with, spawn_gateway};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn init_with(version: &str) -> String {
    json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":version,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}).to_string()
}

#[tokio::test]
async fn initialize_negotiates_a_served_revision() {
    let app = spawn_gateway().await;
    let a = app.mcp_raw(INIT, &[]).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["result"]["protocolVersion"], "2025-11-25");
    assert!(a.body["result"]["capabilities"]["tools"].is_object());
    assert_eq!(a.body["id"], 1);
    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let a = app.mcp_raw(init_with(asked), &[]).await;
        assert_eq!(a.body["result"]["protocolVersion"], got, "asked {asked}");
    }
}

#[tokio::test]
async fn later_requests_need_a_served_protocol_version_header() {
    let app = spawn_gateway().await;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let a = app.mcp_raw(ping, &[]).await;
    assert_eq!(a.status, 400, "missing header: {}", a.text);
    assert_eq!(a.body["error"]["code"], -32022);
    assert_eq!(
        a.body["error"]["data"]["supported"],
        json!(["2025-11-25", "2025-06-18"])
    );
    for bad in ["2025-03-26", "2026-07-28", "nonsense"] {
        let a = app.mcp_raw(ping, &[("mcp-protocol-version", bad)]).await;
        assert_eq!(a.status, 400, "{bad}: {}", a.text);
    }
    for good in ["2025-11-25", "2025-06-18"] {
        let a = app.mcp_raw(ping, &[("mcp-protocol-version", good)]).await;
        assert_eq!(a.status, 200, "{good}: {}", a.text);
        assert_eq!(a.body["result"], json!({}));
    }
    // A notification without the header is refused too.
    let n = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(app.mcp_raw(n, &[]).await.status, 400);
}

#[tokio::test]
async fn notifications_and_responses_answer_202_with_an_empty_body() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &v,
        )
        .await;
    assert_eq!(a.status, 202);
    assert!(a.text.is_empty());
    let a = app
        .mcp_raw(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#, &v)
        .await;
    assert_eq!(a.status, 202);
    assert!(a.text.is_empty());
}

#[tokio::test]
async fn batches_and_malformed_json_are_400() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let a = app.mcp_raw(format!("[{INIT}]"), &v).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["jsonrpc"], "2.0");
    assert!(a.body["error"]["code"].is_i64());
    let a = app.mcp_raw("{\"jsonrpc\":\"2.0\",", &v).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["code"], -32700);
    let a = app
        .mcp_raw(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, &v)
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["code"], -32600);
}

/// JSON-RPC allows positional (array) params, but every MCP method takes named ones: an array
/// is -32602 for every offered method (it was read as "no params": `initialize` with `[...]`
/// negotiated a revision, `tools/list` and `ping` answered as if it were absent), while an
/// unknown method stays -32601.
#[tokio::test]
async fn positional_params_are_invalid_params() {
    let app = spawn_gateway().await;
    let init = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":["2025-11-25",{},{"name":"t","version":"1"}]}"#;
    let a = app.mcp_raw(init, &[]).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["id"], "i", "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    assert!(a.body.get("result").is_none(), "{}", a.text);
    let msg = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("object"),
        "the message says what to send: {msg}"
    );
    let v = [("mcp-protocol-version", "2025-11-25")];
    for method in [
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    ] {
        for params in [
            json!([]),
            json!(["gcv://format"]),
            json!([{"name": "get_map_format"}]),
        ] {
            let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
            let a = app.mcp_raw(body.to_string(), &v).await;
            assert_eq!(a.status, 200, "{method} {params}: {}", a.text);
            assert_eq!(a.body["id"], 7, "{method} {params}: {}", a.text);
            assert_eq!(
                a.body["error"]["code"], -32602,
                "{method} {params}: {}",
                a.text
            );
        }
    }
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","id":8,"method":"nope/nope","params":[1]}"#,
            &v,
        )
        .await;
    assert_eq!(a.body["error"]["code"], -32601, "{}", a.text);
    // Named params (and none) still work.
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{}}"#,
            &v,
        )
        .await;
    assert_eq!(a.body["result"], json!({}), "{}", a.text);
}

#[tokio::test]
async fn unknown_methods_are_32601() {
    let app = spawn_gateway().await;
    let a = app
        .rpc(
            "resources/subscribe",
            json!({ "uri": "gcv://format" }),
            None,
        )
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["error"]["code"], -32601);
    let a = app.rpc("server/discover", json!({}), None).await;
    assert_eq!(a.body["error"]["code"], -32601);
}

#[tokio::test]
async fn only_post_is_allowed() {
    let app = spawn_gateway().await;
    for method in [
        reqwest::Method::GET,
        reqwest::Method::DELETE,
        reqwest::Method::PUT,
        reqwest::Method::PATCH,
    ] {
        let r = app
            .http
            .request(method.clone(), app.url("/api/mcp"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405, "{method}");
        assert_eq!(r.headers()["allow"], "POST");
        let body: Value = r.json().await.unwrap();
        assert!(body["error"]["message"].is_string());
    }
    // 405 comes before any other check: even with the gateway off.
    let off = spawn_app().await;
    let r = off.http.get(off.url("/api/mcp")).send().await.unwrap();
    assert_eq!(r.status(), 405);
}

#[tokio::test]
async fn gateway_off_is_404() {
    let app = spawn_app().await; // default mode: off
    let a = app.mcp_raw(INIT, &[]).await;
    assert_eq!(a.status, 404);
    assert!(a.body["error"].is_object());
    // The message says what to do about it.
    let msg = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("try again later"), "{msg}");
    // Switched on at run time through the stored switch, then off again.
    horst_gateway::set_mode(&app.store, horst_config::GatewayMode::On)
        .await
        .unwrap();
    assert_eq!(app.mcp_raw(INIT, &[]).await.status, 200);
    horst_gateway::set_mode(&app.store, horst_config::GatewayMode::Off)
        .await
        .unwrap();
    assert_eq!(app.mcp_raw(INIT, &[]).await.status, 404);
}

/// The contract names 405 (any method but POST), 404 (gateway off) and 403 (a refused
/// `Origin`) without saying which wins; docs/agents.md does: method, switch, then Origin.
#[tokio::test]
async fn refusals_that_meet_answer_in_the_documented_order() {
    let off =
        spawn_app_with(|c| c.gateway.allowed_origins = vec!["https://gcv.example".into()]).await;
    let get = off
        .http
        .get(off.url("/api/mcp"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405, "a GET with a refused Origin");
    let post = off
        .mcp_raw(INIT, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(
        post.status, 404,
        "a refused Origin while the gateway is off"
    );
}

#[tokio::test]
async fn origins_not_on_the_allowlist_are_403() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.allowed_origins = vec!["https://gcv.example".into()];
    })
    .await;
    let a = app
        .mcp_raw(INIT, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(a.status, 403);
    assert!(a.body["error"].is_object());
    let a = app
        .mcp_raw(INIT, &[("origin", "https://gcv.example")])
        .await;
    assert_eq!(a.status, 200);
    let a = app.mcp_raw(INIT, &[]).await;
    assert_eq!(a.status, 200);
    // A page of an allowed origin can actually call: its preflight passes and the answer
    // names it (without CORS the browser blocked both, whatever the allowlist said). Other
    // origins get no CORS at all.
    let preflight = |origin: &'static str| {
        app.http
            .request(reqwest::Method::OPTIONS, app.url("/api/mcp"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, authorization",
            )
            .send()
    };
    let r = preflight("https://gcv.example").await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://gcv.example"
    );
    assert!(r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("authorization"));
    let r = preflight("https://evil.example").await.unwrap();
    assert_ne!(r.status().as_u16(), 204);
    assert!(!r.headers().contains_key("access-control-allow-origin"));
    let r = app
        .http
        .post(app.url("/api/mcp"))
        .header("origin", "https://gcv.example")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "https://gcv.example"
    );
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let app = spawn_gateway().await;
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/jsonx",
    ] {
        let r = app
            .http
            .post(app.url("/api/mcp"))
            .header("content-type", ct)
            .body(INIT)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 415, "{ct}");
        // The refusal names the request it could read (it said id null).
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["id"], 1, "{ct}: {body}");
        assert_eq!(body["error"]["code"], -32001, "{ct}: {body}");
    }
    let r = app
        .http
        .post(app.url("/api/mcp"))
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415, "no content type");
    for ct in ["application/json; charset=utf-8", "Application/JSON"] {
        let r = app
            .http
            .post(app.url("/api/mcp"))
            .header("content-type", ct)
            .body(INIT)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{ct}");
    }
}

/// `{"jsonrpc":"2.0","id":3,"method":"ping"}`, gzip-compressed.
const PING_GZIP: [u8; 58] = [
    31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 171, 86, 202, 42, 206, 207, 43, 42, 72, 86, 178, 82, 50, 210,
    51, 80, 210, 81, 202, 76, 81, 178, 50, 214, 81, 202, 77, 45, 201, 200, 7, 50, 149, 10, 50, 243,
    210, 149, 106, 1, 119, 124, 77, 169, 40, 0, 0, 0,
];

/// A compressed body is refused as what it is: 415 naming the coding, with
/// `Accept-Encoding: identity` (RFC 9110 15.5.16). It was read as the JSON text itself: a gzip
/// body was a 400 "not valid JSON" that did not say why, and a plain body labelled gzip was
/// answered as if the label were not there.
#[tokio::test]
async fn a_compressed_body_is_415_naming_the_coding() {
    let app = spawn_gateway().await;
    let v = ("mcp-protocol-version", "2025-11-25");
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    for (coding, body) in [
        ("gzip", PING_GZIP.to_vec()),
        ("GZIP", PING_GZIP.to_vec()),
        ("br", ping.as_bytes().to_vec()),
        ("deflate, gzip", ping.as_bytes().to_vec()),
    ] {
        let a = app.mcp_raw(body, &[v, ("content-encoding", coding)]).await;
        assert_eq!(a.status, 415, "{coding}: {}", a.text);
        assert_eq!(a.body["error"]["code"], -32001, "{coding}: {}", a.text);
        let m = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            m.contains("Content-Encoding") && m.contains("uncompressed"),
            "{coding}: {m}"
        );
        assert_eq!(
            a.headers
                .get("accept-encoding")
                .map(|h| h.to_str().unwrap()),
            Some("identity"),
            "{coding}"
        );
    }
    // No coding, or `identity`, is the body as it is.
    for coding in ["identity", "Identity", ""] {
        let a = app.mcp_raw(ping, &[v, ("content-encoding", coding)]).await;
        assert_eq!(a.status, 200, "{coding:?}: {}", a.text);
        assert_eq!(a.body["id"], 3);
    }
    // The agent-key route says it in its own shape.
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(PING_GZIP.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    assert_eq!(
        r.headers()
            .get("accept-encoding")
            .map(|h| h.to_str().unwrap()),
        Some("identity")
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], "content_type", "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("Content-Encoding"),
        "{body}"
    );
}

#[tokio::test]
async fn bodies_over_3_mib_are_413_and_3_mib_is_read() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let limit = 3 * 1024 * 1024;
    // Exactly 3 MiB: a validate_map call padded with spaces (JSON whitespace).
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"validate_map","arguments":{"map":"x"}}}).to_string();
    let padded = format!("{call}{}", " ".repeat(limit - call.len()));
    assert_eq!(padded.len(), limit);
    let a = app.mcp_raw(padded.clone(), &v).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let a = app.mcp_raw(format!("{padded} "), &v).await;
    assert_eq!(a.status, 413);
    assert!(a.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("3 MiB"));
    // ... and how to send less.
    let msg = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("256 KiB") && msg.contains("1 MiB"), "{msg}");
    // A much larger body still gets its answer rather than a reset.
    let a = app.mcp_raw(" ".repeat(8 * limit), &v).await;
    assert_eq!(a.status, 413);
}

#[tokio::test]
async fn key_tools_without_a_key_are_401_with_www_authenticate() {
    let app = spawn_gateway().await;
    let a = app
        .call(
            "playtest_map",
            json!({"map": "x", "idempotencyKey": "k"}),
            None,
        )
        .await;
    assert_eq!(a.status, 401);
    assert_eq!(a.headers["www-authenticate"], "Bearer");
    assert!(a.body["error"].is_object());
}

#[tokio::test]
async fn unknown_malformed_and_revoked_keys_are_401() {
    let app = spawn_gateway().await;
    let key = app.agent_key("carla", 0).await;
    let fake = format!("gcv_{}", "0".repeat(48));
    for bad in ["gcv_short", fake.as_str(), "not-a-key"] {
        let a = app.call("list_labor", json!({}), Some(bad)).await;
        assert_eq!(a.status, 401, "{bad}");
        assert_eq!(a.headers["www-authenticate"], "Bearer");
    }
    let a = app.rpc("tools/list", json!({}), None).await;
    assert_eq!(a.status, 200);
    let a = app.call("my_submissions", json!({}), Some(&key)).await;
    assert_eq!(a.status, 200, "{}", a.text);
    horst_identity::accounts::revoke_key(&app.store, &key[..12])
        .await
        .unwrap();
    let a = app.call("my_submissions", json!({}), Some(&key)).await;
    assert_eq!(a.status, 401);
    assert_eq!(a.headers["www-authenticate"], "Bearer");
}

/// A key revoked while its `submit_level` waits for its check publishes nothing: the contract
/// lists "revoked key" under `forbidden`, the domain failure of a call already under way (a
/// revoked key's next request is the 401 above). It was stored in the Labor as if the key
/// were still good, so revoking a leaked key did not stop what it had already sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_while_its_submission_waits_publishes_nothing() {
    use crate::harness::{error_code, LEVEL_MAP, LEVEL_REPLAY};
    use std::time::{Duration, Instant};
    let app = spawn_gateway().await;
    let key = app.agent_key("erik", 0).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args =
        json!({"name": "erik-level", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "s1"});
    // No worker runs yet, so the submission waits in the queue; the key is revoked there and
    // then a worker checks it (well within the 8 s a job waits for a worker to appear).
    let (a, _worker) = tokio::join!(app.call("submit_level", args, Some(&key)), async {
        let until = Instant::now() + Duration::from_secs(30);
        while app.queue.active_ids().await.unwrap().is_empty() {
            assert!(Instant::now() < until, "the submission was never queued");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        horst_identity::accounts::revoke_key(&app.store, &key[..12])
            .await
            .unwrap();
        app.start_engine_worker()
    });
    assert_eq!(error_code(&a), "forbidden", "{}", a.text);
    assert!(a.text.contains("revoked"), "{}", a.text);
    let labor = app.call("list_labor", json!({}), None).await;
    assert!(!labor.text.contains("erik-level"), "{}", labor.text);
    let level = app
        .call("get_level", json!({"name": "erik-level"}), None)
        .await;
    assert_eq!(error_code(&level), "not_found", "{}", level.text);
}

#[tokio::test]
async fn blocked_accounts_are_403_on_any_request() {
    let app = spawn_gateway().await;
    let key = app.agent_key("dora", 0).await;
    horst_identity::accounts::set_account_field(&app.store, "dora", "blocked", "1")
        .await
        .unwrap();
    let a = app.call("get_map_format", json!({}), Some(&key)).await;
    assert_eq!(a.status, 403);
    let a = app
        .mcp_raw(INIT, &[("authorization", &format!("Bearer {key}"))])
        .await;
    assert_eq!(a.status, 403);
}

#[tokio::test]
async fn read_only_lists_only_anonymous_tools_and_refuses_key_tools() {
    let app = spawn_app_with(|c| c.gateway.mode = horst_config::GatewayMode::ReadOnly).await;
    let key = app.agent_key("erik", 0).await;
    let a = app.rpc("tools/list", json!({}), None).await;
    let names: Vec<&str> = a.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "get_map_format",
            "list_palette",
            "validate_map",
            "render_map",
            "get_level",
            "list_labor"
        ]
    );
    let a = app.call("my_submissions", json!({}), Some(&key)).await;
    assert_eq!(a.status, 403);
    assert!(a.body["error"].is_object());
    let a = app.call("validate_map", json!({"map": "x"}), None).await;
    assert_eq!(a.status, 200);
}

#[tokio::test]
async fn tools_list_is_strict_and_complete() {
    let app = spawn_gateway().await;
    let a = app.rpc("tools/list", json!({}), None).await;
    let tools = a.body["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 18);
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object");
        assert_eq!(
            t["inputSchema"]["additionalProperties"], false,
            "{}",
            t["name"]
        );
        assert!(t["outputSchema"].is_object());
        assert!(t["title"].is_string());
        for hint in ["readOnlyHint", "idempotentHint", "destructiveHint"] {
            assert!(t["annotations"][hint].is_boolean(), "{} {hint}", t["name"]);
        }
    }
    let render = tools.iter().find(|t| t["name"] == "render_map").unwrap();
    assert_eq!(render["inputSchema"]["properties"]["width"]["maximum"], 120);
    assert_eq!(render["inputSchema"]["properties"]["height"]["maximum"], 30);
}

#[tokio::test]
async fn unknown_tool_is_an_invalid_params_error() {
    let app = spawn_gateway().await;
    let a = app.call("fly", json!({}), None).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["error"]["code"], -32602);
    // So is `arguments` that is not an object: a malformed CallToolRequest (it came back as
    // the tool's invalid_input). Left out or null is no arguments.
    for arguments in [json!("x"), json!([1]), json!(5)] {
        let a = app.call("validate_map", arguments.clone(), None).await;
        assert_eq!(a.body["error"]["code"], -32602, "{arguments}: {}", a.text);
    }
    let a = app.call("get_map_format", Value::Null, None).await;
    assert!(a.body["result"].is_object(), "{}", a.text);
}

#[tokio::test]
async fn the_agent_guide_is_served_as_escaped_text() {
    let app = spawn_app().await; // the guide is public even while the gateway is off
    let r = app.http.get(app.url("/agents.html")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    // Styles from its own stylesheet only: no inline style, none allowed.
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("style-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let page = r.text().await.unwrap();
    assert!(
        !page.contains("<style") && !page.contains("style="),
        "an inline style"
    );
    assert!(page.contains("<link rel=\"stylesheet\" href=\"/agents.css\">"));
    let css = app.http.get(app.url("/agents.css")).send().await.unwrap();
    assert_eq!(css.status(), 200);
    assert!(css.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/css"));
    assert!(css.text().await.unwrap().contains("pre code{"));
    assert!(page.contains(
        "claude mcp add --transport http horst http://127.0.0.1:8080/api/mcp --header \"Authorization: Bearer &lt;key&gt;\""
    ));
    assert!(page.contains("The recommended loop"));
    assert!(!page.contains("<key>"), "markdown text is escaped");
}

#[tokio::test]
async fn tool_calls_are_counted_by_tool_and_outcome() {
    let app = spawn_gateway().await;
    app.call("validate_map", json!({"map": "x"}), None).await;
    app.call("validate_map", json!({"map": ""}), None).await;
    let text = app
        .http
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains(r#"horst_gateway_tool_calls_total{tool="validate_map",outcome="ok"} 1"#),
        "{text}"
    );
    assert!(text.contains(
        r#"horst_gateway_tool_calls_total{tool="validate_map",outcome="invalid_input"} 1"#
    ));
}

/// The lists of one page give no `nextCursor`, so a cursor sent to them is invalid: -32602 with
/// what to do, as `resources/list` answers a cursor it never gave (it was ignored, and the one
/// page came back as if it were the next).
#[tokio::test]
async fn a_cursor_no_list_gave_is_invalid_params() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    for method in ["tools/list", "prompts/list", "resources/templates/list"] {
        let body =
            json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"cursor": "abc"}});
        let a = app.mcp_raw(body.to_string(), &v).await;
        assert_eq!(a.status, 200, "{method}: {}", a.text);
        assert_eq!(a.body["error"]["code"], -32602, "{method}: {}", a.text);
        let msg = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("without a cursor"), "{method}: {msg}");
        // Without one (or with null) the page comes back.
        for params in [json!({}), json!({"cursor": null})] {
            let body = json!({"jsonrpc": "2.0", "id": 4, "method": method, "params": params});
            let a = app.mcp_raw(body.to_string(), &v).await;
            assert!(
                a.body.get("result").is_some(),
                "{method} {params}: {}",
                a.text
            );
        }
    }
}

/// An id JSON-RPC cannot echo is -32600, and the message says what an id may be: a
/// number beyond 64 bits or with a fraction was told "must be a string or an integer",
/// though its sender had sent what reads as an integer.
#[tokio::test]
async fn an_id_that_is_not_one_says_what_an_id_may_be() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    for id in ["123456789012345678901234567890", "1.5", "null", "true"] {
        let a = app
            .mcp_raw(
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                &v,
            )
            .await;
        assert_eq!(a.status, 400, "{id}: {}", a.text);
        assert_eq!(a.body["error"]["code"], -32600, "{id}: {}", a.text);
        let m = a.body["error"]["message"].as_str().unwrap();
        assert!(m.contains("within 64 bits"), "{id}: {m}");
    }
    // The largest ids that fit are echoed, and a whole number written as a float (as
    // Python's json.dumps(7.0) writes it) is echoed as it was sent (it was refused).
    for id in [
        "18446744073709551615",
        "-9223372036854775808",
        "7.0",
        "-3.0",
    ] {
        let a = app
            .mcp_raw(
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                &v,
            )
            .await;
        assert_eq!(a.status, 200, "{id}: {}", a.text);
        assert_eq!(a.body["id"].to_string(), id, "{}", a.text);
    }
}

/// An id written `-0` is the integer 0 to its sender: it was echoed `-0.0`, a float, which a
/// client that reads ids as integers (Rust's rmcp, Go's int64 ids) cannot match to its
/// request. It is echoed as `0`, on an answer and on a refusal alike.
#[tokio::test]
async fn an_id_of_minus_zero_is_echoed_as_the_integer_zero() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let a = app
        .mcp_raw(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#, &v)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["id"].to_string(), "0", "{}", a.text);
    assert!(a.body["id"].is_u64() || a.body["id"].is_i64(), "{}", a.text);
    // A refusal after the body was read (a missing protocol version) echoes it so too.
    let a = app
        .mcp_raw(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#, &[])
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["id"].to_string(), "0", "{}", a.text);
    // And a refusal of the HTTP layer that read the body (a wrong content type).
    let r = app
        .http
        .post(app.url("/api/mcp"))
        .header("content-type", "text/plain")
        .body(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["id"].to_string(), "0", "{body}");
}

/// `1e400` is valid JSON (RFC 8259's grammar has no range; Python reads it as inf, JavaScript
/// as Infinity), only too large for a double. A message holding one was refused whole as
/// "the body is not valid JSON" (-32700, id null), so a tool argument out of range was never
/// the tool's `invalid_input` and the client could not tell which request failed. Such a
/// number now reads as the largest double of its sign: too large for any field, and said so
/// by the field's own check, with the request's id.
#[tokio::test]
async fn a_number_too_large_for_a_double_is_out_of_range_not_malformed_json() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    for x in ["1e400", "-1e400", "1E+999"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"render_map","arguments":{{"map":"gcv-map 1","x":{x},"y":0,"width":1,"height":1}}}}}}"#
        );
        let a = app.mcp_raw(body, &v).await;
        assert_eq!(a.status, 200, "{x}: {}", a.text);
        assert_eq!(a.body["id"], 9, "{x}: {}", a.text);
        assert_eq!(a.body["result"]["isError"], true, "{x}: {}", a.text);
        let text: Value =
            serde_json::from_str(a.body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["error"]["code"], "invalid_input", "{x}: {text}");
        assert!(
            text["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("`x` must be an integer"),
            "{x}: {text}"
        );
    }
    // In a string it is text, and stays as written.
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","id":"1e400","method":"ping","params":{"_meta":{"n":"\"1e400"}}}"#,
            &v,
        )
        .await;
    assert_eq!(
        (a.status, a.body["id"].as_str()),
        (200, Some("1e400")),
        "{}",
        a.text
    );
    // As an id it is a number too large for one: -32600, which says so.
    let a = app
        .mcp_raw(r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#, &v)
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32600, "{}", a.text);
    // Broken JSON is still -32700.
    let a = app
        .mcp_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1e400"#, &v)
        .await;
    assert_eq!(a.body["error"]["code"], -32700, "{}", a.text);
}

/// Sends a request head announcing `length` body bytes, and no body: the answer (status and
/// body) that arrives within `limit`, or `None`.
async fn announce_only(
    addr: std::net::SocketAddr,
    path: &str,
    length: usize,
    limit: std::time::Duration,
) -> Option<(u16, Value)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {length}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if body.len() >= length {
                let status = head.split(' ').nth(1)?.parse().ok()?;
                return Some((status, serde_json::from_str(body).unwrap_or(Value::Null)));
            }
        }
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) | Ok(Ok(0)) | Ok(Err(_)) => return None,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A client announcing a body over a route's limit is refused at once with 413, before any
/// of the body is sent (it was waited for until the body's 20 s deadline, then a 400): the
/// MCP endpoint (its JSON-RPC error), the agent-key endpoint and a JSON REST route (their
/// `{error, code}`). A body within the limit that does not come still waits (not a 413).
#[tokio::test]
async fn an_announced_body_over_the_limit_is_413_before_it_is_read() {
    let app = spawn_gateway().await;
    let soon = std::time::Duration::from_secs(5);
    let (status, body) = announce_only(app.addr, "/api/mcp", 4 * 1024 * 1024, soon)
        .await
        .expect("no answer within 5 s to a 4 MiB Content-Length");
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], -32001, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("3 MiB"),
        "{body}"
    );
    let (status, body) = announce_only(app.addr, "/api/agent-keys", 64 * 1024, soon)
        .await
        .expect("no answer within 5 s from /api/agent-keys");
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], "too_large", "{body}");
    let (status, body) = announce_only(app.addr, "/api/account/sign-up", 1024 * 1024, soon)
        .await
        .expect("no answer within 5 s from /api/account/sign-up");
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], "too_large", "{body}");
    // Within the limit, the server waits for the body.
    assert!(announce_only(
        app.addr,
        "/api/mcp",
        1024,
        std::time::Duration::from_secs(2)
    )
    .await
    .is_none());
}

/// With Redis gone, the tools that need no store still answer (`ping`, `validate_map`: the
/// gateway's mode read last holds), and a call that needs the store is a 503 that echoes the
/// caller's id (all were 503 with id null: the mode was read before the id was known). A
/// process that never read the mode answers 503 with the caller's id too.
#[tokio::test]
async fn without_redis_store_free_calls_answer_and_every_refusal_echoes_the_id() {
    let redis = horst_testkit::RedisServer::start();
    let mut app =
        crate::harness::spawn_app_on(redis, |c| c.gateway.mode = horst_config::GatewayMode::On)
            .await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let ping = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"ping"}).to_string();
    let a = app.mcp_raw(ping(1), &v).await;
    assert_eq!(a.status, 200, "{}", a.text);
    // Another API process on the same Redis that has not read the mode yet.
    let fresh =
        crate::harness::spawn_app_beside(&app, |c| c.gateway.mode = horst_config::GatewayMode::On)
            .await;
    app.redis_mut().kill();

    let a = app.mcp_raw(ping(41), &v).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["id"], 41, "{}", a.text);
    assert_eq!(a.body["result"], json!({}), "{}", a.text);
    let validate = json!({"jsonrpc":"2.0","id":"v-42","method":"tools/call",
        "params":{"name":"validate_map","arguments":{"map": crate::harness::LEVEL_MAP}}});
    let a = app.mcp_raw(validate.to_string(), &v).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["id"], "v-42", "{}", a.text);
    assert_eq!(
        a.body["result"]["structuredContent"]["valid"], true,
        "{}",
        a.text
    );
    let get = json!({"jsonrpc":"2.0","id":43,"method":"tools/call",
        "params":{"name":"get_level","arguments":{"name":"erste-schritte"}}});
    let a = app.mcp_raw(get.to_string(), &v).await;
    assert_eq!(a.status, 503, "{}", a.text);
    assert_eq!(a.body["id"], 43, "{}", a.text);
    assert!(a.headers.get("retry-after").is_some());

    // The other process cannot know the mode, and says so to the id it was sent.
    let a = fresh.mcp_raw(ping(44), &v).await;
    assert_eq!(a.status, 503, "{}", a.text);
    assert_eq!(a.body["id"], 44, "{}", a.text);
    assert_eq!(
        a.body["error"]["data"]["code"], "engine_unavailable",
        "{}",
        a.text
    );
}

/// A hung Redis (SIGSTOP) answers nothing within the store's response timeout (seconds):
/// once one request found it so, the next ones use the remembered mode and count the burst
/// limit in the process at once, instead of each waiting that long twice (a ping took 10 s
/// every time). After a hold, a request asks Redis again.
/// (Run beside the other waiting faults: `reliability::faults_that_wait_side_by_side`.)
pub(crate) async fn with_redis_hung_store_free_calls_do_not_each_wait_for_it() {
    use std::time::{Duration, Instant};
    let redis = horst_testkit::RedisServer::start();
    let app =
        crate::harness::spawn_app_on(redis, |c| c.gateway.mode = horst_config::GatewayMode::On)
            .await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let ping = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"ping"}).to_string();
    assert_eq!(app.mcp_raw(ping(1), &v).await.status, 200);
    let pid = app.redis().pid().unwrap() as i32;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let timed = async |id: u64| {
        let t = Instant::now();
        let a = app.mcp_raw(ping(id), &v).await;
        (a.status, a.body["id"].clone(), t.elapsed())
    };
    // The first finds Redis hung (after the response timeouts), the next ones do not wait.
    let first = timed(2).await;
    let second = timed(3).await;
    let third = timed(4).await;
    // After the hold, a request asks Redis again (and waits for it), and is answered.
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    let again = timed(5).await;
    unsafe { libc::kill(pid, libc::SIGCONT) };
    eprintln!(
        "figure: pings with Redis hung: {:?}, then {:?} and {:?}; after the hold {:?}",
        first.2, second.2, third.2, again.2
    );
    for (status, id, took) in [&first, &second, &third, &again] {
        assert_eq!(*status, 200, "{id}: {took:?}");
    }
    assert_eq!(second.1, json!(3));
    // A ping that waits for the hung Redis waits its response timeouts (5 s, twice: 10 s);
    // 4 s leaves a debug build beside the other waiting faults room on 2 busy cores.
    for (_, id, took) in [&second, &third] {
        assert!(*took < Duration::from_secs(4), "ping {id} waited {took:?}");
    }
    // Redis is back: the mode is read from it again.
    assert_eq!(app.mcp_raw(ping(6), &v).await.status, 200);
}

/// The MCP App is an extension (`io.modelcontextprotocol/ui`, SEP-1865), negotiated through
/// the capabilities' `extensions` (SEP-2133): `initialize` names it with the MIME type of
/// the app while `gateway.mcp_apps` is on, and not when the operator switched it off (then
/// no tool names the app either). It was never named, so a host that checks the server's
/// extensions before rendering a `ui://` resource showed no app.
#[tokio::test]
async fn initialize_names_the_apps_extension_while_it_is_on() {
    const UI: &str = "io.modelcontextprotocol/ui";
    let on = spawn_gateway().await;
    let a = on.mcp_raw(INIT, &[]).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body["result"]["capabilities"]["extensions"][UI],
        json!({ "mimeTypes": ["text/html;profile=mcp-app"] }),
        "{}",
        a.text
    );
    let off = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.mcp_apps = false;
    })
    .await;
    let a = off.mcp_raw(INIT, &[]).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(
        a.body["result"]["capabilities"].get("extensions").is_none(),
        "{}",
        a.text
    );
    let v = [("mcp-protocol-version", "2025-11-25")];
    for (app, apps) in [(&on, true), (&off, false)] {
        let a = app
            .mcp_raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &v)
            .await;
        let named = a.body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["_meta"]["ui"]["resourceUri"] == "ui://gcv/player");
        assert_eq!(named, apps, "{}", a.text);
    }
}

/// JSON leaves the meaning of a key written twice in one object open (RFC 8259: names
/// SHOULD be unique; parsers differ on which one counts). The gateway took the last one
/// silently: `{"name":"get_map_format","name":"validate_map"}` ran validate_map while a
/// proxy or log reading the first one saw an anonymous read tool, and two
/// `idempotencyKey`s in one call were one of them without a word. Such a message is now a
/// 400 -32600 that names the key, and its id is echoed unless the id itself is the key
/// written twice. The same key in different objects (params' `name` and an argument
/// `name`) is fine.
#[tokio::test]
async fn a_key_written_twice_in_one_object_is_refused() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_map_format","name":"validate_map","arguments":{"map":"x"}}}"#,
            "name",
            json!(5),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"render_map","arguments":{"map":"a","x":0,"y":0,"width":1,"height":1,"map":"b"}}}"#,
            "map",
            json!("a"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"simulate_replay","arguments":{"map":"a","idempotencyKey":"k","replay":{"seed":1,"actions":[{"action":8,"ticks":1,"ticks":600}]}}}}"#,
            "ticks",
            json!(6),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            "id",
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/list"}"#,
            "method",
            json!(3),
        ),
    ];
    for (body, key, id) in cases {
        let a = app.mcp_raw(body, &v).await;
        assert_eq!(a.status, 400, "{body}: {}", a.text);
        assert_eq!(a.body["error"]["code"], -32600, "{body}: {}", a.text);
        assert_eq!(a.body["id"], id, "{body}: {}", a.text);
        let m = a.body["error"]["message"].as_str().unwrap();
        assert!(
            m.contains(&format!("\"{key}\" twice")) && m.contains("send each key once"),
            "{body}: {m}"
        );
    }
    // The same key in two objects is two keys.
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_level","arguments":{"name":"nope"}}}"#,
            &v,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["id"], 9);
    assert!(a.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("not_found"));
}

/// `"params": null` is read as no params (JSON-RPC 2.0: params "MAY be omitted"; many clients
/// write the omission as null). It was -32600 "params must be an object". A null where a
/// method needs params is the method's own -32602, which says what to send.
#[tokio::test]
async fn null_params_are_read_as_no_params() {
    let app = spawn_gateway().await;
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}"#,
            &[],
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body["result"]["protocolVersion"], "2025-11-25",
        "{}",
        a.text
    );
    let v = [("mcp-protocol-version", "2025-11-25")];
    for method in ["ping", "tools/list", "prompts/list", "resources/list"] {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": null});
        let a = app.mcp_raw(body.to_string(), &v).await;
        assert_eq!(a.status, 200, "{method}: {}", a.text);
        assert!(a.body.get("result").is_some(), "{method}: {}", a.text);
    }
    let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": null});
    assert_eq!(app.mcp_raw(n.to_string(), &v).await.status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": null});
    let a = app.mcp_raw(call.to_string(), &v).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    assert_eq!(a.body["id"], 3);
    // Still refused: params that are neither an object, an array nor null.
    for bad in [json!(1), json!("x"), json!(true)] {
        let body = json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": bad});
        let a = app.mcp_raw(body.to_string(), &v).await;
        assert_eq!(a.body["error"]["code"], -32600, "{bad}: {}", a.text);
        let msg = a.body["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("null"), "says null is fine: {msg}");
    }
}
