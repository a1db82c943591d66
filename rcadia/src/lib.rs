//! RCADIA sessions in Redis: the I/O around the pure machine of `horst-sessions`.
//!
//! - [`store`]: one key per session (a hash `{rev, rec}`, the record in MessagePack)
//!   written with compare-and-set on `rev`; an index of unfinished sessions for
//!   `/available`; the boot tag. `apply` starts from the process's cached record (`record`),
//!   runs the machine at the Redis server's clock (`now`), writes, and on a lost race
//!   re-applies on the stored record the write sent back. Keys are named in `keys`.
//! - [`effects`]: carries out what the machine asks for (deadlines in the delayed set,
//!   wake-ups on `ses:<id>`, rematch creation and linking, forwarded leaves).
//! - [`clock`]: the firer any horst process may run: pops due deadlines and feeds them back.
//! - `stalls`: the times nobody could reach Redis, which every apply hands the session first
//!   (`Event::Outage`), so no clock charges them.
//! - [`wait`]: long-polls (subscribe first, then read; wake on `ses:<id>`).
//! - [`replay`]: the replay lines a write adds (pure) and how a replay is served;
//!   [`state_patch`]: a state line stored as its change from the previous one.
//! - [`rating`]: Glicko-2 and which games count (pure); [`leaderboard`]: the rater every
//!   process runs, exactly once per game, and the leaderboard reads.
//! - [`seek`]: a seat at the open table nearest an agent's rating, one seeker at a time.
//! - [`reference`]: the house's reference player (a new agent's validation game).
//!
//! Who is calling (agent tokens, people's JWTs) is `horst-identity`'s; the routes pass the
//! caller's identity key in.
//!
//! All turn and clock rules stay in `horst-sessions`; nothing here decides what a turn is.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::sync::Arc;

use horst_sessions::{ProtocolError, Session, Timings};
use horst_store::{DelayedSet, Notifier, Store};

mod buckets;
pub mod clock;
mod create_once;
mod delta;
pub mod effects;
// In the crate, not under tests/: the stored record's decoding is crate-private.
#[cfg(test)]
mod fuzz;
mod keys;
pub mod leaderboard;
pub mod metrics;
mod now;
pub mod rating;
mod record;
pub mod reference;
pub mod replay;
pub mod seek;
mod stalls;
pub mod state_patch;
pub mod store;
pub mod tables;
pub mod wait;

pub use metrics::SessionMetrics;
pub use now::ServerTime;
pub use record::{SessionRef, StoredForms};
pub use store::Applied;

/// Errors of the session layer. Protocol errors carry the session as it is stored (for the
/// `snapshot` of `/action` 409s).
#[derive(Debug, thiserror::Error)]
pub enum RcadiaError {
    #[error("{0}")]
    Protocol(ProtocolError, Option<Box<Session>>),
    /// Unknown id (or not a session id at all).
    #[error("no such session")]
    NotFound,
    /// A well-formed id from another store epoch.
    #[error("session lost to a server restart")]
    Gone,
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("{0}")]
    Internal(String),
}

impl From<horst_store::StoreError> for RcadiaError {
    fn from(e: horst_store::StoreError) -> Self {
        match e {
            // Keep Redis's own error, so an unreachable store is answered 503, not 500.
            horst_store::StoreError::Command(e)
            | horst_store::StoreError::Connect { source: e, .. } => RcadiaError::Redis(e),
            other => RcadiaError::Internal(other.to_string()),
        }
    }
}

impl From<ProtocolError> for RcadiaError {
    fn from(e: ProtocolError) -> Self {
        RcadiaError::Protocol(e, None)
    }
}

/// What the session layer needs from the configuration.
#[derive(Debug, Clone)]
pub struct RcadiaSettings {
    pub timings: Timings,
    /// Identity (agent id or username) shown as `host: "house"`.
    pub house_identity: String,
    /// How long a finished game's replay is kept (ms).
    pub replay_retention_ms: u64,
    /// The games the house's reference player plays (`reference.rs`).
    pub reference_games: Vec<String>,
    /// The stored forms new writes take (`sessions.write_previous_forms`).
    pub forms: StoredForms,
    /// The games the house keeps tables open for (`house.games`): a seek of one of them
    /// waits for a table; a seek of a game with no table and not among these is refused.
    pub house_games: Vec<String>,
    /// Replays are written (`arena.replays`).
    pub replays: bool,
    /// Finished games are rated (`arena.ratings`): queued for the rater, and a new agent's
    /// seek seats the reference player against it.
    pub ratings: bool,
    /// A stall of Redis this process learns of is logged at warning level (`stalls.rs`).
    /// Off in `horst up`'s worker child: up logs the same stall on the same terminal.
    pub log_stalls: bool,
}

impl RcadiaSettings {
    pub fn from_config(config: &horst_config::Config) -> RcadiaSettings {
        let c = &config.sessions;
        RcadiaSettings {
            timings: Timings {
                host_alive_ms: c.host_alive_seconds * 1000,
                host_gone_ms: c.host_gone_seconds * 1000,
                unconfirmed_ms: c.unconfirmed_seconds * 1000,
                reservation_ms: c.reservation_seconds * 1000,
                rematch_delay_ms: c.rematch_delay_ms,
                lobby_fill_ms: c.lobby_fill_ms,
                ..Timings::default()
            },
            house_identity: c.house_identity.clone(),
            replay_retention_ms: c.replay_retention_hours * 3600 * 1000,
            reference_games: c.reference_games.clone(),
            forms: if c.write_previous_forms {
                StoredForms::Previous
            } else {
                StoredForms::Current
            },
            house_games: config
                .house
                .games
                .iter()
                .map(|g| g.trim().to_ascii_lowercase())
                .collect(),
            replays: config.arena.replays,
            ratings: config.arena.ratings,
            log_stalls: true,
        }
    }
}

/// The session service. Cheap to clone.
#[derive(Clone)]
pub struct Rcadia {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub store: Store,
    /// The process's pub/sub listener (it must listen to [`Rcadia::channels`]).
    pub notifier: Notifier,
    /// Clock deadlines.
    pub delayed: DelayedSet,
    pub settings: RcadiaSettings,
    /// The records this process last read or wrote, decoded (shared with the observer that
    /// keeps them current: `Rcadia::new`).
    pub cache: Arc<record::RecordCache>,
    pub clock: now::ServerClock,
    /// Wakes the clock firer for a deadline this process scheduled.
    pub wake: buckets::BucketWake,
    /// Wakes the rater for a rated game this process finished.
    pub rate_wake: buckets::BucketWake,
    /// The stalls of each bucket this process heard of (`stalls.rs`).
    pub stalls: stalls::Stalls,
    /// The boot tag, read (or created) once at start.
    pub boot_tag: u16,
    /// The reference player's secret, read (or created) once at start (`reference.rs`).
    pub reference_secret: u64,
    /// Long-polls end early when this turns true (graceful shutdown).
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    pub metrics: SessionMetrics,
    /// Counts a person's `autoRematch` rounds against [`tables::PERSON`] (`tables.rs`).
    pub tables: horst_limits::BurstLimits,
}

impl Rcadia {
    /// Connects the session layer: reads or creates the store's boot tag. `notifier` must
    /// listen to [`Rcadia::channels`].
    pub async fn new(
        store: Store,
        notifier: Notifier,
        settings: RcadiaSettings,
        shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> Result<Rcadia, RcadiaError> {
        let boot_tag = store::boot_tag(&store).await?;
        let reference_secret = store::reference_secret(&store).await?;
        let buckets = store.buckets();
        let cache = Arc::new(record::RecordCache::default());
        notifier.observe({
            let cache = cache.clone();
            move |heard| match heard {
                horst_store::Heard::Message { channel, payload } => {
                    if let Some(id) = keys::session_of_channel(channel) {
                        // A save's wake-up carries its token; an empty one (a wake-up of a
                        // write that stored nothing) names no write.
                        if let Ok(token) = std::str::from_utf8(payload) {
                            if !token.is_empty() {
                                cache.heard(id, token);
                            }
                        }
                    }
                }
                horst_store::Heard::Gap => cache.gap(),
            }
        });
        Ok(Rcadia {
            inner: Arc::new(Inner {
                delayed: DelayedSet::new(store.clone()),
                tables: horst_limits::BurstLimits::new(store.clone()),
                store,
                notifier,
                settings,
                cache,
                clock: now::ServerClock::default(),
                wake: buckets::BucketWake::new(buckets),
                rate_wake: buckets::BucketWake::new(buckets),
                stalls: stalls::Stalls::new(buckets),
                boot_tag,
                reference_secret,
                shutdown,
                metrics: SessionMetrics::default(),
            }),
        })
    }

    /// The pub/sub patterns the process's notifier must listen to.
    pub fn channels(store: &Store) -> Vec<String> {
        vec![keys::channel_pattern(store)]
    }

    /// The session metrics; [`SessionMetrics::register`] puts them on a `/metrics`.
    pub fn metrics(&self) -> &SessionMetrics {
        &self.inner.metrics
    }

    pub fn settings(&self) -> &RcadiaSettings {
        &self.inner.settings
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn boot_tag(&self) -> u16 {
        self.inner.boot_tag
    }

    /// The Redis server's clock (`TIME`, carried forward between reads: `now.rs`): the one
    /// clock every process uses for the machine.
    pub async fn now_ms(&self) -> Result<u64, RcadiaError> {
        let metrics = &self.inner.metrics;
        Ok(self
            .inner
            .clock
            .now_ms(&self.inner.store, || metrics.round_trip())
            .await?)
    }

    pub(crate) fn channel(&self, id: &str) -> String {
        keys::channel(&self.inner.store, id)
    }
}

/// The Lua scripts of this crate (for the tidy test: each registered once).
pub fn registered() -> Vec<&'static dyn horst_store::script::Registered> {
    vec![
        &store::SAVE,
        &leaderboard::CLAIM,
        &leaderboard::APPLY,
        &leaderboard::IDLE,
        &seek::UNLOCK,
        &seek::EXTEND,
    ]
}

/// 32 random bits from the OS (ids: unique, not secret; `horst_store::random`).
pub fn random_u32() -> u32 {
    u32::from_le_bytes(horst_store::random::id_bytes::<4>())
}
