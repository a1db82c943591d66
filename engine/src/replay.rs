//! Replays `{ seed, actions: [{ action, ticks }] }`, checked strictly against the contract.

use crate::format::limits::*;
use crate::EngineError;
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    pub action: u8,
    pub ticks: u16,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Replay {
    pub seed: u32,
    pub actions: Vec<Step>,
}

impl Replay {
    pub fn total_ticks(&self) -> u64 {
        self.actions.iter().map(|s| s.ticks as u64).sum()
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "an integer",
        Value::Number(_) => "a fractional number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn shown(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        other => kind(other).to_string(),
    }
}

/// Parses replay JSON text: at most 1 MiB as compact JSON, then `parse_replay`.
pub fn parse_replay_json(text: &str) -> Result<Replay, EngineError> {
    if text.len() > 16 * REPLAY_MAX_BYTES {
        return Err(EngineError::TooLarge(format!(
            "replay is {} bytes; at most {REPLAY_MAX_BYTES} bytes of compact JSON are allowed",
            text.len()
        )));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| EngineError::InvalidInput(format!("replay is not valid JSON: {e}")))?;
    let compact = serde_json::to_string(&value)
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if compact > REPLAY_MAX_BYTES {
        return Err(EngineError::TooLarge(format!(
            "replay is {compact} bytes as compact JSON; at most {REPLAY_MAX_BYTES} are allowed"
        )));
    }
    parse_replay(&value)
}

/// Strict: only `seed` and `actions` (and `action`, `ticks` per step), integers in range,
/// at most 36,000 steps and 36,000 ticks in total.
pub fn parse_replay(value: &Value) -> Result<Replay, EngineError> {
    let invalid = |m: String| Err(EngineError::InvalidInput(m));
    let Value::Object(obj) = value else {
        return invalid(format!(
            "replay must be an object {{\"seed\": ..., \"actions\": [...]}}, got {}",
            kind(value)
        ));
    };
    for k in obj.keys() {
        if k != "seed" && k != "actions" {
            return invalid(format!(
                "replay has an unknown field `{k}`; only `seed` and `actions` are allowed"
            ));
        }
    }
    let seed = match obj.get("seed") {
        None => return invalid("replay.seed is required (an integer 0-4294967295)".into()),
        Some(v) => match v.as_u64() {
            Some(s) if s <= u32::MAX as u64 => s as u32,
            _ => {
                return invalid(format!(
                    "replay.seed must be an integer 0-4294967295, got {}",
                    shown(v)
                ))
            }
        },
    };
    let steps = match obj.get("actions") {
        None => return invalid("replay.actions is required (an array of {action, ticks})".into()),
        Some(Value::Array(a)) => a,
        Some(v) => return invalid(format!("replay.actions must be an array, got {}", kind(v))),
    };
    if steps.len() > REPLAY_MAX_ACTIONS {
        return Err(EngineError::TooLarge(format!(
            "replay.actions has {} steps; at most {REPLAY_MAX_ACTIONS} are allowed",
            steps.len()
        )));
    }
    let mut actions = Vec::with_capacity(steps.len());
    let mut total: u64 = 0;
    for (i, s) in steps.iter().enumerate() {
        let Value::Object(o) = s else {
            return invalid(format!(
                "replay.actions[{i}] must be an object {{\"action\": 0-19, \"ticks\": 1-600}}, got {}",
                kind(s)
            ));
        };
        for k in o.keys() {
            if k != "action" && k != "ticks" {
                return invalid(format!(
                    "replay.actions[{i}] has an unknown field `{k}`; only `action` and `ticks` are allowed"
                ));
            }
        }
        let action = match o.get("action") {
            None => {
                return invalid(format!(
                    "replay.actions[{i}].action is required (an integer 0-19)"
                ))
            }
            Some(v) => match v.as_u64() {
                Some(a) if a <= REPLAY_MAX_ACTION => a as u8,
                _ => {
                    return invalid(format!(
                        "replay.actions[{i}].action must be an integer 0-19, got {}",
                        shown(v)
                    ))
                }
            },
        };
        let ticks = match o.get("ticks") {
            None => {
                return invalid(format!(
                    "replay.actions[{i}].ticks is required (an integer 1-600)"
                ))
            }
            Some(v) => match v.as_u64() {
                Some(t) if (1..=REPLAY_MAX_STEP_TICKS).contains(&t) => t as u16,
                _ => {
                    return invalid(format!(
                        "replay.actions[{i}].ticks must be an integer 1-600, got {}",
                        shown(v)
                    ))
                }
            },
        };
        total += ticks as u64;
        if total > REPLAY_MAX_TOTAL_TICKS {
            return Err(EngineError::TooLarge(format!(
                "replay has more than {REPLAY_MAX_TOTAL_TICKS} ticks in total (reached {total} at replay.actions[{i}])"
            )));
        }
        actions.push(Step { action, ticks });
    }
    Ok(Replay { seed, actions })
}
