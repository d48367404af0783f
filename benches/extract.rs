//! Extraction speed: decode + parse + clean + Markdown, in MB of HTML per second on
//! one core, over the article-extraction corpus, and for pages of 1, 2, 4 and 5 MiB
//! (linearity): a content-dense synthetic article (a tag every 14 bytes, the worst
//! case for the HTML tokenizer) and a real corpus page repeated. Run with
//! `cargo bench --bench extract`.

#[path = "support/pages.rs"]
mod pages;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use url::Url;
use webfetch::content::charset::decode;
use webfetch::extract::extract_html;

fn run(bytes: &[u8], url: &Url) -> usize {
    let decoded = decode(bytes, None, true);
    extract_html(&decoded.text, url).map_or(0, |d| d.markdown.len())
}

fn bench(c: &mut Criterion) {
    let url = Url::parse("https://example.com/article").expect("url");
    let pages: Vec<Vec<u8>> = pages::corpus()
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect();
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
        let page = pages::dense(mib << 20);
        group.throughput(Throughput::Bytes(page.len() as u64));
        group.bench_function(format!("dense_{mib}MiB"), |b| {
            b.iter(|| run(black_box(&page), &url))
        });
        if !pages.is_empty() {
            let page = pages::repeated(&pages, mib << 20);
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
