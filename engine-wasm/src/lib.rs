//! `horst-engine` for the browser: the referee's own simulation compiled to
//! `wasm32-unknown-unknown`, exposed as plain `extern "C"` functions over linear memory.
//!
//! Why no wasm-bindgen: the page needs a dozen calls that pass integers, a map text and a
//! replay in, and a JSON text or an i32 array out. That fits the C ABI with a scratch
//! buffer; a bindgen toolchain (CLI pinned to the crate's version, generated JS) would
//! weigh more than the glue it saves. `web/game/engine.js` is the JS side.
//!
//! Protocol: the page writes UTF-8 input into memory from [`hx_alloc`], calls a function,
//! and reads text results from [`hx_out_ptr`]/[`hx_out_len`] (JSON or a hex hash) and the
//! view from [`hx_view_ptr`]/[`hx_view_len`]. A game is a handle (1, 2, ...); 0 means an
//! error, described as JSON `{code, message, errors?}` in the output buffer. Nothing here
//! panics on input: every text is checked by the engine's own parsers.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::cell::RefCell;

use horst_engine::{Map, Sim, Status};
use serde::Serialize;

pub mod view;

struct Game {
    map: Map,
    sim: Sim,
    dyn_tiles: Vec<u32>,
}

#[derive(Default)]
struct State {
    games: Vec<Option<Game>>,
    out: Vec<u8>,
    view: Vec<i32>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

fn set_out(s: &mut State, text: &str) {
    s.out.clear();
    s.out.extend_from_slice(text.as_bytes());
}

#[derive(Serialize)]
struct Failure<'a> {
    code: &'a str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<Vec<horst_engine::Issue>>,
}

fn fail(s: &mut State, code: &str, message: String, errors: Option<Vec<horst_engine::Issue>>) {
    let json = serde_json::to_string(&Failure {
        code,
        message,
        errors,
    })
    .unwrap_or_default();
    set_out(s, &json);
}

fn status_code(st: Status) -> u32 {
    match st {
        Status::Running => 0,
        Status::Won => 1,
        Status::Dead => 2,
    }
}

/// Input text from the page: `len` bytes at `ptr` (from [`hx_alloc`]), taken over and freed.
///
/// # Safety
/// `ptr`/`len` must come from one `hx_alloc(len)` call that was not freed yet.
unsafe fn take_text(ptr: *mut u8, len: usize) -> Result<String, String> {
    if ptr.is_null() {
        return Ok(String::new());
    }
    if len == 0 {
        // `hx_alloc(0)` reserved one byte.
        drop(Vec::from_raw_parts(ptr, 0, 1));
        return Ok(String::new());
    }
    let bytes = Vec::from_raw_parts(ptr, len, len);
    String::from_utf8(bytes).map_err(|_| "the text is not UTF-8".to_string())
}

fn parse(text: &str) -> Result<Map, (String, Vec<horst_engine::Issue>)> {
    horst_engine::parse_map(text).map_err(|report| {
        let first = report
            .errors
            .first()
            .map(|e| format!("line {}, column {}: {}", e.line, e.column, e.message))
            .unwrap_or_else(|| "the map is invalid".into());
        (first, report.errors)
    })
}

/// `len` bytes the page fills with input text; the called function takes them over.
#[no_mangle]
pub extern "C" fn hx_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len.max(1));
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// The output buffer: the text the last call produced.
#[no_mangle]
pub extern "C" fn hx_out_ptr() -> *const u8 {
    with(|s| s.out.as_ptr())
}

#[no_mangle]
pub extern "C" fn hx_out_len() -> usize {
    with(|s| s.out.len())
}

/// The view the last `hx_view` call decoded (i32 words, layout in [`view::decode`]).
#[no_mangle]
pub extern "C" fn hx_view_ptr() -> *const i32 {
    with(|s| s.view.as_ptr())
}

#[no_mangle]
pub extern "C" fn hx_view_len() -> usize {
    with(|s| s.view.len())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Info {
    engine_version: &'static str,
    policy_version: &'static str,
    palette: horst_engine::Palette,
    ticks_per_second: u32,
    tile: i32,
}

/// Writes `{engineVersion, policyVersion, palette, ticksPerSecond, tile}` to the output.
#[no_mangle]
pub extern "C" fn hx_info() {
    let info = Info {
        engine_version: horst_engine::engine_version(),
        policy_version: horst_engine::POLICY_VERSION,
        palette: horst_engine::palette(),
        ticks_per_second: horst_engine::physics::TICKS_PER_SECOND,
        tile: horst_engine::physics::TILE,
    };
    let json = serde_json::to_string(&info).unwrap_or_default();
    with(|s| set_out(s, &json));
}

/// Starts a game on the map text with `seed`; returns its handle, or 0 with the failure
/// (`validation_failed` with the map's errors) in the output.
///
/// # Safety
/// `ptr`/`len` as for [`hx_alloc`].
#[no_mangle]
pub unsafe extern "C" fn hx_game_new(ptr: *mut u8, len: usize, seed: u32) -> u32 {
    let text = take_text(ptr, len);
    with(|s| {
        let text = match text {
            Ok(t) => t,
            Err(m) => {
                fail(s, "invalid_input", m, None);
                return 0;
            }
        };
        match parse(&text) {
            Ok(map) => {
                let sim = Sim::new(&map, seed);
                let dyn_tiles = view::dyn_tiles(&map);
                let game = Game {
                    map,
                    sim,
                    dyn_tiles,
                };
                s.games.push(Some(game));
                s.games.len() as u32
            }
            Err((m, errors)) => {
                fail(s, "validation_failed", m, Some(errors));
                0
            }
        }
    })
}

fn game<R>(h: u32, f: impl FnOnce(&mut Game) -> R, none: R) -> R {
    with(|s| {
        match h
            .checked_sub(1)
            .and_then(|i| s.games.get_mut(i as usize))
            .and_then(Option::as_mut)
        {
            Some(g) => f(g),
            None => none,
        }
    })
}

/// The map text of `map` with its start moved to checkpoint `index` (file order among the
/// checkpoints): how the game respawns a person at the last checkpoint. The referee never
/// does (a death ends its run), so a run from there is practice on another map, not a replay
/// of this one. Built from the engine's canonical form, whose entity lines are one per line
/// and whose start line is exactly `start X Y`.
pub fn checkpoint_map(map: &Map, index: usize) -> Option<String> {
    let cp = map
        .entities()
        .iter()
        .filter(|e| e.kind == horst_engine::EntityKind::Checkpoint)
        .nth(index)?;
    let (sx, sy) = map.start();
    let old = format!("start {sx} {sy}");
    let canonical = map.canonical();
    let mut out = String::with_capacity(canonical.len() + 8);
    let mut entities = false;
    for line in canonical.lines() {
        if entities && line == old {
            out.push_str(&format!("start {} {}", cp.x, cp.y));
        } else {
            out.push_str(line);
        }
        out.push('\n');
        entities |= line == "entities:";
    }
    Some(out)
}

/// A new game from the last checkpoint game `h` touched (see [`checkpoint_map`]), on the same
/// seed; 0 if it touched none.
#[no_mangle]
pub extern "C" fn hx_game_from_checkpoint(h: u32, seed: u32) -> u32 {
    let made = game(
        h,
        |g| {
            let index = usize::try_from(g.sim.checkpoint()).ok()?;
            let text = checkpoint_map(&g.map, index)?;
            let map = horst_engine::parse_map(&text).ok()?;
            Some(Game {
                sim: Sim::new(&map, seed),
                dyn_tiles: view::dyn_tiles(&map),
                map,
            })
        },
        None,
    );
    match made {
        Some(g) => with(|s| {
            s.games.push(Some(g));
            s.games.len() as u32
        }),
        None => 0,
    }
}

/// Ends a game and frees it.
#[no_mangle]
pub extern "C" fn hx_game_free(h: u32) {
    with(|s| {
        if let Some(slot) = h.checked_sub(1).and_then(|i| s.games.get_mut(i as usize)) {
            *slot = None;
        }
        while matches!(s.games.last(), Some(None)) {
            s.games.pop();
        }
    });
}

/// A copy of a running game (its own handle), e.g. to jump back on a scrubber.
#[no_mangle]
pub extern "C" fn hx_game_clone(h: u32) -> u32 {
    let copy = game(
        h,
        |g| {
            Some(Game {
                map: g.map.clone(),
                sim: g.sim.clone(),
                dyn_tiles: g.dyn_tiles.clone(),
            })
        },
        None,
    );
    match copy {
        Some(g) => with(|s| {
            s.games.push(Some(g));
            s.games.len() as u32
        }),
        None => 0,
    }
}

/// Advances `ticks` ticks with `action` (stops early at a win or death); returns the
/// status: 0 running, 1 won, 2 dead, 3 no such game.
#[no_mangle]
pub extern "C" fn hx_game_step(h: u32, action: u32, ticks: u32) -> u32 {
    let action = u8::try_from(action).unwrap_or(u8::MAX);
    game(
        h,
        |g| {
            for _ in 0..ticks {
                if g.sim.status() != Status::Running {
                    break;
                }
                g.sim.step(action);
            }
            status_code(g.sim.status())
        },
        3,
    )
}

/// Ticks simulated so far.
#[no_mangle]
pub extern "C" fn hx_game_tick(h: u32) -> u32 {
    game(h, |g| g.sim.tick(), 0)
}

/// Writes the game's `stateHash` (lowercase hex) to the output.
#[no_mangle]
pub extern "C" fn hx_game_hash(h: u32) {
    let hash = game(h, |g| g.sim.state_hash(), String::new());
    with(|s| set_out(s, &hash));
}

/// Writes the static map as JSON (`view::MapInfo`) to the output.
#[no_mangle]
pub extern "C" fn hx_game_map(h: u32) {
    let json = game(
        h,
        |g| serde_json::to_string(&view::map_info(&g.map)).unwrap_or_default(),
        String::new(),
    );
    with(|s| set_out(s, &json));
}

/// Writes what killed the bird as JSON (`{cause, x, y, entity?}`, the referee's
/// `deathCause`), or `null` while it lives, to the output.
#[no_mangle]
pub extern "C" fn hx_game_death(h: u32) {
    let json = game(
        h,
        |g| {
            let report = horst_engine::referee::death_report(&g.map, &g.sim);
            serde_json::to_string(&report).unwrap_or_default()
        },
        "null".to_string(),
    );
    with(|s| set_out(s, &json));
}

/// Decodes the game's state into the view buffer; returns its length in words (0: no such
/// game, or the engine's state layout is not the one this module reads).
#[no_mangle]
pub extern "C" fn hx_view(h: u32) -> usize {
    let mut words = with(|s| std::mem::take(&mut s.view));
    let ok = game(
        h,
        |g| view::decode(&g.sim, &g.map, &g.dyn_tiles, &mut words),
        false,
    );
    if !ok {
        words.clear();
    }
    let n = words.len();
    with(|s| s.view = words);
    n
}

/// The referee on a map text and a replay JSON text: writes the report (as the server's
/// `simulate_replay` reports it) or a failure `{code, message}` to the output; returns 1 on
/// a report, 0 on a failure.
///
/// # Safety
/// Both pointer/length pairs as for [`hx_alloc`].
#[no_mangle]
pub unsafe extern "C" fn hx_referee(
    map_ptr: *mut u8,
    map_len: usize,
    replay_ptr: *mut u8,
    replay_len: usize,
) -> u32 {
    let map = take_text(map_ptr, map_len);
    let replay = take_text(replay_ptr, replay_len);
    with(|s| {
        let (map, replay) = match (map, replay) {
            (Ok(m), Ok(r)) => (m, r),
            (Err(m), _) | (_, Err(m)) => {
                fail(s, "invalid_input", m, None);
                return 0;
            }
        };
        let map = match parse(&map) {
            Ok(m) => m,
            Err((m, errors)) => {
                fail(s, "validation_failed", m, Some(errors));
                return 0;
            }
        };
        let replay = match horst_engine::parse_replay_json(&replay) {
            Ok(r) => r,
            Err(e) => {
                fail(s, e.code(), e.message().to_string(), None);
                return 0;
            }
        };
        let report = horst_engine::referee(&map, &replay);
        let json = serde_json::to_string(&report).unwrap_or_default();
        set_out(s, &json);
        1
    })
}
