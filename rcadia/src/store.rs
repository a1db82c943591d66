//! Persistence: one Redis hash per session (`ses:<id>` = `{rev, json}`), written with
//! compare-and-set on `rev`, plus the index of unfinished sessions (`sessions:open`) and the
//! boot tag (`sessions:boot`).
//!
//! `rev` sits beside the JSON so the script compares it without decoding the record. A lost
//! race re-reads and re-applies: the machine is deterministic, so the retry is the same
//! decision on fresher state.
//!
//! The agent-visible event log lives apart, in the list `ses:<id>:events` (the latest
//! `MAX_EVENTS`): the record is stored with no events and `eventsBase` = the index of the
//! next event, so the machine numbers new events right without reading the log, and the
//! save script appends what an apply added. Only `GET /events` reads the list. This keeps
//! the record small: every request decodes and re-encodes it.

use horst_sessions::machine::MAX_EVENTS;
use horst_sessions::{
    format_session_id, parse_session_id, Effect, Event, Outcome, ProtocolError, Session, Status,
};
use horst_store::InvokeDurably;
use horst_store::Store;

use crate::effects::member;
use crate::metrics::WriteView;
use crate::{random_u32, Rcadia, RcadiaError};

/// How often one request re-applies after losing a compare-and-set race before giving up.
const MAX_ATTEMPTS: usize = 32;

/// Finished sessions stay readable this long (agents read the result and `nextSessionId`),
/// then Redis drops them; unfinished ones never expire.
const FINISHED_RETENTION_MS: u64 = 24 * 3600 * 1000;

/// The Lua scripts (`rcadia/lua/`; each header documents KEYS, ARGV and the reply), built
/// once per process and run by SHA (EVALSHA, loaded again on NOSCRIPT).
pub(crate) struct Scripts {
    save: redis::Script,
}

impl Scripts {
    pub(crate) fn load() -> Scripts {
        Scripts {
            save: redis::Script::new(include_str!("../lua/session_save.lua")),
        }
    }
}

/// The reply of `session_save.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Saved {
    Written,
    /// Another write came first (the stored `rev` moved): nothing was written.
    RevMoved,
}

impl redis::FromRedisValue for Saved {
    fn from_redis_value(v: redis::Value) -> Result<Self, redis::ParsingError> {
        match redis::from_redis_value::<i64>(v)? {
            1 => Ok(Saved::Written),
            0 => Ok(Saved::RevMoved),
            n => Err(format!("unexpected reply of session_save: {n}").into()),
        }
    }
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
    /// The session as stored after the main event.
    pub session: Session,
    /// The main event's outcome (its `reply`).
    pub outcome: Outcome,
    /// The next round this apply created (`CreateRematch`).
    pub created_rematch: Option<String>,
    /// The Redis clock the events were applied at.
    pub now_ms: u64,
}

/// Reads the store's boot tag, creating it on first use.
pub(crate) async fn boot_tag(store: &Store) -> Result<u16, RcadiaError> {
    let key = store.key("sessions:boot");
    let mut conn = store.conn();
    let fresh = format!("{:04x}", random_u32() as u16);
    let _: Option<String> = redis::cmd("SET")
        .arg(&key)
        .arg(&fresh)
        .arg("NX")
        .query_async(&mut conn)
        .await?;
    let tag: String = redis::cmd("GET").arg(&key).query_async(&mut conn).await?;
    // Every process must agree on it across a failover (else sessions answer 410).
    store.settle(&mut conn).await?;
    u16::from_str_radix(&tag, 16)
        .map_err(|_| RcadiaError::Internal(format!("sessions:boot holds {tag:?}, not 4 hex")))
}

impl Rcadia {
    fn session_key(&self, id: &str) -> String {
        self.inner.store.key(&format!("ses:{id}"))
    }

    /// 404 or 410 for an id that is not in the store.
    fn missing(&self, id: &str) -> RcadiaError {
        match parse_session_id(id) {
            Some(p) if p.boot_tag != self.inner.boot_tag => RcadiaError::Gone,
            _ => RcadiaError::NotFound,
        }
    }

    fn events_key(&self, id: &str) -> String {
        self.inner.store.key(&format!("ses:{id}:events"))
    }

    /// Loads a session with its event log (for `GET /events`).
    pub async fn load_with_events(&self, id: &str) -> Result<Session, RcadiaError> {
        let mut s = self.load(id).await?;
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let raw: Vec<String> = redis::cmd("LRANGE")
            .arg(self.events_key(id))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        s.attach_event_log(
            raw.iter()
                .filter_map(|e| serde_json::from_str(e).ok())
                .collect(),
        );
        Ok(s)
    }

    /// Loads a session, or 404/410. Its `events` are empty (see the module doc).
    pub async fn load(&self, id: &str) -> Result<Session, RcadiaError> {
        if parse_session_id(id).is_none() {
            return Err(RcadiaError::NotFound);
        }
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let json: Option<String> = redis::cmd("HGET")
            .arg(self.session_key(id))
            .arg("json")
            .query_async(&mut conn)
            .await?;
        let json = json.ok_or_else(|| self.missing(id))?;
        serde_json::from_str(&json)
            .map_err(|e| RcadiaError::Internal(format!("session {id} does not decode: {e}")))
    }

    /// Loads a session and reads the Redis clock in one round trip.
    pub async fn load_at_now(&self, id: &str) -> Result<(Session, u64), RcadiaError> {
        if parse_session_id(id).is_none() {
            return Err(RcadiaError::NotFound);
        }
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let (json, (secs, micros)): (Option<String>, (u64, u64)) = redis::pipe()
            .cmd("HGET")
            .arg(self.session_key(id))
            .arg("json")
            .cmd("TIME")
            .query_async(&mut conn)
            .await?;
        let json = json.ok_or_else(|| self.missing(id))?;
        let s = serde_json::from_str(&json)
            .map_err(|e| RcadiaError::Internal(format!("session {id} does not decode: {e}")))?;
        Ok((s, secs * 1000 + micros / 1000))
    }

    /// Compare-and-set write; `expected_rev` 0 creates. False if another writer won.
    ///
    /// The write's deadline changes (`Schedule`/`Cancel` effects) and its wake-up go in the
    /// same script: one round trip, and a process dying right after the write cannot lose a
    /// deadline or a wake-up of a state that was stored.
    async fn save(
        &self,
        s: &mut Session,
        expected_rev: u64,
        effects: &[Effect],
        wake: bool,
    ) -> Result<bool, RcadiaError> {
        // The events an apply added go to the list; the record keeps only the next index.
        let json = s
            .to_stored_json()
            .map_err(|e| RcadiaError::Internal(format!("session does not encode: {e}")))?;
        let new_events = s.held_events();
        let listed = if s.status() == Status::Finished {
            "0"
        } else {
            "1"
        };
        let deadlines: Vec<(&str, u64, String)> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Schedule(d) => Some(("a", d.at_ms, member(d))),
                Effect::Cancel(d) => Some(("r", 0, member(d))),
                _ => None,
            })
            .collect();
        let channel = if wake {
            self.channel(s.session_id())
        } else {
            String::new()
        };
        self.inner.metrics.round_trip();
        if self.inner.store.durability().min_replica_acks > 0 {
            // The WAIT after the write (redis.min_replica_acks).
            self.inner.metrics.round_trip();
        }
        let mut inv = self.inner.scripts.save.prepare_invoke();
        inv.key(self.session_key(s.session_id()))
            .key(self.inner.store.key("sessions:open"))
            .key(self.events_key(s.session_id()))
            .key(self.inner.delayed.key())
            .arg(expected_rev)
            .arg(s.rev())
            .arg(json)
            .arg(s.session_id())
            .arg(listed)
            .arg(FINISHED_RETENTION_MS)
            .arg(MAX_EVENTS)
            .arg(new_events.len())
            .arg(deadlines.len())
            .arg(channel);
        for e in new_events {
            inv.arg(e.to_string());
        }
        for (op, at, m) in &deadlines {
            inv.arg(*op).arg(*at).arg(m);
        }
        let saved: Saved = inv.invoke_durably(&self.inner.store).await?;
        Ok(saved == Saved::Written)
    }

    /// Removes a session that lost a rematch race before anyone could see it.
    async fn delete(&self, id: &str) -> Result<(), RcadiaError> {
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let _: () = redis::pipe()
            .cmd("DEL")
            .arg(self.session_key(id))
            .arg(self.events_key(id))
            .ignore()
            .cmd("SREM")
            .arg(self.inner.store.key("sessions:open"))
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
            let now = self.now_ms().await?;
            let (mut s, out) = make(self.new_session_id(), now)?;
            let wake = wakes(&out.effects, out.changed);
            if self.save(&mut s, 0, &out.effects, wake).await? {
                self.inner.metrics.session_created(s.round() > 1);
                self.run_effects(&s, after_write(&out.effects), false)
                    .await?;
                return Ok(s);
            }
        }
        Err(RcadiaError::Internal(
            "could not mint a free session id".into(),
        ))
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
        for _ in 0..MAX_ATTEMPTS {
            let (loaded, now) = self.load_at_now(id).await?;
            // What the metrics compare against, instead of a copy of the whole record.
            let (loaded_rev, loaded_view) = (loaded.rev(), WriteView::of(&loaded));
            let mut s = loaded;
            let mut acc = Outcome::default();
            if s.is_due(now) {
                let out = s.apply(Event::Tick, now)?;
                merge(&mut acc, out);
            }
            let mut result = match step(&s) {
                Ok(st) => {
                    for ev in st.pre {
                        // Pre-events are bookkeeping (readiness); refusing one changes nothing.
                        if let Ok(out) = s.apply(ev, now) {
                            merge(&mut acc, out);
                        }
                    }
                    Ok(st.main)
                }
                Err(e) => Err(e),
            };
            let mut main_out = Outcome::default();
            if let Ok(Some(ev)) = &result {
                // No copy needed: the machine leaves the session exactly as it was when it
                // refuses an event, so the caught-up state (and pre-events) is what is stored.
                match s.apply(ev.clone(), now) {
                    Ok(out) => {
                        main_out.reply = out.reply.clone();
                        merge(&mut acc, out);
                    }
                    Err(e) => result = Err(e),
                }
            }
            // A stored write carries its deadlines and wake-up in the save script; an apply that
            // stores nothing (a read, a no-op) has nothing to schedule, but any effect it did
            // produce still runs below.
            // A game that ends into a rematch: create the next round first and link it in the
            // finishing write itself, so nobody ever reads the finished session without its
            // nextSessionId (section 6). If that fails, the effect runs after the write as
            // before (and readers wait for the link: `Session::awaiting_rematch`).
            let mut linked_next: Option<Session> = None;
            if acc.stored
                && s.next_session_id().is_none()
                && acc.effects.contains(&Effect::CreateRematch)
            {
                match self.create(|nid, t| Session::new_rematch(&s, nid, t)).await {
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
            if acc.stored {
                let wake = wakes(&acc.effects, acc.changed);
                if !self.save(&mut s, loaded_rev, &acc.effects, wake).await? {
                    self.inner.metrics.cas_conflict();
                    if let Some(next) = &linked_next {
                        self.drop_unlinked(next).await?;
                    }
                    continue; // lost the race: re-read and re-apply
                }
                self.inner.metrics.observe_write(&loaded_view, &s);
                pending_wake = false;
            }
            let effects = if acc.stored {
                after_write(&acc.effects)
            } else {
                acc.effects.clone()
            };
            let mut created_rematch = self.run_effects(&s, effects, pending_wake).await?;
            if let Some(next) = linked_next {
                created_rematch = Some(next.session_id().to_string());
            }
            return match result {
                Ok(_) => {
                    main_out.changed = acc.changed;
                    main_out.stored = acc.stored;
                    main_out.effects = acc.effects;
                    Ok(Applied {
                        session: s,
                        outcome: main_out,
                        created_rematch,
                        now_ms: now,
                    })
                }
                Err(e) => Err(RcadiaError::Protocol(e, Some(Box::new(s)))),
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

    /// Removes a next round that never got linked (its timers too): nobody has seen it.
    async fn drop_unlinked(&self, next: &Session) -> Result<(), RcadiaError> {
        for d in next.armed_deadlines() {
            let _ = self.cancel_deadline(&d).await;
        }
        self.delete(next.session_id()).await
    }

    /// Sessions for `GET /available`.
    pub async fn list_unfinished(&self) -> Result<Vec<Session>, RcadiaError> {
        let mut conn = self.inner.store.conn();
        self.inner.metrics.round_trip();
        let ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.inner.store.key("sessions:open"))
            .query_async(&mut conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.cmd("HGET").arg(self.session_key(id)).arg("json");
        }
        let jsons: Vec<Option<String>> = pipe.query_async(&mut conn).await?;
        let mut out: Vec<Session> = jsons
            .into_iter()
            .flatten()
            .filter_map(|j| serde_json::from_str(&j).ok())
            .collect();
        out.sort_by(|a: &Session, b: &Session| {
            (a.created_at_ms(), &a.session_id()).cmp(&(b.created_at_ms(), &b.session_id()))
        });
        Ok(out)
    }
}

/// Folds one apply's outcome into the request's running total (effects keep their order).
fn merge(acc: &mut Outcome, out: Outcome) {
    acc.changed |= out.changed;
    acc.stored |= out.stored;
    acc.effects.extend(out.effects);
    if !matches!(out.reply, horst_sessions::Reply::None) {
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
