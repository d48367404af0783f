//! A PDF's lines, page by page, to Markdown. Pure.
//!
//! Furniture goes first ([`furniture`]), then each page's tables are found
//! ([`table`]) and its other lines become blocks ([`blocks`]), blocks cut by a
//! column or page break are joined, and each block is written: `#` headings by
//! size rank, `- ` list items, pipe tables, paragraphs.
//!
//! Where each page begins in the Markdown is kept too, as chunk-boundary hints
//! so the chunker can cut at page boundaries: the start of
//! the page's first block; for a page whose first paragraph continues one from
//! the page before (joined), the block boundary nearer the page break, the
//! joined block's start or its end. They cost no text: the chunker only prefers
//! them as cut points.

use super::blocks::{self, Block};
use super::furniture::furniture;
use super::hyphens::{Vocabulary, join_lines};
use super::lines::Line;
use super::table::{self, Part, Table};
use crate::budget;
use crate::extract::table::TableBuilder;
use crate::extract::writer::{Writer, escape_line};

/// Heading levels used; smaller heading sizes share the last.
const MAX_LEVEL: usize = 4;

/// A document's Markdown and where its pages begin in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) markdown: String,
    /// Byte offsets in `markdown`, increasing, each at the start or end of a
    /// block: where a page after the first begins (see the module docs).
    pub(crate) page_starts: Vec<usize>,
}

/// The Markdown of a document's pages.
pub(crate) fn markdown(pages: &[Vec<Line>]) -> Written {
    let marks = furniture(pages);
    let mut all: Vec<Block> = Vec::new();
    for (page, (lines, marks)) in pages.iter().zip(&marks).enumerate() {
        // Out of time or call: stop; the read answers with the budget's error.
        if budget::interrupted() {
            break;
        }
        let kept: Vec<Line> = lines
            .iter()
            .zip(marks)
            .filter(|(_, furniture)| !**furniture)
            .map(|(line, _)| line.clone())
            .collect();
        all.extend(page_blocks(&kept, page));
    }
    let all = blocks::join_across_regions(all);
    let text_blocks = || all.iter().filter(|b| b.table.is_none());
    let body = body_size(text_blocks());
    let heading_sizes = heading_sizes(text_blocks(), body);
    let vocabulary = Vocabulary::of(all.iter().flat_map(|b| &b.lines));
    let mut out = String::new();
    let mut page_starts = Vec::new();
    // The last page whose beginning has a hint (or needs none: the first).
    let mut page_seen = 0;
    let mut previous_bullet = false;
    for block in &all {
        if budget::interrupted() {
            break;
        }
        let text = match &block.table {
            Some(table) => table_markdown(table),
            None => join_lines(&block.lines, &vocabulary),
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let level = heading_level(block, body, &heading_sizes, text);
        if !out.is_empty() {
            out.push_str(if block.bullet && previous_bullet && level.is_none() {
                "\n"
            } else {
                "\n\n"
            });
        }
        let start = out.len();
        if block.page > page_seen {
            page_starts.push(start);
            page_seen = block.page;
        }
        push_block(&mut out, block, level, text);
        for (page, at_start) in joined_pages(block) {
            if page > page_seen {
                page_starts.push(if at_start { start } else { out.len() });
                page_seen = page;
            }
        }
        previous_bullet = block.bullet && level.is_none();
    }
    if !out.is_empty() {
        out.push('\n');
    }
    page_starts.dedup();
    // A page that begins at the very end (a joined block's end, last of all)
    // is no boundary.
    page_starts.retain(|&at| at > 0 && at + 1 < out.len());
    Written {
        markdown: out,
        page_starts,
    }
}

/// Writes one block's text: a table as it is, a heading after its `#`s, a list
/// item after `- `, a paragraph; text escaped as Markdown.
fn push_block(out: &mut String, block: &Block, level: Option<usize>, text: &str) {
    match level {
        _ if block.table.is_some() => out.push_str(text),
        Some(level) => {
            out.push_str(&"#".repeat(level));
            out.push(' ');
            out.push_str(&escape_line(text));
        }
        None if block.bullet => {
            out.push_str("- ");
            out.push_str(&escape_line(text));
        }
        None => out.push_str(&escape_line(text)),
    }
}

/// The blocks of one page's kept lines: its tables, and blocks of the lines
/// between them (which do not begin a region: they follow a table).
fn page_blocks(lines: &[Line], page: usize) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for part in table::parts(lines) {
        match part {
            Part::Lines(range) => {
                let mut blocks = blocks::blocks(lines.get(range).unwrap_or(&[]), page);
                if let Some(first) = blocks.first_mut().filter(|_| !out.is_empty()) {
                    first.starts_region = false;
                }
                out.extend(blocks);
            }
            Part::Table(range, table) => {
                let lines = lines.get(range).unwrap_or(&[]);
                let size = lines.iter().map(|l| l.size).fold(0.0, f32::max);
                out.push(Block::table(table, page, size));
            }
        }
    }
    out
}

/// For each later page a joined block holds text of: the page, and whether the
/// block's start (`true`) or its end is the block boundary nearer to where the
/// page's text begins in it, by the characters before and after.
fn joined_pages(block: &Block) -> impl Iterator<Item = (usize, bool)> + '_ {
    let chars = |lines: &[String]| -> usize { lines.iter().map(|l| l.chars().count()).sum() };
    block.joined.iter().map(move |&(page, line)| {
        let (before, after) = block.lines.split_at(line.min(block.lines.len()));
        (page, chars(before) <= chars(after))
    })
}

/// A table as a GitHub pipe table, the first row its header, each cell's text
/// escaped as inline Markdown and `|` as `\|` (the HTML reader's table writer,
/// FR-WF-EXT-TABLE-01).
fn table_markdown(table: &Table) -> String {
    let mut builder = TableBuilder::default();
    for row in &table.rows {
        builder.start_row();
        for cell in row {
            let mut writer = Writer::cell();
            writer.text(cell);
            builder.add_cell(writer.finish(), false);
        }
    }
    builder.render()
}

/// The size most of the text is set in.
fn body_size<'a>(blocks: impl Iterator<Item = &'a Block>) -> f32 {
    let mut counts: Vec<(u32, usize)> = Vec::new();
    for block in blocks {
        let key = (block.size * 4.0).round() as u32;
        let chars: usize = block.lines.iter().map(|l| l.chars().count()).sum();
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += chars,
            None => counts.push((key, chars)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|(k, n)| (*n, *k))
        .map_or(0.0, |(k, _)| k as f32 / 4.0)
}

/// Distinct sizes of the blocks that could be headings, largest first.
fn heading_sizes<'a>(blocks: impl Iterator<Item = &'a Block>, body: f32) -> Vec<f32> {
    let mut sizes: Vec<f32> = blocks
        .filter(|b| b.size > body * 1.12 && b.lines.len() <= 3)
        .map(|b| (b.size * 2.0).round() / 2.0)
        .collect();
    sizes.sort_by(|a, b| b.total_cmp(a));
    sizes.dedup();
    sizes
}

fn heading_level(block: &Block, body: f32, sizes: &[f32], text: &str) -> Option<usize> {
    if block.table.is_some() || block.bullet || block.lines.len() > 3 || text.chars().count() > 200
    {
        return None;
    }
    let size = (block.size * 2.0).round() / 2.0;
    if let Some(rank) = sizes.iter().position(|s| *s == size) {
        return Some((rank + 1).min(MAX_LEVEL));
    }
    // Bold at body size, short, not a sentence: a run-in heading.
    let sentence = text.ends_with(['.', ',', ';']);
    (block.bold && (block.size - body).abs() < 0.5 && block.lines.len() <= 2 && !sentence)
        .then(|| (sizes.len() + 1).min(MAX_LEVEL))
}

/// The text of the first heading of `markdown`, if any.
pub(crate) fn first_heading(markdown: &str) -> Option<String> {
    markdown
        .lines()
        .find_map(|line| {
            line.trim_start_matches('#')
                .strip_prefix(' ')
                .filter(|_| line.starts_with('#'))
        })
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, y: f32, size: f32, bold: bool) -> Line {
        Line {
            text: text.to_owned(),
            x0: 72.0,
            x1: 500.0,
            y,
            size,
            bold,
            italic: false,
            item_x: None,
            gaps: Vec::new(),
        }
    }

    fn cell(text: &str, x0: f32, y: f32) -> Line {
        Line {
            x0,
            x1: x0 + 30.0,
            ..line(text, y, 10.0, false)
        }
    }

    #[test]
    fn a_table_is_a_pipe_table_and_pages_begin_at_block_boundaries() {
        let mut first = vec![line("Intro text.", 760.0, 10.0, false)];
        for (i, (a, b)) in [("Name", "Mark"), ("x|y", "*b*"), ("c", "d")]
            .iter()
            .enumerate()
        {
            let y = 730.0 - 14.0 * i as f32;
            first.push(cell(a, 72.0, y));
            first.push(cell(b, 200.0, y));
        }
        first.push(line(
            "A paragraph that runs on and on across the",
            600.0,
            10.0,
            false,
        ));
        let second = vec![
            line("page break and ends.", 760.0, 10.0, false),
            line("Second paragraph.", 730.0, 10.0, false),
        ];
        let written = markdown(&[first, second]);
        let expected = "Intro text.\n\n| Name | Mark |\n|---|---|\n| x\\|y | \\*b\\* |\n| c | d |\n\n\
                        A paragraph that runs on and on across the page break and ends.\n\n\
                        Second paragraph.\n";
        assert_eq!(written.markdown, expected);
        // Most of the joined paragraph is page 1's: page 2 begins after it.
        let after_join = expected.find("\n\nSecond").unwrap();
        assert_eq!(written.page_starts, [after_join]);

        // Most of it page 2's: page 2 begins where the paragraph does; page 3
        // at its first block.
        let pages = vec![
            vec![
                line("Intro text.", 760.0, 10.0, false),
                line("It runs", 700.0, 10.0, false),
            ],
            vec![
                line(
                    "on across the page break and ends much later.",
                    760.0,
                    10.0,
                    false,
                ),
                line("More.", 730.0, 10.0, false),
            ],
            vec![line("Third page.", 760.0, 10.0, false)],
        ];
        let written = markdown(&pages);
        assert_eq!(
            written.markdown,
            "Intro text.\n\nIt runs on across the page break and ends much later.\n\nMore.\n\nThird page.\n"
        );
        assert_eq!(
            written.page_starts,
            [13, written.markdown.find("Third").unwrap()]
        );
    }

    #[test]
    fn headings_by_size_lists_and_furniture() {
        let page = |n: u32, body: &[&str]| {
            let mut lines = vec![line("Running head", 810.0, 9.0, false)];
            let mut y = 760.0;
            for text in body {
                let (size, bold) = match *text {
                    "Big Title" => (20.0, true),
                    "Section" => (14.0, true),
                    "Run-in" => (10.0, true),
                    _ => (10.0, false),
                };
                lines.push(line(text, y, size, bold));
                y -= 30.0;
            }
            lines.push(line(&n.to_string(), 30.0, 9.0, false));
            lines
        };
        let pages = vec![
            page(
                1,
                &[
                    "Big Title",
                    "Body text that runs long enough.",
                    "Section",
                    "• one",
                    "\u{f0b7} two",
                ],
            ),
            page(2, &["Run-in", "More body text here, and a work-"]),
            page(3, &["ers line # kept.", "Final words"]),
        ];
        assert_eq!(
            markdown(&pages).markdown,
            "# Big Title\n\nBody text that runs long enough.\n\n## Section\n\n- one\n- two\n\n\
             ### Run-in\n\nMore body text here, and a workers line # kept.\n\nFinal words\n"
        );
        assert_eq!(
            first_heading("text\n## Sec tion \n").as_deref(),
            Some("Sec tion")
        );
        assert_eq!(
            escape_line("1. not a __list__"),
            "1\\. not a \\_\\_list\\_\\_"
        );
    }
}
