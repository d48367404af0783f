//! Readability's conditional cleaning, plus our furniture and label rules, inside
//! the chosen content.

use ego_tree::NodeId;

use super::Strictness;
use super::measure::{Measure, Measured};
use super::names::{FURNITURE_MAX_CHARS, class_weight, is_label, names_furniture};
use super::score::{element, is_ancestor};
use crate::extract::dom::Document;
use crate::extract::element::Tag;
use crate::extract::root;

/// Readability's conditional cleaning inside the chosen content: tables, lists and
/// containers that hold mostly links, images or form fields, or weigh negative.
pub(super) fn prune(
    doc: &Document,
    measured: &Measured,
    included: &[usize],
    pass: Strictness,
) -> Vec<NodeId> {
    let nodes = &measured.nodes;
    let mut dropped = Vec::new();
    for &top in included {
        let end = nodes
            .iter()
            .enumerate()
            .skip(top + 1)
            .find(|(i, _)| !is_ancestor(nodes, top, *i))
            .map_or(nodes.len(), |(i, _)| i);
        let mut skip_below: Option<usize> = None;
        for i in top + 1..end {
            if let Some(d) = skip_below {
                if is_ancestor(nodes, d, i) {
                    continue;
                }
                skip_below = None;
            }
            let m = &nodes[i];
            let Some(element) = element(doc, m.id) else {
                continue;
            };
            let furniture = m.text < FURNITURE_MAX_CHARS && names_furniture(element);
            let label = m.text <= 40
                && m.tag.is_block()
                && doc
                    .tree
                    .get(m.id)
                    .is_some_and(|node| is_label(&root::normalized_text(node)));
            let container = matches!(
                m.tag,
                Tag::Table | Tag::UnorderedList | Tag::OrderedList | Tag::Block
            ) && !m.is_p;
            if furniture || label || (container && should_drop(doc, m, pass)) {
                dropped.push(m.id);
                skip_below = Some(i);
            }
        }
    }
    dropped
}

fn should_drop(doc: &Document, m: &Measure, pass: Strictness) -> bool {
    let weight = if pass.weigh_classes {
        element(doc, m.id).map_or(0, class_weight)
    } else {
        0
    };
    if weight < 0 {
        return true;
    }
    if m.commas >= 10 {
        return false;
    }
    let is_list = matches!(m.tag, Tag::UnorderedList | Tag::OrderedList);
    let p = m.paragraphs as f32;
    let img = m.images as f32;
    let li = m.items as f32 - 100.0;
    let link_density = m.link_density();
    let heading_density = if m.text == 0 {
        0.0
    } else {
        m.heading_text as f32 / m.text as f32
    };
    (img > 1.0 && p / img < 0.5)
        || (!is_list && li > p)
        || (m.inputs as f32 > (p / 3.0).floor())
        || (!is_list
            && heading_density < 0.9
            && m.text < 25
            && (m.images == 0 || m.images > 2)
            && link_density > 0.0)
        || (!is_list && weight < 25 && link_density > 0.2)
        || (weight >= 25 && link_density > 0.5)
        || (m.embeds == 1 && m.text < 75)
        || m.embeds > 1
}
