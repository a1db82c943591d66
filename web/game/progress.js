// What this browser remembers of the player's runs, per revision (localStorage, nothing
// leaves the browser): that the level was won ("geschafft") and the best time in ticks. A
// new revision of a level is another level: its map may differ, so its times start anew;
// unless the server names earlier revisions that play the same (a card's `progressFrom`:
// same map, same engine, only the proof replay differs, as when a shipped level's replay
// was made easier): their progress counts for it, and is kept under its id from its first win.
// Where storage is off (private windows, blocked cookies) nothing is remembered and
// nothing fails.

const KEY = (revisionId) => `gcv.progress.${revisionId}`;

/** One revision's own `{won: true, best: ticks}` or null. */
function stored(revisionId) {
  if (!revisionId) return null;
  try {
    const v = JSON.parse(localStorage.getItem(KEY(revisionId)) || "null");
    return v && v.won && Number.isInteger(v.best) && v.best > 0 ? v : null;
  } catch {
    return null;
  }
}

/** `{won: true, best: ticks}` or null: the revision's own, else the best of the earlier
 * revisions that play the same (`earlier`, a card's `progressFrom`). */
export function progress(revisionId, earlier = []) {
  const own = stored(revisionId);
  if (own || !revisionId || !Array.isArray(earlier)) return own;
  let best = null;
  for (const id of earlier) {
    const v = typeof id === "string" ? stored(id) : null;
    if (v && (!best || v.best < best.best)) best = v;
  }
  return best;
}

/** Records a won run of `ticks` (`earlier` as for `progress`); returns `{best, previous}`
 * (previous best or null). */
export function recordWin(revisionId, ticks, earlier = []) {
  const before = progress(revisionId, earlier);
  const previous = before ? before.best : null;
  const best = previous == null ? ticks : Math.min(previous, ticks);
  if (revisionId) {
    try {
      localStorage.setItem(KEY(revisionId), JSON.stringify({ won: true, best }));
    } catch {
      // Storage is off or full: the win still counts on screen.
    }
  }
  return { best, previous };
}

/** Ticks (60 a second) as seconds for people: `12,34 s`. */
export const seconds = (ticks) => `${(ticks / 60).toLocaleString("de-DE", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} s`;
