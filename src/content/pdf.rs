//! PDF documents as Markdown: the text layer, in reading order, with
//! page furniture dropped, words joined across line ends, ligatures expanded,
//! headings where the fonts show them, bullets as list items, tables set in
//! aligned columns as pipe tables, and where each page begins kept as
//! chunk-boundary hints ([`ExtractedDocument::page_starts`]).
//!
//! lopdf (pure Rust) parses the file: objects, cross-references (rebuilt when
//! damaged), decryption with the empty password, `ToUnicode` CMaps; [`load`]
//! bounds what it builds and reads object streams itself. Everything after is
//! ours, as pure functions over positioned glyphs: [`interp`] (content streams
//! to glyphs), [`fonts`] (codes to text and advances), [`lines`], [`furniture`],
//! [`table`], [`blocks`], [`hyphens`] and [`markdown`]. We measured the
//! pure-Rust extractors on the corpus first; none reads two-column pages in
//! order, joins hyphenated words and drops running heads, so the layout is ours.
//!
//! Limits: the body is capped before it gets here (`max_pdf_bytes`), at most
//! `max_pdf_pages` pages are read (the rest is left out, noted
//! `pdf_page_limit`), the call's read budget is checked at every object loaded
//! and every content operation, a page's glyphs and operations are capped
//! ([`interp`]), and the whole document draws from one [`quota::Quota`]
//! (decompressed bytes, interpreted bytes, the weight of what is loaded): a file
//! that asks for more is `pdf_resource_limit`, or has the rest of its content
//! left unread. A panic in the parser on a hostile file is caught and reported
//! as `pdf_malformed`, never a crash. The front doors read PDFs in a worker
//! process ([`worker`]) with its memory and CPU capped.

mod blocks;
mod fonts;
mod furniture;
mod hyphens;
mod interp;
mod lines;
mod load;
mod markdown;
mod quota;
mod table;
pub(crate) mod worker;

use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::{Document, Object};

use self::load::LoadFailure;
use self::quota::Quota;
use crate::budget;
use crate::error::{FetchError, UnreadableReason};
use crate::vocabulary::ExtractedDocument;

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
/// (not readable as a PDF), `pdf_resource_limit` (it asks for more than one
/// document may take); `timeout` (phase `response`) past the deadline.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn read(bytes: &[u8], limits: &Limits) -> Result<PdfRead, FetchError> {
    match catch_unwind(AssertUnwindSafe(|| read_unguarded(bytes, limits))) {
        Ok(result) => result,
        Err(_) => Err(malformed("the parser failed on it")),
    }
}

fn read_unguarded(bytes: &[u8], limits: &Limits) -> Result<PdfRead, FetchError> {
    let quota = Quota::new(bytes.len());
    let declared_in_file = memchr::memmem::find(bytes, b"/Encrypt").is_some();
    let doc = match load::load(bytes, &quota) {
        Ok(doc) => doc,
        Err(LoadFailure::Encrypted) => return Err(encrypted()),
        Err(LoadFailure::Interrupted) => {
            budget::checkpoint()?;
            return Err(FetchError::internal("the PDF reader stopped early"));
        }
        Err(LoadFailure::OverBudget(what)) => return Err(resource_limit(what)),
        // A file that declares encryption lopdf can not undo (a security handler
        // it does not know, damaged keys) is still an encrypted file to the reader.
        Err(LoadFailure::Malformed(_)) if declared_in_file => return Err(encrypted()),
        Err(LoadFailure::Malformed(error)) => return Err(malformed(&error)),
    };
    // Decrypted with the empty password, or not: a file that declared encryption
    // and reads as nothing was not decrypted right.
    let declared = doc.is_encrypted() || doc.was_encrypted() || declared_in_file;
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
    let mut shared = interp::Shared::new(&doc, &quota);
    for &page in pages.iter().take(max_pages) {
        budget::checkpoint()?;
        let glyphs = interp::page_glyphs(&mut shared, page);
        page_lines.push(lines::lines(&glyphs));
    }
    budget::checkpoint()?;
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

/// `pdf_resource_limit`: the document asks for more `what` than the reader
/// allows one document.
fn resource_limit(what: &str) -> FetchError {
    FetchError::unreadable(
        UnreadableReason::PdfResourceLimit,
        &format!("the PDF asks for more than the reader allows one document ({what})"),
    )
}

fn malformed(detail: &str) -> FetchError {
    let detail: String = detail.chars().take(200).collect();
    FetchError::unreadable(
        UnreadableReason::PdfMalformed,
        &format!("the PDF can not be read ({detail})"),
    )
}
