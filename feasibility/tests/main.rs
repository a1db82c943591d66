//! The feasibility report's integration tests, one module a file, built as one test binary
//! (`cargo test -p horst-feasibility --test feasibility_tests -- relax::`).

mod fuzz;
mod relax;
mod report;
mod shipped;
