// The BridgeApi that HostSession expects, carried over a DevTools binding instead of fetch.
// DOM-free so node tests can drive it: `send` stands in for window.horstHouse and the reply
// handler for window.__horstHouseReply.

import { ApiError } from "../bridge/bridge-core.js";

// The house process answers every call within its own bounds (an API request 20 s, a
// long-poll 40 s, then up to 30 s to hand the answer to this page). A call still unanswered
// well past them lost its answer (the DevTools connection dropped it): it fails as a network
// error, which HostSession retries, instead of leaving the table waiting forever.
export const REPLY_TIMEOUT_MS = 60_000;
export const LONG_POLL_REPLY_TIMEOUT_MS = 90_000;

/**
 * @param {{
 *   send: (json: string) => void,
 *   setReplyHandler: (fn: (id: number, status: number, body: string, retryAfterMs?: number|null) => void) => void,
 *   setTimer?: (fn: () => void, ms: number) => any,
 *   clearTimer?: (handle: any) => void,
 * }} opts
 */
export function createBindingApi({ send, setReplyHandler, setTimer = (fn, ms) => setTimeout(fn, ms), clearTimer = (h) => clearTimeout(h) }) {
  let nextId = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: any) => void, timer: any}>} */
  const waiting = new Map();

  // `retryAfterMs`: the API's Retry-After, which the house process passes on (or null).
  setReplyHandler((id, status, body, retryAfterMs) => {
    const w = waiting.get(id);
    if (!w) return; // unknown, repeated, or answered after its call timed out
    waiting.delete(id);
    clearTimer(w.timer);
    let payload = null;
    if (body) {
      try { payload = JSON.parse(body); } catch { payload = null; }
    }
    if (status >= 200 && status < 300) {
      w.resolve(payload ?? {});
      return;
    }
    const message = (payload && typeof payload.error === "string" && payload.error) || (status === 0 ? "network error" : `HTTP ${status}`);
    const wait = Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined;
    w.reject(new ApiError(status, message, payload && payload.code, wait));
  });

  function call(kind, args, timeoutMs = REPLY_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimer(() => {
        if (!waiting.delete(id)) return;
        reject(new ApiError(0, `the house process did not answer ${kind} within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      waiting.set(id, { resolve, reject, timer });
      try {
        send(JSON.stringify({ kind, id, ...args }));
      } catch (err) {
        waiting.delete(id);
        clearTimer(timer);
        reject(new ApiError(0, `house binding unavailable: ${err && err.message ? err.message : err}`));
      }
    });
  }

  return {
    // The retry keys go along (the house passes them on): a resend is answered, not applied
    // again. gameId and gameTitle are the house's decision, not the page's.
    createSession: ({ config, idempotencyKey }) =>
      call("createSession", idempotencyKey ? { config, idempotencyKey } : { config }),
    ops: (sessionId, ops, batchId) => call("ops", batchId ? { sessionId, ops, batchId } : { sessionId, ops }),
    pendingActions: (sessionId, after, wait) => call("pendingActions", { sessionId, after, wait }, LONG_POLL_REPLY_TIMEOUT_MS),
    rematch: (sessionId) => call("rematch", { sessionId }),
    publicView: (sessionId, since, wait) => call("publicView", { sessionId, since: since ?? null, wait }, LONG_POLL_REPLY_TIMEOUT_MS),
    // The house process ends live sessions itself when it stops; nothing to do here.
    endKeepalive: () => {},
    /** Calls still waiting for their reply (for tests). */
    get waiting() { return waiting.size; },
  };
}
