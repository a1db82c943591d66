import { test } from "node:test";
import assert from "node:assert/strict";
import { Chess } from "chess.js";
import { ChessRules, colorsForRound, moveTextOf, MAX_PLIES } from "../games/chess/rules.js";

function started(round = 1) {
  const r = new ChessRules(Chess);
  r.start(["p_a", "p_b"], round);
  return r;
}

function playAll(r, moves) {
  for (const mv of moves) {
    const res = r.play(r.toMove, mv);
    assert.equal(res.ok, true, `${mv}: ${res.reason}`);
  }
}

test("colours alternate by round; round 1 seat 0 is white", () => {
  assert.deepEqual(colorsForRound(["a", "b"], 1), { white: "a", black: "b" });
  assert.deepEqual(colorsForRound(["a", "b"], 2), { white: "b", black: "a" });
  assert.deepEqual(colorsForRound(["a", "b"], 3), { white: "a", black: "b" });
  const r = started(2);
  assert.equal(r.white, "p_b");
  assert.equal(r.toMove, "p_b");
});

test("start needs exactly two players", () => {
  assert.throws(() => new ChessRules(Chess).start(["a"], 1), /exactly 2/);
});

test("legal actions are the 20 opening moves in UCI", () => {
  const r = started();
  const legal = r.legalActions();
  assert.equal(legal.length, 20);
  assert.ok(legal.includes("e2e4"));
  assert.ok(legal.includes("g1f3"));
  assert.ok(legal.every((m) => /^[a-h][1-8][a-h][1-8][qrbn]?$/.test(m)));
});

test("nothing is legal before start", () => {
  const r = new ChessRules(Chess);
  assert.deepEqual(r.legalActions(), []);
  assert.equal(r.toMove, null);
  assert.match(r.play("p_a", "e2e4").reason, /not started/);
});

test("moves are accepted as UCI, {move}, and SAN", () => {
  const r = started();
  assert.deepEqual(r.play("p_a", "e2e4"), { ok: true, san: "e4", uci: "e2e4" });
  assert.deepEqual(r.play("p_b", { move: "e7e5" }), { ok: true, san: "e5", uci: "e7e5" });
  assert.deepEqual(r.play("p_a", "Nf3"), { ok: true, san: "Nf3", uci: "g1f3" });
  assert.deepEqual(r.play("p_b", { move: "Nc6" }), { ok: true, san: "Nc6", uci: "b8c6" });
  assert.deepEqual(r.state().history, ["e4", "e5", "Nf3", "Nc6"]);
  assert.deepEqual(r.state().moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
});

test("illegal moves, wrong turn, strangers and junk are rejected with reasons", () => {
  const r = started();
  assert.match(r.play("p_a", "e2e5").reason, /illegal move e2e5/);
  assert.match(r.play("p_b", "e7e5").reason, /not your turn/);
  assert.match(r.play("p_x", "e2e4").reason, /not playing/);
  assert.match(r.play("p_a", 42).reason, /expected a move/);
  assert.match(r.play("p_a", { from: "e2" }).reason, /expected a move/);
  assert.match(r.play("p_a", "Qh5").reason, /illegal or unreadable/);
  assert.equal(r.state().history.length, 0);
});

test("promotion needs a piece in UCI and accepts under-promotion", () => {
  const Ch = Chess;
  const r = new ChessRules(Ch);
  r.start(["p_a", "p_b"], 1);
  r.board = new Ch("8/P7/8/8/8/8/8/k6K w - - 0 1");
  assert.match(r.play("p_a", "a7a8").reason, /promotion piece required/);
  assert.match(r.play("p_a", "a7a8k").reason, /illegal move|illegal or unreadable/);
  assert.ok(r.legalActions().includes("a7a8q"));
  assert.deepEqual(r.play("p_a", "a7a8n"), { ok: true, san: "a8=N", uci: "a7a8n" });
});

test("fool's mate: checkmate wins for the mover and ends the game", () => {
  const r = started();
  playAll(r, ["f2f3", "e7e5", "g2g4", "d8h4"]);
  assert.deepEqual(r.result, { winner: "p_b", reason: "checkmate" });
  assert.equal(r.over, true);
  assert.equal(r.toMove, null);
  assert.deepEqual(r.legalActions(), []);
  assert.match(r.play("p_a", "e2e4").reason, /over/);
  const s = r.state();
  assert.equal(s.over, true);
  assert.equal(s.check, true);
  assert.deepEqual(s.result, { winner: "p_b", reason: "checkmate" });
});

test("in round 2 the same mate is won by seat 0 playing black", () => {
  const r = started(2);
  playAll(r, ["f2f3", "e7e5", "g2g4", "d8h4"]);
  assert.equal(r.result.winner, "p_a");
});

test("stalemate is a draw with winner null", () => {
  const r = started();
  r.board = new Chess("k7/8/1Q6/8/8/8/8/7K w - - 0 1");
  playAll(r, ["b6c7"]);
  assert.deepEqual(r.result, { winner: null, reason: "stalemate" });
});

test("insufficient material and threefold repetition are draws", () => {
  const r = started();
  r.board = new Chess("k7/8/8/8/8/8/1q6/K7 w - - 0 1");
  playAll(r, ["a1b2"]);
  assert.deepEqual(r.result, { winner: null, reason: "insufficient_material" });

  const t = started();
  playAll(t, ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]);
  assert.deepEqual(t.result, { winner: null, reason: "threefold_repetition" });
});

test("the move limit ends a game as a draw", () => {
  const r = started();
  r.uciHistory = new Array(MAX_PLIES - 1).fill("x");
  playAll(r, ["e2e4"]);
  assert.deepEqual(r.result, { winner: null, reason: "move_limit" });
});

test("abort records an outside result", () => {
  const r = started();
  r.abort({ winner: "p_a", reason: "timeout", forfeitedBy: "p_b" });
  assert.deepEqual(r.result, { winner: "p_a", reason: "timeout" });
  r.abort(null);
  assert.deepEqual(r.result, { winner: null, reason: "ended" });
});

test("state names colours, side to move, and FEN", () => {
  const s = started().state();
  assert.equal(s.fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
  assert.equal(s.turn, "white");
  assert.equal(s.toMove, "p_a");
  assert.equal(s.white, "p_a");
  assert.equal(s.black, "p_b");
  assert.equal(s.actionFormat, "uci");
  assert.equal(s.lastMove, null);
  // The state survives postMessage's structured clone (plain JSON data).
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
});

test("boardText draws the start position", () => {
  const lines = started().boardText().split("\n");
  assert.equal(lines.length, 9);
  assert.equal(lines[0], "8 ♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜");
  assert.equal(lines[4], "4 · · · · · · · ·");
  assert.equal(lines[7], "1 ♖ ♘ ♗ ♕ ♔ ♗ ♘ ♖");
  assert.equal(lines[8], "  a b c d e f g h");
});

test("moveTextOf", () => {
  assert.equal(moveTextOf(" e2e4 "), "e2e4");
  assert.equal(moveTextOf({ move: "e4" }), "e4");
  assert.equal(moveTextOf({}), null);
  assert.equal(moveTextOf(null), null);
});

test("random games always end within the move limit", () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let g = 0; g < 2; g++) {
    const r = started(g + 1);
    while (!r.over) {
      const legal = r.legalActions();
      assert.ok(legal.length > 0);
      assert.equal(r.play(r.toMove, legal[Math.floor(rand() * legal.length)]).ok, true);
    }
    assert.ok(r.result.reason);
  }
});

test("a shorter move limit ends the game as a draw (move_limit)", () => {
  const r = new ChessRules(Chess, { maxPlies: 2 });
  r.start(["pa", "pb"], 1);
  assert.equal(r.play("pa", "e2e4").ok, true);
  assert.equal(r.over, false);
  assert.equal(r.play("pb", "e7e5").ok, true);
  assert.equal(r.over, true);
  assert.deepEqual(r.result, { winner: null, reason: "move_limit" });
});
