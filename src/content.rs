//! Content handling after the fetch: media type and sniffing, charset decoding (SRD 3.4.2),
//! and the extension formats (PDF, publisher Markdown, JSON, feeds).

pub(crate) mod charset;
pub(crate) mod describe;
pub(crate) mod feed;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod media_type;
pub(crate) mod pdf;

use crate::vocabulary::ExtractedDocument;

/// The most Markdown one page renders to, in bytes (a reader may stop
/// rendering here itself): what is chunked, cached and shared with a fleet stays
/// bounded whatever the body asks for. 8 MiB is about two million tokens, more
/// than any model reads through with `start_chunk`, and more than the default
/// `max_download_bytes`; chunking it peaks near 160 MiB.
pub(crate) const MAX_RENDERED_BYTES: usize = 8 << 20;

/// What a reader whose output can outgrow its input (JSON, a feed) rendered:
/// such a reader stops at the page's size cap itself ([`MAX_RENDERED_BYTES`])
/// and says so, for the page to note `rendered_size_limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// The Markdown rendered, within the cap.
    pub(crate) document: ExtractedDocument,
    /// The reader stopped at the cap: more was left out.
    pub(crate) cut: bool,
}
