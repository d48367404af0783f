//! Repeated sibling blocks: the structure forum threads (one block per
//! post) and listings (one block per card) share. Siblings repeat when they have
//! the same tag and the same first class name (digits aside: `post-17` and
//! `post-18` are one kind), so a thread's posts or a grid's cards form one group
//! whatever the site calls them.

use std::collections::HashMap;

use super::super::article::measure::{Measure, Measured};
pub(crate) use super::super::article::score::is_ancestor;
use super::super::dom::Document;
use super::super::element::Tag;
use super::super::root::normalized_text;
use crate::extract::element::Attr;

/// Sibling blocks of one kind under one parent.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// Index (into [`Measured::nodes`]) of the parent.
    pub(crate) parent: usize,
    /// Indexes of the members, in document order.
    pub(crate) members: Vec<usize>,
    /// Members with `min_text` or more characters of text outside links.
    pub(crate) substantial: usize,
    /// Characters of text outside links, over all members.
    pub(crate) prose: u32,
    /// Characters of text, over all members.
    pub(crate) text: u32,
}

impl Group {
    /// Share of the members' text inside links.
    pub(crate) fn link_density(&self) -> f32 {
        if self.text == 0 {
            0.0
        } else {
            1.0 - self.prose as f32 / self.text as f32
        }
    }
}

/// Text outside links.
pub(crate) fn prose(m: &Measure) -> u32 {
    m.text.saturating_sub(m.link)
}

/// Block tags a post or a card can be: containers, list items, table rows and
/// tables. Paragraphs, headings and code are the text of one block, not blocks
/// of a list.
fn may_repeat(m: &Measure, doc: &Document) -> bool {
    match m.tag {
        Tag::Article | Tag::ListItem | Tag::Row | Tag::Table => true,
        Tag::Block => doc
            .tree
            .get(m.id)
            .and_then(|node| node.value().element().map(|e| e.name.local.clone()))
            .is_some_and(|name| {
                !matches!(
                    &*name,
                    "p" | "figure" | "dd" | "dt" | "address" | "center" | "details" | "summary"
                )
            }),
        _ => false,
    }
}

/// The kind of a block: its tag and its first class name without digits.
fn kind(m: &Measure, doc: &Document) -> Option<(String, String)> {
    let element = doc.tree.get(m.id)?.value().element()?;
    let class = element
        .attr(Attr::Class)
        .and_then(|c| {
            c.split_ascii_whitespace()
                .find(|t| !t.bytes().any(|b| b.is_ascii_digit()))
        })
        .unwrap_or("")
        .to_ascii_lowercase();
    Some((element.name.local.to_string(), class))
}

/// The elements with text that may repeat, by parent and kind (tag and first
/// class name): the candidate groups of [`groups`] and [`link_cards`].
fn siblings_by_kind(
    doc: &Document,
    nodes: &[Measure],
) -> HashMap<(usize, (String, String)), Vec<usize>> {
    let mut by_kind: HashMap<(usize, (String, String)), Vec<usize>> = HashMap::new();
    for (i, m) in nodes.iter().enumerate() {
        let Some(parent) = m.parent else { continue };
        if m.text == 0 || !may_repeat(m, doc) {
            continue;
        }
        if let Some(kind) = kind(m, doc) {
            by_kind.entry((parent, kind)).or_default().push(i);
        }
    }
    by_kind
}

/// The repeated siblings of the page: for each parent and kind with two or more
/// members, the parent and the members (indexes into `nodes`).
pub(crate) fn sibling_groups(doc: &Document, nodes: &[Measure]) -> Vec<(usize, Vec<usize>)> {
    siblings_by_kind(doc, nodes)
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .map(|((parent, _), members)| (parent, members))
        .collect()
}

/// Every group of two or more repeated siblings with at least two members of
/// `min_text` characters or more outside links.
pub(crate) fn groups(doc: &Document, measured: &Measured, min_text: u32) -> Vec<Group> {
    let nodes = &measured.nodes;
    let by_kind = siblings_by_kind(doc, nodes);
    let mut out: Vec<Group> = by_kind
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .map(|((parent, _), members)| {
            let substantial = members
                .iter()
                .filter(|&&i| prose(&nodes[i]) >= min_text)
                .count();
            Group {
                parent,
                prose: members.iter().map(|&i| prose(&nodes[i])).sum(),
                text: members.iter().map(|&i| nodes[i].text).sum(),
                substantial,
                members,
            }
        })
        .filter(|g| g.substantial >= 2)
        .collect();
    // Deterministic order: by parent, then first member.
    out.sort_by_key(|g| (g.parent, g.members[0]));
    out
}

/// Members of repeated groups of cards that each link elsewhere and show a price:
/// three or more siblings of one kind, nearly all holding a link, most a price,
/// each short (under 400 characters on average), together under 40% of the
/// page's text. On a product page these are other products
/// (recommendations, "also viewed", variations), not the product.
pub(crate) fn link_cards(doc: &Document, measured: &Measured) -> Vec<usize> {
    let nodes = &measured.nodes;
    let by_kind = siblings_by_kind(doc, nodes);
    let body_text = nodes.first().map_or(0, |m| u64::from(m.text));
    let mut out: Vec<usize> = by_kind
        .into_values()
        .filter(|members| {
            let linked = members.iter().filter(|&&i| nodes[i].link > 0).count();
            let text: u64 = members.iter().map(|&i| u64::from(nodes[i].text)).sum();
            // Cards holding much of the page are its list (a category page
            // read as a product), not recommendations beside a product.
            if members.len() < 3
                || linked * 10 < members.len() * 9
                || text >= 400 * members.len() as u64
                || text * 5 >= body_text * 2
            {
                return false;
            }
            let priced = members
                .iter()
                .filter(|&&i| {
                    doc.tree
                        .get(nodes[i].id)
                        .is_some_and(|node| has_price(&normalized_text(node)))
                })
                .count();
            priced * 5 >= members.len() * 3
        })
        .flatten()
        .collect();
    out.sort_unstable();
    out
}

/// Whether `text` shows a price: a currency sign or code next to a digit
/// (`$12`, `£ 675`, `12,99 €`, `EUR 163.12`).
pub(crate) fn has_price(text: &str) -> bool {
    const SIGNS: &[&str] = &[
        "$", "£", "€", "¥", "₹", "USD", "EUR", "GBP", "CHF", "AUD", "CAD",
    ];
    SIGNS.iter().any(|sign| {
        text.match_indices(sign).any(|(at, _)| {
            let before = text[..at].trim_end_matches(' ').chars().next_back();
            let after = text[at + sign.len()..]
                .trim_start_matches(' ')
                .chars()
                .next();
            before.is_some_and(|c| c.is_ascii_digit()) || after.is_some_and(|c| c.is_ascii_digit())
        })
    })
}

/// The lowest common ancestor of `a` and `b` (either may be the other's).
pub(crate) fn common_ancestor(nodes: &[Measure], a: usize, b: usize) -> usize {
    let mut x = a;
    loop {
        if x == b || is_ancestor(nodes, x, b) {
            return x;
        }
        match nodes[x].parent {
            Some(p) => x = p,
            None => return x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::has_price;

    #[test]
    fn prices_are_a_currency_next_to_a_digit() {
        for priced in ["$12", "£ 675", "12,99 €", "EUR 163.12", "from $1.99/mo"] {
            assert!(has_price(priced), "{priced}");
        }
        for plain in ["US$", "Save €", "12 items", "EURO", ""] {
            assert!(!has_price(plain), "{plain}");
        }
    }
}
