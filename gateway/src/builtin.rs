//! The shipped levels (`horst_levels::BUILTIN`) as promoted revisions of the operator's
//! account [`OWNER`], published by every starting API process, so `get_level` by name, the
//! game's level list and the board's level threads have real levels from the first start.
//!
//! Each level's winning replay is refereed on the way in; a level whose replay does not win
//! on this engine is not published (and logged), never stored unchecked. The revision id is
//! derived from the name, map hash, engine version and replay, so a restart, or several API
//! processes starting at once, find it stored and change nothing (one atomic script per
//! level). A changed level file or a new engine gives a new id: that revision is published and
//! promoted, and the one before it is retired to the level's history (rollback restores it).
//! A new revision of the same map on the same engine (only the replay changed, as when the
//! shipped replays were made easier) names the one it replaces in `progressFrom`, so a
//! player's progress carries over (`lua/builtin_publish.lua`, `web/game/progress.js`).
//!
//! The operator's own choice wins: if the promoted revision of a built-in name is not one of
//! [`OWNER`]'s (an operator promoted another), nothing is promoted over it. A claim of a
//! built-in name by an agent (possible before names were reserved from the files) is taken
//! over; the agent's revisions stay readable by id. Built-in evidence does not count against
//! any storage budget: it is the project's, not an upload.

use redis::AsyncCommands;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use horst_store::Store;

use crate::error::ToolError;
use crate::keys;
use crate::revisions::lower;
use crate::scripts::{PublishBuiltin, BUILTIN_PUBLISH};

/// The operator's account that owns the built-in levels (created by the first start).
pub const OWNER: &str = "gcv";
/// Its display name on Labor-Karten and level pages.
pub const OWNER_DISPLAY_NAME: &str = "Game con Vogel";

/// What happened to one shipped level at this start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub name: String,
    pub revision_id: String,
    /// `published` (new and promoted), `present` (stored before), `kept` (stored, but the
    /// operator has another revision promoted), `refused` (the replay does not win).
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The revision id of a shipped level on this engine: `rev-<name>-<12 hex>`.
pub fn revision_id(name: &str, map_hash: &str, engine_version: &str, replay: &str) -> String {
    let mut h = Sha256::new();
    for part in [name, map_hash, engine_version, replay] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    format!("rev-{}-{}", lower(name), &hex::encode(h.finalize())[..12])
}

/// A shipped level's replay, its referee report and its feasibility report, or why it is
/// refused: the map or the replay does not parse, or the replay does not win.
/// A shipped level that wins: its replay, the referee's report, the feasibility report and
/// the map's title.
type Checked = (
    horst_engine::Replay,
    horst_engine::RefereeReport,
    Value,
    String,
);

fn check_shipped(level: &horst_levels::Level) -> Result<Checked, String> {
    let engine = horst_engine::engine_version();
    let map = horst_engine::parse_map(level.map).map_err(|r| {
        let first = r.errors.first().map(|e| e.message.clone());
        format!(
            "levels/{}.map is invalid: {}",
            level.file,
            first.unwrap_or_default()
        )
    })?;
    let replay = horst_engine::parse_replay_json(level.replay)
        .map_err(|e| format!("levels/{}.replay.json: {e}", level.file))?;
    let report = horst_engine::referee(&map, &replay);
    if !report.won {
        return Err(format!(
            "levels/{}.replay.json does not win on engine {engine}: {} after {} ticks",
            level.file, report.outcome, report.ticks
        ));
    }
    let feasibility =
        serde_json::to_value(horst_feasibility::assess(&map, &replay)).unwrap_or(Value::Null);
    let title = crate::public_levels::title_of_parsed(&map);
    Ok((replay, report, feasibility, title))
}

/// Publishes `levels` (normally `horst_levels::BUILTIN`) as described in the module doc.
/// The operator's action around it (auditing each publication, logging what a starting API
/// did) is `horst_operator::publish_builtin`.
pub async fn publish(
    store: &Store,
    levels: &[horst_levels::Level],
) -> Result<Vec<Outcome>, ToolError> {
    let engine = horst_engine::engine_version();
    let mut out = Vec::with_capacity(levels.len());
    for level in levels {
        let refused = |detail: String| Outcome {
            name: level.name.to_string(),
            revision_id: String::new(),
            action: "refused",
            detail: Some(detail),
        };
        // Parsing, refereeing and assessing a level take CPU for a while (every level at each
        // start, and again when Redis comes back empty while the process serves): on a
        // blocking thread, not the runtime's.
        let shipped = *level;
        let (replay, report, feasibility, title) =
            match crate::blocking::off_runtime(move || check_shipped(&shipped)).await? {
                Ok(checked) => checked,
                Err(detail) => {
                    out.push(refused(detail));
                    continue;
                }
            };
        // The replay as agents submit it: compact JSON of exactly `{seed, actions}`.
        let replay_json = serde_json::to_string(&replay).map_err(ToolError::internal)?;
        let id = revision_id(level.name, &report.map_hash, engine, &replay_json);
        let mut acceptance = serde_json::to_value(&report).map_err(ToolError::internal)?;
        acceptance["engineVersion"] = json!(engine);
        acceptance["policyVersion"] = json!(horst_engine::POLICY_VERSION);
        // Like a submission's acceptance: the replay's feasibility report (get_level, the pages).
        acceptance["feasibility"] = feasibility;
        let bytes = crate::revisions::evidence_bytes(
            level.map,
            &serde_json::from_str::<Value>(&replay_json).map_err(ToolError::internal)?,
            &acceptance,
        );
        let name = lower(level.name);
        let promoted_key = keys::level_promoted(store, &name);
        // Two steps (the script's cluster note): read the promoted id, pass its keys; the
        // script refuses if it moved in between, and we read again.
        let mut reply: Vec<String> = vec!["moved".into()];
        for _ in 0..16 {
            let cur: Option<String> = store.conn().get(&promoted_key).await?;
            let cur = cur.unwrap_or_default();
            reply = BUILTIN_PUBLISH
                .run(
                    store,
                    &PublishBuiltin {
                        store,
                        id: &id,
                        owner: OWNER,
                        owner_display_name: OWNER_DISPLAY_NAME,
                        name: &name,
                        bytes,
                        map: level.map,
                        replay_json: &replay_json,
                        seed: replay.seed,
                        ticks: report.ticks,
                        map_hash: &report.map_hash,
                        engine_version: engine,
                        policy_version: horst_engine::POLICY_VERSION,
                        acceptance_json: &acceptance.to_string(),
                        current: &cur,
                        title: &title,
                    },
                )
                .await?;
            if reply.first().map(String::as_str) != Some("moved") {
                break;
            }
        }
        let action = reply.first().map(String::as_str).unwrap_or("");
        let detail = reply.get(1).filter(|d| !d.is_empty()).cloned();
        let action = match action {
            "present" => "present",
            "kept" => "kept",
            "published" => "published",
            "moved" => {
                return Err(ToolError::internal(format!(
                    "builtin publish of {name}: the promoted revision kept changing"
                )))
            }
            other => return Err(ToolError::internal(format!("builtin publish: {other:?}"))),
        };
        out.push(Outcome {
            name,
            revision_id: id,
            action,
            detail,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_name_is_reserved() {
        for l in horst_levels::BUILTIN {
            assert!(crate::revisions::is_reserved(l.name), "{}", l.name);
            assert!(crate::revisions::is_reserved(&l.name.to_ascii_uppercase()));
        }
        // The name that slipped through the old hand list.
        assert!(crate::revisions::is_reserved("erste-schritte"));
        assert!(!crate::revisions::is_reserved("erste-schritte-2"));
        assert!(crate::revisions::is_reserved("Labor"));
    }

    #[test]
    fn ids_are_stable_and_change_with_the_evidence() {
        let a = revision_id("Erste-Schritte", "m", "e", "r");
        assert_eq!(a, revision_id("Erste-Schritte", "m", "e", "r"));
        assert!(a.starts_with("rev-erste-schritte-") && a.len() <= 64, "{a}");
        assert_ne!(a, revision_id("Erste-Schritte", "m", "e2", "r"));
        assert_ne!(a, revision_id("Erste-Schritte", "m2", "e", "r"));
    }
}
