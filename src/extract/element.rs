//! An element as extraction sees it (its name, the attributes it reads), with
//! boilerplate removal (FR-WF-13 steps 1-3, FR-WF-EXT-CLASS-01) and the element
//! classification the Markdown converter uses.
//!
//! The parser ([`dom`](super::dom)) makes elements; this module is below it, so
//! the rules never depend on the tree. Both are decided once per element, when the
//! parser creates it. Removal is a
//! flag, not a tree edit: a removed element's whole subtree is skipped by every
//! later pass, which is the same as removing it and costs nothing.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer;
use html5ever::{Attribute, LocalName, Namespace, QualName, local_name, ns};

/// The FR-WF-EXT-CLASS-01 boilerplate tokens, lowercase.
pub(crate) const BOILERPLATE_TOKENS: [&str; 10] = [
    "nav",
    "menu",
    "sidebar",
    "footer",
    "header",
    "advertisement",
    "ad",
    "social",
    "related",
    "comments",
];

/// What the converter does with an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    /// `<html>`.
    Html,
    /// `<head>`: never rendered, but searched for `<title>` and `<base>`.
    Head,
    /// `<body>`.
    Body,
    /// `<title>` (HTML namespace): the page title, never body text (browsers do not
    /// show a `<title>` that strays into `<body>`).
    Title,
    /// `<base>`.
    Base,
    /// `<main>`.
    Main,
    /// `<article>`.
    Article,
    /// `<h1>`..`<h6>`.
    Heading(u8),
    /// `<a>`.
    Link,
    /// `<img>`.
    Image,
    /// `<ul>`, `<menu>`.
    UnorderedList,
    /// `<ol>`.
    OrderedList,
    /// `<li>`.
    ListItem,
    /// `<pre>`.
    Pre,
    /// `<code>`, `<kbd>`, `<samp>`, `<tt>`: inline code.
    Code,
    /// `<em>`, `<i>`.
    Emphasis,
    /// `<strong>`, `<b>`.
    Strong,
    /// `<br>`.
    LineBreak,
    /// `<hr>`.
    Rule,
    /// `<blockquote>`.
    Quote,
    /// `<table>`.
    Table,
    /// `<caption>`.
    Caption,
    /// `<tr>`.
    Row,
    /// `<td>`, `<th>`.
    Cell {
        /// `<th>`.
        header: bool,
    },
    /// Other block-level containers: a blank line before and after
    /// (FR-WF-EXT-TAGS-01).
    Block,
    /// Never rendered: `<template>`, `<svg>`, form controls whose text is
    /// not prose (`<select>`, `<datalist>`), `<iframe>` fallback text, media fallback.
    Skip,
    /// Everything else: inline, its text concatenated with single spaces.
    Inline,
}

impl Tag {
    /// Block-level for separation purposes.
    pub(crate) fn is_block(self) -> bool {
        !matches!(
            self,
            Tag::Inline
                | Tag::Link
                | Tag::Image
                | Tag::Code
                | Tag::Emphasis
                | Tag::Strong
                | Tag::LineBreak
                | Tag::Skip
                | Tag::Head
        )
    }
}

/// Classifies an element by name. Only HTML-namespace elements get HTML meanings;
/// `<svg>` is skipped whole (inline graphics: icon titles are not page text), MathML
/// is kept as inline text.
pub(crate) fn classify(name: &Name) -> Tag {
    if name.ns == ns!(svg) && name.local == local_name!("svg") {
        return Tag::Skip;
    }
    if name.ns != ns!(html) {
        return Tag::Inline;
    }
    match name.local {
        local_name!("html") => Tag::Html,
        local_name!("head") => Tag::Head,
        local_name!("body") => Tag::Body,
        local_name!("title") => Tag::Title,
        local_name!("base") => Tag::Base,
        local_name!("main") => Tag::Main,
        local_name!("article") => Tag::Article,
        local_name!("h1") => Tag::Heading(1),
        local_name!("h2") => Tag::Heading(2),
        local_name!("h3") => Tag::Heading(3),
        local_name!("h4") => Tag::Heading(4),
        local_name!("h5") => Tag::Heading(5),
        local_name!("h6") => Tag::Heading(6),
        local_name!("a") => Tag::Link,
        local_name!("img") => Tag::Image,
        local_name!("ul") | local_name!("menu") | local_name!("dir") => Tag::UnorderedList,
        local_name!("ol") => Tag::OrderedList,
        local_name!("li") => Tag::ListItem,
        local_name!("pre") | local_name!("listing") | local_name!("xmp") => Tag::Pre,
        local_name!("code") | local_name!("kbd") | local_name!("samp") | local_name!("tt") => {
            Tag::Code
        }
        local_name!("em") | local_name!("i") => Tag::Emphasis,
        local_name!("strong") | local_name!("b") => Tag::Strong,
        local_name!("br") => Tag::LineBreak,
        local_name!("hr") => Tag::Rule,
        local_name!("blockquote") => Tag::Quote,
        local_name!("table") => Tag::Table,
        local_name!("caption") => Tag::Caption,
        local_name!("tr") => Tag::Row,
        local_name!("td") => Tag::Cell { header: false },
        local_name!("th") => Tag::Cell { header: true },
        local_name!("p")
        | local_name!("div")
        | local_name!("section")
        | local_name!("address")
        | local_name!("aside")
        | local_name!("center")
        | local_name!("dd")
        | local_name!("details")
        | local_name!("dialog")
        | local_name!("dl")
        | local_name!("dt")
        | local_name!("fieldset")
        | local_name!("figcaption")
        | local_name!("figure")
        | local_name!("footer")
        | local_name!("form")
        | local_name!("header")
        | local_name!("hgroup")
        | local_name!("legend")
        | local_name!("nav")
        | local_name!("summary")
        | local_name!("search")
        | local_name!("thead")
        | local_name!("tbody")
        | local_name!("tfoot") => Tag::Block,
        local_name!("template")
        | local_name!("select")
        | local_name!("datalist")
        | local_name!("iframe")
        | local_name!("noframes")
        | local_name!("noembed")
        | local_name!("audio")
        | local_name!("video")
        | local_name!("canvas")
        | local_name!("object")
        | local_name!("map") => Tag::Skip,
        _ => Tag::Inline,
    }
}

/// A `<script>` or `<style>`, in any namespace (an SVG's own count too): removed
/// whole by FR-WF-13 step 1, so no pass ever reads their text.
pub(crate) fn is_script_or_style(local: &LocalName) -> bool {
    matches!(*local, local_name!("script") | local_name!("style"))
}

/// FR-WF-13 steps 1-3 for one element: a removed tag, `hidden`,
/// `aria-hidden="true"`, or a boilerplate class token / id (EXT-CLASS-01).
///
/// `<html>` and `<body>` are never removed by attribute: they are the containers of
/// last resort (EXT-ROOT-01 step 6), and a `<body class="menu-open">`-style token on
/// them would otherwise turn a whole page into `no_extractable_content` (our
/// reading; listed in the report).
pub(crate) fn is_boilerplate(element: &Element) -> bool {
    let name = &element.name;
    if is_script_or_style(&name.local) {
        return true;
    }
    if name.ns == ns!(html) {
        if matches!(
            name.local,
            local_name!("noscript")
                | local_name!("nav")
                | local_name!("footer")
                | local_name!("header")
                | local_name!("aside")
        ) {
            return true;
        }
        if matches!(element.tag, Tag::Html | Tag::Body) {
            return false;
        }
    }
    is_hidden_or_boilerplate_named(element)
}

/// FR-WF-13 steps 2 and 3 alone: `hidden`, `aria-hidden="true"`, or a boilerplate
/// class token or id (EXT-CLASS-01), whatever the element's name.
pub(crate) fn is_hidden_or_boilerplate_named(element: &Element) -> bool {
    if element.has_attr(Attr::Hidden) {
        return true;
    }
    if element
        .attr(Attr::AriaHidden)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    {
        return true;
    }
    if element.classes.boilerplate {
        return true;
    }
    element.attr(Attr::Id).is_some_and(is_boilerplate_token)
}

/// What extraction asks of an element's `class` tokens, found in one pass over
/// them when the element is made: real pages' class lists run to dozens of tokens,
/// and both questions are asked of every element.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ClassTokens {
    /// A boilerplate token (EXT-CLASS-01).
    pub boilerplate: bool,
    /// The token `content` (EXT-ROOT-01's fifth root candidate).
    pub content: bool,
}

impl ClassTokens {
    /// The tokens of a `class` value (case-insensitive, whole tokens only:
    /// `site-nav` and `navigate` are not `nav`).
    pub(crate) fn of(class: &str) -> ClassTokens {
        let mut found = ClassTokens::default();
        for token in class.split_ascii_whitespace() {
            found.boilerplate |= is_boilerplate_token(token);
            found.content |= token.eq_ignore_ascii_case("content");
        }
        found
    }
}

/// Whether a single token (an `id` value, or one class token) is a boilerplate
/// token. The `id` is compared whole (trimmed), as EXT-CLASS-01 says "equals".
pub(crate) fn is_boilerplate_token(token: &str) -> bool {
    let token = token.trim_matches(|c: char| c.is_ascii_whitespace());
    BOILERPLATE_TOKENS
        .iter()
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Whether a `class` value has the token `token` (case-insensitive).
pub(crate) fn has_class_token(class: &str, token: &str) -> bool {
    class
        .split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Void elements: never open, so never deepen the tree.
pub(crate) fn is_void(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("frame")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("keygen")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("param")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
            | local_name!("image")
    )
}

/// Elements whose content the tokenizer reads as raw text up to their end tag:
/// dropping their start tag would turn scripts and styles into page text.
pub(crate) fn is_raw_text(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("script")
            | local_name!("style")
            | local_name!("xmp")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("textarea")
            | local_name!("title")
            | local_name!("plaintext")
    )
}

/// The HTML formatting elements (the tree builder's active formatting list).
pub(crate) fn is_formatting(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("a")
            | local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("nobr")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u")
    )
}

/// The attributes extraction reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attr {
    /// `href` (links, `<base>`).
    Href,
    /// `src` (images).
    Src,
    /// `alt` (images).
    Alt,
    /// `class` (boilerplate tokens, `content` root, `language-xxx`).
    Class,
    /// `id` (boilerplate tokens, `content` root).
    Id,
    /// `role` (`main` root).
    Role,
    /// `lang` (`<html lang>`).
    Lang,
    /// `start` (`<ol start>`).
    Start,
    /// `hidden` (boilerplate).
    Hidden,
    /// `aria-hidden` (boilerplate).
    AriaHidden,
    /// `style` (article mode only: `display: none` and `visibility: hidden`).
    Style,
}

/// The names of the attributes extraction reads, as [`Attr::from_name`] knows them:
/// the attribute cap keeps these past [`MAX_ATTRIBUTES`] (`tokenize.rs`).
pub(crate) const READ_ATTRIBUTES: [&str; 11] = [
    "href",
    "src",
    "alt",
    "class",
    "id",
    "role",
    "lang",
    "start",
    "hidden",
    "aria-hidden",
    "style",
];

/// The attributes html5ever's tree builder reads on elements other than
/// formatting ones: `type` (`<input type=hidden>` in tables and the frameset
/// flag), `form` (form association), `shadowrootmode` (declarative shadow roots),
/// `encoding` (MathML `<annotation-xml>` as an HTML integration point). With
/// [`READ_ATTRIBUTES`], all that the bridge keeps on such elements
/// (`tokenize.rs`): the rest are never read, so they are never interned or copied.
/// (`<meta charset>` and `http-equiv` only make the encoding answer the bridge
/// ignores; `<font color>` is a formatting element's.) Read off html5ever 0.40
/// and markup5ever's `create_element_with_flags`: re-check on an upgrade. The
/// test `attributes_nobody_reads_change_no_tree`, the tokenizer proptests and the
/// `tokenizers` fuzz target compare with html5ever's own tokenizer, which keeps all.
pub(crate) const TREE_BUILDER_ATTRIBUTES: [&str; 4] =
    ["type", "form", "shadowrootmode", "encoding"];

impl Attr {
    pub(crate) fn from_name(name: &QualName) -> Option<Attr> {
        if name.ns != ns!() {
            return None;
        }
        Some(match name.local {
            local_name!("href") => Attr::Href,
            local_name!("src") => Attr::Src,
            local_name!("alt") => Attr::Alt,
            local_name!("class") => Attr::Class,
            local_name!("id") => Attr::Id,
            local_name!("role") => Attr::Role,
            local_name!("lang") => Attr::Lang,
            local_name!("start") => Attr::Start,
            local_name!("hidden") => Attr::Hidden,
            local_name!("aria-hidden") => Attr::AriaHidden,
            local_name!("style") => Attr::Style,
            _ => return None,
        })
    }
}

/// An element's namespace and local name: what the tree builder asks for and
/// extraction reads (a prefix never matters in HTML, and leaving it out keeps the
/// tree small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Name {
    /// The namespace (HTML, SVG, MathML).
    pub ns: Namespace,
    /// The local name (`div`).
    pub local: LocalName,
}

/// An element: its name (the tree builder asks for it), its classification and the
/// attributes extraction reads.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    /// The name, as parsed.
    pub name: Name,
    /// How extraction treats it.
    pub tag: Tag,
    /// Removed as boilerplate (FR-WF-13 steps 1-3, EXT-CLASS-01).
    pub removed: bool,
    /// What its `class` tokens say.
    pub classes: ClassTokens,
    /// Boxed, not a `Vec`: most elements keep none, and every byte of an element
    /// is paid for every node of the tree.
    pub(crate) attrs: Box<[(Attr, StrTendril)]>,
}

impl Element {
    pub(crate) fn new(name: QualName, attrs: Vec<Attribute>) -> Element {
        let name = Name {
            ns: name.ns,
            local: name.local,
        };
        // Sized exactly up front: collecting in place and shrinking would
        // reallocate once per element with attributes.
        let kept = attrs
            .iter()
            .filter(|a| Attr::from_name(&a.name).is_some())
            .count();
        let attrs: Box<[(Attr, StrTendril)]> = if kept == 0 {
            Box::default()
        } else {
            let mut out = Vec::with_capacity(kept);
            out.extend(
                attrs
                    .into_iter()
                    .filter_map(|a| Some((Attr::from_name(&a.name)?, a.value))),
            );
            out.into_boxed_slice()
        };
        let mut element = Element {
            tag: classify(&name),
            name,
            removed: false,
            classes: ClassTokens::default(),
            attrs,
        };
        element.classify_attributes();
        element
    }

    /// The element a start tag would make, for judging a tag that never reaches the
    /// tree: HTML, except `<svg>` and `<math>` (which open their namespaces).
    pub(crate) fn from_tag(tag: &tokenizer::Tag) -> Element {
        let attrs = tag
            .attrs
            .iter()
            .filter(|a| Attr::from_name(&a.name).is_some())
            .cloned()
            .collect();
        Element::new(tag_name(&tag.name), attrs)
    }

    /// Reads the class tokens, then judges boilerplate (which reads them), from the
    /// attributes as they now are.
    pub(crate) fn classify_attributes(&mut self) {
        self.classes = self
            .attr(Attr::Class)
            .map(ClassTokens::of)
            .unwrap_or_default();
        self.removed = is_boilerplate(self);
    }

    /// Whether extraction never shows this element's subtree: removed as
    /// boilerplate, or never rendered ([`Tag::Skip`]).
    pub(crate) fn hides_subtree(&self) -> bool {
        self.removed || self.tag == Tag::Skip
    }

    /// The value of `attr`, if present.
    pub(crate) fn attr(&self, attr: Attr) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(a, _)| *a == attr)
            .map(|(_, v)| &**v)
    }

    /// Whether the converter renders this element: not removed as boilerplate and
    /// not an element whose content is never page text (`<head>`, `<title>`,
    /// skipped ones). Every pass over the cleaned tree asks this.
    pub(crate) fn is_rendered(&self) -> bool {
        !(self.removed || matches!(self.tag, Tag::Skip | Tag::Head | Tag::Title))
    }

    /// Whether `attr` is present (any value).
    pub(crate) fn has_attr(&self, attr: Attr) -> bool {
        self.attrs.iter().any(|(a, _)| *a == attr)
    }
}

/// The element name for a start tag outside foreign content: HTML, except `<svg>`
/// and `<math>`, which open their namespaces.
pub(crate) fn tag_name(name: &LocalName) -> QualName {
    let ns = match *name {
        local_name!("svg") => ns!(svg),
        local_name!("math") => ns!(mathml),
        _ => ns!(html),
    };
    QualName::new(None, ns, name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_wf_ext_01_class_tokens_match_whole_tokens_only() {
        let cases = [
            ("nav", true),
            ("NAV", true),
            ("main nav", true),
            ("\tsidebar\n", true),
            ("Ad", true),
            ("navigate", false),
            ("site-nav", false),
            ("navbar", false),
            ("ads", false),
            ("header-wrap", false),
            ("related-posts comments", true),
            ("", false),
        ];
        for (class, expected) in cases {
            assert_eq!(ClassTokens::of(class).boilerplate, expected, "{class:?}");
        }
        assert!(is_boilerplate_token("Comments"));
        assert!(!is_boilerplate_token("nav menu"));
    }

    #[test]
    fn one_pass_over_class_tokens_answers_both_questions() {
        let both = ClassTokens {
            boilerplate: true,
            content: true,
        };
        for (class, expected) in [
            ("main-content article", ClassTokens::default()),
            (
                "x Content\ty",
                ClassTokens {
                    content: true,
                    ..ClassTokens::default()
                },
            ),
            ("content sidebar", both),
            (
                "Sidebar",
                ClassTokens {
                    boilerplate: true,
                    ..ClassTokens::default()
                },
            ),
            ("", ClassTokens::default()),
        ] {
            assert_eq!(ClassTokens::of(class), expected, "{class:?}");
        }
    }
}
