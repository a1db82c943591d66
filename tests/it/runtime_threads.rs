//! `server.runtime_threads`: the async runtime's threads of a horst process, said at start.

use std::time::Duration;

use horst_testkit::RedisServer;

use crate::harness::HorstProcess;

/// The line the process says once its runtime is up: "horst: N runtime thread(s) ...".
fn runtime_threads_of(env: &[(&str, &str)], redis: &RedisServer) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let url = redis.url();
    let mut api = HorstProcess::spawn(
        &[
            "api",
            "--redis",
            &url,
            "--listen",
            "127.0.0.1:0",
            "--data",
            "data",
        ],
        env,
        dir.path(),
    );
    let line = api.wait_for_line("runtime thread", Duration::from_secs(60));
    api.wait_listening();
    api.signal(libc::SIGTERM);
    let status = api
        .wait_exit(Duration::from_secs(30))
        .expect("no exit after SIGTERM");
    assert!(status.success(), "{status}: {}", api.stderr());
    line.split("horst: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no thread count in {line:?}"))
}

#[test]
fn the_runtime_has_the_threads_set() {
    let redis = RedisServer::start();
    assert_eq!(
        runtime_threads_of(&[("HORST_SERVER_RUNTIME_THREADS", "1")], &redis),
        1
    );
    assert_eq!(
        runtime_threads_of(&[("HORST_SERVER_RUNTIME_THREADS", "3")], &redis),
        3
    );
    // 0 (the default) leaves tokio's choice, which follows TOKIO_WORKER_THREADS.
    assert_eq!(
        runtime_threads_of(&[("TOKIO_WORKER_THREADS", "2")], &redis),
        2
    );
}

#[test]
fn a_runtime_thread_count_out_of_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = HorstProcess::spawn(
        &["api"],
        &[("HORST_SERVER_RUNTIME_THREADS", "5000")],
        dir.path(),
    );
    let status = p.wait_exit(Duration::from_secs(60)).expect("no exit");
    let err = p.stderr();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("server.runtime_threads") && err.contains("0 to 1024"),
        "{err}"
    );
}
