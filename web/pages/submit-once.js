// One submit at a time, for every page with forms (account, admin).

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
