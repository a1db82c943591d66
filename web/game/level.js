// The level page `/level/<revisionId>`: a shareable page for one revision, with its facts,
// its parent, and the stage to play it or watch its winning replay. Unknown, hidden and
// malformed ids get a clear message (the server answers them 404 or 400 already).

import * as api from "./api.js";
import { loadEngine } from "./engine.js";
import { Stage, playError } from "./stage.js";
import { legend, logo } from "./legend.js";
import { progress, seconds } from "./progress.js";

/** The promoted level after `revisionId`, or null. */
function nextLevel(levels, revisionId) {
  const i = levels.findIndex((l) => l.revisionId === revisionId);
  return i >= 0 ? levels[i + 1] || null : null;
}

const $ = (id) => document.getElementById(id);

function message(title, text, kind) {
  const m = $("message");
  const h = document.createElement("h1");
  h.textContent = title;
  const p = document.createElement("p");
  p.textContent = text;
  const a = document.createElement("a");
  a.href = "../";
  a.textContent = "Zu allen Leveln";
  a.className = "way";
  m.replaceChildren(h, p, a);
  m.className = `message ${kind}`;
  m.hidden = false;
  document.title = `${title} – Game con Vogel`;
  document.body.dataset.ready = "1";
}

function fact(dl, k, v, { mono = false, href = null } = {}) {
  const dd = document.createElement("dd");
  if (mono) dd.className = "mono";
  if (href) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = v;
    dd.append(a);
  } else {
    dd.textContent = v;
  }
  const dt = document.createElement("dt");
  dt.textContent = k;
  dl.append(dt, dd);
}

async function main() {
  $("brand").prepend(logo());
  const raw = location.pathname.split("/").filter(Boolean).pop() || "";
  let id;
  try {
    id = decodeURIComponent(raw);
  } catch {
    id = "";
  }
  if (!api.wellFormedId(id)) {
    return message("Keine gültige Level-Kennung", "Eine Revisions-Kennung besteht aus 1 bis 64 Buchstaben, Ziffern, Punkten, Unterstrichen oder Bindestrichen, z. B. rev-erste-schritte-… . Prüfe den Link.", "bad");
  }
  let rev;
  let engine;
  let levels;
  try {
    [rev, engine, levels] = await Promise.all([api.revision(id), loadEngine(), api.levels().then((r) => r.items, () => [])]);
  } catch (e) {
    if (e.status === 404) {
      return message("Level nicht gefunden", "Dieses Level gibt es nicht, oder es wurde zurückgezogen oder ausgeblendet.", "bad");
    }
    return message("Gerade nicht erreichbar", `Das Level lässt sich nicht laden (${e.message}). Versuch es gleich noch einmal.`, "bad");
  }
  const title = rev.title || rev.name;
  const name = (text) => {
    const b = document.createElement("bdi");
    b.textContent = text;
    return b;
  };
  $("level-title").replaceChildren(name(title));
  document.title = `${title} – Game con Vogel`;
  const mine = progress(rev.revisionId, rev.progressFrom);
  $("level-by").replaceChildren(
    "Von ", name(rev.ownerDisplayName || rev.owner),
    mine ? ` · ✓ geschafft, deine Bestzeit ${seconds(mine.best)}` : "",
    // The difficulty stays in sight; its details are with the others below.
    api.difficulty(rev.feasibility) ? ` · Schwierigkeit: ${api.difficulty(rev.feasibility).word}` : "");
  const dl = $("level-facts");
  fact(dl, "Name", rev.name, { mono: true });
  fact(dl, "Von", rev.ownerDisplayName ? `${rev.ownerDisplayName} (${rev.owner})` : rev.owner);
  fact(dl, "Revision", rev.revisionId, { mono: true });
  fact(dl, "Zustand", { promoted: "veröffentlicht", labor: "im Labor", retired: "abgelöst" }[rev.state] || rev.state);
  fact(dl, "Erstellt", api.date(rev.createdAt));
  if (rev.parentRevisionId) fact(dl, "Vorgänger", rev.parentRevisionId, { mono: true, href: encodeURIComponent(rev.parentRevisionId) });
  fact(dl, "Seed", String(rev.seed));
  if (rev.evidence && rev.evidence.ticks != null) fact(dl, "Nachweis", `gewonnen in ${rev.evidence.ticks} Ticks (${seconds(rev.evidence.ticks)})`);
  const diff = api.difficulty(rev.feasibility);
  if (diff) {
    fact(dl, "Schwierigkeit", diff.text);
    if (diff.framePerfect) dl.lastElementChild.classList.add("frame-perfect");
  }
  fact(dl, "Engine", rev.engineVersion, { mono: true });
  fact(dl, "Karten-Hash", rev.mapHash, { mono: true });
  $("level").hidden = false;
  const mode = new URLSearchParams(location.search).get("m") === "watch" ? "watch" : "play";
  // After a promoted level, "Weiter" leads to the next one.
  const next = nextLevel(levels, rev.revisionId);
  // Only the page's own `?test` (a query such as `?ref=contest` is no test mode).
  const test = new URLSearchParams(location.search).has("test") ? "?test" : "";
  try {
    new Stage($("stage"), {
      engine, revision: rev, mode, hideTitle: true,
      onNext: next ? () => { location.href = `${encodeURIComponent(next.revisionId)}${test}`; } : null,
    });
  } catch (e) {
    // The engine rejects the map (or its replay): why, as text, and the way back.
    const back = document.createElement("a");
    back.href = "../";
    back.textContent = "Zu allen Leveln";
    back.className = "way";
    $("stage").classList.remove("stage");
    delete $("stage").dataset.mode;
    $("stage").replaceChildren(playError(e), back);
  }
  $("legend-slot").replaceWith(legend(engine.info.palette));
  document.body.dataset.ready = "1";
}

// From file:// there is no server to ask: the page is left unmarked, and boot-check.js says to
// open it through horst.
if (location.protocol !== "file:") {
  document.documentElement.dataset.booted = "1";
  main();
}
