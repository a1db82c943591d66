//! The browser-side files (SDK, bridge, house games) have their own unit tests, run with
//! Node's test runner. Running them from here makes `cargo test --workspace` the whole suite.

use std::path::Path;
use std::process::Command;

#[test]
fn node_unit_tests_of_the_web_files_pass() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
    assert!(
        web.join("node_modules/chess.js").exists(),
        "web/node_modules is missing: run `npm ci --prefix web` once (the house games use chess.js from npm)"
    );
    let mut files: Vec<String> = std::fs::read_dir(web.join("test"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".test.js"))
        .map(|n| format!("test/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "too few web tests found: {files:?}");
    let out = Command::new("node")
        .arg("--test")
        .args(&files)
        .current_dir(&web)
        .output()
        .expect(
            "node is not installed: install Node.js 20 or newer (Debian: apt-get install nodejs)",
        );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
}

/// The pages' label counter (`web/pages/char-limit.js`) counts a label as the server does:
/// the characters of `horst_text::clean_line`'s line, for text with every kind of character
/// the cleaning judges (it counted zero-width spaces, bidi marks and doubled spaces, which
/// the server drops, and called a label the server took too long).
#[test]
fn the_pages_count_a_label_as_the_server_cleans_it() {
    let corpus = [
        "Laptop",
        "  Mein \t Laptop  ",
        "Lap\u{200B}top\u{00AD}",
        "\u{202E}potpaL\u{2066}\u{200F}\u{061C}",
        "\u{200B}\u{FEFF}\u{3164}\u{115F}",
        "a\u{0085}b\u{00A0}c\u{3000}d\u{2028}e",
        "ctrl\u{0007}\u{007F}\u{009F}x",
        "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}",
        "\u{1F469}\u{1F3FD}\u{200D}\u{1F680}",
        "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}",
        "\u{2764}\u{FE0F}\u{FE0F}\u{2764}\u{FE0E}",
        "1\u{FE0F}\u{20E3} 1\u{FE0F} #\u{FE0F}\u{20E3}",
        "\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}",
        "\u{0915}\u{094D}\u{200D}\u{0937} \u{0967}\u{200C}\u{0968}",
        "\u{05E9}\u{200D}\u{05DC}\u{05D5}\u{05DD}",
        "ad\u{200D}min\u{200D} \u{200C}x \u{200D}\u{200D}\u{1F426}",
        "\u{1F426}\u{200B}\u{200D}\u{1F525} \u{1F426}\u{200D} \u{1F426}",
        "tag\u{E0041}\u{E007F} \u{1D173}music\u{FFF9}",
        "\u{FE0F}start and end\u{200D}",
        "<b>fett</b> &amp;",
    ];
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
    let script = "import('./pages/char-limit.js').then((m) => { \
        let input = ''; process.stdin.on('data', (d) => { input += d; }); \
        process.stdin.on('end', () => console.log(JSON.stringify(JSON.parse(input).map(m.charCount)))); })";
    let mut child = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .current_dir(&web)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("node is not installed: install Node.js 20 or newer");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(serde_json::to_string(&corpus).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counted: Vec<usize> = serde_json::from_slice(&out.stdout).unwrap();
    let server: Vec<usize> = corpus
        .iter()
        .map(|t| horst_gateway::text::clean_line(t).chars().count())
        .collect();
    let differ: Vec<String> = corpus
        .iter()
        .zip(counted.iter().zip(&server))
        .filter(|(_, (page, server))| page != server)
        .map(|(t, (page, server))| {
            format!(
                "{}: the page counts {page}, the server {server}",
                t.escape_unicode()
            )
        })
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
