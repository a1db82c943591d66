//! The queue's scripts against a real redis-server (started per test by the harness).

use std::time::Duration;

use horst_config::{QueueConfig, QuotaConfig};
use horst_queue::*;
use horst_store::Store;
use horst_testkit::RedisServer;
use tokio::sync::watch;

struct Setup {
    redis: RedisServer,
    queue: Queue,
    _stop: watch::Sender<bool>,
}

impl Setup {
    /// A connection of the test's own, to look at and change keys as they are stored.
    async fn raw(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.redis.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap()
    }

    /// Admits `spec`, which must be a new job.
    async fn new_job(&self, spec: JobSpec) -> JobRecord {
        match self.queue.admit(spec).await {
            Ok(Admission::New(job)) => job,
            other => panic!("expected a new job, got {other:?}"),
        }
    }
}

async fn setup_with(adjust: impl FnOnce(&mut QueueSettings)) -> Setup {
    let redis = RedisServer::start();
    let (queue, stop) = queue_on(&redis.url(), adjust).await;
    Setup {
        redis,
        queue,
        _stop: stop,
    }
}

async fn queue_on(
    url: &str,
    adjust: impl FnOnce(&mut QueueSettings),
) -> (Queue, watch::Sender<bool>) {
    let store = Store::connect(url, "t:").await.unwrap();
    let (tx, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(&store), rx);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    let mut settings = QueueSettings {
        queue: QueueConfig::default(),
        quotas: QuotaConfig::default(),
    };
    adjust(&mut settings);
    (Queue::new(store, settings, notifier), tx)
}

fn spec(kind: JobKind, account: &str, trust: u8, key: &str) -> JobSpec {
    JobSpec {
        kind,
        account: account.into(),
        trust,
        idempotency_key: key.into(),
        input: JobInput {
            map: format!("m {key}"),
            ..JobInput::default()
        },
    }
}

/// A referee's result that says only whether the replay won.
fn won(won: bool) -> JobResult {
    JobResult::Referee(RefereeResult {
        won,
        ..RefereeResult::default()
    })
}

fn is_new(a: &Result<Admission, QueueError>) -> bool {
    matches!(a, Ok(Admission::New(_)))
}

#[tokio::test]
async fn fifty_concurrent_admissions_respect_the_waiting_cap() {
    let s = setup_with(|_| {}).await;
    let results = futures_join(
        (0..50)
            .map(|i| {
                let q = s.queue.clone();
                async move {
                    q.admit(spec(JobKind::Simulate, "acct", 1, &format!("k{i}")))
                        .await
                }
            })
            .collect(),
    )
    .await;
    let admitted = results.iter().filter(|r| is_new(r)).count();
    assert_eq!(admitted, 1, "one waiting job per account");
    let waiting = results
        .iter()
        .find_map(|r| match r {
            Ok(Admission::New(rec)) => Some(rec.id.clone()),
            _ => None,
        })
        .unwrap();
    for r in results.iter().filter(|r| !is_new(r)) {
        match r {
            Err(QueueError::Busy {
                retry_after_seconds,
                waiting_job_id,
                message,
            }) => {
                assert!(*retry_after_seconds >= 1);
                // The refusal names the job that is waiting, so the caller can read it.
                assert_eq!(waiting_job_id.as_ref(), Some(&waiting));
                assert!(message.contains(&waiting), "{message}");
            }
            other => panic!("expected busy, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn fifty_concurrent_admissions_respect_the_daily_quota() {
    let s = setup_with(|q| {
        q.queue.waiting_per_account = 100;
        q.queue.waiting_global = 100;
    })
    .await;
    let results = futures_join(
        (0..50)
            .map(|i| {
                let q = s.queue.clone();
                async move {
                    q.admit(spec(JobKind::Playtest, "newbie", 0, &format!("k{i}")))
                        .await
                }
            })
            .collect(),
    )
    .await;
    assert_eq!(
        results.iter().filter(|r| is_new(r)).count(),
        6,
        "trust 0: 6 playtests a day"
    );
    for r in results.iter().filter(|r| !is_new(r)) {
        match r {
            Err(QueueError::Quota {
                scope: QuotaScope::Owner,
                retry_after_seconds,
                ..
            }) => assert!((1..=86_400).contains(retry_after_seconds)),
            other => panic!("expected an owner quota failure, got {other:?}"),
        }
    }
    let left = s.queue.remaining("newbie", 0).await.unwrap();
    assert_eq!(left.playtests, 0);
    assert_eq!(left.simulations, 50);
    // 6 x 20 s reserved out of the trust-0 half (1800 s).
    assert_eq!(left.seconds, 1800 - 120);
}

#[tokio::test]
async fn one_key_sent_twenty_times_at_once_creates_one_job() {
    let s = setup_with(|_| {}).await;
    let results = futures_join(
        (0..20)
            .map(|_| {
                let q = s.queue.clone();
                async move { q.admit(spec(JobKind::Simulate, "acct", 1, "same")).await }
            })
            .collect(),
    )
    .await;
    let mut ids = Vec::new();
    let mut new = 0;
    for r in results {
        match r.unwrap() {
            Admission::New(j) => {
                new += 1;
                ids.push(j.id)
            }
            Admission::Replayed(j) => ids.push(j.id),
        }
    }
    assert_eq!(new, 1);
    ids.dedup();
    assert_eq!(ids.len(), 1, "every caller sees the same job");
    let (jobs, _) = s.queue.list("acct", 0, 25).await.unwrap();
    assert_eq!(jobs.len(), 1);
}

#[tokio::test]
async fn same_key_other_input_is_a_conflict() {
    let s = setup_with(|_| {}).await;
    s.queue
        .admit(spec(JobKind::Simulate, "a", 1, "k"))
        .await
        .unwrap();
    let mut other = spec(JobKind::Simulate, "a", 1, "k");
    other.input.map = "different".into();
    match s.queue.admit(other).await {
        Err(QueueError::Conflict { message }) => assert!(message.contains("fresh idempotencyKey")),
        r => panic!("{r:?}"),
    }
    // Keys are per account: another account may use the same key.
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Simulate, "b", 1, "k")).await
    ));
}

#[tokio::test]
async fn replay_of_a_finished_job_returns_its_result_and_charges_nothing() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let claim = s.queue.claim("w").await.unwrap().unwrap();
    assert_eq!(claim.record.id, job.id);
    assert!(s
        .queue
        .complete(&job.id, claim.token, Ok(won(true)))
        .await
        .unwrap());
    let before = s.queue.remaining("a", 1).await.unwrap();
    match s
        .queue
        .admit(spec(JobKind::Simulate, "a", 1, "k"))
        .await
        .unwrap()
    {
        Admission::Replayed(r) => {
            assert_eq!(r.id, job.id);
            assert_eq!(r.state, JobState::Succeeded);
            assert_eq!(r.result, Some(won(true)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.queue.remaining("a", 1).await.unwrap(), before);
    assert!(
        s.queue.claim("w").await.unwrap().is_none(),
        "nothing runs again"
    );
}

#[tokio::test]
async fn claims_are_fenced_and_reaped_jobs_stay_charged_and_never_rerun() {
    let s = setup_with(|q| q.queue.lease_seconds = 2).await;
    let job = s.new_job(spec(JobKind::Playtest, "a", 1, "k")).await;
    let claim = s.queue.claim("dying-worker").await.unwrap().unwrap();
    assert!(
        s.queue.claim("other").await.unwrap().is_none(),
        "one job, one claim"
    );
    let running = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(running.state, JobState::Running);
    assert_eq!(running.charged_seconds, 20);
    // The worker dies: no heartbeat. Once the lease is over the reaper fails the job.
    let reaped = reaped_by_lease(&s.queue).await;
    assert_eq!(reaped, vec![job.id.clone()]);
    let dead = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(dead.state, JobState::Failed);
    assert_eq!(dead.failure.as_ref().unwrap().code, "cancelled");
    assert_eq!(dead.charged_seconds, 20, "charge kept");
    // The old worker's late result is refused, its heartbeat too; nothing is re-queued.
    assert!(!s
        .queue
        .complete(&job.id, claim.token, Ok(won(false)))
        .await
        .unwrap());
    assert!(!s
        .queue
        .complete_job(&claim.record, claim.token, Ok(won(false)))
        .await
        .unwrap());
    assert_eq!(
        s.queue.get(&job.id).await.unwrap().unwrap().state,
        JobState::Failed
    );
    assert!(!s.queue.heartbeat(&job.id, claim.token).await.unwrap());
    assert!(s.queue.claim("other").await.unwrap().is_none());
    assert_eq!(s.queue.remaining("a", 1).await.unwrap().seconds, 3600 - 20);
}

/// A worker completes with its claim's fields (kind, start, charge, worker), so the
/// completion reads nothing of the record: the job is recorded once, with the claim's
/// figures in the record, the waiter's payload and the day's counts, and a second
/// completion (a retry whose first reply was lost) is refused.
#[tokio::test]
async fn a_completion_with_the_claims_fields_is_recorded_once() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let claim = s.queue.claim("w/0").await.unwrap().unwrap();
    let started = claim.record.started_at_ms.expect("the claim's start");
    let waiter = {
        let q = s.queue.clone();
        let id = job.id.clone();
        tokio::spawn(async move { q.wait(&id, Duration::from_secs(20)).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(s
        .queue
        .complete_job(&claim.record, claim.token, Ok(won(true)))
        .await
        .unwrap());
    assert!(!s
        .queue
        .complete_job(&claim.record, claim.token, Ok(won(false)))
        .await
        .unwrap());
    let told = waiter.await.unwrap().unwrap();
    let stored = s.queue.get(&job.id).await.unwrap().unwrap();
    for r in [&told, &stored] {
        assert_eq!(r.state, JobState::Succeeded);
        assert_eq!(r.result, Some(won(true)), "the first completion's result");
        assert_eq!(r.started_at_ms, Some(started));
        assert_eq!(r.charged_seconds, 5);
        assert_eq!(r.worker.as_deref(), Some("w/0"));
    }
    assert_eq!(s.queue.running_count().await.unwrap(), 0);
    let today = s.queue.today().await.unwrap();
    assert_eq!(today.finished["simulate"]["succeeded"], 1);
}

/// Issue 35 item 5: a claim's reply gives the record's values without their names, and the
/// worker adds what the claim wrote: the claimed record is the stored one. A record is a hash
/// table from its admission (its completion's result would convert it anyway; a listpack
/// until then cost each of the claim's and the completion's reads and writes a scan, and
/// the conversion a copy of every field): its packed field (with the fingerprint's 64 bytes)
/// makes it one, so no record carries the padding field (the previous form's does where its
/// input is short: both_record_forms_are_read_alike).
#[tokio::test]
async fn a_claimed_record_is_the_stored_one_and_a_hash_table_from_its_admission() {
    let s = setup_with(|_| {}).await;
    let small = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let mut long = spec(JobKind::Simulate, "b", 1, "k2");
    long.input.map = "#".repeat(200);
    let long_input = long.input.clone();
    let long = s.new_job(long).await;
    let mut conn = s.raw().await;
    for (job, padded) in [(&small, 0), (&long, 0)] {
        let key = format!("t:job:{}", job.id);
        let encoding: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(encoding, "hashtable", "{key} after its admission");
        let has: u8 = redis::cmd("HEXISTS")
            .arg(&key)
            .arg("_table")
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(has, padded, "{key}: no padding");
    }
    let first = s.queue.claim("w/0").await.unwrap().unwrap();
    assert_eq!(first.record.id, small.id, "the older job first");
    assert!(first.more_waiting);
    let stored = s.queue.get(&small.id).await.unwrap().unwrap();
    assert_eq!(first.record, stored, "the claimed record is the stored one");
    assert_eq!(first.record.state, JobState::Running);
    assert_eq!(first.record.started_at_ms, Some(first.token));
    assert_eq!(first.record.worker.as_deref(), Some("w/0"));
    assert_eq!(first.record.charged_seconds, small.reserved_seconds);
    assert_eq!(first.record.input, small.input);
    let second = s
        .queue
        .complete_and_claim(
            &first.record,
            first.token,
            Ok(won(true)),
            ("w/0", Pool::General),
            true,
        )
        .await
        .unwrap()
        .1
        .expect("the completion claims the next job");
    let mut stored = s.queue.get(&long.id).await.unwrap().unwrap();
    assert_eq!(second.record.input, long_input, "its input read back");
    stored.input = long_input;
    assert_eq!(
        second.record, stored,
        "the claimed record is the stored one"
    );
    assert_eq!(second.record.account, "b");
    assert!(!second.more_waiting);
}

/// The jobs the reaper fails once a lease has run out (within 10 s).
async fn reaped_by_lease(queue: &Queue) -> Vec<String> {
    let mut reaped = Vec::new();
    for _ in 0..100 {
        reaped = queue.reap().await.unwrap();
        if !reaped.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    reaped
}

/// Admits `spec` on `queue`, which must make a new job.
async fn admitted(queue: &Queue, spec: JobSpec) -> JobRecord {
    match queue.admit(spec).await {
        Ok(Admission::New(job)) => job,
        other => panic!("expected a new job, got {other:?}"),
    }
}

/// The packed record's value is made by its caller but for the two clock texts admit.lua
/// puts in (record::packed_parts): it must be the bytes Redis's own `cmsgpack.pack` makes of
/// the 14 values, whatever their lengths (an input under 32 bytes, under 256 and over: a
/// fixstr, str8 and str16), and hold them in PACKED_FIELDS' order.
#[tokio::test]
async fn the_packed_record_is_what_cmsgpack_packs() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    let mut conn = s.raw().await;
    for (n, len) in [1, 100, 900].into_iter().enumerate() {
        let mut job_spec = spec(JobKind::Simulate, "a", 1, &format!("k{n}"));
        job_spec.input.map = "m".repeat(len);
        let job = s.new_job(job_spec).await;
        let packed: Vec<u8> = redis::cmd("HGET")
            .arg(format!("t:job:{}", job.id))
            .arg(PACKED_FIELD)
            .query_async(&mut conn)
            .await
            .unwrap();
        let values: Vec<Vec<u8>> = redis::cmd("EVAL")
            .arg("return {cmsgpack.unpack(ARGV[1])}")
            .arg(0)
            .arg(&packed)
            .query_async(&mut conn)
            .await
            .unwrap();
        let again: Vec<u8> = redis::cmd("EVAL")
            .arg("return cmsgpack.pack(unpack(ARGV))")
            .arg(0)
            .arg(&values)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(packed, again, "input of {len}: as cmsgpack.pack makes it");
        let text: Vec<String> = values
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        assert_eq!(text.len(), PACKED_FIELDS.len(), "{text:?}");
        let at = |name: &str| &text[PACKED_FIELDS.iter().position(|f| *f == name).unwrap()];
        assert_eq!(
            (at("account"), at("idem"), at("id"), at("kind"), at("trust")),
            (
                &"a".to_string(),
                &format!("k{n}"),
                &job.id,
                &"simulate".to_string(),
                &"1".to_string()
            )
        );
        assert!(at("input").contains(&"m".repeat(len)), "{}", at("input"));
        assert_eq!(at("created"), &job.created_at_ms.to_string());
        let reserved = job.reserved_seconds;
        assert_eq!(
            (at("exec_ms"), at("reserved")),
            (&(reserved * 1000).to_string(), &reserved.to_string())
        );
        let deadline: u64 = at("deadline").parse().unwrap();
        assert!(deadline > job.created_at_ms, "{deadline}");
    }
}

/// Issue 35 (the packed record) and its rolling upgrade: a record in the previous release's
/// form (every field by name, as its admit.lua wrote it: written here by a process with
/// `queue.write_previous_forms`) and one in this release's (the fields written once packed
/// into one) are each read by the queue and by the CLI's and gateway's reader
/// (`job_record`), claimed, completed, cancelled while queued, detached, and reaped after
/// a lost lease, alike. The previous form is exactly the previous release's fields, and
/// every value a claim that reads only names (the previous release's: an HMGET of its
/// CLAIM_FIELDS) needs is there.
#[tokio::test]
async fn both_record_forms_are_read_alike() {
    let roomy = |q: &mut QueueSettings| {
        q.queue.lease_seconds = 2;
        q.queue.waiting_per_account = 10;
        q.queue.waiting_global = 20;
    };
    let s = setup_with(roomy).await;
    let (previous, _stop) = queue_on(&s.redis.url(), |q| {
        roomy(q);
        q.queue.write_previous_forms = true;
    })
    .await;
    let store = Store::connect(&s.redis.url(), "t:").await.unwrap();
    let mut conn = s.raw().await;
    // The previous release's admit.lua wrote these (and `_table` with a short input).
    let mut previous_fields = vec![
        "_table", "account", "created", "day", "deadline", "exec_ms", "fp", "id", "idem", "input",
        "kind", "request", "reserved", "state", "trust", "waiter",
    ];
    previous_fields.sort();
    let previous_claim_fields = [
        "state", "account", "day", "idem", "waiter", "deadline", "exec_ms", "reserved", "id",
        "kind", "trust", "input", "created", "request",
    ];
    for (form, admitter, account) in [("named", &previous, "n"), ("packed", &s.queue, "p")] {
        let before = s.queue.remaining(account, 1).await.unwrap();
        let job = admitted(admitter, spec(JobKind::Simulate, account, 1, "k1")).await;
        let key = format!("t:job:{}", job.id);
        let mut stored: Vec<String> = redis::cmd("HKEYS")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        stored.sort();
        if form == "named" {
            assert_eq!(
                stored, previous_fields,
                "{form}: the previous release's fields"
            );
            let values: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(&key)
                .arg(&previous_claim_fields)
                .query_async(&mut conn)
                .await
                .unwrap();
            assert!(
                values.iter().all(Option::is_some),
                "{form}: the previous claim's read finds every value: {values:?}"
            );
        } else {
            assert_eq!(
                stored,
                [PACKED_FIELD, "state"],
                "{form}: state and the packed field"
            );
        }
        let read = s.queue.get(&job.id).await.unwrap().expect("the record");
        assert_eq!(read, job, "{form}: read as admitted");
        assert_eq!(read.input, job.input, "{form}");
        let cli = job_record(&store, &job.id).await.unwrap();
        assert_eq!(
            cli.as_ref(),
            Some(&read),
            "{form}: the CLI's and gateway's reader"
        );

        // Claimed and completed.
        let claim = s.queue.claim("w/0").await.unwrap().expect("a claim");
        assert_eq!(claim.record.id, job.id, "{form}");
        assert_eq!(claim.record.input, job.input, "{form}");
        let running = s.queue.get(&job.id).await.unwrap().unwrap();
        assert_eq!(
            claim.record, running,
            "{form}: the claimed record is the stored one"
        );
        assert!(s
            .queue
            .complete_job(&claim.record, claim.token, Ok(won(true)))
            .await
            .unwrap());
        let done = s.queue.get(&job.id).await.unwrap().unwrap();
        assert_eq!(done.state, JobState::Succeeded, "{form}");
        assert_eq!(done.result, Some(won(true)), "{form}");
        assert_eq!((done.charged_seconds, done.account.as_str()), (5, account));

        // Cancelled while queued: released.
        let job = admitted(admitter, spec(JobKind::Simulate, account, 1, "k2")).await;
        assert_eq!(
            s.queue.cancel(&job.id, "flooding").await.unwrap(),
            CancelOutcome::Dropped,
            "{form}"
        );
        let r = s.queue.get(&job.id).await.unwrap().unwrap();
        assert_eq!(r.state, JobState::Cancelled, "{form}");
        assert_eq!(
            s.queue.remaining(account, 1).await.unwrap().seconds,
            before.seconds - 5,
            "{form}: only the completed job's seconds"
        );

        // Detached: the waiter named over the packed one.
        let job = match admitter
            .admit_for_caller(spec(JobKind::Simulate, account, 1, "k3"))
            .await
        {
            Ok(Admission::New(job)) => job,
            other => panic!("{form}: {other:?}"),
        };
        let key = format!("t:job:{}", job.id);
        let waiter = job_fields(&mut conn, &key, &["waiter"]).await.unwrap();
        assert!(
            waiter[0].as_deref().is_some_and(|w| !w.is_empty()),
            "{form}: {waiter:?}"
        );
        assert!(admitter.detach(&job.id).await.unwrap(), "{form}");
        let waiter = job_fields(&mut conn, &key, &["waiter"]).await.unwrap();
        assert_eq!(waiter, [Some(String::new())], "{form}: detached");
        assert_eq!(
            s.queue.cancel(&job.id, "tidy").await.unwrap(),
            CancelOutcome::Dropped,
            "{form}"
        );

        // Reaped after a lost lease: failed, charged.
        let job = admitted(admitter, spec(JobKind::Simulate, account, 1, "k4")).await;
        let claim = s.queue.claim("dying").await.unwrap().expect("a claim");
        assert_eq!(claim.record.id, job.id, "{form}");
        let reaped = reaped_by_lease(&s.queue).await;
        assert_eq!(reaped, vec![job.id.clone()], "{form}");
        let dead = s.queue.get(&job.id).await.unwrap().unwrap();
        assert_eq!(dead.state, JobState::Failed, "{form}");
        assert_eq!(dead.failure.as_ref().unwrap().code, "cancelled", "{form}");
        assert_eq!(dead.charged_seconds, 5, "{form}: charge kept");
    }
}

/// A claim writes no `token` field: its token is the record's `started` (one field less a
/// job for Redis to convert and append to its AOF), and the heartbeat, the progress and the
/// completion by id fence on it all the same. A record with a `token` field (a hand-off, or a
/// claim of an earlier version) is fenced by that field.
#[tokio::test]
async fn a_claims_token_is_its_start_and_every_check_fences_on_it() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let claim = s.queue.claim("w/0").await.unwrap().unwrap();
    assert_eq!(claim.record.id, job.id);
    let key = format!("t:job:{}", job.id);
    let mut conn = s.raw().await;
    let (token, started): (Option<String>, Option<u64>) = redis::cmd("HMGET")
        .arg(&key)
        .arg("token")
        .arg("started")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(token, None, "no token field written by the claim");
    assert_eq!(started, Some(claim.token), "the token is the start");
    let progress = JobProgress {
        elapsed_seconds: 0.5,
        states_explored: 3,
        best_distance: None,
        stage: 0,
        peak_memory_mib: None,
    };
    let stale = claim.token + 1;
    assert!(!s.queue.heartbeat(&job.id, stale).await.unwrap());
    assert!(!s
        .queue
        .report_progress(&job.id, stale, &progress)
        .await
        .unwrap());
    assert!(!s
        .queue
        .complete(&job.id, stale, Ok(won(true)))
        .await
        .unwrap());
    assert!(s.queue.heartbeat(&job.id, claim.token).await.unwrap());
    assert!(s
        .queue
        .report_progress(&job.id, claim.token, &progress)
        .await
        .unwrap());
    // A `token` field, where there is one, is the token (an earlier version's claim).
    let _: () = redis::cmd("HSET")
        .arg(&key)
        .arg("token")
        .arg(stale)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!s.queue.heartbeat(&job.id, claim.token).await.unwrap());
    assert!(!s
        .queue
        .complete(&job.id, claim.token, Ok(won(true)))
        .await
        .unwrap());
    assert!(s
        .queue
        .complete(&job.id, stale, Ok(won(true)))
        .await
        .unwrap());
    let done = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(done.state, JobState::Succeeded);
}

/// Issue 35 item 4: time nobody saw Redis (here its clock moves on 15 s between two
/// housekeeping rounds, as over a 15 s SIGSTOP) does not count against a lease: a job whose
/// worker heartbeats again after the stall keeps it; a job whose worker is gone is reaped,
/// but only once a whole lease has passed after the stall.
#[tokio::test]
async fn a_stall_of_redis_reaps_no_lease_until_a_lease_after_it() {
    let s = setup_with(|q| q.queue.lease_seconds = 2).await;
    let alive = s.new_job(spec(JobKind::Simulate, "a", 1, "1")).await;
    let dead = s.new_job(spec(JobKind::Simulate, "b", 1, "2")).await;
    let a = s.queue.claim("living").await.unwrap().unwrap();
    assert_eq!(a.record.id, alive.id);
    let _d = s.queue.claim("dying").await.unwrap().unwrap();
    assert!(s.queue.reap().await.unwrap().is_empty());
    s.queue.set_clock_offset(Duration::from_secs(15), true);
    // Both leases are long over by the server's clock, but nobody saw it pass.
    assert!(
        s.queue.reap().await.unwrap().is_empty(),
        "a lease was reaped right after a stall"
    );
    assert!(s.queue.heartbeat(&a.record.id, a.token).await.unwrap());
    let mut reaped = Vec::new();
    for _ in 0..100 {
        assert!(s.queue.heartbeat(&a.record.id, a.token).await.unwrap());
        reaped = s.queue.reap().await.unwrap();
        if !reaped.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(reaped, vec![dead.id.clone()], "the dead worker's job");
    assert!(s
        .queue
        .complete(&a.record.id, a.token, Ok(won(true)))
        .await
        .unwrap());
    let kept = s.queue.get(&alive.id).await.unwrap().unwrap();
    assert_eq!(kept.state, JobState::Succeeded);
    let gone = s.queue.get(&dead.id).await.unwrap().unwrap();
    assert_eq!(gone.failure.unwrap().code, "cancelled");
}

#[tokio::test]
async fn heartbeats_keep_a_lease_alive() {
    let s = setup_with(|q| q.queue.lease_seconds = 2).await;
    s.queue
        .admit(spec(JobKind::Simulate, "a", 1, "k"))
        .await
        .unwrap();
    let claim = s.queue.claim("w").await.unwrap().unwrap();
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(s
            .queue
            .heartbeat(&claim.record.id, claim.token)
            .await
            .unwrap());
        assert!(s.queue.reap().await.unwrap().is_empty());
    }
    assert!(s
        .queue
        .complete(&claim.record.id, claim.token, Ok(won(false)))
        .await
        .unwrap());
}

#[tokio::test]
async fn a_caller_that_leaves_drops_its_queued_job_and_its_reservation() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Playtest, "a", 0, "k")).await;
    assert_eq!(s.queue.remaining("a", 0).await.unwrap().seconds, 1800 - 20);
    assert_eq!(s.queue.remaining("a", 0).await.unwrap().playtests, 5);
    // The handler's future is dropped while waiting: its guard drops the job.
    let guard = s.queue.cancel_guard(&job.id);
    let waiting = tokio::spawn({
        let q = s.queue.clone();
        let id = job.id.clone();
        async move {
            let _guard = guard;
            q.wait(&id, Duration::from_secs(60)).await
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    waiting.abort();
    let mut state = JobState::Queued;
    for _ in 0..50 {
        state = s.queue.get(&job.id).await.unwrap().unwrap().state;
        if state != JobState::Queued {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state, JobState::Cancelled);
    let left = s.queue.remaining("a", 0).await.unwrap();
    assert_eq!(left.seconds, 1800, "reservation released");
    assert_eq!(left.playtests, 6, "the call that never ran is not counted");
    assert!(
        s.queue.claim("w").await.unwrap().is_none(),
        "the job is gone from the queue"
    );
    // A retry with the same key starts afresh (nothing ran).
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "a", 0, "k")).await
    ));
}

/// Sends `signal` (`-STOP`, `-CONT`) to the test's redis-server.
fn signal_redis(redis: &RedisServer, signal: &str) {
    let pid = redis
        .pid()
        .expect("the test's redis-server runs")
        .to_string();
    let status = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

/// A caller that goes away while its admission script is in flight (Redis frozen, so the
/// script was sent but has not answered) leaves no job to run or charge: once Redis answers,
/// the admission sees nobody is waiting and drops the job. Before, the dropped future never
/// learned the job's id, so the job stayed queued, ran and was charged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_leaves_during_its_admission_leaves_no_job_to_run_or_charge() {
    let s = setup_with(|_| {}).await;
    // Loads the admission script and the quotas' copy: the next admission's first Redis
    // command is the script itself.
    s.new_job(spec(JobKind::Simulate, "warm", 1, "w")).await;
    signal_redis(&s.redis, "-STOP");
    let admitting = tokio::spawn({
        let q = s.queue.clone();
        async move {
            q.admit_for_caller(spec(JobKind::Playtest, "a", 0, "k"))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    admitting.abort();
    signal_redis(&s.redis, "-CONT");
    assert_only_the_warm_up_job_is_left(&s).await;
}

/// What a caller that left during its admission leaves (account "a", trust 0, one playtest):
/// its job dropped, nothing reserved or counted, only the warm-up job (account "warm") to run.
async fn assert_only_the_warm_up_job_is_left(s: &Setup) {
    let mut jobs = Vec::new();
    for _ in 0..200 {
        jobs = s.queue.list("a", 0, 10).await.unwrap().0;
        if jobs.first().is_some_and(|j| j.state != JobState::Queued) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(jobs.len(), 1, "the script ran once Redis woke: one job");
    assert_eq!(jobs[0].state, JobState::Cancelled, "and it was dropped");
    let left = s.queue.remaining("a", 0).await.unwrap();
    assert_eq!(left.seconds, 1800, "reservation released");
    assert_eq!(left.playtests, 6, "the call that never ran is not counted");
    let claimed = s.queue.claim("w").await.unwrap().unwrap();
    assert_eq!(
        claimed.record.account, "warm",
        "only the warm-up job is left to run"
    );
    assert!(s.queue.claim("w").await.unwrap().is_none());
}

/// A waker that tells the test its future was woken.
#[derive(Default)]
struct Woken(tokio::sync::Notify);

impl std::task::Wake for Woken {
    fn wake(self: std::sync::Arc<Self>) {
        // A permit: the test may ask after the wake-up.
        self.0.notify_one();
    }
}

/// A caller that goes away just as its admission answers (the answer sent, the handler's
/// future dropped before it ran again to read it) leaves no job to run or charge either. The
/// admission's future is polled by hand: the oneshot's send wakes it, and it is then dropped
/// unpolled, so the answer is never read. Before, only a failed send dropped the job: this
/// one stayed queued, as it did about once in 50 runs of the test above on a loaded machine
/// when the abort took effect only after the answer was sent.
#[tokio::test]
async fn a_caller_that_leaves_as_its_admission_answers_leaves_no_job_to_run_or_charge() {
    use std::future::Future;
    let s = setup_with(|_| {}).await;
    s.new_job(spec(JobKind::Simulate, "warm", 1, "w")).await;
    let woken = std::sync::Arc::new(Woken::default());
    let waker = std::task::Waker::from(woken.clone());
    let mut admitting = Box::pin(
        s.queue
            .admit_for_caller(spec(JobKind::Playtest, "a", 0, "k")),
    );
    // One thread: the admission task cannot run before this test's task waits below.
    let first = admitting
        .as_mut()
        .poll(&mut std::task::Context::from_waker(&waker));
    assert!(first.is_pending());
    tokio::time::timeout(Duration::from_secs(30), woken.0.notified())
        .await
        .expect("the admission answered");
    drop(admitting);
    assert_only_the_warm_up_job_is_left(&s).await;
}

#[tokio::test]
async fn a_started_job_is_not_dropped_and_stays_charged() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let claim = s.queue.claim("w").await.unwrap().unwrap();
    drop(s.queue.cancel_guard(&job.id));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        s.queue.get(&job.id).await.unwrap().unwrap().state,
        JobState::Running
    );
    assert!(s
        .queue
        .complete(&job.id, claim.token, Ok(won(false)))
        .await
        .unwrap());
    assert_eq!(s.queue.remaining("a", 1).await.unwrap().seconds, 3600 - 5);
}

#[tokio::test]
async fn wait_wakes_on_completion() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let waiter = tokio::spawn({
        let q = s.queue.clone();
        let id = job.id.clone();
        async move { q.wait(&id, Duration::from_secs(30)).await }
    });
    let claim = s.queue.claim("w").await.unwrap().unwrap();
    assert!(s
        .queue
        .complete(
            &job.id,
            claim.token,
            Err(Failure::new(FailureCode::ValidationFailed, "no"))
        )
        .await
        .unwrap());
    let done = waiter.await.unwrap().unwrap();
    assert_eq!(done.state, JobState::Failed);
    assert_eq!(done.failure.unwrap().code, "validation_failed");
}

#[tokio::test]
async fn a_job_that_cannot_start_in_time_times_out_and_is_released() {
    let s = setup_with(|q| q.queue.wait_seconds = 1).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    // Nobody claims it: the wait runs out and the job is dropped with `timeout`.
    let r = s
        .queue
        .wait(&job.id, Duration::from_millis(300))
        .await
        .unwrap();
    assert_eq!(r.state, JobState::Failed);
    assert_eq!(r.failure.unwrap().code, "timeout");
    assert_eq!(s.queue.remaining("a", 1).await.unwrap().seconds, 3600);

    // A job whose 5 s execution can no longer fit in its 1 s wait is failed at claim time.
    let late = s.new_job(spec(JobKind::Simulate, "a", 1, "k2")).await;
    assert!(s.queue.claim("w").await.unwrap().is_none());
    let r = s.queue.get(&late.id).await.unwrap().unwrap();
    assert_eq!(r.failure.unwrap().code, "timeout");
    assert_eq!(s.queue.remaining("a", 1).await.unwrap().seconds, 3600);
}

#[tokio::test]
async fn the_global_queue_holds_eight_waiting_jobs() {
    let s = setup_with(|_| {}).await;
    for i in 0..8 {
        assert!(is_new(
            &s.queue
                .admit(spec(JobKind::Simulate, &format!("a{i}"), 1, "k"))
                .await
        ));
    }
    match s.queue.admit(spec(JobKind::Simulate, "a8", 1, "k")).await {
        Err(QueueError::Busy { message, .. }) => assert!(message.contains("queue is full")),
        r => panic!("{r:?}"),
    }
    // Starting one frees a place.
    s.queue.claim("w").await.unwrap().unwrap();
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Simulate, "a8", 1, "k")).await
    ));
}

#[tokio::test]
async fn trust0_accounts_share_half_of_the_seconds() {
    let s = setup_with(|q| {
        q.queue.daily_seconds = 100; // trust-0 half: 50 s
        q.queue.waiting_per_account = 100;
        q.queue.waiting_global = 100;
    })
    .await;
    // Two trust-0 playtests (40 s) fit in the half, a third (60 s) does not.
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "n1", 0, "a")).await
    ));
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "n2", 0, "a")).await
    ));
    match s.queue.admit(spec(JobKind::Playtest, "n3", 0, "a")).await {
        Err(QueueError::Quota {
            scope: QuotaScope::GlobalNew,
            ..
        }) => {}
        r => panic!("{r:?}"),
    }
    // A trust-0 account sees the smaller remainder: 10 s of the half.
    assert_eq!(s.queue.remaining("n3", 0).await.unwrap().seconds, 10);
    // Trusted accounts use the rest of the server's budget.
    assert_eq!(s.queue.remaining("t", 1).await.unwrap().seconds, 60);
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "t", 1, "a")).await
    ));
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "t", 1, "b")).await
    ));
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "t", 1, "c")).await
    ));
    match s.queue.admit(spec(JobKind::Simulate, "t", 1, "d")).await {
        Err(QueueError::Quota {
            scope: QuotaScope::Global,
            ..
        }) => {}
        r => panic!("{r:?}"),
    }
}

#[tokio::test]
async fn quotas_reset_at_the_utc_day_boundary() {
    let s = setup_with(|q| {
        q.queue.waiting_per_account = 100;
        q.quotas.trust0.submissions = 1;
    })
    .await;
    // Move the scripts' clock to 2 s before the next UTC midnight.
    let now = s.queue.now_ms().await.unwrap();
    let to_midnight = 86_400_000 - now % 86_400_000;
    s.queue
        .set_clock_offset(Duration::from_millis(to_midnight - 2_000), true);
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Submit, "a", 0, "1")).await
    ));
    match s.queue.admit(spec(JobKind::Submit, "a", 0, "2")).await {
        Err(QueueError::Quota {
            scope: QuotaScope::Owner,
            retry_after_seconds,
            ..
        }) => assert!(
            retry_after_seconds <= 3,
            "resets in about 2 s, said {retry_after_seconds}"
        ),
        r => panic!("{r:?}"),
    }
    // 3 s later it is a new UTC day.
    s.queue
        .set_clock_offset(Duration::from_millis(to_midnight + 1_000), true);
    assert_eq!(s.queue.remaining("a", 0).await.unwrap().submissions, 1);
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Submit, "a", 0, "2")).await
    ));
}

#[tokio::test]
async fn everything_survives_a_redis_restart_from_its_aof() {
    let mut s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    let done = s.new_job(spec(JobKind::Simulate, "a", 1, "1")).await;
    let c = s.queue.claim("w").await.unwrap().unwrap();
    s.queue
        .complete(&done.id, c.token, Ok(won(true)))
        .await
        .unwrap();
    let waiting = s.new_job(spec(JobKind::Playtest, "a", 1, "2")).await;
    let before = s.queue.remaining("a", 1).await.unwrap();

    // A crash (SIGKILL) after the AOF's once-a-second fsync.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    s.redis.kill();
    s.redis.start_again();
    // The connection manager reconnects on its own.
    let mut after = None;
    for _ in 0..50 {
        if let Ok(r) = s.queue.remaining("a", 1).await {
            after = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(after, Some(before), "budgets and daily counts survive");
    let rec = s.queue.get(&done.id).await.unwrap().unwrap();
    assert_eq!(rec.result, Some(won(true)));
    // The queued job is still queued, and a worker carries on with it.
    let claim = s.queue.claim("w2").await.unwrap().unwrap();
    assert_eq!(claim.record.id, waiting.id);
    // Idempotency records survive too.
    assert!(matches!(
        s.queue
            .admit(spec(JobKind::Simulate, "a", 1, "1"))
            .await
            .unwrap(),
        Admission::Replayed(_)
    ));
}

#[tokio::test]
async fn the_delayed_set_fires_each_entry_once() {
    let s = setup_with(|_| {}).await;
    let d = s.queue.delayed();
    let now = s.queue.now_ms().await.unwrap();
    d.schedule("ses_1:turn:3:gen:1", now - 10).await.unwrap();
    d.schedule("ses_2:turn:1:gen:1", now + 60_000)
        .await
        .unwrap();
    d.schedule("ses_3:turn:1:gen:1", now - 5).await.unwrap();
    assert!(d.cancel("ses_3:turn:1:gen:1").await.unwrap());
    // Many pollers at once: the due entry is handed out exactly once.
    let popped = futures_join(
        (0..10)
            .map(|_| {
                let d = d.clone();
                async move { d.pop_due(10).await.unwrap() }
            })
            .collect(),
    )
    .await;
    let all: Vec<_> = popped.into_iter().flatten().collect();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].0, "ses_1:turn:3:gen:1");
    assert_eq!(d.next_due().await.unwrap(), Some(now + 60_000));
    // Rescheduling moves it.
    d.schedule("ses_2:turn:1:gen:1", now - 1).await.unwrap();
    assert_eq!(d.pop_due(10).await.unwrap().len(), 1);
}

/// A leased pop keeps what it took until the taker acks it: nobody else gets it meanwhile, it
/// comes due again a lease later if never acked, and an ack leaves an entry scheduled again
/// since (a new time) in place.
#[tokio::test]
async fn delayed_entries_taken_with_a_lease_come_back_unless_acked() {
    let s = setup_with(|_| {}).await;
    let d = s.queue.delayed();
    let now = s.queue.now_ms().await.unwrap();
    d.schedule("a", now - 10).await.unwrap();
    d.schedule("b", now - 5).await.unwrap();
    let first = d.pop_due_in(&[0], 10).await.remove(0).unwrap();
    let taken: Vec<&str> = first.due.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(taken, ["a", "b"]);
    assert_eq!(first.due[0].1, now - 10, "the entry's own due time");
    assert!(first.lease >= now + 9_000, "{first:?}");
    assert_eq!(
        first.next,
        Some(first.lease),
        "the leased entries are what comes next"
    );
    // Held: another poller finds nothing.
    assert!(d
        .pop_due_in(&[0], 10)
        .await
        .remove(0)
        .unwrap()
        .due
        .is_empty());
    // b is scheduled again meanwhile; the ack removes a, not the new b.
    d.schedule("b", now + 60_000).await.unwrap();
    assert_eq!(
        d.ack(0, first.lease, &["a".to_string(), "b".to_string()])
            .await
            .unwrap(),
        1
    );
    assert_eq!(d.next_due().await.unwrap(), Some(now + 60_000));
    // Never acked: due again a lease later, for anyone.
    d.schedule("c", now - 1).await.unwrap();
    let held = d.pop_due_in(&[0], 10).await.remove(0).unwrap();
    assert_eq!(held.due.len(), 1);
    s.queue.set_clock_offset(Duration::from_secs(11), true);
    let again = d.pop_due_in(&[0], 10).await.remove(0).unwrap();
    assert_eq!(again.due, vec![("c".to_string(), held.lease)]);
    // The stale lease acks nothing; the current one removes it.
    assert_eq!(d.ack(0, held.lease, &["c".to_string()]).await.unwrap(), 0);
    assert_eq!(d.ack(0, again.lease, &["c".to_string()]).await.unwrap(), 1);
}

/// A job left queued past its deadline for days (no worker ran) is timed out by the first
/// claim; its day's counts have expired meanwhile, and the release counts nothing into
/// them (it made a hash of negative counts that never expired).
#[tokio::test]
async fn a_job_released_after_its_days_counts_expired_leaves_no_counts_behind() {
    let s = setup_with(|_| {}).await;
    let mut conn = s.raw().await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let day = s.queue.now_ms().await.unwrap() / 86_400_000;
    let budget = format!("t:budget:{day}");
    // The day's counts expire (three days on), and the first claim comes a day later.
    let _: () = redis::cmd("DEL")
        .arg(&budget)
        .query_async(&mut conn)
        .await
        .unwrap();
    s.queue
        .set_clock_offset(Duration::from_secs(4 * 86_400), true);
    assert!(s.queue.claim("w/0").await.unwrap().is_none());
    let rec = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Failed);
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&budget)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(exists, 0, "the released job recreated its day's counts");
}

/// Runs futures concurrently on the current runtime and collects their outputs in order.
async fn futures_join<F: std::future::Future + Send + 'static>(futs: Vec<F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn today_counts_jobs_by_kind_and_outcome_and_the_seconds() {
    let s = setup_with(|q| q.queue.lease_seconds = 2).await;
    let ok = s.new_job(spec(JobKind::Simulate, "a", 1, "1")).await;
    let c = s.queue.claim("w").await.unwrap().unwrap();
    assert_eq!(c.record.id, ok.id);
    s.queue
        .complete(&ok.id, c.token, Ok(won(false)))
        .await
        .unwrap();
    let dropped = s.new_job(spec(JobKind::Playtest, "a", 1, "2")).await;
    s.queue
        .cancel_queued(
            &dropped.id,
            JobState::Cancelled,
            FailureCode::Cancelled,
            "left",
        )
        .await
        .unwrap();
    let today = s.queue.today().await.unwrap();
    assert_eq!(today.admitted.get("simulate"), Some(&1));
    assert_eq!(today.admitted.get("playtest"), Some(&1));
    assert_eq!(today.finished["simulate"].get("succeeded"), Some(&1));
    assert_eq!(today.finished["playtest"].get("cancelled"), Some(&1));
    assert_eq!(
        today.seconds_used, 5,
        "the dropped playtest's 20 s were given back"
    );
    assert_eq!(today.seconds_charged, 5);
}

/// Admission pops an idle slot only while the pool's idle mark in `queue:fair` is not '0'
/// (an admission that found none sets it; every registration sets it back in its own step).
/// Whichever way a slot registers, by the idle look (`Queue::idle`) or by its completion, the
/// next admission wakes it; and with none registered no admission pops.
#[tokio::test]
async fn an_idle_slot_is_woken_after_admissions_found_none() {
    let s = setup_with(|_| {}).await;
    let mut raw = s.raw().await;
    async fn mark(raw: &mut redis::aio::MultiplexedConnection) -> Option<String> {
        fair_hash(raw).await.remove("idle:general")
    }
    async fn pops(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(raw)
            .await
            .unwrap();
        horst_testkit::command_calls(&info)
            .get("zpopmax")
            .copied()
            .unwrap_or(0)
    }
    // No slot registered: the first admission pops none and says so; the next does not pop.
    let first = s.new_job(spec(JobKind::Simulate, "a", 1, "1")).await;
    assert_eq!(mark(&mut raw).await.as_deref(), Some("0"));
    let before = pops(&mut raw).await;
    s.new_job(spec(JobKind::Simulate, "b", 1, "2")).await;
    assert_eq!(pops(&mut raw).await, before, "a pop with the mark at '0'");
    // A slot takes both jobs; its completion finds nothing waiting and registers it idle.
    let c1 = s
        .queue
        .claim_slot("w/0", Pool::General, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c1.record.id, first.id);
    let (_, next) = s
        .queue
        .complete_and_claim(
            &c1.record,
            c1.token,
            Ok(won(true)),
            ("w/0", Pool::General),
            c1.more_waiting,
        )
        .await
        .unwrap();
    let c2 = next.expect("the second job, claimed with the completion");
    let (done, _) = s
        .queue
        .complete_and_claim(
            &c2.record,
            c2.token,
            Ok(won(true)),
            ("w/0", Pool::General),
            c2.more_waiting,
        )
        .await
        .unwrap();
    assert_eq!(done, Completion::Idle);
    assert_eq!(
        mark(&mut raw).await.as_deref(),
        Some("1"),
        "set by the completion"
    );
    let mut woken = s.queue.slot_wake("w/0");
    s.new_job(spec(JobKind::Simulate, "c", 1, "3")).await;
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the slot registered by its completion is woken");
    // Popped (and handed the job, nothing else waiting): the next admission finds none and
    // clears the mark again.
    s.new_job(spec(JobKind::Simulate, "d", 1, "4")).await;
    assert_eq!(mark(&mut raw).await.as_deref(), Some("0"));
    // A slot that registers by the idle look sees the job waiting (claims it)...
    assert!(s.queue.idle("w/1", Pool::General).await.unwrap());
    assert_eq!(
        mark(&mut raw).await.as_deref(),
        Some("1"),
        "set by the idle look"
    );
    s.queue
        .claim_slot("w/1", Pool::General, true)
        .await
        .unwrap()
        .unwrap();
    // ...and, with nothing waiting, is registered and woken by the next admission.
    let _ = s.new_job(spec(JobKind::Simulate, "e", 1, "5")).await;
    s.queue
        .claim_slot("w/9", Pool::General, false)
        .await
        .unwrap()
        .unwrap();
    let mut woken = s.queue.slot_wake("w/2");
    assert!(!s.queue.idle("w/2", Pool::General).await.unwrap());
    s.new_job(spec(JobKind::Simulate, "f", 1, "6")).await;
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the slot registered by the idle look is woken");
}

/// The day's charge is kept in `queue:fair` (the claim writes it with the turns, no command
/// of its own); what an earlier version's claims counted in the day's budget hash adds to
/// it, and the fair sweep drops the charges of days long past.
#[tokio::test]
async fn the_days_charge_adds_an_earlier_versions_count_and_old_days_are_dropped() {
    let s = setup_with(|_| {}).await;
    let day = s.queue.now_ms().await.unwrap() / 86_400_000;
    let mut raw = s.raw().await;
    // An earlier version's claim of today: 20 s in the budget hash.
    let _: () = redis::cmd("HINCRBY")
        .arg(format!("t:budget:{day}"))
        .arg("charged")
        .arg(20)
        .query_async(&mut raw)
        .await
        .unwrap();
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let claim = s.queue.claim("w").await.unwrap().unwrap();
    assert_eq!(claim.record.id, job.id);
    assert_eq!(s.queue.today().await.unwrap().seconds_charged, 20 + 5);
    let budget_charged: Option<u64> = redis::cmd("HGET")
        .arg(format!("t:budget:{day}"))
        .arg("charged")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(
        budget_charged,
        Some(20),
        "the claim left the budget hash alone"
    );
    // Old days' charges and finished counts go with the sweep's first round of a day; the
    // last four days' stay.
    let old_days = |raw: &mut redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            for back in [3, 4, 10, 33] {
                let _: () = redis::cmd("HSET")
                    .arg("t:queue:fair")
                    .arg(format!("charged:{}", day - back))
                    .arg(7)
                    .arg(format!("done:{}:playtest:failed", day - back))
                    .arg(2)
                    .query_async(&mut raw)
                    .await
                    .unwrap();
            }
        }
    };
    let day_fields = |raw: &mut redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            let mut left: Vec<String> = redis::cmd("HKEYS")
                .arg("t:queue:fair")
                .query_async::<Vec<String>>(&mut raw)
                .await
                .unwrap()
                .into_iter()
                .filter(|f| f.starts_with("charged:") || f.starts_with("done:"))
                .collect();
            left.sort();
            left
        }
    };
    // A round today already dropped what was old: nothing more is dropped until tomorrow.
    for _ in 0..3 {
        s.queue.sweep_fair().await.unwrap();
    }
    old_days(&mut raw).await;
    for _ in 0..3 {
        s.queue.sweep_fair().await.unwrap();
    }
    assert_eq!(
        day_fields(&mut raw).await.len(),
        9,
        "dropped twice in a day"
    );
    // The first round of a new day (the last one swept is yesterday).
    let _: () = redis::cmd("HSET")
        .arg("t:queue:fair")
        .arg("days_swept")
        .arg(day - 1)
        .query_async(&mut raw)
        .await
        .unwrap();
    for _ in 0..3 {
        s.queue.sweep_fair().await.unwrap();
    }
    let mut want = vec![
        format!("charged:{}", day - 3),
        format!("charged:{day}"),
        format!("done:{}:playtest:failed", day - 3),
    ];
    want.sort();
    assert_eq!(day_fields(&mut raw).await, want);
}

/// A slot's completion counts its job among the day's finished in `queue:fair`, in the write
/// of it that the completion makes anyway (the busy path: with its claim of the next job;
/// the idle one: with its registration); what the budget hash counts (an earlier version's
/// completions, a completion without a slot) adds to it.
#[tokio::test]
async fn the_days_finished_jobs_are_counted_in_queue_fair_and_add_the_budget_hashs() {
    let s = setup_with(|_| {}).await;
    let day = s.queue.now_ms().await.unwrap() / 86_400_000;
    let mut raw = s.raw().await;
    let finished = |s: &Setup| {
        let queue = s.queue.clone();
        async move {
            queue
                .today()
                .await
                .unwrap()
                .finished
                .get("simulate")
                .and_then(|m| m.get("succeeded"))
                .copied()
                .unwrap_or(0)
        }
    };
    // An earlier version's completion of today.
    let _: () = redis::cmd("HINCRBY")
        .arg(format!("t:budget:{day}"))
        .arg("done:simulate:succeeded")
        .arg(10)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(finished(&s).await, 10);
    for account in ["a", "b", "c"] {
        s.new_job(spec(JobKind::Simulate, account, 1, "k")).await;
    }
    let slot = ("w/0", Pool::General);
    // The slot completes `c` and claims its next job, with or without the look first.
    let complete = |c: Claim, others_waited: bool| {
        let queue = s.queue.clone();
        async move {
            queue
                .complete_and_claim(&c.record, c.token, Ok(won(true)), slot, others_waited)
                .await
                .unwrap()
        }
    };
    let c1 = s
        .queue
        .claim_slot(slot.0, slot.1, false)
        .await
        .unwrap()
        .unwrap();
    assert!(c1.more_waiting);
    // The busy path: the count rides on the claim of the next job.
    let (_, c2) = complete(c1, true).await;
    let c2 = c2.expect("claimed with the completion");
    assert_eq!(finished(&s).await, 11);
    // The completion that looks first (its claim saw another waiting: the third job).
    let (_, c3) = complete(c2, false).await;
    let c3 = c3.expect("the third job, claimed after the look");
    assert_eq!(finished(&s).await, 12);
    // The idle path: nothing waits, the slot registers, and the count rides on the mark.
    let (done, none) = complete(c3, false).await;
    assert_eq!((done, none.is_none()), (Completion::Idle, true));
    assert_eq!(finished(&s).await, 13);
    let fair = fair_hash(&mut raw).await;
    assert_eq!(
        fair.get(&format!("done:{day}:simulate:succeeded"))
            .map(String::as_str),
        Some("3")
    );
    assert_eq!(fair.get("idle:general").map(String::as_str), Some("1"));
    // A completion without a slot counts in the budget hash. (The job is handed to the slot
    // its completion registered idle: it runs under that slot's claim.)
    s.new_job(spec(JobKind::Simulate, "d", 1, "k")).await;
    let c4 = s.queue.recover_claim("w/0", &[], 0).await.unwrap().unwrap();
    assert!(s
        .queue
        .complete_job(&c4.record, c4.token, Ok(won(true)))
        .await
        .unwrap());
    assert_eq!(finished(&s).await, 14);
}

/// A claim whose answer the slot never got (Redis ran it after the call gave up) is found by
/// that slot's look, with the claim's token and the job's input; not by another slot, not
/// when it is the job the slot says it holds, and not once the job ended.
#[tokio::test]
async fn a_claim_whose_answer_was_lost_is_found_by_its_slot() {
    let s = setup_with(|_| {}).await;
    assert!(s
        .queue
        .recover_claim("w/0", &[], 0)
        .await
        .unwrap()
        .is_none());
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    // Claimed, and the answer dropped.
    let lost = s
        .queue
        .claim_slot("w/0", Pool::General, false)
        .await
        .unwrap()
        .unwrap();
    assert!(
        s.queue
            .recover_claim("w/1", &[], 0)
            .await
            .unwrap()
            .is_none(),
        "another slot's"
    );
    assert!(
        s.queue
            .recover_claim("w/0", &[job.id.as_str()], 0)
            .await
            .unwrap()
            .is_none(),
        "the job the slot holds"
    );
    let found = s
        .queue
        .recover_claim("w/0", &[], 0)
        .await
        .unwrap()
        .expect("the claim");
    assert_eq!(found.record.id, job.id);
    assert_eq!(found.token, lost.token);
    assert_eq!(found.record.input, lost.record.input);
    assert_eq!(found.record.started_at_ms, lost.record.started_at_ms);
    assert_eq!(found.record.charged_seconds, lost.record.charged_seconds);
    // Run with what was found: recorded once, and then there is nothing to find.
    let done = s
        .queue
        .complete_slot(
            &found.record,
            found.token,
            Ok(won(true)),
            Some(("w/0", Pool::General)),
        )
        .await
        .unwrap();
    assert_ne!(done, Completion::Refused);
    let rec = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Succeeded);
    assert!(s
        .queue
        .recover_claim("w/0", &[], 0)
        .await
        .unwrap()
        .is_none());
}

/// A job the slot gave up recording (Redis away past its patience) still runs under the
/// slot's name until it is reaped; a lost claim made after it is the one a look finds, never
/// the given-up job (the look took the oldest lease first: that job ran twice and the lost
/// claim was reaped).
#[tokio::test]
async fn a_look_for_a_lost_claim_never_returns_a_job_the_slot_gave_up_on() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    let given_up = s.new_job(spec(JobKind::Simulate, "a", 1, "k1")).await;
    let known = s
        .queue
        .claim_slot("w/0", Pool::General, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(known.record.id, given_up.id);
    let later = s.new_job(spec(JobKind::Simulate, "b", 1, "k2")).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let lost = s
        .queue
        .claim_slot("w/0", Pool::General, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lost.record.id, later.id);
    assert!(lost.token > known.token);
    let found = s
        .queue
        .recover_claim("w/0", &[known.record.id.as_str()], known.token)
        .await
        .unwrap()
        .expect("the lost claim");
    assert_eq!(found.record.id, later.id);
    // Once the slot knows that claim too, there is nothing lost to find.
    assert!(s
        .queue
        .recover_claim("w/0", &[lost.record.id.as_str()], lost.token)
        .await
        .unwrap()
        .is_none());
}

/// A lost claim made in the same millisecond as the slot's previous one (a trivial job:
/// claimed, run and completed with the next claim within one ms) has that claim's token: the
/// look finds it by its id, not by a newer token (it was skipped and reaped after its lease).
#[tokio::test]
async fn a_lost_claim_in_the_millisecond_of_the_slots_last_claim_is_found() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    s.new_job(spec(JobKind::Simulate, "a", 1, "k1")).await;
    s.new_job(spec(JobKind::Simulate, "b", 1, "k2")).await;
    let slot = ("w/0", Pool::General);
    let known = s
        .queue
        .claim_slot(slot.0, slot.1, false)
        .await
        .unwrap()
        .unwrap();
    // The completion claims the next job; its answer is lost.
    let (_, lost) = s
        .queue
        .complete_and_claim(&known.record, known.token, Ok(won(true)), slot, true)
        .await
        .unwrap();
    let lost = lost.expect("the next job, claimed with the completion");
    // Redis's clock gave both claims the same millisecond, as it does for a trivial job.
    let mut raw = s.raw().await;
    let _: () = redis::cmd("HSET")
        .arg(format!("t:job:{}", lost.record.id))
        .arg("token")
        .arg(known.token)
        .query_async(&mut raw)
        .await
        .unwrap();
    let found = s
        .queue
        .recover_claim(slot.0, &[known.record.id.as_str()], known.token)
        .await
        .unwrap()
        .expect("the lost claim of the same millisecond");
    assert_eq!(
        (found.record.id.as_str(), found.token),
        (lost.record.id.as_str(), known.token)
    );
}

/// Moves `queue`'s clock on from `from` s to `to` s a second at a time, with a housekeeping
/// round at each (as every process runs once a second): no stall is seen.
async fn advance_with_housekeeping(queue: &Queue, from: u64, to: u64) {
    for t in from + 1..=to {
        queue.set_clock_offset(Duration::from_secs(t), true);
        queue.reap().await.unwrap();
    }
}

/// A stall of Redis (its clock moves on 15 s between two housekeeping rounds, as over a 15 s
/// SIGSTOP) lapses every presence, the live API processes' too, whose callers may have
/// been answered `pending` meanwhile: no queued job is dropped as an orphan, by the sweep or
/// by a claim, until a whole presence has passed after the stall. Then a process that is
/// still missing is gone, and its jobs are dropped.
#[tokio::test]
async fn a_stall_of_redis_drops_no_orphan_until_a_presence_after_it() {
    let s = setup_with(|_| {}).await;
    let Ok(Admission::New(first)) = s
        .queue
        .admit_for_caller(spec(JobKind::Simulate, "ann", 1, "a"))
        .await
    else {
        panic!("not admitted")
    };
    let Ok(Admission::New(second)) = s
        .queue
        .admit_for_caller(spec(JobKind::Simulate, "bob", 1, "b"))
        .await
    else {
        panic!("not admitted")
    };
    // A housekeeping round notes the clock; then the stall, over which the presence lapsed.
    assert!(s.queue.reap().await.unwrap().is_empty());
    let presence = format!("t:callers:{}", s.queue.process_id());
    let mut conn = s.queue.store().conn();
    let _: () = redis::cmd("DEL")
        .arg(&presence)
        .query_async(&mut conn)
        .await
        .unwrap();
    s.queue.set_clock_offset(Duration::from_secs(15), true);
    assert!(
        s.queue.drop_orphans().await.unwrap().is_empty(),
        "the sweep dropped a job of a process that lived through the stall"
    );
    let claim = s
        .queue
        .claim("w")
        .await
        .unwrap()
        .expect("the first job runs");
    assert_eq!(claim.record.id, first.id);
    // A presence's life after the stall, the process is still missing: it is gone.
    advance_with_housekeeping(&s.queue, 15, 26).await;
    assert_eq!(
        s.queue.drop_orphans().await.unwrap(),
        vec![second.id.clone()]
    );
    let rec = s.queue.get(&second.id).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Cancelled);
}

/// A queued job whose caller's API process is gone is dropped and released, by the sweep of
/// any process or by the claim that finds it first; a job with a live waiter, or none,
/// is left alone.
#[tokio::test]
async fn orphans_of_a_dead_api_process_are_dropped_by_the_sweep_and_by_claim() {
    let s = setup_with(|_| {}).await;
    let (other, _stop) = queue_on(&s.redis.url(), |_| {}).await;
    let before = s.queue.remaining("ann", 1).await.unwrap();
    let tied = |key: &str| spec(JobKind::Simulate, "ann", 1, key);
    let Ok(Admission::New(swept)) = s.queue.admit_for_caller(tied("a")).await else {
        panic!("not admitted")
    };
    // Alive (the admission itself refreshed the presence): nothing is dropped.
    assert!(other.drop_orphans().await.unwrap().is_empty());
    let presence = format!("t:callers:{}", s.queue.process_id());
    let mut conn = s.queue.store().conn();
    let _: () = redis::cmd("DEL")
        .arg(&presence)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(other.drop_orphans().await.unwrap(), vec![swept.id.clone()]);
    let rec = other.get(&swept.id).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Cancelled);
    assert_eq!(rec.failure.unwrap().code, "cancelled");
    assert_eq!(
        s.queue.remaining("ann", 1).await.unwrap(),
        before,
        "released"
    );

    // The claim that meets an orphan first drops it too, then takes the next job.
    let Ok(Admission::New(claimed_orphan)) = s.queue.admit_for_caller(tied("b")).await else {
        panic!("not admitted")
    };
    let _: () = redis::cmd("DEL")
        .arg(&presence)
        .query_async(&mut conn)
        .await
        .unwrap();
    // Its presence lapsed (a claim looks for it only once it may have: a presence lives
    // at least 5 s after an admission that refreshed it), the housekeeping looking on.
    advance_with_housekeeping(&other, 0, 6).await;
    let untied = other
        .admit(spec(JobKind::Simulate, "bob", 1, "c"))
        .await
        .unwrap();
    let Admission::New(untied) = untied else {
        panic!()
    };
    let claim = other.claim("w").await.unwrap().expect("the untied job");
    assert_eq!(claim.record.id, untied.id);
    let rec = other.get(&claimed_orphan.id).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Cancelled);
    assert!(rec.started_at_ms.is_none());
    let after = s.queue.remaining("ann", 1).await.unwrap();
    assert_eq!(after.simulations, before.simulations, "released");
    // The server's seconds: only bob's running job is charged.
    assert_eq!(after.seconds, before.seconds - 5);
}

/// One idempotency key never gets two jobs: a replay whose record reads back empty starts a
/// new job only when the script sees the record really gone (it expired before its key).
#[tokio::test]
async fn a_replay_whose_record_cannot_be_read_never_starts_a_second_job() {
    let s = setup_with(|q| {
        q.queue.waiting_per_account = 10;
        q.queue.waiting_global = 10;
    })
    .await;
    let first = s.new_job(spec(JobKind::Simulate, "acct", 1, "k")).await;
    let client = redis::Client::open(s.redis.url()).unwrap();
    let mut raw = client.get_multiplexed_async_connection().await.unwrap();
    let record = format!("t:job:{}", first.id);
    // The record is there but unreadable (as a read that came back wrong would be): no kind,
    // in either form.
    let _: i64 = redis::cmd("HDEL")
        .arg(&record)
        .arg("kind")
        .arg(PACKED_FIELD)
        .query_async(&mut raw)
        .await
        .unwrap();
    match s.queue.admit(spec(JobKind::Simulate, "acct", 1, "k")).await {
        Err(QueueError::Unavailable(message)) => {
            assert!(message.contains("retry with the same key"), "{message}")
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
    let waiting: Vec<String> = redis::cmd("ZRANGE")
        .arg("t:queue:lane:referee")
        .arg(0)
        .arg(-1)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(waiting, vec![first.id.clone()], "no second job");
    // Gone for real (expired before its key): the key counts as new.
    let _: i64 = redis::cmd("DEL")
        .arg(&record)
        .query_async(&mut raw)
        .await
        .unwrap();
    let again = s.new_job(spec(JobKind::Simulate, "acct", 1, "k")).await;
    assert_ne!(again.id, first.id);
}

#[tokio::test]
async fn referee_work_keeps_its_places_and_its_own_slots() {
    let s = setup_with(|_| {}).await;
    // Six playtests take the places that are not kept for referee work.
    for i in 0..6 {
        s.new_job(spec(JobKind::Playtest, &format!("p{i}"), 1, "k"))
            .await;
    }
    match s.queue.admit(spec(JobKind::Playtest, "p6", 1, "k")).await {
        Err(QueueError::Busy { message, .. }) => {
            assert!(message.contains("kept for simulations"), "{message}")
        }
        r => panic!("{r:?}"),
    }
    // The last two places are for simulations and submissions.
    let sim = s.new_job(spec(JobKind::Simulate, "s0", 1, "k")).await;
    s.new_job(spec(JobKind::Submit, "s1", 1, "k")).await;
    match s.queue.admit(spec(JobKind::Simulate, "s2", 1, "k")).await {
        Err(QueueError::Busy { message, .. }) => assert!(message.contains("queue is full")),
        r => panic!("{r:?}"),
    }
    assert_eq!(s.queue.lane_depth(Lane::Planner).await.unwrap().0, 6);
    assert_eq!(s.queue.lane_depth(Lane::Referee).await.unwrap().0, 2);
    // A referee slot takes referee work although the playtests waited longer; a general
    // slot takes the job that has waited longest.
    let r = s
        .queue
        .claim_for("w/r0", Pool::Referee)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.record.id, sim.id);
    let g = s.queue.claim("w/0").await.unwrap().unwrap();
    assert_eq!(g.record.kind, JobKind::Playtest);
    assert_eq!(g.record.account, "p0");
}

#[tokio::test]
async fn waiting_accounts_take_turns_within_a_lane() {
    let s = setup_with(|q| {
        q.queue.waiting_per_account = 3;
        q.queue.waiting_global = 100;
    })
    .await;
    for k in ["a1", "a2", "a3"] {
        s.new_job(spec(JobKind::Simulate, "a", 1, k)).await;
    }
    s.new_job(spec(JobKind::Simulate, "b", 1, "b1")).await;
    s.new_job(spec(JobKind::Simulate, "c", 1, "c1")).await;
    let mut order = Vec::new();
    while let Some(c) = s.queue.claim("w").await.unwrap() {
        order.push(format!("{}:{}", c.record.account, c.record.idempotency_key));
        if order.len() == 2 {
            // An account that arrives now gets the next round's turn, after b and c.
            s.new_job(spec(JobKind::Simulate, "d", 1, "d1")).await;
        }
    }
    assert_eq!(order, ["a:a1", "b:b1", "c:c1", "a:a2", "d:d1", "a:a3"]);
}

#[tokio::test]
async fn a_job_that_could_not_start_in_time_is_refused_at_once_with_the_wait_that_fits() {
    let s = setup_with(|_| {}).await;
    // One live worker with one general slot; a playtest takes 20 s at most (+1 s slack).
    s.queue
        .announce_slots("w", 1, 0, Duration::from_secs(600))
        .await
        .unwrap();
    s.new_job(spec(JobKind::Playtest, "a", 1, "k")).await;
    s.queue.claim("w/0").await.unwrap().unwrap();
    s.new_job(spec(JobKind::Playtest, "b", 1, "k")).await;
    // c would start after a (running) and b: at 42 s, ending at 63 s > its 60 s wait.
    match s.queue.admit(spec(JobKind::Playtest, "c", 1, "k")).await {
        Err(QueueError::Busy {
            retry_after_seconds,
            message,
            ..
        }) => {
            assert_eq!(retry_after_seconds, 3, "{message}");
            assert!(message.contains("1 job(s) ahead"), "{message}");
        }
        r => panic!("{r:?}"),
    }
    // Nothing was charged or queued.
    assert_eq!(s.queue.remaining("c", 1).await.unwrap().playtests, 20);
    assert_eq!(s.queue.lane_depth(Lane::Planner).await.unwrap().0, 1);
    // After retryAfterSeconds it fits exactly.
    s.queue.set_clock_offset(Duration::from_secs(3), true);
    s.new_job(spec(JobKind::Playtest, "c", 1, "k")).await;
    // Referee work does not wait behind playtests: with a referee slot it is admitted.
    s.queue
        .announce_slots("w", 1, 1, Duration::from_secs(600))
        .await
        .unwrap();
    s.new_job(spec(JobKind::Simulate, "d", 1, "k")).await;
    // Without any live worker nothing is known, and the job waits (as before).
    s.queue.retire_slots("w").await.unwrap();
    s.new_job(spec(JobKind::Playtest, "e", 1, "k")).await;
}

/// Admission sums the live slots once and keeps the sum in `queue:fair` (admit.lua): a worker
/// whose announcement lapses stops counting when it lapses, a new one counts at once, and
/// the running jobs' ends are read only when the bound from the latest end is not in time.
#[tokio::test]
async fn the_kept_sum_of_slots_follows_the_workers_that_come_and_go() {
    let late = |r: Result<Admission, QueueError>| match r {
        Err(QueueError::Busy { message, .. }) => assert!(message.contains("in time"), "{message}"),
        r => panic!("not refused as late: {r:?}"),
    };
    // One worker of one slot, a playtest running on it and one waiting: the sum is kept.
    let busy = |live_for: Duration| async move {
        let s = setup_with(|_| {}).await;
        s.queue.announce_slots("w", 1, 0, live_for).await.unwrap();
        s.new_job(spec(JobKind::Playtest, "a", 1, "k")).await;
        s.queue.claim("w/0").await.unwrap().unwrap();
        s.new_job(spec(JobKind::Playtest, "b", 1, "k")).await;
        s
    };
    let s = busy(Duration::from_secs(600)).await;
    // c would end at 63 s, after its 60 s wait.
    late(s.queue.admit(spec(JobKind::Playtest, "c", 1, "k")).await);
    // A second worker counts at once: its slot frees now, so c starts after b, in time.
    s.queue
        .announce_slots("v", 1, 0, Duration::from_secs(600))
        .await
        .unwrap();
    s.new_job(spec(JobKind::Playtest, "c", 1, "k")).await;
    // It stops: with one slot again d would be late.
    s.queue.retire_slots("v").await.unwrap();
    late(s.queue.admit(spec(JobKind::Playtest, "d", 1, "k")).await);
    // The refusal kept the sum it made again (a flood of refusals reads the slots once).
    let mut conn = s.raw().await;
    let fair = fair_hash(&mut conn).await;
    assert!(
        fair.get("cap").is_some_and(|c| c.starts_with("1 0 ")),
        "{fair:?}"
    );

    // A worker that stops announcing counts no longer than its last announcement said: then
    // no live worker is known and the job waits (claim times it out if it must), as with no
    // worker at all.
    let s = busy(Duration::from_secs(1)).await;
    late(s.queue.admit(spec(JobKind::Playtest, "c", 1, "k")).await);
    // (1.5 s on, one slot would still make c late: 63 s against 61.5.)
    s.queue.set_clock_offset(Duration::from_millis(1_500), true);
    s.new_job(spec(JobKind::Playtest, "c", 1, "k")).await;
}

/// The running jobs' ends (`queue:ends:<pool>`) and the fencing token counter (`fence`) of
/// earlier versions are deleted when a process starts: nothing reads them now.
#[tokio::test]
async fn the_running_ends_and_the_fence_of_an_earlier_version_are_deleted() {
    let s = setup_with(|_| {}).await;
    let mut conn = s.raw().await;
    // An admission with a live worker keeps the pool's latest end.
    s.queue
        .announce_slots("w", 1, 0, Duration::from_secs(600))
        .await
        .unwrap();
    s.new_job(spec(JobKind::Playtest, "a", 1, "k")).await;
    assert!(fair_hash(&mut conn).await.contains_key("end:general"));
    for pool in ["general", "referee"] {
        let _: () = redis::cmd("ZADD")
            .arg(format!("t:queue:ends:{pool}"))
            .arg(1)
            .arg("job_0123456789abcdef")
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let _: () = redis::cmd("SET")
        .arg("t:fence")
        .arg(7)
        .query_async(&mut conn)
        .await
        .unwrap();
    s.queue.drop_old_keys().await.unwrap();
    let mut left: Vec<String> = redis::cmd("KEYS")
        .arg("t:queue:ends:*")
        .query_async(&mut conn)
        .await
        .unwrap();
    let fence: Option<String> = redis::cmd("GET")
        .arg("t:fence")
        .query_async(&mut conn)
        .await
        .unwrap();
    left.extend(fence);
    assert!(left.is_empty(), "{left:?}");
    // Admission's kept latest ends are made again from the running jobs (a worker of the
    // earlier version claims without raising them).
    assert!(fair_hash(&mut conn)
        .await
        .keys()
        .all(|f| !f.starts_with("end:")));
}

/// The start-in-time check with several slots that free far apart (admit.lua plays the first
/// steps out and counts the rest): every admission agrees with the plain model, each job ahead
/// taking the slot that frees first for its whole limit.
#[tokio::test]
async fn the_start_in_time_check_agrees_with_the_model_when_slots_free_far_apart() {
    let s = setup_with(|q| {
        q.queue.simulate_seconds = 4;
        q.queue.waiting_global = 100;
    })
    .await;
    // Three general slots and no referee slot: referee work uses the general ones.
    s.queue
        .announce_slots("w", 3, 0, Duration::from_secs(600))
        .await
        .unwrap();
    // The scripts' clock stands still from the first claim on: before each call the offset
    // takes back the real time that passed. The model below counts from one instant; half a
    // second the machine took for the claims and 27 admissions (under load) admitted one job
    // more than it. Only one call's own time now counts, against a margin of 500 ms.
    let claimed = std::time::Instant::now();
    let clock_at = |queue: &Queue, ms: i64| {
        let ms = ms - claimed.elapsed().as_millis() as i64;
        queue.set_clock_offset(Duration::from_millis(ms.unsigned_abs()), ms >= 0);
    };
    for (i, slot) in ["w/0", "w/1"].iter().enumerate() {
        s.new_job(spec(JobKind::Playtest, &format!("p{i}"), 1, "k"))
            .await;
        clock_at(&s.queue, 0);
        s.queue.claim(slot).await.unwrap().unwrap();
    }
    // Half a second later (the scripts' clock): the two slots free at 20.5 s (a playtest's
    // 20 s and the 1 s slack), the third now; a simulation takes 5 s with its slack and its
    // caller waits 60 s. Whole seconds never fall on a boundary of the refusal's rounding.
    let late = |ahead: u64| -> i64 {
        let mut at = [0i64, 20_500, 20_500];
        for _ in 0..ahead {
            at[0] += 5_000;
            at.sort();
        }
        at[0] + 5_000 - 60_000
    };
    let mut admitted = 0u64;
    loop {
        clock_at(&s.queue, 500);
        match s
            .queue
            .admit(spec(JobKind::Simulate, &format!("s{admitted}"), 1, "k"))
            .await
        {
            Ok(Admission::New(_)) => {
                assert!(late(admitted) <= 0, "admitted with {admitted} ahead");
                admitted += 1;
            }
            Err(QueueError::Busy {
                retry_after_seconds,
                message,
                ..
            }) => {
                let expected = late(admitted);
                assert!(expected > 0, "refused with {admitted} ahead: {message}");
                assert_eq!(
                    retry_after_seconds,
                    ((expected + 999) / 1000) as u64,
                    "{message}"
                );
                assert!(
                    message.contains(&format!("{admitted} job(s) ahead")),
                    "{message}"
                );
                break;
            }
            r => panic!("{r:?}"),
        }
        assert!(admitted < 100, "never refused");
    }
    // Starts by 55 s: 0, 5, .. 20 s on the free slot (5), then 20.5, 25.5, .. 50.5 s on the
    // other two (14) and 25, 30, .. 55 s on the first (7).
    assert_eq!(admitted, 26);
}

/// Turns between accounts hold across refusals: an account refused for want of room keeps
/// its turn until it comes back, so an account whose job just ended cannot call again at once
/// and take the place first (with ten accounts flooding, only three ever got a playtest).
#[tokio::test]
async fn a_refused_account_keeps_its_turn_until_it_comes_back() {
    let s = setup_with(|_| {}).await;
    s.queue
        .announce_slots("w", 1, 0, Duration::from_secs(600))
        .await
        .unwrap();
    let a1 = s.new_job(spec(JobKind::Playtest, "a", 1, "k1")).await;
    let claim = s.queue.claim("w/0").await.unwrap().unwrap();
    s.new_job(spec(JobKind::Playtest, "b", 1, "k")).await;
    // c would end at 63 s, after its 60 s wait: told to come back in 3 s.
    match s.queue.admit(spec(JobKind::Playtest, "c", 1, "k")).await {
        Err(QueueError::Busy {
            retry_after_seconds,
            ..
        }) => assert_eq!(retry_after_seconds, 3),
        r => panic!("{r:?}"),
    }
    // A second later a's job ends, b starts, and a calls again at once.
    s.queue.set_clock_offset(Duration::from_secs(1), true);
    assert!(s
        .queue
        .complete(&a1.id, claim.token, Ok(won(true)))
        .await
        .unwrap());
    s.queue.claim("w/0").await.unwrap().unwrap();
    // Alone, a would fit (b ends at 22 s, a at 43 s); but c's turn comes first.
    match s.queue.admit(spec(JobKind::Playtest, "a", 1, "k2")).await {
        Err(QueueError::Busy {
            retry_after_seconds,
            message,
            ..
        }) => {
            assert!(message.contains("1 job(s) ahead"), "{message}");
            assert_eq!(retry_after_seconds, 3, "{message}");
        }
        r => panic!("a took the place c was told to come back for: {r:?}"),
    }
    // c comes back when it was told to and gets the place.
    s.queue.set_clock_offset(Duration::from_secs(3), true);
    s.new_job(spec(JobKind::Playtest, "c", 1, "k")).await;
    // a was told to come back at 4 s and does not. Within the grace its turn still counts:
    // at 13 s d would start after b (ends 22 s), c and a, ending at 85 s > 73 s.
    s.queue.set_clock_offset(Duration::from_secs(13), true);
    match s.queue.admit(spec(JobKind::Playtest, "d", 1, "k")).await {
        Err(QueueError::Busy { message, .. }) => {
            assert!(message.contains("2 job(s) ahead"), "{message}")
        }
        r => panic!("{r:?}"),
    }
    // After the grace it holds no place: at 19 s d fits behind b and c (ends 64 s < 79 s).
    s.queue.set_clock_offset(Duration::from_secs(19), true);
    s.new_job(spec(JobKind::Playtest, "d", 1, "k")).await;
}

/// `HMGET` and `HGETALL` calls the server counted so far.
async fn record_reads(queue: &Queue) -> (u64, u64) {
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut queue.store().conn())
        .await
        .unwrap();
    let calls = |cmd: &str| -> u64 {
        let prefix = format!("cmdstat_{cmd}:calls=");
        stats
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|v| v.split(',').next()?.parse().ok())
            .unwrap_or(0)
    };
    (calls("hmget"), calls("hgetall"))
}

/// The gauges' source: every lane and kind listed, waiting jobs counted by lane and kind, and
/// the age of each one's longest wait on the queue's clock; each waiting record read once
/// (one `HMGET` of two fields; the sampler read every record three times, whole).
#[tokio::test]
async fn waiting_jobs_are_counted_by_lane_and_kind_reading_each_once() {
    let s = setup_with(|_| {}).await;
    s.new_job(spec(JobKind::Playtest, "a", 1, "k")).await;
    s.queue.set_clock_offset(Duration::from_secs(2), true);
    s.new_job(spec(JobKind::Simulate, "b", 1, "k")).await;
    s.new_job(spec(JobKind::Playtest, "c", 1, "k")).await;
    s.queue.set_clock_offset(Duration::from_secs(5), true);
    let before = record_reads(&s.queue).await;
    let gauges = s.queue.waiting_gauges().await.unwrap();
    let after = record_reads(&s.queue).await;
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (3, 0),
        "one HMGET a record"
    );
    assert_eq!(gauges.total().0, 3);
    assert_eq!(
        gauges.lanes.iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(),
        [(Lane::Planner, 2), (Lane::Referee, 1)]
    );
    let kinds = gauges.kinds;
    let of = |k: JobKind| {
        kinds
            .iter()
            .find(|(kind, _, _)| *kind == k)
            .copied()
            .unwrap()
    };
    let (_, n, age) = of(JobKind::Playtest);
    assert_eq!(n, 2);
    assert!((5_000..6_000).contains(&age.unwrap()), "{age:?}");
    let (_, n, age) = of(JobKind::Simulate);
    assert_eq!(n, 1);
    assert!((3_000..4_000).contains(&age.unwrap()), "{age:?}");
    assert_eq!(of(JobKind::Submit), (JobKind::Submit, 0, None));
    assert_eq!(of(JobKind::Recheck), (JobKind::Recheck, 0, None));
}

/// Redis refuses a script at maxmemory only at its first write, and only if that write may
/// grow memory: admission must not write anything else first (dropping a dead worker's slot,
/// stale owed turns), or a full Redis would let it through.
#[tokio::test]
async fn admission_is_refused_at_maxmemory_even_with_a_dead_workers_slot_to_drop() {
    let s = setup_with(|_| {}).await;
    s.queue
        .announce_slots("w", 1, 0, Duration::from_secs(1))
        .await
        .unwrap();
    // The worker's announcement lapses: its slot is dead, and admission would drop it.
    s.queue.set_clock_offset(Duration::from_secs(30), true);
    let mut conn = redis::Client::open(s.redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    set_maxmemory(&mut conn, "1").await;
    let refused = s.queue.admit(spec(JobKind::Playtest, "a", 1, "k")).await;
    set_maxmemory(&mut conn, "0").await;
    assert!(
        matches!(refused, Err(QueueError::Unavailable(_))),
        "admitted past maxmemory: {refused:?}"
    );
    // With memory free again it is admitted (and nothing of the refused call was kept).
    s.new_job(spec(JobKind::Playtest, "a", 1, "k")).await;
}

/// Admission takes an idempotency key's first use and reads its earlier one in one command,
/// so a refusal must give the key back: the key of a refused call is free for any input.
#[tokio::test]
async fn a_refused_admission_leaves_its_key_unused() {
    let s = setup_with(|q| q.queue.waiting_per_account = 1).await;
    s.new_job(spec(JobKind::Simulate, "a", 1, "k1")).await;
    let refused = s.queue.admit(spec(JobKind::Simulate, "a", 1, "k2")).await;
    assert!(
        matches!(refused, Err(QueueError::Busy { .. })),
        "the account's one waiting place is taken: {refused:?}"
    );
    let mut raw = s.raw().await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("t:*idem:a:k2")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(keys.is_empty(), "the refused call kept its key: {keys:?}");
    // Its place frees: the same key with other input is a new job, not a conflict.
    s.queue.claim("w").await.unwrap().unwrap();
    let mut other = spec(JobKind::Simulate, "a", 1, "k2");
    other.input.map = "other".into();
    s.new_job(other).await;
}

/// A replayed call needs no room: at maxmemory admission still answers it (the key's
/// combined take-and-read is refused there, and the key is read instead), while a new key is
/// refused as unavailable.
#[tokio::test]
async fn a_replayed_call_is_answered_at_maxmemory() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let mut conn = s.raw().await;
    set_maxmemory(&mut conn, "1").await;
    let replayed = s.queue.admit(spec(JobKind::Simulate, "a", 1, "k")).await;
    let fresh = s
        .queue
        .admit(spec(JobKind::Simulate, "b", 1, "k-new"))
        .await;
    set_maxmemory(&mut conn, "0").await;
    match replayed {
        Ok(Admission::Replayed(r)) => assert_eq!(r.id, job.id),
        other => panic!("a replay at maxmemory: {other:?}"),
    }
    assert!(
        matches!(fresh, Err(QueueError::Unavailable(_))),
        "a new job at maxmemory: {fresh:?}"
    );
    // Nothing of the refused call was kept: with room again it is a new job.
    s.new_job(spec(JobKind::Simulate, "b", 1, "k-new")).await;
}

/// A caller waiting for job `id` (up to 30 s), as a blocking call waits.
fn waiting_caller(
    queue: &Queue,
    id: &str,
) -> tokio::task::JoinHandle<Result<JobRecord, QueueError>> {
    let (q, id) = (queue.clone(), id.to_string());
    tokio::spawn(async move { q.wait(&id, Duration::from_secs(30)).await })
}

/// What the waiting caller was told, within 5 s.
async fn told(waiter: tokio::task::JoinHandle<Result<JobRecord, QueueError>>) -> JobRecord {
    tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the caller is told")
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn an_operator_cancels_a_queued_job_released_or_a_running_one_charged() {
    let s = setup_with(|_| {}).await;
    let before = s.queue.remaining("a", 1).await.unwrap();
    let queued = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    assert_eq!(
        s.queue.cancel(&queued.id, "flooding").await.unwrap(),
        CancelOutcome::Dropped
    );
    let r = s.queue.get(&queued.id).await.unwrap().unwrap();
    assert_eq!(r.state, JobState::Cancelled);
    let f = r.failure.unwrap();
    assert_eq!(f.code, FailureCode::Cancelled);
    assert!(f.message.contains("flooding"), "{}", f.message);
    assert_eq!(s.queue.remaining("a", 1).await.unwrap(), before, "released");

    let job = s.new_job(spec(JobKind::Playtest, "b", 1, "k")).await;
    let claim = s.queue.claim("w/0").await.unwrap().unwrap();
    let waiter = waiting_caller(&s.queue, &job.id);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut worker_hears = s.queue.subscribe_done(&job.id);
    assert_eq!(
        s.queue.cancel(&job.id, "stuck map").await.unwrap(),
        CancelOutcome::Stopped
    );
    // The waiting caller and the worker are told at once (not by the 1 s re-read).
    tokio::time::timeout(Duration::from_millis(900), worker_hears.changed())
        .await
        .expect("the worker's wake-up");
    let done = told(waiter).await;
    assert_eq!(done.state, JobState::Cancelled);
    assert!(done.failure.unwrap().message.contains("stays charged"));
    // Started work stays charged; the worker's late completion is refused.
    assert_eq!(
        s.queue.remaining("b", 1).await.unwrap().seconds,
        before.seconds - 20
    );
    assert!(!s
        .queue
        .complete(&job.id, claim.token, Ok(won(false)))
        .await
        .unwrap());
    // So is the completion a worker sends with its claim's fields (no read of the record:
    // the job's running entry is the fence, and the stop removed it).
    assert!(!s
        .queue
        .complete_job(&claim.record, claim.token, Ok(won(false)))
        .await
        .unwrap());
    assert_eq!(
        s.queue.get(&job.id).await.unwrap().unwrap().state,
        JobState::Cancelled
    );
    assert_eq!(
        s.queue.cancel(&job.id, "again").await.unwrap(),
        CancelOutcome::Finished(JobState::Cancelled)
    );
    assert_eq!(
        s.queue.cancel("job_nothere", "x").await.unwrap(),
        CancelOutcome::Missing
    );
    assert_eq!(s.queue.running_count().await.unwrap(), 0);
}

/// An upgrade from the single waiting list (`queue:waiting`, before the lanes) loses no
/// waiting job: a process's start moves them into their lanes, oldest first, once.
#[tokio::test]
async fn jobs_waiting_in_the_pre_lanes_list_are_adopted_into_their_lanes() {
    let s = setup_with(|_| {}).await;
    let play = s.new_job(spec(JobKind::Playtest, "a", 1, "k1")).await;
    let sim = s.new_job(spec(JobKind::Simulate, "b", 1, "k2")).await;
    // Put them back where a version before the lanes kept them: the list, oldest at the tail.
    let mut conn = redis::Client::open(s.redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    for (lane, id) in [("planner", &play.id), ("referee", &sim.id)] {
        let _: () = redis::cmd("ZREM")
            .arg(format!("t:queue:lane:{lane}"))
            .arg(id)
            .query_async(&mut conn)
            .await
            .unwrap();
        let _: () = redis::cmd("LPUSH")
            .arg("t:queue:waiting")
            .arg(id)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    // A stale id whose record is gone is dropped, not adopted.
    let _: () = redis::cmd("LPUSH")
        .arg("t:queue:waiting")
        .arg("gone")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        s.queue.claim("w").await.unwrap().is_none(),
        "lanes are empty"
    );
    assert_eq!(s.queue.adopt_waiting_list().await.unwrap(), 2);
    assert_eq!(s.queue.adopt_waiting_list().await.unwrap(), 0, "once");
    let left: i64 = redis::cmd("LLEN")
        .arg("t:queue:waiting")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0);
    let first = s.queue.claim("w1").await.unwrap().expect("a claim");
    let second = s.queue.claim("w2").await.unwrap().expect("a claim");
    let mut claimed = [first.record.id.clone(), second.record.id.clone()];
    claimed.sort();
    let mut want = [play.id.clone(), sim.id.clone()];
    want.sort();
    assert_eq!(claimed, want);
}

/// An upgrade from the fair turns and waiting counters of versions before `queue:fair`
/// (`queue:turns:<lane>`, `waiting:<account>`) keeps every waiting job's turn and count:
/// a process's start folds them in, once, and deletes the old keys.
#[tokio::test]
async fn fair_turns_and_waiting_counts_of_an_earlier_version_are_adopted() {
    let s = setup_with(|s| s.queue.waiting_per_account = 2).await;
    let mut conn = s.raw().await;
    let a1 = s.new_job(spec(JobKind::Playtest, "a", 1, "a1")).await;
    let a2 = s.new_job(spec(JobKind::Simulate, "a", 1, "a2")).await;
    let b1 = s.new_job(spec(JobKind::Playtest, "b", 1, "b1")).await;
    let fair = fair_hash(&mut conn).await;
    assert_eq!(fair.get("w:a").map(String::as_str), Some("2"), "{fair:?}");
    assert_eq!(fair.get("w:b").map(String::as_str), Some("1"), "{fair:?}");
    // Lay them out as the earlier version did; the new hash is gone.
    for (field, value) in &fair {
        // Fields of this version only (admission's live slots, the pools' latest ends and
        // idle marks).
        if field == "cap" || field.starts_with("end:") || field.starts_with("idle:") {
            continue;
        }
        let (key, old_field) = if let Some(account) = field.strip_prefix("w:") {
            let _: () = redis::cmd("SET")
                .arg(format!("t:waiting:{account}"))
                .arg(value)
                .query_async(&mut conn)
                .await
                .unwrap();
            continue;
        } else if let Some((name, lane)) = field.split_once(':').filter(|(n, _)| *n != "a") {
            (format!("t:queue:turns:{lane}"), name.to_string())
        } else if let Some(rest) = field.strip_prefix("a:") {
            let (lane, account) = rest.split_once(':').unwrap();
            (format!("t:queue:turns:{lane}"), format!("a:{account}"))
        } else {
            continue;
        };
        if old_field.starts_with("owed") {
            continue;
        }
        let _: () = redis::cmd("HSET")
            .arg(key)
            .arg(old_field)
            .arg(value)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    // A counter left at zero by an account with nothing waiting goes too.
    let _: () = redis::cmd("SET")
        .arg("t:waiting:c")
        .arg(0)
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: () = redis::cmd("DEL")
        .arg("t:queue:fair")
        .query_async(&mut conn)
        .await
        .unwrap();

    assert!(s.queue.adopt_fair_layout().await.unwrap());
    assert!(!s.queue.adopt_fair_layout().await.unwrap(), "once");
    assert_fair_counts(&s, "adopted").await;
    let left: Vec<String> = redis::cmd("KEYS")
        .arg("t:*")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        !left
            .iter()
            .any(|k| k.starts_with("t:waiting:") || k.starts_with("t:queue:turns:")),
        "the old keys are deleted: {left:?}"
    );
    let adopted = fair_hash(&mut conn).await;
    // Every turn and count (the owed turns' latest time, the live slots' sum, the pools'
    // latest ends and idle marks are unknown to an earlier version).
    let earlier = |f: &str| {
        !(f.starts_with("owed:") || f.starts_with("end:") || f.starts_with("idle:") || f == "cap")
    };
    for (field, value) in fair.iter().filter(|(f, _)| earlier(f)) {
        assert_eq!(adopted.get(field), Some(value), "{field} kept: {adopted:?}");
    }

    // The cap still counts a's two waiting jobs, and b's turn still comes before a's second
    // planner job would.
    let third = s.queue.admit(spec(JobKind::Playtest, "a", 1, "a3")).await;
    assert!(
        matches!(third, Err(QueueError::Busy { .. })),
        "a has two waiting: {third:?}"
    );
    let mut claimed = Vec::new();
    while let Some(c) = s.queue.claim("w").await.unwrap() {
        claimed.push(c.record.id.clone());
    }
    let mut want = vec![a1.id.clone(), a2.id.clone(), b1.id.clone()];
    want.sort();
    claimed.sort();
    assert_eq!(claimed, want);
    assert_fair_counts(&s, "after the claims").await;
    assert!(is_new(
        &s.queue.admit(spec(JobKind::Playtest, "a", 1, "a4")).await
    ));
}

/// An upgrade from the per-account daily hashes of earlier versions
/// (`daily:<day>:<account>`) keeps the day's counts: a process's start moves them into the
/// day's budget hash, once, and deletes the old hash.
#[tokio::test]
async fn daily_counts_of_an_earlier_version_are_adopted() {
    let s = setup_with(|s| s.queue.waiting_per_account = 5).await;
    let mut conn = s.raw().await;
    let fresh = s.queue.remaining("a", 1).await.unwrap();
    s.new_job(spec(JobKind::Playtest, "a", 1, "a1")).await;
    s.new_job(spec(JobKind::Simulate, "a", 1, "a2")).await;
    s.new_job(spec(JobKind::Simulate, "b", 1, "b1")).await;
    let used = s.queue.remaining("a", 1).await.unwrap();
    assert_eq!(used.playtests, fresh.playtests - 1);
    assert_eq!(used.simulations, fresh.simulations - 1);
    let day = s.queue.now_ms().await.unwrap() / 86_400_000;
    let budget = format!("t:budget:{day}");
    // Lay a's counts out as the earlier version did.
    for kind in ["playtest", "simulate"] {
        let n: i64 = redis::cmd("HGET")
            .arg(&budget)
            .arg(format!("d:a:{kind}"))
            .query_async(&mut conn)
            .await
            .unwrap();
        let _: () = redis::cmd("HSET")
            .arg(format!("t:daily:{day}:a"))
            .arg(kind)
            .arg(n)
            .query_async(&mut conn)
            .await
            .unwrap();
        let _: () = redis::cmd("HDEL")
            .arg(&budget)
            .arg(format!("d:a:{kind}"))
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let _: () = redis::cmd("EXPIRE")
        .arg(format!("t:daily:{day}:a"))
        .arg(3 * 86_400)
        .query_async(&mut conn)
        .await
        .unwrap();
    let unread = s.queue.remaining("a", 1).await.unwrap();
    assert_eq!(
        (unread.playtests, unread.simulations),
        (fresh.playtests, fresh.simulations),
        "not read any more"
    );

    assert_eq!(s.queue.adopt_daily_counts().await.unwrap(), 1);
    assert_eq!(s.queue.adopt_daily_counts().await.unwrap(), 0, "once");
    assert_eq!(s.queue.remaining("a", 1).await.unwrap(), used);
    let left: i64 = redis::cmd("EXISTS")
        .arg(format!("t:daily:{day}:a"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0, "the old hash is deleted");
    // b's counts (already in the new layout) are untouched, and the overview reads the day.
    let b = s.queue.remaining("b", 1).await.unwrap();
    assert_eq!(b.simulations, fresh.simulations - 1);
    let stats = day_stats(s.queue.store(), s.queue.now_ms().await.unwrap())
        .await
        .unwrap();
    assert_eq!(stats.admitted.get("simulate"), Some(&2), "{stats:?}");
    assert_eq!(stats.admitted.get("playtest"), Some(&1), "{stats:?}");
}

/// `queue:fair`'s counts as the lanes and records say they must be: `n` is the lanes'
/// `ZCARD`s together and each account's `w:` its queued jobs in them (no field or 0: none).
async fn assert_fair_counts(s: &Setup, when: &str) {
    let mut conn = s.raw().await;
    let mut ids: Vec<String> = Vec::new();
    for lane in ["planner", "referee"] {
        let more: Vec<String> = redis::cmd("ZRANGE")
            .arg(format!("t:queue:lane:{lane}"))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await
            .unwrap();
        ids.extend(more);
    }
    let mut want: std::collections::BTreeMap<String, i64> = Default::default();
    for id in &ids {
        let f = job_fields(&mut conn, &format!("t:job:{id}"), &["account", "state"])
            .await
            .unwrap();
        if let [Some(account), Some(state)] = &f[..] {
            if state == "queued" {
                *want.entry(account.clone()).or_default() += 1;
            }
        }
    }
    let fair = fair_hash(&mut conn).await;
    let n: i64 = fair.get("n").map_or(0, |v| v.parse().unwrap());
    assert_eq!(n, ids.len() as i64, "{when}: n against the lanes: {fair:?}");
    let have: std::collections::BTreeMap<String, i64> = fair
        .iter()
        .filter_map(|(f, v)| Some((f.strip_prefix("w:")?.to_string(), v.parse().unwrap())))
        .filter(|(_, v)| *v != 0)
        .collect();
    assert_eq!(have, want, "{when}: the accounts' counts: {fair:?}");
}

/// Admissions, cancels, claims (a late head failed at the claim included) and completions of
/// several accounts in both lanes keep `queue:fair`'s counts exact at every step, and the
/// sweep drops the entries of accounts with nothing waiting.
#[tokio::test]
async fn the_fair_counts_follow_every_way_a_job_leaves_its_lane() {
    let s = setup_with(|s| s.queue.waiting_per_account = 3).await;
    let mut jobs = Vec::new();
    for (i, account) in ["a", "b", "c", "a", "b", "a"].iter().enumerate() {
        let kind = if i % 2 == 0 {
            JobKind::Playtest
        } else {
            JobKind::Simulate
        };
        jobs.push(s.new_job(spec(kind, account, 1, &format!("k{i}"))).await);
        assert_fair_counts(&s, &format!("after admission {i}")).await;
    }
    // A refused admission (the per-account cap) changes no count.
    assert!(!is_new(
        &s.queue.admit(spec(JobKind::Playtest, "a", 1, "k9")).await
    ));
    assert_fair_counts(&s, "after a refusal").await;
    // Cancelled by the operator, twice (the second finds it gone).
    s.queue.cancel(&jobs[1].id, "test").await.unwrap();
    s.queue.cancel(&jobs[1].id, "test").await.unwrap();
    assert_fair_counts(&s, "after a cancel").await;
    // A head that cannot finish in time any more is failed by the claim, not run.
    let mut conn = s.raw().await;
    // Its deadline, in the packed field (the 5th of helpers.lua's PACKED_AT), packed again
    // as cmsgpack packs it (each value a MessagePack string).
    let key = format!("t:job:{}", jobs[0].id);
    let mut values = job_fields(&mut conn, &key, &PACKED_FIELDS).await.unwrap();
    values[4] = Some("1".into());
    let mut packed = Vec::new();
    for v in values {
        rmp_serde::encode::write(&mut packed, &v.unwrap_or_default()).unwrap();
    }
    let _: () = redis::cmd("HSET")
        .arg(&key)
        .arg(PACKED_FIELD)
        .arg(packed)
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut claimed = 0;
    while let Some(c) = s.queue.claim("w").await.unwrap() {
        assert_ne!(c.record.id, jobs[0].id, "the late head is not run");
        claimed += 1;
        assert_fair_counts(&s, &format!("after claim {claimed}")).await;
        s.queue
            .complete(&c.record.id, c.token, Ok(won(true)))
            .await
            .unwrap();
    }
    assert_eq!(claimed, 4, "six admitted, one cancelled, one late");
    // The shared hashes are hash tables from their first write (a field per account: a
    // listpack would be scanned for every field a job reads or writes).
    let day = s.queue.now_ms().await.unwrap() / 86_400_000;
    for key in ["t:queue:fair".to_string(), format!("t:budget:{day}")] {
        let encoding: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(encoding, "hashtable", "{key}");
    }
    assert_fair_counts(&s, "with the lanes empty").await;
    let fields: Vec<String> = fair_hash(&mut conn).await.into_keys().collect();
    assert!(
        fields.iter().any(|f| f.starts_with("w:")),
        "the claims leave the counts at zero: {fields:?}"
    );
    // One round of the sweep (the hash is small: one slice) drops every account's entries.
    assert_eq!(s.queue.sweep_fair().await.unwrap(), 3);
    let fields: Vec<String> = fair_hash(&mut conn).await.into_keys().collect();
    assert!(
        !fields
            .iter()
            .any(|f| f.starts_with("w:") || f.starts_with("a:")),
        "swept: {fields:?}"
    );
    // The turns go on as before: a new job of each account is admitted and claimed.
    let next = s.new_job(spec(JobKind::Playtest, "a", 1, "k10")).await;
    assert_fair_counts(&s, "after the sweep").await;
    // A count put wrong by hand is put right by the next round of the sweep.
    let _: () = redis::cmd("HSET")
        .arg("t:queue:fair")
        .arg("n")
        .arg(99)
        .query_async(&mut conn)
        .await
        .unwrap();
    s.queue.sweep_fair().await.unwrap();
    assert_fair_counts(&s, "after a round of the sweep").await;
    let c = s.queue.claim("w").await.unwrap().expect("a claim");
    assert_eq!(c.record.id, next.id);
    assert_fair_counts(&s, "at the end").await;
}

/// `queue:fair` as it is stored, field by field.
/// Sets the test's redis-server's `maxmemory` ("1": full at once; "0": no limit).
async fn set_maxmemory(conn: &mut redis::aio::MultiplexedConnection, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(value)
        .query_async(conn)
        .await
        .unwrap();
}

async fn fair_hash(
    conn: &mut redis::aio::MultiplexedConnection,
) -> std::collections::BTreeMap<String, String> {
    let fields: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg("t:queue:fair")
        .query_async(conn)
        .await
        .unwrap();
    fields.into_iter().collect()
}

/// A queue whose every durable write fails after it ran: it waits for a replica's
/// acknowledgement (`redis.min_replica_acks = 1`) that never comes, as with no replica.
async fn unacknowledged_queue(redis: &RedisServer) -> (Queue, watch::Sender<bool>) {
    let store = horst_store::Store::connect_to(
        &horst_store::RedisTarget::Url(redis.url()),
        "t:",
        horst_store::Durability {
            min_replica_acks: 1,
            timeout_ms: 10,
        },
    )
    .await
    .unwrap();
    let (stop, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(&store), rx);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    let settings = QueueSettings {
        queue: QueueConfig::default(),
        quotas: QuotaConfig::default(),
    };
    (Queue::new(store, settings, notifier), stop)
}

/// An admission whose answer is unclear (here: the script ran, then the replicas' `WAIT`
/// failed, as with `redis.min_replica_acks` and no replica; a lost reply is the same for
/// the caller) answers an error; the job it queued must not be left to run and be charged.
#[tokio::test]
async fn an_admission_that_failed_unclearly_leaves_no_job_queued_or_charged() {
    let redis = RedisServer::start();
    let (queue, _stop) = unacknowledged_queue(&redis).await;
    let admitted = queue
        .admit(spec(JobKind::Simulate, "acct", 1, "unclear"))
        .await;
    assert!(admitted.is_err(), "{admitted:?}");
    // Looked at through a queue without the replicas' acknowledgement.
    let (plain_queue, _plain_stop) = queue_on(&redis.url(), |_| {}).await;
    assert_eq!(
        plain_queue.depth().await.unwrap().0,
        0,
        "nothing left queued"
    );
    let (jobs, _) = plain_queue.list("acct", 0, 10).await.unwrap();
    assert!(jobs.iter().all(|j| j.state != JobState::Queued), "{jobs:?}");
    let left = plain_queue.remaining("acct", 1).await.unwrap();
    let full = QuotaConfig::default().trust1.simulations as u64;
    assert_eq!(left.simulations, full, "nothing charged");
    assert_eq!(left.seconds, QueueConfig::default().daily_seconds);
    // The key was given back: the same call admits afresh.
    assert!(is_new(
        &plain_queue
            .admit(spec(JobKind::Simulate, "acct", 1, "unclear"))
            .await
    ));
}

/// Slot `w/0` says it is idle, then a job is admitted: the job and the wake-up message that
/// hands it to the slot.
async fn handed_to_idle_slot(s: &Setup) -> (JobRecord, std::sync::Arc<str>) {
    let mut woken = s.queue.slot_wake("w/0");
    assert!(!s.queue.idle("w/0", Pool::General).await.unwrap());
    let job = s.new_job(spec(JobKind::Simulate, "ann", 1, "k")).await;
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the wake-up");
    (job, woken.payload().expect("a message"))
}

/// A slot's take-up of a job handed to it (the `HDEL` of its `handed` mark) waits for the
/// replicas like the claim it stands for (`redis.min_replica_acks`): before, it went
/// unwaited, and after a failover that lost it the new primary still held the mark, so a
/// put-back could give the job to a second slot while the first ran it. Unacknowledged in
/// time (here: no replica at all), the job is run all the same, never left to be reaped.
#[tokio::test]
async fn a_take_up_waits_for_the_replicas_and_runs_the_job_unacknowledged() {
    let s = setup_with(|_| {}).await;
    let mut raw = s.raw().await;
    let (job, message) = handed_to_idle_slot(&s).await;
    let (unacked, _stop) = unacknowledged_queue(&s.redis).await;
    let waits = |info: String| {
        info.lines()
            .find_map(|l| l.strip_prefix("cmdstat_wait:calls="))
            .and_then(|l| l.split(',').next())
            .map_or(0, |n| n.parse::<u64>().unwrap())
    };
    let stats = || redis::cmd("INFO").arg("commandstats").clone();
    let before = waits(stats().query_async(&mut raw).await.unwrap());
    let claim = unacked
        .handed("w/0", &message)
        .await
        .unwrap()
        .expect("the job runs though the replicas did not acknowledge");
    assert_eq!(claim.record.id, job.id);
    let after = waits(stats().query_async(&mut raw).await.unwrap());
    assert_eq!(
        after - before,
        1,
        "the take-up waited for the replicas once"
    );
    let handed: bool = redis::cmd("HEXISTS")
        .arg(format!("t:job:{}", job.id))
        .arg("handed")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(!handed, "the mark is taken off");
}

/// An operator's cancel in the window between an admission handing a job to an idle slot and
/// the slot taking it up (the slot here is paused there: it has its wake-up and has not taken
/// the job up) drops the job uncharged, as a queued one: nothing ran. Before, it ended
/// `cancelled` "stopped while running" and stayed charged, with a start on its record. The
/// slot's take-up afterwards finds the mark gone and runs nothing; a job taken up and then
/// cancelled is stopped and stays charged, as before.
#[tokio::test]
async fn a_cancel_before_the_slot_takes_up_its_handed_job_charges_nothing() {
    let s = setup_with(|_| {}).await;
    let before = s.queue.remaining("ann", 1).await.unwrap();
    let (job, message) = handed_to_idle_slot(&s).await;
    let stored = s.queue.get(&job.id).await.unwrap().unwrap();
    assert!(
        stored.handed && stored.state == JobState::Running,
        "{stored:?}"
    );
    let waiter = waiting_caller(&s.queue, &job.id);
    assert_eq!(
        s.queue.cancel(&job.id, "flooding").await.unwrap(),
        CancelOutcome::Dropped
    );
    let done = told(waiter).await;
    assert_eq!(done.state, JobState::Cancelled);
    let f = done.failure.clone().unwrap();
    assert_eq!(f.code, FailureCode::Cancelled);
    assert!(
        f.message.contains("flooding") && f.message.contains("nothing was charged"),
        "{}",
        f.message
    );
    assert_eq!(done.charged_seconds, 0, "{done:?}");
    assert_eq!(done.started_at_ms, None, "it never started: {done:?}");
    assert_eq!(done.worker, None, "{done:?}");
    assert!(!done.handed);
    assert_eq!(s.queue.running_count().await.unwrap(), 0);
    assert_eq!(
        s.queue.remaining("ann", 1).await.unwrap(),
        before,
        "the reservation and the day's count given back"
    );
    let today = s.queue.today().await.unwrap();
    assert_eq!(today.seconds_charged, 0, "{today:?}");
    assert_eq!(today.finished["simulate"].get("cancelled"), Some(&1));
    // The slot, resumed, takes nothing up and runs nothing.
    assert!(s.queue.handed("w/0", &message).await.unwrap().is_none());
    assert_eq!(
        s.queue.get(&job.id).await.unwrap().unwrap().state,
        JobState::Cancelled
    );
    // Its idempotency key was forgotten, as a dropped queued job's: the same call is new.
    // Handed again (the slot said it is idle again) and taken up this time, the job ran, and
    // a cancel stops it charged.
    let mut woken = s.queue.slot_wake("w/0");
    assert!(!s.queue.idle("w/0", Pool::General).await.unwrap());
    let again = s.new_job(spec(JobKind::Simulate, "ann", 1, "k")).await;
    assert_ne!(again.id, job.id);
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the wake-up");
    let claim = s
        .queue
        .handed("w/0", &woken.payload().unwrap())
        .await
        .unwrap()
        .expect("taken up");
    assert_eq!(claim.record.id, again.id);
    assert_eq!(
        s.queue.cancel(&again.id, "stuck").await.unwrap(),
        CancelOutcome::Stopped
    );
    let r = s.queue.get(&again.id).await.unwrap().unwrap();
    assert!(r.charged_seconds > 0, "{r:?}");
    assert!(r.failure.unwrap().message.contains("stays charged"));
    assert_eq!(
        s.queue.today().await.unwrap().seconds_charged,
        r.charged_seconds
    );
}

/// The job waiting in the lanes (both), the lanes' count and the account's, as stored.
async fn lanes_and_counts(
    raw: &mut redis::aio::MultiplexedConnection,
    account: &str,
) -> (u64, String, String) {
    let mut waiting = 0;
    for lane in ["planner", "referee"] {
        let n: u64 = redis::cmd("ZCARD")
            .arg(format!("t:queue:lane:{lane}"))
            .query_async(raw)
            .await
            .unwrap();
        waiting += n;
    }
    let fair = fair_hash(raw).await;
    let get = |f: &str| fair.get(f).cloned().unwrap_or_else(|| "0".into());
    (waiting, get("n"), get(&format!("w:{account}")))
}

/// An admission hands its job to the idle slot it pops when nothing waits and the slot
/// said it was idle just now (issue 35: no claim script, no lane): the wake-up carries the
/// claim, the record runs under the slot's claim with the reservation charged, the job never
/// entered a lane or its account's count, and its completion and the day's figures are those
/// of a claimed job.
#[tokio::test]
async fn an_idle_slot_is_handed_the_job_with_its_wake_up() {
    let s = setup_with(|_| {}).await;
    let mut raw = s.raw().await;
    let (job, message) = handed_to_idle_slot(&s).await;
    let claim = s
        .queue
        .handed("w/0", &message)
        .await
        .unwrap()
        .expect("the wake-up hands the job");
    assert_eq!(handed_token(&message), Some(claim.token));
    assert_eq!(claim.record.id, job.id);
    assert_eq!(claim.record.state, JobState::Running);
    assert_eq!(claim.record.input, job.input);
    assert!(!claim.more_waiting);
    let stored = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(stored.state, JobState::Running);
    assert_eq!(stored.worker.as_deref(), Some("w/0"));
    assert_eq!(stored.started_at_ms, claim.record.started_at_ms);
    assert_eq!(stored.charged_seconds, claim.record.charged_seconds);
    assert!(stored.charged_seconds > 0, "the reservation is charged");
    assert_eq!(
        lanes_and_counts(&mut raw, "ann").await,
        (0, "0".into(), "0".into()),
        "the handed job never waited"
    );
    // Its heartbeat and completion are a claimed job's; a second completion is refused.
    assert!(s.queue.heartbeat(&job.id, claim.token).await.unwrap());
    let done = s
        .queue
        .complete_slot(
            &claim.record,
            claim.token,
            Ok(won(true)),
            Some(("w/0", Pool::General)),
        )
        .await
        .unwrap();
    assert_eq!(done, Completion::Idle);
    assert_eq!(
        s.queue
            .complete_slot(&claim.record, claim.token, Ok(won(true)), None)
            .await
            .unwrap(),
        Completion::Refused
    );
    let rec = s.queue.wait(&job.id, Duration::from_secs(5)).await.unwrap();
    assert_eq!(rec.state, JobState::Succeeded);
    let today = s.queue.today().await.unwrap();
    assert_eq!(today.admitted.get("simulate"), Some(&1));
    assert_eq!(today.finished["simulate"].get("succeeded"), Some(&1));
    assert_eq!(today.seconds_charged, stored.charged_seconds);
    // Registered again by its completion: the next job is handed to it too.
    let next = s.new_job(spec(JobKind::Simulate, "bob", 1, "k2")).await;
    let stored = s.queue.get(&next.id).await.unwrap().unwrap();
    assert_eq!(stored.state, JobState::Running);
    assert_eq!(stored.worker.as_deref(), Some("w/0"));
}

/// A hand-off never passes over a waiting job: with one in the lanes, the popped slot is
/// only woken and the new job waits its turn.
#[tokio::test]
async fn no_job_is_handed_past_a_waiting_one() {
    let s = setup_with(|_| {}).await;
    let first = s.new_job(spec(JobKind::Simulate, "ann", 1, "k1")).await;
    let mut woken = s.queue.slot_wake("w/0");
    // Registered with the first job waiting (the look says so; the slot has not claimed).
    assert!(s.queue.idle("w/0", Pool::General).await.unwrap());
    let second = s.new_job(spec(JobKind::Simulate, "bob", 1, "k2")).await;
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the wake-up");
    let message = woken.payload().expect("a message");
    assert!(s.queue.handed("w/0", &message).await.unwrap().is_none());
    assert_eq!(
        s.queue.get(&second.id).await.unwrap().unwrap().state,
        JobState::Queued
    );
    let c = s.queue.claim("w/0").await.unwrap().unwrap();
    assert_eq!(c.record.id, first.id, "the job that waited longest first");
}

/// A hand-off whose wake-up never arrived (pub/sub is fire-and-forget) is found by the slot's
/// next idle refresh, or by its next claim, and by no other slot; the slot is not left
/// registered (nothing more is handed to it while it runs the job), and a hand-off it already
/// knows (by its token) is not found again.
#[tokio::test]
async fn a_hand_off_whose_wake_up_was_lost_is_found_by_the_slot() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    assert!(!s.queue.idle("w/0", Pool::General).await.unwrap());
    let job = s.new_job(spec(JobKind::Simulate, "ann", 1, "k1")).await;
    // Nobody listened. Another slot's refresh finds nothing of it.
    assert!(matches!(
        s.queue
            .idle_look("w/1", Pool::General, true, 0)
            .await
            .unwrap(),
        IdleLook::Registered
    ));
    s.queue.retire_idle(&["w/1".to_string()]).await.unwrap();
    let IdleLook::Handed(claim) = s
        .queue
        .idle_look("w/0", Pool::General, true, 0)
        .await
        .unwrap()
    else {
        panic!("the refresh did not find the job handed to the slot")
    };
    assert_eq!(claim.record.id, job.id);
    assert_eq!(claim.record.input, job.input);
    // Not registered now: the next job waits in its lane.
    let other = s.new_job(spec(JobKind::Simulate, "bob", 1, "k2")).await;
    assert_eq!(
        s.queue.get(&other.id).await.unwrap().unwrap().state,
        JobState::Queued
    );
    // Known by its token: not found again.
    assert!(matches!(
        s.queue
            .idle_look("w/0", Pool::General, true, claim.token)
            .await
            .unwrap(),
        IdleLook::Waiting
    ));
    let c2 = s
        .queue
        .claim_slot_after("w/0", Pool::General, true, claim.token)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c2.record.id, other.id);
    for c in [&*claim, &c2] {
        s.queue
            .complete_slot(&c.record, c.token, Ok(won(true)), None)
            .await
            .unwrap();
    }
    // The same through a claim: registered, handed a job unheard, then woken by its own
    // process (another slot saw more waiting): the claim answers the handed job.
    assert!(!s.queue.idle("w/2", Pool::General).await.unwrap());
    let third = s.new_job(spec(JobKind::Simulate, "cy", 1, "k3")).await;
    let c3 = s
        .queue
        .claim_slot_after("w/2", Pool::General, true, 0)
        .await
        .unwrap()
        .expect("the job handed to the slot");
    assert_eq!(c3.record.id, third.id);
    assert_eq!(c3.record.state, JobState::Running);
}

/// An idle slot whose entry is older than [`HANDOFF_FRESH`] may be a dead worker's (or one
/// whose subscription is gone): it is only woken, and the job waits in its lane, where any
/// slot takes it.
#[tokio::test]
async fn a_slot_not_heard_from_lately_is_not_handed_a_job() {
    let s = setup_with(|_| {}).await;
    let mut woken = s.queue.slot_wake("w/0");
    assert!(!s.queue.idle("w/0", Pool::General).await.unwrap());
    s.queue
        .set_clock_offset(HANDOFF_FRESH + Duration::from_millis(500), true);
    let job = s.new_job(spec(JobKind::Simulate, "ann", 1, "k")).await;
    assert_eq!(
        s.queue.get(&job.id).await.unwrap().unwrap().state,
        JobState::Queued
    );
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("still woken");
    let message = woken.payload().expect("a message");
    assert!(s.queue.handed("w/0", &message).await.unwrap().is_none());
    let c = s.queue.claim("w/1").await.unwrap().unwrap();
    assert_eq!(c.record.id, job.id);
}

/// A job handed to a slot whose worker took it up (here: found by the slot's look for a
/// lost claim, which takes it up in the same step) and then died is a claimed job of a dead
/// worker: reaped once its lease runs out, failed `cancelled`, charged, never run again (no
/// slot finds it; its token is refused).
#[tokio::test]
async fn a_job_handed_to_a_slot_that_took_it_up_and_died_is_reaped_as_a_claimed_one() {
    let s = setup_with(|_| {}).await;
    assert!(!s.queue.idle("w/0", Pool::General).await.unwrap());
    let job = s.new_job(spec(JobKind::Simulate, "ann", 1, "k")).await;
    let stored = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(stored.state, JobState::Running);
    assert_eq!(stored.worker.as_deref(), Some("w/0"));
    // The claim as the slot would have run it (its token).
    let token = s
        .queue
        .recover_claim("w/0", &[], 0)
        .await
        .unwrap()
        .expect("the handed job")
        .token;
    let lease = s.queue.settings().queue.lease_seconds;
    advance_with_housekeeping(&s.queue, 0, lease + 2).await;
    let rec = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Failed);
    assert_eq!(
        rec.failure.as_ref().map(|f| f.code),
        Some(FailureCode::Cancelled)
    );
    assert_eq!(rec.charged_seconds, stored.charged_seconds);
    assert!(s.queue.claim("w/1").await.unwrap().is_none());
    assert!(s
        .queue
        .recover_claim("w/1", &[], 0)
        .await
        .unwrap()
        .is_none());
    assert!(!s.queue.heartbeat(&job.id, token).await.unwrap());
    assert!(!s
        .queue
        .complete_job(&stored, token, Ok(won(true)))
        .await
        .unwrap());
}

/// The window the hand-off opens (up_worker::a_killed_worker_is_started_again...): a slot
/// refreshes its idle entry, its worker dies (or stalls), and an admission hands the slot a
/// job within the entry's freshness. Nobody takes the job up, so when its lease runs out it
/// goes back to the front of its lane (before a job admitted after it), uncharged, in the
/// accounts' and lanes' counts again; another slot claims it under a newer token and runs
/// it once; the stalled slot that wakes later cannot take it up, and its token is refused.
/// The day counts the job once admitted, once finished, and its seconds charged once.
#[tokio::test]
async fn a_job_handed_to_a_slot_that_never_took_it_up_goes_back_to_its_lane_and_runs_once() {
    let s = setup_with(|_| {}).await;
    let mut raw = s.raw().await;
    let mut woken = s.queue.slot_wake("dead/0");
    // The slot's idle refresh, then its worker stops (it never reads its wake-up).
    assert!(!s.queue.idle("dead/0", Pool::General).await.unwrap());
    assert!(matches!(
        s.queue
            .idle_look("dead/0", Pool::General, true, 0)
            .await
            .unwrap(),
        IdleLook::Registered
    ));
    let handed = s.new_job(spec(JobKind::Simulate, "ann", 1, "k1")).await;
    let stored = s.queue.get(&handed.id).await.unwrap().unwrap();
    assert_eq!(stored.state, JobState::Running);
    assert_eq!(stored.worker.as_deref(), Some("dead/0"));
    let charge = stored.charged_seconds;
    assert!(charge > 0);
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the wake-up");
    let message = woken.payload().expect("the hand-off's message");
    let old_token = handed_token(&message).expect("a hand-off");
    // Admitted after it, with no idle slot left: waits in its lane.
    let later = s.new_job(spec(JobKind::Simulate, "bob", 1, "k2")).await;
    assert_eq!(
        s.queue.get(&later.id).await.unwrap().unwrap().state,
        JobState::Queued
    );
    let lease = s.queue.settings().queue.lease_seconds;
    // Within its lease it is left alone.
    advance_with_housekeeping(&s.queue, 0, lease - 1).await;
    assert_eq!(
        s.queue.get(&handed.id).await.unwrap().unwrap().state,
        JobState::Running
    );
    // A slot goes idle meanwhile (it looks once and finds `later` waiting, but say it is
    // slow to claim): the put-back wakes it.
    let mut live_woken = s.queue.slot_wake("live/0");
    s.queue.idle("live/0", Pool::General).await.unwrap();
    advance_with_housekeeping(&s.queue, lease - 1, lease + 2).await;
    let back = s.queue.get(&handed.id).await.unwrap().unwrap();
    assert_eq!(back.state, JobState::Queued, "{back:?}");
    tokio::time::timeout(Duration::from_secs(10), live_woken.changed())
        .await
        .expect("the put-back wakes an idle slot");
    assert_eq!(live_woken.payload().as_deref(), Some(handed.id.as_str()));
    assert_eq!(back.charged_seconds, 0, "its charge given back");
    assert_eq!(back.worker, None);
    assert_eq!(back.started_at_ms, None);
    assert_eq!(back.created_at_ms, stored.created_at_ms);
    assert_fair_counts(&s, "after the put-back").await;
    assert_eq!(
        lanes_and_counts(&mut raw, "ann").await,
        (2, "2".into(), "1".into())
    );
    let today = s.queue.today().await.unwrap();
    assert_eq!(today.seconds_charged, 0, "nothing runs, nothing is charged");
    assert_eq!(today.admitted.get("simulate"), Some(&2));
    let running: Vec<String> = redis::cmd("ZRANGE")
        .arg("t:queue:running")
        .arg(0)
        .arg(-1)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(running.is_empty(), "{running:?}");

    // The stalled slot wakes and would take up its hand-off: given back, it runs nothing.
    assert!(s.queue.handed("dead/0", &message).await.unwrap().is_none());
    // Another slot claims: the put-back job first, under a newer token.
    let again = s.queue.claim("live/0").await.unwrap().unwrap();
    assert_eq!(again.record.id, handed.id, "at its lane's front");
    assert!(again.token > old_token);
    assert_eq!(again.record.charged_seconds, charge);
    // The old holder is fenced: its heartbeat and its completion are refused.
    assert!(!s.queue.heartbeat(&handed.id, old_token).await.unwrap());
    assert!(!s
        .queue
        .complete(&handed.id, old_token, Ok(won(false)))
        .await
        .unwrap());
    assert!(s
        .queue
        .complete_job(&again.record, again.token, Ok(won(true)))
        .await
        .unwrap());
    let next = s.queue.claim("live/0").await.unwrap().unwrap();
    assert_eq!(next.record.id, later.id);
    assert!(s
        .queue
        .complete_job(&next.record, next.token, Ok(won(true)))
        .await
        .unwrap());
    assert!(
        s.queue.claim("live/1").await.unwrap().is_none(),
        "nothing left"
    );
    let done = s.queue.get(&handed.id).await.unwrap().unwrap();
    assert_eq!(done.state, JobState::Succeeded);
    assert_eq!(done.worker.as_deref(), Some("live/0"));
    assert_eq!(done.charged_seconds, charge);
    let today = s.queue.today().await.unwrap();
    assert_eq!(
        today.admitted.get("simulate"),
        Some(&2),
        "admitted once each"
    );
    assert_eq!(
        today.finished.get("simulate").cloned().unwrap_or_default(),
        [("succeeded".to_string(), 2)].into_iter().collect(),
        "finished once each, none failed"
    );
    assert_eq!(
        today.seconds_charged,
        charge + next.record.charged_seconds,
        "each charged once"
    );
    let left = s.queue.remaining("ann", 1).await.unwrap();
    assert_eq!(
        left.simulations,
        QuotaConfig::default().trust1.simulations as u64 - 1,
        "one of the account's jobs of the day"
    );
    assert_fair_counts(&s, "at the end").await;
}

/// `horst up` ends its dead worker child's running jobs at once (`fail_running`): one that
/// its slot took up fails `cancelled`, charged; one an admission handed to an idle slot of
/// the dead process that never took it up goes back to its lane, uncharged, and runs once on
/// another slot; and once the process's idle slots are retired no job is handed to them.
#[tokio::test]
async fn a_dead_worker_process_s_untaken_hand_off_goes_back_and_its_idle_slots_leave() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    // Slot 0 of the dead process runs a job it claimed; slot 1 is idle.
    let taken = s.new_job(spec(JobKind::Simulate, "ann", 1, "k1")).await;
    let running = s.queue.claim("h-1-abc-0/0").await.unwrap().unwrap();
    assert_eq!(running.record.id, taken.id);
    assert!(!s.queue.idle("h-1-abc-0/1", Pool::General).await.unwrap());
    let handed = s.new_job(spec(JobKind::Simulate, "ann", 1, "k2")).await;
    assert_eq!(
        s.queue
            .get(&handed.id)
            .await
            .unwrap()
            .unwrap()
            .worker
            .as_deref(),
        Some("h-1-abc-0/1")
    );
    // A live process's idle slot, which stays.
    assert!(!s.queue.idle("h-2-def-0/0", Pool::General).await.unwrap());
    let mut live_woken = s.queue.slot_wake("h-2-def-0/0");
    // What up does when its child dies: the idle slots first, then the running jobs.
    s.queue.retire_idle_of("h-1-abc-").await.unwrap();
    let jobs = s.queue.running_of("h-1-abc-").await.unwrap();
    assert_eq!(jobs.len(), 2);
    let failure = Failure::new(FailureCode::Cancelled, "the worker process ended");
    assert_eq!(
        s.queue.fail_running(&taken.id, &failure).await.unwrap(),
        Abandoned::Failed
    );
    assert_eq!(
        s.queue.fail_running(&handed.id, &failure).await.unwrap(),
        Abandoned::PutBack
    );
    assert_eq!(
        s.queue.fail_running(&handed.id, &failure).await.unwrap(),
        Abandoned::NotRunning
    );
    let failed = s.queue.get(&taken.id).await.unwrap().unwrap();
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(failed.charged_seconds, running.record.charged_seconds);
    let back = s.queue.get(&handed.id).await.unwrap().unwrap();
    assert_eq!(back.state, JobState::Queued);
    assert_eq!(back.charged_seconds, 0);
    assert_fair_counts(&s, "after the put-back").await;
    // The put-back woke the live idle slot, as an admission would (its idle refresh or the
    // next completion would find the job a second or more later); the dead one is never
    // popped again.
    tokio::time::timeout(Duration::from_secs(10), live_woken.changed())
        .await
        .expect("the put-back wakes an idle slot");
    assert_eq!(live_woken.payload().as_deref(), Some(handed.id.as_str()));
    let idle: Vec<String> = redis::cmd("ZRANGE")
        .arg("t:queue:handoff:general")
        .arg(0)
        .arg(-1)
        .query_async(&mut s.raw().await)
        .await
        .unwrap();
    assert!(idle.is_empty(), "the woken slot was popped: {idle:?}");
    let c = s.queue.claim("h-2-def-0/0").await.unwrap().unwrap();
    assert_eq!(c.record.id, handed.id);
    assert!(s
        .queue
        .complete_job(&c.record, c.token, Ok(won(true)))
        .await
        .unwrap());
    let today = s.queue.today().await.unwrap();
    assert_eq!(
        today.seconds_charged,
        running.record.charged_seconds + c.record.charged_seconds
    );
    assert_eq!(today.admitted.get("simulate"), Some(&2));
}

/// A job handed to a slot in the same millisecond as the slot's last claim (a job that ran in
/// under a millisecond), or after Redis's clock stepped back, is still one the slot takes up:
/// its token is newer than every claim the slot knows. Its token was the admission's time,
/// no newer than the slot's newest, so the slot took its wake-up for a hand-off it had run
/// already and its idle refresh did not find it (`newer_than`): the job waited for its lease
/// to run out (the queue benchmark crawled at 200 jobs/s). Redis's clock is set back here
/// (the store's offset) to make the same millisecond certain.
#[tokio::test]
async fn a_hand_off_in_the_millisecond_of_the_slots_last_claim_is_taken_up() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    let first = s.new_job(spec(JobKind::Simulate, "ann", 1, "k1")).await;
    let c1 = s
        .queue
        .claim_slot("w/0", Pool::General, false)
        .await
        .unwrap()
        .expect("the first job");
    assert_eq!(c1.record.id, first.id);
    let done = s
        .queue
        .complete_slot(
            &c1.record,
            c1.token,
            Ok(won(true)),
            Some(("w/0", Pool::General)),
        )
        .await
        .unwrap();
    assert_eq!(done, Completion::Idle);
    // The admission's clock is no later than the slot's last claim.
    s.queue.store().set_clock_offset_ms(-5_000);
    let mut woken = s.queue.slot_wake("w/0");
    let second = s.new_job(spec(JobKind::Simulate, "bob", 1, "k2")).await;
    tokio::time::timeout(Duration::from_secs(10), woken.changed())
        .await
        .expect("the wake-up");
    let message = woken.payload().expect("a message");
    let token = horst_queue::handed_token(&message).expect("a hand-off");
    assert!(
        token > c1.token,
        "the hand-off's token {token} is not newer than the slot's last claim {}: the slot takes it for one it ran",
        c1.token
    );
    // Its idle refresh finds it too (the wake-up unheard).
    let IdleLook::Handed(claim) = s
        .queue
        .idle_look("w/0", Pool::General, true, c1.token)
        .await
        .unwrap()
    else {
        panic!("the slot's refresh did not find the job handed to it")
    };
    assert_eq!(
        (claim.record.id.as_str(), claim.token),
        (second.id.as_str(), token)
    );
    s.queue
        .complete_slot(&claim.record, claim.token, Ok(won(true)), None)
        .await
        .unwrap();
    assert_eq!(
        s.queue.get(&second.id).await.unwrap().unwrap().state,
        JobState::Succeeded
    );
}

/// Admits every spec at once (each in a task of its own), answers in their order.
async fn admit_all(queue: &Queue, specs: Vec<JobSpec>) -> Vec<Result<Admission, QueueError>> {
    futures_join(
        specs
            .into_iter()
            .map(|sp| {
                let q = queue.clone();
                async move { q.admit(sp).await }
            })
            .collect(),
    )
    .await
}

/// Admissions sent while one is in flight go to Redis together (group commit,
/// `admit_many.lua`), and each is answered as if it had been sent alone: new jobs, an
/// account's second waiting job refused, a replay, a conflict, and one whose run raises an
/// error (its idempotency key holds a hash) answered with that error while the others of
/// its call go on.
#[tokio::test]
async fn admissions_sent_together_are_each_answered_as_if_alone() {
    let s = setup_with(|q| q.queue.waiting_per_account = 1).await;
    // Alone first: it also reads the quotas, which the spawned admissions then find cached.
    let first = s.new_job(spec(JobKind::Simulate, "r", 1, "rk")).await;
    let mut raw = s.raw().await;
    let bad_key = s
        .queue
        .store()
        .key_in(horst_store::Group::Queue, "idem:bad:k");
    let _: () = redis::cmd("HSET")
        .arg(&bad_key)
        .arg("not")
        .arg("a string")
        .query_async(&mut raw)
        .await
        .unwrap();
    let mut conflicting = spec(JobKind::Simulate, "r", 1, "rk");
    conflicting.input.map = "other".into();
    let mut specs = vec![
        spec(JobKind::Simulate, "b", 1, "b1"),
        spec(JobKind::Simulate, "b", 1, "b2"),
        spec(JobKind::Simulate, "r", 1, "rk"),
        conflicting,
        spec(JobKind::Simulate, "bad", 1, "k"),
    ];
    for i in 0..6 {
        specs.push(spec(JobKind::Playtest, &format!("n{i}"), 1, "k"));
    }
    let (calls_before, _) = s.queue.admission_calls();
    // On this test's one thread every spawned admission reaches the group before the task
    // that sends it runs: one call carries them all.
    let answers = admit_all(&s.queue, specs).await;
    let (calls, carried) = s.queue.admission_calls();
    assert_eq!(
        (calls - calls_before, carried),
        (1, 12),
        "11 admissions in one call"
    );
    assert!(is_new(&answers[0]), "{:?}", answers[0]);
    assert!(
        matches!(
            &answers[1],
            Err(QueueError::Busy {
                waiting_job_id: Some(_),
                ..
            })
        ),
        "the account's second waiting job, after its first in the same call: {:?}",
        answers[1]
    );
    match &answers[2] {
        Ok(Admission::Replayed(r)) => assert_eq!(r.id, first.id),
        other => panic!("a replay: {other:?}"),
    }
    assert!(
        matches!(&answers[3], Err(QueueError::Conflict { .. })),
        "{:?}",
        answers[3]
    );
    match &answers[4] {
        Err(QueueError::Store(m)) => assert!(m.contains("WRONGTYPE"), "{m}"),
        other => panic!("the admission whose key holds a hash: {other:?}"),
    }
    // The global cap of 8 keeps its last 2 places for referee work: with 6 waiting (r's
    // and b's simulations, then four playtests), the last two playtests are refused.
    assert!(answers[5..9].iter().all(is_new), "{answers:?}");
    for refused in &answers[9..] {
        match refused {
            Err(QueueError::Busy { message, .. }) => {
                assert!(message.contains("kept for simulations"), "{message}")
            }
            other => panic!("a playtest past the planner's places: {other:?}"),
        }
    }
    assert_eq!(s.queue.depth().await.unwrap().0, 6);
    let (bad_jobs, _) = s.queue.list("bad", 0, 10).await.unwrap();
    assert!(bad_jobs.is_empty(), "{bad_jobs:?}");
    let left = s.queue.remaining("b", 1).await.unwrap();
    assert_eq!(
        left.simulations,
        QuotaConfig::default().trust1.simulations as u64 - 1,
        "b charged once"
    );
}

/// A call of several admissions reads Redis's clock once (the prelude's `now_ms`): the
/// group is one step, and a `TIME` for each admission in it was a command a job.
#[tokio::test]
async fn a_call_of_admissions_reads_the_clock_once() {
    let s = setup_with(|q| q.queue.waiting_per_account = 10).await;
    // The quotas read once (the spawned admissions then reach the group together).
    s.queue.remaining("x", 1).await.unwrap();
    let mut raw = s.raw().await;
    let stats = |raw: &mut redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query_async(&mut raw)
                .await
                .unwrap();
            let calls = horst_testkit::command_calls(&info);
            let n = |c: &str| calls.get(c).copied().unwrap_or(0);
            (n("time"), n("evalsha") + n("eval"))
        }
    };
    let (time0, scripts0) = stats(&mut raw).await;
    let (calls0, _) = s.queue.admission_calls();
    let answers = admit_all(
        &s.queue,
        (0..6)
            .map(|i| spec(JobKind::Simulate, &format!("a{i}"), 1, "k"))
            .collect(),
    )
    .await;
    assert!(answers.iter().all(is_new), "{answers:?}");
    assert_eq!(s.queue.admission_calls().0 - calls0, 1, "one call");
    let (time, scripts) = stats(&mut raw).await;
    // Each script call (this one, and any of the housekeeping meanwhile) reads it at most once.
    assert!(
        time - time0 <= scripts - scripts0,
        "{} TIME in {} script calls",
        time - time0,
        scripts - scripts0
    );
}

/// At maxmemory, a replay and a new job sent in one call: the replay is answered, the new
/// job refused as unavailable (Redis's `OOM`, as for a call of its own), nothing of it kept.
#[tokio::test]
async fn a_call_of_admissions_at_maxmemory_answers_each_as_alone() {
    let s = setup_with(|_| {}).await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let mut conn = s.raw().await;
    set_maxmemory(&mut conn, "1").await;
    let answers = admit_all(
        &s.queue,
        vec![
            spec(JobKind::Simulate, "a", 1, "k"),
            spec(JobKind::Simulate, "b", 1, "k-new"),
            spec(JobKind::Simulate, "c", 1, "k-new"),
        ],
    )
    .await;
    set_maxmemory(&mut conn, "0").await;
    assert_eq!(
        s.queue.admission_calls(),
        (2, 4),
        "3 admissions in one call"
    );
    match &answers[0] {
        Ok(Admission::Replayed(r)) => assert_eq!(r.id, job.id),
        other => panic!("a replay at maxmemory: {other:?}"),
    }
    for fresh in &answers[1..] {
        assert!(
            matches!(fresh, Err(QueueError::Unavailable(_))),
            "a new job at maxmemory: {fresh:?}"
        );
    }
    s.new_job(spec(JobKind::Simulate, "b", 1, "k-new")).await;
    s.new_job(spec(JobKind::Simulate, "c", 1, "k-new")).await;
}

/// A call of several admissions whose answer is unclear (the script ran, then the
/// replicas' `WAIT` failed): every caller of it is told the admission failed, and none of
/// their jobs is left to run or be charged.
#[tokio::test]
async fn a_call_of_admissions_that_failed_unclearly_leaves_none_queued_or_charged() {
    let redis = RedisServer::start();
    let (queue, _stop) = unacknowledged_queue(&redis).await;
    // The quotas read once (the spawned admissions then reach the group together).
    queue.remaining("x", 1).await.unwrap();
    let answers = futures_join(
        (0..5)
            .map(|i| {
                let q = queue.clone();
                async move {
                    q.admit(spec(JobKind::Simulate, &format!("a{i}"), 1, "unclear"))
                        .await
                }
            })
            .collect(),
    )
    .await;
    assert!(answers.iter().all(|a| a.is_err()), "{answers:?}");
    let (plain_queue, _plain_stop) = queue_on(&redis.url(), |_| {}).await;
    assert_eq!(
        plain_queue.depth().await.unwrap().0,
        0,
        "nothing left queued"
    );
    assert_eq!(
        queue.admission_calls(),
        (1, 5),
        "five admissions in one call"
    );
    for i in 0..5 {
        let account = format!("a{i}");
        let (jobs, _) = plain_queue.list(&account, 0, 10).await.unwrap();
        assert!(jobs.iter().all(|j| j.state != JobState::Queued), "{jobs:?}");
        let left = plain_queue.remaining(&account, 1).await.unwrap();
        let full = QuotaConfig::default().trust1.simulations as u64;
        assert_eq!(left.simulations, full, "nothing charged");
        assert!(is_new(
            &plain_queue
                .admit(spec(JobKind::Simulate, &account, 1, "unclear"))
                .await
        ));
    }
}

/// `jobs` new jobs of as many accounts (their ids in order), and the first ones claimed by
/// `slots` in turn.
async fn queued_and_claimed(s: &Setup, jobs: usize, slots: &[&str]) -> (Vec<String>, Vec<Claim>) {
    let mut ids = Vec::new();
    for i in 0..jobs {
        ids.push(
            s.new_job(spec(JobKind::Simulate, &format!("a{i}"), 1, "k"))
                .await
                .id,
        );
    }
    let mut claims = Vec::new();
    for slot in slots {
        claims.push(
            s.queue
                .claim_slot(slot, Pool::General, false)
                .await
                .unwrap()
                .unwrap(),
        );
    }
    (ids, claims)
}

/// Slot `slot` completes `claim` (won or lost) and claims its next job, in a task of its own:
/// what the completion says, and the next job's id.
fn spawn_completion(
    queue: &Queue,
    claim: &Claim,
    slot: &'static str,
    won_it: bool,
) -> tokio::task::JoinHandle<Result<(Completion, Option<String>), QueueError>> {
    let (q, c) = (queue.clone(), claim.clone());
    tokio::spawn(async move {
        q.complete_and_claim(
            &c.record,
            c.token,
            Ok(won(won_it)),
            (slot, Pool::General),
            true,
        )
        .await
        .map(|(done, next)| (done, next.map(|n| n.record.id)))
    })
}

/// Completions sent while one is in flight go to Redis together (`complete_many.lua`), each
/// as if alone: three slots' completions each record their job and claim the next one (a
/// different one each, in their order), while a second completion of the first job in the
/// same call is refused: nothing is recorded twice or claimed for it.
#[tokio::test]
async fn completions_sent_together_are_each_fenced_and_claim_in_turn() {
    let s = setup_with(|q| q.queue.waiting_global = 20).await;
    let (ids, claims) = queued_and_claimed(&s, 7, &["w/0", "w/1", "w/2", "w/3"]).await;
    let (calls_before, carried_before) = s.queue.completion_calls();
    let mut tasks: Vec<_> = claims[..3]
        .iter()
        .zip(["w/0", "w/1", "w/2"])
        .map(|(c, slot)| spawn_completion(&s.queue, c, slot, true))
        .collect();
    tasks.push(spawn_completion(&s.queue, &claims[0], "w/3", false));
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap().unwrap());
    }
    let (calls, carried) = s.queue.completion_calls();
    assert_eq!(
        (calls - calls_before, carried - carried_before),
        (1, 4),
        "four completions in one call"
    );
    // The three recorded, each claimed the next waiting job: the 5th, 6th and 7th, in turn.
    for (i, (done, next)) in answers[..3].iter().enumerate() {
        assert_eq!(*done, Completion::Recorded);
        assert_eq!(next.as_deref(), Some(ids[4 + i].as_str()), "{answers:?}");
        let r = s.queue.get(&ids[i]).await.unwrap().unwrap();
        assert_eq!(r.state, JobState::Succeeded);
    }
    // The second completion of the first job: refused, its first result kept.
    assert_eq!(answers[3], (Completion::Refused, None));
    let r = s.queue.get(&ids[0]).await.unwrap().unwrap();
    assert_eq!(r.result, Some(won(true)));
    // The fourth slot's job still runs under its claim.
    let r = s.queue.get(&ids[3]).await.unwrap().unwrap();
    assert_eq!(r.state, JobState::Running);
    assert_eq!(s.queue.depth().await.unwrap().0, 0);
}

/// A queued record holds no `charged` field: nothing is charged until a claim writes the
/// reservation as its charge, and a missing field reads as 0 (`JobRecord`, put_back). Each
/// argument a job writes costs Redis about 2,000 instructions (docs/benchmarks.md, "Where a
/// job's 711,000 Redis instructions go"). Failed before: admission wrote `charged` `'0'`.
#[tokio::test]
async fn a_queued_record_holds_no_charge_until_its_claim() {
    let s = setup_with(|_| {}).await;
    let raw = s.raw().await;
    let job = s.new_job(spec(JobKind::Simulate, "a", 1, "k")).await;
    let charged = || {
        let (mut raw, key) = (raw.clone(), format!("t:job:{}", job.id));
        async move {
            let v: Option<String> = redis::cmd("HGET")
                .arg(key)
                .arg("charged")
                .query_async(&mut raw)
                .await
                .unwrap();
            v
        }
    };
    assert_eq!(charged().await, None, "a queued record's charge");
    let queued = s.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(queued.charged_seconds, 0);
    let claim = s.queue.claim("w/0").await.unwrap().unwrap();
    assert_eq!(claim.record.id, job.id);
    assert_eq!(
        charged().await,
        Some(job.reserved_seconds.to_string()),
        "the claim's charge"
    );
}

/// An admission that reaches Redis only after its caller stopped waiting for the answer: a
/// partition held the request past the call's timeout (5 s) and delivered it when it healed,
/// as TCP does (`horst_testkit::Cut`). The caller was told the store could not be reached,
/// and the drop of an unclear admission could not reach it either; the late script must then
/// take and queue nothing, or the job runs and is charged for a caller told it failed (who
/// may never call again). With the heal, the process admits as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admission_that_reaches_redis_after_its_caller_gave_up_admits_nothing() {
    let redis = RedisServer::start();
    let cut = horst_testkit::Cut::start(redis.port()).await;
    let (queue, _stop) = queue_on(&cut.url(), |_| {}).await;
    let (observer, _observer_stop) = queue_on(&redis.url(), |_| {}).await;
    // A process that has been admitting.
    let first = queue
        .admit_for_caller(spec(JobKind::Simulate, "ada", 1, "cut-1"))
        .await;
    assert!(is_new(&first), "{first:?}");
    let before = observer.remaining("bea", 1).await.unwrap();

    cut.cut();
    let late = queue
        .admit_for_caller(spec(JobKind::Simulate, "bea", 1, "cut-2"))
        .await;
    assert!(matches!(late, Err(QueueError::Unavailable(_))), "{late:?}");
    cut.heal();
    // What the cut held reaches Redis now; a call sent after the heal is answered after it
    // on the same connection, and the window covers a connection made again.
    let mut answered = false;
    for _ in 0..100 {
        answered = queue.remaining("bea", 1).await.is_ok();
        if answered {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered, "the process never reached Redis again");
    let mut admitted = false;
    for _ in 0..50 {
        admitted = observer
            .has_idempotency_record("bea", "cut-2")
            .await
            .unwrap();
        if admitted {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!admitted, "the late admission queued a job");
    assert_eq!(observer.remaining("bea", 1).await.unwrap(), before);
    assert_eq!(observer.depth().await.unwrap().0, 1, "ada's job only");

    // Healed, the same key admits at once.
    let again = queue
        .admit_for_caller(spec(JobKind::Simulate, "bea", 1, "cut-2"))
        .await;
    assert!(is_new(&again), "{again:?}");
}

/// A process keeps two completion calls in the air at once and no more (`CallGroup`'s
/// flights): with Redis holding every script (`CLIENT PAUSE WRITE`), a slot's completion is
/// sent while another slot's is in the air, a third waits for one of them to land; once Redis
/// runs them, each is fenced and claims its slot's next job in the order the calls were sent.
/// With one flight (before) the second completion waited for the first's answer.
#[tokio::test]
async fn two_completion_calls_fly_at_once_and_claim_in_the_order_sent() {
    let s = setup_with(|q| q.queue.waiting_global = 20).await;
    let slots = ["w/0", "w/1", "w/2"];
    let (ids, claims) = queued_and_claimed(&s, 6, &slots).await;
    let mut raw = s.raw().await;
    let (calls0, carried0) = s.queue.completion_calls();
    let overlaps0 = s.queue.completion_overlaps();
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(10_000)
        .arg("WRITE")
        .query_async(&mut raw)
        .await
        .unwrap();
    let blocked = |raw: &redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        async move {
            let info: String = redis::cmd("INFO")
                .arg("clients")
                .query_async(&mut raw)
                .await
                .unwrap();
            info.lines()
                .find_map(|l| l.strip_prefix("blocked_clients:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap()
        }
    };
    let mut tasks = Vec::new();
    for (claim, slot) in claims.iter().zip(slots) {
        tasks.push(spawn_completion(&s.queue, claim, slot, true));
        // Each call is sent (the first reaches Redis and is held there) before the next starts.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while s.queue.completion_calls().0 - calls0 < tasks.len().min(2) as u64
            || blocked(&raw).await == 0
        {
            assert!(
                std::time::Instant::now() < deadline,
                "completion {} was not sent: {:?} calls",
                tasks.len(),
                s.queue.completion_calls()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    // A moment for a third flight, if there were one, to be sent too.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (calls, carried) = s.queue.completion_calls();
    let overlaps = s.queue.completion_overlaps() - overlaps0;
    let _: () = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(
        (calls - calls0, carried - carried0, overlaps),
        (2, 2, 1),
        "two completions in the air at once, each alone, the third waiting"
    );
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap().unwrap());
    }
    // The third went after one of the two landed; each claimed the next waiting job in turn.
    assert_eq!(s.queue.completion_calls().0 - calls0, 3);
    for (i, (done, next)) in answers.iter().enumerate() {
        assert_eq!(*done, Completion::Recorded, "{answers:?}");
        assert_eq!(next.as_deref(), Some(ids[3 + i].as_str()), "{answers:?}");
        let r = s.queue.get(&ids[i]).await.unwrap().unwrap();
        assert_eq!(r.state, JobState::Succeeded);
    }
    assert_eq!(s.queue.depth().await.unwrap().0, 0);
}

/// A slow link to Redis (every chunk held 100 ms each way, a round trip of 200 ms: Redis in
/// another region, or a congested network) with a full queue. The housekeeping's round
/// notes the server's clock once (expired.lua), and a gap of more than `STALL_AFTER` (3 s)
/// between notes is a stall, over which no lease is reaped. The round read each waiting
/// job's record and its caller's presence one round trip after another: 30 waiting jobs made
/// a round of 60 round trips (12 s here), every gap a stall, and a dead worker's job was
/// never reaped while the queue stayed full (its caller waited on; its slot counted busy).
/// The same with a fast link and a queue of thousands (`queue.waiting_global` raised).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_link_to_redis_with_a_full_queue_still_reaps_a_dead_workers_lease() {
    let redis = RedisServer::start();
    let wide = |q: &mut QueueSettings| {
        q.queue.lease_seconds = 2;
        q.queue.waiting_global = 40;
    };
    // The callers' API process, on a fast link: its presence lives throughout.
    let (api, _api_stop) = queue_on(&redis.url(), wide).await;
    let (presence_stop, presence) = watch::channel(false);
    tokio::spawn(api.clone().announce_callers(presence));
    let dead = api
        .admit_for_caller(spec(JobKind::Simulate, "dead", 1, "d"))
        .await
        .unwrap();
    let Admission::New(dead) = dead else {
        panic!("{dead:?}")
    };
    let claim = api.claim("dying").await.unwrap().unwrap();
    assert_eq!(claim.record.id, dead.id);
    for i in 0..30 {
        let a = api
            .admit_for_caller(spec(JobKind::Simulate, &format!("acct{i}"), 1, "k"))
            .await;
        assert!(is_new(&a), "{a:?}");
    }

    // The process whose housekeeping runs, on the slow link.
    let link = horst_testkit::Cut::start(redis.port()).await;
    let (slow, _slow_stop) = queue_on(&link.url(), wide).await;
    link.set_delay(Duration::from_millis(100));
    let started = tokio::time::Instant::now();
    let mut reaped_after = None;
    // The worker's housekeeping, round after round (horst_worker::housekeeping).
    while started.elapsed() < Duration::from_secs(20) {
        let reaped = slow.reap().await.unwrap();
        assert!(
            slow.drop_orphans().await.unwrap().is_empty(),
            "the callers live"
        );
        slow.sweep_fair().await.unwrap();
        if reaped.contains(&dead.id) {
            reaped_after = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(HOUSEKEEPING_EVERY).await;
    }
    let _ = presence_stop.send(true);
    let reaped_after = reaped_after.unwrap_or_else(|| {
        panic!("the dead worker's job was not reaped in 20 s of housekeeping over the slow link (lease 2 s)")
    });
    eprintln!(
        "reaped {:.1} s into the housekeeping",
        reaped_after.as_secs_f64()
    );
    let record = api.get(&dead.id).await.unwrap().unwrap();
    assert_eq!(record.failure.unwrap().code, "cancelled");
    assert_eq!(api.depth().await.unwrap().0, 30, "the waiting jobs wait on");
}

/// A one-way partition: the requests of a process reach Redis and run, their answers are
/// held (`Cut::hold_replies`) past the call's timeout. An admission whose answer is held ran,
/// and its caller, told the store could not be reached, is not charged for a job it never
/// heard of: the drop of the unclear admission reaches Redis too and releases it, and the
/// same key admits afresh after the heal. A completion whose answer is held was recorded;
/// its retry after the heal is refused (the job ended) and the record is the first
/// completion's, charged once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_held_on_a_one_way_partition_leave_no_job_charged_unheard_or_recorded_twice() {
    let redis = RedisServer::start();
    let link = horst_testkit::Cut::start(redis.port()).await;
    let (queue, _stop) = queue_on(&link.url(), |_| {}).await;
    let (observer, _observer_stop) = queue_on(&redis.url(), |_| {}).await;
    let first = queue
        .admit_for_caller(spec(JobKind::Simulate, "ada", 1, "held-0"))
        .await;
    assert!(is_new(&first), "{first:?}");
    let before = observer.remaining("bea", 1).await.unwrap();

    link.hold_replies();
    let held = queue
        .admit_for_caller(spec(JobKind::Simulate, "bea", 1, "held-1"))
        .await;
    assert!(matches!(held, Err(QueueError::Unavailable(_))), "{held:?}");
    // Its admission and the drop after it ran in Redis while the answers waited.
    assert!(!observer
        .has_idempotency_record("bea", "held-1")
        .await
        .unwrap());
    assert_eq!(observer.remaining("bea", 1).await.unwrap(), before);
    link.heal();
    let mut again = Err(QueueError::Store("not tried".into()));
    for _ in 0..100 {
        again = queue
            .admit_for_caller(spec(JobKind::Simulate, "bea", 1, "held-1"))
            .await;
        if again.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let Ok(Admission::New(job)) = again else {
        panic!("the same key after the heal: {again:?}")
    };

    // A worker on the partitioned link completes a job; the answer is held. (Its first job,
    // ada's, completes first: a worker's completion script is known to the server, as it is
    // after a worker's first job.)
    let ada = queue.claim("w").await.unwrap().expect("ada's job");
    assert_ne!(ada.record.id, job.id);
    let done = queue
        .complete_slot(&ada.record, ada.token, Ok(won(true)), None)
        .await
        .unwrap();
    assert_eq!(done, Completion::Recorded);
    let claim = queue.claim("w").await.unwrap().expect("bea's job");
    assert_eq!(claim.record.id, job.id);
    link.hold_replies();
    let unheard = queue
        .complete_slot(&claim.record, claim.token, Ok(won(true)), None)
        .await;
    assert!(
        unheard.is_err(),
        "answered through the held link: {unheard:?}"
    );
    let recorded = observer.get(&job.id).await.unwrap().unwrap();
    assert_eq!(recorded.state, JobState::Succeeded, "{recorded:?}");
    link.heal();
    let mut retried = None;
    for _ in 0..100 {
        let again = queue
            .complete_slot(&claim.record, claim.token, Ok(won(false)), None)
            .await;
        if let Ok(r) = again {
            retried = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        retried,
        Some(Completion::Refused),
        "the retry is refused: the job ended"
    );
    let last = observer.get(&job.id).await.unwrap().unwrap();
    assert_eq!(last.state, JobState::Succeeded);
    assert_eq!(
        last.result, recorded.result,
        "the first completion's result"
    );
    assert_eq!(last.charged_seconds, recorded.charged_seconds);
    assert_eq!(last.finished_at_ms, recorded.finished_at_ms);
}
