// The table list (/tables/, and /house/ with <body data-host="house">): every open and
// running table from `GET /available?all=1`, refreshed every few seconds, each linking to
// its spectator page. Everything from the server is shown with textContent.

import { tableRows, tablesSummary, seatedLine } from "./views.js";

const AVAILABLE = "/api/v1/agent/sessions/available?all=1";
const REFRESH_MS = 3000;
const host = document.body.dataset.host || "";
const $ = (id) => document.getElementById(id);

function cell(tr, label, text, className = "") {
  const td = document.createElement("td");
  if (label) td.dataset.label = label;
  if (className) td.className = className;
  if (text instanceof Node) td.append(text); else td.textContent = text;
  tr.append(td);
  return td;
}

function badge(label, kind) {
  const b = document.createElement("span");
  b.className = `badge ${kind}`;
  b.textContent = label;
  return b;
}

/** The rows the list shows now (as JSON): a refresh that finds the same leaves the list be. */
let shownKey = null;
/** Who sits at each table, as the last look at its public view found. */
const seated = new Map();

function setWho(td, line) {
  const names = line.names.flatMap((n, i) => [i ? document.createTextNode(" vs ") : null, Object.assign(document.createElement("bdi"), { textContent: n })]).filter(Boolean);
  td.replaceChildren(...names, document.createTextNode(line.detail ? ` · ${line.detail}` : ""));
}

function render(rows) {
  $("summary").textContent = tablesSummary(rows);
  // Rebuilt only when something changed, and with the focus where it was: rebuilt every
  // 3 s, the list took the focus from a keyboard or screen-reader user on a Watch link,
  // and the Players cells flickered from the seat count to the names and back.
  const key = JSON.stringify(rows);
  if (key === shownKey) {
    fillPlayers(rows);
    return;
  }
  shownKey = key;
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest("tr[data-session]");
  const focusedSession = focused ? focused.dataset.session : null;
  if (rows.length === 0) {
    // The summary above already says there are none: this line says only what opens one
    // (on /house/ both said "no tables right now").
    const p = document.createElement("p");
    p.className = "empty";
    // The bridge is a link and the command is code (they were words in brackets).
    const command = document.createElement("code");
    command.textContent = "horst house";
    if (host === "house") {
      p.append("The house host (", command, ") opens one per game while it runs.");
    } else {
      const bridge = document.createElement("a");
      bridge.href = "/bridge/";
      bridge.textContent = "the bridge";
      p.append("Host one from ", bridge, ", or start the house host (", command, ").");
    }
    $("list").replaceChildren(p);
    return;
  }
  const table = document.createElement("table");
  table.className = "tables";
  const head = document.createElement("thead");
  const hr = document.createElement("tr");
  for (const h of ["Game", "Status", "Players", "Round", "Host", "Opened", ""]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    hr.append(th);
  }
  head.append(hr);
  const body = document.createElement("tbody");
  for (const r of rows) {
    const tr = document.createElement("tr");
    tr.dataset.session = r.sessionId;
    const game = document.createElement("bdi");
    game.textContent = r.game;
    cell(tr, "", game, "game");
    cell(tr, "Status", badge(r.status, r.badge));
    const who = cell(tr, "Players", r.players);
    who.className = "who";
    if (seated.has(r.sessionId)) setWho(who, seated.get(r.sessionId));
    // "round 1" and "9 s ago" on one line each (rcadia.css), beside long names too.
    cell(tr, "Round", r.round, "figure");
    cell(tr, "Host", r.host);
    cell(tr, "Opened", r.opened, "figure");
    const a = document.createElement("a");
    a.href = r.watch;
    a.className = "watch";
    a.textContent = "Watch";
    a.setAttribute("aria-label", `Watch ${r.game}, ${r.round}`);
    cell(tr, "", a);
    body.append(tr);
  }
  table.append(head, body);
  $("list").replaceChildren(table);
  if (focusedSession) {
    const again = table.querySelector(`tr[data-session="${CSS.escape(focusedSession)}"] a.watch`);
    if (again) again.focus({ preventScroll: true });
  }
  fillPlayers(rows);
}

/** Who sits at each table, and the score or move count, from its public view (the list
 * itself only counts seats). At most 20 tables, the first ones shown. */
async function fillPlayers(rows) {
  await Promise.all(rows.slice(0, 20).map(async (r) => {
    try {
      const res = await fetch(`/api/v1/agent/sessions/${encodeURIComponent(r.sessionId)}/public`, { headers: { Accept: "application/json" } });
      if (!res.ok) return;
      const line = seatedLine(await res.json());
      const td = document.querySelector(`tr[data-session="${CSS.escape(r.sessionId)}"] td.who`);
      if (!td || !line.names.length) return;
      const before = seated.get(r.sessionId);
      seated.set(r.sessionId, line);
      if (before && JSON.stringify(before) === JSON.stringify(line) && td.querySelector("bdi")) return;
      setWho(td, line);
    } catch { /* the seat count stays */ }
  }));
}

async function refresh() {
  try {
    const r = await fetch(AVAILABLE, { headers: { Accept: "application/json" } });
    const body = await r.json().catch(() => null);
    if (!r.ok || !body || !Array.isArray(body.sessions)) {
      throw new Error(body && body.error ? body.error : `the server answered ${r.status}`);
    }
    $("error").textContent = "";
    render(tableRows(body.sessions, { host, nowMs: Date.now() }));
    document.body.dataset.ready = "1";
  } catch (err) {
    $("error").textContent = `Cannot load the tables: ${err.message}. Retrying…`;
    // Before the first list, "Loading the tables…" stood beside the error for as long as
    // the server failed; a list shown before stays, with the error above it.
    if (!document.body.dataset.ready) $("summary").textContent = "No list yet.";
  }
}

async function loop() {
  for (;;) {
    if (!document.hidden) await refresh();
    await new Promise((r) => setTimeout(r, REFRESH_MS));
  }
}

loop();
