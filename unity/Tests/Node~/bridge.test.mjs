// Plugins/WebGL/RcadiaBridge.jslib in a fake browser window, linked the way a Unity WebGL
// build links it (support/emscripten.mjs).

import { test } from "node:test";
import assert from "node:assert/strict";
import { makeFakeWindow } from "../../../web/test-support/fake-window.js";
import { loadBridge, linkLibrary, readLibrary } from "./support/emscripten.mjs";

function setup() {
  const win = makeFakeWindow();
  const delivered = [];
  const errors = [];
  const bridge = loadBridge({
    window: win,
    SendMessage: (objectName, methodName, value) => delivered.push({ objectName, methodName, value }),
    console: { error: (...a) => errors.push(a.join(" ")), log() {}, warn() {} },
  });
  return { win, bridge, delivered, errors };
}

test("the library defines exactly the three functions the C# glue imports", () => {
  const lib = readLibrary();
  const functions = Object.keys(lib).filter((k) => !k.startsWith("$") && !k.includes("__")).sort();
  assert.deepEqual(functions, ["RcadiaBridge_Close", "RcadiaBridge_Open", "RcadiaBridge_Post"]);
  assert.deepEqual(JSON.parse(JSON.stringify(lib.$RcadiaBridge)), { listeners: {}, nextHandle: 1 });
});

test("a function that used a variable of the jslib file would fail once linked", () => {
  // The check behind every other test: linking copies source text, not closures.
  const captured = 42;
  const lib = { Leaky: function () { return captured; } };
  const { fns } = linkLibrary(lib, { window: {}, SendMessage() {} });
  assert.throws(() => fns.Leaky(), /captured is not defined/);
});

test("a message from window.parent reaches SendMessage as its JSON text", () => {
  const { win, bridge, delivered } = setup();
  const handle = bridge.open("RcadiaHostLink1", "ReceiveFromHost");
  assert.equal(handle, 1);
  const msg = { type: "AGENT_ACTION", data: { playerId: "p_1", action: { move: "e2e4", n: [1, 2.5, null] }, actionId: "a_1" } };
  win.dispatch(msg);
  assert.deepEqual(delivered, [{ objectName: "RcadiaHostLink1", methodName: "ReceiveFromHost", value: JSON.stringify(msg) }]);
});

test("messages whose source is not window.parent are not delivered", () => {
  const { win, bridge, delivered } = setup();
  bridge.open("o", "m");
  const stranger = { postMessage() {} };
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: "x", actionId: "a_1" } }, stranger);
  win.dispatch({ type: "AGENT_GAME_START", data: { sessionId: "ses_1", players: ["p_1"], round: 1 } }, null);
  win.dispatch({ type: "AGENT_REQUEST_CONFIGURE", data: {} }, win); // the game's own window
  assert.deepEqual(delivered, []);
});

test("messages that are not { type: string } objects are not delivered", () => {
  const { win, bridge, delivered } = setup();
  bridge.open("o", "m");
  for (const m of [null, undefined, "AGENT_ACTION", 42, true, { type: 42 }, { data: {} }, [], ["AGENT_ACTION"]]) win.dispatch(m);
  assert.deepEqual(delivered, []);
  win.dispatch({ type: "ANYTHING" }); // the C# core decides about types
  assert.equal(delivered.length, 1);
});

test("messages JSON cannot carry are dropped without an exception", () => {
  const { win, bridge, delivered } = setup();
  bridge.open("o", "m");
  const cyclic = { type: "AGENT_STATE", data: {} };
  cyclic.data.self = cyclic;
  win.dispatch(cyclic);
  win.dispatch({ type: "AGENT_ACTION", data: { action: 10n } });
  assert.deepEqual(delivered, []);
  // undefined members vanish, as postMessage's JSON twin would have them.
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: undefined } });
  assert.deepEqual(JSON.parse(delivered[0].value), { type: "AGENT_ACTION", data: { playerId: "p_1" } });
});

test("text survives the trip: non-ASCII, emoji, escapes and lone surrogates", () => {
  const { win, bridge, delivered } = setup();
  bridge.open("o", "m");
  const action = { s: "h\u00e9llo \u4e16\u754c \ud83d\ude00 \u2028 \"q\" \\ \n \u0000", lone: "\ud800x\udc00", big: 1e300, neg: -0.5 };
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action } });
  const text = delivered[0].value;
  assert.ok(!/[\ud800-\udfff](?![\udc00-\udfff])/.test(text.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")), "no lone surrogate in the text, so UTF-8 cannot mangle it");
  assert.deepEqual(JSON.parse(text).data.action, action);
});

test("post parses the C# text and posts it to window.parent with target origin *", () => {
  const { win, bridge } = setup();
  bridge.post('{"type":"AGENT_STATE","data":{"state":{"fen":"x","n":1.50}}}');
  assert.deepEqual(win.sent, [{ message: { type: "AGENT_STATE", data: { state: { fen: "x", n: 1.5 } } }, targetOrigin: "*" }]);
});

test("post of text that is not JSON logs and posts nothing", () => {
  const { win, bridge, errors } = setup();
  assert.doesNotThrow(() => bridge.post("{not json"));
  assert.deepEqual(win.sent, []);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /not posted/);
});

test("close stops only its own listener; unknown and repeated closes are harmless", () => {
  const { win, bridge, delivered } = setup();
  const a = bridge.open("A", "m");
  const b = bridge.open("B", "m");
  assert.notEqual(a, b);
  assert.equal(win.listenerCount(), 2);
  win.dispatch({ type: "T" });
  assert.deepEqual(delivered.map((d) => d.objectName), ["A", "B"]);
  bridge.close(a);
  assert.equal(win.listenerCount(), 1);
  win.dispatch({ type: "T" });
  assert.deepEqual(delivered.map((d) => d.objectName), ["A", "B", "B"]);
  bridge.close(a);
  bridge.close(999);
  bridge.close(0);
  assert.equal(win.listenerCount(), 1);
  bridge.close(b);
  assert.equal(win.listenerCount(), 0);
});

test("each page load starts with fresh state", () => {
  const first = setup();
  first.bridge.open("o", "m");
  first.bridge.open("o", "m");
  const second = setup();
  assert.equal(second.bridge.open("o", "m"), 1);
});
