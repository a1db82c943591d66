// One submit at a time, one click at a time, for every page with forms and buttons that send
// (account, admin, bridge).

/**
 * Runs `handler` on the form's submit, one at a time: while its request is out the form is
 * busy (aria-busy) and a second submit (a double click, Enter pressed twice) is ignored, so
 * nothing is sent twice (no second key or admin token whose secret nobody saw, no second
 * password change that finds the old password gone, no reply posted twice). The buttons stay
 * enabled, so the focus stays where it was.
 * @param {HTMLFormElement} form
 * @param {(ev: SubmitEvent) => unknown} handler
 */
export function onSubmit(form, handler) {
  let busy = false;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (busy) return;
    busy = true;
    form.setAttribute("aria-busy", "true");
    try {
      await handler(ev);
    } finally {
      busy = false;
      form.removeAttribute("aria-busy");
    }
  });
}

/**
 * Runs `handler` on a click, one at a time, as onSubmit does for forms: a handler that sends a
 * request returns its promise, and until it settles the button is busy (aria-busy) and another
 * click (a double click) is ignored, so a one-click action (Recheck, Checks, Publish, a switch,
 * a page of a list, a sign-out) sends one request. A handler that returns nothing (opening a
 * confirmation) is not held. The button stays enabled, so the focus stays where it was.
 * @param {HTMLElement} button
 * @param {(ev: MouseEvent) => unknown} handler
 */
export function onClick(button, handler) {
  let busy = false;
  button.addEventListener("click", async (ev) => {
    if (busy) return;
    const out = handler(ev);
    if (!(out instanceof Promise)) return;
    busy = true;
    button.setAttribute("aria-busy", "true");
    try {
      await out;
    } finally {
      busy = false;
      button.removeAttribute("aria-busy");
    }
  });
}
