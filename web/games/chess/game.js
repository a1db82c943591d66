// House chess on RCADIA SDK v2. Rules live in rules.js (chess.js underneath), the board's
// drawing in board.js; this file connects them to the host.

import { RcadiaAgent } from "/sdk/rcadia-agent.js";
import { clockOptionsFrom, eventLog, intOptionFrom, showWithNames } from "../page-options.js";
// horst serves web/node_modules/chess.js/dist/esm/chess.js at this path.
import { Chess } from "/games/vendor/chess.js";
import { ChessRules, MAX_PLIES } from "./rules.js";
import { drawBoard, numberedMoves, squaresOf } from "./board.js";

const rcadia = new RcadiaAgent({
  minPlayers: 2,
  maxPlayers: 2,
  turnBased: true,
  simultaneous: false,
  gameType: "chess",
  autoRematch: true,
  // A host may shorten or lengthen the clock in the page URL (the house host's
  // house.game_query, a test server).
  ...clockOptionsFrom(globalThis.location ? globalThis.location.search : ""),
});

// ?maxPlies=N ends a game as a draw (move_limit) after N plies: short games for a demo table
// or a test server.
const rules = new ChessRules(Chess, {
  maxPlies: intOptionFrom(globalThis.location ? globalThis.location.search : "", "maxPlies", 1, MAX_PLIES),
});
// AGENT_GAME_OVER goes out once per game; the platform also ends games
// itself (timeouts, leavers), and then we must not report a second result.
let resultSent = false;

const $ = (id) => document.getElementById(id);

// Players' names (asName) by playerId, when the host tells them (AGENT_GAME_START `names`);
// without a name a player is shown by id.
let names = {};
const nameOf = (playerId) => (playerId && names[playerId]) || playerId || "?";
// A name as a part for showWithNames (in a <bdi> on the page).
const who = (playerId) => ({ name: nameOf(playerId) });

function note(text) { $("note").textContent = text; }
// Every platform event, in order, for whoever watches the page.
const logEvent = eventLog($("events"));

function publish() {
  rcadia.setState(rules.state());
  if (rules.over) {
    if (!resultSent) {
      resultSent = true;
      rcadia.endGame({
        ...rules.result,
        white: rules.white,
        black: rules.black,
        round: rules.round,
        fen: rules.board.fen(),
        plies: rules.uciHistory.length,
      });
    }
  } else {
    // The platform clears the other player's legal actions for us.
    rcadia.setLegalActions(rules.toMove, rules.legalActions());
  }
  render();
}

function render() {
  const s = rules.state();
  drawBoard($("board"), squaresOf(s.fen, { lastMove: s.lastMove && s.lastMove.uci, check: s.check && !s.over }));
  if (rules.started) {
    showWithNames($("players"), [`Round ${rules.round}: white `, who(rules.white), ", black ", who(rules.black)]);
  }
  if (!rules.started) {
    $("status").textContent = "Waiting for the game to start.";
  } else if (rules.over) {
    const r = rules.result;
    showWithNames($("status"), r.winner ? ["Game over: ", who(r.winner), ` wins (${r.reason}).`] : [`Game over: draw (${r.reason}).`]);
  } else {
    showWithNames($("status"), [`${s.turn === "black" ? "Black" : "White"} to move (`, who(s.toMove), `)${s.check ? ", check" : ""}.`]);
  }
  showWithNames($("last"), s.lastMove ? ["Last move: ", who(s.lastMove.by), ` played ${s.lastMove.san}`] : []);
  $("history").textContent = numberedMoves(rules.board.history());
}

rcadia.onGameStart(({ players, round, names: given }) => {
  names = given && typeof given === "object" ? given : {};
  logEvent(`game_start round ${round || 1}: ${(players || []).map(nameOf).join(", ")}`);
  try {
    rules.start(players, round || 1);
  } catch (err) {
    note(`Cannot start: ${err.message}`);
    return;
  }
  resultSent = false;
  note("");
  publish();
});

rcadia.onAction((playerId, action) => {
  const outcome = rules.play(playerId, action);
  if (!outcome.ok) {
    rcadia.rejectAction(playerId, outcome.reason);
    note(`Rejected ${nameOf(playerId)}: ${outcome.reason}`);
    return;
  }
  note("");
  publish();
});

rcadia.onTimeout((playerId, { strike, maxStrikes, final }) => {
  logEvent(`timeout ${nameOf(playerId)} strike ${strike}${maxStrikes ? `/${maxStrikes}` : ""}${final ? " final" : ""}`);
  // The platform keeps the clock and ends the game on the final strike;
  // the game only tells the viewer.
  note(final
    ? `${nameOf(playerId)} ran out of time (final strike).`
    : `${nameOf(playerId)} ran out of time: strike ${strike}${maxStrikes ? ` of ${maxStrikes}` : ""}.`);
});

rcadia.onSessionEnd(({ result, reason }) => {
  logEvent(`session_end ${reason}${result && result.winner ? ` winner ${nameOf(result.winner)}` : ""}`);
  if (!rules.over) rules.abort(result || { winner: null, reason });
  resultSent = true;
  note(`The platform ended the game (${reason}). Waiting for the next game.`);
  render();
});

render();
