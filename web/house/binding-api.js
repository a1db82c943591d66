// The BridgeApi that HostSession expects, carried over a DevTools binding instead of fetch.
// DOM-free so node tests can drive it: `send` stands in for window.horstHouse and the reply
// handler for window.__horstHouseReply.

import { ApiError } from "../bridge/bridge-core.js";

/**
 * @param {{ send: (json: string) => void, setReplyHandler: (fn: (id: number, status: number, body: string) => void) => void }} opts
 */
export function createBindingApi({ send, setReplyHandler }) {
  let nextId = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: any) => void}>} */
  const waiting = new Map();

  setReplyHandler((id, status, body) => {
    const w = waiting.get(id);
    if (!w) return;
    waiting.delete(id);
    let payload = null;
    if (body) {
      try { payload = JSON.parse(body); } catch { payload = null; }
    }
    if (status >= 200 && status < 300) {
      w.resolve(payload ?? {});
      return;
    }
    const message = (payload && typeof payload.error === "string" && payload.error) || (status === 0 ? "network error" : `HTTP ${status}`);
    w.reject(new ApiError(status, message, payload && payload.code));
  });

  function call(kind, args) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      try {
        send(JSON.stringify({ kind, id, ...args }));
      } catch (err) {
        waiting.delete(id);
        reject(new ApiError(0, `house binding unavailable: ${err && err.message ? err.message : err}`));
      }
    });
  }

  return {
    createSession: ({ config }) => call("createSession", { config }),
    ops: (sessionId, ops) => call("ops", { sessionId, ops }),
    pendingActions: (sessionId, after, wait) => call("pendingActions", { sessionId, after, wait }),
    rematch: (sessionId) => call("rematch", { sessionId }),
    publicView: (sessionId, since, wait) => call("publicView", { sessionId, since: since ?? null, wait }),
    // The house process ends live sessions itself when it stops; nothing to do here.
    endKeepalive: () => {},
    /** Calls still waiting for their reply (for tests). */
    get waiting() { return waiting.size; },
  };
}
