// Manual end-to-end smoke run in headless Chromium (not part of `node --test`,
// which must pass without a browser): starts mock-horst, opens the bridge for
// a game, lets the built-in agents play, and prints what the page shows and
// what the mock backend received. Needs Debian's chromium and Node's
// experimental WebSocket client:
//
//   node --experimental-websocket web/test-support/browser-smoke.js [game] [seconds] [screenshot.png]
//
// Exits non-zero when no game finished.

import { spawn } from "node:child_process";
import { writeFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createMockHorst } from "./mock-horst.js";

const game = process.argv[2] || "chess";
const seconds = Number(process.argv[3] || 10);
const shot = process.argv[4] || null;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { server, sessions } = createMockHorst({ rounds: 2, agentDelayMs: 5 });
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;

const profile = await mkdtemp(path.join(tmpdir(), "bridge-smoke-"));
const chrome = spawn("chromium", [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
  `--user-data-dir=${profile}`, "--window-size=1200,900", "about:blank",
], { stdio: ["ignore", "ignore", "pipe"] });
const wsUrl = await new Promise((resolve, reject) => {
  let buf = "";
  chrome.stderr.on("data", (d) => {
    buf += d;
    const m = /DevTools listening on (ws:\S+)/.exec(buf);
    if (m) resolve(m[1]);
  });
  setTimeout(() => reject(new Error(`chromium did not start: ${buf}`)), 15000);
});

const consoleLines = [];
const attachedFrames = [];
let cdpId = 0;
const waiting = new Map();
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener("open", r, { once: true }));
ws.addEventListener("message", (ev) => {
  const msg = JSON.parse(ev.data);
  if (msg.id && waiting.has(msg.id)) { waiting.get(msg.id)(msg); waiting.delete(msg.id); }
  if (msg.method === "Target.attachedToTarget" && msg.params.targetInfo.type === "iframe") attachedFrames.push(msg.params.sessionId);
  if (msg.method === "Runtime.consoleAPICalled") consoleLines.push(msg.params.args.map((a) => a.value ?? a.description).join(" "));
  if (msg.method === "Runtime.exceptionThrown") consoleLines.push(`EXCEPTION ${msg.params.exceptionDetails.exception?.description ?? msg.params.exceptionDetails.text}`);
  if (msg.method === "Log.entryAdded") consoleLines.push(`LOG ${msg.params.entry.level} ${msg.params.entry.text} ${msg.params.entry.url ?? ""}`);
});
const cdp = (method, params = {}, sessionId) => new Promise((resolve) => {
  const id = ++cdpId;
  waiting.set(id, resolve);
  ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
});

let exitCode = 1;
try {
  const { result: { targetId } } = await cdp("Target.createTarget", { url: "about:blank" });
  const { result: { sessionId } } = await cdp("Target.attachToTarget", { targetId, flatten: true });
  await cdp("Runtime.enable", {}, sessionId);
  await cdp("Log.enable", {}, sessionId);
  await cdp("Page.enable", {}, sessionId);
  const evalText = async (expr) => (await cdp("Runtime.evaluate", { expression: expr, returnByValue: true }, sessionId)).result?.result?.value;
  // Sign in through the page's own form, as a person would.
  await cdp("Page.navigate", { url: `${origin}/bridge/?game=/games/${game}/` }, sessionId);
  await sleep(1000);
  const signedIn = await evalText(`(() => {
    const f = document.getElementById("signin-form");
    if (document.getElementById("signin").hidden) return "form not shown";
    f.elements.username.value = "smoke"; f.elements.password.value = "pw"; f.requestSubmit();
    return "submitted";
  })()`);
  console.log(`sign-in: ${signedIn}`);
  await sleep(seconds * 1000);
  const where = await evalText(`(() => {
    const t = sessionStorage.getItem("rcadia.bridge.token");
    const frame = document.querySelector("iframe");
    return "token in the bridge's sessionStorage: " + (t ? "yes" : "no")
      + "; in the page URL: " + (t && location.href.includes(t) ? "yes" : "no")
      + "; in the game frame's URL: " + (t && frame && frame.src.includes(t) ? "yes" : "no")
      + "; frame sandbox: " + (frame && frame.getAttribute("sandbox"));
  })()`);
  console.log(where);
  // What the game frame itself can reach: its origin and the bridge's storage.
  // Chromium may run the sandboxed frame out of process; auto-attach finds it either way.
  await cdp("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, sessionId);
  await sleep(300);
  const probe = `(() => { let s; try { s = "readable: " + sessionStorage.getItem("rcadia.bridge.token"); } catch (e) { s = "blocked (" + e.name + ")"; } return "game frame origin: " + origin + "; sessionStorage " + s; })()`;
  let probed = false;
  for (const frameSession of attachedFrames) {
    const seen = (await cdp("Runtime.evaluate", { expression: probe, returnByValue: true }, frameSession)).result?.result?.value;
    console.log(seen);
    probed = true;
  }
  if (!probed) {
    const tree = (await cdp("Page.getFrameTree", {}, sessionId)).result.frameTree;
    const child = tree.childFrames && tree.childFrames[0];
    if (child) {
      const world = (await cdp("Page.createIsolatedWorld", { frameId: child.frame.id, worldName: "smoke" }, sessionId)).result;
      console.log((await cdp("Runtime.evaluate", { contextId: world.executionContextId, expression: probe, returnByValue: true }, sessionId)).result?.result?.value);
    } else {
      console.log("game frame: not found");
    }
  }
  const panel = await evalText(`[...document.querySelectorAll("#status dt")].map(dt => dt.textContent + ": " + dt.nextElementSibling.textContent).join("\\n") + "\\nerror: " + document.getElementById("error").textContent`);
  console.log("--- bridge status panel ---\n" + panel);
  if (shot) {
    const { result } = await cdp("Page.captureScreenshot", { format: "png" }, sessionId);
    await writeFile(shot, Buffer.from(result.data, "base64"));
    console.log(`screenshot: ${shot}`);
  }
  // Leaving the page must end a live session with host_left (fetch keepalive on pagehide).
  await cdp("Page.navigate", { url: "about:blank" }, sessionId);
  await sleep(1500);
  console.log("--- sessions seen by the mock backend ---");
  for (const s of sessions.values()) {
    const kinds = {};
    for (const op of s.ops) kinds[op.op] = (kinds[op.op] || 0) + 1;
    console.log(`${s.sessionId} round ${s.round} ${s.status} result=${JSON.stringify(s.result)} ops=${JSON.stringify(kinds)} last=${JSON.stringify(s.ops.at(-1)?.reason ?? s.ops.at(-1)?.op ?? null)}`);
  }
  console.log("--- console ---\n" + (consoleLines.join("\n") || "(none)"));
  const finished = [...sessions.values()].filter((s) => s.status === "finished" && s.result && s.result.reason !== "host_left");
  exitCode = finished.length ? 0 : 1;
} finally {
  ws.close();
  chrome.kill("SIGTERM");
  server.close();
  server.closeAllConnections?.();
}
process.exit(exitCode);
