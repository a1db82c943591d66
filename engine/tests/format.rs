//! The format reference, the palette, the versions and the map hash.

use crate::common::*;
use horst_engine::sim::palette::{BLOCKS, ENTITIES};
use horst_engine::{
    engine_version, map_format, palette, parse_map, render_map, validate_map, FORMAT_REFERENCE,
    POLICY_VERSION,
};

fn example_map() -> String {
    let start = FORMAT_REFERENCE
        .find("```\n# Am Gletscher")
        .expect("example in FORMAT.md")
        + 4;
    let end = start
        + FORMAT_REFERENCE[start..]
            .find("```")
            .expect("end of example");
    FORMAT_REFERENCE[start..end].to_string()
}

#[test]
fn the_reference_example_is_valid_without_warnings() {
    let r = validate_map(&example_map());
    assert!(r.valid, "{:?}", r.errors);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn the_reference_example_replay_wins() {
    let start = FORMAT_REFERENCE
        .find("```json\n")
        .expect("replay in FORMAT.md")
        + 8;
    let end = start
        + FORMAT_REFERENCE[start..]
            .find("```")
            .expect("end of replay");
    let replay =
        horst_engine::parse_replay_json(&FORMAT_REFERENCE[start..end]).expect("valid replay");
    let map = parse_map(&example_map()).expect("valid example");
    let r = horst_engine::referee(&map, &replay);
    assert_eq!((r.outcome, r.ticks), ("won", 150));
}

#[test]
fn the_reference_names_every_block_entity_and_parameter() {
    for b in BLOCKS.iter() {
        assert!(
            FORMAT_REFERENCE.contains(&format!(
                "| `{}` | {} | {} | {} |",
                b.key, b.id, b.name, b.german
            )),
            "block {}",
            b.name
        );
        for p in b.params {
            assert!(FORMAT_REFERENCE.contains(&format!("`{}`", p.name)));
        }
    }
    for e in ENTITIES.iter() {
        assert!(
            FORMAT_REFERENCE.contains(&format!(
                "| `{}` | {} | {} | `{}` |",
                e.name, e.id, e.german, e.glyph
            )),
            "entity {}",
            e.name
        );
        for p in e.params {
            let want = match p.ty {
                horst_engine::ParamType::Int { .. } => {
                    format!("`{}` ({}", p.name, p.format_value(p.default))
                }
                horst_engine::ParamType::Enum(_) => {
                    format!("`{}` (`{}`", p.name, p.format_value(p.default))
                }
            };
            assert!(FORMAT_REFERENCE.contains(&want), "{} {}", e.name, p.name);
        }
    }
}

#[test]
fn the_reference_lists_every_error_code_the_tests_produce() {
    for code in [
        "too_large",
        "empty_map",
        "not_utf8",
        "binary_content",
        "line_too_long",
        "missing_header",
        "bad_header",
        "unsupported_version",
        "unknown_field",
        "duplicate_field",
        "missing_field",
        "bad_name",
        "bad_value",
        "size_out_of_range",
        "missing_grid",
        "ragged_row",
        "unknown_tile",
        "grid_too_short",
        "grid_too_long",
        "unexpected_line",
        "unknown_entity",
        "bad_entity_line",
        "bad_coordinate",
        "entity_out_of_bounds",
        "entity_in_solid",
        "bad_parameter",
        "unknown_parameter",
        "duplicate_parameter",
        "bad_parameter_value",
        "parameter_out_of_range",
        "no_start",
        "multiple_starts",
        "no_nest",
        "too_many_entities",
        "too_many_nests",
        "too_many_enemies",
        "too_many_rockfalls",
        "too_many_platforms",
        "too_many_springs",
        "too_many_dynamic_tiles",
        "too_many_errors",
        "start_over_pit",
        "enemy_near_start",
        "entity_on_spikes",
        "walker_floating",
        "rockfall_blocked",
        "entities_overlap",
        "nest_unreachable",
    ] {
        assert!(
            FORMAT_REFERENCE.contains(&format!("`{code}`")),
            "{code} missing from FORMAT.md"
        );
    }
}

#[test]
fn versions_are_sha256_hex() {
    for v in [engine_version(), POLICY_VERSION] {
        assert_eq!(v.len(), 64);
        assert!(v
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }
    assert_ne!(engine_version(), POLICY_VERSION);
}

#[test]
fn map_format_and_palette_json() {
    let f = serde_json::to_value(map_format()).expect("json");
    for k in [
        "format",
        "engineVersion",
        "policyVersion",
        "actions",
        "limits",
    ] {
        assert!(f.get(k).is_some(), "{k}");
    }
    assert_eq!(f["format"].as_str(), Some(FORMAT_REFERENCE));
    let actions = f["actions"].as_array().expect("actions");
    assert_eq!(actions.len(), 20);
    assert_eq!(
        actions[9],
        serde_json::json!({"index": 9, "move": "right", "jump": true, "shoot": false})
    );
    assert_eq!(
        actions[14],
        serde_json::json!({"index": 14, "move": "slow left", "jump": false, "shoot": true})
    );
    assert_eq!(f["limits"]["replay"]["maxTotalTicks"], 36000);
    let p = serde_json::to_value(palette()).expect("json");
    assert_eq!(p["blocks"].as_array().map(|a| a.len()), Some(BLOCKS.len()));
    assert_eq!(
        p["entities"].as_array().map(|a| a.len()),
        Some(ENTITIES.len())
    );
    assert_eq!(p["engineVersion"], f["engineVersion"]);
    assert_eq!(p["actions"], f["actions"]);
    assert_eq!(p["limits"], f["limits"]);
    let walker = &p["entities"][2];
    assert_eq!(walker["key"], "walker");
    assert_eq!(walker["germanName"], "Murmeltier");
    assert_eq!(
        walker["params"][1],
        serde_json::json!({"name": "speed", "type": "int", "default": 4, "min": 1, "max": 16, "unit": "1/8 px per tick", "description": walker["params"][1]["description"]})
    );
    assert_eq!(
        walker["params"][3]["values"],
        serde_json::json!(["left", "right"])
    );
}

#[test]
fn map_hash_ignores_formatting_only() {
    let text = map_text("05-murmeltiere");
    let base = parse_map(&text).expect("valid").hash();
    let crlf = text.replace('\n', "\r\n");
    let spaces: String = text.lines().map(|l| format!("{l}   \n")).collect();
    // Comments between every line outside the grid.
    let mut in_grid = false;
    let mut comments = String::new();
    for l in text.lines() {
        if l == "entities:" {
            in_grid = false;
        }
        if !in_grid {
            comments.push_str("# a comment\n\n");
        }
        comments.push_str(l);
        comments.push('\n');
        if l == "grid:" {
            in_grid = true;
        }
    }
    let spaced = text.replace(
        "walker 10 7 range=3",
        "walker   10  7   range=3   # inline comment",
    );
    let explicit = text.replace(
        "walker 10 7 range=3",
        "walker 10 7 range=3 speed=4 pause=20 dir=left",
    );
    for (what, variant) in [
        ("crlf", crlf),
        ("spaces", spaces),
        ("comments", comments),
        ("spaced", spaced),
        ("explicit defaults", explicit),
    ] {
        let m = parse_map(&variant).unwrap_or_else(|r| panic!("{what}: {}", r.summary()));
        assert_eq!(m.hash(), base, "{what}");
    }
    // Real changes do change it.
    for change in [
        text.replace("walker 10 7 range=3", "walker 10 7 range=2"),
        text.replace("name: Murmeltiere", "name: Murmeltiere 2"),
    ] {
        assert_ne!(parse_map(&change).expect("valid").hash(), base);
    }
    let canonical = parse_map(&text).expect("valid").canonical();
    assert!(canonical.starts_with(
        "gcv-map 1\nname: Murmeltiere\nsize: 44 10\ndefault: crumbling delay=30\ngrid:\n"
    ));
    assert!(canonical.contains("\nwalker 10 7 range=3 speed=4 pause=20 dir=left\n"));
}

#[test]
fn render_shows_ruler_and_legend() {
    let text = map_text("13-rastplatz");
    let r = render_map(&text, 0, 0, 120, 30).expect("render").text;
    let lines: Vec<&str> = r.lines().collect();
    assert!(lines[0].contains("64 x 16 tiles"));
    assert!(lines[1].trim_start().starts_with("1111111111"));
    assert!(lines[2].trim_start().starts_with("0123456789"));
    assert!(lines[3].starts_with(" 0 "));
    assert!(
        r.contains("@ start (Start)")
            && r.contains("* nest (Nest)")
            && r.contains("k checkpoint (Rastplatz)")
    );
    assert!(
        !r.contains("~ crumbling"),
        "only characters shown are in the legend"
    );
    let w = render_map(&text, 50, 10, 120, 30).expect("window").text;
    assert!(w.contains("showing x 50-63, y 10-15"));
    let body: Vec<&str> = w.lines().filter(|l| l.starts_with("10 ")).collect();
    assert_eq!(body.len(), 1);
    assert_eq!(body[0].len(), 3 + 14);
}
