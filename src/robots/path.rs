//! Robots hardening for normalizing servers (an extension, off
//! unless `[tools.webfetch.robots] normalize_paths = true`).
//!
//! RFC 9309 matches rules against the path literally, so with `Disallow: /private`
//! the paths `//private`, `/x/..%2fprivate` and, against `Disallow: /secret/`,
//! `/secret%2Fx` are allowed. A server that normalizes before routing serves the
//! disallowed page for them: nginx merges slashes by default and, like many
//! servers and frameworks, decodes `%2F` and then resolves `..`. With the switch on,
//! each rule is also matched against the path as such a server would route it
//! ([`normalize_path`]), and a path is disallowed if either form is
//! ([`super::Rules::is_allowed_normalized`]).
//!
//! `%5C` (an encoded backslash) is a separator here too: IIS and other servers on
//! Windows treat a decoded `\` as `/`, so `/x%5C..%5Cprivate` reaches `/private`
//! there. On nginx or Apache a backslash is an ordinary byte, so counting it can
//! only refuse a path holding an encoded backslash that the literal rules allow:
//! rare, and the cheaper mistake for a switch whose purpose is to refuse what
//! some server would serve from a disallowed path.

/// The path a normalizing server routes: in the part before the first
/// `?`, `%2F` and `%5C` (either case) become `/`, runs of `/` become one, and dot
/// segments are removed as in RFC 3986 5.2.4 (`.` and `..`, also spelled with
/// `%2E`, as WHATWG URL parsing counts them). The `?query` is kept as it is. The
/// result starts with `/`, and normalizing it again changes nothing.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn normalize_path(path_and_query: &str) -> String {
    let (path, query) = match path_and_query.find('?') {
        Some(at) => path_and_query.split_at(at),
        None => (path_and_query, ""),
    };
    let decoded = decode_separators(path);
    let relative = decoded.strip_prefix('/').unwrap_or(&decoded);
    let mut kept: Vec<&str> = Vec::new();
    let mut trailing_slash = false;
    for segment in relative.split('/') {
        trailing_slash = match segment_kind(segment) {
            Segment::Empty | Segment::Dot => true,
            Segment::DotDot => {
                kept.pop();
                true
            }
            Segment::Name => {
                kept.push(segment);
                false
            }
        };
    }
    let mut out = String::with_capacity(path_and_query.len());
    for segment in &kept {
        out.push('/');
        out.push_str(segment);
    }
    if trailing_slash || kept.is_empty() {
        out.push('/');
    }
    out.push_str(query);
    out
}

/// `path` with every `%2F`, `%2f`, `%5C` and `%5c` turned into `/`.
fn decode_separators(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or("");
        if ["%2F", "%5C"]
            .iter()
            .any(|separator| escape.eq_ignore_ascii_case(separator))
        {
            out.push('/');
            rest = &rest[at + 3..];
        } else {
            out.push('%');
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// What a path segment is to dot-segment removal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    /// Between two adjacent `/` (or after the last one).
    Empty,
    /// `.` or `%2E`.
    Dot,
    /// `..`, `.%2E`, `%2E.` or `%2E%2E`.
    DotDot,
    /// Anything else.
    Name,
}

fn segment_kind(segment: &str) -> Segment {
    let dot = |text: &str| text == "." || text.eq_ignore_ascii_case("%2e");
    if segment.is_empty() {
        Segment::Empty
    } else if dot(segment) {
        Segment::Dot
    } else if ["..", ".%2e", "%2e.", "%2e%2e"]
        .iter()
        .any(|spelling| segment.eq_ignore_ascii_case(spelling))
    {
        Segment::DotDot
    } else {
        Segment::Name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_paths_table() {
        let cases: &[(&str, &str)] = &[
            // Unchanged.
            ("/", "/"),
            ("/private", "/private"),
            ("/a/b/", "/a/b/"),
            ("/a%20b/c%3Fd", "/a%20b/c%3Fd"),
            ("/%", "/%"),
            ("/%2", "/%2"),
            ("/100%", "/100%"),
            // Runs of slashes.
            ("//private", "/private"),
            ("/a///b//", "/a/b/"),
            ("///", "/"),
            // Encoded separators.
            ("/secret%2Fx", "/secret/x"),
            ("/secret%2fx", "/secret/x"),
            ("/a%2F%2Fb", "/a/b"),
            ("/x%5C..%5Cprivate", "/private"),
            ("/a%5cb", "/a/b"),
            ("/%252F", "/%252F"),
            ("/%%2F", "/%/"),
            // Dot segments (RFC 3986 5.2.4), also percent-encoded.
            ("/x/..%2fprivate", "/private"),
            ("/x/../private", "/private"),
            ("/x/%2e%2e/private", "/private"),
            ("/x/.%2E/private", "/private"),
            ("/x/%2E./private", "/private"),
            ("/./private", "/private"),
            ("/%2e/private", "/private"),
            ("/a/b/..", "/a/"),
            ("/a/.", "/a/"),
            ("/..", "/"),
            ("/../../a", "/a"),
            ("/a/..b/c", "/a/..b/c"),
            ("/a/...", "/a/..."),
            ("/a/%2e%2e%2e", "/a/%2e%2e%2e"),
            // The query is left alone.
            ("//a?x=//y/../z%2F", "/a?x=//y/../z%2F"),
            ("/a%2Fb?", "/a/b?"),
            ("/?q", "/?q"),
            // Not a canonical path, still an answer.
            ("", "/"),
            ("private", "/private"),
            ("?q", "/?q"),
        ];
        for (path, expected) in cases {
            assert_eq!(normalize_path(path), *expected, "{path}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]

        /// Any text: an answer that starts with `/`, never a panic; normalizing it
        /// again changes nothing.
        #[test]
        fn normalizing_never_panics_and_is_idempotent(
            path in proptest::prop_oneof![
                "\\PC{0,24}",
                "(/|\\.|%|2|e|E|f|F|5|c|C|a|\\?){0,24}",
            ],
        ) {
            let once = normalize_path(&path);
            proptest::prop_assert!(once.starts_with('/'), "{:?} -> {:?}", path, once);
            proptest::prop_assert_eq!(normalize_path(&once), once.clone(), "{:?}", path);
        }
    }
}
