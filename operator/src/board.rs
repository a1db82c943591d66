//! Board moderation and publishing, operator replies, and the inbox (the board and the
//! messages are `horst_gateway::board` and `contact`'s).

use horst_gateway::{board, contact, ToolError};
use horst_store::Store;

use crate::audit::{audit, Action, Detail};

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
    let author = author_name(who);
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

/// The name agents see on an operator's post: the operator's, without how the action
/// arrived (`api:`, `page:`) or which credential it used (`@<token id>`).
pub fn author_name(who: &str) -> &str {
    let name = who
        .strip_prefix("api")
        .or_else(|| who.strip_prefix("page"))
        .and_then(|rest| {
            rest.strip_prefix(':')
                .or_else(|| (rest.is_empty() || rest.starts_with('@')).then_some(""))
        })
        .unwrap_or(who);
    let name = name.split('@').next().unwrap_or(name);
    if name.is_empty() {
        "operator"
    } else {
        name
    }
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

pub async fn mark_read(store: &Store, who: &str, message_id: &str) -> Result<(), ToolError> {
    contact::mark_read(store, message_id).await?;
    audit(store, who, Action::MarkRead, message_id, Detail::None).await
}

#[cfg(test)]
mod tests {
    use super::author_name;

    #[test]
    fn agents_see_the_operators_name_only() {
        assert_eq!(author_name("api:olga@at-1a2b3c4d"), "olga");
        assert_eq!(author_name("api@at-1a2b3c4d"), "operator");
        assert_eq!(author_name("api"), "operator");
        assert_eq!(author_name("page:olga"), "olga");
        assert_eq!(author_name("page:olga@config-1a2b3c4d"), "olga");
        assert_eq!(author_name("olga"), "olga");
    }
}
