//! What reading one PDF may spend, whatever the file asks for: the
//! document-wide budgets every stage draws from. Per-stream caps alone
//! do not bound a document: a small file can ask for the same stream, form or
//! font again and again, or for many streams each just under its cap.
//!
//! One [`Quota`] per read (per call): decompression (object streams, page
//! contents, forms, `ToUnicode` maps), the bytes the content interpreter runs
//! through (a form painted twice counts twice), and the weight of the objects
//! loaded (what lopdf builds, measured as it builds it). A stream whose
//! decompression would pass what is left fails as one over its own cap does, and
//! an attempt that failed is charged in full, so failures can not be retried for
//! free.

use std::cell::Cell;

use lopdf::{Document, Object, ObjectId, Stream};

/// Bytes one document may decompress in all (object streams, page contents,
/// forms, `ToUnicode` maps): about a second of inflating.
pub(crate) const DOCUMENT_DECOMPRESSED_BYTES: usize = 512 << 20;
/// Bytes of `ToUnicode` maps one document may decompress: what lopdf builds from
/// them is several times their size, and fonts are kept for the whole read.
pub(crate) const DOCUMENT_CMAP_BYTES: usize = 16 << 20;
/// Content-stream bytes the interpreter may run through for one document, forms
/// counted at every paint.
pub(crate) const DOCUMENT_INTERPRETED_BYTES: usize = 256 << 20;
/// The weight of what loading may build, beyond the file's own size: objects at
/// the size lopdf gives each, plus the bytes of strings, names and streams. A
/// 32 MiB PDF of ordinary make weighs 1.5 to 3 times its size.
pub(crate) const LOAD_WEIGHT_BASE: usize = 96 << 20;
/// How many times the file's size loading may weigh, on top of
/// [`LOAD_WEIGHT_BASE`].
pub(crate) const LOAD_WEIGHT_PER_FILE_BYTE: usize = 4;

/// The budgets of one document read; interior mutability because the readers
/// that draw from it hold shared borrows of the document.
#[derive(Debug)]
pub(crate) struct Quota {
    decompressed: Cell<usize>,
    cmap: Cell<usize>,
    interpreted: Cell<usize>,
    weight: Cell<usize>,
}

impl Quota {
    /// The budgets of a read of a file of `file_len` bytes.
    pub(crate) fn new(file_len: usize) -> Quota {
        Quota {
            decompressed: Cell::new(DOCUMENT_DECOMPRESSED_BYTES),
            cmap: Cell::new(DOCUMENT_CMAP_BYTES),
            interpreted: Cell::new(DOCUMENT_INTERPRETED_BYTES),
            weight: Cell::new(
                LOAD_WEIGHT_BASE.saturating_add(file_len.saturating_mul(LOAD_WEIGHT_PER_FILE_BYTE)),
            ),
        }
    }

    /// `stream` decompressed, at most `cap` bytes and within what the document
    /// has left; `None` when it does not fit or does not decode.
    pub(crate) fn decompress(&self, stream: &Stream, cap: usize) -> Option<Vec<u8>> {
        let limit = cap.min(self.decompressed.get());
        let decoded = stream.decompressed_content_with_limit(limit).ok();
        self.charge_decompressed(decoded.as_ref().map_or(limit, Vec::len));
        decoded
    }

    /// `stream` decompressed as an object stream is (a stream without filters is
    /// its raw bytes), within `cap` and the document's budget; lopdf's error
    /// when it does not decode or does not fit.
    pub(crate) fn plain_content(&self, stream: &Stream, cap: usize) -> lopdf::Result<Vec<u8>> {
        let limit = cap.min(self.decompressed.get());
        let decoded = stream.get_plain_content_with_limit(limit);
        self.charge_decompressed(decoded.as_ref().map_or(limit, Vec::len));
        decoded
    }

    /// The content of page `page_id` (its streams joined), within `cap` and the
    /// document's budget; empty when it does not fit.
    pub(crate) fn page_content(&self, doc: &Document, page_id: ObjectId, cap: usize) -> Vec<u8> {
        let limit = cap.min(self.decompressed.get());
        let content = doc.get_page_content_with_limit(page_id, limit).ok();
        self.charge_decompressed(content.as_ref().map_or(limit, Vec::len));
        content.unwrap_or_default()
    }

    /// A `ToUnicode` stream's content (decompressed as lopdf reads a map:
    /// without filters, its raw bytes), within `cap` and both the document's
    /// decompression and map budgets.
    pub(crate) fn cmap(&self, stream: &Stream, cap: usize) -> Option<Vec<u8>> {
        let limit = cap.min(self.cmap.get());
        let decoded = self.plain_content(stream, limit).ok();
        let spent = decoded.as_ref().map_or(limit, Vec::len);
        self.cmap.set(self.cmap.get().saturating_sub(spent));
        decoded
    }

    /// What the document may still decompress.
    #[cfg(test)]
    pub(crate) fn decompressed_left(&self) -> usize {
        self.decompressed.get()
    }

    fn charge_decompressed(&self, bytes: usize) {
        self.decompressed
            .set(self.decompressed.get().saturating_sub(bytes));
    }

    /// Takes `bytes` of content for the interpreter; false (nothing taken) when
    /// the document has less left.
    pub(crate) fn interpret(&self, bytes: usize) -> bool {
        let left = self.interpreted.get();
        if bytes > left {
            self.interpreted.set(0);
            return false;
        }
        self.interpreted.set(left - bytes);
        true
    }

    /// Adds `bytes` of weight to what loading built; false once past the budget.
    pub(crate) fn load_weight(&self, bytes: usize) -> bool {
        let left = self.weight.get();
        self.weight.set(left.saturating_sub(bytes));
        bytes <= left
    }

    /// Gives back weight taken ahead ([`Quota::load_weight`] of an upper bound)
    /// and not built.
    pub(crate) fn refund_weight(&self, bytes: usize) {
        self.weight.set(self.weight.get().saturating_add(bytes));
    }

    /// The weight loading may still build.
    pub(crate) fn weight_left(&self) -> usize {
        self.weight.get()
    }

    /// Sets the weight loading may still build (after a load that counted it
    /// apart).
    pub(crate) fn set_weight_left(&self, bytes: usize) {
        self.weight.set(bytes);
    }
}

/// What lopdf holds for `object`: every object at its own size, plus the bytes
/// of its strings, names, dictionary keys and stream data. Recursion is bounded
/// by lopdf's nesting limit (100).
pub(crate) fn weight(object: &Object) -> usize {
    let own = std::mem::size_of::<Object>();
    match object {
        Object::Name(bytes) | Object::String(bytes, _) => own + bytes.len(),
        Object::Array(items) => own + items.iter().map(weight).sum::<usize>(),
        Object::Dictionary(dict) => own + dictionary_weight(dict),
        Object::Stream(stream) => own + dictionary_weight(&stream.dict) + stream.content.len(),
        _ => own,
    }
}

fn dictionary_weight(dict: &lopdf::Dictionary) -> usize {
    dict.iter()
        .map(|(key, value)| key.len() + std::mem::size_of::<Vec<u8>>() + weight(value))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_decompression_is_charged_in_full() {
        let quota = Quota::new(0);
        let mut stream = Stream::new(lopdf::Dictionary::new(), vec![0; 2 << 20]);
        stream.compress().unwrap();
        assert!(quota.decompress(&stream, 1 << 20).is_none());
        assert_eq!(
            quota.decompressed.get(),
            DOCUMENT_DECOMPRESSED_BYTES - (1 << 20)
        );
    }

    #[test]
    fn interpreting_stops_at_the_documents_budget() {
        let quota = Quota::new(0);
        assert!(quota.interpret(DOCUMENT_INTERPRETED_BYTES - 10));
        assert!(!quota.interpret(11));
        assert!(!quota.interpret(1), "once spent, spent");
    }

    #[test]
    fn loading_weighs_objects_and_their_bytes() {
        let quota = Quota::new(0);
        let array = Object::Array(vec![Object::Integer(0); 1000]);
        assert_eq!(weight(&array), 1001 * std::mem::size_of::<Object>());
        let string = Object::string_literal(vec![b'x'; 100]);
        assert_eq!(weight(&string), std::mem::size_of::<Object>() + 100);
        assert!(quota.load_weight(weight(&array)));
        assert!(!quota.load_weight(LOAD_WEIGHT_BASE));
    }
}
