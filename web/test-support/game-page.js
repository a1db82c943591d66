// Load a game page's module in node with a fake window and document, so a
// test can play the whole game through the real SDK.
import { register } from "node:module";

import { makeFakeWindow } from "./fake-window.js";
import { fileUrlForPath } from "./served-paths.js";

register("./served-paths-hooks.js", import.meta.url);

let loads = 0;

/**
 * @param {string} urlPath e.g. "/games/chess/game.js"
 * @param {{ onPost?: (message: any) => void }} [opts] sees what the game posts to its host
 */
export async function loadGamePage(urlPath, { onPost } = {}) {
  const win = makeFakeWindow({ onPost });
  const elements = new Map();
  const document = {
    getElementById(id) {
      if (!elements.has(id)) elements.set(id, new FakeElement(document, "div", id));
      return elements.get(id);
    },
    createElement(tag) { return new FakeElement(document, tag); },
  };
  document.body = new FakeElement(document, "body");
  // The pages mark it when their modules start (`data-booted`, for game/boot-check.js).
  document.documentElement = new FakeElement(document, "html");
  globalThis.window = win;
  globalThis.document = document;
  // A fresh module instance per load: the query string makes a new URL.
  await import(`${fileUrlForPath(urlPath)}?load=${++loads}`);
  let actionSeq = 0;
  return {
    win,
    text: (id) => document.getElementById(id).textContent,
    el: (id) => document.getElementById(id),
    send: (type, data) => win.dispatch({ type, data }),
    act: (playerId, action) => win.dispatch({ type: "AGENT_ACTION", data: { playerId, action, actionId: `a_${++actionSeq}` } }),
    /** Messages the game sent since the last call. */
    drain() { const out = win.sent.map((s) => s.message); win.sent.length = 0; return out; },
  };
}


/** Just enough of a DOM element for the game pages: children, attributes, classes, text. */
export class FakeElement {
  constructor(ownerDocument, tagName, id = "") {
    this.ownerDocument = ownerDocument;
    this.tagName = tagName.toUpperCase();
    this.id = id;
    this.children = [];
    this.attributes = {};
    this.dataset = {};
    this.className = "";
    this._text = "";
  }
  // Children are elements or strings (text, as append and replaceChildren take them).
  get textContent() { return this._text + this.children.map((c) => (typeof c === "string" ? c : c.textContent)).join(""); }
  set textContent(v) { this.children = []; this._text = String(v); }
  setAttribute(k, v) { this.attributes[k] = String(v); }
  getAttribute(k) { return this.attributes[k] ?? null; }
  append(...nodes) { this.children.push(...nodes); }
  prepend(...nodes) { this.children.unshift(...nodes); }
  replaceChildren(...nodes) { this._text = ""; this.children = nodes; }
  addEventListener(type, fn) {
    this.listeners = this.listeners || {};
    this.listeners[type] = [...(this.listeners[type] || []), fn];
  }
  /** A click as a person's: nothing happens on a disabled button. */
  click() {
    if (this.disabled) return;
    for (const fn of (this.listeners && this.listeners.click) || []) fn({ type: "click", target: this });
  }
  /** A canvas context that draws nothing (the pages' logos). */
  getContext() { return new Proxy({}, { get: (t, k) => (k in t ? t[k] : () => {}) }); }
}
