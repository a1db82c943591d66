//! Replays of long games, over HTTP against a real horst API and Redis: a game of chess of
//! 1,000 plies (the house's rules and chess.js, driven by `web/test-support/long-chess.js`)
//! keeps every ply in its replay, which replays move by move to the same final position,
//! within a bounded size.
//!
//! A chess state carries the whole move list, so each state stored in full made a replay
//! grow with the square of the game's length: past about 450 plies its 1 MiB were spent, and
//! every later line was dropped (one `truncated` line, then the end).

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::rcadia_common::{app_with, cast, max_seq, started, two_player, AGENT};

const PLIES: usize = 1000;

fn web_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("web")
}

/// Runs `web/test-support/long-chess.js` with `args`, `input` on its stdin; its JSON answer.
fn long_chess(args: &[&str], input: &str) -> Value {
    assert!(
        web_dir().join("node_modules/chess.js").exists(),
        "web/node_modules is missing: run `npm ci --prefix web` once"
    );
    let mut child = Command::new("node")
        .arg("test-support/long-chess.js")
        .args(args)
        .current_dir(web_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node is not installed: install Node.js 20 or newer");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "long-chess.js {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_of_a_thousand_plies_of_chess_replays_ply_by_ply_within_its_bound() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    // Seat 0 is white in round 1 (the house's colours).
    let game = tokio::task::spawn_blocking({
        let (w, b) = (pids[0].clone(), pids[1].clone());
        move || long_chess(&["play", &w, &b, &PLIES.to_string(), "7"], "")
    })
    .await
    .unwrap();
    let plies = game["plies"].as_array().unwrap();
    assert_eq!(plies.len(), PLIES);
    host.ops(
        &id,
        json!([{ "op": "state", "state": game["initial"] },
               { "op": "legal_actions", "playerId": pids[0], "actions": [plies[0]["uci"]] }]),
    )
    .await;
    for (i, ply) in plies.iter().enumerate() {
        let mover = &agents[i % 2];
        let s = mover.state(&id, 5.0).await;
        assert_eq!(s["yourTurn"], true, "ply {i}: {s}");
        let (st, v) = mover
            .act(&id, ply["uci"].clone(), s["turn"].as_u64().unwrap())
            .await;
        assert_eq!(st, 200, "ply {i}: {v}");
        let p = host.pending(&id, after, 5.0).await;
        after = max_seq(&p, after);
        let ops = match plies.get(i + 1) {
            Some(next) => json!([{ "op": "state", "state": ply["state"] },
                { "op": "legal_actions", "playerId": pids[(i + 1) % 2], "actions": [next["uci"]] }]),
            None => json!([{ "op": "state", "state": ply["state"] },
                { "op": "end", "result": { "winner": null, "reason": "move_limit" } }]),
        };
        host.ops(&id, ops).await;
    }
    // The stored replay: bounded by the game's length, not its square.
    let key = app
        .store
        .key_in_bucket(app.store.bucket_of(&id), &format!("ses:{id}:replay"));
    let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
        .arg(&key)
        .arg(0)
        .arg(-1)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let stored: usize = raw.iter().map(Vec::len).sum();
    println!(
        "a replay of {PLIES} plies of chess: {} lines, {stored} bytes stored ({:.0} a ply)",
        raw.len(),
        stored as f64 / PLIES as f64
    );
    assert!(
        stored <= 320 * PLIES,
        "{stored} bytes stored for {PLIES} plies: more than 320 a ply"
    );
    // Downloaded, it replays ply by ply to the same final position.
    let asked = std::time::Instant::now();
    let r = app
        .http
        .get(app.url(&format!("{AGENT}/{id}/replay")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body = r.text().await.unwrap();
    let plain_took = asked.elapsed();
    let lines: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds = |k: &str| lines.iter().filter(|l| l["kind"] == k).count();
    assert_eq!(kinds("truncated"), 0, "the replay was cut");
    assert_eq!(kinds("action"), PLIES);
    assert_eq!(kinds("state"), PLIES + 1);
    assert_eq!(kinds("end"), 1);
    // Each state as the game published it.
    let states: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "state")
        .map(|l| &l["state"])
        .collect();
    assert_eq!(states[0], &game["initial"]);
    for (i, ply) in plies.iter().enumerate() {
        assert_eq!(
            states[i + 1],
            &ply["state"],
            "the state after ply {}",
            i + 1
        );
    }
    // Asked for as gzip (as a browser asks), the same lines in a small part of the bytes.
    let replay_taking = |accept: &'static str| {
        app.http
            .get(app.url(&format!("{AGENT}/{id}/replay")))
            .header("accept-encoding", accept)
            .send()
    };
    let asked = std::time::Instant::now();
    let r = replay_taking("br, gzip;q=0.8").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let header = |name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(header("content-encoding"), "gzip");
    assert!(
        header("vary").contains("Accept-Encoding"),
        "{}",
        header("vary")
    );
    let zipped = r.bytes().await.unwrap();
    let took = asked.elapsed();
    let mut unzipped = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(&zipped[..]),
        &mut unzipped,
    )
    .unwrap();
    assert!(unzipped == body, "the gzip answer holds other lines");
    println!(
        "served: {} bytes as JSON Lines in {} ms, {} as gzip in {} ms",
        body.len(),
        plain_took.as_millis(),
        zipped.len(),
        took.as_millis()
    );
    assert!(
        zipped.len() * 20 < body.len(),
        "{} bytes as gzip of {}: less than 20 times smaller",
        zipped.len(),
        body.len()
    );
    // `q=0` refuses gzip: the lines as they are.
    let r = replay_taking("gzip;q=0").await.unwrap();
    assert!(r.headers().get("content-encoding").is_none());
    assert_eq!(r.text().await.unwrap(), body);
    let check = tokio::task::spawn_blocking(move || long_chess(&["verify"], &body))
        .await
        .unwrap();
    assert_eq!(check["errors"], json!([]), "{check}");
    assert_eq!(check["plies"], PLIES);
    assert_eq!(check["states"], PLIES + 1);
    assert_eq!(check["fen"], game["fen"]);
}

/// A replay asked for too early, of an unknown game or by something that is no session id
/// is answered with the protocol's code and what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_that_cannot_be_served_says_why_and_what_to_do() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (running, _, _) = started(&host, &agents, two_player(json!({}))).await;
    let anon = crate::rcadia_common::Client {
        token: String::new(),
        ..host.clone()
    };
    for (id, status, code, says) in [
        (running.as_str(), 409, "not_finished", "/watch/"),
        ("ses_0000deadbeef", 404, "not_found", "check the id"),
        ("not-a-session", 404, "not_found", "ses_0123456789ab"),
    ] {
        let (st, v) = anon.get(&format!("{AGENT}/{id}/replay")).await;
        assert_eq!(st, status, "{id}: {v}");
        assert_eq!(v["code"], code, "{id}: {v}");
        assert!(v["error"].as_str().unwrap().contains(says), "{id}: {v}");
    }
}
