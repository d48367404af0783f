//! Threads: forum threads, Q&A pages and comment threads, where the
//! posts are the content. Article scoring picks one container, which on a thread
//! is one post; this extraction keeps every post, in order, with what each shows of
//! its author and date.
//!
//! 1. The posts: the largest group of repeated sibling blocks (`repeat`) that is
//!    mostly prose, not links. A group nested in one member of a larger group
//!    wins when it holds half of that group's prose or more (the page's layout
//!    columns repeat too, around the thread). Dialogs (a consent manager's
//!    preference centre, one prose block per kind of cookie) are set aside
//!    first.
//! 2. The thread: the posts' parent, widened to take in the container article
//!    scoring chose when both sit in a parent that holds little else, and then
//!    a lead post before it: a question above the list of its answers (up to
//!    two levels up, prose before and little after; three when the question
//!    is a post of the answers' own kind).
//! 3. Inside the thread, what names furniture outside the posts (menus, share
//!    bars, related threads), form controls and link lists go; inside a post
//!    everything visible stays, comment-named classes included, but for what
//!    the forum software says of the poster besides name and date (title,
//!    counts, signature).
//!
//! Containers the SRD drops for the name `comments` are read: on a thread they
//! hold the posts.
//!
//! A page whose scored container lies apart from the posts and holds more
//! text than all of them is an article with comments: `None`.
//!
//! A page whose visible thread is empty but whose `<noscript>` holds one (a
//! crawler view) is read from the `<noscript>` content. A page without repeated
//! posts gets `None`: the caller reads it as an article.

use std::collections::{HashMap, HashSet};

use ego_tree::NodeId;
use url::Url;

use super::super::article::measure::{Measure, measure};
use super::super::article::names::unseen_elements;
use super::super::article::names::{is_dialog, names_poster_details, style_hides};
use super::super::article::score::score;
use super::super::article::{Strictness, reveal_noscript};
use super::super::dom::{self, Document};
use super::super::{markdown, normalize_whitespace, root, title};
use super::blocks;
use super::repeat::{self, Group, common_ancestor, is_ancestor};
use super::visible::is_hidden;
use super::whole::{form_controls, link_lists};
use crate::extract::element::{Attr, Element};
use crate::vocabulary::{ExtractedDocument, PageType};

/// Posts have this many characters outside links, or more.
const MIN_POST_CHARS: u32 = 40;
/// A thread extraction shorter than this is retried on the `<noscript>` view.
const MIN_THREAD_CHARS: usize = 500;

/// A lead post (the question above a list of answers) has this many characters
/// outside links, or more.
const MIN_LEAD_CHARS: u32 = 100;
/// How many levels above the thread a lead post is looked for.
const LEAD_LEVELS: usize = 2;
/// How many levels above the thread a lead post is looked for when it is a post
/// of the posts' own kind: a forum that shows a question thread's first post in
/// a block of its own, beside the block of replies (XenForo's question threads).
const KINDRED_LEAD_LEVELS: usize = 3;

/// Images and hidden elements only: names are read after the posts are found.
const LOOSE: Strictness = Strictness {
    strip_unlikely: false,
    weigh_classes: true,
    prune: false,
};
const STRICT: Strictness = Strictness {
    strip_unlikely: true,
    weigh_classes: true,
    prune: true,
};

/// Whether containers the SRD drops for the name `comments` are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comments {
    /// On a page known to be a thread they hold the posts.
    Read,
    /// On a page classified as an article they are its comments, which stay out.
    Dropped,
}

/// The thread of a page as Markdown, or `None` when it has no repeated posts;
/// its blocks read by the block filter when `filter` is on.
pub(crate) fn extract(
    source: &dom::Source<'_>,
    final_url: &Url,
    comments: Comments,
    filter: blocks::Filter,
) -> Option<ExtractedDocument> {
    let read = |doc, noscript| read(doc, final_url, noscript, comments, filter);
    let visible = read(source.document(dom::Scripting::On), false);
    if visible
        .as_ref()
        .is_some_and(|d| d.markdown.chars().count() >= MIN_THREAD_CHARS)
        || !dom::Scripting::matters_for(source.html())
    {
        return visible;
    }
    let crawler_view = read(source.document(dom::Scripting::Off), true);
    match (visible, crawler_view) {
        (Some(v), Some(c)) if c.markdown.len() > v.markdown.len() * 2 => Some(c),
        (Some(v), _) => Some(v),
        (None, c) => c,
    }
}

/// The thread of a parsed page, its furniture removed: the page's survey and
/// the thread's element.
fn clear(doc: &mut Document, noscript: bool, comments: Comments) -> Option<(root::Survey, NodeId)> {
    let survey = root::survey(doc);
    let body = survey.candidates[5]?;
    if noscript {
        reveal_noscript(doc, body);
    }
    if comments == Comments::Read {
        reveal_comments(doc, body);
    }
    let unseen = unseen_elements(doc, body, LOOSE);
    doc.remove_all(&unseen);
    // A consent manager's preference centre repeats prose blocks (one per
    // kind of cookie) that would outweigh a short thread.
    let dialogs = doc.elements_under(body, |_, e| is_dialog(e));
    doc.remove_all(&dialogs);
    let measured = measure(doc, body);
    let nodes = &measured.nodes;
    let posts = posts(repeat::groups(doc, &measured, MIN_POST_CHARS), nodes)?;
    let parent = posts.parent;
    let mut thread = parent;
    let index: HashMap<NodeId, usize> = nodes.iter().enumerate().map(|(i, m)| (m.id, i)).collect();
    let index_of = |id: NodeId| index.get(&id).copied();
    if let Some(chosen) = score(doc, &measured, LOOSE).and_then(|c| index_of(c.root)) {
        let common = common_ancestor(nodes, chosen, parent);
        let disjoint = common != chosen && common != parent;
        let held = nodes[parent].text + if disjoint { nodes[chosen].text } else { 0 };
        if disjoint && repeat::prose(&nodes[chosen]) >= posts.prose
            || common == chosen && repeat::prose(&nodes[chosen]) >= posts.prose * 2
        {
            // More text apart from the posts than in them: an article with
            // comments below it, or with a list in it, read as an article.
            return None;
        }
        if common != parent && u64::from(nodes[common].text) * 4 <= u64::from(held) * 5 {
            thread = common;
        }
    }
    // Furniture by name, outside the posts.
    let members: HashSet<NodeId> = posts.members.iter().map(|&i| nodes[i].id).collect();
    let in_or_around_post = |id: NodeId| {
        let Some(i) = index_of(id) else { return true };
        members.contains(&id)
            || posts
                .members
                .iter()
                .any(|&m| is_ancestor(nodes, m, i) || is_ancestor(nodes, i, m))
    };
    let furniture: Vec<NodeId> = unseen_elements(doc, body, STRICT)
        .into_iter()
        .filter(|&id| !in_or_around_post(id))
        .collect();
    let menus = link_lists(&measured);
    let first_post = nodes[posts.members[0]].id;
    let thread_id = nodes[with_lead_post(doc, nodes, thread, first_post)].id;
    doc.remove_all(&furniture);
    doc.remove_all(&menus);
    let controls = form_controls(doc, thread_id);
    doc.remove_all(&controls);
    let details = doc.elements_under(thread_id, |_, e| names_poster_details(e));
    doc.remove_all(&details);
    Some((survey, thread_id))
}

fn read(
    mut doc: Document,
    final_url: &Url,
    noscript: bool,
    comments: Comments,
    filter: blocks::Filter,
) -> Option<ExtractedDocument> {
    let (survey, thread_id) = clear(&mut doc, noscript, comments)?;
    let body = survey.candidates[5]?;
    let mut context = filter_context(&doc, &survey);
    context.within = Some(thread_id);
    let boilerplate = blocks::boilerplate(&doc, &measure(&doc, body), &context, filter);
    doc.remove_all(&boilerplate);
    let base = root::base_url(&doc, &survey, final_url);
    let markdown = normalize_whitespace(&markdown::convert(doc.tree.get(thread_id)?, &base));
    if markdown.is_empty() {
        return None;
    }
    Some(ExtractedDocument {
        markdown,
        title: title(&doc, &survey),
        language: survey.language.clone(),
        page_type: None,
        page_starts: Vec::new(),
    })
}

/// `thread`, or its ancestor that also holds the post its posts answer: walking
/// up at most [`LEAD_LEVELS`] levels, the first ancestor whose children before
/// the thread's branch hold [`MIN_LEAD_CHARS`] of prose or more, under half of
/// their text in links, and whose children after it hold under a quarter of
/// its text. A question sits beside the list of its answers (Stack Exchange's
/// `#question` before `#answers`), which article scoring, choosing the longest
/// answer, does not take in. Past that, up to [`KINDRED_LEAD_LEVELS`], the
/// children before must also hold a post of the kind of `first_post` (same
/// element and first class).
fn with_lead_post(doc: &Document, nodes: &[Measure], thread: usize, first_post: NodeId) -> usize {
    let mut branch = thread;
    for level in 1..=KINDRED_LEAD_LEVELS {
        let Some(above) = nodes[branch].parent else {
            break;
        };
        let (mut before, mut links_before, mut after) = (0u32, 0u32, 0u32);
        // Nodes are in document order, so `above`'s children come after it.
        let children = || {
            nodes
                .iter()
                .enumerate()
                .skip(above + 1)
                .filter(move |(_, m)| m.parent == Some(above))
        };
        for (j, m) in children() {
            if j < branch {
                before += m.text;
                links_before += m.link;
            } else if j > branch {
                after += m.text;
            }
        }
        let lead = before.saturating_sub(links_before) >= MIN_LEAD_CHARS
            && u64::from(links_before) * 2 < u64::from(before)
            && u64::from(after) * 4 < u64::from(nodes[above].text);
        if lead && level > LEAD_LEVELS {
            let kind = post_kind(doc, first_post);
            let kindred = kind.is_some()
                && children().take_while(|&(j, _)| j < branch).any(|(_, m)| {
                    doc.tree.get(m.id).is_some_and(|node| {
                        node.descendants().any(|d| post_kind(doc, d.id()) == kind)
                    })
                });
            if kindred {
                return above;
            }
        } else if lead {
            return above;
        }
        branch = above;
    }
    thread
}

/// What kind of post an element is: its name and first class (`article`,
/// `message`), when it has a class.
fn post_kind(doc: &Document, id: NodeId) -> Option<(&str, &str)> {
    let e = doc.tree.get(id)?.value().element()?;
    let class = e.attr(Attr::Class)?.split_ascii_whitespace().next()?;
    Some((&*e.name.local, class))
}

/// What the block filter reads a thread's blocks beside.
fn filter_context(doc: &Document, survey: &root::Survey) -> blocks::Context {
    let content_root = root::select_root(doc, survey).map(|node| node.id());
    blocks::Context::new(doc, survey, content_root, PageType::Forum)
}

/// Each leaf block's text and features as the block filter reads them, in the
/// thread extraction of `html` (its visible view, comments read): what
/// `scripts/train_blocks.py` trains on.
#[cfg(any(test, feature = "internals"))]
pub(crate) fn block_rows(html: &str) -> Vec<(String, blocks::Row)> {
    let mut doc = dom::parse(html, dom::Scripting::On);
    let Some((survey, _)) = clear(&mut doc, false, Comments::Read) else {
        return Vec::new();
    };
    let Some(body) = survey.candidates[5] else {
        return Vec::new();
    };
    blocks::rows(&doc, &measure(&doc, body), &filter_context(&doc, &survey))
}

/// On a thread the comments are the content: containers the SRD removes only for
/// the boilerplate name `comments` (`<div id="comments">`, FR-WF-13) are read
/// again, unless they hide their content.
fn reveal_comments(doc: &mut Document, body: NodeId) {
    let ids = doc.elements_under(body, |_, e| dropped_comments(e));
    doc.restore_all(&ids);
}

/// Whether [`Comments::Read`] can read more of `source` than
/// [`Comments::Dropped`]: the page has a container [`reveal_comments`] reads
/// again, or a `<noscript>` whose crawler view may hold one.
pub(crate) fn has_comments(source: &dom::Source<'_>) -> bool {
    dom::Scripting::matters_for(source.html())
        || source
            .peek()
            .descendants()
            .any(|node| node.value().element().is_some_and(dropped_comments))
}

/// A container the SRD removed only for the boilerplate name `comments`, not
/// hiding its content.
fn dropped_comments(e: &Element) -> bool {
    let named = |value: Option<&str>| {
        value.is_some_and(|v| {
            v.split_ascii_whitespace()
                .any(|t| t.eq_ignore_ascii_case("comments"))
        })
    };
    e.removed
        && matches!(
            &*e.name.local,
            "div" | "section" | "ol" | "ul" | "article" | "main"
        )
        && (named(e.attr(Attr::Id)) || named(e.attr(Attr::Class)))
        && !is_hidden(e)
        && !e.attr(Attr::Style).is_some_and(style_hides)
}

/// The group of posts: the most prose among groups that are not link lists,
/// then, while one holds half of it or more, the largest group nested in one of
/// its members.
fn posts(groups: Vec<Group>, nodes: &[super::super::article::measure::Measure]) -> Option<Group> {
    let candidates: Vec<Group> = groups
        .into_iter()
        .filter(|g| g.link_density() <= 0.5)
        .collect();
    let mut best = candidates
        .iter()
        .max_by_key(|g| (g.prose, std::cmp::Reverse(g.parent)))?;
    loop {
        let nested = candidates
            .iter()
            .filter(|g| {
                g.substantial >= 3
                    && u64::from(g.prose) * 2 >= u64::from(best.prose)
                    && best
                        .members
                        .iter()
                        .any(|&m| m == g.parent || is_ancestor(nodes, m, g.parent))
            })
            .max_by_key(|g| (g.prose, std::cmp::Reverse(g.parent)));
        match nested {
            Some(g) => best = g,
            None => return Some(best.clone()),
        }
    }
}
