// The legend: every block and entity of the palette (from the engine module, the same table
// `list_palette` and `render_map` use), drawn by the game's own art beside its character and
// its German and English names.

import * as art from "./art.js";

const SAMPLE = { walker: { dir: "left" }, platform: { width: 1 } };

function swatch(draw) {
  const c = document.createElement("canvas");
  c.width = 16;
  c.height = 16;
  c.className = "swatch";
  c.setAttribute("aria-hidden", "true");
  const ctx = c.getContext("2d");
  ctx.fillStyle = "#cfe8fb";
  ctx.fillRect(0, 0, 16, 16);
  draw(ctx);
  return c;
}

function row(glyph, german, english, draw) {
  const li = document.createElement("li");
  const k = document.createElement("code");
  k.textContent = glyph;
  const name = document.createElement("span");
  name.className = "legend-name";
  name.textContent = german;
  const en = document.createElement("span");
  en.className = "legend-en";
  en.textContent = english;
  li.append(swatch(draw), k, name, en);
  return li;
}

/** A `<details>` with the legend of `palette` (the module's `info.palette`). */
export function legend(palette) {
  const d = document.createElement("details");
  d.className = "legend";
  const s = document.createElement("summary");
  s.textContent = "Legende: Blöcke und Wesen";
  const blocks = document.createElement("ul");
  blocks.className = "legend-list";
  for (const b of palette.blocks) {
    if (b.id === 0) continue;
    blocks.append(row(b.key, b.germanName, b.name, (ctx) => art.drawBlock(ctx, b.id, 0, 0, 3, 5)));
  }
  const ents = document.createElement("ul");
  ents.className = "legend-list";
  for (const e of palette.entities) {
    ents.append(row(e.glyph, e.germanName, e.name, (ctx) => art.drawEntity(ctx, e.key, 0, 0, SAMPLE[e.key] || {}, 0)));
  }
  ents.append(row("", "Vogel", "bird (you)", (ctx) => art.drawBird(ctx, 2, 1, 1)));
  const h1 = document.createElement("h3");
  h1.textContent = "Blöcke";
  const h2 = document.createElement("h3");
  h2.textContent = "Wesen und Dinge";
  d.append(s, h1, blocks, h2, ents);
  return d;
}

/** The bird for the page header, drawn in code. */
export function logo() {
  const c = document.createElement("canvas");
  c.width = 18;
  c.height = 16;
  c.className = "logo";
  c.setAttribute("aria-hidden", "true");
  art.drawBird(c.getContext("2d"), 2, 1, 1);
  return c;
}
