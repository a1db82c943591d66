// What this browser remembers of the player's runs, per revision (localStorage, nothing
// leaves the browser): that the level was won ("geschafft") and the best time in ticks. A
// new revision of a level is another level: its map may differ, so its times start anew.
// Where storage is off (private windows, blocked cookies) nothing is remembered and
// nothing fails.

const KEY = (revisionId) => `gcv.progress.${revisionId}`;

/** `{won: true, best: ticks}` or null. */
export function progress(revisionId) {
  if (!revisionId) return null;
  try {
    const v = JSON.parse(localStorage.getItem(KEY(revisionId)) || "null");
    return v && v.won && Number.isInteger(v.best) && v.best > 0 ? v : null;
  } catch {
    return null;
  }
}

/** Records a won run of `ticks`; returns `{best, previous}` (previous best or null). */
export function recordWin(revisionId, ticks) {
  const before = progress(revisionId);
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
