//! Invalid configuration stops start-up with a message naming the setting.

use std::time::Duration;

use crate::harness::HorstProcess;

fn run_to_exit(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut p = HorstProcess::spawn(args, env, dir.path());
    let status = p
        .wait_exit(Duration::from_secs(60))
        .expect("horst should exit on bad configuration");
    (status.code().unwrap_or(-1), p.stdout(), p.stderr())
}

#[test]
fn bad_value_in_file_names_setting_and_accepted_values() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(&file, "[log]\nformat = \"xml\"\n").unwrap();
    let (code, _, err) = run_to_exit(&["up", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("log.format"), "{err}");
    assert!(err.contains("human") && err.contains("json"), "{err}");
}

/// With JSON logs asked for, a configuration error is one JSON log line (what the service's
/// log shipper parses), from the environment or from the file that fails to load; else the
/// plain line.
#[test]
fn configuration_errors_are_json_lines_when_json_logs_are_asked_for() {
    let json_line = |err: &str| -> serde_json::Value {
        let line = err
            .lines()
            .find(|l| l.contains("worker.slots"))
            .unwrap_or("");
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}):\n{err}"))
    };
    let (code, _, err) = run_to_exit(
        &["worker"],
        &[("HORST_WORKER_SLOTS", "0"), ("HORST_LOG_FORMAT", "json")],
    );
    assert_eq!(code, 2, "{err}");
    let v = json_line(&err);
    assert_eq!(v["level"], "ERROR", "{v}");
    let message = v["message"].as_str().unwrap_or("");
    assert!(
        message.contains("worker.slots") && message.contains("1 to 256"),
        "{v}"
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(&file, "[log]\nformat = \"json\"\n[worker]\nslots = 0\n").unwrap();
    let (code, _, err) = run_to_exit(&["worker", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(json_line(&err)["level"], "ERROR");

    // Human logs (the default): the plain line, as before.
    let (code, _, err) = run_to_exit(&["worker"], &[("HORST_WORKER_SLOTS", "0")]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("horst: invalid configuration: worker.slots"),
        "{err}"
    );
}

#[test]
fn unknown_setting_in_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(&file, "[worker]\nslot = 2\n").unwrap();
    let (code, _, err) = run_to_exit(&["worker", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("worker.slot"), "{err}");
    assert!(err.contains("slots"), "{err}");
}

#[test]
fn bad_environment_value_names_the_variable() {
    let (code, _, err) = run_to_exit(&["up"], &[("HORST_SERVER_LISTEN", "everywhere")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("server.listen"), "{err}");
    assert!(err.contains("HORST_SERVER_LISTEN"), "{err}");
    assert!(err.contains("IP:PORT"), "{err}");
}

#[test]
fn out_of_range_value_says_the_range() {
    let (code, _, err) = run_to_exit(&["up"], &[("HORST_WORKER_SLOTS", "0")]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("worker.slots") && err.contains("1 to 256"),
        "{err}"
    );
}

#[test]
fn bad_flag_is_refused() {
    let (code, _, err) = run_to_exit(&["api", "--listen", "8080"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--listen"), "{err}");
}

/// Every listing's `--limit` is a page size in the range its REST twin takes, refused
/// outside it with the range (exit 2, before any store is reached): `--limit 0` printed an
/// empty page and "next page: --offset 0" (`account list`, `key list`; `level list` a
/// `nextOffset` of 0), which a script following the pages never got past.
#[test]
fn a_page_size_out_of_range_is_refused_with_the_range() {
    for (listing, max) in [
        (&["admin", "account", "list"][..], "1000"),
        (&["admin", "key", "list"], "1000"),
        (&["admin", "token", "list"], "1000"),
        (&["admin", "level", "list"], "1000"),
        (&["admin", "job", "list"], "500"),
        (&["admin", "audit"], "10000"),
        (&["admin", "sign-ins"], "10000"),
        (&["admin", "messages", "list"], "10000"),
        (&["admin", "board", "list"], "10000"),
    ] {
        let too_many = format!("{}1", max);
        for bad in ["0", too_many.as_str(), "many"] {
            let mut args = listing.to_vec();
            args.extend(["--limit", bad]);
            let (code, _, err) = run_to_exit(&args, &[]);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains("--limit") && err.contains(&format!("from 1 to {max}")),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn every_subcommand_explains_itself() {
    for sub in [
        &["up"][..],
        &["api"],
        &["worker"],
        &["admin"],
        &["admin", "status"],
    ] {
        let mut args: Vec<&str> = sub.to_vec();
        args.push("--help");
        let (code, out, err) = run_to_exit(&args, &[]);
        assert_eq!(code, 0, "{sub:?}: {err}");
        for flag in ["--config", "--redis", "--data"] {
            assert!(out.contains(flag), "{sub:?} --help lacks {flag}:\n{out}");
        }
    }
}

/// An environment variable that is not UTF-8 is no panic: one horst does not read is left
/// alone (the configuration error below is what stops it), and a `HORST_*` one is named.
/// `std::env::vars` panicked on any of them (exit 101).
#[test]
fn environment_variables_that_are_not_utf8_are_no_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: (&OsStr, &OsStr)| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_horst"))
            .arg("up")
            .current_dir(dir.path())
            .env("HORST_SERVER_LISTEN", "everywhere")
            .env(extra.0, extra.1)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let bad = OsStr::from_bytes(b"caf\xe9");
    let (code, err) = run((OsStr::new("SOME_OTHER_VARIABLE"), bad));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("HORST_SERVER_LISTEN"), "{err}");
    let (code, err) = run((OsStr::new("HORST_LOG_FORMAT"), bad));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("HORST_LOG_FORMAT") && err.contains("UTF-8"),
        "{err}"
    );
}

/// A `--config` file that cannot be read names the file and the flag to fix, and no setting
/// (it said `invalid configuration: - (in nope.toml): ...`, a setting called `-`).
#[test]
fn a_missing_configuration_file_names_the_file_and_the_flag() {
    let (code, _, err) = run_to_exit(&["api", "--config", "nope.toml"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("nope.toml") && err.contains("--config"),
        "{err}"
    );
    assert!(!err.contains(" - "), "{err}");
}

/// `horst admin --help` and the help of every command under it: each flag and argument says
/// what it is (43 of them were a bare `<ID>`, `--account <ACCOUNT>`, `--game <GAME>`), and
/// `--listen`, which no admin command uses, is neither listed nor taken (it was listed on every
/// one and silently did nothing).
#[test]
fn every_admin_flag_and_argument_says_what_it_is() {
    fn help(path: &[String]) -> String {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_horst"))
            .args(path)
            .arg("--help")
            .env_remove("HORST_CONFIG")
            .output()
            .unwrap();
        assert!(out.status.success(), "{path:?}");
        String::from_utf8(out.stdout).unwrap()
    }
    let mut missing = Vec::new();
    let mut todo = vec![vec!["admin".to_string()]];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        seen += 1;
        let text = help(&path);
        if text.contains("--listen") {
            missing.push(format!("{}: lists --listen", path.join(" ")));
        }
        let mut section = "";
        for line in text.lines() {
            if let Some(head) = line.strip_suffix(':').filter(|h| !h.starts_with(' ')) {
                section = match head {
                    "Commands" | "Options" | "Arguments" => head,
                    _ => "",
                };
                continue;
            }
            let entry = line.trim_start();
            if entry.is_empty() || !line.starts_with("  ") {
                continue;
            }
            match section {
                "Commands" => {
                    let name = entry.split_whitespace().next().unwrap();
                    if name != "help" {
                        let mut next = path.clone();
                        next.push(name.to_string());
                        todo.push(next);
                    }
                }
                "Options" | "Arguments" => {
                    // "-h, --help  Print help", "--id <ID>  What it is", "<ID>  What it is":
                    // the name, then two or more spaces, then the description.
                    let described = entry
                        .split_once("  ")
                        .is_some_and(|(_, rest)| !rest.trim().is_empty());
                    if !described {
                        missing.push(format!("{}: {entry}", path.join(" ")));
                    }
                }
                _ => {}
            }
        }
    }
    assert!(seen > 40, "only {seen} commands walked: the walk is broken");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let (code, _, err) = run_to_exit(&["admin", "status", "--listen", "127.0.0.1:1"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--listen"), "{err}");
}

/// `horst admin` whose stderr is a pipe the reader closed (`2>&1 | head -1`) ends its notes
/// quietly and exits with its own status, as with a closed stdout: `eprintln!` panicked there
/// (exit 101, e.g. after a recheck had been recorded, or here before saying that no store
/// runs under the data directory).
#[test]
fn admin_with_a_closed_stderr_is_no_panic() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..3 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_horst"))
            .args(["admin", "status", "--data", "nostore"])
            .current_dir(dir.path())
            .env_remove("HORST_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{status:?}");
    }
}

/// The flags are the last layer and are held to the rules between settings too: `--listen`
/// on the worker's metrics address started an API whose worker could never bind its
/// `/metrics` (the case that rule exists for). And a rule broken by an override names the
/// variable that broke it, not the alphabetically first `HORST_*` one.
#[test]
fn a_flag_or_variable_that_breaks_a_rule_between_settings_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(
        &file,
        "[worker]\nmetrics_listen = \"127.0.0.1:17431\"\n[queue]\nwait_seconds = 30\n",
    )
    .unwrap();
    let config = file.to_str().unwrap();
    let (code, _, err) = run_to_exit(
        &["api", "--config", config, "--listen", "127.0.0.1:17431"],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("worker.metrics_listen"), "{err}");
    assert!(err.contains("server.listen is from flag --listen"), "{err}");

    let (code, _, err) = run_to_exit(
        &["worker", "--config", config],
        &[
            ("HORST_DATA_DIR", "/tmp/ops-nowhere"),
            ("HORST_QUEUE_PLAYTEST_SECONDS", "40"),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("queue.wait_seconds (in {config})")),
        "{err}"
    );
    assert!(
        err.contains(
            "queue.playtest_seconds is from environment variable HORST_QUEUE_PLAYTEST_SECONDS"
        ),
        "{err}"
    );
    assert!(!err.contains("HORST_DATA_DIR"), "{err}");
}

/// A misspelled `sessions.reference_games` entry used to be taken silently: the reference
/// player never met a table of that game, and every new agent of the game went without its
/// validation game. Start-up now refuses it naming the known games, from the file and from
/// the environment alike; the games of `house.games` count as known.
#[test]
fn a_misspelled_reference_game_is_refused_naming_the_known_games() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(
        &file,
        "[sessions]\nreference_games = [\"chess\", \"rsp\"]\n",
    )
    .unwrap();
    let (code, _, err) = run_to_exit(&["up", "--config", file.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("sessions.reference_games")
            && err.contains("\"rsp\"")
            && err.contains("chess, rps"),
        "{err}"
    );
    assert!(err.contains("horst.toml"), "the file is named: {err}");

    let (code, _, err) = run_to_exit(&["api"], &[("HORST_SESSIONS_REFERENCE_GAMES", "Chess")]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("HORST_SESSIONS_REFERENCE_GAMES") && err.contains("\"Chess\""),
        "{err}"
    );

    // A game of the operator's own house is known once house.games names it: no
    // configuration error (the process goes on to look for Redis, which is not ours to
    // start here, so only the message is checked).
    std::fs::write(
        &file,
        "[sessions]\nreference_games = [\"duel\"]\n[house]\ngames = [\"duel\"]\n",
    )
    .unwrap();
    let (_, _, err) = run_to_exit(
        &["admin", "status", "--config", file.to_str().unwrap()],
        &[],
    );
    assert!(!err.contains("reference_games"), "{err}");
}
