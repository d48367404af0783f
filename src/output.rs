//! The response, its canonical JSON and output fitting (SRD 3.1, FR-WF-OUT-01).
//!
//! [`build`] is the whole tail of the pipeline as one pure function: the extracted
//! document and the fetch's metadata in, the exact bytes the tool returns out.
//!
//! * **Canonical JSON** (FR-WF-OUT-01a): compact, UTF-8, fields in the order of the
//!   SRD (the declaration order of [`FetchResponse`] and [`FetchChunk`]), optional
//!   fields omitted, never `null`; notes in pipeline-stage order
//!   (FR-WF-NOTES-ORDER-01, kept by [`Notes`]); `fetched_at` to the second with `Z`
//!   ([`Timestamp`], FR-WF-RESP-TIME-01).
//! * **Fitting** (FR-WF-OUT-01, 02, 03): if the JSON is larger than
//!   `effective_max_bytes`, trailing chunks are dropped; if even the first chunk alone
//!   does not fit, its text is cut at a character boundary and its `token_count`
//!   recounted, its `heading` untouched. The lengths come from one serialisation of
//!   each chunk and a single scan of the first chunk's JSON-escaped text, never a
//!   serialisation per candidate. When not even an empty first chunk fits, the
//!   result is the `internal` / `tool_output_limit` error (FR-WF-OUT-02a).
//! * **Continuation** (extension, [`BuildOptions::start_chunk`]): a response may start at chunk
//!   `start_chunk` of the document's deterministic chunking, and when fitting cut
//!   it, the caller learns the first chunk it did not get. The field that says so,
//!   `next_start_chunk`, is written only for a caller that asked for a window, so
//!   every SRD response stays byte-identical.

use std::io;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::chunk::FetchChunk;
use crate::chunk::chunk;
use crate::error::FetchError;
use crate::notes::{Note, Notes};
use crate::tokens::TokenCounter;
use crate::vocabulary::{ExtractedDocument, PageType, RenderingMethod, Timestamp};

/// Why a response is incomplete (FR-WF-TRUNC-REASON-01), highest precedence first
/// (FR-WF-TRUNC-REASON-02).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TruncationReason {
    /// Output enforcement dropped or cut chunks (FR-WF-OUT-01).
    ToolOutputLimit,
    /// The rendered DOM exceeded `max_rendered_dom_bytes` (FR-WF-11d).
    BrowserDomTruncated,
}

impl TruncationReason {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            TruncationReason::ToolOutputLimit => "tool_output_limit",
            TruncationReason::BrowserDomTruncated => "browser_dom_truncated",
        }
    }

    /// The reason the notes imply, by precedence (FR-WF-TRUNC-01, TRUNC-REASON-02):
    /// each truncating condition adds its note, so the notes are the one record of
    /// what happened and `truncated` can never disagree with them.
    pub fn from_notes(notes: &Notes) -> Option<TruncationReason> {
        if notes.contains(Note::ToolOutputLimit) {
            Some(TruncationReason::ToolOutputLimit)
        } else if notes.contains(Note::BrowserDomTruncated) {
            Some(TruncationReason::BrowserDomTruncated)
        } else {
            None
        }
    }
}

/// What the pipeline knows about a fetch besides the document (FR-WF-03).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct ResponseMeta {
    /// `args.url` exactly as the caller gave it (FR-WF-RESP-URL-01).
    pub requested_url: String,
    /// The canonical URL of the last fetched URL, fragment removed.
    pub final_url: String,
    /// When the content became available; from the cache entry on a hit.
    pub fetched_at: Timestamp,
    /// How the content was produced (FR-WF-RESP-METHOD-01).
    pub rendering_method: RenderingMethod,
    /// The notes of the earlier stages. A DOM truncated by the browser is recorded
    /// as [`Note::BrowserDomTruncated`], which also makes the response `truncated`.
    pub notes: Notes,
}

/// The success payload of `web_fetch` (FR-WF-03). Fields are declared, and so
/// serialised, in the order of FR-WF-OUT-01a. A host reads the tool's JSON back
/// with `serde_json::from_str::<FetchResponse>`; its JSON Schema (`schemars`)
/// is the MCP tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct FetchResponse {
    /// `args.url` as given.
    pub requested_url: String,
    /// Canonical final URL.
    pub final_url: String,
    /// Second-precision UTC fetch time.
    pub fetched_at: Timestamp,
    /// Page title, omitted when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `<html lang>`, omitted when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The chunks in document order.
    pub chunks: Vec<FetchChunk>,
    /// `http` or `browser`.
    pub rendering_method: RenderingMethod,
    /// Whether the content is incomplete for any reason (FR-WF-TRUNC-01).
    pub truncated: bool,
    /// Why, omitted when not truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation_reason: Option<TruncationReason>,
    /// Condition tokens in canonical order; always present (FR-WF-03d).
    pub notes: Notes,
    /// Extension: the kind of page auto extraction found (`article`,
    /// `forum`, `product`, `listing`, `documentation`, `service`); written only
    /// for a document extracted in auto mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_type: Option<PageType>,
    /// Extension: the first chunk this response left out because of the output
    /// budget, for a caller that asked for a window (`start_chunk`); never
    /// written otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_chunk: Option<usize>,
}

impl FetchResponse {
    /// Assembles a response; `truncated` and `truncation_reason` follow the notes.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new(
        doc: &ExtractedDocument,
        meta: ResponseMeta,
        chunks: Vec<FetchChunk>,
    ) -> Self {
        let mut response = FetchResponse {
            requested_url: meta.requested_url,
            final_url: meta.final_url,
            fetched_at: meta.fetched_at,
            title: doc.title.clone(),
            language: doc.language.clone(),
            chunks,
            rendering_method: meta.rendering_method,
            truncated: false,
            truncation_reason: None,
            notes: meta.notes,
            page_type: doc.page_type,
            next_start_chunk: None,
        };
        response.sync_truncation();
        response
    }

    /// Adds a note and updates `truncated` / `truncation_reason` to match.
    pub fn add_note(&mut self, note: Note) {
        self.notes.add(note);
        self.sync_truncation();
    }

    fn sync_truncation(&mut self) {
        self.truncation_reason = TruncationReason::from_notes(&self.notes);
        self.truncated = self.truncation_reason.is_some();
    }

    /// The canonical compact JSON (FR-WF-OUT-01a).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a FetchResponse always serialises")
    }
}

/// A response as the tool built it: its JSON and where reading may go on
/// (extension, `start_chunk`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Built {
    /// The exact JSON the tool answers with.
    pub json: String,
    /// The first chunk the output budget left out, when there is one: call again
    /// with `start_chunk` set to it to read on.
    pub next_start_chunk: Option<usize>,
    /// How many chunks the whole document has.
    pub total_chunks: usize,
}

/// The request's chunking and output parameters of [`build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct BuildOptions {
    /// The token budget of one chunk (FR-WF-15).
    pub max_chunk_tokens: usize,
    /// Extension (`start_chunk`): the window's first chunk of the document's
    /// chunking. `None` is the SRD's response, byte for byte.
    pub start_chunk: Option<usize>,
    /// The output budget (FR-WF-03a, OUT-01).
    pub effective_max_bytes: usize,
}

/// Chunks the document and returns the exact JSON the tool answers with, at most
/// `effective_max_bytes` long, or the `tool_output_limit` error (FR-WF-03a, OUT-01,
/// OUT-02, 15e).
///
/// Extension: with `start_chunk`, the response holds the document's chunks from
/// that one on (chunk boundaries do not depend on the window, so successive windows
/// read a document exactly once), and its JSON also carries `next_start_chunk` when
/// fitting cut the window. A start at or past the last chunk is `bad_args` with
/// `details.chunk_count`.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn build(
    doc: &ExtractedDocument,
    meta: ResponseMeta,
    options: BuildOptions,
    counter: &dyn TokenCounter,
) -> Result<Built, FetchError> {
    let BuildOptions {
        max_chunk_tokens,
        start_chunk,
        effective_max_bytes,
    } = options;
    // A PDF's page starts are preferred cuts; any other document has
    // none, and chunks exactly as the SRD does.
    let mut chunks: Vec<FetchChunk> =
        chunk(&doc.markdown, &doc.page_starts, max_chunk_tokens, counter)
            .into_iter()
            .map(|sourced| sourced.chunk)
            .collect();
    let total_chunks = chunks.len();
    let start = start_chunk.unwrap_or(0);
    if start_chunk.is_some() && start >= total_chunks {
        return Err(FetchError::start_chunk_past_end(start, total_chunks));
    }
    chunks.drain(..start);
    let window = Window {
        start,
        total: total_chunks,
        announce: start_chunk.is_some(),
    };
    let (json, next_start_chunk) = fit_window(
        FetchResponse::new(doc, meta, chunks),
        window,
        effective_max_bytes,
        counter,
    )?;
    Ok(Built {
        json,
        next_start_chunk,
        total_chunks,
    })
}

/// `built`, a response to a request for `start_chunk` on, fitted again to
/// `effective_max_bytes`, smaller than it was built for: the same leading
/// chunks, fewer of them, cut as FR-WF-OUT-01 cuts (extension: the items of a
/// batch share one output budget). Its `next_start_chunk` is where the
/// smaller response stops, or where `built` already stopped.
pub(crate) fn refit(
    built: &Built,
    start_chunk: usize,
    effective_max_bytes: usize,
    counter: &dyn TokenCounter,
) -> Result<Built, FetchError> {
    let response: FetchResponse = serde_json::from_str(&built.json)
        .map_err(|error| FetchError::internal(format!("a response did not read back: {error}")))?;
    let window = Window {
        start: start_chunk,
        total: built.total_chunks,
        announce: response.next_start_chunk.is_some(),
    };
    let (json, next) = fit_window(response, window, effective_max_bytes, counter)?;
    Ok(Built {
        json,
        next_start_chunk: next.or(built.next_start_chunk),
        total_chunks: built.total_chunks,
    })
}

/// Where a response's chunks sit in the document's chunking.
#[derive(Debug, Clone, Copy)]
struct Window {
    /// The document index of the response's first chunk.
    start: usize,
    /// The document's chunk count.
    total: usize,
    /// Write `next_start_chunk` into the JSON when the window is cut.
    announce: bool,
}

/// Enforces `effective_max_bytes` on a window of a response with the algorithm of
/// FR-WF-OUT-01 and returns its JSON and the first chunk left out, if any, or the
/// `tool_output_limit` error (FR-WF-OUT-02, 02a).
fn fit_window(
    mut response: FetchResponse,
    window: Window,
    effective_max_bytes: usize,
    counter: &dyn TokenCounter,
) -> Result<(String, Option<usize>), FetchError> {
    let budget = effective_max_bytes;
    let json = response.to_json();
    if json.len() <= budget {
        return Ok((json, None));
    }
    let too_small = || FetchError::tool_output_limit(budget as u64);
    response.add_note(Note::ToolOutputLimit);
    if window.announce {
        // The final value is at most `total`, so never longer: the space reserved
        // here is enough.
        response.next_start_chunk = Some(window.total);
    }
    let mut chunks = std::mem::take(&mut response.chunks);
    // Step 3: keep the longest run of leading chunks that fits.
    let mut total = json_len(&response);
    let mut keep = 0;
    for (i, chunk) in chunks.iter().enumerate() {
        let added = json_len(chunk) + usize::from(i > 0);
        if total + added > budget {
            break;
        }
        total += added;
        keep += 1;
    }
    if keep > 0 {
        chunks.truncate(keep);
        response.chunks = chunks;
        let next = window.start + keep;
        if window.announce {
            response.next_start_chunk = Some(next);
        }
        return Ok((response.to_json(), Some(next)));
    }
    // Step 4: not even the first chunk fits whole; cut its text.
    let Some(first) = chunks.into_iter().next() else {
        return Err(too_small());
    };
    response.chunks = vec![FetchChunk {
        heading: first.heading,
        text: String::new(),
        token_count: 0,
    }];
    // The first chunk is cut: what follows it is the next chunk, if there is one.
    let next = Some(window.start + 1).filter(|next| *next < window.total);
    if window.announce {
        response.next_start_chunk = next;
    }
    let fixed = json_len(&response);
    if fixed > budget {
        return Err(too_small());
    }
    let mut room = budget - fixed;
    loop {
        let (cut, token_count) = cut_point(&first.text, room, counter);
        response.chunks[0] = FetchChunk {
            heading: response.chunks[0].heading.clone(),
            text: first.text[..cut].to_owned(),
            token_count,
        };
        let json = response.to_json();
        if json.len() <= budget {
            return Ok((json, next));
        }
        // Unreachable while `escaped_len` matches serde_json; kept so the byte
        // budget holds even if it ever does not.
        match room.checked_sub(json.len() - budget) {
            Some(smaller) if cut > 0 => room = smaller,
            _ => return Err(too_small()),
        }
    }
}

/// The longest prefix of `text` (at a character boundary) whose JSON-escaped length
/// plus the extra digits of its token count beyond one fits `room` bytes, and that
/// prefix's token count (FR-WF-OUT-01 steps 4 and 5).
fn cut_point(text: &str, room: usize, counter: &dyn TokenCounter) -> (usize, usize) {
    // Longest prefix by escaped length alone: one forward scan.
    let mut escaped = 0;
    let mut cut = text.len();
    for (i, c) in text.char_indices() {
        if escaped + escaped_len(c) > room {
            cut = i;
            break;
        }
        escaped += escaped_len(c);
    }
    // Then step back while the token count's digits do not fit; its extra digits
    // are at most a few bytes, so this takes a few steps at most.
    let mut chars = text[..cut].chars().rev();
    loop {
        let tokens = counter.count_str(&text[..cut]);
        if escaped + digits(tokens) - 1 <= room {
            return (cut, tokens);
        }
        match chars.next() {
            Some(c) => {
                cut -= c.len_utf8();
                escaped -= escaped_len(c);
            }
            None => return (0, 0),
        }
    }
}

/// The number of decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The bytes serde_json writes for `c` inside a string: two-character escapes for
/// `"`, `\` and the common controls, `\u00XX` for the other C0 controls, the UTF-8
/// bytes for everything else.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        '\0'..='\u{1f}' => 6,
        _ => c.len_utf8(),
    }
}

/// The length of a value's compact JSON, without building it.
fn json_len(value: &impl Serialize) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("serialising to a counter cannot fail");
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_len_matches_serde_json_for_every_ascii_and_some_others() {
        let samples = (0u32..0x80)
            .chain([0xa0, 0x2028, 0x2029, 0xfeff, 0x1f600, 0x10ffff])
            .filter_map(char::from_u32);
        for c in samples {
            let json = serde_json::to_string(&c.to_string()).unwrap();
            assert_eq!(escaped_len(c), json.len() - 2, "{c:?}");
        }
    }

    #[test]
    fn digits_of_counts() {
        assert_eq!(
            [0, 9, 10, 99, 100, 2048, usize::MAX].map(digits),
            [1, 1, 2, 2, 3, 4, 20]
        );
    }
}
