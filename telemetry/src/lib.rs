//! Logs and metrics, shared by every horst process.
//!
//! Logs go through `tracing`: human-readable lines by default, one JSON object a line in
//! production (`log.format = "json"`). Metrics live in one Prometheus registry that each
//! crate registers its own metrics in at start; `/metrics` encodes it.
//!
//! Architecture invariant: secrets (keys, tokens, passwords, Redis URLs with credentials)
//! are never fields of a log event or a metric label.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::sync::{Arc, Mutex};

pub use prometheus_client::encoding;
use prometheus_client::encoding::text::encode;
pub use prometheus_client::metrics;
pub use prometheus_client::registry::Registry;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `HORST_LOG` (tracing directives) wins over `RUST_LOG`,
/// which wins over `level`. Safe to call twice (the second call does nothing), which tests
/// rely on.
pub fn init_tracing(json: bool, level: &str) {
    // An empty variable (`Environment=RUST_LOG=` in a unit) parses as a filter with no
    // directives, which turns every line off, errors included: it counts as unset.
    // A filter that does not parse is passed over for the next, and said once logging is
    // up: a typo (`horst_api=debu`) silently left the operator without the lines asked for.
    let mut refused: Vec<String> = Vec::new();
    let mut parse = |what: &str, text: &str| match EnvFilter::try_new(text) {
        Ok(f) => Some(f),
        Err(e) => {
            refused.push(format!("{what} = {text:?} ({e})"));
            None
        }
    };
    let filter = ["HORST_LOG", "RUST_LOG"]
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (*name, v)))
        .filter(|(_, v)| !v.trim().is_empty())
        .find_map(|(name, v)| parse(name, &v))
        .or_else(|| parse("log.level", level))
        .unwrap_or_else(|| EnvFilter::new("info"));
    // A line that cannot be written is dropped: by default tracing-subscriber reports the
    // failed write with `eprintln!`, which panics when stderr is a broken pipe (the `horst
    // up` relaying a worker child's log died, `horst up 2>&1 | tee` lost its tee), and every
    // task that logged died with it: a worker's signal task died logging "shutting down"
    // before it started the shutdown, and the worker ignored SIGTERM for good.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .log_internal_errors(false);
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            // The innermost span's fields (a request's or a job's id and request id).
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    } else {
        // Colours only for a person at a terminal: in a file, a pipe or journald the escape
        // codes are noise around every field (`grep` and log shippers see `\x1b[2m`).
        use std::io::IsTerminal;
        builder
            .with_target(false)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init()
    };
    for r in refused {
        tracing::warn!("a logging filter that does not parse was passed over: {r}; write directives such as `info` or `horst_api=debug,info`");
    }
}

/// A dispatcher that writes every event of level INFO and above as one JSON line on stdout
/// (`stdout`) or stderr, in the shape of [`init_tracing`]'s JSON logs and without its filter:
/// the `horst: ...` lines said to the operator become log events of their own with
/// `log.format = "json"` (`say` and `warn` of the binary's `terminal.rs`), so the streams
/// stay pure JSON. Write errors are dropped, never reported on a stream that may be gone.
pub fn json_line_dispatch(stdout: bool) -> tracing::Dispatch {
    let builder = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_max_level(tracing::Level::INFO)
        .log_internal_errors(false);
    if stdout {
        tracing::Dispatch::new(builder.with_writer(std::io::stdout).finish())
    } else {
        tracing::Dispatch::new(builder.with_writer(std::io::stderr).finish())
    }
}

/// Histogram buckets for latencies, in seconds: from a millisecond to past the longest job
/// limit and wait the configuration allows (600 s and 3600 s), so a slow call or a long job
/// is not lost in `+Inf`.
pub fn latency_buckets() -> impl Iterator<Item = f64> {
    [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0,
        45.0, 60.0, 90.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
    ]
    .into_iter()
}

/// The process's metrics registry. Cheap to clone.
#[derive(Clone, Default)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    /// Families another process counted into, added to this one's of the same name in its
    /// exposition ([`Metrics::set_forwarded`]).
    forwarded: Arc<Mutex<String>>,
    /// The sums of what earlier such processes had counted when they ended
    /// ([`Metrics::retire_forwarded`]), added as well: a counter never goes back while this
    /// process lives.
    retired: Arc<Mutex<String>>,
}

impl Metrics {
    pub fn new() -> Self {
        Metrics {
            registry: Arc::new(Mutex::new(Registry::with_prefix("horst"))),
            forwarded: Arc::default(),
            retired: Arc::default(),
        }
    }

    /// Registers one metric (a counter, gauge, histogram or family of them).
    pub fn register(
        &self,
        name: &str,
        help: &str,
        metric: impl prometheus_client::registry::Metric,
    ) {
        let mut registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        registry.register(name, help, metric);
    }

    /// The Prometheus text exposition format.
    pub fn encode(&self) -> String {
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &registry);
        drop(registry);
        let retired = self
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let forwarded = self
            .forwarded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if retired.is_empty() && forwarded.is_empty() {
            return out;
        }
        let mut merged = out;
        for theirs in [retired, forwarded] {
            if !theirs.is_empty() {
                merged = merge_families(&merged, &theirs);
            }
        }
        merged.push_str("# EOF\n");
        merged
    }

    /// Adds `families` (exposition text of another process, e.g. `horst up`'s worker child:
    /// whole families, `# HELP` to the next) to this registry's families of the same names,
    /// sample by sample: both processes count into them (`up`'s API and its worker both reap
    /// and fire session clocks), so `up`'s `/metrics` shows the sum. Only for counters and
    /// histograms (a sum of gauges means nothing). An empty text shows only this registry
    /// again.
    pub fn set_forwarded(&self, families: String) {
        *self.forwarded.lock().unwrap_or_else(|e| e.into_inner()) = families;
    }

    /// The process whose families were forwarded ended (`horst up`'s worker child died and is
    /// started again): what it had counted stays in the sums, and the next process's counts
    /// are added on top. Without this every counter fell back by the dead child's counts, a
    /// reset Prometheus reads as a restart of a process that never restarted. Counts made
    /// after the last [`Metrics::set_forwarded`] are lost with the process.
    pub fn retire_forwarded(&self) {
        let last = std::mem::take(&mut *self.forwarded.lock().unwrap_or_else(|e| e.into_inner()));
        if last.is_empty() {
            return;
        }
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        *retired = if retired.is_empty() {
            last
        } else {
            merge_families(&retired, &last)
        };
    }
}

/// The families of `ours` with `theirs` added to those of the same name sample by sample,
/// then the families only `theirs` has; no `# EOF` line.
fn merge_families(ours: &str, theirs: &str) -> String {
    let theirs = families(theirs);
    let ours = families(ours);
    let mut merged = String::new();
    for (name, block) in &ours {
        match theirs.iter().find(|(n, _)| n == name) {
            Some((_, their_block)) => merged.push_str(&add_samples(block, their_block)),
            None => merged.push_str(block),
        }
    }
    for (name, block) in &theirs {
        if !ours.iter().any(|(n, _)| n == name) {
            merged.push_str(block);
        }
    }
    merged
}

/// One sample line split into its series (name and labels) and its value; `None` for
/// comments and lines that are not a sample.
fn sample(line: &str) -> Option<(&str, f64)> {
    if line.starts_with('#') {
        return None;
    }
    let (series, value) = line.trim_end().rsplit_once(' ')?;
    Some((series, value.parse().ok()?))
}

/// `ours` (one family's block) with the values of `theirs` (the same family's block of
/// another process) added to the samples of the same series; their series that ours lacks
/// follow ours, each series' lines kept together.
fn add_samples(ours: &str, theirs: &str) -> String {
    let their_samples: Vec<(&str, f64)> = theirs.lines().filter_map(sample).collect();
    let mut used = vec![false; their_samples.len()];
    let mut out = String::new();
    for line in ours.split_inclusive('\n') {
        let found = sample(line).and_then(|(series, value)| {
            let i = their_samples.iter().position(|(s, _)| *s == series)?;
            Some((i, series, value))
        });
        match found {
            Some((i, series, value)) => {
                used[i] = true;
                out.push_str(&format!("{series} {}\n", value + their_samples[i].1));
            }
            None => out.push_str(line),
        }
    }
    for line in theirs.lines() {
        let Some((series, _)) = sample(line) else {
            continue;
        };
        if let Some(i) = their_samples.iter().position(|(s, _)| *s == series) {
            if !used[i] {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The families of an exposition text, each with its name and its lines (from its `# HELP`
/// up to the next family's), without the `# EOF` line.
pub fn families(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("# EOF") {
            break;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or_default().trim_end();
            out.push((name.to_string(), String::new()));
        }
        match out.last_mut() {
            Some((_, block)) => block.push_str(line),
            // Lines before the first family (none in prometheus-client's output).
            None => out.push((String::new(), line.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;

    #[test]
    fn forwarded_families_are_added_to_their_namesakes() {
        use prometheus_client::metrics::family::Family;
        use prometheus_client::metrics::histogram::Histogram;
        type Labels = Vec<(&'static str, &'static str)>;
        let hist = || Histogram::new([1.0, 2.0]);
        let ours = Metrics::new();
        let c: Counter = Counter::default();
        ours.register("jobs", "Jobs seen", c.clone());
        c.inc_by(2);
        ours.register("calls", "Calls seen", Counter::<u64>::default());
        let ours_h = Family::<Labels, Histogram>::new_with_constructor(hist);
        ours.register("wait_seconds", "Waits", ours_h.clone());
        ours_h.get_or_create(&vec![("kind", "a")]).observe(0.5);
        let theirs = Metrics::new();
        let t: Counter = Counter::default();
        theirs.register("jobs", "Jobs seen", t.clone());
        t.inc_by(7);
        let theirs_h = Family::<Labels, Histogram>::new_with_constructor(hist);
        theirs.register("wait_seconds", "Waits", theirs_h.clone());
        theirs_h.get_or_create(&vec![("kind", "a")]).observe(1.5);
        theirs_h.get_or_create(&vec![("kind", "b")]).observe(3.0);
        let forwarded: String = families(&theirs.encode())
            .into_iter()
            .map(|(_, block)| block)
            .collect();
        ours.set_forwarded(forwarded);
        let text = ours.encode();
        assert!(text.contains("horst_jobs_total 9\n"), "{text}");
        assert!(text.contains("horst_calls_total 0\n"), "{text}");
        assert!(
            text.contains("horst_wait_seconds_count{kind=\"a\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("horst_wait_seconds_sum{kind=\"a\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("horst_wait_seconds_bucket{le=\"1.0\",kind=\"a\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("horst_wait_seconds_count{kind=\"b\"} 1\n"),
            "{text}"
        );
        assert_eq!(
            text.matches("# TYPE horst_jobs counter").count(),
            1,
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
        ours.set_forwarded(String::new());
        assert!(ours.encode().contains("horst_jobs_total 2"));
    }

    /// A forwarding process that ends keeps its counts in the sums: the next one's are added
    /// on top, so a counter never falls back (it fell from 9 to 2 when `up`'s worker child
    /// was started again).
    #[test]
    fn a_retired_process_keeps_its_counts() {
        let ours = Metrics::new();
        let c: Counter = Counter::default();
        ours.register("jobs", "Jobs seen", c.clone());
        c.inc_by(2);
        let child = |n: u64| {
            let theirs = Metrics::new();
            let t: Counter = Counter::default();
            theirs.register("jobs", "Jobs seen", t.clone());
            t.inc_by(n);
            let o: Counter = Counter::default();
            theirs.register("only_theirs", "Only the child's", o.clone());
            o.inc_by(n);
            families(&theirs.encode())
                .into_iter()
                .map(|(_, block)| block)
                .collect::<String>()
        };
        ours.set_forwarded(child(7));
        assert!(ours.encode().contains("horst_jobs_total 9\n"));
        // The child dies; its successor starts from zero.
        ours.retire_forwarded();
        let text = ours.encode();
        assert!(text.contains("horst_jobs_total 9\n"), "{text}");
        ours.set_forwarded(child(0));
        let text = ours.encode();
        assert!(text.contains("horst_jobs_total 9\n"), "{text}");
        assert!(text.contains("horst_only_theirs_total 7\n"), "{text}");
        ours.set_forwarded(child(3));
        ours.retire_forwarded();
        ours.set_forwarded(child(1));
        let text = ours.encode();
        assert!(text.contains("horst_jobs_total 13\n"), "{text}");
        assert!(text.contains("horst_only_theirs_total 11\n"), "{text}");
        assert_eq!(
            text.matches("# TYPE horst_jobs counter").count(),
            1,
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn registered_metrics_are_encoded() {
        let m = Metrics::new();
        let c: Counter = Counter::default();
        m.register("jobs", "Jobs seen", c.clone());
        c.inc();
        let text = m.encode();
        assert!(text.contains("horst_jobs_total 1"), "{text}");
        assert!(text.contains("# HELP horst_jobs Jobs seen"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
