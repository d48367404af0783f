//! The Markdown writer: block separation, line prefixes (lists, quotes), inline
//! wrappers (emphasis, links), inline whitespace and text escaping
//! (FR-WF-13a, FR-WF-EXT-TAGS-01, FR-WF-EXT-LIST-01).
//!
//! Everything is written lazily: a block boundary only records the newlines owed,
//! a list marker or a heading marker only records what the next line starts with,
//! an emphasis or link only records its opening delimiter; all of it is written
//! when real content arrives. So empty elements leave no trace (`**` alone, a bare
//! `-`, a `## ` with no text) and separators never pile up.
//!
//! # Escaping
//!
//! Text from the page is literal text; the rule is to escape exactly the characters
//! that could otherwise start Markdown syntax, and leave ordinary punctuation alone
//! so the output stays readable:
//!
//! * always: `*`, `` ` ``, `[`, `~` (GFM strikethrough), and `]` inside link text;
//! * `_` at a word edge (`_init_` is escaped, `snake_case` is not: CommonMark never
//!   treats an intraword `_` as emphasis);
//! * `\` before ASCII punctuation or at the end of a text run;
//! * `<` before a letter, `/`, `!` or `?` (raw HTML, autolinks), and `&` that starts
//!   an entity-like `&name;` / `&#123;`;
//! * at the start of a line only: a word made of `#` (1 to 6), `-`, `+`, `=` or `>`
//!   characters, or a leading `>`, and `1.` / `1)` style numbers, which would start
//!   a heading, list, quote, thematic break or setext underline.
//!
//! Inside table cells `|` becomes `\|` (EXT-TABLE-01), code spans included, as GFM
//! requires.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Newlines a block boundary asks for.
const PARAGRAPH: u8 = 2;
const LINE: u8 = 1;

/// An inline wrapper (emphasis, strong, link) around content.
#[derive(Debug)]
struct Wrapper {
    kind: WrapperKind,
    open: &'static str,
    close: Cow<'static, str>,
    written: bool,
}

/// What an inline wrapper is; one of each kind is enough (nested emphasis inside
/// emphasis adds nothing, and Markdown links cannot nest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WrapperKind {
    /// `*text*`.
    Emphasis,
    /// `**text**`.
    Strong,
    /// `[text](url)`.
    Link,
}

/// Writes Markdown for one flow of content: the document, or one table cell.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    out: String,
    /// Table-cell mode: line breaks become `<br>`, no prefixes, no line-start rules.
    cell: bool,
    started: bool,
    pending_newlines: u8,
    /// The prefix of the blank line owed (the outermost one in force when the
    /// blank line was asked for: a quote's closing blank line has no `>`).
    blank_prefix: Option<String>,
    pending_space: bool,
    at_line_start: bool,
    /// Line prefixes in force (quotes, list continuation), innermost last.
    prefixes: Vec<String>,
    /// What the next line starts with instead of the prefix (a list marker).
    pending_marker: Option<String>,
    /// A heading's `## `, written after the prefix or marker.
    pending_heading: Option<&'static str>,
    heading_depth: usize,
    list_depth: usize,
    wrappers: Vec<Wrapper>,
}

impl Writer {
    /// A writer for the document.
    pub(crate) fn new() -> Writer {
        Writer {
            at_line_start: true,
            ..Writer::default()
        }
    }

    /// A writer for one table cell.
    pub(crate) fn cell() -> Writer {
        Writer {
            cell: true,
            at_line_start: true,
            ..Writer::default()
        }
    }

    /// Whether this writer renders a table cell.
    pub(crate) fn is_cell(&self) -> bool {
        self.cell
    }

    /// The Markdown written so far.
    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn prefix(&self) -> &str {
        self.prefixes.last().map_or("", String::as_str)
    }

    /// A block boundary: a blank line, or one newline inside a list (blank lines
    /// would split the list into separate blocks for the chunker, FR-WF-CHK-LIST-01),
    /// or a space inside a heading (a heading is one line).
    pub(crate) fn block_break(&mut self) {
        let want = if self.list_depth > 0 || self.cell {
            LINE
        } else {
            PARAGRAPH
        };
        self.request_newlines(want);
    }

    /// A single line break (list items).
    pub(crate) fn line_break(&mut self) {
        self.request_newlines(LINE);
    }

    /// `<br>`: one newline more, at most a blank line (EXT-TAGS-01).
    pub(crate) fn hard_break(&mut self) {
        if self.heading_depth > 0 {
            self.pending_space = true;
            return;
        }
        let want = (self.pending_newlines + 1).min(PARAGRAPH);
        self.request_newlines(want);
    }

    /// Forces a blank line before the next content (after a fence or a table).
    fn request_blank_line(&mut self) {
        self.request_newlines(PARAGRAPH);
    }

    fn request_newlines(&mut self, n: u8) {
        if self.heading_depth > 0 {
            self.pending_space = true;
            return;
        }
        self.close_written_wrappers();
        if n >= PARAGRAPH {
            let prefix = self.prefixes.last().map_or("", |p| p.trim_end());
            if self
                .blank_prefix
                .as_ref()
                .is_none_or(|p| prefix.len() < p.len())
            {
                self.blank_prefix = Some(prefix.to_owned());
            }
        }
        self.pending_newlines = self.pending_newlines.max(n);
    }

    /// Whitespace in the source between inline content: one space, written only
    /// between two pieces of content on the same line.
    pub(crate) fn space(&mut self) {
        self.pending_space = true;
    }

    fn close_written_wrappers(&mut self) {
        for wrapper in self.wrappers.iter_mut().rev() {
            if wrapper.written {
                self.out.push_str(&wrapper.close);
                wrapper.written = false;
            }
        }
    }

    /// Everything owed before content: newlines, prefix or marker, heading marker,
    /// a space, opening delimiters. Returns whether the content starts a line.
    fn begin_content(&mut self) -> bool {
        if self.pending_newlines > 0 {
            if self.started {
                if self.cell {
                    self.out.push_str("<br>");
                } else {
                    self.out.push('\n');
                    if self.pending_newlines >= PARAGRAPH {
                        if let Some(blank) = &self.blank_prefix {
                            self.out.push_str(blank);
                        }
                        self.out.push('\n');
                    }
                }
                self.at_line_start = true;
            }
            self.pending_newlines = 0;
            self.blank_prefix = None;
            self.pending_space = false;
        }
        let mut line_start = false;
        if self.at_line_start {
            self.at_line_start = false;
            self.pending_space = false;
            line_start = true;
            match self.pending_marker.take() {
                // Text right after a list marker starts a block inside the item
                // (`- - x` is a nested list), so line-start escaping still applies.
                Some(marker) => self.out.push_str(&marker),
                None if !self.cell => {
                    if let Some(prefix) = self.prefixes.last() {
                        self.out.push_str(prefix);
                    }
                }
                None => {}
            }
        } else if let Some(marker) = self.pending_marker.take() {
            // A list item inside a cell or after inline content on the same line.
            if self.started {
                self.out.push_str(if self.cell { "<br>" } else { "\n" });
            }
            self.out.push_str(&marker);
            self.pending_space = false;
            line_start = true;
        }
        if let Some(heading) = self.pending_heading.take() {
            self.out.push_str(heading);
            line_start = false;
            self.pending_space = false;
        }
        if self.pending_space {
            self.out.push(' ');
            self.pending_space = false;
        }
        for wrapper in &mut self.wrappers {
            if !wrapper.written {
                self.out.push_str(wrapper.open);
                wrapper.written = true;
                line_start = false;
            }
        }
        self.started = true;
        line_start
    }

    /// Inline text from a text node: whitespace runs collapse to one space, words
    /// are escaped (see the module docs).
    pub(crate) fn text(&mut self, text: &str) {
        // HTML whitespace is ASCII, so byte positions are char boundaries.
        let Some(first) = text.bytes().position(|b| !is_html_space_byte(b)) else {
            // Whitespace only: a space owed (nothing at all for an empty text).
            self.pending_space |= !text.is_empty();
            return;
        };
        self.pending_space |= first > 0;
        let in_link = self.wrappers.iter().any(|w| w.kind == WrapperKind::Link);
        let line_start = self.begin_content() && !self.cell;
        self.pending_space = escape_text_into(&mut self.out, &text[first..], line_start, in_link);
    }

    /// Already-formatted inline Markdown (an image, a code span): no escaping.
    pub(crate) fn inline_raw(&mut self, markdown: &str) {
        if markdown.is_empty() {
            return;
        }
        self.begin_content();
        self.out.push_str(markdown);
    }

    /// A fenced code block or a table: always at the start of a line with no prefix
    /// and blank lines around it (see `markdown.rs` on why blocks leave lists).
    pub(crate) fn raw_block(&mut self, block: &str) {
        if block.is_empty() {
            return;
        }
        if self.pending_marker.is_some() {
            // A list item that starts with a block keeps its marker on a line of
            // its own, so the numbering stays visible.
            self.begin_content();
        }
        self.close_written_wrappers();
        if self.started {
            self.out.push_str("\n\n");
        }
        self.pending_newlines = 0;
        self.blank_prefix = None;
        self.pending_space = false;
        self.out.push_str(block);
        self.started = true;
        self.at_line_start = false;
        self.request_blank_line();
    }

    /// Opens an inline wrapper; the delimiter is written before the first content.
    /// Returns false (and does nothing) when one of the same kind is already open.
    pub(crate) fn open_wrapper(&mut self, kind: WrapperKind, url: Option<&str>) -> bool {
        if self.wrappers.iter().any(|w| w.kind == kind) {
            return false;
        }
        let (open, close) = match kind {
            WrapperKind::Emphasis => ("*", Cow::Borrowed("*")),
            WrapperKind::Strong => ("**", Cow::Borrowed("**")),
            WrapperKind::Link => ("[", Cow::Owned(format!("]({})", url.unwrap_or_default()))),
        };
        self.wrappers.push(Wrapper {
            kind,
            open,
            close,
            written: false,
        });
        true
    }

    /// Closes the innermost wrapper (written only if it wrapped content).
    pub(crate) fn close_wrapper(&mut self) {
        if let Some(wrapper) = self.wrappers.pop()
            && wrapper.written
        {
            self.out.push_str(&wrapper.close);
        }
    }

    /// Starts a heading: a block whose marker is written with its first content
    /// and whose inner breaks become spaces. In a table cell a heading is plain text.
    pub(crate) fn open_heading(&mut self, level: u8) -> bool {
        if self.heading_depth > 0 || self.cell {
            return false;
        }
        self.block_break();
        self.pending_heading = Some(heading_marker(level));
        self.heading_depth += 1;
        true
    }

    /// Ends a heading opened by [`Writer::open_heading`].
    pub(crate) fn close_heading(&mut self) {
        self.heading_depth = self.heading_depth.saturating_sub(1);
        self.pending_heading = None;
        self.block_break();
    }

    /// Enters a list (`<ul>`, `<ol>`).
    pub(crate) fn open_list(&mut self) {
        if self.list_depth == 0 {
            self.block_break();
        } else {
            self.line_break();
        }
        self.list_depth += 1;
    }

    /// Leaves a list.
    pub(crate) fn close_list(&mut self) {
        self.list_depth = self.list_depth.saturating_sub(1);
        self.block_break();
    }

    /// Number of enclosing lists.
    pub(crate) fn list_depth(&self) -> usize {
        self.list_depth
    }

    /// Starts a list item: its marker line is `indent + marker`, its continuation
    /// lines are indented to the item's text (EXT-LIST-01).
    pub(crate) fn open_item(&mut self, level: usize, marker: &str) {
        self.line_break();
        let base = self.quote_prefix();
        let indent = if self.cell { 0 } else { 2 * level };
        let mut first = String::with_capacity(base.len() + indent + marker.len());
        first.push_str(&base);
        first.extend(std::iter::repeat_n(' ', indent));
        first.push_str(marker);
        let mut rest = base;
        rest.extend(std::iter::repeat_n(' ', indent + marker.chars().count()));
        self.pending_marker = Some(first);
        self.prefixes.push(rest);
    }

    /// Ends a list item.
    pub(crate) fn close_item(&mut self) {
        self.pending_marker = None;
        self.prefixes.pop();
        self.line_break();
    }

    /// The quote part of the current prefix (`> > `), without list indentation.
    fn quote_prefix(&self) -> String {
        let prefix = self.prefix();
        let trimmed = prefix.trim_end_matches(' ');
        match trimmed.rfind('>') {
            Some(i) => format!("{} ", &prefix[..=i]),
            None => String::new(),
        }
    }

    /// Enters a blockquote.
    pub(crate) fn open_quote(&mut self) {
        self.block_break();
        let prefix = format!("{}> ", self.prefix());
        self.prefixes.push(prefix);
    }

    /// Leaves a blockquote.
    pub(crate) fn close_quote(&mut self) {
        self.prefixes.pop();
        self.block_break();
    }

    /// Whether a heading is open (blocks inside it are inline).
    pub(crate) fn in_heading(&self) -> bool {
        self.heading_depth > 0
    }
}

fn heading_marker(level: u8) -> &'static str {
    match level {
        1 => "# ",
        2 => "## ",
        3 => "### ",
        4 => "#### ",
        5 => "##### ",
        _ => "###### ",
    }
}

/// HTML's ASCII whitespace (the characters inline whitespace collapsing applies to;
/// a no-break space is content).
pub(crate) fn is_html_space(c: char) -> bool {
    u8::try_from(c).is_ok_and(is_html_space_byte)
}

/// [`is_html_space`] for a byte.
const fn is_html_space_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C')
}

/// `text` as one line of Markdown text, escaped per the module docs (whitespace
/// runs become one space): for text that comes from elsewhere than HTML, such as
/// a PDF's text layer.
pub(crate) fn escape_line(text: &str) -> String {
    escape_inline(text, true, false)
}

/// [`escape_line`] for text that may not start a line (`line_start` false: after
/// a heading marker or a link's `[`) or is a link's text (`in_link`: `]` escaped
/// too), such as a feed entry's title.
pub(crate) fn escape_inline(text: &str, line_start: bool, in_link: bool) -> String {
    let text = text.trim_start_matches(is_html_space_char);
    let mut out = String::with_capacity(text.len() + 8);
    escape_text_into(&mut out, text, line_start, in_link);
    out
}

fn is_html_space_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0C')
}

/// Appends `text`, which starts with a word, escaped per the module docs, each
/// run of HTML whitespace between words as one space. Returns whether `text` ends
/// in whitespace: that space is owed, not written. `line_start`: the first word
/// starts a line. What follows the text is unknown (markup may follow directly),
/// so a `\` or `<` that ends it is escaped.
///
/// One pass over the bytes, copying the stretches between escapes whole: this is
/// the converter's busiest loop on text-dense pages.
fn escape_text_into(out: &mut String, text: &str, line_start: bool, in_link: bool) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    if line_start {
        let first_word = bytes
            .iter()
            .position(|&b| is_html_space_byte(b))
            .unwrap_or(bytes.len());
        i = escape_line_start(out, &text[..first_word]);
    }
    // The start of what is not yet copied.
    let mut last = i;
    while i < bytes.len() {
        let b = bytes[i];
        match BYTE_CLASS[usize::from(b)] {
            ByteClass::Plain => i += 1,
            ByteClass::Space => {
                out.push_str(&text[last..i]);
                while i < bytes.len() && is_html_space_byte(bytes[i]) {
                    i += 1;
                }
                if i == bytes.len() {
                    return true;
                }
                out.push(' ');
                last = i;
            }
            ByteClass::MayEscape => {
                if must_escape(bytes, i, in_link) {
                    out.push_str(&text[last..i]);
                    out.push('\\');
                    last = i;
                }
                i += 1;
            }
        }
    }
    out.push_str(&text[last..]);
    false
}

/// Whether the byte at `i` of a text, one of [`ByteClass::MayEscape`], is escaped.
/// Whitespace around a word reads as no neighbour at all.
fn must_escape(bytes: &[u8], i: usize, in_link: bool) -> bool {
    match bytes[i] {
        b'*' | b'`' | b'[' | b'~' => true,
        b']' => in_link,
        b'_' => {
            let before = i.checked_sub(1).and_then(|j| bytes.get(j));
            let after = bytes.get(i + 1);
            !(before.is_some_and(is_word_byte) && after.is_some_and(is_word_byte))
        }
        // At the end, what follows is unknown: escape.
        b'\\' => bytes.get(i + 1).is_none_or(u8::is_ascii_punctuation),
        b'<' => bytes
            .get(i + 1)
            .is_none_or(|&n| n.is_ascii_alphabetic() || matches!(n, b'/' | b'!' | b'?')),
        b'&' => looks_like_entity(&bytes[i + 1..]),
        _ => false,
    }
}

/// How [`escape_text_into`] treats a byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ByteClass {
    /// Copied as it is.
    Plain,
    /// HTML whitespace: runs collapse.
    Space,
    /// May need a `\` before it ([`must_escape`]).
    MayEscape,
}

/// [`ByteClass`] by byte value: most bytes of a text are plain.
static BYTE_CLASS: [ByteClass; 256] = {
    let mut table = [ByteClass::Plain; 256];
    let special = b"*`[~]_\\<&";
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = ByteClass::MayEscape;
        i += 1;
    }
    let mut b = 0;
    while b < 256 {
        if is_html_space_byte(b as u8) {
            table[b] = ByteClass::Space;
        }
        b += 1;
    }
    table
};

/// Escapes what would start a block construct at the start of a line; returns how
/// many bytes of `word` it wrote.
fn escape_line_start(out: &mut String, word: &str) -> usize {
    let bytes = word.as_bytes();
    let Some(&first) = bytes.first() else {
        return 0;
    };
    let all_same = bytes.iter().all(|&b| b == first);
    let block_run = match first {
        b'#' => all_same && bytes.len() <= 6,
        b'-' | b'+' | b'=' => all_same,
        b'>' => true,
        _ => false,
    };
    if block_run {
        out.push('\\');
        return 0;
    }
    // `1.` / `12)`: an ordered list marker when followed by a space or the end.
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if (1..=9).contains(&digits)
        && bytes.get(digits).is_some_and(|&b| b == b'.' || b == b')')
        && digits + 1 == bytes.len()
    {
        out.push_str(&word[..digits]);
        out.push('\\');
        return digits;
    }
    0
}

fn is_word_byte(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || *b >= 0x80
}

/// `name;` or `#123;` / `#x1F;` right after a `&`.
fn looks_like_entity(rest: &[u8]) -> bool {
    let body = rest.strip_prefix(b"#").unwrap_or(rest);
    let len = body
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    len > 0 && body.get(len) == Some(&b';')
}

/// A code span for `code` (whitespace already collapsed): delimited by one backtick
/// more than its longest backtick run, padded when it starts or ends with one.
pub(crate) fn code_span(code: &str) -> String {
    let code = code.trim_matches(is_html_space);
    if code.is_empty() {
        return String::new();
    }
    let fence = "`".repeat(longest_backtick_run(code) + 1);
    let pad = if code.starts_with('`') || code.ends_with('`') {
        " "
    } else {
        ""
    };
    let mut out = String::with_capacity(code.len() + 2 * fence.len() + 2);
    let _ = write!(out, "{fence}{pad}{code}{pad}{fence}");
    out
}

/// The longest run of backticks in `text`.
pub(crate) fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for b in text.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(word: &str, line_start: bool) -> String {
        let mut out = String::new();
        assert!(!escape_text_into(&mut out, word, line_start, false));
        out
    }

    #[test]
    fn escaping_inline() {
        let cases = [
            ("plain", "plain"),
            ("5*3", "5\\*3"),
            ("snake_case", "snake_case"),
            ("_init_", "\\_init\\_"),
            ("[1]", "\\[1]"),
            ("`x`", "\\`x\\`"),
            ("~5", "\\~5"),
            ("<div>", "\\<div>"),
            ("a<b", "a\\<b"),
            ("1<2", "1<2"),
            ("AT&T", "AT&T"),
            ("&amp;", "\\&amp;"),
            ("&#169;", "\\&#169;"),
            ("C:\\dir", "C:\\dir"),
            ("a\\*", "a\\\\\\*"),
            ("end\\", "end\\\\"),
            ("#tag", "#tag"),
            ("co-op", "co-op"),
            ("café_", "café\\_"),
        ];
        for (input, expected) in cases {
            assert_eq!(esc(input, false), expected, "{input}");
        }
    }

    #[test]
    fn escaping_at_line_start() {
        let cases = [
            ("#", "\\#"),
            ("###", "\\###"),
            ("#######", "#######"),
            ("#tag", "#tag"),
            ("-", "\\-"),
            ("---", "\\---"),
            ("+", "\\+"),
            ("==", "\\=="),
            (">", "\\>"),
            (">quote", "\\>quote"),
            ("1.", "1\\."),
            ("2019.", "2019\\."),
            ("3)", "3\\)"),
            ("1.5", "1.5"),
            ("-x", "-x"),
            ("*", "\\*"),
        ];
        for (input, expected) in cases {
            assert_eq!(esc(input, true), expected, "{input}");
            assert_eq!(
                esc(input, false).contains('\\'),
                input.starts_with('*'),
                "{input}"
            );
        }
    }

    /// Whitespace between words reads as no neighbour, and only the text's last
    /// byte is followed by the unknown.
    #[test]
    fn text_collapses_whitespace_and_escapes_each_word() {
        let mut w = Writer::new();
        w.text("  a\\ b_c _d_ 1<2 <b\t\n&amp; x\\");
        w.text(" y\n");
        w.text("\n");
        w.text("");
        w.text("z");
        assert_eq!(w.finish(), "a\\ b_c \\_d\\_ 1<2 \\<b \\&amp; x\\\\ y z");
    }

    /// The escaping rules applied word by word, as the module docs state them:
    /// what [`escape_text_into`]'s one pass must agree with.
    fn escaped_word_by_word(text: &str, line_start: bool, in_link: bool) -> (String, bool) {
        let words: Vec<&str> = text
            .split(is_html_space)
            .filter(|w| !w.is_empty())
            .collect();
        let trailing_space = text.ends_with(is_html_space);
        let mut out = String::new();
        for (n, word) in words.iter().enumerate() {
            if n > 0 {
                out.push(' ');
            }
            // Only the text's last byte is followed by the unknown.
            let at_end = n + 1 == words.len() && !trailing_space;
            let bytes = word.as_bytes();
            let written = if line_start && n == 0 {
                escape_line_start(&mut out, word)
            } else {
                0
            };
            for (i, c) in word.char_indices().filter(|(i, _)| *i >= written) {
                let next = bytes.get(i + 1).copied();
                let prev = i.checked_sub(1).map(|j| bytes[j]);
                let escape = match c {
                    '*' | '`' | '[' | '~' => true,
                    ']' => in_link,
                    '_' => {
                        !(prev.is_some_and(|p| is_word_byte(&p))
                            && next.is_some_and(|n| is_word_byte(&n)))
                    }
                    '\\' => next.map_or(at_end, |n| n.is_ascii_punctuation()),
                    '<' => next.map_or(at_end, |n| {
                        n.is_ascii_alphabetic() || matches!(n, b'/' | b'!' | b'?')
                    }),
                    '&' => looks_like_entity(&bytes[i + 1..]),
                    _ => false,
                };
                if escape {
                    out.push('\\');
                }
                out.push(c);
            }
        }
        (out, trailing_space)
    }

    proptest::proptest! {
        #[test]
        fn one_pass_escaping_matches_word_by_word(
            text in "[a_b*`\\[\\]~\\\\<&#;1.)+=>/!?é日 \t\n\r\x0C-]{1,40}",
            line_start: bool,
            in_link: bool,
        ) {
            let text = text.trim_start_matches(is_html_space);
            proptest::prop_assume!(!text.is_empty());
            let mut out = String::new();
            let owed = escape_text_into(&mut out, text, line_start, in_link);
            proptest::prop_assert_eq!(
                (out, owed),
                escaped_word_by_word(text, line_start, in_link)
            );
        }
    }

    #[test]
    fn code_spans() {
        assert_eq!(code_span("x"), "`x`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`tick"), "`` `tick ``");
        assert_eq!(code_span("  "), "");
    }

    #[test]
    fn lazy_wrappers_leave_no_trace_when_empty() {
        let mut w = Writer::new();
        w.open_wrapper(WrapperKind::Strong, None);
        w.close_wrapper();
        w.text("a");
        w.open_wrapper(WrapperKind::Emphasis, None);
        w.text(" b ");
        w.close_wrapper();
        w.text("c");
        assert_eq!(w.finish(), "a *b* c");
    }

    #[test]
    fn wrappers_close_and_reopen_around_breaks() {
        let mut w = Writer::new();
        w.open_wrapper(WrapperKind::Link, Some("https://e.x/"));
        w.block_break();
        w.text("Title");
        w.block_break();
        w.text("Desc");
        w.close_wrapper();
        assert_eq!(w.finish(), "[Title](https://e.x/)\n\n[Desc](https://e.x/)");
    }
}
