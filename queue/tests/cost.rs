//! What one job costs Redis (issue 35, item 5), on the test's own redis-server with nothing
//! else talking to it: a caller admits a job and waits for it in this process (as a blocking
//! tool call does), a slot claims it, runs nothing and completes it (as the worker's slot
//! loop does). `INFO commandstats` around the jobs counts every command, those run inside
//! scripts too (an EVALSHA of a script that runs six commands counts seven).
//!
//! The budget here is what the queue does now, so that a change that adds commands to the
//! hot path fails; issue 35's target is 25 (docs/scaling.md, "Cost per job").

use std::collections::BTreeMap;
use std::time::Duration;

use horst_config::{QueueConfig, QuotaConfig};
use horst_queue::*;
use horst_store::Store;
use horst_testkit::RedisServer;
use tokio::sync::watch;

const JOBS: u64 = 40;

/// Commands per job at most, sequential jobs (see the module's note): 49.5 measured in issue
/// 35's third round (the claim in one script), 45.5 with `queue:fair` (the waiting counts in
/// the turns' hash, the owed turns read only when some may be kept), 43.4 with the accounts'
/// daily counts in the day's budget hash, 40.4 with the lanes' count in `queue:fair` (no
/// `ZCARD`s) and the claim's one write of it, 38.45 with the live slots' sum and the pools'
/// latest ends kept in `queue:fair` (admission reads neither `queue:slots` nor the ends),
/// 36.45 with the running jobs' ends read from their records when they are needed (no
/// `queue:ends:<pool>` for the claim to add to and the completion to take from), 34.45 with
/// the claim's time as the fencing token (no counter) and no look for a young job's waiter,
/// 32.45 with the idempotency key taken and read in one `SET NX GET` and the lanes' heads
/// taken off with their look (`ZPOPMIN`, no `ZRANGE` then `ZREM`), 31.45 with the completion
/// fenced by the job's running entry (no read of the record), 30.45 with the day's charge
/// kept in `queue:fair` (written with the claim's turns, no `HINCRBY` of its own), and 31.45
/// again with the pools' idle marks (a slot that registers idle sets its pool's mark, so
/// that admissions under load need no pop: one command more here, one less on busy workers),
/// and 30.45 with the completion's look at `queue:fair`'s count (no `EXISTS` of the lanes;
/// the pool's mark written only when it is not set already, and the finished job's count
/// with it, no `HINCRBY` of the budget hash); 21.6 with the job handed to the idle slot at
/// admission (claimed in admit.lua, the claim in the wake-up: no lane, no claim script), so
/// the budget is issue 35's target; 22.57 with the slot's take-up of the handed job (one
/// `HDEL` of its `handed` mark before it runs it, so a job handed to a slot that died is put
/// back in its lane, not reaped).
const BUDGET: f64 = 25.0;

async fn calls(conn: &mut redis::aio::MultiplexedConnection) -> BTreeMap<String, u64> {
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    horst_testkit::command_calls(&stats)
}

async fn aof_bytes(conn: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("persistence")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("aof_current_size:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("AOF on (horst's flags)")
}

/// What a sequential job cost: commands by name and in all, the bytes Redis appended to its
/// AOF (every argument a script's commands write is fed to it), and a finished record's
/// bytes (`MEMORY USAGE`).
struct Cost {
    per_job: f64,
    by: Vec<String>,
    hgetall: u64,
    aof_per_job: f64,
    record_bytes: i64,
}

#[tokio::test]
async fn a_sequential_job_stays_within_its_command_budget() {
    let cost = jobs_cost(false).await;
    println!(
        "a job: {:.2} commands ({})",
        cost.per_job,
        cost.by.join(", ")
    );
    assert!(
        cost.per_job <= BUDGET,
        "a job costs {:.2} commands, over the budget of {BUDGET}: {}",
        cost.per_job,
        cost.by.join(", ")
    );
    // Nothing read the whole record on the way, and the live workers' slots were read once
    // (the first admission sums them and keeps the sum in `queue:fair`).
    assert_eq!(cost.hgetall, 1, "no full-record read on the hot path");
}

/// The packed queued record (admit.lua: the fields written once in one) against the previous
/// release's named one (`queue.write_previous_forms`): the same commands, fewer bytes written
/// a job (Redis's AOF is fed every argument), and a smaller record.
#[tokio::test]
async fn the_packed_record_writes_fewer_bytes_a_job_than_the_named_one() {
    let named = jobs_cost(true).await;
    let packed = jobs_cost(false).await;
    for (form, c) in [("named (previous form)", &named), ("packed", &packed)] {
        println!(
            "{form}: {:.2} commands, {:.0} AOF bytes a job, a finished record {} bytes ({})",
            c.per_job,
            c.aof_per_job,
            c.record_bytes,
            c.by.join(", ")
        );
    }
    assert!(
        (packed.per_job - named.per_job).abs() < 0.5,
        "the same commands: {:.2} against {:.2}",
        packed.per_job,
        named.per_job
    );
    // 15 field names and the padding's 107 bytes fewer, less the packing's headers.
    assert!(
        packed.aof_per_job + 150.0 < named.aof_per_job,
        "packed {:.0} AOF bytes a job against named {:.0}",
        packed.aof_per_job,
        named.aof_per_job
    );
    assert!(
        packed.record_bytes < named.record_bytes,
        "a record: packed {} bytes against named {}",
        packed.record_bytes,
        named.record_bytes
    );
}

async fn jobs_cost(write_previous_forms: bool) -> Cost {
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url(), "cost:").await.unwrap();
    let (_stop, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(&store), rx);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    let queue = QueueConfig {
        waiting_global: 10_000,
        daily_seconds: 100_000_000,
        write_previous_forms,
        ..QueueConfig::default()
    };
    let queue = Queue::new(
        store,
        QueueSettings {
            queue,
            quotas: QuotaConfig::default(),
        },
        notifier,
    );
    // A live worker's slots (admission estimates the start against them) and the quotas read
    // once, as a running process has them.
    queue
        .announce_slots("cost-worker", 4, 0, Duration::from_secs(600))
        .await
        .unwrap();
    queue.quotas().await.unwrap();
    let slot = "cost-worker/0";
    let mut probe = redis::Client::open(redis.url().as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    // The slot's wake-up channel, as its worker listens: every job after the first is handed
    // to the slot its predecessor's completion registered idle, and the wake-up carries it.
    let mut woken = queue.slot_wake(slot);
    let before = calls(&mut probe).await;
    let aof_before = aof_bytes(&mut probe).await;
    let mut last = String::new();
    for n in 0..JOBS {
        let spec = JobSpec {
            kind: JobKind::Simulate,
            account: format!("acct{}", n % 4),
            trust: 2,
            idempotency_key: format!("k{n}"),
            input: JobInput::simulate(n.to_string(), serde_json::Value::Null),
        };
        let Ok(Admission::New(job)) = queue.admit_for_caller(spec).await else {
            panic!("admission refused")
        };
        let claim = if n == 0 {
            // No slot registered yet: the job waits in its lane and the slot claims it.
            queue
                .claim_slot(slot, Pool::General, false)
                .await
                .unwrap()
                .expect("the job just admitted")
        } else {
            tokio::time::timeout(Duration::from_secs(10), woken.changed())
                .await
                .expect("the idle slot's wake-up");
            let message = woken.payload().expect("a wake-up message");
            queue
                .handed(slot, &message)
                .await
                .unwrap()
                .expect("the job handed to the idle slot")
        };
        assert_eq!(claim.record.id, job.id);
        let done = queue
            .complete_slot(
                &claim.record,
                claim.token,
                Ok(JobResult::Referee(Default::default())),
                Some((slot, Pool::General)),
            )
            .await
            .unwrap();
        assert_eq!(done, Completion::Idle, "nothing else waits");
        let rec = queue.wait(&job.id, Duration::from_secs(5)).await.unwrap();
        assert_eq!(rec.state, JobState::Succeeded);
        assert_eq!(rec.started_at_ms, claim.record.started_at_ms);
        last = job.id;
    }
    let after = calls(&mut probe).await;
    // The AOF is written before the next turn's replies: the last completion's is in.
    let aof_after = aof_bytes(&mut probe).await;
    let (per_job, by) = horst_testkit::commands_per_item(&before, &after, JOBS);
    let hgetall =
        after.get("hgetall").copied().unwrap_or(0) - before.get("hgetall").copied().unwrap_or(0);
    // Every job but the first was handed to the idle slot (admit.lua's hand-off writes the
    // record too): in the form asked for.
    let fields: Vec<String> = redis::cmd("HKEYS")
        .arg(format!("cost:job:{last}"))
        .query_async(&mut probe)
        .await
        .unwrap();
    assert_eq!(
        fields.iter().any(|f| f == PACKED_FIELD),
        !write_previous_forms,
        "a handed job's record: {fields:?}"
    );
    assert_eq!(
        fields.iter().any(|f| f == "account"),
        write_previous_forms,
        "a handed job's record: {fields:?}"
    );
    let record_bytes: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(format!("cost:job:{last}"))
        .arg("SAMPLES")
        .arg(0)
        .query_async(&mut probe)
        .await
        .unwrap();
    Cost {
        per_job,
        by,
        hgetall,
        aof_per_job: (aof_after - aof_before) as f64 / JOBS as f64,
        record_bytes,
    }
}
