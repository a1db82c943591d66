import { test } from "node:test";
import assert from "node:assert/strict";
import { HostSession } from "../bridge/host-session.js";
import { ApiError, newTableOffered } from "../bridge/bridge-core.js";
import { makeFakeApi, settle } from "../test-support/fake-api.js";

const TWO = [{ playerId: "p_1", seat: 0 }, { playerId: "p_2", seat: 1 }];
const V2_CONFIG = { minPlayers: 2, maxPlayers: 2, turnBased: true, simultaneous: false, gameType: "chess", sdkVersion: "2.0.0", autoRematch: true };

function setup({ config = V2_CONFIG } = {}) {
  const api = makeFakeApi();
  const toGame = [];
  const authErrors = [];
  const sleeps = [];
  const host = new HostSession({
    api,
    postToGame: (m) => toGame.push(JSON.parse(JSON.stringify(m))),
    gameId: "chess", gameTitle: "Chess",
    onAuthError: (e) => authErrors.push(e),
    sleep: (ms) => { sleeps.push(ms); return new Promise((r) => setImmediate(r)); },
    setTimer: (fn) => setImmediate(fn),
  });
  const of = (type) => toGame.filter((m) => m.type === type).map((m) => m.data);
  return { api, host, toGame, of, authErrors, config, sleeps };
}

/** Configure and answer the create call; returns the first long-poll call. */
async function started(ctx, sessionId = "ses_aaaa00000001") {
  ctx.host.handleGameMessage({ type: "AGENT_CONFIGURE", data: ctx.config });
  const create = await ctx.api.next("createSession");
  create.resolve({ sessionId, config: ctx.config, round: 1, seriesId: sessionId, players: [] });
  return ctx.api.next("pendingActions");
}

test("AGENT_CONFIGURE creates the session, then AGENT_SESSION_START goes to the game and polling starts", async () => {
  const ctx = setup();
  const { api, host, of } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG }); // a repeat while creating: no second session
  const create = await api.next("createSession");
  assert.deepEqual(create.args, [{ config: V2_CONFIG, gameId: "chess", gameTitle: "Chess" }]);
  assert.equal(host.view.status, "creating");
  create.resolve({ sessionId: "ses_1", round: 1, seriesId: "ses_1", players: [] });
  const poll = await api.next("pendingActions");
  assert.deepEqual(poll.args, ["ses_1", 0, 25]);
  assert.deepEqual(of("AGENT_SESSION_START"), [{ sessionId: "ses_1", round: 1, players: [] }]);
  const pub = await api.next("publicView");
  assert.deepEqual(pub.args, ["ses_1", undefined, 25]);
  assert.equal(host.view.sessionId, "ses_1");
  assert.equal(host.view.status, "waiting");
  assert.equal(host.view.legacy, false);
  assert.equal(api.waiting("createSession").length, 0);
});

test("entries are delivered in seq order, acknowledged with after, and repeats dropped", async () => {
  const ctx = setup();
  const { api, of, toGame } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({
    status: "active", round: 1, players: [{ playerId: "p_1", seat: 0 }, { playerId: "p_2", seat: 1 }],
    actions: [
      { seq: 2, type: "action", playerId: "p_1", action: "e2e4", actionId: "a_1" },
      { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 },
    ],
  });
  const poll2 = await api.next("pendingActions");
  assert.deepEqual(poll2.args, ["ses_1", 2, 25]);
  assert.deepEqual(toGame.slice(1).map((m) => m.type), ["AGENT_GAME_START", "AGENT_ACTION"]);
  assert.deepEqual(of("AGENT_GAME_START"), [{ sessionId: "ses_1", players: ["p_1", "p_2"], round: 1 }]);
  assert.deepEqual(of("AGENT_ACTION"), [{ playerId: "p_1", action: "e2e4", actionId: "a_1" }]);
  assert.equal(ctx.host.view.status, "active");
  // The same entry returned again (its acknowledgement was lost) is not re-delivered.
  poll2.resolve({ status: "active", actions: [
    { seq: 2, type: "action", playerId: "p_1", action: "e2e4", actionId: "a_1" },
    { seq: 3, type: "timeout", playerId: "p_2", strike: 1, maxStrikes: 2, final: false },
  ] });
  const poll3 = await api.next("pendingActions");
  assert.deepEqual(poll3.args, ["ses_1", 3, 25]);
  assert.equal(of("AGENT_ACTION").length, 1);
  assert.deepEqual(of("AGENT_TIMEOUT"), [{ playerId: "p_2", strike: 1, maxStrikes: 2, final: false }]);
});

test("game messages become ordered /ops batches with one request in flight", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  await started(ctx, "ses_1");
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: { n: 1 } } });
  host.handleGameMessage({ type: "AGENT_LEGAL_ACTIONS", data: { playerId: "p_1", actions: ["e2e4"] } });
  const ops1 = await api.next("ops");
  assert.deepEqual(ops1.args, ["ses_1", [{ op: "state", state: { n: 1 } }, { op: "legal_actions", playerId: "p_1", actions: ["e2e4"] }]]);
  host.handleGameMessage({ type: "AGENT_ACTION_REJECTED", data: { playerId: "p_1", reason: "illegal", actionId: "a_1" } });
  host.handleGameMessage({ type: "AGENT_OBSERVATION", data: { playerId: "p_1", observation: { x: 1 } } });
  await settle();
  assert.equal(api.waiting("ops").length, 0, "no second /ops while the first is in flight");
  ops1.resolve({ ok: true, status: "active", version: 3, round: 1, nextSessionId: null });
  const ops2 = await api.next("ops");
  assert.deepEqual(ops2.args[1], [
    { op: "reject", playerId: "p_1", reason: "illegal", actionId: "a_1" },
    { op: "observation", playerId: "p_1", observation: { x: 1 } },
  ]);
  ops2.resolve({ ok: true, status: "active" });
  await host.outbox.idle();
});

test("ops sent before the session exists are sent to it once created", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: "early" } });
  await started(ctx, "ses_1");
  const ops = await api.next("ops");
  assert.deepEqual(ops.args, ["ses_1", [{ op: "state", state: "early" }]]);
});

test("a failing /ops is retried on network errors and dropped on conflicts", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  await started(ctx, "ses_1");
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: 1 } });
  const first = await api.next("ops");
  first.reject(new ApiError(0, "network down"));
  const retry = await api.next("ops");
  assert.deepEqual(retry.args, ["ses_1", [{ op: "state", state: 1 }]]);
  // The retry is the same batch to horst (applied once); the next batch is a new one.
  assert.match(first.batchId, /^[A-Za-z0-9_-]{1,64}$/);
  assert.equal(retry.batchId, first.batchId);
  retry.reject(new ApiError(409, "finished"));
  await host.outbox.idle();
  assert.equal(api.waiting("ops").length, 0);
  assert.match(host.view.error, /ops not applied/);
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: 2 } });
  assert.notEqual((await api.next("ops")).batchId, first.batchId);
});

test("a batch refused for one bad op is sent again op by op: only the bad op is lost, not the end beside it", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  await started(ctx, "ses_1");
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: { huge: "x" } } });
  host.handleGameMessage({ type: "AGENT_GAME_OVER", data: { result: { winner: "p_1" } } });
  const batch = await api.next("ops");
  assert.equal(batch.args[1].length, 2, JSON.stringify(batch.args));
  batch.reject(new ApiError(413, "ops[0]: the state is too large", "too_large"));
  const first = await api.next("ops");
  assert.deepEqual(first.args, ["ses_1", [{ op: "state", state: { huge: "x" } }]]);
  first.reject(new ApiError(413, "ops[0]: the state is too large", "too_large"));
  const end = await api.next("ops");
  assert.deepEqual(end.args[1].map((o) => o.op), ["end"]);
  end.resolve({ ok: true, status: "finished" });
  await host.outbox.idle();
  assert.equal(host.view.status, "finished");
  assert.match(host.view.error, /ops not applied/);
});

test("a /ops the backend cannot take now is retried until it can, and later ops wait behind it", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  await started(ctx, "ses_1");
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: 1 } });
  // Six refusals in a row (a store restarting): the batch is sent again each time.
  for (let i = 0; i < 6; i++) {
    const call = await api.next("ops");
    assert.deepEqual(call.args, ["ses_1", [{ op: "state", state: 1 }]], `attempt ${i + 1}`);
    if (i === 2) host.handleGameMessage({ type: "AGENT_STATE", data: { state: 2 } });
    call.reject(new ApiError(503, "the server's store is unreachable right now", "unavailable", 5000));
  }
  const sent = await api.next("ops");
  assert.deepEqual(sent.args, ["ses_1", [{ op: "state", state: 1 }]]);
  sent.resolve({ ok: true });
  // The later state went after the first, not before it and not instead of it.
  const later = await api.next("ops");
  assert.deepEqual(later.args, ["ses_1", [{ op: "state", state: 2 }]]);
  later.resolve({ ok: true });
  await host.outbox.idle();
  assert.equal(host.view.error, null);
});

test("every retry waits at least the server's Retry-After, up to a minute", async () => {
  const ctx = setup();
  const { api, host, sleeps } = ctx;
  const busy = (ms) => new ApiError(503, "the server's store is unreachable right now", "unavailable", ms);
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  (await api.next("createSession")).reject(busy(5000));
  const create = await api.next("createSession");
  assert.deepEqual(sleeps, [5000], "create");
  create.resolve({ sessionId: "ses_1", round: 1, seriesId: "ses_1", players: [] });
  (await api.next("pendingActions")).reject(new ApiError(429, "slow down", "rate_limited", 5000));
  await api.next("pendingActions");
  assert.equal(sleeps.at(-1), 5000, "pending-actions");
  (await api.next("publicView")).reject(busy(3_600_000));
  await api.next("publicView");
  assert.equal(sleeps.at(-1), 60_000, "public view: an hour is not waited out in one sleep");
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: 1 } });
  (await api.next("ops")).reject(busy(45_000));
  await api.next("ops");
  assert.equal(sleeps.at(-1), 45_000, "ops");
  assert.equal(sleeps.length, 4);
});

test("game over then AGENT_REMATCH: /rematch only after the end op, then the new session is announced", async () => {
  const ctx = setup();
  const { api, host, of } = ctx;
  const poll1 = await started(ctx, "ses_1");
  host.handleGameMessage({ type: "AGENT_GAME_OVER", data: { result: { winner: "p_1", reason: "checkmate" } } });
  host.handleGameMessage({ type: "AGENT_REMATCH", data: {} });
  const end = await api.next("ops");
  assert.deepEqual(end.args, ["ses_1", [{ op: "end", result: { winner: "p_1", reason: "checkmate" } }]]);
  await settle();
  assert.equal(api.waiting("rematch").length, 0, "rematch waits for the end op");
  end.resolve({ ok: true, status: "finished", nextSessionId: null });
  // The poll sees the finish before the rematch exists.
  poll1.resolve({ status: "finished", round: 1, nextSessionId: null, result: { winner: "p_1" }, actions: [] });
  const rematch = await api.next("rematch");
  assert.deepEqual(rematch.args, ["ses_1"]);
  rematch.resolve({ sessionId: "ses_2", round: 2, seriesId: "ses_1", players: [] });
  const first = await api.next("pendingActions");
  assert.deepEqual(first.args, ["ses_2", 0, 0]);
  first.resolve({ status: "waiting", round: 2, players: [{ playerId: "p_1" }, { playerId: "p_2" }], actions: [] });
  const second = await api.next("pendingActions");
  assert.deepEqual(second.args, ["ses_2", 0, 25]);
  assert.deepEqual(of("AGENT_SESSION_START").at(-1), { sessionId: "ses_2", round: 2, players: ["p_1", "p_2"] });
  assert.equal(host.view.sessionId, "ses_2");
});

/** A game over on ses_1 and the game's AGENT_REMATCH, the end op through: /rematch is next. */
async function rematchAsked() {
  const ctx = setup();
  const poll1 = await started(ctx, "ses_1");
  ctx.host.handleGameMessage({ type: "AGENT_GAME_OVER", data: { result: { winner: "p_1", reason: "checkmate" } } });
  ctx.host.handleGameMessage({ type: "AGENT_REMATCH", data: {} });
  (await ctx.api.next("ops")).resolve({ ok: true, status: "finished", nextSessionId: null });
  poll1.resolve({ status: "finished", round: 1, nextSessionId: null, result: { winner: "p_1" }, actions: [] });
  return ctx;
}

test("a /rematch that finds the backend unavailable is asked again (it is idempotent)", async () => {
  const { api, host } = await rematchAsked();
  (await api.next("rematch")).reject(new ApiError(0, "network down"));
  const again = await api.next("rematch");
  assert.deepEqual(again.args, ["ses_1"]);
  again.resolve({ sessionId: "ses_2", round: 2, seriesId: "ses_1", players: [] });
  // The old session's lingering polls (it looks for the next round a little while) end.
  let next = await api.next("pendingActions");
  while (next.args[0] === "ses_1") {
    next.resolve({ status: "finished", round: 1, nextSessionId: null, result: { winner: "p_1" }, actions: [] });
    next = await api.next("pendingActions");
  }
  assert.deepEqual(next.args, ["ses_2", 0, 0]);
  assert.equal(host.view.sessionId, "ses_2");
});

test("a /rematch refused by the table bound (429) says why and when, and is not asked again", async () => {
  const { api, host } = await rematchAsked();
  (await api.next("rematch")).reject(new ApiError(429, "you opened 60 tables within an hour, as many as are allowed; wait 600 s", "burst", 600_000));
  await settle();
  assert.equal(api.waiting("rematch").length, 0);
  assert.match(host.view.error, /no new table now: you opened 60 tables .* again in 10 min, at \d\d:\d\d\./);
});

test("nextSessionId from a finished poll is followed: session_end delivered, then the new session started", async () => {
  const ctx = setup();
  const { api, host, toGame } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({
    status: "finished", round: 1, nextSessionId: "ses_2", result: { winner: null, reason: "timeout" },
    actions: [{ seq: 4, type: "system", event: "session_end", result: { winner: null, reason: "timeout" }, reason: "timeout" }],
  });
  // First the acknowledgement of the old session, then the new session's first poll.
  const ack = await api.next("pendingActions");
  assert.deepEqual(ack.args, ["ses_1", 4, 0]);
  const first = await api.next("pendingActions");
  assert.deepEqual(first.args, ["ses_2", 0, 0]);
  first.resolve({ status: "active", round: 2, players: ["p_1", "p_2"], actions: [
    { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 2 },
  ] });
  await api.next("pendingActions");
  assert.deepEqual(toGame.map((m) => m.type), [
    "AGENT_SESSION_START", "AGENT_SESSION_END", "AGENT_SESSION_START", "AGENT_GAME_START",
  ]);
  assert.deepEqual(toGame[1].data, { sessionId: "ses_1", result: { winner: null, reason: "timeout" }, reason: "timeout" });
  assert.deepEqual(toGame[3].data, { sessionId: "ses_2", players: ["p_1", "p_2"], round: 2 });
  assert.equal(host.view.round, 2);
  // Ops now go to the new session.
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: 2 } });
  assert.equal((await api.next("ops")).args[0], "ses_2");
});

test("a finished autoRematch session is polled again until its next round is linked", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  // The finishing write is visible a moment before the rematch link.
  poll1.resolve({ status: "finished", round: 1, nextSessionId: null, result: { winner: "p_1" }, players: TWO, actions: [] });
  const again = await api.next("pendingActions");
  assert.equal(again.args[0], "ses_1");
  again.resolve({ status: "finished", round: 1, nextSessionId: "ses_2", result: { winner: "p_1" }, actions: [] });
  const first = await api.next("pendingActions");
  assert.deepEqual(first.args, ["ses_2", 0, 0]);
  assert.equal(host.view.sessionId, "ses_2");
});

test("a finished autoRematch session whose rematch never comes stops polling after a few looks", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({ status: "finished", nextSessionId: null, result: { winner: null, reason: "checkmate" }, players: TWO, actions: [] });
  for (let i = 0; i < 10; i++) {
    const again = await api.next("pendingActions");
    again.resolve({ status: "finished", nextSessionId: null, result: { winner: null, reason: "checkmate" }, players: TWO, actions: [] });
  }
  await settle();
  assert.equal(api.waiting("pendingActions").length, 0);
  assert.equal(host.view.status, "finished");
});

test("a table an operator ended is not polled again for a next round", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({ status: "finished", nextSessionId: null, result: { winner: null, reason: "ended_by_operator" }, players: TWO, actions: [] });
  await settle();
  assert.equal(api.waiting("pendingActions").length, 0);
  assert.equal(host.view.status, "finished");
});

test("a finished session without a next one stops polling", async () => {
  const ctx = setup({ config: { ...V2_CONFIG, autoRematch: false } });
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({ status: "finished", nextSessionId: null, result: { winner: null, reason: "left" }, actions: [] });
  await settle();
  assert.equal(api.waiting("pendingActions").length, 0);
  assert.equal(host.view.status, "finished");
  assert.deepEqual(host.view.result, { winner: null, reason: "left" });
  // newTable creates a fresh session from the stored config.
  host.newTable();
  const create = await api.next("createSession");
  assert.deepEqual(create.args[0].config, ctx.config);
});

test("a lost session (410) tells the game and asks for the configuration again", async () => {
  const ctx = setup();
  const { api, host, toGame } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.reject(new ApiError(410, "server restarted", "server_restarted"));
  await settle();
  assert.deepEqual(toGame.slice(1), [
    { type: "AGENT_SESSION_END", data: { sessionId: "ses_1", result: null, reason: "session_lost" } },
    { type: "AGENT_REQUEST_CONFIGURE", data: {} },
  ]);
  assert.equal(host.view.sessionId, null);
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  const create = await api.next("createSession");
  create.resolve({ sessionId: "ses_9", round: 1, players: [] });
  assert.deepEqual((await api.next("pendingActions")).args, ["ses_9", 0, 25]);
});

test("poll network errors are retried with the same after", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.reject(new ApiError(0, "offline"));
  const poll2 = await api.next("pendingActions");
  assert.deepEqual(poll2.args, ["ses_1", 0, 25]);
  assert.match(host.view.error, /offline/);
});

test("a create that keeps failing leaves the table where New table tries again", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  for (let i = 0; i < 5; i++) (await api.next("createSession")).reject(new ApiError(503, "store unreachable", "unavailable"));
  await settle();
  assert.equal(api.waiting("createSession").length, 0, "it gave up");
  assert.equal(host.view.status, "failed");
  assert.match(host.view.error, /creating the session failed/);
  assert.equal(newTableOffered(host.view), true, "the bridge page enables New table");
  host.newTable();
  (await api.next("createSession")).resolve({ sessionId: "ses_1", round: 1, players: [] });
  assert.deepEqual((await api.next("pendingActions")).args, ["ses_1", 0, 25]);
  assert.equal(newTableOffered(host.view), false);
});

test("a create whose answer was lost is sent again with the same idempotencyKey; a new table gets a new one", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  const first = await api.next("createSession");
  first.reject(new ApiError(0, "network error: the answer was lost"));
  const retry = await api.next("createSession");
  // horst answers the resend with the session the first create made (docs/hosts.md).
  assert.match(first.idempotencyKey ?? "", /^[A-Za-z0-9_-]{1,64}$/);
  assert.equal(retry.idempotencyKey, first.idempotencyKey);
  assert.deepEqual(retry.args, first.args);
  retry.reject(new ApiError(503, "store unreachable", "unavailable"));
  for (let i = 0; i < 3; i++) (await api.next("createSession")).reject(new ApiError(503, "store unreachable", "unavailable"));
  await settle();
  assert.equal(host.view.status, "failed");
  host.newTable();
  const fresh = await api.next("createSession");
  assert.match(fresh.idempotencyKey ?? "", /^[A-Za-z0-9_-]{1,64}$/);
  assert.notEqual(fresh.idempotencyKey, first.idempotencyKey);
});

test("a create refused for good is offered again too", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  (await api.next("createSession")).reject(new ApiError(400, "config.minPlayers must be at least 1"));
  await settle();
  assert.equal(host.view.status, "failed");
  assert.equal(newTableOffered(host.view), true);
});

test("a create refused by the table bound (429) says why and when, as text, and waits for New table", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  const reason = "you opened 60 tables within an hour, as many as are allowed; wait 3412 s, or play at an open table (GET /api/v1/agent/sessions/available)";
  (await api.next("createSession")).reject(new ApiError(429, reason, "burst", 3_412_000));
  await settle();
  // Asking again every minute for an hour only adds refusals: the page stops and says so.
  assert.equal(api.waiting("createSession").length, 0, "no retry before the server's time");
  assert.equal(host.view.status, "failed");
  assert.ok(host.view.error.includes(reason), host.view.error);
  assert.match(host.view.error, /no new table now/);
  assert.match(host.view.error, /again in 57 min, at \d\d:\d\d/);
  assert.equal(newTableOffered(host.view), true);
  // A short wait is waited out, and said too.
  host.newTable();
  (await api.next("createSession")).reject(new ApiError(429, "too many requests; retry after 20 s", "burst", 20_000));
  const again = await api.next("createSession");
  assert.match(host.view.error, /retry after 20 s.*again in 20 s/);
  again.resolve({ sessionId: "ses_1", round: 1, players: [] });
  await api.next("pendingActions");
  assert.equal(host.view.error, null);
});

test("an auth error on create is reported and nothing else happens", async () => {
  const ctx = setup();
  const { api, host, authErrors } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  (await api.next("createSession")).reject(new ApiError(401, "token expired"));
  await settle();
  assert.equal(authErrors.length, 1);
  assert.equal(host.view.sessionId, null);
  assert.equal(api.waiting("pendingActions").length, 0);
});

test("hostLeft ends a live session with host_left through keepalive, and stops", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  host.hostLeft();
  assert.deepEqual(api.keepalive, [{ sessionId: "ses_1", ops: [{ op: "end", result: { winner: null, reason: "host_left" }, reason: "host_left" }] }]);
  // A poll answer that arrives afterwards is not delivered.
  poll1.resolve({ status: "active", actions: [{ seq: 1, type: "action", playerId: "p", action: 1, actionId: "a" }] });
  await settle();
  assert.equal(ctx.of("AGENT_ACTION").length, 0);
  host.handleGameMessage({ type: "AGENT_STATE", data: { state: 1 } });
  await settle();
  assert.equal(api.waiting("ops").length, 0);
});

test("a session whose create answers after the host left is ended with host_left at once", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  const create = await api.next("createSession");
  host.hostLeft();
  assert.deepEqual(api.keepalive, [], "no session to end yet");
  create.resolve({ sessionId: "ses_1", round: 1, players: [] });
  await settle();
  assert.deepEqual(api.keepalive, [{ sessionId: "ses_1", ops: [{ op: "end", result: { winner: null, reason: "host_left" }, reason: "host_left" }] }]);
  assert.equal(api.waiting("pendingActions").length, 0, "and it is not hosted");
  assert.equal(host.view.sessionId, null);
});

test("hostLeft after the game finished sends nothing", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({ status: "finished", actions: [] });
  await settle();
  host.hostLeft();
  assert.deepEqual(api.keepalive, []);
});

test("legacy sessions deliver v1-shaped entries", async () => {
  const config = { minPlayers: 2, maxPlayers: 2, turnBased: true };
  const ctx = setup({ config });
  const { of, host } = ctx;
  const poll1 = await started(ctx, "ses_1");
  assert.equal(host.view.legacy, true);
  poll1.resolve({ status: "active", actions: [
    { seq: 1, type: "action", playerId: "__system__", action: { type: "__game_start__", players: ["p_1", "p_2"] } },
    { seq: 2, type: "timeout", playerId: "p_1", strike: 2, maxStrikes: 2, final: true },
  ] });
  await ctx.api.next("pendingActions");
  assert.deepEqual(of("AGENT_ACTION").map((d) => [d.playerId, d.action.type]), [["__system__", "__game_start__"], ["p_1", "__timeout__"]]);
  assert.equal(of("AGENT_TIMEOUT").length, 0);
});

test("the public view fills turn, deadline and named players", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  await started(ctx, "ses_1");
  const pub = await api.next("publicView");
  pub.resolve({ status: "active", turn: 7, deadline: "2026-10-07T19:00:00.000Z", onTurnSeats: [1], version: 12,
    players: [{ playerId: "p_1", seat: 0, asName: "Fish" }] });
  const pub2 = await api.next("publicView");
  assert.deepEqual(pub2.args, ["ses_1", 12, 25]);
  assert.equal(host.view.turn, 7);
  assert.equal(host.view.deadline, "2026-10-07T19:00:00.000Z");
  assert.deepEqual(host.view.onTurnSeats, [1]);
  assert.equal(host.view.players[0].asName, "Fish");
});

test("a game that re-configures inside a live session gets AGENT_SESSION_START again, not a new session", async () => {
  const ctx = setup();
  const { api, host, of } = ctx;
  const poll1 = await started(ctx, "ses_1");
  poll1.resolve({ status: "waiting", round: 1, players: [{ playerId: "p_1", seat: 0 }], actions: [] });
  await api.next("pendingActions");
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  await settle();
  assert.deepEqual(of("AGENT_SESSION_START"), [
    { sessionId: "ses_1", round: 1, players: [] },
    { sessionId: "ses_1", round: 1, players: ["p_1"] },
  ]);
  assert.equal(api.waiting("createSession").length, 0);
});

test("New table does nothing while a session is live or being created", async () => {
  const ctx = setup();
  const { api, host } = ctx;
  host.handleGameMessage({ type: "AGENT_CONFIGURE", data: V2_CONFIG });
  const create = await api.next("createSession");
  host.newTable(); // still creating
  await settle();
  assert.equal(api.waiting("createSession").length, 0);
  create.resolve({ sessionId: "ses_1", round: 1, players: [] });
  await api.next("pendingActions");
  host.newTable(); // waiting session is live
  await settle();
  assert.equal(api.waiting("createSession").length, 0);
  assert.equal(host.view.sessionId, "ses_1");
});
