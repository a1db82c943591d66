// The C# JSON reader against JSON.parse itself: for thousands of seeded texts, valid,
// damaged and random, both accept the same ones, and read the same value from them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { driverPath } from "./support/mono-build.mjs";
import { prng, randomValue } from "./support/generate.mjs";

const ALPHABET = '{}[]",:\\ \t\n\r0123456789eE+-.truefalsn/bu\u00e9\u2028\ud800\udc00\ud83d\ude00\u0000\u001fx\'\u00a0\ufeff';

function damage(r, text) {
  const chars = [...text];
  for (let e = 1 + r.below(3); e > 0; e--) {
    const at = r.below(chars.length + 1);
    switch (r.below(4)) {
      case 0: chars.splice(at, 0, r.pick([...ALPHABET])); break;
      case 1: chars.splice(at, 1); break;
      case 2: chars[at] = r.pick([...ALPHABET]); break;
      default: chars.length = at;
    }
  }
  return chars.join("");
}

function corpus() {
  const r = prng(99);
  const texts = [
    "", " ", "0", "-0", "01", "1.", ".5", "1e", "1e+", "1E-2", "-", "+1", "1e400", "-1e400", "1e-400",
    "123456789012345678901234567890", "0.1", "2.2250738585072011e-308", "4.9406564584124654e-324",
    "9007199254740993", "1.7976931348623157e308", "1.7976931348623158e308", "0.30000000000000004",
    "3.141592653589793238462643383279", "1.00000000000000011102230246251565404236316680908203125",
    "true", "True", "nul", "[1,]", "{\"a\":1,}", "[\"\\u12\"]", "\"\\ud800\"", "\"\\udc00\\ud800\"",
    "\"\u2028\u2029\"", "\"\t\"", "\"\\x\"", "\ufeff1", "\u00a01", "{\"a\":1,\"a\":2}", "{\"__proto__\":1}",
    "[[[[[[[[[[]]]]]]]]]]", "{\"\":{\"\":{\"\":[]}}}", " [ 1 , 2 ] ", "[1 2]", "{\"a\" 1}",
  ];
  for (let i = 0; i < 3000; i++) {
    const doc = JSON.stringify(randomValue(r));
    texts.push(doc, damage(r, doc));
  }
  for (let i = 0; i < 3000; i++) texts.push(Array.from({ length: r.below(12) }, () => r.pick([...ALPHABET])).join(""));
  for (let i = 0; i < 500; i++) {
    // Numbers with many digits and exponents: correctly rounded reading is checked here.
    const digits = Array.from({ length: 1 + r.below(25) }, () => r.below(10)).join("");
    const frac = r.chance(0.6) ? `.${Array.from({ length: 1 + r.below(20) }, () => r.below(10)).join("")}` : "";
    const exp = r.chance(0.5) ? `e${r.pick(["", "+", "-"])}${r.below(330)}` : "";
    texts.push(`${r.chance(0.3) ? "-" : ""}${digits.replace(/^0+(?=\d)/, "")}${frac}${exp}`);
  }
  return texts;
}

const hex = (s) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i).toString(16).padStart(4, "0")).join("");

/** The C# reader's answer for each text: null when refused, else its normalized JSON text. */
function readWithCSharp(texts) {
  const run = spawnSync("mono", [driverPath(), "json"], { timeout: 300_000, input: texts.map(hex).join("\n") + "\n", encoding: "utf8", maxBuffer: 1 << 28 });
  if (run.error) throw new Error(`cannot run mono (${run.error.message}): install Debian's mono-devel (ops/test does)`);
  assert.equal(run.status, 0, run.stderr);
  const answers = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(answers.length, texts.length);
  return answers.map((a) => (a.ok ? a.text : null));
}

// JavaScript moves integer-like keys to the front of an object; the C# writer keeps them in
// place, so for such texts only the values are compared, not the text.
const hasIndexKey = (v) => v !== null && typeof v === "object"
  && (Object.keys(v).some((k) => /^(0|[1-9]\d*)$/.test(k)) || Object.values(v).some(hasIndexKey));

test("the C# reader accepts exactly what JSON.parse accepts, and writes what JSON.stringify writes", () => {
  const texts = corpus();
  const answers = readWithCSharp(texts);
  let accepted = 0;
  texts.forEach((text, i) => {
    let expected = null;
    try {
      expected = JSON.stringify(JSON.parse(text));
    } catch {
      // refused
    }
    assert.equal(answers[i] !== null, expected !== null, `JSON.parse ${expected !== null ? "accepts" : "refuses"} ${JSON.stringify(text)}, the C# reader does not`);
    if (expected === null) return;
    accepted++;
    if (hasIndexKey(JSON.parse(text))) assert.deepStrictEqual(JSON.parse(answers[i]), JSON.parse(expected), text);
    else assert.equal(answers[i], expected, `read from ${JSON.stringify(text)}`);
  });
  assert.ok(accepted > 3000 && accepted < texts.length - 2000, `accepted ${accepted} of ${texts.length}`);
});

test("numbers: every double reads and prints as in JavaScript, from every way JavaScript writes it", () => {
  const r = prng(1234);
  const view = new DataView(new ArrayBuffer(8));
  const doubles = [];
  while (doubles.length < 4000) {
    view.setUint32(0, Math.floor(r.next() * 2 ** 32));
    view.setUint32(4, Math.floor(r.next() * 2 ** 32));
    const d = view.getFloat64(0);
    if (Number.isFinite(d)) doubles.push(d);
  }
  // Plain magnitudes too, where games live, and the edges of the formats.
  for (let i = 0; i < 2000; i++) doubles.push((r.next() - 0.5) * 10 ** (r.below(40) - 20));
  doubles.push(Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, 2.2250738585072014e-308, 2.225073858507201e-308, 1e21, 1e-7, 1e-6, 999999999999999900000, 0.1, 1 / 3);
  const texts = doubles.flatMap((d) => [String(d), d.toPrecision(17), d.toExponential(), d.toExponential(r.below(20))]);
  const answers = readWithCSharp(texts);
  texts.forEach((text, i) => {
    assert.equal(answers[i], JSON.stringify(JSON.parse(text)), `the C# reader and writer turned ${text} into ${answers[i]}`);
  });
});
