//! Every Redis key the burst limits use, named here once (under the store's prefix).
//!
//! One key per limit and subject: a burst script touches only it, so each key may live in
//! any slot of a Redis Cluster and needs no hash tag (the group's tag stays empty; the stored
//! names are the ones horst has always used).

use horst_store::Store;

/// The burst limits' hash tag: none (each script touches one key).
const BURST: &str = "";

/// `burst:<limit>:<subject hash>`: the sliding log of one subject's accepted requests.
pub fn burst(store: &Store, limit: &str, subject_hash: &str) -> String {
    store.key_alone(&format!("{BURST}burst:{limit}:{subject_hash}"))
}
