//! A durable write's `WAIT` on a primary that is demoted meanwhile (a manual failover, a
//! `REPLICAOF`) ends with `UNBLOCKED ... (master -> replica?)`: a failover in progress, so
//! callers are answered "unavailable, retry" (503), not an internal error. In the cluster
//! drill of docs/reliability.md a `CLUSTER FAILOVER` answered three MCP calls 500 this way.

use std::time::Duration;

use horst_testkit::RedisServer;

#[tokio::test]
async fn a_wait_unblocked_by_a_demotion_is_unavailable() {
    let primary = RedisServer::start();
    let other = RedisServer::start();
    let client = redis::Client::open(primary.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    // The primary has no replica: the WAIT blocks until it is demoted.
    let waiting = tokio::spawn(async move {
        redis::pipe()
            .cmd("INCR")
            .arg("barrier")
            .cmd("WAIT")
            .arg(1)
            .arg(20_000)
            .query_async::<(i64, u32)>(&mut conn)
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _: () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(other.port())
        .query_async(&mut admin)
        .await
        .unwrap();
    let e = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the WAIT was unblocked")
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("UNBLOCKED"), "{e:?}");
    assert!(horst_store::is_unreachable(&e), "{e:?}");
}
