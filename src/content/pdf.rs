//! PDF documents as Markdown (issue 31): the text layer, in reading order, with
//! page furniture dropped, words joined across line ends, ligatures expanded,
//! headings where the fonts show them, bullets as list items, tables set in
//! aligned columns as pipe tables, and where each page begins kept as
//! chunk-boundary hints ([`ExtractedDocument::page_starts`]).
//!
//! lopdf (pure Rust) parses the file: objects, cross-references (rebuilt when
//! damaged), decryption with the empty password, decompression bounded per stream,
//! `ToUnicode` CMaps. Everything after is ours, as pure functions over positioned
//! glyphs: [`interp`] (content streams to glyphs), [`fonts`] (codes to text and
//! advances), [`lines`], [`furniture`], [`table`], [`blocks`], [`hyphens`] and
//! [`markdown`]. We measured the pure-Rust extractors on the corpus first; none
//! reads two-column pages in order, joins hyphenated words and drops running
//! heads, so the layout is ours.
//!
//! Limits: the body is capped before it gets here (`max_pdf_bytes`), at most
//! `max_pdf_pages` pages are read (the rest is left out, noted
//! `pdf_page_limit`), every page checks the call's read budget, and a page's
//! glyphs and operations are capped ([`interp`]). A panic in the parser on a
//! hostile file is caught and reported as `pdf_malformed`, never a crash.

mod blocks;
mod fonts;
mod furniture;
mod hyphens;
mod interp;
mod lines;
mod markdown;
mod table;

use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::{Document, LoadOptions, Object};

use crate::budget;
use crate::error::{FetchError, UnreadableReason};
use crate::vocabulary::ExtractedDocument;

/// Bytes one stream may decompress to while the file is loaded (object and
/// cross-reference streams).
const MAX_LOAD_STREAM_BYTES: usize = 64 << 20;

/// What bounds one read.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Limits {
    /// Pages read, from the first.
    pub max_pages: u32,
}

/// A PDF read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct PdfRead {
    /// The Markdown, title from the document info or the first heading.
    pub document: ExtractedDocument,
    /// Pages past `max_pages` were left out.
    pub pages_left_out: bool,
    /// Pages in the file.
    pub page_count: usize,
}

/// Reads a PDF's text layer as Markdown.
///
/// Errors (`extraction_failed`, `details.reason`): `pdf_encrypted` (a password is
/// needed), `pdf_no_text_layer` (pages but no text: a scan), `pdf_malformed`
/// (not readable as a PDF); `timeout` (phase `response`) past the deadline.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn read(bytes: &[u8], limits: &Limits) -> Result<PdfRead, FetchError> {
    match catch_unwind(AssertUnwindSafe(|| read_unguarded(bytes, limits))) {
        Ok(result) => result,
        Err(_) => Err(malformed("the parser failed on it")),
    }
}

fn read_unguarded(bytes: &[u8], limits: &Limits) -> Result<PdfRead, FetchError> {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_LOAD_STREAM_BYTES),
        ..Default::default()
    };
    let doc = match Document::load_mem_with_options(bytes, options) {
        Ok(doc) => doc,
        Err(lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_))
        | Err(lopdf::Error::UnsupportedSecurityHandler(_)) => return Err(encrypted()),
        // A file that declares encryption lopdf can not undo (a security handler
        // it does not know, damaged keys) is still an encrypted file to the reader.
        Err(_) if memchr::memmem::find(bytes, b"/Encrypt").is_some() => return Err(encrypted()),
        Err(error) => return Err(malformed(&error.to_string())),
    };
    // Decrypted with the empty password, or not: a file that declared encryption
    // and reads as nothing was not decrypted right.
    let declared = doc.is_encrypted()
        || doc.was_encrypted()
        || memchr::memmem::find(bytes, b"/Encrypt").is_some();
    if doc.is_encrypted() {
        return Err(encrypted());
    }
    let pages: Vec<_> = doc.get_pages().into_values().collect();
    if pages.is_empty() {
        return Err(if declared {
            encrypted()
        } else {
            malformed("it has no pages")
        });
    }
    let max_pages = usize::try_from(limits.max_pages).unwrap_or(usize::MAX);
    let mut page_lines = Vec::new();
    for &page in pages.iter().take(max_pages) {
        budget::checkpoint()?;
        let glyphs = interp::page_glyphs(&doc, page);
        page_lines.push(lines::lines(&glyphs));
    }
    if page_lines.iter().all(Vec::is_empty) {
        if declared {
            return Err(encrypted());
        }
        return Err(FetchError::unreadable(
            UnreadableReason::PdfNoTextLayer,
            &format!("the PDF's {} page(s) have no text layer", pages.len()),
        ));
    }
    let markdown::Written {
        markdown,
        page_starts,
    } = markdown::markdown(&page_lines);
    let title = info_title(&doc).or_else(|| markdown::first_heading(&markdown));
    Ok(PdfRead {
        document: ExtractedDocument {
            markdown,
            title,
            language: None,
            page_type: None,
            page_starts,
        },
        pages_left_out: pages.len() > max_pages,
        page_count: pages.len(),
    })
}

/// The document information dictionary's `/Title`, unless blank or a
/// producer's placeholder (`untitled`).
fn info_title(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = match info {
        Object::Reference(id) => doc.get_dictionary(*id).ok()?,
        Object::Dictionary(dict) => dict,
        _ => return None,
    };
    let title = lopdf::decode_text_string(info.get(b"Title").ok()?).ok()?;
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let placeholder = title.is_empty()
        || title.eq_ignore_ascii_case("untitled")
        || title.eq_ignore_ascii_case("(anonymous)");
    (!placeholder).then_some(title)
}

fn encrypted() -> FetchError {
    FetchError::unreadable(UnreadableReason::PdfEncrypted, "the PDF is encrypted")
}

fn malformed(detail: &str) -> FetchError {
    let detail: String = detail.chars().take(200).collect();
    FetchError::unreadable(
        UnreadableReason::PdfMalformed,
        &format!("the PDF can not be read ({detail})"),
    )
}
