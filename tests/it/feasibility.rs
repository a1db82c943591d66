//! The feasibility report through the real MCP endpoint, a real worker and a real Redis:
//! a replay that wins only on one exact tick is `frame_perfect` in `simulate_replay`,
//! `submit_level`'s acceptance, `get_level` and the game pages' reads; one with slack is
//! `relaxed`; `playtest_map` carries it too, and the output schemas describe it.

use serde_json::{json, Value};

use crate::game_api::{game_app, get};
use crate::harness::{ok_result, TestApp};

/// A corridor under two rock-fall spawners (jitter 0): walking slowly, only a start after
/// exactly 32 ticks of waiting gets through (feasibility/tests/report.rs checks the same map
/// against the referee tick by tick).
const ROCKS: &str = "gcv-map 1\nname: Steinschlaggasse\nsize: 14 6\ngrid:\n..............\n..............\n..............\n..............\n..............\nGGGGGGGGGGGGGG\nentities:\nstart 1 4\nnest 12 4\nrockfall 6 1 interval=30 jitter=0 offset=0\nrockfall 8 1 interval=30 jitter=0 offset=2\n";

fn walk_after(wait: u32) -> Value {
    json!({"seed": 1, "actions": [{"action": 4, "ticks": wait}, {"action": 16, "ticks": 400}]})
}

/// `simulate_replay`'s structured result.
async fn simulate(app: &TestApp, key: &str, map: &str, replay: Value, idem: &str) -> Value {
    ok_result(
        &app.call(
            "simulate_replay",
            json!({"map": map, "replay": replay, "idempotencyKey": idem}),
            Some(key),
        )
        .await,
    )
}

const FLAT: &str = "gcv-map 1\nname: Flach\nsize: 30 3\ngrid:\n..............................\n..............................\nGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG\nentities:\nstart 0 1\nnest 29 1\n";

#[tokio::test]
async fn the_report_reaches_every_place_a_won_replay_is_shown() {
    let (app, _worker) = game_app().await;
    let key = app.agent_key("uhrmacher", 1).await;

    // simulate_replay: one exact tick.
    let r = simulate(&app, &key, ROCKS, walk_after(32), "s1").await;
    assert_eq!(r["outcome"], "won", "{r}");
    let f = &r["feasibility"];
    assert_eq!(f["verdict"], "frame_perfect", "{r}");
    assert_eq!(f["exactInputs"], 1);
    assert_eq!(f["exactInputTicks"], json!([33]));
    assert_eq!(
        f["tightest"],
        json!({"step": 1, "tick": 33, "fromAction": 4, "action": 16, "early": 0, "late": 0, "window": 1})
    );
    assert_eq!(f["longestWaitTicks"], 32);
    assert_eq!(f["complete"], true);
    assert!(f["hint"].as_str().unwrap().starts_with("Frame-perfect"));

    // One tick later loses: no report on a lost run.
    let lost = simulate(&app, &key, ROCKS, walk_after(33), "s2").await;
    assert_eq!(lost["outcome"], "lost", "{lost}");
    assert!(lost.get("feasibility").is_none(), "{lost}");

    // With slack: relaxed.
    let slack = json!({"seed": 7, "actions": [{"action": 4, "ticks": 20}, {"action": 16, "ticks": 30}, {"action": 4, "ticks": 40}, {"action": 8, "ticks": 200}]});
    let r = simulate(&app, &key, FLAT, slack, "s3").await;
    assert_eq!(r["feasibility"]["verdict"], "relaxed", "{r}");
    assert_eq!(r["feasibility"]["exactInputs"], 0);
    assert_eq!(r["feasibility"]["tightest"]["window"], 17);

    // submit_level stores it with the revision; get_level and the pages read it back.
    let s = ok_result(
        &app.call(
            "submit_level",
            json!({"name": "steinschlaggasse", "map": ROCKS, "replay": walk_after(32), "idempotencyKey": "sub1"}),
            Some(&key),
        )
        .await,
    );
    assert_eq!(s["acceptance"]["feasibility"], *f, "{s}");
    let id = s["revisionId"].as_str().unwrap().to_string();
    let level = ok_result(&app.call("get_level", json!({"revisionId": id}), None).await);
    assert_eq!(level["feasibility"], *f, "{level}");
    let (_, page) = get(&app, &format!("/api/game/revisions/{id}")).await;
    assert_eq!(page["feasibility"]["verdict"], "frame_perfect", "{page}");
    let (_, labor) = get(&app, "/api/game/labor").await;
    let card = labor["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["revisionId"] == id.as_str())
        .expect("the candidate is in the Labor");
    assert_eq!(card["feasibility"]["exactInputs"], 1, "{card}");
    // A shipped level was refereed and judged on the way in.
    let shipped = ok_result(
        &app.call("get_level", json!({"name": "erste-schritte"}), None)
            .await,
    );
    assert!(shipped["feasibility"]["verdict"].is_string(), "{shipped}");

    // playtest_map: the planner's replay is judged too, and a frame-perfect one warns.
    let p = ok_result(
        &app.call(
            "playtest_map",
            json!({"map": FLAT, "idempotencyKey": "p1"}),
            Some(&key),
        )
        .await,
    );
    assert_eq!(p["outcome"], "won", "{p}");
    assert!(p["feasibility"]["verdict"].is_string(), "{p}");
    let frame_perfect = p["feasibility"]["verdict"] == "frame_perfect";
    assert_eq!(p.get("warnings").is_some(), frame_perfect, "{p}");

    // The output schemas carry it.
    let list = app.rpc("tools/list", json!({}), Some(&key)).await;
    let tools = list.body["result"]["tools"].as_array().unwrap();
    let schema = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["outputSchema"]["properties"].clone()
    };
    let verdicts = json!(["relaxed", "fair", "tight", "frame_perfect"]);
    assert_eq!(
        schema("simulate_replay")["feasibility"]["properties"]["verdict"]["enum"],
        verdicts,
        "{}",
        schema("simulate_replay")["feasibility"]
    );
    assert_eq!(
        schema("playtest_map")["feasibility"]["properties"]["verdict"]["enum"],
        verdicts
    );
    assert!(schema("playtest_map")["warnings"]["items"]["properties"]["code"].is_object());
    assert!(
        schema("submit_level")["acceptance"]["properties"]["feasibility"]["properties"]["verdict"]
            .is_object()
    );
    assert_eq!(
        schema("get_level")["feasibility"]["anyOf"][0]["properties"]["verdict"]["enum"],
        verdicts
    );
}

/// `horst map simulate/solve --json` print the same report the tools return.
#[test]
fn the_map_cli_prints_the_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rocks.map"), ROCKS).unwrap();
    std::fs::write(dir.path().join("flat.map"), FLAT).unwrap();
    std::fs::write(dir.path().join("walk.json"), walk_after(32).to_string()).unwrap();
    let args = ["simulate", "rocks.map", "--replay", "walk.json"];
    let (code, json) = crate::map_cli::horst_map(dir.path(), &[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["feasibility"]["verdict"], "frame_perfect", "{json}");
    assert_eq!(v["feasibility"]["exactInputTicks"], json!([33]));
    let (_, text) = crate::map_cli::horst_map(dir.path(), &args);
    assert!(
        text.contains("feasibility: frame_perfect (tightest window 1 ticks"),
        "{text}"
    );
    let (code, json) = crate::map_cli::horst_map(
        dir.path(),
        &["solve", "flat.map", "--json", "--threads", "1"],
    );
    assert_eq!(code, 0, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["outcome"], "won");
    assert!(v["feasibility"]["verdict"].is_string(), "{json}");
    // Which racing search won: stage, racer and its heuristic weight (the CLI's, not the tool's).
    assert_eq!(v["wonBy"]["stage"], 0, "{json}");
    assert!(v["wonBy"]["weight"].as_u64().unwrap() > 0, "{json}");
    assert!(v["wonBy"]["racer"].is_u64(), "{json}");
    assert_eq!(
        v.get("warnings").is_some(),
        v["feasibility"]["verdict"] == "frame_perfect"
    );
}
