import { test } from "node:test";
import assert from "node:assert/strict";
import { createBridgeApi } from "../bridge/bridge-api.js";
import { ApiError } from "../bridge/bridge-core.js";

function fakeFetch(responder = () => ({ status: 200, body: {} })) {
  const requests = [];
  const fetch = async (url, init) => {
    requests.push({ url, init, body: init.body ? JSON.parse(init.body) : undefined });
    const r = responder(url, init);
    if (r instanceof Error) throw r;
    const text = r.raw ?? (r.body === undefined ? "" : JSON.stringify(r.body));
    const headers = new Map(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    return { ok: r.status >= 200 && r.status < 300, status: r.status, text: async () => text, headers: { get: (k) => headers.get(k.toLowerCase()) ?? null } };
  };
  return { fetch, requests };
}

function apiWith(responder, token = "jwt-123") {
  const f = fakeFetch(responder);
  const api = createBridgeApi({ fetch: f.fetch, getToken: () => token, timeoutSignal: () => undefined });
  return { api, requests: f.requests };
}

test("signIn posts credentials without a token and returns the token", async () => {
  const { api, requests } = apiWith(() => ({ status: 200, body: { token: "t" } }), null);
  assert.equal(await api.signIn("ann", "pw"), "t");
  assert.equal(requests[0].url, "/api/v1/auth/session");
  assert.equal(requests[0].init.method, "POST");
  assert.deepEqual(requests[0].body, { username: "ann", password: "pw" });
  assert.equal(requests[0].init.headers.Authorization, undefined);
});

test("signOut deletes the session with the bearer token", async () => {
  const { api, requests } = apiWith(() => ({ status: 200, body: { signedOut: true } }));
  await api.signOut();
  assert.equal(requests[0].url, "/api/v1/auth/session");
  assert.equal(requests[0].init.method, "DELETE");
  assert.equal(requests[0].init.headers.Authorization, "Bearer jwt-123");
});

test("signIn without a token in the answer fails", async () => {
  const { api } = apiWith(() => ({ status: 200, body: {} }), null);
  await assert.rejects(api.signIn("a", "b"), /no token/);
});

test("bridge calls carry the bearer token and the documented paths and bodies", async () => {
  const { api, requests } = apiWith(() => ({ status: 200, body: { ok: true } }));
  await api.createSession({ config: { minPlayers: 2 }, gameId: "chess", gameTitle: "Chess" });
  await api.ops("ses_1", [{ op: "state", state: 1 }]);
  await api.pendingActions("ses_1", 7, 25);
  await api.rematch("ses_1");
  assert.deepEqual(requests.map((r) => [r.init.method, r.url, r.body]), [
    ["POST", "/api/v1/agent/bridge/sessions", { config: { minPlayers: 2 }, gameId: "chess", gameTitle: "Chess" }],
    ["POST", "/api/v1/agent/bridge/sessions/ses_1/ops", { ops: [{ op: "state", state: 1 }] }],
    ["GET", "/api/v1/agent/bridge/sessions/ses_1/pending-actions?after=7&wait=25", undefined],
    ["POST", "/api/v1/agent/bridge/sessions/ses_1/rematch", {}],
  ]);
  for (const r of requests) assert.equal(r.init.headers.Authorization, "Bearer jwt-123");
});

test("session ids are URL-encoded", async () => {
  const { api, requests } = apiWith(() => ({ status: 200, body: {} }));
  await api.ops("../x?y", []);
  assert.equal(requests[0].url, "/api/v1/agent/bridge/sessions/..%2Fx%3Fy/ops");
});

test("publicView is unauthenticated and passes since only when known", async () => {
  const { api, requests } = apiWith(() => ({ status: 200, body: { version: 1 } }));
  await api.publicView("ses_1", undefined, 25);
  await api.publicView("ses_1", 12, 25);
  assert.equal(requests[0].url, "/api/v1/agent/sessions/ses_1/public?wait=25");
  assert.equal(requests[1].url, "/api/v1/agent/sessions/ses_1/public?since=12&wait=25");
  assert.equal(requests[0].init.headers.Authorization, undefined);
});

test("HTTP errors become ApiError with status, message and code", async () => {
  const { api } = apiWith(() => ({ status: 410, body: { error: "session lost", code: "server_restarted" } }));
  await assert.rejects(api.ops("ses_1", []), (err) => err instanceof ApiError && err.status === 410 && err.code === "server_restarted" && err.message === "session lost");
  const { api: api2 } = apiWith(() => ({ status: 502, raw: "<html>bad gateway</html>" }));
  await assert.rejects(api2.ops("ses_1", []), (err) => err.status === 502 && err.message === "HTTP 502" && err.retryAfterMs === undefined);
  // Retry-After is kept, in milliseconds, for the retry to wait at least that long.
  const { api: api3 } = apiWith(() => ({ status: 503, body: { error: "store away", code: "unavailable" }, headers: { "Retry-After": "5" } }));
  await assert.rejects(api3.ops("ses_1", []), (err) => err.status === 503 && err.retryAfterMs === 5000);
});

test("network failures become ApiError status 0; a missing token is 401 before any request", async () => {
  const { api } = apiWith(() => new TypeError("fetch failed"));
  await assert.rejects(api.rematch("s"), (err) => err instanceof ApiError && err.status === 0);
  const { api: noToken, requests } = apiWith(() => ({ status: 200, body: {} }), null);
  await assert.rejects(noToken.ops("s", []), (err) => err.status === 401);
  assert.equal(requests.length, 0);
});

test("endKeepalive posts the ops with keepalive and the token, and swallows failures", async () => {
  const { api, requests } = apiWith(() => new TypeError("page gone"));
  api.endKeepalive("ses_1", [{ op: "end", reason: "host_left" }]);
  await new Promise((r) => setImmediate(r));
  assert.equal(requests[0].init.keepalive, true);
  assert.equal(requests[0].init.headers.Authorization, "Bearer jwt-123");
  assert.deepEqual(requests[0].body, { ops: [{ op: "end", reason: "host_left" }] });
});
