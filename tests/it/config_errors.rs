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
