//! The engine module's integration tests (natively), one module a file, built as one test
//! binary (`cargo test -p horst-engine-wasm --test engine_wasm_tests -- view::`).

mod fuzz;
mod view;
