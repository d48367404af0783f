//! Auto extraction: decides what kind of page it reads from the
//! document itself, then extracts each kind accordingly.
//!
//! 1. `signals`: what the page says about itself (schema.org types in JSON-LD and
//!    microdata, Open Graph `og:type`), read from the raw HTML.
//! 2. `classify`: the page type, from those signals, the parsed document's
//!    structure (repeated blocks, posts, code, forms, prices) and the URL's shape.
//! 3. The extraction for that type: the posts in order for threads (`thread`;
//!    on a question-and-answer page without the remarks under each post);
//!    article scoring for articles, unless its extraction is short and the page's
//!    repeated posts (outside containers named `comments`, which on an article
//!    are its comments) hold four times as much, or its comments twenty times
//!    as much (a story under its readers' discussion): the page then reads as a
//!    thread. An article extraction reaches up to an ancestor holding several
//!    times the prose scoring chose (an article built of sections). The whole
//!    page minus its furniture (`whole`) for the kinds whose content is spread
//!    over many blocks, and for any page whose scored extraction comes back with
//!    under ten words (a stray line where the page has no prose).
//! 4. Never an error when the page shows text: when every extraction comes back
//!    empty, the visible text of the body is the answer (`visible`).
//!
//! The result goes to the same Markdown converter, chunker and fitter as every
//! other mode.

use url::Url;

use super::{article, dom};
use crate::error::FetchError;
use crate::vocabulary::{ExtractedDocument, PageType};

mod blocks;
mod cards;
pub(crate) mod classify;
#[cfg(any(test, feature = "internals"))]
mod features;
mod product;
mod repeat;
mod signals;
mod thread;
mod visible;
mod whole;

/// Extracts `html` in auto mode: the document, with the page type found.
///
/// Fails (`extraction_failed` / `no_extractable_content`) only when the page shows
/// no text at all.
pub(crate) fn extract(html: &str, final_url: &Url) -> Result<ExtractedDocument, FetchError> {
    read(html, final_url, classify::classify(html, final_url))
}

/// Auto mode's extraction of `html` as a page of type `page_type`, whatever the page
/// says it is: for benches and tests that measure each type's extraction apart from
/// the classifier.
#[cfg(any(test, feature = "internals"))]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn extract_as(
    html: &str,
    final_url: &Url,
    page_type: PageType,
) -> Result<ExtractedDocument, FetchError> {
    read(html, final_url, page_type)
}

/// The page type auto mode reads `html` as, and that extraction's leaf blocks (the
/// thread extraction's for a forum, the whole-page extraction's otherwise; none for an
/// article, which the filter does not read): each block's text and its features
/// as the block filter reads them, for `scripts/train_blocks.py` (through the
/// WCXB bench's `WCXB_BLOCKS`).
///
/// The type is the extraction's, except that whether a page classified as an
/// article reads as a thread is decided with the filter off: the extraction
/// weighs the thread extraction's words after the filter, so a new model could move
/// a page in or out of the rows it is trained on, and a retrain would not give
/// back the model it started from.
#[cfg(any(test, feature = "internals"))]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn block_rows(html: &str, final_url: &Url) -> (PageType, Vec<(String, blocks::Row)>) {
    let page_type = match classify::classify(html, final_url) {
        PageType::Article => {
            let source = dom::Source::new(html, dom::Keep::Copies);
            article_or_thread(&source, final_url, blocks::Filter::Off).1
        }
        other => other,
    };
    let rows = match page_type {
        PageType::Article => Vec::new(),
        PageType::Forum => thread::block_rows(html),
        _ => whole::block_rows(
            &mut dom::parse(html, dom::Scripting::On),
            whole::Furniture::for_page(page_type),
        ),
    };
    (page_type, rows)
}

/// Reads a parsed page as `page_type`, falling back to the whole page, then to its
/// visible text.
fn read(
    html: &str,
    final_url: &Url,
    mut page_type: PageType,
) -> Result<ExtractedDocument, FetchError> {
    // One parse, each extraction tried on a copy; the whole-page extraction, last
    // but for the visible text, on the parse itself.
    let source = dom::Source::new(html, dom::Keep::Copies);
    let scored = match page_type {
        PageType::Article => {
            let (document, read_as) = article_or_thread(&source, final_url, blocks::Filter::On);
            page_type = read_as;
            document
        }
        PageType::Forum => thread_extraction(html, &source, final_url).or_else(|| {
            article::extract(&source, final_url, article::Reach::Prose)
                .map(|article| article.document)
        }),
        _ => None,
    }
    .filter(|document| document.markdown.split_whitespace().count() >= MIN_SCORED_WORDS);
    let mut document = match scored {
        Some(document) => document,
        None => match whole::extract(
            &mut source.into_document(),
            final_url,
            whole::Furniture::for_page(page_type),
        ) {
            Some(document) => document,
            None => visible::extract(html, final_url)?,
        },
    };
    if page_type == PageType::Product {
        add_product_facts(html, &mut document.markdown);
    }
    document.page_type = Some(page_type);
    Ok(document)
}

/// A scored extraction (article or thread) shorter than this many words missed the
/// page: scoring found no prose and chose a stray line ("Expand Navigation"),
/// where the page's content is a title and a link (a link post on a discussion
/// site). The whole-page extraction answers instead.
const MIN_SCORED_WORDS: usize = 10;

/// The thread extraction of a page classified as a forum, its comment containers
/// read: on forums they often hold the replies. On a question-and-answer page
/// (schema.org `QAPage`) the comments under each post are remarks on it, not
/// answers, and stay out when the thread without them keeps half its words
/// (StackExchange); they are read where the answers themselves sit in them.
fn thread_extraction(
    html: &str,
    source: &dom::Source<'_>,
    final_url: &Url,
) -> Option<ExtractedDocument> {
    let read = thread::extract(
        source,
        final_url,
        thread::Comments::Read,
        blocks::Filter::On,
    );
    // The declared types are read again only here, on a thread with comment
    // containers: the extractions take a page type, not the classifier's clues
    // (a type forced by the caller has none).
    if !thread::has_comments(source)
        || signals::read(&signals::Haystack::new(html)).count(&[classify::QA_PAGE]) == 0
    {
        return read;
    }
    let words = |d: &ExtractedDocument| d.markdown.split_whitespace().count();
    match (
        read,
        thread::extract(
            source,
            final_url,
            thread::Comments::Dropped,
            blocks::Filter::On,
        ),
    ) {
        (Some(read), Some(dropped)) if words(&dropped) * 2 < words(&read) => Some(read),
        (read, dropped) => dropped.or(read),
    }
}

/// An article extraction shorter than this many words may have caught one post of
/// a thread, or one block of a list, and the page's repeated posts are read too.
/// Longer extractions are taken as they are: the thread extraction costs a second
/// extraction of the page. On WCXB's dev split it then runs on one article page in twelve, and
/// a bound of 500 words would gain little more for twice the runs.
const SHORT_ARTICLE_WORDS: usize = 300;

/// How many times a short article extraction's words the page's repeated posts must
/// hold to be read instead. On WCXB's dev split the thread extraction wins where it
/// holds four times the article's words or more, and loses below twice.
const THREAD_OVER_ARTICLE: usize = 4;

/// How many times a short article extraction's words its comments must hold for the
/// page to be read as a discussion: a story on a link aggregator or a news
/// summary under its readers' thread, where the comments are the content. A
/// blog post with a few screens of comments holds 5x its words in them (WCXB
/// dev 4449), a blog's open thread 17x (a scrapinghub page, whose gold leaves
/// the comments out); link aggregators' and discussion sites' stories 33x and
/// more (WCXB dev 0570, 0575).
const COMMENTS_OVER_ARTICLE: usize = 20;

/// The article extraction of a page classified as an article, or its thread extraction
/// when article scoring chose one post among many ([`SHORT_ARTICLE_WORDS`],
/// [`THREAD_OVER_ARTICLE`]) or the page's comments dwarf its story
/// ([`COMMENTS_OVER_ARTICLE`]); with the type the extraction found. The thread
/// extractions run the block filter when `filter` is on.
fn article_or_thread(
    source: &dom::Source<'_>,
    final_url: &Url,
    filter: blocks::Filter,
) -> (Option<ExtractedDocument>, PageType) {
    let words = |d: &ExtractedDocument| d.markdown.split_whitespace().count();
    let article = article::extract(source, final_url, article::Reach::Prose);
    // Judged on what scoring chose: a extraction widened to its sections is still
    // one post when scoring chose one.
    if let Some(article_words) = article.as_ref().map(|article| article.scored_words)
        && may_be_one_post(article_words)
    {
        for comments in [thread::Comments::Dropped, thread::Comments::Read] {
            // Read, the comments change the thread only where the page has them.
            if comments == thread::Comments::Read && !thread::has_comments(source) {
                break;
            }
            if let Some(thread) = thread::extract(source, final_url, comments, filter)
                && thread_outweighs(article_words, words(&thread), comments)
            {
                return (Some(thread), PageType::Forum);
            }
        }
    }
    (article.map(|article| article.document), PageType::Article)
}

/// Whether an article extraction of `article_words` is short enough to be worth a
/// thread extraction ([`SHORT_ARTICLE_WORDS`]).
fn may_be_one_post(article_words: usize) -> bool {
    article_words < SHORT_ARTICLE_WORDS
}

/// Whether a thread extraction of `thread_words` holds enough times an article
/// extraction of `article_words` to be read instead: [`THREAD_OVER_ARTICLE`] when
/// the comments stayed out of it, [`COMMENTS_OVER_ARTICLE`] when they were read.
fn thread_outweighs(article_words: usize, thread_words: usize, comments: thread::Comments) -> bool {
    let factor = match comments {
        thread::Comments::Dropped => THREAD_OVER_ARTICLE,
        thread::Comments::Read => COMMENTS_OVER_ARTICLE,
    };
    thread_words >= article_words * factor
}

/// Adds the product facts the page's JSON-LD declares and its Markdown does not
/// show, after the leading heading when there is one (a model reads the price
/// and availability first).
fn add_product_facts(html: &str, markdown: &mut String) {
    let Some(facts) = product::facts(html) else {
        return;
    };
    let Some(supplement) = product::supplement(markdown, &facts) else {
        return;
    };
    let at = if markdown.starts_with("# ") {
        markdown.find("\n\n").map_or(markdown.len(), |i| i + 2)
    } else {
        0
    };
    let tail = if at < markdown.len() { "\n\n" } else { "" };
    let lead = if at > 0 && !markdown[..at].ends_with("\n\n") {
        "\n\n"
    } else {
        ""
    };
    markdown.insert_str(at, &format!("{lead}{supplement}{tail}"));
}

/// A page type name that is not one of [`PageType`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown page type `{0}`")]
pub struct UnknownPageType(pub String);

impl std::str::FromStr for PageType {
    type Err = UnknownPageType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "article" => PageType::Article,
            "forum" => PageType::Forum,
            "product" => PageType::Product,
            "listing" => PageType::Listing,
            "documentation" => PageType::Documentation,
            "service" => PageType::Service,
            other => return Err(UnknownPageType(other.to_owned())),
        })
    }
}

#[cfg(test)]
mod tests;
