//! The Lua scripts, each prefixed with the shared prelude. `redis::Script` runs them by
//! SHA (EVALSHA) and loads them on NOSCRIPT, e.g. after Redis restarted.

pub(crate) struct Scripts {
    pub admit: redis::Script,
    pub claim: redis::Script,
    pub heartbeat: redis::Script,
    pub complete: redis::Script,
    pub cancel: redis::Script,
    pub reap: redis::Script,
    pub remaining: redis::Script,
    pub pop_due: redis::Script,
    pub now: redis::Script,
}

const PRELUDE: &str = include_str!("../lua/prelude.lua");

fn with_prelude(body: &str) -> redis::Script {
    redis::Script::new(&format!("{PRELUDE}\n{body}"))
}

impl Scripts {
    pub(crate) fn load() -> Scripts {
        Scripts {
            admit: with_prelude(include_str!("../lua/admit.lua")),
            claim: with_prelude(include_str!("../lua/claim.lua")),
            heartbeat: with_prelude(include_str!("../lua/heartbeat.lua")),
            complete: with_prelude(include_str!("../lua/complete.lua")),
            cancel: with_prelude(include_str!("../lua/cancel.lua")),
            reap: with_prelude(include_str!("../lua/reap.lua")),
            remaining: with_prelude(include_str!("../lua/remaining.lua")),
            pop_due: with_prelude(include_str!("../lua/pop_due.lua")),
            now: with_prelude(include_str!("../lua/now.lua")),
        }
    }
}
