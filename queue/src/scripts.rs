//! The queue's Lua scripts (`queue/lua/`; each header documents KEYS, ARGV and the reply),
//! declared once in the script registry (`horst_store::script`) with the queue's helpers
//! (`lua/helpers.lua`) between the store's prelude and the script, and their replies as
//! types.
//!
//! Every key a script touches is in its KEYS, but for the claim's: it names the head job's
//! keys from the queue group's base in KEYS (`group_key`, same hash slot). Where a key
//! depends on stored data elsewhere (an expired lease's job, a job's day) the caller reads
//! first and the script checks that what it read still holds; the headers say why each is
//! safe.

use horst_store::lua;
use horst_store::script::{Argv, Decl, LuaFile, Registered, Script, Writes};
use redis::{FromRedisValue, ParsingError, Value};

/// The queue's own Lua helpers (local functions and constants of every queue script).
const HELPERS: LuaFile = lua!("lua/helpers.lua");

const fn queue_script<R>(file: LuaFile, keys: usize, argv: usize, writes: Writes) -> Script<R> {
    Script::with_helpers(
        Decl {
            file,
            keys,
            argv: Argv::Exactly(argv),
            writes,
        },
        HELPERS,
    )
}

// Scripts that move admitted work to its end run while Redis is at `maxmemory` under
// `noeviction` (`OOM`): without `allow-oom` Redis refuses a script whose first write may grow
// memory (an HSET, an INCR), so a finished job could not be recorded and a lease not extended
// until memory is freed. Each writes a few fields and most free memory, so work admitted
// before the outage finishes and nothing is lost. Admission does not: it refuses cleanly (its
// first write is refused before any other) until memory is free.

/// `admit.lua`.
pub(crate) static ADMIT: Script<Admitted> =
    queue_script(lua!("lua/admit.lua"), 16, 35, Writes::Durable);
/// `claim.lua`.
/// `admit_many.lua`: admissions that arrived while one was in flight, in one call (admit.lua
/// on each call's slice; [`AdmitGroup`](crate::AdmitGroup)).
pub(crate) static ADMIT_MANY: Script<Vec<Value>> = Script::group_of(
    Decl {
        file: lua!("lua/admit_many.lua"),
        keys: 16,
        argv: Argv::Exactly(35),
        writes: Writes::Durable,
    },
    HELPERS,
    lua!("lua/admit.lua"),
);
/// `complete_many.lua`: completions that arrived while one was in flight, in one call
/// (complete.lua on each call's slice; [`CallGroup`](crate::CallGroup)).
pub(crate) static COMPLETE_MANY: Script<Vec<Value>> = Script::group_of(
    Decl {
        file: lua!("lua/complete_many.lua"),
        keys: 8,
        argv: Argv::Exactly(18),
        writes: Writes::Durable,
    },
    HELPERS,
    lua!("lua/complete.lua"),
)
.allowing_oom();
pub(crate) static CLAIM: Script<ClaimReply> =
    queue_script(lua!("lua/claim.lua"), 6, 8, Writes::Durable).allowing_oom();
/// `heartbeat.lua`.
pub(crate) static HEARTBEAT: Script<Applied> =
    queue_script(lua!("lua/heartbeat.lua"), 2, 3, Writes::PrimaryOnly).allowing_oom();
/// `complete.lua`.
pub(crate) static COMPLETE: Script<Completed> =
    queue_script(lua!("lua/complete.lua"), 8, 18, Writes::Durable).allowing_oom();
/// `cancel.lua`.
pub(crate) static CANCEL: Script<Applied> =
    queue_script(lua!("lua/cancel.lua"), 8, 10, Writes::Durable).allowing_oom();
/// `reap.lua`.
pub(crate) static REAP: Script<ReapReply> =
    queue_script(lua!("lua/reap.lua"), 9, 7, Writes::PrimaryOnly).allowing_oom();
/// `expired.lua`.
pub(crate) static EXPIRED: Script<Vec<String>> =
    queue_script(lua!("lua/expired.lua"), 2, 3, Writes::PrimaryOnly).allowing_oom();
/// `remaining.lua`.
pub(crate) static REMAINING: Script<RemainingReply> =
    queue_script(lua!("lua/remaining.lua"), 1, 8, Writes::ReadOnly);
/// `now.lua`.
pub(crate) static NOW: Script<u64> = queue_script(lua!("lua/now.lua"), 0, 0, Writes::ReadOnly);
/// `detach.lua`.
pub(crate) static DETACH: Script<Applied> =
    queue_script(lua!("lua/detach.lua"), 1, 1, Writes::Durable).allowing_oom();
/// `stop.lua`.
pub(crate) static STOP: Script<Stopped> =
    queue_script(lua!("lua/stop.lua"), 9, 10, Writes::Durable).allowing_oom();
/// `progress.lua`.
pub(crate) static PROGRESS: Script<Applied> =
    queue_script(lua!("lua/progress.lua"), 1, 2, Writes::PrimaryOnly).allowing_oom();
/// `publish.lua`.
pub(crate) static PUBLISH: Script<PublishReply> =
    queue_script(lua!("lua/publish.lua"), 1, 2, Writes::Durable).allowing_oom();

/// `fair_adopt.lua`.
pub(crate) static FAIR_ADOPT: Script<u8> =
    queue_script(lua!("lua/fair_adopt.lua"), 6, 1, Writes::Durable);

/// `daily_adopt.lua`.
pub(crate) static DAILY_ADOPT: Script<u64> =
    queue_script(lua!("lua/daily_adopt.lua"), 2, 1, Writes::Durable);

/// `fair_sweep.lua`: the next cursor and how many accounts' entries were dropped.
pub(crate) static FAIR_SWEEP: Script<(u64, u64)> =
    queue_script(lua!("lua/fair_sweep.lua"), 3, 3, Writes::PrimaryOnly).allowing_oom();

/// `idle.lua`: 1 if a job waits in the registered slot's lanes.
pub(crate) static IDLE: Script<IdleReply> =
    queue_script(lua!("lua/idle.lua"), 6, 4, Writes::PrimaryOnly).allowing_oom();

/// `claimed_by.lua`: a claim the slot did not get the answer of (claim.lua's reply). It
/// writes only when it answers a job handed to the slot: the slot takes it up (deletes its
/// `handed` mark, helpers.lua's held_claim).
pub(crate) static CLAIMED_BY: Script<ClaimReply> = Script::with_helpers(
    Decl {
        file: lua!("lua/claimed_by.lua"),
        keys: 2,
        // The slot and its newest token, then the ids it knows.
        argv: Argv::AtLeast(2),
        writes: Writes::PrimaryOnly,
    },
    HELPERS,
)
.allowing_oom();

/// The queue's registered scripts, for the tidy test.
pub fn registered() -> Vec<&'static dyn Registered> {
    vec![
        &ADMIT,
        &ADMIT_MANY,
        &CLAIM,
        &HEARTBEAT,
        &COMPLETE,
        &COMPLETE_MANY,
        &CANCEL,
        &REAP,
        &EXPIRED,
        &REMAINING,
        &NOW,
        &DETACH,
        &STOP,
        &PROGRESS,
        &PUBLISH,
        &FAIR_ADOPT,
        &DAILY_ADOPT,
        &FAIR_SWEEP,
        &IDLE,
        &CLAIMED_BY,
    ]
}

fn unexpected(script: &str, v: &impl std::fmt::Debug) -> ParsingError {
    ParsingError::from(format!("unexpected reply of {script}: {v:?}"))
}

fn word(v: &Value) -> Option<String> {
    redis::from_redis_value_ref::<String>(v).ok()
}

fn number(v: &Value) -> Option<u64> {
    redis::from_redis_value_ref::<u64>(v).ok()
}

/// Which cap made admission busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BusyCap {
    Account,
    Global,
    /// The places left are kept for referee work.
    Reserved,
    /// No slot frees in time for the job to finish within its caller's wait.
    Late {
        ahead: u64,
    },
}

/// `admit.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Admitted {
    /// Queued at `created_ms`.
    New {
        created_ms: u64,
    },
    Replayed {
        job_id: String,
    },
    Conflict {
        job_id: String,
    },
    Busy {
        cap: BusyCap,
        retry_after_s: u64,
    },
    Quota {
        scope: crate::QuotaScope,
        retry_after_s: u64,
    },
    /// The keys were for another day than the server's today: call again for this one.
    Day(u64),
    /// A blob of the job's input expired before the admission adopted it: write it again.
    Inputs,
    /// The server's time (`now_ms`) was past the call's bound: nothing was taken. The caller
    /// gave up on the call long ago, or its estimate of the server's clock was stale.
    Late {
        now_ms: u64,
    },
}

impl FromRedisValue for Admitted {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let at = |i: usize| items.get(i);
        let parsed = match at(0).and_then(word).as_deref() {
            Some("new") => at(2)
                .and_then(number)
                .map(|created_ms| Admitted::New { created_ms }),
            Some("replayed") => at(1)
                .and_then(word)
                .map(|job_id| Admitted::Replayed { job_id }),
            Some("conflict") => at(1)
                .and_then(word)
                .map(|job_id| Admitted::Conflict { job_id }),
            Some("busy") => {
                let cap = match at(1).and_then(word).as_deref() {
                    Some("account") => Some(BusyCap::Account),
                    Some("global") => Some(BusyCap::Global),
                    Some("reserved") => Some(BusyCap::Reserved),
                    Some("late") => at(3).and_then(number).map(|ahead| BusyCap::Late { ahead }),
                    _ => None,
                };
                cap.zip(at(2).and_then(number))
                    .map(|(cap, retry_after_s)| Admitted::Busy { cap, retry_after_s })
            }
            Some("quota") => {
                let scope = match at(1).and_then(word).as_deref() {
                    Some("owner") => Some(crate::QuotaScope::Owner),
                    Some("global") => Some(crate::QuotaScope::Global),
                    Some("global_new") => Some(crate::QuotaScope::GlobalNew),
                    Some("input_bytes") => Some(crate::QuotaScope::InputBytes),
                    Some("global_input_bytes") => Some(crate::QuotaScope::GlobalInputBytes),
                    _ => None,
                };
                scope
                    .zip(at(2).and_then(number))
                    .map(|(scope, retry_after_s)| Admitted::Quota {
                        scope,
                        retry_after_s,
                    })
            }
            Some("day") => at(1).and_then(number).map(Admitted::Day),
            Some("inputs") => Some(Admitted::Inputs),
            Some("late") => at(1)
                .and_then(number)
                .map(|now_ms| Admitted::Late { now_ms }),
            _ => None,
        };
        parsed.ok_or_else(|| unexpected("admit", &items))
    }
}

/// One call's reply in a group script's (`admit_many.lua`, `complete_many.lua`): the
/// script's own, or `{'error', message}` when its run raised one, which becomes Redis's own
/// error again (so an `OOM` or a `READONLY` is told from a bug as for a call of its own,
/// `horst_store::is_unreachable`).
pub(crate) fn group_reply<R: FromRedisValue>(v: Value) -> redis::RedisResult<R> {
    if let Value::Array(items) = &v {
        if items.len() == 2 && items.first().and_then(word).as_deref() == Some("error") {
            let message = items.get(1).and_then(word).unwrap_or_default();
            let line = format!("-{}\r\n", message.replace(['\r', '\n'], " "));
            return match redis::parse_redis_value(line.as_bytes()) {
                Ok(e @ Value::ServerError(_)) => {
                    e.extract_error().and(Err(redis::RedisError::from((
                        redis::ErrorKind::Parse,
                        "a grouped call's error did not parse",
                    ))))
                }
                Ok(_) | Err(_) => Err(redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "a grouped call's error did not parse",
                    message,
                ))),
            };
        }
    }
    Ok(R::from_redis_value(v)?)
}

/// The record's fields a claim reads (helpers.lua's `CLAIM_FIELDS`, in its order): a
/// claim's reply gives their values in this order, without the names.
pub(crate) const CLAIM_FIELDS: [&str; 14] = [
    "state", "account", "day", "idem", "waiter", "deadline", "exec_ms", "reserved", "id", "kind",
    "trust", "input", "created", "request",
];

/// What claimed_by.lua gives after [`CLAIM_FIELDS`]: what the lost claim wrote.
const RUN_FIELDS: [&str; 3] = ["started", "worker", "charged"];

/// The claimed record's fields from a claim's reply: the values of [`CLAIM_FIELDS`] as
/// read, then what the claim wrote (state `running`, started at the token, the slot as its
/// worker, the reservation as its charge), or, from claimed_by.lua, the values of
/// [`RUN_FIELDS`] as stored.
pub(crate) fn claimed_fields(
    token: u64,
    values: Vec<Option<String>>,
    slot: &str,
) -> Vec<(String, String)> {
    let stored_run = values.len() == CLAIM_FIELDS.len() + RUN_FIELDS.len();
    let mut fields: Vec<(String, String)> = CLAIM_FIELDS
        .iter()
        .chain(RUN_FIELDS.iter())
        .zip(values)
        .filter_map(|(name, v)| Some(((*name).to_string(), v?)))
        .collect();
    if !stored_run {
        let reserved = fields
            .iter()
            .find(|(k, _)| k == "reserved")
            .map_or_else(|| "0".to_string(), |(_, v)| v.clone());
        fields.retain(|(k, _)| k != "state");
        fields.extend([
            ("state".to_string(), "running".to_string()),
            ("started".to_string(), token.to_string()),
            ("worker".to_string(), slot.to_string()),
            ("charged".to_string(), reserved),
        ]);
    }
    fields.push(("token".to_string(), token.to_string()));
    fields
}

/// A job admission handed to an idle slot, from the slot's wake-up message (admit.lua:
/// `claim|<token>`, then each value of [`CLAIM_FIELDS`] as `|<bytes>|<value>`): the token
/// and the values, as claim.lua's reply gives them. `None`: a wake-up without a claim (the
/// job's id), or a message this version does not read.
pub(crate) fn handed_claim(message: &str) -> Option<(u64, Vec<Option<String>>)> {
    let rest = message.strip_prefix("claim|")?;
    let (token, mut rest) = rest.split_once('|')?;
    let token = token.parse().ok()?;
    let mut values = Vec::with_capacity(CLAIM_FIELDS.len());
    for _ in 0..CLAIM_FIELDS.len() {
        let (len, tail) = rest.split_once('|')?;
        let len: usize = len.parse().ok()?;
        values.push(Some(tail.get(..len)?.to_string()));
        rest = tail.get(len..)?;
        rest = rest.strip_prefix('|').unwrap_or(rest);
    }
    rest.is_empty().then_some((token, values))
}

/// `idle.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdleReply {
    /// Registered; nothing waits.
    Registered,
    /// Registered; a job waits in the slot's lanes.
    Waiting,
    /// A job was handed to the slot (its wake-up unheard): claim.lua's `Claimed` reply.
    Handed(ClaimReply),
}

impl FromRedisValue for IdleReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        match v {
            Value::Int(0) => Ok(IdleReply::Registered),
            Value::Int(1) => Ok(IdleReply::Waiting),
            Value::Array(_) => ClaimReply::from_redis_value(v).map(IdleReply::Handed),
            other => Err(unexpected("idle", &other)),
        }
    }
}

/// `claim.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClaimReply {
    Claimed {
        token: u64,
        /// The values of [`CLAIM_FIELDS`] (and [`RUN_FIELDS`]): [`claimed_fields`].
        values: Vec<Option<String>>,
        /// Jobs still waiting in the lane.
        more: u64,
    },
    Skipped,
    Empty,
}

fn values(v: &Value) -> Option<Vec<Option<String>>> {
    redis::from_redis_value_ref::<Vec<Option<String>>>(v).ok()
}

/// A claim's values (the third item of claim.lua's reply): those of [`CLAIM_FIELDS`] (and
/// [`RUN_FIELDS`]), or a packed record's as the claim read them (its state, a waiter written
/// by name over the packed one, the packed field: helpers.lua's claim_next), made those of
/// [`CLAIM_FIELDS`] here (they are the state, then the packed field's first 13).
pub(crate) fn claim_reply_values(v: &Value) -> Option<Vec<Option<String>>> {
    if let Value::Array(read) = v {
        if let [state, waiter, Value::BulkString(packed)] = read.as_slice() {
            let packed = crate::record::unpack(packed)?;
            if packed.len() < CLAIM_FIELDS.len() - 1 {
                return None;
            }
            let state = redis::from_redis_value_ref::<Option<String>>(state).ok()?;
            let waiter = redis::from_redis_value_ref::<Option<String>>(waiter).ok()?;
            let mut values = Vec::with_capacity(CLAIM_FIELDS.len());
            values.push(state);
            values.extend(packed.into_iter().take(CLAIM_FIELDS.len() - 1).map(Some));
            if waiter.is_some() {
                values[4] = waiter;
            }
            return Some(values);
        }
    }
    values(v)
}

impl FromRedisValue for ClaimReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let at = |i: usize| items.get(i);
        let parsed = match at(0).and_then(word).as_deref() {
            Some("claimed") => match (at(1).and_then(number), at(2).and_then(claim_reply_values)) {
                (Some(token), Some(values)) => Some(ClaimReply::Claimed {
                    token,
                    values,
                    more: at(3).and_then(number).unwrap_or(0),
                }),
                _ => None,
            },
            Some("skipped") => Some(ClaimReply::Skipped),
            Some("empty") => Some(ClaimReply::Empty),
            _ => None,
        };
        parsed.ok_or_else(|| unexpected("claim", &items))
    }
}

/// The reply of the fenced and conditional writes: `heartbeat.lua`, `cancel.lua`,
/// `detach.lua`, `progress.lua` (1 or 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applied {
    Done,
    /// Refused: the token is stale, or the job is no longer in the state the write needs.
    Refused,
}

impl FromRedisValue for Applied {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        match redis::from_redis_value::<i64>(v)? {
            1 => Ok(Applied::Done),
            0 => Ok(Applied::Refused),
            n => Err(unexpected("a fenced write", &n)),
        }
    }
}

/// `complete.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Completed {
    /// Refused: the token is stale.
    Refused,
    /// Recorded; the slot (if one was named) may find a job waiting.
    Done,
    /// Recorded; nothing waits, and the slot is registered idle.
    Idle,
    /// Recorded, and the slot claimed its next job (claim.lua's `claimed`).
    Next {
        token: u64,
        values: Vec<Option<String>>,
        more: u64,
    },
}

impl FromRedisValue for Completed {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        if let Value::Array(items) = &v {
            let at = |i: usize| items.get(i);
            return match (
                at(0).and_then(number),
                at(1).and_then(number),
                at(2).and_then(claim_reply_values),
            ) {
                (Some(3), Some(token), Some(values)) => Ok(Completed::Next {
                    token,
                    values,
                    more: at(3).and_then(number).unwrap_or(0),
                }),
                _ => Err(unexpected("complete", items)),
            };
        }
        match redis::from_redis_value::<i64>(v)? {
            0 => Ok(Completed::Refused),
            1 => Ok(Completed::Done),
            2 => Ok(Completed::Idle),
            n => Err(unexpected("complete", &n)),
        }
    }
}

/// `stop.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// Ended now.
    Done,
    /// Not running: nothing changed.
    NotRunning,
    /// Its worker died before it took the job up (an admission's hand-off): the job waits
    /// again at its lane's front, uncharged.
    PutBack,
    /// An operator's stop of a job handed to a slot that had not taken it up: it never ran,
    /// and was dropped uncharged, as a queued job is.
    Dropped,
}

impl FromRedisValue for Stopped {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        match redis::from_redis_value::<i64>(v)? {
            1 => Ok(Stopped::Done),
            0 => Ok(Stopped::NotRunning),
            2 => Ok(Stopped::PutBack),
            3 => Ok(Stopped::Dropped),
            n => Err(unexpected("stop", &n)),
        }
    }
}

/// `reap.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReapReply {
    Reaped,
    /// Handed to a slot that never took it up: waiting again at its lane's front.
    Requeued,
    Alive,
    Gone,
}

impl FromRedisValue for ReapReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let w: String = redis::from_redis_value(v)?;
        match w.as_str() {
            "reaped" => Ok(ReapReply::Reaped),
            "requeued" => Ok(ReapReply::Requeued),
            "alive" => Ok(ReapReply::Alive),
            "gone" => Ok(ReapReply::Gone),
            _ => Err(unexpected("reap", &w)),
        }
    }
}

/// `publish.lua`: the publication that stands (JSON), or none for a job that did not
/// succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublishReply {
    Standing(String),
    NotSucceeded,
}

impl FromRedisValue for PublishReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let parsed = match items.first().and_then(word).as_deref() {
            Some("recorded" | "kept") => items.get(1).and_then(word).map(PublishReply::Standing),
            Some("not_succeeded") => Some(PublishReply::NotSucceeded),
            _ => None,
        };
        parsed.ok_or_else(|| unexpected("publish", &items))
    }
}

/// `remaining.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RemainingReply {
    Ok(crate::Remaining),
    Day(u64),
}

impl FromRedisValue for RemainingReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let n = |i: usize| items.get(i).and_then(number);
        let parsed = match items.first().and_then(word).as_deref() {
            Some("ok") => match (n(1), n(2), n(3), n(4)) {
                (Some(submissions), Some(playtests), Some(simulations), Some(seconds)) => {
                    Some(RemainingReply::Ok(crate::Remaining {
                        submissions,
                        playtests,
                        simulations,
                        seconds,
                    }))
                }
                _ => None,
            },
            Some("day") => n(1).map(RemainingReply::Day),
            _ => None,
        };
        parsed.ok_or_else(|| unexpected("remaining", &items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    /// The hot scripts carry only the helpers they use (horst_store's lua_shake): every
    /// closure of a script's text is made again on each call, about 1,100 instructions each.
    #[test]
    fn the_admission_carries_none_of_the_claim_s_helpers() {
        let admit = ADMIT.source();
        for gone in [
            "claim_next",
            "put_back",
            "held_claim",
            "release",
            "utc_date",
        ] {
            assert!(
                !admit.contains(&format!("local function {gone}(")),
                "{gone} in admit.lua's text"
            );
        }
        assert!(admit.contains("local function group_key("));
        assert!(
            admit.contains("table.remove(ARGV)"),
            "the prelude's effect stays"
        );
        let complete = COMPLETE.source();
        assert!(complete.contains("local function claim_next("));
        assert!(complete.contains("local function release("));
        assert!(!complete.contains("local function put_back("));
        assert!(!complete.contains("local function utc_date("));
    }

    /// An admission under load (no idle slot handed the job, no blobs) reads only what it
    /// uses: each field an HMGET names costs Redis about 1,300 instructions (the name made a
    /// Redis string, the value a Lua one; docs/benchmarks.md, "The admission's Lua, field by
    /// field"). The day's charge is read by the hand-off alone, the kept input's bytes only
    /// when the job's blobs add some.
    #[test]
    fn the_admissions_first_reads_leave_out_what_only_rare_paths_use() {
        let admit = include_str!("../lua/admit.lua");
        let first_read = |key: &str| {
            let start = admit
                .find(&format!("'HMGET', {key},"))
                .unwrap_or_else(|| panic!("no HMGET of {key} in admit.lua"));
            let end = start + admit[start..].find(')').expect("the call's end");
            &admit[start..end]
        };
        let fair = first_read("fk");
        assert!(fair.contains("'cap'"), "{fair}");
        assert!(!fair.contains("charged:"), "{fair}");
        let day = first_read("bk");
        assert!(day.contains("'used'"), "{day}");
        assert!(
            !day.contains("'bytes'") && !day.contains("d_bytes"),
            "{day}"
        );
    }

    /// The Lua's copies of the presence's life and the stall's gap (helpers.lua) are the
    /// Rust side's: a drift would drop orphans of live processes, or never. And the orphan's
    /// message: a drift would tell callers two stories of one drop.
    #[test]
    fn the_lua_constants_are_the_rust_ones() {
        let helpers = include_str!("../lua/helpers.lua");
        let ms = |d: std::time::Duration| d.as_millis().to_string();
        for (name, value) in [
            ("PRESENCE_TTL_MS", ms(crate::CALLER_PRESENCE_TTL)),
            ("STALL_MS", ms(crate::STALL_AFTER)),
        ] {
            let line = format!("local {name} = {value}\n");
            assert!(helpers.contains(&line), "helpers.lua lacks {line:?}");
        }
        // The orphan's message, which the claim's drop and the sweep's both write.
        let line = format!(
            "local ORPHAN_MESSAGE = '{}'\n",
            crate::presence::ORPHAN_MESSAGE
        );
        assert!(helpers.contains(&line), "helpers.lua lacks {line:?}");
    }

    /// A claim's reply names no fields: helpers.lua's CLAIM_FIELDS, whose values it
    /// gives in order, must be the Rust side's list, or every claimed record is garbled.
    #[test]
    fn the_claims_fields_are_the_rust_ones() {
        let helpers = include_str!("../lua/helpers.lua");
        let start = helpers
            .find("local CLAIM_FIELDS = {")
            .expect("CLAIM_FIELDS")
            + 22;
        let end = start + helpers[start..].find('}').unwrap();
        let lua: Vec<&str> = helpers[start..end]
            .split(',')
            .map(|f| f.trim().trim_matches('\''))
            .collect();
        assert_eq!(lua, CLAIM_FIELDS);
    }

    /// A claim's values become the record the claim made; claimed_by.lua's carry what
    /// the claim wrote.
    #[test]
    fn a_claims_values_make_the_claimed_record() {
        let mut values: Vec<Option<String>> = CLAIM_FIELDS
            .iter()
            .map(|f| Some(format!("{f}-v")))
            .collect();
        values[0] = Some("queued".into());
        values[4] = None; // no waiter
        let fields = claimed_fields(9, values.clone(), "w:1");
        let get = |fields: &[(String, String)], k: &str| {
            fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        };
        assert_eq!(get(&fields, "state").as_deref(), Some("running"));
        assert_eq!(get(&fields, "started").as_deref(), Some("9"));
        assert_eq!(get(&fields, "token").as_deref(), Some("9"));
        assert_eq!(get(&fields, "worker").as_deref(), Some("w:1"));
        assert_eq!(get(&fields, "charged").as_deref(), Some("reserved-v"));
        assert_eq!(get(&fields, "kind").as_deref(), Some("kind-v"));
        assert_eq!(get(&fields, "waiter"), None);
        assert_eq!(fields.iter().filter(|(k, _)| k == "state").count(), 1);
        values[0] = Some("running".into());
        values.extend([Some("5".into()), Some("w:2".into()), Some("3".into())]);
        let fields = claimed_fields(7, values, "w:1");
        assert_eq!(get(&fields, "state").as_deref(), Some("running"));
        assert_eq!(get(&fields, "started").as_deref(), Some("5"));
        assert_eq!(get(&fields, "worker").as_deref(), Some("w:2"));
        assert_eq!(get(&fields, "charged").as_deref(), Some("3"));
    }

    /// A claim of a packed record replies with what it read (the state, a waiter written by
    /// name or none, the packed field: helpers.lua's claim_next), which parses into the values
    /// of CLAIM_FIELDS, the named waiter over the packed one; a completion's next claim alike.
    #[test]
    fn a_claim_of_a_packed_record_gives_the_claim_fields() {
        let packed_values: Vec<String> = crate::record::PACKED_FIELDS
            .iter()
            .map(|f| format!("{f}-v"))
            .collect();
        let refs: Vec<&[u8]> = packed_values
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 4 && *i != 11)
            .map(|(_, v)| v.as_bytes())
            .collect();
        let [a, b, c] = crate::record::packed_parts(refs.try_into().unwrap());
        let mut packed = a;
        for (text, part) in [("deadline-v", b), ("created-v", c)] {
            packed.push(0xa0 | text.len() as u8);
            packed.extend_from_slice(text.as_bytes());
            packed.extend(part);
        }
        let mut expected: Vec<Option<String>> = CLAIM_FIELDS
            .iter()
            .map(|f| Some(format!("{f}-v")))
            .collect();
        expected[0] = Some("queued".into());
        for (waiter, expected_waiter) in [(Value::Nil, "waiter-v"), (bulk("named"), "named")] {
            let read = Value::Array(vec![
                bulk("queued"),
                waiter,
                Value::BulkString(packed.clone()),
            ]);
            expected[4] = Some(expected_waiter.into());
            let claim = Value::Array(vec![
                bulk("claimed"),
                Value::Int(7),
                read.clone(),
                Value::Int(1),
            ]);
            assert_eq!(
                ClaimReply::from_redis_value(claim).unwrap(),
                ClaimReply::Claimed {
                    token: 7,
                    values: expected.clone(),
                    more: 1,
                }
            );
            let next = Value::Array(vec![Value::Int(3), Value::Int(7), read, Value::Int(0)]);
            assert_eq!(
                Completed::from_redis_value(next).unwrap(),
                Completed::Next {
                    token: 7,
                    values: expected.clone(),
                    more: 0,
                }
            );
        }
    }

    #[test]
    fn replies_parse_into_their_variants_and_refuse_the_unknown() {
        let v = Value::Array(vec![bulk("busy"), bulk("global"), Value::Int(3)]);
        assert_eq!(
            Admitted::from_redis_value(v).unwrap(),
            Admitted::Busy {
                cap: BusyCap::Global,
                retry_after_s: 3
            }
        );
        let v = Value::Array(vec![bulk("day"), Value::Int(20_000)]);
        assert_eq!(
            Admitted::from_redis_value(v).unwrap(),
            Admitted::Day(20_000)
        );
        let mut named: Vec<Value> = CLAIM_FIELDS.iter().map(|f| bulk(f)).collect();
        named[2] = Value::Nil;
        let v = Value::Array(vec![
            bulk("claimed"),
            Value::Int(7),
            Value::Array(named),
            Value::Int(2),
        ]);
        let mut expected: Vec<Option<String>> =
            CLAIM_FIELDS.iter().map(|f| Some(f.to_string())).collect();
        expected[2] = None;
        assert_eq!(
            ClaimReply::from_redis_value(v).unwrap(),
            ClaimReply::Claimed {
                token: 7,
                values: expected.clone(),
                more: 2,
            }
        );
        assert!(ClaimReply::from_redis_value(Value::Array(vec![
            bulk("claimed"),
            Value::Int(7),
            Value::Array(vec![bulk("queued"), Value::Nil, bulk("job_1")]),
        ]))
        .is_err());
        assert!(Admitted::from_redis_value(Value::Array(vec![bulk("maybe")])).is_err());
        assert!(Applied::from_redis_value(Value::Int(2)).is_err());
        assert!(ReapReply::from_redis_value(bulk("later")).is_err());
    }
}
