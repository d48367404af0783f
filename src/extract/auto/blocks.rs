//! The learned block filter: after the whole-page extraction has removed
//! the furniture its rules name, gradient-boosted trees read each remaining leaf block
//! (a paragraph, heading, list item or cell holding text) and drop the blocks
//! it reads as boilerplate: shipping and seller boxes beside a product, "Loading"
//! placeholders, per-card calls to act, a landing page's badges.
//!
//! The model is gradient-boosted trees over the block's features ([`Dense`]
//! and four hashed groups): its length, link density, punctuation and place on
//! the page, how far up the tree it meets the page's main text and its `<h1>`,
//! the elements around it, and hashed tokens of its class names, of its nearest
//! heading and of its own words when it is short. The trees (`model.rs`) are
//! trained by `scripts/train_blocks.py` on WCXB's dev split only, from the
//! features `cargo bench --bench wcxb` writes with `WCXB_BLOCKS`; the script
//! says how to retrain them, and which page types it filters.

use std::collections::HashMap;
use std::sync::LazyLock;

use ego_tree::NodeId;
use html5ever::{LocalName, local_name};

use super::super::article::measure::{Measure, Measured};
use super::super::dom::{Document, Node};
use super::super::element::{Attr, Tag};
use super::super::root::{Survey, collapsed_text};
use super::super::title;
use crate::vocabulary::PageType;

mod forest;
mod model;

use forest::{Forest, TreeNode};

/// The model's trees, laid out once for the walk.
static FOREST: LazyLock<Forest> = LazyLock::new(|| Forest::new(model::BASELINE, model::TREES));

/// What a block is read beside: the page's type, the SRD's content root and
/// the page title's words.
pub(crate) struct Context {
    pub(crate) page_type: PageType,
    pub(crate) content_root: Option<NodeId>,
    /// The title's words, lowercased, sorted and deduplicated (a title has
    /// few: a binary search beats hashing each block's words).
    pub(crate) title_words: Vec<String>,
    /// The element the extraction returns: only its blocks are judged (all the
    /// body's blocks are read for their places on the page). `None`: all.
    pub(crate) within: Option<NodeId>,
}

impl Context {
    /// The context of a page of `page_type` whose survey is `survey`.
    pub(crate) fn new(
        doc: &Document,
        survey: &Survey,
        content_root: Option<NodeId>,
        page_type: PageType,
    ) -> Context {
        let mut title_words: Vec<String> = title(doc, survey)
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        title_words.sort_unstable();
        title_words.dedup();
        Context {
            page_type,
            content_root,
            title_words,
            within: None,
        }
    }
}

/// Whether a extraction runs the block filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filter {
    /// The model drops the blocks it reads as boilerplate: every extraction.
    On,
    /// Every block stays: the training rows' choice of reading, which must not
    /// depend on the model they train (`super::block_rows`).
    #[cfg(any(test, feature = "internals"))]
    Off,
}

/// A leaf block: a block element whose text is all its own (no nested blocks).
struct Block {
    /// Index into [`Measured::nodes`].
    node: usize,
    /// Its visible text, whitespace collapsed.
    text: String,
    /// Characters of `text`.
    chars: usize,
}

/// Leaf blocks of the body that hold text, in document order.
fn leaf_blocks(doc: &Document, measured: &Measured) -> Vec<Block> {
    measured
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, m)| m.tag.is_block() && !m.has_block_child && m.text > 0)
        .filter_map(|(i, m)| {
            let node = doc.tree.get(m.id)?;
            let text = collapsed_text(node, |e| !e.is_rendered());
            let chars = text.chars().count();
            (chars > 0).then_some(Block {
                node: i,
                text,
                chars,
            })
        })
        .collect()
}

/// Each leaf block's text and features as the filter reads them: what
/// `scripts/train_blocks.py` trains on.
#[cfg(any(test, feature = "internals"))]
pub(crate) fn rows(doc: &Document, measured: &Measured, context: &Context) -> Vec<(String, Row)> {
    let found = leaf_blocks(doc, measured);
    let rows = features(doc, measured, &found, context);
    found.into_iter().map(|b| b.text).zip(rows).collect()
}

/// The leaf blocks the model reads as boilerplate, to remove: none with the
/// filter off or on page types the model does not filter, none when it would
/// remove nine tenths of the text (a page unlike those it learned from), and
/// never those [`kept_whatever`] keeps.
pub(crate) fn boilerplate(
    doc: &Document,
    measured: &Measured,
    context: &Context,
    filter: Filter,
) -> Vec<NodeId> {
    let threshold = match filter {
        Filter::On => model::threshold(context.page_type),
        #[cfg(any(test, feature = "internals"))]
        Filter::Off => None,
    };
    let Some(threshold) = threshold else {
        return Vec::new();
    };
    let blocks = leaf_blocks(doc, measured);
    let rows = features(doc, measured, &blocks, context);
    let mut dense = vec![0.0f32; FEATURES as usize];
    let mut total = 0usize;
    let mut dropped = 0usize;
    let mut out = Vec::new();
    for (block, row) in blocks.iter().zip(&rows) {
        let chars = block.chars;
        total += chars;
        if row.is_empty() {
            continue;
        }
        for &(i, x) in row {
            dense[i as usize] = x;
        }
        let content = FOREST.log_odds(&dense);
        for &(i, _) in row {
            dense[i as usize] = 0.0;
        }
        if content < threshold && !kept_whatever(doc, measured, block, context) {
            dropped += chars;
            out.push(measured.nodes[block.node].id);
        }
    }
    if dropped * 10 > total * 9 {
        return Vec::new();
    }
    out
}

/// Class and id words that name a post's author or date: on a thread each post
/// keeps them, though the benchmark's gold often leaves them out.
const AUTHOR_OR_DATE: &[&str] = &[
    "author",
    "user",
    "username",
    "poster",
    "byline",
    "date",
    "time",
    "timestamp",
    "posted",
];

/// Blocks the filter never drops, whatever the model says: the page's `<h1>`;
/// table cells (a table missing some cells is not a table); and on a thread,
/// a post's author and date (named so by the block's or its three nearest
/// ancestors' class or id, or shown in a `<time>`).
fn kept_whatever(doc: &Document, measured: &Measured, block: &Block, context: &Context) -> bool {
    let nodes = &measured.nodes;
    let m = &nodes[block.node];
    if matches!(
        m.tag,
        Tag::Heading(1) | Tag::Cell { .. } | Tag::Row | Tag::Table
    ) {
        return true;
    }
    if context.page_type != PageType::Forum {
        return false;
    }
    let names_author_or_date = std::iter::successors(Some(block.node), |&a| nodes[a].parent)
        .take(4)
        .filter_map(|a| doc.tree.get(nodes[a].id)?.value().element())
        .any(|e| {
            name_tokens(e.attr(Attr::Class), e.attr(Attr::Id))
                .iter()
                .any(|t| AUTHOR_OR_DATE.iter().any(|w| w.eq_ignore_ascii_case(t)))
        });
    names_author_or_date
        || doc.tree.get(m.id).is_some_and(|node| {
            node.descendants().any(|d| {
                d.value()
                    .element()
                    .is_some_and(|e| e.name.local == local_name!("time"))
            })
        })
}

/// A block's features, sparse: (index, value) pairs.
pub(crate) type Row = Vec<(u32, f32)>;

/// Hashed token groups: where each starts among the features, and its size.
const CLASS_OWN: (u32, u32) = (DENSE, 256);
const CLASS_ANCESTORS: (u32, u32) = (CLASS_OWN.0 + CLASS_OWN.1, 512);
const HEADING_WORDS: (u32, u32) = (CLASS_ANCESTORS.0 + CLASS_ANCESTORS.1, 256);
const SHORT_WORDS: (u32, u32) = (HEADING_WORDS.0 + HEADING_WORDS.1, 512);

/// How many features a row can name.
const FEATURES: u32 = SHORT_WORDS.0 + SHORT_WORDS.1;

/// The dense features, by index.
#[derive(Clone, Copy)]
#[repr(u32)]
enum Dense {
    Bias,
    LogWords,
    LogChars,
    LinkDensity,
    Position,
    PositionSquared,
    EndsSentence,
    CommasPerWord,
    Digits,
    Capitalized,
    WordLength,
    InContentRoot,
    Depth,
    TagH1,
    TagH2H3,
    TagH4H6,
    TagParagraph,
    TagListItem,
    TagCell,
    TagDefinition,
    TagPre,
    TagQuote,
    TagOther,
    InMain,
    InArticle,
    InAside,
    InNav,
    InFooter,
    InHeader,
    InForm,
    InSection,
    InTable,
    InList,
    TypeProduct,
    TypeListing,
    TypeService,
    TypeDocumentation,
    TypeArticle,
    TypeForum,
    TitleOverlap,
    BeforeH1,
    FromH1,
    PrevLinkDensity,
    NextLinkDensity,
    PrevLogWords,
    NextLogWords,
    LogSiblingsAlike,
    ShortBlock,
    RelativeWords,
    UpToMainText,
    MainTextLcaShare,
    FromMainText,
    UpToH1,
    H1LcaShare,
    Count,
}

/// Where the hashed groups begin.
const DENSE: u32 = Dense::Count as u32;

/// Each block's features, in the order of `blocks`; an empty row for a block
/// outside [`Context::within`].
fn features(doc: &Document, measured: &Measured, blocks: &[Block], context: &Context) -> Vec<Row> {
    let nodes = &measured.nodes;
    let inherited = Inherited::new(doc, measured, context);
    let page = Landmarks::new(doc, measured, blocks, &inherited);
    // Siblings share their ancestors: each ancestor's class tokens are hashed once.
    let mut ancestor_buckets: Vec<Option<Vec<u32>>> = vec![None; nodes.len()];
    // The buckets of the words of the last heading read.
    let mut heading: Vec<u32> = Vec::new();
    let mut rows = Vec::with_capacity(blocks.len());
    for (i, block) in blocks.iter().enumerate() {
        let m = &nodes[block.node];
        let mut row = Row::new();
        if !inherited.in_within[block.node] {
            rows.push(row);
            continue;
        }
        let mut set = |f: Dense, x: f32| {
            if x != 0.0 {
                row.push((f as u32, x));
            }
        };
        let words = page.word_counts[i];
        set(Dense::Bias, 1.0);
        text_features(&mut set, block, m, words, page.starts[i]);
        tag_features(&mut set, doc, m);
        set(
            Dense::Depth,
            (inherited.depth[block.node] as f32 / 30.0).min(2.0),
        );
        set(Dense::InContentRoot, flag(inherited.in_root[block.node]));
        let inside = inherited.inside[block.node];
        for (bit, f) in INSIDE.iter().enumerate() {
            set(*f, flag(inside & (1 << bit) != 0));
        }
        let type_flag = match context.page_type {
            PageType::Product => Dense::TypeProduct,
            PageType::Listing => Dense::TypeListing,
            PageType::Service => Dense::TypeService,
            PageType::Documentation => Dense::TypeDocumentation,
            PageType::Article => Dense::TypeArticle,
            PageType::Forum => Dense::TypeForum,
        };
        set(type_flag, 1.0);
        // Lowercasing keeps the words apart as they were: `words` of them.
        let lower = block.text.to_lowercase();
        let in_title = lower
            .split_whitespace()
            .filter(|w| {
                context
                    .title_words
                    .binary_search_by(|t| t.as_str().cmp(w))
                    .is_ok()
            })
            .count();
        set(Dense::TitleOverlap, in_title as f32 / words.max(1) as f32);
        place_features(&mut set, &page, nodes, blocks, i);
        let short = words <= 6;
        if let Some(element) = doc.tree.get(m.id).and_then(|n| n.value().element()) {
            for token in name_tokens(element.attr(Attr::Class), element.attr(Attr::Id)) {
                row.push((hashed(CLASS_OWN, token), 1.0));
            }
        }
        for a in std::iter::successors(m.parent, |&a| nodes[a].parent).take(5) {
            let buckets = ancestor_buckets[a].get_or_insert_with(|| {
                doc.tree
                    .get(nodes[a].id)
                    .and_then(|n| n.value().element())
                    .map(|e| name_tokens(e.attr(Attr::Class), e.attr(Attr::Id)))
                    .unwrap_or_default()
                    .iter()
                    .map(|token| hashed(CLASS_ANCESTORS, token))
                    .collect()
            });
            row.extend(buckets.iter().map(|&b| (b, 1.0)));
        }
        row.extend(heading.iter().map(|&b| (b, 1.0)));
        if short {
            for word in lower.split_whitespace() {
                row.push((hashed_letters(SHORT_WORDS, word), 1.0));
            }
        }
        if matches!(m.tag, Tag::Heading(_)) {
            heading = lower
                .split_whitespace()
                .take(8)
                .map(|word| hashed_letters(HEADING_WORDS, word))
                .collect();
        }
        rows.push(merge(row));
    }
    rows
}

/// What every block of a page is placed against: where each block starts in
/// the page's text, its words, the page's `<h1>` and its main text (its longest
/// block of prose), how far up the tree each node meets those two, and how
/// many siblings look like each block.
struct Landmarks {
    /// Where each block starts, as a share of the page's characters.
    starts: Vec<f32>,
    /// Each block's words.
    word_counts: Vec<usize>,
    /// The most words of one block.
    most_words: usize,
    /// Where the first `<h1>` block starts.
    h1: Option<f32>,
    /// The block of the page's main text.
    main_text: Option<usize>,
    /// [`meeting`] the main text's block, per node.
    to_main_text: Option<Vec<(f32, f32)>>,
    /// [`meeting`] the `<h1>` block, per node.
    to_h1: Option<Vec<(f32, f32)>>,
    /// [`siblings_alike`], per block.
    alike: Vec<usize>,
}

impl Landmarks {
    fn new(doc: &Document, measured: &Measured, blocks: &[Block], inherited: &Inherited) -> Self {
        let nodes = &measured.nodes;
        let total: usize = blocks.iter().map(|b| b.chars).sum::<usize>().max(1);
        let mut starts = Vec::with_capacity(blocks.len());
        let mut at = 0usize;
        for block in blocks {
            starts.push(at as f32 / total as f32);
            at += block.chars;
        }
        let h1_block = blocks
            .iter()
            .position(|b| nodes[b.node].tag == Tag::Heading(1));
        let h1 = h1_block.map(|i| starts[i]);
        let word_counts: Vec<usize> = blocks
            .iter()
            .map(|b| b.text.split_whitespace().count())
            .collect();
        let most_words = word_counts.iter().copied().max().unwrap_or(0);
        // The page's main text: its longest block of prose (not a run of links).
        let main_text = blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| nodes[b.node].link_density() < 0.5)
            .max_by_key(|&(i, _)| word_counts[i])
            .map(|(i, _)| i);
        let to_main_text = main_text.map(|i| meeting(measured, blocks[i].node));
        let to_h1 = h1_block.map(|i| meeting(measured, blocks[i].node));
        let alike = siblings_alike(doc, measured, blocks, &inherited.in_within);
        Landmarks {
            starts,
            word_counts,
            most_words,
            h1,
            main_text,
            to_main_text,
            to_h1,
            alike,
        }
    }
}

/// The features of a block's own text: its length, link density, place,
/// punctuation, digits, capitals and word length.
fn text_features(
    set: &mut impl FnMut(Dense, f32),
    block: &Block,
    m: &Measure,
    words: usize,
    start: f32,
) {
    let chars = block.chars.max(1);
    set(Dense::LogWords, (1.0 + words as f32).ln());
    set(Dense::LogChars, (1.0 + chars as f32).ln());
    set(Dense::LinkDensity, m.link_density());
    set(Dense::Position, start);
    set(Dense::PositionSquared, start * start);
    set(
        Dense::EndsSentence,
        f32::from(u8::from(
            block
                .text
                .ends_with(['.', '!', '?', ':', ';', '。', '」', '"', '”', ')']),
        )),
    );
    set(Dense::CommasPerWord, m.commas as f32 / words.max(1) as f32);
    let digits = block.text.bytes().filter(u8::is_ascii_digit).count();
    set(Dense::Digits, digits as f32 / chars as f32);
    let capitalized = block
        .text
        .split_whitespace()
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .count();
    set(Dense::Capitalized, capitalized as f32 / words.max(1) as f32);
    set(
        Dense::WordLength,
        (chars as f32 / words.max(1) as f32).min(20.0) / 10.0,
    );
}

/// The features of a block's element: one flag for its kind.
fn tag_features(set: &mut impl FnMut(Dense, f32), doc: &Document, m: &Measure) {
    set(Dense::TagH1, flag(m.tag == Tag::Heading(1)));
    set(Dense::TagH2H3, flag(matches!(m.tag, Tag::Heading(2 | 3))));
    set(Dense::TagH4H6, flag(matches!(m.tag, Tag::Heading(4..))));
    set(Dense::TagParagraph, flag(m.is_p));
    set(Dense::TagListItem, flag(m.tag == Tag::ListItem));
    set(Dense::TagCell, flag(matches!(m.tag, Tag::Cell { .. })));
    set(Dense::TagPre, flag(m.tag == Tag::Pre));
    set(Dense::TagQuote, flag(m.tag == Tag::Quote));
    let name = doc
        .tree
        .get(m.id)
        .and_then(|n| n.value().element().map(|e| e.name.local.clone()));
    let definition = matches!(name, Some(local_name!("dt") | local_name!("dd")));
    set(Dense::TagDefinition, flag(definition));
    let other = !(m.is_p
        || definition
        || matches!(
            m.tag,
            Tag::Heading(_) | Tag::ListItem | Tag::Cell { .. } | Tag::Pre | Tag::Quote
        ));
    set(Dense::TagOther, flag(other));
}

/// The features of block `i`'s place among the page's [`Landmarks`]: before or
/// after the `<h1>`, its neighbours, its look-alike siblings, its length beside
/// the longest block, and where it meets the main text and the `<h1>`.
fn place_features(
    set: &mut impl FnMut(Dense, f32),
    page: &Landmarks,
    nodes: &[Measure],
    blocks: &[Block],
    i: usize,
) {
    let block = &blocks[i];
    let words = page.word_counts[i];
    if let Some(h1) = page.h1 {
        set(Dense::BeforeH1, flag(page.starts[i] < h1));
        set(Dense::FromH1, (page.starts[i] - h1).abs());
    }
    let neighbour = |j: Option<usize>| {
        j.filter(|&j| j < blocks.len()).map_or((0.0, 0.0), |j| {
            let words = page.word_counts[j];
            (
                nodes[blocks[j].node].link_density(),
                (1.0 + words as f32).ln(),
            )
        })
    };
    let (prev_links, prev_words) = neighbour(i.checked_sub(1));
    let (next_links, next_words) = neighbour(Some(i + 1));
    set(Dense::PrevLinkDensity, prev_links);
    set(Dense::NextLinkDensity, next_links);
    set(Dense::PrevLogWords, prev_words);
    set(Dense::NextLogWords, next_words);
    set(Dense::LogSiblingsAlike, (1.0 + page.alike[i] as f32).ln());
    set(Dense::ShortBlock, flag(words <= 6));
    set(
        Dense::RelativeWords,
        (1.0 + words as f32).ln() - (1.0 + page.most_words as f32).ln(),
    );
    if let (Some(main), Some(meet)) = (page.main_text, &page.to_main_text) {
        let (up, share) = meet[block.node];
        set(Dense::UpToMainText, up);
        set(Dense::MainTextLcaShare, share);
        set(
            Dense::FromMainText,
            (i as f32 - main as f32).abs() / blocks.len() as f32,
        );
    }
    if let Some(meet) = &page.to_h1 {
        let (up, share) = meet[block.node];
        set(Dense::UpToH1, up);
        set(Dense::H1LcaShare, share);
    }
}

fn flag(on: bool) -> f32 {
    f32::from(u8::from(on))
}

/// The bucket of a word's letters and digits, lowercased, in a hashed group:
/// "Loading..." and "loading" are one token.
fn hashed_letters((start, size): (u32, u32), word: &str) -> u32 {
    let mut utf8 = [0u8; 4];
    let bytes = word
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .flat_map(|c| {
            let len = c.encode_utf8(&mut utf8).len();
            utf8.into_iter().take(len)
        });
    start + fnv1a(bytes) % size
}

/// The tokens of a class and id: runs of ASCII letters, two to 20 long
/// (`product-reviews__item` gives `product`, `reviews`, `item`), as they are
/// written; each token once, case aside ([`hashed`] lowercases them).
fn name_tokens<'a>(class: Option<&'a str>, id: Option<&'a str>) -> Vec<&'a str> {
    let mut tokens: Vec<&str> = class
        .into_iter()
        .chain(id)
        .flat_map(|s| s.split(|c: char| !c.is_ascii_alphabetic()))
        .filter(|t| (2..=20).contains(&t.len()))
        .collect();
    tokens.sort_unstable_by(|a, b| {
        a.bytes()
            .map(|b| b.to_ascii_lowercase())
            .cmp(b.bytes().map(|b| b.to_ascii_lowercase()))
    });
    tokens.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    tokens
}

/// The bucket of `token`, ASCII letters lowercased, in a hashed group:
/// FNV-1a, so the trained weights and this extraction agree on every platform.
fn hashed((start, size): (u32, u32), token: &str) -> u32 {
    start + fnv1a(token.bytes().map(|b| b.to_ascii_lowercase())) % size
}

/// FNV-1a over `bytes`.
fn fnv1a(bytes: impl Iterator<Item = u8>) -> u32 {
    bytes.fold(0x811c_9dc5, |hash: u32, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// One entry per index, values summed (two tokens may share a bucket).
fn merge(mut row: Row) -> Row {
    // Unstable: entries of one index are summed, and their values are 1.0.
    row.sort_unstable_by_key(|&(i, _)| i);
    row.dedup_by(|(i, x), (kept, sum)| {
        let same = i == kept;
        if same {
            *sum += *x;
        }
        same
    });
    row
}

/// For each block, how many siblings share its tag and class: cards, menu
/// entries and per-post furniture repeat; paragraphs of prose rarely carry a
/// class. Each parent's children are counted once, and only for blocks
/// `judged` (by index into [`Measured::nodes`]); others read 0.
fn siblings_alike(
    doc: &Document,
    measured: &Measured,
    blocks: &[Block],
    judged: &[bool],
) -> Vec<usize> {
    let key = |node: ego_tree::NodeRef<'_, Node>| {
        node.value()
            .element()
            .filter(|e| e.is_rendered())
            .map(|e| (e.name.local.clone(), e.attr(Attr::Class).map(str::to_owned)))
    };
    let mut counted: HashMap<NodeId, HashMap<(LocalName, Option<String>), usize>> = HashMap::new();
    blocks
        .iter()
        .map(|block| {
            if !judged[block.node] {
                return 0;
            }
            let Some(node) = doc.tree.get(measured.nodes[block.node].id) else {
                return 0;
            };
            let (Some(parent), Some(own)) = (node.parent(), key(node)) else {
                return 0;
            };
            let counts = counted.entry(parent.id()).or_insert_with(|| {
                let mut counts = HashMap::new();
                for child in parent.children() {
                    if let Some(k) = key(child) {
                        *counts.entry(k).or_insert(0) += 1;
                    }
                }
                counts
            });
            counts.get(&own).map_or(0, |n| n.saturating_sub(1))
        })
        .collect()
}

/// The kinds of ancestor a block may sit inside, by bit of [`Inherited::inside`].
const INSIDE: [Dense; 10] = [
    Dense::InMain,
    Dense::InArticle,
    Dense::InAside,
    Dense::InNav,
    Dense::InFooter,
    Dense::InHeader,
    Dense::InForm,
    Dense::InSection,
    Dense::InTable,
    Dense::InList,
];

/// What each element of the body inherits from its ancestors, found in one
/// pass (a parent comes before its children): hostile nesting stays linear.
struct Inherited {
    /// Ancestors below the body.
    depth: Vec<u32>,
    /// Bit `k` set when an ancestor (not the element) is of kind `INSIDE[k]`.
    inside: Vec<u16>,
    /// The element is the SRD's content root or inside it.
    in_root: Vec<bool>,
    /// The element is [`Context::within`] or inside it (all, without one).
    in_within: Vec<bool>,
}

impl Inherited {
    fn new(doc: &Document, measured: &Measured, context: &Context) -> Inherited {
        let nodes = &measured.nodes;
        let kind = |i: usize| -> u16 {
            let m = &nodes[i];
            let name = doc
                .tree
                .get(m.id)
                .and_then(|n| n.value().element().map(|e| e.name.local.clone()));
            let bits = [
                m.tag == Tag::Main,
                m.tag == Tag::Article,
                name == Some(local_name!("aside")),
                name == Some(local_name!("nav")),
                name == Some(local_name!("footer")),
                name == Some(local_name!("header")),
                name == Some(local_name!("form")),
                name == Some(local_name!("section")),
                m.tag == Tag::Table,
                matches!(m.tag, Tag::UnorderedList | Tag::OrderedList),
            ];
            bits.iter()
                .enumerate()
                .fold(0, |acc, (bit, &on)| acc | (u16::from(on) << bit))
        };
        let mut inherited = Inherited {
            depth: Vec::with_capacity(nodes.len()),
            inside: Vec::with_capacity(nodes.len()),
            in_root: Vec::with_capacity(nodes.len()),
            in_within: Vec::with_capacity(nodes.len()),
        };
        for (i, m) in nodes.iter().enumerate() {
            let is_root = context.content_root == Some(m.id);
            let is_within = context.within.is_none_or(|within| within == m.id);
            let (depth, inside, in_root, in_within) = match m.parent {
                Some(p) => (
                    inherited.depth[p] + 1,
                    inherited.inside[p] | kind(p),
                    is_root || inherited.in_root[p],
                    is_within || inherited.in_within[p],
                ),
                None => (0, 0, is_root, is_within),
            };
            debug_assert_eq!(inherited.depth.len(), i);
            inherited.depth.push(depth);
            inherited.inside.push(inside);
            inherited.in_root.push(in_root);
            inherited.in_within.push(in_within);
        }
        inherited
    }
}

/// For each element of the body: how many levels up it meets the lineage of
/// the element `anchor` (its lowest common ancestor with it), over 10, and
/// that ancestor's share of the body's text. One pass, parents first.
fn meeting(measured: &Measured, anchor: usize) -> Vec<(f32, f32)> {
    let nodes = &measured.nodes;
    let body_text = nodes.first().map_or(1.0, |m| m.text.max(1) as f32);
    let mut lineage = vec![false; nodes.len()];
    let mut at = Some(anchor);
    while let Some(i) = at {
        lineage[i] = true;
        at = nodes[i].parent;
    }
    let mut out: Vec<(u32, f32)> = Vec::with_capacity(nodes.len());
    for (i, m) in nodes.iter().enumerate() {
        let met = match (lineage[i], m.parent) {
            (true, _) | (false, None) => (0, m.text as f32 / body_text),
            (false, Some(p)) => (out[p].0 + 1, out[p].1),
        };
        out.push(met);
    }
    out.into_iter()
        .map(|(up, share)| ((up as f32 / 10.0).min(2.0), share))
        .collect()
}

#[cfg(test)]
mod tests;
