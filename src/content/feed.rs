//! RSS 2.0 and Atom feeds as Markdown: the feed's title, then each
//! entry (title, link, date, summary) as an item of a Markdown list.
//!
//! A streaming pass of quick-xml over the decoded text: each entry is rendered as
//! soon as it closes and only its Markdown is kept, so memory is the body (itself
//! capped by `max_download_bytes`) and the output, whatever the nesting or the
//! number of entries. The output stops growing at the page's size cap
//! ([`MAX_RENDERED_BYTES`]; the rest of the feed is still checked for
//! well-formedness) and the loop checks the call's read budget at every event.
//! Entries are `item` (RSS 0.9x, 1.0, 2.0) and `entry` (Atom) elements at any
//! depth; the feed's title is the first `title` outside an entry.
//!
//! What a feed says is written by the HTML path's rules (FR-WF-13a, 13d):
//! summaries in HTML (RSS `description`, Atom `type="html"`) go through the SRD's
//! HTML extraction, so their links become absolute Markdown links and their
//! markup never reaches the model; titles, dates and plain-text summaries are text,
//! escaped as the HTML path escapes a page's text (a raw `<img onerror=...>` in a
//! title is shown, never markup); an entry's link is kept only for `http`,
//! `https` and `mailto` (else the title stays, as plain text) and is written as
//! the HTML path writes a destination.
//!
//! [`MAX_RENDERED_BYTES`]: crate::page::MAX_RENDERED_BYTES

use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use url::Url;

use crate::budget;
use crate::content::MAX_RENDERED_BYTES;
use crate::content::Rendered;
use crate::error::{FetchError, UnreadableReason};
use crate::extract;
use crate::extract::markdown::{destination, link_url};
use crate::extract::writer::escape_inline;
use crate::vocabulary::{ExtractedDocument, ExtractionMode};

/// Bytes looked at for the root element of an XML document served as
/// `application/xml` or `text/xml`.
const ROOT_SCAN: usize = 4096;

/// Elements deeper than this are read for their text but not named (the stack of
/// names stays small whatever a hostile document nests).
const MAX_DEPTH: usize = 64;

/// Whether an XML body's root element is `rss` or `feed` (Atom), `rdf:RDF`
/// (RSS 1.0) too: the first element after the prolog, comments, processing
/// instructions and doctype, within the first 4 KiB.
pub(crate) fn is_feed(body: &[u8]) -> bool {
    let head = &body[..body.len().min(ROOT_SCAN)];
    let mut reader = Reader::from_reader(head);
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) => {
                let name = e.local_name();
                let name = name.as_ref();
                return name.eq_ignore_ascii_case(b"rss")
                    || name.eq_ignore_ascii_case(b"feed")
                    || name.eq_ignore_ascii_case(b"rdf");
            }
            Ok(Event::Eof) | Err(_) => return false,
            Ok(Event::Text(text)) if !text.iter().all(u8::is_ascii_whitespace) => {
                // BOM aside, text before the root is not a feed.
                if !text.starts_with(b"\xEF\xBB\xBF") {
                    return false;
                }
            }
            Ok(_) => {}
        }
        buf.clear();
    }
}

/// One entry as read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Entry {
    title: String,
    link: String,
    date: String,
    summary: String,
    summary_is_html: bool,
    content: String,
    content_is_html: bool,
}

/// What a feed field is, for the element that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Title,
    Link,
    Date,
    Summary,
    Content,
}

impl Field {
    /// The field of an entry's (or the channel's) child element, by local name.
    fn of(name: &[u8]) -> Option<Field> {
        Some(match name.to_ascii_lowercase().as_slice() {
            b"title" => Field::Title,
            b"link" => Field::Link,
            b"pubdate" | b"date" | b"updated" | b"published" => Field::Date,
            b"description" | b"summary" | b"subtitle" => Field::Summary,
            b"content" | b"encoded" => Field::Content,
            _ => return None,
        })
    }
}

/// The feed as read: its title and description, and its entries as rendered.
#[derive(Debug)]
struct Feed<'a> {
    base: &'a Url,
    title: String,
    description: String,
    /// The entries' list items, in order.
    items: String,
    /// How many entries the feed has.
    entries: usize,
    /// The items reached the size cap: later entries are left out.
    cut: bool,
}

impl Feed<'_> {
    /// An entry closes: its item is rendered, unless the cap was reached.
    fn add(&mut self, entry: &Entry) {
        self.entries += 1;
        if self.cut {
            return;
        }
        if self.items.len() >= MAX_RENDERED_BYTES {
            self.cut = true;
            return;
        }
        self.items.push_str(&entry_item(entry, self.base));
    }
}

/// The element being captured: which field, at which depth, and whether its text
/// is HTML.
struct Capture {
    field: Field,
    depth: usize,
    html: bool,
    text: String,
}

/// Reads a feed (decoded text) into Markdown, links resolved against `base`.
///
/// A document that is not well-formed XML is `extraction_failed` with
/// `details.reason = "feed_malformed"`; a feed with neither a title nor an
/// entry is `no_extractable_content`.
///
/// The items stop at [`MAX_RENDERED_BYTES`] (then [`Rendered::cut`]): the
/// output is at most the cap plus one entry and the feed's title and
/// description, which the page cuts at the cap.
pub(crate) fn to_markdown(text: &str, base: &Url) -> Result<Rendered, FetchError> {
    let feed = parse(text, base).map_err(|detail| {
        FetchError::unreadable(
            UnreadableReason::FeedMalformed,
            &format!("the feed is not well-formed XML ({detail})"),
        )
    })?;
    render(&feed)
}

fn parse<'a>(text: &str, base: &'a Url) -> Result<Feed<'a>, String> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut feed = Feed {
        base,
        title: String::new(),
        description: String::new(),
        items: String::new(),
        entries: 0,
        cut: false,
    };
    let mut depth = 0usize;
    let mut names: Vec<Vec<u8>> = Vec::new();
    let mut entry: Option<(usize, Entry)> = None;
    let mut capture: Option<Capture> = None;
    loop {
        if budget::interrupted() {
            // The budget's error is the answer (`ReadBudget::run`).
            return Err("the read was interrupted".to_owned());
        }
        let event = reader
            .read_event()
            .map_err(|e| format!("at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(start) => {
                depth += 1;
                let name = start.local_name().as_ref().to_ascii_lowercase();
                open(&start, &name, depth, &mut entry, &mut capture);
                if names.len() < MAX_DEPTH {
                    names.push(name);
                }
            }
            Event::Empty(start) => {
                let name = start.local_name().as_ref().to_ascii_lowercase();
                // An Atom `<link href=.../>` is the one empty element with content.
                if name == b"link"
                    && capture.is_none()
                    && let Some(href) = alternate_href(&start)
                {
                    match &mut entry {
                        Some((_, e)) if e.link.is_empty() => e.link = href,
                        _ => {}
                    }
                }
            }
            Event::End(_) => {
                if let Some(c) = capture.take_if(|c| c.depth == depth) {
                    store(c, &mut entry, &mut feed);
                }
                if let Some((_, done)) = entry.take_if(|(d, _)| *d == depth) {
                    feed.add(&done);
                }
                if depth <= MAX_DEPTH {
                    names.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) => {
                if let Some(c) = &mut capture {
                    c.text.push_str(&t.decode().map_err(|e| e.to_string())?);
                }
            }
            Event::CData(t) => {
                if let Some(c) = &mut capture {
                    c.text.push_str(&t.decode().map_err(|e| e.to_string())?);
                }
            }
            Event::GeneralRef(r) => {
                if let Some(c) = &mut capture {
                    match r.resolve_char_ref().map_err(|e| e.to_string())? {
                        Some(ch) => c.text.push(ch),
                        None => {
                            let name = r.decode().map_err(|e| e.to_string())?;
                            let resolved = quick_xml::escape::resolve_predefined_entity(&name)
                                .ok_or_else(|| format!("unknown entity &{name};"))?;
                            c.text.push_str(resolved);
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if depth != 0 {
        return Err("the document ends inside an element".to_owned());
    }
    Ok(feed)
}

/// An element opens: an entry starts, or a field of the entry (or of the feed,
/// outside any entry) starts being captured.
fn open(
    start: &BytesStart<'_>,
    name: &[u8],
    depth: usize,
    entry: &mut Option<(usize, Entry)>,
    capture: &mut Option<Capture>,
) {
    if capture.is_some() {
        return;
    }
    if entry.is_none() && (name == b"item" || name == b"entry") {
        *entry = Some((depth, Entry::default()));
        return;
    }
    let Some(field) = Field::of(name) else { return };
    if name == b"link"
        && let (Some(href), Some((_, e))) = (alternate_href(start), entry.as_mut())
        && e.link.is_empty()
    {
        e.link = href;
    }
    let kind = attribute(start, b"type").unwrap_or_default();
    // RSS descriptions are HTML; Atom's text constructs say so with `type`.
    let html = match kind.as_str() {
        "html" | "text/html" | "xhtml" => true,
        "" => name == b"description" || name == b"encoded",
        _ => false,
    };
    *capture = Some(Capture {
        field,
        depth,
        html,
        text: String::new(),
    });
}

/// A captured field closes: it goes to the entry, or to the feed.
fn store(capture: Capture, entry: &mut Option<(usize, Entry)>, feed: &mut Feed<'_>) {
    let text = capture.text;
    match (entry.as_mut(), capture.field) {
        (Some((_, e)), Field::Title) if e.title.is_empty() => e.title = text,
        (Some((_, e)), Field::Link) if e.link.is_empty() => e.link = text,
        (Some((_, e)), Field::Date) if e.date.is_empty() => e.date = text,
        (Some((_, e)), Field::Summary) if e.summary.is_empty() => {
            e.summary = text;
            e.summary_is_html = capture.html;
        }
        (Some((_, e)), Field::Content) if e.content.is_empty() => {
            e.content = text;
            e.content_is_html = capture.html;
        }
        (None, Field::Title) if feed.title.is_empty() => feed.title = text,
        (None, Field::Summary) if feed.description.is_empty() => feed.description = text,
        _ => {}
    }
}

/// The `href` of an Atom `link` that is the entry's own page (`rel` absent or
/// `alternate`).
fn alternate_href(start: &BytesStart<'_>) -> Option<String> {
    let rel = attribute(start, b"rel").unwrap_or_default();
    if !rel.is_empty() && rel != "alternate" {
        return None;
    }
    attribute(start, b"href").filter(|href| !href.trim().is_empty())
}

fn attribute(start: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    let attr = start.try_get_attribute(name).ok()??;
    attr.normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .ok()
        .map(|v| v.trim().to_owned())
}

/// The Markdown of a feed: `# title`, its description, then one list item per
/// entry (see [`entry_item`]).
fn render(feed: &Feed<'_>) -> Result<Rendered, FetchError> {
    let title = one_line(&feed.title);
    if title.is_empty() && feed.entries == 0 {
        return Err(FetchError::no_extractable_content());
    }
    let mut out = String::new();
    if !title.is_empty() {
        out.push_str(&format!("# {}\n\n", escape_inline(&title, false, false)));
    }
    let description = text_of(&feed.description, true, feed.base);
    if !description.is_empty() {
        out.push_str(&description);
        out.push_str("\n\n");
    }
    out.push_str(&feed.items);
    let markdown = format!("{}\n", out.trim_end());
    Ok(Rendered {
        document: ExtractedDocument {
            markdown,
            title: (!title.is_empty()).then_some(title),
            language: None,
            page_type: None,
            page_starts: Vec::new(),
        },
        cut: feed.cut,
    })
}

/// One entry as a list item: `[title](link)` (the link kept only for http(s)
/// and mailto, FR-WF-13d), the date, and the summary (or the content when there
/// is no summary) on continuation lines.
fn entry_item(entry: &Entry, base: &Url) -> String {
    let title = one_line(&entry.title);
    let link = one_line(&entry.link);
    let link = (!link.is_empty())
        .then(|| link_url(base, &link))
        .flatten()
        .map(|url| destination(url.as_str()));
    let head = match (title.is_empty(), link) {
        (false, Some(link)) => format!("[{}]({link})", escape_inline(&title, false, true)),
        // The destination as an autolink: it holds no space, `<` or `>`.
        (true, Some(link)) if link.starts_with('<') => link,
        (true, Some(link)) => format!("<{link}>"),
        // After the list marker, text starts a block: line-start escaping.
        (false, None) => escape_inline(&title, true, false),
        (true, None) => "(untitled)".to_owned(),
    };
    let mut item = format!("- {head}\n");
    let date = one_line(&entry.date);
    if !date.is_empty() {
        item.push_str(&format!("  {}\n", escape_inline(&date, true, false)));
    }
    let summary = if entry.summary.trim().is_empty() {
        text_of(&entry.content, entry.content_is_html, base)
    } else {
        text_of(&entry.summary, entry.summary_is_html, base)
    };
    if !summary.is_empty() {
        item.push_str(&format!("  {summary}\n"));
    }
    item
}

/// A summary as one line of Markdown: HTML through the SRD extraction, plain
/// text escaped as the HTML path escapes text, whitespace collapsed.
fn text_of(text: &str, html: bool, base: &Url) -> String {
    if text.trim().is_empty() {
        return String::new();
    }
    if html {
        match extract::extract_html(text, base, ExtractionMode::Srd) {
            Ok(extraction) => one_line(&extraction.document.markdown),
            Err(_) => String::new(),
        }
    } else {
        escape_inline(&one_line(text), true, false)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("https://blog.example/feed.xml").unwrap()
    }

    #[test]
    fn rss_2_channel_and_items() {
        let rss = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Example &amp; Co</title>
  <link>https://blog.example/</link>
  <description>Notes from [us]</description>
  <item>
    <title>First post</title>
    <link>/posts/1</link>
    <pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
    <description>&lt;p&gt;Hello &lt;a href="/x"&gt;there&lt;/a&gt;&lt;/p&gt;</description>
  </item>
  <item>
    <title><![CDATA[Second [draft]]]></title>
    <content:encoded><![CDATA[<p>Full <b>text</b></p>]]></content:encoded>
  </item>
</channel>
</rss>"#;
        let document = to_markdown(rss, &base()).unwrap().document;
        assert_eq!(document.title.as_deref(), Some("Example & Co"));
        assert_eq!(
            document.markdown,
            "# Example & Co\n\nNotes from \\[us]\n\n\
             - [First post](https://blog.example/posts/1)\n  Tue, 02 Jan 2024 10:00:00 GMT\n  \
             Hello [there](https://blog.example/x)\n\
             - Second \\[draft]\n  Full **text**\n"
        );
    }

    #[test]
    fn atom_entries_with_links_and_text_constructs() {
        let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="text">Atom &lt;feed&gt;</title>
  <link rel="self" href="https://blog.example/atom"/>
  <entry>
    <title>One</title>
    <link rel="edit" href="/edit/1"/>
    <link href="https://blog.example/1"/>
    <updated>2024-01-02T10:00:00Z</updated>
    <summary>a &lt;b&gt; literal</summary>
  </entry>
  <entry>
    <link rel="alternate" href="two.html"/>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Two body</div></content>
  </entry>
</feed>"#;
        let document = to_markdown(atom, &base()).unwrap().document;
        assert_eq!(
            document.markdown,
            "# Atom \\<feed>\n\n\
             - [One](https://blog.example/1)\n  2024-01-02T10:00:00Z\n  a \\<b> literal\n\
             - <https://blog.example/two.html>\n  Two body\n"
        );
    }

    #[test]
    fn broken_and_empty_feeds_are_errors() {
        let broken = to_markdown("<rss><channel><title>x</channel></rss>", &base()).unwrap_err();
        assert_eq!(broken.details_json()["reason"], "feed_malformed");
        assert_eq!(broken.details_json()["error"], "unreadable_feed");
        let cut = to_markdown("<rss><channel><title>x</title>", &base()).unwrap_err();
        assert_eq!(cut.details_json()["reason"], "feed_malformed");
        let entity = to_markdown("<rss><title>&nbsp;</title></rss>", &base()).unwrap_err();
        assert_eq!(entity.details_json()["reason"], "feed_malformed");
        let empty = to_markdown("<rss><channel/></rss>", &base()).unwrap_err();
        assert_eq!(empty.details_json()["error"], "no_extractable_content");
    }

    #[test]
    fn deep_nesting_is_read_without_a_deep_stack() {
        let deep = format!(
            "<rss><item><title>t</title>{}{}</item></rss>",
            "<a>".repeat(10_000),
            "</a>".repeat(10_000)
        );
        assert_eq!(
            to_markdown(&deep, &base()).unwrap().document.markdown,
            "- t\n".to_owned()
        );
    }

    fn items(entries: &str) -> String {
        let rss = format!("<rss><channel><title>T</title>{entries}</channel></rss>");
        let markdown = to_markdown(&rss, &base()).unwrap().document.markdown;
        markdown.strip_prefix("# T\n\n").unwrap().to_owned()
    }

    #[test]
    fn entry_links_follow_the_html_paths_rules() {
        for (link, item) in [
            ("/p?q=(1", "- [t](<https://blog.example/p?q=(1>)\n"),
            ("mailto:a@b.example", "- [t](mailto:a@b.example)\n"),
            // Any other scheme: the title alone, as text.
            ("javascript:alert(1)", "- t\n"),
            ("JAVASCRIPT:alert(1)", "- t\n"),
            ("data:text/html;base64,PHNjcmlwdD4=", "- t\n"),
            ("file:///etc/passwd", "- t\n"),
            // A target crafted to close `<...>` and add a link of its own.
            (
                "mailto:x>) [evil](https://evil.example/",
                "- [t](<mailto:x%3E)%20[evil](https://evil.example/>)\n",
            ),
        ] {
            let entry = format!("<item><title>t</title><link>{}</link></item>", xml(link));
            assert_eq!(items(&entry), item, "{link}");
        }
        // With no title, the link is an autolink, if kept.
        assert_eq!(
            items("<item><link>mailto:a b&gt;c</link></item>"),
            "- <mailto:a%20b%3Ec>\n"
        );
        assert_eq!(
            items("<item><link>javascript:alert(1)</link></item>"),
            "- (untitled)\n"
        );
    }

    #[test]
    fn titles_and_plain_summaries_are_text_never_markup() {
        let entry = "<item><title>&lt;img src=x onerror=alert(1)&gt; [a](javascript:b) ]</title>\
            <link>https://blog.example/1</link>\
            <summary>&lt;script&gt;x&lt;/script&gt; *y* [z](javascript:w)</summary></item>";
        assert_eq!(
            items(entry),
            "- [\\<img src=x onerror=alert(1)> \\[a\\](javascript:b) \\]](https://blog.example/1)\n  \
             \\<script>x\\</script> \\*y\\* \\[z](javascript:w)\n"
        );
        // HTML summaries go through the extraction: no markup, no script.
        let entry = "<item><title># x</title><description>&lt;p&gt;&lt;img src=x onerror=alert(1)&gt;\
            &lt;script&gt;alert(1)&lt;/script&gt;&lt;a href='javascript:x'&gt;y&lt;/a&gt;&lt;/p&gt;</description></item>";
        assert_eq!(items(entry), "- \\# x\n  y\n");
    }

    /// `text` escaped for an XML element's content.
    fn xml(text: &str) -> String {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    }

    #[test]
    fn items_stop_at_the_size_cap_and_say_so() {
        let entry = format!("<item><title>{}</title></item>", "x".repeat(1 << 16));
        let count = MAX_RENDERED_BYTES / (1 << 16) + 8;
        let rss = format!("<rss>{}</rss>", entry.repeat(count));
        let rendered = to_markdown(&rss, &base()).unwrap();
        assert!(rendered.cut);
        let markdown = rendered.document.markdown;
        assert!(
            markdown.len() <= MAX_RENDERED_BYTES + (1 << 16) + 8,
            "{}",
            markdown.len()
        );
        assert!(markdown.len() >= MAX_RENDERED_BYTES);
        // Still checked past the cap.
        let broken = format!("<rss>{}<x></rss>", entry.repeat(count));
        assert!(to_markdown(&broken, &base()).is_err());
    }

    #[test]
    fn root_detection() {
        assert!(is_feed(
            b"<?xml version='1.0'?><!-- x --><rss version='2.0'>"
        ));
        assert!(is_feed(
            b"\xEF\xBB\xBF<feed xmlns='http://www.w3.org/2005/Atom'/>"
        ));
        assert!(is_feed(b"<rdf:RDF xmlns:rdf='x'>"));
        assert!(!is_feed(b"<html><body/></html>"));
        assert!(!is_feed(b"text <rss>"));
        assert!(!is_feed(b""));
    }

    #[test]
    fn an_ended_call_stops_the_loop() {
        let rss = format!(
            "<rss>{}</rss>",
            "<item><title>t</title></item>".repeat(10_000)
        );
        let (budget, end) = crate::budget::ReadBudget::new(None, 1_000);
        drop(end);
        let answer = budget.run(|| {
            let stopped = parse(&rss, &base()).unwrap_err();
            assert_eq!(stopped, "the read was interrupted");
            to_markdown(&rss, &base())
        });
        assert!(answer.is_err());
    }
}
