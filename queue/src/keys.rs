//! The queue's key names (each under the store prefix, `Store::key`), its lanes and its
//! worker slot pools, written once.
//!
//! Every queue key and channel is in the queue's slot group (`Group::Queue`, `{q}` on a Redis
//! Cluster): admission and claim check and charge across them in one script, and a
//! pipeline's PUBLISH is routed like a key. On one server the names carry no tag.

use horst_store::{Group, Store};
use serde::{Deserialize, Serialize};

use crate::JobKind;

/// Where a job waits: planner work and referee work wait apart, so a 5 ms simulation never
/// queues behind a 20 s playtest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    /// `playtest`.
    Planner,
    /// `simulate`, `submit`, `recheck`: the referee, at most a few seconds.
    Referee,
}

impl Lane {
    pub const ALL: [Lane; 2] = [Lane::Planner, Lane::Referee];

    pub fn of(kind: JobKind) -> Lane {
        match kind {
            JobKind::Playtest => Lane::Planner,
            JobKind::Simulate | JobKind::Submit | JobKind::Recheck => Lane::Referee,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Planner => "planner",
            Lane::Referee => "referee",
        }
    }

    pub fn other(self) -> Lane {
        match self {
            Lane::Planner => Lane::Referee,
            Lane::Referee => Lane::Planner,
        }
    }
}

/// Which slots of a worker claim a job: general slots take either lane (the job that has
/// waited longest first), referee slots only referee work (`worker.referee_slots`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pool {
    General,
    Referee,
}

impl Pool {
    pub fn as_str(self) -> &'static str {
        match self {
            Pool::General => "general",
            Pool::Referee => "referee",
        }
    }

    /// The lanes this pool's slots claim from.
    pub fn lanes(self) -> &'static [Lane] {
        match self {
            Pool::General => &Lane::ALL,
            Pool::Referee => &[Lane::Referee],
        }
    }
}

/// The queue group's base: the prefix (and hash tag) every queue key starts with. Not a key
/// of its own: claim.lua names the head job's keys from it (`group_key`, same hash slot).
pub(crate) fn base(store: &Store) -> String {
    store.key_in(Group::Queue, "")
}

/// `job:<id>`: the job's record (hash).
pub(crate) fn job(store: &Store, id: &str) -> String {
    store.key_in(Group::Queue, &format!("job:{id}"))
}

/// `blob:<sha256>`: a job input kept once (a map's text or a replay's compact JSON), named
/// by the SHA-256 (hex) of its bytes and shared by every job that uses it (`inputs.rs`).
pub(crate) fn blob(store: &Store, hash: &str) -> String {
    store.key_in(Group::Queue, &format!("blob:{hash}"))
}

/// `queue:waiting`: the single waiting list of versions before the lanes (a list of job
/// ids, oldest at the tail); only read to adopt what it still holds ([`crate::Queue::adopt_waiting_list`]).
pub(crate) fn old_waiting_list(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:waiting")
}

/// `queue:lane:<lane>`: the lane's waiting job ids, scored by turn (zset).
pub(crate) fn lane(store: &Store, lane: Lane) -> String {
    store.key_in(Group::Queue, &format!("queue:lane:{}", lane.as_str()))
}

/// `queue:fair`: the fair turns of both lanes and every account's waiting jobs, one hash
/// (admit.lua reads and writes it once each): `round:<lane>` (the round of the lane's last
/// claim), `seq:<lane>`, `a:<lane>:<account>` (the account's last waiting job's round),
/// `w:<account>` (the account's waiting jobs, in either lane; no field or 0: none; entries of
/// accounts at 0 are dropped by fair_sweep.lua), `n` (the jobs waiting in both lanes: the
/// lanes' `ZCARD`s together, kept by every script that adds or removes one),
/// `owed:<lane>` (the latest time an owed turn of the lane was promised for; no field:
/// unknown), `cap` (admission's sum of the live slots, `general referee valid_until_ms`,
/// dropped by every announcement), `end:<pool>` (at least the latest end of every job
/// running on the pool's slots; no field: unknown) and `layout` (set once [`crate::Queue::adopt_fair_layout`] has folded the keys of
/// earlier versions in).
pub(crate) fn fair(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:fair")
}

/// The field of `queue:fair` with admission's sum of the live slots (admit.lua).
pub(crate) const FAIR_SLOT_SUM: &str = "cap";

/// The field of `queue:fair` with the latest end of the jobs running on `pool`'s slots.
pub(crate) fn fair_latest_end(pool: Pool) -> String {
    format!("end:{}", pool.as_str())
}

/// The field of `queue:fair` with the seconds charged for the jobs admitted on `day` (a
/// claim adds its job's, claim_next in helpers.lua). Earlier versions counted them in the
/// day's budget hash (`charged`), which the day's figures add in.
pub(crate) fn fair_day_charged(day: u64) -> String {
    format!("charged:{day}")
}

/// The field of `queue:fair` with the count of jobs admitted on `day` of `kind` that ended
/// in `state` (`done:<day>:<kind>:<state>`; a slot's completion adds its job's, in the write
/// of queue:fair it makes anyway, complete.lua). Earlier versions, and the ways out that
/// touch no queue:fair (reap, an operator's stop or cancel, a completion without a slot),
/// count in the day's budget hash (`done:<kind>:<state>`), which the day's figures add in.
pub(crate) fn fair_day_done(day: u64, kind: &str, state: &str) -> String {
    format!("done:{day}:{kind}:{state}")
}

/// `queue:turns:<lane>`: the lane's turns in versions before `queue:fair`; only read to
/// adopt what it holds.
pub(crate) fn old_turns(store: &Store, lane: Lane) -> String {
    store.key_in(Group::Queue, &format!("queue:turns:{}", lane.as_str()))
}

/// `queue:owed:<lane>`: accounts refused for want of room, scored by the time they were
/// told to come back; admission keeps their turn until then (admit.lua, "Owed turns").
pub(crate) fn owed(store: &Store, lane: Lane) -> String {
    store.key_in(Group::Queue, &format!("queue:owed:{}", lane.as_str()))
}

/// `queue:slots`: live workers' slots (`general referee until_ms` by worker id).
pub(crate) fn slots(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:slots")
}

/// `queue:ends:<pool>`: running jobs of a slot pool by their latest end (zset), in versions
/// before admission read them from the running jobs' records; only deleted now.
pub(crate) fn old_ends(store: &Store, pool: Pool) -> String {
    store.key_in(Group::Queue, &format!("queue:ends:{}", pool.as_str()))
}

/// `queue:running`: running jobs by lease expiry (zset).
pub(crate) fn running(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:running")
}

/// `queue:ended`: the jobs that ended failed or cancelled, by end time (zset; the newest
/// 10,000 within the job retention, helpers.lua `note_ended`): the operator's listing of them
/// across accounts. Succeeded jobs are not in it (it would cost every job a command).
pub(crate) fn ended(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:ended")
}

/// `queue:clock`: the housekeeping's last look at the server clock and the last stall's end
/// (hash, `expired.lua`).
pub(crate) fn clock(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:clock")
}

/// `waiting:*`: the accounts' waiting counters of versions before `queue:fair` (the pattern
/// of what is left to delete once the counts are in `queue:fair`).
pub(crate) const OLD_WAITING_PATTERN: &str = "waiting:*";

/// `callers:<process>`: an API process's presence while callers wait in it.
pub(crate) fn callers(store: &Store, process: &str) -> String {
    store.key_in(Group::Queue, &format!("callers:{process}"))
}

/// `done:*`: the pattern of every job's completion channel.
pub(crate) fn done_pattern(store: &Store) -> String {
    store.key_in(Group::Queue, "done:*")
}

/// `workers:<id>`: a worker's presence (short expiry), for operators.
pub fn worker(store: &Store, id: &str) -> String {
    store.key_in(Group::Queue, &format!("workers:{id}"))
}

/// `done:<id>`: the job's completion channel (pub/sub, not a key).
pub(crate) fn done_channel(store: &Store, id: &str) -> String {
    store.key_in(Group::Queue, &format!("done:{id}"))
}

/// `budget:<day>`: the day's seconds and job counts, and each account's jobs that day by
/// kind (`d:<account>:<kind>`) and input bytes kept (`d:<account>:bytes`) (hash).
pub(crate) fn budget(store: &Store, day: &str) -> String {
    store.key_in(Group::Queue, &format!("budget:{day}"))
}

/// `daily:<day>:<account>`: the account's jobs that day by kind (hash), in versions before
/// they were kept in `budget:<day>` (`d:<account>:<kind>`); only read to adopt what it holds.
pub(crate) fn old_daily(store: &Store, day: &str, account: &str) -> String {
    store.key_in(Group::Queue, &format!("daily:{day}:{account}"))
}

/// The pattern of every `daily:<day>:<account>` of an earlier version ([`old_daily`]).
pub(crate) const OLD_DAILY_PATTERN: &str = "daily:*";

/// `idem:<account>:<key>`: the idempotency record.
pub(crate) fn idem(store: &Store, account: &str, key: &str) -> String {
    store.key_in(Group::Queue, &format!("idem:{account}:{key}"))
}

/// `jobs:<account>`: the account's jobs by creation (zset).
pub(crate) fn jobs_of(store: &Store, account: &str) -> String {
    store.key_in(Group::Queue, &format!("jobs:{account}"))
}

/// `fence`: the fencing token counter of versions before the token was the claim's time;
/// only deleted now.
pub(crate) fn old_fence(store: &Store) -> String {
    store.key_in(Group::Queue, "fence")
}

/// `queue:new`: the prefix of the idle slots' wake-up channels (`queue:new:<slot>`, in
/// ARGV of admit.lua; the bare name was every slot's channel before issue 35).
pub(crate) fn new_channel(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:new")
}

/// `queue:new*`: the pattern of every wake-up channel.
pub(crate) fn new_pattern(store: &Store) -> String {
    store.key_in(Group::Queue, "queue:new*")
}

/// `queue:new:<slot>`: the channel on which admission wakes the idle slot `slot`.
pub(crate) fn wake_channel(store: &Store, slot: &str) -> String {
    store.key_in(Group::Queue, &format!("queue:new:{slot}"))
}

/// `queue:handoff:<pool>`: the pool's idle slots (zset: slot id by when it last said it was
/// idle, server clock): admission pops the latest and hands it the job, or wakes it
/// (admit.lua). Named `queue:idle:<pool>` before a job could be handed: a slot of a worker of
/// that version, which would not know a handed job from a wake-up, is never handed one.
pub(crate) fn idle(store: &Store, pool: Pool) -> String {
    store.key_in(Group::Queue, &format!("queue:handoff:{}", pool.as_str()))
}
