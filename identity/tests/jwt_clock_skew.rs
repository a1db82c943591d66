//! People's JWTs carry `exp` on the clock of the process that minted them, and each process
//! checks it on its own clock; a sign-out marks the JWT revoked for as long as it has left.
//! With hosts whose clocks disagree (NTP broken or not yet synced after a boot, a VM resumed
//! from a snapshot), a sign-out handled by a process whose clock is fast must still end the
//! JWT on every other process: before, the fast process took a JWT near its end for expired
//! and signed out nothing, or marked it revoked only until its own clock said it expired,
//! and a process whose clock is right let the signed-out JWT in for the rest of its life.

use std::time::Duration;

use horst_identity::auth::{Auth, EPOCH_CHECK};
use horst_store::Store;
use horst_testkit::RedisServer;

const WEEK: i64 = 7 * 24 * 3600;

async fn process(redis: &RedisServer, key: &std::path::Path) -> Auth {
    let store = Store::connect(&redis.url(), "t:").await.expect("connect");
    Auth::new(store, key).await.expect("auth")
}

#[tokio::test]
async fn a_jwt_signed_out_on_a_process_whose_clock_is_fast_is_refused_by_the_others() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("jwt.key");
    let minting = process(&redis, &key).await;
    let fast = process(&redis, &key).await;
    let right = process(&redis, &key).await;
    fast.set_process_clock_offset_s(60);

    // A JWT with 30 s of its week left (minted by a process whose clock was behind by that
    // much less than a week: the same as one minted a week ago less 30 s).
    minting.set_process_clock_offset_s(-(WEEK - 30));
    let generation = minting.generation("ute").await.unwrap();
    let jwt = minting.issue_jwt("ute", generation).await.unwrap();
    assert!(right.identify(&jwt).await.unwrap().is_some());
    // Signed out on the process whose clock is a minute fast; every process refuses a
    // signed-out JWT within `EPOCH_CHECK` (the one that cached it too).
    fast.revoke_jwt(&jwt).await.unwrap();
    tokio::time::sleep(EPOCH_CHECK + Duration::from_millis(100)).await;
    assert!(
        right.identify(&jwt).await.unwrap().is_none(),
        "a JWT signed out on a process whose clock is a minute fast is let in by a process whose clock is right"
    );

    // A JWT with 10 minutes left, signed out on a process 5 minutes fast: the mark must
    // outlive the JWT on the clock of every process that checks it.
    minting.set_process_clock_offset_s(-(WEEK - 600));
    let jwt = minting.issue_jwt("ute", generation).await.unwrap();
    fast.set_process_clock_offset_s(300);
    assert!(fast.revoke_jwt(&jwt).await.unwrap());
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let marks: Vec<String> = redis::cmd("KEYS")
        .arg("t:auth:jwtrevoked:*")
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut lives = Vec::new();
    for mark in &marks {
        let ttl: i64 = redis::cmd("TTL")
            .arg(mark)
            .query_async(&mut conn)
            .await
            .unwrap();
        lives.push(ttl);
    }
    assert_eq!(lives.len(), 2, "{marks:?}");
    assert!(
        lives.iter().all(|ttl| *ttl > 600),
        "a revocation mark expires before the JWT does on a right clock: {lives:?} s"
    );
    assert!(right.identify(&jwt).await.unwrap().is_none());
}
