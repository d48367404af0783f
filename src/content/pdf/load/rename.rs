//! Two keys lopdf acts on by itself while it loads a file, renamed in a copy of
//! the file so that every object stream is read by us, within the document's
//! budgets, and never by lopdf's own object-stream reader (which parses every
//! index entry at its offset, however many share one).
//!
//! - `/Encrypt`: lopdf's loader for encrypted files reads object streams itself
//!   and calls no filter. Renamed, the file loads like any other (strings and
//!   streams still encrypted); the trailer's key is put back and the document
//!   decrypted afterwards.
//! - `/Length` followed by a reference (`12 0 R`): lopdf resolves it while it
//!   parses the stream, and a length kept in an object stream makes it read
//!   that object stream. Renamed, lopdf keeps the stream's position only; its
//!   data is read once the length can be looked up in what was loaded.
//!
//! The scan is lexical and knows no context, so it finds these names wherever
//! lopdf could read one (in strings, comments, stream data too); each is
//! overwritten in place by a mark of the same length, so every offset in the
//! file stays valid. A mark is the name's first letters, then `0xFF` bytes:
//! no producer writes such a name.

use std::borrow::Cow;

/// The mark of a renamed `/Encrypt` (then `0xFF` to the name's length).
pub(super) const ENCRYPT_MARK: &[u8] = b"Encryp\xff";
/// The mark of a renamed `/Length` (then `0xFF` to the name's length).
pub(super) const LENGTH_MARK: &[u8] = b"Lengt\xff";

/// A copy of the file with the names renamed, and which were.
#[derive(Debug)]
pub(super) struct Renamed<'a> {
    pub(super) bytes: Cow<'a, [u8]>,
    /// An `/Encrypt` was renamed.
    pub(super) encrypt: bool,
}

/// Whether a dictionary key is `mark` (a renamed name).
pub(super) fn is_mark(key: &[u8], mark: &[u8]) -> bool {
    key.strip_prefix(mark)
        .is_some_and(|rest| rest.iter().all(|&b| b == 0xFF))
}

/// `bytes` with every `/Encrypt` and every `/Length` that a reference follows
/// renamed (borrowed as is when there is neither).
pub(super) fn rename(bytes: &[u8]) -> Renamed<'_> {
    let mut out: Cow<'_, [u8]> = Cow::Borrowed(bytes);
    let mut encrypt = false;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'/', &bytes[at..]) {
        let start = at + found + 1;
        let (name, end) = name(bytes, start);
        at = end.max(start);
        let mark = if name == b"Encrypt" {
            encrypt = true;
            ENCRYPT_MARK
        } else if name == b"Length" && reference_follows(&bytes[end..]) {
            LENGTH_MARK
        } else {
            continue;
        };
        let raw = &mut out.to_mut()[start..end];
        raw.fill(0xFF);
        raw[..mark.len()].copy_from_slice(mark);
    }
    Renamed {
        bytes: out,
        encrypt,
    }
}

/// The name starting at `start` (just after its `/`), decoded as lopdf decodes
/// it (`#` and two hex digits stand for a byte; any other `#` ends it), and
/// where its raw text ends. Names longer than any we look for are cut short:
/// they can not match.
fn name(bytes: &[u8], start: usize) -> (Vec<u8>, usize) {
    let mut decoded = Vec::new();
    let mut long = false;
    let mut i = start;
    while i < bytes.len() && is_regular(bytes[i]) {
        let byte = if bytes[i] == b'#' {
            match (
                bytes.get(i + 1).and_then(|&c| hex(c)),
                bytes.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(high), Some(low)) => {
                    i += 3;
                    high << 4 | low
                }
                _ => break,
            }
        } else {
            i += 1;
            bytes[i - 1]
        };
        if decoded.len() < 16 {
            decoded.push(byte);
        } else {
            long = true;
        }
    }
    if long {
        decoded.clear();
    }
    (decoded, i)
}

/// Whether `rest` starts with an indirect reference as lopdf reads one (white
/// space and comments, digits, white space, digits, white space, `R`), number
/// sizes aside: a reference lopdf would refuse for a too large number is
/// renamed too, which costs nothing.
fn reference_follows(rest: &[u8]) -> bool {
    let rest = space(rest);
    let Some(rest) = digits(rest) else {
        return false;
    };
    let rest = space(rest);
    let Some(rest) = digits(rest) else {
        return false;
    };
    space(rest).first() == Some(&b'R')
}

fn digits(input: &[u8]) -> Option<&[u8]> {
    let n = input.iter().take_while(|c| c.is_ascii_digit()).count();
    (n > 0).then(|| &input[n..])
}

/// White space and comments, as lopdf's parser skips them (a comment ends with
/// its end of line).
fn space(mut input: &[u8]) -> &[u8] {
    loop {
        let blanks = input.iter().take_while(|&&c| is_whitespace(c)).count();
        if blanks > 0 {
            input = &input[blanks..];
            continue;
        }
        if input.first() == Some(&b'%') {
            let body = input
                .iter()
                .take_while(|&&c| c != b'\r' && c != b'\n')
                .count();
            if body < input.len() {
                input = &input[body..];
                continue;
            }
        }
        return input;
    }
}

fn is_whitespace(c: u8) -> bool {
    b" \t\n\r\0\x0C".contains(&c)
}

fn is_regular(c: u8) -> bool {
    !is_whitespace(c) && !b"()<>[]{}/%".contains(&c)
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|v| v as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(input: &[u8]) -> (Vec<u8>, bool) {
        let renamed = rename(input);
        (renamed.bytes.into_owned(), renamed.encrypt)
    }

    #[test]
    fn encrypt_is_renamed_in_place_however_it_is_spelled() {
        let (out, encrypt) = renamed(b"<< /Encrypt 5 0 R /Root 1 0 R >>");
        assert!(encrypt);
        assert_eq!(out, b"<< /Encryp\xff 5 0 R /Root 1 0 R >>");
        let (out, encrypt) = renamed(b"<</Encr#79pt 5 0 R>>");
        assert!(encrypt);
        assert_eq!(out, b"<</Encryp\xff\xff\xff 5 0 R>>");
        assert!(is_mark(b"Encryp\xff\xff\xff", ENCRYPT_MARK));
        assert!(!is_mark(b"Encryp\xffx", ENCRYPT_MARK));
        // A `#` that no two hex digits follow ends the name, for lopdf too.
        let (out, encrypt) = renamed(b"<< /EncryptMetadata false /Encrypt#7 >>");
        assert!(encrypt);
        assert_eq!(out, b"<< /EncryptMetadata false /Encryp\xff#7 >>");
        let (_, encrypt) = renamed(b"<< /EncryptX 1 /EncryptEncryptEncrypt 2 >>");
        assert!(!encrypt);
    }

    #[test]
    fn only_a_length_given_by_reference_is_renamed() {
        let input = b"<< /Length 12 0 R >> << /Length 12 >> << /Length%c\n 3 % d\n0R>>";
        let (out, _) = renamed(input);
        assert_eq!(
            out,
            b"<< /Lengt\xff 12 0 R >> << /Length 12 >> << /Lengt\xff%c\n 3 % d\n0R>>"
        );
        let (out, _) = renamed(b"/Length 1 0 S /Length 1 R /Length");
        assert_eq!(out, b"/Length 1 0 S /Length 1 R /Length");
        assert!(matches!(rename(b"no names").bytes, Cow::Borrowed(_)));
    }
}
