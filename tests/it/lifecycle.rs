//! The horst process and its Redis: private server start and stop, crashes, signals, the
//! start-up checks.

use std::time::Duration;

use horst_testkit::RedisServer;

use crate::harness::{eventually, process_alive, wait_gone, HorstProcess};

/// "horst: private redis-server started (pid N), ..." -> N
fn private_redis_pid(p: &mut HorstProcess) -> u32 {
    let line = p.wait_for_line("private redis-server started", Duration::from_secs(60));
    line.split("(pid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

#[tokio::test]
async fn up_runs_private_redis_and_sigterm_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        &[],
        dir.path(),
    );
    let data_line = horst.wait_for_line("data directory", Duration::from_secs(60));
    assert!(
        data_line.contains(dir.path().join("data").to_str().unwrap()),
        "{data_line}"
    );
    let redis_pid = private_redis_pid(&mut horst);
    let addr = horst.wait_listening();
    assert!(dir.path().join("data/redis/appendonlydir").exists());

    let http = reqwest::Client::new();
    let r = http
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let ready = eventually(Duration::from_secs(30), async || {
        http.get(format!("http://{addr}/readyz"))
            .send()
            .await
            .map(|r| r.status() == 200)
            .unwrap_or(false)
    })
    .await;
    assert!(ready, "never ready: {}", horst.stderr());

    // The operator's tools reach the same store through --data. up's worker is a child
    // process that announces itself once it has started: ask again (bounded) until it has.
    let until = std::time::Instant::now() + Duration::from_secs(60);
    let report = loop {
        let mut admin = HorstProcess::spawn(
            &["admin", "status", "--json", "--data", "data"],
            &[],
            dir.path(),
        );
        let status = admin.wait_exit(Duration::from_secs(60)).unwrap();
        assert!(status.success(), "{}", admin.stderr());
        let report: serde_json::Value = serde_json::from_str(&admin.stdout()).unwrap();
        if !report["workers"].as_array().unwrap().is_empty() || std::time::Instant::now() > until {
            break report;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(report["redis"]["maxmemoryPolicy"], "noeviction");
    assert_eq!(report["redis"]["appendonly"], true);
    assert_eq!(report["workers"].as_array().unwrap().len(), 1, "{report}");
    assert!(
        process_alive(redis_pid),
        "admin must not stop the server it attached to"
    );

    horst.signal(libc::SIGTERM);
    let status = horst
        .wait_exit(Duration::from_secs(10))
        .expect("horst did not stop within 10 s of SIGTERM");
    assert!(status.success(), "{status}: {}", horst.stderr());
    assert!(
        wait_gone(redis_pid, Duration::from_secs(5)),
        "redis-server {redis_pid} left running"
    );
    // Its log went to a pipe, not a terminal: plain lines, no colour escape codes.
    let log = horst.stderr();
    assert!(log.contains("connected to Redis"), "{log}");
    assert!(!log.contains('\x1b'), "colour codes in a piped log:\n{log}");
    // A fresh data directory has nothing of an earlier version to adopt, and says nothing
    // about one (it warned "adopted ... of an earlier version" at every first start).
    assert!(!log.contains("earlier version"), "{log}");
}

#[tokio::test]
async fn ctrl_c_stops_it_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(&["up", "--listen", "127.0.0.1:0"], &[], dir.path());
    let redis_pid = private_redis_pid(&mut horst);
    horst.wait_listening();
    horst.signal(libc::SIGINT);
    let status = horst
        .wait_exit(Duration::from_secs(10))
        .expect("no exit after SIGINT");
    assert!(status.success());
    assert!(wait_gone(redis_pid, Duration::from_secs(5)));
}

/// `horst up | tee log` whose reader is gone (tee ended, `| head -1`): up serves on and
/// stops cleanly. Its start-up and stop lines were `println!`, which panics on a closed
/// pipe (exit 101 with a backtrace, before it even listened).
#[tokio::test]
async fn up_serves_and_stops_cleanly_when_its_stdout_is_gone() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    // stdout is closed, so the address is chosen here.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_horst"));
    cmd.args(["up", "--listen", &listen, "--data", "data"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("HORST_") {
            cmd.env_remove(k);
        }
    }
    let mut child = cmd.spawn().unwrap();
    drop(child.stdout.take());
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    {
        let err = child.stderr.take().unwrap();
        let stderr = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut s = stderr.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
    }
    let http = reqwest::Client::new();
    let up = eventually(Duration::from_secs(60), async || {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        http.get(format!("http://{listen}/healthz"))
            .send()
            .await
            .map(|r| r.status() == 200)
            .unwrap_or(false)
    })
    .await;
    assert!(
        up && child.try_wait().unwrap().is_none(),
        "horst up ended with its stdout gone ({:?}):\n{}",
        child.try_wait(),
        stderr.lock().unwrap()
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(100));
    let err = stderr.lock().unwrap().clone();
    assert!(status.success(), "{status}:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A closed terminal (SIGHUP) stops it cleanly too: it had no handler, and `up` died at
/// once without draining.
#[tokio::test]
async fn a_hangup_stops_it_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(&["up", "--listen", "127.0.0.1:0"], &[], dir.path());
    let redis_pid = private_redis_pid(&mut horst);
    horst.wait_listening();
    horst.signal(libc::SIGHUP);
    let status = horst
        .wait_exit(Duration::from_secs(10))
        .expect("no exit after SIGHUP");
    assert!(status.success(), "{status}: {}", horst.stderr());
    assert!(wait_gone(redis_pid, Duration::from_secs(5)));
}

/// Under `nohup` (SIGHUP ignored when horst starts) a closed terminal leaves horst running:
/// its own SIGHUP handler used to replace the ignore and stop it.
#[tokio::test]
async fn a_hangup_under_nohup_is_ignored() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn_with(
        &["up", "--listen", "127.0.0.1:0"],
        &[],
        dir.path(),
        |cmd| unsafe {
            // SAFETY: signal() is async-signal-safe; this is what nohup does before exec.
            cmd.pre_exec(|| {
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
                Ok(())
            });
        },
    );
    let redis_pid = private_redis_pid(&mut horst);
    horst.wait_listening();
    horst.signal(libc::SIGHUP);
    assert!(
        horst.wait_exit(Duration::from_secs(3)).is_none(),
        "a hang-up under nohup stopped horst: {}",
        horst.stderr()
    );
    horst.signal(libc::SIGTERM);
    let status = horst
        .wait_exit(Duration::from_secs(15))
        .expect("SIGTERM still stops it");
    assert!(status.success());
    assert!(wait_gone(redis_pid, Duration::from_secs(5)));
}

#[tokio::test]
async fn killed_horst_takes_its_private_redis_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(&["up", "--listen", "127.0.0.1:0"], &[], dir.path());
    let redis_pid = private_redis_pid(&mut horst);
    horst.wait_listening();
    let line = horst.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let worker_pid: u32 = line
        .split("(pid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"));
    horst.signal(libc::SIGKILL);
    horst.wait_exit(Duration::from_secs(10)).unwrap();
    assert!(
        wait_gone(worker_pid, Duration::from_secs(30)),
        "the worker process {worker_pid} outlived a kill -9 of horst"
    );
    assert!(
        wait_gone(redis_pid, Duration::from_secs(10)),
        "an orphaned redis-server {redis_pid} outlived a kill -9 of horst"
    );
}

/// A crash of the private redis-server (here `kill -9`) is said in the log, and horst starts the server again on the same AOF: ready again, with what was
/// stored before the crash, without an operator.
#[tokio::test]
async fn a_crashed_private_redis_is_started_again_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(&["up", "--listen", "127.0.0.1:0"], &[], dir.path());
    let redis_pid = private_redis_pid(&mut horst);
    let data = horst.wait_for_line("horst: data directory ", Duration::from_secs(10));
    let socket = std::path::PathBuf::from(data.trim_start_matches("horst: data directory "))
        .join("redis/redis.sock");
    let addr = horst.wait_listening();
    let http = reqwest::Client::new();
    let ready = async || {
        http.get(format!("http://{addr}/readyz"))
            .send()
            .await
            .map(|r| r.status() == 200)
            .unwrap_or(false)
    };
    assert!(eventually(Duration::from_secs(30), ready).await);
    let url = format!("redis+unix://{}", socket.display());
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("test:before-the-crash")
        .arg("kept")
        .query_async(&mut conn)
        .await
        .unwrap();
    unsafe {
        libc::kill(redis_pid as i32, libc::SIGKILL);
    }
    let line = horst.wait_for_line(
        "private redis-server started again",
        Duration::from_secs(60),
    );
    let new_pid: u32 = line
        .split("(pid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"));
    assert_ne!(new_pid, redis_pid);
    assert!(
        eventually(Duration::from_secs(60), ready).await,
        "horst did not turn ready again after the restart: {}",
        horst.stderr()
    );
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let kept: Option<String> = redis::cmd("GET")
        .arg("test:before-the-crash")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(kept.as_deref(), Some("kept"), "the AOF was not replayed");
    // What happened is said (on /readyz too while it lasts: too short a moment to catch
    // here, the restart being at once).
    let said = horst.stderr();
    assert!(
        said.contains("private redis-server exited unexpectedly")
            && said.contains("starting it again"),
        "{said}"
    );
    // It stops cleanly, and the server with it.
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
    assert!(
        wait_gone(new_pid, Duration::from_secs(10)),
        "the restarted redis-server {new_pid} outlived horst"
    );
}

/// With JSON logs, a crash of the private redis-server and its restart are each one JSON
/// event: the log event (the reason, or the new pid, as a field) was followed by the
/// operator's `horst: ...` line, which JSON logs make an event too, so a log shipper counted
/// every crash twice.
#[test]
fn a_crashed_private_redis_is_told_once_in_json_logs() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0"],
        &[("HORST_LOG_FORMAT", "json")],
        dir.path(),
    );
    let redis_pid = private_redis_pid(&mut horst);
    horst.wait_listening();
    unsafe {
        libc::kill(redis_pid as i32, libc::SIGKILL);
    }
    let start = std::time::Instant::now();
    while !horst
        .stderr()
        .contains("private redis-server started again")
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
    let (out, err) = (horst.stdout(), horst.stderr());
    let events: Vec<serde_json::Value> = err
        .lines()
        .chain(out.lines())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let told = |needle: &str| {
        events
            .iter()
            .filter(|v| v.to_string().contains(needle))
            .count()
    };
    assert_eq!(told("exited unexpectedly"), 1, "{err}\n{out}");
    assert_eq!(
        told("private redis-server started again"),
        1,
        "{err}\n{out}"
    );
}

/// A stall of Redis (here its server `SIGSTOP`ped for 4 s) is logged once by `horst up`, with
/// what to look at: its worker child, whose log shares up's terminal, learns of the same
/// stall and logged it too, the same line twice within a millisecond, so an operator read
/// two stalls.
#[test]
fn a_stall_of_redis_is_logged_once_by_up_and_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(&["up", "--listen", "127.0.0.1:0"], &[], dir.path());
    let redis_pid = private_redis_pid(&mut horst);
    horst.wait_listening();
    // The child pops the session deadlines too once it runs.
    horst.wait_for_line("worker: horst: metrics on", Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    unsafe {
        libc::kill(redis_pid as i32, libc::SIGSTOP);
    }
    std::thread::sleep(Duration::from_secs(4));
    unsafe {
        libc::kill(redis_pid as i32, libc::SIGCONT);
    }
    let stall = "no process could reach Redis";
    let start = std::time::Instant::now();
    while !horst.stderr().contains(stall) && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Both processes pop every 250 ms once Redis answers: a second line would be here by now.
    std::thread::sleep(Duration::from_secs(5));
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
    let err = horst.stderr();
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(stall)).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("redis.log") && lines[0].contains("horst admin status"),
        "the line does not say what to look at: {}",
        lines[0]
    );
}

/// A Redis that comes back empty (restarted without its AOF, a FLUSHALL, a failover to a
/// replica that had not synced) gets what an API process's start stores again: the built-in
/// levels and the configured admin token. Before, both stayed gone until the API process was
/// restarted: the game's level list was empty and the admin API answered 404 "off".
#[tokio::test]
async fn a_redis_that_lost_its_data_gets_what_a_start_stores_again() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let token = "adm_seeds_test_0123456789abcdef0123456789";
    let mut horst = HorstProcess::spawn(
        &["api", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[
            ("HORST_GATEWAY_ADMIN_TOKEN", token),
            ("HORST_REDIS_SERVER_CHECK_SECONDS", "1"),
        ],
        dir.path(),
    );
    let addr = horst.wait_listening();
    let http = reqwest::Client::new();
    // Both what the start stored are there: the shipped levels in the game's list, and the
    // admin API open to the configured token.
    let seeded = async || {
        let levels = http
            .get(format!("http://{addr}/api/game/levels"))
            .send()
            .await;
        let levels: serde_json::Value = match levels {
            Ok(r) if r.status() == 200 => r.json().await.unwrap_or_default(),
            _ => return false,
        };
        let admin = http
            .get(format!("http://{addr}/api/admin/overview"))
            .bearer_auth(token)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        levels["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty())
            && admin == 200
    };
    assert!(
        eventually(Duration::from_secs(30), seeded).await,
        "not seeded at start: {}",
        horst.stderr()
    );
    // A start that stored its seeds says nothing of lost data (two looks later).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        !horst.stderr().contains("Redis has lost horst's data"),
        "{}",
        horst.stderr()
    );
    let mut conn = redis::Client::open(redis.url().as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    assert!(
        eventually(Duration::from_secs(30), seeded).await,
        "the built-in levels or the admin token did not come back after the FLUSHALL: {}",
        horst.stderr()
    );
    // The operator learns that data was lost, and what to do about what was not seeded.
    let said = horst.stderr();
    assert!(said.contains("Redis has lost horst's data"), "{said}");
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
}

#[test]
fn missing_redis_server_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0"],
        &[("HORST_REDIS_SERVER_BINARY", "redis-server-not-installed")],
        dir.path(),
    );
    let status = horst.wait_exit(Duration::from_secs(30)).unwrap();
    assert_eq!(status.code(), Some(1));
    assert!(
        horst.stderr().contains("apt-get install redis-server"),
        "{}",
        horst.stderr()
    );
    // And the setting that named it, which may be a path with a typo.
    assert!(
        horst.stderr().contains("redis.server_binary"),
        "{}",
        horst.stderr()
    );
}

#[test]
fn evicting_redis_is_refused_unless_overridden() {
    let redis = RedisServer::start_with(|o| o.maxmemory_policy = "allkeys-lru".into());
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["api", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[],
        dir.path(),
    );
    let status = horst
        .wait_exit(Duration::from_secs(30))
        .expect("should refuse to start");
    assert_eq!(status.code(), Some(1));
    let err = horst.stderr();
    assert!(
        err.contains("allkeys-lru") && err.contains("noeviction"),
        "{err}"
    );
    assert!(err.contains("HORST_REDIS_ALLOW_EVICTION"), "{err}");

    let mut horst = HorstProcess::spawn(
        &["api", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[("HORST_REDIS_ALLOW_EVICTION", "true")],
        dir.path(),
    );
    horst.wait_listening();
    assert!(horst.stderr().contains("may evict"), "{}", horst.stderr());
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
}

#[test]
fn aof_off_is_warned_about() {
    let redis = RedisServer::start_with(|o| o.appendonly = false);
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &[], dir.path());
    let start = std::time::Instant::now();
    while !horst.stderr().contains("AOF off") && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(horst.stderr().contains("AOF off"), "{}", horst.stderr());
    horst.signal(libc::SIGTERM);
    let status = horst.wait_exit(Duration::from_secs(15)).unwrap();
    assert!(status.success());

    // An operator command says it where the store is looked at (`admin status`), not on
    // every run: every `horst admin` command printed the warning before its answer.
    let admin = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_horst"));
        for (k, _) in std::env::vars() {
            if k.starts_with("HORST_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd
            .arg("admin")
            .args(args)
            .args(["--redis", &redis.url()])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(out.status.success(), "{args:?}: {stdout}\n{stderr}");
        (stdout, stderr)
    };
    for args in [&["job", "list"][..], &["overview"], &["audit"]] {
        let (_, stderr) = admin(args);
        assert!(
            !stderr.to_lowercase().contains("aof"),
            "`horst admin {}` warned: {stderr}",
            args.join(" ")
        );
    }
    let (stdout, _) = admin(&["status"]);
    assert!(
        stdout.contains("AOF OFF") && stdout.contains("appendonly yes"),
        "{stdout}"
    );
}

/// A logging filter that does not parse is said, not silently passed over (the operator
/// asked for debug lines and never learnt they were not on).
#[test]
fn a_logging_filter_that_does_not_parse_is_said() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["api", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[("HORST_LOG", "horst_api=debu")],
        dir.path(),
    );
    horst.wait_listening();
    let said = horst.stderr();
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
    assert!(
        said.contains("passed over") && said.contains("horst_api=debu"),
        "{said}"
    );
}

/// `log.format = "json"` (the units set it): every line on stderr and stdout is one JSON
/// object whose `level` is the log level (the `horst: ...` lines were plain text among
/// them, which journald and log shippers saw as a mix). An event field named `level` (the built-in levels' name at
/// every API start) was a second `level` key, and a log shipper kept that one: the line's
/// level read "erste-schritte".
#[test]
fn json_log_lines_keep_their_level() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["api", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[("HORST_LOG_FORMAT", "json")],
        dir.path(),
    );
    horst.wait_listening();
    let start = std::time::Instant::now();
    while !horst.stderr().contains("built-in level published")
        && start.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
    let log = horst.stderr();
    assert!(log.contains("built-in level published"), "{log}");
    // Both streams are pure JSON: the `horst: ...` lines said to the operator (start-up,
    // "listening on", the missing web directory's warning, "stopped") are log events too,
    // their text the message, with a level of their own.
    let out = horst.stdout();
    let mut said = Vec::new();
    for line in log.lines().chain(out.lines()) {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"]
                .contains(&v["level"].as_str().unwrap_or("")),
            "the line's level was overwritten: {line}"
        );
        assert!(
            v["target"].as_str().is_some_and(|t| t.starts_with("horst")),
            "the line's target was overwritten: {line}"
        );
        assert!(
            v["timestamp"].as_str().is_some(),
            "the line has no timestamp: {line}"
        );
        said.push((
            v["level"].as_str().unwrap_or("").to_string(),
            v["message"].as_str().unwrap_or("").to_string(),
        ));
    }
    let has =
        |level: &str, start: &str| said.iter().any(|(l, m)| l == level && m.starts_with(start));
    assert!(has("INFO", "data directory "), "{said:?}");
    assert!(has("INFO", "listening on http://"), "{said:?}");
    assert!(has("WARN", "server.web_dir "), "{said:?}");
    assert!(has("INFO", "stopped"), "{said:?}");
}

/// With `log.format = "json"` an error that stops horst is a JSON event as well (ERROR).
#[test]
fn json_errors_that_stop_horst_are_json_events() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let mut horst = HorstProcess::spawn(
        &["api", "--listen", &addr, "--redis", &redis.url()],
        &[("HORST_LOG_FORMAT", "json")],
        dir.path(),
    );
    let status = horst
        .wait_exit(Duration::from_secs(30))
        .expect("horst exits");
    assert!(!status.success());
    let log = horst.stderr();
    let refused = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"))
        })
        .find(|v| {
            v["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(&format!("cannot listen on {addr}")))
        })
        .unwrap_or_else(|| panic!("no \"cannot listen\" event: {log}"));
    assert_eq!(refused["level"], "ERROR", "{refused}");
    for line in horst.stdout().lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
}

/// docs/operators.md ("Metrics and logs"): the `horst: warning: ...` lines are said on stdout
/// with the other lines for the operator, errors that stop horst on stderr. The missing web
/// directory's warning went to stderr, alone of the warnings.
#[test]
fn the_web_dir_warning_is_said_on_stdout_as_the_other_warnings() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["api", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[("HORST_SERVER_WEB_DIR", "/nonexistent/horst-web")],
        dir.path(),
    );
    horst.wait_listening();
    let out = horst.stdout();
    horst.signal(libc::SIGTERM);
    assert!(horst.wait_exit(Duration::from_secs(15)).is_some());
    assert!(
        out.contains("horst: warning: server.web_dir /nonexistent/horst-web"),
        "stdout: {out}\nstderr: {}",
        horst.stderr()
    );
    assert!(
        !horst.stderr().contains("horst: warning"),
        "{}",
        horst.stderr()
    );
}
