//! Jobs in Redis with fenced leases, under a reserved-seconds budget.
//!
//! Why not a job-queue library: the contract wants the opposite of what they do on every
//! point that matters ("nothing is run twice automatically", `conflict` on a reused key,
//! queued work dropped when its caller leaves). See `../shared/design/product.md`.
//!
//! Every state change is one Lua script (in `lua/`), so it is atomic across any number of
//! API processes and workers, and the server's `TIME` is the only clock:
//!
//! | script | who | what |
//! |---|---|---|
//! | admit | API | idempotency, caps, start before the deadline, daily quota, seconds budget, enqueue at the account's turn |
//! | claim | worker | a lane's next turn, lease + fencing token, reservation becomes a charge (an orphan is dropped instead) |
//! | heartbeat | worker | extend the lease (token holder only) |
//! | complete | worker | record the outcome (token holder only), PUBLISH |
//! | cancel | API | drop a still-queued job, release its reservation |
//! | reap | anyone | expired lease: `failed`/`cancelled`, charge kept, never re-queued |
//! | cancel (orphan) | anyone | a queued job whose caller's API process died: dropped, released |
//! | detach | API | a caller answered `pending` at shutdown: its job no longer needs the process |
//! | cancel / stop | operator | a queued job (or one handed to an idle slot not yet taken up) dropped (released), or a running one ended `cancelled` (charge kept) |
//!
//! Lanes and turns: planner work (`playtest`) and referee work (`simulate`, `submit`,
//! `recheck`) wait in two lanes (`queue:lane:<lane>`, zsets scored by turn). A job's turn is
//! one round after its lane's last claimed job and after its account's own last waiting job,
//! so accounts take turns. Of the `queue.waiting_global` places, `queue.referee_places` are
//! for referee work only; workers keep `worker.referee_slots` that only claim referee work.
//! Admission refuses (`busy`, with the seconds until it would fit) a job that could not
//! start in time to finish within its caller's wait, from the live workers' slots
//! (`queue:slots`, their sum kept in `queue:fair`) and the latest ends of the running jobs
//! (their records; `queue:fair` keeps a bound, so most admissions read neither).
//!
//! Keys (under the store prefix; names in `keys.rs`): `job:<id>` (hash), `blob:<sha256>` (a
//! large map or replay kept once for the jobs that use it, `inputs.rs`),
//! `queue:lane:<lane>` (zset by turn), `queue:fair` (hash: both lanes' turns and every
//! account's waiting jobs), `queue:slots` (hash),
//! `queue:running` (zset by lease expiry), `idem:<account>:<key>`,
//! `jobs:<account>` (zset by creation), `budget:<day>` (the day's counts and each account's),
//! `delayed` (zset by due time), `quotas` (the reloadable quota numbers, JSON; see
//! `quotas.rs`), `callers:<process>` (an API process's presence while callers wait in it,
//! short expiry), `queue:handoff:<pool>` (idle worker slots by when they last said so:
//! admission pops one and hands it the job, or wakes it alone). Channels: `done:<id>` (the
//! completion publishes the final state on it), `queue:new:<slot>` (an idle slot's wake-up,
//! with the claim of a job handed to it).
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horst_config::{QueueConfig, QuotaConfig};
use horst_store::script::Call;
use horst_store::Store;
use serde::{Deserialize, Serialize};

mod contract;
mod fingerprint;
mod inputs;
pub mod keys;
mod presence;
mod quotas;
mod record;
mod request_id;
mod scripts;
pub use scripts::registered as scripts;

use scripts::{
    Admitted, Applied, BusyCap, ClaimReply, Completed, IdleReply, PublishReply, ReapReply,
    RemainingReply,
};

pub use contract::{
    FailureCode, JobInput, JobResult, Outcome, PlaytestResult, Publication, RefereeResult,
};
pub use fingerprint::fingerprint;
pub use horst_store::{DelayedSet, Notifier, Subscription};
pub use keys::{Lane, Pool};
pub use presence::{HOUSEKEEPING_EVERY, STALL_AFTER};
pub use quotas::{read_quotas, seed_quotas, write_quotas, Quotas, StoredQuotas};
pub use record::{
    job_fields, Failure, JobProgress, JobRecord, JobState, PACKED_FIELD, PACKED_FIELDS,
};
pub use request_id::{current_request_id, valid_request_id, with_request_id, REQUEST_ID_MAX};

/// What a job does. The name is its daily-quota counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    /// The planner searches a winning replay (`playtest_map`).
    Playtest,
    /// The referee re-simulates a replay (`simulate_replay`).
    Simulate,
    /// The referee checks a submission (`submit_level`).
    Submit,
    /// The referee re-checks a stored revision's winning replay for the current engine
    /// (the operator's `recheck`; no daily quota).
    Recheck,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Playtest => "playtest",
            JobKind::Simulate => "simulate",
            JobKind::Submit => "submit",
            JobKind::Recheck => "recheck",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        match s {
            "playtest" => Some(JobKind::Playtest),
            "simulate" => Some(JobKind::Simulate),
            "submit" => Some(JobKind::Submit),
            "recheck" => Some(JobKind::Recheck),
            _ => None,
        }
    }

    pub const ALL: [JobKind; 4] = [
        JobKind::Playtest,
        JobKind::Simulate,
        JobKind::Submit,
        JobKind::Recheck,
    ];
}

/// A job to admit.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub kind: JobKind,
    pub account: String,
    /// Trust tier 0, 1 or 2 (a blocked account never reaches the queue).
    pub trust: u8,
    pub idempotency_key: String,
    /// What the worker needs; its canonical JSON is fingerprinted.
    pub input: JobInput,
}

/// The result of admission.
#[derive(Debug, Clone)]
pub enum Admission {
    /// A new job, queued.
    New(JobRecord),
    /// The same key with the same input: the recorded job (maybe still queued or running).
    Replayed(JobRecord),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaScope {
    /// The account's own daily limit.
    Owner,
    /// The server's daily seconds.
    Global,
    /// The half of the server's seconds that all trust-0 accounts share.
    GlobalNew,
    /// The account's daily bytes of kept job input (`queue.input_bytes_per_account_day`).
    InputBytes,
    /// The server's daily bytes of kept job input (`queue.input_bytes_per_day`).
    GlobalInputBytes,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum QueueError {
    #[error("{message}")]
    Busy {
        retry_after_seconds: u64,
        /// The caller's own job that is waiting (when the per-account cap refused).
        waiting_job_id: Option<String>,
        message: String,
    },
    #[error("{message}")]
    Quota {
        scope: QuotaScope,
        retry_after_seconds: u64,
        message: String,
    },
    #[error("{message}")]
    Conflict { message: String },
    #[error("the job store failed: {0}")]
    Store(String),
    /// Redis cannot be reached now (see `horst_store::is_unreachable`): retry later.
    #[error("the job store is unreachable: {0}")]
    Unavailable(String),
    /// The record of a job that was waited on is gone: Redis lost its data (restarted
    /// without its AOF, a `FLUSHALL`), so the job will never finish (its worker's
    /// completion is refused) and its idempotency key is gone with it.
    #[error("the record of job {job_id} is gone")]
    Gone { job_id: String },
}

impl From<redis::RedisError> for QueueError {
    fn from(e: redis::RedisError) -> Self {
        if horst_store::is_unreachable(&e) {
            QueueError::Unavailable(e.to_string())
        } else {
            QueueError::Store(e.to_string())
        }
    }
}

/// What an account may still do today (every job result carries it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remaining {
    pub submissions: u64,
    pub playtests: u64,
    pub simulations: u64,
    /// Reserved execution seconds left today; for a trust-0 account the smaller of the
    /// server's remainder and the trust-0 half's remainder.
    pub seconds: u64,
}

/// The numbers the queue enforces, from the configuration.
#[derive(Debug, Clone)]
pub struct QueueSettings {
    pub queue: QueueConfig,
    pub quotas: QuotaConfig,
}

impl QueueSettings {
    pub fn reserve_seconds(&self, kind: JobKind) -> u64 {
        match kind {
            JobKind::Playtest => self.queue.playtest_seconds,
            JobKind::Simulate | JobKind::Submit | JobKind::Recheck => self.queue.simulate_seconds,
        }
    }

    fn job_ttl_seconds(&self) -> u64 {
        self.queue.job_retention_hours * 3600
    }

    /// How long after its admission a job's record lives at the latest, ms: it is finished
    /// by its caller's wait (claim times out a job that could not finish by then), or, if its
    /// worker died, once its lease runs out and housekeeping reaps it (a minute of margin);
    /// then it is kept `queue.job_retention_hours`. Its input's blobs live as long.
    pub fn input_keep_ms(&self) -> u64 {
        (self.queue.wait_seconds + self.queue.lease_seconds + 60 + self.job_ttl_seconds()) * 1000
    }
}

/// A claimed job, as a worker holds it.
#[derive(Debug, Clone)]
pub struct Claim {
    pub record: JobRecord,
    /// The fencing token: only its holder may heartbeat or complete the job.
    pub token: u64,
    /// More jobs were waiting in its lane when it was claimed: a worker wakes another idle
    /// slot (an admission wakes only one).
    pub more_waiting: bool,
}

/// The job queue. Cheap to clone.
#[derive(Clone)]
pub struct Queue {
    store: Store,
    settings: Arc<QueueSettings>,
    /// The UTC day (server clock) this process last saw: the day keys admission and
    /// `remaining` pass; a script that finds another day says so and the call is repeated.
    day_hint: Arc<AtomicU64>,
    notifier: Notifier,
    /// The quota numbers in force, read from Redis at most once a second per process.
    quotas: Arc<quotas::QuotaCache>,
    /// This process's id as the waiter of the jobs its callers wait for (`callers:<id>`).
    process_id: Arc<str>,
    /// The completion subscriptions of the jobs admitted here in the last [`EARLY_KEEP`],
    /// made before their admission: [`Queue::wait`] takes its job's.
    early: Arc<std::sync::Mutex<HashMap<String, Early>>>,
    /// When this process last wrote its presence (`callers:<id>`): an admission refreshes it
    /// only when that was a while ago ([`PRESENCE_FRESH`]).
    presence_at: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
    /// Where this process's sweep of `queue:fair` goes on from (an HSCAN cursor,
    /// [`Queue::sweep_fair`]).
    fair_cursor: Arc<std::sync::atomic::AtomicU64>,
    /// This process's admissions, group-committed ([`CallGroup`]).
    admits: Arc<CallGroup<Admitted>>,
    /// The server's clock as an admission's answer last told it: the bound each admission
    /// carries on when its script may still run ([`Queue::admit_bound_ms`]).
    server_clock: horst_store::ServerClock,
    /// This process's completions (its workers' slots), group-committed.
    completes: Arc<CallGroup<Completed>>,
}

/// Group commit of one script's calls (admissions: admit.lua, in groups admit_many.lua):
/// a process sends at most `flights` calls at a time (one for admissions, two for
/// completions), from a task of its own, in the order it formed them; the calls that arrive
/// while all flights are in the air wait for one to land and then go to Redis together, in
/// one call of the group script (each is the script itself, one after another in one atomic
/// step, as if sent one after another in that order), so the per-call cost (the dispatch,
/// the prelude and helpers made, the replicas' `WAIT`) is paid once for them. A call alone
/// is sent at once when a flight is free.
///
/// Two flights, and why: a process's slots wait through their completion call's round trip
/// (they hold their next job only once it answers), so with one call in flight Redis idles
/// while the answer travels back, the slots run their jobs and the next call travels out
/// (one worker of 4 slots with trivial jobs: Redis about 73 % busy). With two, one half of
/// the slots' call is in Redis while the other half works. Every call is an event-loop turn
/// of Redis (about 30 µs on a quiet machine): a group is cut in halves only when none of its
/// calls is in the air, and each half waits for 2 promised calls at the least (see
/// [`linger`]), and a second call goes only while the calls in the air and those due fit one
/// group ([`flight_free`]): one worker's 4 slots go 2 and 2, two workers' 8 keep one call at
/// a time, 4 and 4. Calls of different slots in the air together are independent (each is
/// fenced on its own job, a slot has one call at a time); what one group does is done before
/// the next group's scripts run (one connection, in order), or, on the durable pool's
/// connections, in an order Redis picks, as two processes' calls would be.
///
/// The one wait, bounded ([`LINGER`]): a reply can promise that its caller calls again soon
/// (`returns`: a completion that claimed its slot's next job, which the slot runs and then
/// completes). While such promised calls are not back yet, were answered less than
/// [`LINGER`] ago and the group has fewer than [`LINGER_UP_TO`] calls (half the calls due, 2
/// at the least, when a second flight is free and none is in the air), the group waits for
/// them. Without the wait, one worker of 4 slots with short jobs and one flight settled into
/// two alternating groups of 2 queued one behind the other (each pair's next completion
/// waited for the other pair's call), and every call is an event-loop turn of Redis (a
/// wake-up, a read, the reply's and the AOF's writes, about 30 µs on a quiet machine whatever
/// the call carries). A call whose
/// caller promised nothing (a lone job, a slot that found nothing waiting, any admission)
/// waits for nothing; jobs longer than [`LINGER`] are never waited for.
pub(crate) struct CallGroup<R: 'static> {
    one: &'static horst_store::script::Script<R>,
    many: &'static horst_store::script::Script<Vec<redis::Value>>,
    /// One call's reply in the group's (`{'error', message}` for one that raised an error).
    reply: fn(redis::Value) -> redis::RedisResult<R>,
    /// Whether a reply promises that its caller calls again soon.
    returns: fn(&R) -> bool,
    /// How many group calls may be in the air at once (1 or 2).
    flights: usize,
    state: std::sync::Mutex<GroupState<R>>,
    /// Told of every call that arrives (the sending task waits on it while it lingers).
    arrived: tokio::sync::Notify,
}

struct GroupState<R> {
    /// Whether a task is sending calls (one at a time, each after the last's answer).
    running: bool,
    /// The calls sent so far, the script calls they carried, and the calls sent while
    /// another was in the air.
    calls: u64,
    carried: u64,
    overlapped: u64,
    /// The groups sent after a linger, and those whose linger ran out before the promised
    /// calls were all back.
    lingered: u64,
    lingers_out: u64,
    waiting: Vec<(
        horst_store::script::Args,
        tokio::sync::oneshot::Sender<redis::RedisResult<R>>,
    )>,
    /// Calls answered with a promise to call again (`returns`) and not back yet (any call
    /// that arrives counts as one back), and when the last of them was answered.
    promised: usize,
    answered_at: Option<tokio::time::Instant>,
}

/// The most calls one group carries: its script runs them in one step, and Redis serves
/// nothing else meanwhile (about 0.1 ms each).
const GROUP_MAX: usize = 32;

/// How long after its answer a promised call ([`CallGroup`]) is waited for at most: a turn of
/// Redis is about 30 µs, a trivial job's way from its claim's answer to its completion's call
/// a few tens of µs; tokio's timer rounds a wait up to its next millisecond, so a call waits
/// at most about 2 ms, and only while calls answered under a millisecond ago are due back.
const LINGER: Duration = Duration::from_millis(1);

/// A group this large waits for no promised call: a turn over 4 calls is under a tenth of
/// their Redis time (about 70 µs each), and a larger group leaves Redis with no call of
/// the group's kind while its callers work (with two workers of 4 slots the completions
/// already go 4 a call, and are not held up). A group sent when no call of it is in the air
/// and a second flight is free waits for half as many: the other half goes while it is in
/// Redis ([`CallGroup`]).
const LINGER_UP_TO: usize = 4;

/// The group calls of a process's completions in the air at once ([`CallGroup`]).
const COMPLETION_FLIGHTS: usize = 2;

/// What the sending task does with the calls waiting ([`linger`]).
#[derive(Debug, PartialEq, Eq)]
enum Linger {
    /// Sends them now.
    Send,
    /// Sends them now: the promised calls were waited for [`LINGER`] and are not all back.
    RanOut,
    /// Waits for promised calls until then at most.
    Until(tokio::time::Instant),
}

/// Whether the sending task may send a group now, with `flying` of its `flights` calls in
/// the air carrying `in_air` calls ([`CallGroup`]). The second flight only while the calls in
/// the air and those due (waiting or promised) fit one group of [`LINGER_UP_TO`]: that is a
/// process whose slots would otherwise all wait in one call (one worker of 4). With more
/// slots one flight keeps their groups alternating (one in Redis while the other works);
/// with two in the air they drifted into step, both in Redis and then both working while
/// Redis idled (two workers of 4 slots: 7 % fewer jobs/s than with one flight).
fn flight_free<R>(flying: usize, flights: usize, in_air: usize, g: &GroupState<R>) -> bool {
    flying == 0 || (flying < flights && in_air + g.waiting.len() + g.promised <= LINGER_UP_TO)
}

/// Whether the sending task waits for promised calls ([`CallGroup`]), with `in_air` of its
/// `flights` calls in the air (fewer than `flights`: one is free). Past the linger it
/// forgets the promises (their callers are busy for longer). With none in the air and a
/// second flight free it sends half of the calls due (those waiting and those promised; 2
/// at the least, [`LINGER_UP_TO`] at most): the rest go in the second flight as they come
/// back, so Redis has the one half's call while the other half works ([`flight_free`] says
/// whether they may).
fn linger<R>(
    g: &mut GroupState<R>,
    now: tokio::time::Instant,
    in_air: usize,
    flights: usize,
) -> Linger {
    let up_to = match (in_air, flights) {
        (0, 2..) => ((g.promised + g.waiting.len()) / 2).clamp(2, LINGER_UP_TO),
        _ => LINGER_UP_TO,
    };
    if g.promised == 0 || g.waiting.len() >= up_to {
        return Linger::Send;
    }
    let Some(until) = g.answered_at.map(|at| at + LINGER) else {
        return Linger::Send;
    };
    if now >= until {
        g.promised = 0;
        return Linger::RanOut;
    }
    Linger::Until(until)
}

impl<R: Send + redis::FromRedisValue + Clone + 'static> CallGroup<R> {
    fn new(
        one: &'static horst_store::script::Script<R>,
        many: &'static horst_store::script::Script<Vec<redis::Value>>,
        reply: fn(redis::Value) -> redis::RedisResult<R>,
        returns: fn(&R) -> bool,
        flights: usize,
    ) -> Arc<CallGroup<R>> {
        Arc::new(CallGroup {
            one,
            many,
            reply,
            returns,
            flights: flights.max(1),
            state: std::sync::Mutex::new(GroupState {
                running: false,
                calls: 0,
                carried: 0,
                overlapped: 0,
                lingered: 0,
                lingers_out: 0,
                waiting: Vec::new(),
                promised: 0,
                answered_at: None,
            }),
            arrived: tokio::sync::Notify::new(),
        })
    }

    /// Locks the state (a panic while it was held leaves a consistent one: every change to
    /// it is one statement).
    fn lock(&self) -> std::sync::MutexGuard<'_, GroupState<R>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One call of the script (its KEYS and ARGV in `args`), sent alone when no other is in
    /// flight, else with the others that arrived meanwhile. Sent by a task of its own: a
    /// caller that goes away stops no one else's call.
    async fn call(
        self: &Arc<Self>,
        store: &Store,
        args: horst_store::script::Args,
    ) -> redis::RedisResult<R> {
        let (sent, answer) = tokio::sync::oneshot::channel();
        let start = {
            let mut g = self.lock();
            g.waiting.push((args, sent));
            g.promised = g.promised.saturating_sub(1);
            !std::mem::replace(&mut g.running, true)
        };
        if start {
            let (group, store) = (self.clone(), store.clone());
            tokio::spawn(async move { group.send(store).await });
        } else {
            self.arrived.notify_one();
        }
        answer.await.unwrap_or_else(|_| {
            Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "the script's call stopped before it answered; call again",
            )))
        })
    }

    /// The calls sent to Redis so far, and the script calls they carried.
    fn counts(&self) -> (u64, u64) {
        let g = self.lock();
        (g.calls, g.carried)
    }

    /// The groups sent after waiting for promised calls, and those whose wait ran out.
    fn lingers(&self) -> (u64, u64) {
        let g = self.lock();
        (g.lingered, g.lingers_out)
    }

    /// The calls sent while another of the group was in the air.
    fn overlapped(&self) -> u64 {
        self.lock().overlapped
    }

    /// Notes the replies just answered that promise another call.
    fn answered<'a>(&self, replies: impl Iterator<Item = &'a redis::RedisResult<R>>) {
        let promised = replies
            .filter(|r| r.as_ref().is_ok_and(|r| (self.returns)(r)))
            .count();
        if promised > 0 {
            let mut g = self.lock();
            g.promised += promised;
            g.answered_at = Some(tokio::time::Instant::now());
        }
    }

    /// Sends the waiting calls, a group at a time and at most `flights` in the air, until
    /// none waits and none is in the air.
    async fn send(self: Arc<Self>, store: Store) {
        let mut runner = GroupRunner(self.clone(), true);
        // The calls in the air, in the order they were formed: each is polled first (and so
        // written to its connection) before any formed after it.
        let mut flying: Vec<(usize, Flight)> = Vec::with_capacity(self.flights);
        let mut lingered = false;
        loop {
            let until = {
                let mut g = self.lock();
                if g.waiting.is_empty() && flying.is_empty() {
                    g.running = false;
                    runner.1 = false;
                    return;
                }
                let in_air = flying.iter().map(|(n, _)| n).sum();
                if g.waiting.is_empty() || !flight_free(flying.len(), self.flights, in_air, &g) {
                    None
                } else {
                    match linger(
                        &mut g,
                        tokio::time::Instant::now(),
                        flying.len(),
                        self.flights,
                    ) {
                        Linger::Until(until) => Some(until),
                        now => {
                            let n = g.waiting.len().min(GROUP_MAX);
                            g.calls += 1;
                            g.carried += n as u64;
                            g.overlapped += u64::from(!flying.is_empty());
                            g.lingered += u64::from(lingered);
                            g.lingers_out += u64::from(lingered && now == Linger::RanOut);
                            let group = g.waiting.drain(..n).collect::<Vec<_>>();
                            drop(g);
                            lingered = false;
                            flying.push((n, Box::pin(self.clone().fly(store.clone(), group))));
                            continue;
                        }
                    }
                }
            };
            lingered |= until.is_some();
            // Waits for a call to arrive (one that arrived since the look left a permit: the
            // look is made again), a flight to land, or the linger's end.
            let landed = std::future::poll_fn(|cx| {
                for (i, (_, flight)) in flying.iter_mut().enumerate() {
                    if flight.as_mut().poll(cx).is_ready() {
                        return std::task::Poll::Ready(i);
                    }
                }
                std::task::Poll::Pending
            });
            tokio::select! {
                i = landed => {
                    drop(flying.remove(i));
                }
                _ = self.arrived.notified() => {}
                _ = tokio::time::sleep_until(until.unwrap_or_else(tokio::time::Instant::now)), if until.is_some() => {}
            }
        }
    }

    /// Sends one group and answers its calls.
    async fn fly(
        self: Arc<Self>,
        store: Store,
        mut group: Vec<(
            horst_store::script::Args,
            tokio::sync::oneshot::Sender<redis::RedisResult<R>>,
        )>,
    ) {
        if group.len() == 1 {
            if let Some((args, sent)) = group.pop() {
                let reply = self.one.call_with(&store, args).run().await;
                self.answered(std::iter::once(&reply));
                let _ = sent.send(reply);
            }
            return;
        }
        let mut all = horst_store::script::Args::default();
        for (args, _) in &group {
            all.append(args);
        }
        let n = group.len();
        let replies: Vec<redis::RedisResult<R>> = match self.many.call_with(&store, all).run().await
        {
            Ok(replies) if replies.len() == n => replies.into_iter().map(self.reply).collect(),
            Ok(replies) => vec![
                Err(redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "a group script answered another number of calls than it carried",
                    format!(
                        "{}: {} replies to {n} calls",
                        self.many.name(),
                        replies.len()
                    ),
                )));
                n
            ],
            Err(e) => vec![Err(e); n],
        };
        self.answered(replies.iter());
        for ((_, sent), reply) in group.into_iter().zip(replies) {
            let _ = sent.send(reply);
        }
    }
}

/// One group call in the air ([`CallGroup::fly`]).
type Flight = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Ends a group's sending task: marks it stopped if it ends by a panic (else the calls
/// would wait for it for good).
struct GroupRunner<R: 'static>(Arc<CallGroup<R>>, bool);

impl<R: 'static> Drop for GroupRunner<R> {
    fn drop(&mut self) {
        if self.1 {
            self.0
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .running = false;
        }
    }
}

/// A job admitted here: its completion subscription, made before the admission, and the
/// record admission built, which the completion's payload finishes ([`Queue::wait`]).
struct Early {
    sub: Subscription,
    record: JobRecord,
    at: std::time::Instant,
}

/// A presence written this recently still lives most of [`CALLER_PRESENCE_TTL`]: an
/// admission leaves it (one write less a job); the refresher writes it every
/// `CALLER_PRESENCE_EVERY`.
const PRESENCE_FRESH: Duration = Duration::from_secs(4);

/// How long the drop of a job whose admission failed unclearly may hold up the caller's
/// error ([`Queue::drop_unclear`]).
const UNCLEAR_DROP_WITHIN: Duration = Duration::from_secs(5);

/// How long a job's early subscription is kept for a [`Queue::wait`] in this process.
const EARLY_KEEP: Duration = Duration::from_secs(5);

/// How long an API process's presence (`callers:<id>`) lives without a refresh, and how
/// often it is refreshed: a queued job of a process dead for this long is dropped.
pub const CALLER_PRESENCE_TTL: Duration = Duration::from_secs(10);

/// How long after a job's admission its waiter's presence lives at the least: admission
/// refreshes it unless it was written within [`PRESENCE_FRESH`], and it lives
/// [`CALLER_PRESENCE_TTL`] from then (a second's margin for the clocks). A claim looks for
/// the presence of an older job's waiter only (claim.lua): one write-free read less a job.
const WAITER_SURELY_PRESENT: Duration =
    Duration::from_secs(CALLER_PRESENCE_TTL.as_secs() - PRESENCE_FRESH.as_secs() - 1);

/// How long past the time it was told to come back an account refused for want of room keeps
/// its turn (admit.lua, "Owed turns"): long enough for a caller that waits `retryAfterSeconds`
/// and calls again over a slow network, short enough that one that never comes back does not
/// hold a place for long.
pub const OWED_TURN_GRACE: Duration = Duration::from_secs(10);
const CALLER_PRESENCE_EVERY: Duration = Duration::from_secs(2);

/// How many waiting jobs' records one round trip of [`Queue::waiting_fields`] reads: a
/// pipeline of HMGETs (a few hundred bytes of reply each), so a queue of 100,000 takes 100.
const WAITING_READ_CHUNK: usize = 1000;

impl Queue {
    /// `notifier` must be subscribed to `done:*` (see [`Queue::channels`]).
    pub fn new(store: Store, settings: QueueSettings, notifier: Notifier) -> Queue {
        Queue {
            store,
            settings: Arc::new(settings),
            day_hint: Arc::new(AtomicU64::new(0)),
            notifier,
            quotas: Arc::new(quotas::QuotaCache::default()),
            process_id: format!("p{}", horst_store::random::id_hex::<8>()).into(),
            early: Arc::default(),
            presence_at: Arc::default(),
            fair_cursor: Arc::default(),
            server_clock: horst_store::ServerClock::default(),
            admits: CallGroup::new(
                &scripts::ADMIT,
                &scripts::ADMIT_MANY,
                scripts::group_reply,
                |_| false,
                // One flight: nothing promises an admission soon, so a second one would only
                // split the admissions that arrive together into more calls (more turns of
                // Redis a job); they do not hold up the slots, which claim waiting jobs.
                1,
            ),
            // A slot that claimed its next job in its completion runs it and completes it.
            completes: CallGroup::new(
                &scripts::COMPLETE,
                &scripts::COMPLETE_MANY,
                scripts::group_reply,
                |done| matches!(done, scripts::Completed::Next { .. }),
                COMPLETION_FLIGHTS,
            ),
        }
    }

    /// Moves the jobs still waiting in the single list of versions before the lanes
    /// (`queue:waiting`) into their lanes, at the front (they waited before the upgrade), so
    /// an upgrade with jobs waiting loses none. Each step is idempotent (ZADD of a member
    /// already there changes nothing, LREM of one gone removes nothing), so two processes
    /// starting at once, or a crash in the middle, leave every job in exactly one lane.
    /// Returns how many it moved; called once when a process starts.
    pub async fn adopt_waiting_list(&self) -> redis::RedisResult<u64> {
        let store = &self.store;
        let old = keys::old_waiting_list(store);
        let mut conn = store.conn();
        let ids: Vec<String> = redis::cmd("LRANGE")
            .arg(&old)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let mut moved = 0;
        // Oldest at the tail: adopt from the tail so the oldest gets the lowest score.
        for (i, id) in ids.iter().rev().enumerate() {
            let kind = job_fields(&mut conn, &keys::job(store, id), &["kind"])
                .await?
                .pop()
                .flatten();
            // A record that is gone, or of no known kind, cannot be claimed by anyone:
            // claim would skip it from the old list just the same.
            if let Some(lane) = kind.as_deref().and_then(JobKind::parse).map(Lane::of) {
                let _: () = redis::cmd("ZADD")
                    .arg(keys::lane(store, lane))
                    .arg("NX")
                    .arg(i as u64)
                    .arg(id)
                    .query_async(&mut conn)
                    .await?;
                moved += 1;
            }
            let _: () = redis::cmd("LREM")
                .arg(&old)
                .arg(0)
                .arg(id)
                .query_async(&mut conn)
                .await?;
        }
        if moved > 0 {
            tracing::warn!(
                moved,
                "adopted jobs waiting in the pre-lanes queue:waiting list into their lanes"
            );
        }
        Ok(moved)
    }

    /// Folds the fair turns and waiting counters of versions before `queue:fair`
    /// (`queue:turns:<lane>`, `waiting:<account>`) into it (fair_adopt.lua: once, atomic,
    /// idempotent), then deletes the old counters. Returns whether this call adopted them;
    /// called once when a process starts, after [`Queue::adopt_waiting_list`].
    pub async fn adopt_fair_layout(&self) -> redis::RedisResult<bool> {
        let store = &self.store;
        let adopted: u8 = scripts::FAIR_ADOPT
            .call(store)
            .key(keys::fair(store))
            .key(keys::old_turns(store, Lane::Planner))
            .key(keys::old_turns(store, Lane::Referee))
            .key(keys::lane(store, Lane::Planner))
            .key(keys::lane(store, Lane::Referee))
            .key(keys::base(store))
            .arg(FAIR_LAYOUT)
            .run()
            .await?;
        if adopted == 0 {
            return Ok(false);
        }
        // The old counters are not read any more: what they counted is in queue:fair now.
        let old = store
            .scan_keys_in(Some(horst_store::Group::Queue), keys::OLD_WAITING_PATTERN)
            .await?;
        for key in &old {
            let _: () = redis::cmd("DEL")
                .arg(key)
                .query_async(&mut store.conn())
                .await?;
        }
        // 2: a new store, nothing from before. Said only when there was something: every
        // first start of a fresh installation warned about "an earlier version".
        if adopted == 1 || !old.is_empty() {
            tracing::warn!(
                deleted = old.len(),
                "adopted the fair turns and waiting counts of an earlier version into queue:fair"
            );
        }
        Ok(true)
    }

    /// Deletes what earlier versions kept and nothing reads now: the running jobs' ends
    /// (`queue:ends:<pool>`, read from the running jobs' records since) and the fencing
    /// token counter (`fence`, the claim's time since). Called when a process starts (a
    /// worker of the earlier version still running may write them again: they go with the
    /// next start). It also drops admission's kept latest ends (`end:<pool>` in
    /// `queue:fair`), so the next admission makes them again from the running jobs: a
    /// worker of an earlier version claims without raising them.
    pub async fn drop_old_keys(&self) -> redis::RedisResult<()> {
        let mut pipe = redis::pipe();
        for pool in [Pool::General, Pool::Referee] {
            pipe.cmd("DEL")
                .arg(keys::old_ends(&self.store, pool))
                .ignore();
        }
        pipe.cmd("DEL").arg(keys::old_fence(&self.store)).ignore();
        pipe.cmd("HDEL")
            .arg(keys::fair(&self.store))
            .arg(&[Pool::General, Pool::Referee].map(keys::fair_latest_end))
            .ignore();
        pipe.query_async(&mut self.store.conn()).await
    }

    /// Moves the accounts' daily counts of versions before they were kept in the day's
    /// budget hash (`daily:<day>:<account>`) into it (daily_adopt.lua: one step per account
    /// and day, idempotent). Returns how many it moved; called once when a process starts.
    pub async fn adopt_daily_counts(&self) -> redis::RedisResult<u64> {
        let store = &self.store;
        // Done once: the old hashes exist only where a version before this one ran, and a
        // SCAN at every start would walk the whole keyspace of a large deployment. The mark
        // is set after the last one is moved, so a crash in the middle scans again.
        let done: bool = redis::cmd("HEXISTS")
            .arg(keys::fair(store))
            .arg(DAILY_LAYOUT_FIELD)
            .query_async(&mut store.conn())
            .await?;
        if done {
            return Ok(0);
        }
        let base = keys::base(store);
        let old = store
            .scan_keys_in(Some(horst_store::Group::Queue), keys::OLD_DAILY_PATTERN)
            .await?;
        let mut moved = 0;
        for key in &old {
            let Some((day, account)) = key
                .strip_prefix(base.as_str())
                .and_then(|k| k.strip_prefix("daily:"))
                .and_then(|k| k.split_once(':'))
            else {
                continue;
            };
            let fields: u64 = scripts::DAILY_ADOPT
                .call(store)
                .key(keys::old_daily(store, day, account))
                .key(self.budget_key(day))
                .arg(account)
                .run()
                .await?;
            moved += u64::from(fields > 0);
        }
        let _: () = redis::cmd("HSET")
            .arg(keys::fair(store))
            .arg(DAILY_LAYOUT_FIELD)
            .arg("1")
            .query_async(&mut store.conn())
            .await?;
        if moved > 0 {
            tracing::warn!(
                moved,
                "adopted the daily counts of an earlier version into the days' budget hashes"
            );
        }
        Ok(moved)
    }

    /// The pub/sub patterns the queue's [`Notifier`] must listen to.
    pub fn channels(store: &Store) -> Vec<String> {
        vec![keys::done_pattern(store), keys::new_pattern(store)]
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn settings(&self) -> &QueueSettings {
        &self.settings
    }

    pub fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    /// Shifts the scripts' clock (tests only: crossing a UTC midnight without waiting).
    pub fn set_clock_offset(&self, offset: Duration, forward: bool) {
        let ms = offset.as_millis() as i64;
        self.store
            .set_clock_offset_ms(if forward { ms } else { -ms });
        self.day_hint.store(0, Ordering::Relaxed);
    }

    /// Keeps job `id`'s early subscription and record for a `wait` here; drops the stale ones.
    fn keep_early(&self, sub: Subscription, record: JobRecord) {
        let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
        early.retain(|_, e| e.at.elapsed() < EARLY_KEEP);
        early.insert(
            record.id.clone(),
            Early {
                sub,
                record,
                at: std::time::Instant::now(),
            },
        );
    }

    /// Notes that this process's presence was written by a call sent at `sent` (its time to
    /// live runs from a moment after that: counting from the send never overstates it, a
    /// stall between the send and the reply included).
    pub(crate) fn presence_written(&self, sent: std::time::Instant) {
        *self.presence_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(sent);
    }

    /// The presence's time to live for an admission to write, or 0 when it was written
    /// recently enough to be left alone.
    fn presence_refresh_ttl(&self) -> u64 {
        let at = *self.presence_at.lock().unwrap_or_else(|e| e.into_inner());
        match at {
            Some(at) if at.elapsed() < PRESENCE_FRESH => 0,
            _ => CALLER_PRESENCE_TTL.as_secs(),
        }
    }

    fn job_key(&self, id: &str) -> String {
        keys::job(&self.store, id)
    }

    fn callers_key(&self, process: &str) -> String {
        keys::callers(&self.store, process)
    }

    fn done_channel(&self, id: &str) -> String {
        keys::done_channel(&self.store, id)
    }

    fn budget_key(&self, day: &str) -> String {
        keys::budget(&self.store, day)
    }

    fn idem_key(&self, account: &str, key: &str) -> String {
        keys::idem(&self.store, account, key)
    }

    /// The day to pass for today's keys: the last one a script reported, else this host's
    /// clock (with the offset); a wrong guess costs one more call, never a wrong write.
    fn guess_day(&self) -> u64 {
        match self.day_hint.load(Ordering::Relaxed) {
            0 => {
                let local = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as i64)
                    .unwrap_or(0);
                (local + self.store.clock_offset_ms()).max(0) as u64 / 86_400_000
            }
            day => day,
        }
    }

    /// KEYS[1-3] of the scripts that end a running job (complete, reap, stop): its record,
    /// the running set and its day's budget.
    fn ending_keys<R: redis::FromRedisValue>(&self, call: &mut Call<'_, R>, id: &str, day: &str) {
        call.key(self.job_key(id))
            .key(keys::running(&self.store))
            .key(self.budget_key(day));
    }

    /// A job's account, day and idempotency key (they name its other keys), as stored.
    async fn job_names(&self, id: &str) -> Result<JobNames, QueueError> {
        let f = job_fields(
            &mut self.store.conn(),
            &self.job_key(id),
            &["account", "day", "idem", "waiter", "kind"],
        )
        .await?;
        let get = |i: usize| f.get(i).cloned().flatten().unwrap_or_default();
        Ok(JobNames {
            account: get(0),
            day: get(1),
            idem: get(2),
            waiter: get(3),
            lane: JobKind::parse(&get(4)).map(Lane::of),
        })
    }

    /// The quota numbers in force: the stored ones (see [`write_quotas`]), else this
    /// process's configuration. Read from Redis at most once a second.
    pub async fn quotas(&self) -> Result<Arc<Quotas>, QueueError> {
        if let Some(q) = self.quotas.fresh() {
            return Ok(q);
        }
        let q = Arc::new(match read_quotas(&self.store).await? {
            Some(stored) => stored.values,
            None => self.configured_quotas(),
        });
        self.quotas.put(q.clone());
        Ok(q)
    }

    /// The values of this process's configuration.
    pub fn configured_quotas(&self) -> Quotas {
        Quotas {
            quotas: self.settings.quotas.clone(),
            daily_seconds: self.settings.queue.daily_seconds,
            trust0_share_percent: self.settings.queue.trust0_share_percent,
        }
    }

    /// Drops this process's copy, so a reload made here applies to its next call at once.
    pub fn forget_quotas(&self) {
        self.quotas.forget();
    }

    /// The server's clock (ms since the Unix epoch), as the scripts see it.
    pub async fn now_ms(&self) -> Result<u64, QueueError> {
        let now: u64 = scripts::NOW.call(&self.store).run().await?;
        Ok(now)
    }

    /// Admission: idempotency first (a replay charges nothing), then the caps, the daily
    /// quota and the seconds budget, then the job is queued. One atomic step.
    pub async fn admit(&self, spec: JobSpec) -> Result<Admission, QueueError> {
        self.admit_as(spec, false).await
    }

    /// Admission for a caller who waits for the job in this process: if the process dies
    /// while the job is still queued (its presence expires), the job is dropped and
    /// released like a disconnected caller's ([`Queue::drop_orphans`]). The process must
    /// run [`Queue::announce_callers`].
    ///
    /// Cancel-safe: the admission runs in a task of its own, so a caller that goes away
    /// while its admission is in flight (the handler's future dropped, say by a disconnect
    /// during a slow Redis) never leaves a queued job that runs and is charged. Once the
    /// admission answers, a job nobody waits for is dropped like [`Queue::cancel_guard`]
    /// drops it, whether the caller left before the answer was sent or after, with the
    /// answer sent but not yet read.
    pub async fn admit_for_caller(&self, spec: JobSpec) -> Result<Admission, QueueError> {
        use tracing::Instrument;
        let (answer, answered) = tokio::sync::oneshot::channel();
        let queue = self.clone();
        // The request id is a task-local of the caller's task: carried over by hand.
        let request = current_request_id();
        let admission = async move {
            let admitted = match request {
                Some(id) => with_request_id(id, queue.admit_as(spec, true)).await,
                None => queue.admit_as(spec, true).await,
            };
            // The guard travels with the answer and only the caller disarms it, on reading
            // it. A successful send does not mean the caller reads it: its future may be
            // dropped between the send and its next poll (a disconnect just as Redis
            // answers), and the answer, dropped unread in the channel, drops the guard and
            // with it the job. Checking only for a failed send lost that job: it stayed
            // queued, ran and was charged (seen under load, queue.rs).
            let guard = match &admitted {
                Ok(Admission::New(record)) => Some(queue.cancel_guard(&record.id)),
                _ => None,
            };
            if let Err((Ok(Admission::New(record)), _guard)) = answer.send((admitted, guard)) {
                tracing::info!(job = %record.id, "caller left during its admission; dropping the job");
            }
        };
        tokio::spawn(admission.instrument(tracing::Span::current()));
        match answered.await {
            Ok((admitted, guard)) => {
                if let Some(guard) = guard {
                    guard.disarm();
                }
                admitted
            }
            Err(_) => Err(QueueError::Store(
                "the admission stopped before it answered; call again with the same idempotencyKey"
                    .into(),
            )),
        }
    }

    async fn admit_as(&self, spec: JobSpec, waited_here: bool) -> Result<Admission, QueueError> {
        let waiter: &str = if waited_here { &self.process_id } else { "" };
        let fp = fingerprint(spec.kind, &spec.input.to_value());
        // Large maps and replays are kept once, as blobs the record names (inputs.rs).
        let stored = inputs::split(&spec.input);
        self.put_blobs(&stored).await?;
        let id = new_job_id();
        let s = &self.settings;
        let q = self.quotas().await?;
        let reserve = s.reserve_seconds(spec.kind);
        let lane = Lane::of(spec.kind);
        // Operator rechecks count as used seconds but are never refused for quota.
        let (daily, trust0_cap) = if spec.kind == JobKind::Recheck {
            (quotas::UNLIMITED, quotas::UNLIMITED)
        } else {
            (q.daily_seconds, q.trust0_cap_seconds())
        };
        // The HTTP request it is admitted in, kept with the job for the logs and the view.
        let request = current_request_id().unwrap_or_default();
        let input = stored.json.to_string();
        let (trust, reserved, exec_ms) = (
            spec.trust.to_string(),
            reserve.to_string(),
            (reserve * 1000).to_string(),
        );
        // Subscribed before the job exists: a waiter in this process needs no first read
        // (`wait`), a completion however early is on this subscription.
        let early = self.notifier.subscribe(&self.done_channel(&id));
        let mut forget = String::new();
        let mut reply = Admitted::Day(self.guess_day());
        // Whether this admission refreshes the presence, decided for each call (a retry after
        // a stall may find it no longer fresh), and when that call was sent.
        let mut presence_ttl = 0;
        let mut sent = std::time::Instant::now();
        for _ in 0..6 {
            let day = match &reply {
                Admitted::Day(day) => day.to_string(),
                _ => break,
            };
            sent = std::time::Instant::now();
            presence_ttl = if waited_here {
                self.presence_refresh_ttl()
            } else {
                0
            };
            let mut admit = horst_store::script::Args::default();
            admit
                .key(self.idem_key(&spec.account, &spec.idempotency_key))
                .key(keys::fair(&self.store))
                .key(keys::lane(&self.store, lane))
                .key(self.budget_key(&day))
                .key(self.job_key(&id))
                .key(keys::jobs_of(&self.store, &spec.account))
                .key(self.callers_key(&self.process_id))
                .key(self.job_key(if forget.is_empty() { &id } else { &forget }))
                .key(keys::slots(&self.store))
                .key(keys::running(&self.store))
                .key(keys::base(&self.store))
                .key(keys::owed(&self.store, lane));
            // KEYS[13], KEYS[14]: the blobs, then (unused) the job's own key.
            for i in 0..2 {
                match stored.blobs.get(i) {
                    Some((hash, _)) => admit.key(keys::blob(&self.store, hash)),
                    None => admit.key(self.job_key(&id)),
                };
            }
            admit
                .key(keys::idle(&self.store, Pool::General))
                .key(keys::idle(&self.store, Pool::Referee));
            // The record's packed value but for its two clock texts (admit.lua puts them in).
            let [before_deadline, before_created, after_created] = record::packed_parts([
                spec.account.as_bytes(),
                day.as_bytes(),
                spec.idempotency_key.as_bytes(),
                waiter.as_bytes(),
                exec_ms.as_bytes(),
                reserved.as_bytes(),
                id.as_bytes(),
                spec.kind.as_str().as_bytes(),
                trust.as_bytes(),
                input.as_bytes(),
                request.as_bytes(),
                fp.as_bytes(),
            ]);
            admit
                .arg(&day)
                .arg(&id)
                .arg(&spec.account)
                .arg(&trust)
                .arg(spec.kind.as_str())
                .arg(&before_deadline)
                .arg(&fp)
                .arg(&before_created)
                .arg(&reserved)
                .arg(s.queue.waiting_per_account)
                .arg(s.queue.waiting_global)
                .arg(q.kind_limit(spec.trust, spec.kind))
                .arg(daily)
                .arg(trust0_cap)
                .arg(s.queue.idempotency_retention_hours * 3600)
                .arg(s.queue.wait_seconds * 1000)
                .arg(&exec_ms)
                .arg(s.job_ttl_seconds() * 1000)
                .arg(keys::new_channel(&self.store))
                .arg(&forget)
                .arg(waiter)
                .arg(presence_ttl)
                .arg(lane.as_str())
                .arg(s.queue.referee_places)
                .arg(SLOT_SLACK.as_millis() as u64)
                .arg(&after_created)
                .arg(OWED_TURN_GRACE.as_millis() as u64)
                .arg(s.input_keep_ms())
                .arg(input_cap(spec.kind, s.queue.input_bytes_per_account_day))
                .arg(input_cap(spec.kind, s.queue.input_bytes_per_day))
                .arg(stored.blobs.len())
                .arg(s.queue.lease_seconds * 1000)
                .arg(HANDOFF_FRESH.as_millis() as u64)
                .arg(self.admit_bound_ms())
                .arg(if s.queue.write_previous_forms {
                    "1"
                } else {
                    ""
                });
            let ran = self.admits.call(&self.store, admit).await;
            reply = match ran {
                Ok(reply) => reply,
                Err(e) => {
                    let names = JobNames {
                        account: spec.account.clone(),
                        day,
                        idem: spec.idempotency_key.clone(),
                        waiter: String::new(),
                        lane: Some(lane),
                    };
                    self.drop_unclear(&id, &names).await;
                    return Err(e.into());
                }
            };
            match &reply {
                Admitted::Day(today) => self.day_hint.store(*today, Ordering::Relaxed),
                Admitted::New { created_ms } => self.note_server_clock(*created_ms),
                // The bound was on a stale estimate of the server's clock (this call was
                // answered, so its caller still waits): again, with the clock it told.
                Admitted::Late { now_ms } => {
                    self.note_server_clock(*now_ms);
                    tracing::info!(job = %id, "an admission ran past its bound on a stale estimate of the server's clock; sent again");
                    reply = Admitted::Day(self.guess_day());
                }
                // A blob expired between its write and the admission (a stall): again.
                Admitted::Inputs => {
                    self.put_blobs(&stored).await?;
                    reply = Admitted::Day(self.guess_day());
                }
                // The recorded job is read in a second step (admit.lua, cluster note); a
                // record that expired before its key makes the key count as new.
                Admitted::Replayed { job_id } => match self.get(job_id).await? {
                    Some(record) => {
                        // Another process wrote it: make sure it is replicated before
                        // answering from it.
                        self.store.barrier().await?;
                        return Ok(Admission::Replayed(record));
                    }
                    // The script saw the record that this read missed: never admit
                    // a second job under the key; the caller retries with it.
                    None if forget == *job_id => {
                        return Err(QueueError::Unavailable(format!(
                            "job {job_id} of idempotencyKey {:?} could not be read; retry with the same key",
                            spec.idempotency_key
                        )))
                    }
                    None => {
                        forget = job_id.clone();
                        reply = Admitted::Day(self.guess_day());
                    }
                },
                _ => {}
            }
        }
        match reply {
            Admitted::New { created_ms } => {
                // What admit.lua wrote: the caller's own spec, at the script's time.
                let record = JobRecord {
                    id: id.clone(),
                    kind: spec.kind,
                    account: spec.account.clone(),
                    trust: spec.trust,
                    state: JobState::Queued,
                    idempotency_key: spec.idempotency_key.clone(),
                    input: spec.input.clone(),
                    created_at_ms: created_ms,
                    started_at_ms: None,
                    finished_at_ms: None,
                    result: None,
                    failure: None,
                    publication: None,
                    reserved_seconds: reserve,
                    charged_seconds: 0,
                    worker: None,
                    request_id: (!request.is_empty()).then(|| request.clone()),
                    progress: None,
                    handed: false,
                };
                if presence_ttl > 0 {
                    self.presence_written(sent);
                }
                self.keep_early(early, record.clone());
                tracing::info!(job = %id, kind = spec.kind.as_str(), account = %spec.account, request_id = %request, "job admitted");
                Ok(Admission::New(record))
            }
            Admitted::Conflict { job_id } => Err(conflict(&spec.idempotency_key, &job_id)),
            Admitted::Busy { cap, retry_after_s } => {
                let waiting = match cap {
                    BusyCap::Account => self.waiting_job_of(&spec.account).await?,
                    _ => None,
                };
                Err(QueueError::Busy {
                    retry_after_seconds: retry_after_s,
                    message: match (&waiting, cap) {
                        (Some(id), _) => format!("your job {id} is already waiting; read it with get_submission {{\"jobId\": \"{id}\"}} and retry once it has finished"),
                        (None, BusyCap::Account) => "a job of yours is already waiting; wait for it to finish (see get_submission), then retry".to_string(),
                        (None, BusyCap::Global) => "the server's queue is full; retry after retryAfterSeconds".to_string(),
                        (None, BusyCap::Reserved) => format!(
                            "the server's queue is full for playtests (its last {} places are kept for simulations and submissions); retry after retryAfterSeconds",
                            s.queue.referee_places
                        ),
                        (None, BusyCap::Late { ahead }) => format!(
                            "the workers are busy: with {ahead} job(s) ahead of it, this {} could not start in time to finish within the {} s wait, so it was not queued and nothing was charged; retry after retryAfterSeconds",
                            spec.kind.as_str(),
                            s.queue.wait_seconds
                        ),
                    },
                    waiting_job_id: waiting,
                })
            }
            Admitted::Quota {
                scope,
                retry_after_s: retry,
            } => {
                let message = match scope {
                    QuotaScope::Owner => format!(
                        "your daily limit of {} {} jobs is used up; it resets at 00:00 UTC (in {} s)",
                        q.kind_limit(spec.trust, spec.kind),
                        spec.kind.as_str(),
                        retry
                    ),
                    QuotaScope::Global => format!(
                        "the server's {} reserved execution seconds for today are used up; they reset at 00:00 UTC (in {retry} s)",
                        q.daily_seconds
                    ),
                    QuotaScope::GlobalNew => format!(
                        "the {} s of today's execution budget that all trust-0 accounts share are used up; they reset at 00:00 UTC (in {retry} s)",
                        q.trust0_cap_seconds()
                    ),
                    QuotaScope::InputBytes => format!(
                        "your {} bytes of job input (maps and replays over {} bytes, each counted once per day however many jobs use it) that may be kept per day are used up; reuse a map or replay you already sent today, send smaller ones, or retry after 00:00 UTC (in {retry} s)",
                        s.queue.input_bytes_per_account_day,
                        inputs::INLINE_MAX
                    ),
                    QuotaScope::GlobalInputBytes => format!(
                        "the server's {} bytes of job input that may be kept per day are used up; reuse a map or replay already sent today, or retry after 00:00 UTC (in {retry} s)",
                        s.queue.input_bytes_per_day
                    ),
                };
                Err(QueueError::Quota {
                    scope,
                    retry_after_seconds: retry,
                    message,
                })
            }
            Admitted::Replayed { .. }
            | Admitted::Day(_)
            | Admitted::Inputs
            | Admitted::Late { .. } => Err(QueueError::Store(
                "admission did not settle (the day or the idempotency record kept changing); try again".to_string(),
            )),
        }
    }

    /// The admission calls this process sent to Redis, and the admissions they carried
    /// (group commit: under load a call carries several).
    pub fn admission_calls(&self) -> (u64, u64) {
        self.admits.counts()
    }

    /// The completion calls this process sent to Redis, and the completions they carried.
    pub fn completion_calls(&self) -> (u64, u64) {
        self.completes.counts()
    }

    /// The completion calls this process sent after waiting for its slots' next
    /// completions, and those whose wait ran out ([`CallGroup`]'s linger).
    pub fn completion_lingers(&self) -> (u64, u64) {
        self.completes.lingers()
    }

    /// This process's completion calls sent while another was in the air ([`CallGroup`]'s
    /// second flight).
    pub fn completion_overlaps(&self) -> u64 {
        self.completes.overlapped()
    }

    /// Notes the server's clock from an admission's answer that came just now.
    fn note_server_clock(&self, ms: u64) {
        self.server_clock.note(ms, self.store.clock_offset_ms());
    }

    /// The latest server time (ms) an admission sent now may run at (admit.lua's ARGV[34]):
    /// when this process stops waiting for its answer. A partition can hold a call past that
    /// and deliver it when it heals (TCP retransmits what was sent); its caller was told the
    /// store could not be reached, and the drop of its job ([`Queue::drop_unclear`]) was held
    /// up with it, so a job it queued then would run and be charged for a caller that may
    /// never ask again (`an_admission_that_reaches_redis_after_its_caller_gave_up_admits_nothing`).
    ///
    /// The estimate is [`horst_store::ServerClock`]'s. A bound that is too early (a slow
    /// answer behind the estimate, a step of the server's clock) is answered `late` while the
    /// caller still waits, and the call is sent again with the clock that answer told. 0 (no
    /// bound) until an answer told the clock.
    fn admit_bound_ms(&self) -> u64 {
        self.server_clock.bound_ms(self.store.clock_offset_ms())
    }

    /// After an admission that failed without a clear answer (its reply lost, or the
    /// replicas' `WAIT` failed after the script ran): drops job `id` if the script queued it,
    /// so it neither runs nor stays charged while its caller is told the admission failed (a
    /// no-op if it never ran). Bounded: the caller's error waits for it.
    ///
    /// One message, with the names the admission sent (its account, key and the day of the
    /// call that failed; the script checks the record says the same) and the script's source
    /// (`Call::run_whole`): the drop used to read the names from the record first, and to
    /// send the script by its SHA, and on a one-way partition (requests reach Redis, answers
    /// do not) the read's answer, or the NOSCRIPT of a server that had not run the script
    /// yet, never came: the drop was never sent, and the job ran and was charged for a
    /// caller told it failed
    /// (`answers_held_on_a_one_way_partition_leave_no_job_charged_unheard_or_recorded_twice`).
    async fn drop_unclear(&self, id: &str, names: &JobNames) {
        let dropped = tokio::time::timeout(
            UNCLEAR_DROP_WITHIN,
            self.cancel_named(
                id,
                names,
                JobState::Cancelled,
                FailureCode::Cancelled,
                "the admission's answer was lost, so its caller was told it failed; the job was dropped before it started and nothing was charged; call again (the same idempotencyKey starts afresh)",
                DropAs::Unclear,
            ),
        )
        .await;
        match dropped {
            Ok(Ok(true)) => {
                tracing::warn!(job = %id, "an admission whose answer was lost had queued the job; dropped")
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => {
                tracing::warn!(job = %id, error = %e, "an admission's answer was lost; its job, if queued, may not have been dropped")
            }
            Err(_) => {
                tracing::warn!(job = %id, "an admission's answer was lost; dropping its job, if queued, timed out")
            }
        }
    }

    /// Writes the blobs of an input about to be admitted: a new one with an expiry of
    /// [`inputs::PROVISIONAL_MS`] (so a crash before admission leaks nothing), one that
    /// exists left as it is (`SET NX`); admission extends what it adopts.
    async fn put_blobs(&self, stored: &inputs::Stored) -> Result<(), QueueError> {
        if stored.blobs.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (hash, bytes) in &stored.blobs {
            pipe.cmd("SET")
                .arg(keys::blob(&self.store, hash))
                .arg(bytes)
                .arg("NX")
                .arg("PX")
                .arg(inputs::PROVISIONAL_MS)
                .ignore();
        }
        let _: () = pipe.query_async(&mut self.store.conn()).await?;
        Ok(())
    }

    /// A claimed job's whole input: the record's, with the blobs it names read back. `None`
    /// if one is gone (only a job left queued far past its wait, which claim times out first).
    async fn claimed_input(
        &self,
        fields: &[(String, String)],
        inline: JobInput,
    ) -> Result<Option<JobInput>, QueueError> {
        match self.taken_input(fields, inline, None).await? {
            Taken::Input(input) => Ok(Some(input)),
            Taken::InputGone | Taken::GivenBack => Ok(None),
        }
    }

    /// [`Queue::claimed_input`] that, with `take_up` (a handed job's id), first takes the job
    /// up: deletes its record's `handed` mark (admit.lua), in the same round trip as the
    /// blobs' read. Only a slot that deleted the mark runs the job; gone, the job was given
    /// back to its lane (the slot's worker was taken for dead, reap.lua or stop.lua) or
    /// stopped, and another claim runs it.
    async fn taken_input(
        &self,
        fields: &[(String, String)],
        inline: JobInput,
        take_up: Option<&str>,
    ) -> Result<Taken, QueueError> {
        let stored = fields
            .iter()
            .find(|(k, _)| k == "input")
            .map(|(_, v)| v.as_str())
            .unwrap_or("{}");
        let named = inputs::named(stored);
        if named.is_empty() && take_up.is_none() {
            return Ok(Taken::Input(inline));
        }
        let mut pipe = redis::pipe();
        if let Some(id) = take_up {
            pipe.cmd("HDEL").arg(self.job_key(id)).arg("handed");
        }
        if !named.is_empty() {
            let get = pipe.cmd("MGET");
            for (_, hash) in &named {
                get.arg(keys::blob(&self.store, hash));
            }
        }
        let mut replies: Vec<redis::Value> = match take_up {
            // The take-up is what keeps a put-back (reap.lua, stop.lua) from giving the job
            // to another slot while this one runs it: like the claim it stands for (claim.lua
            // is durable), it waits for the replicas, so a failover after it does not bring
            // the mark back and a second slot run the job too. Unacknowledged in time (a
            // replica lagging or away), the job runs all the same, as a claim made by a
            // completion whose WAIT failed (docs/reliability.md): not running it would leave
            // it to be reaped, charged and never run, for a failover that may never come.
            Some(id) => {
                let mut conn = self.store.durable().await?;
                let replies = pipe.query_async(&mut conn).await?;
                let key = self.job_key(id);
                if let Err(e) = self.store.settle_at(&mut conn, key.as_bytes()).await {
                    tracing::warn!(job = %id, error = %e, "the replicas did not acknowledge the take-up of a handed job in time; it runs (a failover now could give it to a second slot)");
                }
                replies
            }
            None => pipe.query_async(&mut self.store.conn()).await?,
        };
        if take_up.is_some() {
            let taken: i64 = redis::from_redis_value(replies.remove(0))
                .map_err(|e| QueueError::Store(e.to_string()))?;
            if taken == 0 {
                return Ok(Taken::GivenBack);
            }
        }
        if named.is_empty() {
            return Ok(Taken::Input(inline));
        }
        let bytes: Vec<Option<String>> = redis::from_redis_value(replies.remove(0))
            .map_err(|e| QueueError::Store(e.to_string()))?;
        Ok(match inputs::join(stored, &bytes) {
            Some(input) => Taken::Input(input),
            None => Taken::InputGone,
        })
    }

    /// The ids of the waiting jobs of both lanes, each lane's next turn last (at most
    /// `queue.waiting_global` of them).
    pub(crate) async fn waiting_ids(&self) -> Result<Vec<String>, QueueError> {
        // Both lanes in one round trip: the housekeeping reads them every round.
        let mut pipe = redis::pipe();
        for lane in Lane::ALL {
            pipe.cmd("ZRANGE")
                .arg(keys::lane(&self.store, lane))
                .arg(0)
                .arg(-1);
        }
        let lanes: Vec<Vec<String>> = pipe.query_async(&mut self.store.conn()).await?;
        Ok(lanes
            .into_iter()
            .flat_map(|l| l.into_iter().rev())
            .collect())
    }

    /// The waiting jobs (as [`Queue::waiting_ids`]) with the values of `names` from each
    /// record (`None` for a field or record that is missing), in
    /// [`WAITING_READ_CHUNK`]-record round trips, not one a job: a round of the housekeeping
    /// reads them all, and over a slow link one read a job made the round longer than a
    /// stall (`STALL_AFTER`), so no lease was ever reaped while the queue was full.
    pub(crate) async fn waiting_fields(
        &self,
        names: &[&str],
    ) -> Result<Vec<(String, Vec<Option<String>>)>, QueueError> {
        let ids = self.waiting_ids().await?;
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(WAITING_READ_CHUNK) {
            let mut pipe = redis::pipe();
            for id in chunk {
                pipe.add_command(record::job_fields_cmd(&self.job_key(id), names));
            }
            let replies: Vec<Vec<Option<Vec<u8>>>> =
                pipe.query_async(&mut self.store.conn()).await?;
            for (id, reply) in chunk.iter().zip(replies) {
                out.push((id.clone(), record::job_fields_of(names, reply)));
            }
        }
        Ok(out)
    }

    /// The jobs waiting or running now (running first), for the operator's job view.
    pub async fn active_ids(&self) -> Result<Vec<String>, QueueError> {
        let mut ids: Vec<String> = redis::cmd("ZRANGE")
            .arg(keys::running(&self.store))
            .arg(0)
            .arg(-1)
            .query_async(&mut self.store.conn())
            .await?;
        for lane in Lane::ALL {
            ids.extend(self.lane_ids(lane).await?);
        }
        Ok(ids)
    }

    /// A lane's waiting job ids in turn order (the next first).
    pub async fn lane_ids(&self, lane: Lane) -> Result<Vec<String>, QueueError> {
        Ok(redis::cmd("ZRANGE")
            .arg(keys::lane(&self.store, lane))
            .arg(0)
            .arg(-1)
            .query_async(&mut self.store.conn())
            .await?)
    }

    /// The account's oldest waiting job, named in a refusal by the per-account cap. A read
    /// after the refusal (the script cannot name keys it learns from the list, admit.lua):
    /// the global queue holds at most `queue.waiting_global` ids.
    async fn waiting_job_of(&self, account: &str) -> Result<Option<String>, QueueError> {
        let waiting = self.waiting_fields(&["account"]).await?;
        Ok(waiting
            .into_iter()
            .rev()
            .find(|(_, f)| f[0].as_deref() == Some(account))
            .map(|(id, _)| id))
    }

    /// Whether `account` has used idempotency key `key` recently (its record is kept for
    /// `queue.idempotency_retention_hours`); a call with it will be answered from the record.
    pub async fn has_idempotency_record(
        &self,
        account: &str,
        key: &str,
    ) -> Result<bool, QueueError> {
        let mut conn = self.store.conn();
        let n: i64 = redis::cmd("EXISTS")
            .arg(self.idem_key(account, key))
            .query_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    /// The job an earlier call with `spec`'s idempotency key made, answered as admission
    /// answers a replay (the same input: its record; other input: `Conflict`), without
    /// admitting anything. `None` when the key is not in use or its job record is gone:
    /// admission would take the call as new, so a caller that checks new jobs first
    /// (a submission's preflight) checks it.
    pub async fn replay_of(&self, spec: &JobSpec) -> Result<Option<JobRecord>, QueueError> {
        let rec: Option<String> = redis::cmd("GET")
            .arg(self.idem_key(&spec.account, &spec.idempotency_key))
            .query_async(&mut self.store.conn())
            .await?;
        let Some((fp, job_id)) = rec.as_deref().and_then(|r| r.split_once('|')) else {
            return Ok(None);
        };
        if fp != fingerprint(spec.kind, &spec.input.to_value()) {
            return Err(conflict(&spec.idempotency_key, job_id));
        }
        let Some(record) = self.get(job_id).await? else {
            return Ok(None);
        };
        // Another process wrote it: replicated before it is answered (as admission's replay).
        self.store.barrier().await?;
        Ok(Some(record))
    }

    /// The job record, if it exists (finished records expire after the retention period).
    pub async fn get(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        let mut conn = self.store.conn();
        let fields: Vec<(String, Vec<u8>)> = redis::cmd("HGETALL")
            .arg(self.job_key(id))
            .query_async(&mut conn)
            .await?;
        Ok(JobRecord::from_fields(record::named_fields(fields)))
    }

    /// Job `id`'s state alone (one field, not the record); `None` if there is no such job.
    pub async fn state_of(&self, id: &str) -> Result<Option<JobState>, QueueError> {
        let state: Option<String> = redis::cmd("HGET")
            .arg(self.job_key(id))
            .arg("state")
            .query_async(&mut self.store.conn())
            .await?;
        Ok(state.as_deref().and_then(JobState::parse))
    }

    /// Job `id`'s whole input, the blobs it names read back; `None` if the record or one of
    /// its blobs is gone.
    pub async fn input_of(&self, id: &str) -> Result<Option<JobInput>, QueueError> {
        let stored = job_fields(&mut self.store.conn(), &self.job_key(id), &["input"])
            .await?
            .pop()
            .flatten();
        let Some(stored) = stored else {
            return Ok(None);
        };
        let Ok(inline) = serde_json::from_str::<JobInput>(&stored) else {
            return Ok(None);
        };
        self.claimed_input(&[("input".to_string(), stored)], inline)
            .await
    }

    /// Ids in an account's index of jobs (`jobs:<account>`), newest first, from position
    /// `offset`, at most `count`; and how many the index holds. An id may name a record that
    /// expired since ([`Queue::get`] answers `None`).
    pub async fn job_ids_of(
        &self,
        account: &str,
        offset: usize,
        count: usize,
    ) -> Result<(Vec<String>, usize), QueueError> {
        self.newest_ids(keys::jobs_of(&self.store, account), offset, count)
            .await
    }

    /// The ids of jobs that ended failed or cancelled, of every account, newest end first,
    /// from `offset` (`queue:ended`: the newest 10,000 within the job retention; jobs that
    /// ended before this version are not in it), and how many it holds.
    pub async fn ended_ids(
        &self,
        offset: usize,
        count: usize,
    ) -> Result<(Vec<String>, usize), QueueError> {
        self.newest_ids(keys::ended(&self.store), offset, count)
            .await
    }

    /// A page of the job-id index `key` (a zset scored by time), newest first, and its size.
    async fn newest_ids(
        &self,
        key: String,
        offset: usize,
        count: usize,
    ) -> Result<(Vec<String>, usize), QueueError> {
        if count == 0 {
            return Ok((Vec::new(), 0));
        }
        let (ids, total): (Vec<String>, usize) = redis::pipe()
            .cmd("ZREVRANGE")
            .arg(&key)
            .arg(offset)
            .arg(offset.saturating_add(count - 1))
            .cmd("ZCARD")
            .arg(&key)
            .query_async(&mut self.store.conn())
            .await?;
        Ok((ids, total))
    }

    /// An account's jobs, newest first; the offset of the next page if there is one.
    pub async fn list(
        &self,
        account: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<JobRecord>, Option<usize>), QueueError> {
        let (ids, total) = self.job_ids_of(account, offset, limit).await?;
        let mut records = Vec::new();
        for id in &ids {
            if let Some(r) = self.get(id).await? {
                records.push(r);
            }
        }
        let next = offset.saturating_add(ids.len());
        Ok((records, (!ids.is_empty() && next < total).then_some(next)))
    }

    /// Waits until the job has finished, at most `limit`, race-free: the subscription is
    /// registered before the state is read, so a completion in between is not missed.
    ///
    /// A job still queued when `limit` runs out is dropped (`failed`, code `timeout`,
    /// reservation released). A running one is returned as it is: it runs to its end.
    pub async fn wait(&self, id: &str, limit: Duration) -> Result<JobRecord, QueueError> {
        let deadline = tokio::time::Instant::now() + limit;
        // A job admitted here was subscribed to before it was queued: nothing can have
        // finished it unheard, so the first read is spared.
        let early = self
            .early
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        let (mut sub, mut unread, admitted) = match early {
            Some(e) if e.at.elapsed() < EARLY_KEEP => (e.sub, true, Some(e.record)),
            _ => (
                self.notifier
                    .subscribe(&keys::done_channel(&self.store, id)),
                false,
                None,
            ),
        };
        loop {
            // The completion carries the final state (complete.lua): with the record its
            // admission built here, nothing needs reading.
            let finished = admitted
                .as_ref()
                .zip(sub.payload())
                .and_then(|(rec, payload)| {
                    record::Finished::parse(&payload).map(|f| f.apply(rec.clone()))
                });
            if let Some(record) = finished {
                self.store.barrier().await?;
                return Ok(record);
            }
            if !std::mem::take(&mut unread) {
                let record = self.get(id).await?.ok_or_else(|| QueueError::Gone {
                    job_id: id.to_string(),
                })?;
                if record.state.is_final() {
                    // The worker wrote it: answer only once the replicas have it.
                    self.store.barrier().await?;
                    return Ok(record);
                }
            }
            // Pub/sub is fire-and-forget; re-reading every second covers a lost message.
            let tick = tokio::time::Instant::now() + Duration::from_secs(1);
            tokio::select! {
                _ = sub.changed() => {}
                _ = tokio::time::sleep_until(tick.min(deadline)) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                self.cancel_queued(
                    id,
                    JobState::Failed,
                    FailureCode::Timeout,
                    "the job did not start in time to finish within the wait limit; it did not run and nothing was charged; try again later",
                )
                .await?;
                return self.get(id).await?.ok_or_else(|| QueueError::Gone {
                    job_id: id.to_string(),
                });
            }
        }
    }

    /// Wakes on every change of job `id`'s final state (its completion channel): its
    /// waiters, and its worker, which stops when an operator cancelled the job.
    pub fn subscribe_done(&self, id: &str) -> Subscription {
        self.notifier.subscribe(&self.done_channel(id))
    }

    /// Wakes on every admission of a version before issue 35 (`queue:new`, in the queue's slot
    /// group; admission now wakes one idle slot on its own channel, [`Queue::slot_wake`]). On a
    /// cluster the name carries the queue's hash tag, so a name built by hand elsewhere (the
    /// records' `{g}`) never hears it.
    pub fn subscribe_new(&self) -> Subscription {
        self.notifier.subscribe(&keys::new_channel(&self.store))
    }

    /// Drops a job that has not started. Returns false if it had started (or finished).
    pub async fn cancel_queued(
        &self,
        id: &str,
        state: JobState,
        code: FailureCode,
        message: &str,
    ) -> Result<bool, QueueError> {
        // Two steps (cancel.lua, cluster note): the record names the day and idempotency keys.
        let names = self.job_names(id).await?;
        self.cancel_named(id, &names, state, code, message, DropAs::Asked)
            .await
    }

    /// [`Queue::cancel_queued`] with the job's names known (read from its record, sent with
    /// its admission, or read for the orphans' sweep): one step, sent as `how` says.
    /// cancel.lua drops nothing if the record says otherwise.
    async fn cancel_named(
        &self,
        id: &str,
        names: &JobNames,
        state: JobState,
        code: FailureCode,
        message: &str,
        how: DropAs,
    ) -> Result<bool, QueueError> {
        let Some(lane) = names.lane else {
            return Ok(false);
        };
        let mut call = scripts::CANCEL.call(&self.store);
        call.key(self.job_key(id))
            .key(keys::lane(&self.store, lane))
            .key(keys::fair(&self.store))
            .key(self.budget_key(&names.day))
            .key(self.idem_key(&names.account, &names.idem))
            .key(self.callers_key(&names.waiter))
            .key(keys::clock(&self.store))
            .key(keys::ended(&self.store))
            .arg(id)
            .arg(state.as_str())
            .arg(code.as_str())
            .arg(message)
            .arg(self.settings.job_ttl_seconds())
            .arg(self.done_channel(id))
            .arg(&names.account)
            .arg(&names.day)
            .arg(&names.idem)
            .arg(match how {
                DropAs::Orphan => names.waiter.as_str(),
                DropAs::Asked | DropAs::Unclear => "",
            });
        let dropped: Applied = match how {
            DropAs::Unclear => call.run_whole().await?,
            DropAs::Asked | DropAs::Orphan => call.run().await?,
        };
        Ok(dropped == Applied::Done)
    }

    /// An operator cancels job `id` with `reason`: a queued job is dropped (its reservation
    /// released, nothing charged), a running one ends `cancelled` now (its charge kept; its
    /// worker stops within 100 ms). Either way the waiting caller is woken at once.
    pub async fn cancel(&self, id: &str, reason: &str) -> Result<CancelOutcome, QueueError> {
        let message = format!("cancelled by the operator: {reason}");
        for _ in 0..3 {
            let Some(record) = self.get(id).await? else {
                return Ok(CancelOutcome::Missing);
            };
            match record.state {
                JobState::Queued => {
                    let msg = format!("{message}; {NOT_STARTED}");
                    if self
                        .cancel_queued(id, JobState::Cancelled, FailureCode::Cancelled, &msg)
                        .await?
                    {
                        return Ok(CancelOutcome::Dropped);
                    }
                }
                JobState::Running => {
                    let msg = format!(
                        "{message}; it was stopped while running and stays charged ({} s)",
                        record.charged_seconds
                    );
                    let failure = Failure::new(FailureCode::Cancelled, msg);
                    // Handed to an idle slot that had not taken it up yet, it never ran:
                    // dropped as a queued job, with a queued job's message.
                    let never_ran = format!("{message}; {NOT_STARTED}");
                    match self
                        .stop(id, &failure, JobState::Cancelled, &never_ran)
                        .await?
                    {
                        scripts::Stopped::Done => return Ok(CancelOutcome::Stopped),
                        scripts::Stopped::Dropped => return Ok(CancelOutcome::Dropped),
                        scripts::Stopped::NotRunning | scripts::Stopped::PutBack => {}
                    }
                }
                state => return Ok(CancelOutcome::Finished(state)),
            }
            // It moved on (started, or finished) between the read and the script: read again.
        }
        Err(QueueError::Store(format!(
            "job {id} kept changing state; try the cancel again"
        )))
    }

    /// Ends running job `id` now with `failure` in `state` (`Cancelled` or `Failed`), its
    /// charge kept and its waiters and worker woken (`stop.lua`). A job handed to an idle
    /// slot that has not taken it up never ran: `Failed` puts it back in its lane,
    /// `Cancelled` drops it uncharged with `never_ran` (the message, code `cancelled`).
    async fn stop(
        &self,
        id: &str,
        failure: &Failure,
        state: JobState,
        never_ran: &str,
    ) -> Result<scripts::Stopped, QueueError> {
        let failure =
            serde_json::to_string(failure).map_err(|e| QueueError::Store(e.to_string()))?;
        let names = self.job_names(id).await?;
        let mut stop = scripts::STOP.call(&self.store);
        self.ending_keys(&mut stop, id, &names.day);
        stop.key(keys::ended(&self.store))
            .key(keys::fair(&self.store))
            .key(keys::lane(&self.store, names.lane.unwrap_or(Lane::Referee)))
            .key(keys::idle(&self.store, Pool::General))
            .key(keys::idle(&self.store, Pool::Referee))
            .key(self.idem_key(&names.account, &names.idem));
        Ok(stop
            .arg(id)
            .arg(failure)
            .arg(self.settings.job_ttl_seconds())
            .arg(self.done_channel(id))
            .arg(&names.day)
            .arg(state.as_str())
            .arg(keys::new_channel(&self.store))
            .arg(never_ran)
            .arg(&names.account)
            .arg(&names.idem)
            .run()
            .await?)
    }

    /// The running jobs of a worker process (`horst up`'s child): those whose slot's name
    /// starts with `worker_prefix` (`<host>-<pid>-<tag>-`, as `horst_worker::WorkerIdentity`
    /// names them).
    pub async fn running_of(&self, worker_prefix: &str) -> Result<Vec<JobRecord>, QueueError> {
        let ids: Vec<String> = redis::cmd("ZRANGE")
            .arg(keys::running(&self.store))
            .arg(0)
            .arg(-1)
            .query_async(&mut self.store.conn())
            .await?;
        let mut running = Vec::new();
        for id in ids {
            let Some(r) = self.get(&id).await? else {
                continue;
            };
            let theirs = r
                .worker
                .as_deref()
                .is_some_and(|w| w.starts_with(worker_prefix));
            if r.state == JobState::Running && theirs {
                running.push(r);
            }
        }
        Ok(running)
    }

    /// Ends running job `id` of a worker process that is gone (`horst up`'s child, which died
    /// or was killed over its memory limit) `failed` with `failure` at once, its charge kept
    /// and its caller told, instead of a lease later with "its lease expired"
    /// ([`Abandoned::Failed`]). A job an admission handed to one of its idle slots that the
    /// slot had not taken up never ran: it waits again at its lane's front, uncharged, for
    /// another slot ([`Abandoned::PutBack`]).
    pub async fn fail_running(&self, id: &str, failure: &Failure) -> Result<Abandoned, QueueError> {
        Ok(match self.stop(id, failure, JobState::Failed, "").await? {
            scripts::Stopped::Done => Abandoned::Failed,
            // `Dropped` is an operator's (`Cancelled`) alone; a failed hand-off is put back.
            scripts::Stopped::PutBack | scripts::Stopped::Dropped => Abandoned::PutBack,
            scripts::Stopped::NotRunning => Abandoned::NotRunning,
        })
    }

    /// A guard for a blocking call: if the caller goes away (the handler's future is
    /// dropped) while the job is still queued, the job is dropped and its reservation
    /// released. Call [`CancelGuard::disarm`] once the wait has returned.
    pub fn cancel_guard(&self, id: &str) -> CancelGuard {
        CancelGuard {
            queue: Some(self.clone()),
            id: id.to_string(),
        }
    }

    /// What the account may still do today.
    pub async fn remaining(&self, account: &str, trust: u8) -> Result<Remaining, QueueError> {
        let s = self.quotas().await?;
        let mut day = self.guess_day();
        for _ in 0..3 {
            let reply: RemainingReply = scripts::REMAINING
                .call(&self.store)
                .key(self.budget_key(&day.to_string()))
                .arg(day)
                .arg(trust)
                .arg(s.kind_limit(trust, JobKind::Submit))
                .arg(s.kind_limit(trust, JobKind::Playtest))
                .arg(s.kind_limit(trust, JobKind::Simulate))
                .arg(s.daily_seconds)
                .arg(s.trust0_cap_seconds())
                .arg(account)
                .run()
                .await?;
            match reply {
                RemainingReply::Ok(r) => return Ok(r),
                RemainingReply::Day(today) => {
                    self.day_hint.store(today, Ordering::Relaxed);
                    day = today;
                }
            }
        }
        Err(QueueError::Store(
            "the server's day kept changing; try again".to_string(),
        ))
    }

    /// Records what became of a won submission (`publish.lua`, the field's only writer) and
    /// returns the publication that stands: this one, or one recorded before it (a stored
    /// revision replaces `unpublished`, nothing else is replaced). `None`: the job did not
    /// succeed (or its record is gone).
    pub async fn publish(
        &self,
        id: &str,
        publication: &Publication,
    ) -> Result<Option<Publication>, QueueError> {
        let json =
            serde_json::to_string(publication).map_err(|e| QueueError::Store(e.to_string()))?;
        let kind = match publication {
            Publication::Stored { .. } => "stored",
            Publication::Refused { .. } => "refused",
            Publication::Unpublished { .. } => "unpublished",
        };
        let reply: PublishReply = scripts::PUBLISH
            .call(&self.store)
            .key(self.job_key(id))
            .arg(json)
            .arg(kind)
            .run()
            .await?;
        match reply {
            PublishReply::NotSucceeded => Ok(None),
            PublishReply::Standing(json) => serde_json::from_str(&json)
                .map(Some)
                .map_err(|e| QueueError::Store(format!("job {id}: unreadable publication: {e}"))),
        }
    }

    // ---- the worker's side ----

    /// Claims the next waiting job for a general slot of `worker` (either lane, the job
    /// that has waited longest first), or `None` if nothing waits.
    pub async fn claim(&self, worker: &str) -> Result<Option<Claim>, QueueError> {
        self.claim_for(worker, Pool::General).await
    }

    /// Claims the next job a slot of `pool` may run: a referee slot only referee work.
    pub async fn claim_for(&self, worker: &str, pool: Pool) -> Result<Option<Claim>, QueueError> {
        self.claim_slot(worker, pool, false).await
    }

    /// [`Queue::claim_for`] by slot `slot`, which is `registered` idle ([`Queue::idle`])
    /// unless an admission woke it (which took it off): a claim takes it off.
    pub async fn claim_slot(
        &self,
        slot: &str,
        pool: Pool,
        registered: bool,
    ) -> Result<Option<Claim>, QueueError> {
        self.claim_with(slot, pool, registered, None).await
    }

    /// [`Queue::claim_slot`] by a slot whose newest claim token is `newer_than` (0: none).
    /// A `registered` slot no longer among the idle slots was taken off by an admission,
    /// which may have handed it a job whose wake-up it did not hear: that job (its token
    /// newer than `newer_than`) is answered first (claim.lua).
    pub async fn claim_slot_after(
        &self,
        slot: &str,
        pool: Pool,
        registered: bool,
        newer_than: u64,
    ) -> Result<Option<Claim>, QueueError> {
        self.claim_with(slot, pool, registered, Some(newer_than))
            .await
    }

    /// claim.lua; with `newer_than`, a registered slot taken off the idle slots looks for a
    /// job handed to it first.
    async fn claim_with(
        &self,
        slot: &str,
        pool: Pool,
        registered: bool,
        newer_than: Option<u64>,
    ) -> Result<Option<Claim>, QueueError> {
        let newer_than = newer_than.map_or_else(String::new, |t| t.to_string());
        let lanes = pool.lanes();
        // One step (claim.lua): the script takes the head that has waited longest, dropping
        // the heads that can no longer run on the way; the bound only keeps a call finite.
        for _ in 0..8 {
            let reply: ClaimReply = scripts::CLAIM
                .call(&self.store)
                .key(keys::lane(&self.store, lanes[0]))
                .key(keys::lane(&self.store, lanes[lanes.len() - 1]))
                .key(keys::fair(&self.store))
                .key(keys::running(&self.store))
                .key(keys::idle(&self.store, pool))
                .key(keys::base(&self.store))
                .arg(slot)
                .arg(self.settings.queue.lease_seconds * 1000)
                .arg(self.settings.job_ttl_seconds())
                .arg(pool.as_str())
                .arg(16)
                .arg(if registered { "1" } else { "" })
                .arg(WAITER_SURELY_PRESENT.as_millis() as u64)
                .arg(&newer_than)
                .run()
                .await?;
            match reply {
                ClaimReply::Claimed {
                    token,
                    values,
                    more,
                } => {
                    let fields = scripts::claimed_fields(token, values, slot);
                    if let Some(claim) = self.claimed(token, fields, more).await? {
                        return Ok(Some(claim));
                    }
                }
                ClaimReply::Empty => return Ok(None),
                ClaimReply::Skipped => {}
            }
        }
        Ok(None)
    }

    /// The job running under slot `slot`'s claim other than those in `known` (the jobs the
    /// slot knows it holds: one whose completion it retries, one it gave up recording, and
    /// those it was handed with its newest token): a claim Redis ran after the slot stopped
    /// waiting for its answer (a stall longer than the call's timeout, a connection cut
    /// after the script ran), which the slot then runs as if the answer had come. A slot
    /// calls it after a claim, or a completion that claims, failed; without it the job
    /// would sit until its lease ran out and fail as a dead worker's job does. Only a claim
    /// at least as new as `newer_than` (the newest token the slot was handed, 0 for none)
    /// counts: a job the slot gave up recording runs under its name too, until it is
    /// reaped, and running it again would run it twice. A claim of that very millisecond
    /// (a trivial job's completion claims the next within it) is told from the known ones
    /// by its id. One round trip.
    pub async fn recover_claim(
        &self,
        slot: &str,
        known: &[&str],
        newer_than: u64,
    ) -> Result<Option<Claim>, QueueError> {
        let mut call = scripts::CLAIMED_BY.call(&self.store);
        call.key(keys::running(&self.store))
            .key(keys::base(&self.store))
            .arg(slot)
            .arg(newer_than);
        for id in known {
            call.arg(*id);
        }
        let reply: ClaimReply = call.run().await?;
        match reply {
            ClaimReply::Claimed { token, values, .. } => {
                let fields = scripts::claimed_fields(token, values, slot);
                let claim = self.claimed(token, fields, 0).await?;
                if let Some(c) = &claim {
                    tracing::warn!(job = %c.record.id, slot, "a claim whose answer was lost is run now");
                }
                Ok(claim)
            }
            ClaimReply::Empty | ClaimReply::Skipped => Ok(None),
        }
    }

    /// The claim of a job claim.lua (or complete.lua) took: its record as the script gave
    /// it, its input read back. `None`: an input blob is gone, the job was failed (claim
    /// again).
    async fn claimed(
        &self,
        token: u64,
        fields: Vec<(String, String)>,
        more: u64,
    ) -> Result<Option<Claim>, QueueError> {
        self.taken(token, fields, more, false).await
    }

    /// [`Queue::claimed`], and with `take_up` the job is a hand-off (admit.lua) that the
    /// slot takes up first ([`Queue::taken_input`]): `None` too when it was given back.
    async fn taken(
        &self,
        token: u64,
        fields: Vec<(String, String)>,
        more: u64,
        take_up: bool,
    ) -> Result<Option<Claim>, QueueError> {
        let id = fields
            .iter()
            .find(|(k, _)| k == "id")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let mut record = JobRecord::from_fields(fields.clone())
            .ok_or_else(|| QueueError::Store(format!("job {id} is unreadable")))?;
        let inline = std::mem::take(&mut record.input);
        let take_up = take_up.then_some(id.as_str());
        match self.taken_input(&fields, inline, take_up).await? {
            Taken::GivenBack => {
                tracing::info!(job = %id, "a job handed to this slot was given back to its lane before the slot took it up (its worker was taken for dead; another claim runs it), or an operator cancelled it; the slot does not run it");
                Ok(None)
            }
            Taken::Input(input) => {
                record.input = input;
                Ok(Some(Claim {
                    record,
                    token,
                    more_waiting: more > 0,
                }))
            }
            Taken::InputGone => {
                let failure = Failure::new(
                    FailureCode::InternalError,
                    "the job's input (its map or replay) was no longer stored when a worker took it; it did not run; submit it again",
                );
                tracing::error!(job = %id, "a claimed job's input blob is gone");
                self.complete(&id, token, Err(failure)).await?;
                Ok(None)
            }
        }
    }

    /// Registers slot `slot` of `pool` as idle (an admission pops one idle slot and wakes it
    /// alone, admit.lua), then looks at its lanes once more: `true` if a job waits (an
    /// admission before the registration woke nobody for it: claim it now). One round trip.
    pub async fn idle(&self, slot: &str, pool: Pool) -> Result<bool, QueueError> {
        Ok(match self.idle_look(slot, pool, false, 0).await? {
            IdleLook::Registered => false,
            IdleLook::Waiting | IdleLook::Handed(_) => true,
        })
    }

    /// [`Queue::idle`] for a slot that may already be `registered` (its once-a-second
    /// refresh) and whose newest claim token is `newer_than` (0: none). A registered slot
    /// that finds itself taken off the idle slots was woken, or handed a job (admit.lua)
    /// whose wake-up it did not hear: that job is answered ([`IdleLook::Handed`]) and the
    /// slot is not registered. One round trip.
    pub async fn idle_look(
        &self,
        slot: &str,
        pool: Pool,
        registered: bool,
        newer_than: u64,
    ) -> Result<IdleLook, QueueError> {
        let lanes = pool.lanes();
        let reply: IdleReply = scripts::IDLE
            .call(&self.store)
            .key(keys::idle(&self.store, pool))
            .key(keys::fair(&self.store))
            .key(keys::lane(&self.store, lanes[0]))
            .key(keys::lane(&self.store, lanes[lanes.len() - 1]))
            .key(keys::running(&self.store))
            .key(keys::base(&self.store))
            .arg(slot)
            .arg(pool.as_str())
            .arg(newer_than)
            .arg(if registered { "1" } else { "" })
            .run()
            .await?;
        Ok(match reply {
            IdleReply::Registered => IdleLook::Registered,
            IdleReply::Waiting => IdleLook::Waiting,
            IdleReply::Handed(ClaimReply::Claimed { token, values, .. }) => {
                let fields = scripts::claimed_fields(token, values, slot);
                match self.claimed(token, fields, 0).await? {
                    Some(claim) => {
                        tracing::info!(job = %claim.record.id, slot, "a job handed to this slot whose wake-up was not heard is run now");
                        IdleLook::Handed(Box::new(claim))
                    }
                    // Its input was gone: failed; the slot looks again.
                    None => IdleLook::Waiting,
                }
            }
            IdleReply::Handed(_) => IdleLook::Waiting,
        })
    }

    /// The job an admission handed to slot `slot` with its wake-up `message` (admit.lua),
    /// as a claim the slot runs without a claim of its own, once the slot took it up (one
    /// round trip: the record's `handed` mark deleted, with the read of the input's blobs
    /// when it has some). `None`: the message carries no claim (a plain wake-up: claim from
    /// the lanes), the job was given back to its lane before the slot took it up (the
    /// slot's worker was taken for dead: claim from the lanes), or its input was gone (the
    /// job was failed).
    pub async fn handed(&self, slot: &str, message: &str) -> Result<Option<Claim>, QueueError> {
        let Some((token, values)) = scripts::handed_claim(message) else {
            return Ok(None);
        };
        let fields = scripts::claimed_fields(token, values, slot);
        self.taken(token, fields, 0, true).await
    }

    /// The wake-up of idle slot `slot` (admit.lua publishes on it when it pops the slot).
    pub fn slot_wake(&self, slot: &str) -> Subscription {
        self.notifier
            .subscribe(&keys::wake_channel(&self.store, slot))
    }

    /// Tells admission how many slots worker `id` has (`general`, `referee`), for the next
    /// `live_for`; a worker refreshes it while it runs ([`Queue::retire_slots`] at its end).
    pub async fn announce_slots(
        &self,
        id: &str,
        general: u32,
        referee: u32,
        live_for: Duration,
    ) -> Result<(), QueueError> {
        let now = self.now_ms().await?;
        let until = now + live_for.as_millis() as u64;
        let mut pipe = redis::pipe();
        pipe.cmd("HSET")
            .arg(keys::slots(&self.store))
            .arg(id)
            .arg(format!("{general} {referee} {until}"))
            .ignore();
        // A new worker, or one whose slots changed, counts at once.
        self.forget_slot_sum(&mut pipe);
        // Idle slots refresh their entry every second while they wait (the worker's slot
        // loop): an entry this old is a dead worker's, which nobody should wake.
        for pool in [Pool::General, Pool::Referee] {
            pipe.cmd("ZREMRANGEBYSCORE")
                .arg(keys::idle(&self.store, pool))
                .arg("-inf")
                .arg(now.saturating_sub(IDLE_FORGOTTEN.as_millis() as u64))
                .ignore();
        }
        let _: () = pipe.query_async(&mut self.store.conn()).await?;
        Ok(())
    }

    /// Whether a live worker has a slot that runs `kind` now: playtests need a general slot,
    /// referee work either kind (from the announcements in `queue:slots`, each live until
    /// its own time). One small hash read; no scan of the workers' presence keys.
    pub async fn serves(&self, kind: JobKind) -> Result<bool, QueueError> {
        Ok(self
            .announced_slots()
            .await?
            .iter()
            .any(|&(general, referee)| match Lane::of(kind) {
                Lane::Planner => general > 0,
                Lane::Referee => general + referee > 0,
            }))
    }

    /// The live workers' slots as they announced them (`general`, `referee` per worker whose
    /// announcement in `queue:slots` is still in its time).
    async fn announced_slots(&self) -> Result<Vec<(u64, u64)>, QueueError> {
        let now = self.now_ms().await?;
        let slots: Vec<String> = redis::cmd("HVALS")
            .arg(keys::slots(&self.store))
            .query_async(&mut self.store.conn())
            .await?;
        Ok(slots
            .iter()
            .filter_map(|v| {
                let mut f = v.split(' ').map(|x| x.parse::<u64>().ok());
                match (f.next().flatten(), f.next().flatten(), f.next().flatten()) {
                    (Some(general), Some(referee), Some(until)) if until > now => {
                        Some((general, referee))
                    }
                    _ => None,
                }
            })
            .collect())
    }

    /// The workers that run jobs now and their slots (from their announcements, as
    /// admission counts them), for the operator's queue view: with none, waiting jobs wait
    /// for a worker to start.
    pub async fn live_slots(&self) -> Result<LiveSlots, QueueError> {
        let announced = self.announced_slots().await?;
        Ok(LiveSlots {
            workers: announced.len() as u64,
            general: announced.iter().map(|s| s.0).sum(),
            referee: announced.iter().map(|s| s.1).sum(),
        })
    }

    /// Worker `id` stops claiming: its slots no longer count for admission.
    pub async fn retire_slots(&self, id: &str) -> Result<(), QueueError> {
        let mut pipe = redis::pipe();
        pipe.cmd("HDEL")
            .arg(keys::slots(&self.store))
            .arg(id)
            .ignore();
        self.forget_slot_sum(&mut pipe);
        let _: () = pipe.query_async(&mut self.store.conn()).await?;
        Ok(())
    }

    /// Drops admission's sum of the live slots (`queue:fair`'s `cap`, admit.lua), so the next
    /// admission makes it again from `queue:slots`: every change of the slots sends this.
    /// Primary-only on purpose: a lost drop leaves the sum until its own time runs out.
    fn forget_slot_sum(&self, pipe: &mut redis::Pipeline) {
        pipe.cmd("HDEL")
            .arg(keys::fair(&self.store))
            .arg(keys::FAIR_SLOT_SUM)
            .ignore();
    }

    /// Slots that stop (their worker shuts down) leave the idle slots, so no admission
    /// wakes them.
    pub async fn retire_idle(&self, slots: &[String]) -> Result<(), QueueError> {
        if slots.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for pool in [Pool::General, Pool::Referee] {
            pipe.cmd("ZREM")
                .arg(keys::idle(&self.store, pool))
                .arg(slots)
                .ignore();
        }
        let _: () = pipe.query_async(&mut self.store.conn()).await?;
        Ok(())
    }

    /// The idle slots of a worker process that is gone (`horst up`'s dead child: those whose
    /// name starts with `worker_prefix`, as [`Queue::running_of`]) leave the idle slots, so
    /// no admission hands them a job. Two round trips (the pools' idle slots are few).
    pub async fn retire_idle_of(&self, worker_prefix: &str) -> Result<(), QueueError> {
        let mut pipe = redis::pipe();
        for pool in [Pool::General, Pool::Referee] {
            pipe.cmd("ZRANGE")
                .arg(keys::idle(&self.store, pool))
                .arg(0)
                .arg(-1);
        }
        let (general, referee): (Vec<String>, Vec<String>) =
            pipe.query_async(&mut self.store.conn()).await?;
        let theirs: Vec<String> = general
            .into_iter()
            .chain(referee)
            .filter(|slot| slot.starts_with(worker_prefix))
            .collect();
        self.retire_idle(&theirs).await
    }

    /// Extends the lease. `false`: the lease is lost (reaped), stop and do not complete.
    pub async fn heartbeat(&self, id: &str, token: u64) -> Result<bool, QueueError> {
        let ok: Applied = scripts::HEARTBEAT
            .call(&self.store)
            .key(self.job_key(id))
            .key(keys::running(&self.store))
            .arg(id)
            .arg(token)
            .arg(self.settings.queue.lease_seconds * 1000)
            .run()
            .await?;
        Ok(ok == Applied::Done)
    }

    /// Records how far the running job got. `false`: it no longer runs under `token`.
    pub async fn report_progress(
        &self,
        id: &str,
        token: u64,
        progress: &JobProgress,
    ) -> Result<bool, QueueError> {
        let json = serde_json::to_string(progress).map_err(|e| QueueError::Store(e.to_string()))?;
        let ok: Applied = scripts::PROGRESS
            .call(&self.store)
            .key(self.job_key(id))
            .arg(token)
            .arg(json)
            .run()
            .await?;
        Ok(ok == Applied::Done)
    }

    /// Records the outcome. `false`: refused, the token is stale (the job was reaped).
    pub async fn complete(
        &self,
        id: &str,
        token: u64,
        outcome: Result<JobResult, Failure>,
    ) -> Result<bool, QueueError> {
        // The job's day names its budget key (complete.lua checks it).
        let day = self.job_names(id).await?.day;
        let done = self
            .complete_on(id, &day, token, outcome, None, NextJob::Look, None)
            .await?;
        Ok(done != Completed::Refused)
    }

    /// [`Queue::complete`] of a job this worker claimed: its day is its admission's (the
    /// record's creation time), so nothing is read first.
    pub async fn complete_job(
        &self,
        job: &JobRecord,
        token: u64,
        outcome: Result<JobResult, Failure>,
    ) -> Result<bool, QueueError> {
        Ok(self.complete_slot(job, token, outcome, None).await? != Completion::Refused)
    }

    /// [`Queue::complete_job`] by slot `slot` of `pool`, which goes on: when nothing waits
    /// in its lanes it is registered idle in the same step ([`Completion::Idle`]).
    pub async fn complete_slot(
        &self,
        job: &JobRecord,
        token: u64,
        outcome: Result<JobResult, Failure>,
        slot: Option<(&str, Pool)>,
    ) -> Result<Completion, QueueError> {
        let day = (job.created_at_ms / 86_400_000).to_string();
        let done = self
            .complete_on(
                &job.id,
                &day,
                token,
                outcome,
                slot,
                NextJob::Look,
                Some(job),
            )
            .await?;
        Ok(match done {
            Completed::Refused => Completion::Refused,
            Completed::Idle => Completion::Idle,
            Completed::Done | Completed::Next { .. } => Completion::Recorded,
        })
    }

    /// [`Queue::complete_slot`] by slot `slot`, which claims its next job in the same step
    /// when one waits (complete.lua with claim.lua's claim): one round trip between two jobs.
    /// The claim, if any, comes with [`Completion::Recorded`]. `others_waited`: the job's
    /// claim said another waited ([`Claim::more_waiting`]); when it did not, the completion
    /// first looks whether one waits now (one command), which spares an idle slot the
    /// lanes' empty pops.
    pub async fn complete_and_claim(
        &self,
        job: &JobRecord,
        token: u64,
        outcome: Result<JobResult, Failure>,
        slot: (&str, Pool),
        others_waited: bool,
    ) -> Result<(Completion, Option<Claim>), QueueError> {
        let day = (job.created_at_ms / 86_400_000).to_string();
        let next = if others_waited {
            NextJob::Claim
        } else {
            NextJob::ClaimIfWaiting
        };
        let done = self
            .complete_on(&job.id, &day, token, outcome, Some(slot), next, Some(job))
            .await?;
        Ok(match done {
            Completed::Refused => (Completion::Refused, None),
            Completed::Idle => (Completion::Idle, None),
            Completed::Done => (Completion::Recorded, None),
            Completed::Next {
                token,
                values,
                more,
            } => (
                Completion::Recorded,
                self.claimed(token, scripts::claimed_fields(token, values, slot.0), more)
                    .await?,
            ),
        })
    }

    /// `held`: the claimed record the worker holds. With its claim's fields (kind, start,
    /// charge, worker) the script reads nothing of the record, and the job's running entry
    /// is the fence (complete.lua); without them it reads the record and checks the token.
    #[allow(clippy::too_many_arguments)]
    async fn complete_on(
        &self,
        id: &str,
        day: &str,
        token: u64,
        outcome: Result<JobResult, Failure>,
        slot: Option<(&str, Pool)>,
        next: NextJob,
        held: Option<&JobRecord>,
    ) -> Result<Completed, QueueError> {
        let (kind, started, charged, worker) = held
            .and_then(|job| {
                Some((
                    job.kind.as_str(),
                    job.started_at_ms?,
                    job.charged_seconds,
                    job.worker.as_deref()?,
                ))
            })
            .unwrap_or(("", 0, 0, ""));
        let (state, result, failure) = match outcome {
            Ok(v) => (JobState::Succeeded, v.to_value().to_string(), String::new()),
            Err(f) => (
                JobState::Failed,
                String::new(),
                serde_json::to_string(&f).unwrap_or_default(),
            ),
        };
        // The completion's message but for its end, when the claim is held.
        let message = if kind.is_empty() {
            String::new()
        } else {
            record::Finished::prefix(state.as_str(), started, charged, worker, &result, &failure)
        };
        let mut complete = horst_store::script::Args::default();
        complete
            .key(self.job_key(id))
            .key(keys::running(&self.store))
            .key(self.budget_key(day));
        let pool = slot.map_or(Pool::General, |(_, pool)| pool);
        let lanes = pool.lanes();
        complete
            .key(keys::idle(&self.store, pool))
            .key(keys::lane(&self.store, lanes[0]))
            .key(keys::lane(&self.store, lanes[lanes.len() - 1]))
            .key(keys::fair(&self.store))
            .key(keys::base(&self.store));
        complete
            .arg(id)
            .arg(token)
            .arg(state.as_str())
            .arg(result)
            .arg(failure)
            .arg(self.settings.job_ttl_seconds())
            .arg(self.done_channel(id))
            .arg(day)
            .arg(slot.map_or("", |(slot, _)| slot))
            .arg(self.settings.queue.lease_seconds * 1000)
            .arg(pool.as_str())
            .arg(next.as_arg())
            .arg(WAITER_SURELY_PRESENT.as_millis() as u64)
            .arg(kind)
            .arg(started)
            .arg(charged)
            .arg(worker)
            .arg(message);
        Ok(self.completes.call(&self.store, complete).await?)
    }

    /// Fails running jobs whose lease expired. Any process may call it; it is idempotent.
    /// A gap of more than [`STALL_AFTER`] since the last call of any process (Redis stalled,
    /// or no process could reach it) is not counted: no lease is reaped until a whole lease
    /// has passed after it, so a worker that lived through the stall keeps its job
    /// (docs/reliability.md, "A stall of Redis").
    pub async fn reap(&self) -> Result<Vec<String>, QueueError> {
        // Two steps (reap.lua, cluster note): the expired leases (none during a stall's
        // grace, expired.lua) and each job's day first, then one script per job, which
        // re-checks the lease and the stall rule.
        let lease_ms = self.settings.queue.lease_seconds * 1000;
        let stall_ms = STALL_AFTER.as_millis() as u64;
        let expired: Vec<String> = scripts::EXPIRED
            .call(&self.store)
            .key(keys::clock(&self.store))
            .key(keys::running(&self.store))
            .arg(stall_ms)
            .arg(lease_ms)
            .arg(100)
            .run()
            .await?;
        let mut reaped = Vec::new();
        for id in expired {
            let names = self.job_names(&id).await?;
            let day = names.day;
            let mut reap = scripts::REAP.call(&self.store);
            self.ending_keys(&mut reap, &id, &day);
            reap.key(keys::clock(&self.store))
                .key(keys::ended(&self.store))
                .key(keys::fair(&self.store))
                .key(keys::lane(&self.store, names.lane.unwrap_or(Lane::Referee)))
                .key(keys::idle(&self.store, Pool::General))
                .key(keys::idle(&self.store, Pool::Referee));
            let outcome: ReapReply = reap
                .arg(&id)
                .arg(self.settings.job_ttl_seconds())
                .arg(self.done_channel(&id))
                .arg(&day)
                .arg(stall_ms)
                .arg(lease_ms)
                .arg(keys::new_channel(&self.store))
                .run()
                .await?;
            match outcome {
                ReapReply::Reaped => reaped.push(id),
                ReapReply::Requeued => tracing::warn!(
                    job = %id,
                    "a job handed to an idle slot that never took it up (its worker died or stalled) waits again at its lane's front, uncharged"
                ),
                ReapReply::Alive | ReapReply::Gone => {}
            }
        }
        Ok(reaped)
    }

    /// Waiting jobs and the age of the oldest, for metrics and the admin overview.
    pub async fn depth(&self) -> Result<(u64, Option<u64>), QueueError> {
        let mut total = 0;
        let mut oldest: Option<u64> = None;
        for lane in Lane::ALL {
            let (n, age) = self.lane_depth(lane).await?;
            total += n;
            oldest = oldest.max(age);
        }
        Ok((total, oldest))
    }

    /// A lane's waiting jobs and the age of the one that has waited longest (ms).
    pub async fn lane_depth(&self, lane: Lane) -> Result<(u64, Option<u64>), QueueError> {
        let ids = self.lane_ids(lane).await?;
        let mut created: Option<u64> = None;
        for id in &ids {
            if let Some(r) = self.get(id).await? {
                created = Some(created.map_or(r.created_at_ms, |c| c.min(r.created_at_ms)));
            }
        }
        let age = match created {
            Some(c) => Some(self.now_ms().await?.saturating_sub(c)),
            None => None,
        };
        Ok((ids.len() as u64, age))
    }

    /// The waiting jobs for the gauges, each record read once: by lane and by kind (every
    /// lane and kind listed, 0 and `None` when none waits), each with the age of its
    /// longest wait (ms) on the queue's clock. One round trip a lane: its ids, then each
    /// record's kind and creation time in one pipeline (the lanes hold at most
    /// `queue.waiting_global` jobs).
    pub async fn waiting_gauges(&self) -> Result<WaitingGauges, QueueError> {
        let mut gauges = WaitingGauges {
            lanes: Lane::ALL.iter().map(|l| (*l, 0, None)).collect(),
            kinds: JobKind::ALL.iter().map(|k| (*k, 0, None)).collect(),
        };
        let oldest = |c: &mut Option<u64>, at: u64| *c = Some(c.map_or(at, |c| c.min(at)));
        for (lane, n, lane_oldest) in &mut gauges.lanes {
            let ids = self.lane_ids(*lane).await?;
            if ids.is_empty() {
                continue;
            }
            let mut pipe = redis::pipe();
            const NAMES: [&str; 2] = ["kind", "created"];
            for id in &ids {
                pipe.add_command(record::job_fields_cmd(&self.job_key(id), &NAMES));
            }
            let replies: Vec<Vec<Option<Vec<u8>>>> =
                pipe.query_async(&mut self.store.conn()).await?;
            *n = ids.len() as u64;
            for reply in replies {
                let f = record::job_fields_of(&NAMES, reply);
                let kind = f[0].as_deref().and_then(JobKind::parse);
                let created = f[1].as_deref().and_then(|c| c.parse::<u64>().ok());
                let (Some(kind), Some(created)) = (kind, created) else {
                    continue; // gone since the lane was read
                };
                oldest(lane_oldest, created);
                if let Some(entry) = gauges.kinds.iter_mut().find(|(k, _, _)| *k == kind) {
                    entry.1 += 1;
                    oldest(&mut entry.2, created);
                }
            }
        }
        let now = self.now_ms().await?;
        let age = |c: &mut Option<u64>| *c = c.map(|c| now.saturating_sub(c));
        gauges.lanes.iter_mut().for_each(|(_, _, c)| age(c));
        gauges.kinds.iter_mut().for_each(|(_, _, c)| age(c));
        Ok(gauges)
    }

    /// Jobs running now (leases held), for metrics.
    pub async fn running_count(&self) -> Result<u64, QueueError> {
        let mut conn = self.store.conn();
        Ok(redis::cmd("ZCARD")
            .arg(keys::running(&self.store))
            .query_async(&mut conn)
            .await?)
    }

    /// Today's budget: (seconds used, seconds daily) — for metrics.
    pub async fn budget_today(&self) -> Result<(u64, u64), QueueError> {
        let now = self.now_ms().await?;
        let day = now / 86_400_000;
        let mut conn = self.store.conn();
        let used: Option<u64> = redis::cmd("HGET")
            .arg(self.budget_key(&day.to_string()))
            .arg("used")
            .query_async(&mut conn)
            .await?;
        Ok((used.unwrap_or(0), self.quotas().await?.daily_seconds))
    }

    /// Today's (UTC) job figures for the operator's overview.
    pub async fn today(&self) -> Result<DayStats, QueueError> {
        day_stats(&self.store, self.now_ms().await?).await
    }

    /// The delayed set (turn-clock deadlines) on the same store.
    pub fn delayed(&self) -> DelayedSet {
        DelayedSet::new(self.store.clone())
    }
}

/// The live workers and their slots ([`Queue::live_slots`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveSlots {
    /// Workers whose announcement is live.
    pub workers: u64,
    /// Their general slots (either lane) and referee slots (referee work only).
    pub general: u64,
    pub referee: u64,
}

/// Waiting jobs by lane and by kind: (which, how many, age of the longest wait in ms).
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingGauges {
    pub lanes: Vec<(Lane, u64, Option<u64>)>,
    pub kinds: Vec<(JobKind, u64, Option<u64>)>,
}

impl WaitingGauges {
    /// All waiting jobs and the age of the longest wait.
    pub fn total(&self) -> (u64, Option<u64>) {
        self.lanes
            .iter()
            .fold((0, None), |(n, age), (_, m, a)| (n + m, age.max(*a)))
    }
}

/// One UTC day of the queue: jobs admitted and finished by kind (and final state), and the
/// reserved execution seconds used (reserved + charged) and charged.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayStats {
    /// kind -> admitted jobs (those dropped before they started included; see `finished`).
    pub admitted: std::collections::BTreeMap<String, u64>,
    /// kind -> final state -> jobs.
    pub finished: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>,
    pub seconds_used: u64,
    pub seconds_charged: u64,
    /// Bytes of job input (blobs) whose keeping was counted today (`queue.input_bytes_per_day`).
    pub input_bytes: u64,
}

/// The ids of the workers alive now: those whose presence key (`workers:<id>`, written by
/// each worker with a short expiry) still exists.
pub async fn live_workers(store: &Store) -> redis::RedisResult<Vec<String>> {
    let before = keys::worker(store, "");
    let mut ids: Vec<String> = store
        .scan_keys_in(Some(horst_store::Group::Queue), "workers:*")
        .await?
        .iter()
        .filter_map(|key| key.strip_prefix(&before).map(str::to_string))
        .collect();
    ids.sort();
    Ok(ids)
}

/// Today's reserved execution seconds: the server's and the share all trust-0 accounts have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecondsToday {
    pub daily: u64,
    pub used: u64,
    pub remaining: u64,
    pub trust0_cap: u64,
    pub trust0_used: u64,
    pub trust0_remaining: u64,
}

impl Queue {
    /// Today's seconds budget (UTC day of the Redis clock), for the operator's overview.
    pub async fn seconds_today(&self) -> Result<SecondsToday, QueueError> {
        let q = self.quotas().await?;
        let day = self.now_ms().await? / 86_400_000;
        let v: Vec<Option<u64>> = redis::cmd("HMGET")
            .arg(keys::budget(&self.store, &day.to_string()))
            .arg(&["used", "trust0"])
            .query_async(&mut self.store.conn())
            .await?;
        let used = v.first().copied().flatten().unwrap_or(0);
        let trust0_used = v.get(1).copied().flatten().unwrap_or(0);
        let trust0_cap = q.trust0_cap_seconds();
        Ok(SecondsToday {
            daily: q.daily_seconds,
            used,
            remaining: q.daily_seconds.saturating_sub(used),
            trust0_cap,
            trust0_used,
            trust0_remaining: trust0_cap.saturating_sub(trust0_used),
        })
    }
}

/// A job record read with the store alone (the admin CLI and the gateway's check records
/// need no queue for that).
pub async fn job_record(store: &Store, id: &str) -> Result<Option<JobRecord>, QueueError> {
    let fields: Vec<(String, Vec<u8>)> = redis::cmd("HGETALL")
        .arg(keys::job(store, id))
        .query_async(&mut store.conn())
        .await?;
    Ok(JobRecord::from_fields(record::named_fields(fields)))
}

/// Today's figures read with the store alone (the admin CLI has no queue). `now_ms` is the
/// Redis server's clock.
pub async fn day_stats(store: &Store, now_ms: u64) -> Result<DayStats, QueueError> {
    let day = now_ms / 86_400_000;
    let mut conn = store.conn();
    // The day's own fields by name: the hash holds every account's counts of the day too
    // (`d:<account>:<kind>`), which the overview does not need.
    let mut names: Vec<String> = ["used", "charged", "bytes"].map(String::from).to_vec();
    // The finished jobs' counts: a slot's completion keeps them in `queue:fair` (riding on
    // its write of it), the other ways out and earlier versions in the budget hash.
    let mut fair_names = vec![keys::fair_day_charged(day)];
    for kind in JobKind::ALL {
        names.push(format!("jobs:{}", kind.as_str()));
        for state in FINISHED_STATES {
            names.push(format!("done:{}:{}", kind.as_str(), state.as_str()));
            fair_names.push(keys::fair_day_done(day, kind.as_str(), state.as_str()));
        }
    }
    // The day's charge is kept in `queue:fair` too (the claim writes it there without a
    // command of its own); an earlier version's claims counted it in the budget hash.
    let (values, fair_values): (Vec<Option<String>>, Vec<Option<u64>>) = redis::pipe()
        .cmd("HMGET")
        .arg(keys::budget(store, &day.to_string()))
        .arg(&names)
        .cmd("HMGET")
        .arg(keys::fair(store))
        .arg(&fair_names)
        .query_async(&mut conn)
        .await?;
    let mut fair_values = fair_values.into_iter().map(Option::unwrap_or_default);
    let mut stats = DayStats {
        seconds_charged: fair_values.next().unwrap_or(0),
        ..DayStats::default()
    };
    for kind in JobKind::ALL {
        for state in FINISHED_STATES {
            let n = fair_values.next().unwrap_or(0);
            if n > 0 {
                *stats
                    .finished
                    .entry(kind.as_str().to_string())
                    .or_default()
                    .entry(state.as_str().to_string())
                    .or_default() += n;
            }
        }
    }
    for (field, value) in names.into_iter().zip(values) {
        let Some(value) = value else { continue };
        let n = value.parse::<i64>().unwrap_or(0).max(0) as u64;
        if let Some(kind) = field.strip_prefix("jobs:") {
            stats.admitted.insert(kind.to_string(), n);
        } else if let Some(rest) = field.strip_prefix("done:") {
            if let Some((kind, state)) = rest.split_once(':') {
                *stats
                    .finished
                    .entry(kind.to_string())
                    .or_default()
                    .entry(state.to_string())
                    .or_default() += n;
            }
        } else if field == "used" {
            stats.seconds_used = n;
        } else if field == "charged" {
            stats.seconds_charged += n;
        } else if field == "bytes" {
            stats.input_bytes = n;
        }
    }
    Ok(stats)
}

/// The states a job ends in, as the day's counts name them.
const FINISHED_STATES: [JobState; 3] = [JobState::Succeeded, JobState::Failed, JobState::Cancelled];

/// The ends of the fields of `queue:fair` that count finished jobs, after their day
/// (`done:<day>:<kind>:<state>`, [`keys::fair_day_done`]), separated by spaces: the fair
/// sweep drops old days'. Made once: the sweep sends them every second.
pub(crate) static FAIR_DONE_SUFFIXES: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| {
        let ends: Vec<String> = JobKind::ALL
            .iter()
            .flat_map(|kind| {
                FINISHED_STATES.map(|state| format!("{}:{}", kind.as_str(), state.as_str()))
            })
            .collect();
        ends.join(" ")
    });

/// The layout of `queue:fair` this version writes ('layout', fair_adopt.lua).
const FAIR_LAYOUT: &str = "1";

/// The field of `queue:fair` that marks the accounts' daily counts of earlier versions as
/// moved into the days' budget hashes ([`Queue::adopt_daily_counts`]).
const DAILY_LAYOUT_FIELD: &str = "daily_layout";

/// What a completing slot does about its next job (complete.lua's ARGV[12]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NextJob {
    /// Only looks whether one waits (by queue:fair's count); registers idle if none does.
    Look,
    /// Claims it in the same step (the lanes' heads are popped at once).
    Claim,
    /// Claims it, but looks at queue:fair's count first: nothing waiting registers the slot
    /// idle without the lanes' empty pops (the job's claim saw nothing else waiting).
    ClaimIfWaiting,
}

impl NextJob {
    fn as_arg(self) -> &'static str {
        match self {
            NextJob::Look => "",
            NextJob::Claim => "1",
            NextJob::ClaimIfWaiting => "2",
        }
    }
}

/// What a slot's completion did ([`Queue::complete_slot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Refused: the token is stale (the job was reaped or stopped).
    Refused,
    /// Recorded; jobs may wait for the slot.
    Recorded,
    /// Recorded; nothing waits, and the slot is registered idle.
    Idle,
}

/// How long an idle slot's entry outlives its last refresh (its worker died).
const IDLE_FORGOTTEN: Duration = Duration::from_secs(30);

/// An idle slot is handed a job at admission only when its entry is this recent (admit.lua):
/// its worker refreshes it every second while the slot waits, so an older one may be a dead
/// worker's (or one whose wake-ups no longer arrive), which is only woken and the job left
/// in its lane for any slot.
pub const HANDOFF_FRESH: Duration = Duration::from_millis(1500);

/// The token of the claim an idle slot's wake-up `message` hands it (admit.lua), if it
/// hands one: a slot that already ran that job (it found it at its idle refresh) knows it
/// by its token.
pub fn handed_token(message: &str) -> Option<u64> {
    scripts::handed_claim(message).map(|(token, _)| token)
}

/// What an idle slot's registration found ([`Queue::idle_look`]).
#[derive(Debug)]
pub enum IdleLook {
    /// Registered; nothing waits.
    Registered,
    /// A job waits in the slot's lanes: claim it.
    Waiting,
    /// An admission handed this slot a job whose wake-up it did not hear: run it. The slot
    /// is not registered.
    Handed(Box<Claim>),
}

/// What a slot's read of a claimed job's input found ([`Queue::taken_input`]).
enum Taken {
    Input(JobInput),
    /// A blob of the input is gone.
    InputGone,
    /// A handed job whose mark was gone: given back to its lane (or stopped).
    GivenBack,
}

/// What ending a dead worker's running job did ([`Queue::fail_running`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// Ended `failed` now, its charge kept.
    Failed,
    /// Handed to one of the worker's idle slots (admission's hand-off) and never taken up:
    /// it never ran, and waits again at its lane's front, uncharged.
    PutBack,
    /// No longer running: nothing changed.
    NotRunning,
}

/// The end of an operator's cancel message for a job that never ran: a queued one, or one
/// handed to an idle slot that had not taken it up (stop.lua).
const NOT_STARTED: &str = "it had not started and nothing was charged";

/// What an operator's cancel did ([`Queue::cancel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "state")]
pub enum CancelOutcome {
    /// It had not started (queued, or handed to an idle slot that had not taken it up):
    /// dropped, nothing charged.
    Dropped,
    /// It was running: ended `cancelled`, its charge kept; its worker stops within 100 ms.
    Stopped,
    /// It had already finished (in this state): nothing changed.
    Finished(JobState),
    /// No such job (or its record expired).
    Missing,
}

/// Drops a still-queued job when the waiting caller goes away. See [`Queue::cancel_guard`].
pub struct CancelGuard {
    queue: Option<Queue>,
    id: String,
}

impl CancelGuard {
    pub fn disarm(mut self) {
        self.queue = None;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        let Some(queue) = self.queue.take() else {
            return;
        };
        let id = std::mem::take(&mut self.id);
        // Drop cannot await; the runtime is still there because the handler ran on it.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                match queue
                    .cancel_queued(
                        &id,
                        JobState::Cancelled,
                        FailureCode::Cancelled,
                        "the caller disconnected before the job started; it was dropped and its reservation released",
                    )
                    .await
                {
                    Ok(true) => tracing::info!(job = %id, "caller left; queued job dropped"),
                    Ok(false) => {}
                    Err(e) => tracing::warn!(job = %id, error = %e, "could not drop a queued job"),
                }
            });
        }
    }
}

/// A job's account, day, idempotency key and waiter, which name its other keys.
/// How a queued job's drop (cancel.lua, [`Queue::cancel_named`]) is sent.
#[derive(Debug, Clone, Copy)]
enum DropAs {
    /// Asked for (an operator, a stop, a wait's end): by the script's SHA, whoever waits.
    Asked,
    /// After an admission whose answer was lost: one message with the script's source
    /// (`Call::run_whole`), so a one-way partition cannot hold a first step's answer.
    Unclear,
    /// Its caller's API process is gone (`drop_orphans`): only while the record names that
    /// waiter and its presence is still gone.
    Orphan,
}

struct JobNames {
    account: String,
    day: String,
    idem: String,
    /// The API process its caller waits in (`''`: none).
    waiter: String,
    /// The lane of its kind (`None`: no record).
    lane: Option<Lane>,
}

/// Between two jobs on one slot, beyond the first job's limit: its claim, its completion and
/// the worker's own margin. Admission counts it per job, so a job it admits can start in time
/// even when every job ahead of it runs to its limit.
pub const SLOT_SLACK: Duration = Duration::from_secs(1);

/// `job_` + 16 random hex digits.
/// The bytes of kept input a job of `kind` may add under a daily cap: operator rechecks are
/// counted but never refused (their input is a stored revision's).
fn input_cap(kind: JobKind, cap: u64) -> u64 {
    if kind == JobKind::Recheck {
        quotas::UNLIMITED
    } else {
        cap
    }
}

/// Idempotency key `key` was used for other input, by job `job_id`.
fn conflict(key: &str, job_id: &str) -> QueueError {
    QueueError::Conflict {
        message: format!(
            "idempotencyKey {key:?} was already used for different input (job {job_id}); send a fresh idempotencyKey for a new attempt, or the identical input to read the recorded result"
        ),
    }
}

fn new_job_id() -> String {
    format!("job_{}", horst_store::random::id_hex::<8>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(
        promised: usize,
        waiting: usize,
        answered: Option<tokio::time::Instant>,
    ) -> GroupState<()> {
        let (sent, _) = tokio::sync::oneshot::channel();
        let mut waiting_calls = Vec::new();
        waiting_calls.push((horst_store::script::Args::default(), sent));
        for _ in 1..waiting {
            let (sent, _) = tokio::sync::oneshot::channel();
            waiting_calls.push((horst_store::script::Args::default(), sent));
        }
        GroupState {
            running: true,
            calls: 0,
            carried: 0,
            overlapped: 0,
            lingered: 0,
            lingers_out: 0,
            waiting: waiting_calls,
            promised,
            answered_at: answered,
        }
    }

    /// A call nobody else's is due with (a lone job, an admission) is sent at once; one whose
    /// slot's siblings were answered a moment ago waits for them, a millisecond at most, and
    /// not once the group has 4 calls.
    #[test]
    fn a_group_waits_only_for_calls_promised_a_moment_ago() {
        let now = tokio::time::Instant::now();
        assert_eq!(linger(&mut state(0, 1, Some(now)), now, 0, 1), Linger::Send);
        assert_eq!(linger(&mut state(3, 1, None), now, 0, 1), Linger::Send);
        assert_eq!(
            linger(&mut state(3, 1, Some(now)), now, 0, 1),
            Linger::Until(now + LINGER)
        );
        assert_eq!(
            linger(&mut state(2, 2, Some(now)), now + LINGER / 2, 0, 1),
            Linger::Until(now + LINGER)
        );
        assert_eq!(
            linger(&mut state(3, LINGER_UP_TO, Some(now)), now, 0, 1),
            Linger::Send
        );
        let mut late = state(3, 1, Some(now));
        assert_eq!(linger(&mut late, now + LINGER, 0, 1), Linger::RanOut);
        // The promises are forgotten: the next call does not wait for them.
        assert_eq!(late.promised, 0);
        assert_eq!(linger(&mut late, now + LINGER, 0, 1), Linger::Send);
    }

    /// A second call goes while one is in the air only when all the calls in the air and due
    /// fit one group: one worker's 4 slots, a lone call; not two workers' 8 slots.
    #[test]
    fn a_second_flight_only_for_calls_that_fit_one_group() {
        let now = tokio::time::Instant::now();
        assert!(flight_free(0, 1, 0, &state(7, 1, Some(now))));
        assert!(!flight_free(1, 1, 1, &state(0, 1, Some(now))));
        // One worker: 2 in the air, 2 due.
        assert!(flight_free(1, 2, 2, &state(1, 1, Some(now))));
        assert!(flight_free(1, 2, 1, &state(0, 1, Some(now))));
        // Two workers: 4 in the air, 4 due.
        assert!(!flight_free(1, 2, 4, &state(2, 2, Some(now))));
        assert!(!flight_free(2, 2, 2, &state(0, 1, Some(now))));
    }

    /// With a second flight free and no call in the air, a group goes once it holds half of
    /// the calls due (2 at the least, [`LINGER_UP_TO`] at most; the rest follow while it is
    /// in Redis); with one in the air, or with one flight only, it waits for the promised
    /// calls as before; a call nobody promised goes at once either way.
    #[test]
    fn a_second_flight_splits_the_promised_calls_in_halves() {
        let now = tokio::time::Instant::now();
        let wait = Linger::Until(now + LINGER);
        // One worker's 4 slots: 2 and 2.
        assert_eq!(linger(&mut state(2, 2, Some(now)), now, 0, 2), Linger::Send);
        assert_eq!(linger(&mut state(3, 1, Some(now)), now, 0, 2), wait);
        // Two workers' 8: 4 and 4, not 2 and 6.
        assert_eq!(linger(&mut state(6, 2, Some(now)), now, 0, 2), wait);
        assert_eq!(linger(&mut state(4, 4, Some(now)), now, 0, 2), Linger::Send);
        // Two slots: not split.
        assert_eq!(linger(&mut state(1, 1, Some(now)), now, 0, 2), wait);
        // One call in the air: the promised ones are waited for.
        assert_eq!(linger(&mut state(2, 2, Some(now)), now, 1, 2), wait);
        // One flight: as before.
        assert_eq!(linger(&mut state(2, 2, Some(now)), now, 0, 1), wait);
        assert_eq!(
            linger(&mut state(1, LINGER_UP_TO, Some(now)), now, 1, 2),
            Linger::Send
        );
        assert_eq!(linger(&mut state(0, 1, Some(now)), now, 1, 2), Linger::Send);
    }
}
