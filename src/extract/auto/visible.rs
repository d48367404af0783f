//! The last extraction of auto mode: the visible text of the body, for a
//! page whose every other extraction came back empty (all of its text sits in what
//! FR-WF-13 calls boilerplate: a `<header>`, a `<nav>`, a `class="menu"`).
//! Auto mode never answers `extraction_failed` for a page that shows text.
//!
//! Only what a reader sees is kept: `hidden` and `aria-hidden` subtrees, scripts,
//! styles, `<noscript>` (raw text with scripting on) and elements never rendered
//! stay out, so hidden text (a prompt-injection channel) never surfaces here either.

use url::Url;

use super::super::dom;
use super::super::element::{self, Tag};
use super::super::{markdown, normalize_whitespace, root, title};
use crate::error::FetchError;
use crate::extract::element::{Attr, Element};
use crate::vocabulary::ExtractedDocument;

/// The body's visible text as Markdown; `no_extractable_content` when there is
/// none.
pub(crate) fn extract(html: &str, final_url: &Url) -> Result<ExtractedDocument, FetchError> {
    let mut doc = dom::parse(html, dom::Scripting::On);
    let ids = doc.elements_under(doc.root().id(), |_, e| e.removed && !is_hidden(e));
    doc.restore_all(&ids);
    let survey = root::survey(&doc);
    let body = survey.candidates[5]
        .and_then(|id| doc.tree.get(id))
        .filter(|body| !root::is_empty(*body))
        .ok_or_else(FetchError::no_extractable_content)?;
    let base = root::base_url(&doc, &survey, final_url);
    let markdown = normalize_whitespace(&markdown::convert(body, &base));
    if markdown.is_empty() {
        return Err(FetchError::no_extractable_content());
    }
    Ok(ExtractedDocument {
        markdown,
        title: title(&doc, &survey),
        language: survey.language.clone(),
        page_type: None,
        page_starts: Vec::new(),
    })
}

/// Whether an element hides its subtree from a reader (not merely boilerplate by
/// name): `hidden`, `aria-hidden="true"`, a script or style, `<noscript>`.
pub(crate) fn is_hidden(element: &Element) -> bool {
    element.has_attr(Attr::Hidden)
        || element
            .attr(Attr::AriaHidden)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || element::is_script_or_style(&element.name.local)
        || element.name.local == html5ever::local_name!("noscript")
        || element.tag == Tag::Skip
}
