//! Parses one HTML file with each peer parser once, each in its own function so
//! that `benches/parser_ratio.sh` can count its instructions under callgrind
//! (`--toggle-collect`): the dense-over-real ratio of parsing alone, for the
//! parsers an extraction pipeline could be built on.

use std::hint::black_box;

/// Every `<`, found with `memchr`: a pass whose cost is all per byte.
#[inline(never)]
fn scan(html: &str) -> usize {
    memchr::memchr_iter(b'<', html.as_bytes()).count()
}

/// html5gum's tokenizer with its default emitter: owned tokens, no tree.
#[inline(never)]
fn html5gum_tokens(html: &str) -> usize {
    html5gum::Tokenizer::new(html)
        .filter_map(Result::ok)
        .count()
}

/// tl: a fast parser that is not HTML5-conformant, with a flat node table.
#[inline(never)]
fn tl_dom(html: &str) -> usize {
    tl::parse(html, tl::ParserOptions::default()).map_or(0, |dom| dom.nodes().len())
}

/// lol_html: Cloudflare's streaming rewriter (no tree), visiting every element.
#[inline(never)]
fn lol_html_stream(html: &str) -> usize {
    let mut written = 0;
    let mut rewriter = lol_html::HtmlRewriter::new(
        lol_html::Settings {
            element_content_handlers: vec![lol_html::element!("*", |_| Ok(()))],
            ..lol_html::Settings::new()
        },
        |chunk: &[u8]| written += chunk.len(),
    );
    rewriter.write(html.as_bytes()).expect("rewrite");
    rewriter.end().expect("rewrite");
    written
}

/// html5ever's tokenizer and tree builder into its reference DOM (RcDom).
#[inline(never)]
fn html5ever_rcdom(html: &str) -> usize {
    use html5ever::tendril::TendrilSink;
    let dom = html5ever::parse_document(markup5ever_rcdom::RcDom::default(), Default::default())
        .one(html);
    dom.document.children.take().len()
}

/// scraper: html5ever into an ego-tree arena (what webfetch started from).
#[inline(never)]
fn scraper_html(html: &str) -> usize {
    scraper::Html::parse_document(html).tree.nodes().count()
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: parser-ratio FILE");
    let html = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let html = black_box(html.as_str());
    let counts = [
        scan(html),
        html5gum_tokens(html),
        tl_dom(html),
        lol_html_stream(html),
        html5ever_rcdom(html),
        scraper_html(html),
    ];
    eprintln!("{counts:?}");
}
