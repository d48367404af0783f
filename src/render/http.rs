//! The HTTP renderer's fetch stage: GET, status, media type (Appendix B: Fetch ->
//! CheckStatus -> ContentType). The transport underneath is [`crate::transport`].

use bytes::Bytes;
use tokio::time::Instant;

use crate::budget::Budget;
use crate::canonical_url::CanonicalUrl;
use crate::content::media_type::{self, MediaKind};
use crate::error::FetchError;
use crate::pass::Pass;
use crate::transport::request::ACCEPT_MARKDOWN;
use crate::transport::{GetOptions, HopHook, HttpClient, check_status};
use crate::vocabulary::Format;

use super::wall;

/// A fetched document ready for charset decoding and extraction.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct FetchedDocument {
    /// The URL that answered (after redirects); the cache key of CCH-KEY-01.
    pub final_url: CanonicalUrl,
    /// The pipeline to use.
    pub kind: MediaKind,
    /// The raw `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The header's `charset` parameter, for FR-WF-CHARSET-02.
    pub header_charset: Option<String>,
    /// The decompressed body (at most `max_download_bytes`).
    pub body: Bytes,
    /// Redirect hops followed.
    pub redirects: u32,
    /// When the document's budget ends (its robots.txt checks not counted):
    /// reading the body has what is left of it.
    pub deadline: Instant,
}

/// GET `url` under the document budget (`timeout_seconds`, `max_download_bytes`
/// with `response_too_large`), map the status (FR-WF-07a1/07a2, F.3) and select
/// the media type (FR-WF-10f..10h).
///
/// Extension, with `[tools.webfetch.content] formats`: the request
/// prefers publisher Markdown ([`ACCEPT_MARKDOWN`]) when `markdown` is enabled
/// (else the `Accept` is FR-WF-10b's exactly), a PDF response has
/// `max_pdf_bytes` as its cap when `pdf` is, and the enabled formats are
/// accepted. `deadline` is the fetch's absolute deadline;
/// `hook` checks robots.txt of each URL, the first one included; `pass` is the
/// tool call's (one resolution per host), or `None` for a fetch on its own.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) async fn fetch_document(
    client: &HttpClient,
    url: &CanonicalUrl,
    deadline: Instant,
    hook: Option<&dyn HopHook>,
    pass: Option<&Pass>,
) -> Result<FetchedDocument, FetchError> {
    let settings = client.settings();
    let budget = Budget::new(deadline, settings.timeout_ms());
    let formats = settings.content.formats;
    let mut opts = GetOptions::new(budget, settings.max_download_bytes);
    opts.hook = hook;
    opts.pass = pass;
    if formats.contains(Format::Markdown) {
        opts.headers.push((
            http::header::ACCEPT,
            http::HeaderValue::from_static(ACCEPT_MARKDOWN),
        ));
    }
    if formats.contains(Format::Pdf) {
        opts.pdf_max_body_bytes = Some(settings.content.max_pdf_bytes);
    }
    opts.polite = true;
    if settings.detect_walls {
        opts.refusal_head_bytes = wall::HEAD_BYTES as u64;
    }
    let response = client.get(url, &opts).await?;
    if settings.detect_walls {
        wall::refuse(&response)?;
    }
    check_status(response.status, &response.status_text)?;
    let content_type = media_type::last_content_type(&response.headers);
    let kind = media_type::select(content_type.as_deref(), &response.body, formats)?;
    let header_charset = content_type.as_deref().and_then(media_type::charset_param);
    Ok(FetchedDocument {
        final_url: response.final_url,
        kind,
        content_type,
        header_charset,
        body: response.body,
        redirects: response.redirects,
        deadline: response.deadline,
    })
}
