//! `horst map ...` on local files: the same engine answers as the MCP tools.

use std::process::Command;

use serde_json::Value;

fn horst_map(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_horst"))
        .arg("map")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run horst map");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const SPIKES: &str = "gcv-map 1\nname: spikes\nsize: 6 3\ngrid:\n......\n..^^..\nGGGGGG\nentities:\nstart 0 1\nnest 5 1\n";

#[test]
fn simulate_says_what_killed_the_bird() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spikes.map"), SPIKES).unwrap();
    std::fs::write(
        dir.path().join("right.json"),
        r#"{"seed": 1, "actions": [{"action": 8, "ticks": 120}]}"#,
    )
    .unwrap();
    let args = ["simulate", "spikes.map", "--replay", "right.json"];
    let (code, json) = horst_map(dir.path(), &[&args[..], &["--json"]].concat());
    assert_eq!(code, 1, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["outcome"], "lost");
    assert_eq!(
        v["deathCause"],
        serde_json::json!({"cause": "spikes", "x": 2, "y": 1})
    );
    let (code, text) = horst_map(dir.path(), &args);
    assert_eq!(code, 1);
    assert!(text.contains("deathCause: spikes at tile (2, 1)"), "{text}");
}

#[test]
fn validate_reports_row_and_entity_errors_together() {
    let dir = tempfile::tempdir().unwrap();
    let broken = SPIKES
        .replace("......\n..^^..", ".....\n..^^..")
        .replace("nest 5 1", "nest 50 1");
    std::fs::write(dir.path().join("broken.map"), broken).unwrap();
    let (code, json) = horst_map(dir.path(), &["validate", "broken.map", "--json"]);
    assert_ne!(code, 0);
    let v: Value = serde_json::from_str(&json).unwrap();
    let codes: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["ragged_row", "entity_out_of_bounds"], "{json}");
    assert!(v["errors"][0]["hint"]
        .as_str()
        .unwrap()
        .starts_with("add 1 tile "));
}

#[test]
fn render_clips_like_the_tool_and_writes_a_png() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spikes.map"), SPIKES).unwrap();
    let args = [
        "render",
        "spikes.map",
        "--x",
        "-2",
        "--width",
        "5",
        "--png",
        "w.png",
    ];
    let (code, json) = horst_map(dir.path(), &[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["clipped"], true);
    assert_eq!(
        v["window"],
        serde_json::json!({"x": 0, "y": 0, "width": 3, "height": 3})
    );
    assert_eq!(v["image"]["width"], 3 * 12);
    let png = std::fs::read(dir.path().join("w.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let (code, text) = horst_map(dir.path(), &args);
    assert_eq!(code, 0);
    assert!(
        text.starts_with("clipped to the map: asked for x -2 to 2"),
        "{text}"
    );
    assert!(
        text.contains("picture: w.png (36 x 36 px, 12 px a tile)"),
        "{text}"
    );
    // A window beside the map is a usage error that says where the map is.
    let (code, json) = horst_map(dir.path(), &["render", "spikes.map", "--x", "6", "--json"]);
    assert_eq!(code, 2);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["error"]["code"], "invalid_input");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("6 x 3 tiles"),
        "{v}"
    );
}
