//! Positioned glyphs to text lines. Pure.
//!
//! Glyphs are taken in content-stream order, which is reading order for the
//! producers that matter (a two-column pdfTeX page ships its left column, then its
//! right; browsers and word processors paint in document order): a line goes on
//! while the baseline holds and the pen moves forward by less than a few ems. A
//! word space is a gap of more than [`WORD_GAP`] em, or of more than
//! [`SPACED_GAP`] em after an explicit space or a wide `TJ` kern (Ghostscript
//! kerns some pairs with a space glyph pulled back to nothing: `hav e`). Ligature
//! glyphs are expanded (U+FB00..FB06).

use super::interp::Glyph;

/// A gap wider than this many ems between two glyphs is a word space.
const WORD_GAP: f32 = 0.15;
/// After an explicit space, a gap wider than this many ems is a word space.
const SPACED_GAP: f32 = 0.05;
/// A forward jump wider than this many ems starts another line (a table cell, a
/// column beside).
const SEGMENT_GAP: f32 = 3.0;
/// A baseline moving more than this many ems starts another line.
const BASELINE_SHIFT: f32 = 0.4;
/// A gap inside a line wider than this many ems is kept as a [`Gap`]: far wider
/// than a word space (about a quarter em, a little more in a justified line), as
/// wide as the padding between two table cells.
const CELL_GAP: f32 = 1.0;

/// One line of text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub(crate) text: String,
    /// Left and right ends, baseline (user space, y up).
    pub(crate) x0: f32,
    pub(crate) x1: f32,
    pub(crate) y: f32,
    /// The font size of most of its characters.
    pub(crate) size: f32,
    /// Every glyph bold.
    pub(crate) bold: bool,
    /// Every glyph italic.
    pub(crate) italic: bool,
    /// Where the text after a leading bullet starts (a list item's hang).
    pub(crate) item_x: Option<f32>,
    /// The gaps wider than [`CELL_GAP`] ems inside the line, left to right: where a
    /// table row's cells may part ([`super::table`]). Empty for most lines.
    pub(crate) gaps: Vec<Gap>,
}

/// A wide gap inside a [`Line`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Gap {
    /// The byte offset in the line's text where the text after the gap starts (a
    /// space before it, if any, belongs to the text before).
    pub(crate) at: usize,
    /// Where the text before the gap ends and the text after it starts.
    pub(crate) x0: f32,
    pub(crate) x1: f32,
}

/// Builds the lines of one page.
pub(crate) fn lines(glyphs: &[Glyph]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut current: Option<Builder> = None;
    for glyph in glyphs.iter().filter(|g| g.size > 0.5 && g.size < 2000.0) {
        let text = expand_ligatures(&glyph.text);
        if text.is_empty() || text.chars().all(|c| c == '\u{fffd}') {
            continue;
        }
        match &mut current {
            Some(line) if line.continues(glyph) => line.push(glyph, &text),
            _ => {
                if let Some(done) = current.take() {
                    out.extend(done.finish());
                }
                current = Some(Builder::start(glyph, &text));
            }
        }
    }
    if let Some(done) = current {
        out.extend(done.finish());
    }
    out
}

struct Builder {
    text: String,
    x0: f32,
    x1: f32,
    y: f32,
    size: f32,
    /// Characters per (rounded) size, for the line's dominant size.
    sizes: Vec<(u32, usize)>,
    bold: bool,
    italic: bool,
    item_x: Option<f32>,
    gaps: Vec<Gap>,
}

impl Builder {
    fn start(glyph: &Glyph, text: &str) -> Builder {
        let mut line = Builder {
            text: String::new(),
            x0: glyph.x,
            x1: glyph.x,
            y: glyph.y,
            size: glyph.size,
            sizes: Vec::new(),
            bold: true,
            italic: true,
            item_x: None,
            gaps: Vec::new(),
        };
        line.push(glyph, text);
        line
    }

    fn continues(&self, glyph: &Glyph) -> bool {
        let em = self.size.max(glyph.size);
        (glyph.y - self.y).abs() <= BASELINE_SHIFT * em
            && glyph.x >= self.x1 - 0.5 * em
            && glyph.x - self.x1 <= SEGMENT_GAP * em
    }

    fn push(&mut self, glyph: &Glyph, text: &str) {
        let em = self.size.max(glyph.size);
        if !self.text.is_empty()
            && (glyph.x - self.x1 > WORD_GAP * em
                || (glyph.space_before && glyph.x - self.x1 > SPACED_GAP * em))
            && !self.text.ends_with(' ')
        {
            if self.item_x.is_none() && self.text.trim().chars().all(is_bullet) {
                self.item_x = Some(glyph.x);
            }
            self.text.push(' ');
        }
        if !self.text.is_empty() && glyph.x - self.x1 > CELL_GAP * em {
            self.gaps.push(Gap {
                at: self.text.len(),
                x0: self.x1,
                x1: glyph.x,
            });
        }
        self.text.push_str(text);
        self.x1 = self.x1.max(glyph.x + glyph.width);
        self.bold &= glyph.bold;
        self.italic &= glyph.italic;
        let key = (glyph.size * 4.0).round() as u32;
        let count = text.chars().count();
        match self.sizes.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += count,
            None => self.sizes.push((key, count)),
        }
        // The baseline and size of a line are its first body glyph's: a
        // superscript after it does not move them.
        if self.text.len() == text.len() {
            self.y = glyph.y;
        }
    }

    fn finish(mut self) -> Option<Line> {
        let text = self.text.trim().to_owned();
        if text.is_empty() {
            return None;
        }
        // Offsets into the trimmed text; a gap at either end parts nothing.
        let lead = self.text.len() - self.text.trim_start().len();
        let gaps = self
            .gaps
            .iter()
            .filter_map(|g| {
                let at = g.at.checked_sub(lead)?;
                (at > 0 && at < text.len() && text.is_char_boundary(at)).then_some(Gap { at, ..*g })
            })
            .collect();
        if let Some((key, _)) = self.sizes.iter().max_by_key(|(k, n)| (*n, *k)) {
            self.size = *key as f32 / 4.0;
        }
        Some(Line {
            text,
            x0: self.x0,
            x1: self.x1,
            y: self.y,
            size: self.size,
            bold: self.bold,
            italic: self.italic,
            item_x: self.item_x,
            gaps,
        })
    }
}

/// The bullet glyphs a list item starts with.
/// U+F0B7 is the Symbol font's bullet as LibreOffice writes it (a private-use code
/// point without a Unicode map).
pub(crate) const BULLETS: [char; 7] = ['•', '◦', '▪', '‣', '●', '○', '\u{F0B7}'];

fn is_bullet(c: char) -> bool {
    BULLETS.contains(&c)
}

/// The letters of a ligature glyph (U+FB00..FB06); anything else as it is.
pub(crate) fn expand_ligatures(text: &str) -> String {
    if !text.chars().any(|c| ('\u{fb00}'..='\u{fb06}').contains(&c)) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| match c {
            '\u{fb00}' => "ff".to_owned(),
            '\u{fb01}' => "fi".to_owned(),
            '\u{fb02}' => "fl".to_owned(),
            '\u{fb03}' => "ffi".to_owned(),
            '\u{fb04}' => "ffl".to_owned(),
            '\u{fb05}' | '\u{fb06}' => "st".to_owned(),
            other => other.to_string(),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn glyph(text: &str, x: f32, y: f32, size: f32) -> Glyph {
        Glyph {
            text: text.to_owned(),
            x,
            y,
            width: 0.5 * size * text.chars().count() as f32,
            size,
            space_before: false,
            bold: false,
            italic: false,
            font: 0,
        }
    }

    /// Glyphs of `words` laid out on a baseline from `x`, a space between words.
    pub(crate) fn words(words: &str, x: f32, y: f32, size: f32) -> Vec<Glyph> {
        let mut out = Vec::new();
        let mut pen = x;
        for word in words.split(' ') {
            for (i, c) in word.chars().enumerate() {
                let mut g = glyph(&c.to_string(), pen, y, size);
                g.space_before = i == 0 && pen > x;
                pen += g.width;
                out.push(g);
            }
            pen += 0.25 * size;
        }
        out
    }

    #[test]
    fn glyphs_make_lines_and_words() {
        let mut glyphs = words("Hello brave world", 72.0, 700.0, 10.0);
        glyphs.extend(words("next line", 72.0, 688.0, 10.0));
        let lines = lines(&glyphs);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Hello brave world", "next line"]);
        assert_eq!(lines[0].size, 10.0);
    }

    #[test]
    fn a_gap_without_a_space_glyph_is_a_word_space_and_ligatures_expand() {
        let glyphs = vec![
            glyph("\u{fb01}", 0.0, 0.0, 10.0),
            glyph("nd", 5.0, 0.0, 10.0),
            glyph("it", 20.0, 0.0, 10.0),
        ];
        assert_eq!(lines(&glyphs)[0].text, "find it");
    }

    #[test]
    fn gaps_wider_than_an_em_are_kept_with_offsets_into_the_text() {
        // Word spaces of a quarter em, then a 1.8 em gap, then a half em one.
        let mut glyphs = words("Units sold", 72.0, 700.0, 10.0);
        glyphs.extend(words("120", 137.5, 700.0, 10.0));
        glyphs.push(glyph("k", 157.5, 700.0, 10.0));
        let lines = lines(&glyphs);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].text, "Units sold 120 k");
        let gaps = &lines[0].gaps;
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert_eq!(&lines[0].text[gaps[0].at..], "120 k");
        assert_eq!((gaps[0].x0, gaps[0].x1), (119.5, 137.5));
    }

    #[test]
    fn a_far_jump_or_a_new_baseline_starts_a_line() {
        let glyphs = vec![
            glyph("a", 0.0, 100.0, 10.0),
            glyph("b", 100.0, 100.0, 10.0),
            glyph("c", 0.0, 80.0, 10.0),
        ];
        let texts: Vec<String> = lines(&glyphs).into_iter().map(|l| l.text).collect();
        assert_eq!(texts, ["a", "b", "c"]);
    }
}
