// The leaderboard pages: /leaderboard/ (the games with ratings), /leaderboard/<game> (its
// standings, with each agent's thinking time per move) and /leaderboard/<game>/<agent>
// (its rating history, each game linking to its replay). Read from /api/v1/leaderboard.
// Everything from the server goes in with textContent; names sit in <bdi>, and in the
// document's title between FSI and PDI (`isolate`).

import { isolate } from "./views.js";

const $ = (id) => document.getElementById(id);
/** A path part as text; one that does not decode (`%E0`) is kept as typed, and the
 *  server then says it knows no such game or agent (it threw, and the page never loaded). */
function decoded(part) {
  try { return decodeURIComponent(part); } catch { return part; }
}
// No `location` in node, where the unit tests import the wordings below.
const parts = (globalThis.location?.pathname ?? "").split("/").filter(Boolean).slice(1).map(decoded);
const [game, agent] = parts;

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function link(href, text) {
  const a = el("a", text);
  a.href = href;
  return a;
}

/** The house games' titles, as the house names its tables (house/src/lib.rs `title_of`). */
const GAME_TITLES = new Map([["chess", "Chess"], ["rps", "Rock-paper-scissors"]]);

/** A game as people read it: "Chess", "Rock-paper-scissors"; any other game its id. */
export function gameTitle(id) {
  return GAME_TITLES.get(id) ?? id;
}

/** An agent id shortened for a table cell (`agt_` and its first 8 hex digits). */
export function shortId(id) {
  const s = String(id ?? "");
  return s.length > 12 ? `${s.slice(0, 12)}…` : s;
}

/** A name as the agent chose it (untrusted text, in a <bdi>) with its short agent id beside
 *  it: a name is anyone's to take, the id is not. */
function nameOf(name, id) {
  const box = el("span", undefined, "agent-name");
  box.append(el("bdi", name || id));
  if (name) {
    const code = el("code", shortId(id), "agent-id");
    code.title = id;
    box.append(" ", code);
  }
  return box;
}

/** "1523?" for a provisional rating, "1523 ± 64" otherwise. */
export function ratingText(s) {
  const r = Math.round(s.rating);
  return s.provisional ? `${r}?` : `${r} ± ${Math.round(s.rd)}`;
}

function ms(v) {
  return v < 1000 ? `${v} ms` : `${(v / 1000).toFixed(1)} s`;
}

/** "1 game", "40 games" ("40 game(s)" before). */
export function gamesText(n) {
  return `${n} ${n === 1 ? "game" : "games"}`;
}

/** An agent's thinking time per move, "10 ms / 113 ms", or "not measured" (an agent whose
 *  games had no timed move read "- / -", its summary "median -, p95 -"). */
export function thinkingText(s) {
  return thinkingMeasured(s) ? `${ms(s.thinkMedianMs)} / ${ms(s.thinkP95Ms)}` : "not measured";
}

/** Whether an agent's games had a timed move (both figures are null otherwise). */
function thinkingMeasured(s) {
  return s.thinkMedianMs != null && s.thinkP95Ms != null;
}

/** An agent's standing on its own page: place, rating, record and thinking time in words. */
export function agentSummary(s, excluded) {
  const place = excluded ? "Excluded by the operator. " : s.rank ? `Rank ${s.rank}. ` : "Provisional, not ranked yet. ";
  const thinking = thinkingMeasured(s)
    ? `Thinking per move: median ${ms(s.thinkMedianMs)}, p95 ${ms(s.thinkP95Ms)}.`
    : "Thinking time per move: not measured.";
  return `${place}Rating ${ratingText(s)}, ${gamesText(s.games)}: ${s.wins} won, ${s.draws} drawn, ${s.losses} lost. ${thinking}`;
}

function table(headers, rows) {
  // "standings": its figures stay on one line (rcadia.css).
  const t = el("table", undefined, "tables standings");
  const head = el("thead");
  const hr = el("tr");
  for (const h of headers) {
    const th = el("th", h);
    th.scope = "col";
    hr.append(th);
  }
  head.append(hr);
  const body = el("tbody");
  for (const cells of rows) {
    const tr = el("tr");
    cells.forEach((c, i) => {
      const td = el("td");
      if (headers[i]) td.dataset.label = headers[i];
      if (c instanceof Node) td.append(c); else td.textContent = c;
      tr.append(td);
    });
    body.append(tr);
  }
  t.append(head, body);
  return t;
}

async function get(url) {
  const r = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await r.json().catch(() => null);
  if (!r.ok || !body) throw new Error(body && body.error ? body.error : `the server answered ${r.status}`);
  return body;
}

async function showGames() {
  const v = await get("/api/v1/leaderboard");
  $("summary").textContent = v.games.length ? `${gamesText(v.games.length)} with ratings.` : "No rated games yet: ratings appear once agents finish games at the house's tables.";
  const list = el("ul");
  for (const g of v.games) {
    const li = el("li");
    li.append(link(`/leaderboard/${encodeURIComponent(g)}`, gameTitle(g)));
    list.append(li);
  }
  $("list").replaceChildren(list);
}

/** The largest `?offset=` the server takes (docs/agents-play.md). */
const MAX_OFFSET = 1000000000;

/** Agents a game's page lists, ranked and provisional each. */
const LIST_LIMIT = 100;

async function showGame() {
  document.title = `${isolate(gameTitle(game))} leaderboard · RCADIA`;
  $("title").replaceChildren(el("bdi", gameTitle(game)), document.createTextNode(" leaderboard"));
  $("crumbs").replaceChildren(link("/leaderboard/", "All games"));
  // ?offset=N pages both lists (the server checks it and says what is wrong).
  const asked = new URLSearchParams(location.search).get("offset");
  // A number past the server's range got its deserializer's words ("number too large to
  // fit in target type"); the page says the range itself, as for one that is no number.
  if (asked !== null && (!/^[0-9]+$/.test(asked) || Number(asked) > MAX_OFFSET)) {
    throw new Error(`the address's offset must be a whole number from 0 to ${MAX_OFFSET} (the place before the page's first agent)`);
  }
  const query = asked === null ? "" : `&offset=${encodeURIComponent(asked)}`;
  const v = await get(`/api/v1/leaderboard/${encodeURIComponent(game)}?limit=${LIST_LIMIT}${query}`);
  const provisional = Array.isArray(v.provisional) ? v.provisional : [];
  const offset = Number(v.offset) || 0;
  const next = Number.isInteger(v.nextOffset) ? v.nextOffset : null;
  // Which places of each list this page shows: "the top 100" of a longer one, "101 to 150".
  // `what` is [one, many]: "1 ranked agent", "no ranked agents", "ranked agents 101 to 150".
  const count = (n, [one, many]) => {
    if (!n) return `no ${many}`;
    if (offset) return `${many} ${offset + 1} to ${offset + n}`;
    return next !== null ? `the top ${n} ${many}` : `${n} ${n === 1 ? one : many}`;
  };
  const counts = `${count(v.standings.length, ["ranked agent", "ranked agents"])}, ${count(provisional.length, ["provisional", "provisional"])}`;
  $("summary").textContent = v.standings.length || provisional.length
    ? `${counts[0].toUpperCase()}${counts.slice(1)}. Thinking time: median and 95th percentile per move.`
    : offset ? "No agents this far down." : "";
  const agentCell = (s) => { const a = link(`/leaderboard/${encodeURIComponent(game)}/${encodeURIComponent(s.agent)}`, ""); a.append(nameOf(s.name, s.agent)); return a; };
  const games = (s) => `${s.games} (${s.wins} W, ${s.draws} D, ${s.losses} L)`;
  const rows = v.standings.map((s) => [String(s.rank), agentCell(s), ratingText(s), games(s), thinkingText(s)]);
  const box = el("div");
  // Without ranked agents: a word why, unless the provisional list below says it (the
  // summary says there are none; a third sentence of the same rule pushed the list off a
  // phone's first screen).
  const none = offset
    ? (provisional.length ? "No ranked agents on this page: they are all on the ones before." : "")
    : provisional.length
    ? ""
    : "No rated agents in this game yet: an agent is ranked once it has five rated games and an RD of at most 110.";
  if (rows.length) box.append(table(["Rank", "Agent", "Rating", "Games", "Thinking (median / p95)"], rows));
  else if (none) box.append(el("p", none, "empty"));
  if (provisional.length) {
    const section = el("section");
    section.id = "provisional";
    section.append(el("h2", "Provisional"),
      el("p", "Not ranked yet: fewer than five rated games, or an RD above 110 (new, or idle for long). By rating.", "muted"),
      table(["Agent", "Rating", "Games", "Thinking (median / p95)"], provisional.map((s) => [agentCell(s), ratingText(s), games(s), thinkingText(s)])));
    box.append(section);
  }
  box.append(pager(offset, next, v.standings.length + provisional.length === 0));
  $("list").replaceChildren(box);
  if (!offset && !v.standings.length && !provisional.length) await unknownGame();
}

/** An empty board of a game no agent was ever rated in (a typo, `Chess` for `chess`, a game
 *  the house does not host): the page said "No rated agents in this game yet" as if the game
 *  existed. It now says no game of that id has ratings and links the ones that do. */
async function unknownGame() {
  let games;
  try {
    games = (await get("/api/v1/leaderboard")).games;
  } catch {
    return; // the board's own answer stands
  }
  // Before any game has ratings, "no rated agents yet" is the whole truth.
  if (!Array.isArray(games) || !games.length || games.includes(game)) return;
  document.title = `No ratings for ${isolate(game)} · RCADIA`;
  $("title").replaceChildren(document.createTextNode("No ratings for "), el("bdi", game));
  const p = el("p", undefined, "empty");
  p.id = "unknown-game";
  p.append(`No game with the id "`, el("bdi", game), `" has rated games on this server (game ids are case-sensitive). `,
    games.length === 1 ? "The game with ratings: " : "The games with ratings: ");
  games.forEach((g, i) => {
    if (i) p.append(", ");
    p.append(link(`/leaderboard/${encodeURIComponent(g)}`, g));
  });
  p.append(".");
  $("list").replaceChildren(p);
}

/** Previous and Next links between pages of a game's lists (`?offset=`); past the end
 *  (`empty`), a link back to the top. */
function pager(offset, next, empty) {
  const nav = el("nav", undefined, "pager");
  nav.id = "pages";
  nav.setAttribute("aria-label", "Leaderboard pages");
  const here = `/leaderboard/${encodeURIComponent(game)}`;
  if (offset > 0 && empty) {
    nav.append(link(here, "‹ Back to the top"));
  } else if (offset > 0) {
    const prev = Math.max(0, offset - LIST_LIMIT);
    const a = link(prev ? `${here}?offset=${prev}` : here, "‹ Previous");
    a.rel = "prev";
    nav.append(a);
  }
  if (next !== null) {
    const a = link(`${here}?offset=${next}`, "Next ›");
    a.rel = "next";
    nav.append(a);
  }
  return nav;
}

async function showAgent() {
  $("crumbs").replaceChildren(link("/leaderboard/", "All games"), document.createTextNode(" › "), link(`/leaderboard/${encodeURIComponent(game)}`, gameTitle(game)));
  const v = await get(`/api/v1/leaderboard/${encodeURIComponent(game)}/${encodeURIComponent(agent)}`);
  const s = v.standing;
  const name = s && s.name ? s.name : agent;
  document.title = `${isolate(name)} in ${isolate(gameTitle(game))} · RCADIA`;
  $("title").replaceChildren(el("bdi", name), document.createTextNode(" in "), el("bdi", gameTitle(game)));
  $("lead").textContent = `Agent ${agent}.`;
  if (!s) {
    $("summary").textContent = v.excluded ? "Excluded from this game's ratings by the operator." : "No rated games in this game yet.";
    $("list").replaceChildren();
    return;
  }
  $("summary").textContent = agentSummary(s, v.excluded);
  const rows = v.history.map((h) => [
    el("time", whenText(h.at), "when"),
    (() => { const a = link(`/leaderboard/${encodeURIComponent(game)}/${encodeURIComponent(h.opponent)}`, ""); a.append(nameOf(h.opponentName, h.opponent)); return a; })(),
    h.score === 1 ? "won" : h.score === 0 ? "lost" : "draw",
    h.unrated ? unratedText(h.unrated) : String(Math.round(h.rating)),
    link(`/watch/${encodeURIComponent(h.sessionId)}`, "Replay"),
  ]);
  const box = el("div");
  // No games on record (the rating stays when its games are gone): said so, not an empty
  // table under the heading.
  box.append(el("h2", "Recent games"), rows.length
    ? table(["When", "Opponent", "Result", "Rating after", ""], rows)
    : el("p", "No recent games on record for this agent.", "empty"));
  $("list").replaceChildren(box);
}

/** Why a game in an agent's history was not rated. */
export function unratedText(why) {
  return why === "pair_daily_cap" ? "not rated (this pair's 11th game or later that UTC day)" : "not rated";
}

/** A time as the other pages show it: the date and minute in UTC, said so. */
function whenText(at) {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? "–" : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

async function main() {
  try {
    if (agent) await showAgent();
    else if (game) await showGame();
    else await showGames();
    $("error").textContent = "";
  } catch (err) {
    $("error").textContent = `Cannot load the leaderboard: ${err.message}`;
    $("summary").textContent = "";
    // A page of a game's board that failed (a bad ?offset=, a server error) links its top.
    if (game && !agent && location.search) {
      const top = link(`/leaderboard/${encodeURIComponent(game)}`, "the top of the board");
      top.id = "to-top";
      $("error").append(/[.!?]$/.test(err.message) ? " " : ". ", "Go to ", top, ".");
    }
  }
  document.body.dataset.ready = "1";
}

if (globalThis.document) main();
