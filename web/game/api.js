// The game pages' public reads (docs/game.md). Every answer is JSON; a failure throws an
// Error with the HTTP `status` and the server's `code`.

// The pages put `e.message` in parentheses after a German sentence, so it is always a German
// phrase: for horst's own refusals the phrase of its stable `code` (the server's message is
// English, for agents and operators; it stays on the error as `detail`), and without an
// answer from horst itself (no connection, or a proxy's HTML error page) one by the status,
// never the browser's "Failed to fetch" or a bare path and status.
async function read(path) {
  let r;
  try {
    r = await fetch(path, { headers: { accept: "application/json" } });
  } catch (cause) {
    const e = new Error("keine Verbindung zum Server", { cause });
    e.status = 0;
    throw e;
  }
  let body = null;
  try {
    body = await r.json();
  } catch {
    body = null;
  }
  if (!r.ok) {
    const code = body && typeof body.code === "string" ? body.code : undefined;
    const e = new Error(CODES[code] || withoutAnswer(r.status));
    e.status = r.status;
    e.code = code;
    e.detail = body && typeof body.error === "string" ? body.error : undefined;
    throw e;
  }
  return body;
}

/** German phrases for the codes the public reads answer with (api/src/error.rs). */
const CODES = {
  not_found: "nicht gefunden",
  invalid_input: "die Adresse ist ungültig",
  burst: "zu viele Anfragen, warte einen Moment",
  busy: "der Server ist gerade ausgelastet, warte einen Moment",
  unavailable: "der Server ist gerade nicht bereit",
  internal_error: "ein Fehler im Server",
};

function withoutAnswer(status) {
  if (status === 429) return "zu viele Anfragen, warte einen Moment";
  if (status >= 500) return `der Server antwortet nicht, Fehler ${status}`;
  return `der Server hat die Anfrage abgelehnt, Fehler ${status}`;
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

const VERDICTS = { relaxed: "entspannt", fair: "fair", tight: "knapp", frame_perfect: "auf den Tick genau" };

/**
 * The "Schwierigkeit" of a level for players, from its winning replay's feasibility report
 * (`feasibility`, or null for revisions checked before it existed): `{word, text, framePerfect,
 * partial}`, or null. A report whose work budget ran out (`complete: false`) judged only
 * `inputsChecked` of `inputs` inputs: its verdict is the easiest the level can be, not what it
 * is, so the word says "unvollständig geprüft" and the text says how many were checked (a
 * "relaxed" report without a tightest input then never reads "braucht kein Timing").
 */
export function difficulty(f) {
  if (!f || !VERDICTS[f.verdict]) return null;
  const partial = f.complete === false;
  const base = VERDICTS[f.verdict];
  const word = partial ? `${base} (unvollständig geprüft)` : base;
  const w = f.tightest;
  let text;
  if (f.verdict === "frame_perfect") {
    text = `${word}: ${f.exactInputs} Eingabe${f.exactInputs === 1 ? "" : "n"} des Nachweis-Replays ${f.exactInputs === 1 ? "muss" : "müssen"} auf den Tick (1/60 s) genau kommen`;
  } else if (w) {
    text = `${word}: engstes Zeitfenster des Nachweis-Replays ${w.window} Ticks (${Math.round((w.window * 1000) / 60)} ms)`;
  } else if (partial) {
    text = `${word}: keine Eingabe des Nachweis-Replays wurde geprüft`;
  } else {
    text = `${word}: das Nachweis-Replay braucht kein Timing`;
  }
  if (partial) {
    const n = Number.isInteger(f.inputsChecked) && Number.isInteger(f.inputs) ? `nur ${f.inputsChecked} von ${f.inputs} Eingaben` : "nicht alle Eingaben";
    text += `; ${n} wurden im Rechenbudget geprüft, die übrigen können enger sein`;
  }
  return { word, text, framePerfect: f.verdict === "frame_perfect", partial };
}
