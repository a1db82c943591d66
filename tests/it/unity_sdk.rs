//! The Unity SDK (`unity/`): its C# core compiled with Debian's Mono (`mcs`, C# 6) and tested
//! with NUnit 2.6, its WebGL bridge tested in Node, and the conformance test that plays the
//! same message sequences into the JS SDK and into the jslib + C# core. The work is in
//! `unity/Tests/`; this module builds once and runs it, so `cargo test --workspace` covers it.
//! `ops/test` installs the tools (mono-devel, nunit-console, libnunit-cil-dev) when missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn package() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("unity")
}

fn run(cmd: &mut Command, what: &str, install: &str) -> Output {
    cmd.output().unwrap_or_else(|e| {
        panic!("{what} could not start ({e}): {install}, or run ./ops/test, which installs it")
    })
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `unity/Tests/Mono~/build.sh` into this test binary's temp folder, once per run.
fn mono_build() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("unity-sdk");
        let out = run(
            Command::new("bash")
                .arg(package().join("Tests/Mono~/build.sh"))
                .arg(&out_dir),
            "bash",
            "install bash",
        );
        assert!(
            out.status.success(),
            "building the Unity SDK with mcs failed (mcs and NUnit come from Debian's mono-devel and libnunit-cil-dev):\n{}",
            text(&out)
        );
        out_dir
    })
}

/// The number after `label` in NUnit's summary line ("Tests run: 154, Errors: 0, ...").
fn count(summary: &str, label: &str) -> Option<u32> {
    let rest = &summary[summary.find(label)? + label.len()..];
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn unity_sdk_csharp_core_passes_its_nunit_tests() {
    let dir = mono_build();
    let out = run(
        Command::new("nunit-console")
            .args(["-nologo", "-noshadow", "-nodots"])
            .arg(format!("-xml={}", dir.join("nunit-result.xml").display()))
            .arg(dir.join("Rcadia.Agent.Tests.dll")),
        "nunit-console",
        "install Debian's nunit-console",
    );
    let report = text(&out);
    assert!(
        out.status.success(),
        "NUnit tests of unity/ failed:\n{report}"
    );
    let run = count(&report, "Tests run:").unwrap_or(0);
    assert_eq!(count(&report, "Failures:"), Some(0), "{report}");
    assert_eq!(count(&report, "Errors:"), Some(0), "{report}");
    // Guards against tests silently falling out of the build.
    assert!(run >= 150, "only {run} NUnit tests ran:\n{report}");
}

#[test]
fn unity_sdk_bridge_and_conformance_pass_their_node_tests() {
    let dir = mono_build();
    let tests = package().join("Tests/Node~");
    let mut files: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".test.mjs"))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "bridge.test.mjs",
            "conformance.test.mjs",
            "json-differential.test.mjs"
        ]
    );
    let out = run(
        Command::new("node")
            .arg("--test")
            .args(&files)
            .current_dir(&tests)
            .env("RCADIA_UNITY_BUILD", dir),
        "node",
        "install Node.js 20 or newer (Debian: apt-get install nodejs)",
    );
    let report = text(&out);
    assert!(
        out.status.success(),
        "the Unity SDK's Node tests failed:\n{report}"
    );
    assert!(report.contains("# fail 0"), "{report}");
    assert!(
        report.contains("# pass 17"),
        "expected 17 passing tests:\n{report}"
    );
}
