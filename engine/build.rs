//! Computes `engineVersion` (over `src/sim/`, `src/referee.rs` and `src/replay.rs`) and `policyVersion` (over `src/format/` except
//! the renderer) at build time, so evidence is bound to the exact code that produced it.
//! Both hash token streams, so comments and formatting do not change them (`build/source_hash.rs`).

#[path = "build/source_hash.rs"]
mod source_hash;

use std::path::PathBuf;

fn version(root: &std::path::Path, dir: &str, skip: &[&str]) -> String {
    let files = source_hash::read_sources(root, dir, skip).expect("read source files");
    source_hash::hash_sources(&files).expect("lex source files")
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    println!("cargo:rerun-if-changed=src/sim");
    for f in source_hash::ENGINE_FILES {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-changed=src/format");
    println!("cargo:rerun-if-changed=build/source_hash.rs");
    let files = source_hash::engine_sources(&root).expect("read engine source files");
    let engine = source_hash::hash_sources(&files).expect("lex engine source files");
    let policy = version(&root, "src/format", &["src/format/render.rs"]);
    std::fs::write(out.join("engine_version.txt"), engine).expect("write engine version");
    std::fs::write(out.join("policy_version.txt"), policy).expect("write policy version");
}
