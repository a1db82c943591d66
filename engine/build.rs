//! Computes `engineVersion` (over `src/sim/`) and `policyVersion` (over `src/format/` except
//! the renderer) at build time, so evidence is bound to the exact code that produced it.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// SHA-256 over the files under `dir`, sorted by their path relative to the crate root:
/// for each file its relative path (with `/`), a NUL byte, its contents, a NUL byte.
fn hash_dir(root: &Path, dir: &str, skip: &[&str]) -> String {
    let mut files = Vec::new();
    collect(&root.join(dir), &mut files);
    let mut rel: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let r = p
                .strip_prefix(root)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            Some((r, p))
        })
        .filter(|(r, _)| !skip.contains(&r.as_str()))
        .collect();
    rel.sort();
    let mut h = Sha256::new();
    for (r, p) in &rel {
        let contents = std::fs::read(p).expect("read source file");
        h.update(r.as_bytes());
        h.update([0u8]);
        h.update(&contents);
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    println!("cargo:rerun-if-changed=src/sim");
    println!("cargo:rerun-if-changed=src/format");
    let engine = hash_dir(&root, "src/sim", &[]);
    let policy = hash_dir(&root, "src/format", &["src/format/render.rs"]);
    std::fs::write(out.join("engine_version.txt"), engine).expect("write engine version");
    std::fs::write(out.join("policy_version.txt"), policy).expect("write policy version");
}
