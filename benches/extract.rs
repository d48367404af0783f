//! Extraction speed: decode + parse + clean + Markdown, in MB of HTML per second on
//! one core, over the article-extraction corpus, and for pages of 1, 2, 4 and 5 MiB
//! (linearity): a content-dense synthetic article (a tag every 14 bytes, the worst
//! case for the HTML tokenizer) and a real corpus page repeated. Run with
//! `cargo bench --bench extract`.

use std::hint::black_box;
use std::io::Read as _;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use url::Url;
use webfetch::content::charset::decode;
use webfetch::extract::extract_html;

fn corpus() -> Vec<Vec<u8>> {
    let dir = std::env::var_os("WEBFETCH_CORPUS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/article-extraction"),
        PathBuf::from,
    );
    let Ok(entries) = std::fs::read_dir(dir.join("html")) else {
        eprintln!(
            "corpus not found at {}: corpus bench skipped",
            dir.display()
        );
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| {
            let mut bytes = Vec::new();
            flate2::read::GzDecoder::new(std::fs::File::open(p).ok()?)
                .read_to_end(&mut bytes)
                .ok()?;
            Some(bytes)
        })
        .collect()
}

/// A realistic page of about `size` bytes: a news-like article block repeated
/// inside one `<article>`, with boilerplate around it.
fn synthetic(size: usize) -> Vec<u8> {
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
/// very different speeds; `examples/extract_stages.rs` `LINEARITY` shows such a
/// concatenation takes the sum of its pages' times.)
fn repeated(pages: &[Vec<u8>], size: usize) -> Vec<u8> {
    let mut by_size: Vec<&Vec<u8>> = pages.iter().collect();
    by_size.sort_by_key(|p| p.len());
    let page = by_size[by_size.len() / 2];
    let mut out = Vec::with_capacity(size);
    while out.len() + page.len() <= size {
        out.extend_from_slice(page);
    }
    out
}

fn run(bytes: &[u8], url: &Url) -> usize {
    let decoded = decode(bytes, None, true);
    extract_html(&decoded.text, url).map_or(0, |d| d.markdown.len())
}

fn bench(c: &mut Criterion) {
    let url = Url::parse("https://example.com/article").expect("url");
    let pages = corpus();
    if !pages.is_empty() {
        let total: usize = pages.iter().map(Vec::len).sum();
        let mut group = c.benchmark_group("extract_corpus");
        group.sample_size(10);
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("181_pages", |b| {
            b.iter(|| pages.iter().map(|p| run(black_box(p), &url)).sum::<usize>())
        });
        group.finish();
    }
    let mut group = c.benchmark_group("extract_size");
    group.sample_size(10);
    for mib in [1usize, 2, 4, 5] {
        let page = synthetic(mib << 20);
        group.throughput(Throughput::Bytes(page.len() as u64));
        group.bench_function(format!("dense_{mib}MiB"), |b| {
            b.iter(|| run(black_box(&page), &url))
        });
        if !pages.is_empty() {
            let page = repeated(&pages, mib << 20);
            group.throughput(Throughput::Bytes(page.len() as u64));
            group.bench_function(format!("real_{mib}MiB"), |b| {
                b.iter(|| run(black_box(&page), &url))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
