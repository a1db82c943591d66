//! Every Redis key and pub/sub channel of the session layer, named in one place.
//!
//! - `ses:<id>`: the session hash `{rev, rec}` (`rec` MessagePack; records written before
//!   it have `json` instead); also the name of its wake-up channel (channels are not keys).
//! - `ses:<id>:events`: the agent-visible event log, a list of JSON events.
//! - `ses:<id>:replay`: the replay, a list of JSON lines (`replay.rs`), kept after the end.
//! - `ratings:pending`: zset of finished house games to rate, by when to try next (ms).
//! - `rating:<game>:<agent>`: an agent's Glicko-2 rating in a game (a hash, `rating.rs`).
//! - `rating:<game>:<agent>:history`: its latest rating changes (JSON), newest first.
//! - `rating:<game>:<agent>:think`: its latest thinking times per move (ms), newest first.
//! - `leaderboard:<game>`: zset of rated agents by rating; `leaderboard:games` the set of
//!   games with ratings.
//! - `rating:<game>:excluded`: the agents the operator excluded from a game's ratings.
//! - `rated:<sessionId>`: marks a game whose ratings were written (exactly once).
//! - `seek:<game>`: the seek lock of a game (one seeker at a time picks a table).
//! - `sessions:open`: the set of unfinished session ids (`/available`).
//! - `sessions:boot`: the store's boot tag (ids from another tag answer 410).
//! - `delayed`: the delayed set shared with other features (`horst_store::DelayedSet`).

use horst_store::Store;

pub(crate) fn session(store: &Store, id: &str) -> String {
    store.key(&format!("ses:{id}"))
}

pub(crate) fn events(store: &Store, id: &str) -> String {
    store.key(&format!("ses:{id}:events"))
}

pub(crate) fn open(store: &Store) -> String {
    store.key("sessions:open")
}

pub(crate) fn boot(store: &Store) -> String {
    store.key("sessions:boot")
}

/// The wake-up channel of a session.
pub(crate) fn channel(store: &Store, id: &str) -> String {
    session(store, id)
}

/// The pattern every process's pub/sub listener subscribes to.
pub(crate) fn channel_pattern(store: &Store) -> String {
    store.key("ses:*")
}

pub(crate) fn replay(store: &Store, id: &str) -> String {
    store.key(&format!("ses:{id}:replay"))
}

pub(crate) fn ratings_pending(store: &Store) -> String {
    store.key("ratings:pending")
}

pub(crate) fn rating(store: &Store, game: &str, agent: &str) -> String {
    store.key(&format!("rating:{game}:{agent}"))
}

pub(crate) fn rating_history(store: &Store, game: &str, agent: &str) -> String {
    store.key(&format!("rating:{game}:{agent}:history"))
}

pub(crate) fn rating_think(store: &Store, game: &str, agent: &str) -> String {
    store.key(&format!("rating:{game}:{agent}:think"))
}

pub(crate) fn leaderboard(store: &Store, game: &str) -> String {
    store.key(&format!("leaderboard:{game}"))
}

pub(crate) fn leaderboard_games(store: &Store) -> String {
    store.key("leaderboard:games")
}

pub(crate) fn rated(store: &Store, session_id: &str) -> String {
    store.key(&format!("rated:{session_id}"))
}

pub(crate) fn seek_lock(store: &Store, game: &str) -> String {
    store.key(&format!("seek:{game}"))
}

pub(crate) fn rating_excluded(store: &Store, game: &str) -> String {
    store.key(&format!("rating:{game}:excluded"))
}
