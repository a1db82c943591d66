//! Lines for the operator's terminal that never panic. `println!` panics when stdout is
//! gone (`horst up | tee log` and tee ended; Rust ignores SIGPIPE), and a panic in a
//! supervising task or thread ended the supervision: no worker started again, or a
//! restarted private redis-server stopped with the thread that started it.

//!
//! With `log.format = "json"` ([`log_as_json`]) each line is a JSON log event instead, on the
//! same stream, so a log shipper or journald sees only JSON: the text without its `horst: `
//! prefix is the `message`, and the level is INFO (`say`), WARN (a `warning: ` line) or
//! ERROR (any other `warn`).

use std::io::Write;
use std::sync::OnceLock;

/// The JSON writers of stdout and stderr, once the JSON format is chosen.
static JSON: OnceLock<(tracing::Dispatch, tracing::Dispatch)> = OnceLock::new();

/// Says every later line as a JSON log event (`log.format = "json"`).
pub fn log_as_json() {
    let _ = JSON.get_or_init(|| {
        (
            horst_telemetry::json_line_dispatch(true),
            horst_telemetry::json_line_dispatch(false),
        )
    });
}

/// True once [`log_as_json`] was called.
pub fn json() -> bool {
    JSON.get().is_some()
}

/// A line on stdout, or nothing if it cannot be written.
pub fn say(line: &str) {
    match JSON.get() {
        Some((out, _)) => event(out, line, tracing::Level::INFO),
        None => {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        }
    }
}

/// A line on stderr, or nothing if it cannot be written.
pub fn warn(line: &str) {
    match JSON.get() {
        Some((_, err)) => event(err, line, tracing::Level::ERROR),
        None => {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}

/// A line of the worker child's stdout, passed on as this process's, marked `worker: `: in
/// JSON a JSON event of the child's level and message, else the line as it is. Answers the
/// line's text (a JSON line's message).
pub fn relay(line: &str) -> String {
    let parsed = json()
        .then(|| serde_json::from_str::<serde_json::Value>(line).ok())
        .flatten();
    let Some(v) = parsed else {
        say(&format!("worker: {line}"));
        return line.to_string();
    };
    let text = v["message"].as_str().unwrap_or(line).to_string();
    let level = match v["level"].as_str() {
        Some("ERROR") => tracing::Level::ERROR,
        Some("WARN") => tracing::Level::WARN,
        _ => tracing::Level::INFO,
    };
    if let Some((out, _)) = JSON.get() {
        let marked = format!("worker: {text}");
        tracing::dispatcher::with_default(out, || match level {
            tracing::Level::ERROR => tracing::error!(target: "horst", "{marked}"),
            tracing::Level::WARN => tracing::warn!(target: "horst", "{marked}"),
            _ => tracing::info!(target: "horst", "{marked}"),
        });
    }
    text
}

/// `line` as one JSON event on `dispatch`: a `warning: ` line is a WARN whatever `level`.
fn event(dispatch: &tracing::Dispatch, line: &str, level: tracing::Level) {
    let text = line.strip_prefix("horst: ").unwrap_or(line);
    let (level, text) = match text.strip_prefix("warning: ") {
        Some(rest) => (tracing::Level::WARN, rest),
        None => (level, text),
    };
    tracing::dispatcher::with_default(dispatch, || match level {
        tracing::Level::ERROR => tracing::error!(target: "horst", "{text}"),
        tracing::Level::WARN => tracing::warn!(target: "horst", "{text}"),
        _ => tracing::info!(target: "horst", "{text}"),
    });
}

/// A line of the worker child's stderr (its log, a panic's message), passed on to this
/// process's stderr marked as the child's, so the operator of `horst up` can tell the
/// worker's errors from up's own: `worker: ` before a plain line; with `log.format = "json"`
/// a JSON log line of the child keeps every field and gains `"process":"worker"`, and a line
/// that is not one (a panic's) becomes a JSON event of its own at ERROR.
pub fn relay_err(line: &str) {
    match json().then(|| marked_json(line)).flatten() {
        Some(marked) => {
            let _ = writeln!(std::io::stderr().lock(), "{marked}");
        }
        None => warn(&format!("worker: {line}")),
    }
}

/// A JSON object's line with `"process":"worker"` first, its own text kept as it is (field
/// order, numbers); `None` if it is not an object, or names a `process` of its own.
fn marked_json(line: &str) -> Option<String> {
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).ok()?;
    if object.contains_key("process") {
        return None;
    }
    let inner = line.trim().strip_prefix('{')?.trim_start();
    let sep = if inner.starts_with('}') { "" } else { "," };
    Some(format!("{{\"process\":\"worker\"{sep}{inner}"))
}

#[cfg(test)]
mod tests {
    use super::marked_json;

    #[test]
    fn a_json_log_line_of_the_worker_is_marked_and_keeps_its_fields() {
        let line = r#"{"timestamp":"2026-12-07T23:00:00.000Z","level":"ERROR","message":"reap failed","job":"job_1"}"#;
        let marked = marked_json(line).unwrap();
        assert_eq!(
            marked,
            r#"{"process":"worker","timestamp":"2026-12-07T23:00:00.000Z","level":"ERROR","message":"reap failed","job":"job_1"}"#
        );
        let v: serde_json::Value = serde_json::from_str(&marked).unwrap();
        assert_eq!(v["process"], "worker");
        assert_eq!(v["job"], "job_1");
        assert_eq!(marked_json(" {} ").unwrap(), r#"{"process":"worker"}"#);
        // Not an object, or one that names its own process: relayed as text.
        assert_eq!(
            marked_json("thread 'main' panicked at src/main.rs:1:1"),
            None
        );
        assert_eq!(marked_json("[1, 2]"), None);
        assert_eq!(marked_json(r#"{"process":"x"}"#), None);
    }
}
