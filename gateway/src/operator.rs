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
use serde::{Deserialize, Serialize};
use serde_json::Value;

use horst_identity::auth::Auth;
use horst_store::InvokeDurably;
use horst_store::Store;

use crate::board;
use crate::contact;
use crate::error::{ErrorCode, ToolError};
use crate::scripts::{Promoted, Quarantined, RolledBack, PROMOTE, QUARANTINE, ROLLBACK};
use crate::{redis_now_ms, rfc3339};

/// The audit trail keeps this many entries.
const AUDIT_KEEP: isize = 10_000;

/// Declares the operator actions: the enum, its names in the audit trail, and the list of
/// all of them (which the audit test walks, so an action cannot be added without a test that
/// it is audited).
macro_rules! operator_actions {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal,)*) => {
        /// Every change an operator can make, whichever way it arrives (`horst admin`, the REST
        /// admin API, the `/admin` page). [`audit`] takes one, so nothing is audited under a
        /// name that is not here.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            /// The name in the audit trail's `action` field.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                }
            }
        }
    };
}

operator_actions! {
    Promote => "promote",
    Rollback => "rollback",
    Quarantine => "quarantine",
    /// A recheck job queued (its verdict is recorded by whoever first sees it finish).
    Recheck => "recheck",
    Block => "block",
    Unblock => "unblock",
    Trust => "trust",
    HidePost => "hide_post",
    UnhidePost => "unhide_post",
    ThreadStatus => "thread_status",
    Reply => "reply",
    Publish => "publish",
    Unpublish => "unpublish",
    QuotasReload => "quotas_reload",
    MarkRead => "mark_read",
    /// The gateway switch: on, off, read-only.
    GatewayMode => "gateway_mode",
    /// Self-service agent keys on or off.
    SelfService => "self_service",
    /// Sign-up on /account open or closed.
    SignUp => "sign_up",
    /// An account made by the operator (no password).
    AccountCreate => "account_create",
    /// The operator role given to or taken from a person.
    OperatorRole => "operator_role",
    /// An agent key made by the operator for an account.
    KeyCreate => "key_create",
    KeyRevoke => "key_revoke",
    /// An RCADIA agent token.
    TokenCreate => "token_create",
    /// An RCADIA agent token's burst limit set or removed.
    TokenLimit => "token_limit",
    TokenRevoke => "token_revoke",
    /// A person's account with a password (or a password for an operator-made account).
    UserCreate => "user_create",
    UserPasswd => "user_passwd",
    UserDelete => "user_delete",
    AdminTokenCreate => "admin_token_create",
    AdminTokenRetire => "admin_token_retire",
    /// A shipped level published as a promoted revision of `gcv` (by a starting API: who is
    /// `start`).
    PublishBuiltin => "publish_builtin",
    /// A queued or running evaluation job cancelled (`job_control::cancel_job`).
    JobCancel => "job_cancel",
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// RFC 3339, the Redis server's clock.
    pub at: String,
    /// `olga` (CLI: `HORST_OPERATOR` or the login name), `api:olga` or `api` (REST, from
    /// `X-Operator`), `page:olga` (the /admin page: the person, or the name given at an
    /// admin-token sign-in).
    pub who: String,
    pub action: String,
    pub target: String,
    pub detail: Value,
}

/// What an audit entry's `detail` says, per kind of change. Written as a JSON object (or
/// `null` for [`Detail::None`]) and read back as plain JSON ([`AuditEntry::detail`]), since
/// the trail holds entries of every earlier version too.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub enum Detail<'a> {
    None,
    /// Promote: the level and the revision it replaced.
    Promoted {
        level: &'a str,
        previous: Option<&'a str>,
    },
    /// Rollback: from which revision to which.
    RolledBack {
        from: &'a str,
        to: &'a str,
    },
    /// Quarantine: the revision's level.
    Level {
        level: &'a str,
    },
    /// Block and unblock (`"1"`/`"0"`, the stored field).
    Blocked {
        blocked: &'a str,
    },
    /// Trust as set on an existing account (the stored field, text).
    TrustField {
        trust: &'a str,
    },
    /// Trust of a new account or person (a number).
    Trust {
        trust: u8,
    },
    /// Hide or unhide a post: its thread.
    Thread {
        thread_id: &'a str,
    },
    ThreadStatus {
        status: &'a str,
    },
    /// An operator reply: the new post.
    Post {
        post_id: &'a str,
    },
    QuotasReload {
        changed: bool,
        values: &'a horst_queue::Quotas,
    },
    GatewayMode {
        mode: &'a str,
    },
    SelfService {
        on: bool,
    },
    SignUp {
        open: bool,
    },
    OperatorRole {
        operator: bool,
    },
    KeyCreate {
        account: &'a str,
        id: &'a str,
    },
    KeyRevoke {
        account: &'a str,
    },
    TokenCreate {
        house: bool,
        name: Option<&'a str>,
        scopes: &'a [String],
    },
    TokenRevoke {
        name: Option<&'a str>,
        scopes: &'a [&'static str],
    },
    /// `None`: the limit was removed.
    TokenLimit {
        per_minute: Option<u32>,
    },
    UserDelete {
        keys_revoked: &'a [String],
    },
    AdminTokenCreate {
        label: &'a str,
    },
    /// A recheck queued: its job and the engine it runs on.
    Recheck {
        engine_version: &'a str,
        job_id: &'a str,
    },
    /// A job cancelled: the operator's reason and whether it was queued or running.
    JobCancel {
        reason: &'a str,
        was: &'a str,
    },
    /// A shipped level published (`detail`: the script's note, if any).
    PublishBuiltin {
        detail: Option<&'a str>,
        level: &'a str,
    },
}

/// Appends one audit entry: who did what to which target, when (Redis clock).
pub async fn audit(
    store: &Store,
    who: &str,
    action: Action,
    target: &str,
    detail: Detail<'_>,
) -> Result<(), ToolError> {
    let now = redis_now_ms(store).await?;
    let entry = AuditEntry {
        at: rfc3339(now),
        who: who.to_string(),
        action: action.as_str().to_string(),
        target: target.to_string(),
        // Through a `Value`, so the stored keys stay sorted as they always were.
        detail: serde_json::to_value(detail).map_err(ToolError::internal)?,
    };
    let line = serde_json::to_string(&entry).map_err(ToolError::internal)?;
    let _: () = redis::pipe()
        .atomic()
        .lpush(store.key("audit"), line)
        .ignore()
        .ltrim(store.key("audit"), 0, AUDIT_KEEP - 1)
        .ignore()
        .query_async(&mut store.conn())
        .await?;
    Ok(())
}

/// The newest `limit` entries after skipping `offset`, newest first.
pub async fn audit_log(
    store: &Store,
    offset: usize,
    limit: usize,
) -> Result<Vec<AuditEntry>, ToolError> {
    let start = offset.min(AUDIT_KEEP as usize) as isize;
    let raw: Vec<String> = store
        .conn()
        .lrange(
            store.key("audit"),
            start,
            start + limit.clamp(1, AUDIT_KEEP as usize) as isize - 1,
        )
        .await?;
    Ok(raw
        .iter()
        .filter_map(|r| serde_json::from_str(r).ok())
        .collect())
}

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

display_as_json!(Promotion, Rollback, Overview);

// The result types below declare their fields in the byte order of their JSON names: they
// replaced `json!` objects, whose keys `serde_json` sorts, so the bytes stay the same.

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
    who: &str,
    revision_id: &str,
    expected_current: Option<&str>,
) -> Result<Promotion, ToolError> {
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
        .key(store.key(crate::revisions::PROMOTED_NAMES))
        .arg(revision_id)
        .arg(expected_current.unwrap_or_default())
        .arg(&lower)
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
        Action::Promote,
        revision_id,
        Detail::Promoted {
            level: &name,
            previous: expected_current,
        },
    )
    .await?;
    Ok(Promotion {
        level: name,
        previous: expected_current.map(str::to_string),
        revision_id: revision_id.to_string(),
    })
}

/// Restores the previously promoted revision of `level`.
pub async fn rollback(store: &Store, who: &str, level: &str) -> Result<Rollback, ToolError> {
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
        Action::Rollback,
        level,
        Detail::RolledBack {
            from: &from,
            to: &to,
        },
    )
    .await?;
    Ok(Rollback {
        from,
        level: level.to_string(),
        to,
    })
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
            audit(store, who, Action::Quarantine, revision_id, Detail::Level { level: &name }).await
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
    action: Action,
    name: &str,
    field: &str,
    value: &str,
    detail: Detail<'_>,
) -> Result<(), ToolError> {
    horst_identity::accounts::set_account_field(store, name, field, value)
        .await
        .map_err(ToolError::from)?;
    audit(store, who, action, name, detail).await
}

/// Blocks or unblocks an account: a blocked account's keys get 403 and its board posts vanish.
pub async fn set_blocked(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
    blocked: bool,
) -> Result<(), ToolError> {
    let (action, value) = if blocked {
        (Action::Block, "1")
    } else {
        (Action::Unblock, "0")
    };
    let detail = Detail::Blocked { blocked: value };
    set_account(store, who, action, name, "blocked", value, detail).await?;
    if blocked {
        // Their browser sessions and RCADIA JWTs end now, not at their expiry.
        horst_identity::people::end_sessions(store, auth, name).await?;
    }
    Ok(())
}

pub async fn set_trust(store: &Store, who: &str, name: &str, trust: u8) -> Result<(), ToolError> {
    if trust > 2 {
        return Err(ToolError::invalid("trust must be 0, 1 or 2"));
    }
    let value = trust.to_string();
    let detail = Detail::TrustField { trust: &value };
    set_account(store, who, Action::Trust, name, "trust", &value, detail).await
}

pub async fn hide_post(
    store: &Store,
    who: &str,
    post_id: &str,
    hidden: bool,
) -> Result<(), ToolError> {
    let thread = board::set_post_hidden(store, post_id, hidden).await?;
    let action = if hidden {
        Action::HidePost
    } else {
        Action::UnhidePost
    };
    audit(
        store,
        who,
        action,
        post_id,
        Detail::Thread { thread_id: &thread },
    )
    .await
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
        Action::ThreadStatus,
        thread_id,
        Detail::ThreadStatus { status },
    )
    .await
}

/// Replies on a thread as the operator (`authorKind: operator`, no daily limits).
pub async fn reply(
    store: &Store,
    who: &str,
    thread_id: &str,
    body: &str,
) -> Result<board::Written, ToolError> {
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
        Action::Reply,
        thread_id,
        Detail::Post {
            post_id: &v.post_id,
        },
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
    let action = if published {
        Action::Publish
    } else {
        Action::Unpublish
    };
    audit(store, who, action, thread_id, Detail::None).await
}

/// Re-reads nothing itself: writes `values` (the configuration as the caller loaded it now)
/// as the quota numbers every process uses from its next second on. Returns what is stored.
pub async fn reload_quotas(
    store: &Store,
    who: &str,
    values: &horst_queue::Quotas,
) -> Result<QuotasShown, ToolError> {
    let before = horst_queue::read_quotas(store).await?;
    horst_queue::write_quotas(store, values, who).await?;
    let changed = before.as_ref().map(|b| &b.values) != Some(values);
    audit(
        store,
        who,
        Action::QuotasReload,
        "quotas",
        Detail::QuotasReload { changed, values },
    )
    .await?;
    show_quotas(store, None).await
}

/// The quota numbers in force and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotasShown {
    /// `stored` or `configuration`.
    pub source: &'static str,
    pub values: Option<horst_queue::Quotas>,
    /// RFC 3339; only for stored values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_at: Option<String>,
    /// Only for stored values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_by: Option<String>,
}

/// The quota numbers in force: the stored ones, else (`fallback`, a process's own
/// configuration) what a process without stored values uses.
pub async fn show_quotas(
    store: &Store,
    fallback: Option<&horst_queue::Quotas>,
) -> Result<QuotasShown, ToolError> {
    Ok(match horst_queue::read_quotas(store).await? {
        Some(s) => QuotasShown {
            source: "stored",
            values: Some(s.values),
            written_at: Some(rfc3339(s.written_at_ms)),
            written_by: Some(s.written_by),
        },
        None => QuotasShown {
            source: "configuration",
            values: fallback.cloned(),
            written_at: None,
            written_by: None,
        },
    })
}

pub async fn mark_read(store: &Store, who: &str, message_id: &str) -> Result<(), ToolError> {
    contact::mark_read(store, message_id).await?;
    audit(store, who, Action::MarkRead, message_id, Detail::None).await
}

/// The operator's overview (`horst admin overview`, `GET /api/admin/overview`, the `/admin`
/// page's first card).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub accounts: AccountCounts,
    pub board_reads: BoardReads,
    pub jobs_today: JobsToday,
    pub page_views: crate::page_views::Summary,
    pub queue: QueueDepth,
    pub seconds: horst_queue::SecondsToday,
    pub seconds_charged_today: u64,
    pub seconds_used_today: u64,
    pub storage_used_bytes: u64,
    pub unread_messages: u64,
    pub workers: Workers,
}

/// Accounts by trust tier; blocked accounts counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AccountCounts {
    pub blocked: u64,
    pub trust0: u64,
    pub trust1: u64,
    pub trust2: u64,
}

/// Board thread reads: ever, today (UTC), and when the last was (RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoardReads {
    pub last: Option<String>,
    pub today: u64,
    pub total: u64,
}

/// Today's jobs by kind (see `horst_queue::DayStats`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobsToday {
    pub admitted: BTreeMap<String, u64>,
    pub finished: BTreeMap<String, BTreeMap<String, u64>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueDepth {
    pub oldest_waiting_ms: Option<u64>,
    pub waiting: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Workers {
    pub ids: Vec<String>,
    pub live: usize,
}

/// Accounts by tier (blocked apart), today's jobs and seconds (with the trust-0 share), the
/// queue, live workers, storage, board reads, HTML page views and unread messages.
pub async fn overview(store: &Store, queue: &horst_queue::Queue) -> Result<Overview, ToolError> {
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
    let internal = |e: horst_queue::QueueError| ToolError::internal(e.to_string());
    let seconds = queue.seconds_today().await.map_err(internal)?;
    let (waiting, oldest_ms) = queue.depth().await.map_err(internal)?;
    let workers = horst_queue::live_workers(store).await?;
    let tier = |t: &str| tiers.get(t).copied().unwrap_or(0);
    Ok(Overview {
        accounts: AccountCounts {
            blocked,
            trust0: tier("trust0"),
            trust1: tier("trust1"),
            trust2: tier("trust2"),
        },
        board_reads: BoardReads { last, today, total },
        jobs_today: JobsToday {
            admitted: jobs.admitted,
            finished: jobs.finished,
        },
        page_views: crate::page_views::summary(store).await?,
        queue: QueueDepth {
            oldest_waiting_ms: oldest_ms,
            waiting,
        },
        seconds,
        seconds_charged_today: jobs.seconds_charged,
        seconds_used_today: jobs.seconds_used,
        storage_used_bytes: crate::revisions::storage_total(store).await?,
        unread_messages: contact::unread_count(store).await?,
        workers: Workers {
            live: workers.len(),
            ids: workers,
        },
    })
}

/// The run-time switches as they are now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Switches {
    /// `on`, `off` or `read_only`.
    pub gateway: &'static str,
    pub self_service: bool,
    pub sign_up: bool,
}

pub fn gateway_mode_name(mode: horst_config::GatewayMode) -> &'static str {
    match mode {
        horst_config::GatewayMode::On => "on",
        horst_config::GatewayMode::ReadOnly => "read_only",
        horst_config::GatewayMode::Off => "off",
    }
}

pub async fn switches(store: &Store, config: &horst_config::Config) -> Result<Switches, ToolError> {
    Ok(Switches {
        gateway: gateway_mode_name(crate::mode(store, config).await?),
        self_service: crate::self_service(store, config).await?,
        sign_up: horst_identity::people::sign_up_open(store, config).await?,
    })
}

/// Switches the agent gateway for every API process.
pub async fn set_gateway_mode(
    store: &Store,
    who: &str,
    mode: horst_config::GatewayMode,
) -> Result<(), ToolError> {
    crate::set_mode(store, mode).await?;
    let name = gateway_mode_name(mode);
    audit(
        store,
        who,
        Action::GatewayMode,
        "gateway",
        Detail::GatewayMode { mode: name },
    )
    .await
}

/// Switches self-service agent keys (`POST /api/agent-keys`).
pub async fn set_self_service(store: &Store, who: &str, on: bool) -> Result<(), ToolError> {
    crate::set_self_service(store, on).await?;
    audit(
        store,
        who,
        Action::SelfService,
        "self_service",
        Detail::SelfService { on },
    )
    .await
}

/// Opens or closes sign-up on `/account`.
pub async fn set_sign_up(store: &Store, who: &str, open: bool) -> Result<(), ToolError> {
    horst_identity::people::set_sign_up(store, open).await?;
    audit(
        store,
        who,
        Action::SignUp,
        "sign_up",
        Detail::SignUp { open },
    )
    .await
}

/// An account without a password (its keys are made by the operator).
pub async fn create_account(
    store: &Store,
    who: &str,
    name: &str,
    trust: u8,
) -> Result<(), ToolError> {
    horst_identity::accounts::create_account(store, name, trust)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::AccountCreate,
        name,
        Detail::Trust { trust },
    )
    .await
}

/// Gives a person the operator role (they may open `/admin`) or takes it.
pub async fn set_operator_role(
    store: &Store,
    who: &str,
    name: &str,
    operator: bool,
) -> Result<(), ToolError> {
    horst_identity::people::set_operator(store, name, operator).await?;
    audit(
        store,
        who,
        Action::OperatorRole,
        name,
        Detail::OperatorRole { operator },
    )
    .await
}

/// An agent key for `account`, shown once.
pub async fn create_key(
    store: &Store,
    who: &str,
    account: &str,
    label: Option<&str>,
) -> Result<horst_identity::accounts::CreatedKey, ToolError> {
    let created = horst_identity::accounts::create_key(store, account, label)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::KeyCreate,
        &created.prefix,
        Detail::KeyCreate {
            account,
            id: &created.id,
        },
    )
    .await?;
    Ok(created)
}

/// Revokes the key with this prefix; returns its account.
pub async fn revoke_key(store: &Store, who: &str, prefix: &str) -> Result<String, ToolError> {
    let account = horst_identity::accounts::revoke_key(store, prefix)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::KeyRevoke,
        prefix,
        Detail::KeyRevoke { account: &account },
    )
    .await?;
    Ok(account)
}

/// An RCADIA agent token (`house`: the house host's identity); returns (token, agent id).
/// The token is shown once.
pub async fn create_token(
    store: &Store,
    auth: &Auth,
    who: &str,
    scopes: &[String],
    name: Option<&str>,
    house: bool,
) -> Result<(String, String), ToolError> {
    let (token, agent) = auth
        .create_token_as(scopes, name, house)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::TokenCreate,
        &agent,
        Detail::TokenCreate {
            house,
            name,
            scopes,
        },
    )
    .await?;
    Ok((token, agent))
}

/// Sets (`Some`) or removes (`None`) the burst limit of agent `agent`'s RCADIA token, in
/// requests per minute (every process applies it within `horst_identity::auth::EPOCH_CHECK`).
pub async fn set_token_burst(
    store: &Store,
    auth: &Auth,
    who: &str,
    agent: &str,
    per_minute: Option<u32>,
) -> Result<horst_identity::auth::TokenInfo, ToolError> {
    let info = auth
        .set_token_burst(agent, per_minute)
        .await
        .map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::TokenLimit,
        agent,
        Detail::TokenLimit { per_minute },
    )
    .await?;
    Ok(info)
}

/// Revokes agent `agent`'s RCADIA token (every process refuses it within
/// `horst_identity::auth::EPOCH_CHECK`).
pub async fn revoke_token(
    store: &Store,
    auth: &Auth,
    who: &str,
    agent: &str,
) -> Result<horst_identity::auth::TokenInfo, ToolError> {
    let info = auth.revoke_token(agent).await.map_err(ToolError::from)?;
    audit(
        store,
        who,
        Action::TokenRevoke,
        agent,
        Detail::TokenRevoke {
            name: info.name.as_deref(),
            scopes: &info.scopes,
        },
    )
    .await?;
    Ok(info)
}

/// A person's account with a password (RCADIA sign-in and `/account`).
pub async fn create_user(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
    password: &str,
    trust: u8,
) -> Result<(), ToolError> {
    horst_identity::people::create(
        store,
        auth,
        name,
        password,
        trust,
        horst_identity::people::Existing::GivePassword,
    )
    .await?;
    audit(
        store,
        who,
        Action::UserCreate,
        name,
        Detail::Trust { trust },
    )
    .await
}

/// A new password for a person; their sessions and JWTs end.
pub async fn set_user_password(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
    password: &str,
) -> Result<(), ToolError> {
    horst_identity::people::set_password(store, auth, name, password).await?;
    audit(store, who, Action::UserPasswd, name, Detail::None).await
}

/// Deletes a person's sign-in (see `people::delete`).
pub async fn delete_user(
    store: &Store,
    auth: &Auth,
    who: &str,
    name: &str,
) -> Result<horst_identity::people::Deleted, ToolError> {
    let deleted = horst_identity::people::delete(store, auth, name).await?;
    audit(
        store,
        who,
        Action::UserDelete,
        name,
        Detail::UserDelete {
            keys_revoked: &deleted.keys_revoked,
        },
    )
    .await?;
    Ok(deleted)
}

/// A new admin token, shown once; the old ones stay active until retired.
pub async fn create_admin_token(
    store: &Store,
    who: &str,
    label: Option<&str>,
) -> Result<(String, horst_identity::admin_tokens::AdminTokenInfo), ToolError> {
    let (token, info) = horst_identity::admin_tokens::create(store, who, label).await?;
    audit(
        store,
        who,
        Action::AdminTokenCreate,
        &info.id,
        Detail::AdminTokenCreate { label: &info.label },
    )
    .await?;
    Ok((token, info))
}

/// Retires an admin token (never the last active one).
pub async fn retire_admin_token(
    store: &Store,
    who: &str,
    id: &str,
) -> Result<horst_identity::admin_tokens::AdminTokenInfo, ToolError> {
    let info = horst_identity::admin_tokens::retire(store, id).await?;
    audit(store, who, Action::AdminTokenRetire, id, Detail::None).await?;
    Ok(info)
}

/// Which revisions to list for the operator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RevisionFilter {
    /// The level's name (case-insensitive).
    pub name: Option<String>,
    /// `labor`, `promoted`, `retired`, `withdrawn` or `quarantined`.
    pub state: Option<String>,
}

/// One revision in the operator's list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionRow {
    pub created_at: String,
    /// The newest check on the current engine (`checks::checks`' `currentCheck`).
    pub current_check: Value,
    pub engine_version: Option<String>,
    /// The level's promoted revision, if any.
    pub level_promoted: Option<String>,
    pub name: String,
    pub owner: Option<String>,
    pub parent_revision_id: Option<String>,
    pub revision_id: String,
    pub state: String,
}

/// A page of [`revisions`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionPage {
    pub current_engine: &'static str,
    pub items: Vec<RevisionRow>,
    pub next_offset: Option<usize>,
    pub total: usize,
}

/// Every revision (any state), newest first, with its level's promoted revision and, for the
/// revisions on the page, the newest check on the current engine (`null`: none yet, so a
/// promotion would be `engine_mismatch`).
pub async fn revisions(
    store: &Store,
    filter: &RevisionFilter,
    offset: usize,
    limit: usize,
) -> Result<RevisionPage, ToolError> {
    let top = store.key("rev:x").matches(':').count();
    let mut rows: Vec<(u64, RevisionRow)> = Vec::new();
    let name_filter = filter.name.as_deref().map(str::to_ascii_lowercase);
    let pattern = store.key("rev:*");
    let mut cursor: u64 = 0;
    let mut keys: Vec<String> = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(500)
            .query_async(&mut store.conn())
            .await?;
        keys.extend(batch.into_iter().filter(|k| k.matches(':').count() == top));
        if next == 0 {
            break;
        }
        cursor = next;
    }
    for k in keys {
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(&k)
            .arg(&[
                "revisionId",
                "name",
                "owner",
                "createdAtMs",
                "engineVersion",
                "parentRevisionId",
            ])
            .query_async(&mut store.conn())
            .await?;
        let get = |i: usize| v.get(i).cloned().flatten();
        let (Some(id), Some(name)) = (get(0), get(1)) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        if name_filter.as_deref().is_some_and(|n| n != lower) {
            continue;
        }
        let state: Option<String> = store
            .conn()
            .get(store.key(&format!("rev:{id}:state")))
            .await?;
        let state = state.unwrap_or_else(|| "labor".into());
        if filter.state.as_deref().is_some_and(|s| s != state) {
            continue;
        }
        let promoted: Option<String> = store
            .conn()
            .get(store.key(&format!("level:{lower}:promoted")))
            .await?;
        let created: u64 = get(3).and_then(|t| t.parse().ok()).unwrap_or(0);
        rows.push((
            created,
            RevisionRow {
                created_at: rfc3339(created),
                current_check: Value::Null,
                engine_version: get(4),
                level_promoted: promoted,
                name,
                owner: get(2),
                parent_revision_id: get(5).filter(|p| !p.is_empty()),
                revision_id: id,
                state,
            },
        ));
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    let total = rows.len();
    let mut items: Vec<RevisionRow> = rows
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(_, v)| v)
        .collect();
    for item in &mut items {
        item.current_check = crate::checks::checks(store, &item.revision_id)
            .await?
            .get_mut("currentCheck")
            .map(Value::take)
            .unwrap_or(Value::Null);
    }
    let end = offset + items.len();
    Ok(RevisionPage {
        current_engine: horst_engine::engine_version(),
        items,
        next_offset: (end < total).then_some(end),
        total,
    })
}
