//! The note tokens of FR-WF-03c and their canonical order (FR-WF-NOTES-ORDER-01).
//!
//! Stages add notes in any order; [`Notes`] keeps each token once and always lists
//! them in pipeline-stage order, so the same conditions give byte-identical output.

use std::collections::BTreeSet;

use serde::{Deserialize, Deserializer, Serialize};

/// A note token. The declaration order is the canonical pipeline-stage order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Note {
    /// Response served from cache.
    CacheHit,
    /// robots.txt unavailable but `fail_open = true`.
    RobotsUnavailableFailOpen,
    /// Browser fallback requested but unavailable.
    BrowserUnavailableUsedHttp,
    /// Extension (`detect_walls`): the page is an application shell that needs
    /// JavaScript, read without a browser (browser mode off or unavailable):
    /// what came back is not the page's content.
    JavascriptRequired,
    /// DOM exceeded `max_rendered_dom_bytes`.
    BrowserDomTruncated,
    /// The browser blocked non-GET/HEAD subrequests.
    BrowserBlockedNonGet,
    /// No supported charset declared; decoded as UTF-8 with replacement.
    CharsetFallback,
    /// Extension (never in an SRD response): article extraction was asked for,
    /// found no main content, and the SRD algorithm produced the document.
    ArticleFallbackSrd,
    /// Extension: the document is the publisher's own Markdown (a
    /// `text/markdown` answer), used as it is.
    PublisherMarkdown,
    /// Extension: the publisher's Markdown held what its reader would
    /// never see or what the HTML path never writes (HTML comments, `<script>`,
    /// `<style>`, `<template>`, hidden elements, links that are not http(s) or
    /// mailto); that was dropped (FR-WF-13, 13d).
    PublisherMarkdownSanitized,
    /// Extension: the PDF has more pages than
    /// `[tools.webfetch.content] max_pdf_pages`; only those were read.
    PdfPageLimit,
    /// What the reader rendered reached its size cap (8 MiB of Markdown): the
    /// document is cut there, at a line's end, before it is chunked or cached.
    RenderedSizeLimit,
    /// Cache write failed (the fetch still succeeded).
    CacheWriteFailed,
    /// Output truncated to fit the byte budget.
    ToolOutputLimit,
}

impl Note {
    /// Every note, in canonical order.
    pub const ALL: [Note; 14] = [
        Note::CacheHit,
        Note::RobotsUnavailableFailOpen,
        Note::BrowserUnavailableUsedHttp,
        Note::JavascriptRequired,
        Note::BrowserDomTruncated,
        Note::BrowserBlockedNonGet,
        Note::CharsetFallback,
        Note::ArticleFallbackSrd,
        Note::PublisherMarkdown,
        Note::PublisherMarkdownSanitized,
        Note::PdfPageLimit,
        Note::RenderedSizeLimit,
        Note::CacheWriteFailed,
        Note::ToolOutputLimit,
    ];

    /// The note whose wire token is `token`.
    pub fn from_token(token: &str) -> Option<Note> {
        Note::ALL.into_iter().find(|note| note.as_str() == token)
    }

    /// The wire token.
    pub fn as_str(self) -> &'static str {
        match self {
            Note::CacheHit => "cache_hit",
            Note::RobotsUnavailableFailOpen => "robots_unavailable_fail_open",
            Note::BrowserUnavailableUsedHttp => "browser_unavailable_used_http",
            Note::JavascriptRequired => "javascript_required",
            Note::BrowserDomTruncated => "browser_dom_truncated",
            Note::BrowserBlockedNonGet => "browser_blocked_non_get",
            Note::CharsetFallback => "charset_fallback",
            Note::ArticleFallbackSrd => "article_fallback_srd",
            Note::PublisherMarkdown => "publisher_markdown",
            Note::PublisherMarkdownSanitized => "publisher_markdown_sanitized",
            Note::PdfPageLimit => "pdf_page_limit",
            Note::RenderedSizeLimit => "rendered_size_limit",
            Note::CacheWriteFailed => "cache_write_failed",
            Note::ToolOutputLimit => "tool_output_limit",
        }
    }
}

impl Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl schemars::JsonSchema for Note {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Note".into()
    }

    /// One of the tokens, as [`Note::as_str`] writes them.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let tokens: Vec<&str> = Note::ALL.iter().map(|note| note.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": tokens })
    }
}

impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let token = String::deserialize(d)?;
        Note::from_token(&token)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown note `{token}`")))
    }
}

/// The set of notes of one response, serialised in canonical order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Notes(BTreeSet<Note>);

impl Notes {
    /// No notes.
    pub fn new() -> Self {
        Notes::default()
    }

    /// Adds a note; adding it twice keeps one.
    pub fn add(&mut self, note: Note) {
        self.0.insert(note);
    }

    /// Adds every note of `other`.
    pub fn extend(&mut self, other: &Notes) {
        self.0.extend(other.0.iter().copied());
    }

    /// Whether `note` is present.
    pub fn contains(&self, note: Note) -> bool {
        self.0.contains(&note)
    }

    /// The notes in canonical order.
    pub fn iter(&self) -> impl Iterator<Item = Note> + '_ {
        self.0.iter().copied()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<Note> for Notes {
    fn from_iter<I: IntoIterator<Item = Note>>(iter: I) -> Self {
        Notes(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_in_stage_order_whatever_the_insertion_order() {
        let notes: Notes = [Note::ToolOutputLimit, Note::CharsetFallback, Note::CacheHit]
            .into_iter()
            .collect();
        assert_eq!(
            serde_json::to_string(&notes).unwrap(),
            r#"["cache_hit","charset_fallback","tool_output_limit"]"#
        );
        assert_eq!(serde_json::to_string(&Notes::new()).unwrap(), "[]");
    }
}
