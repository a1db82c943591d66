//! Job inputs kept once (queue/src/inputs.rs) against a real redis-server: large maps and
//! replays are blobs shared by the jobs that use them, live as long as the longest-lived of
//! those jobs (within a day), leak nothing when their admission never happens, and count
//! against the daily caps.

use std::time::Duration;

use horst_config::{QueueConfig, QuotaConfig};
use horst_queue::*;
use horst_store::Store;
use horst_testkit::RedisServer;
use redis::aio::MultiplexedConnection;
use serde_json::json;
use tokio::sync::watch;

const DAY_MS: i64 = 86_400_000;

struct Setup {
    _redis: RedisServer,
    queue: Queue,
    conn: MultiplexedConnection,
    _stop: watch::Sender<bool>,
}

async fn setup(adjust: impl FnOnce(&mut QueueConfig)) -> Setup {
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url(), "t:").await.unwrap();
    let (tx, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(&store), rx);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    let mut queue = QueueConfig::default();
    adjust(&mut queue);
    let settings = QueueSettings {
        queue,
        quotas: QuotaConfig::default(),
    };
    let conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    Setup {
        _redis: redis,
        queue: Queue::new(store, settings, notifier),
        conn,
        _stop: tx,
    }
}

impl Setup {
    async fn admit(&self, account: &str, key: &str, input: JobInput) -> JobRecord {
        match self.queue.admit(sim(account, key, input)).await {
            Ok(Admission::New(job)) => job,
            other => panic!("expected a new job, got {other:?}"),
        }
    }

    /// Claims the next job, checks it is `id` with `input` whole, and completes it.
    async fn run(&self, id: &str, input: &JobInput) {
        let claim = self.queue.claim("w").await.unwrap().expect("a job waits");
        assert_eq!(claim.record.id, id);
        assert_eq!(
            &claim.record.input, input,
            "the worker gets the whole input"
        );
        let result = JobResult::Referee(RefereeResult::default());
        assert!(self
            .queue
            .complete(id, claim.token, Ok(result))
            .await
            .unwrap());
    }

    async fn blobs(&self) -> Vec<String> {
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg("t:blob:*")
            .query_async(&mut self.conn.clone())
            .await
            .unwrap();
        keys.sort();
        keys
    }

    async fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut self.conn.clone())
            .await
            .unwrap()
    }

    /// As if `ms` had passed for the expiry of `key` (Redis's own clock cannot be moved).
    async fn age(&self, key: &str, ms: i64) {
        let left = self.pttl(key).await;
        assert!(left > ms, "{key} has only {left} ms left");
        let _: () = redis::cmd("PEXPIRE")
            .arg(key)
            .arg(left - ms)
            .query_async(&mut self.conn.clone())
            .await
            .unwrap();
    }
}

fn sim(account: &str, key: &str, input: JobInput) -> JobSpec {
    JobSpec {
        kind: JobKind::Simulate,
        account: account.into(),
        trust: 1,
        idempotency_key: key.into(),
        input,
    }
}

/// A map of `n` bytes (more than a record keeps inline from 1025 on).
fn big_map(fill: char, n: usize) -> String {
    std::iter::repeat_n(fill, n).collect()
}

#[tokio::test]
async fn two_jobs_sharing_a_map_store_one_blob_counted_once() {
    let s = setup(|_| {}).await;
    let map = big_map('#', 4000);
    let a = JobInput::simulate(map.clone(), json!({"seed": 1}));
    let b = JobInput::simulate(map.clone(), json!({"seed": 2}));
    let job_a = s.admit("a", "k1", a.clone()).await;
    let job_b = s.admit("b", "k2", b.clone()).await;
    let blobs = s.blobs().await;
    assert_eq!(blobs.len(), 1, "one blob for one map: {blobs:?}");
    let len: usize = redis::cmd("STRLEN")
        .arg(&blobs[0])
        .query_async(&mut s.conn.clone())
        .await
        .unwrap();
    assert_eq!(len, 4000);
    // The records hold the blob's name, not the map.
    for id in [&job_a.id, &job_b.id] {
        let stored =
            horst_queue::job_fields(&mut s.conn.clone(), &format!("t:job:{id}"), &["input"])
                .await
                .unwrap()
                .pop()
                .flatten()
                .expect("its input");
        assert!(
            stored.len() < 200,
            "the record keeps {} bytes",
            stored.len()
        );
    }
    assert_eq!(s.queue.today().await.unwrap().input_bytes, 4000);
    s.run(&job_a.id, &a).await;
    s.run(&job_b.id, &b).await;
    // A large replay is a blob of its own; the same replay again is not counted again.
    let replay = json!({"seed": 3, "inputs": big_map('R', 2000)});
    let c = JobInput::simulate("small map", replay.clone());
    let job_c = s.admit("a", "k3", c.clone()).await;
    s.run(&job_c.id, &c).await;
    let d = JobInput::simulate("other small map", replay);
    let job_d = s.admit("a", "k4", d.clone()).await;
    s.run(&job_d.id, &d).await;
    assert_eq!(s.blobs().await.len(), 2);
    let counted = s.queue.today().await.unwrap().input_bytes;
    assert!((6000..6100).contains(&counted), "{counted}");
}

/// The blob outlives every job that uses it and goes (within a day) with the last one: a job
/// admitted two days later extends it and counts it again on its own day.
#[tokio::test]
async fn the_blob_lives_until_the_last_job_that_uses_it_expires() {
    let s = setup(|_| {}).await;
    let map = big_map('#', 3000);
    let a = JobInput::simulate(map.clone(), json!({"seed": 1}));
    let job_a = s.admit("a", "k1", a.clone()).await;
    s.run(&job_a.id, &a).await;
    let blob = s.blobs().await.pop().unwrap();
    let record_a = format!("t:job:{}", job_a.id);
    let retention = 7 * DAY_MS;
    let (rec, kept) = (s.pttl(&record_a).await, s.pttl(&blob).await);
    assert!(rec > retention - 60_000, "{rec}");
    assert!(
        kept >= rec,
        "the blob ({kept} ms) must outlive its job ({rec} ms)"
    );
    assert!(
        kept <= rec + DAY_MS + s.queue.settings().input_keep_ms() as i64 - retention + 10_000,
        "kept {kept} ms for a job kept {rec} ms"
    );

    // Two days pass (the queue's clock, and the keys' remaining lives alike).
    s.queue
        .set_clock_offset(Duration::from_millis(2 * DAY_MS as u64), true);
    s.age(&record_a, 2 * DAY_MS).await;
    s.age(&blob, 2 * DAY_MS).await;
    let b = JobInput::simulate(map.clone(), json!({"seed": 2}));
    let job_b = s.admit("b", "k2", b.clone()).await;
    s.run(&job_b.id, &b).await;
    let record_b = format!("t:job:{}", job_b.id);
    assert_eq!(s.blobs().await, vec![blob.clone()], "still one blob");
    let (rec_a, rec_b, kept) = (
        s.pttl(&record_a).await,
        s.pttl(&record_b).await,
        s.pttl(&blob).await,
    );
    assert!(rec_b > rec_a + DAY_MS, "{rec_a} {rec_b}");
    assert!(
        kept >= rec_b,
        "the blob ({kept} ms) must outlive the later job ({rec_b} ms)"
    );
    assert!(kept <= rec_b + DAY_MS + 140_000, "{kept} {rec_b}");
    assert_eq!(
        s.queue.today().await.unwrap().input_bytes,
        3000,
        "counted again on the later day"
    );

    // The first job expires: the blob stays for the second, which still runs whole.
    let _: () = redis::cmd("DEL")
        .arg(&record_a)
        .query_async(&mut s.conn.clone())
        .await
        .unwrap();
    assert_eq!(s.blobs().await, vec![blob.clone()]);
    // Up to the second job's end: what is left of the blob's life is at most a day more.
    s.age(&blob, rec_b - 1_000).await;
    let left = s.pttl(&blob).await;
    assert!(left <= DAY_MS + 141_000, "{left}");
}

/// A blob is written before its admission: if the admission never takes it (the caller
/// crashed, or admission refused), it expires by itself within a minute; nothing counts it.
#[tokio::test]
async fn a_blob_whose_admission_never_happened_expires_by_itself() {
    let s = setup(|q| q.waiting_global = 1).await;
    let first = s
        .admit("a", "k1", JobInput::simulate("small", json!({})))
        .await;
    // The queue is full: the second admission is refused after its blob was written.
    let refused = s
        .queue
        .admit(sim(
            "b",
            "k2",
            JobInput::simulate(big_map('#', 5000), json!({})),
        ))
        .await;
    assert!(
        matches!(refused, Err(QueueError::Busy { .. })),
        "{refused:?}"
    );
    let blob = s.blobs().await.pop().expect("the blob was written first");
    let left = s.pttl(&blob).await;
    assert!(
        (1..=60_000).contains(&left),
        "a provisional blob lives {left} ms"
    );
    assert_eq!(s.queue.today().await.unwrap().input_bytes, 0);
    // Once it is gone (as after its minute), an admission writes it again and takes it.
    let _: () = redis::cmd("DEL")
        .arg(&blob)
        .query_async(&mut s.conn.clone())
        .await
        .unwrap();
    let input = JobInput::simulate(big_map('#', 5000), json!({}));
    s.run(&first.id, &JobInput::simulate("small", json!({})))
        .await;
    let job = s.admit("b", "k2", input.clone()).await;
    assert!(s.pttl(&blob).await > 7 * DAY_MS);
    s.run(&job.id, &input).await;
}

#[tokio::test]
async fn kept_input_past_a_daily_cap_is_refused_and_shared_input_is_not_counted_twice() {
    let s = setup(|q| {
        q.input_bytes_per_account_day = 5000;
        q.input_bytes_per_day = 8000;
    })
    .await;
    let map1 = JobInput::simulate(big_map('1', 3000), json!({}));
    let job = s.admit("a", "k1", map1.clone()).await;
    s.run(&job.id, &map1).await;
    // Another 3000 bytes would pass the account's 5000.
    let refused = s
        .queue
        .admit(sim(
            "a",
            "k2",
            JobInput::simulate(big_map('2', 3000), json!({})),
        ))
        .await;
    match refused {
        Err(QueueError::Quota {
            scope: QuotaScope::InputBytes,
            retry_after_seconds,
            message,
        }) => {
            assert!(retry_after_seconds > 0);
            assert!(message.contains("5000 bytes"), "{message}");
        }
        other => panic!("expected the account's input cap, got {other:?}"),
    }
    // The same map again is kept already: not counted, admitted.
    let again = JobInput::simulate(big_map('1', 3000), json!({"seed": 9}));
    let job = s.admit("a", "k3", again.clone()).await;
    s.run(&job.id, &again).await;
    // Another account fits its own cap, but not the server's 8000.
    let map3 = JobInput::simulate(big_map('3', 3000), json!({}));
    let job = s.admit("b", "k4", map3.clone()).await;
    s.run(&job.id, &map3).await;
    let refused = s
        .queue
        .admit(sim(
            "c",
            "k5",
            JobInput::simulate(big_map('4', 3000), json!({})),
        ))
        .await;
    assert!(
        matches!(
            refused,
            Err(QueueError::Quota {
                scope: QuotaScope::GlobalInputBytes,
                ..
            })
        ),
        "{refused:?}"
    );
    assert_eq!(s.queue.today().await.unwrap().input_bytes, 6000);
    // Nothing refused was kept beyond its provisional minute.
    for blob in s.blobs().await {
        assert!(s.pttl(&blob).await > 0, "{blob} never expires");
    }
}

/// The bytes a simulation with 0.93 MB of input keeps (`MEMORY USAGE`), against the record
/// of before, which held the whole input: `cargo test --workspace -p horst-queue --test
/// inputs -- --nocapture memory` prints the figures of docs/scaling.md.
#[tokio::test]
async fn memory_of_a_large_simulation_is_its_blobs_once_and_a_small_record() {
    let s = setup(|_| {}).await;
    let map = big_map('#', 256 * 1024);
    let replay = json!({"seed": 1, "inputs": big_map('R', 670_000)});
    let input = JobInput::simulate(map.clone(), replay.clone());
    let job = s.admit("a", "k1", input.clone()).await;
    s.run(&job.id, &input).await;
    let usage = |key: String| {
        let mut conn = s.conn.clone();
        async move {
            let n: i64 = redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(&key)
                .arg("SAMPLES")
                .arg(0)
                .query_async(&mut conn)
                .await
                .unwrap();
            n
        }
    };
    let record = usage(format!("t:job:{}", job.id)).await;
    let mut blobs = 0;
    for blob in s.blobs().await {
        blobs += usage(blob).await;
    }
    // The record as it was before: every field of this one, by name (the packed ones too),
    // with the whole input inline.
    let key = format!("t:job:{}", job.id);
    let stored: Vec<String> = redis::cmd("HKEYS")
        .arg(&key)
        .query_async(&mut s.conn.clone())
        .await
        .unwrap();
    let mut names: Vec<&str> = stored
        .iter()
        .map(String::as_str)
        .filter(|k| *k != horst_queue::PACKED_FIELD)
        .collect();
    for packed in horst_queue::PACKED_FIELDS {
        if !names.contains(&packed) {
            names.push(packed);
        }
    }
    let values = horst_queue::job_fields(&mut s.conn.clone(), &key, &names)
        .await
        .unwrap();
    let mut old = redis::cmd("HSET");
    old.arg("t:old-record");
    for (k, v) in names.iter().zip(values) {
        let v = if *k == "input" {
            input.to_value().to_string()
        } else {
            v.unwrap_or_default()
        };
        old.arg(k).arg(v);
    }
    let _: () = old.query_async(&mut s.conn.clone()).await.unwrap();
    let before = usage("t:old-record".into()).await;
    let input_bytes = map.len() + replay.to_string().len();
    println!(
        "input {input_bytes} bytes: record before {before} bytes; now record {record} bytes + blobs {blobs} bytes (once, however many jobs share them)"
    );
    assert!(record < 4096, "the record keeps {record} bytes");
    // The allocator rounds large strings up to its size classes.
    assert!(blobs as usize >= input_bytes && (blobs as usize) < input_bytes * 5 / 4);
    // A second job with the same input costs only its record.
    let again = JobInput::simulate(map, replay);
    let second = s.admit("b", "k2", again.clone()).await;
    s.run(&second.id, &again).await;
    assert_eq!(s.blobs().await.len(), 2);
    let second_record = usage(format!("t:job:{}", second.id)).await;
    println!("a second job with the same input: its record {second_record} bytes, no blob");
    // A small simulation keeps its input inline.
    let small = JobInput::simulate(big_map('#', 600), json!({"seed": 1, "inputs": "RRLL"}));
    let third = s.admit("c", "k3", small.clone()).await;
    s.run(&third.id, &small).await;
    let small_record = usage(format!("t:job:{}", third.id)).await;
    println!("a simulation with 640 bytes of input inline: its record {small_record} bytes");
}
