// Loads Plugins/WebGL/RcadiaBridge.jslib the way a Unity WebGL build does, so Node can test
// it: emscripten runs the file with mergeInto/LibraryManager to collect the library object,
// then writes each function into the build by its *source text* (`function _Name(...)`) and
// each $dependency as `var Name = <copy>`. A function that closed over anything of the jslib
// file would therefore break in a real build; here it breaks the same way.

import { readFileSync } from "node:fs";
import vm from "node:vm";

export const JSLIB_PATH = new URL("../../../Plugins/WebGL/RcadiaBridge.jslib", import.meta.url);

/** The library object the jslib merges into LibraryManager.library. */
export function readLibrary(path = JSLIB_PATH) {
  const library = {};
  const context = vm.createContext({
    LibraryManager: { library },
    mergeInto(target, source) { Object.assign(target, source); },
  });
  vm.runInContext(readFileSync(path, "utf8"), context, { filename: "RcadiaBridge.jslib" });
  return library;
}

/**
 * Link the library into a fresh scope holding only what a Unity page offers it: `window`,
 * Unity's SendMessage, emscripten's UTF8ToString, console. C# passes strings as pointers
 * into the heap; `cString` makes one.
 * @returns {{ fns: Record<string, Function>, cString: (s: string) => number, source: string }}
 */
export function linkLibrary(library, { window, SendMessage, console: log = console }) {
  const heap = new Map();
  let nextPointer = 16;
  const cString = (s) => {
    const ptr = nextPointer;
    nextPointer += 16;
    heap.set(ptr, s);
    return ptr;
  };
  const UTF8ToString = (ptr) => {
    if (!heap.has(ptr)) throw new Error(`UTF8ToString(${ptr}): not a string pointer`);
    return heap.get(ptr);
  };

  const functions = Object.keys(library).filter((k) => !k.startsWith("$") && !k.includes("__"));
  const deps = new Set(functions.flatMap((k) => library[`${k}__deps`] ?? []));
  let source = "";
  for (const dep of deps) {
    if (!dep.startsWith("$") || !(dep in library)) throw new Error(`__deps names ${dep}, which the library does not define`);
    // Plain data only, so the copy is exact (the jslib promises this).
    const copy = JSON.stringify(library[dep]);
    if (JSON.stringify(JSON.parse(copy)) !== copy) throw new Error(`${dep} is not plain data`);
    source += `var ${dep.slice(1)} = ${copy};\n`;
  }
  for (const name of functions) {
    if (typeof library[name] !== "function") throw new Error(`${name} is not a function`);
    source += `var _${name} = ${library[name].toString()};\n`;
  }
  source += `({ ${functions.map((n) => `${n}: _${n}`).join(", ")} })`;
  const scope = vm.createContext({ window, SendMessage, UTF8ToString, console: log });
  const fns = vm.runInContext(source, scope, { filename: "linked-jslib.js" });
  return { fns, cString, source };
}

/** The jslib linked into a page, with C#-side calls that take JS strings. */
export function loadBridge({ window, SendMessage, console: log = console }) {
  const { fns, cString } = linkLibrary(readLibrary(), { window, SendMessage, console: log });
  return {
    open: (objectName, methodName) => fns.RcadiaBridge_Open(cString(objectName), cString(methodName)),
    post: (messageJson) => fns.RcadiaBridge_Post(cString(messageJson)),
    close: (handle) => fns.RcadiaBridge_Close(handle),
  };
}
