//! A small best-first search that finds a winning replay for a level. It is a development aid
//! for writing the committed level replays, not the server's planner.
//!
//! cargo run --release -p horst-engine --example level_solve -- levels/NAME.map [seed] [max_nodes]

use horst_engine::physics::TILE;
use horst_engine::{parse_map, Block, Sim, Status};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: solve FILE [seed] [max_nodes]");
    let seed: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let max_nodes: usize = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000);
    let text = std::fs::read_to_string(path).expect("read map");
    let map = match parse_map(&text) {
        Ok(m) => m,
        Err(r) => {
            eprintln!("invalid map: {}", r.summary());
            std::process::exit(2);
        }
    };
    let (w, h) = (map.width(), map.height());
    // Distance in tiles from the nest over open tiles, 8-connected, gravity ignored.
    let mut dist = vec![i32::MAX; (w * h) as usize];
    let mut q = VecDeque::new();
    for &(x, y) in map.nests() {
        dist[(y * w + x) as usize] = 0;
        q.push_back((x, y));
    }
    let open = |x: i32, y: i32| {
        x >= 0
            && y >= 0
            && x < w
            && y < h
            && !matches!(map.tile(x, y), Some(b) if b.is_solid() && b != Block::Cracked)
    };
    while let Some((x, y)) = q.pop_front() {
        let d = dist[(y * w + x) as usize];
        for (dx, dy) in [
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1, 1),
            (1, -1),
            (-1, 1),
            (-1, -1),
        ] {
            let (nx, ny) = (x + dx, y + dy);
            if open(nx, ny) && dist[(ny * w + nx) as usize] == i32::MAX {
                dist[(ny * w + nx) as usize] = d + 1;
                q.push_back((nx, ny));
            }
        }
    }
    let hval = |s: &Sim| {
        let p = s.player();
        let tx = ((p.x + 6 * 256) / TILE).clamp(0, w - 1);
        let ty = ((p.y + 7 * 256) / TILE).clamp(0, h - 1);
        let d = dist[(ty * w + tx) as usize];
        if d == i32::MAX {
            1_000_000
        } else {
            d
        }
    };
    let actions: [u8; 14] = [8, 0, 4, 9, 1, 5, 16, 12, 17, 13, 10, 2, 11, 3];
    let holds: [u16; 4] = [3, 6, 12, 24];
    struct Node {
        parent: usize,
        action: u8,
        ticks: u16,
    }
    let mut nodes = vec![Node {
        parent: usize::MAX,
        action: 0,
        ticks: 0,
    }];
    let mut sims = vec![Some(Sim::new(&map, seed))];
    let mut heap = BinaryHeap::new();
    heap.push((Reverse(0i64), 0usize));
    let mut seen = HashSet::new();
    let weight: i64 = std::env::var("W")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let mut expanded = 0;
    while let Some((_, idx)) = heap.pop() {
        let Some(sim) = sims[idx].take() else {
            continue;
        };
        expanded += 1;
        if expanded > max_nodes {
            break;
        }
        for &a in &actions {
            for &t in &holds {
                let mut s = sim.clone();
                for _ in 0..t {
                    s.step(a);
                    if s.status() != Status::Running {
                        break;
                    }
                }
                if s.status() == Status::Dead {
                    continue;
                }
                nodes.push(Node {
                    parent: idx,
                    action: a,
                    ticks: t,
                });
                let id = nodes.len() - 1;
                if s.status() == Status::Won {
                    let mut steps = Vec::new();
                    let mut i = id;
                    while nodes[i].parent != usize::MAX {
                        steps.push((nodes[i].action, nodes[i].ticks));
                        i = nodes[i].parent;
                    }
                    steps.reverse();
                    let mut merged: Vec<(u8, u32)> = Vec::new();
                    for (a, t) in steps {
                        match merged.last_mut() {
                            Some(last) if last.0 == a && last.1 + t as u32 <= 600 => {
                                last.1 += t as u32
                            }
                            _ => merged.push((a, t as u32)),
                        }
                    }
                    let body: Vec<String> = merged
                        .iter()
                        .map(|(a, t)| format!("{{\"action\": {a}, \"ticks\": {t}}}"))
                        .collect();
                    println!("{{\"seed\": {seed}, \"actions\": [{}]}}", body.join(", "));
                    eprintln!("won at tick {} after {expanded} expansions", s.tick());
                    return;
                }
                let p = *s.player();
                let key = (
                    p.x >> 9,
                    p.y >> 9,
                    p.vx >> 7,
                    p.vy >> 8,
                    p.on_ground,
                    p.jump_held,
                    p.boost_available,
                    s.enemies().count(),
                    s.tick() / 64,
                );
                if !seen.insert(key) {
                    sims.push(None);
                    continue;
                }
                let f = s.tick() as i64 + weight * hval(&s) as i64;
                sims.push(Some(s));
                heap.push((Reverse(f), id));
            }
        }
    }
    eprintln!("no win found after {expanded} expansions");
    std::process::exit(1);
}
