//! The units an oversized span is split into, one level per step of FR-WF-15b:
//! list items (CHK-LIST-02), code lines (CHK-CODE-01), sentences, whitespace-separated
//! words, and finally runs of whole characters (never mid-codepoint).
//!
//! Every unit is a byte span of the Markdown plus its *lead*: the gap between the
//! previous unit and this one. Units of one span are contiguous (`lead` of unit
//! `k + 1` is `end` of unit `k`), the first unit starts where the span starts and the
//! last ends where it ends, and every gap is whitespace. A cut between two units drops
//! exactly that gap; nothing else is ever lost.

use std::ops::Range;

use super::blocks::{Fence, is_blank, is_item_start, line_spans};

/// A piece of a span that chunking keeps whole at its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    /// Start of the whitespace gap before the unit (`== start` for the first).
    pub lead: usize,
    /// First byte of the unit.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Index of the block the unit belongs to (decides the chunk heading).
    pub block: usize,
}

/// Builds contiguous units from cut points: `cuts` are `(gap_start, next_start)` pairs
/// in increasing order strictly inside `span`.
fn from_cuts(
    span: Range<usize>,
    block: usize,
    cuts: impl Iterator<Item = (usize, usize)>,
) -> Vec<Unit> {
    let mut units = Vec::new();
    let (mut lead, mut start) = (span.start, span.start);
    for (gap, next) in cuts {
        units.push(Unit {
            lead,
            start,
            end: gap,
            block,
        });
        lead = gap;
        start = next;
    }
    units.push(Unit {
        lead,
        start,
        end: span.end,
        block,
    });
    units
}

/// The lines of a fenced code block (CHK-CODE-01 rule 3), with the opening fence kept
/// on the first content line and the closing fence on the last, so no piece is a
/// bare fence. Returns the units and, for repeating the fences, the opening line and
/// the closing line to write (the source's own, or the opening run when unclosed).
pub(crate) fn code_lines(
    markdown: &str,
    span: Range<usize>,
    block: usize,
) -> (Vec<Unit>, String, String) {
    let text = &markdown[span.clone()];
    let lines = line_spans(text);
    let opening = lines.first().map_or("", |l| &text[l.clone()]);
    let fence = Fence::open(opening);
    let last_closes = lines.len() >= 2
        && fence.is_some_and(|f| {
            lines
                .last()
                .is_some_and(|l| f.is_closed_by(&text[l.clone()]))
        });
    let closing = match (last_closes, lines.last(), fence) {
        (true, Some(l), _) => text[l.clone()].to_owned(),
        (false, _, Some(f)) => f.closing_line(),
        _ => "```".to_owned(),
    };
    let n = lines.len();
    let cuts = lines.iter().enumerate().filter_map(|(j, l)| {
        let keep_with_previous = j < 2 || (last_closes && j == n - 1);
        (!keep_with_previous).then(|| (span.start + l.start - 1, span.start + l.start))
    });
    (
        from_cuts(span.clone(), block, cuts),
        opening.to_owned(),
        closing,
    )
}

/// The items of a list block (CHK-LIST-02): each marker line, at any depth, starts an
/// item that runs to the end of its last non-blank line.
pub(crate) fn list_items(markdown: &str, span: Range<usize>, block: usize) -> Vec<Unit> {
    let text = &markdown[span.clone()];
    let lines = line_spans(text);
    let mut cuts = Vec::new();
    let mut last_content_end = None;
    for l in &lines {
        let line = &text[l.clone()];
        if is_blank(line) {
            continue;
        }
        if let Some(end) = last_content_end.filter(|_| is_item_start(line)) {
            cuts.push((span.start + end, span.start + l.start));
        }
        last_content_end = Some(l.end);
    }
    from_cuts(span, block, cuts.into_iter())
}

/// Sentences (FR-WF-15b step 3): a cut after `.`, `!` or `?` followed by whitespace
/// or the end of a line, when more text follows the whitespace.
pub(crate) fn sentences(markdown: &str, span: Range<usize>, block: usize) -> Vec<Unit> {
    let text = &markdown[span.clone()];
    let bytes = text.as_bytes();
    let mut cuts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?') {
            let gap_end = whitespace_run_end(text, i + 1);
            if gap_end > i + 1 && gap_end < text.len() {
                cuts.push((span.start + i + 1, span.start + gap_end));
                i = gap_end;
                continue;
            }
        }
        i += 1;
    }
    from_cuts(span, block, cuts.into_iter())
}

/// Lines of prose (the first choice of FR-WF-15b step 4): a cut at every
/// whitespace run that holds a line break and has text on both sides, so a table is
/// split between rows before it is split inside one. The indentation of the next line
/// is part of the gap: a line's leading whitespace does not matter in a paragraph,
/// and a split list item gets its own continuation indentation.
pub(crate) fn text_lines(markdown: &str, span: Range<usize>, block: usize) -> Vec<Unit> {
    whitespace_cuts(markdown, span, block, true)
}

/// Words (FR-WF-15b step 4): a cut at every whitespace run with text on both sides.
pub(crate) fn words(markdown: &str, span: Range<usize>, block: usize) -> Vec<Unit> {
    whitespace_cuts(markdown, span, block, false)
}

/// Cuts at whitespace runs with text on both sides (only runs holding a newline when
/// `line_breaks_only`). Whitespace at the very start or end stays in the first or
/// last unit.
fn whitespace_cuts(
    markdown: &str,
    span: Range<usize>,
    block: usize,
    line_breaks_only: bool,
) -> Vec<Unit> {
    let text = &markdown[span.clone()];
    let mut cuts = Vec::new();
    let mut seen_text = false;
    let mut i = 0;
    while i < text.len() {
        let gap_end = whitespace_run_end(text, i);
        if gap_end > i {
            let breaks_line = !line_breaks_only || text[i..gap_end].contains('\n');
            if seen_text && gap_end < text.len() && breaks_line {
                cuts.push((span.start + i, span.start + gap_end));
            }
            i = gap_end;
        } else {
            seen_text = true;
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    from_cuts(span, block, cuts.into_iter())
}

/// Runs of whole characters of about `group` bytes (FR-WF-15b step 5: never
/// mid-codepoint); `group = 1` gives single characters.
pub(crate) fn char_runs(
    markdown: &str,
    span: Range<usize>,
    block: usize,
    group: usize,
) -> Vec<Unit> {
    let text = &markdown[span.clone()];
    let mut cuts = Vec::new();
    let mut at = 0;
    loop {
        let mut next = (at + group.max(1)).min(text.len());
        while !text.is_char_boundary(next) {
            next += 1;
        }
        if next >= text.len() {
            break;
        }
        cuts.push((span.start + next, span.start + next));
        at = next;
    }
    from_cuts(span, block, cuts.into_iter())
}

/// The end of the whitespace run starting at byte `from` (`from` if none); `from`
/// is a char boundary.
fn whitespace_run_end(text: &str, from: usize) -> usize {
    text.len() - text[from..].trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The units as (gap, text) pairs.
    fn shown(md: &str, units: &[Unit]) -> Vec<(String, String)> {
        units
            .iter()
            .map(|u| {
                (
                    md[u.lead..u.start].to_owned(),
                    md[u.start..u.end].to_owned(),
                )
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn fr_wf_15b_sentences() {
        let md = "xx One. Two!  Three?\nFour.Five e.g. six. ";
        let units = sentences(md, 3..md.len(), 0);
        assert_eq!(
            shown(md, &units),
            pairs(&[
                ("", "One."),
                (" ", "Two!"),
                ("  ", "Three?"),
                ("\n", "Four.Five e.g."),
                (" ", "six. "),
            ])
        );
    }

    #[test]
    fn fr_wf_15b_words_keep_leading_and_trailing_whitespace_inside() {
        let md = "  a bb\t\tccc  ";
        let units = words(md, 0..md.len(), 0);
        assert_eq!(
            shown(md, &units),
            pairs(&[("", "  a"), (" ", "bb"), ("\t\t", "ccc  ")])
        );
        assert_eq!(shown(md, &words(md, 0..2, 0)), pairs(&[("", "  ")]));
    }

    #[test]
    fn fr_wf_15b_text_lines_cut_at_line_breaks_with_their_indentation() {
        let md = "| a | b |\n| c | d |\n  indented  \n\nlast";
        let units = text_lines(md, 0..md.len(), 0);
        assert_eq!(
            shown(md, &units),
            pairs(&[
                ("", "| a | b |"),
                ("\n", "| c | d |"),
                ("\n  ", "indented"),
                ("  \n\n", "last")
            ])
        );
    }

    #[test]
    fn fr_wf_15b_char_runs_respect_utf8_boundaries() {
        let md = "aé日😀b";
        let units = char_runs(md, 0..md.len(), 0, 1);
        assert_eq!(
            shown(md, &units),
            pairs(&[("", "a"), ("", "é"), ("", "日"), ("", "😀"), ("", "b")])
        );
        let units = char_runs(md, 0..md.len(), 0, 4);
        assert_eq!(
            shown(md, &units),
            pairs(&[("", "aé日"), ("", "😀"), ("", "b")])
        );
    }

    #[test]
    fn chk_list_02_items_at_any_depth() {
        let md = "- a\n  cont\n  - nested\n\n- b\n10. c";
        let units = list_items(md, 0..md.len(), 0);
        assert_eq!(
            shown(md, &units),
            pairs(&[
                ("", "- a\n  cont"),
                ("\n", "  - nested"),
                ("\n\n", "- b"),
                ("\n", "10. c")
            ])
        );
    }

    #[test]
    fn chk_code_01_lines_keep_fences_attached() {
        let md = "```rs\nl1\nl2\nl3\n```";
        let (units, open, close) = code_lines(md, 0..md.len(), 0);
        assert_eq!(
            shown(md, &units),
            pairs(&[("", "```rs\nl1"), ("\n", "l2"), ("\n", "l3\n```")])
        );
        assert_eq!((open.as_str(), close.as_str()), ("```rs", "```"));
        let md = "~~~~\nl1\nl2";
        let (units, _, close) = code_lines(md, 0..md.len(), 0);
        assert_eq!(shown(md, &units), pairs(&[("", "~~~~\nl1"), ("\n", "l2")]));
        assert_eq!(close, "~~~~");
    }
}
