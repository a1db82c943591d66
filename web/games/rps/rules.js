// Rock-paper-scissors, best of three, DOM-free. Both players throw at once
// (the platform holds the first throw until the second is in, then releases
// both); a throw resolves once both are in. The first to win two throws wins
// the match. Tied throws do not count and are replayed, but at most
// MAX_THROWS throws are played so a match between two copies of the same
// deterministic agent still ends (then the higher score wins, or a draw).

export const MOVES = Object.freeze(["rock", "paper", "scissors"]);
export const WINS_NEEDED = 2;
export const MAX_THROWS = 9;

const BEATS = { rock: "scissors", paper: "rock", scissors: "paper" };

/**
 * The throw in an action: "rock", or an object { move | throw | choice: "rock" }.
 * Case and surrounding spaces are ignored. Returns null when it is none.
 */
export function throwOf(action) {
  let text = action;
  if (action && typeof action === "object") text = action.move ?? action.throw ?? action.choice;
  if (typeof text !== "string") return null;
  const t = text.trim().toLowerCase();
  return MOVES.includes(t) ? t : null;
}

/** 0 when a and b tie, 1 when a wins, -1 when b wins. */
export function compareThrows(a, b) {
  if (a === b) return 0;
  return BEATS[a] === b ? 1 : -1;
}

export class RpsMatch {
  constructor() {
    this.players = [];
    this.round = 1;
    this.score = {};
    /** @type {Array<{throws: Record<string, string>, winner: string|null}>} */
    this.throws = [];
    this.pending = {};
    /** @type {null | {winner: string|null, reason: string, score: Record<string, number>, throws: Array<any>}} */
    this.result = null;
    this.started = false;
  }

  start(players, round) {
    if (!Array.isArray(players) || players.length !== 2) throw new Error("rock-paper-scissors needs exactly 2 players");
    this.players = players.slice();
    this.round = round ?? 1;
    this.score = Object.fromEntries(players.map((p) => [p, 0]));
    this.throws = [];
    this.pending = {};
    this.result = null;
    this.started = true;
  }

  get over() { return this.result !== null; }

  /** 1-based number of the throw being played. */
  get throwNumber() { return this.throws.length + 1; }

  /** What this player may submit now: all three moves while they still owe a throw. */
  legalActions(playerId) {
    if (!this.started || this.over || !this.players.includes(playerId) || playerId in this.pending) return [];
    return MOVES.slice();
  }

  /** Players who still owe a throw in the current throw. */
  waitingFor() {
    if (!this.started || this.over) return [];
    return this.players.filter((p) => !(p in this.pending));
  }

  /**
   * Record a throw. When it completes the throw, it is resolved.
   * @returns {{ok: true, resolved: null | {throws: Record<string,string>, winner: string|null}} | {ok: false, reason: string}}
   */
  submit(playerId, action) {
    if (!this.started) return { ok: false, reason: "the match has not started" };
    if (this.over) return { ok: false, reason: "the match is over" };
    if (!this.players.includes(playerId)) return { ok: false, reason: "you are not playing in this match" };
    if (playerId in this.pending) return { ok: false, reason: `you already threw in throw ${this.throwNumber}` };
    const t = throwOf(action);
    if (!t) return { ok: false, reason: 'expected "rock", "paper" or "scissors"' };
    this.pending[playerId] = t;
    if (Object.keys(this.pending).length < this.players.length) return { ok: true, resolved: null };
    return { ok: true, resolved: this._resolve() };
  }

  /** End the match from outside (the platform ended the session). */
  abort(result) {
    this.result = {
      winner: result && result.winner !== undefined ? result.winner : null,
      reason: (result && result.reason) || "ended",
      score: { ...this.score },
      throws: this.throws.slice(),
    };
  }

  /**
   * Public state. Throws of the current, unresolved throw stay hidden: only
   * who has thrown is shown, so the slower player learns nothing.
   */
  state() {
    return {
      game: "rps",
      round: this.round,
      players: this.players.slice(),
      throwNumber: this.throwNumber,
      score: { ...this.score },
      throws: this.throws.map((t) => ({ throws: { ...t.throws }, winner: t.winner })),
      thrown: this.players.filter((p) => p in this.pending),
      over: this.over,
      result: this.result,
    };
  }

  /** @private */
  _resolve() {
    const [a, b] = this.players;
    const throws = { [a]: this.pending[a], [b]: this.pending[b] };
    const c = compareThrows(throws[a], throws[b]);
    const winner = c === 0 ? null : c > 0 ? a : b;
    if (winner) this.score[winner] += 1;
    const resolved = { throws, winner };
    this.throws.push(resolved);
    this.pending = {};
    if (winner && this.score[winner] >= WINS_NEEDED) {
      this.result = { winner, reason: "best_of_three", score: { ...this.score }, throws: this.throws.slice() };
    } else if (this.throws.length >= MAX_THROWS) {
      const lead = this.score[a] === this.score[b] ? null : this.score[a] > this.score[b] ? a : b;
      this.result = { winner: lead, reason: "throw_limit", score: { ...this.score }, throws: this.throws.slice() };
    }
    return resolved;
  }
}
