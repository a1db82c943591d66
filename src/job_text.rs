//! What `horst admin job show` and `job list` print for the operator: times as UTC RFC 3339
//! with their age, waits and run times in words. `--json` prints the rows as the REST admin
//! API answers them instead (times as Unix milliseconds), for scripts.

use horst_operator::jobs::JobRow;
use horst_queue::JobState;

/// A span of milliseconds in words, as precise as an operator reads it: `850 ms`, `4.2 s`,
/// `3 min 5 s`, `2 h 10 min`, `3 d 4 h`.
pub fn span(ms: u64) -> String {
    const S: u64 = 1000;
    const MIN: u64 = 60 * S;
    const H: u64 = 60 * MIN;
    const D: u64 = 24 * H;
    match ms {
        0..S => format!("{ms} ms"),
        // Tenths, truncated: 59,999 ms is "59.9 s", never "60.0 s".
        S..MIN => format!("{}.{} s", ms / S, ms % S / 100),
        MIN..H => format!("{} min {} s", ms / MIN, ms % MIN / S),
        H..D => format!("{} h {} min", ms / H, ms % H / MIN),
        _ => format!("{} d {} h", ms / D, ms % D / H),
    }
}

/// `at` as UTC RFC 3339 with how long before `now` it was (both server clock, ms).
pub fn moment(at: u64, now: u64) -> String {
    let text = horst_dates::rfc3339_ms(at);
    match now.checked_sub(at) {
        Some(ago) => format!("{text} ({} ago)", span(ago)),
        // A clock that stepped back: the time alone, with no age that could mislead.
        None => text,
    }
}

/// One job as `job show` prints it: a label and a value a line.
pub fn show(row: &JobRow, now: u64) -> String {
    let mut lines: Vec<(&str, String)> = vec![
        ("job", row.id.clone()),
        (
            "kind",
            format!("{} ({} lane)", row.kind.as_str(), row.lane.as_str()),
        ),
        ("account", format!("{} (trust {})", row.account, row.trust)),
        ("state", state_text(row)),
        ("admitted", moment(row.admitted_at_ms, now)),
    ];
    match row.started_at_ms {
        Some(started) => lines.push((
            "started",
            format!(
                "{}, after {} waiting",
                moment(started, now),
                span(row.wait_ms)
            ),
        )),
        None if row.state == JobState::Queued => {
            lines.push(("waiting", format!("{} so far", span(row.wait_ms))))
        }
        None => {}
    }
    if let Some(ended) = row.ended_at_ms {
        let ran = row
            .started_at_ms
            .map(|s| format!(", ran {}", span(ended.saturating_sub(s))))
            .unwrap_or_else(|| ", never started".into());
        lines.push(("ended", format!("{}{ran}", moment(ended, now))));
    } else if let Some(started) = row.started_at_ms {
        lines.push((
            "running",
            format!("{} so far", span(now.saturating_sub(started))),
        ));
    }
    if let Some(worker) = &row.worker {
        lines.push(("worker", worker.clone()));
    }
    if let Some(request) = &row.request_id {
        lines.push(("request", request.clone()));
    }
    lines.push((
        "seconds",
        format!(
            "{} reserved, {} charged",
            row.reserved_seconds, row.charged_seconds
        ),
    ));
    if let Some(p) = &row.progress {
        lines.push(("progress", progress_text(p)));
    }
    if let Some(outcome) = row.outcome {
        let reason = row
            .reason
            .as_deref()
            .map(|r| format!(" ({})", r.replace('_', " ")))
            .unwrap_or_default();
        lines.push(("outcome", format!("{}{reason}", outcome.as_str())));
    }
    if let Some(code) = row.code {
        let message = row
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        lines.push(("failure", format!("{code}{message}")));
    }
    let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    lines
        .iter()
        .map(|(k, v)| format!("{k:<width$}  {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The state, and while queued where the job stands (`waiting_for` names the jobs ahead).
fn state_text(row: &JobRow) -> String {
    let state = row.state.as_str();
    match (&row.waiting_for, row.ahead) {
        (Some(why), _) => format!("{state}: {why}"),
        (None, Some(0)) => format!("{state}: next"),
        (None, Some(n)) => format!("{state}: {n} ahead"),
        (None, None) => state.to_string(),
    }
}

fn progress_text(p: &horst_queue::JobProgress) -> String {
    let best = p
        .best_distance
        .map(|d| d.to_string())
        .unwrap_or_else(|| "?".into());
    let memory = p
        .peak_memory_mib
        .map(|m| format!(", peak memory {m} MiB"))
        .unwrap_or_default();
    format!(
        "{:.1} s, {} states, best distance {best}, stage {}{memory}",
        p.elapsed_seconds, p.states_explored, p.stage
    )
}

/// Jobs as `job list` prints them: a header, then one aligned line a job. No jobs, no lines.
pub fn table(rows: &[JobRow], now: u64) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let header = [
        "ID",
        "KIND",
        "ACCOUNT",
        "STATE",
        "ADMITTED (UTC)",
        "AGE",
        "WAIT",
        "RAN",
        "RESULT",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let ran = match (r.started_at_ms, r.ended_at_ms) {
            (Some(s), Some(e)) => span(e.saturating_sub(s)),
            (Some(s), None) => format!("{} so far", span(now.saturating_sub(s))),
            _ => "-".into(),
        };
        cells.push(vec![
            r.id.clone(),
            r.kind.as_str().into(),
            r.account.clone(),
            r.state.as_str().into(),
            horst_dates::rfc3339_ms(r.admitted_at_ms),
            now.checked_sub(r.admitted_at_ms)
                .map(span)
                .unwrap_or_else(|| "-".into()),
            span(r.wait_ms),
            ran,
            result_text(r),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            cells
                .iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    cells
        .iter()
        .map(|row| {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            line.join("  ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a job found or why it ended, or where a waiting one stands.
fn result_text(r: &JobRow) -> String {
    if let Some(code) = r.code {
        return code.to_string();
    }
    if let Some(outcome) = r.outcome {
        return match &r.reason {
            Some(reason) => format!("{} ({})", outcome.as_str(), reason.replace('_', " ")),
            None => outcome.as_str().into(),
        };
    }
    match r.ahead {
        Some(0) => "next".into(),
        Some(n) => format!("{n} ahead"),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_queue::{JobKind, Lane};

    fn row() -> JobRow {
        JobRow {
            id: "job_1".into(),
            kind: JobKind::Playtest,
            lane: Lane::Planner,
            account: "anna".into(),
            trust: 1,
            state: JobState::Succeeded,
            // 2026-12-07T20:00:00.000Z
            admitted_at_ms: 1_796_673_600_000,
            started_at_ms: Some(1_796_673_601_200),
            ended_at_ms: Some(1_796_673_605_700),
            wait_ms: 1_200,
            ahead: None,
            waiting_for: None,
            worker: Some("box-42-a1b2c3-0".into()),
            request_id: None,
            reserved_seconds: 20,
            charged_seconds: 5,
            progress: None,
            outcome: Some(horst_queue::Outcome::Unresolved),
            reason: Some("time_limit".into()),
            code: None,
            message: None,
        }
    }

    #[test]
    fn spans_are_said_in_words() {
        let said: Vec<String> = [
            0,
            850,
            1_000,
            4_250,
            59_999,
            60_000,
            185_000,
            3_600_000,
            7_800_000,
            86_400_000,
            273_600_000,
        ]
        .into_iter()
        .map(span)
        .collect();
        assert_eq!(
            said,
            [
                "0 ms",
                "850 ms",
                "1.0 s",
                "4.2 s",
                "59.9 s",
                "1 min 0 s",
                "3 min 5 s",
                "1 h 0 min",
                "2 h 10 min",
                "1 d 0 h",
                "3 d 4 h"
            ]
        );
    }

    #[test]
    fn a_job_shows_its_times_in_utc_with_their_age() {
        let now = 1_796_673_600_000 + 185_000;
        let text = show(&row(), now);
        assert!(
            text.contains("admitted  2026-12-07T20:00:00.000Z (3 min 5 s ago)"),
            "{text}"
        );
        assert!(
            text.contains(
                "started   2026-12-07T20:00:01.200Z (3 min 3 s ago), after 1.2 s waiting"
            ),
            "{text}"
        );
        assert!(
            text.contains("ended     2026-12-07T20:00:05.700Z (2 min 59 s ago), ran 4.5 s"),
            "{text}"
        );
        assert!(text.contains("outcome   unresolved (time limit)"), "{text}");
        assert!(!text.contains("1796673600000"), "{text}");
    }

    #[test]
    fn a_waiting_job_says_where_it_stands_and_a_clock_behind_gives_no_age() {
        let mut r = row();
        r.state = JobState::Queued;
        (
            r.started_at_ms,
            r.ended_at_ms,
            r.worker,
            r.outcome,
            r.reason,
        ) = (None, None, None, None, None);
        r.ahead = Some(2);
        r.waiting_for = Some("2 waiting job(s) come before it in turn".into());
        r.wait_ms = 5_000;
        let text = show(&r, r.admitted_at_ms - 10);
        assert!(
            text.contains("state     queued: 2 waiting job(s) come before it in turn"),
            "{text}"
        );
        assert!(text.contains("waiting   5.0 s so far"), "{text}");
        assert!(
            text.contains("admitted  2026-12-07T20:00:00.000Z\n"),
            "{text}"
        );
    }

    #[test]
    fn the_list_is_a_table_with_a_header_and_nothing_when_empty() {
        let now = 1_796_673_600_000 + 185_000;
        let mut failed = row();
        failed.id = "job_22".into();
        failed.code = Some(horst_queue::FailureCode::Cancelled);
        let text = table(&[row(), failed], now);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("ID      KIND"), "{text}");
        assert!(
            lines[1].starts_with("job_1   playtest  anna     succeeded  2026-12-07T20:00:00.000Z  3 min 5 s  1.2 s  4.5 s  unresolved (time limit)"),
            "{text}"
        );
        assert!(lines[2].ends_with("cancelled"), "{text}");
        assert_eq!(table(&[], now), "");
    }
}
