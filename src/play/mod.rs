//! `horst play`: an agent that joins an open table of a game, plays legal moves with the
//! agent loop of protocol section 5, follows rematches, and prints one line per event.
//!
//! `agent.rs` decides (pure, unit-tested); `client.rs` makes the HTTP calls; this file runs
//! the loop, retries failed calls, and prints. It needs neither Redis nor the server's
//! configuration (only its listen address, when `--backend` is not given).

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_sessions::wire::{ActionResponse, AgentSnapshot, AvailableList, SeekResponse};

mod agent;
mod client;
mod event;
mod policy;

use agent::{with_round, ActionAnswer, Agent, Next};
use client::{Answer, Client, Token};
use event::Event;
use policy::Policy;

/// Exit codes (documented in docs/agents-play.md).
const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_AUTH: u8 = 3;
const EXIT_NO_TABLE: u8 = 4;
const EXIT_INTERRUPTED: u8 = 130;

/// How long consecutive failed calls are retried before `horst play` gives up.
const GIVE_UP_AFTER: Duration = Duration::from_secs(120);

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// The game to play: its id, slug or title as `/available?game=` matches it (for
    /// example chess or rps). Not needed with --session.
    #[arg(long, value_name = "GAME", required_unless_present = "session")]
    game: Option<String>,
    /// Agent token with the `play` scope (`horst admin token create --scopes play`). Never
    /// printed or logged.
    #[arg(
        long,
        env = "HORST_AGENT_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    token: Token,
    /// The horst to play on. Default: http://<the configured listen address>, that is
    /// http://127.0.0.1:8080 without configuration. Plain HTTP only.
    #[arg(long, value_name = "URL")]
    backend: Option<String>,
    /// How a move is picked from `legalActions`.
    #[arg(long, value_enum, default_value_t = Policy::Random)]
    policy: Policy,
    /// Seed of `--policy random` (default: from the clock; printed when joining), so a run
    /// can be repeated.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Name at the table (default: the token's name).
    #[arg(long, value_name = "NAME")]
    as_name: Option<String>,
    /// Stop after N finished rounds, opting out of the next rematch. Default: follow the
    /// series until it ends.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    rounds: Option<u32>,
    /// Join this table (a session id, `ses_` and 12 hex digits) instead of searching
    /// `/available`.
    #[arg(long, value_name = "ID", value_parser = session_arg)]
    session: Option<String>,
    /// Keep looking for an open table this many seconds (default: look once).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    wait_for_table: u64,
    /// Let the backend pick the table (`POST /seek`): the house's open table whose players
    /// are nearest this agent's rating, one seeker at a time.
    #[arg(long, conflicts_with = "session")]
    seek: bool,
    /// One JSON object per line instead of text (the `event` field names the kind).
    #[arg(long)]
    json: bool,
}

/// The address `--backend` defaults to: the configured listen address (`--listen`,
/// `HORST_SERVER_LISTEN`, the `--config` file), as a client reaches it.
fn default_backend(common: &crate::CommonArgs) -> Result<String, String> {
    let flags = horst_config::Flags {
        listen: common.listen.clone(),
        redis: None,
        data: None,
    };
    let env = horst_config::Config::environment()
        .map_err(|e| format!("cannot work out the default --backend: {e}; give --backend URL"))?;
    let config = horst_config::Config::load(common.config.as_deref(), &env, &flags)
        .map_err(|e| format!("cannot work out the default --backend: {e}; give --backend URL"))?;
    config
        .local_base_url()
        .map_err(|e| format!("{e}; give --backend URL"))
}

/// Prints events: one line each, text or JSON; a closed stdout is not an error.
struct Out {
    json: bool,
}

impl Out {
    fn emit(&self, e: &Event) {
        use std::io::Write;
        let line = if self.json {
            e.to_json_line()
        } else {
            e.to_text()
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn all(&self, events: &[Event]) {
        for e in events {
            self.emit(e);
        }
    }
}

/// Where the loop is, for Ctrl-C: the table to give back, the rounds finished.
#[derive(Debug, Default, Clone)]
struct Progress {
    session: Option<String>,
    rounds: u32,
}

/// Why the run stopped early.
struct Fail {
    code: u8,
    kind: &'static str,
    message: String,
}

fn fail(code: u8, kind: &'static str, message: impl Into<String>) -> Fail {
    Fail {
        code,
        kind,
        message: message.into(),
    }
}

/// `--session`: a session id as the backend mints them. Anything else went into the request
/// path as it was: `a/b` was answered "no such endpoint" (another route), `x?y` cut the path.
fn session_arg(s: &str) -> Result<String, String> {
    match horst_sessions::parse_session_id(s) {
        Some(_) => Ok(s.to_owned()),
        None => Err(
            "a session id is ses_ and 12 lowercase hex digits (ses_1a2b00c0ffee), as GET /api/v1/agent/sessions/available lists them"
                .into(),
        ),
    }
}

pub fn run(args: PlayArgs, common: &crate::CommonArgs) -> ExitCode {
    let out = Out { json: args.json };
    let report = |f: Fail| {
        // People read stderr; scripts also get the error as the last JSON line.
        if args.json {
            out.emit(&Event::Error {
                code: f.kind.to_string(),
                message: f.message.clone(),
            });
        }
        eprintln!("horst play: {}", f.message);
        ExitCode::from(f.code)
    };
    let backend = match &args.backend {
        Some(b) => b.clone(),
        None => match default_backend(common) {
            Ok(b) => b,
            Err(m) => return report(fail(EXIT_USAGE, "usage", m)),
        },
    };
    if !backend.starts_with("http://") {
        let m = if backend.starts_with("https://") {
            format!("{backend}: horst play speaks plain HTTP only; reach an HTTPS backend through a local proxy or tunnel")
        } else {
            format!("--backend must be an http:// URL, not {backend:?}")
        };
        return report(fail(EXIT_USAGE, "usage", m));
    }
    let client = match Client::new(&backend, args.token.clone()) {
        Ok(c) => c,
        Err(m) => return report(fail(EXIT_FAILED, "failed", m)),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return report(fail(
                EXIT_FAILED,
                "failed",
                format!("cannot start the async runtime: {e}"),
            ))
        }
    };
    let current = Arc::new(Mutex::new(Progress::default()));
    let result = runtime.block_on(async {
        tokio::select! {
            r = play(&args, &client, &out, current.clone()) => Some(r),
            _ = stop_signal() => None,
        }
    });
    match result {
        Some(Ok(())) => ExitCode::SUCCESS,
        Some(Err(f)) => report(f),
        None => {
            // Ctrl-C or SIGTERM: give the seat back (forfeiting a running game) rather than
            // let the others wait for our clock, or for good at a table without one.
            let now = current.lock().unwrap().clone();
            if let Some(id) = now.session {
                let left = runtime.block_on(async {
                    tokio::time::timeout(Duration::from_secs(5), client.leave(&id)).await
                });
                if matches!(left, Ok(Ok(ref a)) if a.ok()) {
                    out.emit(&Event::Left {
                        session_id: id,
                        why: "interrupted".into(),
                    });
                }
            }
            out.emit(&Event::Done {
                reason: "interrupted".into(),
                rounds: now.rounds,
            });
            ExitCode::from(EXIT_INTERRUPTED)
        }
    }
}

/// Ctrl-C (SIGINT) or SIGTERM (`kill`, `timeout`, a service manager's stop): both end the
/// run the same way. SIGTERM killed it without giving the seat back.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// A long-poll answered faster than this with nothing new did not wait; the next one waits
/// [`FAST_EMPTY_POLL_PAUSE`] first (the bridge's rule too, `web/bridge/host-session.js`).
const FAST_EMPTY_POLL: Duration = Duration::from_millis(250);
const FAST_EMPTY_POLL_PAUSE: Duration = Duration::from_secs(1);

/// The longest single wait a `Retry-After` gets; a longer one is asked again after it.
const RETRY_AFTER_MAX: Duration = Duration::from_secs(60);

/// Calls `f` until it answers something other than a network failure, a 5xx or a 429, with
/// exponential backoff (0.5 s doubling to 10 s), each wait at least the server's
/// `Retry-After` (up to [`RETRY_AFTER_MAX`]), reporting each retry; gives up after
/// [`GIVE_UP_AFTER`].
async fn retrying<F, Fut>(out: &Out, what: &str, mut f: F) -> Result<Answer, Fail>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Answer, String>>,
{
    let start = Instant::now();
    let mut pause = Duration::from_millis(500);
    let mut attempt = 0u32;
    loop {
        let (err, asked) = match f().await {
            Ok(a) if !a.transient() => return Ok(a),
            Ok(a) => (format!("{what}: {}", a.status_line()), a.retry_after),
            Err(e) => (format!("{what}: {e}"), None),
        };
        let wait = pause.max(asked.unwrap_or_default().min(RETRY_AFTER_MAX));
        if start.elapsed() > GIVE_UP_AFTER {
            return Err(fail(
                EXIT_FAILED,
                "unreachable",
                format!("{err}; gave up after {} s", GIVE_UP_AFTER.as_secs()),
            ));
        }
        attempt += 1;
        out.emit(&Event::Retry {
            error: err,
            attempt,
            in_ms: wait.as_millis() as u64,
        });
        tokio::time::sleep(wait).await;
        pause = (pause * 2).min(Duration::from_secs(10));
    }
}

/// 401/403: the message says which token is needed and how to make one.
fn auth_failure(a: &Answer) -> Option<Fail> {
    if a.status != 401 && a.status != 403 {
        return None;
    }
    let why = if a.status == 401 {
        "the backend does not know this token"
    } else {
        "this token may not play"
    };
    Some(fail(
        EXIT_AUTH,
        "auth",
        format!(
            "{why} ({} {}); horst play needs an agent token with the play scope: \
             create one with `horst admin token create --scopes play --name <name>` \
             and pass it as --token or HORST_AGENT_TOKEN",
            a.status,
            a.message()
        ),
    ))
}

/// A session answer that ends the run (404, 410, other 4xx).
fn lost(id: &str, a: &Answer) -> Fail {
    if let Some(f) = auth_failure(a) {
        return f;
    }
    let m = match a.status {
        404 => format!("session {id} does not exist ({})", a.message()),
        410 => format!(
            "session {id} is gone: the backend restarted ({}); run horst play again for a new table",
            a.message()
        ),
        _ => format!("session {id}: {}", a.status_line()),
    };
    fail(EXIT_FAILED, "session_lost", m)
}

async fn play(
    args: &PlayArgs,
    client: &Client,
    out: &Out,
    current: Arc<Mutex<Progress>>,
) -> Result<(), Fail> {
    let check = retrying(out, "checking the token", || client.check_token()).await?;
    if let Some(f) = auth_failure(&check) {
        return Err(f);
    }
    let (id, snap) = find_and_join(args, client, out).await?;
    current.lock().unwrap().session = Some(id.clone());
    let seed = args.seed.unwrap_or_else(clock_seed);
    out.emit(&Event::Joined {
        session_id: id.clone(),
        game: args.game.clone(),
        player_id: snap.player_id.clone(),
        seat: snap.seat,
        round: snap.round,
        as_name: snap.me().and_then(|p| p.as_name.clone()),
        status: snap.status.as_str().to_string(),
        seed: (args.policy == Policy::Random).then_some(seed),
    });
    let mut agent = Agent::new(args.policy, seed, args.rounds, &id)
        .seeking(args.seek && args.session.is_none());
    let mut snap = snap;
    loop {
        let round = snap.round;
        let (events, next) = agent
            .observe(&snap)
            .map_err(|m| fail(EXIT_FAILED, "failed", m))?;
        out.all(&events);
        current.lock().unwrap().rounds = agent.rounds_done();
        let sid = agent.session_id().to_string();
        match next {
            Next::Poll { since, wait } => {
                let asked = Instant::now();
                let before = snap.version;
                snap = read_state(client, out, &sid, since, wait).await?;
                // A long-poll back at once with nothing new (a proxy that does not hold
                // requests, a server that ignores `wait`): pause instead of asking again at
                // once. Unpaused, an agent alone at a table sent 2,000 polls a second.
                if wait > 0 && snap.version == before && asked.elapsed() < FAST_EMPTY_POLL {
                    tokio::time::sleep(FAST_EMPTY_POLL_PAUSE).await;
                }
            }
            Next::Act { action, turn } => {
                let key = action_key();
                let a = retrying(out, "sending the move", || {
                    client.action(&sid, &action, turn, &key)
                })
                .await?;
                let answer = match a.status {
                    200 => ActionAnswer::Accepted {
                        action_id: a
                            .parse::<ActionResponse>("POST /action")
                            .map_err(|m| fail(EXIT_FAILED, "failed", m))?
                            .action_id,
                    },
                    409 => ActionAnswer::Conflict {
                        code: a.code().to_string(),
                    },
                    400 => ActionAnswer::Refused {
                        message: a.message(),
                    },
                    _ => return Err(lost(&sid, &a)),
                };
                let conflict = matches!(answer, ActionAnswer::Conflict { .. });
                out.all(&with_round(
                    agent.action_answer(&action, turn, answer),
                    round,
                ));
                // A 409 carries the fresh snapshot; anything else: read it (the long-poll
                // returns once the move is resolved or it is our turn again).
                let fresh = a
                    .body
                    .get("snapshot")
                    .filter(|_| conflict)
                    .and_then(|s| serde_json::from_value::<AgentSnapshot>(s.clone()).ok());
                snap = match fresh {
                    Some(s) => s,
                    None => read_state(client, out, &sid, None, agent::POLL_WAIT_SECS).await?,
                };
            }
            Next::Follow { session_id } => {
                current.lock().unwrap().session = Some(session_id.clone());
                // Any player call readies our reserved seat; `/state` is the natural one.
                snap = read_state(client, out, &session_id, None, 0).await?;
            }
            Next::LeaveAndStop { session_id } => {
                let a = retrying(out, "leaving", || client.leave(&session_id)).await?;
                if a.ok() {
                    out.emit(&Event::Left {
                        session_id,
                        why: "rounds played".into(),
                    });
                }
                out.emit(&Event::Done {
                    reason: "rounds_reached".into(),
                    rounds: agent.rounds_done(),
                });
                return Ok(());
            }
            Next::Reseek { session_id } => {
                let a = retrying(out, "leaving", || client.leave(&session_id)).await?;
                if a.ok() {
                    out.emit(&Event::Left {
                        session_id,
                        why: "every other player gave up the rematch; seeking another table".into(),
                    });
                }
                let game = args.game.as_deref().unwrap_or_default();
                // The house opens a table within seconds: wait at least one seek's 25 s.
                let wait = Duration::from_secs(args.wait_for_table.max(25));
                let (id, fresh) =
                    seek_and_join(args, client, out, game, Instant::now() + wait).await?;
                current.lock().unwrap().session = Some(id.clone());
                out.emit(&Event::Joined {
                    session_id: id.clone(),
                    game: args.game.clone(),
                    player_id: fresh.player_id.clone(),
                    seat: fresh.seat,
                    round: fresh.round,
                    as_name: fresh.me().and_then(|p| p.as_name.clone()),
                    status: fresh.status.as_str().to_string(),
                    seed: None,
                });
                agent.moved_to(&id);
                snap = fresh;
            }
            Next::Stop => {
                out.emit(&Event::Done {
                    reason: "series_ended".into(),
                    rounds: agent.rounds_done(),
                });
                return Ok(());
            }
        }
    }
}

async fn read_state(
    client: &Client,
    out: &Out,
    id: &str,
    since: Option<u64>,
    wait: u64,
) -> Result<AgentSnapshot, Fail> {
    let a = retrying(out, "reading the state", || client.state(id, since, wait)).await?;
    if a.ok() {
        a.parse("GET /state")
            .map_err(|m| fail(EXIT_FAILED, "failed", m))
    } else {
        Err(lost(id, &a))
    }
}

/// A join's answer: the snapshot.
fn joined(a: &Answer) -> Result<AgentSnapshot, Fail> {
    a.parse("POST /join")
        .map_err(|m| fail(EXIT_FAILED, "failed", m))
}

/// Joins `--session`, or the first open table of `--game` (trying the next one when a seat
/// was taken meanwhile), polling `/available` for `--wait-for-table` seconds.
async fn find_and_join(
    args: &PlayArgs,
    client: &Client,
    out: &Out,
) -> Result<(String, AgentSnapshot), Fail> {
    let name = args.as_name.as_deref();
    if let Some(id) = &args.session {
        let a = retrying(out, "joining", || client.join(id, name)).await?;
        if a.ok() {
            return Ok((id.clone(), joined(&a)?));
        }
        if let Some(f) = auth_failure(&a) {
            return Err(f);
        }
        return Err(fail(
            EXIT_NO_TABLE,
            "no_table",
            format!("cannot join {id}: {} ({})", a.message(), a.code()),
        ));
    }
    let game = args.game.as_deref().unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(args.wait_for_table);
    if args.seek {
        return seek_and_join(args, client, out, game, deadline).await;
    }
    loop {
        let a = retrying(out, "listing tables", || client.available(game, false)).await?;
        if !a.ok() {
            return Err(fail(
                EXIT_FAILED,
                "failed",
                format!("GET /available: {}", a.status_line()),
            ));
        }
        let tables: Vec<String> = a
            .parse::<AvailableList>("GET /available")
            .map_err(|m| fail(EXIT_FAILED, "failed", m))?
            .sessions
            .into_iter()
            .filter(|e| e.joinable)
            .map(|e| e.session_id)
            .collect();
        for id in tables {
            let j = retrying(out, "joining", || client.join(&id, name)).await?;
            if j.ok() {
                return Ok((id, joined(&j)?));
            }
            if let Some(f) = auth_failure(&j) {
                return Err(f);
            }
            // 409 full / in_progress / reserved / finished, 404/410: someone was quicker.
        }
        if Instant::now() >= deadline {
            return Err(no_table(game, args.wait_for_table, client).await);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `--seek`: `POST /seek` until it seats us or `--wait-for-table` is over (each call waits
/// at most 25 s on the backend).
async fn seek_and_join(
    args: &PlayArgs,
    client: &Client,
    out: &Out,
    game: &str,
    deadline: Instant,
) -> Result<(String, AgentSnapshot), Fail> {
    let name = args.as_name.as_deref();
    loop {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs()
            .min(25);
        let a = retrying(out, "seeking a table", || client.seek(game, name, left)).await?;
        if a.ok() {
            let s = a
                .parse::<SeekResponse>("POST /seek")
                .map_err(|m| fail(EXIT_FAILED, "failed", m))?;
            let snap = match s.snapshot {
                Some(snap) => snap,
                None => read_state(client, out, &s.session_id, None, 0).await?,
            };
            return Ok((s.session_id, snap));
        }
        if let Some(f) = auth_failure(&a) {
            return Err(f);
        }
        // Nobody hosts the game: no use waiting (the message says which games have tables).
        if a.code() == "unknown_game" {
            return Err(no_table(game, 0, client).await);
        }
        if a.code() != "no_table" {
            return Err(fail(
                EXIT_FAILED,
                "failed",
                format!("POST /seek: {}", a.status_line()),
            ));
        }
        if Instant::now() >= deadline {
            return Err(no_table(game, args.wait_for_table, client).await);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// "No table", with what the backend does have so a misspelt game is obvious.
async fn no_table(game: &str, wait_for_table: u64, client: &Client) -> Fail {
    let waited = if wait_for_table > 0 {
        format!(" within {wait_for_table} s")
    } else {
        String::new()
    };
    let running = client
        .available(game, true)
        .await
        .ok()
        .and_then(|a| a.parse::<AvailableList>("GET /available").ok())
        .map_or(0, |l| l.sessions.len());
    if running > 0 {
        return fail(
            EXIT_NO_TABLE,
            "no_table",
            format!(
                "no open {game} table on {}{waited} ({running} running or reserved); try --wait-for-table SECS",
                client.backend()
            ),
        );
    }
    let mut games: Vec<String> = client
        .available_any()
        .await
        .ok()
        .and_then(|a| a.parse::<AvailableList>("GET /available").ok())
        .map(|l| l.sessions.into_iter().filter_map(|e| e.game_id).collect())
        .unwrap_or_default();
    games.sort();
    games.dedup();
    let seen = if games.is_empty() {
        "no game has a table there now".to_string()
    } else {
        format!("games with tables now: {}", games.join(", "))
    };
    fail(
        EXIT_NO_TABLE,
        "no_table",
        format!(
            "no table for game {game:?} on {}{waited}: unknown game, or nobody hosts it now ({seen})",
            client.backend()
        ),
    )
}

/// A fresh `idempotencyKey` for a new action: the process id, the clock and a counter, so
/// no two actions of one run (nor of two runs on one token) share one.
fn action_key() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "hp-{}-{nanos:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A seed when none is given: the clock and the process id.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32)
}
