//! `horst map ...` on local files: the same engine answers as the MCP tools.

use std::process::Command;

use serde_json::Value;

pub(crate) fn horst_map(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
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

/// `render`, `simulate` and `solve` on an invalid map list every error, as `validate` and the
/// `render_map` tool do (they printed only the first: one fix and rerun per error).
#[test]
fn render_simulate_and_solve_list_every_error_of_an_invalid_map() {
    let dir = tempfile::tempdir().unwrap();
    let broken = SPIKES
        .replace("......\n..^^..", ".....\n..^^..")
        .replace("nest 5 1", "nest 50 1");
    std::fs::write(dir.path().join("broken.map"), broken).unwrap();
    std::fs::write(
        dir.path().join("right.json"),
        r#"{"seed": 1, "actions": [{"action": 8, "ticks": 120}]}"#,
    )
    .unwrap();
    for args in [
        &["render", "broken.map"][..],
        &["simulate", "broken.map", "--replay", "right.json"],
        &["solve", "broken.map"],
    ] {
        let (code, json) = horst_map(dir.path(), &[args, &["--json"]].concat());
        assert_eq!(code, 2, "{args:?}: {json}");
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["error"]["code"], "validation_failed", "{args:?}: {json}");
        let codes: Vec<&str> = v["error"]["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("{args:?}: no errors list: {json}"))
            .iter()
            .map(|e| e["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["ragged_row", "entity_out_of_bounds"], "{args:?}");
        assert!(v["error"]["errors"][0]["hint"].is_string(), "{json}");

        let out = Command::new(env!("CARGO_BIN_EXE_horst"))
            .arg("map")
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("run horst map");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("error[ragged_row]"), "{args:?}: {err}");
        assert!(
            err.contains("error[entity_out_of_bounds]"),
            "{args:?}: {err}"
        );
        assert!(err.contains("hint: "), "{args:?}: {err}");
    }
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

/// Unsolvable (the ceiling leaves no room for the jump over the pit), but neither proof says so:
/// the planner searches until its time limit.
// A corridor one tile high over a 7-tile pit: unwinnable, and no proof decides it. The notch at
// the right end of the roof keeps any row from being solid across the map (with a roof there
// the jump envelope proves it, planner/src/envelope.rs).
const LOW_CORRIDOR: &str = "gcv-map 1\nname: low corridor\nsize: 24 6\ngrid:\n########################\n#######################.\n........................\nGGGGGGGGG.......GGGGGGGG\nEEEEEEEEE^^^^^^^EEEEEEEE\nEEEEEEEEEEEEEEEEEEEEEEEE\nentities:\nstart 1 2\nnest 22 2\n";

fn corpus(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("levels/corpus")
        .join(name)
}

#[test]
fn solve_says_why_and_prints_no_distance_for_a_proof() {
    let dir = tempfile::tempdir().unwrap();
    let map = corpus("u-wide-pit-01.map");
    let map = map.to_str().unwrap();
    let (code, json) = horst_map(dir.path(), &["solve", map, "--json", "--threads", "1"]);
    assert_eq!(code, 1, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["outcome"], "unresolved");
    assert_eq!(v["reason"], "unreachable");
    // The wide pit is already beyond the validator's relaxed reach (the `nest_unreachable`
    // warning), which the planner's `relaxed_graph` proof is.
    assert_eq!(v["proof"], "relaxed_graph");
    assert_eq!(v["explored"], 0);
    assert!(v.get("bestDistance").is_none(), "{json}");
    assert!(v.get("wonBy").is_none(), "{json}");
    assert!(v["hint"].as_str().unwrap().starts_with("Proved unwinnable"));
    let (code, text) = horst_map(dir.path(), &["solve", map, "--threads", "1"]);
    assert_eq!(code, 1);
    assert!(
        text.contains("outcome: unresolved (unreachable: relaxed_graph)"),
        "{text}"
    );
    assert!(
        text.contains("best distance to the nest: none (no nest is reachable)"),
        "{text}"
    );
    assert!(!text.contains(" tiles\n"), "{text}");

    // Out of time: not a proof, with the distance the search got to.
    std::fs::write(dir.path().join("low.map"), LOW_CORRIDOR).unwrap();
    let args = ["solve", "low.map", "--json", "--threads", "1"];
    let (code, json) = horst_map(dir.path(), &[&args[..], &["--time-limit", "0.5"]].concat());
    assert_eq!(code, 1, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["reason"], "time_limit");
    assert!(v.get("proof").is_none(), "{json}");
    assert!(v["explored"].as_u64().unwrap() > 0);
    assert!(v["bestDistance"].as_u64().is_some(), "{json}");
    assert!(v["hint"].as_str().unwrap().starts_with("Not a proof"));
}

/// Progress every 2 s on stderr, also into a pipe; Ctrl-C (SIGINT to the process) prints
/// what the search has and exits non-zero.
#[test]
fn solve_shows_progress_and_stops_on_ctrl_c() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("low.map"), LOW_CORRIDOR).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_horst"))
        .current_dir(dir.path())
        .args(["map", "solve", "low.map", "--threads", "1"])
        .args(["--time-limit", "600"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run horst map solve");
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut progress = Vec::new();
    // Two progress lines: the search has run for 4 s and reports on its own, into a pipe.
    while progress.len() < 2 {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "stderr closed early");
        if line.starts_with("stage ") {
            assert!(line.contains("states explored "), "{line}");
            assert!(line.contains("best distance to the nest "), "{line}");
            progress.push(line);
        }
    }
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("outcome: unresolved (cancelled)"), "{text}");
    assert!(text.contains("states explored: "), "{text}");
    let distance = text
        .lines()
        .find_map(|l| l.strip_prefix("best distance to the nest: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(distance.ends_with(" tiles"), "{text}");
}

/// `horst map` works on local files: its help lists only its own flags, and the store and
/// server flags the serving subcommands take are refused, before it and after it, rather than
/// silently ignored. The serving subcommands still list them (and `admin`'s nested commands
/// take them after the nested command).
#[test]
fn map_takes_only_its_own_flags_and_the_serving_commands_theirs() {
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_horst"))
            .args(args)
            .output()
            .expect("run horst");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for args in [&["map", "--help"][..], &["map", "render", "--help"]] {
        let text = help(args);
        for flag in ["--config", "--redis", "--data", "--listen"] {
            assert!(!text.contains(flag), "{args:?} lists {flag}:\n{text}");
        }
    }
    // Each lists the flags it uses and no other: `admin` and `worker` serve no HTTP (no
    // --listen), `house` and `play` reach horst over HTTP, never its store (no --redis,
    // --data). They listed all four, and took them without a word.
    let all = ["--config", "--redis", "--data", "--listen"];
    for (args, takes) in [
        (&["up", "--help"][..], &all[..]),
        (&["api", "--help"], &all),
        (&["worker", "--help"], &["--config", "--redis", "--data"]),
        (
            &["admin", "status", "--help"],
            &["--config", "--redis", "--data"],
        ),
        (&["house", "--help"], &["--config", "--listen"]),
        (&["play", "--help"], &["--config", "--listen"]),
    ] {
        let text = help(args);
        for flag in all {
            assert_eq!(
                text.contains(&format!("{flag} <")),
                takes.contains(&flag),
                "{args:?} and {flag}:\n{text}"
            );
        }
    }
    for (args, flag) in [
        (&["worker", "--listen", "127.0.0.1:1"][..], "--listen"),
        (&["admin", "status", "--listen", "127.0.0.1:1"], "--listen"),
        (&["house", "--data", "d"], "--data"),
        (
            &[
                "play",
                "--game",
                "chess",
                "--token",
                "t",
                "--redis",
                "redis://127.0.0.1:1",
            ],
            "--redis",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_horst"))
            .args(args)
            .output()
            .expect("run horst");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spikes.map"), SPIKES).unwrap();
    for args in [
        &[
            "map",
            "validate",
            "spikes.map",
            "--redis",
            "redis://127.0.0.1:1",
        ][..],
        &["--data", "d", "map", "validate", "spikes.map"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_horst"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("run horst");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--redis") || err.contains("--data"),
            "{args:?}: {err}"
        );
    }
    let (code, _) = horst_map(dir.path(), &["validate", "spikes.map"]);
    assert_eq!(code, 0);
}

/// `map solve --threads` takes what `worker.threads` takes, 0 (one per core) to 1024, and
/// refuses more at once with the range: `--threads 100000` started that many threads and hung
/// before the search (still running after a minute), and `0` meant one thread.
#[test]
fn solve_refuses_more_threads_than_a_worker_may_have() {
    use crate::harness::HorstProcess;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spikes.map"), SPIKES).unwrap();
    let mut p = HorstProcess::spawn(
        &[
            "map",
            "solve",
            "spikes.map",
            "--threads",
            "100000",
            "--time-limit",
            "1",
        ],
        &[],
        dir.path(),
    );
    let status = p.wait_exit(Duration::from_secs(20));
    assert!(status.is_some(), "still running after 20 s: {}", p.stderr());
    assert_eq!(status.unwrap().code(), Some(2), "{}", p.stderr());
    assert!(p.stderr().contains("1 to 1024"), "{}", p.stderr());
    for ok in ["0", "2"] {
        let (code, _) = horst_map(
            dir.path(),
            &["solve", "spikes.map", "--threads", ok, "--time-limit", "1"],
        );
        assert!(code == 0 || code == 1, "--threads {ok}: exit {code}");
    }
}
