//! Fuzz-style tests of what this crate reads back from Redis: a stored session value with
//! its base (`record::decode`: the rev, the delta, the deflated base, the MessagePack
//! record), the base's inflation and the delta on their own, an earlier version's JSON
//! record, a stored event (`decode_event`) and stored replay lines (`replay::parse_lines`,
//! then `assemble` and the think times), each arbitrary, byte-mutated from a real game's, or
//! with one value of its MessagePack changed. Nothing panics; a refusal is an error with a
//! message (or `None` where the reader skips what it cannot read).
//!
//! Run with `cargo test -p horst-rcadia --lib fuzz::` (the crate's other tests need Redis).

use horst_sessions::{Event, GameInfo, HostKind, NewSession, Op, Session, Timings};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::record::{self, StoredForms};
use crate::replay::{self, Line};
use crate::{delta, RcadiaError};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6675_7a7a),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const T0: u64 = 1_791_399_600_000;

/// A two-player game played to its end, with the replay lines of every write.
fn game() -> (Session, Vec<Line>) {
    let (mut s, _) = Session::create(
        NewSession {
            session_id: "ses_beef00000001".into(),
            config: json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true,
                "sdkVersion": "2.0.0", "turnTimeout": 10}),
            host_identity: "agent:agt_house".into(),
            host_kind: HostKind::Agent,
            game: GameInfo::default(),
            timings: Timings::default(),
        },
        T0,
    )
    .unwrap();
    let mut lines = replay::lines_of_write(None, &s, T0);
    let ops = |v: Value| Event::PublishOps {
        ops: Op::parse_batch(&json!({ "ops": v })).unwrap(),
        batch_id: None,
    };
    let (a, b) = ("p_00000001", "p_00000002");
    let events = [
        Event::Join {
            player_id: a.into(),
            identity: "agent:agt_a".into(),
            as_name: Some("Ä".into()),
        },
        Event::Join {
            player_id: b.into(),
            identity: "user:bob".into(),
            as_name: None,
        },
        ops(json!([
            {"op": "state", "state": {"board": [1, -2, null, "x"]}},
            {"op": "legal_actions", "playerId": a, "actions": ["go", {"to": 1.5}]},
        ])),
        Event::Action {
            player_id: a.into(),
            action: json!("go"),
            turn: None,
            action_id: "a_0000000000000001".into(),
            idempotency_key: None,
        },
        ops(json!([
            {"op": "reject", "playerId": a, "reason": "no", "actionId": "a_0000000000000001"},
            {"op": "legal_actions", "playerId": b, "actions": [1]},
        ])),
        Event::Action {
            player_id: b.into(),
            action: json!(1),
            turn: None,
            action_id: "a_0000000000000002".into(),
            idempotency_key: None,
        },
        ops(json!([
            {"op": "state", "state": {"board": [2]}},
            {"op": "end", "result": {"winner": b}, "reason": "done"},
        ])),
    ];
    for (i, ev) in events.into_iter().enumerate() {
        let before = s.clone();
        let at = T0 + 1000 * (i as u64 + 1);
        s.apply(ev, at).unwrap();
        lines.extend(replay::lines_of_write(Some(&before), &s, at));
    }
    (s, lines)
}

/// Byte edits: replace, insert, delete, or flip a bit.
fn mutate(bytes: &[u8], edits: &[(u8, u16, u8)]) -> Vec<u8> {
    let mut b = bytes.to_vec();
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
            _ => b[i] ^= 1 << (byte % 8),
        }
    }
    b
}

fn edits() -> impl Strategy<Value = Vec<(u8, u16, u8)>> {
    prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..5)
}

/// Any JSON value (MessagePack reads into it as well), nested up to three levels.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{0,5}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value put into stored MessagePack: mostly numbers at the edges of their types.
fn near_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(vec![
            json!(i64::MIN), json!(i64::MAX), json!(u64::MAX), json!(-1), json!(0),
            json!(u32::MAX as u64 + 1),
        ]),
        2 => prop::sample::select(vec![
            json!(1), json!(200), json!(1.5), json!(""), json!("p_00000001"), json!(null),
            json!([]), json!({}), json!(true),
        ]),
        1 => arb_json(),
    ]
}

/// Replaces the node of `tree` that `path` reaches (a child picked by each step) with `x`,
/// or drops that node's last child.
fn edit_value(tree: &mut Value, path: &[u16], drop: bool, x: Value) {
    let mut node = tree;
    for &step in path {
        let i = match node {
            Value::Array(a) if !a.is_empty() => step as usize % a.len(),
            Value::Object(o) if !o.is_empty() => step as usize % o.len(),
            _ => break,
        };
        node = match node {
            Value::Array(a) => &mut a[i],
            Value::Object(o) => o.values_mut().nth(i).unwrap(),
            _ => unreachable!(),
        };
    }
    match (drop, &mut *node) {
        (true, Value::Array(a)) if !a.is_empty() => {
            a.pop();
        }
        _ => *node = x,
    }
}

/// `bytes` (after a one-byte tag, if any) as MessagePack with values changed; `None` if
/// they are not MessagePack a JSON value reads.
fn with_values_changed(bytes: &[u8], changes: &[(Vec<u16>, bool, Value)]) -> Option<Vec<u8>> {
    let (tag, body) = match bytes.split_first() {
        Some((&t, rest)) if t < 0x80 => (Some(t), rest),
        _ => (None, bytes),
    };
    let mut tree: Value = rmp_serde::from_slice(body).ok()?;
    for (path, drop, x) in changes {
        edit_value(&mut tree, path, *drop, x.clone());
    }
    let mut out: Vec<u8> = tag.into_iter().collect();
    out.extend(rmp_serde::to_vec(&tree).ok()?);
    Some(out)
}

fn changes() -> impl Strategy<Value = Vec<(Vec<u16>, bool, Value)>> {
    prop::collection::vec(
        (
            prop::collection::vec(any::<u16>(), 1..5),
            any::<bool>(),
            near_value(),
        ),
        1..3,
    )
}

/// A stored value decodes to its record under its rev, which encodes again, or is an
/// internal error that names the session.
fn exercise_stored(value: Vec<u8>, base: Option<Vec<u8>>) {
    let token = record::token_of(&value).map(str::to_string);
    match record::decode("ses_beef00000001", Some(value), base, None) {
        Ok(Some(stored)) => {
            assert_eq!(Some(stored.token.as_str()), token.as_deref());
            let again = record::encode_record(&stored.session).expect("a record encodes");
            let back: Session = rmp_serde::from_slice(&again).expect("and decodes");
            assert_eq!(back, stored.session);
        }
        Ok(None) => panic!("a stored value decodes or is refused"),
        Err(RcadiaError::Internal(m)) => {
            assert!(
                m.starts_with("session ses_beef00000001 does not decode: "),
                "{m}"
            );
            assert!(m.len() > "session ses_beef00000001 does not decode: ".len());
        }
        Err(e) => panic!("decoding is not {e:?}"),
    }
}

/// A stored event reads back as an event object, or not at all.
fn exercise_event(raw: &[u8]) {
    for created in [0, T0, u64::MAX] {
        if let Some(v) = record::decode_event(raw, created) {
            assert!(v.is_object(), "{v}");
        }
    }
}

/// Stored lines read back (what does not read is skipped) and serve: assembled for the
/// public and a player, with thinking times and their median.
fn exercise_lines(raw: &[Vec<u8>]) {
    for start in [None, Some(T0), Some(u64::MAX)] {
        for l in raw {
            let _ = replay::decode_line(l, start);
        }
    }
    let lines = replay::parse_lines(raw);
    assert!(lines.len() <= raw.len());
    for viewer in [None, Some("p_00000001")] {
        let served = replay::assemble(lines.clone(), viewer);
        assert_eq!(served.len(), lines.len());
        let _ = serde_json::to_string(&served).expect("a replay serves as JSON");
        for ms in replay::think_times(&served).values() {
            let (median, p95) = replay::median_p95(ms).expect("times of an agent");
            assert!(median <= p95);
        }
        let _ = replay::seat_of_agent(&served, "agt_a");
    }
}

/// A stored event near its grammar: `[index, type, at, {field: value}]` (tagged `0x01` or
/// not) with the type and field names as codes (some past the table) or text, `at` at the
/// edges of its type, and the values of ids and statuses as the numbers they are stored as.
fn near_event() -> impl Strategy<Value = Vec<u8>> {
    let int = prop_oneof![
        2 => prop::sample::select(vec![i64::MIN, i64::MAX, -1, 0, 1]),
        1 => any::<i64>(),
    ];
    (
        any::<bool>(),
        any::<u64>(),
        prop_oneof![
            (0u8..30).prop_map(Value::from),
            "[a-z_]{0,8}".prop_map(Value::from)
        ],
        int,
        prop::collection::vec((0u8..30, near_value()), 0..4),
        any::<bool>(),
    )
        .prop_map(|(tagged, index, kind, at, fields, coded)| {
            let mut out = if tagged { vec![0x01] } else { Vec::new() };
            let body = if coded {
                let fields: std::collections::BTreeMap<u8, Value> = fields.into_iter().collect();
                rmp_serde::to_vec(&(index, kind, at, fields))
            } else {
                let fields: std::collections::BTreeMap<String, Value> = fields
                    .into_iter()
                    .map(|(k, v)| (format!("f{k}"), v))
                    .collect();
                rmp_serde::to_vec(&(index, kind, at, fields))
            };
            out.extend(body.unwrap());
            out
        })
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn arbitrary_stored_values(body in prop::collection::vec(any::<u8>(), 0..300), base in prop::option::of(prop::collection::vec(any::<u8>(), 0..300)), form in 0u8..4) {
        let value = match form {
            0 => body.clone(),
            1 => [b"7.0000beef ".as_slice(), &body].concat(),
            _ => [b"7.0000beef ~".as_slice(), &body].concat(),
        };
        let base = if form == 3 { base.map(|b| [b"z".as_slice(), &b].concat()) } else { base };
        exercise_stored(value, base);
    }

    #[test]
    fn mutated_stored_values(delta_edits in edits(), base_edits in edits(), which in 0u8..4, rebase in any::<bool>()) {
        let (s, _) = game();
        let before = {
            let mut b = s.clone();
            b.apply(Event::Tick, T0 + 9_000).unwrap();
            b
        };
        // A delta against the base of an earlier record, or a rebase (its own base).
        let first = record::encode_write_as(&before, None, StoredForms::Current).unwrap();
        let enc = if rebase {
            first
        } else {
            record::encode_write_as(&s, Some(&first.base), StoredForms::Current).unwrap()
        };
        let packed = enc
            .stored_base
            .as_deref()
            .cloned()
            .unwrap_or_else(|| record::pack_base(&enc.base));
        let value = [b"9.0000beef ".as_slice(), &enc.body].concat();
        let (value, base) = match which {
            0 => (mutate(&value, &delta_edits), Some(packed)),
            1 => (value, Some(mutate(&packed, &base_edits))),
            2 => (value, Some(mutate(&enc.base, &base_edits))),
            _ => {
                // An earlier version's whole record after its rev.
                let whole = record::encode_record(&s).unwrap();
                ([b"9 ".as_slice(), &mutate(&whole, &delta_edits)].concat(), None)
            }
        };
        exercise_stored(value, base);
    }

    #[test]
    fn records_with_a_value_changed(changes in changes()) {
        let (s, _) = game();
        let whole = record::encode_record(&s).unwrap();
        if let Some(body) = with_values_changed(&whole, &changes) {
            exercise_stored([b"9 ".as_slice(), &body].concat(), None);
        }
    }

    #[test]
    fn deltas(base in prop::collection::vec(any::<u8>(), 0..200), new in prop::collection::vec(any::<u8>(), 0..200), d in prop::collection::vec(any::<u8>(), 0..64)) {
        let made = delta::delta(&base, &new);
        prop_assert_eq!(delta::apply(&base, &made), Some(new));
        if let Some(out) = delta::apply(&base, &d) {
            // Every byte out comes from the delta or a copy of the base.
            prop_assert!(out.len() <= d.len() * base.len().max(1) + d.len());
        }
    }

    #[test]
    fn legacy_json_records(text in "\\PC{0,80}", edits in edits()) {
        let (mut s, _) = game();
        let json = s.to_stored_json().unwrap();
        let mutated = String::from_utf8_lossy(&mutate(json.as_bytes(), &edits)).into_owned();
        for json in [text, mutated] {
            match record::decode_legacy("ses_beef00000001", (Some("3".into()), Some(json))) {
                Ok(Some(stored)) => prop_assert!(stored.legacy),
                Ok(None) => prop_assert!(false, "a record decodes or is refused"),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    #[test]
    fn events(raw in prop::collection::vec(any::<u8>(), 0..120), near in near_event(), index in 0usize..64, edits in edits(), changes in changes(), previous in any::<bool>()) {
        exercise_event(&raw);
        exercise_event(&near);
        let (mut s, _) = game();
        let events = s.take_held_events();
        let e = &events[index % events.len()];
        let forms = if previous { StoredForms::Previous } else { StoredForms::Current };
        let stored = record::encode_event_as(e, T0, forms);
        let back = record::decode_event(&stored, T0);
        prop_assert_eq!(back.as_ref(), Some(e));
        exercise_event(&mutate(&stored, &edits));
        if let Some(changed) = with_values_changed(&stored, &changes) {
            exercise_event(&changed);
        }
    }

    #[test]
    fn replay_lines(raw in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..60), 0..4), edits in edits(), changes in changes(), at in 0usize..64, previous in any::<bool>()) {
        let (_, lines) = game();
        let forms = if previous { StoredForms::Previous } else { StoredForms::Current };
        let stored: Vec<Vec<u8>> = lines.iter().map(|l| replay::encode_line_as(l, T0, forms)).collect();
        prop_assert_eq!(&replay::parse_lines(&stored), &lines);
        exercise_lines(&raw);
        let i = at % stored.len();
        let mut mutated = stored.clone();
        mutated[i] = mutate(&stored[i], &edits);
        exercise_lines(&mutated);
        if let Some(changed) = with_values_changed(&stored[i], &changes) {
            let mut with = stored.clone();
            with[i] = changed;
            exercise_lines(&with);
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// A state stored as its change from the one before reads back as it was published, and
    /// a damaged patch line reads (as the state's size, or garbage skipped) or not at all,
    /// never a panic.
    #[test]
    fn state_patches(old in arb_json(), new in arb_json(), edits in edits(), changes in changes()) {
        let patch = crate::state_patch::diff(&old, &new);
        prop_assert_eq!(crate::state_patch::apply(&old, &patch), Some(new.clone()));
        let _ = crate::state_patch::apply(&new, &patch);
        let start = Line::Start {
            at: T0,
            session_id: "ses_beef00000001".into(),
            series_id: "ser_1".into(),
            round: 1,
            game_id: None,
            game_title: None,
            host: horst_sessions::HostKind::Agent,
            config: json!({}),
            previous_session_id: None,
        };
        let state = |v: &Value, at: u64| Line::State { at, version: at - T0, turn: 1, state: v.clone(), omitted_bytes: None };
        let mut stored = vec![replay::encode_line(&start, T0)];
        let base = if old.is_null() { json!({"x": 1}) } else { old.clone() };
        stored.push(replay::encode_line(&state(&base, T0 + 1), T0));
        let line = replay::encode_state_patch(&state(&new, T0 + 2), &base, T0).expect("a patch line");
        stored.push(line.clone());
        let read = replay::parse_lines(&stored);
        prop_assert_eq!(&read[2], &state(&new, T0 + 2));
        let mut mutated = stored.clone();
        mutated[2] = mutate(&line, &edits);
        exercise_lines(&mutated);
        if let Some(changed) = with_values_changed(&line, &changes) {
            let mut with = stored.clone();
            with[2] = changed;
            exercise_lines(&with);
        }
    }
}
