// The bridge page: sign in, load the chosen game in a sandboxed iframe, and
// let HostSession (host-session.js) do the protocol work. Everything the
// server or the game sends is shown with textContent only.

import { createBridgeApi } from "./bridge-api.js";
import { HostSession } from "./host-session.js";
import {
  resolveGameUrl, needsConsent, gameIdFromUrl, titleFromGameId, describeDeadline, describePlayers, describeResult,
  describeEntry, newTableOffered,
} from "./bridge-core.js";
import { onClick } from "/pages/submit-once.js";

// sessionStorage: survives a reload of this tab but not the tab itself, and
// the game cannot read it because its sandbox gives it an opaque origin.
const TOKEN_KEY = "rcadia.bridge.token";
// The game URL last submitted in this tab's "Host this game" form: a game from another
// origin is hosted at once only when the person chose it here (needsConsent).
const CHOSEN_KEY = "rcadia.bridge.chosen";

// If the game has not configured itself this long after its frame loaded
// (it started before we listened, or its first message was lost), ask again.
const CONFIGURE_NUDGE_MS = 1500;
// A game that still has not configured itself this long after its frame loaded did not
// start at all (a wrong URL, a page without the SDK): say so on the page.
const GAME_DEAD_MS = 5000;
// Lines kept in the platform-events panel.
const EVENTS_KEPT = 100;

const $ = (id) => document.getElementById(id);

let token = readToken();
const api = createBridgeApi({ fetch: (...a) => window.fetch(...a), getToken: () => token });

/** @type {HostSession|null} */
let host = null;
/** @type {HTMLIFrameElement|null} */
let frame = null;
/** Why the game shows nothing, when it never started (cleared once it configures). */
let loadProblem = "";

const params = new URLSearchParams(location.search);
const gameParam = params.get("game") || "/games/chess/";
const gameUrl = resolveGameUrl(gameParam, location.href);
$("game-input").value = gameParam;

function readToken() {
  try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; }
}

function readChosen() {
  try { return sessionStorage.getItem(CHOSEN_KEY); } catch { return null; }
}

function saveChosen(href) {
  try { sessionStorage.setItem(CHOSEN_KEY, href); } catch { /* storage disabled: the click is asked each time */ }
}

function saveToken(value) {
  token = value;
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token stays in memory for this page only */ }
}

function showSignIn(message = "") {
  $("signin").hidden = false;
  $("host").hidden = true;
  $("signin-error").textContent = message;
}

function startHosting() {
  // This tab hosts one table; another would go on beside it, out of sight.
  if (host) return;
  $("signin").hidden = true;
  $("host").hidden = false;
  if (!gameUrl) {
    $("error").textContent = `Not a usable game URL: ${gameParam}. Give a page address such as /games/chess/ or https://example.org/mygame/.`;
    return;
  }
  if (needsConsent(gameUrl, location.origin, readChosen())) {
    $("consent-origin").textContent = gameUrl.origin;
    $("consent").hidden = false;
    return;
  }
  $("consent").hidden = true;
  const gameId = gameIdFromUrl(gameUrl);
  // ?title= names the game in /available; otherwise it is derived from the URL.
  const gameTitle = params.get("title") || titleFromGameId(gameId);
  $("s-game").textContent = gameTitle;
  $("s-game").title = gameUrl.href;

  host = new HostSession({
    api,
    gameId,
    gameTitle,
    // "*": the sandboxed game has an opaque origin, so no concrete target
    // origin would match. Nothing sent to the game is secret.
    postToGame: (msg) => frame && frame.contentWindow && frame.contentWindow.postMessage(msg, "*"),
    onChange: render,
    onEntry: (entry, players) => logEvent(describeEntry(entry, players)),
    onAuthError: () => {
      stopHosting();
      saveToken(null);
      showSignIn("Your sign-in expired or is not allowed to host. Sign in again.");
    },
    log: (...args) => console.warn("[bridge]", ...args),
  });

  frame = document.createElement("iframe");
  // allow-scripts only: without allow-same-origin the game runs in an opaque
  // origin and cannot read this page's storage (the JWT) or call our API as us.
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.title = "game";
  frame.addEventListener("load", () => {
    setTimeout(() => {
      if (host && host.view.status === "idle" && !host.view.sessionId) host.requestConfigure();
    }, CONFIGURE_NUDGE_MS);
    setTimeout(() => {
      if (!host || host.view.status !== "idle" || host.view.sessionId) return;
      loadProblem = `The game at ${gameUrl.href} did not start: it has not sent AGENT_CONFIGURE. `
        + "Check the URL: it must be a game page that uses the RCADIA SDK (house games: /games/chess/ and /games/rps/).";
      render(host.view);
    }, GAME_DEAD_MS);
  });
  frame.src = gameUrl.href;
  $("game-frame-box").replaceChildren(frame);
  render(host.view);
}

/** Stops hosting; the promise settles once the table's end was sent. */
function stopHosting() {
  const ended = host ? host.hostLeft() : Promise.resolve();
  host = null;
  if (frame) frame.remove();
  frame = null;
  return ended;
}

window.addEventListener("message", (event) => {
  // Only our game frame speaks to us.
  if (!frame || event.source !== frame.contentWindow || !host) return;
  host.handleGameMessage(event.data);
});

// pagehide fires on close, reload and navigation (including bfcache), where
// unload is unreliable; the end op goes out through fetch keepalive.
window.addEventListener("pagehide", () => { if (host) host.hostLeft(); });

function seatLabel(players, seat) {
  const p = players.find((x, i) => (x && typeof x === "object" ? x.seat ?? i : i) === seat);
  if (!p) return `seat ${seat}`;
  return typeof p === "object" ? (p.asName || p.playerId) : p;
}

/** One line in the platform-events panel, newest at the bottom, as text. */
function logEvent(line) {
  const list = $("events");
  const item = document.createElement("li");
  const at = document.createElement("time");
  const now = new Date();
  at.dateTime = now.toISOString();
  at.textContent = now.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  item.append(at, document.createTextNode(line));
  list.append(item);
  while (list.children.length > EVENTS_KEPT) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
  $("events-empty").hidden = true;
}

let shownSession = null;

function render(view) {
  if (!view) return;
  if (view.sessionId) loadProblem = "";
  if (view.sessionId && view.sessionId !== shownSession) {
    shownSession = view.sessionId;
    logEvent(view.round && view.round > 1 ? `round ${view.round}: table ${view.sessionId}` : `table ${view.sessionId} is open for agents`);
    $("watch-link").href = `/watch/${encodeURIComponent(view.sessionId)}`;
    $("watch-link").hidden = false;
  }
  $("s-session").textContent = view.sessionId
    ? `${view.sessionId}${view.seriesId && view.seriesId !== view.sessionId ? ` (series ${view.seriesId})` : ""}${view.legacy ? " [legacy v1 game]" : ""}`
    : "none";
  $("s-status").textContent = view.status;
  $("s-round").textContent = view.round === null || view.round === undefined ? "-" : String(view.round);
  $("s-players").textContent = describePlayers(view.players);
  const onTurn = (view.onTurnSeats || []).map((s) => seatLabel(view.players || [], s)).join(", ");
  $("s-turn").textContent = view.turn === null || view.turn === undefined ? "-" : (onTurn ? `${onTurn} to move (turn ${view.turn})` : `turn ${view.turn}`);
  $("s-deadline").textContent = describeDeadline(view.deadline, Date.now());
  $("s-result").textContent = describeResult(view.result, view.players);
  $("error").textContent = view.error || loadProblem || "";
  $("new-table").disabled = !newTableOffered(view);
}

// The deadline is shown as a countdown.
setInterval(() => { if (host) $("s-deadline").textContent = describeDeadline(host.view.deadline, Date.now()); }, 1000);

$("new-table").addEventListener("click", () => { if (host) host.newTable(); });

// The form navigates to ?game=...: what is typed there is the person's own choice.
$("game-form").addEventListener("submit", (event) => {
  const chosen = resolveGameUrl(event.currentTarget.elements.game.value, location.href);
  if (chosen) saveChosen(chosen.href);
});

$("consent-yes").addEventListener("click", () => {
  if (!gameUrl) return;
  saveChosen(gameUrl.href);
  startHosting();
});

// One sign-out at a time: a second click while the first waited for the table's end sent a
// sign-out of its own, and the first then sent one without the token.
onClick($("sign-out"), async () => {
  // The table's end needs the JWT, so it goes out before the JWT is ended.
  await stopHosting();
  // The server ends the JWT too: a copy of it (another tab, a stolen one) stops working.
  await api.signOut().catch(() => {});
  saveToken(null);
  showSignIn("Signed out.");
});

// One sign-in at a time: a second submit while the first is out (a double click, Enter
// pressed twice) started hosting twice, and the first table went on without a page.
let signingIn = false;
$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (signingIn) return;
  signingIn = true;
  const form = event.currentTarget;
  form.setAttribute("aria-busy", "true");
  const username = form.elements.username.value;
  const password = form.elements.password.value;
  $("signin-error").textContent = "";
  try {
    saveToken(await api.signIn(username, password));
    form.elements.password.value = "";
    startHosting();
  } catch (err) {
    $("signin-error").textContent = `Sign-in failed: ${err.message}`;
  } finally {
    signingIn = false;
    form.removeAttribute("aria-busy");
  }
});

if (token) startHosting(); else showSignIn();

// A page restored from the back/forward cache already ended its session on
// pagehide; start over instead of showing a dead table.
window.addEventListener("pageshow", (event) => { if (event.persisted) location.reload(); });
