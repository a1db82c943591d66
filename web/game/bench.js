// Ticks per second of the engine module on one level (docs/benchmarks.md, "Engine in the
// browser"): the level's replay from a fresh game, again and again, until `minTicks` ran.
// `batched`: one call per replay step (the engine's loop inside WebAssembly); otherwise one
// call per tick, as the play and watch pages step it.

import { perTick } from "./engine.js";

export function benchmark(engine, mapText, replay, minTicks = 3_000_000, batched = true) {
  const fresh = engine.newGame(mapText, replay.seed);
  const ticksPerTick = perTick(replay);
  let ticks = 0;
  let hash = "";
  const t0 = performance.now();
  while (ticks < minTicks) {
    const g = fresh.clone();
    if (batched) {
      for (const s of replay.actions) {
        if (g.step(s.action, s.ticks) !== 0) break;
      }
    } else {
      for (const a of ticksPerTick) {
        if (g.step(a, 1) !== 0) break;
      }
    }
    ticks += g.tick;
    hash = g.stateHash();
    g.free();
  }
  const seconds = (performance.now() - t0) / 1000;
  fresh.free();
  return { ticks, seconds, ticksPerSecond: Math.round(ticks / seconds), stateHash: hash, batched };
}
