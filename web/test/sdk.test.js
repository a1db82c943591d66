import { test } from "node:test";
import assert from "node:assert/strict";
import { RcadiaAgent } from "../sdk/rcadia-agent.js";
import DefaultExport from "../sdk/rcadia-agent.js";
import { makeFakeWindow } from "../test-support/fake-window.js";

function setup(config = { minPlayers: 2, maxPlayers: 2, gameType: "chess" }) {
  const win = makeFakeWindow();
  const agent = new RcadiaAgent(config, { window: win });
  return { win, agent };
}

test("version is 2.0.0 and the module also has a default export", () => {
  assert.equal(RcadiaAgent.version, "2.0.0");
  assert.equal(DefaultExport, RcadiaAgent);
});

test("constructing without any window throws a clear error", () => {
  assert.equal(globalThis.window, undefined);
  assert.throws(() => new RcadiaAgent({}), /needs a window/);
});

test("AGENT_CONFIGURE is sent on construct with sdkVersion and only the optional fields set", () => {
  const { win } = setup({ minPlayers: 2, maxPlayers: 4, turnBased: false, simultaneous: true, gameType: "rps", autoRematch: true, turnTimeout: 0 });
  assert.equal(win.sent.length, 1);
  assert.equal(win.sent[0].targetOrigin, "*");
  assert.deepEqual(win.sent[0].message, {
    type: "AGENT_CONFIGURE",
    data: { minPlayers: 2, maxPlayers: 4, turnBased: false, simultaneous: true, gameType: "rps", sdkVersion: "2.0.0", turnTimeout: 0, autoRematch: true },
  });
});

test("AGENT_CONFIGURE defaults: 2 players, turn based, sequential, no optional fields", () => {
  const { win } = setup({});
  assert.deepEqual(win.sentOfType("AGENT_CONFIGURE")[0], {
    minPlayers: 2, maxPlayers: 2, turnBased: true, simultaneous: false, gameType: "custom", sdkVersion: "2.0.0",
  });
});

test("a config the server would refuse throws at once, saying what to fix, and sends nothing", () => {
  const cases = [
    [{ minPlayers: 0 }, "config.minPlayers must be a whole number from 1 to 64, got 0"],
    [{ minPlayers: 65 }, "config.minPlayers must be a whole number from 1 to 64, got 65"],
    [{ minPlayers: "2" }, 'config.minPlayers must be a whole number from 1 to 64, got "2"'],
    [{ minPlayers: 2.5 }, "got 2.5"],
    [{ minPlayers: 3, maxPlayers: 2 }, "config.maxPlayers must be a whole number from minPlayers (3) to 64, or omitted for minPlayers; got 2"],
    [{ maxPlayers: 65 }, "config.maxPlayers must be a whole number from minPlayers (2) to 64"],
    [{ turnTimeout: -0.5 }, "config.turnTimeout is in seconds and must be a finite number from 0 to 31536000 (365 days) (0: no clock; omitted: the platform default); got -0.5"],
    [{ turnTimeout: 1e12 }, "from 0 to 31536000 (365 days)"],
    [{ turnTimeout: 31536000.5 }, "got 31536000.5"],
    [{ turnTimeout: NaN }, "got NaN"],
    [{ turnTimeout: Infinity }, "got Infinity"],
    [{ turnTimeout: "30" }, 'got "30"'],
    [{ maxTurnTimeouts: -1 }, "config.maxTurnTimeouts must be a whole number, 0 or more (omitted: the platform default); got -1"],
    [{ maxTurnTimeouts: 1.5 }, "got 1.5"],
    [{ maxTurnTimeouts: 1e21 }, "got 1e+21"],
    [{ turnBased: "false" }, 'config.turnBased must be true or false (omitted: the default); got "false"'],
    [{ simultaneous: 1 }, "config.simultaneous must be true or false"],
    [{ forfeitOnTimeout: "no" }, 'config.forfeitOnTimeout must be true or false (omitted: the default); got "no"'],
    [{ autoRematch: "true" }, 'config.autoRematch must be true or false (omitted: the default); got "true"'],
  ];
  for (const [config, message] of cases) {
    const win = makeFakeWindow();
    assert.throws(() => new RcadiaAgent(config, { window: win }), (e) => e instanceof RangeError && e.message.includes(message), JSON.stringify(config));
    assert.equal(win.sent.length, 0);
  }
});

test("the edges the server accepts are sent as they are; null means not set", () => {
  const { win } = setup({ minPlayers: 1, maxPlayers: 64, turnTimeout: 0, maxTurnTimeouts: 0 });
  assert.deepEqual(win.sentOfType("AGENT_CONFIGURE")[0], {
    minPlayers: 1, maxPlayers: 64, turnBased: true, simultaneous: false, gameType: "custom", sdkVersion: "2.0.0", turnTimeout: 0, maxTurnTimeouts: 0,
  });
  const year = setup({ turnTimeout: 31536000 });
  assert.equal(year.win.sentOfType("AGENT_CONFIGURE")[0].turnTimeout, 31536000);
  const nulls = setup({ minPlayers: 3, maxPlayers: null, turnTimeout: null, maxTurnTimeouts: null });
  assert.equal(nulls.win.sentOfType("AGENT_CONFIGURE")[0].maxPlayers, 3);
});

test("AGENT_REQUEST_CONFIGURE re-sends the same AGENT_CONFIGURE and clears isConfigured", () => {
  const { win, agent } = setup();
  win.dispatch({ type: "AGENT_SESSION_START", data: { sessionId: "ses_1", round: 1, players: [] } });
  assert.equal(agent.isConfigured, true);
  win.dispatch({ type: "AGENT_REQUEST_CONFIGURE", data: {} });
  const configs = win.sentOfType("AGENT_CONFIGURE");
  assert.equal(configs.length, 2);
  assert.deepEqual(configs[1], configs[0]);
  assert.equal(agent.isConfigured, false);
});

test("messages whose source is not window.parent are ignored", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onAction((...a) => calls.push(a));
  agent.onGameStart((i) => calls.push(i));
  const stranger = { postMessage() {} };
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: "x", actionId: "a_1" } }, stranger);
  win.dispatch({ type: "AGENT_GAME_START", data: { sessionId: "ses_1", players: ["p_1"], round: 1 } }, null);
  win.dispatch({ type: "AGENT_REQUEST_CONFIGURE", data: {} }, stranger);
  assert.deepEqual(calls, []);
  assert.equal(agent.isConfigured, false);
  assert.equal(agent.sessionId, null);
  assert.equal(win.sentOfType("AGENT_CONFIGURE").length, 1);
});

test("malformed and unknown messages are ignored", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onAction((...a) => calls.push(a));
  win.dispatch(null);
  win.dispatch("AGENT_ACTION");
  win.dispatch({ type: 42 });
  win.dispatch({ type: "SOMETHING_ELSE", data: {} });
  win.dispatch({ type: "AGENT_CONFIGURE", data: {} }); // our own echo when the page is not framed
  assert.deepEqual(calls, []);
  assert.equal(agent.isConfigured, false);
});

test("isConfigured starts false and becomes true on the host's first message", () => {
  const { win, agent } = setup();
  assert.equal(agent.isConfigured, false);
  win.dispatch({ type: "AGENT_SESSION_START", data: { sessionId: "ses_1", round: 1, players: [] } });
  assert.equal(agent.isConfigured, true);
});

test("AGENT_SESSION_START updates sessionId, round and players without calling onGameStart", () => {
  const { win, agent } = setup();
  let started = 0;
  agent.onGameStart(() => started++);
  assert.equal(agent.sessionId, null);
  assert.deepEqual(agent.players, []);
  assert.equal(agent.round, 0);
  win.dispatch({ type: "AGENT_SESSION_START", data: { sessionId: "ses_a", round: 3, players: ["p_1"] } });
  assert.equal(agent.sessionId, "ses_a");
  assert.equal(agent.round, 3);
  assert.deepEqual(agent.players, ["p_1"]);
  assert.equal(started, 0);
});

test("AGENT_GAME_START updates the session fields and calls onGameStart", () => {
  const { win, agent } = setup();
  const starts = [];
  agent.onGameStart((info) => starts.push(info));
  win.dispatch({ type: "AGENT_SESSION_START", data: { sessionId: "ses_a", round: 1, players: [] } });
  win.dispatch({ type: "AGENT_GAME_START", data: { sessionId: "ses_b", players: ["p_1", "p_2"], round: 2 } });
  assert.deepEqual(starts, [{ sessionId: "ses_b", players: ["p_1", "p_2"], round: 2 }]);
  assert.equal(agent.sessionId, "ses_b");
  assert.equal(agent.round, 2);
  assert.deepEqual(agent.players, ["p_1", "p_2"]);
  // The game gets a copy; mutating it must not change the SDK's view.
  starts[0].players.push("p_x");
  assert.deepEqual(agent.players, ["p_1", "p_2"]);
  // A host that sends names (the house host and the bridge do) adds them; nothing else does.
  win.dispatch({ type: "AGENT_GAME_START", data: { sessionId: "ses_c", players: ["p_1", "p_2"], round: 3, names: { p_1: "Fish", p_2: 7 } } });
  assert.deepEqual(starts[1], { sessionId: "ses_c", players: ["p_1", "p_2"], round: 3, names: { p_1: "Fish" } });
  assert.deepEqual(agent.playerNames, { p_1: "Fish" });
});

test("AGENT_ACTION calls onAction(playerId, action, actionId)", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onAction((...a) => calls.push(a));
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: { move: "e2e4" }, actionId: "a_1" } });
  assert.deepEqual(calls, [["p_1", { move: "e2e4" }, "a_1"]]);
});

test("repeats of an actionId are dropped; actions without one are never dropped", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onAction((pid, action, id) => calls.push([pid, action, id]));
  const msg = { type: "AGENT_ACTION", data: { playerId: "p_1", action: "rock", actionId: "a_1" } };
  win.dispatch(msg);
  win.dispatch(msg);
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_2", action: "paper", actionId: "a_1" } });
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_2", action: "paper", actionId: "a_2" } });
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_2", action: "x" } });
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_2", action: "x" } });
  assert.deepEqual(calls, [
    ["p_1", "rock", "a_1"], ["p_2", "paper", "a_2"], ["p_2", "x", undefined], ["p_2", "x", undefined],
  ]);
});

test("the duplicate window is bounded but recent ids stay remembered", () => {
  const { win, agent } = setup();
  let n = 0;
  agent.onAction(() => n++);
  for (let i = 0; i < 3000; i++) {
    win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: i, actionId: `a_${i}` } });
  }
  assert.equal(n, 3000);
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: 0, actionId: "a_2999" } });
  assert.equal(n, 3000);
  assert.ok(agent._seenActionIds.size <= 2048);
});

test("AGENT_TIMEOUT calls onTimeout(playerId, {strike, maxStrikes, final})", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onTimeout((...a) => calls.push(a));
  win.dispatch({ type: "AGENT_TIMEOUT", data: { playerId: "p_1", strike: 2, maxStrikes: 2, final: true } });
  win.dispatch({ type: "AGENT_TIMEOUT", data: { playerId: "p_2", strike: 1, maxStrikes: 2, final: false } });
  assert.deepEqual(calls, [
    ["p_1", { strike: 2, maxStrikes: 2, final: true }],
    ["p_2", { strike: 1, maxStrikes: 2, final: false }],
  ]);
});

test("AGENT_SESSION_END calls onSessionEnd({sessionId, result, reason})", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onSessionEnd((i) => calls.push(i));
  win.dispatch({ type: "AGENT_SESSION_END", data: { sessionId: "ses_1", result: { winner: null, reason: "left" }, reason: "left" } });
  assert.deepEqual(calls, [{ sessionId: "ses_1", result: { winner: null, reason: "left" }, reason: "left" }]);
});

test("an inbound AGENT_ACTION_REJECTED reaches the v1 onActionRejected handler", () => {
  const { win, agent } = setup();
  const calls = [];
  agent.onActionRejected((...a) => calls.push(a));
  win.dispatch({ type: "AGENT_ACTION_REJECTED", data: { playerId: "p_1", reason: "nope" } });
  assert.deepEqual(calls, [["p_1", "nope"]]);
});

test("messages without a registered handler are harmless", () => {
  const { win } = setup();
  win.dispatch({ type: "AGENT_GAME_START", data: { sessionId: "s", players: ["a", "b"], round: 1 } });
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "a", action: 1, actionId: "x" } });
  win.dispatch({ type: "AGENT_TIMEOUT", data: { playerId: "a", strike: 1, maxStrikes: 2, final: false } });
  win.dispatch({ type: "AGENT_SESSION_END", data: { sessionId: "s", result: null, reason: "left" } });
});

test("registering a handler again replaces the previous one; handlers chain", () => {
  const { win, agent } = setup();
  const calls = [];
  assert.equal(agent.onAction(() => calls.push("first")), agent);
  agent.onAction(() => calls.push("second"));
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: 1, actionId: "a_1" } });
  assert.deepEqual(calls, ["second"]);
});

test("v1: __game_start__ from __system__ goes to onGameStart when one is registered", () => {
  const { win, agent } = setup();
  const starts = [];
  const actions = [];
  agent.onGameStart((i) => starts.push(i));
  agent.onAction((...a) => actions.push(a));
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "__system__", action: { type: "__game_start__", players: ["p_1", "p_2"] } } });
  assert.deepEqual(actions, []);
  assert.deepEqual(starts, [{ sessionId: null, players: ["p_1", "p_2"], round: 1 }]);
  assert.deepEqual(agent.players, ["p_1", "p_2"]);
});

test("v1: __game_start__ goes to onAction when no onGameStart handler is registered", () => {
  const { win, agent } = setup();
  const actions = [];
  agent.onAction((...a) => actions.push(a));
  const action = { type: "__game_start__", players: ["p_1", "p_2"] };
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "__system__", action, actionId: "a_9" } });
  assert.deepEqual(actions, [["__system__", action, "a_9"]]);
});

test("v1: __game_start__ from a real player is just an action", () => {
  const { win, agent } = setup();
  const starts = [];
  const actions = [];
  agent.onGameStart((i) => starts.push(i));
  agent.onAction((...a) => actions.push(a));
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: { type: "__game_start__" }, actionId: "a_1" } });
  assert.equal(starts.length, 0);
  assert.equal(actions.length, 1);
});

test("v1: {type:'__timeout__'} goes to onTimeout(pid, {strike:1, maxStrikes:null, final:false})", () => {
  const { win, agent } = setup();
  const timeouts = [];
  const actions = [];
  agent.onTimeout((...a) => timeouts.push(a));
  agent.onAction((...a) => actions.push(a));
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_2", action: { type: "__timeout__" }, actionId: "a_t" } });
  assert.deepEqual(timeouts, [["p_2", { strike: 1, maxStrikes: null, final: false }]]);
  assert.deepEqual(actions, []);
});

test("outbound message shapes", () => {
  const { win, agent } = setup();
  win.sent.length = 0;
  agent.setState({ fen: "x" });
  agent.setObservation("p_1", { hand: [1] });
  agent.setLegalActions("p_1", ["e2e4"]);
  agent.endGame({ winner: "p_1", reason: "checkmate" });
  agent.rematch();
  assert.deepEqual(win.sent.map((s) => s.message), [
    { type: "AGENT_STATE", data: { state: { fen: "x" } } },
    { type: "AGENT_OBSERVATION", data: { playerId: "p_1", observation: { hand: [1] } } },
    { type: "AGENT_LEGAL_ACTIONS", data: { playerId: "p_1", actions: ["e2e4"] } },
    { type: "AGENT_GAME_OVER", data: { result: { winner: "p_1", reason: "checkmate" } } },
    { type: "AGENT_REMATCH", data: {} },
  ]);
  assert.ok(win.sent.every((s) => s.targetOrigin === "*"));
});

test("endGame with a result the server would refuse throws and sends nothing; null ends with no winner", () => {
  const { win, agent } = setup();
  win.sent.length = 0;
  for (const bad of ["p_1", 1, true, ["p_1"]]) {
    assert.throws(() => agent.endGame(bad), (e) => e instanceof TypeError && e.message.includes("result must be an object"), JSON.stringify(bad));
  }
  assert.equal(win.sent.length, 0);
  agent.endGame();
  agent.endGame(null);
  assert.deepEqual(win.sent.map((s) => [s.message.type, s.message.data.result ?? null]), [["AGENT_GAME_OVER", null], ["AGENT_GAME_OVER", null]]);
});

test("setLegalActions, setObservation and rejectAction without a playerId, or with actions that are no array, throw and send nothing", () => {
  const { win, agent } = setup();
  win.sent.length = 0;
  const calls = [
    () => agent.setLegalActions(undefined, ["e4"]),
    () => agent.setLegalActions(3, ["e4"]),
    () => agent.setLegalActions("p_1", "e4"),
    () => agent.setLegalActions("p_1", { move: "e4" }),
    () => agent.setObservation(null, { hand: [] }),
    () => agent.rejectAction(undefined, "illegal"),
  ];
  for (const call of calls) {
    assert.throws(call, (e) => e instanceof TypeError && /playerId must be|actions must be an array/.test(e.message), String(call));
  }
  assert.equal(win.sent.length, 0);
  agent.setLegalActions("p_1", null);
  assert.deepEqual(win.sent.map((s) => s.message), [{ type: "AGENT_LEGAL_ACTIONS", data: { playerId: "p_1", actions: [] } }]);
});

test("rejectAction fills actionId with the last action delivered to that player", () => {
  const { win, agent } = setup();
  agent.onAction(() => {});
  agent.rejectAction("p_1", "no action yet");
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: "a", actionId: "a_1" } });
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_2", action: "b", actionId: "a_2" } });
  win.dispatch({ type: "AGENT_ACTION", data: { playerId: "p_1", action: "c", actionId: "a_3" } });
  agent.rejectAction("p_1", "illegal");
  agent.rejectAction("p_2", "also illegal");
  assert.deepEqual(win.sentOfType("AGENT_ACTION_REJECTED"), [
    { playerId: "p_1", reason: "no action yet" },
    { playerId: "p_1", reason: "illegal", actionId: "a_3" },
    { playerId: "p_2", reason: "also illegal", actionId: "a_2" },
  ]);
});

test("destroy stops listening", () => {
  const { win, agent } = setup();
  assert.equal(win.listenerCount(), 1);
  agent.destroy();
  assert.equal(win.listenerCount(), 0);
});

test("opened outside a frame, the game's own posts never come back as host messages", () => {
  const win = makeFakeWindow();
  // Not framed: the window is its own parent, and what it posts arrives from it.
  win.parent = win;
  win.postMessage = (message) => win.dispatch(JSON.parse(JSON.stringify(message)), win);
  const agent = new RcadiaAgent({ minPlayers: 2, maxPlayers: 2 }, { window: win });
  const rejected = [];
  agent.onActionRejected((playerId, reason) => rejected.push([playerId, reason]));
  agent.rejectAction("p_1", "illegal");
  assert.deepEqual(rejected, []);
  assert.equal(agent.isConfigured, false);
});
