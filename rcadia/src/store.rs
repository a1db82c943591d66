//! Persistence: one Redis string per session (`ses:<id>` = `<rev> <record>`, the record in
//! MessagePack: `record.rs`), written with compare-and-set on `rev`, plus the index of
//! unfinished sessions (`sessions:open`) and the boot tag (`sessions:boot`); the keys are
//! named in `keys.rs`.
//!
//! `rev` sits beside the record so the script compares it without decoding the record. A
//! lost race re-applies on the stored record the script sends back: the machine is
//! deterministic, so the retry is the same decision on fresher state. An apply starts from
//! the process's cached record (`record.rs`), so a write that wins costs one round trip.
//!
//! The agent-visible event log lives apart, in the list `ses:<id>:events` (the latest
//! `MAX_EVENTS`): the record is stored with no events and `eventsBase` = the index of the
//! next event, so the machine numbers new events right without reading the log, and the
//! save script appends what an apply added. Only `GET /events` reads the list.

use std::sync::{Arc, OnceLock};

use horst_sessions::machine::MAX_EVENTS;
use horst_sessions::{
    format_session_id, parse_session_id, Effect, Event, Outcome, ProtocolError, Reply, Session,
    Status,
};
use horst_store::script::{Args, ArgsOf, Argv, Decl, Script, ScriptArgs, Writes};
use horst_store::Store;

use crate::effects::member;
use crate::keys::{self, SessionKeys};
use crate::metrics::WholeRead;
use crate::rating;
use crate::record::{self, SessionRef, Stored};
use crate::replay::{self, Line};
use crate::{random_u32, Rcadia, RcadiaError};

/// How often one request re-applies after losing a compare-and-set race before giving up.
const MAX_ATTEMPTS: usize = 32;

/// Finished sessions stay readable this long (agents read the result and `nextSessionId`),
/// then Redis drops them; unfinished ones never expire.
pub(crate) const FINISHED_RETENTION_MS: u64 = 24 * 3600 * 1000;

/// The event log is trimmed back to `MAX_EVENTS` each time its length passes a multiple of
/// this (not on every append): it holds at most this many more.
const TRIM_EVERY: u64 = 64;

/// `lua/session_save.lua` (its header documents KEYS, ARGV and the reply).
pub(crate) static SAVE: Script<Saved, SaveArgs> = Script::new(Decl {
    file: horst_store::lua!("lua/session_save.lua"),
    keys: 7,
    argv: Argv::AtLeast(12),
    writes: Writes::Durable,
});

/// The arguments of one save, in the script header's order.
pub(crate) struct SaveArgs {
    /// The session's key names (`unused` is sent for a key the write does not touch, as
    /// every byte is sent on every action: a name in the session's slot, never used,
    /// `<prefix>` or `<prefix>{s3-..}` on a cluster).
    keys: Arc<SessionKeys>,
    expected: String,
    token: String,
    /// The record as stored after `<token> ` (`record::encode_write`: a delta).
    body: Vec<u8>,
    /// The new base as stored (`record::pack_base`), when the write rebases.
    base: Option<Arc<Vec<u8>>>,
    session_id: String,
    /// `Some(listed)` when the listing changes (or on create).
    listing: Option<bool>,
    trim: usize,
    /// Stored form (`record::encode_event`).
    events: Vec<Vec<u8>>,
    wake: bool,
    legacy: bool,
    /// (op, due ms, member)
    deadlines: Vec<(&'static str, u64, String)>,
    /// The replay's new lines (stored form, `replay::encode_line`), the essential ones last.
    replay: Vec<Vec<u8>>,
    replay_essential: usize,
    replay_retention_ms: u64,
    /// The game finishes in this write and is rated (`rating::rates`).
    rate: bool,
}

impl ArgsOf for SaveArgs {
    type At<'a> = Self;
}

impl ScriptArgs for SaveArgs {
    fn push(&self, to: &mut Args) {
        // The keys this write touches (the script header says when it touches each).
        let listing = self.listing.is_some();
        let k = &*self.keys;
        let unused = k.unused.as_str();
        fn pick<'a>(k: &'a str, used: bool, unused: &'a str) -> &'a str {
            if used {
                k
            } else {
                unused
            }
        }
        // A create names the replay and the event log: the script checks the id is new to
        // them.
        let create = self.expected.is_empty();
        let events = create || listing || self.trim > 0 || !self.events.is_empty();
        to.key(&k.session)
            .key(pick(&k.open, listing, unused))
            .key(pick(&k.events, events, unused))
            .key(pick(&k.delayed, !self.deadlines.is_empty(), unused))
            .key(pick(
                &k.replay,
                create || listing || !self.replay.is_empty(),
                unused,
            ))
            .key(pick(&k.ratings_pending, self.rate, unused))
            .key(&k.base)
            .arg(&self.expected)
            .arg(&self.token)
            .arg(&self.body[..])
            // Only what the script uses: every byte is sent on every action.
            .arg(match self.listing {
                Some(_) => self.session_id.as_str(),
                None => "",
            })
            .arg(match self.listing {
                Some(true) => "1",
                Some(false) => "0",
                None => "",
            })
            .arg(match self.listing {
                Some(false) => FINISHED_RETENTION_MS.to_string(),
                _ => String::new(),
            })
            .arg(self.trim)
            .arg(self.events.len())
            .arg(self.deadlines.len())
            .arg(if self.wake { "1" } else { "" })
            .arg(if self.legacy { "1" } else { "0" })
            .arg(self.base.as_deref().map_or(&[][..], |b| &b[..]));
        for e in &self.events {
            to.arg(&e[..]);
        }
        for (op, at, m) in &self.deadlines {
            to.arg(*op).arg(*at).arg(m);
        }
        // Most writes add nothing to the replay and finish nothing: then nothing more is sent
        // (the script reads a missing count as none).
        if !self.replay.is_empty() || self.listing == Some(false) {
            to.arg(self.replay.len())
                .arg(self.replay_retention_ms)
                .arg(self.replay_essential)
                .arg(replay::MAX_LINES)
                .arg(if self.rate { "1" } else { "0" });
            for l in &self.replay {
                to.arg(&l[..]);
            }
        }
    }
}

/// The reply of `session_save.lua`.
#[derive(Debug)]
pub(crate) enum Saved {
    Written,
    /// Another write came first (the stored `rev` moved): nothing was written. The stored
    /// value (`None`: there is none, or it is an earlier version's hash: read it) and base.
    RevMoved(Option<Vec<u8>>, Option<Vec<u8>>),
    /// An earlier version's hash moved on: read it again.
    LegacyMoved,
}

impl redis::FromRedisValue for Saved {
    fn from_redis_value(v: redis::Value) -> Result<Self, redis::ParsingError> {
        match v {
            redis::Value::Int(1) => Ok(Saved::Written),
            redis::Value::Int(0) => Ok(Saved::LegacyMoved),
            redis::Value::Array(mut a) if a.len() == 2 => {
                let base = redis::from_redis_value(a.remove(1))?;
                Ok(Saved::RevMoved(redis::from_redis_value(a.remove(0))?, base))
            }
            other => Err(format!("unexpected reply of session_save: {other:?}").into()),
        }
    }
}

/// How a save ended (`Rcadia::save`).
pub(crate) enum SaveOutcome {
    /// Stored: the record as written (now the cached one).
    Written(Arc<Stored>),
    /// Another write came first: the stored record (now the cached one).
    Lost(Arc<Stored>),
    /// Another write came first and the session is gone.
    Missing,
    /// An earlier version's record moved on: read it again.
    Reread,
}

/// Keeps a write in the cache's in-flight map while its script runs, and takes it off when
/// the save ends, however it ends (an error, or a request dropped mid-write).
struct InFlight<'a> {
    cache: &'a record::RecordCache,
    id: &'a str,
    record: Arc<Stored>,
}

impl<'a> InFlight<'a> {
    fn new(cache: &'a record::RecordCache, id: &'a str, record: &Arc<Stored>) -> Self {
        cache.in_flight(id, record.clone());
        InFlight {
            cache,
            id,
            record: record.clone(),
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.cache.landed(self.id, &self.record);
    }
}

/// Whether Redis refused a command for the key's type (an earlier version's hash).
fn wrong_type(e: &redis::RedisError) -> bool {
    e.code() == Some("WRONGTYPE")
}

/// What a request does to a session, decided on the session as loaded (and caught up).
#[derive(Debug, Default)]
pub struct Step {
    /// Applied and kept even if `main` fails (e.g. `PlayerSeen` readies a reserved seat even
    /// for a request that is then refused).
    pub pre: Vec<Event>,
    pub main: Option<Event>,
}

impl Step {
    pub fn main(event: Event) -> Step {
        Step {
            pre: Vec::new(),
            main: Some(event),
        }
    }
}

/// The result of a successful apply.
#[derive(Debug)]
pub struct Applied {
    /// The session as stored after the main event: the process's cached record, shared.
    pub session: SessionRef,
    /// The main event's outcome (its `reply`).
    pub outcome: Outcome,
    /// The next round this apply created (`CreateRematch`).
    pub created_rematch: Option<String>,
    /// The Redis clock the events were applied at.
    pub now_ms: u64,
}

/// The value of `key`, set to `fresh` by the first process that asks (SET NX, then GET), so
/// every process reads the same one; answered once the replicas have it, so they still
/// agree after a failover. A value already there is only read: a process that starts while
/// Redis refuses writes (a full disk, `maxmemory`) comes up as the running ones go on,
/// instead of failing on a SET that would not have changed anything (`horst admin` too).
async fn made_once(store: &Store, key: &str, fresh: String) -> Result<String, RcadiaError> {
    let there: Option<String> = redis::cmd("GET")
        .arg(key)
        .query_async(&mut store.conn())
        .await?;
    if let Some(value) = there {
        return Ok(value);
    }
    let mut conn = store.durable().await?;
    let _: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(&fresh)
        .arg("NX")
        .query_async(&mut conn)
        .await?;
    let value: String = redis::cmd("GET").arg(key).query_async(&mut conn).await?;
    store.settle(&mut conn).await?;
    Ok(value)
}

/// The deployment's reference-player secret: read, or made by the first process (64
/// random bits, kept for good).
pub(crate) async fn reference_secret(store: &Store) -> Result<u64, RcadiaError> {
    let fresh = format!(
        "{:016x}",
        u64::from_le_bytes(horst_store::random::id_bytes::<8>())
    );
    let secret = made_once(store, &keys::reference_secret(store), fresh).await?;
    u64::from_str_radix(&secret, 16).map_err(|_| {
        RcadiaError::Internal(format!("reference:secret holds {secret:?}, not 16 hex"))
    })
}

/// Reads the store's boot tag, creating it on first use. Every process must agree on it
/// across a failover (else sessions answer 410).
pub(crate) async fn boot_tag(store: &Store) -> Result<u16, RcadiaError> {
    let fresh = format!("{:04x}", random_u32() as u16);
    let tag = made_once(store, &keys::boot(store), fresh).await?;
    u16::from_str_radix(&tag, 16)
        .map_err(|_| RcadiaError::Internal(format!("sessions:boot holds {tag:?}, not 4 hex")))
}

impl Rcadia {
    /// 404 or 410 for an id that is not in the store.
    fn missing(&self, id: &str) -> RcadiaError {
        match parse_session_id(id) {
            Some(p) if p.boot_tag != self.inner.boot_tag => RcadiaError::Gone,
            _ => RcadiaError::NotFound,
        }
    }

    /// Loads a session with its event log (for `GET /events`).
    pub async fn load_with_events(&self, id: &str) -> Result<Session, RcadiaError> {
        let loaded = self.load(id).await?;
        let keys = self.keys_of(id, Some(&loaded.0));
        let mut s = loaded.into_session();
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
            .arg(&keys.events)
            .arg(-(MAX_EVENTS as i64))
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let created = s.created_at_ms();
        s.attach_event_log(
            raw.iter()
                .filter_map(|e| record::decode_event(e, created))
                .collect(),
        );
        Ok(s)
    }

    /// Reads a session's stored record whole (and caches it), or 404/410; `cause` says why
    /// (`horst_session_whole_reads_total`).
    pub(crate) async fn read(
        &self,
        id: &str,
        cause: WholeRead,
    ) -> Result<Arc<Stored>, RcadiaError> {
        if parse_session_id(id).is_none() {
            return Err(RcadiaError::NotFound);
        }
        self.inner.metrics.whole_read(cause);
        let keys = self.keys_of(id, None);
        let key = &keys.session;
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        // MGET answers nil for a key of another type: a session without a value is read
        // again with GET, which tells a missing one from an earlier version's hash.
        let (value, base): (Option<Vec<u8>>, Option<Vec<u8>>) = redis::cmd("MGET")
            .arg(key)
            .arg(&keys.base)
            .query_async(&mut conn)
            .await?;
        let (got, base): (redis::RedisResult<Option<Vec<u8>>>, _) = match value {
            Some(v) => (Ok(Some(v)), base),
            None => {
                self.inner.metrics.round_trip();
                match redis::cmd("GET").arg(key).query_async(&mut conn).await {
                    // Created between the two reads: its base is read again with it (the
                    // first read's is older than the value, or none).
                    Ok(Some(_)) => {
                        self.inner.metrics.round_trip();
                        let (value, base): (Option<Vec<u8>>, Option<Vec<u8>>) = redis::cmd("MGET")
                            .arg(key)
                            .arg(&keys.base)
                            .query_async(&mut conn)
                            .await?;
                        (Ok(value), base)
                    }
                    other => (other, base),
                }
            }
        };
        let stored = match got {
            Ok(value) => {
                let known = self.inner.cache.get(id);
                record::decode(id, value, base, known.as_deref())?
            }
            Err(e) if wrong_type(&e) => {
                self.inner.metrics.round_trip();
                let fields: (Option<String>, Option<String>) = redis::cmd("HMGET")
                    .arg(key)
                    .arg("rev")
                    .arg("json")
                    .query_async(&mut conn)
                    .await?;
                record::decode_legacy(id, fields)?
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(s) = &stored {
            let _ = s.keys.set(keys.clone());
        }
        self.cache_stored(id, stored)
    }

    /// The key names of session `id`: those `held` (a record of it) holds, else the cached
    /// record's, else formatted now (and then held by `held`, and handed on to the records
    /// that follow it: `save`).
    pub(crate) fn keys_of(&self, id: &str, held: Option<&Stored>) -> Arc<SessionKeys> {
        if let Some(k) = held.and_then(|h| h.keys.get()) {
            return k.clone();
        }
        let keys = self
            .inner
            .cache
            .get(id)
            .and_then(|c| c.keys.get().cloned())
            .unwrap_or_else(|| {
                Arc::new(SessionKeys::new(&self.inner.store, id, |b| {
                    self.inner.delayed.key_in(b)
                }))
            });
        if let Some(h) = held {
            let _ = h.keys.set(keys.clone());
        }
        keys
    }

    /// Caches a record read from Redis; 404/410 if there is none.
    fn cache_stored(&self, id: &str, stored: Option<Stored>) -> Result<Arc<Stored>, RcadiaError> {
        match stored {
            Some(r) => {
                let r = Arc::new(r);
                self.inner.cache.replace(id, r.clone());
                Ok(r)
            }
            None => {
                self.inner.cache.forget(id);
                Err(self.missing(id))
            }
        }
    }

    /// The stored record: the cached one if the process's pub/sub listener vouches for it
    /// (no read: `RecordCache::fresh`) or the stored `rev` still matches it (a small read),
    /// else read whole.
    pub(crate) async fn current(&self, id: &str) -> Result<Arc<Stored>, RcadiaError> {
        if let Some(fresh) = self.inner.cache.fresh(id) {
            self.inner.metrics.fresh_read();
            return Ok(fresh);
        }
        self.current_checked(id, WholeRead::Stale).await
    }

    /// The stored record, checked against Redis whatever the listener says: the cached one if
    /// the stored `rev` still matches it (a small read), else read whole (`moved` says why,
    /// when a record was cached).
    pub(crate) async fn current_checked(
        &self,
        id: &str,
        moved: WholeRead,
    ) -> Result<Arc<Stored>, RcadiaError> {
        let Some(cached) = self.inner.cache.get(id) else {
            return self.read(id, WholeRead::Uncached).await;
        };
        let key = &self.keys_of(id, Some(&cached)).session;
        match self.stored_token(key).await? {
            Some(t) if t == cached.token => Ok(cached),
            // Another record this process holds: a write of its own that was in flight when
            // the cache was asked (the stored rev names it: it is stored), or the record before
            // it.
            Some(t) => match self.inner.cache.get_at(id, &t) {
                Some(held) => Ok(held),
                None => self.read(id, moved).await,
            },
            None => self.read(id, moved).await,
        }
    }

    /// The stored `rev` of a session (its compare-and-set token; `key` its record's name),
    /// if it exists: the first bytes of the stored value.
    async fn stored_token(&self, key: &str) -> Result<Option<String>, RcadiaError> {
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        // A rev is a u64 and 8 hex digits: 30 bytes at most.
        let got: redis::RedisResult<Vec<u8>> = redis::cmd("GETRANGE")
            .arg(key)
            .arg(0)
            .arg(31)
            .query_async(&mut conn)
            .await;
        match got {
            Ok(head) => Ok(record::token_of(&head).map(str::to_string)),
            Err(e) if wrong_type(&e) => {
                self.inner.metrics.round_trip();
                Ok(redis::cmd("HGET")
                    .arg(key)
                    .arg("rev")
                    .query_async(&mut conn)
                    .await?)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A session as stored (the cached record, shared), or 404/410. Its `events` are empty
    /// (see the module doc).
    pub async fn load(&self, id: &str) -> Result<SessionRef, RcadiaError> {
        Ok(SessionRef(self.current(id).await?))
    }

    /// A session as stored, asked of Redis whatever the listener vouches for (a small read of
    /// the stored rev when the cached record is current). For an answer that must not come
    /// from a record a moment behind another process's write: the listener hears of such a
    /// write a few milliseconds after it is stored.
    pub async fn load_checked(&self, id: &str) -> Result<SessionRef, RcadiaError> {
        Ok(SessionRef(
            self.current_checked(id, WholeRead::Recheck).await?,
        ))
    }

    /// A session as stored and the Redis clock.
    pub async fn load_at_now(&self, id: &str) -> Result<(SessionRef, u64), RcadiaError> {
        let s = self.load(id).await?;
        Ok((s, self.now_ms().await?))
    }

    /// The process's cached record of `id` whose stored `rev` is `token` (a wake-up's), or a
    /// later stored one.
    pub(crate) fn cached_stored_at(&self, id: &str, token: &str) -> Option<Arc<Stored>> {
        self.inner.cache.get_at_or_after(id, token)
    }

    /// Compare-and-set write of `s` over `loaded` (`None` creates).
    ///
    /// The write's deadline changes (`Schedule`/`Cancel` effects) and its wake-up go in the
    /// same script: one round trip, and a process dying right after the write cannot lose a
    /// deadline or a wake-up of a state that was stored. `s` is stored in its stored form
    /// (its new events moved to the log), and becomes the cached record if the write wins.
    async fn save(
        &self,
        mut s: Session,
        loaded: Option<&Stored>,
        effects: &[Effect],
        wake: bool,
        now: u64,
    ) -> Result<SaveOutcome, RcadiaError> {
        let store = &self.inner.store;
        let id = s.session_id().to_string();
        let base_before = loaded.map_or(0, |l| l.session.events_next());
        let created = s.created_at_ms();
        let forms = self.inner.settings.forms;
        let events: Vec<Vec<u8>> = s
            .take_held_events()
            .iter()
            .map(|e| record::encode_event_as(e, created, forms))
            .collect();
        let crossed = s.events_next() / TRIM_EVERY != base_before / TRIM_EVERY;
        let finished = s.status() == Status::Finished;
        let listing = match loaded {
            Some(l) if (l.session.status() == Status::Finished) == finished => None,
            _ => Some(!finished),
        };
        let settings = &self.inner.settings;
        // No replay at all while the operator has them off (`arena.replays`).
        let mut replay_lines = if settings.replays {
            replay::lines_of_write(loaded.map(|l| &l.session), &s, now)
        } else {
            Vec::new()
        };
        replay_lines.sort_by_key(Line::is_essential);
        // The replay's bytes so far ride in the stored token (an earlier version's write
        // counted none: from there on).
        let replay_before = loaded.map_or(0, |l| record::replay_bytes_of(&l.token).unwrap_or(0));
        let fitted = replay::fit_budget(
            &replay_lines,
            replay_before,
            created,
            forms,
            now,
            loaded.map(|l| l.session.state()),
        );
        let rate = settings.ratings && listing == Some(false) && rating::rates(&s).is_some();
        // The compare-and-set token: unique, never shown to a caller (no system call), and
        // the replay's bytes after this write.
        let token = record::write_token(
            s.rev(),
            horst_store::random::process_unique_u64() as u32,
            fitted.used,
        );
        let encoded = record::encode_write_as(&s, loaded.and_then(|l| l.base.as_ref()), forms)?;
        let keys = self.keys_of(&id, loaded);
        let args = SaveArgs {
            keys: keys.clone(),
            expected: loaded.map(|l| l.token.clone()).unwrap_or_default(),
            token: token.clone(),
            body: encoded.body,
            base: encoded.stored_base.clone(),
            session_id: id.clone(),
            listing,
            trim: if crossed { MAX_EVENTS } else { 0 },
            events,
            wake,
            legacy: loaded.is_some_and(|l| l.legacy),
            deadlines: effects
                .iter()
                .filter_map(|e| match e {
                    Effect::Schedule(d) => Some(("a", d.at_ms, member(d))),
                    Effect::Cancel(d) => Some(("r", 0, member(d))),
                    _ => None,
                })
                .collect(),
            replay: fitted.lines,
            replay_essential: fitted.essential,
            replay_retention_ms: settings.replay_retention_ms,
            rate,
        };
        // In flight until the script answers: a wake-up of this write may reach this process's
        // waiters before the script's reply reaches the writer, and an apply of this process
        // may start from it (`RecordCache`). The guard takes it off however this ends.
        let record = Arc::new(Stored {
            token,
            session: s,
            legacy: false,
            base: Some(encoded.base),
            // The new base as stored (a rebase), else the base the loaded record had.
            base_stored: encoded
                .stored_base
                .or_else(|| loaded.and_then(|l| l.base_stored.clone())),
            keys: OnceLock::from(keys.clone()),
            confirmed: Default::default(),
        });
        // If the write wins, nobody wrote between `loaded` and it: it is as fresh as `loaded`
        // was (its own wake-up renews that; a later write's revokes it).
        if let Some(l) = loaded {
            record.confirmed.carry(&l.confirmed);
        }
        let _in_flight = InFlight::new(&self.inner.cache, &id, &record);
        self.inner.metrics.round_trip();
        if store.durability().min_replica_acks > 0 {
            // The WAIT after the write (redis.min_replica_acks).
            self.inner.metrics.round_trip();
        }
        let earliest = args
            .deadlines
            .iter()
            .filter(|(op, _, _)| *op == "a")
            .map(|(_, at, _)| *at)
            .min();
        // Boxed: this future would otherwise be part of every apply's, which axum and tower
        // move about six times a request (`an_apply_future_does_not_hold_the_script_call`).
        let saved = match Box::pin(SAVE.run(store, &args)).await {
            // The stored value is this very write: the script ran twice (a cluster client
            // resends a request whose connection died, and the first run reached the
            // promoted replica before the primary did). The second run was refused by the
            // compare-and-set and changed nothing; the write is done, not lost to a race.
            Ok(Saved::RevMoved(Some(value), _)) if is_own_write(&value, &args.token) => {
                Ok(Saved::Written)
            }
            other => other,
        };
        // The firer looks by the new deadline (written, or perhaps written: an error).
        if let (Some(at), Ok(Saved::Written) | Err(_)) = (earliest, &saved) {
            self.inner.wake.note(store.bucket_of(&id), at);
        }
        // A finished rated game is pending now: this process's rater rates it at once.
        if args.rate && matches!(saved, Ok(Saved::Written)) {
            self.inner.rate_wake.note(store.bucket_of(&id), 0);
        }
        match saved {
            Ok(Saved::Written) => {
                self.inner.cache.written(&id, &record);
                Ok(SaveOutcome::Written(record))
            }
            Ok(Saved::RevMoved(value, base)) => {
                // The winner is often a write of this process (an apply that started before it
                // went in flight): its record is held, decoded.
                let held = value
                    .as_deref()
                    .and_then(record::token_of)
                    .and_then(|t| self.inner.cache.get_at(&id, t));
                if let Some(r) = held {
                    self.inner.cache.replace(&id, r.clone());
                    return Ok(SaveOutcome::Lost(r));
                }
                self.lost_to(&id, value, base, loaded, keys)
            }
            Ok(Saved::LegacyMoved) => {
                self.inner.cache.forget(&id);
                Ok(SaveOutcome::Reread)
            }
            Err(e) => {
                // Written or not, nobody knows: read it next time.
                self.inner.cache.forget(&id);
                Err(e.into())
            }
        }
    }

    /// The stored record a lost race's reply carried (decoded, and now the cached one).
    fn lost_to(
        &self,
        id: &str,
        value: Option<Vec<u8>>,
        base: Option<Vec<u8>>,
        loaded: Option<&Stored>,
        keys: Arc<SessionKeys>,
    ) -> Result<SaveOutcome, RcadiaError> {
        match self.decode_lost(id, value, base, loaded)? {
            Some(r) => {
                let _ = r.keys.set(keys);
                let r = Arc::new(r);
                self.inner.cache.replace(id, r.clone());
                Ok(SaveOutcome::Lost(r))
            }
            None => {
                self.inner.cache.forget(id);
                Ok(SaveOutcome::Missing)
            }
        }
    }

    /// Decodes the stored record a lost race's reply carried.
    fn decode_lost(
        &self,
        id: &str,
        value: Option<Vec<u8>>,
        base: Option<Vec<u8>>,
        loaded: Option<&Stored>,
    ) -> Result<Option<Stored>, RcadiaError> {
        if value.is_some() {
            self.inner.metrics.whole_read(WholeRead::LostRace);
        }
        record::decode(id, value, base, loaded)
    }

    /// Removes a session that lost a rematch race before anyone could see it.
    async fn delete(&self, id: &str) -> Result<(), RcadiaError> {
        let store = &self.inner.store;
        let mut conn = store.conn();
        self.inner.metrics.round_trip();
        self.inner.cache.forget(id);
        let _: () = redis::pipe()
            .cmd("DEL")
            .arg(keys::session(store, id))
            .arg(keys::events(store, id))
            .arg(keys::replay(store, id))
            .arg(keys::base(store, id))
            .ignore()
            .cmd("SREM")
            .arg(keys::open_of(store, id))
            .arg(id)
            .ignore()
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// A fresh session id with the current boot tag.
    pub fn new_session_id(&self) -> String {
        format_session_id(self.inner.boot_tag, random_u32())
    }

    /// Stores a brand-new session (a fresh id each try) and arms its timers.
    pub async fn create(
        &self,
        mut make: impl FnMut(String, u64) -> Result<(Session, Outcome), ProtocolError>,
    ) -> Result<Session, RcadiaError> {
        for _ in 0..MAX_ATTEMPTS {
            if let Some(s) = self.create_as(&self.new_session_id(), &mut make).await? {
                return Ok(s);
            }
        }
        Err(RcadiaError::Internal(
            "could not mint a free session id".into(),
        ))
    }

    /// Stores a brand-new session under `id` and arms its timers; `None` when `id` is taken
    /// (or was: its replay or event log is still kept).
    pub(crate) async fn create_as(
        &self,
        id: &str,
        make: &mut impl FnMut(String, u64) -> Result<(Session, Outcome), ProtocolError>,
    ) -> Result<Option<Session>, RcadiaError> {
        let now = self.now_ms().await?;
        let (s, out) = make(id.to_string(), now)?;
        let wake = wakes(&out.effects, out.changed);
        let SaveOutcome::Written(r) = self.save(s, None, &out.effects, wake, now).await? else {
            return Ok(None);
        };
        let s = &r.session;
        self.inner.metrics.session_created(s.round() > 1);
        self.run_effects(s, after_write(&out.effects), false)
            .await?;
        Ok(Some(s.clone()))
    }

    /// Load, catch up with time, apply `step`'s events at the Redis clock, write with
    /// compare-and-set (re-applying on a lost race), then carry out the effects.
    ///
    /// On a protocol error of the main event the caught-up state (and any `pre` events) is
    /// still stored, and the error carries that session.
    pub async fn apply(
        &self,
        id: &str,
        mut step: impl FnMut(&Session) -> Result<Step, ProtocolError>,
    ) -> Result<Applied, RcadiaError> {
        // The cached record, if any: a write from it is checked by the compare-and-set, a
        // read by the stored rev, unless the listener vouches for it (`RecordCache::fresh`).
        // With a write of this process in flight the apply starts from that write (its own
        // write then follows it on the connection); should it store nothing, the stored
        // record the listener vouches for answers instead of a check of the rev.
        let fresh = self.inner.cache.fresh(id);
        let mut vouched = fresh.clone();
        let mut next: Option<(Arc<Stored>, bool)> = self.inner.cache.get(id).map(|c| {
            let checked = vouched.as_ref().is_some_and(|v| Arc::ptr_eq(v, &c));
            (c, checked)
        });
        // Why the next attempt reads the record whole, when it has none to start from.
        let mut why_read = WholeRead::Uncached;
        for _ in 0..MAX_ATTEMPTS {
            let (loaded, checked) = match next.take() {
                Some(n) => n,
                None => (self.read(id, why_read).await?, true),
            };
            let now = self.now_ms().await?;
            let stalls = self.stalls_at(id, now).await?;
            // The session as the events leave it: the loaded record itself (shared, not
            // copied) until an event changes something to store; then `cur`.
            let mut cur: Option<Session> = None;
            let mut acc = Outcome::default();
            // Time nobody could reach Redis is charged to nobody: the stalls that ended after
            // the session's latest instant go first, before the catch-up (`stalls.rs`).
            for st in &stalls {
                let s = cur.as_ref().unwrap_or(&loaded.session);
                if st.to_ms > s.now_ms() && s.status() != Status::Finished {
                    let outage = Event::Outage {
                        from_ms: st.from_ms,
                        to_ms: st.to_ms,
                    };
                    let out = apply_on(&loaded.session, &mut cur, outage, now)?;
                    merge(&mut acc, out);
                }
            }
            if cur.as_ref().unwrap_or(&loaded.session).is_due(now) {
                let out = apply_on(&loaded.session, &mut cur, Event::Tick, now)?;
                merge(&mut acc, out);
            }
            let main = match step(cur.as_ref().unwrap_or(&loaded.session)) {
                Ok(st) => {
                    for ev in st.pre {
                        // Pre-events are bookkeeping (readiness); refusing one changes nothing.
                        if let Ok(out) = apply_on(&loaded.session, &mut cur, ev, now) {
                            merge(&mut acc, out);
                        }
                    }
                    Ok(st.main)
                }
                Err(e) => Err(e),
            };
            // A deadline, or an event the machine refuses, decides on the record: answered
            // from a record only the listener vouches for, a write of another process whose
            // wake-up has not arrived yet would be missed (a deadline armed by that write
            // would be popped and dropped as unknown; a turn taken there refused here).
            let decisive = matches!(main, Ok(Some(Event::TimerFired { .. })));
            // A rematch the host asked for: the API counted it (`/rematch`).
            let asked_rematch = matches!(main, Ok(Some(Event::Rematch)));
            let mut result = Ok(());
            let mut reply = Reply::None;
            match main {
                // The machine leaves the session exactly as it was when it refuses an event,
                // so the caught-up state (and pre-events) is what is stored.
                Ok(Some(ev)) => match apply_on(&loaded.session, &mut cur, ev, now) {
                    Ok(mut out) => {
                        reply = std::mem::replace(&mut out.reply, Reply::None);
                        merge(&mut acc, out);
                    }
                    Err(e) => result = Err(e),
                },
                Ok(None) => {}
                Err(e) => result = Err(e),
            }
            // A stored write carries its deadlines and wake-up in the save script; an apply that
            // stores nothing (a read, a no-op) has nothing to schedule, but any effect it did
            // produce still runs below.
            // A game that ends into a rematch: create the next round first and link it in the
            // finishing write itself, so nobody ever reads the finished session without its
            // nextSessionId (section 6). If that fails, the effect runs after the write as
            // before (and readers wait for the link: `Session::awaiting_rematch`).
            let mut linked_next: Option<Session> = None;
            // An `autoRematch` round of a person's table counts against the person's tables
            // an hour (`tables.rs`); past it the series ends here, as when a player left.
            if let Some(s) = cur
                .as_ref()
                .filter(|s| s.next_session_id().is_none())
                .filter(|_| !asked_rematch && acc.effects.contains(&Effect::CreateRematch))
            {
                if !self.auto_round_allowed(s).await {
                    acc.effects.retain(|e| *e != Effect::CreateRematch);
                }
            }
            if let Some(s) = cur
                .as_mut()
                .filter(|s| s.next_session_id().is_none())
                .filter(|_| acc.effects.contains(&Effect::CreateRematch))
            {
                match self.create(|nid, t| Session::new_rematch(s, nid, t)).await {
                    Ok(next) => {
                        let link = Event::RematchLinked {
                            next_session_id: next.session_id().to_string(),
                        };
                        if let Ok(out) = s.apply(link, now) {
                            merge(&mut acc, out);
                            acc.effects.retain(|e| *e != Effect::CreateRematch);
                            linked_next = Some(next);
                        } else {
                            self.drop_unlinked(&next).await?;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(session = %id, error = %e, "rematch not created before the finishing write")
                    }
                }
            }
            let mut pending_wake = acc.changed;
            let record = match cur {
                Some(s) => {
                    let wake = wakes(&acc.effects, acc.changed);
                    let lost = match self.save(s, Some(&loaded), &acc.effects, wake, now).await? {
                        SaveOutcome::Written(r) => Ok(r),
                        other => Err(other),
                    };
                    match lost {
                        Ok(r) => {
                            self.inner
                                .metrics
                                .observe_write(&loaded.session, &r.session);
                            pending_wake = false;
                            r
                        }
                        Err(lost) => {
                            self.inner.metrics.cas_conflict();
                            if let Some(next) = &linked_next {
                                self.drop_unlinked(next).await?;
                            }
                            // Lost the race: re-apply on the record the script sent back (or
                            // read an earlier version's record again).
                            why_read = WholeRead::LostRace;
                            next = match lost {
                                SaveOutcome::Lost(r) => Some((r, true)),
                                SaveOutcome::Missing => return Err(self.missing(id)),
                                SaveOutcome::Reread | SaveOutcome::Written(_) => None,
                            };
                            continue;
                        }
                    }
                }
                None => {
                    let from_vouch = fresh.as_ref().is_some_and(|v| Arc::ptr_eq(v, &loaded));
                    let decisive = decisive || result.is_err();
                    if !checked {
                        if let Some(v) = vouched.take() {
                            // Started from a write in flight: apply again to the record the
                            // listener vouches for.
                            next = Some((v, true));
                            continue;
                        }
                    } else if from_vouch && !decisive {
                        self.inner.metrics.fresh_read();
                    }
                    if !checked || (from_vouch && decisive) {
                        let key = &self.keys_of(id, Some(&loaded)).session;
                        let stored = self.stored_token(key).await?;
                        if stored.as_deref() != Some(loaded.token.as_str()) {
                            // Nothing to write, but the cached record is not the stored one:
                            // apply again to the stored one, read whole unless this process
                            // holds it (a write of its own).
                            why_read = WholeRead::ApplyCheck;
                            next = stored
                                .and_then(|t| self.inner.cache.get_at(id, &t))
                                .map(|held| (held, true));
                            continue;
                        }
                    }
                    loaded
                }
            };
            let effects = if acc.stored {
                after_write(&acc.effects)
            } else {
                acc.effects.clone()
            };
            let mut created_rematch = self
                .run_effects(&record.session, effects, pending_wake)
                .await?;
            if let Some(next) = linked_next {
                created_rematch = Some(next.session_id().to_string());
            }
            return match result {
                Ok(()) => Ok(Applied {
                    session: SessionRef(record),
                    outcome: Outcome {
                        changed: acc.changed,
                        stored: acc.stored,
                        effects: acc.effects,
                        reply,
                    },
                    created_rematch,
                    now_ms: now,
                }),
                Err(e) => Err(RcadiaError::Protocol(
                    e,
                    Some(Box::new(record.session.clone())),
                )),
            };
        }
        self.inner.metrics.cas_gave_up();
        Err(RcadiaError::Internal(format!(
            "session {id}: too many concurrent writers; try again"
        )))
    }

    /// Creates the next round of `finished` and links it; returns the next session's id (the
    /// existing one if another process won the race).
    pub(crate) async fn create_rematch(&self, finished: &Session) -> Result<String, RcadiaError> {
        let next = self
            .create(|id, now| Session::new_rematch(finished, id, now))
            .await?;
        let next_id = next.session_id().to_string();
        let linked = self
            .apply(finished.session_id(), |_| {
                Ok(Step::main(Event::RematchLinked {
                    next_session_id: next_id.clone(),
                }))
            })
            .await;
        match linked {
            Ok(a) => Ok(a.session.next_session_id().map_or(next_id, str::to_string)),
            Err(e) => {
                // Someone else linked first (or the session changed): drop ours, unseen.
                self.drop_unlinked(&next).await?;
                match self.load(finished.session_id()).await?.next_session_id() {
                    Some(existing) => Ok(existing.to_string()),
                    None => Err(e),
                }
            }
        }
    }

    /// Whether the `autoRematch` round `finished` is about to open may open: always for an
    /// agent token's table, else when the person who hosts it is within
    /// [`crate::tables::PERSON`]. A store that cannot count lets it open (the round's own
    /// writes need the store anyway).
    async fn auto_round_allowed(&self, finished: &Session) -> bool {
        let Some(person) = crate::tables::person_of(&finished.host().identity) else {
            return true;
        };
        if !finished.auto_rematch_due() {
            return true;
        }
        match self
            .inner
            .tables
            .check(&crate::tables::PERSON, person)
            .await
        {
            Ok(()) => true,
            Err(horst_limits::BurstError::Limited(l)) => {
                tracing::info!(
                    session = %finished.session_id(),
                    retry_after_seconds = l.retry_after_seconds(),
                    "no autoRematch round: its host opened as many tables as an hour allows"
                );
                false
            }
            Err(horst_limits::BurstError::Store(e)) => {
                tracing::warn!(error = %e, "cannot count an autoRematch round; it opens");
                true
            }
        }
    }

    /// Removes a next round that never got linked (its timers too): nobody has seen it.
    async fn drop_unlinked(&self, next: &Session) -> Result<(), RcadiaError> {
        for d in next.armed_deadlines() {
            let _ = self.cancel_deadline(&d).await;
        }
        self.delete(next.session_id()).await
    }

    /// Sessions for `GET /available`: every bucket's open set, each with its records in one
    /// round trip (on a cluster the buckets are read at once, each on its primary).
    pub async fn list_unfinished(&self) -> Result<Vec<Session>, RcadiaError> {
        let buckets = (0..self.inner.store.buckets()).map(|b| self.list_unfinished_in(b));
        let mut out = Vec::new();
        for listed in futures_util::future::join_all(buckets).await {
            out.extend(listed?);
        }
        out.sort_by(|a: &Session, b: &Session| {
            (a.created_at_ms(), &a.session_id()).cmp(&(b.created_at_ms(), &b.session_id()))
        });
        Ok(out)
    }
}

impl Rcadia {
    async fn list_unfinished_in(&self, bucket: usize) -> Result<Vec<Session>, RcadiaError> {
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(keys::open_in(&self.inner.store, bucket))
            .query_async(&mut conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.cmd("MGET")
                .arg(keys::session(&self.inner.store, id))
                .arg(keys::base(&self.inner.store, id));
        }
        type Pair = (Option<Vec<u8>>, Option<Vec<u8>>);
        let values: Vec<Pair> = pipe.query_async(&mut conn).await?;
        let mut out = Vec::new();
        for (id, (value, base)) in ids.iter().zip(values) {
            if value.is_some() {
                self.inner.metrics.whole_read(WholeRead::Listing);
                out.extend(
                    record::decode(id, value, base, None)
                        .ok()
                        .flatten()
                        .map(|r| r.session),
                );
                continue;
            }
            // Listed without a value: an earlier version's hash (MGET answers nil for it),
            // read the way that reads both, or one that just went.
            match self.read(id, WholeRead::Listing).await {
                Ok(r) => out.push(r.session.clone()),
                Err(RcadiaError::Redis(e)) => return Err(RcadiaError::Redis(e)),
                Err(_) => {}
            }
        }
        Ok(out)
    }
}

/// Applies `ev` to the session as the events so far left it: `cur`, or while nothing was
/// stored the loaded record, which is copied only by an event that stores something.
fn apply_on(
    loaded: &Session,
    cur: &mut Option<Session>,
    ev: Event,
    now: u64,
) -> Result<Outcome, ProtocolError> {
    match cur {
        Some(s) => s.apply(ev, now),
        None => {
            let (next, out) = loaded.apply_to(ev, now)?;
            *cur = next;
            Ok(out)
        }
    }
}

/// Folds one apply's outcome into the request's running total (effects keep their order).
fn merge(acc: &mut Outcome, out: Outcome) {
    acc.changed |= out.changed;
    acc.stored |= out.stored;
    acc.effects.extend(out.effects);
    if !matches!(out.reply, Reply::None) {
        acc.reply = out.reply;
    }
}

/// Whether a write must wake the session's waiters: an observable change, or new entries for
/// the host's queue.
pub(crate) fn wakes(effects: &[Effect], changed: bool) -> bool {
    changed
        || effects
            .iter()
            .any(|e| matches!(e, Effect::HostEntriesQueued { .. }))
}

/// The effects the save script does not carry out: rematches and forwarded leaves, which
/// apply to other sessions.
fn after_write(effects: &[Effect]) -> Vec<Effect> {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::CreateRematch | Effect::LeaveSession { .. }))
        .cloned()
        .collect()
}

/// Whether an effect list asks for a rematch (used by callers that only want to know).
pub fn wants_rematch(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::CreateRematch))
}

/// Whether a stored value (`<rev> <record>`) is the write whose rev is `token`: a token holds
/// a random tag (`<rev>.<tag>`), so another writer's value never starts with it.
fn is_own_write(value: &[u8], token: &str) -> bool {
    value.len() > token.len() && value.starts_with(token.as_bytes()) && value[token.len()] == b' '
}

#[cfg(test)]
mod tests {
    use super::{is_own_write, Step};
    use crate::metrics::WholeRead;
    use crate::{Rcadia, RcadiaSettings};
    use horst_sessions::{Event, GameInfo, HostKind, NewSession, Op, Session, TimerKind, Timings};
    use serde_json::json;

    /// The session layer of one process on `redis`; its listener hears the sessions'
    /// channels, or (`deaf`) none: what a listener lagging behind hears of a write.
    async fn process(
        redis: &horst_testkit::RedisServer,
        deaf: bool,
    ) -> (Rcadia, tokio::sync::watch::Sender<bool>) {
        let store = horst_store::Store::connect(&redis.url(), "vouch:")
            .await
            .unwrap();
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let channels = if deaf {
            vec!["vouch:nothing:*".to_string()]
        } else {
            Rcadia::channels(&store)
        };
        let notifier =
            horst_store::Notifier::start(store.client().clone(), channels, stop_rx.clone());
        assert!(notifier.ready(std::time::Duration::from_secs(10)).await);
        let mut config = horst_config::Config::default();
        // A full table starts at once.
        config.sessions.lobby_fill_ms = 0;
        let rcadia = Rcadia::new(
            store,
            notifier,
            RcadiaSettings::from_config(&config),
            stop_rx,
        )
        .await
        .unwrap();
        (rcadia, stop)
    }

    fn clock_generation(s: &Session) -> u64 {
        s.armed_deadlines()
            .into_iter()
            .find(|d| d.kind == TimerKind::Clock)
            .map(|d| d.generation)
            .expect("a turn clock armed")
    }

    /// The turn moves to `player` (its legal actions published): a new turn clock.
    fn turn_of(player: &str, n: u64) -> Event {
        let ops = Op::parse_batch(&json!({"ops": [
            {"op": "legal_actions", "playerId": player, "actions": ["go"]},
            {"op": "state", "state": {"n": n}},
        ]}));
        Event::PublishOps {
            ops: ops.unwrap(),
            batch_id: None,
        }
    }

    /// A new house session `id` for two players (what `Rcadia::create` is given).
    fn two_seats(
        id: String,
        now: u64,
    ) -> Result<(Session, horst_sessions::Outcome), horst_sessions::ProtocolError> {
        Session::create(
            NewSession {
                session_id: id,
                config: json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true,
                    "sdkVersion": "2.0.0", "turnTimeout": 30}),
                host_identity: "host".into(),
                host_kind: HostKind::House,
                game: GameInfo::default(),
                timings: Timings::default(),
            },
            now,
        )
    }

    /// A session for two players, seated, the host seen, `p_00000001` on turn: its id.
    async fn started(a: &Rcadia) -> String {
        let created = a.create(two_seats).await.unwrap();
        let id = created.session_id().to_string();
        for (i, who) in ["a", "b"].iter().enumerate() {
            a.apply(&id, |_| {
                Ok(Step::main(Event::Join {
                    player_id: horst_sessions::format_player_id(i as u32 + 1),
                    identity: who.to_string(),
                    as_name: None,
                }))
            })
            .await
            .unwrap();
        }
        // The host is seen (a clock runs only while it is alive).
        a.apply(&id, |_| {
            Ok(Step::main(Event::HostPoll {
                after: Some(0),
                wait_ms: 0,
            }))
        })
        .await
        .unwrap();
        let p1 = horst_sessions::format_player_id(1);
        a.apply(&id, |_| Ok(Step::main(turn_of(&p1, 1))))
            .await
            .unwrap();
        id
    }

    /// The size of the future `f` returns (never run).
    fn future_size<A, F: std::future::Future>(_: impl Fn(A) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// An apply's future is part of every session request's handler future, which axum and
    /// tower move into a box about six times a request: the save's script call (its command
    /// and the connection's request) is boxed on its own, once a write, so it is not part of
    /// them (fourteenth and fifteenth rounds in docs/benchmarks.md).
    #[test]
    fn an_apply_future_does_not_hold_the_script_call() {
        let apply = future_size(|r: &'static Rcadia| {
            r.apply("s", |_: &Session| Ok(Step::main(Event::Tick)))
        });
        let save = future_size(|(r, s): (&'static Rcadia, Session)| r.save(s, None, &[], false, 0));
        let script = future_size(|(r, a): (&'static Rcadia, &'static super::SaveArgs)| {
            super::SAVE.run(&r.inner.store, a)
        });
        let args = std::mem::size_of::<super::SaveArgs>();
        eprintln!("future sizes: apply {apply}, save {save}, the save's script call {script}; SaveArgs {args}");
        assert!(
            save < script + args,
            "save's future ({save} bytes) holds its script call's ({script} bytes) besides its arguments ({args} bytes)"
        );
    }

    /// A session id minted again once its record expired (a day after its game), while
    /// the game's replay is still kept (days), is not taken: the new game's lines went into
    /// the old game's replay, which was then served as the new game's, and rated from the
    /// old game's first line.
    #[tokio::test]
    async fn a_new_session_never_takes_an_id_whose_replay_is_kept() {
        let redis = horst_testkit::RedisServer::start();
        let (a, _stop) = process(&redis, false).await;
        let old = started(&a).await;
        let replay = crate::keys::replay(a.store(), &old);
        let key = crate::keys::session(a.store(), &old);
        let mut conn = a.store().conn();
        let lines: i64 = redis::cmd("LLEN")
            .arg(&replay)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(lines > 0, "the game has a replay");
        let _: () = redis::cmd("DEL")
            .arg(&key)
            .arg(format!("{key}:base"))
            .query_async(&mut conn)
            .await
            .unwrap();
        a.inner.cache.forget(&old);
        let mut minted = Vec::new();
        let created = a
            .create(|id, now| {
                minted.push(id.clone());
                // The first id drawn is the old one.
                let id = if minted.len() == 1 { old.clone() } else { id };
                two_seats(id, now)
            })
            .await
            .unwrap();
        assert_ne!(created.session_id(), old);
        assert_eq!(minted.len(), 2, "a second id was minted");
        let after: i64 = redis::cmd("LLEN")
            .arg(&replay)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(after, lines, "the old game's replay is as it was");
        let exists: i64 = redis::cmd("EXISTS")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(exists, 0, "nothing was stored under the old id");
    }

    /// An earlier version's record (a hash) that two processes hold: the first to write
    /// replaces it with the current form; the other's write then finds a string where it
    /// expected the hash, and reads it again (its save script once failed on it with a
    /// WRONGTYPE error, answered as a server error).
    #[tokio::test]
    async fn a_write_from_an_earlier_versions_record_another_process_replaced_reads_again() {
        let redis = horst_testkit::RedisServer::start();
        let (a, _stop_a) = process(&redis, false).await;
        let (b, _stop_b) = process(&redis, false).await;
        let id = started(&a).await;
        let mut s = a
            .current_checked(&id, WholeRead::Stale)
            .await
            .unwrap()
            .session
            .clone();
        let key = crate::keys::session(a.store(), &id);
        let mut conn = a.store().conn();
        let _: () = redis::pipe()
            .cmd("DEL")
            .arg(&key)
            .arg(format!("{key}:base"))
            .ignore()
            .cmd("HSET")
            .arg(&key)
            .arg("rev")
            .arg(s.rev())
            .arg("json")
            .arg(s.to_stored_json().unwrap())
            .ignore()
            .query_async(&mut conn)
            .await
            .unwrap();
        // Both read the hash; A writes first.
        a.inner.cache.forget(&id);
        b.inner.cache.forget(&id);
        assert!(a.current(&id).await.unwrap().legacy);
        assert!(b.current(&id).await.unwrap().legacy);
        let p2 = horst_sessions::format_player_id(2);
        a.apply(&id, |_| Ok(Step::main(turn_of(&p2, 2))))
            .await
            .unwrap();
        let p1 = horst_sessions::format_player_id(1);
        let applied = b.apply(&id, |_| Ok(Step::main(turn_of(&p1, 3)))).await;
        assert!(applied.is_ok(), "{:?}", applied.err());
        let after = a.current_checked(&id, WholeRead::Stale).await.unwrap();
        assert!(!after.legacy);
        assert_eq!(after.session.state(), &json!({"n": 3}));
    }

    /// Process B holds a record its listener vouches for, and process A stores a turn whose
    /// clock B has not heard of yet (its wake-up still on its way). The deadline of that
    /// clock, popped by B's firer, must fire on the stored record: on the vouched one it is a
    /// timer nobody armed, and was dropped (the turn never timed out).
    #[tokio::test]
    async fn a_deadline_is_applied_to_the_stored_record_not_to_one_only_vouched_for() {
        let redis = horst_testkit::RedisServer::start();
        let (a, _stop_a) = process(&redis, false).await;
        let (b, _stop_b) = process(&redis, true).await;
        let id = started(&a).await;
        let p2 = horst_sessions::format_player_id(2);

        // B reads the record and (as if its listener had heard that write) vouches for it.
        let seen = b.current(&id).await.unwrap();
        b.inner.cache.heard(&id, &seen.token);
        assert!(b.inner.cache.fresh(&id).is_some());

        // A stores the next turn; B's listener does not hear it.
        a.apply(&id, |_| Ok(Step::main(turn_of(&p2, 2))))
            .await
            .unwrap();
        let stored = a.current_checked(&id, WholeRead::Stale).await.unwrap();
        let generation = clock_generation(&stored.session);
        assert_ne!(generation, clock_generation(&seen.session));
        assert!(
            b.inner.cache.fresh(&id).is_some(),
            "B still vouches for the old record"
        );

        // B's firer pops the new clock's deadline.
        b.apply(&id, |_| {
            Ok(Step::main(Event::TimerFired {
                kind: TimerKind::Clock,
                generation,
            }))
        })
        .await
        .unwrap();
        let after = a.current_checked(&id, WholeRead::Stale).await.unwrap();
        assert!(
            after.session.rev() > stored.session.rev(),
            "the deadline was dropped: rev {} after, {} stored before",
            after.session.rev(),
            stored.session.rev()
        );
        assert!(
            !after
                .session
                .armed_deadlines()
                .iter()
                .any(|d| d.kind == TimerKind::Clock && d.generation == generation),
            "the turn timed out: its clock is not armed any more"
        );
    }

    #[test]
    fn a_resent_save_knows_its_own_write() {
        // The first run stored `5.0badc0de ~...`; its resent copy expected rev 4 and was
        // refused, with this value in the reply: the write is its own.
        assert!(is_own_write(b"5.0badc0de ~\x01", "5.0badc0de"));
        // Another writer's rev 5, and a longer token that merely starts alike, are not.
        assert!(!is_own_write(b"5.1badc0de ~\x01", "5.0badc0de"));
        assert!(!is_own_write(b"5.0badc0de1 ~", "5.0badc0de"));
        assert!(!is_own_write(b"5.0badc0de", "5.0badc0de"));
    }

    /// A game of 300 moves whose actions and states are 15 KB each (under the request and
    /// state limits) keeps a replay of at most 1 MiB (it kept 2,000 lines, about 9 MB, for
    /// days, read whole by the rater and served to anyone), and the replay still ends with
    /// its `end` line after one `truncated` line; a large action is recorded by its size.
    #[tokio::test]
    async fn a_game_of_huge_moves_keeps_its_replay_within_its_byte_budget() {
        let redis = horst_testkit::RedisServer::start();
        let (a, _stop) = process(&redis, false).await;
        let id = started(&a).await;
        let pad = "x".repeat(15_000);
        let players = [
            horst_sessions::format_player_id(1),
            horst_sessions::format_player_id(2),
        ];
        for n in 0..300u64 {
            let (me, next) = (&players[(n % 2) as usize], &players[((n + 1) % 2) as usize]);
            let turn = a.load(&id).await.unwrap().turn();
            a.apply(&id, |_| {
                Ok(Step::main(Event::Action {
                    player_id: me.clone(),
                    action: json!({ "move": n, "pad": pad }),
                    turn: Some(turn),
                    action_id: format!("a_{n}"),
                    idempotency_key: None,
                }))
            })
            .await
            .unwrap();
            a.apply(&id, |_| {
                Ok(Step::main(Event::HostPoll {
                    after: None,
                    wait_ms: 0,
                }))
            })
            .await
            .unwrap();
            let ops = Op::parse_batch(&json!({"ops": [
                // New whole at every move: its change from the one before is as long.
                {"op": "state", "state": {"n": n, "pad": format!("{n:05}").repeat(3000)}},
                {"op": "legal_actions", "playerId": next, "actions": ["go"]},
            ]}))
            .unwrap();
            a.apply(&id, |_| {
                Ok(Step::main(Event::PublishOps {
                    ops: ops.clone(),
                    batch_id: None,
                }))
            })
            .await
            .unwrap();
        }
        let end = Op::parse_batch(&json!({"ops": [
            {"op": "end", "result": {"winner": players[0]}},
        ]}))
        .unwrap();
        a.apply(&id, |_| {
            Ok(Step::main(Event::PublishOps {
                ops: end.clone(),
                batch_id: None,
            }))
        })
        .await
        .unwrap();
        let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
            .arg(crate::keys::replay(a.store(), &id))
            .arg(0)
            .arg(-1)
            .query_async(&mut a.store().conn())
            .await
            .unwrap();
        let bytes: usize = raw.iter().map(Vec::len).sum();
        assert!(
            bytes as u64 <= crate::replay::MAX_BYTES + 1024,
            "{bytes} bytes of replay"
        );
        let lines = crate::replay::parse_lines(&raw);
        assert!(
            matches!(lines.last(), Some(crate::replay::Line::End { .. })),
            "{:?}",
            lines.last()
        );
        let truncated = lines
            .iter()
            .filter(|l| matches!(l, crate::replay::Line::Truncated { .. }))
            .count();
        assert_eq!(truncated, 1);
        let action = lines
            .iter()
            .find_map(|l| match l {
                crate::replay::Line::Action {
                    action,
                    omitted_bytes,
                    ..
                } => Some((action.clone(), *omitted_bytes)),
                _ => None,
            })
            .expect("an action line before the cut");
        assert_eq!(action.0, serde_json::Value::Null);
        assert!(action.1.is_some_and(|n| n > 15_000), "{action:?}");
        assert!(
            lines
                .iter()
                .any(|l| matches!(l, crate::replay::Line::Players { .. })),
            "the seats are kept"
        );
    }

    /// A wake-up often reaches a waiter after the writer's next write was answered (the
    /// script's reply and the message come on different connections): the waiter then holds
    /// a later record than the one the message names, and reads nothing. It read the record
    /// whole, a Redis round trip and a decode, for a record it had already passed.
    #[tokio::test]
    async fn a_wake_up_naming_a_write_the_process_has_passed_reads_nothing() {
        let redis = horst_testkit::RedisServer::start();
        let (a, _stop) = process(&redis, false).await;
        let id = started(&a).await;
        let passed = a.inner.cache.get(&id).unwrap().token.clone();
        let p1 = horst_sessions::format_player_id(1);
        a.apply(&id, |_| Ok(Step::main(turn_of(&p1, 2))))
            .await
            .unwrap();
        let sub = a.subscribe(&id);
        let s = a.load(&id).await.unwrap();
        let rev = s.rev();
        let waiter = tokio::spawn({
            let (a, id) = (a.clone(), id.clone());
            async move {
                a.wait_from(sub, &id, s, std::time::Duration::from_millis(800), |_| {
                    false
                })
                .await
            }
        });
        // The earlier write's message, late.
        let mut conn = a.store().conn();
        let heard: i64 = redis::cmd("PUBLISH")
            .arg(a.channel(&id))
            .arg(&passed)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(heard, 1, "the process's listener heard it");
        let ended = waiter.await.unwrap().unwrap();
        assert_eq!(
            ended.rev(),
            rev,
            "the wait ends on the later record it held"
        );
        assert_eq!(
            a.metrics().whole_reads_of("wake"),
            0,
            "a wake-up naming a record the process has passed read the session whole"
        );
    }

    /// Two requests of one process race for a session (the second loaded the record before
    /// the first went in flight): the loser's reply carries the winner's record, which the
    /// process holds, decoded, so it is not decoded again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_race_lost_to_a_write_of_the_same_process_decodes_nothing() {
        let redis = horst_testkit::RedisServer::start();
        let (a, _stop) = process(&redis, false).await;
        let id = started(&a).await;
        let before = a.metrics().whole_reads();
        let p1 = horst_sessions::format_player_id(1);
        let outer = tokio::spawn({
            let (a, id) = (a.clone(), id.clone());
            async move {
                let mut raced = false;
                let handle = tokio::runtime::Handle::current();
                let applied = a
                    .apply(&id, |_| {
                        if !raced {
                            raced = true;
                            // Another request of this process writes between this apply's
                            // load and its write.
                            let (other, id, p1) = (a.clone(), id.clone(), p1.clone());
                            tokio::task::block_in_place(|| {
                                handle.block_on(async move {
                                    other
                                        .apply(&id, |_| Ok(Step::main(turn_of(&p1, 7))))
                                        .await
                                        .unwrap();
                                })
                            });
                        }
                        Ok(Step::main(turn_of(&p1, 8)))
                    })
                    .await
                    .unwrap();
                (raced, applied.session.state().clone())
            }
        });
        let (raced, state) = outer.await.unwrap();
        assert!(raced);
        assert_eq!(
            state["n"], 8,
            "the loser applied again on the winner's record"
        );
        assert_eq!(
            a.metrics().whole_reads(),
            before,
            "a race lost to the process's own write decoded the winner's record again"
        );
    }
}
