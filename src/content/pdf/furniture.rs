//! Page furniture: running headers, footers and page numbers, found by
//! where they sit and how they repeat. Pure.
//!
//! Candidates are the [`EDGE_LINES`] topmost and bottommost lines of each page. A
//! candidate is furniture when its text, digits folded to `#`, is a candidate on
//! at least half of the pages (two at least): a running title, `Page 3 of 9`,
//! `-3-`. A candidate that is only a page number (`7`, `- 7 -`, `Page 7`,
//! `7 of 12`, `7/12`) is furniture on any page, a one-page document included, and
//! so is one whose exact text the document has elsewhere in a larger font (a
//! running title over the title itself). Of the lines of a page with the same text, only the one nearest
//! the edge goes: the title under a running head of the same words stays.

use std::collections::HashMap;

use super::lines::Line;

/// Lines looked at from each edge of a page.
const EDGE_LINES: usize = 2;

/// Which lines of each page are furniture: `marks[page][line]`.
pub(crate) fn furniture(pages: &[Vec<Line>]) -> Vec<Vec<bool>> {
    let candidates: Vec<Vec<usize>> = pages.iter().map(|lines| edge_lines(lines)).collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (lines, edges) in pages.iter().zip(&candidates) {
        let mut keys: Vec<String> = edges.iter().map(|&i| key(&lines[i].text)).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            *seen.entry(key).or_default() += 1;
        }
    }
    // The largest size each exact text is set in.
    let mut largest: HashMap<&str, f32> = HashMap::new();
    for line in pages.iter().flatten() {
        let size = largest.entry(line.text.as_str()).or_insert(0.0);
        *size = size.max(line.size);
    }
    let needed = (pages.len().div_ceil(2)).max(2);
    pages
        .iter()
        .zip(&candidates)
        .map(|(lines, edges)| {
            let mut marks = vec![false; lines.len()];
            let middle = middle_y(lines);
            for &i in edges {
                let key = key(&lines[i].text);
                let furniture = is_page_number(&key)
                    || seen.get(&key).is_some_and(|n| *n >= needed)
                    || largest
                        .get(lines[i].text.as_str())
                        .is_some_and(|size| *size >= 1.2 * lines[i].size);
                marks[i] = furniture && outermost(lines, i, &key, middle);
            }
            marks
        })
        .collect()
}

/// Halfway between the page's highest and lowest baselines.
fn middle_y(lines: &[Line]) -> f32 {
    let top = lines.iter().map(|l| l.y).fold(f32::MIN, f32::max);
    let bottom = lines.iter().map(|l| l.y).fold(f32::MAX, f32::min);
    (top + bottom) / 2.0
}

/// Whether line `i` is the one nearest its edge among the page's lines with
/// `key`.
fn outermost(lines: &[Line], i: usize, key_of_i: &str, middle: f32) -> bool {
    let y = lines[i].y;
    let top = y >= middle;
    !lines.iter().enumerate().any(|(j, other)| {
        j != i && (if top { other.y > y } else { other.y < y }) && key(&other.text) == key_of_i
    })
}

/// The indices of the lines on the [`EDGE_LINES`] highest and lowest baselines.
fn edge_lines(lines: &[Line]) -> Vec<usize> {
    let mut baselines: Vec<f32> = lines.iter().map(|l| l.y).collect();
    baselines.sort_by(|a, b| b.total_cmp(a));
    baselines.dedup_by(|a, b| (*a - *b).abs() < 1.0);
    if baselines.len() <= 2 * EDGE_LINES {
        // A page of a few lines: only the extremes can be furniture.
        baselines = [baselines.first(), baselines.last()]
            .into_iter()
            .flatten()
            .copied()
            .collect();
    } else {
        let n = baselines.len();
        baselines = [&baselines[..EDGE_LINES], &baselines[n - EDGE_LINES..]].concat();
    }
    (0..lines.len())
        .filter(|&i| baselines.iter().any(|y| (lines[i].y - y).abs() < 1.0))
        .collect()
}

/// A line's text for comparison: lowercase, digits as `#`, spaces collapsed.
fn key(text: &str) -> String {
    let folded: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                '#'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    let mut out = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    while out.contains("##") {
        out = out.replace("##", "#");
    }
    out
}

/// A folded key that is only a page number.
fn is_page_number(key: &str) -> bool {
    let core = key.trim_matches(|c: char| matches!(c, '-' | '\u{2013}' | '\u{2014}' | ' ' | '|'));
    let core = core.strip_prefix("page ").unwrap_or(core).trim();
    matches!(core, "#" | "# of #" | "#/#" | "# / #")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, y: f32) -> Line {
        Line {
            text: text.to_owned(),
            x0: 72.0,
            x1: 300.0,
            y,
            size: 10.0,
            bold: false,
            italic: false,
            item_x: None,
            gaps: Vec::new(),
        }
    }

    fn page(head: &str, body: &[&str], foot: &str) -> Vec<Line> {
        let mut lines = vec![line(head, 800.0)];
        for (i, text) in body.iter().enumerate() {
            lines.push(line(text, 700.0 - 12.0 * i as f32));
        }
        lines.push(line(foot, 40.0));
        lines
    }

    #[test]
    fn running_heads_and_page_numbers_repeat() {
        let pages = vec![
            page(
                "A Title",
                &["one", "two", "three", "four", "five"],
                "Page 1 of 3",
            ),
            page(
                "A Title",
                &["six", "seven", "eight", "nine", "ten"],
                "Page 2 of 3",
            ),
            page(
                "A Title",
                &["eleven", "twelve", "thirteen", "x", "y"],
                "Page 3 of 3",
            ),
        ];
        let marks = furniture(&pages);
        for page in &marks {
            assert_eq!(page, &[true, false, false, false, false, false, true]);
        }
    }

    #[test]
    fn a_running_title_goes_and_the_title_under_it_stays() {
        let mut first = page("Report", &["Report", "text one", "text two", "more"], "1");
        first[1].size = 20.0;
        first.push(line("end", 60.0));
        first.push(line("text one", 50.0));
        let pages = vec![first];
        assert_eq!(
            furniture(&pages)[0],
            [true, false, false, false, false, true, false, false]
        );
    }

    #[test]
    fn a_lone_page_number_goes_even_on_one_page_and_body_text_stays() {
        let pages = vec![page("Intro", &["a", "b", "c", "d", "e"], "- 1 -")];
        assert_eq!(
            furniture(&pages)[0],
            [false, false, false, false, false, false, true]
        );
        assert!(is_page_number(&key("12")) && is_page_number(&key("Page 4")));
        assert!(!is_page_number(&key("Chapter 2")) && !is_page_number(&key("2024 results")));
    }
}
