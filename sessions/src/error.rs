//! Protocol errors: a stable machine code (which fixes the HTTP status) and a human message
//! that says how to fix the request.

use serde::Serialize;
use serde_json::Value;

/// The codes the RCADIA contract (and this implementation's readings of it) answer with.
/// The wire string is the serde name; [`ProtocolCode::as_str`] spells the same and
/// [`ProtocolCode::status`] is the one HTTP status of each, both exhaustive matches, so a new
/// code does not compile until it has both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolCode {
    /// A malformed body, id, config or op.
    BadRequest,
    /// A published state, observation or batch over its byte limit.
    TooLarge,
    /// The caller has no seat here (never joined, or left).
    NotAPlayer,
    /// A host endpoint called by someone else.
    NotTheHost,
    /// The game is over.
    Finished,
    /// Join refused: the game is running.
    InProgress,
    /// Join refused: the seats are reserved for the previous round's players.
    Reserved,
    /// Join refused: every seat is taken.
    Full,
    /// A generated player id already exists (the caller retries).
    IdCollision,
    /// An action type starting with `__` (platform messages).
    ReservedAction,
    /// An action before the game started.
    NotActive,
    /// An action while the caller's previous one awaits its outcome.
    ActionPending,
    /// An action for a turn that is over.
    StaleTurn,
    /// An action out of turn.
    NotYourTurn,
    /// A rematch link to another session than the one already linked.
    AlreadyLinked,
    /// Rematch: v1 games have none.
    LegacySession,
    /// Rematch: the game is still running.
    NotFinished,
    /// Rematch: the session ended because its host disconnected.
    HostDisconnected,
    /// Rematch: the session ended because its host left.
    HostLeft,
    /// Rematch: every player left.
    NoPlayers,
    /// Rematch: an operator ended the session.
    EndedByOperator,
    /// A create resent with an `idempotencyKey` its host used for another body, or an action
    /// sent with the key of the player's latest action that is another move.
    IdempotencyKeyReused,
}

impl ProtocolCode {
    /// Every code, for tests and for labels.
    pub const ALL: [ProtocolCode; 22] = [
        ProtocolCode::BadRequest,
        ProtocolCode::TooLarge,
        ProtocolCode::NotAPlayer,
        ProtocolCode::NotTheHost,
        ProtocolCode::Finished,
        ProtocolCode::InProgress,
        ProtocolCode::Reserved,
        ProtocolCode::Full,
        ProtocolCode::IdCollision,
        ProtocolCode::ReservedAction,
        ProtocolCode::NotActive,
        ProtocolCode::ActionPending,
        ProtocolCode::StaleTurn,
        ProtocolCode::NotYourTurn,
        ProtocolCode::AlreadyLinked,
        ProtocolCode::LegacySession,
        ProtocolCode::NotFinished,
        ProtocolCode::HostDisconnected,
        ProtocolCode::HostLeft,
        ProtocolCode::NoPlayers,
        ProtocolCode::EndedByOperator,
        ProtocolCode::IdempotencyKeyReused,
    ];

    /// The HTTP status the protocol gives this code.
    pub const fn status(self) -> u16 {
        use ProtocolCode as C;
        match self {
            C::BadRequest | C::ReservedAction => 400,
            C::NotAPlayer | C::NotTheHost => 403,
            C::TooLarge => 413,
            C::Finished
            | C::InProgress
            | C::Reserved
            | C::Full
            | C::NotActive
            | C::ActionPending
            | C::StaleTurn
            | C::NotYourTurn
            | C::AlreadyLinked
            | C::LegacySession
            | C::NotFinished
            | C::HostDisconnected
            | C::HostLeft
            | C::NoPlayers
            | C::EndedByOperator
            | C::IdempotencyKeyReused => 409,
            C::IdCollision => 500,
        }
    }

    /// The wire string (the serde name).
    pub const fn as_str(self) -> &'static str {
        use ProtocolCode as C;
        match self {
            C::BadRequest => "bad_request",
            C::TooLarge => "too_large",
            C::NotAPlayer => "not_a_player",
            C::NotTheHost => "not_the_host",
            C::Finished => "finished",
            C::InProgress => "in_progress",
            C::Reserved => "reserved",
            C::Full => "full",
            C::IdCollision => "id_collision",
            C::ReservedAction => "reserved_action",
            C::NotActive => "not_active",
            C::ActionPending => "action_pending",
            C::StaleTurn => "stale_turn",
            C::NotYourTurn => "not_your_turn",
            C::AlreadyLinked => "already_linked",
            C::LegacySession => "legacy_session",
            C::NotFinished => "not_finished",
            C::HostDisconnected => "host_disconnected",
            C::HostLeft => "host_left",
            C::NoPlayers => "no_players",
            C::EndedByOperator => "ended_by_operator",
            C::IdempotencyKeyReused => "idempotency_key_reused",
        }
    }
}

impl std::fmt::Display for ProtocolCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// So a test (or a caller) can compare a code with its wire string.
impl PartialEq<&str> for ProtocolCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// An error the contract defines. The HTTP layer answers `status()` with `{ error, code }`
/// (and, for the 409s of `POST /action`, adds the caller's snapshot).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} {code}: {message}", code.status())]
pub struct ProtocolError {
    pub code: ProtocolCode,
    pub message: String,
}

/// The `{ error, code }` body of section 7.
#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    code: ProtocolCode,
}

impl ProtocolError {
    pub fn new(code: ProtocolCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The HTTP status, fixed by the code.
    pub const fn status(&self) -> u16 {
        self.code.status()
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ProtocolCode::BadRequest, message)
    }

    pub fn not_a_player() -> Self {
        Self::new(
            ProtocolCode::NotAPlayer,
            "you are not a player in this session; join it first",
        )
    }

    pub fn not_the_host() -> Self {
        Self::new(
            ProtocolCode::NotTheHost,
            "only the session's host may call this endpoint",
        )
    }

    /// The `{ error, code }` body of section 7.
    pub fn body(&self) -> Value {
        // Two strings cannot fail to serialize.
        serde_json::to_value(Body {
            error: &self.message,
            code: self.code,
        })
        .unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_are_the_serde_names_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in ProtocolCode::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str(), "{c:?}");
            assert!(seen.insert(c.as_str()), "{c:?} twice");
            assert!(matches!(c.status(), 400 | 403 | 409 | 413 | 500), "{c:?}");
        }
    }
}
