//! The gateway as an outside checker tries it, with only the contract (`gcv-agent-gateway.md`)
//! and docs/agents.md in hand: odd but valid inputs, and the places where an agent reads the
//! answer's body rather than its headers.

use serde_json::{json, Value};

use crate::harness::{ok_result, spawn_app_with, spawn_gateway, tool_error, Answer, TestApp};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

fn with_bom(text: &str) -> Vec<u8> {
    [UTF8_BOM, text.as_bytes()].concat()
}

/// POSTs `body` as JSON to a REST route: its status and JSON answer.
async fn post_json(app: &TestApp, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let r = app
        .http
        .post(app.url(path))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or_default())
}

/// A UTF-8 byte order mark before the JSON (Windows PowerShell 5's `-Encoding UTF8`, .NET's
/// `Encoding.UTF8` and some editors write one) is read as what RFC 8259 section 8.1 lets a
/// parser read it as: nothing. It was -32700 "expected value at line 1 column 1" with id
/// null, which named neither the mark nor the request. On `POST /api/agent-keys` it was 400
/// "the body must be a JSON object".
#[tokio::test]
async fn a_utf8_byte_order_mark_before_the_json_is_ignored() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let a = app
        .mcp_raw(with_bom(r#"{"jsonrpc":"2.0","id":41,"method":"ping"}"#), &v)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["id"], 41, "{}", a.text);
    assert_eq!(a.body["result"], json!({}), "{}", a.text);
    let call = json!({"jsonrpc":"2.0","id":42,"method":"tools/call",
        "params":{"name":"validate_map","arguments":{"map":crate::harness::LEVEL_MAP}}});
    let a = app.mcp_raw(with_bom(&call.to_string()), &v).await;
    assert_eq!(ok_result(&a)["valid"], true, "{}", a.text);
    // A refusal before the gateway reads the message (a key tool without a key) still
    // names the request.
    let call = json!({"jsonrpc":"2.0","id":43,"method":"tools/call",
        "params":{"name":"my_submissions","arguments":{}}});
    let a = app.mcp_raw(with_bom(&call.to_string()), &v).await;
    assert_eq!(a.status, 401, "{}", a.text);
    assert_eq!(a.body["id"], 43, "{}", a.text);
    // The mark alone is an empty body; a mark inside the JSON is still not JSON.
    let a = app.mcp_raw(UTF8_BOM.to_vec(), &v).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32700, "{}", a.text);
    let a = app
        .mcp_raw(
            [
                b"{".as_slice(),
                UTF8_BOM,
                br#""jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ]
            .concat(),
            &v,
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);

    // POST /api/agent-keys reads its body the same way.
    let (status, body) = post_json(
        &app,
        "/api/agent-keys",
        with_bom(r#"{"displayName":"Fuchs"}"#),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["displayName"], "Fuchs", "{body}");
}

/// A `\u` escape of half a UTF-16 pair (`"\ud800"` alone, a low `"\udc00"` first, a high one
/// followed by anything but a low one) is not JSON text, and each JSON-reading route says so in
/// its own code with the place and the fix: it was serde_json's "lone leading surrogate in hex
/// escape" (or "unexpected end of hex escape"), which named neither the rule nor what to send.
#[tokio::test]
async fn a_lone_surrogate_escape_is_named_with_how_to_send_the_character() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let said = |m: &str, column: usize| {
        assert!(
            m.contains("lone UTF-16 surrogate escape")
                && m.contains(&format!("line 1, column {column}"))
                && m.contains("send the pair, or the character itself"),
            "{m}"
        );
    };
    for (text, column) in [
        (r#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#, 41),
        (r#"{"jsonrpc":"2.0","id":1,"method":"\udc00"}"#, 40),
        (r#"{"jsonrpc":"2.0","id":1,"method":"\ud800\u0041"}"#, 46),
    ] {
        let a = app.mcp_raw(text.as_bytes().to_vec(), &v).await;
        assert_eq!(a.status, 400, "{}", a.text);
        assert_eq!(a.body["error"]["code"], -32700, "{}", a.text);
        said(
            a.body["error"]["message"].as_str().unwrap_or_default(),
            column,
        );
    }
    // A pair is a character.
    let a = app
        .mcp_raw(
            br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\ud83d\ude00"}}"#.to_vec(),
            &v,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);

    // The REST routes: the API's JSON extractor (here the account sign-in) and agent-keys.
    for path in ["/api/account/sign-in", "/api/agent-keys"] {
        let (status, body) = post_json(&app, path, r#"{"name":"\ud800x"}"#).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["code"], "invalid_input", "{path}: {body}");
        said(body["error"].as_str().unwrap_or_default(), 16);
    }
}

/// A burst limit's 429 says when to retry in the JSON-RPC error's `data` as well as in
/// `Retry-After`: MCP clients raise an HTTP error with the body's text and drop the headers
/// (the TypeScript SDK's "Error POSTing to endpoint (HTTP 429): ..."), so an agent only reads
/// the body. The store-unreachable 503 already carries `data.retryAfterSeconds`; the 429 had
/// only the number inside its message.
#[tokio::test]
async fn a_burst_limit_says_when_to_retry_in_the_body_too() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_ip_per_minute = 3;
        c.gateway.burst_per_account_per_minute = 2;
    })
    .await;
    let key = app.agent_key("jana", 0).await;
    for _ in 0..2 {
        assert_eq!(
            app.call("list_labor", json!({}), Some(&key)).await.status,
            200
        );
    }
    // Per account (the request was read: its id is echoed).
    let a = app.call("list_labor", json!({}), Some(&key)).await;
    assert_burst(&a, "account");
    assert_eq!(a.body["id"], 7, "{}", a.text);
    // Per address (3 a minute: the calls above counted too).
    let mut a = app.rpc("ping", json!({}), None).await;
    for _ in 0..5 {
        if a.status == 429 {
            break;
        }
        a = app.rpc("ping", json!({}), None).await;
    }
    assert_burst(&a, "address");
}

/// A burst limit's 429: its wait in `Retry-After` and in the error's `data`.
fn assert_burst(a: &Answer, per: &str) {
    assert_eq!(a.status, 429, "{}", a.text);
    let header: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
    let data = &a.body["error"]["data"];
    assert_eq!(data["code"], "burst", "{}", a.text);
    assert_eq!(data["per"], per, "{}", a.text);
    assert_eq!(data["retryAfterSeconds"], header, "{}", a.text);
}

/// An integer or a flag written as a string (`"offset": "25"`, what some tool-calling layers
/// send) is refused, as the schema says, with a message that says how to write it: it said
/// "must be an integer 0 to 1000000000", which the caller believed it had sent.
#[tokio::test]
async fn a_number_or_flag_sent_as_a_string_is_told_how_to_write_it() {
    let app = spawn_gateway().await;
    let e = tool_error(&app.call("list_labor", json!({"offset": "25"}), None).await);
    assert_eq!(e["code"], "invalid_input");
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("`offset` must be an integer 0 to 1000000000"),
        "{m}"
    );
    assert!(m.contains(r#"25, not "25""#), "{m}");
    // Not for a string that is no number: the plain message.
    let e = tool_error(
        &app.call("list_labor", json!({"offset": "next"}), None)
            .await,
    );
    assert_eq!(
        e["message"], "`offset` must be an integer 0 to 1000000000",
        "{e}"
    );
    let key = app.agent_key("jana", 0).await;
    let e = tool_error(
        &app.call(
            "endorse_thread",
            json!({"threadId": "t1", "endorse": "false"}),
            Some(&key),
        )
        .await,
    );
    let m = e["message"].as_str().unwrap();
    assert!(m.contains(r#"false, not "false""#), "{m}");
    // Well-formed values still pass.
    ok_result(&app.call("list_labor", json!({"offset": 25}), None).await);
}

/// A body that is not UTF-8 (Windows PowerShell 5 sends a string body as ISO-8859-1, so a
/// German map title arrives as Latin-1) is said to be so, with the first byte that is not and
/// how to send it, on every JSON-reading route. It was serde_json's "invalid unicode code point
/// at line 1 column 101", which reads as a wrong `\u` escape; on `POST /api/agent-keys` "the
/// body must be a JSON object", which it was.
#[tokio::test]
async fn a_body_that_is_not_utf8_names_the_byte_and_how_to_send_it() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let said = |m: &str, byte: &str, column: usize| {
        assert!(
            m.contains("not UTF-8")
                && m.contains(&format!("the byte {byte} at line 1, column {column}"))
                && m.contains("encode the body as UTF-8"),
            "{m}"
        );
    };
    // "Gipfelstürmer" in Latin-1: ü is the one byte 0xFC.
    let latin1 = |text: &str| -> (Vec<u8>, usize) {
        let at = text.find('ü').expect("an ü");
        let mut bytes = text.as_bytes().to_vec();
        bytes.splice(at..at + 'ü'.len_utf8(), [0xFC]);
        (bytes, at + 1)
    };
    let (body, column) = latin1(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"validate_map","arguments":{"map":"gcv-map 1\nname: Gipfelstürmer\n"}}}"#,
    );
    let a = app.mcp_raw(body, &v).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32700, "{}", a.text);
    said(
        a.body["error"]["message"].as_str().unwrap_or_default(),
        "0xFC",
        column,
    );
    // The same text as UTF-8 is read.
    let a = app
        .call(
            "validate_map",
            json!({"map": "gcv-map 1\nname: Gipfelstürmer\n"}),
            None,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);

    // The REST routes: agent-keys and the API's JSON extractor (the account sign-in).
    for (path, text) in [
        ("/api/agent-keys", r#"{"displayName":"Füchsin"}"#),
        (
            "/api/account/sign-in",
            r#"{"name":"Füchsin","password":"x"}"#,
        ),
    ] {
        let (body, column) = latin1(text);
        let (status, body) = post_json(&app, path, body).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["code"], "invalid_input", "{path}: {body}");
        said(body["error"].as_str().unwrap_or_default(), "0xFC", column);
    }
}

/// JSON nested deeper than the server reads (128 levels of arrays or objects) is valid JSON:
/// it was refused as "the body is not valid JSON: recursion limit exceeded", which told the
/// sender its JSON was broken. It is refused as too deep, with the depth that is read; a deep
/// value that is read is the tool's own `invalid_input`.
#[tokio::test]
async fn a_body_nested_too_deep_says_how_deep_it_may_be() {
    let app = spawn_gateway().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"validate_map","arguments":{{"map":{}}}}}}}"#,
        nested(200)
    );
    let a = app.mcp_raw(body, &v).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert_eq!(a.body["error"]["code"], -32700, "{}", a.text);
    let m = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("128 or more levels deep") && m.contains("at most 127"),
        "{m}"
    );
    assert!(!m.contains("not valid JSON"), "{m}");

    let body = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{{"name":"validate_map","arguments":{{"map":{}}}}}}}"#,
        nested(100)
    );
    let a = app.mcp_raw(body, &v).await;
    assert_eq!(a.body["id"], 6, "{}", a.text);
    let e = tool_error(&a);
    assert_eq!(e["code"], "invalid_input", "{e}");

    let (status, body) = post_json(
        &app,
        "/api/agent-keys",
        format!(r#"{{"label":{}}}"#, nested(150)),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("levels deep"),
        "{body}"
    );
}

/// A level name is ASCII: the refusal says so and names the first character that is not one
/// of its letters, digits or hyphens, or the length. It said "must be 1-30 letters, digits or
/// hyphens", and `ä` is a letter to the author of a German level name.
#[tokio::test]
async fn a_level_name_refusal_names_the_character_or_the_length() {
    let app = spawn_gateway().await;
    for (name, says) in [
        ("Käse", "'ä' (U+00E4) is none of them"),
        ("erste schritte", "' ' (U+0020) is none of them"),
        ("level_1", "'_' (U+005F) is none of them"),
        ("erste\u{ad}schritte", "'\\u{ad}' (U+00AD) is none of them"),
        (&"n".repeat(31), "it has 31"),
        ("", "it is empty"),
    ] {
        let e = tool_error(&app.call("get_level", json!({"name": name}), None).await);
        assert_eq!(e["code"], "invalid_input", "{name:?}: {e}");
        let m = e["message"].as_str().unwrap();
        assert!(
            m.starts_with("`name` must be 1-30 ASCII letters, digits or hyphens; "),
            "{name:?}: {m}"
        );
        assert!(m.contains(says), "{name:?}: {m}");
    }
    // Not a string: the rule alone.
    let e = tool_error(&app.call("get_level", json!({"name": 7}), None).await);
    assert_eq!(
        e["message"], "`name` must be 1-30 ASCII letters, digits or hyphens",
        "{e}"
    );
}

/// A job polled after its record expired (a week after it ended, by default) is `not_found`,
/// word for word as a job that never was (another account's included), and the message says
/// that records expire and where the revisions stay listed. It said only "no job X of yours".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_polled_after_its_record_expired_is_not_found_and_says_why() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("spaet", 0).await;
    let k = Some(key.as_str());
    let replay: Value = serde_json::from_str(crate::harness::LEVEL_REPLAY).unwrap();
    let sim = ok_result(
        &app.call(
            "simulate_replay",
            json!({"map": crate::harness::LEVEL_MAP, "replay": replay, "idempotencyKey": "late-1"}),
            k,
        )
        .await,
    );
    let job = sim["jobId"].as_str().unwrap().to_string();
    let polled = ok_result(&app.call("get_submission", json!({"jobId": job}), k).await);
    assert_eq!(polled["state"], "succeeded", "{polled}");
    // Its retention is over (the record's TTL, here cut short).
    let _: () = redis::cmd("DEL")
        .arg(
            app.store
                .key_in(horst_store::Group::Queue, &format!("job:{job}")),
        )
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let gone = tool_error(&app.call("get_submission", json!({"jobId": job}), k).await);
    assert_eq!(gone["code"], "not_found", "{gone}");
    let m = gone["message"].as_str().unwrap();
    assert!(
        m.contains("its record expired")
            && m.contains("kept 168 h")
            && m.contains("my_submissions"),
        "{m}"
    );
    assert!(gone["remaining"].is_object(), "{gone}");
    let never = tool_error(
        &app.call(
            "get_submission",
            json!({"jobId": "job_0000000000000000"}),
            k,
        )
        .await,
    );
    assert_eq!(
        never["message"],
        m.replace(&job, "job_0000000000000000"),
        "{never}"
    );
}

/// "The indices are stable for replay version 1 (`replay.version` is a format number)": a
/// reader of the contract may send that number in a replay, which is only `{seed, actions}`.
/// The refusal says the version is implied and to leave it out (it said "unknown field
/// `version`", as if the contract had not named it), before anything is queued or charged.
#[tokio::test]
async fn a_replay_version_is_refused_as_implied() {
    let app = spawn_gateway().await;
    let key = app.agent_key("version", 0).await;
    let replay = json!({"seed": 1, "version": 1, "actions": [{"action": 8, "ticks": 60}]});
    for (tool, args) in [
        (
            "simulate_replay",
            json!({"map": crate::harness::LEVEL_MAP, "replay": replay, "idempotencyKey": "v-1"}),
        ),
        (
            "submit_level",
            json!({"name": "mit-version", "map": crate::harness::LEVEL_MAP, "replay": replay, "idempotencyKey": "v-2"}),
        ),
    ] {
        let e = tool_error(&app.call(tool, args, Some(&key)).await);
        assert_eq!(e["code"], "invalid_input", "{tool}: {e}");
        let m = e["message"].as_str().unwrap();
        assert!(m.contains("`replay.version` is not sent"), "{tool}: {m}");
        assert_eq!(
            e["remaining"]["simulations"], 50,
            "{tool}: nothing charged: {e}"
        );
        assert_eq!(
            e["remaining"]["submissions"], 2,
            "{tool}: nothing charged: {e}"
        );
    }
}
