//! React's streamed server rendering, put in place as a browser's scripts put it.
//!
//! A page rendered by React 18 or later in streaming mode sends each part that
//! was not ready in the first flush later in the same response, as a hidden
//! segment at the end of the body (`<div hidden id="S:3">`), and marks where it
//! belongs with an empty template (`<template id="B:3">` for a suspense
//! boundary, `<template id="P:3">` for a placeholder). An inline script then
//! moves each segment to its template. Without that step the article of such a
//! page (Next.js blogs, news sites, product pages) is hidden text, which every
//! reading removes: it came back with its skeleton ("Loading paragraph...") or
//! nothing.
//!
//! The readings past the SRD (article and auto mode) read the page as a browser
//! with scripts shows it: each segment's content moves to its template, so it is
//! read in its place. A segment without its template stays hidden, as it would
//! in a browser, and the SRD reading is unchanged (it never sees a moved node).

use std::collections::HashMap;

use ego_tree::NodeId;
use html5ever::local_name;

use super::{Document, Node};
use crate::extract::element::Attr;

/// Whether a template's id is one React's streamed rendering gives: `B:n` (a
/// suspense boundary) or `P:n` (a placeholder). The parser notes such a
/// template, so the tree is walked for segments only on the pages that have one.
pub(crate) fn is_template_id(id: &str) -> bool {
    id.starts_with("B:") || id.starts_with("P:")
}

/// Moves the content of every hidden segment `S:n` before its template (`B:n`
/// or `P:n`), in document order (a segment may hold the template of a later
/// one). A template inside its own segment is left alone: the move would put a
/// node inside itself.
pub(crate) fn place_segments(doc: &mut Document) {
    let mut templates: HashMap<&str, NodeId> = HashMap::new();
    let mut segments: Vec<(NodeId, &str)> = Vec::new();
    for node in doc.descendants() {
        let Some(element) = node.value().element() else {
            continue;
        };
        let Some(id) = element.attr(Attr::Id) else {
            continue;
        };
        if element.name.local == local_name!("template") {
            if is_template_id(id) {
                templates.entry(&id[2..]).or_insert(node.id());
            }
        } else if element.name.local == local_name!("div")
            && element.has_attr(Attr::Hidden)
            && node.parent().is_some_and(is_body)
            && let Some(n) = id.strip_prefix("S:")
        {
            segments.push((node.id(), n));
        }
    }
    let moves: Vec<(NodeId, NodeId)> = segments
        .into_iter()
        .filter_map(|(segment, n)| templates.get(n).map(|&template| (segment, template)))
        .collect();
    for (segment, template) in moves {
        move_children_before(doc, segment, template);
    }
}

fn is_body(node: ego_tree::NodeRef<'_, Node>) -> bool {
    node.value()
        .element()
        .is_some_and(|e| e.name.local == local_name!("body"))
}

/// Moves `segment`'s children before `template`, unless `template` is inside
/// `segment` or has no parent.
fn move_children_before(doc: &mut Document, segment: NodeId, template: NodeId) {
    let Some(target) = doc.tree.get(template) else {
        return;
    };
    if target.parent().is_none() || target.ancestors().any(|a| a.id() == segment) {
        return;
    }
    let children: Vec<NodeId> = doc
        .tree
        .get(segment)
        .map(|s| s.children().map(|c| c.id()).collect())
        .unwrap_or_default();
    for child in children {
        if let Some(mut target) = doc.tree.get_mut(template) {
            target.insert_id_before(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use crate::extract::extract_html;
    use crate::vocabulary::ExtractionMode;

    const PROSE: &str = "Engineers said the dikes held where they had been rebuilt after 2013, and failed where the work had been postponed.";

    fn read(html: &str, mode: ExtractionMode) -> String {
        let url = Url::parse("https://example.com/blog/dikes").unwrap();
        extract_html(html, &url, mode)
            .map(|e| e.document.markdown)
            .unwrap_or_default()
    }

    const TEMPLATE: &str = "<template id=\"B:0\"></template>";

    /// A shell whose article streams in later: its opening paragraph,
    /// `template` (the boundary's), a closing paragraph, then `segments`.
    fn page(template: &str, segments: &str) -> String {
        format!(
            "<html><body><main><h1>Dikes</h1><p>OPENING {PROSE}</p>{template}\
             <p>CLOSING {PROSE}</p></main>{segments}</body></html>"
        )
    }

    #[test]
    fn a_streamed_segment_is_read_in_its_place() {
        let html = page(
            TEMPLATE,
            &format!(
                "<div hidden id=\"S:0\"><p>STREAMED {PROSE}</p><template id=\"P:1\"></template></div>\
             <div hidden id=\"S:1\"><p>NESTED {PROSE}</p></div>"
            ),
        );
        for mode in [ExtractionMode::Article, ExtractionMode::Auto] {
            let markdown = read(&html, mode);
            let at = |text: &str| {
                markdown
                    .find(text)
                    .unwrap_or_else(|| panic!("{mode:?}: no {text} in {markdown}"))
            };
            assert!(at("OPENING") < at("STREAMED"), "{mode:?}: {markdown}");
            assert!(at("STREAMED") < at("NESTED"), "{mode:?}: {markdown}");
            assert!(at("NESTED") < at("CLOSING"), "{mode:?}: {markdown}");
        }
        // The SRD reading keeps every hidden element out (FR-WF-13 step 2).
        assert!(!read(&html, ExtractionMode::Srd).contains("STREAMED"));
    }

    #[test]
    fn a_hidden_block_that_is_no_streamed_segment_stays_hidden() {
        for (template, segments) in [
            // No template of its number.
            (
                TEMPLATE,
                format!("<div hidden id=\"S:7\"><p>HIDDEN {PROSE}</p></div>"),
            ),
            // Not where React streams segments (a child of the body).
            (
                TEMPLATE,
                format!("<section><div hidden id=\"S:0\"><p>HIDDEN {PROSE}</p></div></section>"),
            ),
            // Its template inside itself: moving it would nest it in itself.
            (
                "",
                format!("<div hidden id=\"S:0\"><p>HIDDEN {PROSE}</p><div>{TEMPLATE}</div></div>"),
            ),
            // Hidden inside the segment.
            (
                TEMPLATE,
                format!("<div hidden id=\"S:0\"><p hidden>HIDDEN {PROSE}</p></div>"),
            ),
        ] {
            let html = page(template, &segments);
            for mode in [ExtractionMode::Article, ExtractionMode::Auto] {
                let markdown = read(&html, mode);
                assert!(markdown.contains("OPENING"), "{mode:?}: {markdown}");
                assert!(
                    !markdown.contains("HIDDEN"),
                    "{mode:?} {segments}: {markdown}"
                );
            }
        }
    }
}
