//! Listing and collection cards as list items: a grid of cards (one
//! `<div>` per product, post or result, each with its title link and a few
//! facts) reads as one Markdown list with one item per card, not as a run of
//! loose paragraphs in which a model cannot tell where one card ends.
//!
//! A card group is three or more repeated siblings (`repeat`) that are blocks
//! (not already list items, rows or tables), nearly all holding a link, each
//! short, and that are every child with text of their parent. The parent is
//! read as a list, each card as an item, and a card's headings as bold text
//! (a heading inside a list item is not Markdown).

use ego_tree::NodeId;

use super::super::article::measure::Measured;
use super::super::dom::{Document, Node};
use super::super::element::Tag;
use super::repeat::{self, is_ancestor};

/// A card's mean text is under this many characters: longer blocks are posts or
/// sections, which read as paragraphs.
const MAX_MEAN_CARD_CHARS: u64 = 500;

/// Reads each card group of `measured` as a list: the parent as `<ul>`, each
/// card as `<li>`, headings in a card as `<strong>`.
pub(crate) fn as_list_items(doc: &mut Document, measured: &Measured) {
    let nodes = &measured.nodes;
    let mut groups: Vec<(usize, Vec<usize>)> = repeat::sibling_groups(doc, nodes)
        .into_iter()
        .filter(|(parent, members)| is_card_group(doc, measured, *parent, members))
        .collect();
    groups.sort_by_key(|(parent, _)| *parent);
    let mut cards: Vec<usize> = Vec::new();
    for (parent, members) in groups {
        // A grid inside a card (a card's own list of links) stays as it is.
        if cards.iter().any(|&card| is_ancestor(nodes, card, parent)) {
            continue;
        }
        retag(doc, nodes[parent].id, Tag::UnorderedList);
        for &member in &members {
            retag(doc, nodes[member].id, Tag::ListItem);
            let headings: Vec<NodeId> = doc
                .tree
                .get(nodes[member].id)
                .into_iter()
                .flat_map(|card| card.descendants())
                .filter(|node| {
                    node.value()
                        .element()
                        .is_some_and(|e| matches!(e.tag, Tag::Heading(_)))
                })
                .map(|node| node.id())
                .collect();
            for heading in headings {
                retag(doc, heading, Tag::Strong);
            }
        }
        cards.extend(members);
    }
}

fn is_card_group(doc: &Document, measured: &Measured, parent: usize, members: &[usize]) -> bool {
    let nodes = &measured.nodes;
    if members.len() < 3
        || !members
            .iter()
            .all(|&i| matches!(nodes[i].tag, Tag::Block | Tag::Article))
    {
        return false;
    }
    let linked = members.iter().filter(|&&i| nodes[i].link > 0).count();
    let text: u64 = members.iter().map(|&i| u64::from(nodes[i].text)).sum();
    if linked * 10 < members.len() * 8 || text > MAX_MEAN_CARD_CHARS * members.len() as u64 {
        return false;
    }
    // Every child of the parent that shows text is a card.
    let parent_index = parent;
    let Some(parent) = doc.tree.get(nodes[parent].id) else {
        return false;
    };
    let card_ids: Vec<NodeId> = members.iter().map(|&i| nodes[i].id).collect();
    // The parent's children that show text, in one pass over the measures.
    let with_text: Vec<NodeId> = nodes
        .iter()
        .filter(|m| m.parent == Some(parent_index) && m.text > 0)
        .map(|m| m.id)
        .collect();
    parent.children().all(|child| match child.value() {
        Node::Text(text) => text.trim().is_empty(),
        Node::Element(element) => {
            element.removed || card_ids.contains(&child.id()) || !with_text.contains(&child.id())
        }
        _ => true,
    })
}

fn retag(doc: &mut Document, id: NodeId, tag: Tag) {
    if let Some(mut node) = doc.tree.get_mut(id)
        && let Node::Element(element) = node.value()
    {
        element.tag = tag;
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::super::super::dom;
    use super::super::whole::{self, Furniture};

    fn read(html: &str, cards: bool) -> String {
        let url = Url::parse("https://shop.example/c/shoes").expect("url");
        whole::extract(
            &mut dom::parse(html, dom::Scripting::On),
            &url,
            Furniture {
                link_lists: true,
                link_cards: false,
                cards_as_items: cards,
                recommendations: false,
                page_type: crate::vocabulary::PageType::Listing,
            },
        )
        .expect("content")
        .markdown
    }

    const GRID: &str = r#"<html><body><main><h1>Trail shoes</h1>
        <p>Our trail shoes for every kind of ground, tested on the hills.</p>
        <div class="grid">
          <div class="card"><h3><a href="/p/1">Ridge Runner</a></h3><p>Light and grippy.</p><span>$89</span></div>
          <div class="card"><h3><a href="/p/2">Mud Lark</a></h3><p>Deep lugs for mud.</p><span>$95</span></div>
          <div class="card"><h3><a href="/p/3">Scree Cat</a></h3><p>Rock plate, stiff sole.</p><span>$120</span></div>
        </div></main></body></html>"#;

    #[test]
    fn each_card_is_one_list_item_with_its_title_bold() {
        let markdown = read(GRID, true);
        assert!(
            markdown.contains(
                "- **[Ridge Runner](https://shop.example/p/1)**\n  Light and grippy.\n  $89\n- **[Mud"
            ),
            "{markdown}"
        );
        assert_eq!(markdown.matches("\n- **[").count(), 3, "{markdown}");
        assert!(markdown.starts_with("# Trail shoes"), "{markdown}");
    }

    #[test]
    fn without_the_option_or_without_cards_nothing_changes() {
        assert!(!read(GRID, false).contains("- **["));
        // Long blocks are sections, not cards.
        let long = "word ".repeat(150);
        let sections = format!(
            "<html><body><main><div><div><h3><a href=/a>A</a></h3><p>{long}</p></div>\
             <div><h3><a href=/b>B</a></h3><p>{long}</p></div>\
             <div><h3><a href=/c>C</a></h3><p>{long}</p></div></div></main></body></html>"
        );
        assert!(
            !read(&sections, true).contains("- "),
            "{}",
            read(&sections, true)
        );
        // A parent that holds other text besides the cards keeps its layout.
        let mixed = GRID.replace(
            r#"<div class="grid">"#,
            r#"<div class="grid"><p>Filter results by size and colour here.</p>"#,
        );
        assert!(!read(&mixed, true).contains("- **["));
    }
}
