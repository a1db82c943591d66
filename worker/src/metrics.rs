//! Job metrics: durations by kind and outcome, lease expiries; and gauges sampled from
//! Redis (queue depth, oldest waiting age, seconds used and remaining today).

use std::time::Duration;

use horst_planner::UnresolvedReason;
use horst_queue::{JobKind, JobState, Queue};
use horst_telemetry::metrics::counter::Counter;
use horst_telemetry::metrics::family::Family;
use horst_telemetry::metrics::gauge::Gauge;
use horst_telemetry::metrics::histogram::Histogram;
use horst_telemetry::Metrics;
use tokio::sync::watch;

type Labels = Vec<(&'static str, String)>;

#[derive(Clone)]
pub struct WorkerMetrics {
    duration: Family<Labels, Histogram>,
    wait: Family<Labels, Histogram>,
    lease_expiries: Counter,
    unresolved: Family<Labels, Counter>,
}

/// Why a playtest ends unresolved, each counted from zero (`job_playtests_unresolved`). A
/// search that outgrew the memory budget (`worker.job_memory_mib`) is `succeeded` in
/// `job_duration_seconds` (it ran, and answered `unresolved`), so without this an operator
/// could not see that the budget is too small for the levels sent (or that someone is
/// sending levels built to outgrow it).
pub const UNRESOLVED_REASONS: [UnresolvedReason; 3] = [
    UnresolvedReason::TimeLimit,
    UnresolvedReason::MemoryLimit,
    UnresolvedReason::Unreachable,
];

impl WorkerMetrics {
    pub fn register(metrics: &Metrics) -> Self {
        let duration = Family::<Labels, Histogram>::new_with_constructor(|| {
            Histogram::new(horst_telemetry::latency_buckets())
        });
        let lease_expiries = Counter::default();
        let wait = Family::<Labels, Histogram>::new_with_constructor(|| {
            Histogram::new(horst_telemetry::latency_buckets())
        });
        metrics.register(
            "job_wait_seconds",
            "Admission to start of the jobs this worker claimed, by kind",
            wait.clone(),
        );
        metrics.register(
            "job_duration_seconds",
            "Job execution time by kind and outcome (succeeded or the failure code)",
            duration.clone(),
        );
        let unresolved = Family::<Labels, Counter>::default();
        metrics.register(
            "job_playtests_unresolved",
            "Playtests that ended unresolved, by reason (time_limit, memory_limit: the search outgrew worker.job_memory_mib, unreachable)",
            unresolved.clone(),
        );
        for reason in UNRESOLVED_REASONS {
            drop(unresolved.get_or_create(&vec![("reason", reason.as_str().to_string())]));
        }
        metrics.register(
            "job_lease_expiries",
            "Jobs failed because their worker's lease expired",
            lease_expiries.clone(),
        );
        // Every kind and outcome listed at zero from the start (a family shows only the series
        // it has), so the first job of a kind is a rise that `increase()` sees.
        for kind in JobKind::ALL {
            let kind = kind.as_str().to_string();
            drop(wait.get_or_create(&vec![("kind", kind.clone())]));
            let outcomes = std::iter::once("succeeded")
                .chain(horst_queue::FailureCode::ALL.iter().map(|c| c.as_str()));
            for outcome in outcomes {
                drop(
                    duration
                        .get_or_create(&vec![("kind", kind.clone()), ("outcome", outcome.into())]),
                );
            }
        }
        WorkerMetrics {
            duration,
            wait,
            lease_expiries,
            unresolved,
        }
    }

    pub(crate) fn observe(&self, kind: JobKind, outcome: &str, elapsed: Duration) {
        self.duration
            .get_or_create(&vec![
                ("kind", kind.as_str().to_string()),
                ("outcome", outcome.to_string()),
            ])
            .observe(elapsed.as_secs_f64());
    }

    pub(crate) fn waited(&self, kind: JobKind, waited: Duration) {
        self.wait
            .get_or_create(&vec![("kind", kind.as_str().to_string())])
            .observe(waited.as_secs_f64());
    }

    /// A playtest ended unresolved for `reason` (a planner's `UnresolvedReason`).
    pub(crate) fn unresolved(&self, reason: &str) {
        self.unresolved
            .get_or_create(&vec![("reason", reason.to_string())])
            .inc();
    }

    pub(crate) fn lease_expired(&self) {
        self.lease_expiries.inc();
    }
}

/// Samples the queue's gauges every few seconds (any process; they read Redis).
pub async fn sample_queue_gauges(
    queue: Queue,
    metrics: Metrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let depth = Gauge::<i64>::default();
    let oldest = Gauge::<i64>::default();
    let used = Gauge::<i64>::default();
    let remaining = Gauge::<i64>::default();
    let running = Gauge::<i64>::default();
    let workers = Gauge::<i64>::default();
    let lane_depth = Family::<Labels, Gauge<i64>>::default();
    let lane_oldest = Family::<Labels, Gauge<i64>>::default();
    let kind_depth = Family::<Labels, Gauge<i64>>::default();
    let kind_oldest = Family::<Labels, Gauge<i64>>::default();
    // The ages in seconds, Prometheus's base unit, beside the milliseconds of earlier
    // versions (deprecated, kept so no dashboard or alert breaks; docs/operators.md).
    let oldest_s = SecondsGauge::default();
    let lane_oldest_s = Family::<Labels, SecondsGauge>::default();
    let kind_oldest_s = Family::<Labels, SecondsGauge>::default();
    metrics.register(
        "queue_kind_waiting_jobs",
        "Jobs waiting to start, by kind (playtest, simulate, submit, recheck)",
        kind_depth.clone(),
    );
    metrics.register(
        "queue_kind_oldest_waiting_milliseconds",
        "Age of the longest-waiting job of the kind (0 when none waits); deprecated: queue_kind_oldest_waiting_seconds",
        kind_oldest.clone(),
    );
    metrics.register(
        "queue_kind_oldest_waiting_seconds",
        "Age of the longest-waiting job of the kind, in seconds (0 when none waits)",
        kind_oldest_s.clone(),
    );
    metrics.register(
        "queue_lane_waiting_jobs",
        "Jobs waiting to start, by lane (planner: playtest; referee: simulate, submit, recheck)",
        lane_depth.clone(),
    );
    metrics.register(
        "queue_lane_oldest_waiting_milliseconds",
        "Age of the lane's longest-waiting job; deprecated: queue_lane_oldest_waiting_seconds",
        lane_oldest.clone(),
    );
    metrics.register(
        "queue_lane_oldest_waiting_seconds",
        "Age of the lane's longest-waiting job, in seconds (0 when none waits)",
        lane_oldest_s.clone(),
    );
    metrics.register("queue_waiting_jobs", "Jobs waiting to start", depth.clone());
    metrics.register(
        "queue_running_jobs",
        "Jobs running now (holding a worker's lease)",
        running.clone(),
    );
    metrics.register(
        "workers_live",
        "Workers announced alive now (their workers:<id> keys)",
        workers.clone(),
    );
    metrics.register(
        "queue_oldest_waiting_milliseconds",
        "Age of the oldest waiting job; deprecated: queue_oldest_waiting_seconds",
        oldest.clone(),
    );
    metrics.register(
        "queue_oldest_waiting_seconds",
        "Age of the oldest waiting job, in seconds (0 when none waits)",
        oldest_s.clone(),
    );
    metrics.register(
        "budget_seconds_used",
        "Reserved execution seconds used today (UTC)",
        used.clone(),
    );
    metrics.register(
        "budget_seconds_remaining",
        "Reserved execution seconds left today (UTC)",
        remaining.clone(),
    );
    let ended_today = Family::<Labels, Gauge<i64>>::default();
    metrics.register(
        "queue_jobs_ended_today",
        "Jobs that ended today (UTC), by kind and final state (succeeded, failed, cancelled: an operator's cancel of a waiting or a running job, or a caller gone), whichever process ended them",
        ended_today.clone(),
    );
    for kind in JobKind::ALL {
        for state in ENDED_STATES {
            drop(ended_today.get_or_create(&ended_labels(kind, state)));
        }
    }
    // Every lane and kind at zero until the first sample (and if Redis cannot be read yet).
    for lane in horst_queue::Lane::ALL {
        let labels = vec![("lane", lane.as_str().to_string())];
        drop(lane_depth.get_or_create(&labels));
        drop(lane_oldest.get_or_create(&labels));
        drop(lane_oldest_s.get_or_create(&labels));
    }
    for kind in JobKind::ALL {
        let labels = vec![("kind", kind.as_str().to_string())];
        drop(kind_depth.get_or_create(&labels));
        drop(kind_oldest.get_or_create(&labels));
        drop(kind_oldest_s.get_or_create(&labels));
    }
    loop {
        // Every waiting record read once for all three (it was read three times: the total,
        // each lane, each kind).
        if let Ok(waiting) = queue.waiting_gauges().await {
            let (n, age) = waiting.total();
            depth.set(n as i64);
            oldest.set(age.unwrap_or(0) as i64);
            oldest_s.set(seconds(age));
            for (lane, n, age) in waiting.lanes {
                let labels = vec![("lane", lane.as_str().to_string())];
                lane_depth.get_or_create(&labels).set(n as i64);
                lane_oldest
                    .get_or_create(&labels)
                    .set(age.unwrap_or(0) as i64);
                lane_oldest_s.get_or_create(&labels).set(seconds(age));
            }
            for (kind, n, age) in waiting.kinds {
                let labels = vec![("kind", kind.as_str().to_string())];
                kind_depth.get_or_create(&labels).set(n as i64);
                kind_oldest
                    .get_or_create(&labels)
                    .set(age.unwrap_or(0) as i64);
                kind_oldest_s.get_or_create(&labels).set(seconds(age));
            }
        }
        if let Ok(n) = queue.running_count().await {
            running.set(n as i64);
        }
        if let Ok(ids) = horst_queue::live_workers(queue.store()).await {
            workers.set(ids.len() as i64);
        }
        // Read from Redis, so it counts what every process ended (a worker's own counters
        // miss the queued jobs an API process dropped, and the jobs of other workers).
        if let Ok(day) = queue.today().await {
            for kind in JobKind::ALL {
                for state in ENDED_STATES {
                    let n = day
                        .finished
                        .get(kind.as_str())
                        .and_then(|by| by.get(state.as_str()))
                        .copied()
                        .unwrap_or(0);
                    ended_today
                        .get_or_create(&ended_labels(kind, state))
                        .set(n as i64);
                }
            }
        }
        if let Ok((u, total)) = queue.budget_today().await {
            used.set(u as i64);
            remaining.set(total.saturating_sub(u) as i64);
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

/// A gauge of seconds with their fraction (the ages are measured in milliseconds).
type SecondsGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

/// An age in milliseconds as seconds; none waiting is 0, as the milliseconds gauges say.
fn seconds(age_ms: Option<u64>) -> f64 {
    age_ms.unwrap_or(0) as f64 / 1000.0
}

/// The final states `queue_jobs_ended_today` counts (`DayStats::finished`'s).
const ENDED_STATES: [JobState; 3] = [JobState::Succeeded, JobState::Failed, JobState::Cancelled];

fn ended_labels(kind: JobKind, state: JobState) -> Labels {
    vec![
        ("kind", kind.as_str().to_string()),
        ("state", state.as_str().to_string()),
    ]
}
