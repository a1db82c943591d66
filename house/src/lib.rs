//! The house host (protocol section 8): RCADIA's own tables.
//!
//! `horst house` keeps at least one open table for each game in its allowlist and at most
//! `max_tables` per game, re-opens tables when their series end, and rematches automatically.
//! Each table is one page of a headless Chromium ([`cdp`]) that runs `web/house/`: the game
//! sits in a sandboxed frame, and the page's HostSession (the same code as the browser
//! bridge) relays between the game and the bridge API. The page has no token and no network
//! access to the API: it calls a DevTools binding, and this process performs the call with
//! the house's agent token ([`relay`]). Every request the browser makes is checked against
//! the backend origin and the house's own files ([`guard`]).
//!
//! The decisions (which table to open or close) are a pure function, [`plan`], so they are
//! tested without a browser.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod answer;
pub mod cdp;
pub mod guard;
pub mod relay;
pub mod table;

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cdp::{Browser, LaunchOptions};
use crate::guard::Origin;
use crate::relay::Relay;
use crate::table::{Table, TableView};

/// How often the supervisor folds in what its pages reported.
const TICK: Duration = Duration::from_millis(500);
/// How often it asks the backend which tables are joinable when no page reported a change
/// (a seat taken or a reservation expired shows only there). `/available` lists every
/// unfinished session, so it is not asked on every tick.
const LOOK_EVERY: Duration = Duration::from_secs(2);
/// A finished table with no next session after this long ended its series: close it.
const SERIES_OVER_AFTER: Duration = Duration::from_secs(5);
/// A table that never got a session (the page failed to load, the game never configured).
const STUCK_AFTER: Duration = Duration::from_secs(30);

/// Everything `horst house` needs; `Debug` keeps the token out.
#[derive(Clone)]
pub struct HouseSettings {
    /// The backend's origin, `http://HOST:PORT`: pages load from it, the relay calls it.
    pub backend: String,
    /// An agent token with the `host` scope.
    pub token: String,
    /// Game ids served by horst under `/games/<id>/` (the allowlist).
    pub games: Vec<String>,
    /// At most this many tables per game.
    pub max_tables: usize,
    pub chromium: PathBuf,
    pub chromium_args: Vec<String>,
    /// Appended to every game page's URL (`turnTimeout=5&maxTurnTimeouts=1`), for example a
    /// shorter clock on a test server.
    pub game_query: String,
}

impl std::fmt::Debug for HouseSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HouseSettings")
            .field("backend", &self.backend)
            .field(
                "token",
                &if self.token.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("games", &self.games)
            .field("max_tables", &self.max_tables)
            .field("chromium", &self.chromium)
            .field("chromium_args", &self.chromium_args)
            .field("game_query", &self.game_query)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HouseError {
    #[error("house.backend: {0}")]
    Backend(String),
    #[error("no house token: pass --token, set HORST_HOUSE_TOKEN or house.token; create one with `horst admin token create --scopes host --house --name house`")]
    NoToken,
    #[error("house.games: `{0}` is not a game id (letters, digits, `-` and `_`; the game is served at /games/<id>/)")]
    BadGame(String),
    #[error("house.games is empty: name at least one game (for example chess)")]
    NoGames,
    #[error(transparent)]
    Browser(#[from] cdp::CdpError),
    #[error("the backend refused the house token (HTTP 401/403): it needs the `host` scope; create one with `horst admin token create --scopes host --house --name house` (--house lists its tables as host \"house\")")]
    TokenRefused,
    #[error("the backend at {origin} answers {path} with HTTP {status}, so no house table can load: its web files are missing or incomplete. On the backend machine run `./ops/web-setup` in the horst checkout (npm ci --prefix web; ./ops/run does it), check that server.web_dir points at that web/ directory, restart the API, then start horst house again")]
    WebFilesMissing {
        origin: String,
        path: String,
        status: u16,
    },
}

impl HouseSettings {
    pub fn validate(&self) -> Result<Origin, HouseError> {
        let origin = Origin::parse(&self.backend).map_err(HouseError::Backend)?;
        if self.token.is_empty() {
            return Err(HouseError::NoToken);
        }
        if self.games.is_empty() {
            return Err(HouseError::NoGames);
        }
        for g in &self.games {
            let ok = !g.is_empty()
                && g.len() <= 64
                && g.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !ok {
                return Err(HouseError::BadGame(g.clone()));
            }
        }
        Ok(origin)
    }
}

/// One table as the planner sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableFacts {
    pub key: u64,
    pub view: TableView,
    /// How long the view has looked the way it does now.
    pub unchanged_for: Duration,
}

/// What to do with one game's tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub open_new: bool,
    pub close: Vec<u64>,
}

/// The supervisor's rules for one game, pure so they are tested without a browser:
/// - close tables that are dead, left, lost, stuck without a session, or whose series ended
///   (finished with no next session for a while: where one was due, the page asked for it);
/// - then, if none of the remaining tables is open (joinable on the backend, or still being
///   created), open one, unless `max_tables` are running.
pub fn plan(tables: &[TableFacts], joinable: &HashSet<String>, max_tables: usize) -> Plan {
    let mut out = Plan::default();
    let mut kept = 0usize;
    let mut open = 0usize;
    for t in tables {
        let v = &t.view;
        let closing = v.dead
            || v.status == "left"
            || v.status == "lost"
            || (v.session_id.is_none() && t.unchanged_for >= STUCK_AFTER)
            || (v.status == "finished"
                && v.next_session_id.is_none()
                && t.unchanged_for >= SERIES_OVER_AFTER);
        if closing {
            out.close.push(t.key);
            continue;
        }
        kept += 1;
        let being_created = v.session_id.is_none();
        let is_joinable = v.session_id.as_ref().is_some_and(|s| joinable.contains(s));
        if being_created || is_joinable {
            open += 1;
        }
    }
    out.open_new = open == 0 && kept < max_tables;
    out
}

struct Running {
    table: Table,
    game: String,
    last_view: TableView,
    since: Instant,
}

/// A question for a running house, answered from its browser: evaluate `expression` in the
/// game frame of the table hosting `session_id` or the series of that id (any table when
/// empty). Used by the
/// end-to-end tests to read what a game page shows.
#[derive(Debug)]
pub struct FrameQuery {
    pub session_id: String,
    pub expression: String,
    /// Crash the table's frames instead (`Page.crash`; the answer is `None`): how the tests
    /// make a game die under a live table.
    pub crash: bool,
    pub reply: tokio::sync::oneshot::Sender<Option<serde_json::Value>>,
}

/// Run the house until `shutdown` completes, then end live sessions (`host_left`) and stop
/// the browser.
pub async fn run(
    settings: HouseSettings,
    shutdown: impl Future<Output = ()>,
) -> Result<(), HouseError> {
    let (_keep, probe) = tokio::sync::mpsc::channel(1);
    run_with_probe(settings, shutdown, probe).await
}

/// [`run`], also answering [`FrameQuery`]s.
pub async fn run_with_probe(
    settings: HouseSettings,
    shutdown: impl Future<Output = ()>,
    mut probe: tokio::sync::mpsc::Receiver<FrameQuery>,
) -> Result<(), HouseError> {
    let origin = settings.validate()?;
    let http = relay::api_client()
        .build()
        .map_err(|e| HouseError::Backend(e.to_string()))?;
    check_backend_files(&http, &origin, &settings.games).await?;
    let browser = Arc::new(
        Browser::launch(&LaunchOptions {
            binary: settings.chromium.clone(),
            extra_args: settings.chromium_args.clone(),
            only_host: Some(origin.host().to_string()),
        })
        .await?,
    );
    tracing::info!(backend = %origin.as_str(), games = ?settings.games, max_tables = settings.max_tables, "house host started");
    let relays: BTreeMap<String, Relay> = settings
        .games
        .iter()
        .map(|g| {
            (
                g.clone(),
                Relay::new(
                    http.clone(),
                    origin.as_str(),
                    &settings.token,
                    g,
                    &title_of(g),
                ),
            )
        })
        .collect();

    let mut tables: BTreeMap<u64, Running> = BTreeMap::new();
    let mut next_key = 1u64;
    let mut last_look: Option<Instant> = None;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    let result = loop {
        tokio::select! {
            _ = &mut shutdown => break Ok(()),
            _ = tick.tick() => {}
            Some(q) = probe.recv() => {
                let table = tables.values().find(|r| {
                    let v = r.table.view.borrow();
                    let id = Some(q.session_id.as_str());
                    q.session_id.is_empty() || v.session_id.as_deref() == id || v.series_id.as_deref() == id
                });
                let answer = match table {
                    Some(r) if q.crash => {
                        r.table.crash_frames(&browser);
                        None
                    }
                    Some(r) => r.table.evaluate_in_frames(&browser, &q.expression).await,
                    None => None,
                };
                let _ = q.reply.send(answer);
                continue;
            }
        }
        if browser.is_gone() {
            break Err(HouseError::Browser(cdp::CdpError::BrowserGone));
        }
        // Fold in what the pages reported since the last look.
        let now = Instant::now();
        let mut refused = false;
        let mut changed = tables.is_empty();
        for r in tables.values_mut() {
            let v = r.table.view.borrow().clone();
            refused |= v.auth_refused;
            if v != r.last_view {
                if v.session_id != r.last_view.session_id || v.status != r.last_view.status {
                    tracing::info!(game = %r.game, session = ?v.session_id, status = %v.status, round = ?v.round, "table");
                }
                r.last_view = v;
                r.since = now;
                changed = true;
            }
        }
        if refused {
            break Err(HouseError::TokenRefused);
        }
        if !changed && last_look.is_some_and(|t| now - t < LOOK_EVERY) {
            continue;
        }
        last_look = Some(now);
        for (game, relay) in &relays {
            tracing::debug!(game = %game, "looking at tables");
            let joinable: HashSet<String> = match relay.joinable_sessions().await {
                Ok(list) => list.into_iter().collect(),
                Err(e) => {
                    tracing::warn!(game = %game, "cannot list open tables: {e}");
                    continue; // without the list we cannot tell whether to open one
                }
            };
            let facts: Vec<TableFacts> = tables
                .iter()
                .filter(|(_, r)| &r.game == game)
                .map(|(k, r)| TableFacts {
                    key: *k,
                    view: r.last_view.clone(),
                    unchanged_for: now - r.since,
                })
                .collect();
            let decided = plan(&facts, &joinable, settings.max_tables);
            for key in decided.close {
                if let Some(r) = tables.remove(&key) {
                    let v = &r.last_view;
                    if v.session_id.is_none() {
                        // It never got a session: say why, or that nothing said why.
                        let why = v.load_error.as_deref().or(v.page_error.as_deref()).unwrap_or(
                            "no error seen; the game page never sent AGENT_CONFIGURE (does it construct RcadiaAgent?)",
                        );
                        tracing::warn!(game = %game, status = %v.status, why = %why, "closing a table that never loaded");
                    } else {
                        tracing::info!(game = %game, session = ?v.session_id, status = %v.status, "closing table");
                    }
                    // Closed first, then the view read again: a session a create or
                    // rematch makes from here on is ended by the call itself.
                    r.table.mark_closed();
                    let now_view = r.table.view.borrow().clone();
                    end_if_live(relay, &now_view).await;
                    r.table.close(&browser).await;
                }
            }
            if decided.open_new {
                let path = game_path(game, &settings.game_query);
                match Table::open(
                    browser.clone(),
                    &origin,
                    relay.clone(),
                    &path,
                    &title_of(game),
                )
                .await
                {
                    Ok(table) => {
                        tracing::info!(game = %game, "opening a table");
                        let last_view = table.view.borrow().clone();
                        tables.insert(
                            next_key,
                            Running {
                                table,
                                game: game.clone(),
                                last_view,
                                since: now,
                            },
                        );
                        next_key += 1;
                    }
                    Err(e) => tracing::warn!(game = %game, "cannot open a table: {e}"),
                }
            }
        }
    };
    // Leave cleanly: live sessions end with host_left (no rematch), then the browser stops.
    // All at once: one at a time, a slow backend (20 s a request at worst) would hold the
    // stop for 20 s a table, past a service manager's stop timeout with a few tables.
    let mut ending = tokio::task::JoinSet::new();
    for r in tables.values() {
        r.table.mark_closed();
        let v = r.table.view.borrow().clone();
        if let Some(relay) = relays.get(&r.game).cloned() {
            ending.spawn(async move { end_if_live(&relay, &v).await });
        }
    }
    while ending.join_next().await.is_some() {}
    drop(tables);
    browser.close().await;
    tracing::info!("house host stopped");
    result
}

/// The files a table of `game` loads from the backend (the house page, the SDK, the game's
/// page, and chess.js for chess).
fn needed_files(game: &str) -> Vec<String> {
    let mut files = vec![
        "/house/table.html".to_string(),
        "/sdk/rcadia-agent.js".to_string(),
        format!("/games/{game}/"),
    ];
    if game == "chess" {
        files.push("/games/vendor/chess.js".to_string());
    }
    files
}

/// Before any table: does the backend serve what the tables load? A backend that cannot be
/// reached yet is not an error here (the supervisor keeps trying); a file it answers with an
/// error status is, with what to run.
async fn check_backend_files(
    http: &reqwest::Client,
    origin: &Origin,
    games: &[String],
) -> Result<(), HouseError> {
    let mut seen = HashSet::new();
    let wanted: Vec<String> = games
        .iter()
        .flat_map(|g| needed_files(g))
        .filter(|p| seen.insert(p.clone()))
        .collect();
    for path in wanted {
        let url = format!("{}{path}", origin.as_str());
        match http.get(&url).timeout(Duration::from_secs(10)).send().await {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => {
                return Err(HouseError::WebFilesMissing {
                    origin: origin.as_str().to_string(),
                    path,
                    status: r.status().as_u16(),
                })
            }
            Err(e) => {
                tracing::warn!(url = %url, error = %e, "cannot check the backend's web files yet");
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Ends what the table hosts: the session its page reports live, and one its last create or
/// rematch made that the page has not reported yet (made a moment before the house stopped).
async fn end_if_live(relay: &Relay, v: &TableView) {
    let live = v
        .session_id
        .as_deref()
        .filter(|_| v.status == "waiting" || v.status == "active");
    for sid in live.into_iter().chain(v.unreported_session()) {
        let r = relay.end_host_left(sid).await;
        if r.status != 200 {
            tracing::debug!(session = %sid, status = r.status, "end on leave not accepted");
        }
    }
}

fn game_path(game: &str, query: &str) -> String {
    let q = query.trim_start_matches('?');
    if q.is_empty() {
        format!("/games/{game}/")
    } else {
        format!("/games/{game}/?{q}")
    }
}

/// `chess` -> `Chess`, `rps` -> `Rock-paper-scissors` (the two house games), else the id.
fn title_of(game: &str) -> String {
    match game {
        "chess" => "Chess".into(),
        "rps" => "Rock-paper-scissors".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(key: u64, sid: Option<&str>, status: &str, next: Option<&str>, secs: u64) -> TableFacts {
        TableFacts {
            key,
            view: TableView {
                session_id: sid.map(str::to_string),
                status: status.into(),
                next_session_id: next.map(str::to_string),
                ..TableView::default()
            },
            unchanged_for: Duration::from_secs(secs),
        }
    }

    fn set(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn opens_the_first_table() {
        assert_eq!(
            plan(&[], &set(&[]), 2),
            Plan {
                open_new: true,
                close: vec![]
            }
        );
    }

    #[test]
    fn one_open_table_is_enough() {
        assert!(!plan(&[t(1, Some("a"), "waiting", None, 0)], &set(&["a"]), 3).open_new);
        // still being created counts as open: no second page while the first loads
        assert!(!plan(&[t(1, None, "creating", None, 0)], &set(&[]), 3).open_new);
    }

    #[test]
    fn a_full_table_gets_a_neighbour_up_to_the_limit() {
        let busy = [t(1, Some("a"), "active", None, 0)];
        assert!(plan(&busy, &set(&[]), 2).open_new);
        let two_busy = [
            t(1, Some("a"), "active", None, 0),
            t(2, Some("b"), "active", None, 0),
        ];
        assert!(!plan(&two_busy, &set(&[]), 2).open_new);
        // a reserved rematch is not joinable either
        let reserved = [t(1, Some("a"), "waiting", None, 0)];
        assert!(plan(&reserved, &set(&[]), 2).open_new);
    }

    #[test]
    fn closes_ended_series_and_dead_pages_then_reopens() {
        let tables = [
            t(1, Some("a"), "finished", None, 6),       // series over
            t(2, Some("b"), "finished", Some("c"), 60), // rematch follows: keep
            t(3, Some("d"), "lost", None, 0),
            t(4, None, "idle", None, 31), // never got a session
        ];
        let p = plan(&tables, &set(&[]), 2);
        assert_eq!(p.close, vec![1, 3, 4]);
        assert!(p.open_new, "one table left, not open, room for one more");
        // a just-finished table waits for its rematch
        assert!(plan(&[t(1, Some("a"), "finished", None, 1)], &set(&[]), 1)
            .close
            .is_empty());
        let mut dead = t(5, Some("e"), "active", None, 0);
        dead.view.dead = true;
        assert_eq!(plan(&[dead], &set(&[]), 1).close, vec![5]);
    }

    #[test]
    fn settings_are_checked() {
        let ok = HouseSettings {
            backend: "http://127.0.0.1:8080".into(),
            token: "rc_x".into(),
            games: vec!["chess".into(), "rps".into()],
            max_tables: 2,
            chromium: "chromium".into(),
            chromium_args: vec![],
            game_query: String::new(),
        };
        assert!(ok.validate().is_ok());
        assert!(
            !format!("{ok:?}").contains("rc_x"),
            "the token never reaches Debug output"
        );
        let mut s = ok.clone();
        s.token.clear();
        assert!(matches!(s.validate(), Err(HouseError::NoToken)));
        let mut s = ok.clone();
        s.games = vec!["../admin".into()];
        assert!(matches!(s.validate(), Err(HouseError::BadGame(_))));
        let mut s = ok;
        s.backend = "127.0.0.1:8080".into();
        assert!(matches!(s.validate(), Err(HouseError::Backend(_))));
        assert_eq!(
            game_path("chess", "?turnTimeout=5"),
            "/games/chess/?turnTimeout=5"
        );
        assert_eq!(game_path("rps", ""), "/games/rps/");
        assert_eq!(
            needed_files("chess"),
            [
                "/house/table.html",
                "/sdk/rcadia-agent.js",
                "/games/chess/",
                "/games/vendor/chess.js"
            ]
        );
        assert_eq!(needed_files("rps").len(), 3);
    }
}
