//! The job contract between the gateway (which admits jobs and reads their results), the
//! worker (which runs them and writes the results) and the CLI: what a job takes
//! ([`JobInput`]), what it gives ([`JobResult`]), why it failed ([`FailureCode`]) and what a
//! submission's caller did with its result ([`Publication`]). Declared once, here; every
//! side reads and writes these types, never a field by its name in a string.
//!
//! The JSON of a result is the tool result agents see (the referee's and the planner's
//! reports with their feasibility report), so the field names are the contract's; the
//! worker's tests check that the engine's and the planner's own reports serialise to
//! exactly what these types read back.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::JobKind;

/// What a worker needs to run a job. Its canonical JSON is the job's fingerprint
/// (idempotency), so a field is only written when the kind uses it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobInput {
    /// The level text (every kind).
    pub map: String,
    /// The planner's seed (`playtest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// The replay as the caller sent it (`simulate`, `submit`, `recheck`); the engine parses
    /// it (`horst_engine::parse_replay`), which reports what is wrong with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Value>,
    /// The level's name (`submit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The parent revision of a submission: written (as null when it has none) for every
    /// submission, absent for other kinds, as before the contract was typed, so a retry's
    /// fingerprint across the upgrade is unchanged.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub parent_revision_id: Option<Option<String>>,
    /// The stored revision an operator's recheck re-referees (`recheck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_id: Option<String>,
}

/// A field that is present (even as null) is `Some`: tells `null` from absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

impl JobInput {
    pub fn playtest(map: impl Into<String>, seed: i64) -> JobInput {
        JobInput {
            map: map.into(),
            seed: Some(seed),
            ..JobInput::default()
        }
    }

    pub fn simulate(map: impl Into<String>, replay: Value) -> JobInput {
        JobInput {
            map: map.into(),
            replay: Some(replay),
            ..JobInput::default()
        }
    }

    pub fn submit(
        map: impl Into<String>,
        replay: Value,
        name: impl Into<String>,
        parent: Option<String>,
    ) -> JobInput {
        JobInput {
            map: map.into(),
            replay: Some(replay),
            name: Some(name.into()),
            parent_revision_id: Some(parent),
            ..JobInput::default()
        }
    }

    pub fn recheck(
        map: impl Into<String>,
        replay: Value,
        revision_id: impl Into<String>,
    ) -> JobInput {
        JobInput {
            map: map.into(),
            replay: Some(replay),
            revision_id: Some(revision_id.into()),
            ..JobInput::default()
        }
    }

    /// The JSON the fingerprint and the record hold.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// How a replay ended (`lost` only from the referee; the planner answers `won` or
/// `unresolved`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Won,
    Lost,
    #[default]
    Unresolved,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Won => "won",
            Outcome::Lost => "lost",
            Outcome::Unresolved => "unresolved",
        }
    }
}

/// The referee's report (`simulate`, `submit`, `recheck`): `horst_engine::RefereeReport`
/// with its feasibility report and the versions that judged it. Fields in the order of the
/// engine's report, then the feasibility (as `horst_feasibility::Assessed` writes them),
/// then the versions. Parts the gateway passes on without reading are kept as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefereeResult {
    pub outcome: Outcome,
    pub won: bool,
    pub dead: bool,
    pub ticks: u32,
    /// `{x, y, subX, subY}` of the bird at the end.
    pub position: Value,
    pub death_tick: Option<u32>,
    /// What killed the bird (`horst_engine::DeathReport`), null unless dead.
    pub death_cause: Option<Value>,
    pub state_hash: String,
    pub map_hash: String,
    /// `horst_feasibility::Feasibility` of a won simulation or submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feasibility: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Value>,
    pub engine_version: String,
    pub policy_version: String,
}

/// The planner's answer (`playtest`): `horst_planner::PlaytestResult` with the feasibility
/// report of its replay and the warnings it raises.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaytestResult {
    pub outcome: Outcome,
    pub won: bool,
    pub ticks: u32,
    pub seed: u32,
    pub map_hash: String,
    /// The winning replay, or null.
    pub replay: Option<Value>,
    pub engine_version: String,
    pub policy_version: String,
    /// `unreachable`, `time_limit` or `memory_limit`; absent when won.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With reason `unreachable`: `relaxed_graph`, `jump_envelope`, `replay_limit` or `exhaustive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    pub explored: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_distance: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feasibility: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Value>,
}

/// A finished job's result, by its kind. Stored (and answered) as the report's own JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JobResult {
    Referee(RefereeResult),
    Playtest(PlaytestResult),
}

impl JobResult {
    /// The stored JSON of a job of `kind`; `None` if it is not that kind's report.
    pub fn parse(kind: JobKind, json: &str) -> Option<JobResult> {
        match kind {
            JobKind::Playtest => serde_json::from_str(json).ok().map(JobResult::Playtest),
            JobKind::Simulate | JobKind::Submit | JobKind::Recheck => {
                serde_json::from_str(json).ok().map(JobResult::Referee)
            }
        }
    }

    pub fn referee(&self) -> Option<&RefereeResult> {
        match self {
            JobResult::Referee(r) => Some(r),
            JobResult::Playtest(_) => None,
        }
    }

    pub fn playtest(&self) -> Option<&PlaytestResult> {
        match self {
            JobResult::Playtest(p) => Some(p),
            JobResult::Referee(_) => None,
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Why a job failed: every code a worker, a queue script or the gateway's job handling
/// writes. A job's failure is answered with the contract's error code of the same name.
/// `queue/lua/*.lua` write `cancelled` and `timeout`; a test checks every literal there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// The input is malformed (no map, no replay, a bad seed, a malformed replay).
    InvalidInput,
    /// The replay exceeds the engine's limits.
    TooLarge,
    /// The map is invalid (the validator's errors in `details`).
    ValidationFailed,
    /// It could not finish (or start) within its limit.
    Timeout,
    /// Dropped or stopped: its caller left, its worker died, an operator cancelled it.
    Cancelled,
    /// The evaluator failed; the server log has the details.
    InternalError,
}

impl FailureCode {
    pub const ALL: [FailureCode; 6] = [
        FailureCode::InvalidInput,
        FailureCode::TooLarge,
        FailureCode::ValidationFailed,
        FailureCode::Timeout,
        FailureCode::Cancelled,
        FailureCode::InternalError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureCode::InvalidInput => "invalid_input",
            FailureCode::TooLarge => "too_large",
            FailureCode::ValidationFailed => "validation_failed",
            FailureCode::Timeout => "timeout",
            FailureCode::Cancelled => "cancelled",
            FailureCode::InternalError => "internal_error",
        }
    }

    pub fn parse(code: &str) -> Option<FailureCode> {
        FailureCode::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

impl PartialEq<&str> for FailureCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for FailureCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What became of a won submission's result, recorded on its job once by
/// `queue/lua/publish.lua`, so a retry with the same idempotency key answers the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "as")]
pub enum Publication {
    /// Stored as this revision.
    #[serde(rename_all = "camelCase")]
    Stored { revision_id: String },
    /// Storing it was refused (a Labor cap, a storage budget, a name of another account),
    /// with the refusal's details (`scope`, `retryAfterSeconds`, `limit`, ...), which a retry
    /// answers again. Records of before had none.
    Refused {
        code: String,
        message: String,
        #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
        details: serde_json::Map<String, Value>,
    },
    /// The caller left before the check finished: nothing was published.
    Unpublished { reason: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_submissions_input_keeps_its_null_parent_and_other_kinds_have_none() {
        let s = JobInput::submit("m", json!({"seed": 1}), "lvl", None).to_value();
        assert_eq!(
            s,
            json!({"map": "m", "replay": {"seed": 1}, "name": "lvl", "parentRevisionId": null})
        );
        let back: JobInput = serde_json::from_value(s).unwrap();
        assert_eq!(back.parent_revision_id, Some(None));
        let p = JobInput::playtest("m", 3).to_value();
        assert_eq!(p, json!({"map": "m", "seed": 3}));
        let back: JobInput = serde_json::from_value(p).unwrap();
        assert_eq!(back.parent_revision_id, None);
    }

    #[test]
    fn failure_codes_round_trip_by_name() {
        for code in FailureCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, json!(code.as_str()));
            assert_eq!(FailureCode::parse(code.as_str()), Some(code));
        }
        assert_eq!(FailureCode::parse("timout"), None);
    }

    /// A refusal keeps its details; one recorded before they were kept still reads.
    #[test]
    fn a_refused_publication_keeps_its_details() {
        let mut details = serde_json::Map::new();
        details.insert("scope".into(), json!("owner"));
        details.insert("retryAfterSeconds".into(), json!(86_400));
        let p = Publication::Refused {
            code: "quota".into(),
            message: "m".into(),
            details,
        };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(serde_json::from_value::<Publication>(json).unwrap(), p);
        let old: Publication =
            serde_json::from_value(json!({"as": "refused", "code": "quota", "message": "m"}))
                .unwrap();
        assert!(matches!(old, Publication::Refused { details, .. } if details.is_empty()));
    }

    #[test]
    fn a_publication_is_tagged() {
        let p = Publication::Stored {
            revision_id: "rev-1".into(),
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"as": "stored", "revisionId": "rev-1"})
        );
    }

    /// Every failure code a queue script writes is one of [`FailureCode`]: the literals
    /// after `code = ` (a failure built in Lua) and the code argument of `release(...)`
    /// (its 8th), read from `queue/lua/*.lua`.
    #[test]
    fn every_failure_code_the_scripts_write_is_in_the_enum() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/lua");
        let mut seen = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for after in text.split("code = '").skip(1) {
                seen.push((path.clone(), after.split('\'').next().unwrap().to_string()));
            }
            for call in text.split("release(").skip(1) {
                // The prelude's own definition names its parameters, not literals.
                let args: Vec<&str> = call.split(',').map(str::trim).collect();
                if let Some(code) = args.get(7).and_then(|a| a.strip_prefix('\'')) {
                    seen.push((path.clone(), code.trim_end_matches('\'').to_string()));
                }
            }
        }
        // claim.lua releases with `cancelled` and `timeout`, reap.lua fails with `cancelled`.
        assert!(seen.len() >= 3, "found too few failure literals: {seen:?}");
        for (path, code) in &seen {
            assert!(
                FailureCode::parse(code).is_some(),
                "{path:?} writes failure code {code:?}, which horst_queue::FailureCode does not know"
            );
        }
    }
}
