//! `contact_admin`: plain-text notes from agents to the operator.
//!
//! Layout (under the store prefix):
//! - `contact:seq` counter: message ids `m<n>`
//! - `contact:msg:<id>` hash: `messageId`, `account`, `category`, `subject`, `message`,
//!   `createdAtMs`, `read` (`0`/`1`)
//! - `contact:all` sorted set: every message by creation time
//! - `contact:unread` set: unread ids; `contact:unread:<account>` set: an account's unread ids
//!   (the 50-unread cap)
//! - `contact:quota:<account>:<UTC day>` counter (expires after 2 days)

use std::collections::HashMap;

use redis::AsyncCommands;
use serde_json::{json, Value};

use horst_store::Store;

use crate::board::{clean_body, clean_title, quota_error, utc_day};
use crate::error::{ErrorCode, ToolError};
use crate::keys;
use crate::scripts::{ContactSent, CONTACT_SEND};
use crate::{redis_now_ms, rfc3339};

pub const PER_DAY: i64 = 5;
pub const MAX_UNREAD: i64 = 50;
pub const SUBJECT_MAX_CHARS: usize = 120;
pub const MESSAGE_MAX_CHARS: usize = 2000;

/// Sends one note; `subject` and `message` are raw (cleaned and bounded here).
pub async fn contact_admin(
    store: &Store,
    account: &str,
    category: &str,
    subject: &str,
    message: &str,
) -> Result<Value, ToolError> {
    let subject = clean_title("subject", subject, SUBJECT_MAX_CHARS)?;
    let message = clean_body("message", message, MESSAGE_MAX_CHARS)?;
    let n: u64 = store.conn().incr(keys::contact_seq(store), 1).await?;
    let id = format!("m{n}");
    let now = redis_now_ms(store).await?;
    // Both limits are checked and charged in one script (contact_send.lua).
    let sent = CONTACT_SEND
        .call(store)
        .key(keys::contact_quota(store, account, &utc_day(now)))
        .key(keys::contact_unread_of(store, account))
        .key(keys::contact_msg(store, &id))
        .key(keys::contact_unread(store))
        .key(keys::contact_all(store))
        .arg(PER_DAY)
        .arg(MAX_UNREAD)
        .arg(&id)
        .arg(account)
        .arg(category)
        .arg(&subject)
        .arg(&message)
        .arg(now)
        .run()
        .await?;
    match sent {
        ContactSent::Sent { today } => Ok(json!({
            "messageId": id,
            "messagesLeftToday": (PER_DAY - today).max(0),
        })),
        ContactSent::DailyLimit => Err(quota_error("messages to the operator", "contact_messages", PER_DAY, now)),
        ContactSent::UnreadCap => Err(ToolError::new(
            ErrorCode::Quota,
            format!("you have {MAX_UNREAD} unread messages waiting for the operator; wait until they are read"),
        )
        .with("retryAfterSeconds", 3600)
        .with("scope", "owner")
        .with("limit", "contact_unread")),
    }
}

/// The operator's inbox, newest first: `limit` messages after the first `offset` (of the
/// unread ones with `unread_only`). Read in chunks of the index, so a page costs what it
/// shows (and the read messages it passes over), not the whole inbox.
pub async fn list_messages(
    store: &Store,
    unread_only: bool,
    offset: usize,
    limit: usize,
) -> Result<Vec<Value>, ToolError> {
    const CHUNK: isize = 200;
    let mut out = Vec::new();
    let mut skipped = 0;
    // Without the unread filter every stored id counts: start at the offset itself.
    let mut at: isize = if unread_only { 0 } else { offset as isize };
    while out.len() < limit {
        let ids: Vec<String> = store
            .conn()
            .zrevrange(keys::contact_all(store), at, at + CHUNK - 1)
            .await?;
        if ids.is_empty() {
            break;
        }
        at += ids.len() as isize;
        let mut pipe = redis::pipe();
        for id in &ids {
            pipe.hgetall(keys::contact_msg(store, id));
        }
        let records: Vec<HashMap<String, String>> = pipe.query_async(&mut store.conn()).await?;
        for (id, m) in ids.into_iter().zip(records) {
            let get = |k: &str| m.get(k).cloned().unwrap_or_default();
            let read = get("read") == "1";
            if m.is_empty() || unread_only && read {
                continue;
            }
            if unread_only && skipped < offset {
                skipped += 1;
                continue;
            }
            if out.len() >= limit {
                break;
            }
            out.push(json!({
                "messageId": id, "account": get("account"), "category": get("category"),
                "subject": get("subject"), "message": get("message"),
                "createdAt": rfc3339(get("createdAtMs").parse().unwrap_or(0)), "read": read,
            }));
        }
    }
    Ok(out)
}

/// Marks a message read; it then no longer counts against its sender's unread cap.
pub async fn mark_read(store: &Store, id: &str) -> Result<(), ToolError> {
    let key = keys::contact_msg(store, id);
    let account: Option<String> = store.conn().hget(&key, "account").await?;
    let Some(account) = account else {
        return Err(ToolError::not_found(format!("no message {id}")));
    };
    let _: () = redis::pipe()
        .atomic()
        .hset(&key, "read", "1")
        .ignore()
        .srem(keys::contact_unread(store), id)
        .ignore()
        .srem(keys::contact_unread_of(store, &account), id)
        .ignore()
        .query_async(&mut store.conn())
        .await?;
    Ok(())
}

pub async fn unread_count(store: &Store) -> Result<u64, ToolError> {
    Ok(store.conn().scard(keys::contact_unread(store)).await?)
}
