//! cl100k_base pre-tokenisation without a regex engine (FR-WF-14).
//!
//! tiktoken splits text with the pattern
//!
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! under leftmost-first (backtracking) semantics. Compiling it with a regex
//! engine is a fixed start-up cost every CLI call paid; the pattern is
//! simple enough to follow by hand, one alternative after the other, which is
//! also faster per piece. [`split`] returns exactly the pieces the pattern
//! matches: the tests compare it with the `bpe-openai` crate's compiled pattern
//! on generated texts. `\p{L}`, `\p{N}` and `\s` are regex-syntax's own Unicode
//! tables (the ones that crate compiles the pattern with), read once per process
//! for non-ASCII characters only.

use std::sync::OnceLock;

/// What a character is to the pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `\p{L}`.
    Letter,
    /// `\p{N}`.
    Number,
    /// `\s` (White_Space).
    Space,
    /// Anything else: `[^\s\p{L}\p{N}]`.
    Other,
}

/// Sorted inclusive ranges of the non-ASCII `\p{L}`, `\p{N}` and `\s` characters.
struct Tables {
    letters: Vec<(char, char)>,
    numbers: Vec<(char, char)>,
    spaces: Vec<(char, char)>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables {
        letters: class(r"\p{L}"),
        numbers: class(r"\p{N}"),
        spaces: class(r"\s"),
    })
}

/// The ranges of a one-class pattern, as regex-syntax reads it (empty if it does
/// not parse to a Unicode class, which the tests rule out).
fn class(pattern: &str) -> Vec<(char, char)> {
    use regex_syntax::hir::{Class, HirKind};
    match regex_syntax::parse(pattern).map(|hir| hir.into_kind()) {
        Ok(HirKind::Class(Class::Unicode(class))) => class
            .ranges()
            .iter()
            .map(|range| (range.start(), range.end()))
            .collect(),
        _ => Vec::new(),
    }
}

fn in_ranges(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(start, end)| {
            if end < c {
                std::cmp::Ordering::Less
            } else if start > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

fn kind(c: char) -> Kind {
    if c.is_ascii() {
        return match c as u8 {
            b'a'..=b'z' | b'A'..=b'Z' => Kind::Letter,
            b'0'..=b'9' => Kind::Number,
            b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | b' ' => Kind::Space,
            _ => Kind::Other,
        };
    }
    let tables = tables();
    if in_ranges(&tables.letters, c) {
        Kind::Letter
    } else if in_ranges(&tables.numbers, c) {
        Kind::Number
    } else if in_ranges(&tables.spaces, c) {
        Kind::Space
    } else {
        Kind::Other
    }
}

fn is_newline(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// The pieces of `text`, in order; they concatenate to `text`.
pub(super) fn split(text: &str) -> Splits<'_> {
    Splits { text, at: 0 }
}

/// The iterator of [`split`].
pub(super) struct Splits<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Splits<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = &self.text[self.at..];
        if rest.is_empty() {
            return None;
        }
        let len = piece_len(rest);
        self.at += len;
        Some(&rest[..len])
    }
}

/// The byte length of the piece at the start of `text` (not empty).
fn piece_len(text: &str) -> usize {
    let mut chars = text.chars();
    let Some(c0) = chars.next() else {
        return 0;
    };
    let c1 = chars.next();
    let k0 = kind(c0);
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)
    let contracted = if c0 == '\'' {
        contraction(&text[1..])
    } else {
        None
    };
    if let Some(len) = contracted {
        return 1 + len;
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if k0 == Kind::Letter {
        return run(text, 0, |k, _| k == Kind::Letter);
    }
    let k1 = c1.map(kind);
    if k0 != Kind::Number && !is_newline(c0) && k1 == Some(Kind::Letter) {
        return run(text, c0.len_utf8(), |k, _| k == Kind::Letter);
    }
    // \p{N}{1,3}
    if k0 == Kind::Number {
        return text
            .char_indices()
            .take(3)
            .take_while(|&(_, c)| kind(c) == Kind::Number)
            .map(|(i, c)| i + c.len_utf8())
            .last()
            .unwrap_or(0);
    }
    // ' '?[^\s\p{L}\p{N}]+[\r\n]*
    let others_from = if k0 == Kind::Other {
        Some(0)
    } else if c0 == ' ' && k1 == Some(Kind::Other) {
        Some(1)
    } else {
        None
    };
    if let Some(from) = others_from {
        let end = run(text, from, |k, _| k == Kind::Other);
        return run(text, end, |_, c| is_newline(c));
    }
    // c0 is whitespace. \s*[\r\n]+ ends after the last newline of the run.
    let space_end = run(text, 0, |k, _| k == Kind::Space);
    let spaces = &text[..space_end];
    if let Some(newline) = spaces.rfind(['\r', '\n']) {
        return newline + 1;
    }
    // \s+(?!\S): the whole run at the end of the text, else all of it but its
    // last character; \s+: a single character.
    if space_end == text.len() {
        return space_end;
    }
    match spaces.char_indices().next_back() {
        Some((last, _)) if last > 0 => last,
        _ => space_end,
    }
}

/// The byte length of a contraction's letters at the start of `text` (after the
/// apostrophe), matched case-insensitively as regex-syntax folds them.
fn contraction(text: &str) -> Option<usize> {
    let mut chars = text.chars();
    let c1 = chars.next()?;
    match c1 {
        's' | 'S' | '\u{17f}' | 't' | 'T' | 'm' | 'M' | 'd' | 'D' => Some(c1.len_utf8()),
        'r' | 'R' | 'v' | 'V' | 'l' | 'L' => {
            let c2 = chars.next()?;
            let second = match c1 {
                'r' | 'R' | 'v' | 'V' => matches!(c2, 'e' | 'E'),
                _ => matches!(c2, 'l' | 'L'),
            };
            second.then_some(2)
        }
        _ => None,
    }
}

/// The end of the run of characters from byte `from` that satisfy `keep`.
fn run(text: &str, from: usize, keep: impl Fn(Kind, char) -> bool) -> usize {
    text[from..]
        .char_indices()
        .find(|&(_, c)| !keep(kind(c), c))
        .map_or(text.len(), |(i, _)| from + i)
}

/// Texts at the edges of the cl100k pattern (contractions, Unicode classes,
/// whitespace runs before a non-space), for this module's and the index's tests.
#[cfg(test)]
pub(crate) const TRICKY_TEXTS: &[&str] = &[
    "",
    "a",
    "Hello, world! It's 2026-01-10; we'll see.\n\nNext para.",
    "end.\n\n\n  - item\n\t\tcode   \n \n",
    "x   \n   \r\n\r\n  y  z\u{a0}\u{a0}w\u{3000}\n",
    "'s'S'LL'Ve 123456 1.5e10 ''' don't 'ſ 'Re 'rE 'lL 'x '",
    "日本語のテキスト。中文！😀👨\u{200d}👩\u{200d}👧 e\u{301}",
    "    fn main() {\n        println!(\"hi\");\n    }\n```\n",
    "aaaa                                                        b",
    "\n\n\n\n\n\n\n\n x\n\n\n\n\n\n\n",
    "||||----====####    ....!!!!????\n\n",
    " !\r\n !!\n\r  \u{85}x\u{85}\u{85}",
    "   ",
    " ",
    "\u{a0}a \u{2003}b \tc\t\n",
    "12345678 ٣٤٥٦ Ⅻ ½¾ x²",
];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn reference(text: &str) -> Vec<&str> {
        bpe_openai::cl100k_base().split(text).collect()
    }

    #[test]
    fn the_unicode_tables_parse() {
        let tables = tables();
        assert!(tables.letters.len() > 500);
        assert!(tables.numbers.len() > 100);
        assert!(tables.spaces.len() > 5);
        assert_eq!(kind('é'), Kind::Letter);
        assert_eq!(kind('٣'), Kind::Number);
        assert_eq!(kind('\u{3000}'), Kind::Space);
        assert_eq!(kind('\u{85}'), Kind::Space);
        assert_eq!(kind('—'), Kind::Other);
    }

    #[test]
    fn pieces_equal_the_compiled_pattern_on_tricky_texts() {
        for text in TRICKY_TEXTS {
            assert_eq!(split(text).collect::<Vec<_>>(), reference(text), "{text:?}");
        }
    }

    fn text() -> impl Strategy<Value = String> {
        let fragment = prop::sample::select(vec![
            "a", "Zz", "word", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\u{a0}", "\u{3000}",
            "\u{85}", "\u{2028}", "\x0b", "\x0c", "'s", "'ll", "'", "'S", "'Re", "'ſ", "'t", "'M",
            "'d", "'v", "'ve", "1", "234", "٣", "Ⅻ", "½", ".", "!", "?", "#", "-", "`", "```", "|",
            "日本", "😀", "e\u{301}", "\u{301}", "\u{200b}", "\u{200d}", "(", ")", "\"", "é", "ß",
            "Ω", "—", "\u{feff}", "\0",
        ]);
        prop::collection::vec(fragment, 0..60).prop_map(|f| f.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn pieces_equal_the_compiled_pattern(text in text()) {
            prop_assert_eq!(split(&text).collect::<Vec<_>>(), reference(&text));
        }

        #[test]
        fn pieces_equal_the_compiled_pattern_on_any_string(text in any::<String>()) {
            prop_assert_eq!(split(&text).collect::<Vec<_>>(), reference(&text));
        }
    }
}
