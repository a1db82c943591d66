import { test } from "node:test";
import assert from "node:assert/strict";
import { RpsMatch, throwOf, compareThrows, MOVES, MAX_THROWS } from "../games/rps/rules.js";

function started(round = 1) {
  const m = new RpsMatch();
  m.start(["p_a", "p_b"], round);
  return m;
}

function both(m, a, b) {
  assert.deepEqual(m.submit("p_a", a), { ok: true, resolved: null });
  const r = m.submit("p_b", b);
  assert.equal(r.ok, true);
  return r.resolved;
}

test("throwOf reads strings and objects, case-insensitively", () => {
  assert.equal(throwOf("rock"), "rock");
  assert.equal(throwOf(" Paper "), "paper");
  assert.equal(throwOf({ move: "scissors" }), "scissors");
  assert.equal(throwOf({ throw: "rock" }), "rock");
  assert.equal(throwOf({ choice: "ROCK" }), "rock");
  assert.equal(throwOf("lizard"), null);
  assert.equal(throwOf(3), null);
  assert.equal(throwOf(null), null);
});

test("compareThrows", () => {
  assert.equal(compareThrows("rock", "scissors"), 1);
  assert.equal(compareThrows("scissors", "paper"), 1);
  assert.equal(compareThrows("paper", "rock"), 1);
  assert.equal(compareThrows("rock", "paper"), -1);
  assert.equal(compareThrows("rock", "rock"), 0);
});

test("start needs two players; both get all three moves", () => {
  assert.throws(() => new RpsMatch().start(["a", "b", "c"], 1), /exactly 2/);
  const m = started();
  assert.deepEqual(m.legalActions("p_a"), MOVES);
  assert.deepEqual(m.legalActions("p_b"), ["rock", "paper", "scissors"]);
  assert.deepEqual(m.legalActions("p_x"), []);
  assert.deepEqual(m.waitingFor(), ["p_a", "p_b"]);
});

test("a throw resolves only when both are in, and the first throw stays hidden", () => {
  const m = started();
  assert.deepEqual(m.submit("p_a", "rock"), { ok: true, resolved: null });
  assert.deepEqual(m.legalActions("p_a"), []);
  assert.deepEqual(m.waitingFor(), ["p_b"]);
  const s = m.state();
  assert.deepEqual(s.thrown, ["p_a"]);
  assert.ok(!JSON.stringify(s).includes("rock"), "the pending throw must not leak");
  const r = m.submit("p_b", "scissors");
  assert.deepEqual(r, { ok: true, resolved: { throws: { p_a: "rock", p_b: "scissors" }, winner: "p_a" } });
  assert.deepEqual(m.state().score, { p_a: 1, p_b: 0 });
  assert.equal(m.throwNumber, 2);
  assert.deepEqual(m.legalActions("p_a"), MOVES);
});

test("rejections: bad throw, double throw, stranger, before start, after the end", () => {
  assert.match(new RpsMatch().submit("p_a", "rock").reason, /not started/);
  const m = started();
  assert.match(m.submit("p_a", "lizard").reason, /expected/);
  assert.match(m.submit("p_x", "rock").reason, /not playing/);
  m.submit("p_a", "rock");
  assert.match(m.submit("p_a", "paper").reason, /already threw in throw 1/);
  assert.equal(m.submit("p_b", "paper").resolved.winner, "p_b");
});

test("first to two wins; ties do not count", () => {
  const m = started();
  assert.equal(both(m, "rock", "rock").winner, null);
  assert.equal(both(m, "paper", "rock").winner, "p_a");
  assert.equal(both(m, "rock", "paper").winner, "p_b");
  assert.equal(m.over, false);
  assert.equal(both(m, "scissors", "paper").winner, "p_a");
  assert.equal(m.over, true);
  assert.equal(m.result.winner, "p_a");
  assert.equal(m.result.reason, "best_of_three");
  assert.deepEqual(m.result.score, { p_a: 2, p_b: 1 });
  assert.equal(m.result.throws.length, 4);
  assert.deepEqual(m.legalActions("p_a"), []);
  assert.match(m.submit("p_a", "rock").reason, /over/);
  assert.deepEqual(m.state().result, m.result);
});

test("a match of endless ties ends at the throw limit as a draw", () => {
  const m = started();
  for (let i = 0; i < MAX_THROWS; i++) both(m, "rock", "rock");
  assert.deepEqual({ winner: m.result.winner, reason: m.result.reason }, { winner: null, reason: "throw_limit" });
});

test("at the throw limit the leader wins", () => {
  const m = started();
  both(m, "paper", "rock");
  for (let i = 1; i < MAX_THROWS; i++) both(m, "rock", "rock");
  assert.equal(m.result.winner, "p_a");
  assert.equal(m.result.reason, "throw_limit");
});

test("abort keeps the score so far", () => {
  const m = started();
  both(m, "paper", "rock");
  m.abort({ winner: "p_b", reason: "timeout" });
  assert.equal(m.over, true);
  assert.deepEqual(m.result.score, { p_a: 1, p_b: 0 });
  assert.equal(m.result.winner, "p_b");
  m.abort(undefined);
  assert.deepEqual([m.result.winner, m.result.reason], [null, "ended"]);
});

test("start resets everything for the next round", () => {
  const m = started();
  both(m, "paper", "rock");
  both(m, "paper", "rock");
  m.start(["p_a", "p_b"], 2);
  assert.equal(m.over, false);
  assert.equal(m.round, 2);
  assert.deepEqual(m.state().score, { p_a: 0, p_b: 0 });
  assert.deepEqual(m.state().throws, []);
});
