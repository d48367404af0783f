//! PDF fonts as the text layer needs them: how a shown string splits
//! into character codes, what text each code stands for, and how far it advances.
//!
//! lopdf parses the objects and the `ToUnicode` CMaps; the rules of which map wins
//! are ours (PDF 32000 9.10.2): `ToUnicode` first, then the font's encoding
//! (`Differences` glyph names through the Adobe Glyph List, which is how the
//! Type 1C fonts Ghostscript embeds without a `ToUnicode` map still read), then
//! the base encoding. lopdf's own `get_font_encoding` prefers `/Encoding` over
//! `ToUnicode` and decodes whole strings, so it cannot give per-glyph advances:
//! that is why this module exists.
//!
//! Fonts are loaded once per read ([`Fonts`]), and so is each `ToUnicode` map,
//! within the document's map budget ([`Quota`]).

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::{Dictionary, Document, Encoding, Object, ObjectId, Stream};

use super::interp::ResourceKey;
use super::quota::Quota;

/// Bytes a `ToUnicode` stream may decompress to.
const MAX_CMAP_BYTES: usize = 4 << 20;
/// Fonts kept for the rest of a read; past this many the kept ones are let go
/// (a page keeps those it uses), so a document of many fonts holds few at once.
const KEPT_FONTS: usize = 1024;

/// The fonts of one read, each loaded once.
pub(crate) struct Fonts<'d> {
    doc: &'d Document,
    quota: &'d Quota,
    loaded: HashMap<ResourceKey, Rc<Font<'d>>>,
    /// `ToUnicode` maps by stream: `None` for one that does not read.
    maps: HashMap<ObjectId, Option<Rc<Encoding<'d>>>>,
}

impl<'d> Fonts<'d> {
    /// No font loaded yet.
    pub(crate) fn new(doc: &'d Document, quota: &'d Quota) -> Fonts<'d> {
        Fonts {
            doc,
            quota,
            loaded: HashMap::new(),
            maps: HashMap::new(),
        }
    }

    /// The font of dictionary `dict` (the resource `key`), loaded on first use.
    pub(crate) fn get(&mut self, key: ResourceKey, dict: &Dictionary) -> Rc<Font<'d>> {
        if let Some(font) = self.loaded.get(&key) {
            return Rc::clone(font);
        }
        let to_unicode = self.unicode_map(dict);
        let font = Rc::new(Font::load(self.doc, dict, to_unicode));
        if self.loaded.len() >= KEPT_FONTS {
            self.loaded.clear();
        }
        self.loaded.insert(key, Rc::clone(&font));
        font
    }

    /// The font's `ToUnicode` map, read through lopdf within [`MAX_CMAP_BYTES`]
    /// and the document's map budget; a map several fonts share is read once.
    fn unicode_map(&mut self, dict: &Dictionary) -> Option<Rc<Encoding<'d>>> {
        let entry = dict.get(b"ToUnicode").ok()?;
        // lopdf reads the map only for a dictionary typed as a font.
        if !dict.has_type(b"Font") {
            return None;
        }
        let id = match entry {
            Object::Reference(id) => Some(*id),
            _ => None,
        };
        if let Some(map) = id.and_then(|id| self.maps.get(&id)) {
            return map.clone();
        }
        let map = deref(self.doc, entry)
            .as_stream()
            .ok()
            .and_then(|stream| self.quota.cmap(stream, MAX_CMAP_BYTES))
            .and_then(|plain| {
                // The map's decoded bytes as a stream of their own, in a font
                // dictionary holding nothing else, so lopdf reaches the map.
                let mut only_map = Dictionary::new();
                only_map.set("Type", Object::Name(b"Font".to_vec()));
                only_map.set(
                    "ToUnicode",
                    Object::Stream(Stream::new(Dictionary::new(), plain)),
                );
                match only_map.get_font_encoding_with_limit(self.doc, MAX_CMAP_BYTES) {
                    // The map is owned: rebuilt so it does not borrow the copy.
                    Ok(Encoding::UnicodeMapEncoding(map)) => {
                        Some(Rc::new(Encoding::UnicodeMapEncoding(map)))
                    }
                    _ => None,
                }
            });
        if let Some(id) = id {
            self.maps.insert(id, map.clone());
        }
        map
    }
}

/// One font of a page's resources, ready to decode shown strings.
pub(crate) struct Font<'a> {
    /// Codes are two bytes (a Type 0 font), else one.
    two_byte: bool,
    /// lopdf's `ToUnicode` map (always [`Encoding::UnicodeMapEncoding`]).
    to_unicode: Option<Rc<Encoding<'a>>>,
    /// Text of each one-byte code from the font's encoding, when it has one.
    simple: Option<Box<[Option<String>; 256]>>,
    /// Advance of each one-byte code, in text space units (thousandths of an em).
    widths: Vec<f32>,
    first_char: u32,
    /// Type 0 widths: `(first, last, width)` ranges from `/W`.
    cid_widths: Vec<(u32, u32, f32)>,
    default_width: f32,
    /// The font's name says bold (`Bold`, `Black`, `Heavy`, `Semibold`).
    pub(crate) bold: bool,
    /// The font's name says italic or oblique.
    pub(crate) italic: bool,
}

/// One shown glyph: the text it stands for (empty when unknown), its advance in
/// thousandths of an em, and whether it is a word space (code 32 of a one-byte
/// font, which `Tw` applies to).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Code {
    pub(crate) text: String,
    pub(crate) width: f32,
    pub(crate) is_space: bool,
}

impl<'a> Font<'a> {
    /// Reads a font dictionary, its `ToUnicode` map already read. Nothing here
    /// fails: what can not be read falls back (no map, standard encoding,
    /// estimated widths).
    fn load(
        doc: &'a Document,
        dict: &Dictionary,
        to_unicode: Option<Rc<Encoding<'a>>>,
    ) -> Font<'a> {
        let subtype = dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .unwrap_or(b"");
        let two_byte = subtype == b"Type0";
        let base_font = dict
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .map(|name| String::from_utf8_lossy(name).to_ascii_lowercase())
            .unwrap_or_default();
        let simple = (!two_byte).then(|| simple_map(doc, dict));
        let mut font = Font {
            two_byte,
            to_unicode,
            simple,
            widths: Vec::new(),
            first_char: 0,
            cid_widths: Vec::new(),
            default_width: 0.0,
            bold: ["bold", "black", "heavy", "semibold", "demi"]
                .iter()
                .any(|w| base_font.contains(w)),
            italic: base_font.contains("italic") || base_font.contains("oblique"),
        };
        if two_byte {
            font.load_cid_widths(doc, dict);
        } else {
            font.load_simple_widths(doc, dict);
        }
        font
    }

    fn load_simple_widths(&mut self, doc: &Document, dict: &Dictionary) {
        self.first_char = number(doc, dict.get(b"FirstChar").ok())
            .unwrap_or(0.0)
            .max(0.0) as u32;
        if let Some(widths) = array(doc, dict.get(b"Widths").ok()) {
            self.widths = widths
                .iter()
                .take(256)
                .map(|w| number(doc, Some(w)).unwrap_or(0.0))
                .collect();
        }
        self.default_width = descriptor(doc, dict)
            .and_then(|d| number(doc, d.get(b"MissingWidth").ok()))
            .unwrap_or(0.0);
    }

    fn load_cid_widths(&mut self, doc: &Document, dict: &Dictionary) {
        self.default_width = 1000.0;
        let Some(descendant) = array(doc, dict.get(b"DescendantFonts").ok())
            .and_then(|fonts| fonts.first())
            .and_then(|font| deref(doc, font).as_dict().ok())
        else {
            return;
        };
        if let Some(dw) = number(doc, descendant.get(b"DW").ok()) {
            self.default_width = dw;
        }
        let Some(w) = array(doc, descendant.get(b"W").ok()) else {
            return;
        };
        let mut i = 0;
        // At most 65,536 ranges: a hostile `/W` can not make this grow further.
        while i < w.len() && self.cid_widths.len() < 65_536 {
            let first = number(doc, w.get(i)).unwrap_or(0.0).max(0.0) as u32;
            match w.get(i + 1).map(|o| deref(doc, o)) {
                Some(Object::Array(list)) => {
                    for (k, width) in list.iter().enumerate().take(65_536) {
                        let code = first.saturating_add(k as u32);
                        let width = number(doc, Some(width)).unwrap_or(self.default_width);
                        self.cid_widths.push((code, code, width));
                    }
                    i += 2;
                }
                Some(_) => {
                    let last = number(doc, w.get(i + 1)).unwrap_or(0.0).max(0.0) as u32;
                    let width = number(doc, w.get(i + 2)).unwrap_or(self.default_width);
                    self.cid_widths.push((first, last, width));
                    i += 3;
                }
                None => break,
            }
        }
        self.cid_widths.sort_by_key(|r| r.0);
    }

    /// The codes of a shown string, in order.
    pub(crate) fn decode(&self, bytes: &[u8]) -> Vec<Code> {
        if self.two_byte {
            bytes
                .chunks(2)
                .map(|pair| {
                    let code = pair.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b));
                    let len = pair.len() as u8;
                    let text = self.mapped(code, len).unwrap_or_default();
                    Code {
                        is_space: text == " ",
                        text,
                        width: self.cid_width(code),
                    }
                })
                .collect()
        } else {
            bytes
                .iter()
                .map(|&byte| {
                    let text = self
                        .mapped(u32::from(byte), 1)
                        .or_else(|| {
                            self.simple
                                .as_ref()
                                .and_then(|map| map[usize::from(byte)].clone())
                        })
                        .unwrap_or_default();
                    Code {
                        width: self.simple_width(byte, &text),
                        is_space: byte == b' ',
                        text,
                    }
                })
                .collect()
        }
    }

    /// The `ToUnicode` text of a code, when the map has it.
    fn mapped(&self, code: u32, len: u8) -> Option<String> {
        match self.to_unicode.as_deref() {
            Some(Encoding::UnicodeMapEncoding(map)) => map
                .get(code, len)
                .map(|units| utf16(&units))
                .filter(|t| !t.is_empty() && t != "\u{fffd}"),
            _ => None,
        }
    }

    fn simple_width(&self, code: u8, text: &str) -> f32 {
        let index = u32::from(code).checked_sub(self.first_char);
        match index.and_then(|i| self.widths.get(i as usize)) {
            Some(w) if *w > 0.0 => *w,
            _ if self.default_width > 0.0 => self.default_width,
            _ => estimated_width(text),
        }
    }

    fn cid_width(&self, code: u32) -> f32 {
        let at = self.cid_widths.partition_point(|r| r.0 <= code);
        match at.checked_sub(1).map(|i| self.cid_widths[i]) {
            Some((first, last, width)) if first <= code && code <= last => width,
            _ => self.default_width,
        }
    }
}

/// An advance for a glyph of a font that gives none (the standard 14 fonts may
/// omit `/Widths`): Helvetica-like proportions by character class. Only word
/// gaps depend on it, and those come from explicit spaces in such files.
fn estimated_width(text: &str) -> f32 {
    text.chars()
        .map(|c| match c {
            ' ' => 278.0,
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '!' | '|' => 240.0,
            'f' | 't' | 'r' | 'I' | '(' | ')' | '[' | ']' | '-' => 320.0,
            'm' | 'w' | 'M' | 'W' => 830.0,
            c if c.is_ascii_uppercase() => 680.0,
            c if c.is_ascii_digit() => 556.0,
            _ => 540.0,
        })
        .sum::<f32>()
        .max(250.0)
}

fn utf16(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|c| c.unwrap_or('\u{fffd}'))
        .collect()
}

/// Text of each one-byte code from `/Encoding` (a base encoding and
/// `Differences`); glyph names outside lopdf's list are read as `uniXXXX`,
/// `uXXXX[XX]` and ligature names.
fn simple_map(doc: &Document, dict: &Dictionary) -> Box<[Option<String>; 256]> {
    let mut map: Box<[Option<String>; 256]> = Box::new(std::array::from_fn(|_| None));
    let mut only_encoding = dict.clone();
    only_encoding.remove(b"ToUnicode");
    // A simple font's encoding is a name or a dictionary; a stream there (a
    // CMap) is not read.
    if only_encoding
        .get(b"Encoding")
        .is_ok_and(|e| deref(doc, e).as_stream().is_ok())
    {
        only_encoding.remove(b"Encoding");
    }
    let encoding = only_encoding.get_font_encoding_with_limit(doc, MAX_CMAP_BYTES);
    if let Ok(encoding) = &encoding {
        for (code, slot) in map.iter_mut().enumerate() {
            let text = encoding.bytes_to_string(&[code as u8]).unwrap_or_default();
            if !text.is_empty() {
                *slot = Some(text);
            }
        }
    }
    // Names lopdf does not know (uniXXXX and friends) from the Differences array.
    let differences = dict
        .get(b"Encoding")
        .ok()
        .map(|o| deref(doc, o))
        .and_then(|o| o.as_dict().ok())
        .and_then(|d| array(doc, d.get(b"Differences").ok()));
    if let Some(differences) = differences {
        let mut code = 0usize;
        for item in differences.iter().take(4096) {
            match item {
                Object::Integer(n) => code = (*n).clamp(0, 255) as usize,
                Object::Name(name) => {
                    if code < 256 && map[code].is_none() {
                        map[code] = glyph_name_text(name);
                    }
                    code += 1;
                }
                _ => {}
            }
        }
    }
    map
}

/// The text of a glyph name lopdf's list lacks (Adobe Glyph List conventions):
/// `uniXXXX`, `uXXXX` to `uXXXXXX`, suffixes after `.` dropped.
pub(crate) fn glyph_name_text(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    let base = name.split('.').next()?;
    let hex = base
        .strip_prefix("uni")
        .filter(|h| h.len() == 4)
        .or_else(|| {
            base.strip_prefix('u')
                .filter(|h| (4..=6).contains(&h.len()))
        })?;
    let code = u32::from_str_radix(hex, 16).ok()?;
    char::from_u32(code).map(String::from)
}

fn descriptor<'a>(doc: &'a Document, dict: &'a Dictionary) -> Option<&'a Dictionary> {
    dict.get(b"FontDescriptor")
        .ok()
        .map(|o| deref(doc, o))
        .and_then(|o| o.as_dict().ok())
}

/// An object with one level of reference followed.
pub(crate) fn deref<'a>(doc: &'a Document, object: &'a Object) -> &'a Object {
    match object {
        Object::Reference(id) => doc.get_object(*id).unwrap_or(object),
        _ => object,
    }
}

pub(crate) fn number(doc: &Document, object: Option<&Object>) -> Option<f32> {
    match deref(doc, object?) {
        Object::Integer(n) => Some(*n as f32),
        Object::Real(r) => Some(*r).filter(|r| r.is_finite()),
        _ => None,
    }
}

pub(crate) fn array<'a>(doc: &'a Document, object: Option<&'a Object>) -> Option<&'a Vec<Object>> {
    deref(doc, object?).as_array().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyph_names_by_convention() {
        assert_eq!(glyph_name_text(b"uni00E9").as_deref(), Some("\u{e9}"));
        assert_eq!(glyph_name_text(b"u1F600").as_deref(), Some("\u{1F600}"));
        assert_eq!(glyph_name_text(b"uni0041.sc").as_deref(), Some("A"));
        assert_eq!(glyph_name_text(b"uniD800"), None);
        assert_eq!(glyph_name_text(b"bullet"), None);
    }

    #[test]
    fn estimated_widths_are_positive() {
        assert!(estimated_width("") >= 250.0);
        assert!(estimated_width("m") > estimated_width("i"));
    }
}
