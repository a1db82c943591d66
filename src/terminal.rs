//! Lines for the operator's terminal that never panic. `println!` panics when stdout is
//! gone (`horst up | tee log` and tee ended; Rust ignores SIGPIPE), and a panic in a
//! supervising task or thread ended the supervision: no worker started again, or a
//! restarted private redis-server stopped with the thread that started it.

use std::io::Write;

/// A line on stdout, or nothing if it cannot be written.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// A line on stderr, or nothing if it cannot be written.
pub fn warn(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
