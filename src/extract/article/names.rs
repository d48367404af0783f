//! What class and id names, roles, inline styles and short texts say about an
//! element: Readability's weights and unlikely-candidate fragments (substrings),
//! our furniture words (whole words), page labels.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use ego_tree::NodeId;

use super::Strictness;
use crate::extract::dom::Document;
use crate::extract::element::Tag;
use crate::extract::element::{Attr, Element};

/// Readability's class and id weight: -25 for each of class and id that names
/// furniture, +25 for each that names content.
pub(crate) fn class_weight(element: &Element) -> i32 {
    let mut weight = 0;
    for value in [element.attr(Attr::Class), element.attr(Attr::Id)]
        .into_iter()
        .flatten()
    {
        // The whole value first: most names match nothing, and only a match
        // needs its tokens read apart.
        if NEGATIVE_NAMES.is_in(value) && named_tokens(value).any(|t| NEGATIVE_NAMES.is_in(t)) {
            weight -= 25;
        }
        if POSITIVE_NAMES.is_in(value) {
            weight += 25;
        }
    }
    weight
}

/// The tokens of a class or id value that name what an element is, not how it
/// lays out. CSS frameworks' utilities style a box, often the article's own
/// table or section: overflow utilities (`overflow-hidden`, `overflow-x-scroll`,
/// `vds-overflow_hidden`) clip or scroll it, scroll-margin and -padding ones
/// (`scroll-mt-20`) offset an anchor, and variant-prefixed ones
/// (`prose-headings:scroll-mt-20`, `md:hidden`) restyle it at a breakpoint or
/// for its children. Their `hidden` and `scroll` are not Readability's.
fn named_tokens(value: &str) -> impl Iterator<Item = &str> {
    value.split_ascii_whitespace().filter(|token| {
        let utility = token.contains(':')
            || token.starts_with("scroll-m")
            || token.starts_with("scroll-p")
            || contains_ignoring_case(token, "overflow");
        !utility
    })
}

/// Whether `haystack` holds `needle`, ASCII case aside, without allocating:
/// class names are read on every element.
pub(crate) fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Class or id fragments of page furniture (Readability's `negative`).
const NEGATIVE: &[&str] = &[
    "-ad-",
    "hidden",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "footer",
    "gdpr",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "widget",
];
/// Class or id fragments of content (Readability's `positive`).
const POSITIVE: &[&str] = &[
    "article",
    "body",
    "content",
    "entry",
    "hentry",
    "h-entry",
    "main",
    "page",
    "pagination",
    "post",
    "text",
    "blog",
    "story",
];
/// Class or id fragments of elements that are almost never content (Readability's
/// `unlikelyCandidates`) ...
const UNLIKELY: &[&str] = &[
    "-ad-",
    "ai2html",
    "banner",
    "breadcrumbs",
    "combx",
    "comment",
    "community",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "related",
    "remark",
    "replies",
    "rss",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "supplemental",
    "ad-break",
    "agegate",
    "pagination",
    "pager",
    "popup",
    "yom-remote",
];
/// ... unless they also name a content container (`okMaybeItsACandidate`).
const MAYBE_CANDIDATE: &[&str] = &[
    "and", "article", "body", "column", "content", "main", "mathjax", "shadow",
];
/// ARIA roles of page furniture, besides dialogs ([`is_dialog`]).
const UNLIKELY_ROLES: &[&str] = &["menu", "menubar", "complementary", "navigation", "alert"];
/// ARIA roles of dialogs.
const DIALOG_ROLES: &[&str] = &["dialog", "alertdialog"];

fn has_role(element: &Element, roles: &[&str]) -> bool {
    element
        .attr(Attr::Role)
        .is_some_and(|role| roles.iter().any(|r| role.trim().eq_ignore_ascii_case(r)))
}

/// A case-insensitive matcher for any of a list of fragments.
struct Fragments(LazyLock<AhoCorasick>);

impl Fragments {
    const fn new(build: fn() -> AhoCorasick) -> Fragments {
        Fragments(LazyLock::new(build))
    }

    fn is_in(&self, haystack: &str) -> bool {
        self.0.is_match(haystack)
    }
}

fn matcher(needles: &[&str]) -> AhoCorasick {
    // Haystacks are class names and ids, a few dozen bytes: a DFA without a
    // prefilter reads them fastest.
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .prefilter(false)
        .build(needles)
        .expect("fixed fragment lists build")
}

static NEGATIVE_NAMES: Fragments = Fragments::new(|| matcher(NEGATIVE));
static POSITIVE_NAMES: Fragments = Fragments::new(|| matcher(POSITIVE));
static UNLIKELY_NAMES: Fragments = Fragments::new(|| matcher(UNLIKELY));
static MAYBE_NAMES: Fragments = Fragments::new(|| matcher(MAYBE_CANDIDATE));

/// Class or id fragments of what forum software shows beside a post about its
/// poster, not the post: titles and banners (`userTitle`, "Well-known member"),
/// counts (`message-userExtras`, `userstats`, `ipsEntry__authorStats`: joined,
/// messages, reaction score) and signatures. The poster's name is elsewhere
/// (`message-name`, `username`) and stays.
const POSTER_DETAILS: &[&str] = &[
    "signature",
    "usertitle",
    "userbanner",
    "userextra",
    "extrauserinfo",
    "userinfo_extra",
    "userstats",
    "user-stats",
    "authorstats",
    "authorfields",
    "author_statistics",
];
static POSTER_DETAIL_NAMES: Fragments = Fragments::new(|| matcher(POSTER_DETAILS));

/// Whether an element's class or id names details of a post's poster other than
/// the name (auto mode's thread reading keeps each post's author and date).
pub(crate) fn names_poster_details(element: &Element) -> bool {
    [element.attr(Attr::Class), element.attr(Attr::Id)]
        .into_iter()
        .flatten()
        .any(|v| POSTER_DETAIL_NAMES.is_in(v))
}

/// Elements of the body the article leaves out before scoring: images and
/// captions (pictures are not text, and their captions and credits are not the
/// article's), elements an inline style hides, and, in the strict pass, those whose
/// class or id (substring, unlike the SRD's whole tokens) or role names page
/// furniture.
pub(crate) fn unseen_elements(doc: &Document, body: NodeId, pass: Strictness) -> Vec<NodeId> {
    doc.elements_under(body, |_, element| {
        if element.removed || matches!(element.tag, Tag::Body | Tag::Html) {
            return false;
        }
        if element.tag == Tag::Image
            || element.name.local == html5ever::local_name!("figcaption")
            || element.attr(Attr::Style).is_some_and(style_hides)
        {
            return true;
        }
        if !pass.strip_unlikely || matches!(element.tag, Tag::Link | Tag::Main | Tag::Article) {
            return false;
        }
        if has_role(element, UNLIKELY_ROLES) || is_dialog(element) {
            return true;
        }
        let names = [element.attr(Attr::Class), element.attr(Attr::Id)];
        names.iter().flatten().any(|v| UNLIKELY_NAMES.is_in(v))
            && !names.iter().flatten().any(|v| MAYBE_NAMES.is_in(v))
    })
}

/// Whether the element is a dialog (ARIA `dialog`, `alertdialog`): a consent
/// manager's preference centre or a sign-up modal, over the page, never in it.
pub(crate) fn is_dialog(element: &Element) -> bool {
    has_role(element, DIALOG_ROLES)
}

/// Whether an inline style hides the element (`display: none`,
/// `visibility: hidden`).
pub(crate) fn style_hides(style: &str) -> bool {
    style.split(';').any(|declaration| {
        let Some((property, value)) = declaration.split_once(':') else {
            return false;
        };
        let (property, value) = (property.trim(), value.trim());
        (property.eq_ignore_ascii_case("display") && value.eq_ignore_ascii_case("none"))
            || (property.eq_ignore_ascii_case("visibility") && value.eq_ignore_ascii_case("hidden"))
    })
}

/// Words of a class or id that name small page furniture around an article's text:
/// bylines, dates, captions, share bars, tag lists, promotions. Matched as whole
/// words of the name (split at anything not a letter or digit), so `headline` is
/// not `ad` and `update` is not `date`.
const FURNITURE_WORDS: &[&str] = &[
    "ad",
    "ads",
    "advert",
    "advertisement",
    "author",
    "authors",
    "bio",
    "breadcrumb",
    "breadcrumbs",
    "byline",
    "caption",
    "carousel",
    "comment",
    "comments",
    "cookie",
    "copyright",
    "credit",
    "credits",
    "date",
    "dateline",
    "disclaimer",
    "gallery",
    "hidden",
    "login",
    "meta",
    "modal",
    "newsletter",
    "outbrain",
    "popular",
    "popup",
    "print",
    "promo",
    "recommended",
    "related",
    "share",
    "sharing",
    "signup",
    "slideshow",
    "social",
    "sponsor",
    "sponsored",
    "subscribe",
    "subscription",
    "tag",
    "tags",
    "taboola",
    "timestamp",
    "toolbar",
    "trending",
    "widget",
];

/// Furniture is short: a name match on a longer element is more likely a wrapper
/// of the article itself (`article-tags-and-body`).
pub(crate) const FURNITURE_MAX_CHARS: u32 = 400;

pub(crate) fn names_furniture(element: &Element) -> bool {
    [element.attr(Attr::Class), element.attr(Attr::Id)]
        .into_iter()
        .flatten()
        .flat_map(named_tokens)
        .flat_map(|name| name.split(|c: char| !c.is_ascii_alphanumeric()))
        .any(|word| FURNITURE_WORDS.iter().any(|f| f.eq_ignore_ascii_case(word)))
}

/// Short blocks whose whole text is a label of the page, not of the article.
pub(crate) fn is_label(text: &str) -> bool {
    const LABELS: &[&str] = &[
        "advertisement",
        "advertising",
        "ad",
        "ads",
        "sponsored",
        "caption",
        "close",
        "share",
        "share this",
        "share this article",
        "share on facebook",
        "share on twitter",
        "tweet",
        "email",
        "print",
        "comments",
        "read more",
        "continue reading",
        "related",
        "related articles",
        "related stories",
        "more",
        "loading",
        "loading...",
        "photo",
        "video",
        "image",
        "story continues below advertisement",
        "scroll to continue",
    ];
    let text = text.trim().trim_end_matches(':').trim();
    if LABELS.iter().any(|l| l.eq_ignore_ascii_case(text)) {
        return true;
    }
    // "Image 1 of 8", "1 of 4", "Photo 2/5".
    let words: Vec<&str> = text.split_whitespace().collect();
    matches!(words.as_slice(), [.., n, "of", m] if n.parse::<u32>().is_ok() && m.parse::<u32>().is_ok())
        && words.len() <= 4
}
