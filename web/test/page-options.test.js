import { test } from "node:test";
import assert from "node:assert/strict";
import { clockOptionsFrom, eventLog, intOptionFrom } from "../games/page-options.js";

test("clock options come from the query string, checked", () => {
  assert.deepEqual(clockOptionsFrom(""), {});
  assert.deepEqual(clockOptionsFrom("?turnTimeout=30&maxTurnTimeouts=2&forfeitOnTimeout=1"),
    { turnTimeout: 30, maxTurnTimeouts: 2, forfeitOnTimeout: true });
  assert.deepEqual(clockOptionsFrom("?forfeitOnTimeout=false"), { forfeitOnTimeout: false });
  // malformed or out of range: left out, the platform default applies
  assert.deepEqual(clockOptionsFrom("?turnTimeout=0&maxTurnTimeouts=101"), {});
  assert.deepEqual(clockOptionsFrom("?turnTimeout=-5&maxTurnTimeouts=1.5&forfeitOnTimeout=yes"), {});
  assert.deepEqual(clockOptionsFrom("?turnTimeout=99999999"), {});
});

test("the event log keeps the newest lines as text", () => {
  const el = { textContent: "" };
  const log = eventLog(el, 2);
  log("a");
  log("<b>b</b>");
  log("c");
  assert.equal(el.textContent, "<b>b</b>\nc");
});

test("integer options are range-checked", () => {
  assert.equal(intOptionFrom("?maxPlies=40", "maxPlies", 1, 600), 40);
  assert.equal(intOptionFrom("?maxPlies=0", "maxPlies", 1, 600), undefined);
  assert.equal(intOptionFrom("?maxPlies=601", "maxPlies", 1, 600), undefined);
  assert.equal(intOptionFrom("?maxPlies=4x", "maxPlies", 1, 600), undefined);
  assert.equal(intOptionFrom("", "maxPlies", 1, 600), undefined);
});
