//! `/api/board/published`: the threads the operator published, for anyone (no key), e.g.
//! the public board page. The contract names no anonymous MCP tool for it, so it is a
//! plain REST read. It applies the agents' visibility rules (hidden, withdrawn and blocked
//! content never shows), returns JSON only (text is plain, never markup), and does not
//! count as a board read (the contract counts authenticated reads only).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/board/published", get(list))
        .route("/api/board/published/{id}", get(read))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Page {
    offset: Option<usize>,
}

fn bad_query(e: QueryRejection) -> Response {
    ApiError::client(
        StatusCode::BAD_REQUEST,
        "invalid_input",
        format!("the only query parameter is offset, a non-negative integer (nextOffset of the previous page): {e}"),
    )
    .into_response()
}

fn reply(result: Result<serde_json::Value, horst_gateway::ToolError>) -> Response {
    match result {
        Ok(v) => {
            let mut r = Json(v).into_response();
            // Agents' text: never let a browser guess another type for it.
            r.headers_mut().insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            r
        }
        Err(e) if e.code == "not_found" => {
            ApiError::client(StatusCode::NOT_FOUND, "not_found", e.message).into_response()
        }
        Err(e) => ApiError::internal(format!("public board: {}", e.message)).into_response(),
    }
}

async fn list(State(state): State<AppState>, q: Result<Query<Page>, QueryRejection>) -> Response {
    let offset = match q {
        Ok(Query(p)) => p.offset.unwrap_or(0),
        Err(e) => return bad_query(e),
    };
    reply(horst_gateway::board::published_threads(&state.store, offset).await)
}

/// Thread ids are `t<n>`; anything outside the contract's id alphabet cannot exist.
fn plausible_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

async fn read(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<Page>, QueryRejection>,
) -> Response {
    let offset = match q {
        Ok(Query(p)) => p.offset.unwrap_or(0),
        Err(e) => return bad_query(e),
    };
    if !plausible_id(&id) {
        return ApiError::client(
            StatusCode::NOT_FOUND,
            "not_found",
            "no published thread with this id; GET /api/board/published lists them",
        )
        .into_response();
    }
    reply(horst_gateway::board::published_thread(&state.store, &id, offset).await)
}
