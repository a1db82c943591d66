//! What `engineVersion` and `policyVersion` hash: a crate directory's Rust files as token
//! streams, so comments, doc comments and whitespace do not count (FORMAT.md, "Versions").
//! Compiled into `build.rs` and, for its tests, into `tests/version.rs`.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use sha2::{Digest, Sha256};

/// Appends `text` framed by its byte length, so no two token sequences serialise alike.
fn framed(out: &mut Vec<u8>, tag: u8, text: &str) {
    out.push(tag);
    out.extend_from_slice(text.len().to_string().as_bytes());
    out.push(b':');
    out.extend_from_slice(text.as_bytes());
}

/// True if the tokens at `i` are a doc attribute: `#` (and `!` for an inner one) followed by
/// a bracket group holding `doc = "..."`. Returns how many tokens it spans.
fn doc_attribute(tokens: &[TokenTree], i: usize) -> Option<usize> {
    let TokenTree::Punct(hash) = tokens.get(i)? else {
        return None;
    };
    if hash.as_char() != '#' {
        return None;
    }
    let mut j = i + 1;
    if matches!(tokens.get(j), Some(TokenTree::Punct(p)) if p.as_char() == '!') {
        j += 1;
    }
    let TokenTree::Group(g) = tokens.get(j)? else {
        return None;
    };
    if g.delimiter() != Delimiter::Bracket {
        return None;
    }
    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
    match inner.as_slice() {
        [TokenTree::Ident(doc), TokenTree::Punct(eq), TokenTree::Literal(_)]
            if doc == "doc" && eq.as_char() == '=' =>
        {
            Some(j + 1 - i)
        }
        _ => None,
    }
}

/// The serialisation of a token stream: `i` ident, `l` literal (both length-framed, their
/// source text), `p` punct char followed by `j` (joint) or `a` (alone), and a group as its
/// opening delimiter, its tokens, its closing delimiter (`(` `)`, `[` `]`, `{` `}`, or `<`
/// `>` for an invisible group). Doc attributes are left out.
pub fn serialise(stream: TokenStream, out: &mut Vec<u8>) {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(n) = doc_attribute(&tokens, i) {
            i += n;
            continue;
        }
        match &tokens[i] {
            TokenTree::Ident(id) => framed(out, b'i', &id.to_string()),
            TokenTree::Literal(lit) => framed(out, b'l', &lit.to_string()),
            TokenTree::Punct(p) => {
                let mut buf = [0u8; 4];
                out.push(b'p');
                out.extend_from_slice(p.as_char().encode_utf8(&mut buf).as_bytes());
                out.push(match p.spacing() {
                    Spacing::Joint => b'j',
                    Spacing::Alone => b'a',
                });
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => (b'(', b')'),
                    Delimiter::Bracket => (b'[', b']'),
                    Delimiter::Brace => (b'{', b'}'),
                    Delimiter::None => (b'<', b'>'),
                };
                out.push(open);
                serialise(g.stream(), out);
                out.push(close);
            }
        }
        i += 1;
    }
}

/// The token serialisation of one Rust source file, or the lexer's error.
pub fn file_tokens(source: &str) -> Result<Vec<u8>, String> {
    let stream: TokenStream = source.parse().map_err(|e| format!("{e:?}"))?;
    let mut out = Vec::new();
    serialise(stream, &mut out);
    Ok(out)
}

/// Lowercase hex SHA-256 over `files` (relative path with `/`, source text), sorted by path:
/// for each file its path, a NUL byte, its token serialisation, a NUL byte.
pub fn hash_sources(files: &[(String, String)]) -> Result<String, String> {
    let mut sorted: Vec<&(String, String)> = files.iter().collect();
    sorted.sort();
    let mut h = Sha256::new();
    for (path, text) in sorted {
        let tokens = file_tokens(text).map_err(|e| format!("{path}: {e}"))?;
        h.update(path.as_bytes());
        h.update([0u8]);
        h.update(&tokens);
        h.update([0u8]);
    }
    Ok(hex::encode(h.finalize()))
}

/// The files besides `src/sim/` that `engineVersion` covers: the referee's run loop and report,
/// and the replay parser, which decide outcomes too.
pub const ENGINE_FILES: &[&str] = &["src/referee.rs", "src/replay.rs"];

/// What `engineVersion` hashes: the files of `src/sim/` and [`ENGINE_FILES`].
#[allow(dead_code)] // not used by every includer
pub fn engine_sources(root: &std::path::Path) -> std::io::Result<Vec<(String, String)>> {
    let mut files = read_sources(root, "src/sim", &[])?;
    for f in ENGINE_FILES {
        files.push((f.to_string(), std::fs::read_to_string(root.join(f))?));
    }
    Ok(files)
}

/// The `.rs` files under `root/dir` (recursively) as (path relative to `root`, text), less
/// the relative paths in `skip`.
pub fn read_sources(
    root: &std::path::Path,
    dir: &str,
    skip: &[&str],
) -> std::io::Result<Vec<(String, String)>> {
    fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        for e in std::fs::read_dir(dir)? {
            let p = e?.path();
            if p.is_dir() {
                collect(&p, out)?;
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut paths = Vec::new();
    collect(&root.join(dir), &mut paths)?;
    let mut files = Vec::new();
    for p in paths {
        let Ok(rel) = p.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if !skip.contains(&rel.as_str()) {
            files.push((rel, std::fs::read_to_string(&p)?));
        }
    }
    Ok(files)
}
