import { test } from "node:test";
import assert from "node:assert/strict";
import {
  retryAfterMs,
  classifyGameMessage, messageForEntry, SeqTracker, OpsOutbox, isLegacyConfig, hostLeftOp,
  resolveGameUrl, needsConsent, gameIdFromUrl, titleFromGameId, describeDeadline, describePlayers, describeResult,
  describeEntry, namesOf, autoRematchDue, newTableOffered,
  backoffMs, retryDelayMs, ApiError, isSessionLost, isAuthError, isRetryable, MAX_OPS_PER_REQUEST, MAX_OPS_BYTES_PER_REQUEST,
} from "../bridge/bridge-core.js";
import { settle } from "../test-support/fake-api.js";

test("game messages map to ops", () => {
  assert.deepEqual(classifyGameMessage({ type: "AGENT_STATE", data: { state: { a: 1 } } }),
    { kind: "op", op: { op: "state", state: { a: 1 } } });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_OBSERVATION", data: { playerId: "p_1", observation: [1] } }),
    { kind: "op", op: { op: "observation", playerId: "p_1", observation: [1] } });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_LEGAL_ACTIONS", data: { playerId: "p_1", actions: ["rock"] } }),
    { kind: "op", op: { op: "legal_actions", playerId: "p_1", actions: ["rock"] } });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_ACTION_REJECTED", data: { playerId: "p_1", reason: "bad", actionId: "a_1" } }),
    { kind: "op", op: { op: "reject", playerId: "p_1", reason: "bad", actionId: "a_1" } });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_ACTION_REJECTED", data: { playerId: "p_1", reason: "bad" } }),
    { kind: "op", op: { op: "reject", playerId: "p_1", reason: "bad" } });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_GAME_OVER", data: { result: { winner: null } } }),
    { kind: "op", op: { op: "end", result: { winner: null } } });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_REMATCH", data: {} }), { kind: "rematch" });
  assert.deepEqual(classifyGameMessage({ type: "AGENT_CONFIGURE", data: { minPlayers: 2 } }),
    { kind: "configure", config: { minPlayers: 2 } });
});

test("unknown or malformed game messages are ignored", () => {
  assert.equal(classifyGameMessage(null), null);
  assert.equal(classifyGameMessage("AGENT_STATE"), null);
  assert.equal(classifyGameMessage({ type: "AGENT_ACTION", data: {} }), null);
  assert.equal(classifyGameMessage({ type: "HELLO" }), null);
  // Missing data still yields a well-formed op rather than a crash.
  assert.deepEqual(classifyGameMessage({ type: "AGENT_LEGAL_ACTIONS" }),
    { kind: "op", op: { op: "legal_actions", playerId: undefined, actions: [] } });
});

test("entries map to host -> game messages", () => {
  const ctx = { sessionId: "ses_1", round: 2, legacy: false };
  assert.deepEqual(messageForEntry({ seq: 1, type: "action", playerId: "p_1", action: "e2e4", actionId: "a_1" }, ctx),
    { type: "AGENT_ACTION", data: { playerId: "p_1", action: "e2e4", actionId: "a_1" } });
  assert.deepEqual(messageForEntry({ seq: 2, type: "timeout", playerId: "p_1", strike: 1, maxStrikes: 2, final: false }, ctx),
    { type: "AGENT_TIMEOUT", data: { playerId: "p_1", strike: 1, maxStrikes: 2, final: false } });
  assert.deepEqual(messageForEntry({ seq: 3, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 2 }, ctx),
    { type: "AGENT_GAME_START", data: { sessionId: "ses_1", players: ["p_1", "p_2"], round: 2 } });
  assert.deepEqual(messageForEntry({ seq: 4, type: "system", event: "session_end", result: { winner: null }, reason: "left" }, ctx),
    { type: "AGENT_SESSION_END", data: { sessionId: "ses_1", result: { winner: null }, reason: "left" } });
  assert.deepEqual(messageForEntry({ seq: 3, type: "system", event: "game_start", players: [{ playerId: "p_1", seat: 0 }, { playerId: "p_2", seat: 1 }] }, ctx),
    { type: "AGENT_GAME_START", data: { sessionId: "ses_1", players: ["p_1", "p_2"], round: 2 } }, "player objects become ids; round falls back to the session's");
  assert.deepEqual(messageForEntry({ seq: 3, type: "system", event: "game_start" }, ctx).data.players, []);
  assert.equal(messageForEntry({ seq: 5, type: "system", event: "mystery" }, ctx), null);
  assert.equal(messageForEntry({ seq: 6, type: "mystery" }, ctx), null);
  assert.equal(messageForEntry(null, ctx), null);
});

test("legacy mode: v1 system actions pass through and timeouts become __timeout__ actions", () => {
  const ctx = { sessionId: "ses_1", round: 1, legacy: true };
  const start = { seq: 1, type: "action", playerId: "__system__", action: { type: "__game_start__", players: ["p_1", "p_2"] } };
  assert.deepEqual(messageForEntry(start, ctx),
    { type: "AGENT_ACTION", data: { playerId: "__system__", action: { type: "__game_start__", players: ["p_1", "p_2"] }, actionId: undefined } });
  assert.deepEqual(messageForEntry({ seq: 2, type: "timeout", playerId: "p_2", strike: 2, maxStrikes: 2, final: true }, ctx),
    { type: "AGENT_ACTION", data: { playerId: "p_2", action: { type: "__timeout__", strike: 2, maxStrikes: 2, final: true } } });
});

test("isLegacyConfig is true exactly when sdkVersion is missing", () => {
  assert.equal(isLegacyConfig({ minPlayers: 2 }), true);
  assert.equal(isLegacyConfig(null), true);
  assert.equal(isLegacyConfig({ sdkVersion: "2.0.0" }), false);
});

test("SeqTracker returns only new entries, in seq order, and advances after", () => {
  const t = new SeqTracker();
  assert.equal(t.after, 0);
  assert.deepEqual(t.take([{ seq: 2 }, { seq: 1 }]).map((e) => e.seq), [1, 2]);
  assert.equal(t.after, 2);
  assert.deepEqual(t.take([{ seq: 2 }, { seq: 3 }]).map((e) => e.seq), [3]);
  assert.equal(t.after, 3);
  assert.deepEqual(t.take([]), []);
  assert.deepEqual(t.take(undefined), []);
  assert.deepEqual(t.take([{ seq: "7" }, null]), []);
  assert.equal(t.after, 3);
  t.reset();
  assert.equal(t.after, 0);
});

function recordingOutbox(extra = {}) {
  const sends = [];
  const gates = [];
  const outbox = new OpsOutbox({
    send: (key, ops) => new Promise((resolve, reject) => { sends.push({ key, ops }); gates.push({ resolve, reject }); }),
    setTimer: (fn) => setImmediate(fn),
    ...extra,
  });
  return { outbox, sends, gates };
}

test("OpsOutbox batches ops pushed together into one request, in order", async () => {
  const { outbox, sends, gates } = recordingOutbox();
  outbox.push({ op: "state", state: 1 }, "s");
  outbox.push({ op: "legal_actions", playerId: "a", actions: [] }, "s");
  outbox.push({ op: "state", state: 2 }, "s");
  assert.equal(sends.length, 0, "nothing is sent before the batching delay");
  await settle();
  assert.equal(sends.length, 1);
  assert.deepEqual(sends[0].ops.map((o) => o.state ?? o.op), [1, "legal_actions", 2]);
  gates[0].resolve({});
  await outbox.idle();
});

test("OpsOutbox keeps only one request in flight and sends later ops afterwards", async () => {
  const { outbox, sends, gates } = recordingOutbox();
  outbox.push({ op: "state", state: 1 }, "s");
  await settle();
  outbox.push({ op: "state", state: 2 }, "s");
  outbox.push({ op: "state", state: 3 }, "s");
  await settle();
  assert.equal(sends.length, 1, "second batch waits for the first");
  gates[0].resolve({});
  await settle();
  assert.equal(sends.length, 2);
  assert.deepEqual(sends[1].ops.map((o) => o.state), [2, 3]);
  gates[1].resolve({});
  await outbox.idle();
  assert.equal(outbox.busy, false);
});

test("OpsOutbox splits at 100 ops and never mixes sessions in one request", async () => {
  const { outbox, sends, gates } = recordingOutbox();
  for (let i = 0; i < 150; i++) outbox.push({ op: "state", state: i }, "s1");
  outbox.push({ op: "state", state: "x" }, "s2");
  outbox.push({ op: "state", state: "y" }, "s1");
  const done = outbox.idle();
  for (let i = 0; i < 4; i++) { await settle(); gates[i].resolve({}); }
  await done;
  assert.deepEqual(sends.map((s) => [s.key, s.ops.length]), [["s1", MAX_OPS_PER_REQUEST], ["s1", 50], ["s2", 1], ["s1", 1]]);
  assert.equal(sends[1].ops[49].state, 149);
});

test("OpsOutbox cuts a batch before its body would pass the 1 MiB request limit", async () => {
  const { outbox, sends, gates } = recordingOutbox();
  // 20 ops of 60 KB each: 1.2 MB together, 100 ops allowed by count.
  for (let i = 0; i < 20; i++) outbox.push({ op: "state", state: "é".repeat(30_000) + i }, "s");
  const done = outbox.idle();
  for (let i = 0; i < 3; i++) { await settle(); if (gates[i]) gates[i].resolve({}); }
  await done;
  assert.ok(sends.length >= 2, `one request of ${sends.length}`);
  for (const s of sends) {
    const body = new TextEncoder().encode(JSON.stringify({ ops: s.ops })).length;
    assert.ok(body <= MAX_OPS_BYTES_PER_REQUEST + 64, `a request of ${body} bytes`);
  }
  assert.deepEqual(sends.flatMap((s) => s.ops.map((o) => o.state.slice(-2))), Array.from({ length: 20 }, (_, i) => String(i).padStart(2, "é")));
  // One op larger than the limit still goes, alone (the server says what is wrong with it).
  const big = recordingOutbox();
  big.outbox.push({ op: "state", state: "x".repeat(1_100_000) }, "s");
  big.outbox.push({ op: "state", state: 1 }, "s");
  const bigDone = big.outbox.idle();
  for (let i = 0; i < 2; i++) { await settle(); if (big.gates[i]) big.gates[i].resolve({}); }
  await bigDone;
  assert.deepEqual(big.sends.map((s) => s.ops.length), [1, 1]);
});

test("OpsOutbox runs tasks in queue order after the ops before them", async () => {
  const order = [];
  const outbox = new OpsOutbox({
    send: async (key, ops) => { order.push(`send ${ops.map((o) => o.op).join(",")}`); },
    setTimer: (fn) => setImmediate(fn),
  });
  outbox.push({ op: "state" }, "s");
  outbox.push({ op: "end" }, "s");
  outbox.pushTask(async () => { order.push("rematch"); });
  outbox.push({ op: "state" }, "s");
  await outbox.idle();
  assert.deepEqual(order, ["send state,end", "rematch", "send state"]);
});

test("OpsOutbox reports a failed send and carries on with the next batch", async () => {
  const errors = [];
  const sent = [];
  let first = true;
  const outbox = new OpsOutbox({
    send: async (key, ops) => { if (first) { first = false; throw new Error("boom"); } sent.push(ops); },
    onError: (err, ops) => errors.push([err.message, ops ? ops.length : null]),
    setTimer: (fn) => setImmediate(fn),
  });
  outbox.push({ op: "state", state: 1 }, "s");
  await settle();
  outbox.push({ op: "state", state: 2 }, "s");
  outbox.pushTask(() => { throw new Error("task failed"); });
  await outbox.idle();
  assert.deepEqual(errors, [["boom", 1], ["task failed", null]]);
  assert.deepEqual(sent, [[{ op: "state", state: 2 }]]);
});

test("OpsOutbox.drain hands back unsent ops; idle resolves at once when empty", async () => {
  const { outbox } = recordingOutbox({ setTimer: () => 1 }); // a timer that never fires
  await new OpsOutbox({ send: async () => {} }).idle();
  outbox.push({ op: "state", state: 1 }, "s");
  outbox.pushTask(() => {});
  assert.equal(outbox.pending, 2);
  assert.deepEqual(outbox.drain(), [{ kind: "op", op: { op: "state", state: 1 }, key: "s" }]);
  assert.equal(outbox.pending, 0);
});

test("hostLeftOp ends with reason host_left and no winner", () => {
  assert.deepEqual(hostLeftOp(), { op: "end", result: { winner: null, reason: "host_left" }, reason: "host_left" });
});

test("resolveGameUrl accepts paths and http(s) URLs only", () => {
  const base = "https://horst.example/bridge/?game=/games/chess/";
  assert.equal(resolveGameUrl("/games/chess/", base).href, "https://horst.example/games/chess/");
  assert.equal(resolveGameUrl("https://other.example/g/", base).href, "https://other.example/g/");
  assert.equal(resolveGameUrl("javascript:alert(1)", base), null);
  assert.equal(resolveGameUrl("data:text/html,hi", base), null);
  assert.equal(resolveGameUrl("", base), null);
  assert.equal(resolveGameUrl(null, base), null);
  assert.equal(resolveGameUrl("http://[bad", base), null);
});

test("a game from another origin waits for a click unless the form chose it", () => {
  const page = "https://horst.example";
  const own = new URL("https://horst.example/games/chess/");
  const other = new URL("https://evil.example/game/");
  assert.equal(needsConsent(own, page, null), false);
  assert.equal(needsConsent(other, page, null), true);
  assert.equal(needsConsent(other, page, "https://evil.example/game/"), false);
  // Another page of that site is not the one chosen.
  assert.equal(needsConsent(other, page, "https://evil.example/other/"), true);
  // Same host, another port or scheme: another origin.
  assert.equal(needsConsent(new URL("http://horst.example/games/chess/"), page, null), true);
});

test("gameIdFromUrl and titleFromGameId", () => {
  assert.equal(gameIdFromUrl(new URL("https://h/games/chess/")), "chess");
  assert.equal(gameIdFromUrl(new URL("https://h/games/rps/index.html")), "rps");
  assert.equal(gameIdFromUrl(new URL("https://h/")), "h");
  assert.equal(titleFromGameId("chess"), "Chess");
  assert.equal(titleFromGameId("tic-tac_toe"), "Tic Tac Toe");
});

test("describeDeadline, describePlayers, describeResult", () => {
  const now = Date.parse("2026-10-07T19:00:00.000Z");
  assert.equal(describeDeadline(null, now), "none");
  assert.equal(describeDeadline("garbage", now), "none");
  assert.equal(describeDeadline("2026-10-07T19:00:42.000Z", now), "42 s left, then a strike");
  assert.equal(describeDeadline("2026-10-07T19:04:12.000Z", now), "4 min 12 s left, then a strike");
  assert.equal(describeDeadline("2026-10-07T18:59:50.000Z", now), "ran out 10 s ago");
  assert.equal(describePlayers([]), "none yet");
  assert.equal(describePlayers(["p_1", "p_2"]), "seat 0: p_1\nseat 1: p_2");
  assert.equal(describePlayers([{ playerId: "p_1", seat: 0, asName: "Fish", ready: false }]), "seat 0: Fish (not ready)");
  // A server's odd entries are shown, not thrown on (they stopped the table's poll loop).
  assert.equal(describePlayers([null, 7, "p_3"]), "seat 0: ?\nseat 1: ?\nseat 2: p_3");
  assert.equal(describeResult(null), "none");
  assert.equal(describeResult({ winner: "p_1", reason: "checkmate" }), "winner p_1 (checkmate)");
  assert.equal(describeResult({ winner: null }), "draw / no winner");
  assert.equal(describeResult("odd"), "odd");
  assert.equal(describeResult({ winner: "p_1", reason: "timeout" }, [{ playerId: "p_1", asName: "Fish" }]), "winner Fish (timeout)");
});

test("platform entries as lines for people, with names", () => {
  const players = [{ playerId: "p_1", seat: 0, asName: "Fish" }, { playerId: "p_2", seat: 1 }];
  assert.equal(describeEntry({ type: "system", event: "game_start", players: ["p_1", "p_2"], round: 2 }, players), "round 2 starts: Fish vs p_2");
  assert.equal(describeEntry({ type: "action", playerId: "p_1", action: "e2e4", actionId: "a_1" }, players), "move from Fish");
  assert.equal(describeEntry({ type: "timeout", playerId: "p_1", strike: 2, maxStrikes: 2, final: true }, players), "Fish ran out of time: strike 2 of 2 (final)");
  assert.equal(describeEntry({ type: "system", event: "session_end", result: { winner: "p_1" }, reason: "timeout" }, players),
    "the platform ended the game (timeout): winner Fish");
  assert.equal(describeEntry({ type: "action", playerId: "__system__", action: { type: "__game_start__", players: ["p_1", "p_2"] } }, players),
    "game start: Fish, p_2");
  assert.deepEqual(namesOf(players), { p_1: "Fish" });
  // game_start carries the names to the game when the backend listed any.
  assert.deepEqual(messageForEntry({ seq: 3, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 }, { sessionId: "ses_1", players }).data,
    { sessionId: "ses_1", players: ["p_1", "p_2"], round: 1, names: { p_1: "Fish" } });
});

test("backoff and error classification", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(backoffMs), [1000, 2000, 4000, 8000, 10000, 10000]);
  assert.equal(retryDelayMs(1, new ApiError(503, "x", "unavailable", 5000)), 5000);
  assert.equal(retryDelayMs(5, new ApiError(503, "x", "unavailable", 2000)), 10000, "never less than the backoff");
  assert.equal(retryDelayMs(1, new ApiError(429, "x", "rate_limited", 86_400_000)), 60_000, "capped");
  assert.equal(retryDelayMs(2, new ApiError(0, "offline")), 2000);
  assert.equal(retryDelayMs(1, new TypeError("fetch failed")), 1000);
  assert.equal(isSessionLost(new ApiError(410, "gone", "server_restarted")), true);
  assert.equal(isSessionLost(new ApiError(404, "unknown")), true);
  assert.equal(isSessionLost(new Error("x")), false);
  assert.equal(isAuthError(new ApiError(401, "x")), true);
  assert.equal(isAuthError(new ApiError(403, "x")), true);
  assert.equal(isRetryable(new ApiError(0, "network")), true);
  assert.equal(isRetryable(new ApiError(503, "x")), true);
  assert.equal(isRetryable(new ApiError(429, "x")), true);
  assert.equal(isRetryable(new ApiError(409, "x")), false);
  assert.equal(isRetryable(new TypeError("fetch failed")), true);
});

test("autoRematchDue mirrors the platform: a next round only where it would open one itself", () => {
  const config = { minPlayers: 2, maxPlayers: 2, sdkVersion: "2.0.0", autoRematch: true };
  const two = [{ playerId: "p_1", seat: 0 }, { playerId: "p_2", seat: 1 }];
  const ended = (reason, players = two) => ({ result: { winner: null, reason }, players });
  for (const reason of ["checkmate", "timeout", "best_of_three", undefined]) {
    assert.equal(autoRematchDue(config, ended(reason)), true, `reason ${reason}`);
  }
  // The platform withholds the next round on purpose here (sessions/src/machine/ending.rs).
  for (const reason of ["ended_by_operator", "left", "host_left", "host_disconnected"]) {
    assert.equal(autoRematchDue(config, ended(reason)), false, `reason ${reason}`);
  }
  assert.equal(autoRematchDue(config, ended("checkmate", [two[0]])), false, "fewer than minPlayers");
  assert.equal(autoRematchDue({ ...config, minPlayers: 1 }, ended("checkmate", [two[0]])), true);
  assert.equal(autoRematchDue({ ...config, autoRematch: false }, ended("checkmate")), false, "the game rematches itself");
  assert.equal(autoRematchDue({ ...config, autoRematch: undefined }, ended("checkmate")), false);
  assert.equal(autoRematchDue({ ...config, sdkVersion: undefined }, ended("checkmate")), false, "legacy: no rematches");
  assert.equal(autoRematchDue(null, ended("checkmate")), false);
  assert.equal(autoRematchDue(config, { result: null, players: two }), true);
});

test("New table is offered after a series without a next round, a lost session or a failed create", () => {
  const offered = (status, nextSessionId = null) => newTableOffered({ status, nextSessionId });
  assert.equal(offered("finished"), true);
  assert.equal(offered("finished", "ses_2"), false, "the next round follows");
  assert.equal(offered("lost"), true);
  assert.equal(offered("failed"), true);
  for (const status of ["idle", "creating", "waiting", "active", "left"]) assert.equal(offered(status), false, status);
});

test("retryAfterMs reads delay-seconds and the three HTTP-date forms; a past or unreadable date is no header", () => {
  // The answer's own Date is the clock: a date from the same server needs no agreement
  // between the two machines' clocks.
  const date = "Sun, 06 Dec 2026 18:00:00 GMT";
  const now = Date.UTC(2026, 11, 6, 17, 0, 0); // an hour behind the server: not used
  assert.equal(retryAfterMs("7", date, now), 7000);
  assert.equal(retryAfterMs(" 0 ", date, now), 0);
  assert.equal(retryAfterMs("Sun, 06 Dec 2026 18:00:30 GMT", date, now), 30_000);
  assert.equal(retryAfterMs("Sunday, 06-Dec-26 18:00:05 GMT", date, now), 5000);
  assert.equal(retryAfterMs("Sun Dec  6 18:01:00 2026", date, now), 60_000);
  // Without a readable Date, the client's clock.
  assert.equal(retryAfterMs("Sun, 06 Dec 2026 17:00:09 GMT", null, now), 9000);
  assert.equal(retryAfterMs("Sun, 06 Dec 2026 17:00:09 GMT", "yesterday", now), 9000);
  for (const none of [null, undefined, "", "soon", "-1", "1.5", "0x10", "1e3",
    "Sun, 06 Dec 2026 17:59:59 GMT", // past
    "Sun, 06 Dec 2026 18:00:00 GMT", // now: no wait asked
    "Sun, 32 Dec 2026 18:00:30 GMT", "Sun, 06 Dec 2026 25:00:30 GMT", "Sun, 06 Foo 2026 18:00:30 GMT",
    "Sun, 06 Dec 2026 18:00:30 CET", "2026-12-06T18:00:30Z"]) {
    assert.equal(retryAfterMs(none, date, now), undefined, `${none}`);
  }
});
