//! The shipped levels' replays are the proof the levels page and `get_level` judge (the
//! gateway publishes `assess` of the file as it is, `gateway/src/builtin.rs`): a replay that
//! takes the fastest route reads harsher than the level is. The shipped replays are made
//! easier for a person (levels/README.md), so the relaxation pass finds no better verdict for
//! any of them.

use horst_engine::{parse_map, parse_replay_json, referee};
use horst_feasibility::{assess, relax, Verdict, RELAX_BUDGET_TICKS};

#[test]
fn no_shipped_level_reads_harsher_than_its_relaxed_replay() {
    let mut harsher = Vec::new();
    for level in horst_levels::BUILTIN {
        let map = parse_map(level.map).unwrap();
        let replay = parse_replay_json(level.replay).unwrap();
        assert!(referee(&map, &replay).won, "{}", level.file);
        let shipped = assess(&map, &replay).expect("the shipped replay wins");
        assert!(shipped.complete, "{}: {shipped:#?}", level.file);
        let relaxed = relax(&map, &replay, RELAX_BUDGET_TICKS).expect("the shipped replay wins");
        if relaxed.report.verdict < shipped.verdict {
            harsher.push(format!(
                "{}: shipped {} ({} exact inputs), relaxed {} ({} exact inputs, {} ticks)",
                level.file,
                shipped.verdict.as_str(),
                shipped.exact_inputs,
                relaxed.report.verdict.as_str(),
                relaxed.report.exact_inputs,
                referee(&map, &relaxed.replay).ticks
            ));
        }
    }
    assert!(
        harsher.is_empty(),
        "shipped replays that read harsher than the level is (write the relaxed ones with \
         `cargo run --release -p horst-planner --example shipped -- --write`):\n{}",
        harsher.join("\n")
    );
}

/// The shipped levels are for a person, and each has a proof that reads `fair` or easier: the
/// ones written by `planner/examples/shipped.rs`. `15-sechzehn-feinde` read `tight` (window 2)
/// while its replay was also the engine benchmark's input; the benchmark has its own copy now
/// (engine/benches/README.md), and the planner's win relaxed was written.
#[test]
fn every_shipped_level_reads_fair_or_easier() {
    let harsh: Vec<String> = horst_levels::BUILTIN
        .iter()
        .filter_map(|level| {
            let map = parse_map(level.map).unwrap();
            let replay = parse_replay_json(level.replay).unwrap();
            let shipped = assess(&map, &replay).expect("the shipped replay wins");
            (shipped.verdict > Verdict::Fair).then(|| {
                let window = shipped.tightest.as_ref().map_or(0, |t| t.window);
                format!(
                    "{}: {} (window {window})",
                    level.file,
                    shipped.verdict.as_str()
                )
            })
        })
        .collect();
    assert!(
        harsh.is_empty(),
        "shipped levels that read harsher than `fair` (write an easier proof with \
         `cargo run --release -p horst-planner --example shipped -- --write NN-name`):\n{}",
        harsh.join("\n")
    );
}
