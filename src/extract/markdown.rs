//! HTML to Markdown over the cleaned tree (FR-WF-13a, EXT-TAGS-01, EXT-TABLE-01/02,
//! EXT-LIST-01, EXT-CODE-01/02, 13d, 13d1).
//!
//! One iterative walk of the root's subtree (an explicit frame stack, never
//! recursion, so 100 000 nested elements cost 100 000 steps and no call stack).
//! Removed (boilerplate) and skipped elements are not entered.
//!
//! Choices the SRD leaves open, all deliberate:
//!
//! * Fenced code blocks and tables are always written at the start of a line, with
//!   no list indentation or quote marker, even inside a list item or blockquote:
//!   fence detection (FR-WF-15, EXT-WS-01) and table rows need column 0, and code
//!   must come out byte for byte.
//! * Inside a list item, paragraphs and other blocks are separated by one newline
//!   and indented to the item's text, so a list stays one block for the chunker
//!   (FR-WF-CHK-LIST-01). Ordered lists count from `<ol start>` (default 1), one
//!   number per `<li>`, empty items included.
//! * Adjacent inline elements are concatenated as the browser shows them
//!   (`<b>a</b><i>b</i>` is `**a***b*`): whitespace in the source becomes one
//!   space, no space is invented.
//! * Links become `[text](absolute URL)` for `http`, `https` and `mailto` targets;
//!   other schemes (`javascript:`, `data:`) keep only their text. Images become
//!   `![alt](absolute URL)` when `alt` is not blank and `src` resolves to `http(s)`;
//!   with another `src` (an inline `data:` image) only the alt text is kept.
//! * `<pre>` without `<code>` is a code block too. The language comes from a
//!   `language-xxx` class on the `<code>`, else on the `<pre>`, when it is a
//!   plausible name (see [`MAX_LANGUAGE_LEN`]), else the fence is plain. Content is kept
//!   exactly; the newline before the closing fence is added only when the content
//!   does not already end with one, so the code's own bytes are what a Markdown
//!   reader gets back. Fences are `max(3, 1 + longest backtick run)` backticks
//!   (SRD-READINGS 16).
//! * In table cells, breaks become `<br>` and `|` becomes `\|`; a table inside a
//!   cell is flattened to text (cells separated by spaces, rows by `<br>`).

use ego_tree::NodeRef;
use url::Url;

use super::dom::Node;
use super::element::Tag;
use super::element::{Attr, Element};
use super::table::TableBuilder;
use super::walk::{Step, Visitor, walk};
use super::writer::{WrapperKind, Writer, code_span, is_html_space, longest_backtick_run};

/// What leaving an element undoes.
enum Exit {
    Nothing,
    Block,
    Heading,
    Wrapper,
    List,
    Item,
    Quote,
    Table,
    Row,
    Cell { header: bool },
    Caption,
    FlatCell,
    FlatRow,
    Pre,
    Code,
}

/// Text being collected verbatim (`<pre>`) or for a code span (`<code>`).
struct Capture {
    text: String,
    verbatim: bool,
    language: Option<String>,
}

/// An open list: ordered or not, and the next number.
struct List {
    ordered: bool,
    next: u64,
}

struct Converter<'a> {
    base: &'a Url,
    /// The document writer, then one per open table cell.
    writers: Vec<Writer>,
    tables: Vec<TableBuilder>,
    lists: Vec<List>,
    capture: Option<Capture>,
    /// What leaving each open element undoes.
    frames: Vec<Exit>,
}

/// Converts the subtree of `root` to Markdown (not yet whitespace-normalised).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn convert(root: NodeRef<'_, Node>, base: &Url) -> String {
    let mut converter = Converter {
        base,
        writers: vec![Writer::new()],
        tables: Vec::new(),
        lists: Vec::new(),
        capture: None,
        frames: Vec::new(),
    };
    walk(root, &mut converter);
    // Unclosed tables or cells cannot remain (the walk is balanced), but fold any
    // leftover writers into the document rather than lose text.
    let mut out = String::new();
    for writer in converter.writers {
        out.push_str(&writer.finish());
    }
    out
}

impl<'a> Visitor<'a> for Converter<'_> {
    fn enter(&mut self, node: NodeRef<'a, Node>) -> Step {
        let exit = match node.value() {
            Node::Text(text) => {
                self.text(text);
                return Step::Over;
            }
            Node::Element(element) => match self.open(element) {
                Some(exit) => exit,
                None => return Step::Over,
            },
            Node::Document => Exit::Nothing,
            Node::Other => return Step::Over,
        };
        self.frames.push(exit);
        Step::Into
    }

    fn leave(&mut self, _node: NodeRef<'a, Node>) {
        self.close();
    }
}

impl Converter<'_> {
    fn writer(&mut self) -> &mut Writer {
        if self.writers.is_empty() {
            self.writers.push(Writer::new());
        }
        let last = self.writers.len() - 1;
        &mut self.writers[last]
    }

    fn text(&mut self, text: &str) {
        if let Some(capture) = &mut self.capture {
            capture.text.push_str(text);
            return;
        }
        self.writer().text(text);
    }

    /// Handles an element's start; `None` means do not descend.
    fn open(&mut self, element: &Element) -> Option<Exit> {
        if !element.is_rendered() {
            return None;
        }
        if let Some(capture) = &mut self.capture {
            match element.tag {
                Tag::LineBreak => {
                    capture.text.push(if capture.verbatim { '\n' } else { ' ' });
                }
                Tag::Code if capture.language.is_none() => {
                    capture.language = element.attr(Attr::Class).and_then(language);
                }
                _ => {}
            }
            return Some(Exit::Nothing);
        }
        let in_cell = self.writer().is_cell();
        Some(match element.tag {
            Tag::Html | Tag::Body | Tag::Base | Tag::Inline => Exit::Nothing,
            Tag::Main | Tag::Article | Tag::Block => {
                self.writer().block_break();
                Exit::Block
            }
            Tag::Heading(level) => {
                if self.writer().open_heading(level) {
                    Exit::Heading
                } else {
                    self.writer().space();
                    Exit::Nothing
                }
            }
            Tag::Emphasis => self.wrapper(WrapperKind::Emphasis, None),
            Tag::Strong => self.wrapper(WrapperKind::Strong, None),
            Tag::Link => match element.attr(Attr::Href).and_then(|h| self.link_url(h)) {
                Some(url) => self.wrapper(WrapperKind::Link, Some(&url)),
                None => Exit::Nothing,
            },
            Tag::Image => {
                self.image(element);
                return None;
            }
            Tag::LineBreak => {
                self.writer().hard_break();
                return None;
            }
            Tag::Rule => {
                let writer = self.writer();
                if writer.list_depth() == 0 && !writer.is_cell() && !writer.in_heading() {
                    writer.raw_block("---");
                } else {
                    writer.block_break();
                }
                return None;
            }
            Tag::UnorderedList | Tag::OrderedList => {
                let ordered = element.tag == Tag::OrderedList;
                let start = element
                    .attr(Attr::Start)
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .filter(|&n| n < 1_000_000_000)
                    .unwrap_or(1);
                self.lists.push(List {
                    ordered,
                    next: start,
                });
                self.writer().open_list();
                Exit::List
            }
            Tag::ListItem => {
                let marker = match self.lists.last_mut() {
                    Some(list) if list.ordered => {
                        let marker = format!("{}. ", list.next);
                        list.next = list.next.saturating_add(1);
                        marker
                    }
                    _ => "- ".to_owned(),
                };
                let level = self.writer().list_depth().saturating_sub(1);
                self.writer().open_item(level, &marker);
                Exit::Item
            }
            Tag::Quote => {
                if in_cell {
                    self.writer().block_break();
                    Exit::Block
                } else {
                    self.writer().open_quote();
                    Exit::Quote
                }
            }
            Tag::Pre => {
                self.start_capture(true, element.attr(Attr::Class).and_then(language));
                Exit::Pre
            }
            Tag::Code => {
                self.start_capture(false, None);
                Exit::Code
            }
            Tag::Table if in_cell => {
                self.writer().block_break();
                Exit::Block
            }
            Tag::Table => {
                self.tables.push(TableBuilder::default());
                Exit::Table
            }
            Tag::Row if in_cell || self.tables.is_empty() => {
                self.writer().line_break();
                Exit::FlatRow
            }
            Tag::Row => {
                if let Some(table) = self.tables.last_mut() {
                    table.start_row();
                }
                Exit::Row
            }
            Tag::Cell { .. } if in_cell || self.tables.is_empty() => {
                self.writer().space();
                Exit::FlatCell
            }
            Tag::Cell { header } => {
                self.writers.push(Writer::cell());
                Exit::Cell { header }
            }
            Tag::Caption if !in_cell && !self.tables.is_empty() => {
                self.writers.push(Writer::cell());
                Exit::Caption
            }
            Tag::Caption => {
                self.writer().block_break();
                Exit::Block
            }
            Tag::Skip | Tag::Head | Tag::Title => return None,
        })
    }

    fn close(&mut self) {
        let Some(exit) = self.frames.pop() else {
            return;
        };
        if self.capture.is_some() && !matches!(exit, Exit::Pre | Exit::Code) {
            return;
        }
        match exit {
            Exit::Nothing => {}
            Exit::Block => self.writer().block_break(),
            Exit::Heading => self.writer().close_heading(),
            Exit::Wrapper => self.writer().close_wrapper(),
            Exit::List => {
                self.lists.pop();
                self.writer().close_list();
            }
            Exit::Item => self.writer().close_item(),
            Exit::Quote => self.writer().close_quote(),
            Exit::Table => {
                if let Some(mut table) = self.tables.pop() {
                    let caption = std::mem::take(&mut table.caption);
                    let rendered = table.render();
                    let writer = self.writer();
                    if !caption.is_empty() && !rendered.is_empty() {
                        writer.block_break();
                        writer.inline_raw(&caption);
                        writer.block_break();
                    }
                    writer.raw_block(&rendered);
                }
            }
            Exit::Row => {
                if let Some(table) = self.tables.last_mut() {
                    table.end_row();
                }
            }
            Exit::Cell { header } => {
                if self.writers.len() > 1
                    && let Some(cell) = self.writers.pop()
                    && let Some(table) = self.tables.last_mut()
                {
                    table.add_cell(cell.finish(), header);
                }
            }
            Exit::Caption => {
                if self.writers.len() > 1
                    && let Some(cell) = self.writers.pop()
                    && let Some(table) = self.tables.last_mut()
                {
                    let text = cell.finish();
                    if table.caption.is_empty() {
                        table.caption = text.trim().to_owned();
                    }
                }
            }
            Exit::FlatCell => self.writer().space(),
            Exit::FlatRow => self.writer().line_break(),
            Exit::Pre => self.finish_pre(),
            Exit::Code => self.finish_code(),
        }
    }

    fn wrapper(&mut self, kind: WrapperKind, url: Option<&str>) -> Exit {
        if self.writer().open_wrapper(kind, url) {
            Exit::Wrapper
        } else {
            Exit::Nothing
        }
    }

    fn start_capture(&mut self, verbatim: bool, language: Option<String>) {
        self.capture = Some(Capture {
            text: String::new(),
            verbatim,
            language,
        });
    }

    fn finish_pre(&mut self) {
        let Some(capture) = self.capture.take() else {
            return;
        };
        if capture.text.trim().is_empty() {
            return;
        }
        let block = fenced_block(&capture.text, capture.language.as_deref());
        let writer = self.writer();
        if writer.is_cell() {
            // A table line cannot hold a fence: the code becomes a code span.
            let collapsed: Vec<&str> = capture
                .text
                .split(is_html_space)
                .filter(|w| !w.is_empty())
                .collect();
            writer.inline_raw(&code_span(&collapsed.join(" ")));
        } else {
            writer.raw_block(&block);
        }
    }

    fn finish_code(&mut self) {
        let Some(capture) = self.capture.take() else {
            return;
        };
        let collapsed: Vec<&str> = capture
            .text
            .split(is_html_space)
            .filter(|w| !w.is_empty())
            .collect();
        if capture.text.starts_with(is_html_space) {
            self.writer().space();
        }
        self.writer().inline_raw(&code_span(&collapsed.join(" ")));
        if capture.text.ends_with(is_html_space) {
            self.writer().space();
        }
    }

    fn image(&mut self, element: &Element) {
        let alt: Vec<&str> = element
            .attr(Attr::Alt)
            .unwrap_or_default()
            .split(is_html_space)
            .filter(|w| !w.is_empty())
            .collect();
        if alt.is_empty() {
            return;
        }
        let alt = alt.join(" ");
        let src = element
            .attr(Attr::Src)
            .and_then(|src| self.base.join(src.trim()).ok())
            .filter(|url| matches!(url.scheme(), "http" | "https"));
        let mut escaped = String::with_capacity(alt.len() + 8);
        for c in alt.chars() {
            if matches!(c, '[' | ']' | '\\' | '*' | '`' | '_' | '<') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        match src {
            Some(url) => {
                let markdown = format!("![{escaped}]({})", destination(url.as_str()));
                self.writer().inline_raw(&markdown);
            }
            None => self.writer().text(&alt),
        }
    }

    /// The Markdown destination of a link (FR-WF-13d), see [`link_url`].
    fn link_url(&self, href: &str) -> Option<String> {
        link_url(self.base, href).map(|url| destination(url.as_str()))
    }
}

/// The absolute URL a link points to (FR-WF-13d): resolved against `base`
/// (FR-WF-13d1), fragment kept; `None` for schemes that are not navigable
/// documents (anything but `http`, `https` and `mailto`). The one rule for every
/// link a reader writes: HTML, and feed entries.
pub(crate) fn link_url(base: &Url, href: &str) -> Option<Url> {
    let url = base.join(href.trim()).ok()?;
    matches!(url.scheme(), "http" | "https" | "mailto").then_some(url)
}

/// A link destination as Markdown: bare when its parentheses balance, else in
/// `<...>`. The URL serializer leaves spaces, `<`, `>` and `\` in an opaque
/// path (a `mailto:`) and `\` in a query: they are percent-encoded, so a
/// destination is read whole and can never close its `<...>` or escape what
/// follows.
pub(crate) fn destination(url: &str) -> String {
    let url = encode_unsafe(url);
    let mut depth = 0i64;
    let mut balanced = true;
    for b in url.bytes() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth < 0 {
                    balanced = false;
                    break;
                }
            }
            _ => {}
        }
    }
    if balanced && depth == 0 {
        url.into_owned()
    } else {
        format!("<{url}>")
    }
}

/// `url` with the bytes a Markdown destination cannot hold as they are (space,
/// `<`, `>`, `\`, controls) percent-encoded.
fn encode_unsafe(url: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_byte = |b: u8| matches!(b, b' ' | b'<' | b'>' | b'\\') || b.is_ascii_control();
    if !url.bytes().any(unsafe_byte) {
        return std::borrow::Cow::Borrowed(url);
    }
    let mut out = String::with_capacity(url.len() + 8);
    for c in url.chars() {
        match u8::try_from(c) {
            Ok(b) if unsafe_byte(b) => out.push_str(&format!("%{b:02X}")),
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The fenced block for `code` (EXT-CODE-01/02, SRD-READINGS 16).
pub(crate) fn fenced_block(code: &str, language: Option<&str>) -> String {
    let fence = "`".repeat(longest_backtick_run(code).max(2) + 1);
    let mut out = String::with_capacity(code.len() + 2 * fence.len() + 16);
    out.push_str(&fence);
    out.push_str(language.unwrap_or_default());
    out.push('\n');
    out.push_str(code);
    if !code.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out
}

/// Language hints longer than this give a plain fence.
pub(crate) const MAX_LANGUAGE_LEN: usize = 32;

/// The `language-xxx` hint of a class list (FR-WF-EXT-CODE-01 step 1): the first
/// `language-` token whose name is 1 to [`MAX_LANGUAGE_LEN`] characters of
/// `[A-Za-z0-9_+#.-]`. Any other token gives no hint and a plain fence.
///
/// Our reading of EXT-CODE-01: the hint is a label, not content, so one that is
/// not a plausible language name is dropped whole rather than cut. The chunker
/// repeats the opening fence, hint included, in every piece of a code block too
/// large for one chunk (FR-WF-CHK-CODE-01), and the smallest budget is 128 tokens:
/// a page-controlled hint of any length would crowd out the code (or make the
/// chunker drop the fences); and characters outside the set are markup an info
/// string should not carry.
fn language(class: &str) -> Option<String> {
    class.split_ascii_whitespace().find_map(|token| {
        let name = token
            .get(..9)
            .filter(|p| p.eq_ignore_ascii_case("language-"))
            .and_then(|_| token.get(9..))?;
        let plausible = (1..=MAX_LANGUAGE_LEN).contains(&name.len())
            && name.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'+' | b'#' | b'-' | b'_' | b'.')
            });
        plausible.then(|| name.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_length_rule() {
        assert_eq!(fenced_block("x", None), "```\nx\n```");
        assert_eq!(
            fenced_block("a ``` b\n", Some("md")),
            "````md\na ``` b\n````"
        );
        assert_eq!(fenced_block("`````", None), "``````\n`````\n``````");
        assert_eq!(fenced_block("`", None), "```\n`\n```");
    }

    #[test]
    fn language_hint() {
        assert_eq!(language("hljs language-rust"), Some("rust".to_owned()));
        assert_eq!(language("Language-C++"), Some("C++".to_owned()));
        assert_eq!(language("language-"), None);
        assert_eq!(language("lang-js"), None);
        assert_eq!(language("language-a`b"), None);
        assert_eq!(language("language-a`b language-go"), Some("go".to_owned()));
        assert_eq!(language("language-ñ"), None);
    }

    /// A hint longer than [`MAX_LANGUAGE_LEN`] gives a plain fence, so a fence line
    /// always fits the smallest chunk (FR-WF-EXT-CODE-01).
    #[test]
    fn long_language_hint_gives_a_plain_fence() {
        let at_cap = "x".repeat(MAX_LANGUAGE_LEN);
        assert_eq!(
            language(&format!("language-{at_cap}")),
            Some(at_cap.clone())
        );
        let over = "x".repeat(MAX_LANGUAGE_LEN + 1);
        assert_eq!(language(&format!("language-{over}")), None);
        assert_eq!(language(&format!("language-{}", "y".repeat(10_000))), None);
    }

    #[test]
    fn destinations() {
        assert_eq!(destination("https://e.x/a_(b)"), "https://e.x/a_(b)");
        assert_eq!(destination("https://e.x/a)"), "<https://e.x/a)>");
        assert_eq!(destination("mailto:a>b c)\\"), "<mailto:a%3Eb%20c)%5C>");
        assert_eq!(destination("mailto:<x>"), "mailto:%3Cx%3E");
    }

    #[test]
    fn only_http_https_and_mailto_links_are_kept() {
        let base = Url::parse("https://e.x/a/").unwrap();
        for (href, kept) in [
            ("b", Some("https://e.x/a/b")),
            (" //o.x/p ", Some("https://o.x/p")),
            ("mailto:m@e.x", Some("mailto:m@e.x")),
            ("javascript:alert(1)", None),
            ("JavaScript:alert(1)", None),
            ("data:text/html,x", None),
            ("file:///etc/passwd", None),
            ("vbscript:x", None),
        ] {
            assert_eq!(
                link_url(&base, href).as_ref().map(Url::as_str),
                kept,
                "{href}"
            );
        }
    }
}
