// The word of the game page, the board (`/board.html`) and a level's page (`/level/…`) when
// their modules never ran or cannot work. A classic script (not a module), so it runs where
// modules do not: opened from file://, Chromium refuses a page's module scripts (without
// --allow-file-access-from-files) and the page said "Lade …" for good. The modules mark the
// page when they start (`data-booted`; the board's and the level page's do not from file://,
// where they would find no server to ask); at `load` (after every module script ran or
// failed) a page without the mark says what to do instead, in the element marked
// `data-boot-slot` (its `data-boot-hide` names elements that do nothing without the modules).
"use strict";
window.addEventListener("load", () => {
  if (document.documentElement.dataset.booted === "1") return;
  const slot = document.querySelector("[data-boot-slot]");
  if (!slot) return;
  const fromFile = location.protocol === "file:";
  const list = slot.tagName === "OL" || slot.tagName === "UL";
  const item = document.createElement(list ? "li" : "p");
  item.className = list ? "empty boot-error" : "boot-error";
  item.setAttribute("role", "alert");
  const head = document.createElement("strong");
  const rest = document.createElement("span");
  if (fromFile) {
    head.textContent = "Diese Seite läuft über horst, nicht als Datei. ";
    rest.textContent =
      "Der Browser lädt ihre Skripte und Daten nicht von der Festplatte (file://). Starte horst " +
      "(./ops/run oder horst up) und öffne die Adresse des Servers, zum Beispiel " +
      "http://127.0.0.1:8080/." +
      (slot.id === "level-list"
        ? " Eigene .map-Dateien spielst du dort oder in einem Chromium, das mit " +
          "--allow-file-access-from-files gestartet wurde."
        : "");
  } else {
    head.textContent = "Die Seite konnte ihre Skripte nicht laden. ";
    rest.textContent = "Lade sie neu; hilft das nicht, läuft der Server vielleicht gerade nicht.";
  }
  item.append(head, rest);
  slot.replaceChildren(item);
  if (!list) slot.classList.add("message");
  slot.hidden = false;
  for (const id of (slot.dataset.bootHide || "").split(" ")) {
    const hide = id && document.getElementById(id);
    if (hide) hide.hidden = true;
  }
  slot.removeAttribute("aria-busy");
  document.body.dataset.ready = "1";
});
