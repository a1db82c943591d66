// A text field whose limit the server counts in characters (Rust's chars(): code points),
// for every page with one (the admin token label on the admin page, the agent key label on
// the account page). A field's length and maxlength count UTF-16 units, two for an emoji: a
// maxlength of the limit let only half as many emoji in as the server takes, and a counter of
// `value.length` said 80 of 40 for 40 of them.

/**
 * How many characters the server counts in `text`: code points, after it collapsed runs of
 * white space and trimmed the ends (horst_text::clean_line), as it does before its check.
 * @param {string} text
 */
export function charCount(text) {
  return [...text.trim().replace(/\s+/g, " ")].length;
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
