//! The rest of a page once the element budget is spent.
//!
//! The budget exists because the tree builder can make elements without input
//! bytes: it re-creates every open formatting element (up to
//! [`MAX_OPEN_FORMATTING`] of them) for every text run, so 120 unclosed `<b>`
//! before 300 paragraphs make 36 000 elements. Stopping the parse there would drop
//! the rest of the page without a word (an attacker's storm up front hides the
//! article after it), so the tree builder is retired instead and the rest is
//! built here:
//!
//! * **Where.** Text and elements go where the tree builder would have put its
//!   next node: a probe comment, handed to the tree builder, lands in its current
//!   node (HTML inserts a comment there without re-creating formatting elements),
//!   and is taken out again. Text that would land in the `<head>`, in `<html>`
//!   after `</body>` or in the document goes to the `<body>`, as text does in HTML.
//! * **What.** One element per start tag, with the same classification and
//!   boilerplate flag as any other ([`Element::new`](super::Element)), so removed
//!   and hidden elements stay removed; nothing is re-created or synthesised, so
//!   the elements are at most the start tags left in the input. A start tag opens
//!   its element (a void element does not); an end tag closes the nearest open
//!   element of its name inside HTML's default scope (table cells, captions and
//!   templates bound it) and below the `<body>`, or is ignored.
//!   Raw-text elements switch the tokenizer as the tree builder would.
//! * **Bounds.** Nesting is capped at [`MAX_OPEN`] as before (a dropped tag that
//!   would hide its subtree suppresses it, see [`Suppressed`](super::Suppressed)),
//!   and an end tag looks at most [`SCOPE_WALK`] ancestors up, so every token
//!   costs at most a constant: the parse stays linear.
//!
//! HTML's finer rules (implied end tags, foster parenting, adoption) are not
//! applied here, so the structure past the budget is approximate; the text is
//! all there. Real pages never get here (they make one element per 30 or more
//! bytes).

use ego_tree::{NodeId, NodeRef};
use html5ever::interface::{ElementFlags, NodeOrText, TreeSink};
use html5ever::tokenizer::{self, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::{LocalName, local_name};

use super::{Limiter, MAX_OPEN, MAX_OPEN_FORMATTING, Node, Sink, raw_switch};
use crate::extract::element::Tag;
use crate::extract::element::{self, tag_name};

/// Ancestors an end tag looks through for its element: more than the tree
/// builder's stack can hold when it is retired ([`MAX_OPEN`] handles, plus the
/// formatting elements re-created for one text run) plus the flat nesting cap.
const SCOPE_WALK: usize = 2 * MAX_OPEN + MAX_OPEN_FORMATTING;

/// Where flat building stands.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flat {
    /// The node new content is appended to.
    point: NodeId,
    /// Elements opened here and still open: the innermost `depth` nodes of
    /// `point`'s ancestor chain (itself included).
    depth: usize,
}

impl Limiter {
    /// Retires the tree builder: finds its insertion point with a probe comment
    /// and builds the rest flat from there.
    pub(super) fn go_flat(&self, line_number: u64) {
        let sink = &self.builder.sink;
        sink.last_comment.set(None);
        let _ = self
            .builder
            .process_token(Token::CommentToken(Default::default()), line_number);
        let landed = sink.last_comment.take().and_then(|comment| {
            let mut tree = sink.tree.borrow_mut();
            let mut node = tree.get_mut(comment)?;
            let parent = node.parent()?.id();
            node.detach();
            Some(parent)
        });
        let point = match landed {
            Some(point) if !outside_body(sink, point) => point,
            _ => sink.body(),
        };
        self.flat.set(Some(Flat { point, depth: 0 }));
    }

    /// One token past the budget.
    pub(super) fn flat_token(&self, flat: Flat, token: Token) -> TokenSinkResult<NodeId> {
        match token {
            Token::CharacterTokens(text) => {
                self.builder
                    .sink
                    .append(&flat.point, NodeOrText::AppendText(text));
            }
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => {
                return self.flat_start(flat, tag);
            }
            Token::TagToken(tag) => self.flat_end(flat, &tag.name),
            // Comments, doctypes, NUL (dropped in body text by HTML too), the end.
            _ => {}
        }
        TokenSinkResult::Continue
    }

    fn flat_start(&self, flat: Flat, tag: tokenizer::Tag) -> TokenSinkResult<NodeId> {
        if is_document_frame(&tag.name) {
            // The document has them; HTML merges such a tag's attributes, which
            // extraction does not read there.
            return TokenSinkResult::Continue;
        }
        let raw = raw_switch(&tag.name);
        let void = element::is_void(&tag.name);
        if !void && raw.is_none() && flat.depth >= MAX_OPEN {
            return self.drop_start_tag(&tag);
        }
        let sink = &self.builder.sink;
        let element = sink.create_element(tag_name(&tag.name), tag.attrs, ElementFlags::default());
        sink.append(&flat.point, NodeOrText::AppendNode(element));
        if !void {
            self.flat.set(Some(Flat {
                point: element,
                depth: flat.depth + 1,
            }));
        }
        raw.unwrap_or(TokenSinkResult::Continue)
    }

    /// Closes the nearest open element named `name`, and everything inside it; an
    /// end tag with no such element in scope is ignored, as in HTML.
    fn flat_end(&self, flat: Flat, name: &LocalName) {
        if is_document_frame(name) {
            return;
        }
        let tree = self.builder.sink.tree.borrow();
        let mut node = tree.get(flat.point);
        for steps in 0..SCOPE_WALK {
            let Some(current) = node else {
                return;
            };
            let Some(element) = current.value().element() else {
                // The document, or template contents (a scope of their own).
                return;
            };
            if element.name.local == *name {
                if let Some(parent) = current.parent() {
                    self.flat.set(Some(Flat {
                        point: parent.id(),
                        depth: flat.depth.saturating_sub(steps + 1),
                    }));
                }
                return;
            }
            if is_scope_boundary(&element.name.local) || element.tag == Tag::Body {
                return;
            }
            node = current.parent();
        }
    }
}

impl Sink {
    /// The `<body>`, made (last in `<html>`) when the document has none yet.
    fn body(&self) -> NodeId {
        let html = self.child_named(self.document, local_name!("html"));
        let parent = html.unwrap_or(self.document);
        if let Some(body) = self.child_named(parent, local_name!("body")) {
            return body;
        }
        let body = self.create_element(
            tag_name(&local_name!("body")),
            Vec::new(),
            ElementFlags::default(),
        );
        self.append(&parent, NodeOrText::AppendNode(body));
        body
    }

    /// The first child element of `parent` named `name`.
    fn child_named(&self, parent: NodeId, name: LocalName) -> Option<NodeId> {
        let tree = self.tree.borrow();
        let parent = tree.get(parent)?;
        parent
            .children()
            .find(|child| {
                child
                    .value()
                    .element()
                    .is_some_and(|e| e.name.local == name)
            })
            .map(|child| child.id())
    }
}

/// Whether text at `point` would be outside the body: the document itself,
/// `<html>` (after `</body>`), or in the `<head>`.
fn outside_body(sink: &Sink, point: NodeId) -> bool {
    let tree = sink.tree.borrow();
    let Some(node) = tree.get(point) else {
        return true;
    };
    let is = |n: &NodeRef<'_, Node>, tag: Tag| n.value().element().is_some_and(|e| e.tag == tag);
    matches!(node.value(), Node::Document)
        || is(&node, Tag::Html)
        || std::iter::once(node)
            .chain(node.ancestors())
            .any(|n| is(&n, Tag::Head))
}

/// `<html>`, `<head>`, `<body>`, `<frameset>`: the document's own frame.
fn is_document_frame(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("html") | local_name!("head") | local_name!("body") | local_name!("frameset")
    )
}

/// The elements that bound HTML's default scope: an end tag does not close what
/// is outside them (a `</div>` in a table cell leaves the `<div>` around the
/// table open).
fn is_scope_boundary(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("applet")
            | local_name!("caption")
            | local_name!("html")
            | local_name!("table")
            | local_name!("td")
            | local_name!("th")
            | local_name!("marquee")
            | local_name!("object")
            | local_name!("template")
    )
}
