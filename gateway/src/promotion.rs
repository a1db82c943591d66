//! Which revision of a level is promoted: promotion (exactly the expected one replaced),
//! rollback to the level's history, and quarantine. The state changes only; the operator's
//! actions around them (who may, the audit trail) are `horst-operator`'s.
//!
//! Layout (under the store prefix), besides what `revisions` owns:
//! - `level:<name lowercase>:history` list: previously promoted revisions, newest first
//!   (rollback pops it)

use serde::{Deserialize, Serialize};

use horst_store::Store;

use crate::error::{ErrorCode, ToolError};
use crate::keys;
use crate::scripts::{Promoted, Quarantined, RolledBack, PROMOTE, QUARANTINE, ROLLBACK};

/// Prints a result as compact JSON (what `horst admin` shows).
macro_rules! display_as_json {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
                f.write_str(&text)
            }
        }
    )*};
}

display_as_json!(Promotion, Rollback);

/// How an expectation names "no promoted revision" (the CLI's `--expect none`, and the
/// `currentRevisionId` of a stale expectation's conflict).
const NONE: &str = "none";

/// What a promotion did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Promotion {
    pub level: String,
    /// The revision it replaced (`None`: the level had no promoted revision).
    pub previous: Option<String>,
    pub revision_id: String,
}

/// What a rollback did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollback {
    pub from: String,
    pub level: String,
    pub to: String,
}

/// Promotes exactly `revision_id`, if its newest check on the current engine passed and the
/// currently promoted revision of its level is `expected_current` (`None`: no promoted
/// revision yet); a stale expectation is a `conflict` (409).
pub async fn promote(
    store: &Store,
    revision_id: &str,
    expected_current: Option<&str>,
) -> Result<Promotion, ToolError> {
    // A stale expectation is answered with `currentRevisionId: "none"` and "repeat with
    // expect none" when nothing is promoted, so `none` must mean no promoted revision here
    // too, as it does in the CLI: a REST caller who repeated with {"expect": "none"} was
    // refused with "currently has promoted revision none, not none". No revision is called
    // `none` (ids are `rev-...`).
    let expected_current = expected_current.filter(|e| *e != NONE);
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(keys::rev(store, revision_id))
        .arg(&["name", "owner"])
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten();
    let (Some(name), Some(owner)) = (get(0), get(1)) else {
        return Err(ToolError::not_found(format!("no revision {revision_id}")));
    };
    // Evidence counts only on the engine that produced it: the newest check on the current
    // engine (the submission's or a recheck) must have passed.
    crate::checks::require_current_pass(store, revision_id).await?;
    let lower = name.to_ascii_lowercase();
    // The expected revision's state key is passed: the script retires it only if it is
    // still the promoted one (promote.lua).
    let promoted = PROMOTE
        .call(store)
        .key(keys::level_promoted(store, &lower))
        .key(keys::rev_state(store, revision_id))
        .key(keys::labor(store))
        .key(keys::owner_candidates(store, &owner))
        .key(keys::level_history(store, &lower))
        .key(keys::rev_state(store, expected_current.unwrap_or_default()))
        .key(keys::promoted_names(store))
        .arg(revision_id)
        .arg(expected_current.unwrap_or_default())
        .arg(&lower)
        .run()
        .await?;
    if let Promoted::Stale(cur) = &promoted {
        let cur = if cur.is_empty() { NONE } else { cur };
        return Err(ToolError::new(
ErrorCode::Conflict,
            format!(
                "level {name} currently has promoted revision {cur}, not {}; check it and repeat expecting {cur} (--expect {cur}, or \"expect\": \"{cur}\" in the REST API)",
                expected_current.unwrap_or(NONE)
            ),
        )
        .with("currentRevisionId", cur));
    }
    if let Promoted::WrongState(state) = &promoted {
        return Err(ToolError::new(
ErrorCode::Conflict,
            format!("revision {revision_id} is {state}; only Labor candidates (or retired revisions) can be promoted"),
        ));
    }
    Ok(Promotion {
        level: name,
        previous: expected_current.map(str::to_string),
        revision_id: revision_id.to_string(),
    })
}

/// What the operator saw when they asked for a rollback: the promoted revision (`from`) and
/// the one they were told comes back (`to`). Either may be left out; one that does not
/// match is refused (conflict) instead of rolling back what nobody confirmed, as when two
/// operators confirm the same rollback and the second would take the level one further back.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackExpect {
    pub from: Option<String>,
    pub to: Option<String>,
}

/// Restores the previously promoted revision of `level`. A revision hidden since it was
/// retired (quarantined, withdrawn) never comes back: it is taken off the history and the
/// one before it is restored.
pub async fn rollback(
    store: &Store,
    level: &str,
    expect: &RollbackExpect,
) -> Result<Rollback, ToolError> {
    let lower = level.to_ascii_lowercase();
    let promoted_key = keys::level_promoted(store, &lower);
    let history_key = keys::level_history(store, &lower);
    // Two steps (rollback.lua): read which revisions are involved, then pass their keys;
    // the script refuses if either moved in between, and we read again.
    let mut rolled = RolledBack::Moved;
    for _ in 0..16 {
        let (cur, prev): (Option<String>, Option<String>) = redis::pipe()
            .get(&promoted_key)
            .lindex(&history_key, 0)
            .query_async(&mut store.conn())
            .await?;
        let (cur, prev) = (cur.unwrap_or_default(), prev.unwrap_or_default());
        if let Some(from) = expect.from.as_deref().filter(|from| *from != cur) {
            let now = if cur.is_empty() { "none" } else { cur.as_str() };
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!("level {level} has promoted revision {now} now, not {from}; check it and repeat"),
            )
            .with("currentRevisionId", now));
        }
        rolled = ROLLBACK
            .call(store)
            .key(&promoted_key)
            .key(&history_key)
            .key(keys::rev_state(store, &cur))
            .key(keys::rev_state(store, &prev))
            .arg(&cur)
            .arg(&prev)
            .arg(expect.to.as_deref().unwrap_or(""))
            .run()
            .await?;
        if rolled != RolledBack::Moved {
            break;
        }
    }
    let (from, to) = match rolled {
        RolledBack::Ok { from, to } => (from, to),
        // No promoted revision: no public level by that name (a typo, or a level only in
        // the Labor), which the operator's docs answer 404, as every other unknown name.
        RolledBack::NothingPromoted => {
            return Err(ToolError::not_found(format!(
                "no level named {level} is promoted, so there is nothing to roll back; check the name (horst admin level list)"
            )))
        }
        RolledBack::NoHistory => {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!("level {level} has no earlier promoted revision to roll back to"),
            ))
        }
        RolledBack::Moved => {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!("level {level} kept changing while rolling back; try again"),
            ))
        }
        RolledBack::Expected(prev) => {
            let to = expect.to.as_deref().unwrap_or_default();
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!("rolling {level} back would bring back revision {prev}, not {to}; check it and repeat"),
            )
            .with("rollbackTo", prev.as_str()));
        }
    };
    Ok(Rollback {
        from,
        level: level.to_string(),
        to,
    })
}

/// Hides a revision everywhere (get_level, the Labor, board level threads); its evidence
/// stays for inspection. A promoted revision is rolled back first.
/// Returns the revision's level.
pub async fn quarantine(store: &Store, revision_id: &str) -> Result<String, ToolError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(keys::rev(store, revision_id))
        .arg(&["name", "owner"])
        .query_async(&mut store.conn())
        .await?;
    let (Some(name), Some(owner)) = (v.first().cloned().flatten(), v.get(1).cloned().flatten())
    else {
        return Err(ToolError::not_found(format!("no revision {revision_id}")));
    };
    let quarantined = QUARANTINE
        .call(store)
        .key(keys::level_promoted(store, &name))
        .key(keys::rev_state(store, revision_id))
        .key(keys::labor(store))
        .key(keys::owner_candidates(store, &owner))
        .key(keys::rev(store, revision_id))
        .key(keys::level_history(store, &name))
        .arg(revision_id)
        .run()
        .await?;
    match quarantined {
        Quarantined::Ok => Ok(name),
        Quarantined::Promoted => Err(ToolError::new(
            ErrorCode::Conflict,
            format!("revision {revision_id} is the promoted revision of {name}; roll the level back first"),
        )),
        Quarantined::Missing => Err(ToolError::not_found(format!("no revision {revision_id}"))),
    }
}
