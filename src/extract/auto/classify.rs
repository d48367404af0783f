//! The page type, decided from the document itself: what it declares
//! (schema.org types in JSON-LD and microdata, `og:type`), its structure (code
//! blocks) and the shape of its URL. Rules name structures, never sites; each was
//! checked on WCXB's dev split (`cargo bench --bench wcxb`).
//!
//! Everything it reads comes from one scan of the raw HTML and the URL, so a page
//! read by article scoring is parsed once, as in article mode.

use url::Url;

use super::signals::{self, Signals};
#[cfg(any(test, feature = "internals"))]
use super::{super::dom, features};
use crate::vocabulary::PageType;

/// What the decision reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Clues {
    /// The types the page declares.
    pub(crate) signals: Signals,
    /// `<pre>` start tags.
    pub(crate) pre: usize,
    /// The URL's host and path, lowercased.
    pub(crate) host: String,
    pub(crate) path: String,
}

impl Clues {
    /// The clues of `html`, fetched from `final_url`.
    pub(crate) fn read(html: &str, final_url: &Url) -> Clues {
        let page = signals::Haystack::new(html);
        Clues {
            signals: signals::read(&page),
            pre: signals::count_pre(&page),
            host: final_url.host_str().unwrap_or("").to_ascii_lowercase(),
            path: final_url.path().to_ascii_lowercase(),
        }
    }
}

/// The page type of `html`, fetched from `final_url`.
pub(crate) fn classify(html: &str, final_url: &Url) -> PageType {
    decide(&Clues::read(html, final_url))
}

/// The decision, then the page's clues and structure as `name=value` text: for the
/// bench's error analysis (`WCXB_FEATURES`).
#[cfg(any(test, feature = "internals"))]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn describe(html: &str, final_url: &Url) -> String {
    let clues = Clues::read(html, final_url);
    let doc = dom::parse(html, dom::Scripting::On);
    let counts = features::read(&doc);
    format!(
        "{}\t{} og={} types={} host={} path={}",
        decide(&clues),
        counts.describe(),
        clues.signals.og_type.as_deref().unwrap_or("-"),
        clues.signals.types.join(","),
        clues.host,
        clues.path
    )
}

/// schema.org's question-and-answer page, lowercase as [`Signals`] holds types.
pub(crate) const QA_PAGE: &str = "qapage";
const FORUM_TYPES: &[&str] = &["discussionforumposting", QA_PAGE, "socialmediaposting"];
/// Questions and answers: a thread's, unless the page declares an FAQ (an
/// article's or a service page's questions, answered by the page itself).
const QA_TYPES: &[&str] = &["question", "answer"];
/// Declared `Comment`s that make a page a thread: forum software marks each post
/// up as one (on WCXB's dev split 50 of 113 forum pages do, from 3 to 34 times;
/// one article page, once), whatever lists it declares beside. Blogs mark
/// their readers' comments up so too (two scrapinghub pages, 6 and 10 times),
/// below a post they declare as one of [`STORY_TYPES`]: such a page is its post.
const MIN_DECLARED_COMMENTS: usize = 3;
/// The types of a blog's or a newspaper's own story.
const STORY_TYPES: &[&str] = &[
    "blogposting",
    "liveblogposting",
    "newsarticle",
    "reportagenewsarticle",
    "analysisnewsarticle",
    "opinionnewsarticle",
];
const PRODUCT_TYPES: &[&str] = &["product", "productgroup", "individualproduct", "vehicle"];
const LISTING_TYPES: &[&str] = &[
    "collectionpage",
    "itemlist",
    "searchresultspage",
    "offercatalog",
];
const ARTICLE_TYPES: &[&str] = &[
    "article",
    "newsarticle",
    "blogposting",
    "reportagenewsarticle",
    "analysisnewsarticle",
    "opinionnewsarticle",
    "scholarlyarticle",
    "recipe",
    "review",
];
const DOCS_TYPES: &[&str] = &["techarticle", "apireference", "softwaresourcecode"];

/// Path segments of forum threads (whole segments: `/topics/` is a subject
/// index, not a thread).
const FORUM_SEGMENTS: &[&str] = &[
    "thread",
    "threads",
    "topic",
    "t",
    "questions",
    "discussion",
    "discussions",
    "community",
    "r",
    "comments",
];

/// Whether a path segment names a forum thread: one of [`FORUM_SEGMENTS`], a
/// segment with `forum` in it, or a forum script (`viewtopic.php`).
fn forum_path(path: &str) -> bool {
    path.split('/').any(|seg| {
        FORUM_SEGMENTS.contains(&seg)
            || seg.contains("forum")
            || seg.starts_with("viewtopic")
            || seg.starts_with("showthread")
    })
}
/// Host prefixes of forums.
const FORUM_HOSTS: &[&str] = &["forum.", "forums.", "community.", "discuss.", "discourse."];
/// Path segments of documentation.
const DOCS_PATHS: &[&str] = &[
    "/docs/",
    "/doc/",
    "/documentation/",
    "/api/",
    "/reference/",
    "/manual/",
    "/guide/",
    "/guides/",
    "/wiki/",
    "/man/",
    "/learn/",
    "/tutorial",
];
/// Host prefixes of documentation.
const DOCS_HOSTS: &[&str] = &[
    "docs.",
    "doc.",
    "developer.",
    "developers.",
    "wiki.",
    "learn.",
];
/// Path segments of single products.
const PRODUCT_PATHS: &[&str] = &["/product/", "/products/", "/p/", "/dp/", "/item/", "/app/"];
/// Path segments of listings and collections.
const LISTING_PATHS: &[&str] = &[
    "/collections/",
    "/collection/",
    "/category/",
    "/categories/",
    "/c/",
    "/shop/",
    "/search",
    "/tag/",
    "/tags/",
    "/archive",
    "/catalog",
    "/browse",
];
/// Path segments of articles.
const ARTICLE_PATHS: &[&str] = &[
    "/blog/", "/news/", "/article", "/story/", "/posts/", "/post/",
];

fn any(haystack: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| haystack.contains(n))
}

fn starts(host: &str, prefixes: &[&str]) -> bool {
    let host = host.strip_prefix("www.").unwrap_or(host);
    prefixes.iter().any(|p| host.starts_with(p))
}

/// The decision over the features.
pub(crate) fn decide(f: &Clues) -> PageType {
    let s = &f.signals;
    let og = s.og_type.as_deref().unwrap_or("");
    let path = f.path.as_str();
    let host = f.host.as_str();
    let forum_declared = s.count(FORUM_TYPES) > 0
        || s.count(QA_TYPES) > 0 && s.count(&["faqpage"]) == 0
        || s.count(&["comment"]) >= MIN_DECLARED_COMMENTS && s.count(STORY_TYPES) == 0;
    let products = s.count(PRODUCT_TYPES);
    let listing_declared = s.count(LISTING_TYPES) > 0 || og == "product.group";
    let article_declared = s.count(ARTICLE_TYPES) > 0 || og == "article";
    let docs_declared = s.count(DOCS_TYPES) > 0;
    let year_path = path.split('/').any(|seg| {
        seg.len() == 4 && seg.starts_with("20") && seg.bytes().all(|b| b.is_ascii_digit())
    });

    if forum_declared || starts(host, FORUM_HOSTS) || forum_path(path) {
        return PageType::Forum;
    }
    if docs_declared || starts(host, DOCS_HOSTS) || any(path, DOCS_PATHS) || f.pre >= 4 {
        return PageType::Documentation;
    }
    if products >= 3 || listing_declared || any(path, LISTING_PATHS) {
        return PageType::Listing;
    }
    if products > 0 || og.starts_with("product") || any(path, PRODUCT_PATHS) {
        return PageType::Product;
    }
    if article_declared || year_path || any(path, ARTICLE_PATHS) {
        return PageType::Article;
    }
    // A page that declares no type and has no article's URL: read whole (a
    // service or landing page, or a list without markup) rather than as one
    // scored container; on WCXB's dev split this loses nothing on articles.
    PageType::Service
}
