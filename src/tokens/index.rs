//! Exact token counts of many substrings of one document in one pass over it.
//!
//! Chunking asks for the count of thousands of spans of the same Markdown (every
//! block with its separator, every candidate chunk). Counting each from scratch reads
//! the document two or three times over. cl100k_base counting is pre-tokenisation
//! (a regex splits the text into pieces) followed by byte-pair encoding of each
//! piece, and the regex is local. The index pre-tokenises and encodes the whole
//! document once, keeps prefix sums of the piece counts, and answers
//! `count(document[a..e])` as
//!
//! 1. the pieces of `document[a..e]` itself from `a` until one ends where a piece of
//!    the whole document ends (none at all when `a` is such a boundary, the usual
//!    case: blocks, sentences and words start there);
//! 2. plus the prefix-sum difference over the document's pieces from there on, as
//!    long as cutting the text at `e` cannot change them (below);
//! 3. plus the pieces of the remainder up to `e`, counted afresh.
//!
//! When can a cut at `e` change a piece `[b, b')` with `b' <= e`? The pattern's
//! only construct that a shorter text can newly satisfy is `$` (`\s+$`); everything
//! else matches a shorter text only if it matched the longer one, and a greedy run
//! that stopped at `b'` stops there in both. `\s+$` needs the piece to be all
//! whitespace, so a piece holding any other character is the same for every `e >=
//! b'`. A whitespace piece is kept only when its whole whitespace run, plus two bytes
//! for the look-ahead and end checks, ends at or before `e`. Each part is then what
//! counting `document[a..e]` from scratch computes, so the sum is equal, not an
//! estimate; the tests compare it with `count_str` on hundreds of thousands of spans.

use std::ops::Range;

use super::{Cl100k, PIECE_COUNTS, SpanCounter, TokenCounter, pretokenize};

/// The cl100k_base index of one document.
pub(super) struct Cl100kIndex<'a> {
    text: &'a str,
    /// Start of every piece of the whole document, then `text.len()`.
    bounds: Vec<u32>,
    /// `sums[i]`: tokens of the pieces before piece `i` (`sums.len() == bounds.len()`).
    sums: Vec<u32>,
    /// `reach[i]`: the largest span end that could still change one of pieces
    /// `0..=i`, plus one (a running maximum, so it can be searched).
    reach: Vec<u32>,
}

impl<'a> Cl100kIndex<'a> {
    /// Indexes `text`, or `None` when it is too long for 32-bit offsets.
    pub(super) fn new(text: &'a str) -> Option<Self> {
        let limit = u32::MAX as usize - 8;
        if text.len() > limit {
            return None;
        }
        let mut index = Cl100kIndex {
            text,
            bounds: Vec::new(),
            sums: Vec::new(),
            reach: Vec::new(),
        };
        let (mut pos, mut total, mut reach) = (0usize, 0usize, 0usize);
        // End of the whitespace run last measured: runs split into several pieces
        // are measured once.
        let mut run_end = 0usize;
        PIECE_COUNTS.with_borrow_mut(|cache| {
            for piece in pretokenize::split(text) {
                let end = pos + piece.len();
                // The smallest span end from which this piece is certain to be the
                // same (see the module doc).
                let safe_from = if piece.chars().all(char::is_whitespace) {
                    if run_end <= pos {
                        // The end of the whitespace run starting here.
                        run_end = text.len() - text[pos..].trim_start().len();
                    }
                    run_end + 2
                } else {
                    end
                };
                reach = reach.max(safe_from);
                index.bounds.push(pos as u32);
                index.sums.push(total as u32);
                index.reach.push(reach.min(limit) as u32);
                total += cache.count(piece);
                pos = end;
            }
        });
        if total > limit {
            return None;
        }
        index.bounds.push(pos as u32);
        index.sums.push(total as u32);
        Some(index)
    }
}

impl SpanCounter for Cl100kIndex<'_> {
    fn count_span(&self, range: Range<usize>) -> usize {
        let (start, end) = (range.start, range.end);
        if start >= end {
            return 0;
        }
        // 1. The span's own pieces until one ends on a piece boundary of the document.
        let mut own = 0;
        let first = match self.bounds.binary_search(&(start as u32)) {
            Ok(i) => i,
            Err(_) => {
                let mut at = start;
                let mut synced = None;
                PIECE_COUNTS.with_borrow_mut(|cache| {
                    for piece in pretokenize::split(&self.text[start..end]) {
                        own += cache.count(piece);
                        at += piece.len();
                        if at == end {
                            break;
                        }
                        if let Ok(i) = self.bounds.binary_search(&(at as u32)) {
                            synced = Some(i);
                            break;
                        }
                    }
                });
                match synced {
                    Some(i) => i,
                    None => return own,
                }
            }
        };
        // 2. The document's pieces that a cut at `end` cannot change.
        let last = self
            .reach
            .partition_point(|&r| r as usize <= end)
            .max(first);
        let shared = (self.sums[last] - self.sums[first]) as usize;
        // 3. The rest, counted as the span would count it.
        let rest = self.bounds[last] as usize;
        let tail = if rest < end {
            Cl100k.count_str(&self.text[rest..end])
        } else {
            0
        };
        own + shared + tail
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Every span of `text` that starts and ends on a character boundary.
    fn check_all_spans(text: &str) {
        let index = Cl100kIndex::new(text).expect("indexable");
        let cuts: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        for (n, &a) in cuts.iter().enumerate() {
            for &e in &cuts[n..] {
                assert_eq!(
                    index.count_span(a..e),
                    Cl100k.count_str(&text[a..e]),
                    "{:?} in {text:?}",
                    &text[a..e]
                );
            }
        }
    }

    #[test]
    fn every_span_of_tricky_texts_counts_exactly() {
        for text in super::super::pretokenize::TRICKY_TEXTS {
            check_all_spans(text);
        }
    }

    #[test]
    fn spans_of_a_long_document_count_exactly() {
        let doc = concat!(
            include_str!("../../tests/golden/chunk_inputs/api_reference.md"),
            include_str!("../../tests/golden/chunk_inputs/long_article.md"),
            include_str!("../../tests/golden/chunk_inputs/multilingual_edge.md"),
        );
        let index = Cl100kIndex::new(doc).expect("indexable");
        assert_eq!(index.count_span(0..doc.len()), Cl100k.count_str(doc));
        let cuts: Vec<usize> = doc.char_indices().map(|(i, _)| i).collect();
        let mut state: u64 = 7;
        let mut next = move |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize % n
        };
        for _ in 0..20_000 {
            let a = cuts[next(cuts.len())];
            let e = cuts[next(cuts.len())].max(a);
            assert_eq!(
                index.count_span(a..e),
                Cl100k.count_str(&doc[a..e]),
                "{a}..{e}"
            );
        }
    }

    fn text() -> impl Strategy<Value = String> {
        let fragment = prop::sample::select(vec![
            "a", "Zz", "word", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\u{a0}", "\u{3000}",
            "'s", "'ll", "'", "1", "234", ".", "!", "?", "#", "-", "`", "```", "|", "日本", "😀",
            "e\u{301}", "\u{200b}", "(", ")", "\"",
        ]);
        prop::collection::vec(fragment, 0..120).prop_map(|f| f.concat())
    }

    proptest! {
        #[test]
        fn any_span_counts_exactly(text in text(), a in any::<prop::sample::Index>(), e in any::<prop::sample::Index>()) {
            let index = Cl100kIndex::new(&text).expect("indexable");
            let floor = |i: usize| (0..=i).rev().find(|&j| text.is_char_boundary(j)).unwrap_or(0);
            let (a, e) = (floor(a.index(text.len() + 1)), floor(e.index(text.len() + 1)));
            let (a, e) = (a.min(e), a.max(e));
            prop_assert_eq!(index.count_span(a..e), Cl100k.count_str(&text[a..e]));
        }
    }
}
