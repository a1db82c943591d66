//! The exact check: every run from the start, followed tick by tick with each of the 20
//! actions in the engine's own simulation, states told apart by their whole bytes
//! (`Sim::state_bytes`, tick included). Nothing is quantised and no hold is chosen, so when
//! every run dies (or the replay limit passes) before a win, no replay wins: a proof
//! ([`crate::Proof::Exhaustive`]); a win it finds is a win. Its states grow about tenfold a
//! tick, so it decides only levels where the bird dies within a few ticks whatever it does (a
//! start on spikes, beside a marmot): those are the levels the search's stages run out of
//! states on long before the clock, where the planner used to answer `time_limit` at once,
//! without a proof, saying the search had run out of time. The planner runs it then, in the
//! time left, so an early `unresolved` always comes with a proof.

use horst_engine::format::limits::REPLAY_MAX_TOTAL_TICKS;
use horst_engine::{EntityKind, Map, Sim, Status, Step};
use std::collections::HashSet;

/// Distinct states the exact check keeps at most (over all ticks), whatever its memory budget.
pub const EXACT_STATES: usize = 4_000_000;

/// What the exact check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exact {
    /// Every run of every input dies (or outlasts the replay limit) without a win.
    AllDie,
    /// A winning run, one tick per step (the first win in breadth-first order).
    Won(Vec<Step>),
    /// More than [`EXACT_STATES`] distinct states, or the states of two ticks held at once
    /// (the simulations and their bytes) over the memory budget: not decided.
    OutOfStates,
    /// `stop` said so (the clock or a cancel): not decided.
    Stopped,
}

/// Whether the level's runs are the same for every seed: no marmot or jackdaw pauses at
/// random and no rock-fall has a jitter (the seed draws nothing else). Only then does a run
/// that dies for one seed die for all, so that [`Exact::AllDie`] proves that no replay, of
/// any seed, wins.
pub fn seed_free(map: &Map) -> bool {
    map.entities().iter().all(|e| {
        let random = match e.kind {
            EntityKind::Walker | EntityKind::Flyer => "pause",
            EntityKind::Rockfall => "jitter",
            _ => return true,
        };
        e.kind
            .def()
            .params
            .iter()
            .position(|p| p.name == random)
            .is_none_or(|i| e.param(i) == 0)
    })
}

/// Runs the exact check with `seed`, holding at most `budget` bytes (counted as the search
/// counts its own, `memory`; the most it held goes to `peak`). Every 1,024 states `every` hears
/// the states kept and the bytes held (for progress reports) and says whether to stop (the
/// clock or a cancel: it decides only whether there is an answer, never which).
pub fn explore(
    map: &Map,
    seed: u32,
    budget: Option<u64>,
    every: &mut dyn FnMut(u64, u64) -> bool,
    peak: &mut u64,
) -> Exact {
    let sim_bytes = crate::memory::sim_bytes(map);
    // Every state kept: its parent's index and the action that led to it (for the replay).
    let mut nodes: Vec<(u32, u8)> = vec![(u32::MAX, 0)];
    let mut layer: Vec<(Sim, u32)> = vec![(Sim::new(map, seed), 0)];
    let mut bytes = Vec::new();
    let mut tick = 0u64;
    while !layer.is_empty() {
        if tick >= REPLAY_MAX_TOTAL_TICKS {
            // A win would come after the replay limit: no replay holds it.
            return Exact::AllDie;
        }
        tick += 1;
        // States of one tick only meet states of the same tick (the tick is in the bytes).
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut next = Vec::new();
        for (sim, node) in &layer {
            for action in 0..20u8 {
                let mut s = sim.clone();
                s.step(action);
                match s.status() {
                    Status::Dead => continue,
                    Status::Won => {
                        let mut steps = vec![Step { action, ticks: 1 }];
                        let mut at = *node;
                        while at != 0 {
                            let (parent, a) = nodes[at as usize];
                            steps.push(Step {
                                action: a,
                                ticks: 1,
                            });
                            at = parent;
                        }
                        steps.reverse();
                        return Exact::Won(steps);
                    }
                    Status::Running => {}
                }
                bytes.clear();
                s.state_bytes(&mut bytes);
                if seen.contains(&bytes) {
                    continue;
                }
                // Two ticks' simulations and the bytes seen this tick, and every state's parent.
                let held = (layer.len() + next.len() + 1) as u64 * sim_bytes
                    + (seen.len() + 1) as u64 * (bytes.len() as u64 + 48)
                    + nodes.len() as u64 * 8;
                *peak = (*peak).max(held);
                if nodes.len() >= EXACT_STATES || budget.is_some_and(|b| held > b) {
                    return Exact::OutOfStates;
                }
                if nodes.len().is_multiple_of(1024) && every(nodes.len() as u64, held) {
                    return Exact::Stopped;
                }
                seen.insert(bytes.clone());
                nodes.push((*node, action));
                next.push((s, (nodes.len() - 1) as u32));
            }
        }
        layer = next;
    }
    Exact::AllDie
}

#[cfg(test)]
mod tests {
    use super::*;
    use horst_engine::{parse_map, referee, Replay};

    fn map(grid: &str, entities: &str) -> Map {
        let rows: Vec<&str> = grid.lines().collect();
        let text = format!(
            "gcv-map 1\nname: t\nsize: {} {}\ngrid:\n{}\nentities:\n{}\n",
            rows[0].len(),
            rows.len(),
            grid,
            entities
        );
        parse_map(&text).unwrap()
    }

    #[test]
    fn a_start_in_spikes_dies_whatever_the_input() {
        let m = map("......\n.^....\nGGGGGG", "start 1 1\nnest 3 1");
        assert_eq!(
            explore(&m, 1, None, &mut |_, _| false, &mut 0),
            Exact::AllDie
        );
        assert!(seed_free(&m));
    }

    #[test]
    fn a_win_it_finds_is_a_win() {
        // The nest's tile begins 512 sub-units right of the bird: four ticks of running.
        let m = map("......\n......\nGGGGGG", "start 1 1\nnest 2 1");
        let Exact::Won(steps) = explore(&m, 1, None, &mut |_, _| false, &mut 0) else {
            panic!("no win");
        };
        assert!(
            referee(
                &m,
                &Replay {
                    seed: 1,
                    actions: steps
                }
            )
            .won
        );
    }

    #[test]
    fn the_budget_and_the_stop_decide_nothing() {
        let m = map("..........\n..........\nGGGGGGGGGG", "start 1 1\nnest 9 0");
        assert_eq!(
            explore(&m, 1, Some(1), &mut |_, _| false, &mut 0),
            Exact::OutOfStates
        );
        assert_eq!(
            explore(&m, 1, None, &mut |_, _| true, &mut 0),
            Exact::Stopped
        );
    }

    #[test]
    fn random_pauses_and_jitter_make_a_level_depend_on_the_seed() {
        let grid = "......\n......\nGGGGGG";
        assert!(seed_free(&map(
            grid,
            "start 0 1\nnest 5 1\nwalker 3 1 pause=0"
        )));
        assert!(!seed_free(&map(grid, "start 0 1\nnest 5 1\nwalker 3 1")));
        assert!(!seed_free(&map(
            grid,
            "start 0 1\nnest 5 1\nrockfall 3 0 jitter=5"
        )));
    }
}
