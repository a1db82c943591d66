//! `engineVersion` and `policyVersion` hash the token streams of the simulation's and the
//! policy's source files: comments and formatting keep a version, any change of code does not.

#[path = "../build/source_hash.rs"]
mod source_hash;

use source_hash::hash_sources;

fn one(text: &str) -> String {
    hash_sources(&[("src/sim/a.rs".to_string(), text.to_string())]).expect("lexes")
}

const BASE: &str = "
/// Gravity per tick.
pub const GRAVITY: i32 = 96;

fn step(v: &mut i32) {
    // Fall.
    *v = (*v + GRAVITY).min(1792);
}
";

#[test]
fn comments_and_whitespace_keep_the_version() {
    let base = one(BASE);
    let variants = [
        // Other comments, doc comments and no comments at all.
        "pub const GRAVITY: i32 = 96; fn step(v: &mut i32) { *v = (*v + GRAVITY).min(1792); }",
        "//! The module.\n/** Block doc. */ pub const GRAVITY: i32 = 96;\n/* a\n block */\nfn step(v: &mut i32) {\n    *v = (*v + GRAVITY) // why\n        .min(1792);\n}\n",
        // rustfmt-style reflowing, tabs, CRLF line endings.
        "pub   const GRAVITY :i32=96;\r\n\tfn step(\r\n\tv: &mut i32\r\n) {\r\n *v = (*v+GRAVITY).min(1792);\r\n}\r\n",
        // An explicit doc attribute is documentation too.
        "#[doc = \"Gravity.\"] pub const GRAVITY: i32 = 96; fn step(v: &mut i32) { *v = (*v + GRAVITY).min(1792); }",
    ];
    for v in variants {
        assert_eq!(one(v), base, "{v}");
    }
}

#[test]
fn behaviour_changes_change_the_version() {
    let base = one(BASE);
    let variants = [
        BASE.replace("96", "97"),
        BASE.replace("1792", "0x700"),
        BASE.replace(".min(", ".max("),
        BASE.replace("*v + GRAVITY", "*v - GRAVITY"),
        BASE.replace("fn step", "#[inline] fn step"),
        BASE.replace("pub const", "const"),
        // Punctuation spacing is kept: `< =` and `<=` are different tokens.
        "const A: bool = 1 <= 2;".to_string(),
        "const A: bool = 1 < = 2;".to_string(),
    ];
    let mut seen = vec![base];
    for v in &variants {
        let h = one(v);
        assert!(!seen.contains(&h), "{v}");
        seen.push(h);
    }
    assert_ne!(one("const A: &str = \"x\";"), one("const A: &str = \"y\";"));
    assert_ne!(
        one("#[doc(hidden)] const A: u8 = 1;"),
        one("const A: u8 = 1;")
    );
    // Every token counts, a trailing comma too (`(x,)` is a tuple, `(x)` is not).
    assert_ne!(one("const A: (u8,) = (1,);"), one("const A: (u8) = (1);"));
}

#[test]
fn paths_and_file_order() {
    let a = ("src/sim/a.rs".to_string(), "const A: u8 = 1;".to_string());
    let b = ("src/sim/b.rs".to_string(), "const B: u8 = 2;".to_string());
    let ab = hash_sources(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(ab, hash_sources(&[b.clone(), a.clone()]).unwrap());
    // Moving code between files is a change (paths are hashed).
    let moved = (
        "src/sim/a.rs".to_string(),
        "const A: u8 = 1; const B: u8 = 2;".to_string(),
    );
    assert_ne!(ab, hash_sources(&[moved]).unwrap());
    assert!(hash_sources(&[("x.rs".to_string(), "fn (".to_string())]).is_err());
}

#[test]
fn the_built_versions_are_these_hashes_of_the_sources() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The simulation, and the referee's run loop and report and the replay parser, which
    // decide outcomes too.
    let mut engine = source_hash::read_sources(root, "src/sim", &[]).unwrap();
    assert!(engine.iter().any(|(p, _)| p == "src/sim/physics.rs"));
    for f in ["src/referee.rs", "src/replay.rs"] {
        engine.push((
            f.to_string(),
            std::fs::read_to_string(root.join(f)).unwrap(),
        ));
    }
    assert_eq!(
        hash_sources(&engine).unwrap(),
        horst_engine::engine_version()
    );
    let policy = source_hash::read_sources(root, "src/format", &["src/format/render.rs"]).unwrap();
    assert!(!policy.iter().any(|(p, _)| p.ends_with("render.rs")));
    assert_eq!(hash_sources(&policy).unwrap(), horst_engine::POLICY_VERSION);
}

#[test]
fn the_simulation_holds_no_tests() {
    // Unit tests in src/sim would be hashed into engineVersion: they live in tests/.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, text) in source_hash::engine_sources(root).unwrap() {
        assert!(!text.contains("#[cfg(test)]"), "{path} holds tests");
    }
}
