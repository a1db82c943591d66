// House rock-paper-scissors on RCADIA SDK v2. Simultaneous: the platform
// holds each throw until both players have thrown, then releases both
// actions; rules.js resolves the throw when the second one arrives.

import { RcadiaAgent } from "/sdk/rcadia-agent.js";
import { clockOptionsFrom, eventLog, showWithNames } from "../page-options.js";
import { RpsMatch, MOVES } from "./rules.js";

const rcadia = new RcadiaAgent({
  minPlayers: 2,
  maxPlayers: 2,
  turnBased: true,
  simultaneous: true,
  gameType: "rps",
  autoRematch: true,
  // A host may shorten or lengthen the clock in the page URL (the house host's
  // house.game_query, a test server).
  ...clockOptionsFrom(globalThis.location ? globalThis.location.search : ""),
});

const match = new RpsMatch();
// AGENT_GAME_OVER goes out once per match; when the platform ends the match
// itself (timeout, leaver) we must not report a second result.
let resultSent = false;

const $ = (id) => document.getElementById(id);

// Players' names by playerId when the host gives them (AGENT_GAME_START `names`), else ids.
let names = {};
const nameOf = (playerId) => (playerId && names[playerId]) || playerId || "?";
// A name as a part for showWithNames (in a <bdi> on the page).
const who = (playerId) => ({ name: nameOf(playerId) });

function note(text) { $("note").textContent = text; }
// Every platform event, in order, for whoever watches the page.
const logEvent = eventLog($("events"));

function publish() {
  rcadia.setState(match.state());
  if (match.over) {
    if (!resultSent) {
      resultSent = true;
      rcadia.endGame({ ...match.result, round: match.round });
    }
  } else {
    // Simultaneous: every player with legal actions is on turn.
    for (const p of match.players) rcadia.setLegalActions(p, MOVES.slice());
  }
  render();
}

function render() {
  if (!match.started) {
    $("status").textContent = "Waiting for the match to start.";
    return;
  }
  const [a, b] = match.players;
  showWithNames($("players"), [`Round ${match.round}: `, who(a), " vs ", who(b)]);
  showWithNames($("score"), ["Score: ", who(a), ` ${match.score[a]} – ${match.score[b]} `, who(b)]);
  showWithNames($("throws"), match.throws.flatMap((t, i) => [
    `${i ? "\n" : ""}${i + 1}. ${t.throws[a]} vs ${t.throws[b]}: `,
    ...(t.winner ? [who(t.winner), " wins"] : ["tie"]),
  ]));
  if (match.over) {
    const r = match.result;
    showWithNames($("status"), r.winner ? ["Match over: ", who(r.winner), ` wins (${r.reason}).`] : [`Match over: draw (${r.reason}).`]);
  } else {
    const waiting = match.waitingFor();
    showWithNames($("status"), [`Throw ${match.throwNumber}: waiting for `, ...waiting.flatMap((p, i) => (i ? [" and ", who(p)] : [who(p)])), "."]);
  }
}

rcadia.onGameStart(({ players, round, names: given }) => {
  names = given && typeof given === "object" ? given : {};
  logEvent(`game_start round ${round || 1}: ${(players || []).map(nameOf).join(", ")}`);
  try {
    match.start(players, round || 1);
  } catch (err) {
    note(`Cannot start: ${err.message}`);
    return;
  }
  resultSent = false;
  note("");
  publish();
});

rcadia.onAction((playerId, action) => {
  const outcome = match.submit(playerId, action);
  if (!outcome.ok) {
    rcadia.rejectAction(playerId, outcome.reason);
    note(`Rejected ${nameOf(playerId)}: ${outcome.reason}`);
    return;
  }
  note("");
  // Publish only when the throw resolved: publishing after the first throw
  // would advance the platform's turn and could reveal the throw early.
  if (outcome.resolved) publish(); else render();
});

rcadia.onTimeout((playerId, { strike, maxStrikes, final }) => {
  logEvent(`timeout ${nameOf(playerId)} strike ${strike}${maxStrikes ? `/${maxStrikes}` : ""}${final ? " final" : ""}`);
  note(final
    ? `${nameOf(playerId)} ran out of time (final strike).`
    : `${nameOf(playerId)} ran out of time: strike ${strike}${maxStrikes ? ` of ${maxStrikes}` : ""}.`);
});

rcadia.onSessionEnd(({ result, reason }) => {
  logEvent(`session_end ${reason}${result && result.winner ? ` winner ${nameOf(result.winner)}` : ""}`);
  if (!match.over) match.abort(result || { winner: null, reason });
  resultSent = true;
  note(`The platform ended the match (${reason}). Waiting for the next match.`);
  render();
});

render();
