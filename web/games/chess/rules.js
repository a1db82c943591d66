// Chess rules for the house chess game, DOM-free. The move generator is the
// npm package chess.js; its Chess class is passed in because the browser loads
// it from /games/vendor/chess.js while node tests import it by package name.
//
// Actions are UCI strings ("e2e4", promotions "e7e8q"). Legal actions are
// published in UCI. An action may be the string or { move: "e2e4" }; SAN
// ("e4", "Nf3", "O-O") is accepted too because agents often speak it.

// Safety net so a game between two random movers always ends: chess.js
// already ends it at the fifty-move rule or threefold repetition, this only
// catches pathological cases.
export const MAX_PLIES = 600;

const UCI = /^([a-h][1-8])([a-h][1-8])([qrbn])?$/;

/**
 * Colours alternate by round: round 1 seat 0 is white, round 2 seat 0 is black, ...
 * @param {string[]} players playerIds in seat order
 * @param {number} round 1-based
 */
export function colorsForRound(players, round) {
  const [a, b] = players;
  return (round ?? 1) % 2 === 1 ? { white: a, black: b } : { white: b, black: a };
}

/** The move text of an action, or null when the action is not a move at all. */
export function moveTextOf(action) {
  if (typeof action === "string") return action.trim();
  if (action && typeof action === "object" && typeof action.move === "string") return action.move.trim();
  return null;
}

const UNICODE = {
  wk: "♔", wq: "♕", wr: "♖", wb: "♗", wn: "♘", wp: "♙",
  bk: "♚", bq: "♛", br: "♜", bb: "♝", bn: "♞", bp: "♟",
};

export class ChessRules {
  /**
   * @param {new (fen?: string) => any} Chess the chess.js class
   * @param {{maxPlies?: number}} [options] a shorter move limit (a draw, reason move_limit)
   */
  constructor(Chess, { maxPlies = MAX_PLIES } = {}) {
    this._Chess = Chess;
    this.maxPlies = Math.max(1, Math.min(MAX_PLIES, Math.floor(maxPlies) || MAX_PLIES));
    this.board = new Chess();
    this.players = [];
    this.round = 1;
    this.white = null;
    this.black = null;
    this.uciHistory = [];
    this.lastMove = null;
    /** @type {null | {winner: string|null, reason: string}} */
    this.result = null;
    this.started = false;
  }

  /** Reset for a new game with these players (seat order) in this round. */
  start(players, round) {
    if (!Array.isArray(players) || players.length !== 2) throw new Error("chess needs exactly 2 players");
    this.board = new this._Chess();
    this.players = players.slice();
    this.round = round ?? 1;
    ({ white: this.white, black: this.black } = colorsForRound(this.players, this.round));
    this.uciHistory = [];
    this.lastMove = null;
    this.result = null;
    this.started = true;
  }

  get over() { return this.result !== null; }

  /** The playerId on move, or null before start and after the end. */
  get toMove() {
    if (!this.started || this.over) return null;
    return this.board.turn() === "w" ? this.white : this.black;
  }

  colorOf(playerId) {
    if (playerId === this.white) return "white";
    if (playerId === this.black) return "black";
    return null;
  }

  /** Legal moves of the side to move, as UCI strings. */
  legalActions() {
    if (!this.toMove) return [];
    return this._verboseMoves().map(toUci);
  }

  /**
   * chess.js builds every verbose move with its SAN by regenerating all legal
   * moves, so one call costs O(moves^2); each position is asked twice (publish
   * legal actions, then match the action), so remember the last position's.
   * @private
   */
  _verboseMoves() {
    const fen = this.board.fen();
    if (!this._movesCache || this._movesCache.fen !== fen) {
      this._movesCache = { fen, moves: this.board.moves({ verbose: true }) };
    }
    return this._movesCache.moves;
  }

  /**
   * Apply a player's action.
   * @returns {{ok: true, san: string, uci: string} | {ok: false, reason: string}}
   */
  play(playerId, action) {
    if (!this.started) return { ok: false, reason: "the game has not started" };
    if (this.over) return { ok: false, reason: "the game is over" };
    if (this.colorOf(playerId) === null) return { ok: false, reason: "you are not playing in this game" };
    if (playerId !== this.toMove) return { ok: false, reason: `not your turn: ${this.board.turn() === "w" ? "white" : "black"} to move` };
    const text = moveTextOf(action);
    if (!text) return { ok: false, reason: 'expected a move string like "e2e4" or {"move": "e2e4"}' };
    const found = this._find(text);
    if (!found.move) return { ok: false, reason: found.reason };
    const m = this.board.move({ from: found.move.from, to: found.move.to, promotion: found.move.promotion });
    const uci = toUci(m);
    this.uciHistory.push(uci);
    this.lastMove = { san: m.san, uci, by: playerId };
    this.result = this._outcome(playerId);
    return { ok: true, san: m.san, uci };
  }

  /** End the game from outside (the platform ended the session). */
  abort(result) {
    this.result = result && typeof result === "object" ? { winner: result.winner ?? null, reason: result.reason ?? "ended" } : { winner: null, reason: "ended" };
  }

  /** The public state published to the platform. */
  state() {
    return {
      game: "chess",
      actionFormat: "uci",
      fen: this.board.fen(),
      turn: this.board.turn() === "w" ? "white" : "black",
      toMove: this.toMove,
      white: this.white,
      black: this.black,
      round: this.round,
      history: this.board.history(),
      moves: this.uciHistory.slice(),
      lastMove: this.lastMove,
      check: this.board.inCheck(),
      over: this.over,
      result: this.result,
    };
  }

  /** Board as 8 lines of Unicode pieces, white at the bottom, with coordinates. */
  boardText() {
    const rows = this.board.board();
    const lines = rows.map((row, i) => `${8 - i} ${row.map((sq) => (sq ? UNICODE[sq.color + sq.type] : "·")).join(" ")}`);
    lines.push("  a b c d e f g h");
    return lines.join("\n");
  }

  /** @private */
  _find(text) {
    const moves = this._verboseMoves();
    const uci = UCI.exec(text);
    if (uci) {
      const [, from, to, promotion] = uci;
      const candidates = moves.filter((m) => m.from === from && m.to === to);
      if (candidates.length === 0) return { reason: `illegal move ${text}` };
      const match = candidates.find((m) => (m.promotion ?? undefined) === (promotion ?? undefined));
      if (match) return { move: match };
      return { reason: promotion ? `illegal promotion ${text}` : `promotion piece required, for example ${from}${to}q` };
    }
    // SAN, ignoring check marks and annotations agents sometimes add.
    const bare = (s) => s.replace(/[+#!?]+$/, "").replace(/^0-0-0$/, "O-O-O").replace(/^0-0$/, "O-O");
    const wanted = bare(text);
    const match = moves.find((m) => bare(m.san) === wanted);
    if (match) return { move: match };
    return { reason: `illegal or unreadable move ${JSON.stringify(text)}; legal moves are UCI strings like e2e4` };
  }

  /** @private */
  _outcome(mover) {
    const b = this.board;
    if (b.isCheckmate()) return { winner: mover, reason: "checkmate" };
    if (b.isStalemate()) return { winner: null, reason: "stalemate" };
    if (b.isInsufficientMaterial()) return { winner: null, reason: "insufficient_material" };
    if (b.isThreefoldRepetition()) return { winner: null, reason: "threefold_repetition" };
    if (b.isDrawByFiftyMoves()) return { winner: null, reason: "fifty_move_rule" };
    if (this.uciHistory.length >= this.maxPlies) return { winner: null, reason: "move_limit" };
    return null;
  }
}

function toUci(m) {
  return m.from + m.to + (m.promotion ?? "");
}
