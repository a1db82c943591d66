//! Fuzz-style tests: arbitrary bytes and mutated valid maps and replays never make the engine
//! panic.

use crate::common::*;
use horst_engine::{
    parse_map, parse_replay, parse_replay_json, referee, render_map, validate_map,
    validate_map_bytes, EngineError, Replay, Step,
};
use proptest::prelude::*;
use serde_json::Value;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6675_7a7a),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The characters a map's grammar is made of (`mutate`'s edit 3 picks one).
const MAP_ALPHABET: &[u8] = b"0123456789-.#GEIS^C~ =\n";
/// The characters of a replay's JSON text.
const REPLAY_ALPHABET: &[u8] = b"01234567890123456789-.eE+{}[]:,\" \nacinost";

/// Applies byte-level edits to a valid map: replace, insert, delete, duplicate a line.
fn mutate(text: &str, edits: &[(u8, u16, u8)]) -> Vec<u8> {
    mutate_with(text, edits, MAP_ALPHABET)
}

/// [`mutate`], its edit 3 picking from `alphabet`.
fn mutate_with(text: &str, edits: &[(u8, u16, u8)], alphabet: &[u8]) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for &(op, pos, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = pos as usize % b.len();
        match op % 5 {
            0 => b[i] = byte,
            1 => b.insert(i, byte),
            2 => {
                b.remove(i);
            }
            3 => b[i] = alphabet[byte as usize % alphabet.len()],
            _ => {
                let start = b[..i]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p + 1);
                let line = b[start..end].to_vec();
                b.splice(start..start, line);
            }
        }
    }
    b
}

fn exercise(bytes: &[u8]) {
    let report = validate_map_bytes(bytes);
    assert_eq!(report.valid, report.errors.is_empty());
    for e in report.errors.iter().chain(report.warnings.iter()) {
        assert!(e.line >= 1 && e.column >= 1);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = render_map(text, 0, 0, 120, 30);
        if let Ok(map) = parse_map(text) {
            assert!(report.valid);
            let _ = render_map(
                text,
                (map.width() - 1) as i64,
                (map.height() - 1) as i64,
                7,
                3,
            );
            let rp = Replay {
                seed: 3,
                actions: vec![
                    Step {
                        action: 9,
                        ticks: 90,
                    },
                    Step {
                        action: 11,
                        ticks: 90,
                    },
                    Step {
                        action: 1,
                        ticks: 60,
                    },
                ],
            };
            let _ = referee(&map, &rp);
            // The canonical form is a valid map with the same hash.
            let again = parse_map(&map.canonical()).expect("canonical form parses");
            assert_eq!(again.hash(), map.hash());
        }
    }
}

/// The committed levels' winning replays, as their JSON text.
fn replay_texts() -> Vec<String> {
    level_names()
        .iter()
        .filter_map(|n| std::fs::read_to_string(levels_dir().join(format!("{n}.replay.json"))).ok())
        .collect()
}

/// Any JSON value: scalars at the edges of every type, nested up to four levels, with the
/// replay's own field names among the keys.
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
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("seed|actions|action|ticks|[a-z]{0,5}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value sent for one of a replay's integers: mostly integers at and around its bounds.
fn near_int() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(vec![
            0i64, 1, 2, 19, 20, 599, 600, 601, 36_000, 36_001,
            u32::MAX as i64, u32::MAX as i64 + 1, -1, i64::MIN, i64::MAX,
        ])
        .prop_map(Value::from),
        3 => (0i64..700).prop_map(Value::from),
        1 => Just(Value::from(u64::MAX)),
        1 => prop::sample::select(vec![1.0f64, 1.5, -0.0, 1e300]).prop_map(Value::from),
        1 => arb_json(),
    ]
}

/// One edit of a replay's JSON value: a field or step replaced, dropped or added, the steps
/// repeated.
type Fault = (u8, u16, Value);

fn faults() -> impl Strategy<Value = Vec<Fault>> {
    prop::collection::vec((0u8..9, any::<u16>(), near_int()), 0..4)
}

/// Applies `faults` to a replay's JSON value.
fn apply_faults(v: &mut Value, faults: &[Fault]) {
    for (kind, pos, x) in faults {
        let Value::Object(o) = v else { return };
        let steps = o.get_mut("actions").and_then(Value::as_array_mut);
        match (kind, steps) {
            (0, _) => {
                o.insert("seed".into(), x.clone());
            }
            (1, _) => {
                o.remove("seed");
            }
            (2, _) => {
                o.insert("actions".into(), x.clone());
            }
            (3, _) => {
                o.insert("extra".into(), x.clone());
            }
            (4, Some(a)) => {
                // Twice or 256 times the steps: a long replay runs past the total ticks.
                for _ in 0..if pos % 2 == 0 { 1 } else { 8 } {
                    let copy = a.clone();
                    a.extend(copy);
                }
            }
            (_, Some(a)) if !a.is_empty() => {
                let i = *pos as usize % a.len();
                match (kind, &mut a[i]) {
                    (5, step) => *step = x.clone(),
                    (6, Value::Object(s)) => {
                        s.insert("action".into(), x.clone());
                    }
                    (7, Value::Object(s)) => {
                        s.insert("ticks".into(), x.clone());
                    }
                    (_, Value::Object(s)) => {
                        let field = ["action", "ticks", "tick"][*pos as usize % 3];
                        if s.remove(field).is_none() {
                            s.insert(field.into(), x.clone());
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// A replay parse answers a replay within the contract's limits, which reads back from its
/// JSON as itself, or a typed error with a message.
fn check_replay(parsed: &Result<Replay, EngineError>) {
    match parsed {
        Ok(r) => {
            assert!(r.actions.len() <= 36_000 && r.total_ticks() <= 36_000);
            assert!(r
                .actions
                .iter()
                .all(|s| s.action <= 19 && (1..=600).contains(&s.ticks)));
            let text = serde_json::to_string(r).expect("a replay serialises");
            assert_eq!(parse_replay_json(&text).as_ref(), Ok(r));
        }
        Err(e) => {
            assert!(matches!(e.code(), "invalid_input" | "too_large"), "{e}");
            assert!(!e.message().is_empty(), "{e:?}");
        }
    }
}

/// A replay as a value and as its JSON text parse the same.
fn exercise_replay_value(v: &Value) {
    let parsed = parse_replay(v);
    check_replay(&parsed);
    assert_eq!(parse_replay_json(&v.to_string()), parsed, "{v}");
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        exercise(&bytes);
    }

    #[test]
    fn arbitrary_text(text in "[ -~\n\u{e4}\u{fc}]{0,400}") {
        exercise(text.as_bytes());
        let t = format!("gcv-map 1\nname: f\nsize: 4 2\ngrid:\n{text}");
        exercise(t.as_bytes());
    }

    #[test]
    fn mutated_levels(level_index in 0usize..15, edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..6)) {
        let names = level_names();
        let name = &names[level_index % names.len()];
        let bytes = mutate(&map_text(name), &edits);
        exercise(&bytes);
    }

    #[test]
    fn arbitrary_render_windows(level_index in 0usize..15, x in -5i64..80, y in -5i64..20, w in -2i64..130, h in -2i64..35) {
        let names = level_names();
        let text = map_text(&names[level_index % names.len()]);
        match render_map(&text, x, y, w, h) {
            Ok(r) => {
                prop_assert!((1..=120).contains(&w) && (1..=30).contains(&h) && x >= 0 && y >= 0);
                prop_assert!(r.text.contains("legend:"));
            }
            Err(e) => prop_assert_eq!(e.code(), "invalid_input"),
        }
    }

    #[test]
    fn arbitrary_replay_json(seed in any::<i64>(), steps in prop::collection::vec((any::<i32>(), any::<i32>()), 0..20)) {
        let v = serde_json::json!({
            "seed": seed,
            "actions": steps.iter().map(|(a, t)| serde_json::json!({"action": a, "ticks": t})).collect::<Vec<_>>(),
        });
        match parse_replay(&v) {
            Ok(r) => {
                prop_assert!(seed >= 0 && seed <= u32::MAX as i64);
                prop_assert!(r.actions.iter().all(|s| s.action <= 19 && (1..=600).contains(&s.ticks)));
            }
            Err(e) => prop_assert!(e.code() == "invalid_input" || e.code() == "too_large"),
        }
    }
}

#[test]
fn all_levels_survive_every_single_byte_deletion() {
    // Cheap exhaustive check on the first level: every one-byte deletion.
    let text = map_text("01-erste-schritte");
    for i in 0..text.len() {
        let mut b = text.as_bytes().to_vec();
        b.remove(i);
        exercise(&b);
    }
    let _ = validate_map(&text);
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn mutated_replay_texts(level_index in 0usize..15, edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..4)) {
        let texts = replay_texts();
        let bytes = mutate_with(&texts[level_index % texts.len()], &edits, REPLAY_ALPHABET);
        if let Ok(text) = std::str::from_utf8(&bytes) {
            check_replay(&parse_replay_json(text));
        }
    }

    #[test]
    fn arbitrary_replay_texts(text in "[ -~\n]{0,200}", unicode in "\\PC{0,60}") {
        check_replay(&parse_replay_json(&text));
        check_replay(&parse_replay_json(&unicode));
        check_replay(&parse_replay_json(&format!("{{\"seed\": 1, \"actions\": [{text}]}}")));
    }

    #[test]
    fn arbitrary_json_replays(v in arb_json()) {
        exercise_replay_value(&v);
    }

    #[test]
    fn near_grammar_replays(seed in any::<u32>(), steps in prop::collection::vec((0u8..=19, 1u16..=600), 0..20), faults in faults()) {
        let mut v = serde_json::json!({
            "seed": seed,
            "actions": steps.iter().map(|(a, t)| serde_json::json!({"action": a, "ticks": t})).collect::<Vec<_>>(),
        });
        apply_faults(&mut v, &faults);
        exercise_replay_value(&v);
    }

    #[test]
    fn mutated_replay_values(level_index in 0usize..15, faults in faults()) {
        let texts = replay_texts();
        let mut v: Value = serde_json::from_str(&texts[level_index % texts.len()]).unwrap();
        apply_faults(&mut v, &faults);
        exercise_replay_value(&v);
    }

    #[test]
    fn valid_replays_round_trip(seed in any::<u32>(), steps in prop::collection::vec((0u8..=19, 1u16..=600), 0..60)) {
        let replay = Replay {
            seed,
            actions: steps.iter().map(|&(action, ticks)| Step { action, ticks }).collect(),
        };
        let compact = serde_json::to_string(&replay).unwrap();
        prop_assert_eq!(parse_replay_json(&compact), Ok(replay.clone()));
        let pretty = serde_json::to_string_pretty(&replay).unwrap();
        prop_assert_eq!(parse_replay_json(&pretty), Ok(replay));
    }
}
