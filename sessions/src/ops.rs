//! The host's `Op`s (section 3), parsed with error messages that say how to fix the request.

use crate::error::{ProtocolCode, ProtocolError};
use serde_json::{json, Value};

/// Most ops one `/ops` request may carry.
pub const MAX_OPS: usize = 100;

/// Longest `batchId` of a `POST /ops` body, in characters.
pub const MAX_BATCH_ID_CHARS: usize = crate::retry_key::MAX_RETRY_KEY_CHARS;

/// Largest `state` or `observation`, in bytes of compact JSON. The contract sets no size; the
/// whole record is read and written on every request and sent to every waiting process, so a
/// state is bounded (a chess position with its history is under 2 KiB).
pub const MAX_STATE_BYTES: usize = 64 * 1024;

/// Largest `actions` list of one `legal_actions` op, in bytes of compact JSON.
pub const MAX_LEGAL_ACTIONS_BYTES: usize = 64 * 1024;

/// Largest `reason` of a `reject` and `result` of an `end`, in bytes of compact JSON.
pub const MAX_REASON_BYTES: usize = 4 * 1024;

/// Longest `actionId` of a `reject` (the platform's are `a_` and 16 hex digits) and `reason`
/// of an `end` (a word such as `host_left`), in bytes: each is kept in the record and shown
/// to every agent.
pub const MAX_TAG_BYTES: usize = 64;

/// The size of `v` as compact JSON, counted without building the text.
pub fn json_size(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing a `Value` into a counter cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// `413 too_large` unless `size` fits in `limit` bytes of compact JSON.
/// `what` names the part in the error (formatted only then: every op of every `/ops` call is
/// checked).
fn check_size(
    what: impl std::fmt::Display,
    size: usize,
    limit: usize,
) -> Result<(), ProtocolError> {
    if size > limit {
        return Err(ProtocolError::new(
 ProtocolCode::TooLarge,
            format!(
                "{what} is {size} bytes of JSON; at most {limit} bytes ({} KiB) are accepted: publish less (only what agents need to decide), or split it across players' observations",
                limit / 1024
            ),
        ));
    }
    Ok(())
}

/// `413 too_large` for an `actionId` or an end's `reason` longer than [`MAX_TAG_BYTES`].
fn check_tag(at: &str, field: &str, tag: Option<&str>) -> Result<(), ProtocolError> {
    match tag {
        Some(t) if t.len() > MAX_TAG_BYTES => Err(ProtocolError::new(
            ProtocolCode::TooLarge,
            format!(
                "{at}: \"{field}\" is {} bytes; at most {MAX_TAG_BYTES} are accepted: send the actionId the platform delivered, or a short word as the end's reason (the result object carries the rest)",
                t.len()
            ),
        )),
        _ => Ok(()),
    }
}

/// The fields of a `POST /ops` body.
const BATCH_FIELDS: &[&str] = &["ops", "batchId"];

/// The field of `known` that `field` is a slip of (`actionID`, `player_id`, `batch-id`): the
/// same letters but for case, `_` and `-`, and not the field itself.
fn slip_of<'k>(field: &str, known: &[&'k str]) -> Option<&'k str> {
    // Runs for every field of every op of every `/ops` request: a field as it should be
    // passes at once, and letters are compared in place, nothing allocated.
    if known.contains(&field) {
        return None;
    }
    fn letters(f: &str) -> impl Iterator<Item = u8> + '_ {
        f.bytes()
            .filter(|b| !matches!(b, b'_' | b'-'))
            .map(|b| b.to_ascii_lowercase())
    }
    known
        .iter()
        .find(|k| letters(k).eq(letters(field)))
        .copied()
}

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
        if let Some(m) = body.as_object() {
            if let Some((f, k)) = m.keys().find_map(|f| Some((f, slip_of(f, BATCH_FIELDS)?))) {
                return Err(ProtocolError::bad_request(format!(
                    "the body has no field \"{f}\" (did you mean \"{k}\"?); it is {{\"ops\": [...], \"batchId\"?}}"
                )));
            }
        }
        ops.iter()
            .enumerate()
            .map(|(i, op)| {
                // The slip first: a misspelled `playerId` is named as such, not as missing.
                let parsed = Op::check_fields(op)
                    .and_then(|()| Op::parse(op))
                    .map_err(|m| ProtocolError::bad_request(format!("ops[{i}]: {m}")))?;
                parsed.check_sizes(&format!("ops[{i}]"))?;
                Ok(parsed)
            })
            .collect()
    }

    /// What `/ops` refuses beyond [`Op::parse`] (which the v1 endpoints share, whose bodies
    /// the contract leaves to v1 bridges): a field that is a slip of one the op has (a typo
    /// such as `playerID` or `actionID` was dropped without a word: the reject then hit
    /// whatever was pending), and legal actions no agent can send (`null`, which `/action`
    /// refuses as no move, or a reserved `__` type). Any other field the op does not have is
    /// ignored, as JSON APIs do: a bridge written elsewhere may send fields of its own (a
    /// timestamp, a turn), and refusing them would stop its every batch.
    fn check_fields(op: &Value) -> Result<(), String> {
        let (Some(m), Some(kind)) = (op.as_object(), op.get("op").and_then(Value::as_str)) else {
            return Ok(());
        };
        let fields: &[&str] = match kind {
            "state" => &["op", "state"],
            "observation" => &["op", "playerId", "observation"],
            "legal_actions" => &["op", "playerId", "actions"],
            "reject" => &["op", "playerId", "reason", "actionId"],
            "end" => &["op", "result", "reason"],
            _ => return Ok(()),
        };
        if let Some((f, k)) = m.keys().find_map(|f| Some((f, slip_of(f, fields)?))) {
            return Err(format!(
                "op \"{kind}\" has no field \"{f}\" (did you mean \"{k}\"?); its fields are {}",
                fields.join(", ")
            ));
        }
        let actions = op.get("actions").and_then(Value::as_array);
        for (j, a) in actions.into_iter().flatten().enumerate() {
            let reserved = a
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with("__"));
            if a.is_null() || reserved {
                return Err(format!(
                    "actions[{j}] is {a}, which no agent can send (POST /action refuses null and types starting with \"__\"); publish only submittable actions"
                ));
            }
        }
        Ok(())
    }

    /// The optional `batchId` of a `POST /ops` body (horst's extension): 1-64 characters of
    /// `[A-Za-z0-9_-]`, or absent (`null` counts as absent).
    pub fn batch_id(body: &Value) -> Result<Option<String>, ProtocolError> {
        crate::retry_key::parse(body, "batchId", "one batch")
    }

    /// `413 too_large` for a state, observation, legal-actions list, reason or result over
    /// its limit (`MAX_STATE_BYTES` and the others).
    pub fn check_sizes(&self, at: &str) -> Result<(), ProtocolError> {
        let (what, size, limit) = match self {
            Op::State { state } => ("the state", json_size(state), MAX_STATE_BYTES),
            Op::Observation { observation, .. } => {
                ("the observation", json_size(observation), MAX_STATE_BYTES)
            }
            Op::LegalActions { actions, .. } => (
                "the legal actions",
                // The array's own brackets and commas, without building it.
                actions.iter().map(json_size).sum::<usize>() + actions.len().max(1) + 1,
                MAX_LEGAL_ACTIONS_BYTES,
            ),
            Op::Reject {
                reason, action_id, ..
            } => {
                check_tag(at, "actionId", action_id.as_deref())?;
                ("the reason", json_size(reason), MAX_REASON_BYTES)
            }
            Op::End { result, reason } => {
                check_tag(at, "reason", reason.as_deref())?;
                ("the result", json_size(result), MAX_REASON_BYTES)
            }
        };
        check_size(format_args!("{at}: {what}"), size, limit)
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
        let op = Op::parse(&Value::Object(op)).map_err(ProtocolError::bad_request)?;
        op.check_sizes(endpoint)?;
        Ok(op)
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
        assert_eq!(e.status(), 400);
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

    /// `/ops` names a field an op does not have (a typo of `playerId` or `actionId` was
    /// dropped, and the reject hit whatever was pending) and legal actions no agent can send;
    /// the v1 endpoints, whose bodies v1 bridges wrote, still ignore what they do not read.
    #[test]
    fn an_ops_field_the_op_does_not_have_is_named() {
        for (op, needles) in [
            (
                json!({"op": "reject", "playerId": "p_00000001", "actionID": "a_1"}),
                vec![
                    "no field \"actionID\"",
                    "did you mean \"actionId\"",
                    "playerId, reason, actionId",
                ],
            ),
            (
                json!({"op": "legal_actions", "player_id": "p_00000001", "actions": []}),
                vec![
                    "op \"legal_actions\" has no field \"player_id\"",
                    "did you mean \"playerId\"",
                    "op, playerId, actions",
                ],
            ),
            (
                json!({"op": "observation", "playerId": "p_00000001", "Observation": {}}),
                vec!["did you mean \"observation\""],
            ),
            (
                json!({"op": "legal_actions", "playerId": "p_00000001", "actions": ["e4", null]}),
                vec!["actions[1] is null", "submittable"],
            ),
            (
                json!({"op": "legal_actions", "playerId": "p_00000001", "actions": [{"type": "__timeout__"}]}),
                vec!["actions[0]", "\"__\""],
            ),
        ] {
            let e =
                Op::parse_batch(&json!({"ops": [{"op": "state", "state": {}}, op]})).unwrap_err();
            assert_eq!((e.status(), e.code.as_str()), (400, "bad_request"), "{e}");
            assert!(e.message.starts_with("ops[1]: "), "{e}");
            for n in needles {
                assert!(e.message.contains(n), "{n} in {e}");
            }
        }
        let e = Op::parse_batch(&json!({"ops": [], "batchID": "b1"})).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(e.message.contains("did you mean \"batchId\""), "{e}");
        // A field that is no slip of the op's own is ignored: bridges written elsewhere send
        // fields of their own.
        assert!(Op::parse_batch(&json!({"ops": [
            {"op": "legal_actions", "playerId": "p_00000001", "actions": [], "turn": 3},
            {"op": "state", "state": {}, "ts": 1733600000000u64},
        ], "sentAt": 5}))
        .is_ok());
        // Every field of every op, nulls included, is taken.
        assert!(Op::parse_batch(&json!({"batchId": null, "ops": [
            {"op": "state", "state": null},
            {"op": "reject", "playerId": "p_00000001", "reason": null, "actionId": null},
            {"op": "end", "result": null, "reason": null},
        ]}))
        .is_ok());
        // v1 bodies as before.
        let v1 = json!({"playerId": "p_00000001", "actions": [null], "sessionId": "ses_x"});
        assert!(Op::from_v1("legal-actions", &v1).is_ok());
    }

    /// A reject's `actionId` and an end's `reason` are kept in the record and shown to every
    /// agent: a megabyte of either was accepted.
    #[test]
    fn an_action_id_and_an_end_reason_have_size_limits() {
        let tag = |n: usize| "a".repeat(n);
        for (op, v1) in [
            (
                json!({"op": "reject", "playerId": "p_00000001", "actionId": tag(MAX_TAG_BYTES + 1)}),
                (
                    "reject-action",
                    json!({"playerId": "p_00000001", "actionId": tag(100_000)}),
                ),
            ),
            (
                json!({"op": "end", "reason": tag(MAX_TAG_BYTES + 1)}),
                ("end", json!({"reason": tag(100_000)})),
            ),
        ] {
            let e = Op::parse_batch(&json!({ "ops": [op] })).unwrap_err();
            assert_eq!((e.status(), e.code.as_str()), (413, "too_large"), "{e}");
            let e = Op::from_v1(v1.0, &v1.1).unwrap_err();
            assert_eq!((e.status(), e.code.as_str()), (413, "too_large"), "{e}");
        }
        let fits = json!({"ops": [
            {"op": "reject", "playerId": "p_00000001", "actionId": tag(MAX_TAG_BYTES)},
            {"op": "end", "reason": tag(MAX_TAG_BYTES)},
        ]});
        assert!(Op::parse_batch(&fits).is_ok());
    }

    #[test]
    fn states_observations_actions_and_reasons_have_size_limits() {
        let big = |n: usize| json!("x".repeat(n));
        assert_eq!(json_size(&json!({"a": [1, "b"]})), 13);
        // Exactly at the limit is fine (a string's JSON is its text plus two quotes).
        let ok =
            Op::parse_batch(&json!({"ops": [{"op": "state", "state": big(MAX_STATE_BYTES - 2)}]}));
        assert!(ok.is_ok());
        for (op, needle) in [
            (
                json!({"op": "state", "state": big(MAX_STATE_BYTES)}),
                "the state",
            ),
            (
                json!({"op": "observation", "playerId": "p_00000001", "observation": big(MAX_STATE_BYTES)}),
                "the observation",
            ),
            (
                json!({"op": "legal_actions", "playerId": "p_00000001", "actions": [big(MAX_LEGAL_ACTIONS_BYTES / 2), big(MAX_LEGAL_ACTIONS_BYTES / 2)]}),
                "the legal actions",
            ),
            (
                json!({"op": "reject", "playerId": "p_00000001", "reason": big(MAX_REASON_BYTES)}),
                "the reason",
            ),
            (
                json!({"op": "end", "result": {"winner": big(MAX_REASON_BYTES)}}),
                "the result",
            ),
        ] {
            let e =
                Op::parse_batch(&json!({"ops": [{"op": "state", "state": {}}, op]})).unwrap_err();
            assert_eq!((e.status(), e.code.as_str()), (413, "too_large"), "{e}");
            assert!(
                e.message.starts_with(&format!("ops[1]: {needle} is ")),
                "{e}"
            );
            assert!(e.message.contains("KiB"), "{e}");
        }
        let e = Op::from_v1("state", &json!({"state": big(MAX_STATE_BYTES)})).unwrap_err();
        assert_eq!((e.status(), e.code.as_str()), (413, "too_large"));
        assert_eq!(e.body()["code"], "too_large");
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

    #[test]
    fn a_batch_id_is_optional_and_checked() {
        // The rule itself is `retry_key`'s (its tests); here, that `batchId` is what it reads.
        assert_eq!(Op::batch_id(&json!({"ops": []})).unwrap(), None);
        let id = "0f8a-b_C".to_string();
        assert_eq!(Op::batch_id(&json!({"batchId": id})).unwrap(), Some(id));
        let e = Op::batch_id(&json!({ "batchId": "a b" })).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(
            e.message.contains("batchId") && e.message.contains("one batch"),
            "{e}"
        );
    }
}
