//! The view decodes the engine's documented state layout on every tick of every committed
//! level: if the layout changes, this fails before a page draws nonsense.

use horst_engine::{parse_map, parse_replay_json, Sim, Status};
use horst_engine_wasm::view;

#[test]
fn every_tick_of_every_level_decodes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let mut levels = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "map") {
            continue;
        }
        let Ok(replay) = std::fs::read_to_string(path.with_extension("replay.json")) else {
            continue;
        };
        let map = parse_map(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let replay = parse_replay_json(&replay).unwrap();
        let dyn_tiles = view::dyn_tiles(&map);
        let mut sim = Sim::new(&map, replay.seed);
        let mut words = Vec::new();
        assert!(
            view::decode(&sim, &map, &dyn_tiles, &mut words),
            "{path:?} at tick 0"
        );
        for step in &replay.actions {
            for _ in 0..step.ticks {
                if sim.status() != Status::Running {
                    break;
                }
                sim.step(step.action);
                assert!(
                    view::decode(&sim, &map, &dyn_tiles, &mut words),
                    "{path:?} at tick {}",
                    sim.tick()
                );
                assert_eq!(words[0] as u32, sim.tick());
                assert_eq!((words[2], words[3]), (sim.player().x, sim.player().y));
            }
        }
        assert_eq!(words[1], 1, "{path:?}: the replay wins");
        let info = view::map_info(&map);
        assert_eq!(info.tiles.len() as i32, info.width * info.height);
        assert_eq!(info.entities.len(), map.entities().len());
        levels += 1;
    }
    assert!(levels >= 15, "found {levels} levels");
}

#[test]
fn a_checkpoint_map_moves_only_the_start() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let text = std::fs::read_to_string(dir.join("13-rastplatz.map")).unwrap();
    let map = parse_map(&text).unwrap();
    let cps: Vec<_> = map
        .entities()
        .iter()
        .filter(|e| e.kind == horst_engine::EntityKind::Checkpoint)
        .collect();
    assert!(!cps.is_empty());
    let moved = parse_map(&horst_engine_wasm::checkpoint_map(&map, 0).unwrap()).unwrap();
    assert_eq!(moved.start(), (cps[0].x, cps[0].y));
    assert_eq!(moved.entities().len(), map.entities().len());
    assert_eq!(moved.tiles(), map.tiles());
    assert!(horst_engine_wasm::checkpoint_map(&map, cps.len()).is_none());
}
