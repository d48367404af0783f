//! What the quality benches and corpus tests score: the Markdown as reading text.

/// The Markdown as reading text: link and image destinations removed, so URLs do
/// not count as extracted words (the gold bodies are plain text).
pub(crate) fn text_view(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(i) = rest.find("](") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let mut depth = 1usize;
        let mut end = after.len();
        for (j, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                '\n' => {
                    end = j;
                    break;
                }
                _ => {}
            }
        }
        out.push(' ');
        rest = &after[end.min(after.len())..];
    }
    out.push_str(rest);
    out
}
