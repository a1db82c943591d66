// Keyboard to the contract's 20 actions: arrows or A/D move, Shift makes the move slow,
// Space, Up or W jump, X shoots. The stage takes one action per tick (`tick()`). DOM-free
// apart from the key codes, so Node tests it as it is.
//
// Presses and releases are latched until a tick has seen them: a tap between two ticks still
// counts for one tick, and a release followed by a new press within one tick shows one tick
// released first (the egg boost needs a fresh jump press). The replay records the actions the
// ticks took, so this changes nothing for determinism.

import { actionOf } from "./engine.js";

const LEFT = new Set(["ArrowLeft", "KeyA"]);
const RIGHT = new Set(["ArrowRight", "KeyD"]);
const SLOW = new Set(["ShiftLeft", "ShiftRight"]);
const JUMP = new Set(["Space", "ArrowUp", "KeyW"]);
const SHOOT = new Set(["KeyX"]);

/** Codes the game handles while the canvas has focus (the page does not scroll on them). */
export const GAME_KEYS = new Set([...LEFT, ...RIGHT, ...SLOW, ...JUMP, ...SHOOT, "ArrowDown"]);

/** Changes of one key that wait for a tick; beyond this, the oldest press-release pair goes. */
const MAX_PENDING = 8;

export class Keys {
  constructor() {
    /** The codes physically held now. */
    this.held = new Set();
    /** Per code: the states (true pressed, false released) no tick has seen yet, oldest first. */
    this.pending = new Map();
  }
  down(code) {
    if (this.held.has(code)) return; // a repeat, or a second source of the same key
    this.held.add(code);
    this.push(code, true);
  }
  up(code) {
    if (!this.held.has(code)) return;
    this.held.delete(code);
    this.push(code, false);
  }
  push(code, state) {
    const q = this.pending.get(code) || [];
    q.push(state);
    if (q.length > MAX_PENDING) q.splice(0, 2);
    this.pending.set(code, q);
  }
  /** Everything released at once (focus lost): no latched press survives. */
  clear() {
    this.held.clear();
    this.pending.clear();
  }
  /** Forgets the presses and releases no tick has seen (a new run starts from what is held). */
  settle() {
    this.pending.clear();
  }
  /** Whether `code` counts as held for the next tick. */
  on(code) {
    const q = this.pending.get(code);
    return q && q.length ? q[0] : this.held.has(code);
  }
  any(set) {
    for (const c of set) if (this.on(c)) return true;
    return false;
  }
  /** The action index the next tick takes (without taking it). Left and right together
   * cancel out. */
  action() {
    const dir = (this.any(RIGHT) ? 1 : 0) - (this.any(LEFT) ? 1 : 0);
    return actionOf({ dir, slow: this.any(SLOW), jump: this.any(JUMP), shoot: this.any(SHOOT) });
  }
  /** The action of one tick: each latched change is seen by exactly one tick, in order. */
  tick() {
    const a = this.action();
    for (const [code, q] of this.pending) {
      q.shift();
      if (!q.length) this.pending.delete(code);
    }
    return a;
  }
}

/** The keys a test presses for an action (the inverse of `Keys.action`). */
export function keysFor(action) {
  const move = Math.floor(action / 4);
  const b = action % 4;
  const codes = [];
  if (move === 0 || move === 3) codes.push("ArrowLeft");
  if (move === 2 || move === 4) codes.push("ArrowRight");
  if (move >= 3) codes.push("ShiftLeft");
  if (b === 1 || b === 3) codes.push("Space");
  if (b >= 2) codes.push("KeyX");
  return codes;
}
