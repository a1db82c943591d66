//! `playtest`: the planner's search, until the planner crate lands on this branch.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use horst_queue::Failure;
use serde_json::Value;

pub(crate) fn playtest(
    _map: &horst_engine::Map,
    _seed: u32,
    _limit: Duration,
    _cancel: &AtomicBool,
) -> Result<Value, Failure> {
    Err(Failure::new(
        "engine_unavailable",
        "this worker has no planner yet; prove the level with simulate_replay and your own replay",
    ))
}
