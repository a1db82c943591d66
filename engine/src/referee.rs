//! The referee: plays a replay on a map and reports what happened.

use crate::replay::Replay;
use crate::sim::map::Map;
use crate::sim::physics::{PLAYER_H, PLAYER_W, TILE_SHIFT};
use crate::sim::{Sim, Status};
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
    pub state_hash: String,
    pub map_hash: String,
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
    let sim = run(map, replay);
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
        position: position(&sim),
        death_tick: (status == Status::Dead).then(|| sim.tick()),
        state_hash: sim.state_hash(),
        map_hash: map.hash(),
    }
}
