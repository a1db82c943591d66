// The art of Game con Vogel, drawn in code on a 2D canvas (no image files): one function
// per block and entity of the palette, at 16 game pixels a tile. The stage draws the world
// with them; the legend draws each one alone. Integer coordinates only, so nothing blurs.

export const TILE_PX = 16;
/** Sub-units (1/256 px) per game pixel. */
export const SUB = 256;

const C = {
  rock: "#7b8494", rockDark: "#4b5260", rockLight: "#a3abb8",
  earth: "#8a5a35", earthDark: "#6b4226", earthDot: "#a06c44",
  grass: "#4fae4a", grassDark: "#2f7d32", grassLight: "#7fd16f",
  ice: "#bfe8f7", iceDark: "#7cc0dc", iceShine: "#ffffff",
  snow: "#f5f8fb", snowShade: "#cfdbe6",
  wood: "#a8743d", woodDark: "#6e4a22", woodLight: "#c9955a",
  spike: "#b4bdc9", spikeDark: "#3f4854",
  crumble: "#c9a56b", crumbleDark: "#8a6a3a",
  crack: "#2b2f36",
};

function rect(ctx, x, y, w, h, color) {
  ctx.fillStyle = color;
  ctx.fillRect(x, y, w, h);
}

/** A deterministic speckle pattern per tile (no randomness: the same tile looks the same). */
function speck(tx, ty, i) {
  let h = (tx * 73856093) ^ (ty * 19349663) ^ (i * 83492791);
  h = (h ^ (h >>> 13)) * 1274126177;
  return (h ^ (h >>> 16)) >>> 0;
}

// ---- blocks ----

function rock(ctx, x, y, tx, ty) {
  rect(ctx, x, y, 16, 16, C.rock);
  rect(ctx, x, y, 16, 1, C.rockLight);
  rect(ctx, x, y, 1, 16, C.rockLight);
  rect(ctx, x, y + 15, 16, 1, C.rockDark);
  rect(ctx, x + 15, y, 1, 16, C.rockDark);
  for (let i = 0; i < 3; i++) {
    const s = speck(tx, ty, i);
    rect(ctx, x + 2 + (s % 11), y + 2 + ((s >>> 8) % 11), 2, 1, C.rockDark);
  }
}

function earth(ctx, x, y, tx, ty) {
  rect(ctx, x, y, 16, 16, C.earth);
  for (let i = 0; i < 4; i++) {
    const s = speck(tx, ty, i);
    rect(ctx, x + 1 + (s % 13), y + 1 + ((s >>> 8) % 13), 2, 2, i % 2 ? C.earthDark : C.earthDot);
  }
}

function grass(ctx, x, y, tx, ty) {
  earth(ctx, x, y, tx, ty);
  rect(ctx, x, y, 16, 5, C.grass);
  rect(ctx, x, y, 16, 1, C.grassLight);
  // Blades hanging over the earth.
  for (let i = 0; i < 16; i += 3) {
    const s = speck(tx, ty, i + 9);
    rect(ctx, x + i, y + 5, 2, 1 + (s % 2), C.grassDark);
  }
}

function ice(ctx, x, y) {
  rect(ctx, x, y, 16, 16, C.ice);
  rect(ctx, x, y + 14, 16, 2, C.iceDark);
  rect(ctx, x + 15, y, 1, 16, C.iceDark);
  // The shine: a short diagonal and a dot.
  for (let i = 0; i < 5; i++) rect(ctx, x + 3 + i, y + 8 - i, 1, 1, C.iceShine);
  rect(ctx, x + 11, y + 3, 2, 1, C.iceShine);
}

function snow(ctx, x, y) {
  rect(ctx, x, y, 16, 16, C.snow);
  rect(ctx, x, y + 13, 16, 3, C.snowShade);
  rect(ctx, x + 3, y + 6, 3, 1, C.snowShade);
  rect(ctx, x + 10, y + 9, 3, 1, C.snowShade);
}

function ledge(ctx, x, y) {
  rect(ctx, x, y, 16, 4, C.wood);
  rect(ctx, x, y, 16, 1, C.woodLight);
  rect(ctx, x, y + 4, 16, 1, C.woodDark);
  rect(ctx, x + 7, y + 1, 1, 3, C.woodDark);
  // Little brackets under the plank.
  rect(ctx, x + 2, y + 5, 2, 2, C.woodDark);
  rect(ctx, x + 12, y + 5, 2, 2, C.woodDark);
}

function spikes(ctx, x, y) {
  // Three clear triangles, silver with a dark outline, on a base plate.
  rect(ctx, x, y + 14, 16, 2, C.spikeDark);
  for (let k = 0; k < 3; k++) {
    const bx = x + k * 5 + 1;
    for (let r = 0; r < 11; r++) {
      const half = Math.floor((r * 5) / 22);
      const left = bx + 2 - half;
      const w = 1 + 2 * half;
      rect(ctx, left, y + 3 + r, w, 1, C.spike);
      rect(ctx, left, y + 3 + r, 1, 1, C.spikeDark);
      rect(ctx, left + w - 1, y + 3 + r, 1, 1, C.spikeDark);
    }
    rect(ctx, bx + 2, y + 3, 1, 1, "#ffffff");
  }
}

function cracked(ctx, x, y, tx, ty) {
  rock(ctx, x, y, tx, ty);
  // Visible cracks: a zigzag and a branch.
  const pts = [[3, 1], [5, 4], [4, 7], [7, 9], [6, 12], [8, 15]];
  for (const [px, py] of pts) rect(ctx, x + px, y + py, 2, 2, C.crack);
  rect(ctx, x + 9, y + 7, 2, 1, C.crack);
  rect(ctx, x + 11, y + 6, 2, 1, C.crack);
  rect(ctx, x + 12, y + 4, 1, 2, C.crack);
}

function crumbling(ctx, x, y, shake = 0) {
  const sx = x + shake;
  rect(ctx, sx, y, 16, 5, C.crumble);
  rect(ctx, sx, y + 5, 16, 1, C.crumbleDark);
  // The dots that say "this will go".
  for (let i = 1; i < 16; i += 3) rect(ctx, sx + i, y + 2 + (i % 2), 1, 1, C.crumbleDark);
  rect(ctx, sx + 3, y + 6, 1, 1, C.crumbleDark);
  rect(ctx, sx + 11, y + 6, 1, 1, C.crumbleDark);
}

/** Draws block `id` (palette ids 0-9) at game pixel (x, y). `dyn` = {state, timer} or null. */
export function drawBlock(ctx, id, x, y, tx = 0, ty = 0, dyn = null, tick = 0) {
  switch (id) {
    case 1: return rock(ctx, x, y, tx, ty);
    case 2: return grass(ctx, x, y, tx, ty);
    case 3: return earth(ctx, x, y, tx, ty);
    case 4: return ice(ctx, x, y);
    case 5: return snow(ctx, x, y);
    case 6: return ledge(ctx, x, y);
    case 7: return spikes(ctx, x, y);
    case 8:
      if (dyn && dyn.state === 2) return;
      return cracked(ctx, x, y, tx, ty);
    case 9: {
      if (dyn && dyn.state === 2) return;
      const shake = dyn && dyn.state === 1 ? ((tick >> 1) % 2 ? 1 : -1) : 0;
      return crumbling(ctx, x, y, shake);
    }
    default:
  }
}

// ---- entities ----

/** The bird, its hitbox (12 x 14) at (x, y). */
export function drawBird(ctx, x, y, facing = 1, { onGround = true, tick = 0, moving = false, dead = false } = {}) {
  const body = dead ? "#8d8d8d" : "#3d6fd6";
  const dark = dead ? "#5c5c5c" : "#244a9a";
  const belly = dead ? "#cfcfcf" : "#ffe3a3";
  const beak = "#ff9f1c";
  // Round body.
  rect(ctx, x + 2, y + 1, 8, 1, body);
  rect(ctx, x + 1, y + 2, 10, 1, body);
  rect(ctx, x, y + 3, 12, 7, body);
  rect(ctx, x + 1, y + 10, 10, 1, body);
  rect(ctx, x + 2, y + 11, 8, 1, dark);
  // Belly on the side it faces.
  const bx = facing > 0 ? x + 5 : x + 2;
  rect(ctx, bx, y + 6, 5, 4, belly);
  // Wing.
  const wx = facing > 0 ? x + 1 : x + 7;
  const flap = !onGround && (tick >> 2) % 2 ? -1 : 0;
  rect(ctx, wx, y + 5 + flap, 4, 3, dark);
  // Eye and beak.
  const ex = facing > 0 ? x + 8 : x + 3;
  rect(ctx, ex, y + 3, 2, 2, "#ffffff");
  rect(ctx, ex + (facing > 0 ? 1 : 0), y + 4, 1, 1, dead ? "#5c5c5c" : "#111111");
  const kx = facing > 0 ? x + 12 : x - 3;
  rect(ctx, kx, y + 5, 3, 2, beak);
  rect(ctx, facing > 0 ? kx : kx + 1, y + 7, 2, 1, "#d97706");
  // Crest.
  rect(ctx, x + 5, y, 2, 1, dark);
  // Feet: stepping on the ground, tucked in the air.
  if (onGround) {
    const step = moving && (tick >> 3) % 2 ? 1 : 0;
    rect(ctx, x + 3 - step, y + 12, 1, 2, beak);
    rect(ctx, x + 8 + step, y + 12, 1, 2, beak);
    rect(ctx, x + 2 - step, y + 13, 3, 1, beak);
    rect(ctx, x + 7 + step, y + 13, 3, 1, beak);
  } else {
    rect(ctx, x + 4, y + 12, 4, 1, beak);
  }
}

/** A marmot (walker): its hitbox is 14 x 12 at the bottom of its tile. */
export function drawWalker(ctx, x, y, dir = -1, tick = 0) {
  const fur = "#9b6a3c", dark = "#6b4423", light = "#d8b48a";
  rect(ctx, x + 2, y + 2, 10, 9, fur);
  rect(ctx, x + 1, y + 4, 12, 6, fur);
  rect(ctx, x + 3, y + 6, 8, 4, light);
  // Head towards its direction, with ear, eye and nose.
  const hx = dir > 0 ? x + 9 : x;
  rect(ctx, hx, y, 5, 5, fur);
  rect(ctx, dir > 0 ? hx + 1 : hx + 3, y - 1, 1, 1, dark);
  rect(ctx, dir > 0 ? hx + 3 : hx + 1, y + 1, 1, 1, "#111111");
  rect(ctx, dir > 0 ? hx + 4 : hx, y + 3, 1, 1, "#3b2414");
  rect(ctx, dir > 0 ? hx + 3 : hx + 1, y + 4, 1, 1, "#ffffff");
  // Tail and paws.
  rect(ctx, dir > 0 ? x : x + 13, y + 6, 1, 3, dark);
  const step = (tick >> 3) % 2;
  rect(ctx, x + 3 + step, y + 11, 2, 1, dark);
  rect(ctx, x + 9 - step, y + 11, 2, 1, dark);
}

/** A jackdaw (flyer): its hitbox is 12 x 12, centred in its tile. */
export function drawFlyer(ctx, x, y, dir = 1, tick = 0) {
  const black = "#1f2430", grey = "#6d7585";
  rect(ctx, x + 2, y + 4, 8, 5, black);
  rect(ctx, x + 3, y + 3, 6, 1, black);
  // Head with the grey nape and pale eye.
  const hx = dir > 0 ? x + 8 : x;
  rect(ctx, hx, y + 2, 4, 4, black);
  rect(ctx, dir > 0 ? hx : hx + 2, y + 2, 2, 3, grey);
  rect(ctx, dir > 0 ? hx + 2 : hx + 1, y + 3, 1, 1, "#e8eef5");
  rect(ctx, dir > 0 ? x + 12 : x - 2, y + 4, 2, 1, "#3a3f4a");
  // Wings beat.
  const up = (tick >> 2) % 2 === 0;
  if (up) {
    rect(ctx, x + 3, y, 5, 3, black);
  } else {
    rect(ctx, x + 3, y + 8, 5, 3, black);
  }
  rect(ctx, dir > 0 ? x : x + 10, y + 6, 2, 2, black);
}

export function drawRock(ctx, x, y) {
  rect(ctx, x + 2, y, 8, 12, "#6a6f78");
  rect(ctx, x, y + 2, 12, 8, "#6a6f78");
  rect(ctx, x + 1, y + 1, 10, 10, "#8a909a");
  rect(ctx, x + 3, y + 2, 3, 2, "#b9bec6");
  rect(ctx, x + 2, y + 10, 8, 1, "#4b4f57");
}

export function drawSpawner(ctx, x, y) {
  // A dark crack in the rock above where stones come loose.
  rect(ctx, x + 3, y, 10, 3, "#3a3f48");
  rect(ctx, x + 5, y + 3, 6, 2, "#3a3f48");
  rect(ctx, x + 7, y + 5, 2, 1, "#3a3f48");
  rect(ctx, x + 4, y + 1, 2, 1, "#8a909a");
  rect(ctx, x + 10, y + 1, 2, 1, "#8a909a");
}

/** A moving platform `width` tiles wide, 8 px thick. */
export function drawPlatform(ctx, x, y, width) {
  const w = width * 16;
  rect(ctx, x, y, w, 8, "#8f9aa8");
  rect(ctx, x, y, w, 2, "#c4ccd6");
  rect(ctx, x, y + 7, w, 1, "#535c68");
  for (let i = 4; i < w; i += 12) rect(ctx, x + i, y + 4, 2, 2, "#535c68");
}

export function drawSpring(ctx, x, y) {
  // The lower half of its tile, 2 px in from each side.
  rect(ctx, x + 2, y + 8, 12, 2, "#e23b3b");
  for (let i = 0; i < 3; i++) rect(ctx, x + 4, y + 10 + i * 2, 8, 1, "#9aa3ad");
  rect(ctx, x + 2, y + 15, 12, 1, "#4b5260");
  rect(ctx, x + 3, y + 8, 10, 1, "#ff8080");
}

export function drawCheckpoint(ctx, x, y, reached = false) {
  rect(ctx, x + 4, y + 1, 2, 15, "#5b4636");
  const flag = reached ? "#ffcc00" : "#e05a47";
  rect(ctx, x + 6, y + 1, 8, 5, flag);
  rect(ctx, x + 6, y + 6, 5, 1, flag);
  rect(ctx, x + 3, y + 15, 4, 1, "#3b2d22");
}

export function drawBerry(ctx, x, y) {
  rect(ctx, x + 6, y + 7, 5, 5, "#d6336c");
  rect(ctx, x + 5, y + 8, 7, 3, "#d6336c");
  rect(ctx, x + 7, y + 8, 2, 1, "#ff9ec2");
  rect(ctx, x + 8, y + 5, 1, 2, "#3f7d20");
  rect(ctx, x + 9, y + 4, 3, 2, "#5fb83a");
}

export function drawNest(ctx, x, y, tick = 0) {
  // A bowl of twigs with two eggs; a soft glow says "goal".
  if ((tick >> 4) % 2) rect(ctx, x + 1, y + 4, 14, 1, "#fff3b0");
  rect(ctx, x + 4, y + 6, 3, 4, "#fbf6ea");
  rect(ctx, x + 8, y + 5, 3, 5, "#e9f3ff");
  rect(ctx, x + 1, y + 9, 14, 4, "#8b5e34");
  rect(ctx, x + 2, y + 13, 12, 2, "#6e4726");
  for (let i = 1; i < 15; i += 3) rect(ctx, x + i, y + 10, 2, 1, "#c08a52");
  rect(ctx, x, y + 9, 1, 2, "#6e4726");
  rect(ctx, x + 15, y + 9, 1, 2, "#6e4726");
}

export function drawStart(ctx, x, y) {
  // A little signpost.
  rect(ctx, x + 7, y + 6, 2, 10, "#6e4a22");
  rect(ctx, x + 2, y + 2, 12, 5, "#c9955a");
  rect(ctx, x + 2, y + 6, 12, 1, "#6e4a22");
  rect(ctx, x + 4, y + 4, 8, 1, "#6e4a22");
}

export function drawPebble(ctx, x, y) {
  rect(ctx, x + 1, y, 4, 6, "#5d636d");
  rect(ctx, x, y + 1, 6, 4, "#5d636d");
  rect(ctx, x + 1, y + 1, 2, 2, "#a7adb6");
}

export function drawEgg(ctx, x, y) {
  rect(ctx, x + 1, y, 3, 6, "#fffaf0");
  rect(ctx, x, y + 2, 5, 3, "#fffaf0");
  rect(ctx, x + 1, y + 5, 3, 1, "#d9cfbf");
}

/** Draws entity `kind` (a palette name) for the legend or the static map, at its tile. */
export function drawEntity(ctx, kind, x, y, params = {}, tick = 0) {
  switch (kind) {
    case "start": return drawStart(ctx, x, y);
    case "nest": return drawNest(ctx, x, y, tick);
    case "walker": return drawWalker(ctx, x + 1, y + 4, params.dir === "right" ? 1 : -1, tick);
    case "flyer": return drawFlyer(ctx, x + 2, y + 2, 1, tick);
    case "rockfall": return drawSpawner(ctx, x, y);
    case "platform": return drawPlatform(ctx, x, y, Math.min(params.width ?? 1, 1));
    case "spring": return drawSpring(ctx, x, y);
    case "checkpoint": return drawCheckpoint(ctx, x, y, false);
    case "collectible": return drawBerry(ctx, x, y);
    default:
  }
}

/** The sky and a far mountain range behind the level (drawn in screen space, parallax). */
export function drawBackdrop(ctx, w, h, camX) {
  const g = ctx.createLinearGradient(0, 0, 0, h);
  g.addColorStop(0, "#6fb6f0");
  g.addColorStop(1, "#d9efff");
  ctx.fillStyle = g;
  ctx.fillRect(0, 0, w, h);
  const ranges = [
    { color: "#b7cde3", speed: 0.15, base: 0.62, peak: 0.32, step: 90 },
    { color: "#9bb5cf", speed: 0.3, base: 0.75, peak: 0.45, step: 70 },
  ];
  for (const r of ranges) {
    ctx.fillStyle = r.color;
    ctx.beginPath();
    const off = Math.floor(camX * r.speed) % (r.step * 2);
    ctx.moveTo(0, h);
    for (let x = -off - r.step * 2; x <= w + r.step * 2; x += r.step) {
      const k = Math.floor((x + Math.floor(camX * r.speed)) / r.step);
      const peakY = Math.floor(h * (r.peak + ((k * 7919) % 5) * 0.03));
      ctx.lineTo(x, Math.floor(h * r.base));
      ctx.lineTo(x + r.step / 2, peakY);
    }
    ctx.lineTo(w, h);
    ctx.closePath();
    ctx.fill();
    // Snow caps on the far range.
    if (r.speed < 0.2) {
      ctx.fillStyle = "#f2f7fc";
      for (let x = -off - r.step * 2; x <= w + r.step * 2; x += r.step) {
        const k = Math.floor((x + Math.floor(camX * r.speed)) / r.step);
        const peakY = Math.floor(h * (r.peak + ((k * 7919) % 5) * 0.03));
        ctx.beginPath();
        ctx.moveTo(x + r.step / 2, peakY);
        ctx.lineTo(x + r.step / 2 - 10, peakY + 12);
        ctx.lineTo(x + r.step / 2 + 10, peakY + 12);
        ctx.closePath();
        ctx.fill();
      }
    }
  }
}
