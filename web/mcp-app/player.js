// The MCP App ui://gcv/player: the view side of MCP Apps (ext-apps, protocol 2026-01-26) by
// hand, over postMessage with the host: ui/initialize, then the tool's input and result
// arrive as notifications. It plays the map and replay of the call on the engine module
// (the referee's own rules) in the game's stage, and at the end of the replay compares its
// run with the server's referee and tells the host (ui/update-model-context).
// Everything from the tool result is untrusted text: it is set with textContent only.

import { DEAD, WON, loadEngine } from "../game/engine.js";
import { Stage } from "../game/stage.js";

const PROTOCOL = "2026-01-26";
/** The referee's outcomes as the page says them (the host and the model get the codes). */
const SAID = { won: "gewonnen", lost: "verloren", unresolved: "offen" };
const said = (outcome) => SAID[outcome] || String(outcome);
const $ = (id) => document.getElementById(id);
const state = { input: null, result: null, host: {}, tool: null, stage: null, shown: false };

// ---- JSON-RPC over postMessage with the host ----

let nextId = 1;
const pending = new Map();

function send(message) {
  window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
}

/** How long a request waits for the host's answer: a host that never answers (one that
 *  advertises a capability it does not serve) must not leave the player waiting forever. */
const REQUEST_TIMEOUT_MS = 5000;
/** A read the host forwards to the server (a revision's replay) crosses the host's backend
 *  and the network: it gets longer. After 5 s the app played without the replay that was on
 *  its way, and a slow host's answer was thrown away. */
const READ_TIMEOUT_MS = 30000;

function request(method, params, timeoutMs = REQUEST_TIMEOUT_MS) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (!pending.delete(id)) return;
      reject(new Error(`the host did not answer ${method} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    pending.set(id, {
      resolve: (v) => { clearTimeout(timer); resolve(v); },
      reject: (e) => { clearTimeout(timer); reject(e); },
    });
  });
}

function notify(method, params) {
  send({ method, params });
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && m.id !== undefined) {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error.message || "the host refused the request"));
    else p.resolve(m.result);
    return;
  }
  if (m.id !== undefined) {
    // Requests from the host: teardown and ping are answered; nothing else is offered.
    if (m.method === "ui/resource-teardown" || m.method === "ping") send({ id: m.id, result: {} });
    else send({ id: m.id, error: { code: -32601, message: `this app does not handle ${m.method}` } });
    return;
  }
  switch (m.method) {
    case "ui/notifications/tool-input":
      state.input = (m.params && m.params.arguments) || {};
      show();
      break;
    case "ui/notifications/tool-result":
      state.result = m.params || {};
      show();
      break;
    case "ui/notifications/tool-cancelled":
      status("Der Aufruf wurde abgebrochen.");
      break;
    default:
      break;
  }
});

function status(text) {
  $("app-status").textContent = text;
}

// ---- what the call carries ----

/** The result's JSON: structuredContent, else the first text block. */
function structured(result) {
  if (result.structuredContent) return result.structuredContent;
  const text = (result.content || []).find((c) => c.type === "text");
  try {
    return text ? JSON.parse(text.text) : {};
  } catch {
    return {};
  }
}

/** Which tool ran: the host's toolInfo, else what the result looks like. */
function toolOf(sc) {
  const named = state.host.toolInfo && state.host.toolInfo.tool && state.host.toolInfo.tool.name;
  if (named) return named;
  if (sc.stateHash !== undefined && sc.deathTick !== undefined) return "simulate_replay";
  if (sc.map !== undefined && sc.revisionId !== undefined) return "get_level";
  return "playtest_map";
}

/** A revision's replay and evidence, read through the host (get_level carries no replay). */
async function revisionMeta(revisionId) {
  if (!state.host.capabilities || !state.host.capabilities.serverResources) return null;
  status("Lade das Replay der Revision über den Host …");
  const r = await request("resources/read", { uri: `gcv://revisions/${revisionId}` }, READ_TIMEOUT_MS);
  const json = (r.contents || []).find((c) => c.mimeType === "application/json");
  return json ? JSON.parse(json.text) : null;
}

let enginePromise = null;

/** The engine module inlined in the page: zlib, base64. */
function engine() {
  if (!enginePromise) {
    enginePromise = (async () => {
      const packed = Uint8Array.from(atob($("engine-z").textContent.trim()), (c) => c.charCodeAt(0));
      const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate"));
      return loadEngine(await new Response(stream).arrayBuffer());
    })();
  }
  return enginePromise;
}

async function show() {
  if (state.shown || !state.result) return;
  // The arguments come first where hosts send them; give a slow one a moment.
  if (!state.input) await new Promise((r) => setTimeout(r, 300));
  if (state.shown) return;
  state.shown = true;
  const result = state.result;
  const sc = structured(result);
  const input = state.input || {};
  const tool = toolOf(sc);
  state.tool = tool;
  $("app-tool").textContent = tool;
  if (result.isError) {
    const e = sc.error || {};
    status(`Der Aufruf ist fehlgeschlagen: ${e.code || "Fehler"}: ${e.message || ""}`);
    return;
  }
  let map = input.map ?? sc.map;
  let replay = sc.replay ?? input.replay ?? null;
  let evidence = { outcome: sc.outcome, ticks: sc.ticks, stateHash: sc.stateHash };
  // The map's own title when the result names none: untrusted, so without direction-changing
  // and invisible characters (as horst cleans titles it stores) and set as text.
  const titled = typeof (input.map ?? sc.map) === "string" && /^name:[ \t]*(.+)$/m.exec(input.map ?? sc.map);
  const title = titled && titled[1].replace(/[\u200B-\u200F\u202A-\u202E\u2066-\u2069\u061C\uFEFF\u00AD\p{Cc}]/gu, "").trim();
  let name = sc.name || title || "Karte";
  // Why there is no replay, when the app knows more than "none in the result".
  let unread = null;
  if (tool === "get_level") {
    try {
      const meta = await revisionMeta(sc.revisionId);
      if (meta) {
        replay = meta.replay;
        evidence = meta.evidence || {};
        name = meta.name || name;
      }
    } catch (e) {
      unread = `Das Replay der Revision kam nicht an (${e.message}); du kannst die Karte spielen (Pfeiltasten, Leertaste).`;
      status(unread);
    }
  }
  if (typeof map !== "string" || !map) {
    status("Dieses Ergebnis trägt keine Karte.");
    return;
  }
  let eng;
  try {
    eng = await engine();
  } catch (e) {
    status(`Die Engine startet in diesem Client nicht (${e.message}); das Ergebnis des Servers steht im Text des Aufrufs.`);
    return;
  }
  const seed = (replay && replay.seed) ?? sc.seed ?? input.seed ?? 1;
  const revision = { name, title: name, map, seed, replay, engineVersion: sc.engineVersion, evidence };
  try {
    state.stage = new Stage($("stage"), { engine: eng, revision, mode: replay ? "watch" : "play", embedded: true });
  } catch (e) {
    status(`Die Karte lässt sich nicht spielen: ${e.message}`);
    return;
  }
  if (replay) {
    const judge = state.stage.judge.bind(state.stage);
    state.stage.judge = () => {
      judge();
      verdict(state.stage, evidence);
    };
    const referee = evidence.outcome ? `Der Schiedsrichter des Servers sagt: ${said(evidence.outcome)}${evidence.ticks != null ? ` nach ${evidence.ticks} Ticks` : ""}.` : "";
    status(`${referee} Drück ▶ Abspielen, um den Lauf hier auf derselben Engine zu sehen.`);
  } else {
    const why = sc.reason ? ` (${sc.reason})` : "";
    status(unread || `Kein Replay in diesem Ergebnis${why}: spiel die Karte selbst (Pfeiltasten, Leertaste).`);
  }
  resized();
}

/** The run at the end of the replay against the server's referee. */
function verdict(stage, evidence) {
  const outcome = { [WON]: "won", [DEAD]: "lost" }[stage.view.status] || "unresolved";
  const ticks = stage.game.tick;
  const stateHash = stage.game.stateHash();
  const agrees = outcome === evidence.outcome && ticks === evidence.ticks &&
    (evidence.stateHash == null || stateHash === evidence.stateHash);
  const out = $("app-verdict");
  out.hidden = false;
  out.className = agrees ? "verdict ok" : "verdict bad";
  out.dataset.outcome = outcome;
  out.dataset.agrees = agrees ? "yes" : "no";
  out.textContent = agrees
    ? `✓ ${said(outcome)} nach ${ticks} Ticks: wie der Schiedsrichter des Servers.`
    : `✗ Hier ${said(outcome)} nach ${ticks} Ticks; der Schiedsrichter sagt ${said(evidence.outcome)} nach ${evidence.ticks} Ticks.`;
  const seen = { tool: state.tool, outcome, ticks, stateHash, referee: evidence, agrees };
  if (state.host.capabilities && state.host.capabilities.updateModelContext) {
    request("ui/update-model-context", {
      content: [{ type: "text", text: `The person watched the replay in the Game con Vogel player: ${outcome} after ${ticks} ticks (stateHash ${stateHash}); ${agrees ? "this agrees" : "this does NOT agree"} with the server's referee.` }],
      structuredContent: seen,
    }).catch(() => {});
  }
  resized();
}

let lastHeight = 0;
/** Tells the host the content's height: the body's, since the document's scrollHeight is
 * never below the frame the host sized from the last report, so the frame could only grow. */
function resized() {
  const height = Math.ceil(document.body.getBoundingClientRect().height);
  if (height !== lastHeight) {
    lastHeight = height;
    notify("ui/notifications/size-changed", { height });
  }
}

new ResizeObserver(resized).observe(document.body);

/** The handshake: the host answers ui/initialize with its capabilities and context. */
async function start() {
  const init = await request("ui/initialize", {
    appInfo: { name: "gcv-player", version: "1.0.0" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: PROTOCOL,
  });
  state.host = { capabilities: init.hostCapabilities || {}, ...(init.hostContext || {}) };
  notify("ui/notifications/initialized", {});
}

start().catch((e) => status(`Der Client antwortet nicht wie ein MCP-Apps-Host: ${e.message}`));
