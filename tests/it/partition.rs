//! One process cut off from Redis while the others still reach it (a network partition, not a
//! stall: docs/reliability.md, "One process cut off from Redis"). Real `horst` processes and a
//! real redis-server; the cut process reaches Redis through a proxy the test cuts
//! (`horst_testkit::Cut`), which holds what was sent and delivers it when the cut heals, as
//! TCP does.

use std::time::{Duration, Instant};

use horst_queue::JobState;
use horst_testkit::Cut;
use serde_json::json;

use crate::harness::{eventually, HorstProcess, LEVEL_MAP};
use crate::reliability::{
    api_process, assert_still_reaped, call, hard_map, newest_job, outside, running_job,
    until_state, Outside,
};
use crate::stall::simulation;

const LONG: Duration = Duration::from_secs(90);

/// An API process cut off from Redis with a caller waiting in it for a queued job. The
/// caller is answered `pending` with the job's id (the process cannot read the job any more);
/// the others see the process's presence lapse and drop the job: never run, nothing charged,
/// its key given back, and whoever reads the job is told that the process lost Redis (not only
/// that it "stopped": it still answers) and to call again with the same key, which then
/// admits the job afresh and runs it once. After the heal the cut process answers the key
/// from that one job.
async fn an_api_process_cut_off_from_redis_drops_its_queued_job_uncharged_and_says_why() {
    let Outside {
        redis,
        store,
        queue,
        key,
        before,
        dir,
        ..
    } = outside("wren").await;
    let cut = Cut::start(redis.port()).await;
    let mut a = HorstProcess::spawn(
        &["api", "--redis", &cut.url(), "--listen", "127.0.0.1:0"],
        &[("HORST_GATEWAY_MODE", "on")],
        dir.path(),
    );
    let a_addr = a.wait_listening();
    // B admits the long search below with 30 s, so it holds the one general slot well past
    // the drop (about 10 s after the cut) on a loaded machine.
    let mut b = api_process(
        &redis,
        dir.path(),
        &[("HORST_QUEUE_PLAYTEST_SECONDS", "30")],
    );
    let b_addr = b.wait_listening();
    // One general slot, held by a long search of the same account's: the caller's playtest
    // waits in its lane (a worker serves it, so it is not dropped for want of one).
    let worker = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &[], dir.path());
    let hard = tokio::spawn({
        let key = key.clone();
        async move {
            let args = json!({"map": hard_map(), "idempotencyKey": "wren-hard"});
            call(b_addr, "playtest_map", args, &key).await
        }
    });
    let hard_job = running_job(&store, "wren", &worker).await;

    let args = json!({"map": LEVEL_MAP, "idempotencyKey": "wren-cut"});
    let caller = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(a_addr, "playtest_map", args, &key).await }
    });
    let mut job = None;
    assert!(
        eventually(LONG, async || {
            job = newest_job(&store, "wren").await.filter(|j| *j != hard_job);
            job.is_some()
        })
        .await
    );
    let job = job.unwrap();
    assert_eq!(
        queue.get(&job).await.unwrap().unwrap().state,
        JobState::Queued
    );

    cut.cut();
    let cut_at = Instant::now();
    let (status, first, _) = caller.await.unwrap();
    let answered_after = cut_at.elapsed();
    assert_eq!(status, 200, "{first}\n{}", a.stderr());
    assert_eq!(first["pending"], true, "{first}");
    assert_eq!(first["jobId"], job.as_str(), "{first}");

    let dropped = until_state(&queue, &job, JobState::Cancelled).await;
    let dropped_after = cut_at.elapsed();
    assert!(dropped, "the job was not dropped: {}", b.stderr());
    let record = queue.get(&job).await.unwrap().unwrap();
    assert!(record.started_at_ms.is_none(), "it never ran: {record:?}");
    assert_eq!(record.charged_seconds, 0, "{record:?}");
    let failure = record.failure.clone().unwrap();
    assert_eq!(failure.code, "cancelled");
    for says in [
        "lost its connection to the job store",
        "nothing was charged",
        "the same idempotencyKey starts afresh",
    ] {
        assert!(failure.message.contains(says), "{says:?}: {failure:?}");
    }
    assert!(!queue
        .has_idempotency_record("wren", "wren-cut")
        .await
        .unwrap());

    // Meanwhile the cut process answers a new call 503 with Retry-After, never 500.
    let (busy_status, busy, headers) =
        call(a_addr, "simulate_replay", simulation("wren-cut-2"), &key).await;
    assert_eq!(busy_status, 503, "{busy}");
    assert!(!headers["retryAfter"].is_null(), "{headers}");

    // The caller does what it was told: the same key again (on the process it still
    // reaches: here B). A second worker runs it at once.
    let _second = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &[], dir.path());
    let (again_status, again, _) = call(b_addr, "playtest_map", args.clone(), &key).await;
    assert_eq!(again_status, 200, "{again}");
    assert!(again.get("error").is_none(), "{again}");
    let rerun = again["jobId"].as_str().unwrap().to_string();
    assert_ne!(rerun, job, "admitted afresh");

    // Healed: the cut process answers the key from that one job.
    cut.heal();
    let mut replayed = json!(null);
    let answers = eventually(LONG, async || {
        let (s, got, _) = call(a_addr, "playtest_map", args.clone(), &key).await;
        replayed = got;
        s == 200 && replayed["jobId"] == rerun.as_str()
    })
    .await;
    assert!(answers, "{replayed}\n{}", a.stderr());
    assert_eq!(replayed["replayed"], true, "{replayed}");
    eprintln!(
        "figure: API cut off from Redis with a caller waiting for a queued playtest: the caller answered pending {:.1} s after the cut; the job dropped {:.1} s after it (presence 10 s): cancelled, uncharged; the same key on the other API process ran it afresh ({}); after the heal the cut process answered the key from it",
        answered_after.as_secs_f64(),
        dropped_after.as_secs_f64(),
        rerun,
    );
    // The dropped job stayed dropped; two playtests charged (the long one and the rerun).
    let last = queue.get(&job).await.unwrap().unwrap();
    assert_eq!(last.state, JobState::Cancelled, "{last:?}");
    assert!(last.started_at_ms.is_none(), "{last:?}");
    let charged = |id: String| {
        let queue = queue.clone();
        async move { queue.get(&id).await.unwrap().unwrap().charged_seconds }
    };
    let spent = charged(hard_job).await + charged(rerun).await;
    assert!(spent > 0);
    let now = queue.remaining("wren", 1).await.unwrap();
    assert_eq!(now.playtests, before.playtests - 2, "{before:?} {now:?}");
    assert_eq!(now.seconds, before.seconds - spent, "{before:?} {now:?}");
    hard.abort();
}

/// A worker cut off from Redis in the middle of a playtest, past its lease (2 s): for the
/// others it is a dead worker, and the job is reaped as the contract says (`cancelled`,
/// charged once, never run again). The caller is told that the worker stopped or lost its
/// connection to Redis (not only that it "stopped": it ran on) and how to run the job again.
/// When the cut heals, what the worker sent meanwhile reaches Redis late and changes nothing:
/// it hears its lease is gone, drops its result, and runs the next job.
async fn a_worker_cut_off_from_redis_loses_its_job_once_and_its_caller_is_told_why() {
    let Outside {
        redis,
        store,
        queue,
        key,
        before,
        dir,
        ..
    } = outside("tern").await;
    let lease = [("HORST_QUEUE_LEASE_SECONDS", "2")];
    let mut api = api_process(&redis, dir.path(), &lease);
    let addr = api.wait_listening();
    let cut = Cut::start(redis.port()).await;
    let worker = HorstProcess::spawn(&["worker", "--redis", &cut.url()], &lease, dir.path());
    let args = json!({"map": hard_map(), "idempotencyKey": "tern-1"});
    let caller = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(addr, "playtest_map", args, &key).await }
    });
    let job = running_job(&store, "tern", &worker).await;

    cut.cut();
    let cut_at = Instant::now();
    let (status, answer, _) = caller.await.unwrap();
    let told_after = cut_at.elapsed();
    assert_eq!(status, 200, "{answer}");
    let error = &answer["error"];
    assert_eq!(error["code"], "cancelled", "{answer}\n{}", api.stderr());
    assert_eq!(error["jobId"], job.as_str());
    let message = error["message"].as_str().unwrap_or_default();
    for says in [
        "lost its connection to the job store",
        "stays charged",
        "new idempotencyKey",
    ] {
        assert!(message.contains(says), "{says:?}: {answer}");
    }
    let reaped = queue.get(&job).await.unwrap().unwrap();
    assert_eq!(reaped.state, JobState::Failed, "{reaped:?}");

    // Cut for three leases in all, then healed.
    tokio::time::sleep_until((cut_at + Duration::from_secs(6)).into()).await;
    cut.heal();
    let healed = Instant::now();
    // Its heartbeat or the reap's message tells it (or, on a slow machine, its search ended
    // first and its completion is refused).
    let heard = eventually(LONG, async || {
        let log = worker.stderr();
        log.contains("lease lost while running") || log.contains("completion refused")
    })
    .await;
    assert!(
        heard,
        "the worker never dropped its result: {}",
        worker.stderr()
    );
    let heard_after = healed.elapsed();
    let (next_status, next, _) = call(addr, "simulate_replay", simulation("tern-2"), &key).await;
    eprintln!(
        "figure: worker cut off from Redis 6 s (lease 2 s) mid-playtest: caller told {} {:.1} s after the cut; after the heal the worker dropped its result in {:.2} s; next simulation {next_status} {}",
        error["code"],
        told_after.as_secs_f64(),
        heard_after.as_secs_f64(),
        next["outcome"],
    );
    assert_eq!(next_status, 200, "{next}");
    assert_eq!(next["outcome"], "won", "{next}");
    // The reaped job as it was reaped, charged once.
    let last = queue.get(&job).await.unwrap().unwrap();
    assert_still_reaped(&last, &reaped);
    assert_eq!(last.charged_seconds, 20);
    let sim = queue
        .get(next["jobId"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    let now = queue.remaining("tern", 1).await.unwrap();
    assert_eq!(now.playtests, before.playtests - 1, "one playtest charged");
    assert_eq!(now.seconds, before.seconds - 20 - sim.charged_seconds);
}

/// Both cases mostly wait (a presence, a lease, the heal), each with its own servers.
#[test]
fn one_process_cut_off_from_redis_side_by_side() {
    crate::side_by_side!(
        an_api_process_cut_off_from_redis_drops_its_queued_job_uncharged_and_says_why,
        a_worker_cut_off_from_redis_loses_its_job_once_and_its_caller_is_told_why,
    );
}
