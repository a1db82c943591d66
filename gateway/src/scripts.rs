//! The gateway's Lua scripts (`gateway/lua/`, each file's header documents its KEYS, ARGV
//! and reply) and their replies as types. Accounts' and keys' scripts are `horst-identity`'s.
//!
//! Each script is built once per process; `redis::Script` runs it by SHA (EVALSHA) and
//! loads it on NOSCRIPT (a restarted or failed-over Redis). Every key a script touches is
//! in its KEYS, so the scripts would run on Redis Cluster once the keys that must share a
//! slot carry a hash tag (ARCHITECTURE.md, "Keys and hash slots").

use std::sync::LazyLock;

use redis::{FromRedisValue, ParsingError, Script, Value};

macro_rules! script {
    ($name:ident, $file:literal) => {
        pub(crate) static $name: LazyLock<Script> =
            LazyLock::new(|| Script::new(include_str!(concat!("../lua/", $file))));
    };
}

script!(BOARD_WRITE, "board_write.lua");
script!(BOARD_ENDORSE, "board_endorse.lua");
script!(CHECK_RECORD, "check_record.lua");
script!(CONTACT_SEND, "contact_send.lua");
script!(PROMOTE, "promote.lua");
script!(ROLLBACK, "rollback.lua");
script!(QUARANTINE, "quarantine.lua");
script!(REVISION_STORE, "revision_store.lua");
script!(REVISION_WITHDRAW, "revision_withdraw.lua");

fn unexpected(script: &str, v: &impl std::fmt::Debug) -> ParsingError {
    ParsingError::from(format!("unexpected reply of {script}: {v:?}"))
}

/// Implements `FromRedisValue` for a reply enum from a conversion of a plain Rust value.
macro_rules! reply {
    ($ty:ty, $raw:ty, $script:literal, |$r:ident| $body:expr) => {
        impl FromRedisValue for $ty {
            fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
                let $r: $raw = redis::from_redis_value(v)?;
                let parsed: Option<$ty> = $body;
                parsed.ok_or_else(|| unexpected($script, &$r))
            }
        }
    };
}

/// `board_write.lua`; the counts are the writer's threads and posts today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoardWritten {
    Written { threads: i64, posts: i64 },
    NoThread,
    ThreadLimit,
    PostLimit,
}
reply!(
    BoardWritten,
    (i64, i64, i64),
    "board_write",
    |r| match r.0 {
        1 => Some(BoardWritten::Written {
            threads: r.1,
            posts: r.2,
        }),
        0 => Some(BoardWritten::NoThread),
        -1 => Some(BoardWritten::ThreadLimit),
        -2 => Some(BoardWritten::PostLimit),
        _ => None,
    }
);

/// `board_endorse.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endorsed {
    Done { endorsements: i64 },
    DailyLimit,
}
reply!(Endorsed, (i64, i64), "board_endorse", |r| match r.0 {
    1 => Some(Endorsed::Done { endorsements: r.1 }),
    -1 => Some(Endorsed::DailyLimit),
    _ => None,
});

/// `check_record.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckRecorded {
    ByThisCall,
    AlreadyRecorded,
}
reply!(CheckRecorded, i64, "check_record", |r| match r {
    1 => Some(CheckRecorded::ByThisCall),
    0 => Some(CheckRecorded::AlreadyRecorded),
    _ => None,
});

/// `contact_send.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContactSent {
    Sent { today: i64 },
    DailyLimit,
    UnreadCap,
}
reply!(ContactSent, (i64, i64), "contact_send", |r| match r.0 {
    1 => Some(ContactSent::Sent { today: r.1 }),
    -1 => Some(ContactSent::DailyLimit),
    -2 => Some(ContactSent::UnreadCap),
    _ => None,
});

/// `promote.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Promoted {
    Ok,
    /// The level's promoted revision is this one (`""`: none).
    Stale(String),
    /// The revision is in this state.
    WrongState(String),
}
reply!(Promoted, String, "promote", |r| {
    if r == "ok" {
        Some(Promoted::Ok)
    } else if let Some(cur) = r.strip_prefix("stale:") {
        Some(Promoted::Stale(cur.to_string()))
    } else {
        r.strip_prefix("state:")
            .map(|s| Promoted::WrongState(s.to_string()))
    }
});

/// `rollback.lua`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RolledBack {
    Ok {
        from: String,
        to: String,
    },
    NothingPromoted,
    NoHistory,
    /// The level changed between the caller's read and the script: read again.
    Moved,
}
reply!(RolledBack, Vec<String>, "rollback", |r| match r
    .iter()
    .map(String::as_str)
    .collect::<Vec<_>>()
    .as_slice()
{
    ["ok", from, to] => Some(RolledBack::Ok {
        from: from.to_string(),
        to: to.to_string(),
    }),
    ["none"] => Some(RolledBack::NothingPromoted),
    ["nohistory"] => Some(RolledBack::NoHistory),
    ["moved"] => Some(RolledBack::Moved),
    _ => None,
});

/// `quarantine.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quarantined {
    Ok,
    Promoted,
    Missing,
}
reply!(Quarantined, String, "quarantine", |r| match r.as_str() {
    "ok" => Some(Quarantined::Ok),
    "promoted" => Some(Quarantined::Promoted),
    "missing" => Some(Quarantined::Missing),
    _ => None,
});

/// Which storage budget a revision would exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StorageScope {
    Owner,
    Global,
}

/// `revision_store.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RevisionStored {
    Ok { now_ms: u64 },
    IdTaken,
    NameTaken,
    ParentMissing,
    ParentForeign,
    LaborCap,
    Storage(StorageScope),
}
reply!(RevisionStored, (String, String), "revision_store", |r| {
    match (r.0.as_str(), r.1.as_str()) {
        ("ok", now) => now.parse().ok().map(|now_ms| RevisionStored::Ok { now_ms }),
        ("conflict", _) => Some(RevisionStored::IdTaken),
        ("forbidden", _) => Some(RevisionStored::NameTaken),
        ("validation_failed", "parent_missing") => Some(RevisionStored::ParentMissing),
        ("validation_failed", _) => Some(RevisionStored::ParentForeign),
        ("quota", "labor") => Some(RevisionStored::LaborCap),
        ("quota", "owner") => Some(RevisionStored::Storage(StorageScope::Owner)),
        ("quota", "global") => Some(RevisionStored::Storage(StorageScope::Global)),
        _ => None,
    }
});

/// `revision_withdraw.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Withdrawn {
    Ok,
    Promoted,
}
reply!(
    Withdrawn,
    String,
    "revision_withdraw",
    |r| match r.as_str() {
        "ok" => Some(Withdrawn::Ok),
        "promoted" => Some(Withdrawn::Promoted),
        _ => None,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn replies_parse_into_their_variants_and_refuse_the_unknown() {
        assert_eq!(
            Promoted::from_redis_value(bulk("stale:")).unwrap(),
            Promoted::Stale(String::new())
        );
        let v = Value::Array(vec![bulk("ok"), bulk("rev-a"), bulk("rev-b")]);
        assert_eq!(
            RolledBack::from_redis_value(v).unwrap(),
            RolledBack::Ok {
                from: "rev-a".into(),
                to: "rev-b".into()
            }
        );
        let v = Value::Array(vec![bulk("quota"), bulk("global")]);
        assert_eq!(
            RevisionStored::from_redis_value(v).unwrap(),
            RevisionStored::Storage(StorageScope::Global)
        );
        assert!(Quarantined::from_redis_value(bulk("maybe")).is_err());
    }

    #[test]
    fn every_script_file_documents_its_keys_argv_and_reply() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/lua");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let head = text.split("]]").next().unwrap_or("");
            for section in ["Input:", "Output:"] {
                assert!(head.contains(section), "{path:?} lacks {section}");
            }
            // Every key the body touches comes from KEYS: no key is built from a string.
            let body = text.split_once("]]").map(|(_, b)| b).unwrap_or("");
            for call in body.split("redis.call(").skip(1) {
                let args = call.split(')').next().unwrap_or("");
                let mut args = args.split(',').map(str::trim);
                let command = args.next().unwrap_or("").trim_matches('\'');
                if matches!(command, "TIME" | "PUBLISH") {
                    continue;
                }
                let first = args.next().unwrap_or("");
                assert!(
                    first.starts_with("KEYS[") || first == "k",
                    "{path:?}: {command} on {first}, not a KEYS entry"
                );
            }
            n += 1;
        }
        assert_eq!(n, 11);
    }
}
