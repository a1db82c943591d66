// What the browser remembers of a player's runs (web/game/progress.js): per revision, and
// carried to a new revision that plays the same (its `progressFrom`: a shipped level whose
// proof replay was made easier gets a new revision id, the map and engine stay).
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { progress, recordWin } from "../game/progress.js";

const items = new Map();
globalThis.localStorage = {
  getItem: (k) => (items.has(k) ? items.get(k) : null),
  setItem: (k, v) => items.set(k, String(v)),
};
beforeEach(() => items.clear());

test("a win is remembered per revision, the best time kept", () => {
  assert.equal(progress("rev-a"), null);
  assert.deepEqual(recordWin("rev-a", 300), { best: 300, previous: null });
  assert.deepEqual(recordWin("rev-a", 320), { best: 300, previous: 300 });
  assert.deepEqual(progress("rev-a"), { won: true, best: 300 });
  // Another revision (its map may differ) starts anew.
  assert.equal(progress("rev-b"), null);
});

test("progress on an earlier revision that plays the same counts for the new one", () => {
  recordWin("rev-felsstufen-old", 280);
  recordWin("rev-felsstufen-older", 260);
  const earlier = ["rev-felsstufen-old", "rev-felsstufen-older"];
  // The best of them, until the new revision has a win of its own.
  assert.deepEqual(progress("rev-felsstufen-new", earlier), { won: true, best: 260 });
  assert.deepEqual(recordWin("rev-felsstufen-new", 270, earlier), { best: 260, previous: 260 });
  assert.deepEqual(progress("rev-felsstufen-new"), { won: true, best: 260 });
  assert.deepEqual(recordWin("rev-felsstufen-new", 250, earlier), { best: 250, previous: 260 });
  // Nothing else is read or changed; odd values of progressFrom are ignored.
  assert.deepEqual(progress("rev-felsstufen-old"), { won: true, best: 280 });
  assert.equal(progress("rev-x", null), null);
  assert.equal(progress("rev-x", [7, null, {}]), null);
  assert.equal(progress("", earlier), null);
});
