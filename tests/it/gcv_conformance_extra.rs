//! The gateway as an outside checker tries it, with only the contract (`gcv-agent-gateway.md`)
//! and docs/agents.md in hand: odd but valid inputs, and the places where an agent reads the
//! answer's body rather than its headers.

use serde_json::{json, Value};

use crate::harness::{ok_result, spawn_app_with, spawn_gateway, tool_error, Answer};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

fn with_bom(text: &str) -> Vec<u8> {
    [UTF8_BOM, text.as_bytes()].concat()
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
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body(with_bom(r#"{"displayName":"Fuchs"}"#))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or_default();
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
        let r = app
            .http
            .post(app.url(path))
            .header("content-type", "application/json")
            .body(r#"{"name":"\ud800x"}"#)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap_or_default();
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
