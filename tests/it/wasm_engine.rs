//! The engine in the browser is the referee's own engine: the WebAssembly module
//! (`engine-wasm/`, built by `ops/build-wasm`) gives the same outcome, ticks and
//! `stateHash` as the native referee on every committed level and the corpus, in Node
//! (here) and in Chromium (`game_e2e.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::Serialize;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Builds (or confirms up to date) `web/game/engine.wasm` once per test process.
pub fn engine_module() -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let out = Command::new("bash")
            .arg(root().join("ops/build-wasm"))
            .output()
            .map_err(|e| format!("cannot run ops/build-wasm: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "ops/build-wasm failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    });
    if let Err(e) = built {
        panic!("{e}");
    }
    root().join("web/game/engine.wasm")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Case {
    pub name: String,
    pub map: String,
    pub replay: serde_json::Value,
    pub outcome: &'static str,
    pub ticks: u32,
    pub state_hash: String,
    pub map_hash: String,
    pub death_tick: Option<u32>,
}

fn case(name: String, map_text: &str, replay: serde_json::Value) -> Case {
    let map = horst_engine::parse_map(map_text).expect("committed maps are valid");
    let parsed = horst_engine::parse_replay(&replay).expect("committed replays parse");
    let r = horst_engine::referee(&map, &parsed);
    Case {
        name,
        map: map_text.to_string(),
        replay,
        outcome: r.outcome,
        ticks: r.ticks,
        state_hash: r.state_hash,
        map_hash: r.map_hash,
        death_tick: r.death_tick,
    }
}

/// Every `NAME.map` with a `NAME.replay.json` in `dir`, sorted.
fn with_replays(dir: &Path) -> Vec<(String, String, serde_json::Value)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|p| {
            let replay = p.with_extension("replay.json");
            let replay = std::fs::read_to_string(replay).ok()?;
            let stem = p.file_stem()?.to_string_lossy().to_string();
            Some((
                stem,
                std::fs::read_to_string(&p).unwrap(),
                serde_json::from_str(&replay).unwrap(),
            ))
        })
        .collect()
}

/// The replay's first half: a run that ends unresolved in mid-level, so the compared state is
/// not only the final one.
fn first_half(replay: &serde_json::Value) -> serde_json::Value {
    let steps = replay["actions"].as_array().unwrap();
    let total: u64 = steps.iter().map(|s| s["ticks"].as_u64().unwrap()).sum();
    let mut left = total / 2;
    let mut out = Vec::new();
    for s in steps {
        if left == 0 {
            break;
        }
        let t = s["ticks"].as_u64().unwrap().min(left);
        left -= t;
        out.push(serde_json::json!({ "action": s["action"], "ticks": t }));
    }
    serde_json::json!({ "seed": replay["seed"], "actions": out })
}

/// The committed levels (full and half replays, and with another seed) and every corpus level
/// with a replay (full), with the native referee's results.
pub fn native_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (name, map, replay) in with_replays(&root().join("levels")) {
        cases.push(case(format!("{name} half"), &map, first_half(&replay)));
        let mut other_seed = replay.clone();
        other_seed["seed"] = serde_json::json!(4_000_000_007u32);
        cases.push(case(format!("{name} seed 4000000007"), &map, other_seed));
        cases.push(case(name, &map, replay));
    }
    for (name, map, replay) in with_replays(&root().join("levels/corpus")) {
        cases.push(case(format!("corpus/{name}"), &map, replay));
    }
    cases
}

#[test]
fn the_wasm_engine_matches_the_native_referee_in_node() {
    let module = engine_module();
    let size = std::fs::metadata(&module).unwrap().len();
    assert!(
        size <= 300 * 1024,
        "the engine module is {size} bytes; the page budget is 300 KiB"
    );
    let cases = native_cases();
    assert!(
        cases.iter().filter(|c| c.outcome == "won").count() >= 15,
        "the committed levels must win"
    );
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        serde_json::to_vec(&serde_json::json!({
            "engineVersion": horst_engine::engine_version(),
            "cases": cases,
        }))
        .unwrap(),
    )
    .unwrap();
    let web = root().join("web");
    let out = Command::new("node")
        .args(["--test", "test/engine-parity.test.js"])
        .env("HORST_NATIVE_RESULTS", file.path())
        .current_dir(&web)
        .output()
        .expect("node is not installed: install Node.js 20 or newer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("# pass 1") && stdout.contains("# skipped 0"),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
