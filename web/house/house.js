// The house host's table page. Like the browser bridge it runs HostSession (the whole
// bridge protocol: batching, one /ops in flight, long-polls with after=, rematches), but
// its API is a DevTools binding: `window.horstHouse(json)` reaches the `horst house`
// process, which performs the bridge call with the house's agent token and answers through
// `window.__horstHouseReply(id, status, body, retryAfterMs)`. The token never enters this browser.

import { HostSession } from "../bridge/host-session.js";
import { resolveGameUrl, gameIdFromUrl, describePlayers, describeResult, autoRematchDue } from "../bridge/bridge-core.js";
import { createBindingApi } from "./binding-api.js";

// A game that has not configured itself this long after its frame loaded is asked again.
const CONFIGURE_NUDGE_MS = 1500;
// A game with autoRematch gets its next round from the platform at once. If a finished game
// the platform's rule would rematch still has no next session this long after, ask once
// (the link was lost). Nowhere else: after an operator's end, a player who left, or a game
// without autoRematch the platform opens no next round on purpose, and neither does the house.
const REMATCH_AFTER_MS = 1500;

const params = new URLSearchParams(location.search);
const gameUrl = params.has("game") ? resolveGameUrl(params.get("game"), location.href) : null;
const statusBox = document.getElementById("status");

const api = createBindingApi({
  send: (json) => window.horstHouse(json),
  setReplyHandler: (fn) => { window.__horstHouseReply = fn; },
});

let frame = null;
let rematchAskedFor = null;

const host = new HostSession({
  api,
  // Only same-origin house games: the house host's request filter refuses anything else.
  gameId: gameUrl ? gameIdFromUrl(gameUrl) : undefined,
  gameTitle: params.get("title") || undefined,
  postToGame: (msg) => frame && frame.contentWindow && frame.contentWindow.postMessage(msg, "*"),
  onChange: (view) => {
    statusBox.textContent = describeTable(view);
    report(view);
    maybeRematch(view);
  },
  log: (...args) => console.warn("[house]", ...args),
});

/** The table in a few lines, for whoever looks at this page (a person debugging the house). */
function describeTable(view) {
  const lines = [`${view.status}${view.sessionId ? ` · ${view.sessionId}` : ""}${view.round ? ` · round ${view.round}` : ""}`];
  if (view.players && view.players.length) lines.push(describePlayers(view.players));
  if (view.result) lines.push(describeResult(view.result, view.players));
  if (view.error) lines.push(view.error);
  return lines.join("\n");
}

function report(view) {
  try {
    window.horstHouse(JSON.stringify({ kind: "status", view }));
  } catch { /* no binding: opened by hand, nothing to report to */ }
}

function maybeRematch(view) {
  if (view.status !== "finished" || view.nextSessionId || !view.sessionId) return;
  if (rematchAskedFor === view.sessionId || !autoRematchDue(host.config, view)) return;
  const sid = view.sessionId;
  rematchAskedFor = sid;
  setTimeout(() => {
    // Looked at again: the poll may have brought the result (an operator's end, say) since.
    const v = host.view;
    if (v.sessionId === sid && v.status === "finished" && !v.nextSessionId && autoRematchDue(host.config, v)) {
      host.handleGameMessage({ type: "AGENT_REMATCH", data: {} });
    }
  }, REMATCH_AFTER_MS);
}

window.addEventListener("message", (event) => {
  if (!frame || event.source !== frame.contentWindow) return;
  host.handleGameMessage(event.data);
});

if (!params.has("game")) {
  // A person opened this address by hand: the house host always passes ?game=. Explain the
  // page instead of starting a table nobody hosts.
  document.body.classList.remove("hosting");
  statusBox.hidden = true;
  document.getElementById("about").hidden = false;
} else if (!gameUrl || gameUrl.origin !== location.origin) {
  statusBox.textContent = `not a house game: ${params.get("game")}`;
} else {
  frame = document.createElement("iframe");
  // The game gets scripts only: an opaque origin, no access to this page or the binding.
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.title = "game";
  frame.addEventListener("load", () => {
    setTimeout(() => {
      if (host.view.status === "idle" && !host.view.sessionId) host.requestConfigure();
    }, CONFIGURE_NUDGE_MS);
  });
  frame.src = gameUrl.href;
  document.getElementById("frame-box").replaceChildren(frame);
  report(host.view);
}

