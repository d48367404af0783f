//! Charset selection and decoding (FR-WF-10i, CHARSET-01..04, FR-WF-13c).
//!
//! A pure function over the response bytes: pick the charset (UTF-8 byte order mark,
//! then the `Content-Type` header's `charset`, then for HTML the WHATWG prescan of the
//! first 1024 raw bytes), decode to UTF-8, and say whether the UTF-8 fallback applied.
//!
//! Only three charsets are supported (CHARSET-01, SRD-READINGS 11): UTF-8, ISO-8859-1
//! and Windows-1252. A label is matched the way browsers match it (ASCII
//! case-insensitive, surrounding whitespace ignored, WHATWG label table), so `utf8`,
//! `Latin1`, `us-ascii` or `cp1252` are the same charsets under other names; any other
//! label (Shift_JIS, UTF-16, a typo) decodes as UTF-8 with U+FFFD replacement and the
//! `charset_fallback` note.
//!
//! **ISO-8859-1 is decoded as Windows-1252.** The WHATWG Encoding Standard maps the
//! `iso-8859-1` and `latin1` labels to windows-1252, and every browser does the same:
//! the two differ only in bytes 0x80..=0x9F, which ISO-8859-1 assigns to invisible C1
//! control characters and Windows-1252 to the curly quotes, dashes, euro sign and
//! ellipsis that pages labelled Latin-1 actually contain (they were written on
//! Windows). Decoding them as controls would hand the model invisible garbage where
//! the author (and every reader's browser) shows punctuation, so the browser mapping
//! is the faithful one.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// How many raw bytes the meta prescan looks at (FR-WF-CHARSET-03).
pub(crate) const PRESCAN_BYTES: usize = 1024;

/// The charsets this module decodes (FR-WF-CHARSET-01).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum Charset {
    /// UTF-8, declared or as the fallback.
    Utf8,
    /// Windows-1252, also used for ISO-8859-1 (see the module docs).
    Windows1252,
}

impl Charset {
    /// The charset a label names, if it is one of the supported ones (CHARSET-01).
    ///
    /// Matching follows the WHATWG label table: ASCII case-insensitive, leading and
    /// trailing ASCII whitespace ignored.
    pub(crate) fn from_label(label: &[u8]) -> Option<Charset> {
        supported(Encoding::for_label(label)?)
    }

    /// The label a `Content-Type` charset parameter names it by: how browser mode
    /// hands Chromium the charset these rules chose (SRD-READINGS 31).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Charset::Utf8 => "utf-8",
            Charset::Windows1252 => "windows-1252",
        }
    }

    fn encoding(self) -> &'static Encoding {
        match self {
            Charset::Utf8 => UTF_8,
            Charset::Windows1252 => WINDOWS_1252,
        }
    }
}

fn supported(encoding: &'static Encoding) -> Option<Charset> {
    if encoding == UTF_8 {
        Some(Charset::Utf8)
    } else if encoding == WINDOWS_1252 {
        Some(Charset::Windows1252)
    } else {
        None
    }
}

/// Decoded text and how it was decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Decoded {
    /// The body as UTF-8, invalid sequences replaced by U+FFFD, a leading UTF-8 BOM
    /// removed.
    pub text: String,
    /// The charset used.
    pub charset: Charset,
    /// True when no supported charset was declared, so UTF-8 was used as the
    /// fallback: the caller appends the `charset_fallback` note (CHARSET-01, 04,
    /// SRD-READINGS 12).
    pub charset_fallback: bool,
}

/// Decodes a response body to UTF-8 (FR-WF-10i).
///
/// `header_charset` is the `charset` parameter of the `Content-Type` header, if the
/// header had one (quotes and whitespace around it are tolerated). `is_html` enables
/// the `<meta>` prescan of the first [`PRESCAN_BYTES`] raw bytes.
///
/// Precedence (FR-WF-CHARSET-02):
/// 1. A UTF-8 byte order mark: the body is UTF-8 and the mark is stripped. This is
///    the WHATWG "BOM sniff", which overrides every label; a page that starts with
///    the UTF-8 BOM is UTF-8 whatever its header claims. The BOM is not a
///    declaration, though: the `charset_fallback` note is added unless the header
///    (or, for HTML, a `<meta>`) declared a supported charset (CHARSET-04,
///    SRD-READINGS 12).
/// 2. The header charset, when present and non-empty. It wins even when it names an
///    unsupported charset: the meta tag is then not consulted and the body decodes
///    as UTF-8 with the note (SRD-READINGS 11).
/// 3. For HTML only, the WHATWG prescan of `<meta charset>` /
///    `<meta http-equiv="Content-Type" content="...; charset=...">` (CHARSET-03).
/// 4. Otherwise UTF-8 with replacement and the note, text/plain included
///    (CHARSET-04, SRD-READINGS 12).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn decode(body: &[u8], header_charset: Option<&str>, is_html: bool) -> Decoded {
    let choice = choose(body, header_charset, is_html);
    let bytes = if choice.bom {
        &body[UTF8_BOM.len()..]
    } else {
        body
    };
    decode_with(bytes, choice.charset, choice.charset_fallback)
}

/// The charset [`decode`] would use for `body`, without decoding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Choice {
    /// The charset chosen.
    pub charset: Charset,
    /// Nothing supported was declared (the `charset_fallback` note).
    pub charset_fallback: bool,
    /// The body starts with a UTF-8 byte order mark.
    pub bom: bool,
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The precedence of [`decode`] alone: which charset, and whether it is the
/// fallback.
pub(crate) fn choose(body: &[u8], header_charset: Option<&str>, is_html: bool) -> Choice {
    let header = header_charset
        .map(|label| label.trim().trim_matches(|c| c == '"' || c == '\''))
        .filter(|label| !label.trim().is_empty());
    let declared = match header {
        Some(label) => Charset::from_label(label.as_bytes()),
        None if is_html => prescan(&body[..body.len().min(PRESCAN_BYTES)])
            .and_then(|label| Charset::from_label(&label)),
        None => None,
    };
    if body.starts_with(UTF8_BOM) {
        return Choice {
            charset: Charset::Utf8,
            charset_fallback: declared.is_none(),
            bom: true,
        };
    }
    Choice {
        charset: declared.unwrap_or(Charset::Utf8),
        charset_fallback: declared.is_none(),
        bom: false,
    }
}

fn decode_with(bytes: &[u8], charset: Charset, charset_fallback: bool) -> Decoded {
    let (text, _had_errors) = charset.encoding().decode_without_bom_handling(bytes);
    Decoded {
        text: text.into_owned(),
        charset,
        charset_fallback,
    }
}

/// The WHATWG "prescan a byte stream to determine its encoding" algorithm
/// (<https://html.spec.whatwg.org/multipage/parsing.html#prescan-a-byte-stream-to-determine-its-encoding>),
/// returning the raw label of the first `<meta>` that declares a charset the WHATWG
/// table recognises. Whether that charset is supported is decided by the caller, so
/// a page declaring Shift_JIS gets the fallback rather than a later, contradicting
/// meta tag.
///
/// The spec's UTF-16 → UTF-8 and x-user-defined → windows-1252 substitutions are not
/// applied: neither label names a charset of CHARSET-01, so both fall back with the
/// note.
pub(crate) fn prescan(input: &[u8]) -> Option<Vec<u8>> {
    let mut pos = 0;
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.starts_with(b"<!--") {
            // The `-->` may share its dashes with the opener (`<!-->`).
            pos = find_comment_end(input, pos + 2)?;
        } else if starts_with_ignore_case(rest, b"<meta")
            && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/')
        {
            pos += 6;
            match meta_charset(input, &mut pos)? {
                Some(label) => return Some(label),
                None => continue,
            }
        } else if rest.len() >= 2
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic()
                || (rest[1] == b'/' && rest.get(2).is_some_and(|b| b.is_ascii_alphabetic())))
        {
            // A tag: skip its name, then its attributes.
            pos += 2;
            while pos < input.len() && !is_space(input[pos]) && input[pos] != b'>' {
                pos += 1;
            }
            while get_attribute(input, &mut pos)?.is_some() {}
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            pos += rest.iter().position(|&b| b == b'>')?;
        }
        pos += 1;
    }
    None
}

/// Position of the `>` ending a comment whose `<!--` dashes start at `from`.
fn find_comment_end(input: &[u8], from: usize) -> Option<usize> {
    let mut pos = from + 2;
    while pos < input.len() {
        if input[pos] == b'>' && input[pos - 1] == b'-' && input[pos - 2] == b'-' {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

/// The attribute loop of the prescan for one `<meta>`: `Some(Some(label))` when it
/// declares a recognised charset, `Some(None)` to go on scanning after it, `None`
/// when the input ended inside the tag.
fn meta_charset(input: &[u8], pos: &mut usize) -> Option<Option<Vec<u8>>> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<Vec<u8>> = None;
    while let Some((name, value)) = get_attribute(input, pos)? {
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" if value == b"content-type" => got_pragma = true,
            b"content" if charset.is_none() => {
                if let Some(label) = charset_from_content(&value)
                    .filter(|label| Encoding::for_label(label).is_some())
                {
                    charset = Some(label);
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = Some(value.clone());
                need_pragma = Some(false);
            }
            _ => {}
        }
        seen.push(name);
    }
    let declared = match need_pragma {
        None => None,
        Some(true) if !got_pragma => None,
        Some(_) => charset.filter(|label| Encoding::for_label(label).is_some()),
    };
    Some(declared)
}

/// "Extract a character encoding from a meta element" over a `content` value
/// (<https://html.spec.whatwg.org/multipage/urls-and-fetching.html#algorithm-for-extracting-a-character-encoding-from-a-meta-element>).
pub(crate) fn charset_from_content(value: &[u8]) -> Option<Vec<u8>> {
    let mut pos = 0;
    loop {
        let found = find_ignore_case(&value[pos..], b"charset")?;
        pos += found + b"charset".len();
        while value.get(pos).is_some_and(|&b| is_space(b)) {
            pos += 1;
        }
        if value.get(pos) != Some(&b'=') {
            continue;
        }
        pos += 1;
        while value.get(pos).is_some_and(|&b| is_space(b)) {
            pos += 1;
        }
        return match value.get(pos)? {
            &quote @ (b'"' | b'\'') => {
                let rest = &value[pos + 1..];
                let end = rest.iter().position(|&b| b == quote)?;
                Some(rest[..end].to_vec())
            }
            _ => {
                let rest = &value[pos..];
                let end = rest
                    .iter()
                    .position(|&b| is_space(b) || b == b';')
                    .unwrap_or(rest.len());
                Some(rest[..end].to_vec())
            }
        };
    }
}

/// The prescan's "get an attribute": `Some(Some((name, value)))` with both
/// lowercased, `Some(None)` at the tag's `>`, `None` at the end of the input.
fn get_attribute(input: &[u8], pos: &mut usize) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
    let byte = |p: usize| input.get(p).copied();
    while byte(*pos).is_some_and(|b| is_space(b) || b == b'/') {
        *pos += 1;
    }
    if byte(*pos)? == b'>' {
        return Some(None);
    }
    let mut name = Vec::new();
    let value = Vec::new();
    // The name.
    loop {
        let b = byte(*pos)?;
        if b == b'=' && !name.is_empty() {
            *pos += 1;
            return attribute_value(input, pos, name, value);
        } else if is_space(b) {
            break;
        } else if b == b'/' || b == b'>' {
            return Some(Some((name, value)));
        }
        name.push(b.to_ascii_lowercase());
        *pos += 1;
    }
    while byte(*pos).is_some_and(is_space) {
        *pos += 1;
    }
    if byte(*pos)? != b'=' {
        return Some(Some((name, value)));
    }
    *pos += 1;
    attribute_value(input, pos, name, value)
}

fn attribute_value(
    input: &[u8],
    pos: &mut usize,
    name: Vec<u8>,
    mut value: Vec<u8>,
) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
    let byte = |p: usize| input.get(p).copied();
    while byte(*pos).is_some_and(is_space) {
        *pos += 1;
    }
    match byte(*pos)? {
        quote @ (b'"' | b'\'') => loop {
            *pos += 1;
            let b = byte(*pos)?;
            if b == quote {
                *pos += 1;
                return Some(Some((name, value)));
            }
            value.push(b.to_ascii_lowercase());
        },
        b'>' => return Some(Some((name, value))),
        b => {
            value.push(b.to_ascii_lowercase());
            *pos += 1;
        }
    }
    loop {
        let b = byte(*pos)?;
        if is_space(b) || b == b'>' {
            return Some(Some((name, value)));
        }
        value.push(b.to_ascii_lowercase());
        *pos += 1;
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

fn starts_with_ignore_case(haystack: &[u8], prefix: &[u8]) -> bool {
    haystack.len() >= prefix.len() && haystack[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(html: &str) -> Option<Charset> {
        prescan(html.as_bytes()).and_then(|label| Charset::from_label(&label))
    }

    #[test]
    fn labels_are_matched_case_insensitively() {
        for label in ["UTF-8", "utf-8", " Utf8 ", "unicode-1-1-utf-8"] {
            assert_eq!(
                Charset::from_label(label.as_bytes()),
                Some(Charset::Utf8),
                "{label}"
            );
        }
        for label in [
            "ISO-8859-1",
            "iso-8859-1",
            "Latin1",
            "WINDOWS-1252",
            "cp1252",
            "us-ascii",
        ] {
            assert_eq!(
                Charset::from_label(label.as_bytes()),
                Some(Charset::Windows1252),
                "{label}"
            );
        }
        for label in [
            "shift_jis",
            "utf-16",
            "koi8-r",
            "x-user-defined",
            "nonsense",
            "",
        ] {
            assert_eq!(Charset::from_label(label.as_bytes()), None, "{label}");
        }
    }

    #[test]
    fn prescan_finds_meta_charset_forms() {
        assert_eq!(
            sniff(r#"<meta charset="iso-8859-1">"#),
            Some(Charset::Windows1252)
        );
        assert_eq!(
            sniff("<META CHARSET=Windows-1252>"),
            Some(Charset::Windows1252)
        );
        assert_eq!(sniff("<meta charset='utf-8'/>"), Some(Charset::Utf8));
        assert_eq!(
            sniff(r#"<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">"#),
            Some(Charset::Windows1252)
        );
        assert_eq!(
            sniff(r#"<meta content='text/html;charset="latin1"' http-equiv=content-type>"#),
            Some(Charset::Windows1252)
        );
    }

    #[test]
    fn prescan_follows_whatwg_rules() {
        // `content` without the http-equiv pragma does not count.
        assert_eq!(sniff(r#"<meta content="text/html; charset=latin1">"#), None);
        // Comments and other tags' attributes are skipped.
        assert_eq!(sniff(r#"<!-- <meta charset="latin1"> --><p>x</p>"#), None);
        assert_eq!(
            sniff(r#"<!--><meta charset="latin1">"#),
            Some(Charset::Windows1252)
        );
        assert_eq!(sniff(r#"<div title='<meta charset="latin1">'>"#), None);
        // An unknown label is skipped and scanning goes on.
        assert_eq!(
            sniff(r#"<meta charset="bogus"><meta charset="latin1">"#),
            Some(Charset::Windows1252)
        );
        // A recognised but unsupported label stops the scan.
        assert_eq!(
            prescan(br#"<meta charset="shift_jis"><meta charset="utf-8">"#),
            Some(b"shift_jis".to_vec())
        );
        // `<metadata>` is not `<meta>`.
        assert_eq!(sniff(r#"<metadata charset="latin1">"#), None);
        // Truncated input.
        assert_eq!(sniff(r#"<meta charset="lat"#), None);
    }

    #[test]
    fn decode_precedence() {
        let latin = b"<meta charset=\"utf-8\">caf\xE9";
        // Header first, even against the meta tag.
        let d = decode(latin, Some("ISO-8859-1"), true);
        assert_eq!(
            (d.text.ends_with("café"), d.charset_fallback),
            (true, false)
        );
        // Unsupported header still wins over a supported meta (SRD-READINGS 11).
        let d = decode(b"<meta charset=latin1>caf\xE9", Some("koi8-r"), true);
        assert_eq!(
            (d.text.ends_with("caf\u{FFFD}"), d.charset_fallback),
            (true, true)
        );
        // Empty header parameter counts as absent.
        let d = decode(b"<meta charset=latin1>caf\xE9", Some(" \"\" "), true);
        assert_eq!(
            (d.text.ends_with("café"), d.charset_fallback),
            (true, false)
        );
        // No declaration: UTF-8 with replacement and the note, text/plain included.
        let d = decode(b"caf\xE9", None, false);
        assert_eq!((d.text.as_str(), d.charset_fallback), ("caf\u{FFFD}", true));
        // Meta is not consulted for text/plain.
        let d = decode(b"<meta charset=latin1>", None, false);
        assert!(d.charset_fallback);
        // A UTF-8 BOM is honoured and stripped, over the header.
        let d = decode("\u{FEFF}café".as_bytes(), Some("windows-1252"), true);
        assert_eq!(
            (d.text.as_str(), d.charset, d.charset_fallback),
            ("café", Charset::Utf8, false)
        );
    }

    /// A BOM decides the decoding but is not a declaration: with no supported charset
    /// from the header or a `<meta>`, the note is still added (CHARSET-04,
    /// SRD-READINGS 12).
    #[test]
    fn utf8_bom_without_a_declared_charset_keeps_the_fallback_note() {
        let body = "\u{FEFF}<p>café</p>".as_bytes();
        for is_html in [true, false] {
            let d = decode(body, None, is_html);
            assert_eq!(
                (d.text.as_str(), d.charset, d.charset_fallback),
                ("<p>café</p>", Charset::Utf8, true),
                "html: {is_html}"
            );
            let d = decode(body, Some("utf-8"), is_html);
            assert_eq!(
                (d.text.as_str(), d.charset_fallback),
                ("<p>café</p>", false),
                "html: {is_html}"
            );
            // An unsupported header charset is no declaration either.
            assert!(decode(body, Some("shift_jis"), is_html).charset_fallback);
        }
        // A supported `<meta>` declaration counts for HTML, not for text/plain.
        let body = "\u{FEFF}<meta charset=utf-8><p>café</p>".as_bytes();
        assert!(!decode(body, None, true).charset_fallback);
        assert!(decode(body, None, false).charset_fallback);
    }

    #[test]
    fn windows_1252_bytes_0x80_to_0x9f_are_punctuation() {
        let d = decode(b"\x93quoted\x94 \x80 \x85", Some("iso-8859-1"), false);
        assert_eq!(d.text, "\u{201C}quoted\u{201D} \u{20AC} \u{2026}");
    }

    #[test]
    fn meta_beyond_1024_bytes_is_ignored() {
        let mut page = vec![b' '; PRESCAN_BYTES];
        page.extend_from_slice(b"<meta charset=latin1>caf\xE9");
        let d = decode(&page, None, true);
        assert!(d.charset_fallback);
        assert!(d.text.ends_with("caf\u{FFFD}"));
    }
}
