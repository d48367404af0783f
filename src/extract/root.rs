//! Extraction root selection (FR-WF-EXT-ROOT-01, EXT-EMPTY-01/02) and the document
//! facts found on the same walk: title (FR-WF-13e), language (13f), `<base href>`
//! (13d1).

use ego_tree::{NodeId, NodeRef};
use url::Url;

use super::dom::{Document, Node};
use super::element::Attr;
use super::element::{self, Element, Tag, has_class_token};
use super::walk::{Step, Visitor, walk};
use super::writer::is_html_space;

/// What one walk of the whole document finds.
#[derive(Debug, Default)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Survey {
    /// Root candidates in EXT-ROOT-01 order: first `<main>`, first `<article>`,
    /// first `role="main"`, first `id="content"`, first `class~="content"`, `<body>`.
    pub candidates: [Option<NodeId>; 6],
    /// The first HTML `<title>`.
    pub title: Option<NodeId>,
    /// The first `<h1>`.
    pub h1: Option<NodeId>,
    /// The first `<base>` with an `href`.
    pub base: Option<NodeId>,
    /// `<html lang>`.
    pub language: Option<String>,
}

/// Walks the document once, in document order, recording the first element of each
/// kind. Template contents (inert) and `<svg>` are not part of the document's
/// content and are not searched.
///
/// Root candidates are searched in the cleaned tree: a candidate inside a removed
/// (boilerplate) subtree, or removed itself, does not count. FR-WF-13 orders the
/// steps "remove boilerplate" (1-3), then "extract main content using root
/// selection" (4), so selection sees only what removal left; a `<main>` inside an
/// `<aside>` is gone before anyone asks for "the first `<main>`", and
/// `<aside><article>Teaser</article></aside><article>Story</article>` selects
/// `Story` (our reading of FR-WF-13 with EXT-ROOT-01). The document facts (title,
/// `<h1>`, `<base>`, language) are not content and are searched everywhere: 13e,
/// 13d1 and 13f name "the first" element of the document, and a site's `<h1>`
/// often sits in its `<header>`.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn survey(doc: &Document) -> Survey {
    let mut survey = Survey::default();
    let mut skip_until: Option<NodeId> = None;
    let mut removed_until: Option<NodeId> = None;
    for edge in doc.root().traverse() {
        let ego_tree::iter::Edge::Open(node) = edge else {
            if let ego_tree::iter::Edge::Close(node) = edge {
                if skip_until == Some(node.id()) {
                    skip_until = None;
                }
                if removed_until == Some(node.id()) {
                    removed_until = None;
                }
            }
            continue;
        };
        if skip_until.is_some() {
            continue;
        }
        let Some(element) = node.value().element() else {
            continue;
        };
        if element.removed && removed_until.is_none() {
            removed_until = Some(node.id());
        }
        let cleaned = removed_until.is_none();
        let id = Some(node.id());
        let slot = |i: usize, s: &mut Survey| {
            if cleaned && s.candidates[i].is_none() {
                s.candidates[i] = id;
            }
        };
        match element.tag {
            Tag::Skip => {
                skip_until = Some(node.id());
                continue;
            }
            Tag::Main => slot(0, &mut survey),
            Tag::Article => slot(1, &mut survey),
            Tag::Body => slot(5, &mut survey),
            Tag::Title if survey.title.is_none() => survey.title = id,
            Tag::Heading(1) if survey.h1.is_none() => survey.h1 = id,
            Tag::Base if survey.base.is_none() && element.has_attr(Attr::Href) => {
                survey.base = id;
            }
            Tag::Html if survey.language.is_none() => {
                survey.language = element
                    .attr(Attr::Lang)
                    .filter(|lang| !lang.trim().is_empty())
                    .map(str::to_owned);
            }
            _ => {}
        }
        if element
            .attr(Attr::Role)
            .is_some_and(|role| has_class_token(role, "main"))
        {
            slot(2, &mut survey);
        }
        if element
            .attr(Attr::Id)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("content"))
        {
            slot(3, &mut survey);
        }
        if element.classes.content {
            slot(4, &mut survey);
        }
    }
    survey
}

/// The first candidate that is not empty after boilerplate removal, or `None`
/// when every one is (EXT-EMPTY-02).
///
/// Each check stops at the first visible character, and there are at most six, so
/// selection is linear in the document however the candidates nest.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn select_root<'a>(doc: &'a Document, survey: &Survey) -> Option<NodeRef<'a, Node>> {
    survey
        .candidates
        .iter()
        .flatten()
        .filter_map(|&id| doc.tree.get(id))
        .find(|node| !is_empty(*node))
}

/// EXT-EMPTY-01: a root is empty when, with boilerplate removed, it holds no text
/// node with a non-whitespace character. An image counts when its `alt` text is not
/// blank (it renders as `![alt](...)`; "images without alt text" are what the SRD
/// calls empty). What the converter never renders (`<svg>`, `<template>`, form
/// selects) does not count either, so "not empty" means "renders some text".
pub(crate) fn is_empty(root: NodeRef<'_, Node>) -> bool {
    // Removed or skipped itself, or inside something removed or skipped.
    if root
        .ancestors()
        .chain(std::iter::once(root))
        .any(|n| n.value().element().is_some_and(|e| !e.is_rendered()))
    {
        return true;
    }
    walk(root, &mut FirstVisible)
}

/// Stops at the first thing that renders text (EXT-EMPTY-01).
struct FirstVisible;

impl<'a> Visitor<'a> for FirstVisible {
    fn enter(&mut self, node: NodeRef<'a, Node>) -> Step {
        match node.value() {
            Node::Text(text) if text.chars().any(|c| !c.is_whitespace()) => Step::Stop,
            Node::Element(e) if !e.is_rendered() => Step::Over,
            Node::Element(e) if e.tag == Tag::Image => {
                if e.attr(Attr::Alt)
                    .is_some_and(|alt| !alt.trim_matches(is_html_space).is_empty())
                {
                    Step::Stop
                } else {
                    Step::Over
                }
            }
            Node::Element(_) | Node::Document => Step::Into,
            Node::Text(_) | Node::Other => Step::Over,
        }
    }
}

/// The text of an element's subtree, scripts, styles and skipped elements left
/// out, whitespace collapsed and trimmed (FR-WF-13e's normalisation: Unicode
/// whitespace runs become one space).
pub(crate) fn normalized_text(root: NodeRef<'_, Node>) -> String {
    collapsed_text(root, |e| {
        e.tag == Tag::Skip || element::is_script_or_style(&e.name.local)
    })
}

/// The text of `root` with whitespace runs collapsed to single spaces, leaving
/// out the subtrees of elements `skip` names.
pub(crate) fn collapsed_text(root: NodeRef<'_, Node>, skip: impl Fn(&Element) -> bool) -> String {
    let mut out = String::new();
    let mut skip_until: Option<NodeId> = None;
    for edge in root.traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) if skip_until.is_none() => match node.value() {
                Node::Text(text) => {
                    for word in text.split_whitespace() {
                        if !out.is_empty() {
                            out.push(' ');
                        }
                        out.push_str(word);
                    }
                }
                Node::Element(e) if skip(e) => skip_until = Some(node.id()),
                _ => {}
            },
            ego_tree::iter::Edge::Close(node) if skip_until == Some(node.id()) => {
                skip_until = None;
            }
            _ => {}
        }
    }
    out
}

/// FR-WF-13d1: the `<base href>` when it resolves (against the final URL, as HTML
/// resolves a relative base) to an `http(s)` URL, else the final URL.
pub(crate) fn base_url(doc: &Document, survey: &Survey, final_url: &Url) -> Url {
    survey
        .base
        .and_then(|id| doc.tree.get(id))
        .and_then(|node| node.value().element()?.attr(Attr::Href).map(str::trim))
        .and_then(|href| final_url.join(href).ok())
        .filter(|url| matches!(url.scheme(), "http" | "https"))
        .unwrap_or_else(|| final_url.clone())
}
