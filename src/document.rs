//! The values that flow between pipeline stages: the extracted document (what the
//! cache stores, FR-WF-CCH-CONTENT-01) and the rendering method.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::extract::PageType;

/// How the returned content was produced (FR-WF-RESP-METHOD-01); also the second
/// input of the cache key (FR-WF-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
pub struct ExtractedDocument {
    /// Whitespace-normalised Markdown (FR-WF-13b).
    pub markdown: String,
    /// Page title, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `<html lang>` as-is, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Extension (issue 29): the kind of page auto extraction found; only ever set
    /// in auto mode, so SRD documents and cache entries are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_type: Option<PageType>,
}
