// The wording of the table list and the spectator page (web/pages/views.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  tableStatus, hostLabel, ago, countdown, tableRows, tablesSummary, watchModel, chessModel, rpsModel, numberedMoves, viewFromReplay,
} from "../pages/views.js";

const NOW = Date.parse("2026-10-07T19:00:00.000Z");

test("table states and hosts read as words", () => {
  assert.deepEqual(tableStatus({ status: "waiting", joinable: true }), { label: "open: join now", badge: "open" });
  assert.deepEqual(tableStatus({ status: "waiting", joinable: false, reserved: true }), { label: "next round, seats reserved", badge: "reserved" });
  assert.equal(tableStatus({ status: "active" }).label, "playing");
  assert.equal(hostLabel("house"), "RCADIA house");
  assert.equal(hostLabel("player"), "a person's browser tab");
  assert.equal(ago("2026-10-07T18:57:00.000Z", NOW), "3 min ago");
  assert.equal(ago("2026-10-07T18:59:58.000Z", NOW), "just now");
  assert.equal(countdown("2026-10-07T19:04:12.000Z", NOW), "in 4 min 12 s");
  assert.equal(countdown(null, NOW), "no clock running");
});

test("rows: open first, then playing; newest first; the host filter", () => {
  const s = (id, status, joinable, host, createdAt) => ({
    sessionId: id, gameTitle: "Chess", status, joinable, reserved: false, currentPlayers: joinable ? 0 : 2, maxPlayers: 2, round: 1, host, createdAt,
  });
  const rows = tableRows([
    s("ses_a", "active", false, "house", "2026-10-07T18:50:00.000Z"),
    s("ses_b", "waiting", true, "agent", "2026-10-07T18:40:00.000Z"),
    s("ses_c", "waiting", true, "house", "2026-10-07T18:55:00.000Z"),
  ], { nowMs: NOW });
  assert.deepEqual(rows.map((r) => r.sessionId), ["ses_c", "ses_b", "ses_a"]);
  assert.equal(rows[0].watch, "/watch/ses_c");
  assert.equal(rows[0].players, "0 of 2");
  assert.equal(rows[2].status, "playing");
  assert.deepEqual(tableRows(rows.length ? [s("ses_a", "active", false, "house", ""), s("ses_b", "waiting", true, "agent", "")] : [], { host: "house", nowMs: NOW }).map((r) => r.sessionId), ["ses_a"]);
  assert.equal(tablesSummary(rows), "3 tables: 2 open, 1 playing.");
  assert.equal(tablesSummary([]), "No tables right now.");
});

test("the spectator view names players, the winner and who is on turn", () => {
  const v = {
    sessionId: "ses_1", gameTitle: "Chess", status: "finished", round: 2, turn: 9, deadline: null, onTurnSeats: [],
    players: [{ playerId: "p_1", seat: 0, asName: "Fish" }, { playerId: "p_2", seat: 1, asName: null }],
    result: { winner: "p_2", reason: "threefold_repetition" }, version: 40,
  };
  const m = watchModel(v, NOW);
  assert.equal(m.result, "seat 1 won (threefold repetition)");
  assert.deepEqual(m.resultParts, [{ name: "seat 1" }, " won (threefold repetition)"]);
  assert.deepEqual(m.players.map((p) => p.name), ["Fish", "seat 1"]);
  const active = watchModel({ ...v, status: "active", result: null, onTurnSeats: [0], deadline: "2026-10-07T19:00:30.000Z" }, NOW);
  assert.equal(active.clock, "in 30 s");
  assert.deepEqual(active.players.map((p) => p.onTurn), [true, false]);
  assert.equal(active.nameOf("p_1"), "Fish");
});

test("a table waiting for players lists every seat, the open ones as waiting for a player", () => {
  const v = {
    sessionId: "ses_1", gameTitle: "Chess", status: "waiting", round: 1, turn: 0, deadline: null, onTurnSeats: [],
    players: [{ playerId: "p_2", seat: 2, asName: "Fish" }, { playerId: "p_1", seat: 0, asName: "Crab" }], result: null, version: 3,
  };
  const seats = (m) => m.seats.map((s) => [s.seat, s.name, s.open]);
  // Three of four seats open at seat 1 and 3, in seat order.
  assert.deepEqual(seats(watchModel({ ...v, maxPlayers: 4 }, NOW)), [
    ["seat 0", "Crab", false], ["seat 1", null, true], ["seat 2", "Fish", false], ["seat 3", null, true],
  ]);
  assert.equal(watchModel({ ...v, maxPlayers: 4 }, NOW).openSeats, 2);
  // Without the seat count (a server that does not send it) only the taken seats, in seat order.
  assert.deepEqual(seats(watchModel(v, NOW)), [["seat 0", "Crab", false], ["seat 2", "Fish", false]]);
  // A game under way or over has no open seats to wait for, whatever its seat count.
  assert.deepEqual(seats(watchModel({ ...v, status: "active", maxPlayers: 4 }, NOW)), [["seat 0", "Crab", false], ["seat 2", "Fish", false]]);
  // Nobody seated yet: every seat open.
  assert.deepEqual(seats(watchModel({ ...v, players: [], maxPlayers: 2 }, NOW)), [["seat 0", null, true], ["seat 1", null, true]]);
});

test("chess and rock-paper-scissors states for people", () => {
  const names = { p_1: "Fish", p_2: "Crab" };
  const nameOf = (id) => names[id] || "?";
  const c = chessModel({ white: "p_1", black: "p_2", turn: "black", check: true, over: false, lastMove: { by: "p_1", san: "Qh5+", uci: "d1h5" }, history: ["e4", "e5", "Qh5+"] }, nameOf);
  assert.equal(c.white, "White: Fish");
  assert.equal(c.black, "Black: Crab");
  assert.equal(c.toMove, "Black to move, in check");
  assert.equal(c.lastMove, "Last move: Fish played Qh5+");
  assert.equal(c.moves, "1. e4 e5  2. Qh5+");
  assert.equal(numberedMoves([]), "");
  const r = rpsModel({ players: ["p_1", "p_2"], score: { p_1: 1, p_2: 0 }, throws: [{ throws: { p_1: "rock", p_2: "scissors" }, winner: "p_1" }], thrown: ["p_2"], over: false }, nameOf);
  assert.equal(r.score, "Fish 1 – 0 Crab");
  assert.deepEqual(r.throws, ["1. Fish rock vs scissors Crab: Fish wins"]);
  assert.equal(r.waiting, "Crab has thrown, waiting for the other");
  // The same lines as parts: each name marked, for a <bdi> on the page.
  assert.deepEqual(c.blackParts, ["Black: ", { name: "Crab" }]);
  assert.deepEqual(c.lastMoveParts, ["Last move: ", { name: "Fish" }, " played Qh5+"]);
  assert.deepEqual(r.scoreParts, [{ name: "Fish" }, " 1 – 0 ", { name: "Crab" }]);
  assert.deepEqual(r.throwParts[0], [{ name: "Fish" }, " rock vs scissors ", { name: "Crab" }, ": ", { name: "Fish" }, " wins"]);
  assert.deepEqual(r.waitingParts, [{ name: "Crab" }, " has thrown, waiting for the other"]);
});

test("a replay's frames: one per state, labelled by the moves that led to it", async () => {
  const { replayFrames, actionText } = await import("../pages/views.js");
  const lines = [
    { kind: "start", at: 1, sessionId: "ses_1", config: {} },
    { kind: "state", at: 2, version: 1, turn: 0, state: { n: 0 } },
    { kind: "players", at: 3, players: [{ seat: 0, playerId: "p_a", name: "Ada" }, { seat: 1, playerId: "p_b", name: null }] },
    { kind: "turn", at: 4, turn: 1, onTurnSeats: [0] },
    { kind: "action", at: 5, seat: 0, playerId: "p_a", turn: 1, action: "e2e4", status: "applied", submittedAt: 5, thinkMs: 1 },
    { kind: "state", at: 5, version: 3, turn: 2, state: { n: 1 } },
    { kind: "action", at: 6, seat: 1, playerId: "p_b", turn: 2, action: { to: 3 }, status: "applied", submittedAt: 6 },
    { kind: "state", at: 7, version: 4, turn: 3, state: null, omittedBytes: 99999 },
    { kind: "end", at: 8, result: { winner: "p_a" }, reason: "game_over", players: [{ seat: 0, playerId: "p_a", name: "Ada" }, { seat: 1, playerId: "p_b" }] },
    { kind: "next", at: 9, nextSessionId: "ses_2" },
  ];
  const r = replayFrames(lines);
  assert.deepEqual(r.frames.map((f) => f.label), ["start", "Ada played e2e4", 'seat 1 played {"to":3}']);
  assert.deepEqual(r.frames[1].state, { n: 1 });
  assert.match(r.frames[2].state.omitted, /99999 bytes/);
  assert.equal(r.result.winner, "p_a");
  assert.equal(r.next, "ses_2");
  assert.equal(actionText("x".repeat(100)).length, 58);
  assert.deepEqual(replayFrames(null).frames, []);
});

test("a chess replay's frames name the moves as the game does (SAN), other actions as sent", async () => {
  const { replayFrames } = await import("../pages/views.js");
  const lines = [
    { kind: "players", at: 1, players: [{ seat: 0, playerId: "p_a", name: "Ada" }, { seat: 1, playerId: "p_b", name: "Bo" }] },
    { kind: "state", at: 2, version: 1, turn: 1, state: { fen: "a", lastMove: null } },
    { kind: "action", at: 3, playerId: "p_a", turn: 1, action: "f3f4", status: "applied", submittedAt: 3 },
    { kind: "state", at: 4, version: 2, turn: 2, state: { fen: "b", lastMove: { uci: "f3f4", san: "Rf4#", by: "p_a" } } },
    // A state whose lastMove is not the action applied before it keeps the action's text.
    { kind: "action", at: 5, playerId: "p_b", turn: 2, action: "e7e5", status: "applied", submittedAt: 5 },
    { kind: "state", at: 6, version: 3, turn: 3, state: { fen: "c", lastMove: { uci: "a2a3", san: "a3" } } },
    // An unanswered action is never renamed.
    { kind: "action", at: 7, playerId: "p_a", turn: 3, action: "g1f3", status: "ignored", submittedAt: 7 },
    { kind: "state", at: 8, version: 4, turn: 3, state: { fen: "d", lastMove: { uci: "g1f3", san: "Nf3" } } },
  ];
  const labels = replayFrames(lines).frames.map((f) => f.label);
  assert.deepEqual(labels, ["start", "Ada played Rf4#", "Bo played e7e5", "Ada's g1f3 went unanswered"]);
});

test("the table list names who sits and how it stands", async () => {
  const { seatedLine } = await import("../pages/views.js");
  const players = [{ seat: 0, playerId: "p_a", asName: "Ada" }, { seat: 1, playerId: "p_b" }];
  assert.deepEqual(seatedLine({ players, state: { game: "rps", players: ["p_a", "p_b"], score: { p_a: 2, p_b: 1 } } }), { names: ["Ada", "seat 1"], detail: "2–1" });
  assert.deepEqual(seatedLine({ players, state: { game: "chess", history: ["e4", "e5", "Nf3"] } }).detail, "move 2");
  assert.deepEqual(seatedLine({ players: [], state: null }), { names: [], detail: "" });
  // A waiting table with the seat count (the public view's maxPlayers): how many are taken.
  assert.deepEqual(seatedLine({ players: players.slice(0, 1), status: "waiting", maxPlayers: 3, state: null }), { names: ["Ada"], detail: "1 of 3 seats taken" });
  // Full, or under way: no count.
  assert.deepEqual(seatedLine({ players, status: "waiting", maxPlayers: 2, state: null }).detail, "");
  assert.deepEqual(seatedLine({ players: players.slice(0, 1), status: "active", maxPlayers: 3, state: null }).detail, "");
});

test("a finished game's view from its replay, for a record that expired", () => {
  const lines = [
    { kind: "start", at: 0, sessionId: "ses_1", seriesId: "ses_0", round: 2, gameId: "chess", gameTitle: "Chess", config: {}, previousSessionId: "ses_0" },
    { kind: "players", at: 1, players: [{ seat: 0, playerId: "p_1", name: "Ada", agent: "agt_a" }, { seat: 1, playerId: "p_2", name: null, agent: "agt_b" }] },
    { kind: "state", at: 2, version: 3, turn: 1, state: { fen: "x" } },
    { kind: "state", at: 3, omittedBytes: 99999, turn: 2, version: 4, state: null },
    { kind: "end", at: 4, result: { winner: "p_1", reason: "checkmate" }, reason: "game_over", players: [{ seat: 0, playerId: "p_1", name: "Ada" }, { seat: 1, playerId: "p_2", name: null }] },
    { kind: "next", at: 5, nextSessionId: "ses_2" },
  ];
  const v = viewFromReplay(lines, "ses_1");
  assert.equal(v.status, "finished");
  assert.equal(v.round, 2);
  assert.equal(v.gameId, "chess");
  assert.deepEqual(v.players.map((p) => p.asName), ["Ada", null]);
  assert.deepEqual(v.state, { fen: "x" }, "the last state kept whole");
  assert.equal(v.nextSessionId, "ses_2");
  assert.match(watchModel(v, 0).result, /Ada won/);
  assert.equal(viewFromReplay([{ kind: "end" }], "ses_1"), null, "no start line: nothing to show");
});

test("a replay cut at its size limit says so, and a move too large to keep shows its size", async () => {
  const { replayFrames } = await import("../pages/views.js");
  const lines = [
    { kind: "players", at: 1, players: [{ seat: 0, playerId: "p_1", name: "Ada" }] },
    { kind: "state", at: 2, version: 1, turn: 1, state: { n: 0 } },
    { kind: "action", at: 3, playerId: "p_1", turn: 1, action: null, omittedBytes: 15012, submittedAt: 3 },
    { kind: "state", at: 4, version: 2, turn: 2, state: { n: 1 } },
    { kind: "truncated", at: 5 },
    { kind: "end", at: 9, result: { winner: "p_1" }, reason: "game_over", players: [{ seat: 0, playerId: "p_1", name: "Ada" }] },
  ];
  const { frames, result } = replayFrames(lines);
  assert.equal(frames.length, 2);
  assert.match(frames[1].label, /Ada played an action of 15012 bytes/);
  assert.match(frames[1].label, /size limit/);
  assert.deepEqual(result, { winner: "p_1" });
});

test("a name in a plain string such as the document's title is isolated", async () => {
  const { isolate } = await import("../pages/views.js");
  // A right-to-left name before " in Chess" would take the words after it into its run.
  assert.equal(`${isolate("שחקן 7")} in Chess`, "\u2068שחקן 7\u2069 in Chess");
  // A name's own direction controls are dropped: a PDI of its own cannot end the isolation.
  assert.equal(isolate("a\u2069\u202eb\u200f"), "\u2068ab\u2069");
  assert.equal(isolate(null), "\u2068\u2069");
});

test("a live event's time reads as the other pages' times: 24-hour UTC, said so", async () => {
  const { eventTime } = await import("../pages/views.js");
  assert.equal(eventTime(new Date(NOW + 5000)), "19:00:05 UTC");
  assert.equal(eventTime(new Date("2026-10-07T04:38:29.900Z")), "04:38:29 UTC");
});
