//! What an operator's Prometheus sees of a fresh process: every family the metrics table of
//! docs/operators.md names, with its labels, from the first scrape on, so `increase()` and
//! `rate()` see the first event (a labelled family used to appear only with its first
//! sample, at 1, which they do not count as a rise).

use std::time::Duration;

use crate::harness::HorstProcess;

/// One row of the table: the metric, its type and its label names.
struct Row {
    name: String,
    kind: String,
    labels: Vec<String>,
}

fn documented_metrics() -> Vec<Row> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operators.md")).unwrap();
    let section = doc
        .split("\n## Metrics and logs")
        .nth(1)
        .expect("docs/operators.md has a \"Metrics and logs\" section");
    let section = section.split("\n## ").next().unwrap();
    let rows: Vec<Row> = section
        .lines()
        .filter(|l| l.starts_with("| `horst_"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let ticked = |s: &str| -> Vec<String> {
                s.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_string)
                    .collect()
            };
            Row {
                name: ticked(cells[1]).remove(0),
                kind: cells[2].to_string(),
                labels: ticked(cells[3]),
            }
        })
        .collect();
    assert!(rows.len() > 30, "the metrics table was not found");
    rows
}

/// The sample names a row's family shows (a counter's with `_total`, a histogram's count).
fn sample_name(row: &Row) -> String {
    match row.kind.as_str() {
        "counter" if row.name.ends_with("_total") => row.name.clone(),
        "counter" => format!("{}_total", row.name),
        "histogram" => format!("{}_count", row.name),
        _ => row.name.clone(),
    }
}

/// The rows `text` lacks a sample of, or a sample with each of their labels.
fn missing(rows: &[Row], text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for row in rows {
        let name = sample_name(row);
        let samples: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
            })
            .collect();
        if samples.is_empty() {
            out.push(name);
            continue;
        }
        for label in &row.labels {
            if !samples.iter().any(|s| s.contains(&format!("{label}=\""))) {
                out.push(format!("{name}{{{label}}}"));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_up_lists_every_documented_metric_from_its_first_scrape() {
    let rows = documented_metrics();
    let dir = tempfile::tempdir().unwrap();
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        &[],
        dir.path(),
    );
    let addr = up.wait_listening();
    up.wait_for_line("worker: horst: metrics on", Duration::from_secs(60));
    let http = reqwest::Client::new();
    let scrape = async || {
        http.get(format!("http://{addr}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    // The HTTP families are labelled by route and status, from the traffic: they appear
    // with the first request (this scrape counts itself), as the docs say.
    let traffic = |r: &&Row| r.name.starts_with("horst_http_");
    let first = scrape().await;
    let (http_rows, rest): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| traffic(&r));
    let lacking = missing(&rest, &first);
    assert!(
        lacking.is_empty(),
        "a fresh up's /metrics lacks {lacking:?}:\n{first}"
    );
    // Nothing has happened yet: every documented labelled counter is listed at zero.
    assert!(
        first.contains("horst_sessions_finished_total{reason=\"host_disconnected\"} 0\n"),
        "{first}"
    );
    let second = scrape().await;
    let lacking = missing(&http_rows, &second);
    assert!(lacking.is_empty(), "the second scrape lacks {lacking:?}");
    // And the other way: every family the process exports is a row of the table, so an
    // operator who finds a metric on /metrics finds what it means.
    let documented: Vec<&str> = rest
        .iter()
        .chain(&http_rows)
        .map(|r| r.name.as_str())
        .collect();
    let undocumented: Vec<&str> = second
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|family| {
            // The text format names a counter's family without its `_total`.
            !documented.contains(family)
                && !documented.contains(&format!("{family}_total").as_str())
        })
        .collect();
    assert!(
        undocumented.is_empty(),
        "/metrics exports families the table of docs/operators.md does not list: {undocumented:?}"
    );
    up.signal(libc::SIGTERM);
    assert!(up.wait_exit(Duration::from_secs(60)).is_some());
}
