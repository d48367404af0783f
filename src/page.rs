//! A response body turned into a document: the Decode and Extract stages of
//! Appendix B (FR-WF-10i, 13, 13c), shared by HTTP mode, browser mode and the
//! offline `webfetch extract`, so the three cannot drift apart.
//!
//! Pure: bytes and text in, a document and its notes out.

use url::Url;

use crate::content::charset;
use crate::content::media_type::MediaKind;
use crate::document::ExtractedDocument;
use crate::error::FetchError;
use crate::extract::{self, ExtractionMode};
use crate::notes::{Note, Notes};
use crate::render;

/// A decoded, extracted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The body as text (FR-WF-10i); the SPA heuristic of FR-WF-12c reads it.
    pub text: String,
    /// The extracted document.
    pub document: ExtractedDocument,
    /// Whether `document` is what SRD mode extracts from this page: true except
    /// when article mode found the main content (extension).
    pub is_srd_reading: bool,
    /// The notes of these stages: `charset_fallback` (FR-WF-10i) and, extension,
    /// `article_fallback_srd`.
    pub notes: Notes,
}

impl Page {
    /// Decodes `body` (header charset, then BOM and `<meta>` for HTML: FR-WF-10i,
    /// CHARSET-02) and extracts it: HTML with `mode` against `final_url`,
    /// `text/plain` by whitespace normalisation only, whatever the mode (13c).
    ///
    /// An HTML page with no content is `extraction_failed` (EXT-EMPTY-02), and so
    /// is a blank `text/plain` body: an actionable error, never a success with no
    /// chunks.
    pub fn read(
        body: &[u8],
        kind: MediaKind,
        header_charset: Option<&str>,
        final_url: &Url,
        mode: ExtractionMode,
    ) -> Result<Page, FetchError> {
        let decoded = charset::decode(body, header_charset, kind == MediaKind::Html);
        let mut page = match kind {
            MediaKind::Html => match extract::extract_html_with(&decoded.text, final_url, mode) {
                Ok(extraction) => Page::extracted(decoded.text, extraction, mode),
                // SRD-READINGS 29: an SPA shell that extracts to nothing is still an
                // error over HTTP (FR-WF-12f), one that says why.
                Err(_) if render::spa_indicators(&decoded.text) => {
                    return Err(FetchError::no_extractable_content_client_rendered());
                }
                Err(error) => return Err(error),
            },
            MediaKind::Plain if decoded.text.trim().is_empty() => {
                return Err(FetchError::no_extractable_content());
            }
            MediaKind::Plain => Page {
                document: extract::extract_plain(&decoded.text),
                text: decoded.text,
                is_srd_reading: true,
                notes: Notes::new(),
            },
        };
        if decoded.charset_fallback {
            page.notes.add(Note::CharsetFallback);
        }
        Ok(page)
    }

    /// Extracts already decoded HTML (the browser's DOM, or a decoded body) with
    /// `mode`, noting `article_fallback_srd` when article mode fell back.
    pub fn from_html(
        html: String,
        final_url: &Url,
        mode: ExtractionMode,
    ) -> Result<Page, FetchError> {
        let extraction = extract::extract_html_with(&html, final_url, mode)?;
        Ok(Page::extracted(html, extraction, mode))
    }

    /// The page of `html` extracted in `mode`, noting `article_fallback_srd` when
    /// article mode fell back.
    fn extracted(html: String, extraction: extract::Extraction, mode: ExtractionMode) -> Page {
        let mut notes = Notes::new();
        if extraction.article_fell_back {
            notes.add(Note::ArticleFallbackSrd);
        }
        Page {
            text: html,
            document: extraction.document,
            is_srd_reading: mode == ExtractionMode::Srd || extraction.article_fell_back,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.com/a/").unwrap()
    }

    #[test]
    fn html_is_extracted_in_srd_mode_with_no_notes() {
        let page = Page::read(
            b"<title>T</title><p>Hello <a href='x'>there</a></p>",
            MediaKind::Html,
            Some("utf-8"),
            &url(),
            ExtractionMode::Srd,
        )
        .unwrap();
        assert_eq!(
            page.document.markdown,
            "Hello [there](https://example.com/a/x)\n"
        );
        assert_eq!(page.document.title.as_deref(), Some("T"));
        assert!(page.is_srd_reading && page.notes.is_empty());
    }

    #[test]
    fn plain_text_ignores_the_mode_and_notes_a_charset_fallback() {
        for mode in [ExtractionMode::Srd, ExtractionMode::Article] {
            let page =
                Page::read(b"caf\xc3\xa9  \r\n", MediaKind::Plain, None, &url(), mode).unwrap();
            assert_eq!(page.document.markdown, "café\n");
            assert!(page.is_srd_reading);
            assert_eq!(
                page.notes.iter().collect::<Vec<_>>(),
                [Note::CharsetFallback]
            );
        }
        let latin1 = Page::read(
            b"caf\xe9",
            MediaKind::Plain,
            Some("windows-1252"),
            &url(),
            ExtractionMode::Article,
        )
        .unwrap();
        assert_eq!(latin1.document.markdown, "café\n");
        assert!(latin1.notes.is_empty());
    }

    #[test]
    fn blank_bodies_are_errors() {
        for kind in [MediaKind::Html, MediaKind::Plain] {
            let error =
                Page::read(b" \n\t", kind, Some("utf-8"), &url(), ExtractionMode::Srd).unwrap_err();
            assert_eq!(error.details_json()["error"], "no_extractable_content", "{kind:?}");
        }
    }
}
