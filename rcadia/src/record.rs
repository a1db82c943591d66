//! The stored form of a session and the process's cache of decoded records.
//!
//! A record is MessagePack (structs as arrays: no field names), about a third of its JSON,
//! stored in two strings: the *base* `ses:<id>:base`, the whole record as it was at some
//! earlier write (deflated: [`pack_base`]; earlier versions stored it as it is, which
//! still reads), and `ses:<id>` = `<rev> ~<delta>`, the current record as a delta against
//! the base (`delta.rs`: 60-150 bytes where the record is 650). A write sends the delta
//! only; the save script compares and sets `ses:<id>` with one `SET KEEPTTL GET` and writes
//! the base only when the writer rebases (the delta grew past a third of the record, or
//! there is no base yet), in the same script, so the base is always the one the stored
//! delta was made against. Reads take both with one `MGET`. Values of earlier versions
//! still load and are rewritten in the current form on their next write: `<rev>
//! <MessagePack>` (the whole record, no base) and a hash `{rev, json}`.
//!
//! Every process keeps the records it last read or wrote, decoded. An apply starts from the
//! cached record and writes with compare-and-set on the stored `rev`, so a stale cache costs
//! a lost race (whose reply carries the stored record), never a wrong write; a read that
//! writes nothing checks the stored `rev` first. The stored `rev` is the record's own `rev`
//! and a random tag (`<rev>.<tag>`), so two processes that both wrote rev 8 from rev 7 (one
//! of them lost) are told apart, and a wake-up (which carries it) names exactly one record.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use horst_sessions::{iso8601_ms, Session};
use horst_store::fast_hash::FastMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::keys::SessionKeys;
use crate::{delta, RcadiaError};

/// The first byte of a stored body that is a delta against the base (a MessagePack record
/// starts with an array header, never with this).
const DELTA: u8 = b'~';

/// Records a process keeps decoded. Past this, half of them are dropped (any half: a
/// dropped record costs one read when it is next used).
const CACHE_CAPACITY: usize = 20_000;

/// A record as stored: its stored `rev` (the compare-and-set token) and the session
/// (without its event log).
#[derive(Debug)]
pub(crate) struct Stored {
    pub token: String,
    pub session: Session,
    /// Stored by an earlier version (a hash): the next write replaces it.
    pub legacy: bool,
    /// The stored base (the MessagePack the stored delta was made against); `None` for a
    /// value of an earlier version (the next write stores a base).
    pub base: Option<Arc<Vec<u8>>>,
    /// `base` as `ses:<id>:base` holds it (deflated), when this process knows it: a read
    /// that fetches these same bytes takes `base` from this record instead of inflating
    /// them again (an inflate costs more than the rest of a read's decoding).
    pub base_stored: Option<Arc<Vec<u8>>>,
    /// The session's key names, once a read or write of this process needed them (then
    /// handed on to the session's next record: `Rcadia::keys_of`).
    pub keys: OnceLock<Arc<SessionKeys>>,
    /// When the process last knew this record to be the stored one without asking Redis
    /// ([`RecordCache::fresh`]).
    pub confirmed: Confirmed,
}

/// When a cached record was last proved the stored one by the process's pub/sub listener:
/// its own wake-up was heard, and no message naming a later write since. A copy of a proof
/// (`carry`) passes it to the record a compare-and-set write replaced it with, since that
/// write's success shows nobody wrote in between.
///
/// Packed in one word: the listener's epoch (which a gap in its connection moves on, so
/// every proof made before the gap lapses at once) in the high 24 bits, and the time of the
/// proof (ms since the process started, plus one) in the low 40. Zero is no proof.
#[derive(Debug, Default)]
pub(crate) struct Confirmed(AtomicU64);

const CONFIRMED_MS_BITS: u32 = 40;
const CONFIRMED_MS_MASK: u64 = (1 << CONFIRMED_MS_BITS) - 1;

impl Confirmed {
    fn set(&self, epoch: u64, ms: u64) {
        let word = (epoch << CONFIRMED_MS_BITS) | (ms.min(CONFIRMED_MS_MASK - 1) + 1);
        self.0.store(word, Ordering::Relaxed);
    }

    fn revoke(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// The proof of the record `from` replaced, for the record that replaced it.
    pub fn carry(&self, from: &Confirmed) {
        self.0
            .store(from.0.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Whether the proof was made in `epoch` (its low 24 bits) less than `window` ago.
    fn holds(&self, epoch: u64, now_ms: u64, window: Duration) -> bool {
        let word = self.0.load(Ordering::Relaxed);
        if word == 0 || word >> CONFIRMED_MS_BITS != epoch & 0xff_ffff {
            return false;
        }
        let at = (word & CONFIRMED_MS_MASK) - 1;
        now_ms.saturating_sub(at) < window.as_millis() as u64
    }
}

/// The rev of a compare-and-set token (`<rev>.<tag>` or `<rev>.<tag>.<replay bytes>`);
/// `None` for another form.
fn rev_of_token(token: &str) -> Option<u64> {
    token.split_once('.')?.0.parse().ok()
}

/// The bytes the session's replay holds, as the token of the write that stored them says
/// (`<rev>.<tag>.<replay bytes>`: `replay::fit_budget`'s count rides along with the record,
/// so the budget costs Redis no command); `None` for a token without it (an earlier
/// version's write).
pub(crate) fn replay_bytes_of(token: &str) -> Option<u64> {
    token.splitn(3, '.').nth(2)?.parse().ok()
}

/// The compare-and-set token of a write: `<rev>.<tag>.<replay bytes>`, the tag as 8 hex
/// digits, the bytes `format!("{rev}.{tag:08x}.{replay_bytes}")` writes. By hand: `format!`
/// and its padded hex took about 1,200 instructions, and every write makes one.
pub(crate) fn write_token(rev: u64, tag: u32, replay_bytes: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = String::with_capacity(48);
    push_decimal(&mut t, rev);
    t.push('.');
    for shift in (0..8).rev() {
        t.push(char::from(HEX[(tag >> (shift * 4)) as usize & 0xf]));
    }
    t.push('.');
    push_decimal(&mut t, replay_bytes);
    t
}

fn push_decimal(t: &mut String, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // ASCII digits: always UTF-8.
    t.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

/// A record encoded for a write.
pub(crate) struct Encoded {
    /// What the script stores after `<rev> `: `~` and the delta against `base`.
    pub body: Vec<u8>,
    /// The base the delta is against.
    pub base: Arc<Vec<u8>>,
    /// `base` as `ses:<id>:base` stores it (`pack_base`), when the write stores it too (it
    /// is new: a rebase).
    pub stored_base: Option<Arc<Vec<u8>>>,
}

/// The first byte of a stored base that is deflated (a MessagePack record starts with an
/// array header, never with this).
const DEFLATED: u8 = b'z';

/// A base as stored: deflated (`z` and raw DEFLATE: 746 bytes of a benchmark game's record
/// take about 500), or as it is if that is not smaller. Only a rebase pays for it; a read
/// of the whole record inflates it (a few microseconds), a write that sends a delta does
/// not touch it.
pub(crate) fn pack_base(base: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(base.len());
    out.push(DEFLATED);
    out.extend(miniz_oxide::deflate::compress_to_vec(base, 1));
    if out.len() < base.len() {
        out
    } else {
        base.to_vec()
    }
}

/// A stored base back as the MessagePack the delta was made against (either form of
/// [`pack_base`]; earlier versions stored it as it is).
fn unpack_base(stored: Vec<u8>) -> Option<Vec<u8>> {
    match stored.split_first() {
        Some((&DEFLATED, z)) => {
            miniz_oxide::inflate::decompress_to_vec_with_limit(z, 16 << 20).ok()
        }
        _ => Some(stored),
    }
}

/// Which stored forms a process writes (`sessions.write_previous_forms`). It reads every
/// form either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoredForms {
    /// The compact forms: a deflated base, tagged events and replay lines with times from
    /// the session's creation.
    #[default]
    Current,
    /// What the previous release writes and reads (a base as it is, untagged events and
    /// replay lines with absolute times): for a rolling upgrade, until every API process
    /// runs this release (then switch back, so new writes take the compact forms).
    Previous,
}

/// Encodes `s` as a delta against `base` (the loaded record's), or rebases: when there is
/// no base or the delta would be more than a third of the record (the fields that change
/// have drifted far from the base), the record becomes the new base and its delta a single
/// copy.
#[cfg(test)]
pub(crate) fn encode_write(
    s: &Session,
    base: Option<&Arc<Vec<u8>>>,
) -> Result<Encoded, RcadiaError> {
    encode_write_as(s, base, StoredForms::Current)
}

/// [`encode_write`], the new base (if any) stored in `forms`.
pub(crate) fn encode_write_as(
    s: &Session,
    base: Option<&Arc<Vec<u8>>>,
    forms: StoredForms,
) -> Result<Encoded, RcadiaError> {
    let bytes = match forms {
        StoredForms::Current => encode_record(s)?,
        StoredForms::Previous => encode_record(&s.as_previous_release_reads())?,
    };
    let with = |d: Vec<u8>| {
        let mut body = Vec::with_capacity(d.len() + 1);
        body.push(DELTA);
        body.extend(d);
        body
    };
    if let Some(base) = base {
        if let Some(d) = delta::delta_within(base, &bytes, bytes.len() / 3) {
            return Ok(Encoded {
                body: with(d),
                base: base.clone(),
                stored_base: None,
            });
        }
    }
    let body = with(delta::delta(&bytes, &bytes));
    Ok(Encoded {
        body,
        stored_base: Some(Arc::new(match forms {
            StoredForms::Current => pack_base(&bytes),
            StoredForms::Previous => bytes.clone(),
        })),
        base: Arc::new(bytes),
    })
}

/// The record of `s` as stored after its `rev` (the save script puts `<token> ` before it).
pub(crate) fn encode_record(s: &Session) -> Result<Vec<u8>, RcadiaError> {
    let mut out = Vec::with_capacity(1024);
    rmp_serde::encode::write(&mut out, s)
        .map_err(|e| RcadiaError::Internal(format!("session does not encode: {e}")))?;
    Ok(out)
}

/// The stored value of `s` under the stored `rev` `token`, as earlier versions stored it
/// (the whole record, no base).
#[cfg(test)]
pub(crate) fn encode(token: &str, s: &Session) -> Result<Vec<u8>, RcadiaError> {
    let mut out = format!("{token} ").into_bytes();
    out.extend(encode_record(s)?);
    Ok(out)
}

/// The stored `rev` at the start of a stored value (`None` if it is not one).
pub(crate) fn token_of(value: &[u8]) -> Option<&str> {
    let end = value.iter().position(|b| *b == b' ')?;
    std::str::from_utf8(&value[..end]).ok()
}

fn bad(id: &str, e: impl std::fmt::Display) -> RcadiaError {
    RcadiaError::Internal(format!("session {id} does not decode: {e}"))
}

/// Decodes a stored value and its base (`MGET ses:<id> ses:<id>:base`); `None` if there is
/// none. `known` is a record of the session this process holds: when the stored base is
/// the one `known`'s delta was made against (byte for byte as stored), its inflated base is
/// shared instead of inflating the stored one again. A session keeps its base across many
/// writes (until a rebase), so this is the common case of a read.
pub(crate) fn decode(
    id: &str,
    value: Option<Vec<u8>>,
    base: Option<Vec<u8>>,
    known: Option<&Stored>,
) -> Result<Option<Stored>, RcadiaError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let token = token_of(&value).ok_or_else(|| bad(id, "no rev before the record"))?;
    let body = &value[token.len() + 1..];
    let (session, base, base_stored): (Session, _, _) = match body.split_first() {
        Some((&DELTA, d)) => {
            let stored = base.ok_or_else(|| bad(id, "its base is missing"))?;
            let same = known.and_then(|k| {
                let (packed, inflated) = (k.base_stored.as_ref()?, k.base.as_ref()?);
                (packed.as_slice() == stored.as_slice()).then(|| (inflated.clone(), packed.clone()))
            });
            let (base, stored) = match same {
                Some(both) => both,
                None => {
                    let packed = Arc::new(stored.clone());
                    let base =
                        unpack_base(stored).ok_or_else(|| bad(id, "its base does not inflate"))?;
                    (Arc::new(base), packed)
                }
            };
            let bytes =
                delta::apply(&base, d).ok_or_else(|| bad(id, "its delta does not fit its base"))?;
            (
                rmp_serde::from_slice(&bytes).map_err(|e| bad(id, e))?,
                Some(base),
                Some(stored),
            )
        }
        // An earlier version's whole record.
        _ => (
            rmp_serde::from_slice(body).map_err(|e| bad(id, e))?,
            None,
            None,
        ),
    };
    Ok(Some(Stored {
        token: token.to_string(),
        session,
        legacy: false,
        base,
        base_stored,
        keys: OnceLock::new(),
        confirmed: Confirmed::default(),
    }))
}

/// Decodes an earlier version's hash (`HMGET rev json`); `None` if there is none.
pub(crate) fn decode_legacy(
    id: &str,
    (rev, json): (Option<String>, Option<String>),
) -> Result<Option<Stored>, RcadiaError> {
    let (Some(token), Some(json)) = (rev, json) else {
        return Ok(None);
    };
    Ok(Some(Stored {
        token,
        session: serde_json::from_str(&json).map_err(|e| bad(id, e))?,
        legacy: true,
        base: None,
        base_stored: None,
        keys: OnceLock::new(),
        confirmed: Confirmed::default(),
    }))
}

/// Names the event log stores as a one-byte code: event types and field names, by their
/// position. Append only: stored events name their type and fields by these codes, so a
/// name never moves or goes; a name not listed is stored as text.
const EVENT_NAMES: &[&str] = &[
    // types
    "action",
    "turn",
    "timeout",
    "game_start",
    "game_over",
    "player_joined",
    "player_ready",
    "player_left",
    "rematch",
    "new_series",
    "reservation_expired",
    // fields
    "playerId",
    "actionId",
    "status",
    "reason",
    "onTurnSeats",
    "result",
    "seat",
    "asName",
    "players",
    "round",
    "nextSessionId",
    "seriesId",
    "removed",
    "strike",
    "maxStrikes",
    "final",
];

/// A name as stored: its code in [`EVENT_NAMES`] or its text.
#[derive(Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(untagged)]
enum Name<'a> {
    Code(u8),
    #[serde(borrow)]
    Text(std::borrow::Cow<'a, str>),
}

impl<'a> Name<'a> {
    fn of(name: &'a str) -> Name<'a> {
        match EVENT_NAMES.iter().position(|n| *n == name) {
            Some(i) => Name::Code(i as u8),
            None => Name::Text(name.into()),
        }
    }

    fn text(&self) -> Option<String> {
        match self {
            Name::Code(i) => EVENT_NAMES.get(*i as usize).map(|n| n.to_string()),
            Name::Text(t) => Some(t.to_string()),
        }
    }
}

/// The first byte of an event in its current stored form (earlier forms start with `{`, JSON
/// text, or with a MessagePack array header, `0x94`).
const EVENT_V2: u8 = 0x01;

/// The action statuses an event's `status` stores as a code (by position; append only).
const STATUSES: &[&str] = &["pending", "applied", "rejected", "unconfirmed"];

/// An event of the log as stored: `0x01` and MessagePack `[index, type, at, {field: value}]`
/// with known names as one-byte codes (`EVENT_NAMES`), `at` in ms from the session's
/// creation (`created_at_ms`: a few bytes, not nine), and the platform's own values in
/// binary: a player id `p_<8 hex>` and an action id `a_<16 hex>` as their numbers, an action
/// status as its code (`STATUSES`), and an action event's `reason` left out when it is null.
/// About a quarter of its JSON text. An event without that shape (it has none today) is
/// stored as its JSON text. Earlier versions stored `[index, type, at ms, {field: value}]`
/// without the tag byte and with the values as they are (`decode_event` reads all three).
#[cfg(test)]
pub(crate) fn encode_event(e: &Value, created_at_ms: u64) -> Vec<u8> {
    encode_event_as(e, created_at_ms, StoredForms::Current)
}

/// [`encode_event`] in `forms`: the previous form is `[index, type, at ms, {field: value}]`
/// untagged, with the values as they are.
pub(crate) fn encode_event_as(e: &Value, created_at_ms: u64, forms: StoredForms) -> Vec<u8> {
    let previous = forms == StoredForms::Previous;
    let compact = e.as_object().and_then(|m| {
        let index = m.get("index")?.as_u64()?;
        let kind = m.get("type")?.as_str()?;
        let at = m.get("at")?.as_str()?;
        let at_ms = horst_dates::parse_rfc3339_ms(at).filter(|t| iso8601_ms(*t) == at)?;
        let fields: Vec<(Name, Value)> = m
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "index" | "type" | "at"))
            .filter(|(k, v)| {
                previous || !(kind == "action" && k.as_str() == "reason" && v.is_null())
            })
            .map(|(k, v)| {
                (
                    Name::of(k),
                    if previous {
                        v.clone()
                    } else {
                        compact_value(k, v)
                    },
                )
            })
            .collect();
        let fields = FieldMap(fields);
        if previous {
            return rmp_serde::to_vec(&(index, Name::of(kind), at_ms, fields)).ok();
        }
        let mut out = vec![EVENT_V2];
        let at = at_ms as i64 - created_at_ms as i64;
        rmp_serde::encode::write(&mut out, &(index, Name::of(kind), at, fields)).ok()?;
        Some(out)
    });
    compact.unwrap_or_else(|| e.to_string().into_bytes())
}

/// A field's value as the current form stores it: a player id, an action id or an action
/// status as a number when it reads back exactly (`full_value` undoes it), else as it is.
fn compact_value(field: &str, v: &Value) -> Value {
    let Some(text) = v.as_str() else {
        return v.clone();
    };
    let number = match field {
        // Eight (sixteen) lowercase hex digits read back exactly as `full_value` writes them.
        "playerId" if horst_sessions::is_player_id(text) => text
            .strip_prefix("p_")
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .map(u64::from),
        "actionId" => text
            .strip_prefix("a_")
            .filter(|h| h.len() == 16 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .and_then(|h| u64::from_str_radix(h, 16).ok()),
        "status" => STATUSES.iter().position(|s| *s == text).map(|i| i as u64),
        _ => None,
    };
    number.map_or_else(|| v.clone(), Value::from)
}

/// The inverse of [`compact_value`]: those fields store text, so a number there is one.
fn full_value(field: &str, v: Value) -> Option<Value> {
    let Some(n) = v.as_u64() else {
        return Some(v);
    };
    Some(match field {
        "playerId" => horst_sessions::format_player_id(u32::try_from(n).ok()?).into(),
        "actionId" => format!("a_{n:016x}").into(),
        "status" => (*STATUSES.get(n as usize)?).into(),
        _ => v,
    })
}

/// Fields serialized as a MessagePack map (not a list of pairs).
struct FieldMap<'a>(Vec<(Name<'a>, Value)>);

impl Serialize for FieldMap<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// An event of the log as `GET /events` shows it, from any stored form (the JSON text of
/// earlier versions starts with `{`; see [`encode_event`]) of a session created at
/// `created_at_ms`; `None` if it is none of them.
pub(crate) fn decode_event(raw: &[u8], created_at_ms: u64) -> Option<Value> {
    if raw.first() == Some(&b'{') {
        return serde_json::from_slice(raw).ok();
    }
    let (v2, body) = match raw.split_first() {
        Some((&EVENT_V2, rest)) => (true, rest),
        _ => (false, raw),
    };
    let (index, kind, at, fields): (u64, Name, i64, std::collections::BTreeMap<Name, Value>) =
        rmp_serde::from_slice(body).ok()?;
    let kind = kind.text()?;
    let at_ms = if v2 {
        u64::try_from((created_at_ms as i64).checked_add(at)?).ok()?
    } else {
        u64::try_from(at).ok()?
    };
    let mut out = serde_json::Map::new();
    for (k, v) in fields {
        let k = k.text()?;
        let v = if v2 { full_value(&k, v)? } else { v };
        out.insert(k, v);
    }
    if v2 && kind == "action" && !out.contains_key("reason") {
        out.insert("reason".into(), Value::Null);
    }
    out.insert("index".into(), index.into());
    out.insert("type".into(), kind.into());
    out.insert("at".into(), iso8601_ms(at_ms).into());
    Some(Value::Object(out))
}

/// A session as stored, shared with the process's cache (no copy): what an apply, a load
/// and a wait hand out. It reads as a [`Session`]; [`SessionRef::into_session`] copies it
/// only if the cache still holds it.
#[derive(Clone)]
pub struct SessionRef(pub(crate) Arc<Stored>);

impl SessionRef {
    /// The session itself (moved out if nobody else holds it, else copied).
    pub fn into_session(self) -> Session {
        match Arc::try_unwrap(self.0) {
            Ok(stored) => stored.session,
            Err(shared) => shared.session.clone(),
        }
    }
}

impl std::ops::Deref for SessionRef {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0.session
    }
}

impl std::fmt::Debug for SessionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.session.fmt(f)
    }
}

/// The process's decoded records by session id.
///
/// Beside the records known to be stored, the writes of this process whose script has not
/// answered yet (*in flight*, each of them: an apply of this process starts from the latest
/// one, so two or three may be in flight together): an apply of this process starts from the
/// latest (its write is sent after it on the same connection, so it wins when the one in
/// flight did), and a wake-up naming one's rev proves it stored. Every one is kept, not only
/// the latest: a write's wake-up often arrives once the next write is in flight, and a waiter
/// woken by it takes its record from here instead of reading the session whole. Neither displaces
/// the stored record until the script answers, so a write that loses its race never evicts
/// the winner's record from the cache.
///
/// A record is *fresh* ([`RecordCache::fresh`]) while the process's pub/sub listener vouches
/// for it: every stored write that wakes anyone publishes its token on the session's
/// channel, the listener hears them in the order Redis published them, and
/// [`RecordCache::heard`] marks the record proved when its own token comes by and unproved
/// when a later one does. A fresh record is served without asking Redis; any other is
/// checked first (`Rcadia::current`). A gap in the listener's connection ends every proof,
/// and a proof lapses after [`FRESH_FOR`] in any case, so a connection that died silently
/// cannot keep a stale record in use for longer.
///
/// What this gives up: a read in this process may miss a write of another process for as
/// long as its message takes to arrive (a write of this process is seen at once), and a
/// write that wakes nobody publishes nothing (bookkeeping that changes no view: the host's
/// liveness, delivery marks, lazily re-armed timers), so another process may serve the
/// record before it until its proof lapses; what it serves then differs only in that
/// bookkeeping. Writes are never affected: they compare-and-set against the stored token.
/// Nor are decisions: a deadline or a refused event on a record only vouched for is checked
/// against the stored token first (`Rcadia::apply`).
pub(crate) struct RecordCache {
    map: Mutex<Maps>,
    /// Moves on at every gap in the listener's connection.
    epoch: AtomicU64,
    started: Instant,
}

impl Default for RecordCache {
    fn default() -> Self {
        RecordCache {
            map: Mutex::default(),
            epoch: AtomicU64::new(1),
            started: Instant::now(),
        }
    }
}

/// How long the listener's proof of a record holds without a new one: as long as a waiting
/// long-poll goes between reads of its own (`wait::RECHECK`).
pub(crate) const FRESH_FOR: Duration = Duration::from_secs(2);

/// Keyed by session id with the fast hasher: only ids of stored sessions (minted by the
/// server) are ever inserted, so no client chooses the keys a table holds.
#[derive(Default)]
struct Maps {
    stored: FastMap<String, Arc<Stored>>,
    /// The writes in flight of each session, oldest first (a few at most).
    in_flight: FastMap<String, Vec<Arc<Stored>>>,
}

impl RecordCache {
    /// The record an apply starts from: the newest of the stored one and those in flight.
    pub fn get(&self, id: &str) -> Option<Arc<Stored>> {
        let maps = self.lock();
        let stored = maps.stored.get(id);
        let latest = maps
            .in_flight
            .get(id)
            .and_then(|f| f.iter().max_by_key(|r| r.session.rev()));
        match (stored, latest) {
            (Some(s), Some(f)) if f.session.rev() > s.session.rev() => Some(f.clone()),
            (None, Some(f)) => Some(f.clone()),
            (s, _) => s.cloned(),
        }
    }

    /// The record whose stored `rev` is `token` (a wake-up's), stored or in flight.
    pub fn get_at(&self, id: &str, token: &str) -> Option<Arc<Stored>> {
        let maps = self.lock();
        let found = maps.stored.get(id).filter(|r| r.token == token);
        found.or_else(|| maps.flying_at(id, token)).cloned()
    }

    /// The record a wake-up naming `token` (a stored write's) can be answered with: the one
    /// with that token, stored or in flight, or a stored record of a later rev (stored after
    /// that write: a session's stored revs only grow, each write one past the record it
    /// replaced). A wake-up often arrives after the writer's next write was answered (the
    /// reply and the message come on different connections): that is no reason to read.
    pub fn get_at_or_after(&self, id: &str, token: &str) -> Option<Arc<Stored>> {
        let rev = rev_of_token(token);
        let maps = self.lock();
        let later =
            |r: &&Arc<Stored>| r.token == token || rev.is_some_and(|rev| r.session.rev() > rev);
        let found = maps.stored.get(id).filter(later);
        found.or_else(|| maps.flying_at(id, token)).cloned()
    }

    /// A write of this process is on its way; `written` or `landed` takes it off.
    pub fn in_flight(&self, id: &str, r: Arc<Stored>) {
        self.lock()
            .in_flight
            .entry(id.to_string())
            .or_default()
            .push(r);
    }

    /// A write in flight was refused or failed: off the in-flight map (if still there).
    pub fn landed(&self, id: &str, r: &Arc<Stored>) {
        self.lock().take_flying(id, r);
    }

    /// A write of this process is stored: the stored record unless a newer one is there.
    pub fn written(&self, id: &str, r: &Arc<Stored>) {
        let mut maps = self.lock();
        if !maps.take_flying(id, r) {
            // A failed write made the cache forget it: a later write may be stored and heard
            // already, and `heard` no longer reached this record, so the proof it carried
            // from the record it replaced says nothing now. Unproved, a read checks the
            // stored rev first. (While in flight, `heard` reaches it: a later write's
            // wake-up revokes its proof there.)
            r.confirmed.revoke();
        }
        if maps
            .stored
            .get(id)
            .is_some_and(|old| old.session.rev() > r.session.rev())
        {
            return;
        }
        maps.insert(id, r.clone());
    }

    /// Replaces whatever is cached (a record read or a lost race's stored record: the truth).
    pub fn replace(&self, id: &str, r: Arc<Stored>) {
        self.lock().insert(id, r);
    }

    pub fn forget(&self, id: &str) {
        let mut maps = self.lock();
        maps.stored.remove(id);
        maps.in_flight.remove(id);
    }

    /// The stored record of `id` if the listener proved it lately. A write of this process
    /// in flight does not change that: nobody has been told of it before its script answers
    /// (its caller is answered after `written`, which makes it the stored record) or its
    /// wake-up is heard (observers hear a message before waiters are woken, and `heard`
    /// revokes this record's proof then), so reading the record before it is as right as
    /// reading it after, and no reader sees the session go back.
    pub fn fresh(&self, id: &str) -> Option<Arc<Stored>> {
        let (epoch, now) = (self.epoch.load(Ordering::Relaxed), self.now_ms());
        let maps = self.lock();
        maps.stored
            .get(id)
            .filter(|r| r.confirmed.holds(epoch, now, FRESH_FOR))
            .cloned()
    }

    /// A session's channel carried `token` (a stored write's): the record with that token is
    /// proved, any with an older rev is not any more.
    pub fn heard(&self, id: &str, token: &str) {
        let rev = rev_of_token(token);
        let (epoch, now) = (self.epoch.load(Ordering::Relaxed), self.now_ms());
        let maps = self.lock();
        let flying = maps.in_flight.get(id).into_iter().flatten();
        for r in maps.stored.get(id).into_iter().chain(flying) {
            if r.token == token {
                r.confirmed.set(epoch, now);
            } else if rev.is_none_or(|rev| rev >= r.session.rev()) {
                // A write after this record's (or as late, by another writer: one of the two
                // lost its compare-and-set), or a token of a form this version cannot order.
                r.confirmed.revoke();
            }
        }
    }

    /// The listener's connection was lost or made again: messages may have been missed, so
    /// no record is proved any more.
    pub fn gap(&self) {
        self.epoch.fetch_add(1, Ordering::Relaxed);
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Maps> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Maps {
    /// The write in flight whose stored `rev` is `token`.
    fn flying_at(&self, id: &str, token: &str) -> Option<&Arc<Stored>> {
        self.in_flight.get(id)?.iter().find(|r| r.token == token)
    }

    /// Takes `r` off the writes in flight; whether it was there.
    fn take_flying(&mut self, id: &str, r: &Arc<Stored>) -> bool {
        let Some(flying) = self.in_flight.get_mut(id) else {
            return false;
        };
        let Some(i) = flying.iter().position(|f| Arc::ptr_eq(f, r)) else {
            return false;
        };
        flying.remove(i);
        if flying.is_empty() {
            self.in_flight.remove(id);
        }
        true
    }

    fn insert(&mut self, id: &str, r: Arc<Stored>) {
        if self.stored.len() >= CACHE_CAPACITY && !self.stored.contains_key(id) {
            let drop: Vec<String> = self
                .stored
                .keys()
                .take(CACHE_CAPACITY / 2)
                .cloned()
                .collect();
            for k in drop {
                self.stored.remove(&k);
            }
        }
        self.stored.insert(id.to_string(), r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_sessions::{Event, GameInfo, HostKind, NewSession, Op, Timings};
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A session with a bit of everything: seats, a published turn, an action delivered to
    /// the host, timers (one with a player id in its kind), events.
    fn played() -> Session {
        let t0 = 1_791_399_600_000;
        let (mut s, _) = Session::create(
            NewSession {
                session_id: "ses_beef00000001".into(),
                config: json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true,
                    "sdkVersion": "2.0.0", "turnTimeout": 10}),
                host_identity: "host".into(),
                host_kind: HostKind::House,
                game: GameInfo::default(),
                timings: Timings::default(),
            },
            t0,
        )
        .unwrap();
        for (i, who) in ["a", "b"].iter().enumerate() {
            s.apply(
                Event::Join {
                    player_id: horst_sessions::format_player_id(i as u32 + 1),
                    identity: who.to_string(),
                    as_name: None,
                },
                t0,
            )
            .unwrap();
        }
        s.apply(
            Event::HostPoll {
                after: Some(0),
                wait_ms: 0,
            },
            t0 + 10,
        )
        .unwrap();
        let pid = s.players()[0].player_id.clone();
        let ops = Op::parse_batch(&json!({"ops": [
            {"op": "legal_actions", "playerId": pid, "actions": ["go", {"to": 1.5}]},
            {"op": "state", "state": {"board": [1, -2, null, "x"]}},
        ]}))
        .unwrap();
        s.apply(
            Event::PublishOps {
                ops,
                batch_id: None,
            },
            t0 + 20,
        )
        .unwrap();
        s.apply(
            Event::Action {
                player_id: pid.to_string(),
                action: json!("go"),
                turn: None,
                action_id: "a_1".into(),
                idempotency_key: None,
            },
            t0 + 30,
        )
        .unwrap();
        s.apply(
            Event::HostPoll {
                after: Some(1),
                wait_ms: 0,
            },
            t0 + 40,
        )
        .unwrap();
        s
    }

    /// The token written by hand is `format!`'s, at the edges of every field and between.
    #[test]
    fn a_write_s_token_is_the_format_macro_s() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let check = |rev: u64, tag: u32, used: u64| {
            let token = write_token(rev, tag, used);
            assert_eq!(token, format!("{rev}.{tag:08x}.{used}"));
            assert_eq!(rev_of_token(&token), Some(rev));
            assert_eq!(replay_bytes_of(&token), Some(used));
        };
        for edge in [0, 1, 9, 10, 99, 100, u64::from(u32::MAX), u64::MAX] {
            check(edge, edge as u32, edge);
        }
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(x >> (x % 64), (x >> 7) as u32, x % 1_000_000_007);
        }
    }

    #[test]
    fn records_round_trip_through_messagepack_at_a_fraction_of_json() {
        let mut s = played();
        s.take_held_events();
        let value = encode("5.0000beef", &s).unwrap();
        assert_eq!(token_of(&value), Some("5.0000beef"));
        let back = decode("ses_beef00000001", Some(value.clone()), None, None)
            .unwrap()
            .unwrap();
        assert_eq!(back.session, s);
        assert_eq!(back.token, "5.0000beef");
        assert!(!back.legacy && back.base.is_none());
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            value.len() * 2 < json.len(),
            "{} bytes stored, {} of JSON",
            value.len(),
            json.len()
        );
        assert!(decode("x", None, None, None).unwrap().is_none());
        assert!(decode("x", Some(b"1 \x01\x02".to_vec()), None, None).is_err());
        assert!(decode("x", Some(b"nospace".to_vec()), None, None).is_err());
    }

    /// What `ses:<id>` holds for `e` under `token`.
    fn stored(token: &str, e: &Encoded) -> Vec<u8> {
        let mut v = format!("{token} ").into_bytes();
        v.extend(&e.body);
        v
    }

    #[test]
    fn writes_send_a_small_delta_against_the_base_and_rebase_when_it_grows() {
        let mut s = played();
        s.take_held_events();
        // No base yet (a new session, or an earlier version's value): the write stores one.
        let first = encode_write(&s, None).unwrap();
        assert!(
            first.stored_base.is_some() && first.body.len() <= 8,
            "{:?}",
            first.body
        );
        // The base is stored deflated, about two thirds of it.
        let packed = first.stored_base.as_deref().cloned().unwrap();
        assert!(
            packed[0] == DEFLATED && packed.len() * 10 < first.base.len() * 8,
            "{} bytes stored for a base of {}",
            packed.len(),
            first.base.len()
        );
        let back = decode("s", Some(stored("1.0", &first)), Some(packed.clone()), None)
            .unwrap()
            .unwrap();
        assert_eq!(back.session, s);
        assert_eq!(back.base.as_deref(), Some(&*first.base));
        // Earlier versions stored the base as it is: it still reads.
        let back = decode(
            "s",
            Some(stored("1.0", &first)),
            Some(first.base.to_vec()),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(back.session, s);
        // A base that does not inflate does not decode.
        let mut broken = packed;
        broken.truncate(broken.len() / 2);
        assert!(decode("s", Some(stored("1.0", &first)), Some(broken), None).is_err());
        // The next write (a host poll, time moved on) is a delta of a few dozen bytes.
        s.apply(
            Event::HostPoll {
                after: Some(1),
                wait_ms: 0,
            },
            1_791_399_600_500,
        )
        .unwrap();
        s.take_held_events();
        let next = encode_write(&s, Some(&first.base)).unwrap();
        assert!(next.stored_base.is_none());
        assert!(
            next.body.len() * 8 < first.base.len(),
            "{} bytes of delta for a record of {}",
            next.body.len(),
            first.base.len()
        );
        let back = decode(
            "s",
            Some(stored("2.0", &next)),
            Some(first.base.to_vec()),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(back.session, s);
        // A base far from the record: rebased.
        let far = Arc::new(vec![0x90u8]);
        let re = encode_write(&s, Some(&far)).unwrap();
        assert!(re.stored_base.is_some() && *re.base == encode_record(&s).unwrap());
        // A delta without its base, or against the wrong one, does not decode.
        assert!(decode("s", Some(stored("2.0", &next)), None, None).is_err());
        assert!(decode("s", Some(stored("2.0", &next)), Some(vec![1, 2]), None).is_err());
    }

    /// A read (`MGET` of the value and the stored base) whose base is byte for byte the one a
    /// record this process holds was made against shares that record's inflated base instead
    /// of inflating it again; a different stored base (another writer rebased) is inflated.
    #[test]
    fn a_read_shares_the_inflated_base_of_a_known_record_with_the_same_stored_base() {
        let mut s = played();
        s.take_held_events();
        let first = encode_write(&s, None).unwrap();
        let packed = first.stored_base.as_deref().cloned().unwrap();
        let known = decode("s", Some(stored("1.0", &first)), Some(packed.clone()), None)
            .unwrap()
            .unwrap();
        assert_eq!(known.base_stored.as_deref(), Some(&packed));
        s.apply(
            Event::HostPoll {
                after: Some(1),
                wait_ms: 0,
            },
            1_791_399_600_500,
        )
        .unwrap();
        s.take_held_events();
        // Another process's write: a delta against the same base.
        let next = encode_write(&s, Some(&first.base)).unwrap();
        assert!(next.stored_base.is_none());
        let read = decode(
            "s",
            Some(stored("2.0", &next)),
            Some(packed.clone()),
            Some(&known),
        )
        .unwrap()
        .unwrap();
        assert_eq!(read.session, s);
        let (shared, kept) = (read.base.as_ref().unwrap(), known.base.as_ref().unwrap());
        assert!(
            Arc::ptr_eq(shared, kept),
            "the known base was inflated again"
        );
        assert!(Arc::ptr_eq(
            read.base_stored.as_ref().unwrap(),
            known.base_stored.as_ref().unwrap()
        ));
        // Another writer rebased: its base is inflated, whatever the known record holds.
        let rebased = encode_write_as(&s, None, StoredForms::Current).unwrap();
        let new_packed = rebased.stored_base.as_deref().cloned().unwrap();
        assert_ne!(new_packed, packed);
        let read = decode(
            "s",
            Some(stored("3.0", &rebased)),
            Some(new_packed.clone()),
            Some(&known),
        )
        .unwrap()
        .unwrap();
        assert_eq!(read.session, s);
        assert!(!Arc::ptr_eq(read.base.as_ref().unwrap(), kept));
        assert_eq!(read.base.as_deref(), Some(&*rebased.base));
        assert_eq!(read.base_stored.as_deref(), Some(&new_packed));
    }

    /// `sessions.write_previous_forms`: what a write stores is what the previous release
    /// reads (its decoders, restated here: an untagged `[index, type, at ms, fields]` event
    /// with the values as they are, a base as it is), and this release reads it back too.
    #[test]
    fn the_previous_forms_are_what_the_previous_release_reads() {
        let mut s = played();
        let created = s.created_at_ms();
        let events = s.take_held_events();
        for e in &events {
            let stored = encode_event_as(e, created, StoredForms::Previous);
            assert_ne!(stored[0], EVENT_V2);
            type Previous<'a> = (
                u64,
                Name<'a>,
                u64,
                std::collections::BTreeMap<Name<'a>, Value>,
            );
            let (index, kind, at, fields): Previous = rmp_serde::from_slice(&stored).unwrap();
            assert_eq!(Some(index), e["index"].as_u64());
            assert_eq!(kind.text().as_deref(), e["type"].as_str());
            assert_eq!(
                iso8601_ms(at),
                e["at"].as_str().unwrap(),
                "an absolute time"
            );
            for (k, v) in fields {
                assert_eq!(&v, &e[k.text().unwrap().as_str()], "values as they are");
            }
            assert_eq!(decode_event(&stored, created).as_ref(), Some(e));
        }
        let first = encode_write_as(&s, None, StoredForms::Previous).unwrap();
        let base = first.stored_base.as_deref().cloned().unwrap();
        assert_eq!(base, *first.base, "the base as it is, not deflated");
        let back = decode("s", Some(stored("1.0", &first)), Some(base), None)
            .unwrap()
            .unwrap();
        assert_eq!(back.session, *s.as_previous_release_reads());
    }

    /// The players' latest actions carry a fingerprint (a keyless resend is told it is one),
    /// which the previous release's decoder does not know: its `lastAction` is an array of six
    /// elements, and rmp-serde refuses a seventh. The previous forms leave it out; this
    /// release reads a record without it.
    #[test]
    fn the_previous_forms_leave_out_the_latest_actions_fingerprint() {
        let s = played();
        let current = encode_record(&s).unwrap();
        let previous = encode_write_as(&s, None, StoredForms::Previous).unwrap();
        assert!(
            previous.base.len() < current.len(),
            "the fingerprints take room in the current form only"
        );
        let read: Session = rmp_serde::from_slice(&previous.base).unwrap();
        assert_eq!(read, *s.as_previous_release_reads());
        assert_ne!(read, s, "the played session has a fingerprint to leave out");
        // A latest action as the previous release decodes it: six elements, no more.
        type PreviousLastAction = (String, u64, Value, Value, u64, Option<String>);
        let la = horst_sessions::session::LastAction {
            action_id: "a_1".into(),
            turn: 3,
            status: horst_sessions::ActionStatus::Applied,
            reason: Value::Null,
            at_ms: 9,
            key: None,
            fingerprint: None,
        };
        let bytes = rmp_serde::to_vec(&la).unwrap();
        assert!(rmp_serde::from_slice::<PreviousLastAction>(&bytes).is_ok());
        let with = horst_sessions::session::LastAction {
            fingerprint: Some(7),
            ..la
        };
        let bytes = rmp_serde::to_vec(&with).unwrap();
        assert!(
            rmp_serde::from_slice::<PreviousLastAction>(&bytes).is_err(),
            "a seventh element is refused"
        );
    }

    /// A player's past (when they were last struck, which decides whether an unconfirmed
    /// action is applied late) is a twelfth element of the player, which the previous
    /// release's decoder refuses as it refuses a seventh of `lastAction`. The previous forms
    /// leave it out; this release reads a player without it.
    #[test]
    fn the_previous_forms_leave_out_the_players_past() {
        let mut s = played();
        // The delivered action is unconfirmed at 15 s and the 10 s deadline, passed while it
        // was pending, strikes its player at once.
        s.apply(Event::Tick, s.created_at_ms() + 15_100).unwrap();
        let p = &s.players()[0];
        assert_eq!(p.strikes, 1);
        assert!(!p.past.is_empty(), "{p:?}");
        type PreviousPlayer = (
            Value,
            Value,
            Value,
            Value,
            Value,
            Value,
            Value,
            Value,
            Value,
            Value,
            Value,
        );
        let bytes = rmp_serde::to_vec(p).unwrap();
        assert!(
            rmp_serde::from_slice::<PreviousPlayer>(&bytes).is_err(),
            "a twelfth element is refused"
        );
        let previous = s.as_previous_release_reads();
        let bytes = rmp_serde::to_vec(&previous.players()[0]).unwrap();
        assert!(rmp_serde::from_slice::<PreviousPlayer>(&bytes).is_ok());
        let encoded = encode_write_as(&s, None, StoredForms::Previous).unwrap();
        let read: Session = rmp_serde::from_slice(&encoded.base).unwrap();
        assert_eq!(read, *previous);
        assert!(read.players()[0].past.is_empty());
        assert_eq!(read.players()[0].strikes, 1);
    }

    #[test]
    fn events_are_stored_compact_and_read_back_as_they_were() {
        let mut s = played();
        let created = s.created_at_ms();
        let events = s.take_held_events();
        assert!(events.len() >= 3, "{events:?}");
        for e in &events {
            let stored = encode_event(e, created);
            let json = e.to_string();
            assert!(
                stored.len() * 3 < json.len(),
                "{} bytes stored for {json}",
                stored.len()
            );
            let back = decode_event(&stored, created).unwrap();
            assert_eq!(&back, e);
            assert_eq!(back.to_string(), json, "the same JSON, byte for byte");
            // Earlier versions stored the JSON text.
            assert_eq!(decode_event(json.as_bytes(), created).as_ref(), Some(e));
        }
        // An event without the usual shape is kept as JSON.
        let odd = json!({"index": 1, "type": "x", "at": "yesterday"});
        assert_eq!(encode_event(&odd, created), odd.to_string().into_bytes());
        assert_eq!(
            decode_event(&encode_event(&odd, created), created),
            Some(odd)
        );
        assert_eq!(decode_event(b"\xc1", created), None);
        // Names not in the table are kept as text; values that merely look like ids, and
        // ids in other fields, as they are.
        let new = json!({"index": 7, "type": "brand_new", "at": "2026-10-07T19:00:00.042Z",
            "playerId": "p_00000001", "novel": [1, 2], "actionId": "a_0000000000000001x",
            "status": "odd", "seriesId": "p_00000002", "reason": null});
        assert_eq!(
            decode_event(&encode_event(&new, created), created),
            Some(new.clone())
        );
        // An action id of another shape, an action with a reason, before the creation.
        let action = json!({"index": 9, "type": "action", "at": "2020-01-01T00:00:00.000Z",
            "playerId": "p_0000abcd", "actionId": "a_1", "status": "rejected", "turn": 3,
            "reason": {"why": "no"}});
        assert_eq!(
            decode_event(&encode_event(&action, created), created),
            Some(action)
        );
        // Ids with uppercase hex digits read back as the text they were, not as the lowercase
        // form of their number.
        let upper = json!({"index": 10, "type": "action", "at": "2026-10-07T19:00:00.042Z",
            "playerId": "p_0000ABCD", "actionId": "a_00000000000000FF", "status": "applied",
            "reason": null});
        assert_eq!(
            decode_event(&encode_event(&upper, created), created),
            Some(upper)
        );
        // A code past the table (a newer version's) does not read as something else.
        let unknown = rmp_serde::to_vec(&(1u64, 200u8, 0u64, BTreeMap::<u8, u8>::new())).unwrap();
        assert_eq!(decode_event(&unknown, created), None);
        let mut tagged = vec![EVENT_V2];
        tagged.extend(&unknown);
        assert_eq!(decode_event(&tagged, created), None);
    }

    /// A stored time that overflows the creation time it counts from is not an event (it
    /// panicked with "attempt to add with overflow").
    #[test]
    fn an_event_whose_time_overflows_does_not_read() {
        let created = played().created_at_ms();
        for at in [i64::MAX, i64::MIN] {
            let mut stored = vec![EVENT_V2];
            stored.extend(rmp_serde::to_vec(&(1u64, 1u8, at, BTreeMap::<u8, u8>::new())).unwrap());
            assert_eq!(decode_event(&stored, created), None);
        }
    }

    #[test]
    fn events_of_the_previous_stored_form_still_read() {
        // `[index, type, at ms, {field: value}]`, the values as they are (before the tag).
        let at = 1_791_399_600_042u64;
        let fields: BTreeMap<u8, Value> = [
            (11, json!("p_0000abcd")),
            (12, json!("a_00000000000000ff")),
            (13, json!("applied")),
            (14, Value::Null),
            (1, json!(4)),
        ]
        .into_iter()
        .collect();
        let stored = rmp_serde::to_vec(&(12u64, 0u8, at, fields)).unwrap();
        let want = json!({"index": 12, "type": "action", "at": iso8601_ms(at),
            "playerId": "p_0000abcd", "actionId": "a_00000000000000ff", "status": "applied",
            "reason": null, "turn": 4});
        // The creation time does not matter to it.
        assert_eq!(decode_event(&stored, 0), Some(want.clone()));
        assert_eq!(decode_event(&stored, at), Some(want));
    }

    #[test]
    fn json_records_of_earlier_versions_still_load() {
        let mut s = played();
        let json = s.to_stored_json().unwrap();
        s.take_held_events();
        let back = decode_legacy("ses_beef00000001", (Some("5".into()), Some(json)))
            .unwrap()
            .unwrap();
        assert_eq!(back.session, s);
        assert!(back.legacy);
        assert!(decode_legacy("x", (None, None)).unwrap().is_none());
    }

    fn cached(session: &Session, tag: u32) -> Arc<Stored> {
        Arc::new(Stored {
            token: format!("{}.{tag:08x}", session.rev()),
            session: session.clone(),
            legacy: false,
            base: None,
            base_stored: None,
            keys: OnceLock::new(),
            confirmed: Confirmed::default(),
        })
    }

    const ID: &str = "ses_beef00000001";

    /// `from` with a new public state `{"n": n}` at `at`: a new rev.
    fn bumped(from: &Session, n: i64, at: u64) -> Session {
        let mut next = from.clone();
        let ops = Op::parse_batch(&json!({"ops": [{"op": "state", "state": {"n": n}}]}));
        next.apply(
            Event::PublishOps {
                ops: ops.unwrap(),
                batch_id: None,
            },
            at,
        )
        .unwrap();
        next
    }

    #[test]
    fn a_record_is_fresh_from_its_own_wake_up_until_a_later_write_is_heard() {
        let cache = RecordCache::default();
        let s = played();
        let r = cached(&s, 1);
        cache.replace(ID, r.clone());
        // Read from Redis: not vouched for until its own wake-up comes by.
        assert!(cache.fresh(ID).is_none());
        // An older write's wake-up, arriving late, proves nothing and takes nothing away.
        cache.heard(ID, &format!("{}.00000009", s.rev() - 1));
        assert!(cache.fresh(ID).is_none());
        cache.heard(ID, &r.token);
        assert!(Arc::ptr_eq(&cache.fresh(ID).unwrap(), &r));
        cache.heard(ID, &format!("{}.00000009", s.rev() - 1));
        assert!(cache.fresh(ID).is_some(), "an older write's wake-up");
        // Another session's wake-up is not this one's.
        cache.heard("ses_beef00000002", &format!("{}.00000002", s.rev() + 1));
        assert!(cache.fresh(ID).is_some());
        // A later write (by anyone): no longer vouched for.
        cache.heard(ID, &format!("{}.00000002", s.rev() + 1));
        assert!(cache.fresh(ID).is_none());
        // A write of the same rev by another writer (one of the two lost): not either.
        cache.heard(ID, &r.token);
        assert!(cache.fresh(ID).is_some());
        cache.heard(ID, &format!("{}.00000003", s.rev()));
        assert!(cache.fresh(ID).is_none());
        // A token of a form this version cannot order revokes too.
        cache.heard(ID, &r.token);
        cache.heard(ID, "legacy-token");
        assert!(cache.fresh(ID).is_none());
    }

    #[test]
    fn a_gap_in_the_listener_ends_every_proof_and_a_proof_lapses() {
        let cache = RecordCache::default();
        let s = played();
        let (a, b) = (cached(&s, 1), cached(&s, 2));
        cache.replace(ID, a.clone());
        cache.replace("ses_beef00000002", b.clone());
        cache.heard(ID, &a.token);
        cache.heard("ses_beef00000002", &b.token);
        assert!(cache.fresh(ID).is_some() && cache.fresh("ses_beef00000002").is_some());
        cache.gap();
        assert!(cache.fresh(ID).is_none() && cache.fresh("ses_beef00000002").is_none());
        // Heard again on the new connection: vouched for again.
        cache.heard(ID, &a.token);
        assert!(cache.fresh(ID).is_some());
        // A proof holds for FRESH_FOR only.
        let epoch = cache.epoch.load(Ordering::Relaxed);
        let now = cache.now_ms();
        assert!(a.confirmed.holds(epoch, now, FRESH_FOR));
        assert!(a.confirmed.holds(epoch, now + 1_999, FRESH_FOR));
        assert!(!a.confirmed.holds(epoch, now + 2_000 + 1, FRESH_FOR));
        assert!(!a.confirmed.holds(epoch + 1, now, FRESH_FOR));
    }

    #[test]
    fn a_write_in_flight_is_vouched_for_once_it_landed() {
        let cache = RecordCache::default();
        let s = played();
        let old = cached(&s, 1);
        cache.replace(ID, old.clone());
        cache.heard(ID, &old.token);
        // This process writes: the new record takes over the old one's proof.
        let mut next = s.clone();
        next.apply(Event::Tick, 1_791_399_700_000).unwrap();
        let new = cached(&next, 2);
        assert!(new.session.rev() > old.session.rev() || new.token != old.token);
        new.confirmed.carry(&old.confirmed);
        cache.in_flight(ID, new.clone());
        // Its outcome is unknown; the stored record is still the one vouched for.
        assert!(Arc::ptr_eq(&cache.fresh(ID).unwrap(), &old));
        // Its own wake-up comes by before the script's answer.
        cache.heard(ID, &new.token);
        cache.written(ID, &new);
        assert!(Arc::ptr_eq(&cache.fresh(ID).unwrap(), &new));

        // A write of another process lands right after ours, and its wake-up comes by before
        // our script's answer: our record is stored but not current.
        let mut third = next.clone();
        third.apply(Event::Tick, 1_791_399_800_000).unwrap();
        let newer = cached(&third, 3);
        newer.confirmed.carry(&new.confirmed);
        cache.in_flight(ID, newer.clone());
        cache.heard(ID, &format!("{}.0000000f", newer.session.rev() + 1));
        cache.written(ID, &newer);
        assert!(cache.fresh(ID).is_none());
    }

    #[test]
    fn a_write_whose_place_in_flight_a_later_one_took_is_not_vouched_for_when_it_lands() {
        let cache = RecordCache::default();
        let s = played();
        let r5 = cached(&s, 1);
        cache.replace(ID, r5.clone());
        cache.heard(ID, &r5.token);
        // Two applies of this process, one after the other: R6 from R5, R7 from R6 in flight.
        // A new public state is a new rev.
        let s6 = bumped(&s, 6, 1_791_399_600_100);
        let r6 = cached(&s6, 2);
        r6.confirmed.carry(&r5.confirmed);
        cache.in_flight(ID, r6.clone());
        let s7 = bumped(&s6, 7, 1_791_399_600_200);
        let r7 = cached(&s7, 3);
        assert!(
            r5.session.rev() < r6.session.rev() && r6.session.rev() < r7.session.rev(),
            "revs {} {} {}",
            r5.session.rev(),
            r6.session.rev(),
            r7.session.rev()
        );
        r7.confirmed.carry(&r6.confirmed);
        cache.in_flight(ID, r7.clone());
        // Both are stored and both wake-ups heard; R6's script answers first.
        cache.heard(ID, &r6.token);
        cache.heard(ID, &r7.token);
        cache.written(ID, &r6);
        // R7 is the stored record: R6 must not be served as current.
        assert!(
            cache.fresh(ID).is_none_or(|f| Arc::ptr_eq(&f, &r7)),
            "a write whose place a later one took was served as current"
        );
        cache.written(ID, &r7);
        assert!(cache.fresh(ID).is_none_or(|f| Arc::ptr_eq(&f, &r7)));
    }

    /// Two writes of this process in flight (the second applied on the first): the first's
    /// wake-up, arriving before its script's answer, finds its record in the cache. Only the
    /// latest write in flight was kept, so a waiter woken by the first read the session whole.
    #[test]
    fn a_wake_up_finds_a_write_in_flight_behind_a_later_one() {
        let cache = RecordCache::default();
        let s = played();
        let r5 = cached(&s, 1);
        cache.replace(ID, r5.clone());
        let s6 = bumped(&s, 6, 1_791_399_600_100);
        let r6 = cached(&s6, 2);
        let r7 = cached(&bumped(&s6, 7, 1_791_399_600_200), 3);
        assert!(r5.session.rev() < r6.session.rev() && r6.session.rev() < r7.session.rev());
        cache.in_flight(ID, r6.clone());
        cache.in_flight(ID, r7.clone());
        assert!(
            Arc::ptr_eq(&cache.get(ID).unwrap(), &r7),
            "an apply starts from the latest"
        );
        let woken = cache.get_at_or_after(ID, &r6.token);
        assert!(
            woken.is_some_and(|w| Arc::ptr_eq(&w, &r6)),
            "the first write's wake-up found no record"
        );
        // Each lands on its own; the later one stays the stored record.
        cache.written(ID, &r7);
        cache.written(ID, &r6);
        assert!(Arc::ptr_eq(&cache.get(ID).unwrap(), &r7));
        assert!(cache.lock().in_flight.is_empty());
    }

    /// `last_batch_id` is the record's last field: a record stored before it existed (an
    /// array one shorter) reads with none, and a remembered id survives a write and a read.
    #[test]
    fn records_before_the_batch_id_read_and_the_batch_id_is_kept() {
        let s = played();
        let bytes = encode_record(&s).unwrap();
        // A struct is a MessagePack array (array16: 0xdc and a big-endian count); the last
        // element is the `None` (nil, 0xc0) of `last_batch_id`.
        assert_eq!((bytes[0], *bytes.last().unwrap()), (0xdc, 0xc0));
        let mut old = bytes[..bytes.len() - 1].to_vec();
        let n = u16::from_be_bytes([old[1], old[2]]) - 1;
        old[1..3].copy_from_slice(&n.to_be_bytes());
        assert_eq!(rmp_serde::from_slice::<Session>(&old).unwrap(), s);

        let mut s = s;
        let batch = |n: u64| Event::PublishOps {
            ops: Op::parse_batch(&json!({"ops": [{"op": "state", "state": n}]})).unwrap(),
            batch_id: Some("b_1".into()),
        };
        assert!(s.apply(batch(1), 1_791_399_600_040).unwrap().changed);
        let mut read: Session = rmp_serde::from_slice(&encode_record(&s).unwrap()).unwrap();
        assert!(!read.apply(batch(2), 1_791_399_600_050).unwrap().changed);
    }
}
