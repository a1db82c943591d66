//! Identities (agent tokens from `horst admin token create`, users and their JWTs, the house)
//! and the browser files under /sdk/, /bridge/ and /games/.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::rcadia_common::*;

fn admin(url: &str, args: &[&str], stdin: &str) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
    cmd.arg("admin")
        .args(args)
        .args(["--redis", url])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("HORST_") {
            cmd.env_remove(k);
        }
    }
    let mut child = cmd.spawn().expect("spawn horst admin");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[tokio::test]
async fn tokens_users_jwts_and_the_house() {
    let app = app_with(|_| {}).await;
    let url = app.redis_url.clone();
    let base = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };

    // `horst admin token create` prints the token alone on stdout.
    let (ok, out, err) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            admin(
                &url,
                &["token", "create", "--scopes", "play,host", "--name", "Fish"],
                "",
            )
        }
    })
    .await
    .unwrap();
    assert!(ok, "{err}");
    let token = out.trim().to_string();
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(!err.contains(&token), "the token must be printed once");
    let fish = Client {
        token,
        ..base.clone()
    };
    let id = fish.create(two_player(json!({}))).await;
    let s = fish.join(&id).await;
    assert_eq!(s["players"][0]["asName"], "Fish");

    // A user signs in for a JWT and hosts: `host: "player"`.
    let (ok, _, err) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            admin(
                &url,
                &["user", "create", "alice", "--password-stdin"],
                "correct horse\n",
            )
        }
    })
    .await
    .unwrap();
    assert!(ok, "{err}");
    let (st, v) = base
        .post(
            "/api/v1/auth/session",
            json!({ "username": "alice", "password": "wrong one" }),
        )
        .await;
    assert_eq!((st, v["code"].as_str()), (401, Some("invalid_credentials")));
    let (st, v) = base
        .post(
            "/api/v1/auth/session",
            json!({ "username": "alice", "password": "correct horse" }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    let alice = Client {
        token: v["token"].as_str().unwrap().to_string(),
        ..base.clone()
    };
    let user_table = alice.create(two_player(json!({}))).await;
    let tampered = Client {
        token: format!("{}x", alice.token),
        ..base.clone()
    };
    let (st, _) = tampered.post(BRIDGE, json!({ "config": {} })).await;
    assert_eq!(st, 401);

    let (_, v) = base.get(&format!("{AGENT}/available")).await;
    let host_of = |sid: &str| {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["sessionId"] == sid)
            .map(|e| e["host"].clone())
    };
    assert_eq!(host_of(&user_table), Some(json!("player")));
    assert_eq!(host_of(&id), Some(json!("agent")));

    // A token created with `--house` hosts house tables, with nothing configured.
    let (ok, out, err) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            admin(
                &url,
                &[
                    "token", "create", "--scopes", "host", "--house", "--name", "House",
                ],
                "",
            )
        }
    })
    .await
    .unwrap();
    assert!(ok, "{err}");
    assert!(err.contains("the house identity"), "{err}");
    let marked = Client {
        token: out.trim().to_string(),
        ..base.clone()
    };
    let marked_table = marked.create(two_player(json!({}))).await;
    let (ok, _, err) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            admin(
                &url,
                &["token", "create", "--scopes", "play", "--house"],
                "",
            )
        }
    })
    .await
    .unwrap();
    assert!(!ok && err.contains("--scopes host --house"), "{err}");
    let (_, v) = base.get(&format!("{AGENT}/available")).await;
    let entry = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sessionId"] == marked_table.as_str())
        .cloned()
        .unwrap();
    assert_eq!(entry["host"], "house", "{entry}");

    // The older way: the identity `sessions.house_identity` names shows as `house` too.
    let (house_token, house_id) = app
        .auth
        .create_token(&["host".into()], Some("House"))
        .await
        .unwrap();
    let house_app =
        crate::harness::spawn_app_beside(&app, |c| c.sessions.house_identity = house_id).await;
    let house = Client {
        base: format!("http://{}", house_app.addr),
        token: house_token,
        http: reqwest::Client::new(),
    };
    let house_table = house.create(two_player(json!({}))).await;
    let (_, v) = base.get(&format!("{AGENT}/available?game=Chess")).await;
    let entry = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sessionId"] == house_table.as_str())
        .cloned()
        .unwrap();
    assert_eq!(entry["host"], "house");
    assert_eq!(entry["joinable"], true);
    assert_eq!(entry["gameSlug"], "chess");
}

#[tokio::test]
async fn browser_files_are_served_with_the_right_headers() {
    let web = concat!(env!("CARGO_MANIFEST_DIR"), "/web");
    let app = app_with(|c| c.server.web_dir = web.into()).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |p: &str| http.get(app.url(p)).send();

    let r = get("/sdk/rcadia-agent.js").await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/javascript");
    assert_eq!(r.headers()["access-control-allow-origin"], "*");

    let r = get("/bridge").await.unwrap();
    assert!(r.status().is_redirection());
    assert_eq!(r.headers()["location"], "/bridge/");
    let r = get("/bridge/").await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(r.headers().get("access-control-allow-origin").is_none());
    let r = get("/bridge/bridge.js").await.unwrap();
    assert_eq!(r.status(), 200);

    for page in ["/games/chess/", "/games/rps/", "/games/rps/rules.js"] {
        let r = get(page).await.unwrap();
        assert_eq!(r.status(), 200, "{page}");
        assert_eq!(r.headers()["access-control-allow-origin"], "*", "{page}");
    }
    let chess = std::path::Path::new(web).join("node_modules/chess.js/dist/esm/chess.js");
    let r = get("/games/vendor/chess.js").await.unwrap();
    assert_eq!(r.status().as_u16(), if chess.exists() { 200 } else { 404 });

    for bad in [
        "/games/%2e%2e/Cargo.toml",
        "/games/chess/.hidden",
        "/sdk/..%2fCargo.toml",
        "/bridge/nope.js",
        "/games/chess/a%20b.js",
    ] {
        let r = get(bad).await.unwrap();
        assert_eq!(r.status(), 404, "{bad}");
    }
}

/// `horst admin user create` on a terminal: prompts twice, and the password never appears on
/// the terminal (echo off); without a terminal the first line of stdin is read, no flag needed.
#[tokio::test]
async fn rcadia_user_password_is_read_without_echo_or_from_a_pipe() {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};

    let app = app_with(|_| {}).await;
    let url = app.redis_url.clone();
    let base = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };

    // A pipe, without --password-stdin.
    let (ok, _, err) = tokio::task::spawn_blocking({
        let url = url.clone();
        move || admin(&url, &["user", "create", "bob"], "piped secret\n")
    })
    .await
    .unwrap();
    assert!(ok, "{err}");

    // A pseudo-terminal.
    let shown = tokio::task::spawn_blocking(move || {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty fills two descriptors; null name, termios and winsize are allowed.
        let r = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh and owned here.
        let slave = unsafe { OwnedFd::from_raw_fd(slave) };
        let mut master = unsafe { std::fs::File::from_raw_fd(master) };
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
        cmd.args(["admin", "user", "create", "carol", "--redis", &url])
            .current_dir(dir.path())
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave.try_clone().unwrap()));
        for (k, _) in std::env::vars() {
            if k.starts_with("HORST_") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd.spawn().expect("spawn horst admin");
        // Only the child may hold the terminal now (the Command keeps its copies), or the
        // master never sees the end.
        drop(cmd);
        drop(slave);
        let mut seen = String::new();
        let mut buf = [0u8; 256];
        // Type each line only after its prompt: turning echo off flushes pending input.
        for (prompt, line) in [
            ("password for carol: ", "tty secret\n"),
            ("again: ", "tty secret\n"),
        ] {
            while !seen.contains(prompt) {
                let n = master.read(&mut buf).expect("read the terminal");
                assert!(n > 0, "no prompt {prompt:?}; saw {seen:?}");
                seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            seen = seen.replacen(prompt, "<prompt>", 1);
            master.write_all(line.as_bytes()).unwrap();
        }
        // Until the child closes the terminal (EIO on Linux).
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert!(child.wait().unwrap().success(), "{seen}");
        seen
    })
    .await
    .unwrap();
    assert!(
        !shown.contains("tty secret"),
        "the password was echoed: {shown:?}"
    );
    assert!(shown.contains("created user carol"), "{shown:?}");

    for (user, password) in [("bob", "piped secret"), ("carol", "tty secret")] {
        let (st, v) = base
            .post(
                "/api/v1/auth/session",
                json!({ "username": user, "password": password }),
            )
            .await;
        assert_eq!(st, 200, "{user}: {v}");
    }
}

/// RCADIA routes have no burst limit by default (agents and hosts long-poll all the time);
/// the operator may set one per token (`horst admin token limit`), counted in Redis, applied
/// by every process within the epoch check, and removed again with `--none`.
#[tokio::test]
async fn an_operator_may_limit_a_token_s_requests_a_minute() {
    let app = app_with(|_| {}).await;
    let url = app.redis_url.clone();
    let base = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };
    let (limited_token, limited_agent) = app
        .auth
        .create_token(&["play".into()], Some("Specht"))
        .await
        .unwrap();
    let (free_token, _) = app
        .auth
        .create_token(&["play".into()], Some("Meise"))
        .await
        .unwrap();
    let limited = Client {
        token: limited_token,
        ..base.clone()
    };
    let free = Client {
        token: free_token,
        ..base.clone()
    };
    // An authenticated read (of a session that does not exist: 404 once the caller is known).
    const READ: &str = "/api/v1/agent/sessions/ses_none/state";
    // Used once before the limit, so the process has the identity cached.
    assert_eq!(limited.get(READ).await.0, 404);

    let cli = |args: Vec<String>| {
        let url = url.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                admin(&url, &args, "")
            })
            .await
            .unwrap()
        }
    };
    let (ok, _, err) = cli(vec![
        "token".into(),
        "limit".into(),
        limited_agent.clone(),
        "--per-minute".into(),
        "0".into(),
    ])
    .await;
    assert!(!ok, "a limit of 0 is refused");
    assert!(err.contains("--none"), "{err}");
    let (ok, out, err) = cli(vec![
        "token".into(),
        "limit".into(),
        limited_agent.clone(),
        "--per-minute".into(),
        "3".into(),
    ])
    .await;
    assert!(ok, "{err}");
    assert!(out.contains("3 requests a minute"), "{out}");

    // Within the epoch check the limit applies: at most 3 more requests pass, then 429.
    let mut refused = None;
    for _ in 0..40 {
        let (status, body) = limited.get(READ).await;
        if status == 429 {
            refused = Some(body);
            break;
        }
        assert_eq!(status, 404, "{body}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let body = refused.expect("the limited token was refused within 4 s");
    assert_eq!(body["code"], "burst", "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("3 requests a minute"),
        "{body}"
    );
    // Another token is not limited at all.
    for _ in 0..10 {
        assert_eq!(free.get(READ).await.0, 404);
    }
    let listed = cli(vec!["token".into(), "list".into()]).await.1;
    assert!(listed.contains("\"burstPerMinute\":3"), "{listed}");

    let (ok, _, err) = cli(vec![
        "token".into(),
        "limit".into(),
        limited_agent.clone(),
        "--none".into(),
    ])
    .await;
    assert!(ok, "{err}");
    let mut again = false;
    for _ in 0..40 {
        if limited.get(READ).await.0 == 404 {
            again = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(again, "the limit is gone within 4 s");
}

/// `horst admin token list --limit N` names the next page on stderr, as the other listings
/// do and as its own `--limit` refusal says ("each page names the next"); it said only
/// "N in all", so a page of a longer list gave no way on.
#[tokio::test]
async fn token_list_names_its_next_page() {
    let app = app_with(|_| {}).await;
    let url = app.redis_url.clone();
    let (ok, out, err) = tokio::task::spawn_blocking(move || {
        for name in ["One", "Two", "Three"] {
            let (ok, _, err) = admin(
                &url,
                &["token", "create", "--scopes", "play", "--name", name],
                "",
            );
            assert!(ok, "{err}");
        }
        let first = admin(&url, &["token", "list", "--limit", "2"], "");
        let (_, _, last_err) = admin(
            &url,
            &["token", "list", "--limit", "2", "--offset", "2"],
            "",
        );
        assert!(
            last_err.contains("3 in all") && !last_err.contains("next page"),
            "the last page names no next one: {last_err}"
        );
        first
    })
    .await
    .unwrap();
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        err.contains("3 in all; next page: --offset 2"),
        "the first page of three names the next: {err}"
    );
}
