//! Native ticks/s through the same exports the page calls (docs/benchmarks.md, "Engine in
//! the browser"), on levels/15-sechzehn-feinde: the engine benchmark's replay from a fresh
//! clone, again and again, one call per replay step, until at least N ticks (first argument)
//! ran.
//!
//! cargo run --release -p horst-engine-wasm --example bench_native -- 3000000

use std::time::Instant;

use horst_engine_wasm::*;

fn put(text: &str) -> (*mut u8, usize) {
    let p = hx_alloc(text.len());
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len()) };
    (p, text.len())
}

fn main() {
    let min: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let map = std::fs::read_to_string(dir.join("15-sechzehn-feinde.map")).unwrap();
    // The engine benchmark's own copy of the replay (engine/benches/README.md).
    let replay = horst_engine::parse_replay_json(include_str!(
        "../../engine/benches/sechzehn-feinde.replay.json"
    ))
    .unwrap();
    let (p, n) = put(&map);
    let fresh = unsafe { hx_game_new(p, n, replay.seed) };
    assert!(fresh != 0);
    for _ in 0..3 {
        let mut ticks = 0u64;
        let t0 = Instant::now();
        while ticks < min {
            let g = hx_game_clone(fresh);
            for s in &replay.actions {
                if hx_game_step(g, s.action as u32, s.ticks as u32) != 0 {
                    break;
                }
            }
            ticks += hx_game_tick(g) as u64;
            hx_game_free(g);
        }
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "{{\"native\":true,\"ticks\":{ticks},\"seconds\":{secs:.3},\"ticksPerSecond\":{}}}",
            (ticks as f64 / secs) as u64
        );
    }
}
