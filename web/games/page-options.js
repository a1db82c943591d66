// What the house games share about their page: clock settings a host may put in the game
// page's URL, and the list of platform events the page shows. Plain DOM-free helpers.

const INT_OPTIONS = { turnTimeout: [1, 3600], maxTurnTimeouts: [1, 100] };

/**
 * Clock settings from the page's query string, for example
 * `?turnTimeout=30&maxTurnTimeouts=2&forfeitOnTimeout=1`. Anything missing, malformed or
 * out of range is left out, so the platform's default applies.
 * @param {string} search location.search
 * @returns {{turnTimeout?: number, maxTurnTimeouts?: number, forfeitOnTimeout?: boolean}}
 */
export function clockOptionsFrom(search) {
  const params = new URLSearchParams(search || "");
  const out = {};
  for (const [name, [min, max]] of Object.entries(INT_OPTIONS)) {
    const raw = params.get(name);
    if (raw === null || !/^\d{1,7}$/.test(raw)) continue;
    const n = Number(raw);
    if (n >= min && n <= max) out[name] = n;
  }
  const forfeit = params.get("forfeitOnTimeout");
  if (forfeit === "1" || forfeit === "true") out.forfeitOnTimeout = true;
  if (forfeit === "0" || forfeit === "false") out.forfeitOnTimeout = false;
  return out;
}

/**
 * An integer option from the query string within [min, max], else undefined.
 * @param {string} search
 * @param {string} name
 */
export function intOptionFrom(search, name, min, max) {
  const raw = new URLSearchParams(search || "").get(name);
  if (raw === null || !/^\d{1,7}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= min && n <= max ? n : undefined;
}

/**
 * One line per platform event, newest last, at most `limit` lines; shown with textContent
 * so nothing a player sends is ever markup.
 * @param {{ textContent: string }} el
 */
export function eventLog(el, limit = 50) {
  const lines = [];
  return (line) => {
    lines.push(String(line));
    if (lines.length > limit) lines.shift();
    el.textContent = lines.join("\n");
  };
}

/**
 * Sets `el`'s text from parts: a string is text, `{ name }` a player's name, put in a <bdi>
 * so a right-to-left name cannot reorder the words around it. Text only, never markup.
 * @param {HTMLElement} el
 * @param {Array<string | { name: string }>} parts
 */
export function showWithNames(el, parts) {
  const doc = el.ownerDocument;
  el.replaceChildren(...parts.map((p) => {
    if (typeof p === "string") return p;
    const b = doc.createElement("bdi");
    b.textContent = p.name;
    return b;
  }));
}
