// The bridge (HostSession over createBridgeApi with Node's real fetch) against a real HTTP
// listener that answers what a broken proxy, a restarting API or a misbehaving server would:
// docs/reliability.md, "The SDKs against odd answers". The listener is scripted per request;
// the bridge's sleeps are recorded (and cut short) so the waits it asks for can be checked
// without the test taking them.

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { HostSession } from "../bridge/host-session.js";
import { createBridgeApi } from "../bridge/bridge-api.js";
import { describePlayers, describeResult } from "../bridge/bridge-core.js";

const CONFIG = { minPlayers: 2, maxPlayers: 2, turnBased: true, simultaneous: false, gameType: "chess", sdkVersion: "2.0.0" };
const SID = "ses_aaaa00000001";

/**
 * A listener on a free port of 127.0.0.1. `handler(req, res, body, n)` answers each request
 * (`n`: how many requests of this method and path came before); every request is logged.
 */
async function fakeServer(handler) {
  const log = [];
  const counts = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const route = `${req.method} ${req.url.split("?")[0]}`;
      const n = counts.get(route) ?? 0;
      counts.set(route, n + 1);
      log.push({ route, url: req.url, body, auth: req.headers.authorization ?? null });
      handler(req, res, body, n);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const close = () => new Promise((r) => { server.closeAllConnections(); server.close(r); });
  return { base, log, close, server, of: (route) => log.filter((l) => l.route === route) };
}

function json(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A pending-actions answer that holds the poll open a little (a long-poll with nothing new). */
function quietPoll(res) {
  setTimeout(() => json(res, 200, { actions: [], status: "waiting", round: 1, players: [] }), 30);
}

function hostOn(base, { timeoutScale = 1 } = {}) {
  const toGame = [];
  const sleeps = [];
  const errors = [];
  const api = createBridgeApi({
    fetch: globalThis.fetch,
    getToken: () => "jwt-odd",
    baseUrl: base,
    timeoutSignal: (ms) => AbortSignal.timeout(Math.max(50, Math.round(ms * timeoutScale))),
  });
  const host = new HostSession({
    api,
    postToGame: (m) => toGame.push(JSON.parse(JSON.stringify(m))),
    gameId: "chess", gameTitle: "Chess",
    onChange: (view) => { if (view.error && errors[errors.length - 1] !== view.error) errors.push(view.error); },
    sleep: (ms) => { sleeps.push(ms); return new Promise((r) => setTimeout(r, 5)); },
  });
  return { host, toGame, sleeps, errors, of: (type) => toGame.filter((m) => m.type === type).map((m) => m.data) };
}

async function until(cond, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The usual answers: a create, quiet polls, an empty public view, ops applied. */
function usual(req, res, body) {
  const path = req.url.split("?")[0];
  if (req.method === "POST" && path === "/api/v1/agent/bridge/sessions") {
    return json(res, 201, { sessionId: SID, config: CONFIG, round: 1, seriesId: SID, players: [] });
  }
  if (path.endsWith("/pending-actions")) return quietPoll(res);
  if (path.endsWith("/public")) return setTimeout(() => json(res, 200, { status: "waiting", version: 1 }), 30);
  if (path.endsWith("/ops")) return json(res, 200, { ok: true, status: "waiting", version: 2, round: 1, players: [] });
  return json(res, 404, { error: "no such route", code: "not_found" });
}

test("a create answered 200 with a body that is not JSON is retried with backoff, then given up: no loop of new tables", async () => {
  const srv = await fakeServer((req, res, body) => {
    if (req.method === "POST" && req.url === "/api/v1/agent/bridge/sessions") {
      res.writeHead(200, { "Content-Type": "text/html" });
      return res.end("<html>captive portal</html>");
    }
    usual(req, res, body);
  });
  const { host, sleeps, toGame } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    // Before: the create "succeeded" with no session id, the bridge polled
    // /sessions/undefined/pending-actions, took the 404 for a lost session, asked the game to
    // configure again and created again, with no pause, for ever.
    await until(() => host.view.status === "failed", "the create to be given up");
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(srv.of("POST /api/v1/agent/bridge/sessions").length, 5, "five attempts, then New table");
    assert.deepEqual(sleeps, [1000, 2000, 4000, 8000], "each attempt after the backoff");
    assert.equal(srv.log.filter((l) => l.url.includes("undefined")).length, 0, "no call with an undefined id");
    assert.equal(toGame.filter((m) => m.type === "AGENT_REQUEST_CONFIGURE").length, 0);
    assert.match(host.view.error, /no session id/);
  } finally {
    host.stop();
    await srv.close();
  }
});

test("ops answered with a redirect are not taken as applied, and the token never goes to the redirect's target", async () => {
  const srv = await fakeServer((req, res, body) => {
    const path = req.url.split("?")[0];
    if (path.endsWith("/ops")) {
      res.writeHead(302, { Location: "/login" });
      return res.end();
    }
    if (path === "/login") {
      res.writeHead(200, { "Content-Type": "text/html" });
      return res.end("<html>sign in</html>");
    }
    usual(req, res, body);
  });
  const { host, errors } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => host.view.sessionId === SID, "the session");
    host.handleGameMessage({ type: "AGENT_STATE", data: { state: { board: 1 } } });
    await until(() => errors.some((e) => /ops not applied/.test(e)), "the ops to be reported as not applied");
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(errors.some((e) => /ops not applied: .*redirect.*\/login/.test(e)), `${errors}`);
    assert.equal(srv.of("GET /login").length, 0, "the redirect is not followed");
    assert.equal(srv.of("POST /api/v1/agent/bridge/sessions/" + SID + "/ops").length, 1, "a redirect is not retried");
  } finally {
    host.stop();
    await srv.close();
  }
});

test("503 and 429 with Retry-After: ops and polls wait what the server asked, and every op arrives once, in order", async () => {
  const srv = await fakeServer((req, res, body, n) => {
    const path = req.url.split("?")[0];
    if (path.endsWith("/ops") && n === 0) return json(res, 503, { error: "store restarting", code: "unavailable" }, { "Retry-After": "3" });
    if (path.endsWith("/ops") && n === 1) return json(res, 429, { error: "slow down", code: "burst" }, { "Retry-After": "7" });
    if (path.endsWith("/pending-actions") && n === 1) return json(res, 429, { error: "slow down", code: "burst" }, { "Retry-After": "2" });
    usual(req, res, body);
  });
  const { host, sleeps } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => host.view.sessionId === SID, "the session");
    host.handleGameMessage({ type: "AGENT_STATE", data: { state: 1 } });
    await until(() => srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).length === 3, "the third /ops");
    host.handleGameMessage({ type: "AGENT_STATE", data: { state: 2 } });
    await until(() => srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).length === 4, "the next batch");
    const ops = srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).map((l) => JSON.parse(l.body).ops);
    assert.deepEqual(ops, [[{ op: "state", state: 1 }], [{ op: "state", state: 1 }], [{ op: "state", state: 1 }], [{ op: "state", state: 2 }]]);
    // The poll's 429 comes on its own schedule: wait for the poll after it.
    await until(() => srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`).length >= 3, "the poll after the 429");
    for (const asked of [3000, 7000, 2000]) assert.ok(sleeps.includes(asked), `a wait of ${asked} ms in ${sleeps}`);
  } finally {
    host.stop();
    await srv.close();
  }
});

test("a server that answers 500 at once is polled with a growing pause capped at 10 s, never in a tight loop", async () => {
  const srv = await fakeServer((req, res, body) => {
    if (req.url.includes("/pending-actions")) {
      res.writeHead(500, { "Content-Type": "text/plain" });
      return res.end("Internal Server Error");
    }
    usual(req, res, body);
  });
  const { host, sleeps } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`).length >= 7, "seven polls");
    const polls = srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`).length;
    assert.ok(sleeps.length >= polls - 1, `a pause before every retry: ${sleeps} for ${polls} polls`);
    assert.ok(sleeps.includes(10_000) && Math.max(...sleeps) <= 10_000, `backoff reaches and keeps the 10 s cap: ${sleeps}`);
    assert.equal(host.view.error, "polling failed (HTTP 500); retrying");
  } finally {
    host.stop();
    await srv.close();
  }
});

test("a poll cut off mid-body, then a long-poll that hangs past its timeout: the entries reach the game once each", async () => {
  const entry = { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 };
  const answer = JSON.stringify({ actions: [entry], status: "active", round: 1, players: [] });
  const srv = await fakeServer((req, res, body, n) => {
    if (req.url.includes("/pending-actions")) {
      if (n === 0) {
        // The headers and half the body, then the connection dies.
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(answer.length) });
        res.write(answer.slice(0, 20));
        return setTimeout(() => res.socket.destroy(), 20);
      }
      if (n === 1) return; // never answered: the bridge's own timeout must end it
      if (n === 2) return json(res, 200, JSON.parse(answer));
      return quietPoll(res);
    }
    usual(req, res, body);
  });
  // Timeouts at 1/100: the 40 s long-poll limit becomes 400 ms.
  const { host, of } = hostOn(srv.base, { timeoutScale: 0.01 });
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => of("AGENT_GAME_START").length === 1, "the game start");
    await until(() => srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`).length >= 5, "more polls");
    assert.equal(of("AGENT_GAME_START").length, 1);
    const afters = srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`).map((l) => new URL(l.url, srv.base).searchParams.get("after"));
    assert.deepEqual(afters.slice(0, 4), ["0", "0", "0", "1"], "the lost answers are asked for again, then acknowledged");
  } finally {
    host.stop();
    await srv.close();
  }
});

test("an API restarted between requests: refused connections are retried with backoff and the table carries on", async () => {
  let srv = await fakeServer(usual);
  const port = new URL(srv.base).port;
  const { host, sleeps, of } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`).length >= 1, "a poll");
    await srv.close();
    await until(() => sleeps.filter((ms) => ms >= 4000).length >= 1, "a few refused polls");
    // The same address again, now with a game start queued.
    const entry = { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 };
    const server = http.createServer((req, res) => {
      if (req.url.includes("/pending-actions") && req.url.includes("after=0")) return json(res, 200, { actions: [entry], status: "active", round: 1, players: [] });
      usual(req, res, "");
    });
    await new Promise((r) => server.listen(Number(port), "127.0.0.1", r));
    srv = { close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
    await until(() => of("AGENT_GAME_START").length === 1, "the game start after the restart");
    assert.equal(host.view.sessionId, SID, "the same table");
  } finally {
    host.stop();
    await srv.close();
  }
});

test("409 on /ops (the game already over) is shown and not retried", async () => {
  const srv = await fakeServer((req, res, body) => {
    if (req.url.endsWith("/ops")) return json(res, 409, { error: "the session is finished", code: "finished" });
    usual(req, res, body);
  });
  const { host, errors } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => host.view.sessionId === SID, "the session");
    host.handleGameMessage({ type: "AGENT_GAME_OVER", data: { result: { winner: null } } });
    await until(() => errors.some((e) => /ops not applied/.test(e)), "the refusal to be shown");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).length, 1);
    assert.ok(errors.includes("ops not applied: the session is finished"), `${errors}`);
  } finally {
    host.stop();
    await srv.close();
  }
});

test("a poll answer over 16 MiB is a failed call, retried, read no further than the cap; the entries come with the next answer", async () => {
  const entry = { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 };
  const chunk = Buffer.alloc(1 << 20, 0x20);
  let streamed = 0;
  const srv = await fakeServer((req, res, body, n) => {
    if (req.url.includes("/pending-actions") && n === 0) {
      // A body without end (no Content-Length): a server or something posing as one that
      // never stops sending. Read whole, it held the tab's memory until the tab died.
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write('{"actions":[],"pad":"');
      const more = () => {
        while (!res.destroyed && res.write(chunk)) streamed += chunk.length;
        if (!res.destroyed) { streamed += chunk.length; res.once("drain", more); }
      };
      return more();
    }
    if (req.url.includes("/pending-actions") && n === 1) {
      // Said to be 64 MiB up front: refused without reading it.
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(64 << 20) });
      res.write('{"actions":[');
      return;
    }
    if (req.url.includes("/pending-actions") && n === 2) {
      return json(res, 200, { actions: [entry], status: "active", round: 1, players: [] });
    }
    usual(req, res, body);
  });
  const { host, of, errors } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => of("AGENT_GAME_START").length === 1, "the game start", 20_000);
    assert.equal(host.view.status, "active");
    const polls = srv.of(`GET /api/v1/agent/bridge/sessions/${SID}/pending-actions`);
    assert.deepEqual(polls.slice(0, 3).map((p) => new URL(p.url, srv.base).searchParams.get("after")), ["0", "0", "0"],
      "each retry asks from where the failed one did");
    assert.equal(errors.filter((e) => /was larger than 16 MiB/.test(e)).length >= 1, true, `${errors}`);
    // What the server got out before the bridge hung up: the cap and the socket's buffers.
    assert.ok(streamed < 40 << 20, `${streamed} bytes sent`);
  } finally {
    host.stop();
    await srv.close();
  }
});

test("a 429 whose Retry-After is an HTTP date is waited out until that date", async () => {
  const srv = await fakeServer((req, res, body, n) => {
    const path = req.url.split("?")[0];
    if (path.endsWith("/ops") && n === 0) {
      const at = Math.floor(Date.now() / 1000) * 1000;
      return json(res, 429, { error: "slow down", code: "burst" },
        { Date: new Date(at).toUTCString(), "Retry-After": new Date(at + 6000).toUTCString() });
    }
    usual(req, res, body);
  });
  const { host, sleeps } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => host.view.sessionId === SID, "the session");
    host.handleGameMessage({ type: "AGENT_STATE", data: { state: 1 } });
    await until(() => srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).length === 2, "the second /ops");
    // Before: the date was not read and the bridge asked again after its own 1 s.
    assert.ok(sleeps.includes(6000), `a wait of 6000 ms in ${sleeps}`);
  } finally {
    host.stop();
    await srv.close();
  }
});

/**
 * A server that holds the first /ops unanswered, gives the game start, then p_1's move once
 * that /ops arrived, and ends the held /ops with `endHeld(res)` when the bridge polls past the
 * move (it has handed the move to the game).
 */
async function heldOpsServer(endHeld) {
  let heldOps = null;
  let opsArrived = false;
  const start = { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 };
  const move = { seq: 2, type: "action", playerId: "p_1", action: { to: "e4" }, actionId: "a_1" };
  const srv = await fakeServer((req, res, body, n) => {
    const path = req.url.split("?")[0];
    if (path.endsWith("/ops") && n === 0) {
      opsArrived = true;
      heldOps = res;
      return;
    }
    if (path.endsWith("/pending-actions")) {
      const after = new URL(req.url, srv.base).searchParams.get("after");
      if (after === "0") return json(res, 200, { actions: [start], status: "active", round: 1, players: [] });
      if (after === "1") {
        const answer = () => (opsArrived ? json(res, 200, { actions: [move], status: "active", round: 1, players: [] }) : setTimeout(answer, 5));
        return answer();
      }
      if (heldOps) { endHeld(heldOps); heldOps = null; }
      return quietPoll(res);
    }
    usual(req, res, body);
  });
  return srv;
}

test("a batch whose answer never came is sent again whole under its batchId, so horst applies it once", async () => {
  // The backend applied the batch (p_1 on turn) and the connection died before its answer;
  // p_1 moved and the bridge handed the move to the game. Sent again without an id, the
  // batch's legal_actions for p_1 read as the game's answer to that move: the move "applied",
  // p_1 on turn again with the old moves, a second move delivered. With the same batchId
  // horst answers the resend without applying it (tests/it rcadia_game
  // a_resent_ops_batch_is_applied_once).
  // The batch's connection dies without an answer.
  const srv = await heldOpsServer((held) => held.socket.destroy());
  const { host, of } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => of("AGENT_GAME_START").length === 1, "the game start");
    host.handleGameMessage({ type: "AGENT_STATE", data: { state: { fen: "start" } } });
    host.handleGameMessage({ type: "AGENT_OBSERVATION", data: { playerId: "p_1", observation: { hand: 1 } } });
    host.handleGameMessage({ type: "AGENT_LEGAL_ACTIONS", data: { playerId: "p_1", actions: [{ to: "e4" }] } });
    await until(() => of("AGENT_ACTION").length === 1, "the move to reach the game");
    await until(() => srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).length === 2, "the batch sent again");
    const bodies = srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).map((l) => JSON.parse(l.body));
    const sent = bodies.map((b) => b.ops.map((o) => o.op));
    assert.deepEqual(sent, [["state", "observation", "legal_actions"], ["state", "observation", "legal_actions"]]);
    assert.match(bodies[0].batchId, /^[A-Za-z0-9_-]{1,64}$/);
    assert.equal(bodies[1].batchId, bodies[0].batchId, "a resend carries the batch's id");
  } finally {
    host.stop();
    await srv.close();
  }
});

test("a batch the backend refused for now (503) is sent again whole, moves delivered meanwhile or not", async () => {
  const srv = await heldOpsServer((held) =>
    json(held, 503, { error: "store restarting", code: "unavailable" }, { "Retry-After": "1" }));
  const { host, of } = hostOn(srv.base);
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => of("AGENT_GAME_START").length === 1, "the game start");
    host.handleGameMessage({ type: "AGENT_STATE", data: { state: { fen: "start" } } });
    host.handleGameMessage({ type: "AGENT_LEGAL_ACTIONS", data: { playerId: "p_1", actions: [{ to: "e4" }] } });
    await until(() => srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).length === 2, "the batch sent again");
    const bodies = srv.of(`POST /api/v1/agent/bridge/sessions/${SID}/ops`).map((l) => JSON.parse(l.body));
    assert.deepEqual(bodies.map((b) => b.ops.map((o) => o.op)), [["state", "legal_actions"], ["state", "legal_actions"]]);
    assert.equal(bodies[1].batchId, bodies[0].batchId, "a resend carries the batch's id");
  } finally {
    host.stop();
    await srv.close();
  }
});

test("players the page cannot describe (null, a number) do not stop the table: entries still reach the game", async () => {
  const start = { seq: 1, type: "system", event: "game_start", players: ["p_1", "p_2"], round: 1 };
  const move = { seq: 2, type: "action", playerId: "p_1", action: { to: "e4" }, actionId: "a_1" };
  const srv = await fakeServer((req, res, body) => {
    if (req.url.includes("/pending-actions")) {
      const after = new URL(req.url, srv.base).searchParams.get("after");
      const odd = [null, 7, { playerId: "p_2", seat: "x", asName: 5 }];
      if (after === "0") return json(res, 200, { actions: [start], status: "active", round: 1, players: odd });
      if (after === "1") return json(res, 200, { actions: [move], status: "active", round: 1, players: odd });
      return quietPoll(res);
    }
    if (req.url.includes("/public")) return setTimeout(() => json(res, 200, { status: "active", version: 1, players: [null], result: 5 }), 30);
    usual(req, res, body);
  });
  const toGame = [];
  const host = new HostSession({
    api: createBridgeApi({ fetch: globalThis.fetch, getToken: () => "jwt", baseUrl: srv.base }),
    postToGame: (m) => toGame.push(m),
    // What the bridge and house pages show on every change.
    onChange: (v) => { describePlayers(v.players); describeResult(v.result, v.players); },
    sleep: () => new Promise((r) => setTimeout(r, 5)),
  });
  try {
    host.handleGameMessage({ type: "AGENT_CONFIGURE", data: CONFIG });
    await until(() => toGame.some((m) => m.type === "AGENT_ACTION"), "the move to reach the game");
    assert.equal(toGame.filter((m) => m.type === "AGENT_GAME_START").length, 1);
  } finally {
    host.stop();
    await srv.close();
  }
});
