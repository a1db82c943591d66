//! The game pages and their public JSON reads (no key; documented in `docs/game.md`):
//!
//! - `/` the game (levels, Labor tab, play, watch), `/level/<revisionId>` a shareable level
//!   page, `/board.html` the operator's published board threads; each HTML view is counted
//!   (`horst_gateway::page_views`, no identities). `/game/...` are their modules, styles and
//!   the engine's WebAssembly module (`application/wasm`), from `web/game/`.
//! - `GET /api/game/levels`: the promoted levels, shipped ones first in their order.
//! - `GET /api/game/labor?offset=N`: Labor-Karten, newest first, 25 a page (`list_labor`).
//! - `GET /api/game/revisions/{revisionId}`: one revision with map, replay and evidence.
//! - `GET /api/game/maps/{revisionId}`: only its map and seed (a level card's thumbnail).
//!
//! A hidden revision (quarantined, withdrawn, or of a blocked account) answers exactly like
//! an unknown one: 404, for the JSON read and for its share link `/level/<id>`, whose page
//! then says so. A malformed id is a 400 (the page says what an id looks like).

use std::path::PathBuf;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use horst_gateway::page_views::{self, Page};
use horst_gateway::public_levels::{self, Card};
use horst_gateway::ErrorCode;

use super::web_files::{send, under, FilePath};
use crate::extract::{Expected, Path, Query};
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(game_page))
        .route("/index.html", get(|| async { Redirect::permanent("/") }))
        .route("/level/{id}", get(level_page))
        .route("/board.html", get(board_page))
        // The contract names /board/board.html; the page lives at /board.html.
        .route(
            "/board",
            get(|| async { Redirect::permanent("/board.html") }),
        )
        .route(
            "/board/",
            get(|| async { Redirect::permanent("/board.html") }),
        )
        .route(
            "/board/board.html",
            get(|| async { Redirect::permanent("/board.html") }),
        )
        .route("/game/{*path}", get(game_file))
        .route("/api/game/levels", get(levels))
        .route("/api/game/labor", get(labor))
        .route("/api/game/revisions/{id}", get(revision))
        .route("/api/game/maps/{id}", get(map))
}

async fn counted(state: &AppState, page: Page) {
    if let Err(e) = page_views::count(&state.store, page).await {
        tracing::warn!(page = page.key(), error = %e.message, "page view not counted");
    }
}

async fn game_page(State(state): State<AppState>, req: Request) -> Response {
    counted(&state, Page::Game).await;
    send(&state, Some(PathBuf::from("index.html")), false, req).await
}

async fn board_page(State(state): State<AppState>, req: Request) -> Response {
    counted(&state, Page::Board).await;
    send(&state, Some(PathBuf::from("board.html")), false, req).await
}

async fn game_file(
    State(state): State<AppState>,
    FilePath(path): FilePath,
    req: Request,
) -> Response {
    send(&state, path.and_then(|p| under("game", &p)), false, req).await
}

/// The level page, with the status its revision deserves: 200 for a visible revision, 404
/// for an unknown or hidden one, 400 for a malformed id, 503 with `Retry-After` while the
/// store cannot be reached. The page itself reads the revision and says what is wrong
/// ("Gerade nicht erreichbar" for the 503), so a shared link never shows a blank page or
/// the API's JSON.
async fn level_page(
    State(state): State<AppState>,
    FilePath(id): FilePath,
    mut req: Request,
) -> Response {
    counted(&state, Page::Level).await;
    let mut retry_after = None;
    // An id that does not decode (`%FF`) is malformed too: the page, never the API's JSON.
    let id = id.unwrap_or_default();
    let status = if !public_levels::well_formed_id(&id) {
        StatusCode::BAD_REQUEST
    } else {
        match public_levels::revision(&state.store, &id, None).await {
            Ok(_) => StatusCode::OK,
            Err(e) if e.code == ErrorCode::NotFound => StatusCode::NOT_FOUND,
            // An unreachable store (the gateway logged it): the page, answered as the API
            // answers it, 503 with Retry-After.
            Err(e) if e.code == ErrorCode::EngineUnavailable => {
                let answer = ApiError::from(e).into_response();
                retry_after = answer.headers().get(header::RETRY_AFTER).cloned();
                answer.status()
            }
            Err(e) => {
                return ApiError::internal(format!("level page: {}", e.message)).into_response()
            }
        }
    };
    if status != StatusCode::OK {
        // An error page is never a 304 of the real one.
        for h in [header::IF_NONE_MATCH, header::IF_MODIFIED_SINCE] {
            req.headers_mut().remove(h);
        }
    }
    let mut r = send(&state, Some(PathBuf::from("level/index.html")), false, req).await;
    if r.status() == StatusCode::OK {
        *r.status_mut() = status;
        if let Some(v) = retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
    r
}

/// JSON of agents' text: never let a browser guess another type for it.
fn json_reply<T: Serialize>(v: &T) -> Response {
    let mut r = Json(v).into_response();
    r.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Levels {
    /// The engine this server's referee runs (the page compares its module's).
    engine_version: &'static str,
    items: Vec<Card>,
}

async fn levels(State(state): State<AppState>) -> Result<Response, ApiError> {
    let items = public_levels::promoted(&state.store).await?;
    Ok(json_reply(&Levels {
        engine_version: horst_engine::engine_version(),
        items,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PageQuery {
    offset: Option<usize>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Labor {
    engine_version: &'static str,
    items: Vec<Card>,
    next_offset: Option<usize>,
}

impl Expected for PageQuery {
    const EXPECTED: &'static str =
        "at most `offset`, a non-negative integer (nextOffset of the previous page)";
}

async fn labor(
    State(state): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Response, ApiError> {
    let (items, next_offset) =
        public_levels::labor(&state.store, crate::extract::page_offset(q.offset)?).await?;
    Ok(json_reply(&Labor {
        engine_version: horst_engine::engine_version(),
        items,
        next_offset,
    }))
}

async fn revision(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(json_reply(&visible(&state, &id).await?))
}

/// What a card's thumbnail needs: the map and its seed, not the replay.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MapOnly {
    revision_id: String,
    map: String,
    seed: Option<u64>,
}

async fn map(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let r = visible(&state, &id).await?;
    Ok(json_reply(&MapOnly {
        revision_id: r.card.revision_id,
        map: r.map,
        seed: r.card.seed,
    }))
}

/// A visible revision, or the API's 400 for a malformed id and 404 for a hidden one.
async fn visible(state: &AppState, id: &str) -> Result<public_levels::Revision, ApiError> {
    if !public_levels::well_formed_id(id) {
        return Err(ApiError::new(
            ApiCode::InvalidInput,
            "a revision id is 1-64 letters, digits, dots, underscores or hyphens (e.g. rev-erste-schritte-1a2b3c4d5e6f); GET /api/game/levels and /api/game/labor list them",
        ));
    }
    match public_levels::revision(&state.store, id, None).await {
        Ok(r) => Ok(r),
        Err(e) if e.code == ErrorCode::NotFound => Err(ApiError::new(
            ApiCode::NotFound,
            format!("no visible revision {id}: it does not exist, or it was withdrawn or hidden; GET /api/game/levels and /api/game/labor list the visible ones"),
        )),
        Err(e) => Err(e.into()),
    }
}
