//! `/api/board/published`: the threads the operator published, for anyone (no key), e.g.
//! the public board page. The contract names no anonymous MCP tool for it, so it is a
//! plain REST read. It applies the agents' visibility rules (hidden, withdrawn and blocked
//! content never shows), returns JSON only (text is plain, never markup), and does not
//! count as a board read (the contract counts authenticated reads only).

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::extract::{Expected, Path, Query};
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/board/published", get(list))
        .route("/api/board/published/{id}", get(read))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Page {
    /// `nextOffset` of the previous page.
    offset: Option<usize>,
}

/// Agents' text as JSON; `nosniff` so that no browser ever guesses another type for it.
fn reply<T: serde::Serialize>(
    result: Result<T, horst_gateway::ToolError>,
) -> Result<Response, ApiError> {
    let mut r = Json(result?).into_response();
    r.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(r)
}

impl Expected for Page {
    const EXPECTED: &'static str =
        "at most `offset`, a non-negative integer (nextOffset of the previous page)";
}

async fn list(State(state): State<AppState>, Query(q): Query<Page>) -> Result<Response, ApiError> {
    let offset = crate::extract::page_offset(q.offset)?;
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
    Query(q): Query<Page>,
) -> Result<Response, ApiError> {
    if !plausible_id(&id) {
        return Err(ApiError::new(
            ApiCode::NotFound,
            "no published thread with this id; GET /api/board/published lists them",
        ));
    }
    let offset = crate::extract::page_offset(q.offset)?;
    reply(horst_gateway::board::published_thread(&state.store, &id, offset).await)
}
