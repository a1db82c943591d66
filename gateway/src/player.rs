//! The MCP App `ui://gcv/player`: one self-contained HTML page (MCP Apps, `text/html;profile=
//! mcp-app`) that a host renders for `playtest_map`, `simulate_replay` and `get_level`. It
//! plays the map and replay of the tool call on the referee's own engine (the WebAssembly
//! module of the game pages) with the game's stage and art, shows tick, action and verdict,
//! and says whether its run agrees with the server's referee.
//!
//! Hosts load an app without network access, so everything is inlined here, once per
//! process: `web/mcp-app/player.html` gets `web/game/game.css` and `web/mcp-app/player.css`,
//! the engine module compressed (zlib, base64; the page inflates it with
//! `DecompressionStream`), and `web/mcp-app/player.js` with the modules of `web/game/` it
//! imports (the engine's JS side, the stage, the art) joined into one module script: each
//! file becomes a function scope whose exports are an object, and its `import` lines read
//! those objects. That is a deliberately small bundler for the plain module style of `web/`
//! (one-line imports, `export` before a declaration); a form it does not know is an error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::resources::{Contents, Listed};

pub const URI: &str = "ui://gcv/player";
pub const MIME: &str = "text/html;profile=mcp-app";

/// The page may weigh what the game page's engine module may (300 KiB): hosts load it into
/// every conversation that shows a played level.
pub const BUDGET_BYTES: usize = 300 * 1024;

/// The page's entry module; the modules it imports (and theirs) are found from it.
const ENTRY: &str = "mcp-app/player.js";

/// The app's entry in `resources/list`.
pub fn listed() -> Listed {
    Listed {
        uri: URI.into(),
        name: "player".into(),
        title: "Game con Vogel player".into(),
        description: "An MCP App that plays the map and replay of a playtest_map, simulate_replay or get_level result on the referee's engine, with play/pause, tick, action and the verdict".into(),
        mime_type: MIME,
    }
}

/// `resources/read` of the app: the page, with the hints hosts read (no network, a border).
pub fn contents(config: &horst_config::Config) -> Result<Contents, String> {
    let html = page(Path::new(&config.server.web_dir))?;
    Ok(Contents {
        uri: URI.into(),
        mime_type: MIME,
        text: html.to_string(),
        meta: Some(
            json!({ "ui": { "prefersBorder": true, "csp": { "connectDomains": [], "resourceDomains": [] } } }),
        ),
    })
}

/// The assembled page for `web_dir`, built on first use (a missing engine module is an
/// error that says how to build it; it is not cached, so building it later helps).
pub fn page(web_dir: &Path) -> Result<Arc<str>, String> {
    static CACHE: Mutex<Option<(PathBuf, Arc<str>)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((dir, html)) = cache.as_ref() {
        if dir == web_dir {
            return Ok(html.clone());
        }
    }
    let html: Arc<str> = assemble(web_dir)?.into();
    *cache = Some((web_dir.to_path_buf(), html.clone()));
    Ok(html)
}

fn read(web: &Path, rel: &str) -> Result<String, String> {
    std::fs::read_to_string(web.join(rel))
        .map_err(|e| format!("the player app needs {}: {e}", web.join(rel).display()))
}

/// Builds the page from the files under `web`.
pub fn assemble(web: &Path) -> Result<String, String> {
    use base64::Engine as _;
    let template = read(web, "mcp-app/player.html")?;
    let css = format!(
        "{}\n{}",
        read(web, "game/game.css")?,
        read(web, "mcp-app/player.css")?
    );
    let wasm_path = web.join("game/engine.wasm");
    let wasm = std::fs::read(&wasm_path).map_err(|e| {
        format!(
            "the player app needs the engine module {} ({e}); build it with ops/build-wasm",
            wasm_path.display()
        )
    })?;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&wasm).map_err(|e| e.to_string())?;
    let packed =
        base64::engine::general_purpose::STANDARD.encode(z.finish().map_err(|e| e.to_string())?);
    let mut order = Vec::new();
    collect(web, ENTRY, &mut order, &mut Vec::new())?;
    let mut script = String::new();
    for (file, source) in &order {
        script.push_str(&scope(file, source)?);
    }
    for (what, text) in [("css", &css), ("script", &script)] {
        if text.to_ascii_lowercase().contains("</s") {
            return Err(format!(
                "the player app's {what} may not contain \"</s\" (it would end its element)"
            ));
        }
    }
    let mut out = template;
    for (slot, text) in [
        ("/*@css*/", css.as_str()),
        ("/*@engine*/", packed.as_str()),
        ("/*@script*/", script.as_str()),
    ] {
        if !out.contains(slot) {
            return Err(format!("web/mcp-app/player.html lacks the slot {slot}"));
        }
        out = out.replacen(slot, text, 1);
    }
    Ok(out)
}

/// The modules `file` imports, depth first, then `file`: an order in which every module comes
/// after what it imports. `stack` is the path there (an import cycle is an error).
fn collect(
    web: &Path,
    file: &str,
    order: &mut Vec<(String, String)>,
    stack: &mut Vec<String>,
) -> Result<(), String> {
    if order.iter().any(|(f, _)| f == file) {
        return Ok(());
    }
    if stack.iter().any(|f| f == file) {
        return Err(format!(
            "the player app's modules import each other in a cycle: {stack:?} -> {file}"
        ));
    }
    stack.push(file.to_string());
    let source = read(web, file)?;
    for line in source.lines() {
        if let Some(dep) = line
            .strip_prefix("import ")
            .and_then(|rest| import_path(file, rest))
        {
            collect(web, &dep, order, stack)?;
        }
    }
    stack.pop();
    order.push((file.to_string(), source));
    Ok(())
}

/// The file under `web/` that an import line's `from "..."` names, relative to `file`;
/// `None` for a path that is not relative or leaves `web/`.
fn import_path(file: &str, rest: &str) -> Option<String> {
    let (_, from) = rest.split_once(" from ")?;
    let path = from
        .trim()
        .trim_end_matches(';')
        .trim_matches(|c| c == '"' || c == '\'');
    if !(path.starts_with("./") || path.starts_with("../")) || !path.ends_with(".js") {
        return None;
    }
    let mut parts: Vec<&str> = file.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The variable that holds a module's exports: `game/engine.js` is `__m_game_engine`.
fn var(file: &str) -> String {
    let stem = file.trim_end_matches(".js");
    format!(
        "__m_{}",
        stem.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
    )
}

/// One ES module as a function scope: `const __m_<file> = (() => { ... return {exports}; })();`.
fn scope(file: &str, source: &str) -> Result<String, String> {
    let mut body = String::with_capacity(source.len() + 256);
    let mut exports = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let at = || format!("{file}:{}", n + 1);
        if let Some(rest) = line.strip_prefix("import ") {
            body.push_str(&import(file, rest).ok_or_else(|| {
                format!(
                    "{}: the player app's bundler reads only one-line imports of web/ modules",
                    at()
                )
            })?);
            body.push('\n');
        } else if let Some(rest) = line.strip_prefix("export ") {
            let decl = rest.strip_prefix("async ").unwrap_or(rest).trim_start();
            let ident = ["function ", "class ", "const ", "let "]
                .iter()
                .find_map(|k| decl.strip_prefix(k))
                .map(|r| {
                    r.trim_start_matches('*')
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                        .collect::<String>()
                })
                .filter(|i| !i.is_empty())
                .ok_or_else(|| {
                    format!(
                        "{}: the player app's bundler reads only `export` before a function, class, const or let",
                        at()
                    )
                })?;
            exports.push(ident);
            body.push_str(rest);
            body.push('\n');
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    Ok(format!(
        "const {} = (() => {{\n{body}return {{ {} }};\n}})();\n",
        var(file),
        exports.join(", ")
    ))
}

/// `* as x from "./m.js";` or `{ a, b as c } from "../game/m.js";` as a `const` that reads
/// the module's scope object.
fn import(file: &str, rest: &str) -> Option<String> {
    let module = var(&import_path(file, rest)?);
    let (what, _) = rest.split_once(" from ")?;
    let what = what.trim();
    if let Some(alias) = what.strip_prefix("* as ") {
        return Some(format!("const {} = {module};", alias.trim()));
    }
    let names = what.strip_prefix('{')?.strip_suffix('}')?;
    let names: Vec<String> = names
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| n.replace(" as ", ": "))
        .collect();
    Some(format!("const {{ {} }} = {module};", names.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_become_scopes_and_imports_read_them() {
        let src = "import { a, b as c } from \"./engine.js\";\nimport * as art from \"../game/art.js\";\nexport const X = 1;\nexport async function go() {}\nexport class S {}\nconst hidden = 2;\n";
        let out = scope("game/stage.js", src).unwrap();
        assert!(
            out.starts_with("const __m_game_stage = (() => {\n"),
            "{out}"
        );
        assert!(
            out.contains("const { a, b: c } = __m_game_engine;"),
            "{out}"
        );
        assert!(out.contains("const art = __m_game_art;"), "{out}");
        assert!(
            out.contains("const X = 1;\nasync function go() {}\nclass S {}\n"),
            "{out}"
        );
        assert!(out.ends_with("return { X, go, S };\n})();\n"), "{out}");
        assert_eq!(
            import_path("mcp-app/player.js", "{ Stage } from \"../game/stage.js\";"),
            Some("game/stage.js".into())
        );
        assert_eq!(import_path("game/a.js", "x from \"../../etc/x.js\";"), None);
    }

    #[test]
    fn unknown_forms_are_errors() {
        assert!(scope("m.js", "export default 1;\n").is_err());
        assert!(scope("m.js", "export { a };\n").is_err());
        assert!(scope("m.js", "import x from \"https://cdn/x.js\";\n").is_err());
    }

    /// The real files: the app's modules and all they import are in the bundler's form, and
    /// the page (with the engine module, where ops/build-wasm built it) stays within the
    /// game page's budget.
    #[test]
    fn the_shipped_modules_bundle() {
        let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        let mut order = Vec::new();
        collect(&web, ENTRY, &mut order, &mut Vec::new()).unwrap();
        let files: Vec<&str> = order.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(files.last(), Some(&ENTRY));
        assert!(files.contains(&"game/stage.js") && files.contains(&"game/engine.js"));
        for (file, source) in &order {
            scope(file, source).unwrap_or_else(|e| panic!("{e}"));
        }
        if web.join("game/engine.wasm").exists() {
            let page = assemble(&web).unwrap();
            println!("the player app: {} bytes", page.len());
            assert!(
                page.len() <= BUDGET_BYTES,
                "the player app is {} bytes; its budget is {BUDGET_BYTES}",
                page.len()
            );
        }
    }
}
