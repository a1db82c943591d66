// The game page `/`: the level list (promoted levels by name), the Labor tab (newest first,
// 25 a page), and the stage to play or watch the chosen level. Opened from file:// there is
// no server: the Labor tab is hidden and a local .map file can be played instead.

import * as api from "./api.js";
import { loadEngine } from "./engine.js";
import { Stage } from "./stage.js";
import { legend, logo } from "./legend.js";

const offline = location.protocol === "file:";
const $ = (id) => document.getElementById(id);
let engine = null;
let stage = null;
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

/** A level card: everything from the level's author is text. */
function card(item, { labor }) {
  const title = el("h3", { class: "card-title" });
  title.textContent = item.title || item.name;
  const sub = el("p", { class: "card-sub mono", text: item.name });
  const facts = el("dl", { class: "facts" });
  const fact = (k, v, cls) => facts.append(el("dt", { text: k }), el("dd", { class: cls || null, text: v }));
  if (labor) {
    fact("Von", item.ownerDisplayName ? `${item.ownerDisplayName} (${item.owner})` : item.owner);
    fact("Revision", item.revisionId, "mono");
    fact("Datum", api.date(item.createdAt));
    fact("Engine", `${String(item.engineVersion).slice(0, 12)}…`, "mono");
  } else if (item.ticks) {
    fact("Nachweis", `${item.ticks} Ticks (${(item.ticks / 60).toLocaleString("de-DE", { maximumFractionDigits: 1 })} s)`);
  }
  const diff = api.difficulty(item.feasibility);
  if (diff) fact("Schwierigkeit", diff.word);
  const other = engine && item.engineVersion !== engine.engineVersion;
  const play = el("button", { type: "button", class: "primary", text: "Spielen" });
  play.addEventListener("click", () => open(item.revisionId, "play"));
  const watch = el("button", { type: "button", text: "Zuschauen" });
  watch.addEventListener("click", () => open(item.revisionId, "watch"));
  const share = el("a", { href: `level/${encodeURIComponent(item.revisionId)}`, class: "share", text: "Level-Seite" });
  const li = el("li", { class: labor ? "card labor-card" : "card", "data-revision": item.revisionId },
    title, sub, facts,
    other ? el("p", { class: "badge", text: "auf einer anderen Engine geprüft" }) : null,
    diff && diff.framePerfect ? el("p", { class: "badge frame-perfect", title: diff.text, text: "auf den Tick genau" }) : null,
    el("div", { class: "bar" }, play, watch, share));
  return li;
}

async function showLevels() {
  const list = $("level-list");
  try {
    const r = await api.levels();
    promoted = r.items;
    list.replaceChildren(...r.items.map((i) => card(i, { labor: false })));
    if (!r.items.length) list.replaceChildren(el("li", { class: "empty", text: "Noch keine Level veröffentlicht." }));
  } catch (e) {
    showError(list, `Die Level-Liste ist gerade nicht zu haben (${e.message}). Lade die Seite später neu.`);
  }
}

let laborOffset = 0;
async function showLabor(offset) {
  const list = $("labor-list");
  try {
    const r = await api.labor(offset);
    laborOffset = offset;
    list.replaceChildren(...r.items.map((i) => card(i, { labor: true })));
    if (!r.items.length) list.replaceChildren(el("li", { class: "empty", text: "Im Labor ist gerade nichts." }));
    $("labor-newer").disabled = offset === 0;
    $("labor-older").disabled = r.nextOffset == null;
    $("labor-older").dataset.next = r.nextOffset ?? "";
    $("labor-page").textContent = `Seite ${Math.floor(offset / 25) + 1}`;
  } catch (e) {
    showError(list, `Das Labor ist gerade nicht zu haben (${e.message}).`);
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
  if (push) history.pushState({ id, mode }, "", `#${mode === "watch" ? "zuschauen" : "spielen"}=${encodeURIComponent(id)}`);
  let rev;
  try {
    rev = await api.revision(id);
  } catch (e) {
    showStage();
    showError($("stage"), e.status === 404 ? "Dieses Level gibt es nicht (mehr)." : `Das Level lässt sich gerade nicht laden (${e.message}).`);
    return;
  }
  startStage(rev, mode);
}

function startStage(rev, mode) {
  showStage();
  if (stage) stage.destroy();
  const i = promoted.findIndex((p) => p.revisionId === rev.revisionId);
  const next = i >= 0 ? promoted[i + 1] : null;
  stage = new Stage($("stage"), {
    engine, revision: rev, mode,
    onNext: next ? () => open(next.revisionId, "play") : null,
  });
  document.title = `${rev.title || rev.name} – Game con Vogel`;
}

function showStage() {
  $("chooser").hidden = true;
  $("stage-view").hidden = false;
}

function showChooser() {
  if (stage) stage.destroy();
  stage = null;
  $("stage").replaceChildren();
  $("stage-view").hidden = true;
  $("chooser").hidden = false;
  document.title = "Game con Vogel";
}

function fromHash() {
  const m = /^#(spielen|zuschauen)=(.+)$/.exec(location.hash);
  if (m) open(decodeURIComponent(m[2]), m[1] === "zuschauen" ? "watch" : "play", false);
  else showChooser();
}

/** file://: play a .map file from disk (and watch a replay beside it, if one is chosen). */
function offlinePicker() {
  $("panel-levels").replaceChildren(
    el("p", { text: "Ohne Server (die Seite ist als Datei geöffnet) gibt es keine Level-Liste und kein Labor. Öffne eine .map-Datei, optional mit ihrem Replay:" }),
    el("label", { for: "map-file", text: "Level (.map) " }), el("input", { type: "file", id: "map-file", accept: ".map,text/plain" }),
    el("label", { for: "replay-file", text: " Replay (.json) " }), el("input", { type: "file", id: "replay-file", accept: ".json,application/json" }),
  );
  const go = async () => {
    const f = $("map-file").files[0];
    if (!f) return;
    const map = await f.text();
    const rf = $("replay-file").files[0];
    const replay = rf ? JSON.parse(await rf.text()) : { seed: 1, actions: [] };
    let game;
    try {
      game = engine.newGame(map, replay.seed);
    } catch (e) {
      showError($("panel-levels"), `Die Datei ist kein gültiges Level: ${e.message}`);
      return;
    }
    const title = game.map.name;
    game.free();
    startStage({ revisionId: "", name: f.name.replace(/\.map$/, ""), title, seed: replay.seed, map, replay, engineVersion: engine.engineVersion, evidence: {} }, "play");
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
    showError($("panel-levels"), `Die Spiel-Engine lässt sich nicht laden (${e.message}). Dein Browser braucht WebAssembly.`);
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
