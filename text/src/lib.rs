//! Cleaning of user-written text (display names, key labels, board posts, messages to the
//! operator, map titles as shown, RCADIA `asName`s, game titles and token names): control,
//! invisible and direction-changing characters are removed, so a text cannot hide or reorder
//! what others see. Text stays plain: nothing is interpreted as markup
//! here, and every consumer shows it as text.
//!
//! Its own crate because people's names (`horst-identity`), the gateway's texts (board,
//! contact, map titles) and the sessions' player names (`horst-sessions`) are cleaned alike,
//! and identity and sessions sit below the gateway.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

/// Characters removed besides `char::is_control`: format characters (Unicode Cf) such as
/// zero-width spaces, joiners, bidi marks, embeddings, overrides and isolates, plus
/// fillers that render as nothing.
fn invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5
        | 0x180B..=0x180F | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F
        | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

/// Removes control and invisible characters, turns other whitespace into plain spaces,
/// collapses runs of spaces and trims.
pub fn clean_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_control() && !c.is_whitespace() || invisible(c) {
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Cleans multi-line text (board bodies, messages): like [`clean_line`] per line, but line
/// breaks survive (`\r\n` and `\r` become `\n`, at most two in a row) and spaces inside a
/// line are kept, so paragraphs and indentation still read; leading and trailing blank lines
/// are trimmed.
pub fn clean_text(text: &str) -> String {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(normalized.len());
    for c in normalized.chars() {
        if c.is_control() && !matches!(c, '\t' | '\n') || invisible(c) {
            continue;
        }
        // Tabs and exotic spaces become plain spaces: they cannot fake alignment.
        out.push(if c.is_whitespace() && c != '\n' {
            ' '
        } else {
            c
        });
    }
    // A line of spaces is as blank as an empty one: at most one blank line in a row.
    let mut lines: Vec<&str> = Vec::new();
    for line in out.split('\n').map(str::trim_end) {
        if line.is_empty() && lines.last().is_some_and(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    lines
        .join("\n")
        .trim_matches(|c| c == '\n' || c == ' ')
        .to_string()
}

/// True when `text` has a line break of any kind (titles and subjects are one line).
/// What an error may echo of a name the caller sent: at most `max` characters, cleaned
/// (a 2 MB tool name gives a short error, and a name cannot reorder the message).
pub fn clip(text: &str, max: usize) -> String {
    let clean = clean_line(text);
    match clean.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &clean[..cut]),
        None => clean,
    }
}

pub fn has_line_break(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(
            c,
            '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
    })
}

/// The plain Latin letter or digit a character passes for, if it is a look-alike of one:
/// fullwidth forms, mathematical letters and digits, and the Cyrillic and Greek letters
/// that read as Latin ones. Not all of Unicode's confusables (UTS #39), but the ones that
/// make a name look like another in a page's font.
fn latin_look_alike(c: char) -> Option<char> {
    let u = c as u32;
    let letter = |i: u32| char::from_u32(u32::from(b'a') + i);
    match u {
        // Fullwidth ASCII: `ａｄｍｉｎ`.
        0xFF01..=0xFF5E => char::from_u32(u - 0xFEE0).map(|c| c.to_ascii_lowercase()),
        // Mathematical alphanumeric letters: runs of A-Z a-z in 13 styles.
        0x1D400..=0x1D6A3 => letter((u - 0x1D400) % 52 % 26),
        // Mathematical digits: runs of 0-9 in 5 styles.
        0x1D7CE..=0x1D7FF => char::from_u32(u32::from(b'0') + (u - 0x1D7CE) % 10),
        _ => Some(match c {
            // Cyrillic.
            'а' | 'А' => 'a',
            'в' | 'В' | 'ь' | 'Ь' => 'b',
            'с' | 'С' => 'c',
            'ԁ' => 'd',
            'е' | 'Е' | 'ё' | 'Ё' => 'e',
            'һ' | 'Һ' | 'н' | 'Н' => 'h',
            'і' | 'І' | 'ӏ' | 'Ӏ' => 'i',
            'ј' | 'Ј' => 'j',
            'к' | 'К' => 'k',
            'м' | 'М' => 'm',
            'о' | 'О' => 'o',
            'р' | 'Р' => 'p',
            'ԛ' | 'Ԛ' => 'q',
            'ѕ' | 'Ѕ' => 's',
            'т' | 'Т' => 't',
            'у' | 'У' => 'y',
            'ԝ' | 'Ԝ' => 'w',
            'х' | 'Х' => 'x',
            // Greek.
            'α' | 'Α' => 'a',
            'β' | 'Β' => 'b',
            'ε' | 'Ε' => 'e',
            'η' | 'Η' => 'h',
            'ι' | 'Ι' => 'i',
            'κ' | 'Κ' => 'k',
            'Μ' => 'm',
            'ν' | 'Ν' => 'n',
            'ο' | 'Ο' => 'o',
            'ρ' | 'Ρ' => 'p',
            'τ' | 'Τ' => 't',
            'υ' | 'Υ' => 'u',
            'χ' | 'Χ' => 'x',
            'Ζ' => 'z',
            _ => return None,
        }),
    }
}

/// A name as it reads: lowercase, with every look-alike of a Latin letter or digit
/// ([`latin_look_alike`]) turned into that letter. Two names with the same fold look the
/// same on a page; comparisons that keep one name from passing for another (reserved
/// names, a person's name, the house's player) compare folds.
pub fn fold(name: &str) -> String {
    name.chars()
        .flat_map(|c| match latin_look_alike(c) {
            Some(l) => vec![l],
            None => c.to_lowercase().collect(),
        })
        .collect()
}

/// Names nobody may display, compared by their [`fold`] without spaces, dots, hyphens or
/// underscores: they would pass for the operator or the service.
const RESERVED: &[&str] = &[
    "admin",
    "administrator",
    "operator",
    "root",
    "system",
    "horst",
    "gcv",
    "gameconvogel",
    "moderator",
    "mod",
    "support",
    "staff",
    "official",
    "server",
    "anonymous",
    "null",
];

pub fn reserved(name: &str) -> bool {
    let folded: String = fold(name)
        .chars()
        .filter(|c| !matches!(c, ' ' | '.' | '-' | '_'))
        .collect();
    RESERVED.contains(&folded.as_str())
        || folded.starts_with("agent")
            && folded.len() == 13
            && folded[5..].bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning() {
        assert_eq!(
            clean_line("  Fu\u{200B}chs \t\n der  Große "),
            "Fuchs der Große"
        );
        assert_eq!(clean_line("a\u{202E}b\u{2066}c\u{0007}"), "abc");
        assert_eq!(clean_line("\u{200B}\u{FEFF}"), "");
    }

    #[test]
    fn multi_line_cleaning() {
        assert_eq!(
            clean_text("Hallo\u{202E}Welt\r\n\r\n\r\n\nzwei\u{200B} \u{0007}\tTab  "),
            "HalloWelt\n\nzwei  Tab"
        );
        assert_eq!(clean_text("\n\n  \u{FEFF}\n"), "");
        // A line of spaces between breaks is blank too: one blank line, not two.
        assert_eq!(clean_text("a\n\n \n\t\na"), "a\n\na");
        assert!(has_line_break("a\u{2028}b"));
        assert!(!has_line_break("a b"));
    }

    #[test]
    fn no_control_or_invisible_character_survives() {
        // Every character of the first planes, interleaved with letters, through both cleaners.
        let all: String = (0u32..0x3_0000)
            .chain(0xE_0000..0xE_1000)
            .filter_map(char::from_u32)
            .flat_map(|c| [c, 'x'])
            .collect();
        for out in [clean_line(&all), clean_text(&all)] {
            assert!(out
                .chars()
                .all(|c| !invisible(c) && (!c.is_control() || c == '\n')));
            assert!(!out.contains('\r'));
        }
        assert!(!clean_line(&all).contains('\n'));
    }

    #[test]
    fn reserved_names() {
        assert!(reserved("Admin"));
        assert!(reserved("A d-m_i.n"));
        assert!(reserved("agent-0123abcd"));
        assert!(!reserved("Fuchs"));
        assert!(!reserved("agentur"));
        // Look-alikes of the letters: fullwidth, Cyrillic, Greek, mathematical.
        for fake in [
            "ａｄｍｉｎ",
            "\u{0430}dmin",
            "ΗORST",
            "𝐫𝐨𝐨𝐭",
            "Ѕupport",
            "аgent-0123аbcd",
        ] {
            assert!(reserved(fake), "{fake}");
        }
    }

    #[test]
    fn folds_read_as_the_name_they_look_like() {
        assert_eq!(fold("Ａlice"), "alice");
        assert_eq!(fold("\u{0430}lice"), "alice");
        assert_eq!(fold("𝖆𝖑𝖎𝖈𝖊𝟏"), "alice1");
        assert_eq!(fold("ＨＯＵＳＥ ｒｅｆｅｒｅｎｃｅ"), "house reference");
        // Other letters stay themselves.
        assert_eq!(fold("Fuchs der Große"), "fuchs der große");
        assert_eq!(fold("Щиф"), "щиф");
    }
}
