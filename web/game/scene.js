// One frame of the world: the backdrop, the blocks, the entities and the bird, drawn with
// the art of art.js from the engine's static map and its view of a tick. The stage draws
// every frame with it; the level cards draw their thumbnail with it (the level at tick 0),
// so a card shows the level as the game does.

import * as art from "./art.js";
import { DEAD } from "./engine.js";

/** The camera's top-left corner: centered on a level smaller than the screen, else
 * following `pos` and clamped to the level. */
const cam = (pos, view, size) => (size <= view ? -Math.floor((view - size) / 2) : Math.max(0, Math.min(size - view, pos - Math.floor(view / 2))));

/**
 * Draws `map` (Game.map) as it is in `view` (Game.view()) on `ctx`, a screen of
 * `vw` x `vh` game pixels, the camera around the bird. `eggs` are falling egg particles.
 */
export function drawScene(ctx, map, view, vw, vh, eggs = []) {
  const m = map;
  const v = view;
  const W = m.width * 16;
  const H = m.height * 16;
  const bx = Math.floor(v.x / art.SUB);
  const by = Math.floor(v.y / art.SUB);
  const camX = cam(bx + 6, vw, W);
  const camY = cam(by + 7, vh, H);
  art.drawBackdrop(ctx, vw, vh, camX);
  ctx.save();
  ctx.translate(-camX, -camY);
  // Below the bottom row the bird falls out of the map.
  if (camY + vh > H) {
    const g = ctx.createLinearGradient(0, H, 0, H + 48);
    g.addColorStop(0, "#24324a");
    g.addColorStop(1, "#0e1626");
    ctx.fillStyle = g;
    ctx.fillRect(camX, H, vw, camY + vh - H);
  }
  const tick = v.tick;
  const dyn = new Map();
  for (const d of v.dynTiles) dyn.set(d.tile, d);
  const x0 = Math.max(0, Math.floor(camX / 16));
  const y0 = Math.max(0, Math.floor(camY / 16));
  const x1 = Math.min(m.width, Math.ceil((camX + vw) / 16) + 1);
  const y1 = Math.min(m.height, Math.ceil((camY + vh) / 16) + 1);
  for (let ty = y0; ty < y1; ty++) {
    for (let tx = x0; tx < x1; tx++) {
      const i = ty * m.width + tx;
      const id = m.tiles[i];
      if (id) art.drawBlock(ctx, id, tx * 16, ty * 16, tx, ty, dyn.get(i) || null, tick);
    }
  }
  // Static entities (start, nest, springs, checkpoints, spawners, berries not taken).
  let berry = 0;
  let checkpoint = 0;
  for (const e of m.entities) {
    const x = e.x * 16;
    const y = e.y * 16;
    if (e.kind === "collectible") {
      const taken = v.berries[berry++]?.taken;
      if (!taken) art.drawBerry(ctx, x, y + (((tick >> 4) + e.x) % 2));
    } else if (e.kind === "checkpoint") {
      art.drawCheckpoint(ctx, x, y, v.checkpoint >= 0 && checkpoint === v.checkpoint);
      checkpoint++;
    } else if (["start", "nest", "spring", "rockfall"].includes(e.kind)) {
      art.drawEntity(ctx, e.kind, x, y, e.params, tick);
    }
  }
  // Moving things: platforms, enemies, rocks, pebbles, eggs, the bird.
  const platforms = m.entities.filter((e) => e.kind === "platform");
  v.platforms.forEach((p, i) => art.drawPlatform(ctx, Math.floor(p.x / art.SUB), Math.floor(p.y / art.SUB), platforms[i]?.params.width ?? 1));
  for (const w of v.walkers) if (w.alive) art.drawWalker(ctx, Math.floor(w.x / art.SUB), Math.floor(w.y / art.SUB), w.dir, tick);
  const flyers = m.entities.filter((e) => e.kind === "flyer");
  v.flyers.forEach((f, i) => {
    const facing = flyers[i]?.params.axis === "h" ? f.dir : 1;
    if (f.alive) art.drawFlyer(ctx, Math.floor(f.x / art.SUB), Math.floor(f.y / art.SUB), facing || 1, tick);
  });
  for (const r of v.rocks) if (r.active) art.drawRock(ctx, Math.floor(r.x / art.SUB), Math.floor(r.y / art.SUB));
  for (const p of v.pebbles) if (p.active) art.drawPebble(ctx, Math.floor(p.x / art.SUB), Math.floor(p.y / art.SUB));
  for (const p of eggs) art.drawEgg(ctx, Math.floor(p.x), Math.floor(p.y));
  art.drawBird(ctx, bx, by, v.facing, { onGround: v.onGround, tick, moving: v.vx !== 0, dead: v.status === DEAD });
  ctx.restore();
}

/** Thumbnail size in game pixels: 20 x 9 tiles around the start, drawn at 1:1 and
 * scaled by CSS (pixelated). */
export const THUMB_W = 320;
export const THUMB_H = 144;

/**
 * A canvas showing level `mapText` at its start (tick 0), as the game draws it. Returns
 * null when the engine does not accept the map (the card then shows no picture).
 */
export function thumbnail(engine, mapText, seed, label) {
  let game;
  try {
    game = engine.newGame(mapText, seed);
  } catch {
    return null;
  }
  try {
    const c = document.createElement("canvas");
    c.width = THUMB_W;
    c.height = THUMB_H;
    c.className = "thumb";
    c.setAttribute("role", "img");
    c.setAttribute("aria-label", label);
    const ctx = c.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    drawScene(ctx, game.map, game.view(), THUMB_W, THUMB_H);
    return c;
  } finally {
    game.free();
  }
}
