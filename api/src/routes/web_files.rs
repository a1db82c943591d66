//! The browser files (`web/`): the JS SDK, the bridge page, the house host's page and the
//! house games, served from
//! `server.web_dir` as they are.
//!
//! Paths are checked strictly (segments of `[A-Za-z0-9._-]`, none starting with `.`), so no
//! request can leave the directory. `/sdk/` and `/games/` send
//! `Access-Control-Allow-Origin: *`: games run in a sandboxed iframe with an opaque origin,
//! and their module scripts are CORS requests the browser refuses without it.

use std::path::PathBuf;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/sdk/{*path}", get(sdk))
        .route("/bridge", get(|| async { Redirect::permanent("/bridge/") }))
        .route("/bridge/", get(bridge_index))
        .route("/bridge/{*path}", get(bridge))
        // The house host's table page (`horst house` opens it in its own browser).
        .route("/house/", get(house_index))
        .route("/house/{*path}", get(house))
        .route("/games/vendor/chess.js", get(chess_js))
        .route("/games/vendor/chess.js.map", get(chess_js_map))
        .route("/games/{*path}", get(games))
}

/// The relative file for a URL path below a prefix, or `None` (answered 404). A path ending in
/// `/` means its `index.html`.
fn safe_relative(path: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut segments = path.split('/').peekable();
    while let Some(seg) = segments.next() {
        if seg.is_empty() && segments.peek().is_none() {
            out.push("index.html");
            break;
        }
        let ok = !seg.is_empty()
            && !seg.starts_with('.')
            && seg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !ok {
            return None;
        }
        out.push(seg);
    }
    Some(out)
}

fn content_type(path: &std::path::Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "js" | "mjs" => "text/javascript",
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "md" => "text/markdown; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

pub(crate) async fn send(state: &AppState, rel: Option<PathBuf>, cors: bool) -> Response {
    let Some(rel) = rel else {
        return not_found();
    };
    let path = PathBuf::from(&state.config.server.web_dir).join(&rel);
    match tokio::fs::read(&path).await {
        Ok(bytes) => {
            let mut r = (
                [
                    (header::CONTENT_TYPE, content_type(&rel)),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                bytes,
            )
                .into_response();
            if cors {
                r.headers_mut().insert(
                    header::ACCESS_CONTROL_ALLOW_ORIGIN,
                    header::HeaderValue::from_static("*"),
                );
            }
            r
        }
        Err(_) => not_found(),
    }
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(serde_json::json!({ "error": "no such file", "code": "not_found" })),
    )
        .into_response()
}

fn under(prefix: &str, path: &str) -> Option<PathBuf> {
    safe_relative(path).map(|p| PathBuf::from(prefix).join(p))
}

async fn sdk(State(state): State<AppState>, Path(path): Path<String>) -> Response {
    send(&state, under("sdk", &path), true).await
}

async fn bridge_index(State(state): State<AppState>) -> Response {
    send(&state, Some(PathBuf::from("bridge/index.html")), false).await
}

async fn bridge(State(state): State<AppState>, Path(path): Path<String>) -> Response {
    send(&state, under("bridge", &path), false).await
}

async fn house_index(State(state): State<AppState>) -> Response {
    send(&state, Some(PathBuf::from("house/index.html")), false).await
}

async fn house(State(state): State<AppState>, Path(path): Path<String>) -> Response {
    send(&state, under("house", &path), false).await
}

async fn games(State(state): State<AppState>, Path(path): Path<String>) -> Response {
    send(&state, under("games", &path), true).await
}

const CHESS_JS: &str = "node_modules/chess.js/dist/esm/chess.js";

async fn chess_js(State(state): State<AppState>) -> Response {
    send(&state, Some(PathBuf::from(CHESS_JS)), true).await
}

async fn chess_js_map(State(state): State<AppState>) -> Response {
    send(&state, Some(PathBuf::from(format!("{CHESS_JS}.map"))), true).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_segments_pass() {
        assert_eq!(
            safe_relative("rcadia-agent.js"),
            Some(PathBuf::from("rcadia-agent.js"))
        );
        assert_eq!(
            safe_relative("chess/"),
            Some(PathBuf::from("chess/index.html"))
        );
        assert_eq!(
            safe_relative("chess/game.js"),
            Some(PathBuf::from("chess/game.js"))
        );
        for bad in [
            "../x",
            "a/../b",
            ".env",
            "a//b",
            "a/.hidden",
            "a b",
            "a%2e",
            "x\\y",
        ] {
            assert_eq!(safe_relative(bad), None, "{bad}");
        }
    }
}
