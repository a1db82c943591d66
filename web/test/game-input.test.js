// The keyboard mapping and the replay helpers of the game page (DOM-free).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Keys, keysFor } from "../game/input.js";
import { readFileSync } from "node:fs";
import { REPLAY_MAX_TICKS, actionOf, describeAction, perTick, toReplay } from "../game/engine.js";

test("every one of the 20 actions has keys that give it back", () => {
  for (let a = 0; a < 20; a++) {
    const k = new Keys();
    for (const code of keysFor(a)) k.down(code);
    assert.equal(k.action(), a, `action ${a} from ${keysFor(a)}`);
  }
});

test("keys map as the page says: A/D, Shift, Space/Up/W, X; left and right cancel", () => {
  const k = new Keys();
  assert.equal(k.action(), 4);
  k.down("KeyD");
  assert.equal(k.action(), 8);
  k.down("ShiftRight");
  assert.equal(k.action(), 16);
  k.down("KeyW");
  k.down("KeyX");
  assert.equal(k.action(), 19);
  k.down("ArrowLeft");
  assert.equal(describeAction(k.action()).move, "none");
  k.clear();
  k.down("ArrowUp");
  assert.equal(k.action(), 5);
  assert.equal(actionOf({ dir: -1, slow: true, shoot: true }), 14);
});

test("a run becomes the contract's replay and back", () => {
  const ticks = [...Array(700).fill(8), 9, 9, 4];
  const r = toReplay(4294967295, ticks);
  assert.deepEqual(r, { seed: 4294967295, actions: [{ action: 8, ticks: 600 }, { action: 8, ticks: 100 }, { action: 9, ticks: 2 }, { action: 4, ticks: 1 }] });
  assert.deepEqual(perTick(r), ticks);
});

test("a tap between two ticks still counts for one tick", () => {
  const k = new Keys();
  k.down("Space");
  k.up("Space");
  assert.equal(k.tick(), 5, "the tap jumps for one tick");
  assert.equal(k.tick(), 4, "and is released on the next");
  k.down("KeyX");
  k.up("KeyX");
  k.down("ArrowRight");
  assert.equal(k.tick(), 10, "right and a throw in the same tick");
  assert.equal(k.tick(), 8, "the throw was a tap; right is still held");
  assert.equal(k.tick(), 8);
});

test("a release and a new press within one tick show one tick released (a fresh press)", () => {
  const k = new Keys();
  k.down("Space");
  assert.equal(k.tick(), 5);
  assert.equal(k.tick(), 5, "held");
  k.up("Space");
  k.down("Space");
  assert.equal(k.tick(), 4, "the release is seen");
  assert.equal(k.tick(), 5, "then the new press");
  assert.equal(k.tick(), 5, "still held");
  // Released, tapped and released again within one tick: released, pressed, released.
  k.up("Space");
  k.down("Space");
  k.up("Space");
  assert.deepEqual([k.tick(), k.tick(), k.tick(), k.tick()], [4, 5, 4, 4]);
});

test("repeats are no presses; focus loss drops what no tick has seen", () => {
  const k = new Keys();
  k.down("ArrowLeft");
  k.down("ArrowLeft");
  assert.equal(k.tick(), 0);
  k.up("ArrowLeft");
  assert.equal(k.tick(), 4, "one release ends the hold");
  k.down("Space");
  k.up("Space");
  k.clear();
  assert.equal(k.tick(), 4, "a tap before the focus went is forgotten");
  k.down("KeyD");
  k.up("KeyD");
  k.down("KeyA");
  k.settle();
  assert.equal(k.tick(), 0, "settle: only what is held now");
  // A key mashed while no tick runs keeps a bounded queue and ends as it is held.
  for (let i = 0; i < 1000; i++) {
    k.down("KeyX");
    k.up("KeyX");
  }
  assert.ok(k.pending.get("KeyX").length <= 8);
  const seen = [];
  for (let i = 0; i < 10; i++) seen.push(k.tick());
  assert.equal(seen[seen.length - 1], 0);
});

test("the same key events give the same actions, tick by tick", () => {
  const script = [["d", "Space"], ["t"], ["u", "Space"], ["d", "Space"], ["t"], ["d", "ArrowRight"], ["u", "ArrowRight"], ["t"], ["t"]];
  const run = () => {
    const k = new Keys();
    const out = [];
    for (const [op, code] of script) {
      if (op === "d") k.down(code);
      else if (op === "u") k.up(code);
      else out.push(k.tick());
    }
    return out;
  };
  assert.deepEqual(run(), run());
  assert.deepEqual(run(), [5, 4, 9, 5]);
});

test("the page ends a run at the referee's replay limit, the same number", () => {
  const limits = readFileSync(new URL("../../engine/src/format/limits.rs", import.meta.url), "utf8");
  const m = /REPLAY_MAX_TOTAL_TICKS: u64 = ([0-9_]+);/.exec(limits);
  assert.ok(m, "REPLAY_MAX_TOTAL_TICKS in limits.rs");
  assert.equal(REPLAY_MAX_TICKS, Number(m[1].replaceAll("_", "")));
  const r = toReplay(1, Array(REPLAY_MAX_TICKS).fill(4));
  assert.equal(r.actions.reduce((n, s) => n + s.ticks, 0), REPLAY_MAX_TICKS);
});
