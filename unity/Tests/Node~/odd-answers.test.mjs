// The Unity SDK behind a bridge that met odd server answers (docs/reliability.md, "The SDKs
// against odd answers"). The SDKs speak no HTTP: what reaches a game is what the bridge
// (web/bridge/host-session.js over Node's fetch) makes of the server's answers. So the bridge
// runs here against a real HTTP listener that answers as a misbehaving server would, with
// the JS SDK as its game; every message it posted to the game is then played into the C#
// SDK (the real jslib and the C# core under Mono) and the JS SDK, and both must answer alike
// and deliver each action once.

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { HostSession } from "../../../web/bridge/host-session.js";
import { createBridgeApi } from "../../../web/bridge/bridge-api.js";
import { RcadiaAgent } from "../../../web/sdk/rcadia-agent.js";
import { makeFakeWindow } from "../../../web/test-support/fake-window.js";
import { driverPath } from "./support/mono-build.mjs";
import { jsTranscript, unityTranscript } from "./support/transcripts.mjs";

// Not a speed limit: a guard so that a hung Mono process fails the run instead of stalling it.
const HANG_GUARD = { timeout: 300_000 };
const CONFIG = { minPlayers: 2, maxPlayers: 2, turnBased: true, simultaneous: false, gameType: "chess", sdkVersion: "2.0.0" };
const FIRST = "ses_aaaa00000001";
const SECOND = "ses_bbbb00000002";
const P = ["p_00000001", "p_00000002"];

const start = (seq, round = 1) => ({ seq, type: "system", event: "game_start", players: P, round });
const move = (seq, actionId, to) => ({ seq, type: "action", playerId: P[0], action: { to }, actionId });

function json(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * The server: the first table's polls answer a 503 with Retry-After, a cut-off body, the
 * same entries twice (an acknowledgement it lost), an action re-queued under a new seq with
 * its old actionId, a 500, then 410 (the API restarted without the session); the bridge's
 * second table starts normally.
 */
function oddServer() {
  let polls = 0;
  let creates = 0;
  return http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = req.url.split("?")[0];
      const after = Number(new URL(req.url, "http://x").searchParams.get("after"));
      if (req.method === "POST" && path === "/api/v1/agent/bridge/sessions") {
        const sid = creates++ === 0 ? FIRST : SECOND;
        return json(res, 201, { sessionId: sid, config: CONFIG, round: 1, seriesId: sid, players: [] });
      }
      if (path.endsWith("/public")) return setTimeout(() => json(res, 200, { status: "active", version: 1 }), 50);
      if (path.endsWith("/ops")) return json(res, 200, { ok: true, status: "active", version: 2, round: 1, players: [] });
      if (path.includes(SECOND) && path.endsWith("/pending-actions")) {
        if (after === 0) return json(res, 200, { actions: [start(1)], status: "active", round: 1, players: [] });
        return setTimeout(() => json(res, 200, { actions: [], status: "active", round: 1, players: [] }), 50);
      }
      const n = polls++;
      const active = (actions) => json(res, 200, { actions, status: "active", round: 1, players: [] });
      switch (n) {
        case 0: return json(res, 503, { error: "store restarting", code: "unavailable" }, { "Retry-After": "1" });
        case 1: {
          const body = JSON.stringify({ actions: [start(1), move(2, "a_1", "e4")], status: "active", round: 1, players: [] });
          res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(body.length) });
          res.write(body.slice(0, body.length - 10));
          return setTimeout(() => res.socket.destroy(), 10);
        }
        case 2: return active([start(1), move(2, "a_1", "e4")]);
        case 3: return active([start(1), move(2, "a_1", "e4"), move(3, "a_2", "d4")]);
        case 4: return active([move(4, "a_2", "d4"), move(5, "a_3", "c4")]);
        case 5: return json(res, 500, { error: "internal", code: "internal_error" });
        default: return json(res, 410, { error: "the server restarted; this session is gone", code: "server_restarted" });
      }
    });
  });
}

/** Runs the bridge against the odd server with the JS SDK as its game; returns what the bridge posted to the game. */
async function bridgeMessages() {
  const server = oddServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const posted = [];
  const win = makeFakeWindow({ onPost: (m) => host.handleGameMessage(m) });
  const host = new HostSession({
    api: createBridgeApi({ fetch: globalThis.fetch, getToken: () => "jwt", baseUrl: base }),
    postToGame: (m) => { posted.push(JSON.parse(JSON.stringify(m))); win.dispatch(JSON.parse(JSON.stringify(m))); },
    // The waits are recorded by the bridge's own tests; here they are cut short.
    sleep: () => new Promise((r) => setTimeout(r, 5)),
  });
  const game = new RcadiaAgent(CONFIG, { window: win });
  try {
    const end = Date.now() + 20_000;
    while (!posted.some((m) => m.type === "AGENT_GAME_START" && m.data.sessionId === SECOND)) {
      if (Date.now() > end) throw new Error(`the bridge never reached its second table: ${JSON.stringify(posted)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    host.stop();
    game.destroy();
    server.closeAllConnections();
    server.close();
  }
  return posted;
}

test("behind a bridge that met 503, a cut-off body, repeats, a 500 and a restart, both SDKs deliver each action once and alike", HANG_GUARD, async () => {
  const posted = await bridgeMessages();
  const steps = [
    { new: CONFIG },
    { handlers: ["gameStart", "action", "timeout", "sessionEnd", "actionRejected"] },
    ...posted.flatMap((m) => [{ host: m }, { props: true }]),
  ];
  const js = jsTranscript(steps);
  const unity = await unityTranscript(steps, driverPath());
  assert.deepEqual(unity, js, "the C# SDK answers as the JS SDK does");

  const events = unity.filter((e) => e.event).map((e) => e.event);
  assert.deepEqual(events.filter((e) => e.kind === "action").map((e) => e.actionId), ["a_1", "a_2", "a_3"]);
  assert.deepEqual(events.filter((e) => e.kind === "gameStart").map((e) => e.sessionId), [FIRST, SECOND]);
  assert.deepEqual(events.filter((e) => e.kind === "sessionEnd").map((e) => [e.sessionId, e.reason]), [[FIRST, "session_lost"]]);
  // Asked for its configuration after the loss, the game sent it again (once on construct).
  const configures = unity.filter((e) => e.out && e.out.type === "AGENT_CONFIGURE");
  assert.equal(configures.length, 2);
  const props = unity.filter((e) => e.props).at(-1).props;
  assert.equal(props.sessionId, SECOND);
});
