//! Token counting with cl100k_base (FR-WF-14).
//!
//! [`TokenCounter`] is the seam the SRD calls `forge_context::TokenCounter::count_str()`:
//! a host agent can hand the tool its own counter, and chunking and output fitting
//! only ever count through it. [`Cl100k`] is the built-in implementation.
//!
//! # How cl100k_base is counted
//!
//! Counting is pre-tokenising with the encoding's regex, then byte-pair encoding
//! each piece. Both are done here without building anything at run time, because a
//! CLI call pays every start-up cost on every call (building the
//! `bpe-openai` crate's tables took most of a cached call's time and 30 MB):
//!
//! * `pretokenize.rs` follows the cl100k_base pattern by hand (no regex to compile);
//! * `vocab.rs` reads the vocabulary and a lookup table laid out by `build.rs`, in
//!   place, and counts a piece with tiktoken's own merge loop;
//! * a piece longer than 64 bytes, where that loop's quadratic cost would show (a
//!   100 KB word, a base64 blob: NFR-WF-PERF-02), goes to the `bpe-openai` crate's
//!   linear encoder, built on first use, so only such a text pays for its tables.
//!
//! The token counts equal tiktoken's: the tests below compare them with those of the
//! official Python `tiktoken` 0.14.0 on fixed strings and on 1,000 generated ones
//! (and the `bpe-openai` implementation this replaced was checked, once, on a 39 MB
//! corpus of 40,001 strings); the pieces and the vocabulary are compared with
//! `bpe-openai`'s in their own modules.
//!
//! # Counting fast
//!
//! Counting is pre-tokenising with the encoding's regex, then byte-pair encoding each
//! piece. Two things make chunking cheap on top of that, neither changing a count:
//! short pieces' counts are memoised per thread (a page repeats its words), and
//! [`TokenCounter::index`] reads a document once so that the count of any of its
//! spans costs a binary search and a piece or two at the span's ends (`index.rs`).

mod index;
mod pretokenize;
mod vocab;
mod vocab_hash;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

/// Counts tokens the way the host agent does (FR-WF-14; Appendix E's
/// `forge_context::TokenCounter::count_str()`).
///
/// Implementations must be deterministic: the same text always gives the same count
/// (T-WF-DET-03 depends on it).
pub trait TokenCounter: Send + Sync {
    /// The number of tokens of `text`.
    fn count_str(&self, text: &str) -> usize;

    /// The number of tokens of `text` if it is at most `limit`, else `None`.
    ///
    /// Chunking asks this of blocks that may be far over budget, so an implementation
    /// may stop early; the default counts everything. `Some(n)` must equal
    /// [`count_str`](TokenCounter::count_str); `None` must mean "over `limit`" or, for an
    /// implementation that stops early on a safe margin, "possibly over": callers only
    /// use it to decide to split further.
    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        let n = self.count_str(text);
        (n <= limit).then_some(n)
    }

    /// A [`SpanCounter`] for many substrings of one document. The default counts each
    /// substring from scratch; an implementation may read the document once instead
    /// (NFR-WF-PERF-02: chunking asks for thousands of spans of the same Markdown).
    fn index<'a>(&'a self, document: &'a str) -> Box<dyn SpanCounter + 'a> {
        Box::new(FromScratch {
            counter: self,
            document,
        })
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for &T {
    fn count_str(&self, text: &str) -> usize {
        (**self).count_str(text)
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        (**self).count_up_to(text, limit)
    }

    fn index<'a>(&'a self, document: &'a str) -> Box<dyn SpanCounter + 'a> {
        (**self).index(document)
    }
}

/// Token counts of byte ranges of one document, made by [`TokenCounter::index`].
///
/// Ranges must lie on character boundaries of the document.
pub trait SpanCounter {
    /// Exactly `count_str(&document[range])`.
    fn count_span(&self, range: Range<usize>) -> usize;

    /// Exactly `count_up_to(&document[range], limit)`.
    fn count_span_up_to(&self, range: Range<usize>, limit: usize) -> Option<usize> {
        let n = self.count_span(range);
        (n <= limit).then_some(n)
    }
}

/// The default [`SpanCounter`]: every range counted from scratch.
struct FromScratch<'a, C: ?Sized> {
    counter: &'a C,
    document: &'a str,
}

impl<C: TokenCounter + ?Sized> SpanCounter for FromScratch<'_, C> {
    fn count_span(&self, range: Range<usize>) -> usize {
        self.counter.count_str(&self.document[range])
    }

    fn count_span_up_to(&self, range: Range<usize>, limit: usize) -> Option<usize> {
        self.counter.count_up_to(&self.document[range], limit)
    }
}

/// OpenAI's cl100k_base encoding, the tool's default counter (FR-WF-14).
///
/// A zero-sized handle: the vocabulary is static data read in place; only the
/// Unicode classes of pre-tokenisation (and, for pieces over 64 bytes, the
/// `bpe-openai` encoder) are built, once per process, on first use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cl100k;

impl Cl100k {
    /// Builds the Unicode classes of pre-tokenisation now rather than on the first
    /// count, e.g. before a server starts answering requests. Idempotent and cheap.
    /// The `bpe-openai` encoder of long pieces stays unbuilt until a text needs it
    /// (about 30 MB that most processes never use).
    pub fn warm_up() {
        let _ = pretokenize::split("\u{e9}").count();
    }
}

impl TokenCounter for Cl100k {
    fn count_str(&self, text: &str) -> usize {
        // cl100k_base does no Unicode normalisation: counting is pre-tokenising with
        // the encoding's regex, then byte-pair encoding each piece, with short
        // pieces memoised.
        PIECE_COUNTS.with_borrow_mut(|cache| {
            pretokenize::split(text)
                .map(|piece| cache.count(piece))
                .sum()
        })
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        PIECE_COUNTS.with_borrow_mut(|cache| {
            let mut total = 0;
            for piece in pretokenize::split(text) {
                total += if piece.len() > vocab::MAX_MERGE_BYTES {
                    // The encoder stops soon after the limit instead of encoding a
                    // long piece (a megabyte-long word) to its end.
                    bpe_openai::cl100k_base()
                        .bpe
                        .count_till_limit(piece.as_bytes(), limit - total)?
                } else {
                    cache.count(piece)
                };
                if total > limit {
                    return None;
                }
            }
            Some(total)
        })
    }

    /// One pass over the document; every span after that costs a binary search and
    /// the count of a piece or two at its ends (see `index.rs`).
    fn index<'a>(&'a self, document: &'a str) -> Box<dyn SpanCounter + 'a> {
        match index::Cl100kIndex::new(document) {
            Some(index) => Box::new(index),
            None => Box::new(FromScratch {
                counter: self,
                document,
            }),
        }
    }
}

thread_local! {
    /// Per-thread memo of short multi-token pieces' counts. Counting is pure, so a
    /// memo cannot change a result; it only skips re-merging the words a document
    /// repeats. No lock, and bounded: see [`PieceCounts`]. Its hasher stays the
    /// standard keyed one: a page's pieces are chosen by whoever wrote the page.
    static PIECE_COUNTS: RefCell<PieceCounts> = RefCell::new(PieceCounts::default());
}

/// Token counts of short pre-tokenised pieces, bounded in size.
#[derive(Default)]
struct PieceCounts(HashMap<Box<str>, u8>);

impl PieceCounts {
    /// Longer pieces are rare and not worth hashing.
    const MAX_PIECE_BYTES: usize = 32;
    /// At most this many entries (about 2 MB); the memo starts over when full.
    const MAX_ENTRIES: usize = 1 << 15;

    fn count(&mut self, piece: &str) -> usize {
        if piece.len() > Self::MAX_PIECE_BYTES {
            return piece_tokens(piece.as_bytes());
        }
        // Most pieces are one token: the static table answers as fast as the memo
        // would, without filling it.
        if vocab::rank(piece.as_bytes()).is_some() {
            return 1;
        }
        if let Some(&n) = self.0.get(piece) {
            return usize::from(n);
        }
        let n = piece_tokens(piece.as_bytes());
        if self.0.len() >= Self::MAX_ENTRIES {
            self.0.clear();
        }
        if let Ok(small) = u8::try_from(n) {
            self.0.insert(piece.into(), small);
        }
        n
    }
}

/// The tokens of one pre-tokenised piece: tiktoken's merge over the static tables,
/// or the `bpe-openai` encoder for a long piece (linear where the merge is not).
fn piece_tokens(piece: &[u8]) -> usize {
    if piece.len() <= vocab::MAX_MERGE_BYTES {
        vocab::merge_count(piece)
    } else {
        bpe_openai::cl100k_base().bpe.count(piece)
    }
}

impl fmt::Display for Cl100k {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cl100k_base")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected counts from the official Python `tiktoken` 0.14.0:
    /// `tiktoken.Encoding(**tiktoken_ext.openai_public.cl100k_base())`, with the
    /// vocabulary file read from a local copy that passed tiktoken's own SHA-256 check
    /// (`223921b7…b2a7`), and `len(enc.encode_ordinary(s))` for each string.
    fn fixed_cases() -> Vec<(&'static str, String, usize)> {
        vec![
            ("empty", String::new(), 0),
            ("ascii_words", "hello world".into(), 2),
            (
                "ascii_punct",
                "Hello, World! How's it going? I'm fine; you'll see.".into(),
                17,
            ),
            (
                "contractions_upper",
                "I'LL DON'T We'Ve THEY'RE it's".into(),
                12,
            ),
            (
                "digits",
                "1234567890 3.14159 2026-01-10T12:00:00Z 1,000,000".into(),
                29,
            ),
            (
                "cjk",
                "日本語のテキストを数えます。中文字符测试。한국어 텍스트".into(),
                25,
            ),
            (
                "emoji",
                "👍🏽 family: 👨\u{200d}👩\u{200d}👧\u{200d}👦 flags 🇫🇷🇯🇵 ❤\u{fe0f}".into(),
                40,
            ),
            (
                "mixed_scripts",
                "مرحبا بالعالم שלום עולם नमस्ते दुनिया สวัสดีชาวโลก Привет, мир".into(),
                54,
            ),
            (
                "combining",
                "e\u{301} n\u{303} A\u{30a} \u{e9} caf\u{e9}".into(),
                10,
            ),
            (
                "code_rust",
                "fn main() {\n    let x = vec![1, 2, 3];\n    println!(\"{:?}\", x);\n}\n".into(),
                26,
            ),
            (
                "code_python",
                "def f(x):\n\treturn {'a': x ** 2}  # square\n\n\nprint(f(3))\n".into(),
                22,
            ),
            (
                "markdown",
                "# Title\n\n- item one\n- item two\n\n```rust\nfn x() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n".into(),
                37,
            ),
            (
                "ws_runs",
                format!("a{}b\n\n\n\t\t  \r\n  c   ", " ".repeat(50)),
                9,
            ),
            ("ws_leading", "   leading spaces".into(), 3),
            ("ws_trailing", "trailing spaces   ".into(), 4),
            ("ws_newlines", "\n\n\n".into(), 1),
            ("ws_only_spaces", "    ".into(), 1),
            ("ws_space_newline_space", " \n ".into(), 2),
            ("ws_tabs", "\t\t\t".into(), 1),
            ("ws_crlf", "line one\r\nline two\r\n\r\n".into(), 6),
            ("ws_nbsp_ideographic", "a\u{a0}b\u{3000}c\u{2003}d".into(), 8),
            ("ws_spaces_10k", " ".repeat(10_000), 79),
            ("ws_newlines_10k", "\n".repeat(10_000), 313),
            (
                "nows_letters_100k",
                "abcdefghijklmnopqrstuvwxyz".repeat(4000),
                4000,
            ),
            (
                "nows_url_100k",
                "https://example.com/a/b?c=d&e=f#g".repeat(3100),
                37_200,
            ),
            ("nows_cjk_100k", "日本語中文字符".repeat(4800), 33_600),
        ]
    }

    #[test]
    fn fr_wf_14_counts_equal_tiktoken_on_fixed_strings() {
        for (name, text, expected) in fixed_cases() {
            assert_eq!(Cl100k.count_str(&text), expected, "{name}");
        }
        let long = fixed_cases()
            .into_iter()
            .filter(|(name, ..)| name.ends_with("_100k"));
        for (name, text, _) in long {
            assert!(text.len() >= 100_000, "{name} is {} bytes", text.len());
            assert!(!text.contains(char::is_whitespace), "{name}");
        }
    }

    /// Fragments the generator below strings together: the cases pre-tokenisation
    /// treats specially (contractions, digit runs, whitespace before a letter, CRLF,
    /// Unicode spaces, ZWJ sequences, combining marks).
    const FRAGMENTS: [&str; 51] = [
        "a",
        "b",
        "z",
        "A",
        "Q",
        " ",
        "  ",
        "   ",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        "'s",
        "'LL",
        "'",
        "0",
        "7",
        "123",
        "4567",
        ".",
        ",",
        "!",
        "?",
        "-",
        "_",
        "#",
        "`",
        "```",
        "*",
        "|",
        "(",
        ")",
        "日",
        "本",
        "😀",
        "👨\u{200d}👩\u{200d}👧",
        "é",
        "e\u{301}",
        "\u{a0}",
        "\u{3000}",
        "ß",
        "Ω",
        "ñ",
        "中文",
        " the",
        " quick",
        "hello",
        "don't",
        "http://x.y/z?q=1",
        "\u{200b}",
        "—",
    ];

    /// The same generator as the Python script that produced [`GENERATED_COUNTS`]:
    /// a 64-bit LCG (Knuth's MMIX constants), seed 0x5EED, `state >> 33` per draw;
    /// each string is `draw % 65` fragments, each `FRAGMENTS[draw % 51]`.
    fn generated_strings(n: usize) -> Vec<String> {
        let mut state: u64 = 0x5EED;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        (0..n)
            .map(|_| {
                let k = next() % 65;
                (0..k)
                    .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    /// `len(enc.encode_ordinary(s))` from the official Python `tiktoken` 0.14.0 (see
    /// [`fixed_cases`]) for each of `generated_strings(1000)`.
    const GENERATED_COUNTS: &str = include_str!("tokens/tiktoken_counts.txt");

    #[test]
    fn fr_wf_14_counts_equal_tiktoken_on_generated_strings() {
        let expected: Vec<usize> = GENERATED_COUNTS
            .trim()
            .split(',')
            .map(|n| n.parse().expect("a count"))
            .collect();
        let strings = generated_strings(expected.len());
        assert_eq!(expected.len(), 1000);
        for (i, (text, expected)) in strings.iter().zip(&expected).enumerate() {
            assert_eq!(Cl100k.count_str(text), *expected, "string {i}: {text:?}");
        }
    }

    /// A differential check on any corpus: one JSON object `{"text", "count"}` per
    /// line, counts from the official tiktoken (see [`fixed_cases`]). Run with
    /// `WEBFETCH_TIKTOKEN_CORPUS=corpus.jsonl cargo test --lib tokens -- --ignored`.
    #[test]
    #[ignore = "needs a corpus file written by Python tiktoken"]
    fn fr_wf_14_counts_equal_tiktoken_on_a_corpus() {
        let path = std::env::var_os("WEBFETCH_TIKTOKEN_CORPUS").expect("corpus path");
        let corpus = std::fs::read_to_string(path).expect("read corpus");
        let (mut strings, mut bytes) = (0, 0);
        for line in corpus.lines() {
            let case: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            let text = case["text"].as_str().expect("text");
            let expected = case["count"].as_u64().expect("count") as usize;
            assert_eq!(Cl100k.count_str(text), expected, "{text:?}");
            strings += 1;
            bytes += text.len();
        }
        eprintln!("{strings} strings, {bytes} bytes: all counts equal");
    }

    #[test]
    fn count_up_to_agrees_with_count_str() {
        for (name, text, expected) in fixed_cases() {
            assert_eq!(
                Cl100k.count_up_to(&text, expected),
                Some(expected),
                "{name}"
            );
            if expected > 0 {
                assert_eq!(Cl100k.count_up_to(&text, expected - 1), None, "{name}");
            }
        }
    }

    #[test]
    fn a_counter_behind_a_reference_counts_the_same() {
        let counter: &dyn TokenCounter = &Cl100k;
        assert_eq!((&counter).count_str("hello world"), 2);
        Cl100k::warm_up();
        assert_eq!(Cl100k.to_string(), "cl100k_base");
    }
}
