//! The operator's controls (`horst admin ...`): promotion, rollback and quarantine of Labor
//! revisions (rechecks live in `checks`), account blocks and trust, board moderation and
//! publishing, quota reloads, the inbox and an overview. Every change is audited.
//!
//! Layout (under the store prefix), besides what `revisions`, `board` and `contact` own:
//! - `audit` list: JSON entries `{at, who, action, target, detail}`, newest first
//! - `level:<name lowercase>:history` list: previously promoted revisions, newest first
//!   (rollback pops it)
//!
//! Errors are [`ToolError`]s: one error type with stable codes (`conflict` is HTTP 409 for
//! the admin API).

use std::collections::BTreeMap;

use redis::AsyncCommands;
use serde_json::{json, Value};

use horst_store::InvokeDurably;
use horst_store::Store;

use crate::accounts::{redis_now_ms, rfc3339};
use crate::board;
use crate::contact;
use crate::error::{ErrorCode, ToolError};
use crate::scripts::{Promoted, Quarantined, RolledBack, PROMOTE, QUARANTINE, ROLLBACK};

/// The audit trail keeps this many entries.
const AUDIT_KEEP: isize = 10_000;

/// Appends one audit entry: who did what to which target, when (Redis clock).
pub async fn audit(
    store: &Store,
    who: &str,
    action: &str,
    target: &str,
    detail: Value,
) -> Result<(), ToolError> {
    let now = redis_now_ms(store).await?;
    let entry = json!({
        "at": rfc3339(now), "who": who, "action": action, "target": target, "detail": detail,
    });
    let _: () = redis::pipe()
        .atomic()
        .lpush(store.key("audit"), entry.to_string())
        .ignore()
        .ltrim(store.key("audit"), 0, AUDIT_KEEP - 1)
        .ignore()
        .query_async(&mut store.conn())
        .await?;
    Ok(())
}

pub async fn audit_log(store: &Store, limit: usize) -> Result<Vec<Value>, ToolError> {
    let raw: Vec<String> = store
        .conn()
        .lrange(store.key("audit"), 0, limit.max(1) as isize - 1)
        .await?;
    Ok(raw
        .iter()
        .filter_map(|r| serde_json::from_str(r).ok())
        .collect())
}

/// Promotes exactly `revision_id`, if its newest check on the current engine passed and the
/// currently promoted revision of its level is `expected_current` (`None`: no promoted
/// revision yet); a stale expectation is a `conflict` (409).
pub async fn promote(
    store: &Store,
    who: &str,
    revision_id: &str,
    expected_current: Option<&str>,
) -> Result<Value, ToolError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(store.key(&format!("rev:{revision_id}")))
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
    let promoted: Promoted = PROMOTE
        .key(store.key(&format!("level:{lower}:promoted")))
        .key(store.key(&format!("rev:{revision_id}:state")))
        .key(store.key("labor"))
        .key(store.key(&format!("owner:{owner}:candidates")))
        .key(store.key(&format!("level:{lower}:history")))
        .key(store.key(&format!(
            "rev:{}:state",
            expected_current.unwrap_or_default()
        )))
        .arg(revision_id)
        .arg(expected_current.unwrap_or_default())
        .invoke_durably(store)
        .await?;
    if let Promoted::Stale(cur) = &promoted {
        let cur = if cur.is_empty() { "none" } else { cur };
        return Err(ToolError::new(
ErrorCode::Conflict,
            format!(
                "level {name} currently has promoted revision {cur}, not {}; check it and repeat with --expect {cur}",
                expected_current.unwrap_or("none")
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
    audit(
        store,
        who,
        "promote",
        revision_id,
        json!({ "level": name, "previous": expected_current }),
    )
    .await?;
    Ok(json!({ "level": name, "revisionId": revision_id, "previous": expected_current }))
}

/// Restores the previously promoted revision of `level`.
pub async fn rollback(store: &Store, who: &str, level: &str) -> Result<Value, ToolError> {
    let lower = level.to_ascii_lowercase();
    let promoted_key = store.key(&format!("level:{lower}:promoted"));
    let history_key = store.key(&format!("level:{lower}:history"));
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
        rolled = ROLLBACK
            .key(&promoted_key)
            .key(&history_key)
            .key(store.key(&format!("rev:{cur}:state")))
            .key(store.key(&format!("rev:{prev}:state")))
            .arg(&cur)
            .arg(&prev)
            .invoke_durably(store)
            .await?;
        if rolled != RolledBack::Moved {
            break;
        }
    }
    let (from, to) = match rolled {
        RolledBack::Ok { from, to } => (from, to),
        RolledBack::NothingPromoted | RolledBack::NoHistory => {
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
    };
    audit(
        store,
        who,
        "rollback",
        level,
        json!({ "from": from, "to": to }),
    )
    .await?;
    Ok(json!({ "level": level, "from": from, "to": to }))
}

/// Hides a revision everywhere (get_level, the Labor, board level threads); its evidence
/// stays for inspection. A promoted revision is rolled back first.
pub async fn quarantine(store: &Store, who: &str, revision_id: &str) -> Result<(), ToolError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(store.key(&format!("rev:{revision_id}")))
        .arg(&["name", "owner"])
        .query_async(&mut store.conn())
        .await?;
    let (Some(name), Some(owner)) = (v.first().cloned().flatten(), v.get(1).cloned().flatten())
    else {
        return Err(ToolError::not_found(format!("no revision {revision_id}")));
    };
    let quarantined: Quarantined = QUARANTINE
        .key(store.key(&format!("level:{}:promoted", name.to_ascii_lowercase())))
        .key(store.key(&format!("rev:{revision_id}:state")))
        .key(store.key("labor"))
        .key(store.key(&format!("owner:{owner}:candidates")))
        .key(store.key(&format!("rev:{revision_id}")))
        .arg(revision_id)
        .invoke_durably(store)
        .await?;
    match quarantined {
        Quarantined::Ok => {
            audit(store, who, "quarantine", revision_id, json!({ "level": name })).await
        }
        Quarantined::Promoted => Err(ToolError::new(
            ErrorCode::Conflict,
            format!("revision {revision_id} is the promoted revision of {name}; roll the level back first"),
        )),
        Quarantined::Missing => Err(ToolError::not_found(format!("no revision {revision_id}"))),
    }
}

async fn set_account(
    store: &Store,
    who: &str,
    action: &str,
    name: &str,
    field: &str,
    value: &str,
) -> Result<(), ToolError> {
    crate::accounts::set_account_field(store, name, field, value)
        .await
        .map_err(|e| match e {
            crate::AccountError::NotFound(m) => ToolError::not_found(m),
            other => ToolError::internal(other),
        })?;
    audit(store, who, action, name, json!({ field: value })).await
}

/// Blocks or unblocks an account: a blocked account's keys get 403 and its board posts vanish.
pub async fn set_blocked(
    store: &Store,
    who: &str,
    name: &str,
    blocked: bool,
) -> Result<(), ToolError> {
    let (action, value) = if blocked {
        ("block", "1")
    } else {
        ("unblock", "0")
    };
    set_account(store, who, action, name, "blocked", value).await
}

pub async fn set_trust(store: &Store, who: &str, name: &str, trust: u8) -> Result<(), ToolError> {
    if trust > 2 {
        return Err(ToolError::invalid("trust must be 0, 1 or 2"));
    }
    set_account(store, who, "trust", name, "trust", &trust.to_string()).await
}

pub async fn hide_post(
    store: &Store,
    who: &str,
    post_id: &str,
    hidden: bool,
) -> Result<(), ToolError> {
    let thread = board::set_post_hidden(store, post_id, hidden).await?;
    let action = if hidden { "hide_post" } else { "unhide_post" };
    audit(store, who, action, post_id, json!({ "threadId": thread })).await
}

pub async fn thread_status(
    store: &Store,
    who: &str,
    thread_id: &str,
    status: &str,
) -> Result<(), ToolError> {
    board::set_thread_status(store, thread_id, status).await?;
    audit(
        store,
        who,
        "thread_status",
        thread_id,
        json!({ "status": status }),
    )
    .await
}

/// Replies on a thread as the operator (`authorKind: operator`, no daily limits).
pub async fn reply(
    store: &Store,
    who: &str,
    thread_id: &str,
    body: &str,
) -> Result<Value, ToolError> {
    let body = board::clean_body("body", body, board::BODY_MAX_CHARS)?;
    // Agents see the operator's name, not how the action arrived (`api:` in the audit).
    let author = match who.strip_prefix("api:") {
        Some(name) => name,
        None if who == "api" => "operator",
        None => who,
    };
    let v = board::write_post(
        store,
        board::Writer::Operator(author),
        Some(thread_id),
        None,
        &body,
    )
    .await?;
    audit(
        store,
        who,
        "reply",
        thread_id,
        json!({ "postId": v["postId"] }),
    )
    .await?;
    Ok(v)
}

/// Publishes a thread on the public board (anonymous `GET /api/board/published`), or takes it
/// off again.
pub async fn publish_thread(
    store: &Store,
    who: &str,
    thread_id: &str,
    published: bool,
) -> Result<(), ToolError> {
    board::set_published(store, thread_id, published).await?;
    let action = if published { "publish" } else { "unpublish" };
    audit(store, who, action, thread_id, Value::Null).await
}

/// Re-reads nothing itself: writes `values` (the configuration as the caller loaded it now)
/// as the quota numbers every process uses from its next second on. Returns what is stored.
pub async fn reload_quotas(
    store: &Store,
    who: &str,
    values: &horst_queue::Quotas,
) -> Result<Value, ToolError> {
    let before = horst_queue::read_quotas(store).await?;
    horst_queue::write_quotas(store, values, who).await?;
    let changed = before.as_ref().map(|b| &b.values) != Some(values);
    audit(
        store,
        who,
        "quotas_reload",
        "quotas",
        json!({ "changed": changed, "values": values }),
    )
    .await?;
    show_quotas(store, None).await
}

/// The quota numbers in force: the stored ones, else (`fallback`, a process's own
/// configuration) what a process without stored values uses.
pub async fn show_quotas(
    store: &Store,
    fallback: Option<&horst_queue::Quotas>,
) -> Result<Value, ToolError> {
    Ok(match horst_queue::read_quotas(store).await? {
        Some(s) => json!({
            "source": "stored",
            "writtenBy": s.written_by,
            "writtenAt": rfc3339(s.written_at_ms),
            "values": s.values,
        }),
        None => json!({
            "source": "configuration",
            "values": fallback,
        }),
    })
}

pub async fn mark_read(store: &Store, who: &str, message_id: &str) -> Result<(), ToolError> {
    contact::mark_read(store, message_id).await?;
    audit(store, who, "mark_read", message_id, Value::Null).await
}

/// Accounts by tier (blocked apart), board reads and unread messages.
pub async fn overview(store: &Store) -> Result<Value, ToolError> {
    let pattern = store.key("account:*");
    let mut keys: Vec<String> = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(500)
            .query_async(&mut store.conn())
            .await?;
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    let mut tiers: BTreeMap<String, u64> = BTreeMap::new();
    let mut blocked = 0u64;
    for k in keys
        .iter()
        .filter(|k| k.matches(':').count() == pattern.matches(':').count())
    {
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(k)
            .arg(&["trust", "blocked"])
            .query_async(&mut store.conn())
            .await?;
        if v.get(1).cloned().flatten().as_deref() == Some("1") {
            blocked += 1;
        } else {
            let t = v.first().cloned().flatten().unwrap_or_else(|| "0".into());
            *tiers.entry(format!("trust{t}")).or_default() += 1;
        }
    }
    let (total, today, last) = board::read_stats(store).await?;
    let now = redis_now_ms(store).await?;
    let jobs = horst_queue::day_stats(store, now)
        .await
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(json!({
        "jobsToday": { "admitted": jobs.admitted, "finished": jobs.finished },
        "secondsUsedToday": jobs.seconds_used,
        "secondsChargedToday": jobs.seconds_charged,
        "storageUsedBytes": crate::revisions::storage_total(store).await?,
        "accounts": {
            "trust0": tiers.get("trust0").copied().unwrap_or(0),
            "trust1": tiers.get("trust1").copied().unwrap_or(0),
            "trust2": tiers.get("trust2").copied().unwrap_or(0),
            "blocked": blocked,
        },
        "boardReads": { "total": total, "today": today, "last": last },
        "unreadMessages": contact::unread_count(store).await?,
    }))
}
