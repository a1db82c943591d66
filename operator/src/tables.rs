//! The operator's hand on live RCADIA tables: end one (audited as `table_end`), for a table
//! that must not go on (abusive names, a stuck host). The game finishes with reason
//! `ended_by_operator` and the operator's reason in its result; players, spectators and the
//! host see it like any other end, and no next round opens by itself.

use horst_gateway::{ErrorCode, ToolError};
use horst_rcadia::store::Step;
use horst_rcadia::{Rcadia, RcadiaError};
use horst_sessions::Event;
use serde::Serialize;

use crate::audit::{audit, Action, Detail};

/// The longest reason an operator may give (it is shown to the players and spectators).
pub const REASON_MAX_CHARS: usize = 200;

/// What ending a table did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedTable {
    pub session_id: String,
    pub reason: String,
}

/// Ends live table `session_id` with `reason`. Audited. A finished table is a `conflict`,
/// an unknown one `not_found`.
pub async fn end_table(
    rcadia: &Rcadia,
    who: &str,
    session_id: &str,
    reason: &str,
) -> Result<EndedTable, ToolError> {
    let reason = horst_gateway::text::clean_line(reason.trim());
    if reason.is_empty() {
        return Err(ToolError::invalid(
            "give a reason (`reason` in the body): the players and spectators are shown it",
        ));
    }
    if reason.chars().count() > REASON_MAX_CHARS {
        return Err(ToolError::invalid(format!(
            "the reason is longer than {REASON_MAX_CHARS} characters; shorten it"
        )));
    }
    let ended = rcadia
        .apply(session_id, |_| {
            Ok(Step::main(Event::OperatorEnd {
                reason: reason.clone(),
            }))
        })
        .await;
    match ended {
        Ok(_) => {}
        Err(RcadiaError::NotFound | RcadiaError::Gone) => {
            return Err(ToolError::not_found(format!(
                "no live table {session_id}; the list of live tables is on /admin (#tables)"
            )))
        }
        Err(RcadiaError::Protocol(e, _)) => {
            return Err(ToolError::new(ErrorCode::Conflict, e.message));
        }
        Err(RcadiaError::Redis(e)) => return Err(e.into()),
        Err(RcadiaError::Internal(e)) => return Err(ToolError::internal(e)),
    }
    audit(
        rcadia.store(),
        who,
        Action::TableEnd,
        session_id,
        Detail::TableEnd { reason: &reason },
    )
    .await?;
    tracing::info!(session = %session_id, "table ended by an operator");
    Ok(EndedTable {
        session_id: session_id.to_string(),
        reason,
    })
}
