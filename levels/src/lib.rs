//! The levels horst ships: `levels/NN-name.map` with `levels/NN-name.replay.json`, embedded
//! at build time (`build.rs`), easiest first. They are published at start as promoted
//! revisions (`horst_gateway::builtin`), and their names are reserved for them.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

/// One shipped level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// The file name without extension, e.g. `01-erste-schritte`.
    pub file: &'static str,
    /// The level name (the file name without its order prefix), e.g. `erste-schritte`.
    pub name: &'static str,
    /// The `.map` text.
    pub map: &'static str,
    /// The winning replay (JSON text).
    pub replay: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// Whether `name` (any case) is the name of a shipped level.
pub fn is_builtin(name: &str) -> bool {
    BUILTIN.iter().any(|l| l.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_level_is_embedded_in_order() {
        assert!(BUILTIN.len() >= 15, "{}", BUILTIN.len());
        assert_eq!(BUILTIN[0].name, "erste-schritte");
        assert_eq!(BUILTIN[0].file, "01-erste-schritte");
        assert!(BUILTIN.windows(2).all(|w| w[0].file < w[1].file));
        assert!(BUILTIN.iter().all(|l| l.replay.contains("\"actions\"")));
        assert!(is_builtin("Erste-Schritte"));
        assert!(!is_builtin("erste-schritte-2"));
    }
}
