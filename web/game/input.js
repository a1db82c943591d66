// Keyboard to the contract's 20 actions: arrows or A/D move, Shift makes the move slow,
// Space, Up or W jump, X shoots. Read once per tick by the stage. DOM-free apart from the
// key codes, so Node tests it as it is.

import { actionOf } from "./engine.js";

const LEFT = new Set(["ArrowLeft", "KeyA"]);
const RIGHT = new Set(["ArrowRight", "KeyD"]);
const SLOW = new Set(["ShiftLeft", "ShiftRight"]);
const JUMP = new Set(["Space", "ArrowUp", "KeyW"]);
const SHOOT = new Set(["KeyX"]);

/** Codes the game handles while the canvas has focus (the page does not scroll on them). */
export const GAME_KEYS = new Set([...LEFT, ...RIGHT, ...SLOW, ...JUMP, ...SHOOT, "ArrowDown"]);

export class Keys {
  constructor() {
    this.held = new Set();
  }
  down(code) {
    this.held.add(code);
  }
  up(code) {
    this.held.delete(code);
  }
  clear() {
    this.held.clear();
  }
  any(set) {
    for (const c of set) if (this.held.has(c)) return true;
    return false;
  }
  /** The action index for what is held now. Left and right together cancel out. */
  action() {
    const dir = (this.any(RIGHT) ? 1 : 0) - (this.any(LEFT) ? 1 : 0);
    return actionOf({ dir, slow: this.any(SLOW), jump: this.any(JUMP), shoot: this.any(SHOOT) });
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
