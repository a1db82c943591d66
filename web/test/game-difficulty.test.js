// The "Schwierigkeit" the game pages show (Labor card badge, level page fact) from a level's
// feasibility report (engine/FORMAT.md, "Feasibility report"), DOM-free.
import { test } from "node:test";
import assert from "node:assert/strict";
import { difficulty } from "../game/api.js";

test("a frame-perfect replay is marked and says how many inputs must be exact", () => {
  const one = difficulty({ verdict: "frame_perfect", exactInputs: 1, tightest: { window: 1 } });
  assert.equal(one.framePerfect, true);
  assert.equal(one.word, "auf den Tick genau");
  assert.match(one.text, /1 Eingabe des Nachweis-Replays muss auf den Tick \(1\/60 s\) genau kommen/);
  const three = difficulty({ verdict: "frame_perfect", exactInputs: 3, tightest: { window: 1 } });
  assert.match(three.text, /3 Eingaben des Nachweis-Replays müssen/);
});

test("the other verdicts name the tightest window, or that no timing is needed", () => {
  const tight = difficulty({ verdict: "tight", exactInputs: 0, tightest: { window: 3 } });
  assert.equal(tight.framePerfect, false);
  assert.equal(tight.word, "knapp");
  assert.match(tight.text, /engstes Zeitfenster des Nachweis-Replays 3 Ticks \(50 ms\)/);
  assert.equal(difficulty({ verdict: "fair", tightest: { window: 6 } }).word, "fair");
  const relaxed = difficulty({ verdict: "relaxed", exactInputs: 0, tightest: null });
  assert.equal(relaxed.word, "entspannt");
  assert.match(relaxed.text, /braucht kein Timing/);
});

test("no report (a revision checked before reports existed) or an unknown verdict: no mark", () => {
  assert.equal(difficulty(null), null);
  assert.equal(difficulty(undefined), null);
  assert.equal(difficulty({ verdict: "impossible" }), null);
});

test("a report whose work budget ran out says so: its verdict is only the easiest the level can be", () => {
  const none = difficulty({ verdict: "relaxed", exactInputs: 0, tightest: null, complete: false, inputs: 40, inputsChecked: 0 });
  assert.equal(none.partial, true);
  assert.equal(none.word, "entspannt (unvollständig geprüft)");
  assert.doesNotMatch(none.text, /braucht kein Timing/);
  assert.match(none.text, /nur 0 von 40 Eingaben/);
  const some = difficulty({ verdict: "fair", exactInputs: 0, tightest: { window: 6 }, complete: false, inputs: 40, inputsChecked: 12 });
  assert.match(some.text, /engstes Zeitfenster des Nachweis-Replays 6 Ticks/);
  assert.match(some.text, /nur 12 von 40 Eingaben/);
  const whole = difficulty({ verdict: "relaxed", exactInputs: 0, tightest: null, complete: true, inputs: 3, inputsChecked: 3 });
  assert.equal(whole.partial, false);
  assert.equal(whole.word, "entspannt");
});
