//! The whole readable page minus its furniture: what auto mode reads on
//! pages whose content is spread over many blocks (service and landing pages,
//! documentation, listings, products), where one scored container would lose most
//! of it.
//!
//! It starts from the SRD's extraction (the same parse, boilerplate removal and root
//! selection, FR-WF-13, but for a `<header>` holding a section's prose or a
//! list's card (`sections`); a root
//! holding less than half of the body's text widens to its lowest ancestor that
//! holds half), then also removes, anywhere in the body:
//!
//! * what article mode never reads: images and their captions, elements an inline
//!   style hides (but for panels a click opens: tabs, accordions, FAQ answers),
//!   and elements whose class, id or role names page furniture
//!   (Readability's unlikely candidates: menus, breadcrumbs, banners, pagination,
//!   share bars, cookie and newsletter pop-ups), but not a landing page's hero
//!   (`hero-banner`: its opening section) nor, inside the content root, a
//!   section's header (`section-header`: its heading and lede);
//! * form controls (`<button>`, `<label>`, `<option>`) and links styled as
//!   buttons with a few words of text: calls to action and filters, not content;
//! * on product pages, repeated cards that each link elsewhere (other
//!   products: recommendations, "also viewed", variations);
//! * navigation-like link lists: lists and link bars whose every entry is one short
//!   link (menus, facets, tag clouds, footers without a `<footer>`).

use std::collections::HashMap;

use ego_tree::{NodeId, NodeRef};
use html5ever::local_name;
use url::Url;

use super::super::article::Strictness;
use super::super::article::measure::{Measured, measure};
use super::super::article::names::{contains_ignoring_case, style_hides, unseen_elements};
use super::super::article::sections::{card_headers, prose_headers};
use super::super::dom::{Document, Node};
use super::super::element::{Attr, Element, Tag};
use super::super::root::normalized_text;
use super::super::{markdown, normalize_whitespace, root, title};
use super::{blocks, cards, repeat};
use crate::vocabulary::{ExtractedDocument, PageType};

/// The strict pass's reading of names: unlikely candidates removed.
const STRICT: Strictness = Strictness {
    strip_unlikely: true,
    weigh_classes: true,
    prune: true,
};

/// What the whole-page extraction removes besides the SRD's boilerplate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Furniture {
    /// Navigation-like link lists (not on documentation pages, whose lists of
    /// links are often the reference itself).
    pub(crate) link_lists: bool,
    /// Repeated cards that link elsewhere (on a product page: other products).
    pub(crate) link_cards: bool,
    /// Card grids read as lists, one item per card (listings and collections).
    pub(crate) cards_as_items: bool,
    /// Sections under a heading that names recommendations ("Customers also
    /// viewed", "Similar items"): other products, beside a product.
    pub(crate) recommendations: bool,
    /// The page's type, as the block filter reads it.
    pub(crate) page_type: PageType,
}

impl Furniture {
    /// What a page of `page_type` reads without.
    pub(crate) fn for_page(page_type: PageType) -> Furniture {
        Furniture {
            link_lists: page_type != PageType::Documentation,
            link_cards: page_type == PageType::Product,
            cards_as_items: page_type == PageType::Listing,
            recommendations: page_type == PageType::Product,
            page_type,
        }
    }
}

/// The page's content as Markdown, or `None` when nothing is left: the rules'
/// removals ([`clear`]), then the learned block filter's (`blocks`).
pub(crate) fn extract(
    doc: &mut Document,
    final_url: &Url,
    furniture: Furniture,
) -> Option<ExtractedDocument> {
    let cleared = clear(doc, furniture)?;
    let measured = measure(doc, cleared.body);
    let root = widen(&measured, root::select_root(doc, &cleared.survey)?.id());
    let mut context = cleared.context(doc, furniture);
    context.within = Some(root);
    let boilerplate = blocks::boilerplate(doc, &measured, &context, blocks::Filter::On);
    doc.remove_all(&boilerplate);
    let root = doc.tree.get(root)?;
    let base = root::base_url(doc, &cleared.survey, final_url);
    let markdown = normalize_whitespace(&markdown::convert(root, &base));
    if markdown.is_empty() {
        return None;
    }
    Some(ExtractedDocument {
        markdown,
        title: title(doc, &cleared.survey),
        language: cleared.survey.language.clone(),
        page_type: None,
        page_starts: Vec::new(),
    })
}

/// Each leaf block's text and features as the block filter reads them, after
/// the rules' removals: what `scripts/train_blocks.py` trains on.
#[cfg(any(test, feature = "internals"))]
pub(crate) fn block_rows(doc: &mut Document, furniture: Furniture) -> Vec<(String, blocks::Row)> {
    let Some(cleared) = clear(doc, furniture) else {
        return Vec::new();
    };
    let measured = measure(doc, cleared.body);
    blocks::rows(doc, &measured, &cleared.context(doc, furniture))
}

/// The body after the rules' removals, with what the extraction needs of it.
struct Cleared {
    body: NodeId,
    survey: root::Survey,
    content_root: Option<NodeId>,
}

impl Cleared {
    /// What the block filter reads each block beside.
    fn context(&self, doc: &Document, furniture: Furniture) -> blocks::Context {
        blocks::Context::new(doc, &self.survey, self.content_root, furniture.page_type)
    }
}

/// Removes the furniture the rules name (module docs). An element named like
/// furniture is kept when it holds the SRD's root (a `<div class="page
/// with-sidebar">` around `<main>`) or 40% or more of the body's text: a
/// wrapper, not furniture.
fn clear(doc: &mut Document, furniture: Furniture) -> Option<Cleared> {
    let survey = root::survey(doc);
    let body = survey.candidates[5]?;
    let sections = prose_headers(doc, body);
    doc.restore_all(&sections);
    let story_cards = card_headers(doc, body);
    doc.restore_all(&story_cards);
    let measured = measure(doc, body);
    let index: HashMap<NodeId, usize> = measured
        .nodes
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id, i))
        .collect();
    let body_text = measured.nodes.first().map_or(0, |m| m.text);
    let content_root = root::select_root(doc, &survey).map(|node| node.id());
    let holds_root = |id: NodeId| {
        content_root.is_some_and(|root| {
            root == id
                || doc
                    .tree
                    .get(root)
                    .is_some_and(|node| node.ancestors().any(|a| a.id() == id))
        })
    };
    let in_content = |id: NodeId| {
        content_root.is_some_and(|root| {
            root != body
                && doc
                    .tree
                    .get(id)
                    .is_some_and(|node| node.ancestors().any(|a| a.id() == root))
        })
    };
    // What article mode never reads, less what a landing page or a product
    // shows as content.
    let spared = |id: NodeId| {
        is_hero(doc, id)
            || is_collapsed_panel(doc, id)
            || is_section_header(doc, &measured, &index, id) && in_content(id)
    };
    let unseen: Vec<NodeId> = unseen_elements(doc, body, STRICT)
        .into_iter()
        .filter(|&id| !spared(id))
        .chain(hidden_by_class(doc, body))
        .filter(|&id| {
            let large = index
                .get(&id)
                .is_some_and(|&i| measured.nodes[i].text as u64 * 5 >= body_text as u64 * 2);
            !large && !holds_root(id)
        })
        .collect();
    let menus = if furniture.link_lists {
        link_lists(&measured)
    } else {
        Vec::new()
    };
    let cards: Vec<NodeId> = if furniture.link_cards {
        repeat::link_cards(doc, &measured)
            .into_iter()
            .map(|i| measured.nodes[i].id)
            .filter(|&id| !holds_root(id))
            .collect()
    } else {
        Vec::new()
    };
    let recommended = if furniture.recommendations {
        recommendations(doc, &measured)
            .into_iter()
            .filter(|&id| !holds_root(id))
            .collect()
    } else {
        Vec::new()
    };
    doc.remove_all(&unseen);
    doc.remove_all(&cards);
    doc.remove_all(&recommended);
    let controls = form_controls(doc, body);
    doc.remove_all(&controls);
    doc.remove_all(&menus);
    if furniture.cards_as_items {
        cards::as_list_items(doc, &measure(doc, body));
    }
    Some(Cleared {
        body,
        survey,
        content_root,
    })
}

/// The SRD's root, or its lowest ancestor holding half the body's text or more
/// when the root holds less: the SRD takes the first `<article>` or `<main>`,
/// which on a product or landing page is often one block of many (a review, a
/// spec sheet).
fn widen(measured: &Measured, root: NodeId) -> NodeId {
    let Some(body_text) = measured.nodes.first().map(|m| m.text) else {
        return root;
    };
    let Some(mut at) = measured.nodes.iter().position(|m| m.id == root) else {
        return root;
    };
    while u64::from(measured.nodes[at].text) * 2 < u64::from(body_text) {
        match measured.nodes[at].parent {
            Some(parent) => at = parent,
            None => break,
        }
    }
    measured.nodes[at].id
}

/// What headings of recommendation sections say (lowercase, matched inside the
/// heading's text).
const RECOMMENDATION_HEADINGS: &[&str] = &[
    "also viewed",
    "also bought",
    "also like",
    "also love",
    "also purchased",
    "you may like",
    "you might like",
    "similar items",
    "similar products",
    "related products",
    "related items",
    "recently viewed",
    "recommended for you",
    "recommendations",
    "frequently bought together",
    "bought together",
    "sponsored",
    "more from this seller",
    "consider these",
    "complete the look",
    "shop similar",
];

/// Sections under a heading that names recommendations: for each such heading,
/// its lowest ancestor that holds more than the heading (the carousel with its
/// title), unless that holds the page's `<h1>` or 40% or more of its text.
fn recommendations(doc: &Document, measured: &Measured) -> Vec<NodeId> {
    let nodes = &measured.nodes;
    let body_text = nodes.first().map_or(0, |m| u64::from(m.text));
    let mut out = Vec::new();
    for (i, m) in nodes.iter().enumerate() {
        if !matches!(m.tag, Tag::Heading(2..)) {
            continue;
        }
        let Some(heading) = doc.tree.get(m.id) else {
            continue;
        };
        let text = normalized_text(heading).to_lowercase();
        if text.len() > 80 || !RECOMMENDATION_HEADINGS.iter().any(|p| text.contains(p)) {
            continue;
        }
        let mut at = i;
        while let Some(parent) = nodes[at].parent {
            at = parent;
            if nodes[at].text > m.text + 60 {
                break;
            }
        }
        let section = &nodes[at];
        let holds_title = doc.tree.get(section.id).is_some_and(|node| {
            node.descendants().any(|d| {
                d.value()
                    .element()
                    .is_some_and(|e| e.tag == Tag::Heading(1))
            })
        });
        if at != 0 && !holds_title && u64::from(section.text) * 5 < body_text * 2 {
            out.push(section.id);
        }
    }
    out
}

/// Class names that keep an element for screen readers only in the CSS
/// frameworks most pages use (Bootstrap, Tailwind, WordPress and Shopify themes):
/// labels such as "Regular price" or "Unit price" that no reader sees. Classes
/// that hide until a click (`hidden`, `d-none`) are not here: collapsed FAQ
/// answers and inactive tabs are content (measured on WCXB's dev split: dropping
/// them cost service pages 0.003 of F1).
const HIDING_CLASSES: &[&str] = &[
    "sr-only",
    "screen-reader-text",
    "screen-reader-only",
    "visually-hidden",
    "visuallyhidden",
];

/// Elements of the body whose class keeps them for screen readers only: one of
/// [`HIDING_CLASSES`], or a BEM modifier of one (`visually-hidden--inline`).
fn hidden_by_class(doc: &Document, body: NodeId) -> Vec<NodeId> {
    let hides = |token: &str| {
        // Every hiding class starts with `s` or `v`: most tokens stop here.
        let first = token.as_bytes().first().map(u8::to_ascii_lowercase);
        matches!(first, Some(b's' | b'v'))
            && HIDING_CLASSES.iter().any(|class| {
                // `get`, not indexing: a token may have a multi-byte character there.
                token
                    .get(..class.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(class))
                    && token
                        .get(class.len()..)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with("--"))
            })
    };
    doc.elements_under(body, |_, e| {
        e.attr(Attr::Class)
            .is_some_and(|c| c.split_ascii_whitespace().any(hides))
    })
}

/// `<button>`, `<label>` and `<option>` elements of the body, and links styled
/// as buttons whose text is a few words: calls to action ("Sign up", "Book a
/// demo", "Shop now"), not content, whether the page draws them with
/// `<button>` or with `<a class="btn">`.
pub(crate) fn form_controls(doc: &Document, body: NodeId) -> Vec<NodeId> {
    doc.elements_under(body, |node, e| {
        matches!(
            e.name.local,
            local_name!("button") | local_name!("label") | local_name!("option")
        ) || e.tag == Tag::Link && styled_as_button(e) && is_short_call(node)
    })
}

/// A call to action has this many words or fewer; a longer button-styled link
/// ("Explore our watercolour range by brand") names what it leads to.
const MAX_CALL_WORDS: usize = 5;

/// Whether a class word (split at anything not a letter or digit) names a
/// button: `btn`, `button`, `cta` (`btn-primary`, `shg-btn`, `hero-cta`).
fn styled_as_button(e: &Element) -> bool {
    e.attr(Attr::Class).is_some_and(|class| {
        class
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| {
                ["btn", "button", "cta"]
                    .iter()
                    .any(|b| word.eq_ignore_ascii_case(b))
            })
    })
}

fn is_short_call(link: NodeRef<'_, Node>) -> bool {
    let words = normalized_text(link).split_whitespace().count();
    (1..=MAX_CALL_WORDS).contains(&words)
}

/// Lists (and link bars) whose every entry is one short link: menus, facets, tag
/// clouds. A list of three or more items where at least 90% of the text is link
/// text and the mean item is under 40 characters.
pub(crate) fn link_lists(measured: &Measured) -> Vec<NodeId> {
    let mut out = Vec::new();
    for m in &measured.nodes {
        let is_list = matches!(m.tag, Tag::UnorderedList | Tag::OrderedList);
        if !is_list || m.items < 3 || m.text == 0 {
            continue;
        }
        let per_item = m.text / m.items.max(1);
        if m.link_density() >= 0.9 && per_item < 40 {
            out.push(m.id);
        }
    }
    out
}

/// Whether `id` is a landing page's hero (a class or id naming `hero`: the
/// opening section, often a `hero-banner`), shown: the content a service page
/// opens with, which Readability's `banner` would remove as an ad's.
fn is_hero(doc: &Document, id: NodeId) -> bool {
    doc.tree
        .get(id)
        .and_then(|node| node.value().element())
        .is_some_and(|e| {
            e.tag != Tag::Image
                && !e.attr(Attr::Style).is_some_and(style_hides)
                && names_any(e, &["hero"])
        })
}

/// Whether the class or id of `e` holds one of `fragments` (lowercase),
/// whatever its case.
fn names_any(e: &Element, fragments: &[&str]) -> bool {
    [e.attr(Attr::Class), e.attr(Attr::Id)]
        .into_iter()
        .flatten()
        .any(|name| {
            fragments
                .iter()
                .any(|fragment| contains_ignoring_case(name, fragment))
        })
}

/// Class or id fragments of panels a click opens: accordions and collapsibles
/// (Bootstrap's `collapse`, `accordion__content`), tabs (`tab-pane`), FAQ
/// answers, and the bodies toggles reveal, named for what they hold
/// (`item-42-content`; a hidden pop-up or menu is hidden whole, by its own name).
const PANEL_NAMES: &[&str] = &[
    "collapse",
    "accordion",
    "tab-pane",
    "tabpanel",
    "tab-panel",
    "tab-content",
    "faq",
    "answer",
    "content",
];

/// Whether `id` is a panel an inline style keeps closed until a click (a class
/// or id in [`PANEL_NAMES`]): a product's description and specification tabs,
/// a service page's FAQ answers, which the page shows to whoever clicks. Other
/// elements an inline style hides (menus, pop-ups, templates) stay out.
fn is_collapsed_panel(doc: &Document, id: NodeId) -> bool {
    doc.tree
        .get(id)
        .and_then(|node| node.value().element())
        .is_some_and(|e| e.attr(Attr::Style).is_some_and(style_hides) && names_any(e, PANEL_NAMES))
}

/// Whether `id` is the header of a section (a class or id naming `header`, not
/// a `<header>` element, shown, under a fifth of its text in links and no
/// `<nav>`): a section's heading and lede (`section-header`, a styled
/// component's `StyledHeadlineHeader`), which Readability's `header` would
/// remove as the site's. Only asked inside the SRD's content root.
fn is_section_header(
    doc: &Document,
    measured: &Measured,
    index: &HashMap<NodeId, usize>,
    id: NodeId,
) -> bool {
    let Some(node) = doc.tree.get(id) else {
        return false;
    };
    let Some(e) = node.value().element() else {
        return false;
    };
    let few_links = index
        .get(&id)
        .is_some_and(|&i| measured.nodes[i].link_density() < 0.2);
    names_any(e, &["header"])
        && few_links
        && e.name.local != local_name!("header")
        && !e.attr(Attr::Style).is_some_and(style_hides)
        && !node.descendants().any(|d| {
            d.value()
                .element()
                .is_some_and(|e| e.name.local == local_name!("nav"))
        })
}
