//! Token-bounded chunking of Markdown (SRD 3.5.3).
//!
//! A pure function: Markdown and a [`TokenCounter`] in, [`FetchChunk`]s out.
//!
//! 1. **Blocks** ([`blocks()`], FR-WF-15): headings, paragraphs, fenced code blocks and
//!    list blocks, each a span of whole lines.
//! 2. **Accumulation** (FR-WF-15a): blocks are added to the current chunk while the
//!    estimate fits `max_chunk_tokens`; the estimate of a block is the count of the
//!    block *with the separator before it*, so separators are paid for. The estimate
//!    is not exact (BPE counts are not additive: `".\n\n"` is one token), so every
//!    chunk's final text is counted once more before it is emitted, and if that
//!    exact count is over budget the last block goes back to the next chunk
//!    (SRD-READINGS 18: `token_count` is the count of the final text and never
//!    exceeds the budget). Nothing re-counts a growing chunk: each block is counted
//!    once and each chunk once, and both are spans of the Markdown, which
//!    [`TokenCounter::index`] counts after one pass over it (for cl100k_base, a
//!    binary search and a piece or two at the span's ends), so the work is linear
//!    (NFR-WF-PERF-02).
//! 3. **Oversized blocks** (FR-WF-15b): a block that cannot fit alone is split, each
//!    piece its own chunk: code at line boundaries with the fences (and language
//!    hint) repeated in every piece (CHK-CODE-01), lists at item boundaries and then
//!    inside an item with later pieces indented as continuation lines (CHK-LIST-02,
//!    03), anything else at sentence boundaries; a piece still too large is split at
//!    whitespace (line breaks first, so a table splits between rows), then between
//!    characters. The same accumulate-and-verify step packs
//!    the pieces, so every chunk is within budget, whatever the input, as long as
//!    the budget holds one character (any budget of at least 8 tokens; the tool's
//!    range is 128..=2048). If repeating fences or indentation would cost more than
//!    half the budget, the pieces are left without them.
//! 4. **Headings** (FR-WF-15c, CHK-HEAD-01..03, SRD-READINGS 17): a chunk's heading is
//!    the heading in effect where it begins: its own first line if that is a heading
//!    line, else the most recent heading before it.
//! 5. **Preferred cuts** (extension: a PDF's page boundaries,
//!    [`chunk`]): where a chunk has to end anyway (more follows that
//!    does not fit), it ends at the last preferred cut between two of its units
//!    instead, as long as the chunk is still half full there; if that makes more
//!    chunks in all than packing without the hints, the hints are dropped. No
//!    hints, no change: the chunks of every HTML document are as before.
//!
//! # Separators and what is lost
//!
//! Inside a chunk the text between two blocks is copied from the source exactly
//! (FR-WF-15a1): nothing is inserted. Where the document is cut between two chunks,
//! the whitespace at the cut belongs to neither chunk: the separator between the last
//! block of one chunk and the first of the next (a newline and any blank lines), the
//! whitespace after the sentence or word a split piece ends with, or the newline
//! between two lines of a split code block. Blank lines before the first block and
//! after the last are dropped too. Apart from those whitespace runs, the chunks' texts
//! are the document in order; the only text added is the repeated code fences and the
//! continuation indentation of split list items ([`SourcedChunk`] says which bytes of
//! each text those are).

mod blocks;
mod units;

use std::ops::Range;

use serde::{Deserialize, Serialize};

#[cfg(feature = "internals")]
pub use blocks::blocks;
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) use blocks::{Block, BlockKind, heading_text};
use units::Unit;

use crate::tokens::{SpanCounter, TokenCounter};

/// One chunk of the response (FR-WF-03b); serialises as `heading`, `text`,
/// `token_count` in that order (FR-WF-OUT-01a).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FetchChunk {
    /// The heading in effect where the chunk begins, without `#`s, or `""`.
    pub heading: String,
    /// The chunk's Markdown.
    pub text: String,
    /// The token count of `text` alone (FR-WF-15d).
    pub token_count: usize,
}

/// A chunk and where its text came from: `text` is `prefix_len` added bytes, then
/// `markdown[source]`, then `suffix_len` added bytes (repeated fences, continuation
/// indentation). Sources are in document order and never overlap, and the gaps
/// between them are whitespace.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct SourcedChunk {
    /// The chunk itself.
    pub chunk: FetchChunk,
    /// The span of the Markdown the text copies.
    pub source: Range<usize>,
    /// Bytes added before the copied span.
    pub prefix_len: usize,
    /// Bytes added after the copied span.
    pub suffix_len: usize,
}

/// Splits Markdown into chunks of at most `max_chunk_tokens` tokens each, in document
/// order (FR-WF-15 .. 15f), each with its provenance.
///
/// `hints` (extension; step 5 of the module docs) are byte offsets in
/// `markdown` where a chunk prefers to end: each is honoured where it falls between
/// two units, at the start of the next one or in the whitespace before it (a
/// block's start or end, a list item's). The chunks are never more than without
/// the hints, and each is within budget as always. Any offsets are accepted
/// (unsorted, repeated, past the end: a cache entry is data). With no hints this
/// is the SRD's chunking.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn chunk(
    markdown: &str,
    hints: &[usize],
    max_chunk_tokens: usize,
    counter: &dyn TokenCounter,
) -> Vec<SourcedChunk> {
    let mut hints = hints.to_vec();
    hints.sort_unstable();
    hints.dedup();
    let (hinted, used) = pack_document(markdown, &hints, max_chunk_tokens, counter);
    if !used {
        return hinted;
    }
    let plain = pack_document(markdown, &[], max_chunk_tokens, counter).0;
    if hinted.len() <= plain.len() {
        hinted
    } else {
        plain
    }
}

/// The chunks, and whether a hint moved a cut.
fn pack_document(
    markdown: &str,
    hints: &[usize],
    max_chunk_tokens: usize,
    counter: &dyn TokenCounter,
) -> (Vec<SourcedChunk>, bool) {
    let blocks = blocks::blocks(markdown);
    let mut headings = vec![String::new()];
    let heading_after = blocks
        .iter()
        .map(|b| {
            if b.kind == BlockKind::Heading {
                headings.push(capped(heading_text(&markdown[b.span.clone()])));
            }
            headings.len() - 1
        })
        .collect();
    let units: Vec<Unit> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| Unit {
            lead: if i == 0 {
                b.span.start
            } else {
                blocks[i - 1].span.end
            },
            start: b.span.start,
            end: b.span.end,
            block: i,
        })
        .collect();
    let mut chunker = Chunker {
        markdown,
        max: max_chunk_tokens,
        counter,
        spans: counter.index(markdown),
        blocks,
        headings,
        heading_after,
        hints,
        used_hint: false,
        out: Vec::new(),
    };
    chunker.pack(&units, Level::Blocks, None);
    (chunker.out, chunker.used_hint)
}

/// The longest `heading` a chunk carries, in bytes.
///
/// The SRD sets no limit, but every chunk under a heading repeats it: a hostile page
/// with one megabyte-long heading line would otherwise make thousands of chunks each
/// hold a megabyte (memory and time quadratic in the page). Real headings are far
/// shorter; a longer one is cut at a character boundary. The heading line itself is
/// still in full in the `text` of the chunks that contain it.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) const MAX_HEADING_BYTES: usize = 1024;

/// `heading` cut to [`MAX_HEADING_BYTES`] at a character boundary.
fn capped(mut heading: String) -> String {
    if heading.len() > MAX_HEADING_BYTES {
        let cut = (0..=MAX_HEADING_BYTES)
            .rev()
            .find(|&i| heading.is_char_boundary(i))
            .unwrap_or(0);
        heading.truncate(cut);
    }
    heading
}

/// The split levels of FR-WF-15b, coarsest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Blocks,
    /// Items of a list block.
    Items,
    /// Lines of a code block.
    Lines,
    Sentences,
    /// Lines of prose: whitespace boundaries that break a line come first.
    TextLines,
    Words,
    /// Runs of about [`CHAR_RUN_BYTES`] bytes of whole characters.
    CharRuns,
    /// Single characters: nothing smaller exists.
    Chars,
}

/// The size of a character run: small enough to fill a chunk closely, large enough
/// that a long unbroken string is counted in few calls.
const CHAR_RUN_BYTES: usize = 64;

/// Text added around the pieces of a split block: `prefix` before every piece that
/// does not start at `prefix_unless`, `suffix` after every piece that does not end at
/// `suffix_unless` (where the source already has the fence or marker).
struct Decoration {
    prefix: String,
    prefix_unless: usize,
    suffix: String,
    suffix_unless: usize,
    /// Tokens of `prefix`.
    prefix_cost: usize,
    /// Tokens of `suffix`.
    suffix_cost: usize,
}

impl Decoration {
    /// The estimated tokens a piece starting at `start` pays for decoration: the
    /// suffix is assumed, as where the piece will end is not known yet.
    fn cost_from(deco: Option<&Decoration>, start: usize) -> usize {
        deco.map_or(0, |d| {
            d.suffix_cost
                + if start == d.prefix_unless {
                    0
                } else {
                    d.prefix_cost
                }
        })
    }
}

/// A chunk text before it gets its heading.
struct Piece {
    text: String,
    source: Range<usize>,
    prefix_len: usize,
    suffix_len: usize,
}

struct Chunker<'a> {
    markdown: &'a str,
    max: usize,
    counter: &'a dyn TokenCounter,
    /// Counts of spans of `markdown`: everything but decorated pieces is counted here.
    spans: Box<dyn SpanCounter + 'a>,
    blocks: Vec<Block>,
    /// Distinct heading texts; `headings[0]` is `""`.
    headings: Vec<String>,
    /// Per block, the index of the heading in effect once the block has begun.
    heading_after: Vec<usize>,
    /// Preferred cuts (step 5), sorted.
    hints: &'a [usize],
    /// Whether a hint moved a cut.
    used_hint: bool,
    out: Vec<SourcedChunk>,
}

impl Chunker<'_> {
    /// Greedily packs contiguous `units` into chunks (FR-WF-15a): a unit joins the
    /// current chunk while the estimate fits; the chunk's exact count is then checked,
    /// backing off one unit at a time in the rare case the estimate was low. A unit
    /// that cannot fit alone is split at the next level, its pieces each their own
    /// chunks (FR-WF-15b step 6).
    fn pack(&mut self, units: &[Unit], level: Level, deco: Option<&Decoration>) {
        let budget = self.max;
        // Each unit with the gap before it: what it adds when appended.
        let costs: Vec<Option<usize>> = units
            .iter()
            .map(|u| self.spans.count_span_up_to(u.lead..u.end, budget))
            .collect();
        let mut k = 0;
        while k < units.len() {
            let first = k;
            let deco_cost = Decoration::cost_from(deco, units[first].start);
            let mut estimate = match costs[first] {
                Some(c) if c + deco_cost <= budget => c + deco_cost,
                // Without its leading gap and with its real decoration it may still fit.
                _ => match self.count(&self.build(units[first].start, units[first].end, deco)) {
                    Some(exact) => exact,
                    None => {
                        self.split(units[first], level, deco);
                        k += 1;
                        continue;
                    }
                },
            };
            k += 1;
            while let Some(Some(c)) = costs.get(k) {
                if estimate + c > budget {
                    break;
                }
                estimate += c;
                k += 1;
            }
            if let Some(hinted) = self.hinted_end(units, &costs, first..k, estimate) {
                k = hinted;
                self.used_hint = true;
            }
            loop {
                let piece = self.build(units[first].start, units[k - 1].end, deco);
                if let Some(exact) = self.count(&piece) {
                    self.emit(piece, exact, units[first].block);
                    break;
                }
                if k - first == 1 {
                    self.split(units[first], level, deco);
                    break;
                }
                k -= 1;
            }
        }
    }

    /// Where the chunk of `units[chunk]` (estimated at `estimate`) should end
    /// instead, by the hints (step 5): the last unit boundary inside it that a
    /// hint marks, if the chunk is still half full there. Nothing when the chunk
    /// ends the units (no cut is due) or already ends at a hint.
    fn hinted_end(
        &self,
        units: &[Unit],
        costs: &[Option<usize>],
        chunk: Range<usize>,
        estimate: usize,
    ) -> Option<usize> {
        let next = units.get(chunk.end)?;
        if self.hints.is_empty() || self.hinted(next) {
            return None;
        }
        let mut fill = estimate;
        for m in (chunk.start + 1..chunk.end).rev() {
            fill = fill.saturating_sub(costs.get(m).copied().flatten().unwrap_or(0));
            if fill < self.max.div_ceil(2) {
                return None;
            }
            if self.hinted(&units[m]) {
                return Some(m);
            }
        }
        None
    }

    /// Whether a hint falls at the start of `unit` or in the gap before it.
    fn hinted(&self, unit: &Unit) -> bool {
        let i = self.hints.partition_point(|&h| h < unit.lead);
        self.hints.get(i).is_some_and(|&h| h <= unit.start)
    }

    /// Splits one unit that does not fit alone, at the next level of FR-WF-15b.
    fn split(&mut self, unit: Unit, level: Level, deco: Option<&Decoration>) {
        let md = self.markdown;
        let span = unit.start..unit.end;
        let block = unit.block;
        match level {
            Level::Blocks => match self.blocks[block].kind {
                BlockKind::Code => {
                    let (lines, opening, closing) = units::code_lines(md, span.clone(), block);
                    let fences = self.decoration(
                        format!("{opening}\n"),
                        span.start,
                        format!("\n{closing}"),
                        span.end,
                    );
                    self.pack(&lines, Level::Lines, fences.as_ref());
                }
                BlockKind::List => {
                    self.pack(&units::list_items(md, span, block), Level::Items, None)
                }
                BlockKind::Heading | BlockKind::Paragraph => {
                    self.pack(&units::sentences(md, span, block), Level::Sentences, None);
                }
            },
            Level::Items => {
                // CHK-LIST-03: later pieces are continuation lines, indented two
                // spaces beyond the marker.
                let indent = " ".repeat(blocks::indent_chars(&md[span.clone()]) + 2);
                let continuation = self.decoration(indent, span.start, String::new(), usize::MAX);
                self.pack(
                    &units::sentences(md, span, block),
                    Level::Sentences,
                    continuation.as_ref(),
                );
            }
            Level::Sentences => {
                self.pack(&units::text_lines(md, span, block), Level::TextLines, deco);
            }
            Level::Lines | Level::TextLines => {
                self.pack(&units::words(md, span, block), Level::Words, deco);
            }
            Level::Words => {
                let runs = units::char_runs(md, span, block, CHAR_RUN_BYTES);
                self.pack(&runs, Level::CharRuns, deco);
            }
            Level::CharRuns => self.pack(&units::char_runs(md, span, block, 1), Level::Chars, deco),
            Level::Chars => {
                // One character over budget: only possible with a budget under 8.
                let piece = self.build(unit.start, unit.end, deco);
                let exact = self.count_up_to(&piece, usize::MAX).unwrap_or(usize::MAX);
                self.emit(piece, exact, block);
            }
        }
    }

    /// A decoration, unless it would take more than half the budget.
    fn decoration(
        &self,
        prefix: String,
        prefix_unless: usize,
        suffix: String,
        suffix_unless: usize,
    ) -> Option<Decoration> {
        let prefix_cost = self.counter.count_str(&prefix);
        let suffix_cost = self.counter.count_str(&suffix);
        (prefix_cost + suffix_cost <= self.max / 2).then_some(Decoration {
            prefix,
            prefix_unless,
            suffix,
            suffix_unless,
            prefix_cost,
            suffix_cost,
        })
    }

    /// The text of the chunk copying `start..end`, decorated.
    fn build(&self, start: usize, end: usize, deco: Option<&Decoration>) -> Piece {
        let prefix = deco
            .filter(|d| d.prefix_unless != start)
            .map_or("", |d| &d.prefix);
        let suffix = deco
            .filter(|d| d.suffix_unless != end)
            .map_or("", |d| &d.suffix);
        let source = &self.markdown[start..end];
        let mut text = String::with_capacity(prefix.len() + source.len() + suffix.len());
        text.push_str(prefix);
        text.push_str(source);
        text.push_str(suffix);
        Piece {
            text,
            source: start..end,
            prefix_len: prefix.len(),
            suffix_len: suffix.len(),
        }
    }

    /// The exact count of a piece, if within budget.
    fn count(&self, piece: &Piece) -> Option<usize> {
        self.count_up_to(piece, self.max)
    }

    /// The exact count of a piece, if at most `limit`: a plain span of the Markdown
    /// is counted by the index, a decorated one as text.
    fn count_up_to(&self, piece: &Piece, limit: usize) -> Option<usize> {
        if piece.prefix_len == 0 && piece.suffix_len == 0 {
            self.spans.count_span_up_to(piece.source.clone(), limit)
        } else {
            self.counter.count_up_to(&piece.text, limit)
        }
    }

    fn emit(&mut self, piece: Piece, token_count: usize, block: usize) {
        // A piece of nothing but whitespace (a blank code line cut loose without its
        // fences) carries no content; dropping it only loses whitespace.
        if piece.text.chars().all(char::is_whitespace) {
            return;
        }
        let heading = self.headings[self.heading_after[block]].clone();
        self.out.push(SourcedChunk {
            chunk: FetchChunk {
                heading,
                text: piece.text,
                token_count,
            },
            source: piece.source,
            prefix_len: piece.prefix_len,
            suffix_len: piece.suffix_len,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Cl100k;

    /// One token per byte: makes budgets easy to reason about in unit tests.
    struct Bytes;

    impl TokenCounter for Bytes {
        fn count_str(&self, text: &str) -> usize {
            text.len()
        }
    }

    /// The chunks without their provenance, as the response carries them.
    fn plain_chunks(md: &str, max: usize, counter: &dyn TokenCounter) -> Vec<FetchChunk> {
        chunk(md, &[], max, counter)
            .into_iter()
            .map(|sourced| sourced.chunk)
            .collect()
    }

    fn texts(chunks: &[FetchChunk]) -> Vec<&str> {
        chunks.iter().map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn fr_wf_15a_blocks_accumulate_with_separators_counted() {
        let md = "aaaa\n\nbbbb\n\ncccc\n";
        // "aaaa" + "\n\nbbbb" = 10 bytes fits 10; adding "\n\ncccc" does not.
        let chunks = plain_chunks(md, 10, &Bytes);
        assert_eq!(texts(&chunks), ["aaaa\n\nbbbb", "cccc"]);
        assert!(chunks.iter().all(|c| c.token_count == c.text.len()));
    }

    #[test]
    fn fr_wf_15b_paragraph_falls_back_to_words_then_chars() {
        let md = "one two three four\n";
        let chunks = plain_chunks(md, 9, &Bytes);
        assert_eq!(texts(&chunks), ["one two", "three", "four"]);
        let md = "abcdefghij\n";
        let chunks = plain_chunks(md, 8, &Bytes);
        assert_eq!(texts(&chunks), ["abcdefgh", "ij"]);
    }

    #[test]
    fn chk_list_03_continuation_pieces_are_indented() {
        let md = "- first. second. third.\n";
        let chunks = plain_chunks(md, 12, &Bytes);
        assert_eq!(texts(&chunks), ["- first.", "  second.", "  third."]);
        let md = "  1. first. second.\n";
        let chunks = plain_chunks(md, 12, &Bytes);
        assert_eq!(texts(&chunks), ["  1. first.", "    second."]);
    }

    #[test]
    fn chk_code_01_fences_repeat_with_language() {
        let md = "```py\na = 1\nb = 2\nc = 3\n```\n";
        let chunks = plain_chunks(md, 22, &Bytes);
        assert_eq!(
            texts(&chunks),
            ["```py\na = 1\nb = 2\n```", "```py\nc = 3\n```"]
        );
    }

    #[test]
    fn costly_decoration_is_dropped_rather_than_breaking_the_budget() {
        let fence = "`".repeat(20);
        let md = format!("{fence}\nline one\nline two\n{fence}\n");
        let chunks = plain_chunks(&md, 30, &Bytes);
        assert!(chunks.iter().all(|c| c.token_count <= 30), "{chunks:?}");
        assert_eq!(chunks.len(), 2);
    }

    #[test]
    fn a_huge_heading_is_capped_in_the_heading_field_only() {
        let title = "é".repeat(MAX_HEADING_BYTES);
        let md = format!("# {title}\n\nbody\n");
        let chunks = plain_chunks(&md, 1 << 20, &Bytes);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].heading, "é".repeat(MAX_HEADING_BYTES / 2));
        assert!(chunks[0].text.contains(&title));
    }

    #[test]
    fn tiny_budgets_never_loop_or_panic() {
        for max in 0..6 {
            let chunks = plain_chunks("# H\n\nab 日本 😀.\n", max, &Cl100k);
            assert!(!chunks.is_empty());
        }
    }

    fn hinted(md: &str, hints: &[usize], max: usize) -> Vec<String> {
        chunk(md, hints, max, &Bytes)
            .into_iter()
            .map(|c| c.chunk.text)
            .collect()
    }

    #[test]
    fn a_due_cut_moves_back_to_a_hint_in_the_chunks_second_half() {
        let md = "aaaa\n\nbbbb\n\ncccc\n\ndddd\n";
        assert_eq!(
            texts(&plain_chunks(md, 16, &Bytes)),
            ["aaaa\n\nbbbb\n\ncccc", "dddd"]
        );
        let cccc = md.find("cccc").unwrap();
        // At the block's start or anywhere in the separator before it.
        for hint in [cccc, cccc - 2, cccc - 1] {
            assert_eq!(
                hinted(md, &[hint], 16),
                ["aaaa\n\nbbbb", "cccc\n\ndddd"],
                "{hint}"
            );
        }
        // A hint where the chunk would be less than half full is not taken.
        assert_eq!(
            hinted(md, &[md.find("bbbb").unwrap()], 16),
            ["aaaa\n\nbbbb\n\ncccc", "dddd"]
        );
        // Nor when no cut is due: everything fits one chunk.
        assert_eq!(hinted(md, &[cccc], 100), [md.trim_end()]);
    }

    #[test]
    fn hints_never_make_more_chunks() {
        let md = "aaaa\n\nbbbb\n\ncccc\n\ndddd\n\neeee\n";
        let plain = ["aaaa\n\nbbbb\n\ncccc", "dddd\n\neeee"];
        assert_eq!(texts(&plain_chunks(md, 16, &Bytes)), plain);
        // Cutting before cccc would leave three chunks: the hint is dropped.
        assert_eq!(hinted(md, &[md.find("cccc").unwrap()], 16), plain);
    }

    #[test]
    fn no_or_hostile_hints_change_nothing_and_never_panic() {
        let md = "# One\n\nfirst block here\n\n- a\n- b\n\nlast words\n";
        for max in [8, 12, 20, 1000] {
            let plain = chunk(md, &[], max, &Bytes);
            assert_eq!(chunk(md, &[], max, &Bytes), plain);
            let hostile = [usize::MAX, 3, 3, 0, md.len(), 1 << 40, 7];
            let chunks = chunk(md, &hostile, max, &Bytes);
            assert!(chunks.len() <= plain.len());
            assert!(chunks.iter().all(|c| c.chunk.token_count <= max.max(1)));
        }
    }

    #[test]
    fn chk_head_heading_is_the_one_in_effect_where_the_chunk_begins() {
        let md = "intro\n\n# One\n\nbody one\n\n## Two ##\n\nbody two\n";
        let chunks = plain_chunks(md, 15, &Bytes);
        let shown: Vec<(&str, &str)> = chunks
            .iter()
            .map(|c| (c.heading.as_str(), c.text.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("", "intro\n\n# One"),
                ("One", "body one"),
                ("Two", "## Two ##"),
                ("Two", "body two"),
            ]
        );
    }
}
