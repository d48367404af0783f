//! Whitespace normalisation of the final Markdown (FR-WF-13b, FR-WF-EXT-WS-01).

use std::borrow::Cow;

/// Normalises whitespace (FR-WF-13b) without touching code (FR-WF-EXT-WS-01):
///
/// 1. CRLF becomes LF everywhere, code included (a lone CR is left alone: 13b names
///    CRLF only).
/// 2. Runs of more than two blank lines become exactly two, outside code fences.
/// 3. Trailing whitespace (Unicode `White_Space`) is trimmed from each line outside
///    code fences; the fence lines themselves are trimmed too.
/// 4. The result ends with exactly one newline; a document with no non-blank line
///    is the empty string (nothing to terminate).
///
/// A code fence is a line starting with up to three spaces and then at least three
/// backticks or tildes (an opening backtick fence's info string has no backtick);
/// it closes at a line of the same character, at least as long, followed only by
/// whitespace, or at the end of the document (CommonMark). Lines in between are
/// copied as they are.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn normalize_whitespace(markdown: &str) -> String {
    let text = if markdown.contains('\r') {
        Cow::Owned(markdown.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(markdown)
    };
    let mut out = String::with_capacity(text.len() + 1);
    let mut fence: Option<(u8, usize)> = None;
    let mut blank_run = 0usize;
    for (line, is_last) in lines(&text) {
        if let Some((ch, len)) = fence {
            if closes_fence(line, ch, len) {
                fence = None;
                push_line(&mut out, line.trim_end());
            } else if !(is_last && line.is_empty()) {
                // Verbatim, except a final empty piece after the last newline.
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() || blank_run > 0 {
            for _ in 0..blank_run.min(2) {
                out.push('\n');
            }
        }
        blank_run = 0;
        fence = opens_fence(trimmed);
        push_line(&mut out, trimmed);
    }
    if out.trim().is_empty() {
        return String::new();
    }
    // Step 4: exactly one newline at the end (a fence left open at the end may have
    // copied blank code lines; only trailing newlines are folded).
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The pieces of `text` between newlines, as `str::split('\n')` gives them, each
/// with whether it is the last (the piece after the final newline, maybe empty).
/// `memchr` finds the newlines: on a page of short lines, `split` was a few
/// percent of an extraction.
fn lines(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut newlines = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = Some(0);
    std::iter::from_fn(move || {
        let from = start?;
        Some(match newlines.next() {
            Some(end) => {
                start = Some(end + 1);
                (&text[from..end], false)
            }
            None => {
                start = None;
                (&text[from..], true)
            }
        })
    })
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

/// The fence a line opens: its character and length.
fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line.as_bytes()[indent..];
    let ch = *rest.first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.iter().take_while(|&&b| b == ch).count();
    if len < 3 {
        return None;
    }
    if ch == b'`' && rest[len..].contains(&b'`') {
        return None;
    }
    Some((ch, len))
}

fn closes_fence(line: &str, ch: u8, len: usize) -> bool {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return false;
    }
    let rest = &line.as_bytes()[indent..];
    let run = rest.iter().take_while(|&&b| b == ch).count();
    run >= len && std::str::from_utf8(&rest[run..]).is_ok_and(|tail| tail.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_wf_ext_03_crlf_trailing_blank_lines() {
        let input = "# T  \r\n\r\npara \t\r\n\r\n\r\n\r\n\r\nnext\r\n\r\n\r\n";
        assert_eq!(normalize_whitespace(input), "# T\n\npara\n\n\nnext\n");
    }

    #[test]
    fn two_blank_lines_are_kept_three_collapse() {
        assert_eq!(normalize_whitespace("a\n\n\nb"), "a\n\n\nb\n");
        assert_eq!(normalize_whitespace("a\n\n\n\n\nb"), "a\n\n\nb\n");
        assert_eq!(normalize_whitespace("a\n \n\t\n  \n\nb"), "a\n\n\nb\n");
    }

    #[test]
    fn ext_ws_01_code_fences_are_exempt() {
        let input = "text  \n```py\r\ndef f():  \r\n\r\n\r\n\r\n    return 1\t\n```\nafter  \n";
        assert_eq!(
            normalize_whitespace(input),
            "text\n```py\ndef f():  \n\n\n\n    return 1\t\n```\nafter\n"
        );
    }

    #[test]
    fn longer_fences_and_tildes() {
        let input = "````\n```  \ninside  \n````\nout  \n~~~\nx  \n~~~~\n";
        assert_eq!(
            normalize_whitespace(input),
            "````\n```  \ninside  \n````\nout\n~~~\nx  \n~~~~\n"
        );
        // A backtick in the info string means it is not a fence.
        assert_eq!(normalize_whitespace("``` a`b  \nc  \n"), "``` a`b\nc\n");
    }

    #[test]
    fn unclosed_fence_runs_to_the_end() {
        assert_eq!(normalize_whitespace("```\ncode  \n\n\n\n"), "```\ncode  \n");
    }

    #[test]
    fn lines_are_the_pieces_split_gives() {
        for text in ["", "a", "\n", "a\n", "\na", "a\n\nb\n", "é\nü\n\n"] {
            let pieces: Vec<&str> = lines(text).map(|(line, _)| line).collect();
            assert_eq!(pieces, text.split('\n').collect::<Vec<_>>(), "{text:?}");
            let last: Vec<bool> = lines(text).map(|(_, last)| last).collect();
            assert_eq!(last.iter().filter(|&&l| l).count(), 1, "{text:?}");
            assert_eq!(last.last(), Some(&true), "{text:?}");
        }
    }

    #[test]
    fn ends_with_exactly_one_newline() {
        assert_eq!(normalize_whitespace("a"), "a\n");
        assert_eq!(normalize_whitespace("a\n\n\n"), "a\n");
        assert_eq!(normalize_whitespace(""), "");
        assert_eq!(normalize_whitespace(" \n\t\n"), "");
        assert_eq!(normalize_whitespace("\n\nlead"), "\n\nlead\n");
    }
}
