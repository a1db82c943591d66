// A text field whose limit the server counts in characters (Rust's chars(): code points),
// for every page with one (the admin token label on the admin page, the agent key label on
// the account page). A field's length and maxlength count UTF-16 units, two for an emoji: a
// maxlength of the limit let only half as many emoji in as the server takes, and a counter of
// `value.length` said 80 of 40 for 40 of them.

// The characters horst_text::clean_line (text/src/lib.rs) removes or keeps, as it judges
// them; web/test/char-limit.test.js and tests/it/web_js.rs hold the two to the same counts.
const INVISIBLE = [
  [0x00ad, 0x00ad], [0x034f, 0x034f], [0x061c, 0x061c], [0x115f, 0x1160], [0x17b4, 0x17b5],
  [0x180b, 0x180f], [0x200b, 0x200f], [0x202a, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164],
  [0xfe00, 0xfe0f], [0xfeff, 0xfeff], [0xffa0, 0xffa0], [0xfff0, 0xfffb], [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
];
/** The scripts whose spelling uses ZWNJ and ZWJ (Arabic, the Indic scripts, ...). */
const JOINING = [
  [0x0600, 0x07ff], [0x0860, 0x08ff], [0x0900, 0x0dff], [0x0f00, 0x0fff], [0x1000, 0x109f],
  [0x1780, 0x17ff], [0x1800, 0x18af], [0xa8e0, 0xa8ff], [0xa9e0, 0xa9ff], [0xaa60, 0xaa7f],
  [0xfb50, 0xfdff], [0xfe70, 0xfefe], [0x10ec0, 0x10eff], [0x1ee00, 0x1eeff],
];
const ZWNJ = "\u200C", ZWJ = "\u200D", VS15 = "\uFE0E", VS16 = "\uFE0F", KEYCAP = "\u20E3";
const within = (ranges, c) => {
  const u = c.codePointAt(0);
  return ranges.some(([a, b]) => u >= a && u <= b);
};
const invisible = (c) => within(INVISIBLE, c);
const whitespace = (c) => /\p{White_Space}/u.test(c);
const control = (c) => /\p{Cc}/u.test(c);
const pictographic = (c) => /\p{Extended_Pictographic}/u.test(c);
const skinTone = (c) => within([[0x1f3fb, 0x1f3ff]], c);
const joiningLetter = (c) =>
  within(JOINING, c) && !/\p{N}/u.test(c) && !whitespace(c) && !invisible(c);

/** Whether a joiner or selector changes what a reader sees between `prev` and `next`. */
function meansSomething(c, prev, next) {
  if (prev == null) return false;
  if (c === ZWJ || c === ZWNJ) {
    if (next == null) return false;
    const emoji = c === ZWJ && (pictographic(prev) || prev === VS16 || skinTone(prev)) && pictographic(next);
    return emoji || (joiningLetter(prev) && joiningLetter(next));
  }
  return pictographic(prev) || (c === VS16 && /^[0-9#*]$/.test(prev) && next === KEYCAP);
}

/**
 * `text` as the server keeps a line (horst_text::clean_line): without control and invisible
 * characters (zero-width spaces, bidi marks, a joiner or selector that joins nothing), white
 * space collapsed to single spaces, the ends trimmed.
 * @param {string} text
 */
export function cleanLine(text) {
  const chars = [...text];
  const removed = (c) => (control(c) && !whitespace(c)) || invisible(c);
  let out = "";
  let space = false;
  let prev = null;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === ZWNJ || c === ZWJ || c === VS15 || c === VS16) {
      const next = chars.slice(i + 1).find((n) => !removed(n)) ?? null;
      if (!meansSomething(c, prev, next)) continue;
    } else if (removed(c)) {
      continue;
    }
    prev = c;
    if (whitespace(c)) {
      space = true;
      continue;
    }
    if (space && out) out += " ";
    space = false;
    out += c;
  }
  return out;
}

/**
 * How many characters the server counts in `text`: code points of the line it keeps
 * ({@link cleanLine}), as it counts before its check. A zero-width space, a bidi mark or a
 * doubled space typed or pasted into the field counted before, and a label the server took
 * read as too long.
 * @param {string} text
 */
export function charCount(text) {
  return [...cleanLine(text)].length;
}

/**
 * Holds `field` to a limit in characters: its maxlength lets twice the units in (every
 * character fits, however many units it takes), `counter` (if given) says `says(chars, max,
 * over)` as it is typed, and past the limit the field is invalid with `tooMany(max)`, so a
 * form that validates does not send it. `setMax` takes the server's limit once it said it.
 * @param {HTMLInputElement} field
 * @param {{ max: number, counter?: HTMLElement, says: (chars: number, max: number, over: number) => string, tooMany: (max: number) => string }} options
 */
export function charLimit(field, { max, counter, says, tooMany }) {
  let limit = max;
  const update = () => {
    const chars = charCount(field.value);
    const over = Math.max(0, chars - limit);
    if (counter) counter.textContent = says(chars, limit, over);
    field.setCustomValidity(over ? tooMany(limit) : "");
  };
  const setMax = (m) => {
    limit = m;
    field.maxLength = 2 * m;
    update();
  };
  field.addEventListener("input", update);
  // A form's reset empties the field without an input event; its values change after the
  // reset event, so count once it is done.
  field.form?.addEventListener("reset", () => setTimeout(update));
  setMax(max);
  return {
    update,
    setMax,
    /** Whether the field's text is within the limit. */
    fits: () => charCount(field.value) <= limit,
  };
}
