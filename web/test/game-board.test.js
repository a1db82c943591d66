// The public board page (web/game/board.js) against a scripted fetch: its pager.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadGamePage } from "../test-support/game-page.js";
import { makeFakeFetch, settle } from "../test-support/fake-api.js";

const PAGE = (offset) => `/api/board/published?offset=${offset}`;

function thread(id) {
  return {
    threadId: id, title: `Thema ${id}`, kind: "idea", status: "open", author: "fink", authorDisplayName: null,
    posts: 1, createdAt: "2026-12-01T10:00:00.000Z", lastPostAt: null, level: null,
  };
}

const shown = (g) => g.el("threads").children.map((c) => c.children[0] && c.children[0].textContent);

test("board: a further page that fails keeps the threads and says so beside the button; one page loads at a time", async () => {
  const fetch = makeFakeFetch();
  globalThis.fetch = fetch;
  const g = await loadGamePage("/game/board.js");
  (await fetch.next(PAGE(0))).respond(200, { items: [thread("t1"), thread("t2")], nextOffset: 2 });
  await settle();
  assert.deepEqual(shown(g), ["Thema t1", "Thema t2"]);
  const more = g.el("more");
  assert.equal(more.hidden, false);

  // Two clicks while the page loads: one request.
  more.click();
  assert.equal(more.disabled, true);
  more.click();
  const failing = await fetch.next(PAGE(2));
  await settle();
  assert.equal(fetch.calls(PAGE(2)).length, 1);
  failing.respond(503, { error: "the server's store is unreachable right now", code: "unavailable" });
  await settle();
  assert.deepEqual(shown(g), ["Thema t1", "Thema t2"], "page 1 stays");
  // In German: the server's English message is for agents and operators.
  assert.match(g.text("more-error"), /Weitere Themen lassen sich gerade nicht laden \(der Server ist gerade nicht bereit\)/);
  assert.doesNotMatch(g.text("more-error"), /unreachable/);
  assert.equal(more.disabled, false);
  assert.equal(more.hidden, false);

  // Tried again: page 2 once, the note gone, no further page.
  more.click();
  (await fetch.next(PAGE(2))).respond(200, { items: [thread("t3")], nextOffset: null });
  await settle();
  assert.deepEqual(shown(g), ["Thema t1", "Thema t2", "Thema t3"]);
  assert.equal(g.text("more-error"), "");
  assert.equal(more.hidden, true);
});

test("board: a first page that fails says so in place of the list", async () => {
  const fetch = makeFakeFetch();
  globalThis.fetch = fetch;
  const g = await loadGamePage("/game/board.js");
  (await fetch.next(PAGE(0))).respond(503, { error: "down", code: "unavailable" });
  await settle();
  assert.match(g.text("threads"), /Das Brett ist gerade nicht zu haben \(der Server ist gerade nicht bereit\)/);
  assert.equal(g.el("more").disabled, false);
});

test("game reads: horst's refusals are German phrases by their code (the English message kept as detail), an unknown code one by its status", async () => {
  const api = await import("../game/api.js");
  const answers = [
    [404, { error: "no published board thread t9", code: "not_found" }, "nicht gefunden"],
    [400, { error: "threadId must be 1-64 characters", code: "invalid_input" }, "die Adresse ist ungültig"],
    [429, { error: "too many requests; wait 3 s", code: "burst" }, "zu viele Anfragen, warte einen Moment"],
    [409, { error: "something new", code: "brand_new_code" }, "der Server hat die Anfrage abgelehnt, Fehler 409"],
  ];
  for (const [status, body, german] of answers) {
    globalThis.fetch = async () => ({ ok: false, status, json: async () => body });
    const e = await api.boardThread("t9").then(() => null, (e) => e);
    assert.equal(e.message, german);
    assert.equal(e.status, status);
    assert.equal(e.code, body.code);
    assert.equal(e.detail, body.error);
  }
});
