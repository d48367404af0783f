//! Article extraction (an extension; `extraction = "article"`): the page's main
//! content chosen by scoring, then handed to the same Markdown converter as the
//! SRD algorithm, so links, tables, code and every response rule stay the same.
//!
//! The SRD algorithm (FR-WF-13) keeps everything outside the boilerplate it names,
//! which on real news pages is about twice the article's text. Article mode starts
//! from the same parse and the same boilerplate removal (hidden elements stay
//! removed: hidden text is a prompt-injection channel), then:
//!
//! 1. [`measure`]: one walk of the body records, per element, its visible text,
//!    link text, commas and the counts the pruning rules read.
//! 2. [`score`]: every paragraph-like element with 25 or more characters of its own
//!    text scores `1 + commas + min(chars / 100, 3)`, given to its parent in full,
//!    its grandparent in half and up to three more ancestors in smaller shares
//!    (Readability's scheme); an ancestor starts from its tag's and class's weight,
//!    and ends scaled by `1 - link density`. The best container wins, moved up to
//!    an ancestor that holds as much, and merged with siblings that score alike.
//! 3. [`prune`]: inside the chosen content, containers that look like lists of
//!    links, image galleries, forms or widgets are dropped.
//!
//! Passes that find too little text retry with the looser settings, as
//! Readability does, and the longest result wins; when nothing scores at all the
//! caller falls back to the SRD algorithm.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use ego_tree::NodeId;
use url::Url;

use super::clean::{self, Tag};
use super::dom::{self, Attr, Document, Element, Node};
use super::{markdown, normalize_whitespace, root};
use crate::document::ExtractedDocument;

/// A pass whose Markdown has fewer characters than this is retried with looser
/// settings (Readability's `charThreshold`).
const MIN_ARTICLE_CHARS: usize = 500;

/// The main content of `html` as Markdown, or `None` when no block scores as
/// content (the caller falls back to the SRD algorithm).
pub fn extract(html: &str, final_url: &Url) -> Option<ExtractedDocument> {
    // (substance, document) of each pass run.
    let mut attempts: Vec<(usize, ExtractedDocument)> = Vec::new();
    for pass in Pass::ALL {
        let Some(document) = extract_pass(html, final_url, pass) else {
            continue;
        };
        if attempts.is_empty() && document.markdown.chars().count() >= MIN_ARTICLE_CHARS {
            return Some(document);
        }
        attempts.push((substance(&document.markdown), document));
    }
    // The strict pass found little: a looser pass wins only when it finds clearly
    // more prose, not just the furniture the strict pass removed.
    let longest = attempts.iter().map(|(chars, _)| *chars).max()?;
    attempts
        .into_iter()
        .find(|(chars, _)| *chars * 5 >= longest * 4)
        .map(|(_, document)| document)
}

/// Characters in paragraphs of 80 or more: prose, which furniture (bylines,
/// labels, share links) rarely is.
fn substance(markdown: &str) -> usize {
    markdown
        .split("\n\n")
        .map(|block| block.chars().count())
        .filter(|&chars| chars >= 80)
        .sum()
}

/// How strict one attempt is; later passes are looser.
#[derive(Debug, Clone, Copy)]
struct Pass {
    /// Remove elements whose class or id looks like page furniture before scoring.
    strip_unlikely: bool,
    /// Let class and id names weigh on scores and pruning.
    weigh_classes: bool,
    /// Drop link lists, galleries and widgets inside the chosen content.
    prune: bool,
}

impl Pass {
    const ALL: [Pass; 3] = [
        Pass {
            strip_unlikely: true,
            weigh_classes: true,
            prune: true,
        },
        Pass {
            strip_unlikely: false,
            weigh_classes: true,
            prune: true,
        },
        Pass {
            strip_unlikely: false,
            weigh_classes: false,
            prune: false,
        },
    ];
}

fn extract_pass(html: &str, final_url: &Url, pass: Pass) -> Option<ExtractedDocument> {
    let mut doc = dom::parse_without_scripting(html);
    let survey = root::survey(&doc);
    let body = survey.candidates[5]?;
    reveal_noscript(&mut doc, body);
    let title = super::title(&doc, &survey);
    let language = survey.language.clone();
    let base = root::base_url(&doc, &survey, final_url);
    let unseen = unseen_elements(&doc, body, pass);
    remove_all(&mut doc, &unseen);
    let measured = measure(&doc, body);
    let chosen = score(&doc, &measured, pass)?;
    let mut drop = chosen.dropped_siblings;
    if pass.prune {
        drop.extend(prune(&doc, &measured, &chosen.included, pass));
    }
    drop.extend(title_duplicate(&doc, chosen.root, title.as_deref()));
    remove_all(&mut doc, &drop);
    let root = doc.tree.get(chosen.root)?;
    let markdown = normalize_whitespace(&markdown::convert(root, &base));
    if markdown.is_empty() {
        return None;
    }
    Some(ExtractedDocument {
        markdown,
        title,
        language,
    })
}

/// `<noscript>` content is what a reader without JavaScript sees, and some sites
/// put their whole crawler view there (Discourse). The SRD removes it by name;
/// article mode keeps it unless its attributes hide it, and scoring decides.
fn reveal_noscript(doc: &mut Document, body: NodeId) {
    let Some(body) = doc.tree.get(body) else {
        return;
    };
    let noscripts: Vec<NodeId> = body
        .descendants()
        .filter(|node| {
            // Only content parsed as markup: past the parser's element budget a
            // `<noscript>` is kept as raw text, which must never read as prose.
            node.value().element().is_some_and(|e| {
                e.name.local == html5ever::local_name!("noscript")
                    && !clean::is_hidden_or_boilerplate_named(e)
            }) && node
                .children()
                .any(|child| child.value().element().is_some())
        })
        .map(|node| node.id())
        .collect();
    for id in noscripts {
        if let Some(mut node) = doc.tree.get_mut(id)
            && let Node::Element(element) = node.value()
        {
            element.removed = false;
        }
    }
}

fn remove_all(doc: &mut Document, ids: &[NodeId]) {
    for &id in ids {
        if let Some(mut node) = doc.tree.get_mut(id)
            && let Node::Element(element) = node.value()
        {
            element.removed = true;
        }
    }
}

/// Per-element measurements of the cleaned body, in document order (a parent
/// before its descendants).
struct Measured {
    nodes: Vec<Measure>,
}

#[derive(Debug, Clone)]
struct Measure {
    id: NodeId,
    /// Index of the parent element in [`Measured::nodes`], `None` for the body.
    parent: Option<usize>,
    tag: Tag,
    is_p: bool,
    is_input: bool,
    /// Has a block-level child element: its own text is loose text beside blocks.
    has_block_child: bool,
    /// Visible characters of the subtree (whitespace runs count as one).
    text: u32,
    /// Of which inside links.
    link: u32,
    /// Commas of the subtree.
    commas: u32,
    /// Characters and commas of the text this element holds itself, or through
    /// inline descendants (not through nested blocks): a paragraph's own words.
    own_text: u32,
    own_commas: u32,
    /// Descendant counts the pruning rules read.
    paragraphs: u32,
    images: u32,
    items: u32,
    inputs: u32,
    embeds: u32,
    heading_text: u32,
}

impl Measure {
    fn link_density(&self) -> f32 {
        if self.text == 0 {
            0.0
        } else {
            self.link as f32 / self.text as f32
        }
    }
}

/// Whether an element is entered by the measuring walk (what the converter would
/// render).
fn is_rendered(element: &Element) -> bool {
    !(element.removed || matches!(element.tag, Tag::Skip | Tag::Head | Tag::Title))
}

fn measure(doc: &Document, body: NodeId) -> Measured {
    let mut nodes: Vec<Measure> = Vec::new();
    // Open elements: (index into nodes, index of the nearest block element).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut links = 0usize;
    let Some(body) = doc.tree.get(body) else {
        return Measured { nodes };
    };
    let mut node = body;
    'next: loop {
        let descend = match node.value() {
            Node::Text(text) => {
                if let Some(&(top, owner)) = stack.last() {
                    let (chars, commas) = count_text(text);
                    let m = &mut nodes[top];
                    m.text += chars;
                    m.commas += commas;
                    if links > 0 {
                        m.link += chars;
                    }
                    nodes[owner].own_text += chars;
                    nodes[owner].own_commas += commas;
                }
                false
            }
            Node::Element(element) if is_rendered(element) => {
                let parent = stack.last().map(|&(index, _)| index);
                let index = nodes.len();
                let owner = match stack.last() {
                    Some(&(_, owner)) if !element.tag.is_block() => owner,
                    _ => index,
                };
                nodes.push(Measure {
                    id: node.id(),
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
                stack.push((index, owner));
                if element.tag == Tag::Link {
                    links += 1;
                }
                true
            }
            _ => false,
        };
        if descend {
            if let Some(child) = node.first_child() {
                node = child;
                continue 'next;
            }
            close(&mut nodes, &mut stack, &mut links);
        }
        loop {
            if node.id() == body.id() {
                break 'next;
            }
            if let Some(sibling) = node.next_sibling() {
                node = sibling;
                continue 'next;
            }
            match node.parent() {
                Some(parent) => {
                    node = parent;
                    close(&mut nodes, &mut stack, &mut links);
                }
                None => break 'next,
            }
        }
    }
    Measured { nodes }
}

/// Leaves the innermost open element: its totals join its parent's.
fn close(nodes: &mut [Measure], stack: &mut Vec<(usize, usize)>, links: &mut usize) {
    let Some((index, _)) = stack.pop() else {
        return;
    };
    let child = nodes[index].clone();
    if child.tag == Tag::Link {
        *links = links.saturating_sub(1);
    }
    let Some(parent) = child.parent else {
        return;
    };
    let p = &mut nodes[parent];
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

/// The chosen content: the element converted, and which of its children (when it
/// is the parent of merged siblings) are left out.
struct Chosen {
    root: NodeId,
    /// Indexes (into [`Measured::nodes`]) of the elements whose subtrees are the
    /// content.
    included: Vec<usize>,
    dropped_siblings: Vec<NodeId>,
}

/// Paragraph-like elements: their own text is what scores.
fn is_paragraph_like(m: &Measure) -> bool {
    matches!(
        m.tag,
        Tag::Block | Tag::Pre | Tag::Cell { .. } | Tag::Quote | Tag::Main | Tag::Article
    )
}

fn score(doc: &Document, measured: &Measured, pass: Pass) -> Option<Chosen> {
    let nodes = &measured.nodes;
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

    let top_score = scores[top].unwrap_or(0.0);
    let Some(parent) = nodes[top].parent else {
        return Some(Chosen {
            root: nodes[top].id,
            included: vec![top],
            dropped_siblings: Vec::new(),
        });
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
        return Some(Chosen {
            root: nodes[top].id,
            included,
            dropped_siblings: Vec::new(),
        });
    }
    // Text directly in the parent (outside any child element) is not a sibling
    // element; it stays with the parent, which is what is converted.
    Some(Chosen {
        root: nodes[parent].id,
        included,
        dropped_siblings: dropped,
    })
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
fn is_ancestor(nodes: &[Measure], a: usize, i: usize) -> bool {
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

fn element(doc: &Document, id: NodeId) -> Option<&Element> {
    doc.tree.get(id)?.value().element()
}

/// Readability's class and id weight: -25 for each of class and id that names
/// furniture, +25 for each that names content.
fn class_weight(element: &Element) -> i32 {
    let mut weight = 0;
    for value in [element.attr(Attr::Class), element.attr(Attr::Id)]
        .into_iter()
        .flatten()
    {
        if NEGATIVE_NAMES.is_in(value) {
            weight -= 25;
        }
        if POSITIVE_NAMES.is_in(value) {
            weight += 25;
        }
    }
    weight
}

/// Class or id fragments of page furniture (Readability's `negative`).
const NEGATIVE: &[&str] = &[
    "-ad-",
    "hidden",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "footer",
    "gdpr",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "widget",
];
/// Class or id fragments of content (Readability's `positive`).
const POSITIVE: &[&str] = &[
    "article",
    "body",
    "content",
    "entry",
    "hentry",
    "h-entry",
    "main",
    "page",
    "pagination",
    "post",
    "text",
    "blog",
    "story",
];
/// Class or id fragments of elements that are almost never content (Readability's
/// `unlikelyCandidates`) ...
const UNLIKELY: &[&str] = &[
    "-ad-",
    "ai2html",
    "banner",
    "breadcrumbs",
    "combx",
    "comment",
    "community",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "related",
    "remark",
    "replies",
    "rss",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "supplemental",
    "ad-break",
    "agegate",
    "pagination",
    "pager",
    "popup",
    "yom-remote",
];
/// ... unless they also name a content container (`okMaybeItsACandidate`).
const MAYBE_CANDIDATE: &[&str] = &[
    "and", "article", "body", "column", "content", "main", "mathjax", "shadow",
];
/// ARIA roles of page furniture.
const UNLIKELY_ROLES: &[&str] = &[
    "menu",
    "menubar",
    "complementary",
    "navigation",
    "alert",
    "alertdialog",
    "dialog",
];

/// A case-insensitive matcher for any of a list of fragments.
struct Fragments(LazyLock<AhoCorasick>);

impl Fragments {
    const fn new(build: fn() -> AhoCorasick) -> Fragments {
        Fragments(LazyLock::new(build))
    }

    fn is_in(&self, haystack: &str) -> bool {
        self.0.is_match(haystack)
    }
}

fn matcher(needles: &[&str]) -> AhoCorasick {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(needles)
        .expect("fixed fragment lists build")
}

static NEGATIVE_NAMES: Fragments = Fragments::new(|| matcher(NEGATIVE));
static POSITIVE_NAMES: Fragments = Fragments::new(|| matcher(POSITIVE));
static UNLIKELY_NAMES: Fragments = Fragments::new(|| matcher(UNLIKELY));
static MAYBE_NAMES: Fragments = Fragments::new(|| matcher(MAYBE_CANDIDATE));

/// Elements of the body the article leaves out before scoring: images and
/// captions (pictures are not text, and their captions and credits are not the
/// article's), elements an inline style hides, and, in the strict pass, those whose
/// class or id (substring, unlike the SRD's whole tokens) or role names page
/// furniture.
fn unseen_elements(doc: &Document, body: NodeId, pass: Pass) -> Vec<NodeId> {
    let Some(body) = doc.tree.get(body) else {
        return Vec::new();
    };
    body.descendants()
        .filter(|node| {
            let Some(element) = node.value().element() else {
                return false;
            };
            if element.removed || matches!(element.tag, Tag::Body | Tag::Html) {
                return false;
            }
            if element.tag == Tag::Image
                || element.name.local == html5ever::local_name!("figcaption")
                || element.attr(Attr::Style).is_some_and(style_hides)
            {
                return true;
            }
            if !pass.strip_unlikely || matches!(element.tag, Tag::Link | Tag::Main | Tag::Article) {
                return false;
            }
            if element.attr(Attr::Role).is_some_and(|role| {
                UNLIKELY_ROLES
                    .iter()
                    .any(|r| role.trim().eq_ignore_ascii_case(r))
            }) {
                return true;
            }
            let names = [element.attr(Attr::Class), element.attr(Attr::Id)];
            names.iter().flatten().any(|v| UNLIKELY_NAMES.is_in(v))
                && !names.iter().flatten().any(|v| MAYBE_NAMES.is_in(v))
        })
        .map(|node| node.id())
        .collect()
}

/// Whether an inline style hides the element (`display: none`,
/// `visibility: hidden`).
fn style_hides(style: &str) -> bool {
    style.split(';').any(|declaration| {
        let Some((property, value)) = declaration.split_once(':') else {
            return false;
        };
        let (property, value) = (property.trim(), value.trim());
        (property.eq_ignore_ascii_case("display") && value.eq_ignore_ascii_case("none"))
            || (property.eq_ignore_ascii_case("visibility") && value.eq_ignore_ascii_case("hidden"))
    })
}

/// Words of a class or id that name small page furniture around an article's text:
/// bylines, dates, captions, share bars, tag lists, promotions. Matched as whole
/// words of the name (split at anything not a letter or digit), so `headline` is
/// not `ad` and `update` is not `date`.
const FURNITURE_WORDS: &[&str] = &[
    "ad",
    "ads",
    "advert",
    "advertisement",
    "author",
    "authors",
    "bio",
    "breadcrumb",
    "breadcrumbs",
    "byline",
    "caption",
    "carousel",
    "comment",
    "comments",
    "cookie",
    "copyright",
    "credit",
    "credits",
    "date",
    "dateline",
    "disclaimer",
    "gallery",
    "hidden",
    "login",
    "meta",
    "modal",
    "newsletter",
    "outbrain",
    "popular",
    "popup",
    "print",
    "promo",
    "recommended",
    "related",
    "share",
    "sharing",
    "signup",
    "slideshow",
    "social",
    "sponsor",
    "sponsored",
    "subscribe",
    "subscription",
    "tag",
    "tags",
    "taboola",
    "timestamp",
    "toolbar",
    "trending",
    "widget",
];

/// Furniture is short: a name match on a longer element is more likely a wrapper
/// of the article itself (`article-tags-and-body`).
const FURNITURE_MAX_CHARS: u32 = 400;

fn names_furniture(element: &Element) -> bool {
    [element.attr(Attr::Class), element.attr(Attr::Id)]
        .into_iter()
        .flatten()
        .flat_map(|name| name.split(|c: char| !c.is_ascii_alphanumeric()))
        .any(|word| FURNITURE_WORDS.iter().any(|f| f.eq_ignore_ascii_case(word)))
}

/// Short blocks whose whole text is a label of the page, not of the article.
fn is_label(text: &str) -> bool {
    const LABELS: &[&str] = &[
        "advertisement",
        "advertising",
        "ad",
        "ads",
        "sponsored",
        "caption",
        "close",
        "share",
        "share this",
        "share this article",
        "share on facebook",
        "share on twitter",
        "tweet",
        "email",
        "print",
        "comments",
        "read more",
        "continue reading",
        "related",
        "related articles",
        "related stories",
        "more",
        "loading",
        "loading...",
        "photo",
        "video",
        "image",
        "story continues below advertisement",
        "scroll to continue",
    ];
    let text = text.trim().trim_end_matches(':').trim();
    if LABELS.iter().any(|l| l.eq_ignore_ascii_case(text)) {
        return true;
    }
    // "Image 1 of 8", "1 of 4", "Photo 2/5".
    let words: Vec<&str> = text.split_whitespace().collect();
    matches!(words.as_slice(), [.., n, "of", m] if n.parse::<u32>().is_ok() && m.parse::<u32>().is_ok())
        && words.len() <= 4
}

/// Readability's conditional cleaning inside the chosen content: tables, lists and
/// containers that hold mostly links, images or form fields, or weigh negative.
fn prune(doc: &Document, measured: &Measured, included: &[usize], pass: Pass) -> Vec<NodeId> {
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

fn should_drop(doc: &Document, m: &Measure, pass: Pass) -> bool {
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

/// The first heading of the content when it repeats the page title (the response
/// carries the title in its own field).
fn title_duplicate(doc: &Document, root: NodeId, title: Option<&str>) -> Vec<NodeId> {
    let (Some(title), Some(root)) = (title, doc.tree.get(root)) else {
        return Vec::new();
    };
    let heading = root.descendants().find(|node| {
        node.value()
            .element()
            .is_some_and(|e| is_rendered(e) && matches!(e.tag, Tag::Heading(1 | 2)))
    });
    let Some(heading) = heading else {
        return Vec::new();
    };
    let text = root::normalized_text(heading);
    let similar = !text.is_empty()
        && (title == text || title.contains(&text) && text.len() * 2 > title.len());
    if similar {
        vec![heading.id()]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{ExtractionMode, extract_html, extract_html_with};

    fn url() -> Url {
        Url::parse("https://example.com/news/story").unwrap()
    }

    fn article(html: &str) -> String {
        extract(html, &url()).expect("article content").markdown
    }

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/article/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn assert_has(markdown: &str, wanted: &[&str]) {
        for text in wanted {
            assert!(markdown.contains(text), "missing {text:?} in:\n{markdown}");
        }
    }

    fn assert_lacks(markdown: &str, unwanted: &[&str]) {
        for text in unwanted {
            assert!(
                !markdown.contains(text),
                "unexpected {text:?} in:\n{markdown}"
            );
        }
    }

    const STORY: &str = r#"<html><head><title>River towns clear mud - Daily</title></head><body>
        <div class="topbar"><a href="/">Daily</a> <a href="/world">World</a> <a href="/sport">Sport</a></div>
        <div class="page">
          <div class="story">
            <h1>River towns clear mud</h1>
            <div class="byline">By Ana Ruiz, November 3, 2025</div>
            <figure><img src="/flood.jpg" alt="A flooded street"><figcaption>A flooded street in Ost. Photo: Jan Berg</figcaption></figure>
            <p>Residents of three river towns began clearing mud from their homes on Thursday, a week after the highest water in four decades forced thousands to leave.</p>
            <div class="share-bar"><a href="/s/fb">Facebook</a> <a href="/s/tw">Twitter</a></div>
            <p>Engineers said the dikes held where they had been rebuilt after 2013, and failed where the work had been postponed, flooding the old town and the station.</p>
            <p>Advertisement</p>
            <p>The regional government promised emergency payments within two weeks, and insurers said claims would be handled by phone to spare residents the trip.</p>
          </div>
          <div class="more-stories"><h3>Most read</h3><ul><li><a href="/a">Budget talks stall</a></li><li><a href="/b">Rail strike ends</a></li><li><a href="/c">Storm warning</a></li></ul></div>
        </div>
        <div class="copyright">Daily Media Group, all rights reserved</div>
        </body></html>"#;

    #[test]
    fn finds_the_story_and_leaves_the_furniture_out() {
        let markdown = article(STORY);
        assert_has(
            &markdown,
            &[
                "Residents of three river towns",
                "Engineers said the dikes held",
                "The regional government promised",
            ],
        );
        assert_lacks(
            &markdown,
            &[
                "By Ana Ruiz",
                "Photo: Jan Berg",
                "flood.jpg",
                "Facebook",
                "Advertisement",
                "Most read",
                "Budget talks",
                "World",
                "all rights reserved",
                // The heading repeats the title, which the response carries.
                "# River towns",
            ],
        );
    }

    #[test]
    fn srd_mode_is_unchanged_and_a_page_without_content_falls_back() {
        let srd = extract_html_with(STORY, &url(), ExtractionMode::Srd).unwrap();
        assert_eq!(srd.document, extract_html(STORY, &url()).unwrap());
        assert!(!srd.article_fell_back);
        let tiny = "<html><body><p>Hi there</p></body></html>";
        assert_eq!(extract(tiny, &url()), None);
        let fell_back = extract_html_with(tiny, &url(), ExtractionMode::Article).unwrap();
        assert!(fell_back.article_fell_back);
        assert_eq!(fell_back.document, extract_html(tiny, &url()).unwrap());
    }

    #[test]
    fn hidden_text_never_survives() {
        let paragraph = "<p>Engineers said the dikes held where they had been rebuilt, and failed where the work had been postponed, flooding the old town.</p>";
        let html = format!(
            "<body><article>{paragraph}{paragraph}\
             <p hidden>INJECTED one</p><div aria-hidden=\"true\"><p>INJECTED two, with, commas, to, score, high, and, long, enough, text, to, count, as, a, paragraph.</p></div>\
             <p style=\"color: red; DISPLAY : none\">INJECTED three</p><span style=\"visibility:hidden\">INJECTED four</span>\
             <noscript hidden><p>INJECTED five</p></noscript>{paragraph}</article></body>"
        );
        let markdown = article(&html);
        assert_has(&markdown, &["Engineers said the dikes held"]);
        assert_lacks(&markdown, &["INJECTED"]);
    }

    #[test]
    fn a_forum_thread_in_noscript_is_read_where_srd_mode_finds_nothing() {
        let html = fixture("forum-discourse.html");
        let srd = extract_html(&html, &url()).unwrap_err();
        assert_eq!(srd.details["error"], "no_extractable_content");
        let markdown = article(&html);
        assert_has(
            &markdown,
            &[
                "Since upgrading to 2.4 the cache directory grows",
                "Is eviction per process?",
                "Eviction runs in each process",
                "Upgrading to 2.5 fixed it",
            ],
        );
        assert_lacks(
            &markdown,
            &["Powered by Discourse", "Categories", "FAQ/Guidelines"],
        );
    }

    #[test]
    fn a_docs_page_keeps_its_tables_code_and_lists() {
        let markdown = article(&fixture("docs-reference.html"));
        assert_has(
            &markdown,
            &[
                "A retry policy decides",
                "| `Exponential(n, base)` | n | base, 2 base, 4 base, with jitter |",
                "```rust\nlet client = Client::builder()",
                "- Responses with status 4xx, except 408 and 429.",
                "## Errors that are never retried",
                "[Timeouts](https://example.com/guide/timeouts)",
            ],
        );
        assert_lacks(
            &markdown,
            &["Install", "Proxies", "Previous: Connecting", "Copyright"],
        );
    }

    #[test]
    fn a_product_page_keeps_description_price_and_specifications() {
        let markdown = article(&fixture("product.html"));
        assert_has(
            &markdown,
            &[
                "$149.00",
                "A 40-litre pack for long day hikes",
                "The main compartment opens from the top",
                "| Back length | 45 to 52 cm, adjustable |",
            ],
        );
        assert_lacks(
            &markdown,
            &[
                "You may also like",
                "Summit 30L",
                "Packs",
                "Sign in",
                "Returns",
            ],
        );
    }

    #[test]
    fn a_listing_keeps_every_result_and_drops_the_filters() {
        let markdown = article(&fixture("listing.html"));
        for name in ["reqwest", "ureq", "hyper", "isahc"] {
            assert_has(
                &markdown,
                &[&format!("[{name}](https://example.com/pkg/{name})")],
            );
        }
        assert_has(&markdown, &["A practical HTTP client built on libcurl"]);
        assert_lacks(
            &markdown,
            &["Most downloads", "Recently updated", "Log in", "volunteers"],
        );
    }

    #[test]
    fn a_service_page_keeps_every_section() {
        let markdown = article(&fixture("service.html"));
        assert_has(
            &markdown,
            &[
                "# Know your site is down",
                "### Checks from six regions",
                "### Status pages",
                "### Alert routing",
                "| Team | 100 | $49 per month |",
            ],
        );
        assert_lacks(&markdown, &["Start free trial", "Terms", "Privacy"]);
    }

    #[test]
    fn labels_and_furniture_words_are_matched_whole() {
        assert!(is_label("Advertisement"));
        assert!(is_label("Image 1 of 8"));
        assert!(is_label("2 of 4"));
        assert!(!is_label("One of the towns"));
        assert!(style_hides("display:none"));
        assert!(style_hides("color: red; Display : None"));
        assert!(!style_hides("display: block"));
        for (class, furniture) in [
            ("article-byline", true),
            ("share_bar", true),
            ("Photo-Caption", true),
            ("headline", false),
            ("update-box", false),
            ("story-body", false),
        ] {
            let doc = dom::parse(&format!("<div class='{class}'>x</div>"));
            let div = doc
                .descendants()
                .filter_map(|n| n.value().element())
                .find(|e| e.tag == Tag::Block)
                .unwrap();
            assert_eq!(names_furniture(div), furniture, "{class}");
        }
    }
}
