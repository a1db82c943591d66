// A scripted stand-in for the bridge HTTP API. Every call returns a promise
// the test settles by hand, so tests control exactly when the backend answers.

export function makeFakeApi() {
  const calls = [];
  let consumed = 0;
  const methods = ["createSession", "ops", "pendingActions", "rematch", "publicView"];
  const api = { calls, keepalive: [] };
  for (const method of methods) {
    api[method] = (...args) => {
      let resolve, reject;
      const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
      // An /ops call's batchId is kept beside its (sessionId, ops), and a create's
      // idempotencyKey beside its body, which tests compare whole.
      const batchId = method === "ops" ? args.splice(2, 1)[0] : undefined;
      let idempotencyKey;
      if (method === "createSession" && args[0] && "idempotencyKey" in args[0]) {
        const { idempotencyKey: key, ...body } = args[0];
        idempotencyKey = key;
        args[0] = body;
      }
      calls.push({ method, args, batchId, idempotencyKey, resolve, reject, taken: false });
      return promise;
    };
  }
  api.endKeepalive = (sessionId, ops) => { api.keepalive.push({ sessionId, ops }); };

  /** The oldest call of `method` the test has not taken yet; waits for it to happen. */
  api.next = async (method, { tries = 200 } = {}) => {
    for (let i = 0; i < tries; i++) {
      const call = calls.find((c) => c.method === method && !c.taken);
      if (call) { call.taken = true; consumed++; return call; }
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`no ${method} call happened; calls so far: ${calls.map((c) => c.method).join(", ")}`);
  };
  /** Untaken calls of `method` right now. */
  api.waiting = (method) => calls.filter((c) => c.method === method && !c.taken);
  return api;
}

/** Let queued promise callbacks and immediates run. */
export async function settle(rounds = 20) {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

/** A scripted stand-in for `fetch`, for the game pages' reads (web/game/api.js): every call
 * waits until the test answers it with `respond(status, body)`. */
export function makeFakeFetch() {
  const calls = [];
  const fetch = (url) => new Promise((resolve) => {
    calls.push({
      url: String(url),
      taken: false,
      respond: (status, body) => resolve({ ok: status >= 200 && status < 300, status, json: async () => body }),
    });
  });
  /** The oldest call to `url` the test has not taken yet; waits for it to happen. */
  fetch.next = async (url, { tries = 200 } = {}) => {
    for (let i = 0; i < tries; i++) {
      const call = calls.find((c) => c.url === url && !c.taken);
      if (call) { call.taken = true; return call; }
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`nobody fetched ${url}; fetched so far: ${calls.map((c) => c.url).join(", ")}`);
  };
  /** Calls to `url` so far. */
  fetch.calls = (url) => calls.filter((c) => c.url === url);
  return fetch;
}
