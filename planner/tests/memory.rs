//! The planner's memory budget: the bytes it counts are the bytes it allocates, and a search
//! of the largest valid maps with a small budget ends `memory_limit` with the process's peak
//! RSS under its base plus the budget.

// Grids are written cell by cell: indices read clearer than iterator chains here.
#![allow(clippy::needless_range_loop)]

mod adversarial;

use adversarial::Rng;
use horst_engine::{parse_map, Map, Sim};
use horst_planner::{memory, plan, PlanRequest, UnresolvedReason};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Counts the bytes each thread asks for, so a test can see what one operation allocates.
struct Counting;

thread_local! {
    static ASKED: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ASKED.with(|a| a.set(a.get() + layout.size() as u64));
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn asked() -> u64 {
    ASKED.with(|a| a.get())
}

fn load(rel: &str) -> Map {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    parse_map(&text).unwrap_or_else(|r| panic!("{}: {}", p.display(), r.summary()))
}

/// A large valid map at the input limits: 512 x 128 tiles, 4,000 crumbling ledges in runs,
/// 128 jackdaws, 64 platforms, 32 rock-falls, berries, over a floor, and a nest no search
/// reaches nor proof rules out.
pub fn huge_map(seed: u64) -> String {
    let (w, h) = (512usize, 128usize);
    let mut rng = Rng::new(0x6d656d, seed);
    let mut next = move |n: u64| rng.next(n);
    let mut grid = vec![vec![b'.'; w]; h];
    for x in 0..w {
        grid[h - 1][x] = b'E';
        grid[h - 2][x] = b'G';
    }
    // The nest at the end of a corridor one tile high over a pit of spikes 7 wide: the ceiling
    // leaves no room to jump it, but neither proof sees that (one lets the bird drift, the
    // other ignores walls), so the search goes on until something stops it.
    for x in w - 40..w {
        grid[h - 4][x] = b'#';
        grid[h - 5][x] = b'#';
    }
    for x in w - 30..w - 23 {
        grid[h - 2][x] = b'.';
        grid[h - 1][x] = b'^';
    }
    // Crumbling ledges: runs of 8 on every fourth row, until 4,000 tiles.
    let mut dyn_tiles = 0;
    'rows: for y in (8..h - 6).step_by(4) {
        for x0 in (4..w - 12).step_by(12) {
            let x0 = x0 + next(3) as usize;
            for x in x0..x0 + 8 {
                grid[y][x] = b'~';
                dyn_tiles += 1;
                if dyn_tiles >= 4000 {
                    break 'rows;
                }
            }
        }
    }
    let free = |grid: &Vec<Vec<u8>>, x: usize, y: usize| grid[y][x] == b'.';
    let mut ents: Vec<String> = Vec::new();
    let mut placed = std::collections::HashSet::new();
    placed.insert((1, h - 3));
    placed.insert((w - 2, h - 3));
    // `count` entities, each at a free place `pick` draws (with its line), none on another.
    type Pick<'a> = &'a mut dyn FnMut(usize) -> Option<(usize, usize, String)>;
    let mut place = |count: usize, pick: Pick| {
        let mut n = 0;
        while n < count {
            if let Some((x, y, line)) = pick(n) {
                if placed.insert((x, y)) {
                    ents.push(line);
                    n += 1;
                }
            }
        }
    };
    place(128, &mut |n| {
        let (x, y) = (
            4 + next(w as u64 - 8) as usize,
            6 + next(h as u64 - 14) as usize,
        );
        let line = format!(
            "flyer {x} {y} axis={} range=3 speed={}",
            ["h", "v"][n % 2],
            1 + next(8)
        );
        free(&grid, x, y).then_some((x, y, line))
    });
    place(64, &mut |_| {
        let (x, y) = (
            4 + next(w as u64 - 24) as usize,
            10 + next(h as u64 - 24) as usize,
        );
        let (dx, dy) = (next(9), next(9) as i64 - 4);
        Some((
            x,
            y,
            format!("platform {x} {y} dx={dx} dy={dy} speed=2 width=3"),
        ))
    });
    place(32, &mut |_| {
        let x = 8 + next(w as u64 - 16) as usize;
        free(&grid, x, 0).then_some((x, 0, format!("rockfall {x} 0 interval=200")))
    });
    place(100, &mut |_| {
        let (x, y) = (
            2 + next(w as u64 - 4) as usize,
            2 + next(h as u64 - 6) as usize,
        );
        free(&grid, x, y).then_some((x, y, format!("collectible {x} {y}")))
    });
    let level = adversarial::Level {
        w,
        h,
        grid,
        ents,
        header: vec!["default: crumbling delay=36".into()],
        start: (1, h - 3),
    };
    level.text((w as i32 - 2, h as i32 - 3))
}

/// The account's bytes for one simulation are what cloning one into a box asks for, on maps
/// with every kind of thing a simulation carries (dynamic tiles, walkers, flyers, platforms,
/// rock-falls, berries), so a change to the engine's layout fails here.
#[test]
fn a_simulation_takes_the_bytes_the_account_says() {
    let huge = parse_map(&huge_map(7)).unwrap();
    let mut maps = vec![huge];
    for name in [
        "levels/01-erste-schritte.map",
        "levels/07-rissiger-fels.map",
        "levels/11-steinschlag.map",
        "levels/14-gipfelsturm.map",
        "levels/15-sechzehn-feinde.map",
    ] {
        maps.push(load(name));
    }
    for map in &maps {
        let sim = Sim::new(map, 1);
        let before = asked();
        let copy = Box::new(sim.clone());
        let bytes = asked() - before;
        drop(copy);
        assert_eq!(bytes, memory::sim_bytes(map), "{}", map.name());
    }
}

/// The child's side of `a_search_stays_within_its_memory_budget`: plans the huge map with the
/// budget from the environment and prints its peak RSS before and after.
#[test]
#[ignore = "run by a_search_stays_within_its_memory_budget in a process of its own"]
fn child_plans_the_huge_map() {
    let Ok(budget) = std::env::var("PLANNER_MEMORY_CHILD") else {
        return;
    };
    let budget: u64 = budget.parse().unwrap();
    let map = parse_map(&huge_map(11)).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let base = hwm_kib();
    let cancel = AtomicBool::new(false);
    let req = PlanRequest {
        map: &map,
        seed: 1,
        time_limit: Duration::from_secs(240),
        cancel: &cancel,
        memory_budget_bytes: Some(budget),
    };
    let rep = pool.install(|| plan(&req, None));
    println!(
        "RESULT reason={:?} base_kib={} peak_kib={} counted={} expanded={}",
        rep.reason(),
        base,
        hwm_kib(),
        rep.peak_bytes,
        rep.expanded
    );
}

fn hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// The huge map with a 32 MiB budget ends `memory_limit` (not the time limit, not a proof) and
/// the process's peak RSS grows by less than the budget plus a margin for the allocator and
/// the map's own static data.
#[test]
fn a_search_stays_within_its_memory_budget() {
    let budget: u64 = 32 << 20;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_plans_the_huge_map",
            "--ignored",
            "--nocapture",
        ])
        .env("PLANNER_MEMORY_CHILD", budget.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .unwrap_or_else(|| panic!("no result: {text}"));
    let field = |k: &str| -> String {
        line.split(' ')
            .find_map(|f| f.strip_prefix(&format!("{k}=")))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        field("reason"),
        format!("{:?}", Some(UnresolvedReason::MemoryLimit)),
        "{line}"
    );
    let (base, peak): (u64, u64) = (
        field("base_kib").parse().unwrap(),
        field("peak_kib").parse().unwrap(),
    );
    let counted: u64 = field("counted").parse().unwrap();
    assert!(counted <= budget, "{line}");
    // The margin: the allocator's own overhead and what the map's level and the relaxed graph
    // hold (a few MiB), generously.
    let margin_kib = 32 << 10;
    assert!(
        peak <= base + (budget >> 10) + margin_kib,
        "peak RSS {peak} KiB over base {base} KiB + budget {} KiB + margin: {line}",
        budget >> 10
    );
}

/// The memory limit decides the same way in a pool of one thread and of four: which racer
/// gives up, and when, depends on what the search holds, not on the machine (the account
/// counted each thread of the pool it ran in).
#[test]
fn the_memory_limit_decides_the_same_whatever_the_thread_count() {
    let map = parse_map(&huge_map(11)).unwrap();
    let cancel = AtomicBool::new(false);
    let req = PlanRequest {
        map: &map,
        seed: 1,
        time_limit: Duration::from_secs(240),
        cancel: &cancel,
        memory_budget_bytes: Some(6 << 20),
    };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let rep = pool.install(|| plan(&req, None));
        (format!("{:?}", rep.outcome), rep.expanded, rep.peak_bytes)
    };
    let one = run(1);
    assert!(one.0.contains("MemoryLimit"), "{one:?}");
    assert_eq!(run(4), one);
}

/// A search whose early stage ran out of memory and whose later stage then ran out of time
/// answers `memory_limit`, not `time_limit`: the budget is what cut it short, and an operator
/// raising the time limit would change nothing. The expansion limit stands in for the clock
/// (the same stop, `StageEnd::Deadline`, but the same on every machine): half of what the whole
/// search expands with that budget stops it in a later stage.
#[test]
fn memory_out_in_an_early_stage_then_the_clock_reports_memory() {
    let map = parse_map(&huge_map(11)).unwrap();
    let cancel = AtomicBool::new(false);
    let req = PlanRequest {
        map: &map,
        seed: 1,
        time_limit: Duration::from_secs(240),
        cancel: &cancel,
        memory_budget_bytes: Some(6 << 20),
    };
    let stages = std::sync::Mutex::new(Vec::new());
    let seen = |p: &horst_planner::Progress| stages.lock().unwrap().push((p.stage, p.expanded));
    let whole = plan(&req, Some(&seen));
    assert_eq!(
        whole.reason(),
        Some(UnresolvedReason::MemoryLimit),
        "{whole:?}"
    );
    let limit = whole.expanded / 2;
    let first_stage_end = stages
        .lock()
        .unwrap()
        .iter()
        .find(|(s, _)| *s > 0)
        .map(|(_, e)| *e);
    let opts = horst_planner::search::SearchOptions {
        expansion_limit: Some(limit),
        ..Default::default()
    };
    let cut = horst_planner::search::plan_with(&req, None, &opts);
    assert!(cut.expanded < whole.expanded, "{cut:?}");
    assert_eq!(
        cut.reason(),
        Some(UnresolvedReason::MemoryLimit),
        "stopped at {} of {} expansions (the first stage ended by {first_stage_end:?}): {cut:?}",
        cut.expanded,
        whole.expanded
    );
}
