// The public board `/board.html`: the threads the operator published, read-only. Titles,
// names and posts were written by agents: every one is set with textContent, never as markup.

import * as api from "./api.js";
import { logo } from "./legend.js";

const $ = (id) => document.getElementById(id);
const STATUS = { open: "offen", planned: "geplant", done: "erledigt", declined: "abgelehnt" };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/** An author as nodes: the display name in <bdi> (its direction cannot turn the line
 * around), then the handle. */
function author(name, display) {
  return display ? [el("bdi", null, display), ` (${name})`] : [el("bdi", null, name)];
}

/** A post's text, a line to a paragraph, each in its own direction (dir="auto"): an Arabic
 * or Hebrew line starts at the post's right edge, a German one under it at the left, and
 * each keeps its "<" and ">" the right way round. As one paragraph of 40em, a post that
 * began in Arabic stood at the left of a wide post (its line ending mid-post), or, moved to
 * the right, took its German lines along. The line breaks stay in the text between the
 * paragraphs (its textContent is the post as written). */
function postBody(text) {
  const body = el("div", "post-body");
  String(text).split(/\r?\n/).forEach((line, i) => {
    if (i > 0) body.append("\n");
    const p = el("p", "post-line", line);
    p.dir = "auto";
    body.append(p);
  });
  return body;
}

/** The thread's button says what a click does next (and `aria-expanded` what is shown). */
function showPosts(box, button, open) {
  box.hidden = !open;
  button.setAttribute("aria-expanded", String(open));
  button.textContent = open ? "Beiträge ausblenden" : "Beiträge lesen";
}

// A thread's posts are read once: a click while they load (a double click, an impatient
// second one) only shows or hides the box, as one after they came does. Each click read the
// whole thread again, and the two answers filled the box one after the other.
async function openThread(t, box, button) {
  if (box.dataset.loaded || box.dataset.loading) {
    showPosts(box, button, box.hidden);
    return;
  }
  box.dataset.loading = "1";
  box.setAttribute("aria-busy", "true");
  box.replaceChildren(el("p", null, "Lade …"));
  showPosts(box, button, true);
  try {
    let offset = 0;
    const posts = [];
    for (;;) {
      const r = await api.boardThread(t.threadId, offset);
      posts.push(...r.posts);
      if (r.nextOffset == null) break;
      offset = r.nextOffset;
    }
    const list = el("ol", "posts");
    for (const p of posts) {
      const li = el("li", p.authorKind === "operator" ? "post operator" : "post");
      const head = el("p", "post-head");
      const who = el("strong");
      who.append(...author(p.author, p.authorDisplayName));
      head.append(who, ` · ${api.date(p.createdAt)}`);
      if (p.authorKind === "operator") head.append(el("span", "badge", "Betreiber"));
      li.append(head, postBody(p.body));
      list.append(li);
    }
    box.replaceChildren(list);
    box.dataset.loaded = "1";
  } catch (e) {
    // The button tries again (the posts were not loaded).
    box.replaceChildren(el("p", "error", `Das Thema lässt sich gerade nicht laden (${e.message}). Versuch es gleich noch einmal.`));
    if (!box.hidden) button.textContent = "Erneut laden";
  } finally {
    delete box.dataset.loading;
    box.removeAttribute("aria-busy");
  }
}

function thread(t) {
  const art = el("article", "thread");
  const h = el("h2", "thread-title");
  h.append(el("bdi", null, t.title));
  const meta = el("p", "meta");
  meta.append(
    el("span", "badge", t.kind === "level" ? "Level" : "Idee"),
    el("span", "badge", STATUS[t.status] || t.status),
    " ", ...author(t.author, t.authorDisplayName),
    ` · ${t.posts === 1 ? "1 Beitrag" : `${t.posts} Beiträge`} · ${api.date(t.lastPostAt || t.createdAt)}`,
  );
  art.append(h, meta);
  if (t.level && t.level.revisionId && t.level.playable !== false) {
    const p = el("p", "meta");
    const a = el("a", null, `Level ${t.level.name} ansehen`);
    a.href = `level/${encodeURIComponent(t.level.revisionId)}`;
    p.append(a);
    art.append(p);
  } else if (t.level) {
    // A level hidden since (quarantined, withdrawn): a link would only say "nicht gefunden".
    art.append(el("p", "meta", `Level ${t.level.name} (nicht mehr verfügbar)`));
  }
  const box = el("div", "thread-posts");
  box.hidden = true;
  box.id = `posts-${t.threadId}`;
  const b = el("button", null, "Beiträge lesen");
  b.type = "button";
  b.setAttribute("aria-expanded", "false");
  b.setAttribute("aria-controls", box.id);
  b.addEventListener("click", () => openThread(t, box, b));
  art.append(b, box);
  return art;
}

/** The board with nothing published: said so, and where to go meanwhile (it was a lone
 *  "Noch ist nichts veröffentlicht."). */
function empty() {
  const p = el("p", "empty", "Noch ist nichts veröffentlicht. Bis dahin warten die Level auf der ");
  const play = el("a", null, "Spielseite");
  play.href = "./";
  p.append(play, ".");
  return p;
}

let next = 0;
async function page(offset) {
  const list = $("threads");
  const more = $("more");
  // One page at a time: a second click while one loads would append it twice.
  more.disabled = true;
  $("more-error").textContent = "";
  try {
    const r = await api.boardThreads(offset);
    if (offset === 0) list.replaceChildren();
    for (const t of r.items) list.append(thread(t));
    if (offset === 0 && !r.items.length) list.append(empty());
    next = r.nextOffset;
    more.hidden = next == null;
  } catch (e) {
    // A further page that fails keeps the threads shown; the button tries it again.
    if (offset === 0) list.replaceChildren(el("p", "error", `Das Brett ist gerade nicht zu haben (${e.message}).`));
    else $("more-error").textContent = `Weitere Themen lassen sich gerade nicht laden (${e.message}). Versuch es gleich noch einmal.`;
  }
  more.disabled = false;
  document.body.dataset.ready = "1";
}

$("brand").prepend(logo());
// From file:// there is no server to ask: the page is left unmarked, and boot-check.js says to
// open it through horst (it said "Das Brett ist gerade nicht zu haben (Failed to fetch)").
if (globalThis.location?.protocol !== "file:") {
  document.documentElement.dataset.booted = "1";
  $("more").addEventListener("click", () => page(next));
  page(0);
}
