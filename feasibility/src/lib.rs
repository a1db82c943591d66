//! Whether a person can play a winning replay: its human-feasibility report.
//!
//! A winning replay proves a level winnable, not fair: a replay that needs a jump on one exact
//! tick passes the referee exactly like a relaxed one. This crate asks the referee how much
//! slack each input of a winning replay has. An *input* is a tick on which the replay's action
//! changes (a step boundary). Each input is moved 1, 2, ... up to [`MAX_SHIFT_TICKS`] ticks
//! earlier and later and the replay run again; an input's *window* is the number of ticks on
//! which it may come and the replay still wins (`early + 1 + late`). Inputs that a moved input
//! would pass move with it, one tick apart (pressing late delays the presses that follow
//! right after it), and the last action is held [`run::PAD_TICKS`] ticks past the win (a
//! person keeps holding it), so a probe changes only the timing of that one input. A move
//! wins if the replay wins with the later inputs on their ticks, or else with all of them
//! moved by as much: a person times a press to the world (a platform, a rock) or to what
//! came before (a jump on landing), and a press that came late is followed by the rest as
//! late. With the later inputs on their ticks only, a replay that jumps on the first tick
//! after every landing had every press frame-perfect (moved late, the next press came in the
//! air), on a level a person climbs by pressing whenever the bird has landed.
//!
//! The verdict is the tightest window's: 1 tick `frame_perfect`, 2-4 `tight`, 5-10 `fair`,
//! more `relaxed`. The report also counts the inputs that must be exact to the tick, the
//! longest wait, and the egg boosts, stomps and pebbles the run used.
//!
//! Cost is bounded by a work budget in referee ticks ([`WORK_BUDGET_TICKS`]), never by the
//! clock, so the same map and replay give the same report on every run and machine: every
//! input is first moved one tick each way (that finds every exact input), then the windows
//! grow a tick per round, only for inputs that could still be the tightest. A probe starts
//! from a snapshot of the replay's own run shortly before the first tick it changes, and ends
//! as soon as its state equals the replay's own at the same tick (same state and the same
//! inputs from there on: it wins too). A report cut short by the budget says so
//! (`complete: false`) and judges the inputs it checked.
//!
//! ```
//! let map = horst_engine::parse_map("gcv-map 1\nname: flach\nsize: 12 3\ngrid:\n............\n............\nGGGGGGGGGGGG\nentities:\nstart 0 1\nnest 11 1\n").unwrap();
//! let replay = horst_engine::parse_replay_json(r#"{"seed": 1, "actions": [{"action": 4, "ticks": 20}, {"action": 8, "ticks": 120}]}"#).unwrap();
//! let report = horst_feasibility::assess(&map, &replay).expect("the replay wins");
//! assert_eq!(report.verdict, horst_feasibility::Verdict::Relaxed);
//! assert_eq!(report.longest_wait_ticks, 20);
//! ```
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod relax;
mod run;

use horst_engine::{Map, Replay};
use run::{Baseline, Probe};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use relax::{
    relax, relax_until, Relaxation, RECENTRE_BUDGET_TICKS, RELAX_BUDGET_TICKS, STOP_BUDGET_TICKS,
    WAIT_BUDGET_TICKS,
};
pub use run::PAD_TICKS;

/// How far an input is moved each way: windows are measured up to `2 * 8 + 1` ticks.
pub const MAX_SHIFT_TICKS: u32 = 8;

/// The referee ticks one report may simulate (probes only; the replay's own run is not
/// counted). At the engine's 10-13 million ticks per second on one core that is about 0.1 s;
/// docs/benchmarks.md ("Feasibility report") has what it costs on the shipped levels and the
/// planner's corpus.
pub const WORK_BUDGET_TICKS: u64 = 1_500_000;

/// How many exact inputs `exactInputTicks` lists.
pub const MAX_LISTED: usize = 16;

/// The longest a report's `hint` can be, in bytes: ASCII that JSON writes as it is (no
/// escapes). A bound for what a stored report may take (the gateway's storage preflight);
/// a test checks it against the longest hint each verdict can have.
pub const HINT_MAX_BYTES: usize = 560;

/// How hard the replay's timing is for a person, from its tightest input window:
/// `frame_perfect` 1 tick (some input must come on one exact tick, 1/60 s), `tight` 2-4 ticks
/// (at most 1/15 s), `fair` 5-10 ticks, `relaxed` more (about 0.18 s or more).
// No doc comments on the variants: the JSON Schema then lists them as one `enum`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Relaxed,
    Fair,
    Tight,
    FramePerfect,
}

impl Verdict {
    /// The verdict of a tightest window of `ticks` ticks.
    pub fn of_window(ticks: u32) -> Verdict {
        match ticks {
            0..=1 => Verdict::FramePerfect,
            2..=4 => Verdict::Tight,
            5..=10 => Verdict::Fair,
            _ => Verdict::Relaxed,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Relaxed => "relaxed",
            Verdict::Fair => "fair",
            Verdict::Tight => "tight",
            Verdict::FramePerfect => "frame_perfect",
        }
    }
}

/// One input of the replay and how much its timing may vary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputWindow {
    /// Index in the replay's `actions` of the step this input starts.
    pub step: u32,
    /// The first tick (counted from 1, like the referee's `ticks`) on which the new action is
    /// held.
    pub tick: u32,
    /// The action held before it and the action it switches to (0-19).
    pub from_action: u8,
    pub action: u8,
    /// Ticks the input may come earlier, and later, with the replay still winning (each at
    /// most `maxShiftTicks`).
    pub early: u32,
    pub late: u32,
    /// `early + 1 + late`: the number of ticks on which the input may come.
    pub window: u32,
}

/// The human-feasibility report of a winning replay. Stored with a revision (in its
/// acceptance report) and read back by the gateway, hence `Deserialize`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Feasibility {
    /// `relaxed`, `fair`, `tight` or `frame_perfect`: from the tightest window.
    pub verdict: Verdict,
    /// One line on what the verdict means for a person and what to change.
    pub hint: String,
    /// The input with the smallest window (the earliest of equals); null when the replay
    /// wins without changing its action.
    pub tightest: Option<InputWindow>,
    /// Inputs that must come on exactly their tick (window 1).
    pub exact_inputs: u32,
    /// The ticks of the first 16 of them.
    pub exact_input_ticks: Vec<u32>,
    /// Inputs (action changes) before the win.
    pub inputs: u32,
    /// Inputs moved at least one tick each way within the work budget.
    pub inputs_checked: u32,
    /// The longest stretch of ticks holding no direction and pressing nothing new.
    pub longest_wait_ticks: u32,
    pub egg_boosts: u32,
    pub stomps: u32,
    /// Pebbles fired.
    pub shots: u32,
    /// How far each input was moved each way at most.
    pub max_shift_ticks: u32,
    /// False when the work budget ended the analysis: then only `inputsChecked` inputs were
    /// judged.
    pub complete: bool,
    /// Referee ticks the analysis simulated (at most the work budget).
    pub work_ticks: u64,
}

/// What one input's probes found so far.
#[derive(Clone, Copy, Default)]
struct Slack {
    early: u32,
    late: u32,
    early_done: bool,
    late_done: bool,
}

impl Slack {
    fn window(self) -> u32 {
        self.early + 1 + self.late
    }
    fn done(self) -> bool {
        self.early_done && self.late_done
    }
}

/// The report of a replay on a map with the default work budget; `None` unless it wins.
pub fn assess(map: &Map, replay: &Replay) -> Option<Feasibility> {
    assess_with_budget(map, replay, WORK_BUDGET_TICKS)
}

/// [`assess`] with another work budget (in referee ticks).
pub fn assess_with_budget(map: &Map, replay: &Replay, budget: u64) -> Option<Feasibility> {
    analyse(map, replay, budget).map(|(report, _)| report)
}

/// The window of each input checked (in input order) with the default budget, and the
/// report: what the relaxation pass compares (a window not measured to both ends is a
/// lower bound). `None` unless the replay wins.
pub fn assess_windows(map: &Map, replay: &Replay) -> Option<(Feasibility, Vec<u32>)> {
    analyse(map, replay, WORK_BUDGET_TICKS)
}

/// [`assess_with_budget`], with the window measured for each input checked (in input order;
/// a window not measured to both ends is a lower bound).
fn analyse(map: &Map, replay: &Replay, budget: u64) -> Option<(Feasibility, Vec<u32>)> {
    let base = Baseline::run(map, replay)?;
    let n = base.bounds.len();
    let mut slack = vec![Slack::default(); n];
    let mut spent = 0u64;
    let mut checked = 0usize;
    let mut complete = true;
    // The tightest window of an input with both sides closed.
    let mut best = u32::MAX;
    'rounds: for r in 1..=MAX_SHIFT_TICKS {
        for (i, s) in slack.iter_mut().enumerate() {
            if s.done() {
                continue;
            }
            // After the first round, an input whose window already reaches the best closed
            // one cannot be the tightest: its window only grows.
            if r > 1 && s.window() >= best {
                continue;
            }
            for early in [true, false] {
                if (early && s.early_done) || (!early && s.late_done) {
                    continue;
                }
                let shift = if early { -(r as i32) } else { r as i32 };
                // The later inputs on their ticks first; if that loses, moved along with it
                // (only different when there are later inputs).
                let mut won = false;
                for follow in [false, true] {
                    if won || (follow && i + 1 == n) {
                        continue;
                    }
                    won = match base.probe(i, shift, follow, budget - spent, &mut spent) {
                        Probe::OverBudget => {
                            complete = false;
                            break 'rounds;
                        }
                        Probe::Won => true,
                        Probe::Lost | Probe::Impossible => false,
                    };
                }
                match (early, won) {
                    (true, true) => s.early = r,
                    (true, false) => s.early_done = true,
                    (false, true) => s.late = r,
                    (false, false) => s.late_done = true,
                }
            }
            if r == 1 {
                checked = i + 1;
            }
            if r == MAX_SHIFT_TICKS {
                s.early_done = true;
                s.late_done = true;
            }
            if s.done() {
                best = best.min(s.window());
            }
        }
    }
    let judged = &slack[..checked];
    let window = |i: usize| InputWindow {
        step: base.steps[i],
        tick: base.bounds[i] + 1,
        from_action: base.segs[i],
        action: base.segs[i + 1],
        early: judged[i].early,
        late: judged[i].late,
        window: judged[i].window(),
    };
    // The smallest window among those known exactly, else among what was measured (then
    // only a lower bound: the hint says so).
    let known = (0..checked)
        .filter(|&i| judged[i].done())
        .min_by_key(|&i| (judged[i].window(), i));
    let partial = known.is_none();
    let tightest = known
        .or_else(|| (0..checked).min_by_key(|&i| (judged[i].window(), i)))
        .map(window);
    let exact: Vec<u32> = (0..checked)
        .filter(|&i| judged[i].done() && judged[i].window() == 1)
        .map(|i| base.bounds[i] + 1)
        .collect();
    let verdict = tightest
        .as_ref()
        .map_or(Verdict::Relaxed, |w| Verdict::of_window(w.window));
    let mut report = Feasibility {
        verdict,
        hint: String::new(),
        tightest,
        exact_inputs: exact.len() as u32,
        exact_input_ticks: exact.into_iter().take(MAX_LISTED).collect(),
        inputs: n as u32,
        inputs_checked: checked as u32,
        longest_wait_ticks: base.longest_wait,
        egg_boosts: base.eggs,
        stomps: base.stomps,
        shots: base.shots,
        max_shift_ticks: MAX_SHIFT_TICKS,
        complete,
        work_ticks: spent,
    };
    report.hint = hint(&report, partial);
    let windows = judged.iter().map(|s| s.window()).collect();
    Some((report, windows))
}

/// An action as people read it: `right+jump`, `none`, `slow left+shoot`.
pub fn action_name(action: u8) -> String {
    const MOVES: [&str; 5] = ["left", "none", "right", "slow left", "slow right"];
    let mut s = MOVES[(action.min(19) / 4) as usize].to_string();
    if action % 4 == 1 || action % 4 == 3 {
        s.push_str("+jump");
    }
    if action % 4 >= 2 {
        s.push_str("+shoot");
    }
    s
}

fn ms(ticks: u32) -> u32 {
    ticks * 1000 / horst_engine::physics::TICKS_PER_SECOND
}

/// The report's hint; `partial`: its tightest window was not measured to its ends before
/// the work budget ran out, so it is a lower bound and the level may be easier than said.
fn hint(r: &Feasibility, partial: bool) -> String {
    let Some(w) = &r.tightest else {
        return "Relaxed: the replay wins without changing its input, so no timing is needed."
            .into();
    };
    let what = format!(
        "{} -> {} on tick {}",
        action_name(w.from_action),
        action_name(w.action),
        w.tick
    );
    let mut line = match r.verdict {
        Verdict::FramePerfect => format!(
            "Frame-perfect: {} input(s) of this replay must come on one exact tick (the first: {what}); people will rarely manage that, so give more room there (a wider landing, a slower or later hazard) or submit an easier route.",
            r.exact_inputs
        ),
        Verdict::Tight => format!(
            "Tight: the tightest input ({what}) may come only {} tick(s) early or {} late (a {}-tick window, {} ms); hard for people, possible with practice.",
            w.early, w.late, w.window, ms(w.window)
        ),
        Verdict::Fair => format!(
            "Fair: the tightest input ({what}) has a {}-tick window ({} ms); a practised player can make it.",
            w.window,
            ms(w.window)
        ),
        Verdict::Relaxed => format!(
            "Relaxed: every input has a window of {} ticks or more (the tightest: {what}); no precise timing is needed.",
            w.window
        ),
    };
    if partial {
        line.push_str(&format!(
            " That window is only a lower bound: the work budget ran out before any input's window was measured to its ends (at most {} ticks each way), so the level may be easier than this.",
            r.max_shift_ticks
        ));
    }
    if !r.complete {
        line.push_str(&format!(
            " Only {} of {} inputs were checked within the work budget.",
            r.inputs_checked, r.inputs
        ));
    }
    line
}

/// A note that comes with a result: `frame_perfect` for a playtest whose replay needs an
/// input on one exact tick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Warning {
    pub code: &'static str,
    pub message: String,
}

/// The warnings a report raises: one for a frame-perfect replay.
pub fn warnings(report: Option<&Feasibility>) -> Vec<Warning> {
    match report {
        Some(r) if r.verdict == Verdict::FramePerfect => vec![Warning {
            code: "frame_perfect",
            message: format!(
                "the winning replay needs {} input(s) on one exact tick (see feasibility); a person will rarely win this level that way",
                r.exact_inputs
            ),
        }],
        _ => Vec::new(),
    }
}

/// A tool result with its feasibility report (when the replay won) and the warnings it
/// raises, as one JSON object: the result's own fields, then `feasibility` and `warnings`.
#[derive(Clone, Debug, Serialize)]
pub struct Assessed<T> {
    #[serde(flatten)]
    pub result: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feasibility: Option<Feasibility>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hint, with the longest numbers its fields can hold (an input's early and late
    /// shifts are at most [`MAX_SHIFT_TICKS`] by the analysis, so its window and the window's
    /// milliseconds are too), fits [`HINT_MAX_BYTES`] and needs no escaping in JSON.
    #[test]
    fn no_hint_is_longer_than_its_bound() {
        let window = InputWindow {
            step: u32::MAX,
            tick: u32::MAX,
            from_action: 19,
            action: 19,
            early: MAX_SHIFT_TICKS,
            late: MAX_SHIFT_TICKS,
            window: 2 * MAX_SHIFT_TICKS + 1,
        };
        let mut longest = 0;
        for verdict in [
            Verdict::Relaxed,
            Verdict::Fair,
            Verdict::Tight,
            Verdict::FramePerfect,
        ] {
            for tightest in [None, Some(window.clone())] {
                for complete in [true, false] {
                    for partial in [true, false] {
                        let r = Feasibility {
                            verdict,
                            hint: String::new(),
                            tightest: tightest.clone(),
                            exact_inputs: u32::MAX,
                            exact_input_ticks: Vec::new(),
                            inputs: u32::MAX,
                            inputs_checked: u32::MAX,
                            longest_wait_ticks: u32::MAX,
                            egg_boosts: u32::MAX,
                            stomps: u32::MAX,
                            shots: u32::MAX,
                            max_shift_ticks: MAX_SHIFT_TICKS,
                            complete,
                            work_ticks: u64::MAX,
                        };
                        let h = hint(&r, partial);
                        // Printable ASCII without quotes or backslashes: JSON escapes none.
                        assert!(
                            h.bytes()
                                .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\'),
                            "{h}"
                        );
                        longest = longest.max(h.len());
                    }
                }
            }
        }
        // The longest action name is the one of action 19 (any other is no longer).
        assert!((0..20).all(|a| action_name(a).len() <= action_name(19).len()));
        assert!(longest <= HINT_MAX_BYTES, "{longest}");
        assert!(longest + 64 > HINT_MAX_BYTES, "a bound far above {longest}");
    }
}
