//! The browser files (`web/`): the JS SDK, the bridge page, the house host's page and the
//! house games (the game pages are in `game.rs`), served from `server.web_dir` as they are,
//! by tower-http's file service: `ETag` and `Last-Modified`, answered `304` on a match, and
//! `Cache-Control: no-cache`, so a browser revalidates each time and reloads only what changed.
//!
//! Paths are checked strictly (segments of `[A-Za-z0-9._-]`, none starting with `.`) before
//! anything touches the file system, so no request can leave the directory, and a path that
//! passes through a symbolic link is refused (a 404), so no link can lead out of it either. `/sdk/` and
//! `/games/` send
//! `Access-Control-Allow-Origin: *`: games run in a sandboxed iframe with an opaque origin,
//! and their module scripts are CORS requests the browser refuses without it.

use std::path::PathBuf;

use axum::extract::{FromRequestParts, Request, State};
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
        // The house's tables for people; the page `horst house` opens per table is
        // /house/table.html (in its own browser).
        .route("/house", get(|| async { Redirect::permanent("/house/") }))
        .route("/house/", get(house_index))
        .route("/house/{*path}", get(house))
        // Pages for people: the open and running tables, and one game live.
        .route("/tables", get(|| async { Redirect::permanent("/tables/") }))
        .route("/tables/", get(tables_index))
        .route("/watch/{id}", get(watch))
        .route("/pages/{*path}", get(pages))
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
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

/// Serves `rel` below `server.web_dir` (a 404 without it) with tower-http's `ServeFile`.
pub(crate) async fn send(
    state: &AppState,
    rel: Option<PathBuf>,
    cors: bool,
    req: Request,
) -> Response {
    use tower::ServiceExt;
    let Some(rel) = rel else {
        return not_found();
    };
    let root = PathBuf::from(&state.config.server.web_dir);
    if !inside_without_links(&root, &rel).await {
        return not_found();
    }
    let path = root.join(&rel);
    let mime = header::HeaderValue::from_static(content_type(&rel));
    // The file service answers GET and HEAD (the routes pass only those); its guessed type
    // is replaced by ours below.
    let served = tower_http::services::ServeFile::new(&path)
        .oneshot(req)
        .await;
    let Ok(r) = served;
    if r.status() == StatusCode::NOT_FOUND {
        return not_found();
    }
    let mut r = r.map(axum::body::Body::new);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, mime);
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    if cors {
        h.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            header::HeaderValue::from_static("*"),
        );
    }
    r
}

/// Whether `rel` names a regular file below `root` reached through no symbolic link (each
/// component is checked without following it): a link in `web_dir`, planted or left over,
/// never serves a file from outside it.
async fn inside_without_links(root: &std::path::Path, rel: &std::path::Path) -> bool {
    let mut at = root.to_path_buf();
    let mut components = rel.components().peekable();
    while let Some(c) = components.next() {
        let std::path::Component::Normal(part) = c else {
            return false;
        };
        at.push(part);
        match tokio::fs::symlink_metadata(&at).await {
            Ok(m) if m.file_type().is_symlink() => {
                tracing::warn!(path = %at.display(), "refused a symbolic link under server.web_dir");
                return false;
            }
            Ok(m) if components.peek().is_none() => return m.is_file(),
            Ok(m) if m.is_dir() => {}
            _ => return false,
        }
    }
    false
}

pub(crate) fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(serde_json::json!({
            "error": "no such file here; check the address (docs/hosts.md names the SDK's and the pages' files)",
            "code": "not_found"
        })),
    )
        .into_response()
}

pub(crate) fn under(prefix: &str, path: &str) -> Option<PathBuf> {
    safe_relative(path).map(|p| PathBuf::from(prefix).join(p))
}

/// The rest of a file's path; `None` when it does not decode (invalid percent-encoding or
/// UTF-8): no file has such a name, so it is answered as one that does not exist (axum's
/// rejection was a plain-text 400).
pub(crate) struct FilePath(pub(crate) Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for FilePath {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(FilePath(
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .ok()
                .map(|axum::extract::Path(p)| p),
        ))
    }
}

async fn sdk(State(state): State<AppState>, FilePath(path): FilePath, req: Request) -> Response {
    send(&state, path.and_then(|p| under("sdk", &p)), true, req).await
}

async fn bridge_index(State(state): State<AppState>, req: Request) -> Response {
    send(&state, Some(PathBuf::from("bridge/index.html")), false, req).await
}

async fn bridge(State(state): State<AppState>, FilePath(path): FilePath, req: Request) -> Response {
    send(&state, path.and_then(|p| under("bridge", &p)), false, req).await
}

async fn house_index(State(state): State<AppState>, req: Request) -> Response {
    send(&state, Some(PathBuf::from("house/index.html")), false, req).await
}

async fn house(State(state): State<AppState>, FilePath(path): FilePath, req: Request) -> Response {
    send(&state, path.and_then(|p| under("house", &p)), false, req).await
}

async fn games(State(state): State<AppState>, FilePath(path): FilePath, req: Request) -> Response {
    let rel = path.as_deref().and_then(|p| under("games", p));
    let page = rel
        .as_ref()
        .is_none_or(|r| r.extension().is_some_and(|e| e == "html"));
    let r = send(&state, rel, true, req).await;
    if r.status() == StatusCode::NOT_FOUND && page {
        // A person (or a host's game frame) asked for a page: say so in words.
        return html_not_found(&format!("/games/{}", path.unwrap_or_default()));
    }
    r
}

async fn tables_index(State(state): State<AppState>, req: Request) -> Response {
    send(&state, Some(PathBuf::from("pages/tables.html")), false, req).await
}

/// `/watch/<sessionId>`: one page for every session; it reads the id from its URL.
async fn watch(State(state): State<AppState>, req: Request) -> Response {
    send(&state, Some(PathBuf::from("pages/watch.html")), false, req).await
}

async fn pages(State(state): State<AppState>, FilePath(path): FilePath, req: Request) -> Response {
    send(&state, path.and_then(|p| under("pages", &p)), false, req).await
}

/// A readable 404 page for a game page that does not exist (the bridge shows it in its game
/// frame), instead of the JSON answer scripts get; it wears RCADIA's shared stylesheet.
fn html_not_found(path: &str) -> Response {
    let shown: String = path
        .chars()
        .take(200)
        .map(|c| match c {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            c => c.to_string(),
        })
        .collect();
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>No such game</title><link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/pages/rcadia.css\"></head><body class=\"game-page\"><main><h1>No game at this address</h1><p>This server has no page at <code>{shown}</code>.</p><p>House games: <code>/games/chess/</code> and <code>/games/rps/</code>. A game of your own must be a page that loads the RCADIA SDK (<code>/sdk/rcadia-agent.js</code>).</p></main></body></html>"
    );
    (
        StatusCode::NOT_FOUND,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

const CHESS_JS: &str = "node_modules/chess.js/dist/esm/chess.js";
/// The engine module ops/build-wasm builds (not in git): the game pages and the agent
/// gateway's player app (`ui://gcv/player`) load it.
const ENGINE_WASM: &str = "game/engine.wasm";

/// Files of `server.web_dir` the pages cannot do without, relative to it.
const REQUIRED_FILES: [&str; 6] = [
    "sdk/rcadia-agent.js",
    "bridge/index.html",
    "house/index.html",
    "games/chess/index.html",
    // The agent gateway's player app (ui://gcv/player): without it resources/read of the
    // app answers an internal error.
    "mcp-app/player.html",
    CHESS_JS,
];

/// What is missing from the web directory, each as a sentence that says what to run; empty
/// when all is there. `horst up` and `horst api` print these at start (the API works without
/// them, but `/bridge/`, `/sdk/`, `/games/`, the house games' `skill.md`, the game pages and
/// the gateway's player app `ui://gcv/player` (without the engine module) do not).
pub fn check_web_dir(dir: &std::path::Path) -> Vec<String> {
    let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !dir.is_dir() {
        return vec![format!(
            "server.web_dir {} is not a directory: the game pages, /bridge/, /sdk/, /games/ and skill.md will answer 404, and the agent gateway's player app (ui://gcv/player) answers its resources/read with an internal error; set server.web_dir (HORST_SERVER_WEB_DIR) to horst's web/ directory (ops/README.md installs it to /usr/local/share/horst/web, the path ops/horst.toml names)",
            shown.display()
        )];
    }
    let missing: Vec<&str> = REQUIRED_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    let mut out = Vec::new();
    if missing.contains(&CHESS_JS) {
        out.push(format!(
            "{} is missing (chess.js, from npm): house chess cannot load; run `npm ci --prefix {}` (./ops/run does it for you)",
            shown.join(CHESS_JS).display(),
            shown.display()
        ));
    }
    if !dir.join(ENGINE_WASM).is_file() {
        out.push(format!(
            "{} is missing (the engine module, built by ops/build-wasm, not kept in git): the game pages cannot load and the agent gateway's player app (ui://gcv/player) answers its resources/read with an internal error; run ./ops/build-wasm in the checkout the binary was built from (./ops/run does it for you)",
            shown.join(ENGINE_WASM).display()
        ));
    }
    let own: Vec<&str> = missing.into_iter().filter(|f| *f != CHESS_JS).collect();
    if !own.is_empty() {
        out.push(format!(
            "server.web_dir {} lacks {}: it is not horst's web/ directory (or an incomplete copy of it); point server.web_dir at a complete one",
            shown.display(),
            own.join(", ")
        ));
    }
    out
}

async fn chess_js(State(state): State<AppState>, req: Request) -> Response {
    send(&state, Some(PathBuf::from(CHESS_JS)), true, req).await
}

async fn chess_js_map(State(state): State<AppState>, req: Request) -> Response {
    send(
        &state,
        Some(PathBuf::from(format!("{CHESS_JS}.map"))),
        true,
        req,
    )
    .await
}

/// Any path no route serves: the API's JSON 404 under `/api/`, else a page for people that
/// says where to go (the path is not echoed back).
pub async fn unknown_path(uri: axum::http::Uri) -> Response {
    if uri.path().starts_with("/api/") {
        // No API path ends in `/`: a client that joins its base URL and a path with one too
        // many (`.../available/`) is told which path it meant, not only that this one is none.
        let trimmed = uri.path().trim_end_matches('/');
        let message = if trimmed.len() < uri.path().len() && trimmed.len() > "/api".len() {
            format!(
                "no such endpoint: API paths never end in a slash; if you meant {trimmed}, send it without the trailing slash (the agent API is under /api/v1/agent/, docs/agents-play.md)"
            )
        } else {
            "no such endpoint; the agent API is under /api/v1/agent/ (docs/agents-play.md), the MCP endpoint is POST /api/mcp".to_string()
        };
        return crate::ApiError::new(crate::ApiCode::NotFound, message).into_response();
    }
    (
        axum::http::StatusCode::NOT_FOUND,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        NOT_FOUND_PAGE,
    )
        .into_response()
}

const NOT_FOUND_PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/pages/rcadia.css">
</head>
<body>
<header class="top">
  <p class="brand">horst</p>
  <nav aria-label="Pages">
    <a href="/">Game</a>
    <a href="/tables/">Tables</a>
    <a href="/leaderboard/">Leaderboard</a>
  </nav>
</header>
<main>
<h1>This page does not exist</h1>
<p class="lead">The address may be mistyped, or the page was moved. Start from the game, the RCADIA tables or the leaderboard.</p>
<p class="ways"><a class="button" href="/">To the game</a> <a href="/tables/">RCADIA tables</a></p>
<p class="lead" lang="de">Auf Deutsch: Diese Seite gibt es nicht, vielleicht ist die Adresse vertippt. Das Spiel „Game con Vogel“ beginnt auf der <a href="/">Startseite</a>.</p>
</main>
</body>
</html>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// The game's players read German (its pages are): a mistyped game link told them in
    /// English only. The page says it in German too, marked as German, with the way back.
    #[test]
    fn the_not_found_page_speaks_to_the_games_players_in_german_too() {
        let german = NOT_FOUND_PAGE
            .lines()
            .find(|l| l.contains(r#"lang="de""#))
            .expect("a paragraph marked lang=\"de\"");
        assert!(german.contains("gibt es nicht"), "{german}");
        assert!(german.contains(r#"<a href="/">"#), "{german}");
    }

    #[test]
    fn the_web_dir_check_says_what_to_run() {
        let repo_web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        let missing = check_web_dir(&repo_web.join("no-such-dir"));
        assert_eq!(missing.len(), 1);
        assert!(missing[0].contains("server.web_dir"), "{missing:?}");
        // It says what a wrong directory breaks: the game pages and the gateway's player app
        // too (its resources/read was an unexplained -32603 on such a server).
        assert!(missing[0].contains("game pages"), "{missing:?}");
        assert!(missing[0].contains("ui://gcv/player"), "{missing:?}");
        let dir = tempfile_dir();
        for f in &REQUIRED_FILES[..5] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let problems = check_web_dir(&dir);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("npm ci --prefix"), "{problems:?}");
        // Without the engine module the player app of the agent gateway cannot be served.
        assert!(problems[1].contains("ops/build-wasm"), "{problems:?}");
        assert!(problems[1].contains("ui://gcv/player"), "{problems:?}");
        let w = dir.join(ENGINE_WASM);
        std::fs::create_dir_all(w.parent().unwrap()).unwrap();
        std::fs::write(w, "x").unwrap();
        let problems = check_web_dir(&dir);
        assert_eq!(problems.len(), 1, "{problems:?}");
        let p = dir.join(CHESS_JS);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
        assert!(check_web_dir(&dir).is_empty());
        std::fs::remove_file(dir.join("house/index.html")).unwrap();
        assert!(check_web_dir(&dir)[0].contains("house/index.html"));
        std::fs::remove_file(dir.join("mcp-app/player.html")).unwrap();
        assert!(check_web_dir(&dir)[0].contains("mcp-app/player.html"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "horst-web-check-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

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
