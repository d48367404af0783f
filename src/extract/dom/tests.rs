//! The parser's unit tests: bounds, the tree html5ever builds, attributes kept.

use super::*;
use crate::extract::element::READ_ATTRIBUTES;

#[test]
fn past_the_attribute_cap_hidden_elements_stay_removed() {
    let junk: String = (0..MAX_ATTRIBUTES + 50).map(|i| format!(" a{i}")).collect();
    let html = format!("<div{junk} class='x ad'>hidden</div><p>shown</p>");
    let element = parse(&html, Scripting::On)
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
    assert!(all_text(&parse(&format!("<xmp>{raw}</xmp>"), Scripting::On)).contains(&raw));
    let doc = parse(&format!("<script>{raw}</script>"), Scripting::On);
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
        assert_eq!(all_text(&parse(html, Scripting::On)), "t", "{html}");
        assert_eq!(all_text(&parse(html, Scripting::Off)), "t", "{html}");
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
    let doc = parse("<p>x</p><body class='content' hidden>", Scripting::On);
    let body = first_element(&doc, local_name!("body")).expect("a body");
    assert!(body.classes.content);
    assert!(body.has_attr(Attr::Hidden));
    assert!(!body.removed, "<body> is never removed by attribute");
    let doc = parse("<p>z<html class=sidebar>", Scripting::On);
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
    let doc = parse(&html, Scripting::On);
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
    let doc = parse(&html, Scripting::On);
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
    "<!DOCTYPE html>",
    "<!doctype html public \"-//W3C//DTD HTML 4.01//EN\">",
    "<!DOCTYPE>",
    "<!-- c -->",
    "<!--->",
    "<!-- a -- b --!>",
    "<?php x ?>",
    "<div class=a id='b' CLASS=c>",
    "</div>",
    "<p>",
    "</p>",
    "text ",
    " \r\n ",
    "\r",
    "\0",
    "&amp;",
    "&notin;",
    "&notit;",
    "&#0;",
    "&#x110000;",
    "&#128;",
    "&",
    "<",
    ">",
    "<a href=\"/x?a=1&amp;b=2&c\">",
    "</a>",
    "<br/>",
    "</br>",
    "</p foo=bar>",
    "<script>a<b</script>",
    "<script><!--<script>x</script>-->y</script>",
    "<style>p{}</style>",
    "<textarea>&lt;b&gt;</textarea>",
    "<title>t&amp;</title>",
    "<noscript><b>n</b></noscript>",
    "<xmp><i></xmp>",
    "<iframe><b></iframe>",
    "<svg><![CDATA[ c<d ]]><foreignObject><p>f</p></foreignObject></svg>",
    "<math><mi>m</mi><annotation-xml encoding=text/html><p>q</annotation-xml></math>",
    "<![CDATA[ html ]]>",
    "<table><tr><td>",
    "</table>",
    "<input type=hidden>",
    "<template><b>",
    "</template>",
    "<select><option>o",
    "<a/b c=d/>",
    // Attributes nobody reads, on elements whose attributes the tree builder
    // reads or compares (the bridge drops them elsewhere, `tokenize.rs`).
    "<b data-a=1 class=x>",
    "<b data-a=2 class=x>",
    "</b>",
    "<input type=hidden data-x=1>",
    "<template shadowrootmode=open data-x=1>",
    "<form id=f data-x=1><input form=f data-y=2>",
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
    let doc = parse(&html, Scripting::On);
    assert_eq!(
        outline(&doc),
        outline(&parse_counting(&html, Counting::Always, true))
    );
    let depth = doc.descendants().map(|n| n.ancestors().count()).max();
    assert!(depth.is_some_and(|d| d < MAX_OPEN + 8), "{depth:?}");
}

#[test]
fn parse_builds_tree() {
    let doc = parse("<p class='Nav'>a<b>b</b></p>", Scripting::On);
    assert!(first_element(&doc, local_name!("p")).is_some_and(|p| p.removed));
}

#[test]
fn the_parse_stops_at_the_first_tag_after_its_call_ended() {
    let html = "<p>para</p>".repeat(10_000);
    let paragraphs = |doc: &Document| {
        doc.descendants()
            .filter(|n| n.value().element().is_some())
            .count()
    };
    assert!(paragraphs(&parse(&html, Scripting::On)) > 10_000);
    let (budget, end) = crate::budget::ReadBudget::new(None, 0);
    drop(end);
    let stopped = budget.run(|| Ok(paragraphs(&parse(&html, Scripting::On))));
    assert!(stopped.is_err());
    let mut seen = 0;
    let (budget, end) = crate::budget::ReadBudget::new(None, 0);
    let _ = budget.run(|| {
        drop(end);
        seen = paragraphs(&parse(&html, Scripting::On));
        Ok(())
    });
    assert!(seen < 10, "{seen} elements built after the call ended");
}
