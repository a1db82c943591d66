//! Argon2 runs are bounded in the process, also when their callers go away: a request whose
//! client disconnected dropped the API's turn while its blocking hash ran on, so clients
//! that sent a sign-in and closed could start any number of 19 MiB hashes at once.

use std::time::{Duration, Instant};

use horst_identity::people;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argon2_runs_are_bounded_when_their_callers_go_away() {
    let callers: Vec<_> = (0..12)
        .map(|i| tokio::spawn(async move { people::hash_password(&format!("passwort {i}")).await }))
        .collect();
    tokio::time::sleep(Duration::from_millis(20)).await;
    // Every caller leaves; their blocking work is not cancelled.
    for c in &callers {
        c.abort();
    }
    let started = Instant::now();
    tokio::time::sleep(Duration::from_millis(50)).await;
    while people::argon2_running() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the hashes never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let peak = people::argon2_peak();
    assert!((1..=4).contains(&peak), "{peak} Argon2 runs at once");
}
