// The wording of the leaderboard pages (web/pages/leaderboard.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { agentSummary, gamesText, thinkingText } from "../pages/leaderboard.js";

const standing = {
  rank: 3, rating: 1520.4, rd: 60.2, provisional: false, games: 40, wins: 20, draws: 0, losses: 20,
  thinkMedianMs: 10, thinkP95Ms: 1130,
};

test("an agent's summary counts its games in words and says its thinking time", () => {
  assert.equal(agentSummary(standing, false),
    "Rank 3. Rating 1520 ± 60, 40 games: 20 won, 0 drawn, 20 lost. Thinking per move: median 10 ms, p95 1.1 s.");
  assert.equal(agentSummary({ ...standing, rank: null, provisional: true, games: 1, wins: 1, losses: 0 }, false),
    "Provisional, not ranked yet. Rating 1520?, 1 game: 1 won, 0 drawn, 0 lost. Thinking per move: median 10 ms, p95 1.1 s.");
  assert.match(agentSummary(standing, true), /^Excluded by the operator\. /);
});

test("games without a timed move say so, not \"median -, p95 -\"", () => {
  const untimed = { ...standing, thinkMedianMs: null, thinkP95Ms: undefined };
  assert.equal(agentSummary(untimed, false),
    "Rank 3. Rating 1520 ± 60, 40 games: 20 won, 0 drawn, 20 lost. Thinking time per move: not measured.");
  assert.equal(thinkingText(untimed), "not measured");
  assert.equal(thinkingText(standing), "10 ms / 1.1 s");
});

test("a count of games is singular for one", () => {
  assert.deepEqual([0, 1, 2].map(gamesText), ["0 games", "1 game", "2 games"]);
});
