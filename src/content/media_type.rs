//! Content-Type selection and sniffing (FR-WF-10f, CT-01, 10g, 10h, 10h1, ERR-CT-01).
//!
//! Pure functions over the header value and the body bytes: which pipeline a
//! response goes to (HTML or plain text), or the `unsupported_content_type` error
//! with `details.content_type` exactly as FR-WF-ERR-CT-01 says.
//!
//! Extension: the [`Formats`] enabled widen what is accepted (PDF,
//! publisher Markdown, JSON, RSS and Atom feeds). With none enabled, every answer
//! is the SRD's, byte for byte.

use super::feed;
use crate::error::FetchError;
use crate::vocabulary::{Format, Formats};

/// Bytes examined by sniffing, after the BOM and leading whitespace (FR-WF-10h,
/// SRD-READINGS 9).
pub(crate) const SNIFF_LEN: usize = 512;

/// The pipeline a supported response goes to (FR-WF-10f).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum MediaKind {
    /// `text/html` or `application/xhtml+xml`: HTML extraction.
    Html,
    /// `text/plain`: pass-through with minimal normalization.
    Plain,
    /// Extension: `text/markdown`, the publisher's own Markdown.
    Markdown,
    /// Extension: `application/json` or a `+json` type.
    Json,
    /// Extension: an RSS 2.0 or Atom feed.
    Feed,
    /// Extension: a PDF.
    Pdf,
}

impl MediaKind {
    /// Whether this is one of the SRD's kinds (FR-WF-10f), which the browser
    /// renders; the extension kinds are read from the HTTP response, never by
    /// Chromium.
    pub(crate) fn is_srd(self) -> bool {
        matches!(self, MediaKind::Html | MediaKind::Plain)
    }
}

/// The `Content-Type` of a response. With several fields the last one wins, as in
/// the Fetch standard's header-list extraction.
pub(crate) fn last_content_type(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::CONTENT_TYPE)
        .iter()
        .next_back()
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// Selects the pipeline for a response.
///
/// With a `Content-Type`, only its media type counts (FR-WF-CT-01: parameters
/// ignored, trimmed, case-insensitive); anything unsupported is an error carrying
/// the raw header value. Without one (or with a blank one, which says nothing),
/// the body is sniffed (FR-WF-10h) and a binary is `sniffed:<type>` or `missing`.
///
/// `formats` accepts more: see [`extension_kind`]; a sniffed `%PDF-`
/// is a PDF when PDF is enabled. [`Formats::NONE`] is FR-WF-10f..10h exactly.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn select(
    content_type: Option<&str>,
    body: &[u8],
    formats: Formats,
) -> Result<MediaKind, FetchError> {
    match content_type.filter(|value| !value.trim().is_empty()) {
        Some(value) => match media_type(value).as_str() {
            "text/html" | "application/xhtml+xml" => Ok(MediaKind::Html),
            "text/plain" => Ok(MediaKind::Plain),
            other => extension_kind(other, body, formats)
                .ok_or_else(|| FetchError::unsupported_content_type(value)),
        },
        None => match sniff(body) {
            Sniffed::Html => Ok(MediaKind::Html),
            Sniffed::Plain => Ok(MediaKind::Plain),
            Sniffed::Binary("pdf") if formats.contains(Format::Pdf) => Ok(MediaKind::Pdf),
            Sniffed::Binary(kind) => Err(FetchError::unsupported_content_type(&format!(
                "sniffed:{kind}"
            ))),
            Sniffed::Nul => Err(FetchError::unsupported_content_type("missing")),
        },
    }
}

/// The extension kind of a lowercase media type the SRD does not support, when
/// its format is in `formats`:
///
/// | media type | kind | format |
/// | --- | --- | --- |
/// | `application/pdf`, `application/x-pdf` | PDF | `pdf` |
/// | `application/octet-stream`, `binary/octet-stream` whose body starts `%PDF-` | PDF | `pdf` |
/// | `text/markdown`, `text/x-markdown` | Markdown | `markdown` |
/// | `application/json`, `text/json`, any `+json` | JSON | `json` |
/// | `application/rss+xml`, `application/atom+xml` | feed | `feed` |
/// | `application/xml`, `text/xml` whose root element is `rss` or `feed` | feed | `feed` |
///
/// Anything else (an XML document that is not a feed, say) stays unsupported.
pub(crate) fn extension_kind(media_type: &str, body: &[u8], formats: Formats) -> Option<MediaKind> {
    let (kind, format) = match media_type {
        "application/pdf" | "application/x-pdf" => (MediaKind::Pdf, Format::Pdf),
        "application/octet-stream" | "binary/octet-stream"
            if sniff(body) == Sniffed::Binary("pdf") =>
        {
            (MediaKind::Pdf, Format::Pdf)
        }
        "text/markdown" | "text/x-markdown" => (MediaKind::Markdown, Format::Markdown),
        "application/json" | "text/json" => (MediaKind::Json, Format::Json),
        json if json.ends_with("+json") => (MediaKind::Json, Format::Json),
        "application/rss+xml" | "application/atom+xml" => (MediaKind::Feed, Format::Feed),
        "application/xml" | "text/xml" if feed::is_feed(body) => (MediaKind::Feed, Format::Feed),
        _ => return None,
    };
    formats.contains(format).then_some(kind)
}

/// Whether a `Content-Type` value names a PDF (such a response gets the
/// PDF size cap, `max_pdf_bytes`).
pub(crate) fn names_pdf(content_type: &str) -> bool {
    matches!(
        media_type(content_type).as_str(),
        "application/pdf" | "application/x-pdf"
    )
}

/// The lowercase `type/subtype` of a Content-Type value (FR-WF-CT-01).
pub(crate) fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type value, unquoted and trimmed, for the
/// charset decoder (FR-WF-10i, CHARSET-02). `None` when absent or empty.
pub(crate) fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value)
            .trim();
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// The outcome of FR-WF-10h sniffing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// Begins with `<!DOCTYPE` or `<html`.
    Html,
    /// Anything else without a NUL or a signature.
    Plain,
    /// A binary signature of the FR-WF-10h table: `pdf`, `png`, `gif`, `jpeg`,
    /// `zip` or `mp4`.
    Binary(&'static str),
    /// A NUL byte and no known signature.
    Nul,
}

/// FR-WF-10h: strip a UTF-8 BOM and leading ASCII whitespace, look at the next 512
/// bytes. Signatures are checked before the NUL rule so an MP4 (whose box size
/// starts with NULs) is named (SRD-READINGS 9).
pub(crate) fn sniff(body: &[u8]) -> Sniffed {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = body
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .unwrap_or(body.len());
    let head = &body[start..];
    let head = &head[..head.len().min(SNIFF_LEN)];
    if let Some(kind) = signature(head) {
        return Sniffed::Binary(kind);
    }
    if head.contains(&0) {
        return Sniffed::Nul;
    }
    if starts_with_ignore_case(head, b"<!doctype") || starts_with_ignore_case(head, b"<html") {
        Sniffed::Html
    } else {
        Sniffed::Plain
    }
}

/// The FR-WF-10h magic table, with FR-WF-10h1 for MP4.
fn signature(head: &[u8]) -> Option<&'static str> {
    const TABLE: [(&[u8], &str); 6] = [
        (b"%PDF-", "pdf"),
        (b"\x89PNG", "png"),
        (b"GIF87a", "gif"),
        (b"GIF89a", "gif"),
        (b"\xFF\xD8\xFF", "jpeg"),
        (b"PK\x03\x04", "zip"),
    ];
    if let Some((_, kind)) = TABLE.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Some(kind);
    }
    let brand = head.get(8..12)?;
    let is_mp4 = head.get(4..8) == Some(b"ftyp".as_slice())
        && [b"isom", b"iso2", b"mp41", b"mp42", b"avc1"]
            .iter()
            .any(|known| brand == known.as_slice());
    is_mp4.then_some("mp4")
}

fn starts_with_ignore_case(haystack: &[u8], prefix: &[u8]) -> bool {
    haystack
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn unsupported(content_type: Option<&str>, body: &[u8]) -> String {
        let error = select(content_type, body, Formats::NONE).unwrap_err();
        assert_eq!(error.code, ErrorCode::UnsupportedContentType);
        error.details_json()["content_type"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn header_media_types() {
        assert_eq!(
            select(Some("text/html"), b"", Formats::NONE).unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(
                Some(" Application/XHTML+XML ; charset=utf-8"),
                b"",
                Formats::NONE
            )
            .unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(Some("TEXT/PLAIN;format=flowed"), b"\0\0", Formats::NONE).unwrap(),
            MediaKind::Plain
        );
        assert_eq!(
            unsupported(Some("application/json; charset=utf-8"), b"{}"),
            "application/json; charset=utf-8"
        );
        assert_eq!(unsupported(Some("text/htmlx"), b""), "text/htmlx");
        assert_eq!(
            unsupported(Some("application/pdf"), b"<html>"),
            "application/pdf"
        );
    }

    #[test]
    fn blank_header_is_sniffed() {
        assert_eq!(
            select(Some("  "), b"<html>", Formats::NONE).unwrap(),
            MediaKind::Html
        );
    }

    #[test]
    fn t_wf_ext_10_bom_and_whitespace_stripped_before_sniffing() {
        assert_eq!(
            select(None, b"\xEF\xBB\xBF<!DOCTYPE html><p>x", Formats::NONE).unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(None, b"\xEF\xBB\xBF \r\n\t<HTML lang=en>", Formats::NONE).unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(None, b"  \n<!doctype html>", Formats::NONE).unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(None, b"plain words <html>", Formats::NONE).unwrap(),
            MediaKind::Plain
        );
        assert_eq!(select(None, b"", Formats::NONE).unwrap(), MediaKind::Plain);
        assert_eq!(unsupported(None, b"\xEF\xBB\xBF%PDF-1.7"), "sniffed:pdf");
    }

    #[test]
    fn every_magic_signature() {
        let mp4 = |brand: &[u8]| {
            [
                b"\x00\x00\x00\x18ftyp".as_slice(),
                brand,
                b"\x00\x00\x00\x00",
            ]
            .concat()
        };
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"%PDF-1.4".to_vec(), "sniffed:pdf"),
            (b"\x89PNG\r\n\x1a\n".to_vec(), "sniffed:png"),
            (b"GIF87a..".to_vec(), "sniffed:gif"),
            (b"GIF89a..".to_vec(), "sniffed:gif"),
            (b"\xFF\xD8\xFF\xE0".to_vec(), "sniffed:jpeg"),
            (b"PK\x03\x04rest".to_vec(), "sniffed:zip"),
            (mp4(b"isom"), "sniffed:mp4"),
            (mp4(b"iso2"), "sniffed:mp4"),
            (mp4(b"mp41"), "sniffed:mp4"),
            (mp4(b"mp42"), "sniffed:mp4"),
            (mp4(b"avc1"), "sniffed:mp4"),
            (mp4(b"qt  "), "missing"),
            (b"text\0more".to_vec(), "missing"),
        ];
        for (body, expected) in cases {
            assert_eq!(unsupported(None, &body), expected, "{body:?}");
        }
        assert_eq!(
            select(None, b"%PDF", Formats::NONE).unwrap(),
            MediaKind::Plain
        );
        assert_eq!(
            select(None, b"GIF88a", Formats::NONE).unwrap(),
            MediaKind::Plain
        );
    }

    #[test]
    fn sniffing_looks_at_512_bytes_only() {
        let mut late_nul = vec![b'a'; SNIFF_LEN];
        late_nul.push(0);
        assert_eq!(
            select(None, &late_nul, Formats::NONE).unwrap(),
            MediaKind::Plain
        );
        let mut early_nul = vec![b'a'; SNIFF_LEN - 1];
        early_nul.push(0);
        assert_eq!(unsupported(None, &early_nul), "missing");
        let mut padded = vec![b' '; 4096];
        padded.extend_from_slice(b"<html>");
        assert_eq!(
            select(None, &padded, Formats::NONE).unwrap(),
            MediaKind::Html
        );
    }

    #[test]
    fn extension_types_only_when_their_format_is_enabled() {
        let all = Formats::ALL;
        let cases: [(&str, &[u8], MediaKind, Format); 10] = [
            ("application/pdf", b"%PDF-1.7", MediaKind::Pdf, Format::Pdf),
            ("Application/X-PDF; q=1", b"", MediaKind::Pdf, Format::Pdf),
            (
                "application/octet-stream",
                b"%PDF-1.4",
                MediaKind::Pdf,
                Format::Pdf,
            ),
            (
                "text/markdown; charset=utf-8",
                b"# T",
                MediaKind::Markdown,
                Format::Markdown,
            ),
            ("application/json", b"{}", MediaKind::Json, Format::Json),
            ("application/ld+json", b"{}", MediaKind::Json, Format::Json),
            (
                "application/rss+xml",
                b"<rss/>",
                MediaKind::Feed,
                Format::Feed,
            ),
            (
                "application/atom+xml",
                b"<feed/>",
                MediaKind::Feed,
                Format::Feed,
            ),
            (
                "text/xml",
                b"<?xml version='1.0'?>\n<rss version='2.0'>",
                MediaKind::Feed,
                Format::Feed,
            ),
            (
                "application/xml",
                b"<!-- c --><feed xmlns='http://www.w3.org/2005/Atom'>",
                MediaKind::Feed,
                Format::Feed,
            ),
        ];
        for (content_type, body, kind, format) in cases {
            assert_eq!(
                select(Some(content_type), body, all).unwrap(),
                kind,
                "{content_type}"
            );
            let only = Formats::NONE.with(format);
            assert_eq!(
                select(Some(content_type), body, only).unwrap(),
                kind,
                "{content_type}"
            );
            // Every other format enabled, this one not: the SRD's error, byte for byte.
            let others: Formats = Format::ALL.into_iter().filter(|f| *f != format).collect();
            for formats in [Formats::NONE, others] {
                assert_eq!(
                    unsupported_with(Some(content_type), body, formats),
                    content_type
                );
            }
        }
        assert_eq!(select(None, b"%PDF-1.7", all).unwrap(), MediaKind::Pdf);
        assert_eq!(
            unsupported_with(None, b"%PDF-1.7", Formats::NONE.with(Format::Json)),
            "sniffed:pdf"
        );
        assert_eq!(
            unsupported_with(Some("application/xml"), b"<html/>", all),
            "application/xml"
        );
        assert_eq!(
            unsupported_with(Some("application/octet-stream"), b"PK\x03\x04", all),
            "application/octet-stream"
        );
        assert_eq!(
            unsupported_with(Some("image/png"), b"\x89PNG", all),
            "image/png"
        );
        assert_eq!(unsupported_with(None, b"\x89PNG", all), "sniffed:png");
        assert!(names_pdf("application/PDF; x=y") && !names_pdf("text/html"));
    }

    fn unsupported_with(content_type: Option<&str>, body: &[u8], formats: Formats) -> String {
        let error = select(content_type, body, formats).unwrap_err();
        error.details_json()["content_type"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn charset_parameter() {
        assert_eq!(
            charset_param("text/html; charset=ISO-8859-1").as_deref(),
            Some("ISO-8859-1")
        );
        assert_eq!(
            charset_param("text/html;CHARSET=\"utf-8\" ").as_deref(),
            Some("utf-8")
        );
        assert_eq!(
            charset_param("text/html; format=x; charset = windows-1252").as_deref(),
            Some("windows-1252")
        );
        assert_eq!(charset_param("text/html"), None);
        assert_eq!(charset_param("text/html; charset="), None);
        assert_eq!(charset_param("text/html; charset=\"\""), None);
    }
}
