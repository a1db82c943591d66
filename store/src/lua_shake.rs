//! Only the prelude's and helpers' definitions a script uses are sent with it.
//!
//! Redis runs a script's whole text on every call: each `local function` of the prelude and
//! the helpers in front of it is a closure made again on every call, used or not. Measured
//! with callgrind on the redis-server (Redis 7.0.15), an empty script behind the prelude and
//! the queue's helpers cost 35,600 instructions a call against 15,800 bare: about 1,100 a
//! closure. The admission uses 3 of the helpers' 12 functions.
//!
//! [`shake`] cuts the prelude and helpers into their top-level statements and keeps those
//! the script names, directly or through another kept one; a statement is only left out if
//! it is a `local function` or a `local` bound to a value with no call in it (a constant, a
//! table of constants), so nothing with an effect (the prelude's `table.remove(ARGV)`) is
//! ever left out. A name counts as used wherever it appears as a name in code (not in a
//! comment or a string: a local is only reached by its name, and Redis's Lua has no
//! `loadstring`), shadowed or not: an extra definition costs a call only a closure.

/// A token of Lua text that matters here: a name or keyword, or an opening parenthesis (a
/// call, or an expression that may hold one). Strings and comments are skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a str),
    Paren,
}

/// The tokens of `src` with their byte offsets.
fn tokens(src: &str) -> Vec<(usize, Tok<'_>)> {
    let b = src.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    let mut i = 0;
    // The end of a long bracket `[==[ ... ]==]` opening at `i` (after the `[`s), if it is one.
    let long_bracket = |i: usize| -> Option<usize> {
        let mut j = i + 1;
        while j < n && b[j] == b'=' {
            j += 1;
        }
        if j < n && b[j] == b'[' {
            let close = format!("]{}]", "=".repeat(j - i - 1));
            Some(
                src[j + 1..]
                    .find(&close)
                    .map_or(n, |k| j + 1 + k + close.len()),
            )
        } else {
            None
        }
    };
    while i < n {
        let c = b[i];
        if c == b'-' && i + 1 < n && b[i + 1] == b'-' {
            if i + 2 < n && b[i + 2] == b'[' {
                if let Some(end) = long_bracket(i + 2) {
                    i = end;
                    continue;
                }
            }
            i = src[i..].find('\n').map_or(n, |k| i + k);
        } else if c == b'[' {
            i = long_bracket(i).unwrap_or(i + 1);
        } else if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            while j < n && b[j] != c {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i + 1;
            while j < n && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            out.push((i, Tok::Word(&src[i..j])));
            i = j;
        } else {
            if c == b'(' {
                out.push((i, Tok::Paren));
            }
            i += 1;
        }
    }
    out
}

/// How a keyword moves the block depth: `function`, `do` (also of `while` and `for`), `if`
/// and `repeat` open a block; `end` and `until` close one.
fn depth_change(t: Tok<'_>) -> i32 {
    match t {
        Tok::Word("function" | "do" | "if" | "repeat") => 1,
        Tok::Word("end" | "until") => -1,
        _ => 0,
    }
}

/// The names a top-level statement defines, if it may be left out (see the module doc).
fn droppable(stmt: &str) -> Option<Vec<&str>> {
    let toks = tokens(stmt);
    match toks.as_slice() {
        [(_, Tok::Word("local")), (_, Tok::Word("function")), (_, Tok::Word(name)), rest @ ..] => {
            // Only the function: its `end` is the statement's last token.
            let mut depth = 1;
            for (k, (_, t)) in rest.iter().enumerate() {
                depth += depth_change(*t);
                if depth == 0 {
                    return (k == rest.len() - 1).then(|| vec![*name]);
                }
            }
            None
        }
        [(_, Tok::Word("local")), rest @ ..] => {
            if rest
                .iter()
                .any(|(_, t)| *t == Tok::Paren || *t == Tok::Word("function"))
            {
                return None;
            }
            let eq = stmt.find('=')?;
            let names: Vec<&str> = stmt["local".len()..eq].split(',').map(str::trim).collect();
            let is_name = |s: &str| {
                !s.is_empty()
                    && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                    && !s.as_bytes()[0].is_ascii_digit()
            };
            names.iter().all(|s| is_name(s)).then_some(names)
        }
        _ => None,
    }
}

/// `lib` (the prelude and helpers, top-level statements only) cut to what `script` uses,
/// directly or through what is kept, in the original order; what comes before the first
/// `local` (comments) is kept.
pub(crate) fn shake(lib: &str, script: &str) -> String {
    // The top-level statements start at each `local` outside any block.
    let mut starts = Vec::new();
    let mut depth = 0;
    for (pos, t) in tokens(lib) {
        if depth == 0 && t == Tok::Word("local") {
            starts.push(pos);
        }
        depth += depth_change(t);
    }
    let Some(&first) = starts.first() else {
        return lib.to_string();
    };
    let ends = starts.iter().skip(1).copied().chain([lib.len()]);
    let stmts: Vec<&str> = starts.iter().zip(ends).map(|(&a, b)| &lib[a..b]).collect();
    let mut used: std::collections::HashSet<&str> = tokens(script)
        .into_iter()
        .filter_map(|(_, t)| match t {
            Tok::Word(w) => Some(w),
            Tok::Paren => None,
        })
        .collect();
    // From the last: a statement can only name what is defined before it.
    let mut keep = vec![false; stmts.len()];
    for k in (0..stmts.len()).rev() {
        let needed = match droppable(stmts[k]) {
            None => true,
            Some(names) => names.iter().any(|n| used.contains(n)),
        };
        if needed {
            keep[k] = true;
            used.extend(tokens(stmts[k]).into_iter().filter_map(|(_, t)| match t {
                Tok::Word(w) => Some(w),
                Tok::Paren => None,
            }));
        }
    }
    let mut out = String::with_capacity(lib.len());
    out.push_str(&lib[..first]);
    for (stmt, keep) in stmts.iter().zip(keep) {
        if keep {
            out.push_str(stmt);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "-- a header\n\
        local OFFSET = tonumber(table.remove(ARGV))\n\
        local DAY = 86400 -- 'local function fake() end'\n\
        local A, B = 1, {'x', \"end\"}\n\
        local function day_of(ms) return math.floor(ms / DAY) end\n\
        local function unused(x)\n\
        local y = x -- a column-0 local inside a body\n\
        if y then return [[ end local ]] end\n\
        return y\n\
        end\n\
        local function twice(x) return day_of(x) + day_of(x) + A end\n\
        local function with_effect() end with_effect()\n";

    #[test]
    fn keeps_what_is_used_and_every_effect() {
        let text = shake(LIB, "return twice(1)");
        assert!(text.starts_with("-- a header\n"));
        // Used directly, or through a kept one.
        assert!(text.contains("local function twice"), "{text}");
        assert!(text.contains("local function day_of"), "{text}");
        assert!(text.contains("local DAY = 86400"), "{text}");
        assert!(text.contains("local A, B"), "{text}");
        // Effects stay, used or not: a call, or a statement after a function's end.
        assert!(text.contains("table.remove(ARGV)"), "{text}");
        assert!(text.contains("with_effect()"), "{text}");
        // The column-0 local inside a body is not a statement of its own.
        assert!(!text.contains("local function unused"), "{text}");
        assert!(!text.contains("local y = x"), "{text}");
    }

    #[test]
    fn a_name_only_in_a_comment_or_a_string_is_not_a_use() {
        let text = shake(LIB, "-- twice\nreturn 'DAY' .. [[unused]] --[==[ A ]==]");
        assert!(!text.contains("local function unused"), "{text}");
        assert!(!text.contains("local function twice"), "{text}");
        assert!(!text.contains("local DAY"), "{text}");
        assert!(!text.contains("local A, B"), "{text}");
        assert!(text.contains("table.remove(ARGV)"), "{text}");
        let text = shake(LIB, "local t = {k = unused}");
        assert!(text.contains("local function unused"), "{text}");
    }

    #[test]
    fn text_without_statements_is_kept_whole() {
        assert_eq!(
            shake("-- only a comment\n", "return 1"),
            "-- only a comment\n"
        );
    }
}
