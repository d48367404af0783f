//! Extraction and charset tests: T-WF-EXT-01..09, IT-WF-HTTP-05/06 (at the decoding
//! seam: bytes + header charset in, Markdown out), golden pages (T-WF-INFRA-06),
//! hostile-input bounds and a property test over arbitrary bytes.
//!
//! Goldens: `tests/golden/pages/<name>.html` (first line `<!-- url: ... -->` gives
//! the final URL) is decoded, extracted and compared byte for byte with
//! `tests/golden/<name>.md`. Regenerate with
//! `UPDATE_GOLDENS=1 cargo test --test it extract`, then review the diff like code.

use std::path::Path;

use proptest::prelude::*;
use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::{Charset, decode};
use webfetch::internals::extract::{extract_html, extract_plain, normalize_whitespace};
use webfetch::internals::vocabulary::ExtractedDocument;
use webfetch::{ErrorCode, FetchError};

fn url(s: &str) -> Url {
    Url::parse(s).expect("test URL")
}

/// The SRD extraction of `html` from `page`.
fn srd(html: &str, page: &Url) -> Result<ExtractedDocument, FetchError> {
    extract_html(html, page, ExtractionMode::Srd).map(|extraction| extraction.document)
}

fn md(html: &str) -> String {
    srd(html, &url("https://example.com/dir/page.html"))
        .expect("extracts")
        .markdown
}

// ---------------------------------------------------------------- T-WF-EXT-01

#[test]
fn t_wf_ext_01_boilerplate_elements_removed() {
    let html = r#"<body>
        <script>var s = "SCRIPT";</script><style>.x{content:"STYLE"}</style>
        <noscript>NOSCRIPT</noscript><nav>NAV</nav><footer>FOOTER</footer>
        <header>HEADER</header><aside>ASIDE</aside>
        <div hidden>HIDDEN</div><div aria-hidden="TRUE">ARIA</div>
        <div aria-hidden="false">ariafalse</div>
        <div class="x Menu y">MENUCLASS</div><div id="Sidebar">SIDEBARID</div>
        <div class="ad">AD</div><div class="advertisement">ADV</div>
        <div class="social">SOCIAL</div><div class="related">RELATED</div>
        <div id="comments">COMMENTS</div><div class="footer">FOOTERCLASS</div>
        <div class="header">HEADERCLASS</div><div class="nav">NAVCLASS</div>
        <p>kept</p>
        <div class="navigate">navigate</div><div class="site-nav">sitenav</div>
        <div class="ads">ads</div><div id="main-nav">mainnav</div>
        <svg><style>svgstyle</style><title>icon</title></svg>
    </body>"#;
    let out = md(html);
    for gone in [
        "SCRIPT",
        "STYLE",
        "NOSCRIPT",
        "NAV",
        "FOOTER",
        "HEADER",
        "ASIDE",
        "HIDDEN",
        "ARIA",
        "MENUCLASS",
        "SIDEBARID",
        "AD",
        "ADV",
        "SOCIAL",
        "RELATED",
        "COMMENTS",
        "FOOTERCLASS",
        "HEADERCLASS",
        "NAVCLASS",
        "svgstyle",
        "icon",
    ] {
        assert!(
            !out.split_whitespace().any(|w| w == gone),
            "{gone} leaked: {out}"
        );
    }
    assert_eq!(
        out,
        "ariafalse\n\nkept\n\nnavigate\n\nsitenav\n\nads\n\nmainnav\n"
    );
}

// ---------------------------------------------------------------- T-WF-EXT-02

#[test]
fn t_wf_ext_02_links_absolute_with_fragments() {
    let out = md(
        r##"<p><a href="other.html#sec-2">rel</a> <a href="/root?q=1#top">abs</a>
        <a href="#here">frag</a> <a href="https://x.example/y">ext</a>
        <a href="../up.html">up</a> <a href="javascript:alert(1)">js</a>
        <img src="i/p.png" alt="pic"></p>"##,
    );
    assert_eq!(
        out,
        "[rel](https://example.com/dir/other.html#sec-2) \
         [abs](https://example.com/root?q=1#top) \
         [frag](https://example.com/dir/page.html#here) [ext](https://x.example/y) \
         [up](https://example.com/up.html) js ![pic](https://example.com/dir/i/p.png)\n"
    );
}

// ---------------------------------------------------------------- T-WF-EXT-03

#[test]
fn t_wf_ext_03_whitespace_normalized() {
    assert_eq!(
        normalize_whitespace("a  \r\nb\r\n\r\n\r\n\r\n\r\nc\t\r\n\r\n"),
        "a\nb\n\n\nc\n"
    );
    assert_eq!(
        extract_plain("line one  \r\n\r\n\r\n\r\n\r\nline two").markdown,
        "line one\n\n\nline two\n"
    );
    // Code fences keep their whitespace; CRLF still becomes LF.
    assert_eq!(
        normalize_whitespace("```\r\nx  \r\n\r\n\r\n\r\ny\r\n```\r\n"),
        "```\nx  \n\n\n\ny\n```\n"
    );
    // Through HTML: a code block's trailing spaces and blank lines survive.
    let out = md("<p>t</p><pre><code>a  \n\n\n\n\nb\t</code></pre>");
    assert_eq!(out, "t\n\n```\na  \n\n\n\n\nb\t\n```\n");
}

// ---------------------------------------------------------------- T-WF-EXT-04

#[test]
fn t_wf_ext_04_title_from_title_or_h1() {
    let page = url("https://e.example/");
    let doc = srd("<title>From title</title><h1>From h1</h1>", &page).unwrap();
    assert_eq!(doc.title.as_deref(), Some("From title"));
    let doc = srd("<title>  </title><p>x</p><h1> From <b>h1</b> </h1>", &page).unwrap();
    assert_eq!(doc.title.as_deref(), Some("From h1"));
    let doc = srd("<p>no title</p>", &page).unwrap();
    assert_eq!(doc.title, None);
    // A <title> that strays into <body> is the title, not body text.
    let doc = srd("<body><title>Stray</title><p>x</p>", &page).unwrap();
    assert_eq!(
        (doc.title.as_deref(), doc.markdown.as_str()),
        (Some("Stray"), "x\n")
    );
    // An SVG <title> is not the page title.
    let doc = srd("<body><svg><title>icon</title></svg><p>x</p>", &page).unwrap();
    assert_eq!(doc.title, None);
    // Language: <html lang> as-is; absent when empty.
    let doc = srd("<html lang='pt-BR'><p>x</p>", &page).unwrap();
    assert_eq!(doc.language.as_deref(), Some("pt-BR"));
    let doc = srd("<html lang=''><p>x</p>", &page).unwrap();
    assert_eq!(doc.language, None);
}

// ---------------------------------------------------------------- T-WF-EXT-05

#[test]
fn t_wf_ext_05_base_href_used_when_valid() {
    let page = url("https://site.example/a/b.html");
    let get = |html: &str| srd(html, &page).unwrap().markdown;
    assert_eq!(
        get(r#"<base href="https://cdn.example/x/"><a href="y#f">l</a>"#),
        "[l](https://cdn.example/x/y#f)\n"
    );
    // Relative base resolves against the final URL.
    assert_eq!(
        get(r#"<base href="/root/"><a href="y">l</a>"#),
        "[l](https://site.example/root/y)\n"
    );
    // Not http(s): ignored.
    assert_eq!(
        get(r#"<base href="ftp://files.example/"><a href="y">l</a>"#),
        "[l](https://site.example/a/y)\n"
    );
    assert_eq!(
        get(r#"<base href="http://[bad"><a href="y">l</a>"#),
        "[l](https://site.example/a/y)\n"
    );
    // The first <base> with an href wins; images use it too.
    assert_eq!(
        get(
            r#"<base target=_top><base href="https://one.example/"><base href="https://two.example/"><img src="i.png" alt="i">"#
        ),
        "![i](https://one.example/i.png)\n"
    );
}

// ---------------------------------------------------------------- T-WF-EXT-06

#[test]
fn t_wf_ext_06_default_tag_handling() {
    // Block containers separated by a blank line.
    assert_eq!(
        md("<p>p</p><div>div</div><section>sec</section><blockquote>q</blockquote><p>e</p>"),
        "p\n\ndiv\n\nsec\n\n> q\n\ne\n"
    );
    assert_eq!(
        md("<main><article>a</article><p>p</p><article>b</article></main>"),
        "a\n\np\n\nb\n"
    );
    // <br> is one newline.
    assert_eq!(md("<p>a<br>b<br/>c</p>"), "a\nb\nc\n");
    // Inline elements: whitespace between them is one space, none is invented.
    assert_eq!(
        md(
            "<p><span>a</span>   <small>b</small>\n\n<strong>c</strong> <em>d</em> <code>e</code> <a href='/f'>f</a></p>"
        ),
        "a b **c** *d* `e` [f](https://example.com/f)\n"
    );
    assert_eq!(md("<p><span>a</span><span>b</span></p>"), "ab\n");
    // Headings, emphasis.
    assert_eq!(
        md(
            "<h1>One</h1><h2>Two</h2><h3>3</h3><h4>4</h4><h5>5</h5><h6>6</h6><p><i>i</i><b>b</b></p>"
        ),
        "# One\n\n## Two\n\n### 3\n\n#### 4\n\n##### 5\n\n###### 6\n\n*i***b**\n"
    );
}

// ---------------------------------------------------------------- T-WF-EXT-07

#[test]
fn t_wf_ext_07_charset_sniffed_from_meta_in_first_1024_bytes() {
    let page =
        b"<html><head><meta charset=\"ISO-8859-1\"></head><body><p>Caf\xE9 cr\xE8me \x80</p>";
    let decoded = decode(page, None, true);
    assert_eq!(decoded.charset, Charset::Windows1252);
    assert!(!decoded.charset_fallback);
    assert!(decoded.text.contains("Café crème €"));

    let http_equiv = b"<meta http-equiv=\"content-type\" content=\"text/html; charset=windows-1252\"><p>\x93q\x94</p>";
    let decoded = decode(http_equiv, None, true);
    assert_eq!(decoded.charset, Charset::Windows1252);
    assert!(decoded.text.contains("\u{201C}q\u{201D}"));

    // Past the first 1024 bytes the meta is not seen: UTF-8 with the fallback note.
    let mut late = b"<!-- ".to_vec();
    late.extend(std::iter::repeat_n(b'x', 1100));
    late.extend_from_slice(b" --><meta charset=\"latin1\"><p>Caf\xE9</p>");
    let decoded = decode(&late, None, true);
    assert_eq!(decoded.charset, Charset::Utf8);
    assert!(decoded.charset_fallback);
    assert!(decoded.text.contains("Caf\u{FFFD}"));

    // No declaration at all: fallback note (CHARSET-04).
    assert!(decode(b"<p>plain ascii</p>", None, true).charset_fallback);
}

// ---------------------------------------------------------------- T-WF-EXT-08

#[test]
fn t_wf_ext_08_all_roots_empty_is_extraction_failed() {
    let page = url("https://e.example/");
    for html in [
        "",
        "<html><head><title>Only a title</title></head><body></body></html>",
        "<body><script>var x = 1;</script><style>p{}</style><img src=a.png><a href=/x></a></body>",
        "<body><nav>menu</nav><footer>f</footer><div class='ad'>buy</div><p>   &#9;  </p></body>",
        "<body><main><img src=x.png alt=''></main><div hidden>h</div></body>",
    ] {
        let err = srd(html, &page).expect_err(html);
        assert_eq!(err.code(), ErrorCode::ExtractionFailed, "{html}");
        assert_eq!(
            err.details_json()["error"],
            "no_extractable_content",
            "{html}"
        );
    }
}

#[test]
fn ext_root_01_order_and_fallback() {
    // <main> first, even after an <article>.
    assert_eq!(md("<article>A</article><main>M</main>"), "M\n");
    // Empty <main> (boilerplate only) falls back to <article>.
    assert_eq!(
        md("<main><nav>n</nav></main><article>A</article><p>B</p>"),
        "A\n"
    );
    // role=main, then id=content (case-insensitive), then class token content.
    assert_eq!(
        md("<div class='content'>C</div><div id='CONTENT'>I</div><div role='main'>R</div>"),
        "R\n"
    );
    assert_eq!(
        md("<div class='content'>C</div><div id='Content'>I</div>"),
        "I\n"
    );
    assert_eq!(md("<div class='x CONTENT'>C</div><p>other</p>"), "C\n");
    assert_eq!(
        md("<div class='contents'>C</div><p>other</p>"),
        "C\n\nother\n"
    );
    // An image with alt text is content (it renders); one without is not.
    assert_eq!(
        md("<main><img src=a.png alt='Chart'></main><p>body</p>"),
        "![Chart](https://example.com/dir/a.png)\n"
    );
    assert_eq!(md("<main><img src=a.png></main><p>body</p>"), "body\n");
}

/// FR-WF-13's step order: boilerplate is removed (steps 1-3) before the root is
/// chosen (step 4), so a candidate inside removed boilerplate, or removed itself,
/// is not "the first" of its kind.
#[test]
fn ext_root_01_candidates_inside_removed_boilerplate_do_not_count() {
    assert_eq!(
        md("<aside><article>Teaser</article></aside><article>Story</article>"),
        "Story\n"
    );
    assert_eq!(md("<nav><main>x</main></nav><main>Real</main>"), "Real\n");
    // With text outside the candidates, the root (not <body>) is what is shown.
    assert_eq!(
        md("<aside><article>Teaser</article></aside><p>outside</p><article>Story</article>"),
        "Story\n"
    );
    assert_eq!(
        md("<nav><main>x</main></nav><p>outside</p><main>Real</main>"),
        "Real\n"
    );
    assert_eq!(
        md("<main hidden>Secret</main><p>between</p><main>Shown</main>"),
        "Shown\n"
    );
    assert_eq!(
        md(
            "<div class='sidebar'><div role='main'>S</div></div><div id='content'>C</div><div role='main'>R</div>"
        ),
        "R\n"
    );
    // The title's <h1> is still found inside a removed <header>.
    let doc = srd(
        "<header><h1>Site</h1></header><article>Story</article>",
        &url("https://e.example/"),
    )
    .unwrap();
    assert_eq!(
        (doc.title.as_deref(), doc.markdown.as_str()),
        (Some("Site"), "Story\n")
    );
}

// ---------------------------------------------------------------- T-WF-EXT-09

#[test]
fn t_wf_ext_09_title_whitespace_normalized() {
    let page = url("https://e.example/");
    let doc = srd(
        "<title>\n\t A \u{a0} title\r\n  with\tgaps  </title><p>x</p>",
        &page,
    )
    .unwrap();
    assert_eq!(doc.title.as_deref(), Some("A title with gaps"));
    let doc = srd(
        "<title> \n </title><h1>\n Heading \n <em>one</em>\n</h1>",
        &page,
    )
    .unwrap();
    assert_eq!(doc.title.as_deref(), Some("Heading one"));
}

// ------------------------------------------------------- IT-WF-HTTP-05 / 06

#[test]
fn it_wf_http_05_iso_8859_1_decoded_to_utf8() {
    let body = b"<html><body><p>Gr\xFC\xDFe aus K\xF6ln \xE0 \xBD \x85</p></body></html>";
    let decoded = decode(body, Some("ISO-8859-1"), true);
    assert!(!decoded.charset_fallback);
    let doc = srd(&decoded.text, &url("https://e.example/")).unwrap();
    assert_eq!(doc.markdown, "Grüße aus Köln à ½ …\n");
}

#[test]
fn it_wf_http_06_header_charset_wins_over_meta() {
    let body = "<meta charset=\"windows-1252\"><p>naïve – café</p>".as_bytes();
    let decoded = decode(body, Some("utf-8"), true);
    assert_eq!(decoded.charset, Charset::Utf8);
    assert!(!decoded.charset_fallback);
    let doc = srd(&decoded.text, &url("https://e.example/")).unwrap();
    assert_eq!(doc.markdown, "naïve – café\n");
    // The other way round: a Latin-1 header over a UTF-8 meta.
    let decoded = decode(b"<meta charset=utf-8><p>caf\xE9</p>", Some("latin1"), true);
    assert_eq!(decoded.charset, Charset::Windows1252);
    assert!(decoded.text.contains("café"));
}

// ---------------------------------------------- Markdown rules (13a and EXT-*)

#[test]
fn ext_list_01_indent_by_ancestor_lists() {
    assert_eq!(
        md(
            "<ul><li>a<ul><li>b<ol><li>c</li><li>d</li></ol></li></ul></li><li>e</li></ul><p>after</p>"
        ),
        "- a\n  - b\n    1. c\n    2. d\n- e\n\nafter\n"
    );
    assert_eq!(
        md("<ol start='9'><li>x</li><li></li><li>z</li></ol>"),
        "9. x\n11. z\n"
    );
}

#[test]
fn ext_code_01_02_fences_and_language() {
    assert_eq!(
        md("<pre><code class='language-python'>  x = 1\n\n\ty = '```'\n</code></pre>"),
        "````python\n  x = 1\n\n\ty = '```'\n````\n"
    );
    assert_eq!(md("<pre>plain\n  pre</pre>"), "```\nplain\n  pre\n```\n");
    assert_eq!(
        md("<p>use <code>a  b`c</code> now</p>"),
        "use ``a b`c`` now\n"
    );
}

/// EXT-CODE-01 step 1: a hint that is too long, or holds characters outside
/// `[A-Za-z0-9_+#.-]`, gives a plain fence, so a fence line always fits a chunk.
#[test]
fn ext_code_01_implausible_language_hint_gives_a_plain_fence() {
    let long = "x".repeat(33);
    assert_eq!(
        md(&format!(
            "<pre><code class='language-{long}'>a</code></pre>"
        )),
        "```\na\n```\n"
    );
    assert_eq!(
        md("<pre><code class='language-py&lt;thon'>a</code></pre>"),
        "```\na\n```\n"
    );
    let at_cap = "x".repeat(32);
    assert_eq!(
        md(&format!(
            "<pre class='language-{at_cap}'><code>a</code></pre>"
        )),
        format!("```{at_cap}\na\n```\n")
    );
}

#[test]
fn ext_table_01_02_shape_and_escaping() {
    assert_eq!(
        md(
            "<table><tr><td>a|b</td><td rowspan=2 colspan=3>c<br>d</td></tr><tr><th>H</th></tr><tr><td>1</td><td>2</td><td>3</td></tr></table>"
        ),
        "| H | | |\n|---|---|---|\n| a\\|b | c<br>d | |\n| 1 | 2 | 3 |\n"
    );
}

#[test]
fn text_that_looks_like_markdown_keeps_its_meaning() {
    assert_eq!(
        md("<p># h</p><p>- l</p><p>1. o</p><p>&gt; q</p><p>a *b* [c](d) `e` &lt;img&gt;</p>"),
        "\\# h\n\n\\- l\n\n1\\. o\n\n\\> q\n\na \\*b\\* \\[c](d) \\`e\\` \\<img>\n"
    );
}

// -------------------------------------------------------------- hostile input

#[test]
fn deep_nesting_is_linear_and_stack_safe() {
    let depth = 100_000;
    let html = format!(
        "{}deep text{}",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    assert_eq!(md(&html), "deep text\n");
    let html = format!("{}x", "<ul><li>".repeat(depth));
    assert!(!md(&html).is_empty());
    let html = format!("{}x", "<b><i>".repeat(depth));
    assert!(md(&html).contains('x'));
    let html = format!("{}x", "<table><tr><td>".repeat(20_000));
    assert!(md(&html).contains('x'));
    // A legitimately deep page (200 levels, under MAX_OPEN) keeps its links and
    // emphasis: formatting elements are counted apart from depth.
    let html = format!("{}<a href='/l'>link</a> <b>bold</b>", "<div>".repeat(200));
    assert_eq!(md(&html), "[link](https://example.com/l) **bold**\n");
}

#[test]
fn many_attributes_and_formatting_storms_are_bounded() {
    let attrs: String = (0..50_000).map(|i| format!(" a{i}=v")).collect();
    assert_eq!(md(&format!("<p{attrs}>t</p>")), "t\n");
    let storm: String = (0..5_000).map(|i| format!("<p><b id={i}></p>")).collect();
    let html = format!("{storm}{}", "<p>x</p>".repeat(5_000));
    assert!(md(&html).contains('x'));
}

/// 120 distinct unclosed `<b>` are re-created for each of 300 paragraphs (36 000
/// elements from 4 KB): the element budget is spent long before `<main>`, and the
/// rest of the page must still be there.
#[test]
fn content_after_a_formatting_storm_is_kept() {
    let storm: String = (0..120).map(|i| format!("<b id={i}>")).collect();
    let paragraphs = "<p>para</p>".repeat(300);
    assert_eq!(
        md(&format!("<p>{storm}{paragraphs}<main>Article</main>")),
        "Article\n"
    );
    // Without a <main>, the body holds it all.
    let out = md(&format!("<p>{storm}{paragraphs}<h2>Article</h2><p>end</p>"));
    assert!(out.ends_with("## Article\n\nend\n"), "{out}");
    // Boilerplate after the storm is still removed; hidden text stays hidden.
    let out = md(&format!(
        "<p>{storm}{paragraphs}<nav>INJECTED</nav><div hidden>INJECTED</div><p>after</p>"
    ));
    assert!(
        !out.contains("INJECTED") && out.ends_with("after\n"),
        "{out}"
    );
}

/// A page nested past the depth cap, then `tail` and visible text: `INJECTED`
/// must not show, `after` must.
fn assert_hidden_past_the_caps(tail: &str) {
    let deep = "<div>".repeat(300);
    let out = md(&format!("{deep}{tail}<p>after</p>"));
    assert!(!out.contains("INJECTED"), "{tail}: {out}");
    assert!(out.contains("after"), "{tail}: {out}");
}

/// FR-WF-13 steps 1-3 apply past the parser's depth cap: a start tag dropped there
/// whose element would be removed takes its content with it.
#[test]
fn boilerplate_past_the_depth_cap_is_still_removed() {
    for tail in [
        "<div hidden>INJECTED</div>",
        "<div aria-hidden='true'>INJECTED</div>",
        "<section class='promo AD'>INJECTED</section>",
        "<div id='Sidebar'>INJECTED</div>",
        "<nav>INJECTED</nav>",
        "<aside><div>INJECTED</div>INJECTED</aside>",
        "<footer>INJECTED<footer>INJECTED</footer>INJECTED</footer>",
        "<template>INJECTED</template>",
        "<b hidden>INJECTED</b>",
        "<div hidden><script>'</div>'</script><style></div></style>INJECTED</div>",
    ] {
        assert_hidden_past_the_caps(tail);
    }
}

/// FR-WF-13 steps 2-3 apply past the attribute cap: the attributes that decide
/// removal are kept however many come before them.
#[test]
fn boilerplate_attributes_past_the_attribute_cap_still_count() {
    let junk: String = (0..200).map(|i| format!(" a{i}")).collect();
    for attrs in [" hidden", " aria-hidden=true", " class=ad", " id=comments"] {
        let out = md(&format!("<div{junk}{attrs}>INJECTED</div><p>after</p>"));
        assert!(!out.contains("INJECTED"), "{attrs}: {out}");
        assert!(out.contains("after"), "{attrs}: {out}");
        // And both caps at once.
        assert_hidden_past_the_caps(&format!("<div{junk}{attrs}>INJECTED</div>"));
    }
}

// ------------------------------------------------------------------- goldens

fn golden_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"))
}

/// The golden text for one page: a small header (final URL, charset, title,
/// language), then the Markdown or the error.
fn render_golden(bytes: &[u8]) -> String {
    let first_line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let first_line = String::from_utf8_lossy(first_line);
    let page_url = first_line
        .trim()
        .strip_prefix("<!-- url: ")
        .and_then(|s| s.strip_suffix(" -->"))
        .expect("golden page starts with <!-- url: ... -->");
    let decoded = decode(bytes, None, true);
    let mut out = format!(
        "url: {page_url}\ncharset: {:?}{}\n",
        decoded.charset,
        if decoded.charset_fallback {
            " (charset_fallback)"
        } else {
            ""
        }
    );
    match srd(&decoded.text, &url(page_url)) {
        Ok(doc) => {
            out.push_str(&format!(
                "title: {:?}\nlanguage: {:?}\n---\n",
                doc.title, doc.language
            ));
            out.push_str(&doc.markdown);
        }
        Err(err) => out.push_str(&format!(
            "---\nerror: {} / {}\n",
            err.code(),
            err.details_json()["error"]
        )),
    }
    out
}

#[test]
fn t_wf_infra_06_golden_pages() {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some();
    let mut pages: Vec<_> = std::fs::read_dir(golden_dir().join("pages"))
        .expect("golden pages")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 8, "at least eight golden pages");
    let mut failures = Vec::new();
    for page in pages {
        let name = page.file_stem().and_then(|s| s.to_str()).expect("name");
        let actual = render_golden(&std::fs::read(&page).expect("read page"));
        let golden = golden_dir().join(format!("{name}.md"));
        if update {
            std::fs::write(&golden, &actual).expect("write golden");
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "--- {name}: expected\n{expected}\n--- actual\n{actual}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatch (UPDATE_GOLDENS=1 to regenerate):\n{}",
        failures.join("\n")
    );
}

// ------------------------------------------------------------------ property

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096), latin in any::<bool>()) {
        let decoded = decode(&bytes, latin.then_some("iso-8859-1"), true);
        if let Ok(doc) = srd(&decoded.text, &url("https://e.example/")) {
            prop_assert!(!doc.markdown.is_empty());
            prop_assert!(doc.markdown.ends_with('\n'));
            prop_assert_eq!(normalize_whitespace(&doc.markdown), doc.markdown.clone());
        }
    }

    #[test]
    fn arbitrary_markup_never_panics(parts in proptest::collection::vec(prop_oneof![
        Just("<div>"), Just("</div>"), Just("<p>"), Just("<ul>"), Just("<ol start=x>"), Just("<li>"),
        Just("</li>"), Just("<table>"), Just("<tr>"), Just("<td>"), Just("<th>"), Just("</table>"),
        Just("<pre>"), Just("</pre>"), Just("<code class=language-x>"), Just("</code>"),
        Just("<a href='/x'>"), Just("</a>"), Just("<b>"), Just("</b>"), Just("<em>"), Just("<br>"),
        Just("<h2>"), Just("</h2>"), Just("<blockquote>"), Just("<img alt=a src=b>"), Just("<nav>"),
        Just("text"), Just(" "), Just("\n"), Just("*"), Just("#"), Just("`"), Just("|"), Just("```"),
        Just("<main>"), Just("<svg>"), Just("<template>"), Just("<select>"), Just("-"), Just("1."),
    ], 0..200)) {
        let html: String = parts.concat();
        if let Ok(doc) = srd(&html, &url("https://e.example/")) {
            prop_assert!(doc.markdown.ends_with('\n'));
            prop_assert_eq!(normalize_whitespace(&doc.markdown), doc.markdown.clone());
        }
    }

    /// Article mode on the same kind of tag soup, with hidden and noscript
    /// content mixed in: never a panic, the same Markdown invariants, and hidden
    /// text never in the output. Inline `display: none` is article mode's own
    /// rule: when article mode falls back, the SRD algorithm (which reads no
    /// styles) answers. (A hidden `<noscript>` is left out: parsed as markup, as a
    /// browser without scripts reads it, its content can escape it (an inner `<p>`
    /// closes an open `<p>`; text in a `<noscript>` in the head moves to the body).
    /// Article mode parses it so only for a page with no content outside
    /// `<noscript>`; `src/extract/article` says so.)
    #[test]
    fn article_mode_on_arbitrary_markup_never_shows_hidden_text(parts in proptest::collection::vec(prop_oneof![
        Just("<div>"), Just("</div>"), Just("<p>"), Just("</p>"), Just("<ul>"), Just("<li>"), Just("</ul>"),
        Just("<table>"), Just("<tr>"), Just("<td>"), Just("</table>"), Just("<a href='/x'>"), Just("</a>"),
        Just("<article>"), Just("<div class='byline'>"), Just("<div class='story-body'>"), Just("<noscript>"),
        Just("</noscript>"), Just("<figure>"), Just("<figcaption>"), Just("<img alt=a src=b>"),
        Just("<div hidden>SECRET</div>"), Just("<span style='display:none'>STYLED</span>"),
 Just("<p aria-hidden=true>SECRET</p>"),
        Just("Some words, with commas, in a sentence that goes on."), Just(" "), Just("\n"), Just("<h2>"),
        Just("</h2>"), Just("<pre>"), Just("</pre>"), Just("<main>"), Just("<nav>"), Just("</nav>"),
    ], 0..200)) {
        let html: String = parts.concat();
        let extracted = extract_html(&html, &url("https://e.example/"), ExtractionMode::Article);
        if let Ok(extraction) = extracted {
            let markdown = &extraction.document.markdown;
            prop_assert!(markdown.ends_with('\n'));
            prop_assert_eq!(normalize_whitespace(markdown), markdown.clone());
            prop_assert!(!markdown.contains("SECRET"), "{}", markdown);
            prop_assert!(extraction.article_fell_back || !markdown.contains("STYLED"), "{}", markdown);
        }
    }
}
