// The chess board's squares from a FEN: colours, pieces, last move and check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { squaresOf } from "../games/chess/board.js";

const START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

test("the start position, white at the bottom, a1 dark and h1 light", () => {
  const s = squaresOf(START);
  assert.equal(s.length, 64);
  assert.deepEqual(s[0], { square: "a8", dark: false, piece: "♜", color: "black", name: "rook", last: false, check: false });
  const a1 = s.find((q) => q.square === "a1");
  const h1 = s.find((q) => q.square === "h1");
  assert.equal(a1.dark, true);
  assert.equal(h1.dark, false);
  assert.equal(s[60].square, "e1");
  assert.equal(s[60].piece, "♔");
  assert.equal(s.filter((q) => q.piece).length, 32);
  assert.equal(s.filter((q) => q.dark).length, 32);
});

test("last move and check are marked; flipped puts black at the bottom", () => {
  // 1. f3 e5 2. g4 Qh4#: white's king on e1 is in check, the queen came from d8.
  const fen = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
  const s = squaresOf(fen, { lastMove: "d8h4", check: true });
  assert.deepEqual(s.filter((q) => q.last).map((q) => q.square).sort(), ["d8", "h4"]);
  assert.deepEqual(s.filter((q) => q.check).map((q) => q.square), ["e1"]);
  const f = squaresOf(fen, { flipped: true });
  assert.equal(f[0].square, "h1");
  assert.equal(f[63].square, "a8");
});

test("garbage in, an empty board out", () => {
  const s = squaresOf("?? !!", { lastMove: "zz" });
  assert.equal(s.length, 64);
  assert.equal(s.filter((q) => q.piece).length, 0);
  assert.equal(squaresOf(undefined).length, 64);
});
