//! Operational endpoints: liveness, readiness and metrics. They need no authentication and
//! reveal nothing secret (readiness reasons name the Redis target without credentials).

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use horst_store::HealthState;
use serde::Serialize;

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
    Json(Readiness {
        status: "ok",
        writes: None,
        reason: None,
    })
}

/// What `/healthz` and `/readyz` answer.
#[derive(Serialize)]
struct Readiness {
    status: &'static str,
    /// `"refused"` while Redis refuses this process's writes (the process stays ready).
    #[serde(skip_serializing_if = "Option::is_none")]
    writes: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Redis is reachable and the start-up checks passed; 503 with the reason otherwise. While
/// Redis refuses writes (out of memory, a failing disk) the process stays ready: reads and
/// anonymous tools work, and every process is alike, so leaving the load balancer would help
/// nobody; the answer says it in `writes` (and the metric `horst_redis_writes_refused`).
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let (status, answer) = match state.health.state() {
        HealthState::Ready => {
            let refused = state.store.writes_refused();
            (
                StatusCode::OK,
                Readiness {
                    status: "ready",
                    writes: refused.as_ref().map(|_| "refused"),
                    reason: refused,
                },
            )
        }
        HealthState::NotReady(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Readiness {
                status: "not_ready",
                writes: None,
                reason: Some(reason),
            },
        ),
    };
    (status, Json(answer))
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    state
        .http
        .set_ready(state.health.state() == HealthState::Ready);
    state
        .http
        .set_writes_refused(state.store.writes_refused().is_some());
    state
        .http
        .set_replica(state.store.replica_primary().is_some());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}
