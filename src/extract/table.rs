//! GitHub-flavoured pipe tables (FR-WF-EXT-TABLE-01, EXT-TABLE-02).

/// The rows of one `<table>`, cells already rendered as inline Markdown.
#[derive(Debug, Default)]
pub(crate) struct TableBuilder {
    rows: Vec<Row>,
    current: Option<Row>,
    /// `<caption>` text, written as a paragraph above the table.
    pub caption: String,
}

#[derive(Debug, Default)]
struct Row {
    cells: Vec<String>,
    has_th: bool,
}

impl TableBuilder {
    /// Starts a `<tr>`.
    pub(crate) fn start_row(&mut self) {
        self.end_row();
        self.current = Some(Row::default());
    }

    /// Adds a cell to the current row (a cell outside any `<tr>` starts one).
    /// `rowspan` / `colspan` are ignored: one element, one cell (EXT-TABLE-01.1).
    pub(crate) fn add_cell(&mut self, markdown: String, header: bool) {
        let row = self.current.get_or_insert_with(Row::default);
        row.has_th |= header;
        row.cells.push(cell_text(&markdown));
    }

    /// Ends the current `<tr>`; rows without cells are dropped.
    pub(crate) fn end_row(&mut self) {
        if let Some(row) = self.current.take()
            && !row.cells.is_empty()
        {
            self.rows.push(row);
        }
    }

    /// The pipe table, or nothing when every cell is empty (spacer and layout
    /// tables with no text).
    ///
    /// The header is the first row with a `<th>`, else the first row
    /// (EXT-TABLE-01.2); it is removed from the body, the other rows keep their
    /// order. Short rows are padded and the header extended with empty names so
    /// every row has the widest row's column count (EXT-TABLE-02). An empty header
    /// cell is a single space, so a header with no text is `| | |`
    /// (EXT-TABLE-01.6).
    pub(crate) fn render(mut self) -> String {
        self.end_row();
        if self
            .rows
            .iter()
            .all(|r| r.cells.iter().all(String::is_empty))
        {
            return String::new();
        }
        let header_index = self.rows.iter().position(|r| r.has_th).unwrap_or(0);
        let columns = self.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
        let mut out = String::new();
        let header = self.rows.remove(header_index);
        push_row(&mut out, &header.cells, columns);
        out.push_str("\n|");
        for _ in 0..columns {
            out.push_str("---|");
        }
        for row in &self.rows {
            out.push('\n');
            push_row(&mut out, &row.cells, columns);
        }
        out
    }
}

fn push_row(out: &mut String, cells: &[String], columns: usize) {
    out.push('|');
    for i in 0..columns {
        match cells.get(i).filter(|c| !c.is_empty()) {
            Some(cell) => {
                out.push(' ');
                out.push_str(cell);
                out.push_str(" |");
            }
            None => out.push_str(" |"),
        }
    }
}

/// A cell's Markdown made safe for one table line: `|` escaped as `\|`
/// (EXT-TABLE-01.5, code spans and link targets included, as GFM splits cells
/// before anything else), any newline left becomes `<br>` (EXT-TABLE-01.4; the cell
/// writer already writes line breaks as `<br>`).
pub(crate) fn cell_text(markdown: &str) -> String {
    let trimmed = markdown.trim();
    let mut out = String::with_capacity(trimmed.len());
    for c in trimmed.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&[&str], bool)]) -> String {
        let mut t = TableBuilder::default();
        for (cells, th) in rows {
            t.start_row();
            for cell in *cells {
                t.add_cell((*cell).to_owned(), *th);
            }
        }
        t.render()
    }

    #[test]
    fn header_padding_and_extension() {
        let md = table(&[
            (&["A", "B"], true),
            (&["1"], false),
            (&["x", "y", "z"], false),
        ]);
        assert_eq!(md, "| A | B | |\n|---|---|---|\n| 1 | | |\n| x | y | z |");
    }

    #[test]
    fn first_th_row_is_the_header() {
        let md = table(&[
            (&["note"], false),
            (&["H1", "H2"], true),
            (&["a", "b"], false),
        ]);
        assert_eq!(md, "| H1 | H2 |\n|---|---|\n| note | |\n| a | b |");
    }

    #[test]
    fn no_th_uses_first_row_and_empty_header_is_spaces() {
        assert_eq!(table(&[(&["a", "b"], false)]), "| a | b |\n|---|---|");
        assert_eq!(
            table(&[(&["", "", ""], false), (&["1", "2", "3"], false)]),
            "| | | |\n|---|---|---|\n| 1 | 2 | 3 |"
        );
    }

    #[test]
    fn pipes_and_newlines_in_cells() {
        assert_eq!(cell_text(" a|b\nc "), "a\\|b<br>c");
        assert_eq!(table(&[(&["", ""], false)]), "");
    }
}
