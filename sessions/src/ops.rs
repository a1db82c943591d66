//! The host's `Op`s (section 3), parsed with error messages that say how to fix the request.

use crate::error::ProtocolError;
use serde_json::{json, Value};

/// Most ops one `/ops` request may carry.
pub const MAX_OPS: usize = 100;

/// One host operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    State {
        state: Value,
    },
    Observation {
        player_id: String,
        observation: Value,
    },
    LegalActions {
        player_id: String,
        actions: Vec<Value>,
    },
    Reject {
        player_id: String,
        reason: Value,
        action_id: Option<String>,
    },
    End {
        result: Value,
        reason: Option<String>,
    },
}

impl Op {
    /// Parses the body of `POST /ops`: `{ ops: [...] }` with at most 100 entries.
    pub fn parse_batch(body: &Value) -> Result<Vec<Op>, ProtocolError> {
        let ops = body.get("ops").and_then(Value::as_array).ok_or_else(|| {
            ProtocolError::bad_request(
                "body must be {\"ops\": [...]}, e.g. {\"ops\":[{\"op\":\"state\",\"state\":{}}]}",
            )
        })?;
        if ops.len() > MAX_OPS {
            return Err(ProtocolError::bad_request(format!(
                "{} ops in one request; send at most {MAX_OPS} per request and split the rest",
                ops.len()
            )));
        }
        ops.iter()
            .enumerate()
            .map(|(i, op)| {
                Op::parse(op).map_err(|m| ProtocolError::bad_request(format!("ops[{i}]: {m}")))
            })
            .collect()
    }

    /// Parses one op object.
    pub fn parse(op: &Value) -> Result<Op, String> {
        let kind = op.get("op").and_then(Value::as_str).ok_or_else(|| {
            "each op needs an \"op\" field: one of state, observation, legal_actions, reject, end"
                .to_string()
        })?;
        let field = |name: &str| -> Result<Value, String> {
            op.get(name)
                .cloned()
                .ok_or_else(|| format!("op \"{kind}\" needs a \"{name}\" field"))
        };
        let player = || -> Result<String, String> {
            op.get("playerId")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    format!("op \"{kind}\" needs \"playerId\" (a string such as \"p_0123abcd\")")
                })
        };
        Ok(match kind {
            "state" => Op::State {
                state: field("state")?,
            },
            "observation" => Op::Observation {
                player_id: player()?,
                observation: field("observation")?,
            },
            "legal_actions" => Op::LegalActions {
                player_id: player()?,
                actions: match op.get("actions") {
                    Some(Value::Array(a)) => a.clone(),
                    // v1 games clear a player's actions with null.
                    Some(Value::Null) => Vec::new(),
                    _ => {
                        return Err(
                            "op \"legal_actions\" needs \"actions\": an array of submittable actions ([] clears them)"
                                .into(),
                        )
                    }
                },
            },
            "reject" => Op::Reject {
                player_id: player()?,
                reason: op.get("reason").cloned().unwrap_or(Value::Null),
                action_id: match op.get("actionId") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err("\"actionId\" must be a string when present".into()),
                },
            },
            "end" => Op::End {
                result: match op.get("result") {
                    Some(r @ Value::Object(_)) => r.clone(),
                    None | Some(Value::Null) => json!({ "winner": null }),
                    Some(_) => {
                        return Err(
                            "op \"end\" needs \"result\" as an object, e.g. {\"winner\":\"p_0123abcd\"}"
                                .into(),
                        )
                    }
                },
                reason: match op.get("reason") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err("\"reason\" must be a string such as \"host_left\"".into()),
                },
            },
            other => {
                return Err(format!(
                    "unknown op \"{other}\"; use one of state, observation, legal_actions, reject, end"
                ))
            }
        })
    }

    /// Translates a v1 single-purpose endpoint (`PATCH /state`, `/observation`,
    /// `/legal-actions`, `POST /reject-action`, `/end`) into the op it stands for.
    pub fn from_v1(endpoint: &str, body: &Value) -> Result<Op, ProtocolError> {
        let mut op = match body {
            Value::Object(m) => m.clone(),
            _ => return Err(ProtocolError::bad_request("body must be a JSON object")),
        };
        let kind = match endpoint {
            "state" => "state",
            "observation" => "observation",
            "legal-actions" => "legal_actions",
            "reject-action" => "reject",
            "end" => "end",
            other => {
                return Err(ProtocolError::bad_request(format!(
                    "unknown v1 endpoint {other}"
                )))
            }
        };
        op.insert("op".into(), json!(kind));
        Op::parse(&Value::Object(op)).map_err(ProtocolError::bad_request)
    }

    /// The player an op addresses, if any (checked against the seats before anything applies).
    pub fn player_id(&self) -> Option<&str> {
        match self {
            Op::Observation { player_id, .. }
            | Op::LegalActions { player_id, .. }
            | Op::Reject { player_id, .. } => Some(player_id),
            Op::State { .. } | Op::End { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_op() {
        let ops = Op::parse_batch(&json!({"ops": [
            {"op": "state", "state": {"b": 1}},
            {"op": "observation", "playerId": "p_00000001", "observation": [1]},
            {"op": "legal_actions", "playerId": "p_00000001", "actions": [{"type": "move"}]},
            {"op": "reject", "playerId": "p_00000001", "reason": "illegal", "actionId": "a_1"},
            {"op": "end", "result": {"winner": null}, "reason": "host_left"},
        ]}))
        .unwrap();
        assert_eq!(ops.len(), 5);
        assert_eq!(
            ops[4],
            Op::End {
                result: json!({"winner": null}),
                reason: Some("host_left".into())
            }
        );
    }

    #[test]
    fn errors_point_at_the_op_and_say_how_to_fix_it() {
        let e = Op::parse_batch(&json!({"ops": [{"op": "state", "state": 1}, {"op": "legal_actions", "playerId": "p_00000001", "actions": 3}]})).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(
            e.message.starts_with("ops[1]:") && e.message.contains("array"),
            "{e}"
        );
        let many: Vec<Value> = (0..101)
            .map(|_| json!({"op": "state", "state": {}}))
            .collect();
        let e = Op::parse_batch(&json!({ "ops": many })).unwrap_err();
        assert!(e.message.contains("at most 100"), "{e}");
        let e = Op::parse_batch(&json!({"ops": [{"op": "dance"}]})).unwrap_err();
        assert!(e.message.contains("unknown op \"dance\""), "{e}");
    }

    #[test]
    fn v1_endpoints_map_to_ops() {
        let op = Op::from_v1(
            "legal-actions",
            &json!({"playerId": "p_00000001", "actions": []}),
        )
        .unwrap();
        assert_eq!(
            op,
            Op::LegalActions {
                player_id: "p_00000001".into(),
                actions: vec![]
            }
        );
    }
}
