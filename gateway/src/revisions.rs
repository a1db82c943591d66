//! Labor revisions in Redis.
//!
//! Layout (under the store prefix):
//! - `rev:<id>` hash, written once by a script that refuses an existing key, never changed:
//!   `revisionId`, `name`, `owner`, `seed`, `ticks`, `engineVersion`, `policyVersion`,
//!   `mapHash`, `createdAtMs`, `parentRevisionId`, `map`, `replay`, `acceptance`, `bytes`, `jobId`
//! - `rev:<id>:state` string: `labor`, `withdrawn` or `promoted` (the one mutable part)
//! - `level:<name lowercase>:owner`: the owner who claimed the name (SET NX; kept on withdraw)
//! - `level:<name lowercase>:promoted`: the promoted revision (written by promotion)
//! - `labor` sorted set: visible candidates by creation time
//! - `levels:promoted` set: names with a promoted revision (the game's level list)
//! - `owner:<account>:revs` sorted set: all revisions of an account
//! - `owner:<account>:candidates` set: its unpromoted, unwithdrawn revisions (the Labor cap)
//! - `storage:<account>`, `storage:total`: evidence bytes, withdrawn revisions included

use redis::AsyncCommands;
use serde_json::{json, Value};

use horst_store::Store;

use crate::error::{ErrorCode, ToolError};
use crate::keys;
use crate::scripts::{
    RevisionStored, StorageScope, StoreRevision, Withdrawn, REVISION_STORE, REVISION_WITHDRAW,
};
use crate::{random_hex, rfc3339};

pub const PAGE: usize = 25;

/// Names of the service itself: nobody claims them. The built-in levels' names are reserved
/// too, derived from the shipped files (`horst_levels::BUILTIN`), never listed by hand.
const SERVICE_NAMES: &[&str] = &["admin", "horst", "gcv", "labor", "official", "tutorial"];

/// Whether a level name is reserved (any case): a service name or a shipped level's.
pub fn is_reserved(name: &str) -> bool {
    SERVICE_NAMES.contains(&lower(name).as_str()) || horst_levels::is_builtin(name)
}

pub(crate) fn lower(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// What a submission wants to store.
pub struct NewRevision<'a> {
    pub owner: &'a str,
    pub name: &'a str,
    pub parent: Option<&'a str>,
    pub map: &'a str,
    /// The map's title (`public_levels::title_of`), stored so cards never parse the map.
    pub title: &'a str,
    pub replay: &'a Value,
    pub seed: u32,
    pub ticks: u64,
    pub map_hash: &'a str,
    pub engine_version: &'a str,
    pub policy_version: &'a str,
    pub acceptance: &'a Value,
    pub job_id: &'a str,
    /// How long the job's record is kept: the job's revision is answered for that long.
    pub job_retention_seconds: u64,
}

/// Budgets from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    pub labor_candidates: u32,
    pub account_bytes: u64,
    pub total_bytes: u64,
}

/// Bytes a revision's evidence counts: map, replay and acceptance report.
pub fn evidence_bytes(map: &str, replay: &Value, acceptance: &Value) -> u64 {
    let r = serde_json::to_vec(replay).map(|v| v.len()).unwrap_or(0);
    let a = serde_json::to_vec(acceptance).map(|v| v.len()).unwrap_or(0);
    (map.len() + r + a) as u64
}

/// The longest a submission's serialized acceptance report (`horst_queue::RefereeResult`
/// with its feasibility report) can be, in bytes: every field at its longest (a test builds
/// that report). The engine's and the policy's versions are 64-character hashes.
pub const ACCEPTANCE_MAX_BYTES: u64 = 2048;

/// The bytes a submission of `map` and `replay` will count as evidence at the most: its
/// acceptance report is not known before the check, so its bound is counted.
pub fn preflight_bytes(map: &str, replay: &Value) -> u64 {
    let r = serde_json::to_vec(replay).map(|v| v.len()).unwrap_or(0);
    (map.len() + r) as u64 + ACCEPTANCE_MAX_BYTES
}

/// Checks a submission before it costs anything: reserved or foreign name, parent, Labor cap
/// and storage. `store_revision` checks the same again atomically.
pub async fn preflight(
    store: &Store,
    owner: &str,
    name: &str,
    parent: Option<&str>,
    bytes: u64,
    budgets: Budgets,
) -> Result<(), ToolError> {
    if is_reserved(name) {
        return Err(ToolError::new(
            ErrorCode::Forbidden,
            format!("the name {name:?} is reserved; choose another"),
        ));
    }
    let mut conn = store.conn();
    let claimed: Option<String> = conn.get(keys::level_owner(store, name)).await?;
    if claimed.as_deref().is_some_and(|o| o != owner) {
        return Err(ToolError::new(
            ErrorCode::Forbidden,
            format!("the name {name:?} belongs to another account; choose another"),
        ));
    }
    if let Some(parent) = parent {
        let p: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(keys::rev(store, parent))
            .arg(&["owner", "name"])
            .query_async(&mut conn)
            .await?;
        check_parent(
            p.first().cloned().flatten(),
            p.get(1).cloned().flatten(),
            owner,
            name,
            parent,
        )?;
    }
    let cands: u64 = conn.scard(keys::owner_candidates(store, owner)).await?;
    if cands >= budgets.labor_candidates as u64 {
        return Err(labor_cap(budgets.labor_candidates));
    }
    let used: Option<u64> = conn.get(keys::storage(store, owner)).await?;
    if used.unwrap_or(0) + bytes > budgets.account_bytes {
        return Err(storage_quota("owner", budgets.account_bytes));
    }
    let total: Option<u64> = conn.get(keys::storage_total(store)).await?;
    if total.unwrap_or(0) + bytes > budgets.total_bytes {
        return Err(storage_quota("global", budgets.total_bytes));
    }
    Ok(())
}

fn check_parent(
    owner_of: Option<String>,
    name_of: Option<String>,
    owner: &str,
    name: &str,
    parent: &str,
) -> Result<(), ToolError> {
    match (owner_of, name_of) {
        (Some(o), Some(n)) if o == owner && n == name => Ok(()),
        // The same level written otherwise: a successor keeps the name as its parent
        // wrote it, so one level's revisions never show two names.
        (Some(o), Some(n)) if o == owner && lower(&n) == lower(name) => Err(ToolError::new(
            ErrorCode::ValidationFailed,
            format!("parentRevisionId {parent} is a revision of {n:?}, and a successor keeps its parent's name as it is written; submit it as {n:?}"),
        )
        .with("parentRevisionId", parent)
        .with("name", n)),
        (Some(_), Some(_)) => Err(parent_error(true, parent, name)),
        _ => Err(parent_error(false, parent, name)),
    }
}

fn parent_error(exists: bool, parent: &str, name: &str) -> ToolError {
    let message = if exists {
        format!("parentRevisionId {parent} is not one of your revisions of {name:?}; a successor needs the same owner and name")
    } else {
        format!("parentRevisionId {parent} does not exist")
    };
    ToolError::new(ErrorCode::ValidationFailed, message).with("parentRevisionId", parent)
}

fn labor_cap(cap: u32) -> ToolError {
    ToolError::new(
ErrorCode::Quota,
        format!("you hold {cap} Labor candidates, the limit of your trust tier; withdraw one (withdraw_level) or wait for a promotion"),
    )
    .with("scope", "owner")
    .with("limit", "labor_candidates")
    .with("retryAfterSeconds", 3600)
}

fn storage_quota(scope: &str, budget: u64) -> ToolError {
    ToolError::new(
        ErrorCode::Quota,
        format!("the storage budget ({budget} bytes, withdrawn revisions included) is used up; it does not refill by itself: ask the operator to make room with contact_admin (category question)"),
    )
    .with("scope", scope)
    .with("limit", "storage")
    .with("retryAfterSeconds", 86_400)
}

/// Stores a winning submission as an immutable Labor revision; returns its id and creation
/// time.
pub async fn store_revision(
    store: &Store,
    rev: &NewRevision<'_>,
    budgets: Budgets,
) -> Result<(String, u64), ToolError> {
    let ms = crate::redis_now_ms(store).await?;
    let id = format!("rev-{ms:x}-{}", random_hex(4).map_err(ToolError::internal)?);
    let bytes = evidence_bytes(rev.map, rev.replay, rev.acceptance);
    let parent = rev.parent.unwrap_or("");
    let stored = REVISION_STORE
        .run(
            store,
            &StoreRevision {
                store,
                id: &id,
                rev,
                budgets,
                bytes,
            },
        )
        .await?;
    match stored {
        RevisionStored::Ok { now_ms } => Ok((id, now_ms)),
        RevisionStored::Earlier { id } => Ok((id, ms)),
        RevisionStored::NameTaken => Err(ToolError::new(
            ErrorCode::Forbidden,
            format!("the name {:?} belongs to another account", rev.name),
        )),
        RevisionStored::ParentMissing => Err(parent_error(false, parent, rev.name)),
        RevisionStored::ParentForeign => Err(parent_error(true, parent, rev.name)),
        RevisionStored::LaborCap => Err(labor_cap(budgets.labor_candidates)),
        RevisionStored::Storage(StorageScope::Owner) => {
            Err(storage_quota("owner", budgets.account_bytes))
        }
        RevisionStored::Storage(StorageScope::Global) => {
            Err(storage_quota("global", budgets.total_bytes))
        }
        RevisionStored::IdTaken => Err(ToolError::internal(format!(
            "store_revision: revision id {id} is taken"
        ))),
    }
}

async fn state_of(store: &Store, id: &str) -> Result<Option<String>, ToolError> {
    Ok(store.conn().get(keys::rev_state(store, id)).await?)
}

/// The full revision as `get_level` returns it, if it exists (any state).
async fn load(store: &Store, id: &str) -> Result<Option<Value>, ToolError> {
    let fields = [
        "revisionId",
        "name",
        "owner",
        "seed",
        "engineVersion",
        "mapHash",
        "createdAtMs",
        "parentRevisionId",
        "map",
        "acceptance",
    ];
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(keys::rev(store, id))
        .arg(&fields)
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten();
    let Some(rev_id) = get(0) else {
        return Ok(None);
    };
    let state = state_of(store, id).await?.unwrap_or_else(|| "labor".into());
    // The submission's feasibility report (null for revisions stored before it existed).
    let feasibility = get(9)
        .and_then(|a| serde_json::from_str::<Value>(&a).ok())
        .and_then(|a| a.get("feasibility").cloned())
        .unwrap_or(Value::Null);
    Ok(Some(json!({
        "revisionId": rev_id,
        "name": get(1),
        "owner": get(2),
        "state": state,
        "seed": get(3).and_then(|s| s.parse::<u64>().ok()),
        "engineVersion": get(4),
        "mapHash": get(5),
        "createdAt": rfc3339(get(6).and_then(|s| s.parse().ok()).unwrap_or(0)),
        "parentRevisionId": get(7).filter(|p| !p.is_empty()),
        "map": get(8),
        "feasibility": feasibility,
    })))
}

/// `get_level`: by name the promoted revision, or the exact `revision_id`. Withdrawn
/// revisions are hidden from everyone but their owner.
pub async fn get_level(
    store: &Store,
    name: Option<&str>,
    revision_id: Option<&str>,
    caller: Option<&str>,
) -> Result<Value, ToolError> {
    let id = match revision_id {
        Some(id) => id.to_string(),
        None => {
            let name = name.unwrap_or_default();
            let promoted: Option<String> =
                store.conn().get(keys::level_promoted(store, name)).await?;
            match promoted {
                Some(id) => id,
                None => {
                    let claimed: bool = store.conn().exists(keys::level_owner(store, name)).await?;
                    return Err(ToolError::not_found(if claimed {
                        format!("level {name:?} has no promoted revision yet; read its Labor candidates by their revisionId (list_labor lists them)")
                    } else {
                        format!("no level is named {name:?}; list_labor lists the Labor candidates, and get_level with a revisionId reads one")
                    }));
                }
            }
        }
    };
    let missing = || {
        ToolError::not_found(format!(
            "no readable revision {id}: it does not exist, or it was withdrawn or hidden; list_labor and my_submissions show the revision ids you may read"
        ))
    };
    let level = load(store, &id).await?.ok_or_else(missing)?;
    // A quarantined revision is hidden from everyone, its owner included; so is every
    // revision of a blocked account. Checked before the name, so a hidden revision's name
    // stays hidden.
    if level["state"] == "quarantined"
        || level["state"] == "withdrawn" && level["owner"].as_str() != caller
        || owner_blocked(store, level["owner"].as_str().unwrap_or_default()).await?
    {
        return Err(missing());
    }
    if let (Some(name), Some(_)) = (name, revision_id) {
        let actual = level["name"].as_str().unwrap_or_default();
        if lower(actual) != lower(name) {
            return Err(ToolError::not_found(format!(
                "revision {id} is a revision of level {actual:?}, not {name:?}; send revisionId alone, or with the name {actual:?}"
            ))
            .with("name", actual));
        }
    }
    Ok(level)
}

async fn summaries(
    store: &Store,
    ids: &[String],
    with_state: bool,
) -> Result<Vec<Value>, ToolError> {
    let mut items = Vec::with_capacity(ids.len());
    for id in ids {
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(keys::rev(store, id))
            .arg(&[
                "name",
                "owner",
                "seed",
                "engineVersion",
                "createdAtMs",
                "mapHash",
                "parentRevisionId",
            ])
            .query_async(&mut store.conn())
            .await?;
        let get = |i: usize| v.get(i).cloned().flatten();
        let created = rfc3339(get(4).and_then(|s| s.parse().ok()).unwrap_or(0));
        if with_state {
            let state = state_of(store, id).await?.unwrap_or_else(|| "labor".into());
            // The newest check: an operator's recheck when there was one (it may have
            // failed on a newer engine), else the submission's own, which won.
            let recheck: Option<String> =
                store.conn().lindex(keys::rev_checks(store, id), -1).await?;
            let recheck = recheck.and_then(|r| serde_json::from_str::<Value>(&r).ok());
            let (outcome, engine) = match &recheck {
                Some(c) => (
                    c["outcome"].as_str().unwrap_or("unknown").to_string(),
                    c["engineVersion"].as_str().unwrap_or_default().to_string(),
                ),
                None => ("won".to_string(), get(3).unwrap_or_default()),
            };
            items.push(json!({
                "revisionId": id, "name": get(0), "state": state, "createdAt": created,
                "mapHash": get(5), "parentRevisionId": get(6).filter(|p| !p.is_empty()),
                "latestCheck": {
                    "outcome": outcome,
                    "currentEngine": engine == horst_engine::engine_version(),
                    "engineVersion": engine,
                },
            }));
        } else {
            if owner_blocked(store, get(1).as_deref().unwrap_or_default()).await? {
                continue;
            }
            items.push(json!({
                "revisionId": id, "name": get(0), "owner": get(1),
                "seed": get(2).and_then(|s| s.parse::<u64>().ok()), "engineVersion": get(3),
                "createdAt": created, "mapHash": get(5),
            }));
        }
    }
    Ok(items)
}

async fn page(
    store: &Store,
    key: &str,
    offset: usize,
    with_state: bool,
) -> Result<(Vec<Value>, Option<usize>), ToolError> {
    let mut conn = store.conn();
    let total: usize = conn.zcard(key).await?;
    let ids: Vec<String> = conn
        .zrevrange(
            key,
            offset.min(isize::MAX as usize) as isize,
            offset.saturating_add(PAGE).min(isize::MAX as usize) as isize - 1,
        )
        .await?;
    let next = (offset.saturating_add(PAGE) < total).then_some(offset + PAGE);
    Ok((summaries(store, &ids, with_state).await?, next))
}

/// Evidence bytes stored for the whole server (withdrawn revisions included).
pub async fn storage_total(store: &Store) -> Result<u64, ToolError> {
    let total: Option<u64> = store.conn().get(keys::storage_total(store)).await?;
    Ok(total.unwrap_or(0))
}

/// Whether `owner`'s account is blocked (its revisions are then hidden everywhere).
pub(crate) async fn owner_blocked(store: &Store, owner: &str) -> Result<bool, ToolError> {
    let blocked: Option<String> = store
        .conn()
        .hget(keys::account(store, owner), "blocked")
        .await?;
    Ok(blocked.as_deref() == Some("1"))
}

/// `list_labor`: candidates newest first, 25 per page. Candidates of blocked accounts are
/// left out (a page can be short); unblocking brings them back.
pub async fn list_labor(store: &Store, offset: usize) -> Result<Value, ToolError> {
    let (items, next) = page(store, &keys::labor(store), offset, false).await?;
    let mut visible = Vec::with_capacity(items.len());
    for item in items {
        if !owner_blocked(store, item["owner"].as_str().unwrap_or_default()).await? {
            visible.push(item);
        }
    }
    Ok(json!({ "items": visible, "nextOffset": next }))
}

/// `my_submissions`: the caller's revisions, newest first.
pub async fn my_submissions(
    store: &Store,
    owner: &str,
    offset: usize,
) -> Result<(Vec<Value>, Option<usize>), ToolError> {
    page(store, &keys::owner_revs(store, owner), offset, true).await
}

/// The state of a revision, for `get_submission`.
pub async fn revision_state(store: &Store, id: &str) -> Result<Option<String>, ToolError> {
    state_of(store, id).await
}

/// `withdraw_level`: hides the revision; evidence, storage charge and name claim stay.
pub async fn withdraw(store: &Store, owner: &str, id: &str) -> Result<Value, ToolError> {
    let (v, state): (Vec<Option<String>>, Option<String>) = redis::pipe()
        .cmd("HMGET")
        .arg(keys::rev(store, id))
        .arg(&["owner", "name"])
        .cmd("GET")
        .arg(keys::rev_state(store, id))
        .query_async(&mut store.conn())
        .await?;
    let hidden = || {
        ToolError::not_found(format!(
            "no revision {id} you can withdraw: it does not exist or it is hidden; my_submissions lists your revisions"
        ))
    };
    let (Some(rev_owner), Some(name)) = (v.first().cloned().flatten(), v.get(1).cloned().flatten())
    else {
        return Err(hidden());
    };
    // The owner's my_submissions lists a quarantined revision with its state, so the owner
    // is told that, not "does not exist or it is hidden; my_submissions lists your
    // revisions", which sent them back to the list that showed it. Anyone else learns
    // nothing (the script checks again, atomically).
    let quarantined = || {
        ToolError::not_found(format!(
            "revision {id} was quarantined by the operator: it is hidden from everyone already and cannot be withdrawn; ask the operator with contact_admin if you think that is a mistake"
        ))
    };
    if state.as_deref() == Some("quarantined") {
        return Err(if rev_owner == owner {
            quarantined()
        } else {
            hidden()
        });
    }
    if rev_owner != owner {
        return Err(ToolError::new(
            ErrorCode::Forbidden,
            format!("revision {id} belongs to another account"),
        ));
    }
    let withdrawn = REVISION_WITHDRAW
        .call(store)
        .key(keys::rev_state(store, id))
        .key(keys::labor(store))
        .key(keys::owner_candidates(store, owner))
        .key(keys::level_history(store, &name))
        .arg(id)
        .run()
        .await?;
    match withdrawn {
        Withdrawn::Promoted => {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!("revision {id} is promoted; the operator rolls promoted revisions back"),
            ))
        }
        // Quarantined meanwhile (the caller is its owner: checked above).
        Withdrawn::Quarantined => return Err(quarantined()),
        Withdrawn::Ok => {}
    }
    Ok(json!({
        "revisionId": id, "name": name, "state": "withdrawn", "evidenceRetained": true,
        "storageReclaimed": false, "nameReserved": true,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_engine::{DeathReport, EntityKind, EntityRef, Position};
    use horst_feasibility::{Feasibility, InputWindow, Verdict, HINT_MAX_BYTES, MAX_LISTED};
    use horst_queue::{Outcome, RefereeResult};

    /// The largest acceptance report there can be fits [`ACCEPTANCE_MAX_BYTES`]: each field
    /// at the longest its type writes (numbers at their extremes, the longest word of each
    /// closed set, a hint of [`HINT_MAX_BYTES`], every listed exact input, a death and a
    /// warning a won report never has), the hashes and versions at their fixed length.
    #[test]
    fn the_largest_acceptance_report_fits_its_bound() {
        let longest_entity = EntityKind::ALL
            .iter()
            .map(|k| k.def().name)
            .max_by_key(|n| n.len())
            .unwrap_or_default();
        let feasibility = Feasibility {
            verdict: Verdict::FramePerfect,
            hint: "x".repeat(HINT_MAX_BYTES),
            tightest: Some(InputWindow {
                step: u32::MAX,
                tick: u32::MAX,
                from_action: u8::MAX,
                action: u8::MAX,
                early: u32::MAX,
                late: u32::MAX,
                window: u32::MAX,
            }),
            exact_inputs: u32::MAX,
            exact_input_ticks: vec![u32::MAX; MAX_LISTED],
            inputs: u32::MAX,
            inputs_checked: u32::MAX,
            longest_wait_ticks: u32::MAX,
            egg_boosts: u32::MAX,
            stomps: u32::MAX,
            shots: u32::MAX,
            max_shift_ticks: u32::MAX,
            complete: false,
            work_ticks: u64::MAX,
        };
        let warnings = horst_feasibility::warnings(Some(&feasibility));
        assert_eq!(warnings.len(), 1, "a report raises one warning at most");
        let report = RefereeResult {
            outcome: Outcome::Unresolved,
            won: false,
            dead: false,
            ticks: u32::MAX,
            position: serde_json::to_value(Position {
                x: i32::MIN,
                y: i32::MIN,
                sub_x: i32::MIN,
                sub_y: i32::MIN,
            })
            .unwrap(),
            death_tick: Some(u32::MAX),
            death_cause: Some(
                serde_json::to_value(DeathReport {
                    // The longest of `spikes`, `enemy`, `rock`, `fell_out`, `crushed`.
                    cause: "fell_out",
                    x: i32::MIN,
                    y: i32::MIN,
                    entity: Some(EntityRef {
                        kind: longest_entity,
                        x: i32::MIN,
                        y: i32::MIN,
                    }),
                })
                .unwrap(),
            ),
            state_hash: "f".repeat(64),
            map_hash: "f".repeat(64),
            feasibility: Some(serde_json::to_value(&feasibility).unwrap()),
            warnings: warnings
                .iter()
                .map(|w| serde_json::to_value(w).unwrap())
                .collect(),
            engine_version: horst_engine::engine_version().to_string(),
            policy_version: horst_engine::POLICY_VERSION.to_string(),
        };
        // As the store counts it (store_submission, evidence_bytes).
        let acceptance = serde_json::to_value(&report).unwrap();
        let bytes = evidence_bytes("", &Value::Null, &acceptance) - 4;
        assert!(bytes <= ACCEPTANCE_MAX_BYTES, "{bytes}");
        assert!(
            bytes + 64 > ACCEPTANCE_MAX_BYTES,
            "a bound far above {bytes}"
        );
        assert_eq!(
            preflight_bytes("map", &json!({"seed": 1})),
            3 + 10 + ACCEPTANCE_MAX_BYTES
        );
    }
}
