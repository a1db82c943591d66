//! Shared helpers for the integration tests: the committed levels under `levels/`.
#![allow(dead_code)]

use horst_engine::{parse_map, parse_replay_json, Map, Replay};
use std::path::PathBuf;

pub fn levels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../levels")
}

pub fn level_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(levels_dir())
        .expect("levels dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_suffix(".map").map(|s| s.to_string())
        })
        .collect();
    names.sort();
    names
}

pub fn map_text(name: &str) -> String {
    std::fs::read_to_string(levels_dir().join(format!("{name}.map"))).expect("read level")
}

pub fn level(name: &str) -> Map {
    parse_map(&map_text(name)).unwrap_or_else(|r| panic!("{name}: {}", r.summary()))
}

pub fn replay(name: &str) -> Replay {
    let text = std::fs::read_to_string(levels_dir().join(format!("{name}.replay.json")))
        .expect("read replay");
    parse_replay_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn steps(seed: u32, steps: &[(u8, u16)]) -> Replay {
    Replay {
        seed,
        actions: steps
            .iter()
            .map(|&(action, ticks)| horst_engine::Step { action, ticks })
            .collect(),
    }
}
