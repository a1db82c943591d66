//! Every Redis key and pub/sub channel of the session layer, named in one place.
//!
//! - `ses:<id>`: the session record, a string `<rev> <MessagePack>` (records of earlier
//!   versions: a hash `{rev, json}`); also the name of its wake-up channel (channels are not
//!   keys; the save script publishes on its KEYS[1]'s name, so the two must stay one name).
//! - `ses:<id>:events`: the agent-visible event log, a list of events in MessagePack
//!   (`record::encode_event`; earlier versions wrote JSON, which still reads).
//! - `sessions:open`: the set of unfinished session ids (`/available`).
//! - `sessions:boot`: the store's boot tag (ids from another tag answer 410).
//! - `delayed`: the delayed set shared with other features (`horst_store::DelayedSet`).
//!
//! On a Redis Cluster a session's keys, and the open-sessions set and the delayed set they
//! are saved with, are in the slot of the session's bucket (`{s3-..}ses:<id>`,
//! `{s3-..}sessions:open`; `Store::key_in_bucket`): one save script touches all four. The
//! clock firer and `/available` read every bucket. On one server there is one bucket and
//! the names are the ones above.

use horst_store::Store;

pub(crate) fn session(store: &Store, id: &str) -> String {
    store.key_in_bucket(store.bucket_of(id), &format!("ses:{id}"))
}

pub(crate) fn events(store: &Store, id: &str) -> String {
    store.key_in_bucket(store.bucket_of(id), &format!("ses:{id}:events"))
}

/// The open-sessions set of `id`'s bucket.
pub(crate) fn open_of(store: &Store, id: &str) -> String {
    open_in(store, store.bucket_of(id))
}

/// The open-sessions set of bucket `bucket` (`/available` reads every bucket).
pub(crate) fn open_in(store: &Store, bucket: usize) -> String {
    store.key_in_bucket(bucket, "sessions:open")
}

pub(crate) fn boot(store: &Store) -> String {
    store.key("sessions:boot")
}

/// The wake-up channel of a session.
pub(crate) fn channel(store: &Store, id: &str) -> String {
    session(store, id)
}

/// The pattern every process's pub/sub listener subscribes to (on a cluster, every
/// bucket's: `{s*}` matches each bucket's tag).
pub(crate) fn channel_pattern(store: &Store) -> String {
    if store.hash_tags() {
        store.key_alone("{s*}ses:*")
    } else {
        store.key_alone("ses:*")
    }
}
