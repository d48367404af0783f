//! The members of an object stream (PDF 32000 7.5.7), read by us instead of by
//! lopdf's `ObjectStream`, which parses each entry of the index from its offset
//! to the end of the stream: 64 entries naming one offset that holds an array of
//! four million numbers build that array 64 times (8.7 KB on the wire, gigabytes
//! in memory).
//!
//! Here each offset is parsed once, by the first entry that names it, and only
//! from its own bytes: up to the next offset of the index. A member whose object
//! runs past that point is not a member of any stream a producer writes, and
//! fails to parse. Before a member is parsed, the objects its bytes could at
//! most make are weighed against what the document has left, so no single member
//! can outgrow the budget either. The parsing itself is lopdf's, through a
//! one-entry object stream of just those bytes.

use std::collections::BTreeSet;
use std::str::FromStr;

use lopdf::{Dictionary, Object, ObjectId, ObjectStream, Stream};

use crate::content::pdf::quota::{Quota, weight};

/// What stops reading an object stream short of its members.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// It does not decode, or its index does not read: lopdf skips such a
    /// stream too.
    Unreadable,
    /// It decompresses past its cap or the document's budget, or its members
    /// would weigh more than the document has left.
    OverBudget,
}

/// Bytes one object stream may decompress to.
pub(super) const MAX_OBJECT_STREAM_BYTES: usize = 64 << 20;

/// The members of `container` (decrypted), each offset parsed once, in index
/// order.
pub(super) fn members(
    container: &Stream,
    quota: &Quota,
) -> Result<Vec<(ObjectId, Object)>, Refused> {
    if container.content.is_empty() {
        return Ok(Vec::new());
    }
    let content = match quota.plain_content(container, MAX_OBJECT_STREAM_BYTES) {
        Ok(content) => content,
        Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            return Err(Refused::OverBudget);
        }
        Err(_) => return Err(Refused::Unreadable),
    };
    if content.is_empty() {
        return Ok(Vec::new());
    }
    let first = container
        .dict
        .get(b"First")
        .and_then(Object::as_i64)
        .ok()
        .and_then(|first| usize::try_from(first).ok())
        .ok_or(Refused::Unreadable)?;
    let index = content.get(..first).ok_or(Refused::Unreadable)?;
    let index = std::str::from_utf8(index).map_err(|_| Refused::Unreadable)?;
    // As lopdf reads the index: a comment runs to its line's end; a pair with a
    // part that is not a number is skipped.
    let numbers: Vec<Option<u32>> = index
        .split(['\r', '\n'])
        .flat_map(|line| {
            line.split('%')
                .next()
                .unwrap_or_default()
                .split_whitespace()
        })
        .map(|number| u32::from_str(number).ok())
        .collect();
    let entries: Vec<(u32, usize)> = numbers
        .chunks_exact(2)
        .filter_map(|pair| {
            let offset = first.checked_add(usize::try_from(pair[1]?).ok()?)?;
            (offset < content.len()).then_some((pair[0]?, offset))
        })
        .collect();
    let offsets: BTreeSet<usize> = entries.iter().map(|&(_, offset)| offset).collect();
    let mut parsed = BTreeSet::new();
    let mut members = Vec::new();
    for (number, offset) in entries {
        if !parsed.insert(offset) {
            continue;
        }
        let end = offsets
            .range(offset + 1..)
            .next()
            .copied()
            .unwrap_or(content.len());
        let bytes = &content[offset..end];
        let most = potential_objects(bytes)
            .saturating_mul(std::mem::size_of::<Object>())
            .saturating_add(bytes.len());
        if !quota.load_weight(most) {
            return Err(Refused::OverBudget);
        }
        if let Some(object) = parse(number, bytes) {
            quota.refund_weight(most.saturating_sub(weight(&object)));
            members.push(((number, 0), object));
        } else {
            quota.refund_weight(most);
        }
    }
    Ok(members)
}

/// The object in `bytes`, parsed by lopdf as the one member of an object stream.
fn parse(number: u32, bytes: &[u8]) -> Option<Object> {
    let header = format!("{number} 0\n");
    let mut content = Vec::with_capacity(header.len() + bytes.len());
    content.extend_from_slice(header.as_bytes());
    content.extend_from_slice(bytes);
    let mut dict = Dictionary::new();
    dict.set("Type", Object::Name(b"ObjStm".to_vec()));
    dict.set("N", 1);
    dict.set("First", i64::try_from(header.len()).ok()?);
    let single = ObjectStream::new(&Stream::new(dict, content)).ok()?;
    single.objects.into_values().next()
}

/// At most how many objects lopdf could make of `bytes`, read from any point:
/// one per string, hex string, dictionary, array and name start, and for a run
/// of other regular characters one per two of them (`1-1-1` is three numbers).
/// Counting knows no context (a string's text is counted too), so it only ever
/// counts more than there are.
pub(super) fn potential_objects(bytes: &[u8]) -> usize {
    let mut count = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if b" \t\n\r\0\x0C".contains(&c) {
            i += 1;
        } else if b"(<[".contains(&c) {
            count += 1;
            i += 1;
        } else if c == b'/' {
            count += 1;
            i += 1;
            while i < bytes.len() && is_regular(bytes[i]) {
                i += 1;
            }
        } else if !is_regular(c) {
            i += 1;
        } else {
            let run = bytes[i..].iter().take_while(|&&c| is_regular(c)).count();
            count += run.div_ceil(2);
            i += run;
        }
    }
    count
}

fn is_regular(c: u8) -> bool {
    !b" \t\n\r\0\x0C()<>[]{}/%".contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(index: &str, body: &str) -> Stream {
        let mut dict = Dictionary::new();
        dict.set("Type", Object::Name(b"ObjStm".to_vec()));
        dict.set("N", 1);
        dict.set("First", index.len() as i64);
        Stream::new(dict, format!("{index}{body}").into_bytes())
    }

    #[test]
    fn members_are_read_each_from_its_own_bytes() {
        let index = "11 0 12 8 ";
        let stream = container(index, "<</A 1>>[1 2 3]");
        let members = members(&stream, &Quota::new(0)).unwrap();
        assert_eq!(
            members,
            vec![
                (
                    (11, 0),
                    Object::Dictionary(Dictionary::from_iter([("A", Object::Integer(1))]))
                ),
                ((12, 0), Object::Array(vec![1.into(), 2.into(), 3.into()])),
            ]
        );
    }

    #[test]
    fn an_offset_named_twice_is_parsed_once() {
        let index = "11 0 12 0 13 0 ";
        let stream = container(index, "[0 0 0 0]");
        let members = members(&stream, &Quota::new(0)).unwrap();
        assert_eq!(members.len(), 1);
        assert_eq!(members[0].0, (11, 0));
    }

    #[test]
    fn an_entry_pointing_inside_another_does_not_read_past_the_next_offset() {
        // Entry 12 points inside 11's array: 11 is cut at 12's offset and fails;
        // 12 is read from its own bytes only.
        let index = "11 0 12 1 ";
        let stream = container(index, "[[0 0 0]]");
        let members = members(&stream, &Quota::new(0)).unwrap();
        assert_eq!(members.len(), 1);
        assert_eq!(members[0].0, (12, 0));
    }

    #[test]
    fn members_heavier_than_the_budget_are_refused_before_parsing() {
        let index = "11 0 ";
        let body = format!("[{}]", "0 ".repeat(4_000_000));
        let stream = container(index, &body);
        let quota = Quota::new(0);
        assert_eq!(members(&stream, &quota), Err(Refused::OverBudget));
    }

    #[test]
    fn potential_objects_never_undercounts() {
        assert_eq!(potential_objects(b"[1 2 3]"), 4);
        assert_eq!(potential_objects(b"1-1-1"), 3);
        assert_eq!(potential_objects(b"/A/B/C"), 3);
        assert_eq!(potential_objects(b"truefalse"), 5);
        assert_eq!(potential_objects(b"(a b) <00>"), 5);
    }
}
