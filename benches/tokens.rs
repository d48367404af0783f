//! cl100k_base counting speed in tokens per second on one core (FR-WF-14
//! sets the bar at 3.5 M/s), over the Markdown the tool extracts from the
//! article-extraction corpus (the golden chunk inputs when the corpus is absent).
//! Run with `cargo bench --bench tokens`.
//!
//! * `corpus_markdown`: every page's Markdown counted in turn, as a long-lived
//!   process (the MCP server) counts them: the per-thread memo of short pieces is
//!   warm after the first round;
//! * `corpus_markdown_cold`: the same on a fresh thread each time, as a CLI call
//!   counts its one page (an empty memo, so every piece is byte-pair encoded);
//! * `first_count`: a fresh process's first count of a short text, i.e. what
//!   building the tables on first use costs (one sample, printed, not timed by
//!   criterion, since it happens once per process);
//! * `bpe_openai_crate`: the `bpe-openai` crate counting the same pages itself.

#[path = "support/pages.rs"]
mod pages;

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use url::Url;
use webfetch::ExtractionMode;
use webfetch::internals::content::charset::decode;
use webfetch::internals::extract::extract_html;
use webfetch::{Cl100k, TokenCounter};

/// The Markdown of every corpus page, or the golden chunk inputs without a corpus.
fn markdown() -> Vec<String> {
    let url = Url::parse("https://example.com/article").expect("url");
    let pages: Vec<String> = pages::corpus()
        .iter()
        .filter_map(|(_, bytes)| {
            let text = decode(bytes, None, true).text;
            extract_html(&text, &url, ExtractionMode::Srd)
                .ok()
                .map(|e| e.document.markdown)
        })
        .collect();
    if !pages.is_empty() {
        return pages;
    }
    vec![
        include_str!("../tests/golden/chunk_inputs/api_reference.md").to_owned(),
        include_str!("../tests/golden/chunk_inputs/long_article.md").to_owned(),
        include_str!("../tests/golden/chunk_inputs/multilingual_edge.md").to_owned(),
    ]
}

fn bench(c: &mut Criterion) {
    let started = Instant::now();
    let first = Cl100k.count_str("hello world");
    eprintln!(
        "first_count: {:.3} ms ({first} tokens)",
        started.elapsed().as_secs_f64() * 1e3
    );

    let pages = markdown();
    let bytes: usize = pages.iter().map(String::len).sum();
    let tokens: usize = pages.iter().map(|p| Cl100k.count_str(p)).sum();
    eprintln!(
        "corpus Markdown: {} pages, {bytes} bytes, {tokens} tokens",
        pages.len()
    );
    let count_all = |pages: &[String]| {
        pages
            .iter()
            .map(|p| Cl100k.count_str(black_box(p)))
            .sum::<usize>()
    };

    let mut group = c.benchmark_group("tokens");
    group.sample_size(20);
    group.throughput(Throughput::Elements(tokens as u64));
    group.bench_function("corpus_markdown", |b| b.iter(|| count_all(&pages)));
    group.bench_function("corpus_markdown_cold", |b| {
        b.iter(|| {
            std::thread::scope(|scope| scope.spawn(|| count_all(&pages)).join().unwrap_or_default())
        })
    });
    // The `bpe-openai` crate's own counting (its regex, its encoder, no memo), for
    // comparison in the same run.
    let reference = bpe_openai::cl100k_base();
    group.bench_function("bpe_openai_crate", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| reference.count(black_box(p.as_str())))
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
