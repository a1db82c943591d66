//! The engine's integration tests, one module a file, built as one test binary
//! (`cargo test -p horst-engine --test engine_tests -- golden::`).

mod bad_input;
mod common;
mod deaths;
mod determinism;
mod format;
mod fuzz;
mod golden;
mod physics;
mod reach;
mod version;
