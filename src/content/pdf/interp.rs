//! A page's content stream to positioned glyphs: the text operators of
//! PDF 32000 9.4 (text state, `Tm`/`Td`/`TD`/`T*`, `Tj`/`TJ`/`'`/`"`), the
//! graphics state's `cm`, `q`/`Q`, and form XObjects (`Do`), nested at most
//! [`MAX_FORM_DEPTH`] deep. lopdf tokenises the stream; the state machine is ours.
//!
//! Bounded: at most [`MAX_GLYPHS`] glyphs and [`MAX_OPERATIONS`] operations per
//! page (a hostile page stops there), streams decompress within
//! [`MAX_STREAM_BYTES`] and the document's [`Quota`], and the call's read budget
//! is checked at every operation. What a document's pages share is decoded once
//! per read ([`Shared`]): a form XObject however often it is painted, a font
//! however often it is selected (an inline font dictionary included), a
//! `ToUnicode` map however many fonts use it. Decoded content held at once (the
//! page's, the forms on the stack, the forms kept) stays under [`LIVE_BYTES`],
//! so forms nested [`MAX_FORM_DEPTH`] deep can not each hold a stream's cap.

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId};

use super::fonts::{Font, Fonts, deref, number};
use super::quota::Quota;
use crate::budget;

/// Glyphs kept from one page.
pub(crate) const MAX_GLYPHS: usize = 200_000;
/// Content operations run for one page, forms included.
pub(crate) const MAX_OPERATIONS: usize = 2_000_000;
/// Nesting of form XObjects.
pub(crate) const MAX_FORM_DEPTH: usize = 8;
/// Bytes one content stream may decompress to.
pub(crate) const MAX_STREAM_BYTES: usize = 64 << 20;
/// Decoded content held at once: the page's content, the forms being run, the
/// forms kept for later paints.
pub(crate) const LIVE_BYTES: usize = 128 << 20;
/// Decoded forms kept for later paints; past this, a form is decoded at each
/// paint (within the document's decompression budget).
pub(crate) const KEPT_FORM_BYTES: usize = 64 << 20;
/// Fonts one page may select.
pub(crate) const MAX_PAGE_FONTS: usize = 4096;

/// A resource as the document holds it: an indirect object, or (an inline font
/// dictionary, a malformed direct stream) the object's place in the loaded
/// document, which does not move while it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ResourceKey {
    Object(ObjectId),
    Inline(usize),
}

impl ResourceKey {
    /// The key of `entry` (a resource dictionary's value), `target` being what it
    /// refers to.
    fn of(entry: &Object, target: &Object) -> ResourceKey {
        match entry {
            Object::Reference(id) => ResourceKey::Object(*id),
            _ => ResourceKey::Inline(std::ptr::from_ref(target) as usize),
        }
    }
}

/// What a document's pages share for one read: the document, its budgets, and
/// the fonts and forms decoded so far.
pub(crate) struct Shared<'d> {
    doc: &'d Document,
    quota: &'d Quota,
    fonts: Fonts<'d>,
    /// Decoded forms: `None` for one that does not decode within its cap.
    forms: HashMap<ResourceKey, Option<Rc<[u8]>>>,
    kept_form_bytes: usize,
    /// Decoded content held now (see [`LIVE_BYTES`]).
    live: usize,
}

impl<'d> Shared<'d> {
    /// Nothing decoded yet.
    pub(crate) fn new(doc: &'d Document, quota: &'d Quota) -> Shared<'d> {
        Shared {
            doc,
            quota,
            fonts: Fonts::new(doc, quota),
            forms: HashMap::new(),
            kept_form_bytes: 0,
            live: 0,
        }
    }

    /// What may still be decoded without holding more than [`LIVE_BYTES`].
    fn room(&self) -> usize {
        LIVE_BYTES.saturating_sub(self.live).min(MAX_STREAM_BYTES)
    }

    /// The decoded content of form `stream` (under `key`), and whether it is
    /// held only while it runs (not kept).
    fn form_content(
        &mut self,
        key: ResourceKey,
        stream: &lopdf::Stream,
    ) -> Option<(Rc<[u8]>, bool)> {
        if let Some(kept) = self.forms.get(&key) {
            return kept.clone().map(|content| (content, false));
        }
        let room = self.room();
        let Some(content) = self.quota.decompress(stream, room) else {
            // Remembered only when its own cap, not what is held now, refused it.
            if room == MAX_STREAM_BYTES {
                self.forms.insert(key, None);
            }
            return None;
        };
        let content: Rc<[u8]> = Rc::from(content);
        if self.kept_form_bytes + content.len() <= KEPT_FORM_BYTES {
            self.kept_form_bytes += content.len();
            self.live += content.len();
            self.forms.insert(key, Some(Rc::clone(&content)));
            return Some((content, false));
        }
        Some((content, true))
    }
}

/// A glyph on the page, in user space (points, y up).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Glyph {
    /// The text it stands for (a ligature's several letters, or empty).
    pub(crate) text: String,
    /// Origin on the baseline.
    pub(crate) x: f32,
    pub(crate) y: f32,
    /// Advance along the baseline.
    pub(crate) width: f32,
    /// Effective font size (the text matrix's scale included).
    pub(crate) size: f32,
    /// An explicit space (or a word gap of a `TJ` adjustment) came just before.
    pub(crate) space_before: bool,
    pub(crate) bold: bool,
    pub(crate) italic: bool,
    /// Index of the font in the page's fonts (same font, same style).
    pub(crate) font: u16,
}

/// A 2D affine matrix `[a b c d e f]`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Matrix([f32; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    /// `self × other` (apply `self` first).
    fn then(self, other: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    fn translate(tx: f32, ty: f32) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }
}

#[derive(Debug, Clone, Copy)]
struct GraphicsState {
    ctm: Matrix,
    font: Option<usize>,
    size: f32,
    char_spacing: f32,
    word_spacing: f32,
    scale: f32,
    leading: f32,
    rise: f32,
}

struct Interp<'s, 'd> {
    doc: &'d Document,
    shared: &'s mut Shared<'d>,
    /// The page's fonts, in the order first selected: a glyph's `font`.
    fonts: Vec<Rc<Font<'d>>>,
    font_ids: HashMap<ResourceKey, usize>,
    glyphs: Vec<Glyph>,
    operations: usize,
    /// A `TJ` adjustment wide enough to be a word gap was just seen.
    pending_space: bool,
}

/// The glyphs of page `page_id`, in content order. A page whose content can not
/// be read gives what was read before the problem (a damaged page must not cost
/// the rest of the document); so does one past a budget, or read when the call's
/// budget runs out (the read then ends with the budget's error).
pub(crate) fn page_glyphs(shared: &mut Shared<'_>, page_id: ObjectId) -> Vec<Glyph> {
    let doc = shared.doc;
    if doc.get_dictionary(page_id).is_err() {
        return Vec::new();
    }
    let resources = page_resources(doc, page_id);
    let content = shared.quota.page_content(doc, page_id, shared.room());
    let held = content.len();
    shared.live += held;
    let mut interp = Interp {
        doc,
        shared: &mut *shared,
        fonts: Vec::new(),
        font_ids: HashMap::new(),
        glyphs: Vec::new(),
        operations: 0,
        pending_space: false,
    };
    let state = GraphicsState {
        ctm: Matrix::IDENTITY,
        font: None,
        size: 0.0,
        char_spacing: 0.0,
        word_spacing: 0.0,
        scale: 1.0,
        leading: 0.0,
        rise: 0.0,
    };
    interp.run(&content, resources, state, 0);
    let glyphs = interp.glyphs;
    shared.live -= held;
    glyphs
}

/// The page's `/Resources`, inherited from the page tree when absent.
fn page_resources(doc: &Document, page_id: ObjectId) -> Option<&Dictionary> {
    let mut id = page_id;
    for _ in 0..64 {
        let node = doc.get_dictionary(id).ok()?;
        if let Ok(resources) = node.get(b"Resources") {
            return deref(doc, resources).as_dict().ok();
        }
        id = node.get(b"Parent").and_then(Object::as_reference).ok()?;
    }
    None
}

impl<'d> Interp<'_, 'd> {
    fn run(
        &mut self,
        content: &[u8],
        resources: Option<&'d Dictionary>,
        mut gs: GraphicsState,
        depth: usize,
    ) {
        if !self.shared.quota.interpret(content.len()) {
            return;
        }
        let mut stack: Vec<GraphicsState> = Vec::new();
        let mut tm = Matrix::IDENTITY;
        let mut line = Matrix::IDENTITY;
        for op in Content::decode_iter(content) {
            let Ok(op) = op else { break };
            self.operations += 1;
            if self.operations > MAX_OPERATIONS
                || self.glyphs.len() >= MAX_GLYPHS
                || budget::interrupted()
            {
                return;
            }
            let n = |i: usize| op.operands.get(i).and_then(|o| number(self.doc, Some(o)));
            match op.operator.as_str() {
                "q" if stack.len() < 256 => {
                    stack.push(gs);
                }
                "Q" => {
                    if let Some(saved) = stack.pop() {
                        gs = saved;
                    }
                }
                "cm" => {
                    if let Some(m) = matrix(&op.operands, self.doc) {
                        gs.ctm = m.then(gs.ctm);
                    }
                }
                "BT" => {
                    tm = Matrix::IDENTITY;
                    line = Matrix::IDENTITY;
                    self.pending_space = false;
                }
                "Tf" => {
                    gs.size = n(1).unwrap_or(0.0);
                    gs.font = op
                        .operands
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|name| self.font(resources, name));
                }
                "Tc" => gs.char_spacing = n(0).unwrap_or(0.0),
                "Tw" => gs.word_spacing = n(0).unwrap_or(0.0),
                "Tz" => gs.scale = n(0).unwrap_or(100.0) / 100.0,
                "TL" => gs.leading = n(0).unwrap_or(0.0),
                "Ts" => gs.rise = n(0).unwrap_or(0.0),
                "Td" | "TD" => {
                    let (tx, ty) = (n(0).unwrap_or(0.0), n(1).unwrap_or(0.0));
                    if op.operator == "TD" {
                        gs.leading = -ty;
                    }
                    line = Matrix::translate(tx, ty).then(line);
                    tm = line;
                }
                "Tm" => {
                    if let Some(m) = matrix(&op.operands, self.doc) {
                        line = m;
                        tm = m;
                    }
                }
                "T*" => {
                    line = Matrix::translate(0.0, -gs.leading).then(line);
                    tm = line;
                }
                "Tj" => {
                    if let Some(bytes) = op.operands.first().and_then(|o| o.as_str().ok()) {
                        self.show(bytes, &gs, &mut tm);
                    }
                }
                "'" | "\"" => {
                    if op.operator == "\"" {
                        gs.word_spacing = n(0).unwrap_or(gs.word_spacing);
                        gs.char_spacing = n(1).unwrap_or(gs.char_spacing);
                    }
                    line = Matrix::translate(0.0, -gs.leading).then(line);
                    tm = line;
                    if let Some(bytes) = op.operands.last().and_then(|o| o.as_str().ok()) {
                        self.show(bytes, &gs, &mut tm);
                    }
                }
                "TJ" => {
                    let Some(items) = op.operands.first().and_then(|o| o.as_array().ok()) else {
                        continue;
                    };
                    for item in items {
                        match item {
                            Object::String(bytes, _) => self.show(bytes, &gs, &mut tm),
                            other => {
                                let adjust = number(self.doc, Some(other)).unwrap_or(0.0);
                                let tx = -adjust / 1000.0 * gs.size * gs.scale;
                                tm = Matrix::translate(tx, 0.0).then(tm);
                                // A kern of a fifth of an em or more is a word gap.
                                if adjust < -200.0 {
                                    self.pending_space = true;
                                }
                            }
                        }
                    }
                }
                "Do" if depth < MAX_FORM_DEPTH => {
                    let Some(name) = op.operands.first().and_then(|o| o.as_name().ok()) else {
                        continue;
                    };
                    self.form(resources, name, gs, depth);
                }
                _ => {}
            }
        }
    }

    /// Runs a form XObject named `name` in `resources`.
    fn form(
        &mut self,
        resources: Option<&'d Dictionary>,
        name: &[u8],
        gs: GraphicsState,
        depth: usize,
    ) {
        let doc = self.doc;
        let Some(entry) = resources
            .and_then(|r| r.get(b"XObject").ok())
            .map(|x| deref(doc, x))
            .and_then(|x| x.as_dict().ok())
            .and_then(|x| x.get(name).ok())
        else {
            return;
        };
        let target = deref(doc, entry);
        let Ok(stream) = target.as_stream() else {
            return;
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return;
        }
        let key = ResourceKey::of(entry, target);
        let Some((content, transient)) = self.shared.form_content(key, stream) else {
            return;
        };
        let mut inner = gs;
        if let Some(m) = stream
            .dict
            .get(b"Matrix")
            .ok()
            .and_then(|m| match deref(doc, m) {
                Object::Array(a) => matrix(a, doc),
                _ => None,
            })
        {
            inner.ctm = m.then(gs.ctm);
        }
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .map(|r| deref(doc, r))
            .and_then(|r| r.as_dict().ok());
        let resources = own.or(resources);
        if transient {
            self.shared.live += content.len();
        }
        self.run(&content, resources, inner, depth + 1);
        if transient {
            self.shared.live -= content.len();
        }
    }

    /// The index of the font resource `name` among the page's fonts; each font
    /// (an inline font dictionary too) is loaded once per read.
    fn font(&mut self, resources: Option<&'d Dictionary>, name: &[u8]) -> Option<usize> {
        let doc = self.doc;
        let entry = resources?
            .get(b"Font")
            .ok()
            .map(|f| deref(doc, f))
            .and_then(|f| f.as_dict().ok())?
            .get(name)
            .ok()?;
        let target = deref(doc, entry);
        let key = ResourceKey::of(entry, target);
        if let Some(index) = self.font_ids.get(&key) {
            return Some(*index);
        }
        let dict = target.as_dict().ok()?;
        if self.fonts.len() >= MAX_PAGE_FONTS {
            return None;
        }
        self.fonts.push(self.shared.fonts.get(key, dict));
        let index = self.fonts.len() - 1;
        self.font_ids.insert(key, index);
        Some(index)
    }

    /// Shows a string: one glyph per code, advancing the text matrix (9.4.4).
    fn show(&mut self, bytes: &[u8], gs: &GraphicsState, tm: &mut Matrix) {
        let Some(font) = gs.font.and_then(|i| self.fonts.get(i)) else {
            return;
        };
        let (bold, italic, font_index) = (font.bold, font.italic, gs.font.unwrap_or(0) as u16);
        for code in font.decode(bytes) {
            let trm = Matrix([gs.size * gs.scale, 0.0, 0.0, gs.size, 0.0, gs.rise])
                .then(*tm)
                .then(gs.ctm);
            let [a, b, c, d, e, f] = trm.0;
            let mut advance = code.width / 1000.0 * gs.size + gs.char_spacing;
            if code.is_space {
                advance += gs.word_spacing;
            }
            advance *= gs.scale;
            let step = Matrix::translate(advance, 0.0).then(*tm);
            // Horizontal text only: a rotated or mirrored glyph (a margin stamp,
            // a vertical label) is not part of the reading text.
            let upright =
                b.abs() <= 0.01 * a.abs() && c.abs() <= 0.01 * d.abs() && a > 0.0 && d > 0.0;
            // Code 32 takes `Tw` whatever it maps to, but is text when it maps to
            // text (LibreOffice's subsets give `s` code 32).
            let is_blank = code.text.chars().all(char::is_whitespace);
            if is_blank {
                self.pending_space = true;
            } else if upright && self.glyphs.len() < MAX_GLYPHS {
                // The glyph's own width, without `Tc`/`Tw`: Ghostscript sets word
                // spaces as character spacing, and they must read as gaps.
                self.glyphs.push(Glyph {
                    text: code.text,
                    x: e,
                    y: f,
                    width: (code.width / 1000.0 * a).max(0.0),
                    size: d.abs(),
                    space_before: std::mem::take(&mut self.pending_space),
                    bold,
                    italic,
                    font: font_index,
                });
            }
            *tm = step;
        }
    }
}

fn matrix(operands: &[Object], doc: &Document) -> Option<Matrix> {
    if operands.len() < 6 {
        return None;
    }
    let mut m = [0.0f32; 6];
    for (slot, operand) in m.iter_mut().zip(operands) {
        *slot = number(doc, Some(operand))?;
    }
    Some(Matrix(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Stream, dictionary};

    /// A one-page document whose content is `content`, with Helvetica as `F1`,
    /// the form `X0` (`form`, compressed) and `fonts` inline.
    fn document(content: &str, form: &str, inline_font: bool) -> (Document, ObjectId) {
        let mut doc = Document::with_version("1.7");
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let mut form = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form",
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
            },
            form.as_bytes().to_vec(),
        );
        form.compress().unwrap();
        let form = doc.add_object(form);
        let contents = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
        let mut fonts = dictionary! { "F1" => font };
        if inline_font {
            fonts.set(
                "F2",
                dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" },
            );
        }
        let pages = doc.new_object_id();
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages, "Contents" => contents,
            "Resources" => dictionary! { "Font" => fonts, "XObject" => dictionary! { "X0" => form } },
        });
        doc.objects.insert(
            pages,
            Object::Dictionary(
                dictionary! { "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1 },
            ),
        );
        (doc, page)
    }

    #[test]
    fn a_form_painted_many_times_is_decompressed_once() {
        let form = format!(
            "BT /F1 12 Tf 72 700 Td (In the form) Tj ET{}",
            " ".repeat(100_000)
        );
        let (doc, page) = document(&"/X0 Do\n".repeat(50), &form, false);
        let quota = Quota::new(0);
        let mut shared = Shared::new(&doc, &quota);
        let glyphs = page_glyphs(&mut shared, page);
        assert_eq!(glyphs.len(), 50 * "Intheform".len());
        let spent = super::super::quota::DOCUMENT_DECOMPRESSED_BYTES - quota.decompressed_left();
        // The page's content, and the form once.
        assert_eq!(spent, "/X0 Do\n".repeat(50).len() + 1 + form.len());
        // A second page painting it decompresses only its own content.
        page_glyphs(&mut shared, page);
        let again = super::super::quota::DOCUMENT_DECOMPRESSED_BYTES - quota.decompressed_left();
        assert_eq!(again - spent, "/X0 Do\n".repeat(50).len() + 1);
    }

    #[test]
    fn an_inline_font_selected_many_times_is_one_font() {
        let content = "BT /F2 12 Tf 72 700 Td (a) Tj ET\n".repeat(100);
        let (doc, page) = document(&content, "", true);
        let quota = Quota::new(0);
        let mut shared = Shared::new(&doc, &quota);
        let glyphs = page_glyphs(&mut shared, page);
        assert_eq!(glyphs.len(), 100);
        assert!(
            glyphs.iter().all(|g| g.font == 0),
            "one font, selected 100 times"
        );
    }

    #[test]
    fn a_page_stops_when_the_calls_budget_ends() {
        let content = "BT /F1 12 Tf 72 700 Td (a) Tj ET\n".repeat(10_000);
        let (doc, page) = document(&content, "", false);
        let quota = Quota::new(0);
        let (budget, end) = crate::budget::ReadBudget::new(None, 1_000);
        drop(end);
        let glyphs = budget
            .run(|| {
                let mut shared = Shared::new(&doc, &quota);
                Ok(page_glyphs(&mut shared, page))
            })
            .unwrap_or_default();
        assert!(glyphs.is_empty());
        let mut shared = Shared::new(&doc, &quota);
        assert_eq!(page_glyphs(&mut shared, page).len(), 10_000);
    }

    #[test]
    fn matrices_compose_in_pdf_order() {
        let scale = Matrix([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let shift = Matrix::translate(10.0, 5.0);
        // Scale, then translate: the origin lands at (10, 5).
        assert_eq!(scale.then(shift).0, [2.0, 0.0, 0.0, 2.0, 10.0, 5.0]);
        // Translate, then scale: (20, 10).
        assert_eq!(shift.then(scale).0, [2.0, 0.0, 0.0, 2.0, 20.0, 10.0]);
    }
}
