//! `horst play`, the agent CLI: real `horst` processes play against each other on a real
//! horst (`spawn_app`), hosted by this test over the bridge API.
//!
//! The test's game, "race to 10": players take turns adding 1, 2 or 3 to a shared total;
//! whoever brings it to 10 or more wins. Seat 0 starts odd rounds, seat 1 even ones. With
//! `--policy first` every move adds 1, so the 10th move wins: seat 1 wins round 1 and seat 0
//! round 2.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::{HorstProcess, TestApp};
use crate::rcadia_common::*;

const GAME: &str = "race10";

/// Opens a race10 table (v2, `autoRematch` as given, no clock).
async fn open_table(host: &Client, auto_rematch: bool) -> String {
    let config = two_player(json!({ "autoRematch": auto_rematch, "gameType": GAME }));
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": config, "gameId": GAME, "gameTitle": "Race to 10" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    v["sessionId"].as_str().unwrap().to_string()
}

/// A race10 table hosted by this test (`host_race` in a task) and two `play` tokens to seat
/// agents at it: (app, Ann's token, Bob's token, table, the host's log, the hosting task).
async fn race_table(
    auto_rematch: bool,
    reject_seat: Option<usize>,
) -> (
    TestApp,
    String,
    String,
    String,
    Arc<Mutex<HostLog>>,
    tokio::task::JoinHandle<()>,
) {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let t_a = play_token(&app, "Ann", &["play"]).await;
    let t_b = play_token(&app, "Bob", &["play"]).await;
    let table = open_table(&host, auto_rematch).await;
    let log = Arc::new(Mutex::new(HostLog::default()));
    let hosting = tokio::spawn(host_race(host, table.clone(), reject_seat, log.clone()));
    (app, t_a, t_b, table, log, hosting)
}

/// What the host saw, for asserts.
#[derive(Default)]
struct HostLog {
    /// (round, winner) of every game it ended.
    results: Vec<(u64, String)>,
    /// Actions it rejected: (playerId, actionId).
    rejected: Vec<(String, String)>,
}

/// Hosts race10 on `first` and every rematch after it, until a series ends without one.
/// `reject_seat`: the first action of the player in that seat is rejected once.
async fn host_race(
    host: Client,
    first: String,
    reject_seat: Option<usize>,
    log: Arc<Mutex<HostLog>>,
) {
    let mut id = first;
    let mut after = 0;
    let mut players: Vec<String> = Vec::new();
    let mut round = 1;
    let mut total = 0u64;
    let mut to_move = 0usize;
    let mut rejected_once = false;
    loop {
        let p = host.pending(&id, after, 2.0).await;
        for e in entries(&p) {
            after = after.max(e["seq"].as_u64().unwrap());
            if e["event"] == "game_start" {
                players = e["players"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect();
                round = e["round"].as_u64().unwrap_or(1);
                total = 0;
                to_move = ((round + 1) % 2) as usize;
                let state = json!({ "total": 0, "toMove": players[to_move], "round": round,
                                    "lastMove": null });
                host.ops(
                    &id,
                    json!([{ "op": "state", "state": state },
                           { "op": "legal_actions", "playerId": players[to_move], "actions": [1, 2, 3] }]),
                )
                .await;
            } else if e["type"] == "action" {
                let pid = e["playerId"].as_str().unwrap().to_string();
                let action_id = e["actionId"].as_str().unwrap_or("").to_string();
                let seat = players.iter().position(|p| *p == pid);
                let n = e["action"].as_u64().filter(|n| (1..=3).contains(n));
                let reject = |reason: &str| json!([{ "op": "reject", "playerId": pid, "reason": reason, "actionId": action_id }]);
                if seat.is_some() && seat == reject_seat && !rejected_once {
                    rejected_once = true;
                    log.lock()
                        .unwrap()
                        .rejected
                        .push((pid.clone(), action_id.clone()));
                    host.ops(&id, reject("not yet: the test rejects your first move"))
                        .await;
                    continue;
                }
                let Some(n) = n.filter(|_| seat == Some(to_move)) else {
                    host.ops(&id, reject("not your turn, or not 1, 2 or 3"))
                        .await;
                    continue;
                };
                total += n;
                let last = json!({ "by": pid, "move": n, "total": total });
                if total >= 10 {
                    log.lock().unwrap().results.push((round, pid.clone()));
                    let state =
                        json!({ "total": total, "toMove": null, "round": round, "lastMove": last });
                    host.ops(
                        &id,
                        json!([{ "op": "state", "state": state },
                               { "op": "end", "result": { "winner": pid, "reason": "reached_10", "total": total } }]),
                    )
                    .await;
                } else {
                    to_move = 1 - to_move;
                    let state = json!({ "total": total, "toMove": players[to_move], "round": round,
                                        "lastMove": last });
                    host.ops(
                        &id,
                        json!([{ "op": "state", "state": state },
                               { "op": "legal_actions", "playerId": players[to_move], "actions": [1, 2, 3] }]),
                    )
                    .await;
                }
            }
        }
        if p["status"] == "finished" {
            match p["nextSessionId"].as_str() {
                Some(next) => {
                    id = next.to_string();
                    after = 0;
                }
                None => return,
            }
        }
    }
}

/// `horst play` with these arguments against `app` (the token through `--token` or, with
/// `via_env`, through HORST_AGENT_TOKEN).
pub fn play(
    app: &TestApp,
    token: &str,
    via_env: bool,
    extra: &[&str],
    dir: &std::path::Path,
) -> HorstProcess {
    let backend = format!("http://{}", app.addr);
    let mut args: Vec<&str> = vec!["play", "--backend", &backend, "--json"];
    args.extend_from_slice(extra);
    if via_env {
        HorstProcess::spawn(&args, &[("HORST_AGENT_TOKEN", token)], dir)
    } else {
        args.extend_from_slice(&["--token", token]);
        HorstProcess::spawn(&args, &[], dir)
    }
}

/// Waits (without blocking the runtime the API runs on) for the process to exit.
pub async fn exit_code(p: &mut HorstProcess, limit: Duration) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(status) = p.child.try_wait().unwrap() {
            // Let the reader threads catch the last lines.
            tokio::time::sleep(Duration::from_millis(200)).await;
            return status.code().unwrap_or(-1);
        }
        assert!(
            start.elapsed() < limit,
            "horst play did not exit within {limit:?}\nstdout:\n{}\nstderr:\n{}",
            p.stdout(),
            p.stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (without blocking the runtime) for a stdout line containing `needle`.
pub async fn stdout_line(p: &mut HorstProcess, needle: &str, limit: Duration) {
    let start = Instant::now();
    while !p.stdout().contains(needle) {
        if let Some(status) = p.child.try_wait().unwrap() {
            panic!(
                "horst play exited ({status})\nstdout:\n{}\nstderr:\n{}",
                p.stdout(),
                p.stderr()
            );
        }
        assert!(
            start.elapsed() < limit,
            "no {needle:?} within {limit:?}\nstdout:\n{}",
            p.stdout()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `--json` events of a run.
pub fn events(p: &HorstProcess) -> Vec<Value> {
    p.stdout()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

pub fn of_kind<'a>(ev: &'a [Value], kind: &str) -> Vec<&'a Value> {
    ev.iter().filter(|e| e["event"] == kind).collect()
}

pub async fn play_token(app: &TestApp, name: &str, scopes: &[&str]) -> String {
    let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
    app.auth.create_token(&scopes, Some(name)).await.unwrap().0
}

#[tokio::test]
async fn two_agents_play_a_series_and_follow_the_rematch() {
    let (app, t_a, t_b, table, log, hosting) = race_table(true, None).await;

    let dir = tempfile::tempdir().unwrap();
    let common = ["--game", GAME, "--policy", "first", "--rounds", "2"];
    let mut a = play(&app, &t_a, false, &common, dir.path());
    let mut b = play(
        &app,
        &t_b,
        true,
        &[&common[..], &["--as-name", "Bobby"]].concat(),
        dir.path(),
    );
    let code_a = exit_code(&mut a, Duration::from_secs(120)).await;
    let code_b = exit_code(&mut b, Duration::from_secs(120)).await;
    assert_eq!(
        code_a,
        0,
        "stdout:\n{}\nstderr:\n{}",
        a.stdout(),
        a.stderr()
    );
    assert_eq!(
        code_b,
        0,
        "stdout:\n{}\nstderr:\n{}",
        b.stdout(),
        b.stderr()
    );

    let runs = [events(&a), events(&b)];
    // Both joined the table, in different seats; B under its --as-name.
    let joined: Vec<&Value> = runs.iter().map(|ev| of_kind(ev, "joined")[0]).collect();
    for j in &joined {
        assert_eq!(j["sessionId"], table.as_str(), "{j}");
        assert_eq!(j["game"], GAME);
        assert_eq!(j["round"], 1);
        assert!(j["playerId"].as_str().unwrap().starts_with("p_"), "{j}");
    }
    assert_eq!(joined[0]["asName"], "Ann");
    assert_eq!(joined[1]["asName"], "Bobby");
    let mut seats: Vec<u64> = joined.iter().map(|j| j["seat"].as_u64().unwrap()).collect();
    seats.sort();
    assert_eq!(seats, [0, 1]);
    let pid_of_seat = |seat: u64| -> String {
        joined.iter().find(|j| j["seat"] == seat).unwrap()["playerId"]
            .as_str()
            .unwrap()
            .to_string()
    };

    // (Copied out: the host task on this thread locks it too.)
    let results = log.lock().unwrap().results.clone();
    assert_eq!(
        results,
        vec![(1, pid_of_seat(1)), (2, pid_of_seat(0))],
        "the host's results"
    );
    let next = {
        let ev = &runs[0];
        of_kind(ev, "rematch")[0]["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for (ev, j) in runs.iter().zip(&joined) {
        let me = j["playerId"].as_str().unwrap();
        let seat = j["seat"].as_u64().unwrap();
        // Two rounds announced, with both players.
        let rounds = of_kind(ev, "round");
        assert_eq!(rounds.len(), 2, "{ev:?}");
        assert_eq!(rounds[0]["round"], 1);
        assert_eq!(rounds[1]["round"], 2);
        assert_eq!(rounds[1]["sessionId"], next.as_str());
        assert_eq!(rounds[1]["seriesId"], table.as_str());
        assert_eq!(rounds[0]["players"].as_array().unwrap().len(), 2);
        // Five moves of 1 each per round, every one by the policy "first".
        let moves = of_kind(ev, "move");
        assert_eq!(moves.len(), 10, "{ev:?}");
        assert!(moves.iter().all(|m| m["action"] == 1), "{moves:?}");
        assert_eq!(moves.iter().filter(|m| m["round"] == 2).count(), 5);
        // The opponent's moves come from the state's lastMove.
        let theirs = of_kind(ev, "opponent_move");
        assert!(theirs.len() >= 8, "{theirs:?}");
        assert!(
            theirs
                .iter()
                .all(|m| m["by"] != me && m["move"]["move"] == 1),
            "{theirs:?}"
        );
        // Results: seat 1 wins round 1, seat 0 round 2.
        let results = of_kind(ev, "result");
        assert_eq!(results.len(), 2, "{ev:?}");
        assert_eq!(results[0]["round"], 1);
        assert_eq!(results[0]["winner"], pid_of_seat(1).as_str());
        assert_eq!(results[0]["youWon"], seat == 1);
        assert_eq!(results[0]["reason"], "reached_10");
        assert_eq!(results[0]["result"]["total"], 10);
        assert_eq!(results[1]["round"], 2);
        assert_eq!(results[1]["winner"], pid_of_seat(0).as_str());
        assert_eq!(results[1]["youWon"], seat == 0);
        // Round 1's rematch was followed (same seat, no re-join); after round 2 the agent
        // opted out of round 3 and stopped.
        let rematches = of_kind(ev, "rematch");
        assert_eq!(rematches.len(), 1, "{ev:?}");
        assert_eq!(rematches[0]["from"], table.as_str());
        assert_eq!(rematches[0]["sessionId"], next.as_str());
        assert_eq!(rematches[0]["round"], 2);
        assert_eq!(of_kind(ev, "joined").len(), 1);
        assert_eq!(of_kind(ev, "left").len(), 1, "{ev:?}");
        let done = ev.last().unwrap();
        assert_eq!(done["event"], "done");
        assert_eq!(done["reason"], "rounds_reached");
        assert_eq!(done["rounds"], 2);
        assert!(of_kind(ev, "rejected").is_empty());
    }
    // The token is never printed, whether it came from --token or the environment.
    for (p, t) in [(&a, &t_a), (&b, &t_b)] {
        assert!(!p.stdout().contains(t.as_str()) && !p.stderr().contains(t.as_str()));
    }
    hosting.abort();
}

#[tokio::test]
async fn a_rejected_move_is_played_again_and_the_series_ends() {
    let (app, t_a, t_b, table, log, hosting) = race_table(false, Some(0)).await;

    let dir = tempfile::tempdir().unwrap();
    // Join one at a time so seat 0 (the one rejected) is A's.
    let args = ["--game", GAME, "--policy", "first"];
    let mut a = play(&app, &t_a, false, &args, dir.path());
    stdout_line(&mut a, "\"joined\"", Duration::from_secs(60)).await;
    let mut b = play(
        &app,
        &t_b,
        false,
        &["--session", &table, "--policy", "random", "--seed", "3"],
        dir.path(),
    );
    let code_a = exit_code(&mut a, Duration::from_secs(120)).await;
    let code_b = exit_code(&mut b, Duration::from_secs(120)).await;
    assert_eq!(
        code_a,
        0,
        "stdout:\n{}\nstderr:\n{}",
        a.stdout(),
        a.stderr()
    );
    assert_eq!(
        code_b,
        0,
        "stdout:\n{}\nstderr:\n{}",
        b.stdout(),
        b.stderr()
    );

    let ev = events(&a);
    assert_eq!(of_kind(&ev, "joined")[0]["seat"], 0);
    let rejected = of_kind(&ev, "rejected");
    assert_eq!(rejected.len(), 1, "{ev:?}");
    let r = rejected[0];
    assert_eq!(r["action"], 1);
    assert_eq!(r["reason"], "not yet: the test rejects your first move");
    assert_eq!(r["round"], 1);
    // The move before it was the one rejected; the next one is on the same turn, and the
    // rejected action is tried last, so it is 2.
    let pos = ev.iter().position(|e| e["event"] == "rejected").unwrap();
    let before = ev[..pos]
        .iter()
        .rev()
        .find(|e| e["event"] == "move")
        .unwrap();
    let again = ev[pos..].iter().find(|e| e["event"] == "move").unwrap();
    assert_eq!(before["turn"], r["turn"]);
    assert_eq!(again["turn"], r["turn"], "{ev:?}");
    assert_eq!(again["action"], 2);
    let rej = log.lock().unwrap().rejected.clone();
    assert_eq!(rej.len(), 1);
    assert_eq!(before["actionId"], rej[0].1.as_str());

    // One round, no rematch (autoRematch off): both see the same result and stop.
    let winner = log.lock().unwrap().results[0].1.clone();
    for p in [&a, &b] {
        let ev = events(p);
        let results = of_kind(&ev, "result");
        assert_eq!(results.len(), 1, "{ev:?}");
        assert_eq!(results[0]["winner"], winner.as_str());
        assert!(of_kind(&ev, "rematch").is_empty());
        let done = ev.last().unwrap();
        assert_eq!(
            (done["event"].as_str(), done["reason"].as_str()),
            (Some("done"), Some("series_ended"))
        );
    }
    // B joined by --session: its game is not named; its seed is reported.
    let evb = events(&b);
    let jb = of_kind(&evb, "joined")[0];
    assert_eq!(
        (jb["seat"].as_u64(), jb["seed"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(jb["game"], Value::Null);
    hosting.abort();
}

#[tokio::test]
async fn bad_tokens_and_unknown_games_exit_with_a_clear_message() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let _table = open_table(&host, false).await;
    let dir = tempfile::tempdir().unwrap();

    // An unknown token (401) and a token without the play scope (403).
    let host_only = play_token(&app, "Hosty", &["host"]).await;
    for token in ["rca_not_a_real_token", host_only.as_str()] {
        let mut p = play(&app, token, false, &["--game", GAME], dir.path());
        let code = exit_code(&mut p, Duration::from_secs(60)).await;
        assert_eq!(code, 3, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
        let err = p.stderr();
        assert!(err.contains("play scope"), "{err}");
        assert!(
            err.contains("horst admin token create --scopes play"),
            "{err}"
        );
        assert!(
            !err.contains(token) && !p.stdout().contains(token),
            "the token leaked"
        );
        let ev = events(&p);
        assert_eq!(ev.last().unwrap()["event"], "error");
        assert_eq!(ev.last().unwrap()["code"], "auth");
        assert!(of_kind(&ev, "joined").is_empty());
    }

    // An unknown game: no table within the wait. The backend address comes from --listen
    // (the configured listen address) instead of --backend.
    let good = play_token(&app, "Ann", &["play"]).await;
    let listen = app.addr.to_string();
    let mut p = HorstProcess::spawn(
        &[
            "play",
            "--listen",
            &listen,
            "--game",
            "nosuch",
            "--wait-for-table",
            "1",
            "--token",
            &good,
        ],
        &[],
        dir.path(),
    );
    let code = exit_code(&mut p, Duration::from_secs(60)).await;
    assert_eq!(code, 4, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    let err = p.stderr();
    assert!(err.contains("no table for game \"nosuch\""), "{err}");
    assert!(err.contains("within 1 s"), "{err}");
    assert!(
        err.contains(&format!("games with tables now: {GAME}")),
        "{err}"
    );
    assert!(
        p.stdout().is_empty(),
        "text mode prints errors to stderr only: {}",
        p.stdout()
    );
}

/// `--session` takes a session id as the backend mints them and refuses anything else at
/// once (exit 2, naming the form): `a/b` went into the request path as it was and was
/// answered by another route ("no such endpoint"), or, with the backend away, retried for two
/// minutes before saying anything.
#[test]
fn a_session_that_is_no_session_id_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "a/b",
        "ses_1a2b",
        "SES_1A2B00C0FFEE",
        "ses_1a2b00c0ffee?x=1",
    ] {
        let mut p = HorstProcess::spawn(
            &[
                "play",
                "--session",
                bad,
                "--token",
                "rca_x",
                "--backend",
                "http://127.0.0.1:1",
            ],
            &[],
            dir.path(),
        );
        let status = p.wait_exit(Duration::from_secs(20));
        assert!(status.is_some(), "{bad}: still running after 20 s");
        assert_eq!(status.unwrap().code(), Some(2), "{bad}: {}", p.stderr());
        assert!(p.stderr().contains("ses_ and 12"), "{bad}: {}", p.stderr());
    }
}

/// `--seek`, alone at a rematch every other player gave up (as the house's reference player
/// does after a validation game): the agent leaves it and seeks again, and so sits down
/// where another agent waits. It waited at the rematch for good: two agents that had each
/// played their validation game sat at two rematches and never played each other.
#[tokio::test]
async fn a_seeker_left_alone_at_a_rematch_seeks_again() {
    let app = app_with(|_| {}).await;
    let (house, _) = app
        .auth
        .create_token_as(&["host".into()], Some("House"), true)
        .await
        .unwrap();
    let house = Client {
        base: format!("http://{}", app.addr),
        token: house,
        http: reqwest::Client::new(),
    };
    let t_x = play_token(&app, "Xena", &["play"]).await;
    let t_y = play_token(&app, "Yuri", &["play"]).await;
    let t_z = play_token(&app, "Zora", &["play"]).await;
    let dir = tempfile::tempdir().unwrap();
    let first = open_table(&house, true).await;
    let log = Arc::new(Mutex::new(HostLog::default()));
    let hosting = tokio::spawn(host_race(house.clone(), first.clone(), None, log.clone()));
    // Xena seeks (the only table); Zora then waits at a second table, and Yuri plays one
    // round with Xena and gives up the rematch.
    let mut x = play(
        &app,
        &t_x,
        false,
        &[
            "--game", GAME, "--policy", "first", "--seek", "--rounds", "2",
        ],
        dir.path(),
    );
    stdout_line(&mut x, "\"joined\"", Duration::from_secs(60)).await;
    // Zora waits at another table of the house.
    let second = open_table(&house, true).await;
    let hosting2 = tokio::spawn(host_race(house.clone(), second.clone(), None, log.clone()));
    let mut z = play(
        &app,
        &t_z,
        false,
        &["--session", &second, "--policy", "first", "--rounds", "1"],
        dir.path(),
    );
    stdout_line(&mut z, "\"joined\"", Duration::from_secs(60)).await;
    let mut y = play(
        &app,
        &t_y,
        false,
        &["--session", &first, "--policy", "first", "--rounds", "1"],
        dir.path(),
    );
    assert_eq!(
        exit_code(&mut y, Duration::from_secs(60)).await,
        0,
        "{}",
        y.stderr()
    );
    let code = exit_code(&mut x, Duration::from_secs(60)).await;
    assert_eq!(code, 0, "stdout:\n{}\nstderr:\n{}", x.stdout(), x.stderr());
    assert_eq!(
        exit_code(&mut z, Duration::from_secs(60)).await,
        0,
        "{}",
        z.stderr()
    );
    let ev = events(&x);
    let joined: Vec<&str> = of_kind(&ev, "joined")
        .iter()
        .map(|j| j["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(joined, [first.as_str(), second.as_str()], "{ev:?}");
    let rematch = of_kind(&ev, "rematch")[0]["sessionId"].as_str().unwrap();
    let left = of_kind(&ev, "left");
    assert_eq!(left[0]["sessionId"], rematch, "{ev:?}");
    assert!(
        left[0]["why"]
            .as_str()
            .unwrap()
            .contains("gave up the rematch"),
        "{ev:?}"
    );
    let rounds: Vec<&str> = of_kind(&ev, "round")
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(rounds, [first.as_str(), second.as_str()], "{ev:?}");
    let done = ev.last().unwrap();
    assert_eq!(
        (&done["reason"], &done["rounds"]),
        (&json!("rounds_reached"), &json!(2))
    );
    hosting.abort();
    hosting2.abort();
}

/// SIGTERM (`kill`, `timeout`, a service manager's stop) gives the seat back as Ctrl-C does:
/// the running game ends at once as the agent's forfeit, and the run exits with 130. It
/// killed the process without a word: at a table without a turn clock (the house's, by
/// default) the opponent waited for good and the game was never rated.
#[tokio::test]
async fn sigterm_gives_the_seat_back_like_ctrl_c() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    let table = open_table(&host, false).await;
    agents[0].join(&table).await;
    let t_a = play_token(&app, "Ann", &["play"]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut a = play(&app, &t_a, false, &["--session", &table], dir.path());
    stdout_line(&mut a, "\"round\"", Duration::from_secs(60)).await;
    let me = of_kind(&events(&a), "joined")[0]["playerId"]
        .as_str()
        .unwrap()
        .to_string();
    a.signal(libc::SIGTERM);
    let code = exit_code(&mut a, Duration::from_secs(60)).await;
    assert_eq!(
        code,
        130,
        "stdout:\n{}\nstderr:\n{}",
        a.stdout(),
        a.stderr()
    );
    let ev = events(&a);
    let left = of_kind(&ev, "left");
    assert_eq!(left.len(), 1, "{ev:?}");
    assert_eq!(left[0]["sessionId"], table.as_str());
    assert_eq!(left[0]["why"], "interrupted");
    assert_eq!(ev.last().unwrap()["reason"], "interrupted", "{ev:?}");
    let s = agents[0].state(&table, 0.0).await;
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["result"]["forfeitedBy"], me.as_str(), "{s}");
    assert_eq!(s["result"]["winner"], s["playerId"], "{s}");
}

/// What [`odd_proxy`] does with one request.
#[derive(Clone)]
enum Odd {
    /// Forwards it to horst and hands back horst's answer.
    Pass,
    /// Answers it itself, horst never sees it: status, `Retry-After`, body.
    Answer(u16, Option<&'static str>, &'static str),
    /// Forwards it, then answers this status instead of horst's answer (a proxy whose
    /// upstream connection broke after horst took the request): the answer is lost.
    Lose(u16),
    /// Answers a `307` to this path on the proxy itself.
    Redirect(&'static str),
    /// Answers it itself with a `Date` and a `Retry-After` given as HTTP dates: status,
    /// `Date`, `Retry-After`, body.
    Dated(u16, &'static str, &'static str, &'static str),
    /// Forwards it with `wait=0`: a long-poll that comes back at once (a proxy or server
    /// that does not hold requests).
    NoWait,
}

/// One request the proxy saw: method, path and query, body.
type Seen = Arc<Mutex<Vec<(String, String, String)>>>;

/// A reverse proxy on a free port in front of `upstream` (a real horst) that treats each
/// request as `rule(method, path, n)` says, `n` counting earlier requests of that method and
/// path. Returns its address and every request it saw.
async fn odd_proxy(
    upstream: std::net::SocketAddr,
    rule: impl Fn(&str, &str, usize) -> Odd + Send + Sync + 'static,
) -> (std::net::SocketAddr, Seen) {
    use axum::http::{HeaderMap, Method, StatusCode, Uri};
    use axum::response::IntoResponse;

    let seen: Seen = Arc::default();
    let counts: Arc<Mutex<std::collections::HashMap<String, usize>>> = Arc::default();
    let rule = Arc::new(rule);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let log = seen.clone();
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: axum::body::Bytes| {
        let (http, rule, log, counts) = (http.clone(), rule.clone(), log.clone(), counts.clone());
        async move {
            let path = uri.path().to_string();
            let n = {
                let mut c = counts.lock().unwrap();
                let n = c.entry(format!("{method} {path}")).or_insert(0);
                *n += 1;
                *n - 1
            };
            let target = uri.path_and_query().map_or(path.clone(), |p| p.to_string());
            log.lock().unwrap().push((
                method.to_string(),
                target.clone(),
                String::from_utf8_lossy(&body).into_owned(),
            ));
            let odd = rule(method.as_str(), &path, n);
            if let Odd::Redirect(to) = odd {
                return (StatusCode::TEMPORARY_REDIRECT, [("location", to)], "").into_response();
            }
            if let Odd::Answer(status, retry_after, text) = odd {
                let mut h = HeaderMap::new();
                h.insert("content-type", "application/json".parse().unwrap());
                if let Some(s) = retry_after {
                    h.insert("retry-after", s.parse().unwrap());
                }
                return (StatusCode::from_u16(status).unwrap(), h, text.to_string())
                    .into_response();
            }
            if let Odd::Dated(status, date, retry_after, text) = odd {
                let h = [
                    ("content-type", "application/json"),
                    ("date", date),
                    ("retry-after", retry_after),
                ];
                return (StatusCode::from_u16(status).unwrap(), h, text).into_response();
            }
            let target = match odd {
                Odd::NoWait => target.replace("wait=25", "wait=0"),
                _ => target,
            };
            let mut req = http.request(method, format!("http://{upstream}{target}"));
            for (k, v) in headers.iter() {
                if k != "host" && k != "content-length" {
                    req = req.header(k, v);
                }
            }
            let r = req
                .body(body)
                .send()
                .await
                .expect("horst answers the proxy");
            let status = r.status();
            let mut h = HeaderMap::new();
            for (k, v) in r.headers() {
                if k == "content-type" || k == "retry-after" {
                    h.insert(k, v.clone());
                }
            }
            let text = r.text().await.unwrap_or_default();
            match odd {
                Odd::Lose(status) => (
                    StatusCode::from_u16(status).unwrap(),
                    "<html>502 Bad Gateway</html>".to_string(),
                )
                    .into_response(),
                _ => (status, h, text).into_response(),
            }
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, seen)
}

/// The contract's answers a client must ride out, through a proxy in front of a real horst:
/// a `429` with `Retry-After` is waited out and the move sent again (before, `horst play`
/// took it for a lost session and exited 1), and a move whose answer was lost after horst
/// took it (the proxy's 502) is sent again as the same action (`idempotencyKey`): one move
/// for the turn, its own `actionId`, no conflict.
#[tokio::test]
async fn a_429_is_waited_out_and_a_move_whose_answer_was_lost_is_sent_again_as_the_same_action() {
    let (app, t_a, t_b, table, log, hosting) = race_table(false, None).await;
    let (proxy, seen) = odd_proxy(app.addr, |method, path, n| {
        match (method, path.ends_with("/action"), n) {
            ("POST", true, 0) => Odd::Answer(
                429,
                Some("2"),
                r#"{"error":"more requests than this token may make a minute","code":"burst"}"#,
            ),
            ("POST", true, 1) => Odd::Lose(502),
            _ => Odd::Pass,
        }
    })
    .await;

    let dir = tempfile::tempdir().unwrap();
    let backend = format!("http://{proxy}");
    let common = ["play", "--json", "--session", &table, "--policy", "first"];
    let mut a = HorstProcess::spawn(
        &[&common[..], &["--backend", &backend, "--token", &t_a]].concat(),
        &[],
        dir.path(),
    );
    stdout_line(&mut a, "\"joined\"", Duration::from_secs(60)).await;
    let direct = format!("http://{}", app.addr);
    let mut b = HorstProcess::spawn(
        &[&common[..], &["--backend", &direct, "--token", &t_b]].concat(),
        &[],
        dir.path(),
    );
    for p in [&mut a, &mut b] {
        let code = exit_code(p, Duration::from_secs(120)).await;
        assert_eq!(code, 0, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    }
    let ev = events(&a);
    let retries = of_kind(&ev, "retry");
    assert_eq!(retries.len(), 2, "{ev:?}");
    assert!(
        retries[0]["error"].as_str().unwrap().contains("HTTP 429"),
        "{ev:?}"
    );
    assert_eq!(retries[0]["inMs"], 2000, "the server's Retry-After: {ev:?}");
    assert!(
        retries[1]["error"].as_str().unwrap().contains("HTTP 502"),
        "{ev:?}"
    );
    assert!(of_kind(&ev, "conflict").is_empty(), "{ev:?}");
    assert_eq!(of_kind(&ev, "move").len(), 5, "{ev:?}");

    // The three sends of the first move carry one key; every later move a fresh one.
    let keys: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p, _)| m == "POST" && p.ends_with("/action"))
        .map(|(_, _, body)| {
            let v: Value = serde_json::from_str(body).unwrap();
            v["idempotencyKey"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(keys.len(), 7, "{keys:?}");
    assert!(
        !keys[0].is_empty() && keys[0] == keys[1] && keys[1] == keys[2],
        "{keys:?}"
    );
    let mut fresh = keys[2..].to_vec();
    fresh.sort();
    fresh.dedup();
    assert_eq!(fresh.len(), 5, "{keys:?}");
    // The game saw ten moves of 1, one per turn (a second move in a turn is rejected by the
    // host and would show as a rejection): the round ended at 10, won by seat 1.
    let results = log.lock().unwrap().results.clone();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(of_kind(&ev, "rejected").is_empty(), "{ev:?}");
    hosting.abort();
}

/// A `Retry-After` given as an HTTP date (RFC 9110 allows it; proxies send it) is waited
/// out to that date, counted from the answer's `Date`: before, it was not read and `horst
/// play` asked again after its own 0.5 s. A date in the past is no header (the backoff).
#[tokio::test]
async fn a_retry_after_given_as_an_http_date_is_waited_out_to_that_date() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let t_a = play_token(&app, "Ann", &["play"]).await;
    let table = open_table(&host, false).await;
    let (proxy, _) = odd_proxy(app.addr, |method, path, n| {
        const BUSY: &str = r#"{"error":"busy","code":"unavailable"}"#;
        const DATE: &str = "Sun, 06 Dec 2026 18:00:00 GMT";
        match (method, path.ends_with("/join"), n) {
            ("POST", true, 0) => Odd::Dated(503, DATE, "Sun, 06 Dec 2026 18:00:03 GMT", BUSY),
            ("POST", true, 1) => Odd::Dated(503, DATE, "Sun, 06 Dec 2026 17:59:00 GMT", BUSY),
            _ => Odd::Pass,
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let backend = format!("http://{proxy}");
    let mut a = HorstProcess::spawn(
        &[
            "play",
            "--json",
            "--session",
            &table,
            "--policy",
            "first",
            "--backend",
            &backend,
            "--token",
            &t_a,
        ],
        &[],
        dir.path(),
    );
    stdout_line(&mut a, "\"joined\"", Duration::from_secs(60)).await;
    let ev = events(&a);
    let retries = of_kind(&ev, "retry");
    assert_eq!(retries.len(), 2, "{ev:?}");
    assert_eq!(retries[0]["inMs"], 3000, "to the Retry-After date: {ev:?}");
    assert_eq!(retries[1]["inMs"], 1000, "a past date: the backoff: {ev:?}");
}

/// A redirect is not followed (it turned a POST into a GET of its target): it is an answer
/// that names where it pointed and what to fix.
#[tokio::test]
async fn a_redirect_is_reported_with_its_target_not_followed() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let t_a = play_token(&app, "Ann", &["play"]).await;
    let table = open_table(&host, false).await;
    let (proxy, seen) = odd_proxy(app.addr, |_, path, _| {
        if path.ends_with("/join") {
            Odd::Redirect("/elsewhere")
        } else {
            Odd::Pass
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let backend = format!("http://{proxy}");
    let mut a = HorstProcess::spawn(
        &[
            "play",
            "--backend",
            &backend,
            "--session",
            &table,
            "--token",
            &t_a,
        ],
        &[],
        dir.path(),
    );
    let code = exit_code(&mut a, Duration::from_secs(60)).await;
    assert_eq!(code, 4, "stdout:\n{}\nstderr:\n{}", a.stdout(), a.stderr());
    assert!(
        a.stderr().contains(
            "a redirect to /elsewhere; give --backend the address horst itself serves on"
        ),
        "{}",
        a.stderr()
    );
    let paths: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(_, p, _)| p.clone())
        .collect();
    assert_eq!(
        paths.iter().filter(|p| p.ends_with("/join")).count(),
        1,
        "{paths:?}"
    );
    assert!(
        !paths.iter().any(|p| p == "/elsewhere"),
        "followed: {paths:?}"
    );
}

/// An answer far larger than any of the protocol (20 MiB) is not read whole: the call fails
/// after 16 MiB, is retried, and the game goes on. Before, it was read to the end, whatever
/// its size.
#[tokio::test]
async fn an_answer_too_large_to_be_the_protocols_is_a_failed_call_and_retried() {
    let (app, t_a, t_b, table, log, hosting) = race_table(false, None).await;
    let huge: &'static str = Box::leak(format!("\"{}\"", "x".repeat(20 << 20)).into_boxed_str());
    let (proxy, _) = odd_proxy(app.addr, move |method, path, n| {
        match (method, path.ends_with("/state"), n) {
            ("GET", true, 1) => Odd::Answer(200, None, huge),
            _ => Odd::Pass,
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let backend = format!("http://{proxy}");
    let direct = format!("http://{}", app.addr);
    let common = ["play", "--json", "--session", &table, "--policy", "first"];
    let mut a = HorstProcess::spawn(
        &[&common[..], &["--backend", &backend, "--token", &t_a]].concat(),
        &[],
        dir.path(),
    );
    stdout_line(&mut a, "\"joined\"", Duration::from_secs(60)).await;
    let mut b = HorstProcess::spawn(
        &[&common[..], &["--backend", &direct, "--token", &t_b]].concat(),
        &[],
        dir.path(),
    );
    for p in [&mut a, &mut b] {
        let code = exit_code(p, Duration::from_secs(120)).await;
        assert_eq!(code, 0, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    }
    let ev = events(&a);
    let retries = of_kind(&ev, "retry");
    assert_eq!(retries.len(), 1, "{ev:?}");
    assert!(
        retries[0]["error"]
            .as_str()
            .unwrap()
            .contains("larger than 16 MiB"),
        "{ev:?}"
    );
    assert_eq!(log.lock().unwrap().results.len(), 1);
    hosting.abort();
}

/// A long-poll that comes back at once with nothing new (a proxy that does not hold
/// requests, a server that ignores `wait`) is not asked again at once: before, `horst play`
/// asked as fast as the answers came while it waited for its opponent.
#[tokio::test]
async fn a_long_poll_answered_at_once_with_nothing_new_is_not_asked_again_in_a_tight_loop() {
    let (app, t_a, t_b, table, log, hosting) = race_table(false, None).await;
    let (proxy, seen) = odd_proxy(app.addr, |method, path, _| {
        if method == "GET" && path.ends_with("/state") {
            Odd::NoWait
        } else {
            Odd::Pass
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let backend = format!("http://{proxy}");
    let direct = format!("http://{}", app.addr);
    let common = ["play", "--json", "--session", &table, "--policy", "first"];
    let mut a = HorstProcess::spawn(
        &[&common[..], &["--backend", &backend, "--token", &t_a]].concat(),
        &[],
        dir.path(),
    );
    stdout_line(&mut a, "\"joined\"", Duration::from_secs(60)).await;
    // Alone at the table for 3 s: every long-poll of A comes back at once, unchanged.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let alone = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p, _)| m == "GET" && p.contains("/state?"))
        .count();
    let mut b = HorstProcess::spawn(
        &[&common[..], &["--backend", &direct, "--token", &t_b]].concat(),
        &[],
        dir.path(),
    );
    for p in [&mut a, &mut b] {
        let code = exit_code(p, Duration::from_secs(120)).await;
        assert_eq!(code, 0, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    }
    // One poll a second or so, not one per round trip (a count, not a speed: the pause is
    // 1 s; without it this was hundreds).
    assert!(alone <= 6, "{alone} polls in 3 s alone at the table");
    assert_eq!(log.lock().unwrap().results.len(), 1);
    hosting.abort();
}

/// The curl loop of docs/agents-play.md waits out a `Retry-After` given as an HTTP date (a
/// proxy's): 5 s after the answer's `Date`, so at least 5 s pass before it asks again. It
/// slept a flat 2 s for any date. (The second poll reaches horst, whose 404 for the made-up
/// session ends the loop.)
#[tokio::test]
async fn the_guides_curl_loop_waits_out_a_retry_after_given_as_a_date() {
    let app = app_with(|_| {}).await;
    let (proxy, seen) = odd_proxy(app.addr, |method, path, n| {
        let busy = r#"{"error":"the store cannot be reached right now","code":"unavailable"}"#;
        match (method, path.rsplit('/').next().unwrap_or(""), n) {
            ("GET", "state", 0) => Odd::Dated(
                503,
                "Sun, 06 Dec 2026 18:00:00 GMT",
                "Sun, 06 Dec 2026 18:00:05 GMT",
                busy,
            ),
            _ => Odd::Pass,
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    // The loop keeps the answer's headers in /tmp/h; this one's go to its own directory.
    let script = crate::agents_doc::documented_curl_loop().replace("/tmp/h", "$HEADERS");
    let token = play_token(&app, "Curl", &["play"]).await;
    let mut child = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("HORST", format!("http://{proxy}"))
        .env("TOKEN", &token)
        .env("HEADERS", dir.path().join("h"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("bash runs");
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the loop ends within a minute")
        .unwrap();
    let waited = started.elapsed();
    let out = child.wait_with_output().await.unwrap();
    let polls = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p, _)| m == "GET" && p.contains("/state"))
        .count();
    assert!(status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(polls, 2, "the dated 503, then horst's 404");
    // A lower bound only: a loaded machine makes it longer, never shorter.
    assert!(
        waited >= Duration::from_millis(4800),
        "asked again after {waited:?}, not the 5 s the date asks for"
    );
}

/// The Python agent of docs/agents-play.md, as the page shows it, through the proxy: a 503
/// with `Retry-After` on its join, a 429 on a state poll, its first move's answer lost (the
/// proxy's 502 after horst took it), a 502 page on a later poll and a 503 whose `Retry-After`
/// is an HTTP date. It rides them out and finishes the game, its move's retry carrying the
/// same `idempotencyKey`. Before, the 503 on the join ended it ("cannot join"), and any 5xx
/// or lost answer would have; the date raised `ValueError` out of `float()`.
#[tokio::test]
async fn the_guides_python_agent_rides_out_busy_and_lost_answers() {
    let app = app_with(|_| {}).await;
    let (host, _) = cast(&app, 0).await;
    let config = two_player(json!({ "autoRematch": false, "gameType": "chess" }));
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": config, "gameId": "chess", "gameTitle": "Chess" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    let table = v["sessionId"].as_str().unwrap().to_string();
    let log = Arc::new(Mutex::new(HostLog::default()));
    let hosting = tokio::spawn(host_race(host.clone(), table.clone(), None, log.clone()));
    let (proxy, seen) = odd_proxy(app.addr, |method, path, n| {
        let busy = r#"{"error":"the store cannot be reached right now","code":"unavailable"}"#;
        match (method, path.rsplit('/').next().unwrap_or(""), n) {
            ("POST", "join", 0) => Odd::Answer(503, Some("1"), busy),
            ("GET", "state", 1) => {
                Odd::Answer(429, Some("1"), r#"{"error":"slow down","code":"burst"}"#)
            }
            // A proxy's Retry-After as an HTTP date (2 s after its Date).
            ("GET", "state", 2) => Odd::Dated(
                503,
                "Sun, 06 Dec 2026 18:00:00 GMT",
                "Sun, 06 Dec 2026 18:00:02 GMT",
                busy,
            ),
            ("POST", "action", 0) => Odd::Lose(502),
            ("GET", "state", 4) => Odd::Answer(502, None, "<html>Bad Gateway</html>"),
            _ => Odd::Pass,
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("agent.py");
    std::fs::write(&script, crate::agents_doc::documented_agent()).unwrap();
    let t_a = play_token(&app, "Fish", &["play"]).await;
    let child = std::process::Command::new("python3")
        .arg(&script)
        .env("HORST", format!("http://{proxy}"))
        .env("TOKEN", &t_a)
        .env("NAME", "Fish")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let python = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap());
    // The Python agent sits down (after its 503) before the other one joins.
    let seated = crate::harness::eventually(Duration::from_secs(30), async || {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(m, p, _)| m == "POST" && p.ends_with("/join"))
            .count()
            >= 2
    })
    .await;
    assert!(seated, "the Python agent never joined again");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t_b = play_token(&app, "Crab", &["play"]).await;
    let direct = format!("http://{}", app.addr);
    let mut b = HorstProcess::spawn(
        &[
            "play",
            "--json",
            "--session",
            &table,
            "--policy",
            "first",
            "--backend",
            &direct,
            "--token",
            &t_b,
        ],
        &[],
        dir.path(),
    );
    let out = tokio::time::timeout(Duration::from_secs(120), python)
        .await
        .expect("the Python agent ends within 2 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let code = exit_code(&mut b, Duration::from_secs(60)).await;
    assert_eq!(code, 0, "stdout:\n{}\nstderr:\n{}", b.stdout(), b.stderr());
    let round: Value = serde_json::from_str(stdout.lines().next().unwrap_or("")).unwrap();
    assert_eq!(round["round"], 1, "{stdout}");
    assert_eq!(round["result"]["reason"], "reached_10", "{stdout}");
    assert_eq!(log.lock().unwrap().results.len(), 1);
    let keys: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p, _)| m == "POST" && p.ends_with("/action"))
        .map(|(_, _, body)| {
            let v: Value = serde_json::from_str(body).unwrap();
            v["idempotencyKey"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert!(
        keys.len() >= 2 && !keys[0].is_empty() && keys[0] == keys[1],
        "{keys:?}"
    );
    hosting.abort();
}
