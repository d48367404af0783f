//! Pages of a chosen size for the extraction bench's size series and
//! `examples/extract_stages.rs`: a content-dense synthetic article, a real page
//! repeated, and a mix of real pages concatenated.

/// A content-dense article of about `size` bytes: a news-like block (headings,
/// links, lists, a table, code, a quote, an ad) repeated inside one `<article>`,
/// with boilerplate around it. A tag every 14 bytes, the worst case for the HTML
/// tokenizer (corpus pages: one every 26 to 720 bytes, median 81).
pub(crate) fn dense(size: usize) -> Vec<u8> {
    let block = r#"<section class="part"><h2>Section heading</h2>
<p>Residents of three river towns began clearing mud from their homes on <a href="/t">Thursday</a>,
a week after the highest water levels in <strong>four decades</strong> forced thousands to leave.</p>
<div class="ad"><img src="/ad.gif" alt="Ad"> Sponsored content</div>
<ul><li>First <em>point</em></li><li>Second point<ul><li>nested</li></ul></li></ul>
<table><tr><th>Year</th><th>Level</th></tr><tr><td>2024</td><td>7.1 m</td></tr></table>
<pre><code class="language-rust">fn main() {
    println!("hello");
}</code></pre>
<blockquote><p>The dikes held where we had rebuilt them.</p></blockquote></section>
"#;
    let mut page = String::from(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Bench</title></head><body><nav><a href=/>Home</a></nav><article>",
    );
    while page.len() + block.len() < size {
        page.push_str(block);
    }
    page.push_str("</article><footer>f</footer></body></html>");
    page.into_bytes()
}

/// The corpus page of median size, whole, repeated up to about `size` bytes: real
/// markup (scripts, styles, attributes) at a given size, the same mix at every size,
/// so the series shows linearity. (Concatenating different pages mixes pages of
/// very different speeds; `extract_stages linearity` shows such a concatenation
/// takes the sum of its pages' times.)
pub(crate) fn repeated(pages: &[Vec<u8>], size: usize) -> Vec<u8> {
    let mut by_size: Vec<&Vec<u8>> = pages.iter().collect();
    by_size.sort_by_key(|p| p.len());
    let page = by_size[by_size.len() / 2];
    let mut out = Vec::with_capacity(size);
    while out.len() + page.len() <= size {
        out.extend_from_slice(page);
    }
    out
}

/// Real pages concatenated up to about `size` bytes: a unit of distinct corpus
/// pages spread over the corpus's size range (every k-th page by size, as many as
/// fit in 1 MiB), repeated whole. Every size is the same mix of pages, so a size
/// series measures linearity, not which pages happen to come first.
pub(crate) fn mixed(pages: &[Vec<u8>], size: usize) -> Vec<u8> {
    const UNIT: usize = 1 << 20;
    let mut by_size: Vec<&Vec<u8>> = pages.iter().filter(|p| p.len() <= UNIT).collect();
    if by_size.is_empty() {
        return Vec::new();
    }
    by_size.sort_by_key(|p| p.len());
    let pick = |k: usize| -> Vec<&Vec<u8>> {
        (0..k)
            .map(|i| by_size[(2 * i + 1) * by_size.len() / (2 * k)])
            .collect()
    };
    let mut count = 1;
    while count < by_size.len() && pick(count + 1).iter().map(|p| p.len()).sum::<usize>() <= UNIT {
        count += 1;
    }
    let unit: Vec<u8> = pick(count).into_iter().flatten().copied().collect();
    let mut out = Vec::with_capacity(size);
    while out.len() + unit.len() <= size.max(unit.len()) {
        out.extend_from_slice(&unit);
    }
    out
}
