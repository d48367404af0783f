//! The crate's vocabulary: the values that flow between pipeline stages and that
//! configuration, arguments, cache and output all speak of. The extracted document
//! (what the cache stores, FR-WF-CCH-CONTENT-01), the rendering method, the
//! extraction mode, the extension formats ([`Formats`]) and the timestamp
//! ([`Timestamp`], FR-WF-RESP-TIME-01). It depends on nothing else in the crate,
//! so every floor may import it.

mod formats;
mod timestamp;

pub use formats::{Format, Formats, UnknownFormat};
pub use timestamp::{Timestamp, TimestampError};

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How the returned content was produced (FR-WF-RESP-METHOD-01); also the second
/// input of the cache key (FR-WF-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RenderingMethod {
    /// Plain HTTP GET.
    Http,
    /// Headless Chromium.
    Browser,
}

impl RenderingMethod {
    /// `"http"` or `"browser"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RenderingMethod::Http => "http",
            RenderingMethod::Browser => "browser",
        }
    }
}

impl fmt::Display for RenderingMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The canonical extracted document: Markdown before chunking, plus the optional
/// title and language (FR-WF-13e, 13f). Optional fields are omitted, never `null`
/// (FR-WF-CCH-ENTRY-OPT-01).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct ExtractedDocument {
    /// Whitespace-normalised Markdown (FR-WF-13b).
    pub markdown: String,
    /// Page title, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `<html lang>` as-is, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Extension: the kind of page auto extraction found; only ever set
    /// in auto mode, so SRD documents and cache entries are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_type: Option<PageType>,
    /// Extension: byte offsets in `markdown`, increasing, where a PDF
    /// page after the first begins (at a block boundary): the chunker prefers
    /// to cut there ([`crate::chunk::chunk`]). Empty for every other
    /// document, and then not written, so SRD documents and cache entries are
    /// unchanged; kept in the cache so a hit chunks as the miss did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub page_starts: Vec<usize>,
}

/// Which algorithm chooses the content of an HTML page. An extension of ours:
/// [`ExtractionMode::Srd`] is FR-WF-13 exactly and the default, so every SRD
/// response is unchanged; [`ExtractionMode::Article`] scores the page for its main
/// content (the article scorer) and hands that subtree to the same Markdown converter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ExtractionMode {
    /// FR-WF-13: boilerplate removal, then the first non-empty root candidate.
    #[default]
    Srd,
    /// The main content by scoring (text and link density, class weights,
    /// sibling merging), falling back to [`ExtractionMode::Srd`] when it finds none.
    Article,
    /// Extension: decides what kind of page it reads ([`PageType`]) from the
    /// document itself and extracts each kind accordingly.
    Auto,
}

impl ExtractionMode {
    /// The config and wire spelling: `"srd"`, `"article"` or `"auto"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtractionMode::Srd => "srd",
            ExtractionMode::Article => "article",
            ExtractionMode::Auto => "auto",
        }
    }
}

impl fmt::Display for ExtractionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not `srd`, `article` or `auto`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown extraction mode `{0}` (expected `srd`, `article` or `auto`)")]
pub struct UnknownMode(pub String);

impl FromStr for ExtractionMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "srd" => Ok(ExtractionMode::Srd),
            "article" => Ok(ExtractionMode::Article),
            "auto" => Ok(ExtractionMode::Auto),
            other => Err(UnknownMode(other.to_owned())),
        }
    }
}

/// What kind of page auto extraction found: the response's `page_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
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
