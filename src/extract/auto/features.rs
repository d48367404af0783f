//! Counts over a parsed page for the classifier's error analysis:
//! code blocks, `<article>`s, sections, forms, prices, class names of posts,
//! products and cards. Pure: one walk of the tree. The decision itself reads only
//! the raw HTML and the URL (`classify.rs`); these counts are what a richer
//! classifier would be trained on (`cargo bench --bench wcxb` with
//! `WCXB_FEATURES` writes them per page).

use super::super::dom::{Document, Node};
use super::super::element::Tag;
use crate::extract::element::Attr;
use ego_tree::iter::Edge;

/// Words of class and id names counted as markers, matched as substrings of the
/// lowercased name. Each names a structure, not a site.
pub(crate) const NAME_MARKERS: [&str; 14] = [
    "post", "comment", "reply", "answer", "author", "product", "price", "cart", "card", "sidebar",
    "toc", "hero", "pricing", "thread",
];

/// The counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct Features {
    /// `<pre>` elements.
    pub(crate) pre: u32,
    /// Inline `<code>` elements.
    pub(crate) code: u32,
    /// `<article>` elements.
    pub(crate) articles: u32,
    /// `<section>` elements.
    pub(crate) sections: u32,
    /// `<form>` elements.
    pub(crate) forms: u32,
    /// `<input>`, `<button>` and `<select>` elements.
    pub(crate) inputs: u32,
    /// `<li>` elements.
    pub(crate) items: u32,
    /// `<table>` elements.
    pub(crate) tables: u32,
    /// `<h1>`..`<h6>` elements.
    pub(crate) headings: u32,
    /// `<p>` elements.
    pub(crate) paragraphs: u32,
    /// Elements whose class or id holds each of [`NAME_MARKERS`].
    pub(crate) names: [u32; NAME_MARKERS.len()],
    /// Visible text characters of the body (outside scripts and styles).
    pub(crate) text: u32,
    /// Of which inside links.
    pub(crate) link_text: u32,
    /// Prices in the text: a currency sign next to a digit.
    pub(crate) prices: u32,
}

impl Features {
    /// The features as `name=value` pairs (benches and error analysis).
    pub(crate) fn describe(&self) -> String {
        let mut out = format!(
            "pre={} code={} articles={} sections={} forms={} inputs={} items={} tables={} \
             headings={} paragraphs={} text={} link_text={} prices={}",
            self.pre,
            self.code,
            self.articles,
            self.sections,
            self.forms,
            self.inputs,
            self.items,
            self.tables,
            self.headings,
            self.paragraphs,
            self.text,
            self.link_text,
            self.prices
        );
        for (marker, count) in NAME_MARKERS.iter().zip(self.names) {
            out.push_str(&format!(" n_{marker}={count}"));
        }
        out
    }
}

/// Counts the elements and text of a parsed page.
pub(crate) fn read(doc: &Document) -> Features {
    let mut features = Features::default();
    let mut skip_until = None;
    let mut links = 0u32;
    for edge in doc.root().traverse() {
        match edge {
            Edge::Open(node) if skip_until.is_none() => match node.value() {
                Node::Element(e) => {
                    if matches!(e.tag, Tag::Skip | Tag::Head | Tag::Title)
                        || super::super::element::is_script_or_style(&e.name.local)
                    {
                        skip_until = Some(node.id());
                        continue;
                    }
                    count_element(&mut features, e);
                    if e.tag == Tag::Link {
                        links += 1;
                    }
                }
                Node::Text(text) => {
                    let (chars, prices) = count_text(text);
                    features.text += chars;
                    features.prices += prices;
                    if links > 0 {
                        features.link_text += chars;
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if skip_until == Some(node.id()) {
                    skip_until = None;
                } else if skip_until.is_none()
                    && node.value().element().is_some_and(|e| e.tag == Tag::Link)
                {
                    links = links.saturating_sub(1);
                }
            }
            Edge::Open(_) => {}
        }
    }
    features
}

fn count_element(features: &mut Features, e: &crate::extract::element::Element) {
    use html5ever::local_name;
    match e.tag {
        Tag::Pre => features.pre += 1,
        Tag::Code => features.code += 1,
        Tag::Article => features.articles += 1,
        Tag::ListItem => features.items += 1,
        Tag::Table => features.tables += 1,
        Tag::Heading(_) => features.headings += 1,
        _ => {}
    }
    match e.name.local {
        local_name!("section") => features.sections += 1,
        local_name!("form") => features.forms += 1,
        local_name!("input") | local_name!("button") | local_name!("select") => {
            features.inputs += 1;
        }
        local_name!("p") => features.paragraphs += 1,
        _ => {}
    }
    for value in [e.attr(Attr::Class), e.attr(Attr::Id)]
        .into_iter()
        .flatten()
    {
        if value.len() > 256 {
            continue;
        }
        let lower = value.to_ascii_lowercase();
        for (i, marker) in NAME_MARKERS.iter().enumerate() {
            if lower.contains(marker) {
                features.names[i] += 1;
            }
        }
    }
}

/// Visible characters (whitespace runs count one) and prices of a text node.
fn count_text(text: &str) -> (u32, u32) {
    let mut chars = 0u32;
    let mut prices = 0u32;
    let mut in_space = true;
    let mut previous = ' ';
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                chars += 1;
            }
            in_space = true;
        } else {
            in_space = false;
            chars += 1;
            if c.is_ascii_digit() && matches!(previous, '$' | '€' | '£' | '¥' | '₹') {
                prices += 1;
            }
        }
        previous = c;
    }
    (chars, prices)
}
