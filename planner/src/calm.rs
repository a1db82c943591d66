//! The calm route: a person's way through a level, a chain of moves each made from a stand.
//!
//! The search's replay is its fastest route, and the relaxation (`horst_feasibility::relax`)
//! changes that route's timing, never the route. Where the fastest route is a chain of
//! running leaps that never stops (`levels/probes/guest-lattice-many-routes`: it lands on a
//! ledge and jumps on within 6 ticks, braking in the air, so a jump a tick off lands 2.5 px
//! aside and the next leap of fixed length runs off the next ledge), no re-timing makes it
//! calm, and the report judged the planner's haste: `frame_perfect`, where a person stops on
//! every ledge and has 14 ticks of room for each hop. A calm route is another route.
//!
//! This search looks for it. Every node is the bird standing still on the ground (or dead,
//! or won); a move from a stand is a walk (a direction held some ticks) or a jump (jump held
//! some ticks for its height, a direction held some ticks for its length, and in some the egg
//! boost pressed once at a fixed tick of the flight), then nothing held until the bird stands
//! again, and [`PAUSE`] ticks more (a person looks before the next move). Waits (nothing held
//! for a while) are tried where something moves. For each kind of jump and direction, every
//! length of the direction's hold on a grid of [`STEP`] ticks is run, and the lengths that end
//! standing on the same ledge (`support`) form runs; each run of at least [`MIN_RUN`] gives one
//! child, with the hold in its middle: the hop a person makes is the one with the most room
//! either way, not the first that works, and a ledge a few holds reach is a hop a person
//! misses. Each walk's length is a child of its own (a walk puts the bird where a jump starts).
//! Stands are told apart by the state key in cells of half a tile.
//!
//! The nodes are expanded best first by the relaxed distance to a nest (the search's own
//! heuristic, `Ctx::distance`), then by the tick, then in the order found: sequential and
//! bounded by referee ticks ([`CALM_TICKS`], the moves' runs), never by the clock, so its
//! answer is the same on every run, machine and thread count. It proves nothing: it is only
//! asked for a route when the fast one is `tight` or `frame_perfect`, and its route replaces
//! the fast one only where its own report (the referee's, `horst_feasibility`) is better.

use crate::search::{state_key, Ctx, Stage};
use horst_engine::physics::{PLAYER_H, PLAYER_W, TILE_SHIFT};
use horst_engine::{Map, Sim, Status, Step};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// The referee ticks one calm search may simulate at most: about 0.3 s of one core at the
/// engine's pace (5-10 million ticks a second on a slow machine). The lattice probe's calm
/// route costs about a tenth of it (`tests/probes.rs`, `the_calm_route_is_the_same_on_every_call`).
/// Checked between stands, so passed by at most one stand's moves (about 300 runs).
pub const CALM_TICKS: u64 = 3_000_000;

/// Ticks the bird stands after it has come to rest, before the next move: a person's look,
/// and room for the next input to come a few ticks early.
pub const PAUSE: u16 = 10;

/// The fewest neighbouring holds of an aimed move (a jump) that must end on the same ledge
/// for the move to count: 3 on the grid of [`STEP`], 5 ticks or more of room for the release
/// (the window of a `fair` input), and as many pixels of room for where it starts.
const MIN_RUN: usize = 3;

/// The grid of a direction's hold in a move (ticks), and its longest hold.
const STEP: u16 = 2;
const MAX_HOLD: u16 = 48;

/// How long a jump's button is held: a tap, a middle jump, and a full jump (the jump stops
/// rising well before 30 ticks, so a release a few ticks either way changes nothing).
const JUMP_HOLDS: [u16; 3] = [3, 9, 30];

/// Flight ticks at which the egg boost is pressed (held 30 ticks) after a jump held
/// [`BOOST_JUMP`] ticks (a fresh press: jump let go before it). A full jump's apex comes
/// 17 ticks after take-off (1630 / 96).
const BOOST_AT: [u16; 2] = [20, 30];
const BOOST_JUMP: u16 = 16;

/// A walk's grid and its longest hold (4 tiles at a run).
const WALK_STEP: u16 = 4;
const MAX_WALK: u16 = 64;

/// Waits tried from a stand where something moves.
const WAITS: [u16; 3] = [20, 60, 180];

/// The most ticks after a move's last input before the bird must stand (a fall of the
/// map's 128 rows takes about 250).
const REST_WITHIN: u32 = 400;

/// The bytes the stands kept may take at most (each a `Sim`, `memory::sim_bytes`, and its
/// steps): the search's own data may still be alive when this runs (it is part of finishing
/// a win), so this stays a small part of what a job may hold: an eighth of its memory budget
/// ([`max_bytes`]), 64 MiB of the default 512. 64 MiB: tens of thousands of stands on most
/// levels, about 3,900 on one with 4,096 crumbling tiles (16 KB a state).
pub const MAX_BYTES: u64 = 64 << 20;

/// The bytes a calm search of a job with the memory budget `budget` (`None`: the default)
/// may keep: an eighth of it, [`MAX_BYTES`] at most.
pub fn max_bytes(budget: Option<u64>) -> u64 {
    (budget.unwrap_or(crate::DEFAULT_MEMORY_BUDGET) / 8).min(MAX_BYTES)
}

/// Actions (engine/src/lib.rs `actions`): the move times four, plus one for the jump.
const NONE: u8 = 4;
const JUMP: u8 = 1;
/// Left, right, slow left, slow right (walks), and left and right (jumps).
const DIRS: [u8; 4] = [0, 8, 12, 16];
const JUMP_DIRS: [u8; 2] = [0, 8];

/// The state key's cells: half a tile (a stand is told from another by where on a ledge it
/// is, roughly; the moves that end in the same half tile are one move, the middle one kept),
/// the bird's speed is 0 at a stand.
const KEY_STAGE: Stage = Stage {
    pos_shift: 11,
    vx_shift: 8,
    vy_shift: 8,
    move_holds: &[],
    jump_holds: &[],
    wait_holds: &[],
    slow: true,
    phase_shift: 3,
    full: false,
    tick_shift: None,
    cap: None,
    far_shots: false,
};

/// What a calm search found, and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calm {
    /// The winning steps (run-length encoded, cut at the win), or none.
    pub steps: Option<Vec<Step>>,
    /// Referee ticks simulated.
    pub work_ticks: u64,
    /// Standing places expanded.
    pub expanded: u64,
}

struct Node {
    sim: Sim,
    parent: usize,
    /// The steps from the parent's stand to this one.
    steps: Vec<Step>,
}

/// How a move from a stand ends.
enum End {
    Rest(Box<Sim>),
    Won(Vec<Step>),
    Lost,
}

/// Whether the bird stands still on the ground (not on a platform: its ride moves it).
fn at_rest(sim: &Sim) -> bool {
    let p = sim.player();
    p.on_ground && p.riding < 0 && p.vx == 0 && p.vy == 0
}

/// The ledge (or floor) the bird stands on: its row and its leftmost column, the run of
/// supporting tiles (solid or one-way) under the feet. Jumps that end on the same one are one
/// move, the middle hold kept: a person aims a hop at a ledge, not at a pixel of it. `None`
/// when nothing is under the feet (a platform, a spring's top).
fn support(sim: &Sim) -> Option<(i32, i32)> {
    let p = sim.player();
    let ty = (p.y + PLAYER_H) >> TILE_SHIFT;
    let holds = |tx: i32| {
        tx >= 0 && tx < sim.width() && {
            let b = sim.block_at(tx, ty);
            b.is_solid() || b.is_one_way()
        }
    };
    let mut tx = (p.x >> TILE_SHIFT..=(p.x + PLAYER_W - 1) >> TILE_SHIFT).find(|&t| holds(t))?;
    while holds(tx - 1) {
        tx -= 1;
    }
    Some((ty, tx))
}

/// Runs `steps` from `sim`, then nothing until the bird stands (and [`PAUSE`] more).
/// The steps actually held (up to the win) are appended to `steps`.
fn run_move(sim: &Sim, steps: &mut Vec<Step>, ticks: &mut u64) -> End {
    let mut sim = sim.clone();
    let mut held: Vec<Step> = Vec::new();
    for s in steps.iter() {
        for k in 0..s.ticks {
            sim.step(s.action);
            *ticks += 1;
            match sim.status() {
                Status::Won => {
                    held.push(Step {
                        action: s.action,
                        ticks: k + 1,
                    });
                    return End::Won(held);
                }
                Status::Dead => return End::Lost,
                Status::Running => {}
            }
        }
        held.push(*s);
    }
    let mut waited: u32 = 0;
    let mut still: u16 = 0;
    while still < PAUSE {
        sim.step(NONE);
        *ticks += 1;
        waited += 1;
        match sim.status() {
            Status::Won => {
                held.push(Step {
                    action: NONE,
                    ticks: waited as u16,
                });
                return End::Won(held);
            }
            Status::Dead => return End::Lost,
            Status::Running => {}
        }
        if at_rest(&sim) {
            still += 1;
        } else if still > 0 || waited > REST_WITHIN {
            // Pushed off its stand while pausing, or never standing: not a calm stand.
            return End::Lost;
        }
    }
    held.push(Step {
        action: NONE,
        ticks: waited as u16,
    });
    *steps = held;
    End::Rest(Box::new(sim))
}

/// A jump's inputs: jump held `jump` ticks, direction `dir` held `hold` ticks (both from the
/// first tick), and the egg boost pressed at tick `boost` (held 30 ticks, no direction after
/// the hold). Ticks of `none` fill the gaps.
fn jump_steps(dir: u8, hold: u16, jump: u16, boost: Option<u16>) -> Vec<Step> {
    let end = boost.map_or(hold.max(jump), |b| hold.max(b + 30));
    let mut out: Vec<Step> = Vec::new();
    for t in 0..end {
        let moving = t < hold;
        let pressed = t < jump || boost.is_some_and(|b| t >= b && t < b + 30);
        let action = if moving { dir } else { NONE } + if pressed { JUMP } else { 0 };
        match out.last_mut() {
            Some(last) if last.action == action => last.ticks += 1,
            _ => out.push(Step { action, ticks: 1 }),
        }
    }
    out
}

/// The moves tried from a stand, as families: each family's moves differ only in how long the
/// direction is held, in grid order, so runs of neighbours that end in the same place can be
/// told apart and the middle one kept.
fn families(waits: bool) -> Vec<(bool, Vec<Vec<Step>>)> {
    let mut out = Vec::new();
    for &dir in &DIRS {
        // Walks: each length its own place (a walk positions the bird for the next move).
        out.push((
            false,
            (1..=MAX_WALK / WALK_STEP)
                .map(|k| {
                    vec![Step {
                        action: dir,
                        ticks: k * WALK_STEP,
                    }]
                })
                .collect(),
        ));
    }
    for &dir in &JUMP_DIRS {
        // Jumps of each height, with and without the boost, and the direction held from the
        // first tick (none at all: straight up, once per family below).
        let mut kinds: Vec<(u16, Option<u16>)> = JUMP_HOLDS.iter().map(|&j| (j, None)).collect();
        kinds.extend(BOOST_AT.iter().map(|&b| (BOOST_JUMP, Some(b))));
        for (jump, boost) in kinds {
            out.push((
                true,
                (1..=MAX_HOLD / STEP)
                    .map(|k| jump_steps(dir, k * STEP, jump, boost))
                    .collect(),
            ));
        }
    }
    // Straight up, each height (and boost) alone.
    let mut up: Vec<Vec<Step>> = JUMP_HOLDS
        .iter()
        .map(|&j| jump_steps(NONE, 0, j, None))
        .collect();
    up.extend(
        BOOST_AT
            .iter()
            .map(|&b| jump_steps(NONE, 0, BOOST_JUMP, Some(b))),
    );
    for u in up {
        out.push((false, vec![u]));
    }
    if waits {
        for &w in &WAITS {
            out.push((
                false,
                vec![vec![Step {
                    action: NONE,
                    ticks: w,
                }]],
            ));
        }
    }
    out
}

/// Searches a calm route within `budget` referee ticks and `max_bytes` of stands kept
/// ([`max_bytes`]); `stop` is asked between expansions.
pub fn calm_route(
    map: &Map,
    seed: u32,
    budget: u64,
    max_bytes: u64,
    stop: &dyn Fn() -> bool,
) -> Calm {
    let ctx = Ctx::new(map);
    let waits = map.entities().iter().any(|e| {
        use horst_engine::sim::palette::EntityKind;
        matches!(
            e.kind,
            EntityKind::Platform | EntityKind::Flyer | EntityKind::Walker | EntityKind::Rockfall
        )
    });
    let fams = families(waits);
    // Steps of a stand's moves: a few dozen bytes each, a few per stand.
    let max_nodes = (max_bytes / (crate::memory::sim_bytes(map) + 256)) as usize;
    let mut ticks: u64 = 0;
    let mut expanded: u64 = 0;
    let mut buf = Vec::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut open: BinaryHeap<Reverse<(u32, u32, usize)>> = BinaryHeap::new();
    // The start: the bird stands (after its first fall, if it starts in the air).
    let start = Sim::new(map, seed);
    let mut first = Vec::new();
    match run_move(&start, &mut first, &mut ticks) {
        End::Rest(sim) => {
            let sim = *sim;
            seen.insert(state_key(&sim, &KEY_STAGE, &ctx, &mut buf));
            let d = ctx.distance(&sim);
            open.push(Reverse((d, sim.tick(), 0)));
            nodes.push(Node {
                sim,
                parent: usize::MAX,
                steps: first,
            });
        }
        End::Won(steps) => {
            return Calm {
                steps: Some(crate::shorten::run_length(&steps)),
                work_ticks: ticks,
                expanded,
            }
        }
        End::Lost => {
            return Calm {
                steps: None,
                work_ticks: ticks,
                expanded,
            }
        }
    }
    let path = |nodes: &[Node], mut i: usize, last: Vec<Step>| {
        let mut parts = vec![last];
        while i != usize::MAX {
            parts.push(nodes[i].steps.clone());
            i = nodes[i].parent;
        }
        parts.reverse();
        crate::shorten::run_length(&parts.concat())
    };
    while let Some(Reverse((_, _, i))) = open.pop() {
        if ticks >= budget || stop() || nodes.len() >= max_nodes {
            break;
        }
        expanded += 1;
        let here = nodes[i].sim.clone();
        for (aimed, fam) in &fams {
            // Each move's end: the place it ends in (None: lost; for an aimed move the ledge,
            // else the state key), its state key, and what it left.
            type Ending = (Option<(i32, i32, u64)>, u64, Vec<Step>, Option<Sim>);
            let mut ends: Vec<Ending> = Vec::new();
            for mv in fam {
                let mut steps = mv.clone();
                match run_move(&here, &mut steps, &mut ticks) {
                    End::Won(held) => {
                        let total: u64 = held.iter().map(|s| s.ticks as u64).sum();
                        let so_far = here.tick() as u64 + total;
                        if so_far <= crate::search::MAX_TICKS as u64 {
                            return Calm {
                                steps: Some(path(&nodes, i, held)),
                                work_ticks: ticks,
                                expanded,
                            };
                        }
                        ends.push((None, 0, steps, None));
                    }
                    End::Lost => ends.push((None, 0, steps, None)),
                    End::Rest(sim) => {
                        let key = state_key(&sim, &KEY_STAGE, &ctx, &mut buf);
                        let place = match support(&sim) {
                            Some((row, col)) if *aimed => (row, col, 0),
                            _ => (-1, -1, key),
                        };
                        ends.push((Some(place), key, steps, Some(*sim)));
                    }
                }
            }
            // Runs of neighbours ending in the same place: the middle one of each.
            let mut a = 0;
            while a < ends.len() {
                let mut b = a + 1;
                while b < ends.len() && ends[b].0 == ends[a].0 {
                    b += 1;
                }
                let mid = (a + b - 1) / 2;
                let key = ends[mid].1;
                // An aimed move that lands there only from a few holds is a hop a person
                // misses: a tick of the release either way, or a start a few pixels aside (a
                // walk let go a tick late), lands elsewhere.
                if *aimed && b - a < MIN_RUN {
                    a = b;
                    continue;
                }
                if let (Some(_), Some(sim)) = (ends[mid].0, ends[mid].3.take()) {
                    if sim.tick() <= crate::search::MAX_TICKS && seen.insert(key) {
                        let d = ctx.distance(&sim);
                        open.push(Reverse((d, sim.tick(), nodes.len())));
                        nodes.push(Node {
                            sim,
                            parent: i,
                            steps: std::mem::take(&mut ends[mid].2),
                        });
                    }
                }
                a = b;
            }
        }
    }
    Calm {
        steps: None,
        work_ticks: ticks,
        expanded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job given less memory gives its calm search less: an eighth, never above the cap.
    #[test]
    fn the_stands_kept_follow_the_jobs_memory_budget() {
        assert_eq!(max_bytes(None), MAX_BYTES);
        assert_eq!(max_bytes(Some(8 << 20)), 1 << 20);
        assert_eq!(max_bytes(Some(4 << 30)), MAX_BYTES);
    }
}
