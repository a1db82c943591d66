// Static checks of what horst serves: every script a page loads and every
// module a served file imports exists at the URL path it is asked for, and
// the bridge page keeps to its own CSP (no inline scripts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { WEB_ROOT, fileUrlForPath } from "../test-support/served-paths.js";

const PAGES = ["/bridge/", "/games/chess/", "/games/rps/", "/house/", "/house/table.html", "/pages/tables.html", "/pages/watch.html"];

function servedFile(urlPath) {
  const u = fileUrlForPath(urlPath.endsWith("/") ? `${urlPath}index.html` : urlPath);
  return u ? fileURLToPath(u) : null;
}

function jsFilesUnder(dir) {
  return readdirSync(path.join(WEB_ROOT, dir), { recursive: true })
    .filter((f) => f.endsWith(".js"))
    .map((f) => `/${dir}/${f.split(path.sep).join("/")}`);
}

test("every page exists and its module scripts resolve to served files", () => {
  for (const page of PAGES) {
    const file = servedFile(page);
    assert.ok(file && existsSync(file), `${page} is not served`);
    const html = readFileSync(file, "utf8");
    const srcs = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(srcs.length > 0, `${page} loads no script`);
    for (const src of srcs) {
      const target = new URL(src, `https://horst.example${page}`).pathname;
      const f = servedFile(target);
      assert.ok(f && existsSync(f), `${page} loads ${src} (${target}), which is not served`);
    }
    assert.match(html, /<script type="module"/, `${page} must load ES modules`);
  }
});

test("every import in a served module resolves to a served file", () => {
  const modules = [...jsFilesUnder("sdk"), ...jsFilesUnder("bridge"), ...jsFilesUnder("games"), ...jsFilesUnder("pages"), ...jsFilesUnder("house")];
  assert.ok(modules.length >= 8);
  for (const mod of modules) {
    const src = readFileSync(servedFile(mod), "utf8");
    const specs = [...src.matchAll(/^\s*import\s[^"']*["']([^"']+)["']/gm)].map((m) => m[1]);
    for (const spec of specs) {
      assert.ok(spec.startsWith("/") || spec.startsWith("./") || spec.startsWith("../"),
        `${mod} imports bare specifier ${spec}; browsers cannot resolve it without a bundler`);
      const target = new URL(spec, `https://horst.example${mod}`).pathname;
      const f = servedFile(target);
      assert.ok(f && existsSync(f), `${mod} imports ${spec} (${target}), which is not served`);
    }
  }
});

test("the bridge page has no inline script and a CSP that allows only its own scripts", () => {
  const html = readFileSync(servedFile("/bridge/"), "utf8");
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].filter((m) => !/\bsrc=/.test(m[1]) || m[2].trim());
  assert.deepEqual(inline, []);
  assert.match(html, /Content-Security-Policy/);
  assert.match(html, /script-src 'self'/);
  assert.doesNotMatch(html, /unsafe-eval|script-src[^;]*unsafe-inline/);
});

test("nothing served writes markup from data: no innerHTML, outerHTML, insertAdjacentHTML or document.write", () => {
  for (const mod of [...jsFilesUnder("sdk"), ...jsFilesUnder("bridge"), ...jsFilesUnder("games"), ...jsFilesUnder("pages"), ...jsFilesUnder("house")]) {
    const src = readFileSync(servedFile(mod), "utf8");
    assert.doesNotMatch(src, /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write/, mod);
  }
});

test("the game frame is sandboxed with allow-scripts only", () => {
  const src = readFileSync(servedFile("/bridge/bridge.js"), "utf8");
  const sandbox = [...src.matchAll(/setAttribute\("sandbox", "([^"]*)"\)/g)].map((m) => m[1]);
  assert.deepEqual(sandbox, ["allow-scripts"]);
});

test("every page with a header's page links marks the one it is, or the section it belongs to, as current", () => {
  // A level page is part of the game, a table's watch page of the tables, a house table of
  // the house: a sighted reader sees the mark, a screen reader hears "current".
  const expected = {
    "/index.html": "./", "/board.html": "board.html", "/account/index.html": "/account/",
    "/level/index.html": "../", "/pages/tables.html": "/tables/", "/pages/watch.html": "/tables/",
    "/pages/leaderboard.html": "/leaderboard/", "/house/index.html": "/house/",
    "/house/table.html": "/house/", "/bridge/index.html": "/bridge/",
  };
  for (const [page, href] of Object.entries(expected)) {
    const html = readFileSync(path.join(WEB_ROOT, page), "utf8");
    const nav = /<nav\b[^>]*>([\s\S]*?)<\/nav>/.exec(html);
    assert.ok(nav, `${page} has no page links`);
    const current = [...nav[1].matchAll(/<a href="([^"]+)"[^>]*\baria-current="(page|true)"/g)].map((m) => m[1]);
    assert.deepEqual(current, [href], `${page} marks ${JSON.stringify(current)} as current`);
  }
});

test("every RCADIA page's header links to the same pages, in the same order", () => {
  // The bridge's header lacked the leaderboard: a host who came from it found no way there.
  const pages = ["/pages/tables.html", "/pages/watch.html", "/pages/leaderboard.html", "/house/index.html",
    "/house/table.html", "/bridge/index.html"];
  for (const page of pages) {
    const html = readFileSync(path.join(WEB_ROOT, page), "utf8");
    const nav = /<nav aria-label="RCADIA pages">([\s\S]*?)<\/nav>/.exec(html);
    assert.ok(nav, `${page} has no "RCADIA pages" links`);
    const hrefs = [...nav[1].matchAll(/<a href="([^"]+)"(?![^>]*\bhidden\b)[^>]*>/g)].map((m) => m[1]);
    assert.deepEqual(hrefs, ["/tables/", "/leaderboard/", "/house/", "/bridge/"], `${page}'s header links`);
    // The name is plain text: as a link to /tables/ (where "Tables" goes too) it took a tap line
    // of its own on a phone, a 92 px header.
    const header = /<header[^>]*>([\s\S]*?)<\/header>/.exec(html);
    assert.match(header[1], /<p class="brand">RCADIA<\/p>/, `${page}'s name`);
    assert.equal([...header[1].matchAll(/<a\b/g)].length, 4, `${page}'s header has a link besides the page links`);
  }
});
