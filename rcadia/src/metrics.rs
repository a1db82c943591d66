//! Session metrics for `/metrics`: what an operator needs to see whether the session layer
//! keeps up (delivery latency, clock lateness, compare-and-set contention) and what agents
//! do (sessions, actions and their outcomes).
//!
//! The handles are created with the service and registered into a process's registry by
//! whoever serves `/metrics` ([`SessionMetrics::register`]); a process that serves none
//! (a worker without `metrics_listen`) still counts, into handles nobody reads.
//!
//! Labels are closed sets (outcome names, timer kinds, end reasons from a fixed list), never
//! ids or free text from games: a label value a game could choose would let one game blow up
//! the number of series.

use std::sync::Arc;

use horst_sessions::{ActionStatus, ProtocolCode, Session, Status, TimerKind};
use horst_telemetry::metrics::counter::Counter;
use horst_telemetry::metrics::family::Family;
use horst_telemetry::metrics::gauge::Gauge;
use horst_telemetry::metrics::histogram::{exponential_buckets, Histogram};
use horst_telemetry::Metrics;

type Labels = Vec<(&'static str, &'static str)>;

/// The session layer's metric handles. Cheap to clone (shared counters).
#[derive(Clone)]
pub struct SessionMetrics {
    inner: Arc<Handles>,
}

struct Handles {
    created: Family<Labels, Counter>,
    finished: Family<Labels, Counter>,
    actions_received: Family<Labels, Counter>,
    action_outcomes: Family<Labels, Counter>,
    delivery: Histogram,
    clock_firings: Family<Labels, Counter>,
    clock_lateness: Histogram,
    long_polls: Gauge,
    cas_conflicts: Counter,
    cas_gave_up: Counter,
    round_trips: Counter,
    wait_reads: Counter,
    fresh_reads: Counter,
    whole_reads: Family<Labels, Counter>,
    /// `whole_reads`' series by [`WholeRead`], fetched once (no label lookup per read).
    whole_reads_by_cause: [Counter; WholeRead::ALL.len()],
}

/// Why the session layer read a record whole from Redis (`MGET` of the value and its base),
/// or decoded one a write's reply carried: each costs a decode of the record (a delta
/// applied to the base and the MessagePack), most a round trip too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WholeRead {
    /// The process held no record of the session.
    Uncached,
    /// A request's check of the stored rev found it moved past the cached record.
    Stale,
    /// A long-poll's wake-up named a write the process does not hold.
    Wake,
    /// A long-poll's slow re-check (`wait::RECHECK`) found the stored rev moved.
    Recheck,
    /// A write lost its compare-and-set race: the reply carried the stored record.
    LostRace,
    /// An apply that stored nothing found its record was not the stored one.
    ApplyCheck,
    /// `GET /available`'s listing of the unfinished sessions.
    Listing,
}

impl WholeRead {
    const ALL: [WholeRead; 7] = [
        WholeRead::Uncached,
        WholeRead::Stale,
        WholeRead::Wake,
        WholeRead::Recheck,
        WholeRead::LostRace,
        WholeRead::ApplyCheck,
        WholeRead::Listing,
    ];

    fn label(self) -> &'static str {
        match self {
            WholeRead::Uncached => "uncached",
            WholeRead::Stale => "stale",
            WholeRead::Wake => "wake",
            WholeRead::Recheck => "recheck",
            WholeRead::LostRace => "lost_race",
            WholeRead::ApplyCheck => "apply_check",
            WholeRead::Listing => "listing",
        }
    }
}

impl Default for SessionMetrics {
    fn default() -> Self {
        // 1 ms .. ~33 s: delivery is milliseconds when healthy, a 25 s long-poll at worst.
        let latency = || Histogram::new(exponential_buckets(0.001, 2.0, 16));
        let whole_reads = Family::<Labels, Counter>::default();
        let whole_reads_by_cause = WholeRead::ALL.map(|c| {
            whole_reads
                .get_or_create(&vec![("cause", c.label())])
                .clone()
        });
        let m = SessionMetrics {
            inner: Arc::new(Handles {
                created: Family::default(),
                finished: Family::default(),
                actions_received: Family::default(),
                action_outcomes: Family::default(),
                delivery: latency(),
                clock_firings: Family::default(),
                clock_lateness: latency(),
                long_polls: Gauge::default(),
                cas_conflicts: Counter::default(),
                cas_gave_up: Counter::default(),
                round_trips: Counter::default(),
                wait_reads: Counter::default(),
                fresh_reads: Counter::default(),
                whole_reads,
                whole_reads_by_cause,
            }),
        };
        // Every label value of these closed sets listed at zero from the start (a family
        // shows only the series it has), so the first event is a rise `increase()` sees.
        let h = &m.inner;
        let zero =
            |family: &Family<Labels, Counter>, name: &'static str, values: &[&'static str]| {
                for v in values {
                    drop(family.get_or_create(&vec![(name, *v)]));
                }
            };
        zero(&h.created, "kind", &["new", "rematch"]);
        zero(&h.finished, "reason", KNOWN_REASONS);
        zero(&h.finished, "reason", &["other"]);
        zero(&h.actions_received, "result", &["accepted", "other"]);
        zero(
            &h.actions_received,
            "result",
            &ACTION_REFUSALS.map(|c| c.as_str()),
        );
        zero(
            &h.action_outcomes,
            "outcome",
            &["applied", "rejected", "unconfirmed"],
        );
        zero(&h.clock_firings, "kind", TIMER_LABELS);
        m
    }
}

/// The refusals of `POST /action` that get a label of their own ([`SessionMetrics::action_received`]).
const ACTION_REFUSALS: [ProtocolCode; 6] = [
    ProtocolCode::NotYourTurn,
    ProtocolCode::StaleTurn,
    ProtocolCode::ActionPending,
    ProtocolCode::NotActive,
    ProtocolCode::Finished,
    ProtocolCode::ReservedAction,
];

/// Every value [`timer_label`] gives.
const TIMER_LABELS: &[&str] = &[
    "clock",
    "unconfirmed",
    "host_alive",
    "host_gone",
    "reservation",
    "activation",
];

/// End reasons that become a label as they are; anything else a host sends is `other`.
const KNOWN_REASONS: &[&str] = &[
    "game_over",
    "timeout",
    "left",
    "host_left",
    "host_disconnected",
    "session_lost",
];

fn reason_label(s: &Session) -> &'static str {
    let r = s.end_reason().unwrap_or("game_over");
    KNOWN_REASONS
        .iter()
        .find(|k| **k == r)
        .copied()
        .unwrap_or("other")
}

pub(crate) fn timer_label(k: &TimerKind) -> &'static str {
    match k {
        TimerKind::Clock => "clock",
        TimerKind::Unconfirmed { .. } => "unconfirmed",
        TimerKind::HostAlive => "host_alive",
        TimerKind::HostGone => "host_gone",
        TimerKind::Reservation => "reservation",
        TimerKind::Activation => "activation",
    }
}

impl SessionMetrics {
    /// Registers every handle in `metrics` (once per registry).
    pub fn register(&self, metrics: &Metrics) {
        let h = &self.inner;
        metrics.register(
            "sessions_created",
            "RCADIA sessions created, by kind (new table or rematch)",
            h.created.clone(),
        );
        metrics.register(
            "sessions_finished",
            "RCADIA sessions finished, by end reason",
            h.finished.clone(),
        );
        metrics.register(
            "session_actions_received",
            "POST /action calls, by result (accepted, or the refusal code)",
            h.actions_received.clone(),
        );
        metrics.register(
            "session_action_outcomes",
            "Accepted actions resolved, by outcome (applied, rejected, unconfirmed)",
            h.action_outcomes.clone(),
        );
        metrics.register(
            "session_action_delivery_seconds",
            "From an accepted action to the host's poll returning it (server clock)",
            h.delivery.clone(),
        );
        metrics.register(
            "session_clock_firings",
            "Session deadlines fired from the delayed set, by timer kind",
            h.clock_firings.clone(),
        );
        metrics.register(
            "session_clock_lateness_seconds",
            "How late a fired deadline was applied after its due time (server clock)",
            h.clock_lateness.clone(),
        );
        metrics.register(
            "session_long_polls_open",
            "Session long-polls currently waiting in this process",
            h.long_polls.clone(),
        );
        metrics.register(
            "session_cas_conflicts",
            "Session writes that lost a compare-and-set race and were re-applied",
            h.cas_conflicts.clone(),
        );
        metrics.register(
            "session_cas_gave_up",
            "Requests that lost the compare-and-set race too often and were refused",
            h.cas_gave_up.clone(),
        );
        metrics.register(
            "session_redis_round_trips",
            "Redis round trips of the session layer (loads, writes, clock polls; not sign-in)",
            h.round_trips.clone(),
        );
        metrics.register(
            "session_long_poll_reads",
            "Session reads by waiting long-polls (a wake-up that carries the state needs none)",
            h.wait_reads.clone(),
        );
        metrics.register(
            "session_fresh_reads",
            "Session reads served from the process's cache without asking Redis (the pub/sub listener vouched for the record)",
            h.fresh_reads.clone(),
        );
        metrics.register(
            "session_whole_reads",
            "Session records read whole from Redis or decoded from a lost race's reply, by cause",
            h.whole_reads.clone(),
        );
    }

    /// One request/response exchange with Redis (a command, a pipeline or a script).
    /// Round trips to Redis the session layer made so far (tests and benchmarks read it).
    pub fn round_trips(&self) -> u64 {
        self.inner.round_trips.get()
    }

    pub(crate) fn round_trip(&self) {
        self.inner.round_trips.inc();
    }

    /// A read served from the cache without asking Redis.
    pub(crate) fn fresh_read(&self) {
        self.inner.fresh_reads.inc();
    }

    /// Reads served from the cache without asking Redis so far (tests read it).
    pub fn fresh_reads(&self) -> u64 {
        self.inner.fresh_reads.get()
    }

    /// A record read (or decoded) whole, for `cause`.
    pub(crate) fn whole_read(&self, cause: WholeRead) {
        // `ALL` lists the causes in their declaration order.
        self.inner.whole_reads_by_cause[cause as usize].inc();
    }

    /// Records read (or decoded) whole so far, every cause together (tests read it).
    pub fn whole_reads(&self) -> u64 {
        self.inner
            .whole_reads_by_cause
            .iter()
            .map(Counter::get)
            .sum()
    }

    /// Records read whole so far for the cause labelled `label` (tests read it).
    pub fn whole_reads_of(&self, label: &str) -> u64 {
        WholeRead::ALL
            .iter()
            .position(|c| c.label() == label)
            .map_or(0, |i| self.inner.whole_reads_by_cause[i].get())
    }

    /// A waiting long-poll read the session (no usable wake-up payload, or the re-check).
    pub(crate) fn wait_read(&self) {
        self.inner.wait_reads.inc();
    }

    pub(crate) fn session_created(&self, rematch: bool) {
        let kind = if rematch { "rematch" } else { "new" };
        self.inner
            .created
            .get_or_create(&vec![("kind", kind)])
            .inc();
    }

    /// `POST /action`'s immediate answer: `accepted` (`None`) or the refusal code. Only the
    /// refusals an action can meet get their own label.
    pub fn action_received(&self, refusal: Option<ProtocolCode>) {
        use ProtocolCode as C;
        let label = match refusal {
            None => "accepted",
            Some(
                c @ (C::NotYourTurn
                | C::StaleTurn
                | C::ActionPending
                | C::NotActive
                | C::Finished
                | C::ReservedAction),
            ) => c.as_str(),
            Some(
                C::BadRequest
                | C::TooLarge
                | C::NotAPlayer
                | C::NotTheHost
                | C::InProgress
                | C::Reserved
                | C::Full
                | C::IdCollision
                | C::AlreadyLinked
                | C::LegacySession
                | C::NotFinished
                | C::HostDisconnected
                | C::HostLeft
                | C::NoPlayers
                | C::EndedByOperator
                | C::IdempotencyKeyReused,
            ) => "other",
        };
        self.inner
            .actions_received
            .get_or_create(&vec![("result", label)])
            .inc();
    }

    pub(crate) fn cas_conflict(&self) {
        self.inner.cas_conflicts.inc();
    }

    pub(crate) fn cas_gave_up(&self) {
        self.inner.cas_gave_up.inc();
    }

    pub(crate) fn clock_fired(&self, kind: &TimerKind, late_ms: u64) {
        self.inner
            .clock_firings
            .get_or_create(&vec![("kind", timer_label(kind))])
            .inc();
        self.inner.clock_lateness.observe(late_ms as f64 / 1000.0);
    }

    /// Counts an open long-poll until the guard drops (also on errors and cancellation).
    pub(crate) fn long_poll(&self) -> LongPollGuard {
        self.inner.long_polls.inc();
        LongPollGuard(self.inner.long_polls.clone())
    }

    /// What one stored write changed that the metrics count: a finish, resolved actions,
    /// first deliveries. Comparing the record before and after keeps the pure machine free
    /// of metrics and catches every path (action, ops, clock, poll) in one place.
    ///
    /// `before` is the record the write replaced (the apply holds it, shared with the
    /// process's record cache: comparing against it costs no copy).
    pub(crate) fn observe_write(&self, before: &Session, after: &Session) {
        let h = &self.inner;
        if before.status() != Status::Finished && after.status() == Status::Finished {
            h.finished
                .get_or_create(&vec![("reason", reason_label(after))])
                .inc();
        }
        for p in after.players() {
            let old = before.player(&p.player_id);
            if let (Some(pa), Some(d)) = (
                &p.pending,
                p.pending.as_ref().and_then(|x| x.delivered_at_ms),
            ) {
                let was_delivered = old
                    .and_then(|o| o.pending.as_ref())
                    .is_some_and(|o| o.action_id == pa.action_id && o.delivered_at_ms.is_some());
                if !was_delivered {
                    h.delivery
                        .observe(d.saturating_sub(pa.submitted_at_ms) as f64 / 1000.0);
                }
            }
            if let Some(la) = &p.last_action {
                let was = old
                    .and_then(|o| o.last_action.as_ref())
                    .filter(|o| o.action_id == la.action_id)
                    .map(|o| o.status);
                let outcome = match la.status {
                    ActionStatus::Applied => "applied",
                    ActionStatus::Rejected => "rejected",
                    ActionStatus::Unconfirmed => "unconfirmed",
                    ActionStatus::Pending => continue,
                };
                // A resolution is a change of status of the same action (a rejection followed
                // by a resubmission is a new action id).
                if was != Some(la.status) {
                    h.action_outcomes
                        .get_or_create(&vec![("outcome", outcome)])
                        .inc();
                }
            }
        }
    }
}

/// Decrements the open long-poll gauge when dropped.
pub(crate) struct LongPollGuard(Gauge);

impl Drop for LongPollGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole read counts under its own cause (`whole_read` indexes by declaration order).
    #[test]
    fn a_whole_read_counts_under_its_cause() {
        for (i, c) in WholeRead::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{c:?}");
        }
        let m = SessionMetrics::default();
        m.whole_read(WholeRead::Wake);
        m.whole_read(WholeRead::Wake);
        m.whole_read(WholeRead::LostRace);
        assert_eq!(m.whole_reads(), 3);
        assert_eq!(m.whole_reads_of("wake"), 2);
        assert_eq!(m.whole_reads_of("lost_race"), 1);
        let registry = Metrics::new();
        m.register(&registry);
        let text = registry.encode();
        assert!(
            text.contains("horst_session_whole_reads_total{cause=\"wake\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("horst_session_whole_reads_total{cause=\"recheck\"} 0\n"),
            "{text}"
        );
    }

    /// Every timer kind's label is among those listed at zero from the start.
    #[test]
    fn every_timer_label_is_listed_from_the_start() {
        let kinds = [
            TimerKind::Clock,
            TimerKind::Unconfirmed {
                player_id: "p".into(),
            },
            TimerKind::HostAlive,
            TimerKind::HostGone,
            TimerKind::Reservation,
            TimerKind::Activation,
        ];
        for k in &kinds {
            assert!(TIMER_LABELS.contains(&timer_label(k)), "{k:?}");
        }
        let m = SessionMetrics::default();
        let registry = Metrics::new();
        m.register(&registry);
        let text = registry.encode();
        for label in TIMER_LABELS {
            assert!(
                text.contains(&format!(
                    "horst_session_clock_firings_total{{kind=\"{label}\"}} 0\n"
                )),
                "{text}"
            );
        }
        assert!(
            text.contains("horst_session_actions_received_total{result=\"not_your_turn\"} 0\n"),
            "{text}"
        );
    }
}
