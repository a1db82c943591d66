// The operator's page. Every section shows the state first and offers actions next to it;
// a destructive action says what it will do and asks once; a refusal is said in words.
// Text written by agents (subjects, messages, posts, names) is only ever put in with
// textContent (el() below), never as HTML.

import { jobsFromAddress } from "./jobs.js";
import { onSubmit, onClick } from "/pages/submit-once.js";
import { charLimit } from "/pages/char-limit.js";

const $ = (id) => document.getElementById(id);

/** An element with attributes and children; strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "onclick") onClick(e, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** Asks for a password or token in a modal dialog (never shown as typed, unlike
 *  `window.prompt`); resolves to what was typed, or null when cancelled. */
function askSecret(text) {
  return new Promise((resolve) => {
    const input = el("input", { type: "password", autocomplete: "current-password", required: true, id: "reauth-secret" });
    const cancel = el("button", { type: "button" }, "Cancel");
    const form = el("form", { method: "dialog" },
      el("label", { for: "reauth-secret" }, text),
      input,
      el("div", { class: "actions" }, el("button", { type: "submit", class: "danger" }, "Confirm"), cancel));
    const dialog = el("dialog", { class: "reauth", "aria-label": "Confirm it is you" }, form);
    let settled = false;
    const done = (value) => {
      if (settled) return;
      settled = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      resolve(value);
    };
    form.addEventListener("submit", (e) => { e.preventDefault(); done(input.value || null); });
    cancel.addEventListener("click", () => done(null));
    dialog.addEventListener("cancel", (e) => { e.preventDefault(); done(null); });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
}

let csrf = null;
/** How this session signed in (`account` or `admin_token`): what a re-authentication asks for. */
let via = null;

/** A destructive action after five minutes: ask for the credential again, confirm it, and
 *  repeat the action once. */
async function reauthenticated(method, path, body) {
  const what = via === "admin_token" ? "your admin token" : "your password";
  const given = await askSecret(`This action needs ${what} again (the last was more than 5 minutes ago).`);
  if (!given) return null;
  const res = await api("POST", "/api/admin/session/confirm",
    via === "admin_token" ? { token: given } : { password: given }, false);
  if (!res.ok) return res;
  return api(method, path, body, false);
}

export async function api(method, path, body, retry = true) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && csrf) headers["X-CSRF-Token"] = csrf;
  try {
    const r = await fetch(path, {
      method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = {};
    try { data = await r.json(); } catch { data = {}; }
    // A session that ended shows the sign-in again; a wrong password or token (the
    // re-authentication's answer) is a refusal to show, not a reason to start over.
    if (r.status === 401 && data.code !== "invalid_credentials") setTimeout(start, 0);
    if (retry && r.status === 403 && data.code === "reauthenticate") {
      const again = await reauthenticated(method, path, body);
      if (again) return again;
    }
    return { ok: r.ok, status: r.status, body: data };
  } catch {
    return { ok: false, status: 0, body: {} };
  }
}

/** A refusal in words: what the server said, and what to do about it. */
export function refusal(res) {
  const b = res.body || {};
  const said = b.error || "";
  switch (b.code) {
    case "conflict":
      if (b.currentRevisionId !== undefined) {
        return `Refused (409): someone changed this level meanwhile; its promoted revision is now ${b.currentRevisionId}. Nothing was changed. Reload the list, check the current revision, and try again if you still want to.`;
      }
      if (b.rollbackTo !== undefined) {
        return `Refused (409): rolling back now would bring back ${b.rollbackTo}, not the revision you confirmed. Nothing was changed. Reload the list and check before you roll back.`;
      }
      return `Refused (409): ${said}`;
    case "engine_mismatch":
      return `Refused: this revision has no check on the current engine, so its evidence may not hold any more. Run "Recheck" first. (${said})`;
    case "check_failed":
      return `Refused: the newest check on the current engine failed (the replay no longer wins). It cannot be promoted. (${said})`;
    case "not_found": return `Not found: ${said}`;
    case "invalid_input": return `Not accepted: ${said}`;
    case "csrf": case "cross_site": return "Refused: this page's session token is stale. Reload the page.";
    case "unauthorized": return "Your session ended. Sign in again.";
    case "invalid_credentials": return `Not done: ${said || "that was not the right password or token"}. Nothing was changed.`;
    case "forbidden": return `Not allowed: ${said}`;
    case "reauthenticate": return `Not done: ${said}`;
    case "busy": return `Busy: ${said}`;
  }
  if (res.status === 0) return "The server cannot be reached.";
  return `Failed (${res.status}${b.code ? " " + b.code : ""}): ${said || "no details"}`;
}

export function notice(text, kind = "ok") {
  const n = $("notice");
  n.textContent = text || "";
  n.className = `notice ${kind}`;
  n.hidden = !text;
  if (text) n.scrollIntoView({ block: "nearest" });
}

/** Runs an action and reports it; `after` re-renders the section. */
async function act(method, path, body, done, after) {
  const seq = shownSeq;
  const res = await api(method, path, body);
  if (res.ok) notice(typeof done === "function" ? done(res.body) : done, "ok");
  else notice(refusal(res), "error");
  // The section is shown again only if the operator is still on it.
  if (after && seq === shownSeq) await after();
  return res;
}

/**
 * A destructive action asks once, in place: `what` names exactly what will happen; the
 * button that asked becomes "Yes, ..." and "Cancel".
 */
export function confirmIn(holder, what, yesLabel, onYes) {
  const keep = [...holder.childNodes];
  const yes = el("button", { type: "button", class: "danger", "data-confirm": "yes" }, yesLabel);
  const no = el("button", { type: "button" }, "Cancel");
  const box = el("div", { class: "confirm", role: "group", "aria-label": "Confirm" }, el("p", {}, what), yes, no);
  holder.replaceChildren(box);
  no.addEventListener("click", () => holder.replaceChildren(...keep));
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    no.disabled = true;
    await onYes();
  });
  yes.focus();
}

/** A table cell with a date: the day and the time (UTC) each kept whole, so a narrow column
 *  breaks between them only. */
export function dateCell(iso) {
  const text = dateText(iso);
  const cut = text.indexOf(" ");
  if (cut < 0) return el("td", { class: "date" }, text);
  return el("td", { class: "date" }, el("span", {}, text.slice(0, cut)), " ", el("span", {}, text.slice(cut + 1)));
}

export function dateText(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function table(headers, rows, cls) {
  const trs = [rows].flat(Infinity).filter((tr) => tr instanceof Element);
  // A column without a heading whose every cell is empty (the Actions column of finished
  // jobs, which have nothing to cancel) is left out: it is 13rem wide and stays in view
  // when the table scrolls, so it stood blank over the Ended, Worker and Progress columns
  // of a 1280 px screen.
  const blank = (td) => !td || (td.children.length === 0 && td.textContent.trim() === "");
  for (let i = headers.length - 1; i >= 0; i--) {
    if (headers[i] === "" && trs.length && trs.every((tr) => blank(tr.children[i]))) {
      headers = headers.filter((_, n) => n !== i);
      for (const tr of trs) tr.children[i]?.remove();
    }
  }
  // Each cell carries its column's name: on a phone the rows become cards that label every
  // value (admin.css), instead of a table that scrolls sideways.
  for (const tr of trs) {
    [...tr.children].forEach((td, i) => {
      if (typeof headers[i] === "string" && headers[i]) td.dataset.label = headers[i];
    });
  }
  return el("div", { class: "table-wrap" },
    el("table", { class: cls },
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows)));
}

export function kv(pairs) {
  return el("dl", { class: "kv" }, pairs.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
}

export const view = () => $("view");

export function heading(title, ...extra) {
  return el("div", { class: "section-head" }, el("h1", { tabindex: "-1", id: "section-title" }, title), extra);
}

/** Which navigation the view belongs to. `route()` moves it on; a render that started under
 *  an earlier one is dropped, so a slow list (or an action's refresh) never replaces the
 *  section the operator has moved to since. */
let shownSeq = 0;

/** One section's render: `loading` shows its title at once, `show` and `failed` replace it
 *  when the data is in, unless the operator has navigated meanwhile. */
class Render {
  constructor(title) {
    this.title = title;
    this.seq = shownSeq;
  }

  get current() {
    return this.seq === shownSeq;
  }

  show(...nodes) {
    if (this.current) view().replaceChildren(...nodes);
  }

  failed(res) {
    this.show(heading(this.title), el("p", { class: "error-text" }, refusal(res)));
  }
}

/** A check that the section shown now is still shown: an action's refresh runs only then
 *  (as `act` does), so it never replaces the section the operator moved to meanwhile. */
export function stillShown() {
  const seq = shownSeq;
  return () => seq === shownSeq;
}

export function loading(title) {
  const r = new Render(title);
  r.show(heading(title), el("p", { class: "muted" }, "Loading…"));
  return r;
}

// ---- Overview ---------------------------------------------------------------------------

const KNOWN_OVERVIEW = new Set(["jobsToday", "seconds", "queue", "workers", "storageUsedBytes", "accounts",
  "boardReads", "unreadMessages", "secondsUsedToday", "secondsChargedToday", "pageViews"]);

function bytes(n) {
  if (typeof n !== "number") return String(n);
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Any value, for overview fields this page does not know yet (they are shown as they are). */
function generic(v) {
  if (v === null || typeof v !== "object") return el("span", {}, v === null ? "–" : String(v));
  return el("dl", { class: "kv small" }, Object.entries(v).map(([k, x]) => el("div", {}, el("dt", {}, k), el("dd", {}, generic(x)))));
}

/** The game pages' views, a row a page with today's count beside the total (the generic
 *  view showed the day, then two nested lists of the same three names). */
function pageViewsCard(v) {
  const where = { game: "/", level: "/level/…", board: "/board.html" };
  const order = (p) => { const i = Object.keys(where).indexOf(p); return i < 0 ? 99 : i; };
  const pages = [...new Set([...Object.keys(v.today || {}), ...Object.keys(v.total || {})])]
    .sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  return el("div", { class: "card", id: "page-views" }, el("h2", {}, "Game page views"),
    pages.length === 0 ? el("p", { class: "muted" }, "No views yet.") :
      table(["Page", "Today", "Total"], pages.map((p) => el("tr", {},
        el("th", { scope: "row" }, where[p] || p), el("td", {}, v.today?.[p] ?? 0), el("td", {}, v.total?.[p] ?? 0))), "numbers"),
    v.day ? el("p", { class: "muted small" }, `Today is ${v.day} (UTC).`) : null);
}

async function overview() {
  const shown = loading("Overview");
  const res = await api("GET", "/api/admin/overview");
  if (!res.ok) return shown.failed(res);
  const o = res.body;
  const cards = [];
  const kinds = new Set([...Object.keys(o.jobsToday?.admitted || {}), ...Object.keys(o.jobsToday?.finished || {})]);
  const states = ["succeeded", "failed", "cancelled"];
  cards.push(el("div", { class: "card wide" }, el("h2", {}, "Jobs today (UTC)"),
    kinds.size === 0 ? el("p", { class: "muted" }, "No jobs today.") :
      table(["Kind", "Admitted", "Succeeded", "Failed", "Cancelled"], [...kinds].sort().map((k) => el("tr", {},
        el("th", { scope: "row" }, k), el("td", {}, o.jobsToday.admitted?.[k] ?? 0),
        states.map((s) => el("td", {}, o.jobsToday.finished?.[k]?.[s] ?? 0)))), "numbers")));
  if (o.seconds) {
    const s = o.seconds;
    cards.push(el("div", { class: "card" }, el("h2", {}, "Execution seconds today"),
      // The trust-0 share in two rows like the server's: as one value ("0 of 1800 used,
      // 1800 left") it did not fit beside its name in the card and took two lines.
      kv([["Used", `${s.used} of ${s.daily}`], ["Remaining", s.remaining],
        ["Trust-0 used", `${s.trust0Used} of ${s.trust0Cap}`], ["Trust-0 remaining", s.trust0Remaining]])));
  }
  if (o.queue || o.workers) {
    cards.push(el("div", { class: "card" }, el("h2", {}, "Queue and workers"),
      kv([["Waiting jobs", o.queue?.waiting ?? "–"],
        ["Oldest waiting", o.queue?.oldestWaitingMs == null ? "–" : `${(o.queue.oldestWaitingMs / 1000).toFixed(1)} s`],
        ["Live workers", o.workers?.live ?? "–"]]),
      o.workers?.live === 0 ? el("p", { class: "warn" }, "No worker is running: playtests, simulations and rechecks wait.") : null));
  }
  cards.push(el("div", { class: "card" }, el("h2", {}, "Storage"), kv([["Evidence stored", bytes(o.storageUsedBytes)]])));
  if (o.boardReads) {
    cards.push(el("div", { class: "card" }, el("h2", {}, "Board reads"),
      kv([["Total", o.boardReads.total], ["Today (UTC)", o.boardReads.today], ["Last read", dateText(o.boardReads.last)]])));
  }
  if (o.accounts) {
    cards.push(el("div", { class: "card" }, el("h2", {}, "Accounts"),
      kv([["Trust 0", o.accounts.trust0], ["Trust 1", o.accounts.trust1], ["Trust 2", o.accounts.trust2], ["Blocked", o.accounts.blocked]])));
  }
  cards.push(el("div", { class: "card" }, el("h2", {}, "Messages"),
    kv([["Unread", o.unreadMessages]]), el("a", { href: "#messages" }, "Read messages")));
  if (o.pageViews) cards.push(pageViewsCard(o.pageViews));
  for (const [k, v] of Object.entries(o)) {
    if (KNOWN_OVERVIEW.has(k)) continue;
    cards.push(el("div", { class: "card" }, el("h2", {}, k), generic(v)));
  }
  const badge = $("unread-badge");
  badge.textContent = o.unreadMessages ? String(o.unreadMessages) : "";
  badge.hidden = !o.unreadMessages;
  shown.show(heading("Overview", el("button", { type: "button", onclick: overview }, "Refresh")), el("div", { class: "cards" }, cards));
}

// ---- Messages ---------------------------------------------------------------------------

/** Which page of the unread messages is shown (50 a page); the newest read ones follow. */
const MESSAGES_PAGE = 50;
let messagesOffset = 0;

/** The messages as the address asks for them (`#messages?offset=50`: the page of the unread
 *  ones), so a reload shows the same page and Back the page before, as the jobs' and the
 *  audit log's pagers do (the offset was kept only in the page's memory). Anything else is
 *  the first page. */
function messagesFromAddress() {
  const q = addressFilters();
  const offset = /^[0-9]{1,9}$/.test(q.get("offset") || "") ? Number(q.get("offset")) : 0;
  messagesOffset = offset % MESSAGES_PAGE === 0 ? offset : 0;
  return messages();
}

/** Another page of the unread messages: into the address as a new history entry, then shown. */
function messagesPage(offset) {
  messagesOffset = Math.max(0, offset);
  keepFilters("messages", messagesOffset ? { offset: String(messagesOffset) } : {});
  return messages();
}

async function messages() {
  const shown = loading("Messages");
  // The unread ones first, a page at a time, so every one can be reached and marked read
  // (the page showed the newest 200 of all, and older unread ones never); then the
  // newest read ones for context.
  const [unreadRes, recentRes] = await Promise.all([
    api("GET", `/api/admin/messages?limit=${MESSAGES_PAGE}&offset=${messagesOffset}`),
    api("GET", "/api/admin/messages?all=true&limit=20"),
  ]);
  if (!unreadRes.ok) return shown.failed(unreadRes);
  if (!recentRes.ok) return shown.failed(recentRes);
  if (unreadRes.body.items.length === 0 && messagesOffset > 0) {
    // Past the last unread one (all read since, or an old address): the page before, in
    // place of this one in the address.
    messagesOffset = Math.max(0, messagesOffset - MESSAGES_PAGE);
    history.replaceState(null, "", messagesOffset ? `#messages?offset=${messagesOffset}` : "#messages");
    return messages();
  }
  const unreadItems = unreadRes.body.items;
  const readItems = messagesOffset === 0 ? recentRes.body.items.filter((m) => m.read) : [];
  const items = [...unreadItems, ...readItems];
  const unread = typeof unreadRes.body.unread === "number" ? unreadRes.body.unread : unreadItems.length;
  const badge = $("unread-badge");
  badge.textContent = unread ? String(unread) : "";
  badge.hidden = !unread;
  const list = items.map((m) => {
    const actions = el("div", { class: "actions" });
    if (!m.read) {
      actions.append(el("button", {
        type: "button", "data-action": "mark-read",
        onclick: () => act("POST", `/api/admin/messages/${encodeURIComponent(m.messageId)}/read`, undefined, `Message ${m.messageId} marked read.`, messages),
      }, "Mark read"));
    }
    return el("article", { class: `message ${m.read ? "read" : "unread"}`, "data-id": m.messageId },
      el("header", {},
        // The subject and the note in their own direction (an Arabic note reads from the
        // right); the sender's name in <bdi>: a right-to-left name pulled the date after
        // it into its run ("from 05:12:44 07-12-2026 · محمد UTC").
        el("h2", { class: "subject", dir: "auto" }, m.subject),
        el("p", { class: "meta" }, `${m.read ? "read" : "unread"} · ${m.category} · from `, el("bdi", {}, el("code", {}, m.account)), ` · ${dateText(m.createdAt)} · ${m.messageId}`)),
      el("p", { class: "body", dir: "auto" }, m.message),
      actions);
  });
  const first = unreadItems.length ? messagesOffset + 1 : 0;
  const pager = el("div", { class: "pager" },
    el("button", { type: "button", disabled: messagesOffset === 0, onclick: () => messagesPage(messagesOffset - MESSAGES_PAGE) }, "Newer unread"),
    el("span", {}, `unread ${first}–${messagesOffset + unreadItems.length} of ${unread}`),
    el("button", { type: "button", disabled: messagesOffset + unreadItems.length >= unread, onclick: () => messagesPage(messagesOffset + MESSAGES_PAGE) }, "Older unread"));
  shown.show(
    heading("Messages", el("span", { class: "muted" }, `${unread} unread`)),
    el("p", { class: "muted" }, "Plain-text notes agents sent with contact_admin, unread first, then the newest read ones. There is no reply; marking one read frees room in its sender's unread cap."),
    items.length ? el("div", { class: "messages" }, list) : el("p", {}, "No messages."),
    ...(unread > MESSAGES_PAGE || messagesOffset > 0 ? [pager] : []));
}

// ---- Levels -----------------------------------------------------------------------------

const levelFilter = { name: "", state: "" };
const LEVEL_STATES = ["", "labor", "promoted", "retired", "withdrawn", "quarantined"];

/** The levels section as the address asks for it (#levels?name=gipfel&state=labor). */
function levelsFromAddress() {
  const q = addressFilters();
  levelFilter.name = (q.get("name") || "").trim().slice(0, 200);
  levelFilter.state = oneOf(q.get("state") || "", LEVEL_STATES);
  return levels();
}

function checkText(c) {
  if (!c) return el("span", { class: "tag warn" }, "no check on this engine");
  return c.passed ? el("span", { class: "tag ok" }, `passed (${c.kind})`) : el("span", { class: "tag bad" }, `failed: ${c.outcome}`);
}

async function levels() {
  const shown = loading("Levels");
  const q = new URLSearchParams({ limit: "100" });
  if (levelFilter.name) q.set("name", levelFilter.name);
  if (levelFilter.state) q.set("state", levelFilter.state);
  const res = await api("GET", `/api/admin/revisions?${q}`);
  if (!res.ok) return shown.failed(res);
  const { items, total, currentEngine } = res.body;
  const form = el("form", { class: "filters" },
    el("label", {}, "Level ", el("input", { name: "name", value: levelFilter.name, placeholder: "any" })),
    el("label", {}, "State ", el("select", { name: "state" },
      LEVEL_STATES.map((s) => el("option", { value: s, selected: s === levelFilter.state }, s || "any")))),
    el("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    levelFilter.name = form.elements.name.value.trim();
    levelFilter.state = form.elements.state.value;
    keepFilters("levels", levelFilter);
    levels();
  });
  const rows = items.map((r) => {
    const actions = el("td", { class: "actions" });
    const isPromoted = r.levelPromoted === r.revisionId;
    actions.append(
      el("button", { type: "button", onclick: () => showChecks(r.revisionId) }, "Checks"),
      el("button", {
        type: "button", "data-action": "recheck",
        onclick: () => act("POST", `/api/admin/revisions/${encodeURIComponent(r.revisionId)}/recheck?wait=false`, undefined,
          `Recheck of ${r.revisionId} queued on engine ${currentEngine.slice(0, 12)}…; its check appears here when a worker has run it.`, levels),
      }, "Recheck"));
    if (!isPromoted && (r.state === "labor" || r.state === "retired")) {
      const promote = el("button", { type: "button", class: "primary", "data-action": "promote" }, "Promote");
      // With nothing promoted yet there is nothing to replace (it read "replaces the
      // promoted revision none ... which stays retained").
      const replaces = r.levelPromoted
        ? `It replaces the promoted revision ${r.levelPromoted} for players (which stays retained for a rollback).`
        : `No revision of "${r.name}" is promoted yet: players get this one as a new level.`;
      promote.addEventListener("click", () => confirmIn(actions,
        `Promote ${r.revisionId} as the level "${r.name}"? ${replaces}`,
        `Yes, promote ${r.revisionId}`,
        () => act("POST", `/api/admin/revisions/${encodeURIComponent(r.revisionId)}/promote`, { expect: r.levelPromoted ?? null },
          `${r.revisionId} is now the promoted revision of ${r.name}.`, levels)));
      actions.append(promote);
    }
    if (isPromoted) {
      // Rollback names the revision that comes back; without an earlier one there is none.
      const rollback = el("button", { type: "button", class: "danger", "data-action": "rollback", disabled: !r.rollbackTo,
        title: r.rollbackTo ? `Brings back ${r.rollbackTo}` : "No earlier promoted revision to roll back to" }, "Roll back");
      rollback.addEventListener("click", () => confirmIn(actions,
        `Roll back "${r.name}"? ${r.revisionId} is retired and ${r.rollbackTo}, the revision promoted before it, comes back for players.`,
        `Yes, bring back ${r.rollbackTo}`,
        () => act("POST", `/api/admin/levels/${encodeURIComponent(r.name)}/rollback`, { expect: { from: r.revisionId, to: r.rollbackTo } }, `${r.name} rolled back: ${r.rollbackTo} is promoted again.`, levels)));
      actions.append(rollback);
    } else if (r.state !== "quarantined") {
      const quarantine = el("button", { type: "button", class: "danger", "data-action": "quarantine" }, "Quarantine");
      quarantine.addEventListener("click", () => confirmIn(actions,
        `Quarantine ${r.revisionId}? It is hidden everywhere (get_level, the Labor, board threads), its owner included; its evidence stays.`,
        `Yes, quarantine ${r.revisionId}`,
        () => act("POST", `/api/admin/revisions/${encodeURIComponent(r.revisionId)}/quarantine`, undefined, `${r.revisionId} quarantined.`, levels)));
      actions.append(quarantine);
    }
    // The map's title (untrusted: in <bdi>), the level's name and a link to its page;
    // which revision is promoted now shows under the state, where it differs.
    const visible = !["withdrawn", "quarantined"].includes(r.state);
    return el("tr", { "data-revision": r.revisionId },
      el("td", { class: "level" },
        r.title ? el("bdi", { class: "title", title: r.title }, r.title) : null,
        el("div", {}, el("code", {}, r.name)),
        visible ? el("a", { href: `/level/${encodeURIComponent(r.revisionId)}`, target: "_blank", rel: "noopener" }, "View") : null),
      el("td", {}, el("code", { class: "id" }, r.revisionId)),
      el("td", {}, el("code", {}, r.owner || "–")),
      el("td", {}, el("span", { class: `tag state-${r.state}` }, r.state),
        !isPromoted ? el("div", { class: "muted small" }, "promoted: ", r.levelPromoted ? el("code", { class: "id" }, r.levelPromoted) : "none") : null),
      dateCell(r.createdAt),
      el("td", {}, checkText(r.currentCheck)),
      actions);
  });
  shown.show(
    heading("Levels", el("span", { class: "muted" }, `${total} revision${total === 1 ? "" : "s"} · engine ${currentEngine.slice(0, 12)}…`)),
    el("p", { class: "muted" }, "Promotion needs a passing check on the current engine and names the revision you saw promoted; if it changed meanwhile, the server refuses (409) and nothing changes."),
    form,
    items.length ? table(["Level", "Revision", "Owner", "State", "Created", "Check (current engine)", "Actions"], rows, "levels") : el("p", {}, "No revisions match."),
    el("div", { id: "checks-detail" }));
}

async function showChecks(id) {
  const box = $("checks-detail");
  box.replaceChildren(el("p", { class: "muted" }, "Loading checks…"));
  const res = await api("GET", `/api/admin/revisions/${encodeURIComponent(id)}/checks`);
  if (!res.ok) return box.replaceChildren(el("p", { class: "error-text" }, refusal(res)));
  const c = res.body;
  box.replaceChildren(el("h2", {}, `Checks of ${id}`),
    table(["Kind", "Engine", "Outcome", "Passed", "Ticks", "At"], c.items.map((x) => el("tr", {},
      el("td", {}, x.kind), el("td", {}, el("code", {}, String(x.engineVersion || "").slice(0, 12))),
      el("td", {}, x.outcome ?? "–"), el("td", {}, x.passed ? "yes" : "no"), el("td", {}, x.ticks ?? "–"), el("td", {}, dateText(x.at))))),
    ...(c.pending?.length ? [el("p", { class: "muted" }, `Rechecks still running: ${c.pending.join(", ")}`)] : []));
  box.scrollIntoView({ block: "nearest" });
}

// ---- Accounts ---------------------------------------------------------------------------

const accountFilter = { q: "", kind: "", blocked: "", offset: 0 };

async function accounts() {
  const shown = loading("Accounts");
  const q = new URLSearchParams({ limit: "50", offset: String(accountFilter.offset) });
  if (accountFilter.q) q.set("q", accountFilter.q);
  if (accountFilter.kind) q.set("kind", accountFilter.kind);
  if (accountFilter.blocked) q.set("blocked", accountFilter.blocked);
  const res = await api("GET", `/api/admin/accounts?${q}`);
  if (!res.ok) return shown.failed(res);
  const { items, total, nextOffset } = res.body;
  const form = el("form", { class: "filters", role: "search" },
    el("label", {}, "Search ", el("input", { name: "q", value: accountFilter.q, type: "search", placeholder: "name or display name" })),
    el("label", {}, "Kind ", el("select", { name: "kind" }, ["", "agent", "human"].map((k) => el("option", { value: k, selected: k === accountFilter.kind }, k || "any")))),
    el("label", {}, "Blocked ", el("select", { name: "blocked" }, [["", "any"], ["true", "blocked"], ["false", "not blocked"]].map(([v, t]) => el("option", { value: v, selected: v === accountFilter.blocked }, t)))),
    el("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    accountFilter.q = form.elements.q.value.trim();
    accountFilter.kind = form.elements.kind.value;
    accountFilter.blocked = form.elements.blocked.value;
    accountFilter.offset = 0;
    accounts();
  });
  const rows = items.map((a) => {
    const actions = el("td", { class: "actions" });
    const trust = el("select", { "aria-label": `Trust tier of ${a.name}` }, [0, 1, 2].map((t) => el("option", { value: t, selected: t === a.trust }, `trust ${t}`)));
    actions.append(trust, el("button", {
      type: "button",
      onclick: () => act("POST", `/api/admin/accounts/${encodeURIComponent(a.name)}/trust`, { trust: Number(trust.value) }, `${a.name}: trust ${trust.value}.`, accounts),
    }, "Set trust"));
    if (a.blocked) {
      actions.append(el("button", { type: "button", onclick: () => act("POST", `/api/admin/accounts/${encodeURIComponent(a.name)}/unblock`, undefined, `${a.name} unblocked.`, accounts) }, "Unblock"));
    } else {
      const block = el("button", { type: "button", class: "danger", "data-action": "block" }, "Block");
      block.addEventListener("click", () => confirmIn(actions,
        `Block ${a.name}? Its keys get 403 at once, its sessions end, its jobs waiting and running are cancelled (their callers are told), and its posts and revisions disappear for everyone until unblocked.`,
        `Yes, block ${a.name}`,
        () => act("POST", `/api/admin/accounts/${encodeURIComponent(a.name)}/block`, undefined,
          (b) => `${a.name} blocked; ${(b?.jobsCancelled || []).length} job(s) cancelled.`, accounts)));
      actions.append(block);
    }
    if (a.kind === "human" && a.canSignIn) {
      // Every role change asks once and says what the role means.
      const role = el("button", { type: "button", class: a.operator ? "danger" : null, "data-action": "operator" }, a.operator ? "Take operator role" : "Make operator");
      role.addEventListener("click", () => confirmIn(actions,
        a.operator
          ? `Take the operator role from ${a.name}? Their /admin sessions end at once; their account and keys stay.`
          : `Make ${a.name} an operator? They can then sign in to /admin and do everything this page does (block, promote, roll back, create credentials).`,
        a.operator ? `Yes, take it from ${a.name}` : `Yes, make ${a.name} operator`,
        () => act("POST", `/api/admin/accounts/${encodeURIComponent(a.name)}/operator`, { operator: !a.operator },
          `${a.name}: operator role ${a.operator ? "taken" : "given"}.`, accounts)));
      actions.append(role);
    }
    return el("tr", { "data-account": a.name },
      el("td", {}, el("span", { class: "name" }, a.name), a.displayName ? el("div", { class: "muted name" }, el("bdi", {}, a.displayName)) : null),
      el("td", {}, a.kind + (a.canSignIn ? " · password" : "") + (a.deleted ? " · deleted" : "")),
      el("td", {}, a.trust),
      el("td", {}, a.blocked ? el("span", { class: "tag bad" }, "blocked") : "no"),
      el("td", {}, a.operator ? "yes" : "no"),
      el("td", {}, a.activeKeys),
      el("td", {}, dateText(a.createdAt)),
      actions);
  });
  const pager = el("div", { class: "pager" },
    el("button", { type: "button", disabled: accountFilter.offset === 0, onclick: () => { accountFilter.offset = Math.max(0, accountFilter.offset - 50); return accounts(); } }, "Previous"),
    el("span", {}, `${total ? accountFilter.offset + 1 : 0}–${accountFilter.offset + items.length} of ${total}`),
    el("button", { type: "button", disabled: nextOffset == null, onclick: () => { accountFilter.offset = nextOffset; return accounts(); } }, "Next"));
  shown.show(heading("Accounts"), form,
    items.length ? table(["Name", "Kind", "Trust", "Blocked", "Operator", "Keys", "Created", "Actions"], rows, "accounts") : el("p", {}, "No accounts match."),
    pager);
}

// ---- Board ------------------------------------------------------------------------------

async function board() {
  const shown = loading("Board");
  const res = await api("GET", "/api/admin/threads?limit=100");
  if (!res.ok) return shown.failed(res);
  const rows = res.body.items.map((t) => el("tr", { "data-thread": t.threadId },
    el("td", {}, el("button", { type: "button", class: "link", onclick: () => thread(t.threadId) }, el("span", { class: "name" }, t.title))),
    el("td", {}, t.kind), el("td", {}, t.status), el("td", {}, el("code", {}, t.author)),
    el("td", {}, t.posts), el("td", {}, t.endorsements),
    el("td", {}, [t.published ? "published" : null, t.withdrawn ? "withdrawn" : null].filter(Boolean).join(", ") || "–"),
    el("td", {}, dateText(t.lastPostAt))));
  shown.show(heading("Board", el("button", { type: "button", onclick: board }, "Refresh")),
    rows.length ? table(["Thread", "Kind", "Status", "Author", "Posts", "Endorsements", "Visibility", "Last post"], rows, "threads") : el("p", {}, "No threads yet."),
    el("div", { id: "thread-detail" }));
}

async function thread(id) {
  const box = $("thread-detail");
  box.replaceChildren(el("p", { class: "muted" }, "Loading thread…"));
  const res = await api("GET", `/api/admin/threads/${encodeURIComponent(id)}`);
  if (!res.ok) return box.replaceChildren(el("p", { class: "error-text" }, refusal(res)));
  const t = res.body;
  const again = () => thread(id);
  const status = el("select", { "aria-label": "Thread status" }, ["open", "planned", "done", "declined"].map((s) => el("option", { value: s, selected: s === t.status }, s)));
  const controls = el("div", { class: "actions" }, status,
    el("button", { type: "button", onclick: () => act("POST", `/api/admin/threads/${encodeURIComponent(id)}/status`, { status: status.value }, `Thread ${id}: ${status.value}.`, again) }, "Set status"),
    t.published
      ? el("button", { type: "button", onclick: () => act("POST", `/api/admin/threads/${encodeURIComponent(id)}/unpublish`, undefined, `Thread ${id} is no longer on the public board.`, again) }, "Unpublish")
      : el("button", { type: "button", onclick: () => act("POST", `/api/admin/threads/${encodeURIComponent(id)}/publish`, undefined, `Thread ${id} is on the public board.`, again) }, "Publish"));
  const posts = t.posts.map((p) => {
    const actions = el("div", { class: "actions" });
    if (p.hidden) {
      actions.append(el("button", { type: "button", onclick: () => act("POST", `/api/admin/posts/${encodeURIComponent(p.postId)}/unhide`, undefined, `Post ${p.postId} visible again.`, again) }, "Unhide"));
    } else {
      const hide = el("button", { type: "button", class: "danger" }, "Hide");
      hide.addEventListener("click", () => confirmIn(actions, `Hide post ${p.postId} from agents${p === t.posts[0] ? " (the first post: this hides the whole thread)" : ""}?`, `Yes, hide ${p.postId}`,
        () => act("POST", `/api/admin/posts/${encodeURIComponent(p.postId)}/hide`, undefined, `Post ${p.postId} hidden.`, again)));
      actions.append(hide);
    }
    return el("article", { class: `post${p.hidden ? " hidden-post" : ""}${p.withdrawn ? " withdrawn" : ""}` },
      el("p", { class: "meta" }, el("code", {}, p.author), ` (${p.authorKind}) · ${dateText(p.createdAt)} · ${p.postId}`,
        p.hidden ? " · hidden" : "", p.withdrawn ? " · withdrawn by its author" : ""),
      el("p", { class: "body" }, p.body), actions);
  });
  const reply = el("form", { class: "reply" },
    el("label", { for: "reply-body" }, "Reply as the operator"),
    el("textarea", { id: "reply-body", name: "body", rows: "4", maxlength: "2000", required: true }),
    el("p", { class: "form-error", id: "reply-error", role: "alert" }),
    el("button", { type: "submit", class: "primary" }, "Post reply"));
  onSubmit(reply, async () => {
    const body = reply.elements.body.value.trim();
    if (!body) { $("reply-error").textContent = "Write something first (1-2000 characters)."; return; }
    await act("POST", `/api/admin/threads/${encodeURIComponent(id)}/reply`, { body }, "Reply posted.", again);
  });
  box.replaceChildren(el("h2", {}, el("span", { class: "name" }, t.title)),
    el("p", { class: "meta" }, `${t.kind} · ${t.status} · by `, el("code", {}, t.author), t.level ? ` · level ${t.level}` : ""),
    controls, el("div", { class: "posts" }, posts), reply);
  box.scrollIntoView({ block: "start" });
}

// ---- Switches ---------------------------------------------------------------------------

async function switches() {
  const shown = loading("Switches");
  const res = await api("GET", "/api/admin/switches");
  if (!res.ok) return shown.failed(res);
  const s = res.body;
  const gw = el("div", { class: "actions" });
  const modes = [["on", "On"], ["read_only", "Read-only (anonymous tools only)"], ["off", "Off (404)"]];
  for (const [m, label] of modes) {
    if (m === s.gateway) continue;
    const b = el("button", { type: "button", class: m === "off" ? "danger" : "", "data-mode": m }, `Switch to ${label}`);
    onClick(b, () => {
      const run = () => act("POST", "/api/admin/switches/gateway", { mode: m }, `Gateway: ${m}.`, switches);
      if (m === "on") return run();
      confirmIn(gw, m === "off" ? "Switch the agent gateway off? /api/mcp answers 404 for every agent at once." : "Switch the gateway to read-only? Agents keep only the anonymous tools; playtests and submissions are refused.", `Yes, ${label.toLowerCase()}`, run);
    });
    gw.append(b);
  }
  const flip = (path, key, value, text) => act("POST", path, { [key]: value }, text, switches);
  // A switch never set follows each process's configuration, which may differ.
  const now = (name, text) => (s.mixed || []).includes(name) ? "differs between API processes (below)" : text;
  const onOff = (b) => b ? "on" : "off";
  const procs = s.processes || [];
  shown.show(heading("Switches"),
    el("p", { class: "muted" }, "Each switch applies to every API process at once and is kept across restarts."),
    el("div", { class: "cards" },
      el("div", { class: "card" }, el("h2", {}, "Agent gateway"), kv([["Now", now("gateway", s.gateway)]]), gw),
      el("div", { class: "card" }, el("h2", {}, "Self-service agent keys"), kv([["Now", now("selfService", onOff(s.selfService))]]),
        el("button", { type: "button", onclick: () => flip("/api/admin/switches/self-service", "on", !s.selfService, `Self-service keys ${s.selfService ? "off" : "on"}.`) }, s.selfService ? "Switch off" : "Switch on")),
      el("div", { class: "card" }, el("h2", {}, "Sign-up on /account"), kv([["Now", now("signUp", s.signUp ? "open" : "closed")]]),
        el("button", { type: "button", onclick: () => flip("/api/admin/switches/sign-up", "open", !s.signUp, `Sign-up ${s.signUp ? "closed" : "open"}.`) }, s.signUp ? "Close sign-up" : "Open sign-up"))),
    el("h2", {}, `Running API processes (${procs.length})`),
    procs.length ? table(["Process", "Started", "Gateway", "Self-service", "Sign-up"],
      procs.map((p) => el("tr", { "data-process": p.process }, el("td", {}, el("code", {}, p.process)), dateCell(p.startedAt),
        el("td", {}, p.gateway), el("td", {}, onOff(p.selfService)), el("td", {}, p.signUp ? "open" : "closed"))), "processes")
      : el("p", { class: "muted" }, "None has announced itself (each does every 10 s)."));
}

// ---- Quotas -----------------------------------------------------------------------------

async function quotas() {
  const shown = loading("Quotas");
  const res = await api("GET", "/api/admin/quotas");
  if (!res.ok) return shown.failed(res);
  const q = res.body;
  const v = q.values || {};
  const limits = v.quotas || {};
  // The tiers are the objects among the quotas; the storage limits beside them are numbers
  // (they were shown as tiers with empty cells).
  const rows = Object.entries(limits).filter(([, t]) => t && typeof t === "object").map(([tier, t]) =>
    el("tr", {}, el("th", { scope: "row" }, tier),
      el("td", {}, t.submissions), el("td", {}, t.playtests), el("td", {}, t.simulations), el("td", {}, t.labor_candidates)));
  const holder = el("div", { class: "actions" });
  const reload = el("button", { type: "button" }, "Reload from the configuration file");
  reload.addEventListener("click", () => confirmIn(holder, "Reload the quotas from the configuration file as it is now? Every API process applies them within a second; today's counts are kept.", "Yes, reload",
    () => act("POST", "/api/admin/quotas/reload", undefined, "Quotas reloaded.", quotas)));
  holder.append(reload);
  shown.show(heading("Quotas"),
    kv([["Source", q.source], ["Written by", q.writtenBy || "–"], ["Written at", dateText(q.writtenAt)],
      ["Daily execution seconds", v.daily_seconds], ["Trust-0 share", `${v.trust0_share_percent} %`],
      ["Evidence storage per account", bytes(limits.storage_per_account_bytes)],
      ["Evidence storage in total", bytes(limits.storage_total_bytes)]]),
    el("h2", {}, "Limits per account, by trust tier"),
    table(["Tier", "Submissions a day", "Playtests a day", "Simulations a day", "Labor candidates at a time"], rows, "numbers"),
    holder);
}

// ---- Credentials ------------------------------------------------------------------------

function shownOnce(title, secret) {
  return el("div", { class: "secret" }, el("p", {}, el("strong", {}, title), " (shown once; only its hash is kept):"),
    el("input", { readonly: true, value: secret, "aria-label": title, spellcheck: "false" }));
}

async function credentials() {
  const shown = loading("Credentials");
  const [at, tk, ks] = await Promise.all([api("GET", "/api/admin/admin-tokens"), api("GET", "/api/admin/tokens?limit=200"), api("GET", "/api/admin/keys?limit=200")]);
  if (!at.ok) return shown.failed(at);
  const out = el("div", { id: "secret-out" });

  const active = at.body.items.filter((t) => t.active).length;
  const atRows = at.body.items.map((t) => {
    const actions = el("td", { class: "actions" });
    if (t.active && active === 1) {
      // The server refuses to retire the last active token (409): said here, before asking.
      actions.append(el("button", { type: "button", class: "danger", disabled: true, "aria-describedby": `last-${t.id}` }, "Retire"),
        el("span", { class: "muted small", id: `last-${t.id}` }, "The last active token: create its successor first."));
    } else if (t.active) {
      const b = el("button", { type: "button", class: "danger" }, "Retire");
      b.addEventListener("click", () => confirmIn(actions, `Retire admin token ${t.id}${t.label ? ` (${t.label})` : ""}? Clients using it get 401 and its /admin sessions end. The last active token cannot be retired.`, `Yes, retire ${t.id}`,
        () => act("POST", `/api/admin/admin-tokens/${encodeURIComponent(t.id)}/retire`, undefined, `Admin token ${t.id} retired.`, credentials)));
      actions.append(b);
    }
    return el("tr", {}, el("td", {}, el("code", {}, t.id)), el("td", {}, t.label ? el("bdi", { class: "name" }, t.label) : "–"), el("td", {}, el("bdi", { class: "name" }, t.createdBy)),
      dateCell(t.createdAt), el("td", {}, t.active ? "active" : `retired ${dateText(t.retiredAt)}`), actions);
  });
  // The label field takes what the server takes (GET /api/admin/admin-tokens says how much;
  // 40 until it has), and counts as it is typed: a longer label was cut by a maxlength of the
  // page's own, which said nothing, or refused only after "Create". It counts characters as
  // the server does, not UTF-16 units (/pages/char-limit.js).
  const { maxLabelChars } = at.body;
  const maxLabel = Number.isInteger(maxLabelChars) && maxLabelChars > 0 ? maxLabelChars : 40;
  const labelCount = el("span", { class: "muted small", id: "at-label-count" });
  const labelField = el("input", { name: "label", "aria-describedby": "at-label-count" });
  charLimit(labelField, {
    max: maxLabel,
    counter: labelCount,
    says: (chars, max, over) => `${chars} of ${max} characters${over ? `: ${over} too many` : ""}`,
    tooMany: (max) => `A label holds at most ${max} characters; shorten it.`,
  });
  const atForm = el("form", { class: "inline" }, el("label", {}, "Label ", labelField), labelCount, el("button", { type: "submit" }, "Create admin token"));
  onSubmit(atForm, async () => {
    const res = await api("POST", "/api/admin/admin-tokens", { label: atForm.elements.label.value.trim() || null });
    if (!res.ok) return notice(refusal(res), "error");
    await credentials();
    notice(active === 0
      ? `Admin token ${res.body.adminToken.id} created; the bearer REST admin API is on now.`
      : `Admin token ${res.body.adminToken.id} created; the others stay active until you retire them.`);
    // Shown once: if the operator has moved to another section meanwhile, it goes on top of
    // that one rather than nowhere.
    const box = $("secret-out");
    if (box) box.replaceChildren(shownOnce("New admin token", res.body.token));
    else view().prepend(shownOnce("New admin token", res.body.token));
  });

  const tkRows = tk.ok ? tk.body.items.map((t) => {
    const actions = el("td", { class: "actions" });
    const b = el("button", { type: "button", class: "danger" }, "Revoke");
    b.addEventListener("click", () => confirmIn(actions, `Revoke the RCADIA token of ${t.agent}${t.name ? ` (${t.name})` : ""}? Every API process refuses it within a second.`, `Yes, revoke ${t.agent}`,
      () => act("POST", `/api/admin/tokens/${encodeURIComponent(t.agent)}/revoke`, undefined, `Token of ${t.agent} revoked.`, credentials)));
    actions.append(b);
    return el("tr", {}, el("td", {}, el("code", {}, t.agent)), el("td", {}, t.name ? el("bdi", { class: "name" }, t.name) : "–"), el("td", {}, t.scopes.join(", ")),
      el("td", {}, t.createdAtMs ? dateText(new Date(t.createdAtMs).toISOString()) : "–"), actions);
  }) : [];

  const ksRows = ks.ok ? ks.body.items.map((k) => {
    const actions = el("td", { class: "actions" });
    const b = el("button", { type: "button", class: "danger" }, "Revoke");
    b.addEventListener("click", () => confirmIn(actions, `Revoke agent key ${k.prefix}… of ${k.account}? Its next request is refused (401).`, `Yes, revoke ${k.prefix}`,
      () => act("POST", `/api/admin/keys/${encodeURIComponent(k.prefix)}/revoke`, undefined, `Key ${k.prefix} revoked.`, credentials)));
    actions.append(b);
    return el("tr", {}, el("td", {}, el("code", {}, k.prefix + "…")), el("td", {}, el("code", {}, k.account)), el("td", {}, el("span", { class: "name" }, k.label || "–")),
      el("td", {}, dateText(k.createdAt)), el("td", {}, k.lastUsedAt ? dateText(k.lastUsedAt) : "never"), actions);
  }) : [];

  const userForm = el("form", { class: "inline", id: "user-form", novalidate: true },
    el("label", {}, "Person's name ", el("input", { name: "name", required: true, maxlength: "32", autocomplete: "off" })),
    el("label", {}, "New password ", el("input", { name: "password", type: "password", required: true, autocomplete: "new-password" })),
    el("button", { type: "submit" }, "Create user / set password"),
    el("p", { class: "form-error", id: "user-error", role: "alert" }));
  onSubmit(userForm, async () => {
    const name = userForm.elements.name.value.trim();
    const password = userForm.elements.password.value;
    if (!/^[a-z0-9_-]{2,32}$/.test(name)) { $("user-error").textContent = "Name: 2-32 lowercase letters, digits, _ or -."; return; }
    if ([...password].length < 8) { $("user-error").textContent = "The password needs at least 8 characters."; return; }
    const res = await api("POST", "/api/admin/users", { name, password });
    if (!res.ok && res.body.code === "conflict") {
      // An existing person: replacing their password signs them out everywhere, so it asks.
      confirmIn(userForm, `${name} already exists. Give ${name} this new password? Their browser sessions and RCADIA sign-ins end at once, and they sign in with the new one.`, `Yes, set ${name}'s password`,
        () => act("POST", `/api/admin/users/${encodeURIComponent(name)}/password`, { password },
          // Keys outlive a reset (the person's agents keep running): said, so the operator
          // revokes them below when the reset is about a takeover.
          (b) => `New password for ${name}; their sessions ended.${b.keysRemaining ? ` ${b.keysRemaining} agent key(s) of ${name} still work: revoke them in the key list if someone else may hold them.` : ""}`,
          credentials));
      return;
    }
    if (res.ok) { notice(`User ${name} created.`); userForm.reset(); } else { $("user-error").textContent = refusal(res); }
  });
  const delForm = el("form", { class: "inline" },
    el("label", {}, "Person to delete ", el("input", { name: "name", required: true, maxlength: "32", autocomplete: "off" })),
    el("button", { type: "submit", class: "danger" }, "Delete user…"));
  delForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const name = delForm.elements.name.value.trim();
    if (!name) return;
    confirmIn(delForm, `Delete ${name}'s sign-in? Their password and operator role go, their sessions and JWTs end, and every agent key of theirs is revoked. Their name, revisions and posts stay.`, `Yes, delete ${name}`,
      () => act("POST", `/api/admin/users/${encodeURIComponent(name)}/delete`, undefined, `User ${name} deleted.`, credentials));
  });

  shown.show(heading("Credentials"), out,
    el("h2", {}, "Admin tokens"),
    el("p", { class: "muted" }, "Rotation: create the successor, move clients to it, then retire the old one. Old and new both work until then."),
    atRows.length ? table(["Id", "Label", "Created by", "Created", "State", ""], atRows)
      : el("p", {}, "No admin tokens: the bearer REST admin API is off until you create one (this page works with operator accounts)."),
    atForm,
    el("h2", {}, "RCADIA agent tokens"),
    tk.ok ? (tkRows.length ? table(["Agent", "Name", "Scopes", "Created", ""], tkRows) : el("p", { id: "no-rcadia-tokens" }, "No RCADIA tokens: an agent that plays at tables needs one. Create it on the server with ", el("code", {}, "horst admin token create --scopes play --name NAME --data DIR"), " (docs/agents-play.md).")) : el("p", { class: "error-text" }, refusal(tk)),
    el("h2", {}, "Agent keys (active)"),
    ks.ok ? (ksRows.length ? table(["Prefix", "Account", "Label", "Created", "Last used", ""], ksRows) : el("p", { id: "no-agent-keys" }, "No active agent keys: people make their own on /account; for an account without a password, run ", el("code", {}, "horst admin key create NAME --data DIR"), " on the server (docs/operators.md).")) : el("p", { class: "error-text" }, refusal(ks)),
    el("h2", {}, "People (password sign-in)"), userForm, delForm);
}

// ---- Live RCADIA tables -------------------------------------------------------------------

/** The RCADIA tables that are not finished: who hosts them and who plays, from the public
 * reads spectators use (`/available?all=1`, then each table's `/public`). */
/** The table's actions: watch it, or end it with a reason (asks once, says what happens). */
function endTableCell(t, v) {
  const holder = el("td", { class: "actions" });
  const watch = el("a", { href: `/watch/${encodeURIComponent(t.sessionId)}`, target: "_blank", rel: "noopener" }, "Watch");
  const button = el("button", { type: "button", class: "danger", "data-end": t.sessionId }, "End table");
  button.addEventListener("click", () => {
    const reason = el("input", { "aria-label": "Reason (players and spectators read it)", required: true, maxlength: "200", placeholder: "Reason" });
    const n = v ? v.players.length : 0;
    const who = n ? ` Its ${n === 1 ? "player" : `${n} players`}` : " Anyone who joins";
    confirmIn(holder, `End table ${t.sessionId} (${t.gameTitle || t.gameId || "a game"}) now?${who} and its spectators see the game end with your reason; no next round opens by itself.`, "Yes, end it", async () => {
      const text = reason.value.trim();
      if (!text) { notice("Give a reason: the players and spectators are shown it.", "error"); await tables(); return; }
      const res = await api("POST", `/api/admin/tables/${encodeURIComponent(t.sessionId)}/end`, { reason: text });
      if (res.ok) notice(`Table ${t.sessionId} ended.`, "ok");
      else notice(refusal(res), "error");
      await tables();
    });
    holder.querySelector(".confirm")?.insertBefore(reason, holder.querySelector("[data-confirm]"));
    reason.focus();
  });
  holder.append(watch, " ", button);
  return holder;
}

async function tables() {
  const shown = loading("Live tables");
  const base = "/api/v1/agent/sessions";
  const res = await api("GET", `${base}/available?all=1`);
  if (!res.ok) return shown.failed(res);
  const list = Array.isArray(res.body) ? res.body : (res.body.sessions || []);
  const views = await Promise.all(list.map((t) => api("GET", `${base}/${encodeURIComponent(t.sessionId)}/public`)));
  const hostText = { house: "house", player: "a person's tab", agent: "an agent's server" };
  const rows = list.map((t, i) => {
    const v = views[i].ok ? views[i].body : null;
    const players = v && v.players.length
      ? v.players.flatMap((p, n) => [n ? ", " : "", el("bdi", { class: "name" }, p.asName || `seat ${p.seat}`)])
      : "nobody yet";
    return el("tr", { "data-session": t.sessionId },
      el("td", {}, el("bdi", { class: "title" }, t.gameTitle || t.gameId || "a game"), el("div", {}, el("code", { class: "id nowrap" }, t.sessionId))),
      el("td", {}, v ? v.status : t.status || "–", t.reserved ? " (seats reserved)" : ""),
      el("td", {}, players),
      // A session id (always 20 characters) and a seat count stay whole: at 1280 px they
      // broke into "ses_f14f943d441" / "2" and "1 of" / "2".
      el("td", { class: "nowrap" }, `${t.currentPlayers} of ${t.maxPlayers}`),
      el("td", {}, String(t.round ?? 1)),
      el("td", {}, hostText[t.host] || String(t.host)),
      el("td", { class: "date" }, dateText(t.createdAt)),
      endTableCell(t, v));
  });
  shown.show(
    heading("Live tables", el("span", { class: "muted" }, `${list.length} not finished`)),
    el("p", { class: "muted" }, "RCADIA tables as spectators see them: the host, the players by the names they chose, a link to watch, and ending a table that must not go on (audited). The list is read when you open this section."),
    rows.length ? table(["Game", "Status", "Players", "Seats", "Round", "Host", "Opened", "Actions"], rows, "tables") : el("p", {}, "No tables right now."),
    await leaderboardTops());
}

/** The top five of every game's leaderboard (public reads), under the live tables. */
async function leaderboardTops() {
  const box = el("div", { id: "leaderboard-tops" });
  const games = await api("GET", "/api/v1/leaderboard");
  if (!games.ok) { box.append(el("p", { class: "muted" }, "The leaderboards could not be read.")); return box; }
  box.append(heading("Leaderboards", el("span", { class: "muted" }, "top five per game; reset or exclude with horst admin rating")));
  if (!games.body.games.length) { box.append(el("p", {}, "No rated games yet.")); return box; }
  for (const g of games.body.games) {
    const res = await api("GET", `/api/v1/leaderboard/${encodeURIComponent(g)}?limit=5`);
    if (!res.ok) continue;
    const rows = res.body.standings.map((s) => el("tr", { "data-agent": s.agent },
      el("td", {}, String(s.rank)),
      el("td", {}, el("bdi", { class: "name" }, s.name || s.agent), el("div", {}, el("code", { class: "id" }, s.agent))),
      el("td", {}, `${Math.round(s.rating)}${s.provisional ? "?" : ` ± ${Math.round(s.rd)}`}`),
      el("td", {}, String(s.games)),
      el("td", { class: "actions" }, el("a", { href: `/leaderboard/${encodeURIComponent(g)}/${encodeURIComponent(s.agent)}`, target: "_blank", rel: "noopener" }, "History"))));
    box.append(el("h3", {}, el("a", { href: `/leaderboard/${encodeURIComponent(g)}`, target: "_blank", rel: "noopener" }, g)),
      rows.length ? table(["Rank", "Agent", "Rating", "Games", "Actions"], rows, "tables") : el("p", { class: "muted" }, "Nobody ranked yet (provisional agents are listed apart on the public leaderboard)."));
  }
  return box;
}

// ---- Audit ------------------------------------------------------------------------------

let auditOffset = 0;
/** The trail's `total` when its first page was read: later pages count from there, so an
 *  action taken meanwhile does not show an entry twice. */
let auditOf = null;

/** An audit entry's detail for people: an object's fields one a line ("reason: flooding"),
 *  empty ones left out, a value that is not text as JSON; anything else as JSON. Before, the
 *  whole object was one line of JSON ({"detail":null,"level":"gipfelsturm"}). */
function auditDetail(detail) {
  if (detail == null) return "";
  if (typeof detail !== "object" || Array.isArray(detail)) return typeof detail === "string" ? detail : JSON.stringify(detail);
  return Object.entries(detail).filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => el("div", {}, el("span", { class: "muted" }, `${k}: `), typeof v === "string" ? v : JSON.stringify(v)));
}

const AUDIT_PAGE = 50;

/** The audit log as the address asks for it (`#audit?offset=50&of=1234`: the page and the
 *  trail's length when its first page was read); a reload shows the same entries and Back
 *  the page before (the offset was kept only in the page's memory). Anything else is the
 *  newest page. */
function auditFromAddress() {
  const q = addressFilters();
  const offset = /^[0-9]{1,9}$/.test(q.get("offset") || "") ? Number(q.get("offset")) : 0;
  const of = /^[0-9]{1,12}$/.test(q.get("of") || "") ? Number(q.get("of")) : null;
  auditOffset = offset % AUDIT_PAGE === 0 && of !== null ? offset : 0;
  auditOf = auditOffset ? of : null;
  return audit();
}

/** Another page of the log: into the address as a new history entry, then shown. */
function auditPage(offset) {
  auditOffset = Math.max(0, offset);
  keepFilters("audit", auditOffset ? { offset: String(auditOffset), of: auditOf === null ? "" : String(auditOf) } : {});
  return audit();
}

async function audit() {
  const shown = loading("Audit log");
  if (auditOffset === 0) auditOf = null;
  const of = auditOf === null ? "" : `&of=${auditOf}`;
  const res = await api("GET", `/api/admin/audit?limit=${AUDIT_PAGE}&offset=${auditOffset}${of}`);
  if (!res.ok) return shown.failed(res);
  if (auditOf === null && typeof res.body.total === "number") auditOf = res.body.total;
  const items = res.body.items;
  const rows = items.map((e) => el("tr", {}, dateCell(e.at), el("td", {}, el("code", {}, e.who)), el("td", {}, e.action),
    el("td", {}, el("code", {}, e.target)), el("td", { class: "detail" }, auditDetail(e.detail))));
  shown.show(heading("Audit log", el("span", { class: "muted" }, "newest first")),
    items.length ? table(["When", "Who", "Action", "Target", "Detail"], rows, "audit") : el("p", {}, "No entries."),
    el("div", { class: "pager" },
      el("button", { type: "button", disabled: auditOffset === 0, onclick: () => auditPage(auditOffset - AUDIT_PAGE) }, "Newer"),
      el("button", { type: "button", disabled: items.length < AUDIT_PAGE, onclick: () => auditPage(auditOffset + AUDIT_PAGE) }, "Older")));
}

// ---- Routing and sign-in ----------------------------------------------------------------

const SECTIONS = { overview, jobs: jobsFromAddress, messages: messagesFromAddress, levels: levelsFromAddress, accounts, board, switches, quotas, credentials, audit: auditFromAddress, tables };

/** On a phone the section links are one row that scrolls sideways: the current one is
 * scrolled into it (sideways only; the page itself does not move). */
function showInStrip(a) {
  const strip = a.closest("nav");
  if (!strip || strip.scrollWidth <= strip.clientWidth) return;
  const s = strip.getBoundingClientRect();
  const r = a.getBoundingClientRect();
  if (r.left >= s.left && r.right <= s.right) return;
  strip.scrollLeft += r.left - s.left - (s.width - r.width) / 2;
}

// A section's filters live in the address after its name (`#jobs?state=failed&account=alice`):
// a reload shows the same list, and Back brings the filters before. Before, they were kept only
// in the page's memory, and a reload or Back lost them.

/** The filters in the address, as URLSearchParams. */
export function addressFilters() {
  const at = location.hash.indexOf("?");
  return new URLSearchParams(at < 0 ? "" : location.hash.slice(at + 1));
}

/** Puts a section's filters (empty ones left out) into the address as a new history entry
 *  (pushState: no hashchange, the section is not shown again); nothing when they are there. */
export function keepFilters(section, values) {
  // A comma stays a comma (`pages=100,200`): it needs no escape in an address's fragment.
  const q = new URLSearchParams(Object.entries(values).filter(([, v]) => v)).toString().replace(/%2C/gi, ",");
  const hash = `#${section}${q ? `?${q}` : ""}`;
  if (location.hash !== hash) history.pushState(null, "", hash);
}

/** One of `allowed`, else "" (a hand-edited address shows the unfiltered list). */
export function oneOf(value, allowed) {
  return allowed.includes(value) ? value : "";
}

/** After a section link was followed: the section's heading on the screen, with the focus
 *  (a screen reader says where it is now). The page kept its scroll position, so a link
 *  further down (the overview's "Read messages" on a phone) left the new section's heading
 *  above the screen's top. Back to the page's top when the heading is not all in view: on a
 *  phone the section links above it show the section too. */
function showHeading() {
  const h = $("section-title");
  if (!h) return;
  const r = h.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight) window.scrollTo(0, 0);
  h.focus({ preventScroll: true });
}

async function route(followed = false) {
  const name = location.hash.replace(/^#/, "").split("?")[0] || "overview";
  const section = SECTIONS[name] || overview;
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.getAttribute("href") === `#${name}`) {
      a.setAttribute("aria-current", "page");
      showInStrip(a);
    } else a.removeAttribute("aria-current");
  }
  notice("");
  const seq = ++shownSeq;
  await section();
  if (seq !== shownSeq) return;
  if (followed) showHeading();
  document.body.dataset.section = name;
}

window.addEventListener("hashchange", () => { if (csrf) route(true); });
// A link to the section shown now changes no address, so no hashchange: the heading is
// brought back into view all the same (the tap did nothing).
document.addEventListener("click", (e) => {
  const a = e.target instanceof Element ? e.target.closest("a[href^='#']") : null;
  if (a && csrf && a.getAttribute("href") === location.hash) showHeading();
});

async function start() {
  const res = await api("GET", "/api/admin/session");
  if (res.ok && res.body.signedIn) {
    csrf = res.body.csrf;
    via = res.body.via;
    $("who").textContent = `${res.body.who.replace(/^page:/, "")} · ${res.body.via === "admin_token" ? "admin token" : "operator account"}`;
    $("sign-out").hidden = false;
    $("signed-out").hidden = true;
    $("signed-in").hidden = false;
    route();
  } else {
    csrf = null;
    $("who").textContent = "";
    $("sign-out").hidden = true;
    $("signed-in").hidden = true;
    $("signed-out").hidden = false;
  }
}

onSubmit($("account-form"), async (ev) => {
  const f = ev.target;
  const name = f.elements.name.value.trim();
  const password = f.elements.password.value;
  if (!name || !password) { $("account-error").textContent = "Give your name and password."; return; }
  const res = await api("POST", "/api/admin/session", { name, password });
  if (res.ok) { f.reset(); $("account-error").textContent = ""; start(); }
  else $("account-error").textContent = res.body.code === "invalid_credentials" ? "Wrong name or password." : refusal(res);
});

onSubmit($("token-form"), async (ev) => {
  const f = ev.target;
  const operatorName = f.elements.operatorName.value.trim();
  const token = f.elements.token.value.trim();
  if (!operatorName || !token) { $("token-error").textContent = "Give your name (for the audit trail) and the admin token."; return; }
  const res = await api("POST", "/api/admin/session", { token, operatorName });
  if (res.ok) { f.reset(); $("token-error").textContent = ""; start(); }
  else $("token-error").textContent = res.body.code === "invalid_credentials" ? "This is not an active admin token." : refusal(res);
});

onClick($("sign-out"), async () => {
  await api("POST", "/api/admin/session/end");
  csrf = null;
  start();
});

start();
