//! HTML to Markdown extraction (SRD 3.5.1): what the model actually reads.
//!
//! Pure functions over text; no I/O. Decode the body first with
//! [`crate::content::charset::decode`], then:
//!
//! 1. [`dom::parse`]: a real HTML5 parse (html5ever), bounded so hostile input stays
//!    linear; boilerplate (FR-WF-13, EXT-CLASS-01) is flagged as elements are made.
//! 2. [`root::survey`] + [`root::select_root`]: one document walk finds the root
//!    candidates, title, language and `<base>`; the first non-empty candidate is
//!    the root (EXT-ROOT-01, EXT-EMPTY-01/02).
//! 3. [`markdown::convert`]: the root's subtree to Markdown (13a, EXT-TAGS-01, ...).
//! 4. [`normalize_whitespace`] (13b, EXT-WS-01).

pub(crate) mod article;
pub(crate) mod auto;
pub(crate) mod dom;
pub(crate) mod element;
pub(crate) mod markdown;
pub(crate) mod root;
pub(crate) mod table;
mod walk;
mod whitespace;
pub(crate) mod writer;

use url::Url;

use crate::error::FetchError;
use crate::vocabulary::{ExtractedDocument, ExtractionMode};

#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) use whitespace::normalize_whitespace;

/// What [`extract_html`] produced, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Extraction {
    /// The extracted document.
    pub document: ExtractedDocument,
    /// Article mode found no main content and the SRD algorithm produced the
    /// document instead (the pipeline adds the `article_fallback_srd` note).
    pub article_fell_back: bool,
}

/// Extracts an HTML page with the algorithm `mode` names: one function for every
/// mode ("one way to call").
///
/// [`ExtractionMode::Srd`] is FR-WF-13 .. 13f: the Markdown, title and language of
/// the page's root after boilerplate removal. `final_url` is the URL the page was
/// finally fetched from; links and images resolve against it, or against a valid
/// `<base href>` (13d, 13d1). It fails with `extraction_failed` /
/// `no_extractable_content` when every root candidate, `<body>` included, is empty
/// after boilerplate removal (EXT-EMPTY-02), or, defensively, when the Markdown is
/// empty after normalisation.
///
/// [`ExtractionMode::Article`] (extension) falls back to the SRD algorithm when it
/// finds no main content, and says so in [`Extraction::article_fell_back`].
/// [`ExtractionMode::Auto`] says what kind of page it found in the
/// document's `page_type`, and fails only when the page shows no text at all.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn extract_html(
    html: &str,
    final_url: &Url,
    mode: ExtractionMode,
) -> Result<Extraction, FetchError> {
    match mode {
        ExtractionMode::Auto => {
            return Ok(Extraction {
                document: auto::extract(html, final_url)?,
                article_fell_back: false,
            });
        }
        ExtractionMode::Article => {
            if let Some(article) = article::extract(
                &dom::Source::new(html, dom::Keep::Nothing),
                final_url,
                article::Reach::Scored,
            ) {
                return Ok(Extraction {
                    document: article.document,
                    article_fell_back: false,
                });
            }
        }
        ExtractionMode::Srd => {}
    }
    Ok(Extraction {
        document: srd(html, final_url)?,
        article_fell_back: mode == ExtractionMode::Article,
    })
}

/// The SRD algorithm of [`extract_html`] (FR-WF-13 .. 13f).
fn srd(html: &str, final_url: &Url) -> Result<ExtractedDocument, FetchError> {
    let doc = dom::parse(html, dom::Scripting::On);
    let survey = root::survey(&doc);
    let title = title(&doc, &survey);
    let language = survey.language.clone();
    let base = root::base_url(&doc, &survey, final_url);
    let root = root::select_root(&doc, &survey).ok_or_else(FetchError::no_extractable_content)?;
    let markdown = normalize_whitespace(&markdown::convert(root, &base));
    drop(doc);
    if markdown.is_empty() {
        return Err(FetchError::no_extractable_content());
    }
    Ok(ExtractedDocument {
        markdown,
        title,
        language,
        page_type: None,
        page_starts: Vec::new(),
    })
}

/// FR-WF-13c: `text/plain` gets whitespace normalisation only; no title, no
/// language. (An empty body gives empty Markdown; what to do with that is the
/// caller's decision, as for any other page.)
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn extract_plain(text: &str) -> ExtractedDocument {
    ExtractedDocument {
        markdown: normalize_whitespace(text),
        title: None,
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    }
}

/// FR-WF-13e: the first `<title>` if its normalised text is not empty, else the
/// first `<h1>`'s, else none.
pub(crate) fn title(doc: &dom::Document, survey: &root::Survey) -> Option<String> {
    [survey.title, survey.h1]
        .into_iter()
        .flatten()
        .filter_map(|id| doc.tree.get(id))
        .map(root::normalized_text)
        .find(|text| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::extract_html;
    use crate::vocabulary::ExtractionMode;

    #[test]
    fn a_page_reads_as_its_content_root_with_absolute_links() {
        let url = Url::parse("https://example.com/post/1").unwrap();
        let html = "<title> Hello </title><nav>menu</nav>\
                    <main><h1>Hi</h1><p>See <a href='/x#y'>x</a>.</p></main>";
        let doc = extract_html(html, &url, ExtractionMode::Srd)
            .unwrap()
            .document;
        assert_eq!(doc.markdown, "# Hi\n\nSee [x](https://example.com/x#y).\n");
        assert_eq!(doc.title.as_deref(), Some("Hello"));
    }
}
