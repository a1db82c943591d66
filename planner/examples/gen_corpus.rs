//! Generates the benchmark corpus `levels/corpus/*.map` from a few templates with a fixed
//! pseudo-random generator (the output is the same on every run). The files are committed;
//! run this only to regenerate them, then `--example corpus -- --write-replays` to find their
//! replays.
//!
//! cargo run --release -p horst-planner --example gen_corpus -- [OUT_DIR] [--heldout SEED]
//!
//! `--heldout SEED` writes only issue 27's classes, drawn with another seed: a set the planner
//! was not tuned on, for `--example corpus -- --dir OUT_DIR` (not committed).
//!
//! Tiers: t1 easy (walk, hop, small pits and steps), t2 medium (egg boost, shooting, marmots,
//! ice, springs, ledges), t3 hard (crumbling ledges, rock-fall, moving platforms, a mountain
//! with a detour), t4 very hard (long combinations), u unsolvable (each says why).

use std::fmt::Write;
use std::path::PathBuf;

/// The workspace's SplitMix64 (so a seed gives the corpus it always gave).
struct Rng(horst_engine::SplitMix64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next() % (hi - lo + 1) as u64) as i32
    }
}

struct Level {
    w: i32,
    h: i32,
    g: Vec<Vec<u8>>,
    ents: Vec<String>,
    defaults: Vec<String>,
}

impl Level {
    fn new(w: i32, h: i32) -> Level {
        Level {
            w,
            h,
            g: vec![vec![b'.'; w as usize]; h as usize],
            ents: Vec::new(),
            defaults: Vec::new(),
        }
    }
    fn set(&mut self, x: i32, y: i32, c: u8) {
        if x >= 0 && y >= 0 && x < self.w && y < self.h {
            self.g[y as usize][x as usize] = c;
        }
    }
    /// A column of ground from row `top` to the bottom: grass on top, earth below.
    fn ground(&mut self, x: i32, top: i32, surface: u8) {
        for y in top..self.h {
            self.set(x, y, if y == top { surface } else { b'E' });
        }
    }
    fn fill(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, c: u8) {
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.set(x, y, c);
            }
        }
    }
    fn ent(&mut self, s: String) {
        self.ents.push(s);
    }
    fn text(&self, comment: &str, name: &str) -> String {
        let mut t = String::new();
        for line in comment.lines() {
            let _ = writeln!(t, "# {line}");
        }
        let _ = writeln!(t, "gcv-map 1\nname: {name}\nsize: {} {}", self.w, self.h);
        for d in &self.defaults {
            let _ = writeln!(t, "default: {d}");
        }
        t.push_str("grid:\n");
        for row in &self.g {
            t.push_str(std::str::from_utf8(row).unwrap());
            t.push('\n');
        }
        t.push_str("entities:\n");
        for e in &self.ents {
            let _ = writeln!(t, "{e}");
        }
        t
    }
}

/// Flat ground with spike pits of the given widths; nest at the far end.
fn pits(rng: &mut Rng, widths: &[i32], surface: u8) -> Level {
    let w = 12 + widths.iter().map(|p| p + 7).sum::<i32>();
    let h = 10;
    let mut l = Level::new(w, h);
    for x in 0..w {
        l.ground(x, 8, surface);
    }
    let mut x = 6 + rng.range(0, 3);
    for &p in widths {
        for i in 0..p {
            l.set(x + i, 8, b'.');
            l.set(x + i, 9, b'^');
        }
        x += p + rng.range(4, 7);
    }
    l.ent("start 1 7".into());
    l.ent(format!("nest {} 7", w - 2));
    l
}

/// A staircase up (positive) and down (negative) steps; nest on the last step.
fn stairs(rng: &mut Rng, steps: &[i32], surface: u8) -> Level {
    let run: Vec<i32> = steps.iter().map(|_| rng.range(4, 7)).collect();
    let w = 6 + run.iter().sum::<i32>() + 4;
    let up: i32 = steps.iter().filter(|&&s| s > 0).sum();
    let h = up + 8;
    let mut l = Level::new(w, h);
    let mut top = h - 2;
    let mut x = 0;
    for _ in 0..6 {
        l.ground(x, top, surface);
        x += 1;
    }
    let start_top = top;
    for (i, &s) in steps.iter().enumerate() {
        top -= s;
        for _ in 0..run[i] {
            l.ground(x, top, surface);
            x += 1;
        }
    }
    while x < w {
        l.ground(x, top, surface);
        x += 1;
    }
    l.ent(format!("start 1 {}", start_top - 1));
    l.ent(format!("nest {} {}", w - 2, top - 1));
    l
}

/// Walls of the given heights on flat ground (an egg boost clears 5).
fn walls(rng: &mut Rng, heights: &[i32]) -> Level {
    let gaps: Vec<i32> = heights.iter().map(|_| rng.range(5, 8)).collect();
    let w = 6 + gaps.iter().sum::<i32>() + heights.len() as i32 * 3 + 4;
    let hmax = *heights.iter().max().unwrap();
    let h = hmax + 8;
    let mut l = Level::new(w, h);
    let floor = h - 2;
    for x in 0..w {
        l.ground(x, floor, b'G');
    }
    let mut x = 6;
    let mut top = floor;
    for (i, &hh) in heights.iter().enumerate() {
        x += gaps[i];
        top = floor - hh;
        for xx in x..x + 3 {
            l.ground(xx, top, b'G');
        }
        // The rest stays at the wall's height only for the last wall.
        x += 3;
    }
    let _ = top;
    l.ent(format!("start 1 {}", floor - 1));
    let last = heights.len() - 1;
    let _ = last;
    l.ent(format!("nest {} {}", x - 2, top - 1));
    l
}

/// A corridor with a low ceiling and cracked walls: shoot them away.
fn cracked(rng: &mut Rng, n: i32, thick: i32) -> Level {
    let w = 8 + n * (thick + 6) + 4;
    let h = 8;
    let mut l = Level::new(w, h);
    l.fill(0, 0, w - 1, 2, b'#');
    for x in 0..w {
        l.ground(x, 6, b'G');
    }
    let mut x = 6;
    for _ in 0..n {
        x += rng.range(3, 6);
        l.fill(x, 3, x + thick - 1, 5, b'C');
        x += thick;
    }
    l.ent("start 1 5".into());
    l.ent(format!("nest {} 5", w - 2));
    l
}

fn marmots(rng: &mut Rng, n: i32, speed: i32) -> Level {
    let w = 10 + n * 9 + 4;
    let h = 10;
    let mut l = Level::new(w, h);
    for x in 0..w {
        l.ground(x, 8, b'G');
    }
    l.ent("start 1 7".into());
    for i in 0..n {
        let x = 10 + i * 9 + rng.range(0, 2);
        let dir = if rng.range(0, 1) == 0 {
            "left"
        } else {
            "right"
        };
        l.ent(format!(
            "walker {x} 7 range={} speed={speed} pause={} dir={dir}",
            rng.range(1, 3),
            rng.range(0, 30)
        ));
    }
    l.ent(format!("nest {} 7", w - 2));
    l
}

/// A wall only a spring gets the bird over.
fn spring(rng: &mut Rng, wall: i32) -> Level {
    let w = 30;
    let h = wall + 6;
    let mut l = Level::new(w, h);
    let floor = h - 2;
    for x in 0..w {
        l.ground(x, floor, b'G');
    }
    let wx = 16 + rng.range(0, 3);
    l.fill(wx, floor - wall, wx, floor - 1, b'#');
    for x in wx..w {
        l.ground(x, floor - wall, b'G');
    }
    l.ent(format!("start 1 {}", floor - 1));
    l.ent(format!(
        "spring {} {} strength={}",
        wx - 2,
        floor - 1,
        wall + 1
    ));
    l.ent(format!("nest {} {}", w - 2, floor - wall - 1));
    l
}

/// Crumbling ledges over a spike floor.
fn crumble(rng: &mut Rng, n: i32, delay: i32) -> Level {
    let w = 8 + n * 6 + 6;
    let h = 12;
    let mut l = Level::new(w, h);
    l.defaults.push(format!("crumbling delay={delay}"));
    for x in 0..w {
        l.ground(x, 10, b'E');
        l.set(x, 10, b'^');
    }
    l.fill(0, 9, 4, 9, b'G');
    l.fill(0, 10, 4, 11, b'E');
    let mut x = 7;
    let mut y = 8;
    for _ in 0..n {
        y = (y + rng.range(-1, 1)).clamp(6, 8);
        l.fill(x, y, x + 2, y, b'~');
        x += rng.range(5, 6);
    }
    l.fill(x, 9, w - 1, 9, b'G');
    l.fill(x, 10, w - 1, 11, b'E');
    l.ent("start 1 8".into());
    l.ent(format!("nest {} 8", w - 2));
    l
}

fn rockfall(rng: &mut Rng, n: i32, interval: i32) -> Level {
    let w = 10 + n * 6 + 4;
    let h = 12;
    let mut l = Level::new(w, h);
    l.fill(0, 0, w - 1, 0, b'#');
    for x in 0..w {
        l.ground(x, 10, b'G');
    }
    l.ent("start 1 9".into());
    for i in 0..n {
        let x = 8 + i * 6 + rng.range(0, 2);
        l.ent(format!(
            "rockfall {x} 1 interval={} jitter={} offset={}",
            interval + rng.range(0, 20),
            rng.range(5, 25),
            rng.range(0, 40)
        ));
    }
    l.ent(format!("nest {} 9", w - 2));
    l
}

/// A gorge crossed on moving platforms.
fn platforms(rng: &mut Rng, n: i32, speed: i32) -> Level {
    let span = 9;
    let w = 6 + n * span + 6;
    let h = 12;
    let mut l = Level::new(w, h);
    l.fill(0, 8, 4, 8, b'G');
    l.fill(0, 9, 4, h - 1, b'E');
    l.fill(w - 5, 8, w - 1, 8, b'G');
    l.fill(w - 5, 9, w - 1, h - 1, b'E');
    l.ent("start 1 7".into());
    for i in 0..n {
        let x = 5 + i * span;
        let dy = rng.range(-1, 1);
        l.ent(format!(
            "platform {x} {} dx={} dy={dy} speed={speed} width=3",
            8 + rng.range(-1, 0).min(0),
            span - 3
        ));
    }
    l.ent(format!("nest {} 7", w - 2));
    l
}

/// A mountain: the nest sits high above the start, reached by ledges on the far side.
fn mountain(rng: &mut Rng, tiers: i32) -> Level {
    let w = 36;
    let h = tiers * 3 + 8;
    let mut l = Level::new(w, h);
    let floor = h - 2;
    for x in 0..w {
        l.ground(x, floor, b'G');
    }
    // A cliff (an overhang) over the start, too high to jump onto from below.
    let top = floor - tiers * 3;
    l.fill(0, top, 9, top, b'G');
    l.fill(0, top + 1, 9, top + 1, b'#');
    // Ledges zig-zag up on the right.
    let mut y = floor - 3;
    let mut left = false;
    while y > top {
        let x = if left {
            12 + rng.range(0, 2)
        } else {
            22 + rng.range(0, 3)
        };
        l.fill(x, y, x + 5, y, b'-');
        left = !left;
        y -= 3;
    }
    l.fill(11, top, 17, top, b'-');
    l.ent(format!("start 3 {}", floor - 1));
    l.ent(format!("nest 2 {}", top - 1));
    l
}

#[derive(Clone, Copy)]
enum Seg {
    Flat(i32),
    Pit(i32),
    /// Change the ground height by this many tiles (negative = up), then 4 flat tiles.
    Step(i32),
    Crumble(i32),
    Marmot,
    Rock,
    Platform,
    Spring(i32),
}

/// A long level made of segments, left to right, on a ground line that steps up and down.
fn gauntlet(rng: &mut Rng, segs: &[Seg], h: i32) -> Level {
    let len = |s: &Seg| match *s {
        Seg::Flat(n) => n,
        Seg::Pit(w) => w,
        Seg::Step(_) => 4,
        Seg::Crumble(n) => n * 5 + 2,
        Seg::Marmot => 9,
        Seg::Rock => 7,
        Seg::Platform => 11,
        Seg::Spring(_) => 6,
    };
    let w = 4 + segs.iter().map(len).sum::<i32>() + 4;
    let mut l = Level::new(w, h);
    let mut top = h - 3;
    let start_top = top;
    let mut x = 0;
    for _ in 0..4 {
        l.ground(x, top, b'G');
        x += 1;
    }
    for s in segs {
        match *s {
            Seg::Flat(n) => {
                for _ in 0..n {
                    l.ground(x, top, b'G');
                    x += 1;
                }
            }
            Seg::Pit(pw) => {
                for _ in 0..pw {
                    l.set(x, h - 1, b'^');
                    x += 1;
                }
            }
            Seg::Step(dh) => {
                top = (top + dh).clamp(4, h - 2);
                for _ in 0..4 {
                    l.ground(x, top, b'G');
                    x += 1;
                }
            }
            Seg::Crumble(n) => {
                for i in 0..n * 5 + 2 {
                    l.set(x + i, h - 1, b'^');
                }
                for i in 0..n {
                    let lx = x + 1 + i * 5;
                    let ly = (top + rng.range(-1, 0)).min(h - 3);
                    l.fill(lx, ly, lx + 2, ly, b'~');
                }
                x += n * 5 + 2;
            }
            Seg::Marmot => {
                for i in 0..9 {
                    l.ground(x + i, top, b'G');
                }
                l.ent(format!(
                    "walker {} {} range=2 speed={} pause={}",
                    x + 4,
                    top - 1,
                    rng.range(3, 5),
                    rng.range(5, 25)
                ));
                x += 9;
            }
            Seg::Rock => {
                for i in 0..7 {
                    l.ground(x + i, top, b'G');
                }
                l.ent(format!(
                    "rockfall {} 0 interval={} jitter={}",
                    x + 3,
                    rng.range(40, 70),
                    rng.range(5, 20)
                ));
                x += 7;
            }
            Seg::Platform => {
                for i in 0..11 {
                    l.set(x + i, h - 1, b'^');
                }
                l.ent(format!(
                    "platform {} {} dx=6 speed={} width=3",
                    x + 1,
                    top,
                    rng.range(5, 8)
                ));
                x += 11;
            }
            Seg::Spring(dh) => {
                for i in 0..2 {
                    l.ground(x + i, top, b'G');
                }
                l.ent(format!("spring {} {} strength={}", x, top - 1, dh + 1));
                top = (top - dh).max(4);
                for i in 2..6 {
                    l.ground(x + i, top, b'G');
                }
                x += 6;
            }
        }
    }
    while x < w {
        l.ground(x, top, b'G');
        x += 1;
    }
    l.ent(format!("start 1 {}", start_top - 1));
    l.ent(format!("nest {} {}", w - 2, top - 1));
    l
}

// The classes of issue 13: levels that need waiting, long rides, timing with enemies, detours
// and length. Each has a known winning replay beside it.

/// A gorge too wide to jump; a platform that starts `dist` tiles away comes over to the bird,
/// which has to wait for it, ride it back and jump to the far side.
fn far_platform(rng: &mut Rng, dist: i32, speed: i32) -> Level {
    let h = 12;
    let floor = 9;
    let gap = rng.range(1, 2);
    let w = 6 + dist + 3 + gap + 8;
    let mut l = Level::new(w, h);
    for x in 0..6 {
        l.ground(x, floor, b'G');
    }
    for x in 6 + dist + 3 + gap..w {
        l.ground(x, floor, b'G');
    }
    for x in 6..6 + dist + 3 + gap {
        l.set(x, h - 1, b'^');
    }
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!(
        "platform {} {floor} dx={} dy=0 speed={speed} width=3",
        6 + dist,
        -dist
    ));
    l.ent(format!("nest {} {}", w - 3, floor - 1));
    l
}

/// A lift that starts `height` tiles above the bird, comes down into a shaft beside it, and
/// carries it up to a ledge with the nest (far too high to jump).
fn lift(rng: &mut Rng, height: i32, speed: i32) -> Level {
    let h = height + 8;
    let floor = h - 2;
    let w = 26;
    let mut l = Level::new(w, h);
    let sx = 9 + rng.range(0, 2);
    for x in 0..w {
        if x < sx || x > sx + 2 {
            l.ground(x, floor, b'G');
        } else {
            l.set(x, h - 1, b'^');
        }
    }
    let top = floor - height;
    l.fill(sx + 4, top, w - 1, top, b'#');
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!(
        "platform {sx} {top} dx=0 dy={height} speed={speed} width=3"
    ));
    l.ent(format!("nest {} {}", w - 3, top - 1));
    l
}

/// A long ride on a slow ferry (speed 1: 0.47 tiles a second) over a spike gorge.
fn ferry(rng: &mut Rng, len: i32) -> Level {
    let h = 12;
    let floor = 9;
    let gap = rng.range(1, 2);
    let end = 6 + len + 3 + gap;
    let w = end + 7;
    let mut l = Level::new(w, h);
    for x in 0..6 {
        l.ground(x, floor, b'G');
    }
    for x in end..w {
        l.ground(x, floor, b'G');
    }
    for x in 6..end {
        l.set(x, h - 1, b'^');
    }
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!("platform 6 {floor} dx={len} dy=0 speed=1 width=3"));
    l.ent(format!("nest {} {}", w - 3, floor - 1));
    l
}

/// A cliff too high for a jump and the egg boost; a jackdaw on a long beat passes the plateau
/// before it now and then: stomp it there and boost up.
fn flyer_beat(rng: &mut Rng, range: i32, speed: i32) -> Level {
    let h = 16;
    let floor = 13;
    let cliff = 6;
    let cx = 2 * range + 4;
    let w = cx + 10;
    let mut l = Level::new(w, h);
    for x in 0..w {
        l.ground(x, floor, b'G');
    }
    l.fill(cx, floor - cliff, w - 1, floor - 1, b'#');
    for x in cx..w {
        l.set(x, floor - cliff, b'G');
    }
    l.ent(format!("start {} {}", cx - 3, floor - 1));
    l.ent(format!(
        "flyer {} {} axis=h range={range} speed={speed} pause={}",
        cx - 2 - range,
        floor - 3,
        rng.range(0, 20)
    ));
    l.ent(format!("nest {} {}", w - 3, floor - cliff - 1));
    l
}

/// A ladder of one-way ledges on both sides of a slow vertical jackdaw, then a gap that takes a
/// running jump with the egg boost.
fn flyer_ledges(rng: &mut Rng, rungs: i32, speed: i32) -> Level {
    let h = rungs * 3 + 8;
    let floor = h - 2;
    let w = 36;
    let mut l = Level::new(w, h);
    for x in 0..w {
        l.ground(x, floor, b'G');
    }
    let fx = 10;
    let mut y = floor;
    for i in 0..rungs {
        y -= 3;
        let x = if i % 2 == 0 { fx - 4 } else { fx + 2 };
        l.fill(x, y, x + 2, y, b'-');
    }
    // The top: a ledge to run on, a gap, the nest's shelf.
    let top = y;
    l.fill(fx + 2, top, fx + 7, top, b'-');
    let gap = rng.range(6, 7);
    l.fill(fx + 8 + gap, top, w - 1, top, b'#');
    // Walls so the shelf cannot be reached from the ground.
    l.fill(fx + 8 + gap, top + 1, fx + 8 + gap, floor - 1, b'#');
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!(
        "flyer {fx} {} axis=v range={} speed={speed} pause={}",
        floor - 1 - (rungs * 3) / 2,
        (rungs * 3) / 2 - 1,
        rng.range(0, 30)
    ));
    l.ent(format!("nest {} {}", w - 3, top - 1));
    l
}

/// Walls of 7 tiles climbed on slow lifts in shafts at their feet.
fn slow_lifts(rng: &mut Rng, n: i32, speed: i32) -> Level {
    let step = 7;
    let h = n * step + 7;
    let seg = 9;
    let w = 6 + n * seg + 6;
    let mut l = Level::new(w, h);
    let mut top = h - 2;
    let mut x = 0;
    while x < 6 {
        l.ground(x, top, b'G');
        x += 1;
    }
    for _ in 0..n {
        // The shaft with the lift, then the next, higher ground.
        l.set(x, h - 1, b'^');
        l.set(x + 1, h - 1, b'^');
        l.set(x + 2, h - 1, b'^');
        let phase = rng.range(0, 1);
        if phase == 0 {
            l.ent(format!(
                "platform {x} {top} dx=0 dy=-{step} speed={speed} width=3"
            ));
        } else {
            l.ent(format!(
                "platform {x} {} dx=0 dy={step} speed={speed} width=3",
                top - step
            ));
        }
        top -= step;
        for xx in x + 3..x + seg {
            l.ground(xx, top, b'G');
        }
        x += seg;
    }
    while x < w {
        l.ground(x, top, b'G');
        x += 1;
    }
    l.ent(format!("start 2 {}", h - 3));
    l.ent(format!("nest {} {}", w - 2, top - 1));
    l
}

/// The nest lies just past a spike pit too wide for any jump (the relaxed tile graph lets the
/// bird drift across, so the heuristic points there); the way is back left, up a ladder of
/// ledges, and over a high bridge of short ledges.
fn deceptive(rng: &mut Rng, pit: i32, high: i32) -> Level {
    let h = high + 8;
    let floor = h - 2;
    let px = 26;
    let w = px + pit + 10;
    let mut l = Level::new(w, h);
    for x in 0..w {
        if x < px || x >= px + pit {
            l.ground(x, floor, b'G');
        } else {
            l.set(x, floor, b'.');
            l.set(x, h - 1, b'^');
        }
    }
    // The ladder on the far left.
    let mut y = floor;
    let mut i = 0;
    while y - 3 > floor - high {
        y -= 3;
        let x = if i % 2 == 0 { 1 } else { 5 };
        l.fill(x, y, x + 2, y, b'-');
        i += 1;
    }
    // The bridge: short ledges with small gaps, from the ladder to above the far side.
    let by = floor - high;
    let mut x = 2;
    while x < px + pit + 2 {
        let len = rng.range(2, 4);
        l.fill(x, by, x + len - 1, by, b'-');
        x += len + rng.range(1, 3);
    }
    l.ent(format!("start 20 {}", floor - 1));
    l.ent(format!("nest {} {}", w - 3, floor - 1));
    l
}

// ---- The classes of issue 27 (item 1): levels like the ones agents write that the planner
// lost. Their own generator stream (at the end of `main`), so every file above stays
// byte-identical.

/// A tall tower (up to the 128-row limit) between rock walls: a zigzag of one-way and crumbling
/// ledges three rows apart, now and then a spring that throws the bird up to a ledge 5-7 rows
/// higher, and an icy summit with the nest beside the last ledge.
fn tower(rng: &mut Rng, rungs: i32, delay: i32) -> Level {
    let w = 26;
    let rises: Vec<i32> = (0..rungs)
        .map(|i| if i % 7 == 6 { rng.range(5, 7) } else { 3 })
        .collect();
    let h = (rises.iter().sum::<i32>() + 10).min(128);
    let floor = h - 2;
    let mut l = Level::new(w, h);
    l.defaults.push(format!("crumbling delay={delay}"));
    l.fill(0, 0, 0, h - 1, b'#');
    l.fill(w - 1, 0, w - 1, h - 1, b'#');
    for x in 1..w - 1 {
        l.ground(x, floor, b'G');
    }
    let (mut y, mut x, mut width) = (floor, rng.range(3, 8), 5);
    for (i, &up) in rises.iter().enumerate() {
        if y - up < 7 {
            break;
        }
        if up > 3 {
            // A spring on the ledge below (made plain: a springboard never crumbles).
            l.fill(x, y, x + width - 1, y, b'-');
            l.ent(format!("spring {} {} strength={up}", x + width / 2, y - 1));
        }
        y -= up;
        // The next ledge overlaps the one below or lies beside it, at most a tile away.
        let shift = rng.range(-(width + 1), width + 1);
        width = rng.range(4, 6);
        x = (x + shift).clamp(1, w - 1 - width);
        l.fill(x, y, x + width - 1, y, if i % 3 == 2 { b'~' } else { b'-' });
    }
    // The summit: an icy shelf three rows above the last ledge, beside it.
    let top = y - 3;
    let left = x > w / 2;
    let (a, b) = if left {
        (1, x - 2)
    } else {
        (x + width + 1, w - 2)
    };
    l.fill(a, top, b, top, b'I');
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!("nest {} {}", if left { 1 } else { w - 2 }, top - 1));
    l
}

/// A shaft of vertical lifts one above the other (each `rise` rows, the first an "express" of up
/// to 32), shelves between them, and at the top a corridor to the nest under a rock-fall whose
/// timing is drawn from the seed (`jitter`).
fn lift_shaft(rng: &mut Rng, rises: &[i32], speed: i32, jitter: i32) -> Level {
    let seg = 9;
    let w = 4 + rises.len() as i32 * seg + 8;
    let h = rises.iter().sum::<i32>() + 12;
    let mut l = Level::new(w, h);
    let mut y = h - 2;
    for x in 0..4 {
        l.ground(x, y, b'G');
    }
    let mut x = 4;
    for &rise in rises {
        for c in x..x + 3 {
            l.set(c, h - 1, b'^');
        }
        if rng.range(0, 1) == 0 {
            l.ent(format!(
                "platform {x} {y} dx=0 dy=-{rise} speed={speed} width=3"
            ));
        } else {
            l.ent(format!(
                "platform {x} {} dx=0 dy={rise} speed={speed} width=3",
                y - rise
            ));
        }
        y -= rise;
        // The shelf to the next lift: rock, one row thick.
        l.fill(x + 3, y, x + seg - 1, y, b'#');
        x += seg;
    }
    // The corridor at the top: on from the last shelf, a roof 5 rows up, a rock-fall over it.
    l.fill(x, y, w - 1, y, b'#');
    l.fill(x - 6, y - 6, w - 1, y - 6, b'#');
    l.ent(format!(
        "rockfall {} {} interval={} jitter={jitter} offset={}",
        w - 5,
        y - 5,
        rng.range(50, 80),
        rng.range(0, 60)
    ));
    l.ent(format!("start 1 {}", h - 3));
    l.ent(format!("nest {} {}", w - 2, y - 1));
    l
}

/// A low corridor under rock-falls close together, each with a large `jitter` (their timing
/// comes from the seed), and a small spike pit after each: wait for a gap, then go.
fn jitter_run(rng: &mut Rng, n: i32, jitter: i32) -> Level {
    let w = 8 + n * 8 + 4;
    let h = 10;
    let floor = 8;
    let mut l = Level::new(w, h);
    l.fill(0, 0, w - 1, 0, b'#');
    for x in 0..w {
        l.ground(x, floor, b'G');
    }
    for i in 0..n {
        let x = 8 + i * 8;
        l.ent(format!(
            "rockfall {x} 1 interval={} jitter={jitter} offset={}",
            rng.range(30, 50),
            rng.range(0, 30)
        ));
        let pit = rng.range(1, 2);
        for c in x + 2..x + 2 + pit {
            l.set(c, floor, b'.');
            l.set(c, floor + 1, b'^');
        }
    }
    l.ent(format!("start 1 {}", floor - 1));
    l.ent(format!("nest {} {}", w - 2, floor - 1));
    l
}

/// A shaft of one-way ledges three rows apart; now and then the next ledge is six rows up,
/// higher than a jump with the egg boost, and a slow jackdaw crosses three rows above the ledge
/// below: stomp it (the bounce restores the boost) and boost up, timed to the jackdaw.
fn jackdaw_shaft(rng: &mut Rng, sections: i32, speed: i32) -> Level {
    let w = 24;
    let per = 3;
    let h = sections * (per * 3 + 6) + 10;
    let floor = h - 2;
    let mut l = Level::new(w, h);
    l.fill(0, 0, 0, h - 1, b'#');
    l.fill(w - 1, 0, w - 1, h - 1, b'#');
    for x in 1..w - 1 {
        l.ground(x, floor, b'G');
    }
    let (mut y, mut x, mut width) = (floor, rng.range(4, 10), 6);
    for _ in 0..sections {
        for _ in 0..per {
            y -= 3;
            let shift = rng.range(-(width + 1), width + 1);
            width = rng.range(4, 6);
            x = (x + shift).clamp(1, w - 1 - width);
            l.fill(x, y, x + width - 1, y, b'-');
        }
        // The jackdaw's beat is centred over this ledge.
        let range = rng.range(3, 5);
        let fx = (x + width / 2).clamp(1 + range, w - 2 - range);
        l.ent(format!(
            "flyer {fx} {} axis=h range={range} speed={speed} pause={}",
            y - 3,
            rng.range(0, 40)
        ));
        y -= 6;
        let shift = rng.range(-2, 2);
        width = rng.range(5, 7);
        x = (x + shift).clamp(1, w - 1 - width);
        l.fill(x, y, x + width - 1, y, b'-');
    }
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!("nest {} {}", x + width / 2, y - 1));
    l
}

/// The seed of the stream of issue 27's classes in the committed corpus.
const ISSUE27_SEED: u64 = 0x6973_7375_652d_3237;

/// The classes of issue 27 (item 1) from `rng`: the committed corpus's with `ISSUE27_SEED`, a
/// held-out set (`--heldout SEED`) with another seed.
fn issue27(rng: &mut Rng, put: &mut impl FnMut(&str, &str, Level)) {
    for (i, (n, d)) in [(24, 40), (30, 30), (34, 36), (38, 24)].iter().enumerate() {
        let l = tower(rng, *n, *d);
        put(&format!("t4-tower-{:02}", i + 1), &format!("Tier 4: a tower {} rows high: a zigzag of {n} one-way and crumbling ledges (delay {d}), springs, an icy summit.", l.h), l);
    }
    for (i, (rises, s, j)) in [
        (vec![14, 10], 3, 40),
        (vec![24, 12, 10], 4, 60),
        (vec![32, 16], 2, 90),
        (vec![12, 12, 12], 2, 120),
    ]
    .iter()
    .enumerate()
    {
        let l = lift_shaft(rng, rises, *s, *j);
        put(&format!("t4-lift-shaft-{:02}", i + 1), &format!("Tier 4: a shaft of lifts rising {rises:?} rows (speed {s}), then a corridor under a rock-fall with jitter {j}."), l);
    }
    for (i, (n, j)) in [(3, 60), (4, 90), (5, 120), (6, 150)].iter().enumerate() {
        let l = jitter_run(rng, *n, *j);
        put(&format!("t3-jitter-{:02}", i + 1), &format!("Tier 3: a low corridor under {n} rock-falls with jitter {j} ticks (timed by the seed), a spike pit after each."), l);
    }
    for (i, (n, s)) in [(1, 2), (2, 2), (2, 1), (3, 1)].iter().enumerate() {
        let l = jackdaw_shaft(rng, *n, *s);
        put(&format!("t4-jackdaw-shaft-{:02}", i + 1), &format!("Tier 4: a shaft of one-way ledges with {n} rises of six rows, each climbed by stomping a slow jackdaw (speed {s}) and boosting."), l);
    }
}

// ---- Issue 27 item 1, second stream: harder, less regular variants of the classes the
// held-out sets lost (other widths, several lifts, mixed mechanics, decoys, long rides). Their
// own seed (`ISSUE27B_SEED`), drawn after every file above, so those stay byte-identical.

/// A tower of a given width with mixed rungs: one-way, crumbling and icy ledges three rows
/// apart, springs, now and then a vertical lift of 8-14 rows beside a ledge, and decoy ledges
/// that lead into the wall; the nest on a shelf at the top.
fn mixed_tower(rng: &mut Rng, rungs: i32, delay: i32, w: i32) -> Level {
    #[derive(Clone, Copy)]
    enum Rung {
        Ledge,
        Spring(i32),
        Lift(i32, i32),
    }
    let plan: Vec<Rung> = (0..rungs)
        .map(|_| match rng.range(0, 9) {
            0 => Rung::Spring(rng.range(5, 7)),
            1 => Rung::Lift(rng.range(8, 14), rng.range(2, 4)),
            _ => Rung::Ledge,
        })
        .collect();
    let rise = |r: &Rung| match *r {
        Rung::Ledge => 3,
        Rung::Spring(s) => s,
        Rung::Lift(h, _) => h,
    };
    let h = (plan.iter().map(rise).sum::<i32>() + 10).min(128);
    let floor = h - 2;
    let mut l = Level::new(w, h);
    l.defaults.push(format!("crumbling delay={delay}"));
    l.fill(0, 0, 0, h - 1, b'#');
    l.fill(w - 1, 0, w - 1, h - 1, b'#');
    for x in 1..w - 1 {
        l.ground(x, floor, b'G');
    }
    let (mut y, mut x, mut width) = (floor, rng.range(3, w / 3), 5);
    for (i, r) in plan.iter().enumerate() {
        let up = rise(r);
        if y - up < 7 {
            break;
        }
        match *r {
            Rung::Spring(s) => {
                l.fill(x, y, x + width - 1, y, b'-');
                l.ent(format!("spring {} {} strength={s}", x + width / 2, y - 1));
            }
            Rung::Lift(_, speed) => {
                // The lift beside the ledge, the next ledge beside the lift's top.
                let right = x + width + 3 + 4 < w - 1;
                let lx = if right { x + width } else { x - 3 };
                l.fill(x, y, x + width - 1, y, b'-');
                if rng.range(0, 1) == 0 {
                    l.ent(format!(
                        "platform {lx} {y} dx=0 dy=-{up} speed={speed} width=3"
                    ));
                } else {
                    l.ent(format!(
                        "platform {lx} {} dx=0 dy={up} speed={speed} width=3",
                        y - up
                    ));
                }
                y -= up;
                width = rng.range(4, 6);
                x = if lx + 3 + width < w - 1 {
                    lx + 3
                } else {
                    lx - width
                };
                l.fill(x, y, x + width - 1, y, b'-');
                continue;
            }
            Rung::Ledge => {}
        }
        y -= up;
        let shift = rng.range(-(width + 1), width + 1);
        width = rng.range(3, 6);
        x = (x + shift).clamp(1, w - 1 - width);
        let c = match i % 4 {
            1 => b'~',
            3 if rng.range(0, 1) == 0 => b'I',
            _ => b'-',
        };
        l.fill(x, y, x + width - 1, y, c);
        // A decoy: a short one-way ledge two rows up against the far wall, going nowhere.
        if rng.range(0, 5) == 0 {
            let dx = if x > w / 2 { 1 } else { w - 4 };
            if (dx - x).abs() > width + 3 {
                l.fill(dx, y - 2, dx + 2, y - 2, b'-');
            }
        }
    }
    let top = y - 3;
    let left = x > w / 2;
    let (a, b) = if left {
        (1, x - 2)
    } else {
        (x + width + 1, w - 2)
    };
    l.fill(a, top, b, top, b'I');
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!("nest {} {}", if left { 1 } else { w - 2 }, top - 1));
    l
}

/// A tower of lifts: shelves of rock one row thick zigzag up, each reached by a vertical lift
/// at the end of the shelf below (rises of 6-16 rows, speeds 1-4, some starting at the top so
/// the bird waits); a rock-fall with `jitter` over the last shelf.
fn lift_tower(rng: &mut Rng, n: i32, w: i32, jitter: i32) -> Level {
    let rises: Vec<i32> = (0..n).map(|_| rng.range(6, 16)).collect();
    let h = (rises.iter().sum::<i32>() + 14).min(128);
    let floor = h - 2;
    let mut l = Level::new(w, h);
    l.fill(0, 0, 0, h - 1, b'#');
    l.fill(w - 1, 0, w - 1, h - 1, b'#');
    let (mut a, mut b) = (1, rng.range(4, 8));
    for x in a..=b {
        l.ground(x, floor, b'G');
    }
    for x in b + 4..w - 1 {
        l.ground(x, floor, b'G');
    }
    for x in b + 1..b + 4 {
        l.set(x, h - 1, b'^');
    }
    let mut y = floor;
    let (mut right, mut far_right) = (true, true);
    for &rise in &rises {
        if y - rise < 8 {
            break;
        }
        let lx = if right { b + 1 } else { a - 3 };
        let speed = rng.range(1, 4);
        if rng.range(0, 2) == 0 {
            l.ent(format!(
                "platform {lx} {} dx=0 dy={rise} speed={speed} width=3",
                y - rise
            ));
        } else {
            l.ent(format!(
                "platform {lx} {y} dx=0 dy=-{rise} speed={speed} width=3"
            ));
        }
        y -= rise;
        // The next shelf starts beside the lift's top and runs back over the one below or on.
        let len = rng.range(4, 9);
        let back = rng.range(0, 2) > 0;
        let (na, nb) = if right == back {
            (lx - len, lx - 1)
        } else {
            (lx + 3, lx + 2 + len)
        };
        let (na, nb) = (na.max(1), nb.min(w - 2));
        l.fill(na, y, nb, y, b'#');
        (a, b) = (na, nb);
        // The next lift at the shelf's far end (walk across it), or at its near end if there
        // is no room.
        far_right = na > lx;
        right = if far_right { b + 4 <= w - 2 } else { a - 3 < 1 };
    }
    // The summit: the nest at the far end of the last shelf, a rock-fall above its middle.
    let nest = if far_right { b } else { a };
    let mid = (a + b) / 2;
    if (mid - nest).abs() >= 2 && y > 6 {
        l.ent(format!(
            "rockfall {mid} {} interval={} jitter={jitter} offset={}",
            y - 5,
            rng.range(40, 90),
            rng.range(0, 60)
        ));
    }
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!("nest {nest} {}", y - 1));
    l
}

/// A cable car: two slow platforms (speed 1-2) over a spike gorge, the first starting at its
/// far end (wait for it), rising or falling on the way (diagonal paths), an island between
/// them with a marmot on it.
fn cable_car(rng: &mut Rng, len_a: i32, len_b: i32, speed: i32) -> Level {
    let h = 40;
    let y0 = 28;
    let dya = rng.range(-10, 6);
    let dyb = rng.range(-10, 6);
    let island = rng.range(4, 6);
    let g0 = 8;
    let ia = g0 + len_a + 3;
    let gb = ia + island;
    let end = gb + 3 + len_b;
    let w = end + 8;
    let mut l = Level::new(w, h);
    for x in 0..g0 {
        l.ground(x, y0, b'G');
    }
    for x in g0..w {
        l.set(x, h - 1, b'^');
    }
    let y1 = y0 + dya;
    for x in ia..gb {
        l.ground(x, y1, b'G');
    }
    l.fill(ia, h - 1, gb - 1, h - 1, b'E');
    let y2 = y1 + dyb;
    for x in end..w {
        l.ground(x, y2, b'G');
    }
    l.ent(format!("start 2 {}", y0 - 1));
    l.ent(format!(
        "platform {} {y1} dx=-{len_a} dy={} speed={speed} width=3",
        g0 + len_a,
        -dya
    ));
    l.ent(format!(
        "walker {} {} range={} speed=2 pause=40",
        ia + island / 2,
        y1 - 1,
        island / 2 - 1
    ));
    // The second starts at the island or at its far end.
    if rng.range(0, 1) == 0 {
        l.ent(format!(
            "platform {gb} {y1} dx={len_b} dy={dyb} speed={} width=3",
            rng.range(1, 2)
        ));
    } else {
        l.ent(format!(
            "platform {} {y2} dx=-{len_b} dy={} speed={} width=3",
            gb + len_b,
            -dyb,
            rng.range(1, 2)
        ));
    }
    l.ent(format!("nest {} {}", w - 3, y2 - 1));
    l
}

/// A long level across a massif: steps up and down of 1-3 rows (some of 4-5: the egg boost),
/// cliffs of 8-12 rows climbed by a zigzag of one-way ledges in front of them, spike pits in the
/// valleys, crumbling stepping stones over wider ones, marmots on the plateaus.
fn massif(rng: &mut Rng, w: i32, delay: i32) -> Level {
    let h = 64;
    let mut l = Level::new(w, h);
    l.defaults.push(format!("crumbling delay={delay}"));
    let mut top = h - 4;
    let start_top = top;
    let mut x = 0;
    let flat = |l: &mut Level, x: &mut i32, n: i32, top: i32| {
        for _ in 0..n {
            if *x < w {
                l.ground(*x, top, b'G');
            }
            *x += 1;
        }
    };
    flat(&mut l, &mut x, 6, top);
    while x < w - 30 {
        match rng.range(0, 9) {
            0 | 1 => {
                let up = rng.range(1, 3);
                top = (top - up).max(16);
                let n = rng.range(3, 7);
                flat(&mut l, &mut x, n, top);
            }
            2 => {
                let up = rng.range(4, 5);
                top = (top - up).max(16);
                let n = rng.range(4, 6);
                flat(&mut l, &mut x, n, top);
            }
            3 | 4 => {
                let down = rng.range(2, 9);
                top = (top + down).min(h - 3);
                let n = rng.range(3, 6);
                flat(&mut l, &mut x, n, top);
            }
            5 => {
                // A cliff with a ladder of one-way ledges in front of it.
                let cliff = rng.range(8, 12);
                if top - cliff < 14 {
                    continue;
                }
                let run = 9;
                flat(&mut l, &mut x, run, top);
                let cx = x;
                let mut ly = top;
                let mut left = true;
                while ly - 3 > top - cliff {
                    ly -= 3;
                    let lx = if left { cx - 8 } else { cx - 4 };
                    l.fill(lx, ly, lx + 2, ly, b'-');
                    left = !left;
                }
                top -= cliff;
                l.fill(cx - 3, top, cx - 1, top, b'-');
                flat(&mut l, &mut x, rng.range(4, 8), top);
            }
            6 => {
                let pw = rng.range(2, 4);
                for _ in 0..pw {
                    l.set(x, h - 1, b'^');
                    x += 1;
                }
                flat(&mut l, &mut x, 3, top);
            }
            7 => {
                // Crumbling stepping stones over a wide pit.
                let n = rng.range(2, 3);
                for i in 0..n * 4 + 3 {
                    l.set(x + i, h - 1, b'^');
                }
                for i in 0..n {
                    l.fill(x + 2 + i * 4, top, x + 3 + i * 4, top, b'~');
                }
                x += n * 4 + 3;
                flat(&mut l, &mut x, 3, top);
            }
            _ => {
                flat(&mut l, &mut x, 8, top);
                l.ent(format!(
                    "walker {} {} range=3 speed={} pause={}",
                    x - 4,
                    top - 1,
                    rng.range(2, 5),
                    rng.range(0, 40)
                ));
                flat(&mut l, &mut x, 2, top);
            }
        }
    }
    while x < w {
        l.ground(x, top, b'G');
        x += 1;
    }
    l.ent(format!("start 1 {}", start_top - 1));
    l.ent(format!("nest {} {}", w - 2, top - 1));
    l
}

/// Deceptive bridges, less regular: the nest lies just past a spike pit no jump clears (9-13
/// tiles); a first pit that takes the egg boost (`island`), a decoy ladder before the pit that
/// ends out of reach of the bridge, and the real way: back to a ladder at the far left, up, and
/// along a bridge of short crumbling and one-way ledges `high` rows up.
fn decoy_bridge(rng: &mut Rng, pit: i32, high: i32, island: bool, delay: i32) -> Level {
    let h = high + 10;
    let floor = h - 2;
    let p1 = if island { rng.range(5, 6) } else { 0 };
    let ix = 24;
    let px = ix + p1 + if island { rng.range(8, 12) } else { 0 };
    let w = px + pit + 10;
    let mut l = Level::new(w, h);
    l.defaults.push(format!("crumbling delay={delay}"));
    for x in 0..w {
        let in_pit = (x >= px && x < px + pit) || (island && x >= ix && x < ix + p1);
        if in_pit {
            l.set(x, h - 1, b'^');
        } else {
            l.ground(x, floor, b'G');
        }
    }
    let mut y = floor;
    let mut i = 0;
    while y - 3 > floor - high {
        y -= 3;
        let x = if i % 2 == 0 { 1 } else { 5 };
        l.fill(x, y, x + 2, y, b'-');
        i += 1;
    }
    // The decoy: a ladder a few tiles before the big pit, ending seven rows under the bridge
    // (out of reach of a jump with the egg boost) and too far back to jump the pit from.
    let by = floor - high;
    let mut dy = floor;
    let mut j = 0;
    while dy - 3 >= by + 7 {
        dy -= 3;
        let x = if j % 2 == 0 { px - 6 } else { px - 9 };
        l.fill(x, dy, x + 2, dy, b'-');
        j += 1;
    }
    let mut x = 2;
    while x < px + pit + 2 {
        let len = rng.range(2, 4);
        let c = if rng.range(0, 2) == 0 { b'~' } else { b'-' };
        l.fill(x, by, x + len - 1, by, c);
        x += len + rng.range(1, 3);
    }
    l.ent(format!("start {} {}", ix - 4, floor - 1));
    l.ent(format!("nest {} {}", w - 3, floor - 1));
    l
}

/// Lifts under rock-falls: a shaft of lifts whose shelves each lie under a rock-fall with a
/// large `jitter`, then a corridor with two or three more and small spike pits.
fn rock_lifts(rng: &mut Rng, rises: &[i32], jitter: i32) -> Level {
    let seg = 10;
    let w = 4 + rises.len() as i32 * seg + 22;
    let h = rises.iter().sum::<i32>() + 12;
    let mut l = Level::new(w, h);
    let mut y = h - 2;
    for x in 0..4 {
        l.ground(x, y, b'G');
    }
    let mut x = 4;
    for &rise in rises {
        for c in x..x + 3 {
            l.set(c, h - 1, b'^');
        }
        let speed = rng.range(2, 4);
        if rng.range(0, 1) == 0 {
            l.ent(format!(
                "platform {x} {y} dx=0 dy=-{rise} speed={speed} width=3"
            ));
        } else {
            l.ent(format!(
                "platform {x} {} dx=0 dy={rise} speed={speed} width=3",
                y - rise
            ));
        }
        y -= rise;
        l.fill(x + 3, y, x + seg - 1, y, b'#');
        l.ent(format!(
            "rockfall {} {} interval={} jitter={jitter} offset={}",
            x + 6,
            (y - 5).max(0),
            rng.range(40, 90),
            rng.range(0, 90)
        ));
        x += seg;
    }
    l.fill(x, y, w - 1, y, b'#');
    l.fill(x - 7, y - 6, w - 1, y - 6, b'#');
    let mut c = x + 2;
    while c < w - 6 {
        l.ent(format!(
            "rockfall {c} {} interval={} jitter={jitter} offset={}",
            y - 5,
            rng.range(40, 80),
            rng.range(0, 60)
        ));
        let pit = rng.range(1, 2);
        for p in c + 2..c + 2 + pit {
            l.set(p, y, b'.');
        }
        l.fill(c + 2, y + 1, c + 1 + pit, y + 1, b'^');
        c += rng.range(6, 8);
    }
    l.ent(format!("start 1 {}", h - 3));
    l.ent(format!("nest {} {}", w - 2, y - 1));
    l
}

/// A jackdaw climb: a shaft of a given width with ledges three rows apart, crumbling now and
/// then, and rises of six rows past a jackdaw, some flying across (`h`) and some up and down
/// (`v`) beside the ledge, with long pauses: stomp it and boost up.
fn jackdaw_climb(rng: &mut Rng, sections: i32, speed: i32, w: i32, delay: i32) -> Level {
    let h = (sections * 15 + 10).min(128);
    let floor = h - 2;
    let mut l = Level::new(w, h);
    l.defaults.push(format!("crumbling delay={delay}"));
    l.fill(0, 0, 0, h - 1, b'#');
    l.fill(w - 1, 0, w - 1, h - 1, b'#');
    for x in 1..w - 1 {
        l.ground(x, floor, b'G');
    }
    let (mut y, mut x, mut width) = (floor, rng.range(4, w / 2), 6);
    for s in 0..sections {
        for k in 0..rng.range(2, 3) {
            y -= 3;
            let shift = rng.range(-(width + 1), width + 1);
            width = rng.range(4, 6);
            x = (x + shift).clamp(1, w - 1 - width);
            let c = if (s + k) % 3 == 2 { b'~' } else { b'-' };
            l.fill(x, y, x + width - 1, y, c);
        }
        if rng.range(0, 1) == 0 {
            let range = rng.range(3, 6).min((w - 4) / 2);
            let fx = (x + width / 2).clamp(1 + range, w - 2 - range);
            l.ent(format!(
                "flyer {fx} {} axis=h range={range} speed={speed} pause={}",
                y - 3,
                rng.range(0, 90)
            ));
        } else {
            // Up and down beside the ledge, between one and five rows above it.
            let fx = if x + width < w - 2 { x + width } else { x - 1 };
            l.ent(format!(
                "flyer {fx} {} axis=v range=2 speed={speed} pause={}",
                y - 3,
                rng.range(0, 90)
            ));
        }
        y -= 6;
        let shift = rng.range(-2, 2);
        width = rng.range(5, 7);
        x = (x + shift).clamp(1, w - 1 - width);
        l.fill(x, y, x + width - 1, y, b'-');
    }
    l.ent(format!("start 2 {}", floor - 1));
    l.ent(format!("nest {} {}", x + width / 2, y - 1));
    l
}

/// The seed of the second stream of issue 27's classes (the harder variants).
const ISSUE27B_SEED: u64 = 0x6973_7375_652d_3262;

/// The harder variants of issue 27's classes from `rng`.
fn issue27b(rng: &mut Rng, put: &mut impl FnMut(&str, &str, Level)) {
    for (i, (n, d, w)) in [(30, 30, 18), (36, 24, 32), (40, 40, 22)]
        .iter()
        .enumerate()
    {
        let l = mixed_tower(rng, *n, *d, *w);
        put(&format!("t4-mixed-tower-{:02}", i + 1), &format!("Tier 4: a tower {w} wide and {} rows high: one-way, crumbling (delay {d}) and icy ledges, springs, lifts beside ledges, decoy ledges.", l.h), l);
    }
    for (i, (n, w, j)) in [(5, 20, 60), (7, 28, 120), (9, 24, 200)].iter().enumerate() {
        let l = lift_tower(rng, *n, *w, *j);
        put(&format!("t4-lift-tower-{:02}", i + 1), &format!("Tier 4: a tower of up to {n} lifts ({w} wide, speeds 1-4, some waiting at the top) between shelves, a rock-fall with jitter {j} at the summit."), l);
    }
    for (i, (a, b, s)) in [(24, 20, 2), (30, 26, 1), (32, 32, 1)].iter().enumerate() {
        let l = cable_car(rng, *a, *b, *s);
        put(&format!("t4-cable-car-{:02}", i + 1), &format!("Tier 4: a cable car: a platform {a} tiles long (speed {s}) that starts at the far end, an island with a marmot, a second of {b} tiles; both paths rise or fall."), l);
    }
    for (i, (w, d)) in [(300, 40), (400, 30), (500, 50)].iter().enumerate() {
        let l = massif(rng, *w, *d);
        put(&format!("t4-massif-{:02}", i + 1), &format!("Tier 4: a long level across a massif, {w} tiles: steps, boosts, cliffs climbed on ledges in front of them, pits, crumbling stones (delay {d}), marmots."), l);
    }
    for (i, (p, hh, isl, d)) in [(9, 8, true, 40), (12, 10, false, 30), (13, 11, true, 60)]
        .iter()
        .enumerate()
    {
        let l = decoy_bridge(rng, *p, *hh, *isl, *d);
        put(&format!("t4-decoy-bridge-{:02}", i + 1), &format!("Tier 4: the nest just past a {p}-tile spike pit no jump clears; a decoy ladder before it ends out of reach of the bridge; the way is back to the far left and over a bridge {hh} rows up of one-way and crumbling (delay {d}) ledges."), l);
    }
    for (i, (rises, j)) in [
        (vec![10, 18], 150),
        (vec![16, 8, 14], 240),
        (vec![20, 20, 12], 400),
    ]
    .iter()
    .enumerate()
    {
        let l = rock_lifts(rng, rises, *j);
        put(&format!("t4-rock-lifts-{:02}", i + 1), &format!("Tier 4: lifts rising {rises:?} rows to shelves under rock-falls with jitter {j}, then a corridor under more rock-falls with spike pits."), l);
    }
    for (i, (n, s, w, d)) in [(3, 2, 18, 40), (4, 1, 28, 30), (5, 3, 22, 50)]
        .iter()
        .enumerate()
    {
        let l = jackdaw_climb(rng, *n, *s, *w, *d);
        put(&format!("t4-jackdaw-climb-{:02}", i + 1), &format!("Tier 4: a shaft {w} wide with {n} rises of six rows, each past a jackdaw (speed {s}; across or up and down, long pauses): stomp it and boost; some ledges crumble (delay {d})."), l);
    }
}

const USAGE: &str = "usage: gen_corpus [OUT_DIR] [--heldout SEED]";

/// The output directory (the first argument that is not an option or an option's value)
/// and the held-out seed. Anything else is refused, so a mistyped flag never becomes a
/// directory full of levels.
fn parse_args(args: &[String]) -> Result<(Option<PathBuf>, Option<u64>), String> {
    let (mut out, mut heldout) = (None, None);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--heldout" => {
                let seed = it
                    .next()
                    .ok_or("--heldout needs a seed (a number)")?
                    .parse()
                    .map_err(|_| "--heldout SEED: the seed must be a whole number")?;
                heldout = Some(seed);
            }
            "-h" | "--help" => return Err(USAGE.into()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}; {USAGE}")),
            dir if out.is_none() => out = Some(PathBuf::from(dir)),
            extra => {
                return Err(format!(
                    "one output directory only (got {extra} too); {USAGE}"
                ))
            }
        }
    }
    Ok((out, heldout))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, heldout) = parse_args(&args).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let out =
        out.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../levels/corpus"));
    std::fs::create_dir_all(&out).unwrap();
    if let Some(seed) = heldout {
        // A held-out set: issue 27's classes from another seed, for the benchmark only.
        let mut files = Vec::new();
        issue27(
            &mut Rng(horst_engine::SplitMix64::from_state(seed)),
            &mut |name: &str, comment: &str, l: Level| {
                files.push((name.to_string(), l.text(comment, &name.replace('-', " "))));
            },
        );
        issue27b(
            &mut Rng(horst_engine::SplitMix64::from_state(seed ^ ISSUE27B_SEED)),
            &mut |name: &str, comment: &str, l: Level| {
                files.push((name.to_string(), l.text(comment, &name.replace('-', " "))));
            },
        );
        for (name, text) in &files {
            std::fs::write(out.join(format!("{name}.map")), text).unwrap();
        }
        println!("wrote {} held-out levels to {}", files.len(), out.display());
        return;
    }
    let mut rng = Rng(horst_engine::SplitMix64::from_state(0x6376_2d63_6f72_7075));
    let mut files: Vec<(String, String)> = Vec::new();
    let mut put = |name: &str, comment: &str, l: Level| {
        let title = name.replace('-', " ");
        files.push((name.to_string(), l.text(comment, &title)));
    };
    // Tier 1.
    for (i, ws) in [[1, 2, 1], [2, 2, 3], [1, 3, 2], [3, 3, 3]]
        .iter()
        .enumerate()
    {
        let l = pits(&mut rng, ws, b'G');
        put(
            &format!("t1-pits-{:02}", i + 1),
            &format!("Tier 1: spike pits {ws:?} wide; hop over them."),
            l,
        );
    }
    for (i, st) in [
        vec![1, 1, 2],
        vec![2, 1, 2, 2],
        vec![2, -1, 2, 2, -2, 2],
        vec![1, 2, 2, 2, 1],
    ]
    .iter()
    .enumerate()
    {
        let l = stairs(&mut rng, st, b'G');
        put(
            &format!("t1-stairs-{:02}", i + 1),
            &format!("Tier 1: steps {st:?} tiles high."),
            l,
        );
    }
    // Tier 2.
    for (i, hs) in [vec![4], vec![3, 4], vec![4, 5], vec![5]]
        .iter()
        .enumerate()
    {
        let l = walls(&mut rng, hs);
        put(&format!("t2-eggboost-{:02}", i + 1), &format!("Tier 2: walls {hs:?} tiles high; 4 and 5 need the egg boost (jump, release, press again)."), l);
    }
    for (i, (n, t)) in [(1, 1), (2, 1), (3, 2)].iter().enumerate() {
        let l = cracked(&mut rng, *n, *t);
        put(
            &format!("t2-shoot-{:02}", i + 1),
            &format!("Tier 2: {n} cracked walls {t} thick under a low ceiling; shoot them away."),
            l,
        );
    }
    for (i, (n, s)) in [(2, 3), (3, 4), (4, 5)].iter().enumerate() {
        let l = marmots(&mut rng, *n, *s);
        put(
            &format!("t2-marmots-{:02}", i + 1),
            &format!("Tier 2: {n} marmots (speed {s}); stomp or jump over them."),
            l,
        );
    }
    for (i, ws) in [[2, 2], [2, 3], [3, 3]].iter().enumerate() {
        let l = pits(&mut rng, ws, b'I');
        put(
            &format!("t2-ice-{:02}", i + 1),
            &format!("Tier 2: spike pits {ws:?} wide on ice; slippery take-off and landing."),
            l,
        );
    }
    for (i, wall) in [6, 9].iter().enumerate() {
        let l = spring(&mut rng, *wall);
        put(
            &format!("t2-spring-{:02}", i + 1),
            &format!("Tier 2: a wall {wall} tiles high; use the spring."),
            l,
        );
    }
    for (i, st) in [vec![3, 3, 3], vec![3, -2, 3, 3]].iter().enumerate() {
        let l = stairs(&mut rng, st, b'S');
        put(
            &format!("t2-snow-{:02}", i + 1),
            &format!("Tier 2: snow steps {st:?} high; snow halves the speed."),
            l,
        );
    }
    // Tier 3.
    for (i, (n, d)) in [(3, 30), (4, 20), (5, 15)].iter().enumerate() {
        let l = crumble(&mut rng, *n, *d);
        put(
            &format!("t3-crumble-{:02}", i + 1),
            &format!("Tier 3: {n} crumbling ledges over spikes, falling {d} ticks after landing."),
            l,
        );
    }
    for (i, (n, iv)) in [(3, 60), (4, 45), (5, 40)].iter().enumerate() {
        let l = rockfall(&mut rng, *n, *iv);
        put(
            &format!("t3-rockfall-{:02}", i + 1),
            &format!(
                "Tier 3: {n} rock-fall spawners about every {iv} ticks; wait for gaps or shoot."
            ),
            l,
        );
    }
    for (i, (n, s)) in [(1, 8), (2, 8), (2, 6)].iter().enumerate() {
        let l = platforms(&mut rng, *n, *s);
        put(
            &format!("t3-platform-{:02}", i + 1),
            &format!("Tier 3: a gorge crossed on {n} moving platform(s) (speed {s})."),
            l,
        );
    }
    for (i, st) in [vec![4, 4, 4], vec![4, -3, 5, 4]].iter().enumerate() {
        let l = stairs(&mut rng, st, b'G');
        put(
            &format!("t3-boost-stairs-{:02}", i + 1),
            &format!("Tier 3: steps {st:?} high; every 4 or 5 needs the egg boost."),
            l,
        );
    }
    for (i, t) in [2, 3].iter().enumerate() {
        let l = mountain(&mut rng, *t);
        put(&format!("t3-mountain-{:02}", i + 1), &format!("Tier 3: the nest is on a cliff right above the start; climb the ledges on the far side and come back over the top ({t} tiers)."), l);
    }
    // Tier 4: longer combinations.
    {
        let mut l = pits(&mut rng, &[3, 4, 3, 4, 3, 4], b'I');
        l.ent("walker 20 7 range=2 speed=4 pause=10".into());
        put(
            "t4-icepits-marmot-01",
            "Tier 4: six wide spike pits on ice and a marmot.",
            l,
        );
        let mut l = walls(&mut rng, &[4, 5, 4, 5]);
        let h = l.h;
        l.ent(format!("rockfall 12 {} interval=50 jitter=20", 0));
        let _ = h;
        put(
            "t4-boost-rockfall-01",
            "Tier 4: four walls needing the egg boost under falling rocks.",
            l,
        );
        let l = mountain(&mut rng, 4);
        put("t4-mountain-01", "Tier 4: a tall mountain: the nest is four tiers above the start, reached over ledges on the far side.", l);
        let l = crumble(&mut rng, 7, 12);
        put(
            "t4-crumble-01",
            "Tier 4: seven crumbling ledges that fall 12 ticks after landing.",
            l,
        );
        let l = platforms(&mut rng, 3, 7);
        put(
            "t4-platform-01",
            "Tier 4: three moving platforms in a row over a gorge.",
            l,
        );
        let mut l = cracked(&mut rng, 4, 2);
        l.ent("walker 20 5 range=2 speed=3 pause=20".into());
        put(
            "t4-shoot-marmot-01",
            "Tier 4: four thick cracked walls and a marmot in a low corridor.",
            l,
        );
        use Seg::*;
        let gauntlets: [(&str, &[Seg], i32); 5] = [
            (
                "t4-gauntlet-01",
                &[
                    Pit(3),
                    Step(-2),
                    Marmot,
                    Crumble(3),
                    Step(-4),
                    Rock,
                    Pit(4),
                    Flat(3),
                ],
                16,
            ),
            (
                "t4-gauntlet-02",
                &[
                    Step(-3),
                    Pit(4),
                    Step(-5),
                    Platform,
                    Flat(3),
                    Marmot,
                    Step(3),
                    Crumble(4),
                    Flat(2),
                ],
                18,
            ),
            (
                "t4-gauntlet-03",
                &[
                    Spring(8),
                    Rock,
                    Pit(3),
                    Step(2),
                    Crumble(2),
                    Marmot,
                    Step(-5),
                    Platform,
                    Rock,
                    Flat(2),
                ],
                20,
            ),
            (
                "t4-gauntlet-04",
                &[
                    Crumble(3),
                    Step(-4),
                    Step(-4),
                    Rock,
                    Rock,
                    Marmot,
                    Pit(5),
                    Step(-5),
                    Platform,
                    Crumble(2),
                    Flat(3),
                ],
                24,
            ),
            (
                "t4-gauntlet-05",
                &[
                    Marmot,
                    Marmot,
                    Step(-5),
                    Pit(4),
                    Step(-5),
                    Spring(7),
                    Platform,
                    Platform,
                    Rock,
                    Crumble(4),
                    Step(-4),
                    Flat(3),
                ],
                30,
            ),
        ];
        // Their own generator, so the levels before and after them stay as they were.
        let mut grng = Rng(horst_engine::SplitMix64::from_state(0x6761_756e_746c_6574));
        for (name, segs, h) in gauntlets {
            let l = gauntlet(&mut grng, segs, h);
            put(name, "Tier 4: a long gauntlet: spike pits, high steps that need the egg boost, marmots, crumbling ledges, falling rocks, moving platforms and springs in a row.", l);
        }
    }
    // Unsolvable.
    {
        let mut l = pits(&mut rng, &[2], b'G');
        let (nx, ny) = (l.w - 2, 7);
        l.fill(nx - 1, ny - 1, nx + 1, ny + 1, b'#');
        l.set(nx, ny, b'.');
        put(
            "u-sealed-01",
            "Unsolvable: the nest is sealed in a box of solid rock.",
            l,
        );
        let mut l = Level::new(30, 12);
        for x in 0..30 {
            l.ground(x, 10, b'G');
        }
        l.fill(15, 0, 15, 9, b'#');
        l.ent("start 1 9".into());
        l.ent("nest 28 9".into());
        put("u-wall-01", "Unsolvable: a rock wall from the top of the map to the ground; the bird cannot pass over it (it would need to rise 10 tiles).", l);
        let mut l = Level::new(20, 14);
        for x in 0..20 {
            l.ground(x, 12, b'G');
        }
        l.ent("start 2 11".into());
        l.ent("nest 10 3".into());
        put("u-high-nest-01", "Unsolvable: the nest floats 8 tiles above the ground; a jump with the egg boost rises 5.2.", l);
        let mut l = Level::new(20, 14);
        for x in 0..20 {
            l.ground(x, 12, b'G');
        }
        l.ent("start 2 11".into());
        l.ent("nest 10 4".into());
        put("u-high-nest-02", "Unsolvable: the nest floats 7 tiles above the ground; jump plus egg boost lifts the bird's head about 6.1 tiles, so it never touches the nest tile.", l);
        let l = {
            let mut l = Level::new(24, 10);
            for x in 0..24 {
                l.ground(x, 8, b'G');
            }
            for x in 5..18 {
                l.set(x, 8, b'.');
                l.set(x, 9, b'^');
            }
            l.ent("start 1 7".into());
            l.ent("nest 22 7".into());
            l
        };
        put("u-wide-pit-01", "Unsolvable: a spike pit 13 tiles wide; a running jump with the egg boost carries about 8.", l);
        let l = {
            let mut l = Level::new(24, 10);
            for x in 0..24 {
                l.ground(x, 8, b'G');
            }
            l.fill(12, 8, 12, 8, b'C');
            l.fill(11, 8, 11, 9, b'#');
            l.fill(13, 8, 13, 9, b'#');
            l.set(12, 9, b'.');
            l.fill(0, 9, 10, 9, b'E');
            l.fill(14, 9, 23, 9, b'E');
            l.ent("start 1 7".into());
            l.ent("nest 12 9".into());
            l
        };
        put("u-cracked-lid-01", "Unsolvable: the nest lies in a hole under cracked rock; pebbles fly only sideways, so the lid never breaks.", l);
        let mut l = spring(&mut rng, 10);
        l.ents.retain(|e| !e.starts_with("spring"));
        let h = l.h;
        l.ent(format!("spring 12 {} strength=4", h - 3));
        put("u-weak-spring-01", "Unsolvable: a wall 10 tiles high and a spring of strength 4 (4 tiles plus the egg boost's 2 is not 10).", l);
        let l = {
            let mut l = Level::new(30, 12);
            l.fill(0, 8, 3, 8, b'G');
            l.fill(0, 9, 3, 11, b'E');
            l.fill(26, 8, 29, 8, b'G');
            l.fill(26, 9, 29, 11, b'E');
            l.ent("start 1 7".into());
            l.ent("platform 4 8 dx=4 speed=6 width=2".into());
            l.ent("nest 28 7".into());
            l
        };
        put("u-short-platform-01", "Unsolvable: the moving platform turns back 16 tiles before the far side of the gorge; no jump carries that far.", l);
        let l = {
            let mut l = Level::new(26, 10);
            l.fill(0, 5, 4, 5, b'G');
            l.fill(0, 6, 4, 9, b'E');
            l.fill(16, 5, 25, 5, b'G');
            l.fill(16, 6, 25, 9, b'E');
            l.fill(5, 9, 15, 9, b'^');
            l.ent("start 2 4".into());
            l.ent("nest 17 4".into());
            l
        };
        put("u-far-pillar-01", "Unsolvable: the far pillar is 11 tiles away at the same height over spikes; the longest jump (with the egg boost) is about 8.", l);
        let l = {
            let mut l = Level::new(24, 14);
            for x in 0..24 {
                l.ground(x, 6, b'G');
            }
            l.fill(12, 6, 12, 11, b'.');
            l.fill(12, 7, 12, 9, b'^');
            l.ent("start 1 5".into());
            l.ent("nest 12 11".into());
            l
        };
        put("u-spike-shaft-01", "Unsolvable: the nest lies at the bottom of a one-tile shaft lined with three spike tiles; falling through them always kills first.", l);
        let l = {
            let mut l = Level::new(20, 12);
            for x in 0..20 {
                l.ground(x, 10, b'G');
            }
            l.fill(9, 0, 19, 9, b'#');
            l.fill(14, 4, 16, 6, b'.');
            l.ent("start 1 9".into());
            l.ent("nest 15 5".into());
            l
        };
        put(
            "u-cave-01",
            "Unsolvable: the nest is in a cave inside the rock with no opening.",
            l,
        );
        let l = {
            let mut l = Level::new(160, 14);
            for x in 0..160 {
                l.ground(x, 12, b'G');
            }
            l.ent("start 2 11".into());
            for i in 0..8 {
                l.ent(format!(
                    "walker {} 11 range=3 speed={} pause=20",
                    12 + i * 18,
                    2 + i % 3
                ));
            }
            for i in 0..4 {
                l.ent(format!(
                    "flyer {} 6 axis=h range=4 speed=3 pause=10",
                    30 + i * 30
                ));
            }
            l.ent("nest 150 4".into());
            l
        };
        put(
            "u-high-field-01",
            "Unsolvable: a wide field with marmots and jackdaws; the nest floats 7 tiles above the ground (jump plus egg boost lifts the bird's head about 6.1 tiles), the jackdaws fly too high to be stomped (the feet would have to get 6 tiles up) and more than 25 tiles from the nest.",
            l,
        );
        let l = {
            let mut l = Level::new(160, 14);
            for x in 0..160 {
                l.ground(x, 12, b'G');
            }
            l.fill(140, 0, 159, 11, b'#');
            l.fill(140, 11, 151, 11, b'^');
            l.set(152, 11, b'.');
            l.ent("start 2 11".into());
            for i in 0..8 {
                l.ent(format!(
                    "walker {} 11 range=3 speed={} pause=20",
                    12 + i * 16,
                    2 + i % 3
                ));
            }
            for i in 0..4 {
                l.ent(format!(
                    "flyer {} 6 axis=h range=4 speed=3 pause=10",
                    30 + i * 30
                ));
            }
            l.ent("nest 152 11".into());
            l
        };
        put(
            "u-spike-tunnel-01",
            "Unsolvable: after a wide field with marmots and jackdaws, the nest lies at the end of a tunnel through the rock, one tile high and floored with 12 spike tiles; the bird (14 px tall) cannot pass a spike tile without touching its 10 px hitbox, and the rock is 12 tiles high. Neither fast proof applies (the relaxed graph treats spikes as open, the jump envelope ignores walls) and the enemies keep the search from exhausting its space.",
            l,
        );
        let l = {
            let mut l = Level::new(160, 14);
            for x in 0..160 {
                l.ground(x, 12, b'G');
            }
            l.fill(150, 12, 150, 12, b'C');
            l.fill(148, 11, 149, 11, b'#');
            l.fill(148, 12, 148, 13, b'#');
            l.set(149, 12, b'.');
            l.set(149, 13, b'#');
            l.fill(151, 12, 151, 13, b'#');
            l.set(150, 13, b'.');
            l.ent("start 2 11".into());
            for i in 0..8 {
                l.ent(format!(
                    "walker {} 11 range=3 speed={} pause=20",
                    12 + i * 16,
                    2 + i % 3
                ));
            }
            for i in 0..4 {
                l.ent(format!(
                    "flyer {} 6 axis=h range=4 speed=3 pause=10",
                    30 + i * 30
                ));
            }
            l.ent("nest 150 13".into());
            l
        };
        put(
            "u-cracked-field-01",
            "Unsolvable: after a wide field with marmots and jackdaws, the nest lies in a hole under cracked rock; pebbles fly only sideways, and the only open tile beside the lid is a sealed pocket in the rock, so the lid never breaks. The relaxed tile graph proves it: it opens cracked rock only where a pebble fired from a tile the bird reaches can hit it.",
            l,
        );
    }

    // The classes of issue 13, from a generator of their own so the levels above stay as they
    // were.
    let mut rng = Rng(horst_engine::SplitMix64::from_state(0x6973_7375_652d_3133));
    for (i, (d, s)) in [(24, 5), (28, 6), (30, 6), (32, 7), (31, 8)]
        .iter()
        .enumerate()
    {
        let l = far_platform(&mut rng, *d, *s);
        put(&format!("t3-far-platform-{:02}", i + 1), &format!("Tier 3: a platform {d} tiles away (speed {s}) comes over the gorge; wait for it, ride it back, jump across."), l);
    }
    for (i, (hh, s)) in [(18, 6), (21, 5), (23, 4), (24, 6)].iter().enumerate() {
        let l = lift(&mut rng, *hh, *s);
        put(&format!("t3-lift-{:02}", i + 1), &format!("Tier 3: a lift starts {hh} tiles above the bird (speed {s}), comes down into the shaft, and carries it up to the nest."), l);
    }
    for (i, len) in [14, 20, 26, 32].iter().enumerate() {
        let l = ferry(&mut rng, *len);
        put(
            &format!("t4-ferry-{:02}", i + 1),
            &format!(
                "Tier 4: a ride of {len} tiles on a speed-1 ferry (about {} s).",
                len * 128 / 60
            ),
            l,
        );
    }
    for (i, (r, s)) in [(10, 4), (12, 4), (14, 5), (16, 6)].iter().enumerate() {
        let l = flyer_beat(&mut rng, *r, *s);
        put(&format!("t3-flyer-beat-{:02}", i + 1), &format!("Tier 3: a cliff 6 tiles high; a jackdaw on a beat of {r} tiles (speed {s}) passes before it: stomp it and boost up."), l);
    }
    for (i, (n, s)) in [(4, 1), (5, 1), (5, 2), (6, 2)].iter().enumerate() {
        let l = flyer_ledges(&mut rng, *n, *s);
        put(&format!("t4-flyer-ledges-{:02}", i + 1), &format!("Tier 4: {n} one-way ledges beside a slow jackdaw (speed {s}), then a boosted running jump."), l);
    }
    for (i, (n, s)) in [(2, 2), (2, 1), (3, 2), (3, 3)].iter().enumerate() {
        let l = slow_lifts(&mut rng, *n, *s);
        put(
            &format!("t3-slow-lift-{:02}", i + 1),
            &format!("Tier 3: {n} walls 7 tiles high climbed on slow vertical lifts (speed {s})."),
            l,
        );
    }
    for (i, (p, hh)) in [(10, 8), (10, 9), (11, 9), (12, 10)].iter().enumerate() {
        let l = deceptive(&mut rng, *p, *hh);
        put(&format!("t4-deceptive-{:02}", i + 1), &format!("Tier 4: the nest is just past a {p}-tile spike pit no jump clears; the way is back left, up the ledges and over a bridge {hh} tiles up."), l);
    }
    for (i, n) in [36, 42, 48, 56].iter().enumerate() {
        let mut segs = Vec::new();
        let mut len = 0;
        while segs.len() < *n as usize {
            let seg = match rng.range(0, 7) {
                0 => Seg::Pit(rng.range(2, 3)),
                1 => Seg::Step(rng.range(-2, 2)),
                2 => Seg::Crumble(rng.range(1, 2)),
                3 => Seg::Marmot,
                4 => Seg::Rock,
                5 => Seg::Platform,
                6 => Seg::Spring(rng.range(3, 5)),
                _ => Seg::Flat(rng.range(2, 4)),
            };
            segs.push(seg);
            segs.push(Seg::Flat(2));
            len += 1;
        }
        let _ = len;
        let l = gauntlet(&mut rng, &segs, 16);
        put(
            &format!("t4-long-{:02}", i + 1),
            &format!("Tier 4: a long gauntlet of {} tiles.", l.w),
            l,
        );
    }

    // The classes of issue 27 (item 1), from a generator of their own.
    issue27(
        &mut Rng(horst_engine::SplitMix64::from_state(ISSUE27_SEED)),
        &mut put,
    );
    // Their harder variants (the second stream of issue 27), from a seed of their own again.
    issue27b(
        &mut Rng(horst_engine::SplitMix64::from_state(ISSUE27B_SEED)),
        &mut put,
    );
    for (name, text) in &files {
        let p = out.join(format!("{name}.map"));
        std::fs::write(&p, text).unwrap();
    }
    println!("wrote {} levels to {}", files.len(), out.display());
}
