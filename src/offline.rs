//! Extension: a saved page turned into the `web_fetch` response, offline (the
//! `webfetch extract` command): a call to [`WebFetchTool::fetch`] whose request
//! carries the page ([`FetchArgs::page`]), one way to call.
//!
//! The content stages of the pipeline without its network ones: no SSRF check, no
//! robots.txt, no fetch, no cache. The body goes through the same size cap
//! (FR-WF-10e), content-type selection (FR-WF-10f..10h), charset decoding and
//! extraction ([`DecodedPage::read`]), chunking and output fitting (FR-WF-03a, OUT-01) as
//! a fetched one, so a page saved from a URL gives the response an HTTP-mode fetch
//! of that URL would, `fetched_at` aside.
//!
//! ```
//! use webfetch::{ArgsSchema, FetchArgs, SavedPage, Settings, WebFetchTool};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut args = FetchArgs::parse(
//!     &serde_json::json!({ "url": "https://example.com/post" }),
//!     ArgsSchema::Extended,
//! ).unwrap();
//! args.page = Some(SavedPage {
//!     body: b"<title>Post</title><main><p>Hello.</p></main>".to_vec(),
//!     content_type: Some("text/html; charset=utf-8".to_owned()),
//! });
//! let tool = WebFetchTool::new(Settings::default());
//! let json = tool.fetch(&args, usize::MAX).await.unwrap().json;
//! assert!(json.starts_with(r#"{"requested_url":"https://example.com/post","#));
//! assert!(json.contains(r#""title":"Post""#));
//! # }
//! ```
//!
//! [`WebFetchTool::fetch`]: crate::tool::WebFetchTool::fetch

use crate::args::FetchArgs;
use crate::canonical_url::CanonicalUrl;
use crate::config::Settings;
use crate::content::media_type;
use crate::content::pdf::worker::PdfWorker;
use crate::error::FetchError;
use crate::output::{self, BuildOptions, Built, ResponseMeta};
use crate::page::{DecodedPage, Reading};
use crate::tokens::TokenCounter;
use crate::vocabulary::Format;
use crate::vocabulary::{RenderingMethod, Timestamp};

/// The byte cap of a saved page served with `content_type`: `max_download_bytes`,
/// or for a PDF with PDF reading enabled `max_pdf_bytes`, as over HTTP.
/// A reader of the file reads one byte more, to tell a page over the cap.
pub fn body_cap(settings: &Settings, content_type: Option<&str>) -> u64 {
    match content_type {
        Some(value)
            if settings.content.formats.contains(Format::Pdf) && media_type::names_pdf(value) =>
        {
            settings.content.max_pdf_bytes
        }
        _ => settings.max_download_bytes,
    }
}

/// The response for the saved page `args.page` as if fetched over HTTP from
/// `args.url`, its JSON at most `effective_max_bytes` long, or the error envelope
/// the pipeline would give.
///
/// `args.url` is the page's URL: echoed as `requested_url`, canonical as
/// `final_url`, and the base of relative links. `max_chunk_tokens` and
/// `extraction` default from `settings` as in a fetch; `no_cache` and
/// `force_browser` mean nothing here and are ignored. `fetched_at` is now. A PDF
/// is read in `pdf_worker` when there is one, as in a fetch.
pub(crate) fn respond(
    settings: &Settings,
    args: &FetchArgs,
    effective_max_bytes: usize,
    counter: &dyn TokenCounter,
    pdf_worker: Option<&PdfWorker>,
) -> Result<Built, FetchError> {
    let Some(page) = &args.page else {
        return Err(FetchError::internal("no saved page to read"));
    };
    let url = CanonicalUrl::parse(&args.url)?;
    let size = u64::try_from(page.body.len()).unwrap_or(u64::MAX);
    let formats = settings.content.formats;
    let content_type = page.content_type.as_deref();
    let cap = body_cap(settings, content_type);
    if size > cap {
        return Err(FetchError::response_too_large(size, cap));
    }
    let kind = media_type::select(content_type, &page.body, formats)?;
    let header_charset = content_type.and_then(media_type::charset_param);
    let reading = Reading {
        mode: args.extraction_mode(settings),
        content: &settings.content,
        pdf_worker,
    };
    let read = DecodedPage::read(
        &page.body,
        kind,
        header_charset.as_deref(),
        url.as_url(),
        &reading,
    )?;
    let meta = ResponseMeta {
        requested_url: args.url.clone(),
        final_url: url.as_str().to_owned(),
        fetched_at: Timestamp::now(),
        rendering_method: RenderingMethod::Http,
        notes: read.notes,
    };
    let options = BuildOptions {
        max_chunk_tokens: args.chunk_tokens(settings),
        start_chunk: args.start_chunk,
        effective_max_bytes,
    };
    output::build(&read.document, meta, options, counter)
}
