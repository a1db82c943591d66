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
//! This search looks for it. Every node is the bird standing still on the ground or on a
//! platform (or dead, or won); a move from a stand is a walk (a direction held some ticks) or a
//! jump (jump held some ticks for its height, a direction held some ticks for its length, and
//! in some the egg boost pressed once at a fixed tick of the flight), then nothing held until
//! the bird stands again, and [`PAUSE`] ticks more (a person looks before the next move). Waits
//! (nothing held for a while) are tried where something moves. For each kind of jump and
//! direction, every length of the direction's hold on a grid of [`STEP`] ticks is run, and the
//! lengths that end standing on the same ledge (`support`) form runs; each run of at least
//! [`MIN_RUN`] gives one child, with the hold in its middle: the hop a person makes is the one
//! with the most room either way, not the first that works, and a ledge a few holds reach is a
//! hop a person misses. Each walk's length is a child of its own (a walk puts the bird where a
//! jump starts). Stands are told apart by the state key in cells of half a tile.
//!
//! Shots: where shooting can change something (`Ctx::shoot_useful`), each move's run notes the
//! ticks on which a pebble fired would fly at a target (`Ctx::target_ahead`), and the move is
//! run again with the shoot button tapped on the middle tick of each run of them (at most
//! [`MAX_SHOTS`]): every move that is not aimed (walks, jumps straight up, waits, lost ones
//! too, as a shot may save them) and the middle hold of every aimed one. So a walk into a shaft
//! shoots the plug it falls past (`levels/probes/guest-shot-from-a-fall`), and a marmot ahead
//! is shot from a stand. A shot move ends in a place of its own (the state key holds what the
//! pebble broke or killed).
//!
//! The nodes are expanded best first by the relaxed distance to a nest (the search's own
//! heuristic, `Ctx::distance`), then by the tick, then in the order found: sequential and
//! bounded by referee ticks ([`CALM_TICKS`], the moves' runs), never by the clock, so its
//! answer is the same on every run, machine and thread count. It proves nothing: it is only
//! asked for a route when the fast one is `tight` or `frame_perfect`, and its route replaces
//! the fast one only where its own report (the referee's, `horst_feasibility`) is better.
//!
//! Rides: a stand may be on a ferry or a lift (the bird's own speed 0, the platform carrying
//! it); a hop onto a platform is aimed at the platform, and waits from a stand on it ride on,
//! so a route that a person rides (`levels/probes/guest-long-descent-512`'s ferries, a lift up a
//! shaft) is a chain of calm moves too.

use crate::search::{state_key, Ctx, Stage};
use horst_engine::physics::{PLAYER_H, PLAYER_W, TILE_SHIFT};
use horst_engine::{Block, Map, Sim, Status, Step};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// The work one calm search may do at most, in referee ticks: about 0.3 s of one core at the
/// engine's pace (5-10 million ticks a second on a slow machine). The lattice probe's calm
/// route costs about a tenth of it (`tests/probes.rs`, `the_calm_route_is_the_same_on_every_call`).
/// Checked between stands, so passed by at most one stand's moves (about 300 runs, and where
/// shooting can change something up to [`MAX_SHOTS`] more for each move not aimed and each
/// hop kept: about 500). Where shooting can change something a tick also looks for targets
/// (`Ctx::target_ahead`, every enemy): on 128 jackdaws about 2.4 times a plain tick's cost
/// (docs/benchmarks.md, the tenth round of guest probes), so the budget counts each look too
/// ([`look_cost`]).
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

/// Flight ticks at which the egg boost is pressed (held [`BOOST_HOLD`] ticks) after a jump held
/// [`BOOST_JUMP`] ticks (a fresh press: jump let go before it). A full jump's apex comes
/// 17 ticks after take-off (1630 / 96).
const BOOST_AT: [u16; 2] = [20, 30];
const BOOST_JUMP: u16 = 16;

/// How long the egg boost is held: 30 ticks, or on a map with crumbling ledges 12 (the boost's
/// rise is below the jump cut's 480 after 9, so the flight is the same), so that jump is let go
/// before the bird lands and a fresh press can come at once: a crumbling ledge of delay 1 is
/// gone the tick after the landing (`levels/probes/guest-crumble-1-ladder`).
const BOOST_HOLD: u16 = 30;
const BOOST_HOLD_CRUMBLING: u16 = 12;

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
    /// The work its budget counted, in referee ticks: the ticks simulated and the looks for
    /// targets ([`look_cost`]).
    pub work_ticks: u64,
    /// Referee ticks simulated.
    pub referee_ticks: u64,
    /// Looks for targets (`Ctx::target_ahead`), one on every tick of a move where shooting can
    /// change something.
    pub looks: u64,
    /// Standing places expanded.
    pub expanded: u64,
}

/// What a look for targets (`Ctx::target_ahead`) costs, in 64ths of a referee tick: one per
/// enemy and rock-fall (it works out where every enemy is, where a referee tick follows only
/// the enemies near the bird), an eighth of a tick at the least (the pebble's row, 15 tiles of
/// it). On `levels/probes/limit-128-jackdaws` a tick that also looked cost 2.4 plain ones
/// (docs/benchmarks.md, the tenth round of guest probes): a look counts 2 ticks there.
pub fn look_cost(map: &Map) -> u64 {
    let counted = map
        .entities()
        .iter()
        .filter(|e| e.kind.is_enemy() || e.kind == horst_engine::EntityKind::Rockfall)
        .count() as u64;
    counted.max(8)
}

/// The calm search's work so far.
struct Work {
    ticks: u64,
    looks: u64,
    /// [`look_cost`] of the map.
    look_cost: u64,
}

impl Work {
    /// The work in referee ticks, as the budget counts it.
    fn counted(&self) -> u64 {
        self.ticks + self.looks * self.look_cost / 64
    }

    fn calm(&self, steps: Option<Vec<Step>>, expanded: u64) -> Calm {
        Calm {
            steps,
            work_ticks: self.counted(),
            referee_ticks: self.ticks,
            looks: self.looks,
            expanded,
        }
    }
}

struct Node {
    sim: Sim,
    parent: usize,
    /// The steps from the parent's stand to this one.
    steps: Vec<Step>,
}

/// The stands found: each kept once (by its state key) and queued best first by the relaxed
/// distance to a nest, then by the tick, then in the order found.
struct Stands {
    nodes: Vec<Node>,
    seen: HashSet<u64>,
    open: BinaryHeap<Reverse<(u32, u32, usize)>>,
}

impl Stands {
    /// Keeps the stand `sim` (state key `key`), reached from stand `parent` by `steps`, unless
    /// it comes after the replay limit or a stand of its key was kept before.
    fn keep(&mut self, ctx: &Ctx, sim: Sim, key: u64, parent: usize, steps: Vec<Step>) {
        if sim.tick() <= crate::search::MAX_TICKS && self.seen.insert(key) {
            let d = ctx.distance(&sim);
            self.open.push(Reverse((d, sim.tick(), self.nodes.len())));
            self.nodes.push(Node { sim, parent, steps });
        }
    }
}

/// How a move from a stand ends.
enum End {
    Rest(Box<Sim>),
    Won(Vec<Step>),
    Lost,
}

/// Whether the bird stands still on the ground or on a platform (its own speed 0; a platform
/// carries it on: a stand on a ferry or a lift is a ride, and a wait there rides on).
fn at_rest(sim: &Sim) -> bool {
    let p = sim.player();
    p.on_ground && p.vx == 0 && p.vy == 0
}

/// The ledge (or floor) the bird stands on: its row and its leftmost column, the run of
/// supporting tiles (solid or one-way) under the feet; on a platform, `(-2 - index, 0)`.
/// Jumps that end on the same one are one move, the middle hold kept: a person aims a hop at a
/// ledge or a ferry, not at a pixel of it. `None` when nothing is under the feet (a spring's
/// top).
fn support(sim: &Sim) -> Option<(i32, i32)> {
    let p = sim.player();
    if p.riding >= 0 {
        return Some((-2 - p.riding as i32, 0));
    }
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

/// Whether nothing under the bird's feet holds for good: it stands on crumbling ledges, or on
/// one that has fallen this tick (delay 1 takes it away on the tick of the landing), not riding.
fn on_crumbling(sim: &Sim) -> bool {
    let p = sim.player();
    p.riding < 0 && {
        let ty = (p.y + PLAYER_H) >> TILE_SHIFT;
        (p.x >> TILE_SHIFT..=(p.x + PLAYER_W - 1) >> TILE_SHIFT).all(|tx| {
            let b = sim.block_at(tx, ty);
            !(b.is_solid() || b == Block::Ledge)
        })
    }
}

/// The shoot button's bit in an action (engine/src/lib.rs `actions`).
const SHOOT: u8 = 2;

/// Shots tried in one move at most: the middles of its first runs of ticks on which a pebble
/// could hit something (`Ctx::target_ahead`).
const MAX_SHOTS: usize = 2;

/// Appends one tick of `action` to run-length `steps`.
fn push_tick(steps: &mut Vec<Step>, action: u8) {
    match steps.last_mut() {
        Some(last) if last.action == action && last.ticks < u16::MAX => last.ticks += 1,
        _ => steps.push(Step { action, ticks: 1 }),
    }
}

/// How a move is run: the shoot button tapped on one tick of it (counted from its first,
/// the ticks of waiting for the stand included), and where the ticks on which a pebble fired
/// then could hit something are written (`None`: not looked for).
struct Shots<'a> {
    at: Option<u32>,
    targets: Option<(&'a Ctx, &'a mut Vec<u32>)>,
}

impl Shots<'_> {
    /// No tap, nothing looked for.
    fn none() -> Shots<'static> {
        Shots {
            at: None,
            targets: None,
        }
    }
}

/// Runs `steps` from `sim`, then nothing until the bird stands (and [`PAUSE`] more), with
/// `shots`' tap. The steps actually held (up to the win, the tap in them) replace `steps`.
fn run_move(sim: &Sim, steps: &mut Vec<Step>, work: &mut Work, mut shots: Shots) -> End {
    let mut sim = sim.clone();
    let mut held: Vec<Step> = Vec::new();
    let mut k: u32 = 0;
    let mut tick = |sim: &mut Sim, action: u8, held: &mut Vec<Step>, k: &mut u32| {
        if let Some((ctx, targets)) = shots.targets.as_mut() {
            let p = sim.player();
            let dir = if p.facing < 0 { -1 } else { 1 };
            if p.shoot_cooldown == 0 {
                work.looks += 1;
                if ctx.target_ahead(sim, dir, true) {
                    targets.push(*k);
                }
            }
        }
        let action = if shots.at == Some(*k) {
            action | SHOOT
        } else {
            action
        };
        *k += 1;
        sim.step(action);
        work.ticks += 1;
        push_tick(held, action);
        sim.status()
    };
    for s in steps.iter() {
        for _ in 0..s.ticks {
            match tick(&mut sim, s.action, &mut held, &mut k) {
                Status::Won => return End::Won(held),
                Status::Dead => return End::Lost,
                Status::Running => {}
            }
        }
    }
    let mut waited: u32 = 0;
    let mut still: u16 = 0;
    // The bird at rest on crumbling ledges alone: where they give way before the pause is over,
    // the move ends on the tick it came to rest (a person does not wait there; on a ledge of
    // delay 1 the next jump must come within 4 ticks, `levels/probes/guest-crumble-1-ladder`).
    let mut brief: Option<(Sim, Vec<Step>)> = None;
    while still < PAUSE {
        waited += 1;
        match tick(&mut sim, NONE, &mut held, &mut k) {
            Status::Won => return End::Won(held),
            Status::Dead => return End::Lost,
            Status::Running => {}
        }
        if at_rest(&sim) {
            if still == 0 && on_crumbling(&sim) {
                brief = Some((sim.clone(), held.clone()));
            }
            still += 1;
        } else if still > 0 || waited > REST_WITHIN {
            if let Some((sim, held)) = brief.take() {
                *steps = held;
                return End::Rest(Box::new(sim));
            }
            // Pushed off its stand while pausing, or never standing: not a calm stand.
            return End::Lost;
        }
    }
    *steps = held;
    End::Rest(Box::new(sim))
}

/// The ticks of a move on which to tap the shoot button: the middle of each of the first
/// [`MAX_SHOTS`] runs of neighbouring ticks in `targets` (a person shoots when the target is
/// in line, with the most room either way).
fn shot_ticks(targets: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut a = 0;
    while a < targets.len() && out.len() < MAX_SHOTS {
        let mut b = a + 1;
        while b < targets.len() && targets[b] == targets[b - 1] + 1 {
            b += 1;
        }
        out.push(targets[(a + b - 1) / 2]);
        a = b;
    }
    out
}

/// A jump's inputs: jump held `jump` ticks, direction `dir` held `hold` ticks (both from the
/// first tick), and the egg boost pressed at tick `boost` (held `boost_hold` ticks, no
/// direction after the hold). Ticks of `none` fill the gaps.
fn jump_steps(dir: u8, hold: u16, jump: u16, boost: Option<u16>, boost_hold: u16) -> Vec<Step> {
    let end = boost.map_or(hold.max(jump), |b| hold.max(b + boost_hold));
    let mut out: Vec<Step> = Vec::new();
    for t in 0..end {
        let moving = t < hold;
        let pressed = t < jump || boost.is_some_and(|b| t >= b && t < b + boost_hold);
        let action = if moving { dir } else { NONE } + if pressed { JUMP } else { 0 };
        match out.last_mut() {
            Some(last) if last.action == action => last.ticks += 1,
            _ => out.push(Step { action, ticks: 1 }),
        }
    }
    out
}

/// A family of moves: whether they are aimed (a jump whose holds that land on the same ledge
/// are one move), and the moves.
type Family = (bool, Vec<Vec<Step>>);

/// The moves tried from a stand, as families: each family's moves differ only in how long the
/// direction is held, in grid order, so runs of neighbours that end in the same place can be
/// told apart and the middle one kept.
fn families(waits: bool, boost_hold: u16) -> Vec<Family> {
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
                    .map(|k| jump_steps(dir, k * STEP, jump, boost, boost_hold))
                    .collect(),
            ));
        }
    }
    // Straight up, each height (and boost) alone.
    let mut up: Vec<Vec<Step>> = JUMP_HOLDS
        .iter()
        .map(|&j| jump_steps(NONE, 0, j, None, boost_hold))
        .collect();
    up.extend(
        BOOST_AT
            .iter()
            .map(|&b| jump_steps(NONE, 0, BOOST_JUMP, Some(b), boost_hold)),
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

/// Where a move that ended standing ended, as runs of neighbours are told apart: for an
/// aimed move the ledge or platform (`support`), else the state key.
fn place_of(sim: &Sim, key: u64, aimed: bool) -> (i32, i32, u64) {
    match support(sim) {
        Some((row, col)) if aimed => (row, col, 0),
        _ => (-1, -1, key),
    }
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
    let crumbling = map.tiles().contains(&Block::Crumbling);
    let fams = families(
        waits,
        if crumbling {
            BOOST_HOLD_CRUMBLING
        } else {
            BOOST_HOLD
        },
    );
    let shoot = ctx.shoot_useful;
    // Steps of a stand's moves: a few dozen bytes each, a few per stand.
    let max_nodes = (max_bytes / (crate::memory::sim_bytes(map) + 256)) as usize;
    let mut work = Work {
        ticks: 0,
        looks: 0,
        look_cost: look_cost(map),
    };
    let mut expanded: u64 = 0;
    let mut buf = Vec::new();
    let mut stands = Stands {
        nodes: Vec::new(),
        seen: HashSet::new(),
        open: BinaryHeap::new(),
    };
    // The start: the bird stands (after its first fall, if it starts in the air).
    let start = Sim::new(map, seed);
    let mut first = Vec::new();
    match run_move(&start, &mut first, &mut work, Shots::none()) {
        End::Rest(sim) => {
            let key = state_key(&sim, &KEY_STAGE, &ctx, &mut buf);
            stands.keep(&ctx, *sim, key, usize::MAX, first);
        }
        End::Won(steps) => return work.calm(Some(crate::shorten::run_length(&steps)), expanded),
        End::Lost => return work.calm(None, expanded),
    }
    // The whole route of a move from stand `i` that won, if it wins within the replay limit.
    let won = |nodes: &[Node], mut i: usize, here: &Sim, last: Vec<Step>| {
        let total: u64 = last.iter().map(|s| s.ticks as u64).sum();
        if here.tick() as u64 + total > crate::search::MAX_TICKS as u64 {
            return None;
        }
        let mut parts = vec![last];
        while i != usize::MAX {
            parts.push(nodes[i].steps.clone());
            i = nodes[i].parent;
        }
        parts.reverse();
        Some(crate::shorten::run_length(&parts.concat()))
    };
    while let Some(Reverse((_, _, i))) = stands.open.pop() {
        if work.counted() >= budget || stop() || stands.nodes.len() >= max_nodes {
            break;
        }
        expanded += 1;
        let here = stands.nodes[i].sim.clone();
        // Moves to try again with a shot: (family, move, the ticks a shot could hit on).
        let mut again: Vec<(Vec<Step>, Vec<u32>)> = Vec::new();
        for (aimed, fam) in &fams {
            // Each move's end: the place it ends in (None: lost; for an aimed move the ledge,
            // else the state key), its state key, what it left, and the ticks of its run on
            // which a pebble could hit something.
            type Ending = (
                Option<(i32, i32, u64)>,
                u64,
                Vec<Step>,
                Option<Sim>,
                Vec<u32>,
            );
            let mut ends: Vec<Ending> = Vec::new();
            for mv in fam {
                let mut steps = mv.clone();
                let mut targets = Vec::new();
                let shots = Shots {
                    at: None,
                    targets: shoot.then_some((&ctx, &mut targets)),
                };
                match run_move(&here, &mut steps, &mut work, shots) {
                    End::Won(held) => {
                        if let Some(steps) = won(&stands.nodes, i, &here, held) {
                            return work.calm(Some(steps), expanded);
                        }
                        ends.push((None, 0, steps, None, targets));
                    }
                    End::Lost => ends.push((None, 0, steps, None, targets)),
                    End::Rest(sim) => {
                        let key = state_key(&sim, &KEY_STAGE, &ctx, &mut buf);
                        let place = place_of(&sim, key, *aimed);
                        ends.push((Some(place), key, steps, Some(*sim), targets));
                    }
                }
            }
            // A move from a stand that is not aimed (a walk, a jump straight up, a wait) is
            // tried with a shot wherever one could hit: a walk into a shaft that shoots a
            // plug while falling past it (`levels/probes/guest-shot-from-a-fall`), a marmot
            // shot before the walk meets it, a lost move that a shot saves.
            if !*aimed {
                for (m, end) in ends.iter_mut().enumerate() {
                    if !end.4.is_empty() {
                        again.push((fam[m].clone(), std::mem::take(&mut end.4)));
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
                // An aimed move that lands there only from a few holds is a hop a person
                // misses: a tick of the release either way, or a start a few pixels aside (a
                // walk let go a tick late), lands elsewhere.
                if *aimed && b - a < MIN_RUN {
                    a = b;
                    continue;
                }
                let key = ends[mid].1;
                // The hop a person aims, with a shot in its flight where one could hit.
                if *aimed && ends[mid].0.is_some() && !ends[mid].4.is_empty() {
                    again.push((fam[mid].clone(), std::mem::take(&mut ends[mid].4)));
                }
                if let (Some(_), Some(sim)) = (ends[mid].0, ends[mid].3.take()) {
                    stands.keep(&ctx, sim, key, i, std::mem::take(&mut ends[mid].2));
                }
                a = b;
            }
        }
        // The same moves with the shoot button tapped: each is a place of its own (what the
        // shot broke or killed is in the state key).
        for (mv, targets) in again {
            for at in shot_ticks(&targets) {
                let mut steps = mv.clone();
                let shots = Shots {
                    at: Some(at),
                    targets: None,
                };
                match run_move(&here, &mut steps, &mut work, shots) {
                    End::Won(held) => {
                        if let Some(steps) = won(&stands.nodes, i, &here, held) {
                            return work.calm(Some(steps), expanded);
                        }
                    }
                    End::Lost => {}
                    End::Rest(sim) => {
                        let key = state_key(&sim, &KEY_STAGE, &ctx, &mut buf);
                        stands.keep(&ctx, *sim, key, i, steps);
                    }
                }
            }
        }
    }
    work.calm(None, expanded)
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
