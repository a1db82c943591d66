// HTTP client for the bridge page: the auth call, the bridge API (section 3)
// and the public spectator view (section 7). DOM-free; `fetch` is injected
// so node tests can check every request without a server.

import { ApiError, retryAfterMs } from "./bridge-core.js";

const BRIDGE = "/api/v1/agent/bridge/sessions";
const PLAYER_SESSIONS = "/api/v1/agent/sessions";

// A long-poll holds for up to 25 s; give the server a margin, then treat the
// request as a network failure so the loop retries instead of hanging forever.
const LONG_POLL_ABORT_MS = 40_000;
const REQUEST_ABORT_MS = 20_000;
// Largest answer read, as `horst play` reads (src/play/client.rs): an answer of the protocol
// is far smaller (the server bounds states and entries far below it).
export const MAX_ANSWER_BYTES = 16 << 20;

/**
 * @param {{
 *   fetch: typeof fetch,
 *   getToken: () => string|null,
 *   baseUrl?: string,
 *   timeoutSignal?: (ms: number) => AbortSignal|undefined,
 * }} opts
 */
export function createBridgeApi({ fetch, getToken, baseUrl = "", timeoutSignal = defaultTimeoutSignal }) {
  async function call(method, path, { body, auth = true, timeoutMs = REQUEST_ABORT_MS } = {}) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (auth) {
      const token = getToken();
      if (!token) throw new ApiError(401, "not signed in");
      headers.Authorization = `Bearer ${token}`;
    }
    let res;
    try {
      res = await fetch(baseUrl + path, {
        method, headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // The JWT travels only in the header; never let the browser add cookies
        // for another origin if baseUrl ever points elsewhere.
        credentials: "same-origin",
        // The API never redirects. Followed, a redirect turned a POST /ops into a GET of
        // its target (a sign-in page, say), whose 200 counted as the ops applied.
        redirect: "manual",
        signal: timeoutSignal(timeoutMs),
      });
    } catch (err) {
      throw new ApiError(0, `network error: ${err && err.message ? err.message : err}`);
    }
    // Browsers answer a manual redirect with an opaque response (status 0, no Location).
    if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
      const to = res.headers?.get?.("Location");
      throw new ApiError(res.status || 300,
        `the server answered ${method} ${path} with a redirect${to ? ` to ${to}` : ""}; point the bridge at horst's own address (a proxy in front of it must pass the API through)`,
        "redirect");
    }
    let payload = null;
    const text = await readBounded(res, `${method} ${path}`);
    if (text) {
      try { payload = JSON.parse(text); } catch { payload = null; }
    }
    if (!res.ok) {
      const message = (payload && typeof payload.error === "string" && payload.error) || `HTTP ${res.status}`;
      throw new ApiError(res.status, message, payload && payload.code,
        retryAfterMs(res.headers?.get?.("Retry-After"), res.headers?.get?.("Date")));
    }
    return payload ?? {};
  }

  const sid = (id) => encodeURIComponent(id);

  return {
    /** POST /api/v1/auth/session {username, password} -> {token} */
    async signIn(username, password) {
      const r = await call("POST", "/api/v1/auth/session", { body: { username, password }, auth: false });
      if (!r || typeof r.token !== "string") throw new ApiError(500, "sign-in answer had no token");
      return r.token;
    },
    /** DELETE /api/v1/auth/session: the server ends this JWT, so no copy of it works on. */
    signOut() {
      return call("DELETE", "/api/v1/auth/session");
    },
    createSession(body) {
      return call("POST", BRIDGE, { body });
    },
    /** `batchId` (optional): the same on every resend of one batch, so it is applied once. */
    ops(sessionId, ops, batchId) {
      const body = batchId ? { ops, batchId } : { ops };
      return call("POST", `${BRIDGE}/${sid(sessionId)}/ops`, { body });
    },
    pendingActions(sessionId, after, wait) {
      return call("GET", `${BRIDGE}/${sid(sessionId)}/pending-actions?after=${after}&wait=${wait}`,
        { timeoutMs: LONG_POLL_ABORT_MS });
    },
    rematch(sessionId) {
      return call("POST", `${BRIDGE}/${sid(sessionId)}/rematch`, { body: {} });
    },
    /** Public: no token, so it works for anyone (and never leaks ours). */
    publicView(sessionId, since, wait) {
      const q = since === undefined || since === null ? `wait=${wait}` : `since=${since}&wait=${wait}`;
      return call("GET", `${PLAYER_SESSIONS}/${sid(sessionId)}/public?${q}`, { auth: false, timeoutMs: LONG_POLL_ABORT_MS });
    },
    /**
     * Fire-and-forget /ops that outlives the page. navigator.sendBeacon cannot
     * set an Authorization header, so this uses fetch with keepalive, which can.
     */
    /** Settles (never rejects) once the request is done, for a sign-out that waits for it. */
    endKeepalive(sessionId, ops) {
      const token = getToken();
      if (!token) return Promise.resolve();
      try {
        return fetch(`${baseUrl}${BRIDGE}/${sid(sessionId)}/ops`, {
          method: "POST",
          keepalive: true,
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
          body: JSON.stringify({ ops }),
          credentials: "same-origin",
        }).then(() => {}, () => {});
      } catch { /* the page is going away; nothing more to do */ }
      return Promise.resolve();
    },
  };
}

/**
 * The body as text, read up to MAX_ANSWER_BYTES and no further: a larger one (said so by its
 * Content-Length, or found so while reading) is a failed call, status 0, retried like no
 * answer. A body cut off mid-way reads as "" (a poll asks again from the same place).
 */
async function readBounded(res, what) {
  const tooLarge = () => new ApiError(0,
    `the answer to ${what} was larger than ${MAX_ANSWER_BYTES >> 20} MiB, far more than any answer of the protocol`,
    "too_large");
  if (Number(res.headers?.get?.("Content-Length")) > MAX_ANSWER_BYTES) {
    res.body?.cancel?.().catch(() => {});
    throw tooLarge();
  }
  const reader = res.body && typeof res.body.getReader === "function" ? res.body.getReader() : null;
  if (!reader) {
    // A fetch without streams (the tests' fakes): the text whole.
    const text = await res.text().catch(() => "");
    if (text.length > MAX_ANSWER_BYTES) throw tooLarge();
    return text;
  }
  const chunks = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_ANSWER_BYTES) {
        // Hang up: the rest is never read.
        reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    return "";
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.byteLength; }
  return new TextDecoder().decode(all);
}

function defaultTimeoutSignal(ms) {
  return typeof AbortSignal !== "undefined" && typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(ms) : undefined;
}
