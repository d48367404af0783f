//! A page's content stream to positioned glyphs (issue 31): the text operators of
//! PDF 32000 9.4 (text state, `Tm`/`Td`/`TD`/`T*`, `Tj`/`TJ`/`'`/`"`), the
//! graphics state's `cm`, `q`/`Q`, and form XObjects (`Do`), nested at most
//! [`MAX_FORM_DEPTH`] deep. lopdf tokenises the stream; the state machine is ours.
//!
//! Bounded: at most [`MAX_GLYPHS`] glyphs and [`MAX_OPERATIONS`] operations per
//! page (a hostile page stops there), and streams decompress within
//! [`MAX_STREAM_BYTES`].

use std::collections::HashMap;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId};

use super::fonts::{Font, deref, number};

/// Glyphs kept from one page.
pub(crate) const MAX_GLYPHS: usize = 200_000;
/// Content operations run for one page, forms included.
pub(crate) const MAX_OPERATIONS: usize = 2_000_000;
/// Nesting of form XObjects.
pub(crate) const MAX_FORM_DEPTH: usize = 8;
/// Bytes one content stream may decompress to.
pub(crate) const MAX_STREAM_BYTES: usize = 64 << 20;

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

struct Interp<'d> {
    doc: &'d Document,
    fonts: Vec<Font<'d>>,
    font_ids: HashMap<ObjectId, usize>,
    glyphs: Vec<Glyph>,
    operations: usize,
    /// A `TJ` adjustment wide enough to be a word gap was just seen.
    pending_space: bool,
}

/// The glyphs of page `page_id`, in content order. A page whose content can not
/// be read gives what was read before the problem (a damaged page must not cost
/// the rest of the document).
pub(crate) fn page_glyphs(doc: &Document, page_id: ObjectId) -> Vec<Glyph> {
    let mut interp = Interp {
        doc,
        fonts: Vec::new(),
        font_ids: HashMap::new(),
        glyphs: Vec::new(),
        operations: 0,
        pending_space: false,
    };
    if doc.get_dictionary(page_id).is_err() {
        return Vec::new();
    }
    let resources = page_resources(doc, page_id);
    let content = doc
        .get_page_content_with_limit(page_id, MAX_STREAM_BYTES)
        .unwrap_or_default();
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
    interp.run(&content, resources.as_ref(), state, 0);
    interp.glyphs
}

/// The page's `/Resources`, inherited from the page tree when absent.
fn page_resources(doc: &Document, page_id: ObjectId) -> Option<Dictionary> {
    let mut id = page_id;
    for _ in 0..64 {
        let node = doc.get_dictionary(id).ok()?;
        if let Ok(resources) = node.get(b"Resources") {
            return deref(doc, resources).as_dict().ok().cloned();
        }
        id = node.get(b"Parent").and_then(Object::as_reference).ok()?;
    }
    None
}

impl<'d> Interp<'d> {
    fn run(
        &mut self,
        content: &[u8],
        resources: Option<&Dictionary>,
        mut gs: GraphicsState,
        depth: usize,
    ) {
        let mut stack: Vec<GraphicsState> = Vec::new();
        let mut tm = Matrix::IDENTITY;
        let mut line = Matrix::IDENTITY;
        for op in Content::decode_iter(content) {
            let Ok(op) = op else { break };
            self.operations += 1;
            if self.operations > MAX_OPERATIONS || self.glyphs.len() >= MAX_GLYPHS {
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
        resources: Option<&Dictionary>,
        name: &[u8],
        gs: GraphicsState,
        depth: usize,
    ) {
        let doc = self.doc;
        let Some(stream) = resources
            .and_then(|r| r.get(b"XObject").ok())
            .map(|x| deref(doc, x))
            .and_then(|x| x.as_dict().ok())
            .and_then(|x| x.get(name).ok())
            .map(|o| deref(doc, o))
            .and_then(|o| o.as_stream().ok())
        else {
            return;
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return;
        }
        let Ok(content) = stream.decompressed_content_with_limit(MAX_STREAM_BYTES) else {
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
            .and_then(|r| r.as_dict().ok())
            .cloned();
        let resources = own.as_ref().or(resources);
        self.run(&content, resources, inner, depth + 1);
    }

    /// The index of the font resource `name`: a font object is loaded on first
    /// use; an inline font dictionary (rare) each time it is selected.
    fn font(&mut self, resources: Option<&Dictionary>, name: &[u8]) -> Option<usize> {
        let doc = self.doc;
        let entry = resources?
            .get(b"Font")
            .ok()
            .map(|f| deref(doc, f))
            .and_then(|f| f.as_dict().ok())?
            .get(name)
            .ok()?;
        let id = match entry {
            Object::Reference(id) => Some(*id),
            _ => None,
        };
        if let Some(index) = id.and_then(|id| self.font_ids.get(&id)) {
            return Some(*index);
        }
        let dict = deref(doc, entry).as_dict().ok()?;
        if self.fonts.len() >= usize::from(u16::MAX) {
            return None;
        }
        self.fonts.push(Font::load(doc, dict));
        let index = self.fonts.len() - 1;
        if let Some(id) = id {
            self.font_ids.insert(id, index);
        }
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
