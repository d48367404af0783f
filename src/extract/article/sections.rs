//! `<header>` elements that are sections, not the page's header.
//!
//! FR-WF-13 removes every `<header>` by name, and article and auto mode start
//! from that parse. Some site builders (Webflow's `<header
//! class="section_blog-post-content">`, a `<header class="rich-text">`) wrap a
//! whole post in one: the article, and every reading of it, then comes back with
//! a sidebar or nothing. A page's real header holds a logo, a menu and perhaps a
//! line or two of standfirst; a `<header>` with many paragraphs of prose and no
//! navigation holds the content itself. The SRD reading is unchanged.
//!
//! Lists of cards do the same on a smaller scale: an `<article>` per story
//! whose title and teaser sit in its `<header>` (a topic page's river of
//! stories). Such a header is the card; the whole-page reading puts it back.

use ego_tree::NodeId;
use ego_tree::iter::Edge;
use html5ever::local_name;

use super::super::dom::{Document, Node};
use super::super::element;

/// Paragraphs of prose a `<header>` holds, at least, to be read as a section.
/// A page header's standfirst or promo rarely runs past three; on WCXB's dev
/// split five pages (five sites) wrap a post's body in a `<header>`, and any
/// bound from four to eight reads the same pages.
const MIN_PARAGRAPHS: usize = 5;

/// Characters a paragraph holds, at least, to count as prose.
const MIN_PARAGRAPH_CHARS: usize = 80;

/// The `<header>` elements under `body` FR-WF-13 removed by name alone that hold
/// a section's prose ([`MIN_PARAGRAPHS`], no `<nav>`): what article scoring and
/// the whole-page reading put back before reading.
pub(crate) fn prose_headers(doc: &Document, body: NodeId) -> Vec<NodeId> {
    doc.elements_under(body, |node, e| removed_by_name(e) && holds_prose(node))
}

/// A `<header>` FR-WF-13 removed for its name alone: not hidden, not named
/// like boilerplate.
fn removed_by_name(e: &element::Element) -> bool {
    e.removed
        && e.name.local == local_name!("header")
        && !element::is_hidden_or_boilerplate_named(e)
}

/// Cards of a list whose `<header>` holds them, at least: one is an article's
/// own header (title and byline), which its text follows.
const MIN_CARDS: usize = 3;

/// The `<header>` elements under `body` FR-WF-13 removed by name alone that are
/// a card's content: each a child of an `<article>` holding four fifths or more
/// of its text, when the page has [`MIN_CARDS`] such cards or more.
pub(crate) fn card_headers(doc: &Document, body: NodeId) -> Vec<NodeId> {
    let cards = doc.elements_under(body, |node, e| {
        removed_by_name(e)
            && node.parent().is_some_and(|article| {
                article
                    .value()
                    .element()
                    .is_some_and(|a| a.name.local == local_name!("article"))
                    && {
                        let header_chars = text_chars(node);
                        header_chars > 0 && header_chars * 5 >= text_chars(article) * 4
                    }
            })
    });
    if cards.len() >= MIN_CARDS {
        cards
    } else {
        Vec::new()
    }
}

/// The characters of the text under `node`, whitespace aside.
fn text_chars(node: ego_tree::NodeRef<'_, Node>) -> usize {
    node.descendants()
        .filter_map(|d| match d.value() {
            Node::Text(text) => Some(text.chars().filter(|c| !c.is_whitespace()).count()),
            _ => None,
        })
        .sum()
}

/// Whether `header` holds [`MIN_PARAGRAPHS`] paragraphs of prose in what it
/// shows, and no navigation.
fn holds_prose(header: ego_tree::NodeRef<'_, Node>) -> bool {
    let mut paragraphs = 0;
    // The paragraph being read and its characters so far; removed subtrees
    // (other than the header itself) are skipped.
    let mut open: Option<(NodeId, usize)> = None;
    let mut skip_until: Option<NodeId> = None;
    for edge in header.traverse() {
        match edge {
            Edge::Open(node) if skip_until.is_none() => match node.value() {
                Node::Element(e) if e.name.local == local_name!("nav") => return false,
                Node::Element(e) if node.id() != header.id() && e.removed => {
                    skip_until = Some(node.id());
                }
                Node::Element(e) if e.name.local == local_name!("p") && open.is_none() => {
                    open = Some((node.id(), 0));
                }
                Node::Text(text) => {
                    if let Some((_, chars)) = open.as_mut() {
                        *chars += text.trim().chars().count();
                    }
                }
                _ => {}
            },
            Edge::Close(node) if skip_until == Some(node.id()) => skip_until = None,
            Edge::Close(node) if open.is_some_and(|(id, _)| id == node.id()) => {
                if open.is_some_and(|(_, chars)| chars >= MIN_PARAGRAPH_CHARS) {
                    paragraphs += 1;
                    if paragraphs >= MIN_PARAGRAPHS {
                        return true;
                    }
                }
                open = None;
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;
    use crate::extract::dom::{self, Scripting};
    use crate::extract::{extract_html, root};
    use crate::vocabulary::ExtractionMode;

    const PARAGRAPH: &str = "<p>Engineers said the dikes held where they had been rebuilt after 2013, and failed where the work had been postponed.</p>";

    fn page(header: &str) -> String {
        format!(
            "<html><body><header class=\"site\"><a href=\"/\">Daily</a></header>\
             <main>{header}</main><aside><p>{}</p></aside></body></html>",
            "Subscribe to our newsletter for the week's best reads, delivered every Friday morning to your inbox."
        )
    }

    fn headers_read(html: &str) -> usize {
        let doc = dom::parse(html, Scripting::On);
        let body = root::survey(&doc).candidates[5].expect("a body");
        prose_headers(&doc, body).len()
    }

    #[test]
    fn a_header_holding_a_post_is_read_as_a_section() {
        let post = format!(
            "<header class=\"section_blog-post-content\"><h2>Why the dikes held</h2>{}</header>",
            PARAGRAPH.repeat(MIN_PARAGRAPHS)
        );
        let html = page(&post);
        assert_eq!(headers_read(&html), 1);
        let url = Url::parse("https://example.com/blog/dikes").unwrap();
        for mode in [ExtractionMode::Article, ExtractionMode::Auto] {
            let markdown = extract_html(&html, &url, mode).unwrap().document.markdown;
            assert!(
                markdown.contains("Why the dikes held"),
                "{mode:?}: {markdown}"
            );
            assert!(markdown.contains("Engineers said"), "{mode:?}: {markdown}");
        }
        // The SRD removes every `<header>` by name (FR-WF-13), this one too.
        let srd = extract_html(&html, &url, ExtractionMode::Srd).map(|e| e.document.markdown);
        assert!(srd.is_err() || !srd.unwrap().contains("Engineers said"));
    }

    #[test]
    fn headers_holding_a_list_of_cards_are_read_and_an_articles_own_is_not() {
        let card = |n: usize| {
            format!(
                "<article><img src=\"/{n}.jpg\"><header><h2><a href=\"/s/{n}\">Story {n}</a></h2>\
                 <p>Teaser of story {n}, a line or two.</p></header></article>"
            )
        };
        let river = |cards: usize| (1..=cards).map(card).collect::<String>();
        let count = |html: &str| {
            let doc = dom::parse(html, Scripting::On);
            card_headers(&doc, root::survey(&doc).candidates[5].expect("a body")).len()
        };
        assert_eq!(count(&page(&river(MIN_CARDS))), MIN_CARDS);
        assert_eq!(count(&page(&river(MIN_CARDS - 1))), 0);
        // An article's header (title, byline) before its text is not its card.
        let story =
            format!("<article><header><h1>Why the dikes held</h1></header>{PARAGRAPH}</article>");
        assert_eq!(count(&page(&story.repeat(MIN_CARDS))), 0);
        let url = Url::parse("https://example.com/topic/dikes").unwrap();
        let markdown = crate::extract::auto::extract_as(
            &page(&format!("<h1>Dikes</h1>{PARAGRAPH}{}", river(4))),
            &url,
            crate::vocabulary::PageType::Listing,
        )
        .unwrap()
        .markdown;
        assert!(markdown.contains("Teaser of story 4"), "{markdown}");
    }

    #[test]
    fn a_page_header_stays_out() {
        let short = format!("<header>{}</header>", PARAGRAPH.repeat(MIN_PARAGRAPHS - 1));
        let with_menu = format!(
            "<header><nav><a href=\"/a\">World</a></nav>{}</header>",
            PARAGRAPH.repeat(MIN_PARAGRAPHS)
        );
        let hidden = format!(
            "<header hidden>{}</header>",
            PARAGRAPH.repeat(MIN_PARAGRAPHS)
        );
        let short_paragraphs = format!("<header>{}</header>", "<p>Read more</p>".repeat(20));
        for header in [short, with_menu, hidden, short_paragraphs] {
            assert_eq!(headers_read(&page(&header)), 0, "{header}");
        }
    }
}
