//! Lines to Markdown blocks: paragraphs, headings where the fonts show
//! them, list items, and the text joins across line ends, columns and pages. Pure.
//!
//! - A block ends at a wider vertical gap than the lines' spacing, a change of
//!   size or weight, a line that moves up (the next column) or indents (a new
//!   paragraph), a bullet, or a page.
//! - A paragraph cut by a column or a page (no closing punctuation, the next part
//!   starts in lowercase) is joined again.
//! - A block of few lines set larger than the body text, or bold at body size, is
//!   a heading; its level comes from its size among the heading sizes.
//! - A table ([`super::table`]) is a block of its own, never joined.
//! - Every block knows its page, and where a join brought in a later page's
//!   text: the page boundaries the chunker prefers to cut at.

use super::lines::{BULLETS, Line};
use super::table::Table;

/// A paragraph, heading or list item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block {
    pub(crate) lines: Vec<String>,
    pub(crate) size: f32,
    pub(crate) bold: bool,
    pub(crate) bullet: bool,
    /// The block begins a page or a column: it may continue the one before.
    pub(crate) starts_region: bool,
    /// The table the block is; its rows are also in `lines`, a line each, for
    /// the document's vocabulary.
    pub(crate) table: Option<Table>,
    /// The page the block begins on, from 0.
    pub(crate) page: usize,
    /// Where a join across a page brought in a later page's text: the page and
    /// the index in `lines` of its first line.
    pub(crate) joined: Vec<(usize, usize)>,
}

impl Block {
    /// The block of a table on `page`, set in `size`.
    pub(crate) fn table(table: Table, page: usize, size: f32) -> Block {
        Block {
            lines: table.rows.iter().map(|row| row.join(" ")).collect(),
            size,
            bold: false,
            bullet: false,
            starts_region: false,
            table: Some(table),
            page,
            joined: Vec::new(),
        }
    }
}

/// Splits lines of page `page` (furniture and tables already removed) into
/// blocks.
pub(crate) fn blocks(lines: &[Line], page: usize) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut prev: Option<&Line> = None;
    let mut hang: Option<f32> = None;
    for line in lines {
        let bullet = line.text.starts_with(BULLETS);
        let (new, region) = match prev {
            None => (true, true),
            Some(p) => {
                let em = p.size.max(line.size);
                let up = line.y > p.y + 0.5 * em;
                let gap = p.y - line.y;
                let continues_item = hang.is_some_and(|h| (line.x0 - h).abs() < 0.6 * em);
                let indented = line.x0 > p.x0 + 0.6 * em && line.x0 < p.x0 + 6.0 * em;
                let resized = (line.size - p.size).abs() > 0.08 * em;
                let new = up
                    || gap > 1.75 * em
                    || resized
                    || line.bold != p.bold
                    || bullet
                    || (indented && !continues_item);
                (new, up)
            }
        };
        if new {
            hang = if bullet { line.item_x } else { None };
            out.push(Block {
                lines: Vec::new(),
                size: line.size,
                bold: line.bold,
                bullet,
                starts_region: region,
                table: None,
                page,
                joined: Vec::new(),
            });
        }
        if let Some(block) = out.last_mut() {
            let text = if bullet && block.lines.is_empty() {
                line.text
                    .trim_start_matches(BULLETS)
                    .trim_start()
                    .to_owned()
            } else {
                line.text.clone()
            };
            if !text.is_empty() {
                block.lines.push(text);
            }
        }
        prev = Some(line);
    }
    out.retain(|b| !b.lines.is_empty());
    out
}

/// Joins blocks that a column or page break cut (see the module docs).
pub(crate) fn join_across_regions(blocks: Vec<Block>) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    for block in blocks {
        if let Some(last) = out.last_mut()
            && block.starts_region
            && continues(last, &block)
        {
            let page_so_far = last.joined.last().map_or(last.page, |&(page, _)| page);
            if block.page != page_so_far {
                last.joined.push((block.page, last.lines.len()));
            }
            last.lines.extend(block.lines);
            continue;
        }
        out.push(block);
    }
    out
}

fn continues(before: &Block, after: &Block) -> bool {
    let same = (before.size - after.size).abs() <= 0.08 * before.size.max(after.size);
    let open = before
        .lines
        .last()
        .and_then(|l| l.chars().last())
        .is_some_and(|c| !matches!(c, '.' | '!' | '?' | ':' | '"' | '\u{201d}' | ')'));
    let lower = after
        .lines
        .first()
        .and_then(|l| l.chars().next())
        .is_some_and(char::is_lowercase);
    let text = before.table.is_none() && after.table.is_none();
    text && same && before.bold == after.bold && !after.bullet && open && lower
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, x0: f32, y: f32, size: f32) -> Line {
        Line {
            text: text.to_owned(),
            x0,
            x1: x0 + 200.0,
            y,
            size,
            bold: false,
            italic: false,
            item_x: text.starts_with('•').then_some(x0 + 11.0),
            gaps: Vec::new(),
        }
    }

    #[test]
    fn gaps_sizes_indents_and_bullets_split_blocks() {
        let lines = vec![
            line("Heading", 72.0, 800.0, 16.0),
            line("First paragraph line", 72.0, 770.0, 10.0),
            line("goes on here.", 72.0, 758.0, 10.0),
            line("Indented new paragraph", 84.0, 746.0, 10.0),
            line("• item one", 72.0, 734.0, 10.0),
            line("continued", 83.0, 722.0, 10.0),
            line("After a gap", 72.0, 690.0, 10.0),
            line("next column", 320.0, 800.0, 10.0),
        ];
        let blocks = blocks(&lines, 0);
        let texts: Vec<Vec<&str>> = blocks
            .iter()
            .map(|b| b.lines.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            texts,
            vec![
                vec!["Heading"],
                vec!["First paragraph line", "goes on here."],
                vec!["Indented new paragraph"],
                vec!["item one", "continued"],
                vec!["After a gap"],
                vec!["next column"],
            ]
        );
        assert!(blocks[3].bullet && blocks[5].starts_region && !blocks[4].starts_region);
        let joined = join_across_regions(blocks);
        assert_eq!(joined.last().unwrap().lines, ["After a gap", "next column"]);
    }
}
