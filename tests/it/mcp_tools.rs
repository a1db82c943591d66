//! The tools: results, failures, and every input limit at its edge (contract: "Tools",
//! "Input limits").

use serde_json::{json, Value};

use crate::harness::{ok_result, spawn_gateway, tool_error, LEVEL_MAP, LEVEL_REPLAY};

#[tokio::test]
async fn format_and_palette() {
    let app = spawn_gateway().await;
    let f = ok_result(&app.call("get_map_format", json!({}), None).await);
    assert!(f["format"].as_str().unwrap().contains("gcv-map"));
    assert_eq!(f["engineVersion"], horst_engine::engine_version());
    assert_eq!(f["actions"].as_array().unwrap().len(), 20);
    let p = ok_result(&app.call("list_palette", json!({}), None).await);
    assert!(!p["blocks"].as_array().unwrap().is_empty());
    assert!(!p["entities"].as_array().unwrap().is_empty());
    // No arguments means none: unknown fields are refused.
    let e = tool_error(
        &app.call("list_palette", json!({"verbose": true}), None)
            .await,
    );
    assert_eq!(e["code"], "invalid_input");
}

#[tokio::test]
async fn validate_map_reports_rather_than_fails() {
    let app = spawn_gateway().await;
    let v = ok_result(
        &app.call("validate_map", json!({"map": LEVEL_MAP}), None)
            .await,
    );
    assert_eq!(v["valid"], true, "{v}");
    let v = ok_result(
        &app.call("validate_map", json!({"map": "gcv-map 1\nnonsense"}), None)
            .await,
    );
    assert_eq!(v["valid"], false);
    assert!(!v["errors"].as_array().unwrap().is_empty());
}

/// `render_map` refuses an invalid map (`validation_failed`) saying what is wrong and how to
/// fix it as `validate_map` does: its `errors`, each with line, column, message and hint,
/// the same list. It said only the first error's summary in its message, with no `errors`.
#[tokio::test]
async fn render_map_lists_an_invalid_maps_errors_as_validate_map_does() {
    let app = spawn_gateway().await;
    // Two errors: an unknown line and a grid row of another width.
    let map = LEVEL_MAP.replacen("\n", "\nnonsense here\n", 1) + "x\n";
    let v = ok_result(&app.call("validate_map", json!({"map": map}), None).await);
    assert_eq!(v["valid"], false, "{v}");
    let e = tool_error(
        &app.call(
            "render_map",
            json!({"map": map, "x": 0, "y": 0, "width": 20, "height": 10}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "validation_failed", "{e}");
    assert_eq!(e["errors"], v["errors"], "{e}");
    let first = &v["errors"][0];
    for field in ["line", "column", "message", "hint"] {
        assert!(!first[field].is_null(), "{field} in {first}");
    }
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains(first["message"].as_str().unwrap()) && message.contains("validate_map"),
        "{message}"
    );
}

#[tokio::test]
async fn map_size_edges() {
    let app = spawn_gateway().await;
    let max = 256 * 1024;
    // The largest map passes the limit (and is then validated, as invalid).
    let v = ok_result(
        &app.call("validate_map", json!({"map": "a".repeat(max)}), None)
            .await,
    );
    assert_eq!(v["valid"], false);
    // Multi-byte characters count as UTF-8 bytes.
    let e = tool_error(
        &app.call(
            "validate_map",
            json!({"map": "ä".repeat(max / 2) + "a"}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "too_large");
    let e = tool_error(
        &app.call("validate_map", json!({"map": "a".repeat(max + 1)}), None)
            .await,
    );
    assert_eq!(e["code"], "too_large");
    let e = tool_error(&app.call("validate_map", json!({"map": ""}), None).await);
    assert_eq!(e["code"], "invalid_input");
    let e = tool_error(&app.call("validate_map", json!({}), None).await);
    assert_eq!(e["code"], "invalid_input");
    let e = tool_error(
        &app.call("validate_map", json!({"map": LEVEL_MAP, "x": 1}), None)
            .await,
    );
    assert_eq!(e["code"], "invalid_input");
}

#[tokio::test]
async fn render_window_edges() {
    let app = spawn_gateway().await;
    let r = |w: i64, h: i64| json!({"map": LEVEL_MAP, "x": 0, "y": 0, "width": w, "height": h});
    let ok = ok_result(&app.call("render_map", r(120, 30), None).await);
    assert!(!ok["text"].as_str().unwrap().is_empty());
    ok_result(&app.call("render_map", r(1, 1), None).await);
    for (w, h) in [(121, 30), (120, 31), (0, 5), (5, 0), (-1, 5)] {
        let e = tool_error(&app.call("render_map", r(w, h), None).await);
        assert_eq!(e["code"], "invalid_input", "{w}x{h}");
    }
    let e = tool_error(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 0, "y": 0, "width": 5}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "invalid_input");
    let e = tool_error(
        &app.call(
            "render_map",
            json!({"map": LEVEL_MAP, "x": 0.5, "y": 0, "width": 5, "height": 5}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "invalid_input");
}

fn replay_with(actions: usize, ticks_each: u64) -> Value {
    let steps: Vec<Value> = (0..actions)
        .map(|_| json!({"action": 4, "ticks": ticks_each}))
        .collect();
    json!({"seed": 1, "actions": steps})
}

/// Replay limits are checked before the key tool does anything else; with no queue or a
/// full quota the same limits answer first.
#[tokio::test]
async fn replay_edges() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("fritz", 1).await;
    let n = std::sync::atomic::AtomicU32::new(0);
    let sim = |replay: Value| {
        let k = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": format!("k{k}")})
    };
    let code = crate::harness::error_code;
    // 36,000 actions of 1 tick: at both limits.
    let a = app
        .call("simulate_replay", sim(replay_with(36_000, 1)), Some(&key))
        .await;
    assert_ne!(
        code(&a),
        "invalid_input",
        "{}",
        &a.text[..a.text.len().min(400)]
    );
    assert_ne!(code(&a), "too_large");
    let a = app
        .call("simulate_replay", sim(replay_with(36_001, 1)), Some(&key))
        .await;
    assert!(
        code(&a) == "too_large" || code(&a) == "invalid_input",
        "{}",
        &a.text[..400]
    );
    // 36,000 ticks in total passes; 36,001 does not.
    let a = app
        .call("simulate_replay", sim(replay_with(60, 600)), Some(&key))
        .await;
    assert_ne!(code(&a), "invalid_input");
    let mut r = replay_with(60, 600);
    r["actions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"action": 4, "ticks": 1}));
    let a = app.call("simulate_replay", sim(r), Some(&key)).await;
    assert!(code(&a) == "invalid_input" || code(&a) == "too_large");
    // Step ranges and fields.
    for bad in [
        json!({"seed": 1, "actions": [{"action": 20, "ticks": 1}]}),
        json!({"seed": 1, "actions": [{"action": 0, "ticks": 601}]}),
        json!({"seed": 1, "actions": [{"action": 0, "ticks": 0}]}),
        json!({"seed": 4294967296u64, "actions": []}),
        json!({"seed": -1, "actions": []}),
        json!({"seed": 1, "actions": [], "version": 1}),
        json!({"seed": 1, "actions": [{"action": 0, "ticks": 1, "x": 1}]}),
        json!({"seed": 1, "actions": [{"action": 1.5, "ticks": 1}]}),
    ] {
        let a = app
            .call("simulate_replay", sim(bad.clone()), Some(&key))
            .await;
        assert_eq!(code(&a), "invalid_input", "{bad}");
    }
    for good in [
        json!({"seed": 4294967295u64, "actions": [{"action": 19, "ticks": 600}]}),
        json!({"seed": 0, "actions": [{"action": 0, "ticks": 1}]}),
    ] {
        let a = app
            .call("simulate_replay", sim(good.clone()), Some(&key))
            .await;
        assert_ne!(code(&a), "invalid_input", "{good}");
    }
    // 1 MiB of compact JSON. A valid replay cannot reach it (36,000 steps are ~0.9 MiB), so
    // the edge is shown with padding: exactly 1 MiB gets past the size check (and is then
    // refused for its unknown field), one byte more is too_large.
    let base = serde_json::to_string(&json!({"seed": 1, "actions": [], "pad": ""}))
        .unwrap()
        .len();
    let exact = json!({"seed": 1, "actions": [], "pad": "x".repeat(1024 * 1024 - base)});
    assert_eq!(serde_json::to_string(&exact).unwrap().len(), 1024 * 1024);
    let a = app.call("simulate_replay", sim(exact), Some(&key)).await;
    assert_eq!(code(&a), "invalid_input");
    let over = json!({"seed": 1, "actions": [], "pad": "x".repeat(1024 * 1024 - base + 1)});
    let a = app.call("simulate_replay", sim(over), Some(&key)).await;
    assert_eq!(code(&a), "too_large");
    let winning: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let a = app.call("simulate_replay", sim(winning), Some(&key)).await;
    let r = crate::harness::ok_result(&a);
    assert_eq!(r["outcome"], "won");
    assert!(r["deathCause"].is_null(), "{r}");
    // A lost run says what killed the bird and where.
    let spikes = "gcv-map 1\nname: spikes\nsize: 6 3\ngrid:\n......\n..^^..\nGGGGGG\nentities:\nstart 0 1\nnest 5 1\n";
    let run_right = json!({"seed": 1, "actions": [{"action": 8, "ticks": 120}]});
    let a = app
        .call(
            "simulate_replay",
            json!({"map": spikes, "replay": run_right, "idempotencyKey": "spikes"}),
            Some(&key),
        )
        .await;
    let r = crate::harness::ok_result(&a);
    assert_eq!(r["outcome"], "lost", "{r}");
    assert_eq!(
        r["deathCause"],
        json!({"cause": "spikes", "x": 2, "y": 1}),
        "{r}"
    );
}

#[tokio::test]
async fn name_id_and_idempotency_key_edges() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("gerda", 0).await;
    let code = crate::harness::error_code;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let submit = |name: &str, idem: &str| json!({"name": name, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem});
    let id64 = "a.b_c-".repeat(10) + "abcd";
    assert_eq!(id64.len(), 64);
    let a = app
        .call("submit_level", submit(&"n".repeat(30), &id64), Some(&key))
        .await;
    assert_ne!(code(&a), "invalid_input", "{}", a.text);
    for (name, idem) in [
        ("n".repeat(31), "k".to_string()),
        ("".to_string(), "k".to_string()),
        ("with space".to_string(), "k".to_string()),
        ("umlaut-ä".to_string(), "k".to_string()),
        ("ok".to_string(), "k".repeat(65)),
        ("ok".to_string(), "".to_string()),
        ("ok".to_string(), "k/1".to_string()),
        ("ok".to_string(), "ключ".to_string()),
    ] {
        let a = app
            .call("submit_level", submit(&name, &idem), Some(&key))
            .await;
        assert_eq!(code(&a), "invalid_input", "{name:?} {idem:?}");
    }
    let mut s = submit("ok", "k");
    s["parentRevisionId"] = json!("r".repeat(65));
    assert_eq!(
        code(&app.call("submit_level", s, Some(&key)).await),
        "invalid_input"
    );
    // Missing idempotencyKey.
    let a = app
        .call("playtest_map", json!({"map": LEVEL_MAP}), Some(&key))
        .await;
    assert_eq!(code(&a), "invalid_input");
    // jobId and revisionId patterns.
    let a = app
        .call(
            "get_submission",
            json!({"jobId": "j".repeat(65)}),
            Some(&key),
        )
        .await;
    assert_eq!(code(&a), "invalid_input");
    let a = app
        .call(
            "get_level",
            json!({"name": "x", "revisionId": "r".repeat(64)}),
            None,
        )
        .await;
    assert_eq!(code(&a), "not_found");
    let a = app
        .call(
            "get_level",
            json!({"name": "x", "revisionId": "r".repeat(65)}),
            None,
        )
        .await;
    assert_eq!(code(&a), "invalid_input");
    let a = app
        .call(
            "withdraw_level",
            json!({"revisionId": "bad id"}),
            Some(&key),
        )
        .await;
    assert_eq!(code(&a), "invalid_input");
    let a = app.call("list_labor", json!({"offset": -1}), None).await;
    assert_eq!(code(&a), "invalid_input");
}

#[tokio::test]
async fn get_level_without_a_promoted_revision_is_not_found_with_a_hint() {
    let app = spawn_gateway().await;
    let e = tool_error(
        &app.call("get_level", json!({"name": "nothing-here"}), None)
            .await,
    );
    assert_eq!(e["code"], "not_found");
    assert!(e["message"].as_str().unwrap().contains("list_labor"));
    let l = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(l, json!({"items": [], "nextOffset": null}));
}

/// A replay's `seed`, `action` and `ticks` written as numbers without a fraction (`60.0`,
/// `6e1`: what a client that holds every number as a double sends) are the integers they
/// are, as for the tools' top-level integers (`offset`, `seed`): the replay wins, and the
/// same idempotencyKey with the integer spelling is the same input. `ticks: 1.5` is still
/// refused. (The engine's parser refused `1.0` with "must be an integer".)
#[tokio::test]
async fn whole_numbers_in_a_replay_are_integers() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("fenja", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    // The same replay with every number as a float literal.
    let floats: String = {
        let mut v = replay.clone();
        v["seed"] = json!(v["seed"].as_u64().unwrap() as f64);
        for s in v["actions"].as_array_mut().unwrap() {
            s["action"] = json!(s["action"].as_u64().unwrap() as f64);
            s["ticks"] = json!(s["ticks"].as_u64().unwrap() as f64);
        }
        v.to_string()
    };
    assert!(floats.contains(".0"), "{floats}");
    let args = |replay: &str, key: &str| {
        format!(
            r#"{{"map": {}, "replay": {replay}, "idempotencyKey": "{key}"}}"#,
            json!(LEVEL_MAP)
        )
    };
    let call = |arguments: String| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"simulate_replay","arguments":{arguments}}}}}"#
        );
        let auth = format!("Bearer {key}");
        let app = &app;
        async move {
            app.mcp_raw(
                body,
                &[
                    ("mcp-protocol-version", "2025-11-25"),
                    ("authorization", auth.as_str()),
                ],
            )
            .await
        }
    };
    let r = ok_result(&call(args(&floats, "w1")).await);
    assert_eq!(r["won"], true, "{r}");
    // The same key with the integer spelling: the same input, the recorded result.
    let again = ok_result(&call(args(&replay.to_string(), "w1")).await);
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(again["jobId"], r["jobId"], "{again}");
    // A fraction stays refused, and says what to send.
    let mut half = replay.clone();
    half["actions"][0]["ticks"] = json!(1.5);
    let e = tool_error(&call(args(&half.to_string(), "w2")).await);
    assert_eq!(e["code"], "invalid_input", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("ticks must be an integer 1-600"),
        "{e}"
    );
}

/// `limits.maxNameChars` (60) is the map's `name:` line, not the level name (1-30): agents read
/// it as the level name's limit and had `submit_level` refuse a 31-60 character name. Both are
/// said apart in `get_map_format`, `list_palette` and the format resource, the contract's field
/// kept as it was.
#[tokio::test]
async fn limits_say_the_map_title_and_the_level_name_apart() {
    let app = spawn_gateway().await;
    let f = ok_result(&app.call("get_map_format", json!({}), None).await);
    let p = ok_result(&app.call("list_palette", json!({}), None).await);
    for (tool, l) in [
        ("get_map_format", &f["limits"]),
        ("list_palette", &p["limits"]),
    ] {
        assert_eq!(l["maxNameChars"], 60, "{tool}: kept: {l}");
        assert_eq!(l["maxMapTitleChars"], 60, "{tool}: {l}");
        assert_eq!(l["levelName"]["minChars"], 1, "{tool}: {l}");
        assert_eq!(l["levelName"]["maxChars"], 30, "{tool}: {l}");
        assert_eq!(
            l["levelName"]["pattern"], "^[A-Za-z0-9-]{1,30}$",
            "{tool}: {l}"
        );
        let about = l["about"]["maxNameChars"].as_str().unwrap_or_default();
        assert!(
            about.contains("name:") && about.contains("not the level name"),
            "{tool}: {about}"
        );
        assert!(
            l["replay"]["maxActions"].is_number(),
            "{tool}: the rest kept: {l}"
        );
    }
    // The limit it names is the one submit_level holds: 30 passes the name check, 31 is refused
    // with the same words.
    let e = tool_error(
        &app.call("get_level", json!({"name": "a".repeat(31)}), None)
            .await,
    );
    assert_eq!(e["code"], "invalid_input");
    assert!(
        e["message"].as_str().unwrap_or_default().contains("1-30"),
        "{e}"
    );
    let e = tool_error(
        &app.call("get_level", json!({"name": "a".repeat(30)}), None)
            .await,
    );
    assert_eq!(e["code"], "not_found", "{e}");
}
