//! The bridge API (protocol section 3): what a host (browser bridge, house host, an agent's
//! server) calls. Auth: a user JWT or an agent token with the `host` scope; only the
//! session's host may call `/sessions/:id/*`.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use axum::Router;
use horst_identity::auth::Identity;
use horst_rcadia::store::Step;
use horst_rcadia::wait::MAX_WAIT;
use horst_rcadia::SessionRef;
use horst_sessions::wire::{OpsResponse, PendingActionsResponse, RematchResponse, V1OkResponse};
use horst_sessions::{Event, GameInfo, HostKind, NewSession, Op, Reply, Session};
use serde_json::Value;

use crate::extract::{ClientAddr, Host, Json, Path};
use crate::poll_params::{u64_param, wait_param, QueryParams};
use crate::{ApiCode, ApiError, AppState};

const BASE: &str = "/api/v1/agent/bridge/sessions";

/// Largest request body of the bridge API (`/sessions`, `/ops`, the v1 single-op
/// endpoints). Each state, observation and legal-actions list within is limited on its own
/// (`horst_sessions::ops::MAX_STATE_BYTES` and the others). A larger body is `413 too_large`.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(BASE, post(create))
        .route(&format!("{BASE}/{{id}}/ops"), post(ops))
        .route(
            &format!("{BASE}/{{id}}/pending-actions"),
            get(pending_actions),
        )
        .route(&format!("{BASE}/{{id}}/rematch"), post(rematch))
        .route(&format!("{BASE}/{{id}}/state"), patch(v1_state))
        .route(&format!("{BASE}/{{id}}/observation"), patch(v1_observation))
        .route(
            &format!("{BASE}/{{id}}/legal-actions"),
            patch(v1_legal_actions),
        )
        .route(&format!("{BASE}/{{id}}/reject-action"), post(v1_reject))
        .route(&format!("{BASE}/{{id}}/end"), post(v1_end))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Who the contract shows as `host` in `/available`: the house is a token created with
/// `--house` (or the identity `sessions.house_identity` names, the older way).
fn host_kind(state: &AppState, who: &Identity) -> HostKind {
    let house = &state.rcadia.settings().house_identity;
    // `sessions.house_identity` names an agent (`agt_...`); a person's id is their name,
    // and a person must never pass for the house (its tables are the rated ones).
    if who.house || (!house.is_empty() && !who.is_user && *house == who.id) {
        HostKind::House
    } else if who.is_user {
        HostKind::Player
    } else {
        HostKind::Agent
    }
}

fn opt_string(body: &Value, field: &str) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= 200 => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::new(
            ApiCode::BadRequest,
            format!("{field} must be a string of at most 200 characters"),
        )),
    }
}

/// A slug: the name's letters and digits in lowercase (any script: `Mühle` is `mühle`,
/// `象棋` is `象棋`), every other run of characters one dash. It only kept ASCII letters and
/// digits, so `Mühle` became `m-hle` and a name in another script had no slug at all.
fn slug(s: &str) -> Option<String> {
    let mut out = String::new();
    for c in s.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    (!out.is_empty()).then_some(out)
}

/// `slug` as one URL path segment: ASCII letters, digits and dashes as they are, every other
/// byte of its UTF-8 percent-encoded (what a browser sends for the slug's own characters).
fn path_segment(slug: &str) -> String {
    let mut out = String::with_capacity(slug.len());
    for b in slug.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

async fn create(
    State(state): State<AppState>,
    Host(who): Host,
    ClientAddr(address): ClientAddr,
    Json(body): Json<Value>,
) -> Result<Response, ApiError> {
    let config = body.get("config").cloned().unwrap_or(Value::Null);
    if !config.is_object() {
        return Err(ApiError::new(
            ApiCode::BadRequest,
            "body must be {\"config\": <the AGENT_CONFIGURE data>, \"gameId\"?, \"gameTitle\"?, \"idempotencyKey\"?}",
        ));
    }
    let game_id = opt_string(&body, "gameId")?;
    let idempotency_key = horst_sessions::retry_key::create_key(&body)?;
    // A title people read (tables list, watch page): cleaned like board text.
    let game_title = opt_string(&body, "gameTitle")?
        .map(|t| horst_text::clean_line(&t))
        .filter(|t| !t.is_empty());
    let game_slug = game_id
        .as_deref()
        .and_then(slug)
        .or_else(|| {
            config
                .get("gameType")
                .and_then(Value::as_str)
                .and_then(slug)
        })
        .or_else(|| game_title.as_deref().and_then(slug));
    let game = GameInfo {
        // Absolute, as in the contract: agents fetch it from wherever they run.
        skill_url: game_slug
            .as_ref()
            .map(|s| format!("{}/games/{}/skill.md", state.public_url, path_segment(s)).into()),
        game_id: game_id.map(Into::into),
        game_title: game_title.map(Into::into),
        game_slug: game_slug.map(Into::into),
    };
    let kind = host_kind(&state, &who);
    limit_tables(&state, &who, address).await?;
    let timings = state.rcadia.settings().timings;
    let make = |session_id, now| {
        Session::create(
            NewSession {
                session_id,
                config: config.clone(),
                host_identity: who.key.clone(),
                host_kind: kind,
                game: game.clone(),
                timings,
            },
            now,
        )
    };
    // A create resent with its `idempotencyKey` is answered with the session the key made.
    let s = match idempotency_key {
        Some(key) => {
            state
                .rcadia
                .create_once(&who.key, &key, &body, make)
                .await?
        }
        None => state.rcadia.create(make).await?,
    };
    Ok((StatusCode::CREATED, Json(s.created_response())).into_response())
}

/// Counts a table a person opens against `horst_rcadia::tables::PERSON` (60 an hour, which
/// their `autoRematch` rounds count against too), then against their network's
/// `tables::NETWORK` (180; in that order: a person past their own bound
/// spends nothing of the network's); 429 `burst` with `Retry-After` past either. Agent
/// tokens are the operator's to bound (`horst admin token limit`): the house opens tables
/// all day.
async fn limit_tables(
    state: &AppState,
    who: &Identity,
    address: std::net::IpAddr,
) -> Result<(), ApiError> {
    use horst_rcadia::tables;
    if !who.is_user {
        return Ok(());
    }
    let network = horst_identity::accounts::network_of(address);
    let bounds = [
        (tables::PERSON, who.id.as_str(), "you opened"),
        (
            tables::NETWORK,
            network.as_str(),
            "people of your network opened",
        ),
    ];
    for (limit, subject, who_opened) in bounds {
        ApiError::limited(state.agents.burst.check(&limit, subject).await, |s| {
            format!(
                "{who_opened} {} tables within an hour, as many as are allowed; wait {s} s, or play at an open table (GET /api/v1/agent/sessions/available)",
                limit.max
            )
        })?;
    }
    Ok(())
}

/// Applies host ops (after checking the caller is the host).
async fn publish(
    state: &AppState,
    id: &str,
    who: &Identity,
    ops: Vec<Op>,
    batch_id: Option<String>,
) -> Result<SessionRef, ApiError> {
    let a = state
        .rcadia
        .apply(id, |s| {
            s.authorize_host(&who.key)?;
            Ok(Step::main(Event::PublishOps {
                ops: ops.clone(),
                batch_id: batch_id.clone(),
            }))
        })
        .await?;
    // A rematch created by this apply (autoRematch on `end`) shows in `nextSessionId`.
    if a.created_rematch.is_some() {
        return Ok(state.rcadia.load(id).await?);
    }
    Ok(a.session)
}

async fn ops(
    State(state): State<AppState>,
    Host(who): Host,
    Path(id): Path<String>,
    Json(body): Json<Value>,
) -> Result<Json<OpsResponse>, ApiError> {
    // A resend of the last applied batch (same `batchId`) is answered as applied, not applied.
    let parsed = Op::batch_id(&body).and_then(|b| Ok((Op::parse_batch(&body)?, b)));
    let published = match parsed {
        Ok((ops, batch_id)) => publish(&state, &id, &who, ops, batch_id).await,
        Err(e) => Err(e.into()),
    };
    match published {
        Ok(s) => Ok(Json(s.ops_response())),
        Err(e) => Err(refused_host_call(&state, &id, &who, e).await),
    }
}

/// A call of the session's host refused as a bad request (400) or too large (413) is still
/// a sign of the host's life (section 3: the host is alive while it polls, "/ops counts
/// too"): it is recorded before the refusal is answered, so a host whose batch holds one
/// malformed op does not have its clocks stopped and the table ended as `host_disconnected`
/// while every call it makes is refused. Anyone else's call records nothing.
async fn refused_host_call(state: &AppState, id: &str, who: &Identity, e: ApiError) -> ApiError {
    if matches!(e.status().as_u16(), 400 | 413) {
        let _ = state
            .rcadia
            .apply(id, |s| {
                s.authorize_host(&who.key)?;
                Ok(Step::main(Event::HostSeen))
            })
            .await;
    }
    e
}

async fn v1(
    state: AppState,
    who: std::sync::Arc<Identity>,
    id: String,
    body: Value,
    endpoint: &str,
) -> Result<Json<V1OkResponse>, ApiError> {
    let published = match Op::from_v1(endpoint, &body) {
        Ok(op) => publish(&state, &id, &who, vec![op], None).await,
        Err(e) => Err(e.into()),
    };
    let s = match published {
        Ok(s) => s,
        Err(e) => return Err(refused_host_call(&state, &id, &who, e).await),
    };
    Ok(Json(match endpoint {
        "reject-action" | "end" => s.v1_ok_response(),
        _ => V1OkResponse {
            next_session_id: None,
            ok: true,
        },
    }))
}

async fn v1_state(
    State(s): State<AppState>,
    Host(who): Host,
    Path(id): Path<String>,
    Json(b): Json<Value>,
) -> Result<Json<V1OkResponse>, ApiError> {
    v1(s, who, id, b, "state").await
}
async fn v1_observation(
    State(s): State<AppState>,
    Host(who): Host,
    Path(id): Path<String>,
    Json(b): Json<Value>,
) -> Result<Json<V1OkResponse>, ApiError> {
    v1(s, who, id, b, "observation").await
}
async fn v1_legal_actions(
    State(s): State<AppState>,
    Host(who): Host,
    Path(id): Path<String>,
    Json(b): Json<Value>,
) -> Result<Json<V1OkResponse>, ApiError> {
    v1(s, who, id, b, "legal-actions").await
}
async fn v1_reject(
    State(s): State<AppState>,
    Host(who): Host,
    Path(id): Path<String>,
    Json(b): Json<Value>,
) -> Result<Json<V1OkResponse>, ApiError> {
    v1(s, who, id, b, "reject-action").await
}
async fn v1_end(
    State(s): State<AppState>,
    Host(who): Host,
    Path(id): Path<String>,
    Json(b): Json<Value>,
) -> Result<Json<V1OkResponse>, ApiError> {
    v1(s, who, id, b, "end").await
}

/// `GET pending-actions?after&wait`: the poll opens in the machine (host liveness counts it),
/// waits for an entry past `after` or the end, then closes and answers what is queued.
///
/// A poll that would change nothing but bookkeeping when it opens
/// (`Session::host_poll_quiet_until`: the host alive, nothing to answer yet) is not stored
/// when it opens, only when it ends, as a poll that answers at once (`wait_ms: 0`): the
/// host's cycle (poll, action, poll answered, ops) is three writes, not four. Such a poll is
/// stored as open after all should it still wait when the host's liveness as stored has used
/// half its window, so it keeps the host alive as a stored one does.
async fn pending_actions(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Host(who): Host,
    q: QueryParams,
) -> Result<Json<PendingActionsResponse>, ApiError> {
    let params = u64_param(&q, "after").and_then(|after| Ok((after, wait_param(&q)?)));
    let (after, wait) = match params {
        Ok((after, wait)) => (after, wait.min(MAX_WAIT)),
        Err(e) => return Err(refused_host_call(&state, &id, &who, e).await),
    };
    let started = tokio::time::Instant::now();
    // Subscribed before the poll opens, so an entry queued in between wakes the wait.
    let sub = state.rcadia.subscribe(&id);
    let now = state.rcadia.now_ms().await?;
    let wait_ms = wait.as_millis() as u64;
    // `Some(until)` once the apply found a poll that need not be stored yet.
    let mut quiet: Option<u64> = None;
    let a = state
        .rcadia
        .apply(&id, |s| {
            s.authorize_host(&who.key)?;
            quiet = (wait_ms > 0)
                .then(|| s.host_poll_quiet_until(after, now))
                .flatten();
            Ok(match quiet {
                Some(_) => Step::default(),
                None => Step::main(Event::HostPoll { after, wait_ms }),
            })
        })
        .await;
    let a = match a {
        Ok(a) => a,
        Err(e) => return Err(refused_host_call(&state, &id, &who, e.into()).await),
    };
    let session = a.session;
    if let Some(until) = quiet {
        // Wait unstored until the poll must count as open (or its end, if sooner).
        let quiet_for = std::time::Duration::from_millis(until.saturating_sub(now)).min(wait);
        let mut guard = OpenPoll {
            state: Some(state.clone()),
            id: id.clone(),
            counted: false,
        };
        let waited = state
            .rcadia
            .wait_from(sub, &id, session, quiet_for, |s| s.host_poll_ready(after))
            .await;
        guard.state = None;
        let left = wait.saturating_sub(started.elapsed());
        let ready = waited.as_ref().is_ok_and(|s| s.host_poll_ready(after));
        if ready || left.is_zero() || waited.is_err() {
            // Ended (or failed) before it had to count as open: answered as a poll that
            // returns at once, which stores the host's sign of life and the delivery.
            let done = answer_now(&state, &id, after).await?;
            waited?;
            return Ok(done);
        }
        // Still waiting: store the poll as open for the rest of its wait. The guard is armed
        // as for an open poll before the apply: a client that leaves while the apply is under
        // way (stored or not) has the poll closed, where it stayed open for the rest of its
        // wait and kept a gone host alive (`rcadia_clocks::a_host_poll_whose_client_left_...`
        // failed 1 run in 4: its client leaves as the quiet half ends). Closing a poll that was
        // not stored only records a sign of life (the count never goes below zero).
        guard.state = Some(state.clone());
        guard.counted = true;
        let sub = state.rcadia.subscribe(&id);
        let a = state
            .rcadia
            .apply(&id, |_| {
                Ok(Step::main(Event::HostPoll {
                    after,
                    wait_ms: left.as_millis() as u64,
                }))
            })
            .await?;
        guard.state = None;
        let open = match a.outcome.reply {
            Reply::Entries { entries, poll_open } if !poll_open => {
                return Ok(Json(a.session.pending_actions_response(entries)));
            }
            Reply::Entries { .. } => true,
            _ => false,
        };
        if !open {
            return Ok(Json(a.session.pending_actions_response(Vec::new())));
        }
        return wait_open(&state, sub, &id, a.session, left, after).await;
    }
    let (entries, open) = match a.outcome.reply {
        Reply::Entries { entries, poll_open } => (entries, poll_open),
        _ => (Vec::new(), false),
    };
    if !open {
        return Ok(Json(session.pending_actions_response(entries)));
    }
    wait_open(&state, sub, &id, session, wait, after).await
}

/// The answer of a poll that does not wait (`wait_ms: 0`), or of one that never counted as
/// open: acknowledges `after`, marks what it returns delivered.
async fn answer_now(
    state: &AppState,
    id: &str,
    after: Option<u64>,
) -> Result<Json<PendingActionsResponse>, ApiError> {
    let a = state
        .rcadia
        .apply(id, |_| {
            Ok(Step::main(Event::HostPoll { after, wait_ms: 0 }))
        })
        .await?;
    let entries = match a.outcome.reply {
        Reply::Entries { entries, .. } => entries,
        _ => Vec::new(),
    };
    Ok(Json(a.session.pending_actions_response(entries)))
}

/// Waits out a poll stored as open (`HostPoll` answered `poll_open`), then closes it.
async fn wait_open(
    state: &AppState,
    sub: horst_rcadia::wait::SessionSubscription,
    id: &str,
    session: SessionRef,
    wait: std::time::Duration,
    after: Option<u64>,
) -> Result<Json<PendingActionsResponse>, ApiError> {
    let mut guard = OpenPoll {
        state: Some(state.clone()),
        id: id.to_string(),
        counted: true,
    };
    // Close the poll even if the wait fails, so the host's liveness does not stick.
    let waited = state
        .rcadia
        .wait_from(sub, id, session, wait, |s| s.host_poll_ready(after))
        .await;
    guard.state = None;
    let done = state
        .rcadia
        .apply(id, |_| Ok(Step::main(Event::HostPollDone { after })))
        .await?;
    waited?;
    let entries = match done.outcome.reply {
        Reply::Entries { entries, .. } => entries,
        _ => Vec::new(),
    };
    Ok(Json(done.session.pending_actions_response(entries)))
}

/// A host long-poll held open. Dropped while still armed, the request was cancelled (its
/// client closed the connection: a host tab closed mid-poll), and axum never runs the rest of
/// the handler: the poll is closed here instead. Without this a poll counted open stayed so
/// until its `wait` ran out, so the host stayed "alive" and the on-turn agent's clock kept
/// running for up to 25 s after the host was gone (the contract: alive while a poll is open
/// or one finished in the last 20 s). A poll not counted open is ended as a sign of life.
struct OpenPoll {
    /// `None` once the handler closes the poll itself.
    state: Option<AppState>,
    id: String,
    /// The poll is stored as open (`HostPoll` answered `poll_open`), not waiting unstored.
    counted: bool,
}

impl Drop for OpenPoll {
    fn drop(&mut self) {
        let Some(state) = self.state.take() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let id = std::mem::take(&mut self.id);
        let event = if self.counted {
            Event::HostPollAbandoned
        } else {
            Event::HostSeen
        };
        rt.spawn(async move {
            // A session gone meanwhile has nothing to close.
            let _ = state
                .rcadia
                .apply(&id, |_| Ok(Step::main(event.clone())))
                .await;
        });
    }
}

async fn rematch(
    State(state): State<AppState>,
    Host(who): Host,
    ClientAddr(address): ClientAddr,
    Path(id): Path<String>,
) -> Result<Json<RematchResponse>, ApiError> {
    // Counted before the session is read: a rematch may open a table.
    limit_tables(&state, &who, address).await?;
    let a = state
        .rcadia
        .apply(&id, |s| {
            s.authorize_host(&who.key)?;
            Ok(Step::main(Event::Rematch))
        })
        .await?;
    let next = match (a.outcome.reply, a.created_rematch) {
        (
            Reply::Rematch {
                existing: Some(next),
            },
            _,
        ) => next,
        (_, Some(created)) => created,
        _ => {
            return Err(ApiError::internal(format!(
                "session {id}: rematch neither found nor created"
            )))
        }
    };
    let next = state.rcadia.load(&next).await?;
    Ok(Json(next.rematch_response()))
}
