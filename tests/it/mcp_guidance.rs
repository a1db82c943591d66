//! The gateway as agents meet it (issue 20): which tools need a key, answers that say what
//! to do next, a picture of the map, and refusals that keep the request's id.

use serde_json::{json, Value};

use crate::harness::{
    ok_result, spawn_app_with, spawn_gateway, tool_error, LEVEL_MAP, LEVEL_REPLAY,
};

#[tokio::test]
async fn tools_list_says_which_tools_need_a_key_and_the_401_says_the_same() {
    let app = spawn_gateway().await;
    let list = app.rpc("tools/list", json!({}), None).await;
    let tools = list.body["result"]["tools"].as_array().unwrap().clone();
    let keyed: Vec<&str> = tools
        .iter()
        .filter(|t| {
            t["description"]
                .as_str()
                .unwrap()
                .starts_with("Needs an agent key")
        })
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(keyed.len(), 12, "{keyed:?}");
    assert!(!keyed.contains(&"get_level") && keyed.contains(&"playtest_map"));
    for t in &tools {
        let a = &t["annotations"];
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(a[hint].is_boolean(), "{}: {hint}", t["name"]);
        }
    }
    let a = app.call("playtest_map", json!({}), None).await;
    assert_eq!(a.status, 401);
    assert_eq!(a.body["id"], 7, "the request id is kept: {}", a.text);
    let m = a.body["error"]["message"].as_str().unwrap();
    assert!(m.contains("POST /api/agent-keys"), "{m}");
}

#[tokio::test]
async fn refusals_before_the_gateway_keep_the_request_id() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 2;
    })
    .await;
    // A key that does not authenticate: 401 from the key check, before the gateway.
    let a = app.call("list_labor", json!({}), Some("gcv_nope")).await;
    assert_eq!(a.status, 401, "{}", a.text);
    assert_eq!(a.body["id"], 7, "{}", a.text);
    // The per-account burst limit: 429.
    let k = app.agent_key("ida", 1).await;
    for _ in 0..2 {
        assert_eq!(
            app.call("list_labor", json!({}), Some(&k)).await.status,
            200
        );
    }
    let a = app.call("list_labor", json!({}), Some(&k)).await;
    assert_eq!(a.status, 429, "{}", a.text);
    assert_eq!(a.body["id"], 7, "{}", a.text);
    // Read-only mode: 403 for a key tool.
    horst_gateway::set_mode(&app.store, horst_config::GatewayMode::ReadOnly)
        .await
        .unwrap();
    let a = app.call("playtest_map", json!({}), None).await;
    assert_eq!(a.status, 403, "{}", a.text);
    assert_eq!(a.body["id"], 7, "{}", a.text);
}

#[tokio::test]
async fn echoed_names_are_cut() {
    let app = spawn_gateway().await;
    let long = "x".repeat(2_000_000);
    let a = app.call(&long, json!({}), None).await;
    let m = a.body["error"]["message"].as_str().unwrap().to_string();
    assert!(
        m.contains("unknown tool") && m.len() < 200,
        "{} bytes",
        m.len()
    );
    let a = app.rpc(&long, json!({}), None).await;
    let m = a.body["error"]["message"].as_str().unwrap().to_string();
    assert!(
        m.contains("not supported") && m.len() < 300,
        "{} bytes",
        m.len()
    );
    let e = tool_error(
        &app.call("list_labor", json!({ long.clone(): 1 }), None)
            .await,
    );
    let m = e["message"].as_str().unwrap();
    assert!(
        m.starts_with("unknown argument") && m.len() < 200,
        "{} bytes",
        m.len()
    );
}

#[tokio::test]
async fn render_map_clips_its_window_and_draws_it() {
    let app = spawn_gateway().await;
    let whole = ok_result(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 0, "y": 0, "width": 120, "height": 30}),
            None,
        )
        .await,
    );
    assert_eq!(whole["clipped"], true, "the level is 32 x 9 tiles");
    assert_eq!(
        whole["window"],
        json!({"x": 0, "y": 0, "width": 32, "height": 9})
    );
    assert_eq!(
        whole["requested"],
        json!({"x": 0, "y": 0, "width": 120, "height": 30})
    );
    assert_eq!(
        (whole["mapWidth"].clone(), whole["mapHeight"].clone()),
        (json!(32), json!(9))
    );
    let inside = ok_result(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 2, "y": 1, "width": 5, "height": 3}),
            None,
        )
        .await,
    );
    assert_eq!(inside["clipped"], false);
    assert!(
        inside["text"]
            .as_str()
            .unwrap()
            .contains("showing x 2-6, y 1-3"),
        "{}",
        inside["text"]
    );
    let left = ok_result(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": -10, "y": -3, "width": 12, "height": 5}),
            None,
        )
        .await,
    );
    assert_eq!(
        left["window"],
        json!({"x": 0, "y": 0, "width": 2, "height": 2})
    );
    assert!(left["text"]
        .as_str()
        .unwrap()
        .starts_with("clipped to the map: asked for x -10 to 1, y -3 to 1"));
    // A window that misses the map says where the map is.
    let e = tool_error(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 40, "y": 0, "width": 5, "height": 5}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "invalid_input");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("32 x 9 tiles (x 0-31, y 0-8)"),
        "{e}"
    );
    // The bounds of x and y are the schema's.
    for (x, y) in [(-120, 0), (512, 0), (0, -30), (0, 128)] {
        let e = tool_error(
            &app.call(
                "render_map",
                json!({"map": LEVEL_MAP, "x": x, "y": y, "width": 120, "height": 30}),
                None,
            )
            .await,
        );
        assert_eq!(e["code"], "invalid_input", "{x},{y}");
    }
    // With image: a PNG of the same window in an image block.
    let a = app
        .call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 0, "y": 0, "width": 10, "height": 9, "image": true}),
            None,
        )
        .await;
    let r = ok_result(&a);
    let content = a.body["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2);
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/png");
    let png = base64_decode(content[1]["data"].as_str().unwrap());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h) = (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    );
    assert_eq!((w, h), (10 * 12, 9 * 12));
    assert_eq!(r["image"]["width"], w);
    let legend: Vec<&str> = r["image"]["legend"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        legend.contains(&"start") && legend.contains(&"grass"),
        "{legend:?}"
    );
    // Without image, no image block.
    assert_eq!(
        app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 0, "y": 0, "width": 10, "height": 9}),
            None
        )
        .await
        .body["result"]["content"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// Standard base64 (the test's own decoder, so the server's encoder is checked).
fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &v)| n | u32::from(v) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[tokio::test]
async fn get_level_says_what_was_wrong() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let k = app.agent_key("lena", 1).await;
    let e = tool_error(&app.call("get_level", json!({}), None).await);
    assert_eq!(e["code"], "invalid_input");
    assert!(
        e["message"].as_str().unwrap().contains("`name`")
            && e["message"].as_str().unwrap().contains("`revisionId`")
    );
    let e = tool_error(
        &app.call("get_level", json!({"name": "gibt-es-nicht"}), None)
            .await,
    );
    assert_eq!(e["code"], "not_found");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("no level is named"),
        "{e}"
    );
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let sub = ok_result(
        &app.call(
            "submit_level",
            json!({"name": "lenas-level", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "l1"}),
            Some(&k),
        )
        .await,
    );
    let rev = sub["revisionId"].as_str().unwrap();
    // revisionId alone reads it; the schema says neither argument is required.
    let alone = ok_result(
        &app.call("get_level", json!({"revisionId": rev}), None)
            .await,
    );
    assert_eq!(alone["name"], "lenas-level");
    // A right id with another level's name says whose it is.
    let e = tool_error(
        &app.call(
            "get_level",
            json!({"name": "fremd", "revisionId": rev}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "not_found");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("is a revision of level \"lenas-level\", not \"fremd\""),
        "{e}"
    );
    // A claimed name without a promoted revision says so.
    let e = tool_error(
        &app.call("get_level", json!({"name": "lenas-level"}), None)
            .await,
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("has no promoted revision yet"),
        "{e}"
    );
    // An unknown id says what it could be.
    let e = tool_error(
        &app.call("get_level", json!({"revisionId": "r-nothing"}), None)
            .await,
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("withdrawn or hidden"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_names_the_waiting_job_and_job_failures_carry_remaining() {
    // No worker: the first playtest stays queued while its caller waits.
    let app = spawn_gateway().await;
    let k = app.agent_key("mira", 1).await;
    let first = {
        let (app_url, k) = (app.url("/api/mcp"), k.clone());
        tokio::spawn(async move {
            let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                "params":{"name":"playtest_map","arguments":{"map": LEVEL_MAP, "idempotencyKey": "m1"}}});
            reqwest::Client::new()
                .post(app_url)
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-11-25")
                .bearer_auth(k)
                .body(body.to_string())
                .send()
                .await
        })
    };
    // Until the first call's job is queued (its admission counts it as waiting).
    let fair_key = app.store.key_in(horst_store::Group::Queue, "queue:fair");
    let mut waiting = 0;
    for _ in 0..400 {
        waiting = redis::AsyncCommands::hget::<_, _, Option<u64>>(
            &mut app.store.conn(),
            &fair_key,
            "w:mira",
        )
        .await
        .unwrap()
        .unwrap_or(0);
        if waiting > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(waiting, 1, "the first playtest is queued");
    let busy = tool_error(
        &app.call(
            "playtest_map",
            json!({"map": LEVEL_MAP, "idempotencyKey": "m2"}),
            Some(&k),
        )
        .await,
    );
    assert_eq!(busy["code"], "busy", "{busy}");
    let job = busy["jobId"]
        .as_str()
        .expect("the waiting job's id")
        .to_string();
    assert!(busy["message"].as_str().unwrap().contains(&job));
    assert!(busy["remaining"].is_object(), "{busy}");
    let st = ok_result(
        &app.call("get_submission", json!({"jobId": job}), Some(&k))
            .await,
    );
    assert_eq!(st["state"], "queued");
    first.abort();
    // Every failure of a tool that reports remaining carries it: bad arguments too.
    for (tool, args) in [
        ("playtest_map", json!({"idempotencyKey": "m3"})),
        ("simulate_replay", json!({"map": LEVEL_MAP})),
        ("get_submission", json!({"jobId": "j-unknown"})),
        ("withdraw_level", json!({"revisionId": "r-unknown"})),
        ("my_submissions", json!({"offset": -1})),
    ] {
        let e = tool_error(&app.call(tool, args, Some(&k)).await);
        assert!(e["remaining"]["playtests"].is_number(), "{tool}: {e}");
    }
}
