// The operator's job view (#jobs): the lanes' depth and oldest wait, jobs by state, kind and
// account with their timeline and progress, and cancel (it says what it will do and asks
// once). Account names and reasons are put in as text only (el()).

import { el, api, notice, refusal, confirmIn, table, kv, heading, loading, dateText, stillShown, addressFilters, keepFilters, oneOf } from "./admin.js";

// `job`: one job by its id (from a log line, an agent's message or get_submission), any
// account and state; the others filter the listing.
const filter = { state: "", kind: "", account: "", job: "" };
// The offsets of the pages shown so far, the one shown last: a page with a filter may end
// early (the server reads a bounded part of an account's jobs per page), so "Previous" goes
// back to where the last page started rather than a page size back. They are in the address
// with the filters (`#jobs?state=failed&pages=100,187`: the offsets after the first page),
// so a reload shows the same page and Back the page before; they were kept only in the
// page's memory, and a reload or Back went back to the first page.
let pages = [0];
const PAGE = 100;
// At most this many pages in the address (a hand-edited one with more keeps the last ones).
const PAGES_KEPT = 200;

const STATES = ["", "queued", "running", "succeeded", "failed", "cancelled"];
const KINDS = ["", "playtest", "simulate", "submit", "recheck"];

/** A changed filter: the list from its first page, and the filters into the address (a
 *  reload or Back shows them again: jobsFromAddress). */
function refilter() {
  pages = [0];
  keepFilters("jobs", filter);
  return jobs();
}

/** The filters and the pages shown so far, into the address as a new history entry. */
function keepPage() {
  keepFilters("jobs", { ...filter, pages: pages.slice(1).join(",") });
}

/** The `pages` of an address: offsets that grow, each a whole number above 0; anything
 *  else (a hand-edited address) is the first page. */
function pagesOf(text) {
  const parts = String(text || "").split(",").filter((p) => p !== "");
  const out = [0];
  for (const p of parts) {
    if (!/^[0-9]{1,9}$/.test(p) || Number(p) <= out[out.length - 1]) return [0];
    out.push(Number(p));
  }
  return out.length > PAGES_KEPT ? [0, ...out.slice(-PAGES_KEPT)] : out;
}

/** The job view as the address asks for it (#jobs?state=failed&kind=submit&account=…&job=…),
 *  from the first page. */
export function jobsFromAddress() {
  const q = addressFilters();
  filter.state = oneOf(q.get("state") || "", STATES);
  filter.kind = oneOf(q.get("kind") || "", KINDS);
  filter.account = (q.get("account") || "").trim().slice(0, 200);
  filter.job = (q.get("job") || "").trim().slice(0, 200);
  pages = filter.job ? [0] : pagesOf(q.get("pages"));
  return jobs();
}

function seconds(ms) {
  return ms == null ? "–" : `${(ms / 1000).toFixed(1)} s`;
}

/** A moment in UTC for the job list: the time alone on today's date (UTC), else with the
 *  date; the whole ISO text in its title. Never broken across lines (admin.css). */
function at(ms) {
  if (ms == null) return "–";
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return "–";
  const iso = d.toISOString();
  const today = new Date().toISOString().slice(0, 10);
  const text = iso.slice(0, 10) === today ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  return el("time", { datetime: iso, title: dateText(iso) }, text);
}

const count = (n) => typeof n === "number" ? n.toLocaleString("en-US") : String(n);

function progressText(p) {
  if (!p) return "–";
  const best = p.bestDistance == null ? "?" : p.bestDistance;
  const memory = p.peakMemoryMib == null ? "" : `, peak memory ${count(p.peakMemoryMib)} MiB`;
  return `${p.elapsedSeconds.toFixed(1)} s, ${count(p.statesExplored)} states, best distance ${best}, stage ${p.stage}${memory}`;
}

// What a finished job found: a playtest that found no replay "succeeded" too.
function outcomeText(j) {
  if (!j.outcome) return "";
  return `: ${j.outcome}${j.reason ? ` (${j.reason.replace(/_/g, " ")})` : ""}`;
}

function cancelCell(job) {
  // `actions`: the column stays in view when the wide table scrolls (admin.css); without it
  // the button sat past the right edge of a 1280 px screen, under the scroll.
  if (job.state !== "queued" && job.state !== "running") return el("td", { class: "actions" }, "");
  const holder = el("td", { class: "actions" });
  const what = job.state === "running"
    ? `Stop job ${job.id} (${job.kind} of ${job.account}) now? It is running: its worker stops it within 100 ms, it stays charged, and its caller is told your reason.`
    : `Drop job ${job.id} (${job.kind} of ${job.account})? It has not started: nothing is charged, and its caller is told your reason.`;
  return cancelButton(holder, "Cancel job", what, "Yes, cancel it",
    (reason) => api("POST", `/api/admin/jobs/${encodeURIComponent(job.id)}/cancel`, { reason }),
    (body) => `Job ${job.id} cancelled (${body.outcome}).`);
}

/** A cancel button in `holder`: it asks (`what`) with a reason field, sends the reason
 *  (`send`), says what was done (`done`, from the answer's body) or the refusal, and shows
 *  the job view again. */
function cancelButton(holder, label, what, yesLabel, send, done) {
  const button = el("button", { type: "button", class: "danger" }, label);
  button.addEventListener("click", () => {
    const reason = el("input", { "aria-label": "Reason (the caller reads it)", required: true, maxlength: "500", placeholder: "Reason" });
    confirmIn(holder, what, yesLabel, async () => {
      const text = reason.value.trim();
      if (!text) { notice("Give a reason: the job's caller is told it.", "error"); await jobs(); return; }
      const here = stillShown();
      const res = await send(text);
      if (res.ok) notice(done(res.body), "ok");
      else notice(refusal(res), "error");
      if (here()) await jobs();
    });
    holder.querySelector(".confirm")?.insertBefore(reason, holder.querySelector("[data-confirm]"));
    reason.focus();
  });
  holder.append(button);
  return holder;
}

/** "Cancel all jobs of NAME": every job of the account waiting or running now (REST
 *  `POST /api/admin/jobs/cancel`, each audited as job_cancel), beside its today card when
 *  the list shows some of them waiting or running. */
function cancelAllOf(account, items) {
  const active = items.filter((j) => j.account === account && (j.state === "queued" || j.state === "running"));
  if (active.length === 0) return null;
  const holder = el("div", { class: "bulk" });
  const running = active.filter((j) => j.state === "running").length;
  const what = `Cancel every job of ${account} waiting or running now (${active.length} shown here)? Waiting ones are dropped uncharged, running ones (${running} shown) are stopped within 100 ms and stay charged; each caller is told your reason. The account can call again: block it to stop it for good.`;
  return cancelButton(holder, `Cancel all jobs of ${account}`, what, "Yes, cancel them",
    (reason) => api("POST", "/api/admin/jobs/cancel", { account, reason }),
    (body) => `${body.jobsCancelled.length} job(s) of ${account} cancelled.`);
}

/** A queued job's place: the waiting jobs a slot that may run it takes first (its lane's in
 *  turn order, and for a playtest the referee work that waited longer: a general slot takes
 *  either), or that it is next. */
function placeText(j) {
  if (j.state !== "queued" || j.ahead == null) return null;
  return j.ahead === 0 ? `next in the ${j.lane} lane` : `${j.ahead} ahead in turn`;
}

/** One line of the Times cell: what happened, then when (the two may wrap apart, a time
 *  never). */
function timeLine(what, value) {
  return el("div", { class: "when" }, el("span", { class: "muted" }, `${what} `), value);
}

// Eight columns, not twelve: the job's times, its wait and its worker share one cell, line
// by line, and the lane and trust sit under the kind and the account. At 1366 px the twelve
// broke every date into four lines and scrolled sideways (job_control's
// the_job_list_fits_a_1366_px_screen_without_breaking_a_word).
function jobRow(j) {
  const times = el("td", { class: "times" }, el("div", {},
    timeLine("admitted", at(j.admittedAtMs)),
    j.waitMs != null ? timeLine("waited", el("span", { class: "nowrap" }, seconds(j.waitMs))) : null,
    placeText(j) ? el("div", { class: "when place", title: j.waitingFor || "" }, placeText(j)) : null,
    j.startedAtMs != null ? timeLine("started", at(j.startedAtMs)) : null,
    j.worker ? timeLine("on", el("code", { class: "worker", title: j.worker }, j.worker)) : null,
    j.endedAtMs != null ? timeLine("ended", at(j.endedAtMs)) : null));
  return el("tr", {},
    el("th", { scope: "row" }, el("code", { class: "id" }, j.id),
      j.requestId ? el("div", { class: "muted request", title: "The HTTP request that admitted it (X-Request-Id), as in the logs" }, "request ", el("code", { class: "request-id" }, j.requestId)) : null),
    el("td", {}, j.kind, j.lane ? el("div", { class: "muted" }, `${j.lane} lane`) : null),
    el("td", {}, el("span", { class: "name" }, j.account), el("div", { class: "muted" }, `trust ${j.trust}`)),
    el("td", {}, j.state + (j.code && j.code !== j.state ? ` (${j.code})` : "") + outcomeText(j),
      j.message ? el("div", { class: "muted" }, j.message) : null),
    el("td", { class: "nowrap" }, j.state === "queued" ? `${j.reservedSeconds} s reserved` : `${j.chargedSeconds} s`),
    times, el("td", {}, progressText(j.progress)),
    cancelCell(j));
}

// Each field has a visible label, as the levels section's (a placeholder alone was gone once
// something was typed: "anna" stood in a field nothing named).
function filters() {
  const select = (name, options) => el("label", {}, `${name[0].toUpperCase()}${name.slice(1)} `,
    el("select", { name, onchange: (e) => { filter[name] = e.target.value; refilter(); } },
      options.map((o) => el("option", { value: o, selected: filter[name] === o }, o || "any"))));
  const account = el("input", { name: "account", placeholder: "any", value: filter.account, autocomplete: "off", spellcheck: "false" });
  const job = el("input", { name: "job", placeholder: "job_…", value: filter.job, autocomplete: "off", spellcheck: "false" });
  const form = el("form", { class: "filters" }, select("state", STATES),
    select("kind", KINDS), el("label", {}, "Account ", account), el("label", {}, "Job id ", job), el("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (e) => { e.preventDefault(); filter.account = account.value.trim(); filter.job = job.value.trim(); refilter(); });
  return form;
}

function accountToday(t) {
  const kinds = Object.entries(t.jobs).map(([kind, n]) => `${n} ${kind}`).join(", ");
  return el("div", { class: "card" }, el("h2", {}, `${t.account} today (UTC)`),
    kv([["Jobs", kinds || "none"], ["Seconds charged", t.secondsCharged], ["Seconds reserved (waiting)", t.secondsReserved]]));
}

// Each render of the list is numbered: of two quick filter changes, the first one's answer
// arriving last must not show the list of a filter that is no longer selected.
let latest = 0;

// A view that shows a job waiting or running updates itself: it is read again after
// POLL_FIRST_MS, then 1.5 times later each time nothing moved on (at most POLL_MAX_MS), back
// to POLL_FIRST_MS when a job's state changed, and it stops once no job shown waits or runs
// (but the list of the jobs waiting and running now, which goes on), or the operator moved
// to another section. A refresh replaces only the queue card and the
// list, in one step (no "Loading…" in between, the filters and what is typed in them stay);
// it waits while a confirmation is open, focus is in the list, or the tab is hidden.
const POLL_FIRST_MS = 2000;
const POLL_MAX_MS = 15000;
const poll = { timer: null, delay: POLL_FIRST_MS, states: "" };

function stopPolling() {
  clearTimeout(poll.timer);
  poll.timer = null;
}

function schedule(items, here) {
  stopPolling();
  const active = items.some((j) => j.state === "queued" || j.state === "running");
  // The list of the jobs waiting and running now (no account, no job id, no final state)
  // is read again even while it shows none: jobs that arrive belong in it. It was left
  // alone once empty, and an operator watching an idle queue saw no flood begin.
  const live = !filter.job && !filter.account && (filter.state === "" || filter.state === "queued" || filter.state === "running");
  const states = items.map((j) => `${j.id}:${j.state}`).join(" ");
  poll.delay = states === poll.states ? Math.min(POLL_MAX_MS, Math.round(poll.delay * 1.5)) : POLL_FIRST_MS;
  poll.states = states;
  if (!active && !live) return;
  const wait = poll.delay;
  poll.timer = setTimeout(function tick() {
    poll.timer = null;
    if (!here()) return;
    const live = document.getElementById("job-live");
    const busy = document.hidden || !live || live.querySelector(".confirm") || live.contains(document.activeElement);
    if (busy) { poll.timer = setTimeout(tick, wait); return; }
    jobs({ quiet: true });
  }, wait);
}

/** Renders the job view; `quiet`: a refresh of the list in place (schedule()). */
export async function jobs({ quiet = false } = {}) {
  const mine = ++latest;
  if (!quiet) {
    stopPolling();
    poll.states = "";
    poll.delay = POLL_FIRST_MS;
  }
  const here = stillShown();
  const shown = quiet ? null : loading("Jobs");
  const offset = pages[pages.length - 1];
  const q = new URLSearchParams([...Object.entries(filter).filter(([k, v]) => v && k !== "job"), ["offset", String(offset)], ["limit", String(PAGE)]]);
  const [queue, list] = await Promise.all([api("GET", "/api/admin/queue"),
    filter.job ? api("GET", `/api/admin/jobs/${encodeURIComponent(filter.job)}`) : api("GET", `/api/admin/jobs?${q}`)]);
  if (mine !== latest || !here()) return;
  // A refresh that fails leaves the list as it was and tries again later.
  if (quiet && (!queue.ok || (!list.ok && !(filter.job && list.status === 404)))) {
    poll.timer = setTimeout(() => { if (here()) jobs({ quiet: true }); }, POLL_MAX_MS);
    return;
  }
  if (!queue.ok) return shown.failed(queue);
  // An id nothing has is said above an empty list, with the filters kept to type another.
  const missing = filter.job && list.status === 404 ? refusal(list) : null;
  if (!list.ok && !missing) return shown.failed(list);
  const lanes = queue.body.lanes || [];
  const { items, nextOffset } = filter.job ? { items: missing ? [] : [list.body], nextOffset: null } : list.body;
  const pager = el("div", { class: "pager" },
    el("button", { type: "button", disabled: pages.length === 1, onclick: () => { pages.pop(); keepPage(); return jobs(); } }, "Previous"),
    el("button", { type: "button", disabled: nextOffset == null, onclick: () => { pages.push(nextOffset); keepPage(); return jobs(); } }, "Next"));
  const everyAccount = !filter.account && (filter.state === "failed" || filter.state === "cancelled");
  // One job by its id: the id stands in the field above and in the row, so the line says
  // what is shown and the way back, not the id a third time ("Job job_….").
  const scope = filter.job ? ["One job by its id, whatever its account and state. ",
    el("a", { href: "#jobs", class: "all-jobs" }, "All jobs waiting and running")]
    : filter.account ? `Recent jobs of ${filter.account}.`
    : everyAccount ? `The ${filter.state} jobs of every account, newest end first.`
    : "Jobs waiting and running now (choose failed or cancelled for those of every account, give an account for all its recent ones, or a job's id).";
  const slots = queue.body.slots;
  // Why jobs wait: no worker (nothing runs them until one starts), or every slot busy.
  const workers = !slots ? [] : [["Workers", slots.workers === 0
    ? "none live: waiting jobs wait until a worker starts"
    : `${slots.workers} live, ${slots.general} general and ${slots.referee} referee slots`]];
  const queueCard = el("div", { class: "card" }, el("h2", {}, "Queue"),
    kv([...lanes.map((l) => [`${l.lane} lane`, `${l.waiting} waiting, oldest ${seconds(l.oldestWaitMs)}`]),
      ["Running", queue.body.running], ...workers]));
  const bulk = !filter.job && filter.account ? cancelAllOf(filter.account, items) : null;
  const live = [
    ...(!filter.job && list.body.accountToday ? [accountToday(list.body.accountToday)] : []),
    ...(bulk ? [bulk] : []),
    el("p", { class: "muted" }, scope),
    missing ? el("p", { class: "error-text" }, missing) :
    items.length === 0 ? el("p", { class: "muted" }, nextOffset == null ? "No jobs." : "None on this page: the server looked through part of the jobs; Next looks further.") :
      table(["Job", "Kind", "Account", "State", "Charged", "Times (UTC)", "Progress", ""],
        items.map(jobRow), "jobs"),
    ...(pages.length > 1 || nextOffset != null ? [pager] : [])];
  const box = document.getElementById("job-live");
  const queueBox = document.getElementById("job-queue");
  if (quiet) {
    if (!box || !queueBox) return;
    queueBox.replaceChildren(queueCard);
    box.replaceChildren(...live);
  } else shown.show(heading("Jobs"), el("div", { id: "job-queue" }, queueCard), filters(), el("div", { id: "job-live" }, live));
  schedule(items, here);
}
