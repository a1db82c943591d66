// The game page `/`: the level list (promoted levels by name), the Labor tab (newest first,
// 25 a page), and the stage to play or watch the chosen level. Opened from file:// there is
// no server: the Labor tab is hidden and a local .map file can be played instead.

import * as api from "./api.js";
import { loadEngine } from "./engine.js";
import { Stage, playError } from "./stage.js";
import { legend, logo } from "./legend.js";
import { progress, seconds } from "./progress.js";
import { thumbnail } from "./scene.js";

// The modules run: boot-check.js (a classic script) leaves the page alone.
document.documentElement.dataset.booted = "1";
const offline = location.protocol === "file:";
const $ = (id) => document.getElementById(id);
let engine = null;
/** Why the engine module did not load (no WebAssembly, a failed download), or null. */
let engineError = null;
let stage = null;
/** The newest open(): an answer for an older one (a slow level load) is dropped. */
let openToken = 0;
let promoted = [];

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else if (v !== false && v != null) e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

function showError(where, text) {
  where.replaceChildren(el("p", { class: "error", role: "alert", text }));
}

/** An untrusted name in <bdi>: its direction cannot turn the text around it. */
function bdi(text) {
  return el("bdi", { text });
}

/** A level card: its picture, its title, "geschafft" and the best time of this browser.
 * Everything from the level's author is text; ids and hashes are on the level page. */
function card(item, { labor, number }) {
  const title = el("h3", { class: "card-title" }, bdi(item.title || item.name));
  const done = progress(item.revisionId, item.progressFrom);
  const head = [];
  if (number) head.push(el("p", { class: "card-num", text: `Level ${number}` }));
  const thumb = el("div", { class: "thumb-slot", "data-thumb": item.revisionId });
  const facts = el("dl", { class: "facts" });
  const fact = (k, ...v) => facts.append(el("dt", { text: k }), el("dd", {}, ...v));
  if (labor) {
    fact("Von", ...(item.ownerDisplayName ? [bdi(item.ownerDisplayName), ` (${item.owner})`] : [bdi(item.owner)]));
    fact("Datum", api.date(item.createdAt));
  }
  if (done) fact("Bestzeit", seconds(done.best));
  const diff = api.difficulty(item.feasibility);
  if (diff) fact("Schwierigkeit", diff.word);
  // A frame-perfect level's difficulty is marked where it stands (as on the level page),
  // with the number of exact inputs as its title: a badge below repeated the same words.
  if (diff && diff.framePerfect) Object.assign(facts.lastElementChild, { className: "frame-perfect", title: diff.text });
  const other = engine && item.engineVersion !== engine.engineVersion;
  const play = el("button", { type: "button", class: "primary", text: "Spielen" });
  play.addEventListener("click", () => open(item.revisionId, "play"));
  const watch = el("button", { type: "button", text: "Zuschauen" });
  watch.addEventListener("click", () => open(item.revisionId, "watch"));
  const share = el("a", { href: `level/${encodeURIComponent(item.revisionId)}`, class: "share", text: "Level-Seite" });
  const li = el("li", { class: `card${labor ? " labor-card" : ""}${done ? " is-done" : ""}`, "data-revision": item.revisionId },
    ...head, thumb, title,
    done ? el("p", { class: "card-marks" }, el("span", { class: "done", text: "✓ geschafft" })) : null,
    facts.childElementCount ? facts : null,
    other ? el("p", { class: "badge", text: "auf einer anderen Engine geprüft" }) : null,
    el("div", { class: "bar" }, play, watch, share));
  return li;
}

/** Draws each card's thumbnail (the level at its start, with the game's own art). */
function drawThumbs(list, items) {
  return Promise.all(items.map(async (item) => {
    const slot = list.querySelector(`[data-thumb="${CSS.escape(item.revisionId)}"]`);
    if (!slot || !engine) return;
    try {
      const m = await api.map(item.revisionId);
      const c = thumbnail(engine, m.map, m.seed, `Bild des Levels ${item.title || item.name}`);
      if (c && slot.isConnected) slot.replaceWith(c);
    } catch {
      // No picture: the card works without one.
    }
  }));
}

/** "Weiter mit Level N": the first promoted level this browser has not won yet. */
function continueBar(items) {
  const bar = $("continue");
  if (!items.length) {
    bar.replaceChildren();
    return;
  }
  const i = items.findIndex((it) => !progress(it.revisionId, it.progressFrom));
  const won = items.filter((it) => progress(it.revisionId, it.progressFrom)).length;
  const target = i >= 0 ? i : 0;
  const item = items[target];
  const label = i < 0 ? "Level 1 nochmal spielen" : won ? `Weiter mit Level ${target + 1}` : "Los geht's mit Level 1";
  const go = el("button", { type: "button", class: "primary", id: "continue-button", text: label });
  go.addEventListener("click", () => open(item.revisionId, "play"));
  const note = i < 0 ? `Alle ${items.length} Level geschafft!` : won ? `${won} von ${items.length} geschafft. Als Nächstes: ` : "Als Erstes: ";
  bar.replaceChildren(go, el("span", {}, note, i < 0 ? "" : bdi(item.title || item.name)));
}

/** Seconds between reads of a level list the server could not give (as the tables page
 *  retries; the page said "Lade die Seite später neu" and stayed so once it was back). */
const LIST_RETRY_SECONDS = 5;
let levelsRetry = null;

/** A refusal that goes away by itself: no connection, too many requests, a server not ready. */
const passing = (e) => e.status === 0 || e.status === 429 || e.status >= 500;

async function showLevels() {
  const list = $("level-list");
  clearTimeout(levelsRetry);
  try {
    const r = await api.levels();
    promoted = r.items;
    list.replaceChildren(...r.items.map((i, n) => card(i, { labor: false, number: n + 1 })));
    if (!r.items.length) list.replaceChildren(el("li", { class: "empty", text: "Noch keine Level veröffentlicht." }));
    continueBar(r.items);
    drawThumbs(list, r.items);
  } catch (e) {
    if (!passing(e)) {
      showError(list, `Die Level-Liste ist gerade nicht zu haben (${e.message}). Lade die Seite später neu.`);
      return;
    }
    const text = `Die Level-Liste ist gerade nicht zu haben (${e.message}). Die Seite versucht es alle ${LIST_RETRY_SECONDS} Sekunden noch einmal.`;
    // The same words again are not put in again: an alert read out every 5 seconds.
    if (list.textContent !== text) showError(list, text);
    levelsRetry = setTimeout(showLevels, LIST_RETRY_SECONDS * 1000);
  }
}

let laborOffset = 0;
let laborRetry = null;
async function showLabor(offset) {
  const list = $("labor-list");
  clearTimeout(laborRetry);
  // The first read says it is under way (the tab showed an empty panel until it answered).
  // Marked as loading, apart from the empty Labor's words (a test that waited for an
  // `.empty` line took this one for the answer on a slow server).
  if (!list.childElementCount) list.replaceChildren(el("li", { class: "empty loading", text: "Lade das Labor …" }));
  try {
    const r = await api.labor(offset);
    laborOffset = offset;
    list.replaceChildren(...r.items.map((i) => card(i, { labor: true })));
    if (!r.items.length) list.replaceChildren(el("li", { class: "empty", text: "Im Labor ist gerade nichts. Hier erscheinen die Level, die Agenten einreichen." }));
    drawThumbs(list, r.items);
    $("labor-newer").disabled = offset === 0;
    $("labor-older").disabled = r.nextOffset == null;
    $("labor-older").dataset.next = r.nextOffset ?? "";
    $("labor-page").textContent = `Seite ${Math.floor(offset / 25) + 1}`;
    // One page only: no pager with two greyed-out buttons.
    $("labor-page").parentElement.hidden = offset === 0 && r.nextOffset == null;
  } catch (e) {
    // As the level list: a refusal that passes is tried again while the Labor is shown (it
    // said "nicht zu haben" and stayed so once the server was back).
    if (!passing(e)) {
      showError(list, `Das Labor ist gerade nicht zu haben (${e.message}). Lade die Seite später neu.`);
      return;
    }
    const text = `Das Labor ist gerade nicht zu haben (${e.message}). Die Seite versucht es alle ${LIST_RETRY_SECONDS} Sekunden noch einmal.`;
    if (list.textContent !== text) showError(list, text);
    laborRetry = setTimeout(() => { if (!$("panel-labor").hidden) showLabor(offset); }, LIST_RETRY_SECONDS * 1000);
  }
}

function selectTab(which) {
  for (const t of ["levels", "labor"]) {
    const on = t === which;
    $(`tab-${t}`).setAttribute("aria-selected", String(on));
    $(`tab-${t}`).tabIndex = on ? 0 : -1;
    $(`panel-${t}`).hidden = !on;
  }
  if (which === "labor") showLabor(laborOffset);
}

async function open(id, mode, push = true) {
  const token = ++openToken;
  if (push) history.pushState({ id, mode }, "", `#${mode === "watch" ? "zuschauen" : "spielen"}=${encodeURIComponent(id)}`);
  if (!engine) {
    // A Labor card answers before the engine has loaded (or where it cannot load).
    dropStage();
    showStage();
    showError($("stage"), engineError
      ? `Ohne die Spiel-Engine lässt sich kein Level spielen (${engineError}). Dein Browser braucht WebAssembly.`
      : "Die Spiel-Engine lädt noch. Versuch es gleich noch einmal.");
    return;
  }
  if (!api.wellFormedId(id)) {
    // A link no revision can have (cut off, mistyped): said here, as the level page says
    // it, without asking the server (its 400 only said "die Adresse ist ungültig").
    dropStage();
    showStage();
    showError($("stage"), "Keine gültige Level-Kennung: Eine Revisions-Kennung besteht aus 1 bis 64 Buchstaben, Ziffern, Punkten, Unterstrichen oder Bindestrichen, z. B. rev-erste-schritte-… . Prüfe den Link.");
    return;
  }
  let rev;
  try {
    rev = await api.revision(id);
  } catch (e) {
    if (token !== openToken) return;
    dropStage();
    showStage();
    showError($("stage"), e.status === 404 ? "Dieses Level gibt es nicht (mehr)." : `Das Level lässt sich gerade nicht laden (${e.message}).`);
    return;
  }
  // Another level was opened (or the list shown) while this one loaded.
  if (token !== openToken) return;
  startStage(rev, mode);
}

/** Ends the stage that runs (its loop, its game) before something else takes its place. */
function dropStage() {
  if (stage) stage.destroy();
  stage = null;
  $("stage").classList.remove("stage");
  delete $("stage").dataset.mode;
}

function startStage(rev, mode) {
  showStage();
  dropStage();
  const i = promoted.findIndex((p) => p.revisionId === rev.revisionId);
  const next = i >= 0 ? promoted[i + 1] : null;
  document.title = `${rev.title || rev.name} – Game con Vogel`;
  try {
    stage = new Stage($("stage"), {
      engine, revision: rev, mode,
      onNext: next ? () => open(next.revisionId, "play") : null,
    });
  } catch (e) {
    // The engine rejects the map (or its replay): say why, as text; "Alle Level" leads back.
    dropStage();
    $("stage").replaceChildren(playError(e));
    return false;
  }
  return true;
}

function showStage() {
  $("chooser").hidden = true;
  $("stage-view").hidden = false;
}

function showChooser() {
  const wasPlaying = !!stage;
  openToken++;
  dropStage();
  $("stage").replaceChildren();
  $("stage-view").hidden = true;
  $("chooser").hidden = false;
  document.title = "Game con Vogel";
  // Back from a level: its "geschafft" mark and the next level show at once.
  if (wasPlaying && promoted.length) {
    $("level-list").replaceChildren(...promoted.map((i, n) => card(i, { labor: false, number: n + 1 })));
    continueBar(promoted);
    drawThumbs($("level-list"), promoted);
  }
}

/** A level id from the address as text; one that does not decode (`%E0`, a cut-off link)
 *  is kept as typed, and `open` says it is no level id (decodeURIComponent threw, and
 *  the link showed the level list without a word). */
function decodedId(part) {
  try { return decodeURIComponent(part); } catch { return part; }
}

function fromHash() {
  const m = /^#(spielen|zuschauen)=(.+)$/.exec(location.hash);
  if (m) open(decodedId(m[2]), m[1] === "zuschauen" ? "watch" : "play", false);
  else showChooser();
}

/** A replay file's text as `{seed, actions}`, or throws an Error that says what is wrong. */
function readReplay(text) {
  let r;
  try {
    r = JSON.parse(text);
  } catch {
    throw new Error("Die Replay-Datei ist kein JSON. Ein Replay sieht so aus: {\"seed\": 1, \"actions\": [{\"action\": 8, \"ticks\": 60}]}");
  }
  if (!r || typeof r !== "object" || !Array.isArray(r.actions)) {
    throw new Error("Die Replay-Datei hat keine Liste \"actions\" (ein Replay ist {\"seed\": …, \"actions\": [{\"action\": …, \"ticks\": …}, …]}).");
  }
  return r;
}

/** file://: play a .map file from disk (and watch a replay beside it, if one is chosen). */
function offlinePicker() {
  const error = el("div", { id: "file-error", "aria-live": "polite" });
  $("panel-levels").replaceChildren(
    el("p", { text: "Ohne Server (die Seite ist als Datei geöffnet) gibt es keine Level-Liste und kein Labor. Öffne eine .map-Datei, optional mit ihrem Replay:" }),
    el("label", { for: "map-file", text: "Level (.map) " }), el("input", { type: "file", id: "map-file", accept: ".map,text/plain" }),
    el("label", { for: "replay-file", text: " Replay (.json) " }), el("input", { type: "file", id: "replay-file", accept: ".json,application/json" }),
    error,
  );
  // A bad file is named next to the file fields, which stay for the next try.
  const fail = (e, lead) => error.replaceChildren(playError(e, lead));
  const go = async () => {
    error.replaceChildren();
    const f = $("map-file").files[0];
    if (!f) return;
    const map = await f.text();
    const rf = $("replay-file").files[0];
    let replay = { seed: 1, actions: [] };
    if (rf) {
      try {
        replay = readReplay(await rf.text());
      } catch (e) {
        return fail(e, "Das Replay lässt sich nicht lesen");
      }
    }
    let game;
    try {
      game = engine.newGame(map, replay.seed ?? 1);
    } catch (e) {
      return fail(e, "Die Datei ist kein gültiges Level");
    }
    const title = game.map.name;
    game.free();
    if (rf) {
      // The referee's own check of the replay (action range, ticks, its total).
      try {
        engine.referee(map, replay);
      } catch (e) {
        return fail(e, "Das Replay passt nicht");
      }
    }
    // No server, no evidence: the watch view says what this browser computed.
    const rev = { revisionId: "", name: f.name.replace(/\.map$/, ""), title, seed: replay.seed ?? 1, map, replay, engineVersion: engine.engineVersion, evidence: null };
    if (!startStage(rev, "play")) {
      const why = $("stage").firstChild;
      showChooser();
      error.replaceChildren(why);
    }
  };
  $("map-file").addEventListener("change", go);
  $("replay-file").addEventListener("change", go);
}

async function main() {
  $("brand").prepend(logo());
  $("tab-levels").addEventListener("click", () => selectTab("levels"));
  $("tab-labor").addEventListener("click", () => selectTab("labor"));
  $("tabs").addEventListener("keydown", (e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const next = $("tab-levels").getAttribute("aria-selected") === "true" ? "labor" : "levels";
    if (offline) return;
    selectTab(next);
    $(`tab-${next}`).focus();
  });
  $("labor-newer").addEventListener("click", () => showLabor(Math.max(0, laborOffset - 25)));
  $("labor-older").addEventListener("click", () => showLabor(Number($("labor-older").dataset.next || 0)));
  $("back").addEventListener("click", () => {
    history.pushState(null, "", location.pathname + location.search);
    showChooser();
  });
  window.addEventListener("popstate", fromHash);
  try {
    engine = await loadEngine();
  } catch (e) {
    engineError = e.message;
    showError($("panel-levels"), `Die Spiel-Engine lässt sich nicht laden (${e.message}). Dein Browser braucht WebAssembly.`);
    document.body.dataset.ready = "1";
    return;
  }
  $("legend-slot").replaceWith(legend(engine.info.palette));
  if (offline) {
    $("tab-labor").hidden = true;
    offlinePicker();
  } else {
    await showLevels();
  }
  document.body.dataset.ready = "1";
  fromHash();
}

main();
