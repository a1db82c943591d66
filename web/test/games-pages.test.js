// The house games' page modules, loaded as a browser would load them (the SDK
// and chess.js by the URL paths horst serves), played through the real SDK.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadGamePage } from "../test-support/game-page.js";

const P1 = "p_one";
const P2 = "p_two";

test("chess page: configure, start, moves, rejection, checkmate, next round with colours swapped", async () => {
  const g = await loadGamePage("/games/chess/game.js");
  assert.deepEqual(g.drain(), [{
    type: "AGENT_CONFIGURE",
    data: { minPlayers: 2, maxPlayers: 2, turnBased: true, simultaneous: false, gameType: "chess", sdkVersion: "2.0.0", autoRematch: true },
  }]);
  assert.match(g.text("status"), /Waiting/);

  g.send("AGENT_SESSION_START", { sessionId: "ses_1", round: 1, players: [] });
  g.send("AGENT_GAME_START", { sessionId: "ses_1", players: [P1, P2], round: 1 });
  let out = g.drain();
  assert.deepEqual(out.map((m) => m.type), ["AGENT_STATE", "AGENT_LEGAL_ACTIONS"]);
  assert.equal(out[0].data.state.white, P1);
  assert.equal(out[1].data.playerId, P1);
  assert.equal(out[1].data.actions.length, 20);
  const board = g.el("board").children.flatMap((row) => row.children);
  assert.equal(board.length, 64);
  assert.equal(board[0].getAttribute("aria-label"), "a8, black rook");
  assert.equal(board[63].getAttribute("aria-label"), "h1, white rook");
  assert.match(g.text("status"), /White to move/);

  g.act(P1, "e2e5");
  out = g.drain();
  assert.equal(out.length, 1);
  assert.equal(out[0].type, "AGENT_ACTION_REJECTED");
  assert.equal(out[0].data.playerId, P1);
  assert.equal(out[0].data.actionId, "a_1");
  assert.match(out[0].data.reason, /illegal move/);

  g.act(P1, "f2f3");
  const marked = g.el("board").children.flatMap((row) => row.children).filter((c) => / last/.test(c.className)).map((c) => c.dataset.square);
  assert.deepEqual(marked.sort(), ["f2", "f3"], "the last move's squares are marked");
  out = g.drain();
  assert.deepEqual(out.map((m) => m.type), ["AGENT_STATE", "AGENT_LEGAL_ACTIONS"]);
  assert.equal(out[1].data.playerId, P2);
  g.act(P2, { move: "e7e5" });
  g.act(P1, "g4"); // SAN is accepted too
  g.drain();
  g.act(P2, "d8h4");
  out = g.drain();
  assert.deepEqual(out.map((m) => m.type), ["AGENT_STATE", "AGENT_GAME_OVER"]);
  assert.equal(out[0].data.state.over, true);
  const result = out[1].data.result;
  assert.equal(result.winner, P2);
  assert.equal(result.reason, "checkmate");
  assert.equal(result.black, P2);
  assert.match(g.text("status"), /p_two wins \(checkmate\)/);

  // A late action after the end is rejected, and no second result is sent.
  g.act(P1, "e2e4");
  assert.deepEqual(g.drain().map((m) => m.type), ["AGENT_ACTION_REJECTED"]);

  // Round 2: seat 0 plays black.
  g.send("AGENT_SESSION_START", { sessionId: "ses_2", round: 2, players: [P1, P2] });
  g.send("AGENT_GAME_START", { sessionId: "ses_2", players: [P1, P2], round: 2 });
  out = g.drain();
  assert.equal(out[0].data.state.white, P2);
  assert.equal(out[1].data.playerId, P2);
  assert.match(g.text("players"), /Round 2: white p_two, black p_one/);
});

test("chess page: players are shown by the names the host gives, not by id", async () => {
  const g = await loadGamePage("/games/chess/game.js");
  g.send("AGENT_GAME_START", { sessionId: "ses_1", players: [P1, P2], round: 1, names: { [P1]: "Fish", [P2]: "Crab" } });
  assert.equal(g.text("players"), "Round 1: white Fish, black Crab");
  assert.match(g.text("status"), /White to move \(Fish\)/);
  g.act(P1, "e2e4");
  assert.equal(g.text("last"), "Last move: Fish played e4");
  assert.doesNotMatch(g.text("players") + g.text("status") + g.text("last"), /p_one|p_two/);
  // Each name in its own <bdi>: a right-to-left name cannot reorder the words around it.
  const bdis = (id) => g.el(id).children.filter((c) => typeof c !== "string" && c.tagName === "BDI").map((c) => c.textContent);
  assert.deepEqual([bdis("players"), bdis("status"), bdis("last")], [["Fish", "Crab"], ["Crab"], ["Fish"]]);
});

test("chess page: the platform ending the game stops play without a second result", async () => {
  const g = await loadGamePage("/games/chess/game.js");
  g.send("AGENT_GAME_START", { sessionId: "ses_1", players: [P1, P2], round: 1 });
  g.drain();
  g.send("AGENT_TIMEOUT", { playerId: P1, strike: 1, maxStrikes: 2, final: false });
  assert.match(g.text("note"), /strike 1 of 2/);
  g.send("AGENT_SESSION_END", { sessionId: "ses_1", result: { winner: P2, reason: "timeout" }, reason: "timeout" });
  assert.match(g.text("status"), /p_two wins \(timeout\)/);
  g.act(P1, "e2e4");
  assert.deepEqual(g.drain().map((m) => m.type), ["AGENT_ACTION_REJECTED"]);
});

test("rps page: simultaneous throws, best of three, game over", async () => {
  const g = await loadGamePage("/games/rps/game.js");
  assert.deepEqual(g.drain()[0].data, {
    minPlayers: 2, maxPlayers: 2, turnBased: true, simultaneous: true, gameType: "rps", sdkVersion: "2.0.0", autoRematch: true,
  });
  g.send("AGENT_GAME_START", { sessionId: "ses_1", players: [P1, P2], round: 1 });
  let out = g.drain();
  assert.deepEqual(out.map((m) => [m.type, m.data.playerId ?? null]), [
    ["AGENT_STATE", null], ["AGENT_LEGAL_ACTIONS", P1], ["AGENT_LEGAL_ACTIONS", P2],
  ]);
  assert.deepEqual(out[1].data.actions, ["rock", "paper", "scissors"]);

  // The release delivers both throws; nothing is published between them.
  g.act(P1, "rock");
  assert.deepEqual(g.drain(), []);
  assert.match(g.text("status"), /waiting for p_two/);
  g.act(P2, "lizard");
  out = g.drain();
  assert.equal(out[0].type, "AGENT_ACTION_REJECTED");
  assert.equal(out[0].data.playerId, P2);
  g.act(P2, "scissors"); // the resubmission goes straight to the game
  out = g.drain();
  assert.deepEqual(out.map((m) => m.type), ["AGENT_STATE", "AGENT_LEGAL_ACTIONS", "AGENT_LEGAL_ACTIONS"]);
  assert.deepEqual(out[0].data.state.score, { [P1]: 1, [P2]: 0 });

  g.act(P2, { move: "paper" });
  g.act(P1, "rock");
  g.drain();
  g.act(P1, "paper");
  g.act(P2, "rock");
  out = g.drain();
  assert.deepEqual(out.map((m) => m.type), ["AGENT_STATE", "AGENT_GAME_OVER"]);
  assert.equal(out[1].data.result.winner, P1);
  assert.equal(out[1].data.result.reason, "best_of_three");
  assert.deepEqual(out[1].data.result.score, { [P1]: 2, [P2]: 1 });
  assert.match(g.text("status"), /p_one wins/);
  assert.match(g.text("throws"), /1\. rock vs scissors: p_one wins/);
  assert.match(g.text("throws"), /\n2\. /);
  // Names (here ids: no names given) each in their own <bdi>.
  const bdis = (id) => g.el(id).children.filter((c) => typeof c !== "string" && c.tagName === "BDI").map((c) => c.textContent);
  assert.deepEqual([bdis("players"), bdis("score"), bdis("status")], [[P1, P2], [P1, P2], [P1]]);
});
