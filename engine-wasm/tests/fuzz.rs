//! Fuzz-style tests of the exports, called natively as the page calls them: arbitrary bytes
//! as the map and replay texts (mutated levels and replays, and noise), arbitrary handles,
//! actions and tick counts never make the module panic; every failure is a JSON
//! `{code, message}` in the output buffer, and the referee answers what the native one does.

use std::collections::BTreeSet;
use std::path::PathBuf;

use horst_engine_wasm::*;
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

fn levels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../levels")
}

/// The committed levels with a winning replay: (map text, replay text).
fn levels() -> Vec<(String, String)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(levels_dir())
        .expect("levels dir")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|p| {
            let replay = std::fs::read_to_string(p.with_extension("replay.json")).ok()?;
            Some((std::fs::read_to_string(p).ok()?, replay))
        })
        .collect()
}

/// Byte edits of a valid text: replace, insert or delete a byte, or put one of `alphabet`.
fn mutate(text: &str, edits: &[(u8, u16, u8)], alphabet: &[u8]) -> Vec<u8> {
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
            _ => b[i] = alphabet[byte as usize % alphabet.len()],
        }
    }
    b
}

const MAP_ALPHABET: &[u8] = b"0123456789-.#GEIS^C~ =\n";
const REPLAY_ALPHABET: &[u8] = b"01234567890123456789-.eE+{}[]:,\" \nacinost";

/// Text the page hands over: written into memory from `hx_alloc` (or a null pointer).
fn put(bytes: Option<&[u8]>) -> (*mut u8, usize) {
    let Some(bytes) = bytes else {
        return (std::ptr::null_mut(), 0);
    };
    let p = hx_alloc(bytes.len());
    // SAFETY: `hx_alloc(n)` reserved at least `n` bytes at `p`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    (p, bytes.len())
}

/// The output buffer as text.
fn out() -> String {
    let (p, n) = (hx_out_ptr(), hx_out_len());
    // SAFETY: the module's output buffer holds `n` bytes at `p` until the next call.
    let bytes = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
    String::from_utf8(bytes).expect("the output is UTF-8")
}

/// The failure the last call wrote: a known code, a message, and a map's errors with it.
fn failure(codes: &[&str]) -> Value {
    let v: Value = serde_json::from_str(&out()).expect("a failure is JSON");
    let code = v["code"].as_str().unwrap_or_default();
    assert!(codes.contains(&code), "{v}");
    assert!(!v["message"].as_str().unwrap_or_default().is_empty(), "{v}");
    if code == "validation_failed" {
        assert!(!v["errors"].as_array().expect("errors").is_empty(), "{v}");
    }
    v
}

fn game_new(bytes: Option<&[u8]>, seed: u32) -> u32 {
    let (p, n) = put(bytes);
    // SAFETY: `p`/`n` from one `hx_alloc(n)` (or null), handed over once.
    let h = unsafe { hx_game_new(p, n, seed) };
    if h == 0 {
        failure(&["invalid_input", "validation_failed"]);
    }
    h
}

fn referee(map: Option<&[u8]>, replay: Option<&[u8]>) -> u32 {
    let (mp, mn) = put(map);
    let (rp, rn) = put(replay);
    // SAFETY: each pointer/length pair from one `hx_alloc` (or null), handed over once.
    unsafe { hx_referee(mp, mn, rp, rn) }
}

/// What the page may call on a game, by the first number; the others pick the handle and
/// the arguments.
type Call = (u8, u32, u32);

/// Runs `calls` on games started from `map` and checks every answer against what the
/// test knows to be live, the first game first stepped through `prefix` (part of a winning
/// replay: it gets far, touching checkpoints on the way). Frees every game it made.
fn play(map: Option<&[u8]>, seed: u32, prefix: &[horst_engine::Step], calls: &[Call]) {
    let mut live = BTreeSet::new();
    let first = game_new(map, seed);
    if first != 0 {
        live.insert(first);
        for s in prefix {
            assert!(hx_game_step(first, s.action.into(), s.ticks.into()) <= 2);
        }
    }
    for &(op, a, b) in calls {
        // Mostly a live game, now and then any number at all.
        let h = match live.iter().nth((a / 8) as usize % live.len().max(1)) {
            Some(&h) if a % 8 != 0 => h,
            _ => a % 5,
        };
        let alive = live.contains(&h);
        match op % 10 {
            0..=3 => {
                let action = if b % 3 == 0 { b } else { b % 20 };
                let st = hx_game_step(h, action, (a >> 8) % 240);
                assert!(st <= 3);
                assert_eq!(st == 3, !alive);
            }
            4 => {
                let c = hx_game_clone(h);
                assert_eq!(c != 0, alive);
                if alive {
                    assert!(live.insert(c), "a clone gets a handle of its own");
                    hx_game_hash(h);
                    let hash = out();
                    hx_game_hash(c);
                    assert_eq!(out(), hash, "a clone is the same game");
                    assert_eq!(hx_game_tick(c), hx_game_tick(h));
                }
            }
            5 => {
                hx_game_free(h);
                live.remove(&h);
            }
            6 => {
                let c = hx_game_from_checkpoint(h, b);
                if c != 0 {
                    assert!(alive);
                    assert!(live.insert(c));
                    assert_eq!(hx_game_tick(c), 0);
                }
            }
            7 => {
                hx_game_hash(h);
                let hash = out();
                assert_eq!(hash.is_empty(), !alive);
                assert!(hash.bytes().all(|c| c.is_ascii_hexdigit()));
                hx_game_death(h);
                let death: Value = serde_json::from_str(&out()).expect("death is JSON");
                assert!(death.is_null() || death["cause"].is_string(), "{death}");
            }
            8 => {
                hx_game_map(h);
                let map = out();
                assert_eq!(map.is_empty(), !alive);
                if alive {
                    let v: Value = serde_json::from_str(&map).expect("the map is JSON");
                    assert!(v.is_object());
                }
            }
            _ => {
                let words = hx_view(h);
                assert_eq!(words, hx_view_len());
                // A live game always decodes: 0 would mean the state layout changed.
                assert_eq!(words != 0, alive);
                if alive {
                    assert!(!hx_view_ptr().is_null());
                }
            }
        }
    }
    for h in live {
        hx_game_free(h);
    }
}

fn calls() -> impl Strategy<Value = Vec<Call>> {
    prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>()), 0..16)
}

#[test]
fn info_is_json() {
    hx_info();
    let v: Value = serde_json::from_str(&out()).expect("info is JSON");
    assert!(
        v["engineVersion"].is_string() && v["palette"].is_object(),
        "{v}"
    );
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn games_on_mutated_levels(level_index in 0usize..15, mutated in prop::bool::weighted(0.4), edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..3), seed in any::<u32>(), prefix in any::<usize>(), calls in calls()) {
        let levels = levels();
        let (map, replay) = &levels[level_index % levels.len()];
        let edits = if mutated { &edits[..] } else { &[] };
        let bytes = mutate(map, edits, MAP_ALPHABET);
        let replay = horst_engine::parse_replay_json(replay).unwrap();
        let prefix = &replay.actions[..prefix % (replay.actions.len() + 1)];
        // The replay's own seed, or half the time a neighbour (the prefix goes elsewhere).
        play(Some(&bytes), replay.seed ^ (seed & 1), prefix, &calls);
    }

    #[test]
    fn games_on_arbitrary_bytes(bytes in prop::option::of(prop::collection::vec(any::<u8>(), 0..300)), seed in any::<u32>(), calls in calls()) {
        play(bytes.as_deref(), seed, &[], &calls);
    }

    #[test]
    fn referee_on_mutated_levels_and_replays(
        level_index in 0usize..15,
        map_mutated in prop::bool::weighted(0.3),
        map_edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 1..3),
        replay_edits in prop::collection::vec((any::<u8>(), any::<u16>(), any::<u8>()), 0..3),
    ) {
        let levels = levels();
        let (map, replay) = &levels[level_index % levels.len()];
        let map_edits = if map_mutated { &map_edits[..] } else { &[] };
        let map = mutate(map, map_edits, MAP_ALPHABET);
        let replay = mutate(replay, &replay_edits, REPLAY_ALPHABET);
        let ok = referee(Some(&map), Some(&replay));
        match (std::str::from_utf8(&map), std::str::from_utf8(&replay)) {
            (Ok(m), Ok(r)) => match (horst_engine::parse_map(m), horst_engine::parse_replay_json(r)) {
                (Ok(m), Ok(r)) => {
                    prop_assert_eq!(ok, 1);
                    let native = serde_json::to_string(&horst_engine::referee(&m, &r)).unwrap();
                    prop_assert_eq!(out(), native);
                }
                _ => {
                    prop_assert_eq!(ok, 0);
                    failure(&["validation_failed", "invalid_input", "too_large"]);
                }
            },
            _ => {
                prop_assert_eq!(ok, 0);
                failure(&["invalid_input"]);
            }
        }
    }

    #[test]
    fn referee_on_arbitrary_bytes(
        map in prop::option::of(prop::collection::vec(any::<u8>(), 0..200)),
        replay in prop::option::of(prop::collection::vec(any::<u8>(), 0..200)),
    ) {
        prop_assert_eq!(referee(map.as_deref(), replay.as_deref()), 0);
        failure(&["validation_failed", "invalid_input", "too_large"]);
    }

    #[test]
    fn checkpoint_maps_of_any_index(level_index in 0usize..15, index in any::<usize>()) {
        let levels = levels();
        let map = horst_engine::parse_map(&levels[level_index % levels.len()].0).unwrap();
        let index = index % (map.entities().len() + 2);
        if let Some(text) = checkpoint_map(&map, index) {
            let moved = horst_engine::parse_map(&text);
            if let Ok(moved) = moved {
                prop_assert_eq!(moved.tiles(), map.tiles());
                prop_assert_eq!(moved.entities().len(), map.entities().len());
            }
        }
    }
}
