// The spectator page, /watch/<sessionId>: long-polls the public view
// (`GET /public?since=<version>&wait=25`), draws the game (a chess board, the
// rock-paper-scissors score, or the state as text for other games), the players by name,
// the clock, and follows the series to its next round. Text only (textContent).

import { watchModel, chessModel, rpsModel, countdown } from "./views.js";
import { drawBoard, squaresOf } from "/games/chess/board.js";

const $ = (id) => document.getElementById(id);
const WAIT_S = 25;
const EVENTS_KEPT = 100;

let sessionId = decodeURIComponent(location.pathname.split("/")[2] || "");
let last = null;
let deadline = null;

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function logEvent(line) {
  const list = $("events");
  const item = el("li");
  const at = el("time", new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  item.append(at, document.createTextNode(line));
  list.append(item);
  while (list.children.length > EVENTS_KEPT) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

/** What changed between two public views, as lines for the events list. */
function changes(before, now, m) {
  const out = [];
  if (!before || before.sessionId !== now.sessionId) {
    out.push(`${m.title}, round ${now.round ?? 1}: ${m.status}`);
    return out;
  }
  if (before.status !== now.status) {
    if (now.status === "active") out.push(`the game started: ${m.players.map((p) => p.name).join(" vs ")}`);
    else if (now.status === "finished") out.push(`game over: ${m.result || "ended"}`);
  }
  const bm = before.state && before.state.lastMove;
  const nm = now.state && now.state.lastMove;
  if (nm && typeof nm === "object" && JSON.stringify(bm) !== JSON.stringify(nm)) {
    out.push(`${nm.by ? m.nameOf(nm.by) : "?"} played ${nm.san || nm.uci || "a move"}`);
  }
  const bt = before.state && Array.isArray(before.state.throws) ? before.state.throws.length : 0;
  const nt = now.state && Array.isArray(now.state.throws) ? now.state.throws.length : 0;
  if (nt > bt) {
    const r = rpsModel(now.state, m.nameOf);
    for (const line of r.throws.slice(bt)) out.push(`throw ${line}`);
  }
  return out;
}

function drawStage(v, m) {
  const stage = $("stage");
  const s = v.state;
  if (s && typeof s === "object" && s.game === "chess" && typeof s.fen === "string") {
    const c = chessModel(s, m.nameOf);
    const box = el("div", undefined, "board-box");
    const board = el("div", undefined, "board");
    board.id = "board";
    board.setAttribute("aria-label", `Chess board. ${c.toMove || "Game over"}. ${c.lastMove}`);
    drawBoard(board, squaresOf(s.fen, { lastMove: s.lastMove && s.lastMove.uci, check: s.check && !s.over }));
    box.append(board);
    const boardCol = el("div", undefined, "board-col");
    boardCol.append(el("p", c.black, "side-line"), box, el("p", c.white, "side-line"));
    const movesCol = el("div", undefined, "moves-col");
    movesCol.append(el("p", c.toMove || "Game over", "side-line"), el("p", c.lastMove, "muted"),
      el("h2", "Moves"), el("p", c.moves || "-", "moves"));
    const wrap = el("div", undefined, "chess");
    wrap.append(boardCol, movesCol);
    stage.replaceChildren(wrap);
    return;
  }
  if (s && typeof s === "object" && s.game === "rps") {
    const r = rpsModel(s, m.nameOf);
    const list = el("ol", undefined, "throws");
    for (const t of r.throws) list.append(el("li", t.replace(/^\d+\. /, "")));
    stage.replaceChildren(el("p", r.score, "score"), el("p", r.waiting, "muted"), el("h2", "Throws"), r.throws.length ? list : el("p", "none yet", "muted"));
    return;
  }
  // Any other game: its public state as the game published it.
  const text = s === null || s === undefined ? "The game has not published anything yet." : JSON.stringify(s, null, 2);
  stage.replaceChildren(el("h2", "Game state"), el("pre", text, "state"));
}

function render(v) {
  const m = watchModel(v, Date.now());
  document.title = `${m.title} · watch · RCADIA`;
  $("title").replaceChildren(el("bdi", m.title));
  $("badge").className = `badge ${m.badge}`;
  $("badge").textContent = m.status;
  $("f-status").textContent = m.status;
  $("f-round").textContent = m.round;
  $("f-turn").textContent = m.turn;
  $("f-result").textContent = m.result || "-";
  deadline = v.status === "active" ? v.deadline : null;
  $("f-clock").textContent = v.status === "active" ? countdown(deadline, Date.now()) : "-";
  const players = m.players.map((p) => {
    const li = el("li", undefined, p.onTurn ? "on-turn" : "");
    li.append(el("span", p.seat, "seat"), el("bdi", p.name, "name"));
    return li;
  });
  $("players").replaceChildren(...(players.length ? players : [el("li", "nobody yet", "muted")]));
  drawStage(v, m);
  if (last && last.sessionId !== v.sessionId && v.status !== "finished") $("notice").textContent = "";
  for (const line of changes(last, v, m)) logEvent(line);
  $("play").hidden = false;
  document.body.dataset.ready = "1";
}

async function fetchView(id, since) {
  const q = since === null ? "" : `?since=${since}&wait=${WAIT_S}`;
  const r = await fetch(`/api/v1/agent/sessions/${encodeURIComponent(id)}/public${q}`, { headers: { Accept: "application/json" } });
  const body = await r.json().catch(() => null);
  if (r.status === 404) throw Object.assign(new Error(`There is no session ${id} on this server (finished sessions are kept for a day).`), { final: true });
  if (r.status === 410) throw Object.assign(new Error(`Session ${id} was lost when the server's store was reset.`), { final: true });
  if (!r.ok || !body) throw new Error(body && body.error ? body.error : `the server answered ${r.status}`);
  return body;
}

async function follow() {
  if (!/^ses_[0-9a-f]{12}$/.test(sessionId)) {
    $("error").textContent = `"${sessionId}" is not a session id (they look like ses_0123456789ab). Pick a table from the list.`;
    $("badge").textContent = "no such table";
    return;
  }
  let failures = 0;
  for (;;) {
    let v;
    try {
      v = await fetchView(sessionId, last && last.sessionId === sessionId ? last.version : null);
      failures = 0;
      $("error").textContent = "";
    } catch (err) {
      if (err.final) {
        $("error").textContent = err.message;
        $("badge").className = "badge finished";
        $("badge").textContent = "not found";
        $("title").textContent = "No such game";
        const link = el("a", "See the open tables");
        link.href = "/tables/";
        $("notice").replaceChildren(link);
        return;
      }
      failures++;
      $("error").textContent = `Lost the connection (${err.message}); retrying…`;
      await new Promise((r) => setTimeout(r, Math.min(10_000, 1000 * 2 ** (failures - 1))));
      continue;
    }
    if (!last || v.version !== last.version || v.sessionId !== last.sessionId) render(v);
    last = v;
    if (v.status === "finished") {
      if (v.nextSessionId) {
        // The series goes on: follow it, and keep the address bar right.
        logEvent(`round ${(v.round ?? 1) + 1} is next`);
        $("notice").textContent = `Round ${(v.round ?? 1) + 1} follows at this table.`;
        sessionId = v.nextSessionId;
        history.replaceState(null, "", `/watch/${encodeURIComponent(sessionId)}`);
        continue;
      }
      // A finished round without a next one yet: a rematch may still be linked.
      $("notice").textContent = "This game is over.";
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
}

setInterval(() => { if (deadline) $("f-clock").textContent = countdown(deadline, Date.now()); }, 1000);
follow();
