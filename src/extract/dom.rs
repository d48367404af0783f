//! The HTML5 parse tree extraction works on (FR-WF-13): html5gum's tokenizer
//! (`tokenize.rs`), html5ever's tree builder, a lean arena sink, and the bounds
//! that keep hostile input linear.
//!
//! html5ever is a faithful HTML5 parser, but three of its steps cost time in
//! proportion to something an attacker controls, so the parse is fenced:
//!
//! * **Depth.** Scope checks walk the stack of open elements, so `<div>` × 100 000
//!   costs O(n²). [`Limiter`] sits between tokenizer and tree builder and drops
//!   start tags (not their text) once the tree builder holds [`MAX_OPEN`] handles,
//!   like browsers' own nesting cap (Blink's is 512); formatting elements, which the
//!   tree builder re-creates for every text run, are capped lower
//!   ([`MAX_OPEN_FORMATTING`]). Raw-text elements (`<script>`, `<style>`, ...) are
//!   never dropped, so their content can never turn into page text.
//! * **Attributes.** Each new attribute is checked against the earlier ones of
//!   its tag, and the tree builder compares formatting elements' attribute lists,
//!   so the tokenizer bridge (`tokenize.rs`) keeps at most [`MAX_ATTRIBUTES`] per
//!   tag, plus the first of each name extraction reads ([`Attr`]).
//! * **Synthesised elements.** Misnested formatting makes the tree builder
//!   re-create elements without input bytes (every open `<b>` again for every
//!   paragraph), so once [`element_budget`] elements exist the tree builder is
//!   retired and the rest of the input is built flat (`flat.rs`): one element per
//!   start tag, text where the tree builder would have put it, nothing re-created.
//!   The structure past that point is approximate; the text is all there.
//!
//! No cap may turn hidden text into page text (hidden text is a prompt-injection
//! channel): a start tag dropped at a cap whose element extraction would not show
//! (boilerplate by FR-WF-13 steps 1-3 and EXT-CLASS-01, judged on the tag's own
//! name and attributes, or never rendered) suppresses everything up to its
//! matching end tag ([`Suppressed`]), and the attribute cap keeps the attributes
//! that decide it.
//!
//! Only the attributes extraction reads are kept, and each element is classified
//! once, at creation ([`Tag`], boilerplate flag), so the later passes are cheap.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};

use ego_tree::{NodeId, NodeRef, Tree};
use html5ever::interface::ElemName;
use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, Tracer, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{self, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::tree_builder::{TreeBuilder, TreeBuilderOpts};
use html5ever::{Attribute, LocalName, Namespace, QualName, local_name, ns};

use super::element::{self, Attr, Element, Name};

mod flat;
mod streamed;
mod tokenize;

/// Open handles (open elements plus active formatting entries) past which start
/// tags are dropped. Half of Blink's 512: every start tag costs html5ever a scope
/// scan of the open elements, so this bounds the cost per tag; real pages stay far
/// below it.
pub(crate) const MAX_OPEN: usize = 256;
/// Formatting elements held (open, or waiting in the active formatting list) past
/// which formatting start tags (`<b>`, `<a>`, `<font>`, ...) are dropped: each
/// entry may be re-created for every later text run, and each new one is compared
/// with all of them (the "Noah's Ark" clause). Counted apart from [`MAX_OPEN`], so
/// a legitimately deep page keeps its links and emphasis.
pub(crate) const MAX_OPEN_FORMATTING: usize = 128;
/// Attributes kept per tag.
pub(crate) const MAX_ATTRIBUTES: usize = 128;

/// Elements the tree may hold for an input of `len` bytes: generous for real pages
/// (which have one element per 30 or more bytes), linear in the input.
pub(crate) fn element_budget(len: usize) -> usize {
    10_000 + len / 4
}

/// A borrowed [`Name`], as html5ever's tree builder asks for it.
#[derive(Debug)]
pub(crate) struct NameRef<'a>(Ref<'a, Name>);

impl ElemName for NameRef<'_> {
    fn ns(&self) -> &Namespace {
        &self.0.ns
    }

    fn local_name(&self) -> &LocalName {
        &self.0.local
    }
}

/// A node of the tree. Under `internals` the stage-timing example names it
/// (it is in the parser's and the converter's signatures) but never looks inside
/// an element, so the element type stays the crate's own.
#[derive(Debug, Clone)]
#[cfg_attr(
    feature = "internals",
    visibility::make(pub),
    allow(private_interfaces)
)]
pub(crate) enum Node {
    /// The document root.
    Document,
    /// An element.
    Element(Element),
    /// A text node (adjacent text is merged, as the DOM does).
    Text(StrTendril),
    /// Comments, doctypes, processing instructions, template fragments: never read.
    Other,
}

impl Node {
    /// The element, if this node is one.
    pub(crate) fn element(&self) -> Option<&Element> {
        match self {
            Node::Element(e) => Some(e),
            _ => None,
        }
    }
}

/// A parsed document.
#[derive(Clone)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Document {
    /// The arena; dropping it is a flat loop, whatever the nesting depth.
    pub tree: Tree<Node>,
    /// Whether the parser met a template of React's streamed rendering
    /// (`streamed`): only then are its segments looked for.
    pub(crate) streamed: bool,
}

impl Document {
    /// The document node.
    pub(crate) fn root(&self) -> NodeRef<'_, Node> {
        self.tree.root()
    }

    /// Every node in document order, without recursion.
    pub(crate) fn descendants(&self) -> impl Iterator<Item = NodeRef<'_, Node>> {
        self.tree.root().descendants()
    }

    /// The elements of `root`'s subtree, `root` included, that `select` picks
    /// (given each element's node and the element), in document order: what the
    /// readings' rules remove or put back. None when `root` is not in the tree.
    pub(crate) fn elements_under(
        &self,
        root: NodeId,
        mut select: impl FnMut(NodeRef<'_, Node>, &Element) -> bool,
    ) -> Vec<NodeId> {
        let Some(root) = self.tree.get(root) else {
            return Vec::new();
        };
        root.descendants()
            .filter(|node| node.value().element().is_some_and(|e| select(*node, e)))
            .map(|node| node.id())
            .collect()
    }

    /// Takes the elements `ids` out of the reading: the flag FR-WF-13's
    /// boilerplate removal sets; the nodes stay in the tree.
    pub(crate) fn remove_all(&mut self, ids: &[NodeId]) {
        self.set_removed(ids, true);
    }

    /// Puts the elements `ids` back into the reading.
    pub(crate) fn restore_all(&mut self, ids: &[NodeId]) {
        self.set_removed(ids, false);
    }

    fn set_removed(&mut self, ids: &[NodeId], removed: bool) {
        for &id in ids {
            if let Some(mut node) = self.tree.get_mut(id)
                && let Node::Element(element) = node.value()
            {
                element.removed = removed;
            }
        }
    }
}

/// How `<noscript>` is parsed: as a browser with JavaScript does (scripting on:
/// raw text, which the SRD algorithm removes whole), or as one without it shows
/// it (scripting off: markup). Article mode and auto mode's thread reading read
/// the crawler views that forums (Discourse) put there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum Scripting {
    /// `<noscript>` content is raw text.
    On,
    /// `<noscript>` content is parsed as markup.
    Off,
}

impl Scripting {
    /// Whether `html` parses into another tree with scripting off than with it
    /// on: only when it has a `<noscript>` start tag (any case). A reading
    /// retried with scripting off skips the second parse of a page without one.
    pub(crate) fn matters_for(html: &str) -> bool {
        const TAG: &[u8] = b"<noscript";
        let bytes = html.as_bytes();
        memchr::memchr_iter(b'<', bytes).any(|at| {
            bytes
                .get(at..at + TAG.len())
                .is_some_and(|tag| tag.eq_ignore_ascii_case(TAG))
        })
    }
}

/// Whether a [`Source`] keeps its parse for the readings after the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Kept: each reading reads a copy (auto mode, which tries readings in
    /// turn). A copy costs a few hundredths of a parse (WCXB's dev split: 0.8%
    /// of auto mode's time for 911 copies, against 39% for 1,693 parses), but
    /// the parse is held beside the copy being read.
    Copies,
    /// Not kept: each reading parses anew, so one tree is held at a time
    /// (article mode, whose later passes are rare: its peak memory on a dense
    /// 5 MB page is 70 MB this way, 96 MB with copies).
    Nothing,
}

/// A page's HTML and, as [`Keep`] says, its parse with scripting on, made on
/// first use. Article scoring reads a page in up to three passes and auto mode
/// tries readings in turn; each changes the tree it reads. Its parses have
/// React's streamed segments in place (`streamed`): it serves the readings past
/// the SRD's (article and auto mode), which read the page as a browser running
/// its scripts shows it.
pub(crate) struct Source<'a> {
    html: &'a str,
    keep: Keep,
    parsed: std::cell::OnceCell<Document>,
}

impl<'a> Source<'a> {
    /// The source of `html`, not yet parsed.
    pub(crate) fn new(html: &'a str, keep: Keep) -> Source<'a> {
        Source {
            html,
            keep,
            parsed: std::cell::OnceCell::new(),
        }
    }

    /// The HTML.
    pub(crate) fn html(&self) -> &'a str {
        self.html
    }

    /// A tree to read and change: with scripting on, a copy of the kept parse
    /// ([`Keep::Copies`]) or a parse of its own; with scripting off, always a
    /// parse of its own (rare: see [`Scripting::matters_for`]).
    pub(crate) fn document(&self, scripting: Scripting) -> Document {
        match (scripting, self.keep) {
            (Scripting::On, Keep::Copies) => self.peek().clone(),
            _ => parse_streamed(self.html, scripting),
        }
    }

    /// The parse with scripting on, made now if not yet, to look at without
    /// changing it (a source that keeps [`Keep::Nothing`] keeps this one).
    pub(crate) fn peek(&self) -> &Document {
        self.parsed
            .get_or_init(|| parse_streamed(self.html, Scripting::On))
    }

    /// The kept parse with scripting on itself, for the last reading: no copy.
    pub(crate) fn into_document(self) -> Document {
        let html = self.html;
        self.parsed
            .into_inner()
            .unwrap_or_else(|| parse_streamed(html, Scripting::On))
    }
}

/// Parses `html` into a [`Document`], within the bounds described in the module
/// docs, with `scripting` on or off: one parser for both.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn parse(html: &str, scripting: Scripting) -> Document {
    parse_counting(html, Counting::Bounded, scripting == Scripting::On)
}

/// A parse of `html` with React's streamed segments in place (`streamed`): what
/// a browser running the page's scripts shows, as the readings past the SRD's
/// read it.
fn parse_streamed(html: &str, scripting: Scripting) -> Document {
    let mut doc = parse(html, scripting);
    if doc.streamed {
        streamed::place_segments(&mut doc);
    }
    doc
}

/// When [`Limiter`] counts the tree builder's handles.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counting {
    /// Only when the bound says a cap may be reached (what [`parse`] does).
    Bounded,
    /// Before every start tag: the reference the bounded mode must agree with.
    #[cfg(any(test, feature = "internals"))]
    Always,
}

fn parse_counting(html: &str, counting: Counting, scripting: bool) -> Document {
    parse_within(html, counting, element_budget(html.len()), scripting)
}

/// Parses `html`; `budget` elements are built by the
/// tree builder, the rest flat. With `scripting` off, `<noscript>` content is
/// markup (article mode); with it on, raw text.
fn parse_within(html: &str, counting: Counting, budget: usize, scripting: bool) -> Document {
    let limiter = Limiter::for_input(html, counting, budget, scripting);
    tokenize::run(html, &limiter);
    limiter.into_document()
}

/// The trees html5gum's and html5ever's tokenizers build from `html` (through
/// the same tree builder, counting before every start tag), written out node by
/// node: the `tokenizers` fuzz target checks that they agree.
#[cfg(feature = "internals")]
pub fn outlines_of_both_tokenizers(html: &str) -> [String; 2] {
    let budget = element_budget(html.len());
    [
        full_outline(&parse_within(html, Counting::Always, budget, true)),
        full_outline(&parse_within_html5ever(html, budget, true)),
    ]
}

/// Every node with everything the tree keeps of it (namespace, attributes,
/// classification), in document order.
#[cfg(any(test, feature = "internals"))]
fn full_outline(doc: &Document) -> String {
    let mut out = String::new();
    for edge in doc.root().traverse() {
        if let ego_tree::iter::Edge::Open(node) = edge {
            let depth = node.ancestors().count();
            // A tendril's `Debug` shows how it is stored: print the text alone.
            match node.value() {
                Node::Text(text) => out.push_str(&format!("{depth} {:?}\n", &**text)),
                Node::Element(e) => {
                    let attrs: Vec<(Attr, &str)> =
                        e.attrs.iter().map(|(a, v)| (*a, &**v)).collect();
                    out.push_str(&format!(
                        "{depth} {:?} {:?} {:?} removed={} {attrs:?}\n",
                        e.name.ns, e.name.local, e.tag, e.removed
                    ));
                }
                node => out.push_str(&format!("{depth} {node:?}\n")),
            }
        }
    }
    out
}

/// [`parse_within`] with html5ever's own tokenizer: the reference the html5gum
/// tokenizer ([`tokenize`]) must agree with.
#[cfg(any(test, feature = "internals"))]
fn parse_within_html5ever(html: &str, budget: usize, scripting: bool) -> Document {
    use html5ever::TokenizerResult;
    use html5ever::tokenizer::{BufferQueue, Tokenizer, TokenizerOpts};

    let tokenizer = Tokenizer::new(
        Limiter::for_input(html, Counting::Always, budget, scripting),
        TokenizerOpts::default(),
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // A `</script>` pauses the tokenizer for the script to run (we run none), a
    // `<meta charset>` reports an encoding (the text is already decoded): go on.
    while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    tokenizer.end();
    tokenizer.sink.into_document()
}

/// The nodes the tree of `html` will about hold, to size the arena once: one per
/// `<` (a start tag makes an element, and the text after a tag a text node, while
/// end tags make none) and an eighth more for what the tree builder adds, but
/// never more than one per 8 bytes of input (content-dense markup makes one per
/// 13): `<` in scripts or soup of bare `<` make no nodes, and a page that does
/// make more grows the arena as before.
///
/// Growing the arena by doubling copies it and touches about twice its final
/// memory (fresh pages the kernel must fault in): on content-dense markup that
/// is a sixth of the parse. The reservation is only address space until a node
/// is written, so an overestimate costs no resident memory.
fn node_estimate(html: &str) -> usize {
    let tags = memchr::memchr_iter(b'<', html.as_bytes()).count();
    (tags + tags / 8).min(html.len() / 8) + 16
}

/// Counts handles the tree builder holds (document, open elements, active
/// formatting entries, head, form), and among them the formatting elements.
struct Counter<'a> {
    tree: &'a Tree<Node>,
    total: Cell<usize>,
    formatting: Cell<usize>,
}

impl Tracer for Counter<'_> {
    type Handle = NodeId;
    fn trace_handle(&self, node: &NodeId) {
        self.total.set(self.total.get() + 1);
        if let Some(Node::Element(e)) = self.tree.get(*node).map(|n| n.value())
            && e.name.ns == ns!(html)
            && element::is_formatting(&e.name.local)
        {
            self.formatting.set(self.formatting.get() + 1);
        }
    }
}

/// The token filter between tokenizer and tree builder (see the module docs).
struct Limiter {
    builder: TreeBuilder<NodeId, Sink>,
    counting: Counting,
    /// The last exact count of the handles the tree builder holds.
    last: Cell<Option<Count>>,
    /// A dropped start tag whose subtree is being suppressed.
    suppressed: RefCell<Option<Suppressed>>,
    /// The tree builder is in its "text" insertion mode (it asked the tokenizer for
    /// raw text and has not had the end tag yet), where it accepts nothing but
    /// text and that end tag.
    raw_text: Cell<bool>,
    /// Set once the element budget is spent: the rest is built flat (`flat.rs`).
    flat: Cell<Option<flat::Flat>>,
}

/// A start tag dropped at a cap whose element extraction would not show
/// (boilerplate, hidden, never rendered): everything up to its matching end tag
/// is dropped too, so the cap cannot turn that content into page text.
///
/// Matching counts nested start tags of the same name, as the HTML parser pairs
/// them in the common case. Where HTML would close the element some other way
/// (an ancestor's end tag, an implied `</p>`), suppression runs on until the
/// element's own end tag or the end of the input: past a cap, the parser errs
/// towards hiding, never towards showing. Inside, raw-text start tags
/// (`<script>`, `<style>`, `<textarea>`, ...) still switch the tokenizer as the
/// tree builder would, so their content cannot end the suppression early.
struct Suppressed {
    name: LocalName,
    depth: usize,
}

/// An exact count of [`Limiter::open_handles`], and when it was taken.
#[derive(Clone, Copy)]
struct Count {
    total: usize,
    formatting: usize,
    /// [`Sink::elements`] when counted.
    elements: usize,
    /// No token has reached the tree builder since: the count is still exact, so a
    /// run of dropped start tags (the deep-nesting attack) costs O(1) per tag.
    exact: bool,
}

/// Handles one created element can add: it can sit in the stack of open elements
/// and in the list of active formatting elements or the head/form pointer (two); the
/// tree builder never re-adds an existing element across tokens. One more for margin.
const HANDLES_PER_ELEMENT: usize = 3;

impl Limiter {
    /// The tree builder and its filter for `html`: `budget` elements built by the
    /// tree builder, the rest flat; with `scripting` off, `<noscript>` content is
    /// markup (article mode), with it on, raw text.
    fn for_input(html: &str, counting: Counting, budget: usize, scripting: bool) -> Limiter {
        let sink = Sink::new(budget, node_estimate(html));
        let builder = TreeBuilder::new(
            sink,
            TreeBuilderOpts {
                // `<noscript>` is boilerplate in SRD mode; with scripting on its
                // content is raw text and cannot leak markup into the page.
                scripting_enabled: scripting,
                ..TreeBuilderOpts::default()
            },
        );
        Limiter::new(builder, counting)
    }

    /// The tree built, once the input has ended.
    fn into_document(self) -> Document {
        let sink = self.builder.sink;
        Document {
            streamed: sink.streamed.get(),
            tree: sink.tree.into_inner(),
        }
    }

    fn new(builder: TreeBuilder<NodeId, Sink>, counting: Counting) -> Limiter {
        Limiter {
            builder,
            counting,
            last: Cell::new(None),
            suppressed: RefCell::new(None),
            raw_text: Cell::new(false),
            flat: Cell::new(None),
        }
    }

    /// Whether a start tag may reach the tree builder: the handles it holds are
    /// below [`MAX_OPEN`] and, for a formatting tag, its formatting elements below
    /// [`MAX_OPEN_FORMATTING`].
    ///
    /// Counting walks every handle, so it runs only when the last count plus what
    /// the elements created since could add reaches a cap: on a shallow page that is
    /// once per ~80 elements, not once per tag. The answer is always the one an
    /// exact count would give.
    fn may_open(&self, formatting: bool) -> bool {
        let elements = self.builder.sink.elements.get();
        if let Some(last) = self.last.get() {
            let growth = if last.exact {
                0
            } else {
                elements.saturating_sub(last.elements) * HANDLES_PER_ELEMENT
            };
            let below = last.total + growth < MAX_OPEN
                && (!formatting || last.formatting + growth < MAX_OPEN_FORMATTING);
            if last.exact || (below && self.counting == Counting::Bounded) {
                return below;
            }
        }
        let (total, formatting_count) = self.open_handles();
        self.last.set(Some(Count {
            total,
            formatting: formatting_count,
            elements,
            exact: true,
        }));
        total < MAX_OPEN && (!formatting || formatting_count < MAX_OPEN_FORMATTING)
    }

    /// A token reached the tree builder: the last count is now only a bound.
    fn passed(&self) {
        if let Some(last) = self.last.get() {
            self.last.set(Some(Count {
                exact: false,
                ..last
            }));
        }
    }

    fn exhausted(&self) -> bool {
        self.builder.sink.exhausted.get()
    }

    /// (all handles held, formatting elements among them).
    fn open_handles(&self) -> (usize, usize) {
        let tree = self.builder.sink.tree.borrow();
        let counter = Counter {
            tree: &tree,
            total: Cell::new(0),
            formatting: Cell::new(0),
        };
        self.builder.trace_handles(&counter);
        (counter.total.get(), counter.formatting.get())
    }
}

impl Limiter {
    /// A start tag that does not reach the tree (a cap): its text goes where the
    /// tag's content would have gone, unless its element hides its subtree, which
    /// starts suppression ([`Suppressed`]). Judged on the tag's own name and
    /// attributes: the same [`element::is_boilerplate`] the tree's elements get.
    fn drop_start_tag(&self, tag: &tokenizer::Tag) -> TokenSinkResult<NodeId> {
        if Element::from_tag(tag).hides_subtree() {
            *self.suppressed.borrow_mut() = Some(Suppressed {
                name: tag.name.clone(),
                depth: 1,
            });
        }
        TokenSinkResult::Continue
    }

    /// A token while suppressing: dropped, but counted for the matching end tag.
    fn suppress(&self, token: &Token) -> TokenSinkResult<NodeId> {
        let Token::TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        let mut suppressed = self.suppressed.borrow_mut();
        if let Some(open) = suppressed.as_mut()
            && open.name == tag.name
        {
            match tag.kind {
                TagKind::StartTag => open.depth = open.depth.saturating_add(1),
                TagKind::EndTag => {
                    open.depth = open.depth.saturating_sub(1);
                    if open.depth == 0 {
                        *suppressed = None;
                    }
                }
            }
        }
        match tag.kind {
            TagKind::StartTag => raw_switch(&tag.name).unwrap_or(TokenSinkResult::Continue),
            TagKind::EndTag => TokenSinkResult::Continue,
        }
    }
}

/// What the tree builder tells the tokenizer after the start tag `name` (HTML
/// content, scripting on): read raw text or RCDATA up to the matching end tag, or
/// plain text to the end; `None` for ordinary markup. The same set as
/// [`element::is_raw_text`].
fn raw_switch(name: &LocalName) -> Option<TokenSinkResult<NodeId>> {
    Some(match *name {
        local_name!("script") => TokenSinkResult::RawData(RawKind::ScriptData),
        local_name!("style")
        | local_name!("xmp")
        | local_name!("iframe")
        | local_name!("noembed")
        | local_name!("noframes")
        | local_name!("noscript") => TokenSinkResult::RawData(RawKind::Rawtext),
        local_name!("textarea") | local_name!("title") => TokenSinkResult::RawData(RawKind::Rcdata),
        local_name!("plaintext") => TokenSinkResult::Plaintext,
        _ => return None,
    })
}

impl TokenSink for Limiter {
    type Handle = NodeId;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<NodeId> {
        if self.suppressed.borrow().is_some() {
            return self.suppress(&token);
        }
        if let Some(flat) = self.flat.get() {
            return self.flat_token(flat, token);
        }
        if let Token::TagToken(tag) = &token
            && tag.kind == TagKind::StartTag
            && !element::is_void(&tag.name)
            && !element::is_raw_text(&tag.name)
            && !self.may_open(element::is_formatting(&tag.name))
        {
            return self.drop_start_tag(tag);
        }
        self.passed();
        let ends_raw_text = matches!(&token, Token::TagToken(tag) if tag.kind == TagKind::EndTag)
            || matches!(token, Token::EOFToken);
        let result = self.builder.process_token(token, line_number);
        if matches!(result, TokenSinkResult::RawData(_)) {
            self.raw_text.set(true);
        } else if ends_raw_text {
            self.raw_text.set(false);
        }
        // The budget is checked between tokens; in text mode the tree builder
        // creates nothing, so it finishes the raw text first.
        if self.exhausted() && !self.raw_text.get() {
            self.go_flat(line_number);
        }
        result
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// The name returned for a handle that is not an element; html5ever never asks,
/// but the sink must not panic if it did.
static FALLBACK_NAME: Name = Name {
    ns: ns!(html),
    local: local_name!("span"),
};

/// The tree sink: an `ego_tree` arena of [`Node`]s.
struct Sink {
    tree: RefCell<Tree<Node>>,
    document: NodeId,
    elements: Cell<usize>,
    budget: usize,
    exhausted: Cell<bool>,
    /// The last comment created: how [`flat`] finds the tree builder's insertion
    /// point.
    last_comment: Cell<Option<NodeId>>,
    /// A template of React's streamed rendering was created (`streamed`).
    streamed: Cell<bool>,
}

impl Sink {
    /// A sink for at most `budget` tree-built elements, its arena sized for
    /// `capacity` nodes.
    fn new(budget: usize, capacity: usize) -> Sink {
        let tree = Tree::with_capacity(Node::Document, capacity.max(1));
        let document = tree.root().id();
        Sink {
            tree: RefCell::new(tree),
            document,
            elements: Cell::new(0),
            budget,
            exhausted: Cell::new(false),
            last_comment: Cell::new(None),
            streamed: Cell::new(false),
        }
    }

    /// Appends `text` to `parent`, merged with a text node ending it, unless
    /// `parent` is a script or style: that text is half of a real page's bytes
    /// and no pass reads it (both are removed as boilerplate, FR-WF-13 step 1,
    /// and [`normalized_text`](crate::extract::root::normalized_text) skips them),
    /// so it is not copied into the tree.
    fn append_text(tree: &mut Tree<Node>, parent: NodeId, text: StrTendril) {
        let Some(mut parent) = tree.get_mut(parent) else {
            return;
        };
        if let Node::Element(element) = parent.value()
            && element::is_script_or_style(&element.name.local)
        {
            return;
        }
        if let Some(mut last) = parent.last_child()
            && let Node::Text(existing) = last.value()
        {
            existing.push_tendril(&text);
            return;
        }
        parent.append(Node::Text(text));
    }
}

impl TreeSink for Sink {
    type Handle = NodeId;
    type Output = Self;
    type ElemName<'a> = NameRef<'a>;

    fn finish(self) -> Self {
        self
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> NodeId {
        self.document
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> NameRef<'a> {
        NameRef(Ref::map(self.tree.borrow(), |tree| {
            match tree.get(*target).map(|n| n.value()) {
                Some(Node::Element(e)) => &e.name,
                _ => &FALLBACK_NAME,
            }
        }))
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _: ElementFlags) -> NodeId {
        let count = self.elements.get() + 1;
        self.elements.set(count);
        if count >= self.budget {
            self.exhausted.set(true);
        }
        let is_template = name.ns == ns!(html) && name.local == local_name!("template");
        let mut tree = self.tree.borrow_mut();
        let mut node = tree.orphan(Node::Element(Element::new(name, attrs)));
        if is_template {
            if let Node::Element(e) = node.value()
                && e.attr(Attr::Id).is_some_and(streamed::is_template_id)
            {
                self.streamed.set(true);
            }
            // The template contents fragment (never rendered).
            node.append(Node::Other);
        }
        node.id()
    }

    fn create_comment(&self, _text: StrTendril) -> NodeId {
        let id = self.tree.borrow_mut().orphan(Node::Other).id();
        self.last_comment.set(Some(id));
        id
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> NodeId {
        self.tree.borrow_mut().orphan(Node::Other).id()
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        let mut tree = self.tree.borrow_mut();
        match child {
            NodeOrText::AppendNode(id) => {
                if let Some(mut parent) = tree.get_mut(*parent) {
                    parent.append_id(id);
                }
            }
            NodeOrText::AppendText(text) => Sink::append_text(&mut tree, *parent, text),
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &NodeId,
        prev_element: &NodeId,
        child: NodeOrText<NodeId>,
    ) {
        let has_parent = self
            .tree
            .borrow()
            .get(*element)
            .is_some_and(|n| n.parent().is_some());
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        self.tree
            .borrow()
            .get(*target)
            .and_then(|n| n.first_child())
            .map_or(*target, |n| n.id())
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        let mut tree = self.tree.borrow_mut();
        if let NodeOrText::AppendNode(id) = new_node
            && let Some(mut node) = tree.get_mut(id)
        {
            node.detach();
        }
        let Some(mut sibling) = tree.get_mut(*sibling) else {
            return;
        };
        if sibling.parent().is_none() {
            return;
        }
        match new_node {
            NodeOrText::AppendNode(id) => {
                sibling.insert_id_before(id);
            }
            NodeOrText::AppendText(text) => {
                if let Some(mut prev) = sibling.prev_sibling()
                    && let Node::Text(existing) = prev.value()
                {
                    existing.push_tendril(&text);
                    return;
                }
                sibling.insert_before(Node::Text(text));
            }
        }
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        let mut tree = self.tree.borrow_mut();
        let Some(mut node) = tree.get_mut(*target) else {
            return;
        };
        if let Node::Element(element) = node.value() {
            let mut kept = std::mem::take(&mut element.attrs).into_vec();
            for attr in attrs {
                if let Some(kind) = Attr::from_name(&attr.name)
                    && !kept.iter().any(|(a, _)| *a == kind)
                {
                    kept.push((kind, attr.value));
                }
            }
            element.attrs = kept.into_boxed_slice();
            element.classify_attributes();
        }
    }

    fn remove_from_parent(&self, target: &NodeId) {
        if let Some(mut node) = self.tree.borrow_mut().get_mut(*target) {
            node.detach();
        }
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        if let Some(mut parent) = self.tree.borrow_mut().get_mut(*new_parent) {
            parent.reparent_from_id_append(*node);
        }
    }
}

#[cfg(test)]
mod tests;
