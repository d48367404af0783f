//! Content-Type selection and sniffing (FR-WF-10f, CT-01, 10g, 10h, 10h1, ERR-CT-01).
//!
//! Pure functions over the header value and the body bytes: which pipeline a
//! response goes to (HTML or plain text), or the `unsupported_content_type` error
//! with `details.content_type` exactly as FR-WF-ERR-CT-01 says.

use crate::error::FetchError;

/// Bytes examined by sniffing, after the BOM and leading whitespace (FR-WF-10h,
/// SRD-READINGS 9).
pub const SNIFF_LEN: usize = 512;

/// The pipeline a supported response goes to (FR-WF-10f).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// `text/html` or `application/xhtml+xml`: HTML extraction.
    Html,
    /// `text/plain`: pass-through with minimal normalization.
    Plain,
}

/// The `Content-Type` of a response. With several fields the last one wins, as in
/// the Fetch standard's header-list extraction.
pub fn last_content_type(headers: &http::HeaderMap) -> Option<String> {
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
pub fn select(content_type: Option<&str>, body: &[u8]) -> Result<MediaKind, FetchError> {
    match content_type.filter(|value| !value.trim().is_empty()) {
        Some(value) => match media_type(value).as_str() {
            "text/html" | "application/xhtml+xml" => Ok(MediaKind::Html),
            "text/plain" => Ok(MediaKind::Plain),
            _ => Err(FetchError::unsupported_content_type(value)),
        },
        None => match sniff(body) {
            Sniffed::Html => Ok(MediaKind::Html),
            Sniffed::Plain => Ok(MediaKind::Plain),
            Sniffed::Binary(kind) => Err(FetchError::unsupported_content_type(&format!(
                "sniffed:{kind}"
            ))),
            Sniffed::Nul => Err(FetchError::unsupported_content_type("missing")),
        },
    }
}

/// The lowercase `type/subtype` of a Content-Type value (FR-WF-CT-01).
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type value, unquoted and trimmed, for the
/// charset decoder (FR-WF-10i, CHARSET-02). `None` when absent or empty.
pub fn charset_param(content_type: &str) -> Option<String> {
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
pub enum Sniffed {
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
pub fn sniff(body: &[u8]) -> Sniffed {
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
        let error = select(content_type, body).unwrap_err();
        assert_eq!(error.code, ErrorCode::UnsupportedContentType);
        error.details_json()["content_type"].as_str().unwrap().to_owned()
    }

    #[test]
    fn header_media_types() {
        assert_eq!(select(Some("text/html"), b"").unwrap(), MediaKind::Html);
        assert_eq!(
            select(Some(" Application/XHTML+XML ; charset=utf-8"), b"").unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(Some("TEXT/PLAIN;format=flowed"), b"\0\0").unwrap(),
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
        assert_eq!(select(Some("  "), b"<html>").unwrap(), MediaKind::Html);
    }

    #[test]
    fn t_wf_ext_10_bom_and_whitespace_stripped_before_sniffing() {
        assert_eq!(
            select(None, b"\xEF\xBB\xBF<!DOCTYPE html><p>x").unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(None, b"\xEF\xBB\xBF \r\n\t<HTML lang=en>").unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(None, b"  \n<!doctype html>").unwrap(),
            MediaKind::Html
        );
        assert_eq!(
            select(None, b"plain words <html>").unwrap(),
            MediaKind::Plain
        );
        assert_eq!(select(None, b"").unwrap(), MediaKind::Plain);
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
        assert_eq!(select(None, b"%PDF").unwrap(), MediaKind::Plain);
        assert_eq!(select(None, b"GIF88a").unwrap(), MediaKind::Plain);
    }

    #[test]
    fn sniffing_looks_at_512_bytes_only() {
        let mut late_nul = vec![b'a'; SNIFF_LEN];
        late_nul.push(0);
        assert_eq!(select(None, &late_nul).unwrap(), MediaKind::Plain);
        let mut early_nul = vec![b'a'; SNIFF_LEN - 1];
        early_nul.push(0);
        assert_eq!(unsupported(None, &early_nul), "missing");
        let mut padded = vec![b' '; 4096];
        padded.extend_from_slice(b"<html>");
        assert_eq!(select(None, &padded).unwrap(), MediaKind::Html);
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
