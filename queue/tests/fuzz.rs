//! Fuzz-style tests of the job contract as a worker, the gateway and the operator read it
//! back from a job's record: its input, its result (each kind's report), its failure code,
//! its publication, and a client's `X-Request-Id`; arbitrary JSON and text, and real-shaped
//! reports with a value replaced, dropped or added. Nothing panics; what reads back writes
//! the JSON it reads back from, and an input's fingerprint does not depend on how its JSON
//! was written.

use horst_queue::{
    fingerprint, valid_request_id, FailureCode, JobInput, JobKind, JobResult, Publication,
    REQUEST_ID_MAX,
};
use proptest::prelude::*;
use serde_json::{json, Value};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6675_7a7a),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Any JSON value, with the contract's field names among the keys.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Floats that read back exactly: serde_json (without `float_roundtrip`) may read
        // the shortest text of some extreme floats back one unit in the last place off.
        any::<i32>().prop_map(|n| Value::from(f64::from(n) / 8.0)),
        "[ -~]{0,12}".prop_map(Value::from),
        prop::sample::select(vec!["won", "lost", "unresolved", "stored", "refused"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                "map|seed|replay|name|parentRevisionId|revisionId|outcome|won|ticks|as|reason|code|message|[a-z]{0,5}",
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A report as a worker writes it: every field set.
fn referee_result() -> Value {
    json!({"outcome": "won", "won": true, "dead": false, "ticks": 412,
        "position": {"x": 3, "y": 4, "subX": 0, "subY": 17}, "deathTick": null,
        "deathCause": null, "stateHash": "ab", "mapHash": "cd",
        "feasibility": {"verdict": "fair"}, "warnings": [{"code": "frame_perfect"}],
        "engineVersion": "e1", "policyVersion": "p1"})
}

fn playtest_result() -> Value {
    json!({"outcome": "unresolved", "won": false, "ticks": 0, "seed": 1, "mapHash": "cd",
        "replay": null, "engineVersion": "e1", "policyVersion": "p1",
        "reason": "time_limit", "proof": "relaxed_graph", "explored": 123456,
        "bestDistance": 7, "hint": "h", "feasibility": null, "warnings": []})
}

/// A value put into a report: mostly at the edges of the fields' types.
fn near_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::sample::select(vec![
            json!(0), json!(-1), json!(u32::MAX), json!(u32::MAX as u64 + 1), json!(u64::MAX),
            json!(1.5), json!(""), json!(null), json!(true), json!("won"), json!([]), json!({}),
        ]),
        1 => arb_json(),
    ]
}

/// A stored result of `kind` reads as that kind's report, which reads back from its own
/// JSON as itself.
fn exercise_result(kind: JobKind, text: &str) {
    if let Some(r) = JobResult::parse(kind, text) {
        assert_eq!(r.playtest().is_some(), kind == JobKind::Playtest);
        assert_eq!(r.referee().is_some(), kind != JobKind::Playtest);
        let again = r.to_value().to_string();
        assert_eq!(JobResult::parse(kind, &again).as_ref(), Some(&r), "{again}");
    }
}

/// A stored input reads back from its own JSON as itself, and its fingerprint is that of
/// the same JSON written any other way.
fn exercise_input(v: &Value) {
    if let Ok(input) = serde_json::from_value::<JobInput>(v.clone()) {
        let stored = input.to_value();
        assert_eq!(
            serde_json::from_value::<JobInput>(stored.clone())
                .ok()
                .as_ref(),
            Some(&input)
        );
        for kind in JobKind::ALL {
            let fp = fingerprint(kind, &stored);
            assert!(fp.len() == 64 && fp.bytes().all(|b| b.is_ascii_hexdigit()));
            let pretty: Value =
                serde_json::from_str(&serde_json::to_string_pretty(&stored).unwrap()).unwrap();
            assert_eq!(fingerprint(kind, &pretty), fp);
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn arbitrary_json_as_the_contract(v in arb_json(), text in "[ -~]{0,60}") {
        exercise_input(&v);
        for kind in JobKind::ALL {
            exercise_result(kind, &v.to_string());
            exercise_result(kind, &text);
        }
        if let Ok(p) = serde_json::from_value::<Publication>(v.clone()) {
            let again = serde_json::to_value(&p).unwrap();
            prop_assert_eq!(serde_json::from_value::<Publication>(again).ok(), Some(p));
        }
        for s in [text.as_str(), v.as_str().unwrap_or_default()] {
            if let Some(code) = FailureCode::parse(s) {
                prop_assert_eq!(code.as_str(), s);
            }
            if let Some(kind) = JobKind::parse(s) {
                prop_assert_eq!(kind.as_str(), s);
            }
            if valid_request_id(s) {
                prop_assert!(!s.is_empty() && s.len() <= REQUEST_ID_MAX);
            }
        }
    }

    // Not a null replay: `Some(Null)` is written as `"replay": null`, which reads back as no
    // replay (the gateway admits only replays the engine parsed, never null).
    #[test]
    fn inputs_as_admitted(map in "\\PC{0,40}", seed in any::<i64>(), replay in arb_json().prop_filter("not null", |v| !v.is_null()), name in "[a-z-]{1,30}", parent in prop::option::of("[a-z0-9.]{1,20}"), which in 0u8..4) {
        let input = match which {
            0 => JobInput::playtest(map, seed),
            1 => JobInput::simulate(map, replay),
            2 => JobInput::submit(map, replay, name, parent),
            _ => JobInput::recheck(map, replay, name),
        };
        let stored = input.to_value();
        prop_assert_eq!(serde_json::from_value::<JobInput>(stored.clone()).ok(), Some(input));
        exercise_input(&stored);
    }

    #[test]
    fn reports_with_a_value_changed(playtest in any::<bool>(), field in any::<usize>(), kind in 0u8..3, v in near_value(), kind_index in 0usize..4) {
        let mut report = if playtest { playtest_result() } else { referee_result() };
        let obj = report.as_object_mut().unwrap();
        let key = obj.keys().nth(field % obj.len()).unwrap().clone();
        match kind {
            0 => {
                obj.insert(key, v);
            }
            1 => {
                obj.remove(&key);
            }
            _ => {
                obj.insert(format!("{key}2"), v);
            }
        }
        // The report as each kind's record holds it (a playtest's in a referee job too).
        exercise_result(JobKind::ALL[kind_index], &report.to_string());
        // Unchanged, each reads as its own kind.
        prop_assert!(JobResult::parse(JobKind::Playtest, &playtest_result().to_string()).is_some());
        prop_assert!(JobResult::parse(JobKind::Simulate, &referee_result().to_string()).is_some());
    }
}
