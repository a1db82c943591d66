//! A pop of the delayed set that a partition holds past its caller's give-up (the store's
//! response timeout) and delivers when it heals takes nothing: the caller never hears its
//! answer, so deadlines it took would be leased to nobody who acts (fired a lease late) or,
//! popped without a lease, lost.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use horst_store::{DelayedSet, Store, RESPONSE_TIMEOUT};
use horst_testkit::{Cut, RedisServer};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pop_delivered_after_its_caller_gave_up_takes_nothing() {
    let server = RedisServer::start();
    let cut = Cut::start(server.port()).await;
    let store = Store::connect(&cut.url(), "t:").await.unwrap();
    let delayed = DelayedSet::new(store);
    // A first pop tells this process the server's clock (the bound's base).
    delayed.pop_due_in(&[0], 10).await.remove(0).unwrap();
    delayed.schedule("turn-clock", now_ms()).await.unwrap();

    cut.cut();
    let held = delayed.pop_due_in(&[0], 10).await.remove(0);
    assert!(held.is_err(), "answered through the cut: {held:?}");
    // Past the give-up by a margin, on the server's clock too.
    tokio::time::sleep(Duration::from_secs(1)).await;
    cut.heal();

    // Read beside the proxy: the held pop has run by the time a command sent after it is
    // answered on its connection; give it time on a loaded machine.
    let client = redis::Client::open(server.url()).unwrap();
    let mut direct = client.get_multiplexed_async_connection().await.unwrap();
    let key = delayed.key();
    let mut score = None;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        score = redis::cmd("ZSCORE")
            .arg(&key)
            .arg("turn-clock")
            .query_async::<Option<f64>>(&mut direct)
            .await
            .unwrap();
        let seen: Option<String> = redis::cmd("HGET")
            .arg(delayed.stalls_key_in(0))
            .arg("seen")
            .query_async(&mut direct)
            .await
            .unwrap();
        // The held pop noted the clock when it ran: later than the first pop's note.
        if seen.is_some_and(|s| s.parse::<u64>().unwrap_or(0) + 2_000 > now_ms()) {
            break;
        }
    }
    let score = score.expect("the entry is still in the set") as u64;
    assert!(
        score <= now_ms(),
        "the held pop leased the entry to a caller that gave up ({} ms ahead; lease {:?}, response timeout {:?})",
        score.saturating_sub(now_ms()),
        horst_store::DELAYED_LEASE,
        RESPONSE_TIMEOUT
    );
    // The next pop, with a fresh bound, takes it.
    let popped = delayed.pop_due_in(&[0], 10).await.remove(0).unwrap();
    assert_eq!(
        popped
            .due
            .iter()
            .map(|(m, _)| m.as_str())
            .collect::<Vec<_>>(),
        ["turn-clock"]
    );
}
