//! Deaths the brief names, decided as it says: an enemy kills from the side or below (a bird
//! above it, standing or falling, stomps it); a platform that would push the bird into rock
//! crushes it.

use horst_engine::{parse_map, parse_replay_json, referee, Sim};

fn run(map: &str, replay: &str) -> horst_engine::RefereeReport {
    let map = parse_map(map).unwrap_or_else(|r| panic!("{}", r.summary()));
    referee(&map, &parse_replay_json(replay).expect("replay"))
}

/// The reviewer's map: the bird stands on a ledge; a jackdaw rising through the ledge meets
/// its feet from below. The bird is above it: a stomp, not a death.
const LEDGE: &str = "gcv-map 1\nname: ledge\nsize: 4 6\ngrid:\n....\n....\n....\n-...\n....\n####\nentities:\nstart 0 2\nflyer 0 3 axis=v range=1\nnest 3 4\n";

#[test]
fn an_enemy_rising_into_a_standing_birds_feet_is_stomped() {
    let r = run(LEDGE, r#"{"seed":1,"actions":[{"action":4,"ticks":10}]}"#);
    assert!(!r.dead, "{:?}", r.death_cause);
    assert_eq!(r.outcome, "unresolved");
    let map = parse_map(LEDGE).unwrap();
    let mut sim = Sim::new(&map, 1);
    let mut stomped = false;
    for _ in 0..10 {
        sim.step(4);
        stomped |= sim.player().vy == -horst_engine::physics::STOMP_BOUNCE;
    }
    assert!(stomped, "the bird bounces off the jackdaw");
    assert_eq!(sim.enemies().count(), 0, "the jackdaw is defeated");
}

/// A jackdaw flying into the bird from the side or from below still kills it.
#[test]
fn an_enemy_from_the_side_or_below_still_kills() {
    // Side: the bird stands on the floor, a jackdaw flies along its row into it.
    let side = "gcv-map 1\nname: side\nsize: 8 4\ngrid:\n........\n........\n........\n########\nentities:\nstart 1 2\nflyer 4 2 axis=h range=3 speed=16 pause=0\nnest 7 0\n";
    let r = run(side, r#"{"seed":1,"actions":[{"action":4,"ticks":120}]}"#);
    assert_eq!(r.outcome, "lost", "{r:?}");
    assert_eq!(r.death_cause.unwrap().cause, "enemy");
    // Below: the bird jumps up into a jackdaw hanging above it.
    let below = "gcv-map 1\nname: below\nsize: 4 8\ngrid:\n....\n....\n....\n....\n....\n....\n....\n####\nentities:\nstart 1 6\nflyer 1 4 range=0\nnest 3 0\n";
    let r = run(below, r#"{"seed":1,"actions":[{"action":5,"ticks":30}]}"#);
    assert_eq!(r.outcome, "lost", "{r:?}");
    assert_eq!(r.death_cause.unwrap().cause, "enemy");
}

/// The reviewer's map: a lift rises to the ceiling with the bird on it.
const LIFT: &str = "gcv-map 1\nname: lift\nsize: 5 8\ngrid:\n#####\n.....\n.....\n.....\n.....\n.....\n.....\n#####\nentities:\nstart 2 6\nplatform 1 7 dx=0 dy=-6 speed=16\nnest 4 6\n";

#[test]
fn a_lift_that_pushes_the_bird_into_rock_crushes_it() {
    let r = run(LIFT, r#"{"seed":1,"actions":[{"action":4,"ticks":42}]}"#);
    assert_eq!(r.outcome, "lost", "{r:?}");
    let d = r.death_cause.expect("a death");
    assert_eq!(d.cause, "crushed", "{d:?}");
    assert_eq!((d.x, d.y), (2, 0), "the tile it is pushed into");
    assert!(d.entity.is_none());
    // Until then the bird is never inside rock.
    let map = parse_map(LIFT).unwrap();
    let mut sim = Sim::new(&map, 1);
    while sim.status() == horst_engine::Status::Running {
        assert!(
            sim.player().y >= horst_engine::physics::TILE,
            "inside row 0"
        );
        sim.step(4);
    }
}
