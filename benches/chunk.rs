//! Token counting and chunking speed (FR-WF-14, NFR-WF-PERF-02).
//!
//! `cargo bench --bench chunk`: counting throughput, chunking (counting included) of
//! 1, 2, 4 and 8 MiB documents to show the time is linear, the 5 MiB target
//! (chunking plus counting under 0.5 s on one core), hostile inputs, and output
//! fitting.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use webfetch::RenderingMethod;
use webfetch::Timestamp;
use webfetch::internals::chunk::chunk;
use webfetch::internals::output::{BuildOptions, ResponseMeta, build};
use webfetch::internals::vocabulary::ExtractedDocument;
use webfetch::{Cl100k, TokenCounter};

const MIB: usize = 1 << 20;

/// Realistic Markdown of about `bytes` bytes: the golden chunk inputs repeated, each
/// copy's headings numbered so no two sections are identical.
fn document(bytes: usize) -> String {
    let sources = [
        include_str!("../tests/golden/chunk_inputs/api_reference.md"),
        include_str!("../tests/golden/chunk_inputs/long_article.md"),
        include_str!("../tests/golden/chunk_inputs/multilingual_edge.md"),
    ];
    let mut out = String::with_capacity(bytes + 16 * 1024);
    let mut copy = 0;
    while out.len() < bytes {
        for source in sources {
            for line in source.lines() {
                if line.starts_with('#') {
                    out.push_str(&format!("{line} ({copy})\n"));
                } else {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            out.push('\n');
        }
        copy += 1;
    }
    out
}

fn counting(c: &mut Criterion) {
    let started = Instant::now();
    Cl100k::warm_up();
    eprintln!("cl100k_base initialisation: {:?}", started.elapsed());

    let text = document(MIB);
    let mut group = c.benchmark_group("count");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(20);
    group.bench_function("cl100k_1MiB_markdown", |b| {
        b.iter(|| Cl100k.count_str(black_box(&text)))
    });
    group.bench_function("cl100k_index_1MiB_markdown", |b| {
        b.iter(|| Cl100k.index(black_box(&text)).count_span(0..text.len()))
    });
    let letters = "abcdefghijklmnopqrstuvwxyz".repeat(MIB / 26);
    group.throughput(Throughput::Bytes(letters.len() as u64));
    group.bench_function("cl100k_1MiB_one_word", |b| {
        b.iter(|| Cl100k.count_str(black_box(&letters)))
    });
    group.finish();
}

fn chunking(c: &mut Criterion) {
    let mut group = c.benchmark_group("chunk");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for mib in [1, 2, 4, 8] {
        let text = document(mib * MIB);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("markdown_600", format!("{mib}MiB")),
            &text,
            |b, t| b.iter(|| chunk(black_box(t), &[], 600, &Cl100k)),
        );
    }
    let text = document(5 * MIB);
    group.throughput(Throughput::Bytes(text.len() as u64));
    for max in [128, 2048] {
        group.bench_with_input(
            BenchmarkId::new(format!("markdown_{max}"), "5MiB"),
            &text,
            |b, t| b.iter(|| chunk(black_box(t), &[], max, &Cl100k)),
        );
    }
    group.bench_with_input(BenchmarkId::new("markdown_600", "5MiB"), &text, |b, t| {
        b.iter(|| chunk(black_box(t), &[], 600, &Cl100k))
    });
    // Hostile shapes: nothing to split on but characters, and one endless paragraph.
    let one_word = "abcdefghijklmnopqrstuvwxyz0123456789+/".repeat(MIB / 38);
    group.throughput(Throughput::Bytes(one_word.len() as u64));
    group.bench_with_input(
        BenchmarkId::new("no_whitespace_600", "1MiB"),
        &one_word,
        |b, t| b.iter(|| chunk(black_box(t), &[], 600, &Cl100k)),
    );
    let paragraph = "Trains run through the night, and arrive in the morning ".repeat(MIB / 56);
    group.throughput(Throughput::Bytes(paragraph.len() as u64));
    group.bench_with_input(
        BenchmarkId::new("one_paragraph_600", "1MiB"),
        &paragraph,
        |b, t| b.iter(|| chunk(black_box(t), &[], 600, &Cl100k)),
    );
    group.finish();
}

fn fitting(c: &mut Criterion) {
    let doc = ExtractedDocument {
        markdown: document(MIB),
        title: Some("Bench".to_owned()),
        language: None,
        page_type: None,
        page_starts: Vec::new(),
    };
    let meta = || ResponseMeta {
        requested_url: "https://example.com/".to_owned(),
        final_url: "https://example.com/".to_owned(),
        fetched_at: Timestamp::from_unix_seconds(1_768_046_400).expect("in range"),
        rendering_method: RenderingMethod::Http,
        notes: Default::default(),
    };
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(doc.markdown.len() as u64));
    for budget in [64 * 1024, 2 * MIB] {
        group.bench_with_input(
            BenchmarkId::new("1MiB_600", budget),
            &budget,
            |b, &budget| {
                let options = BuildOptions {
                    max_chunk_tokens: 600,
                    start_chunk: None,
                    effective_max_bytes: budget,
                };
                b.iter(|| build(&doc, meta(), options, &Cl100k))
            },
        );
    }
    group.finish();
}

criterion_group!(benches, counting, chunking, fitting);
criterion_main!(benches);
