//! The referee: plays a replay on a map and reports what happened.

use crate::replay::Replay;
use crate::sim::map::Map;
use crate::sim::palette::EntityKind;
use crate::sim::physics::{PLAYER_H, PLAYER_W, TILE_SHIFT};
use crate::sim::{DeathCause, Sim, Status};
use serde::Serialize;

/// Where the bird is. `x`, `y`: the tile holding the middle of its feet (origin top-left; `y`
/// can be the map height or more after falling out). `subX`, `subY`: the top-left corner of its
/// 12 x 14 px hitbox in sub-units (1/256 px; a tile is 4096).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Position {
    pub x: i32,
    pub y: i32,
    pub sub_x: i32,
    pub sub_y: i32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefereeReport {
    /// `won`, `lost` or `unresolved` (the replay ended without winning or dying).
    pub outcome: &'static str,
    pub won: bool,
    pub dead: bool,
    /// Ticks simulated: the tick of the win or death, else the replay's total.
    pub ticks: u32,
    pub position: Position,
    pub death_tick: Option<u32>,
    /// What killed the bird (null unless dead).
    pub death_cause: Option<DeathReport>,
    pub state_hash: String,
    pub map_hash: String,
}

/// What killed the bird and where (FORMAT.md, "Replays and actions").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeathReport {
    /// `spikes`, `enemy`, `rock`, `fell_out` or `crushed`.
    pub cause: &'static str,
    /// The tile: of the spikes; of the enemy's or rock's centre as it touched the bird; for
    /// `fell_out` the bird's column and the map's height (the row below the map); for
    /// `crushed` the solid block a platform pushed the bird into.
    pub x: i32,
    pub y: i32,
    /// For `enemy` and `rock`: the entity line behind it (`walker`, `flyer` or `rockfall`, and
    /// its tile in the map).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityRef>,
}

/// One line for people: `spikes at tile (2, 1)`, `enemy walker (map 10 7) at tile (8, 7)`.
impl std::fmt::Display for DeathReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cause)?;
        if let Some(e) = &self.entity {
            write!(f, " {} (map {} {})", e.kind, e.x, e.y)?;
        }
        write!(f, " at tile ({}, {})", self.x, self.y)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EntityRef {
    pub kind: &'static str,
    pub x: i32,
    pub y: i32,
}

/// The `index`-th entity of `kind` in file order (the order the simulation numbers them).
fn nth_entity(map: &Map, kind: EntityKind, index: u16) -> Option<EntityRef> {
    let e = map
        .entities()
        .iter()
        .filter(|e| e.kind == kind)
        .nth(index as usize)?;
    Some(EntityRef {
        kind: kind.def().name,
        x: e.x,
        y: e.y,
    })
}

pub fn death_report(map: &Map, sim: &Sim) -> Option<DeathReport> {
    let d = sim.death()?;
    let (cause, entity) = match d.cause {
        DeathCause::Spikes => ("spikes", None),
        DeathCause::FellOut => ("fell_out", None),
        DeathCause::Crushed => ("crushed", None),
        DeathCause::Walker(i) => ("enemy", nth_entity(map, EntityKind::Walker, i)),
        DeathCause::Flyer(i) => ("enemy", nth_entity(map, EntityKind::Flyer, i)),
        DeathCause::Rock(i) => ("rock", nth_entity(map, EntityKind::Rockfall, i)),
    };
    Some(DeathReport {
        cause,
        x: d.x,
        y: d.y,
        entity,
    })
}

pub fn position(sim: &Sim) -> Position {
    let p = sim.player();
    Position {
        x: (p.x + PLAYER_W / 2) >> TILE_SHIFT,
        y: (p.y + PLAYER_H - 1) >> TILE_SHIFT,
        sub_x: p.x,
        sub_y: p.y,
    }
}

/// Runs the replay until it ends, the bird wins or the bird dies.
pub fn run(map: &Map, replay: &Replay) -> Sim {
    let mut sim = Sim::new(map, replay.seed);
    'run: for s in &replay.actions {
        for _ in 0..s.ticks {
            if sim.status() != Status::Running {
                break 'run;
            }
            sim.step(s.action);
        }
    }
    sim
}

pub fn referee(map: &Map, replay: &Replay) -> RefereeReport {
    report(map, &run(map, replay))
}

/// [`referee`] that gives up (`None`) once `stop` says so: asked every 4096 ticks (well under
/// a millisecond of simulation), so a cancelled job frees its worker at once.
pub fn referee_until(map: &Map, replay: &Replay, stop: &dyn Fn() -> bool) -> Option<RefereeReport> {
    let mut sim = Sim::new(map, replay.seed);
    let mut ticks: u32 = 0;
    'run: for s in &replay.actions {
        for _ in 0..s.ticks {
            if sim.status() != Status::Running {
                break 'run;
            }
            ticks = ticks.wrapping_add(1);
            if ticks.is_multiple_of(4096) && stop() {
                return None;
            }
            sim.step(s.action);
        }
    }
    Some(report(map, &sim))
}

fn report(map: &Map, sim: &Sim) -> RefereeReport {
    let status = sim.status();
    RefereeReport {
        outcome: match status {
            Status::Won => "won",
            Status::Dead => "lost",
            Status::Running => "unresolved",
        },
        won: status == Status::Won,
        dead: status == Status::Dead,
        ticks: sim.tick(),
        position: position(sim),
        death_tick: (status == Status::Dead).then(|| sim.tick()),
        death_cause: death_report(map, sim),
        state_hash: sim.state_hash(),
        map_hash: map.hash(),
    }
}
