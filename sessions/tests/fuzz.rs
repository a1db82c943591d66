//! Fuzz-style tests of what hosts and the store hand the session machine: `/ops` batches and
//! the v1 single-op bodies (arbitrary JSON and ops near the grammar, applied to a game under
//! way), `AGENT_CONFIGURE` configs, session and player ids, and a stored record's bytes
//! (MessagePack as the store writes it, and the JSON of earlier versions), arbitrary and
//! mutated. Nothing panics; every refusal is a typed error with a message.

use horst_sessions::ops::{MAX_OPS, MAX_STATE_BYTES, MAX_TAG_BYTES};
use horst_sessions::*;
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

const T0: u64 = 1_791_399_600_000;
const PLAYERS: [&str; 2] = ["p_00000001", "p_00000002"];

/// Any JSON value, with the ops' and configs' field names among the keys.
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
            "state",
            "end",
            "reject",
            "p_00000001",
            "ses_0000beef0001"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                "op|ops|state|playerId|actions|reason|actionId|result|minPlayers|maxPlayers|turnTimeout|[a-z]{0,5}",
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A refusal says what is wrong, with the status its code fixes.
fn check_error(e: &ProtocolError) {
    assert!(!e.message.is_empty(), "{e:?}");
    assert!(matches!(e.status(), 400 | 413), "{e:?}");
    assert_eq!(e.body()["code"], e.code.as_str());
}

/// An op as a host sends it: the inverse of `Op::parse`.
fn op_json(op: &Op) -> Value {
    match op {
        Op::State { state } => json!({"op": "state", "state": state}),
        Op::Observation {
            player_id,
            observation,
        } => json!({"op": "observation", "playerId": player_id, "observation": observation}),
        Op::LegalActions { player_id, actions } => {
            json!({"op": "legal_actions", "playerId": player_id, "actions": actions})
        }
        Op::Reject {
            player_id,
            reason,
            action_id,
        } => {
            json!({"op": "reject", "playerId": player_id, "reason": reason, "actionId": action_id})
        }
        Op::End { result, reason } => json!({"op": "end", "result": result, "reason": reason}),
    }
}

/// A two-player game under way: seated, published, an action delivered to the host.
fn played() -> Session {
    let (mut s, _) = Session::create(
        NewSession {
            session_id: "ses_beef00000001".into(),
            config: json!({"minPlayers": 2, "maxPlayers": 2, "turnBased": true,
                "sdkVersion": "2.0.0", "turnTimeout": 10}),
            host_identity: "host".into(),
            host_kind: HostKind::House,
            game: GameInfo::default(),
            timings: Timings::default(),
        },
        T0,
    )
    .unwrap();
    for (i, who) in ["a", "b"].iter().enumerate() {
        let join = Event::Join {
            player_id: PLAYERS[i].into(),
            identity: who.to_string(),
            as_name: None,
        };
        s.apply(join, T0).unwrap();
    }
    let poll = Event::HostPoll {
        after: Some(0),
        wait_ms: 0,
    };
    s.apply(poll, T0 + 10).unwrap();
    let ops = Op::parse_batch(&json!({"ops": [
        {"op": "legal_actions", "playerId": PLAYERS[0], "actions": ["go", {"to": 1.5}]},
        {"op": "state", "state": {"board": [1, -2, null, "x"]}},
    ]}))
    .unwrap();
    s.apply(
        Event::PublishOps {
            ops,
            batch_id: None,
        },
        T0 + 20,
    )
    .unwrap();
    let action = Event::Action {
        player_id: PLAYERS[0].into(),
        action: json!("go"),
        turn: None,
        action_id: "a_0000000000000001".into(),
        idempotency_key: None,
    };
    s.apply(action, T0 + 30).unwrap();
    let poll = Event::HostPoll {
        after: Some(1),
        wait_ms: 0,
    };
    s.apply(poll, T0 + 40).unwrap();
    s
}

/// Every view of `s` builds (and every player's snapshot).
fn views(s: &Session) {
    for p in s.players() {
        let _ = s.snapshot(&p.player_id);
        let _ = s.action_response(&p.player_id, "a_0000000000000001", s.turn());
    }
    let _ = s.snapshot("p_0badc0de");
    let _ = serde_json::to_string(&s.public_view()).unwrap();
    let _ = serde_json::to_string(&s.available_entry()).unwrap();
    let _ = s.events_since(0, PLAYERS[0]);
}

/// A parsed batch holds at most `MAX_OPS` ops within their limits, each of which reads back
/// from the JSON a host would send for it, and the game under way takes it or refuses it
/// with a typed error.
fn exercise_batch(body: &Value) {
    match Op::parse_batch(body) {
        Ok(ops) => {
            assert!(ops.len() <= MAX_OPS);
            for (i, op) in ops.iter().enumerate() {
                assert_eq!(op.check_sizes("op"), Ok(()));
                assert_eq!(Op::parse(&op_json(op)).as_ref(), Ok(op), "ops[{i}]");
            }
            let mut s = played();
            match s.apply(
                Event::PublishOps {
                    ops,
                    batch_id: None,
                },
                T0 + 50,
            ) {
                Ok(_) => views(&s),
                Err(e) => assert!(!e.message.is_empty(), "{e:?}"),
            }
        }
        Err(e) => check_error(&e),
    }
}

const ENDPOINTS: [&str; 5] = [
    "state",
    "observation",
    "legal-actions",
    "reject-action",
    "end",
];
const KINDS: [&str; 5] = ["state", "observation", "legal_actions", "reject", "end"];

/// A v1 body is the op of its endpoint, or a typed refusal.
fn exercise_v1(endpoint: &str, body: &Value) {
    match Op::from_v1(endpoint, body) {
        Ok(op) => {
            let i = ENDPOINTS
                .iter()
                .position(|e| *e == endpoint)
                .expect("a v1 endpoint");
            assert_eq!(op_json(&op)["op"], KINDS[i]);
            assert_eq!(Op::parse(&op_json(&op)).as_ref(), Ok(&op));
        }
        Err(e) => check_error(&e),
    }
}

/// A string of `n` bytes.
fn sized(n: usize) -> Value {
    Value::from("x".repeat(n))
}

/// One op near the grammar: a valid one of each kind, with now and then a field replaced by
/// any value, dropped, or at its size limit, or the op's name misspelt.
fn near_op() -> impl Strategy<Value = Value> {
    let tag = prop::sample::select(vec![0usize, 1, 8, MAX_TAG_BYTES, MAX_TAG_BYTES + 1, 500]);
    (
        0usize..5,
        prop::sample::select(vec![PLAYERS[0], PLAYERS[1], "p_0badc0de", "", "nobody"]),
        arb_json(),
        tag,
        prop::collection::vec((0u8..8, 0usize..7, arb_json()), 0..3),
    )
        .prop_map(|(kind, player, value, tag, faults)| {
            let mut op = match kind {
                0 => json!({"op": "state", "state": value}),
                1 => json!({"op": "observation", "playerId": player, "observation": value}),
                2 => json!({"op": "legal_actions", "playerId": player, "actions": [value, "go"]}),
                3 => json!({"op": "reject", "playerId": player, "reason": value,
                            "actionId": "a".repeat(tag)}),
                _ => json!({"op": "end", "result": {"winner": value}, "reason": "r".repeat(tag)}),
            };
            let fields = [
                "op",
                "state",
                "playerId",
                "observation",
                "actions",
                "reason",
                "result",
            ];
            for (fault, field, v) in faults {
                let field = fields[field];
                match fault {
                    0 => op[field] = v,
                    1 => {
                        op.as_object_mut().unwrap().remove(field);
                    }
                    2 => {
                        op["op"] =
                            json!(["State", "legal-actions", "end ", "dance", ""][field.len() % 5])
                    }
                    3 => op[field] = sized(MAX_STATE_BYTES - 2 - field.len() % 2),
                    4 => op[field] = sized(MAX_STATE_BYTES - 1),
                    5 => op[field] = Value::Null,
                    6 => op["extra"] = v,
                    _ => op["actionId"] = v,
                }
            }
            op
        })
}

/// A config near `AGENT_CONFIGURE`'s fields, each at or around its bounds or of another type.
fn near_config() -> impl Strategy<Value = Value> {
    let num = prop_oneof![
        6 => prop::sample::select(vec![0i64, 1, 2, 3, 63, 64, 65, -1, i64::MAX]).prop_map(Value::from),
        2 => prop::sample::select(vec![0.5f64, 2.5, -0.5, 1e30, 1e300]).prop_map(Value::from),
        1 => Just(Value::from(u64::MAX)),
        1 => arb_json(),
    ];
    let flag = prop_oneof![4 => any::<bool>().prop_map(Value::from), 1 => arb_json()];
    (
        prop::collection::vec(num, 4),
        prop::collection::vec(flag, 4),
        prop::option::of(arb_json()),
        0u8..16,
    )
        .prop_map(|(nums, flags, sdk, drop)| {
            let mut c = serde_json::Map::new();
            for (i, k) in ["minPlayers", "maxPlayers", "turnTimeout", "maxTurnTimeouts"]
                .iter()
                .enumerate()
            {
                if drop & (1 << i) == 0 {
                    c.insert(k.to_string(), nums[i].clone());
                }
            }
            for (i, k) in [
                "turnBased",
                "simultaneous",
                "forfeitOnTimeout",
                "autoRematch",
            ]
            .iter()
            .enumerate()
            {
                c.insert(k.to_string(), flags[i].clone());
            }
            if let Some(v) = sdk {
                c.insert("sdkVersion".into(), v);
            }
            Value::Object(c)
        })
}

/// A config is the rules of a new table, or a typed refusal.
fn exercise_config(config: &Value) {
    let timings = Timings::default();
    match Rules::from_config(config, &timings) {
        Ok(r) => {
            assert!(1 <= r.min_players && r.min_players <= r.max_players && r.max_players <= 64);
            assert!(r.max_strikes >= 1);
            let back: Rules = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
            assert_eq!(back, r);
            let new = NewSession {
                session_id: "ses_beef00000002".into(),
                config: config.clone(),
                host_identity: "host".into(),
                host_kind: HostKind::House,
                game: GameInfo::default(),
                timings,
            };
            let (s, _) = Session::create(new, T0).expect("a config the rules take makes a table");
            assert_eq!(s.rules(), &r);
            views(&s);
        }
        Err(e) => check_error(&e),
    }
}

/// Byte edits of a stored record: replace, insert, delete, or flip a bit.
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

/// Edits one node of a record's value tree: the node reached by `path` (a child picked by
/// each step, as far as it goes, or stopping early at a step divisible by 5) is replaced by
/// `x`, loses a child, or repeats one.
fn edit_value(v: &mut Value, path: &[u16], kind: u8, x: Value) {
    let mut node = v;
    for &step in path {
        let next = match node {
            Value::Array(a) if !a.is_empty() => step as usize % a.len(),
            Value::Object(o) if !o.is_empty() => step as usize % o.len(),
            _ => break,
        };
        node = match node {
            Value::Array(a) => &mut a[next],
            Value::Object(o) => o.values_mut().nth(next).unwrap(),
            _ => unreachable!(),
        };
        if path.len() > 1 && step % 5 == 0 {
            break;
        }
    }
    match (kind % 4, &mut *node) {
        (1, Value::Array(a)) if !a.is_empty() => {
            a.pop();
        }
        (1, Value::Object(o)) if !o.is_empty() => {
            let k = o.keys().next().cloned().unwrap();
            o.remove(&k);
        }
        (2, Value::Array(a)) if !a.is_empty() => {
            let first = a[0].clone();
            a.push(first);
        }
        _ => *node = x,
    }
}

/// A value put into a record: mostly numbers at the edges of their types.
fn near_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::sample::select(vec![
            json!(0), json!(1), json!(-1), json!(u64::MAX), json!(i64::MIN), json!(u32::MAX),
            json!(1.5), json!(""), json!("p_00000001"), json!("clock"), json!(null), json!([]),
            json!({}), json!(true),
        ]),
        1 => arb_json(),
    ]
}

/// A stored record decodes or is refused; one that decodes encodes to a record that decodes
/// (as itself, from MessagePack), and its views build.
fn exercise_record(bytes: &[u8]) {
    if let Ok(s) = rmp_serde::from_slice::<Session>(bytes) {
        let again = rmp_serde::to_vec(&s).expect("a record encodes");
        assert_eq!(
            rmp_serde::from_slice::<Session>(&again).ok().as_ref(),
            Some(&s)
        );
        views(&s);
    }
    if let Ok(s) = serde_json::from_slice::<Session>(bytes) {
        // Decodes again, not necessarily equal: serde_json (without `float_roundtrip`) may
        // read an extreme float of the record back one unit in the last place off.
        let again = serde_json::to_vec(&s).expect("a record encodes");
        assert!(serde_json::from_slice::<Session>(&again).is_ok());
        views(&s);
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn arbitrary_json_as_ops(v in arb_json(), endpoint in 0usize..6) {
        exercise_batch(&v);
        exercise_batch(&json!({"ops": v}));
        exercise_batch(&json!({"ops": [v]}));
        let endpoint = ENDPOINTS.get(endpoint).copied().unwrap_or("pending-actions");
        exercise_v1(endpoint, &v);
    }

    #[test]
    fn near_grammar_op_batches(ops in prop::collection::vec(near_op(), 0..6), repeat in prop::sample::select(vec![1usize, 1, 1, MAX_OPS / 2, MAX_OPS / 2 + 1])) {
        let ops: Vec<Value> = ops.iter().cycle().take(ops.len() * repeat).cloned().collect();
        exercise_batch(&json!({ "ops": ops }));
    }

    #[test]
    fn near_grammar_v1_bodies(op in near_op(), endpoint in 0usize..6) {
        let endpoint = ENDPOINTS.get(endpoint).copied().unwrap_or("ops");
        let mut body = op;
        if let Value::Object(o) = &mut body {
            o.remove("op");
        }
        exercise_v1(endpoint, &body);
    }

    #[test]
    fn valid_ops_round_trip(kind in 0usize..5, player in 0usize..2, v in arb_json(), tag in prop::option::of("[a-z_0-9]{0,64}")) {
        let player_id = PLAYERS[player].to_string();
        let op = match kind {
            0 => Op::State { state: v },
            1 => Op::Observation { player_id, observation: v },
            2 => Op::LegalActions { player_id, actions: vec![v] },
            3 => Op::Reject { player_id, reason: v, action_id: tag },
            _ => Op::End { result: json!({ "winner": v }), reason: tag },
        };
        let batch = Op::parse_batch(&json!({ "ops": [op_json(&op)] }));
        prop_assert_eq!(batch, Ok(vec![op]));
    }

    #[test]
    fn configs(c in near_config(), v in arb_json()) {
        exercise_config(&c);
        exercise_config(&v);
    }

    #[test]
    fn ids(s in "(ses_|p_)?[0-9a-fA-F]{0,14}", any_text in "\\PC{0,20}", tag in any::<u16>(), n in any::<u32>()) {
        for text in [s.as_str(), any_text.as_str()] {
            if let Some(parts) = parse_session_id(text) {
                prop_assert_eq!(format_session_id(parts.boot_tag, parts.serial), text);
            }
            if is_player_id(text) {
                let n = u32::from_str_radix(&text[2..], 16).unwrap();
                prop_assert_eq!(format_player_id(n), text);
            }
            let _ = TimerKind::from_key(text);
        }
        let id = format_session_id(tag, n);
        prop_assert_eq!(parse_session_id(&id), Some(SessionIdParts { boot_tag: tag, serial: n }));
        prop_assert!(is_player_id(&format_player_id(n)));
    }

    #[test]
    fn arbitrary_bytes_as_records(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        exercise_record(&bytes);
    }

    #[test]
    fn records_with_a_value_changed(edits in prop::collection::vec((prop::collection::vec(any::<u16>(), 1..7), any::<u8>(), near_value()), 1..3), json_form in any::<bool>()) {
        let mut s = played();
        s.take_held_events();
        // The record as a tree of values, in the form it is stored in (MessagePack is
        // positional: arrays where JSON has objects).
        let mut tree: Value = if json_form {
            serde_json::to_value(&s).unwrap()
        } else {
            rmp_serde::from_slice(&rmp_serde::to_vec(&s).unwrap()).unwrap()
        };
        for (path, kind, x) in edits {
            edit_value(&mut tree, &path, kind, x);
        }
        let bytes = if json_form {
            serde_json::to_vec(&tree).unwrap()
        } else {
            rmp_serde::to_vec(&tree).unwrap()
        };
        exercise_record(&bytes);
    }

    #[test]
    fn mutated_records(edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..5), json_form in any::<bool>()) {
        let mut s = played();
        s.take_held_events();
        let stored = if json_form {
            serde_json::to_vec(&s).unwrap()
        } else {
            rmp_serde::to_vec(&s).unwrap()
        };
        exercise_record(&mutate(&stored, &edits));
    }
}
