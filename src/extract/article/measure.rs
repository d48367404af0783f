//! The measuring walk of article mode: per element of the cleaned body, its visible
//! text, link text, commas and the counts the scoring and pruning rules read.

use ego_tree::{NodeId, NodeRef};

use crate::extract::dom::{Document, Node};
use crate::extract::element::Element;
use crate::extract::element::Tag;
use crate::extract::walk::{Step, Visitor, walk};

/// Per-element measurements of the cleaned body, in document order (a parent
/// before its descendants).
pub(crate) struct Measured {
    pub(crate) nodes: Vec<Measure>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Measure {
    pub(crate) id: NodeId,
    /// Index of the parent element in [`Measured::nodes`], `None` for the body.
    pub(crate) parent: Option<usize>,
    pub(crate) tag: Tag,
    pub(crate) is_p: bool,
    pub(crate) is_input: bool,
    /// Has a block-level child element: its own text is loose text beside blocks.
    pub(crate) has_block_child: bool,
    /// Visible characters of the subtree (whitespace runs count as one).
    pub(crate) text: u32,
    /// Of which inside links.
    pub(crate) link: u32,
    /// Commas of the subtree.
    pub(crate) commas: u32,
    /// Characters and commas of the text this element holds itself, or through
    /// inline descendants (not through nested blocks): a paragraph's own words.
    pub(crate) own_text: u32,
    pub(crate) own_commas: u32,
    /// Descendant counts the pruning rules read.
    pub(crate) paragraphs: u32,
    pub(crate) images: u32,
    pub(crate) items: u32,
    pub(crate) inputs: u32,
    pub(crate) embeds: u32,
    pub(crate) heading_text: u32,
}

impl Measure {
    pub(crate) fn link_density(&self) -> f32 {
        if self.text == 0 {
            0.0
        } else {
            self.link as f32 / self.text as f32
        }
    }
}

pub(crate) fn measure(doc: &Document, body: NodeId) -> Measured {
    let mut measurer = Measurer::default();
    if let Some(body) = doc.tree.get(body) {
        walk(body, &mut measurer);
    }
    Measured {
        nodes: measurer.nodes,
    }
}

#[derive(Default)]
struct Measurer {
    nodes: Vec<Measure>,
    /// Open elements: (index into nodes, index of the nearest block element).
    stack: Vec<(usize, usize)>,
    /// Open links.
    links: usize,
}

impl<'a> Visitor<'a> for Measurer {
    fn enter(&mut self, node: NodeRef<'a, Node>) -> Step {
        match node.value() {
            Node::Text(text) => {
                self.text(text);
                Step::Over
            }
            Node::Element(element) if element.is_rendered() => {
                self.open(node.id(), element);
                Step::Into
            }
            _ => Step::Over,
        }
    }

    fn leave(&mut self, _node: NodeRef<'a, Node>) {
        self.close();
    }
}

impl Measurer {
    fn text(&mut self, text: &str) {
        let Some(&(top, owner)) = self.stack.last() else {
            return;
        };
        let (chars, commas) = count_text(text);
        let m = &mut self.nodes[top];
        m.text += chars;
        m.commas += commas;
        if self.links > 0 {
            m.link += chars;
        }
        self.nodes[owner].own_text += chars;
        self.nodes[owner].own_commas += commas;
    }

    fn open(&mut self, id: NodeId, element: &Element) {
        let parent = self.stack.last().map(|&(index, _)| index);
        let index = self.nodes.len();
        let owner = match self.stack.last() {
            Some(&(_, owner)) if !element.tag.is_block() => owner,
            _ => index,
        };
        self.nodes.push(Measure {
            id,
            parent,
            tag: element.tag,
            is_p: element.name.local == html5ever::local_name!("p"),
            is_input: element.name.local == html5ever::local_name!("input"),
            has_block_child: false,
            text: 0,
            link: 0,
            commas: 0,
            own_text: 0,
            own_commas: 0,
            paragraphs: 0,
            images: 0,
            items: 0,
            inputs: 0,
            embeds: 0,
            heading_text: 0,
        });
        self.stack.push((index, owner));
        if element.tag == Tag::Link {
            self.links += 1;
        }
    }

    /// Leaves the innermost open element: its totals join its parent's.
    fn close(&mut self) {
        let Some((index, _)) = self.stack.pop() else {
            return;
        };
        let child = self.nodes[index];
        if child.tag == Tag::Link {
            self.links = self.links.saturating_sub(1);
        }
        let Some(parent) = child.parent else {
            return;
        };
        let p = &mut self.nodes[parent];
        p.has_block_child |= child.tag.is_block();
        p.text += child.text;
        p.link += child.link;
        p.commas += child.commas;
        p.paragraphs += child.paragraphs + u32::from(child.is_p);
        p.images += child.images + u32::from(child.tag == Tag::Image);
        p.items += child.items + u32::from(child.tag == Tag::ListItem);
        p.inputs += child.inputs + u32::from(child.is_input);
        p.embeds += child.embeds;
        p.heading_text += if matches!(child.tag, Tag::Heading(_)) {
            child.text
        } else {
            child.heading_text
        };
    }
}

/// Visible characters (a whitespace run counts as one) and commas of a text node.
fn count_text(text: &str) -> (u32, u32) {
    let mut chars = 0u32;
    let mut commas = 0u32;
    let mut in_space = true;
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                chars += 1;
                in_space = true;
            }
            continue;
        }
        in_space = false;
        chars += 1;
        if matches!(
            c,
            ',' | '\u{060C}'
                | '\u{FE50}'
                | '\u{FE10}'
                | '\u{FE11}'
                | '\u{2E41}'
                | '\u{2E34}'
                | '\u{2E32}'
                | '\u{FF0C}'
                | '\u{3001}'
        ) {
            commas += 1;
        }
    }
    (chars, commas)
}
