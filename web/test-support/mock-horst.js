// A stand-in for horst for local runs of the browser side: it serves web/ at
// the same URL paths horst will (served-paths.js) and fakes just enough of the
// auth and bridge API for the bridge page to host a game, with two built-in
// "agents" that play random legal actions. Not a reference for the backend:
// no clocks, no reservations, no auth checks beyond "a token is present".
//
//   node web/test-support/mock-horst.js [--port 8377] [--rounds 3]
//   then open http://127.0.0.1:8377/__dev/signin?next=/bridge/%3Fgame%3D/games/chess/
//
// GET /__dev/log returns every session with the ops the bridge sent.

import http from "node:http";
import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { fileUrlForPath } from "./served-paths.js";

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".json": "application/json", ".map": "application/json", ".css": "text/css" };

export function createMockHorst({ rounds = 3, agentDelayMs = 30, rematchDelayMs = 200, log = () => {} } = {}) {
  const sessions = new Map();
  let counter = 0;
  const newId = () => `ses_dev0${(++counter).toString(16).padStart(8, "0")}`;

  function makeSession(config, { round = 1, seriesId = null, players = [], previous = null, game = {} } = {}) {
    const id = newId();
    const s = {
      sessionId: id, config, round, seriesId: seriesId ?? id, players, status: "waiting", previousSessionId: previous,
      nextSessionId: null, entries: [], seq: 0, ops: [], state: null, legal: {}, pending: new Set(), result: null,
      version: 1, turn: 0, waiters: [], actionCounter: 0, game,
    };
    sessions.set(id, s);
    return s;
  }

  function changed(s) {
    s.version++;
    const w = s.waiters; s.waiters = [];
    for (const fn of w) fn();
  }

  function queue(s, entry) {
    s.entries.push({ seq: ++s.seq, ...entry });
    changed(s);
  }

  function startGame(s) {
    if (s.players.length === 0) s.players = ["p_dev00001", "p_dev00002"];
    s.status = "active";
    const legacy = !s.config.sdkVersion;
    if (legacy) queue(s, { type: "action", playerId: "__system__", action: { type: "__game_start__", players: s.players } });
    else queue(s, { type: "system", event: "game_start", players: s.players.slice(), round: s.round });
  }

  // The built-in agents: whoever holds legal actions and has nothing pending plays one at random.
  function agentsMove(s) {
    if (s.status !== "active") return;
    for (const [pid, actions] of Object.entries(s.legal)) {
      if (!actions.length || s.pending.has(pid)) continue;
      s.pending.add(pid);
      setTimeout(() => {
        if (s.status !== "active") return;
        const action = actions[Math.floor(Math.random() * actions.length)];
        queue(s, { type: "action", playerId: pid, action, actionId: `a_${s.sessionId.slice(-4)}_${++s.actionCounter}` });
      }, agentDelayMs);
    }
  }

  function openNext(s) {
    if (s.nextSessionId) return sessions.get(s.nextSessionId);
    const next = makeSession(s.config, { round: s.round + 1, seriesId: s.seriesId, players: s.players.slice(), previous: s.sessionId, game: s.game });
    s.nextSessionId = next.sessionId;
    changed(s);
    setTimeout(() => startGame(next), rematchDelayMs);
    return next;
  }

  function applyOps(s, ops) {
    for (const op of ops) {
      s.ops.push(op);
      if (op.op === "state") s.state = op.state;
      else if (op.op === "legal_actions") {
        if (!s.config.simultaneous && op.actions.length) s.legal = {};
        s.legal[op.playerId] = op.actions;
        s.pending.delete(op.playerId);
        s.turn++;
      } else if (op.op === "reject") {
        s.pending.delete(op.playerId); // back on turn with the same legal actions
      } else if (op.op === "end") {
        s.status = "finished";
        s.result = op.result;
        s.legal = {};
        queueMicrotask(() => {
          if (op.reason !== "host_left" && s.config.autoRematch && s.round < rounds) openNext(s);
        });
      }
    }
    changed(s);
    agentsMove(s);
  }

  function waitFor(s, ready, seconds) {
    return new Promise((resolve) => {
      if (ready() || seconds <= 0) return resolve();
      const timer = setTimeout(resolve, seconds * 1000);
      const check = () => { if (ready()) { clearTimeout(timer); resolve(); } else s.waiters.push(check); };
      s.waiters.push(check);
    });
  }

  const playerObjects = (s) => s.players.map((p, seat) => ({ playerId: p, seat, asName: `Bot ${seat + 1}`, ready: true }));

  async function api(req, res, url, body) {
    const send = (status, obj) => { res.writeHead(status, { "Content-Type": "application/json" }); res.end(JSON.stringify(obj)); };
    const p = url.pathname;
    if (p === "/api/v1/auth/session" && req.method === "POST") {
      if (!body || !body.username) return send(400, { error: "username required" });
      return send(200, { token: `dev-token-${body.username}` });
    }
    const pub = /^\/api\/v1\/agent\/sessions\/([^/]+)\/public$/.exec(p);
    if (pub) {
      const s = sessions.get(decodeURIComponent(pub[1]));
      if (!s) return send(404, { error: "unknown session" });
      const since = url.searchParams.has("since") ? Number(url.searchParams.get("since")) : null;
      await waitFor(s, () => since === null || s.version !== since || s.status === "finished", Math.min(25, Number(url.searchParams.get("wait") || 0)));
      const onTurnSeats = s.players.map((pid, seat) => ((s.legal[pid] || []).length ? seat : -1)).filter((x) => x >= 0);
      return send(200, {
        sessionId: s.sessionId, gameId: s.game.gameId, gameTitle: s.game.gameTitle, status: s.status, round: s.round, seriesId: s.seriesId,
        turn: s.turn, deadline: s.status === "active" ? new Date(Date.now() + 300_000).toISOString() : null, onTurnSeats,
        players: playerObjects(s), state: s.state, result: s.result, version: s.version,
        nextSessionId: s.nextSessionId, previousSessionId: s.previousSessionId,
      });
    }
    if (!/^Bearer .+/.test(req.headers.authorization || "")) return send(401, { error: "sign in first" });
    if (p === "/api/v1/agent/bridge/sessions" && req.method === "POST") {
      const s = makeSession(body.config || {}, { game: { gameId: body.gameId, gameTitle: body.gameTitle } });
      log("created", s.sessionId, body.gameId);
      setTimeout(() => startGame(s), 100);
      return send(201, { sessionId: s.sessionId, config: s.config, skillUrl: null, round: s.round, seriesId: s.seriesId, players: [] });
    }
    const m = /^\/api\/v1\/agent\/bridge\/sessions\/([^/]+)\/(ops|pending-actions|rematch)$/.exec(p);
    if (!m) return send(404, { error: "no such endpoint" });
    const s = sessions.get(decodeURIComponent(m[1]));
    if (!s) return send(410, { error: "session lost", code: "server_restarted" });
    if (m[2] === "ops") {
      if (!Array.isArray(body.ops) || body.ops.length > 100) return send(400, { error: "ops must be an array of at most 100" });
      if (s.status === "finished") return send(409, { error: "session finished", code: "finished" });
      applyOps(s, body.ops);
      return send(200, { ok: true, status: s.status, version: s.version, round: s.round, nextSessionId: s.nextSessionId, players: playerObjects(s) });
    }
    if (m[2] === "rematch") {
      const next = openNext(s);
      return send(200, { sessionId: next.sessionId, round: next.round, seriesId: next.seriesId, players: next.players });
    }
    const after = Number(url.searchParams.get("after") || 0);
    await waitFor(s, () => s.entries.some((e) => e.seq > after) || s.status === "finished", Math.min(25, Number(url.searchParams.get("wait") || 0)));
    s.entries = s.entries.filter((e) => e.seq > after); // acknowledged entries leave the queue
    return send(200, { actions: s.entries, status: s.status, round: s.round, nextSessionId: s.nextSessionId, players: playerObjects(s), result: s.result });
  }

  async function serveFile(req, res, url) {
    const fileUrl = fileUrlForPath(url.pathname.endsWith("/") ? `${url.pathname}index.html` : url.pathname);
    if (!fileUrl) { res.writeHead(404); return res.end("not found"); }
    const file = fileURLToPath(fileUrl);
    try {
      if (!(await stat(file)).isFile()) throw new Error("not a file");
      const ext = file.slice(file.lastIndexOf("."));
      const headers = { "Content-Type": TYPES[ext] || "application/octet-stream", "Cache-Control": "no-store" };
      // Games run in an opaque-origin sandbox; their module scripts are CORS requests.
      if (url.pathname.startsWith("/games/") || url.pathname.startsWith("/sdk/")) headers["Access-Control-Allow-Origin"] = "*";
      res.writeHead(200, headers);
      res.end(await readFile(file));
    } catch {
      res.writeHead(404); res.end("not found");
    }
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    try {
      if (url.pathname === "/__dev/signin") {
        // Dev only: put a token in this origin's sessionStorage, then go on.
        const next = url.searchParams.get("next") || "/bridge/";
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        return res.end(`<!doctype html><script>sessionStorage.setItem("rcadia.bridge.token","dev-token");location.replace(${JSON.stringify(next)});</script>`);
      }
      if (url.pathname === "/__dev/log") {
        res.writeHead(200, { "Content-Type": "application/json" });
        return res.end(JSON.stringify([...sessions.values()].map(({ waiters, pending, ...s }) => s), null, 1));
      }
      if (url.pathname.startsWith("/api/")) {
        let body = null;
        if (req.method === "POST") {
          const chunks = [];
          for await (const c of req) chunks.push(c);
          const text = Buffer.concat(chunks).toString("utf8");
          body = text ? JSON.parse(text) : {};
        }
        return await api(req, res, url, body);
      }
      if (url.pathname === "/bridge") { res.writeHead(301, { Location: "/bridge/" + url.search }); return res.end(); }
      return await serveFile(req, res, url);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: String(err && err.message) }));
    }
  });
  return { server, sessions };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : dflt; };
  const port = Number(arg("--port", "8377"));
  const { server } = createMockHorst({ rounds: Number(arg("--rounds", "3")), log: (...a) => console.log(...a) });
  // Loopback only: this is a development fake.
  server.listen(port, "127.0.0.1", () => console.log(`mock horst on http://127.0.0.1:${port}/`));
}
