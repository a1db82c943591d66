//! horst on a Redis Cluster: three primaries with a replica each (`RedisCluster`). The job,
//! gateway and session test modules also run on the shared cluster (`HORST_TEST_REDIS=cluster`,
//! `ops/test`); these tests check what only a cluster shows: sessions spread over every
//! primary while each script's keys stay in one slot, and a primary killed under load.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_testkit::RedisCluster;
use serde_json::json;

use crate::harness::{spawn_app_on_cluster, TestApp};
use crate::rcadia_common::*;

/// An app on `urls` (none: the shared cluster) with `acks` replica acknowledgements.
async fn app_on(urls: Vec<String>, acks: u32) -> TestApp {
    let mut config = horst_config::Config::default();
    config.worker.threads = 1;
    fast(&mut config);
    config.redis.min_replica_acks = acks;
    config.redis.replica_ack_timeout_ms = 2000;
    config.redis.cluster = urls;
    spawn_app_on_cluster(config).await
}

/// The primary serving a session's keys now.
fn primary_of(cluster: &RedisCluster, app: &TestApp, id: &str) -> Option<u16> {
    let bucket = app.store.bucket_of(id);
    let key = app.store.key_in_bucket(bucket, &format!("ses:{id}"));
    cluster.primary_of_slot(horst_store::cluster::slot(key.as_bytes()))
}

#[tokio::test]
async fn sessions_spread_over_every_primary_and_all_are_listed() {
    let app = app_on(Vec::new(), 0).await;
    assert!(app.store.hash_tags(), "the app runs on the cluster");
    let (host, agents) = cast(&app, 2).await;
    let mut ids = Vec::new();
    for _ in 0..12 {
        ids.push(host.create(two_player(json!({}))).await);
    }
    // A game runs through: joins, the host's queue, actions (the save script, the delayed
    // set and the wake-ups, all in the session's bucket).
    let (id, pids, _) = started(&host, &agents, two_player(json!({}))).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["e4"] }]),
    )
    .await;
    let (status, body) = agents[0].act(&id, json!("e4"), 1).await;
    assert!(status < 300, "{status} {body}");
    ids.push(id);

    let cluster = tokio::task::spawn_blocking(RedisCluster::shared)
        .await
        .unwrap();
    let primaries: HashSet<u16> = ids
        .iter()
        .filter_map(|id| primary_of(cluster, &app, id))
        .collect();
    assert!(
        primaries.len() >= 2,
        "13 sessions in {} bucket(s) on primaries {primaries:?}",
        ids.iter()
            .map(|i| app.store.bucket_of(i))
            .collect::<HashSet<_>>()
            .len()
    );
    // `/available` reads every bucket.
    let listed: HashSet<String> = app
        .rcadia
        .list_unfinished()
        .await
        .unwrap()
        .iter()
        .map(|s| s.session_id().to_string())
        .collect();
    for id in &ids {
        assert!(listed.contains(id), "{id} not listed");
    }
}

/// kill -9 of one primary while hosts create sessions on every shard: with
/// `min_replica_acks = 1` every acknowledged session survives, only the killed shard's
/// writes pause (for about the failover), and the other shards go on. Prints the figures.
#[tokio::test]
async fn a_primary_killed_under_load_loses_no_acknowledged_session() {
    let mut cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .unwrap();
    let app = app_on(cluster.urls(), 1).await;
    let (host, _) = cast(&app, 0).await;

    // Acknowledged sessions with the time of their acknowledgement; failed requests.
    let acked: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let failed = Arc::new(Mutex::new(0u32));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for _ in 0..4 {
        let (host, acked, failed, stop) =
            (host.clone(), acked.clone(), failed.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let body = json!({ "config": two_player(json!({})), "gameId": "chess", "gameTitle": "Chess" });
                let (status, body) = host.post(BRIDGE, body).await;
                match body["sessionId"].as_str() {
                    Some(id) if status < 300 => {
                        acked.lock().unwrap().push((id.to_string(), Instant::now()))
                    }
                    _ => {
                        *failed.lock().unwrap() += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = cluster.primary_ports();
    let victim = before[0];
    let killed_at = Instant::now();
    cluster.server_on(victim).kill();
    tokio::time::sleep(Duration::from_secs(10)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    // The crashed node comes back (as a replica of the promoted one).
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.server_on(victim).start_again();
        cluster.wait_until_ok(Duration::from_secs(60));
        cluster
    })
    .await
    .unwrap();

    let acked = acked.lock().unwrap().clone();
    let failed = *failed.lock().unwrap();
    // When each shard (by the primary serving it now) acknowledged its first write after the
    // kill; the killed shard's is served by its promoted replica.
    let promoted: Vec<u16> = cluster
        .primary_ports()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    let mut resumed: BTreeMap<u16, Duration> = BTreeMap::new();
    let mut lost = Vec::new();
    // Read back through a fresh connection (not the process's cached records).
    let fresh = horst_store::Store::open(&app.config.redis, "")
        .await
        .unwrap();
    for (id, at) in &acked {
        let key = fresh.key_in_bucket(fresh.bucket_of(id), &format!("ses:{id}"));
        let exists: bool = redis::cmd("EXISTS")
            .arg(&key)
            .query_async(&mut fresh.conn())
            .await
            .unwrap();
        if !exists {
            lost.push(id.clone());
        }
        let Some(port) = primary_of(&cluster, &app, id) else {
            continue;
        };
        if *at > killed_at {
            let e = resumed.entry(port).or_insert(*at - killed_at);
            *e = (*e).min(*at - killed_at);
        }
    }
    println!(
        "cluster kill -9 of the primary on {victim}: {} sessions acknowledged, {failed} failed requests, {} lost; promoted {promoted:?}; first acknowledged write after the kill, by primary: {resumed:?}",
        acked.len(),
        lost.len()
    );
    assert!(lost.is_empty(), "acknowledged sessions lost: {lost:?}");
    assert!(acked.len() > 10, "too few writes to tell: {}", acked.len());
    assert_eq!(promoted.len(), 1, "the killed primary's replica took over");
    // Every shard serves again, the killed one's through its promoted replica.
    assert_eq!(resumed.len(), 3, "{resumed:?}");
    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .unwrap();
}
