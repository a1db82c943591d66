// The URL paths horst serves from web/, as a table the tests share. Pages
// import the SDK and chess.js by absolute URL path; in node, served-paths-hooks.js
// resolves those paths to the same files, so the tests import game pages'
// modules exactly as a browser would.

import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** URL path prefix -> folder or file under web/ (longest prefix wins). */
export const SERVED = [
  ["/games/vendor/chess.js", "node_modules/chess.js/dist/esm/chess.js"],
  ["/sdk/", "sdk/"],
  ["/bridge/", "bridge/"],
  ["/house/", "house/"],
  ["/games/", "games/"],
  ["/pages/", "pages/"],
  ["/game/", "game/"],
];

/** The file:// URL horst would answer an absolute URL path with, or null. */
export function fileUrlForPath(urlPath) {
  const clean = urlPath.split(/[?#]/)[0];
  for (const [prefix, target] of SERVED) {
    if (clean === prefix || (prefix.endsWith("/") && clean.startsWith(prefix))) {
      const rest = prefix.endsWith("/") ? clean.slice(prefix.length) : "";
      return pathToFileURL(path.join(WEB_ROOT, target, rest)).href;
    }
  }
  return null;
}
