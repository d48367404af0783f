//! Raw HTML inside publisher Markdown, read as a browser's tokenizer would,
//! leniently: comments and the other markup never shown, start tags with their
//! attributes (values quoted or not, character references decoded), end tags.
//! Only what the sanitiser asks of a tag is kept: its name and attributes.

use std::ops::Range;

use crate::extract::article::names::style_hides;

/// One piece of markup found in raw HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Markup {
    /// A comment, `<!...>`, `<?...>` or CDATA: never shown; `closed` false when
    /// its end marker is not in the stretch.
    Invisible { closed: bool },
    /// A start tag.
    StartTag(StartTag),
    /// An end tag, by its lower-case name.
    EndTag(String),
}

/// A start tag: its lower-case name and its attributes (lower-case names,
/// values with character references decoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StartTag {
    pub(super) name: String,
    pub(super) attrs: Vec<(String, String)>,
}

impl StartTag {
    pub(super) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// FR-WF-13's `hidden` and `aria-hidden="true"`, and an inline style that
    /// hides the element.
    pub(super) fn hides(&self) -> bool {
        self.attr("hidden").is_some()
            || self
                .attr("aria-hidden")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || self
                .attr("style")
                .is_some_and(|style| style_hides(&plain_css(style)))
    }
}

/// An inline style without its comments and `!important` marks, for
/// [`style_hides`].
fn plain_css(style: &str) -> String {
    let mut out = String::with_capacity(style.len());
    let mut rest = style;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = rest[at + 2..]
            .find("*/")
            .map_or("", |end| &rest[at + 2 + end + 2..]);
    }
    out.push_str(rest);
    let lower = out.to_ascii_lowercase();
    lower.replace("!important", "")
}

/// Elements that have no end tag: hiding one drops the tag alone.
pub(super) fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}

pub(super) fn find(haystack: &str, from: usize, needle: &str) -> Option<usize> {
    haystack.get(from..)?.find(needle).map(|at| from + at)
}

/// The next piece of markup in `html` at or after `from`, and its range.
pub(super) fn next_markup(html: &str, from: usize) -> Option<(Markup, Range<usize>)> {
    let bytes = html.as_bytes();
    let mut i = from;
    loop {
        let at = find(html, i, "<")?;
        i = at + 1;
        let rest = &html[at..];
        let end = |marker: &str, skip: usize| match find(html, at + skip, marker) {
            Some(end) => (Markup::Invisible { closed: true }, at..end + marker.len()),
            None => (Markup::Invisible { closed: false }, at..html.len()),
        };
        if rest.starts_with("<!--") {
            return Some(end("-->", 2));
        }
        if rest.starts_with("<![CDATA[") {
            return Some(end("]]>", 9));
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            return Some(end(">", 2));
        }
        let closing = rest.starts_with("</");
        let name_at = at + if closing { 2 } else { 1 };
        if !bytes.get(name_at).is_some_and(u8::is_ascii_alphabetic) {
            continue;
        }
        let name_end = (name_at..html.len())
            .find(|&j| {
                matches!(
                    bytes[j],
                    b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' | b'/' | b'>'
                )
            })
            .unwrap_or(html.len());
        let name = html[name_at..name_end].to_ascii_lowercase();
        let Some((attrs, tag_end)) = attributes(html, name_end) else {
            continue;
        };
        let markup = if closing {
            Markup::EndTag(name)
        } else {
            Markup::StartTag(StartTag { name, attrs })
        };
        return Some((markup, at..tag_end));
    }
}

/// The attributes of a tag from `from` to its `>` (HTML's tokenizer, leniently:
/// `/` and whitespace between attributes, values quoted or not), and the offset
/// past the `>`; `None` when the tag does not end.
fn attributes(html: &str, from: usize) -> Option<(Vec<(String, String)>, usize)> {
    let bytes = html.as_bytes();
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C');
    let mut attrs = Vec::new();
    let mut i = from;
    loop {
        while bytes.get(i).is_some_and(|&b| is_space(b) || b == b'/') {
            i += 1;
        }
        if *bytes.get(i)? == b'>' {
            return Some((attrs, i + 1));
        }
        let name_start = i;
        i += 1;
        while bytes
            .get(i)
            .is_some_and(|&b| !is_space(b) && !matches!(b, b'/' | b'>' | b'='))
        {
            i += 1;
        }
        let name = html[name_start..i].to_ascii_lowercase();
        while bytes.get(i).copied().is_some_and(is_space) {
            i += 1;
        }
        let mut value = "";
        if bytes.get(i) == Some(&b'=') {
            i += 1;
            while bytes.get(i).copied().is_some_and(is_space) {
                i += 1;
            }
            match bytes.get(i)? {
                &quote @ (b'"' | b'\'') => {
                    let end = i + 1 + html[i + 1..].find(char::from(quote))?;
                    value = &html[i + 1..end];
                    i = end + 1;
                }
                _ => {
                    let start = i;
                    while bytes.get(i).is_some_and(|&b| !is_space(b) && b != b'>') {
                        i += 1;
                    }
                    value = &html[start..i];
                }
            }
        }
        attrs.push((name, decode_references(value)));
    }
}

/// `value` with HTML character references decoded: numeric ones, and the named
/// ones that can spell a scheme, a style or a boolean (`&colon;`, `&Tab;`, ...).
fn decode_references(value: &str) -> String {
    if !value.contains('&') {
        return value.to_owned();
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match reference(rest) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character a reference at the start of `text` (`&...`) stands for, and
/// the reference's length.
fn reference(text: &str) -> Option<(char, usize)> {
    let body = &text[1..];
    if let Some(number) = body.strip_prefix('#') {
        let (digits, radix, skip) = match number.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 3),
            None => (number, 10, 2),
        };
        let len = digits
            .find(|c: char| !c.is_digit(radix))
            .unwrap_or(digits.len());
        if len == 0 || len > 8 {
            return None;
        }
        let code = u32::from_str_radix(&digits[..len], radix).ok()?;
        let c = char::from_u32(code)
            .filter(|c| *c != '\0')
            .unwrap_or('\u{FFFD}');
        let semicolon = usize::from(digits[len..].starts_with(';'));
        return Some((c, skip + len + semicolon));
    }
    const NAMED: &[(&str, char)] = &[
        ("amp;", '&'),
        ("lt;", '<'),
        ("gt;", '>'),
        ("quot;", '"'),
        ("apos;", '\''),
        ("colon;", ':'),
        ("semi;", ';'),
        ("Tab;", '\t'),
        ("NewLine;", '\n'),
        ("nbsp;", '\u{a0}'),
        ("lpar;", '('),
        ("rpar;", ')'),
        ("sol;", '/'),
        ("bsol;", '\\'),
        ("excl;", '!'),
        ("period;", '.'),
        ("comma;", ','),
        ("hyphen;", '-'),
        ("dash;", '-'),
        ("lowbar;", '_'),
        ("equals;", '='),
        ("amp", '&'),
    ];
    NAMED
        .iter()
        .find(|(name, _)| body.starts_with(name))
        .map(|(name, c)| (*c, 1 + name.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_references_are_read_leniently() {
        let (markup, range) =
            next_markup("x <DIV/Hidden data-a = 'a>b' style=display:none>", 0).unwrap();
        assert_eq!(range, 2..48);
        let Markup::StartTag(tag) = markup else {
            panic!("{markup:?}")
        };
        assert_eq!(tag.name, "div");
        assert!(tag.hides());
        assert_eq!(tag.attr("data-a"), Some("a>b"));
        assert_eq!(next_markup("a < b <3 <a", 0), None);
        assert_eq!(
            decode_references("a&colon;b&#58;c&#x3A&amp;d&bogus;"),
            "a:b:c:&d&bogus;"
        );
        assert_eq!(plain_css("display:/* x */none !IMPORTANT"), "display:none ");
    }
}
