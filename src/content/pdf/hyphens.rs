//! Line ends in running text: a word hyphenated at a line end is
//! joined again, and a compound that was cut at its own hyphen keeps it. Pure.
//!
//! Typesetters (TeX, groff) break `workers` as `work-` / `ers`, and also break
//! `long-term` after its hyphen. The document itself is the dictionary: a cut
//! whose hyphenated form the document writes elsewhere keeps its hyphen, one
//! whose joined form it writes is joined; otherwise a lowercase continuation is
//! joined (`work-ers`: hyphenation) and anything else keeps the hyphen
//! (`30-` / `minute`, `Anglo-` / `Saxon`). A soft hyphen (U+00AD) is always joined.

use std::collections::HashSet;

/// The words of a document, lowercase: those written with a hyphen inside
/// (`long-term`) and those without (`recsports`).
#[derive(Debug, Default)]
pub(crate) struct Vocabulary {
    hyphenated: HashSet<String>,
    plain: HashSet<String>,
}

impl Vocabulary {
    /// The vocabulary of `lines`; words at a line end with a trailing hyphen are
    /// not counted (they are the cuts being judged).
    pub(crate) fn of<'a>(lines: impl IntoIterator<Item = &'a String>) -> Vocabulary {
        let mut vocabulary = Vocabulary::default();
        for line in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            for (i, word) in words.iter().enumerate() {
                if i + 1 == words.len() && word.ends_with(['-', '\u{ad}', '\u{2010}']) {
                    continue;
                }
                let word = word
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase();
                if word.is_empty() {
                    continue;
                }
                if word.contains('-') {
                    vocabulary.hyphenated.insert(word);
                } else {
                    vocabulary.plain.insert(word);
                }
            }
        }
        vocabulary
    }
}

/// A block's lines as one text: line ends become spaces, and cuts at a hyphen are
/// judged as the module says.
pub(crate) fn join_lines(lines: &[String], vocabulary: &Vocabulary) -> String {
    let mut out = String::new();
    for line in lines {
        if out.is_empty() {
            out.push_str(line);
            continue;
        }
        match cut(&out, line, vocabulary) {
            Cut::Join(keep) => {
                out.truncate(out.len() - out.chars().last().map_or(0, char::len_utf8));
                if keep {
                    out.push('-');
                }
            }
            Cut::None => out.push(' '),
        }
        out.push_str(line);
    }
    out
}

enum Cut {
    /// Not a cut word: a space between the lines.
    None,
    /// A cut word: no space; keep the hyphen (`true`) or drop it.
    Join(bool),
}

fn cut(before: &str, line: &str, vocabulary: &Vocabulary) -> Cut {
    let Some(mark) = before.chars().last() else {
        return Cut::None;
    };
    if !matches!(mark, '-' | '\u{ad}' | '\u{2010}') {
        return Cut::None;
    }
    let head = &before[..before.len() - mark.len_utf8()];
    let fragment = head
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_start_matches(|c: char| !c.is_alphanumeric());
    let next = line.split_whitespace().next().unwrap_or("");
    let tail = next.trim_end_matches(|c: char| !c.is_alphanumeric());
    let (Some(last), Some(first)) = (fragment.chars().last(), tail.chars().next()) else {
        return Cut::None;
    };
    if !last.is_alphanumeric() || !first.is_alphanumeric() {
        return Cut::None;
    }
    if mark == '\u{ad}' {
        return Cut::Join(false);
    }
    let hyphenated = format!("{fragment}-{tail}").to_lowercase();
    let joined = format!("{fragment}{tail}").to_lowercase();
    if vocabulary.hyphenated.contains(&hyphenated) {
        Cut::Join(true)
    } else if vocabulary.plain.contains(&joined) {
        Cut::Join(false)
    } else {
        Cut::Join(!(last.is_alphabetic() && first.is_lowercase()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(a: &str, b: &str, elsewhere: &[&str]) -> String {
        let lines = vec![a.to_owned(), b.to_owned()];
        let others: Vec<String> = elsewhere.iter().map(|s| (*s).to_owned()).collect();
        let vocabulary = Vocabulary::of(lines.iter().chain(&others));
        join_lines(&lines, &vocabulary)
    }

    #[test]
    fn line_end_hyphens_are_judged_by_the_document_itself() {
        assert_eq!(join("the work-", "ers went", &[]), "the workers went");
        assert_eq!(
            join("a long-", "term plan", &["long-term"]),
            "a long-term plan"
        );
        assert_eq!(
            join("at Rec-", "Sports now", &["RecSports members"]),
            "at RecSports now"
        );
        assert_eq!(join("Anglo-", "Saxon", &[]), "Anglo-Saxon");
        assert_eq!(join("a 30-", "minute call", &[]), "a 30-minute call");
        assert_eq!(join("ends with -", "next", &[]), "ends with - next");
        assert_eq!(join("soft\u{ad}", "ware", &[]), "software");
        assert_eq!(join("plain", "next", &[]), "plain next");
        assert_eq!(join("a \u{2014}-", "(x)", &[]), "a \u{2014}- (x)");
    }
}
