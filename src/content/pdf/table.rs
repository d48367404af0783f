//! Tables, as Markdown where the layout allows: text set in
//! aligned columns over several consecutive rows is found on a page and kept as
//! a [`Table`], which the writer renders as a GitHub pipe table. Pure.
//!
//! A PDF has no table, only glyphs; what shows one is the layout:
//!
//! - A **row** is a run of consecutive lines (content-stream order) on one
//!   baseline, each further right than the last. Its **cells** are those lines,
//!   cut again at their wide gaps ([`Line::gaps`], wider than an em: word spaces
//!   are a quarter em, a justified line's a little more).
//! - A **table** is a run of at least [`MIN_ROWS`] rows, each of two cells or
//!   more, going down the page at a row's pitch, whose cells leave vertical
//!   **gutters** at least [`GUTTER`] em wide empty on every row: the columns are
//!   what lies between the gutters.
//!
//! It must be conservative: a paragraph is never a table (it has no wide gap,
//! let alone one on three lines in a row at the same place), and neither are:
//!
//! - a list whose markers hang in a column of their own (`•`, `1.`, `[3]`, `(a)`):
//!   two columns, the first all markers;
//! - a page set in two columns whose lines were painted across the page: two
//!   or more columns of prose (cells of [`PROSE_WORDS`] words and more);
//! - a layout of a few stray pieces: every column must be filled on at least
//!   half the rows, and every row on two columns at least.
//!
//! A cell that wraps onto a second line, a table painted column by column and a
//! table whose columns are closer than [`GUTTER`] are not found: their text stays
//! lines, as before (nothing is lost, nothing is reordered).

use std::ops::Range;

use super::lines::Line;

/// Rows a table has at least.
const MIN_ROWS: usize = 3;
/// The narrowest gutter between two columns, in ems: as wide as a cell gap
/// ([`Line::gaps`]), four word spaces.
const GUTTER: f32 = 1.0;
/// The widest step from one row's baseline down to the next, in ems: rows are
/// a line apart, or a little more with the cells' padding; a larger step is a
/// new part of the page.
const MAX_PITCH: f32 = 3.0;
/// Lines on one baseline: within this many ems.
const SAME_BASELINE: f32 = 0.4;
/// The most columns a table has: more is a spaced-out line, not a table.
const MAX_COLUMNS: usize = 24;
/// The most cells a row of a table has (several may share a column): a bound
/// on the work a hostile page of countless pieces on one baseline can cause.
const MAX_CELLS: usize = 4 * MAX_COLUMNS;
/// A column whose cells have this many words or more (the median) is prose.
const PROSE_WORDS: usize = 6;

/// A table found on a page: every row has one cell per column (`""` where the
/// row has nothing there); the first row is its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    pub(crate) rows: Vec<Vec<String>>,
}

/// A part of a page's lines, in order: plain lines, or lines that are a table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// These lines (indices into the page's lines) are text.
    Lines(Range<usize>),
    /// These lines are this table.
    Table(Range<usize>, Table),
}

/// Splits a page's lines (furniture removed) into text and tables.
pub(crate) fn parts(lines: &[Line]) -> Vec<Part> {
    let rows = rows(lines);
    let mut out = Vec::new();
    // The first line not yet in a part.
    let mut done = 0;
    let mut i = 0;
    while i < rows.len() {
        let end = run_end(&rows, i);
        let found = (end - i >= MIN_ROWS)
            .then(|| table(&rows[i..end]))
            .flatten();
        match found {
            Some(table) => {
                let lines_of = rows[i].lines.start..rows[end - 1].lines.end;
                if done < lines_of.start {
                    out.push(Part::Lines(done..lines_of.start));
                }
                done = lines_of.end;
                out.push(Part::Table(lines_of, table));
                i = end;
            }
            // A run long enough that failed (a list, two columns of prose) fails
            // from any later start too: skip it, so the scan stays linear.
            None if end - i >= MIN_ROWS => i = end,
            None => i += 1,
        }
    }
    if done < lines.len() {
        out.push(Part::Lines(done..lines.len()));
    }
    out
}

/// One row: consecutive lines on one baseline.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    /// Its lines, indices into the page's lines.
    lines: Range<usize>,
    y: f32,
    /// The largest size on the row: the unit of its distances.
    em: f32,
    cells: Vec<Cell>,
}

/// A cell's text and horizontal extent.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    text: String,
    x0: f32,
    x1: f32,
}

/// Groups the lines into rows and cuts them into cells.
fn rows(lines: &[Line]) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let em = line.size.max(0.5);
        if let Some(row) = out.last_mut() {
            let em = row.em.max(em);
            let last_x1 = row.cells.last().map_or(f32::MAX, |c| c.x1);
            if (line.y - row.y).abs() <= SAME_BASELINE * em && line.x0 >= last_x1 {
                row.lines.end = i + 1;
                row.em = em;
                row.cells.extend(cells(line));
                continue;
            }
        }
        out.push(Row {
            lines: i..i + 1,
            y: line.y,
            em,
            cells: cells(line),
        });
    }
    out
}

/// A line cut at its wide gaps.
fn cells(line: &Line) -> Vec<Cell> {
    let mut out = Vec::with_capacity(line.gaps.len() + 1);
    let (mut from, mut x0) = (0, line.x0);
    for gap in &line.gaps {
        // Offsets come from the line builder; one that is not a boundary here
        // (never expected) leaves the line uncut there rather than panicking.
        let Some(text) = line.text.get(from..gap.at) else {
            continue;
        };
        out.push(Cell {
            text: text.trim().to_owned(),
            x0,
            x1: gap.x0,
        });
        (from, x0) = (gap.at, gap.x1);
    }
    out.push(Cell {
        text: line.text.get(from..).unwrap_or("").trim().to_owned(),
        x0,
        x1: line.x1,
    });
    out.retain(|c| !c.text.is_empty());
    out
}

/// One past the last row of the run that starts at `start`: rows of two cells or
/// more, each a row's pitch below the one before, that keep every column the
/// rows before them made (a row bridging a gutter ends the run).
fn run_end(rows: &[Row], start: usize) -> usize {
    let first = &rows[start];
    if !(2..=MAX_CELLS).contains(&first.cells.len()) {
        return start + 1;
    }
    let em = first.em;
    let mut columns = Vec::new();
    for cell in &first.cells {
        add(&mut columns, cell, em);
    }
    let mut end = start + 1;
    while let Some(row) = rows.get(end) {
        let above = &rows[end - 1];
        let step = above.y - row.y;
        let pitched = step >= SAME_BASELINE * em && step <= MAX_PITCH * em;
        if !(2..=MAX_CELLS).contains(&row.cells.len()) || !pitched {
            break;
        }
        let mut wider = columns.clone();
        for cell in &row.cells {
            add(&mut wider, cell, em);
        }
        if wider.len() < columns.len() || wider.len() > MAX_COLUMNS {
            break;
        }
        columns = wider;
        end += 1;
    }
    end
}

/// Adds a cell's extent to the columns (sorted, disjoint extents at least a
/// gutter apart), merging the columns it touches.
fn add(columns: &mut Vec<(f32, f32)>, cell: &Cell, em: f32) {
    let reach = GUTTER * em;
    let (mut x0, mut x1) = (cell.x0.min(cell.x1), cell.x0.max(cell.x1));
    columns.retain(|&(c0, c1)| {
        let apart = c0 - x1 >= reach || x0 - c1 >= reach;
        if !apart {
            x0 = x0.min(c0);
            x1 = x1.max(c1);
        }
        apart
    });
    let at = columns.partition_point(|&(c0, _)| c0 < x0);
    columns.insert(at, (x0, x1));
}

/// The table `rows` make, if they pass every test of the module docs.
fn table(rows: &[Row]) -> Option<Table> {
    let em = rows.first()?.em;
    let mut columns = Vec::new();
    for cell in rows.iter().flat_map(|r| &r.cells) {
        add(&mut columns, cell, em);
    }
    if columns.len() < 2 || columns.len() > MAX_COLUMNS {
        return None;
    }
    let grid: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut cells = vec![String::new(); columns.len()];
            for cell in &row.cells {
                let (x0, x1) = (cell.x0.min(cell.x1), cell.x0.max(cell.x1));
                // Every cell lies in one column, as the columns are their union
                // (a coordinate that is NaN in a hostile file matches none: 0).
                let column = columns
                    .iter()
                    .position(|&(c0, c1)| x0 >= c0 && x1 <= c1)
                    .unwrap_or(0);
                let text = &mut cells[column];
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(&cell.text);
            }
            cells
        })
        .collect();
    let filled = |row: &Vec<String>| row.iter().filter(|c| !c.is_empty()).count();
    if grid.iter().any(|row| filled(row) < 2) {
        return None;
    }
    let column = |j: usize| {
        grid.iter()
            .map(move |row| row[j].as_str())
            .filter(|c| !c.is_empty())
    };
    if (0..columns.len()).any(|j| 2 * column(j).count() < grid.len()) {
        return None;
    }
    if columns.len() == 2 && column(0).all(is_marker) {
        return None;
    }
    let prose = (0..columns.len())
        .filter(|&j| median_words(column(j)) >= PROSE_WORDS)
        .count();
    (prose < 2).then_some(Table { rows: grid })
}

/// The median word count of some cells.
fn median_words<'a>(cells: impl Iterator<Item = &'a str>) -> usize {
    let mut counts: Vec<usize> = cells.map(|c| c.split_whitespace().count()).collect();
    counts.sort_unstable();
    counts.get(counts.len() / 2).copied().unwrap_or(0)
}

/// A list item's marker: one symbol (a bullet, a dash), a number or letter with
/// `.` or `)`, `(a)`, `[12]`, or a bare number (a footnote's).
fn is_marker(cell: &str) -> bool {
    let mut chars = cell.chars();
    let (Some(first), rest) = (chars.next(), chars.as_str()) else {
        return false;
    };
    // Any one symbol: a bullet, a dash, or a symbol font's private-use glyph
    // (LibreOffice's `\u{f0b7}`).
    if rest.is_empty() && !first.is_alphanumeric() {
        return true;
    }
    let inner = cell.strip_prefix(['(', '[']).unwrap_or(cell);
    let core = inner.strip_suffix(['.', ')', ']']).unwrap_or(inner);
    // `a` or `iv` alone is a word; `a)` or `(iv)` is a marker.
    let decorated = core.len() < cell.len();
    let digits = !core.is_empty() && core.len() <= 3 && core.chars().all(|c| c.is_ascii_digit());
    let letter = decorated && core.chars().count() == 1 && core.chars().all(char::is_alphabetic);
    let roman = decorated
        && !core.is_empty()
        && core.len() <= 5
        && core
            .chars()
            .all(|c| matches!(c, 'i' | 'v' | 'x' | 'I' | 'V' | 'X'));
    digits || letter || roman
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::pdf::lines::Gap;

    /// A line of `cells` (text and left x), the cells after the first parted by
    /// wide gaps inside the line, as the line builder records them.
    fn row(cells: &[(&str, f32)], y: f32) -> Line {
        let size = 10.0;
        let mut text = String::new();
        let mut gaps = Vec::new();
        let mut x1 = cells.first().map_or(0.0, |c| c.1);
        for (i, (cell, x)) in cells.iter().enumerate() {
            if i > 0 {
                text.push(' ');
                gaps.push(Gap {
                    at: text.len(),
                    x0: x1,
                    x1: *x,
                });
            }
            text.push_str(cell);
            x1 = x + 0.5 * size * cell.chars().count() as f32;
        }
        Line {
            text,
            x0: cells.first().map_or(0.0, |c| c.1),
            x1,
            y,
            size,
            bold: false,
            italic: false,
            item_x: None,
            gaps,
        }
    }

    fn prose(text: &str, x0: f32, y: f32) -> Line {
        row(&[(text, x0)], y)
    }

    fn tables(parts: &[Part]) -> Vec<&Vec<Vec<String>>> {
        parts
            .iter()
            .filter_map(|p| match p {
                Part::Table(_, t) => Some(&t.rows),
                Part::Lines(_) => None,
            })
            .collect()
    }

    #[test]
    fn aligned_columns_over_three_rows_are_a_table_between_paragraphs() {
        let lines = vec![
            prose("Results of the trial are below.", 72.0, 700.0),
            row(&[("Name", 72.0), ("Score", 200.0), ("Grade", 300.0)], 680.0),
            row(&[("Alice", 72.0), ("91", 200.0), ("A", 300.0)], 666.0),
            row(&[("Bob", 72.0), ("78", 200.0), ("C", 300.0)], 652.0),
            row(&[("Carol", 72.0), ("85", 200.0)], 638.0),
            prose("That is all.", 72.0, 610.0),
        ];
        let parts = parts(&lines);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[0], Part::Lines(0..1));
        assert_eq!(parts[2], Part::Lines(5..6));
        let rows = tables(&parts)[0];
        assert_eq!(
            rows,
            &[
                vec!["Name", "Score", "Grade"],
                vec!["Alice", "91", "A"],
                vec!["Bob", "78", "C"],
                vec!["Carol", "85", ""],
            ]
        );
    }

    #[test]
    fn cells_painted_as_separate_lines_on_one_baseline_make_rows_too() {
        // Gaps of more than three ems part the line builder's lines: each cell
        // is a line of its own, on the row's baseline.
        let mut lines = Vec::new();
        for (i, (a, b)) in [("Key", "Value"), ("alpha", "1.5"), ("beta", "2.25")]
            .iter()
            .enumerate()
        {
            let y = 700.0 - 14.0 * i as f32;
            lines.push(prose(a, 72.0, y));
            lines.push(prose(b, 250.0, y));
        }
        let parts = parts(&lines);
        assert_eq!(
            parts,
            vec![Part::Table(
                0..6,
                Table {
                    rows: vec![
                        vec!["Key".into(), "Value".into()],
                        vec!["alpha".into(), "1.5".into()],
                        vec!["beta".into(), "2.25".into()],
                    ]
                }
            )]
        );
    }

    #[test]
    fn two_rows_or_a_row_bridging_a_gutter_are_no_table() {
        let two = vec![
            row(&[("a", 72.0), ("b", 200.0)], 700.0),
            row(&[("c", 72.0), ("d", 200.0)], 686.0),
            prose("a long line of prose right across the gutter", 72.0, 672.0),
            row(&[("e", 72.0), ("f", 200.0)], 658.0),
        ];
        assert!(tables(&parts(&two)).is_empty());
        // A cell that covers the gutter of the rows above ends the run there.
        let bridged = vec![
            row(&[("a", 72.0), ("b", 200.0)], 700.0),
            row(&[("c", 72.0), ("d", 200.0)], 686.0),
            row(&[("a very wide cell spanning", 72.0), ("x", 300.0)], 672.0),
            row(&[("e", 72.0), ("f", 200.0)], 658.0),
        ];
        assert!(tables(&parts(&bridged)).is_empty());
    }

    #[test]
    fn hanging_list_markers_are_a_list_not_a_table() {
        for markers in [
            ["•", "•", "•"],
            ["\u{f0b7}", "\u{f0b7}", "\u{f0b7}"],
            ["1.", "2.", "3."],
            ["[1]", "[2]", "[3]"],
            ["(a)", "(b)", "(c)"],
        ] {
            let lines: Vec<Line> = markers
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    row(
                        &[(m, 72.0), ("an item of the list", 90.0)],
                        700.0 - 12.0 * i as f32,
                    )
                })
                .collect();
            assert!(tables(&parts(&lines)).is_empty(), "{markers:?}");
        }
        // A header over the numbers makes it a table.
        let ranked = vec![
            row(&[("Rank", 72.0), ("Team", 120.0)], 700.0),
            row(&[("1", 72.0), ("Lions", 120.0)], 686.0),
            row(&[("2", 72.0), ("Tigers", 120.0)], 672.0),
        ];
        assert_eq!(tables(&parts(&ranked)).len(), 1);
    }

    #[test]
    fn a_two_column_page_painted_across_is_not_a_table() {
        // Left and right column lines alternate on shared baselines, a gutter
        // between them: aligned, but prose on both sides.
        let left = [
            "The first column of the paper",
            "runs down the left half of the",
            "page in lines of many words,",
            "justified to the column width.",
        ];
        let right = [
            "while the second column of it",
            "runs down the right half with",
            "its own lines at the very same",
            "baselines as the left column.",
        ];
        let lines: Vec<Line> = left
            .iter()
            .zip(right)
            .enumerate()
            .map(|(i, (l, r))| row(&[(l, 72.0), (r, 320.0)], 700.0 - 12.0 * i as f32))
            .collect();
        assert!(tables(&parts(&lines)).is_empty());
    }

    #[test]
    fn paragraphs_without_wide_gaps_are_never_tables() {
        let lines: Vec<Line> = (0..6)
            .map(|i| {
                prose(
                    "plain words of a paragraph in lines",
                    72.0,
                    700.0 - 12.0 * i as f32,
                )
            })
            .collect();
        assert_eq!(parts(&lines), vec![Part::Lines(0..6)]);
        // Rows too far apart are not one table either.
        let sparse = vec![
            row(&[("a", 72.0), ("b", 200.0)], 700.0),
            row(&[("c", 72.0), ("d", 200.0)], 650.0),
            row(&[("e", 72.0), ("f", 200.0)], 600.0),
        ];
        assert!(tables(&parts(&sparse)).is_empty());
        assert!(parts(&[]).is_empty());
    }

    #[test]
    fn markers() {
        for yes in ["•", "-", "\u{f0b7}", "1.", "12)", "(a)", "[3]", "iv.", "7"] {
            assert!(is_marker(yes), "{yes}");
        }
        for no in ["Rank", "1.5", "2024", "a", "Total", ""] {
            assert!(!is_marker(no), "{no}");
        }
    }
}
