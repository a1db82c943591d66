// The game engine in the browser: horst-engine compiled to WebAssembly (engine-wasm/, built
// by ops/build-wasm into ./engine.wasm). This file is the JS side of its plain C exports:
// it copies text into the module's memory, reads JSON and the i32 view back. DOM-free, so
// Node's test runner uses it as it is.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Status codes of `step`. */
export const RUNNING = 0;
export const WON = 1;
export const DEAD = 2;

/** Loads the module from bytes (Node) or a URL (the page); resolves to an `Engine`. */
export async function loadEngine(source = new URL("./engine.wasm", import.meta.url)) {
  let instance;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    ({ instance } = await WebAssembly.instantiate(source, {}));
  } else if (String(source).startsWith("file:")) {
    // Opened from disk: fetch() has no file: scheme, XHR does (where the browser allows it).
    const bytes = await new Promise((resolve, reject) => {
      const x = new XMLHttpRequest();
      x.open("GET", String(source));
      x.responseType = "arraybuffer";
      x.onload = () => (x.response ? resolve(x.response) : reject(new Error("the engine module is empty")));
      x.onerror = () => reject(new Error("the browser does not load files next to the page"));
      x.send();
    });
    ({ instance } = await WebAssembly.instantiate(bytes, {}));
  } else {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`the engine module ${source} answered ${response.status}`);
    if (WebAssembly.instantiateStreaming && response.headers.get("content-type") === "application/wasm") {
      ({ instance } = await WebAssembly.instantiateStreaming(response, {}));
    } else {
      ({ instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {}));
    }
  }
  return new Engine(instance.exports);
}

export class Engine {
  constructor(x) {
    this.x = x;
    this.x.hx_info();
    this.info = JSON.parse(this.out());
    /** The engineVersion this module was built from. */
    this.engineVersion = this.info.engineVersion;
  }

  /** The text of the last call's output buffer. */
  out() {
    const ptr = this.x.hx_out_ptr();
    const len = this.x.hx_out_len();
    return decoder.decode(new Uint8Array(this.x.memory.buffer, ptr, len));
  }

  /** Copies `text` into module memory; the called export takes the bytes over. */
  put(text) {
    const bytes = encoder.encode(text);
    const ptr = this.x.hx_alloc(bytes.length);
    new Uint8Array(this.x.memory.buffer, ptr, bytes.length).set(bytes);
    return [ptr, bytes.length];
  }

  /** Starts a game; throws an Error with `code` and `errors` for an invalid map. */
  newGame(mapText, seed) {
    const [ptr, len] = this.put(mapText);
    const h = this.x.hx_game_new(ptr, len, seed >>> 0);
    if (h === 0) throw failure(this.out());
    return new Game(this, h);
  }

  /** The referee, as `simulate_replay` reports it (`outcome`, `ticks`, `stateHash`, ...). */
  referee(mapText, replayText) {
    const [mp, ml] = this.put(mapText);
    const [rp, rl] = this.put(typeof replayText === "string" ? replayText : JSON.stringify(replayText));
    const ok = this.x.hx_referee(mp, ml, rp, rl);
    if (!ok) throw failure(this.out());
    return JSON.parse(this.out());
  }
}

function failure(text) {
  let f;
  try {
    f = JSON.parse(text);
  } catch {
    f = { code: "internal_error", message: text || "the engine module failed" };
  }
  const e = new Error(f.message);
  e.code = f.code;
  e.errors = f.errors || [];
  return e;
}

export class Game {
  constructor(engine, handle) {
    this.engine = engine;
    this.h = handle;
    engine.x.hx_game_map(handle);
    /** `{name, width, height, tiles, entities, dynTiles, mapHash}` */
    this.map = JSON.parse(engine.out());
  }

  /** Advances `ticks` ticks holding `action` (0-19); returns the status. */
  step(action, ticks = 1) {
    return this.engine.x.hx_game_step(this.h, action, ticks);
  }

  get tick() {
    return this.engine.x.hx_game_tick(this.h);
  }

  stateHash() {
    this.engine.x.hx_game_hash(this.h);
    return this.engine.out();
  }

  /** What killed the bird (`{cause: spikes|enemy|rock|fell_out|crushed, x, y, entity}`), or null. */
  deathCause() {
    this.engine.x.hx_game_death(this.h);
    return JSON.parse(this.engine.out() || "null");
  }

  /** A copy with its own state. */
  clone() {
    const h = this.engine.x.hx_game_clone(this.h);
    if (!h) throw new Error("this game was freed");
    const g = Object.create(Game.prototype);
    g.engine = this.engine;
    g.h = h;
    g.map = this.map;
    return g;
  }

  /** A new game from the last checkpoint this one touched (practice: the start moved
   * there, so its run is no replay of this map), or null if it touched none. */
  fromCheckpoint(seed) {
    const h = this.engine.x.hx_game_from_checkpoint(this.h, seed >>> 0);
    return h ? new Game(this.engine, h) : null;
  }

  free() {
    this.engine.x.hx_game_free(this.h);
    this.h = 0;
  }

  /** The dynamic state, decoded (see `engine-wasm/src/view.rs` for the word layout). */
  view() {
    const n = this.engine.x.hx_view(this.h);
    if (n === 0) throw new Error("the engine module cannot describe this state (layout mismatch)");
    const w = new Int32Array(this.engine.x.memory.buffer, this.engine.x.hx_view_ptr(), n).slice();
    let i = 0;
    const v = {
      tick: w[0], status: w[1], x: w[2], y: w[3], vx: w[4], vy: w[5],
      onGround: (w[6] & 1) !== 0, jumpHeld: (w[6] & 2) !== 0,
      boostAvailable: (w[6] & 4) !== 0, rising: (w[6] & 8) !== 0,
      facing: w[7], riding: w[8], eggs: w[9], collected: w[10], checkpoint: w[11],
      shootCooldown: w[12], ground: w[13],
    };
    i = 14;
    const section = (fields) => {
      const count = w[i++];
      const out = [];
      for (let k = 0; k < count; k++) {
        const rec = {};
        for (const f of fields) rec[f] = w[i++];
        out.push(rec);
      }
      return out;
    };
    v.pebbles = section(["active", "x", "y", "vx"]);
    v.dynTiles = section(["tile", "state", "timer"]);
    v.walkers = section(["x", "y", "dir", "alive", "wait"]);
    v.flyers = section(["x", "y", "dir", "alive", "wait"]);
    v.platforms = section(["x", "y", "dir"]);
    v.rocks = section(["active", "x", "y"]);
    v.berries = section(["taken"]);
    return v;
  }
}

// ---- actions: the contract's 20 indices (moveIndex * 4 + buttons) ----

const MOVES = ["left", "none", "right", "slow left", "slow right"];

/** The action index for held controls: `dir` -1/0/1, `slow`, `jump`, `shoot`. */
export function actionOf({ dir = 0, slow = false, jump = false, shoot = false }) {
  let move = 1;
  if (dir < 0) move = slow ? 3 : 0;
  else if (dir > 0) move = slow ? 4 : 2;
  return move * 4 + (jump ? 1 : 0) + (shoot ? 2 : 0);
}

/** `{move, jump, shoot}` of an action index. */
export function describeAction(a) {
  return { move: MOVES[Math.floor(a / 4)] ?? "none", jump: a % 4 === 1 || a % 4 === 3, shoot: a % 4 >= 2 };
}

/** The most ticks a replay may hold in total: the referee rejects longer ones
 * (REPLAY_MAX_TOTAL_TICKS in engine/src/format/limits.rs; a unit test compares the two). */
export const REPLAY_MAX_TICKS = 36000;

/** Run-length encodes per-tick actions into replay steps (`ticks` at most 600 each). */
export function toReplay(seed, actions) {
  const steps = [];
  for (const a of actions) {
    const last = steps[steps.length - 1];
    if (last && last.action === a && last.ticks < 600) last.ticks++;
    else steps.push({ action: a, ticks: 1 });
  }
  return { seed: seed >>> 0, actions: steps };
}

/** Expands replay steps into one action per tick. */
export function perTick(replay) {
  const out = [];
  for (const s of replay.actions) for (let k = 0; k < s.ticks; k++) out.push(s.action);
  return out;
}
