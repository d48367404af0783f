//! Article extraction (an extension; `extraction = "article"`): the page's main
//! content chosen by scoring, then handed to the same Markdown converter as the
//! SRD algorithm, so links, tables, code and every response rule stay the same.
//!
//! The SRD algorithm (FR-WF-13) keeps everything outside the boilerplate it names,
//! which on real news pages is about twice the article's text. Article mode starts
//! from the same parse and the same boilerplate removal (hidden elements stay
//! removed: hidden text is a prompt-injection channel), but for a `<header>`
//! that holds a post's prose (`sections`), then:
//!
//! 1. `measure`: one walk of the body records, per element, its visible text,
//!    link text, commas and the counts the pruning rules read.
//! 2. `score`: every paragraph-like element with 25 or more characters of its own
//!    text scores `1 + commas + min(chars / 100, 3)`, given to its parent in full,
//!    its grandparent in half and up to three more ancestors in smaller shares
//!    (Readability's scheme); an ancestor starts from its tag's and class's weight,
//!    and ends scaled by `1 - link density`. The best container wins, moved up to
//!    an ancestor that holds as much, and merged with siblings that score alike.
//! 3. `prune`: inside the chosen content, containers that look like lists of
//!    links, image galleries, forms or widgets are dropped.
//!
//! Class and id names are read by `names` (fragment lists and whole words).
//!
//! Auto mode reads articles with [`Reach::Prose`]: when the chosen content has
//! an ancestor holding several times its prose, the ancestor is the article (a
//! guide or landing page built of sections, where scoring picks one).
//!
//! Passes that find too little text retry with the looser settings, as
//! Readability does, and the longest result wins; when nothing scores at all the
//! caller falls back to the SRD algorithm.

use ego_tree::NodeId;
use url::Url;

use super::dom::{Document, Scripting, Source};
use super::element::{self, Tag};
use super::{markdown, normalize_whitespace, root};
use crate::vocabulary::ExtractedDocument;

pub(crate) mod measure;
pub(crate) mod names;
mod prune;
pub(crate) mod score;
pub(crate) mod sections;

use measure::measure;
use names::unseen_elements;
use prune::prune;
use score::score;

/// A pass whose Markdown has fewer characters than this is retried with looser
/// settings (Readability's `charThreshold`).
const MIN_ARTICLE_CHARS: usize = 500;

/// An article reading: the document, and how much of it article scoring chose.
#[derive(Debug)]
pub(crate) struct Article {
    pub(crate) document: ExtractedDocument,
    /// Words of the scored content alone: what tells one post of a thread from
    /// a story. Fewer than the document's when [`Reach::Prose`] widened it.
    pub(crate) scored_words: usize,
}

/// How far an article reading reaches past the container article scoring chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The scored container and its siblings that score alike: article mode.
    Scored,
    /// Up to an ancestor that holds several times the scored content's prose
    /// (`score::prose_ancestor`): auto mode, whose articles include pages built
    /// of sections (guides, price lists, landing pages) where scoring picks one.
    Prose,
}

/// The main content of `html` as Markdown, or `None` when no block scores as
/// content (the caller falls back to the SRD algorithm).
///
/// `<noscript>` content is read only when the page has no content outside it
/// (a crawler view such as Discourse's): parsed with scripting off, markup in a
/// `<noscript>` can escape it (an inner `<p>` closes the `<p>` around it), and
/// what a browser with scripts on never shows must not become text by default.
pub(crate) fn extract(source: &Source<'_>, final_url: &Url, reach: Reach) -> Option<Article> {
    extract_parsed(source, final_url, Scripting::On, reach).or_else(|| {
        Scripting::matters_for(source.html())
            .then(|| extract_parsed(source, final_url, Scripting::Off, reach))
            .flatten()
    })
}

fn extract_parsed(
    source: &Source<'_>,
    final_url: &Url,
    scripting: Scripting,
    reach: Reach,
) -> Option<Article> {
    // (substance, reading) of each pass run. Passes are judged on what scoring
    // chose, whatever the reach.
    let mut attempts: Vec<(usize, Reading)> = Vec::new();
    for pass in Strictness::ALL {
        // Each pass removes what it reads as furniture, so each reads a tree of
        // its own (on WCXB's dev split one page in three runs a second pass).
        let doc = source.document(scripting);
        let Some(reading) = extract_pass(doc, final_url, pass, scripting, reach) else {
            continue;
        };
        if attempts.is_empty() && reading.scored.markdown.chars().count() >= MIN_ARTICLE_CHARS {
            return Some(reading.into_article());
        }
        attempts.push((substance(&reading.scored.markdown), reading));
    }
    // The strict pass found little: a looser pass wins only when it finds clearly
    // more prose, not just the furniture the strict pass removed.
    let longest = attempts.iter().map(|(chars, _)| *chars).max()?;
    attempts
        .into_iter()
        .find(|(chars, _)| *chars * 5 >= longest * 4)
        .map(|(_, reading)| reading.into_article())
}

/// One pass's reading: what scoring chose, and the Markdown of the ancestor
/// [`Reach::Prose`] widened it to.
struct Reading {
    scored: ExtractedDocument,
    widened: Option<String>,
}

impl Reading {
    fn into_article(self) -> Article {
        let scored_words = self.scored.markdown.split_whitespace().count();
        let mut document = self.scored;
        if let Some(markdown) = self.widened {
            document.markdown = markdown;
        }
        Article {
            document,
            scored_words,
        }
    }
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

/// How strict one attempt of article scoring is; later attempts are looser.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strictness {
    /// Remove elements whose class or id looks like page furniture before scoring.
    pub(crate) strip_unlikely: bool,
    /// Let class and id names weigh on scores and pruning.
    pub(crate) weigh_classes: bool,
    /// Drop link lists, galleries and widgets inside the chosen content.
    pub(crate) prune: bool,
}

impl Strictness {
    const ALL: [Strictness; 3] = [
        Strictness {
            strip_unlikely: true,
            weigh_classes: true,
            prune: true,
        },
        Strictness {
            strip_unlikely: false,
            weigh_classes: true,
            prune: true,
        },
        Strictness {
            strip_unlikely: false,
            weigh_classes: false,
            prune: false,
        },
    ];
}

fn extract_pass(
    mut doc: Document,
    final_url: &Url,
    pass: Strictness,
    scripting: Scripting,
    reach: Reach,
) -> Option<Reading> {
    let survey = root::survey(&doc);
    let body = survey.candidates[5]?;
    if scripting == Scripting::Off {
        reveal_noscript(&mut doc, body);
    }
    let title = super::title(&doc, &survey);
    let language = survey.language.clone();
    let base = root::base_url(&doc, &survey, final_url);
    let sections = sections::prose_headers(&doc, body);
    doc.restore_all(&sections);
    let unseen = unseen_elements(&doc, body, pass);
    doc.remove_all(&unseen);
    let measured = measure(&doc, body);
    let chosen = score(&doc, &measured, pass)?;
    let mut drop = chosen.dropped_siblings.clone();
    if pass.prune {
        drop.extend(prune(&doc, &measured, &chosen.included, pass));
    }
    drop.extend(title_duplicate(&doc, chosen.root, title.as_deref()));
    doc.remove_all(&drop);
    let convert = |doc: &Document, id| {
        doc.tree
            .get(id)
            .map(|root| normalize_whitespace(&markdown::convert(root, &base)))
            .filter(|markdown| !markdown.is_empty())
    };
    let markdown = convert(&doc, chosen.root)?;
    let widened = match reach {
        Reach::Scored => None,
        Reach::Prose => score::prose_ancestor(&measured, &chosen).and_then(|ancestor| {
            // The siblings scoring left out are inside the ancestor: back in.
            doc.restore_all(&chosen.dropped_siblings);
            if pass.prune {
                let pruned = prune(&doc, &measured, &[ancestor], pass);
                doc.remove_all(&pruned);
            }
            doc.remove_all(&title_duplicate(
                &doc,
                measured.nodes[ancestor].id,
                title.as_deref(),
            ));
            convert(&doc, measured.nodes[ancestor].id)
        }),
    };
    Some(Reading {
        scored: ExtractedDocument {
            markdown,
            title,
            language,
            page_type: None,
            page_starts: Vec::new(),
        },
        widened,
    })
}

/// `<noscript>` content is what a reader without JavaScript sees, and some sites
/// put their whole crawler view there (Discourse). The SRD removes it by name;
/// article mode keeps it unless its attributes hide it, and scoring decides.
pub(crate) fn reveal_noscript(doc: &mut Document, body: NodeId) {
    let noscripts = doc.elements_under(body, |node, e| {
        // Only content parsed as markup: past the parser's element budget a
        // `<noscript>` is kept as raw text, which must never read as prose.
        e.name.local == html5ever::local_name!("noscript")
            && !element::is_hidden_or_boilerplate_named(e)
            && node
                .children()
                .any(|child| child.value().element().is_some())
    });
    doc.restore_all(&noscripts);
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
            .is_some_and(|e| e.is_rendered() && matches!(e.tag, Tag::Heading(1 | 2)))
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
    use super::names::{class_weight, is_label, names_furniture, style_hides};
    use super::*;
    use crate::extract::dom::Keep;
    use crate::extract::element::Element;
    use crate::extract::extract_html;
    use crate::vocabulary::ExtractionMode;

    fn url() -> Url {
        Url::parse("https://example.com/news/story").unwrap()
    }

    fn article(html: &str) -> String {
        extract(&Source::new(html, Keep::Nothing), &url(), Reach::Scored)
            .expect("article content")
            .document
            .markdown
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
        let srd = extract_html(STORY, &url(), ExtractionMode::Srd).unwrap();
        assert!(!srd.article_fell_back);
        let tiny = "<html><body><p>Hi there</p></body></html>";
        assert!(extract(&Source::new(tiny, Keep::Nothing), &url(), Reach::Scored).is_none());
        let fell_back = extract_html(tiny, &url(), ExtractionMode::Article).unwrap();
        assert!(fell_back.article_fell_back);
        assert_eq!(
            fell_back.document,
            extract_html(tiny, &url(), ExtractionMode::Srd)
                .map(|e| e.document)
                .unwrap()
        );
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
        let srd = extract_html(&html, &url(), ExtractionMode::Srd)
            .map(|e| e.document)
            .unwrap_err();
        assert_eq!(srd.details_json()["error"], "no_extractable_content");
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
            // Overflow utilities clip or scroll a box; they hide nothing.
            ("table-wrap overflow-hidden", false),
        ] {
            assert_eq!(read_div(class, names_furniture), furniture, "{class}");
        }
    }

    /// What `read` says of a `<div>` of class `class`.
    fn read_div<T>(class: &str, read: impl Fn(&Element) -> T) -> T {
        let doc = super::super::dom::parse(&format!("<div class='{class}'>x</div>"), Scripting::On);
        let div = doc
            .descendants()
            .filter_map(|n| n.value().element())
            .find(|e| e.tag == Tag::Block)
            .unwrap();
        read(div)
    }

    #[test]
    fn overflow_utilities_weigh_nothing_where_readability_names_weigh() {
        for (class, weight) in [
            ("overflow-x-scroll", 0),
            ("vds-box vds-overflow_hidden", 0),
            ("u-overflow-auto hidden", -25),
            ("infinite-scroll", -25),
            ("prose prose-headings:scroll-mt-20 scroll-mt-4", 0),
            ("post-content overflow-hidden", 25),
        ] {
            assert_eq!(read_div(class, class_weight), weight, "{class}");
        }
    }

    #[test]
    fn a_table_in_a_scrolling_wrapper_stays_in_the_article() {
        let paragraph = "<p>Engineers said the dikes held where they had been rebuilt, and failed where the work had been postponed, flooding the old town.</p>";
        let html = format!(
            "<body><article>{paragraph}{paragraph}\
             <div class=\"isolate overflow-x-scroll\"><table><tr><th>Week</th><th>Distance</th></tr>\
             <tr><td>One</td><td>5 km</td></tr><tr><td>Two</td><td>8 km</td></tr></table></div>\
             {paragraph}</article></body>"
        );
        assert_has(&article(&html), &["| Week | Distance |", "| Two | 8 km |"]);
    }
}
