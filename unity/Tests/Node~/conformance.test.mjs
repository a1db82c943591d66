// The C# SDK (behind the real jslib, as in a WebGL build) and the JS SDK answer the same
// message sequences alike: the same messages to the host, the same handler calls with the
// same values, the same properties. Needs Mono: see support/mono-build.mjs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { driverPath } from "./support/mono-build.mjs";
import { generateSequence, windowSequence } from "./support/generate.mjs";
import { jsTranscript, parseSequence, unityTranscript } from "./support/transcripts.mjs";

// Not a speed limit: a guard so that a hung Mono process fails the run instead of stalling it.
const HANG_GUARD = { timeout: 300_000 };

/**
 * Fails at the first entry where the transcripts part, naming the step that led there.
 * Entries are compared as JSON text, so even the order of keys must agree.
 */
function assertSameTranscript(steps, js, unity) {
  const n = Math.max(js.length, unity.length);
  for (let i = 0; i < n; i++) {
    if (JSON.stringify(unity[i]) !== JSON.stringify(js[i])) {
      const at = js.slice(0, i).findLast((e) => e && "step" in e)?.step ?? 0;
      const around = (t) => t.slice(Math.max(0, i - 3), i + 2).map((e) => JSON.stringify(e)).join("\n    ");
      assert.fail(
        `the SDKs part at transcript entry ${i}, after step ${at}: ${JSON.stringify(steps[at])}\n` +
        `  JS SDK:\n    ${around(js)}\n  C# SDK (jslib + Mono):\n    ${around(unity)}`,
      );
    }
  }
}

async function compare(steps) {
  const js = jsTranscript(steps);
  const unity = await unityTranscript(steps, driverPath());
  assertSameTranscript(steps, js, unity);
  return js;
}

test("a recorded chess series: both SDKs send and deliver the same", HANG_GUARD, async () => {
  const steps = parseSequence(readFileSync(new URL("./sequences/chess-series.jsonl", import.meta.url), "utf8"));
  const js = await compare(steps);
  // The transcript is not trivially empty: it carries what the series is about.
  const outs = js.filter((e) => e.out).map((e) => e.out.type);
  // On construct (three agents) and on each of the host's two requests; the stranger's is ignored.
  assert.equal(outs.filter((t) => t === "AGENT_CONFIGURE").length, 5);
  assert.ok(outs.includes("AGENT_ACTION_REJECTED") && outs.includes("AGENT_GAME_OVER") && outs.includes("AGENT_REMATCH"));
  const rejected = js.find((e) => e.out?.type === "AGENT_ACTION_REJECTED").out.data;
  assert.deepEqual(rejected, { playerId: "p_5e6f7a8b", reason: "illegal move e7e3", actionId: "a_00000002" });
  const events = js.filter((e) => e.event).map((e) => e.event.kind);
  assert.deepEqual(events.filter((k) => k === "gameStart").length, 3);
  // Three in round 1 (the re-delivery dropped), four in round 2, two v1 throws, the v1 start without onGameStart.
  assert.equal(events.filter((k) => k === "action").length, 10);
});

test("300 generated sessions of misbehaving hosts and busy games: both SDKs answer alike", HANG_GUARD, async () => {
  const steps = generateSequence(20260107, 300);
  assert.ok(steps.length > 8000, `only ${steps.length} steps`);
  const js = await compare(steps);
  const kinds = new Set(js.filter((e) => e.event).map((e) => e.event.kind));
  assert.deepEqual([...kinds].sort(), ["action", "actionRejected", "gameStart", "sessionEnd", "timeout"]);
});

test("the remembered-actionId window has the same edge in both SDKs", HANG_GUARD, async () => {
  const js = await compare(windowSequence());
  const redelivered = js.filter((e) => e.event?.action?.again !== undefined).map((e) => e.event.actionId);
  // 2100 ids, the last 2048 remembered (a_52..a_2099): a_52, a_2099 and a_1000 are dropped;
  // a_51 gets through and pushes out the oldest (a_52), a_0 pushes out a_53, so a_53 and
  // then a_54 get through too; the second a_51 is remembered now and dropped.
  assert.deepEqual(redelivered, ["a_51", "a_0", "a_53", "a_54"]);
});

test("a transcript that differs is reported at the step where it parts", () => {
  const steps = [{ new: {} }, { host: { type: "AGENT_REQUEST_CONFIGURE", data: {} } }];
  const js = jsTranscript(steps);
  const bad = structuredClone(js);
  bad[bad.length - 1].out.data.gameType = "other";
  assert.throws(() => assertSameTranscript(steps, js, bad), /after step 1: .*AGENT_REQUEST_CONFIGURE/s);
});
