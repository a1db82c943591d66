//! The game pages' reads of levels, for anyone (no key): the promoted levels by name, the
//! Labor (newest first, 25 a page, like `list_labor`), and one revision with its map, replay
//! and evidence. The visibility rules are `get_level`'s (quarantined and withdrawn revisions
//! and every revision of a blocked account are hidden), and a hidden revision reads exactly
//! like one that does not exist. Served as REST by `api/src/routes/game.rs`.
//!
//! Beyond `get_level`, a card carries what a player sees: the map's own title (its `name:`
//! line, untrusted text), the owner's display name, and the evidence (outcome, ticks,
//! `stateHash`) that the watch view compares its own run with.

use redis::AsyncCommands;
use serde::Serialize;
use serde_json::Value;

use horst_store::Store;

use crate::error::ToolError;
use crate::keys;
use crate::revisions;

/// A level as the game lists it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Card {
    pub revision_id: String,
    /// The level name (`erste-schritte`).
    pub name: String,
    /// The map's `name:` line (`Erste Schritte`); untrusted text.
    pub title: String,
    pub owner: String,
    /// The owner's display name, or null; untrusted text.
    pub owner_display_name: Option<String>,
    pub state: String,
    pub seed: Option<u64>,
    pub engine_version: String,
    pub map_hash: String,
    pub created_at: String,
    pub parent_revision_id: Option<String>,
    /// The winning replay's ticks (the evidence).
    pub ticks: Option<u64>,
    /// True for the levels horst ships.
    pub builtin: bool,
    /// The winning replay's feasibility report (the page's "Schwierigkeit"); null for
    /// revisions stored before it existed.
    pub feasibility: Option<horst_feasibility::Feasibility>,
    /// Earlier revisions of the same level that play the same (same map, same engine; only
    /// the replay differs), newest first: a browser's progress on them counts for this one
    /// (`web/game/progress.js`). Written by the shipped levels' publication
    /// (`lua/builtin_publish.lua`); empty for every other revision.
    pub progress_from: Vec<String>,
}

/// One revision for the play, watch and level pages.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Revision {
    #[serde(flatten)]
    pub card: Card,
    pub map: String,
    pub replay: Value,
    pub evidence: Evidence,
}

/// What the submission's referee run found (the acceptance report), for the watch view.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    pub outcome: Option<String>,
    pub ticks: Option<u64>,
    pub state_hash: Option<String>,
    pub map_hash: Option<String>,
    pub engine_version: Option<String>,
}

/// The map's title from its `name:` header line (the engine's own parser decides), cleaned
/// like every name people see: no control, invisible or direction-changing characters, so a
/// title cannot read backwards or hide. The map text itself stays as the agent wrote it (its
/// hash is the evidence's).
pub fn title_of(map: &str) -> String {
    horst_engine::parse_map(map)
        .map(|m| title_of_parsed(&m))
        .unwrap_or_default()
}

/// [`title_of`] of a map parsed already.
pub fn title_of_parsed(map: &horst_engine::Map) -> String {
    horst_text::clean_line(map.name())
}

/// [`title_of`] on a blocking thread: the map (up to 256 KB) is parsed whole.
pub(crate) async fn title_off_runtime(map: &str) -> Result<String, ToolError> {
    let map = map.to_string();
    crate::blocking::off_runtime(move || title_of(&map)).await
}

/// A revision's title as stored beside it at submission (`title`, cleaned again on the way
/// out, which changes nothing for a title stored clean), so a list of cards parses no map.
/// A revision stored before titles were is parsed once, here, and its title written beside
/// it (best effort: a refused write, say on a read-only replica, only means the next read
/// parses again). `map` is the revision's map when the caller read it already.
async fn stored_title(
    store: &Store,
    id: &str,
    stored: Option<String>,
    map: Option<&str>,
) -> Result<String, ToolError> {
    if let Some(title) = stored {
        return Ok(horst_text::clean_line(&title));
    }
    let fetched: Option<String>;
    let map = match map {
        Some(map) => map,
        None => {
            fetched = store.conn().hget(keys::rev(store, id), "map").await?;
            match &fetched {
                Some(map) => map.as_str(),
                None => return Ok(String::new()),
            }
        }
    };
    let title = title_off_runtime(map).await?;
    // HSETNX: a revision is never deleted, and the title is what the map says, so a write
    // racing another reader's writes the same.
    let written: Result<bool, redis::RedisError> = store
        .conn()
        .hset_nx(keys::rev(store, id), "title", &title)
        .await;
    if let Err(e) = written {
        tracing::debug!(revision = id, error = %e, "could not store a revision's title");
    }
    Ok(title)
}

async fn display_name(store: &Store, owner: &str) -> Result<Option<String>, ToolError> {
    let v: Option<String> = store
        .conn()
        .hget(keys::account(store, owner), "displayName")
        .await?;
    Ok(v.filter(|d| !d.is_empty()))
}

/// What a card reads of a revision's record, in this order; [`revision`] adds [`BODY`].
const CARD_FIELDS: [&str; 4] = ["ticks", "acceptance", "title", "progressFrom"];
/// The map and the replay (up to 256 KB and more), read only for a whole revision: a list
/// of cards reads none (the title is stored beside them).
const BODY: [&str; 2] = ["map", "replay"];

/// A visible revision's card and acceptance report, with its map and replay when `body`
/// (`None` otherwise), or `not_found` (also for hidden ones).
async fn read(
    store: &Store,
    id: &str,
    caller: Option<&str>,
    body: bool,
) -> Result<(Card, Value, Option<(String, Value)>), ToolError> {
    let level = revisions::get_level(store, None, Some(id), caller).await?;
    let mut hmget = redis::cmd("HMGET");
    hmget.arg(keys::rev(store, id)).arg(&CARD_FIELDS);
    if body {
        hmget.arg(&BODY);
    }
    let v: Vec<Option<String>> = hmget.query_async(&mut store.conn()).await?;
    let get = |i: usize| v.get(i).cloned().flatten();
    let text = |k: &str| level[k].as_str().unwrap_or_default().to_string();
    let body = body.then(|| {
        let replay: Value = get(5)
            .and_then(|r| serde_json::from_str(&r).ok())
            .unwrap_or(Value::Null);
        (get(4).unwrap_or_default(), replay)
    });
    let owner = text("owner");
    let acceptance: Value = get(1)
        .and_then(|a| serde_json::from_str(&a).ok())
        .unwrap_or(Value::Null);
    let map = body.as_ref().map(|(map, _)| map.as_str());
    let card = Card {
        revision_id: text("revisionId"),
        name: text("name"),
        title: stored_title(store, id, get(2), map).await?,
        owner_display_name: display_name(store, &owner).await?,
        builtin: owner == crate::builtin::OWNER,
        owner,
        state: text("state"),
        seed: level["seed"].as_u64(),
        engine_version: text("engineVersion"),
        map_hash: text("mapHash"),
        created_at: text("createdAt"),
        parent_revision_id: level["parentRevisionId"].as_str().map(str::to_string),
        ticks: get(0).and_then(|t| t.parse().ok()),
        feasibility: acceptance
            .get("feasibility")
            .and_then(|f| serde_json::from_value(f.clone()).ok()),
        progress_from: get(3)
            .unwrap_or_default()
            .split_whitespace()
            .filter(|id| well_formed_id(id))
            .map(str::to_string)
            .collect(),
    };
    Ok((card, acceptance, body))
}

/// A visible revision with everything, or `not_found` (also for hidden ones).
/// `caller` (an agent account's name) may read its own withdrawn revision, as with `get_level`.
pub async fn revision(
    store: &Store,
    id: &str,
    caller: Option<&str>,
) -> Result<Revision, ToolError> {
    let (card, acceptance, body) = read(store, id, caller, true).await?;
    let (map, replay) = body.unwrap_or_default();
    let s = |k: &str| acceptance[k].as_str().map(str::to_string);
    Ok(Revision {
        evidence: Evidence {
            outcome: s("outcome"),
            ticks: acceptance["ticks"].as_u64(),
            state_hash: s("stateHash"),
            map_hash: s("mapHash"),
            engine_version: s("engineVersion").or_else(|| Some(card.engine_version.clone())),
        },
        card,
        map,
        replay,
    })
}

async fn card(store: &Store, id: &str) -> Result<Option<Card>, ToolError> {
    match read(store, id, None, false).await {
        Ok((card, _, _)) => Ok(Some(card)),
        Err(e) if e.code == crate::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What the operator's levels table shows beside a revision (any state, hidden ones too):
/// its map's title, and for a level's promoted revision the one a rollback brings back.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorExtras {
    /// The map's `name:` line, cleaned; empty when the revision has no map.
    pub title: String,
    /// The revision a rollback brings back (the newest of the level's history that is still
    /// retired: quarantined and withdrawn ones are passed over), when this one is promoted;
    /// `null`: nothing to roll back to.
    pub rollback_to: Option<String>,
}

pub async fn operator_extras(
    store: &Store,
    revision_id: &str,
    level: &str,
    promoted: bool,
) -> Result<OperatorExtras, ToolError> {
    let title: Option<String> = store
        .conn()
        .hget(keys::rev(store, revision_id), "title")
        .await?;
    let rollback_to: Option<String> = if promoted {
        // The history's hidden entries are taken off by quarantine and withdrawal; one an
        // earlier version left there is passed over by the rollback, and so here.
        let history: Vec<String> = store
            .conn()
            .lrange(keys::level_history(store, level), 0, 15)
            .await?;
        let mut first = None;
        for id in history.into_iter().filter(|id| id != revision_id) {
            let state: Option<String> = store.conn().get(keys::rev_state(store, &id)).await?;
            if state.as_deref() == Some("retired") {
                first = Some(id);
                break;
            }
        }
        first
    } else {
        None
    };
    Ok(OperatorExtras {
        title: stored_title(store, revision_id, title, None).await?,
        rollback_to: rollback_to.filter(|r| !r.is_empty()),
    })
}

/// The promoted levels: the shipped ones first, in their order, then the others by name.
pub async fn promoted(store: &Store) -> Result<Vec<Card>, ToolError> {
    let mut names: Vec<String> = store.conn().smembers(keys::promoted_names(store)).await?;
    let order = |n: &str| {
        horst_levels::BUILTIN
            .iter()
            .position(|l| l.name.eq_ignore_ascii_case(n))
            .unwrap_or(usize::MAX)
    };
    names.sort_by(|a, b| order(a).cmp(&order(b)).then_with(|| a.cmp(b)));
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let id: Option<String> = store.conn().get(keys::level_promoted(store, &name)).await?;
        if let Some(id) = id {
            if let Some(c) = card(store, &id).await? {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// A page of the Labor as `list_labor` gives it, as cards.
pub async fn labor(store: &Store, offset: usize) -> Result<(Vec<Card>, Option<usize>), ToolError> {
    let page = revisions::list_labor(store, offset).await?;
    let mut out = Vec::new();
    for item in page["items"].as_array().into_iter().flatten() {
        if let Some(c) = card(store, item["revisionId"].as_str().unwrap_or_default()).await? {
            out.push(c);
        }
    }
    Ok((out, page["nextOffset"].as_u64().map(|n| n as usize)))
}

/// Revision ids as the contract spells them: 1-64 letters, digits, dots, underscores or
/// hyphens. Anything else cannot exist.
pub fn well_formed_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    /// A level card's title parses the map whole; that runs off the runtime's thread.
    #[test]
    fn a_title_does_not_hold_the_runtime_thread() {
        let level = horst_levels::BUILTIN.last().unwrap();
        let during = crate::blocking::tests::turns_of_others_during(|| async {
            let title = super::title_off_runtime(level.map).await.unwrap();
            assert_eq!(title, super::title_of(level.map));
            assert!(!title.is_empty());
        });
        assert!(during > 0, "no other task ran while the map was parsed");
    }
}
