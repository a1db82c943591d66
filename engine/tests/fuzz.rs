//! Fuzz-style tests: arbitrary bytes and mutated valid maps never make the engine panic.

mod common;
use common::*;
use horst_engine::{
    parse_map, parse_replay, referee, render_map, validate_map, validate_map_bytes, Replay, Step,
};
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6675_7a7a),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Applies byte-level edits to a valid map: replace, insert, delete, duplicate a line.
fn mutate(text: &str, edits: &[(u8, u16, u8)]) -> Vec<u8> {
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
            3 => b[i] = b"0123456789-.#GEIS^C~ =\n"[byte as usize % 23],
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
