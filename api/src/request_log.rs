//! Request tracing and HTTP metrics: one span and one log line per request, counted by
//! route template (never the raw path, which would explode label cardinality) and status.
//!
//! Every request has an id (`X-Request-Id`: the client's, if it is a plain token of at most
//! 64 characters, else a fresh one), answered in the same header, a field of the request's
//! span, and kept with any job the request admits, so the worker's logs of that job carry it
//! too (`horst_queue::with_request_id`).

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{OnceLock, RwLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use horst_store::fast_hash::{FastKeys, FastSet};
use horst_telemetry::encoding::{EncodeLabelSet, LabelSetEncoder};
use horst_telemetry::metrics::counter::Counter;
use horst_telemetry::metrics::family::Family;
use horst_telemetry::metrics::gauge::Gauge;
use horst_telemetry::metrics::histogram::Histogram;
use horst_telemetry::Metrics;
use tracing::Instrument;

use crate::AppState;

/// The labels of a request's count. Every value is a fixed string or a number, so counting a
/// request allocates nothing (the labels were five `String`s a request, about 1 % of the API's
/// CPU under load).
#[derive(Clone, Debug, PartialEq, Eq)]
struct RequestLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

/// The method and route as one word for the metric families' maps (std's SipHash, which the
/// families keep): SipHash over one word instead of over every byte of the route, twice a
/// request. A function of the labels' text, so equal labels hash equal.
fn labels_word(method: &str, route: &str) -> u64 {
    FastKeys::default().hash_one((method, route))
}

impl Hash for RequestLabels {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(labels_word(self.method, self.route) ^ u64::from(self.status));
    }
}

impl EncodeLabelSet for RequestLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> std::fmt::Result {
        [("method", self.method), ("route", self.route)].encode(encoder)?;
        [("status", self.status)].encode(encoder)
    }
}

/// The labels of a request's latency.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RouteLabels {
    method: &'static str,
    route: &'static str,
}

impl Hash for RouteLabels {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(labels_word(self.method, self.route));
    }
}

impl EncodeLabelSet for RouteLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> std::fmt::Result {
        [("method", self.method), ("route", self.route)].encode(encoder)
    }
}

/// A method as a label: the standard ones by name, any other as `other`, so a client sending
/// made-up methods cannot grow the metrics without bound.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// A route template as a `'static` label. The templates are the router's, a fixed set, so
/// each is copied and leaked once per process and looked up after that.
fn route_label(route: Option<&MatchedPath>) -> &'static str {
    // The fast hasher: the set holds the router's templates only (a request's path is
    // never a key, only the template it matched).
    static ROUTES: OnceLock<RwLock<FastSet<&'static str>>> = OnceLock::new();
    let Some(route) = route.map(MatchedPath::as_str) else {
        return "unmatched";
    };
    let routes = ROUTES.get_or_init(Default::default);
    if let Some(known) = routes.read().ok().and_then(|r| r.get(route).copied()) {
        return known;
    }
    let Ok(mut routes) = routes.write() else {
        return "unmatched";
    };
    if let Some(known) = routes.get(route).copied() {
        return known;
    }
    let interned: &'static str = Box::leak(route.to_owned().into_boxed_str());
    routes.insert(interned);
    interned
}

/// The request id's header, in requests and answers.
const REQUEST_ID: &str = "x-request-id";

#[derive(Clone)]
pub(crate) struct HttpMetrics {
    requests: Family<RequestLabels, Counter>,
    duration: Family<RouteLabels, Histogram>,
    ready: Gauge,
    writes_refused: Gauge,
    replica: Gauge,
}

impl HttpMetrics {
    pub(crate) fn register(metrics: &Metrics) -> Self {
        let requests = Family::<RequestLabels, Counter>::default();
        let duration = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
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
        let writes_refused = Gauge::default();
        metrics.register(
            "redis_writes_refused",
            "1 while Redis refuses this process's writes (out of memory, a failing disk, a replica)",
            writes_refused.clone(),
        );
        let replica = Gauge::default();
        metrics.register(
            "redis_replica",
            "1 while the one Redis of redis.url is a replica (REPLICAOF, a failover without sentinels configured): every write is refused until redis.url names the primary",
            replica.clone(),
        );
        HttpMetrics {
            requests,
            duration,
            ready,
            writes_refused,
            replica,
        }
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        self.ready.set(ready as i64);
    }

    pub(crate) fn set_writes_refused(&self, refused: bool) {
        self.writes_refused.set(refused as i64);
    }

    pub(crate) fn set_replica(&self, replica: bool) {
        self.replica.set(replica as i64);
    }
}

/// A fresh request id, `req_` and 16 hex digits, distinct within the process. Ids only
/// correlate logs: a process-unique value, without the OS random source's system call on
/// every request (about 1 % of the API's CPU under load, `perf`).
fn fresh_request_id() -> String {
    // Written digit by digit: `format!` set up a formatter for every request.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let v = horst_store::random::process_unique_u64();
    let mut id = String::with_capacity(20);
    id.push_str("req_");
    for shift in (0..16).rev() {
        id.push(char::from(HEX[((v >> (shift * 4)) & 0xf) as usize]));
    }
    id
}

pub(crate) async fn log_request(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let method = if req
        .extensions()
        .get::<crate::methods::AskedHead>()
        .is_some()
    {
        "HEAD"
    } else {
        method_label(req.method())
    };
    let route = route_label(req.extensions().get::<MatchedPath>());
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|id| horst_queue::valid_request_id(id))
        .map(str::to_string)
        .unwrap_or_else(fresh_request_id);
    // The security headers are this layer's too: a second layer around every route cost
    // every request its own boxed future and service copies.
    let asked = crate::security_headers::Asked::of(&state, &req);
    let span = tracing::info_span!("request", %method, route = %route, request_id = %request_id);
    let mut response = horst_queue::with_request_id(request_id.clone(), next.run(req))
        .instrument(span.clone())
        .await;
    asked.answer(&mut response);
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
    let labels = RequestLabels {
        method,
        route,
        status,
    };
    state.http.requests.get_or_create(&labels).inc();
    state
        .http
        .duration
        .get_or_create(&RouteLabels { method, route })
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
            assert!(
                id[4..]
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{id}"
            );
        }
    }
}
