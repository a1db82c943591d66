//! Embeds every `NAME.map` of this directory that has a `NAME.replay.json` beside it (the
//! corpus below is the planner's, not shipped). The level's name is the file name without
//! its order prefix (`01-erste-schritte` -> `erste-schritte`), so the list of built-in names
//! is derived from the files and cannot drift from them.

use std::path::PathBuf;

/// The contract's level names: 1-30 letters, digits or hyphens.
fn valid_name(name: &str) -> bool {
    (1..=30).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read levels/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    files.sort();
    let mut out = String::from("pub const BUILTIN: &[Level] = &[\n");
    let mut seen = Vec::new();
    for map in files {
        let stem = map.file_stem().unwrap().to_string_lossy().to_string();
        let replay = dir.join(format!("{stem}.replay.json"));
        if !replay.exists() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", map.display());
        println!("cargo:rerun-if-changed={}", replay.display());
        let name = match stem.split_once('-') {
            Some((order, rest))
                if !order.is_empty() && order.bytes().all(|b| b.is_ascii_digit()) =>
            {
                rest
            }
            _ => stem.as_str(),
        }
        .to_ascii_lowercase();
        assert!(valid_name(&name), "levels/{stem}.map: {name:?} is not a valid level name (1-30 letters, digits or hyphens)");
        assert!(
            !seen.contains(&name),
            "levels/: two files give the level name {name:?}"
        );
        seen.push(name.clone());
        out.push_str(&format!(
            "    Level {{ file: {stem:?}, name: {name:?}, map: include_str!({:?}), replay: include_str!({:?}) }},\n",
            map.display().to_string(),
            replay.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("builtin.rs");
    std::fs::write(dest, out).expect("write builtin.rs");
}
