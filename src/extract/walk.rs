//! The one subtree walk every extraction pass uses: iterative (an explicit climb,
//! never recursion, so 100 000 nested elements cost 100 000 steps and no call
//! stack), with subtrees a pass skips never entered.

use ego_tree::NodeRef;

use super::dom::Node;

/// What the walk does after entering a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Visit the node's children, then [`Visitor::leave`] it.
    Into,
    /// Go on with the next node after this one's subtree; no `leave`.
    Over,
    /// End the walk here.
    Stop,
}

/// A pass over a subtree.
pub(super) trait Visitor<'a> {
    /// Called on each node in document order, unless inside a subtree passed over.
    fn enter(&mut self, node: NodeRef<'a, Node>) -> Step;

    /// Called after the children of each node entered with [`Step::Into`].
    fn leave(&mut self, _node: NodeRef<'a, Node>) {}
}

/// Walks `root`'s subtree, `root` included, in document order. Returns `false`
/// when a visitor stopped it.
pub(super) fn walk<'a>(root: NodeRef<'a, Node>, visitor: &mut impl Visitor<'a>) -> bool {
    let mut node = root;
    'next: loop {
        match visitor.enter(node) {
            Step::Stop => return false,
            Step::Into => {
                if let Some(child) = node.first_child() {
                    node = child;
                    continue 'next;
                }
                visitor.leave(node);
            }
            Step::Over => {}
        }
        // Climb until a next sibling, leaving each finished ancestor.
        loop {
            if node.id() == root.id() {
                return true;
            }
            if let Some(sibling) = node.next_sibling() {
                node = sibling;
                continue 'next;
            }
            match node.parent() {
                Some(parent) => {
                    node = parent;
                    visitor.leave(node);
                }
                None => return true,
            }
        }
    }
}
