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
//! | admit | API | idempotency, caps, daily quota, seconds budget, enqueue |
//! | claim | worker | oldest job, lease + fencing token, reservation becomes a charge |
//! | heartbeat | worker | extend the lease (token holder only) |
//! | complete | worker | record the outcome (token holder only), PUBLISH |
//! | cancel | API | drop a still-queued job, release its reservation |
//! | reap | anyone | expired lease: `failed`/`cancelled`, charge kept, never re-queued |
//! | pop_due | anyone | the delayed set's due entries (turn clocks) |
//!
//! Keys (under the store prefix): `job:<id>` (hash), `queue:waiting` (list),
//! `queue:running` (zset by lease expiry), `waiting:<account>`, `idem:<account>:<key>`,
//! `jobs:<account>` (zset by creation), `daily:<day>:<account>`, `budget:<day>`, `fence`,
//! `delayed` (zset by due time), `quotas` (the reloadable quota numbers, JSON; see
//! `quotas.rs`). Channels: `done:<id>`, `queue:new`.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horst_config::{QueueConfig, QuotaConfig};
use horst_store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod delayed;
mod fingerprint;
mod notifier;
mod quotas;
mod record;
mod scripts;

pub use delayed::DelayedSet;
pub use fingerprint::fingerprint;
pub use notifier::{Notifier, Subscription};
pub use quotas::{read_quotas, write_quotas, Quotas, StoredQuotas};
pub use record::{Failure, JobRecord, JobState};

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
    /// What the worker needs (`{map, seed?, replay?}`); its canonical form is fingerprinted.
    pub input: Value,
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
}

impl From<redis::RedisError> for QueueError {
    fn from(e: redis::RedisError) -> Self {
        QueueError::Store(e.to_string())
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
}

/// A claimed job, as a worker holds it.
#[derive(Debug, Clone)]
pub struct Claim {
    pub record: JobRecord,
    /// The fencing token: only its holder may heartbeat or complete the job.
    pub token: u64,
}

/// The job queue. Cheap to clone.
#[derive(Clone)]
pub struct Queue {
    store: Store,
    settings: Arc<QueueSettings>,
    scripts: Arc<scripts::Scripts>,
    /// Added to the server's TIME in every script; tests move it across midnight.
    clock_offset_ms: Arc<AtomicI64>,
    notifier: Notifier,
    /// The quota numbers in force, read from Redis at most once a second per process.
    quotas: Arc<quotas::QuotaCache>,
}

impl Queue {
    /// `notifier` must be subscribed to `done:*` (see [`Queue::channels`]).
    pub fn new(store: Store, settings: QueueSettings, notifier: Notifier) -> Queue {
        Queue {
            store,
            settings: Arc::new(settings),
            scripts: Arc::new(scripts::Scripts::load()),
            clock_offset_ms: Arc::new(AtomicI64::new(0)),
            notifier,
            quotas: Arc::new(quotas::QuotaCache::default()),
        }
    }

    /// The pub/sub patterns the queue's [`Notifier`] must listen to.
    pub fn channels(store: &Store) -> Vec<String> {
        vec![store.key("done:*"), store.key("queue:new")]
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
        self.clock_offset_ms
            .store(if forward { ms } else { -ms }, Ordering::SeqCst);
    }

    fn script<'a>(&self, script: &'a redis::Script) -> redis::ScriptInvocation<'a> {
        let mut inv = script.prepare_invoke();
        inv.arg(self.store.prefix())
            .arg(self.clock_offset_ms.load(Ordering::SeqCst));
        inv
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
        let mut conn = self.store.conn();
        Ok(self
            .script(&self.scripts.now)
            .invoke_async(&mut conn)
            .await?)
    }

    /// Admission: idempotency first (a replay charges nothing), then the caps, the daily
    /// quota and the seconds budget, then the job is queued. One atomic step.
    pub async fn admit(&self, spec: JobSpec) -> Result<Admission, QueueError> {
        let fp = fingerprint(spec.kind, &spec.input);
        let id = new_job_id();
        let s = &self.settings;
        let q = self.quotas().await?;
        let reserve = s.reserve_seconds(spec.kind);
        // Operator rechecks count as used seconds but are never refused for quota.
        let (daily, trust0_cap) = if spec.kind == JobKind::Recheck {
            (quotas::UNLIMITED, quotas::UNLIMITED)
        } else {
            (q.daily_seconds, q.trust0_cap_seconds())
        };
        let mut conn = self.store.conn();
        let reply: Vec<redis::Value> = self
            .script(&self.scripts.admit)
            .arg(&id)
            .arg(&spec.account)
            .arg(spec.trust)
            .arg(spec.kind.as_str())
            .arg(&spec.idempotency_key)
            .arg(&fp)
            .arg(spec.input.to_string())
            .arg(reserve)
            .arg(s.queue.waiting_per_account)
            .arg(s.queue.waiting_global)
            .arg(q.kind_limit(spec.trust, spec.kind))
            .arg(daily)
            .arg(trust0_cap)
            .arg(s.queue.idempotency_retention_hours * 3600)
            .arg(s.queue.wait_seconds * 1000)
            .arg(reserve * 1000)
            .arg(s.job_ttl_seconds() * 1000)
            .invoke_async(&mut conn)
            .await?;
        let word = |i: usize| -> String {
            reply
                .get(i)
                .and_then(|v| redis::from_redis_value::<String>(v.clone()).ok())
                .unwrap_or_default()
        };
        let number = |i: usize| -> u64 {
            reply
                .get(i)
                .and_then(|v| redis::from_redis_value::<u64>(v.clone()).ok())
                .unwrap_or(1)
        };
        let record = || -> Result<JobRecord, QueueError> {
            reply
                .get(2)
                .and_then(|v| redis::from_redis_value::<Vec<String>>(v.clone()).ok())
                .and_then(|flat| JobRecord::from_fields(pairs(flat)))
                .ok_or_else(|| QueueError::Store(format!("job {} is unreadable", word(1))))
        };
        match word(0).as_str() {
            "new" => Ok(Admission::New(record()?)),
            "replayed" => Ok(Admission::Replayed(record()?)),
            "conflict" => Err(QueueError::Conflict {
                message: format!(
                    "idempotencyKey {:?} was already used for different input (job {}); send a fresh idempotencyKey for a new attempt, or the identical input to read the recorded result",
                    spec.idempotency_key,
                    word(1)
                ),
            }),
            "busy" => {
                let waiting = (word(1) == "account" && reply.len() > 3).then(|| word(3));
                Err(QueueError::Busy {
                    retry_after_seconds: number(2),
                    message: match &waiting {
                        Some(id) => format!("your job {id} is already waiting; read it with get_submission {{\"jobId\": \"{id}\"}} and retry once it has finished"),
                        None if word(1) == "account" => "a job of yours is already waiting; wait for it to finish (see get_submission), then retry".to_string(),
                        None => "the server's queue is full; retry after retryAfterSeconds".to_string(),
                    },
                    waiting_job_id: waiting,
                })
            }
            "quota" => {
                let scope = match word(1).as_str() {
                    "owner" => QuotaScope::Owner,
                    "global_new" => QuotaScope::GlobalNew,
                    _ => QuotaScope::Global,
                };
                let retry = number(2);
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
                };
                Err(QueueError::Quota {
                    scope,
                    retry_after_seconds: retry,
                    message,
                })
            }
            other => Err(QueueError::Store(format!(
                "unexpected admit reply {other:?}"
            ))),
        }
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
            .arg(self.store.key(&format!("idem:{account}:{key}")))
            .query_async(&mut conn)
            .await?;
        Ok(n == 1)
    }

    /// The job record, if it exists (finished records expire after the retention period).
    pub async fn get(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        let mut conn = self.store.conn();
        let fields: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(self.store.key(&format!("job:{id}")))
            .query_async(&mut conn)
            .await?;
        Ok(JobRecord::from_fields(fields))
    }

    /// An account's jobs, newest first; the offset of the next page if there is one.
    pub async fn list(
        &self,
        account: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<JobRecord>, Option<usize>), QueueError> {
        let mut conn = self.store.conn();
        let ids: Vec<String> = redis::cmd("ZREVRANGE")
            .arg(self.store.key(&format!("jobs:{account}")))
            .arg(offset)
            .arg(offset + limit) // one more than a page tells whether there is a next page
            .query_async(&mut conn)
            .await?;
        let more = ids.len() > limit;
        let mut records = Vec::new();
        for id in ids.iter().take(limit) {
            if let Some(r) = self.get(id).await? {
                records.push(r);
            }
        }
        Ok((records, more.then_some(offset + limit)))
    }

    /// Waits until the job has finished, at most `limit`, race-free: the subscription is
    /// registered before the state is read, so a completion in between is not missed.
    ///
    /// A job still queued when `limit` runs out is dropped (`failed`, code `timeout`,
    /// reservation released). A running one is returned as it is: it runs to its end.
    pub async fn wait(&self, id: &str, limit: Duration) -> Result<JobRecord, QueueError> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut sub = self
            .notifier
            .subscribe(&self.store.key(&format!("done:{id}")));
        loop {
            let record = self
                .get(id)
                .await?
                .ok_or_else(|| QueueError::Store(format!("job {id} does not exist")))?;
            if record.state.is_final() {
                return Ok(record);
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
                    "timeout",
                    "the job did not start in time to finish within the wait limit; it did not run and nothing was charged; try again later",
                )
                .await?;
                return self
                    .get(id)
                    .await?
                    .ok_or_else(|| QueueError::Store(format!("job {id} does not exist")));
            }
        }
    }

    /// Drops a job that has not started. Returns false if it had started (or finished).
    pub async fn cancel_queued(
        &self,
        id: &str,
        state: JobState,
        code: &str,
        message: &str,
    ) -> Result<bool, QueueError> {
        let mut conn = self.store.conn();
        let dropped: i64 = self
            .script(&self.scripts.cancel)
            .arg(id)
            .arg(state.as_str())
            .arg(code)
            .arg(message)
            .arg(self.settings.job_ttl_seconds())
            .invoke_async(&mut conn)
            .await?;
        Ok(dropped == 1)
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
        let mut conn = self.store.conn();
        let v: Vec<u64> = self
            .script(&self.scripts.remaining)
            .arg(account)
            .arg(trust)
            .arg(s.kind_limit(trust, JobKind::Submit))
            .arg(s.kind_limit(trust, JobKind::Playtest))
            .arg(s.kind_limit(trust, JobKind::Simulate))
            .arg(s.daily_seconds)
            .arg(s.trust0_cap_seconds())
            .invoke_async(&mut conn)
            .await?;
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        Ok(Remaining {
            submissions: at(0),
            playtests: at(1),
            simulations: at(2),
            seconds: at(3),
        })
    }

    /// Adds a field to a finished job's result (e.g. the `revisionId` of a stored
    /// submission), so an idempotent retry returns it too.
    pub async fn annotate(&self, id: &str, field: &str, value: Value) -> Result<(), QueueError> {
        let Some(record) = self.get(id).await? else {
            return Err(QueueError::Store(format!("job {id} does not exist")));
        };
        let mut result = record
            .result
            .unwrap_or_else(|| Value::Object(Default::default()));
        if let Value::Object(map) = &mut result {
            map.insert(field.to_string(), value);
        }
        let mut conn = self.store.conn();
        let _: () = redis::cmd("HSET")
            .arg(self.store.key(&format!("job:{id}")))
            .arg("result")
            .arg(result.to_string())
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    // ---- the worker's side ----

    /// Claims the oldest waiting job for `worker`, or `None` if the queue is empty.
    pub async fn claim(&self, worker: &str) -> Result<Option<Claim>, QueueError> {
        let mut conn = self.store.conn();
        let reply: Option<(String, u64, Vec<String>)> = self
            .script(&self.scripts.claim)
            .arg(worker)
            .arg(self.settings.queue.lease_seconds * 1000)
            .arg(self.settings.job_ttl_seconds())
            .invoke_async(&mut conn)
            .await?;
        let Some((id, token, fields)) = reply else {
            return Ok(None);
        };
        let record = JobRecord::from_fields(pairs(fields))
            .ok_or_else(|| QueueError::Store(format!("job {id} is unreadable")))?;
        Ok(Some(Claim { record, token }))
    }

    /// Extends the lease. `false`: the lease is lost (reaped), stop and do not complete.
    pub async fn heartbeat(&self, id: &str, token: u64) -> Result<bool, QueueError> {
        let mut conn = self.store.conn();
        let ok: i64 = self
            .script(&self.scripts.heartbeat)
            .arg(id)
            .arg(token)
            .arg(self.settings.queue.lease_seconds * 1000)
            .invoke_async(&mut conn)
            .await?;
        Ok(ok == 1)
    }

    /// Records the outcome. `false`: refused, the token is stale (the job was reaped).
    pub async fn complete(
        &self,
        id: &str,
        token: u64,
        outcome: Result<Value, Failure>,
    ) -> Result<bool, QueueError> {
        let (state, result, failure) = match outcome {
            Ok(v) => (JobState::Succeeded, v.to_string(), String::new()),
            Err(f) => (
                JobState::Failed,
                String::new(),
                serde_json::to_string(&f).unwrap_or_default(),
            ),
        };
        let mut conn = self.store.conn();
        let ok: i64 = self
            .script(&self.scripts.complete)
            .arg(id)
            .arg(token)
            .arg(state.as_str())
            .arg(result)
            .arg(failure)
            .arg(self.settings.job_ttl_seconds())
            .invoke_async(&mut conn)
            .await?;
        Ok(ok == 1)
    }

    /// Fails running jobs whose lease expired. Any process may call it; it is idempotent.
    pub async fn reap(&self) -> Result<Vec<String>, QueueError> {
        let mut conn = self.store.conn();
        Ok(self
            .script(&self.scripts.reap)
            .arg(self.settings.job_ttl_seconds())
            .arg(100)
            .invoke_async(&mut conn)
            .await?)
    }

    /// Waiting jobs and the age of the oldest, for metrics and the admin overview.
    pub async fn depth(&self) -> Result<(u64, Option<u64>), QueueError> {
        let mut conn = self.store.conn();
        let key = self.store.key("queue:waiting");
        let len: u64 = redis::cmd("LLEN").arg(&key).query_async(&mut conn).await?;
        let oldest: Option<String> = redis::cmd("LINDEX")
            .arg(&key)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let age = match oldest {
            Some(id) => match self.get(&id).await? {
                Some(r) => Some(self.now_ms().await?.saturating_sub(r.created_at_ms)),
                None => None,
            },
            None => None,
        };
        Ok((len, age))
    }

    /// Today's budget: (seconds used, seconds daily) — for metrics.
    pub async fn budget_today(&self) -> Result<(u64, u64), QueueError> {
        let now = self.now_ms().await?;
        let day = now / 86_400_000;
        let mut conn = self.store.conn();
        let used: Option<u64> = redis::cmd("HGET")
            .arg(self.store.key(&format!("budget:{day}")))
            .arg("used")
            .query_async(&mut conn)
            .await?;
        Ok((used.unwrap_or(0), self.quotas().await?.daily_seconds))
    }

    /// Today's (UTC) job figures for the operator's overview.
    pub async fn today(&self) -> Result<DayStats, QueueError> {
        day_stats(&self.store, self.now_ms().await?).await
    }

    /// The delayed set (turn-clock deadlines) on the same store and clock.
    pub fn delayed(&self) -> DelayedSet {
        DelayedSet::new(self.clone())
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
}

/// The ids of the workers alive now: those whose presence key (`workers:<id>`, written by
/// each worker with a short expiry) still exists.
pub async fn live_workers(store: &Store) -> redis::RedisResult<Vec<String>> {
    use redis::AsyncCommands;
    let mut conn = store.conn();
    let pattern = store.key("workers:*");
    let mut ids: Vec<String> = Vec::new();
    let mut iter: redis::AsyncIter<String> = conn.scan_match(&pattern).await?;
    while let Some(item) = iter.next_item().await {
        let key = item?;
        if let Some(id) = key.strip_prefix(&store.key("workers:")) {
            ids.push(id.to_string());
        }
    }
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
            .arg(self.store.key(&format!("budget:{day}")))
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
    let fields: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg(store.key(&format!("job:{id}")))
        .query_async(&mut store.conn())
        .await?;
    Ok(JobRecord::from_fields(fields))
}

/// Today's figures read with the store alone (the admin CLI has no queue). `now_ms` is the
/// Redis server's clock.
pub async fn day_stats(store: &Store, now_ms: u64) -> Result<DayStats, QueueError> {
    let day = now_ms / 86_400_000;
    let mut conn = store.conn();
    let fields: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg(store.key(&format!("budget:{day}")))
        .query_async(&mut conn)
        .await?;
    let mut stats = DayStats::default();
    for (field, value) in fields {
        let n = value.parse::<i64>().unwrap_or(0).max(0) as u64;
        if let Some(kind) = field.strip_prefix("jobs:") {
            stats.admitted.insert(kind.to_string(), n);
        } else if let Some(rest) = field.strip_prefix("done:") {
            if let Some((kind, state)) = rest.split_once(':') {
                stats
                    .finished
                    .entry(kind.to_string())
                    .or_default()
                    .insert(state.to_string(), n);
            }
        } else if field == "used" {
            stats.seconds_used = n;
        } else if field == "charged" {
            stats.seconds_charged = n;
        }
    }
    Ok(stats)
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
                        "cancelled",
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

/// HGETALL's flat `[field, value, ...]` as pairs.
fn pairs(flat: Vec<String>) -> Vec<(String, String)> {
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    out
}

/// `job_` + 16 random hex digits.
fn new_job_id() -> String {
    let mut bytes = [0u8; 8];
    // The OS RNG failing is not something a caller can fix; fall back to time + counter.
    if getrandom::fill(&mut bytes).is_err() {
        use std::sync::atomic::AtomicU64;
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        bytes = (t ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32)).to_le_bytes();
    }
    format!("job_{}", hex::encode(bytes))
}
