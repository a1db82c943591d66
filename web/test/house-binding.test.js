import { test } from "node:test";
import assert from "node:assert/strict";
import { createBindingApi, REPLY_TIMEOUT_MS, LONG_POLL_REPLY_TIMEOUT_MS } from "../house/binding-api.js";
import { ApiError } from "../bridge/bridge-core.js";

function harness() {
  const sent = [];
  let reply = null;
  const api = createBindingApi({ send: (json) => sent.push(JSON.parse(json)), setReplyHandler: (fn) => { reply = fn; } });
  return { api, sent, reply: (...a) => reply(...a) };
}

test("each bridge call becomes one binding request with its own id", async () => {
  const h = harness();
  const p1 = h.api.createSession({ config: { minPlayers: 2 }, gameId: "ignored", gameTitle: "ignored", idempotencyKey: "k_1" });
  const p2 = h.api.ops("ses_1", [{ op: "state", state: {} }], "b_1");
  const p3 = h.api.pendingActions("ses_1", 7, 25);
  const p4 = h.api.rematch("ses_1");
  const p5 = h.api.publicView("ses_1", undefined, 0);
  assert.deepEqual(h.sent, [
    // gameId and title are the house's decision, not the page's: they are not sent
    // the create's idempotencyKey and the batch's batchId go with them (the same on a resend)
    { kind: "createSession", id: 1, config: { minPlayers: 2 }, idempotencyKey: "k_1" },
    { kind: "ops", id: 2, sessionId: "ses_1", ops: [{ op: "state", state: {} }], batchId: "b_1" },
    { kind: "pendingActions", id: 3, sessionId: "ses_1", after: 7, wait: 25 },
    { kind: "rematch", id: 4, sessionId: "ses_1" },
    { kind: "publicView", id: 5, sessionId: "ses_1", since: null, wait: 0 },
  ]);
  assert.equal(h.api.waiting, 5);
  // replies may come in any order
  h.reply(3, 200, JSON.stringify({ actions: [{ seq: 8 }] }));
  h.reply(1, 201, JSON.stringify({ sessionId: "ses_1" }));
  assert.deepEqual(await p3, { actions: [{ seq: 8 }] });
  assert.deepEqual(await p1, { sessionId: "ses_1" });
  h.reply(2, 200, "");
  assert.deepEqual(await p2, {});
  h.reply(4, 409, JSON.stringify({ error: "a player left", code: "finished" }));
  await assert.rejects(p4, (e) => e instanceof ApiError && e.status === 409 && e.code === "finished" && /player left/.test(e.message));
  h.reply(5, 0, JSON.stringify({ error: "network error: timed out" }));
  await assert.rejects(p5, (e) => e instanceof ApiError && e.status === 0);
  assert.equal(h.api.waiting, 0);
});

test("the house's Retry-After reaches the error, so HostSession waits it out", async () => {
  const h = harness();
  const busy = h.api.ops("s", []);
  const plain = h.api.ops("s", []);
  h.reply(1, 503, JSON.stringify({ error: "store unreachable", code: "unavailable" }), 5000);
  await assert.rejects(busy, (e) => e instanceof ApiError && e.status === 503 && e.retryAfterMs === 5000);
  h.reply(2, 503, "{}", null);
  await assert.rejects(plain, (e) => e instanceof ApiError && e.retryAfterMs === undefined);
});

test("unknown and repeated reply ids are ignored", async () => {
  const h = harness();
  const p = h.api.rematch("s");
  h.reply(99, 200, "{}");
  h.reply(1, 200, JSON.stringify({ sessionId: "s2" }));
  h.reply(1, 500, "{}");
  assert.deepEqual(await p, { sessionId: "s2" });
});

test("a missing binding rejects instead of hanging", async () => {
  const api = createBindingApi({ send: () => { throw new Error("horstHouse is not defined"); }, setReplyHandler: () => {} });
  await assert.rejects(api.ops("s", []), (e) => e instanceof ApiError && e.status === 0 && /binding/.test(e.message));
  assert.equal(api.waiting, 0);
});

test("endKeepalive is a no-op: the house process ends live sessions itself", () => {
  const h = harness();
  h.api.endKeepalive("s", [{ op: "end" }]);
  assert.equal(h.sent.length, 0);
});

/** A harness whose timers fire only when the test says so. */
function timedHarness() {
  const sent = [];
  let reply = null;
  const timers = new Map();
  let next = 1;
  const api = createBindingApi({
    send: (json) => sent.push(JSON.parse(json)),
    setReplyHandler: (fn) => { reply = fn; },
    setTimer: (fn, ms) => { const h = next++; timers.set(h, { fn, ms }); return h; },
    clearTimer: (h) => { timers.delete(h); },
  });
  const fire = (ms) => {
    for (const [h, t] of [...timers]) if (t.ms === ms) { timers.delete(h); t.fn(); }
  };
  return { api, sent, timers, fire, reply: (...a) => reply(...a) };
}

test("a call whose answer never comes fails as a retryable network error, and a late answer is ignored", async () => {
  const h = timedHarness();
  const ops = h.api.ops("s", [{ op: "state", state: {} }]);
  const poll = h.api.pendingActions("s", 3, 25);
  // Long-polls get longer than plain calls: the house holds them up to 40 s itself.
  assert.deepEqual([...h.timers.values()].map((t) => t.ms), [REPLY_TIMEOUT_MS, LONG_POLL_REPLY_TIMEOUT_MS]);
  assert.ok(LONG_POLL_REPLY_TIMEOUT_MS > REPLY_TIMEOUT_MS);
  h.fire(REPLY_TIMEOUT_MS);
  await assert.rejects(ops, (e) => e instanceof ApiError && e.status === 0 && /did not answer ops within 60 s/.test(e.message));
  assert.equal(h.api.waiting, 1, "the long-poll still waits");
  h.reply(1, 200, "{}"); // the lost answer turns up after all: nobody waits for it
  h.reply(2, 200, JSON.stringify({ actions: [] }));
  assert.deepEqual(await poll, { actions: [] });
  assert.equal(h.timers.size, 0, "an answered call's timer is cleared");
  assert.equal(h.api.waiting, 0);
});

test("a missing binding clears the call's timer", async () => {
  const timers = new Set();
  const api = createBindingApi({
    send: () => { throw new Error("horstHouse is not defined"); },
    setReplyHandler: () => {},
    setTimer: () => { const h = {}; timers.add(h); return h; },
    clearTimer: (h) => timers.delete(h),
  });
  await assert.rejects(api.rematch("s"), (e) => e instanceof ApiError && e.status === 0);
  assert.equal(timers.size, 0);
});
