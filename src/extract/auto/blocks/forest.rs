//! The block filter's trees, laid out for a fast walk.
//!
//! `model.rs` writes each tree as the training script reads it: an enum of
//! splits and leaves per tree. Here the trees sit in one flat array of plain
//! nodes, a leaf being its own both children, and a walk stops at the first
//! node that is: two thirds of the time of walking the enums (WCXB's dev
//! split's 97,015 blocks: 0.22 s against 0.35 s). A walk without branches,
//! each tree walked its full depth with conditional moves, was slower still
//! (0.51 s): the trees are deep (8.6 levels on average) and most walks end
//! early.

/// A node of a tree as `model.rs` writes it: a split (feature index, threshold,
/// then the left and right children's indexes within the tree: a block goes
/// left when its feature is at most the threshold, as scikit-learn does), or a
/// leaf's log-odds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TreeNode {
    Split(u16, f64, u8, u8),
    Leaf(f64),
}

/// A node in the flat array. A leaf is its own both children; a split's
/// `value` is 0.
#[derive(Debug, Clone, Copy)]
struct Flat {
    feature: u16,
    threshold: f64,
    left: u32,
    right: u32,
    value: f64,
}

/// Where the walk of a malformed tree's dangling child ends: a leaf worth 0.
const NOWHERE: u32 = 0;

/// Trees ready to walk.
pub(crate) struct Forest {
    baseline: f64,
    nodes: Vec<Flat>,
    /// Each tree's root in `nodes` and the most steps its walk takes.
    trees: Vec<(u32, u32)>,
}

impl Forest {
    /// The forest of `trees` over `baseline` log-odds. A malformed tree is
    /// walked to a defined end: a child past the tree's end is a leaf worth 0,
    /// and a walk takes at most as many steps as the tree has nodes (a cycle
    /// ends on a split, worth 0).
    pub(crate) fn new(baseline: f64, trees: &[&[TreeNode]]) -> Forest {
        let mut nodes = vec![Flat {
            feature: 0,
            threshold: 0.0,
            left: NOWHERE,
            right: NOWHERE,
            value: 0.0,
        }];
        let mut roots = Vec::with_capacity(trees.len());
        for tree in trees {
            let start = nodes.len() as u32;
            let global = |child: u8| {
                let child = u32::from(child);
                if (child as usize) < tree.len() {
                    start + child
                } else {
                    NOWHERE
                }
            };
            for (i, node) in tree.iter().enumerate() {
                let own = start + i as u32;
                nodes.push(match *node {
                    TreeNode::Split(feature, threshold, left, right) => Flat {
                        feature,
                        threshold,
                        left: global(left),
                        right: global(right),
                        value: 0.0,
                    },
                    TreeNode::Leaf(value) => Flat {
                        feature: 0,
                        threshold: 0.0,
                        left: own,
                        right: own,
                        value,
                    },
                });
            }
            if !tree.is_empty() {
                roots.push((start, depth(tree)));
            }
        }
        Forest {
            baseline,
            nodes,
            trees: roots,
        }
    }

    /// The log-odds that a block with the (dense) `features` is content: the
    /// baseline plus the sum of each tree's leaf (in that order: a block at the
    /// threshold is judged as it always was). A feature past `features` reads 0.
    pub(crate) fn log_odds(&self, features: &[f32]) -> f64 {
        let mut sum = 0.0;
        for &(root, steps) in &self.trees {
            let mut at = root as usize;
            for _ in 0..steps {
                let node = &self.nodes[at];
                if node.left as usize == at {
                    break;
                }
                let x = features
                    .get(usize::from(node.feature))
                    .copied()
                    .unwrap_or(0.0);
                at = if f64::from(x) <= node.threshold {
                    node.left
                } else {
                    node.right
                } as usize;
            }
            sum += self.nodes[at].value;
        }
        self.baseline + sum
    }
}

/// The longest path from `tree`'s root to a leaf, in steps; for a malformed
/// tree (a node reached twice: a cycle or a shared child) the tree's length,
/// so its walk is bounded. Each node is expanded once: linear in the tree.
fn depth(tree: &[TreeNode]) -> u32 {
    let mut seen = vec![false; tree.len()];
    let mut deepest = 0;
    let mut stack = vec![(0usize, 0u32)];
    while let Some((i, steps)) = stack.pop() {
        deepest = deepest.max(steps);
        let Some(node) = tree.get(i) else {
            continue;
        };
        if std::mem::replace(&mut seen[i], true) {
            return tree.len() as u32;
        }
        if let TreeNode::Split(_, _, left, right) = node {
            stack.push((usize::from(*left), steps + 1));
            stack.push((usize::from(*right), steps + 1));
        }
    }
    deepest
}
