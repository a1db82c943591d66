//! Request tracing and HTTP metrics: one span and one log line per request, counted by
//! route template (never the raw path, which would explode label cardinality) and status.
//!
//! Every request has an id (`X-Request-Id`: the client's, if it is a plain token of at most
//! 64 characters, else a fresh one), answered in the same header, a field of the request's
//! span, and kept with any job the request admits, so the worker's logs of that job carry it
//! too (`horst_queue::with_request_id`).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use horst_telemetry::metrics::counter::Counter;
use horst_telemetry::metrics::family::Family;
use horst_telemetry::metrics::gauge::Gauge;
use horst_telemetry::metrics::histogram::Histogram;
use horst_telemetry::Metrics;
use tracing::Instrument;

use crate::AppState;

type Labels = Vec<(&'static str, String)>;

/// The request id's header, in requests and answers.
const REQUEST_ID: &str = "x-request-id";

#[derive(Clone)]
pub(crate) struct HttpMetrics {
    requests: Family<Labels, Counter>,
    duration: Family<Labels, Histogram>,
    ready: Gauge,
}

impl HttpMetrics {
    pub(crate) fn register(metrics: &Metrics) -> Self {
        let requests = Family::<Labels, Counter>::default();
        let duration = Family::<Labels, Histogram>::new_with_constructor(|| {
            Histogram::new(horst_telemetry::latency_buckets())
        });
        let ready = Gauge::default();
        metrics.register(
            "http_requests",
            "HTTP requests by method, route and status",
            requests.clone(),
        );
        metrics.register(
            "http_request_duration_seconds",
            "HTTP request latency by method and route",
            duration.clone(),
        );
        metrics.register("ready", "1 when /readyz answers 200", ready.clone());
        HttpMetrics {
            requests,
            duration,
            ready,
        }
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        self.ready.set(ready as i64);
    }
}

/// A fresh request id, `req_` and 16 hex digits, distinct within the process. Ids only
/// correlate logs: a process-unique value, without the OS random source's system call on
/// every request (about 1 % of the API's CPU under load, `perf`).
fn fresh_request_id() -> String {
    format!("req_{:016x}", horst_store::random::process_unique_u64())
}

pub(crate) async fn log_request(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|id| horst_queue::valid_request_id(id))
        .map(str::to_string)
        .unwrap_or_else(fresh_request_id);
    let span = tracing::info_span!("request", %method, route = %route, request_id = %request_id);
    let mut response = horst_queue::with_request_id(request_id.clone(), next.run(req))
        .instrument(span.clone())
        .await;
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    let elapsed = start.elapsed();
    let status = response.status().as_u16();
    span.in_scope(|| {
        if route == "/healthz" || route == "/readyz" || route == "/metrics" {
            tracing::debug!(status, ms = elapsed.as_secs_f64() * 1e3, "request");
        } else {
            tracing::info!(status, ms = elapsed.as_secs_f64() * 1e3, "request");
        }
    });
    let labels = vec![
        ("method", method.to_string()),
        ("route", route.clone()),
        ("status", status.to_string()),
    ];
    state.http.requests.get_or_create(&labels).inc();
    state
        .http
        .duration
        .get_or_create(&vec![("method", method.to_string()), ("route", route)])
        .observe(elapsed.as_secs_f64());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_request_ids_are_distinct_valid_and_of_one_length() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| fresh_request_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(100) {
            assert_eq!(id.len(), 20, "{id}");
            assert!(id.starts_with("req_"), "{id}");
            assert!(horst_queue::valid_request_id(id), "{id}");
        }
    }
}
