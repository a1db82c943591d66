//! Faults the integration tests inject into a running gateway, to check what a crash at
//! that point leaves behind. Each names the account it hits, so tests running side by side
//! in one process do not see each other's faults. None is on unless a test turns it on.

use std::sync::Mutex;

static STOP_AFTER_REVISION_STORE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// From now on, `account`'s submissions stop (answer `internal_error`) right after their
/// revision is stored and before the job records it: what a crash of the API process
/// there leaves behind. `false` turns it off again.
pub fn stop_after_revision_store(account: &str, on: bool) {
    let mut hit = STOP_AFTER_REVISION_STORE
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    hit.retain(|a| a != account);
    if on {
        hit.push(account.to_string());
    }
}

pub(crate) fn stops_after_revision_store(account: &str) -> bool {
    STOP_AFTER_REVISION_STORE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|a| a == account)
}
