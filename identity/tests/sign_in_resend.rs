//! A sign-in failure is counted once per attempt, however often its record runs: a Redis
//! Cluster connection resends a request whose connection broke or whose reply timed out,
//! and Redis may have run the first send (the failure was then counted twice, and a person
//! mistyping once could wait as if they had failed twice).

use std::net::IpAddr;

use horst_identity::sign_in_limits::{record, record_attempt};
use horst_store::Store;
use horst_testkit::RedisServer;

#[tokio::test]
async fn a_resent_failure_counts_once() {
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url(), "t:").await.expect("connect");
    let ip: IpAddr = "192.0.2.7".parse().unwrap();
    // The same attempt run twice (the send and the library's resend): one failure.
    assert_eq!(
        record_attempt(&store, "fuchs", ip, false, "a1")
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        record_attempt(&store, "fuchs", ip, false, "a1")
            .await
            .unwrap(),
        1,
        "a resend of one attempt counted again"
    );
    // Other attempts count as before.
    assert_eq!(
        record_attempt(&store, "fuchs", ip, false, "a2")
            .await
            .unwrap(),
        2
    );
    assert_eq!(record(&store, "fuchs", ip, false).await.unwrap(), 3);
    assert_eq!(record(&store, "fuchs", ip, false).await.unwrap(), 4);
    // The client's and the name's counters count the attempt once too.
    let mut conn = store.conn();
    for key in ["signin:client:192.0.2.7"] {
        let n: Option<u64> = redis::cmd("HGET")
            .arg(store.key(key))
            .arg("n")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, Some(4), "{key}");
    }
    // A success forgets the pair's failures, a resend of it too.
    assert_eq!(
        record_attempt(&store, "fuchs", ip, true, "a5")
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        record_attempt(&store, "fuchs", ip, true, "a5")
            .await
            .unwrap(),
        0
    );
    assert_eq!(record(&store, "fuchs", ip, false).await.unwrap(), 1);
}
