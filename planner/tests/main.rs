//! The planner's integration tests, one module a file, built as one test binary
//! (`cargo test -p horst-planner --test planner_tests -- probes::`). `memory.rs` is a binary
//! of its own (its counting allocator would count every test's allocations).

mod adversarial;
mod common;
mod corpus;
mod heuristic;
mod planner;
mod probes;
mod proofs;
mod racing;
mod soundness;
