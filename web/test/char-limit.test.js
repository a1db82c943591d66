// A field held to a limit in characters as the server counts them (web/pages/char-limit.js),
// shared by the admin token label and the agent key label.
import { test } from "node:test";
import assert from "node:assert/strict";
import { charCount, charLimit } from "../pages/char-limit.js";

test("characters are counted as the server counts them after cleaning, not in UTF-16 units", () => {
  assert.equal(charCount("\u{1F426}".repeat(40)), 40);
  assert.equal(charCount("Laptop"), 6);
  // Runs of white space are one, and the ends are trimmed, as horst_text::clean_line does.
  assert.equal(charCount("  Mein \t Laptop  "), 11);
  assert.equal(charCount(""), 0);
});

test("characters the server removes are not counted: invisible ones, marks and joiners that join nothing", () => {
  // A zero-width space, a soft hyphen, bidi marks and isolates: the server drops them.
  assert.equal(charCount("Lap\u200Btop\u00AD"), 6);
  assert.equal(charCount("\u202EpotpaL\u2066\u200F"), 6);
  assert.equal(charCount("\u200B\uFEFF"), 0);
  // A joiner inside an emoji sequence or a Persian word stays (it changes what one sees);
  // at the end, in a Latin word, or doubled it is dropped.
  assert.equal(charCount("\u{1F468}\u200D\u{1F469}\u200D\u{1F467}"), 5);
  assert.equal(charCount("\u0645\u06CC\u200C\u062E"), 4);
  assert.equal(charCount("ad\u200Dmin\u200D"), 5);
  assert.equal(charCount("\u2764\uFE0F\uFE0F"), 2);

});

/** A field as much as charLimit uses of one. */
function fakeField() {
  const listeners = {};
  return {
    value: "", maxLength: -1, message: "", form: null,
    setCustomValidity(m) { this.message = m; },
    addEventListener(type, f) { listeners[type] = f; },
    type(text) { this.value = text; listeners.input(); },
  };
}

test("the field holds every character of the limit, counts them and is invalid past it", () => {
  const field = fakeField();
  const counter = { textContent: "" };
  const limit = charLimit(field, {
    max: 40, counter,
    says: (chars, max, over) => `${chars}/${max}${over ? ` -${over}` : ""}`,
    tooMany: (max) => `at most ${max}`,
  });
  assert.equal(field.maxLength, 80);
  assert.equal(counter.textContent, "0/40");
  field.type("\u{1F426}".repeat(40));
  assert.deepEqual([counter.textContent, field.message, limit.fits()], ["40/40", "", true]);
  field.type("\u{1F426}".repeat(41));
  assert.deepEqual([counter.textContent, field.message, limit.fits()], ["41/40 -1", "at most 40", false]);
  // The server's own limit, once it said it.
  limit.setMax(50);
  assert.deepEqual([field.maxLength, counter.textContent, field.message], [100, "41/50", ""]);
});
