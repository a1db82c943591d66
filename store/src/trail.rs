//! Bounded trails: lists that keep their newest lines (the operators' audit trail, the
//! sign-ins), each with a count of every line ever pushed.

use crate::script::{Argv, Decl, Script, Writes};
use crate::Store;

/// `lua/trail_push.lua`: the count after the push. Durable (an action reported done keeps
/// its entry through a failover) and allowed at `maxmemory` (the trail is bounded).
pub(crate) static TRAIL_PUSH: Script<i64> = Script::new(Decl {
    file: crate::lua!("lua/trail_push.lua"),
    keys: 2,
    argv: Argv::Exactly(2),
    writes: Writes::Durable,
})
.allowing_oom();

/// Appends `line` to the trail `list` (counted in `count`), keeping its newest `keep`
/// lines. `list` and `count` must be keys of one hash slot.
pub async fn push(
    store: &Store,
    list: &str,
    count: &str,
    line: &str,
    keep: u64,
) -> redis::RedisResult<()> {
    TRAIL_PUSH
        .call(store)
        .key(list)
        .key(count)
        .arg(line)
        .arg(keep)
        .run()
        .await?;
    Ok(())
}
