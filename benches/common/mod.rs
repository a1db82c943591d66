//! What the benchmarks share (`mod common;` in each): their settings from the environment,
//! the base URL a horst process prints when it listens, agent keys as the operator makes
//! them, and an MCP `tools/call` sent and read as agents do. Each benchmark uses a part.

use std::io::{BufRead, BufReader};
use std::process::ChildStdout;
use std::time::Duration;

use serde_json::{json, Value};

/// `name` from the environment as a number, or `default`.
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Reads a horst process's stdout (in a thread of its own, to its end, so the process never
/// blocks on a full pipe); the receiver gets the base URL of each "listening on http://ADDR".
pub fn listening_urls(stdout: ChildStdout) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("listening on ").nth(1) {
                let _ = tx.send(rest.trim().to_string());
            }
        }
    });
    rx
}

/// The first URL of [`listening_urls`], waiting at most 2 minutes (a loaded machine's start
/// of a debug build); `what` names the process in the panic.
pub fn wait_listening(stdout: ChildStdout, what: &str) -> String {
    listening_urls(stdout)
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("{what} did not start listening"))
}

/// `count` trust-2 accounts named `prefix00`, `prefix01`, ... with a key each, as the operator
/// makes them; their keys.
pub async fn agent_keys(store: &horst_store::Store, prefix: &str, count: usize) -> Vec<String> {
    let mut keys = Vec::new();
    for n in 0..count {
        let name = format!("{prefix}{n:02}");
        horst_identity::accounts::create_account(store, &name, 2)
            .await
            .expect("account");
        let key = horst_identity::accounts::create_key(store, &name, None)
            .await
            .expect("key");
        keys.push(key.key);
    }
    keys
}

/// The JSON-RPC body of a `tools/call` of `tool` with `args`.
pub fn tool_call(tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})
    .to_string()
}

/// POSTs `body` (a JSON-RPC request) to `<base>/api/mcp` with `key`, as an agent's client
/// does; the HTTP status and JSON body (0 and null when no answer came).
pub async fn post_mcp(http: &reqwest::Client, base: &str, key: &str, body: String) -> (u16, Value) {
    let sent = with_key(
        http.post(format!("{base}/api/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25"),
        key,
    )
    .body(body)
    .send()
    .await;
    match sent {
        Ok(r) => (r.status().as_u16(), r.json().await.unwrap_or(Value::Null)),
        Err(_) => (0, Value::Null),
    }
}

/// The request with `key` as its bearer token, or anonymous when `key` is empty (an empty
/// `Bearer ` is a malformed credential, which the gateway refuses with 401).
pub fn with_key(request: reqwest::RequestBuilder, key: &str) -> reqwest::RequestBuilder {
    if key.is_empty() {
        request
    } else {
        request.bearer_auth(key)
    }
}

/// A tool result's JSON (the text of its first content block), null if there is none.
pub fn tool_text(result: &Value) -> Value {
    result["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null)
}
