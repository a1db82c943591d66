// The bridge's session lifecycle, DOM-free: create the session when the game
// configures, relay the game's messages as ordered /ops batches, long-poll
// pending-actions and deliver entries to the game, follow rematches, recover
// from a lost session. bridge.js supplies the HTTP client and the iframe.

import {
  ApiError, OpsOutbox, SeqTracker, LONG_POLL_WAIT_S,
  classifyGameMessage, messageForEntry, isLegacyConfig, hostLeftOp, autoRematchDue,
  retryDelayMs, isSessionLost, isAuthError, isRetryable, playerIds,
  createRefusedText, RETRY_WAIT_MAX_MS,
} from "./bridge-core.js";

/**
 * @typedef {Object} BridgeApi every method rejects with ApiError on failure
 * @property {(body: {config: object, gameId?: string, gameTitle?: string, idempotencyKey?: string}) => Promise<any>} createSession
 * @property {(sessionId: string, ops: object[]) => Promise<any>} ops
 * @property {(sessionId: string, after: number, wait: number) => Promise<any>} pendingActions
 * @property {(sessionId: string) => Promise<any>} rematch
 * @property {(sessionId: string, since: number|undefined, wait: number) => Promise<any>} publicView
 * @property {(sessionId: string, ops: object[]) => Promise<void>} endKeepalive fire-and-forget, survives page unload; settles once sent
 */

/**
 * What the page shows. Every field is plain data; the page renders it with textContent.
 * @typedef {Object} HostView
 * @property {string|null} sessionId
 * @property {number|null} round
 * @property {string|null} seriesId
 * @property {string} status "idle" | "creating" | "failed" | "waiting" | "active" | "finished" | "lost" | "left"
 * @property {Array<any>} players playerIds or player objects, in seat order
 * @property {number|null} turn
 * @property {string|null} deadline
 * @property {number[]} onTurnSeats
 * @property {*} result
 * @property {string|null} nextSessionId
 * @property {boolean} legacy
 * @property {string|null} error the last problem worth showing, cleared on success
 */

// Ops a game sends before its session exists (a setState right after
// construct, say) are kept and sent once the session is created. Bounded so
// a game that never gets a session cannot grow memory.
const PRE_SESSION_OPS_LIMIT = 100;

// If the backend answers a long-poll this fast without anything new, wait a
// little before the next one so a misbehaving server cannot make us spin.
const FAST_EMPTY_POLL_MS = 250;
const FAST_EMPTY_POLL_PAUSE_MS = 1000;

// How long a batch of ops is retried while the backend says "not now" (503 while its store
// restarts, 429, no answer) before it is dropped. Later batches wait behind it, so the
// game's ops arrive in the order it sent them; after three tries a batch was dropped and
// the next sent, and a game whose `end` or `legal_actions` was lost in a short outage
// stalled until a player forfeited. Every retry waits at least the server's Retry-After.
const OPS_RETRY_FOR_MS = 120_000;

// How often, and how far apart, a finished autoRematch session is polled again for its
// next round before the series counts as over.
const REMATCH_LINGER_POLLS = 10;
const REMATCH_LINGER_MS = 300;
const CREATE_ATTEMPTS = 5;

export class HostSession {
  /**
   * @param {{
   *   api: BridgeApi,
   *   postToGame: (msg: {type: string, data: any}) => void,
   *   gameId?: string, gameTitle?: string,
   *   onChange?: (view: HostView) => void,
   *   onAuthError?: (err: any) => void,
   *   onEntry?: (entry: object, players: Array<any>) => void, each platform entry relayed to the game
   *   log?: (...args: any[]) => void,
   *   sleep?: (ms: number) => Promise<void>,
   *   now?: () => number,
   *   setTimer?: (fn: () => void, ms: number) => any,
   * }} opts
   */
  constructor({ api, postToGame, gameId, gameTitle, onChange = () => {}, onAuthError = () => {}, onEntry = () => {}, log = () => {},
    sleep = (ms) => new Promise((r) => setTimeout(r, ms)), now = () => Date.now(), setTimer }) {
    this.api = api;
    this._postToGame = postToGame;
    this._gameId = gameId;
    this._gameTitle = gameTitle;
    this._onChange = onChange;
    this._onAuthError = onAuthError;
    this._onEntry = onEntry;
    this._log = log;
    this._sleep = sleep;
    this._now = now;

    /** @type {HostView} */
    this.view = {
      sessionId: null, round: null, seriesId: null, status: "idle", players: [],
      turn: null, deadline: null, onTurnSeats: [], result: null, nextSessionId: null,
      legacy: false, error: null,
    };
    this._config = null;
    this._creating = false;
    this._wantTable = true;      // false after the host left or the user stopped
    this._stopped = false;
    this._gen = 0;               // bumped on every session change; stale loops see it and exit
    this._seq = new SeqTracker();
    this._preSessionOps = [];
    this._outbox = new OpsOutbox({
      send: (sid, ops) => this._sendOps(sid, ops),
      onError: (err) => this._log("outbound failed", err),
      ...(setTimer ? { setTimer } : {}),
    });
  }

  get sessionId() { return this.view.sessionId; }
  /** The game's latest AGENT_CONFIGURE (null before it sent one). */
  get config() { return this._config; }
  get outbox() { return this._outbox; }

  /** Feed one message that the game iframe posted. */
  handleGameMessage(msg) {
    if (this._stopped) return;
    const c = classifyGameMessage(msg);
    if (!c) return;
    if (c.kind === "configure") {
      this._config = c.config;
      // A session's config is fixed at creation; a repeat (the game re-sent it
      // on its own, or answered our request) only matters when we need a table.
      if (!this.view.sessionId && !this._creating && this._wantTable) this._create();
      else if (this.view.sessionId && (this.view.status === "waiting" || this.view.status === "active")) {
        // The game reloaded inside a live session: tell it which session it is
        // in again. A waiting table recovers fully (game_start comes later);
        // a game in progress cannot be restored, but its SDK is consistent.
        this._post("AGENT_SESSION_START", { sessionId: this.view.sessionId, round: this.view.round, players: playerIds(this.view.players) });
      }
      return;
    }
    if (c.kind === "rematch") {
      this._outbox.pushTask(() => this._rematch(this.view.sessionId));
      return;
    }
    const sid = this.view.sessionId;
    if (sid) {
      this._outbox.push(c.op, sid);
    } else {
      this._preSessionOps.push(c.op);
      if (this._preSessionOps.length > PRE_SESSION_OPS_LIMIT) this._preSessionOps.shift();
    }
  }

  /** Ask the game for its configuration (used when the game loaded before we listened). */
  requestConfigure() {
    this._preSessionOps = []; // whatever the game sent before is about an older table
    this._post("AGENT_REQUEST_CONFIGURE", {});
  }

  /** Open a fresh table after a series ended without a rematch. */
  newTable() {
    if (this._stopped || this._creating || (this.view.sessionId && this.view.status !== "finished")) return;
    this._wantTable = true;
    this._gen++;
    this._setView({ sessionId: null, status: "idle", result: null, nextSessionId: null });
    if (this._config) this._create(); else this.requestConfigure();
  }

  /**
   * The page is going away: end a live session with reason host_left (no
   * rematch follows) through a request that survives unload, and stop. The
   * promise settles once that request is done (a sign-out waits for it).
   */
  hostLeft() {
    const sid = this.view.sessionId;
    const live = sid && (this.view.status === "waiting" || this.view.status === "active");
    this.stop();
    if (!live) return Promise.resolve();
    const sent = this.api.endKeepalive(sid, [hostLeftOp()]);
    this._setView({ status: "left" });
    return Promise.resolve(sent);
  }

  /** Stop every loop; nothing more is sent or delivered. */
  stop() {
    this._stopped = true;
    this._wantTable = false;
    this._gen++;
  }

  // ---- internals ----

  _post(type, data) {
    this._postToGame({ type, data });
  }

  _setView(patch) {
    Object.assign(this.view, patch);
    // The page's rendering must not stop the loops that call this: a server answer it could
    // not show (players [null]) threw out of the poll loop, and the table stopped polling.
    try { this._onChange(this.view); } catch (err) { this._log("showing the table failed", err); }
  }

  async _create() {
    this._creating = true;
    this._setView({ status: "creating", error: null });
    const config = this._config;
    // One key for this create, the same on every resend: after a lost answer the backend may
    // have made the session, and horst answers a create carrying the key with that session
    // instead of making a second table (docs/hosts.md).
    const idempotencyKey = newRetryKey();
    let resp = null;
    for (let attempt = 1; attempt <= CREATE_ATTEMPTS && !this._stopped; attempt++) {
      try {
        resp = await this.api.createSession({ config, gameId: this._gameId, gameTitle: this._gameTitle, idempotencyKey });
        // A 2xx without a session id (a proxy's page, a cut-off body) is no table: taken as
        // one, the bridge polled /sessions/undefined, read the 404 as a lost session and
        // created again at once, hundreds of times a second.
        if (!resp || typeof resp.sessionId !== "string" || !resp.sessionId) {
          throw new ApiError(502, "the server's answer to the create had no session id");
        }
        break;
      } catch (err) {
        if (isAuthError(err)) { this._creating = false; this._setView({ status: "idle", error: err.message }); this._onAuthError(err); return; }
        // A 429 says why (a person's tables an hour, a network's) and until when: the page
        // shows both. It said only "creating the session failed" with the server's words,
        // and asked again every minute while the bound held, each ask one more refusal.
        const refused = err instanceof ApiError && err.status === 429;
        this._setView({ error: refused ? createRefusedText(err, this._now()) : `creating the session failed: ${err.message}` });
        // A refusal that holds longer than one retry's wait is not asked again: New table
        // asks when the person wants to.
        const holds = refused && Number.isFinite(err.retryAfterMs) && err.retryAfterMs > RETRY_WAIT_MAX_MS;
        // "failed", not "idle": the page offers New table for it (an idle tab had no way to
        // try again but a reload).
        if (!isRetryable(err) || holds || attempt === CREATE_ATTEMPTS) { this._creating = false; this._setView({ status: "failed" }); return; }
        await this._sleep(retryDelayMs(attempt, err));
      }
    }
    this._creating = false;
    if (!resp) return;
    if (this._stopped) {
      // The host went away while the create was in flight: nobody hosts this table, so end
      // it as hostLeft ends a live one (else it is listed as joinable until host_disconnected).
      if (resp.sessionId) this.api.endKeepalive(resp.sessionId, [hostLeftOp()]);
      return;
    }
    const gen = ++this._gen;
    this._seq.reset();
    this._setView({
      sessionId: resp.sessionId, round: resp.round ?? 1, seriesId: resp.seriesId ?? resp.sessionId,
      status: "waiting", players: resp.players ?? [], result: null, nextSessionId: null,
      legacy: isLegacyConfig(config), turn: null, deadline: null, onTurnSeats: [], error: null,
    });
    this._post("AGENT_SESSION_START", { sessionId: resp.sessionId, round: this.view.round, players: playerIds(resp.players) });
    const early = this._preSessionOps;
    this._preSessionOps = [];
    for (const op of early) this._outbox.push(op, resp.sessionId);
    this._pollLoop(gen, resp.sessionId, true);
    this._publicLoop(gen, resp.sessionId);
  }

  /** Move to the next round's session and announce it to the game. */
  _switchTo(nextId) {
    if (!nextId || this._stopped || nextId === this.view.sessionId) return;
    const gen = ++this._gen;
    this._seq.reset();
    this._setView({
      sessionId: nextId, status: "waiting", result: null, nextSessionId: null,
      turn: null, deadline: null, onTurnSeats: [], error: null,
    });
    // The first poll (wait=0) tells us the round and players for AGENT_SESSION_START.
    this._pollLoop(gen, nextId, false);
    this._publicLoop(gen, nextId);
  }

  _sessionLost(sid) {
    if (sid !== this.view.sessionId) return;
    this._gen++;
    this._post("AGENT_SESSION_END", { sessionId: sid, result: null, reason: "session_lost" });
    this._setView({ sessionId: null, status: "lost", error: "the session was lost (backend restarted?); opening a new table" });
    if (this._wantTable) this.requestConfigure();
  }

  async _pollLoop(gen, sid, announced) {
    let failures = 0;
    let lingers = 0;
    while (gen === this._gen && !this._stopped) {
      const started = this._now();
      let resp;
      try {
        resp = await this.api.pendingActions(sid, this._seq.after, announced ? LONG_POLL_WAIT_S : 0);
        failures = 0;
      } catch (err) {
        if (gen !== this._gen) return;
        if (isSessionLost(err)) { this._sessionLost(sid); return; }
        if (isAuthError(err)) { this._setView({ error: err.message }); this._onAuthError(err); return; }
        failures++;
        this._setView({ error: `polling failed (${err.message}); retrying` });
        await this._sleep(retryDelayMs(failures, err));
        continue;
      }
      if (gen !== this._gen) return;

      const patch = { error: null };
      if (typeof resp.round === "number") patch.round = resp.round;
      if (Array.isArray(resp.players)) patch.players = resp.players;
      if (resp.status) patch.status = resp.status;
      if (resp.nextSessionId) patch.nextSessionId = resp.nextSessionId;
      if (resp.result !== undefined && resp.result !== null) patch.result = resp.result;
      this._setView(patch);

      if (!announced) {
        announced = true;
        this._post("AGENT_SESSION_START", { sessionId: sid, round: this.view.round, players: playerIds(resp.players) });
      }
      const fresh = this._seq.take(resp.actions);
      for (const entry of fresh) {
        const msg = messageForEntry(entry, { sessionId: sid, round: this.view.round, legacy: this.view.legacy, players: this.view.players });
        if (msg) this._post(msg.type, msg.data);
        try { this._onEntry(entry, this.view.players); } catch (err) { this._log("showing an entry failed", err); }
      }

      if (resp.status === "finished") {
        // Acknowledge what we processed; the old session is never polled again.
        if (fresh.length) this.api.pendingActions(sid, this._seq.after, 0).catch(() => {});
        // The next round may also have come with our own end op's answer.
        const next = resp.nextSessionId || (sid === this.view.sessionId ? this.view.nextSessionId : null);
        if (next) { this._switchTo(next); return; }
        // autoRematch links the next round a moment after the finishing write, and this
        // poll may have landed in between: look again a few times before calling the
        // series over.
        if (lingers < REMATCH_LINGER_POLLS && autoRematchDue(this._config, this.view)) {
          lingers++;
          await this._sleep(REMATCH_LINGER_MS);
          continue;
        }
        return;
      }
      if (fresh.length === 0 && this._now() - started < FAST_EMPTY_POLL_MS) {
        await this._sleep(FAST_EMPTY_POLL_PAUSE_MS);
      }
    }
  }

  /** Turn, clock and seat names for the page come from the public spectator view. */
  async _publicLoop(gen, sid) {
    let since;
    let failures = 0;
    while (gen === this._gen && !this._stopped) {
      const started = this._now();
      let v;
      try {
        v = await this.api.publicView(sid, since, LONG_POLL_WAIT_S);
        failures = 0;
      } catch (err) {
        if (gen !== this._gen || isSessionLost(err) || isAuthError(err)) return;
        failures++;
        await this._sleep(retryDelayMs(failures, err));
        continue;
      }
      if (gen !== this._gen) return;
      const patch = {
        turn: v.turn ?? null,
        deadline: v.deadline ?? null,
        onTurnSeats: Array.isArray(v.onTurnSeats) ? v.onTurnSeats : [],
      };
      // Player objects here carry names; prefer them over bare ids.
      if (Array.isArray(v.players)) patch.players = v.players;
      if (v.result !== undefined && v.result !== null) patch.result = v.result;
      this._setView(patch);
      if (v.status === "finished") return;
      const unchanged = since !== undefined && v.version === since;
      since = v.version ?? since;
      if (unchanged && this._now() - started < FAST_EMPTY_POLL_MS) await this._sleep(FAST_EMPTY_POLL_PAUSE_MS);
    }
  }

  async _sendOps(sid, ops) {
    const started = this._now();
    // One id for the batch, the same on every resend: after a lost answer (no answer, a
    // proxy's 502/504) the backend may have applied it, and horst answers a batch carrying
    // the last applied batchId without applying it again (docs/hosts.md).
    const batchId = newRetryKey();
    for (let attempt = 1; ; attempt++) {
      if (this._stopped) return;
      try {
        const resp = await this.api.ops(sid, ops, batchId);
        if (sid === this.view.sessionId && resp && typeof resp === "object") {
          const patch = {};
          if (resp.status) patch.status = resp.status;
          if (typeof resp.round === "number") patch.round = resp.round;
          if (resp.nextSessionId) patch.nextSessionId = resp.nextSessionId;
          this._setView(patch);
        }
        return;
      } catch (err) {
        if (isSessionLost(err)) { this._sessionLost(sid); return; }
        if (isAuthError(err)) { this._onAuthError(err); return; }
        // A conflict (409: game already over, say) will not go away by retrying; ops for a
        // session this host has left behind are not worth waiting for.
        const current = sid === this.view.sessionId;
        if (current && ops.length > 1 && isBadOp(err)) {
          // The backend applies a batch whole or not at all, so one op it refuses (too
          // large, malformed) took the rest with it: an `end` in the same batch was lost
          // and the table stayed open. Each op goes again on its own, in order, and only
          // the bad one is dropped.
          for (const op of ops) await this._sendOps(sid, [op]);
          return;
        }
        if (!isRetryable(err) || !current || this._now() - started >= OPS_RETRY_FOR_MS) {
          this._log("ops dropped", sid, ops, err);
          if (current) this._setView({ error: `ops not applied: ${err.message}` });
          return;
        }
        await this._sleep(retryDelayMs(attempt, err));
      }
    }
  }

  async _rematch(sid) {
    if (!sid || this._stopped) return;
    let resp;
    const started = this._now();
    for (let attempt = 1; ; attempt++) {
      try {
        resp = await this.api.rematch(sid);
        break;
      } catch (err) {
        // /rematch is idempotent (it answers the existing next session): a refusal that
        // may pass is asked again while this session is the table's, or the game's
        // rematch was lost and the series ended quietly.
        // A 429 that holds longer than one retry's wait (the person's tables an hour: a
        // rematch opens a table) is said with its reason and time, not asked again.
        const refused = err instanceof ApiError && err.status === 429;
        const holds = refused && Number.isFinite(err.retryAfterMs) && err.retryAfterMs > RETRY_WAIT_MAX_MS;
        const again = isRetryable(err) && !isAuthError(err) && !this._stopped && !holds
          && sid === this.view.sessionId && this._now() - started < OPS_RETRY_FOR_MS;
        if (!again) {
          this._setView({ error: refused ? createRefusedText(err, this._now()) : `rematch failed: ${err.message}` });
          return;
        }
        await this._sleep(retryDelayMs(attempt, err));
      }
    }
    // If the poll loop already saw the old session finish without a next
    // session, nobody else will switch; _switchTo ignores repeats.
    if (resp && resp.sessionId && sid === this.view.sessionId && this.view.status === "finished") {
      this._switchTo(resp.sessionId);
    }
  }
}

/**
 * A fresh retry key (a create's `idempotencyKey`, an /ops batch's `batchId`): 32 hex digits
 * (randomUUID needs a secure context).
 */
function newRetryKey() {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** A refusal of what a batch holds (400 malformed, 413 too large), not of the batch's moment. */
function isBadOp(err) {
  return err instanceof ApiError && (err.status === 400 || err.status === 413);
}

export { ApiError };
