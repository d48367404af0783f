//! A PDF's lines, page by page, to Markdown (issue 31). Pure.
//!
//! Furniture goes first ([`furniture`]), then each page's lines become blocks
//! ([`blocks`]), blocks cut by a column or page break are joined, and each block
//! is written: `#` headings by size rank, `- ` list items, paragraphs.

use super::blocks::{self, Block};
use super::furniture::furniture;
use super::hyphens::{Vocabulary, join_lines};
use super::lines::Line;
use crate::extract::writer::escape_line;

/// Heading levels used; smaller heading sizes share the last.
const MAX_LEVEL: usize = 4;

/// The Markdown of a document's pages.
pub(crate) fn markdown(pages: &[Vec<Line>]) -> String {
    let marks = furniture(pages);
    let mut all: Vec<Block> = Vec::new();
    for (lines, marks) in pages.iter().zip(&marks) {
        let kept: Vec<Line> = lines
            .iter()
            .zip(marks)
            .filter(|(_, furniture)| !**furniture)
            .map(|(line, _)| line.clone())
            .collect();
        all.extend(blocks::blocks(&kept));
    }
    let all = blocks::join_across_regions(all);
    let body = body_size(&all);
    let heading_sizes = heading_sizes(&all, body);
    let vocabulary = Vocabulary::of(all.iter().flat_map(|b| &b.lines));
    let mut out = String::new();
    let mut previous_bullet = false;
    for block in &all {
        let text = join_lines(&block.lines, &vocabulary);
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
        match level {
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
        previous_bullet = block.bullet && level.is_none();
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The size most of the text is set in.
fn body_size(blocks: &[Block]) -> f32 {
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
fn heading_sizes(blocks: &[Block], body: f32) -> Vec<f32> {
    let mut sizes: Vec<f32> = blocks
        .iter()
        .filter(|b| b.size > body * 1.12 && b.lines.len() <= 3)
        .map(|b| (b.size * 2.0).round() / 2.0)
        .collect();
    sizes.sort_by(|a, b| b.total_cmp(a));
    sizes.dedup();
    sizes
}

fn heading_level(block: &Block, body: f32, sizes: &[f32], text: &str) -> Option<usize> {
    if block.bullet || block.lines.len() > 3 || text.chars().count() > 200 {
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
        .find_map(|line| line.trim_start_matches('#').strip_prefix(' ').filter(|_| line.starts_with('#')))
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
        }
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
            page(1, &["Big Title", "Body text that runs long enough.", "Section", "• one", "• two"]),
            page(2, &["Run-in", "More body text here, and a work-"]),
            page(3, &["ers line # kept.", "Final words"]),
        ];
        assert_eq!(
            markdown(&pages),
            "# Big Title\n\nBody text that runs long enough.\n\n## Section\n\n- one\n- two\n\n\
             ### Run-in\n\nMore body text here, and a workers line # kept.\n\nFinal words\n"
        );
        assert_eq!(first_heading("text\n## Sec tion \n").as_deref(), Some("Sec tion"));
        assert_eq!(escape_line("1. not a __list__"), "1\\. not a \\_\\_list\\_\\_");
    }
}
