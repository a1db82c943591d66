//! The burst limits against a real redis-server: exact across processes, refusals
//! remembered, windows that reopen.

use std::time::Duration;

use horst_limits::{BurstError, BurstLimits, Limit};
use horst_store::Store;
use horst_testkit::RedisServer;

async fn limits(redis: &RedisServer) -> BurstLimits {
    BurstLimits::new(Store::connect(&redis.url(), "t:").await.expect("connect"))
}

const PER_MINUTE_60: Limit = Limit::per_minute("account", 60);

#[tokio::test]
async fn two_processes_share_one_window_exactly() {
    let redis = RedisServer::start();
    // Two API processes: nothing shared but Redis.
    let (a, b) = (limits(&redis).await, limits(&redis).await);
    let mut accepted = 0;
    let mut refused = 0;
    for i in 0..130 {
        let side = if i % 2 == 0 { &a } else { &b };
        match side.check(&PER_MINUTE_60, "agent-0000abcd").await {
            Ok(()) => accepted += 1,
            Err(BurstError::Limited(l)) => {
                refused += 1;
                assert_eq!(l.limit, "account");
                assert!(l.retry_after <= Duration::from_secs(60), "{l:?}");
                assert!(l.retry_after_seconds() >= 1);
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((accepted, refused), (60, 70));
    // Another subject has its own window.
    a.check(&PER_MINUTE_60, "agent-0000abce").await.unwrap();
}

#[tokio::test]
async fn a_window_reopens_when_its_oldest_request_leaves_it() {
    let redis = RedisServer::start();
    let l = limits(&redis).await;
    let short = Limit {
        name: "short",
        max: 3,
        window: Duration::from_millis(400),
    };
    for _ in 0..3 {
        l.check(&short, "x").await.unwrap();
    }
    let wait = match l.check(&short, "x").await {
        Err(BurstError::Limited(limited)) => limited.retry_after,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(wait <= Duration::from_millis(400), "{wait:?}");
    tokio::time::sleep(wait + Duration::from_millis(100)).await;
    l.check(&short, "x")
        .await
        .expect("the window has room again");
}

#[tokio::test]
async fn a_refusal_is_remembered_without_asking_redis_again() {
    let mut redis = RedisServer::start();
    let l = limits(&redis).await;
    let one = Limit::per_minute("one", 1);
    l.check(&one, "y").await.unwrap();
    assert!(matches!(
        l.check(&one, "y").await,
        Err(BurstError::Limited(_))
    ));
    // With Redis gone, the remembered refusal still answers; a new subject is counted in
    // this process meanwhile (issue 35: anonymous reads keep working), under the same limit.
    redis.stop();
    assert!(matches!(
        l.check(&one, "y").await,
        Err(BurstError::Limited(_))
    ));
    l.check(&one, "z")
        .await
        .expect("counted in the process while Redis is gone");
    assert!(matches!(
        l.check(&one, "z").await,
        Err(BurstError::Limited(_))
    ));
}

#[tokio::test]
async fn keys_carry_no_subject_and_expire() {
    let redis = RedisServer::start();
    let l = limits(&redis).await;
    l.check(&PER_MINUTE_60, "203.0.113.7").await.unwrap();
    let store = Store::connect(&redis.url(), "t:").await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("t:burst:*")
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert_eq!(keys.len(), 1);
    assert!(!keys[0].contains("203.0.113.7"), "{keys:?}");
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&keys[0])
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");
}

/// Redis at maxmemory refuses a script only at its first write that may grow memory; the
/// script's first write is its ZADD (the trim comes after), so a full Redis takes no entry
/// and the request is counted in the process instead (as when Redis cannot be reached).
#[tokio::test]
async fn a_full_redis_takes_no_entry() {
    let redis = RedisServer::start();
    let l = limits(&redis).await;
    l.check(&PER_MINUTE_60, "203.0.113.8").await.unwrap();
    let store = Store::connect(&redis.url(), "t:").await.unwrap();
    let config = |v: &'static str| {
        let mut conn = store.conn();
        async move {
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory")
                .arg(v)
                .query_async(&mut conn)
                .await
                .unwrap();
        }
    };
    config("1").await;
    // Answered (counted in the process), not an error.
    l.check(&PER_MINUTE_60, "203.0.113.8").await.unwrap();
    config("0").await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("t:burst:*")
        .query_async(&mut store.conn())
        .await
        .unwrap();
    let logged: u64 = redis::cmd("ZCARD")
        .arg(&keys[0])
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert_eq!(logged, 1, "the full Redis took the second request's entry");
}
