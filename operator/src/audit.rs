//! The audit trail: every operator action, whichever way it arrives, appends one entry.
//!
//! Layout (under the store prefix): `audit` list: JSON entries `{at, who, action, target,
//! detail}`, newest first, trimmed to [`AUDIT_KEEP`].

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use horst_gateway::ToolError;
use horst_store::Store;

/// The audit trail keeps this many entries.
pub const AUDIT_KEEP: isize = 10_000;

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
    /// A queued or running evaluation job cancelled (`jobs::cancel_job`).
    JobCancel => "job_cancel",
    /// Every job of one account waiting or running now cancelled at once
    /// (`jobs::cancel_account_jobs`): one entry for the action, besides each job's
    /// `job_cancel`, so the trail says it was one decision, and keeps it when none was found.
    JobCancelAccount => "job_cancel_account",
    /// A live RCADIA table ended (`tables::end_table`).
    TableEnd => "table_end",
    /// An agent's rating in one game reset (`horst admin rating reset`).
    RatingReset => "rating_reset",
    /// An agent excluded from one game's ratings (`horst admin rating exclude`).
    RatingExclude => "rating_exclude",
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
    /// Who acted, and with which credential: `olga` (CLI: `HORST_OPERATOR` or the login
    /// name; the credential is access to the store), `api:olga@at-1a2b3c4d` or
    /// `api@at-1a2b3c4d` (REST: the name from `X-Operator`, then the admin token's id),
    /// `page:olga` (the /admin page: the person olga, by password) or
    /// `page:olga@at-1a2b3c4d` (the /admin page: a sign-in with that admin token, under the
    /// name given there). In the sign-in trail: the client's address.
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
    /// A password set by an operator: the agent keys it revoked (`--revoke-keys`; none
    /// without it).
    UserPasswd {
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
    /// A shipped level published (`detail`: the script's note, if any).
    PublishBuiltin {
        detail: Option<&'a str>,
        level: &'a str,
    },
    /// A rating action: the game.
    Game {
        game: &'a str,
    },
    /// A job cancelled: the operator's reason and whether it was queued or running.
    JobCancel {
        reason: &'a str,
        was: &'a str,
    },
    /// Every job of an account cancelled: the operator's reason and the jobs it ended (each
    /// with a `job_cancel` entry of its own); none when nothing of it waited or ran.
    JobCancelAccount {
        reason: &'a str,
        jobs_cancelled: &'a [String],
    },
    /// A live table ended: the operator's reason.
    TableEnd {
        reason: &'a str,
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
    let now = store.now_ms().await?;
    let entry = AuditEntry {
        at: horst_dates::rfc3339_ms(now),
        who: who.to_string(),
        action: action.as_str().to_string(),
        target: target.to_string(),
        // Through a `Value`, so the stored keys stay sorted as they always were.
        detail: serde_json::to_value(detail).map_err(ToolError::internal)?,
    };
    let line = serde_json::to_string(&entry).map_err(ToolError::internal)?;
    push(store, "audit", &line).await
}

/// Appends a line to a trail and waits for the replicas (the trail is a durable write: an
/// action reported done keeps its entry through a failover). Allowed while Redis is at
/// `maxmemory` (the trail is bounded): an operator's cancel that took effect there was left
/// without its entry, and a retry then found the job finished.
async fn push(store: &Store, trail: &str, line: &str) -> Result<(), ToolError> {
    horst_store::trail::push(
        store,
        &store.key(trail),
        &store.key(&format!("{trail}:count")),
        line,
        AUDIT_KEEP as u64,
    )
    .await?;
    Ok(())
}

/// The sign-in trail (`audit:sign-ins`, apart from the operator's actions so that failed
/// sign-ins can never push those out): every password or admin-token check on `/account`,
/// `/admin` and the RCADIA sign-in, with the client's address.
pub const SIGN_INS: &str = "audit:sign-ins";

/// How a sign-in went, as the sign-in trail's `action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInOutcome {
    /// `sign_in`: the credential was right.
    Ok,
    /// `sign_in_failed`: wrong name, password or token.
    Failed,
    /// `sign_in_blocked`: the password was right, the account is blocked.
    Blocked,
    /// `reauthenticated`: an `/admin` session gave its credential again.
    Confirmed,
}

impl SignInOutcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            SignInOutcome::Ok => "sign_in",
            SignInOutcome::Failed => "sign_in_failed",
            SignInOutcome::Blocked => "sign_in_blocked",
            SignInOutcome::Confirmed => "reauthenticated",
        }
    }
}

/// What a sign-in entry's `detail` says.
#[derive(Serialize)]
struct SignInDetail<'a> {
    address: String,
    via: &'a str,
}

/// Records a sign-in: `who` is the client's address, `target` the name (or the admin token's
/// id), `detail` the address and where (`account`, `admin`, `admin_token`, `rcadia`).
pub async fn record_sign_in(
    store: &Store,
    name: &str,
    address: std::net::IpAddr,
    via: &str,
    outcome: SignInOutcome,
) -> Result<(), ToolError> {
    let now = store.now_ms().await?;
    let entry = AuditEntry {
        at: horst_dates::rfc3339_ms(now),
        who: address.to_string(),
        action: outcome.as_str().to_string(),
        target: name.to_string(),
        detail: serde_json::to_value(SignInDetail {
            address: address.to_string(),
            via,
        })
        .map_err(ToolError::internal)?,
    };
    let line = serde_json::to_string(&entry).map_err(ToolError::internal)?;
    push(store, SIGN_INS, &line).await
}

/// The newest `limit` sign-ins after skipping `offset`, newest first.
pub async fn sign_ins(
    store: &Store,
    offset: usize,
    limit: usize,
) -> Result<Vec<AuditEntry>, ToolError> {
    read(store, SIGN_INS, offset, limit).await
}

/// The newest `limit` entries after skipping `offset`, newest first.
pub async fn audit_log(
    store: &Store,
    offset: usize,
    limit: usize,
) -> Result<Vec<AuditEntry>, ToolError> {
    read(store, "audit", offset, limit).await
}

/// A page of the audit trail, and how many entries were ever written (`total`): give it
/// back as `of` with the next page's offset, and that page starts where this one ended
/// however many entries were written in between.
#[derive(Debug, Serialize)]
pub struct AuditPage {
    pub items: Vec<AuditEntry>,
    pub total: u64,
}

/// The audit trail `limit` entries at a time, newest first. `offset` counts from the
/// newest entry when the trail had `of` entries (the `total` of an earlier page); without
/// it, from the newest now. Paging by offset alone repeated an entry for every one written
/// between two pages.
pub async fn audit_page(
    store: &Store,
    offset: usize,
    limit: usize,
    of: Option<u64>,
) -> Result<AuditPage, ToolError> {
    let count_key = store.key("audit:count");
    for _ in 0..8 {
        let before: Option<u64> = store.conn().get(&count_key).await?;
        let total = before.unwrap_or(0);
        let shift = of.map_or(0, |of| total.saturating_sub(of)) as usize;
        let items = read(store, "audit", offset.saturating_add(shift), limit).await?;
        let after: Option<u64> = store.conn().get(&count_key).await?;
        if after == before {
            return Ok(AuditPage { items, total });
        }
    }
    Err(ToolError::new(
        horst_gateway::ErrorCode::Busy,
        "the audit trail kept growing while it was read; try again",
    ))
}

async fn read(
    store: &Store,
    trail: &str,
    offset: usize,
    limit: usize,
) -> Result<Vec<AuditEntry>, ToolError> {
    let start = offset.min(AUDIT_KEEP as usize) as isize;
    let raw: Vec<String> = store
        .conn()
        .lrange(
            store.key(trail),
            start,
            start + limit.clamp(1, AUDIT_KEEP as usize) as isize - 1,
        )
        .await?;
    Ok(raw
        .iter()
        .filter_map(|r| serde_json::from_str(r).ok())
        .collect())
}
