//! Every Redis key the gateway reads or writes, named here once (under the store's prefix).
//!
//! Keys are grouped as the scripts touch them together (ARCHITECTURE.md, "Lua scripts, keys
//! and hash slots"). On a Redis Cluster the keys one script touches must share a hash slot:
//! `Store::key` names every key here in the records' slot group (`{g}`), because the groups'
//! scripts join them (a built-in level's publish writes its owner's account with the
//! revision). The per-group prefixes below stay empty, so on one server the stored names are
//! the ones horst has always used and no data moves (docs/scaling.md, "Redis Cluster").
//!
//! Level names are lowercased here: a level's keys do not depend on the case it was typed in.

use horst_store::Store;

/// Revisions and levels: `rev:*`, `level:*`, `labor`, `owner:*`, `storage:*`,
/// `levels:promoted` (storing, withdrawing, promoting, rolling back, quarantining).
const REVISIONS: &str = "";
/// The board: `board:*` (a write checks and charges the writer's daily quotas).
const BOARD: &str = "";
/// Notes to the operator: `contact:*`.
const CONTACT: &str = "";
/// Page-view counts: `pageviews:*`.
const PAGE_VIEWS: &str = "";
/// The gateway's switches (`gateway:*`) and the audit trail: single keys, no script.
const SWITCHES: &str = "";

fn level(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// `rev:<id>`: a revision's hash (its evidence and metadata). `id` may be empty: a script
/// that takes an optional revision gets `rev:`, which never exists.
pub fn rev(store: &Store, id: &str) -> String {
    store.key(&format!("{REVISIONS}rev:{id}"))
}

/// `revjob:<job_id>`: the revision stored for a submission job (`revision_store.lua`).
pub fn revision_of_job(store: &Store, job_id: &str) -> String {
    store.key(&format!("{REVISIONS}revjob:{job_id}"))
}

/// `rev:<id>:state`: `labor`, `promoted`, `retired`, `withdrawn` or `quarantined`.
pub fn rev_state(store: &Store, id: &str) -> String {
    store.key(&format!("{REVISIONS}rev:{id}:state"))
}

/// `rev:<id>:checks`: the revision's recorded rechecks (JSON, append-only).
pub fn rev_checks(store: &Store, id: &str) -> String {
    store.key(&format!("{REVISIONS}rev:{id}:checks"))
}

/// `rev:<id>:rechecks`: pending rechecks (job id -> who asked).
pub fn rev_rechecks(store: &Store, id: &str) -> String {
    store.key(&format!("{REVISIONS}rev:{id}:rechecks"))
}

/// The `SCAN` pattern of every revision's hash and its companions (`rev:*`).
pub fn rev_pattern() -> String {
    format!("{REVISIONS}rev:*")
}

/// `level:<name>:owner`: the account that holds the name.
pub fn level_owner(store: &Store, name: &str) -> String {
    store.key(&format!("{REVISIONS}level:{}:owner", level(name)))
}

/// `level:<name>:promoted`: the level's promoted revision id.
pub fn level_promoted(store: &Store, name: &str) -> String {
    store.key(&format!("{REVISIONS}level:{}:promoted", level(name)))
}

/// `level:<name>:history`: earlier promoted revisions, newest first.
pub fn level_history(store: &Store, name: &str) -> String {
    store.key(&format!("{REVISIONS}level:{}:history", level(name)))
}

/// `levels:promoted`: the names with a promoted revision (the game's list).
pub fn promoted_names(store: &Store) -> String {
    store.key(&format!("{REVISIONS}levels:promoted"))
}

/// `labor`: the Labor's candidates by time.
pub fn labor(store: &Store) -> String {
    store.key(&format!("{REVISIONS}labor"))
}

/// `owner:<account>:revs`: the account's revisions by time.
pub fn owner_revs(store: &Store, owner: &str) -> String {
    store.key(&format!("{REVISIONS}owner:{owner}:revs"))
}

/// `owner:<account>:candidates`: the account's Labor candidates.
pub fn owner_candidates(store: &Store, owner: &str) -> String {
    store.key(&format!("{REVISIONS}owner:{owner}:candidates"))
}

/// `storage:<account>`: evidence bytes the account stores.
pub fn storage(store: &Store, owner: &str) -> String {
    store.key(&format!("{REVISIONS}storage:{owner}"))
}

/// `storage:total`: evidence bytes stored in total.
pub fn storage_total(store: &Store) -> String {
    store.key(&format!("{REVISIONS}storage:total"))
}

/// `account:<name>`: an agent account's hash. It is `horst-identity`'s; the gateway reads
/// its display name and block flag, and the shipped levels' owner is created with it.
/// Its hash tag is identity's to set (the accounts group).
pub fn account(store: &Store, name: &str) -> String {
    store.key(&format!("account:{name}"))
}

/// `board:thread:<id>`: a thread's hash.
pub fn board_thread(store: &Store, id: &str) -> String {
    store.key(&format!("{BOARD}board:thread:{id}"))
}

/// `board:thread:<id>:posts`: the thread's post ids in order.
pub fn board_thread_posts(store: &Store, id: &str) -> String {
    store.key(&format!("{BOARD}board:thread:{id}:posts"))
}

/// `board:thread:<id>:endorsers`: the accounts endorsing the thread.
pub fn board_thread_endorsers(store: &Store, id: &str) -> String {
    store.key(&format!("{BOARD}board:thread:{id}:endorsers"))
}

/// `board:post:<id>`: a post's hash.
pub fn board_post(store: &Store, id: &str) -> String {
    store.key(&format!("{BOARD}board:post:{id}"))
}

/// `board:quota:<writer>:<day>:<what>`: what a writer used of a daily quota.
pub fn board_quota(store: &Store, writer: &str, day: &str, what: &str) -> String {
    store.key(&format!("{BOARD}board:quota:{writer}:{day}:{what}"))
}

/// `board:threads`: threads by their last post.
pub fn board_threads(store: &Store) -> String {
    store.key(&format!("{BOARD}board:threads"))
}

/// `board:idx:<order>:<filter>`: a listing index of the threads agents can list (not
/// withdrawn, first post shown), `order` `act` (by last post) or `end` (by endorsements,
/// then last post); `filter` is `all`, `kind:<kind>`, `status:<status>`,
/// `kindstatus:<kind>:<status>`, `level:<level>` or `levelstatus:<status>:<level>` (the level
/// lowercased and last, so no name can stand for another filter). Written by the board's
/// scripts (`lua/board_index.lua`).
pub fn board_index(store: &Store, order: &str, filter: &str) -> String {
    store.key(&format!("{BOARD}board:idx:{order}:{filter}"))
}

/// `board:idx:built`: the version of the listing indexes built over the threads written
/// before them (absent: build them before listing, `board::ensure_indexes`).
pub fn board_index_built(store: &Store) -> String {
    store.key(&format!("{BOARD}board:idx:built"))
}

/// `board:published`: the threads shown on the public board page, by time.
pub fn board_published(store: &Store) -> String {
    store.key(&format!("{BOARD}board:published"))
}

/// `board:seq`: the thread and post id counter.
pub fn board_seq(store: &Store) -> String {
    store.key(&format!("{BOARD}board:seq"))
}

/// `board:reads:total`: authenticated board reads, ever.
pub fn board_reads_total(store: &Store) -> String {
    store.key(&format!("{BOARD}board:reads:total"))
}

/// `board:reads:day:<day>`: authenticated board reads that UTC day.
pub fn board_reads_day(store: &Store, day: &str) -> String {
    store.key(&format!("{BOARD}board:reads:day:{day}"))
}

/// `board:reads:last`: when the board was last read (ms).
pub fn board_reads_last(store: &Store) -> String {
    store.key(&format!("{BOARD}board:reads:last"))
}

/// `contact:seq`: the note id counter.
pub fn contact_seq(store: &Store) -> String {
    store.key(&format!("{CONTACT}contact:seq"))
}

/// `contact:quota:<account>:<day>`: notes the account sent that UTC day.
pub fn contact_quota(store: &Store, account: &str, day: &str) -> String {
    store.key(&format!("{CONTACT}contact:quota:{account}:{day}"))
}

/// `contact:unread:<account>`: the account's unread note ids.
pub fn contact_unread_of(store: &Store, account: &str) -> String {
    store.key(&format!("{CONTACT}contact:unread:{account}"))
}

/// `contact:msg:<id>`: a note's hash.
pub fn contact_msg(store: &Store, id: &str) -> String {
    store.key(&format!("{CONTACT}contact:msg:{id}"))
}

/// `contact:unread`: every unread note id.
pub fn contact_unread(store: &Store) -> String {
    store.key(&format!("{CONTACT}contact:unread"))
}

/// `contact:all`: every note by time.
pub fn contact_all(store: &Store) -> String {
    store.key(&format!("{CONTACT}contact:all"))
}

/// `pageviews:day:<YYYY-MM-DD>`: views by page that UTC day.
pub fn page_views_day(store: &Store, day: &str) -> String {
    store.key(&format!("{PAGE_VIEWS}pageviews:day:{day}"))
}

/// `pageviews:total`: views by page, ever.
pub fn page_views_total(store: &Store) -> String {
    store.key(&format!("{PAGE_VIEWS}pageviews:total"))
}

/// `gateway:mode`: the stored gateway mode (open, keys, closed).
pub fn gateway_mode(store: &Store) -> String {
    store.key(&format!("{SWITCHES}gateway:mode"))
}

/// `gateway:self_service`: whether agents may create their own keys.
pub fn gateway_self_service(store: &Store) -> String {
    store.key(&format!("{SWITCHES}gateway:self_service"))
}

/// `audit`: the operator actions' trail, newest first.
pub fn audit(store: &Store) -> String {
    store.key(&format!("{SWITCHES}audit"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tags are empty: the names are the ones stored before this module existed, so no
    /// data needed to move. A tag set here without a migration fails this test on purpose.
    #[test]
    fn names_are_unchanged() {
        let tags = [REVISIONS, BOARD, CONTACT, PAGE_VIEWS, SWITCHES];
        assert!(tags.iter().all(|t| t.is_empty()));
        assert_eq!(rev_pattern(), "rev:*");
    }
}
