// Node: ticks/s of web/game/engine.wasm on levels/15-sechzehn-feinde (docs/benchmarks.md).
//   node web/test-support/engine-bench.js [minTicks]
import { readFileSync } from "node:fs";
import { loadEngine } from "../game/engine.js";
import { benchmark } from "../game/bench.js";

const root = new URL("../../", import.meta.url);
const map = readFileSync(new URL("levels/15-sechzehn-feinde.map", root), "utf8");
// The engine benchmark's own copy of the replay, not the shipped one (engine/benches/README.md).
const replay = JSON.parse(readFileSync(new URL("engine/benches/sechzehn-feinde.replay.json", root), "utf8"));
const engine = await loadEngine(readFileSync(new URL("web/game/engine.wasm", root)));
const min = Number(process.argv[2] || 3_000_000);
for (const batched of [true, false]) {
  for (let run = 0; run < 3; run++) console.log(JSON.stringify({ node: process.version, ...benchmark(engine, map, replay, min, batched) }));
}
