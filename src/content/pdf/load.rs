//! A PDF file to a lopdf [`Document`], within the document's [`Quota`] and the
//! call's read budget.
//!
//! lopdf loads a file eagerly (every object of the cross-reference table, every
//! object stream) and gives a caller one hook: a filter called with each object
//! it has parsed, before it keeps it or reads it as an object stream. That hook
//! is enough to bound what lopdf builds, so we keep lopdf's loader (its
//! cross-reference reading and repair are what read damaged files) rather than
//! write our own; the filter:
//!
//! - checks the call's budget at every object, and stops the load (an unwind
//!   that only this module catches) when the call ended or its deadline passed;
//! - weighs every object against the document's load budget, and stops the load
//!   past it;
//! - takes every object stream out of lopdf's hands: we read the members
//!   ourselves ([`objstm`]), each offset once, from its own bytes, within the
//!   budgets.
//!
//! Two paths of lopdf's loader would still read object streams without the
//! filter: the one for encrypted files, and the resolution of a stream's
//! `/Length` given by reference. [`rename`] turns both off in a copy of the
//! file; the document is decrypted and those streams' data read here, after the
//! load, as lopdf would have.
//!
//! What remains lopdf's own is linear in the file: one object is parsed from
//! the file's bytes once per cross-reference entry, and what it builds is at
//! most some 64 bytes per byte of input (an array of one-digit numbers); the
//! weight budget stops the load after any object that passes it. The front
//! doors run the reader in a worker process whose memory is capped
//! (`pdf/worker.rs`), which covers that last object and any bug of a parser.

mod objstm;
mod rename;

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use lopdf::xref::{XrefEntry, XrefRecovery};
use lopdf::{Document, LoadOptions, Object, ObjectId};

use self::rename::{ENCRYPT_MARK, LENGTH_MARK, is_mark};
use super::quota::Quota;
use crate::budget;

/// Bytes a cross-reference stream may decompress to (lopdf decodes those
/// itself, one per revision).
const MAX_XREF_STREAM_BYTES: usize = 64 << 20;

/// Why a load did not give a document.
#[derive(Debug)]
pub(super) enum LoadFailure {
    /// A password is needed, or the security handler is one lopdf lacks.
    Encrypted,
    /// lopdf could not read it: its error.
    Malformed(String),
    /// It asks for more than the document's budget: what for.
    OverBudget(&'static str),
    /// The call ended or its deadline passed.
    Interrupted,
}

/// Why the filter stopped a load, carried by the unwind out of lopdf.
#[derive(Debug, Clone, Copy)]
enum Stop {
    Interrupted,
    OverBudget,
}

/// The filter's state while lopdf loads on this thread.
struct Loading {
    weight_left: usize,
    /// Object streams, taken out of the load, with their ids.
    object_streams: Vec<(ObjectId, Object)>,
}

thread_local! {
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
}

/// Loads `bytes` (the whole file, `%PDF-` anywhere in it) within `quota`.
pub(super) fn load(bytes: &[u8], quota: &Quota) -> Result<Document, LoadFailure> {
    let renamed = rename::rename(bytes);
    let doc = load_once(bytes, &renamed.bytes, renamed.encrypt, false, quota)?;
    let repairable = doc.xref_recovery != Some(XrefRecovery::Reconstructed);
    if page_tree_loaded(&doc) || !repairable {
        return Ok(doc);
    }
    // As lopdf does for a load without a filter: a file whose cross-reference
    // data reads but whose page tree does not load is read again with the table
    // rebuilt by scanning for objects, and that one is kept if it has pages.
    match load_once(bytes, &renamed.bytes, renamed.encrypt, true, quota) {
        Ok(rebuilt)
            if rebuilt.xref_recovery == Some(XrefRecovery::Reconstructed)
                && page_tree_loaded(&rebuilt) =>
        {
            Ok(rebuilt)
        }
        Err(failure @ (LoadFailure::Interrupted | LoadFailure::OverBudget(_))) => Err(failure),
        _ => Ok(doc),
    }
}

/// One pass of lopdf's loader over `renamed` (its cross-reference table read
/// as written, or rebuilt), then what the renaming left to do.
fn load_once(
    original: &[u8],
    renamed: &[u8],
    encrypt_renamed: bool,
    reconstruct: bool,
    quota: &Quota,
) -> Result<Document, LoadFailure> {
    let options = LoadOptions {
        filter: Some(filter),
        max_decompressed_size: Some(MAX_XREF_STREAM_BYTES),
        force_reconstruct: reconstruct,
        ..LoadOptions::default()
    };
    let _installed = Installed::new(quota.weight_left());
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        Document::load_mem_with_options(renamed, options)
    }));
    let state = LOADING.with(|slot| slot.borrow_mut().take());
    let Some(state) = state else {
        return Err(LoadFailure::OverBudget("load state"));
    };
    quota.set_weight_left(state.weight_left);
    let mut doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_)))
        | Ok(Err(lopdf::Error::UnsupportedSecurityHandler(_))) => {
            return Err(LoadFailure::Encrypted);
        }
        Ok(Err(error)) => return Err(LoadFailure::Malformed(error.to_string())),
        Err(payload) => {
            return match payload.downcast_ref::<Stop>() {
                Some(Stop::Interrupted) => Err(LoadFailure::Interrupted),
                Some(Stop::OverBudget) => Err(LoadFailure::OverBudget("objects")),
                // A panic of the parser: `pdf::read` reports it.
                None => resume_unwind(payload),
            };
        }
    };
    if encrypt_renamed {
        decrypt(&mut doc)?;
    }
    let encryption = doc.encryption_state.clone();
    for (id, mut container) in state.object_streams {
        check()?;
        if let Some(state) = &encryption
            && lopdf::encryption::decrypt_object(state, id, &mut container).is_err()
        {
            continue;
        }
        let Object::Stream(container) = container else {
            continue;
        };
        match objstm::members(&container, quota) {
            Ok(members) => add_members(&mut doc, id.0, members),
            Err(objstm::Refused::OverBudget) => {
                return Err(LoadFailure::OverBudget("object streams"));
            }
            Err(objstm::Refused::Unreadable) => {}
        }
    }
    read_stream_data(&mut doc, original, quota)?;
    Ok(doc)
}

/// lopdf's filter: see the module doc. A plain function (lopdf takes no
/// closure), so its state is the thread's.
fn filter(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    enum Outcome {
        Keep,
        Taken,
        Stop(Stop),
    }
    let outcome = LOADING.with(|slot| {
        let mut slot = slot.borrow_mut();
        // No state: lopdf called us on another thread (a build with its `rayon`
        // feature). Nothing is kept unchecked.
        let Some(state) = slot.as_mut() else {
            return Outcome::Stop(Stop::OverBudget);
        };
        if budget::interrupted() {
            return Outcome::Stop(Stop::Interrupted);
        }
        let weight = super::quota::weight(object);
        if weight > state.weight_left {
            return Outcome::Stop(Stop::OverBudget);
        }
        state.weight_left -= weight;
        match object {
            Object::Stream(stream) if stream.dict.has_type(b"ObjStm") => {
                state
                    .object_streams
                    .push((id, std::mem::replace(object, Object::Null)));
                Outcome::Taken
            }
            // A stream whose length was renamed: its data is read after the
            // load. A byte stands in for it meanwhile, or lopdf would look for
            // the missing length itself (and log its absence).
            Object::Stream(stream)
                if stream.content.is_empty()
                    && stream.start_position.is_some()
                    && stream.dict.iter().any(|(key, _)| is_mark(key, LENGTH_MARK)) =>
            {
                stream.content = vec![b' '];
                Outcome::Keep
            }
            _ => Outcome::Keep,
        }
    });
    match outcome {
        // lopdf keeps the object it passed (as the filter left it); the one
        // returned only says "keep".
        Outcome::Keep => Some((id, Object::Null)),
        Outcome::Taken => None,
        // `resume_unwind` runs no panic hook: nothing is printed, and a fuzzer
        // does not take it for a crash.
        Outcome::Stop(stop) => resume_unwind(Box::new(stop)),
    }
}

/// The filter's state for the time of one load; removed however the load ends.
struct Installed;

impl Installed {
    fn new(weight_left: usize) -> Installed {
        LOADING.with(|slot| {
            *slot.borrow_mut() = Some(Loading {
                weight_left,
                object_streams: Vec::new(),
            });
        });
        Installed
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        LOADING.with(|slot| slot.borrow_mut().take());
    }
}

fn check() -> Result<(), LoadFailure> {
    if budget::interrupted() {
        Err(LoadFailure::Interrupted)
    } else {
        Ok(())
    }
}

/// Puts the trailer's `/Encrypt` back and decrypts the document with the empty
/// password, as lopdf's loader for encrypted files does.
fn decrypt(doc: &mut Document) -> Result<(), LoadFailure> {
    let marked: Vec<Vec<u8>> = doc
        .trailer
        .iter()
        .filter(|(key, _)| is_mark(key, ENCRYPT_MARK))
        .map(|(key, _)| key.clone())
        .collect();
    let Some(key) = marked.first() else {
        return Ok(());
    };
    let Some(value) = doc.trailer.remove(key) else {
        return Ok(());
    };
    doc.trailer.set("Encrypt", value);
    if !doc.is_encrypted() {
        // An `/Encrypt` that is not a reference to a dictionary: lopdf can not
        // decrypt such a file either.
        return Err(LoadFailure::Encrypted);
    }
    match doc.decrypt("") {
        Ok(()) => Ok(()),
        // Decrypted, with an object that did not decrypt: kept, as lopdf keeps
        // it.
        Err(_) if doc.encryption_state.is_some() => Ok(()),
        Err(_) => Err(LoadFailure::Encrypted),
    }
}

/// Adds the members of object stream `container` as lopdf would: never over an
/// object already loaded, and only those the cross-reference table places in
/// this stream or does not list at all (a free entry keeps a deleted object
/// out).
fn add_members(doc: &mut Document, container: u32, members: Vec<(ObjectId, Object)>) {
    for (id, object) in members {
        let placed_here = match doc.reference_table.get(id.0) {
            Some(XrefEntry::Compressed { container: c, .. }) => *c == container,
            Some(XrefEntry::Free | XrefEntry::UnusableFree) => false,
            Some(XrefEntry::Normal { .. }) | None => true,
        };
        if placed_here {
            doc.objects.entry(id).or_insert(object);
        }
    }
}

/// The data of the streams whose `/Length` reference was renamed: lopdf kept
/// where their data starts (and the filter a byte in its place). Read as lopdf reads a stream's data once it knows
/// the length: that many bytes, then an end of line and `endstream`; failing
/// that, the data up to the one `endstream endobj` before the next object. A
/// stream whose length can not be looked up stays empty, and one whose data can
/// not be found is dropped, as lopdf does.
fn read_stream_data(doc: &mut Document, original: &[u8], quota: &Quota) -> Result<(), LoadFailure> {
    let base = original.windows(5).position(|w| w == b"%PDF-").unwrap_or(0);
    let buffer = &original[base..];
    let mut ends: Vec<usize> = doc
        .reference_table
        .entries
        .values()
        .filter_map(|entry| match entry {
            XrefEntry::Normal { offset, .. } => Some(*offset as usize),
            _ => None,
        })
        .collect();
    ends.push(doc.xref_start);
    ends.sort_unstable();
    // Each stream lopdf left empty for a renamed length: its id, the mark and
    // the length's value.
    let pending: Vec<(ObjectId, Vec<u8>, Object)> = doc
        .objects
        .iter()
        .filter_map(|(id, object)| {
            let stream = object.as_stream().ok()?;
            let (key, value) = stream
                .dict
                .iter()
                .find(|(key, _)| is_mark(key, LENGTH_MARK))?;
            stream
                .start_position
                .is_some()
                .then(|| (*id, key.clone(), value.clone()))
        })
        .collect();
    let encryption = doc.encryption_state.clone();
    for (id, key, value) in pending {
        check()?;
        let length = match &value {
            Object::Reference(target) => doc.get_object(*target).and_then(Object::as_i64),
            other => other.as_i64(),
        };
        let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) else {
            continue;
        };
        stream.dict.remove(&key);
        stream.dict.set("Length", value);
        stream.content.clear();
        let Ok(length) = length else {
            continue;
        };
        let start = stream.start_position.unwrap_or(0);
        let bound = ends
            .get(ends.partition_point(|&end| end <= start))
            .copied()
            .unwrap_or(buffer.len())
            .min(buffer.len());
        let data = buffer
            .get(start..)
            .and_then(|rest| data_by_length(rest, length))
            .or_else(|| buffer.get(start..bound).and_then(recover_data));
        let Some(data) = data else {
            doc.objects.remove(&id);
            continue;
        };
        if !quota.load_weight(data.len()) {
            return Err(LoadFailure::OverBudget("stream data"));
        }
        stream.set_content(data.to_vec());
        if let Some(state) = &encryption
            && let Some(object) = doc.objects.get_mut(&id)
        {
            let _ = lopdf::encryption::decrypt_object(state, id, object);
        }
    }
    Ok(())
}

/// `length` bytes of `rest`, if an end of line (or none) and `endstream`
/// follow them.
fn data_by_length(rest: &[u8], length: i64) -> Option<&[u8]> {
    let length = usize::try_from(length).ok()?;
    let data = rest.get(..length)?;
    let after = &rest[length..];
    let after = after
        .strip_prefix(b"\r\n")
        .or_else(|| after.strip_prefix(b"\n"))
        .or_else(|| after.strip_prefix(b"\r"))
        .unwrap_or(after);
    after.starts_with(b"endstream").then_some(data)
}

/// The data before the one `endstream` of `input` that an end of line precedes
/// and `endobj` follows; none when there is no such `endstream`, or several.
fn recover_data(input: &[u8]) -> Option<&[u8]> {
    const ENDSTREAM: &[u8] = b"endstream";
    let mut found = None;
    for position in memchr::memmem::find_iter(input, ENDSTREAM) {
        let before = &input[..position];
        let data_end = if before.ends_with(b"\r\n") {
            position - 2
        } else if before.ends_with(b"\n") || before.ends_with(b"\r") {
            position - 1
        } else {
            continue;
        };
        let after = &input[position + ENDSTREAM.len()..];
        let blank = after
            .iter()
            .take_while(|c| b" \t\n\r\0\x0C".contains(c))
            .count();
        let Some(rest) = after[blank..].strip_prefix(b"endobj") else {
            continue;
        };
        if rest.first().is_some_and(|c| !b" \t\n\r\0\x0C".contains(c)) {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(&input[..data_end]);
    }
    found
}

/// Whether the catalog leads to the root of a page tree with `/Kids`.
fn page_tree_loaded(doc: &Document) -> bool {
    doc.catalog()
        .and_then(|catalog| catalog.get(b"Pages"))
        .and_then(Object::as_reference)
        .and_then(|root| doc.get_dictionary(root))
        .and_then(|root| root.get_deref(b"Kids", doc))
        .and_then(Object::as_array)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_data_is_found_by_length_or_by_its_end() {
        assert_eq!(
            data_by_length(b"abc\nendstream", 3),
            Some(b"abc".as_slice())
        );
        assert_eq!(data_by_length(b"abc endstream", 3), None);
        assert_eq!(
            recover_data(b"abcd\r\nendstream\nendobj\n"),
            Some(b"abcd".as_slice())
        );
        assert_eq!(
            recover_data(b"a\nendstream endobj b\nendstream endobj"),
            None
        );
    }
}
