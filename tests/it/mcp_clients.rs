//! Real MCP clients against a real horst: the official Python SDK (`mcp`, streamable HTTP,
//! default mode: it probes a newer revision first and must fall back to `initialize`) and
//! the official TypeScript SDK (`@modelcontextprotocol/sdk`). Both validate
//! `structuredContent` against the tools' `outputSchema`.
//!
//! MCP Inspector's CLI (`--strict`) checks the tools' schemas for portability.
//!
//! Setup (once per machine, also in CI): `bash tests/clients/setup.sh`. It installs the
//! Python package into `target/mcp-clients/venv` and the npm package into
//! `tests/clients/ts/node_modules` (from the committed package-lock.json). Without it these
//! tests fail and name that command; they never pass silently.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::{spawn_gateway, TestApp};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const SETUP: &str = "the MCP client packages are not installed; run `bash tests/clients/setup.sh` from the repository root (needs python3 with venv, node and npm)";

fn python() -> PathBuf {
    let py = root().join("target/mcp-clients/venv/bin/python");
    let ok = py.exists()
        && std::process::Command::new(&py)
            .args(["-c", "import mcp"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
    assert!(ok, "{SETUP} (missing: {})", py.display());
    py
}

fn node_client() -> PathBuf {
    let dir = root().join("tests/clients/ts");
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(sdk.exists(), "{SETUP} (missing: {})", sdk.display());
    let node = std::process::Command::new("node").arg("--version").output();
    assert!(
        node.map(|o| o.status.success()).unwrap_or(false),
        "{SETUP} (node is not on PATH)"
    );
    dir.join("client.mjs")
}

async fn run(program: &Path, args: &[String], cwd: &Path) -> String {
    let out = tokio::time::timeout(
        Duration::from_secs(180),
        tokio::process::Command::new(program)
            .args(args)
            .current_dir(cwd)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("client finished within 180 s")
    .expect("client started");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        program.display(),
        out.status
    );
    stdout
}

fn level_files() -> (String, String) {
    let l = root().join("levels");
    (
        l.join("01-erste-schritte.map").display().to_string(),
        l.join("01-erste-schritte.replay.json")
            .display()
            .to_string(),
    )
}

async fn key(app: &TestApp) -> String {
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    let v: serde_json::Value = r.json().await.unwrap();
    v["key"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_anonymous_and_the_whole_loop() {
    let py = python();
    let app = spawn_gateway().await;
    // As the binary does at first start: the shipped levels become promoted revisions.
    horst_operator::publish_shipped(&app.store)
        .await
        .expect("publish the shipped levels");
    let _worker = app.start_engine_worker();
    let script = root()
        .join("tests/clients/python_client.py")
        .display()
        .to_string();
    let url = app.url("/api/mcp");
    let out = run(&py, &[script.clone(), url.clone()], &root()).await;
    assert!(out.contains("python client: OK"), "{out}");
    let (map, replay) = level_files();
    let k = key(&app).await;
    let out = run(&py, &[script, url, k, map, replay], &root()).await;
    assert!(out.contains("python client: OK"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_anonymous_and_the_whole_loop() {
    let client = node_client();
    let app = spawn_gateway().await;
    // As the binary does at first start: the shipped levels become promoted revisions.
    horst_operator::publish_shipped(&app.store)
        .await
        .expect("publish the shipped levels");
    let _worker = app.start_engine_worker();
    let url = app.url("/api/mcp");
    let dir = client.parent().unwrap().to_path_buf();
    let node = PathBuf::from("node");
    let script = client.display().to_string();
    let out = run(&node, &[script.clone(), url.clone()], &dir).await;
    assert!(out.contains("ts client: OK"), "{out}");
    let (map, replay) = level_files();
    let k = key(&app).await;
    let out = run(&node, &[script, url, k, map, replay], &dir).await;
    assert!(out.contains("ts client: OK"), "{out}");
}

/// MCP Inspector's `--strict` lint of `tools/list` (type arrays, untyped or boolean schemas,
/// remote references) finds nothing in any tool's input or output schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_strict_finds_no_schema_problem() {
    let bin = root().join("tests/clients/inspector/node_modules/.bin/mcp-inspector");
    assert!(bin.exists(), "{SETUP} (missing: {})", bin.display());
    let app = spawn_gateway().await;
    let url = app.url("/api/mcp");
    let home = tempfile::tempdir().unwrap();
    let out = tokio::time::timeout(
        Duration::from_secs(180),
        tokio::process::Command::new(&bin)
            .args([
                "--cli",
                &url,
                "--transport",
                "http",
                "--method",
                "tools/list",
                "--strict",
            ])
            // Its connection catalog goes to a scratch home.
            .env("HOME", home.path())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the inspector finished within 180 s")
    .expect("the inspector started");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {}: {stderr}", out.status);
    assert!(
        !stderr.contains("Warning") && !stderr.contains("Error"),
        "{stderr}"
    );
    let listed: serde_json::Value = serde_json::from_str(&stdout).expect("tools/list JSON");
    assert_eq!(
        listed["tools"].as_array().map(Vec::len),
        Some(18),
        "{stdout}"
    );
}
