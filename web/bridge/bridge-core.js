// Pure logic of the browser bridge: no DOM, no globals, every side effect
// (HTTP, postMessage to the game, timers) is injected. bridge.js wires this
// to the page; the node tests in web/test/ drive it with fakes.
//
// Contract: RCADIA Agent Protocol v2, sections 2 (messages), 3 (bridge API)
// and 9 (legacy mode).

export const SYSTEM_PLAYER = "__system__";

// Section 3: at most 100 ops per /ops request.
export const MAX_OPS_PER_REQUEST = 100;
// A request body is at most 1 MiB (an op at most 64 KiB): a batch of ops is cut before its
// JSON passes this, with room for the request's own fields. 100 large ops in one batch were
// refused whole (413), and their game's moves and end never arrived.
export const MAX_OPS_BYTES_PER_REQUEST = 960 * 1024;
// Section 3: hosts collect outbound game messages for ~10 ms.
export const BATCH_DELAY_MS = 10;
// Section 3: long-polls wait at most 25 s.
export const LONG_POLL_WAIT_S = 25;

/**
 * @typedef {{ type: string, data?: any }} Message
 * @typedef {{ op: string, [k: string]: any }} Op
 * @typedef {{ seq: number, type: string, [k: string]: any }} Entry
 */

/** An HTTP error from the backend; `status` 0 means the request never got an answer. */
export class ApiError extends Error {
  /**
   * @param {number} status @param {string} message @param {string} [code]
   * @param {number} [retryAfterMs] what the server's Retry-After asked for, if anything
   */
  constructor(status, message, code, retryAfterMs) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The wait a `Retry-After` header asks for, in milliseconds: delay-seconds, or an HTTP date
 * (RFC 9110 allows it, and proxies send it). A date counts from the answer's own `Date` when
 * it has a readable one (both are the server's clock; the client's may be off by minutes),
 * else from `nowMs`. `undefined` (the client's own backoff) when absent, unreadable, or a
 * date that is not in the future.
 * @param {string|null|undefined} header @param {string|null|undefined} [dateHeader] @param {number} [nowMs]
 */
export function retryAfterMs(header, dateHeader, nowMs = Date.now()) {
  if (typeof header !== "string") return undefined;
  const v = header.trim();
  if (/^[0-9]+$/.test(v)) return Number(v) * 1000;
  const at = httpDateMs(v);
  if (at === undefined) return undefined;
  const from = httpDateMs(typeof dateHeader === "string" ? dateHeader.trim() : "") ?? nowMs;
  return at > from ? at - from : undefined;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const HTTP_DATES = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  [/^[A-Z][a-z]{2}, (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/, (m) => [m[3], m[2], m[1], m[4], m[5], m[6]]],
  // RFC 850 (obsolete): Sunday, 06-Nov-94 08:49:37 GMT
  [/^[A-Z][a-z]+, (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/, (m) => [m[3], m[2], m[1], m[4], m[5], m[6]]],
  // asctime (obsolete): Sun Nov  6 08:49:37 1994
  [/^[A-Z][a-z]{2} ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/, (m) => [m[6], m[1], m[2], m[3], m[4], m[5]]],
];

/** An HTTP date (the three forms RFC 9110 says a recipient reads) as epoch ms, else `undefined`.
 * Strict on purpose: `Date.parse` reads other text differently from browser to browser. */
function httpDateMs(text) {
  for (const [re, parts] of HTTP_DATES) {
    const m = re.exec(text);
    if (!m) continue;
    const [y, mon, d, h, min, s] = parts(m);
    let year = Number(y);
    // RFC 850's two-digit year: 70-99 is 19xx, the rest 20xx (as Rust's httpdate reads it).
    if (y.length === 2) year += year >= 70 ? 1900 : 2000;
    const month = MONTHS.indexOf(mon);
    const day = Number(d.trim());
    if (month < 0 || day < 1 || day > 31 || Number(h) > 23 || Number(min) > 59 || Number(s) > 60) return undefined;
    const ms = Date.UTC(year, month, day, Number(h), Number(min), Math.min(Number(s), 59));
    // Date.UTC rolls 31 Feb over into March; such a date is unreadable, not another day.
    return new Date(ms).getUTCDate() === day ? ms : undefined;
  }
  return undefined;
}

/** A session whose config has no sdkVersion is a v1 game: the backend runs it in legacy mode. */
export function isLegacyConfig(config) {
  return !config || config.sdkVersion === undefined || config.sdkVersion === null;
}

/**
 * Classify a game -> host message.
 * @param {Message} msg
 * @returns {{kind: "op", op: Op} | {kind: "rematch"} | {kind: "configure", config: object} | null}
 */
export function classifyGameMessage(msg) {
  if (!msg || typeof msg !== "object" || typeof msg.type !== "string") return null;
  const d = msg.data && typeof msg.data === "object" ? msg.data : {};
  switch (msg.type) {
    case "AGENT_CONFIGURE":
      return { kind: "configure", config: d };
    case "AGENT_STATE":
      return { kind: "op", op: { op: "state", state: d.state ?? null } };
    case "AGENT_OBSERVATION":
      return { kind: "op", op: { op: "observation", playerId: d.playerId, observation: d.observation ?? null } };
    case "AGENT_LEGAL_ACTIONS":
      return { kind: "op", op: { op: "legal_actions", playerId: d.playerId, actions: Array.isArray(d.actions) ? d.actions : [] } };
    case "AGENT_ACTION_REJECTED": {
      const op = { op: "reject", playerId: d.playerId, reason: d.reason ?? "rejected" };
      if (d.actionId !== undefined && d.actionId !== null) op.actionId = d.actionId;
      return { kind: "op", op };
    }
    case "AGENT_GAME_OVER":
      return { kind: "op", op: { op: "end", result: d.result ?? null } };
    case "AGENT_REMATCH":
      return { kind: "rematch" };
    default:
      return null;
  }
}

/**
 * Turn one pending-actions entry into the host -> game message.
 * @param {Entry} entry
 * @param {{ sessionId: string, round?: number, legacy?: boolean, players?: Array<any> }} ctx
 *   `players`: the session's seats as the backend listed them (their `asName`s go to the
 *   game with `game_start`)
 * @returns {Message|null} null for entries the game must not see
 */
export function messageForEntry(entry, ctx) {
  if (!entry || typeof entry !== "object") return null;
  switch (entry.type) {
    case "action":
      // Also covers legacy mode, where the backend already queues v1-shaped
      // platform events as actions from "__system__": they pass through as is.
      return { type: "AGENT_ACTION", data: { playerId: entry.playerId, action: entry.action, actionId: entry.actionId } };
    case "timeout":
      if (ctx.legacy) {
        // A v1 SDK only understands actions; v1 hosts delivered timeouts as a
        // "__timeout__" action from the player who ran out of time.
        return {
          type: "AGENT_ACTION",
          data: { playerId: entry.playerId, action: { type: "__timeout__", strike: entry.strike, maxStrikes: entry.maxStrikes, final: entry.final } },
        };
      }
      return {
        type: "AGENT_TIMEOUT",
        data: { playerId: entry.playerId, strike: entry.strike, maxStrikes: entry.maxStrikes ?? null, final: entry.final === true },
      };
    case "system":
      if (entry.event === "game_start") {
        const data = { sessionId: ctx.sessionId, players: playerIds(entry.players), round: entry.round ?? ctx.round ?? 1 };
        // Not in the contract's message, and harmless to a game that ignores it: the seats'
        // names, so a game can show people names instead of ids.
        const names = namesOf(ctx.players);
        if (Object.keys(names).length) data.names = names;
        return { type: "AGENT_GAME_START", data };
      }
      if (entry.event === "session_end") {
        return { type: "AGENT_SESSION_END", data: { sessionId: ctx.sessionId, result: entry.result ?? null, reason: entry.reason } };
      }
      return null;
    default:
      return null;
  }
}

/**
 * Games get playerIds in seat order; accept player objects too, so a backend
 * that sends `{playerId, seat, ...}` here cannot hand a game the wrong shape.
 * @param {Array<string|{playerId: string}>|undefined} players
 * @returns {string[]}
 */
/**
 * `{ playerId: asName }` of the seats that have a name.
 * @param {Array<any>|undefined} players
 * @returns {Record<string, string>}
 */
export function namesOf(players) {
  const out = {};
  for (const p of Array.isArray(players) ? players : []) {
    if (p && typeof p === "object" && typeof p.playerId === "string" && typeof p.asName === "string" && p.asName) {
      out[p.playerId] = p.asName;
    }
  }
  return out;
}

/** A player's name for people: its `asName`, else its id. */
export function nameOf(players, playerId) {
  return namesOf(players)[playerId] || playerId || "?";
}

/**
 * One line of the bridge's platform-events panel for an entry the game was given.
 * @param {Entry} entry
 * @param {Array<any>} players the seats (for names)
 */
export function describeEntry(entry, players) {
  const who = (id) => nameOf(players, id);
  switch (entry && entry.type) {
    case "action":
      if (entry.playerId === "__system__" && entry.action && entry.action.type === "__game_start__") {
        return `game start: ${(entry.action.players || []).map(who).join(", ")}`;
      }
      return `move from ${who(entry.playerId)}`;
    case "timeout":
      return `${who(entry.playerId)} ran out of time: strike ${entry.strike}${entry.maxStrikes ? ` of ${entry.maxStrikes}` : ""}${entry.final ? " (final)" : ""}`;
    case "system":
      if (entry.event === "game_start") return `round ${entry.round ?? 1} starts: ${playerIds(entry.players).map(who).join(" vs ")}`;
      if (entry.event === "session_end") return `the platform ended the game (${entry.reason}): ${describeResult(entry.result, players)}`;
      return `platform event ${entry.event}`;
    default:
      return "unknown entry";
  }
}

export function playerIds(players) {
  if (!Array.isArray(players)) return [];
  return players.map((p) => (p && typeof p === "object" ? p.playerId : p));
}

/**
 * Tracks the highest processed seq of one session. The backend keeps entries
 * queued until a later poll acknowledges them with `after`, so an entry can be
 * returned twice (a poll whose answer was lost); this drops the repeats.
 */
export class SeqTracker {
  constructor() { this.after = 0; }

  /**
   * The entries not processed yet, in seq order; advances `after` past them.
   * @param {Entry[]} entries
   */
  take(entries) {
    if (!Array.isArray(entries)) return [];
    const fresh = entries
      .filter((e) => e && typeof e.seq === "number" && e.seq > this.after)
      .sort((a, b) => a.seq - b.seq);
    if (fresh.length) this.after = fresh[fresh.length - 1].seq;
    return fresh;
  }

  reset() { this.after = 0; }
}

/**
 * Ordered outbound queue. Ops are collected for `delayMs` and sent as one
 * request; only one request is in flight at a time, so the backend applies
 * ops in the order the game sent them. Ops are grouped by `key` (the session
 * id they belong to) so a session switch never mixes sessions in one request.
 * Tasks (for example the rematch call) run in queue order between batches,
 * so a rematch is only requested after the preceding game-over op was sent.
 */
const utf8 = new TextEncoder();

/** The bytes of `value` as JSON (UTF-8), as it goes into a request body. */
function jsonBytes(value) {
  try { return utf8.encode(JSON.stringify(value) ?? "null").length; } catch { return 0; }
}

export class OpsOutbox {
  /**
   * @param {{
   *   send: (key: string, ops: Op[]) => Promise<any>,
   *   onError?: (err: any, ops: Op[]|null) => void,
   *   delayMs?: number, maxOps?: number, maxBytes?: number,
   *   setTimer?: (fn: () => void, ms: number) => any,
   * }} opts
   */
  constructor({ send, onError = () => {}, delayMs = BATCH_DELAY_MS, maxOps = MAX_OPS_PER_REQUEST, maxBytes = MAX_OPS_BYTES_PER_REQUEST, setTimer = (fn, ms) => setTimeout(fn, ms) }) {
    this._send = send;
    this._onError = onError;
    this._delayMs = delayMs;
    this._maxOps = maxOps;
    this._maxBytes = maxBytes;
    this._setTimer = setTimer;
    /** @type {Array<{kind: "op", op: Op, key: string} | {kind: "task", fn: () => any}>} */
    this._queue = [];
    this._timer = null;
    this._running = false;
    this._idleWaiters = [];
  }

  /** @param {Op} op @param {string} key */
  push(op, key) {
    this._queue.push({ kind: "op", op, key });
    this._schedule();
  }

  /** @param {() => any} fn */
  pushTask(fn) {
    this._queue.push({ kind: "task", fn });
    this._schedule();
  }

  get pending() { return this._queue.length; }
  get busy() { return this._running || this._timer !== null || this._queue.length > 0; }

  /** Resolves when everything queued so far has been sent. */
  idle() {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this._idleWaiters.push(resolve));
  }

  /** Remove and return the queued ops not sent yet (for the unload path). */
  drain() {
    const ops = this._queue.filter((i) => i.kind === "op");
    this._queue = [];
    return ops;
  }

  _report(err, ops) {
    // A throwing error handler must not stop the queue: later ops still matter.
    try { this._onError(err, ops); } catch { /* nothing sensible left to do */ }
  }

  _schedule() {
    // While a request is in flight the running loop picks new items up itself.
    if (this._running || this._timer !== null) return;
    this._timer = this._setTimer(() => { this._timer = null; this._run(); }, this._delayMs);
  }

  async _run() {
    this._running = true;
    try {
      while (this._queue.length) {
        const head = this._queue[0];
        if (head.kind === "task") {
          this._queue.shift();
          try { await head.fn(); } catch (err) { this._report(err, null); }
          continue;
        }
        const batch = [];
        let bytes = 0;
        while (batch.length < this._maxOps && this._queue.length) {
          const item = this._queue[0];
          if (item.kind !== "op" || item.key !== head.key) break;
          // Every batch takes its first op, whatever its size (the server judges an op
          // that is too large on its own); later ones only while the batch stays small.
          const size = jsonBytes(item.op) + 1;
          if (batch.length > 0 && bytes + size > this._maxBytes) break;
          bytes += size;
          batch.push(item.op);
          this._queue.shift();
        }
        try { await this._send(head.key, batch); } catch (err) { this._report(err, batch); }
      }
    } finally {
      this._running = false;
    }
    if (!this.busy) {
      const waiters = this._idleWaiters;
      this._idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}

/** Whether the page offers "New table": the series ended without a next round, the session
 * was lost, or creating one failed. */
export function newTableOffered(view) {
  return (view.status === "finished" && !view.nextSessionId) || view.status === "lost" || view.status === "failed";
}

/** The op the bridge sends when its page goes away (section 3: no rematch follows). */
export function hostLeftOp() {
  return { op: "end", result: { winner: null, reason: "host_left" }, reason: "host_left" };
}

// The end reasons after which the platform opens no next round: its host went away, an
// operator ended the table, or a player left (Session::auto_rematch_due in
// sessions/src/machine/ending.rs; each is also the result's `reason` when the platform ends).
const NO_REMATCH_REASONS = new Set(["host_disconnected", "host_left", "ended_by_operator", "left"]);

/**
 * Whether the platform opens the next round of a finished game by itself: the host's mirror
 * of Session::auto_rematch_due. A host asks for a rematch of its own only where this holds,
 * so it never opens a round the platform withheld on purpose. (A player who left the
 * finished game afterwards is not in the host's view; /rematch leaves them out.)
 * @param {object|null} config the game's AGENT_CONFIGURE
 * @param {{result?: any, players?: Array<any>}} view the finished session
 */
export function autoRematchDue(config, { result, players }) {
  if (!config || config.autoRematch !== true || isLegacyConfig(config)) return false;
  const reason = result && typeof result === "object" ? result.reason : null;
  if (NO_REMATCH_REASONS.has(reason)) return false;
  const min = Number.isInteger(config.minPlayers) ? config.minPlayers : 2;
  return Array.isArray(players) && players.length >= min;
}

/**
 * Resolve the `?game=` parameter against the bridge's own URL. Only http(s)
 * URLs are accepted so a crafted link cannot load javascript: or data: URLs.
 * @param {string|null} param
 * @param {string} base the bridge page's location.href
 * @returns {URL|null}
 */
export function resolveGameUrl(param, base) {
  if (!param) return null;
  let url;
  try { url = new URL(param, base); } catch { return null; }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return url;
}

/**
 * Whether hosting `gameUrl` waits for a click: a game from another origin that this tab's
 * person did not choose on this page (the "Host this game" form, remembered as `chosen`).
 * The tab keeps its JWT across navigations, so without this any site could send the tab to
 * `/bridge/?game=<its own page>` and have the person host that page's game under their
 * name at once: a table listed as theirs, run by a page they never picked.
 * @param {URL} gameUrl
 * @param {string} pageOrigin the bridge page's location.origin
 * @param {string|null} chosen the game URL (href) last submitted in this tab's form
 */
export function needsConsent(gameUrl, pageOrigin, chosen) {
  return gameUrl.origin !== pageOrigin && gameUrl.href !== chosen;
}

/**
 * A game id from its URL: "/games/chess/" -> "chess", "/games/rps/index.html" -> "rps".
 * @param {URL} url
 */
export function gameIdFromUrl(url) {
  const parts = url.pathname.split("/").filter((p) => p && !/\.html?$/i.test(p));
  return parts.length ? parts[parts.length - 1] : url.hostname;
}

/** "chess" -> "Chess", "tic-tac-toe" -> "Tic Tac Toe". */
export function titleFromGameId(id) {
  return String(id).split(/[-_\s]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join(" ");
}

/**
 * The turn clock as a host reads it: "none", "42 s left, then a strike" (the player to move
 * gets a strike when it runs out) or "ran out 10 s ago".
 * @param {string|null|undefined} deadline ISO time
 * @param {number} nowMs
 */
export function describeDeadline(deadline, nowMs) {
  if (!deadline) return "none";
  const t = Date.parse(deadline);
  if (Number.isNaN(t)) return "none";
  const s = Math.round((t - nowMs) / 1000);
  const span = (n) => (n >= 60 ? `${Math.floor(n / 60)} min ${n % 60} s` : `${n} s`);
  return s >= 0 ? `${span(s)} left, then a strike` : `ran out ${span(-s)} ago`;
}

/**
 * One line per player: "seat 0: Fish (p_1)". Accepts playerIds or player objects.
 * @param {Array<string|{playerId: string, seat?: number, asName?: string, ready?: boolean}>} players
 */
export function describePlayers(players) {
  if (!Array.isArray(players) || players.length === 0) return "none yet";
  return players.map((p, i) => {
    if (typeof p === "string") return `seat ${i}: ${p}`;
    if (!p || typeof p !== "object") return `seat ${i}: ?`; // a server's odd entry
    const seat = p.seat ?? i;
    const name = p.asName ? p.asName : String(p.playerId);
    return `seat ${seat}: ${name}${p.ready === false ? " (not ready)" : ""}`;
  }).join("\n");
}

/** "none" or a one-line summary of a result object; `players` turns the winner's id into a name. */
export function describeResult(result, players = []) {
  if (!result) return "none";
  if (typeof result !== "object") return String(result);
  const winner = result.winner === null || result.winner === undefined ? "draw / no winner" : `winner ${nameOf(players, result.winner)}`;
  return result.reason ? `${winner} (${result.reason})` : winner;
}

/** Retry delay after the n-th consecutive failure (1-based): 1 s, 2 s, 4 s ... capped at 10 s. */
export function backoffMs(attempt) {
  return Math.min(10_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

// A Retry-After longer than this is not waited out in one sleep: the retry asks again then.
export const RETRY_WAIT_MAX_MS = 60_000;

/** The wait before retrying after `err`, the n-th failure in a row: the backoff, or longer
 * when the server's Retry-After asked for more (a 503 while its store restarts, a 429). */
export function retryDelayMs(attempt, err) {
  const asked = err && Number.isFinite(err.retryAfterMs) ? err.retryAfterMs : 0;
  return Math.min(RETRY_WAIT_MAX_MS, Math.max(asked, backoffMs(attempt)));
}

/**
 * Words for a create the server refused with 429 (a person's or a network's table bound, a
 * burst limit): the server's reason as it gave it, and when a table may be opened again,
 * from its Retry-After. Shown as text.
 * @param {ApiError} err @param {number} nowMs
 */
export function createRefusedText(err, nowMs) {
  const reason = String(err && err.message ? err.message : "too many requests").replace(/[.\s]+$/, "");
  const ms = err && Number.isFinite(err.retryAfterMs) ? err.retryAfterMs : undefined;
  const said = `The server opens no new table now: ${reason}.`;
  if (ms === undefined) return said;
  if (ms < 60_000) return `${said} It may open one again in ${Math.max(1, Math.ceil(ms / 1000))} s.`;
  const at = new Date(nowMs + ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${said} You can open one again in ${Math.ceil(ms / 60_000)} min, at ${two(at.getHours())}:${two(at.getMinutes())}.`;
}

/** True when the error means the session no longer exists on the backend. */
export function isSessionLost(err) {
  return err instanceof ApiError && (err.status === 404 || err.status === 410);
}

/** True when the error means our credentials are not (or no longer) good. */
export function isAuthError(err) {
  return err instanceof ApiError && (err.status === 401 || err.status === 403);
}

/** Network failures and server errors are worth retrying; other 4xx are not. */
export function isRetryable(err) {
  if (!(err instanceof ApiError)) return true;
  return err.status === 0 || err.status === 429 || err.status >= 500;
}
