//! JSON as Markdown: the document pretty-printed in one ```json fence.
//!
//! Our own reformatter rather than `serde_json::Value`: a `Value` sorts object
//! keys (the crate does not enable `preserve_order`, which would change our error
//! envelopes) and rewrites numbers (`1.0` becomes `1.0` but `1e400` fails); this
//! validates RFC 8259's grammar in one pass with an explicit stack and copies every
//! token as written, keys in their order. Nothing recurses.
//!
//! # Layout
//!
//! The first [`MAX_INDENT_LEVELS`] levels of containers are laid out one member or
//! element per line, two spaces a level, so the chunker's split of an oversized
//! fence at line boundaries (FR-WF-15b, the fence repeated on each piece) cuts
//! only between values. A container nested deeper is *packed*: its tokens follow
//! one another (`, ` and `: ` between them) and wrap, between tokens, onto
//! continuation lines of about [`PACKED_WIDTH`] bytes (a key keeps its value's
//! first token, and a longer string or number has a line of its own), indented
//! one level past the cap. So indentation never exceeds
//! `2 * MAX_INDENT_LEVELS + 2` spaces and a packed byte of input costs at most
//! about 2.3 of output (`0,0` is `0, 0` on lines a third indentation), whatever
//! the nesting: the layout's size is bounded by a small multiple of the input,
//! not by its depth.
//!
//! The layout depends on the tokens alone, never on the input's whitespace, so the
//! pretty form of valid JSON is a fixed point: it pretty-prints to itself.
//!
//! # Bounds
//!
//! The output stops at a byte limit (the page's [`MAX_RENDERED_BYTES`] less the
//! fence), at the end of the last whole line that fits: the fence is closed
//! there and the reader says it was cut, which the page notes as
//! `rendered_size_limit`. The rest of the body is still validated (cheaply, with
//! nothing written), so malformed JSON is `json_malformed` wherever the error is.
//! The loop checks the call's read budget ([`budget::interrupted`]) at every
//! token. A cut pretty form is not JSON, so the fixed-point property holds for
//! uncut output only.
//!
//! [`MAX_RENDERED_BYTES`]: crate::page::MAX_RENDERED_BYTES

use crate::budget;
use crate::content::MAX_RENDERED_BYTES;
use crate::content::Rendered;
use crate::error::{FetchError, UnreadableReason};
use crate::vocabulary::ExtractedDocument;

/// Nesting levels laid out one value per line; deeper containers are packed.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) const MAX_INDENT_LEVELS: usize = 16;

/// The width, in bytes, past which a packed container's tokens wrap onto a new
/// line (indentation included).
pub(crate) const PACKED_WIDTH: usize = 100;

/// The longest fence: any run of three or more backticks opens and closes a
/// fence, and no line of the layout starts with a backtick (strings start with
/// `"`), so a longer fence only helps a reader who looks for the fence's text
/// inside strings, and must not grow with a hostile string.
const MAX_FENCE: usize = 16;

/// A JSON document (decoded text) as a Markdown ```json fence, cut at
/// [`MAX_RENDERED_BYTES`] (then [`Rendered::cut`]).
///
/// Not JSON (a syntax error, trailing data, a raw control character in a
/// string) is `extraction_failed` with `details.reason = "json_malformed"` and the
/// byte offset in the message; a blank body is `no_extractable_content`.
pub(crate) fn to_markdown(text: &str) -> Result<Rendered, FetchError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(FetchError::no_extractable_content());
    }
    // The fence's two lines and the info string, at their longest.
    let overhead = 2 * MAX_FENCE + "json\n\n\n".len();
    let pretty = pretty(text, MAX_RENDERED_BYTES - overhead).map_err(|error| {
        FetchError::unreadable(
            UnreadableReason::JsonMalformed,
            &format!(
                "the body is not valid JSON: {} at byte {}",
                error.what, error.at
            ),
        )
    })?;
    let run = 1 + longest_backtick_run(&pretty.text);
    let fence = "`".repeat(run.clamp(3, MAX_FENCE));
    Ok(Rendered {
        document: ExtractedDocument {
            markdown: format!("{fence}json\n{}\n{fence}\n", pretty.text),
            title: None,
            language: None,
            page_type: None,
            page_starts: Vec::new(),
        },
        cut: pretty.cut,
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

/// The pretty form of a JSON text, and whether it stopped at its byte limit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct Pretty {
    /// The layout (see the module docs), without a final newline.
    pub text: String,
    /// The layout reached the limit: `text` holds the whole lines that fit.
    pub cut: bool,
}

/// An open container: an object expects keys, an array values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Object,
    Array,
}

/// Reformats `text` with the layout of the module docs, writing at most `limit`
/// bytes; empty containers stay `{}` and `[]`.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn pretty(text: &str, limit: usize) -> Result<Pretty, SyntaxError> {
    let bytes = text.as_bytes();
    let mut out = Layout::new(limit, text.len());
    let mut stack: Vec<Open> = Vec::new();
    let mut i = skip_ws(bytes, 0);
    // Expecting a value (true) or, inside a container, what follows one.
    let mut want_value = true;
    // The value expected follows its key on the key's line.
    let mut after_key = false;
    loop {
        if budget::interrupted() {
            // The budget's error is the answer (`ReadBudget::run`).
            out.cut = true;
            return Ok(out.finish());
        }
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
                        let empty = if open == Open::Object { "{}" } else { "[]" };
                        out.token(empty, stack.len(), after_key);
                        i = after + 1;
                    } else {
                        out.token(&text[i..=i], stack.len(), after_key);
                        stack.push(open);
                        out.item(stack.len(), true);
                        i = after;
                        after_key = false;
                        if open == Open::Object {
                            i = key(text, i, stack.len(), &mut out)?;
                            after_key = true;
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
                out.token(&text[start..i], stack.len(), after_key);
            }
            after_key = false;
            want_value = false;
        }
        i = skip_ws(bytes, i);
        let Some(&top) = stack.last() else {
            return if i == bytes.len() {
                Ok(out.finish())
            } else {
                Err(error(i, "unexpected data after the JSON value"))
            };
        };
        let close = if top == Open::Object { b'}' } else { b']' };
        match bytes.get(i) {
            Some(b',') => {
                out.push(",");
                out.item(stack.len(), false);
                i = skip_ws(bytes, i + 1);
                if top == Open::Object {
                    i = key(text, i, stack.len(), &mut out)?;
                    after_key = true;
                }
                want_value = true;
            }
            Some(&c) if c == close => {
                out.close(if c == b'}' { "}" } else { "]" }, stack.len());
                stack.pop();
                i += 1;
            }
            Some(_) => return Err(error(i, "expected `,` or the end of the container")),
            None => return Err(error(i, "unexpected end of input inside a container")),
        }
    }
}

/// A key and its colon at `i`, in a container at `level`; returns the offset of
/// the value.
fn key(text: &str, i: usize, level: usize, out: &mut Layout) -> Result<usize, SyntaxError> {
    let bytes = text.as_bytes();
    if bytes.get(i) != Some(&b'"') {
        return Err(error(i, "expected a string key"));
    }
    let end = string(bytes, i)?;
    out.token(&text[i..end], level, false);
    let colon = skip_ws(bytes, end);
    if bytes.get(colon) != Some(&b':') {
        return Err(error(colon, "expected `:` after the key"));
    }
    out.push(": ");
    Ok(skip_ws(bytes, colon + 1))
}

/// The pretty form being written: where its line starts, and the limit.
struct Layout {
    out: String,
    limit: usize,
    /// The limit was reached: nothing more is written.
    cut: bool,
    /// Where the current line starts, and its indentation.
    line_start: usize,
    line_indent: usize,
    /// A packed container's separator space, owed before its next token unless
    /// that token wraps.
    space: bool,
}

impl Layout {
    fn new(limit: usize, input_len: usize) -> Layout {
        Layout {
            out: String::with_capacity(limit.min(input_len + input_len / 4)),
            limit,
            cut: false,
            line_start: 0,
            line_indent: 0,
            space: false,
        }
    }

    fn finish(self) -> Pretty {
        Pretty {
            text: self.out,
            cut: self.cut,
        }
    }

    /// Writes `s` as it is, unless the limit was reached.
    fn push(&mut self, s: &str) {
        if self.cut {
            return;
        }
        self.out.push_str(s);
        if self.out.len() > self.limit {
            self.cut_at_limit();
        }
    }

    /// A new line indented `levels` levels.
    fn newline(&mut self, levels: usize) {
        if self.cut {
            return;
        }
        self.out.push('\n');
        self.line_start = self.out.len();
        self.line_indent = 2 * levels;
        self.out.extend(std::iter::repeat_n(' ', self.line_indent));
        self.space = false;
        if self.out.len() > self.limit {
            self.cut_at_limit();
        }
    }

    /// A token (a scalar, a key, an opening bracket) of a container at `level`
    /// (0: the top-level value). In a packed container it wraps first when the
    /// line is full, unless it is the value of the key just written (`glued`).
    fn token(&mut self, token: &str, level: usize, glued: bool) {
        if self.cut {
            return;
        }
        if level > MAX_INDENT_LEVELS && !glued {
            let line = self.out.len() - self.line_start;
            let space = usize::from(self.space);
            if line > self.line_indent && line + space + token.len() > PACKED_WIDTH {
                self.newline(MAX_INDENT_LEVELS + 1);
            } else if self.space {
                self.out.push(' ');
            }
            self.space = false;
        }
        self.push(token);
    }

    /// Where an item of the container at `level` starts: after its opening
    /// bracket (`first`) or after a comma.
    fn item(&mut self, level: usize, first: bool) {
        if level <= MAX_INDENT_LEVELS {
            self.newline(level);
        } else {
            self.space = !first;
        }
    }

    /// The closing bracket of the container at `level`.
    fn close(&mut self, bracket: &str, level: usize) {
        if level <= MAX_INDENT_LEVELS {
            self.newline(level - 1);
            self.push(bracket);
        } else {
            self.token(bracket, level, false);
        }
    }

    /// Keeps the whole lines within the limit (one longer line is cut at a
    /// character boundary) and stops writing.
    fn cut_at_limit(&mut self) {
        let mut end = self.limit.min(self.out.len());
        while !self.out.is_char_boundary(end) {
            end -= 1;
        }
        if self.out.as_bytes().get(end) != Some(&b'\n') {
            end = self.out[..end].rfind('\n').unwrap_or(end);
        }
        self.out.truncate(end);
        self.cut = true;
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
            pp(text),
            "{\n  \"b\": 1.50,\n  \"a\": [\n    true,\n    null,\n    {\n      \"x\": \"y\\u00e9\"\n    },\n    [],\n    {}\n  ],\n  \"c\": -0.1e+5\n}"
        );
        assert_eq!(pp("\"s\""), "\"s\"");
        assert_eq!(pp(" 12 "), "12");
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
            assert_eq!(pretty(text, usize::MAX).unwrap_err().at, at, "{text:?}");
        }
    }

    #[test]
    fn markdown_fence_and_errors() {
        let document = to_markdown("\u{feff}{\"code\":\"```\"}").unwrap().document;
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

    /// The pretty form of valid JSON, uncut.
    fn pp(text: &str) -> String {
        let pretty = pretty(text, usize::MAX).unwrap();
        assert!(!pretty.cut);
        pretty.text
    }

    /// `levels` nested arrays around `inner`.
    fn nested(levels: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels))
    }

    /// The tokens of a JSON text: everything but the whitespace outside strings.
    fn tokens(text: &str) -> String {
        let mut out = String::new();
        let (mut in_string, mut escaped) = (false, false);
        for c in text.chars() {
            if in_string {
                in_string = escaped || c != '"';
                escaped = !escaped && c == '\\';
            } else if c == '"' {
                in_string = true;
            } else if c.is_ascii_whitespace() {
                continue;
            }
            out.push(c);
        }
        out
    }

    /// What every layout keeps: the tokens, the fixed point, the indentation cap
    /// and, past one token, the packed width.
    fn assert_layout(text: &str) -> String {
        let out = pp(text);
        assert_eq!(tokens(&out), tokens(text));
        assert_eq!(pp(&out), out, "not a fixed point");
        for line in out.lines() {
            let indent = line.len() - line.trim_start().len();
            assert!(indent <= 2 * MAX_INDENT_LEVELS + 2, "{line:?}");
            // Past the width by at most a key's `": ["` (the test data has no
            // long strings).
            let packed = indent >= 2 * MAX_INDENT_LEVELS;
            assert!(!packed || line.len() <= PACKED_WIDTH + 3, "{line:?}");
        }
        out
    }

    #[test]
    fn containers_past_the_indent_cap_are_packed_and_wrapped() {
        // The object is the last level laid out one member per line; the array
        // in it is packed.
        let deep = nested(
            MAX_INDENT_LEVELS - 1,
            r#"{"k": [1, {"a": "b"}, [], "x"], "l": 2}"#,
        );
        let out = assert_layout(&deep);
        let indent = " ".repeat(2 * (MAX_INDENT_LEVELS - 1));
        assert!(
            out.contains(&format!(
                "\n{indent}{{\n{indent}  \"k\": [1, {{\"a\": \"b\"}}, [], \"x\"],\n{indent}  \"l\": 2\n{indent}}}\n"
            )),
            "{out}"
        );
        // A long packed array wraps at token boundaries, continuation lines one
        // level past the cap.
        let long = nested(MAX_INDENT_LEVELS, &format!("[{}0]", "12345, ".repeat(100)));
        let out = assert_layout(&long);
        let continuation = " ".repeat(2 * MAX_INDENT_LEVELS + 2);
        assert!(out.contains(&format!(",\n{continuation}12345, ")), "{out}");
        // Packed deep nesting wraps between brackets too.
        assert_layout(&nested(MAX_INDENT_LEVELS + 500, "1"));
        assert_layout(&nested(
            MAX_INDENT_LEVELS + 500,
            r#"{"a": {"b": [[], {}, "s s"]}}"#,
        ));
    }

    #[test]
    fn deep_nesting_costs_a_small_multiple_of_the_input() {
        for text in [
            nested(100_000, ""),
            nested(100_000, "0"),
            nested(32, &format!("0{}", ",0".repeat(100_000))),
            "[{\"a\":".repeat(10_000) + "1" + &"}]".repeat(10_000),
        ] {
            let out = assert_layout(&text);
            assert!(
                out.len() <= 5 * text.len() / 2 + 4096,
                "{} -> {}",
                text.len(),
                out.len()
            );
        }
    }

    #[test]
    fn output_stops_at_the_limit_on_a_whole_line_and_still_validates() {
        let text = format!("[{}0]", "1,".repeat(1000));
        let cut = pretty(&text, 100).unwrap();
        assert!(cut.cut);
        assert!(
            cut.text.len() <= 100 && cut.text.len() > 80,
            "{}",
            cut.text.len()
        );
        assert!(cut.text.ends_with("  1,"), "{:?}", cut.text);
        assert_eq!(cut.text, pp(&text)[..cut.text.len()]);
        // An error past the cut is still found.
        let broken = format!("[{}x]", "1,".repeat(1000));
        assert_eq!(pretty(&broken, 100).unwrap_err().at, 2001);
        // A line longer than the limit is cut at a character boundary.
        let wide = pretty("\"ééééé\"", 4).unwrap();
        assert_eq!((wide.text.as_str(), wide.cut), ("\"é", true));
    }

    #[test]
    fn the_fence_is_capped_whatever_the_strings_hold() {
        let text = format!("[\"{}\"]", "`".repeat(1000));
        let markdown = to_markdown(&text).unwrap().document.markdown;
        let fence = "`".repeat(MAX_FENCE);
        assert!(
            markdown.starts_with(&format!("{fence}json\n[\n")),
            "{}",
            &markdown[..40]
        );
        assert!(markdown.ends_with(&format!("\n]\n{fence}\n")));
    }

    #[test]
    fn an_ended_call_stops_the_loop() {
        let text = nested(100_000, "");
        let (budget, end) = crate::budget::ReadBudget::new(None, 1_000);
        drop(end);
        let answer = budget.run(|| {
            let partial = pretty(&text, usize::MAX).unwrap();
            assert!(
                partial.cut && partial.text.is_empty(),
                "{}",
                partial.text.len()
            );
            to_markdown(&text)
        });
        assert!(answer.is_err());
    }
}
