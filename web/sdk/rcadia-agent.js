// RCADIA agent SDK v2 for browser games.
//
// A game page runs inside an iframe owned by a host (a signed-in user's bridge
// tab or the house host). The game is authoritative for rules; it talks to the
// host only through window.postMessage with messages of shape { type, data }.
// The contract is docs "RCADIA Agent Protocol v2", section 2.
//
// One dependency-free ES module so a game can `import { RcadiaAgent } from
// "/sdk/rcadia-agent.js"` without a bundler.

/**
 * @typedef {Object} AgentConfig
 * @property {number} [minPlayers=2] 1-64
 * @property {number} [maxPlayers] minPlayers-64; defaults to minPlayers
 * @property {boolean} [turnBased=true]
 * @property {boolean} [simultaneous=false]
 * @property {string} [gameType="custom"]
 * @property {number} [turnTimeout] seconds, 0 to 31536000 (365 days); 0 means no clock; omitted means platform default
 * @property {number} [maxTurnTimeouts] a whole number from 0 to Number.MAX_SAFE_INTEGER
 * @property {boolean} [forfeitOnTimeout]
 * @property {boolean} [autoRematch]
 */

/**
 * @typedef {Object} GameStartInfo
 * @property {string|null} sessionId
 * @property {string[]} players playerIds in seat order
 * @property {number} round
 * @property {Record<string, string>} [names] display names by playerId, if the host sent them
 */

/**
 * @typedef {Object} TimeoutInfo
 * @property {number} strike
 * @property {number|null} maxStrikes
 * @property {boolean} final
 */

/**
 * @typedef {Object} SessionEndInfo
 * @property {string|null} sessionId
 * @property {*} result
 * @property {string} reason
 */

/**
 * The part of `window` the SDK needs. Tests inject a fake with these members.
 * @typedef {Object} WindowLike
 * @property {{postMessage: function(*, string): void}} parent
 * @property {function(string, function(*): void): void} addEventListener
 * @property {function(string, function(*): void): void} [removeEventListener]
 */

const SDK_VERSION = "2.0.0";

// The platform reserves playerId "__system__" for its own v1-style messages.
const SYSTEM_PLAYER = "__system__";

// Remember this many delivered actionIds. A host re-delivers an entry only
// around a reconnect, so a bounded window is enough and a long series of
// games cannot grow memory without limit.
const SEEN_ACTION_IDS_LIMIT = 2048;

// Optional configuration fields are only sent when the game set them, because
// the protocol gives "omitted" the meaning "platform default".
const OPTIONAL_CONFIG_FIELDS = ["turnTimeout", "maxTurnTimeouts", "forfeitOnTimeout", "autoRematch"];

export class RcadiaAgent {
  /** @type {string} */
  static version = SDK_VERSION;

  /**
   * @param {AgentConfig} [config]
   * @param {{ window?: WindowLike }} [env] injected for tests; defaults to the real window
   */
  constructor(config = {}, env = {}) {
    const win = env.window ?? globalThis.window;
    if (!win) throw new Error("RcadiaAgent needs a window (pass { window } outside a browser)");
    /** @private */ this._window = win;
    /** @private */ this._config = buildConfigure(config);
    /** @private @type {Record<string, Function|null>} */
    this._handlers = {
      gameStart: null, action: null, timeout: null, sessionEnd: null, actionRejected: null,
    };
    /** @private */ this._seenActionIds = new Set();
    /** @private @type {Map<string, string>} last actionId delivered per player, for rejectAction */
    this._lastActionId = new Map();

    /** @type {string|null} id of the current session, from AGENT_SESSION_START / AGENT_GAME_START */
    this.sessionId = null;
    /** @type {string[]} playerIds in seat order */
    this.players = [];
    /**
     * Players' display names (`asName`) by playerId, when the host sends them with
     * AGENT_SESSION_START / AGENT_GAME_START (`names`, an addition to the contract's
     * messages that other hosts may leave out); a player without one is shown by id.
     * @type {Record<string, string>}
     */
    this.playerNames = {};
    /** @type {number} 1-based round of the series; 0 until the host names one */
    this.round = 0;
    /**
     * True once the host has shown it holds this game's configuration: it has
     * sent any host message other than AGENT_REQUEST_CONFIGURE (a host only
     * creates a session and speaks after it received AGENT_CONFIGURE).
     * AGENT_REQUEST_CONFIGURE sets it back to false, because the host asks
     * exactly when it lost (or never had) the configuration.
     * @type {boolean}
     */
    this.isConfigured = false;

    /** @private */
    this._onMessage = (event) => this._receive(event);
    win.addEventListener("message", this._onMessage);
    this._post("AGENT_CONFIGURE", this._config);
  }

  // ---- handlers: one per kind, so registering again replaces the previous one ----

  /** @param {(info: GameStartInfo) => void} fn */
  onGameStart(fn) { this._handlers.gameStart = fn; return this; }
  /** @param {(playerId: string, action: *, actionId: string|undefined) => void} fn */
  onAction(fn) { this._handlers.action = fn; return this; }
  /** @param {(playerId: string, info: TimeoutInfo) => void} fn */
  onTimeout(fn) { this._handlers.timeout = fn; return this; }
  /** @param {(info: SessionEndInfo) => void} fn */
  onSessionEnd(fn) { this._handlers.sessionEnd = fn; return this; }
  /**
   * Kept for v1 compatibility; the platform never sends it.
   * @param {(playerId: string, reason: string) => void} fn
   */
  onActionRejected(fn) { this._handlers.actionRejected = fn; return this; }

  // ---- outbound ----

  /** Publish the public, authoritative state (spectators see it). */
  setState(state) { this._post("AGENT_STATE", { state }); }

  /** Publish one player's private view (hidden information). */
  setObservation(playerId, observation) {
    requirePlayerId("setObservation", playerId);
    this._post("AGENT_OBSERVATION", { playerId, observation });
  }

  /** Publish what that player may do now; each entry should be a submittable action. */
  /**
   * Throws a TypeError (and sends nothing) for a playerId that is not a string or actions that
   * are not an array (null clears them, as []): hosts sent a list that was not an array as []
   * (the player's turn taken away, nobody on turn) and the server refused an op without a
   * playerId. The Unity SDK throws for the same.
   */
  setLegalActions(playerId, actions) {
    requirePlayerId("setLegalActions", playerId);
    if (actions != null && !Array.isArray(actions)) {
      throw new TypeError(`RcadiaAgent.setLegalActions: actions must be an array of submittable actions ([] or null: none); got ${show(actions)}`);
    }
    this._post("AGENT_LEGAL_ACTIONS", { playerId, actions: actions ?? [] });
  }

  /**
   * Reject the player's last action. The actionId of the last action delivered
   * to that player is attached so the platform can tell which action failed.
   */
  rejectAction(playerId, reason) {
    requirePlayerId("rejectAction", playerId);
    const data = { playerId, reason };
    const actionId = this._lastActionId.get(playerId);
    if (actionId !== undefined) data.actionId = actionId;
    this._post("AGENT_ACTION_REJECTED", data);
  }

  /**
   * End the game. `result.winner` should be a playerId or null (draw). Throws a TypeError for
   * a result that is not an object (or null/undefined, a result of `{ winner: null }`): the
   * server refuses the `end` of such a result, so the game would never end on the platform.
   */
  endGame(result) {
    if (result != null && (typeof result !== "object" || Array.isArray(result))) {
      throw new TypeError(`RcadiaAgent.endGame: result must be an object such as { winner: playerId } or { winner: null } (a draw); got ${show(result)}`);
    }
    this._post("AGENT_GAME_OVER", { result });
  }

  /** Ask for another round with the same players (only needed without autoRematch). */
  rematch() { this._post("AGENT_REMATCH", {}); }

  /** Stop listening (pages rarely need this; tests do). */
  destroy() {
    this._window.removeEventListener?.("message", this._onMessage);
  }

  // ---- internals ----

  /** @private */
  _post(type, data) {
    // "*" because a sandboxed game frame has an opaque origin and cannot know
    // its host's origin; nothing the game sends is secret from its parent.
    this._window.parent.postMessage({ type, data }, "*");
  }

  /** @private */
  _receive(event) {
    // Only the host (our parent frame) may drive the game; anything else, for
    // example a nested ad frame or another tab, is ignored.
    if (!event || event.source !== this._window.parent) return;
    // Not framed, the parent is the page itself: every message "from the parent" is one
    // of our own posts (a rejectAction came back as AGENT_ACTION_REJECTED). No host there.
    if (this._window.parent === this._window) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || typeof msg.type !== "string") return;
    const data = msg.data && typeof msg.data === "object" ? msg.data : {};

    if (msg.type === "AGENT_REQUEST_CONFIGURE") {
      this.isConfigured = false;
      this._post("AGENT_CONFIGURE", this._config);
      return;
    }
    if (!HOST_MESSAGES.has(msg.type)) return; // our own echoes when not framed, or unknown types
    this.isConfigured = true;

    switch (msg.type) {
      case "AGENT_SESSION_START":
        this._adoptSession(data);
        break;
      case "AGENT_GAME_START":
        this._adoptSession(data);
        this._call("gameStart", this._gameStartInfo(data));
        break;
      case "AGENT_ACTION":
        this._deliverAction(data);
        break;
      case "AGENT_TIMEOUT":
        this._call("timeout", data.playerId, {
          strike: data.strike ?? 1,
          maxStrikes: data.maxStrikes ?? null,
          final: data.final === true,
        });
        break;
      case "AGENT_SESSION_END":
        this._call("sessionEnd", {
          sessionId: data.sessionId ?? this.sessionId,
          result: data.result ?? null,
          reason: data.reason,
        });
        break;
      case "AGENT_ACTION_REJECTED":
        this._call("actionRejected", data.playerId, data.reason);
        break;
    }
  }

  /**
   * The contract's `{ sessionId, players, round }`, plus `names` only when the host sent
   * some (so the info keeps the contract's exact shape with every other host).
   * @private
   */
  _gameStartInfo(data) {
    const info = { sessionId: this.sessionId, players: this.players.slice(), round: this.round };
    if (data.names && typeof data.names === "object") info.names = { ...this.playerNames };
    return info;
  }

  /** @private */
  _adoptSession(data) {
    if (typeof data.sessionId === "string") this.sessionId = data.sessionId;
    if (Array.isArray(data.players)) this.players = data.players.slice();
    if (data.names && typeof data.names === "object") {
      this.playerNames = {};
      for (const [id, name] of Object.entries(data.names)) {
        if (typeof name === "string" && name) this.playerNames[id] = name;
      }
    }
    if (typeof data.round === "number") this.round = data.round;
  }

  /** @private */
  _deliverAction(data) {
    const { playerId, action, actionId } = data;
    if (actionId !== undefined && actionId !== null) {
      // Hosts re-deliver after reconnects; a game must see each action once.
      if (this._seenActionIds.has(actionId)) return;
      this._rememberActionId(actionId);
      this._lastActionId.set(playerId, actionId);
    }

    // v1 compatibility: v1 hosts delivered platform events as actions.
    if (action && typeof action === "object") {
      if (playerId === SYSTEM_PLAYER && action.type === "__game_start__") {
        if (Array.isArray(action.players)) this.players = action.players.slice();
        if (this.round === 0) this.round = 1; // v1 has no rounds; a v1 session is round 1
        if (this._handlers.gameStart) {
          this._call("gameStart", { sessionId: this.sessionId, players: this.players.slice(), round: this.round });
          return;
        }
      } else if (action.type === "__timeout__") {
        this._call("timeout", playerId, { strike: 1, maxStrikes: null, final: false });
        return;
      }
    }
    this._call("action", playerId, action, actionId);
  }

  /** @private */
  _rememberActionId(actionId) {
    this._seenActionIds.add(actionId);
    if (this._seenActionIds.size > SEEN_ACTION_IDS_LIMIT) {
      // Sets iterate in insertion order, so the first entry is the oldest.
      this._seenActionIds.delete(this._seenActionIds.values().next().value);
    }
  }

  /** @private */
  _call(kind, ...args) {
    const fn = this._handlers[kind];
    if (fn) fn(...args);
  }
}

const HOST_MESSAGES = new Set([
  "AGENT_SESSION_START", "AGENT_GAME_START", "AGENT_ACTION", "AGENT_TIMEOUT",
  "AGENT_SESSION_END", "AGENT_ACTION_REJECTED",
]);

// Most seats a table may have: the server's MAX_SEATS (sessions/src/config.rs).
const MAX_SEATS = 64;
// Longest turnTimeout in seconds (365 days): the server's MAX_TURN_TIMEOUT_SECONDS.
const MAX_TURN_TIMEOUT = 365 * 24 * 3600;
// The flags the server reads as booleans (Rules::from_config).
const BOOLEAN_CONFIG_FIELDS = ["turnBased", "simultaneous", "forfeitOnTimeout", "autoRematch"];

/**
 * Build the AGENT_CONFIGURE payload from the constructor options. Throws a RangeError that
 * says what to fix for a value the server would refuse (Rules::from_config in
 * sessions/src/config.rs): a game would otherwise learn it only when a host failed to open
 * its table. null and undefined mean "not set", as before.
 * @param {AgentConfig} config
 */
function buildConfigure(config) {
  const minPlayers = config.minPlayers ?? 2;
  const maxPlayers = config.maxPlayers ?? minPlayers;
  if (!Number.isInteger(minPlayers) || minPlayers < 1 || minPlayers > MAX_SEATS) {
    throw new RangeError(`RcadiaAgent: config.minPlayers must be a whole number from 1 to ${MAX_SEATS}, got ${show(config.minPlayers)}`);
  }
  if (!Number.isInteger(maxPlayers) || maxPlayers < minPlayers || maxPlayers > MAX_SEATS) {
    throw new RangeError(`RcadiaAgent: config.maxPlayers must be a whole number from minPlayers (${minPlayers}) to ${MAX_SEATS}, or omitted for minPlayers; got ${show(config.maxPlayers)}`);
  }
  const turnTimeout = config.turnTimeout;
  if (turnTimeout != null && !(typeof turnTimeout === "number" && Number.isFinite(turnTimeout) && turnTimeout >= 0 && turnTimeout <= MAX_TURN_TIMEOUT)) {
    throw new RangeError(`RcadiaAgent: config.turnTimeout is in seconds and must be a finite number from 0 to ${MAX_TURN_TIMEOUT} (365 days) (0: no clock; omitted: the platform default); got ${show(turnTimeout)}`);
  }
  const maxTurnTimeouts = config.maxTurnTimeouts;
  // Up to 2^53 - 1: a larger whole number reaches the server as a float (1e21 is written
  // "1e+21") or past its integers, and was refused there.
  if (maxTurnTimeouts != null && !(Number.isSafeInteger(maxTurnTimeouts) && maxTurnTimeouts >= 0)) {
    throw new RangeError(`RcadiaAgent: config.maxTurnTimeouts must be a whole number, 0 or more (omitted: the platform default); got ${show(maxTurnTimeouts)}`);
  }
  // The server takes only true or false (or no value) for these: "false" from a page's query
  // string, or 0, was refused there and no table opened, with nothing said to the game.
  for (const key of BOOLEAN_CONFIG_FIELDS) {
    const value = config[key];
    if (value != null && typeof value !== "boolean") {
      throw new RangeError(`RcadiaAgent: config.${key} must be true or false (omitted: the default); got ${show(value)}`);
    }
  }
  const out = {
    minPlayers,
    maxPlayers,
    turnBased: config.turnBased ?? true,
    simultaneous: config.simultaneous ?? false,
    gameType: config.gameType ?? "custom",
    sdkVersion: SDK_VERSION,
  };
  for (const key of OPTIONAL_CONFIG_FIELDS) {
    if (config[key] !== undefined) out[key] = config[key];
  }
  return out;
}

/** The playerId argument of a call: the server refuses an op without one. */
function requirePlayerId(method, playerId) {
  if (typeof playerId !== "string") {
    throw new TypeError(`RcadiaAgent.${method}: playerId must be a player's id (a string such as "p_0123abcd", from onGameStart's players); got ${show(playerId)}`);
  }
}

/** A value as a message shows it: strings quoted, so "2" is told from 2. */
function show(value) {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

export default RcadiaAgent;
