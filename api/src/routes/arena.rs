//! RCADIA as an arena: replays of finished games, the leaderboards, and seek. The rules are
//! `horst_rcadia`'s (`replay`, `rating`, `leaderboard`, `seek`); these handlers translate.
//!
//! - `GET /api/v1/agent/sessions/:id/replay`: JSON Lines, public once the game is over.
//! - `POST /api/v1/agent/sessions/seek {game, rated?, asName?, wait?}`: a seat (play scope).
//! - `GET /api/v1/leaderboard`, `/api/v1/leaderboard/:game`, `/api/v1/leaderboard/:game/:agent`.
//! - Pages: `/leaderboard/`, `/leaderboard/:game`, `/leaderboard/:game/:agent` (one page).
//!
//! Each part can be switched off by the operator (`[arena]`, product decision 13): its
//! routes then answer 404 saying so.

use std::path::PathBuf;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use horst_rcadia::leaderboard::{AgentRating, Leaderboard};
use horst_rcadia::rating::is_game_id;
use horst_rcadia::replay::{self, Line};
use horst_rcadia::seek::{SeekError, SeekRequest};
use horst_rcadia::RcadiaError;
use horst_sessions::wire::SeekResponse;
use horst_sessions::{ProtocolCode, ProtocolError, Status};
use serde::{Deserialize, Serialize};

use crate::extract::{Expected, Json, Path, Player, Query, Viewer};
use crate::{ApiCode, ApiError, AppState};
use horst_identity::auth::Identity;

/// Longest a seek waits for a table to open (the house opens one within a second or two).
const SEEK_WAIT_MAX: Duration = Duration::from_secs(25);
/// Standings a leaderboard answers at most.
const TOP_MAX: usize = 200;

/// The 404 of a part the operator switched off (`arena.<setting>`).
fn switched_off(what: &str, setting: &str) -> ApiError {
    ApiError::new(
        ApiCode::NotFound,
        format!("{what} are switched off on this server: the operator set arena.{setting} = false (ops/horst.toml); ask them to turn it on"),
    )
}

/// The leaderboard pages while ratings are off.
const RATINGS_OFF_PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>No leaderboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/pages/rcadia.css">
</head>
<body>
<header class="top">
  <a class="brand" href="/tables/">RCADIA</a>
  <nav aria-label="RCADIA pages">
    <a href="/tables/">Tables</a>
    <a href="/house/">House</a>
  </nav>
</header>
<main>
<h1>No leaderboard here</h1>
<p class="lead">The operator of this server switched ratings off, so there are no leaderboards. Games are still played at the tables.</p>
</main>
</body>
</html>
"#;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/agent/sessions/{id}/replay", get(replay_of))
        .route(
            "/api/v1/agent/sessions/seek",
            post(seek).layer(DefaultBodyLimit::max(4096)),
        )
        .route("/api/v1/leaderboard", get(games))
        .route("/api/v1/leaderboard/{game}", get(leaderboard))
        .route("/api/v1/leaderboard/{game}/{agent}", get(agent))
        .route(
            "/leaderboard",
            get(|| async { Redirect::permanent("/leaderboard/") }),
        )
        .route("/leaderboard/", get(page))
        .route("/leaderboard/{game}", get(page))
        .route("/leaderboard/{game}/{agent}", get(page))
}

/// The replay of a finished game, one JSON value per line (`application/x-ndjson`). With a
/// credential of one of its players, that player's own rejection reasons are in it (the
/// protocol shows a reason only to its owner); everyone else sees them as `null`.
async fn replay_of(
    State(state): State<AppState>,
    Viewer(who): Viewer,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if !state.config.arena.replays {
        return Err(switched_off("replays", "replays"));
    }
    if horst_sessions::parse_session_id(&id).is_none() {
        return Err(ApiError::new(
            ApiCode::NotFound,
            format!("{:?} is not a session id: they look like ses_0123456789ab (a table's sessionId from GET /api/v1/agent/sessions/available, or a game's from your leaderboard history)", id.chars().take(40).collect::<String>()),
        ));
    }
    let lines = state.rcadia.replay_lines(&id).await?;
    let finished = lines.iter().any(|l| matches!(l, Line::End { .. }));
    if !finished {
        // No replay, or the game is still on: say which.
        return match state.rcadia.load(&id).await {
            Ok(s) if s.status() != Status::Finished => Err(ProtocolError::new(
                ProtocolCode::NotFinished,
                format!("session {id} is still being played; its replay is public once it ends (watch it live at /watch/{id})"),
            )
            .into()),
            // The record outlives a replay kept less than a day: expired, or never written.
            Ok(s) => {
                let retention_ms = state.rcadia.settings().replay_retention_ms;
                let now = state.rcadia.now_ms().await?;
                let expired = s
                    .ended_at_ms()
                    .is_some_and(|end| now >= end.saturating_add(retention_ms));
                Err(ApiError::new(
                    ApiCode::NotFound,
                    if expired {
                        format!("the replay of {id} has expired: replays are kept {} h after the game ends (sessions.replay_retention_hours)", retention_ms / 3_600_000)
                    } else {
                        format!("session {id} kept no replay (it finished before this server recorded replays)")
                    },
                ))
            }
            Err(RcadiaError::NotFound) | Err(RcadiaError::Gone) => Err(ApiError::new(
                ApiCode::NotFound,
                format!("no replay of {id}: no such session, or its replay is past sessions.replay_retention_hours; check the id (a table's sessionId, or a game's from the leaderboard history)"),
            )),
            Err(e) => Err(e.into()),
        };
    }
    let viewer = match &who {
        Some(who) => viewer_of(&state, &id, &lines, who).await?,
        None => None,
    };
    let mut body = String::new();
    for l in replay::assemble(lines, viewer.as_deref()) {
        body.push_str(
            &serde_json::to_string(&l).map_err(|e| ApiError::internal(format!("replay: {e}")))?,
        );
        body.push('\n');
    }
    let cache = if who.is_some() {
        "private, no-store"
    } else {
        "public, max-age=60"
    };
    let head = [
        (header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8"),
        (header::CACHE_CONTROL, cache),
        (header::VARY, "Authorization, Accept-Encoding"),
    ];
    // A long game's lines repeat its state (chess's whole move list each ply): a 1,000-ply
    // game is about 7 MB as text and a few percent of it as gzip.
    if body.len() >= GZIP_FROM_BYTES && accepts_gzip(&headers) {
        let zipped = tokio::task::spawn_blocking(move || gzip(body.as_bytes()))
            .await
            .map_err(|e| ApiError::internal(format!("replay: {e}")))?
            .map_err(|e| ApiError::internal(format!("replay: gzip: {e}")))?;
        return Ok((head, [(header::CONTENT_ENCODING, "gzip")], zipped).into_response());
    }
    Ok((head, body).into_response())
}

/// A replay shorter than this is served as it is: gzip would save a packet at most.
const GZIP_FROM_BYTES: usize = 1024;

/// Whether the request's `Accept-Encoding` takes gzip: `gzip` (or `x-gzip`) named with a
/// q above 0, or, when neither is named, `*` with a q above 0. A `gzip;q=0` beside `*`
/// refuses gzip (RFC 9110, 12.5.3: a coding named explicitly is not matched by `*`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named: Option<bool> = None;
    let mut star = false;
    for item in headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
    {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim();
        let taken = !parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            named = Some(named.unwrap_or(false) || taken);
        } else if coding == "*" {
            star |= taken;
        }
    }
    named.unwrap_or(star)
}

/// `bytes` as gzip at level 3: on a 1,000-ply chess replay (7.1 MB) it gave 163 KB in 66 ms,
/// level 1 1,058 KB in 103 ms and level 6 127 KB in 116 ms (flate2's miniz_oxide, release).
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 16),
        flate2::Compression::new(3),
    );
    z.write_all(bytes)?;
    z.finish()
}

/// The caller's player id in a replay: an agent by the agent id its seat names; a person
/// by the session record while it is kept (a replay names no person's identity).
async fn viewer_of(
    state: &AppState,
    id: &str,
    lines: &[Line],
    who: &Identity,
) -> Result<Option<String>, ApiError> {
    if !who.is_user {
        return Ok(replay::seat_of_agent(lines, &who.id).map(|s| s.player_id.clone()));
    }
    match state.rcadia.load(id).await {
        Ok(s) => Ok(s
            .player_by_identity(&who.key)
            .map(|p| p.player_id.to_string())),
        Err(RcadiaError::NotFound) | Err(RcadiaError::Gone) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SeekBody {
    game: String,
    /// Only the house's (rated) tables; default true.
    #[serde(default)]
    rated: Option<bool>,
    #[serde(default)]
    as_name: Option<String>,
    /// Seconds to wait for a table (default and most 25).
    #[serde(default)]
    wait: Option<f64>,
}

impl Expected for SeekBody {
    const EXPECTED: &'static str =
        "{\"game\": \"chess\", \"rated\"?: true, \"asName\"?: \"...\", \"wait\"?: 25}";
}

async fn seek(
    State(state): State<AppState>,
    Player(who): Player,
    Json(body): Json<SeekBody>,
) -> Result<Json<SeekResponse>, ApiError> {
    if !state.config.arena.seek {
        return Err(switched_off("seeks", "seek"));
    }
    let game = body.game.trim();
    if !is_game_id(game) {
        return Err(ApiError::new(
            ApiCode::BadRequest,
            "game must be a game id (letters, digits, - and _), for example \"chess\"",
        ));
    }
    let wait = match body.wait {
        None => SEEK_WAIT_MAX,
        Some(w) if w.is_finite() && w >= 0.0 => {
            // Bounded before it becomes a Duration: a huge number would overflow one (a panic).
            Duration::from_secs_f64(w.min(SEEK_WAIT_MAX.as_secs_f64()))
        }
        Some(_) => {
            return Err(ApiError::new(
                ApiCode::BadRequest,
                "wait must be a number of seconds from 0 to 25",
            ))
        }
    };
    let req = SeekRequest {
        // Tables match a game in any case; its lock, ratings and reference player are keyed
        // by the (lowercase) id: "Chess" took its own lock, read every rating as new and
        // skipped the validation game.
        game: game.to_ascii_lowercase(),
        rated: body.rated.unwrap_or(true),
        identity: who.key.clone(),
        as_name: super::rcadia_agent::seat_name(body.as_name.as_deref(), &who),
        wait,
    };
    match state.rcadia.seek(&req).await {
        Ok((s, player_id)) => Ok(Json(SeekResponse {
            session_id: s.session_id().to_string(),
            snapshot: s.snapshot(&player_id),
            player_id,
        })),
        Err(SeekError::NoTable) => Err(ApiError::new(
            ApiCode::NoTable,
            format!(
                "no open {}table of {game} within {} s; seek again (the house opens tables as they fill), or list them with GET /api/v1/agent/sessions/available?game={game}",
                if req.rated { "house " } else { "" },
                wait.as_secs()
            ),
        )
        .retry_after(2)),
        Err(SeekError::UnknownGame) => Err(ApiError::new(
            ApiCode::UnknownGame,
            if req.rated {
                format!("no house table of {game} is open or running, and the house does not host {game}: check the game id (GET /api/v1/agent/sessions/available lists the games with tables), or seek with \"rated\": false to take another host's table")
            } else {
                format!("no table of {game} is open or running, and the house does not host {game}: check the game id (GET /api/v1/agent/sessions/available lists the games with tables)")
            },
        )),
        Err(SeekError::Busy) => Err(ApiError::new(
            ApiCode::SeekInProgress,
            "another seek of yours is still waiting for a table; wait for its answer (it comes within its wait, at most 25 s) and seek again only then",
        )),
        Err(SeekError::Rcadia(e)) => Err(e.into()),
    }
}

#[derive(Debug, Serialize)]
struct Games {
    games: Vec<String>,
}

/// Ratings are on, else the 404 saying the operator switched them off.
fn ratings_on(state: &AppState) -> Result<(), ApiError> {
    if state.config.arena.ratings {
        Ok(())
    } else {
        Err(switched_off("ratings and leaderboards", "ratings"))
    }
}

async fn games(State(state): State<AppState>) -> Result<Json<Games>, ApiError> {
    ratings_on(&state)?;
    Ok(Json(Games {
        games: state.rcadia.rated_games().await?,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardQuery {
    limit: Option<usize>,
    offset: Option<usize>,
}

impl Expected for BoardQuery {
    const EXPECTED: &'static str = "?limit=N (1 to 200, default 50)&offset=M (0 to 1000000000, default 0: the top; pass the answer's nextOffset for the next page)";
}

/// The highest `offset` a leaderboard takes (a page past every board, never an overflow).
const OFFSET_MAX: usize = 1_000_000_000;

async fn leaderboard(
    State(state): State<AppState>,
    Path(game): Path<String>,
    Query(q): Query<BoardQuery>,
) -> Result<Json<Leaderboard>, ApiError> {
    ratings_on(&state)?;
    let limit = match q.limit {
        None => 50,
        Some(n) if (1..=TOP_MAX).contains(&n) => n,
        Some(_) => {
            return Err(ApiError::new(
                ApiCode::BadRequest,
                format!("limit must be a whole number from 1 to {TOP_MAX}"),
            ))
        }
    };
    let offset = match q.offset {
        None => 0,
        Some(n) if n <= OFFSET_MAX => n,
        Some(_) => {
            return Err(ApiError::new(
                ApiCode::BadRequest,
                format!("offset must be a whole number from 0 to {OFFSET_MAX}; pass the answer's nextOffset for the next page"),
            ))
        }
    };
    well_formed_game(&game)?;
    Ok(Json(state.rcadia.leaderboard(&game, limit, offset).await?))
}

/// A game id no game can have is a 400 (it answered an empty board, as if the game had no
/// rated agents yet).
fn well_formed_game(game: &str) -> Result<(), ApiError> {
    if is_game_id(game) {
        return Ok(());
    }
    Err(ApiError::new(
        ApiCode::BadRequest,
        "a game id is 1-64 ASCII letters, digits, - or _; GET /api/v1/leaderboard lists the games",
    ))
}

async fn agent(
    State(state): State<AppState>,
    Path((game, agent)): Path<(String, String)>,
) -> Result<Json<AgentRating>, ApiError> {
    ratings_on(&state)?;
    well_formed_game(&game)?;
    if !horst_rcadia::rating::is_agent_id(&agent) {
        return Err(ApiError::new(
            ApiCode::BadRequest,
            "an agent id is agt_ and letters or digits, as the game's leaderboard (GET /api/v1/leaderboard/<game>) lists them",
        ));
    }
    Ok(Json(state.rcadia.agent_rating(&game, &agent).await?))
}

/// The leaderboard page; it reads which board (or agent) from its URL.
async fn page(State(state): State<AppState>, req: Request) -> Response {
    if !state.config.arena.ratings {
        return (
            StatusCode::NOT_FOUND,
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            RATINGS_OFF_PAGE,
        )
            .into_response();
    }
    crate::routes::web_files::send(
        &state,
        Some(PathBuf::from("pages/leaderboard.html")),
        false,
        req,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn takes(value: &str) -> bool {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, value.parse().unwrap());
        accepts_gzip(&h)
    }

    #[test]
    fn gzip_is_taken_as_accept_encoding_says() {
        for yes in [
            "gzip",
            "GZIP",
            "br, gzip;q=0.8",
            "x-gzip",
            "*",
            "deflate, *;q=0.1",
        ] {
            assert!(takes(yes), "{yes}");
        }
        for no in [
            "",
            "br",
            "gzip;q=0",
            "gzip; q=0.0",
            "*;q=0",
            "gzip;q=0, *",
            "*, gzip;q=0",
        ] {
            assert!(!takes(no), "{no}");
        }
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
