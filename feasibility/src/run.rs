//! The referee runs behind the report: the replay as given (the baseline, with snapshots) and
//! the same replay with one input moved (a probe), each started from the latest snapshot
//! before the first tick it changes.

use horst_engine::physics::{SHOOT_COOLDOWN, STOMP_BOUNCE};
use horst_engine::{Map, Player, Replay, Sim, Status};

/// How long the last action is held past the baseline's win: a person keeps holding it, and
/// an input moved late may win a little later than the replay did.
pub const PAD_TICKS: u32 = 60;

/// How long after a re-aimed press the bird is looked at when where it stands does not decide
/// the tick (it stands still: the press is timed to the world, a platform coming or a rock).
pub const LOOK_TICKS: u32 = 32;

/// How far a re-aimed input may come from its own tick each way ([`Baseline::probe_reaim`]).
pub const REAIM_TICKS: u32 = 8;

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
    /// The bird as each input is pressed (after `bounds[j]` ticks): where a person who
    /// re-aims presses it again ([`Baseline::probe_reaim`]).
    at_input: Vec<Aim>,
    /// The bird `.0` ticks after each input (at most [`LOOK_TICKS`], not past the next input
    /// or the win): what a re-aimed press that the bird's place does not decide aims at.
    after_input: Vec<(u32, Aim)>,
}

/// The bird as a press finds it, and the top-left of the platform it rides (if it rides one):
/// on a platform a person aims at a place on it, not in the world.
#[derive(Clone, Copy)]
struct Aim {
    bird: Player,
    ride: Option<(i32, i32)>,
}

impl Aim {
    fn of(sim: &Sim, buf: &mut Vec<u8>) -> Aim {
        Aim {
            bird: *sim.player(),
            ride: ride_origin(sim, buf),
        }
    }
}

/// The top-left of the platform the bird rides, read from the state layout (engine/FORMAT.md,
/// `stateHash`: the platforms after the pebbles, the dynamic tiles, the walkers and the
/// flyers); `None` when it rides none.
fn ride_origin(sim: &Sim, buf: &mut Vec<u8>) -> Option<(i32, i32)> {
    let r = usize::try_from(sim.player().riding).ok()?;
    buf.clear();
    sim.state_bytes(buf);
    let rd = |o: usize| {
        buf.get(o..o + 4)
            .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    // Header, tick, status, RNG (18 bytes), the bird (28), 4 pebbles of 14.
    let mut o = 46 + 4 * 14;
    o += 4 + 3 * rd(o)?.max(0) as usize;
    o += 4 + 10 * rd(o)?.max(0) as usize;
    o += 4 + 10 * rd(o)?.max(0) as usize;
    if r >= rd(o)?.max(0) as usize {
        return None;
    }
    // Each platform: progress i32, dir i8, then x and y.
    let at = o + 4 + 21 * r + 5;
    Some((rd(at)?, rd(at + 4)?))
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
        let mut at_input = Vec::new();
        // Where the bird is a while after each input ([`LOOK_TICKS`], or until the next input
        // or the replay's end): the ticks, in order, and what was found there.
        let changes: Vec<u32> = (1..acts.len())
            .filter(|&t| acts[t] != acts[t - 1])
            .map(|t| t as u32)
            .collect();
        let looks: Vec<u32> = (0..changes.len())
            .map(|k| {
                let next = changes.get(k + 1).copied().unwrap_or(total);
                changes[k] + (next - changes[k]).min(LOOK_TICKS)
            })
            .collect();
        let mut after_input: Vec<Aim> = Vec::new();
        let mut buf = Vec::new();
        let (mut stomps, mut shots) = (0u32, 0u32);
        let has_enemies = sim.enemies().next().is_some();
        for (t, &a) in acts.iter().enumerate() {
            if (t as u32).is_multiple_of(every) {
                let mut bytes = Vec::new();
                sim.state_bytes(&mut bytes);
                snapshots.push((sim.clone(), bytes));
            }
            if t > 0 && acts[t - 1] != a {
                at_input.push(Aim::of(&sim, &mut buf));
            }
            while looks.get(after_input.len()) == Some(&(t as u32)) {
                after_input.push(Aim::of(&sim, &mut buf));
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
        // A look that would come after the win looks at the win.
        let mut looks = looks;
        while after_input.len() < at_input.len() {
            looks[after_input.len()] = win;
            after_input.push(Aim::of(&sim, &mut buf));
        }
        let after_input: Vec<(u32, Aim)> = after_input
            .into_iter()
            .enumerate()
            .map(|(k, aim)| (looks[k] - changes[k], aim))
            .collect();
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
            at_input,
            after_input,
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
            if t >= moved.same_from {
                if let Some(p) = self.meets(&sim, t, lag as i64, &mut bytes) {
                    return p;
                }
            }
            while idx < self.bounds.len() && bound(idx) <= t {
                idx += 1;
            }
            if let Some(p) = tick(&mut sim, self.segs[idx], &mut t, spent) {
                return p;
            }
        }
        Probe::Lost
    }

    /// Whether the probe's run, on tick `t`, is in the baseline's state `lag` ticks earlier
    /// (checked where the baseline has a snapshot): same state but for the tick, and the
    /// baseline's inputs from here on, `lag` ticks later, so the baseline's win follows that
    /// much later (the rules never read the tick: the state is the whole simulation), unless
    /// it would come after the replay limit.
    fn meets(&self, sim: &Sim, t: u32, lag: i64, bytes: &mut Vec<u8>) -> Option<Probe> {
        let base_t = u32::try_from(t as i64 - lag).ok()?;
        if !base_t.is_multiple_of(self.every) {
            return None;
        }
        let (_, expected) = self.snapshots.get((base_t / self.every) as usize)?;
        bytes.clear();
        sim.state_bytes(bytes);
        if !horst_engine::same_state_but_tick(bytes, expected) {
            return None;
        }
        Some(if self.win as i64 + lag <= MAX_RUN_TICKS as i64 {
            Probe::Won
        } else {
            Probe::Lost
        })
    }

    /// Runs the replay with input `i` moved `shift` ticks (inputs it would pass move with it,
    /// as in [`probe`](Self::probe)) and every later input *re-aimed*: pressed on the tick,
    /// within [`REAIM_TICKS`] of its own and after the input before it, on which the bird is
    /// nearest to where the replay's bird was when the replay pressed it (standing or in the
    /// air and on what as then, then the position, then the speed, then the tick nearest the
    /// replay's own, then the earlier). A person corrects the next stop or jump by eye from
    /// where the bird is; a press nothing moves the bird for (a wait for a platform, a rock)
    /// stays on the replay's tick. It wins only where the referee says this replay wins (or
    /// its state meets the replay's own again, the rest of the replay then follows as it was,
    /// as many ticks later as the last press came): a real replay, never a guess.
    pub fn probe_reaim(&self, i: usize, shift: i32, budget: u64, spent: &mut u64) -> Probe {
        let Some(moved) = self.moved(i, shift, false) else {
            return Probe::Impossible;
        };
        let n = self.bounds.len();
        let first = moved.lo + moved.vals.len();
        // Nothing after it to re-aim: the plain probe has said it all.
        if first >= n {
            return Probe::Impossible;
        }
        let k = (moved.first_diff / self.every) as usize;
        let mut sim = self.snapshots[k].0.clone();
        let mut t = k as u32 * self.every;
        let start_spent = *spent;
        let mut bytes = Vec::new();
        let mut ride_buf = Vec::new();
        // The moved inputs, on their new ticks.
        let last_moved = *moved.vals.last().expect("a moved input");
        let mut idx = partition(n, |j| moved.bound(&self.bounds, j) <= t);
        while t < last_moved {
            while idx < n && moved.bound(&self.bounds, idx) <= t {
                idx += 1;
            }
            if *spent - start_spent >= budget {
                return Probe::OverBudget;
            }
            if let Some(p) = tick(&mut sim, self.segs[idx], &mut t, spent) {
                return p;
            }
        }
        // The last press and how much later than the replay's it came.
        let mut press = last_moved;
        let mut lag = last_moved as i64 - self.bounds[first - 1] as i64;
        // Steps `sim` (holding `action`) until tick `to`; Some(answer) ends the probe.
        let mut run =
            |sim: &mut Sim, t: &mut u32, to: u32, action: u8, lag: i64, spent: &mut u64| {
                while *t < to {
                    if let Some(p) = self.meets(sim, *t, lag, &mut bytes) {
                        return Some(p);
                    }
                    if *spent - start_spent >= budget {
                        return Some(Probe::OverBudget);
                    }
                    if let Some(p) = tick(sim, action, t, spent) {
                        return Some(p);
                    }
                }
                None
            };
        for j in first..n {
            let held = self.segs[j];
            let b = self.bounds[j];
            let lo = (press + 1).max(b.saturating_sub(REAIM_TICKS));
            let hi = (b + REAIM_TICKS).min(self.end - 1);
            if lo > hi {
                return Probe::Lost;
            }
            if let Some(p) = run(&mut sim, &mut t, lo, held, lag, spent) {
                return p;
            }
            let from = sim.clone();
            let want = self.at_input[j];
            let mut best: Option<(AimKey, u32)> = None;
            // The ticks the bird was as near as the best so far, each with the run there.
            let mut ties: Vec<(u32, Sim)> = Vec::new();
            loop {
                let key = aim_key(&Aim::of(&sim, &mut ride_buf), &want, t, b);
                let place = |k: &AimKey| (k.0, k.1, k.2);
                match best {
                    Some((k, _)) if place(&k) < place(&key) => {}
                    Some((k, _)) if place(&k) == place(&key) => {
                        ties.push((t, sim.clone()));
                        if key < k {
                            best = Some((key, t));
                        }
                    }
                    _ => {
                        ties.clear();
                        ties.push((t, sim.clone()));
                        best = Some((key, t));
                    }
                }
                if t == hi {
                    break;
                }
                let next = t + 1;
                match run(&mut sim, &mut t, next, held, lag, spent) {
                    None => {}
                    // Holding on wins before the press: a replay with it later wins.
                    Some(Probe::Won) => return Probe::Won,
                    Some(Probe::OverBudget) => return Probe::OverBudget,
                    // Dead (or past the limit) after this tick: no later press.
                    Some(_) => break,
                }
            }
            let (_, mut at) = best.expect("one tick looked at");
            // Where the bird stands does not tell the ticks apart: the one after which it is
            // nearest to where the replay's bird was as long after its press.
            if ties.len() > 1 {
                let (look, after) = self.after_input[j];
                let mut best_look: Option<(AimKey, u32)> = None;
                for (c, mut s) in ties {
                    let mut dead = false;
                    for _ in 0..look {
                        if *spent - start_spent >= budget {
                            return Probe::OverBudget;
                        }
                        s.step(self.segs[j + 1]);
                        *spent += 1;
                        if s.status() == Status::Dead {
                            dead = true;
                            break;
                        }
                    }
                    let mut key = aim_key(&Aim::of(&s, &mut ride_buf), &after, c, b);
                    key.0 |= dead;
                    if best_look.is_none_or(|(k, _)| key < k) {
                        best_look = Some((key, c));
                    }
                }
                at = best_look.expect("a tie").1;
            }

            sim = from;
            t = lo;
            if let Some(p) = run(&mut sim, &mut t, at, held, lag, spent) {
                return p;
            }
            press = at;
            lag = at as i64 - b as i64;
        }
        // Pressed late, the win may come that much later.
        let end = (self.end as i64 + lag.max(0)).min(MAX_RUN_TICKS as i64) as u32;
        match run(&mut sim, &mut t, end, self.segs[n], lag, spent) {
            Some(p) => p,
            None => Probe::Lost,
        }
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

/// What [`aim_key`] gives: smaller is nearer.
type AimKey = (bool, i64, i64, u32, u32);

/// One referee tick of a probe holding `action`; `Some` ends the probe (won or dead).
fn tick(sim: &mut Sim, action: u8, t: &mut u32, spent: &mut u64) -> Option<Probe> {
    sim.step(action);
    *t += 1;
    *spent += 1;
    match sim.status() {
        Status::Won => Some(Probe::Won),
        Status::Dead => Some(Probe::Lost),
        Status::Running => None,
    }
}

/// How the bird as a re-aimed press finds it compares with the replay's bird at that press
/// (smaller is nearer): on the ground or not and on which platform, then the distance in
/// sub-units (from the platform's corner where both ride the same one), then the difference
/// of speeds, then the ticks from the replay's press, then the tick.
fn aim_key(now: &Aim, want: &Aim, t: u32, b: u32) -> AimKey {
    let d = |a: i32, b: i32| (a as i64 - b as i64).abs();
    let (n, w) = (&now.bird, &want.bird);
    let (dx, dy) = match (now.ride, want.ride) {
        (Some((nx, ny)), Some((wx, wy))) if n.riding == w.riding => {
            (d(n.x - nx, w.x - wx), d(n.y - ny, w.y - wy))
        }
        _ => (d(n.x, w.x), d(n.y, w.y)),
    };
    (
        n.on_ground != w.on_ground || n.riding != w.riding,
        dx + dy,
        d(n.vx, w.vx) + d(n.vy, w.vy),
        t.abs_diff(b),
        t,
    )
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
