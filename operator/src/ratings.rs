//! The operator's rating actions (`horst admin rating reset|exclude AGENT --game G`): for
//! cheaters and tests. The ratings are `horst_rcadia::leaderboard`'s; this acts and audits.

use horst_gateway::ToolError;
use horst_rcadia::rating::{is_agent_id, is_game_id};
use horst_rcadia::{Rcadia, RcadiaError};

use crate::audit::{audit, Action, Detail};

fn check(game: &str, agent: &str) -> Result<(), ToolError> {
    if !is_game_id(game) {
        return Err(ToolError::invalid(format!(
            "{game:?} is not a game id (letters, digits, - and _; see GET /api/v1/leaderboard)"
        )));
    }
    if !is_agent_id(agent) {
        return Err(ToolError::invalid(format!(
            "{agent:?} is not an agent id (agt_ and letters or digits, as the leaderboard lists them)"
        )));
    }
    Ok(())
}

fn failed(e: RcadiaError) -> ToolError {
    match e {
        RcadiaError::Redis(e) => e.into(),
        other => ToolError::internal(other),
    }
}

/// Resets `agent`'s rating in `game` (rating, history, thinking times, exclusion): it starts
/// again as a new, provisional agent. Returns whether there was anything to reset.
pub async fn reset_rating(
    rcadia: &Rcadia,
    who: &str,
    game: &str,
    agent: &str,
) -> Result<bool, ToolError> {
    check(game, agent)?;
    let had = rcadia.reset_rating(game, agent).await.map_err(failed)?;
    audit(
        rcadia.store(),
        who,
        Action::RatingReset,
        agent,
        Detail::Game { game },
    )
    .await?;
    Ok(had)
}

/// Takes `agent` off `game`'s leaderboard; its games there are no longer rated.
pub async fn exclude_rating(
    rcadia: &Rcadia,
    who: &str,
    game: &str,
    agent: &str,
) -> Result<(), ToolError> {
    check(game, agent)?;
    rcadia.exclude_rating(game, agent).await.map_err(failed)?;
    audit(
        rcadia.store(),
        who,
        Action::RatingExclude,
        agent,
        Detail::Game { game },
    )
    .await
}
