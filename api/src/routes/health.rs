//! Operational endpoints: liveness, readiness and metrics. They need no authentication and
//! reveal nothing secret (readiness reasons name the Redis target without credentials).

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use horst_store::HealthState;
use serde_json::json;

use crate::AppState;

pub fn router() -> Router<AppState> {
    probes_router().route("/metrics", get(metrics))
}

/// Only the probes: the API's router when `/metrics` has its own address.
pub fn probes_router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// The process is alive and serving HTTP.
async fn healthz() -> impl IntoResponse {
    Json(json!({ "status": "ok" }))
}

/// Redis is reachable and the start-up checks passed; 503 with the reason otherwise. While
/// Redis refuses writes (out of memory, a failing disk) the process stays ready: reads and
/// anonymous tools work, and every process is alike, so leaving the load balancer would help
/// nobody; the answer says it in `writes` (and the metric `horst_redis_writes_refused`).
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.health.state() {
        HealthState::Ready => match state.store.writes_refused() {
            None => (StatusCode::OK, Json(json!({ "status": "ready" }))),
            Some(reason) => (
                StatusCode::OK,
                Json(json!({ "status": "ready", "writes": "refused", "reason": reason })),
            ),
        },
        HealthState::NotReady(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "not_ready", "reason": reason })),
        ),
    }
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    state
        .http
        .set_ready(state.health.state() == HealthState::Ready);
    state
        .http
        .set_writes_refused(state.store.writes_refused().is_some());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}
