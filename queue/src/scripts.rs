//! The Lua scripts (`queue/lua/`; each header documents KEYS, ARGV and the reply), each
//! prefixed with the shared prelude, and their replies as types. Built once per process;
//! `redis::Script` runs them by SHA (EVALSHA) and loads them on NOSCRIPT (a restarted or
//! failed-over Redis).
//!
//! Every key a script touches is in its KEYS. Where a key depends on stored data (the oldest
//! waiting job, an expired lease's job, a job's day) the caller reads first and the script
//! checks that what it read still holds; the headers say why each is safe.

use std::sync::LazyLock;

use redis::{FromRedisValue, ParsingError, Value};

pub(crate) struct Scripts {
    pub admit: redis::Script,
    pub claim: redis::Script,
    pub heartbeat: redis::Script,
    pub complete: redis::Script,
    pub cancel: redis::Script,
    pub reap: redis::Script,
    pub remaining: redis::Script,
    pub now: redis::Script,
    pub detach: redis::Script,
    pub stop: redis::Script,
    pub progress: redis::Script,
    pub publish: redis::Script,
}

const PRELUDE: &str = include_str!("../lua/prelude.lua");

fn with_prelude(body: &str) -> redis::Script {
    redis::Script::new(&format!("{PRELUDE}\n{body}"))
}

/// Flag that lets a script run while Redis is at `maxmemory` under `noeviction` (`OOM`):
/// without it Redis refuses a script whose first write may grow memory (an HSET, an INCR),
/// so a finished job could not be recorded and a lease not extended until memory is freed.
/// The scripts that move admitted work to its end carry it (claim, heartbeat, progress,
/// complete, reap, cancel, stop, detach, publish): each writes a few fields and most free
/// memory, so work admitted before the outage finishes and nothing is lost. Admission does
/// not: it refuses cleanly (its first write is refused before any other) until memory is free.
const ALLOW_OOM: &str = "#!lua flags=allow-oom\n";

fn allowing_oom(body: &str) -> redis::Script {
    redis::Script::new(&format!("{ALLOW_OOM}{PRELUDE}\n{body}"))
}

pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    admit: with_prelude(include_str!("../lua/admit.lua")),
    claim: allowing_oom(include_str!("../lua/claim.lua")),
    heartbeat: allowing_oom(include_str!("../lua/heartbeat.lua")),
    complete: allowing_oom(include_str!("../lua/complete.lua")),
    cancel: allowing_oom(include_str!("../lua/cancel.lua")),
    reap: allowing_oom(include_str!("../lua/reap.lua")),
    remaining: with_prelude(include_str!("../lua/remaining.lua")),
    now: with_prelude(include_str!("../lua/now.lua")),
    detach: allowing_oom(include_str!("../lua/detach.lua")),
    stop: allowing_oom(include_str!("../lua/stop.lua")),
    progress: allowing_oom(include_str!("../lua/progress.lua")),
    publish: allowing_oom(include_str!("../lua/publish.lua")),
});

fn unexpected(script: &str, v: &impl std::fmt::Debug) -> ParsingError {
    ParsingError::from(format!("unexpected reply of {script}: {v:?}"))
}

fn word(v: &Value) -> Option<String> {
    redis::from_redis_value_ref::<String>(v).ok()
}

fn number(v: &Value) -> Option<u64> {
    redis::from_redis_value_ref::<u64>(v).ok()
}

/// HGETALL's flat `[field, value, ...]` as pairs.
pub(crate) fn pairs(flat: Vec<String>) -> Vec<(String, String)> {
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    out
}

fn fields(v: &Value) -> Option<Vec<(String, String)>> {
    redis::from_redis_value_ref::<Vec<String>>(v)
        .ok()
        .map(pairs)
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
    New(Vec<(String, String)>),
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
}

impl FromRedisValue for Admitted {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let at = |i: usize| items.get(i);
        let parsed = match at(0).and_then(word).as_deref() {
            Some("new") => at(2).and_then(fields).map(Admitted::New),
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
            _ => None,
        };
        parsed.ok_or_else(|| unexpected("admit", &items))
    }
}

/// `claim.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClaimReply {
    Claimed {
        token: u64,
        fields: Vec<(String, String)>,
    },
    Skipped,
    Moved,
    Empty,
}

impl FromRedisValue for ClaimReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let at = |i: usize| items.get(i);
        let parsed = match at(0).and_then(word).as_deref() {
            Some("claimed") => at(1)
                .and_then(number)
                .zip(at(2).and_then(fields))
                .map(|(token, fields)| ClaimReply::Claimed { token, fields }),
            Some("skipped") => Some(ClaimReply::Skipped),
            Some("moved") => Some(ClaimReply::Moved),
            Some("empty") => Some(ClaimReply::Empty),
            _ => None,
        };
        parsed.ok_or_else(|| unexpected("claim", &items))
    }
}

/// The reply of the fenced and conditional writes: `heartbeat.lua`, `complete.lua`,
/// `cancel.lua`, `detach.lua`, `stop.lua`, `progress.lua` (1 or 0).
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

/// `reap.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReapReply {
    Reaped,
    Alive,
    Gone,
}

impl FromRedisValue for ReapReply {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let w: String = redis::from_redis_value(v)?;
        match w.as_str() {
            "reaped" => Ok(ReapReply::Reaped),
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
        let v = Value::Array(vec![
            bulk("claimed"),
            Value::Int(7),
            Value::Array(vec![bulk("id"), bulk("job_1")]),
        ]);
        assert_eq!(
            ClaimReply::from_redis_value(v).unwrap(),
            ClaimReply::Claimed {
                token: 7,
                fields: vec![("id".into(), "job_1".into())]
            }
        );
        assert!(Admitted::from_redis_value(Value::Array(vec![bulk("maybe")])).is_err());
        assert!(Applied::from_redis_value(Value::Int(2)).is_err());
        assert!(ReapReply::from_redis_value(bulk("later")).is_err());
    }

    #[test]
    fn every_script_documents_itself_and_names_its_keys_in_keys() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/lua");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let prelude = path.ends_with("prelude.lua");
            if !prelude {
                let head = text.split("]]").next().unwrap_or("");
                for section in ["Input:", "Output:"] {
                    assert!(head.contains(section), "{path:?} lacks {section}");
                }
            }
            // No key is built from a string: the first argument of every keyed call is a
            // KEYS entry or a helper's key parameter.
            for call in text.split("redis.call(").skip(1) {
                let args = call.split(')').next().unwrap_or("");
                let mut args = args.split(',').map(str::trim);
                let command = args.next().unwrap_or("").trim_matches('\'');
                if matches!(command, "TIME" | "PUBLISH") {
                    continue;
                }
                let first = args.next().unwrap_or("");
                // Locals that hold a KEYS entry (or the prelude's key parameters).
                let alias = matches!(
                    first,
                    "jk" | "bk" | "dk" | "ik" | "lane" | "tk" | "ends" | "owed"
                );
                assert!(
                    first.starts_with("KEYS[") || alias,
                    "{path:?}: {command} on {first}, not a KEYS entry"
                );
            }
        }
    }
}
