// The whole browser side without a browser: a house game page (real SDK,
// real rules) talks through HostSession and the real HTTP client to
// mock-horst on loopback, whose built-in agents play random legal actions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadGamePage } from "../test-support/game-page.js";
import { createMockHorst } from "../test-support/mock-horst.js";
import { createBridgeApi } from "../bridge/bridge-api.js";
import { HostSession } from "../bridge/host-session.js";

async function hostGame(gamePath, { rounds, seconds, enough = null }) {
  const { server, sessions } = createMockHorst({ rounds, agentDelayMs: 1, rematchDelayMs: 20 });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  let token = null;
  const api = createBridgeApi({ fetch: globalThis.fetch, getToken: () => token, baseUrl: origin });
  token = await api.signIn("tester", "pw");

  let game = null;
  const host = new HostSession({
    api, gameId: gamePath.split("/")[2], gameTitle: "test",
    // postMessage is asynchronous in browsers; keep it so in both directions.
    postToGame: (msg) => setImmediate(() => game.win.dispatch(msg)),
    log: () => {},
  });
  game = await loadGamePage(gamePath, { onPost: (msg) => setImmediate(() => host.handleGameMessage(msg)) });

  const deadline = Date.now() + seconds * 1000;
  const done = () => (enough && enough([...sessions.values()]))
    || [...sessions.values()].filter((s) => s.status === "finished").length >= rounds;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100)); // let the last deliveries land
  host.stop();
  server.closeAllConnections();
  server.close();
  return { sessions: [...sessions.values()], game, host };
}

test("rock-paper-scissors: a two-round series plays to the end through the bridge", async () => {
  const { sessions, game, host } = await hostGame("/games/rps/game.js", { rounds: 2, seconds: 20 });
  assert.equal(sessions.length, 2);
  for (const s of sessions) {
    assert.equal(s.status, "finished");
    // Random throws: about one match in 250 ties its way to the throw limit, which is a
    // proper ending too (the leader wins, or a draw).
    if (s.result.reason === "throw_limit") {
      assert.equal(s.result.throws.length, 9);
      assert.ok(s.result.winner === null || s.players.includes(s.result.winner));
    } else {
      assert.equal(s.result.reason, "best_of_three");
      assert.ok(s.players.includes(s.result.winner));
    }
    assert.equal(s.ops.filter((o) => o.op === "end").length, 1, "one result per game");
  }
  assert.equal(sessions[1].round, 2);
  assert.equal(sessions[1].seriesId, sessions[0].sessionId);
  assert.equal(host.view.sessionId, sessions[1].sessionId);
  assert.match(game.text("status"), /Match over/);
  assert.match(game.text("players"), /^Round 2:/);
});

test("chess: moves flow through the bridge, turns alternate, nothing legal is rejected", async () => {
  // A whole random game takes hundreds of plies (too slow for a unit run over
  // loopback HTTP); game endings are covered by chess-rules and games-pages.
  const PLIES = 30;
  const plies = (s) => s.ops.filter((o) => o.op === "legal_actions").length;
  const { sessions, game } = await hostGame("/games/chess/game.js", {
    rounds: 1, seconds: 30, enough: (all) => all.length > 0 && plies(all[0]) >= PLIES,
  });
  assert.equal(sessions.length, 1);
  const [s] = sessions;
  assert.ok(plies(s) >= PLIES || s.status === "finished", `only ${plies(s)} plies`);
  const turns = s.ops.filter((o) => o.op === "legal_actions").map((o) => o.playerId);
  assert.equal(turns[0], s.players[0], "round 1: seat 0 is white and moves first");
  for (let i = 1; i < turns.length; i++) assert.notEqual(turns[i], turns[i - 1]);
  assert.equal(s.ops.filter((o) => o.op === "reject").length, 0, "random legal moves are never rejected");
  assert.ok(s.state.moves.length >= PLIES - 1);
  assert.notEqual(game.text("history"), "-");
});
