//! Boilerplate removal (FR-WF-13 steps 1-3, FR-WF-EXT-CLASS-01) and the element
//! classification the Markdown converter uses.
//!
//! Both are decided once per element, when the parser creates it. Removal is a
//! flag, not a tree edit: a removed element's whole subtree is skipped by every
//! later pass, which is the same as removing it and costs nothing.

use html5ever::{LocalName, local_name, ns};

use super::dom::{Attr, Element, Name};

/// The FR-WF-EXT-CLASS-01 boilerplate tokens, lowercase.
pub const BOILERPLATE_TOKENS: [&str; 10] = [
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
pub enum Tag {
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
    pub fn is_block(self) -> bool {
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
pub fn classify(name: &Name) -> Tag {
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
pub fn is_script_or_style(local: &LocalName) -> bool {
    matches!(*local, local_name!("script") | local_name!("style"))
}

/// FR-WF-13 steps 1-3 for one element: a removed tag, `hidden`,
/// `aria-hidden="true"`, or a boilerplate class token / id (EXT-CLASS-01).
///
/// `<html>` and `<body>` are never removed by attribute: they are the containers of
/// last resort (EXT-ROOT-01 step 6), and a `<body class="menu-open">`-style token on
/// them would otherwise turn a whole page into `no_extractable_content` (our
/// reading; listed in the report).
pub fn is_boilerplate(element: &Element) -> bool {
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
pub fn is_hidden_or_boilerplate_named(element: &Element) -> bool {
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
pub struct ClassTokens {
    /// A boilerplate token (EXT-CLASS-01).
    pub boilerplate: bool,
    /// The token `content` (EXT-ROOT-01's fifth root candidate).
    pub content: bool,
}

impl ClassTokens {
    /// The tokens of a `class` value (case-insensitive, whole tokens only:
    /// `site-nav` and `navigate` are not `nav`).
    pub fn of(class: &str) -> ClassTokens {
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
pub fn is_boilerplate_token(token: &str) -> bool {
    let token = token.trim_matches(|c: char| c.is_ascii_whitespace());
    BOILERPLATE_TOKENS
        .iter()
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Whether a `class` value has the token `token` (case-insensitive).
pub fn has_class_token(class: &str, token: &str) -> bool {
    class
        .split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Void elements: never open, so never deepen the tree.
pub fn is_void(name: &LocalName) -> bool {
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
pub fn is_raw_text(name: &LocalName) -> bool {
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
pub fn is_formatting(name: &LocalName) -> bool {
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
            ("x Content\ty", ClassTokens { content: true, ..ClassTokens::default() }),
            ("content sidebar", both),
            ("Sidebar", ClassTokens { boilerplate: true, ..ClassTokens::default() }),
            ("", ClassTokens::default()),
        ] {
            assert_eq!(ClassTokens::of(class), expected, "{class:?}");
        }
    }
}
