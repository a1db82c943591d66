//! The pure state machine of RCADIA agent game sessions (protocol v2, sections 1, 3-7 and 9).
//!
//! # Model
//!
//! A [`Session`] is one game, stored as one JSON value. Everything that happens to it is an
//! [`Event`] applied at an instant: `session.apply(event, now_ms) -> Result<Outcome, _>`.
//! There is no I/O, no clock and no randomness here: time comes in as Unix milliseconds, ids
//! come in from the caller, so the same events at the same instants always give the same
//! session. All turn, clock, outcome, simultaneous, not-turn-based, rematch and legacy rules
//! live here and nowhere else.
//!
//! The [`Outcome`] says what the I/O layer must do:
//! - `stored`: the record changed; write it with compare-and-set on the previous
//!   [`Session::rev`] (retry the whole apply on conflict);
//! - `changed`: [`Session::version`] moved; publish a wake-up for long-polls (agents' `/state`,
//!   `/public`, `/events` and the host's `pending-actions` all wait on it);
//! - `effects`: [`Effect::Schedule`]/[`Effect::Cancel`] deadlines in the delayed set,
//!   [`Effect::CreateRematch`], [`Effect::LeaveSession`], [`Effect::HostEntriesQueued`];
//! - `reply`: the event's answer (joined seat, accepted action, host entries, rematch).
//!
//! Errors are [`ProtocolError`]s carrying the contract's status and code; on error the session
//! is left exactly as it was.
//!
//! ## Time
//!
//! Each time-based rule is a [`TimerKind`]: the turn deadline (`Clock`), an unconfirmed action
//! (`Unconfirmed`), the host stopping to count as alive (`HostAlive`), the host being gone
//! (`HostGone`), the rematch reservation (`Reservation`) and the table starting
//! (`Activation`). After every apply the machine compares what is due next with the armed
//! timers and emits `Schedule`/`Cancel` for the difference; each armed deadline carries a fresh
//! `generation`. When one falls due the I/O layer sends `Event::TimerFired { kind, generation }`;
//! a generation that is no longer armed is a no-op (the turn moved on). Every apply first runs
//! all transitions that fell due before `now`, in order and each at its own instant, so a late
//! or lost timer never changes the outcome, only its latency; `Event::Tick` catches up without
//! doing anything else, and [`Session::armed_deadlines`] re-fills a lost delayed set.
//!
//! # Where the contract left room, and what we chose
//!
//! - **Two counters.** `version` moves on every change someone can observe (the contract's
//!   version); `rev` moves on every write, including host liveness refreshes and delivery
//!   marks, and is what the store compares-and-sets on. A host poll thus never wakes agents.
//! - **Pending actions are not struck, and keep the deadline.** A player with an action
//!   pending is never struck, but the clock keeps running: after a rejection the player is
//!   back on turn with exactly the deadline they had ("the same deadline"), the time the game
//!   took to answer included. If that deadline passed while the action was pending, the strike
//!   falls the moment they are back (rejected or unconfirmed) and the next full turn counts
//!   from then. Only a host that is not alive pauses the clock; a paused clock shows
//!   `deadline: null`.
//! - **Time nobody could act in.** The contract's clocks assume the platform answers. Time in
//!   which no process could reach the store (a stall of Redis) is charged to nobody:
//!   [`Event::Outage`] runs what fell due before it, then moves every running wait (the turn
//!   clock, the host's windows, unconfirmed actions, the reservation, the lobby fill) past it,
//!   so agents see `deadline` move later by the outage and a move resent after it is taken.
//! - **Host liveness.** A poll open counts until it ends or until the end it announced
//!   (`wait`), so a poll whose API process died stops counting. "Gone for 90 s" counts from the
//!   last sign of life (last poll end or `/ops`), not from the moment it stopped being alive.
//!   While the host is not alive the clock is paused (the remaining time is kept).
//! - **Turn counting.** The turn moves at most once per `/ops` batch, decided after the whole
//!   batch: when the on-turn set changed, or the on-turn player got new legal actions while an
//!   action of theirs was delivered (multi-step). Clearing the on-turn player's legal actions
//!   (`[]` or `null`) leaves nobody on turn, which also moves the turn. An action still queued
//!   for the host when the turn moves stays pending (the game has not seen it).
//! - **Before the game's first publish.** In a sequential game, between `game_start` and the
//!   host's first `state` or `legal_actions` op after it, nobody is on turn: `yourTurn` is
//!   false, `waitingFor` is `"host"`, `POST /action` answers `409 not_your_turn`, and no clock
//!   runs. The game has not said whose move it is yet (publishes before `game_start` do not
//!   count: they describe the lobby).
//! - **Games that never publish legal actions.** Once such a game has published its first
//!   state after `game_start` (simultaneous and not-turn-based games: from `game_start`),
//!   everyone may act (one pending action each, `legalActions: []`) and no clock runs, since
//!   nobody is on turn; in turn-based games the next `state` publish applies delivered actions
//!   and moves the turn. A game that publishes nothing at all after `game_start` cannot be
//!   played: its players wait for the host until it does (or its host goes away).
//! - **Simultaneous.** The turn advances on the next `state` or `legal_actions` op after the
//!   release was delivered, unless that batch also rejects something (the game is still
//!   settling the released turn; the rejected player resubmits straight to the game). A held
//!   action left behind when the turn moves becomes `unconfirmed`. A held action shows
//!   `waitingFor: "opponent"`. If several players reach the final strike at once, `winner` is
//!   null, `forfeitedBy` names the lowest seat and `forfeitedByAll` all of them (seat order).
//! - **Host queue.** Entries stay queued until acknowledged (`after`), so a host polling
//!   `after=0` gets them again; past 16 delivered unacknowledged entries the oldest count as
//!   acknowledged, except actions still pending (the queue of a host that never acknowledges
//!   stays bounded).
//! - **Retries of `/action`.** An optional `idempotencyKey` (horst's addition): while the
//!   player's latest action, or one of the [`session::EARLIER_KEYED`] keyed actions before
//!   it (`PlayerPast::earlier_keyed`: a retry layer's resend held back past the next move),
//!   carries the same key, a request with it is that action again (its id, turn and
//!   outcome, the latter from the event log for an earlier one), so a retry is no second
//!   move. The same key with another `turn` or another action (a resolved action's body is
//!   not kept, its fingerprint is) is a new move under a reused key:
//!   `409 idempotency_key_reused`. An older key is not known: a new move. Without a key, a request with the latest action's
//!   body (its fingerprint is kept) and the same or no `turn` may be its resend: a refusal
//!   (`action_pending`, `stale_turn`, `not_your_turn`, `finished`) names that action and its
//!   outcome, and in a game that is not turn-based the same action with the `turn` of an
//!   applied one is refused `409 stale_turn` (taken, it was a second move). With no `turn`
//!   and no key a resend cannot be told from the same move made again: it is taken.
//! - **Outcomes of earlier actions.** The record keeps each player's latest action only. A
//!   `POST /action?wait` about an action its player has moved past (resolved, then another
//!   accepted: [`Session::action_superseded`]) is answered from the event log
//!   ([`Session::logged_outcome`]), not as `pending` for the rest of its wait.
//! - **Retries of `/ops`.** An optional `batchId` (horst's addition): a batch carrying the
//!   id of the session's last applied batch (`last_batch_id`; the contract allows one `/ops`
//!   in flight per host, so the last is enough) is answered as applied without being applied
//!   again: a resend after a lost answer does not re-publish `state` and `legal_actions`
//!   over an action the game has received since. A batch without an id clears it.
//! - **Retries of a create.** An optional `idempotencyKey` (horst's addition, checked here by
//!   the rule `batchId` follows, `retry_key`): the I/O layer answers a create resent with it
//!   with the session the first one made (`Rcadia::create_once`).
//! - **Leaving twice.** A player removed from a waiting table (left, opted out, reservation
//!   expired) is remembered (the latest 64): a repeated leave is answered as done.
//! - **Rejections.** A `reject` naming another player's action (pending or latest) is
//!   refused (400). A `reject` with an `actionId` resolves that pending action; without one
//!   (v1 games) it resolves whatever the player has pending with the game. A rejection of an
//!   action already reported `unconfirmed` turns its `lastAction` into `rejected` (the truth
//!   arrived late); so does the game moving on from its turn (the turn advances while its
//!   player sent nothing newer): it was applied, late, and its player's strikes are cleared,
//!   unless that player was struck after it (`PlayerPast::struck_at_ms`; a game passes a
//!   struck player's turn, so the move on may be the timeout's): then it stays unconfirmed.
//!   A record of the previous release does not keep the strike's time: standing strikes
//!   count as struck after. Every rejection is listed for the turn (the latest 50), once: a reject
//!   naming an action already rejected (a resent or repeated answer) or applied is accepted
//!   and changes nothing, and so is one naming an action that is neither the player's pending
//!   one nor their latest (an older move's late answer, or the previous round's id the SDK
//!   still holds). After the end, `legal_actions` and `reject` ops are accepted and change
//!   nothing (a batch in flight when the platform ended the game). An `end` whose `result.winner`
//!   is neither `null` nor a player's id ends the game all the same (not rated). A rejection's
//!   `reason` is for the rejected player only: `/events` shows other players `reason: null`
//!   (the status `rejected` stays visible), `/public` shows no rejections at all.
//! - **Not turn-based.** No `not_your_turn`/`stale_turn` checks and no clock, but still one
//!   pending action per player (so each gets an outcome); any `state`/`legal_actions` publish
//!   applies delivered actions and moves `turn`.
//! - **Strikes.** `maxTurnTimeouts: 0` is read as 1. Every strike reports `final` as "this
//!   player reached `maxTurnTimeouts`". With `forfeitOnTimeout: false` the clock stops after
//!   the final strike until the turn moves: the game decides what happens.
//! - **Leaving.** Leaving an active game ends it for everyone (`reason: "left"`, `winner` the
//!   other player in a 2-player game); v2 hosts get `session_end`. Leaving a waiting table
//!   frees the seat and renumbers the rest (seats stay 0..n in join order). Leaving a finished
//!   session opts out of the rematch and is forwarded to the next round if it exists
//!   (`Event::OptOut`): it frees the seat there while that round has not started, passes on
//!   from a finished one, and leaves a round under way alone. The contract's opt-out is of
//!   the reserved round; a late leave of an old round is no forfeit of the current one.
//! - **When a table starts.** Every seated player ready and at least `minPlayers`, and either
//!   the table is full, or it is a reserved rematch, or nobody joined for
//!   `Timings::lobby_fill_ms` (10 s). A rematch never starts before 3 s after the previous end.
//! - **Reserved rematches.** Newcomers may take seats nobody holds (a player opted out); when
//!   all seats are held they get `409 reserved` while a holder has not shown up, and `409 full`
//!   once everyone is ready (the table only waits for its 3 s start delay). `/available` lists
//!   reserved sessions only with `all=1`; a rematch counts as reserved only while a seated
//!   player has not shown up (with everyone seated ready, a seat given up is an open table's).
//!   An explicit `rematch()` seats the players who did not
//!   leave; `autoRematch` needs everyone, a game that actually started, and an end other than
//!   `host_disconnected` or the host's `end` with reason `host_left`. After those two ends an
//!   explicit rematch is refused too (`409 host_disconnected` / `409 host_left`): the host is
//!   gone.
//! - **Ending.** The game's `end` op ends with `end_reason` = its `reason` or `"game_over"`;
//!   delivered pending actions become `applied`, undelivered ones `unconfirmed` and are taken
//!   out of the host queue. After the end, `state`/`observation` ops still update the final
//!   picture and turn ops are ignored; a second `end` is a no-op.
//! - **Defaults.** `minPlayers` 2, `maxPlayers` = `minPlayers`, `turnBased` true,
//!   `simultaneous` false, `forfeitOnTimeout` true, `autoRematch` false; `turnTimeout` may be
//!   fractional seconds. At most [`config::MAX_SEATS`] seats and a 64-character `asName`.
//! - **Errors ordering on `/action`.** 403 not a player, 400 `reserved_action`, 409 `finished`
//!   / `not_active`, `action_pending`, `stale_turn`, `not_your_turn`.
//! - **Events log.** `player_joined`, `player_ready`, `player_left`, `reservation_expired`,
//!   `new_series`, `game_start`, `turn`, `action` (outcomes, never the action itself, so
//!   nothing hidden leaks), `timeout`, `game_over`, `rematch`; the last 500 are kept.
//!   `GET /events?since=i` returns the events with `index >= i` plus `next` (the `since` to
//!   send next) and `first` (the oldest index still kept).
//! - **Snapshot details.** `legalActions` is `[]` on your turn in a game that never published
//!   any; `deadline` is the turn's deadline for every player (null while paused or stopped);
//!   `rejections` entries are `{ actionId, reason, turn, at }`.
//!
//! - **`waitingFor`.** `"host"` for everyone while the host is not alive (whoever is on turn
//!   too: `yourTurn` stays true, and an action is queued for the host's return), before the
//!   game's first publish, and while nobody is on turn in a turn-based game that uses legal
//!   actions (the game is working out what comes next).
//!
//! # Driving it from the I/O layer
//!
//! 1. Load the record, `apply`, and if `stored`, write it with compare-and-set on the `rev`
//!    read (on conflict reload and apply again; `apply` is deterministic). Then carry out the
//!    effects and, if `changed`, publish the session's wake-up channel. If
//!    [`Session::is_due`]`(now)`, apply `Event::Tick` (and write) before a request's event, so
//!    an error answer never describes a state the store does not have yet. Before that,
//!    apply [`Event::Outage`] for every outage that ended after [`Session::now_ms`].
//! 2. Authorise first: [`Session::authorize_host`] for bridge calls,
//!    [`Session::authorize_player`] (identity -> `playerId`) for player calls. Send
//!    [`Event::PlayerSeen`] for every player request on a waiting session: that is what readies
//!    a reserved seat, even for a call that then fails (errors roll the whole apply back).
//! 3. `404` vs `410`: [`parse_session_id`] gives the boot tag of an unknown id; a well-formed id
//!    from another boot tag answers `410 server_restarted`, anything else `404`.
//! 4. Long-polls subscribe first, then read. `GET /state?wait`: return at once if
//!    [`Session::state_ready_for`], else on each wake-up re-read and return when
//!    [`should_wake`]`(&first, &now, player)`. `POST /action?wait`: until
//!    [`Session::action_outcome`] is no longer pending. `?since=<version>`:
//!    [`Session::since_poll_ready`] (any other version, or the game over).
//!    `/events`: [`Session::has_events_since`]. `pending-actions`: apply
//!    `HostPoll { after, wait_ms }`; if the reply says `poll_open`, wait until
//!    [`Session::host_poll_ready`] or the time is up, then apply `HostPollDone { after }` and
//!    answer with its entries via [`Session::pending_actions_response`]. A poll that
//!    [`Session::host_poll_quiet_until`] allows may skip storing its opening: it waits without
//!    it until its end or the instant given (then applies `HostPoll` with the wait left and
//!    goes on as above), and ends as a poll that does not wait (`HostPoll { after, wait_ms: 0 }`).
//! 5. Timers: keep each [`Deadline`] in the delayed set (member = session, kind key, turn,
//!    generation; score = `at_ms`); when due, apply `TimerFired { kind, generation }`.
//! 6. [`Effect::CreateRematch`]: mint an id, `Session::new_rematch(&finished, id, now)`, apply
//!    `RematchLinked` to the finished session and write both (the new one first, so a visible
//!    `nextSessionId` always resolves); schedule the new session's deadlines.
//!    [`Effect::LeaveSession`]: apply `Leave` to the named session.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod config;
pub mod error;
pub mod ids;
pub mod iso;
pub mod machine;
pub mod ops;
pub mod retry_key;
pub mod session;
pub mod shared;
pub mod views;
pub mod wire;

#[cfg(test)]
mod tests;

pub use config::{whole_f64, whole_number, Rules, Timings};
pub use error::{ProtocolCode, ProtocolError};
pub use ids::{
    format_player_id, format_session_id, is_player_id, parse_session_id, SessionIdParts,
};
pub use iso::iso8601_ms;
pub use machine::{Effect, Event, Outcome, Reply, OPERATOR_END};
pub use ops::Op;
pub use session::{
    ActionStatus, ArmedTimer, Deadline, GameInfo, HostKind, NewSession, Session, Status, TimerKind,
};
pub use shared::SharedStr;
pub use views::{should_wake, REMATCH_LINK_GRACE_MS};
