// The game pages' public reads (docs/game.md). Every answer is JSON; a failure throws an
// Error with the HTTP `status` and the server's `code`.

async function read(path) {
  const r = await fetch(path, { headers: { accept: "application/json" } });
  let body = null;
  try {
    body = await r.json();
  } catch {
    body = null;
  }
  if (!r.ok) {
    const e = new Error((body && body.error) || `${path} answered ${r.status}`);
    e.status = r.status;
    e.code = body && body.code;
    throw e;
  }
  return body;
}

export const levels = () => read("/api/game/levels");
export const labor = (offset = 0) => read(`/api/game/labor?offset=${encodeURIComponent(offset)}`);
/** `{revisionId, map, seed}`: only what a thumbnail needs. */
export const map = (id) => read(`/api/game/maps/${encodeURIComponent(id)}`);
export const revision = (id) => read(`/api/game/revisions/${encodeURIComponent(id)}`);
export const boardThreads = (offset = 0) => read(`/api/board/published?offset=${encodeURIComponent(offset)}`);
export const boardThread = (id, offset = 0) => read(`/api/board/published/${encodeURIComponent(id)}?offset=${encodeURIComponent(offset)}`);

/** Revision ids as the contract spells them. */
export const wellFormedId = (id) => /^[A-Za-z0-9._-]{1,64}$/.test(id);

/** A date for people: `1. Dezember 2026, 21:07`. */
export function date(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "–";
  return d.toLocaleString("de-DE", { dateStyle: "long", timeStyle: "short", timeZone: "UTC" }) + " UTC";
}
