// The keyboard mapping and the replay helpers of the game page (DOM-free).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Keys, keysFor } from "../game/input.js";
import { actionOf, describeAction, perTick, toReplay } from "../game/engine.js";

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
