//! The rules of the Redis layer that a test can check (ARCHITECTURE.md, "Lua scripts, keys
//! and hash slots"), read from the source tree:
//! - every `.lua` file is declared once in the script registry (`horst_store::script`), and
//!   its header's highest `KEYS[n]` and `ARGV[n]` are the declaration's counts;
//! - no `redis::Script` is built outside the registry, and no Lua is written inline in Rust;
//! - no script names a key built from ARGV or from a string (Redis Cluster routes a script
//!   by its KEYS, and a key it cannot see is a cross-slot error or a write to the wrong shard),
//!   except a queue key named from the group's base in KEYS (`group_key(KEYS[n], ..)`, in
//!   that key's slot);
//! - the HTTP API (`api/`) does not depend on `redis`: it talks to the library crates;
//! - the API's routes read path parameters through `horst_api::extract::Path`, whose
//!   rejection is the API's own JSON answer (axum's is plain text);
//! - a crate whose test targets are listed (`autotests = false`, several test files built as
//!   one binary: docs/benchmarks.md, "Fewer test binaries") leaves no file beside them that
//!   no target declares, whose tests would never run.
//!
//! Code not yet moved onto the registry is listed in [`NOT_YET`], each entry with who moves
//! it; removing an entry puts that code under every rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use horst_store::script::Registered;

/// Paths (relative to the repository, a directory ends in `/`) exempt from the registry
/// rules for now, and why.
const NOT_YET: &[(&str, &str)] = &[
    // A redis-benchmark baseline: one INCR in EVAL, to compare horst's scripts with.
    ("benches/redis_cost.rs", "redis-benchmark baseline"),
];

/// Commands whose first argument is not a key.
const KEYLESS: &[&str] = &["TIME", "PUBLISH", "INFO", "PING", "ECHO"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn exempt(rel: &str) -> bool {
    NOT_YET
        .iter()
        .any(|(p, _)| rel == *p || (p.ends_with('/') && rel.starts_with(p)))
}

/// Every file under the repository ending in `ext`, outside build output and dependencies.
fn files(ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                    walk(&path, ext, out);
                }
            } else if name.ends_with(ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), ext, &mut out);
    out.sort();
    out
}

/// Every script of every crate on the registry.
fn registered() -> Vec<&'static dyn Registered> {
    let mut all = horst_store::script::registered();
    all.extend(horst_limits::scripts());
    all.extend(horst_gateway::scripts());
    all.extend(horst_identity::scripts());
    all.extend(horst_rcadia::registered());
    all.extend(horst_queue::scripts());
    all
}

/// The header: the comment block before the first `]]`.
fn header(text: &str) -> &str {
    text.split("]]").next().unwrap_or("")
}

/// The highest `NAME[n]` in `text` (0 when none).
fn highest(text: &str, name: &str) -> usize {
    let open = format!("{name}[");
    text.match_indices(&open)
        .filter_map(|(i, _)| {
            let rest = &text[i + open.len()..];
            rest[..rest.find(']')?].trim().parse::<usize>().ok()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn every_lua_file_is_registered_once_and_its_header_matches_its_declaration() {
    let scripts = registered();
    let mut declared = BTreeSet::new();
    let mut problems = Vec::new();
    for s in &scripts {
        let d = s.decl();
        let rel = relative(Path::new(d.file.path));
        if !declared.insert(rel.clone()) {
            problems.push(format!("{rel} is declared twice"));
        }
        let head = header(d.file.text);
        for section in ["Input:", "Output:"] {
            if !head.contains(section) {
                problems.push(format!("{rel}: the header lacks {section}"));
            }
        }
        let (keys, argv) = (highest(head, "KEYS"), highest(head, "ARGV"));
        if keys != d.keys || argv != d.argv.named() {
            problems.push(format!(
                "{rel}: the header lists KEYS[1..{keys}] and ARGV[1..{argv}], the declaration says {} KEYS and {} named ARGV",
                d.keys,
                d.argv.named()
            ));
        }
        if let Some(h) = s.helpers() {
            declared.insert(relative(Path::new(h.path)));
        }
    }
    declared.insert(relative(Path::new(horst_store::script::PRELUDE.path)));
    for path in files(".lua") {
        let rel = relative(&path);
        // The store's own tests declare their scripts in their test file.
        if exempt(&rel) || rel.starts_with("store/tests/") {
            continue;
        }
        if !declared.contains(&rel) {
            problems.push(format!(
                "{rel} is not declared in the script registry (a `static ...: Script<..> = Script::new(Decl {{ .. }})` and the crate's list of scripts)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The crates on the registry have scripts: an empty list would pass vacuously.
    assert!(scripts.len() >= 10, "{} scripts registered", scripts.len());
}

#[test]
fn no_script_is_built_outside_the_registry_and_no_lua_is_inline() {
    let mut problems = Vec::new();
    for path in files(".rs") {
        let rel = relative(&path);
        if exempt(&rel) || rel == "store/src/script.rs" || rel == "tests/it/tidy.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let built = line.contains("redis::Script::new")
                || line.contains("Script::new(include_str!")
                || line.contains("Script::new(\"")
                || line.contains("Script::new(r#\"")
                || line.contains("Script::new(&format!");
            if built {
                problems.push(format!(
                    "{rel}:{}: a script built outside the registry",
                    n + 1
                ));
            }
            if line.contains("redis.call(") || line.contains("redis.pcall(") {
                problems.push(format!(
                    "{rel}:{}: inline Lua (put it in a .lua file and declare it)",
                    n + 1
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The arguments of a call starting right after its `(`, split at top-level commas.
fn call_args(s: &str) -> Vec<String> {
    let (mut depth, mut quote, mut cur, mut out) = (0i32, None::<char>, String::new(), Vec::new());
    for c in s.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
                continue;
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                cur.push(c);
                continue;
            }
            None => {}
        }
        match c {
            '(' | '{' | '[' => {
                depth += 1;
                cur.push(c);
            }
            ')' | '}' | ']' if depth == 0 => break,
            ')' | '}' | ']' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// Why `expr`, the key of a command, is not a key passed in KEYS (None: it is).
fn built_key(expr: &str, body: &str) -> Option<String> {
    // A queue key named from the group's base passed in KEYS (queue/lua/helpers.lua,
    // `group_key`): in that key's hash slot, so the script stays on one shard.
    let from_base = |e: &str| e.starts_with("group_key(KEYS[");
    let suspicious = |e: &str| {
        !from_base(e)
            && (e.contains("ARGV") || e.contains("..") || e.contains('\'') || e.contains('"'))
    };
    if suspicious(expr) {
        return Some(format!("the key `{expr}` is built in the script"));
    }
    if expr.starts_with("KEYS[") {
        return None;
    }
    // A variable: no assignment to it may build a key. (One that is never assigned here is
    // a function's parameter or a loop variable; its callers' keys are checked where they
    // are written.)
    for line in body.lines() {
        let line = line.trim().trim_start_matches("local ").trim();
        if let Some(rhs) = line.strip_prefix(&format!("{expr} =")) {
            let rhs = rhs.trim();
            if suspicious(rhs) {
                return Some(format!("the key `{expr}` is `{rhs}`"));
            }
        }
    }
    None
}

#[test]
fn no_script_builds_a_key() {
    let mut problems = Vec::new();
    let mut calls = 0;
    for path in files(".lua") {
        let rel = relative(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        let body = text.split_once("]]").map(|(_, b)| b).unwrap_or(&text);
        let calls_in = |call: &'static str| body.split(call).skip(1);
        for part in calls_in("redis.call(").chain(calls_in("redis.pcall(")) {
            let args = call_args(part);
            let command = args[0]
                .trim_matches(|c| c == '\'' || c == '"')
                .to_uppercase();
            if KEYLESS.contains(&command.as_str()) || args.len() < 2 {
                continue;
            }
            calls += 1;
            if let Some(why) = built_key(&args[1], body) {
                problems.push(format!("{rel}: {command}: {why}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        calls > 50,
        "only {calls} keyed calls found: the scan is broken"
    );
}

#[test]
fn the_key_check_sees_a_key_built_from_argv() {
    let body = "local k = 'job:' .. ARGV[1]\nredis.call('GET', k)\n";
    assert!(built_key("k", body).is_some());
    assert!(built_key("KEYS[1]", body).is_none());
    assert!(built_key("'x:' .. ARGV[2]", body).is_some());
    let body =
        "local jk = group_key(KEYS[9], 'job:', id)\nlocal bad = group_key(ARGV[1], 'job:', id)\n";
    assert!(built_key("jk", body).is_none());
    assert!(built_key("bad", body).is_some());
    assert!(built_key("group_key(ARGV[1], 'x')", body).is_some());
    let args = call_args("'HSET', KEYS[1], 'a', f(ARGV[1], 2))");
    assert_eq!(args, ["'HSET'", "KEYS[1]", "'a'", "f(ARGV[1], 2)"]);
}

#[test]
fn the_api_does_not_depend_on_redis() {
    let manifest = std::fs::read_to_string(root().join("api/Cargo.toml")).unwrap();
    let deps: toml::Table = toml::from_str(&manifest).unwrap();
    for section in ["dependencies", "dev-dependencies"] {
        if let Some(t) = deps.get(section).and_then(|v| v.as_table()) {
            assert!(
                !t.contains_key("redis"),
                "api/Cargo.toml [{section}] has redis: the HTTP layer talks to the library crates, not to Redis"
            );
        }
    }
}

/// What a file imports from `axum::extract`, by name.
fn axum_extract_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("axum::extract::") {
        let rest = &text[at + "axum::extract::".len()..];
        if let Some(list) = rest.strip_prefix('{') {
            let end = list.find('}').unwrap_or(list.len());
            out.extend(list[..end].split(',').map(|s| s.trim().to_string()));
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn api_routes_take_path_parameters_through_the_apis_extractor() {
    assert_eq!(
        axum_extract_imports(
            "use axum::extract::{DefaultBodyLimit, Path, State};\nlet p = axum::extract::Path(1);"
        ),
        ["DefaultBodyLimit", "Path", "State", "Path"]
    );
    let mut seen = 0;
    for path in files(".rs") {
        let rel = relative(&path);
        // Static files answer pages, not the API: axum's plain-text 400 is fine there.
        if !rel.starts_with("api/src/routes/") || rel.ends_with("/web_files.rs") {
            continue;
        }
        seen += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !axum_extract_imports(&text).iter().any(|i| i == "Path"),
            "{rel} uses axum's Path extractor, which answers a path that does not decode in plain text: use crate::extract::Path"
        );
    }
    assert!(seen > 5, "the routes were not found ({seen} files)");
}

/// The files and module folders beside a crate's listed test targets that no target declares
/// (`mod name;` in any `.rs` file of the targets' folders, or a `[[test]]` path): with
/// `autotests = false` cargo builds only the listed targets, so such a file's tests never
/// run. `files` are the paths relative to the crate, `text` reads one.
fn undeclared_test_files(
    manifest: &str,
    files: &[String],
    text: impl Fn(&str) -> String,
) -> Vec<String> {
    let manifest: toml::Table = toml::from_str(manifest).unwrap();
    let autotests = manifest
        .get("package")
        .and_then(|p| p.get("autotests"))
        .and_then(|a| a.as_bool());
    if autotests != Some(false) {
        return Vec::new();
    }
    let roots: BTreeSet<String> = manifest
        .get("test")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .filter_map(|t| Some(t.get("path")?.as_str()?.to_string()))
        .collect();
    let dir_of = |path: &str| path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let dirs: BTreeSet<String> = roots.iter().map(|r| dir_of(r)).collect();
    // What each listed folder's files declare (`mod name;`, with or without `pub`).
    let mut declared = BTreeSet::new();
    for file in files.iter().filter(|f| dirs.contains(&dir_of(f))) {
        for line in text(file).lines() {
            let line = line.trim_start();
            let line = line.strip_prefix("pub ").unwrap_or(line);
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            if let Some(name) = line.strip_prefix("mod ").and_then(|l| l.strip_suffix(';')) {
                declared.insert(format!("{}/{}", dir_of(file), name.trim()));
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        let dir = dir_of(file);
        let module = if let Some(folder) = file.strip_suffix("/mod.rs") {
            // A module folder beside the targets (`tests/common/mod.rs`).
            if !dirs.contains(&dir_of(folder)) {
                continue;
            }
            folder.to_string()
        } else if dirs.contains(&dir) && !roots.contains(file) {
            file.strip_suffix(".rs").unwrap_or(file).to_string()
        } else {
            continue;
        };
        if !declared.contains(&module) {
            out.push(file.clone());
        }
    }
    out
}

#[test]
fn every_test_file_of_a_listed_crate_is_built() {
    let manifest = "[package]\nname = \"x\"\nautotests = false\n\n\
        [[test]]\nname = \"x_tests\"\npath = \"tests/main.rs\"\n";
    let files = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let text = |f: &str| match f {
        "tests/main.rs" => "mod a;\npub mod common;\n".to_string(),
        _ => String::new(),
    };
    // A file and a module folder nothing declares are reported; src/ is not looked at.
    assert_eq!(
        undeclared_test_files(
            manifest,
            &files(&[
                "src/lib.rs",
                "tests/main.rs",
                "tests/a.rs",
                "tests/b.rs",
                "tests/common/mod.rs",
                "tests/extra/mod.rs",
            ]),
            text,
        ),
        ["tests/b.rs", "tests/extra/mod.rs"]
    );
    // A crate cargo finds the tests of by itself is not looked at.
    assert!(
        undeclared_test_files("[package]\nname = \"x\"\n", &files(&["tests/b.rs"]), text)
            .is_empty()
    );

    let workspace: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let members = workspace["workspace"]["members"].as_array().unwrap();
    let mut listed = 0;
    for member in members.iter().filter_map(|m| m.as_str()) {
        let dir = root().join(member);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut found = Vec::new();
        let mut stack = vec![dir.join("tests")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let rel = path.strip_prefix(&dir).unwrap().to_string_lossy();
                    found.push(rel.replace('\\', "/"));
                }
            }
        }
        if manifest.contains("autotests = false") {
            listed += 1;
        }
        let missing = undeclared_test_files(&manifest, &found, |f| {
            std::fs::read_to_string(dir.join(f)).unwrap()
        });
        assert!(
            missing.is_empty(),
            "{member}: {missing:?} are in no test target: {member}/Cargo.toml lists its test targets \
             (autotests = false), so cargo never runs them. Fix: declare each as a module \
             (`mod name;`) in one of the listed targets, or list it as a [[test]]"
        );
    }
    assert!(listed >= 2, "{listed} crates list their test targets");
}
