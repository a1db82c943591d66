//! Every Redis key and pub/sub channel of the session layer, named in one place.
//!
//! - `ses:<id>`: the session record, a string `<rev> ~<delta>`, the record (MessagePack) as
//!   a delta against `ses:<id>:base` (`record.rs`; earlier versions: `<rev> <MessagePack>`,
//!   or a hash `{rev, json}`); also the name of its wake-up channel (channels are not keys;
//!   the save script publishes on its KEYS[1]'s name, so the two must stay one name).
//! - `ses:<id>:base`: the record's base, MessagePack as it was at an earlier write, deflated
//!   (`record::pack_base`; earlier versions stored it as it is, which still reads).
//! - `ses:<id>:events`: the agent-visible event log, a list of events in MessagePack
//!   (`record::encode_event`; earlier versions' forms, untagged MessagePack and JSON, still
//!   read).
//! - `ses:<id>:replay`: the replay, a list of lines (`replay::encode_line`: MessagePack, the
//!   times after the first line counted from it; earlier versions' lines, with absolute times
//!   or JSON, still read), kept after the end.
//! - `ratings:pending`: zset of finished house games to rate, by when to try next (ms), one
//!   per bucket (the finishing save adds to it).
//! - `rating:<game>:<agent>`: an agent's Glicko-2 rating in a game (a hash, `rating.rs`).
//! - `rating:<game>:<agent>:history`: its latest rating changes (JSON), newest first.
//! - `rating:<game>:<agent>:think`: its latest thinking times per move (ms), newest first.
//! - `leaderboard:<game>`: zset of ranked agents by rating; `leaderboard:<game>:provisional`
//!   the provisional ones; `leaderboard:<game>:idle` the ranked ones by when idleness makes
//!   them provisional (`:idle:built` once that index is complete); `leaderboard:games` the
//!   set of games with ratings.
//! - `rating:<game>:excluded`: the agents the operator excluded from a game's ratings.
//! - `rated:<sessionId>`: marks a game whose ratings were written (exactly once).
//! - `reference:tables`: the set of tables the house's reference player sits at
//!   (`reference.rs`; its driver plays there).
//! - `seek:<game>`: the seek lock of a game (one seeker at a time picks a table).
//! - `create:<host>:<key>`: a create's `idempotencyKey` of a host, the session id it names and
//!   the body's fingerprint (`create_once.rs`; kept 24 h, on a cluster in a slot of its own).
//! - `sessions:open`: the set of unfinished session ids (`/available`).
//! - `sessions:boot`: the store's boot tag (ids from another tag answer 410).
//! - `delayed`: the delayed set shared with other features (`horst_store::DelayedSet`).
//!
//! On a Redis Cluster a session's keys, and the open-sessions set and the delayed set they
//! are saved with, are in the slot of the session's bucket (`{s3-..}ses:<id>`,
//! `{s3-..}sessions:open`; `Store::key_in_bucket`): one save script touches all four. The
//! clock firer, the rater and `/available` read every bucket. The rating keys (`rating:*`,
//! `leaderboard:*`, `rated:*`) are all in the records group's slot (`Store::key`), so the
//! rating script touches one slot; it does not touch a bucket's `ratings:pending`. On one server there is one bucket and
//! the names are the ones above.

use horst_store::Store;

/// A session's key names as its writes and reads send them, formatted once per session in a
/// process: the process's cached record holds them (`record::Stored::keys`), and the next
/// record of the session takes them over, so a write formats no name.
#[derive(Debug)]
pub(crate) struct SessionKeys {
    pub session: String,
    pub base: String,
    pub events: String,
    pub replay: String,
    /// The open-sessions set of the session's bucket.
    pub open: String,
    /// The delayed set of the session's bucket.
    pub delayed: String,
    pub ratings_pending: String,
    /// A name in the session's slot that no write touches (`store::SaveArgs`).
    pub unused: String,
}

impl SessionKeys {
    /// The names of session `id`'s keys; `delayed` names the delayed set of a bucket.
    pub fn new(store: &Store, id: &str, delayed: impl Fn(usize) -> String) -> SessionKeys {
        let bucket = store.bucket_of(id);
        SessionKeys {
            session: session(store, id),
            base: base(store, id),
            events: events(store, id),
            replay: replay(store, id),
            open: open_in(store, bucket),
            delayed: delayed(bucket),
            ratings_pending: ratings_pending_in(store, bucket),
            unused: store.key_in_bucket(bucket, ""),
        }
    }
}

/// `ses:<id><suffix>`, by hand: `format!` cost every read of a session about 500
/// instructions a name.
fn ses(id: &str, suffix: &str) -> String {
    let mut name = String::with_capacity(4 + id.len() + suffix.len());
    name.push_str("ses:");
    name.push_str(id);
    name.push_str(suffix);
    name
}

pub(crate) fn session(store: &Store, id: &str) -> String {
    store.key_in_bucket(store.bucket_of(id), &ses(id, ""))
}

/// The base of a session's record (`record.rs`: `ses:<id>` is a delta against it).
pub(crate) fn base(store: &Store, id: &str) -> String {
    store.key_in_bucket(store.bucket_of(id), &ses(id, ":base"))
}

pub(crate) fn events(store: &Store, id: &str) -> String {
    store.key_in_bucket(store.bucket_of(id), &ses(id, ":events"))
}

/// The open-sessions set of `id`'s bucket.
pub(crate) fn open_of(store: &Store, id: &str) -> String {
    open_in(store, store.bucket_of(id))
}

/// The open-sessions set of bucket `bucket` (`/available` reads every bucket).
pub(crate) fn open_in(store: &Store, bucket: usize) -> String {
    store.key_in_bucket(bucket, "sessions:open")
}

/// The reservation of `host`'s create `key` (`create_once.rs`). The key has no `:` (the
/// retry-key rule), so no two hosts' names meet.
pub(crate) fn create_reservation(store: &Store, host: &str, key: &str) -> String {
    store.key_alone(&format!("create:{host}:{key}"))
}

pub(crate) fn boot(store: &Store) -> String {
    store.key("sessions:boot")
}

/// The wake-up channel of a session.
pub(crate) fn channel(store: &Store, id: &str) -> String {
    session(store, id)
}

/// The session a wake-up channel belongs to (`<prefix>[{s<n>}]ses:<id>`), if it is one.
pub(crate) fn session_of_channel(channel: &str) -> Option<&str> {
    let (_, id) = channel.rsplit_once("ses:")?;
    horst_sessions::parse_session_id(id).map(|_| id)
}

/// The pattern every process's pub/sub listener subscribes to (on a cluster, every
/// bucket's: `{s*}` matches each bucket's tag).
pub(crate) fn channel_pattern(store: &Store) -> String {
    if store.hash_tags() {
        store.key_alone("{s*}ses:*")
    } else {
        store.key_alone("ses:*")
    }
}

pub(crate) fn replay(store: &Store, id: &str) -> String {
    store.key_in_bucket(store.bucket_of(id), &ses(id, ":replay"))
}

/// The pending-ratings set of `id`'s bucket (the finishing save adds to it atomically).
pub(crate) fn ratings_pending_of(store: &Store, id: &str) -> String {
    ratings_pending_in(store, store.bucket_of(id))
}

/// The pending-ratings set of bucket `bucket` (the rater claims from every bucket).
pub(crate) fn ratings_pending_in(store: &Store, bucket: usize) -> String {
    store.key_in_bucket(bucket, "ratings:pending")
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

/// The agents of a game that are provisional (listed apart, not ranked), by rating.
pub(crate) fn leaderboard_provisional(store: &Store, game: &str) -> String {
    store.key(&format!("leaderboard:{game}:provisional"))
}

/// The ranked agents of a game by when they turn provisional by idleness alone (ms,
/// `Rating::provisional_by_idleness_at`): the leaderboard moves them off the ranked board
/// then (`lua/rating_idle.lua`).
pub(crate) fn leaderboard_idle(store: &Store, game: &str) -> String {
    store.key(&format!("leaderboard:{game}:idle"))
}

/// Set once every ranked agent of a game is in [`leaderboard_idle`] (boards ranked by a
/// version before it are indexed once, on their first read).
pub(crate) fn leaderboard_idle_built(store: &Store, game: &str) -> String {
    store.key(&format!("leaderboard:{game}:idle:built"))
}

/// How many games between two agents (`a` before `b`) were rated on UTC day `day` (days
/// since 1970).
pub(crate) fn rating_pair(store: &Store, game: &str, day: u64, a: &str, b: &str) -> String {
    store.key(&format!("rating:{game}:pair:{day}:{a}:{b}"))
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

/// An identity's open seek (a game id has no `:`, so no game's lock is named like it).
pub(crate) fn seeker(store: &Store, identity: &str) -> String {
    store.key(&format!("seek:who:{identity}"))
}

pub(crate) fn rating_excluded(store: &Store, game: &str) -> String {
    store.key(&format!("rating:{game}:excluded"))
}

pub(crate) fn reference_tables(store: &Store) -> String {
    store.key("reference:tables")
}

/// `reference:secret`: the deployment's secret in the reference player's seed (16 hex).
pub(crate) fn reference_secret(store: &Store) -> String {
    store.key("reference:secret")
}

#[cfg(test)]
mod tests {
    /// The names written by hand are the ones `format!` wrote.
    #[test]
    fn a_session_s_names_are_the_format_macro_s() {
        for id in ["ses_beef00000001", "", "x"] {
            for suffix in ["", ":base", ":events", ":replay"] {
                assert_eq!(super::ses(id, suffix), format!("ses:{id}{suffix}"));
            }
        }
    }
}
