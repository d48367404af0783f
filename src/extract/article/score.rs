//! Readability-style scoring: paragraphs score their containers, the best
//! container wins, moves up to an ancestor that holds as much, and is merged with
//! siblings that score alike.

use ego_tree::NodeId;

use super::Strictness;
use super::measure::{Measure, Measured};
use super::names::class_weight;
use crate::extract::dom::Document;
use crate::extract::element::Tag;
use crate::extract::element::{Attr, Element};

/// The chosen content: the element converted, and which of its children (when it
/// is the parent of merged siblings) are left out.
pub(crate) struct Chosen {
    pub(crate) root: NodeId,
    /// Indexes (into [`Measured::nodes`]) of the elements whose subtrees are the
    /// content.
    pub(super) included: Vec<usize>,
    pub(super) dropped_siblings: Vec<NodeId>,
}

/// Paragraph-like elements: their own text is what scores.
fn is_paragraph_like(m: &Measure) -> bool {
    matches!(
        m.tag,
        Tag::Block | Tag::Pre | Tag::Cell { .. } | Tag::Quote | Tag::Main | Tag::Article
    )
}

/// The content of the page: the best-scoring container, with the siblings that
/// score alike; `None` when no paragraph scores anything.
pub(crate) fn score(doc: &Document, measured: &Measured, pass: Strictness) -> Option<Chosen> {
    let nodes = &measured.nodes;
    let scores = candidate_scores(doc, nodes, pass);
    let top = best_container(nodes, &scores)?;
    Some(with_siblings(doc, nodes, &scores, top))
}

/// Each element's score, `None` for one no paragraph scored: each paragraph
/// adds to its container and up to four ancestors above it, less at each level,
/// and a score is then cut by the element's link density.
fn candidate_scores(doc: &Document, nodes: &[Measure], pass: Strictness) -> Vec<Option<f32>> {
    let mut scores: Vec<Option<f32>> = vec![None; nodes.len()];
    let initial = |i: usize| -> f32 {
        let m = &nodes[i];
        let tag_weight = match m.tag {
            Tag::Block if !m.is_p => 5.0,
            Tag::Pre | Tag::Cell { .. } | Tag::Quote => 3.0,
            Tag::UnorderedList | Tag::OrderedList | Tag::ListItem => -3.0,
            Tag::Heading(_) => -5.0,
            _ => 0.0,
        };
        let class_weight = if pass.weigh_classes {
            element(doc, m.id).map_or(0, class_weight) as f32
        } else {
            0.0
        };
        tag_weight + class_weight
    };
    for (i, m) in nodes.iter().enumerate() {
        if !is_paragraph_like(m) || m.own_text < 25 {
            continue;
        }
        let content = 1.0 + m.own_commas as f32 + (m.own_text / 100).min(3) as f32;
        // A paragraph scores its container. Loose text beside blocks is a
        // paragraph of the element that holds it (Readability wraps it in a `<p>`).
        let mut ancestor = if m.is_p || !m.has_block_child {
            m.parent
        } else {
            Some(i)
        };
        for level in 0..5 {
            let Some(a) = ancestor else { break };
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                _ => level as f32 * 3.0,
            };
            let slot = scores[a].get_or_insert_with(|| initial(a));
            *slot += content / divider;
            ancestor = nodes[a].parent;
        }
    }
    for (i, slot) in scores.iter_mut().enumerate() {
        if let Some(score) = slot {
            *score *= 1.0 - nodes[i].link_density();
        }
    }
    scores
}

/// The index of the best container: the top score, or the ancestor several of
/// the best share, moved up while the parent scores about as well and past
/// only children.
fn best_container(nodes: &[Measure], scores: &[Option<f32>]) -> Option<usize> {
    let (mut top, top_score) = scores
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|s| (i, s)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;

    // Readability: several of the best candidates inside one ancestor means the
    // article is split across them; take the ancestor.
    let mut ranked: Vec<(usize, f32)> = scores
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|s| (i, s)))
        .filter(|&(i, s)| i != top && s >= top_score * 0.75)
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked.truncate(4);
    if ranked.len() >= 3 {
        let mut ancestor = nodes[top].parent;
        while let Some(a) = ancestor {
            let containing = ranked
                .iter()
                .filter(|&&(i, _)| is_ancestor(nodes, a, i))
                .count();
            if containing >= 3 {
                top = a;
                break;
            }
            ancestor = nodes[a].parent;
        }
    }
    // Move up while the parent scores about as well: the article's container,
    // not its largest section.
    let mut last = scores[top].unwrap_or(0.0);
    let threshold = last / 3.0;
    let mut parent = nodes[top].parent;
    while let Some(p) = parent {
        if nodes[p].parent.is_none() {
            break;
        }
        match scores[p] {
            None => {}
            Some(s) if s < threshold => break,
            Some(s) if s > last => {
                top = p;
                break;
            }
            Some(s) => last = s,
        }
        parent = nodes[p].parent;
    }
    // An only child says nothing its parent does not.
    while let Some(p) = nodes[top].parent {
        if nodes[p].parent.is_none() || children(nodes, p).count() != 1 {
            break;
        }
        top = p;
    }
    Some(top)
}

/// The chosen content around `top`: its parent with the siblings that score
/// alike (or are prose), or `top` alone when no sibling does.
fn with_siblings(doc: &Document, nodes: &[Measure], scores: &[Option<f32>], top: usize) -> Chosen {
    let top_score = scores[top].unwrap_or(0.0);
    let Some(parent) = nodes[top].parent else {
        return Chosen {
            root: nodes[top].id,
            included: vec![top],
            dropped_siblings: Vec::new(),
        };
    };
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = element(doc, nodes[top].id).and_then(|e| e.attr(Attr::Class));
    let mut included = Vec::new();
    let mut dropped = Vec::new();
    for sibling in children(nodes, parent) {
        let m = &nodes[sibling];
        let keep = sibling == top || {
            let bonus = match (
                top_class,
                element(doc, m.id).and_then(|e| e.attr(Attr::Class)),
            ) {
                (Some(a), Some(b)) if !a.is_empty() && a == b => top_score * 0.2,
                _ => 0.0,
            };
            scores[sibling].is_some_and(|s| s + bonus >= threshold)
                || (m.is_p
                    && ((m.text > 80 && m.link_density() < 0.25)
                        || (m.text > 0 && m.text <= 80 && m.link == 0)))
        };
        if keep {
            included.push(sibling);
        } else {
            dropped.push(m.id);
        }
    }
    if included.len() == 1 {
        return Chosen {
            root: nodes[top].id,
            included,
            dropped_siblings: Vec::new(),
        };
    }
    // Text directly in the parent (outside any child element) is not a sibling
    // element; it stays with the parent, which is what is converted.
    Chosen {
        root: nodes[parent].id,
        included,
        dropped_siblings: dropped,
    }
}

fn children(nodes: &[Measure], parent: usize) -> impl Iterator<Item = usize> + '_ {
    // Children come after their parent, in document order, before the parent's
    // next sibling; a scan from the parent finds them.
    nodes
        .iter()
        .enumerate()
        .skip(parent + 1)
        .take_while(move |(i, _)| is_ancestor(nodes, parent, *i))
        .filter(move |(_, m)| m.parent == Some(parent))
        .map(|(i, _)| i)
}

/// Whether `a` is a proper ancestor of `i`.
pub(crate) fn is_ancestor(nodes: &[Measure], a: usize, i: usize) -> bool {
    let mut p = nodes[i].parent;
    while let Some(x) = p {
        if x == a {
            return true;
        }
        if x < a {
            return false;
        }
        p = nodes[x].parent;
    }
    false
}

pub(super) fn element(doc: &Document, id: NodeId) -> Option<&Element> {
    doc.tree.get(id)?.value().element()
}

/// How many times the scored content's prose an ancestor must hold to be read
/// instead ([`prose_ancestor`]). On WCXB's dev split the ancestors that were
/// the article held 2.6 to 6 times as much (a buying guide in one section per
/// category, a column in blocks, a landing page in sections); at twice, pages
/// whose extra prose was a newsletter's sign-off or a reader's letters came in.
const PROSE_OVER_SCORED: f64 = 2.5;

/// An ancestor that is itself an article's text (at least half of it prose, at
/// most [`DENSE_MAX_LINK_DENSITY`] links) is read from this many times the
/// scored prose: the sections scoring left out are more of the same text (a
/// guide in one block per step). On WCXB's dev split such ancestors held 1.6 to
/// 2.4 times as much; a sign-off of readers' testimonials also came in at 1.6.
const DENSE_PROSE_OVER_SCORED: f64 = 1.6;
const DENSE_MAX_LINK_DENSITY: f32 = 0.1;
const DENSE_MIN_PROSE_SHARE: f64 = 0.5;

/// Ancestors looked at above the scored content.
const PROSE_LEVELS: usize = 6;

/// An ancestor whose links hold more of its text than this is a page's frame
/// (menus, teasers), not the article's.
const PROSE_MAX_LINK_DENSITY: f32 = 0.25;

/// The highest ancestor of `chosen`, within [`PROSE_LEVELS`], under the body,
/// and with every ancestor on the way at most [`PROSE_MAX_LINK_DENSITY`] links,
/// that holds [`PROSE_OVER_SCORED`] times the chosen content's prose (paragraphs
/// of 25 characters or more, mostly not links), or [`DENSE_PROSE_OVER_SCORED`]
/// times when the ancestor is mostly prose itself. Articles built of sections
/// (each a block of its own, under one wrapper) score one section.
pub(crate) fn prose_ancestor(measured: &Measured, chosen: &Chosen) -> Option<usize> {
    let nodes = &measured.nodes;
    let prose = prose(nodes);
    let first = *chosen.included.first()?;
    let mut at = if chosen.included.len() == 1 {
        first
    } else {
        nodes[first].parent?
    };
    let scored = prose[at];
    if scored == 0 {
        // Scoring chose no prose (a teaser, a list): nothing to measure against.
        return None;
    }
    let mut widest = None;
    for _ in 0..PROSE_LEVELS {
        let Some(parent) = nodes[at].parent else {
            break;
        };
        if nodes[parent].parent.is_none() || nodes[parent].link_density() > PROSE_MAX_LINK_DENSITY {
            break;
        }
        at = parent;
        let over = prose[at] as f64 / scored as f64;
        let dense = nodes[at].link_density() <= DENSE_MAX_LINK_DENSITY
            && prose[at] as f64 >= f64::from(nodes[at].text) * DENSE_MIN_PROSE_SHARE;
        if over >= PROSE_OVER_SCORED || dense && over >= DENSE_PROSE_OVER_SCORED {
            widest = Some(at);
        }
    }
    widest
}

/// Characters of prose under each node: its paragraph-like descendants' own
/// text, where they hold 25 characters or more, are mostly not links and are
/// not a teaser's (within three levels of a heading that is a link: a card
/// pointing to another post).
fn prose(nodes: &[Measure]) -> Vec<u64> {
    let mut card = vec![false; nodes.len()];
    for m in nodes {
        if matches!(m.tag, Tag::Heading(_))
            && m.text > 0
            && m.link_density() >= 0.8
            && let Some(parent) = m.parent
        {
            card[parent] = true;
        }
    }
    let teaser = |mut i: usize| {
        for _ in 0..3 {
            match nodes[i].parent {
                Some(parent) if card[parent] => return true,
                Some(parent) => i = parent,
                None => return false,
            }
        }
        false
    };
    let mut prose: Vec<u64> = nodes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let paragraph = m.is_p
                || (matches!(m.tag, Tag::Block | Tag::Pre | Tag::Quote) && !m.has_block_child);
            if paragraph && m.own_text >= 25 && m.link_density() < 0.3 && !teaser(i) {
                u64::from(m.own_text)
            } else {
                0
            }
        })
        .collect();
    // Descendants come after their parent: one backward sweep sums subtrees.
    for i in (1..nodes.len()).rev() {
        if let Some(parent) = nodes[i].parent {
            prose[parent] += prose[i];
        }
    }
    prose
}
