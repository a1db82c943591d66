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

const ZWNJ: char = '\u{200C}';
const ZWJ: char = '\u{200D}';
/// Variation selectors 15 and 16: text and emoji presentation of the character before.
const VS15: char = '\u{FE0E}';
const VS16: char = '\u{FE0F}';
/// The combining enclosing keycap of `1️⃣` (digit, VS16, keycap).
const KEYCAP: char = '\u{20E3}';

/// The invisible characters that are kept where they change what a reader sees
/// ([`means_something`]): the joiners of emoji sequences and of the scripts that join
/// letters, and the emoji and text presentation selectors.
fn joiner_or_selector(c: char) -> bool {
    matches!(c, ZWNJ | ZWJ | VS15 | VS16)
}

/// Unicode's `Extended_Pictographic` (emoji-data.txt, Unicode 15): the characters an emoji
/// ZWJ sequence joins and that take a presentation selector.
fn pictographic(c: char) -> bool {
    matches!(c as u32,
        0xA9 | 0xAE | 0x203C | 0x2049 | 0x2122 | 0x2139 | 0x2194..=0x2199 | 0x21A9..=0x21AA
        | 0x231A..=0x231B | 0x2328 | 0x2388 | 0x23CF | 0x23E9..=0x23F3 | 0x23F8..=0x23FA
        | 0x24C2 | 0x25AA..=0x25AB | 0x25B6 | 0x25C0 | 0x25FB..=0x25FE | 0x2600..=0x2605
        | 0x2607..=0x2612 | 0x2614..=0x2685 | 0x2690..=0x2705 | 0x2708..=0x2712 | 0x2714
        | 0x2716 | 0x271D | 0x2721 | 0x2728 | 0x2733..=0x2734 | 0x2744 | 0x2747 | 0x274C
        | 0x274E | 0x2753..=0x2755 | 0x2757 | 0x2763..=0x2767 | 0x2795..=0x2797 | 0x27A1
        | 0x27B0 | 0x27BF | 0x2934..=0x2935 | 0x2B05..=0x2B07 | 0x2B1B..=0x2B1C | 0x2B50
        | 0x2B55 | 0x3030 | 0x303D | 0x3297 | 0x3299 | 0x1F000..=0x1F0FF | 0x1F10D..=0x1F10F
        | 0x1F12F | 0x1F16C..=0x1F171 | 0x1F17E..=0x1F17F | 0x1F18E | 0x1F191..=0x1F19A
        | 0x1F1AD..=0x1F1E5 | 0x1F201..=0x1F20F | 0x1F21A | 0x1F22F | 0x1F232..=0x1F23A
        | 0x1F23C..=0x1F23F | 0x1F249..=0x1F3FA | 0x1F400..=0x1F53D | 0x1F546..=0x1F64F
        | 0x1F680..=0x1F6FF | 0x1F774..=0x1F77F | 0x1F7D5..=0x1F7FF | 0x1F80C..=0x1F80F
        | 0x1F848..=0x1F84F | 0x1F85A..=0x1F85F | 0x1F888..=0x1F88F | 0x1F8AE..=0x1F8FF
        | 0x1F90C..=0x1F93A | 0x1F93C..=0x1F945 | 0x1F947..=0x1FAFF | 0x1FC00..=0x1FFFD)
}

/// The emoji skin tone modifiers (`👩🏽`), which a ZWJ sequence may continue after.
fn skin_tone(c: char) -> bool {
    matches!(c as u32, 0x1F3FB..=0x1F3FF)
}

/// A letter or mark of a script whose spelling uses ZWNJ and ZWJ: Arabic (Persian, Urdu,
/// ...), Syriac, Thaana, N'Ko, the Indic scripts from Devanagari to Sinhala, Tibetan,
/// Myanmar, Khmer and Mongolian, and their extensions and presentation forms. Only
/// non-ASCII letters, so a joiner cannot hide inside a Latin, Greek or Cyrillic name,
/// where it changes nothing a reader sees. Marks count: an Indic conjunct is a consonant,
/// a virama, then the joiner.
fn joining_letter(c: char) -> bool {
    let in_script = matches!(c as u32,
        0x0600..=0x07BF | 0x07C0..=0x07FF | 0x0860..=0x08FF | 0x0900..=0x0DFF
        | 0x0F00..=0x0FFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x1800..=0x18AF
        | 0xA8E0..=0xA8FF | 0xA9E0..=0xA9FF | 0xAA60..=0xAA7F | 0xFB50..=0xFDFF
        | 0xFE70..=0xFEFE | 0x10EC0..=0x10EFF | 0x1EE00..=0x1EEFF);
    in_script && !c.is_numeric() && !c.is_whitespace() && !invisible(c)
}

/// Whether the joiner or selector `c` changes what a reader sees between `prev`, the last
/// character kept, and `next`, the next one not removed: a ZWJ inside an emoji sequence
/// (after a pictograph, its VS16 or its skin tone, before a pictograph), a ZWJ or ZWNJ
/// between two letters of a joining script, a VS15 or VS16 right after a pictograph (or a
/// keycap's digit, `#` or `*`). Never at the start or the end, next to a space or doubled:
/// there it only hides something.
fn means_something(c: char, prev: Option<char>, next: Option<char>) -> bool {
    let Some(prev) = prev else { return false };
    match c {
        ZWJ | ZWNJ => {
            let Some(next) = next else { return false };
            let emoji = c == ZWJ
                && (pictographic(prev) || prev == VS16 || skin_tone(prev))
                && pictographic(next);
            emoji || joining_letter(prev) && joining_letter(next)
        }
        VS15 | VS16 => {
            pictographic(prev)
                || c == VS16 && matches!(prev, '0'..='9' | '#' | '*') && next == Some(KEYCAP)
        }
        _ => false,
    }
}

/// The characters of `text` without those `removed` says go wherever they are, and without
/// the joiners and selectors that mean nothing where they stand ([`means_something`]).
/// Linear: the look past removed characters for the next one stops at the next character
/// kept or judged, so each removed character is passed at most twice.
fn without_hidden<'a>(
    text: &'a str,
    removed: impl Fn(char) -> bool + Copy + 'a,
) -> impl Iterator<Item = char> + 'a {
    let mut rest = text.chars();
    let mut prev = None;
    std::iter::from_fn(move || loop {
        let c = rest.next()?;
        if joiner_or_selector(c) {
            let next = rest.clone().find(|&n| !removed(n));
            if !means_something(c, prev, next) {
                continue;
            }
        } else if removed(c) {
            continue;
        }
        prev = Some(c);
        return Some(c);
    })
}

/// Removes control and invisible characters, turns other whitespace into plain spaces,
/// collapses runs of spaces and trims. Joiners and presentation selectors stay where they
/// change what a reader sees ([`means_something`]): in `👨‍👩‍👧`, `❤️`, a Persian `می‌خواهم`.
pub fn clean_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    let removed = |c: char| c.is_control() && !c.is_whitespace() || invisible(c);
    for c in without_hidden(text, removed) {
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
    let removed = |c: char| c.is_control() && !matches!(c, '\t' | '\n') || invisible(c);
    for c in without_hidden(&normalized, removed) {
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
/// names, a person's name, the house's player) compare folds. Invisible characters are
/// left out, the joiners and selectors the cleaners keep too: `ad\u{200D}min` or a name
/// with a VS16 more reads as the one without.
pub fn fold(name: &str) -> String {
    name.chars()
        .filter(|&c| !invisible(c))
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

    /// Joiners and presentation selectors stay where they change what a reader sees, and
    /// go everywhere else.
    #[test]
    fn joiners_and_selectors_stay_where_they_mean_something() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let rainbow_flag = "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}";
        let technologist = "\u{1F469}\u{1F3FD}\u{200D}\u{1F4BB}";
        let heart = "\u{2764}\u{FE0F}";
        let keycap = "1\u{FE0F}\u{20E3}";
        // Persian "I want" (ZWNJ after the prefix mi), Hindi "ksha" with ZWJ, a Bengali
        // ZWNJ after a virama.
        let persian = "\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}";
        let devanagari = "\u{0915}\u{094D}\u{200D}\u{0937}";
        let bengali = "\u{0995}\u{09CD}\u{200C}\u{09B7}";
        for kept in [
            family,
            rainbow_flag,
            technologist,
            heart,
            keycap,
            persian,
            devanagari,
            bengali,
        ] {
            assert_eq!(clean_line(kept), kept, "{kept:?}");
            assert_eq!(clean_text(kept), kept, "{kept:?}");
            let name = format!("Team {kept} Fuchs");
            assert_eq!(clean_line(&name), name);
        }
        for (raw, cleaned) in [
            // Where they only hide something: between Latin, Greek or Cyrillic letters,
            // at the start or the end, next to a space, doubled, after a plain letter.
            ("ad\u{200D}min", "admin"),
            ("\u{0430}d\u{200C}min", "\u{0430}dmin"),
            ("\u{0430}\u{200C}\u{043E}", "\u{0430}\u{043E}"),
            ("\u{00E9}\u{200D}\u{00E9}", "\u{00E9}\u{00E9}"),
            ("\u{200D}\u{1F468}", "\u{1F468}"),
            ("\u{1F468}\u{200D}", "\u{1F468}"),
            ("\u{1F468}\u{200D} \u{1F469}", "\u{1F468} \u{1F469}"),
            ("\u{1F468} \u{200D}\u{1F469}", "\u{1F468} \u{1F469}"),
            (
                "\u{1F468}\u{200D}\u{200D}\u{1F469}",
                "\u{1F468}\u{200D}\u{1F469}",
            ),
            ("\u{2764}\u{FE0F}\u{FE0F}", "\u{2764}\u{FE0F}"),
            ("\u{2764}\u{FE0E}\u{FE0F}", "\u{2764}\u{FE0E}"),
            ("a\u{FE0F}b\u{FE0E}", "ab"),
            ("1\u{FE0F}", "1"),
            ("\u{FE0F}\u{2764}", "\u{2764}"),
            ("\u{0645}\u{200C}", "\u{0645}"),
            (
                "\u{0645}\u{200C}\u{200C}\u{062E}",
                "\u{0645}\u{200C}\u{062E}",
            ),
            ("\u{0645}\u{200C} \u{062E}", "\u{0645} \u{062E}"),
            ("\u{0645}\u{200C}a", "\u{0645}a"),
            // A zero-width space between does not make a sequence.
            (
                "\u{1F468}\u{200D}\u{200B}\u{1F469}",
                "\u{1F468}\u{200D}\u{1F469}",
            ),
            (
                "\u{1F468}\u{200B}\u{200D}\u{1F469}",
                "\u{1F468}\u{200D}\u{1F469}",
            ),
            // The other selectors and the tags stay removed.
            ("\u{2764}\u{FE00}", "\u{2764}"),
            ("\u{1F3F4}\u{E0067}\u{E0062}\u{E007F}", "\u{1F3F4}"),
        ] {
            assert_eq!(clean_line(raw), cleaned, "{raw:?}");
            assert_eq!(clean_text(raw), cleaned, "{raw:?}");
        }
        assert_eq!(
            clean_text("\u{1F468}\u{200D}\n\u{1F469} \u{2764}\u{FE0F}"),
            "\u{1F468}\n\u{1F469} \u{2764}\u{FE0F}"
        );
        // Compared as they read: the joiners and selectors the cleaners keep do not make a
        // name another one.
        assert_eq!(fold("\u{2764}\u{FE0F} Fuchs"), fold("\u{2764} Fuchs"));
        assert_eq!(fold(persian), fold(&persian.replace('\u{200C}', "")));
        assert!(reserved("ad\u{200D}min"));
        assert!(reserved("\u{0430}d\u{FE0F}min"));
    }

    /// What may stand beside the characters whose neighbours matter.
    fn arb_text() -> impl Strategy<Value = String> {
        let alphabet = prop::sample::select(vec![
            '\u{200C}',
            '\u{200D}',
            '\u{FE0E}',
            '\u{FE0F}',
            '\u{FE00}',
            '\u{20E3}',
            '\u{200B}',
            '\u{202E}',
            '\u{E0067}',
            '\u{0007}',
            ' ',
            '\t',
            '\n',
            '\r',
            '\u{3000}',
            'a',
            'd',
            '1',
            '#',
            '\u{0430}',
            '\u{00E9}',
            '\u{1F468}',
            '\u{1F469}',
            '\u{2764}',
            '\u{1F3FD}',
            '\u{1F308}',
            '\u{0645}',
            '\u{062E}',
            '\u{0915}',
            '\u{094D}',
            '\u{0660}',
            '\u{060C}',
        ]);
        prop::collection::vec(alphabet, 0..24).prop_map(|v| v.into_iter().collect())
    }

    fn proptest_config() -> ProptestConfig {
        ProptestConfig {
            cases: 4096,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7465_7874),
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    /// Every joiner or selector of a cleaned text means something between its neighbours
    /// there; no other invisible or control character is left.
    fn well_placed(out: &str) -> bool {
        let chars: Vec<char> = out.chars().collect();
        chars.iter().enumerate().all(|(i, &c)| {
            if joiner_or_selector(c) {
                let prev = i.checked_sub(1).map(|p| chars[p]);
                means_something(c, prev, chars.get(i + 1).copied())
            } else {
                !invisible(c) && (!c.is_control() || c == '\n')
            }
        })
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(proptest_config())]

        #[test]
        fn cleaned_text_keeps_only_meaningful_joiners(raw in arb_text()) {
            for out in [clean_line(&raw), clean_text(&raw)] {
                prop_assert!(well_placed(&out), "{raw:?} -> {out:?}");
            }
            // Cleaning twice changes nothing more.
            let line = clean_line(&raw);
            prop_assert_eq!(clean_line(&line), line.clone());
            let text = clean_text(&raw);
            prop_assert_eq!(clean_text(&text), text);
            // A name reads the same with or without the joiners and selectors it kept.
            let bare: String = raw.chars().filter(|&c| !joiner_or_selector(c)).collect();
            prop_assert_eq!(fold(&line), fold(&clean_line(&bare)));
        }
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
