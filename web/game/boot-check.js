// The game page's word when its modules never ran. A classic script (not a module), so it
// runs where modules do not: opened from file://, Chromium refuses the page's module scripts
// (without --allow-file-access-from-files) and the list said "Lade Level …" for good. The
// modules mark the page when they start (main.js: `data-booted`); at `load` (after every
// module script ran or failed) a page without the mark says what to do instead.
"use strict";
window.addEventListener("load", () => {
  if (document.documentElement.dataset.booted === "1") return;
  const fromFile = location.protocol === "file:";
  const list = document.getElementById("level-list");
  if (!list) return;
  const item = document.createElement("li");
  item.className = "empty boot-error";
  item.setAttribute("role", "alert");
  const head = document.createElement("strong");
  const rest = document.createElement("span");
  if (fromFile) {
    head.textContent = "Diese Seite läuft über horst, nicht als Datei. ";
    rest.textContent =
      "Der Browser lädt ihre Skripte nicht von der Festplatte (file://). Starte horst " +
      "(./ops/run oder horst up) und öffne die Adresse des Servers, zum Beispiel " +
      "http://127.0.0.1:8080/. Eigene .map-Dateien spielst du dort oder in einem Chromium, " +
      "das mit --allow-file-access-from-files gestartet wurde.";
  } else {
    head.textContent = "Die Seite konnte ihre Skripte nicht laden. ";
    rest.textContent = "Lade sie neu; hilft das nicht, läuft der Server vielleicht gerade nicht.";
  }
  item.append(head, rest);
  list.replaceChildren(item);
  // Nothing else works without the modules: the tabs would switch nothing.
  const tabs = document.getElementById("tabs");
  if (tabs) tabs.hidden = true;
});
