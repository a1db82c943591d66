//! Shortening, run-length encoding and the referee's confirmation of a found replay.
//!
//! The search's replay is a chain of macro-actions. Shortening merges neighbours and removes
//! segments while the run still wins no later than before; each candidate is simulated from
//! a cached state at the start of the changed segment until its state meets the replay's own
//! at the start of a later step (but for the tick: from there both hold the same steps), or
//! to its end. Merges come first: a merge keeps the timing, so it usually meets the run
//! again a few steps on, where a removal runs to the end; on a long replay the removals alone
//! spent the tick budget and left hundreds of needless steps. It is sequential and bounded by a fixed
//! number of simulations and of simulated ticks, never by the clock, so its result depends on
//! neither the thread count nor the machine's speed nor when the search found the win (the
//! search leaves it [`shorten_reserve`] of the time limit; only a cancel stops it early). The final replay is run-length encoded within the contract's limits
//! and confirmed by `horst_engine::referee`; a replay it does not confirm is never returned.
//! Then it is relaxed for a person (`relax`), and where that still reads `tight` or
//! `frame_perfect`, a calm route (`crate::calm`, `calmer`) relaxed the same way answers instead
//! if its report is better; the shortening, both relaxations and the calm search share the
//! referee ticks of [`FINISH_TICKS`].

use crate::PlanRequest;
use horst_engine::replay::Replay;
use horst_engine::{referee, Map, Sim, Status, Step};
use std::sync::atomic::Ordering;

/// Candidates the shortening may try (each costs its ticks too, see `SHORTEN_TICKS`).
const SHORTEN_BUDGET: u32 = 30_000;
/// Ticks the shortening may simulate (about 1.5 s of one core at the engine's pace).
const SHORTEN_TICKS: u64 = 16_000_000;
/// Ticks the shortening and the relaxation may simulate together: the relaxation gets what
/// the shortening left of this, up to its own budget (most shortenings use little); the calm
/// search and its relaxation what those two left (`calmer`).
const FINISH_TICKS: u64 = 18_000_000;
/// How much of the time limit the search leaves for shortening, relaxing and confirming its
/// win: the tick budgets (and the one report the relaxation may run past its budget) at a slow
/// machine's pace (5 million ticks a second), at most a fifth of the limit. Nothing cuts the
/// finishing by the clock (see `finish`), so the budgets must fit in the reserve: 3.9 s, within
/// the 4 s a fifth of a 20 s playtest leaves.
pub fn shorten_reserve(limit: std::time::Duration) -> std::time::Duration {
    let ticks = FINISH_TICKS + horst_feasibility::WORK_BUDGET_TICKS;
    std::time::Duration::from_secs_f64(ticks as f64 / 5e6).min(limit / 5)
}

/// What the shortening may still spend, in simulated ticks.
struct Ticks(u64);

impl Ticks {
    /// Charges `n` ticks (the loops stop once nothing is left).
    fn spend(&mut self, n: u64) {
        self.0 = self.0.saturating_sub(n);
    }
}
const MAX_STEP_TICKS: u16 = 600;
const MAX_STEPS: usize = 36_000;
const MAX_TOTAL_TICKS: u64 = 36_000;

/// The run of the current replay, step by step: `sims[k]` is the state at the start of step
/// `k`, made when first needed (a change at step `i` keeps `0..=i`), with its state bytes.
struct Prefixes {
    sims: Vec<Sim>,
    bytes: Vec<Option<Vec<u8>>>,
}

impl Prefixes {
    fn new(map: &Map, seed: u32) -> Prefixes {
        Prefixes {
            sims: vec![Sim::new(map, seed)],
            bytes: vec![None],
        }
    }

    /// Keeps the states before steps `0..=k` (the steps before `k` did not change).
    fn keep(&mut self, k: usize) {
        self.sims.truncate(k + 1);
        self.bytes.truncate(k + 1);
    }

    /// The state at the start of step `k` of `steps`, run on from the last one known; charges
    /// what it ran.
    fn at(&mut self, k: usize, steps: &[Step], ticks: &mut Ticks) -> &Sim {
        while self.sims.len() <= k {
            let j = self.sims.len() - 1;
            let mut sim = self.sims[j].clone();
            for _ in 0..steps[j].ticks {
                sim.step(steps[j].action);
            }
            ticks.spend(u64::from(steps[j].ticks));
            self.sims.push(sim);
            self.bytes.push(None);
        }
        &self.sims[k]
    }

    /// The state bytes at the start of step `k` (see `at`).
    fn bytes_at(&mut self, k: usize, steps: &[Step], ticks: &mut Ticks) -> &[u8] {
        self.at(k, steps, ticks);
        let sim = &self.sims[k];
        self.bytes[k].get_or_insert_with(|| {
            let mut b = Vec::new();
            sim.state_bytes(&mut b);
            b
        })
    }
}

/// The tick of the win of a candidate: step `i` of the current replay `cur` (which wins on
/// tick `best`) and what follows replaced by `tail`, whose steps from `same` on are `cur`'s from
/// `same + shift` on. Runs the tail from the state before step `i`, and stops where its state
/// meets the current run's at the start of one of those steps (but for the tick): from there
/// both hold the same steps, so the candidate wins as many ticks before or after `best` as it
/// got there. The answer is the same as a run to the end; it costs the ticks to the meeting.
#[allow(clippy::too_many_arguments)]
fn win_tick(
    pre: &mut Prefixes,
    cur: &[Step],
    best: u32,
    i: usize,
    tail: &[Step],
    same: usize,
    shift: usize,
    ticks: &mut Ticks,
) -> Option<u32> {
    let mut sim = pre.at(i, cur, ticks).clone();
    let from = sim.tick();
    let mut bytes = Vec::new();
    for (m, s) in tail.iter().enumerate() {
        if m >= same && sim.status() == Status::Running {
            let k = m + shift;
            bytes.clear();
            sim.state_bytes(&mut bytes);
            let here = sim.tick();
            let theirs = pre.at(k, cur, ticks).tick();
            if horst_engine::same_state_but_tick(&bytes, pre.bytes_at(k, cur, ticks)) {
                ticks.spend(u64::from(here - from));
                return (best + here).checked_sub(theirs);
            }
        }
        for _ in 0..s.ticks {
            if sim.status() != Status::Running {
                break;
            }
            sim.step(s.action);
        }
        if sim.status() != Status::Running {
            break;
        }
    }
    ticks.spend(u64::from(sim.tick() - from));
    (sim.status() == Status::Won).then(|| sim.tick())
}

/// Cuts the replay right after the winning tick.
fn truncate(map: &Map, seed: u32, steps: &[Step]) -> Option<(Vec<Step>, u32)> {
    let mut sim = Sim::new(map, seed);
    let mut out = Vec::new();
    for s in steps {
        let mut used = 0;
        while used < s.ticks && sim.status() == Status::Running {
            sim.step(s.action);
            used += 1;
        }
        if used > 0 {
            out.push(Step {
                action: s.action,
                ticks: used,
            });
        }
        if sim.status() != Status::Running {
            break;
        }
    }
    (sim.status() == Status::Won).then(|| (out, sim.tick()))
}

/// Merges equal neighbours and splits holds longer than 600 ticks.
pub fn run_length(steps: &[Step]) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for s in steps {
        let mut left = s.ticks as u32;
        if let Some(last) = out.last_mut() {
            if last.action == s.action {
                let room = (MAX_STEP_TICKS - last.ticks) as u32;
                let take = room.min(left);
                last.ticks += take as u16;
                left -= take;
            }
        }
        while left > 0 {
            let take = left.min(MAX_STEP_TICKS as u32);
            out.push(Step {
                action: s.action,
                ticks: take as u16,
            });
            left -= take;
        }
    }
    out
}

/// Shortens the winning `steps` (remove and merge segments while the run still wins no later).
pub fn shorten(
    map: &Map,
    seed: u32,
    steps: Vec<Step>,
    budget: u32,
    stop: &dyn Fn() -> bool,
) -> (Vec<Step>, u32) {
    let (steps, best, _) = shorten_counted(map, seed, steps, budget, stop);
    (steps, best)
}

/// [`shorten`], with the ticks it simulated.
fn shorten_counted(
    map: &Map,
    seed: u32,
    steps: Vec<Step>,
    mut budget: u32,
    stop: &dyn Fn() -> bool,
) -> (Vec<Step>, u32, u64) {
    let Some((mut cur, mut best)) = truncate(map, seed, &steps) else {
        return (steps, 0, 0);
    };
    cur = run_length(&cur);
    let mut ticks = Ticks(SHORTEN_TICKS);
    let mut pre = Prefixes::new(map, seed);
    let mut changed = true;
    while changed && budget > 0 && ticks.0 > 0 && !stop() {
        changed = false;
        // Merge neighbours into one hold of either action.
        let mut i = 0;
        while i + 1 < cur.len() && budget > 0 && ticks.0 > 0 {
            let total = cur[i].ticks as u32 + cur[i + 1].ticks as u32;
            let mut merged = false;
            if total <= MAX_STEP_TICKS as u32 {
                for a in [cur[i].action, cur[i + 1].action] {
                    budget = budget.saturating_sub(1);
                    let mut tail = Vec::with_capacity(cur.len() - i);
                    tail.push(Step {
                        action: a,
                        ticks: total as u16,
                    });
                    tail.extend_from_slice(&cur[i + 2..]);
                    if let Some(t) = win_tick(&mut pre, &cur, best, i, &tail, 1, i + 1, &mut ticks)
                    {
                        if t <= best {
                            cur.splice(i..i + 2, [tail[0]]);
                            best = t;
                            changed = true;
                            merged = true;
                            pre.keep(i);
                            break;
                        }
                    }
                }
            }
            if !merged {
                i += 1;
            }
            // Every candidate: one is a whole run (up to tens of thousands of ticks), and
            // a check every 64 budget units was never reached in the merge loop, where a
            // candidate costs 1 or 2 (an odd budget stayed odd).
            if stop() {
                break;
            }
        }
        // Remove segments, from the end.
        let mut i = cur.len();
        while i > 0 && budget > 0 && ticks.0 > 0 {
            i -= 1;
            if cur.len() <= 1 {
                break;
            }
            budget -= 1;
            let tail: Vec<Step> = cur[i + 1..].to_vec();
            if let Some(t) = win_tick(&mut pre, &cur, best, i, &tail, 0, i + 1, &mut ticks) {
                if t <= best {
                    cur.remove(i);
                    best = t;
                    changed = true;
                    pre.keep(i);
                    i = i.min(cur.len());
                }
            }
            // Every candidate: one is a whole run (up to tens of thousands of ticks), and
            // a check every 64 budget units was never reached in the merge loop, where a
            // candidate costs 1 or 2 (an odd budget stayed odd).
            if stop() {
                break;
            }
        }
        // Shorten holds by a half.
        let mut i = 0;
        while i < cur.len() && budget > 0 && ticks.0 > 0 && !stop() {
            let t0 = cur[i].ticks;
            if t0 >= 2 {
                budget -= 1;
                let mut tail = cur[i..].to_vec();
                tail[0].ticks = t0 / 2;
                if let Some(t) = win_tick(&mut pre, &cur, best, i, &tail, 1, i, &mut ticks) {
                    if t <= best {
                        cur[i].ticks = t0 / 2;
                        best = t;
                        changed = true;
                        pre.keep(i);
                    }
                }
            }
            i += 1;
        }
        if let Some((c, t)) = truncate(map, seed, &cur) {
            cur = run_length(&c);
            best = t;
            pre.keep(0);
        }
    }
    (cur, best, SHORTEN_TICKS - ticks.0)
}

fn within_limits(steps: &[Step]) -> bool {
    !steps.is_empty()
        && steps.len() <= MAX_STEPS
        && steps
            .iter()
            .all(|s| s.action <= 19 && (1..=600).contains(&s.ticks))
        && steps.iter().map(|s| s.ticks as u64).sum::<u64>() <= MAX_TOTAL_TICKS
}

/// Confirms a replay with the referee: `Some(win tick)` only if it is within the contract's
/// limits and the referee says `won`.
pub fn confirm(map: &Map, replay: &Replay) -> Option<u32> {
    if !within_limits(&replay.actions) {
        return None;
    }
    let r = referee(map, replay);
    r.won.then_some(r.ticks)
}

/// Shortens, encodes, confirms and relaxes (for a person, see `relax`) a found replay. Falls
/// back to the unshortened replay if the shortened one is not confirmed; `None` if neither
/// is. Only a cancel cuts the shortening and the relaxation short: their budgets bound them,
/// and a cut by the clock would make the replay depend on the machine's speed and on when the
/// search found the win.
pub fn finish(req: &PlanRequest, steps: Vec<Step>) -> Option<(Replay, u32)> {
    let stop = || req.cancel.load(Ordering::Relaxed);
    let (short, _, spent) =
        shorten_counted(req.map, req.seed, steps.clone(), SHORTEN_BUDGET, &stop);
    for candidate in [short, steps] {
        let replay = Replay {
            seed: req.seed,
            actions: run_length(&candidate),
        };
        if let Some(t) = confirm(req.map, &replay) {
            let budget =
                horst_feasibility::RELAX_BUDGET_TICKS.min(FINISH_TICKS.saturating_sub(spent));
            let (replay, t, report, relaxed) = relax(req, replay, t, budget);
            let left = FINISH_TICKS.saturating_sub(spent + relaxed);
            return Some(calmer(req, replay, t, report, left));
        }
    }
    None
}

/// The calm route (`calm`), where the fast one, relaxed, still reads `tight` or
/// `frame_perfect`: it replaces the fast one if its own relaxed report is better (a lower
/// verdict). The relaxation re-times a route and cannot make a chain of running leaps into
/// hops from a stand; the report is about the easiest route found, not the fastest. `left`:
/// the referee ticks of [`FINISH_TICKS`] the shortening and the relaxation left; the calm
/// search gets at most [`crate::calm::CALM_TICKS`] of them and its relaxation the rest.
fn calmer(
    req: &PlanRequest,
    replay: Replay,
    ticks: u32,
    report: Option<horst_feasibility::Feasibility>,
    left: u64,
) -> (Replay, u32) {
    let Some(verdict) = report
        .map(|r| r.verdict)
        .filter(|v| *v >= horst_feasibility::Verdict::Tight)
    else {
        return (replay, ticks);
    };
    // Its report needs a report's budget after the search.
    let search =
        crate::calm::CALM_TICKS.min(left.saturating_sub(horst_feasibility::WORK_BUDGET_TICKS));
    if search == 0 {
        return (replay, ticks);
    }
    let stop = || req.cancel.load(Ordering::Relaxed);
    let calm = crate::calm::calm_route(
        req.map,
        req.seed,
        search,
        crate::calm::max_bytes(req.memory_budget_bytes),
        &stop,
    );
    let Some(steps) = calm.steps else {
        return (replay, ticks);
    };
    let candidate = Replay {
        seed: req.seed,
        actions: steps,
    };
    let Some(t) = confirm(req.map, &candidate) else {
        return (replay, ticks);
    };
    let (candidate, t, calm_report, _) =
        relax(req, candidate, t, calm_relax_budget(left, calm.work_ticks));
    // Only a complete report counts: one cut short by its budget judged some inputs only, and
    // could call the calm route easier than it is.
    match calm_report {
        Some(r) if r.complete && r.verdict < verdict => (candidate, t),
        _ => (replay, ticks),
    }
}

/// The referee ticks the calm route's relaxation may spend: what the calm search left of
/// `left`, and never more than any relaxation's own budget.
fn calm_relax_budget(left: u64, calm_work: u64) -> u64 {
    horst_feasibility::RELAX_BUDGET_TICKS.min(left.saturating_sub(calm_work))
}

/// The shortened replay is the fastest route, which often needs inputs on exact ticks where a
/// person has room: the feasibility report would judge the planner's haste, not the level.
/// The relaxation pass (`horst_feasibility::relax`, bounded in referee ticks) changes it into
/// a replay with wider input windows where it finds one; the referee confirms it again.
/// Returns the replay, its win tick, its report (none if the relaxation could not judge it)
/// and the referee ticks the relaxation spent.
fn relax(
    req: &PlanRequest,
    replay: Replay,
    ticks: u32,
    budget: u64,
) -> (Replay, u32, Option<horst_feasibility::Feasibility>, u64) {
    let stop = || req.cancel.load(Ordering::Relaxed);
    let Some(r) = horst_feasibility::relax_until(req.map, &replay, budget, &stop) else {
        return (replay, ticks, None, 0);
    };
    if r.changed {
        if let Some(t) = confirm(req.map, &r.replay) {
            return (r.replay, t, Some(r.report), r.work_ticks);
        }
        // Not confirmed (cannot happen: the relaxation runs the referee's own steps): the
        // given replay, unjudged.
        return (replay, ticks, None, r.work_ticks);
    }
    (replay, ticks, Some(r.report), r.work_ticks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Nothing cuts the finishing by the clock, so its budgets must fit the time the search
    /// leaves for it: at a slow machine's pace, within a fifth of a 20 s playtest, without
    /// the cap (a reserve cut to the cap would let a late win run past the job's limit).
    #[test]
    fn the_finishing_budgets_fit_the_reserve() {
        let limit = std::time::Duration::from_secs(20);
        let needed = (FINISH_TICKS + horst_feasibility::WORK_BUDGET_TICKS) as f64 / 5e6;
        assert!(needed <= (limit / 5).as_secs_f64(), "{needed} s");
        assert_eq!(shorten_reserve(limit).as_secs_f64(), needed);
        const { assert!(SHORTEN_TICKS < FINISH_TICKS) };
        const { assert!(horst_feasibility::RELAX_BUDGET_TICKS <= FINISH_TICKS) };
    }

    /// The calm route's relaxation is a relaxation like the fast route's: it gets what the calm
    /// search left of the finishing budget, never more than `RELAX_BUDGET_TICKS` (it got all
    /// of what was left: up to 18 M ticks where the shortening and the first relaxation spent
    /// little, past the 14 M the pass is sized and documented for).
    #[test]
    fn the_calm_routes_relaxation_keeps_to_the_relaxations_budget() {
        let cap = horst_feasibility::RELAX_BUDGET_TICKS;
        assert_eq!(calm_relax_budget(FINISH_TICKS, 0), cap);
        assert_eq!(calm_relax_budget(FINISH_TICKS, 1_000_000), cap);
        assert_eq!(calm_relax_budget(cap / 2, 1_000), cap / 2 - 1_000);
        assert_eq!(calm_relax_budget(1_000, 2_000), 0);
    }

    /// A corridor to the nest, and right in short holds with a pause between each: many
    /// steps shortening can remove.
    fn corridor() -> (Map, Vec<Step>) {
        let map = horst_engine::parse_map(
            "gcv-map 1\nname: corridor\nsize: 24 4\ngrid:\n........................\n........................\nGGGGGGGGGGGGGGGGGGGGGGGG\nEEEEEEEEEEEEEEEEEEEEEEEE\nentities:\nstart 1 1\nnest 20 1\n",
        )
        .unwrap();
        let steps = (0..120)
            .flat_map(|_| {
                [
                    Step {
                        action: 4,
                        ticks: 1,
                    },
                    Step {
                        action: 8,
                        ticks: 2,
                    },
                ]
            })
            .collect();
        (map, steps)
    }

    /// A found win is shortened the same way whatever the time limit and however late the
    /// search found it: only its budgets (and a cancel) bound it. It stopped at the job's
    /// deadline, so a late win came back less shortened, and the replay of one map and seed
    /// depended on the machine's speed and load.
    #[test]
    fn the_shortened_replay_does_not_depend_on_the_clock() {
        let (map, steps) = corridor();
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let finished = |time_limit| {
            let req = PlanRequest {
                map: &map,
                seed: 1,
                time_limit,
                cancel: &cancel,
                memory_budget_bytes: None,
            };
            finish(&req, steps.clone()).expect("the steps win")
        };
        let (hurried, ticks) = finished(std::time::Duration::ZERO);
        let (calm, calm_ticks) = finished(std::time::Duration::from_secs(600));
        assert_eq!(hurried.actions, calm.actions);
        assert_eq!(ticks, calm_ticks);
        assert!(calm.actions.len() < 10, "{:?}", calm.actions);
    }

    /// A long run right with a needless jump every few ticks (the search's replays on long
    /// levels look like this): every jump can go, and a few steps are left. Each
    /// candidate was a whole run to the end and every change made the run's states again, so
    /// on 3,500 ticks the budgets ran out with hundreds of steps left (a 22,541-tick
    /// level kept 1,375 steps, and the feasibility report then checked 67 of its inputs).
    #[test]
    fn a_long_replay_of_needless_jumps_is_shortened_to_a_few_steps() {
        let row = |c: char| std::iter::repeat_n(c, 512).collect::<String>();
        let map = horst_engine::parse_map(&format!(
            "gcv-map 1\nname: lang\nsize: 512 3\ngrid:\n{}\n{}\n{}\nentities:\nstart 0 1\nnest 511 1\n",
            row('.'),
            row('.'),
            row('G')
        ))
        .unwrap();
        let steps: Vec<Step> = (0..1800)
            .map(|k| Step {
                action: if k % 4 == 3 { 9 } else { 8 },
                ticks: 2,
            })
            .collect();
        let (won, _) = truncate(&map, 1, &steps).expect("the steps win");
        let before = run_length(&won).len();
        assert!(before > 800, "{before}");
        let (short, ticks) = shorten(&map, 1, steps, SHORTEN_BUDGET, &|| false);
        assert!(short.len() <= 10, "{} of {before} steps left", short.len());
        let replay = Replay {
            seed: 1,
            actions: run_length(&short),
        };
        assert_eq!(confirm(&map, &replay), Some(ticks));
    }

    /// Shortening stops within a candidate of being told to (a cancel): each
    /// candidate is a whole run. It looked every 64 budget units, and in the merge loop, where
    /// a candidate costs one or two, never once the budget was odd.
    #[test]
    fn shortening_stops_within_a_candidate_of_being_told_to() {
        let (map, steps) = corridor();
        let (won, _) = truncate(&map, 1, &steps).expect("the steps win");
        let before = run_length(&won).len();
        // Told to stop at its fourth look.
        let looks = Cell::new(0u32);
        let stop = || {
            looks.set(looks.get() + 1);
            looks.get() > 3
        };
        let (short, _) = shorten(&map, 1, steps.clone(), SHORTEN_BUDGET, &stop);
        // A change that makes the bird faster also cuts the steps after its earlier win, so
        // a few changes may take more than a step each: most are left.
        assert!(
            short.len() * 4 >= before * 3,
            "{} steps of {before} left: it went on after being told to stop",
            short.len()
        );
        // Told to stop at its first look, it changes nothing.
        let (none, _) = shorten(&map, 1, steps, SHORTEN_BUDGET, &|| true);
        assert_eq!(none, run_length(&won));
        // Not told to stop, it removes most of them.
        let (all, _) = shorten(&map, 1, won.clone(), SHORTEN_BUDGET, &|| false);
        assert!(all.len() * 2 < before, "{} of {before}", all.len());
    }
}
