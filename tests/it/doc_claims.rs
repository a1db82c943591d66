//! What the user's documentation names exists in the code: every crate of the workspace has
//! its place in ARCHITECTURE.md's code map, every setting and `HORST_*` variable the pages
//! name is one horst accepts, every metric they name is in docs/operators.md's table (whose
//! families `metrics_table.rs` scrapes from a fresh process), and every `horst ...` command
//! line of their shell blocks is one the binary parses.
//!
//! The pages: what a newcomer, an operator, an agent's or a host's author reads. The
//! benchmarks and the reliability notes are left out: they are a record of runs, and name
//! what was tried and not kept.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

const PAGES: &[&str] = &[
    "README.md",
    "ARCHITECTURE.md",
    "ops/README.md",
    "docs/operators.md",
    "docs/agents.md",
    "docs/agents-play.md",
    "docs/hosts.md",
    "docs/scaling.md",
    "docs/security.md",
    "docs/game.md",
    "web/README.md",
];

fn page(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn pages() -> Vec<(&'static str, String)> {
    PAGES.iter().map(|p| (*p, page(p))).collect()
}

/// The text between backticks, each span once per page.
fn ticked(text: &str) -> BTreeSet<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Every setting of the schema as `section.key` (and `section.sub.key`), and the sections.
fn settings() -> (BTreeSet<String>, BTreeSet<String>) {
    fn walk(
        v: &toml::Value,
        prefix: &str,
        leaves: &mut BTreeSet<String>,
        tables: &mut BTreeSet<String>,
    ) {
        match v {
            toml::Value::Table(t) => {
                if !prefix.is_empty() {
                    tables.insert(prefix.to_string());
                }
                for (k, v) in t {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(v, &path, leaves, tables);
                }
            }
            _ => {
                leaves.insert(prefix.to_string());
            }
        }
    }
    let defaults = toml::Value::try_from(horst_config::Config::default()).unwrap();
    let (mut leaves, mut tables) = (BTreeSet::new(), BTreeSet::new());
    walk(&defaults, "", &mut leaves, &mut tables);
    (leaves, tables)
}

#[test]
fn every_workspace_crate_has_its_place_in_the_code_map() {
    let manifest: toml::Value = toml::from_str(&page("Cargo.toml")).unwrap();
    let architecture = page("ARCHITECTURE.md");
    let members = manifest["workspace"]["members"].as_array().unwrap();
    assert!(members.len() > 10, "the workspace lists its crates");
    for member in members
        .iter()
        .map(|m| m.as_str().unwrap())
        .filter(|m| *m != ".")
    {
        let crate_toml: toml::Value =
            toml::from_str(&page(&format!("{member}/Cargo.toml"))).unwrap();
        let name = crate_toml["package"]["name"].as_str().unwrap();
        assert!(
            architecture.contains(&format!("### `{member}/` (`{name}`)")),
            "ARCHITECTURE.md's code map has no section \"### `{member}/` (`{name}`)\""
        );
    }
}

#[test]
fn every_benchmark_and_ops_script_has_its_place_in_the_code_map() {
    let manifest: toml::Value = toml::from_str(&page("Cargo.toml")).unwrap();
    let architecture = page("ARCHITECTURE.md");
    let section = |heading: &str| -> String {
        let start = architecture
            .find(heading)
            .unwrap_or_else(|| panic!("ARCHITECTURE.md has {heading}"));
        let rest = &architecture[start + heading.len()..];
        rest[..rest.find("\n### ").unwrap_or(rest.len())].to_string()
    };
    let benches = section("### `benches/`");
    for bench in manifest["bench"].as_array().unwrap() {
        let name = bench["name"].as_str().unwrap();
        assert!(
            benches.contains(&format!("`{name}.rs`")),
            "ARCHITECTURE.md's `benches/` section does not name the benchmark `{name}.rs`"
        );
    }
    let ops = section("### `ops/`");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ops");
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let named = if entry.path().is_dir() {
            format!("`{name}/`")
        } else {
            format!("`{name}`")
        };
        assert!(
            ops.contains(&named) || name == "README.md" || name == "systemd",
            "ARCHITECTURE.md's `ops/` section does not name {named}"
        );
    }
}

#[test]
fn every_setting_the_pages_name_is_one() {
    let (leaves, tables) = settings();
    let sections: BTreeSet<&str> = tables
        .iter()
        .map(|t| t.split('.').next().unwrap())
        .collect();
    let mut unknown = Vec::new();
    for (name, text) in pages() {
        for span in ticked(&text) {
            // `queue.playtest_seconds`, `[arena]`'s `arena.seek`, `redis.url`/`--redis`, a
            // setting with its value (`arena.ratings = false`): the name before a space or `=`.
            let setting = span.split([' ', '=']).next().unwrap();
            let Some((section, rest)) = setting.split_once('.') else {
                continue;
            };
            // A file (`server.rs`, `redis.conf`, `house.js`) or Lua's `redis.call`.
            let last = rest.rsplit('.').next().unwrap();
            if ["rs", "conf", "js", "lua", "md", "toml", "call", "pcall"].contains(&last) {
                continue;
            }
            let is_setting_like = sections.contains(section)
                && setting
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
            if is_setting_like && !leaves.contains(setting) && !tables.contains(setting) {
                unknown.push(format!("{name}: `{span}`"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "the pages name settings horst does not have (ops/horst.toml lists every one):\n{}",
        unknown.join("\n")
    );
}

#[test]
fn every_horst_variable_the_pages_name_is_one_horst_takes() {
    let (leaves, _) = settings();
    let overrides: BTreeSet<String> = leaves.iter().map(|l| horst_config::env_name(l)).collect();
    let mut unknown = Vec::new();
    for (name, text) in pages() {
        let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        for var in words.filter(|w| w.starts_with("HORST_") && w.len() > "HORST_".len()) {
            if var.ends_with('_') || overrides.contains(var) {
                continue; // `HORST_SERVER_*` is a family, not a variable
            }
            // Not a setting: the variables horst reads itself (the configuration file, the
            // log filter, the operator's name, the agent's token, up's tag for its worker).
            let alone = [(var.to_string(), "x".to_string())].into_iter().collect();
            let accepted = horst_config::Config::default().with_env(&alone).is_ok();
            // The test suite's own switch (a Redis Cluster under every test).
            if !accepted && var != "HORST_TEST_REDIS" {
                unknown.push(format!("{name}: {var}"));
            }
        }
    }
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "the pages name HORST_ variables a horst process refuses as unknown:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn every_metric_the_pages_name_is_in_the_operators_table() {
    let operators = page("docs/operators.md");
    let section = operators
        .split("\n## Metrics and logs")
        .nth(1)
        .expect("docs/operators.md has a \"Metrics and logs\" section")
        .split("\n## ")
        .next()
        .unwrap();
    let table: BTreeSet<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    // `horst_api` and the others are crate paths, not metrics; `horst_session` and
    // `horst_admin` are the cookies.
    let manifest: toml::Value = toml::from_str(&page("Cargo.toml")).unwrap();
    let mut not_metrics: BTreeSet<String> =
        ["horst_session", "horst_admin"].map(String::from).into();
    for member in manifest["workspace"]["members"].as_array().unwrap() {
        let member = member.as_str().unwrap();
        if member != "." {
            not_metrics.insert(format!("horst_{}", member.replace('-', "_")));
        }
    }
    let mut unknown = Vec::new();
    for (name, text) in pages() {
        let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        for word in words.filter(|w| w.starts_with("horst_")) {
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| word.strip_suffix(s))
                .filter(|f| table.contains(f))
                .unwrap_or(word);
            // `horst_connections_*` is a family prefix.
            if word.ends_with('_') || not_metrics.contains(family) || table.contains(family) {
                continue;
            }
            unknown.push(format!("{name}: {word}"));
        }
    }
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "the pages name metrics the table of docs/operators.md (\"Metrics and logs\") does not list:\n{}",
        unknown.join("\n")
    );
}

/// The `horst ...` command lines of a page's shell blocks, comments and environment
/// assignments cut off, `a|b|c` alternatives spelled out one line each.
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = !inside && line.trim_start_matches('`').trim() == "sh";
            continue;
        }
        if !inside {
            continue;
        }
        let line = line.split("  #").next().unwrap().trim();
        // `printf ... | horst admin user create ...`, `VAR=x horst house`
        let line = line.rsplit("| ").next().unwrap();
        // A placeholder (`NAME`, `FILE`) stands for a value the reader gives.
        let words: Vec<String> = shell_words(line)
            .into_iter()
            .map(|w| {
                let placeholder =
                    w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_');
                if placeholder {
                    "fuchs".to_string()
                } else {
                    w
                }
            })
            .collect();
        let start = words
            .iter()
            .position(|w| !w.contains('='))
            .unwrap_or(words.len());
        let words = &words[start..];
        if words.first().map(String::as_str) != Some("horst") {
            continue;
        }
        let mut spelled: Vec<Vec<String>> = vec![Vec::new()];
        for word in &words[1..] {
            let choices: Vec<&str> = if word.contains('|') && !word.starts_with('-') {
                word.split('|').collect()
            } else {
                vec![word.as_str()]
            };
            spelled = spelled
                .into_iter()
                .flat_map(|s| {
                    choices.iter().map(move |c| {
                        let mut s = s.clone();
                        s.push(c.to_string());
                        s
                    })
                })
                .collect();
        }
        lines.extend(spelled);
    }
    lines
}

/// Words as a shell splits them, for the plain lines of the docs (quotes, no expansions).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

#[test]
fn every_horst_command_line_of_the_pages_parses() {
    let mut checked = 0;
    let mut refused = Vec::new();
    for (name, text) in pages() {
        for args in command_lines(&text) {
            // `--help` last: clap reads every argument before it, so a flag or value the
            // command does not take is still refused, and nothing runs.
            let out = Command::new(env!("CARGO_BIN_EXE_horst"))
                .args(&args)
                .arg("--help")
                .stdin(Stdio::null())
                .env_remove("HORST_CONFIG")
                .output()
                .unwrap();
            checked += 1;
            if !out.status.success() {
                refused.push(format!(
                    "{name}: horst {}\n  {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .next()
                        .unwrap_or("")
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "the pages show horst's commands ({checked} found)"
    );
    assert!(
        refused.is_empty(),
        "command lines of the pages that horst does not take:\n{}",
        refused.join("\n")
    );
}

/// `gateway.mode` (ops/horst.toml) and the REST switch spell the mode `read_only`, the CLI
/// `read-only`: the CLI takes both, so an operator who copies the setting's value is not
/// refused.
#[test]
fn the_gateway_switch_takes_the_settings_spelling() {
    let toml = page("ops/horst.toml");
    assert!(
        toml.contains("read_only"),
        "ops/horst.toml names the mode read_only"
    );
    for mode in ["read-only", "read_only"] {
        let out = Command::new(env!("CARGO_BIN_EXE_horst"))
            .args(["admin", "gateway", mode, "--help"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "horst admin gateway {mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
