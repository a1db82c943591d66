//! Game con Vogel: the pure game engine.
//!
//! Everything here is deterministic and side-effect free: no I/O, no clocks, no floats in the
//! simulation, no hash-map iteration. The crate offers the `.map` format (reference, palette,
//! parser, validation, rendering), the simulation (`Sim`) and the referee.
//!
//! Layout: `sim/` holds everything that decides the outcome of a run and is hashed into
//! `engineVersion`; `format/` holds the parser, the validation rules and the limits (hashed
//! into `policyVersion`); `replay.rs` and `referee.rs` glue them to the contract's JSON.
//!
//! For a planner:
//!
//! ```
//! use horst_engine::{parse_map, physics, Sim, Status};
//! let text = "gcv-map 1\nname: demo\nsize: 8 3\ngrid:\n........\n........\nGGGGGGGG\nentities:\nstart 0 1\nnest 7 1\n";
//! let map = parse_map(text).expect("valid map");
//! let (sx, sy) = map.start();
//! assert_eq!((sx, sy), (0, 1));
//! assert_eq!(map.nests(), &[(7, 1)]);
//! let mut sim = Sim::new(&map, 1);
//! let branch = sim.clone(); // cheap: the level is shared, only small state arrays are copied
//! while sim.status() == Status::Running && sim.tick() < 600 {
//!     sim.step(8); // action 8: run right
//! }
//! assert_eq!(sim.status(), Status::Won);
//! assert!(branch.player().x < sim.player().x);
//! // Physics numbers for heuristics, in sub-units (a tile is physics::TILE = 4096).
//! assert!(physics::JUMP_RISE > 3 * physics::TILE);
//! assert_eq!(physics::SLOW_SPEED * 5, physics::RUN_SPEED * 2);
//! ```
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod format;
pub mod referee;
pub mod replay;
pub mod sim;

pub use format::limits::{limits, Limits};
pub use format::parse::parse_map;
pub use format::render::{render_map, Rendered};
pub use format::validate::{validate_map, validate_map_bytes, Issue, ValidationReport};
pub use referee::{referee, referee_until, DeathReport, EntityRef, Position, RefereeReport};
pub use replay::{parse_replay, parse_replay_json, Replay, Step};
pub use sim::map::{Entity, Map};
pub use sim::palette::{Block, EntityKind, ParamType};
pub use sim::physics;
pub use sim::rng::SplitMix64;
pub use sim::{Death, DeathCause, Input, Player, Sim, Status};

use serde::Serialize;

/// Whether two [`Sim::state_bytes`] layouts (FORMAT.md, `stateHash`) are the same but for the
/// tick (the `u32` after `GCVS` and the layout version): two runs whose states match this way
/// go on alike under the same inputs. The planner's shortening and the feasibility check stop
/// a run early where it meets another again. Here, outside `src/sim/`, so that it does not
/// move `engineVersion`.
pub fn same_state_but_tick(a: &[u8], b: &[u8]) -> bool {
    const TICK: std::ops::Range<usize> = 5..9;
    a.len() == b.len()
        && a.len() >= TICK.end
        && a[..TICK.start] == b[..TICK.start]
        && a[TICK.end..] == b[TICK.end..]
}

/// SHA-256 over the token streams of the files of `src/sim/`, `src/referee.rs` and
/// `src/replay.rs` (comments, doc comments and
/// whitespace left out; FORMAT.md, "Versions"), computed by `build.rs`.
pub fn engine_version() -> &'static str {
    ENGINE_VERSION
}

const ENGINE_VERSION: &str = include_str!(concat!(env!("OUT_DIR"), "/engine_version.txt"));

/// Identifies the validation rules and limits: SHA-256 over the token streams of the files of
/// `src/format/` other than the renderer, computed the same way by `build.rs`.
pub const POLICY_VERSION: &str = include_str!(concat!(env!("OUT_DIR"), "/policy_version.txt"));

/// The format reference (Markdown), returned verbatim by `get_map_format`.
pub const FORMAT_REFERENCE: &str = include_str!("../FORMAT.md");

/// A failure of an engine call, with a stable contract code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// Arguments do not match the schema or the limits (`invalid_input`).
    InvalidInput(String),
    /// A map or replay exceeds a size limit (`too_large`).
    TooLarge(String),
    /// The map is invalid (`validation_failed`); carries the first error.
    InvalidMap(String),
}

impl EngineError {
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::InvalidInput(_) => "invalid_input",
            EngineError::TooLarge(_) => "too_large",
            EngineError::InvalidMap(_) => "validation_failed",
        }
    }
    pub fn message(&self) -> &str {
        match self {
            EngineError::InvalidInput(m)
            | EngineError::TooLarge(m)
            | EngineError::InvalidMap(m) => m,
        }
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}

impl std::error::Error for EngineError {}

/// One row of the contract's action table.
#[derive(Clone, Debug, Serialize)]
pub struct ActionInfo {
    pub index: u8,
    #[serde(rename = "move")]
    pub movement: &'static str,
    pub jump: bool,
    pub shoot: bool,
}

/// The 20 action indices, as in the contract.
pub fn actions() -> Vec<ActionInfo> {
    const MOVES: [&str; 5] = ["left", "none", "right", "slow left", "slow right"];
    (0u8..20)
        .map(|i| ActionInfo {
            index: i,
            movement: MOVES[(i / 4) as usize],
            jump: i % 4 == 1 || i % 4 == 3,
            shoot: i % 4 >= 2,
        })
        .collect()
}

/// The result of `get_map_format`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MapFormat {
    pub format: &'static str,
    pub engine_version: &'static str,
    pub policy_version: &'static str,
    pub actions: Vec<ActionInfo>,
    pub limits: Limits,
}

pub fn map_format() -> MapFormat {
    MapFormat {
        format: FORMAT_REFERENCE,
        engine_version: engine_version(),
        policy_version: POLICY_VERSION,
        actions: actions(),
        limits: limits(),
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaletteParam {
    pub name: &'static str,
    /// `int` or `enum`.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// The default as written in a map (a number, or the enum word).
    pub default: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<&'static str>>,
    pub unit: &'static str,
    pub description: &'static str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaletteBlock {
    pub key: String,
    pub id: u8,
    pub name: &'static str,
    pub german_name: &'static str,
    pub collision: &'static str,
    pub description: &'static str,
    pub params: Vec<PaletteParam>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaletteEntity {
    pub key: &'static str,
    pub id: u8,
    pub name: &'static str,
    pub german_name: &'static str,
    pub glyph: String,
    pub description: &'static str,
    pub params: Vec<PaletteParam>,
}

/// The result of `list_palette`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Palette {
    pub blocks: Vec<PaletteBlock>,
    pub entities: Vec<PaletteEntity>,
    pub engine_version: &'static str,
    pub policy_version: &'static str,
    pub actions: Vec<ActionInfo>,
    pub limits: Limits,
}

fn palette_params(params: &'static [sim::palette::ParamDef]) -> Vec<PaletteParam> {
    params
        .iter()
        .map(|p| match p.ty {
            ParamType::Int { min, max } => PaletteParam {
                name: p.name,
                ty: "int",
                default: serde_json::Value::from(p.default),
                min: Some(min),
                max: Some(max),
                values: None,
                unit: p.unit,
                description: p.doc,
            },
            ParamType::Enum(words) => PaletteParam {
                name: p.name,
                ty: "enum",
                default: serde_json::Value::from(p.format_value(p.default)),
                min: None,
                max: None,
                values: Some(words.to_vec()),
                unit: p.unit,
                description: p.doc,
            },
        })
        .collect()
}

pub fn palette() -> Palette {
    Palette {
        blocks: sim::palette::BLOCKS
            .iter()
            .map(|b| PaletteBlock {
                key: b.key.to_string(),
                id: b.id,
                name: b.name,
                german_name: b.german,
                collision: b.collision,
                description: b.doc,
                params: palette_params(b.params),
            })
            .collect(),
        entities: sim::palette::ENTITIES
            .iter()
            .map(|e| PaletteEntity {
                key: e.name,
                id: e.id,
                name: e.name,
                german_name: e.german,
                glyph: e.glyph.to_string(),
                description: e.doc,
                params: palette_params(e.params),
            })
            .collect(),
        engine_version: engine_version(),
        policy_version: POLICY_VERSION,
        actions: actions(),
        limits: limits(),
    }
}
