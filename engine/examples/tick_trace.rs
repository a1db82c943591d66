//! Differential check for engine optimisations: runs every committed level and a set of
//! generated enemy-heavy maps with pseudo-random inputs, digests `state_bytes` after every
//! tick, and prints one digest per map plus a total. Two engine builds that print the same
//! lines behave identically on all of these runs, tick by tick.
//!
//! cargo run --release -p horst-engine --example tick_trace > before.txt   (then after, and diff)

use horst_engine::{parse_map, Sim, Status};
use std::path::PathBuf;

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// FNV-1a, 64 bit: only compared between two builds of this program.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// A generated map: terraces with gaps, spikes, cracked rock, crumbling ledges, ice and snow,
/// and many walkers, flyers, rockfalls and platforms with random parameters.
fn generated(seed: u64) -> String {
    let mut r = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1));
    let (w, h) = (24 + r.below(40) as usize, 10 + r.below(8) as usize);
    let mut grid = vec![vec![b'.'; w]; h];
    let mut ground = h - 3;
    let mut surface = vec![0usize; w];
    for x in 0..w {
        if r.below(6) == 0 {
            ground = (ground as i64 + r.below(3) as i64 - 1).clamp(4, h as i64 - 2) as usize;
        }
        surface[x] = ground;
        let gap = x > 2 && r.below(9) == 0;
        for (y, row) in grid.iter_mut().enumerate().skip(ground) {
            row[x] = if y == ground {
                if gap {
                    b'^'
                } else {
                    b"GGGGGEISC~#"[r.below(11) as usize]
                }
            } else {
                b'E'
            };
        }
        if r.below(7) == 0 && ground > 3 {
            grid[ground - 3][x] = b"-~C#"[r.below(4) as usize];
        }
    }
    grid[surface[1]][1] = b'G';
    let mut s = format!("gcv-map 1\nname: gen {seed}\nsize: {w} {h}\n");
    if r.below(2) == 0 {
        s.push_str(&format!("default: crumbling delay={}\n", 1 + r.below(60)));
    }
    s.push_str("grid:\n");
    for row in &grid {
        s.push_str(std::str::from_utf8(row).unwrap());
        s.push('\n');
    }
    s.push_str("entities:\n");
    s.push_str(&format!("start 1 {}\n", surface[1] - 1));
    s.push_str(&format!("nest {} {}\n", w - 2, surface[w - 2] - 1));
    for _ in 0..r.below(20) {
        let x = 2 + r.below(w as u64 - 3) as usize;
        s.push_str(&format!(
            "walker {x} {} range={} speed={} pause={} dir={}\n",
            surface[x] - 1,
            r.below(6),
            1 + r.below(16),
            r.below(40),
            ["left", "right"][r.below(2) as usize]
        ));
    }
    for _ in 0..r.below(12) {
        let x = 2 + r.below(w as u64 - 3) as usize;
        let y = r.below(surface[x] as u64) as usize;
        let axis = r.below(2) as usize;
        // The patrol stays inside the map (else the map is invalid).
        let fits = if axis == 0 {
            x.min(w - 1 - x)
        } else {
            y.min(h - 1 - y)
        };
        let range = (r.below(5) as usize).min(fits);
        s.push_str(&format!(
            "flyer {x} {y} axis={} range={range} speed={} pause={}\n",
            ["h", "v"][axis],
            1 + r.below(16),
            r.below(40)
        ));
    }
    for _ in 0..r.below(3) {
        let x = 2 + r.below(w as u64 - 3) as usize;
        s.push_str(&format!(
            "rockfall {x} 0 interval={} jitter={} offset={}\n",
            30 + r.below(100),
            r.below(30),
            r.below(60)
        ));
    }
    for _ in 0..r.below(3) {
        let x = 2 + r.below(w as u64 - 6) as usize;
        s.push_str(&format!(
            "platform {x} {} dx={} dy={} speed={}\n",
            surface[x].saturating_sub(3).max(1),
            r.below(4),
            r.below(3),
            1 + r.below(8)
        ));
    }
    for _ in 0..r.below(3) {
        let x = 2 + r.below(w as u64 - 3) as usize;
        s.push_str(&format!("spring {x} {}\n", surface[x] - 1));
    }
    for _ in 0..r.below(3) {
        let x = 2 + r.below(w as u64 - 3) as usize;
        s.push_str(&format!("collectible {x} {}\n", surface[x] - 1));
    }
    if r.below(2) == 0 {
        let x = 2 + r.below(w as u64 - 3) as usize;
        s.push_str(&format!("checkpoint {x} {}\n", surface[x] - 1));
    }
    s
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let mut maps: Vec<(String, String)> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("levels")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    names.sort();
    for p in names {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        maps.push((name, std::fs::read_to_string(&p).expect("level")));
    }
    let generated_count: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut skipped = 0;
    for seed in 0..generated_count {
        maps.push((format!("gen-{seed}"), generated(seed)));
    }
    let mut total = 0xcbf2_9ce4_8422_2325u64;
    let mut bytes = Vec::with_capacity(1024);
    for (name, text) in &maps {
        let Ok(map) = parse_map(text) else {
            skipped += 1;
            continue;
        };
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut r = XorShift(0x1234_5678 ^ text.len() as u64);
        let mut ticks = 0u64;
        // Run 0 stands still for a long time (enemies patrol undisturbed); the others press
        // random buttons.
        for run in 0..13u32 {
            let mut sim = Sim::new(&map, run * 7919);
            let mut action = 4u8;
            for _ in 0..if run == 0 { 6000 } else { 2400 } {
                if run > 0 && r.below(8) == 0 {
                    action = r.below(20) as u8;
                }
                sim.step(action);
                ticks += 1;
                bytes.clear();
                sim.state_bytes(&mut bytes);
                fnv(&mut h, &bytes);
                for e in sim.enemies() {
                    fnv(&mut h, &e.0.to_le_bytes());
                    fnv(&mut h, &e.1.to_le_bytes());
                }
                if sim.status() != Status::Running {
                    break;
                }
            }
        }
        fnv(&mut total, &h.to_le_bytes());
        println!("{name}: {h:016x} ({ticks} ticks)");
    }
    println!("skipped (invalid): {skipped}");
    println!("total: {total:016x}");
}
