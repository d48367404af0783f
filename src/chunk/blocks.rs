//! Block detection (FR-WF-15, CHK-LIST-01, CHK-CODE-01) and heading text
//! (CHK-HEAD-01, CHK-HEAD-03).
//!
//! One pass over the lines: every line is blank (part of a separator) or belongs to
//! exactly one block. A block's span runs from the start of its first line to the end
//! of its last line, without the final newline, so the text between two blocks (the
//! separator of FR-WF-15a1) is always a newline followed by whitespace-only lines.

use std::ops::Range;

/// What kind of block a span is; decides how an oversized block is split (FR-WF-15b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum BlockKind {
    /// One ATX heading line (`^#{1,6}\s`).
    Heading,
    /// A fenced code block, fences included; atomic (CHK-CODE-01).
    Code,
    /// Consecutive list items with their continuation lines (CHK-LIST-01).
    List,
    /// Anything else: consecutive non-blank lines (paragraphs, tables, quotes).
    Paragraph,
}

/// One block of the Markdown: its kind and its byte span.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Block {
    /// The kind of block.
    pub kind: BlockKind,
    /// Byte span in the Markdown: first line's start to last line's end (no newline).
    pub span: Range<usize>,
}

/// Splits Markdown into blocks in document order (FR-WF-15). O(n).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn blocks(markdown: &str) -> Vec<Block> {
    let lines = Lines::new(markdown);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let text = lines.text(i);
        if is_blank(text) {
            i += 1;
            continue;
        }
        let (kind, last) = if let Some(fence) = Fence::open(text) {
            let close = (i + 1..lines.len()).find(|&j| fence.is_closed_by(lines.text(j)));
            // An unclosed fence runs to the end (CommonMark), minus trailing blank lines.
            let last = close.unwrap_or_else(|| {
                (i..lines.len())
                    .rev()
                    .find(|&j| !is_blank(lines.text(j)))
                    .unwrap_or(i)
            });
            (BlockKind::Code, last)
        } else if is_heading(text) {
            (BlockKind::Heading, i)
        } else if is_list_marker(text) {
            (BlockKind::List, lines.list_end(i))
        } else {
            (BlockKind::Paragraph, lines.paragraph_end(i))
        };
        out.push(Block {
            kind,
            span: lines.spans[i].start..lines.spans[last].end,
        });
        i = last + 1;
    }
    out
}

/// The lines of the Markdown, with what block detection needs to stay linear.
struct Lines<'a> {
    markdown: &'a str,
    spans: Vec<Range<usize>>,
    /// Per line, the longest closing-fence run (backticks, tildes) on that line or any
    /// later one, indentation ignored: lets a fence nested in a list item know in O(1)
    /// whether a closing line exists, so an unclosed one never triggers a scan to the
    /// end of the document per line.
    later_closer: Vec<[usize; 2]>,
}

impl<'a> Lines<'a> {
    fn new(markdown: &'a str) -> Self {
        let spans = line_spans(markdown);
        let mut later_closer = vec![[0, 0]; spans.len() + 1];
        for i in (0..spans.len()).rev() {
            let mut here = later_closer[i + 1];
            let trimmed = markdown[spans[i].clone()].trim_start_matches([' ', '\t']);
            for (slot, ch) in [(0, b'`'), (1, b'~')] {
                let run = trimmed.bytes().take_while(|&b| b == ch).count();
                if run >= 3 && is_blank(&trimmed[run..]) {
                    here[slot] = here[slot].max(run);
                }
            }
            later_closer[i] = here;
        }
        Lines {
            markdown,
            spans,
            later_closer,
        }
    }

    fn len(&self) -> usize {
        self.spans.len()
    }

    fn text(&self, i: usize) -> &'a str {
        &self.markdown[self.spans[i].clone()]
    }

    /// The last line of the list block starting at line `first` (CHK-LIST-01): marker
    /// lines, continuation lines right after a list line, and blank lines followed by
    /// another marker line. A fenced code block opened on a continuation line is taken
    /// whole, so its lines are not mistaken for the end of the list.
    fn list_end(&self, first: usize) -> usize {
        let mut last = first;
        let mut k = first + 1;
        while k < self.len() {
            let text = self.text(k);
            if is_blank(text) {
                match (k..self.len()).find(|&m| !is_blank(self.text(m))) {
                    Some(m) if is_list_marker(self.text(m)) => {
                        last = m;
                        k = m + 1;
                        continue;
                    }
                    _ => break,
                }
            }
            if is_heading(text) {
                break;
            }
            if is_list_marker(text) {
                last = k;
                k += 1;
                continue;
            }
            if !is_continuation(text) {
                break;
            }
            last = self.nested_fence_end(k).unwrap_or(k);
            k = last + 1;
        }
        last
    }

    /// If line `k` opens a fence (indentation ignored) that a later line closes, the
    /// closing line.
    fn nested_fence_end(&self, k: usize) -> Option<usize> {
        let fence = Fence::open(self.text(k).trim_start_matches([' ', '\t']))?;
        let slot = usize::from(fence.ch == b'~');
        if self.later_closer[k + 1][slot] < fence.len {
            return None;
        }
        (k + 1..self.len())
            .find(|&j| fence.is_closed_by(self.text(j).trim_start_matches([' ', '\t'])))
    }

    /// The last line of the paragraph starting at line `first`: it runs until a blank
    /// line or a line that starts another kind of block.
    fn paragraph_end(&self, first: usize) -> usize {
        let starts_block = |text: &str| {
            is_blank(text)
                || is_heading(text)
                || is_list_marker(text)
                || Fence::open(text).is_some()
        };
        (first + 1..self.len())
            .find(|&k| starts_block(self.text(k)))
            .map_or(self.len() - 1, |k| k - 1)
    }
}

/// The byte spans of the lines, newlines excluded. A final newline does not start
/// another (empty) line.
pub(crate) fn line_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            spans.push(start..i);
            start = i + 1;
        }
    }
    if start < text.len() {
        spans.push(start..text.len());
    }
    spans
}

/// Whitespace in the sense of the SRD's `\s` within a line.
fn is_space(c: char) -> bool {
    c != '\n' && c.is_whitespace()
}

/// A line with nothing but whitespace.
pub(crate) fn is_blank(line: &str) -> bool {
    line.chars().all(char::is_whitespace)
}

/// `^#{1,6}\s`: an ATX heading (FR-WF-15 rule 1); a line of only hashes is an empty
/// heading, as in CommonMark.
pub(crate) fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].chars().next().is_none_or(is_space)
}

/// `^\s{0,3}(?:[-+*]|\d+[.)])\s+` (CHK-LIST-01 rule 1). An empty item (marker at the
/// end of the line, its trailing space trimmed by FR-WF-13b) counts too.
pub(crate) fn is_list_marker(line: &str) -> bool {
    indent_chars(line) <= 3 && marker_len(line.trim_start_matches(is_space)).is_some()
}

/// A line that starts a list item at any depth (used to split a list block into
/// items, CHK-LIST-02): any indentation, then a marker.
pub(crate) fn is_item_start(line: &str) -> bool {
    marker_len(line.trim_start_matches(is_space)).is_some()
}

/// The number of leading whitespace characters of a line.
pub(crate) fn indent_chars(line: &str) -> usize {
    line.chars().take_while(|&c| is_space(c)).count()
}

/// The byte length of a list marker at the start of `text` (`-`, `+`, `*`, `1.`,
/// `1)`), if it is followed by whitespace or the end of the line.
fn marker_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let len = match bytes.first()? {
        b'-' | b'+' | b'*' => 1,
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            match bytes.get(digits) {
                Some(b'.' | b')') => digits + 1,
                _ => return None,
            }
        }
        _ => return None,
    };
    text[len..]
        .chars()
        .next()
        .is_none_or(is_space)
        .then_some(len)
}

/// CHK-LIST-01 rule 2: a line indented by at least two spaces or a tab that is not a
/// marker line.
fn is_continuation(line: &str) -> bool {
    (line.starts_with("  ") || line.starts_with('\t')) && !is_list_marker(line)
}

/// An opening code fence: up to three spaces, then three or more backticks or
/// tildes (CHK-CODE-01 rule 1; tildes as in CommonMark).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fence {
    /// `` ` `` or `~`.
    pub ch: u8,
    /// The run length of the opening fence.
    pub len: usize,
    /// Leading spaces before the fence.
    pub indent: usize,
}

impl Fence {
    /// Parses an opening fence line.
    pub(crate) fn open(line: &str) -> Option<Fence> {
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        if indent > 3 {
            return None;
        }
        let rest = &line[indent..];
        let ch = *rest.as_bytes().first()?;
        if ch != b'`' && ch != b'~' {
            return None;
        }
        let len = rest.bytes().take_while(|&b| b == ch).count();
        // A backtick fence's info string cannot contain a backtick (CommonMark).
        let info_ok = ch == b'~' || !rest[len..].contains('`');
        (len >= 3 && info_ok).then_some(Fence { ch, len, indent })
    }

    /// Whether `line` closes this fence: up to three spaces, a run of the same
    /// character at least as long, then only whitespace.
    pub(crate) fn is_closed_by(&self, line: &str) -> bool {
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[indent..];
        let run = rest.bytes().take_while(|&b| b == self.ch).count();
        indent <= 3 && run >= self.len && is_blank(&rest[run..])
    }

    /// The fence as a closing line: the opening indentation and run.
    pub(crate) fn closing_line(&self) -> String {
        let mut line = " ".repeat(self.indent);
        line.extend(std::iter::repeat_n(char::from(self.ch), self.len));
        line
    }
}

/// The text of an ATX heading line (CHK-HEAD-01, CHK-HEAD-03): without the opening
/// `#` run, without a closing `#` run that is preceded by whitespace, whitespace
/// trimmed and internal runs collapsed to one space.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn heading_text(line: &str) -> String {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    let mut rest = line[hashes..].trim_end();
    let without_closing = rest.trim_end_matches('#');
    if without_closing.len() < rest.len()
        && (without_closing.is_empty() || without_closing.ends_with(char::is_whitespace))
    {
        rest = without_closing;
    }
    rest.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(md: &str) -> Vec<(BlockKind, &str)> {
        blocks(md)
            .into_iter()
            .map(|b| (b.kind, &md[b.span]))
            .collect()
    }

    use BlockKind::*;

    #[test]
    fn fr_wf_15_blocks_by_kind() {
        let md =
            "# Title\nIntro line\nsecond line\n\n- a\n- b\n  cont\n\n```rust\nx\n\ny\n```\nafter\n";
        assert_eq!(
            kinds(md),
            vec![
                (Heading, "# Title"),
                (Paragraph, "Intro line\nsecond line"),
                (List, "- a\n- b\n  cont"),
                (Code, "```rust\nx\n\ny\n```"),
                (Paragraph, "after"),
            ]
        );
    }

    #[test]
    fn chk_list_01_list_block_rules() {
        // A blank line followed by another item continues the list; nested items and
        // continuation lines belong to it; a blank line then other content ends it.
        let md = "- a\n  - nested\n      deep cont\n\n- b\n\nPara\n- c\n# H\n- d\nlazy\n";
        assert_eq!(
            kinds(md),
            vec![
                (List, "- a\n  - nested\n      deep cont\n\n- b"),
                (Paragraph, "Para"),
                (List, "- c"),
                (Heading, "# H"),
                (List, "- d"),
                (Paragraph, "lazy"),
            ]
        );
        assert!(is_list_marker("1. one"));
        assert!(is_list_marker("10) ten"));
        assert!(is_list_marker("   * three spaces"));
        assert!(is_list_marker("-"));
        assert!(!is_list_marker("    - four spaces"));
        assert!(!is_list_marker("---"));
        assert!(!is_list_marker("1.5 not a list"));
        assert!(!is_list_marker("-not"));
    }

    #[test]
    fn chk_list_01_fenced_code_inside_an_item_stays_in_the_list() {
        let md = "- item\n  ```\n  code\n\n  more\n  ```\n- next\n";
        assert_eq!(
            kinds(md),
            vec![(List, "- item\n  ```\n  code\n\n  more\n  ```\n- next")]
        );
    }

    #[test]
    fn chk_code_01_fences() {
        assert_eq!(
            kinds("````md\n```\ninner\n```\n````\n"),
            vec![(Code, "````md\n```\ninner\n```\n````")]
        );
        assert_eq!(
            kinds("~~~\n# not a heading\n~~~"),
            vec![(Code, "~~~\n# not a heading\n~~~")]
        );
        // Unclosed: runs to the end, trailing blank lines left out.
        assert_eq!(kinds("```\na\n\n\n"), vec![(Code, "```\na")]);
        assert!(Fence::open("``` a`b").is_none());
        assert!(Fence::open("    ```").is_none());
        assert_eq!(
            Fence::open("  ~~~~ x").map(|f| f.closing_line()),
            Some("  ~~~~".to_owned())
        );
    }

    #[test]
    fn fr_wf_15_headings() {
        assert!(is_heading("# a"));
        assert!(is_heading("###### a"));
        assert!(is_heading("#\tb"));
        assert!(is_heading("##"));
        assert!(!is_heading("####### a"));
        assert!(!is_heading("#hashtag"));
        assert!(!is_heading(" # indented"));
        assert_eq!(
            kinds("para\n# H\nbody"),
            vec![(Paragraph, "para"), (Heading, "# H"), (Paragraph, "body")]
        );
    }

    #[test]
    fn chk_head_01_03_heading_text() {
        assert_eq!(heading_text("#   Hello    world  "), "Hello world");
        assert_eq!(heading_text("## Title ##"), "Title");
        assert_eq!(heading_text("## Title ##   "), "Title");
        assert_eq!(heading_text("# C# and F#"), "C# and F#");
        assert_eq!(heading_text("# Title#"), "Title#");
        assert_eq!(heading_text("# #"), "");
        assert_eq!(heading_text("###"), "");
        assert_eq!(heading_text("# a\t\u{3000}b"), "a b");
    }

    #[test]
    fn empty_and_blank_input_have_no_blocks() {
        assert!(blocks("").is_empty());
        assert!(blocks("\n\n  \n\t\n").is_empty());
    }
}
