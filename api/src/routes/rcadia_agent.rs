//! The agent API (protocol sections 5-7): discovery, seats, the snapshot long-poll, actions,
//! leaving, events and the public spectator view. Auth: an agent token with the `play`
//! scope or a user JWT; `/available` and `/public` are public.

use std::time::Duration;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::Router;
use horst_identity::auth::Identity;
use horst_rcadia::store::Step;
use horst_rcadia::{RcadiaError, ServerTime};
use horst_sessions::wire::{
    ActionResponse, AgentSnapshot, AvailableList, EventsPage, LeaveResponse, PublicView,
};
use horst_sessions::{
    format_player_id, should_wake, ActionStatus, Event, ProtocolError, Reply, Session, Status,
};
use serde_json::Value;

use crate::extract::{Json, Path, Player};
use crate::poll_params::{u64_param, wait_param, whole_number, QueryParams};
use crate::{ApiCode, ApiError, AppState};

const BASE: &str = "/api/v1/agent/sessions";

/// Largest request body of the agent API (`/join`, `/action`): an action is what a game
/// listed as legal, a few hundred bytes in practice. A larger body is `413 too_large`.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(&format!("{BASE}/available"), get(available))
        .route(&format!("{BASE}/{{id}}/join"), post(join))
        .route(&format!("{BASE}/{{id}}/state"), get(state_poll))
        .route(&format!("{BASE}/{{id}}/action"), post(action))
        .route(&format!("{BASE}/{{id}}/leave"), post(leave))
        .route(&format!("{BASE}/{{id}}/events"), get(events))
        .route(&format!("{BASE}/{{id}}/public"), get(public))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

async fn available(
    State(state): State<AppState>,
    q: QueryParams,
) -> Result<Json<AvailableList>, ApiError> {
    let all = matches!(q.get("all").as_deref(), Some("1" | "true" | "yes"));
    let game = q.get("game").filter(|g| !g.trim().is_empty());
    let sessions = state
        .rcadia
        .list_unfinished()
        .await?
        .iter()
        .filter(|s| s.listed_in_available(all))
        .filter(|s| game.as_deref().is_none_or(|g| s.matches_game(g)))
        .map(Session::available_entry)
        .collect();
    Ok(Json(AvailableList { sessions }))
}

/// The caller's seat, readying a reserved seat on a waiting session (any player call does),
/// then `main` built from the player id. 403 for a caller without a seat.
fn player_step(
    s: &Session,
    who: &Identity,
    main: impl FnOnce(String) -> Option<Event>,
) -> Result<Step, ProtocolError> {
    let player_id = s.authorize_player(&who.key)?.to_string();
    let pre = if s.status() == Status::Waiting {
        vec![Event::PlayerSeen {
            player_id: player_id.clone(),
        }]
    } else {
        Vec::new()
    };
    Ok(Step {
        pre,
        main: main(player_id),
    })
}

/// The caller's player id on a loaded session.
fn player_id_of(s: &Session, who: &Identity) -> Result<String, ApiError> {
    Ok(s.authorize_player(&who.key)?.to_string())
}

/// `null` for a caller without a seat.
fn snapshot(s: &Session, player_id: &str) -> Option<AgentSnapshot> {
    s.snapshot(player_id)
}

/// The name a seat is taken under (join and seek): the `asName` given, unless it is blank once
/// cleaned as the table cleans it, which is no name given: then the caller's default name
/// (a token's `--name`; a person's display name, never the account name: none without one).
pub(super) fn seat_name(given: Option<&str>, who: &Identity) -> Option<String> {
    match given {
        Some(n) if !horst_text::clean_line(n).is_empty() => Some(n.to_owned()),
        _ => who.name.clone(),
    }
}

async fn join(
    State(state): State<AppState>,
    Player(who): Player,
    Path(id): Path<String>,
    Json(body): Json<Value>,
) -> Result<Json<Option<AgentSnapshot>>, ApiError> {
    if !(body.is_object() || body.is_null()) {
        return Err(ApiError::new(
            ApiCode::BadRequest,
            "the body must be a JSON object: {} or {\"asName\": \"<the name shown at the table>\"}",
        ));
    }
    let as_name = match body.get("asName") {
        None | Some(Value::Null) => seat_name(None, &who),
        Some(Value::String(n)) => seat_name(Some(n), &who),
        Some(_) => {
            return Err(ApiError::new(
                ApiCode::BadRequest,
                "asName must be a string",
            ))
        }
    };
    horst_rcadia::reference::check_name(&who.key, as_name.as_deref())?;
    let fresh = format_player_id(horst_rcadia::random_u32());
    let a = state
        .rcadia
        .apply(&id, |_| {
            Ok(Step::main(Event::Join {
                player_id: fresh.clone(),
                identity: who.key.clone(),
                as_name: as_name.clone(),
            }))
        })
        .await?;
    let player_id = match a.outcome.reply {
        Reply::Joined { player_id, .. } => player_id,
        _ => player_id_of(&a.session, &who)?,
    };
    Ok(Json(snapshot(&a.session, &player_id)))
}

/// `GET /state?wait&since`: at once if it is your turn or the game is over; else until
/// `should_wake` (or, with `since`, any newer version).
async fn state_poll(
    State(state): State<AppState>,
    Player(who): Player,
    Path(id): Path<String>,
    q: QueryParams,
) -> Result<Json<Option<AgentSnapshot>>, ApiError> {
    let wait = wait_param(&q)?;
    let since = u64_param(&q, "since")?;
    // Subscribed before the read the wait starts from, so no change in between is missed.
    let sub = (!wait.is_zero()).then(|| state.rcadia.subscribe(&id));
    let a = state
        .rcadia
        .apply(&id, |s| player_step(s, &who, |_| None))
        .await?;
    let mut first = a.session;
    if since.is_some_and(|v| v > first.version()) {
        // A version past the one this process holds: none the session ever gave (answered at
        // once), or another process's write this one has not heard of yet (then waited on as
        // any other): Redis tells which, so no agent is handed a version older than its own.
        first = state.rcadia.load_checked(&id).await?;
    }
    let clock = ServerTime::read_now(a.now_ms);
    let pid = player_id_of(&first, &who)?;
    // A game that just ended with autoRematch is not "over" for the poll until its next
    // round is linked: agents must wake up holding nextSessionId (section 6).
    let ready = match since {
        Some(v) => first.since_poll_ready(v, clock.now_ms()),
        None => first.state_ready_for(&pid) && !first.awaiting_rematch(clock.now_ms()),
    };
    let Some(sub) = sub.filter(|_| !ready) else {
        return Ok(Json(snapshot(&first, &pid)));
    };
    let now = state
        .rcadia
        .wait_from(sub, &id, first.clone(), wait, |s| match since {
            Some(v) => s.since_poll_ready(v, clock.now_ms()),
            // Ready again as well: a finished game whose next round never got linked (its
            // creation failed) returns once the link's grace is over, not after the whole
            // wait (the wait re-reads every few seconds, so this is looked at then).
            None => {
                (should_wake(&first, s, &pid) || s.state_ready_for(&pid))
                    && !s.awaiting_rematch(clock.now_ms())
            }
        })
        .await?;
    Ok(Json(snapshot(&now, &pid)))
}

/// Longest `idempotencyKey` of `POST /action`, in characters.
const MAX_KEY_CHARS: usize = 128;

async fn action(
    State(state): State<AppState>,
    Player(who): Player,
    Path(id): Path<String>,
    q: QueryParams,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Result<Json<ActionResponse>, ApiError> {
    let wait = wait_param(&q)?;
    // A null action is no move: the game would get nothing to play, so it is refused like a
    // missing one (an agent that picked from an empty list sends null).
    let Some(act) = body.get("action").filter(|a| !a.is_null()).cloned() else {
        return Err(ApiError::new(
            ApiCode::BadRequest,
            "body must be {\"action\": <one of your legalActions>, \"turn\": <turn from /state>}; \"action\" is missing or null",
        ));
    };
    let turn = match body.get("turn") {
        None | Some(Value::Null) => None,
        Some(t) => Some(whole_number(t).ok_or_else(|| {
            ApiError::new(
                ApiCode::BadRequest,
                "turn must be the non-negative integer `turn` from your last /state",
            )
        })?),
    };
    // Makes a retry safe (a lost answer, a timeout): the same key while it names your latest
    // action answers that action, never a second move.
    let key = match body.get("idempotencyKey") {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) if (1..=MAX_KEY_CHARS).contains(&k.chars().count()) => {
            Some(k.clone())
        }
        Some(_) => {
            return Err(ApiError::new(
                ApiCode::BadRequest,
                format!("idempotencyKey must be a string of 1 to {MAX_KEY_CHARS} characters, fresh for every new action (send the same one only when retrying that action)"),
            ))
        }
    };
    let key = merge_key_header(key, &headers)?;
    let action_id = format!(
        "a_{:08x}{:08x}",
        horst_rcadia::random_u32(),
        horst_rcadia::random_u32()
    );
    let sub = (!wait.is_zero()).then(|| state.rcadia.subscribe(&id));
    let r = state
        .rcadia
        .apply(&id, |s| {
            player_step(s, &who, |player_id| {
                Some(Event::Action {
                    player_id,
                    action: act.clone(),
                    turn,
                    action_id: action_id.clone(),
                    idempotency_key: key.clone(),
                })
            })
        })
        .await;
    match &r {
        Ok(_) => state.rcadia.metrics().action_received(None),
        Err(RcadiaError::Protocol(e, _)) => state.rcadia.metrics().action_received(Some(e.code)),
        Err(_) => {}
    }
    let a = match r {
        Ok(a) => a,
        // 409s carry the caller's snapshot, so an agent can re-sync without another call.
        Err(RcadiaError::Protocol(e, Some(s))) if e.status() == 409 => {
            let body = s
                .player_by_identity(&who.key)
                .and_then(|p| snapshot(&s, &p.player_id))
                .map(serde_json::to_value)
                .transpose()
                .map_err(|e| ApiError::internal(format!("snapshot: {e}")))?;
            return Err(ApiError::protocol_with_snapshot(e, body));
        }
        Err(e) => return Err(e.into()),
    };
    let (action_id, turn) = match a.outcome.reply {
        Reply::ActionAccepted { action_id, turn } => (action_id, turn),
        _ => return Err(ApiError::internal("action accepted without a reply")),
    };
    let pid = player_id_of(&a.session, &who)?;
    // A keyed retry of an action the player has moved past is answered as that action
    // (the machine's `PlayerPast::earlier_keyed`); its outcome is in the event log.
    let superseded = a.session.action_superseded(&pid, &action_id);
    let Some(sub) = sub.filter(|_| !superseded) else {
        let mut v = a.session.action_response(&pid, &action_id, turn);
        if superseded {
            logged_outcome(&state, &id, &pid, &action_id, &mut v).await?;
            if !wait.is_zero() {
                v.snapshot = snapshot(&a.session, &pid);
            }
        }
        return Ok(Json(v));
    };
    let s = state
        .rcadia
        .wait_from(sub, &id, a.session, wait, |s| {
            s.action_outcome(&pid, &action_id).0 != ActionStatus::Pending
                || s.action_superseded(&pid, &action_id)
        })
        .await?;
    let mut v = s.action_response(&pid, &action_id, turn);
    if s.action_superseded(&pid, &action_id) {
        // The player acted again meanwhile (another connection, a client whose own timeout
        // was shorter than `wait`) and the wait never saw this action's outcome in the
        // record, which keeps the latest action only: it was answered `pending` after the
        // whole wait, for an action the game had long applied. The event log has it.
        logged_outcome(&state, &id, &pid, &action_id, &mut v).await?;
    }
    v.snapshot = snapshot(&s, &pid);
    Ok(Json(v))
}

/// `v`'s outcome as the session's event log recorded it, for an action its player has moved
/// past (the record keeps the latest action only); `409 outcome_unknown` when the log no
/// longer holds it.
async fn logged_outcome(
    state: &AppState,
    id: &str,
    pid: &str,
    action_id: &str,
    v: &mut ActionResponse,
) -> Result<(), ApiError> {
    let logged = state.rcadia.load_with_events(id).await?;
    let Some((outcome, reason)) = logged.logged_outcome(pid, action_id) else {
        return Err(ApiError::new(
            ApiCode::OutcomeUnknown,
            format!(
                "your action {action_id} was resolved before your later action and its outcome is older than the events this session keeps; go on from GET /state (lastAction is your latest action)"
            ),
        ));
    };
    v.outcome = outcome;
    v.reason = (outcome == ActionStatus::Rejected).then_some(reason);
    Ok(())
}

/// The `Idempotency-Key` header (the IETF draft's, which generic HTTP clients' retry layers
/// send) is the body's `idempotencyKey` when the body has none: a client that retries with
/// it is answered, not applied twice. Both, and different, is a contradiction (400).
fn merge_key_header(body: Option<String>, headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(h) = headers.get("idempotency-key") else {
        return Ok(body);
    };
    // The draft writes the key as a structured-field string ("..."); bare tokens are common.
    let raw = h.to_str().ok().map(str::trim);
    let header = raw.map(|r| {
        r.strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(r)
    });
    let Some(header) = header.filter(|k| (1..=MAX_KEY_CHARS).contains(&k.chars().count())) else {
        return Err(ApiError::new(
            ApiCode::BadRequest,
            format!("the Idempotency-Key header must be 1 to {MAX_KEY_CHARS} visible ASCII characters, fresh for every new action (the same only when retrying that action); or leave it out"),
        ));
    };
    match body {
        Some(b) if b != header => Err(ApiError::new(
            ApiCode::BadRequest,
            "the Idempotency-Key header and the body's idempotencyKey differ; send one of them, or the same key in both",
        )),
        _ => Ok(Some(header.to_string())),
    }
}

async fn leave(
    State(state): State<AppState>,
    Player(who): Player,
    Path(id): Path<String>,
) -> Result<Json<LeaveResponse>, ApiError> {
    let mut already_left = false;
    let a = state
        .rcadia
        .apply(&id, |s| {
            // A repeated leave (a retry whose first answer was lost, or a leave of a round
            // the caller already opted out of) is done already: it said `not_a_player`
            // "join it first" to someone who had just left.
            // A finished game keeps the seat of a player who left it (forfeited, or opted
            // out of the rematch), marked `left`: a repeat there is done already too.
            already_left = match s.player_by_identity(&who.key) {
                Some(p) => p.left,
                None => s.has_departed(&who.key),
            };
            if already_left {
                return Ok(Step {
                    pre: Vec::new(),
                    main: None,
                });
            }
            let player_id = s.authorize_player(&who.key)?.to_string();
            Ok(Step::main(Event::Leave { player_id }))
        })
        .await?;
    Ok(Json(LeaveResponse {
        already_left,
        ok: true,
        result: a.session.result().cloned(),
        session_id: a.session.session_id().to_string(),
        status: a.session.status(),
    }))
}

async fn events(
    State(state): State<AppState>,
    Player(who): Player,
    Path(id): Path<String>,
    q: QueryParams,
) -> Result<Json<EventsPage>, ApiError> {
    let wait = wait_param(&q)?;
    let since = u64_param(&q, "since")?.unwrap_or(0);
    let a = state
        .rcadia
        .apply(&id, |s| player_step(s, &who, |_| None))
        .await?;
    let pid = player_id_of(&a.session, &who)?;
    let mut first = a.session;
    if since > first.events_next() {
        // As `/state?since`: an index past the log this process holds is asked of Redis
        // before it is answered at once as one the session never gave.
        first = state.rcadia.load_checked(&id).await?;
    }
    if !first.has_events_since(since) && !wait.is_zero() {
        state
            .rcadia
            .wait_until(&id, wait, |s| s.has_events_since(since))
            .await?;
    }
    // The log is stored apart from the record; only this endpoint reads it.
    let s = state.rcadia.load_with_events(&id).await?;
    Ok(Json(s.events_since(since, &pid)))
}

async fn public(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: QueryParams,
) -> Result<Json<PublicView>, ApiError> {
    let wait = wait_param(&q)?;
    let since = u64_param(&q, "since")?;
    let (mut s, now) = state.rcadia.load_at_now(&id).await?;
    let clock = ServerTime::read_now(now);
    // Overdue timers first, as every other route does through `apply`: a due strike or a
    // host gone past its time showed here as still active while /state said finished.
    if s.is_due(now) {
        s = state
            .rcadia
            .apply(&id, |_| Ok(Step::main(Event::Tick)))
            .await?
            .session;
    }
    if since.is_some_and(|v| v > s.version()) {
        // As `/state?since`: a version past the one this process holds is asked of Redis.
        s = state.rcadia.load_checked(&id).await?;
    }
    // As `/state?since`: any change after `since`, or at once on a finished game (spectator
    // pages loop on this; it waited out the whole wait), except while the next round of an
    // automatic rematch is about to be linked.
    let s = match since {
        Some(v) if !s.since_poll_ready(v, clock.now_ms()) && !wait.is_zero() => {
            state
                .rcadia
                .wait_until(&id, wait.min(Duration::from_secs(25)), |s| {
                    s.since_poll_ready(v, clock.now_ms())
                })
                .await?
        }
        _ => s,
    };
    Ok(Json(s.public_view()))
}
