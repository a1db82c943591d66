// The spectator page, /watch/<sessionId>: long-polls the public view
// (`GET /public?since=<version>&wait=25`), draws the game (a chess board, the
// rock-paper-scissors score, or the state as text for other games), the players by name,
// the clock. A finished game stays at its URL with its result and a link to the series'
// next round, and plays back from its replay (`GET /replay`): a scrubber, ←/→ and a
// clickable list of moves. Text only (textContent).

import { watchModel, chessModel, rpsModel, countdown, replayFrames, viewFromReplay, isolate, eventTime } from "./views.js";
import { drawBoard, squaresOf } from "/games/chess/board.js";

const $ = (id) => document.getElementById(id);
const WAIT_S = 25;
const EVENTS_KEPT = 100;

let sessionId = (() => {
  // A part that does not decode (`%E0`) is no session id: said below, not a page that
  // never loads.
  try { return decodeURIComponent(location.pathname.split("/")[2] || ""); } catch { return ""; }
})();
let last = null;
let deadline = null;

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

/** An element of text with names (views.js's parts): each name in its own <bdi>. */
function withNames(tag, parts, className) {
  const e = el(tag, undefined, className);
  e.append(...parts.map((p) => (typeof p === "string" ? p : el("bdi", p.name))));
  return e;
}

/** A line of the events list: its time, then its parts (views.js's: each name in a <bdi>). */
function logEvent(parts) {
  const list = $("events");
  const item = withNames("li", parts);
  const now = new Date();
  const at = el("time", eventTime(now));
  at.dateTime = now.toISOString();
  item.prepend(at);
  list.append(item);
  while (list.children.length > EVENTS_KEPT) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

/** What changed between two public views, as lines (parts, names marked) for the events
 *  list. A game title or a name written right to left read into the words around it ("…,
 *  round 1: playing" went to its other side) while it was plain text in the line. */
function changes(before, now, m) {
  const out = [];
  if (!before || before.sessionId !== now.sessionId) {
    out.push([{ name: m.title }, `, round ${now.round ?? 1}: ${m.status}`]);
    return out;
  }
  // A seat taken while the table waits (the list of seats shows it; the log says when).
  const seatedBefore = new Set((Array.isArray(before.players) ? before.players : []).map((p) => p.playerId));
  for (const p of Array.isArray(now.players) ? now.players : []) {
    if (!seatedBefore.has(p.playerId)) out.push([{ name: m.nameOf(p.playerId) }, ` took seat ${p.seat ?? "?"}`]);
  }
  if (before.status !== now.status) {
    if (now.status === "active") {
      out.push(["the game started: ", ...m.players.flatMap((p, i) => (i ? [" vs ", { name: p.name }] : [{ name: p.name }]))]);
    } else if (now.status === "finished") {
      out.push(["game over: ", ...(m.resultParts.length ? m.resultParts : ["ended"])]);
    }
  }
  const bm = before.state && before.state.lastMove;
  const nm = now.state && now.state.lastMove;
  if (nm && typeof nm === "object" && JSON.stringify(bm) !== JSON.stringify(nm)) {
    out.push([nm.by ? { name: m.nameOf(nm.by) } : "?", ` played ${nm.san || nm.uci || "a move"}`]);
  }
  const bt = before.state && Array.isArray(before.state.throws) ? before.state.throws.length : 0;
  const nt = now.state && Array.isArray(now.state.throws) ? now.state.throws.length : 0;
  if (nt > bt) {
    const r = rpsModel(now.state, m.nameOf);
    r.throwParts.slice(bt).forEach((line, i) => out.push([`throw ${bt + i + 1}. `, ...line]));
  }
  return out;
}

function drawStage(v, m) {
  const stage = $("stage");
  const s = v.state;
  // Only a game takes the stage's height: a line saying nothing is there yet is as tall as
  // its words (as a box of 12rem it pushed the players, what a waiting table is about, off
  // a phone's first screen).
  stage.classList.toggle("unpublished", s === null || s === undefined);
  if (s && typeof s === "object" && s.game === "chess" && typeof s.fen === "string") {
    const c = chessModel(s, m.nameOf);
    const box = el("div", undefined, "board-box");
    const board = el("div", undefined, "board");
    board.id = "board";
    board.setAttribute("aria-label", `Chess board. ${c.toMove || "Game over"}. ${c.lastMove}`);
    drawBoard(board, squaresOf(s.fen, { lastMove: s.lastMove && s.lastMove.uci, check: s.check && !s.over }));
    box.append(board);
    const boardCol = el("div", undefined, "board-col");
    boardCol.append(withNames("p", c.blackParts, "side-line"), box, withNames("p", c.whiteParts, "side-line"));
    const movesCol = el("div", undefined, "moves-col");
    movesCol.append(el("p", c.toMove || "Game over", "side-line"), withNames("p", c.lastMoveParts, "muted"),
      el("h2", "Moves"), el("p", c.moves || "No moves yet.", "moves"));
    const wrap = el("div", undefined, "chess");
    wrap.append(boardCol, movesCol);
    stage.replaceChildren(wrap);
    return;
  }
  if (s && typeof s === "object" && s.game === "rps") {
    const r = rpsModel(s, m.nameOf);
    const list = el("ol", undefined, "throws");
    for (const t of r.throwParts) list.append(withNames("li", t));
    stage.replaceChildren(withNames("p", r.scoreParts, "score"), withNames("p", r.waitingParts, "muted"), el("h2", "Throws"), r.throws.length ? list : el("p", "none yet", "muted"));
    return;
  }
  // Any other game: its public state as the game published it.
  // A table still waiting has nothing to show yet: said so, with when it will.
  const nothing = v.status === "waiting" ? "The game shows here once enough players are seated (see Players)." : "The game has not published anything yet.";
  // Nothing published is said in words, not as a block of code.
  if (s === null || s === undefined) {
    stage.replaceChildren(el("h2", "Game state"), el("p", nothing, "muted"));
    return;
  }
  stage.replaceChildren(el("h2", "Game state"), el("pre", JSON.stringify(s, null, 2), "state"));
}

function render(v) {
  const m = watchModel(v, Date.now());
  document.title = `${isolate(m.title)} · watch · RCADIA`;
  $("title").replaceChildren(el("bdi", m.title, "whole"));
  $("badge").className = `badge ${m.badge}`;
  $("badge").textContent = m.status;
  $("f-status").textContent = m.status;
  $("f-round").textContent = m.round;
  $("f-turn").textContent = m.turn;
  // A table still waiting or playing has no result yet: said so (it read "-", as a finished
  // game without one does).
  $("f-result").textContent = m.result || (v.status === "waiting" || v.status === "active" ? "not decided yet" : "-");
  deadline = v.status === "active" ? v.deadline : null;
  $("f-clock").textContent = v.status === "active" ? countdown(deadline, Date.now()) : "-";
  // Every seat: an open one says the table waits for a player there.
  const players = m.seats.map((p) => {
    const li = el("li", undefined, p.onTurn ? "on-turn" : p.open ? "open" : "");
    li.append(el("span", p.seat, "seat"), p.open ? el("span", "open: waiting for a player", "waiting") : el("bdi", p.name, "name"));
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
    $("title").textContent = "No such game";
    const link = el("a", "See the open tables");
    link.href = "/tables/";
    $("notice").replaceChildren(link);
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
        // A finished game's record is kept a day, its replay longer (a week by default):
        // the leaderboard's "Replay" links point here for as long as the replay lives.
        const stored = await storedGame(sessionId);
        if (stored) {
          render(stored.view);
          last = stored.view;
          overNotice(stored.view, "This game is over (played back from its stored replay)");
          // After the notice: it keeps the link to the next round (it was set first and lost).
          showNext(stored.view, stored.view.nextSessionId, "This game is over (played back from its stored replay)");
          startReplay(stored.view, stored.replay);
          return;
        }
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
      await showFinished(v);
      return;
    }
  }
}

/**
 * "This game is over: <who> won (<reason>)." with the winner's name in a <bdi>, then `more`
 * (the way to the next round): the result at the top, where a spectator looks first (it
 * stood only in the table's facts, below the board and the players).
 */
function overNotice(v, lead, ...more) {
  const m = watchModel(v, Date.now());
  const parts = m.resultParts.length ? [`${lead}: `, ...m.resultParts, "."] : [`${lead}.`];
  $("notice").replaceChildren(...parts.map((p) => (typeof p === "string" ? p : el("bdi", p.name))),
    ...(more.length ? [" ", ...more] : []));
}

/** The finished game: its result stays, the next round is a link, the replay plays back. */
async function showFinished(v) {
  overNotice(v, "This game is over");
  let next = v.nextSessionId;
  let replay = null;
  for (let i = 0; i < 10 && !replay; i++) {
    try {
      replay = await fetchReplay(v.sessionId);
    } catch (err) {
      // The last write of a game and its replay's end are one step; a retry only covers
      // a lost connection.
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  if (replay) {
    next = next || replay.next;
    startReplay(v, replay);
  }
  await showNext(v, next);
  if (!next) {
    // A rematch may still be linked: look again for a while, without leaving this game.
    for (let i = 0; i < 20 && !next; i++) {
      await new Promise((r) => setTimeout(r, 3000));
      try { next = (await fetchView(v.sessionId, null)).nextSessionId; } catch { /* keep the page */ }
    }
    await showNext(v, next);
  }
}

async function showNext(v, next, lead = "This game is over") {
  if (!next) return;
  // A rematch that every player left starts over as round 1 of a new series at the same
  // table, and this game still names it as its next: that is someone else's game. (A next
  // round that cannot be read now keeps its link.)
  try {
    const n = await fetchView(next, null);
    if (n.previousSessionId !== v.sessionId) return;
  } catch { /* keep the link */ }
  const a = el("a", `Watch round ${(v.round ?? 1) + 1}`);
  a.href = `/watch/${encodeURIComponent(next)}`;
  a.id = "next-round";
  overNotice(v, lead, "The series goes on: ", a);
}

async function replayLines(id) {
  const r = await fetch(`/api/v1/agent/sessions/${encodeURIComponent(id)}/replay`);
  if (!r.ok) throw Object.assign(new Error(`the server answered ${r.status}`), { status: r.status });
  const text = await r.text();
  return text.split("\n").filter((l) => l.trim()).map((l) => { try { return JSON.parse(l); } catch { return null; } });
}

async function fetchReplay(id) {
  return replayFrames(await replayLines(id));
}

/** A finished game whose record has expired, from its replay; null when there is none. */
async function storedGame(id) {
  try {
    const lines = await replayLines(id);
    const replay = replayFrames(lines);
    const view = viewFromReplay(lines, id);
    return view && replay.frames.length ? { view, replay } : null;
  } catch {
    return null;
  }
}

let replayView = null;

function startReplay(v, replay) {
  if (!replay.frames.length) return;
  // A replay cut at its size limit ends before the last moves: the game's own record (a
  // live view has a version; one made from the replay has none) still has the final state.
  if (replay.truncated && v.version && v.state != null) {
    replay.frames.push({ state: v.state, turn: v.turn, label: "the final position (the moves before it were not kept)" });
  }
  replayView = { v, replay, pos: replay.frames.length - 1 };
  const list = $("r-frames");
  // Room for the widest number of the list ("426."): the default cut off its first digits.
  list.style.paddingLeft = `calc(${String(replay.frames.length).length + 1}ch + .8rem)`;
  list.replaceChildren(...replay.frames.map((f, i) => {
    const li = el("li");
    const b = el("button", f.label);
    b.type = "button";
    b.addEventListener("click", () => showFrame(i));
    li.append(b);
    return li;
  }));
  const pos = $("r-pos");
  pos.max = String(replay.frames.length - 1);
  pos.addEventListener("input", () => showFrame(Number(pos.value)));
  $("r-prev").addEventListener("click", () => showFrame(replayView.pos - 1));
  $("r-next").addEventListener("click", () => showFrame(replayView.pos + 1));
  $("r-download").href = `/api/v1/agent/sessions/${encodeURIComponent(v.sessionId)}/replay`;
  $("r-download").setAttribute("download", `${v.sessionId}.jsonl`);
  // ← → with Alt, Ctrl, Meta or Shift are the browser's (Alt+← is "back", Shift+← selects
  // text): the replay steps only on a bare arrow key.
  const bare = (e) => !(e.altKey || e.ctrlKey || e.metaKey || e.shiftKey);
  document.addEventListener("keydown", (e) => {
    if (e.target && e.target.id === "r-pos") return; // the slider moves itself
    if (!bare(e)) return;
    if (e.key === "ArrowLeft") { showFrame(replayView.pos - 1); e.preventDefault(); }
    if (e.key === "ArrowRight") { showFrame(replayView.pos + 1); e.preventDefault(); }
  });
  $("r-frames").addEventListener("keydown", (e) => {
    if (!bare(e)) return;
    const to = { ArrowUp: replayView.pos - 1, ArrowDown: replayView.pos + 1, Home: 0, End: replayView.replay.frames.length - 1 }[e.key];
    if (to === undefined) return;
    showFrame(to);
    e.preventDefault();
  });
  $("replay").hidden = false;
  $("lead").textContent = "A finished game: step through it move by move (◀ ▶, the arrow keys, or a move in the list).";
  showFrame(replayView.pos);
  document.body.dataset.replay = "1";
}

function showFrame(i) {
  const { v, replay } = replayView;
  const n = replay.frames.length;
  const pos = Math.max(0, Math.min(n - 1, i));
  replayView.pos = pos;
  const f = replay.frames[pos];
  const last = pos === n - 1;
  // The frame as a public view: the players and result of the game, the state of then.
  const frame = { ...v, state: f.state, turn: f.turn, status: last ? "finished" : "active", result: last ? v.result : null, deadline: null };
  const m = watchModel(frame, Date.now());
  drawStage(frame, m);
  $("r-pos").value = String(pos);
  $("r-where").textContent = `${pos + 1} of ${n}: ${f.label}`;
  $("r-count").textContent = `${pos + 1}/${n}`;
  $("r-bar-where").textContent = f.label;
  // The table's facts at this step, as the stage shows it: a step before the end is a game
  // still being played, its result not decided yet (they said "finished" and the winner at
  // every step). The badge by the title keeps saying what the game is now.
  $("f-status").textContent = last ? m.status : `${m.status} (replay, step ${pos + 1} of ${n})`;
  $("f-turn").textContent = `turn ${f.turn ?? 0}`;
  $("f-clock").textContent = "-";
  $("f-result").textContent = last ? (m.result || "-") : "not decided yet";
  // One stop in the tab order for the whole list (the current move; ↑ ↓ Home End and ← →
  // move through it): every move was a stop of its own, and a keyboard reader went through
  // hundreds of them to reach the players and the table facts after the list.
  const inList = $("r-frames").contains(document.activeElement);
  [...$("r-frames").children].forEach((li, k) => {
    li.classList.toggle("current", k === pos);
    const b = li.firstElementChild;
    if (!b) return;
    b.tabIndex = k === pos ? 0 : -1;
    if (k === pos) b.setAttribute("aria-current", "step"); else b.removeAttribute("aria-current");
    if (k === pos && inList && document.activeElement !== b) b.focus({ preventScroll: true });
  });
  // Only the list scrolls to the move: scrollIntoView scrolled the page too, and on a phone
  // (the list under the board) took the board off the screen at every step.
  const list = $("r-frames");
  const cur = list.children[pos];
  if (cur) {
    const r = cur.getBoundingClientRect();
    const box = list.getBoundingClientRect();
    if (r.top < box.top) list.scrollTop -= box.top - r.top;
    else if (r.bottom > box.bottom) list.scrollTop += r.bottom - box.bottom;
  }
  document.body.dataset.frame = String(pos);
}

setInterval(() => { if (deadline) $("f-clock").textContent = countdown(deadline, Date.now()); }, 1000);
follow();
