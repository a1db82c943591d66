//! The gateway's Lua scripts (`gateway/lua/`, each file's header documents its KEYS, ARGV
//! and reply), declared once in the script registry (`horst_store::script`), and their
//! replies as types. Accounts' and keys' scripts are `horst-identity`'s.
//!
//! Every key a script touches is in its KEYS, named by `keys.rs`; the long argument lists
//! are typed ([`ScriptArgs`]), so their order is written once, here.

use redis::{FromRedisValue, ParsingError, Value};

use horst_store::script::{
    Args, ArgsOf, Argv, Decl, LuaFile, Registered, Script, ScriptArgs, Writes,
};
use horst_store::{lua, Store};

use crate::keys;

/// `promote.lua`: promotes exactly over the expected revision (`promotion.rs`).
pub(crate) static PROMOTE: Script<Promoted> = Script::new(Decl {
    file: lua!("lua/promote.lua"),
    keys: 7,
    argv: Argv::Exactly(3),
    writes: Writes::Durable,
});

/// `rollback.lua`: restores the level's previous promoted revision.
pub(crate) static ROLLBACK: Script<RolledBack> = Script::new(Decl {
    file: lua!("lua/rollback.lua"),
    keys: 4,
    argv: Argv::Exactly(3),
    writes: Writes::Durable,
});

/// `quarantine.lua`: hides a revision everywhere.
pub(crate) static QUARANTINE: Script<Quarantined> = Script::new(Decl {
    file: lua!("lua/quarantine.lua"),
    keys: 6,
    argv: Argv::Exactly(1),
    writes: Writes::Durable,
});

/// The board's Lua helpers: a thread's listing indexes (`board_index`, `board_unindex`).
const BOARD_HELPERS: LuaFile = lua!("lua/board_index.lua");

/// `board_write.lua`: a thread with its first post, or a reply, with the daily quotas.
pub(crate) static BOARD_WRITE: Script<BoardWritten, BoardWrite<'static>> = Script::with_helpers(
    Decl {
        file: lua!("lua/board_write.lua"),
        keys: 20,
        argv: Argv::Exactly(14),
        writes: Writes::Durable,
    },
    BOARD_HELPERS,
);

/// `board_endorse.lua`.
pub(crate) static BOARD_ENDORSE: Script<Endorsed> = Script::with_helpers(
    Decl {
        file: lua!("lua/board_endorse.lua"),
        keys: 16,
        argv: Argv::Exactly(6),
        writes: Writes::Durable,
    },
    BOARD_HELPERS,
);

/// `board_change.lua`: hide, withdraw, a status, or only (re)index a thread.
pub(crate) static BOARD_CHANGE: Script<BoardChanged> = Script::with_helpers(
    Decl {
        file: lua!("lua/board_change.lua"),
        keys: 28,
        argv: Argv::Exactly(6),
        writes: Writes::Durable,
    },
    BOARD_HELPERS,
);

/// `check_record.lua`.
pub(crate) static CHECK_RECORD: Script<CheckRecorded> = Script::new(Decl {
    file: lua!("lua/check_record.lua"),
    keys: 2,
    argv: Argv::Exactly(2),
    writes: Writes::Durable,
});

/// `contact_send.lua`.
pub(crate) static CONTACT_SEND: Script<ContactSent> = Script::new(Decl {
    file: lua!("lua/contact_send.lua"),
    keys: 5,
    argv: Argv::Exactly(8),
    writes: Writes::Durable,
});

/// `revision_store.lua`.
pub(crate) static REVISION_STORE: Script<RevisionStored, StoreRevision<'static>> =
    Script::new(Decl {
        file: lua!("lua/revision_store.lua"),
        keys: 10,
        argv: Argv::Exactly(19),
        writes: Writes::Durable,
    });

/// `revision_withdraw.lua`.
pub(crate) static REVISION_WITHDRAW: Script<Withdrawn> = Script::new(Decl {
    file: lua!("lua/revision_withdraw.lua"),
    keys: 4,
    argv: Argv::Exactly(1),
    writes: Writes::Durable,
});

/// `builtin_publish.lua`: a shipped level, published once per engine version. Every API
/// process runs it at start; a lost publication is run again at the next start.
pub(crate) static BUILTIN_PUBLISH: Script<Vec<String>, PublishBuiltin<'static>> =
    Script::new(Decl {
        file: lua!("lua/builtin_publish.lua"),
        keys: 10,
        argv: Argv::Exactly(15),
        writes: Writes::PrimaryOnly,
    });

/// The gateway's registered scripts, for the tidy test.
pub fn registered() -> Vec<&'static dyn Registered> {
    vec![
        &BOARD_WRITE,
        &BOARD_ENDORSE,
        &BOARD_CHANGE,
        &CHECK_RECORD,
        &CONTACT_SEND,
        &REVISION_STORE,
        &REVISION_WITHDRAW,
        &BUILTIN_PUBLISH,
        &PROMOTE,
        &ROLLBACK,
        &QUARANTINE,
        &crate::page_views::COUNT,
    ]
}

/// `revision_store.lua`'s KEYS and ARGV.
pub(crate) struct StoreRevision<'a> {
    /// Names the keys.
    pub store: &'a Store,
    pub id: &'a str,
    pub rev: &'a crate::revisions::NewRevision<'a>,
    pub budgets: crate::revisions::Budgets,
    pub bytes: u64,
}

impl ArgsOf for StoreRevision<'static> {
    type At<'a> = StoreRevision<'a>;
}

impl ScriptArgs for StoreRevision<'_> {
    fn push(&self, to: &mut Args) {
        let (s, r, id) = (self.store, self.rev, self.id);
        let parent = r.parent.unwrap_or("");
        to.key(keys::rev(s, id))
            .key(keys::rev_state(s, id))
            .key(keys::level_owner(s, r.name))
            .key(keys::labor(s))
            .key(keys::owner_revs(s, r.owner))
            .key(keys::owner_candidates(s, r.owner))
            .key(keys::storage(s, r.owner))
            .key(keys::storage_total(s))
            .key(keys::rev(s, parent))
            .key(keys::revision_of_job(s, r.job_id));
        to.arg(id)
            .arg(r.owner)
            .arg(r.name)
            .arg(parent)
            .arg(self.budgets.labor_candidates)
            .arg(self.budgets.account_bytes)
            .arg(self.budgets.total_bytes)
            .arg(self.bytes)
            .arg(r.map)
            .arg(r.replay.to_string())
            .arg(r.seed)
            .arg(r.ticks)
            .arg(r.map_hash)
            .arg(r.engine_version)
            .arg(r.policy_version)
            .arg(r.acceptance.to_string())
            .arg(r.job_id)
            .arg(r.job_retention_seconds)
            .arg(r.title);
    }
}

/// `board_write.lua`'s KEYS and ARGV. A reply has an empty `thread_kind`, `title`,
/// `level` and `revision_id`.
pub(crate) struct BoardWrite<'a> {
    /// Names the keys.
    pub store: &'a Store,
    /// Whose daily counters are charged (the operator's live apart from accounts').
    pub counter: &'a str,
    pub day: &'a str,
    pub now_ms: u64,
    pub thread_limit: i64,
    pub post_limit: i64,
    pub thread_id: &'a str,
    pub post_id: &'a str,
    pub thread_kind: &'a str,
    pub title: &'a str,
    pub author: &'a str,
    pub author_kind: &'a str,
    pub level: &'a str,
    pub revision_id: &'a str,
    pub body: &'a str,
    pub quota_ttl_seconds: u64,
    /// The thread's first post id (`post_id` for a new thread).
    pub first_post_id: &'a str,
    /// The thread's status as read (`open` for a new thread), whose indexes follow.
    pub status: &'a str,
    /// The thread's listing indexes for `status` (`board::index_keys`).
    pub index: &'a [String; 12],
}

impl ArgsOf for BoardWrite<'static> {
    type At<'a> = BoardWrite<'a>;
}

impl ScriptArgs for BoardWrite<'_> {
    fn push(&self, to: &mut Args) {
        let s = self.store;
        to.key(keys::board_quota(s, self.counter, self.day, "threads"))
            .key(keys::board_quota(s, self.counter, self.day, "posts"))
            .key(keys::board_thread(s, self.thread_id))
            .key(keys::board_post(s, self.post_id))
            .key(keys::board_thread_posts(s, self.thread_id))
            .key(keys::board_threads(s))
            .key(keys::board_thread_endorsers(s, self.thread_id))
            .key(keys::board_post(s, self.first_post_id));
        for k in self.index {
            to.key(k.as_str());
        }
        to.arg(self.now_ms)
            .arg(self.thread_limit)
            .arg(self.post_limit)
            .arg(self.thread_id)
            .arg(self.post_id)
            .arg(self.thread_kind)
            .arg(self.title)
            .arg(self.author)
            .arg(self.author_kind)
            .arg(self.level)
            .arg(self.revision_id)
            .arg(self.body)
            .arg(self.quota_ttl_seconds)
            .arg(self.status);
    }
}

/// `builtin_publish.lua`'s KEYS and ARGV.
pub(crate) struct PublishBuiltin<'a> {
    /// Names the keys.
    pub store: &'a Store,
    pub id: &'a str,
    pub owner: &'a str,
    pub owner_display_name: &'a str,
    /// Lowercase.
    pub name: &'a str,
    pub bytes: u64,
    pub map: &'a str,
    pub replay_json: &'a str,
    pub seed: u32,
    pub ticks: u32,
    pub map_hash: &'a str,
    pub engine_version: &'a str,
    pub policy_version: &'a str,
    pub acceptance_json: &'a str,
    /// The promoted revision the caller read ('' = none).
    pub current: &'a str,
    /// The map's title (`public_levels::title_of`), stored so cards never parse the map.
    pub title: &'a str,
}

impl ArgsOf for PublishBuiltin<'static> {
    type At<'a> = PublishBuiltin<'a>;
}

impl ScriptArgs for PublishBuiltin<'_> {
    fn push(&self, to: &mut Args) {
        let s = self.store;
        to.key(keys::rev(s, self.id))
            .key(keys::rev_state(s, self.id))
            .key(keys::level_owner(s, self.name))
            .key(keys::level_promoted(s, self.name))
            .key(keys::level_history(s, self.name))
            .key(keys::owner_revs(s, self.owner))
            .key(keys::account(s, self.owner))
            .key(keys::promoted_names(s))
            .key(keys::rev(s, self.current))
            .key(keys::rev_state(s, self.current));
        to.arg(self.id)
            .arg(self.owner)
            .arg(self.name)
            .arg(self.bytes)
            .arg(self.map)
            .arg(self.replay_json)
            .arg(self.seed)
            .arg(self.ticks)
            .arg(self.map_hash)
            .arg(self.engine_version)
            .arg(self.current)
            .arg(self.owner_display_name)
            .arg(self.policy_version)
            .arg(self.acceptance_json)
            .arg(self.title);
    }
}

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
    Written {
        threads: i64,
        posts: i64,
    },
    NoThread,
    ThreadLimit,
    PostLimit,
    /// The thread's status changed since it was read: read it again.
    Moved,
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
        -3 => Some(BoardWritten::Moved),
        _ => None,
    }
);

/// `board_endorse.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endorsed {
    Done {
        endorsements: i64,
    },
    DailyLimit,
    /// The thread's status changed since it was read: read it again.
    Moved,
}
reply!(Endorsed, (i64, i64), "board_endorse", |r| match r.0 {
    1 => Some(Endorsed::Done { endorsements: r.1 }),
    -1 => Some(Endorsed::DailyLimit),
    -2 => Some(Endorsed::Moved),
    _ => None,
});

/// `board_change.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoardChanged {
    Done,
    NoThread,
    /// The thread's status changed since it was read: read it again.
    Moved,
}
reply!(BoardChanged, i64, "board_change", |r| match r {
    1 => Some(BoardChanged::Done),
    0 => Some(BoardChanged::NoThread),
    -1 => Some(BoardChanged::Moved),
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
    /// The level changed between the caller's read and the script, or the history's head
    /// was no longer retired and was taken off: read again.
    Moved,
    /// Another revision than the one the operator expects would come back.
    Expected(String),
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
    ["moved"] | ["skipped", _, _] => Some(RolledBack::Moved),
    ["expected", prev] => Some(RolledBack::Expected(prev.to_string())),
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RevisionStored {
    Ok {
        now_ms: u64,
    },
    /// The job's revision was stored by an earlier call.
    Earlier {
        id: String,
    },
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
        ("stored", id) => Some(RevisionStored::Earlier { id: id.to_string() }),
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
    /// Quarantined by the operator: hidden from everyone, its owner included.
    Quarantined,
}
reply!(
    Withdrawn,
    String,
    "revision_withdraw",
    |r| match r.as_str() {
        "ok" => Some(Withdrawn::Ok),
        "promoted" => Some(Withdrawn::Promoted),
        "quarantined" => Some(Withdrawn::Quarantined),
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
}
