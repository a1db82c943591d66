// The stage: one level on a canvas, played (keyboard, 60 ticks per second) or watched (the
// revision's winning replay, with play/pause, speed, single step and a scrubber), on the
// engine module, the referee's own rules. Builds its own DOM inside a container; every text
// that comes from a level (its title, names) is set with textContent.
//
// Test hook: with `?test` in the page URL the loop does not advance by itself; the page
// exposes `window.horstTest` (`tick(n)`: n ticks from the keys held now, or n replay ticks
// while watching; `state()`; `lastReplay()`). See docs/game.md.

import { DEAD, REPLAY_MAX_TICKS, RUNNING, WON, describeAction, perTick, toReplay } from "./engine.js";
import * as art from "./art.js";
import { drawScene } from "./scene.js";
import { GAME_KEYS, Keys } from "./input.js";
import { recordWin, seconds } from "./progress.js";

const TICK_MS = 1000 / 60;
/** The layout of a phone held sideways (the same query as in game.css). */
const SIDEWAYS = "(pointer: coarse) and (orientation: landscape) and (max-height: 540px)";
const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
// Why the replay button is off, and what to do to have it on.
const REPLAY_BEFORE_RUN = "Erst spielen: das Replay gibt es, sobald dein Lauf endet.";
const REPLAY_PRACTICE = "Ein Übungslauf vom Rastplatz gibt kein Replay: „Neustart“ spielt das Level von vorn.";
export const TEST_MODE = typeof location !== "undefined" && new URLSearchParams(location.search).has("test");

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else if (v === true) e.setAttribute(k, "");
    else if (v !== false && v != null) e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

/** The referee's `deathCause` in words. */
export function deathText(d) {
  if (!d) return "Der Vogel ist verunglückt";
  const who = { walker: "einem Murmeltier", flyer: "einer Dohle" }[d.entity && d.entity.kind];
  switch (d.cause) {
    case "spikes": return "In die Stacheln gefallen";
    case "enemy": return `Von ${who || "einem Feind"} erwischt`;
    case "rock": return "Vom Steinschlag getroffen";
    case "fell_out": return "Aus der Karte gefallen";
    case "crushed": return "Von der Plattform zerquetscht";
    default: return "Der Vogel ist verunglückt";
  }
}

/** A replay action in words: where the bird steers and what it does ("steuert langsam nach
 *  links, springt und wirft"; "wartet" when nothing is held). */
export function actionWords(d) {
  const steer = { left: "nach links", right: "nach rechts", "slow left": "langsam nach links", "slow right": "langsam nach rechts" }[d.move];
  const parts = [steer && `steuert ${steer}`, d.jump && "springt", d.shoot && "wirft"].filter(Boolean);
  if (!parts.length) return "wartet";
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} und ${parts[parts.length - 1]}`;
}

/** A run's end that is no engine status: the run reached the referee's replay limit. */
export const TIME_UP = 3;

const short = (h) => (h ? String(h).slice(0, 12) : "–");

/** Why a level cannot be played, as text: the engine's message and the first of its
 * `errors` (line:column message). Everything from the map is set with textContent. */
export function playError(e, lead = "Dieses Level lässt sich hier nicht spielen") {
  const box = el("div", { class: "play-error", role: "alert" });
  box.append(el("p", { class: "error", text: `${lead}: ${(e && e.message) || e}` }));
  const errors = (e && Array.isArray(e.errors)) ? e.errors : [];
  if (errors.length) {
    const list = el("ul", { class: "issues" });
    for (const i of errors.slice(0, 5)) {
      const where = i.line != null ? `${i.line}:${i.column ?? "?"} ` : "";
      list.append(el("li", {}, el("span", { class: "mono", text: where }), String(i.message || i.code || "")));
    }
    if (errors.length > 5) list.append(el("li", { text: `… und ${errors.length - 5} weitere` }));
    box.append(list);
  }
  return box;
}

export class Stage {
  /**
   * @param {HTMLElement} root where the stage builds itself
   * @param {object} o `{engine, revision, mode: "play"|"watch", onNext, hideTitle, embedded}`
   *   (`embedded`: in an MCP host's frame, whose height and sandbox the host decides)
   */
  constructor(root, o) {
    // Without the engine module (not loaded yet, or no WebAssembly) there is nothing to play.
    if (!o.engine) throw new Error("Die Spiel-Engine ist nicht geladen");
    this.root = root;
    this.engine = o.engine;
    this.rev = o.revision;
    this.onNext = o.onNext || null;
    this.hideTitle = !!o.hideTitle;
    this.embedded = !!o.embedded;
    this.keys = new Keys();
    this.speed = 1;
    this.paused = false;
    this.particles = [];
    this.lastEggs = 0;
    this.build();
    this.setMode(o.mode || "play");
    this.resize();
    this.draw();
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(this.wrap);
    this.onWindowResize = () => this.resize();
    window.addEventListener("resize", this.onWindowResize);
    this.frame = this.frame.bind(this);
    this.last = performance.now();
    this.acc = 0;
    this.raf = requestAnimationFrame(this.frame);
    if (TEST_MODE) window.horstTest = this.testHook();
  }

  build() {
    const r = this.rev;
    this.root.replaceChildren();
    this.root.classList.add("stage");
    const mismatch = r.engineVersion && r.engineVersion !== this.engine.engineVersion;
    this.playTab = el("button", { type: "button", class: "mode", "aria-pressed": "true", text: "Spielen" });
    this.watchTab = el("button", { type: "button", class: "mode", "aria-pressed": "false", text: "Zuschauen" });
    this.playTab.addEventListener("click", () => this.setMode("play"));
    this.watchTab.addEventListener("click", () => this.setMode("watch"));
    this.title = el("h2", { class: "stage-title", id: "stage-title" });
    this.title.append(el("bdi", { text: r.title || r.name }));
    // A page that names the level itself (the level page) hides the stage's title.
    if (this.hideTitle) this.title.classList.add("sr-only");
    const modes = el("div", { class: "modes", role: "group", "aria-label": "Modus" }, this.playTab, this.watchTab);
    // Without a replay (an unresolved playtest, a revision whose replay did not come) there
    // is nothing to watch: no tabs, the stage only plays.
    modes.hidden = !r.replay;
    const head = el("div", { class: "stage-head" }, this.title, modes);
    this.root.append(head);
    if (mismatch) {
      this.root.append(el("p", {
        class: "warn", role: "note", id: "engine-mismatch",
        text: `Dieses Level wurde auf einer anderen Engine geprüft (${short(r.engineVersion)}…); dein Browser rechnet mit ${short(this.engine.engineVersion)}…. Spielen geht, aber der Nachweis kann hier abweichen.`,
      }));
    }
    this.canvas = el("canvas", { class: "screen", tabindex: "0", "aria-label": "Spielfeld", "aria-describedby": "controls-help" });
    this.ctx = this.canvas.getContext("2d");
    this.overlay = el("div", { class: "overlay", hidden: true, role: "dialog", "aria-modal": "false", "aria-labelledby": "overlay-title" });
    // The line under the canvas, never over the picture (over its bottom the "Bereit" hint
    // hid the ground the bird stands on, on a phone at scale 1): the time (or the replay's
    // tick) and the berries, and before the first input, beside "Bereit", that the clock
    // starts with the player. It is one line in every state, so nothing under it (the touch
    // pad under a thumb) moves when the run starts; while the run ran it stood empty, and the
    // time sat apart in the side.
    // A run on from a checkpoint is practice (no replay of the level, no best time): said
    // first in the line, in a chip of its own colour, while it waits and while it runs; only
    // the replay button's hint beside the controls said it, out of the player's eye line.
    this.practiceOut = el("span", { class: "stat practice", id: "practice" });
    this.tickOut = el("span", { class: "stat", id: "tick" });
    this.berryOut = el("span", { class: "stat", id: "berries" });
    this.readyHint = el("span", { class: "ready-hint", id: "ready", "aria-hidden": "true", text: "die Zeit läuft ab deiner ersten Taste." });
    this.caption = el("p", { class: "caption", id: "caption" }, this.practiceOut, " ", this.tickOut, " ", this.readyHint, " ", this.berryOut);
    this.wrap = el("div", { class: "screen-wrap" }, this.canvas, this.caption, this.overlay);
    this.side = el("div", { class: "side" });
    this.root.append(el("div", { class: "stage-body" }, this.wrap, this.side));
    this.say = el("p", { class: "sr-only", "aria-live": "polite", id: "announce" });
    this.side.append(this.say);

    // Play controls.
    // The key beside the word only where there is a keyboard (game.css hides .key-hint on a
    // touch screen, where "(R)" named a key nobody has); the shortcut itself is told by
    // aria-keyshortcuts, not read out as part of the name.
    this.restartBtn = el("button", { type: "button", "aria-keyshortcuts": "R" }, "Neustart",
      el("span", { class: "key-hint", "aria-hidden": "true", text: " (R)" }));
    this.restartBtn.addEventListener("click", () => this.restart());
    // "speichern", not "laden": the button saves the run as a file, and "Replay laden" read
    // as loading one into the game.
    // Off until a run from the start has ended; the hint beside it says so, in words a
    // screen reader reads with the button's name (aria-describedby). Greyed without a word,
    // it looked broken.
    this.replayHint = el("p", { class: "replay-hint", id: "replay-hint" });
    this.downloadBtn = el("button", { type: "button", text: this.embedded ? "Lauf als Replay kopieren" : "Replay speichern" });
    this.downloadBtn.addEventListener("click", () => this.download());
    this.replayOff(REPLAY_BEFORE_RUN);
    // A key a line: run on as one paragraph, the lines broke inside "in der Luft nochmal:
    // Eierschub" and a key stood at the end of a line, apart from what it does.
    this.help = el("ul", { class: "help", id: "controls-help" });
    for (const [k, what] of [["← → / A D", "laufen"], ["Shift", "langsam"], ["Leertaste / ↑", "springen, in der Luft nochmal: Eierschub"], ["X", "Kiesel werfen"], ["R", "Neustart"]]) {
      this.help.append(el("li", {}, el("kbd", { text: k }), ` ${what}`));
    }
    this.playBar = el("div", { class: "bar" }, this.restartBtn, this.downloadBtn, this.replayHint);
    // Touch controls: buttons that hold the same keys as the keyboard (phones, tablets).
    this.pad = el("div", { class: "pad", role: "group", "aria-label": "Tasten zum Tippen" });
    this.padButtons = [];
    for (const [label, code, cls] of [["◀", "ArrowLeft", "move"], ["▶", "ArrowRight", "move"], ["Wurf", "KeyX", "small"], ["langsam", "ShiftLeft", "small"], ["Sprung", "Space", "jump"]]) {
      const b = el("button", { type: "button", class: `pad-${cls}`, "aria-label": { ArrowLeft: "links", ArrowRight: "rechts" }[code] || label, text: label });
      const release = () => { this.keys.up(code); b.classList.remove("held"); };
      this.padButtons.push(b);
      b.addEventListener("pointerdown", (e) => {
        e.preventDefault();
        b.setPointerCapture(e.pointerId);
        this.keys.down(code);
        this.go();
        b.classList.add("held");
      });
      b.addEventListener("pointerup", release);
      b.addEventListener("pointercancel", release);
      b.addEventListener("contextmenu", (e) => e.preventDefault());
      this.pad.append(b);
    }
    this.playPanel = el("div", { class: "panel" }, this.pad, this.playBar, this.help);

    // Watch controls.
    this.playPause = el("button", { type: "button", id: "watch-play", "aria-pressed": "false", text: "▶ Abspielen" });
    this.playPause.addEventListener("click", () => this.togglePlay());
    this.stepBtn = el("button", { type: "button", id: "watch-step", text: "+1 Tick" });
    this.stepBtn.addEventListener("click", () => { this.paused = true; this.updatePlayButton(); this.watchTicks(1); this.draw(); });
    this.speedSel = el("select", { id: "watch-speed" });
    for (const s of SPEEDS) {
      const opt = el("option", { value: String(s), text: `${String(s).replace(".", ",")}×` });
      if (s === 1) opt.selected = true;
      this.speedSel.append(opt);
    }
    this.speedSel.addEventListener("change", () => { this.speed = Number(this.speedSel.value); });
    this.scrub = el("input", { type: "range", id: "watch-scrub", min: "0", max: "0", value: "0", step: "1" });
    this.scrub.addEventListener("input", () => this.seek(Number(this.scrub.value)));
    this.actionOut = el("span", { class: "action", id: "watch-action", "aria-label": "Aktion" });
    this.verdict = el("p", { class: "verdict", id: "verdict", "aria-live": "polite" });
    this.watchPanel = el("div", { class: "panel" },
      el("div", { class: "bar" }, this.playPause, this.stepBtn,
        el("label", { for: "watch-speed", class: "inline" }, "Tempo ", this.speedSel)),
      el("label", { for: "watch-scrub", class: "scrub" }, el("span", { class: "sr-only", text: "Tick" }), this.scrub),
      el("div", { class: "bar" }, el("span", { text: "Aktion: " }), this.actionOut),
      this.verdict);
    this.side.append(this.playPanel, this.watchPanel);

    this.canvas.addEventListener("keydown", (e) => this.key(e, true));
    this.canvas.addEventListener("keyup", (e) => this.key(e, false));
    this.canvas.addEventListener("blur", () => this.releaseAll());
    // The win/death dialog: its buttons take Tab, Enter and Space, R restarts from there too,
    // and a key held through the end of the run (auto-repeat) presses none of them.
    this.overlay.addEventListener("keydown", (e) => {
      // The replay's text to copy takes its keys itself.
      if (e.target.tagName === "TEXTAREA") return;
      if (e.repeat) {
        e.preventDefault();
        return;
      }
      if (e.code === "KeyR" && !e.ctrlKey && !e.metaKey && !e.altKey && this.mode === "play") {
        e.preventDefault();
        this.restart();
      }
    });
  }

  /** Focus lost: every key and touch button is released, and looks it. */
  releaseAll() {
    this.keys.clear();
    for (const b of this.padButtons) b.classList.remove("held");
  }

  key(e, down) {
    // A release always counts (a key let go while Ctrl is down); a press with Ctrl, Alt or
    // Meta is the browser's shortcut, not the game's.
    const shortcut = e.ctrlKey || e.metaKey || e.altKey;
    if (down && shortcut) return;
    if (down && e.code === "KeyR" && this.mode === "play") {
      e.preventDefault();
      if (!e.repeat) this.restart();
      return;
    }
    if (!GAME_KEYS.has(e.code)) return;
    if (!shortcut) e.preventDefault();
    if (!down) this.keys.up(e.code);
    // An auto-repeat is no press: it neither starts the clock nor holds a key that was not
    // pressed here (Space held through the dialog of the last run).
    else if (!e.repeat) {
      this.go();
      this.keys.down(e.code);
    }
  }

  setMode(mode) {
    // Watching needs a tape: without one the loop would read a tape that is not there.
    if (mode === "watch" && !this.rev.replay) mode = "play";
    this.mode = mode;
    this.playTab.setAttribute("aria-pressed", String(mode === "play"));
    this.watchTab.setAttribute("aria-pressed", String(mode === "watch"));
    this.playPanel.hidden = mode !== "play";
    this.watchPanel.hidden = mode !== "watch";
    this.root.dataset.mode = mode;
    if (mode === "play") this.restart();
    else this.startWatch();
    // What has to fit under the canvas changed (the pad or the replay's controls).
    this.resize();
  }

  newGame() {
    if (this.game) this.game.free();
    this.game = this.engine.newGame(this.rev.map, this.rev.seed);
    this.view = this.game.view();
    this.lastEggs = 0;
    this.particles = [];
  }

  restart() {
    this.mode = "play";
    this.practice = false;
    this.newGame();
    this.keys.settle();
    this.actions = [];
    this.finished = null;
    this.hideOverlay();
    this.replayOff(REPLAY_BEFORE_RUN);
    this.wait();
    this.announce("Bereit: die Zeit läuft ab deiner ersten Taste.");
    this.draw();
    if (document.activeElement !== this.canvas) this.canvas.focus({ preventScroll: true });
  }

  /** After a death past a checkpoint: on from there, as practice (no replay of the level). */
  respawn() {
    const next = this.game.fromCheckpoint(this.rev.seed);
    if (!next) return this.restart();
    this.game.free();
    this.game = next;
    this.view = this.game.view();
    this.lastEggs = 0;
    this.particles = [];
    this.practice = true;
    this.keys.settle();
    this.actions = [];
    this.finished = null;
    this.hideOverlay();
    this.replayOff(REPLAY_PRACTICE);
    this.wait();
    this.announce("Weiter vom Rastplatz (Übung), ab deiner ersten Taste.");
    this.draw();
    this.canvas.focus({ preventScroll: true });
  }

  // ---- play ----

  /** Holds the run at its first tick until the player's first input. */
  wait() {
    this.waiting = true;
    this.showReady(true);
  }

  /** Shows or hides the "Bereit" hint beside the clock under the canvas. */
  showReady(on) {
    // The line keeps the height it had with the hint (on a narrow phone two lines), so that
    // the pad under it stays under the thumb as the run starts.
    this.caption.style.minHeight = on || this.mode !== "play" ? "" : `${this.caption.offsetHeight}px`;
    // Beside the practice chip the hint is shorter, so the line stays one line on a phone
    // as a counted run's does (the pad under it stays where it was).
    this.readyHint.textContent = this.practice ? "Zeit ab deiner ersten Taste." : "die Zeit läuft ab deiner ersten Taste.";
    this.readyHint.classList.toggle("on", on);
    this.readyHint.setAttribute("aria-hidden", String(!on));
  }

  /** The first input: the run (and its clock) starts. */
  go() {
    if (!this.waiting || this.mode !== "play") return;
    this.waiting = false;
    this.showReady(false);
    this.acc = 0;
  }

  playTick() {
    if (this.finished) return;
    const a = this.keys.tick();
    this.actions.push(a);
    const status = this.game.step(a, 1);
    this.view = this.game.view();
    this.effects();
    if (status !== RUNNING) this.finish(status);
    // The referee takes no replay longer than this: the run ends here, its replay still valid.
    else if (this.actions.length >= REPLAY_MAX_TICKS) this.finish(TIME_UP);
  }

  finish(status) {
    const ticks = this.game.tick;
    // A practice run from a checkpoint is on another map: it is no replay of this level.
    const valid = !this.practice && this.actions.length <= REPLAY_MAX_TICKS;
    this.finished = { status, ticks, replay: valid ? toReplay(this.rev.seed, this.actions) : null };
    if (valid) this.replayOn();
    else this.replayOff(this.practice ? REPLAY_PRACTICE : REPLAY_BEFORE_RUN);
    const download = valid ? [this.embedded ? "Replay kopieren" : "Replay speichern", () => this.download()] : null;
    const fromCheckpoint = this.view.checkpoint >= 0 ? ["Ab Rastplatz", () => this.respawn()] : null;
    if (status === TIME_UP) {
      const minutes = REPLAY_MAX_TICKS / 3600;
      this.showOverlay("Die Zeit ist um", `Ein Lauf dauert höchstens ${minutes} Minuten (${REPLAY_MAX_TICKS.toLocaleString("de-DE")} Ticks); ein längeres Replay nimmt der Schiedsrichter nicht an. Versuch es noch einmal.`, [
        ["Nochmal", () => this.restart()],
        fromCheckpoint,
        download,
      ], "timeout");
    } else if (status === WON && this.practice) {
      this.showOverlay("Geschafft!", `Vom Rastplatz aus ins Nest: ${ticks} Ticks. Ein Übungslauf; für das Replay des Levels spiel es von vorn.`, [
        ["Von vorn", () => this.restart()],
        this.onNext ? ["Weiter", () => this.onNext()] : null,
      ], "won");
    } else if (status === WON) {
      const { best, previous } = recordWin(this.rev.revisionId, ticks, this.rev.progressFrom);
      const record = previous == null ? "Deine erste Bestzeit." : ticks < previous ? `Neue Bestzeit! (vorher ${seconds(previous)})` : `Bestzeit: ${seconds(best)}`;
      this.finished.best = best;
      this.showOverlay("Geschafft!", `Der Vogel ist im Nest. Zeit: ${seconds(ticks)}. ${record}`, [
        this.onNext ? ["Weiter", () => this.onNext()] : null,
        ["Nochmal", () => this.restart()],
        download,
      ], "won");
    } else {
      this.showOverlay("Autsch!", `${deathText(this.game.deathCause())}, bei Tick ${ticks}.`, [
        fromCheckpoint,
        ["Nochmal", () => this.restart()],
        download,
      ], "lost");
    }
  }

  /** The replay button off, with what to do to have a replay (`why`) beside it. */
  replayOff(why) {
    this.downloadBtn.disabled = true;
    this.downloadBtn.setAttribute("aria-describedby", "replay-hint");
    this.replayHint.textContent = why;
    this.replayHint.hidden = false;
  }

  /** A run ended that is a replay of the level: the button on, the hint gone. */
  replayOn() {
    this.downloadBtn.disabled = false;
    this.downloadBtn.removeAttribute("aria-describedby");
    this.replayHint.textContent = "";
    this.replayHint.hidden = true;
  }

  download() {
    if (!this.finished || !this.finished.replay) return;
    const text = JSON.stringify(this.finished.replay);
    if (this.embedded) return this.copy(text);
    const blob = new Blob([text], { type: "application/json" });
    const a = el("a", { href: URL.createObjectURL(blob), download: `${this.rev.name}-${this.finished.ticks}.replay.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  /** In a host's frame a download does nothing (its sandbox has no allow-downloads): the
   * replay goes to the clipboard, or, where the frame may not write it either, is shown
   * selected for the person to copy. */
  async copy(text) {
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch {
      // No clipboard in this frame (its permissions, or no user gesture): the text below.
    }
    const box = el("div", { class: "replay-copy", id: "replay-copy" });
    if (copied) {
      box.append(el("p", { role: "status", text: "Replay kopiert (JSON, wie simulate_replay es nimmt)." }));
    } else {
      box.append(el("label", { for: "replay-json", text: "Kopieren geht hier nicht; das Replay als JSON zum Kopieren (Strg+C):" }));
      const area = el("textarea", { id: "replay-json", rows: "3", readonly: true, spellcheck: "false" });
      area.value = text;
      box.append(area);
    }
    // A finished run has its dialog open; the copy goes there, once.
    const where = this.overlayOpen ? this.overlay : this.playPanel;
    const shown = this.root.querySelector("#replay-copy");
    if (shown) shown.remove();
    where.append(box);
    const area = box.querySelector("textarea");
    if (area) {
      area.focus({ preventScroll: true });
      area.select();
    }
  }

  // ---- watch ----

  startWatch() {
    this.hideOverlay();
    this.waiting = false;
    this.showReady(false);
    this.tape = perTick(this.rev.replay);
    // Which of the replay's steps (an action held for some ticks) each tick belongs to.
    this.stepAt = new Uint16Array(this.tape.length);
    let at = 0;
    (this.rev.replay.actions || []).forEach((step, i) => {
      this.stepAt.fill(i, at, Math.min(at + step.ticks, this.tape.length));
      at += step.ticks;
    });
    // The run's own length: a run that ends before its inputs do (lost at tick 14 of a replay
    // of 120 ticks) read "Tick 14 / 120" at its end, and the scrubber went on past it.
    this.playTo(this.tape.length);
    this.runTicks = this.game.tick;
    this.scrub.max = String(this.runTicks);
    this.verdict.textContent = "";
    delete this.verdict.dataset.verified;
    this.paused = true;
    this.seek(0);
    this.updatePlayButton();
  }

  togglePlay() {
    if (this.mode !== "watch") return;
    if (this.watchDone() && this.paused) this.seek(0);
    this.paused = !this.paused;
    this.updatePlayButton();
  }

  updatePlayButton() {
    this.playPause.textContent = this.paused ? "▶ Abspielen" : "⏸ Pause";
    this.playPause.setAttribute("aria-pressed", String(!this.paused));
  }

  watchDone() {
    return this.view.status !== RUNNING || this.game.tick >= this.tape.length;
  }

  /** A new game run on the replay's inputs up to tick `t`, or to the run's end before it. */
  playTo(t) {
    this.newGame();
    const target = Math.max(0, Math.min(t, this.tape.length));
    let i = 0;
    while (i < target) {
      const a = this.tape[i];
      let n = 1;
      while (i + n < target && this.tape[i + n] === a) n++;
      if (this.game.step(a, n) !== RUNNING) break;
      i += n;
    }
  }

  /** Jumps to tick `t` of the replay (re-simulated from the start: a few ms at most). */
  seek(t) {
    this.playTo(t);
    this.view = this.game.view();
    this.lastEggs = this.view.eggs;
    this.afterWatchStep();
    this.draw();
  }

  watchTicks(n) {
    for (let k = 0; k < n && !this.watchDone(); k++) {
      this.game.step(this.tape[this.game.tick], 1);
      this.view = this.game.view();
      this.effects();
    }
    this.afterWatchStep();
  }

  afterWatchStep() {
    const t = this.game.tick;
    this.scrub.value = String(t);
    const a = this.tape[Math.min(t, this.tape.length - 1)] ?? 4;
    this.showAction(a, this.stepAt[Math.min(t, this.tape.length - 1)] ?? 0);
    if (this.watchDone()) {
      this.paused = true;
      this.updatePlayButton();
      this.judge();
    } else if (this.verdict.dataset.verified) {
      this.verdict.textContent = "";
      delete this.verdict.dataset.verified;
    }
  }

  /** The action of the replay's step `step` (0-based) as chips and in words a spectator
   *  reads ("steuert nach rechts und springt · Schritt 2 von 11"), not its index. */
  showAction(a, step) {
    const d = describeAction(a);
    const steps = (this.rev.replay.actions || []).length;
    const arrow = { left: "←", right: "→", "slow left": "‹ langsam", "slow right": "langsam ›", none: "·" }[d.move];
    this.actionOut.replaceChildren(
      el("span", { class: "chip on", text: arrow }),
      el("span", { class: d.jump ? "chip on" : "chip", text: "Sprung" }),
      el("span", { class: d.shoot ? "chip on" : "chip", text: "Wurf" }),
      el("span", { class: "words", text: actionWords(d) }),
      el("span", { class: "num", text: steps ? `Schritt ${step + 1} von ${steps}` : "" }),
    );
  }

  /** At the end of the replay: the browser's own run against the stored evidence. */
  judge() {
    const ev = this.rev.evidence || {};
    const hash = this.game.stateHash();
    const ticks = this.game.tick;
    const outcome = { [WON]: "won", [DEAD]: "lost" }[this.view.status] || "unresolved";
    if (ev.outcome == null && ev.stateHash == null) {
      // Nothing to compare with (a replay file opened without the server): the browser's own run.
      const died = outcome === "lost" ? ` (${deathText(this.game.deathCause())})` : "";
      this.verdict.dataset.verified = "none";
      this.verdict.className = "verdict";
      this.verdict.textContent = `Dein Browser kam auf ${outcome}${died}, ${ticks} Ticks, stateHash ${short(hash)}…. Ohne Nachweis gibt es nichts zu vergleichen.`;
      return;
    }
    const ok = hash === ev.stateHash && ticks === ev.ticks && outcome === ev.outcome;
    this.verdict.dataset.verified = ok ? "yes" : "no";
    this.verdict.className = ok ? "verdict ok" : "verdict bad";
    if (ok) {
      this.verdict.textContent = `✓ In deinem Browser bestätigt: ${ticks} Ticks, stateHash ${short(hash)}… wie im Nachweis.`;
    } else {
      const engineNote = this.rev.engineVersion !== this.engine.engineVersion ? " Der Nachweis stammt von einer anderen Engine." : "";
      // A replay that loses here says what killed the bird, as the play view does.
      const died = outcome === "lost" ? ` (${deathText(this.game.deathCause())})` : "";
      this.verdict.textContent = `✗ Abweichung: dein Browser kam auf ${outcome}${died}, ${ticks} Ticks, stateHash ${short(hash)}…; der Nachweis sagt ${ev.outcome}, ${ev.ticks} Ticks, ${short(ev.stateHash)}….${engineNote}`;
    }
  }

  // ---- loop ----

  frame(now) {
    this.raf = requestAnimationFrame(this.frame);
    const dt = Math.min(now - this.last, 250);
    this.last = now;
    if (TEST_MODE) return;
    if (this.mode === "play" && !this.finished && !this.overlayOpen && !this.waiting) {
      this.acc += dt;
      let n = 0;
      while (this.acc >= TICK_MS && n < 5) {
        this.playTick();
        this.acc -= TICK_MS;
        n++;
      }
      if (n === 5) this.acc = 0;
    } else if (this.mode === "watch" && !this.paused) {
      this.acc += dt * this.speed;
      const n = Math.floor(this.acc / TICK_MS);
      this.acc -= n * TICK_MS;
      if (n > 0) this.watchTicks(n);
    } else {
      this.acc = 0;
    }
    this.draw();
  }

  testHook() {
    return {
      tick: (n = 1) => {
        if (this.mode === "play") {
          this.go();
          for (let k = 0; k < n && !this.finished; k++) this.playTick();
        }
        else this.watchTicks(n);
        this.draw();
        return this.testState();
      },
      state: () => this.testState(),
      lastReplay: () => (this.finished ? this.finished.replay : null),
      stage: this,
    };
  }

  testState() {
    return {
      mode: this.mode,
      tick: this.game.tick,
      status: this.view.status,
      stateHash: this.game.stateHash(),
      checkpoint: this.view.checkpoint,
      practice: !!this.practice,
      waiting: !!this.waiting,
      finished: this.finished ? { status: this.finished.status, ticks: this.finished.ticks } : null,
    };
  }

  destroy() {
    cancelAnimationFrame(this.raf);
    this.ro.disconnect();
    window.removeEventListener("resize", this.onWindowResize);
    if (this.game) this.game.free();
    this.game = null;
    if (TEST_MODE && window.horstTest && window.horstTest.stage === this) delete window.horstTest;
  }

  // ---- overlay ----

  showOverlay(title, text, buttons, kind) {
    this.overlay.replaceChildren(el("h3", { id: "overlay-title", text: title }), el("p", { text }));
    const bar = el("div", { class: "bar" });
    for (const b of buttons) {
      if (!b) continue;
      const btn = el("button", { type: "button", text: b[0] });
      btn.addEventListener("click", b[1]);
      bar.append(btn);
    }
    this.overlay.append(bar);
    this.overlay.dataset.kind = kind;
    this.overlay.hidden = false;
    this.overlayOpen = true;
    this.announce(`${title} ${text}`);
    const first = bar.querySelector("button");
    // A win hands the focus to "Weiter" (or "Nochmal") at once, tests included.
    if (first && (!TEST_MODE || kind === "won")) first.focus({ preventScroll: true });
  }

  hideOverlay() {
    this.overlay.hidden = true;
    this.overlayOpen = false;
  }

  announce(text) {
    this.say.textContent = text;
  }

  // ---- drawing ----

  resize() {
    const m = this.game ? this.game.map : null;
    const levelH = m ? m.height * 16 : 240;
    const levelW = m ? m.width * 16 : 320;
    const cw = this.wrap.clientWidth || 320;
    const narrow = cw < 700;
    // In a host's frame (the MCP App) the height is the host's answer to the app's own
    // report: sized from it, the canvas would only ever grow. There the width decides: at
    // most 16:9 of it (4:3 when narrow).
    let maxH = this.embedded
      ? Math.min(760, Math.floor(cw * (narrow ? 0.75 : 0.5625)))
      : Math.min(760, Math.floor(window.innerHeight * (narrow ? 0.45 : 0.72)));
    // A phone held sideways (the touch pad in a column beside the canvas, game.css): the
    // canvas takes the height left under the page's head, so that all of it is on screen.
    const sideways = !this.embedded && typeof matchMedia === "function" && matchMedia(SIDEWAYS).matches;
    if (sideways) {
      const top = this.wrap.getBoundingClientRect().top + window.scrollY;
      maxH = Math.max(96, Math.floor(window.innerHeight - top - 8 - this.captionHeight()));
    } else if (!this.embedded) {
      // The side under the canvas (one column: a phone upright, a tablet): what the hands need
      // at once (the touch pad, or the replay's buttons and scrubber) stays on the first
      // screen with the canvas, whatever the level's size (a tablet's tall canvas put the
      // replay's step button below the screen's edge).
      const below = this.controlsBelow();
      if (below > 0) {
        const top = this.wrap.getBoundingClientRect().top + window.scrollY;
        maxH = Math.min(maxH, Math.max(96, Math.floor(window.innerHeight - top - this.captionHeight() - below - 8)));
      }
    }
    // About 26 tiles across on a wide screen, 12 on a phone; never so big that 8 rows of
    // the level (7 on a phone held sideways) do not fit.
    const cols = narrow ? 12 : 26;
    const rows = Math.min(m ? m.height : 8, sideways ? 7 : 8);
    const s = Math.max(1, Math.min(8, Math.round(cw / (16 * cols)), Math.floor(maxH / (16 * rows))));
    this.scale = s;
    const w = Math.max(16, Math.min(Math.floor(cw / s), levelW + 64));
    // A short level gets a short screen: three rows of sky above it, the abyss below.
    const h = Math.max(16, Math.min(Math.floor(maxH / s), levelH + 64));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    this.canvas.style.width = `${w * s}px`;
    this.canvas.style.height = `${h * s}px`;
    this.ctx.imageSmoothingEnabled = false;
    if (this.game) this.draw();
  }

  /** How far below the screen's frame (the canvas and its line) the controls to play or step
   *  end, when they are under it (0 when they are beside it): the touch pad while playing on a
   *  touch screen, the play/step buttons and the scrubber while watching. */
  controlsBelow() {
    const wrap = this.wrap.getBoundingClientRect();
    const side = this.side.getBoundingClientRect();
    if (side.top < wrap.bottom - 1) return 0;
    const pad = this.pad.offsetHeight ? this.pad : null;
    const last = this.mode === "watch" ? this.scrub.parentElement : this.mode === "play" ? pad : null;
    if (!last || !last.offsetHeight) return 0;
    return Math.max(0, Math.ceil(last.getBoundingClientRect().bottom - wrap.bottom));
  }

  /** The height of the line under the canvas (the clock, the berries, "Bereit"), margins
   *  included. */
  captionHeight() {
    const h = this.caption.offsetHeight;
    if (!h) return 0;
    const cs = getComputedStyle(this.caption);
    return Math.ceil(h + parseFloat(cs.marginTop) + parseFloat(cs.marginBottom));
  }

  effects() {
    // A laid egg falls away below the bird (decoration only: the engine counts eggs).
    const v = this.view;
    if (v.eggs > this.lastEggs) {
      this.particles.push({ x: v.x / art.SUB + 4, y: v.y / art.SUB + 12, vy: 0, life: 40 });
    }
    this.lastEggs = v.eggs;
    for (const p of this.particles) {
      p.vy = Math.min(p.vy + 0.25, 4);
      p.y += p.vy;
      p.life--;
    }
    this.particles = this.particles.filter((p) => p.life > 0);
  }

  draw() {
    if (!this.game) return;
    drawScene(this.ctx, this.game.map, this.view, this.canvas.width, this.canvas.height, this.particles);
    const v = this.view;
    this.practiceOut.textContent = this.mode === "play" && this.practice ? "Übung" : "";
    this.tickOut.textContent = this.mode === "watch" ? `Tick ${v.tick} / ${this.runTicks}` : this.waiting ? "Bereit" : `Zeit ${seconds(v.tick)}`;
    const berries = v.berries.length;
    // Before the first input the line says "Bereit" and what it means; the berries join it
    // once the run runs (beside the hint they broke the line in two on a phone).
    this.berryOut.textContent = berries && !(this.mode === "play" && this.waiting) ? `Beeren ${v.collected}/${berries}` : "";
  }
}
