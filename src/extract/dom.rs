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
mod tokenize;

/// Open handles (open elements plus active formatting entries) past which start
/// tags are dropped. Half of Blink's 512: every start tag costs html5ever a scope
/// scan of the open elements, so this bounds the cost per tag; real pages stay far
/// below it.
pub const MAX_OPEN: usize = 256;
/// Formatting elements held (open, or waiting in the active formatting list) past
/// which formatting start tags (`<b>`, `<a>`, `<font>`, ...) are dropped: each
/// entry may be re-created for every later text run, and each new one is compared
/// with all of them (the "Noah's Ark" clause). Counted apart from [`MAX_OPEN`], so
/// a legitimately deep page keeps its links and emphasis.
pub const MAX_OPEN_FORMATTING: usize = 128;
/// Attributes kept per tag.
pub const MAX_ATTRIBUTES: usize = 128;

/// Elements the tree may hold for an input of `len` bytes: generous for real pages
/// (which have one element per 30 or more bytes), linear in the input.
pub fn element_budget(len: usize) -> usize {
    10_000 + len / 4
}

/// A borrowed [`Name`], as html5ever's tree builder asks for it.
#[derive(Debug)]
pub struct NameRef<'a>(Ref<'a, Name>);

impl ElemName for NameRef<'_> {
    fn ns(&self) -> &Namespace {
        &self.0.ns
    }

    fn local_name(&self) -> &LocalName {
        &self.0.local
    }
}

/// A node of the tree.
#[derive(Debug)]
pub enum Node {
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
    pub fn element(&self) -> Option<&Element> {
        match self {
            Node::Element(e) => Some(e),
            _ => None,
        }
    }
}

/// A parsed document.
pub struct Document {
    /// The arena; dropping it is a flat loop, whatever the nesting depth.
    pub tree: Tree<Node>,
}

impl Document {
    /// The document node.
    pub fn root(&self) -> NodeRef<'_, Node> {
        self.tree.root()
    }

    /// Every node in document order, without recursion.
    pub fn descendants(&self) -> impl Iterator<Item = NodeRef<'_, Node>> {
        self.tree.root().descendants()
    }
}

/// Parses `html` into a [`Document`], within the bounds described in the module docs.
pub fn parse(html: &str) -> Document {
    parse_counting(html, Counting::Bounded, true)
}

/// [`parse`] with scripting off: `<noscript>` content is parsed as markup, as a
/// browser without JavaScript shows it. Article mode reads the crawler views that
/// forums (Discourse) put there; the SRD algorithm removes `<noscript>` whole.
pub fn parse_without_scripting(html: &str) -> Document {
    parse_counting(html, Counting::Bounded, false)
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
                    let attrs: Vec<(Attr, &str)> = e.attrs.iter().map(|(a, v)| (*a, &**v)).collect();
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
        Document {
            tree: self.builder.sink.tree.into_inner(),
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
mod tests {
    use super::*;
    use crate::extract::element::READ_ATTRIBUTES;

    #[test]
    fn past_the_attribute_cap_hidden_elements_stay_removed() {
        let junk: String = (0..MAX_ATTRIBUTES + 50).map(|i| format!(" a{i}")).collect();
        let html = format!("<div{junk} class='x ad'>hidden</div><p>shown</p>");
        let element = parse(&html)
            .descendants()
            .filter_map(|n| {
                n.value()
                    .element()
                    .map(|e| (e.removed, e.attr(Attr::Class).map(str::to_owned)))
            })
            .find(|(_, class)| class.is_some());
        assert_eq!(element, Some((true, Some("x ad".to_owned()))));
    }

    #[test]
    fn raw_text_that_looks_like_a_tag_is_left_alone() {
        let fake: String = (0..MAX_ATTRIBUTES + 50).map(|i| format!(" a{i}")).collect();
        let raw = format!("var s = '<div{fake}>';");
        assert!(all_text(&parse(&format!("<xmp>{raw}</xmp>"))).contains(&raw));
        let doc = parse(&format!("<script>{raw}</script>"));
        assert_eq!(names(&doc), ["html", "head", "script", "body"]);
    }

    /// Script and style text is not kept: no pass reads it (FR-WF-13 step 1
    /// removes both), and it is half of a real page's bytes.
    #[test]
    fn script_and_style_text_is_not_kept() {
        for html in [
            "<script>var secret = 1;</script><p>t</p>",
            "<p>t<style>p { color: red }</style></p>",
            "<svg><style>.a {}</style><script>x()</script></svg><p>t</p>",
        ] {
            assert_eq!(all_text(&parse(html)), "t", "{html}");
            assert_eq!(all_text(&parse_without_scripting(html)), "t", "{html}");
        }
    }

    #[test]
    fn a_read_attribute_table_entry_is_what_from_name_reads() {
        for name in READ_ATTRIBUTES {
            let qual = QualName::new(None, ns!(), LocalName::from(name));
            assert!(Attr::from_name(&qual).is_some(), "{name}");
        }
    }

    #[test]
    fn raw_switch_covers_the_raw_text_elements() {
        for name in [
            "script",
            "style",
            "xmp",
            "iframe",
            "noembed",
            "noframes",
            "noscript",
            "textarea",
            "title",
            "plaintext",
            "div",
            "pre",
            "b",
        ] {
            let name = LocalName::from(name);
            assert_eq!(
                raw_switch(&name).is_some(),
                element::is_raw_text(&name),
                "{name}"
            );
        }
    }

    /// All the text of the tree, in document order.
    fn all_text(doc: &Document) -> String {
        doc.descendants()
            .filter_map(|n| match n.value() {
                Node::Text(t) => Some(&**t),
                _ => None,
            })
            .collect()
    }

    /// Attributes a later `<body>` tag adds are read like the first tag's.
    #[test]
    fn merged_attributes_are_classified_again() {
        let doc = parse("<p>x</p><body class='content' hidden>");
        let body = first_element(&doc, local_name!("body")).expect("a body");
        assert!(body.classes.content);
        assert!(body.has_attr(Attr::Hidden));
        assert!(!body.removed, "<body> is never removed by attribute");
        let doc = parse("<p>z<html class=sidebar>");
        let html = first_element(&doc, local_name!("html")).map(|e| e.classes);
        assert_eq!(html.map(|c| c.boilerplate), Some(true));
    }

    /// The first element named `local`, in document order.
    fn first_element(doc: &Document, local: LocalName) -> Option<&Element> {
        doc.descendants()
            .filter_map(|n| n.value().element())
            .find(|e| e.name.local == local)
    }

    /// Every element's local name, in document order.
    fn names(doc: &Document) -> Vec<String> {
        doc.descendants()
            .filter_map(|n| n.value().element().map(|e| e.name.local.to_string()))
            .collect()
    }

    /// The element that holds `text`, and its ancestors' names.
    fn path_to(doc: &Document, text: &str) -> Vec<String> {
        doc.descendants()
            .find(|n| matches!(n.value(), Node::Text(t) if t.contains(text)))
            .map(|n| {
                n.ancestors()
                    .filter_map(|a| a.value().element().map(|e| e.name.local.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Formatting elements re-created for every paragraph spend the element budget
    /// early; what follows is built flat and kept, in the element it was in.
    #[test]
    fn content_after_a_spent_budget_is_kept() {
        let storm: String = (0..120).map(|i| format!("<b id={i}>")).collect();
        let html = format!(
            "<p>{storm}{}<main>Article <i>it</i></main><p>after",
            "<p>para</p>".repeat(300)
        );
        let doc = parse(&html);
        let elements = doc.descendants().filter(|n| n.value().element().is_some());
        assert!(elements.count() < element_budget(html.len()) + 1_000);
        assert_eq!(path_to(&doc, "Article"), ["main", "body", "html"]);
        assert_eq!(path_to(&doc, "it"), ["i", "main", "body", "html"]);
        assert_eq!(path_to(&doc, "after")[..3], ["p", "body", "html"]);
    }

    #[test]
    fn flat_building_keeps_boilerplate_removed_and_raw_text_raw() {
        let html = "<p>lead</p><nav>N1<b>N2</b></nav><div hidden>H</div><xmp>if (a<b) {}</xmp><script>if (a<b) {}</script>\
                    <textarea><b>t</b></textarea><table><tr><td>c</div>d</td></tr></table><p>e</p></body>x";
        let doc = parse_within(html, Counting::Bounded, 2, true);
        for (text, path) in [
            ("N2", vec!["b", "nav", "body", "html"]),
            ("H", vec!["div", "body", "html"]),
            ("if (a<b)", vec!["xmp", "body", "html"]),
            ("<b>t</b>", vec!["textarea", "body", "html"]),
            ("cd", vec!["td", "tr", "table", "body", "html"]),
            ("e", vec!["p", "body", "html"]),
        ] {
            assert_eq!(path_to(&doc, text), path, "{text}");
        }
        let removed: Vec<String> = doc
            .descendants()
            .filter_map(|n| {
                n.value()
                    .element()
                    .filter(|e| e.removed)
                    .map(|e| e.name.local.to_string())
            })
            .collect();
        assert_eq!(removed, ["nav", "div", "script"]);
        // The script's text, kept by no one, made no element either.
        assert_eq!(all_text(&doc).matches("if (a<b)").count(), 1);
        assert!(all_text(&doc).ends_with('x'));
    }

    /// A budget spent in the `<head>` or after `</html>` puts later text in the body.
    #[test]
    fn flat_building_writes_text_into_the_body() {
        let doc = parse_within(
            "<head><meta><meta><title>t</title><meta>visible",
            Counting::Bounded,
            3,
            true,
        );
        assert_eq!(path_to(&doc, "visible"), ["body", "html"]);
        let doc = parse_within(
            "<body><p>a</p></body></html><p>late</p>",
            Counting::Bounded,
            4,
            true,
        );
        assert_eq!(path_to(&doc, "late"), ["p", "body", "html"]);
    }

    /// A start tag dropped at the depth cap that would hide its subtree hides it,
    /// up to its own end tag (nested ones of the same name counted), and raw text
    /// inside cannot end the suppression early.
    #[test]
    fn hidden_tags_past_the_depth_cap_suppress_their_subtree() {
        let deep = "<div>".repeat(MAX_OPEN + 20);
        let html = format!(
            "{deep}<section class=ad>A<section>B</section>C<script>'</section>'</script>\
             <textarea></section></textarea>D</section>after"
        );
        let doc = parse(&html);
        let text = all_text(&doc);
        assert!(text.ends_with("after"), "{text}");
        for hidden in ["A", "B", "C", "D", "'"] {
            assert!(!text.contains(hidden), "{hidden} in {text}");
        }
    }

    /// The tree as text: each node's depth and name or text, in document order.
    fn outline(doc: &Document) -> String {
        let mut out = String::new();
        for edge in doc.root().traverse() {
            if let ego_tree::iter::Edge::Open(node) = edge {
                let depth = node.ancestors().count();
                let label = match node.value() {
                    Node::Element(e) => format!("<{}>", e.name.local),
                    Node::Text(t) => format!("{:?}", &**t),
                    Node::Document | Node::Other => "#".to_owned(),
                };
                out.push_str(&format!("{depth} {label}\n"));
            }
        }
        out
    }

    /// Markup the tokenizers may disagree on: every tokenizer state and the
    /// tree builder's answers to it. (Not U+FEFF: html5ever drops one at every
    /// point where its tokenizer resumes after `</script>`, where a browser keeps
    /// it; the bridge drops it only at the start, see `tokenize.rs`.)
    const TOKENIZER_SOUP: [&str; 56] = [
        "<!DOCTYPE html>", "<!doctype html public \"-//W3C//DTD HTML 4.01//EN\">",
        "<!DOCTYPE>", "<!-- c -->", "<!--->", "<!-- a -- b --!>", "<?php x ?>",
        "<div class=a id='b' CLASS=c>", "</div>", "<p>", "</p>", "text ", " \r\n ", "\r",
        "\0", "&amp;", "&notin;", "&notit;", "&#0;", "&#x110000;", "&#128;", "&", "<",
        ">", "<a href=\"/x?a=1&amp;b=2&c\">", "</a>", "<br/>", "</br>", "</p foo=bar>",
        "<script>a<b</script>", "<script><!--<script>x</script>-->y</script>",
        "<style>p{}</style>", "<textarea>&lt;b&gt;</textarea>", "<title>t&amp;</title>",
        "<noscript><b>n</b></noscript>", "<xmp><i></xmp>", "<iframe><b></iframe>",
        "<svg><![CDATA[ c<d ]]><foreignObject><p>f</p></foreignObject></svg>",
        "<math><mi>m</mi><annotation-xml encoding=text/html><p>q</annotation-xml></math>",
        "<![CDATA[ html ]]>", "<table><tr><td>", "</table>", "<input type=hidden>",
        "<template><b>", "</template>", "<select><option>o", "<a/b c=d/>",
        // Attributes nobody reads, on elements whose attributes the tree builder
        // reads or compares (the bridge drops them elsewhere, `tokenize.rs`).
        "<b data-a=1 class=x>", "<b data-a=2 class=x>", "</b>", "<input type=hidden data-x=1>",
        "<template shadowrootmode=open data-x=1>", "<form id=f data-x=1><input form=f data-y=2>",
        "<svg><font color=red data-x=1>f</font>",
        "<math><annotation-xml encoding='text/html' data-x=1><p>",
        // A row of double-quoted attributes long enough to be broken (`tokenize.rs`).
        "<div a0=\"0\" a1=\"1\" a2=\"2\" a3=\"3\" a4=\"4\" a5=\"5\" a6=\"6\" a7=\"7\" a8=\"8\" a9=\"9\" a10=\"10\" a11=\"11\" a12=\"12\" a13=\"13\" a14=\"14\" a15=\"15\" a16=\"16\" a17=\"17\" a18=\"18\" a19=\"19\" a20=\"20\" a21=\"21\" a22=\"22\" a23=\"23\" a24=\"24\" a25=\"25\" a26=\"26\" a27=\"27\" a28=\"28\" a29=\"29\" a30=\"30\" a31=\"31\" a32=\"32\" a33=\"33\" a34=\"34\" a35=\"35\" a36=\"36\" a37=\"37\" a38=\"38\" a39=\"39\" class=\"x\">",
    ];

    /// The bridge keeps on an element only the attributes extraction or the tree
    /// builder reads, except on formatting elements, which keep them all: the
    /// tree is the one html5ever's own tokenizer (which keeps every attribute)
    /// builds, where a dropped attribute would change it.
    #[test]
    fn attributes_nobody_reads_change_no_tree() {
        for html in [
            // Noah's ark: four `<b>` alike but for an unread attribute.
            "<p><b data-a=1>1<b data-a=2>2<b data-a=3>3<b data-a=1>4<p>5",
            // A hidden input stays in its table; another is foster-parented.
            "<table><input type=hidden data-x=1><input data-x=1><tr><td>c</table>",
            "<template shadowrootmode=open data-x=1><p>s</p></template>",
            "<form id=f data-x=1><input form=f data-y=2><p>t</form>",
            "<svg><font color=red data-x=1>f</font><font data-x=1>g</font></svg>",
            "<math><annotation-xml encoding=text/html data-x=1><p>m</p></annotation-xml></math>",
        ] {
            let budget = element_budget(html.len());
            for scripting in [true, false] {
                let ours = full_outline(&parse_within(html, Counting::Always, budget, scripting));
                let reference = full_outline(&parse_within_html5ever(html, budget, scripting));
                assert_eq!(ours, reference, "{html}");
            }
        }
    }

    proptest::proptest! {
        /// html5gum's tokenizer, through the bridge, builds the tree html5ever's
        /// own tokenizer builds, scripting on and off.
        #[test]
        fn both_tokenizers_build_the_same_tree(
            tokens in proptest::collection::vec(0usize..TOKENIZER_SOUP.len(), 0..200),
            scripting: bool,
        ) {
            let html: String = tokens.iter().map(|&i| TOKENIZER_SOUP[i]).collect();
            let budget = element_budget(html.len());
            let ours = full_outline(&parse_within(&html, Counting::Always, budget, scripting));
            let reference = full_outline(&parse_within_html5ever(&html, budget, scripting));
            proptest::prop_assert_eq!(ours, reference, "{:?}", html);
        }

        /// The same on any text at all.
        #[test]
        fn both_tokenizers_build_the_same_tree_from_any_text(html in "\\PC{0,300}") {
            let budget = element_budget(html.len());
            let ours = full_outline(&parse_within(&html, Counting::Always, budget, true));
            let reference = full_outline(&parse_within_html5ever(&html, budget, true));
            proptest::prop_assert_eq!(ours, reference, "{:?}", html);
        }
    }

    proptest::proptest! {
        /// Counting handles only when the bound allows a cap to be reached builds
        /// the same tree as counting before every start tag, on tag soup deep enough
        /// to reach both caps.
        #[test]
        fn bounded_counting_builds_the_same_tree(
            tokens in proptest::collection::vec(0usize..24, 0..3000)
        ) {
            const SOUP: [&str; 24] = [
                "<div>", "<b>", "<i>", "<a href=/x>", "<p>", "</b>", "</i>", "</a>",
                "</div>", "<table>", "<td>", "<tr>", "text ", "<ul><li>", "</p>",
                "<font>", "<span>", "</span>", "<em>", "<nobr>", "<svg><g>",
                "<template>", "<select><option>", "</table>",
            ];
            let html: String = tokens.iter().map(|&i| SOUP[i]).collect();
            let bounded = outline(&parse_counting(&html, Counting::Bounded, true));
            let always = outline(&parse_counting(&html, Counting::Always, true));
            proptest::prop_assert_eq!(bounded, always);
        }
    }

    proptest::proptest! {
        /// Whatever the element budget, no text is lost: every word of the soup
        /// (no boilerplate in it) is somewhere in the tree, and the elements stay
        /// within the budget plus one per start tag.
        #[test]
        fn a_spent_budget_loses_no_text(
            tokens in proptest::collection::vec(0usize..26, 0..400),
            budget in 0usize..300,
        ) {
            const SOUP: [&str; 26] = [
                "<div>", "<b>", "<i id=1>", "<a href=/x>", "<p>", "</b>", "</i>", "</a>",
                "</div>", "<table>", "<td>", "<tr>", "word", "<ul><li>", "</p>",
                "<font>", "<span>", "</span>", "<em>", "<pre>", "<svg><g>", "</svg>",
                "<template>", "</template>", "<select><option>", "</table>",
            ];
            let mut html = String::new();
            let mut words = 0;
            for &i in &tokens {
                if SOUP[i] == "word" {
                    words += 1;
                    html.push_str(&format!(" w{words}. "));
                } else {
                    html.push_str(SOUP[i]);
                }
            }
            let doc = parse_within(&html, Counting::Bounded, budget, true);
            let text = all_text(&doc);
            for word in 1..=words {
                proptest::prop_assert!(text.contains(&format!("w{word}.")), "w{} lost: {}", word, html);
            }
            let elements = doc.descendants().filter(|n| n.value().element().is_some()).count();
            proptest::prop_assert!(elements <= budget + 200 + html.matches('<').count());
        }
    }

    #[test]
    fn deep_soup_reaches_the_caps_with_bounded_counting() {
        let html = "<div><b>x".repeat(1000);
        let doc = parse(&html);
        assert_eq!(
            outline(&doc),
            outline(&parse_counting(&html, Counting::Always, true))
        );
        let depth = doc.descendants().map(|n| n.ancestors().count()).max();
        assert!(depth.is_some_and(|d| d < MAX_OPEN + 8), "{depth:?}");
    }

    #[test]
    fn parse_builds_tree() {
        let doc = parse("<p class='Nav'>a<b>b</b></p>");
        assert!(first_element(&doc, local_name!("p")).is_some_and(|p| p.removed));
    }
}
