//! The README and the guides as a newcomer meets them on a clean clone (issue 31, item 6):
//! what the two commands need first, a tour that uses the binary `./ops/run` built (no
//! `cargo run`, which rebuilt everything in debug for 19 minutes) and no macOS-only `open`,
//! `horst house` needing chromium, how `horst play` ends, which tools take an
//! `idempotencyKey`, and a `web_dir` warning that names the installed path the docs use.
//! The guides under docs/ get the same shell checks: no `open`, no debug `cargo run`, no
//! `./ops/run &` racing its own build, and chromium named wherever `horst house` runs.

const README: &str = include_str!("../../README.md");
const AGENTS: &str = include_str!("../../docs/agents.md");

/// The shell lines of a Markdown text's ```sh blocks.
fn shell_lines(doc: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("```") {
            inside = !inside && line.trim_start_matches('`').trim() == "sh";
            continue;
        }
        if inside {
            lines.push(line.trim());
        }
    }
    lines
}

/// Why a shell line of a guide fails a newcomer on Debian, if it does. `cargo run` with
/// `--release` passes (the benchmarks build one example); the README allows none at all.
fn trap(line: &str) -> Option<&'static str> {
    if line.starts_with("open ") || line.contains("&& open ") {
        return Some("uses macOS's `open` (on Debian `open` is openvt)");
    }
    if (line.starts_with("cargo run") || line.contains("| cargo run"))
        && !line.contains("--release")
    {
        return Some("runs `cargo run` (a debug build of everything)");
    }
    if line.starts_with("./ops/run &") {
        return Some("runs ./ops/run in the background (the next line runs while it still builds)");
    }
    None
}

/// Every Markdown file under docs/, as (path, text), by name.
fn guides() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut guides: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("docs/ is there")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| {
            let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
            (name, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    guides.sort();
    guides
}

#[test]
fn the_readme_names_what_the_two_commands_need_first() {
    let manifest: toml::Value = toml::from_str(include_str!("../../Cargo.toml")).unwrap();
    let msrv = manifest["package"]["rust-version"]
        .as_str()
        .expect("Cargo.toml names rust-version");
    let before = &README[..README.find("./ops/run").expect("the README runs ./ops/run")];
    let before = before.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        before.contains(&format!("Rust {msrv}")) && before.contains("rustup"),
        "before its first command the README names rustup and Rust {msrv} (Cargo.toml's rust-version)"
    );
    assert!(
        before.contains("C compiler"),
        "before its first command the README says a C compiler is needed"
    );
}

#[test]
fn the_tour_runs_the_built_binary_and_nothing_macos_only() {
    let lines = shell_lines(README);
    assert!(!lines.is_empty(), "the README has ```sh blocks");
    for line in &lines {
        assert!(
            !line.starts_with("cargo run") && !line.contains("| cargo run"),
            "the README's tour runs `cargo run` (a debug build of everything): {line}"
        );
        if let Some(why) = trap(line) {
            panic!("the README's tour {why}: {line}");
        }
    }
    assert!(
        lines.iter().any(|l| l.contains("target/release/horst")),
        "the tour points at the binary ./ops/run built (target/release/horst)"
    );
    let house = lines
        .iter()
        .find(|l| l.contains("horst house"))
        .expect("the tour starts the house host");
    assert!(
        house.contains("chromium"),
        "the tour says `horst house` needs chromium: {house}"
    );
    let play = README
        .find("`horst play` ends")
        .expect("the README says how `horst play` ends");
    assert!(
        README[play..].contains("--rounds"),
        "it names --rounds, without which a house series never ends"
    );
}

#[test]
fn the_guides_shell_lines_run_on_debian_as_the_tours_do() {
    let guides = guides();
    assert!(
        guides.iter().any(|(name, _)| name == "docs/hosts.md"),
        "the guides are read from docs/"
    );
    for (name, text) in &guides {
        let lines = shell_lines(text);
        for line in &lines {
            if let Some(why) = trap(line) {
                panic!("{name} {why}: {line}");
            }
        }
        if lines.iter().any(|l| l.contains("horst house")) {
            assert!(
                text.contains("chromium"),
                "{name} runs `horst house` and never says it needs chromium"
            );
        }
    }
}

#[test]
fn the_agents_guide_names_the_tools_that_take_an_idempotency_key() {
    let listing = horst_gateway::tools::list(false, true);
    let mut keyed: Vec<&str> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["inputSchema"]["properties"]
                .get("idempotencyKey")
                .is_some()
        })
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    keyed.sort();
    assert!(!keyed.is_empty());
    let at = AGENTS
        .find("need an `idempotencyKey`")
        .expect("docs/agents.md says which tools need an idempotencyKey");
    let paragraph = &AGENTS[at..at + AGENTS[at..].find("\n- ").unwrap_or(AGENTS.len() - at)];
    let mut named: Vec<&str> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .filter(|n| paragraph.contains(&format!("`{n}`")))
        .collect();
    named.sort();
    assert_eq!(
        named, keyed,
        "docs/agents.md names exactly the tools whose input has idempotencyKey"
    );
}

#[test]
fn the_web_dir_warning_names_the_installed_path() {
    let config: toml::Value = toml::from_str(include_str!("../../ops/horst.toml")).unwrap();
    let installed = config["server"]["web_dir"].as_str().unwrap();
    let ops = include_str!("../../ops/README.md");
    assert!(
        ops.contains(installed),
        "ops/README.md installs the web files to {installed}"
    );
    let missing = horst_api::check_web_dir(std::path::Path::new("/nonexistent/horst-web"));
    assert!(
        missing.iter().any(|m| m.contains(installed)),
        "the web_dir warning names {installed}: {missing:?}"
    );
}
