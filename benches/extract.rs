//! Extraction speed: decode + parse + clean + Markdown, in MB of HTML per second on
//! one core, over the article-extraction corpus, and a size series of 1, 2, 4 and 8
//! MiB (linearity, issue 17 item 3) for three pages: a content-dense synthetic
//! article (a tag every 14 bytes, the worst case for the HTML tokenizer), real
//! corpus pages concatenated (the same mix of pages at every size), and the median
//! corpus page repeated. Run with `cargo bench --bench extract`.
//!
//! After the criterion groups, a summary runs every page of every size in turn,
//! round after round (so load from other processes on a shared machine falls on
//! all of them alike) and prints, per size, the cost per byte, the dense page's cost per byte
//! over each real page's, and each page's cost per byte over its own at 1 MiB
//! (1.00 is linear). `EXTRACT_BENCH_ROUNDS` sets the rounds (default 5); the best
//! round counts. The clock is the thread's CPU time where the system has one (load
//! from other processes then barely moves the figures), else wall time, and every
//! size gets fresh memory from the allocator, as a one-shot CLI call does.
//! `EXTRACT_BENCH_SUMMARY=only` skips the criterion groups.

#[path = "support/clock.rs"]
mod clock;
#[path = "support/pages.rs"]
mod pages;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use url::Url;
use webfetch::content::charset::decode;
use webfetch::extract::extract_html;

use clock::thread_cpu_ns;

/// The sizes of the series, in MiB.
const SIZES: [usize; 4] = [1, 2, 4, 8];

fn run(bytes: &[u8], url: &Url) -> usize {
    let decoded = decode(bytes, None, true);
    extract_html(&decoded.text, url).map_or(0, |d| d.markdown.len())
}

fn url() -> Url {
    Url::parse("https://example.com/article").expect("url")
}

fn corpus() -> Vec<Vec<u8>> {
    pages::corpus()
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect()
}

/// Named pages: (name, bytes).
type Pages = Vec<(&'static str, Vec<u8>)>;

/// The pages of one size.
fn series(corpus: &[Vec<u8>], mib: usize) -> Pages {
    let mut pages = vec![("dense", pages::dense(mib << 20))];
    if !corpus.is_empty() {
        pages.push(("real_mixed", pages::mixed(corpus, mib << 20)));
        pages.push(("real_repeated", pages::repeated(corpus, mib << 20)));
    }
    pages
}

fn bench(c: &mut Criterion) {
    let url = url();
    let corpus = corpus();
    if !corpus.is_empty() {
        let total: usize = corpus.iter().map(Vec::len).sum();
        let mut group = c.benchmark_group("extract_corpus");
        group.sample_size(10);
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("181_pages", |b| {
            b.iter(|| {
                corpus
                    .iter()
                    .map(|p| run(black_box(p), &url))
                    .sum::<usize>()
            })
        });
        group.finish();
    }
    let mut group = c.benchmark_group("extract_size");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for mib in SIZES {
        for (name, page) in series(&corpus, mib) {
            group.throughput(Throughput::Bytes(page.len() as u64));
            group.bench_function(format!("{name}_{mib}MiB"), |b| {
                b.iter(|| run(black_box(&page), &url))
            });
        }
    }
    group.finish();
}

/// Makes glibc serve every allocation over 128 KiB with fresh pages, as a one-shot
/// CLI process gets them. By default glibc raises that threshold each time such a
/// block is freed (up to 32 MiB), so a bench repeating one size reuses warm memory
/// below 32 MiB and faults fresh pages in above it: the 8 MiB dense page then
/// looked 15% dearer per byte than the 1 MiB one, an artefact of the allocator,
/// not of extraction.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fixed_mmap_threshold() {
    // SAFETY: mallopt only sets a tuning parameter of the allocator.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fixed_mmap_threshold() {}

/// Nanoseconds per byte of one extraction of `page`: thread CPU time where the
/// system reports it, else wall time.
fn ns_per_byte(page: &[u8], url: &Url) -> f64 {
    let (start, cpu) = (Instant::now(), thread_cpu_ns());
    black_box(run(black_box(page), url));
    let ns = match (cpu, thread_cpu_ns()) {
        (Some(from), Some(to)) => to.saturating_sub(from),
        _ => start.elapsed().as_nanos(),
    };
    ns as f64 / page.len().max(1) as f64
}

/// The interleaved summary (see the module docs), on stderr.
fn summary() {
    fixed_mmap_threshold();
    let url = url();
    let corpus = corpus();
    let rounds: usize = std::env::var("EXTRACT_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    // Every round runs every page of every size, so a slow spell of the machine
    // falls on all sizes alike and the best round of each shows through it.
    let all: Vec<(usize, Pages)> = SIZES
        .iter()
        .map(|&mib| (mib, series(&corpus, mib)))
        .collect();
    let mut best: Vec<Vec<f64>> = all.iter().map(|(_, p)| vec![f64::MAX; p.len()]).collect();
    for _ in 0..rounds {
        for ((_, pages), best) in all.iter().zip(&mut best) {
            for ((_, page), best) in pages.iter().zip(best.iter_mut()) {
                *best = best.min(ns_per_byte(page, &url));
            }
        }
    }
    let rows: Vec<(usize, Vec<(&str, f64)>)> = all
        .iter()
        .zip(best)
        .map(|((mib, pages), best)| (*mib, pages.iter().map(|(n, _)| *n).zip(best).collect()))
        .collect();
    let clock = if thread_cpu_ns().is_some() {
        "thread CPU time"
    } else {
        "wall time"
    };
    eprintln!(
        "\nextract size series, best of {rounds} interleaved rounds, {clock} (ns/byte, MiB/s):"
    );
    for (mib, costs) in &rows {
        let line: Vec<String> = costs
            .iter()
            .map(|(name, ns)| format!("{name} {ns:.2} ns/B ({:.0} MiB/s)", 1e9 / ns / 1048576.0))
            .collect();
        let dense = costs[0].1;
        let ratios: Vec<String> = costs[1..]
            .iter()
            .map(|(name, ns)| format!("dense/{name} {:.2}", dense / ns))
            .collect();
        eprintln!("  {mib} MiB: {}; {}", line.join(", "), ratios.join(", "));
    }
    if let Some((_, first)) = rows.first() {
        for (i, (name, base)) in first.iter().enumerate() {
            let growth: Vec<String> = rows
                .iter()
                .map(|(mib, costs)| format!("{mib} MiB {:.2}", costs[i].1 / base))
                .collect();
            eprintln!("  {name} per byte vs 1 MiB: {}", growth.join(", "));
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    // `EXTRACT_BENCH_SUMMARY=only` runs the summary alone (a quick comparison).
    if std::env::var("EXTRACT_BENCH_SUMMARY").as_deref() == Ok("only") {
        summary();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench -- <filter>` and `--list`/`--test` runs skip the summary.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filtered = args.iter().any(|a| !a.starts_with('-'));
    let listing = args.iter().any(|a| a == "--list" || a == "--test");
    if !filtered && !listing {
        summary();
    }
}
