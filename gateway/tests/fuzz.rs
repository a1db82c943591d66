//! Fuzz-style tests of what an MCP client sends before any tool runs: one JSON-RPC message
//! (arbitrary bytes, arbitrary JSON, and mutated valid messages), the `initialize` params,
//! a `resources/read` URI, and every tool's `arguments` (arbitrary JSON, and values derived
//! from the tool's own input schema with fields replaced, dropped, nulled or added). Nothing
//! panics; a message is one of the three kinds or a JSON-RPC error with a message; arguments
//! the schema allows are read, and anything else is `invalid_input` or `too_large` with a
//! message.

use horst_gateway::protocol::{self, codes, Capabilities, Incoming, ParseError};
use horst_gateway::resources::{parse_uri, Uri};
use horst_gateway::tools::{Call, Tool};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6675_7a7a),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Any JSON value, with the messages' and the tools' field names among the keys.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[ -~]{0,12}".prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
        prop::sample::select(vec![
            "2.0",
            "tools/call",
            "initialize",
            "validate_map",
            "x-1"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                "jsonrpc|id|method|params|result|error|name|arguments|map|replay|seed|offset|[a-z]{0,5}",
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One message is a request with a string or integer id, a notification or a response, or
/// a refusal whose JSON-RPC error says what is wrong; the id a refusal names is one too.
fn exercise_message(body: &[u8]) {
    let valid_id = |id: &Value| id.is_string() || id.is_i64() || id.is_u64();
    match protocol::parse(body) {
        Ok(Incoming::Request { id, params, .. }) => {
            assert!(valid_id(&id), "{id}");
            assert!(params.is_none_or(|p| p.is_object() || p.is_array()));
        }
        Ok(Incoming::Notification { .. } | Incoming::Response) => {}
        Err(e) => {
            let err = e.to_error();
            let code = err["error"]["code"].as_i64().expect("a code");
            assert!(
                matches!(code, codes::PARSE_ERROR | codes::INVALID_REQUEST),
                "{err}"
            );
            assert!(!err["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .is_empty());
            assert!(err["id"].is_null() || valid_id(&err["id"]), "{err}");
            if let ParseError::Invalid { message, .. } = &e {
                assert!(!message.is_empty());
            }
        }
    }
    let id = protocol::request_id(body);
    assert!(id.is_null() || valid_id(&id), "{id}");
}

/// Byte edits of a message: replace, insert or delete a byte, or put one of JSON's.
fn mutate(text: &str, edits: &[(u8, u16, u8)]) -> Vec<u8> {
    const ALPHABET: &[u8] = b"0123456789-.eE+{}[]:,\" \\nut";
    let mut b = text.as_bytes().to_vec();
    for &(op, pos, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = pos as usize % b.len();
        match op % 4 {
            0 => b[i] = byte,
            1 => b.insert(i, byte),
            2 => {
                b.remove(i);
            }
            _ => b[i] = ALPHABET[byte as usize % ALPHABET.len()],
        }
    }
    b
}

const MESSAGES: [&str; 5] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":"a-7","method":"tools/call","params":{"name":"validate_map","arguments":{"map":"gcv-map 1\n"}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"gcv://levels/erste-schritte"}}"#,
];

/// Values a schema's string allows: its enum, its pattern's characters, or short text.
fn string_for(schema: &Value) -> BoxedStrategy<Value> {
    let min = schema["minLength"].as_u64().unwrap_or(0) as usize;
    let max = (schema["maxLength"].as_u64().unwrap_or(40) as usize).clamp(min.max(1), 40);
    let chars = match schema["pattern"].as_str() {
        Some(p) if p.contains("._-") => "[A-Za-z0-9._-]",
        Some(_) => "[A-Za-z0-9-]",
        None => "[ -~\u{e4}]",
    };
    let regex = format!("{chars}{{{},{max}}}", min.max(1));
    proptest::string::string_regex(&regex)
        .expect("a regex")
        .prop_map(Value::from)
        .boxed()
}

/// A value `schema` (one of the tools' input schemas, or a part of one) allows.
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(choices) = schema["enum"].as_array() {
        return prop::sample::select(choices.clone()).boxed();
    }
    match schema["type"].as_str() {
        Some("string") => string_for(schema),
        Some("integer") => {
            let min = schema["minimum"].as_i64().unwrap_or(i64::MIN);
            let max = schema["maximum"].as_i64().unwrap_or(i64::MAX);
            prop_oneof![
                1 => prop::sample::select(vec![min, max]),
                3 => min..=max,
            ]
            .prop_map(Value::from)
            .boxed()
        }
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("array") => {
            let max = schema["maxItems"].as_u64().unwrap_or(4).min(4) as usize;
            prop::collection::vec(value_for(&schema["items"]), 0..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") => object_for(schema),
        _ => arb_json().boxed(),
    }
}

/// An object `schema` allows: every required property, each optional one now and then.
fn object_for(schema: &Value) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props: Vec<(String, BoxedStrategy<Value>, bool)> = schema["properties"]
        .as_object()
        .map(|p| {
            p.iter()
                .map(|(k, s)| (k.clone(), value_for(s), required.contains(&k.as_str())))
                .collect()
        })
        .unwrap_or_default();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .into_iter()
        .map(|(k, s, required)| {
            let present = if required {
                Just(true).boxed()
            } else {
                any::<bool>().boxed()
            };
            (present, s)
                .prop_map(move |(present, v)| present.then(|| (k.clone(), v)))
                .boxed()
        })
        .collect();
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>()))
        .boxed()
}

/// A tool and arguments its input schema allows.
fn tool_and_arguments() -> impl Strategy<Value = (Tool, Value)> {
    prop::sample::select(Tool::ALL.to_vec())
        .prop_flat_map(|tool| (Just(tool), object_for(tool.input_schema())))
}

/// Reads `arguments` for `tool`: the call of that tool, or a refusal with a message.
fn exercise_arguments(tool: Tool, arguments: Option<&Value>) -> bool {
    match Call::parse(tool, arguments) {
        Ok(call) => {
            assert_eq!(call.tool(), tool);
            true
        }
        Err(e) => {
            assert!(
                matches!(e.code.as_str(), "invalid_input" | "too_large"),
                "{tool:?}: {e:?}"
            );
            assert!(!e.message.is_empty(), "{tool:?}: {e:?}");
            let v = e.to_value();
            assert_eq!(v["error"]["code"], e.code.as_str(), "{v}");
            false
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn arbitrary_bytes_as_messages(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        exercise_message(&bytes);
    }

    #[test]
    fn arbitrary_json_as_messages(v in arb_json(), id in arb_json(), method in "[a-z/_]{0,16}") {
        exercise_message(v.to_string().as_bytes());
        let framed = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": v});
        exercise_message(framed.to_string().as_bytes());
        let result = protocol::initialize_result(Some(&v), "hi", Capabilities::default());
        prop_assert!(protocol::SUPPORTED_VERSIONS.contains(&result["protocolVersion"].as_str().unwrap()));
    }

    #[test]
    fn mutated_messages(which in 0usize..5, edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..5)) {
        exercise_message(&mutate(MESSAGES[which], &edits));
    }

    #[test]
    fn resource_uris(uri in "(gcv://(levels|revisions|format|palette)/?)?[ -~\u{e4}]{0,40}", name in "[A-Za-z0-9-]{1,30}") {
        match parse_uri(&uri) {
            Some(Uri::Level(n)) => prop_assert_eq!(format!("gcv://levels/{n}"), uri.clone()),
            Some(Uri::Revision(id)) => prop_assert_eq!(format!("gcv://revisions/{id}"), uri.clone()),
            _ => {}
        }
        let level = format!("gcv://levels/{name}");
        prop_assert_eq!(parse_uri(&level), Some(Uri::Level(&name)));
    }

    #[test]
    fn arbitrary_json_as_arguments(v in arb_json()) {
        for &tool in Tool::ALL {
            exercise_arguments(tool, Some(&v));
            exercise_arguments(tool, Some(&json!({ "map": v, "name": v })));
        }
    }

    #[test]
    fn arguments_the_schema_allows((tool, args) in tool_and_arguments()) {
        prop_assert!(exercise_arguments(tool, Some(&args)), "{:?} refused {}", tool, args);
        if args.as_object().is_some_and(|o| o.is_empty()) {
            prop_assert!(exercise_arguments(tool, None));
        }
    }

    #[test]
    fn arguments_near_the_schema((tool, args) in tool_and_arguments(), faults in prop::collection::vec((0u8..5, any::<u16>(), arb_json()), 1..4)) {
        let mut args = args;
        let names: Vec<String> = tool.input_schema()["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        for (kind, pick, v) in faults {
            let obj = args.as_object_mut().unwrap();
            let name = names.get(pick as usize % names.len().max(1)).cloned().unwrap_or_default();
            match kind {
                0 => {
                    obj.insert(name, v);
                }
                1 => {
                    obj.remove(&name);
                }
                2 => {
                    obj.insert(name, Value::Null);
                }
                3 => {
                    obj.insert(format!("{name}x"), v);
                }
                _ => {
                    // Past a size limit: a map or name far too long.
                    obj.insert(name, Value::from("a".repeat(if pick % 2 == 0 { 70 } else { 300_000 })));
                }
            }
        }
        exercise_arguments(tool, Some(&args));
    }
}
