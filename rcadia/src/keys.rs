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

use horst_store::Store;

pub(crate) fn session(store: &Store, id: &str) -> String {
    store.key(&format!("ses:{id}"))
}

pub(crate) fn events(store: &Store, id: &str) -> String {
    store.key(&format!("ses:{id}:events"))
}

pub(crate) fn open(store: &Store) -> String {
    store.key("sessions:open")
}

pub(crate) fn boot(store: &Store) -> String {
    store.key("sessions:boot")
}

/// The wake-up channel of a session.
pub(crate) fn channel(store: &Store, id: &str) -> String {
    session(store, id)
}

/// The pattern every process's pub/sub listener subscribes to.
pub(crate) fn channel_pattern(store: &Store) -> String {
    store.key("ses:*")
}
