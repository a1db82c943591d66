//! The browser-side files (SDK, bridge, house games) have their own unit tests, run with
//! Node's test runner. Running them from here makes `cargo test --workspace` the whole suite.

use std::path::Path;
use std::process::Command;

#[test]
fn node_unit_tests_of_the_web_files_pass() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
    assert!(
        web.join("node_modules/chess.js").exists(),
        "web/node_modules is missing: run `npm ci --prefix web` once (the house games use chess.js from npm)"
    );
    let mut files: Vec<String> = std::fs::read_dir(web.join("test"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".test.js"))
        .map(|n| format!("test/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "too few web tests found: {files:?}");
    let out = Command::new("node")
        .arg("--test")
        .args(&files)
        .current_dir(&web)
        .output()
        .expect(
            "node is not installed: install Node.js 20 or newer (Debian: apt-get install nodejs)",
        );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
}
