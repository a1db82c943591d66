// The engine module against the native referee: `tests/it/wasm_engine.rs` writes the native
// results of every committed level (and a sample of the corpus) to a file and runs this with
// HORST_NATIVE_RESULTS naming it. Run alone (node --test web/test/), it is skipped.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadEngine, perTick, RUNNING } from "../game/engine.js";

const file = process.env.HORST_NATIVE_RESULTS;
const skip = file ? false : "needs HORST_NATIVE_RESULTS (cargo test --test it wasm_engine)";

test("the WASM engine gives the native referee's outcome, ticks and stateHash", { skip }, async () => {
  const native = JSON.parse(readFileSync(file, "utf8"));
  const engine = await loadEngine(readFileSync(new URL("../game/engine.wasm", import.meta.url)));
  assert.equal(engine.engineVersion, native.engineVersion, "the module is stale: run ops/build-wasm");
  assert.ok(native.cases.length >= 20, `too few cases: ${native.cases.length}`);
  for (const c of native.cases) {
    // 1. The module's referee, as the server's simulate_replay reports it.
    const r = engine.referee(c.map, c.replay);
    assert.deepEqual(
      { outcome: r.outcome, ticks: r.ticks, stateHash: r.stateHash, mapHash: r.mapHash, deathTick: r.deathTick },
      { outcome: c.outcome, ticks: c.ticks, stateHash: c.stateHash, mapHash: c.mapHash, deathTick: c.deathTick },
      c.name,
    );
    // 2. Tick by tick, as the play and watch pages step it, decoding the view every tick.
    const game = engine.newGame(c.map, c.replay.seed);
    let status = RUNNING;
    for (const a of perTick(c.replay)) {
      if (status !== RUNNING) break;
      status = game.step(a, 1);
      const v = game.view();
      assert.equal(v.tick, game.tick, c.name);
    }
    assert.equal(game.tick, c.ticks, `${c.name}: ticks`);
    assert.equal(game.stateHash(), c.stateHash, `${c.name}: stateHash`);
    game.free();
  }
});
