//! What a page needs to draw a running game, read from the engine's public API only: the
//! documented state layout (`Sim::state_bytes`, FORMAT.md "stateHash") and `Sim::enemies`.
//!
//! Reading the layout rather than the engine's private fields keeps this crate a pure
//! consumer of `horst-engine`: if the layout changes, `decode` fails (its version byte or
//! its length no longer match) and the tests of this crate say so, instead of a page
//! silently drawing the wrong thing.

use horst_engine::{Map, Sim, Status};
use serde::Serialize;

/// The layout `decode` reads: `GCVS` and layout version 1.
const MAGIC: &[u8] = b"GCVS\x01";

/// A little-endian reader over the state bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn i8(&mut self) -> Option<i32> {
        self.u8().map(|b| b as i8 as i32)
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn i16(&mut self) -> Option<i32> {
        self.take(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]) as i32)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn count(&mut self) -> Option<usize> {
        // A count can never exceed what is left: a corrupt count fails instead of allocating.
        let n = self.u32()? as usize;
        (n <= self.bytes.len() - self.at).then_some(n)
    }
}

/// The dynamic state of a run, flattened to i32s for the page (layout in `push`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub words: Vec<i32>,
}

/// Fixed header words before the sections (see `decode`).
pub const HEADER_WORDS: usize = 14;

/// Decodes `sim`'s state into `out`. Layout (all i32):
/// `tick, status (0 running, 1 won, 2 dead), x, y, vx, vy, flags (1 on ground, 2 jump held,
/// 4 boost available, 8 rising), facing, riding, eggs, collected, checkpoint,
/// shoot cooldown, ground block id`; then sections, each a count and records:
/// pebbles `[active, x, y, vx]`, dynamic tiles `[tile index, state (0 intact, 1 shaking,
/// 2 gone), timer]`, walkers `[x, y, dir, alive, wait]`, flyers `[x, y, dir, alive, wait]`,
/// platforms `[x, y, dir]`, rocks `[active, x, y]` (4 per spawner), berries `[taken]`.
/// Positions are top-left corners in sub-units (a tile is 4096). Returns `false` if the
/// state bytes do not have the layout this reads.
pub fn decode(sim: &Sim, map: &Map, dyn_tiles: &[u32], out: &mut Vec<i32>) -> bool {
    let mut bytes = Vec::with_capacity(512);
    sim.state_bytes(&mut bytes);
    out.clear();
    let ok = read(&bytes, sim, map, dyn_tiles, out).is_some();
    if !ok {
        out.clear();
    }
    ok
}

fn read(bytes: &[u8], sim: &Sim, _map: &Map, dyn_tiles: &[u32], out: &mut Vec<i32>) -> Option<()> {
    let mut c = Cursor { bytes, at: 0 };
    if c.take(MAGIC.len())? != MAGIC {
        return None;
    }
    let tick = c.u32()?;
    let status = c.u8()?;
    let _rng = c.take(8)?;
    let (x, y, vx, vy) = (c.i32()?, c.i32()?, c.i32()?, c.i32()?);
    let mut flags = 0;
    for bit in [1, 2, 4, 8] {
        if c.u8()? != 0 {
            flags |= bit;
        }
    }
    let _coyote = c.u8()?;
    let cooldown = c.u8()?;
    let facing = c.i8()?;
    let riding = c.i16()?;
    let ground = c.u8()?;
    let eggs = c.u16()?;
    // Fill the header in the documented order; collected and checkpoint come at the end of
    // the bytes and are patched in below.
    out.extend_from_slice(&[
        tick as i32,
        status as i32,
        x,
        y,
        vx,
        vy,
        flags,
        facing,
        riding,
        eggs as i32,
        0,
        0,
        cooldown as i32,
        ground as i32,
    ]);
    debug_assert_eq!(out.len(), HEADER_WORDS);
    // Pebbles: a fixed number, no count in the bytes.
    let pebbles = 4;
    out.push(pebbles);
    for _ in 0..pebbles {
        let active = c.u8()? as i32;
        let (px, py, pvx) = (c.i32()?, c.i32()?, c.i32()?);
        let _life = c.u8()?;
        out.extend_from_slice(&[active, px, py, pvx]);
    }
    let n = c.count()?;
    if n != dyn_tiles.len() {
        return None;
    }
    out.push(n as i32);
    for &tile in dyn_tiles {
        let state = c.u8()? as i32;
        let timer = c.u16()? as i32;
        out.extend_from_slice(&[tile as i32, state, timer]);
    }
    // Alive enemies' positions, walkers then flyers, from the engine's own accessor.
    let mut alive = sim.enemies();
    for _kind in 0..2 {
        let n = c.count()?;
        out.push(n as i32);
        for _ in 0..n {
            let pos = c.i32()?;
            let dir = c.i8()?;
            let wait = c.u32()? as i32;
            let live = c.u8()? != 0;
            let (ex, ey) = if live { alive.next()? } else { (pos, 0) };
            out.extend_from_slice(&[ex, ey, dir, live as i32, wait]);
        }
    }
    if alive.next().is_some() {
        return None;
    }
    let n = c.count()?;
    out.push(n as i32);
    for _ in 0..n {
        let _progress = c.i32()?;
        let dir = c.i8()?;
        let (px, py) = (c.i32()?, c.i32()?);
        let (_dx, _dy) = (c.i32()?, c.i32()?);
        out.extend_from_slice(&[px, py, dir]);
    }
    let spawners = c.count()?;
    out.push((spawners * 4) as i32);
    for _ in 0..spawners {
        let _timer = c.u32()?;
        for _ in 0..4 {
            let active = c.u8()? as i32;
            let (rx, ry, _vy) = (c.i32()?, c.i32()?, c.i32()?);
            out.extend_from_slice(&[active, rx, ry]);
        }
    }
    let n = c.count()?;
    out.push(n as i32);
    for _ in 0..n {
        out.push(c.u8()? as i32);
    }
    let collected = c.u16()? as i32;
    let checkpoint = c.i16()?;
    out[10] = collected;
    out[11] = checkpoint;
    // The whole layout read, nothing left over, and it agrees with the accessors.
    let agrees = c.at == bytes.len()
        && tick == sim.tick()
        && status
            == match sim.status() {
                Status::Running => 0,
                Status::Won => 1,
                Status::Dead => 2,
            }
        && x == sim.player().x
        && y == sim.player().y
        && collected == sim.collected() as i32
        && checkpoint == sim.checkpoint() as i32;
    agrees.then_some(())
}

/// The static part of a map the page draws once: tiles and entities.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MapInfo {
    pub name: String,
    pub width: i32,
    pub height: i32,
    /// One block id per tile, rows top to bottom.
    pub tiles: Vec<u8>,
    pub entities: Vec<EntityInfo>,
    /// Tile index of each cracked or crumbling tile, in grid order (the view's dynamic tiles).
    pub dyn_tiles: Vec<u32>,
    pub map_hash: String,
}

#[derive(Serialize)]
pub struct EntityInfo {
    pub kind: &'static str,
    pub x: i32,
    pub y: i32,
    /// Every parameter of the kind by name, resolved (enum parameters as their word).
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// The cracked and crumbling tiles in grid order: the order of the state's dynamic tiles.
pub fn dyn_tiles(map: &Map) -> Vec<u32> {
    map.tiles()
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            matches!(
                b,
                horst_engine::Block::Cracked | horst_engine::Block::Crumbling
            )
        })
        .map(|(i, _)| i as u32)
        .collect()
}

pub fn map_info(map: &Map) -> MapInfo {
    let entities = map
        .entities()
        .iter()
        .map(|e| {
            let def = e.kind.def();
            let mut params = serde_json::Map::new();
            for (i, p) in def.params.iter().enumerate() {
                let v = e.param(i);
                let value = match p.ty {
                    horst_engine::ParamType::Enum(_) => serde_json::Value::from(p.format_value(v)),
                    horst_engine::ParamType::Int { .. } => serde_json::Value::from(v),
                };
                params.insert(p.name.to_string(), value);
            }
            EntityInfo {
                kind: def.name,
                x: e.x,
                y: e.y,
                params,
            }
        })
        .collect();
    MapInfo {
        name: map.name().to_string(),
        width: map.width(),
        height: map.height(),
        tiles: map.tiles().iter().map(|b| *b as u8).collect(),
        entities,
        dyn_tiles: dyn_tiles(map),
        map_hash: map.hash(),
    }
}
