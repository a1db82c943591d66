//! Bad input gives the documented error, never a panic.

use crate::common::*;
use horst_engine::{
    parse_replay, parse_replay_json, render_map, validate_map, validate_map_bytes, ValidationReport,
};
use serde_json::json;

const GOOD: &str = "gcv-map 1\nname: Test\nsize: 6 3\ngrid:\n......\n......\nGGGGGG\nentities:\nstart 0 1\nnest 5 1\n";

fn codes(r: &ValidationReport) -> Vec<&'static str> {
    r.errors.iter().map(|e| e.code).collect()
}

fn first(text: &str) -> (&'static str, u32, u32) {
    let r = validate_map(text);
    assert!(!r.valid, "expected invalid: {text}");
    let e = &r.errors[0];
    assert!(!e.message.is_empty() && !e.hint.is_empty());
    (e.code, e.line, e.column)
}

#[test]
fn the_good_map_is_valid() {
    let r = validate_map(GOOD);
    assert!(r.valid, "{:?}", r.errors);
}

#[test]
fn truncated_maps() {
    for cut in 1..GOOD.len() - 1 {
        let r = validate_map(&GOOD[..cut]);
        assert!(!r.valid, "truncated at {cut} should be invalid");
        assert!(!r.errors.is_empty());
    }
    assert_eq!(first(&GOOD[..44]).0, "grid_too_short");
    assert_eq!(first("gcv-map 1\nname: x\n").0, "missing_field");
    assert_eq!(first("gcv-map 1\nname: x\nsize: 6 3\n").0, "missing_grid");
    assert_eq!(first("").0, "empty_map");
    assert_eq!(first("  \n\n").0, "empty_map");
    assert_eq!(first("# only a comment\n").0, "missing_header");
}

#[test]
fn binary_and_non_utf8() {
    assert_eq!(first("gcv-map 1\nname: x\u{0}y\n").0, "binary_content");
    let r = validate_map_bytes(&[0x67, 0x63, 0x76, 0xff, 0xfe, 0x00]);
    assert_eq!(codes(&r), vec!["not_utf8"]);
    let r = validate_map_bytes(b"gcv-map 1\nname: \xc3\x28\n");
    assert_eq!((r.errors[0].code, r.errors[0].line), ("not_utf8", 2));
}

#[test]
fn oversized() {
    let big = format!("{GOOD}{}", "# padding\n".repeat(30_000));
    assert!(big.len() > 256 * 1024);
    assert_eq!(first(&big), ("too_large", 1, 1));
    assert_eq!(
        codes(&validate_map_bytes(big.as_bytes())),
        vec!["too_large"]
    );
    let long_line = GOOD.replace("name: Test", &format!("name: {}", "x".repeat(2000)));
    assert_eq!(first(&long_line).0, "line_too_long");
    let wide = GOOD.replace("size: 6 3", "size: 513 3");
    assert_eq!(first(&wide), ("size_out_of_range", 3, 7));
    let long_name = GOOD.replace("name: Test", &format!("name: {}", "x".repeat(61)));
    assert_eq!(first(&long_name).0, "bad_name");
}

#[test]
fn ragged_and_unknown_characters() {
    let ragged = GOOD.replace("......\nGGGGGG", ".....\nGGGGGG");
    assert_eq!(first(&ragged), ("ragged_row", 6, 6));
    let long = GOOD.replace("......\nGGGGGG", ".......\nGGGGGG");
    assert_eq!(first(&long), ("ragged_row", 6, 7));
    let unknown = GOOD.replace("......\nGGGGGG", "..X...\nGGGGGG");
    assert_eq!(first(&unknown), ("unknown_tile", 6, 3));
    let space = GOOD.replace("......\nGGGGGG", ".. ...\nGGGGGG");
    assert_eq!(first(&space), ("unknown_tile", 6, 3));
    // An entity glyph copied from render_map output gets a hint naming the entity line.
    let glyph = GOOD.replace("......\nGGGGGG", "..@...\nGGGGGG");
    let r = validate_map(&glyph);
    assert_eq!((r.errors[0].code, r.errors[0].column), ("unknown_tile", 3));
    assert!(
        r.errors[0].hint.contains("`start 2 1`"),
        "{}",
        r.errors[0].hint
    );
    let extra = GOOD.replace("GGGGGG\n", "GGGGGG\nGGGGGG\n");
    assert_eq!(first(&extra), ("grid_too_long", 8, 1));
}

#[test]
fn header_problems() {
    assert_eq!(
        first(&GOOD.replace("gcv-map 1", "gcv-map 2")),
        ("unsupported_version", 1, 9)
    );
    assert_eq!(
        first(&GOOD.replace("gcv-map 1", "map 1")).0,
        "missing_header"
    );
    assert_eq!(
        first(&GOOD.replace("name: Test", "titel: Test")).0,
        "unknown_field"
    );
    assert_eq!(
        first(&GOOD.replace("size: 6 3", "size: six 3")).0,
        "bad_value"
    );
    assert_eq!(
        first(&GOOD.replace("name: Test\n", "name: Test\nname: Again\n")).0,
        "duplicate_field"
    );
}

#[test]
fn entity_problems() {
    let with = |line: &str| GOOD.replace("nest 5 1\n", &format!("nest 5 1\n{line}\n"));
    assert_eq!(
        first(&with("walker 2 1 speed=17")),
        ("parameter_out_of_range", 11, 18)
    );
    assert_eq!(
        first(&with("walker 2 1 speed=0")).0,
        "parameter_out_of_range"
    );
    assert_eq!(
        first(&with("walker 2 1 speed=fast")).0,
        "bad_parameter_value"
    );
    assert_eq!(
        first(&with("walker 2 1 dir=up")).0,
        "parameter_out_of_range"
    );
    assert_eq!(first(&with("walker 2 1 jump=3")).0, "unknown_parameter");
    assert_eq!(
        first(&with("walker 2 1 speed=3 speed=4")).0,
        "duplicate_parameter"
    );
    assert_eq!(first(&with("walker 2 1 speed")).0, "bad_parameter");
    assert_eq!(first(&with("dragon 2 1")), ("unknown_entity", 11, 1));
    assert_eq!(first(&with("rock 2 1")).0, "unknown_entity");
    assert_eq!(first(&with("walker 2")).0, "bad_entity_line");
    assert_eq!(first(&with("walker two 1")).0, "bad_coordinate");
    assert_eq!(first(&with("walker 6 1")).0, "entity_out_of_bounds");
    assert_eq!(first(&with("walker -1 1")).0, "entity_out_of_bounds");
    assert_eq!(first(&with("walker 2 2")).0, "entity_in_solid");
    assert_eq!(first(&with("start 1 1")).0, "multiple_starts");
    assert_eq!(
        first(&with("platform 4 0 dx=1 width=2")).0,
        "entity_out_of_bounds"
    );
    assert_eq!(first(&GOOD.replace("start 0 1\n", "")).0, "no_start");
    assert_eq!(first(&GOOD.replace("nest 5 1\n", "")).0, "no_nest");
    assert_eq!(
        first(&GOOD.replace("size: 6 3\n", "size: 6 3\ndefault: walker speed=99\n")).0,
        "parameter_out_of_range"
    );
    assert_eq!(
        first(&GOOD.replace("size: 6 3\n", "size: 6 3\ndefault: crumbling delay=0\n")).0,
        "parameter_out_of_range"
    );
    let many = format!("{GOOD}{}", "collectible 1 0\n".repeat(600));
    assert!(codes(&validate_map(&many)).contains(&"too_many_entities"));
    let nests = format!("{GOOD}{}", "nest 2 0\n".repeat(20));
    assert!(codes(&validate_map(&nests)).contains(&"too_many_nests"));
}

#[test]
fn many_errors_are_capped() {
    let rows = ["XXXXXX"; 3].join("\n");
    let text = format!(
        "gcv-map 1\nname: x\nsize: 6 3\ngrid:\n{rows}\nentities:\n{}",
        "dragon 1 1\n".repeat(200)
    );
    let r = validate_map(&text);
    assert!(r.errors.len() <= 101);
    assert_eq!(r.errors.last().map(|e| e.code), Some("too_many_errors"));
}

#[test]
fn render_limits() {
    assert!(render_map(GOOD, 0, 0, 120, 30).is_ok());
    for (x, y, w, h) in [
        (0, 0, 0, 5),
        (0, 0, 121, 5),
        (0, 0, 5, 31),
        (0, 0, 5, 0),
        (-1, 0, 5, 5),
        (6, 0, 5, 5),
        (0, 3, 5, 5),
    ] {
        let e = render_map(GOOD, x, y, w, h).expect_err("out of range");
        assert_eq!(e.code(), "invalid_input", "{x} {y} {w} {h}: {e}");
    }
    assert_eq!(
        render_map("nonsense", 0, 0, 5, 5)
            .expect_err("invalid")
            .code(),
        "validation_failed"
    );
}

#[test]
fn replay_limits() {
    let ok = |v: serde_json::Value| parse_replay(&v).expect("valid replay");
    let err = |v: serde_json::Value| parse_replay(&v).expect_err("invalid replay");
    assert_eq!(
        ok(json!({"seed": 4294967295u64, "actions": []})).seed,
        u32::MAX
    );
    ok(json!({"seed": 0, "actions": [{"action": 19, "ticks": 600}]}));
    let cases = [
        (json!([]), "invalid_input", "replay must be an object"),
        (
            json!({"actions": []}),
            "invalid_input",
            "replay.seed is required",
        ),
        (
            json!({"seed": 1}),
            "invalid_input",
            "replay.actions is required",
        ),
        (
            json!({"seed": -1, "actions": []}),
            "invalid_input",
            "replay.seed must be an integer 0-4294967295, got -1",
        ),
        (
            json!({"seed": 4294967296u64, "actions": []}),
            "invalid_input",
            "replay.seed must be",
        ),
        (
            json!({"seed": 1.5, "actions": []}),
            "invalid_input",
            "replay.seed must be",
        ),
        (
            json!({"seed": "1", "actions": []}),
            "invalid_input",
            "got a string",
        ),
        (
            json!({"seed": 1, "actions": [], "version": 1}),
            "invalid_input",
            "unknown field `version`",
        ),
        (
            json!({"seed": 1, "actions": {}}),
            "invalid_input",
            "replay.actions must be an array",
        ),
        (
            json!({"seed": 1, "actions": [1]}),
            "invalid_input",
            "replay.actions[0] must be an object",
        ),
        (
            json!({"seed": 1, "actions": [{"action": 20, "ticks": 1}]}),
            "invalid_input",
            "replay.actions[0].action must be an integer 0-19, got 20",
        ),
        (
            json!({"seed": 1, "actions": [{"action": -1, "ticks": 1}]}),
            "invalid_input",
            "action must be",
        ),
        (
            json!({"seed": 1, "actions": [{"ticks": 1}]}),
            "invalid_input",
            "replay.actions[0].action is required",
        ),
        (
            json!({"seed": 1, "actions": [{"action": 1}]}),
            "invalid_input",
            "replay.actions[0].ticks is required",
        ),
        (
            json!({"seed": 1, "actions": [{"action": 1, "ticks": 2}, {"action": 1, "ticks": 2}, {"action": 1, "ticks": 2}, {"action": 1, "ticks": 0}]}),
            "invalid_input",
            "replay.actions[3].ticks must be an integer 1-600, got 0",
        ),
        (
            json!({"seed": 1, "actions": [{"action": 1, "ticks": 601}]}),
            "invalid_input",
            "ticks must be an integer 1-600, got 601",
        ),
        (
            json!({"seed": 1, "actions": [{"action": 1, "ticks": 1, "shoot": true}]}),
            "invalid_input",
            "unknown field `shoot`",
        ),
    ];
    for (v, code, msg) in cases {
        let e = err(v.clone());
        assert_eq!(e.code(), code, "{v}: {e}");
        assert!(
            e.message().contains(msg),
            "{v}: {} does not contain {msg}",
            e.message()
        );
    }
    let step = json!({"action": 8, "ticks": 1});
    let too_many = json!({"seed": 1, "actions": vec![step.clone(); 36_001]});
    assert_eq!(err(too_many).code(), "too_large");
    ok(json!({"seed": 1, "actions": vec![step; 36_000]}));
    let too_long = json!({"seed": 1, "actions": vec![json!({"action": 8, "ticks": 600}); 61]});
    let e = err(too_long);
    assert_eq!(e.code(), "too_large");
    assert!(e.message().contains("36000 ticks"), "{}", e.message());
    ok(json!({"seed": 1, "actions": vec![json!({"action": 8, "ticks": 600}); 60]}));
    assert_eq!(
        parse_replay_json("{not json").expect_err("bad json").code(),
        "invalid_input"
    );
    let huge = format!(
        "{{\"seed\": 1, \"actions\": [], \"x\": \"{}\"}}",
        "a".repeat(1_100_000)
    );
    assert_eq!(
        parse_replay_json(&huge).expect_err("huge").code(),
        "too_large"
    );
}

#[test]
fn a_long_replay_is_refereed() {
    // The longest allowed replay on a real level: 36,000 ticks, standing still.
    let map = level("01-erste-schritte");
    let r = horst_engine::referee(&map, &steps(5, &vec![(4, 600); 60]));
    assert_eq!((r.outcome, r.ticks), ("unresolved", 36_000));
}

#[test]
fn the_largest_maps_validate_quickly() {
    // Adversarial for the reachability flood fill: many ledges over long open columns.
    let (w, h) = (512usize, 128usize);
    let mut rows = Vec::new();
    for y in 0..h {
        let row: String = (0..w)
            .map(|x| {
                if y == h - 1 {
                    '#'
                } else if x % 2 == 0 && y % 6 == 5 {
                    '-'
                } else {
                    '.'
                }
            })
            .collect();
        rows.push(row);
    }
    let mut ents = String::from("start 1 126\nnest 511 0\n");
    for i in 0..500 {
        ents.push_str(&format!(
            "collectible {} {}\n",
            (i * 7) % w,
            1 + (i * 3) % 120
        ));
    }
    let text = format!(
        "gcv-map 1\nname: big\nsize: {w} {h}\ngrid:\n{}\nentities:\n{ents}",
        rows.join("\n")
    );
    assert!(text.len() < 256 * 1024);
    let t = std::time::Instant::now();
    let r = validate_map(&text);
    let dt = t.elapsed();
    assert!(r.valid, "{:?}", r.errors.first());
    assert!(dt.as_millis() < 2000, "validation took {dt:?}");
    println!("validated {} bytes in {dt:?}", text.len());
    let t = std::time::Instant::now();
    let _ = render_map(&text, 392, 98, 120, 30).expect("render");
    assert!(t.elapsed().as_millis() < 2000);
}

#[test]
fn every_independent_error_in_one_report() {
    // A ragged row does not hide the entity errors below it.
    let text = GOOD
        .replace("......\nGGGGGG", ".....\nGGGGGG")
        .replace("nest 5 1\n", "nest 5 1\nwalker 2 1 speed=99\nspring 9 1\n");
    let r = validate_map(&text);
    assert_eq!(
        codes(&r),
        [
            "ragged_row",
            "parameter_out_of_range",
            "entity_out_of_bounds"
        ],
        "{:?}",
        r.errors
    );
    // A grid cut short still checks the entities (the missing row reads as empty).
    let short = GOOD.replace("......\n......\nGGGGGG\n", "......\nGGGGGG\n");
    let r = validate_map(&short.replace("nest 5 1\n", "nest 5 1\nflyer 3 0 axis=h range=1 bad\n"));
    assert_eq!(
        codes(&r),
        ["grid_too_short", "bad_parameter"],
        "{:?}",
        r.errors
    );
    // An entity on a broken row is not also called "inside a solid tile".
    let shifted = GOOD.replace("......\nGGGGGG", "G......\nGGGGGG");
    let r = validate_map(&shifted.replace("start 0 1", "start 0 1\ncollectible 0 1"));
    assert_eq!(codes(&r), ["ragged_row"], "{:?}", r.errors);
}

#[test]
fn no_error_derived_from_one_already_reported() {
    // The only nest is outside the map: that error, and not also `no_nest`.
    let r = validate_map(&GOOD.replace("nest 5 1", "nest 50 1"));
    assert_eq!(codes(&r), ["entity_out_of_bounds"], "{:?}", r.errors);
    let r = validate_map(&GOOD.replace("nest 5 1", "nest x 1"));
    assert_eq!(codes(&r), ["bad_coordinate"], "{:?}", r.errors);
    let r = validate_map(&GOOD.replace("start 0 1", "start 0 -1"));
    assert_eq!(codes(&r), ["entity_out_of_bounds"], "{:?}", r.errors);
    // Without any nest line it is `no_nest`.
    let r = validate_map(&GOOD.replace("nest 5 1\n", ""));
    assert_eq!(codes(&r), ["no_nest"]);
    // A wrong `size:` is its own error: not also a missing size, nor every row unexpected.
    for (size, code) in [
        ("size: 600 3", "size_out_of_range"),
        ("size: six 3", "bad_value"),
    ] {
        let r = validate_map(&GOOD.replace("size: 6 3", size));
        assert_eq!(codes(&r), [code], "{:?}", r.errors);
    }
    let r = validate_map(&GOOD.replace("size: 6 3\n", ""));
    assert_eq!(codes(&r), ["missing_field"], "{:?}", r.errors);
    // Rows without `grid:` (or with `entities:` in its place): one `missing_grid`, and the
    // rows and entities are still checked.
    let r = validate_map(&GOOD.replace("grid:\n", "").replace("nest 5 1", "nest 50 1"));
    assert_eq!(
        codes(&r),
        ["missing_grid", "entity_out_of_bounds"],
        "{:?}",
        r.errors
    );
    assert_eq!(r.errors[0].line, 4);
    let r = validate_map(&GOOD.replace("grid:\n", "entities:\n"));
    assert_eq!(codes(&r), ["missing_grid"], "{:?}", r.errors);
}

#[test]
fn warnings_come_with_errors() {
    // An enemy next to the start (a warning) beside a bad parameter (an error).
    let text = GOOD.replace("nest 5 1\n", "nest 5 1\nwalker 2 1 range=1 pause=-5\n");
    let r = validate_map(&text);
    assert!(!r.valid);
    assert_eq!(codes(&r), ["parameter_out_of_range"]);
    let warnings: Vec<&str> = r.warnings.iter().map(|w| w.code).collect();
    assert_eq!(warnings, ["enemy_near_start"], "{:?}", r.warnings);
    // Warnings about tiles are left out while the grid itself is broken.
    let broken = text.replace("......\nGGGGGG", "..^...\nGGGGGX");
    let r = validate_map(&broken.replace("walker 2 1", "walker 2 1 range=0\ncollectible 2 1\nx"));
    assert!(
        r.warnings.iter().all(|w| w.code != "entity_on_spikes"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn hints_count_in_correct_english() {
    let r = validate_map(&GOOD.replace("......\nGGGGGG", ".....\nGGGGGG"));
    assert!(
        r.errors[0].hint.starts_with("add 1 tile ('.'"),
        "{}",
        r.errors[0].hint
    );
    let r = validate_map(&GOOD.replace("......\nGGGGGG", "....\nGGGGGG"));
    assert!(
        r.errors[0].hint.starts_with("add 2 tiles"),
        "{}",
        r.errors[0].hint
    );
    let r = validate_map(&GOOD.replace("......\nGGGGGG", ".......\nGGGGGG"));
    assert!(
        r.errors[0].hint.starts_with("remove 1 tile so"),
        "{}",
        r.errors[0].hint
    );
    let r = validate_map(
        &GOOD
            .replace("size: 6 3", "size: 1 3")
            .replace("......\n......\nGGGGGG", ".\n.\nG")
            .replace("nest 5 1", "nest 0 0"),
    );
    assert!(r.valid, "{:?}", r.errors);
    let r = validate_map(&GOOD.replace("......\n......\nGGGGGG\n", "GGGGGG\n"));
    assert!(
        r.errors[0].message.contains("the grid has 1 row but"),
        "{}",
        r.errors[0].message
    );
    // Every message and hint of these reports: no "1 tiles", "1 rows", "1 nests".
    for text in [
        GOOD.replace("......\nGGGGGG", ".....\nGGGGGG"),
        GOOD.replace("......\n......\nGGGGGG\n", "GGGGGG\n"),
        GOOD.replace("nest 5 1\n", &"nest 5 1\n".repeat(17)),
    ] {
        for i in validate_map(&text).errors {
            for s in [&i.message, &i.hint] {
                for bad in ["1 tiles", "1 rows", "1 nests", "1 grid rows"] {
                    assert!(!s.contains(bad), "{s}");
                }
            }
        }
    }
}

#[test]
fn a_flyer_patrol_must_stay_in_the_map() {
    let wide = "gcv-map 1\nname: f\nsize: 10 6\ngrid:\n..........\n..........\n..........\n..........\n..........\nGGGGGGGGGG\nentities:\nstart 0 4\nnest 9 4\n";
    let with = |f: &str| validate_map(&wide.replace("nest 9 4\n", &format!("nest 9 4\n{f}\n")));
    assert!(with("flyer 5 2 axis=h range=4").valid);
    assert!(with("flyer 5 2 axis=v range=2").valid);
    for f in [
        "flyer 5 2 axis=h range=5",
        "flyer 5 2 range=3",
        "flyer 1 1 axis=h range=2",
    ] {
        let r = with(f);
        assert_eq!(codes(&r), ["entity_out_of_bounds"], "{f}: {:?}", r.errors);
        assert!(
            r.errors[0].hint.contains("lower range to"),
            "{}",
            r.errors[0].hint
        );
    }
}

#[test]
fn comments_end_every_line_outside_the_grid_but_the_name() {
    let base = validate_map(GOOD);
    let hash = horst_engine::parse_map(GOOD).expect("valid").hash();
    for (what, text) in [
        (
            "header",
            GOOD.replace("gcv-map 1\n", "gcv-map 1  # Gletscher\n"),
        ),
        ("header#", GOOD.replace("gcv-map 1\n", "gcv-map 1#x\n")),
        ("grid", GOOD.replace("grid:\n", "grid: # x\n")),
        (
            "entities",
            GOOD.replace("entities:\n", "entities: # Figuren\n"),
        ),
        ("size", GOOD.replace("size: 6 3\n", "size: 6 3 # w h\n")),
        ("entity", GOOD.replace("nest 5 1\n", "nest 5 1 # goal\n")),
        (
            "crlf",
            GOOD.replace("grid:\n", "grid: # x\n").replace('\n', "\r\n"),
        ),
    ] {
        let r = validate_map(&text);
        assert!(r.valid, "{what}: {:?}", r.errors);
        assert_eq!(r.warnings.len(), base.warnings.len(), "{what}");
        assert_eq!(
            horst_engine::parse_map(&text).unwrap().hash(),
            hash,
            "{what}"
        );
    }
    // `entities:` with a comment also ends a grid that is too short, as `entities:` does.
    let short = GOOD.replace("GGGGGG\nentities:\n", "entities: # x\n");
    assert_eq!(codes(&validate_map(&short)), ["grid_too_short"]);
    // A `#` in the name is part of the name.
    let named = GOOD.replace("name: Test", "name: Gipfel #2");
    let m = horst_engine::parse_map(&named).expect("valid");
    assert!(m.canonical().contains("\nname: Gipfel #2\n"));
}

#[test]
fn a_bad_header_line_or_line_ending_says_so() {
    // Text after the version is not a version.
    let r = validate_map(&GOOD.replace("gcv-map 1\n", "gcv-map 1 Gletscher\n"));
    assert_eq!(codes(&r), ["bad_header"], "{:?}", r.errors);
    assert_eq!((r.errors[0].line, r.errors[0].column), (1, 11));
    assert!(
        r.errors[0].message.contains("after the version"),
        "{:?}",
        r.errors
    );
    assert_eq!(
        first(&GOOD.replace("gcv-map 1", "gcv-map 2")),
        ("unsupported_version", 1, 9)
    );
    assert_eq!(
        first(&GOOD.replace("gcv-map 1", "gcv-map 2 # x")),
        ("unsupported_version", 1, 9)
    );
    // Old Mac line endings (a CR alone): one error naming them, not a wrong version.
    for text in [GOOD.replace('\n', "\r"), GOOD.replace("grid:\n", "grid:\r")] {
        let r = validate_map(&text);
        assert_eq!(codes(&r), ["binary_content"], "{:?}", r.errors);
        assert!(
            r.errors[0].message.contains("carriage return"),
            "{:?}",
            r.errors
        );
    }
}

/// A limit's error says the count the map has beside the limit, and how many to take out:
/// `too_many_entities` said only "more than 512 entities", the name "must be 1 to 60
/// characters" and a long line "is longer than 1024 characters", none with the map's own
/// figure, which an agent then had to count itself.
#[test]
fn a_limits_error_says_the_count_and_the_limit() {
    let issue = |text: &str, code: &str| {
        validate_map(text)
            .errors
            .into_iter()
            .find(|e| e.code == code)
            .unwrap_or_else(|| panic!("no {code}"))
    };
    // GOOD has 2 entities; 600 collectibles more make 602, 90 over the limit.
    let many = format!("{GOOD}{}", "collectible 1 0\n".repeat(600));
    let e = issue(&many, "too_many_entities");
    assert_eq!(
        e.message,
        "the map has 602 entities; at most 512 are allowed"
    );
    assert!(e.hint.starts_with("remove 90 entities"), "{}", e.hint);
    assert_eq!(
        e.line,
        10 + 511,
        "on the line of the first entity past the limit"
    );

    let e = issue(
        &GOOD.replace("name: Test", &format!("name: {}", "x".repeat(61))),
        "bad_name",
    );
    assert_eq!(e.message, "the name has 61 characters; it must be 1 to 60");

    let long = GOOD.replace("name: Test", &format!("name: Test # {}", "-".repeat(1100)));
    let e = issue(&long, "line_too_long");
    assert_eq!(
        e.message,
        "line 2 has 1113 characters; at most 1024 are allowed"
    );
}
