//! The Python agent of docs/agents-play.md, as the page shows it, plays a whole house chess
//! series: two copies of it (two processes, standard library only) against each other on a
//! table of the real house host, two rounds, colours alternating, then both leave.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::house_e2e::House;
use crate::rcadia_common::{Client, AGENT};

/// The first ```python block after the "### Python" heading of the agents guide.
pub(crate) fn documented_agent() -> String {
    documented_block("### Python", "python")
}

/// The first ```bash block after the "### curl" heading: the guide's curl loop.
pub(crate) fn documented_curl_loop() -> String {
    documented_block("### curl", "bash")
}

/// The first code block in `lang` after `heading` in docs/agents-play.md, as the page shows it.
fn documented_block(heading: &str, lang: &str) -> String {
    let doc = include_str!("../../docs/agents-play.md");
    let from = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/agents-play.md has a {heading:?} section"));
    let rest = &doc[from..];
    let fence = format!("```{lang}\n");
    let start = rest.find(&fence).expect("a code block") + fence.len();
    let len = rest[start..].find("\n```").expect("the block ends");
    rest[start..start + len].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_python_agent_plays_a_house_chess_series() {
    // Short games (a draw by move limit after 10 plies) keep the series quick.
    let house = House::start(&["chess"], "maxPlies=10", |_| {}).await;
    let table = house.open_table("chess").await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("agent.py");
    std::fs::write(&script, documented_agent()).unwrap();
    let base = format!("http://{}", house.app.addr);
    let mut runs = Vec::new();
    for name in ["Fish", "Crab"] {
        let token = house.agent(name).await.token;
        let child = Command::new("python3")
            .arg(&script)
            .arg("2")
            .env("HORST", &base)
            .env("TOKEN", &token)
            .env("NAME", name)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        runs.push(tokio::task::spawn_blocking(move || {
            child.wait_with_output().unwrap()
        }));
        // The first agent sits down before the second looks for a table.
        if runs.len() == 1 {
            let anon = Client {
                base: base.clone(),
                token: String::new(),
                http: reqwest::Client::new(),
            };
            let seated = crate::harness::eventually(Duration::from_secs(30), async || {
                let (_, v) = anon.get(&format!("{AGENT}/available?game=chess")).await;
                v["sessions"].as_array().is_some_and(|l| {
                    l.iter()
                        .any(|s| s["sessionId"] == table.as_str() && s["currentPlayers"] == 1)
                })
            })
            .await;
            assert!(seated, "the first agent never sat down at {table}");
        }
    }
    let mut rounds: Vec<Vec<Value>> = Vec::new();
    for r in runs {
        let out = tokio::time::timeout(Duration::from_secs(240), r)
            .await
            .expect("the series ends within 4 minutes")
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect();
        assert_eq!(lines.len(), 2, "two rounds: {stdout}");
        rounds.push(lines);
    }
    for lines in &rounds {
        assert_eq!(lines[0]["round"], 1);
        assert_eq!(lines[1]["round"], 2);
        let (r1, r2) = (&lines[0]["result"], &lines[1]["result"]);
        assert!(
            r1["reason"].is_string() && r2["reason"].is_string(),
            "{lines:?}"
        );
        // Chess alternates colours by round.
        assert_eq!(r1["white"], r2["black"], "{lines:?}");
        assert_eq!(r1["black"], r2["white"], "{lines:?}");
    }
    assert_eq!(rounds[0], rounds[1], "both saw the same results");
    // The series is over: both left, so the house re-opens a fresh table.
    let next = house.open_table("chess").await;
    assert_ne!(next, table);
    house.stop().await;
}
