// The account page: sign-in, sign-up, and the Agent-Schlüssel card. Everything the server
// or another person wrote is put in with textContent (el() below), never as HTML.
import { onSubmit, onClick } from "/pages/submit-once.js";
import { charLimit } from "/pages/char-limit.js";
import { logo } from "/game/legend.js";

const $ = (id) => document.getElementById(id);

// The bird beside the name, as on the game's pages (one site, one header).
$("brand").prepend(logo());

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

let csrf = null;
/** The signed-in account's name (what it signs in with; the greeting may show its display name). */
let accountName = "";

/** The API's answer as {status, body}; network failures become status 0. */
async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && csrf) headers["X-CSRF-Token"] = csrf;
  try {
    const r = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = {};
    try { data = await r.json(); } catch { data = {}; }
    return { status: r.status, body: data, retryAfter: r.headers.get("Retry-After") };
  } catch {
    return { status: 0, body: {} };
  }
}

/** German words for the server's refusals. */
function explain(res, context) {
  const code = res.body && res.body.code;
  switch (code) {
    case "invalid_credentials": return "Name oder Passwort ist falsch.";
    case "blocked": return "Dieses Konto ist gesperrt. Wende dich an den Betreiber.";
    case "burst": return `Zu viele Versuche. Bitte warte ${res.retryAfter || 60} Sekunden und versuche es dann noch einmal.`;
    case "sign_up_closed": return "Die Selbstanmeldung ist geschlossen; neue Konten legt der Betreiber an.";
    // The caps of a day (rolling 24 hours); Retry-After says when there is room again.
    case "network_cap":
      return `Aus deinem Netz sind in den letzten 24 Stunden so viele Konten angelegt oder vergebene Namen erfragt worden, wie erlaubt sind. Versuche es in ${waitHours(res)} noch einmal oder bitte den Betreiber um ein Konto.`;
    case "daily_cap":
      return `horst hat in den letzten 24 Stunden so viele neue Konten angenommen, wie erlaubt sind. Versuche es in ${waitHours(res)} noch einmal oder bitte den Betreiber um ein Konto.`;
    case "conflict":
      return context === "key"
        ? "Du hast schon 5 aktive Schlüssel. Widerrufe zuerst einen."
        : "Dieser Name ist schon vergeben. Wähle einen anderen.";
    case "csrf":
    case "cross_site": return "Die Sitzung passt nicht zu dieser Seite. Bitte lade die Seite neu.";
    case "unauthorized": return "Deine Sitzung ist beendet. Bitte melde dich erneut an.";
    case "not_found": return "Diesen Schlüssel gibt es nicht (mehr).";
    case "invalid_input": return invalidInput(res.body.error);
    case "too_large": return "Die Eingabe ist zu lang.";
  }
  if (res.status === 0) return "Der Server ist nicht erreichbar. Prüfe deine Verbindung.";
  if (res.status === 503 || code === "unavailable") {
    return `Der Server ist gerade nicht bereit. Versuche es in ${retrySeconds(res)} Sekunden noch einmal.`;
  }
  return "Etwas ist schiefgegangen. Bitte versuche es später noch einmal.";
}

/**
 * German for the server's rules on names and passwords that the form cannot check itself
 * (`horst_identity::people::check_name`, `check_password`; their English messages are for
 * the CLI and the API's readers). One the page does not know is said in general words.
 */
function invalidInput(message) {
  const m = String(message || "");
  let n;
  if (/common passwords/.test(m)) return "Dieses Passwort steht in Listen von Passwörtern, die bei Datenlecks bekannt wurden: Es gehört zu den häufigsten, die zuerst geraten werden, auch in anderer Groß- und Kleinschreibung. Wähle ein anderes (mehrere Wörter, die nichts miteinander zu tun haben, sind leicht zu merken und schwer zu erraten).";
  if ((n = /password needs at least (\d+)/.exec(m))) return `Das Passwort braucht mindestens ${n[1]} Zeichen. Leerzeichen hintereinander zählen als eines, unsichtbare Zeichen und Steuerzeichen zählen nicht.`;
  if ((n = /password may have at most (\d+) bytes/.exec(m))) return `Das Passwort ist zu lang (höchstens ${n[1]} Bytes).`;
  if (/must not be the account name/.test(m)) return NAME_IN_PASSWORD;
  if (/is reserved/.test(m)) return "Dieser Name ist reserviert. Wähle einen anderen.";
  if (/not a valid account name/.test(m)) return "Dieser Name passt nicht: erlaubt sind nur Kleinbuchstaben, Ziffern, _ und -, 2 bis 32 Zeichen.";
  if (/label/.test(m)) return `Die Bezeichnung passt nicht: höchstens ${maxLabel} Zeichen.`;
  return "Die Eingabe wurde abgelehnt. Prüfe deine Angaben.";
}

function notice(text) {
  const n = $("notice");
  n.textContent = text || "";
  n.hidden = !text;
}

function fieldError(id, text) {
  const p = $(id + "-error");
  const input = $(id);
  p.textContent = text || "";
  if (input) input.setAttribute("aria-invalid", text ? "true" : "false");
  return !text;
}

function show(which) {
  for (const id of ["loading", "signed-out", "signed-in"]) $(id).hidden = id !== which;
}

const NAME_RULE = /^[a-z0-9_-]{2,32}$/;
const NAME_IN_PASSWORD = "Das Passwort darf nicht der Name sein, auch nicht der Name mit ein paar Ziffern oder Zeichen dazu.";

/** The server's rule (`mostly_the_name`): the name, or the name with fewer than 8 other
 * characters around it. The server decides; this only says it before the round trip. */
function mostlyTheName(password, name) {
  const p = password.toLowerCase();
  const n = name.toLowerCase();
  if (!n || !p.includes(n)) return false;
  return [...p.split(n).join("")].length < 8;
}

function dateText(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "–";
  return d.toLocaleString("de-DE", { dateStyle: "medium", timeStyle: "short" });
}

/** Seconds to wait before asking again: the answer's Retry-After, 2 to 60, else 5. */
/** A cap's Retry-After as the page says it: whole hours, rounded up ("1 Stunde", "5 Stunden"). */
function waitHours(res) {
  const s = Number.parseInt(res.retryAfter, 10);
  const h = Number.isFinite(s) && s > 0 ? Math.ceil(s / 3600) : 24;
  return h === 1 ? "1 Stunde" : `${h} Stunden`;
}

function retrySeconds(res) {
  const n = Number.parseInt(res.retryAfter, 10);
  return Number.isFinite(n) ? Math.min(60, Math.max(2, n)) : 5;
}

/** Whether the last read of the session failed (its notice is then cleared on success). */
let sessionUnread = false;

async function start() {
  const res = await api("GET", "/api/account/session");
  if (res.status !== 200) {
    // Whether sign-up is open is unknown: the card says so instead of standing empty.
    $("signup-form").hidden = true;
    $("signup-closed").hidden = true;
    $("signup-unknown").hidden = false;
    show("signed-out");
    notice(explain(res));
    sessionUnread = true;
    // A server that is not ready (503) or out of reach is asked again by itself; the
    // page comes back without a reload once it answers.
    if (res.status === 0 || res.status === 503) setTimeout(start, retrySeconds(res) * 1000);
    return;
  }
  $("signup-unknown").hidden = true;
  if (sessionUnread) notice("");
  sessionUnread = false;
  render(res.body);
}

function render(session) {
  const open = Boolean(session.signUpOpen);
  $("signup-form").hidden = !open;
  $("signup-closed").hidden = open;
  if (!session.signedIn) {
    csrf = null;
    show("signed-out");
    return;
  }
  csrf = session.csrf;
  const a = session.account;
  accountName = a.name;
  // Greeted by the name they chose to be shown by; the name they sign in with stays in
  // the facts below (it is what the sign-in form and the password rules ask for).
  $("me-name").textContent = a.displayName || a.name;
  $("me-login").textContent = a.name;
  $("me-trust").textContent = `${a.trust}${a.trust === 0 ? " (neues Konto)" : ""}`;
  $("me-created").textContent = dateText(a.createdAt);
  show("signed-in");
  loadQuotas();
  loadKeys();
}

async function loadQuotas() {
  const res = await api("GET", "/api/account/quotas");
  const rows = $("quota-rows");
  rows.replaceChildren();
  if (res.status !== 200) {
    if (res.status === 401) return signedOut(res);
    rows.append(el("tr", {}, el("td", { colspan: "3" }, explain(res))));
    return;
  }
  const q = res.body;
  const line = (name, left, per) => el("tr", {}, el("th", { scope: "row" }, name), el("td", {}, left), el("td", {}, per));
  rows.append(
    line("Einreichungen (submit_level)", q.remaining.submissions, q.limits.submissions),
    line("Playtests (playtest_map)", q.remaining.playtests, q.limits.playtests),
    line("Simulationen (simulate_replay)", q.remaining.simulations, q.limits.simulations),
    line("Rechensekunden (geteilt)", q.remaining.seconds, q.limits.seconds),
  );
}

function signedOut(res) {
  csrf = null;
  show("signed-out");
  notice(explain(res));
}

let activeKeys = 0;
let maxKeys = 5;
/** The longest key label the server takes (GET /api/account/keys says; 40 until it has). */
let maxLabel = 40;
/** The label field counts characters as the server does, not UTF-16 units (an emoji is one). */
const labelLimit = charLimit($("key-label"), {
  max: maxLabel,
  counter: $("key-label-count"),
  says: (chars, max, over) => `${chars} von ${max} Zeichen${over ? `: ${over} zu viel` : ""}`,
  tooMany: (max) => `Höchstens ${max} Zeichen.`,
});

async function loadKeys() {
  const res = await api("GET", "/api/account/keys");
  if (res.status !== 200) {
    if (res.status === 401 || res.status === 403) return signedOut(res);
    $("key-error").textContent = explain(res);
    return;
  }
  const { items, maxActive, maxLabelChars } = res.body;
  maxKeys = maxActive;
  if (Number.isInteger(maxLabelChars) && maxLabelChars > 0) {
    // The field takes what the server takes, no more (it said so only after sending).
    maxLabel = maxLabelChars;
    labelLimit.setMax(maxLabel);
    $("key-label-max").textContent = String(maxLabel);
  }
  activeKeys = items.length;
  const rows = $("key-rows");
  rows.replaceChildren(...items.map(keyRow));
  $("keys-table").hidden = items.length === 0;
  $("no-keys").hidden = items.length !== 0;
  // The password change offers to revoke them all in the same step, when there are any.
  $("password-keys-field").hidden = activeKeys === 0;
  $("password-keys-count").textContent = String(activeKeys);
  if (activeKeys === 0) $("password-revoke-keys").checked = false;
  const full = activeKeys >= maxKeys;
  $("create-key").disabled = full;
  $("key-count").textContent = full
    ? `${activeKeys} von ${maxKeys} aktiv – widerrufe zuerst einen, um einen neuen zu erstellen.`
    : `${activeKeys} von ${maxKeys} aktiv`;
}

function keyRow(k) {
  const action = el("td", { class: "action" });
  const revoke = el("button", { type: "button", class: "danger", "data-prefix": k.prefix }, "Widerrufen");
  revoke.addEventListener("click", () => confirmRevoke(action, k));
  action.append(revoke);
  return el(
    "tr",
    { "data-prefix": k.prefix },
    el("td", { "data-label": "Präfix" }, el("code", {}, k.prefix + "…")),
    el("td", { class: "label", "data-label": "Bezeichnung" }, k.label ? el("bdi", {}, k.label) : "–"),
    el("td", { class: "when", "data-label": "Erstellt" }, dateText(k.createdAt)),
    el("td", { class: "when", "data-label": "Zuletzt benutzt" }, k.lastUsedAt ? dateText(k.lastUsedAt) : "noch nie"),
    action,
  );
}

/** Asks once, in place: what will happen, then yes or no. */
function confirmRevoke(cell, k) {
  const yes = el("button", { type: "button", class: "danger", "data-confirm": k.prefix }, "Ja, widerrufen");
  const no = el("button", { type: "button" }, "Abbrechen");
  const q = el("span", { class: "ask" }, `Schlüssel ${k.prefix}… widerrufen? Agenten damit werden sofort abgewiesen.`);
  cell.replaceChildren(q, yes, no);
  no.addEventListener("click", () => loadKeys());
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    const res = await api("POST", `/api/account/keys/${encodeURIComponent(k.prefix)}/revoke`);
    if (res.status === 200) {
      notice(`Schlüssel ${k.prefix}… ist widerrufen.`);
    } else if (res.status === 401) {
      return signedOut(res);
    } else {
      notice(explain(res, "key"));
    }
    loadKeys();
    loadQuotas();
  });
  yes.focus();
}

onSubmit($("signin-form"), async (ev) => {
  const f = ev.target;
  const name = f.elements.name.value.trim();
  const password = f.elements.password.value;
  $("signin-error").textContent = "";
  const ok = fieldError("signin-name", name ? "" : "Bitte gib deinen Namen ein.")
    & fieldError("signin-password", password ? "" : "Bitte gib dein Passwort ein.");
  if (!ok) return;
  const res = await api("POST", "/api/account/sign-in", { name, password });
  if (res.status === 200) {
    f.reset();
    notice("");
    render(res.body);
  } else {
    $("signin-error").textContent = explain(res);
  }
});

onSubmit($("signup-form"), async (ev) => {
  const f = ev.target;
  const name = f.elements.name.value.trim();
  const password = f.elements.password.value;
  const repeat = f.elements.repeat.value;
  $("signup-error").textContent = "";
  let nameProblem = "";
  if (!NAME_RULE.test(name)) nameProblem = "Dieser Name passt nicht: erlaubt sind nur Kleinbuchstaben, Ziffern, _ und -, 2 bis 32 Zeichen.";
  else if (name.startsWith("agent-")) nameProblem = "Namen mit agent- sind für Agentenkonten reserviert.";
  let pwProblem = "";
  if ([...password].length < 8) pwProblem = "Das Passwort braucht mindestens 8 Zeichen.";
  else if (new TextEncoder().encode(password).length > 256) pwProblem = "Das Passwort ist zu lang (höchstens 256 Bytes).";
  else if (mostlyTheName(password, name)) pwProblem = NAME_IN_PASSWORD;
  const ok = fieldError("signup-name", nameProblem)
    & fieldError("signup-password", pwProblem)
    & fieldError("signup-repeat", password === repeat ? "" : "Die beiden Passwörter sind verschieden.");
  if (!ok) return;
  const res = await api("POST", "/api/account/sign-up", { name, password });
  if (res.status === 201) {
    f.reset();
    notice(`Willkommen, ${name}! Dein Konto ist angelegt.`);
    render(res.body);
  } else {
    $("signup-error").textContent = explain(res, "signup");
  }
});

// One sign-out at a time: a double click sent two, and read the session twice.
onClick($("sign-out"), async () => {
  await api("POST", "/api/account/sign-out");
  csrf = null;
  notice("Du bist abgemeldet.");
  start();
});

// Every session and JWT of the person ends, this one too; the keys stay (the answer counts them).
onClick($("sign-out-everywhere"), async () => {
  const res = await api("POST", "/api/account/sign-out-everywhere");
  if (res.status !== 200) {
    if (res.status === 401) return signedOut(res);
    notice(explain(res));
    return;
  }
  csrf = null;
  const n = res.body.activeKeys || 0;
  const keys = n === 0 ? "" : ` ${n === 1 ? "Dein Agent-Schlüssel gilt" : `Deine ${n} Agent-Schlüssel gelten`} weiter.`;
  notice(`Du bist überall abgemeldet, auch hier.${keys}`);
  start();
});

onSubmit($("password-form"), async (ev) => {
  const f = ev.target;
  const current = f.elements.current.value;
  const password = f.elements.password.value;
  const repeat = f.elements.repeat.value;
  const name = accountName;
  $("password-error").textContent = "";
  $("password-done").textContent = "";
  let pwProblem = "";
  if ([...password].length < 8) pwProblem = "Das Passwort braucht mindestens 8 Zeichen.";
  else if (new TextEncoder().encode(password).length > 256) pwProblem = "Das Passwort ist zu lang (höchstens 256 Bytes).";
  else if (mostlyTheName(password, name)) pwProblem = NAME_IN_PASSWORD;
  else if (password === current) pwProblem = "Das neue Passwort ist das bisherige.";
  const ok = fieldError("password-current", current ? "" : "Bitte gib dein bisheriges Passwort ein.")
    & fieldError("password-new", pwProblem)
    & fieldError("password-repeat", password === repeat ? "" : "Die beiden Passwörter sind verschieden.");
  if (!ok) return;
  const revokeKeys = $("password-revoke-keys").checked && !$("password-keys-field").hidden;
  const res = await api("POST", "/api/account/password", { current, password, revokeKeys });
  if (res.status === 200 && !res.body.signedIn) {
    // The change took effect, but this browser could not be signed in again.
    f.reset();
    render(res.body);
    notice(`Dein Passwort ist geändert, und du bist überall abgemeldet, auch hier. Melde dich mit dem neuen Passwort wieder an. ${keysAfterChange(res.body.keys)}`.trim());
  } else if (res.status === 200) {
    f.reset();
    render(res.body);
    const done = `Dein Passwort ist geändert. Auf deinen anderen Geräten bist du jetzt abgemeldet. ${keysAfterChange(res.body.keys)}`.trim();
    notice(done);
    // Said beside the form too: the notice at the top is out of view down here.
    $("password-done").textContent = done;
  } else if (res.body && res.body.code === "invalid_credentials") {
    fieldError("password-current", "Das bisherige Passwort stimmt nicht.");
    $("password-current").focus();
  } else if (res.status === 401) {
    signedOut(res);
  } else {
    $("password-error").textContent = explain(res, "password");
  }
});

/** What a password change did to the agent keys (the answer's `keys`), in words. */
function keysAfterChange(keys) {
  const revoked = (keys && keys.revoked) || [];
  const remaining = (keys && keys.remaining) || [];
  const some = (n) => (n === 1 ? "Ein Agent-Schlüssel" : `${n} Agent-Schlüssel`);
  const parts = [];
  if (revoked.length) parts.push(`${some(revoked.length)} ${revoked.length === 1 ? "ist" : "sind"} widerrufen.`);
  // Absent when the keys could not be read after the change.
  if (keys && !keys.remaining) parts.push("Welche Agent-Schlüssel noch gelten, ließ sich gerade nicht lesen: Sieh nach der Anmeldung in der Liste der Schlüssel nach.");
  if (remaining.length) {
    const named = remaining.map((k) => `${k.prefix}…${k.label ? ` („${k.label}“)` : ""}`).join(", ");
    parts.push(`${some(remaining.length)} ${remaining.length === 1 ? "gilt" : "gelten"} weiter: ${named}. Kennst du einen nicht, widerrufe ihn unten.`);
  }
  return parts.join(" ");
}

onSubmit($("key-form"), async (ev) => {
  const label = ev.target.elements.label.value.trim();
  $("key-error").textContent = "";
  if (!fieldError("key-label", labelLimit.fits() ? "" : `Höchstens ${maxLabel} Zeichen.`)) return;
  // Asked for only when the server said so (reauthenticate): the password is sent once, with
  // this key, and the field goes away again.
  const asking = !$("key-password-field").hidden;
  const password = $("key-password").value;
  if (asking && !fieldError("key-password", password ? "" : "Gib dein Passwort ein.")) {
    $("key-password").focus();
    return;
  }
  fieldError("key-password", "");
  const body = label ? { label } : {};
  if (asking) body.password = password;
  const res = await api("POST", "/api/account/keys", body);
  $("key-password").value = "";
  if (res.body && res.body.code === "reauthenticate") {
    $("key-password-field").hidden = false;
    $("key-password").focus();
    return;
  }
  if (res.body && res.body.code === "invalid_credentials") {
    fieldError("key-password", "Das Passwort stimmt nicht.");
    $("key-password").focus();
    return;
  }
  if (res.status === 201) {
    $("key-password-field").hidden = true;
    ev.target.reset();
    $("new-key-value").value = res.body.key;
    $("mcp-command").value = mcpCommand(res.body.key);
    $("mcp-url").textContent = mcpUrl();
    $("copy-state").textContent = "";
    $("new-key").hidden = false;
    $("new-key-value").focus();
    $("new-key-value").select();
    loadKeys();
  } else if (res.status === 401) {
    signedOut(res);
  } else {
    $("key-error").textContent = explain(res, "key");
    loadKeys();
  }
});

/** This server's MCP endpoint, as the browser reaches it. */
const mcpUrl = () => `${location.origin}/api/mcp`;

/** The exact line that connects Claude Code to this server with `key`. */
const mcpCommand = (key) => `claude mcp add --transport http horst ${mcpUrl()} --header "Authorization: Bearer ${key}"`;

async function copy(input) {
  try {
    await navigator.clipboard.writeText(input.value);
    $("copy-state").textContent = "Kopiert.";
  } catch {
    input.select();
    $("copy-state").textContent = "Markiert – kopiere es mit Strg+C.";
  }
}

$("copy-key").addEventListener("click", () => copy($("new-key-value")));
$("copy-command").addEventListener("click", () => copy($("mcp-command")));

$("hide-key").addEventListener("click", () => {
  // The key leaves the page: it was shown once.
  $("new-key-value").value = "";
  $("mcp-command").value = "";
  $("new-key").hidden = true;
});

start();
