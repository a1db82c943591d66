//! The `horst` library: the composition root ([`App`]) that the binary, the integration
//! tests and the benchmarks share. The binary (`src/main.rs`) adds the command line, the
//! private Redis and the process's signals around it.

mod app;
mod shutdown;

pub use app::{App, BuildError, Roles};
pub use shutdown::Shutdown;
