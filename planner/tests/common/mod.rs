//! What the planner's integration tests share: where the levels are, and which of them have a
//! known winning replay.

use horst_engine::{parse_map, Map};
use std::path::{Path, PathBuf};

/// The repository's root (the levels live in `levels/`, `levels/corpus/` and
/// `levels/probes/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A level file, parsed; a broken file fails the test with its path.
pub fn load(p: &Path) -> Map {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    parse_map(&text).unwrap_or_else(|r| panic!("{}: {}", p.display(), r.summary()))
}

/// Every map with a winning replay beside it (`NAME.replay.json`), in `levels/`,
/// `levels/corpus/` (generated) and `levels/probes/` (written by hand), in name order: (name,
/// map, the replay's text).
pub fn with_replays() -> Vec<(String, Map, String)> {
    let mut out = Vec::new();
    for dir in ["levels", "levels/corpus", "levels/probes"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "map"))
            .collect();
        paths.sort();
        for p in paths {
            let Ok(replay) = std::fs::read_to_string(p.with_extension("replay.json")) else {
                continue;
            };
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((name, load(&p), replay));
        }
    }
    out
}
