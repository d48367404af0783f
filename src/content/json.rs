//! JSON as Markdown (issue 31): the document pretty-printed in one ```json fence.
//!
//! Our own reformatter rather than `serde_json::Value`: a `Value` sorts object
//! keys (the crate does not enable `preserve_order`, which would change our error
//! envelopes) and rewrites numbers (`1.0` becomes `1.0` but `1e400` fails); this
//! validates RFC 8259's grammar in one pass with an explicit stack and copies every
//! token as written, keys in their order. Memory is the output; nothing recurses.
//!
//! Every member and element starts a line of its own, so the chunker's split of an
//! oversized fence at line boundaries (FR-WF-15b, the fence repeated on each piece)
//! cuts only between values. Indentation stops growing past [`MAX_INDENT_LEVELS`], so
//! a hostile nesting cannot make the output quadratic.

use crate::error::{FetchError, UnreadableReason};
use crate::vocabulary::ExtractedDocument;

/// Nesting levels that indent; deeper values line up with the last level.
pub(crate) const MAX_INDENT_LEVELS: usize = 32;

/// A JSON document (decoded text) as a Markdown ```json fence.
///
/// Not JSON (a syntax error, trailing data, a raw control character in a
/// string) is `extraction_failed` with `details.reason = "json_malformed"` and the
/// byte offset in the message; a blank body is `no_extractable_content`.
pub(crate) fn to_markdown(text: &str) -> Result<ExtractedDocument, FetchError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(FetchError::no_extractable_content());
    }
    let pretty = pretty(text).map_err(|error| {
        FetchError::unreadable(
            UnreadableReason::JsonMalformed,
            &format!(
                "the body is not valid JSON: {} at byte {}",
                error.what, error.at
            ),
        )
    })?;
    let fence = "`".repeat(3.max(1 + longest_backtick_run(&pretty)));
    Ok(ExtractedDocument {
        markdown: format!("{fence}json\n{pretty}\n{fence}\n"),
        title: None,
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    })
}

/// Where and why the text is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct SyntaxError {
    /// Byte offset of the problem.
    pub at: usize,
    /// What was expected or found.
    pub what: &'static str,
}

/// An open container: an object expects keys, an array values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Object,
    Array,
}

/// Reformats `text` with two-space indentation, one member or element per line,
/// `": "` after keys; empty containers stay `{}` and `[]`.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn pretty(text: &str) -> Result<String, SyntaxError> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut stack: Vec<Open> = Vec::new();
    let mut i = skip_ws(bytes, 0);
    // Expecting a value (true) or, inside a container, what follows one.
    let mut want_value = true;
    loop {
        if want_value {
            let start = i;
            match bytes.get(i) {
                Some(b'{') | Some(b'[') => {
                    let open = if bytes[i] == b'{' {
                        Open::Object
                    } else {
                        Open::Array
                    };
                    let close = if open == Open::Object { b'}' } else { b']' };
                    let after = skip_ws(bytes, i + 1);
                    if bytes.get(after) == Some(&close) {
                        out.push_str(&text[i..=i]);
                        out.push(char::from(close));
                        i = after + 1;
                    } else {
                        out.push_str(&text[i..=i]);
                        stack.push(open);
                        newline(&mut out, stack.len());
                        i = after;
                        if open == Open::Object {
                            i = key(text, i, &mut out)?;
                        }
                        continue;
                    }
                }
                Some(b'"') => i = string(bytes, i)?,
                Some(b't') => i = literal(bytes, i, b"true")?,
                Some(b'f') => i = literal(bytes, i, b"false")?,
                Some(b'n') => i = literal(bytes, i, b"null")?,
                Some(b'-' | b'0'..=b'9') => i = number(bytes, i)?,
                Some(_) => return Err(error(i, "expected a value")),
                None => return Err(error(i, "unexpected end of input, expected a value")),
            }
            if bytes[start] != b'{' && bytes[start] != b'[' {
                out.push_str(&text[start..i]);
            }
            want_value = false;
        }
        i = skip_ws(bytes, i);
        let Some(&top) = stack.last() else {
            return if i == bytes.len() {
                Ok(out)
            } else {
                Err(error(i, "unexpected data after the JSON value"))
            };
        };
        let close = if top == Open::Object { b'}' } else { b']' };
        match bytes.get(i) {
            Some(b',') => {
                out.push(',');
                newline(&mut out, stack.len());
                i = skip_ws(bytes, i + 1);
                if top == Open::Object {
                    i = key(text, i, &mut out)?;
                }
                want_value = true;
            }
            Some(&c) if c == close => {
                stack.pop();
                newline(&mut out, stack.len());
                out.push(char::from(close));
                i += 1;
            }
            Some(_) => return Err(error(i, "expected `,` or the end of the container")),
            None => return Err(error(i, "unexpected end of input inside a container")),
        }
    }
}

/// A key and its colon at `i`; returns the offset of the value.
fn key(text: &str, i: usize, out: &mut String) -> Result<usize, SyntaxError> {
    let bytes = text.as_bytes();
    if bytes.get(i) != Some(&b'"') {
        return Err(error(i, "expected a string key"));
    }
    let end = string(bytes, i)?;
    out.push_str(&text[i..end]);
    let colon = skip_ws(bytes, end);
    if bytes.get(colon) != Some(&b':') {
        return Err(error(colon, "expected `:` after the key"));
    }
    out.push_str(": ");
    Ok(skip_ws(bytes, colon + 1))
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth.min(MAX_INDENT_LEVELS) {
        out.push_str("  ");
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (its opening quote).
fn string(bytes: &[u8], i: usize) -> Result<usize, SyntaxError> {
    let mut j = i + 1;
    loop {
        match bytes.get(j) {
            Some(b'"') => return Ok(j + 1),
            Some(b'\\') => match bytes.get(j + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                Some(b'u') => {
                    let hex = bytes.get(j + 2..j + 6).unwrap_or_default();
                    if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(error(j, "bad \\u escape"));
                    }
                    j += 6;
                }
                _ => return Err(error(j, "bad escape")),
            },
            Some(c) if *c < 0x20 => return Err(error(j, "control character in a string")),
            Some(_) => j += 1,
            None => return Err(error(i, "unterminated string")),
        }
    }
}

fn literal(bytes: &[u8], i: usize, word: &[u8]) -> Result<usize, SyntaxError> {
    if bytes.get(i..i + word.len()) == Some(word) {
        Ok(i + word.len())
    } else {
        Err(error(i, "expected a value"))
    }
}

/// The end of the number at `i` (RFC 8259's grammar).
fn number(bytes: &[u8], i: usize) -> Result<usize, SyntaxError> {
    let digits = |mut j: usize| {
        let start = j;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        (j, j > start)
    };
    let mut j = i;
    if bytes.get(j) == Some(&b'-') {
        j += 1;
    }
    match bytes.get(j) {
        Some(b'0') => j += 1,
        Some(b'1'..=b'9') => j = digits(j).0,
        _ => return Err(error(j, "bad number")),
    }
    if bytes.get(j) == Some(&b'.') {
        let (end, any) = digits(j + 1);
        if !any {
            return Err(error(j, "bad number"));
        }
        j = end;
    }
    if matches!(bytes.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let (end, any) = digits(j);
        if !any {
            return Err(error(j, "bad number"));
        }
        j = end;
    }
    Ok(j)
}

fn error(at: usize, what: &'static str) -> SyntaxError {
    SyntaxError { at, what }
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_prints_in_source_order_and_keeps_tokens_as_written() {
        let text = r#" {"b":1.50,"a":[true,null,{"x":"y\u00e9"},[],{}],"c":-0.1e+5} "#;
        assert_eq!(
            pretty(text).unwrap(),
            "{\n  \"b\": 1.50,\n  \"a\": [\n    true,\n    null,\n    {\n      \"x\": \"y\\u00e9\"\n    },\n    [],\n    {}\n  ],\n  \"c\": -0.1e+5\n}"
        );
        assert_eq!(pretty("\"s\"").unwrap(), "\"s\"");
        assert_eq!(pretty(" 12 ").unwrap(), "12");
    }

    #[test]
    fn syntax_errors_say_where() {
        for (text, at) in [
            ("{", 1),
            ("{\"a\" 1}", 5),
            ("[1,]", 3),
            ("[1 2]", 3),
            ("01", 1),
            ("1.", 1),
            ("\"a\nb\"", 2),
            ("\"\\x\"", 1),
            ("[] []", 3),
            ("{'a':1}", 1),
            ("tru", 0),
            ("-", 1),
        ] {
            assert_eq!(pretty(text).unwrap_err().at, at, "{text:?}");
        }
    }

    #[test]
    fn markdown_fence_and_errors() {
        let document = to_markdown("\u{feff}{\"code\":\"```\"}").unwrap();
        assert_eq!(
            document.markdown,
            "````json\n{\n  \"code\": \"```\"\n}\n````\n"
        );
        let error = to_markdown("{\"a\":").unwrap_err();
        assert_eq!(error.details_json()["reason"], "json_malformed");
        assert_eq!(error.details_json()["error"], "unreadable_json");
        assert!(error.message.contains("at byte 5"), "{}", error.message);
        let blank = to_markdown(" \n").unwrap_err();
        assert_eq!(blank.details_json()["error"], "no_extractable_content");
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let depth = 100_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let out = pretty(&text).unwrap();
        // Two lines a level, each at most the capped indentation and a bracket.
        assert!(
            out.len() <= depth * 2 * (2 * MAX_INDENT_LEVELS + 2),
            "{}",
            out.len()
        );
    }
}
