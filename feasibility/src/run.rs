//! The referee runs behind the report: the replay as given (the baseline, with snapshots) and
//! the same replay with one input moved (a probe), each started from the latest snapshot
//! before the first tick it changes.

use horst_engine::physics::{SHOOT_COOLDOWN, STOMP_BOUNCE};
use horst_engine::{Map, Replay, Sim, Status};

/// How long the last action is held past the baseline's win: a person keeps holding it, and
/// an input moved late may win a little later than the replay did.
pub const PAD_TICKS: u32 = 60;

/// The contract's limit on a replay's ticks: a probe's run ends there.
const MAX_RUN_TICKS: u32 = horst_engine::format::limits::REPLAY_MAX_TOTAL_TICKS as u32;

/// At most this many snapshots (each a `Sim` clone and its state bytes) per replay, so a
/// 36,000-tick replay on a map with thousands of crumbling tiles stays within a few MiB.
const MAX_SNAPSHOTS: u32 = 256;
/// Snapshots at least this far apart: a probe then replays at most this many unchanged ticks.
const MIN_SNAPSHOT_EVERY: u32 = 32;

/// The replay as given, run once by the referee.
pub struct Baseline {
    /// Probes run until this tick (the win plus `PAD_TICKS`, at most the replay limit).
    pub end: u32,
    /// The tick of the baseline's win.
    win: u32,
    /// The inputs: tick indices `b` (ticks before it) where the action changes, `1 <= b < win`.
    pub bounds: Vec<u32>,
    /// The action of each stretch: `segs[k]` is held from `bounds[k-1]` (0 for k = 0) until
    /// `bounds[k]` (`end` for the last).
    pub segs: Vec<u8>,
    /// For each input, the index in the replay's `actions` of the step it starts.
    pub steps: Vec<u32>,
    pub longest_wait: u32,
    pub eggs: u32,
    pub stomps: u32,
    pub shots: u32,
    every: u32,
    /// `snapshots[k]`: the run after `k * every` ticks, and its state bytes.
    snapshots: Vec<(Sim, Vec<u8>)>,
}

/// One probe's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Won,
    Lost,
    /// The input cannot move that far: the ticks before it (or after it, within the padded
    /// end) are used up by the inputs that would have to move with it.
    Impossible,
    /// The work budget cannot pay for this probe.
    OverBudget,
}

/// Is this tick a wait: no direction, no pebble and no fresh jump press (standing, riding or
/// hanging in the air on a held jump)?
fn waits(action: u8, previous: Option<u8>) -> bool {
    let jump = |a: u8| a % 4 == 1 || a % 4 == 3;
    let fresh_press = jump(action) && !previous.is_some_and(jump);
    action / 4 == 1 && action % 4 < 2 && !fresh_press
}

impl Baseline {
    /// Runs the replay; `None` unless it wins.
    pub fn run(map: &Map, replay: &Replay) -> Option<Baseline> {
        let total = replay.total_ticks() as u32;
        let every = MIN_SNAPSHOT_EVERY.max(total.div_ceil(MAX_SNAPSHOTS));
        let acts: Vec<u8> = replay
            .actions
            .iter()
            .flat_map(|s| std::iter::repeat_n(s.action, s.ticks as usize))
            .collect();
        let mut sim = Sim::new(map, replay.seed);
        let mut snapshots = Vec::new();
        let (mut stomps, mut shots) = (0u32, 0u32);
        let has_enemies = sim.enemies().next().is_some();
        for (t, &a) in acts.iter().enumerate() {
            if (t as u32).is_multiple_of(every) {
                let mut bytes = Vec::new();
                sim.state_bytes(&mut bytes);
                snapshots.push((sim.clone(), bytes));
            }
            let alive = if has_enemies {
                sim.enemies().count()
            } else {
                0
            };
            sim.step(a);
            let p = sim.player();
            if p.shoot_cooldown == SHOOT_COOLDOWN {
                shots += 1;
            }
            if has_enemies {
                let now = sim.enemies().count();
                // A stomp bounces the bird at exactly this speed; a pebble's kill does not.
                if now < alive && p.vy == -STOMP_BOUNCE {
                    stomps += (alive - now) as u32;
                }
            }
            if sim.status() != Status::Running {
                break;
            }
        }
        if sim.status() != Status::Won {
            return None;
        }
        let win = sim.tick();
        let acts = &acts[..win as usize];
        let (mut longest_wait, mut wait) = (0u32, 0u32);
        for (t, &a) in acts.iter().enumerate() {
            wait = if waits(a, t.checked_sub(1).map(|p| acts[p])) {
                wait + 1
            } else {
                0
            };
            longest_wait = longest_wait.max(wait);
        }
        let mut bounds = Vec::new();
        let mut segs = vec![acts[0]];
        for t in 1..acts.len() {
            if acts[t] != acts[t - 1] {
                bounds.push(t as u32);
                segs.push(acts[t]);
            }
        }
        // The replay step that starts at each input (an input is always a step's start).
        let mut steps = Vec::with_capacity(bounds.len());
        let (mut step, mut start) = (0usize, 0u32);
        for &b in &bounds {
            while start + replay.actions[step].ticks as u32 <= b {
                start += replay.actions[step].ticks as u32;
                step += 1;
            }
            steps.push(step as u32);
        }
        Some(Baseline {
            // No run lasts longer than a replay may (a person's game ends there too): a
            // probe that would win only after it does not win.
            end: (win + PAD_TICKS).min(MAX_RUN_TICKS),
            win,
            bounds,
            segs,
            steps,
            longest_wait,
            eggs: sim.player().eggs as u32,
            stomps,
            shots,
            every,
            snapshots,
        })
    }

    /// Runs the replay with input `i` moved `shift` ticks (negative: earlier). Inputs it would
    /// pass or touch move with it, one tick apart, so no input is lost and the order stays.
    /// With `follow`, every later input moves by `shift` too (the replay's own rhythm after it,
    /// as a person who pressed late goes on late); without, they stay on their ticks (timed to
    /// the world's clock). `budget` is the ticks this probe may simulate; `spent` grows by what
    /// it did.
    pub fn probe(&self, i: usize, shift: i32, follow: bool, budget: u64, spent: &mut u64) -> Probe {
        let Some(moved) = self.moved(i, shift, follow) else {
            return Probe::Impossible;
        };
        // Moved late with the rest, the win comes that much later.
        let end = if follow {
            (self.end + shift.max(0) as u32).min(MAX_RUN_TICKS)
        } else {
            self.end
        };
        let k = (moved.first_diff / self.every) as usize;
        let (snap, _) = &self.snapshots[k];
        let mut t = k as u32 * self.every;
        if budget < (end - t) as u64 {
            return Probe::OverBudget;
        }
        let bound = |j: usize| moved.bound(&self.bounds, j);
        // The stretch holding tick t: the number of inputs at or before it.
        let mut idx = partition(self.bounds.len(), |j| bound(j) <= t);
        let mut sim = snap.clone();
        let mut bytes = Vec::new();
        // From `same_from` on, the probe holds the baseline's actions `lag` ticks later.
        let lag = if follow { shift } else { 0 };
        while t < end {
            let base_t = t as i64 - lag as i64;
            if t >= moved.same_from && base_t >= 0 && (base_t as u32).is_multiple_of(self.every) {
                if let Some((_, expected)) =
                    self.snapshots.get((base_t as u32 / self.every) as usize)
                {
                    // Same state (but for the tick, `lag` later), same inputs from here on:
                    // the baseline's win follows, `lag` ticks later. The rules never read the
                    // tick (the state is the whole simulation), so the rest runs the same.
                    bytes.clear();
                    sim.state_bytes(&mut bytes);
                    if horst_engine::same_state_but_tick(&bytes, expected) {
                        // Unless that win would come after the replay limit.
                        let win = self.win as i64 + lag as i64;
                        return if win <= MAX_RUN_TICKS as i64 {
                            Probe::Won
                        } else {
                            Probe::Lost
                        };
                    }
                }
            }
            while idx < self.bounds.len() && bound(idx) <= t {
                idx += 1;
            }
            sim.step(self.segs[idx]);
            t += 1;
            *spent += 1;
            match sim.status() {
                Status::Won => return Probe::Won,
                Status::Dead => return Probe::Lost,
                Status::Running => {}
            }
        }
        Probe::Lost
    }

    /// The inputs a shift moves, or `None` when they do not fit between tick 1 and the end.
    /// With `follow`, the inputs after `i` move by `shift` too (`Moved::tail`).
    fn moved(&self, i: usize, shift: i32, follow: bool) -> Option<Moved> {
        let b = &self.bounds;
        let mut vals = Vec::new();
        let tail = if follow { shift } else { 0 };
        if shift > 0 {
            let mut at = b[i] + shift as u32;
            let mut j = i;
            loop {
                if at >= self.end {
                    return None;
                }
                vals.push(at);
                j += 1;
                // Following, the later inputs keep their distance: none is passed.
                if follow || j == b.len() || b[j] > at {
                    break;
                }
                at += 1;
            }
            Some(Moved {
                lo: i,
                first_diff: b[i],
                same_from: *vals.last()?,
                vals,
                tail,
            })
        } else {
            let mut at = b[i] as i64 + shift as i64;
            let mut j = i;
            loop {
                if at < 1 {
                    return None;
                }
                vals.push(at as u32);
                if j == 0 || (b[j - 1] as i64) < at {
                    break;
                }
                j -= 1;
                at -= 1;
            }
            vals.reverse();
            Some(Moved {
                lo: j,
                first_diff: vals[0],
                // Following, the rest is the baseline's `shift` ticks early from input i's new
                // tick on.
                same_from: if follow { *vals.last()? } else { b[i] },
                vals,
                tail,
            })
        }
    }
}

/// Inputs `lo..lo + vals.len()` moved to `vals`, the inputs after them moved by `tail` ticks;
/// ticks before `first_diff` hold the same actions as the baseline, and from `same_from` on
/// the baseline's actions `tail` ticks later.
struct Moved {
    lo: usize,
    vals: Vec<u32>,
    first_diff: u32,
    same_from: u32,
    tail: i32,
}

impl Moved {
    fn bound(&self, bounds: &[u32], j: usize) -> u32 {
        match j.checked_sub(self.lo) {
            Some(k) if k < self.vals.len() => self.vals[k],
            Some(_) => bounds[j].saturating_add_signed(self.tail),
            None => bounds[j],
        }
    }
}

/// The first index in `0..n` where `pred` is false (`pred` is true on a prefix).
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_is_standing_still_without_a_fresh_press() {
        assert!(waits(4, None));
        assert!(waits(4, Some(8)));
        assert!(!waits(5, Some(4)), "a fresh jump press is an input");
        assert!(waits(5, Some(5)), "holding jump is waiting");
        assert!(!waits(6, Some(6)), "shooting is not waiting");
        assert!(!waits(8, Some(8)));
    }

    #[test]
    fn partition_finds_the_first_false() {
        let v = [1, 3, 5, 7];
        assert_eq!(partition(4, |j| v[j] <= 0), 0);
        assert_eq!(partition(4, |j| v[j] <= 5), 3);
        assert_eq!(partition(4, |j| v[j] <= 9), 4);
    }
}
