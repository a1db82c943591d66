//! The relaxation pass: a winning replay changed, a step at a time, into one a person plays
//! more easily, judged by its own report.
//!
//! The planner's replays are its fastest (shortened) route: jumps from a ledge's last tile,
//! turns in mid-air that correct the turn before, a press on the tick of a landing. Their
//! report is often `frame_perfect` although the level has plenty of room, because the replay
//! uses none of it. This pass tries, around the inputs with the smallest window, what a person
//! would do instead: leave a correction out (drop the input, either way round), press a
//! neighbouring input earlier or later (jump sooner, hold longer), move the input itself a few
//! ticks, or hold a calmer action (slow instead of full speed, no direction, no jump), also
//! for a while in the middle of a long stretch (a correction in mid-air: a person steers a
//! long fall onto a small target instead of holding one direction all the way down). A
//! candidate counts only if the referee says it wins (the last action held up to
//! [`EXTRA_TICKS`] longer, cut back to its win) and its own report, complete within the
//! budget, is better: a lower verdict, else wider windows (compared from the narrowest up),
//! else as wide with fewer inputs. The first better one is kept and the pass starts again from it.
//!
//! Then, with a budget of its own ([`WAIT_BUDGET_TICKS`]), it waits longer: a wait (no
//! direction held) before one of the narrowest inputs is held 8-128 ticks longer, the rest of
//! the replay that much later (`wait_longer`). The fastest route leaves a slow ferry on the
//! first tick a jump to the next ledge works, so where the bird stood and when it jumped are
//! exact; a person rides on until the ferry is there, and the jump has room.
//!
//! Before the hill-climb, with a share of its own ([`RECENTRE_BUDGET_TICKS`]), it re-centres
//! (`recentre_all`): input by input in order, each is moved to the middle of the ticks on
//! which it may come (the bird must live until the next input), judged from where the input
//! before it, already moved, left the bird. The fastest route presses every jump on the
//! first tick that works, at the edge of its room; a replay that never stops (a long corridor
//! at full speed) then meets some obstacle at a phase where that room is one tick.
//!
//! Last, with a share of its own ([`STOP_BUDGET_TICKS`]), it stops (`stop_first`): before one
//! of the narrowest inputs the bird walks slowly (or not), stands, and takes a run-up of its
//! own, the input after the run-up's length that lies in the middle of those that live; the
//! rest of the replay follows later by as much, and where it then dies (it meets the next
//! obstacle at another phase) the input before the death is stopped before the same way.
//! A stop cannot free a replay from the position the bird stopped at: a direction let go a
//! tick later stops the bird 600 sub-units (at the slow speed 240) further, and so moves every
//! later jump as far; what a stop gives is a run-up that meets the obstacle in the middle of
//! its room.
//!
//! On what the other steps leave, it walks off (`walk_off`): a jump from the ground into a drop
//! traded for a walk off the edge and the egg boost later in the fall, pressed in the middle of
//! the ticks on which it wins.
//!
//! It is sequential and bounded by referee ticks ([`RELAX_BUDGET_TICKS`]: the win checks and
//! the reports of the candidates), never by the clock, so the same map and replay give the
//! same result on every run, machine and thread count. The report it returns is the one of
//! the replay it returns (`assess` of it gives the same): it never calls a level easier than
//! that replay proves, and a level that needs an exact input on every route stays
//! `frame_perfect`.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use horst_engine::format::limits::{REPLAY_MAX_STEP_TICKS, REPLAY_MAX_TOTAL_TICKS};
use horst_engine::{Map, Replay, Sim, Status, Step};

use crate::{analyse, Feasibility, Verdict, WORK_BUDGET_TICKS};

/// The referee ticks one relaxation may simulate, the first report included: at the engine's
/// 10-20 million ticks per second on one core, 0.7-1.4 s. The re-centring step may spend
/// [`RECENTRE_BUDGET_TICKS`] first; then the hill-climb 6 M and the waiting step
/// [`WAIT_BUDGET_TICKS`] (as before the other two steps came, their ends moved by what the
/// re-centring spent); the stopping step the rest, at least [`STOP_BUDGET_TICKS`], and the
/// walk-off step what that leaves.
pub const RELAX_BUDGET_TICKS: u64 = 14_000_000;

/// How much longer than the replay a candidate may take to win (a calmer route is slower).
pub const EXTRA_TICKS: u32 = 120;

/// Inputs tried per round, the narrowest first (the earliest of equals).
const MAX_TARGETS: usize = 12;

/// The waiting step's own budget (see `wait_longer`), within [`RELAX_BUDGET_TICKS`]: the
/// hill-climb may spend the rest.
pub const WAIT_BUDGET_TICKS: u64 = 2_000_000;

/// The re-centring step's own budget (see `recentre_all`), the first of the pass's steps:
/// the hill-climb and the waiting step start after it with their own shares.
pub const RECENTRE_BUDGET_TICKS: u64 = 2_000_000;

/// The stopping step's own budget (see `stop_first`), within [`RELAX_BUDGET_TICKS`]: what the
/// hill-climb and the waiting step may spend ends this much before the budget does.
pub const STOP_BUDGET_TICKS: u64 = 4_000_000;

/// How many ticks before a narrow input the stop comes (the release of the direction), and
/// how long the bird then stands, its slowing down included (8 ticks from the run speed).
const STOP_BEFORE: [u32; 3] = [24, 12, 40];
const STOP_TICKS: u32 = 30;

/// How long the bird walks slowly before it stops, 0: not at all. A stop's place depends on
/// when the direction was let go, at the run speed by 600 sub-units a tick, at the slow
/// speed by 240: a stop in a gap of 8 px (between two streams of rocks) has a window of 3
/// ticks from a run and of 8 from a slow walk.
const SLOW_FIRST: [u32; 2] = [0, 16];

/// The longest run-up after a stop that the step tries (a run reaches full speed in 10 ticks).
const RUNUP_MAX: u32 = 48;

/// A run-up is judged by the ticks after its press that the bird lives (or a win).
const LOCAL_TICKS: u32 = 90;

/// How many later inputs a stop may re-time (each with a stop of its own) before the
/// candidate is given up: a stop moves the rest of the run by a fraction of a tick's way.
const MAX_REPAIRS: usize = 64;

/// How much longer a wait is held, the longest first.
const WAITS: [u32; 5] = [128, 64, 32, 16, 8];

/// How much earlier an input followed by a longer wait may come.
const EARLIER: [u32; 3] = [0, 4, 8];

/// How many segments before an input its wait may end (the walk to the ferry's edge and the
/// jump come between).
const WAIT_REACH: usize = 3;

/// How far a neighbouring input (and, from 2 ticks, the input itself) is moved.
const SHIFTS: [i32; 12] = [1, -1, 2, -2, 3, -3, 4, -4, 6, -6, 8, -8];

/// How long a correction held in the middle of a long stretch lasts (see `candidates`), and
/// how many ticks of the stretch it leaves on each side at least.
const CORRECTIONS: [u32; 4] = [8, 16, 24, 32];
const CORRECTION_MARGIN: u32 = 8;

/// A relaxed replay and its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relaxation {
    /// The replay the report is about: the one given when no change made it easier, else the
    /// changed one, cut at its win.
    pub replay: Replay,
    pub report: Feasibility,
    /// Whether `replay` differs from the one given.
    pub changed: bool,
    /// Candidates run by the referee, and those kept.
    pub tried: u32,
    pub kept: u32,
    /// Referee ticks spent, the first report included (the budget, passed by at most the
    /// last candidate's run).
    pub work_ticks: u64,
}

/// [`relax_until`] that is never stopped.
pub fn relax(map: &Map, replay: &Replay, budget: u64) -> Option<Relaxation> {
    relax_until(map, replay, budget, &|| false)
}

/// Relaxes a winning replay within `budget` referee ticks; `None` unless it wins. `stop` is
/// asked between candidates (a cancelled job): the best replay so far is returned.
pub fn relax_until(
    map: &Map,
    replay: &Replay,
    budget: u64,
    stop: &dyn Fn() -> bool,
) -> Option<Relaxation> {
    let first = analyse(map, replay, WORK_BUDGET_TICKS)?;
    let mut spent = first.0.work_ticks;
    let out = Relaxation {
        replay: replay.clone(),
        report: first.0,
        changed: false,
        tried: 0,
        kept: 0,
        work_ticks: 0,
    };
    // The replay cut at its win, as run-length segments (neighbours differ).
    let win = run(map, replay.seed, &segments(replay), &mut spent)?;
    let mut best = Best {
        segs: cut(&segments(replay), win),
        windows: first.1,
        out,
    };
    let mut seen = BTreeSet::new();
    seen.insert(best.segs.clone());
    let seed = replay.seed;
    let mut kept = best.out.kept;
    one_pass(
        map, seed, 0, budget, budget, stop, &mut spent, &mut best, &mut seen,
    );
    // The steps again, on what is left of the budget, while a round keeps a change: a stop or
    // a longer wait the last steps kept moves the bird, and the inputs after it then have room
    // to re-centre and climb (`levels/probes/guest-decoy-gap-detour`). A first round that
    // keeps nothing ends the pass as before.
    while best.out.kept > kept && best.open() && !stop() && spent < budget {
        kept = best.out.kept;
        let offset = spent;
        one_pass(
            map,
            seed,
            offset,
            budget - offset,
            budget,
            stop,
            &mut spent,
            &mut best,
            &mut seen,
        );
    }
    let mut out = best.out;
    out.work_ticks = spent;
    Some(out)
}

/// One round of the steps: the re-centring step, the hill-climb, the waiting step, the
/// stopping step and the walk-off step, with their shares of `budget` referee ticks counted
/// from `offset` (the first round from 0, so its shares are what they always were); `cap`
/// bounds every run.
#[allow(clippy::too_many_arguments)]
fn one_pass(
    map: &Map,
    seed: u32,
    offset: u64,
    budget: u64,
    cap: u64,
    stop: &dyn Fn() -> bool,
    spent: &mut u64,
    best: &mut Best,
    seen: &mut BTreeSet<Vec<(u8, u32)>>,
) {
    // The shares: the re-centring step first, then the hill-climb and the waiting step with
    // what they had before the re-centring step and the stopping step came (whatever the
    // re-centring spent is added to their ends), the stopping step the rest.
    let recentre_share = RECENTRE_BUDGET_TICKS.min(budget / 7);
    let stop_share = STOP_BUDGET_TICKS.min(budget * 2 / 7);
    let base = budget - recentre_share - stop_share;
    let before = *spent;
    recentre_all(map, seed, before + recentre_share, stop, spent, best);
    let used = *spent - before;
    let wait_budget = offset + base + used;
    let hill_budget = offset + base.saturating_sub(WAIT_BUDGET_TICKS.min(base / 4)) + used;
    'rounds: while best.open() {
        let Some(key) = best.key() else {
            break;
        };
        // The narrowest inputs first (the earliest of equals).
        for i in best.targets() {
            for cand in candidates(&best.segs, i) {
                if hill_budget <= *spent || stop() {
                    break 'rounds;
                }
                if !seen.insert(cand.clone()) {
                    continue;
                }
                best.out.tried += 1;
                let Some(c) = evaluate(map, seed, &cand, cap, spent) else {
                    continue;
                };
                if c.beats(&key) {
                    seen.insert(c.segs.clone());
                    best.keep(c);
                    continue 'rounds;
                }
            }
        }
        break;
    }
    wait_longer(map, seed, wait_budget, stop, spent, best);
    stop_first(map, seed, offset + budget, stop, spent, best);
    walk_off(map, seed, offset + budget, stop, spent, best);
}

/// What the pass minimises (see `key`).
type Key = (Verdict, Vec<Reverse<u32>>, u32);

/// Runs `step` on each of the narrowest inputs of the best replay, and again from the
/// narrowest whenever it kept a better replay (`Some(true)`); until it keeps none or says stop
/// (`None`: the budget).
fn rounds(best: &mut Best, mut step: impl FnMut(&mut Best, usize, &Key) -> Option<bool>) {
    'rounds: while best.open() {
        let Some(key) = best.key() else {
            return;
        };
        for i in best.targets() {
            match step(best, i, &key) {
                Some(true) => continue 'rounds,
                Some(false) => {}
                None => return,
            }
        }
        return;
    }
}

/// The best replay so far: its segments, the windows of its inputs and its report.
struct Best {
    segs: Vec<(u8, u32)>,
    windows: Vec<u32>,
    out: Relaxation,
}

impl Best {
    /// Not yet `relaxed`, and judged completely: worth trying more.
    fn open(&self) -> bool {
        self.out.report.verdict != Verdict::Relaxed && self.out.report.complete
    }

    fn key(&self) -> Option<Key> {
        key(&self.out.report, &self.windows)
    }

    /// The inputs a step tries, the narrowest first (the earliest of equals).
    fn targets(&self) -> Vec<usize> {
        let mut targets: Vec<usize> = (0..self.windows.len()).collect();
        targets.sort_by_key(|&i| (self.windows[i], i));
        targets.truncate(MAX_TARGETS);
        targets
    }

    /// A better candidate becomes the best.
    fn keep(&mut self, c: Evaluated) {
        self.segs = c.segs;
        self.windows = c.windows;
        self.out.replay = c.replay;
        self.out.report = c.report;
        self.out.changed = true;
        self.out.kept += 1;
    }
}

/// A candidate that wins, cut at its win, with its complete report.
struct Evaluated {
    segs: Vec<(u8, u32)>,
    replay: Replay,
    report: Feasibility,
    windows: Vec<u32>,
}

impl Evaluated {
    /// Its report is better than `key`'s (see `key`).
    fn beats(&self, key: &Key) -> bool {
        self::key(&self.report, &self.windows).is_some_and(|k| k < *key)
    }
}

/// Runs a candidate (its last action held up to [`EXTRA_TICKS`] longer) and, if it wins,
/// reports it within what is left of `budget`; `None` unless it wins with a complete report.
fn evaluate(
    map: &Map,
    seed: u32,
    cand: &[(u8, u32)],
    budget: u64,
    spent: &mut u64,
) -> Option<Evaluated> {
    let mut padded = cand.to_vec();
    let total: u64 = padded.iter().map(|s| u64::from(s.1)).sum();
    let extra = (REPLAY_MAX_TOTAL_TICKS.saturating_sub(total)).min(EXTRA_TICKS.into());
    if let Some(last) = padded.last_mut() {
        last.1 += extra as u32;
    }
    let win = run(map, seed, &padded, spent)?;
    let segs = cut(&padded, win);
    let replay = encode(seed, &segs);
    // Its report's own run of the replay counts too.
    *spent += u64::from(win);
    let left = budget.saturating_sub(*spent).min(WORK_BUDGET_TICKS);
    let (report, windows) = analyse(map, &replay, left)?;
    *spent += report.work_ticks;
    report.complete.then_some(Evaluated {
        segs,
        replay,
        report,
        windows,
    })
}

/// The waiting step, after the hill-climb, with a budget of its own (at least
/// [`WAIT_BUDGET_TICKS`] of `budget`, or a quarter of a smaller one): a person waits longer
/// than the fastest route, on a slow ferry until it is right at the next ledge, on a lift
/// until it is at the top. For the narrowest inputs first, the wait (no direction held) that
/// ends at most [`WAIT_REACH`] inputs before one is held longer, everything after it later by
/// as much: the longest of [`WAITS`] that still wins is reported, and kept if its report is
/// better. (The hill-climb moves an input by 8 ticks at most, and on a long ferry level it
/// spends its whole budget finding nothing.)
fn wait_longer(
    map: &Map,
    seed: u32,
    budget: u64,
    stop: &dyn Fn() -> bool,
    spent: &mut u64,
    best: &mut Best,
) {
    let mut tried = BTreeSet::new();
    rounds(best, |best, i, key| {
        // Input i ends segment i: the wait it starts (a later jump then comes later, and
        // a ferry is nearer), else the last wait at most WAIT_REACH segments before it.
        let after = (i + 1 < best.segs.len() && is_wait(best.segs[i + 1].0)).then_some(i + 1);
        let before = (i.saturating_sub(WAIT_REACH - 1)..=i)
            .rev()
            .find(|&k| is_wait(best.segs[k].0));
        // Waiting after the input, it may also come earlier (a stop on a ferry sooner,
        // further from its edge).
        let tries = after
            .into_iter()
            .flat_map(|k| EARLIER.iter().map(move |&e| (k, e)))
            .chain(before.map(|k| (k, 0)));
        for (k, e) in tries {
            if best.segs[i].1 <= e || !tried.insert((best.segs.clone(), k, e)) {
                continue;
            }
            let total: u32 = best.segs.iter().map(|s| s.1).sum();
            for d in WAITS {
                if budget <= *spent || stop() {
                    return None;
                }
                if u64::from(total + d) > REPLAY_MAX_TOTAL_TICKS {
                    continue;
                }
                let mut cand = best.segs.clone();
                cand[k].1 += d;
                if e > 0 {
                    cand[i].1 -= e;
                    cand[i + 1].1 += e;
                }
                // The cheap check first: most long waits lose.
                let mut padded = cand.clone();
                if let Some(last) = padded.last_mut() {
                    last.1 += EXTRA_TICKS;
                }
                if run(map, seed, &padded, spent).is_none() {
                    continue;
                }
                best.out.tried += 1;
                let Some(c) = evaluate(map, seed, &cand, budget, spent) else {
                    break;
                };
                if c.beats(key) {
                    best.keep(c);
                    return Some(true);
                }
                // The longest wait that wins was no better: a shorter one is not tried.
                break;
            }
        }
        Some(false)
    });
}

/// The re-centring step: one pass through the replay's inputs in order, each moved to the
/// middle of the ticks on which it may come, the inputs after it on their ticks (see
/// `recentred`), then kept if the report is better; again while it is.
fn recentre_all(
    map: &Map,
    seed: u32,
    budget: u64,
    stop: &dyn Fn() -> bool,
    spent: &mut u64,
    best: &mut Best,
) {
    for _ in 0..MAX_PASSES {
        if !best.open() || stop() {
            return;
        }
        let Some(key) = best.key() else {
            return;
        };
        let Some(cand) = recentred(map, seed, &best.segs, budget, spent) else {
            return;
        };
        if cand == best.segs {
            return;
        }
        best.out.tried += 1;
        let Some(c) = evaluate(map, seed, &cand, budget, spent) else {
            return;
        };
        if !c.beats(&key) {
            return;
        }
        best.keep(c);
    }
}

/// Passes of the re-centring step at most.
const MAX_PASSES: usize = 3;

/// How long past an input the re-centring step follows the bird at most (until the next
/// input otherwise).
const RECENTRE_HORIZON: u32 = 240;

/// How far the re-centring step moves an input each way, at most.
const RECENTRE: i32 = 40;

/// The fastest route presses each input on the first tick that works, at the edge of its
/// room; a person presses in the middle. Input by input in order, every move of up to
/// [`RECENTRE`] ticks each way is tried (the inputs after it on their ticks, the bird must
/// live [`LOCAL_TICKS`] past it), and the input goes to the middle of the longest run of
/// moves that live around its tick (the first of equals). The inputs after it are then
/// judged from where that leaves the bird: a later input re-centred on the bird's actual
/// arrival, not on the fastest route's. `None` when a stretch dies or the budget ends.
fn recentred(
    map: &Map,
    seed: u32,
    segs: &[(u8, u32)],
    budget: u64,
    spent: &mut u64,
) -> Option<Vec<(u8, u32)>> {
    let mut segs = segs.to_vec();
    // The run at the start of segment i.
    let mut sim = Sim::new(map, seed);
    for i in 0..segs.len().saturating_sub(1) {
        let (a, len) = segs[i];
        let next = segs[i + 1].1;
        // Every move runs on from the segment's ticks it keeps in common with the others (a
        // long wait is run once, not once a move).
        let common = len.saturating_sub(RECENTRE as u32 + 1);
        let mut from = sim.clone();
        for _ in 0..common {
            from.step(a);
            *spent += 1;
        }
        let mut lives = Vec::with_capacity(2 * RECENTRE as usize + 1);
        for d in -RECENTRE..=RECENTRE {
            if budget <= *spent {
                return None;
            }
            let (l, n) = (len as i64 + d as i64, next as i64 - d as i64);
            if l <= common as i64 || n < 1 {
                lives.push(false);
                continue;
            }
            // Until the next input (it is re-centred on what this one leaves), at most
            // RECENTRE_HORIZON ticks past this one.
            let l = l as u32 - common;
            let head = [(a, l), (segs[i + 1].0, n as u32)];
            let ticks = l + (n as u32).min(RECENTRE_HORIZON);
            lives.push(
                from.status() == Status::Running
                    && lives_through(&from, head.into_iter(), ticks, spent),
            );
        }
        // The run of living moves around the input's own tick, else (an input before it
        // moved, and the bird arrives elsewhere) the longest, the nearest of equals.
        let at = RECENTRE as usize;
        let runs = living_runs(&lives);
        let chosen = runs.iter().find(|r| r.0 <= at && at <= r.1).or_else(|| {
            runs.iter()
                .max_by_key(|r| (r.1 - r.0, Reverse(r.0.abs_diff(at).min(r.1.abs_diff(at)))))
        });
        if let Some(&(lo, hi)) = chosen {
            let d = (lo + hi) as i32 / 2 - RECENTRE;
            segs[i].1 = (len as i64 + d as i64) as u32;
            segs[i + 1].1 = (next as i64 - d as i64) as u32;
        }
        for _ in 0..segs[i].1 {
            sim.step(a);
            *spent += 1;
            if sim.status() != Status::Running {
                // Won early or died: nothing after this input is played.
                return (sim.status() == Status::Won).then_some(segs);
            }
        }
    }
    Some(segs)
}

/// The stopping step, last, with a budget of its own (at least [`STOP_BUDGET_TICKS`] of
/// `budget`, or two sevenths of a smaller one): a person who meets a narrow jump at full speed
/// stops before it and takes a run-up of their own. For the narrowest inputs first, the
/// direction held before the input is let go [`STOP_BEFORE`] ticks earlier, the bird stands
/// [`STOP_TICKS`] ticks (the jump held or not as before, no pebble), runs again and makes the
/// input after a run-up of `r` ticks. Every `r` up to [`RUNUP_MAX`] is tried (the bird must
/// live [`LOCAL_TICKS`] past the input), and the middle of the longest run of `r` that live
/// is kept: the input then meets the obstacle at a comfortable phase. The rest of the replay
/// follows as it was, later by as much; where it then dies (the stop moved the bird by a
/// fraction of a tick's way, and a later jump meets its obstacle at another phase), the
/// input before the death gets a stop of its own, up to [`MAX_REPAIRS`] times. The candidate
/// is kept if it wins and its report is better, as in the hill-climb.
fn stop_first(
    map: &Map,
    seed: u32,
    budget: u64,
    stop: &dyn Fn() -> bool,
    spent: &mut u64,
    best: &mut Best,
) {
    let mut tried = BTreeSet::new();
    rounds(best, |best, i, key| {
        for (q, slow) in STOP_BEFORE
            .iter()
            .flat_map(|&q| SLOW_FIRST.iter().map(move |&s| (q, s)))
        {
            if budget <= *spent || stop() {
                return None;
            }
            let how = Stop { q, slow };
            if !tried.insert((best.segs.clone(), i, q, slow)) {
                continue;
            }
            let Some(cand) = stopped_and_repaired(map, seed, &best.segs, i, how, budget, spent)
            else {
                continue;
            };
            if kept(map, seed, &cand, key, budget, spent, best) {
                return Some(true);
            }
        }
        Some(false)
    });
}

/// `segs` with a stop before input `i` (see `stop_first`), `q` ticks before it, and the later
/// inputs the stop made die re-timed the same way: `None` unless it wins (within
/// [`EXTRA_TICKS`] more than the replay before the stop) within `budget`.
fn stopped_and_repaired(
    map: &Map,
    seed: u32,
    segs: &[(u8, u32)],
    i: usize,
    how: Stop,
    budget: u64,
    spent: &mut u64,
) -> Option<Vec<(u8, u32)>> {
    let (mut cand, mut press) = stopped(map, seed, segs, i, how, budget, spent)?;
    for _ in 0..MAX_REPAIRS {
        if budget <= *spent {
            return None;
        }
        let mut padded = cand.clone();
        padded.last_mut()?.1 += EXTRA_TICKS;
        let (end, won) = run_to_end(map, seed, &padded, spent);
        if won {
            return Some(cand);
        }
        // The last input before the death, after the stop's own.
        let mut t = 0u32;
        let mut j = None;
        for (k, s) in cand.iter().enumerate() {
            t += s.1;
            if t >= end {
                break;
            }
            j = Some(k);
        }
        let j = j.filter(|&j| j > press)?;
        (cand, press) = stopped(map, seed, &cand, j, how, budget, spent)?;
    }
    None
}

/// `segs` with a stop before input `i` (between segments `i` and `i + 1`) and the run-up
/// chosen, and the index of the input in the result; `None` when segment `i` holds no
/// direction, is too short, or no run-up lives.
fn stopped(
    map: &Map,
    seed: u32,
    segs: &[(u8, u32)],
    i: usize,
    how: Stop,
    budget: u64,
    spent: &mut u64,
) -> Option<(Vec<(u8, u32)>, usize)> {
    let (a, len) = *segs.get(i)?;
    let q = how.q;
    if i + 1 >= segs.len() || a / 4 == 1 || len <= q {
        return None;
    }
    // Stand with the jump held as it was (a fresh press is an input of its own), no pebble;
    // walk slowly first if asked (and not already slow).
    let still = 4 + ((a % 4) & 1);
    let slow = match a / 4 {
        0 => Some(12 + a % 4),
        2 => Some(16 + a % 4),
        _ => None,
    };
    let approach: Vec<(u8, u32)> = match (slow, how.slow) {
        (_, 0) => vec![(still, STOP_TICKS)],
        (Some(s), n) => vec![(s, n), (still, STOP_TICKS)],
        (None, _) => return None,
    };
    let release: u32 = segs[..i].iter().map(|s| s.1).sum::<u32>() + len - q;
    let sim = played(map, seed, segs, release, spent)?;
    // Which run-ups live past the input (or win).
    let mut lives = Vec::with_capacity(RUNUP_MAX as usize);
    for r in 1..=RUNUP_MAX {
        if budget <= *spent {
            return None;
        }
        let head = approach.iter().copied().chain([(a, r)]);
        let tail = segs[i + 1..].iter().copied();
        let ticks = how.slow + STOP_TICKS + r + LOCAL_TICKS;
        lives.push(lives_through(&sim, head.chain(tail), ticks, spent));
    }
    // The longest stretch of run-ups that live (the first of equals), and its middle.
    let (lo, hi) = living_runs(&lives)
        .into_iter()
        .min_by_key(|&(lo, hi)| (Reverse(hi - lo), lo))?;
    let r = ((lo + hi) / 2) as u32 + 1;
    let mut out = segs[..i].to_vec();
    out.push((a, len - q));
    out.extend_from_slice(&approach);
    out.push((a, r));
    out.extend_from_slice(&segs[i + 1..]);
    // The input ends the run-up (neighbours always differ here: `still` has no direction,
    // `a` and its slow speed have one).
    let press = i + 1 + approach.len();
    Some((merged(&out), press))
}

/// The walk-off step, last, on what the other steps left of the budget: a jump from the ground
/// into a drop traded for a walk off the edge and the egg boost later in the fall. The fastest
/// route jumps at the edge and falls in on the one arc that lands right; a person walks in and
/// taps jump late, and where the boost may come is a stretch of ticks
/// (`levels/probes/guest-nest-on-spikes-deep`: `tight`, window 3, before; `relaxed` after).
/// For the narrowest inputs first that press jump on the ground with a direction held, the
/// jump is left out: the bird walks on slowly in that direction until it leaves the ground,
/// falls with no direction (or the slow one) and presses jump (the boost) `d` ticks later,
/// held until the jump it replaces was let go; the rest of the replay follows as it was. Every
/// `d` up to [`BOOST_LATEST`] is run to the end, the middle of the longest run of `d` that win
/// is reported and kept if its report is better, as in the hill-climb.
fn walk_off(
    map: &Map,
    seed: u32,
    budget: u64,
    stop: &dyn Fn() -> bool,
    spent: &mut u64,
    best: &mut Best,
) {
    let mut tried = BTreeSet::new();
    rounds(best, |best, i, key| {
        for fall_dir in [false, true] {
            if budget <= *spent || stop() {
                return None;
            }
            if !tried.insert((best.segs.clone(), i, fall_dir)) {
                continue;
            }
            let Some(cand) = walked_off(map, seed, &best.segs, i, fall_dir, budget, spent) else {
                continue;
            };
            if cand != best.segs && kept(map, seed, &cand, key, budget, spent, best) {
                return Some(true);
            }
        }
        Some(false)
    });
}

/// The latest tick after leaving the ground the walk-off step presses the boost on.
const BOOST_LATEST: u32 = 120;

/// How long the walk-off step walks at most before the bird must have left the ground.
const WALK_MAX: u32 = 90;

/// `segs` with the ground jump at input `i` traded for a walk off and a boost (see `walk_off`):
/// `None` unless input `i` presses jump on the ground with a direction, the walk leaves the
/// ground, and some press wins.
fn walked_off(
    map: &Map,
    seed: u32,
    segs: &[(u8, u32)],
    i: usize,
    fall_dir: bool,
    budget: u64,
    spent: &mut u64,
) -> Option<Vec<(u8, u32)>> {
    let (before, jump) = (segs.get(i)?.0, segs.get(i + 1)?.0);
    // A fresh press of jump with a direction (left, right or their slow speeds).
    if holds_jump(before) || !holds_jump(jump) || jump / 4 == 1 {
        return None;
    }
    // The stretch the jump is held through, and the tick it is let go.
    let held = (i + 1..segs.len())
        .take_while(|&k| holds_jump(segs[k].0))
        .last()?;
    let press_at: u32 = segs[..=i].iter().map(|s| s.1).sum();
    let release_at: u32 = segs[..=held].iter().map(|s| s.1).sum();
    let mut sim = played(map, seed, segs, press_at, spent)?;
    if !sim.player().on_ground {
        return None;
    }
    // Walk on slowly (no buttons) until the bird leaves the ground.
    let slow = match jump / 4 {
        0 | 3 => 12,
        _ => 16,
    };
    let mut walk = 0;
    while sim.player().on_ground {
        if walk == WALK_MAX || budget <= *spent {
            return None;
        }
        sim.step(slow);
        *spent += 1;
        walk += 1;
        if sim.status() != Status::Running {
            return None;
        }
    }
    let fall = if fall_dir { slow } else { 4 };
    let press = fall + 1;
    let tail = &segs[held + 1..];
    // The segments from the end of the walk on, the boost pressed `d` ticks later.
    let after_walk = |d: u32| -> Vec<(u8, u32)> {
        let hold = release_at.saturating_sub(press_at + walk + d).max(1);
        let mut out = vec![(fall, d), (press, hold)];
        out.extend_from_slice(tail);
        out
    };
    let mut wins = Vec::with_capacity(BOOST_LATEST as usize);
    for d in 1..=BOOST_LATEST {
        if budget <= *spent {
            return None;
        }
        let mut rest = after_walk(d);
        rest.last_mut()?.1 += EXTRA_TICKS;
        wins.push(run_from(sim.clone(), &rest, spent).is_some());
    }
    let (lo, hi) = living_runs(&wins)
        .into_iter()
        .min_by_key(|&(lo, hi)| (Reverse(hi - lo), lo))?;
    let mut out = segs[..=i].to_vec();
    out.push((slow, walk));
    out.extend(after_walk(((lo + hi) / 2) as u32 + 1));
    Some(merged(&out))
}

/// Where a stop comes (`q` ticks before the input) and how long the bird first walks slowly
/// (0: it stops from the speed it had).
#[derive(Clone, Copy)]
struct Stop {
    q: u32,
    slow: u32,
}

/// Runs a step's candidate and keeps it if it wins and its report beats `key`: whether it was
/// kept.
fn kept(
    map: &Map,
    seed: u32,
    cand: &[(u8, u32)],
    key: &Key,
    budget: u64,
    spent: &mut u64,
    best: &mut Best,
) -> bool {
    best.out.tried += 1;
    let Some(c) = evaluate(map, seed, cand, budget, spent) else {
        return false;
    };
    let better = c.beats(key);
    if better {
        best.keep(c);
    }
    better
}

/// The run of the segments' first `ticks` ticks, `None` if it ends (won or dead) in them;
/// charges what it simulated.
fn played(map: &Map, seed: u32, segs: &[(u8, u32)], ticks: u32, spent: &mut u64) -> Option<Sim> {
    let mut sim = Sim::new(map, seed);
    let mut t = 0u32;
    for &(act, n) in segs {
        for _ in 0..n {
            if t == ticks {
                return Some(sim);
            }
            sim.step(act);
            *spent += 1;
            t += 1;
            if sim.status() != Status::Running {
                return None;
            }
        }
    }
    Some(sim)
}

/// Whether the bird lives through `ticks` ticks of the segments (or wins in them), run on
/// from `sim`; charges what it simulated.
fn lives_through(
    sim: &Sim,
    segs: impl Iterator<Item = (u8, u32)>,
    ticks: u32,
    spent: &mut u64,
) -> bool {
    let mut s = sim.clone();
    let mut left = ticks;
    for (act, n) in segs {
        for _ in 0..n {
            if left == 0 {
                return true;
            }
            s.step(act);
            *spent += 1;
            left -= 1;
            match s.status() {
                Status::Running => {}
                Status::Won => return true,
                Status::Dead => return false,
            }
        }
    }
    true
}

/// The stretches `(first, last)` of `true` in `lives`, in order.
fn living_runs(lives: &[bool]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (k, &ok) in lives.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if ok && r.1 + 1 == k => r.1 = k,
            _ if ok => runs.push((k, k)),
            _ => {}
        }
    }
    runs
}

/// The tick the segments end on (the death, the win or their end) and whether they win;
/// charges what it simulated.
fn run_to_end(map: &Map, seed: u32, segs: &[(u8, u32)], spent: &mut u64) -> (u32, bool) {
    let mut sim = Sim::new(map, seed);
    for &(a, t) in segs {
        for _ in 0..t {
            sim.step(a);
            *spent += 1;
            match sim.status() {
                Status::Won => return (sim.tick(), true),
                Status::Dead => return (sim.tick(), false),
                Status::Running => {}
            }
        }
    }
    (sim.tick(), false)
}

/// The action holds jump (buttons 1 and 3).
fn holds_jump(a: u8) -> bool {
    a % 2 == 1
}

/// No direction held and no pebble: the bird stands (or rides) and waits.
fn is_wait(a: u8) -> bool {
    a / 4 == 1 && a % 4 < 2
}

/// What the pass minimises: the verdict, then the windows from the narrowest up (wider at the
/// first that differs is better; a replay whose windows are the same but fewer is better).
/// `None` when the replay has no input.
fn key(r: &Feasibility, windows: &[u32]) -> Option<Key> {
    let narrowest = r.tightest.as_ref()?.window;
    // Every window at least the narrowest (one not measured to its ends is a lower bound).
    let mut w: Vec<Reverse<u32>> = windows.iter().map(|&w| Reverse(w.max(narrowest))).collect();
    w.sort_by(|a, b| b.cmp(a));
    Some((r.verdict, w, r.inputs))
}

/// The replay as run-length segments `(action, ticks)`, neighbours with different actions.
fn segments(replay: &Replay) -> Vec<(u8, u32)> {
    let mut segs: Vec<(u8, u32)> = Vec::new();
    for s in &replay.actions {
        push(&mut segs, s.action, u32::from(s.ticks));
    }
    segs
}

fn push(segs: &mut Vec<(u8, u32)>, action: u8, ticks: u32) {
    if ticks == 0 {
        return;
    }
    match segs.last_mut() {
        Some(last) if last.0 == action => last.1 += ticks,
        _ => segs.push((action, ticks)),
    }
}

/// The segments with equal neighbours merged and empty ones dropped.
fn merged(segs: &[(u8, u32)]) -> Vec<(u8, u32)> {
    let mut out = Vec::with_capacity(segs.len());
    for &(a, t) in segs {
        push(&mut out, a, t);
    }
    out
}

/// The segments up to tick `win` (the ticks after it are never played).
fn cut(segs: &[(u8, u32)], win: u32) -> Vec<(u8, u32)> {
    let mut out = Vec::new();
    let mut left = win;
    for &(a, t) in segs {
        if left == 0 {
            break;
        }
        let t = t.min(left);
        push(&mut out, a, t);
        left -= t;
    }
    out
}

/// The segments as a replay within the contract's step limit.
fn encode(seed: u32, segs: &[(u8, u32)]) -> Replay {
    let mut actions = Vec::new();
    for &(action, mut ticks) in segs {
        while ticks > 0 {
            let t = ticks.min(REPLAY_MAX_STEP_TICKS as u32);
            actions.push(Step {
                action,
                ticks: t as u16,
            });
            ticks -= t;
        }
    }
    Replay { seed, actions }
}

/// The tick of the win of the segments, or `None`; charges what it simulated.
fn run(map: &Map, seed: u32, segs: &[(u8, u32)], spent: &mut u64) -> Option<u32> {
    run_from(Sim::new(map, seed), segs, spent)
}

/// [`run`] from a run already under way.
fn run_from(mut sim: Sim, segs: &[(u8, u32)], spent: &mut u64) -> Option<u32> {
    for &(a, t) in segs {
        for _ in 0..t {
            sim.step(a);
            *spent += 1;
            match sim.status() {
                Status::Won => return Some(sim.tick()),
                Status::Dead => return None,
                Status::Running => {}
            }
        }
    }
    None
}

/// The calmer actions a person might hold instead of `a`: the other speed, no direction, the
/// jump let go (or held), no pebble.
fn calmer(a: u8) -> Vec<u8> {
    let (dir, buttons) = (a / 4, a % 4);
    let mut out = Vec::new();
    // left 0 <-> slow left 3, right 2 <-> slow right 4.
    let other_speed = match dir {
        0 => Some(3),
        3 => Some(0),
        2 => Some(4),
        4 => Some(2),
        _ => None,
    };
    if let Some(d) = other_speed {
        out.push(d * 4 + buttons);
    }
    if dir != 1 {
        out.push(4 + buttons);
    }
    out.push(dir * 4 + (buttons ^ 1));
    if buttons >= 2 {
        out.push(dir * 4 + buttons - 2);
    }
    out
}

/// The changes tried around input `i` (between segments `i` and `i + 1`), in a fixed order.
fn candidates(segs: &[(u8, u32)], i: usize) -> Vec<Vec<(u8, u32)>> {
    let mut out = Vec::new();
    if i + 1 >= segs.len() {
        return out;
    }
    // Leave the input out: hold the action before it on, or switch at the input before.
    for (at, from) in [(i + 1, i), (i, i + 1)] {
        let mut c = segs.to_vec();
        c[at].0 = segs[from].0;
        out.push(merged(&c));
    }
    // Move input `j` (between segments j and j + 1) by `d` ticks.
    let moved = |j: usize, d: i32| -> Option<Vec<(u8, u32)>> {
        let (a, b) = (segs[j].1 as i64 + d as i64, segs[j + 1].1 as i64 - d as i64);
        (a >= 1 && b >= 1).then(|| {
            let mut c = segs.to_vec();
            c[j].1 = a as u32;
            c[j + 1].1 = b as u32;
            c
        })
    };
    // Move the stretch after input `i` (inputs i and i + 1 together) by `d` ticks.
    if i + 2 < segs.len() {
        out.extend(SHIFTS.iter().filter_map(|&d| {
            let (a, b) = (segs[i].1 as i64 + d as i64, segs[i + 2].1 as i64 - d as i64);
            (a >= 1 && b >= 1).then(|| {
                let mut c = segs.to_vec();
                c[i].1 = a as u32;
                c[i + 2].1 = b as u32;
                c
            })
        }));
    }
    for j in [i.checked_sub(1), Some(i + 1)].into_iter().flatten() {
        if j + 1 < segs.len() {
            out.extend(SHIFTS.iter().filter_map(|&d| moved(j, d)));
        }
    }
    out.extend(
        SHIFTS
            .iter()
            .filter(|d| d.abs() >= 2)
            .filter_map(|&d| moved(i, d)),
    );
    for at in [i + 1, i] {
        for a in calmer(segs[at].0) {
            let mut c = segs.to_vec();
            c[at].0 = a;
            out.push(merged(&c));
        }
    }
    // A calmer action after the input, pressed at another time (a run through a gap that a
    // slow walk had to hit on one tick comes at another tick).
    for a in calmer(segs[i + 1].0) {
        for &d in &SHIFTS {
            if let Some(mut c) = moved(i, d) {
                c[i + 1].0 = a;
                out.push(merged(&c));
            }
        }
    }
    for at in [i + 1, i] {
        out.extend(corrections(segs, at));
    }
    out
}

/// A correction in the middle of the long stretch `at`: a calmer action held there for a
/// while, the stretch's own action before and after it. The fastest route holds one direction
/// through a long fall and touches a small target at its edge, where every input is exact; a
/// person lets go for a moment and lands in its middle (`levels/probes/guest-sky-dive-24`:
/// `frame_perfect` without it, `relaxed` with 24 ticks of slow right in a fall of 160).
fn corrections(segs: &[(u8, u32)], at: usize) -> Vec<Vec<(u8, u32)>> {
    let (action, len) = segs[at];
    let mut out = Vec::new();
    for &k in &CORRECTIONS {
        if len < k + 2 * CORRECTION_MARGIN {
            continue;
        }
        let before = (len - k) / 2;
        for calm in calmer(action) {
            let mut c = segs[..at].to_vec();
            c.extend([(action, before), (calm, k), (action, len - k - before)]);
            c.extend_from_slice(&segs[at + 1..]);
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calmer_actions_keep_to_the_twenty() {
        for a in 0..20u8 {
            let c = calmer(a);
            assert!(c.iter().all(|&x| x < 20 && x != a), "{a}: {c:?}");
        }
        assert_eq!(calmer(9), [17, 5, 8], "right+jump");
        assert_eq!(calmer(4), [5], "none");
    }

    #[test]
    fn living_runs_are_the_stretches_of_true() {
        let (t, f) = (true, false);
        assert_eq!(
            living_runs(&[f, t, t, f, t, f, f, t]),
            [(1, 2), (4, 4), (7, 7)]
        );
        assert_eq!(living_runs(&[t, t]), [(0, 1)]);
        assert!(living_runs(&[f, f]).is_empty());
    }

    #[test]
    fn segments_cut_and_encode_round_trip() {
        let segs = vec![(4, 700), (8, 3), (9, 10)];
        let r = encode(1, &segs);
        assert_eq!(r.actions.len(), 4);
        assert_eq!(segments(&r), segs);
        assert_eq!(cut(&segs, 702), [(4, 700), (8, 2)]);
        assert_eq!(merged(&[(4, 1), (4, 2), (8, 0), (5, 1)]), [(4, 3), (5, 1)]);
    }
}
