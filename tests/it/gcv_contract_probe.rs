//! The gateway against `gcv-agent-gateway.md` as an outside checker reads it: every field the
//! contract's tool table names, present under its camelCase name with its JSON type (`null`
//! only where the contract allows it), the pages at their edges, and the promises no other
//! module checks by name.

use serde_json::{json, Value};

use crate::harness::{ok_result, spawn_app_with, tool_error, TestApp, LEVEL_MAP, LEVEL_REPLAY};
use crate::mcp_loop::TINY_MAP;

/// The gateway on, with burst limits out of the way (this module makes many calls).
async fn probe_app() -> TestApp {
    spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 100_000;
        c.gateway.burst_per_ip_per_minute = 100_000;
    })
    .await
}

/// The JSON type of `v` as JSON Schema names it (`integer` for whole numbers).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Each `(field, types)` is present in `v` with one of `types` ("string|null").
#[track_caller]
fn has(what: &str, v: &Value, fields: &[(&str, &str)]) {
    for (field, types) in fields {
        let Some(got) = v.get(*field) else {
            panic!("{what}: `{field}` is missing: {v}");
        };
        assert!(
            types.split('|').any(|t| t == kind(got)),
            "{what}: `{field}` is {} ({got}), the contract says {types}: {v}",
            kind(got)
        );
    }
}

/// `remaining`: the four counters, each a whole number.
#[track_caller]
fn has_remaining(what: &str, v: &Value) {
    has(what, v, &[("remaining", "object")]);
    has(
        &format!("{what}.remaining"),
        &v["remaining"],
        &[
            ("submissions", "integer"),
            ("playtests", "integer"),
            ("simulations", "integer"),
            ("seconds", "integer"),
        ],
    );
}

async fn self_service_key(app: &TestApp, display: &str) -> Value {
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body(json!({ "displayName": display }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    r.json().await.unwrap()
}

/// Every tool of the contract's table answers the fields it lists, with their types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_the_fields_the_contract_lists() {
    let app = probe_app().await;
    let _worker = app.start_engine_worker();
    let created = self_service_key(&app, "Prüfer").await;
    has(
        "POST /api/agent-keys",
        &created,
        &[
            ("key", "string"),
            ("id", "string"),
            ("prefix", "string"),
            ("username", "string"),
            ("displayName", "string"),
            ("createdAt", "string"),
        ],
    );
    let key = created["key"].as_str().unwrap().to_string();
    let k = Some(key.as_str());
    let versions = [
        ("engineVersion", "string"),
        ("policyVersion", "string"),
        ("actions", "array"),
        ("limits", "object"),
    ];

    let f = ok_result(&app.call("get_map_format", json!({}), None).await);
    has("get_map_format", &f, &versions);
    has("get_map_format", &f, &[("format", "string")]);
    let p = ok_result(&app.call("list_palette", json!({}), None).await);
    has("list_palette", &p, &versions);
    has(
        "list_palette",
        &p,
        &[("blocks", "array"), ("entities", "array")],
    );
    for item in p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .chain(p["entities"].as_array().unwrap())
    {
        has(
            "list_palette item",
            item,
            &[
                ("key", "string"),
                ("id", "integer|string"),
                ("params", "array|object"),
            ],
        );
    }
    let v = ok_result(
        &app.call("validate_map", json!({"map": LEVEL_MAP}), None)
            .await,
    );
    has(
        "validate_map",
        &v,
        &[
            ("valid", "boolean"),
            ("errors", "array"),
            ("warnings", "array"),
        ],
    );
    let r = ok_result(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 0, "y": 0, "width": 120, "height": 30}),
            None,
        )
        .await,
    );
    has("render_map", &r, &[("text", "string")]);

    let pt = ok_result(
        &app.call(
            "playtest_map",
            json!({"map": TINY_MAP, "idempotencyKey": "probe-p1"}),
            k,
        )
        .await,
    );
    has(
        "playtest_map",
        &pt,
        &[
            ("jobId", "string"),
            ("outcome", "string"),
            ("won", "boolean"),
            ("ticks", "integer"),
            ("seed", "integer"),
            ("mapHash", "string"),
            ("replay", "object"),
            ("engineVersion", "string"),
            ("policyVersion", "string"),
        ],
    );
    has_remaining("playtest_map", &pt);
    assert_eq!(pt["outcome"], "won", "{pt}");
    has(
        "playtest_map.replay",
        &pt["replay"],
        &[("seed", "integer"), ("actions", "array")],
    );

    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    for (idem, replay, outcome) in [
        ("probe-s1", replay.clone(), "won"),
        (
            "probe-s2",
            json!({"seed": 1, "actions": [{"action": 4, "ticks": 10}]}),
            "unresolved",
        ),
    ] {
        let s = ok_result(
            &app.call(
                "simulate_replay",
                json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem}),
                k,
            )
            .await,
        );
        has(
            "simulate_replay",
            &s,
            &[
                ("jobId", "string"),
                ("outcome", "string"),
                ("won", "boolean"),
                ("dead", "boolean"),
                ("ticks", "integer"),
                ("position", "object"),
                ("deathTick", "integer|null"),
                ("stateHash", "string"),
                ("mapHash", "string"),
                ("engineVersion", "string"),
                ("policyVersion", "string"),
            ],
        );
        has_remaining("simulate_replay", &s);
        assert_eq!(s["outcome"], outcome, "{s}");
    }

    let sub = ok_result(
        &app.call(
            "submit_level",
            json!({"name": "probe-level", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "probe-sub"}),
            k,
        )
        .await,
    );
    has(
        "submit_level",
        &sub,
        &[
            ("jobId", "string"),
            ("revisionId", "string"),
            ("name", "string"),
            ("mapHash", "string"),
            ("state", "string"),
            ("seed", "integer"),
            ("ticks", "integer"),
            ("engineVersion", "string"),
            ("policyVersion", "string"),
            ("acceptance", "object"),
        ],
    );
    has_remaining("submit_level", &sub);
    assert_eq!(sub["state"], "labor");
    let rev = sub["revisionId"].as_str().unwrap().to_string();

    for (job, revision) in [(&sub["jobId"], "string"), (&pt["jobId"], "null")] {
        let st = ok_result(&app.call("get_submission", json!({"jobId": job}), k).await);
        has(
            "get_submission",
            &st,
            &[
                ("state", "string"),
                ("result", "object"),
                ("revisionId", revision),
                ("revisionState", revision),
            ],
        );
        has_remaining("get_submission", &st);
        assert_eq!(st["state"], "succeeded", "{st}");
    }

    let mine = ok_result(&app.call("my_submissions", json!({}), k).await);
    has(
        "my_submissions",
        &mine,
        &[("items", "array"), ("nextOffset", "null")],
    );
    has_remaining("my_submissions", &mine);
    has(
        "my_submissions item",
        &mine["items"][0],
        &[
            ("revisionId", "string"),
            ("name", "string"),
            ("state", "string"),
            ("createdAt", "string"),
            ("mapHash", "string"),
            ("parentRevisionId", "null"),
            ("latestCheck", "object"),
        ],
    );
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    has(
        "list_labor",
        &labor,
        &[("items", "array"), ("nextOffset", "null")],
    );
    has(
        "list_labor item",
        &labor["items"][0],
        &[
            ("revisionId", "string"),
            ("name", "string"),
            ("owner", "string"),
            ("seed", "integer"),
            ("engineVersion", "string"),
            ("createdAt", "string"),
            ("mapHash", "string"),
        ],
    );
    let level = ok_result(
        &app.call(
            "get_level",
            json!({"name": "probe-level", "revisionId": rev}),
            None,
        )
        .await,
    );
    has(
        "get_level",
        &level,
        &[
            ("revisionId", "string"),
            ("name", "string"),
            ("owner", "string"),
            ("state", "string"),
            ("seed", "integer"),
            ("engineVersion", "string"),
            ("mapHash", "string"),
            ("createdAt", "string"),
            ("parentRevisionId", "null"),
            ("map", "string"),
        ],
    );

    let contact = ok_result(
        &app.call(
            "contact_admin",
            json!({"category": "question", "subject": "Frage", "message": "Wie geht das?"}),
            k,
        )
        .await,
    );
    has(
        "contact_admin",
        &contact,
        &[("messageId", "string"), ("messagesLeftToday", "integer")],
    );

    // The board: a thread of this agent, read and endorsed by another.
    let other = self_service_key(&app, "Zweiter").await;
    let o = other["key"].as_str();
    let w = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "Eine Idee", "body": "Mehr Eier"}),
            k,
        )
        .await,
    );
    has(
        "write_post",
        &w,
        &[
            ("threadId", "string"),
            ("postId", "string"),
            ("postsLeftToday", "integer"),
            ("threadsLeftToday", "integer"),
        ],
    );
    let reply = ok_result(
        &app.call(
            "write_post",
            json!({"threadId": w["threadId"], "body": "Ja"}),
            o,
        )
        .await,
    );
    has(
        "write_post reply",
        &reply,
        &[("threadId", "string"), ("postId", "string")],
    );
    let list = ok_result(&app.call("list_threads", json!({}), o).await);
    has(
        "list_threads",
        &list,
        &[
            ("items", "array"),
            ("nextOffset", "null"),
            ("notice", "string"),
        ],
    );
    has(
        "list_threads item",
        &list["items"][0],
        &[
            ("threadId", "string"),
            ("kind", "string"),
            ("title", "string"),
            ("author", "string"),
            ("authorDisplayName", "string|null"),
            ("status", "string"),
            ("level", "null"),
            ("posts", "integer"),
            ("endorsements", "integer"),
            ("endorsedByYou", "boolean"),
            ("yours", "boolean"),
            ("createdAt", "string"),
            ("lastPostAt", "string"),
        ],
    );
    let read = ok_result(
        &app.call("read_thread", json!({"threadId": w["threadId"]}), o)
            .await,
    );
    has(
        "read_thread",
        &read,
        &[
            ("thread", "object"),
            ("posts", "array"),
            ("nextOffset", "null"),
            ("notice", "string"),
        ],
    );
    has(
        "read_thread.thread",
        &read["thread"],
        &[("author", "string"), ("authorDisplayName", "string|null")],
    );
    for post in read["posts"].as_array().unwrap() {
        has(
            "read_thread post",
            post,
            &[
                ("postId", "string"),
                ("authorKind", "string"),
                ("author", "string"),
                ("authorDisplayName", "string|null"),
                ("body", "string"),
                ("createdAt", "string"),
                ("yours", "boolean"),
            ],
        );
    }
    let e = ok_result(
        &app.call("endorse_thread", json!({"threadId": w["threadId"]}), o)
            .await,
    );
    has(
        "endorse_thread",
        &e,
        &[("endorsements", "integer"), ("endorsedByYou", "boolean")],
    );
    assert_eq!(
        (&e["endorsements"], &e["endorsedByYou"]),
        (&json!(1), &json!(true))
    );
    let wp = ok_result(
        &app.call("withdraw_post", json!({"postId": reply["postId"]}), o)
            .await,
    );
    assert_eq!(wp, json!({"withdrawn": "post"}));

    let wl = ok_result(
        &app.call("withdraw_level", json!({"revisionId": rev}), k)
            .await,
    );
    has(
        "withdraw_level",
        &wl,
        &[
            ("revisionId", "string"),
            ("name", "string"),
            ("state", "string"),
            ("evidenceRetained", "boolean"),
            ("storageReclaimed", "boolean"),
            ("nameReserved", "boolean"),
        ],
    );
    has_remaining("withdraw_level", &wl);
}

/// Stores `n` Labor revisions of `owner` directly (as a won submission leaves them).
pub async fn store_revisions(app: &TestApp, owner: &str, prefix: &str, n: usize) -> Vec<String> {
    let budgets = horst_gateway::revisions::Budgets {
        labor_candidates: 1_000,
        account_bytes: u64::MAX / 4,
        total_bytes: u64::MAX / 4,
    };
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let acceptance = json!({"outcome": "won"});
    let mut ids = Vec::new();
    for i in 0..n {
        let name = format!("{prefix}-{i}");
        let job = format!("job-{prefix}-{i}");
        let (id, _) = horst_gateway::revisions::store_revision(
            &app.store,
            &horst_gateway::revisions::NewRevision {
                owner,
                name: &name,
                parent: None,
                map: LEVEL_MAP,
                title: "Probe",
                replay: &replay,
                seed: 1,
                ticks: 100,
                map_hash: "h",
                engine_version: horst_engine::engine_version(),
                policy_version: horst_engine::POLICY_VERSION,
                acceptance: &acceptance,
                job_id: &job,
                job_retention_seconds: 3600,
            },
            budgets,
        )
        .await
        .expect("store a revision");
        ids.push(id);
    }
    ids
}

/// `list_labor` and `my_submissions` hold 25 items a page: exactly 25 is one page
/// (`nextOffset: null`), 26 is two, the second page holds the 26th, and a page past the end is
/// empty with `nextOffset: null`.
#[tokio::test]
async fn pages_of_25_end_with_a_null_next_offset_at_the_edge() {
    let app = probe_app().await;
    let key = app.agent_key("seiten", 1).await;
    let k = Some(key.as_str());
    let mut ids = store_revisions(&app, "seiten", "a", 25).await;
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 25);
    assert_eq!(labor["nextOffset"], Value::Null, "{}", labor["nextOffset"]);
    let mine = ok_result(&app.call("my_submissions", json!({}), k).await);
    assert_eq!(mine["items"].as_array().unwrap().len(), 25);
    assert_eq!(mine["nextOffset"], Value::Null);

    ids.extend(store_revisions(&app, "seiten", "b", 1).await);
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 25);
    assert_eq!(labor["nextOffset"], 25);
    let second = ok_result(&app.call("list_labor", json!({"offset": 25}), None).await);
    assert_eq!(second["items"].as_array().unwrap().len(), 1, "{second}");
    assert_eq!(second["nextOffset"], Value::Null);
    let all: Vec<&str> = labor["items"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["items"].as_array().unwrap())
        .map(|i| i["revisionId"].as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    let mut got = all.clone();
    got.sort_unstable();
    assert_eq!(got, expected, "every revision on exactly one page");
    let mine = ok_result(&app.call("my_submissions", json!({}), k).await);
    assert_eq!(mine["nextOffset"], 25);
    let mine2 = ok_result(&app.call("my_submissions", json!({"offset": 25}), k).await);
    assert_eq!(mine2["items"].as_array().unwrap().len(), 1);
    assert_eq!(mine2["nextOffset"], Value::Null);
    let past = ok_result(&app.call("list_labor", json!({"offset": 1000}), None).await);
    assert_eq!(past, json!({"items": [], "nextOffset": null}));
    let e = tool_error(&app.call("list_labor", json!({"offset": 2.5}), None).await);
    assert_eq!(e["code"], "invalid_input");
}

/// "Keys are shared by all keys of one account": a retry with another key of the same account
/// is the recorded job (`replayed: true`, nothing charged); another account's equal key is its
/// own; and the same key on another tool is other input, a `conflict`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_keys_belong_to_the_account_not_the_key() {
    let app = probe_app().await;
    let _worker = app.start_engine_worker();
    let first = app.agent_key("zwei-schluessel", 1).await;
    let second = horst_identity::accounts::create_key(&app.store, "zwei-schluessel", None)
        .await
        .expect("a second key")
        .key;
    let stranger = app.agent_key("fremd", 1).await;
    let args = json!({"map": TINY_MAP, "idempotencyKey": "geteilt-1"});
    let a = ok_result(&app.call("playtest_map", args.clone(), Some(&first)).await);
    assert_eq!(a["remaining"]["playtests"], 19, "{a}");
    let b = ok_result(&app.call("playtest_map", args.clone(), Some(&second)).await);
    assert_eq!(b["jobId"], a["jobId"], "{b}");
    assert_eq!(b["replayed"], true, "{b}");
    assert_eq!(b["remaining"]["playtests"], 19, "{b}");
    let c = ok_result(&app.call("playtest_map", args, Some(&stranger)).await);
    assert_ne!(c["jobId"], a["jobId"]);
    assert!(c.get("replayed").is_none(), "{c}");
    // The same key for another tool is another input.
    let replay = a["replay"].clone();
    let e = tool_error(
        &app.call(
            "simulate_replay",
            json!({"map": TINY_MAP, "replay": replay, "idempotencyKey": "geteilt-1"}),
            Some(&second),
        )
        .await,
    );
    assert_eq!(e["code"], "conflict", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("idempotencyKey"),
        "{e}"
    );
}

/// Odd but valid messages a checker sends: `_meta` beside a call's name and arguments (MCP's
/// progress token), extra members in the envelope, a string id, unicode in a map's title and
/// escaped unicode in the JSON; each is answered like the plain message.
#[tokio::test]
async fn odd_but_valid_messages_are_answered() {
    let app = probe_app().await;
    let v = [("mcp-protocol-version", "2025-11-25")];
    let call = json!({"jsonrpc": "2.0", "id": "anfrage-ü", "method": "tools/call", "extra": [1, 2],
        "params": {"name": "validate_map", "arguments": {"map": LEVEL_MAP},
                   "_meta": {"progressToken": "t-1"}}});
    let a = app.mcp_raw(call.to_string(), &v).await;
    assert_eq!(a.body["id"], "anfrage-ü", "{}", a.text);
    assert_eq!(ok_result(&a)["valid"], true, "{}", a.text);
    // A title with umlauts and an emoji, sent as JSON escapes (\u00fc, a surrogate pair).
    let map = TINY_MAP.replace("name: Kurz", r"name: Kurz \u00fcber den Berg \ud83d\udc26");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"validate_map","arguments":{{"map":"{}"}}}}}}"#,
        map.replace('\n', "\\n")
    );
    let a = app.mcp_raw(body, &v).await;
    let r = ok_result(&a);
    assert_eq!(r["valid"], true, "{r}");
    // A map saved with Windows line endings and a byte order mark.
    let windows = format!("\u{feff}{}", TINY_MAP.replace('\n', "\r\n"));
    let r = ok_result(
        &app.call("validate_map", json!({"map": windows}), None)
            .await,
    );
    assert_eq!(r["valid"], true, "{r}");
    // `initialize` with the older revision negotiates it, and it is then accepted.
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}});
    let a = app.mcp_raw(init.to_string(), &[]).await;
    assert_eq!(
        a.body["result"]["protocolVersion"], "2025-06-18",
        "{}",
        a.text
    );
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await;
    assert_eq!((a.status, a.text.as_str()), (202, ""));
    let a = app
        .mcp_raw(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["result"]["tools"].as_array().unwrap().len(), 18);
}

/// The server's reserved seconds run out as the contract says: `remaining.seconds` of a trust-0
/// agent is the smaller of the global remainder and the trust-0 half; a trust-0 playtest past
/// the half is `quota` with scope `global_new`, a simulation past the whole day's seconds is
/// scope `global`, each with `retryAfterSeconds` and `remaining`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_seconds_run_out_as_global_and_for_new_accounts_as_global_new() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 100_000;
        c.gateway.burst_per_ip_per_minute = 100_000;
        c.queue.daily_seconds = 30;
        c.queue.trust0_share_percent = 50;
    })
    .await;
    let _worker = app.start_engine_worker();
    let new = app.agent_key("neuling", 0).await;
    let old = app.agent_key("alter-hase", 1).await;
    let seconds = async |key: &str| {
        ok_result(&app.call("my_submissions", json!({}), Some(key)).await)["remaining"]["seconds"]
            .clone()
    };
    assert_eq!(seconds(&new).await, 15);
    assert_eq!(seconds(&old).await, 30);
    // A playtest reserves 20 s, more than the 15 s all trust-0 accounts share.
    let e = tool_error(
        &app.call(
            "playtest_map",
            json!({"map": TINY_MAP, "idempotencyKey": "neu-1"}),
            Some(&new),
        )
        .await,
    );
    assert_eq!(
        (&e["code"], &e["scope"]),
        (&json!("quota"), &json!("global_new")),
        "{e}"
    );
    assert!(
        e["retryAfterSeconds"].as_u64().is_some_and(|s| s >= 1),
        "{e}"
    );
    has_remaining("quota failure", &e);
    // Simulations reserve 5 s each: six fit in the day's 30 s, the seventh does not.
    let replay = json!({"seed": 1, "actions": [{"action": 8, "ticks": 60}]});
    for i in 0..6 {
        ok_result(
            &app.call(
                "simulate_replay",
                json!({"map": TINY_MAP, "replay": replay, "idempotencyKey": format!("alt-{i}")}),
                Some(&old),
            )
            .await,
        );
    }
    let e = tool_error(
        &app.call(
            "simulate_replay",
            json!({"map": TINY_MAP, "replay": replay, "idempotencyKey": "alt-6"}),
            Some(&old),
        )
        .await,
    );
    assert_eq!(
        (&e["code"], &e["scope"]),
        (&json!("quota"), &json!("global")),
        "{e}"
    );
    assert!(
        e["retryAfterSeconds"].as_u64().is_some_and(|s| s >= 1),
        "{e}"
    );
    assert_eq!(seconds(&old).await, 0);
    assert_eq!(seconds(&new).await, 0);
}

/// `tools/list` names each tool's arguments as the contract's table does: the same names
/// (render_map's `image` is the one addition), the same required ones (get_level takes `name`
/// or `revisionId`, so neither is required), and the closed sets as enums.
#[tokio::test]
async fn tools_list_names_the_contracts_arguments() {
    let app = probe_app().await;
    let a = app.rpc("tools/list", json!({}), None).await;
    let tools = a.body["result"]["tools"].as_array().unwrap().clone();
    let table: [(&str, &[&str], &[&str]); 18] = [
        ("get_map_format", &[], &[]),
        ("list_palette", &[], &[]),
        ("validate_map", &["map"], &["map"]),
        (
            "render_map",
            &["map", "x", "y", "width", "height", "image"],
            &["map", "x", "y", "width", "height"],
        ),
        ("get_level", &["name", "revisionId"], &[]),
        ("list_labor", &["offset"], &[]),
        (
            "playtest_map",
            &["map", "seed", "idempotencyKey"],
            &["map", "idempotencyKey"],
        ),
        (
            "simulate_replay",
            &["map", "replay", "idempotencyKey"],
            &["map", "replay", "idempotencyKey"],
        ),
        (
            "submit_level",
            &[
                "name",
                "parentRevisionId",
                "map",
                "replay",
                "idempotencyKey",
            ],
            &["name", "map", "replay", "idempotencyKey"],
        ),
        ("get_submission", &["jobId"], &["jobId"]),
        ("my_submissions", &["offset"], &[]),
        ("withdraw_level", &["revisionId"], &["revisionId"]),
        (
            "contact_admin",
            &["category", "subject", "message"],
            &["category", "subject", "message"],
        ),
        (
            "list_threads",
            &["kind", "level", "status", "sort", "offset"],
            &[],
        ),
        ("read_thread", &["threadId", "offset"], &["threadId"]),
        (
            "write_post",
            &["body", "threadId", "kind", "title", "level", "revisionId"],
            &["body"],
        ),
        ("endorse_thread", &["threadId", "endorse"], &["threadId"]),
        ("withdraw_post", &["postId"], &["postId"]),
    ];
    assert_eq!(tools.len(), table.len());
    for (name, args, required) in table {
        let t = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        let schema = &t["inputSchema"];
        let mut listed: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        listed.sort_unstable();
        let mut want = args.to_vec();
        want.sort_unstable();
        assert_eq!(listed, want, "{name}: arguments");
        let mut req: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        req.sort_unstable();
        let mut want = required.to_vec();
        want.sort_unstable();
        assert_eq!(req, want, "{name}: required");
    }
    let prop = |tool: &str, p: &str| {
        tools.iter().find(|t| t["name"] == tool).unwrap()["inputSchema"]["properties"][p].clone()
    };
    assert_eq!(
        prop("contact_admin", "category")["enum"],
        json!(["bug", "feedback", "question", "other"])
    );
    assert_eq!(
        prop("list_threads", "kind")["enum"],
        json!(["idea", "level"])
    );
    assert_eq!(prop("write_post", "kind")["enum"], json!(["idea", "level"]));
    assert_eq!(
        prop("list_threads", "status")["enum"],
        json!(["open", "planned", "done", "declined"])
    );
    assert_eq!(
        prop("list_threads", "sort")["enum"],
        json!(["recent", "endorsed"])
    );
    assert_eq!(prop("endorse_thread", "endorse")["type"], "boolean");
    assert_eq!(prop("playtest_map", "seed")["maximum"], 4_294_967_295u64);
    assert_eq!(prop("playtest_map", "seed")["minimum"], 0);
}

/// The transport is stateless: a session id a client kept from elsewhere is ignored and none
/// is handed out, a second message glued to the first is not read as a batch of two (-32700),
/// and a client's JSON-RPC error response or `notifications/cancelled` is accepted (202).
#[tokio::test]
async fn the_transport_keeps_no_session_and_reads_one_message() {
    let app = probe_app().await;
    let v = ("mcp-protocol-version", "2025-11-25");
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let a = app.mcp_raw(ping, &[v, ("mcp-session-id", "alt-123")]).await;
    assert_eq!(
        (a.status, &a.body["result"]),
        (200, &json!({})),
        "{}",
        a.text
    );
    assert!(a.headers.get("mcp-session-id").is_none());
    let a = app.mcp_raw(format!("{ping}{ping}"), &[v]).await;
    assert_eq!((a.status, &a.body["error"]["code"]), (400, &json!(-32700)));
    // Trailing white space after the one message is fine.
    let a = app.mcp_raw(format!("{ping}\r\n\t "), &[v]).await;
    assert_eq!(a.status, 200, "{}", a.text);
    for message in [
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}"#,
    ] {
        let a = app.mcp_raw(message, &[v]).await;
        assert_eq!((a.status, a.text.as_str()), (202, ""), "{message}");
    }
}

/// A level thread's `level.name` is the level's name as the level spells it (as `get_level`
/// and `list_labor` answer it), however the writer spelled it: names are matched without
/// regard to case, and the same level showed as `gipfel-0` in one thread and `Gipfel-0` in
/// another (and in `get_level`).
#[tokio::test]
async fn a_level_thread_names_the_level_as_the_level_spells_it() {
    let app = probe_app().await;
    let ids = store_revisions(&app, "baumeister", "Gipfel", 2).await;
    horst_operator::promote(&app.store, "probe", &ids[0], None)
        .await
        .expect("promote");
    let key = app.agent_key("leser", 1).await;
    let k = Some(key.as_str());
    let by_name = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "level", "title": "Zum Gipfel", "body": "schön", "level": "GIPFEL-0"}),
            k,
        )
        .await,
    );
    let by_revision = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "level", "title": "Kandidat", "body": "auch",
                   "level": "gipfel-1", "revisionId": ids[1]}),
            k,
        )
        .await,
    );
    let list = ok_result(&app.call("list_threads", json!({"kind": "level"}), k).await);
    let names: Vec<(&str, &str)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["threadId"].as_str().unwrap(),
                t["level"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        names.contains(&(by_name["threadId"].as_str().unwrap(), "Gipfel-0")),
        "{names:?}"
    );
    assert!(
        names.contains(&(by_revision["threadId"].as_str().unwrap(), "Gipfel-1")),
        "{names:?}"
    );
    let read = ok_result(
        &app.call("read_thread", json!({"threadId": by_name["threadId"]}), k)
            .await,
    );
    assert_eq!(read["thread"]["level"]["name"], "Gipfel-0", "{read}");
    // The filter still finds them whatever the spelling.
    let filtered = ok_result(
        &app.call("list_threads", json!({"level": "gipfel-0"}), k)
            .await,
    );
    assert_eq!(filtered["items"].as_array().unwrap().len(), 1, "{filtered}");
}
